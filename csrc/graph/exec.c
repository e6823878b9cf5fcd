/* exec.c -- the graph executor, in explicit phases (style.md lesson 7):
 *   index  -- DFS order, entry ids (node_row_ptr), consumers (mxw_exec_create);
 *   infer  -- shapes and dtypes over the whole graph, to a fixpoint, forward and backward;
 *   plan   -- intermediate entries get offsets in one arena, reused by liveness (ggml-alloc
 *             style: outputs allocated first-fit, inputs freed after their last consumer);
 *   run    -- one forward call per node on tensor views (mxw_exec_forward).
 * Infer and plan run again only when input shapes or dtypes change (MXNet's CachedOp). */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "../core/ndarray.h"
#include "graph.h"

#define ARENA_ALIGN 64

typedef struct exec_graph {
  mxw_node **nodes;
  int num_nodes;
  int *entry_base; /* node i's outputs are entries entry_base[i] .. entry_base[i+1]-1 */
  int num_entries;
  mxw_entry *heads;
  int num_heads;
  int *inputs; /* variable node ids, DFS order (= list_inputs) */
  int num_inputs;
  int *input_pos; /* node id -> position in inputs, or -1 */
} exec_graph;

static int entry_id(const exec_graph *g, const mxw_entry *e) { return g->entry_base[e->node->index] + (int)e->index; }

static void graph_free(exec_graph *g) {
  for (int i = 0; i < g->num_nodes; i++) mxw_node_release(g->nodes[i]);
  free(g->nodes);
  free(g->entry_base);
  free(g->heads);
  free(g->inputs);
  free(g->input_pos);
  memset(g, 0, sizeof *g);
}

static int graph_index(const mxw_symbol *s, exec_graph *g) {
  memset(g, 0, sizeof *g);
  MXW_TRY(mxw_graph_dfs(s->outputs, s->n, &g->nodes, &g->num_nodes));
  for (int i = 0; i < g->num_nodes; i++) mxw_node_retain(g->nodes[i]);
  g->entry_base = (int *)malloc(sizeof(int) * (size_t)(g->num_nodes + 1));
  g->heads = (mxw_entry *)malloc(sizeof(mxw_entry) * (size_t)(s->n ? s->n : 1));
  g->inputs = (int *)malloc(sizeof(int) * (size_t)(g->num_nodes ? g->num_nodes : 1));
  g->input_pos = (int *)malloc(sizeof(int) * (size_t)(g->num_nodes ? g->num_nodes : 1));
  if (!g->entry_base || !g->heads || !g->inputs || !g->input_pos) {
    graph_free(g);
    return mxw_fail("out of memory");
  }
  g->entry_base[0] = 0;
  for (int i = 0; i < g->num_nodes; i++) {
    g->entry_base[i + 1] = g->entry_base[i] + mxw_node_num_outputs(g->nodes[i]);
    g->input_pos[i] = -1;
    if (!g->nodes[i]->op) {
      g->input_pos[i] = g->num_inputs;
      g->inputs[g->num_inputs++] = i;
    }
  }
  g->num_entries = g->entry_base[g->num_nodes];
  memcpy(g->heads, s->outputs, sizeof(mxw_entry) * (size_t)s->n);
  g->num_heads = s->n;
  return 0;
}

/* ---- inference ------------------------------------------------------------------------------------ */
/* Variable hints: "__shape__" (0 = unknown dim, "()" = unknown) and "__dtype__". */
static void var_hints(const mxw_node *n, mxw_shape *shape, int *dtype) {
  const char *sh = mxw_attrs_get(&n->attrs, "__shape__");
  if (sh && shape->ndim < 0) {
    mxw_attr_spec spec = {.name = "__shape__", .type = MXW_ATTR_SHAPE, .optional = 1};
    mxw_tuple t;
    char saved[2048];
    memcpy(saved, mxw_get_last_error(), sizeof saved);
    if (mxw_attr_parse(&spec, sh, &t) == 0 && t.ndim > 0 && t.ndim <= MXW_MAX_NDIM) {
      shape->ndim = t.ndim;
      for (int i = 0; i < t.ndim; i++) shape->dims[i] = t.v[i] > 0 ? t.v[i] : -1;
    }
    mxw_fail("%s", saved); /* a bad hint is ignored, not an error */
  }
  const char *dt = mxw_attrs_get(&n->attrs, "__dtype__");
  if (dt && *dtype < 0) {
    char *end;
    long v = strtol(dt, &end, 10);
    if (end != dt && !*end && v >= 0 && v < MXW_NUM_DTYPES) *dtype = (int)v;
  }
}

static int shape_changed(const mxw_shape *a, const mxw_shape *b) { return !mxw_shape_equal(a, b); }

/* Runs the nodes' inference to a fixpoint with a worklist: every operator node once in graph
 * order, then again only when an entry it touches (an input or an output) changed, so each node
 * runs a number of times bounded by its entries' changes (an entry's shape and dtype only go
 * from unknown to known), not once per sweep of the whole graph (whole sweeps took O(n^2) on a
 * graph whose information travels against node order). Errors on a node whose inputs were all
 * known are real (reported with the node's name); failures with unknowns wait for a change. */
static int graph_infer(const exec_graph *g, mxw_shape *shapes, int *types) {
  int n_nodes = g->num_nodes, n_entries = g->num_entries, n_edges = 0, rc = -1, maxio = 1;
  for (int i = 0; i < n_nodes; i++) {
    if (!g->nodes[i]->op) continue;
    n_edges += g->nodes[i]->num_inputs;
    if (g->nodes[i]->num_inputs > maxio) maxio = g->nodes[i]->num_inputs;
    if (mxw_node_num_outputs(g->nodes[i]) > maxio) maxio = mxw_node_num_outputs(g->nodes[i]);
  }
  /* one node's input and output shapes and dtypes (any count: Mask R-CNN concatenates 80 inputs) */
  mxw_shape *in_s = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)maxio);
  mxw_shape *out_s = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)maxio);
  int *in_t = (int *)malloc(sizeof(int) * (size_t)maxio), *out_t = (int *)malloc(sizeof(int) * (size_t)maxio);
  /* consumers of each entry (CSR), the producer of each entry, and a FIFO ring of node ids */
  int *cons_base = (int *)calloc((size_t)n_entries + 1, sizeof(int));
  int *cons = (int *)malloc(sizeof(int) * (size_t)(n_edges ? n_edges : 1));
  int *producer = (int *)malloc(sizeof(int) * (size_t)(n_entries ? n_entries : 1));
  int *queue = (int *)malloc(sizeof(int) * (size_t)(n_nodes ? n_nodes : 1));
  unsigned char *queued = (unsigned char *)calloc((size_t)(n_nodes ? n_nodes : 1), 1);
  if (!cons_base || !cons || !producer || !queue || !queued || !in_s || !out_s || !in_t || !out_t) {
    mxw_fail("out of memory inferring the shapes of a graph of %d nodes", n_nodes);
    goto done;
  }
  for (int i = 0; i < n_nodes; i++) {
    for (int e = g->entry_base[i]; e < g->entry_base[i + 1]; e++) producer[e] = i;
    if (!g->nodes[i]->op) continue;
    for (int k = 0; k < g->nodes[i]->num_inputs; k++) cons_base[entry_id(g, &g->nodes[i]->inputs[k]) + 1]++;
  }
  for (int e = 0; e < n_entries; e++) cons_base[e + 1] += cons_base[e];
  {
    int *fill = (int *)malloc(sizeof(int) * (size_t)(n_entries ? n_entries : 1));
    if (!fill) {
      mxw_fail("out of memory");
      goto done;
    }
    memcpy(fill, cons_base, sizeof(int) * (size_t)n_entries);
    for (int i = 0; i < n_nodes; i++) {
      if (!g->nodes[i]->op) continue;
      for (int k = 0; k < g->nodes[i]->num_inputs; k++) cons[fill[entry_id(g, &g->nodes[i]->inputs[k])]++] = i;
    }
    free(fill);
  }
  int head = 0, count = 0;
