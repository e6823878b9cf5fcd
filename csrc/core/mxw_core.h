/*
 * mxw_core.h -- what every op family file needs: shapes, tensor views, errors, the attribute
 * schema and the operator definition. Op families (csrc/ops/<family>.c) include only this.
 *
 * Layers (as in XNNPACK): pure-loop kernels (csrc/kernels) know nothing of shapes or attrs;
 * op families parse attributes, infer shapes/types and pick a kernel; the runtime (imperative
 * invoke, later the graph executor) only calls op definitions.
 */
#ifndef MXW_CORE_H_
#define MXW_CORE_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../include/mxw.h"

/* ---- shapes ------------------------------------------------------------------------------ */
/* ndim == -1: unknown rank; a dim of -1: unknown size (MXNet's legacy 0 becomes -1 on input). */
typedef struct mxw_shape {
  int32_t ndim;
  int64_t dims[MXW_MAX_NDIM];
} mxw_shape;

int64_t mxw_shape_size(const mxw_shape *s); /* product of dims (1 for rank 0) */
int mxw_shape_known(const mxw_shape *s);    /* rank and every dim known */
int mxw_shape_equal(const mxw_shape *a, const mxw_shape *b);
/* "(2, 3)"-style text into buf (always NUL-terminated); returns buf. */
char *mxw_shape_str(const mxw_shape *s, char *buf, size_t len);
/* "(1, -1, None)" for an attribute tuple, "None" when absent (ndim < 0). */
struct mxw_tuple;
char *mxw_tuple_str(const struct mxw_tuple *t, char *buf, size_t len);
/* A known shape as the attribute text an op takes ("(2, 3)", "(4,)", "()"). */
char *mxw_shape_attr(const mxw_shape *s, char *buf, size_t len);
mxw_shape mxw_shape_make(int ndim, const int64_t *dims);

/* ---- a tensor view: what kernels see ------------------------------------------------------ */
typedef struct mxw_tensor {
  void *data;
  int32_t dtype;
  mxw_shape shape;
} mxw_tensor;

static inline int64_t mxw_tensor_size(const mxw_tensor *t) { return mxw_shape_size(&t->shape); }

/* ---- errors ------------------------------------------------------------------------------- */
/* Records the message (printf-style) and returns -1, so `return mxw_fail("...")` reads well. */
int mxw_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An allocation of `bytes` for `what` ("an array of shape (2, 3) float32", "the symbol JSON")
 * failed: records MXNet-style "out of memory: ..." with the heap's state and returns -1. */
int mxw_fail_oom(const char *what, double bytes);
/* Prefixes the current message, e.g. "Operator FullyConnected: ". */
void mxw_error_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#ifdef __clang_analyzer__
/* For clang-tidy's static analyzer (npm run lint): these return -1, which it cannot see across
 * files; without this it follows `rc = p ? 0 : mxw_fail(...)` as if rc could be 0 with p NULL. */
#define mxw_fail(...) (mxw_fail(__VA_ARGS__), -1)
#define mxw_fail_oom(what, bytes) (mxw_fail_oom(what, bytes), -1)
#endif
#define MXW_CHECK(cond, ...)                   \
  do {                                         \
    if (!(cond)) return mxw_fail(__VA_ARGS__); \
  } while (0)
#define MXW_TRY(expr)           \
  do {                          \
    if ((expr) != 0) return -1; \
  } while (0)

/* ---- dtypes ------------------------------------------------------------------------------- */
const char *mxw_dtype_name(int dtype);     /* "float32", ...; "unknown" otherwise */
int mxw_dtype_from_name(const char *name); /* -1 if not a dtype name */
int mxw_dtype_is_float(int dtype);
/* Element access through double, for the generic (non-hot) paths of every dtype. */
double mxw_load_f64(const void *data, int dtype, int64_t i);
void mxw_store_f64(void *data, int dtype, int64_t i, double v);
float mxw_half_to_float(uint16_t h);
uint16_t mxw_float_to_half(float f);
float mxw_bf16_to_float(uint16_t h);
uint16_t mxw_float_to_bf16(float f);
/* Converts n elements between dtypes as MXNet's Cast does (float->int truncates). */
void mxw_convert(const void *src, int src_dtype, void *dst, int dst_dtype, int64_t n);

