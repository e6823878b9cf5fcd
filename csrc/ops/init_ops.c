/* init_ops.c -- operators with no inputs that fill an array: the fills (_zeros, _ones, _full),
 * ranges (_arange, _linspace) and _eye. Every output's shape comes from attributes, its dtype
 * from the `dtype` attribute. The random samplers are in random.c.
 *
 * Semantics follow MXNet 1.9.1 (src/operator/tensor/init_op.h):
 *  - shape attrs use the legacy 1.x convention: "()" and 0-sized dims mean "unknown", so inside
 *    a graph the shape may come from the consumer; called eagerly, a 0 dim is a 0 (the registry's
 *    invoke: nd.zeros([0, 3]) is empty) and "()" cannot be inferred.
 *  - as InitShape, a shape of 2^31 - 1 elements or more is refused (MXNet built without
 *    USE_INT64_TENSOR_SIZE, as its releases are).
 *  - `ctx` is accepted and ignored (there is one device). */
#include <math.h>

#include "../core/mxw_core.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- shared pieces ---------------------------------------------------------------------------- */

/* The `shape` attribute as a (possibly partial) output shape, legacy style: rank 0 -> unknown
 * rank, 0 dims -> unknown dims. */
static int shape_from_attr(const mxw_tuple *t, mxw_shape *s) {
  char buf[160];
  if (t->ndim > MXW_MAX_NDIM)
    return mxw_fail("attribute 'shape' has %d dimensions, at most %d are supported", t->ndim, MXW_MAX_NDIM);
  if (t->ndim <= 0) {
    s->ndim = -1;
    return 0;
  }
  s->ndim = t->ndim;
  for (int i = 0; i < t->ndim; i++) {
    if (t->v[i] < 0) {
      return mxw_fail("attribute 'shape' %s has a negative dimension", mxw_tuple_str(t, buf, sizeof buf));
    }
    s->dims[i] = t->v[i] == 0 ? -1 : t->v[i];
  }
  /* InitShape: "Size of tensor you are trying to allocate is larger than 2^31 elements" (the
   * product saturates at the limit, so huge dims cannot overflow it) */
  const int64_t limit = ((int64_t)1 << 31) - 1;
  int64_t size = 1;
  for (int i = 0; i < t->ndim && size > 0; i++) size = t->v[i] != 0 && size > limit / t->v[i] ? limit : size * t->v[i];
  if (size >= limit) {
    mxw_shape shown = mxw_shape_make(t->ndim, t->v);
    return mxw_fail(
        "attribute 'shape' %s: the size of a tensor must be below 2^31 - 1 elements (MXNet 1.9.1's "
        "InitShape, without USE_INT64_TENSOR_SIZE)",
        mxw_shape_str(&shown, buf, sizeof buf));
  }
  return 0;
}

/* InitShape: a known output shape is kept when the attribute says nothing; otherwise the two
 * must agree. */
static int infer_shape_from_attr(const mxw_tuple *t, int nout, mxw_shape *out) {
  mxw_shape s;
  MXW_TRY(shape_from_attr(t, &s));
  if (s.ndim < 0) return 0;
  return mxw_shape_assign(&out[0], &s, "output (attribute 'shape')");
}

/* InitType: the output dtype is the attribute's. */
static int assign_out_dtype(int *out, int dtype) {
  if (out[0] >= 0 && out[0] != dtype)
    return mxw_fail("output dtype %s does not match attribute dtype=%s", mxw_dtype_name(out[0]), mxw_dtype_name(dtype));
  out[0] = dtype;
  return 0;
}

/* Fills n elements with one value converted to the dtype as static_cast<DType>(v) does (the core's
 * one conversion rule, dtype.c: 1e20 -> int32 is INT32_MIN as on x86-64). */
