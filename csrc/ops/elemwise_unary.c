/* elemwise_unary.c -- elementwise unary math (relu, sigmoid, exp, ...), Activation, the copy
 * ops (_copy/identity, BlockGrad, make_loss), zeros_like/ones_like and hard_sigmoid.
 * Semantics: ../shared/spec/ops.md §6 and Activation in §1. Output dtype = input dtype; float32
 * and float64 compute in their own type, other dtypes through double and back (integer results
 * truncate, as DType(op(x)) does in MXNet). */
#include <math.h>

#include "../core/mxw_core.h"

static const char *const k_data[] = {"data", NULL};

/* The scalar definitions, shared by the unary ops and Activation. */
static inline float relu_f(float x) { return (x > 0.f || x != x) ? x : 0.f; }
static inline double relu_d(double x) { return (x > 0.0 || x != x) ? x : 0.0; }
static inline float sigmoid_f(float x) { return 1.f / (1.f + expf(-x)); }
static inline double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
static inline float softrelu_f(float x) { return x > 20.f ? x : log1pf(expf(x)); }
static inline double softrelu_d(double x) { return x > 20.0 ? x : log1p(exp(x)); }
static inline float softsign_f(float x) { return x / (1.f + fabsf(x)); }
static inline double softsign_d(double x) { return x / (1.0 + fabs(x)); }
static inline double sign_d(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

/* One forward per op, with the expression inlined into the loop so the compiler vectorises the
 * simple ones (-msimd128 / SSE natively). X32 and X64 are expressions in `x`. */
#define UNARY_FORWARD(NAME, X32, X64)                                                             \
  static int fwd_##NAME(const mxw_op_call *c) {                                                   \
    const mxw_tensor *in = &c->inputs[0];                                                         \
    mxw_tensor *out = &c->outputs[0];                                                             \
    int64_t n = mxw_tensor_size(in);                                                              \
    if (in->dtype == MXW_FLOAT32) {                                                               \
      const float *src = (const float *)in->data; /* may alias dst (in place) */                                        \
      float *dst = (float *)out->data;                                                   \
      for (int64_t i = 0; i < n; i++) {                                                           \
        float x = src[i];                                                                         \
        (void)x;                                                                                  \
        dst[i] = (X32);                                                                           \
      }                                                                                           \
    } else if (in->dtype == MXW_FLOAT64) {                                                        \
      const double *src = (const double *)in->data;                                      \
      double *dst = (double *)out->data;                                                 \
      for (int64_t i = 0; i < n; i++) {                                                           \
        double x = src[i];                                                                        \
        (void)x;                                                                                  \
        dst[i] = (X64);                                                                           \
      }                                                                                           \
    } else {                                                                                      \
      for (int64_t i = 0; i < n; i++) {                                                           \
        double x = mxw_load_f64(in->data, in->dtype, i);                                          \
        (void)x;                                                                                  \
        mxw_store_f64(out->data, out->dtype, i, (X64));                                           \
      }                                                                                           \
    }                                                                                             \
    return 0;                                                                                     \
  }

#define UNARY_DEF(NAME, OPNAME, ALIASES, DOC, AS_ACT)                                             \
  static const mxw_op_def op_##NAME = {                                                           \
      .name = OPNAME, .aliases = ALIASES, .doc = DOC, .num_inputs = 1, .input_names = k_data,     \
      .num_outputs = 1, .infer_shape = mxw_infer_shape_same, .forward = fwd_##NAME, .inplace = 1, \
      .as_activation = AS_ACT};

#define UNARY_OP(NAME, ALIASES, X32, X64, DOC)                                                    \
  UNARY_FORWARD(NAME, X32, X64)                                                                   \
  UNARY_DEF(NAME, #NAME, ALIASES, DOC, NULL)

/* Activation ops a producer (FullyConnected, Convolution) can apply itself: graph fusion. */
#define ACT_UNARY_OP(NAME, ALIASES, X32, X64, DOC, ACT)                                           \
  static int as_act_##NAME(const void *param) {                                                   \
    (void)param;                                                                                  \
    return ACT;                                                                                   \
  }                                                                                               \
  UNARY_FORWARD(NAME, X32, X64)                                                                   \
  UNARY_DEF(NAME, #NAME, ALIASES, DOC, as_act_##NAME)

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})

