/* vmath.h -- float32 exp, expm1, log, log1p, sigmoid, tanh, softrelu, relu, erf and GELU, four lanes at a time.
 *
 *   float x[5] = {-1, 0, 0.5f, 2, 90}, y[5];
 *   mxw_vexp_f32(x, y, 5);        // y = {0.36787945, 1, 1.6487212, 7.389056, inf}
 *
 * The lane functions (inline, for kernels that fuse them: softmax, the RNN gates) and array
 * versions that run every element through the vector path, the last partial group padded, so an
 * element's result does not depend on where a call (or a thread's chunk) starts: threaded
 * results stay bit-identical. x and y may be the same array (in place).
 *
 * Accuracy against correctly rounded results over the whole float range (tests/c/test_vmath.c
 * sweeps it): exp <= 1 ulp, including the subnormal results of x in (-103.97, -87.34) and inf
 * above 88.7228; sigmoid = 1 / (1 + exp(-x)) <= 2.5 ulp; tanh <= 1.5 ulp (an odd polynomial below
 * |x| = 0.55, 1 - 2 / (exp(2|x|) + 1) above, +-1 past 9.01). NaN in gives NaN out; relu keeps
 * NaN and maps -0 to +0 as MXNet's relu (x > 0 || x != x ? x : 0); erf <= 1.5 ulp (erf(-0) = -0); log <= 1.5 ulp
 * (log(0) = -inf, log(x < 0) = NaN); log1p <= 2.5 ulp; expm1 <= 2 ulp (expm1(-0) = -0). libm's expf/tanhf are scalar
 * calls (15 ns per tanh in V8); these run 4 lanes without calls. In the relaxed-SIMD tiers the polynomials use
 * relaxed_madd (simd.h).
 */
#ifndef MXW_KERNELS_VMATH_H_
#define MXW_KERNELS_VMATH_H_

#include <math.h>
#include <stdint.h>

#include "../core/simd.h"

/* exp(x): x = k ln2 + r, |r| <= ln2/2 (Cody-Waite), exp(r) by Cephes' degree-7 polynomial.
 * Adding 1.5 * 2^23 rounds x / ln2 to the integer k (the float's low bits hold k); 2^k is
 * applied as two factors 2^(k/2) and 2^(k - k/2) so that k in [-150, 128] (subnormal results,
 * overflow to inf) needs no special case. */
