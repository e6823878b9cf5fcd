/*
 * mxw.h -- the public C API of the mxnet-wasm core.
 *
 * A small runnable example (native or wasm):
 *
 *     mxw_ndarray *x = NULL, *y = NULL;
 *     int32_t shape[2] = {2, 3};
 *     if (mxw_ndarray_create(2, shape, MXW_FLOAT32, &x) != 0) puts(mxw_get_last_error());
 *     float *px = (float *)mxw_ndarray_data(x);
 *     for (int i = 0; i < 6; i++) px[i] = (float)i - 2.f;
 *     int op = mxw_op_find("relu");                    // registered name or alias
 *     mxw_params *p = NULL;
 *     mxw_params_create(op, 0, NULL, NULL, &p);        // attributes in MXNet's string forms
 *     int nout = 1;
 *     mxw_op_invoke(op, p, 1, &x, &nout, &y);          // y is allocated by the call
 *     ... read mxw_ndarray_data(y) ...
 *     mxw_params_free(p); mxw_ndarray_free(x); mxw_ndarray_free(y);
 *
 * Conventions
 *  - Every function that can fail returns 0 on success and -1 on failure; the reason is then
 *    in mxw_get_last_error() (valid until the next failing call). Nothing aborts.
 *  - Handles are opaque. A handle returned through an out-parameter is owned by the caller,
 *    who releases it with the matching *_free function. Inputs are borrowed, never freed.
 *  - Shapes cross the API as int32 arrays (a wasm32 heap cannot hold a dimension >= 2^31
 *    elements anyway); inside the core they are int64, as in MXNet.
 *  - dtypes are MXNet's type flags (mshadow TypeFlag), see mxw_dtype.
 */
#ifndef MXW_H_
#define MXW_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define MXW_API EMSCRIPTEN_KEEPALIVE
#else
#define MXW_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* MXNet's type flags: the numbers stored in .params files and "__dtype__" attributes. */
typedef enum mxw_dtype {
  MXW_FLOAT32 = 0,
  MXW_FLOAT64 = 1,
  MXW_FLOAT16 = 2,
  MXW_UINT8 = 3,
  MXW_INT32 = 4,
  MXW_INT8 = 5,
  MXW_INT64 = 6,
  MXW_BOOL = 7,
  MXW_INT16 = 8,
  MXW_UINT16 = 9,
  MXW_UINT32 = 10,
  MXW_UINT64 = 11,
  MXW_BFLOAT16 = 12,
  MXW_NUM_DTYPES = 13
} mxw_dtype;

/* The maximum rank of an NDArray. */
#define MXW_MAX_NDIM 10

typedef struct mxw_ndarray mxw_ndarray; /* an n-d array that owns (a share of) its storage */
typedef struct mxw_params mxw_params;   /* an operator's parsed attributes */

/* ---- errors ---------------------------------------------------------------------------- */
MXW_API const char *mxw_get_last_error(void);

/* ---- NDArray --------------------------------------------------------------------------- */
/* Creates a zero-filled array. The caller owns *out. */
MXW_API int mxw_ndarray_create(int ndim, const int32_t *shape, int dtype, mxw_ndarray **out);
/* Creates an array whose elements are not set (MXNet's empty()), for a caller that writes them
 * all. The caller owns *out. */
MXW_API int mxw_ndarray_empty(int ndim, const int32_t *shape, int dtype, mxw_ndarray **out);
/* Releases the caller's reference; storage shared with views lives until the last one. */
MXW_API int mxw_ndarray_free(mxw_ndarray *arr);
/* The first element; valid until the array is freed. Never NULL for a live array. */
MXW_API void *mxw_ndarray_data(const mxw_ndarray *arr);
MXW_API int mxw_ndarray_dtype(const mxw_ndarray *arr);
MXW_API int mxw_ndarray_ndim(const mxw_ndarray *arr);
/* Writes ndim dims into shape_out (room for MXW_MAX_NDIM). */
MXW_API int mxw_ndarray_shape(const mxw_ndarray *arr, int32_t *shape_out);
MXW_API double mxw_ndarray_size(const mxw_ndarray *arr);
/* dtype, ndim and dims in one call: out[0] = dtype, out[1] = ndim, out[2..] = dims (room for
 * 2 + MXW_MAX_NDIM int32s). */
MXW_API int mxw_ndarray_info(const mxw_ndarray *arr, int32_t *out);
/* A new array sharing arr's storage with another shape of the same size. Caller owns *out. */
MXW_API int mxw_ndarray_view(mxw_ndarray *arr, int ndim, const int32_t *shape, mxw_ndarray **out);
/* A contiguous view of arr's elements offset .. offset + size(shape) - 1 (in arr's flat order)
 * with the given shape, sharing arr's storage (writes go through). The range must lie inside
 * arr. Caller owns *out. */
