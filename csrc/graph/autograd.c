/* autograd.c -- MXNet's autograd (src/imperative/imperative.cc, src/nnvm/gradient.cc):
 *   tape     -- while recording, each eager call whose inputs have history becomes a graph node
 *               holding its parsed params and (handles on) its output values; arrays point at the
 *               node that produced them, so the tape lives exactly as long as its arrays;
 *   gradient -- the nnvm Gradient pass: reverse topological order, gradients summed per entry,
 *               each op's FGradient (mxw_op_def.gradient) building the nodes of its backward;
 *   backward -- the gradient graph of the tape, with the saved values bound as variables, runs
 *               through the graph executor (planned memory, in place, fusion) and is written
 *               into the variables' gradient buffers (grad_req write / add) or returned; with
 *               create_graph (autograd.grad) it runs as recorded eager calls instead, so that
 *               the gradients can be differentiated again (run_recorded).
 * The same gradient pass builds the backward of hybridized graphs (cached_op.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ndarray.h"
#include "graph.h"

static int g_recording = 0;
int mxw_autograd_set_recording(int on) {
  int prev = g_recording;
  g_recording = on != 0;
  return prev;
}
int mxw_autograd_is_recording(void) { return g_recording; }

/* ---- node bookkeeping ----------------------------------------------------------------------------- */
static mxw_ag_info *ag_new(int nvalues) {
  mxw_ag_info *ag = (mxw_ag_info *)calloc(1, sizeof *ag);
  if (!ag) return NULL;
  ag->values = (mxw_ndarray **)calloc((size_t)(nvalues ? nvalues : 1), sizeof(mxw_ndarray *));
  if (!ag->values) {
    free(ag);
    return NULL;
  }
  ag->num_values = nvalues;
  return ag;
}

static void ag_free_values(mxw_ag_info *ag) {
  for (int i = 0; i < ag->num_values; i++) {
    mxw_ndarray_free(ag->values[i]);
    ag->values[i] = NULL;
  }
}

void mxw_ag_info_free(mxw_ag_info *ag) {
  if (!ag) return;
  ag_free_values(ag);
  free(ag->values);
  mxw_ndarray_free(ag->grad);
  free(ag);
}

void mxw_autograd_release(mxw_node *n) { mxw_node_release(n); }

mxw_params *mxw_params_clone(const mxw_params *p, const mxw_op_def *op, int op_id) {
  mxw_params *q = (mxw_params *)calloc(1, sizeof *q);
  void *param = malloc(op->param_size ? op->param_size : 1);
  if (!q || !param) {
    free(q);
    free(param);
    mxw_fail("out of memory");
    return NULL;
  }
  if (op->param_size) memcpy(param, p->param, op->param_size);
  if (op->param_retain) op->param_retain(param);
  q->op = op;
  q->op_id = op_id;
  q->param = param;
  return q;
}

/* A variable node standing for an array's value (a constant input, a marked variable, or a
 * saved value bound into a backward graph). */
static mxw_node *value_node(const char *name, const mxw_ndarray *arr) {
  mxw_node *n = mxw_node_new(name);
  if (!n) return NULL;
  n->ag = ag_new(1);
  if (!n->ag || !(n->ag->values[0] = mxw_ndarray_share(arr))) {
    mxw_node_release(n);
    mxw_fail("out of memory");
    return NULL;
  }
  return n;
}

/* ---- the tape ------------------------------------------------------------------------------------ */
static int has_history(int nin, mxw_ndarray *const *inputs) {
  for (int i = 0; i < nin; i++)
    if (inputs[i] && inputs[i]->ag_node) return 1;
  return 0;
}

int mxw_autograd_check_outputs(int nin, mxw_ndarray *const *inputs, int nout, mxw_ndarray *const *outputs) {
  if (!g_recording || !has_history(nin, inputs)) return 0;
  for (int k = 0; k < nout; k++)
    if (outputs[k] && outputs[k]->ag_node)
      return mxw_fail(
          "Assigning to NDArrays that are already in a computational graph will cause undefined behavior "
          "when evaluating gradients. Please call backward first to clear the graph or do this out side of "
          "a record section. Also note that you cannot use inplace operations like +=, *=, relu(x, out=x), "
          "y[idx]=x, etc inside a record section.");
  return 0;
}

int mxw_autograd_record(const mxw_params *p, int nin, mxw_ndarray *const *inputs, int nout,
                        mxw_ndarray *const *outputs) {
  if (!g_recording || !has_history(nin, inputs)) return 0;
  mxw_node *n = mxw_node_new(p->op->name);
  MXW_CHECK(n != NULL, "out of memory");
  n->op = p->op;
  n->op_id = p->op_id;
  n->params = mxw_params_clone(p, p->op, p->op_id);
  n->inputs = (mxw_entry *)calloc((size_t)(nin ? nin : 1), sizeof(mxw_entry));
  n->ag = ag_new(nout);
  if (!n->params || !n->inputs || !n->ag) goto oom;
  n->num_inputs = nin;
  for (int i = 0; i < nin; i++) {
    if (inputs[i]->ag_node) {
      n->inputs[i].node = inputs[i]->ag_node;
      n->inputs[i].index = inputs[i]->ag_index;
      mxw_node_retain(inputs[i]->ag_node);
    } else if (!(n->inputs[i].node = value_node("const", inputs[i]))) {
      goto oom;
    }
  }
  for (int k = 0; k < nout; k++)
    if (!(n->ag->values[k] = mxw_ndarray_share(outputs[k]))) goto oom;
  for (int k = 0; k < nout; k++) {
    if (outputs[k]->ag_node) mxw_node_release(outputs[k]->ag_node);
    outputs[k]->ag_node = n;
    outputs[k]->ag_index = (uint32_t)k;
    mxw_node_retain(n);
  }
  mxw_node_release(n);
  return 0;
oom:
  mxw_node_release(n);
  return mxw_fail("out of memory recording %s for autograd", p->op->name);
}

/* A view of arr (a reshape or a contiguous range) made while recording is recorded as the
 * internal op _view_range, so that gradients flow through views as through MXNet's
 * Reshape/slice records. */