/* Dispatch on the dtypes that have a C type. float16 and bfloat16 are not covered: families
 * handle them by converting through float32 (mxw_convert) or the generic double path. */
#define MXW_REAL_TYPE_SWITCH(dtype, T, ...)                                            \
  switch (dtype) {                                                                     \
    case MXW_FLOAT32: {                                                                \
      typedef float T;                                                                 \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    case MXW_FLOAT64: {                                                                \
      typedef double T;                                                                \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    case MXW_UINT8: {                                                                  \
      typedef uint8_t T;                                                               \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    case MXW_BOOL: {                                                                   \
      typedef uint8_t T;                                                               \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    case MXW_INT8: {                                                                   \
      typedef int8_t T;                                                                \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    case MXW_INT32: {                                                                  \
      typedef int32_t T;                                                               \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    case MXW_INT64: {                                                                  \
      typedef int64_t T;                                                               \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    case MXW_INT16: {                                                                  \
      typedef int16_t T;                                                               \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    case MXW_UINT16: {                                                                 \
      typedef uint16_t T;                                                              \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    case MXW_UINT32: {                                                                 \
      typedef uint32_t T;                                                              \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    case MXW_UINT64: {                                                                 \
      typedef uint64_t T;                                                              \
      __VA_ARGS__;                                                                     \
    } break;                                                                           \
    default: return mxw_fail("dtype %s is not supported here", mxw_dtype_name(dtype)); \
  }

/* ---- attribute schema ----------------------------------------------------------------------- */
typedef enum mxw_attr_type {
  MXW_ATTR_INT,       /* int64_t; C++ stream rules: "3" ok, "3.0" is an error */
  MXW_ATTR_FLOAT,     /* double (MXNet float and double alike) */
  MXW_ATTR_BOOL,      /* int: True/False/true/false/1/0 */
  MXW_ATTR_ENUM,      /* int: index into enum_values (exact, case-sensitive) */
  MXW_ATTR_SHAPE,     /* mxw_tuple: "(3, 3)", "[3,3]", "3", "()", "None" */
  MXW_ATTR_OPT_TUPLE, /* mxw_tuple whose elements may be None: "(None, 3)" */
  MXW_ATTR_DTYPE,     /* int: a dtype flag from a dtype name ("float32", ...) */
  MXW_ATTR_STRING     /* mxw_str */
} mxw_attr_type;

#define MXW_MAX_TUPLE 24
typedef struct mxw_tuple {
  int32_t ndim; /* -1 for "None" */
  int64_t v[MXW_MAX_TUPLE];
  uint8_t has[MXW_MAX_TUPLE]; /* 0 where an element is None (OPT_TUPLE only) */
} mxw_tuple;

typedef struct mxw_str {
  char s[256]; /* e.g. SyncBatchNorm's key: the layer's full prefix */
} mxw_str;

/* Optional scalars ("None" allowed) are stored as a value plus a has-flag. */
typedef struct mxw_opt_int {
  int32_t has;
  int64_t v;
} mxw_opt_int;
typedef struct mxw_opt_float {
  int32_t has;
  double v;
} mxw_opt_float;

typedef struct mxw_attr_spec {
  const char *name;
  const char *def;                /* default in MXNet's string form; NULL = required */
  const char *const *enum_values; /* NULL-terminated, for MXW_ATTR_ENUM */
  const char *doc;
  /* (narrow fields, packed after the pointers: the tables are a large part of the module's data) */
  uint16_t offset;  /* where the parsed value lives in the op's param struct */
  uint8_t type;     /* mxw_attr_type */
  uint8_t optional; /* "None" is accepted (field is mxw_opt_* or tuple ndim -1) */
} mxw_attr_spec;

/* Documentation strings of operators and attributes. The shipped wasm modules are built with
 * MXW_NO_DOCS: their registry then has no docs (about 10 KiB of the gzipped module), and the
 * build takes the docs from a module built with them (tools/registry_json.c, scripts/gen-api.mjs)
 * into dist/registry.mjs, the registry's copy the package reads. */
#ifdef MXW_NO_DOCS
#define MXW_DOC(s) NULL
#else
#define MXW_DOC(s) (s)
#endif

/* Spec helpers for tables: MXW_A_INT("num_hidden", FCParam, num_hidden, NULL, "doc") ... */
#define MXW_A(name_, type_, opt_, def_, st_, field_, enums_, doc_)                                \
  {                                                                                               \
    .name = name_, .type = type_, .optional = opt_, .def = def_, .offset = offsetof(st_, field_), \
    .enum_values = enums_, .doc = MXW_DOC(doc_)                                                   \
  }
#define MXW_A_INT(n, st, f, def, doc) MXW_A(n, MXW_ATTR_INT, 0, def, st, f, NULL, doc)
#define MXW_A_OPT_INT(n, st, f, def, doc) MXW_A(n, MXW_ATTR_INT, 1, def, st, f, NULL, doc)
#define MXW_A_FLOAT(n, st, f, def, doc) MXW_A(n, MXW_ATTR_FLOAT, 0, def, st, f, NULL, doc)
#define MXW_A_OPT_FLOAT(n, st, f, def, doc) MXW_A(n, MXW_ATTR_FLOAT, 1, def, st, f, NULL, doc)
#define MXW_A_BOOL(n, st, f, def, doc) MXW_A(n, MXW_ATTR_BOOL, 0, def, st, f, NULL, doc)
#define MXW_A_OPT_BOOL(n, st, f, def, doc) MXW_A(n, MXW_ATTR_BOOL, 1, def, st, f, NULL, doc)
#define MXW_A_ENUM(n, st, f, def, en, doc) MXW_A(n, MXW_ATTR_ENUM, 0, def, st, f, en, doc)
#define MXW_A_OPT_ENUM(n, st, f, def, en, doc) MXW_A(n, MXW_ATTR_ENUM, 1, def, st, f, en, doc)
#define MXW_A_SHAPE(n, st, f, def, doc) MXW_A(n, MXW_ATTR_SHAPE, 0, def, st, f, NULL, doc)
#define MXW_A_OPT_SHAPE(n, st, f, def, doc) MXW_A(n, MXW_ATTR_SHAPE, 1, def, st, f, NULL, doc)
#define MXW_A_OPT_TUPLE(n, st, f, def, doc) MXW_A(n, MXW_ATTR_OPT_TUPLE, 0, def, st, f, NULL, doc)
#define MXW_A_DTYPE(n, st, f, def, doc) MXW_A(n, MXW_ATTR_DTYPE, 0, def, st, f, NULL, doc)
#define MXW_A_OPT_DTYPE(n, st, f, def, doc) MXW_A(n, MXW_ATTR_DTYPE, 1, def, st, f, NULL, doc)
#define MXW_A_STRING(n, st, f, def, doc) MXW_A(n, MXW_ATTR_STRING, 0, def, st, f, NULL, doc)

/* Parses one value; used by the registry and by tests. 0 or -1 with an error naming the value. */
int mxw_attr_parse(const mxw_attr_spec *spec, const char *text, void *param_struct);

/* ---- the operator definition ----------------------------------------------------------------- */
struct mxw_op_def;
struct mxw_grad_ctx;

/* Everything a forward kernel gets. Inputs and outputs are views with known shapes. */
/* Activations an op can apply to its own output (graph fusion, see exec.c). */
typedef enum mxw_act {
  MXW_ACT_NONE = 0,
  MXW_ACT_RELU,
  MXW_ACT_SIGMOID,
  MXW_ACT_TANH,
  MXW_ACT_SOFTRELU,
  MXW_ACT_SOFTSIGN,
  MXW_ACT_RELU6 /* clip(x, 0, 6) (MobileNet's RELU6), NaN passing through as clip's */
} mxw_act;
/* Applies an activation in place to n elements of a float32 / float64 buffer. */
void mxw_apply_act(void *data, int dtype, int64_t n, int act);
/* y = y * scale[c] + shift[c], then the activation, in place on float32 y of layout
 * (outer, C, inner): one image of a channel-first output is (1, C, H*W), a channel-last output
 * (N*H*W, C, 1). */
void mxw_apply_affine_act(float *y, int64_t outer, int64_t C, int64_t inner, const float *scale, const float *shift,
                          int act);
/* clip's float32 kernel: dst = src > hi ? hi : (src < lo ? lo : src) (dst may be src). */
void mxw_clip_f32(const float *src, float *dst, int64_t n, float lo, float hi);

typedef struct mxw_op_call {
  const struct mxw_op_def *op;
  const void *param; /* the op's parsed param struct */
  int num_inputs;
  const mxw_tensor *inputs;
  int num_outputs;
  mxw_tensor *outputs;
  int is_train;
  int fused_act; /* mxw_act to apply to output 0 (only for ops with fusable_act) */
  /* graph fusion (ops with affine_axis): scale[C] then shift[C], applied per channel to output 0
   * before fused_act (a BatchNorm folded into the Convolution before it, at inference) */
  const float *affine;
} mxw_op_call;
/* Runs `kernel` on float32 copies of the call's float16 / bfloat16 tensors (the others as they
 * are) and converts those outputs back: the 16-bit path of ops that compute in float32. */
int mxw_run_as_f32(const mxw_op_call *c, int (*kernel)(const mxw_op_call *));
/* Runs c->op's forward: through float32 copies when the op is half_as_f32 and a tensor of the call
 * is float16 / bfloat16. Every executor and the eager path call ops through this. */
int mxw_op_forward(const mxw_op_call *c);
/* "(a, b, c)", "[a,b]", "(a,)", "()", "a" -> at most max floats (MXNet's Tuple<float>); -1 with an
 * error naming the attribute. */
int mxw_parse_floats(const char *name, const char *text, float *v, int max, int *n);
/* strtod (the same value and end), decimal text without long-double arithmetic where exact. */
double mxw_parse_double(const char *s, char **end);
/* digamma psi(x) = d/dx log|gamma(x)| in double (elemwise_unary.c; the largest double at the poles). */
double mxw_digamma(double x);

#define MXW_VARIADIC (-1)
#define MXW_MUTATE_ALL (-1)

typedef struct mxw_op_def {
  const char *name;
  const char *const *aliases; /* NULL-terminated or NULL */
  const char *doc;

  const mxw_attr_spec *attrs;
  /* Optional: cross-attribute checks and derived fields after parsing. */
  int (*validate)(void *param);

  /* Inputs: a fixed list of names, or variadic ("arg0", "arg1", ... counted by num_inputs_fn). */
  const char *const *input_names;          /* NULL-terminated */
  int (*num_inputs_fn)(const void *param); /* optional: e.g. FullyConnected drops bias */
  int (*num_outputs_fn)(const void *param);
  int (*num_visible_outputs_fn)(const void *param);
  const char *const *output_names; /* NULL: "output" or "output<i>" */
  /* Inputs the op mutates (auxiliary states), as FMutateInputs. */
  const int *mutate_inputs;

  /* Shape inference. in/out are in-out: known entries constrain, unknown ones (ndim -1 or dims
   * -1) may be filled, in both directions (e.g. FullyConnected fills its weight's shape). */
  int (*infer_shape)(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out);
  /* Type inference; -1 = unknown. NULL means "all inputs and outputs share one dtype". */
  int (*infer_type)(const void *param, int nin, int *in, int nout, int *out);
  int (*forward)(const mxw_op_call *call);
  /* FSetInputVarAttrOnCompose: the "__init__" a variable gets when composed as input `index`
   * (e.g. BatchNorm's moving_mean -> "[\"zero\", {}]"), or NULL. */
  const char *(*input_var_init)(const void *param, int index);
  /* Optional: input names that depend on attributes (NULL return: "arg<index>"), e.g. bilinear
   * UpSampling's data/weight. A composed variadic op may leave such named inputs missing. */
  const char *(*input_name_fn)(const void *param, int index);
  /* For activation ops: the mxw_act they compute with these params (0: not fusable). */
  int (*as_activation)(const void *param);
  /* Fusion: the op applies call->affine along this axis of output 0 (of ndim dims) itself;
   * -1 when it cannot with these params. */
  int (*affine_axis)(const void *param, int ndim);
  /* For per-channel affine ops (BatchNorm at inference): the axis of input 0 (of ndim dims) its
   * affine runs along, and, given the inputs (NULL: the axis only), scale[C] and shift[C] with
   * op(x) == x * scale[c] + shift[c] when the op does not train; -1 when it is not such an op with
   * these params. */
  int (*as_affine)(const void *param, int ndim, const mxw_tensor *inputs, float *scale, float *shift);
  /* FGradient: builds the nodes computing the inputs' gradients from the outputs' gradients
   * (see "gradients" below). Defined once per op, used by the eager tape and by hybridized
   * graphs alike. NULL: the op has no gradient (a backward pass reaching it is an error)
   * unless no_grad is set. */
  int (*gradient)(struct mxw_grad_ctx *g);
  /* Params that hold a reference (internal ops such as _CachedOp): called when a copy of the
   * param struct is made (retain) and when one is freed (release). */
  void (*param_retain)(void *param);
  void (*param_release)(void *param);
  /* Optional: drops what a recorded node's params keep for its backward (a hybridized call's
   * arena), called when a backward pass without retain_graph releases the node's values. */
  void (*drop_saved)(void *param);
  /* Optional: the index of a hidden output that is the op's record of its forward for its backward
   * node (the control-flow ops' per-step values, subgraph.c), or -1. An executor gives that output
   * a buffer only when a node reads it (the op's backward, in a graph that will be differentiated);
   * otherwise its data is NULL and the forward keeps nothing. */
  int (*tape_output)(const void *param);
  /* The counts and flags, narrow and packed after the pointers (the op tables are a large part of
   * the module's data): */
  uint32_t param_size;
  int16_t num_attrs;
  int16_t num_inputs; /* fixed count, or MXW_VARIADIC (input_names, num_inputs_fn) */
  int16_t num_outputs;
  int16_t num_mutate_inputs; /* of mutate_inputs, or MXW_MUTATE_ALL: every input (reset_arrays) */
  /* Output 0 may share input 0's buffer (elementwise ops whose kernels read each element before
   * writing it): the executor then computes in place when input 0 dies at this node. */
  uint8_t inplace;
  /* With inplace: output i may share input i * inplace_stride's buffer (0: output 0 and input 0
   * only), e.g. multi_sgd_update's weights, each written over by its own new value. */
  uint8_t inplace_stride;
  /* float16 / bfloat16 tensors run through float32 copies (mxw_op_forward, mxw_run_as_f32): for
   * ops whose 16-bit path would otherwise compute element by element through double. Not for ops
   * that update a 16-bit input in place (only outputs are converted back). */
  uint8_t half_as_f32;
  /* Fusion: the op applies call->fused_act to output 0 itself (e.g. per cache-hot band). */
  uint8_t fusable_act;
  /* MXNet marks the op non-differentiable (argmax, comparisons, random draws, ...): its inputs
   * get zero gradients. */
  uint8_t no_grad;
} mxw_op_def;
/* Whether the op mutates input i (FMutateInputs). */
int mxw_op_mutates_input(const mxw_op_def *op, int i);

/* ---- gradients (MXNet's FGradient) ----------------------------------------------------------
 * An op's gradient function builds graph nodes of registered ops (often `_backward_<op>` ops
 * with their own kernels) from handles to the forward node's input and output values and to
 * the gradients flowing into its outputs, then sets a gradient for each input it differentiates
 * (an input left unset gets none: a zero contribution). Example (y = exp(x): dx = dy * y):
 *
 *     static int exp_grad(mxw_grad_ctx *g) {
 *       mxw_gid dx = mxw_grad_op(g, "elemwise_mul", NULL, 2, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 0)));
 *       return mxw_grad_set(g, 0, dx);
 *     }
 *
 * Every builder returns -1 with an error set on failure, and accepts -1 inputs by failing, so
 * a chain of calls needs one check at the end (mxw_grad_set fails on a -1 gid). */
typedef struct mxw_grad_ctx mxw_grad_ctx;
typedef int32_t mxw_gid;
#define MXW_GIDS(...) ((const mxw_gid[]){__VA_ARGS__}), (int)(sizeof((mxw_gid[]){__VA_ARGS__}) / sizeof(mxw_gid))
#define MXW_KV(...) ((const char *const[]){__VA_ARGS__, NULL})
const void *mxw_grad_param(const mxw_grad_ctx *g);   /* the forward node's parsed params */
const char *mxw_grad_op_name(const mxw_grad_ctx *g); /* and its op's name */
int mxw_grad_num_inputs(const mxw_grad_ctx *g);
int mxw_grad_num_outputs(const mxw_grad_ctx *g);
/* Shape and dtype of forward input i / output i (known in eager and hybridized use alike). */
const mxw_shape *mxw_grad_in_shape(const mxw_grad_ctx *g, int i);
const mxw_shape *mxw_grad_out_shape(const mxw_grad_ctx *g, int i);
int mxw_grad_in_dtype(const mxw_grad_ctx *g, int i);
mxw_gid mxw_grad_in(mxw_grad_ctx *g, int i);    /* the value of forward input i */
mxw_gid mxw_grad_out(mxw_grad_ctx *g, int i);   /* the value of forward output i */
mxw_gid mxw_grad_ograd(mxw_grad_ctx *g, int i); /* the gradient flowing into output i */
/* A node of registered op `op` (name or alias) with attributes in MXNet's string forms (kv: a
 * NULL-terminated key, value, key, value, ... list, or NULL); returns its output 0. */
mxw_gid mxw_grad_op(mxw_grad_ctx *g, const char *op, const char *const *kv, const mxw_gid *in, int nin);
/* The same with all of its outputs (nout of them written to out). */
int mxw_grad_op_n(mxw_grad_ctx *g, const char *op, const char *const *kv, const mxw_gid *in, int nin, mxw_gid *out,
                  int nout);
/* A node of `op` whose params are a copy of the forward node's (a `_backward_*` op declared with
 * the forward op's param struct and attribute table); all outputs written to out. */
int mxw_grad_op_fwd(mxw_grad_ctx *g, const char *op, const mxw_gid *in, int nin, mxw_gid *out, int nout);
/* Sets the gradient of forward input i (0, or -1 when grad is -1). */
int mxw_grad_set(mxw_grad_ctx *g, int input, mxw_gid grad);
/* Shorthands used by many gradients: ograd * x, sum of a broadcast gradient back to input i's
 * shape (MXNet's ReduceAxesComputeImpl over the broadcast axes), zeros like a value. */
mxw_gid mxw_grad_mul(mxw_grad_ctx *g, mxw_gid a, mxw_gid b);
mxw_gid mxw_grad_reduce_to_input(mxw_grad_ctx *g, mxw_gid grad, int input);
mxw_gid mxw_grad_zeros_like(mxw_grad_ctx *g, mxw_gid like);
/* What the gradient graph is built for. MXW_GRAD_DIFFERENTIABLE: autograd.grad with create_graph,
 * whose gradients are differentiated again -- an op whose fused `_backward_*` kernel has no
 * gradient of its own may then build its gradient from differentiable ops instead (norm.c);
 * MXW_GRAD_TRAIN: that pass runs in training mode (known when the graph is built eagerly). */
#define MXW_GRAD_DIFFERENTIABLE 1
#define MXW_GRAD_TRAIN 2
int mxw_grad_flags(const mxw_grad_ctx *g);
/* The gradient of an elementwise backward op dx = ograd * s(inputs 1..) whose factor s is
 * piecewise constant (clip, hard_sigmoid, ...; second order): input 0's gradient is the same op on
 * the incoming gradient and the same other inputs; those get none. */
int mxw_grad_linear_in_ograd(mxw_grad_ctx *g);
/* The common one-input case: input 0's gradient is `op`(ograd) -- or `op`(ograd, input 0) with
 * with_input, for backward kernels that need the input's shape or values -- with the forward
 * node's params (e.g. "_backward_tile", or "reverse" for a self-adjoint op). */
int mxw_grad_set_fwd_op(mxw_grad_ctx *g, const char *op, int with_input);
/* Input 0's gradient is `op`(in...) with the forward node's params (a backward kernel of any inputs,
 * e.g. (label, output) for the output layers). */
int mxw_grad_set_fwd_op_of(mxw_grad_ctx *g, const char *op, const mxw_gid *in, int nin);

/* Each op family file ends with
 *     MXW_FAMILY(elemwise_unary, op_relu, op_sigmoid, ...)
 * The build generates the table of families from the file names (csrc/ops/<family>.c), so an
 * op is added in exactly one place and nothing registers by import side effect. */
typedef struct mxw_op_family {
  const char *name;
  const mxw_op_def *const *ops;
  int num_ops;
} mxw_op_family;
#define MXW_FAMILY(fam, ...)                                             \
  static const mxw_op_def *const mxw_family_ops_##fam[] = {__VA_ARGS__}; \
  const mxw_op_family mxw_family_##fam = {#fam, mxw_family_ops_##fam,    \
                                          (int)(sizeof(mxw_family_ops_##fam) / sizeof(mxw_family_ops_##fam[0]))}

/* ---- shared inference helpers -------------------------------------------------------------- */
/* Unifies a (possibly partial) shape into *dst; error naming `what` on a conflict. */
int mxw_shape_assign(mxw_shape *dst, const mxw_shape *src, const char *what);
/* The same, naming it by a printf format with one int (what_fmt, n: "input %d", i), formatted only
 * when there is a conflict to report: inference runs on every eager call. */
int mxw_shape_assign_nth(mxw_shape *dst, const mxw_shape *src, const char *what_fmt, int n);
/* Unifies `have` with the shape an op requires (-1 dims are free on both sides, filled in both
 * directions); a conflict reads "<name> has shape (..), expected (..)<rule>". */
int mxw_shape_unify(mxw_shape *have, const mxw_shape *want, const char *name, const char *rule);
/* Default type inference: every known dtype must agree; fills the unknown ones. */
int mxw_infer_type_same(const void *param, int nin, int *in, int nout, int *out);
/* Output 0 takes input 0's dtype (gradients whose other inputs, indices or shapes, keep theirs). */
int mxw_infer_type_first(const void *param, int nin, int *in, int nout, int *out);
/* Output 0 takes input 1's shape / dtype. */
int mxw_infer_shape_second(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out);
int mxw_infer_type_second(const void *param, int nin, int *in, int nout, int *out);
/* Same-shape elementwise: all inputs and outputs share one shape. */
int mxw_infer_shape_same(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out);
/* (A, R, S) -> (A, S, R) for elements of esize bytes (1, 2, 4 or 8). */
void mxw_swap_last2(const void *src, void *dst, int64_t A, int64_t R, int64_t S, size_t esize);
/* Normalises a possibly negative axis into [0, ndim); error if out of range. */
int mxw_normalize_axis(int64_t axis, int ndim, int *out);
/* A strided box (slice, _slice_assign): per axis, elements begin, begin + step, ... (len of them;
 * -1 = unknown). mxw_slice_check validates begin/end/step as the slice ops take them;
 * mxw_slice_ranges resolves them in an array of shape x as MXNet's GetIndexRange does
 * (numpy-style None defaults, negative indices, clamping; ops.md §3). */
typedef struct {
  int64_t begin, step, len;
} mxw_axis_range;
int mxw_slice_check(const mxw_tuple *begin, const mxw_tuple *end, const mxw_tuple *step);
int mxw_slice_ranges(const mxw_tuple *begin, const mxw_tuple *end, const mxw_tuple *step, const mxw_shape *x,
                     mxw_axis_range *r);

/* ---- registry and runtime internals ---------------------------------------------------------- */
const mxw_op_def *mxw_op_get(int op);
/* 0 when MXNet registers no FListInputNames for the op (monitor names its inputs input<i>). */
int mxw_op_lists_input_names(const mxw_op_def *op);
struct mxw_params {
  const mxw_op_def *op;
  int op_id;
  void *param; /* param_size bytes */
};
int mxw_runtime_is_training(void);
/* Random numbers for random ops and initializers (one global seeded stream, as mx.random). */
uint64_t mxw_rand_u64(void);
void mxw_rand_u64_fill(uint64_t *out, int64_t n); /* n successive mxw_rand_u64() values */
double mxw_rand_uniform(void);                    /* [0, 1) */
double mxw_rand_normal(void);                     /* N(0, 1) */

/* Memory accounting: array storage and executor arenas report their bytes here. */
void mxw_memory_account(double delta_bytes);

/* Scratch memory for kernels (packing buffers), 64-byte aligned: slot 0..MXW_SCRATCH_SLOTS-1
 * of the calling thread (each thread of the pool has its own), each grows and never shrinks;
 * NULL (with an error set) on allocation failure. Valid until the next request of the same slot
 * on the same thread. */
#define MXW_SCRATCH_SLOTS 4
void *mxw_scratch(int slot, size_t bytes);
/* Bytes held by every thread's retained kernel buffers (scratch slots, GEMM panels): their
 * owners report each change here (mxw_scratch_bytes() reads the sum). */
void mxw_scratch_account(int64_t delta_bytes);

/* ---- threads (parallel.c) ------------------------------------------------------------------------
 * mxw_parallel_for(n, align, fn, ctx) calls fn(ctx, begin, end) on contiguous chunks covering
 * [0, n), at most one per thread, each boundary a multiple of align, and returns when all ran.
 * The chunks depend only on (n, align, thread count): a kernel whose every output element is
 * computed the same way in any chunk gives bit-identical results for any thread count. Without
 * threads (or from inside a chunk) it is one inline call fn(ctx, 0, n). Chunks run concurrently:
 * they must not share scratch memory (mxw_scratch is for the calling thread only). */
typedef void (*mxw_task_fn)(void *ctx, int64_t begin, int64_t end);
void mxw_parallel_for(int64_t n, int64_t align, mxw_task_fn fn, void *ctx);
/* Runs fn once on every thread of the pool that has started (and on the caller), for per-thread
 * housekeeping such as freeing each worker's buffers; returns when all ran. */
void mxw_parallel_each(void (*fn)(void));

#endif /* MXW_CORE_H_ */
