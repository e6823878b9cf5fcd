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
  void **data; /* ne: where each entry's values are during a run */
  void **buf;  /* ne: owned buffers of operator outputs */
  size_t *cap; /* their sizes */
  int bound;   /* the shapes and dtypes below were inferred and the buffers allocated */
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
  p->bound_shapes = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)(p->nin ? p->nin : 1));
  p->bound_types = (int *)malloc(sizeof(int) * (size_t)(p->nin ? p->nin : 1));
  p->tin = (mxw_tensor *)malloc(sizeof(mxw_tensor) * (size_t)p->maxio);
  p->tout = (mxw_tensor *)malloc(sizeof(mxw_tensor) * (size_t)p->maxio);
  if (!p->in_entries || !p->input_node || !p->head_entry || !p->shapes || !p->types || !p->data || !p->buf || !p->cap ||
      !p->bound_shapes || !p->bound_types || !p->tin || !p->tout)
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
      if (bytes > p->cap[e]) {
        void *q = realloc(p->buf[e], bytes);
        if (!q) return mxw_fail_oom("a control-flow subgraph's buffer", (double)bytes);
        p->buf[e] = q;
        p->cap[e] = bytes;
      }
    }
  }
  for (int k = 0; k < p->nin; k++) {
    p->bound_shapes[k] = in[k].shape;
    p->bound_types[k] = in[k].dtype;
  }
  p->bound = 1;
  return 0;
}

/* One run: in (nin, list_inputs order) -> out (nh heads; their data written by copy). */
static int plan_run(sg_plan *p, const mxw_tensor *in, const mxw_tensor *out, int is_train) {
  MXW_TRY(plan_bind(p, in));
  for (int e = 0; e < p->ne; e++) p->data[e] = p->buf[e];
  for (int k = 0; k < p->nin; k++) p->data[p->entry_base[p->input_node[k]]] = in[k].data;
  for (int i = 0; i < p->nn; i++) {
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
    if (n->op->forward(&call) != 0) {
      mxw_error_prefix("node '%s' (%s): ", n->name, n->op->name);
      return -1;
    }
  }
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
} cf_state;

typedef struct cf_param {
  cf_state *st;
} cf_param;

