/* cached_op.c -- hybridized training (MXNet's CachedOp forward/backward with static_alloc).
 *
 * A hybridized graph called while recording, with inputs that need gradients (parameters), runs
 * through a training executor: one graph holding the forward heads and, after them, the gradient
 * nodes the gradient pass (autograd.c) builds for the inputs that need gradients. It is indexed,
 * inferred and memory-planned once per input-shape signature (a "plan"); the forward values the
 * backward reads stay in the arena, in place and fusion still apply where safe. Each recorded
 * call owns an arena from the plan's pool (so two calls before one backward do not clash), and is
 * recorded on the eager tape as one _CachedOp node whose gradient is a _backward_CachedOp node
 * running the backward half on that arena. Arenas return to the pool when the tape lets go. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ndarray.h"
#include "graph.h"

#define MAX_PLANS 4
#define POOL 4

typedef struct train_plan {
  int refcount;
  int ninputs;
  mxw_shape *in_shapes;
  int *in_types;
  uint8_t *mask; /* inputs that get gradients */
  mxw_executor *tex;
  int split, nfwd, ngrad;
  int *grad_input; /* gradient head j is input grad_input[j]'s */
  int ntin;
  int *tin_src; /* per training-graph input: the forward input index, or -(h + 1) for head h's gradient */
  mxw_shape *out_shapes;
  int *out_types;
  uint8_t *pool[POOL];
  int npool;
  size_t bytes;
} train_plan;

struct mxw_train_plans {
  train_plan *p[MAX_PLANS];
  int n;
  int built, evicted_binds;
};

void mxw_train_plans_stats(const struct mxw_train_plans *ps, int32_t *out) {
  out[0] = ps ? ps->built : 0;
  out[1] = ps ? ps->evicted_binds : 0;
  for (int i = 0; ps && i < ps->n; i++) out[1] += mxw_exec_binds(ps->p[i]->tex);
}

typedef struct cop_state {
  int refcount;
  train_plan *plan;
  uint8_t *arena;
  mxw_ndarray **inputs; /* the forward inputs' values (shared handles) */
} cop_state;

/* The params of _CachedOp and _backward_CachedOp (set by this file, not parsed). */
typedef struct CachedOpParam {
  cop_state *st;
  int num_inputs, num_outputs;
} CachedOpParam;

static void plan_release(train_plan *p) {
  if (!p || --p->refcount > 0) return;
  for (int i = 0; i < p->npool; i++) {
    mxw_memory_account(-(double)p->bytes);
    free(p->pool[i]);
  }
  mxw_exec_free(p->tex);
  free(p->in_shapes);
  free(p->in_types);
  free(p->mask);
  free(p->grad_input);
  free(p->tin_src);
  free(p->out_shapes);
  free(p->out_types);
  free(p);
}

void mxw_train_plans_free(struct mxw_train_plans *ps) {
  if (!ps) return;
  for (int i = 0; i < ps->n; i++) plan_release(ps->p[i]);
  free(ps);
}

static void state_release(cop_state *st) {
  if (!st || --st->refcount > 0) return;
  train_plan *p = st->plan;
  for (int k = 0; st->inputs && k < p->ninputs; k++) mxw_ndarray_free(st->inputs[k]);
  free(st->inputs);
  if (st->arena) {
    if (p->npool < POOL) {
      p->pool[p->npool++] = st->arena;
    } else {
      mxw_memory_account(-(double)p->bytes);
      free(st->arena);
    }
  }
  plan_release(p);
  free(st);
}

/* The backward has run without retain_graph: the arena and the inputs go back now, even while
 * the call's output arrays (which hold the tape node) are still alive. */
static void drop_saved(void *param) {
  cop_state *st = ((CachedOpParam *)param)->st;
  if (!st) return;
  train_plan *p = st->plan;
  for (int k = 0; st->inputs && k < p->ninputs; k++) {
    mxw_ndarray_free(st->inputs[k]);
    st->inputs[k] = NULL;
  }
  if (st->arena) {
    if (p->npool < POOL) {
      p->pool[p->npool++] = st->arena;
    } else {
      mxw_memory_account(-(double)p->bytes);
      free(st->arena);
    }
    st->arena = NULL;
  }
}

static void param_retain(void *param) {
  CachedOpParam *p = (CachedOpParam *)param;
  if (p->st) p->st->refcount++;
}
static void param_release(void *param) { state_release(((CachedOpParam *)param)->st); }

