/* subgraph.c -- MXNet's control-flow operators (src/operator/control_flow.cc): _foreach,
 * _while_loop and _cond. Their nodes carry nnvm's attrs.subgraphs (read and written by json.c);
 * the parsed params hold a reference to a state with the subgraphs, their locs attributes and one
 * small plan per subgraph (DFS order, shapes inferred once per input signature, a buffer per
 * entry), run once per iteration by the op's forward. The subgraph runner is self-contained: it
 * calls op definitions directly, so a nested control-flow op is just another node.
 *
 * Inputs of a subgraph are its variables in list_inputs (DFS) order; the locs attributes map
 * the op's inputs onto them, as MXNet's symbol/contrib.py writes them:
 *   _foreach    inputs [data..., states..., remain...]; in_data_locs, in_state_locs, remain_locs
 *               give each one's position among the subgraph's inputs; outputs [out data (each
 *               stacked along axis 0), final states]
 *   _while_loop inputs [vars and captured arrays]; cond_input_locs / func_input_locs pick the
 *               cond / func subgraph inputs among them, func_var_locs the loop variables among
 *               func's inputs; outputs [per-step data stacked to max_iterations, final vars]
 *   _cond       cond_input_locs / then_input_locs / else_input_locs pick each subgraph's inputs */
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"

enum { CF_FOREACH = 0, CF_WHILE = 1, CF_COND = 2 };
static const char *const k_cf_names[] = {"_foreach", "_while_loop", "_cond"};
static const int k_cf_nsub[] = {1, 2, 3};
static const int k_cf_graph_args[] = {1, 2, 3}; /* num_args counts the subgraphs as inputs */
static const char *const k_locs[3][3] = {{"in_data_locs", "in_state_locs", "remain_locs"},
                                         {"cond_input_locs", "func_input_locs", "func_var_locs"},
                                         {"cond_input_locs", "then_input_locs", "else_input_locs"}};

/* ---- a subgraph plan ------------------------------------------------------------------------ */
typedef struct sg_plan {
  int nn, ne, nin, nh, maxio;
  mxw_node **nodes;  /* DFS order (borrowed from the symbol) */
  int *entry_base;   /* nn + 1 */
  int *in_entries;   /* per node: its inputs' entry ids, at in_base[i] */
  int *in_base;      /* nn + 1 */
  int *input_node;   /* the variables, in list_inputs order */
  int *head_entry;   /* nh */
  mxw_shape *shapes; /* ne: the last inference */
  int *types;
  void **data;      /* ne: where each entry's values are during a run */
  void **buf;       /* ne: owned buffers of operator outputs */
  size_t *cap;      /* their sizes */
  uint8_t *noalloc; /* ne: entries that get no buffer (a tape output nothing here reads) */
  int64_t *off;     /* ne: an operator entry's offset in one step's tape, in tape units */
  int64_t step_units;
  int bound; /* the shapes and dtypes below were inferred and the buffers allocated */
  mxw_shape *bound_shapes;
  int *bound_types;
  mxw_tensor *tin, *tout;
} sg_plan;

static void plan_free(sg_plan *p) {
  if (!p) return;
  for (int e = 0; p->buf && e < p->ne; e++) free(p->buf[e]);
  free(p->nodes);
  free(p->entry_base);
  free(p->in_entries);
  free(p->in_base);
  free(p->input_node);
  free(p->head_entry);
  free(p->shapes);
  free(p->types);
  free(p->data);
  free(p->buf);
  free(p->cap);
  free(p->noalloc);
  free(p->off);
  free(p->bound_shapes);
  free(p->bound_types);
  free(p->tin);
  free(p->tout);
  free(p);
}

static sg_plan *plan_new(const mxw_symbol *s) {
  sg_plan *p = (sg_plan *)calloc(1, sizeof *p);
  if (!p) {
    mxw_fail("out of memory");
    return NULL;
  }
  if (mxw_graph_dfs(s->outputs, s->n, &p->nodes, &p->nn) != 0) {
    free(p);
    return NULL;
  }
  int nn = p->nn, nedges = 0;
  p->entry_base = (int *)malloc(sizeof(int) * (size_t)(nn + 1));
  p->in_base = (int *)malloc(sizeof(int) * (size_t)(nn + 1));
  if (!p->entry_base || !p->in_base) goto oom;
  p->entry_base[0] = p->in_base[0] = 0;
  p->maxio = 1;
  for (int i = 0; i < nn; i++) {
    mxw_node *n = p->nodes[i];
    int no = mxw_node_num_outputs(n);
    p->entry_base[i + 1] = p->entry_base[i] + no;
    p->in_base[i + 1] = p->in_base[i] + n->num_inputs;
    nedges += n->num_inputs;
    if (!n->op) p->nin++;
    if (n->num_inputs > p->maxio) p->maxio = n->num_inputs;
    if (no > p->maxio) p->maxio = no;
  }
  p->ne = p->entry_base[nn];
  p->nh = s->n;
  size_t ne = (size_t)(p->ne ? p->ne : 1);
  p->in_entries = (int *)malloc(sizeof(int) * (size_t)(nedges ? nedges : 1));
  p->input_node = (int *)malloc(sizeof(int) * (size_t)(p->nin ? p->nin : 1));
  p->head_entry = (int *)malloc(sizeof(int) * (size_t)(p->nh ? p->nh : 1));
  p->shapes = (mxw_shape *)malloc(sizeof(mxw_shape) * ne);
  p->types = (int *)malloc(sizeof(int) * ne);
  p->data = (void **)calloc(ne, sizeof(void *));
  p->buf = (void **)calloc(ne, sizeof(void *));
  p->cap = (size_t *)calloc(ne, sizeof(size_t));
  p->noalloc = (uint8_t *)calloc(ne, 1);
  p->off = (int64_t *)calloc(ne, sizeof(int64_t));
  p->bound_shapes = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)(p->nin ? p->nin : 1));
  p->bound_types = (int *)malloc(sizeof(int) * (size_t)(p->nin ? p->nin : 1));
  p->tin = (mxw_tensor *)malloc(sizeof(mxw_tensor) * (size_t)p->maxio);
  p->tout = (mxw_tensor *)malloc(sizeof(mxw_tensor) * (size_t)p->maxio);
  if (!p->in_entries || !p->input_node || !p->head_entry || !p->shapes || !p->types || !p->data || !p->buf || !p->cap ||
      !p->noalloc || !p->off || !p->bound_shapes || !p->bound_types || !p->tin || !p->tout)
    goto oom;
  /* node->index was set by this DFS: turn every reference into an entry id now */
  int v = 0;
  for (int i = 0; i < nn; i++) {
    mxw_node *n = p->nodes[i];
    if (!n->op) p->input_node[v++] = i;
    for (int k = 0; k < n->num_inputs; k++)
      p->in_entries[p->in_base[i] + k] = p->entry_base[n->inputs[k].node->index] + (int)n->inputs[k].index;
  }
  for (int h = 0; h < p->nh; h++)
    p->head_entry[h] = p->entry_base[s->outputs[h].node->index] + (int)s->outputs[h].index;
  /* a nested control-flow node's tape output that no node of this plan reads gets no buffer */
  for (int i = 0; i < nn; i++) {
    int t = mxw_node_tape_output(p->nodes[i]);
    if (t >= 0) p->noalloc[p->entry_base[i] + t] = 1;
  }
  for (int k = 0; k < nedges; k++) p->noalloc[p->in_entries[k]] = 0;
  for (int h = 0; h < p->nh; h++) p->noalloc[p->head_entry[h]] = 0;
  return p;
oom:
  plan_free(p);
  mxw_fail("out of memory");
  return NULL;
}

/* Shape and dtype inference through the subgraph: in_s/in_t (nin, list_inputs order) and
 * out_s/out_t (nh heads) are in-out, partial allowed. Sweeps forward and back until nothing
 * changes. An operator failing with every input known is an error; one with unknowns waits.
 * Returns 0 (unknowns may remain) or -1. */
static int plan_infer(sg_plan *p, mxw_shape *in_s, int *in_t, mxw_shape *out_s, int *out_t) {
  p->bound = 0; /* the entries' shapes and dtypes are recomputed here */
  for (int e = 0; e < p->ne; e++) {
    p->shapes[e].ndim = -1;
    p->types[e] = -1;
  }
  for (int k = 0; k < p->nin; k++) {
    int e = p->entry_base[p->input_node[k]];
    p->shapes[e] = in_s[k];
    p->types[e] = in_t[k];
  }
  for (int h = 0; h < p->nh; h++) {
    int e = p->head_entry[h];
    if (out_s[h].ndim >= 0 && p->shapes[e].ndim < 0) p->shapes[e] = out_s[h];
    if (out_t[h] >= 0 && p->types[e] < 0) p->types[e] = out_t[h];
  }
  mxw_shape *is = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)p->maxio * 2);
  int *it = (int *)malloc(sizeof(int) * (size_t)p->maxio * 2);
  if (!is || !it) {
    free(is);
    free(it);
    return mxw_fail("out of memory");
  }
  mxw_shape *os = is + p->maxio;
  int *ot = it + p->maxio;
  int rc = 0, changed = 1;
  for (int sweep = 0; changed && sweep < 2 * p->nn + 4 && rc == 0; sweep++) {
    changed = 0;
    for (int j = 0; j < p->nn && rc == 0; j++) {
      int i = sweep % 2 ? p->nn - 1 - j : j;
      mxw_node *n = p->nodes[i];
      if (!n->op) continue;
      int nin = n->num_inputs, nout = p->entry_base[i + 1] - p->entry_base[i], sk = 1, tk = 1;
      for (int k = 0; k < nin; k++) {
        int e = p->in_entries[p->in_base[i] + k];
        is[k] = p->shapes[e];
        it[k] = p->types[e];
        sk &= mxw_shape_known(&is[k]);
        tk &= it[k] >= 0;
      }
      for (int k = 0; k < nout; k++) {
        os[k] = p->shapes[p->entry_base[i] + k];
        ot[k] = p->types[p->entry_base[i] + k];
      }
      for (int what = 0; what < 2 && rc == 0; what++) {
        int irc = what == 0 ? n->op->infer_shape(n->params->param, nin, is, nout, os)
                            : (n->op->infer_type ? n->op->infer_type : mxw_infer_type_same)(n->params->param, nin, it,
                                                                                            nout, ot);
        if (irc != 0) {
          if (what == 0 ? sk : tk) {
            mxw_error_prefix("node '%s' (%s): ", n->name, n->op->name);
            rc = -1;
          }
          continue;
        }
        for (int k = 0; k < nin + nout; k++) {
          int e = k < nin ? p->in_entries[p->in_base[i] + k] : p->entry_base[i] + (k - nin);
          if (what == 0) {
            const mxw_shape *ns = k < nin ? &is[k] : &os[k - nin];
            if (mxw_shape_equal(&p->shapes[e], ns)) continue;
            if (k < nin && mxw_shape_known(&p->shapes[e])) {
              char a[128], b[128];
              rc = mxw_fail("node '%s' (%s): input %d has shape %s but the operator needs %s", n->name, n->op->name, k,
                            mxw_shape_str(&p->shapes[e], a, sizeof a), mxw_shape_str(ns, b, sizeof b));
              break;
            }
            p->shapes[e] = *ns;
          } else {
            int nt = k < nin ? it[k] : ot[k - nin];
            if (p->types[e] == nt) continue;
            if (k < nin && p->types[e] >= 0) {
              rc = mxw_fail("node '%s' (%s): input %d has dtype %s but the operator needs %s", n->name, n->op->name, k,
                            mxw_dtype_name(p->types[e]), mxw_dtype_name(nt));
              break;
            }
            p->types[e] = nt;
          }
          changed = 1;
        }
      }
    }
  }
  free(is);
  free(it);
  if (rc != 0) return -1;
  for (int k = 0; k < p->nin; k++) {
    int e = p->entry_base[p->input_node[k]];
    in_s[k] = p->shapes[e];
    in_t[k] = p->types[e];
  }
  for (int h = 0; h < p->nh; h++) {
    int e = p->head_entry[h];
    char a[128], b[128];
    if (out_s[h].ndim >= 0 && mxw_shape_known(&p->shapes[e]) && !mxw_shape_equal(&out_s[h], &p->shapes[e]) &&
        mxw_shape_known(&out_s[h]))
      return mxw_fail("subgraph output %d has shape %s, expected %s", h, mxw_shape_str(&p->shapes[e], a, sizeof a),
                      mxw_shape_str(&out_s[h], b, sizeof b));
    if (out_t[h] >= 0 && p->types[e] >= 0 && out_t[h] != p->types[e])
      return mxw_fail("subgraph output %d has dtype %s, expected %s", h, mxw_dtype_name(p->types[e]),
                      mxw_dtype_name(out_t[h]));
    out_s[h] = p->shapes[e];
    out_t[h] = p->types[e];
  }
  return 0;
}

