/* elemwise_unary.c -- elementwise unary math (relu, sigmoid, exp, ...), Activation, the copy
 * ops (_copy/identity, BlockGrad, make_loss), zeros_like/ones_like and hard_sigmoid.
 * Semantics: ../shared/spec/ops.md §6 and Activation in §1. Output dtype = input dtype; float32
 * and float64 compute in their own type, other dtypes through double and back (integer results
 * convert by the core's rule, as DType(op(x)) does in MXNet: abs of INT32_MIN is INT32_MIN).
 * negative works in the dtype itself (integers wrap) and the identity ops copy the bytes.
 * Threads: every kernel here maps element i to element i, so large calls run as elementwise
 * sub-calls over the pool (mxw_parallel_elemwise), each op with its cost class (MXW_COST_*). */
#include <math.h>

#include "../core/mxw_parallel.h"
#include "../core/simd.h"
#include "../kernels/vmath.h"

static const char *const k_data[] = {"data", NULL};

/* The scalar definitions, shared by the unary ops and Activation. */
static inline double relu_d(double x) { return (x > 0.0 || x != x) ? x : 0.0; }
static inline double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
static inline double softrelu_d(double x) { return x > 20.0 ? x : log1p(exp(x)); }
static inline float softsign_f(float x) { return x / (1.f + fabsf(x)); }
static inline double softsign_d(double x) { return x / (1.0 + fabs(x)); }
static inline double sign_d(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

/* fwd_NAME: kern_NAME over the pool when the call is large (COST element-ops per element). */
#define PARALLEL_FORWARD(NAME, COST)                                                     \
  static int fwd_##NAME(const mxw_op_call *c) {                                          \
    return mxw_parallel_elemwise(c, mxw_tensor_size(&c->outputs[0]), COST, kern_##NAME); \
  }

/* float16 and bfloat16 compute as MXNet's half_t does, in float32: chunks of the input widened
 * into a stack buffer, the float32 code run there, the results rounded back (through double and
 * one element at a time this took ~13 ns per element, against ~1.5). */
#define UNARY_HALF(in, out) ((in)->dtype == (out)->dtype && ((in)->dtype == MXW_FLOAT16 || (in)->dtype == MXW_BFLOAT16))
#define UNARY_HALF_CHUNK 512

/* One forward per op, with the expression inlined into the loop so the compiler vectorises the
 * simple ones (-msimd128 / SSE natively). X32 and X64 are expressions in `x`; F32 (the _V forms)
 * is instead a vmath array function for float32 (exp, sigmoid, tanh, relu: SIMD polynomials in
 * place of one libm call per element, csrc/kernels/vmath.h). */
#define UNARY_FORWARD_BODY(NAME, F32_STMT, X64, COST)                                 \
  static int kern_##NAME(const mxw_op_call *c) {                                      \
    const mxw_tensor *in = &c->inputs[0];                                             \
    mxw_tensor *out = &c->outputs[0];                                                 \
    int64_t n = mxw_tensor_size(in);                                                  \
    if (in->dtype == MXW_FLOAT32) {                                                   \
      const float *src = (const float *)in->data; /* may alias dst (in place) */      \
      float *dst = (float *)out->data;                                                \
      F32_STMT                                                                        \
    } else if (in->dtype == MXW_FLOAT64) {                                            \
      const double *src = (const double *)in->data;                                   \
      double *dst = (double *)out->data;                                              \
      for (int64_t i = 0; i < n; i++) {                                               \
        double x = src[i];                                                            \
        (void)x;                                                                      \
        dst[i] = (X64);                                                               \
      }                                                                               \
    } else if (UNARY_HALF(in, out)) {                                                 \
      float buf[UNARY_HALF_CHUNK];                                                    \
      for (int64_t i0 = 0; i0 < n; i0 += UNARY_HALF_CHUNK) {                          \
        const int64_t m = n - i0 < UNARY_HALF_CHUNK ? n - i0 : UNARY_HALF_CHUNK;      \
        mxw_convert((const char *)in->data + 2 * i0, in->dtype, buf, MXW_FLOAT32, m); \
        {                                                                             \
          const float *src = buf;                                                     \
          float *dst = buf;                                                           \
          const int64_t n = m;                                                        \
          F32_STMT                                                                    \
        }                                                                             \
        mxw_convert(buf, MXW_FLOAT32, (char *)out->data + 2 * i0, out->dtype, m);     \
      }                                                                               \
    } else {                                                                          \
      for (int64_t i = 0; i < n; i++) {                                               \
        double x = mxw_load_f64(in->data, in->dtype, i);                              \
        (void)x;                                                                      \
        mxw_store_f64(out->data, out->dtype, i, (X64));                               \
      }                                                                               \
    }                                                                                 \
    return 0;                                                                         \
  }                                                                                   \
  PARALLEL_FORWARD(NAME, COST)
#define UNARY_F32_LOOP(X32)         \
  for (int64_t i = 0; i < n; i++) { \
    float x = src[i];               \
    (void)x;                        \
    dst[i] = (X32);                 \
  }
#define UNARY_FORWARD(NAME, X32, X64, COST) UNARY_FORWARD_BODY(NAME, UNARY_F32_LOOP(X32), X64, COST)
#define UNARY_FORWARD_V(NAME, F32, X64, COST) UNARY_FORWARD_BODY(NAME, F32(src, dst, n);, X64, COST)

#define UNARY_DEF(NAME, OPNAME, ALIASES, DOC, AS_ACT, GRADSPEC)             \
  static const mxw_op_def op_##NAME = {.name = OPNAME,                      \
                                       .aliases = ALIASES,                  \
                                       .doc = MXW_DOC(DOC),                 \
                                       .num_inputs = 1,                     \
                                       .input_names = k_data,               \
                                       .num_outputs = 1,                    \
                                       .infer_shape = mxw_infer_shape_same, \
                                       .forward = fwd_##NAME,               \
                                       .inplace = 1,                        \
                                       .as_activation = AS_ACT,             \
                                       GRADSPEC};

#define UNARY_OP(NAME, ALIASES, X32, X64, DOC, GRADSPEC, COST) \
  UNARY_FORWARD(NAME, X32, X64, COST)                          \
  UNARY_DEF(NAME, #NAME, ALIASES, DOC, NULL, GRADSPEC)

/* Activation ops a producer (FullyConnected, Convolution) can apply itself: graph fusion. */
#define ACT_AS(NAME, ACT)                       \
  static int as_act_##NAME(const void *param) { \
    (void)param;                                \
    return ACT;                                 \
  }