/* The training graph's head holding input grad_input[j]'s gradient. The gradient heads follow the
 * forward heads in reverse input order: the executor orders nodes depth-first from its heads, so
 * the last layer's weight gradient then runs as soon as its output gradient exists, not after the
 * whole chain of data gradients, and each output gradient can die right after its layer. (On the
 * LeNet of bench/train.mjs the arena stays 4.9 MB either way: exec.c's first-fit planner leaves the
 * freed blocks too small for the next layer's larger gradients; a size-ordered planner would use them.) */
static int grad_head(const train_plan *p, int j) { return p->nfwd + p->ngrad - 1 - j; }

/* ---- building a plan --------------------------------------------------------------------------------- */
static int fwd_value(void *ud, mxw_node *n, int index, mxw_entry *entry, mxw_shape *shape, int *dtype) {
  if (entry) *entry = (mxw_entry){n, (uint32_t)index, 0};
  return mxw_exec_entry_info((const mxw_executor *)ud, n, index, shape, dtype);
}

static train_plan *build_plan(mxw_executor *ex, mxw_ndarray *const *inputs, const uint8_t *mask) {
  int n = mxw_exec_num_inputs(ex), nh = mxw_exec_num_outputs(ex);
  train_plan *p = (train_plan *)calloc(1, sizeof *p);
  mxw_node **ograd = (mxw_node **)calloc((size_t)(nh ? nh : 1), sizeof *ograd);
  mxw_entry *hg = (mxw_entry *)calloc((size_t)(nh ? nh : 1), sizeof *hg);
  mxw_node **xs = (mxw_node **)calloc((size_t)(n ? n : 1), sizeof *xs);
  mxw_entry *xg = (mxw_entry *)calloc((size_t)(n ? n : 1), sizeof *xg);
  mxw_symbol *sym = NULL;
  int ok = 0, nx = 0;
  if (!p || !ograd || !hg || !xs || !xg) {
    mxw_fail("out of memory");
    goto done;
  }
  p->refcount = 1;
  p->ninputs = n;
  p->in_shapes = (mxw_shape *)calloc((size_t)(n ? n : 1), sizeof(mxw_shape));
  p->in_types = (int *)calloc((size_t)(n ? n : 1), sizeof(int));
  p->mask = (uint8_t *)calloc((size_t)(n ? n : 1), 1);
  p->grad_input = (int *)calloc((size_t)(n ? n : 1), sizeof(int));
  p->out_shapes = (mxw_shape *)calloc((size_t)(nh ? nh : 1), sizeof(mxw_shape));
  p->out_types = (int *)calloc((size_t)(nh ? nh : 1), sizeof(int));
  if (!p->in_shapes || !p->in_types || !p->mask || !p->grad_input || !p->out_shapes || !p->out_types) {
    mxw_fail("out of memory");
    goto done;
  }
  for (int k = 0; k < n; k++) {
    p->in_shapes[k] = inputs[k] ? inputs[k]->t.shape : (mxw_shape){-1, {0}};
    p->in_types[k] = inputs[k] ? inputs[k]->t.dtype : -1;
    p->mask[k] = mask[k];
  }
  /* the forward graph's shapes for these inputs (the gradient pass may branch on them) */
  if (mxw_exec_train_prepare(ex, inputs) != 0) goto done;
  const mxw_entry *heads = mxw_exec_heads(ex);
  for (int h = 0; h < nh; h++) {
    char name[32];
    snprintf(name, sizeof name, "ograd%d", h);
    if (!(ograd[h] = mxw_node_new(name))) goto done;
    hg[h] = (mxw_entry){ograd[h], 0, 0};
    if (mxw_exec_entry_info(ex, heads[h].node, (int)heads[h].index, &p->out_shapes[h], &p->out_types[h]) != 0)
      goto done;
  }
  for (int k = 0; k < n; k++)
    if (mask[k]) {
      p->grad_input[nx] = k;
      xs[nx++] = mxw_exec_input_node(ex, k);
    }
  p->nfwd = nh;
  p->ngrad = nx;
  if (mxw_gradient_build(heads, nh, hg, xs, nx, fwd_value, ex, 0, xg) != 0) goto done;
  if (!(sym = mxw_symbol_alloc(nh + nx))) goto done;
  for (int h = 0; h < nh; h++) {
    sym->outputs[h] = heads[h];
    mxw_node_retain(heads[h].node);
  }
  for (int j = 0; j < nx; j++) {
    sym->outputs[grad_head(p, j)] = xg[j];
    xg[j].node = NULL;
  }
  if (mxw_exec_create(sym, &p->tex) != 0) goto done;
  p->split = mxw_exec_num_nodes(ex);
  p->ntin = mxw_exec_num_inputs(p->tex);
  p->tin_src = (int *)calloc((size_t)(p->ntin ? p->ntin : 1), sizeof(int));
  int *tie = (int *)calloc((size_t)(p->ntin ? p->ntin : 1), sizeof(int));
  if (!p->tin_src || !tie) {
    free(tie);
    mxw_fail("out of memory");
    goto done;
  }
  for (int k = 0; k < p->ntin; k++) {
    mxw_node *v = mxw_exec_input_node(p->tex, k);
    tie[k] = -1;
    p->tin_src[k] = -1000000;
    for (int h = 0; h < nh; h++)
      if (v == ograd[h]) {
        tie[k] = h;
        p->tin_src[k] = -(h + 1);
      }
    for (int i = 0; i < n && p->tin_src[k] == -1000000; i++)
      if (v == mxw_exec_input_node(ex, i)) p->tin_src[k] = i;
    if (p->tin_src[k] == -1000000) {
      free(tie);
      mxw_fail("internal error: training graph input '%s' is neither a graph input nor an output gradient", v->name);
      goto done;
    }
  }
  /* the gradient heads are written straight into _backward_CachedOp's outputs (the parameters'
   * gradient arrays when grad_req is write) where their dtype and shape agree */
  int *ext_dtype = (int *)malloc(sizeof(int) * (size_t)(nh + nx ? nh + nx : 1));
  mxw_shape *ext_shape = (mxw_shape *)calloc((size_t)(nh + nx ? nh + nx : 1), sizeof(mxw_shape));
  int rc = -1;
  if (ext_dtype && ext_shape) {
    for (int h = 0; h < nh; h++) ext_dtype[h] = -1;
    for (int j = 0; j < nx; j++) {
      ext_dtype[grad_head(p, j)] = p->in_types[p->grad_input[j]];
      ext_shape[grad_head(p, j)] = p->in_shapes[p->grad_input[j]];
    }
    rc = mxw_exec_train_setup(p->tex, p->split, tie, ext_dtype, ext_shape);
  } else {
    mxw_fail("out of memory");
  }
  free(ext_dtype);
  free(ext_shape);
  free(tie);
  if (rc != 0) goto done;
  ok = 1;
done:
  for (int h = 0; h < nh && ograd; h++) mxw_node_release(ograd[h]);
  for (int j = 0; xg && j < nx; j++)
    if (xg[j].node) mxw_node_release(xg[j].node);
  mxw_sym_free(sym);
  free(ograd);
  free(hg);
  free(xs);
  free(xg);
  if (!ok && p) {
    p->refcount = 1;
    plan_release(p);
    p = NULL;
  }
  return p;
}