static void fill_value(void *data, int dtype, int64_t n, double v) {
  if (n <= 0) return;
  if (dtype == MXW_FLOAT32) {
    float *restrict p = (float *)data;
    float f = (float)v;
    for (int64_t i = 0; i < n; i++) p[i] = f;
    return;
  }
  /* One converted element, replicated by element size. */
  uint64_t elem = 0;
  mxw_store_f64(&elem, dtype, 0, v);
  switch (mxw_dtype_size(dtype)) {
    case 1: memset(data, (int)*(uint8_t *)&elem, (size_t)n); break;
    case 2: {
      uint16_t e, *p = (uint16_t *)data;
      memcpy(&e, &elem, 2);
      for (int64_t i = 0; i < n; i++) p[i] = e;
      break;
    }
    case 4: {
      uint32_t e, *p = (uint32_t *)data;
      memcpy(&e, &elem, 4);
      for (int64_t i = 0; i < n; i++) p[i] = e;
      break;
    }
    default: {
      uint64_t *p = (uint64_t *)data;
      for (int64_t i = 0; i < n; i++) p[i] = elem;
      break;
    }
  }
}

static const char *const k_no_inputs[] = {NULL};

/* ---- _zeros, _ones, _full --------------------------------------------------------------------- */
typedef struct {
  mxw_tuple shape;
  mxw_str ctx;
  int dtype;
  double value; /* _full only */
} InitParam;

static const mxw_attr_spec k_init_attrs[] = {
    MXW_A_SHAPE("shape", InitParam, shape, "()", "shape of the output"),
    MXW_A_STRING("ctx", InitParam, ctx, "", "device of the output (accepted, ignored: one device)"),
    MXW_A_DTYPE("dtype", InitParam, dtype, "float32", "dtype of the output"),
    MXW_A_FLOAT("value", InitParam, value, NULL, "the value every element gets"),
};

static int infer_shape_init(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  return infer_shape_from_attr(&((const InitParam *)param)->shape, nout, out);
}
static int infer_type_init(const void *param, int nin, int *in, int nout, int *out) {
  return assign_out_dtype(out, ((const InitParam *)param)->dtype);
}

static int fwd_zeros(const mxw_op_call *c) {
  mxw_tensor *out = &c->outputs[0];
  /* all-zero bytes are 0 in every dtype, float16 and bfloat16 included */
  memset(out->data, 0, (size_t)mxw_tensor_size(out) * (size_t)mxw_dtype_size(out->dtype));
  return 0;
}
static int fwd_ones(const mxw_op_call *c) {
  fill_value(c->outputs[0].data, c->outputs[0].dtype, mxw_tensor_size(&c->outputs[0]), 1.0);
  return 0;
}
static int fwd_full(const mxw_op_call *c) {
  const InitParam *p = (const InitParam *)c->param;
  fill_value(c->outputs[0].data, c->outputs[0].dtype, mxw_tensor_size(&c->outputs[0]), p->value);
  return 0;
}

#define INIT_OP(VAR, NAME, ALIAS_LIST, NATTRS, FWD, DOC)          \
  static const mxw_op_def VAR = {.name = NAME,                    \
                                 .aliases = ALIAS_LIST,           \
                                 .doc = MXW_DOC(DOC),             \
                                 .attrs = k_init_attrs,           \
                                 .num_attrs = NATTRS,             \
                                 .param_size = sizeof(InitParam), \
                                 .num_inputs = 0,                 \
                                 .input_names = k_no_inputs,      \
                                 .num_outputs = 1,                \
                                 .infer_shape = infer_shape_init, \
                                 .infer_type = infer_type_init,   \
                                 .forward = FWD,                  \
                                 .no_grad = 1};

INIT_OP(op_zeros, "_zeros", ALIASES("_npi_zeros"), 3, fwd_zeros, "an array of zeros (attrs shape, dtype)")
INIT_OP(op_ones, "_ones", ALIASES("_npi_ones"), 3, fwd_ones, "an array of ones (attrs shape, dtype)")
INIT_OP(op_full, "_full", ALIASES("_npi_full"), 4, fwd_full,
        "an array filled with `value` (attrs shape, dtype, value), converted to dtype as C does")

/* ---- _arange ---------------------------------------------------------------------------------- */
typedef struct {
  double start;
  mxw_opt_float stop;
  double step;
  int64_t repeat;
  int infer_range;
  mxw_str ctx;
  int dtype;
} RangeParam;