/* ---- tapes: what a recording forward keeps for its backward -----------------------------------
 * A tape is one uint8 .. float64 array (the tape output of the op, see "gradients" below) whose
 * element size, the "unit", is the widest dtype of the subgraph's entries: every value is laid
 * out at a multiple of 16 units, so the layout depends on shapes only (shape inference sizes the
 * tape without dtypes) and each value is aligned for its own dtype. One step's values are the
 * forward operators' entries of a plan, in DFS order. */
#define TAPE_ROUND(n) (((n) + 15) & ~(int64_t)15)
#define TAPE_HEAD 16 /* units: the magic and the steps taken (or the branch), two int64 */
#define TAPE_MAGIC 0x6570617446434d58LL

/* The units of one step of nodes [0, upto) (each operator entry's offset into off when not
 * NULL), or -1 while a shape is unknown. */
static int64_t step_units(const sg_plan *p, int upto, int64_t *off) {
  int64_t u = 0;
  for (int i = 0; i < upto; i++) {
    if (!p->nodes[i]->op) continue;
    for (int e = p->entry_base[i]; e < p->entry_base[i + 1]; e++) {
      if (!mxw_shape_known(&p->shapes[e])) return -1;
      if (off) off[e] = u;
      u += TAPE_ROUND(mxw_shape_size(&p->shapes[e]));
    }
  }
  return u;
}
/* The widest dtype size among the plan's entries (at least w), or -1 while a dtype is unknown. */
static int widest_dtype(const sg_plan *p, int w) {
  for (int e = 0; e < p->ne && w > 0; e++) {
    if (p->types[e] < 0) return -1;
    if (mxw_dtype_size(p->types[e]) > w) w = mxw_dtype_size(p->types[e]);
  }
  return w;
}

/* Binds the plan to known input shapes and dtypes: infers every entry (all must be known) and
 * sizes the buffers of the operators' outputs. Done again only when an input changes. */
static int plan_bind(sg_plan *p, const mxw_tensor *in) {
  if (p->bound) {
    int same = 1;
    for (int k = 0; k < p->nin && same; k++)
      same = p->bound_types[k] == in[k].dtype && mxw_shape_equal(&p->bound_shapes[k], &in[k].shape);
    if (same) return 0;
  }
  p->bound = 0;
  mxw_shape *is = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)(p->nin + p->nh + 1));
  int *it = (int *)malloc(sizeof(int) * (size_t)(p->nin + p->nh + 1));
  if (!is || !it) {
    free(is);
    free(it);
    return mxw_fail("out of memory");
  }
  for (int k = 0; k < p->nin; k++) {
    is[k] = in[k].shape;
    it[k] = in[k].dtype;
  }
  for (int h = 0; h < p->nh; h++) {
    is[p->nin + h].ndim = -1;
    it[p->nin + h] = -1;
  }
  int rc = plan_infer(p, is, it, is + p->nin, it + p->nin);
  free(is);
  free(it);
  MXW_TRY(rc);
  for (int i = 0; i < p->nn; i++) {
    if (!p->nodes[i]->op) continue;
    for (int e = p->entry_base[i]; e < p->entry_base[i + 1]; e++) {
      if (!mxw_shape_known(&p->shapes[e]) || p->types[e] < 0)
        return mxw_fail("node '%s' (%s): output %d's shape or dtype could not be inferred", p->nodes[i]->name,
                        p->nodes[i]->op->name, e - p->entry_base[i]);
      size_t bytes = (size_t)mxw_shape_size(&p->shapes[e]) * (size_t)mxw_dtype_size(p->types[e]);
      if (p->noalloc[e]) continue;
      if (bytes > p->cap[e]) {
        void *q = realloc(p->buf[e], bytes);
        if (!q) return mxw_fail_oom("a control-flow subgraph's buffer", (double)bytes);
        p->buf[e] = q;
        p->cap[e] = bytes;
      }
    }
  }
  p->step_units = step_units(p, p->nn, p->off);
  for (int k = 0; k < p->nin; k++) {
    p->bound_shapes[k] = in[k].shape;
    p->bound_types[k] = in[k].dtype;
  }
  p->bound = 1;
  return 0;
}

/* Runs nodes [from, to) of a bound plan on the values p->data points at. */
static int plan_exec(sg_plan *p, int from, int to, int is_train) {
  for (int i = from; i < to; i++) {
    mxw_node *n = p->nodes[i];
    if (!n->op) continue;
    int nin = n->num_inputs, nout = p->entry_base[i + 1] - p->entry_base[i];
    for (int k = 0; k < nin; k++) {
      int e = p->in_entries[p->in_base[i] + k];
      p->tin[k] = (mxw_tensor){p->data[e], p->types[e], p->shapes[e]};
    }
    for (int k = 0; k < nout; k++) {
      int e = p->entry_base[i] + k;
      p->tout[k] = (mxw_tensor){p->data[e], p->types[e], p->shapes[e]};
    }
    mxw_op_call call = {n->op, n->params->param, nin, p->tin, nout, p->tout, is_train, 0};
    if (mxw_op_forward(&call) != 0) {
      mxw_error_prefix("node '%s' (%s): ", n->name, n->op->name);
      return -1;
    }
  }
  return 0;
}

/* One run: in (nin, list_inputs order) -> out (nh heads; their data written by copy). With a
 * tape (one step's, of `unit`-byte elements) the operators' values are written there instead of
 * into the plan's buffers, for the backward to read. */
static int plan_run(sg_plan *p, const mxw_tensor *in, const mxw_tensor *out, uint8_t *tape, int unit, int is_train) {
  MXW_TRY(plan_bind(p, in));
  for (int i = 0; i < p->nn; i++)
    for (int e = p->entry_base[i]; e < p->entry_base[i + 1]; e++)
      p->data[e] = tape && p->nodes[i]->op ? (void *)(tape + (size_t)p->off[e] * (size_t)unit) : p->buf[e];
  for (int k = 0; k < p->nin; k++) p->data[p->entry_base[p->input_node[k]]] = in[k].data;
  MXW_TRY(plan_exec(p, 0, p->nn, is_train));
  for (int h = 0; h < p->nh; h++) {
    int e = p->head_entry[h];
    if (out[h].data != p->data[e])
      memmove(out[h].data, p->data[e], (size_t)mxw_shape_size(&p->shapes[e]) * (size_t)mxw_dtype_size(p->types[e]));
  }
  return 0;
}

/* ---- the ops' state --------------------------------------------------------------------------- */
typedef struct cf_state {
  int refcount;
  int kind;
  int64_t num_args, num_outputs, num_out_data, max_iterations;
  int nloc[3];
  int64_t *loc[3];
  int nsub;
  mxw_symbol *sub[3];
  int sub_nin[3]; /* each subgraph's input count */
  sg_plan *plan[3];
  struct sg_grad *grad[3]; /* each subgraph's gradient plan, built by the backward ops */
} cf_state;

typedef struct cf_param {
  cf_state *st;
} cf_param;

static void grad_free(struct sg_grad *gr);
static void state_release(cf_state *st) {
  if (!st || --st->refcount > 0) return;
  for (int k = 0; k < 3; k++) {
    grad_free(st->grad[k]);
    free(st->loc[k]);
    plan_free(st->plan[k]);
    mxw_sym_free(st->sub[k]);
  }
  free(st);
}
static void cf_retain(void *param) {
  cf_state *st = ((cf_param *)param)->st;
  if (st) st->refcount++;
}
static void cf_release(void *param) { state_release(((cf_param *)param)->st); }

static int cf_kind(const mxw_op_def *op) {
  for (int k = 0; k < 3; k++)
    if (op && strcmp(op->name, k_cf_names[k]) == 0) return k;
  return -1;
}

/* A retained copy of a symbol's heads. */
static mxw_symbol *sym_dup(const mxw_symbol *s) {
  mxw_symbol *r = mxw_symbol_alloc(s->n);
  if (!r) {
    mxw_fail("out of memory");
    return NULL;
  }
  for (int i = 0; i < s->n; i++) {
    r->outputs[i] = s->outputs[i];
    mxw_node_retain(r->outputs[i].node);
  }
  return r;
}

void mxw_subgraph_release(mxw_node *n) {
  for (int k = 0; k < n->num_subgraphs; k++) mxw_sym_free(n->subgraphs[k]);
  free(n->subgraphs);
  n->subgraphs = NULL;
  n->num_subgraphs = 0;
}

int mxw_subgraph_copy(mxw_node *dst, const mxw_node *src) {
  mxw_subgraph_release(dst);
  if (!src->num_subgraphs) return 0;
  dst->subgraphs = (mxw_symbol **)calloc((size_t)src->num_subgraphs, sizeof(mxw_symbol *));
  MXW_CHECK(dst->subgraphs != NULL, "out of memory");
  for (int k = 0; k < src->num_subgraphs; k++) {
    if (!(dst->subgraphs[k] = sym_dup(src->subgraphs[k]))) return -1;
    dst->num_subgraphs++;
  }
  return 0;
}

/* An integer attribute (C++ stream rules: an optional sign and digits). */
static int attr_int(const mxw_node *n, const char *key, int64_t lo, int64_t *out) {
  const char *v = mxw_attrs_get(&n->attrs, key);
  MXW_CHECK(v != NULL, "required attribute '%s' is missing", key);
  char *end;
  long long x = strtoll(v, &end, 10);
  while (*end == ' ') end++;
  MXW_CHECK(end != v && *end == 0, "attribute '%s': '%s' is not an integer", key, v);
  MXW_CHECK(x >= lo && x <= INT32_MAX, "attribute '%s' is %lld, it must be at least %lld", key, x, (long long)lo);
  *out = x;
  return 0;
}

/* A locs tuple: "[0, 2]", "(0, 2)", "(1,)", "[]", "()". Any length (a loop body's captured
 * parameters can be many). */
static int attr_locs(const mxw_node *n, const char *key, int64_t **out, int *count) {
  const char *v = mxw_attrs_get(&n->attrs, key);
  MXW_CHECK(v != NULL, "required attribute '%s' is missing", key);
  size_t len = strlen(v);
  int64_t *a = (int64_t *)malloc(sizeof(int64_t) * (len / 2 + 1));
  MXW_CHECK(a != NULL, "out of memory");
  const char *c = v;
  while (*c == ' ') c++;
  char close = *c == '[' ? ']' : *c == '(' ? ')' : 0;
  int m = 0, ok = close != 0;
  if (ok) c++;
  while (ok) {
    while (*c == ' ') c++;
    if (*c == close) {
      c++;
      break;
    }
    char *end;
    long long x = strtoll(c, &end, 10);
    if (end == c || x < 0 || x > INT32_MAX) {
      ok = 0;
      break;
    }
    a[m++] = x;
    c = end;
    while (*c == ' ') c++;
    if (*c == ',')
      c++;
    else if (*c != close)
      ok = 0;
  }
  while (ok && *c == ' ') c++;
  if (!ok || *c) {
    free(a);
    return mxw_fail("attribute '%s': '%s' is not a tuple of non-negative integers", key, v);
  }
  *out = a;
  *count = m;
  return 0;
}

/* Every loc in [0, bound) (and, when distinct, no two equal). */
static int check_locs(const cf_state *st, int k, int64_t bound, int distinct, const char *what) {
  for (int i = 0; i < st->nloc[k]; i++) {
    MXW_CHECK(st->loc[k][i] < bound, "%s[%d] is %lld, it must be below %lld (%s)", k_locs[st->kind][k], i,
              (long long)st->loc[k][i], (long long)bound, what);
    for (int j = 0; distinct && j < i; j++)
      MXW_CHECK(st->loc[k][i] != st->loc[k][j], "%s names input %lld twice", k_locs[st->kind][k],
                (long long)st->loc[k][i]);
  }
  return 0;
}

static int count_inputs(const mxw_symbol *s, int *n) {
  mxw_node **nodes;
  int nn;
  MXW_TRY(mxw_graph_dfs(s->outputs, s->n, &nodes, &nn));
  *n = 0;
  for (int i = 0; i < nn; i++) *n += !nodes[i]->op;
  free(nodes);
  return 0;
}