static int plan_matches(const train_plan *p, mxw_ndarray *const *inputs, const uint8_t *mask) {
  for (int k = 0; k < p->ninputs; k++) {
    if (p->mask[k] != mask[k]) return 0;
    if (!inputs[k]) {
      if (p->in_types[k] != -1) return 0;
      continue;
    }
    if (p->in_types[k] != inputs[k]->t.dtype || !mxw_shape_equal(&p->in_shapes[k], &inputs[k]->t.shape)) return 0;
  }
  return 1;
}

/* ---- the recording forward ----------------------------------------------------------------------- */
int mxw_cached_forward_record(mxw_executor *ex, int num_inputs, mxw_ndarray *const *inputs, int is_train,
                              int *num_outputs, mxw_ndarray **outputs, int *handled) {
  *handled = 0;
  /* no cap on the inputs: a ResNet-50 has 300 parameters, a BERT-large 390 */
  uint8_t *mask = (uint8_t *)malloc((size_t)(num_inputs ? num_inputs : 1));
  MXW_CHECK(mask != NULL, "out of memory");
  int any = 0;
  for (int k = 0; k < num_inputs; k++) {
    mask[k] = inputs[k] && inputs[k]->ag_node && mxw_dtype_is_float(inputs[k]->t.dtype);
    any |= mask[k];
  }
  if (!any) {
    free(mask);
    return 0;
  }
  *handled = 1;
  struct mxw_train_plans **pps = mxw_exec_plans(ex);
  if (!*pps && !(*pps = (struct mxw_train_plans *)calloc(1, sizeof **pps))) {
    free(mask);
    return mxw_fail("out of memory");
  }
  struct mxw_train_plans *ps = *pps;
  train_plan *p = NULL;
  for (int i = 0; i < ps->n && !p; i++)
    if (plan_matches(ps->p[i], inputs, mask)) p = ps->p[i];
  int fresh = !p;
  if (fresh) p = build_plan(ex, inputs, mask);
  free(mask);
  if (!p) return -1;
  if (fresh) {
    ps->built++;
    if (ps->n == MAX_PLANS) {
      ps->evicted_binds += mxw_exec_binds(ps->p[0]->tex);
      plan_release(ps->p[0]);
      memmove(ps->p, ps->p + 1, sizeof(train_plan *) * (MAX_PLANS - 1));
      ps->n--;
    }
    ps->p[ps->n++] = p;
  }
  /* plan the training graph (once per plan) */
  mxw_ndarray **tin = (mxw_ndarray **)malloc(sizeof(mxw_ndarray *) * (size_t)(p->ntin ? p->ntin : 1));
  void **tdata = (void **)malloc(sizeof(void *) * (size_t)(p->ntin ? p->ntin : 1));
  mxw_ndarray **outs = (mxw_ndarray **)calloc((size_t)(p->nfwd ? p->nfwd : 1), sizeof(mxw_ndarray *));
  mxw_ndarray **in_nonnull = (mxw_ndarray **)malloc(sizeof(mxw_ndarray *) * (size_t)(num_inputs ? num_inputs : 1));
  mxw_ndarray **zeros = (mxw_ndarray **)calloc((size_t)(num_inputs ? num_inputs : 1), sizeof(mxw_ndarray *));
  cop_state *st = NULL;
  int nh = p->nfwd, rc = -1;
  if (!tin || !tdata || !outs || !in_nonnull || !zeros) {
    mxw_fail("out of memory");
    goto done;
  }
  for (int k = 0; k < p->ntin; k++) {
    tin[k] = p->tin_src[k] >= 0 ? inputs[p->tin_src[k]] : NULL;
    tdata[k] = tin[k] ? tin[k]->t.data : NULL;
  }
  if (mxw_exec_train_prepare(p->tex, tin) != 0) goto done;
  size_t bytes = mxw_exec_arena_bytes(p->tex);
  if (bytes != p->bytes) { /* first plan: the pool holds arenas of this size */
    for (int i = 0; i < p->npool; i++) {
      mxw_memory_account(-(double)p->bytes);
      free(p->pool[i]);
    }
    p->npool = 0;
    p->bytes = bytes;
  }
  st = (cop_state *)calloc(1, sizeof *st);
  if (!st) {
    mxw_fail("out of memory");
    goto done;
  }
  st->refcount = 1;
  st->plan = p;
  p->refcount++;
  if (p->npool) {
    st->arena = p->pool[--p->npool];
  } else {
    st->arena = (uint8_t *)aligned_alloc(64, bytes ? (bytes + 63) & ~(size_t)63 : 64);
    if (!st->arena) {
      mxw_fail("out of memory allocating %zu bytes for a hybridized training step", bytes);
      goto done;
    }
    mxw_memory_account((double)p->bytes);
  }
  st->inputs = (mxw_ndarray **)calloc((size_t)(num_inputs ? num_inputs : 1), sizeof(mxw_ndarray *));
  if (!st->inputs) {
    mxw_fail("out of memory");
    goto done;
  }
  for (int k = 0; k < num_inputs; k++)
    if (inputs[k] && !(st->inputs[k] = mxw_ndarray_share(inputs[k]))) goto done;
  if (mxw_exec_train_run(p->tex, st->arena, tdata, NULL, 0, p->split, is_train) != 0) goto done;
  for (int h = 0; h < nh; h++) {
    void *data;
    mxw_shape s;
    int t;
    if (mxw_exec_train_head(p->tex, h, &data, &s, &t) != 0) goto done;
    if (!(outs[h] = mxw_ndarray_alloc(&s, t))) goto done;
    memcpy(outs[h]->t.data, data, (size_t)mxw_shape_size(&s) * (size_t)mxw_dtype_size(t));
  }
  /* the tape node */
  {
    int op = mxw_op_find("_CachedOp");
    if (op < 0) {
      mxw_fail("_CachedOp is not registered");
      goto done;
    }
    CachedOpParam cp = {st, num_inputs, nh};
    mxw_params params = {mxw_op_get(op), op, &cp};
    int zrc = 0;
    for (int k = 0; k < num_inputs && zrc == 0; k++) {
      in_nonnull[k] = inputs[k];
      if (inputs[k]) continue;
      /* an unbound input (a loss head's label at inference): zeros of its inferred shape */
      mxw_shape s;
      int t;
      zrc = mxw_exec_entry_info(ex, mxw_exec_input_node(ex, k), 0, &s, &t);
      if (zrc == 0 && !(zeros[k] = in_nonnull[k] = mxw_ndarray_zeros(&s, t < 0 ? MXW_FLOAT32 : t))) zrc = -1;
    }
    if (zrc == 0) zrc = mxw_autograd_record(&params, num_inputs, in_nonnull, nh, outs);
    for (int k = 0; k < num_inputs; k++) mxw_ndarray_free(zeros[k]);
    if (zrc != 0) goto done;
  }
  for (int h = 0; h < nh; h++) outputs[h] = outs[h];
  *num_outputs = nh;
  rc = 0;
done:
  if (rc != 0 && outs)
    for (int h = 0; h < nh; h++) mxw_ndarray_free(outs[h]);
  if (st) state_release(st); /* the tape node holds its own reference */
  free(tin);
  free(tdata);
  free(outs);
  free(in_nonnull);
  free(zeros);
  return rc;
}