#define ACT_UNARY_OP(NAME, ALIASES, X32, X64, DOC, ACT, GRADSPEC, COST) \
  ACT_AS(NAME, ACT)                                                     \
  UNARY_FORWARD(NAME, X32, X64, COST)                                   \
  UNARY_DEF(NAME, #NAME, ALIASES, DOC, as_act_##NAME, GRADSPEC)
#define ACT_UNARY_OP_V(NAME, ALIASES, F32, X64, DOC, ACT, GRADSPEC, COST) \
  ACT_AS(NAME, ACT)                                                       \
  UNARY_FORWARD_V(NAME, F32, X64, COST)                                   \
  UNARY_DEF(NAME, #NAME, ALIASES, DOC, as_act_##NAME, GRADSPEC)
#define UNARY_OP_V(NAME, ALIASES, F32, X64, DOC, GRADSPEC, COST) \
  UNARY_FORWARD_V(NAME, F32, X64, COST)                          \
  UNARY_DEF(NAME, #NAME, ALIASES, DOC, NULL, GRADSPEC)

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- gradients (MXNet's FGradient of each op: elemwise_unary_op_{basic,trig,logexp,pow}.cc) ----
 * Most ops differentiate through a `_backward_<op>` kernel with MXNet's name and inputs
 * (ograd, x) for ElemwiseGradUseIn or (ograd, y) for ElemwiseGradUseOut, computing
 * dx = ograd * f'(.) in one pass (float32 and float64 in their own type, other dtypes through
 * double). exp (dx = ograd * y), negative, _copy and make_loss build from other ops; rounding,
 * sign, logical_not, BlockGrad and zeros_like/ones_like are non-differentiable (MakeZeroGradNodes;
 * sign's _backward_sign is all zeros, the same thing). */
static const char *const k_ograd_data[] = {"ograd", "data", NULL};

/* digamma (psi = d/dx log|gamma(x)|): the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 6, then
 * the asymptotic series log x - 1/2x - sum B_2k / (2k x^2k); reflection psi(1 - x) - pi cot(pi x)
 * for x < 0. At the poles (0, -1, -2, ...) MXNet's cephes psi returns the largest double. */
double mxw_digamma(double x) {
  if (x != x) return x;
  if (x <= 0 && floor(x) == x) return 1.7976931348623157e308;
  double reflect = 0;
  if (x < 0) {
    /* psi(x) = psi(1 - x) - pi / tan(pi x), with x reduced to (-1/2, 1/2] first for accuracy */
    double r = x - floor(x + 0.5);
    reflect = M_PI / tan(M_PI * r);
    x = 1 - x;
  }
  double acc = 0;
  while (x < 6) {
    acc -= 1 / x;
    x += 1;
  }
  double z = 1 / (x * x);
  /* B2/2 = 1/12, B4/4 = -1/120, B6/6 = 1/252, B8/8 = -1/240, B10/10 = 1/132, B12/12 = -691/32760,
   * B14/14 = 1/12 */
  double series =
      z * (1.0 / 12 - z * (1.0 / 120 -
                           z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))));
  return acc + log(x) - 0.5 / x - series - reflect;
}
static inline double sign_grad_d(double a) { return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0); }
/* sign_d by lane masks: 1, -1, or +0 for zeros and NaN */
static inline v128_t sign_f32x4(v128_t x) {
  const v128_t zero = wasm_f32x4_splat(0.f);
  return wasm_v128_or(wasm_v128_and(wasm_f32x4_splat(1.f), wasm_f32x4_gt(x, zero)),
                      wasm_v128_and(wasm_f32x4_splat(-1.f), wasm_f32x4_lt(x, zero)));
}
/* d = g * sign(a) over float32 (abs's gradient; NaN's sign is 0 as above), by lane masks */
static void sign_grad_f32(const float *g, const float *a, float *d, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(d + i, wasm_f32x4_mul(wasm_v128_load(g + i), sign_f32x4(wasm_v128_load(a + i))));
  for (; i < n; i++) d[i] = g[i] * (float)sign_grad_d(a[i]);
}
/* sign and round over float32 by lane masks (a scalar float select is a branch in V8: sign took
 * ~5 ns per element on random signs, round's libm call ~8.7, against ~0.5 here); each lane gives
 * exactly the scalar rule's result, and the tails use it. */
static void sign_f32(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, sign_f32x4(wasm_v128_load(x + i)));
  for (; i < n; i++) y[i] = (float)sign_d(x[i]);
}
/* roundf, half away from zero: t = trunc(x) and x - t (exact); |x - t| >= 1/2 moves t one away
 * from zero (exact below 2^23, where x - t can be nonzero). t keeps x's sign (-0.3 -> -0), and
 * infinities (x - t is NaN) and NaN stay as they are. */
static void round_f32(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  const v128_t half = wasm_f32x4_splat(0.5f), one = wasm_f32x4_splat(1.f), sign = wasm_i32x4_splat(INT32_MIN);
  for (; i + 4 <= n; i += 4) {
    v128_t v = wasm_v128_load(x + i), t = wasm_f32x4_trunc(v);
    v128_t away = wasm_f32x4_ge(wasm_f32x4_abs(wasm_f32x4_sub(v, t)), half);
    v128_t step = wasm_v128_or(one, wasm_v128_and(v, sign)); /* copysign(1, x) */
    wasm_v128_store(y + i, wasm_v128_bitselect(wasm_f32x4_add(t, step), t, away));
  }
  for (; i < n; i++) y[i] = roundf(x[i]);
}
/* relu's derivative at y = relu(x): 1 where y > 0, NaN stays NaN (MXNet's relu_grad) */
static inline float relu_grad_f(float a) { return a > 0.f ? 1.f : (a == a ? 0.f : a); }
static inline double relu_grad_d(double a) { return a > 0.0 ? 1.0 : (a == a ? 0.0 : a); }
/* d = g * relu_grad(y) over float32, four lanes at a time with bit masks. V8 turns a scalar
 * float select into a branch, which relu's signs mispredict half the time (~5 ns per element
 * against ~0.4 here); training runs this after every relu. d may be g (in place). */
static void relu_grad_f32(const float *g, const float *y, float *d, int64_t n) {
  int64_t i = 0;
  const v128_t zero = wasm_f32x4_splat(0.f), one = wasm_f32x4_splat(1.f);
  for (; i + 4 <= n; i += 4) {
    v128_t yv = wasm_v128_load(y + i);
    v128_t r = wasm_v128_and(one, wasm_f32x4_gt(yv, zero));
    r = wasm_v128_bitselect(yv, r, wasm_f32x4_ne(yv, yv)); /* NaN stays NaN */
    wasm_v128_store(d + i, wasm_f32x4_mul(wasm_v128_load(g + i), r));
  }
  for (; i < n; i++) d[i] = g[i] * relu_grad_f(y[i]);
}

/* The kernel of `_backward_<NAME>`: dst = expression of g (ograd) and a (x or y). */
#define UNARY_BACKWARD(NAME, X32, X64, COST) UNARY_BACKWARD_F32(NAME, X32, X64, COST, NULL)
/* F32: NULL, or a function (g, a, dst, n) doing the float32 case (SIMD); GSPEC: the op def's
 * gradient (second order, below), or a field already given */