MXW_API int mxw_ndarray_view_range(mxw_ndarray *arr, int32_t offset, int ndim, const int32_t *shape, mxw_ndarray **out);
/* Copies src's values into dst (same size; dtypes converted as MXNet's Cast does). */
MXW_API int mxw_ndarray_copy(const mxw_ndarray *src, mxw_ndarray *dst);
/* Bytes per element of a dtype, 0 for an unknown flag. */
MXW_API int mxw_dtype_size(int dtype);

/* ---- operator registry ----------------------------------------------------------------- */
MXW_API int mxw_op_count(void);
/* Op id of a registered name or alias, or -1 (not an error: nothing is recorded). */
MXW_API int mxw_op_find(const char *name);
/* The whole registry as JSON text (names, aliases, inputs, outputs, attribute schema, dtypes);
 * owned by the library, valid for the process lifetime. NULL on allocation failure. */
MXW_API const char *mxw_registry_json(void);
/* strlen of mxw_registry_json()'s text (building it first if needed), so that JS decodes it in one call. */
MXW_API size_t mxw_registry_json_size(void);
/* A hash of what the registry JSON reports from the op definitions, docs left out: equal checksums
 * mean a copy of the JSON made from another build of the same sources can stand in for it, also
 * one made by a build with the docs (MXW_DOC) for a module built without them. */
MXW_API uint32_t mxw_registry_checksum(void);

/* Parses attributes given in MXNet's string forms ("(3, 3)", "True", "None", "1e-05").
 * Unknown keys are errors, except hidden "__key__" keys which are ignored, as in MXNet. */
MXW_API int mxw_params_create(int op, int num, const char *const *keys, const char *const *vals, mxw_params **out);
MXW_API int mxw_params_free(mxw_params *p);
/* Number of inputs / outputs (total, visible) the op takes with these params. */
MXW_API int mxw_params_num_inputs(const mxw_params *p);
MXW_API int mxw_params_num_outputs(const mxw_params *p);
MXW_API int mxw_params_num_visible_outputs(const mxw_params *p);

/* Runs one operator eagerly. *num_outputs is in/out: the room in outputs on entry, the number
 * of outputs written on return. outputs[i] == NULL asks the call to allocate that output (the
 * caller owns it); a non-NULL outputs[i] is written in place and must have the inferred shape
 * and dtype. On failure no output is allocated and no caller array is changed. */
MXW_API int mxw_op_invoke(int op, const mxw_params *p, int num_inputs, mxw_ndarray *const *inputs, int *num_outputs,
                          mxw_ndarray **outputs);

/* Shape inference for one op with known input shapes. in_shapes is packed as
 * [ndim0, d0..., ndim1, d1..., ...]; out_shapes receives the same packing for every output
 * (room for num_outputs * (1 + MXW_MAX_NDIM) int32s). */
MXW_API int mxw_op_infer_shape(const mxw_params *p, int num_inputs, const int32_t *in_shapes, int32_t *out_shapes);

/* ---- NDArray lists: MXNet's .params / nd.save format ------------------------------------ */
typedef struct mxw_ndlist mxw_ndlist;
/* Parses a whole file held in memory (every version MXNet wrote: legacy, V1, V2, V3; sparse
 * records densified). The caller owns *out. Arrays written as "none" come back as NULL. */
MXW_API int mxw_ndlist_load(const uint8_t *bytes, size_t len, mxw_ndlist **out);
/* The same with a cap on the bytes the load may allocate (arrays, densified sparse records,
 * names, bookkeeping); max_bytes 0 = the default: 8 x len + 1 MiB + the bytes of the values
 * present in the file. Every declared size is checked against the bytes present, and against
 * the cap, before anything is allocated for it. Duplicate names are an error. */
MXW_API int mxw_ndlist_load_ex(const uint8_t *bytes, size_t len, double max_bytes, mxw_ndlist **out);
MXW_API int mxw_ndlist_size(const mxw_ndlist *l);
MXW_API int mxw_ndlist_has_names(const mxw_ndlist *l);
/* The i-th name (owned by the list), or NULL in an unnamed list. */
MXW_API const char *mxw_ndlist_name(const mxw_ndlist *l, int i);
/* Moves the i-th array out of the list: the caller owns it (NULL for a none record). */
MXW_API mxw_ndarray *mxw_ndlist_take(mxw_ndlist *l, int i);
MXW_API int mxw_ndlist_free(mxw_ndlist *l);
/* Writes arrays as MXNet 1.x does (V2 records, cpu(0) context), with names (NULL: an unnamed
 * list). *out is allocated; release it with mxw_buffer_free. */