/* ---- the ops (registered through csrc/ops/cached_op_ops.c) ---------------------------------------------- */
static int num_inputs_fwd(const void *param) { return ((const CachedOpParam *)param)->num_inputs; }
static int num_outputs_fwd(const void *param) {
  const CachedOpParam *p = (const CachedOpParam *)param;
  return p->st ? p->num_outputs : 1;
}
static int num_inputs_bwd(const void *param) { return ((const CachedOpParam *)param)->num_outputs; }
static int num_outputs_bwd(const void *param) { /* the gradients of the inputs that get one */
  const CachedOpParam *p = (const CachedOpParam *)param;
  return p->st ? p->st->plan->ngrad : 1;
}
static int cached_unbound(const mxw_op_call *c) {
  (void)c;
  return mxw_fail("_CachedOp and _backward_CachedOp exist only on the autograd tape of a hybridized block's call");
}
static int cached_fwd_shapes(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const cop_state *st = ((const CachedOpParam *)param)->st;
  MXW_CHECK(st != NULL, "no recorded call");
  for (int h = 0; h < nout && h < st->plan->nfwd; h++)
    MXW_TRY(mxw_shape_assign(&out[h], &st->plan->out_shapes[h], "output"));
  (void)nin;
  (void)in;
  return 0;
}