#define ENQUEUE(id)                            \
  do {                                         \
    int id_ = (id);                            \
    if (g->nodes[id_]->op && !queued[id_]) {   \
      queued[id_] = 1;                         \
      queue[(head + count++) % n_nodes] = id_; \
    }                                          \
  } while (0)
  for (int i = 0; i < n_nodes; i++) ENQUEUE(i);
  /* a bound on the work in case an operator's inference keeps changing a known output (none
   * should; the sweeps this replaced were capped too) */
  long long budget = 64LL * ((long long)n_nodes + n_entries) + 1024;
  while (count > 0 && budget-- > 0) {
    int i = queue[head];
    head = (head + 1) % n_nodes;
    count--;
    queued[i] = 0;
    mxw_node *n = g->nodes[i];
    int nin = n->num_inputs, nout = mxw_node_num_outputs(n);
    int shapes_known = 1, types_known = 1;
    for (int k = 0; k < nin; k++) {
      int e = entry_id(g, &n->inputs[k]);
      in_s[k] = shapes[e];
      in_t[k] = types[e];
      shapes_known &= mxw_shape_known(&in_s[k]);
      types_known &= in_t[k] >= 0;
    }
    for (int k = 0; k < nout; k++) {
      out_s[k] = shapes[g->entry_base[i] + k];
      out_t[k] = types[g->entry_base[i] + k];
    }
    /* shapes and dtypes are inferred and written back independently: an error with every
     * input known is real (reported with the node and its inputs' variables); with unknowns
     * the node runs again when one of its entries changes */
    for (int what = 0; what < 2; what++) {
      int irc = what == 0 ? n->op->infer_shape(n->params->param, nin, in_s, nout, out_s)
                          : (n->op->infer_type ? n->op->infer_type : mxw_infer_type_same)(n->params->param, nin, in_t,
                                                                                          nout, out_t);
      if (irc != 0) {
        if (what == 0 ? shapes_known : types_known) {
          char ctx[1024] = "";
          size_t used = 0;
          for (int k = 0; k < nin && used < sizeof ctx - 1; k++) {
            char iname[64], sh[128];
            mxw_node_input_name(n, k, iname, sizeof iname);
            used += (size_t)snprintf(ctx + used, sizeof ctx - used, "%s%s = '%s' %s %s", k ? ", " : " (inputs: ", iname,
                                     n->inputs[k].node->name, mxw_shape_str(&in_s[k], sh, sizeof sh),
                                     mxw_dtype_name(in_t[k]));
          }
          if (nin && used < sizeof ctx - 1) snprintf(ctx + used, sizeof ctx - used, ")");
          char msg[2048];
          snprintf(msg, sizeof msg, "%s", mxw_get_last_error());
          mxw_fail("node '%s' (%s): %s%s", n->name, n->op->name, msg, ctx);
          goto done;
        }
        continue;
      }
      for (int k = 0; k < nin + nout; k++) {
        int e = k < nin ? entry_id(g, &n->inputs[k]) : g->entry_base[i] + (k - nin);
        if (what == 0) {
          const mxw_shape *ns = k < nin ? &in_s[k] : &out_s[k - nin];
          if (!shape_changed(&shapes[e], ns)) continue;
          if (k < nin && mxw_shape_known(&shapes[e])) {
            char a[128], b[128];
            mxw_fail("node '%s' (%s): input %d ('%s') has shape %s but the operator needs %s", n->name, n->op->name, k,
                     n->inputs[k].node->name, mxw_shape_str(&shapes[e], a, sizeof a), mxw_shape_str(ns, b, sizeof b));
            goto done;
          }
          shapes[e] = *ns;
        } else {
          int nt = k < nin ? in_t[k] : out_t[k - nin];
          if (types[e] == nt) continue;
          if (k < nin && types[e] >= 0) {
            mxw_fail("node '%s' (%s): input %d ('%s') has dtype %s but the operator needs %s", n->name, n->op->name, k,
                     n->inputs[k].node->name, mxw_dtype_name(types[e]), mxw_dtype_name(nt));
            goto done;
          }
          types[e] = nt;
        }
        /* entry e changed: its producer and every consumer may learn from it */
        ENQUEUE(producer[e]);
        for (int c = cons_base[e]; c < cons_base[e + 1]; c++) ENQUEUE(cons[c]);
      }
    }
  }
#undef ENQUEUE
  /* At the fixpoint, a node whose outputs are still unknown and whose inference fails is the
   * reason: report its error (e.g. a bad num_group met during deferred initialization). */
  for (int i = 0; i < g->num_nodes; i++) {
    mxw_node *n = g->nodes[i];
    if (!n->op) continue;
    int nin = n->num_inputs, nout = mxw_node_num_outputs(n), unknown = 0;
    for (int k = 0; k < nout; k++) unknown |= !mxw_shape_known(&shapes[g->entry_base[i] + k]);
    if (!unknown) continue;
    for (int k = 0; k < nin; k++) in_s[k] = shapes[entry_id(g, &n->inputs[k])];
    for (int k = 0; k < nout; k++) out_s[k] = shapes[g->entry_base[i] + k];
    if (n->op->infer_shape(n->params->param, nin, in_s, nout, out_s) != 0) {
      char msg[2048];
      snprintf(msg, sizeof msg, "%s", mxw_get_last_error());
      mxw_fail("node '%s' (%s): %s", n->name, n->op->name, msg);
      goto done;
    }
  }
  rc = 0;
done:
  free(cons_base);
  free(cons);
  free(producer);
  free(queue);
  free(queued);
  free(in_s);
  free(out_s);
  free(in_t);
  free(out_t);
  return rc;
}

static int init_entries(const exec_graph *g, mxw_shape **shapes, int **types) {
  *shapes = (mxw_shape *)malloc(sizeof(mxw_shape) * (size_t)(g->num_entries ? g->num_entries : 1));
  *types = (int *)malloc(sizeof(int) * (size_t)(g->num_entries ? g->num_entries : 1));
  if (!*shapes || !*types) {
    free(*shapes);
    free(*types);
    return mxw_fail("out of memory");
  }
  for (int e = 0; e < g->num_entries; e++) {
    (*shapes)[e].ndim = -1;
    (*types)[e] = -1;
  }
  return 0;
}

/* ---- Symbol.infer_shape / infer_type -------------------------------------------------------------- */
static cJSON *shape_json(const mxw_shape *s) {
  if (!mxw_shape_known(s)) {
    if (s->ndim < 0) return cJSON_CreateNull();
  }
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < s->ndim; i++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber(s->dims[i] < 0 ? 0 : (double)s->dims[i]));
  return a;
}

static char *g_infer_result = NULL;

/* request: {"shapes": {name: [dims]}, "dtypes": {name: flag}}; result: {"args": [{name, shape,
 * dtype}], "outputs": [...], "aux": [...], "complete": bool (shapes), "types_complete": bool} with shape null when
 * unknown and unknown dims as 0 (MXNet's legacy convention). */