ACT_UNARY_OP(relu, ALIASES("_npx_relu"), relu_f(x), relu_d(x), "max(x, 0); NaN propagates", MXW_ACT_RELU)
ACT_UNARY_OP(sigmoid, ALIASES("_npx_sigmoid"), sigmoid_f(x), sigmoid_d(x), "1 / (1 + exp(-x))", MXW_ACT_SIGMOID)
ACT_UNARY_OP(tanh, ALIASES("_npi_tanh"), tanhf(x), tanh(x), "hyperbolic tangent", MXW_ACT_TANH)
UNARY_OP(exp, ALIASES("_npi_exp"), expf(x), exp(x), "e^x")
UNARY_OP(expm1, ALIASES("_npi_expm1"), expm1f(x), expm1(x), "e^x - 1")
UNARY_OP(log, ALIASES("_npi_log"), logf(x), log(x), "natural logarithm")
UNARY_OP(log1p, ALIASES("_npi_log1p"), log1pf(x), log1p(x), "log(1 + x)")
UNARY_OP(log2, ALIASES("_npi_log2"), log2f(x), log2(x), "base-2 logarithm")
UNARY_OP(log10, ALIASES("_npi_log10"), log10f(x), log10(x), "base-10 logarithm")
UNARY_OP(sqrt, ALIASES("_npi_sqrt"), sqrtf(x), sqrt(x), "square root")
UNARY_OP(rsqrt, NULL, 1.f / sqrtf(x), 1.0 / sqrt(x), "1 / sqrt(x)")
UNARY_OP(cbrt, ALIASES("_npi_cbrt"), cbrtf(x), cbrt(x), "cube root")
UNARY_OP(square, ALIASES("_npi_square"), x * x, x * x, "x * x")
UNARY_OP(reciprocal, ALIASES("_npi_reciprocal"), 1.f / x, 1.0 / x, "1 / x")
UNARY_OP(abs, ALIASES("_npi_absolute"), fabsf(x), fabs(x), "|x|")
UNARY_OP(negative, ALIASES("_npi_negative"), -x, -x, "-x")
UNARY_OP(sign, ALIASES("_npi_sign"), (float)sign_d(x), sign_d(x), "-1, 0 or 1")
UNARY_OP(floor, ALIASES("_npi_floor"), floorf(x), floor(x), "round down")
UNARY_OP(ceil, ALIASES("_npi_ceil"), ceilf(x), ceil(x), "round up")
UNARY_OP(round, NULL, roundf(x), round(x), "round half away from zero")
UNARY_OP(rint, ALIASES("_npi_rint"), rintf(x), rint(x), "round half to even")
UNARY_OP(fix, ALIASES("_npi_fix"), truncf(x), trunc(x), "round toward zero")
UNARY_OP(trunc, ALIASES("_npi_trunc"), truncf(x), trunc(x), "round toward zero")
UNARY_OP(erf, ALIASES("_npx_erf"), erff(x), erf(x), "error function")
ACT_UNARY_OP(softsign, NULL, softsign_f(x), softsign_d(x), "x / (1 + |x|)", MXW_ACT_SOFTSIGN)
UNARY_OP(sin, ALIASES("_npi_sin"), sinf(x), sin(x), "sine")
UNARY_OP(cos, ALIASES("_npi_cos"), cosf(x), cos(x), "cosine")
UNARY_OP(tan, ALIASES("_npi_tan"), tanf(x), tan(x), "tangent")
UNARY_OP(arcsin, ALIASES("_npi_arcsin"), asinf(x), asin(x), "inverse sine")
UNARY_OP(arccos, ALIASES("_npi_arccos"), acosf(x), acos(x), "inverse cosine")
UNARY_OP(arctan, ALIASES("_npi_arctan"), atanf(x), atan(x), "inverse tangent")
UNARY_OP(sinh, ALIASES("_npi_sinh"), sinhf(x), sinh(x), "hyperbolic sine")
UNARY_OP(cosh, ALIASES("_npi_cosh"), coshf(x), cosh(x), "hyperbolic cosine")
UNARY_OP(arcsinh, ALIASES("_npi_arcsinh"), asinhf(x), asinh(x), "inverse hyperbolic sine")
UNARY_OP(arccosh, ALIASES("_npi_arccosh"), acoshf(x), acosh(x), "inverse hyperbolic cosine")
UNARY_OP(arctanh, ALIASES("_npi_arctanh"), atanhf(x), atanh(x), "inverse hyperbolic tangent")
UNARY_OP(gamma, ALIASES("_npi_gamma"), tgammaf(x), tgamma(x), "gamma function")
UNARY_OP(gammaln, ALIASES("_npi_gammaln"), lgammaf(x), lgamma(x), "log |gamma(x)|")
UNARY_OP(degrees, ALIASES("_npi_degrees"), x * (float)(180.0 / M_PI), x * (180.0 / M_PI), "radians to degrees")
UNARY_OP(radians, ALIASES("_npi_radians"), x * (float)(M_PI / 180.0), x * (M_PI / 180.0), "degrees to radians")
UNARY_OP(logical_not, ALIASES("_npi_logical_not"), (float)(x == 0.f), (double)(x == 0.0), "1 where x == 0, else 0")
UNARY_OP(_copy, ALIASES("identity", "_npi_copy"), x, x, "a copy of the input")
UNARY_OP(BlockGrad, ALIASES("stop_gradient"), x, x, "identity forward; no gradient flows back")
UNARY_OP(make_loss, NULL, x, x, "identity forward; marks a loss for training")
UNARY_OP(zeros_like, ALIASES("_npi_zeros_like"), 0.f, 0.0, "zeros of the input's shape and dtype")
UNARY_OP(ones_like, ALIASES("_npi_ones_like"), 1.f, 1.0, "ones of the input's shape and dtype")