static int build_state(const mxw_node *n, int kind, cf_state *st) {
  st->kind = kind;
  MXW_CHECK(n->num_subgraphs == k_cf_nsub[kind], "%s takes %d subgraph%s, the node has %d", k_cf_names[kind],
            k_cf_nsub[kind], k_cf_nsub[kind] > 1 ? "s" : "", n->num_subgraphs);
  MXW_TRY(attr_int(n, "num_args", k_cf_graph_args[kind], &st->num_args));
  MXW_TRY(attr_int(n, "num_outputs", 1, &st->num_outputs));
  if (kind != CF_COND) {
    MXW_TRY(attr_int(n, "num_out_data", 0, &st->num_out_data));
    MXW_CHECK(st->num_out_data <= st->num_outputs, "num_out_data (%lld) exceeds num_outputs (%lld)",
              (long long)st->num_out_data, (long long)st->num_outputs);
  }
  if (kind == CF_WHILE) MXW_TRY(attr_int(n, "max_iterations", 1, &st->max_iterations));
  for (int k = 0; k < 3; k++) MXW_TRY(attr_locs(n, k_locs[kind][k], &st->loc[k], &st->nloc[k]));
  for (int k = 0; k < n->num_subgraphs; k++) {
    MXW_CHECK(n->subgraphs[k]->n >= 1, "subgraph %d has no outputs", k);
    MXW_CHECK(st->sub[k] = sym_dup(n->subgraphs[k]), "out of memory");
    st->nsub++;
    MXW_TRY(count_inputs(st->sub[k], &st->sub_nin[k]));
  }
  int64_t nin = st->num_args - k_cf_graph_args[kind];
  if (kind == CF_FOREACH) {
    int total = st->nloc[0] + st->nloc[1] + st->nloc[2];
    MXW_CHECK(st->nloc[0] >= 1, "in_data_locs is empty: foreach needs a data input");
    MXW_CHECK(total == nin, "the locs name %d inputs, num_args - 1 is %lld", total, (long long)nin);
    MXW_CHECK(total == st->sub_nin[0], "the locs name %d inputs, the subgraph has %d", total, st->sub_nin[0]);
    MXW_CHECK(st->sub[0]->n == st->num_outputs, "num_outputs is %lld, the subgraph has %d outputs",
              (long long)st->num_outputs, st->sub[0]->n);
    MXW_CHECK(st->num_outputs - st->num_out_data == st->nloc[1],
              "%lld state outputs (num_outputs - num_out_data) for %d states (in_state_locs)",
              (long long)(st->num_outputs - st->num_out_data), st->nloc[1]);
    for (int k = 0; k < 3; k++) MXW_TRY(check_locs(st, k, st->sub_nin[0], 1, "the subgraph's inputs"));
    for (int a = 0; a < 3; a++) /* together a permutation of the subgraph's inputs */
      for (int b = a + 1; b < 3; b++)
        for (int i = 0; i < st->nloc[a]; i++)
          for (int j = 0; j < st->nloc[b]; j++)
            MXW_CHECK(st->loc[a][i] != st->loc[b][j], "%s and %s both name subgraph input %lld", k_locs[kind][a],
                      k_locs[kind][b], (long long)st->loc[a][i]);
  } else if (kind == CF_WHILE) {
    MXW_CHECK(st->sub[0]->n == 1, "the cond subgraph has %d outputs, it must have 1", st->sub[0]->n);
    MXW_CHECK(st->sub[1]->n == st->num_outputs, "num_outputs is %lld, the func subgraph has %d outputs",
              (long long)st->num_outputs, st->sub[1]->n);
    MXW_CHECK(st->nloc[0] == st->sub_nin[0], "cond_input_locs names %d inputs, the cond subgraph has %d", st->nloc[0],
              st->sub_nin[0]);
    MXW_CHECK(st->nloc[1] == st->sub_nin[1], "func_input_locs names %d inputs, the func subgraph has %d", st->nloc[1],
              st->sub_nin[1]);
    MXW_CHECK(st->nloc[2] == st->num_outputs - st->num_out_data,
              "func_var_locs names %d loop variables, num_outputs - num_out_data is %lld", st->nloc[2],
              (long long)(st->num_outputs - st->num_out_data));
    MXW_TRY(check_locs(st, 0, nin, 1, "the operator's inputs"));
    MXW_TRY(check_locs(st, 1, nin, 1, "the operator's inputs"));
    MXW_TRY(check_locs(st, 2, st->nloc[1], 1, "func's inputs"));
  } else {
    MXW_CHECK(st->sub[0]->n == 1, "the cond subgraph has %d outputs, it must have 1", st->sub[0]->n);
    for (int k = 1; k < 3; k++)
      MXW_CHECK(st->sub[k]->n == st->num_outputs, "num_outputs is %lld, the %s subgraph has %d outputs",
                (long long)st->num_outputs, k == 1 ? "then" : "else", st->sub[k]->n);
    for (int k = 0; k < 3; k++) {
      MXW_CHECK(st->nloc[k] == st->sub_nin[k], "%s names %d inputs, its subgraph has %d", k_locs[kind][k], st->nloc[k],
                st->sub_nin[k]);
      MXW_TRY(check_locs(st, k, nin, 1, "the operator's inputs"));
    }
  }
  return 0;
}

int mxw_subgraph_attach(mxw_node *n) {
  int kind = cf_kind(n->op);
  if (kind < 0) {
    MXW_CHECK(n->num_subgraphs == 0, "node '%s': operator %s takes no subgraphs", n->name,
              n->op ? n->op->name : "null");
    return 0;
  }
  cf_state *st = (cf_state *)calloc(1, sizeof *st);
  MXW_CHECK(st != NULL, "out of memory");
  st->refcount = 1;
  if (build_state(n, kind, st) != 0) {
    state_release(st);
    mxw_error_prefix("node '%s' (%s): ", n->name, k_cf_names[kind]);
    return -1;
  }
  cf_param *p = (cf_param *)n->params->param;
  state_release(p->st);
  p->st = st;
  return 0;
}

/* ---- the ops --------------------------------------------------------------------------------- */
static int cf_num_inputs(const void *param) {
  const cf_state *st = ((const cf_param *)param)->st;
  return st ? (int)st->num_args - k_cf_graph_args[st->kind] : 0;
}
/* num_outputs visible outputs, then the tape (see "gradients" below) */
static int cf_num_outputs(const void *param) {
  const cf_state *st = ((const cf_param *)param)->st;
  return st ? (int)st->num_outputs + 1 : 1;
}
static int cf_num_visible_outputs(const void *param) {
  const cf_state *st = ((const cf_param *)param)->st;
  return st ? (int)st->num_outputs : 1;
}
static int cf_tape_output(const void *param) {
  const cf_state *st = ((const cf_param *)param)->st;
  return st ? (int)st->num_outputs : -1;
}
static int no_state(const char *op) {
  return mxw_fail("%s runs only in a graph whose node carries its subgraphs (use mx.nd.contrib / mx.sym.contrib)", op);
}
static sg_plan *get_plan(cf_state *st, int k) {
  if (!st->plan[k]) st->plan[k] = plan_new(st->sub[k]);
  return st->plan[k];
}

/* The first dimension dropped (a 1-d array's slice is (1,), as MXNet's SliceFirstDim). */
static mxw_shape slice_first(const mxw_shape *s) {
  mxw_shape r;
  if (s->ndim < 0) {
    r.ndim = -1;
    return r;
  }
  if (s->ndim <= 1) {
    r.ndim = 1;
    r.dims[0] = 1;
    return r;
  }
  r.ndim = s->ndim - 1;
  for (int i = 1; i < s->ndim; i++) r.dims[i - 1] = s->dims[i];
  return r;
}
static mxw_shape stack_shape(int64_t len, const mxw_shape *s) {
  mxw_shape r;
  r.ndim = s->ndim + 1;
  r.dims[0] = len;
  for (int i = 0; i < s->ndim; i++) r.dims[i + 1] = s->dims[i];
  return r;
}

/* Shapes and dtypes together: each op's infer_shape / infer_type runs the subgraph inference
 * (with unknown dtypes / shapes respectively left for the other pass). */
typedef struct io_info {
  mxw_shape *s;
  int *t;
} io_info;

static int alloc_io(int n, io_info *io) {
  io->s = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)(n ? n : 1));
  io->t = (int *)malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (!io->s || !io->t) {
    free(io->s);
    free(io->t);
    return mxw_fail("out of memory");
  }
  for (int i = 0; i < n; i++) {
    io->s[i].ndim = -1;
    io->t[i] = -1;
  }
  return 0;
}
static void free_io(io_info *io) {
  free(io->s);
  free(io->t);
}

/* Unifies a (possibly partial) shape into *dst; 0 or -1. */
static int merge_shape(mxw_shape *dst, const mxw_shape *src, const char *what, int i) {
  if (src->ndim < 0) return 0;
  if (dst->ndim < 0) {
    *dst = *src;
    return 0;
  }
  char a[128], b[128];
  MXW_CHECK(dst->ndim == src->ndim, "%s %d has shape %s, the subgraph gives %s", what, i,
            mxw_shape_str(dst, a, sizeof a), mxw_shape_str(src, b, sizeof b));
  for (int d = 0; d < dst->ndim; d++) {
    if (dst->dims[d] < 0)
      dst->dims[d] = src->dims[d];
    else if (src->dims[d] >= 0 && src->dims[d] != dst->dims[d])
      return mxw_fail("%s %d has shape %s, the subgraph gives %s", what, i, mxw_shape_str(dst, a, sizeof a),
                      mxw_shape_str(src, b, sizeof b));
  }
  return 0;
}
static int merge_type(int *dst, int src, const char *what, int i) {
  if (src < 0) return 0;
  if (*dst < 0) *dst = src;
  MXW_CHECK(*dst == src, "%s %d has dtype %s, the subgraph gives %s", what, i, mxw_dtype_name(*dst),
            mxw_dtype_name(src));
  return 0;
}