const char *mxw_sym_infer(const mxw_symbol *s, const char *request) {
  if (!s || !request) {
    mxw_fail("NULL argument");
    return NULL;
  }
  cJSON *req = cJSON_Parse(request);
  if (!req) {
    mxw_fail("invalid inference request");
    return NULL;
  }
  exec_graph g;
  mxw_shape *shapes = NULL;
  int *types = NULL;
  char *result = NULL;
  if (graph_index(s, &g) != 0) {
    cJSON_Delete(req);
    return NULL;
  }
  if (init_entries(&g, &shapes, &types) != 0) goto done;
  const cJSON *jsh = cJSON_GetObjectItemCaseSensitive(req, "shapes");
  const cJSON *jdt = cJSON_GetObjectItemCaseSensitive(req, "dtypes");
  for (const cJSON *it = jsh ? jsh->child : NULL; it; it = it->next) {
    int found = 0;
    for (int k = 0; k < g.num_inputs; k++) {
      mxw_node *v = g.nodes[g.inputs[k]];
      if (strcmp(v->name, it->string) != 0) continue;
      found = 1;
      mxw_shape *sh = &shapes[g.entry_base[g.inputs[k]]];
      int nd = cJSON_GetArraySize(it);
      if (!cJSON_IsArray(it) || nd > MXW_MAX_NDIM) {
        mxw_fail("shape for '%s' must be an array of at most %d dims", it->string, MXW_MAX_NDIM);
        goto done;
      }
      sh->ndim = nd;
      for (int d = 0; d < nd; d++) {
        const cJSON *x = cJSON_GetArrayItem(it, d);
        sh->dims[d] = cJSON_IsNumber(x) && x->valuedouble > 0 ? (int64_t)x->valuedouble : -1;
      }
    }
    if (!found) {
      mxw_fail("cannot infer with a shape for '%s': the graph has no input of that name", it->string);
      goto done;
    }
  }
  for (const cJSON *it = jdt ? jdt->child : NULL; it; it = it->next) {
    for (int k = 0; k < g.num_inputs; k++)
      if (strcmp(g.nodes[g.inputs[k]]->name, it->string) == 0 && cJSON_IsNumber(it))
        types[g.entry_base[g.inputs[k]]] = it->valueint;
  }
  for (int k = 0; k < g.num_inputs; k++) {
    int e = g.entry_base[g.inputs[k]];
    var_hints(g.nodes[g.inputs[k]], &shapes[e], &types[e]);
  }
  if (graph_infer(&g, shapes, types) != 0) goto done;
  {
    /* aux = variables at FMutateInputs positions */
    uint8_t *is_aux = (uint8_t *)calloc((size_t)(g.num_nodes ? g.num_nodes : 1), 1);
    if (!is_aux) {
      mxw_fail("out of memory");
      goto done;
    }
    for (int i = 0; i < g.num_nodes; i++)
      for (int k = 0; k < g.nodes[i]->num_inputs; k++)
        if (mxw_node_is_mutated_input(g.nodes[i], k) && !g.nodes[i]->inputs[k].node->op)
          is_aux[g.nodes[i]->inputs[k].node->index] = 1;
    cJSON *res = cJSON_CreateObject();
    cJSON *args = cJSON_AddArrayToObject(res, "args"), *aux = cJSON_AddArrayToObject(res, "aux");
    cJSON *outs = cJSON_AddArrayToObject(res, "outputs");
    int complete = 1, types_complete = 1;
    for (int k = 0; k < g.num_inputs; k++) {
      int e = g.entry_base[g.inputs[k]];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "name", g.nodes[g.inputs[k]]->name);
      cJSON_AddItemToObject(o, "shape", shape_json(&shapes[e]));
      cJSON_AddNumberToObject(o, "dtype", types[e]);
      complete &= mxw_shape_known(&shapes[e]);
      types_complete &= types[e] >= 0;
      cJSON_AddItemToArray(is_aux[g.inputs[k]] ? aux : args, o);
    }
    for (int h = 0; h < g.num_heads; h++) {
      int e = entry_id(&g, &g.heads[h]);
      cJSON *o = cJSON_CreateObject();
      cJSON_AddItemToObject(o, "shape", shape_json(&shapes[e]));
      cJSON_AddNumberToObject(o, "dtype", types[e]);
      complete &= mxw_shape_known(&shapes[e]);
      types_complete &= types[e] >= 0;
      cJSON_AddItemToArray(outs, o);
    }
    cJSON_AddBoolToObject(res, "complete", complete);
    cJSON_AddBoolToObject(res, "types_complete", types_complete);
    result = cJSON_PrintUnformatted(res);
    cJSON_Delete(res);
    free(is_aux);
    if (!result) mxw_fail("out of memory");
  }
done:
  free(shapes);
  free(types);
  graph_free(&g);
  cJSON_Delete(req);
  free(g_infer_result);
  g_infer_result = result;
  return result;
}

/* ---- the executor ---------------------------------------------------------------------------------- */
struct mxw_executor {
  exec_graph g;
  mxw_shape *shapes;
  int *types;
  /* the signature of the last bind: input shapes and dtypes */
  mxw_shape *bound_shapes;
  int *bound_types;
  int planned;
  /* plan */
  int64_t *offset; /* per entry: arena offset, -1 = not in the arena */
  uint8_t *arena;
  size_t arena_bytes, arena_cap;
  mxw_ndarray **unbound; /* zero arrays for unbound inputs (e.g. loss labels) */
  int *last_use;
  mxw_tensor *tin, *tout;
  void **entry_data;
  int monitor;    /* keep every entry in its own buffer so it can be read after the run */
  int *consumers; /* per entry: how many node inputs read it */
  int *fused_act; /* per node: activation its op applies to its own output (fusion) */
  uint8_t *skip;  /* per node: an activation fused into its producer */
  /* BatchNorm folding (inference runs only): per node, the BatchNorm whose per-channel affine a
   * Convolution applies to its own output (-1: none), and whether a BatchNorm is so folded */
  int *fold;
  uint8_t *folded;
  float *affine_buf; /* the folded affine of the node being run: scale[C], shift[C] */
  int64_t affine_cap;
  char *monitor_info;
  /* training executors (cached_op.c): nodes [0, split) run forward, [split, n) backward, with
   * arenas owned by each recorded call; graph outputs stay in the arena (copied out) */
  int train;
  int split;
  int *tie; /* per input: the head whose shape and dtype it takes (output gradients), or -1 */
  /* heads the caller's buffers hold (a backward's gradients, written straight into the
   * variables' gradient arrays): per head the dtype and shape such a buffer has (dtype -1: in the
   * arena); per entry the head it is when the plan put it outside the arena, else -1 */
  int *ext_dtype;
  mxw_shape *ext_shape;
  int *ext_head;
  /* the hybridized-training plans of this (forward) executor, cached_op.c */
  struct mxw_train_plans *plans;
  int binds; /* how many times infer + plan ran */
};

int mxw_exec_free(mxw_executor *ex) {
  if (!ex) return 0;
  for (int k = 0; ex->unbound && k < ex->g.num_inputs; k++) mxw_ndarray_free(ex->unbound[k]);
  free(ex->unbound);
  free(ex->shapes);
  free(ex->types);
  free(ex->bound_shapes);
  free(ex->bound_types);
  free(ex->offset);
  if (ex->arena) mxw_memory_account(-(double)ex->arena_cap);
  free(ex->arena);
  free(ex->last_use);
  free(ex->tin);
  free(ex->tout);
  free(ex->entry_data);
  free(ex->monitor_info);
  free(ex->consumers);
  free(ex->fused_act);
  free(ex->skip);
  free(ex->fold);
  free(ex->folded);
  free(ex->affine_buf);
  free(ex->tie);
  free(ex->ext_dtype);
  free(ex->ext_shape);
  free(ex->ext_head);
  mxw_train_plans_free(ex->plans);
  graph_free(&ex->g);
  free(ex);
  return 0;
}