/* _backward_CachedOp: inputs are the forward outputs' gradients, outputs the gradients of the forward
 * inputs that get one (the plan's grad_input order; the others get none: a zero contribution). */
static int cached_backward_shapes(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const cop_state *st = ((const CachedOpParam *)param)->st;
  MXW_CHECK(st != NULL, "no recorded call");
  const train_plan *p = st->plan;
  MXW_CHECK(nin == p->nfwd && nout == p->ngrad, "a recorded call with %d outputs and %d inputs", p->nfwd, p->ngrad);
  for (int h = 0; h < nin; h++) MXW_TRY(mxw_shape_assign(&in[h], &p->out_shapes[h], "output gradient"));
  for (int j = 0; j < nout; j++) MXW_TRY(mxw_shape_assign(&out[j], &p->in_shapes[p->grad_input[j]], "input gradient"));
  return 0;
}
static int cached_backward_types(const void *param, int nin, int *in, int nout, int *out) {
  const cop_state *st = ((const CachedOpParam *)param)->st;
  MXW_CHECK(st != NULL, "no recorded call");
  const train_plan *p = st->plan;
  for (int h = 0; h < nin; h++) in[h] = p->out_types[h];
  for (int j = 0; j < nout; j++) out[j] = p->in_types[p->grad_input[j]];
  return 0;
}