#define UNARY_BACKWARD_F32(NAME, X32, X64, COST, F32) \
  static int grad2_##NAME(mxw_grad_ctx *g);           \
  UNARY_BACKWARD_G(NAME, X32, X64, COST, F32, .gradient = grad2_##NAME)
#define UNARY_BACKWARD_G(NAME, X32, X64, COST, F32, GSPEC)                                                    \
  static int kern_backward_##NAME(const mxw_op_call *c) {                                                     \
    const mxw_tensor *gt = &c->inputs[0], *at = &c->inputs[1];                                                \
    mxw_tensor *out = &c->outputs[0];                                                                         \
    int64_t n = mxw_tensor_size(out);                                                                         \
    if (gt->dtype == MXW_FLOAT32 && at->dtype == MXW_FLOAT32 && out->dtype == MXW_FLOAT32) {                  \
      const float *gs = (const float *)gt->data, *as = (const float *)at->data;                               \
      float *dst = (float *)out->data; /* may alias gs (in place) */                                          \
      void (*f32_)(const float *, const float *, float *, int64_t) = F32;                                     \
      if (f32_) {                                                                                             \
        f32_(gs, as, dst, n);                                                                                 \
        return 0;                                                                                             \
      }                                                                                                       \
      for (int64_t i = 0; i < n; i++) {                                                                       \
        float g = gs[i], a = as[i];                                                                           \
        (void)a;                                                                                              \
        dst[i] = (X32);                                                                                       \
      }                                                                                                       \
    } else if (gt->dtype == MXW_FLOAT64 && at->dtype == MXW_FLOAT64 && out->dtype == MXW_FLOAT64) {           \
      const double *gs = (const double *)gt->data, *as = (const double *)at->data;                            \
      double *dst = (double *)out->data;                                                                      \
      for (int64_t i = 0; i < n; i++) {                                                                       \
        double g = gs[i], a = as[i];                                                                          \
        (void)a;                                                                                              \
        dst[i] = (X64);                                                                                       \
      }                                                                                                       \
    } else {                                                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                                       \
        double g = mxw_load_f64(gt->data, gt->dtype, i), a = mxw_load_f64(at->data, at->dtype, i);            \
        (void)a;                                                                                              \
        mxw_store_f64(out->data, out->dtype, i, (X64));                                                       \
      }                                                                                                       \
    }                                                                                                         \
    return 0;                                                                                                 \
  }                                                                                                           \
  PARALLEL_FORWARD(backward_##NAME, COST)                                                                     \
  static const mxw_op_def op_backward_##NAME = {.name = "_backward_" #NAME,                                   \
                                                .doc = MXW_DOC("the gradient of " #NAME ": ograd * d" #NAME), \
                                                .num_inputs = 2,                                              \
                                                .input_names = k_ograd_data,                                  \
                                                .num_outputs = 1,                                             \
                                                .infer_shape = mxw_infer_shape_same,                          \
                                                .half_as_f32 = 1,                                             \
                                                .forward = fwd_backward_##NAME,                               \
                                                .inplace = 1,                                                 \
                                                GSPEC};

static int grad_with(mxw_grad_ctx *g, const char *op, mxw_gid a) {
  return mxw_grad_set(g, 0, mxw_grad_op(g, op, NULL, MXW_GIDS(mxw_grad_ograd(g, 0), a)));
}
/* ElemwiseGradUseIn / ElemwiseGradUseOut{"_backward_<NAME>"} */
#define GRAD_IN(NAME) \
  static int grad_##NAME(mxw_grad_ctx *g) { return grad_with(g, "_backward_" #NAME, mxw_grad_in(g, 0)); }
#define GRAD_OUT(NAME) \
  static int grad_##NAME(mxw_grad_ctx *g) { return grad_with(g, "_backward_" #NAME, mxw_grad_out(g, 0)); }
#define BWD_IN(NAME, X32, X64, COST) UNARY_BACKWARD(NAME, X32, X64, COST) GRAD_IN(NAME)
#define BWD_OUT(NAME, X32, X64, COST) UNARY_BACKWARD(NAME, X32, X64, COST) GRAD_OUT(NAME)
#define BWD_IN_F32(NAME, X32, X64, COST, F32) UNARY_BACKWARD_F32(NAME, X32, X64, COST, F32) GRAD_IN(NAME)
#define BWD_OUT_F32(NAME, X32, X64, COST, F32) UNARY_BACKWARD_F32(NAME, X32, X64, COST, F32) GRAD_OUT(NAME)

BWD_OUT_F32(relu, g *relu_grad_f(a), g *relu_grad_d(a), MXW_COST_CHEAP, relu_grad_f32)
BWD_OUT(sigmoid, g *(a *(1.f - a)), g *(a *(1.0 - a)), MXW_COST_CHEAP)
BWD_OUT(tanh, g *(1.f - a * a), g *(1.0 - a * a), MXW_COST_CHEAP)
BWD_IN(expm1, g *expf(a), g *exp(a), MXW_COST_MATH)
BWD_IN(log, g / a, g / a, MXW_COST_DIV)
BWD_IN(log1p, g / (1.f + a), g / (1.0 + a), MXW_COST_DIV)
BWD_IN(log2, g / (a * (float)M_LN2), g / (a * M_LN2), MXW_COST_DIV)
BWD_IN(log10, g / (a * (float)M_LN10), g / (a * M_LN10), MXW_COST_DIV)
BWD_OUT(sqrt, g *(0.5f / a), g *(0.5 / a), MXW_COST_DIV)
BWD_IN(rsqrt, g *(-0.5f / (sqrtf(a) * a)), g *(-0.5 / (sqrt(a) * a)), MXW_COST_DIV)
BWD_OUT(cbrt, g *(1.f / (3.f * a * a)), g *(1.0 / (3.0 * a * a)), MXW_COST_DIV)
BWD_IN(rcbrt, g *(-1.f / (3.f * cbrtf(a) * a)), g *(-1.0 / (3.0 * cbrt(a) * a)), MXW_COST_MATH)
BWD_IN(square, g *(2.f * a), g *(2.0 * a), MXW_COST_CHEAP)
BWD_IN(reciprocal, g *(-1.f / (a * a)), g *(-1.0 / (a * a)), MXW_COST_DIV)
BWD_IN_F32(abs, g *(float)sign_grad_d(a), g *sign_grad_d(a), MXW_COST_CHEAP, sign_grad_f32)
BWD_IN(erf, g *(float)(2.0 / sqrt(M_PI)) * expf(-(a * a)), g *(2.0 / sqrt(M_PI)) * exp(-(a * a)), MXW_COST_MATH)
BWD_IN(softsign, g *(1.f / ((1.f + fabsf(a)) * (1.f + fabsf(a)))), g *(1.0 / ((1.0 + fabs(a)) * (1.0 + fabs(a)))),
       MXW_COST_DIV)
BWD_IN(sin, g *cosf(a), g *cos(a), MXW_COST_MATH)
BWD_IN(cos, g * -sinf(a), g * -sin(a), MXW_COST_MATH)
BWD_OUT(tan, g *(a *a + 1.f), g *(a *a + 1.0), MXW_COST_CHEAP)
BWD_IN(arcsin, g *(1.f / sqrtf(1.f - a * a)), g *(1.0 / sqrt(1.0 - a * a)), MXW_COST_DIV)
BWD_IN(arccos, g *(-1.f / sqrtf(1.f - a * a)), g *(-1.0 / sqrt(1.0 - a * a)), MXW_COST_DIV)
BWD_IN(arctan, g *(1.f / (a * a + 1.f)), g *(1.0 / (a * a + 1.0)), MXW_COST_DIV)
BWD_IN(sinh, g *coshf(a), g *cosh(a), MXW_COST_MATH)
BWD_IN(cosh, g *sinhf(a), g *sinh(a), MXW_COST_MATH)
BWD_IN(arcsinh, g *(1.f / sqrtf(a * a + 1.f)), g *(1.0 / sqrt(a * a + 1.0)), MXW_COST_DIV)
BWD_IN(arccosh, g *(1.f / sqrtf(a * a - 1.f)), g *(1.0 / sqrt(a * a - 1.0)), MXW_COST_DIV)
BWD_IN(arctanh, g *(1.f / (1.f - a * a)), g *(1.0 / (1.0 - a * a)), MXW_COST_DIV)
/* (gamma and gammaln: first order only, as MXNet's: their second derivatives need the trigamma function) */
UNARY_BACKWARD_G(gamma, g *(float)(tgamma((double)a) * mxw_digamma((double)a)), g *(tgamma(a) * mxw_digamma(a)),
                 MXW_COST_SPECIAL, NULL, .gradient = NULL)
GRAD_IN(gamma)
UNARY_BACKWARD_G(gammaln, g *(float)mxw_digamma((double)a), g *mxw_digamma(a), MXW_COST_SPECIAL, NULL, .gradient = NULL)
GRAD_IN(gammaln)
BWD_IN(degrees, g *(float)(180.0 / M_PI), g *(180.0 / M_PI), MXW_COST_CHEAP)
BWD_IN(radians, g *(float)(M_PI / 180.0), g *(M_PI / 180.0), MXW_COST_CHEAP)

/* ---- second order (autograd.grad with create_graph) ------------------------------------------------
 * _backward_<op>(g, a) = g * f1(a), where f1 is f' written in a (x for the ops above that take the
 * input, y for those that take the output). Its gradient: d/dg = _backward_<op>(ograd, a) and
 * d/da = ograd * g * f2(a), f2 = df1/da, by the kernel _backward_grad_<op>(ograd * g, a) (zeros
 * where f1 is piecewise constant). Where a is y, the forward op's own gradient then carries d/dy
 * on to x: relu, sigmoid, tanh, sqrt, cbrt and tan. MXNet 1.9.1 registers these FGradients on its
 * backward ops (elemwise_unary_op_{basic,trig,logexp,pow}.cc; tests/python/unittest/
 * test_higher_order_grad.py); a backward op without one (gamma's) fails the second backward with
 * MXNet's "is non-differentiable" error. */
static int grad2_with(mxw_grad_ctx *g, const char *first, const char *second) {
  const mxw_gid og = mxw_grad_ograd(g, 0), a = mxw_grad_in(g, 1);
  MXW_TRY(mxw_grad_set(g, 0, mxw_grad_op(g, first, NULL, MXW_GIDS(og, a))));
  if (!second) return mxw_grad_set(g, 1, mxw_grad_zeros_like(g, a));
  return mxw_grad_set(g, 1, mxw_grad_op(g, second, NULL, MXW_GIDS(mxw_grad_mul(g, og, mxw_grad_in(g, 0)), a)));
}
/* _backward_grad_<NAME>(h, a) = h * f2(a), itself first order */
#define SECOND(NAME, X32, X64, COST)                                              \
  UNARY_BACKWARD_G(grad_##NAME, g *(X32), g *(X64), COST, NULL, .gradient = NULL) \
  static int grad2_##NAME(mxw_grad_ctx *g) { return grad2_with(g, "_backward_" #NAME, "_backward_grad_" #NAME); }
#define SECOND_ZERO(NAME) \
  static int grad2_##NAME(mxw_grad_ctx *g) { return grad2_with(g, "_backward_" #NAME, NULL); }

SECOND_ZERO(relu)                                             /* f1(y) = [y > 0] */
SECOND(sigmoid, 1.f - 2.f * a, 1.0 - 2.0 * a, MXW_COST_CHEAP) /* f1(y) = y (1 - y) */
SECOND(tanh, -2.f * a, -2.0 * a, MXW_COST_CHEAP)              /* f1(y) = 1 - y^2 */
SECOND(expm1, expf(a), exp(a), MXW_COST_MATH)                 /* f1 = e^x */
SECOND(log, -1.f / (a * a), -1.0 / (a * a), MXW_COST_DIV)     /* f1 = 1 / x */
SECOND(log1p, -1.f / ((1.f + a) * (1.f + a)), -1.0 / ((1.0 + a) * (1.0 + a)), MXW_COST_DIV)
SECOND(log2, -1.f / (a * a * (float)M_LN2), -1.0 / (a * a * M_LN2), MXW_COST_DIV)
SECOND(log10, -1.f / (a * a * (float)M_LN10), -1.0 / (a * a * M_LN10), MXW_COST_DIV)
SECOND(sqrt, -0.5f / (a * a), -0.5 / (a * a), MXW_COST_DIV)                                 /* f1(y) = 1 / 2y */
SECOND(rsqrt, 0.75f / (a * a * sqrtf(a)), 0.75 / (a * a * sqrt(a)), MXW_COST_DIV)           /* f1 = -x^-1.5 / 2 */
SECOND(cbrt, -2.f / (3.f * a * a * a), -2.0 / (3.0 * a * a * a), MXW_COST_DIV)              /* f1(y) = 1 / 3y^2 */
SECOND(rcbrt, 4.f / (9.f * a * a * cbrtf(a)), 4.0 / (9.0 * a * a * cbrt(a)), MXW_COST_MATH) /* f1 = -x^(-4/3) / 3 */
SECOND(square, 2.f, 2.0, MXW_COST_CHEAP)                                                    /* f1 = 2x */
SECOND(reciprocal, 2.f / (a * a * a), 2.0 / (a * a * a), MXW_COST_DIV)                      /* f1 = -1 / x^2 */
SECOND_ZERO(abs)                                                                            /* f1 = sign(x) */
SECOND(erf, (float)(-4.0 / sqrt(M_PI)) * a * expf(-(a * a)), (-4.0 / sqrt(M_PI)) * a * exp(-(a * a)), MXW_COST_MATH)
SECOND(softsign, -2.f * (float)sign_grad_d(a) / ((1.f + fabsf(a)) * (1.f + fabsf(a)) * (1.f + fabsf(a))),
       -2.0 * sign_grad_d(a) / ((1.0 + fabs(a)) * (1.0 + fabs(a)) * (1.0 + fabs(a))), MXW_COST_DIV)
SECOND(sin, -sinf(a), -sin(a), MXW_COST_MATH) /* f1 = cos x */
SECOND(cos, -cosf(a), -cos(a), MXW_COST_MATH) /* f1 = -sin x */
SECOND(tan, 2.f * a, 2.0 * a, MXW_COST_CHEAP) /* f1(y) = y^2 + 1 */
SECOND(arcsin, a / ((1.f - a * a) * sqrtf(1.f - a * a)), a / ((1.0 - a * a) * sqrt(1.0 - a * a)), MXW_COST_DIV)
SECOND(arccos, -a / ((1.f - a * a) * sqrtf(1.f - a * a)), -a / ((1.0 - a * a) * sqrt(1.0 - a * a)), MXW_COST_DIV)
SECOND(arctan, -2.f * a / ((a * a + 1.f) * (a * a + 1.f)), -2.0 * a / ((a * a + 1.0) * (a * a + 1.0)), MXW_COST_DIV)
SECOND(sinh, sinhf(a), sinh(a), MXW_COST_MATH) /* f1 = cosh x */
SECOND(cosh, coshf(a), cosh(a), MXW_COST_MATH) /* f1 = sinh x */
SECOND(arcsinh, -a / ((a * a + 1.f) * sqrtf(a * a + 1.f)), -a / ((a * a + 1.0) * sqrt(a * a + 1.0)), MXW_COST_DIV)
SECOND(arccosh, -a / ((a * a - 1.f) * sqrtf(a * a - 1.f)), -a / ((a * a - 1.0) * sqrt(a * a - 1.0)), MXW_COST_DIV)
SECOND(arctanh, 2.f * a / ((1.f - a * a) * (1.f - a * a)), 2.0 * a / ((1.0 - a * a) * (1.0 - a * a)), MXW_COST_DIV)
SECOND_ZERO(degrees) /* f1 constant */
SECOND_ZERO(radians)

static int grad_exp(mxw_grad_ctx *g) { /* ElemwiseGradUseOut{"_mul"}: dx = ograd * y */
  return mxw_grad_set(g, 0, mxw_grad_mul(g, mxw_grad_ograd(g, 0), mxw_grad_out(g, 0)));
}
static int grad_negative(mxw_grad_ctx *g) { /* ElemwiseGradUseNone{"negative"} */
  return mxw_grad_set(g, 0, mxw_grad_op(g, "negative", NULL, MXW_GIDS(mxw_grad_ograd(g, 0))));
}
static int grad_copy(mxw_grad_ctx *g) { return mxw_grad_set(g, 0, mxw_grad_ograd(g, 0)); } /* dx = ograd */
/* make_loss: the gradient is ones_like(data) whatever flows into the output */
static int grad_make_loss(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, mxw_grad_op(g, "ones_like", NULL, MXW_GIDS(mxw_grad_in(g, 0))));
}
#define GRAD(fn) .gradient = fn
#define NO_GRAD .no_grad = 1

/* negative: MXNet's negation computes -a in the dtype itself, so integers wrap as two's complement
 * (-INT32_MIN is INT32_MIN, -int8(-128) is -128; uint8 5 -> 251). Done on the unsigned pattern of
 * the element's width, where C defines the wrap; bool stays as it is (-true is true). */
static int kern_negative(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(in);
  switch (in->dtype) {
    case MXW_FLOAT32: {
      const float *src = (const float *)in->data; /* may alias dst (in place) */
      float *dst = (float *)out->data;
      for (int64_t i = 0; i < n; i++) dst[i] = -src[i];
      return 0;
    }
    case MXW_FLOAT64: {
      const double *src = (const double *)in->data;
      double *dst = (double *)out->data;
      for (int64_t i = 0; i < n; i++) dst[i] = -src[i];
      return 0;
    }
    case MXW_FLOAT16:
    case MXW_BFLOAT16: { /* the sign bit */
      const uint16_t *src = (const uint16_t *)in->data;
      uint16_t *dst = (uint16_t *)out->data;
      for (int64_t i = 0; i < n; i++) dst[i] = (uint16_t)(src[i] ^ 0x8000u);
      return 0;
    }
    case MXW_BOOL:
      if (out->data != in->data) memmove(out->data, in->data, (size_t)n);
      return 0;
    default: break;
  }
#define NEG_BITS(UT)                                                      \
  {                                                                       \
    const UT *src = (const UT *)in->data;                                 \
    UT *dst = (UT *)out->data;                                            \
    for (int64_t i = 0; i < n; i++) dst[i] = (UT)(0u - (uint64_t)src[i]); \
  }
  switch (mxw_dtype_size(in->dtype)) {
    case 1: NEG_BITS(uint8_t) break;
    case 2: NEG_BITS(uint16_t) break;
    case 4: NEG_BITS(uint32_t) break;
    default: NEG_BITS(uint64_t) break;
  }
#undef NEG_BITS
  return 0;
}
PARALLEL_FORWARD(negative, MXW_COST_CHEAP)

/* The identity ops copy the bytes (every dtype exactly, int64 beyond 2^53 included). */
#define COPY_OP(NAME, ALIASES, DOC, GRADSPEC)                                                        \
  static int kern_##NAME(const mxw_op_call *c) {                                                     \
    const mxw_tensor *in = &c->inputs[0];                                                            \
    mxw_tensor *out = &c->outputs[0];                                                                \
    if (out->data != in->data)                                                                       \
      memmove(out->data, in->data, (size_t)mxw_tensor_size(in) * (size_t)mxw_dtype_size(in->dtype)); \
    return 0;                                                                                        \
  }                                                                                                  \
  PARALLEL_FORWARD(NAME, MXW_COST_CHEAP)                                                             \
  UNARY_DEF(NAME, #NAME, ALIASES, DOC, NULL, GRADSPEC)

ACT_UNARY_OP_V(relu, ALIASES("_npx_relu"), mxw_vrelu_f32, relu_d(x), "max(x, 0); NaN propagates", MXW_ACT_RELU,
               GRAD(grad_relu), MXW_COST_CHEAP)
ACT_UNARY_OP_V(sigmoid, ALIASES("_npx_sigmoid"), mxw_vsigmoid_f32, sigmoid_d(x), "1 / (1 + exp(-x))", MXW_ACT_SIGMOID,
               GRAD(grad_sigmoid), MXW_COST_MATH)
ACT_UNARY_OP_V(tanh, ALIASES("_npi_tanh"), mxw_vtanh_f32, tanh(x), "hyperbolic tangent", MXW_ACT_TANH, GRAD(grad_tanh),
               MXW_COST_MATH)
UNARY_OP_V(exp, ALIASES("_npi_exp"), mxw_vexp_f32, exp(x), "e^x", GRAD(grad_exp), MXW_COST_MATH)
UNARY_OP_V(expm1, ALIASES("_npi_expm1"), mxw_vexpm1_f32, expm1(x), "e^x - 1", GRAD(grad_expm1), MXW_COST_MATH)
UNARY_OP_V(log, ALIASES("_npi_log"), mxw_vlog_f32, log(x), "natural logarithm", GRAD(grad_log), MXW_COST_MATH)
UNARY_OP_V(log1p, ALIASES("_npi_log1p"), mxw_vlog1p_f32, log1p(x), "log(1 + x)", GRAD(grad_log1p), MXW_COST_MATH)
UNARY_OP(log2, ALIASES("_npi_log2"), log2f(x), log2(x), "base-2 logarithm", GRAD(grad_log2), MXW_COST_MATH)
UNARY_OP(log10, ALIASES("_npi_log10"), log10f(x), log10(x), "base-10 logarithm", GRAD(grad_log10), MXW_COST_MATH)
UNARY_OP(sqrt, ALIASES("_npi_sqrt"), sqrtf(x), sqrt(x), "square root", GRAD(grad_sqrt), MXW_COST_DIV)
UNARY_OP(rsqrt, NULL, 1.f / sqrtf(x), 1.0 / sqrt(x), "1 / sqrt(x)", GRAD(grad_rsqrt), MXW_COST_DIV)
UNARY_OP(cbrt, ALIASES("_npi_cbrt"), cbrtf(x), cbrt(x), "cube root", GRAD(grad_cbrt), MXW_COST_MATH)
UNARY_OP(rcbrt, NULL, 1.f / cbrtf(x), 1.0 / cbrt(x), "1 / cbrt(x)", GRAD(grad_rcbrt), MXW_COST_MATH)
UNARY_OP(square, ALIASES("_npi_square"), x *x, x *x, "x * x", GRAD(grad_square), MXW_COST_CHEAP)
UNARY_OP(reciprocal, ALIASES("_npi_reciprocal"), 1.f / x, 1.0 / x, "1 / x", GRAD(grad_reciprocal), MXW_COST_DIV)
UNARY_OP(abs, ALIASES("_npi_absolute"), fabsf(x), fabs(x), "|x|", GRAD(grad_abs), MXW_COST_CHEAP)
UNARY_DEF(negative, "negative", ALIASES("_npi_negative"), "-x (integers wrap)", NULL, GRAD(grad_negative))
UNARY_OP_V(sign, ALIASES("_npi_sign"), sign_f32, sign_d(x), "-1, 0 or 1", NO_GRAD, MXW_COST_CHEAP)
UNARY_OP(floor, ALIASES("_npi_floor"), floorf(x), floor(x), "round down", NO_GRAD, MXW_COST_CHEAP)
UNARY_OP(ceil, ALIASES("_npi_ceil"), ceilf(x), ceil(x), "round up", NO_GRAD, MXW_COST_CHEAP)
UNARY_OP_V(round, NULL, round_f32, round(x), "round half away from zero", NO_GRAD, MXW_COST_CHEAP)
UNARY_OP(rint, ALIASES("_npi_rint"), rintf(x), rint(x), "round half to even", NO_GRAD, MXW_COST_CHEAP)
UNARY_OP(fix, ALIASES("_npi_fix"), truncf(x), trunc(x), "round toward zero", NO_GRAD, MXW_COST_CHEAP)
UNARY_OP(trunc, ALIASES("_npi_trunc"), truncf(x), trunc(x), "round toward zero", NO_GRAD, MXW_COST_CHEAP)
UNARY_OP_V(erf, ALIASES("_npx_erf"), mxw_verf_f32, erf(x), "error function", GRAD(grad_erf), MXW_COST_MATH)
ACT_UNARY_OP(softsign, NULL, softsign_f(x), softsign_d(x), "x / (1 + |x|)", MXW_ACT_SOFTSIGN, GRAD(grad_softsign),
             MXW_COST_DIV)
UNARY_OP(sin, ALIASES("_npi_sin"), sinf(x), sin(x), "sine", GRAD(grad_sin), MXW_COST_MATH)
UNARY_OP(cos, ALIASES("_npi_cos"), cosf(x), cos(x), "cosine", GRAD(grad_cos), MXW_COST_MATH)
UNARY_OP(tan, ALIASES("_npi_tan"), tanf(x), tan(x), "tangent", GRAD(grad_tan), MXW_COST_MATH)
UNARY_OP(arcsin, ALIASES("_npi_arcsin"), asinf(x), asin(x), "inverse sine", GRAD(grad_arcsin), MXW_COST_MATH)
UNARY_OP(arccos, ALIASES("_npi_arccos"), acosf(x), acos(x), "inverse cosine", GRAD(grad_arccos), MXW_COST_MATH)
UNARY_OP(arctan, ALIASES("_npi_arctan"), atanf(x), atan(x), "inverse tangent", GRAD(grad_arctan), MXW_COST_MATH)
UNARY_OP(sinh, ALIASES("_npi_sinh"), sinhf(x), sinh(x), "hyperbolic sine", GRAD(grad_sinh), MXW_COST_MATH)
UNARY_OP(cosh, ALIASES("_npi_cosh"), coshf(x), cosh(x), "hyperbolic cosine", GRAD(grad_cosh), MXW_COST_MATH)
UNARY_OP(arcsinh, ALIASES("_npi_arcsinh"), asinhf(x), asinh(x), "inverse hyperbolic sine", GRAD(grad_arcsinh),
         MXW_COST_MATH)
UNARY_OP(arccosh, ALIASES("_npi_arccosh"), acoshf(x), acosh(x), "inverse hyperbolic cosine", GRAD(grad_arccosh),
         MXW_COST_MATH)
UNARY_OP(arctanh, ALIASES("_npi_arctanh"), atanhf(x), atanh(x), "inverse hyperbolic tangent", GRAD(grad_arctanh),
         MXW_COST_MATH)
UNARY_OP(gamma, ALIASES("_npi_gamma"), tgammaf(x), tgamma(x), "gamma function", GRAD(grad_gamma), MXW_COST_SPECIAL)
UNARY_OP(gammaln, ALIASES("_npi_gammaln"), lgammaf(x), lgamma(x), "log |gamma(x)|", GRAD(grad_gammaln),
         MXW_COST_SPECIAL)
UNARY_OP(degrees, ALIASES("_npi_degrees"), x *(float)(180.0 / M_PI), x *(180.0 / M_PI), "radians to degrees",
         GRAD(grad_degrees), MXW_COST_CHEAP)
UNARY_OP(radians, ALIASES("_npi_radians"), x *(float)(M_PI / 180.0), x *(M_PI / 180.0), "degrees to radians",
         GRAD(grad_radians), MXW_COST_CHEAP)
UNARY_OP(logical_not, ALIASES("_npi_logical_not"), (float)(x == 0.f), (double)(x == 0.0), "1 where x == 0, else 0",
         NO_GRAD, MXW_COST_CHEAP)
COPY_OP(_copy, ALIASES("identity", "_npi_copy"), "a copy of the input", GRAD(grad_copy))
COPY_OP(BlockGrad, ALIASES("stop_gradient"), "identity forward; no gradient flows back", NO_GRAD)
COPY_OP(make_loss, NULL, "identity forward; marks a loss for training", GRAD(grad_make_loss))
UNARY_OP(zeros_like, ALIASES("_npi_zeros_like"), 0.f, 0.0, "zeros of the input's shape and dtype", NO_GRAD,
         MXW_COST_CHEAP)
UNARY_OP(ones_like, ALIASES("_npi_ones_like"), 1.f, 1.0, "ones of the input's shape and dtype", NO_GRAD, MXW_COST_CHEAP)

/* ---- hard_sigmoid (alpha, beta) ------------------------------------------------------------- */
typedef struct {
  double alpha, beta;
} HardSigmoidParam;
static const mxw_attr_spec k_hard_sigmoid_attrs[] = {
    MXW_A_FLOAT("alpha", HardSigmoidParam, alpha, "0.2", "slope"),
    MXW_A_FLOAT("beta", HardSigmoidParam, beta, "0.5", "offset"),
};
static int kern_hard_sigmoid(const mxw_op_call *c) {
  const HardSigmoidParam *p = (const HardSigmoidParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(in), i = 0;
  if (in->dtype == MXW_FLOAT32 && out->dtype == MXW_FLOAT32) {
    /* the same double arithmetic two lanes at a time (f64x2), with masks for the clamp: a scalar
     * float select is a branch in V8 (~4.2 ns per element on random inputs) */
    const float *src = (const float *)in->data;
    float *dst = (float *)out->data;
    const v128_t al = wasm_f64x2_splat(p->alpha), be = wasm_f64x2_splat(p->beta);
    const v128_t zero = wasm_f64x2_splat(0.0), one = wasm_f64x2_splat(1.0);
    for (; i + 4 <= n; i += 4) {
      v128_t x = wasm_v128_load(src + i), r[2];
      for (int h = 0; h < 2; h++) {
        v128_t xd = wasm_f64x2_promote_low_f32x4(h ? wasm_i32x4_shuffle(x, x, 2, 3, 2, 3) : x);
        v128_t v = wasm_f64x2_add(wasm_f64x2_mul(al, xd), be);
        v = wasm_v128_bitselect(zero, v, wasm_f64x2_lt(v, zero));
        r[h] = wasm_f32x4_demote_f64x2_zero(wasm_v128_bitselect(one, v, wasm_f64x2_gt(v, one)));
      }
      wasm_v128_store(dst + i, wasm_i32x4_shuffle(r[0], r[1], 0, 1, 4, 5));
    }
  }
  for (; i < n; i++) {
    double v = p->alpha * mxw_load_f64(in->data, in->dtype, i) + p->beta;
    mxw_store_f64(out->data, out->dtype, i, v < 0 ? 0 : (v > 1 ? 1 : v));
  }
  return 0;
}
PARALLEL_FORWARD(hard_sigmoid, MXW_COST_DIV) /* through double */
/* _backward_hard_sigmoid(ograd, x): ograd * alpha where 0 < alpha * x + beta < 1 (computed in the
 * data type, as MXNet), else 0 */
static int kern_backward_hard_sigmoid(const mxw_op_call *c) {
  const HardSigmoidParam *p = (const HardSigmoidParam *)c->param;
  const mxw_tensor *gt = &c->inputs[0], *xt = &c->inputs[1];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(out);
  if (gt->dtype == MXW_FLOAT32 && xt->dtype == MXW_FLOAT32) {
    const float *gs = (const float *)gt->data, *xs = (const float *)xt->data;
    float *dst = (float *)out->data, al = (float)p->alpha, be = (float)p->beta;
    int64_t i = 0;
    const v128_t alv = wasm_f32x4_splat(al), bev = wasm_f32x4_splat(be);
    const v128_t zero = wasm_f32x4_splat(0.f), one = wasm_f32x4_splat(1.f);
    for (; i + 4 <= n; i += 4) { /* lane masks, as the forward */
      v128_t v = wasm_f32x4_add(wasm_f32x4_mul(alv, wasm_v128_load(xs + i)), bev);
      v128_t inside = wasm_v128_and(wasm_f32x4_gt(v, zero), wasm_f32x4_lt(v, one));
      wasm_v128_store(dst + i, wasm_v128_and(wasm_f32x4_mul(wasm_v128_load(gs + i), alv), inside));
    }
    for (; i < n; i++) {
      float v = al * xs[i] + be;
      dst[i] = (v > 0.f && v < 1.f) ? gs[i] * al : 0.f;
    }
    return 0;
  }
  for (int64_t i = 0; i < n; i++) {
    double v = p->alpha * mxw_load_f64(xt->data, xt->dtype, i) + p->beta;
    mxw_store_f64(out->data, out->dtype, i, (v > 0 && v < 1) ? mxw_load_f64(gt->data, gt->dtype, i) * p->alpha : 0.0);
  }
  return 0;
}
PARALLEL_FORWARD(backward_hard_sigmoid, MXW_COST_CHEAP)
static int grad_hard_sigmoid(mxw_grad_ctx *g) { /* ElemwiseGradUseIn{"_backward_hard_sigmoid"} */
  return mxw_grad_set_fwd_op(g, "_backward_hard_sigmoid", 1);
}
static const mxw_op_def op_hard_sigmoid = {.name = "hard_sigmoid",
                                           .aliases = ALIASES("_npx_hard_sigmoid"),
                                           .doc = MXW_DOC("max(0, min(1, alpha * x + beta))"),
                                           .attrs = k_hard_sigmoid_attrs,
                                           .num_attrs = 2,
                                           .param_size = sizeof(HardSigmoidParam),
                                           .num_inputs = 1,
                                           .input_names = k_data,
                                           .num_outputs = 1,
                                           .infer_shape = mxw_infer_shape_same,
                                           .forward = fwd_hard_sigmoid,
                                           .inplace = 1,
                                           .gradient = grad_hard_sigmoid};
static const mxw_op_def op_backward_hard_sigmoid = {
    .name = "_backward_hard_sigmoid",
    .doc = MXW_DOC("the gradient of hard_sigmoid: ograd * alpha inside the linear part"),
    .attrs = k_hard_sigmoid_attrs,
    .num_attrs = 2,
    .param_size = sizeof(HardSigmoidParam),
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_backward_hard_sigmoid,
    .inplace = 1,
    .gradient = mxw_grad_linear_in_ograd};

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
static void apply_act_range(void *data, int dtype, int64_t n, int act) {
  if (dtype == MXW_FLOAT32) {
    float *x = (float *)data;
    switch (act) {
      case MXW_ACT_RELU: mxw_vrelu_f32(x, x, n); break;
      case MXW_ACT_SIGMOID: mxw_vsigmoid_f32(x, x, n); break;
      case MXW_ACT_TANH: mxw_vtanh_f32(x, x, n); break;
      case MXW_ACT_SOFTRELU: mxw_vsoftrelu_f32(x, x, n); break;
      case MXW_ACT_SOFTSIGN:
        for (int64_t i = 0; i < n; i++) x[i] = softsign_f(x[i]);
        break;
      case MXW_ACT_RELU6: mxw_clip_f32(x, x, n, 0.0f, 6.0f); break;
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
      case MXW_ACT_RELU6: v = v > 6.0 ? 6.0 : (v < 0.0 ? 0.0 : v); break;
      default: v = softsign_d(v); break;
    }
    mxw_store_f64(data, dtype, i, v);
  }
}

typedef struct {
  void *data;
  int dtype, act;
} act_job;
static void apply_act_chunk(void *ctx, int64_t b, int64_t e) {
  const act_job *j = (const act_job *)ctx;
  apply_act_range((char *)j->data + (size_t)b * (size_t)mxw_dtype_size(j->dtype), j->dtype, e - b, j->act);
}
void mxw_apply_act(void *data, int dtype, int64_t n, int act) {
  if (act == MXW_ACT_NONE) return;
  act_job j = {data, dtype, act};
  const double cost = act == MXW_ACT_RELU || act == MXW_ACT_RELU6 ? MXW_COST_CHEAP : MXW_COST_MATH;
  mxw_parallel_run(n, 16, cost * mxw_par_dtype_factor(dtype), apply_act_chunk, &j);
}

/* ---- a folded BatchNorm: per-channel y * scale + shift, then the activation (exec.c) ---------- */
typedef struct {
  float *y;
  int64_t C, inner;
  const float *scale, *shift;
  int act;
} affine_job;
/* the affine and a clamp in one pass: relu is [0, inf), relu6 [0, 6], none (-inf, inf) (a NaN
 * passes through as clip's pmin/pmax let it); other activations after the affine */
static int clamp_of(int act, float *lo, float *hi) {
  *lo = act == MXW_ACT_NONE ? -INFINITY : 0.0f;
  *hi = act == MXW_ACT_RELU6 ? 6.0f : INFINITY;
  return act == MXW_ACT_NONE || act == MXW_ACT_RELU || act == MXW_ACT_RELU6;
}
static inline float clamp_f(float v, float lo, float hi) { return v > hi ? hi : (v < lo ? lo : v); }
/* rows r in [b, e) of (outer * C) rows of `inner` elements: channel r % C */
static void affine_rows(void *ctx, int64_t b, int64_t e) {
  const affine_job *j = (const affine_job *)ctx;
  float lo, hi;
  const int clamp = clamp_of(j->act, &lo, &hi);
  for (int64_t r = b; r < e; r++) {
    float *y = j->y + r * j->inner;
    const float s = j->scale[r % j->C], t = j->shift[r % j->C];
    int64_t i = 0;
#ifdef __wasm_simd128__
    const v128_t vs = wasm_f32x4_splat(s), vt = wasm_f32x4_splat(t), vlo = wasm_f32x4_splat(lo),
                 vhi = wasm_f32x4_splat(hi);
    if (clamp)
      for (; i + 4 <= j->inner; i += 4) {
        const v128_t v = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(y + i), vs), vt);
        wasm_v128_store(y + i, wasm_f32x4_pmax(wasm_f32x4_pmin(v, vhi), vlo));
      }
#endif
    if (clamp) {
      for (; i < j->inner; i++) y[i] = clamp_f(y[i] * s + t, lo, hi);
    } else {
      for (; i < j->inner; i++) y[i] = y[i] * s + t;
      apply_act_range(y, MXW_FLOAT32, j->inner, j->act);
    }
  }
}
/* channel-last: rows r in [b, e) of C elements, each with every channel's scale and shift */
static void affine_last(void *ctx, int64_t b, int64_t e) {
  const affine_job *j = (const affine_job *)ctx;
  float lo, hi;
  const int clamp = clamp_of(j->act, &lo, &hi);
  for (int64_t r = b; r < e; r++) {
    float *y = j->y + r * j->C;
    int64_t c = 0;
#ifdef __wasm_simd128__
    const v128_t vlo = wasm_f32x4_splat(lo), vhi = wasm_f32x4_splat(hi);
    if (clamp)
      for (; c + 4 <= j->C; c += 4) {
        const v128_t v = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(y + c), wasm_v128_load(j->scale + c)),
                                        wasm_v128_load(j->shift + c));
        wasm_v128_store(y + c, wasm_f32x4_pmax(wasm_f32x4_pmin(v, vhi), vlo));
      }