int mxw_exec_create(const mxw_symbol *s, mxw_executor **out) {
  MXW_CHECK(s && out, "NULL argument");
  mxw_executor *ex = (mxw_executor *)calloc(1, sizeof *ex);
  MXW_CHECK(ex != NULL, "out of memory");
  if (graph_index(s, &ex->g) != 0) {
    free(ex);
    return -1;
  }
  const exec_graph *g = &ex->g;
  size_t ne = (size_t)(g->num_entries ? g->num_entries : 1), ni = (size_t)(g->num_inputs ? g->num_inputs : 1);
  int maxio = 1;
  for (int i = 0; i < g->num_nodes; i++) {
    if (g->nodes[i]->num_inputs > maxio) maxio = g->nodes[i]->num_inputs;
    if (mxw_node_num_outputs(g->nodes[i]) > maxio) maxio = mxw_node_num_outputs(g->nodes[i]);
  }
  ex->shapes = (mxw_shape *)malloc(sizeof(mxw_shape) * ne);
  ex->types = (int *)malloc(sizeof(int) * ne);
  ex->bound_shapes = (mxw_shape *)calloc(ni, sizeof(mxw_shape));
  ex->bound_types = (int *)calloc(ni, sizeof(int));
  ex->offset = (int64_t *)malloc(sizeof(int64_t) * ne);
  ex->unbound = (mxw_ndarray **)calloc(ni, sizeof(mxw_ndarray *));
  ex->last_use = (int *)malloc(sizeof(int) * ne);
  ex->tin = (mxw_tensor *)malloc(sizeof(mxw_tensor) * (size_t)maxio);
  ex->tout = (mxw_tensor *)malloc(sizeof(mxw_tensor) * (size_t)maxio);
  ex->entry_data = (void **)calloc(ne, sizeof(void *));
  if (!ex->shapes || !ex->types || !ex->bound_shapes || !ex->bound_types || !ex->offset || !ex->unbound ||
      !ex->last_use || !ex->tin || !ex->tout || !ex->entry_data) {
    mxw_exec_free(ex);
    return mxw_fail("out of memory");
  }
  ex->consumers = (int *)calloc(ne, sizeof(int));
  ex->fused_act = (int *)calloc((size_t)(g->num_nodes ? g->num_nodes : 1), sizeof(int));
  ex->skip = (uint8_t *)calloc((size_t)(g->num_nodes ? g->num_nodes : 1), 1);
  ex->fold = (int *)malloc(sizeof(int) * (size_t)(g->num_nodes ? g->num_nodes : 1));
  ex->folded = (uint8_t *)calloc((size_t)(g->num_nodes ? g->num_nodes : 1), 1);
  if (!ex->consumers || !ex->fused_act || !ex->skip || !ex->fold || !ex->folded) {
    mxw_exec_free(ex);
    return mxw_fail("out of memory");
  }
  for (int i = 0; i < g->num_nodes; i++) ex->fold[i] = -1;
  /* liveness: the last node reading each entry (heads live to the end) */
  for (int e = 0; e < g->num_entries; e++) ex->last_use[e] = -1;
  for (int i = 0; i < g->num_nodes; i++)
    for (int k = 0; k < g->nodes[i]->num_inputs; k++) {
      int e = entry_id(g, &g->nodes[i]->inputs[k]);
      ex->last_use[e] = i;
      ex->consumers[e]++;
    }
  for (int h = 0; h < g->num_heads; h++) ex->last_use[entry_id(g, &g->heads[h])] = g->num_nodes;
  *out = ex;
  return 0;
}

int mxw_exec_num_inputs(const mxw_executor *ex) { return ex ? ex->g.num_inputs : 0; }
const char *mxw_exec_input_name(const mxw_executor *ex, int i) {
  return ex && i >= 0 && i < ex->g.num_inputs ? ex->g.nodes[ex->g.inputs[i]]->name : NULL;
}
mxw_node *mxw_exec_input_node(const mxw_executor *ex, int i) {
  return ex && i >= 0 && i < ex->g.num_inputs ? ex->g.nodes[ex->g.inputs[i]] : NULL;
}
int mxw_exec_num_outputs(const mxw_executor *ex) { return ex ? ex->g.num_heads : 0; }
size_t mxw_exec_arena_bytes(const mxw_executor *ex) { return ex ? ex->arena_bytes : 0; }
int mxw_exec_num_fused(const mxw_executor *ex) {
  int n = 0;
  for (int i = 0; ex && ex->planned && i < ex->g.num_nodes; i++) n += ex->skip[i] + ex->folded[i];
  return n;
}

/* First-fit allocation over a free list kept sorted by offset. */
typedef struct block {
  size_t off, size;
} block;