static const mxw_attr_spec k_range_attrs[] = {
    MXW_A_FLOAT("start", RangeParam, start, NULL, "first value (or the end, when stop is None)"),
    MXW_A_OPT_FLOAT("stop", RangeParam, stop, "None", "end (excluded); None: the range is [0, start)"),
    MXW_A_FLOAT("step", RangeParam, step, "1", "spacing between values"),
    MXW_A_INT("repeat", RangeParam, repeat, "1", "how many times each value is repeated"),
    MXW_A_BOOL("infer_range", RangeParam, infer_range, "False",
               "with stop None: take the length from the consumer (graph inference)"),
    MXW_A_STRING("ctx", RangeParam, ctx, "", "device of the output (accepted, ignored)"),
    MXW_A_DTYPE("dtype", RangeParam, dtype, "float32", "dtype of the output"),
};

/* RangeParamParser: arange(n) means [0, n); then the attribute checks of RangeShape. */
static int validate_range(void *param) {
  RangeParam *p = (RangeParam *)param;
  if (!p->infer_range && !p->stop.has) {
    p->stop.has = 1;
    p->stop.v = p->start;
    p->start = 0;
  }
  MXW_CHECK(p->step != 0, "step=0 is not supported: the range would never end");
  MXW_CHECK(p->repeat > 0, "repeat must be > 0, got %lld", (long long)p->repeat);
  MXW_CHECK(isfinite(p->start) && isfinite(p->step) && (!p->stop.has || isfinite(p->stop.v)),
            "start, stop and step must be finite, got (%g, %g, %g)", p->start, p->stop.has ? p->stop.v : NAN, p->step);
  if (p->stop.has) {
    int ok = p->step > 0 ? p->start < p->stop.v : p->start > p->stop.v;
    MXW_CHECK(ok, "invalid range (start, stop, step) = (%g, %g, %g): it holds no value", p->start, p->stop.v, p->step);
    double n = ceil((p->stop.v - p->start) / p->step) * (double)p->repeat;
    MXW_CHECK(n < 2147483647.0,
              "the range (start, stop, step, repeat) = (%g, %g, %g, %lld) has %.0f elements, too many", p->start,
              p->stop.v, p->step, (long long)p->repeat, n);
  }
  return 0;
}

static int infer_shape_range(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const RangeParam *p = (const RangeParam *)param;
  if (!p->stop.has) return 0; /* infer_range: the length comes from elsewhere */
  int64_t n = (int64_t)ceil((p->stop.v - p->start) / p->step) * p->repeat;
  mxw_shape s = mxw_shape_make(1, &n);
  return mxw_shape_assign(&out[0], &s, "output");
}
static int infer_type_range(const void *param, int nin, int *in, int nout, int *out) {
  return assign_out_dtype(out, ((const RangeParam *)param)->dtype);
}

/* static_cast<DType>(v) by the core's one conversion rule (dtype.c), as the low bits of a 64-bit
 * word: the element is stored at the start of the (little-endian) word. */
static uint64_t cast_bits(double v, int dtype) {
  uint64_t w = 0;
  mxw_store_f64(&w, dtype, 0, v);
  return w;
}

/* out[i] = start + (i / repeat) * step, computed in the output dtype as MXNet's range_fwd does
 * (start and step are first converted to that dtype: truncated for integer dtypes). */