static int cached_backward_run(const mxw_op_call *c) {
  const cop_state *st = ((const CachedOpParam *)c->param)->st;
  train_plan *p = st->plan;
  MXW_CHECK(st->arena != NULL,
            "this hybridized call's saved values were freed by an earlier backward pass "
            "(pass retain_graph=True to the first backward to differentiate the same graph twice)");
  void **tdata = (void **)malloc(sizeof(void *) * (size_t)(p->ntin ? p->ntin : 1));
  void **hdata = (void **)calloc((size_t)p->nfwd + (size_t)p->ngrad + 1, sizeof(void *));
  int rc = -1;
  if (!tdata || !hdata) {
    free(tdata);
    free(hdata);
    return mxw_fail("out of memory");
  }
  for (int k = 0; k < p->ntin; k++) {
    int src = p->tin_src[k];
    tdata[k] = src >= 0 ? (st->inputs[src] ? st->inputs[src]->t.data : NULL) : c->inputs[-src - 1].data;
  }
  for (int j = 0; j < p->ngrad; j++) hdata[grad_head(p, j)] = c->outputs[j].data;
  rc = mxw_exec_train_run(p->tex, st->arena, tdata, hdata, p->split, mxw_exec_num_nodes(p->tex), c->is_train);
  free(tdata);
  free(hdata);
  MXW_TRY(rc);
  for (int j = 0; j < p->ngrad; j++) {
    if (mxw_exec_train_head_external(p->tex, grad_head(p, j))) continue; /* written in place by the run */
    void *data;
    mxw_shape s;
    int t;
    MXW_TRY(mxw_exec_train_head(p->tex, grad_head(p, j), &data, &s, &t));
    mxw_tensor *o = &c->outputs[j];
    mxw_convert(data, t, o->data, o->dtype, mxw_shape_size(&s));
  }
  return 0;
}

/* ---- create_graph through a hybridized call -----------------------------------------------------
 * _backward_CachedOp runs the backward half on the call's arena and has no gradient. When the
 * gradient graph is built to be differentiated again (autograd.grad with create_graph), the call's
 * gradient is instead the gradient of its forward graph recomputed from the call's inputs: the
 * forward nodes are copied into the gradient graph (same ops and params) on the inputs' values, and
 * the gradient pass runs over the copy, so every op's own FGradient applies and the result is a
 * function of the inputs on the tape. A copied op's state inputs (BatchNorm's running statistics)
 * get copies of their own, so the recomputation does not update them a second time. Dropout is
 * not drawn again: the copy multiplies by the mask the call drew, read from the call's arena
 * (where the backward half would read it). Other ops drawing random numbers in
 * training mode (the random ops, RNN's dropout) would draw different ones: refused, naming the
 * node. */
typedef struct {
  const mxw_executor *tex;
  mxw_node **copy, **orig; /* pairs: a node of the copied graph (or an input leaf), its forward node */
  int *index;              /* the forward node's output for the copy's output 0 (-1: the same outputs) */
  int n;
} copy_map;

static void map_add(copy_map *m, mxw_node *copy, mxw_node *orig, int index) {
  m->copy[m->n] = copy;
  m->orig[m->n] = orig;
  m->index[m->n++] = index;
}

static int copy_value(void *ud, mxw_node *n, int index, mxw_entry *entry, mxw_shape *shape, int *dtype) {
  const copy_map *m = (const copy_map *)ud;
  if (entry) *entry = (mxw_entry){n, (uint32_t)index, 0};
  for (int i = 0; i < m->n; i++)
    if (m->copy[i] == n)
      return mxw_exec_entry_info(m->tex, m->orig[i], m->index[i] < 0 ? index : m->index[i], shape, dtype);
  return mxw_fail("internal error: node '%s' is not in the recomputed graph", n->name);
}

static int draws_random(const mxw_node *n, int train) {
  const char *s = n->op->name;
  if (strstr(s, "random") || strstr(s, "sample") || strstr(s, "shuffle")) return 1;
  return train && strcmp(s, "RNN") == 0;
}

/* A Dropout node's copy: out = data * mask, mask the call's (a constant: no gradient); 1 when the
 * call kept no mask (nothing reads it), the node is then copied as it is. */
static int copy_dropout(mxw_grad_ctx *g, const train_plan *p, uint8_t *arena, const mxw_node *n, mxw_gid data,
                        mxw_gid *out) {
  void *ptr;
  mxw_shape s;
  int t;
  MXW_TRY(mxw_exec_arena_entry(p->tex, arena, n, 1, &ptr, &s, &t));
  if (!ptr) return 1;
  mxw_ndarray *mask = mxw_ndarray_alloc(&s, t);
  if (!mask) return -1;
  memcpy(mask->t.data, ptr, (size_t)mxw_shape_size(&s) * (size_t)mxw_dtype_size(t));
  out[1] = mxw_grad_constant(g, "dropout_mask", mask);
  mxw_ndarray_free(mask);
  out[0] = mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(data, out[1]));
  return out[0] < 0 ? -1 : 0;
}

