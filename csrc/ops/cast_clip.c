/* cast_clip.c -- dtype conversion (Cast, amp_cast) and clip.
 * Semantics: ../shared/spec/ops.md §6 (Cast) and §3 (clip); amp_cast as MXNet 1.9.1's
 * src/operator/tensor/amp_cast.h.
 *  - Cast converts as C's static_cast does (float -> int truncates toward zero), by the core's one
 *    conversion rule (mxw_convert, csrc/core/dtype.c): integers keep their low bits, out-of-range
 *    values and NaN going to an integer dtype give what x86-64 gives (1e20 -> int32 INT32_MIN).
 *  - clip: y = x > a_max ? a_max : (x < a_min ? a_min : x), with a_min and a_max as float32;
 *    NaN passes through; output dtype = input dtype.
 * Large calls split into element ranges over the thread pool (mxw_parallel.h). */
#include "../core/mxw_parallel.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <simde/wasm/simd128.h>
#endif

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *const k_data[] = {"data", NULL};

/* ---- Cast ------------------------------------------------------------------------------------- */
typedef struct {
  int dtype;
} CastParam;

static const mxw_attr_spec k_cast_attrs[] = {
    MXW_A_DTYPE("dtype", CastParam, dtype, NULL, "output dtype"),
};

/* The output dtype is the attribute's, whatever the input's. */
static int infer_type_cast(const void *param, int nin, int *in, int nout, int *out) {
  int dt = ((const CastParam *)param)->dtype;
  if (out[0] >= 0 && out[0] != dt)
    return mxw_fail("output dtype %s does not match attribute dtype=%s", mxw_dtype_name(out[0]), mxw_dtype_name(dt));
  out[0] = dt;
  return 0;
}

static int fwd_cast(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  mxw_parallel_convert(in->data, in->dtype, out->data, out->dtype, mxw_tensor_size(in));
  return 0;
}

/* Cast and amp_cast: MXNet's _backward_cast / _backward_amp_cast (ElemwiseGradUseNone) convert the
 * output's gradient back to the input's dtype; here that is a Cast to the input dtype. */
static int grad_cast(mxw_grad_ctx *g) {
  const char *dt = mxw_dtype_name(mxw_grad_in_dtype(g, 0));
  return mxw_grad_set(g, 0, mxw_grad_op(g, "Cast", MXW_KV("dtype", dt), MXW_GIDS(mxw_grad_ograd(g, 0))));
}