MXW_API int mxw_ndlist_save(int n, mxw_ndarray *const *arrays, const char *const *names, uint8_t **out,
                            size_t *out_len);
MXW_API void mxw_buffer_free(void *p);

/* ---- symbols: graphs of operators ---------------------------------------------------------- */
typedef struct mxw_symbol mxw_symbol; /* a list of outputs of a shared DAG */
/* A variable with attributes (e.g. "__shape__": "(2, 0)"). Caller owns *out. */
MXW_API int mxw_sym_var(const char *name, int nattr, const char *const *keys, const char *const *vals,
                        mxw_symbol **out);
/* An operator node named `name`, composed with inputs (each a one-output symbol; NULL or fewer
 * than the op takes: new variables "<name>_<input name>", as MXNet's Compose). *out holds the
 * node's visible outputs. */
MXW_API int mxw_sym_compose(int op, const char *name, int nattr, const char *const *keys, const char *const *vals,
                            int num_inputs, mxw_symbol *const *inputs, mxw_symbol **out);
MXW_API int mxw_sym_group(int num, mxw_symbol *const *syms, mxw_symbol **out);
MXW_API int mxw_sym_num_outputs(const mxw_symbol *s);
MXW_API int mxw_sym_output(const mxw_symbol *s, int i, mxw_symbol **out);
MXW_API int mxw_sym_internals(const mxw_symbol *s, mxw_symbol **out);
/* A copy of the graph with the variables named names[i] replaced by inputs[i]. Caller owns *out. */
MXW_API int mxw_sym_substitute(const mxw_symbol *s, int num, const char *const *names, mxw_symbol *const *inputs,
                               mxw_symbol **out);
MXW_API int mxw_sym_set_attrs(mxw_symbol *s, int nattr, const char *const *keys, const char *const *vals);
/* JSON text describing the symbol: name, outputs, arguments, aux, inputs (DFS order), head
 * attrs and op. Owned by the library; valid until the next call. NULL on error. */
MXW_API const char *mxw_sym_info(const mxw_symbol *s);
/* MXNet's exact symbol JSON text; *out is malloc'd (mxw_buffer_free). */
MXW_API int mxw_sym_tojson(const mxw_symbol *s, char **out);
/* Parses symbol JSON of any MXNet version (upgrades applied). Caller owns *out. */
MXW_API int mxw_sym_fromjson(const char *text, mxw_symbol **out);
MXW_API int mxw_sym_free(mxw_symbol *s);
/* Shape and dtype inference over the whole graph. request is JSON {"shapes": {name: [dims]},
 * "dtypes": {name: flag}}; the result (owned by the library, valid until the next call; NULL on
 * error) is {"args": [{name, shape, dtype}], "aux": [...], "outputs": [{shape, dtype}],
 * "complete": bool}, unknown shapes null and unknown dims 0. */
MXW_API const char *mxw_sym_infer(const mxw_symbol *s, const char *request);

/* ---- the graph executor ----------------------------------------------------------------------- */
typedef struct mxw_executor mxw_executor;
/* Indexes the graph once (DFS order, entries, liveness). Caller owns *out. */
MXW_API int mxw_exec_create(const mxw_symbol *s, mxw_executor **out);
MXW_API int mxw_exec_free(mxw_executor *ex);
/* The graph's inputs (variables, in list_inputs / DFS order) and outputs. */
MXW_API int mxw_exec_num_inputs(const mxw_executor *ex);
MXW_API const char *mxw_exec_input_name(const mxw_executor *ex, int i);
MXW_API int mxw_exec_num_outputs(const mxw_executor *ex);
/* Bytes of the planned intermediate arena (after the first forward). */
MXW_API size_t mxw_exec_arena_bytes(const mxw_executor *ex);
/* Counters: out[0] = forward plans made (infer + plan runs), out[1] = hybridized-training
 * graphs built (gradient pass + index), out[2] = their plans made. */
MXW_API int mxw_exec_stats(mxw_executor *ex, int32_t *out);
/* How many activation nodes the current plan fused into their producers. */
MXW_API int mxw_exec_num_fused(const mxw_executor *ex);
/* Runs the graph. inputs[i] binds input i (NULL: unbound, filled with zeros of the inferred
 * shape, as loss-head labels at inference). Shapes and dtypes are inferred and memory planned
 * on the first call and again only when an input's shape or dtype changes. Outputs are new
 * arrays the caller owns; *num_outputs is in/out as in mxw_op_invoke. */
MXW_API int mxw_exec_forward(mxw_executor *ex, int num_inputs, mxw_ndarray *const *inputs, int is_train,
                             int *num_outputs, mxw_ndarray **outputs);