static inline v128_t mxw_exp_f32x4(v128_t x) {
  const v128_t magic = wasm_f32x4_splat(12582912.0f);
  /* pmax/pmin keep a NaN x (the comparison is false) */
  v128_t xc = wasm_f32x4_pmin(wasm_f32x4_pmax(x, wasm_f32x4_splat(-104.0f)), wasm_f32x4_splat(89.0f));
  v128_t t = MXW_F32X4_MADD(magic, xc, wasm_f32x4_splat(1.44269504088896341f));
  v128_t kf = wasm_f32x4_sub(t, magic);
  v128_t r = wasm_f32x4_sub(xc, wasm_f32x4_mul(kf, wasm_f32x4_splat(0.693359375f)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(kf, wasm_f32x4_splat(-2.12194440e-4f)));
  v128_t p = wasm_f32x4_splat(1.9875691500e-4f);
  p = MXW_F32X4_MADD(wasm_f32x4_splat(1.3981999507e-3f), p, r);
  p = MXW_F32X4_MADD(wasm_f32x4_splat(8.3334519073e-3f), p, r);
  p = MXW_F32X4_MADD(wasm_f32x4_splat(4.1665795894e-2f), p, r);
  p = MXW_F32X4_MADD(wasm_f32x4_splat(1.6666665459e-1f), p, r);
  p = MXW_F32X4_MADD(wasm_f32x4_splat(5.0000001201e-1f), p, r);
  p = wasm_f32x4_add(MXW_F32X4_MADD(r, p, wasm_f32x4_mul(r, r)), wasm_f32x4_splat(1.f));
  v128_t k = wasm_i32x4_sub(t, magic); /* the integer k, from the bit patterns */
  v128_t k1 = wasm_i32x4_shr(k, 1), k2 = wasm_i32x4_sub(k, k1);
  const v128_t bias = wasm_i32x4_splat(127);
  v128_t s1 = wasm_i32x4_shl(wasm_i32x4_add(k1, bias), 23), s2 = wasm_i32x4_shl(wasm_i32x4_add(k2, bias), 23);
  return wasm_f32x4_mul(wasm_f32x4_mul(p, s1), s2);
}

/* 1 / (1 + exp(-x)), as MXNet's sigmoid */
static inline v128_t mxw_sigmoid_f32x4(v128_t x) {
  const v128_t one = wasm_f32x4_splat(1.f);
  return wasm_f32x4_div(one, wasm_f32x4_add(one, mxw_exp_f32x4(wasm_f32x4_neg(x))));
}

static inline v128_t mxw_tanh_f32x4(v128_t x) {
  const v128_t sign = wasm_i32x4_splat((int32_t)0x80000000u), one = wasm_f32x4_splat(1.f);
  v128_t a = wasm_v128_andnot(x, sign); /* |x| */
  /* |x| >= 0.55: 1 - 2 / (exp(2|x|) + 1) (exp's inf past 44 gives exactly 1) */
  v128_t e = mxw_exp_f32x4(wasm_f32x4_add(a, a));
  v128_t big = wasm_f32x4_sub(one, wasm_f32x4_div(wasm_f32x4_splat(2.f), wasm_f32x4_add(e, one)));
  /* |x| < 0.55: tanh's Taylor series to x^21 (the next term is below 3e-9 relative there) */
  v128_t z = wasm_f32x4_mul(a, a);
  v128_t q = wasm_f32x4_splat(18888466084.f / 194896477400625.f);
  q = MXW_F32X4_MADD(wasm_f32x4_splat(-443861162.f / 1856156927625.f), q, z);
  q = MXW_F32X4_MADD(wasm_f32x4_splat(6404582.f / 10854718875.f), q, z);
  q = MXW_F32X4_MADD(wasm_f32x4_splat(-929569.f / 638512875.f), q, z);
  q = MXW_F32X4_MADD(wasm_f32x4_splat(21844.f / 6081075.f), q, z);
  q = MXW_F32X4_MADD(wasm_f32x4_splat(-1382.f / 155925.f), q, z);
  q = MXW_F32X4_MADD(wasm_f32x4_splat(62.f / 2835.f), q, z);
  q = MXW_F32X4_MADD(wasm_f32x4_splat(-17.f / 315.f), q, z);
  q = MXW_F32X4_MADD(wasm_f32x4_splat(2.f / 15.f), q, z);
  q = MXW_F32X4_MADD(wasm_f32x4_splat(-1.f / 3.f), q, z);
  v128_t small = MXW_F32X4_MADD(a, wasm_f32x4_mul(a, z), q);
  v128_t y = wasm_v128_bitselect(small, big, wasm_f32x4_lt(a, wasm_f32x4_splat(0.55f)));
  y = wasm_v128_or(y, wasm_v128_and(x, sign));           /* tanh is odd; -0 stays -0 */
  return wasm_v128_bitselect(x, y, wasm_f32x4_ne(x, x)); /* NaN stays NaN */
}

/* x > 0 or NaN ? x : +0 */
static inline v128_t mxw_relu_f32x4(v128_t x) { return wasm_v128_andnot(x, wasm_f32x4_le(x, wasm_f32x4_splat(0.f))); }

/* erf(x), two fits made for this file (mpmath's chebyfit: 1.2e-9 and 4.7e-9 absolute):
 *   |x| <= 1:  x + x R(x^2),            R(t) = erf(sqrt t) / sqrt t - 1, degree 7 in t
 *   |x| >  1:  1 - exp(-x^2) Q(1 / x),  Q(x) = erfc(x) exp(x^2), degree 9 in 1/x over [1, 4]
 * |x| is clamped at 4 (erf rounds to 1 in float32 from 3.92). Both halves run in every lane and
 * a mask picks one; the sign is put back last, so NaN and -0 pass through. libm's erff is a
 * scalar call (~16 ns per element in V8); GELU (BERT, GPT-2) computes one per activation. */
static inline v128_t mxw_erf_f32x4(v128_t x) {
  static const float kr[8] = {-9.667044651e-06f, 1.126595889e-04f, -8.484080317e-04f, 5.221031606e-03f,
                              -2.686543018e-02f, 1.128378212e-01f, -3.761263788e-01f, 1.283791661e-01f};
  static const float kq[10] = {2.503254265e-02f, -1.478984505e-01f, 3.608618677e-01f,  -4.298337400e-01f,
                               1.454773545e-01f, 2.825897932e-01f,  -3.948595822e-01f, 2.484752052e-02f,
                               5.612146258e-01f, 1.516556804e-04f};
  const v128_t sign = wasm_v128_and(x, wasm_i32x4_splat((int32_t)0x80000000u));
  const v128_t ax = wasm_f32x4_abs(x), one = wasm_f32x4_splat(1.f);
  const v128_t t = wasm_f32x4_mul(ax, ax);
  v128_t r = wasm_f32x4_splat(kr[0]);
  for (int k = 1; k < 8; k++) r = MXW_F32X4_MADD(wasm_f32x4_splat(kr[k]), r, t);
  const v128_t small = wasm_f32x4_add(ax, wasm_f32x4_mul(ax, r));
  const v128_t xc = wasm_f32x4_pmin(ax, wasm_f32x4_splat(4.f)); /* NaN stays NaN */
  const v128_t u = wasm_f32x4_div(one, xc);
  v128_t q = wasm_f32x4_splat(kq[0]);
  for (int k = 1; k < 10; k++) q = MXW_F32X4_MADD(wasm_f32x4_splat(kq[k]), q, u);
  const v128_t e = mxw_exp_f32x4(wasm_f32x4_neg(wasm_f32x4_mul(xc, xc)));
  const v128_t big = wasm_f32x4_sub(one, wasm_f32x4_mul(e, q));
  return wasm_v128_or(wasm_v128_bitselect(small, big, wasm_f32x4_le(ax, one)), sign);
}

/* expm1(x): |x| <= 0.7: x + (x^2 / 2 + x^3 Q(x)) with Q a degree-6 fit made for this file
 * (mpmath's chebyfit, 3.8e-10 absolute), else exp(x) - 1 (no cancellation past 0.7); +-0 as is */
static inline v128_t mxw_expm1_f32x4(v128_t x) {
  static const float kq[7] = {2.777298732e-06f, 2.503899123e-05f, 1.984074042e-04f, 1.388830598e-03f,
                              8.333333768e-03f, 4.166667163e-02f, 1.666666716e-01f};
  const v128_t x2 = wasm_f32x4_mul(x, x);
  v128_t q = wasm_f32x4_splat(kq[0]);
  for (int k = 1; k < 7; k++) q = MXW_F32X4_MADD(wasm_f32x4_splat(kq[k]), q, x);
  const v128_t small = wasm_f32x4_add(
      x, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(0.5f), x2), wasm_f32x4_mul(wasm_f32x4_mul(x2, x), q)));
  const v128_t big = wasm_f32x4_sub(mxw_exp_f32x4(x), wasm_f32x4_splat(1.f));
  const v128_t r = wasm_v128_bitselect(small, big, wasm_f32x4_le(wasm_f32x4_abs(x), wasm_f32x4_splat(0.7f)));
  return wasm_v128_bitselect(x, r, wasm_f32x4_eq(x, wasm_f32x4_splat(0.f)));
}