static void state_release(cf_state *st) {
  if (!st || --st->refcount > 0) return;
  for (int k = 0; k < 3; k++) {
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
static int cf_num_outputs(const void *param) {
  const cf_state *st = ((const cf_param *)param)->st;
  return st ? (int)st->num_outputs : 1;
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

static int cf_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  cf_state *st = ((const cf_param *)param)->st;
  if (!st) return no_state("a control-flow operator");
  io_info t;
  MXW_TRY(alloc_io(nin + nout, &t));
  int rc = cf_infer(st, nin, in, t.t, nout, out, t.t + nin);
  free_io(&t);
  MXW_TRY(rc);
  /* unknown outputs are an error only once every input is known */
  MXW_CHECK(all_known(nout, out, NULL, 1) || !all_known(nin, in, NULL, 1),
            "%s: the output shapes could not be inferred from the subgraphs", k_cf_names[st->kind]);
  return 0;
}
static int cf_infer_type(const void *param, int nin, int *in, int nout, int *out) {
  cf_state *st = ((const cf_param *)param)->st;
  if (!st) return no_state("a control-flow operator");
  io_info s;
  MXW_TRY(alloc_io(nin + nout, &s));
  int rc = cf_infer(st, nin, s.s, in, nout, s.s + nin, out);
  free_io(&s);
  MXW_TRY(rc);
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

static int foreach_forward(const mxw_op_call *c) {
  cf_state *st = ((const cf_param *)c->param)->st;
  if (!st) return no_state("_foreach");
  sg_plan *p = get_plan(st, 0);
  if (!p) return -1;
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
    rc = plan_run(p, sin, sout, c->is_train);
    bufs_swap(&b);
  }
  for (int j = 0; j < ns && rc == 0; j++) memcpy(c->outputs[nod + j].data, b.cur[j].data, tensor_bytes(&b.cur[j]));
  bufs_free(&b);
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

static int while_forward(const mxw_op_call *c) {
  cf_state *st = ((const cf_param *)c->param)->st;
  if (!st) return no_state("_while_loop");
  sg_plan *pc = get_plan(st, 0), *pf = get_plan(st, 1);
  if (!pc || !pf) return -1;
  MXW_CHECK(pc->nh == 1, "_while_loop: the condition subgraph has %d outputs, not 1", pc->nh);
  int nv = st->nloc[2], nod = (int)st->num_out_data;
  int ncin = st->nloc[0], nfin = st->nloc[1];
  mxw_tensor *cin =
      (mxw_tensor *)calloc((size_t)ncin + (size_t)nfin + (size_t)nv + (size_t)st->num_outputs + 2, sizeof(mxw_tensor));
  if (!cin) return mxw_fail("out of memory");
  mxw_tensor *fin = cin + ncin, *init = fin + nfin, *fout = init + nv, *cout = fout + st->num_outputs;
  for (int k = 0; k < ncin; k++) cin[k] = c->inputs[st->loc[0][k]];
  for (int k = 0; k < nfin; k++) fin[k] = c->inputs[st->loc[1][k]];
  for (int v = 0; v < nv; v++) init[v] = fin[st->loc[2][v]];
  /* the condition's one-element output */
  double cval[2] = {0, 0};
  cout[0] = (mxw_tensor){cval, MXW_FLOAT64, {1, {1}}};
  loop_bufs b = {0, NULL, NULL, NULL};
  int rc = bufs_init(&b, nv, init);
  int64_t step = 0;
  while (rc == 0 && step < st->max_iterations) {
    /* the loop variables, wherever cond and func read them */
    for (int v = 0; v < nv; v++) {
      int64_t pos = st->loc[1][st->loc[2][v]];
      fin[st->loc[2][v]] = b.cur[v];
      for (int k = 0; k < ncin; k++)
        if (st->loc[0][k] == pos) cin[k] = b.cur[v];
    }
    if ((rc = plan_bind(pc, cin)) != 0) break;
    {
      int e = pc->head_entry[0];
      cout[0].dtype = pc->types[e];
      cout[0].shape = pc->shapes[e];
      if (mxw_tensor_size(&cout[0]) != 1 || mxw_dtype_size(cout[0].dtype) > 8) {
        rc = cond_value(&cout[0], &(int){0});
        if (rc == 0) rc = mxw_fail("the condition's dtype %s is not supported", mxw_dtype_name(cout[0].dtype));
        break;
      }
    }
    int go = 0;
    if ((rc = plan_run(pc, cin, cout, c->is_train)) != 0 || (rc = cond_value(&cout[0], &go)) != 0 || !go) break;
    for (int h = 0; h < nod; h++) fout[h] = row_of(&c->outputs[h], step);
    for (int v = 0; v < nv; v++) fout[nod + v] = b.next[v];
    if ((rc = plan_run(pf, fin, fout, c->is_train)) != 0) break;
    bufs_swap(&b);
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
    for (int v = 0; v < nv; v++) memcpy(c->outputs[nod + v].data, b.cur[v].data, tensor_bytes(&b.cur[v]));
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
  double cval[2] = {0, 0};
  mxw_tensor cout = {cval, MXW_FLOAT64, {1, {1}}};
  int rc = plan_bind(pc, in), go = 0;
  if (rc == 0) {
    int e = pc->head_entry[0];
    cout.dtype = pc->types[e];
    cout.shape = pc->shapes[e];
    rc = cond_value(&cout, &go); /* checks the element count before the run writes it */
  }
  if (rc == 0) rc = plan_run(pc, in, &cout, c->is_train);
  if (rc == 0) rc = cond_value(&cout, &go);
  if (rc == 0) {
    int g = go ? 1 : 2;
    sg_plan *p = get_plan(st, g);
    if (!p) rc = -1;
    for (int k = 0; rc == 0 && k < st->nloc[g]; k++) in[k] = c->inputs[st->loc[g][k]];
    if (rc == 0) rc = plan_run(p, in, c->outputs, c->is_train);
  }
  free(in);
  return rc;
}

static const char *data_name(const void *param, int index) {
  (void)param;
  static char names[64][16];
  if (index < 0 || index >= 64) return NULL;
  snprintf(names[index], sizeof names[index], "data%d", index);
  return names[index];
}

#define CF_OP(var, nm, fwd, dc)                             \
  const mxw_op_def var = {.name = nm,                       \
                          .doc = dc,                        \
                          .param_size = sizeof(cf_param),   \
                          .num_inputs = MXW_VARIADIC,       \
                          .num_inputs_fn = cf_num_inputs,   \
                          .num_outputs = 1,                 \
                          .num_outputs_fn = cf_num_outputs, \
                          .infer_shape = cf_infer_shape,    \
                          .infer_type = cf_infer_type,      \
                          .forward = fwd,                   \
                          .input_name_fn = data_name,       \
                          .param_retain = cf_retain,        \
                          .param_release = cf_release}
CF_OP(mxw_op_foreach, "_foreach", foreach_forward,
      "Run a for loop over an NDArray with user-defined computation (a subgraph run per slice along axis 0)");
CF_OP(mxw_op_while_loop, "_while_loop", while_forward,
      "Run a while loop with user-defined condition and computation (subgraphs), outputs padded to max_iterations");
CF_OP(mxw_op_cond, "_cond", cond_forward, "Run an if-then-else using user-defined condition and computation");

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
  if (!(s = mxw_symbol_of_node(n, mxw_node_num_outputs(n)))) goto fail;
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