/* The inference of all three ops, on shapes and dtypes at once (in: nin, out: nout). */
static int cf_infer(cf_state *st, int nin, mxw_shape *in_s, int *in_t, int nout, mxw_shape *out_s, int *out_t) {
  if (st->kind == CF_FOREACH) {
    sg_plan *p = get_plan(st, 0);
    if (!p) return -1;
    io_info si, so;
    MXW_TRY(alloc_io(p->nin, &si));
    if (alloc_io(p->nh, &so) != 0) {
      free_io(&si);
      return -1;
    }
    int nd = st->nloc[0], ns = st->nloc[1], rc = 0;
    int64_t len = in_s[0].ndim >= 1 ? in_s[0].dims[0] : -1;
    for (int i = 0; i < nin; i++) {
      int k = i < nd ? 0 : i < nd + ns ? 1 : 2, j = i - (k == 0 ? 0 : k == 1 ? nd : nd + ns);
      int loc = (int)st->loc[k][j];
      si.s[loc] = k == 0 ? slice_first(&in_s[i]) : in_s[i];
      si.t[loc] = in_t[i];
      if (k == 0 && in_s[i].ndim == 0) rc = mxw_fail("foreach data input %d is a scalar (shape ())", i);
    }
    for (int h = 0; h < nout; h++) {
      so.s[h] = h < st->num_out_data && out_s[h].ndim >= 0 ? slice_first(&out_s[h]) : out_s[h];
      if (h < st->num_out_data && out_s[h].ndim == 1) so.s[h].ndim = -1; /* (len,) outputs: slices () or (1,) */
      so.t[h] = out_t[h];
    }
    if (rc == 0) rc = plan_infer(p, si.s, si.t, so.s, so.t);
    for (int i = 0; i < nin && rc == 0; i++) {
      int k = i < nd ? 0 : i < nd + ns ? 1 : 2, j = i - (k == 0 ? 0 : k == 1 ? nd : nd + ns);
      int loc = (int)st->loc[k][j];
      if (k == 0) {
        if (si.s[loc].ndim >= 0 && len >= 0 && in_s[i].ndim < 0) {
          mxw_shape full = stack_shape(len, &si.s[loc]);
          rc = merge_shape(&in_s[i], &full, "input", i);
        }
        if (in_s[i].ndim >= 1 && len >= 0 && in_s[i].dims[0] != len && in_s[i].dims[0] >= 0)
          rc = mxw_fail("foreach data input %d has %lld rows, input 0 has %lld", i, (long long)in_s[i].dims[0],
                        (long long)len);
      } else if (rc == 0) {
        rc = merge_shape(&in_s[i], &si.s[loc], "input", i);
      }
      if (rc == 0) rc = merge_type(&in_t[i], si.t[loc], "input", i);
    }
    for (int h = 0; h < nout && rc == 0; h++) {
      if (h < st->num_out_data) {
        if (so.s[h].ndim >= 0 && len >= 0) {
          mxw_shape full = stack_shape(len, &so.s[h]);
          rc = merge_shape(&out_s[h], &full, "output", h);
        }
      } else {
        rc = merge_shape(&out_s[h], &so.s[h], "output", h);
        /* a state keeps its shape and dtype from one iteration to the next */
        int i = nd + (h - (int)st->num_out_data);
        if (rc == 0) rc = merge_shape(&out_s[h], &in_s[i], "state output", h);
        if (rc == 0) rc = merge_shape(&in_s[i], &out_s[h], "state input", i);
        if (rc == 0) rc = merge_type(&out_t[h], in_t[i], "state output", h);
        if (rc == 0) rc = merge_type(&in_t[i], out_t[h], "state input", i);
      }
      if (rc == 0) rc = merge_type(&out_t[h], so.t[h], "output", h);
    }
    free_io(&si);
    free_io(&so);
    return rc;
  }
  /* while_loop and cond: each subgraph's inputs are picked from the op's inputs by its locs */
  int rc = 0;
  for (int g = 0; g < st->nsub && rc == 0; g++) {
    sg_plan *p = get_plan(st, g);
    if (!p) return -1;
    const int64_t *loc = st->loc[g];
    io_info si, so;
    MXW_TRY(alloc_io(p->nin, &si));
    if (alloc_io(p->nh, &so) != 0) {
      free_io(&si);
      return -1;
    }
    for (int k = 0; k < p->nin; k++) {
      si.s[k] = in_s[loc[k]];
      si.t[k] = in_t[loc[k]];
    }
    if (g > 0) {
      for (int h = 0; h < p->nh; h++) {
        if (st->kind == CF_WHILE && h < st->num_out_data) {
          so.s[h] = out_s[h].ndim >= 1 ? slice_first(&out_s[h]) : out_s[h];
          if (out_s[h].ndim == 1) so.s[h].ndim = -1;
        } else {
          so.s[h] = out_s[h];
        }
        so.t[h] = out_t[h];
      }
    }
    if (st->kind == CF_WHILE && g == 1) /* a loop variable keeps its shape and dtype */
      for (int v = 0; v < st->nloc[2]; v++) {
        int h = (int)st->num_out_data + v, i = (int)st->loc[1][st->loc[2][v]];
        if ((rc = merge_shape(&so.s[h], &in_s[i], "loop variable", v)) != 0) break;
        if ((rc = merge_type(&so.t[h], in_t[i], "loop variable", v)) != 0) break;
      }
    if (rc == 0) rc = plan_infer(p, si.s, si.t, so.s, so.t);
    for (int k = 0; k < p->nin && rc == 0; k++) {
      rc = merge_shape(&in_s[loc[k]], &si.s[k], "input", (int)loc[k]);
      if (rc == 0) rc = merge_type(&in_t[loc[k]], si.t[k], "input", (int)loc[k]);
    }
    if (rc == 0 && g == 0 && so.s[0].ndim >= 0 && mxw_shape_known(&so.s[0]) && mxw_shape_size(&so.s[0]) != 1) {
      char a[128];
      rc = mxw_fail("the condition must have one element, its subgraph gives shape %s",
                    mxw_shape_str(&so.s[0], a, sizeof a));
    }
    for (int h = 0; g > 0 && h < p->nh && rc == 0; h++) {
      if (st->kind == CF_WHILE && h < st->num_out_data) {
        if (so.s[h].ndim >= 0) {
          mxw_shape full = stack_shape(st->max_iterations, &so.s[h]);
          rc = merge_shape(&out_s[h], &full, "output", h);
        }
      } else {
        rc = merge_shape(&out_s[h], &so.s[h], "output", h);
      }
      if (rc == 0) rc = merge_type(&out_t[h], so.t[h], "output", h);
    }
    free_io(&si);
    free_io(&so);
  }
  return rc;
}

static int all_known(int n, const mxw_shape *s, const int *t, int shapes) {
  for (int i = 0; i < n; i++)
    if (shapes ? !mxw_shape_known(&s[i]) : t[i] < 0) return 0;
  return 1;
}

/* The tape's layout: `slots` steps of step_units each, after slots + 1 copies of the loop states
 * (state_units each, each state at a multiple of 16 units) and the head. */
static int cf_nstates(const cf_state *st) {
  return st->kind == CF_FOREACH ? st->nloc[1] : st->kind == CF_WHILE ? st->nloc[2] : 0;
}
static int cf_state_input(const cf_state *st, int j) { /* the op input holding loop state j's initial value */
  return st->kind == CF_FOREACH ? st->nloc[0] + j : (int)st->loc[1][st->loc[2][j]];
}
static int64_t cf_slots(const cf_state *st, const mxw_shape *in) {
  if (st->kind == CF_WHILE) return st->max_iterations;
  if (st->kind == CF_COND) return 1;
  return in && in[0].ndim >= 1 ? in[0].dims[0] : -1;
}
static int64_t cf_state_units(const cf_state *st, const mxw_shape *in, int upto) {
  int64_t u = 0;
  for (int j = 0; j < upto; j++) {
    const mxw_shape *s = &in[cf_state_input(st, j)];
    if (!mxw_shape_known(s)) return -1;
    u += TAPE_ROUND(mxw_shape_size(s));
  }
  return u;
}
/* The subgraphs whose steps the tape keeps: foreach's body, while_loop's func, cond's branches. */
static int cf_first_taped(const cf_state *st) { return st->kind == CF_FOREACH ? 0 : 1; }
/* The tape's size in units from the plans' last inference (-1: unknown yet). */
static int64_t cf_tape_units(cf_state *st, const mxw_shape *in) {
  int64_t slots = cf_slots(st, in), su = cf_state_units(st, in, cf_nstates(st)), stepu = 0;
  if (slots < 0 || su < 0) return -1;
  for (int g = cf_first_taped(st); g < st->nsub; g++) {
    int64_t u = st->plan[g] ? step_units(st->plan[g], st->plan[g]->nn, NULL) : -1;
    if (u < 0) return -1;
    if (u > stepu) stepu = u;
  }
  return TAPE_HEAD + (st->kind == CF_COND ? 0 : (slots + 1) * su) + slots * stepu;
}

static int cf_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  cf_state *st = ((const cf_param *)param)->st;
  if (!st) return no_state("a control-flow operator");
  MXW_CHECK(nout == st->num_outputs + 1, "%d outputs, the operator has %lld and its tape", nout,
            (long long)st->num_outputs);
  io_info t;
  MXW_TRY(alloc_io(nin + nout, &t));
  int rc = cf_infer(st, nin, in, t.t, --nout, out, t.t + nin);
  free_io(&t);
  MXW_TRY(rc);
  int64_t units = cf_tape_units(st, in);
  if (units >= 0) out[nout] = (mxw_shape){1, {units}};
  /* unknown outputs are an error only once every input is known */
  MXW_CHECK(all_known(nout, out, NULL, 1) || !all_known(nin, in, NULL, 1),
            "%s: the output shapes could not be inferred from the subgraphs", k_cf_names[st->kind]);
  return 0;
}
static int cf_infer_type(const void *param, int nin, int *in, int nout, int *out) {
  cf_state *st = ((const cf_param *)param)->st;
  if (!st) return no_state("a control-flow operator");
  MXW_CHECK(nout == st->num_outputs + 1, "%d outputs, the operator has %lld and its tape", nout,
            (long long)st->num_outputs);
  io_info s;
  MXW_TRY(alloc_io(nin + nout, &s));
  int rc = cf_infer(st, nin, s.s, in, --nout, s.s + nin, out);
  free_io(&s);
  MXW_TRY(rc);
  int w = 1; /* the tape's unit: the widest dtype it keeps */
  for (int j = 0; j < cf_nstates(st) && w > 0; j++) {
    int t = in[cf_state_input(st, j)];
    w = t < 0 ? -1 : mxw_dtype_size(t) > w ? mxw_dtype_size(t) : w;
  }
  for (int g = cf_first_taped(st); g < st->nsub && w > 0; g++) w = st->plan[g] ? widest_dtype(st->plan[g], w) : -1;
  if (w > 0) out[nout] = w == 1 ? MXW_UINT8 : w == 2 ? MXW_FLOAT16 : w == 4 ? MXW_FLOAT32 : MXW_FLOAT64;
  MXW_CHECK(w <= 8, "a subgraph dtype of %d bytes", w);
  MXW_CHECK(all_known(nout, NULL, out, 0) || !all_known(nin, NULL, in, 0),
            "%s: the output dtypes could not be inferred from the subgraphs", k_cf_names[st->kind]);
  return 0;
}

static size_t tensor_bytes(const mxw_tensor *t) {
  return (size_t)mxw_tensor_size(t) * (size_t)mxw_dtype_size(t->dtype);
}
/* Row i of a tensor stacked along axis 0 (a 1-d tensor's row is (1,)). */
static mxw_tensor row_of(const mxw_tensor *t, int64_t i) {
  mxw_tensor r = *t;
  r.shape = slice_first(&t->shape);
  r.data = (char *)t->data + (size_t)i * tensor_bytes(&r);
  return r;
}

/* Double-buffered loop states: cur holds the values going in, next receives the new ones. */
typedef struct loop_bufs {
  int n;
  mxw_tensor *cur, *next;
  void **mem;
} loop_bufs;
static int bufs_init(loop_bufs *b, int n, const mxw_tensor *init) {
  b->n = n;
  b->cur = (mxw_tensor *)calloc((size_t)(n ? n : 1) * 2, sizeof(mxw_tensor));
  b->mem = (void **)calloc((size_t)(n ? n : 1) * 2, sizeof(void *));
  if (!b->cur || !b->mem) return mxw_fail("out of memory");
  b->next = b->cur + n;
  for (int i = 0; i < n; i++) {
    size_t bytes = tensor_bytes(&init[i]);
    b->mem[2 * i] = malloc(bytes ? bytes : 1);
    b->mem[2 * i + 1] = malloc(bytes ? bytes : 1);
    if (!b->mem[2 * i] || !b->mem[2 * i + 1]) return mxw_fail_oom("a loop state", (double)bytes);
    memcpy(b->mem[2 * i], init[i].data, bytes);
    b->cur[i] = init[i];
    b->cur[i].data = b->mem[2 * i];
    b->next[i] = init[i];
    b->next[i].data = b->mem[2 * i + 1];
  }
  return 0;
}
static void bufs_swap(loop_bufs *b) {
  for (int i = 0; i < b->n; i++) {
    void *d = b->cur[i].data;
    b->cur[i].data = b->next[i].data;
    b->next[i].data = d;
  }
}
static void bufs_free(loop_bufs *b) {
  for (int i = 0; b->mem && i < 2 * b->n; i++) free(b->mem[i]);
  free(b->mem);
  free(b->cur);
}

/* A tape being written (forward) or read (backward): the op's tape array, its unit, and the
 * layout of its parts (see cf_tape_units). */
typedef struct tape_view {
  uint8_t *base;
  int unit;
  int64_t slots, state_units, step_units;
} tape_view;
/* The view of tape t for inputs x (the op's), with step_units of the bound plan. */
static int tape_open(cf_state *st, const mxw_tensor *t, const mxw_tensor *x, int64_t step_u, tape_view *v) {
  v->base = (uint8_t *)t->data;
  v->unit = mxw_dtype_size(t->dtype);
  v->slots = st->kind == CF_FOREACH ? cf_slots(st, &x[0].shape) : cf_slots(st, NULL);
  v->state_units = 0;
  for (int j = 0; j < cf_nstates(st); j++) v->state_units += TAPE_ROUND(mxw_tensor_size(&x[cf_state_input(st, j)]));
  v->step_units = step_u;
  int64_t need = TAPE_HEAD + (st->kind == CF_COND ? 0 : (v->slots + 1) * v->state_units) + v->slots * step_u;
  MXW_CHECK(t->shape.ndim == 1 && t->shape.dims[0] >= need,
            "internal error: %s's tape has %lld units, its steps need %lld", k_cf_names[st->kind],
            (long long)mxw_tensor_size(t), (long long)need);
  return 0;
}
/* Loop state j's copy at step i (laid out like op input cf_state_input(j) of x). */
static mxw_tensor tape_state(const tape_view *v, const cf_state *st, const mxw_tensor *x, int64_t i, int j) {
  int64_t u = TAPE_HEAD + i * v->state_units;
  for (int k = 0; k < j; k++) u += TAPE_ROUND(mxw_tensor_size(&x[cf_state_input(st, k)]));
  mxw_tensor r = x[cf_state_input(st, j)];
  r.data = v->base + (size_t)u * (size_t)v->unit;
  return r;
}
/* Step i's values. */
static uint8_t *tape_step(const tape_view *v, const cf_state *st, int64_t i) {
  int64_t u = TAPE_HEAD + (st->kind == CF_COND ? 0 : (v->slots + 1) * v->state_units) + i * v->step_units;
  return v->base + (size_t)u * (size_t)v->unit;
}
static void tape_close(const tape_view *v, int64_t steps) {
  int64_t head[2] = {TAPE_MAGIC, steps};
  memcpy(v->base, head, sizeof head);
}
/* The steps (or branch) a tape's forward recorded; an error when the forward kept none. */
static int tape_steps(const tape_view *v, const cf_state *st, int64_t *steps) {
  int64_t head[2];
  memcpy(head, v->base, sizeof head);
  MXW_CHECK(head[0] == TAPE_MAGIC && head[1] >= 0 && head[1] <= v->slots + (st->kind == CF_COND),
            "%s's backward found no record of its forward's steps (the forward ran without keeping them)",
            k_cf_names[st->kind]);
  *steps = head[1];
  return 0;
}