int mxw_autograd_record_view(mxw_ndarray *arr, mxw_ndarray *view, int64_t offset) {
  if (!g_recording || !arr->ag_node) return 0;
  int op = mxw_op_find("_view_range");
  MXW_CHECK(op >= 0, "_view_range is not registered");
  char off[32], shape[256];
  snprintf(off, sizeof off, "%lld", (long long)offset);
  mxw_shape_attr(&view->t.shape, shape, sizeof shape);
  const char *keys[2] = {"offset", "shape"}, *vals[2] = {off, shape};
  mxw_params *p = NULL;
  MXW_TRY(mxw_params_create(op, 2, keys, vals, &p));
  mxw_ndarray *in[1] = {arr}, *out[1] = {view};
  int rc = mxw_autograd_record(p, 1, in, 1, out);
  mxw_params_free(p);
  return rc;
}

/* Records an autograd.Function call (its forward already ran in JS) as a _CustomFunction node. */
int mxw_autograd_record_custom(int id, int nin, mxw_ndarray *const *inputs, int nout, mxw_ndarray *const *outputs) {
  MXW_CHECK(nin >= 0 && nout >= 1 && (nin == 0 || inputs) && outputs, "NULL argument");
  for (int i = 0; i < nin; i++) MXW_CHECK(inputs[i] != NULL, "input %d is NULL", i);
  for (int k = 0; k < nout; k++) MXW_CHECK(outputs[k] != NULL, "output %d is NULL", k);
  int op = mxw_op_find("_CustomFunction");
  MXW_CHECK(op >= 0, "_CustomFunction is not registered");
  char sid[32], sin[32], sout[32];
  snprintf(sid, sizeof sid, "%d", id);
  snprintf(sin, sizeof sin, "%d", nin);
  snprintf(sout, sizeof sout, "%d", nout);
  const char *keys[3] = {"id", "num_inputs", "num_outputs"}, *vals[3] = {sid, sin, sout};
  mxw_params *p = NULL;
  MXW_TRY(mxw_params_create(op, 3, keys, vals, &p));
  int rc = mxw_autograd_check_outputs(nin, inputs, nout, outputs);
  if (rc == 0) rc = mxw_autograd_record(p, nin, inputs, nout, outputs);
  mxw_params_free(p);
  return rc;
}

/* x[:] = y / y.copyto(x) while recording: taped as _copy (or Cast across dtypes), as MXNet's
 * recorded _copyto. Called before the copy (checks) and after it (records). */
int mxw_autograd_record_copy(const mxw_ndarray *src, mxw_ndarray *dst, int after) {
  if (!g_recording || !src->ag_node) return 0;
  mxw_ndarray *in[1] = {(mxw_ndarray *)src}, *out[1] = {dst};
  if (!after) {
    char a[128], b[128];
    MXW_CHECK(mxw_shape_equal(&src->t.shape, &dst->t.shape),
              "copying an array of shape %s into one of shape %s cannot be "
              "recorded for autograd (reshape it first)",
              mxw_shape_str(&src->t.shape, a, sizeof a), mxw_shape_str(&dst->t.shape, b, sizeof b));
    return mxw_autograd_check_outputs(1, in, 1, out);
  }
  int same = src->t.dtype == dst->t.dtype;
  int op = mxw_op_find(same ? "_copy" : "Cast");
  MXW_CHECK(op >= 0, "_copy / Cast is not registered");
  const char *keys[1] = {"dtype"}, *vals[1] = {mxw_dtype_name(dst->t.dtype)};
  mxw_params *p = NULL;
  MXW_TRY(mxw_params_create(op, same ? 0 : 1, keys, vals, &p));
  int rc = mxw_autograd_record(p, 1, in, 1, out);
  mxw_params_free(p);
  return rc;
}

/* Marks arrays as variables with gradient buffers (attach_grad / mark_variables). */
int mxw_autograd_mark_variables(int n, mxw_ndarray *const *vars, mxw_ndarray *const *grads, const int32_t *reqs) {
  MXW_CHECK(n >= 0 && (n == 0 || (vars && grads && reqs)), "NULL argument");
  for (int i = 0; i < n; i++) {
    MXW_CHECK(vars[i] && grads[i], "variable %d or its gradient is NULL", i);
    MXW_CHECK(reqs[i] >= 0 && reqs[i] <= 2, "grad_req %d is not one of null (0), write (1), add (2)", (int)reqs[i]);
    char a[128], b[128];
    MXW_CHECK(mxw_shape_equal(&vars[i]->t.shape, &grads[i]->t.shape),
              "the gradient buffer of variable %d has shape %s, the variable %s", i,
              mxw_shape_str(&grads[i]->t.shape, a, sizeof a), mxw_shape_str(&vars[i]->t.shape, b, sizeof b));
  }
  for (int i = 0; i < n; i++) {
    mxw_node *v = value_node("var", vars[i]);
    if (!v) return -1;
    if (!(v->ag->grad = mxw_ndarray_share(grads[i]))) {
      mxw_node_release(v);
      return mxw_fail("out of memory");
    }
    v->ag->grad_req = reqs[i];
    if (vars[i]->ag_node) mxw_node_release(vars[i]->ag_node);
    vars[i]->ag_node = v;
    vars[i]->ag_index = 0;
  }
  return 0;
}

/* A new handle on arr's storage without history (NDArray.detach). */
int mxw_ndarray_detach(mxw_ndarray *arr, mxw_ndarray **out) {
  MXW_CHECK(arr && out, "NULL argument");
  *out = mxw_ndarray_share(arr);
  return *out ? 0 : -1;
}

int mxw_ndarray_fresh_grad(mxw_ndarray *arr, int set) {
  if (!arr) return 0;
  if (set >= 0) arr->storage->fresh_grad = set != 0;
  return arr->storage->fresh_grad;
}

/* ---- the gradient pass ------------------------------------------------------------------------------ */
typedef struct builder {
  mxw_value_fn value;
  void *ud;
  int flags;       /* MXW_GRAD_* */
  mxw_node **made; /* nodes created by the pass; one reference each, released at the end */
  int nmade, capmade;
} builder;

struct mxw_grad_ctx {
  builder *b;
  mxw_node *fwd;
  int nin, nout;
  int io_cap; /* the per-input and per-output arrays below hold io_cap entries */
  mxw_shape *in_shape, *out_shape;
  int *in_type, *out_type;
  mxw_entry *ograd;
  mxw_gid *igrad;
  mxw_entry *tab;
  int ntab, cap;
};