static int cached_grad_recompute(mxw_grad_ctx *g, const train_plan *p, uint8_t *arena) {
  const mxw_executor *tex = p->tex;
  const int split = p->split, nh = p->nfwd, train = (mxw_grad_flags(g) & MXW_GRAD_TRAIN) != 0;
  int *base = (int *)calloc((size_t)split + 1, sizeof(int)), nx = 0, rc = -1;
  mxw_gid *gid = NULL, *ins = NULL;
  mxw_entry *heads = (mxw_entry *)calloc((size_t)nh + 1, sizeof(mxw_entry));
  mxw_entry *hgrads = (mxw_entry *)calloc((size_t)nh + 1, sizeof(mxw_entry));
  mxw_node **xs = (mxw_node **)calloc((size_t)p->ngrad + 1, sizeof(mxw_node *));
  int *xin = (int *)calloc((size_t)p->ngrad + 1, sizeof(int));
  mxw_entry *xg = (mxw_entry *)calloc((size_t)p->ngrad + 1, sizeof(mxw_entry));
  int ncopies = 2 * split + 1; /* nodes (Dropout: two), and the copies of state inputs */
  for (int i = 0; i < split; i++) {
    const mxw_node *n = mxw_exec_node(tex, i);
    if (n->op) ncopies += n->op->num_mutate_inputs == MXW_MUTATE_ALL ? n->num_inputs : n->op->num_mutate_inputs;
  }
  copy_map m = {tex, (mxw_node **)calloc((size_t)ncopies, sizeof(mxw_node *)),
                (mxw_node **)calloc((size_t)ncopies, sizeof(mxw_node *)), (int *)calloc((size_t)ncopies, sizeof(int)),
                0};
  int max_in = 1;
  for (int i = 0; base && i < split; i++) {
    const mxw_node *n = mxw_exec_node(tex, i);
    base[i + 1] = base[i] + (n->op ? mxw_node_num_outputs(n) : 1);
    if (n->num_inputs > max_in) max_in = n->num_inputs;
  }
  if (base) gid = (mxw_gid *)malloc(sizeof(mxw_gid) * (size_t)(base[split] + 1));
  ins = (mxw_gid *)malloc(sizeof(mxw_gid) * (size_t)max_in);
  if (!base || !gid || !ins || !heads || !hgrads || !xs || !xin || !xg || !m.copy || !m.orig || !m.index) {
    mxw_fail("out of memory");
    goto done;
  }
  for (int i = 0; i < split; i++) {
    mxw_node *n = mxw_exec_node(tex, i);
    if (!n->op) { /* a graph input: the call's input of the same position */
      int src = -1;
      for (int k = 0; k < p->ntin && src < 0; k++)
        if (mxw_exec_input_node(tex, k) == n && p->tin_src[k] >= 0) src = p->tin_src[k];
      if (src < 0 || src >= mxw_grad_num_inputs(g)) {
        mxw_fail("create_graph through a hybridized block: its input '%s' has no value", n->name);
        goto done;
      }
      if ((gid[base[i]] = mxw_grad_in(g, src)) < 0) goto done;
      map_add(&m, mxw_grad_entry(g, gid[base[i]]).node, n, -1);
      continue;
    }
    if (draws_random(n, train)) {
      mxw_fail(
          "create_graph through a hybridized block whose graph draws random numbers in training mode (node '%s', "
          "%s): recomputing it would draw different ones; call the block without hybridize()",
          n->name, n->op->name);
      goto done;
    }
    for (int k = 0; k < n->num_inputs; k++) {
      const mxw_entry e = n->inputs[k];
      const int j = e.node->index;
      if (j < 0 || j >= split || mxw_exec_node(tex, j) != e.node) {
        mxw_fail("internal error: input %d of node '%s' is not in the forward graph", k, n->name);
        goto done;
      }
      ins[k] = gid[base[j] + (int)e.index];
      if (mxw_op_mutates_input(n->op, k)) {
        if ((ins[k] = mxw_grad_op(g, "_copy", NULL, MXW_GIDS(ins[k]))) < 0) goto done;
        map_add(&m, mxw_grad_entry(g, ins[k]).node, e.node, (int)e.index);
      }
    }
    const int dropout = strcmp(n->op->name, "Dropout") == 0 && n->num_inputs == 1 && mxw_node_num_outputs(n) == 2
                            ? copy_dropout(g, p, arena, n, ins[0], gid + base[i])
                            : 1;
    if (dropout < 0) goto done;
    if (dropout == 1 && mxw_grad_op_like(g, n, ins, n->num_inputs, gid + base[i], mxw_node_num_outputs(n)) != 0)
      goto done;
    map_add(&m, mxw_grad_entry(g, gid[base[i]]).node, n, -1);
    if (dropout == 0) map_add(&m, mxw_grad_entry(g, gid[base[i] + 1]).node, n, 1); /* the mask */
  }
  const mxw_entry *fh = mxw_exec_heads(tex);
  for (int h = 0; h < nh; h++) {
    const int j = fh[h].node->index;
    heads[h] = mxw_grad_entry(g, gid[base[j] + (int)fh[h].index]);
    hgrads[h] = mxw_grad_entry(g, mxw_grad_ograd(g, h));
    if (!heads[h].node || !hgrads[h].node) goto done;
  }
  for (int j = 0; j < p->ngrad; j++) { /* an input passed twice is one leaf: its gradient goes to the first */
    mxw_node *leaf = mxw_grad_entry(g, mxw_grad_in(g, p->grad_input[j])).node;
    int dup = 0;
    for (int t = 0; t < nx; t++) dup |= xs[t] == leaf;
    if (!leaf || dup) continue;
    xin[nx] = p->grad_input[j];
    xs[nx++] = leaf;
  }
  if (mxw_gradient_build(heads, nh, hgrads, xs, nx, copy_value, &m, mxw_grad_flags(g), xg) != 0) goto done;
  rc = 0;
  for (int j = 0; j < nx; j++) {
    if (!xg[j].node) continue;
    const mxw_gid d = mxw_grad_adopt(g, xg[j]);
    xg[j].node = NULL; /* adopted (or released on failure) */
    if (rc == 0) rc = mxw_grad_set(g, xin[j], d);
  }
done:
  for (int j = 0; xg && j < nx; j++)
    if (xg[j].node) mxw_node_release(xg[j].node);
  free(base);
  free(gid);
  free(ins);
  free(heads);
  free(hgrads);
  free(xs);
  free(xin);
  free(xg);
  free(m.copy);
  free(m.orig);
  free(m.index);
  return rc;
}