static int foreach_forward_tape(const mxw_op_call *c, cf_state *st, sg_plan *p);
static int foreach_forward(const mxw_op_call *c) {
  cf_state *st = ((const cf_param *)c->param)->st;
  if (!st) return no_state("_foreach");
  sg_plan *p = get_plan(st, 0);
  if (!p) return -1;
  if (c->outputs[st->num_outputs].data) return foreach_forward_tape(c, st, p);
  int nd = st->nloc[0], ns = st->nloc[1], nod = (int)st->num_out_data;
  int64_t len = c->inputs[0].shape.dims[0];
  mxw_tensor *sin = (mxw_tensor *)calloc((size_t)p->nin + (size_t)p->nh + 1, sizeof(mxw_tensor));
  if (!sin) return mxw_fail("out of memory");
  mxw_tensor *sout = sin + p->nin;
  loop_bufs b = {0, NULL, NULL, NULL};
  int rc = bufs_init(&b, ns, c->inputs + nd);
  for (int j = 0; j < st->nloc[2]; j++) sin[st->loc[2][j]] = c->inputs[nd + ns + j];
  for (int64_t i = 0; i < len && rc == 0; i++) {
    for (int j = 0; j < nd; j++) sin[st->loc[0][j]] = row_of(&c->inputs[j], i);
    for (int j = 0; j < ns; j++) sin[st->loc[1][j]] = b.cur[j];
    for (int h = 0; h < nod; h++) sout[h] = row_of(&c->outputs[h], i);
    for (int j = 0; j < ns; j++) sout[nod + j] = b.next[j];
    rc = plan_run(p, sin, sout, NULL, 0, c->is_train);
    bufs_swap(&b);
  }
  for (int j = 0; j < ns && rc == 0; j++) memcpy(c->outputs[nod + j].data, b.cur[j].data, tensor_bytes(&b.cur[j]));
  bufs_free(&b);
  free(sin);
  return rc;
}

/* The forward of a graph that will be differentiated: each step's states and values on the tape. */
static int foreach_forward_tape(const mxw_op_call *c, cf_state *st, sg_plan *p) {
  int nd = st->nloc[0], ns = st->nloc[1], nod = (int)st->num_out_data;
  const mxw_tensor *x = c->inputs;
  int64_t len = x[0].shape.dims[0];
  mxw_tensor *sin = (mxw_tensor *)calloc((size_t)p->nin + (size_t)p->nh + 1, sizeof(mxw_tensor));
  if (!sin) return mxw_fail("out of memory");
  mxw_tensor *sout = sin + p->nin;
  tape_view v;
  int rc = 0;
  for (int j = 0; j < nd; j++) sin[st->loc[0][j]] = row_of(&x[j], 0);
  for (int j = 0; j < ns; j++) sin[st->loc[1][j]] = x[nd + j];
  for (int j = 0; j < st->nloc[2]; j++) sin[st->loc[2][j]] = x[nd + ns + j];
  if (len > 0) rc = plan_bind(p, sin);
  if (rc == 0) rc = tape_open(st, &c->outputs[st->num_outputs], x, p->step_units, &v);
  for (int j = 0; j < ns && rc == 0; j++) {
    mxw_tensor s0 = tape_state(&v, st, x, 0, j);
    memcpy(s0.data, x[nd + j].data, tensor_bytes(&s0));
  }
  for (int64_t i = 0; i < len && rc == 0; i++) {
    for (int j = 0; j < nd; j++) sin[st->loc[0][j]] = row_of(&x[j], i);
    for (int j = 0; j < ns; j++) sin[st->loc[1][j]] = tape_state(&v, st, x, i, j);
    for (int h = 0; h < nod; h++) sout[h] = row_of(&c->outputs[h], i);
    for (int j = 0; j < ns; j++) sout[nod + j] = tape_state(&v, st, x, i + 1, j);
    rc = plan_run(p, sin, sout, tape_step(&v, st, i), v.unit, c->is_train);
  }
  for (int j = 0; j < ns && rc == 0; j++) {
    mxw_tensor last = tape_state(&v, st, x, len, j);
    memcpy(c->outputs[nod + j].data, last.data, tensor_bytes(&last));
  }
  if (rc == 0) tape_close(&v, len);
  free(sin);
  return rc;
}

static int cond_value(const mxw_tensor *t, int *out) {
  char a[128];
  MXW_CHECK(mxw_tensor_size(t) == 1, "the condition must have one element, it has shape %s",
            mxw_shape_str(&t->shape, a, sizeof a));
  *out = mxw_load_f64(t->data, t->dtype, 0) != 0;
  return 0;
}

/* Runs a condition subgraph (one output of one element) on cin: *go is that element != 0. */
static int cond_eval(sg_plan *pc, const mxw_tensor *cin, int is_train, int *go) {
  MXW_TRY(plan_bind(pc, cin));
  int e = pc->head_entry[0];
  mxw_tensor cout = {NULL, pc->types[e], pc->shapes[e]};
  char a[128];
  MXW_CHECK(mxw_tensor_size(&cout) == 1, "the condition must have one element, it has shape %s",
            mxw_shape_str(&cout.shape, a, sizeof a));
  for (int k = 0; k < pc->ne; k++) pc->data[k] = pc->buf[k];
  for (int k = 0; k < pc->nin; k++) pc->data[pc->entry_base[pc->input_node[k]]] = cin[k].data;
  MXW_TRY(plan_exec(pc, 0, pc->nn, is_train));
  cout.data = pc->data[e]; /* read in place */
  return cond_value(&cout, go);
}

static int while_forward(const mxw_op_call *c) {
  cf_state *st = ((const cf_param *)c->param)->st;
  if (!st) return no_state("_while_loop");
  sg_plan *pc = get_plan(st, 0), *pf = get_plan(st, 1);
  if (!pc || !pf) return -1;
  MXW_CHECK(pc->nh == 1, "_while_loop: the condition subgraph has %d outputs, not 1", pc->nh);
  int nv = st->nloc[2], nod = (int)st->num_out_data;
  int ncin = st->nloc[0], nfin = st->nloc[1];
  mxw_tensor *cin =
      (mxw_tensor *)calloc((size_t)ncin + (size_t)nfin + (size_t)nv + (size_t)st->num_outputs + 1, sizeof(mxw_tensor));
  if (!cin) return mxw_fail("out of memory");
  mxw_tensor *fin = cin + ncin, *init = fin + nfin, *fout = init + nv;
  for (int k = 0; k < ncin; k++) cin[k] = c->inputs[st->loc[0][k]];
  for (int k = 0; k < nfin; k++) fin[k] = c->inputs[st->loc[1][k]];
  for (int v = 0; v < nv; v++) init[v] = fin[st->loc[2][v]];
  /* with a tape (a graph that will be differentiated): the variables of every step and each
   * step's values kept there; else double-buffered */
  const mxw_tensor *tape = &c->outputs[st->num_outputs];
  tape_view tv = {NULL, 0, 0, 0, 0};
  loop_bufs b = {0, NULL, NULL, NULL};
  int rc = tape->data ? plan_bind(pf, fin) : bufs_init(&b, nv, init);
  if (rc == 0 && tape->data) rc = tape_open(st, tape, c->inputs, pf->step_units, &tv);
  for (int v = 0; v < nv && rc == 0 && tape->data; v++) {
    mxw_tensor s0 = tape_state(&tv, st, c->inputs, 0, v);
    memcpy(s0.data, init[v].data, tensor_bytes(&s0));
  }
  int64_t step = 0;
  while (rc == 0 && step < st->max_iterations) {
    /* the loop variables, wherever cond and func read them */
    for (int v = 0; v < nv; v++) {
      int64_t pos = st->loc[1][st->loc[2][v]];
      fin[st->loc[2][v]] = tape->data ? tape_state(&tv, st, c->inputs, step, v) : b.cur[v];
      for (int k = 0; k < ncin; k++)
        if (st->loc[0][k] == pos) cin[k] = fin[st->loc[2][v]];
    }
    int go = 0;
    if ((rc = cond_eval(pc, cin, c->is_train, &go)) != 0 || !go) break;
    for (int h = 0; h < nod; h++) fout[h] = row_of(&c->outputs[h], step);
    for (int v = 0; v < nv; v++) fout[nod + v] = tape->data ? tape_state(&tv, st, c->inputs, step + 1, v) : b.next[v];
    if ((rc = plan_run(pf, fin, fout, tape->data ? tape_step(&tv, st, step) : NULL, tv.unit, c->is_train)) != 0) break;
    if (!tape->data) bufs_swap(&b);
    step++;
  }
  if (rc == 0) {
    /* rows past the last step: zeros (MXNet leaves them as allocated, and its imperative
     * while_loop pads with an uninitialised array) */
    for (int h = 0; h < nod; h++) {
      mxw_tensor r = row_of(&c->outputs[h], 0);
      size_t row = tensor_bytes(&r);
      memset((char *)c->outputs[h].data + (size_t)step * row, 0, (size_t)(st->max_iterations - step) * row);
    }
    for (int v = 0; v < nv; v++) {
      const mxw_tensor last = tape->data ? tape_state(&tv, st, c->inputs, step, v) : b.cur[v];
      memcpy(c->outputs[nod + v].data, last.data, tensor_bytes(&last));
    }
    if (tape->data) tape_close(&tv, step);
  }
  bufs_free(&b);
  free(cin);
  return rc;
}

static int cond_forward(const mxw_op_call *c) {
  cf_state *st = ((const cf_param *)c->param)->st;
  if (!st) return no_state("_cond");
  sg_plan *pc = get_plan(st, 0);
  if (!pc) return -1;
  MXW_CHECK(pc->nh == 1, "_cond: the condition subgraph has %d outputs, not 1", pc->nh);
  int nmax = st->nloc[0] > st->nloc[1] ? st->nloc[0] : st->nloc[1];
  if (st->nloc[2] > nmax) nmax = st->nloc[2];
  mxw_tensor *in = (mxw_tensor *)calloc((size_t)nmax + 1, sizeof(mxw_tensor));
  if (!in) return mxw_fail("out of memory");
  for (int k = 0; k < st->nloc[0]; k++) in[k] = c->inputs[st->loc[0][k]];
  int go = 0, rc = cond_eval(pc, in, c->is_train, &go);
  if (rc == 0) {
    int g = go ? 1 : 2;
    sg_plan *p = get_plan(st, g);
    if (!p) rc = -1;
    for (int k = 0; rc == 0 && k < st->nloc[g]; k++) in[k] = c->inputs[st->loc[g][k]];
    /* with a tape: the branch taken and its values */
    const mxw_tensor *tape = &c->outputs[st->num_outputs];
    tape_view tv = {NULL, 0, 0, 0, 0};
    if (rc == 0 && tape->data && (rc = plan_bind(p, in)) == 0) rc = tape_open(st, tape, c->inputs, p->step_units, &tv);
    if (rc == 0) rc = plan_run(p, in, c->outputs, tape->data ? tape_step(&tv, st, 0) : NULL, tv.unit, c->is_train);
    if (rc == 0 && tape->data) tape_close(&tv, g);
  }
  free(in);
  return rc;
}