static int plan_memory(mxw_executor *ex) {
  const exec_graph *g = &ex->g;
  block *free_list = (block *)malloc(sizeof(block) * (size_t)(g->num_entries + 2));
  MXW_CHECK(free_list != NULL, "out of memory");
  int nfree = 0;
  size_t end = 0;
  for (int e = 0; e < g->num_entries; e++) ex->offset[e] = -1;
  if (ex->ext_head) {
    /* a head computed by a backward node, the first head of its entry, whose dtype and shape are
     * those of the caller's buffer, is written there: no arena space, no copy */
    for (int e = 0; e < g->num_entries; e++) ex->ext_head[e] = -1;
    for (int h = 0; h < g->num_heads; h++) {
      const mxw_entry *he = &g->heads[h];
      int e = entry_id(g, he), dup = 0;
      for (int j = 0; j < h; j++) dup |= entry_id(g, &g->heads[j]) == e;
      if (dup)
        ex->ext_head[e] = -1;
      else if (ex->ext_dtype[h] >= 0 && he->node->op && he->node->index >= ex->split &&
               ex->types[e] == ex->ext_dtype[h] && mxw_shape_equal(&ex->shapes[e], &ex->ext_shape[h]))
        ex->ext_head[e] = h;
    }
  }
  memset(ex->fused_act, 0, sizeof(int) * (size_t)g->num_nodes);
  memset(ex->skip, 0, (size_t)g->num_nodes);
  memset(ex->folded, 0, (size_t)g->num_nodes);
  for (int i = 0; i < g->num_nodes; i++) ex->fold[i] = -1;
  uint8_t *donated = (uint8_t *)calloc((size_t)(g->num_entries ? g->num_entries : 1), 1);
  if (!donated) {
    free(free_list);
    return mxw_fail("out of memory");
  }
  for (int i = 0; i < g->num_nodes; i++) {
    mxw_node *n = g->nodes[i];
    if (!n->op) continue;
    int nout = mxw_node_num_outputs(n);
    /* BatchNorm folding: at inference a BatchNorm after a Convolution (its only reader) is the
     * convolution's own per-channel affine on its output (as MXNet's MKL-DNN subgraph backend,
     * ONNX Runtime and TF.js's converter fold it). The plan serves training runs too: the
     * BatchNorm's output takes the convolution's buffer (it computes in place), so that the
     * folded convolution writes where the BatchNorm would have. */
    if (!ex->train && !ex->monitor && n->op->as_affine && n->num_inputs == 5 && nout >= 1) {
      mxw_node *prod = n->inputs[0].node;
      const int e_in = entry_id(g, &n->inputs[0]), e_out = g->entry_base[i], nd = ex->shapes[e_in].ndim;
      int ok = prod->op && prod->op->affine_axis && n->inputs[0].index == 0 && ex->consumers[e_in] == 1 &&
               ex->last_use[e_in] == i && ex->offset[e_in] >= 0 && ex->types[e_in] == MXW_FLOAT32 &&
               ex->types[e_out] == MXW_FLOAT32 && ex->fold[prod->index] < 0 && !ex->fused_act[prod->index];
      for (int k = 1; k < nout && ok; k++) ok = ex->consumers[e_out + k] == 0 && ex->last_use[e_out + k] < 0;
      if (ok) {
        const int axis = n->op->as_affine(n->params->param, nd, NULL, NULL, NULL);
        ok = axis >= 0 && axis == prod->op->affine_axis(prod->params->param, nd);
        for (int k = 1; k < 5 && ok; k++) { /* gamma, beta, moving_mean, moving_var: one per channel */
          const int ek = entry_id(g, &n->inputs[k]);
          ok = mxw_shape_size(&ex->shapes[ek]) == ex->shapes[e_in].dims[axis] && mxw_dtype_is_float(ex->types[ek]);
        }
      }
      if (ok) {
        ex->fold[prod->index] = i;
        ex->folded[i] = 1;
        if (ex->last_use[e_out] != g->num_nodes) { /* a graph output is the caller's array */
          ex->offset[e_out] = ex->offset[e_in];
          donated[e_in] = 1;
        }
      }
    }
    /* in place: output 0 takes input 0's buffer when input 0 is an intermediate that dies here
     * (not for graph outputs: those are written straight into the caller's arrays; a training
     * graph's values all live in its arena, those the backward reads to its end) */
    if (n->op->inplace && !ex->monitor && n->num_inputs >= 1 &&
        (ex->train || ex->last_use[g->entry_base[i]] != g->num_nodes) &&
        !(ex->ext_head && ex->ext_head[g->entry_base[i]] >= 0)) {
      int e_in = entry_id(g, &n->inputs[0]), e_out = g->entry_base[i];
      int reused = 0;
      for (int k = 1; k < n->num_inputs; k++) reused |= entry_id(g, &n->inputs[k]) == e_in;
      if (ex->offset[e_in] >= 0 && ex->last_use[e_in] == i && !reused && ex->types[e_in] == ex->types[e_out] &&
          mxw_shape_size(&ex->shapes[e_in]) == mxw_shape_size(&ex->shapes[e_out])) {
        ex->offset[e_out] = ex->offset[e_in];
        donated[e_in] = 1;
        /* fusion: an activation that is the only reader of a fusable producer's output is
         * applied by the producer itself (on cache-hot data), and its own node is skipped */
        mxw_node *prod = n->inputs[0].node;
        int act = n->op->as_activation ? n->op->as_activation(n->params->param) : 0;
        if (act && prod->op && prod->op->fusable_act && n->inputs[0].index == 0 && ex->consumers[e_in] == 1 &&
            mxw_dtype_is_float(ex->types[e_in]) && !ex->fused_act[prod->index]) {
          ex->fused_act[prod->index] = act;
          ex->skip[i] = 1;
        }
      }
    }
    const int tape = mxw_node_tape_output(n);
    for (int k = 0; k < nout; k++) {
      int e = g->entry_base[i] + k;
      if (ex->offset[e] >= 0) continue;                            /* placed in place above */
      if (k == tape && ex->last_use[e] < 0) continue;              /* no backward reads it: no tape kept (NULL data) */
      if (ex->ext_head && ex->ext_head[e] >= 0) continue;          /* the caller's buffer */
      if (ex->last_use[e] == g->num_nodes && !ex->train) continue; /* a graph output: lives in the caller's array */
      size_t bytes = (size_t)mxw_shape_size(&ex->shapes[e]) * (size_t)mxw_dtype_size(ex->types[e]);
      bytes = (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
      if (bytes == 0) bytes = ARENA_ALIGN;
      int best = -1;
      for (int b = 0; b < nfree && !ex->monitor; b++)
        if (free_list[b].size >= bytes) {
          best = b;
          break;
        }
      if (best >= 0) {
        ex->offset[e] = (int64_t)free_list[best].off;
        free_list[best].off += bytes;
        free_list[best].size -= bytes;
        if (free_list[best].size == 0) {
          memmove(free_list + best, free_list + best + 1, sizeof(block) * (size_t)(nfree - best - 1));
          nfree--;
        }
      } else {
        ex->offset[e] = (int64_t)end;
        end += bytes;
      }
    }
    /* release what is dead after this node: its inputs at their last use, and outputs nobody reads */
    for (int pass = 0; pass < 2; pass++) {
      int cnt = pass == 0 ? n->num_inputs : nout;
      for (int k = 0; k < cnt; k++) {
        int e = pass == 0 ? entry_id(g, &n->inputs[k]) : g->entry_base[i] + k;
        if (ex->offset[e] < 0 || ex->last_use[e] > i || donated[e]) continue;
        if (pass == 0 && ex->last_use[e] != i) continue;
        /* an entry read twice by this node is freed once */
        int dup = 0;
        for (int j = 0; j < k && pass == 0; j++) dup |= entry_id(g, &n->inputs[j]) == e;
        if (dup) continue;
        size_t bytes = (size_t)mxw_shape_size(&ex->shapes[e]) * (size_t)mxw_dtype_size(ex->types[e]);
        bytes = (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
        if (bytes == 0) bytes = ARENA_ALIGN;
        size_t off = (size_t)ex->offset[e];
        int pos = 0;
        while (pos < nfree && free_list[pos].off < off) pos++;
        memmove(free_list + pos + 1, free_list + pos, sizeof(block) * (size_t)(nfree - pos));
        free_list[pos].off = off;
        free_list[pos].size = bytes;
        nfree++;
        /* coalesce with neighbours */
        if (pos + 1 < nfree && free_list[pos].off + free_list[pos].size == free_list[pos + 1].off) {
          free_list[pos].size += free_list[pos + 1].size;
          memmove(free_list + pos + 1, free_list + pos + 2, sizeof(block) * (size_t)(nfree - pos - 2));
          nfree--;
        }
        if (pos > 0 && free_list[pos - 1].off + free_list[pos - 1].size == free_list[pos].off) {
          free_list[pos - 1].size += free_list[pos].size;
          memmove(free_list + pos, free_list + pos + 1, sizeof(block) * (size_t)(nfree - pos - 1));
          nfree--;
        }
      }
    }
  }
  free(free_list);
  free(donated);
  /* a training graph's arenas belong to the recorded calls; an executor's own is allocated at its
   * first run (ensure_arena): a forward graph bound only for its shapes (by a training plan) takes none */
  ex->arena_bytes = end;
  return 0;
}

static int ensure_arena(mxw_executor *ex) {
  size_t end = ex->arena_bytes;
  if (ex->arena && end <= ex->arena_cap) return 0;
  size_t cap = end ? end : ARENA_ALIGN;
  uint8_t *a = (uint8_t *)aligned_alloc(ARENA_ALIGN, cap);
  MXW_CHECK(a != NULL, "out of memory allocating %zu bytes of intermediate buffers", end);
  if (ex->arena) mxw_memory_account(-(double)ex->arena_cap);
  free(ex->arena);
  ex->arena = a;
  ex->arena_cap = cap;
  mxw_memory_account((double)cap);
  return 0;
}

/* infer + plan for the bound inputs' shapes and dtypes */
static int bind(mxw_executor *ex, mxw_ndarray *const *inputs) {
  exec_graph *g = &ex->g;
  for (int e = 0; e < g->num_entries; e++) {
    ex->shapes[e].ndim = -1;
    ex->types[e] = -1;
  }
  for (int k = 0; k < g->num_inputs; k++) {
    int e = g->entry_base[g->inputs[k]];
    if (inputs[k]) {
      ex->shapes[e] = inputs[k]->t.shape;
      ex->types[e] = inputs[k]->t.dtype;
    } else {
      var_hints(g->nodes[g->inputs[k]], &ex->shapes[e], &ex->types[e]);
    }
  }
  MXW_TRY(graph_infer(g, ex->shapes, ex->types));
  for (int k = 0; k < g->num_inputs; k++) {
    int e = g->entry_base[g->inputs[k]];
    mxw_node *v = g->nodes[g->inputs[k]];
    if (inputs[k]) {
      char a[128], b[128];
      if (!mxw_shape_equal(&ex->shapes[e], &inputs[k]->t.shape))
        return mxw_fail("input '%s' has shape %s but the graph needs %s", v->name,
                        mxw_shape_str(&inputs[k]->t.shape, a, sizeof a), mxw_shape_str(&ex->shapes[e], b, sizeof b));
      if (ex->types[e] != inputs[k]->t.dtype)
        return mxw_fail("input '%s' has dtype %s but the graph needs %s", v->name, mxw_dtype_name(inputs[k]->t.dtype),
                        mxw_dtype_name(ex->types[e]));
      continue;
    }
    /* a training graph's output gradient: the shape and dtype of its head */
    if (ex->tie && ex->tie[k] >= 0) {
      int he = entry_id(g, &g->heads[ex->tie[k]]);
      ex->shapes[e] = ex->shapes[he];
      ex->types[e] = ex->types[he];
      MXW_TRY(graph_infer(g, ex->shapes, ex->types));
    }
    /* unbound (e.g. a loss head's label): zeros of the inferred shape */
    if (ex->types[e] < 0) ex->types[e] = MXW_FLOAT32;
    char b[128];
    if (!mxw_shape_known(&ex->shapes[e]))
      return mxw_fail("input '%s' is not bound and its shape cannot be inferred (got %s)", v->name,
                      mxw_shape_str(&ex->shapes[e], b, sizeof b));
    mxw_ndarray_free(ex->unbound[k]);
    ex->unbound[k] = mxw_ndarray_zeros(&ex->shapes[e], ex->types[e]);
    if (!ex->unbound[k]) return -1;
  }
  MXW_TRY(graph_infer(g, ex->shapes, ex->types)); /* with the unbound inputs' dtypes settled */
  for (int i = 0; i < g->num_nodes; i++) {
    mxw_node *n = g->nodes[i];
    if (!n->op) continue;
    for (int k = 0; k < mxw_node_num_outputs(n); k++) {
      int e = g->entry_base[i] + k;
      char b[128];
      if (!mxw_shape_known(&ex->shapes[e]) || ex->types[e] < 0)
        return mxw_fail("cannot infer the shape or dtype of output %d of node '%s' (%s): got %s", k, n->name,
                        n->op->name, mxw_shape_str(&ex->shapes[e], b, sizeof b));
    }
  }
  MXW_TRY(plan_memory(ex));
  ex->binds++;
  for (int k = 0; k < g->num_inputs; k++) {
    ex->bound_shapes[k] = inputs[k] ? inputs[k]->t.shape : (mxw_shape){-1, {0}};
    ex->bound_types[k] = inputs[k] ? inputs[k]->t.dtype : -1;
  }
  ex->planned = 1;
  return 0;
}

/* ---- monitoring (registerOpHook): every node's inputs and outputs after a run ------------------ */
int mxw_exec_set_monitor(mxw_executor *ex, int on) {
  MXW_CHECK(ex != NULL, "NULL executor");
  if (ex->monitor != (on != 0)) {
    ex->monitor = on != 0;
    ex->planned = 0; /* re-plan: monitored entries get buffers of their own */
  }
  return 0;
}

/* JSON [{"node", "op", "name", "entry", "input"}] in execution order: for each op node, its
 * inputs (input: true, named <node>_<input name>, or <node>_input<i> for ops MXNet gives no input names) then its
 * outputs (<node>_<output name>). */
const char *mxw_exec_monitor_info(mxw_executor *ex) {
  if (!ex) {
    mxw_fail("NULL executor");
    return NULL;
  }
  exec_graph *g = &ex->g;
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; i < g->num_nodes; i++) {
    mxw_node *n = g->nodes[i];
    if (!n->op) continue;
    for (int pass = 0; pass < 2; pass++) {
      int cnt = pass == 0 ? n->num_inputs : mxw_node_num_outputs(n);
      for (int k = 0; k < cnt; k++) {
        if (pass == 1 && k == mxw_node_tape_output(n)) continue; /* internal, and without a value at inference */
        char part[64], name[600];
        if (pass == 0 && !mxw_op_lists_input_names(n->op))
          snprintf(part, sizeof part, "input%d", k);
        else if (pass == 0)
          mxw_node_input_name(n, k, part, sizeof part);
        else
          mxw_node_output_name(n, k, part, sizeof part);
        snprintf(name, sizeof name, "%s_%s", n->name, part);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "node", n->name);
        cJSON_AddStringToObject(o, "op", n->op->name);
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddNumberToObject(o, "entry", pass == 0 ? entry_id(g, &n->inputs[k]) : g->entry_base[i] + k);
        cJSON_AddBoolToObject(o, "input", pass == 0);
        cJSON_AddItemToArray(arr, o);
      }
    }
  }
  free(ex->monitor_info);
  ex->monitor_info = cJSON_PrintUnformatted(arr);
  cJSON_Delete(arr);
  if (!ex->monitor_info) mxw_fail("out of memory");
  return ex->monitor_info;
}