#endif
    if (clamp) {
      for (; c < j->C; c++) y[c] = clamp_f(y[c] * j->scale[c] + j->shift[c], lo, hi);
    } else {
      for (; c < j->C; c++) y[c] = y[c] * j->scale[c] + j->shift[c];
      apply_act_range(y, MXW_FLOAT32, j->C, j->act);
    }
  }
}
void mxw_apply_affine_act(float *y, int64_t outer, int64_t C, int64_t inner, const float *scale, const float *shift,
                          int act) {
  if (outer <= 0 || C <= 0 || inner <= 0) return;
  affine_job j = {y, C, inner, scale, shift, act};
  const double cost = (act == MXW_ACT_NONE || act == MXW_ACT_RELU || act == MXW_ACT_RELU6 ? 2.0 : 1.0 + MXW_COST_MATH);
  if (inner == 1)
    mxw_parallel_run(outer, 1, cost * (double)C, affine_last, &j);
  else
    mxw_parallel_run(outer * C, 1, cost * (double)inner, affine_rows, &j);
}

static int kern_softrelu(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(in);
  if (in->dtype == MXW_FLOAT32) {
    const float *src = (const float *)in->data;
    float *dst = (float *)out->data;
    mxw_vsoftrelu_f32(src, dst, n);
  } else {
    for (int64_t i = 0; i < n; i++)
      mxw_store_f64(out->data, out->dtype, i, softrelu_d(mxw_load_f64(in->data, in->dtype, i)));
  }
  return 0;
}