/* ---- gradients (MXNet's ForeachGradient, WhileLoopGradient, CondGradient) ----------------------
 * Each op's FGradient is one _backward_<op> node taking the outputs' gradients, the op's inputs
 * and the op's tape, and giving every input's gradient. Its kernel differentiates a subgraph with
 * the gradient pass the rest of the graph uses (mxw_gradient_build from the subgraph's heads to
 * all of its inputs, so each body op's own FGradient), planned once per input signature: a plan
 * of [heads, input gradients] whose first `split` nodes are the subgraph's own.
 *
 * What the backward reads is what the forward kept (MXNet's stateful ops keep each iteration's
 * values from the forward call in their OpStatePtr): the forward never runs again, so a body
 * drawing random numbers (Dropout, _random_*) gets the gradient of the numbers it drew, and an op
 * updating its state inputs (BatchNorm's running statistics) updates them once. Where the values
 * live -- the design, chosen over the alternatives this executor offers:
 *   - the tape is a hidden last output of the op (as Dropout's mask is Dropout's), of the shape
 *     and dtype inference gives it: the loop states at every step, then every step's forward
 *     operator values (one step's layout is the subgraph plan's, sg_plan.off), then a head with
 *     the steps taken (while_loop) or the branch (cond); see cf_tape_units;
 *   - the _backward_ node reads it as an input, so the executor's liveness keeps it from the
 *     forward to the backward: in a hybridized training graph it lives in the recorded call's
 *     arena, which the call owns until its backward without retain_graph returns it to the plan's
 *     pool (cached_op.c) -- two calls before one backward keep two tapes, a retained graph's
 *     second backward reads the same one, a third without retain_graph fails as for any graph,
 *     and 200 training steps reuse the pooled arenas (memory flat);
 *   - mxw_op_def.tape_output names it: an executor gives it no buffer when no node reads it (an
 *     inference graph, a training graph whose loop needs no gradient), and the forward keeps
 *     nothing when its data is NULL, so inference runs as before, in the same memory;
 *   - a nested control-flow node's tape is one of its body's forward values: it sits inside the
 *     outer tape's step, and the outer backward's per-step plan hands it to the inner backward.
 * The per-call state (OpStatePtr) of MXNet would need the executor to pair a backward node with
 * its forward node's state per arena; a hidden output is that pairing, through an edge the
 * executor and its memory planner already handle. The tape's size depends on shapes only (16
 * "units" per value, the unit the widest dtype among the kept values), since shape inference runs
 * without dtypes; while_loop's is sized for max_iterations steps, as its outputs are. */
typedef struct sg_grad {
  mxw_symbol *sym; /* [heads..., input gradients...] */
  sg_plan *p;
  int split;       /* nodes [0, split) are the subgraph's forward */
  int nin, nh;     /* the subgraph's inputs and heads */
  int *ograd_pos;  /* per head: its gradient variable's position among p's inputs, -1 if unused */
  mxw_tensor *tin; /* p->nin: the plan's inputs (shapes and dtypes bound; data set per run) */
  mxw_shape *sig_s;
  int *sig_t;
} sg_grad;

static void grad_free(sg_grad *gr) {
  if (!gr) return;
  plan_free(gr->p);
  mxw_sym_free(gr->sym);
  free(gr->ograd_pos);
  free(gr->tin);
  free(gr->sig_s);
  free(gr->sig_t);
  free(gr);
}

/* A forward entry of the subgraph: itself, with the shape and dtype the forward plan inferred. */
static int grad_value(void *ud, mxw_node *n, int index, mxw_entry *entry, mxw_shape *shape, int *dtype) {
  const sg_plan *fp = (const sg_plan *)ud;
  int i = n->index;
  if (i < 0 || i >= fp->nn || fp->nodes[i] != n)
    for (i = 0; i < fp->nn && fp->nodes[i] != n; i++) {
    }
  MXW_CHECK(i < fp->nn, "internal error: node '%s' is not in the subgraph", n->name);
  int e = fp->entry_base[i] + index;
  if (entry) *entry = (mxw_entry){n, (uint32_t)index, 0};
  *shape = fp->shapes[e];
  *dtype = fp->types[e];
  return 0;
}

static sg_grad *grad_build(sg_plan *fp, const mxw_symbol *sub, const mxw_tensor *in) {
  int nin = fp->nin, nh = fp->nh, ok = 0;
  sg_grad *gr = (sg_grad *)calloc(1, sizeof *gr);
  mxw_node **ov = (mxw_node **)calloc((size_t)nh, sizeof(mxw_node *));
  mxw_entry *hg = (mxw_entry *)calloc((size_t)nh, sizeof(mxw_entry));
  mxw_node **xs = (mxw_node **)calloc((size_t)(nin ? nin : 1), sizeof(mxw_node *));
  mxw_entry *xg = (mxw_entry *)calloc((size_t)(nin ? nin : 1), sizeof(mxw_entry));
  if (!gr || !ov || !hg || !xs || !xg) {
    mxw_fail("out of memory");
    goto done;
  }
  gr->nin = nin;
  gr->nh = nh;
  gr->sig_s = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)(nin ? nin : 1));
  gr->sig_t = (int *)malloc(sizeof(int) * (size_t)(nin ? nin : 1));
  gr->ograd_pos = (int *)malloc(sizeof(int) * (size_t)nh);
  if (!gr->sig_s || !gr->sig_t || !gr->ograd_pos) {
    mxw_fail("out of memory");
    goto done;
  }
  for (int j = 0; j < nin; j++) {
    gr->sig_s[j] = in[j].shape;
    gr->sig_t[j] = in[j].dtype;
    xs[j] = fp->nodes[fp->input_node[j]];
  }
  for (int h = 0; h < nh; h++) {
    char name[32];
    snprintf(name, sizeof name, "ograd%d", h);
    if (!(ov[h] = mxw_node_new(name))) goto done;
    hg[h] = (mxw_entry){ov[h], 0, 0};
    gr->ograd_pos[h] = -1;
  }
  if (mxw_gradient_build(sub->outputs, nh, hg, xs, nin, grad_value, fp, 0, xg) != 0) goto done;
  if (!(gr->sym = mxw_symbol_alloc(nh + nin))) goto done;
  for (int h = 0; h < nh; h++) {
    gr->sym->outputs[h] = sub->outputs[h];
    mxw_node_retain(sub->outputs[h].node);
  }
  for (int j = 0; j < nin; j++) {
    gr->sym->outputs[nh + j] = xg[j];
    xg[j].node = NULL;
  }
  if (!(gr->p = plan_new(gr->sym))) goto done;
  sg_plan *p = gr->p;
  /* the DFS from [heads, gradients] visits the subgraph first, in its own order */
  gr->split = fp->nn;
  int same = p->nn >= fp->nn && p->nin >= nin;
  for (int i = 0; i < fp->nn && same; i++) same = p->nodes[i] == fp->nodes[i];
  for (int j = 0; j < nin && same; j++) same = p->input_node[j] == fp->input_node[j];
  for (int j = nin; j < p->nin && same; j++) {
    mxw_node *v = p->nodes[p->input_node[j]];
    int found = 0;
    for (int h = 0; h < nh; h++)
      if (v == ov[h]) {
        gr->ograd_pos[h] = j;
        found = 1;
      }
    same = found;
  }
  if (!same) {
    mxw_fail("internal error: the gradient graph does not start with the subgraph");
    goto done;
  }
  gr->tin = (mxw_tensor *)calloc((size_t)(p->nin ? p->nin : 1), sizeof(mxw_tensor));
  if (!gr->tin) {
    mxw_fail("out of memory");
    goto done;
  }
  for (int j = 0; j < nin; j++) gr->tin[j] = (mxw_tensor){NULL, in[j].dtype, in[j].shape};
  for (int h = 0; h < nh; h++)
    if (gr->ograd_pos[h] >= 0) {
      int e = fp->head_entry[h];
      gr->tin[gr->ograd_pos[h]] = (mxw_tensor){NULL, fp->types[e], fp->shapes[e]};
    }
  /* the forward operators' values are read from the tape: no buffers for them */
  for (int e = 0; e < p->entry_base[gr->split]; e++) p->noalloc[e] = 1;
  if (plan_bind(p, gr->tin) != 0) goto done;
  /* their offsets in a step's tape: the forward plan's (same nodes, same shapes) */
  if (step_units(p, gr->split, NULL) != fp->step_units) {
    mxw_fail("internal error: the gradient graph's forward half does not match the subgraph's");
    goto done;
  }
  ok = 1;
done:
  for (int h = 0; ov && h < nh; h++) mxw_node_release(ov[h]);
  for (int j = 0; xg && j < nin; j++)
    if (xg[j].node) mxw_node_release(xg[j].node);
  free(ov);
  free(hg);
  free(xs);
  free(xg);
  if (!ok) {
    grad_free(gr);
    return NULL;
  }
  return gr;
}

/* Subgraph k's gradient plan for inputs of in's shapes and dtypes (built when they change); the
 * forward plan is bound to them too. */
static sg_grad *grad_get(cf_state *st, int k, const mxw_tensor *in) {
  sg_plan *fp = get_plan(st, k);
  if (!fp || plan_bind(fp, in) != 0) return NULL;
  sg_grad *gr = st->grad[k];
  if (gr) {
    int same = 1;
    for (int j = 0; j < gr->nin && same; j++)
      same = gr->sig_t[j] == in[j].dtype && mxw_shape_equal(&gr->sig_s[j], &in[j].shape);
    if (same) return gr;
    grad_free(gr);
    st->grad[k] = NULL;
  }
  if (!(gr = grad_build(fp, st->sub[k], in))) {
    mxw_error_prefix("the gradient of %s's %s subgraph: ", k_cf_names[st->kind],
                     st->kind == CF_FOREACH ? "body"
                     : st->kind == CF_WHILE ? "func"
                     : k == 1               ? "then"
                                            : "else");
    return NULL;
  }
  st->grad[k] = gr;
  return gr;
}

/* Runs nodes [from, to) of the gradient plan: its inputs from gr->tin, the forward operators'
 * values in one step's tape (of `unit`-byte elements, at the offsets of the forward plan fp). */
static int grad_run(sg_grad *gr, const sg_plan *fp, uint8_t *tape, int unit, int from, int to, int is_train) {
  sg_plan *p = gr->p;
  for (int i = 0; i < p->nn; i++) {
    int fwd = i < gr->split;
    for (int e = p->entry_base[i]; e < p->entry_base[i + 1]; e++)
      p->data[e] = !p->nodes[i]->op ? NULL : fwd ? (void *)(tape + (size_t)fp->off[e] * (size_t)unit) : p->buf[e];
  }
  for (int k = 0; k < p->nin; k++) p->data[p->entry_base[p->input_node[k]]] = gr->tin[k].data;
  return plan_exec(p, from, to, is_train);
}

/* The gradient plan's value of head h (h >= nh: subgraph input h - nh's gradient), as a tensor. */
static mxw_tensor grad_head_value(const sg_grad *gr, int h) {
  const sg_plan *p = gr->p;
  int e = p->head_entry[h];
  return (mxw_tensor){p->data[e], p->types[e], p->shapes[e]};
}

/* dst = src (add: dst += src), element counts equal, dtypes converted. */
static void put_grad(const mxw_tensor *dst, const mxw_tensor *src, int add) {
  int64_t n = mxw_tensor_size(dst);
  if (!add) {
    if (dst->data != src->data) mxw_convert(src->data, src->dtype, dst->data, dst->dtype, n);
    return;
  }
  if (dst->dtype == MXW_FLOAT32 && src->dtype == MXW_FLOAT32) {
    float *d = (float *)dst->data;
    const float *s = (const float *)src->data;
    for (int64_t i = 0; i < n; i++) d[i] += s[i];
    return;
  }
  for (int64_t i = 0; i < n; i++)
    mxw_store_f64(dst->data, dst->dtype, i,
                  mxw_load_f64(dst->data, dst->dtype, i) + mxw_load_f64(src->data, src->dtype, i));
}

static void zero_grads(const mxw_op_call *c) {
  for (int i = 0; i < c->num_outputs; i++) memset(c->outputs[i].data, 0, tensor_bytes(&c->outputs[i]));
}