/* A copy of an entry's value from the last run (monitoring on). Caller owns *out. */
int mxw_exec_entry_copy(const mxw_executor *ex, int entry, mxw_ndarray **out) {
  MXW_CHECK(ex && out, "NULL argument");
  MXW_CHECK(ex->monitor && ex->planned, "entries can be read only after a monitored run");
  MXW_CHECK(entry >= 0 && entry < ex->g.num_entries, "entry %d out of range", entry);
  MXW_CHECK(ex->entry_data[entry] != NULL, "entry %d has no value", entry);
  mxw_ndarray *a = mxw_ndarray_alloc(&ex->shapes[entry], ex->types[entry]);
  if (!a) return -1;
  memcpy(a->t.data, ex->entry_data[entry],
         (size_t)mxw_shape_size(&ex->shapes[entry]) * (size_t)mxw_dtype_size(ex->types[entry]));
  *out = a;
  return 0;
}

static int exec_forward(mxw_executor *ex, int num_inputs, mxw_ndarray *const *inputs, int is_train, int *num_outputs,
                        mxw_ndarray **outputs, int use_given);

int mxw_exec_forward(mxw_executor *ex, int num_inputs, mxw_ndarray *const *inputs, int is_train, int *num_outputs,
                     mxw_ndarray **outputs) {
  return exec_forward(ex, num_inputs, inputs, is_train, num_outputs, outputs, 0);
}

/* The same, writing head h into outputs[h] where it is non-NULL (autograd's backward writes
 * grad_req='write' gradients straight into the variables' buffers). */
int mxw_exec_forward_into(mxw_executor *ex, int num_inputs, mxw_ndarray *const *inputs, int is_train, int *num_outputs,
                          mxw_ndarray **outputs) {
  return exec_forward(ex, num_inputs, inputs, is_train, num_outputs, outputs, 1);
}

/* The call of Convolution node i with the BatchNorm folded into it (an inference run): the
 * BatchNorm's affine from its current gamma, beta and moving statistics, its activation, and its
 * output buffer as the convolution's. */
static int fold_affine(mxw_executor *ex, int i, mxw_op_call *call) {
  exec_graph *g = &ex->g;
  const int j = ex->fold[i];
  mxw_node *bn = g->nodes[j];
  mxw_tensor bt[5];
  for (int k = 0; k < 5; k++) {
    const int e = entry_id(g, &bn->inputs[k]);
    bt[k] = (mxw_tensor){ex->entry_data[e], ex->types[e], ex->shapes[e]};
  }
  const int64_t C = mxw_shape_size(&bt[3].shape);
  if (2 * C > ex->affine_cap) {
    float *b = (float *)realloc(ex->affine_buf, sizeof(float) * (size_t)(2 * C));
    MXW_CHECK(b != NULL, "out of memory");
    ex->affine_buf = b;
    ex->affine_cap = 2 * C;
  }
  if (bn->op->as_affine(bn->params->param, bt[0].shape.ndim, bt, ex->affine_buf, ex->affine_buf + C) < 0)
    return mxw_fail("node '%s' (%s): cannot fold into '%s'", bn->name, bn->op->name, g->nodes[i]->name);
  call->affine = ex->affine_buf;
  call->fused_act = ex->fused_act[j];
  ex->tout[0].data = ex->entry_data[g->entry_base[j]];
  return 0;
}