/* log(x): x = m 2^e with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23 first), f = m - 1,
 * log(1 + f) = f - f^2 / 2 + f^3 P(f) with P a degree-7 fit made for this file (mpmath's chebyfit,
 * 1.8e-7 absolute on P), and e ln 2 added in two parts (Cody-Waite) */
static inline v128_t mxw_log_f32x4(v128_t x) {
  static const float kp[8] = {-7.902743667e-02f, 1.262231916e-01f, -1.299818307e-01f, 1.421449631e-01f,
                              -1.664128155e-01f, 2.000104487e-01f, -2.500030696e-01f, 3.333333135e-01f};
  const v128_t one = wasm_f32x4_splat(1.f);
  const v128_t sub = wasm_f32x4_lt(x, wasm_f32x4_splat(1.17549435e-38f)); /* and zero, negatives */
  const v128_t xs = wasm_v128_bitselect(wasm_f32x4_mul(x, wasm_f32x4_splat(8388608.f)), x, sub);
  v128_t e = wasm_i32x4_sub(wasm_i32x4_sub(wasm_u32x4_shr(xs, 23), wasm_i32x4_splat(126)),
                            wasm_v128_and(sub, wasm_i32x4_splat(23)));
  v128_t m = wasm_v128_or(wasm_v128_and(xs, wasm_i32x4_splat(0x007fffff)), wasm_i32x4_splat(0x3f000000));
  const v128_t lo = wasm_f32x4_lt(m, wasm_f32x4_splat(0.707106829f)); /* m < sqrt(1/2), rounded up */
  m = wasm_v128_bitselect(wasm_f32x4_add(m, m), m, lo);
  e = wasm_i32x4_add(e, lo); /* the mask is -1 */
  const v128_t f = wasm_f32x4_sub(m, one), f2 = wasm_f32x4_mul(f, f);
  v128_t p = wasm_f32x4_splat(kp[0]);
  for (int k = 1; k < 8; k++) p = MXW_F32X4_MADD(wasm_f32x4_splat(kp[k]), p, f);
  const v128_t ef = wasm_f32x4_convert_i32x4(e);
  v128_t r = wasm_f32x4_mul(wasm_f32x4_mul(f2, f), p);
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(wasm_f32x4_splat(0.5f), f2));
  r = wasm_f32x4_add(r, wasm_f32x4_mul(ef, wasm_f32x4_splat(-2.12194440e-4f)));
  r = wasm_f32x4_add(f, r);
  r = wasm_f32x4_add(r, wasm_f32x4_mul(ef, wasm_f32x4_splat(0.693359375f)));
  /* x = 0: -inf; x < 0: NaN; x = inf or NaN: x */
  r = wasm_v128_bitselect(wasm_f32x4_splat(-INFINITY), r, wasm_f32x4_eq(x, wasm_f32x4_splat(0.f)));
  r = wasm_v128_bitselect(wasm_f32x4_splat(NAN), r, wasm_f32x4_lt(x, wasm_f32x4_splat(0.f)));
  return wasm_v128_bitselect(x, r, wasm_v128_or(wasm_f32x4_ne(x, x), wasm_f32x4_eq(x, wasm_f32x4_splat(INFINITY))));
}