static int keep_made(builder *b, mxw_node *n) {
  if (b->nmade == b->capmade) {
    int nc = b->capmade * 2 + 32;
    mxw_node **m = (mxw_node **)realloc(b->made, sizeof *m * (size_t)nc);
    if (!m) {
      mxw_node_release(n);
      return mxw_fail("out of memory");
    }
    b->made = m;
    b->capmade = nc;
  }
  b->made[b->nmade++] = n;
  return 0;
}

/* A node of op_id with attributes kv (or params copied from `copy`), inputs ins; held by b. */
static mxw_node *new_node(builder *b, const char *name, int op_id, const char *const *kv, const mxw_params *copy,
                          const mxw_entry *ins, int nin) {
  const mxw_op_def *op = mxw_op_get(op_id);
  mxw_node *n = mxw_node_new(name);
  if (!n) return NULL;
  if (keep_made(b, n) != 0) return NULL;
  for (int i = 0; kv && kv[i]; i += 2) {
    if (!kv[i + 1]) {
      mxw_fail("attribute '%s' has no value", kv[i]);
      return NULL;
    }
    if (mxw_attrs_set(&n->attrs, kv[i], kv[i + 1]) != 0) return NULL;
  }
  if (copy) {
    if (op->param_size != copy->op->param_size) {
      mxw_fail("%s cannot take the params of %s", op->name, copy->op->name);
      return NULL;
    }
    if (!(n->params = mxw_params_clone(copy, op, op_id))) return NULL;
    n->op = op;
    n->op_id = op_id;
  } else if (mxw_node_set_op(n, op_id) != 0) {
    return NULL;
  }
  int want = mxw_params_num_inputs(n->params);
  if (want != nin) {
    mxw_fail("%s takes %d inputs, %d given", op->name, want, nin);
    return NULL;
  }
  n->inputs = (mxw_entry *)calloc((size_t)(nin ? nin : 1), sizeof(mxw_entry));
  if (!n->inputs) {
    mxw_fail("out of memory");
    return NULL;
  }
  n->num_inputs = nin;
  for (int i = 0; i < nin; i++) {
    n->inputs[i] = ins[i];
    mxw_node_retain(ins[i].node);
  }
  return n;
}

static int find_op(const char *name) {
  int id = mxw_op_find(name);
  if (id < 0) mxw_fail("the gradient needs operator %s, which is not registered", name);
  return id;
}

/* The sum of n gradient entries (ElementWiseSum, at most 32 inputs per node). */
static int sum_entries(builder *b, const char *name, const mxw_entry *list, int n, mxw_entry *out) {
  if (n == 1) {
    *out = list[0];
    return 0;
  }
  int op = find_op("add_n");
  if (op < 0) return -1;
  mxw_entry *partial = (mxw_entry *)malloc(sizeof(mxw_entry) * ((size_t)(n + 31) / 32 + 1));
  if (!partial) return mxw_fail("out of memory");
  int np = 0;
  for (int s = 0; s < n; s += 32) {
    int cnt = n - s < 32 ? n - s : 32;
    if (cnt == 1) {
      partial[np++] = list[s];
      continue;
    }
    char num[16];
    snprintf(num, sizeof num, "%d", cnt);
    const char *kv[] = {"num_args", num, NULL};
    mxw_node *nd = new_node(b, name, op, kv, NULL, list + s, cnt);
    if (!nd) {
      free(partial);
      return -1;
    }
    partial[np++] = (mxw_entry){nd, 0, 0};
  }
  int rc = sum_entries(b, name, partial, np, out);
  free(partial);
  return rc;
}

static int zeros_like(builder *b, const char *name, mxw_entry like, mxw_entry *out) {
  int op = find_op("zeros_like");
  if (op < 0) return -1;
  mxw_node *nd = new_node(b, name, op, NULL, NULL, &like, 1);
  if (!nd) return -1;
  *out = (mxw_entry){nd, 0, 0};
  return 0;
}

/* Room for a node of n inputs or outputs (no fixed cap: a Concat of hundreds of arrays). */
static void io_free(mxw_grad_ctx *g) {
  free(g->in_shape);
  free(g->out_shape);
  free(g->in_type);
  free(g->out_type);
  free(g->ograd);
  free(g->igrad);
}
static int io_reserve(mxw_grad_ctx *g, int n) {
  if (n <= g->io_cap) return 0;
  int c = n < 16 ? 16 : n;
  io_free(g);
  g->in_shape = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)c);
  g->out_shape = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)c);
  g->in_type = (int *)malloc(sizeof(int) * (size_t)c);
  g->out_type = (int *)malloc(sizeof(int) * (size_t)c);
  g->ograd = (mxw_entry *)malloc(sizeof(mxw_entry) * (size_t)c);
  g->igrad = (mxw_gid *)malloc(sizeof(mxw_gid) * (size_t)c);
  g->io_cap = c;
  if (g->in_shape && g->out_shape && g->in_type && g->out_type && g->ograd && g->igrad) return 0;
  g->io_cap = 0;
  return mxw_fail("out of memory differentiating a node of %d inputs or outputs", n);
}

static mxw_gid push(mxw_grad_ctx *g, mxw_entry e) {
  if (g->ntab == g->cap) {
    int nc = g->cap * 2 + 16;
    mxw_entry *t = (mxw_entry *)realloc(g->tab, sizeof *t * (size_t)nc);
    if (!t) {
      mxw_fail("out of memory");
      return -1;
    }
    g->tab = t;
    g->cap = nc;
  }
  g->tab[g->ntab] = e;
  return g->ntab++;
}

static int gids_ok(const mxw_grad_ctx *g, const mxw_gid *in, int nin) {
  for (int i = 0; i < nin; i++)
    if (in[i] < 0 || in[i] >= g->ntab) return 0; /* an earlier builder call failed */
  return 1;
}

const void *mxw_grad_param(const mxw_grad_ctx *g) { return g->fwd->params->param; }
int mxw_grad_num_inputs(const mxw_grad_ctx *g) { return g->nin; }
int mxw_grad_num_outputs(const mxw_grad_ctx *g) { return g->nout; }
const mxw_shape *mxw_grad_in_shape(const mxw_grad_ctx *g, int i) { return &g->in_shape[i]; }
const mxw_shape *mxw_grad_out_shape(const mxw_grad_ctx *g, int i) { return &g->out_shape[i]; }
int mxw_grad_in_dtype(const mxw_grad_ctx *g, int i) { return g->in_type[i]; }

/* A handle on the value of output `index` of forward node n (input or output `i` of the node
 * being differentiated, `count` of them, for the error). */