static int fwd_Activation(const mxw_op_call *c) {
  switch (((const ActivationParam *)c->param)->act_type) {
    case ACT_RELU: return fwd_relu(c);
    case ACT_SIGMOID: return fwd_sigmoid(c);
    case ACT_TANH: return fwd_tanh(c);
    case ACT_SOFTSIGN: return fwd_softsign(c);
    default: break;
  }
  return mxw_parallel_elemwise(c, mxw_tensor_size(&c->outputs[0]), MXW_COST_MATH, kern_softrelu);
}

/* _backward_Activation(ograd, y[, x]) as MXNet's ActivationGrad: relu takes (ograd, y); the others
 * (ograd, y, x): sigmoid ograd * y (1 - y), tanh ograd * (1 - y^2), softrelu ograd * -expm1(-y)
 * (= sigmoid(x)), softsign ograd / (1 + |x|)^2. */
static int act_grad_num_inputs(const void *param) {
  return ((const ActivationParam *)param)->act_type == ACT_RELU ? 2 : 3;
}
static const char *const k_act_grad_inputs[] = {"ograd", "output", "data", NULL};

static int kern_backward_Activation(const mxw_op_call *c) {
  int act = ((const ActivationParam *)c->param)->act_type;
  const mxw_tensor *gt = &c->inputs[0], *yt = &c->inputs[1], *xt = act == ACT_RELU ? yt : &c->inputs[2];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(out);
  if (gt->dtype == MXW_FLOAT32 && yt->dtype == MXW_FLOAT32) {
    const float *g = (const float *)gt->data, *y = (const float *)yt->data, *x = (const float *)xt->data;
    float *d = (float *)out->data;
    switch (act) {
      case ACT_RELU: relu_grad_f32(g, y, d, n); break;
      case ACT_SIGMOID:
        for (int64_t i = 0; i < n; i++) d[i] = g[i] * (y[i] * (1.f - y[i]));
        break;
      case ACT_TANH:
        for (int64_t i = 0; i < n; i++) d[i] = g[i] * (1.f - y[i] * y[i]);
        break;
      case ACT_SOFTRELU:
        for (int64_t i = 0; i < n; i++) d[i] = g[i] * -expm1f(-y[i]);
        break;
      default:
        for (int64_t i = 0; i < n; i++) d[i] = g[i] * (1.f / ((1.f + fabsf(x[i])) * (1.f + fabsf(x[i]))));
        break;
    }
    return 0;
  }
  for (int64_t i = 0; i < n; i++) {
    double g = mxw_load_f64(gt->data, gt->dtype, i), y = mxw_load_f64(yt->data, yt->dtype, i), d;
    switch (act) {
      case ACT_RELU: d = g * relu_grad_d(y); break;
      case ACT_SIGMOID: d = g * (y * (1.0 - y)); break;
      case ACT_TANH: d = g * (1.0 - y * y); break;
      case ACT_SOFTRELU: d = g * -expm1(-y); break;
      default: {
        double x = fabs(mxw_load_f64(xt->data, xt->dtype, i));
        d = g * (1.0 / ((1.0 + x) * (1.0 + x)));
        break;
      }
    }
    mxw_store_f64(out->data, out->dtype, i, d);
  }
  return 0;
}
static int fwd_backward_Activation(const mxw_op_call *c) {
  const int act = ((const ActivationParam *)c->param)->act_type;
  return mxw_parallel_elemwise(c, mxw_tensor_size(&c->outputs[0]), act == ACT_SOFTRELU ? MXW_COST_MATH : MXW_COST_CHEAP,
                               kern_backward_Activation);
}