static int fwd_arange(const mxw_op_call *c) {
  const RangeParam *p = (const RangeParam *)c->param;
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(out), rep = p->repeat;
  switch (out->dtype) {
    case MXW_FLOAT32: {
      float *restrict o = (float *)out->data;
      float start = (float)p->start, step = (float)p->step;
      for (int64_t i = 0; i < n; i++) o[i] = start + (float)(i / rep) * step;
      break;
    }
    case MXW_FLOAT64: {
      double *restrict o = (double *)out->data;
      for (int64_t i = 0; i < n; i++) o[i] = p->start + (double)(i / rep) * p->step;
      break;
    }
    case MXW_FLOAT16:
    case MXW_BFLOAT16: {
      /* start and step rounded to the 16-bit type first, arithmetic in float */
      uint16_t hs, hd;
      mxw_store_f64(&hs, out->dtype, 0, p->start);
      mxw_store_f64(&hd, out->dtype, 0, p->step);
      float start = (float)mxw_load_f64(&hs, out->dtype, 0), step = (float)mxw_load_f64(&hd, out->dtype, 0);
      for (int64_t i = 0; i < n; i++) mxw_store_f64(out->data, out->dtype, i, start + (float)(i / rep) * step);
      break;
    }
    default: {
      /* integer dtypes: start and step cast to the dtype, then integer arithmetic wrapping modulo
       * the type's width as DType does (only the low bits matter, so no sign extension is needed) */
      uint64_t start = cast_bits(p->start, out->dtype), step = cast_bits(p->step, out->dtype);
      int size = mxw_dtype_size(out->dtype);
      for (int64_t i = 0; i < n; i++) {
        uint64_t v = start + (uint64_t)(i / rep) * step;
        switch (size) {
          case 1: ((uint8_t *)out->data)[i] = out->dtype == MXW_BOOL ? (uint8_t)((uint8_t)v != 0) : (uint8_t)v; break;
          case 2: ((uint16_t *)out->data)[i] = (uint16_t)v; break;
          case 4: ((uint32_t *)out->data)[i] = (uint32_t)v; break;
          default: ((uint64_t *)out->data)[i] = v; break;
        }
      }
      break;
    }
  }
  return 0;
}

static const mxw_op_def op_arange = {
    .name = "_arange",
    .aliases = ALIASES("_npi_arange"),
    .doc = MXW_DOC("evenly spaced values in [start, stop) by step, each repeated `repeat` times; arange(n) is [0, n)"),
    .attrs = k_range_attrs,
    .num_attrs = 7,
    .param_size = sizeof(RangeParam),
    .validate = validate_range,
    .num_inputs = 0,
    .input_names = k_no_inputs,
    .num_outputs = 1,
    .infer_shape = infer_shape_range,
    .infer_type = infer_type_range,
    .forward = fwd_arange,
    .no_grad = 1};

/* ---- _linspace -------------------------------------------------------------------------------- */
typedef struct {
  double start, stop;
  int64_t num;
  int endpoint;
  mxw_str ctx;
  int dtype;
} LinspaceParam;

static const mxw_attr_spec k_linspace_attrs[] = {
    MXW_A_FLOAT("start", LinspaceParam, start, NULL, "first value"),
    MXW_A_FLOAT("stop", LinspaceParam, stop, NULL, "last value (included when endpoint)"),
    MXW_A_INT("num", LinspaceParam, num, NULL, "number of values (>= 0)"),
    MXW_A_BOOL("endpoint", LinspaceParam, endpoint, "True", "whether stop is the last value"),
    MXW_A_STRING("ctx", LinspaceParam, ctx, "", "device of the output (accepted, ignored)"),
    MXW_A_DTYPE("dtype", LinspaceParam, dtype, "float32", "dtype of the output"),
};

static int validate_linspace(void *param) {
  const LinspaceParam *p = (const LinspaceParam *)param;
  MXW_CHECK(p->num >= 0, "num must be non-negative, got %lld", (long long)p->num);
  MXW_CHECK(p->num < 2147483647, "num=%lld is too large", (long long)p->num);
  return 0;
}
static int infer_shape_linspace(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  int64_t n = ((const LinspaceParam *)param)->num;
  mxw_shape s = mxw_shape_make(1, &n);
  return mxw_shape_assign(&out[0], &s, "output");
}
static int infer_type_linspace(const void *param, int nin, int *in, int nout, int *out) {
  return assign_out_dtype(out, ((const LinspaceParam *)param)->dtype);
}

/* out[i] = DType(start + step * i) in double, step = (stop - start) / (num - endpoint). The last
 * value is that formula too (as in MXNet), not forced to stop. */
static int fwd_linspace(const mxw_op_call *c) {
  const LinspaceParam *p = (const LinspaceParam *)c->param;
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(out);
  int64_t steps = p->endpoint ? p->num - 1 : p->num;
  double step = steps > 0 ? (p->stop - p->start) / (double)steps : 0.0;
  if (out->dtype == MXW_FLOAT32) {
    float *restrict o = (float *)out->data;
    for (int64_t i = 0; i < n; i++) o[i] = (float)(p->start + step * (double)i);
  } else {
    for (int64_t i = 0; i < n; i++) mxw_store_f64(out->data, out->dtype, i, p->start + step * (double)i);
  }
  return 0;
}