static mxw_gid push_value(mxw_grad_ctx *g, mxw_node *n, int index, const char *what, int i, int count) {
  if (i < 0 || i >= count) {
    mxw_fail("gradient of %s: no %s %d", g->fwd->op->name, what, i);
    return -1;
  }
  mxw_entry e;
  mxw_shape s;
  int t;
  if (g->b->value(g->b->ud, n, index, &e, &s, &t) != 0) return -1;
  return push(g, e);
}
mxw_gid mxw_grad_in(mxw_grad_ctx *g, int i) {
  mxw_entry in = i >= 0 && i < g->nin ? g->fwd->inputs[i] : (mxw_entry){NULL, 0, 0};
  return push_value(g, in.node, (int)in.index, "input", i, g->nin);
}
mxw_gid mxw_grad_out(mxw_grad_ctx *g, int i) { return push_value(g, g->fwd, i, "output", i, g->nout); }
mxw_gid mxw_grad_ograd(mxw_grad_ctx *g, int i) {
  if (i < 0 || i >= g->nout) {
    mxw_fail("gradient of %s: no output %d", g->fwd->op->name, i);
    return -1;
  }
  return push(g, g->ograd[i]);
}

static char *grad_name(const mxw_grad_ctx *g, char *buf, size_t len) {
  snprintf(buf, len, "%s_backward", g->fwd->name);
  return buf;
}

/* A gradient node of `op` on gids `in` (attributes kv, or a copy of the params `copy`), its first
 * nout outputs pushed into out. */
static int grad_node(mxw_grad_ctx *g, const char *op, const char *const *kv, const mxw_params *copy, const mxw_gid *in,
                     int nin, mxw_gid *out, int nout) {
  if (!gids_ok(g, in, nin)) return -1;
  int id = find_op(op);
  if (id < 0) return -1;
  mxw_entry small[16], *ins = nin <= 16 ? small : (mxw_entry *)malloc(sizeof(mxw_entry) * (size_t)nin);
  if (!ins) return mxw_fail("out of memory");
  for (int i = 0; i < nin; i++) ins[i] = g->tab[in[i]];
  char name[300];
  mxw_node *n = new_node(g->b, grad_name(g, name, sizeof name), id, kv, copy, ins, nin);
  if (ins != small) free(ins);
  if (!n) return -1;
  int have = mxw_node_num_outputs(n);
  if (nout > have) return mxw_fail("%s has %d outputs, %d asked for", op, have, nout);
  for (int k = 0; k < nout; k++)
    if ((out[k] = push(g, (mxw_entry){n, (uint32_t)k, 0})) < 0) return -1;
  return 0;
}

int mxw_grad_op_n(mxw_grad_ctx *g, const char *op, const char *const *kv, const mxw_gid *in, int nin, mxw_gid *out,
                  int nout) {
  return grad_node(g, op, kv, NULL, in, nin, out, nout);
}

mxw_gid mxw_grad_op(mxw_grad_ctx *g, const char *op, const char *const *kv, const mxw_gid *in, int nin) {
  mxw_gid out = -1;
  return grad_node(g, op, kv, NULL, in, nin, &out, 1) == 0 ? out : -1;
}

int mxw_grad_op_fwd(mxw_grad_ctx *g, const char *op, const mxw_gid *in, int nin, mxw_gid *out, int nout) {
  return grad_node(g, op, NULL, g->fwd->params, in, nin, out, nout);
}

int mxw_grad_op_like(mxw_grad_ctx *g, const mxw_node *like, const mxw_gid *in, int nin, mxw_gid *out, int nout) {
  return grad_node(g, like->op->name, NULL, like->params, in, nin, out, nout);
}

mxw_entry mxw_grad_entry(const mxw_grad_ctx *g, mxw_gid gid) {
  return gid >= 0 && gid < g->ntab ? g->tab[gid] : (mxw_entry){NULL, 0, 0};
}

mxw_gid mxw_grad_constant(mxw_grad_ctx *g, const char *name, const mxw_ndarray *arr) {
  mxw_node *n = value_node(name, arr);
  if (!n || keep_made(g->b, n) != 0) return -1;
  return push(g, (mxw_entry){n, 0, 0});
}

mxw_gid mxw_grad_adopt(mxw_grad_ctx *g, mxw_entry e) {
  if (!e.node || keep_made(g->b, e.node) != 0) return -1;
  return push(g, e);
}

int mxw_grad_set_fwd_op_of(mxw_grad_ctx *g, const char *op, const mxw_gid *in, int nin) {
  mxw_gid dx = -1;
  MXW_TRY(mxw_grad_op_fwd(g, op, in, nin, &dx, 1));
  return mxw_grad_set(g, 0, dx);
}
int mxw_grad_set_fwd_op(mxw_grad_ctx *g, const char *op, int with_input) {
  const mxw_gid in[2] = {mxw_grad_ograd(g, 0), with_input ? mxw_grad_in(g, 0) : -1};
  return mxw_grad_set_fwd_op_of(g, op, in, with_input ? 2 : 1);
}

int mxw_grad_set(mxw_grad_ctx *g, int input, mxw_gid grad) {
  if (grad < 0 || grad >= g->ntab) return -1;
  if (input < 0 || input >= g->nin) return mxw_fail("gradient of %s: no input %d", g->fwd->op->name, input);
  g->igrad[input] = grad;
  return 0;
}

mxw_gid mxw_grad_mul(mxw_grad_ctx *g, mxw_gid a, mxw_gid b) {
  return mxw_grad_op(g, "elemwise_mul", NULL, MXW_GIDS(a, b));
}

int mxw_grad_flags(const mxw_grad_ctx *g) { return g->b->flags; }
const char *mxw_grad_op_name(const mxw_grad_ctx *g) { return g->fwd->op->name; }

int mxw_grad_linear_in_ograd(mxw_grad_ctx *g) {
  mxw_gid small[8], *in = g->nin <= 8 ? small : (mxw_gid *)malloc(sizeof(mxw_gid) * (size_t)g->nin), d = -1;
  if (!in) return mxw_fail("out of memory");
  in[0] = mxw_grad_ograd(g, 0);
  for (int i = 1; i < g->nin; i++) in[i] = mxw_grad_in(g, i);
  const int rc = mxw_grad_op_fwd(g, g->fwd->op->name, in, g->nin, &d, 1);
  if (in != small) free(in);
  return rc != 0 ? rc : mxw_grad_set(g, 0, d);
}