/* log1p(x) = log(w) x / (w - 1) with w = 1 + x rounded (the ratio corrects w's rounding), and x
 * where w is 1 */
static inline v128_t mxw_log1p_f32x4(v128_t x) {
  const v128_t one = wasm_f32x4_splat(1.f), w = wasm_f32x4_add(one, x), d = wasm_f32x4_sub(w, one);
  const v128_t r = wasm_f32x4_mul(mxw_log_f32x4(w), wasm_f32x4_div(x, d));
  /* w = 1: x; w = inf: log(w) (the ratio would be inf / inf); w = 0 (x = -1): -inf */
  const v128_t plain =
      wasm_v128_or(wasm_f32x4_eq(w, wasm_f32x4_splat(INFINITY)), wasm_f32x4_eq(w, wasm_f32x4_splat(0.f)));
  return wasm_v128_bitselect(x, wasm_v128_bitselect(mxw_log_f32x4(w), r, plain), wasm_f32x4_eq(w, one));
}

/* softrelu as MXNet's: x > 20 ? x : log1p(exp(x)) */
static inline v128_t mxw_softrelu_f32x4(v128_t x) {
  return wasm_v128_bitselect(x, mxw_log1p_f32x4(mxw_exp_f32x4(x)), wasm_f32x4_gt(x, wasm_f32x4_splat(20.f)));
}

/* GELU as MXNet's LeakyReLU(act_type='gelu'), in its operation order: 0.5 x (1 + erf(x / sqrt 2)) */
static inline v128_t mxw_gelu_f32x4(v128_t x) {
  const v128_t e = mxw_erf_f32x4(wasm_f32x4_div(x, wasm_f32x4_splat(1.41421356237309505f)));
  return wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_splat(0.5f), x), wasm_f32x4_add(wasm_f32x4_splat(1.f), e));
}

/* GELU's derivative: 0.5 (1 + erf(x / sqrt 2) + x sqrt(2 / pi) exp(-x^2 / 2)) */
static inline v128_t mxw_gelu_grad_f32x4(v128_t x) {
  const v128_t e = mxw_erf_f32x4(wasm_f32x4_div(x, wasm_f32x4_splat(1.41421356237309505f)));
  const v128_t d = wasm_f32x4_mul(wasm_f32x4_mul(x, wasm_f32x4_splat(0.797884560802865356f)),
                                  mxw_exp_f32x4(wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_splat(-0.5f), x), x)));
  return wasm_f32x4_mul(wasm_f32x4_splat(0.5f), wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_splat(1.f), e), d));
}

/* y[i] = f(x[i]) for i < n; x may equal y. */
void mxw_vexp_f32(const float *x, float *y, int64_t n);
void mxw_vsigmoid_f32(const float *x, float *y, int64_t n);
void mxw_vtanh_f32(const float *x, float *y, int64_t n);
void mxw_vrelu_f32(const float *x, float *y, int64_t n);
void mxw_verf_f32(const float *x, float *y, int64_t n);
void mxw_vlog_f32(const float *x, float *y, int64_t n);
void mxw_vexpm1_f32(const float *x, float *y, int64_t n);
/* LeakyReLU elu (x > 0 ? x : a expm1(x)) and selu (lambda (x > 0 ? x : alpha expm1(x))) */
void mxw_velu_f32(const float *x, float *y, int64_t n, float a);
void mxw_vselu_f32(const float *x, float *y, int64_t n, float lambda, float alpha);
void mxw_vlog1p_f32(const float *x, float *y, int64_t n);
void mxw_vsoftrelu_f32(const float *x, float *y, int64_t n);
void mxw_vgelu_f32(const float *x, float *y, int64_t n);
/* d[i] = g[i] * gelu'(x[i]); d may equal g or x */
void mxw_vgelu_grad_f32(const float *g, const float *x, float *d, int64_t n);

#endif /* MXW_KERNELS_VMATH_H_ */