static int grad_Activation(mxw_grad_ctx *g) {
  mxw_gid dx;
  if (((const ActivationParam *)mxw_grad_param(g))->act_type == ACT_RELU) {
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_Activation", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 0)), &dx, 1));
  } else {
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_Activation",
                            MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 0), mxw_grad_in(g, 0)), &dx, 1));
  }
  return mxw_grad_set(g, 0, dx);
}

/* Second order (see SECOND above): d/d ograd = _backward_Activation(ograd, out[, data]); d/d out by
 * the unary kernels for the kinds whose derivative is written in y (softrelu: f1(y) = 1 - e^-y, so
 * f2 = e^-y), d/d data for softsign's (written in x). */
static int grad_backward_Activation(mxw_grad_ctx *g) {
  const int act = ((const ActivationParam *)mxw_grad_param(g))->act_type, nin = mxw_grad_num_inputs(g);
  const mxw_gid og = mxw_grad_ograd(g, 0), y = mxw_grad_in(g, 1);
  mxw_gid d0;
  if (nin == 2)
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_Activation", MXW_GIDS(og, y), &d0, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_Activation", MXW_GIDS(og, y, mxw_grad_in(g, 2)), &d0, 1));
  MXW_TRY(mxw_grad_set(g, 0, d0));
  const mxw_gid h = act == ACT_RELU ? -1 : mxw_grad_mul(g, og, mxw_grad_in(g, 0));
  mxw_gid dy = -1;
  switch (act) {
    case ACT_RELU: dy = mxw_grad_zeros_like(g, y); break;
    case ACT_SIGMOID: dy = mxw_grad_op(g, "_backward_grad_sigmoid", NULL, MXW_GIDS(h, y)); break;
    case ACT_TANH: dy = mxw_grad_op(g, "_backward_grad_tanh", NULL, MXW_GIDS(h, y)); break;
    case ACT_SOFTRELU:
      dy = mxw_grad_mul(g, h, mxw_grad_op(g, "exp", NULL, MXW_GIDS(mxw_grad_op(g, "negative", NULL, MXW_GIDS(y)))));
      break;
    default: dy = mxw_grad_zeros_like(g, y); break;
  }
  MXW_TRY(mxw_grad_set(g, 1, dy));
  if (nin == 3)
    MXW_TRY(mxw_grad_set(g, 2,
                         act == ACT_SOFTSIGN
                             ? mxw_grad_op(g, "_backward_grad_softsign", NULL, MXW_GIDS(h, mxw_grad_in(g, 2)))
                             : mxw_grad_zeros_like(g, mxw_grad_in(g, 2))));
  return 0;
}