mxw_gid mxw_grad_zeros_like(mxw_grad_ctx *g, mxw_gid like) {
  return mxw_grad_op(g, "zeros_like", NULL, MXW_GIDS(like));
}

/* Sums a gradient of forward output 0's shape over the axes input `input` was broadcast along
 * (numpy rules, right-aligned), then gives it the input's shape. */
mxw_gid mxw_grad_reduce_to_input(mxw_grad_ctx *g, mxw_gid grad, int input) {
  if (grad < 0) return -1;
  if (input < 0 || input >= g->nin) {
    mxw_fail("gradient of %s: no input %d", g->fwd->op->name, input);
    return -1;
  }
  const mxw_shape *in = &g->in_shape[input], *out = &g->out_shape[0];
  if (mxw_shape_equal(in, out)) return grad;
  char axes[256] = "(", shape[256];
  size_t used = 1;
  int naxes = 0;
  for (int d = 0; d < out->ndim; d++) {
    int di = d - (out->ndim - in->ndim);
    int64_t isz = di >= 0 ? in->dims[di] : 1;
    if (isz == 1 && out->dims[d] != 1) {
      used += (size_t)snprintf(axes + used, sizeof axes - used, "%s%d", naxes ? ", " : "", d);
      naxes++;
    }
  }
  snprintf(axes + used, sizeof axes - used, naxes == 1 ? ",)" : ")");
  mxw_gid r = grad;
  if (naxes) r = mxw_grad_op(g, "sum", MXW_KV("axis", axes, "keepdims", "True"), MXW_GIDS(r));
  mxw_shape_attr(in, shape, sizeof shape);
  /* _view_range, not Reshape: Reshape reads a 0 in the shape as "copy this dimension" */
  return mxw_grad_op(g, "_view_range", MXW_KV("offset", "0", "shape", shape), MXW_GIDS(r));
}

typedef struct contrib_list {
  mxw_entry *e;
  int n, cap;
} contrib_list;

static int contrib_push(contrib_list *l, mxw_entry e) {
  if (l->n == l->cap) {
    int nc = l->cap * 2 + 2;
    mxw_entry *t = (mxw_entry *)realloc(l->e, sizeof *t * (size_t)nc);
    if (!t) return mxw_fail("out of memory");
    l->e = t;
    l->cap = nc;
  }
  l->e[l->n++] = e;
  return 0;
}

int mxw_gradient_build(const mxw_entry *heads, int num_heads, const mxw_entry *head_grads, mxw_node *const *xs,
                       int num_xs, mxw_value_fn value, void *ud, int flags, mxw_entry *x_grads) {
  mxw_node **nodes = NULL;
  int nn = 0, rc = -1;
  builder b = {value, ud, flags, NULL, 0, 0};
  int *base = NULL;
  uint8_t *needs = NULL;
  contrib_list *contrib = NULL;
  mxw_grad_ctx *g = NULL;
  for (int i = 0; i < num_xs; i++) x_grads[i] = (mxw_entry){NULL, 0, 0};
  if (mxw_graph_dfs(heads, num_heads, &nodes, &nn) != 0) return -1;
  base = (int *)malloc(sizeof(int) * (size_t)(nn + 1));
  needs = (uint8_t *)calloc((size_t)(nn ? nn : 1), 1);
  g = (mxw_grad_ctx *)calloc(1, sizeof *g);
  if (!base || !needs || !g) {
    mxw_fail("out of memory");
    goto done;
  }
  base[0] = 0;
  for (int i = 0; i < nn; i++) base[i + 1] = base[i] + mxw_node_num_outputs(nodes[i]);
  contrib = (contrib_list *)calloc((size_t)(base[nn] ? base[nn] : 1), sizeof(contrib_list));
  if (!contrib) {
    mxw_fail("out of memory");
    goto done;
  }
  for (int k = 0; k < num_xs; k++) {
    int i = xs[k]->index;
    if (i >= 0 && i < nn && nodes[i] == xs[k]) needs[i] = 1;
  }
  for (int i = 0; i < nn; i++) {
    mxw_node *n = nodes[i];
    if (!n->op) continue;
    for (int k = 0; k < n->num_inputs && !needs[i]; k++) needs[i] = needs[n->inputs[k].node->index];
  }
  for (int h = 0; h < num_heads; h++)
    if (contrib_push(&contrib[base[heads[h].node->index] + (int)heads[h].index], head_grads[h]) != 0) goto done;

  for (int i = nn - 1; i >= 0; i--) {
    mxw_node *n = nodes[i];
    if (!n->op || !needs[i]) continue;
    int nout = mxw_node_num_outputs(n), any = 0;
    for (int k = 0; k < nout; k++) any |= contrib[base[i] + k].n > 0;
    if (!any || n->op->no_grad) continue;
    if (!n->op->gradient) {
      mxw_fail("Operator %s is non-differentiable because it didn't register FGradient attribute (node '%s')",
               n->op->name, n->name);
      goto done;
    }
    if (io_reserve(g, n->num_inputs > nout ? n->num_inputs : nout) != 0) goto done;
    char name[300];
    snprintf(name, sizeof name, "%s_backward", n->name);
    g->b = &b;
    g->fwd = n;
    g->nin = n->num_inputs;
    g->nout = nout;
    g->ntab = 0;
    for (int k = 0; k < nout; k++) {
      mxw_entry dummy;
      if (value(ud, n, k, NULL, &g->out_shape[k], &g->out_type[k]) != 0) goto done;
      contrib_list *l = &contrib[base[i] + k];
      if (l->n) {
        if (sum_entries(&b, name, l->e, l->n, &g->ograd[k]) != 0) goto done;
      } else {
        if (value(ud, n, k, &dummy, &g->out_shape[k], &g->out_type[k]) != 0) goto done;
        if (zeros_like(&b, name, dummy, &g->ograd[k]) != 0) goto done;
      }
    }
    for (int k = 0; k < n->num_inputs; k++) {
      g->igrad[k] = -1;
      if (value(ud, n->inputs[k].node, (int)n->inputs[k].index, NULL, &g->in_shape[k], &g->in_type[k]) != 0) goto done;
    }
    if (n->op->gradient(g) != 0) {
      mxw_error_prefix("gradient of node '%s' (%s): ", n->name, n->op->name);
      goto done;
    }
    for (int k = 0; k < n->num_inputs; k++) {
      if (g->igrad[k] < 0 || !needs[n->inputs[k].node->index]) continue;
      if (contrib_push(&contrib[base[n->inputs[k].node->index] + (int)n->inputs[k].index], g->tab[g->igrad[k]]) != 0)
        goto done;
    }
  }
  for (int k = 0; k < num_xs; k++) {
    int i = xs[k]->index;
    mxw_entry e;
    if (i >= 0 && i < nn && nodes[i] == xs[k] && contrib[base[i]].n) {
      if (sum_entries(&b, "grad_sum", contrib[base[i]].e, contrib[base[i]].n, &e) != 0) goto done;
    } else {
      mxw_entry v;
      mxw_shape s;
      int t;
      if (value(ud, xs[k], 0, &v, &s, &t) != 0 || zeros_like(&b, "zero_grad", v, &e) != 0) goto done;
    }
    x_grads[k] = e;
    mxw_node_retain(e.node);
  }
  rc = 0;
done:
  if (rc != 0)
    for (int k = 0; k < num_xs; k++)
      if (x_grads[k].node) {
        mxw_node_release(x_grads[k].node);
        x_grads[k].node = NULL;
      }
  for (int i = 0; contrib && i < base[nn]; i++) free(contrib[i].e);
  free(contrib);
  for (int i = 0; i < b.nmade; i++) mxw_node_release(b.made[i]);
  free(b.made);
  if (g) {
    free(g->tab);
    io_free(g);
  }
  free(g);
  free(base);
  free(needs);
  free(nodes);
  return rc;
}