static int exec_forward(mxw_executor *ex, int num_inputs, mxw_ndarray *const *inputs, int is_train, int *num_outputs,
                        mxw_ndarray **outputs, int use_given) {
  MXW_CHECK(ex && num_outputs && outputs && (num_inputs == 0 || inputs), "NULL argument");
  exec_graph *g = &ex->g;
  MXW_CHECK(num_inputs == g->num_inputs, "the graph has %d inputs, %d given", g->num_inputs, num_inputs);
  MXW_CHECK(*num_outputs >= g->num_heads, "room for %d outputs given, the graph has %d", *num_outputs, g->num_heads);
  if (mxw_autograd_is_recording() && !ex->train && !ex->monitor) { /* hybridized training (cached_op.c) */
    int handled = 0;
    int rc = mxw_cached_forward_record(ex, num_inputs, inputs, is_train, num_outputs, outputs, &handled);
    if (rc != 0 || handled) return rc;
  }
  int rebind = !ex->planned;
  for (int k = 0; k < num_inputs && !rebind; k++) {
    if (inputs[k])
      rebind = ex->bound_types[k] != inputs[k]->t.dtype || !mxw_shape_equal(&ex->bound_shapes[k], &inputs[k]->t.shape);
    else
      rebind = ex->bound_types[k] != -1;
  }
  if (rebind) {
    ex->planned = 0;
    MXW_TRY(bind(ex, inputs));
  }
  MXW_TRY(ensure_arena(ex));
#ifdef MXW_POISON_OUTPUTS
  if (ex->arena) memset(ex->arena, 0xFF, ex->arena_cap);
#endif
  /* outputs: fresh arrays the caller owns, or (use_given) the caller's own where outputs[h] is
   * non-NULL (same shape and dtype); the heads' producers write straight into them */
  int nh = g->num_heads;
  /* per head: its output array, whether the caller gave it, whether its producer writes into it
   * (on the stack for the usual few heads; a training graph has one per parameter gradient) */
  mxw_ndarray *outs_small[16];
  uint8_t flags_small[32];
  mxw_ndarray **outs = outs_small;
  uint8_t *given = flags_small, *claimed;
  if (nh > 16) {
    outs = (mxw_ndarray **)malloc(sizeof(mxw_ndarray *) * (size_t)nh);
    given = (uint8_t *)malloc((size_t)nh * 2);
    if (!outs || !given) {
      free(outs);
      free(given);
      return mxw_fail("out of memory");
    }
  }
  claimed = given + nh;
  memset(given, 0, (size_t)nh * 2);
  int rc = -1;
  for (int h = 0; h < nh; h++) {
    int e = entry_id(g, &g->heads[h]);
    if (use_given && outputs[h]) {
      char a[128], b[128];
      if (!mxw_shape_equal(&outputs[h]->t.shape, &ex->shapes[e]) || outputs[h]->t.dtype != ex->types[e]) {
        mxw_fail("output %d has shape %s and dtype %s, the graph gives %s and %s", h,
                 mxw_shape_str(&outputs[h]->t.shape, a, sizeof a), mxw_dtype_name(outputs[h]->t.dtype),
                 mxw_shape_str(&ex->shapes[e], b, sizeof b), mxw_dtype_name(ex->types[e]));
        goto out;
      }
      for (int k = 0; k < num_inputs; k++)
        if (inputs[k] && inputs[k]->storage == outputs[h]->storage) {
          mxw_fail("output %d shares memory with input %d", h, k);
          goto out;
        }
      given[h] = 1;
    }
  }
  for (int h = 0; h < nh; h++) outs[h] = NULL;
  for (int h = 0; h < nh; h++) {
    int e = entry_id(g, &g->heads[h]);
    if (given[h] && outputs[h]) {
      /* not cleared: every op writes each element of its outputs (inside a graph they are arena
       * memory), and a head no op writes is copied after the run. (Clearing paid while the GEMM
       * wrote a small-batch weight gradient in tiles, missing on every row; it writes such
       * products row by row now: MLP batch-1 hybridized step 0.232 -> 0.219 ms without it.)
       * Builds with MXW_POISON_OUTPUTS (the native tests) fill the caller's arrays and the arena
       * with NaN bytes instead, so a kernel that leaves an element unwritten fails its tests. */
      outs[h] = outputs[h];
#ifdef MXW_POISON_OUTPUTS
      memset(outs[h]->t.data, 0xFF, (size_t)mxw_shape_size(&ex->shapes[e]) * (size_t)mxw_dtype_size(ex->types[e]));
#endif
      continue;
    }
    outs[h] = mxw_ndarray_alloc(&ex->shapes[e], ex->types[e]);
    if (!outs[h]) goto fail;
  }
  for (int e = 0; e < g->num_entries; e++) ex->entry_data[e] = ex->offset[e] >= 0 ? ex->arena + ex->offset[e] : NULL;
  for (int k = 0; k < g->num_inputs; k++) {
    mxw_ndarray *a = inputs[k] ? inputs[k] : ex->unbound[k];
    ex->entry_data[g->entry_base[g->inputs[k]]] = a->t.data;
  }
  /* a head produced by an op writes into its output array; the first head claiming an entry
   * takes it, duplicates and variable heads are copied after the run */
  for (int h = 0; h < nh; h++) {
    int e = entry_id(g, &g->heads[h]);
    if (!g->heads[h].node->op) continue;
    int dup = 0;
    for (int j = 0; j < h; j++) dup |= claimed[j] && entry_id(g, &g->heads[j]) == e;
    if (dup) continue;
    ex->entry_data[e] = outs[h]->t.data;
    claimed[h] = 1;
  }
  for (int i = 0; i < g->num_nodes; i++) {
    mxw_node *n = g->nodes[i];
    if (!n->op || ex->skip[i]) continue;      /* variables, and activations fused into their producer */
    if (ex->folded[i] && !is_train) continue; /* a BatchNorm its Convolution applies */
    int nin = n->num_inputs, nout = mxw_node_num_outputs(n);
    for (int k = 0; k < nin; k++) {
      int e = entry_id(g, &n->inputs[k]);
      ex->tin[k].data = ex->entry_data[e];
      ex->tin[k].dtype = ex->types[e];
      ex->tin[k].shape = ex->shapes[e];
    }
    for (int k = 0; k < nout; k++) {
      int e = g->entry_base[i] + k;
      ex->tout[k].data = ex->entry_data[e];
      ex->tout[k].dtype = ex->types[e];
      ex->tout[k].shape = ex->shapes[e];
    }
    mxw_op_call call = {n->op, n->params->param, nin, ex->tin, nout, ex->tout, is_train, ex->fused_act[i], NULL};
    if (ex->fold[i] >= 0 && !is_train && fold_affine(ex, i, &call) != 0) goto fail;
    if (mxw_op_forward(&call) != 0) {
      mxw_error_prefix("node '%s' (%s): ", n->name, n->op->name);
      goto fail;
    }
  }
  for (int h = 0; h < nh; h++) {
    if (claimed[h]) continue;
    int e = entry_id(g, &g->heads[h]);
    memcpy(outs[h]->t.data, ex->entry_data[e],
           (size_t)mxw_shape_size(&ex->shapes[e]) * (size_t)mxw_dtype_size(ex->types[e]));
  }
  for (int h = 0; h < nh; h++) outputs[h] = outs[h];
  *num_outputs = nh;
  rc = 0;
  goto out;
fail:
  for (int h = 0; h < nh; h++)
    if (!given[h]) mxw_ndarray_free(outs[h]);
out:
  if (outs != outs_small) {
    free(outs);
    free(given);
  }
  return rc;
}

