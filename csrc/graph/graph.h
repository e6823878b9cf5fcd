/* graph.h -- Symbols: a DAG of refcounted nodes, as nnvm's. A node is a variable (op NULL) or an
 * operator with parsed params; a Symbol is a list of output entries (node, output index,
 * version). Names and attribute strings are kept exactly as given (JSON round trips are exact).
 * Traversals are iterative (a hostile or very deep graph cannot overflow the stack). */
#ifndef MXW_GRAPH_H_
#define MXW_GRAPH_H_
#include "../core/mxw_core.h"

typedef struct mxw_node mxw_node;

typedef struct mxw_entry {
  mxw_node *node;
  uint32_t index;
  uint32_t version;
} mxw_entry;

typedef struct mxw_attrs { /* string -> string, insertion order; written sorted */
  int n, cap;
  char **keys, **vals;
} mxw_attrs;

struct mxw_node {
  int refcount;
  const mxw_op_def *op; /* NULL for a variable */
  int op_id;
  char *name;
  mxw_attrs attrs;
  mxw_params *params; /* parsed op attributes (NULL for variables) */
  int num_inputs;
  mxw_entry *inputs;
  int num_control;
  mxw_node **control;
  uint32_t version;       /* variables: bumped by each composition that mutates it (aux states) */
  struct mxw_ag_info *ag; /* autograd: the values and gradient buffer of a recorded node (autograd.c) */
  uint32_t mark;          /* traversal bookkeeping */
  int32_t index;          /* traversal bookkeeping: position in the last DFS */
  /* control-flow ops (_foreach, _while_loop, _cond): nnvm's attrs.subgraphs, owned */
  int num_subgraphs;
  struct mxw_symbol **subgraphs;
};

struct mxw_symbol {
  int n;
  mxw_entry *outputs;
};

/* attrs */
const char *mxw_attrs_get(const mxw_attrs *a, const char *key);
int mxw_attrs_set(mxw_attrs *a, const char *key, const char *val);
void mxw_attrs_remove(mxw_attrs *a, const char *key);
void mxw_attrs_clear(mxw_attrs *a);
int mxw_attrs_copy(mxw_attrs *dst, const mxw_attrs *src);
/* Sets n pairs (later pairs win; keys already present are overwritten only when `overwrite`),
 * in time linear in the sizes. */
int mxw_attrs_set_many(mxw_attrs *a, int n, const char *const *keys, const char *const *vals, int overwrite);
/* "<a>_<b>" malloc'd, never truncated; NULL (error set) when out of memory. */
char *mxw_join_name(const char *a, const char *b);

/* nodes */
struct mxw_ndarray;
mxw_node *mxw_node_new(const char *name); /* a variable; refcount 1 */
void mxw_node_retain(mxw_node *n);
void mxw_node_release(mxw_node *n);
int mxw_node_set_op(mxw_node *n, int op_id); /* parses n->attrs into n->params */
int mxw_node_num_outputs(const mxw_node *n);
int mxw_node_num_visible_outputs(const mxw_node *n);
/* The index of n's tape output (mxw_op_def.tape_output), or -1. */
int mxw_node_tape_output(const mxw_node *n);
/* The i-th input / output name of a node ("data", "arg3", "output", "output1", ...). */
void mxw_node_input_name(const mxw_node *n, int i, char *buf, size_t len);
void mxw_node_output_name(const mxw_node *n, int i, char *buf, size_t len);
int mxw_node_is_mutated_input(const mxw_node *n, int i);
/* A variable's "__shape__" / "__dtype__" hints must parse (an error naming the variable if not). */
int mxw_var_check_hints(const mxw_node *n);

/* Post-order DFS from the heads (inputs in order, then control deps), each node once, exactly
 * as nnvm's DFSVisit. Returns a malloc'd array of nodes (borrowed pointers) and sets n->index. */
int mxw_graph_dfs(const mxw_entry *heads, int num_heads, mxw_node ***out, int *num_nodes);

/* autograd (autograd.c) */
typedef struct mxw_ag_info {
  int num_values;
  mxw_ndarray **values;   /* per output: its value (a handle sharing the array's storage) */
  mxw_ndarray *grad;      /* variables: the gradient buffer (shares the user's grad storage) */
  int grad_req;           /* variables: 0 null, 1 write, 2 add */
  int freed;              /* a backward pass without retain_graph released the values */
  struct mxw_node **vvar; /* during one backward pass: the variable standing for each value */
} mxw_ag_info;
void mxw_ag_info_free(mxw_ag_info *ag);
/* A copy of p's param struct as params of `op` (same param_size), retaining what it holds. */
mxw_params *mxw_params_clone(const mxw_params *p, const mxw_op_def *op, int op_id);