/* ---- eager backward --------------------------------------------------------------------------------- */
typedef struct tape_ud {
  mxw_ag_info **touched; /* infos whose vvar this pass filled (cleared at the end) */
  int n, cap;
  int link; /* create_graph: each bound value is the tape's entry itself (ag_node set) */
} tape_ud;

/* The value of a tape entry: a variable bound to the saved array (one per entry and pass). */
static int tape_value(void *ud_, mxw_node *n, int index, mxw_entry *entry, mxw_shape *shape, int *dtype) {
  tape_ud *ud = (tape_ud *)ud_;
  mxw_ag_info *ag = n->ag;
  if (!ag || index >= ag->num_values || !ag->values[index])
    return mxw_fail(
        "cannot differentiate through node '%s': its values were freed by an earlier backward pass "
        "(pass retain_graph=True to the first backward to differentiate the same graph twice)",
        n->name);
  const mxw_ndarray *arr = ag->values[index];
  *shape = arr->t.shape;
  *dtype = arr->t.dtype;
  if (!entry) return 0;
  if (!ag->vvar) {
    if (ud->n == ud->cap) {
      int nc = ud->cap * 2 + 16;
      mxw_ag_info **t = (mxw_ag_info **)realloc(ud->touched, sizeof *t * (size_t)nc);
      if (!t) return mxw_fail("out of memory");
      ud->touched = t;
      ud->cap = nc;
    }
    ag->vvar = (mxw_node **)calloc((size_t)ag->num_values, sizeof(mxw_node *));
    if (!ag->vvar) return mxw_fail("out of memory");
    ud->touched[ud->n++] = ag;
  }
  if (!ag->vvar[index]) {
    if (!(ag->vvar[index] = value_node("value", arr))) return -1;
    if (ud->link) { /* the bound value is entry (n, index) of the tape: ops on it are recorded after it */
      mxw_ndarray *v = ag->vvar[index]->ag->values[0];
      v->ag_node = n;
      v->ag_index = (uint32_t)index;
      mxw_node_retain(n);
    }
  }
  *entry = (mxw_entry){ag->vvar[index], 0, 0};
  return 0;
}

static void tape_ud_free(tape_ud *ud) {
  for (int i = 0; i < ud->n; i++) {
    mxw_ag_info *ag = ud->touched[i];
    for (int k = 0; k < ag->num_values; k++) mxw_node_release(ag->vvar[k]);
    free(ag->vvar);
    ag->vvar = NULL;
  }
  free(ud->touched);
}

static void accumulate(mxw_ndarray *dst, const mxw_ndarray *src) {
  int64_t n = mxw_shape_size(&dst->t.shape);
  if (dst->t.dtype == MXW_FLOAT32 && src->t.dtype == MXW_FLOAT32) {
    float *d = (float *)dst->t.data;
    const float *s = (const float *)src->t.data;
    for (int64_t i = 0; i < n; i++) d[i] += s[i];
    return;
  }
  for (int64_t i = 0; i < n; i++)
    mxw_store_f64(dst->t.data, dst->t.dtype, i,
                  mxw_load_f64(dst->t.data, dst->t.dtype, i) + mxw_load_f64(src->t.data, src->t.dtype, i));
}

/* A new handle on a's storage and autograd entry. */
static mxw_ndarray *share_entry(const mxw_ndarray *a) {
  mxw_ndarray *v = mxw_ndarray_share(a);
  if (v && a->ag_node) {
    v->ag_node = a->ag_node;
    v->ag_index = a->ag_index;
    mxw_node_retain(a->ag_node);
  }
  return v;
}

/* create_graph (MXNet's Imperative::Backward with create_graph=True): the gradient graph runs node
 * by node as eager calls while recording, its values bound to the tape's own entries (tape_value
 * with link), so the gradients returned are recorded functions of the forward graph's inputs: a
 * later backward differentiates them through each backward op's own FGradient (second order). */