/* ---- training executors (hybridized backward, cached_op.c) ---------------------------------------- */
int mxw_exec_train_setup(mxw_executor *ex, int split, const int *tie, const int *ext_dtype,
                         const mxw_shape *ext_shape) {
  exec_graph *g = &ex->g;
  MXW_CHECK(split >= 0 && split <= g->num_nodes, "bad split");
  ex->train = 1;
  ex->split = split;
  ex->tie = (int *)malloc(sizeof(int) * (size_t)(g->num_inputs ? g->num_inputs : 1));
  MXW_CHECK(ex->tie != NULL, "out of memory");
  memcpy(ex->tie, tie, sizeof(int) * (size_t)g->num_inputs);
  if (ext_dtype) {
    size_t nh = (size_t)(g->num_heads ? g->num_heads : 1);
    ex->ext_dtype = (int *)malloc(sizeof(int) * nh);
    ex->ext_shape = (mxw_shape *)malloc(sizeof(mxw_shape) * nh);
    ex->ext_head = (int *)malloc(sizeof(int) * (size_t)(g->num_entries ? g->num_entries : 1));
    MXW_CHECK(ex->ext_dtype && ex->ext_shape && ex->ext_head, "out of memory");
    memcpy(ex->ext_dtype, ext_dtype, sizeof(int) * (size_t)g->num_heads);
    memcpy(ex->ext_shape, ext_shape, sizeof(mxw_shape) * (size_t)g->num_heads);
  }
  /* forward values read by the backward stay until the end: a retained graph's backward can run
   * again on the same values */
  for (int i = split; i < g->num_nodes; i++)
    for (int k = 0; k < g->nodes[i]->num_inputs; k++) {
      mxw_node *src = g->nodes[i]->inputs[k].node;
      if (src->index < split) ex->last_use[entry_id(g, &g->nodes[i]->inputs[k])] = g->num_nodes;
    }
  ex->planned = 0;
  return 0;
}

/* Infers and plans for these inputs (output gradients unbound) when their shapes changed. */
int mxw_exec_train_prepare(mxw_executor *ex, mxw_ndarray *const *inputs) {
  int rebind = !ex->planned;
  for (int k = 0; k < ex->g.num_inputs && !rebind; k++) {
    if (inputs[k])
      rebind = ex->bound_types[k] != inputs[k]->t.dtype || !mxw_shape_equal(&ex->bound_shapes[k], &inputs[k]->t.shape);
    else
      rebind = ex->bound_types[k] != -1;
  }
  if (!rebind) return 0;
  ex->planned = 0;
  return bind(ex, inputs);
}

/* Runs nodes [from, to) on `arena` with the inputs' data (NULL data: the unbound zeros); the
 * heads the plan put outside the arena are written into head_data[h]. */
int mxw_exec_train_run(mxw_executor *ex, uint8_t *arena, void *const *input_data, void *const *head_data, int from,
                       int to, int is_train) {
  exec_graph *g = &ex->g;
  MXW_CHECK(ex->planned, "the training graph is not planned");
  for (int e = 0; e < g->num_entries; e++) {
    ex->entry_data[e] = ex->offset[e] >= 0 ? arena + ex->offset[e] : NULL;
    if (ex->ext_head && ex->ext_head[e] >= 0) ex->entry_data[e] = head_data ? head_data[ex->ext_head[e]] : NULL;
  }
  for (int k = 0; k < g->num_inputs; k++)
    ex->entry_data[g->entry_base[g->inputs[k]]] = input_data[k] ? input_data[k] : ex->unbound[k]->t.data;
  for (int i = from; i < to; i++) {
    mxw_node *n = g->nodes[i];
    if (!n->op || ex->skip[i]) continue;
    int nin = n->num_inputs, nout = mxw_node_num_outputs(n);
    for (int k = 0; k < nin; k++) {
      int e = entry_id(g, &n->inputs[k]);
      ex->tin[k] = (mxw_tensor){ex->entry_data[e], ex->types[e], ex->shapes[e]};
    }
    for (int k = 0; k < nout; k++) {
      int e = g->entry_base[i] + k;
      ex->tout[k] = (mxw_tensor){ex->entry_data[e], ex->types[e], ex->shapes[e]};
      MXW_CHECK(ex->tout[k].data != NULL || k == mxw_node_tape_output(n),
                "internal error: no buffer for output %d of node '%s'", k, n->name);
    }
    mxw_op_call call = {n->op, n->params->param, nin, ex->tin, nout, ex->tout, is_train, ex->fused_act[i]};
    if (mxw_op_forward(&call) != 0) {
      mxw_error_prefix("node '%s' (%s): ", n->name, n->op->name);
      return -1;
    }
  }
  return 0;
}

/* Head h's value after a run (entry_data of the last run), its shape and dtype. */
int mxw_exec_train_head(const mxw_executor *ex, int h, void **data, mxw_shape *shape, int *dtype) {
  const exec_graph *g = &ex->g;
  MXW_CHECK(h >= 0 && h < g->num_heads, "no head %d", h);
  int e = entry_id(g, &g->heads[h]);
  *data = ex->entry_data[e];
  *shape = ex->shapes[e];
  *dtype = ex->types[e];
  return 0;
}

/* Shape and dtype the last bind inferred for output `index` of `n` (a node of this graph). */
int mxw_exec_entry_info(const mxw_executor *ex, const mxw_node *n, int index, mxw_shape *shape, int *dtype) {
  const exec_graph *g = &ex->g;
  MXW_CHECK(ex->planned && n->index >= 0 && n->index < g->num_nodes && g->nodes[n->index] == n,
            "node '%s' is not in this graph", n->name);
  int e = g->entry_base[n->index] + index;
  *shape = ex->shapes[e];
  *dtype = ex->types[e];
  return 0;
}

/* Whether head h is written into the caller's buffer (head_data of mxw_exec_train_run). */
int mxw_exec_train_head_external(const mxw_executor *ex, int h) {
  return ex->ext_head && h >= 0 && h < ex->g.num_heads && ex->ext_head[entry_id(&ex->g, &ex->g.heads[h])] == h;
}

int mxw_exec_num_nodes(const mxw_executor *ex) { return ex->g.num_nodes; }
int mxw_exec_arena_entry(const mxw_executor *ex, uint8_t *arena, const mxw_node *n, int index, void **data,
                         mxw_shape *shape, int *dtype) {
  MXW_TRY(mxw_exec_entry_info(ex, n, index, shape, dtype));
  const int e = ex->g.entry_base[n->index] + index;
  *data = arena && ex->offset && ex->offset[e] >= 0 ? arena + ex->offset[e] : NULL;
  return 0;
}
mxw_node *mxw_exec_node(const mxw_executor *ex, int i) { return i >= 0 && i < ex->g.num_nodes ? ex->g.nodes[i] : NULL; }
const mxw_entry *mxw_exec_heads(const mxw_executor *ex) { return ex->g.heads; }
int mxw_exec_is_planned(const mxw_executor *ex) { return ex->planned; }
struct mxw_train_plans **mxw_exec_plans(mxw_executor *ex) {
  return &ex->plans;
}

int mxw_exec_binds(const mxw_executor *ex) { return ex ? ex->binds : 0; }
int mxw_exec_stats(mxw_executor *ex, int32_t *out) {
  MXW_CHECK(ex && out, "NULL argument");
  out[0] = ex->binds;
  mxw_train_plans_stats(ex->plans, out + 1);
  return 0;
}