static const mxw_op_def op_Activation = {
    .name = "Activation",
    .aliases = ALIASES("_npx_activation"),
    .doc = MXW_DOC("relu, sigmoid, tanh, softrelu (log(1 + e^x)) or softsign, elementwise"),
    .attrs = k_activation_attrs,
    .num_attrs = 1,
    .param_size = sizeof(ActivationParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_Activation,
    .inplace = 1,
    .as_activation = as_act_Activation,
    .gradient = grad_Activation};
static const mxw_op_def op_backward_Activation = {
    .name = "_backward_Activation",
    .doc = MXW_DOC("the gradient of Activation from (ograd, output[, data])"),
    .attrs = k_activation_attrs,
    .num_attrs = 1,
    .param_size = sizeof(ActivationParam),
    .num_inputs = 3,
    .input_names = k_act_grad_inputs,
    .num_inputs_fn = act_grad_num_inputs,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_backward_Activation,
    .inplace = 1,
    .gradient = grad_backward_Activation};

MXW_FAMILY(elemwise_unary, &op_relu, &op_sigmoid, &op_tanh, &op_exp, &op_expm1, &op_log, &op_log1p, &op_log2, &op_log10,
           &op_sqrt, &op_rsqrt, &op_cbrt, &op_rcbrt, &op_square, &op_reciprocal, &op_abs, &op_negative, &op_sign,
           &op_floor, &op_ceil, &op_round, &op_rint, &op_fix, &op_trunc, &op_erf, &op_softsign, &op_sin, &op_cos,
           &op_tan, &op_arcsin, &op_arccos, &op_arctan, &op_sinh, &op_cosh, &op_arcsinh, &op_arccosh, &op_arctanh,
           &op_gamma, &op_gammaln, &op_degrees, &op_radians, &op_logical_not, &op__copy, &op_BlockGrad, &op_make_loss,
           &op_zeros_like, &op_ones_like, &op_hard_sigmoid, &op_Activation, &op_backward_relu, &op_backward_sigmoid,
           &op_backward_tanh, &op_backward_expm1, &op_backward_log, &op_backward_log1p, &op_backward_log2,
           &op_backward_log10, &op_backward_sqrt, &op_backward_rsqrt, &op_backward_cbrt, &op_backward_rcbrt,
           &op_backward_square, &op_backward_reciprocal, &op_backward_abs, &op_backward_erf, &op_backward_softsign,
           &op_backward_sin, &op_backward_cos, &op_backward_tan, &op_backward_arcsin, &op_backward_arccos,
           &op_backward_arctan, &op_backward_sinh, &op_backward_cosh, &op_backward_arcsinh, &op_backward_arccosh,
           &op_backward_arctanh, &op_backward_gamma, &op_backward_gammaln, &op_backward_degrees, &op_backward_radians,
           &op_backward_hard_sigmoid, &op_backward_Activation, &op_backward_grad_sigmoid, &op_backward_grad_tanh,
           &op_backward_grad_expm1, &op_backward_grad_log, &op_backward_grad_log1p, &op_backward_grad_log2,
           &op_backward_grad_log10, &op_backward_grad_sqrt, &op_backward_grad_rsqrt, &op_backward_grad_cbrt,
           &op_backward_grad_rcbrt, &op_backward_grad_square, &op_backward_grad_reciprocal, &op_backward_grad_erf,
           &op_backward_grad_softsign, &op_backward_grad_sin, &op_backward_grad_cos, &op_backward_grad_tan,
           &op_backward_grad_arcsin, &op_backward_grad_arccos, &op_backward_grad_arctan, &op_backward_grad_sinh,
           &op_backward_grad_cosh, &op_backward_grad_arcsinh, &op_backward_grad_arccosh, &op_backward_grad_arctanh);