/* ---- hard_sigmoid (alpha, beta) ------------------------------------------------------------- */
typedef struct {
  double alpha, beta;
} HardSigmoidParam;
static const mxw_attr_spec k_hard_sigmoid_attrs[] = {
    MXW_A_FLOAT("alpha", HardSigmoidParam, alpha, "0.2", "slope"),
    MXW_A_FLOAT("beta", HardSigmoidParam, beta, "0.5", "offset"),
};
static int fwd_hard_sigmoid(const mxw_op_call *c) {
  const HardSigmoidParam *p = (const HardSigmoidParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(in);
  for (int64_t i = 0; i < n; i++) {
    double v = p->alpha * mxw_load_f64(in->data, in->dtype, i) + p->beta;
    mxw_store_f64(out->data, out->dtype, i, v < 0 ? 0 : (v > 1 ? 1 : v));
  }
  return 0;
}
static const mxw_op_def op_hard_sigmoid = {
    .name = "hard_sigmoid", .aliases = ALIASES("_npx_hard_sigmoid"), .doc = "max(0, min(1, alpha * x + beta))",
    .attrs = k_hard_sigmoid_attrs, .num_attrs = 2, .param_size = sizeof(HardSigmoidParam), .num_inputs = 1,
    .input_names = k_data, .num_outputs = 1, .infer_shape = mxw_infer_shape_same, .forward = fwd_hard_sigmoid,
    .inplace = 1};

/* ---- Activation ------------------------------------------------------------------------------ */
enum { ACT_RELU, ACT_SIGMOID, ACT_TANH, ACT_SOFTRELU, ACT_SOFTSIGN };
static const char *const k_act_types[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign", NULL};
typedef struct {
  int act_type;
} ActivationParam;
static const mxw_attr_spec k_activation_attrs[] = {
    MXW_A_ENUM("act_type", ActivationParam, act_type, NULL, k_act_types, "activation function"),
};

static int as_act_Activation(const void *param) {
  static const int k_acts[] = {MXW_ACT_RELU, MXW_ACT_SIGMOID, MXW_ACT_TANH, MXW_ACT_SOFTRELU, MXW_ACT_SOFTSIGN};
  return k_acts[((const ActivationParam *)param)->act_type];
}

/* The activations as one in-place pass (a fused producer calls this on its output). */
void mxw_apply_act(void *data, int dtype, int64_t n, int act) {
  if (dtype == MXW_FLOAT32) {
    float *x = (float *)data;
    switch (act) {
      case MXW_ACT_RELU: for (int64_t i = 0; i < n; i++) x[i] = relu_f(x[i]); break;
      case MXW_ACT_SIGMOID: for (int64_t i = 0; i < n; i++) x[i] = sigmoid_f(x[i]); break;
      case MXW_ACT_TANH: for (int64_t i = 0; i < n; i++) x[i] = tanhf(x[i]); break;
      case MXW_ACT_SOFTRELU: for (int64_t i = 0; i < n; i++) x[i] = softrelu_f(x[i]); break;
      case MXW_ACT_SOFTSIGN: for (int64_t i = 0; i < n; i++) x[i] = softsign_f(x[i]); break;
      default: break;
    }
    return;
  }
  for (int64_t i = 0; i < n && act != MXW_ACT_NONE; i++) {
    double v = mxw_load_f64(data, dtype, i);
    switch (act) {
      case MXW_ACT_RELU: v = relu_d(v); break;
      case MXW_ACT_SIGMOID: v = sigmoid_d(v); break;
      case MXW_ACT_TANH: v = tanh(v); break;
      case MXW_ACT_SOFTRELU: v = softrelu_d(v); break;
      default: v = softsign_d(v); break;
    }
    mxw_store_f64(data, dtype, i, v);
  }
}

static int fwd_Activation(const mxw_op_call *c) {
  switch (((const ActivationParam *)c->param)->act_type) {
    case ACT_RELU: return fwd_relu(c);
    case ACT_SIGMOID: return fwd_sigmoid(c);
    case ACT_TANH: return fwd_tanh(c);
    case ACT_SOFTSIGN: return fwd_softsign(c);
    default: break;
  }
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(in);
  if (in->dtype == MXW_FLOAT32) {
    const float *src = (const float *)in->data;
    float *dst = (float *)out->data;
    for (int64_t i = 0; i < n; i++) dst[i] = softrelu_f(src[i]);
  } else {
    for (int64_t i = 0; i < n; i++)
      mxw_store_f64(out->data, out->dtype, i, softrelu_d(mxw_load_f64(in->data, in->dtype, i)));
  }
  return 0;
}

static const mxw_op_def op_Activation = {
    .name = "Activation", .aliases = ALIASES("_npx_activation"),
    .doc = "relu, sigmoid, tanh, softrelu (log(1 + e^x)) or softsign, elementwise",
    .attrs = k_activation_attrs, .num_attrs = 1, .param_size = sizeof(ActivationParam), .num_inputs = 1,
    .input_names = k_data, .num_outputs = 1, .infer_shape = mxw_infer_shape_same, .forward = fwd_Activation,
    .inplace = 1, .as_activation = as_act_Activation};

MXW_FAMILY(elemwise_unary, &op_relu, &op_sigmoid, &op_tanh, &op_exp, &op_expm1, &op_log, &op_log1p, &op_log2,
           &op_log10, &op_sqrt, &op_rsqrt, &op_cbrt, &op_square, &op_reciprocal, &op_abs, &op_negative, &op_sign,
           &op_floor, &op_ceil, &op_round, &op_rint, &op_fix, &op_trunc, &op_erf, &op_softsign, &op_sin, &op_cos,
           &op_tan, &op_arcsin, &op_arccos, &op_arctan, &op_sinh, &op_cosh, &op_arcsinh, &op_arccosh,
           &op_arctanh, &op_gamma, &op_gammaln, &op_degrees, &op_radians, &op_logical_not, &op__copy,
           &op_BlockGrad, &op_make_loss, &op_zeros_like, &op_ones_like, &op_hard_sigmoid, &op_Activation);