static int cached_grad(mxw_grad_ctx *g) {
  const CachedOpParam *cp = (const CachedOpParam *)mxw_grad_param(g);
  const train_plan *p = cp->st->plan;
  if (mxw_grad_flags(g) & MXW_GRAD_DIFFERENTIABLE) return cached_grad_recompute(g, p, cp->st->arena);
  int nh = mxw_grad_num_outputs(g), n = mxw_grad_num_inputs(g);
  MXW_CHECK(p->ngrad <= n, "a recorded call with %d inputs and %d gradients", n, p->ngrad);
  mxw_gid *in = (mxw_gid *)malloc(sizeof(mxw_gid) * (size_t)(nh + p->ngrad + 1)), *out = in + nh;
  MXW_CHECK(in != NULL, "out of memory");
  int rc = 0;
  for (int h = 0; h < nh; h++) in[h] = mxw_grad_ograd(g, h);
  rc = mxw_grad_op_fwd(g, "_backward_CachedOp", in, nh, out, p->ngrad);
  for (int j = 0; j < p->ngrad && rc == 0; j++) rc = mxw_grad_set(g, p->grad_input[j], out[j]);
  free(in);
  return rc;
}

const mxw_op_def mxw_op_cached_op = {
    .name = "_CachedOp",
    .doc = MXW_DOC("a hybridized block's call on the autograd tape (internal)"),
    .param_size = sizeof(CachedOpParam),
    .num_inputs = MXW_VARIADIC,
    .num_inputs_fn = num_inputs_fwd,
    .num_outputs = 1,
    .num_outputs_fn = num_outputs_fwd,
    .infer_shape = cached_fwd_shapes,
    .forward = cached_unbound,
    .gradient = cached_grad,
    .param_retain = param_retain,
    .param_release = param_release,
    .drop_saved = drop_saved,
};

const mxw_op_def mxw_op_backward_cached_op = {
    .name = "_backward_CachedOp",
    .doc = MXW_DOC("the backward half of a recorded hybridized call (internal)"),
    .param_size = sizeof(CachedOpParam),
    .num_inputs = MXW_VARIADIC,
    .num_inputs_fn = num_inputs_bwd,
    .num_outputs = 1,
    .num_outputs_fn = num_outputs_bwd,
    .infer_shape = cached_backward_shapes,
    .infer_type = cached_backward_types,
    .forward = cached_backward_run,
    .no_grad = 1,
    .param_retain = param_retain,
    .param_release = param_release,
};