/* The backward kernels' inputs: [output gradients (num_outputs), the op's inputs, its tape]. */
static int foreach_backward(const mxw_op_call *c) {
  cf_state *st = ((const cf_param *)c->param)->st;
  if (!st) return no_state("_backward_foreach");
  int nd = st->nloc[0], ns = st->nloc[1], nr = st->nloc[2], nod = (int)st->num_out_data, nout = (int)st->num_outputs;
  const mxw_tensor *og = c->inputs, *x = c->inputs + nout, *tape = &c->inputs[c->num_inputs - 1];
  int64_t len = x[0].shape.dims[0], steps = 0;
  zero_grads(c);
  if (len == 0) { /* the final states are the initial ones */
    for (int j = 0; j < ns; j++) put_grad(&c->outputs[nd + j], &og[nod + j], 0);
    return 0;
  }
  sg_plan *fp = get_plan(st, 0);
  if (!fp) return -1;
  mxw_tensor *sin = (mxw_tensor *)calloc((size_t)fp->nin + (size_t)ns + 1, sizeof(mxw_tensor));
  if (!sin) return mxw_fail("out of memory");
  mxw_tensor *gs = sin + fp->nin; /* the states' gradients, carried backwards */
  uint8_t *gmem = NULL;
  size_t gbytes = 0;
  int rc = -1;
  tape_view v;
  for (int j = 0; j < nd; j++) sin[st->loc[0][j]] = row_of(&x[j], 0);
  for (int j = 0; j < ns; j++) sin[st->loc[1][j]] = x[nd + j];
  for (int j = 0; j < nr; j++) sin[st->loc[2][j]] = x[nd + ns + j];
  sg_grad *gr = grad_get(st, 0, sin);
  if (!gr || tape_open(st, tape, c->inputs + nout, fp->step_units, &v) != 0 || tape_steps(&v, st, &steps) != 0)
    goto done;
  if (steps != len) {
    mxw_fail("_foreach's tape recorded %lld steps for %lld rows", (long long)steps, (long long)len);
    goto done;
  }
  for (int j = 0; j < ns; j++) gbytes += (tensor_bytes(&x[nd + j]) + 15) & ~(size_t)15;
  if (!(gmem = (uint8_t *)malloc(gbytes ? gbytes : 1))) {
    mxw_fail_oom("a control-flow backward's state gradients", (double)gbytes);
    goto done;
  }
  /* the steps' backward in reverse order, on the values the forward kept: data rows get their
   * step's gradient, the states' carry to the step before, the remaining inputs' add up */
  for (size_t j = 0, o = 0; j < (size_t)ns; j++) {
    gs[j] = x[nd + j];
    gs[j].data = gmem + o;
    o += (tensor_bytes(&x[nd + j]) + 15) & ~(size_t)15;
    put_grad(&gs[j], &og[nod + j], 0);
  }
  for (int64_t i = len - 1; i >= 0; i--) {
    for (int j = 0; j < nd; j++) gr->tin[st->loc[0][j]].data = row_of(&x[j], i).data;
    for (int j = 0; j < ns; j++) gr->tin[st->loc[1][j]].data = tape_state(&v, st, x, i, j).data;
    for (int j = 0; j < nr; j++) gr->tin[st->loc[2][j]].data = x[nd + ns + j].data;
    for (int h = 0; h < nout; h++) {
      int pos = gr->ograd_pos[h];
      if (pos >= 0) gr->tin[pos].data = h < nod ? row_of(&og[h], i).data : gs[h - nod].data;
    }
    if (grad_run(gr, fp, tape_step(&v, st, i), v.unit, gr->split, gr->p->nn, c->is_train) != 0) goto done;
    for (int j = 0; j < nd; j++) {
      mxw_tensor r = row_of(&c->outputs[j], i), g = grad_head_value(gr, gr->nh + (int)st->loc[0][j]);
      put_grad(&r, &g, 0);
    }
    for (int j = 0; j < nr; j++) {
      mxw_tensor g = grad_head_value(gr, gr->nh + (int)st->loc[2][j]);
      put_grad(&c->outputs[nd + ns + j], &g, 1);
    }
    for (int j = 0; j < ns; j++) {
      mxw_tensor g = grad_head_value(gr, gr->nh + (int)st->loc[1][j]);
      if (g.data != gs[j].data) memmove(gs[j].data, g.data, tensor_bytes(&gs[j]));
    }
  }
  for (int j = 0; j < ns; j++) put_grad(&c->outputs[nd + j], &gs[j], 0);
  rc = 0;
done:
  free(gmem);
  free(sin);
  return rc;
}

static int while_backward(const mxw_op_call *c) {
  cf_state *st = ((const cf_param *)c->param)->st;
  if (!st) return no_state("_backward_while_loop");
  int nv = st->nloc[2], nod = (int)st->num_out_data, nout = (int)st->num_outputs;
  int nfin = st->nloc[1];
  const mxw_tensor *og = c->inputs, *x = c->inputs + nout, *tape = &c->inputs[c->num_inputs - 1];
  zero_grads(c);
  mxw_tensor *fin = (mxw_tensor *)calloc((size_t)nfin + (size_t)nv + 1, sizeof(mxw_tensor));
  if (!fin) return mxw_fail("out of memory");
  mxw_tensor *gv = fin + nfin;
  for (int k = 0; k < nfin; k++) fin[k] = x[st->loc[1][k]];
  uint8_t *gmem = NULL;
  size_t gbytes = 0;
  int rc = -1;
  int64_t n = 0;
  tape_view tv;
  sg_grad *gr = grad_get(st, 1, fin);
  if (!gr || tape_open(st, tape, x, st->plan[1]->step_units, &tv) != 0 || tape_steps(&tv, st, &n) != 0) goto done;
  for (int v = 0; v < nv; v++) gbytes += (tensor_bytes(&fin[st->loc[2][v]]) + 15) & ~(size_t)15;
  if (!(gmem = (uint8_t *)malloc(gbytes ? gbytes : 1))) {
    mxw_fail_oom("a control-flow backward's state gradients", (double)gbytes);
    goto done;
  }
  /* backward over the steps the forward took, on the values it kept (the padding rows'
   * gradients are not used) */
  for (size_t v = 0, o = 0; v < (size_t)nv; v++) {
    gv[v] = fin[st->loc[2][v]];
    gv[v].data = gmem + o;
    o += (tensor_bytes(&gv[v]) + 15) & ~(size_t)15;
    put_grad(&gv[v], &og[nod + v], 0);
  }
  for (int64_t i = n - 1; i >= 0; i--) {
    for (int k = 0; k < nfin; k++) gr->tin[k].data = fin[k].data;
    for (int v = 0; v < nv; v++) gr->tin[st->loc[2][v]].data = tape_state(&tv, st, x, i, v).data;
    for (int h = 0; h < nout; h++) {
      int pos = gr->ograd_pos[h];
      if (pos >= 0) gr->tin[pos].data = h < nod ? row_of(&og[h], i).data : gv[h - nod].data;
    }
    if (grad_run(gr, st->plan[1], tape_step(&tv, st, i), tv.unit, gr->split, gr->p->nn, c->is_train) != 0) goto done;
    for (int k = 0; k < nfin; k++) {
      int v = -1;
      for (int u = 0; u < nv; u++)
        if (st->loc[2][u] == k) v = u;
      mxw_tensor g = grad_head_value(gr, gr->nh + k);
      if (v < 0)
        put_grad(&c->outputs[st->loc[1][k]], &g, 1);
      else if (g.data != gv[v].data)
        memmove(gv[v].data, g.data, tensor_bytes(&gv[v]));
    }
  }
  for (int v = 0; v < nv; v++) put_grad(&c->outputs[st->loc[1][st->loc[2][v]]], &gv[v], 0);
  rc = 0;
done:
  free(gmem);
  free(fin);
  return rc;
}

static int cond_backward(const mxw_op_call *c) {
  cf_state *st = ((const cf_param *)c->param)->st;
  if (!st) return no_state("_backward_cond");
  int nout = (int)st->num_outputs;
  const mxw_tensor *og = c->inputs, *x = c->inputs + nout, *tape = &c->inputs[c->num_inputs - 1];
  zero_grads(c);
  int nmax = st->nloc[1] > st->nloc[2] ? st->nloc[1] : st->nloc[2];
  mxw_tensor *in = (mxw_tensor *)calloc((size_t)nmax + 1, sizeof(mxw_tensor));
  if (!in) return mxw_fail("out of memory");
  int rc = -1;
  int64_t b = 0;
  tape_view tv;
  /* the branch that ran (as the forward recorded it) gets the gradients; the inputs it does not
   * read get zeros */
  if (tape_open(st, tape, x, 0, &tv) != 0 || tape_steps(&tv, st, &b) != 0) goto done;
  if (b != 1 && b != 2) {
    mxw_fail("_cond's backward found no record of the branch its forward took");
    goto done;
  }
  for (int k = 0; k < st->nloc[b]; k++) in[k] = x[st->loc[b][k]];
  sg_grad *gr = grad_get(st, (int)b, in);
  if (!gr) goto done;
  for (int k = 0; k < st->nloc[b]; k++) gr->tin[k].data = in[k].data;
  for (int h = 0; h < nout; h++)
    if (gr->ograd_pos[h] >= 0) gr->tin[gr->ograd_pos[h]].data = og[h].data;
  if (grad_run(gr, st->plan[b], tape_step(&tv, st, 0), tv.unit, gr->split, gr->p->nn, c->is_train) != 0) goto done;
  for (int k = 0; k < st->nloc[b]; k++) {
    mxw_tensor g = grad_head_value(gr, gr->nh + k);
    put_grad(&c->outputs[st->loc[b][k]], &g, 0);
  }
  rc = 0;
done:
  free(in);
  return rc;
}

/* FGradient of all three: _backward_<op>(output gradients..., inputs...) -> every input's
 * gradient (MXNet's ElemwiseGradUseInOut without the outputs, which the backward does not read);
 * integer inputs (counters, indices) get none. */
static const char *const k_cf_backward[] = {"_backward_foreach", "_backward_while_loop", "_backward_cond"};
static int cf_gradient(mxw_grad_ctx *g) {
  const cf_state *st = ((const cf_param *)mxw_grad_param(g))->st;
  if (!st) return no_state("a control-flow operator");
  int nout = (int)st->num_outputs, nin = mxw_grad_num_inputs(g);
  mxw_gid *in = (mxw_gid *)malloc(sizeof(mxw_gid) * (size_t)(nout + 2 * nin + 2)),
          *out = in ? in + nout + nin + 1 : NULL;
  MXW_CHECK(in != NULL, "out of memory");
  for (int h = 0; h < nout; h++) in[h] = mxw_grad_ograd(g, h);
  for (int i = 0; i < nin; i++) in[nout + i] = mxw_grad_in(g, i);
  in[nout + nin] = mxw_grad_out(g, nout); /* the tape */
  int rc = mxw_grad_op_fwd(g, k_cf_backward[st->kind], in, nout + nin + 1, out, nin);
  for (int i = 0; i < nin && rc == 0; i++)
    if (mxw_dtype_is_float(mxw_grad_in_dtype(g, i))) rc = mxw_grad_set(g, i, out[i]);
  free(in);
  return rc;
}

/* The backward ops: inputs [output gradients (num_outputs), forward inputs, the forward's tape],
 * outputs the forward inputs' gradients, each of its input's shape and dtype. */
static int cfb_num_inputs(const void *param) {
  const cf_state *st = ((const cf_param *)param)->st;
  return st ? (int)st->num_outputs + (int)st->num_args - k_cf_graph_args[st->kind] + 1 : 0;
}
static int cfb_num_outputs(const void *param) { return cf_num_inputs(param) > 0 ? cf_num_inputs(param) : 1; }
static int cfb_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const cf_state *st = ((const cf_param *)param)->st;
  if (!st) return no_state("a control-flow backward operator");
  int no = (int)st->num_outputs;
  MXW_CHECK(nin == no + nout + 1, "%d inputs for %d outputs", nin, nout);
  for (int i = 0; i < nout; i++) {
    MXW_TRY(mxw_shape_assign(&out[i], &in[no + i], "input gradient"));
    MXW_TRY(mxw_shape_assign(&in[no + i], &out[i], "input"));
  }
  return 0;
}
static int cfb_infer_type(const void *param, int nin, int *in, int nout, int *out) {
  const cf_state *st = ((const cf_param *)param)->st;
  if (!st) return no_state("a control-flow backward operator");
  int no = (int)st->num_outputs;
  MXW_CHECK(nin == no + nout + 1, "%d inputs for %d outputs", nin, nout);
  for (int i = 0; i < nout; i++) {
    if (out[i] < 0) out[i] = in[no + i];
    if (in[no + i] < 0) in[no + i] = out[i];
    MXW_CHECK(out[i] == in[no + i], "input %d's gradient has dtype %s, the input %s", i, mxw_dtype_name(out[i]),
              mxw_dtype_name(in[no + i]));
  }
  return 0;
}

static const char *data_name(const void *param, int index) {
  (void)param;
  static char names[64][16];
  if (index < 0 || index >= 64) return NULL;
  snprintf(names[index], sizeof names[index], "data%d", index);
  return names[index];
}

#define CF_OP(var, nm, fwd, dc)                                             \
  const mxw_op_def var = {.name = nm,                                       \
                          .doc = MXW_DOC(dc),                               \
                          .param_size = sizeof(cf_param),                   \
                          .num_inputs = MXW_VARIADIC,                       \
                          .num_inputs_fn = cf_num_inputs,                   \
                          .num_outputs = 1,                                 \
                          .num_outputs_fn = cf_num_outputs,                 \
                          .num_visible_outputs_fn = cf_num_visible_outputs, \
                          .tape_output = cf_tape_output,                    \
                          .infer_shape = cf_infer_shape,                    \
                          .infer_type = cf_infer_type,                      \
                          .forward = fwd,                                   \
                          .gradient = cf_gradient,                          \
                          .input_name_fn = data_name,                       \
                          .param_retain = cf_retain,                        \
                          .param_release = cf_release}
CF_OP(mxw_op_foreach, "_foreach", foreach_forward,
      "Run a for loop over an NDArray with user-defined computation (a subgraph run per slice along axis 0)");
CF_OP(mxw_op_while_loop, "_while_loop", while_forward,
      "Run a while loop with user-defined condition and computation (subgraphs), outputs padded to max_iterations");