static const mxw_op_def op_Cast = {
    .name = "Cast",
    .aliases = ALIASES("cast", "_npi_cast", "_npx_cast"),
    .doc = MXW_DOC("converts every element to dtype (C conversion: float -> int truncates toward zero)"),
    .attrs = k_cast_attrs,
    .num_attrs = 1,
    .param_size = sizeof(CastParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .infer_type = infer_type_cast,
    .forward = fwd_cast,
    .gradient = grad_cast};

/* ---- amp_cast: Cast for the float32/float16/bfloat16 inputs only, others pass unchanged --------- */
static int amp_castable(int dtype) { return dtype == MXW_FLOAT32 || dtype == MXW_FLOAT16 || dtype == MXW_BFLOAT16; }
static int infer_type_amp_cast(const void *param, int nin, int *in, int nout, int *out) {
  if (in[0] < 0) return 0; /* which rule applies depends on the input dtype */
  int dt = amp_castable(in[0]) ? ((const CastParam *)param)->dtype : in[0];
  if (out[0] >= 0 && out[0] != dt)
    return mxw_fail("output dtype %s does not match the amp_cast of a %s input (%s)", mxw_dtype_name(out[0]),
                    mxw_dtype_name(in[0]), mxw_dtype_name(dt));
  out[0] = dt;
  return 0;
}

static const mxw_op_def op_amp_cast = {
    .name = "amp_cast",
    .aliases = NULL,
    .doc = MXW_DOC("mixed-precision cast: float32/float16/bfloat16 inputs become dtype, other inputs are copied"),
    .attrs = k_cast_attrs,
    .num_attrs = 1,
    .param_size = sizeof(CastParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .infer_type = infer_type_amp_cast,
    .forward = fwd_cast,
    .gradient = grad_cast};

/* ---- clip ------------------------------------------------------------------------------------- */
typedef struct {
  double a_min, a_max;
} ClipParam;

static const mxw_attr_spec k_clip_attrs[] = {
    MXW_A_FLOAT("a_min", ClipParam, a_min, NULL, "minimum value"),
    MXW_A_FLOAT("a_max", ClipParam, a_max, NULL, "maximum value"),
};

/* The reference kernel. Comparisons with NaN are false, so NaN passes through. */
static inline float clip_f(float x, float lo, float hi) { return x > hi ? hi : (x < lo ? lo : x); }

/* float32, four lanes at a time. pmin(x, hi) = hi < x ? hi : x and pmax(t, lo) = t < lo ? lo : t
 * are exactly the two selects of clip_f, NaN lanes included. */
void mxw_clip_f32(const float *src, float *dst, int64_t n, float lo, float hi) {
  int64_t i = 0;
  v128_t vlo = wasm_f32x4_splat(lo), vhi = wasm_f32x4_splat(hi);
  for (; i + 4 <= n; i += 4) {
    v128_t x = wasm_v128_load(src + i);
    wasm_v128_store(dst + i, wasm_f32x4_pmax(wasm_f32x4_pmin(x, vhi), vlo));
  }
  for (; i < n; i++) dst[i] = clip_f(src[i], lo, hi);
}

static int kern_clip(const mxw_op_call *c) {
  const ClipParam *p = (const ClipParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(in);
  /* MXNet's ClipParam holds float32 bounds */
  float lo = (float)p->a_min, hi = (float)p->a_max;
  if (in->dtype == MXW_FLOAT32) {
    mxw_clip_f32((const float *)in->data, (float *)out->data, n, lo, hi);
  } else if (in->dtype == MXW_FLOAT64) {
    const double *restrict src = (const double *)in->data;
    double *restrict dst = (double *)out->data;
    for (int64_t i = 0; i < n; i++) {
      double x = src[i];
      dst[i] = x > hi ? (double)hi : (x < lo ? (double)lo : x);
    }
  } else {
    /* other dtypes compare through double; a bound stored into an integer dtype truncates */
    for (int64_t i = 0; i < n; i++) {
      double x = mxw_load_f64(in->data, in->dtype, i);
      mxw_store_f64(out->data, out->dtype, i, x > hi ? (double)hi : (x < lo ? (double)lo : x));
    }
  }
  return 0;
}
static int fwd_clip(const mxw_op_call *c) {
  return mxw_parallel_elemwise(c, mxw_tensor_size(&c->outputs[0]), MXW_COST_CHEAP, kern_clip);
}

/* _backward_clip(ograd, data): MXNet's clip_grad, ograd where a_min <= x <= a_max (bounds as float32,
 * NaN data passes the gradient), 0 elsewhere. */
static int kern_backward_clip(const mxw_op_call *c) {
  const ClipParam *p = (const ClipParam *)c->param;
  const mxw_tensor *gt = &c->inputs[0], *xt = &c->inputs[1];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(out);
  float lo = (float)p->a_min, hi = (float)p->a_max;
  if (gt->dtype == MXW_FLOAT32 && xt->dtype == MXW_FLOAT32) {
    const float *g = (const float *)gt->data, *x = (const float *)xt->data;
    float *d = (float *)out->data;
    int64_t i = 0;
    v128_t vlo = wasm_f32x4_splat(lo), vhi = wasm_f32x4_splat(hi);
    for (; i + 4 <= n; i += 4) {
      v128_t xv = wasm_v128_load(x + i);
      v128_t outside = wasm_v128_or(wasm_f32x4_gt(xv, vhi), wasm_f32x4_lt(xv, vlo));
      wasm_v128_store(d + i, wasm_v128_andnot(wasm_v128_load(g + i), outside));
    }
    for (; i < n; i++) d[i] = (x[i] > hi || x[i] < lo) ? 0.f : g[i];
    return 0;
  }
  if (gt->dtype == MXW_FLOAT64 && xt->dtype == MXW_FLOAT64) {
    const double *g = (const double *)gt->data, *x = (const double *)xt->data;
    double *d = (double *)out->data;
    for (int64_t i = 0; i < n; i++) d[i] = (x[i] > hi || x[i] < lo) ? 0.0 : g[i];
    return 0;
  }
  for (int64_t i = 0; i < n; i++) {
    double x = mxw_load_f64(xt->data, xt->dtype, i);
    mxw_store_f64(out->data, out->dtype, i, (x > hi || x < lo) ? 0.0 : mxw_load_f64(gt->data, gt->dtype, i));
  }
  return 0;
}
static int fwd_backward_clip(const mxw_op_call *c) {
  return mxw_parallel_elemwise(c, mxw_tensor_size(&c->outputs[0]), MXW_COST_CHEAP, kern_backward_clip);
}

static int grad_clip(mxw_grad_ctx *g) { /* ElemwiseGradUseIn{"_backward_clip"} */
  return mxw_grad_set_fwd_op(g, "_backward_clip", 1);
}
/* clip(x, 0, 6) is RELU6 (gluon's mobilenet.py): a Convolution or BatchNorm before it applies it
 * to its own output (graph fusion; the bounds compare as float32, as the kernel's) */
static int as_act_clip(const void *param) {
  const ClipParam *p = (const ClipParam *)param;
  return (float)p->a_min == 0.0f && (float)p->a_max == 6.0f ? MXW_ACT_RELU6 : 0;
}

static const mxw_op_def op_clip = {
    .name = "clip",
    .aliases = ALIASES("_npi_clip", "_sparse_clip"),
    .doc = MXW_DOC("limits values to [a_min, a_max]: x > a_max ? a_max : (x < a_min ? a_min : x); NaN passes through"),
    .attrs = k_clip_attrs,
    .num_attrs = 2,
    .param_size = sizeof(ClipParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_clip,
    .inplace = 1,
    .as_activation = as_act_clip,
    .gradient = grad_clip};

static const char *const k_ograd_data[] = {"ograd", "data", NULL};
static const mxw_op_def op_backward_clip = {
    .name = "_backward_clip",
    .doc = MXW_DOC("the gradient of clip: ograd where a_min <= data <= a_max, else 0"),
    .attrs = k_clip_attrs,
    .num_attrs = 2,
    .param_size = sizeof(ClipParam),
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_backward_clip,
    .inplace = 1,
    .gradient = mxw_grad_linear_in_ograd};

MXW_FAMILY(cast_clip, &op_Cast, &op_amp_cast, &op_clip, &op_backward_clip);