/* Monitoring (HybridBlock.registerOpHook): with it on, every entry keeps its own buffer, so all
 * node inputs and outputs of the last run can be read back. mxw_exec_monitor_info lists them as
 * JSON in execution order (owned by the executor); mxw_exec_entry_copy copies one out. The
 * graph's inputs and outputs are the caller's arrays of that run, not copies: read them before
 * freeing those arrays (js/cached_op.mjs reads every entry right after the run). */
MXW_API int mxw_exec_set_monitor(mxw_executor *ex, int on);
MXW_API const char *mxw_exec_monitor_info(mxw_executor *ex);
MXW_API int mxw_exec_entry_copy(const mxw_executor *ex, int entry, mxw_ndarray **out);

/* ---- autograd ------------------------------------------------------------------------------ */
/* Recording on/off (autograd.record / pause); returns the previous value. While recording, each
 * operator call with an input that has history (a marked variable or a recorded result) is
 * recorded, and so are views of such arrays. */
MXW_API int mxw_autograd_set_recording(int on);
/* Marks arrays as variables with gradient buffers (same shapes); reqs: 0 null, 1 write, 2 add. */
MXW_API int mxw_autograd_mark_variables(int n, mxw_ndarray *const *vars, mxw_ndarray *const *grads,
                                        const int32_t *reqs);
/* Backpropagates from heads (head_grads NULL or NULL entries: ones) into every marked variable
 * the heads depend on. Without retain_graph the graph's saved values are released. */
MXW_API int mxw_autograd_backward(int num_heads, mxw_ndarray *const *heads, mxw_ndarray *const *head_grads,
                                  int retain_graph, int is_train);
/* The gradients of heads with respect to vars as new arrays (caller owns grads[0..num_vars-1]). */
MXW_API int mxw_autograd_grad(int num_heads, mxw_ndarray *const *heads, mxw_ndarray *const *head_grads, int num_vars,
                              mxw_ndarray *const *vars, int retain_graph, int is_train, mxw_ndarray **grads);
/* The same with create_graph: the gradients are computed by recorded eager calls, so that they
 * are themselves differentiable (each backward op through its own gradient, where it has one). */
MXW_API int mxw_autograd_grad_ex(int num_heads, mxw_ndarray *const *heads, mxw_ndarray *const *head_grads, int num_vars,
                                 mxw_ndarray *const *vars, int retain_graph, int create_graph, int is_train,
                                 mxw_ndarray **grads);
/* Records an autograd.Function call whose forward ran in JS (id: the JS registry's). */
MXW_API int mxw_autograd_record_custom(int id, int nin, mxw_ndarray *const *inputs, int nout,
                                       mxw_ndarray *const *outputs);
/* A new handle on arr's storage without autograd history. Caller owns *out. */
MXW_API int mxw_ndarray_detach(mxw_ndarray *arr, mxw_ndarray **out);
/* Reads (set < 0) or sets the "written by backward since the last update" flag of a gradient. */
MXW_API int mxw_ndarray_fresh_grad(mxw_ndarray *arr, int set);

/* ---- runtime ----------------------------------------------------------------------------- */
MXW_API void mxw_random_seed(uint32_t seed);
/* Sets training mode (affects Dropout, BatchNorm, ...); returns the previous value. */
MXW_API int mxw_set_training(int training);
/* out[0] = live arrays, out[1] = bytes held by array storage and executor arenas, out[2] = the
 * peak of out[1] since the last mxw_memory_reset_peak (as doubles). */
MXW_API void mxw_memory_stats(double *out);
/* Frees the buffers kernels keep between calls (scratch, GEMM packing), the caller's and every
 * pool worker's; Block.dispose() calls it. */
MXW_API void mxw_scratch_release(void);
/* Bytes those buffers hold now, over all threads (mx.nd.memory().scratchBytes). */
MXW_API double mxw_scratch_bytes(void);
MXW_API void mxw_memory_reset_peak(void);

/* ---- threads -------------------------------------------------------------------------------
 * The kernels' thread pool: 1 in builds without threads. set clamps to what the build can start
 * (the pool's size plus the calling thread). */
MXW_API int mxw_threads_supported(void);
MXW_API int mxw_default_num_threads(void);
MXW_API int mxw_set_num_threads(int n);
MXW_API int mxw_get_num_threads(void);
/* Sets the pool's size (workers besides the caller; at least those already started) and the
 * thread count, starting no worker: workers start with the first parallel call that can use
 * them, with mxw_set_num_threads, or with mxw_start_pool (the threaded tiers call it on the first
 * task after their import, js/api.mjs). */
MXW_API int mxw_pool_configure(int max_workers, int threads);
MXW_API void mxw_start_pool(void);

#ifdef __cplusplus
}
#endif
#endif /* MXW_H_ */