CF_OP(mxw_op_cond, "_cond", cond_forward, "Run an if-then-else using user-defined condition and computation");

#define CF_BACKWARD_OP(var, nm, fwd, dc)                     \
  const mxw_op_def var = {.name = nm,                        \
                          .doc = MXW_DOC(dc),                \
                          .param_size = sizeof(cf_param),    \
                          .num_inputs = MXW_VARIADIC,        \
                          .num_inputs_fn = cfb_num_inputs,   \
                          .num_outputs = 1,                  \
                          .num_outputs_fn = cfb_num_outputs, \
                          .infer_shape = cfb_infer_shape,    \
                          .infer_type = cfb_infer_type,      \
                          .forward = fwd,                    \
                          .input_name_fn = data_name,        \
                          .param_retain = cf_retain,         \
                          .param_release = cf_release}
CF_BACKWARD_OP(
    mxw_op_backward_foreach, "_backward_foreach", foreach_backward,
    "the gradient of _foreach: the body's backward per step in reverse order, on the values its forward kept");
CF_BACKWARD_OP(mxw_op_backward_while_loop, "_backward_while_loop", while_backward,
               "the gradient of _while_loop: func's backward per step taken in reverse order, on the values kept");
CF_BACKWARD_OP(mxw_op_backward_cond, "_backward_cond", cond_backward,
               "the gradient of _cond: the backward of the branch the forward took, on the values it kept");

/* ---- composing a control-flow node (mx.sym.contrib.*) ------------------------------------------ */
/* A node of op (_foreach, _while_loop, _cond) named name, with attributes, subgraphs subs[0..nsub)
 * and inputs (one-output symbols, all given); *out has all its outputs. */
MXW_API int mxw_sym_compose_subgraphs(int op_id, const char *name, int nattr, const char *const *keys,
                                      const char *const *vals, int nsub, mxw_symbol *const *subs, int num_inputs,
                                      mxw_symbol *const *inputs, mxw_symbol **out) {
  MXW_CHECK(name && out && (nsub == 0 || subs) && (num_inputs == 0 || inputs), "NULL argument");
  const mxw_op_def *op = mxw_op_get(op_id);
  MXW_CHECK(cf_kind(op) >= 0, "operator %s takes no subgraphs", op ? op->name : "?");
  MXW_CHECK(nsub >= 0 && nsub <= 3 && num_inputs >= 0, "bad counts");
  mxw_node *n = mxw_node_new(name);
  if (!n) return -1;
  mxw_symbol *s = NULL;
  if (nattr && mxw_attrs_set_many(&n->attrs, nattr, keys, vals, 1) != 0) goto fail;
  if (nsub) {
    n->subgraphs = (mxw_symbol **)calloc((size_t)nsub, sizeof(mxw_symbol *));
    if (!n->subgraphs) {
      mxw_fail("out of memory");
      goto fail;
    }
    for (int k = 0; k < nsub; k++) {
      if (!subs[k] || !(n->subgraphs[k] = sym_dup(subs[k]))) {
        if (!subs[k]) mxw_fail("NULL subgraph");
        goto fail;
      }
      n->num_subgraphs++;
    }
  }
  if (mxw_node_set_op(n, op_id) != 0) goto fail;
  int nin = mxw_params_num_inputs(n->params);
  if (num_inputs != nin) {
    mxw_fail("Operator %s: %d inputs given, num_args says %d", op->name, num_inputs, nin);
    goto fail;
  }
  n->inputs = (mxw_entry *)calloc((size_t)(nin > 0 ? nin : 1), sizeof(mxw_entry));
  if (!n->inputs) {
    mxw_fail("out of memory");
    goto fail;
  }
  for (int i = 0; i < nin; i++) {
    if (!inputs[i] || inputs[i]->n != 1) {
      mxw_fail("Operator %s: input %d must be a symbol with exactly one output", op->name, i);
      goto fail;
    }
    n->inputs[i] = inputs[i]->outputs[0];
    mxw_node_retain(n->inputs[i].node);
    n->num_inputs++;
  }
  if (!(s = mxw_symbol_of_node(n, mxw_node_num_visible_outputs(n)))) goto fail;
  *out = s;
  return 0;
fail:
  mxw_node_release(n);
  return -1;
}

/* ---- cutting a traced body into a subgraph (MXNet's MXSymbolCutSubgraph) --------------------------
 * g's nodes whose "__subgraph_name__" attribute is subgraph_name (those composed while the body
 * was traced) are copied into a new graph *sub. Every edge from such a node to an outside entry
 * becomes a new variable named like the entry's output ("<node>_output", a variable's own name),
 * and a traced variable that is not one of the placeholders (names[0..nplace)) gets a copy of its
 * own; *cut has one output per such variable, in the subgraph's list_inputs order: the entries
 * the control-flow node takes as inputs for them. A head that is not a traced operator is made
 * an identity (_copy) node, as MXNet's _construct_subgraph does. */
typedef struct cut_map {
  int n, cap;
  mxw_node **var;   /* the subgraph's variable */
  mxw_entry *outer; /* the entry it stands for (node NULL: a placeholder) */
} cut_map;

static int cut_add(cut_map *m, mxw_node *var, mxw_entry outer) {
  if (m->n == m->cap) {
    int nc = m->cap ? m->cap * 2 : 16;
    mxw_node **v = (mxw_node **)realloc(m->var, sizeof(mxw_node *) * (size_t)nc);
    if (v) m->var = v;
    mxw_entry *o = (mxw_entry *)realloc(m->outer, sizeof(mxw_entry) * (size_t)nc);
    if (o) m->outer = o;
    MXW_CHECK(v && o, "out of memory");
    m->cap = nc;
  }
  m->var[m->n] = var;
  m->outer[m->n++] = outer;
  return 0;
}

static int in_scope(const mxw_node *n, const char *sg) {
  const char *a = mxw_attrs_get(&n->attrs, "__subgraph_name__");
  return a && strcmp(a, sg) == 0;
}

/* A new variable of the subgraph standing for outer entry e (one per distinct entry). */
static mxw_node *cut_var(cut_map *m, mxw_entry e, const char *name, const mxw_node *copy_attrs_of) {
  for (int i = 0; i < m->n; i++)
    if (m->outer[i].node == e.node && m->outer[i].index == e.index) return m->var[i];
  mxw_node *v = mxw_node_new(name);
  if (!v) return NULL;
  if ((copy_attrs_of && mxw_attrs_copy(&v->attrs, &copy_attrs_of->attrs) != 0) || cut_add(m, v, e) != 0) {
    mxw_node_release(v);
    return NULL;
  }
  return v; /* the map holds the reference until the graph takes its own */
}

MXW_API int mxw_sym_cut_subgraph(const mxw_symbol *g, const char *subgraph_name, int nplace, const char *const *names,
                                 mxw_symbol **sub, mxw_symbol **cut) {
  MXW_CHECK(g && subgraph_name && sub && cut && (nplace == 0 || names), "NULL argument");
  mxw_node **nodes;
  int nn;
  MXW_TRY(mxw_graph_dfs(g->outputs, g->n, &nodes, &nn));
  mxw_node **copy = (mxw_node **)calloc((size_t)(nn ? nn : 1), sizeof(mxw_node *));
  cut_map m = {0, 0, NULL, NULL};
  mxw_symbol *s = mxw_symbol_alloc(g->n), *c = NULL;
  mxw_node **sn = NULL;
  int rc = copy && s ? 0 : mxw_fail("out of memory"), nsn = 0;
  for (int i = 0; i < nn && rc == 0; i++) nodes[i]->index = i;
  for (int i = 0; i < nn && rc == 0; i++) {
    mxw_node *o = nodes[i];
    if (!in_scope(o, subgraph_name)) continue;
    if (!o->op) { /* a placeholder, or a variable made inside the body: a copy of it either way */
      int place = 0;
      for (int k = 0; k < nplace && !place; k++) place = names[k] && strcmp(names[k], o->name) == 0;
      mxw_node *v = mxw_node_new(o->name);
      if (!v || mxw_attrs_copy(&v->attrs, &o->attrs) != 0 ||
          cut_add(&m, v, place ? (mxw_entry){NULL, 0, 0} : (mxw_entry){o, 0, o->version}) != 0) {
        mxw_node_release(v);
        rc = -1;
        break;
      }
      copy[i] = v;
      continue;
    }
    mxw_node *n = mxw_node_new(o->name);
    if (!n) {
      rc = -1;
      break;
    }
    copy[i] = n;
    if (mxw_attrs_copy(&n->attrs, &o->attrs) != 0 || mxw_subgraph_copy(n, o) != 0 ||
        mxw_node_set_op(n, o->op_id) != 0 ||
        !(n->inputs = (mxw_entry *)calloc((size_t)(o->num_inputs ? o->num_inputs : 1), sizeof(mxw_entry)))) {
      rc = -1;
      break;
    }
    for (int k = 0; k < o->num_inputs && rc == 0; k++) {
      mxw_entry e = o->inputs[k];
      mxw_node *src = e.node;
      if (in_scope(src, subgraph_name)) {
        n->inputs[k] = (mxw_entry){copy[src->index], e.index, src->op ? e.version : 0};
      } else {
        char oname[64];
        mxw_node_output_name(src, (int)e.index, oname, sizeof oname);
        char *vname = src->op ? mxw_join_name(src->name, oname) : NULL;
        mxw_node *v = cut_var(&m, e, src->op ? vname : src->name, src->op ? NULL : src);
        free(vname);
        if (!v) {
          rc = -1;
          break;
        }
        n->inputs[k] = (mxw_entry){v, 0, 0};
      }
      mxw_node_retain(n->inputs[k].node);
      n->num_inputs++;
    }
  }
  /* heads: traced operators as they are, anything else through an identity */
  for (int h = 0; h < g->n && rc == 0; h++) {
    mxw_entry e = g->outputs[h];
    mxw_node *src = e.node;
    if (in_scope(src, subgraph_name) && src->op) {
      s->outputs[h] = (mxw_entry){copy[src->index], e.index, e.version};
      mxw_node_retain(copy[src->index]);
      continue;
    }
    mxw_node *v;
    if (in_scope(src, subgraph_name)) {
      v = copy[src->index];
    } else {
      char oname[64];
      mxw_node_output_name(src, (int)e.index, oname, sizeof oname);
      char *vname = src->op ? mxw_join_name(src->name, oname) : NULL;
      v = cut_var(&m, e, src->op ? vname : src->name, src->op ? NULL : src);
      free(vname);
    }
    char idname[96];
    snprintf(idname, sizeof idname, "%s_identity%d", subgraph_name, h);
    mxw_node *id = v ? mxw_node_new(idname) : NULL;
    if (!id || mxw_attrs_set(&id->attrs, "__subgraph_name__", subgraph_name) != 0 ||
        mxw_node_set_op(id, mxw_op_find("_copy")) != 0 || !(id->inputs = (mxw_entry *)calloc(1, sizeof(mxw_entry)))) {
      mxw_node_release(id);
      rc = -1;
      break;
    }
    id->inputs[0] = (mxw_entry){v, 0, 0};
    mxw_node_retain(v);
    id->num_inputs = 1;
    s->outputs[h] = (mxw_entry){id, 0, 0};
  }
  /* the cut entries in the subgraph's list_inputs order */
  if (rc == 0) rc = mxw_graph_dfs(s->outputs, s->n, &sn, &nsn);
  if (rc == 0) {
    int nc = 0;
    for (int i = 0; i < nsn; i++)
      for (int k = 0; k < m.n; k++) nc += sn[i] == m.var[k] && m.outer[k].node;
    c = mxw_symbol_alloc(nc);
    if (!c) rc = mxw_fail("out of memory");
    int j = 0;
    for (int i = 0; i < nsn && rc == 0; i++)
      for (int k = 0; k < m.n; k++)
        if (sn[i] == m.var[k] && m.outer[k].node) {
          c->outputs[j] = m.outer[k];
          mxw_node_retain(m.outer[k].node);
          j++;
        }
  }
  free(sn);
  for (int i = 0; i < nn; i++)
    if (copy && copy[i] && (copy[i]->op || 1)) mxw_node_release(copy[i]);
  for (int k = 0; k < m.n; k++) {
    int owned_by_copy = 0;
    for (int i = 0; i < nn && copy; i++) owned_by_copy |= copy[i] == m.var[k];
    if (!owned_by_copy) mxw_node_release(m.var[k]);
  }
  free(m.var);
  free(m.outer);
  free(copy);
  free(nodes);
  if (rc != 0) {
    if (s) {
      for (int h = 0; h < s->n; h++)
        if (!s->outputs[h].node) s->n = h;
      mxw_sym_free(s);
    }
    mxw_sym_free(c);
    return -1;
  }
  *sub = s;
  *cut = c;
  return 0;
}