/* Builds the gradient graph (MXNet's nnvm Gradient pass) of heads with respect to the variable
 * nodes xs. head_grads[h] is the gradient entry of head h. The value of a forward entry is
 * obtained from value(ud, node, index, &entry, &shape, &dtype): the entry itself in a graph
 * that runs forward and backward together, a variable bound to a saved array on the eager
 * tape. x_grads[i] gets an entry whose node is retained (release it). flags: MXW_GRAD_* below
 * (0 for a graph that runs in the executor). */
typedef int (*mxw_value_fn)(void *ud, mxw_node *n, int index, mxw_entry *entry, mxw_shape *shape, int *dtype);
int mxw_gradient_build(const mxw_entry *heads, int num_heads, const mxw_entry *head_grads, mxw_node *const *xs,
                       int num_xs, mxw_value_fn value, void *ud, int flags, mxw_entry *x_grads);

/* For gradients that build graphs of their own (cached_op.c): a node of like's op with a copy of
 * its params on gids `in` (nout outputs pushed into out); the entry a gid stands for; a gid for an
 * entry built elsewhere, taking over one reference to its node (released with the pass's nodes). */
int mxw_grad_op_like(mxw_grad_ctx *g, const mxw_node *like, const mxw_gid *in, int nin, mxw_gid *out, int nout);
mxw_entry mxw_grad_entry(const mxw_grad_ctx *g, mxw_gid gid);
mxw_gid mxw_grad_adopt(mxw_grad_ctx *g, mxw_entry e);
struct mxw_ndarray;
mxw_gid mxw_grad_constant(mxw_grad_ctx *g, const char *name, const struct mxw_ndarray *arr); /* shares arr */

/* The executor's i-th input variable node (exec.c). */
struct mxw_executor;
mxw_node *mxw_exec_input_node(const struct mxw_executor *ex, int i);

/* Training executors (exec.c) and hybridized backward (cached_op.c): a graph of forward heads
 * followed by input gradients, nodes [0, split) forward, the rest backward, arenas per call. */
struct mxw_train_plans;
void mxw_train_plans_free(struct mxw_train_plans *p);
void mxw_train_plans_stats(const struct mxw_train_plans *p, int32_t *out); /* [plans built, their binds] */
int mxw_exec_binds(const struct mxw_executor *ex);
int mxw_exec_train_setup(struct mxw_executor *ex, int split, const int *tie, const int *ext_dtype,
                         const mxw_shape *ext_shape);
int mxw_exec_train_prepare(struct mxw_executor *ex, struct mxw_ndarray *const *inputs);
int mxw_exec_train_run(struct mxw_executor *ex, uint8_t *arena, void *const *input_data, void *const *head_data,
                       int from, int to, int is_train);
int mxw_exec_train_head_external(const struct mxw_executor *ex, int h);
int mxw_exec_train_head(const struct mxw_executor *ex, int h, void **data, mxw_shape *shape, int *dtype);
int mxw_exec_entry_info(const struct mxw_executor *ex, const mxw_node *n, int index, mxw_shape *shape, int *dtype);
int mxw_exec_num_nodes(const struct mxw_executor *ex);
mxw_node *mxw_exec_node(const struct mxw_executor *ex, int i); /* in execution (topological) order */
/* Where output `index` of node n lives in a training executor's arena (NULL: it has no buffer). */
int mxw_exec_arena_entry(const struct mxw_executor *ex, uint8_t *arena, const mxw_node *n, int index, void **data,
                         mxw_shape *shape, int *dtype);
int mxw_exec_forward_into(struct mxw_executor *ex, int num_inputs, struct mxw_ndarray *const *inputs, int is_train,
                          int *num_outputs, struct mxw_ndarray **outputs);
const mxw_entry *mxw_exec_heads(const struct mxw_executor *ex);
int mxw_exec_is_planned(const struct mxw_executor *ex);
struct mxw_train_plans **mxw_exec_plans(struct mxw_executor *ex);
/* The recording forward of a hybridized graph (cached_op.c), called by mxw_exec_forward. */
int mxw_cached_forward_record(struct mxw_executor *ex, int num_inputs, struct mxw_ndarray *const *inputs, int is_train,
                              int *num_outputs, struct mxw_ndarray **outputs, int *handled);

/* symbols */
mxw_symbol *mxw_symbol_alloc(int n);
/* A symbol of node n's outputs 0..nout-1, taking over the caller's reference to n (one more per
 * further output); NULL (out of memory, error set) leaves the reference with the caller. */
mxw_symbol *mxw_symbol_of_node(mxw_node *n, int nout);

/* control flow (subgraph.c): a node's subgraphs. attach: called by mxw_node_set_op after the
 * params are parsed, hands the node's subgraphs to a control-flow op's params (and checks that
 * other ops have none); copy: gives dst (before its set_op) retained copies of src's list;
 * release: frees a node's list. */
int mxw_subgraph_attach(mxw_node *n);
int mxw_subgraph_copy(mxw_node *dst, const mxw_node *src);
void mxw_subgraph_release(mxw_node *n);
#endif