static int run_recorded(const mxw_entry *xg, int nx, int is_train, mxw_ndarray **grads_out) {
  mxw_node **nodes = NULL;
  int nn = 0, rc = -1;
  if (mxw_graph_dfs(xg, nx, &nodes, &nn) != 0) return -1;
  int *base = (int *)malloc(sizeof(int) * (size_t)(nn + 1));
  mxw_ndarray **vals = NULL, **ins = NULL;
  uint8_t *own = NULL;
  int max_in = 1;
  if (base) {
    base[0] = 0;
    for (int i = 0; i < nn; i++) {
      base[i + 1] = base[i] + (nodes[i]->op ? mxw_node_num_outputs(nodes[i]) : 1);
      if (nodes[i]->num_inputs > max_in) max_in = nodes[i]->num_inputs;
    }
    vals = (mxw_ndarray **)calloc((size_t)(base[nn] ? base[nn] : 1), sizeof(mxw_ndarray *));
    own = (uint8_t *)calloc((size_t)(base[nn] ? base[nn] : 1), 1);
    ins = (mxw_ndarray **)calloc((size_t)max_in, sizeof(mxw_ndarray *));
  }
  if (!base || !vals || !own || !ins) {
    free(base);
    free(vals);
    free(own);
    free(ins);
    free(nodes);
    return mxw_fail("out of memory");
  }
  const int prev_rec = mxw_autograd_set_recording(1), prev_train = mxw_set_training(is_train);
  for (int i = 0; i < nn; i++) {
    mxw_node *n = nodes[i];
    if (!n->op) {
      if (!n->ag || !n->ag->values[0]) {
        mxw_fail("internal error: backward graph input '%s' has no value", n->name);
        goto done;
      }
      vals[base[i]] = n->ag->values[0]; /* borrowed */
      continue;
    }
    /* an autograd.Function's backward half (JS code) keeps its saved values out of the tape and has
     * no gradient (in MXNet neither): a gradient through it could only be differentiated as if it
     * did not depend on the forward's inputs. (A hybridized call's gradient is its recomputed
     * forward graph's here: cached_op.c.) */
    if (strcmp(n->op->name, "_backward_CustomFunction") == 0) {
      mxw_fail("create_graph: the gradient of an autograd.Function cannot be differentiated again (%s has no gradient)",
               n->op->name);
      goto done;
    }
    for (int k = 0; k < n->num_inputs; k++) ins[k] = vals[base[n->inputs[k].node->index] + (int)n->inputs[k].index];
    int nout = mxw_node_num_outputs(n);
    if (mxw_op_invoke(n->op_id, n->params, n->num_inputs, ins, &nout, vals + base[i]) != 0) goto done;
    for (int k = 0; k < nout; k++) own[base[i] + k] = 1;
  }
  for (int k = 0; k < nx; k++) {
    const mxw_ndarray *v = vals[base[xg[k].node->index] + (int)xg[k].index];
    if (!(grads_out[k] = share_entry(v))) {
      while (k-- > 0) {
        mxw_ndarray_free(grads_out[k]);
        grads_out[k] = NULL;
      }
      goto done;
    }
  }
  rc = 0;
done:
  mxw_set_training(prev_train);
  mxw_autograd_set_recording(prev_rec);
  for (int i = 0; i < base[nn]; i++)
    if (own[i]) mxw_ndarray_free(vals[i]);
  free(base);
  free(vals);
  free(own);
  free(ins);
  free(nodes);
  return rc;
}

/* backward (grads_out NULL: into the variables' buffers by grad_req) or grad (vars given: the
 * gradients returned as new arrays in grads_out). */