static const mxw_op_def op_linspace = {
    .name = "_linspace",
    .aliases = ALIASES("_npi_linspace"),
    .doc = MXW_DOC("num evenly spaced values from start to stop (stop included when endpoint)"),
    .attrs = k_linspace_attrs,
    .num_attrs = 6,
    .param_size = sizeof(LinspaceParam),
    .validate = validate_linspace,
    .num_inputs = 0,
    .input_names = k_no_inputs,
    .num_outputs = 1,
    .infer_shape = infer_shape_linspace,
    .infer_type = infer_type_linspace,
    .forward = fwd_linspace,
    .no_grad = 1};

/* ---- _eye ------------------------------------------------------------------------------------- */
typedef struct {
  int64_t N, M, k;
  mxw_str ctx;
  int dtype;
} EyeParam;

static const mxw_attr_spec k_eye_attrs[] = {
    MXW_A_INT("N", EyeParam, N, NULL, "number of rows"),
    MXW_A_INT("M", EyeParam, M, "0", "number of columns; 0 means N"),
    MXW_A_INT("k", EyeParam, k, "0", "diagonal: 0 main, > 0 upper, < 0 lower"),
    MXW_A_STRING("ctx", EyeParam, ctx, "", "device of the output (accepted, ignored)"),
    MXW_A_DTYPE("dtype", EyeParam, dtype, "float32", "dtype of the output"),
};

static int validate_eye(void *param) {
  const EyeParam *p = (const EyeParam *)param;
  MXW_CHECK(p->N >= 0, "N must be non-negative, got %lld", (long long)p->N);
  MXW_CHECK(p->M >= 0, "M must be non-negative, got %lld", (long long)p->M);
  int64_t cols = p->M > 0 ? p->M : p->N;
  MXW_CHECK(p->N < 2147483647 && cols < 2147483647 && (double)p->N * (double)cols < 2147483647.0,
            "an eye of shape (%lld, %lld) is too large", (long long)p->N, (long long)cols);
  return 0;
}
static int infer_shape_eye(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const EyeParam *p = (const EyeParam *)param;
  int64_t dims[2] = {p->N, p->M > 0 ? p->M : p->N};
  mxw_shape s = mxw_shape_make(2, dims);
  return mxw_shape_assign(&out[0], &s, "output");
}
static int infer_type_eye(const void *param, int nin, int *in, int nout, int *out) {
  return assign_out_dtype(out, ((const EyeParam *)param)->dtype);
}
static int fwd_eye(const mxw_op_call *c) {
  const EyeParam *p = (const EyeParam *)c->param;
  mxw_tensor *out = &c->outputs[0];
  int64_t rows = out->shape.dims[0], cols = out->shape.dims[1];
  memset(out->data, 0, (size_t)(rows * cols) * (size_t)mxw_dtype_size(out->dtype));
  /* ones at (r, r + k) for the rows where that column exists */
  if (p->k >= cols || p->k <= -rows) return 0; /* the diagonal misses the matrix */
  int64_t r0 = p->k < 0 ? -p->k : 0;
  for (int64_t r = r0; r < rows && r + p->k < cols; r++) mxw_store_f64(out->data, out->dtype, r * cols + r + p->k, 1.0);
  return 0;
}

static const mxw_op_def op_eye = {.name = "_eye",
                                  .aliases = NULL,
                                  .doc = MXW_DOC("an N x M matrix with ones on diagonal k and zeros elsewhere"),
                                  .attrs = k_eye_attrs,
                                  .num_attrs = 5,
                                  .param_size = sizeof(EyeParam),
                                  .validate = validate_eye,
                                  .num_inputs = 0,
                                  .input_names = k_no_inputs,
                                  .num_outputs = 1,
                                  .infer_shape = infer_shape_eye,
                                  .infer_type = infer_type_eye,
                                  .forward = fwd_eye,
                                  .no_grad = 1};

MXW_FAMILY(init_ops, &op_zeros, &op_ones, &op_full, &op_arange, &op_linspace, &op_eye);