static int backward_with(int nh, mxw_ndarray *const *heads, mxw_ndarray *const *head_grads, int nv,
                         mxw_ndarray *const *vars, int retain, int is_train, int create, mxw_ndarray **grads_out,
                         mxw_entry *hent, mxw_entry *hgrad, mxw_node **hvar, mxw_ndarray **ones) {
  mxw_node **nodes = NULL, **xs = NULL;
  mxw_entry *xg = NULL;
  mxw_symbol *sym = NULL;
  mxw_executor *ex = NULL;
  mxw_ndarray **outs = NULL, **bind = NULL;
  tape_ud ud = {0};
  ud.link = create;
  uint8_t *provided = NULL;
  int nn = 0, nx = 0, rc = -1, prev_train = -1;
  for (int h = 0; h < nh; h++) {
    MXW_CHECK(heads[h] != NULL, "head %d is NULL", h);
    if (!heads[h]->ag_node)
      return mxw_fail(
          "Cannot differentiate node because it is not in a computational graph. You need to set "
          "is_recording to true or use mark_variables() when computing the graph.");
    hent[h] = (mxw_entry){heads[h]->ag_node, heads[h]->ag_index, 0};
    if (head_grads && head_grads[h]) {
      char a[128], b[128];
      MXW_CHECK(mxw_shape_equal(&head_grads[h]->t.shape, &heads[h]->t.shape),
                "head gradient %d has shape %s, the head %s", h, mxw_shape_str(&head_grads[h]->t.shape, a, sizeof a),
                mxw_shape_str(&heads[h]->t.shape, b, sizeof b));
    }
  }
  if (mxw_graph_dfs(hent, nh, &nodes, &nn) != 0) return -1;
  xs = (mxw_node **)malloc(sizeof *xs * (size_t)(nn + nv + 1));
  if (!xs) {
    mxw_fail("out of memory");
    goto done;
  }
  for (int i = 0; i < nn; i++) {
    mxw_node *n = nodes[i];
    if (n->op && n->ag && n->ag->freed) {
      mxw_fail(
          "cannot run backward through the graph a second time: its saved values were freed by the first "
          "backward (node '%s'); pass retain_graph=True (retainGraph: true) to the first backward",
          n->name);
      goto done;
    }
    if (!vars && !n->op && n->ag && n->ag->grad && n->ag->grad_req) xs[nx++] = n;
  }
  if (vars) {
    for (int i = 0; i < nv; i++) {
      mxw_node *v = vars[i] ? vars[i]->ag_node : NULL;
      if (!v || v->op || !v->ag) {
        mxw_fail(
            "variable %d is not marked for gradients: call attach_grad() (attachGrad) or mark_variables on it "
            "before recording",
            i);
        goto done;
      }
      xs[nx++] = v;
    }
  }
  if (nx == 0) {
    mxw_fail("There are no inputs in computation graph that require gradients.");
    goto done;
  }
  for (int h = 0; h < nh; h++) {
    mxw_ndarray *hg = head_grads ? head_grads[h] : NULL;
    if (!hg) {
      ones[h] = mxw_ndarray_alloc(&heads[h]->t.shape, heads[h]->t.dtype);
      if (!ones[h]) goto done;
      int64_t n = mxw_shape_size(&heads[h]->t.shape);
      for (int64_t i = 0; i < n; i++) mxw_store_f64(ones[h]->t.data, ones[h]->t.dtype, i, 1.0);
      hg = ones[h];
    }
    if (!(hvar[h] = value_node("head_grad", hg))) goto done;
    hgrad[h] = (mxw_entry){hvar[h], 0, 0};
  }
  xg = (mxw_entry *)calloc((size_t)nx, sizeof *xg);
  if (!xg) {
    mxw_fail("out of memory");
    goto done;
  }
  if (mxw_gradient_build(hent, nh, hgrad, xs, nx, tape_value, &ud,
                         create ? MXW_GRAD_DIFFERENTIABLE | (is_train ? MXW_GRAD_TRAIN : 0) : 0, xg) != 0)
    goto done;
  if (create) {
    if (run_recorded(xg, nx, is_train, grads_out) != 0) goto done;
    goto release;
  }
  sym = mxw_symbol_alloc(nx);
  if (!sym) goto done;
  for (int k = 0; k < nx; k++) {
    sym->outputs[k] = xg[k]; /* the symbol takes the references */
    xg[k].node = NULL;
  }
  if (mxw_exec_create(sym, &ex) != 0) goto done;
  int ni = mxw_exec_num_inputs(ex);
  bind = (mxw_ndarray **)calloc((size_t)(ni ? ni : 1), sizeof *bind);
  outs = (mxw_ndarray **)calloc((size_t)nx, sizeof *outs);
  if (!bind || !outs) {
    mxw_fail("out of memory");
    goto done;
  }
  for (int k = 0; k < ni; k++) {
    mxw_node *v = mxw_exec_input_node(ex, k);
    if (!v->ag || !v->ag->values[0]) {
      mxw_fail("internal error: backward graph input '%s' has no value", v->name);
      goto done;
    }
    bind[k] = v->ag->values[0];
  }
  /* grad_req write: the graph writes straight into the variable's gradient buffer (unless the
   * buffer is also one of the graph's inputs) */
  if (!grads_out) {
    provided = (uint8_t *)calloc((size_t)nx, 1);
    if (!provided) {
      mxw_fail("out of memory");
      goto done;
    }
    for (int k = 0; k < nx; k++) {
      mxw_ag_info *ag = xs[k]->ag;
      /* (a buffer of another dtype takes the converted values below, as with grad_req add) */
      if (ag->grad_req != 1 || ag->grad->t.dtype != ag->values[0]->t.dtype) continue;
      int shared = 0;
      for (int i = 0; i < ni; i++) shared |= bind[i]->storage == ag->grad->storage;
      for (int j = 0; j < k; j++) shared |= provided[j] && outs[j]->storage == ag->grad->storage;
      if (shared) continue;
      outs[k] = ag->grad;
      provided[k] = 1;
    }
  }
  prev_train = mxw_set_training(is_train);
  int nout = nx;
  if (mxw_exec_forward_into(ex, ni, bind, is_train, &nout, outs) != 0) {
    for (int k = 0; provided && k < nx; k++)
      if (provided[k]) outs[k] = NULL;
    goto done;
  }
  if (grads_out) {
    for (int k = 0; k < nx; k++) {
      grads_out[k] = outs[k];
      outs[k] = NULL;
    }
  } else {
    for (int k = 0; k < nx; k++) {
      mxw_ag_info *ag = xs[k]->ag;
      if (provided[k])
        outs[k] = NULL; /* written in place; the buffer is the node's */
      else if (ag->grad_req == 1)
        mxw_convert(outs[k]->t.data, outs[k]->t.dtype, ag->grad->t.data, ag->grad->t.dtype,
                    mxw_shape_size(&ag->grad->t.shape));
      else
        accumulate(ag->grad, outs[k]);
      ag->grad->storage->fresh_grad = 1;
    }
  }
release:
  if (!retain)
    for (int i = 0; i < nn; i++)
      if (nodes[i]->op && nodes[i]->ag) {
        ag_free_values(nodes[i]->ag);
        nodes[i]->ag->freed = 1;
        if (nodes[i]->op->drop_saved) nodes[i]->op->drop_saved(nodes[i]->params->param);
      }
  rc = 0;
done:
  if (prev_train >= 0) mxw_set_training(prev_train);
  for (int k = 0; outs && k < nx; k++)
    if (!(provided && provided[k])) mxw_ndarray_free(outs[k]);
  free(provided);
  free(outs);
  free(bind);
  mxw_exec_free(ex);
  mxw_sym_free(sym);
  for (int k = 0; xg && k < nx; k++)
    if (xg[k].node) mxw_node_release(xg[k].node);
  free(xg);
  tape_ud_free(&ud);
  for (int h = 0; h < nh; h++) {
    mxw_node_release(hvar[h]);
    mxw_ndarray_free(ones[h]);
  }
  free(xs);
  free(nodes);
  return rc;
}

/* hent, hgrad, hvar, ones: per head (any number of heads), zeroed */
static int run_backward(int nh, mxw_ndarray *const *heads, mxw_ndarray *const *head_grads, int nv,
                        mxw_ndarray *const *vars, int retain, int is_train, int create, mxw_ndarray **grads_out) {
  MXW_CHECK(nh > 0 && heads, "backward needs at least one head");
  mxw_entry *hent = (mxw_entry *)calloc((size_t)nh * 2, sizeof(mxw_entry));
  mxw_node **hvar = (mxw_node **)calloc((size_t)nh, sizeof(mxw_node *));
  mxw_ndarray **ones = (mxw_ndarray **)calloc((size_t)nh, sizeof(mxw_ndarray *));
  int rc = hent && hvar && ones ? backward_with(nh, heads, head_grads, nv, vars, retain, is_train, create, grads_out,
                                                hent, hent + nh, hvar, ones)
                                : mxw_fail("out of memory");
  free(hent);
  free(hvar);
  free(ones);
  return rc;
}

int mxw_autograd_backward(int num_heads, mxw_ndarray *const *heads, mxw_ndarray *const *head_grads, int retain_graph,
                          int is_train) {
  return run_backward(num_heads, heads, head_grads, 0, NULL, retain_graph, is_train, 0, NULL);
}

int mxw_autograd_grad(int num_heads, mxw_ndarray *const *heads, mxw_ndarray *const *head_grads, int num_vars,
                      mxw_ndarray *const *vars, int retain_graph, int is_train, mxw_ndarray **grads) {
  return mxw_autograd_grad_ex(num_heads, heads, head_grads, num_vars, vars, retain_graph, 0, is_train, grads);
}

int mxw_autograd_grad_ex(int num_heads, mxw_ndarray *const *heads, mxw_ndarray *const *head_grads, int num_vars,
                         mxw_ndarray *const *vars, int retain_graph, int create_graph, int is_train,
                         mxw_ndarray **grads) {
  MXW_CHECK(num_vars > 0 && vars && grads, "grad needs at least one variable");
  return run_backward(num_heads, heads, head_grads, num_vars, vars, retain_graph, is_train, create_graph != 0, grads);
}
