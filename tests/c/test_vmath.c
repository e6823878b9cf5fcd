/* vmath (exp, log, log1p, sigmoid, tanh, softrelu, relu, erf and GELU on float32 lanes) against libm's double-precision
 * functions rounded to float: the error in units in the last place over a sweep of every 997th float bit pattern (both
 * signs, subnormals, the overflow and underflow edges), the special values, and the array forms (odd lengths, in place,
 * a result independent of where a call starts). */
#include "kernels/vmath.h"
#include "mxw_test.h"

#include <float.h>

static float bits_to_f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static uint32_t f_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* |y - ref| in units of the float spacing at ref (2^-149 below FLT_MIN). */
static double ulp_error(float y, double ref) {
  if (isnan(ref)) return isnan(y) ? 0.0 : INFINITY;
  if (isinf(ref) || isinf(y)) return (float)ref == y ? 0.0 : INFINITY;
  int e;
  frexp(fabs(ref), &e); /* |ref| in [2^(e-1), 2^e) */
  double ulp = ldexp(1.0, (e - 1 > -126 ? e - 1 : -126) - 23);
  return fabs((double)y - ref) / ulp;
}

static double ref_exp(double x) { return exp(x); }
/* MXNet's float sigmoid 1 / (1 + expf(-x)): exp(-x) past FLT_MAX is inf there, so the result is 0
 * where the exact value would be a subnormal. */
static double ref_sigmoid(double x) {
  double e = exp(-x);
  return e > FLT_MAX ? 0.0 : 1.0 / (1.0 + e);
}
static double ref_tanh(double x) { return tanh(x); }
static double ref_erf(double x) { return erf(x); }
static double ref_log(double x) { return log(x); }
static double ref_expm1(double x) { return expm1(x); }
static double ref_log1p(double x) { return log1p(x); }
/* MXNet's softrelu: x past 20 is returned as is */
static double ref_softrelu(double x) { return x > 20.0 ? x : log1p(exp(x)); }

typedef v128_t (*lane_fn)(v128_t);

/* f on four lanes, the largest ulp error against ref kept in *worst (at *worst_x). */
static void check_lanes(lane_fn f, double (*ref)(double), const float *lanes, double *worst, float *worst_x) {
  float out[4];
  wasm_v128_store(out, f(wasm_v128_load(lanes)));
  for (int j = 0; j < 4; j++) {
    double e = ulp_error(out[j], ref((double)lanes[j]));
    if (e > *worst) {
      *worst = e;
      *worst_x = lanes[j];
    }
  }
}

/* The largest ulp error of f against ref over the sweep. */
static double sweep(lane_fn f, double (*ref)(double), float *worst_x) {
  double worst = 0.0;
  float lanes[4];
  int k = 0;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 997) {
    lanes[k++] = bits_to_f((uint32_t)u);
    if (k < 4) continue;
    k = 0;
    check_lanes(f, ref, lanes, &worst, worst_x);
  }
  return worst;
}

/* The largest ulp error of f against ref over every float in [lo, hi); with `negatives`, every
 * other one negated (both signs of the range, half the floats each). */
static double sweep_range(lane_fn f, double (*ref)(double), float lo, float hi, int negatives, float *worst_x) {
  double worst = 0.0;
  float lanes[4];
  for (uint32_t u = f_to_bits(lo); u < f_to_bits(hi); u += 4) {
    for (int j = 0; j < 4; j++) lanes[j] = bits_to_f(u + (uint32_t)j) * (negatives && (j & 1) ? -1.f : 1.f);
    check_lanes(f, ref, lanes, &worst, worst_x);
  }
  return worst;
}

static void test_exp_ulp(void **state) {
  (void)state;
  float wx = 0.f;
  double w = sweep(mxw_exp_f32x4, ref_exp, &wx);
  if (w > 1.0) fail_msg("exp: %.2f ulp at x = %.9g", w, wx);
}
static void test_sigmoid_ulp(void **state) {
  (void)state;
  float wx = 0.f;
  double w = sweep(mxw_sigmoid_f32x4, ref_sigmoid, &wx);
  if (w > 2.5) fail_msg("sigmoid: %.2f ulp at x = %.9g", w, wx);
}
static void test_tanh_ulp(void **state) {
  (void)state;
  float wx = 0.f;
  double w = sweep(mxw_tanh_f32x4, ref_tanh, &wx);
  if (w > 1.5) fail_msg("tanh: %.2f ulp at x = %.9g", w, wx);
}

static void test_erf_ulp(void **state) {
  (void)state;
  float wx = 0.f;
  double w = sweep(mxw_erf_f32x4, ref_erf, &wx);
  if (w > 1.5) fail_msg("erf: %.2f ulp at x = %.9g", w, wx);
  /* every float in [0.5, 4.5), where both fits and their seam at 1 lie, and their negatives */
  w = sweep_range(mxw_erf_f32x4, ref_erf, 0.5f, 4.5f, 1, &wx);
  if (w > 1.5) fail_msg("erf: %.2f ulp at x = %.9g", w, wx);
}

static void test_log_ulp(void **state) {
  (void)state;
  float wx = 0.f;
  double w = sweep(mxw_log_f32x4, ref_log, &wx);
  if (w > 1.5) fail_msg("log: %.2f ulp at x = %.9g", w, wx);
  w = sweep(mxw_log1p_f32x4, ref_log1p, &wx);
  if (w > 2.5) fail_msg("log1p: %.2f ulp at x = %.9g", w, wx);
  w = sweep(mxw_expm1_f32x4, ref_expm1, &wx);
  if (w > 2.0) fail_msg("expm1: %.2f ulp at x = %.9g", w, wx);
  w = sweep(mxw_softrelu_f32x4, ref_softrelu, &wx);
  if (w > 2.5) fail_msg("softrelu: %.2f ulp at x = %.9g", w, wx);
  /* every float in [0.5, 2), both sides of the seams at sqrt(1/2), 1 and sqrt(2) */
  w = sweep_range(mxw_log_f32x4, ref_log, 0.5f, 2.f, 0, &wx);
  if (w > 1.5) fail_msg("log: %.2f ulp at x = %.9g", w, wx);
}

/* GELU and its derivative against the double formulas: 0.5 x (1 + erf(x / sqrt 2)) loses the
 * relative precision of 1 + erf for x well below 0 in float (as MXNet's erff form does), so the
 * bound is absolute, a few float32 ulps of max(1, |x|). */
static void test_gelu(void **state) {
  (void)state;
  enum { N = 4001 };
  static float x[N], y[N], d[N], g[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i - 2000) * 0.005f; /* [-10, 10] */
    g[i] = 1.f;
  }
  mxw_vgelu_f32(x, y, N);
  mxw_vgelu_grad_f32(g, x, d, N);
  for (int i = 0; i < N; i++) {
    const double xv = x[i], tol = 4.0 * FLT_EPSILON * (fabs(xv) > 1.0 ? fabs(xv) : 1.0);
    const double ry = 0.5 * xv * (1.0 + erf(xv / sqrt(2.0)));
    const double rd = 0.5 * (1.0 + erf(xv / sqrt(2.0)) + xv * sqrt(2.0 / M_PI) * exp(-0.5 * xv * xv));
    if (fabs(y[i] - ry) > tol) fail_msg("gelu(%.9g) = %.9g, want %.9g", xv, (double)y[i], ry);
    if (fabs(d[i] - rd) > tol) fail_msg("gelu'(%.9g) = %.9g, want %.9g", xv, (double)d[i], rd);
  }
  /* elu (a = 0.5) and selu against the double formulas, relative (expm1 keeps it near 0) */
  static float e[N], se[N];
  const double lam = 1.0507009873554804934, alp = 1.6732632423543772848;
  mxw_velu_f32(x, e, N, 0.5f);
  mxw_vselu_f32(x, se, N, (float)lam, (float)alp);
  for (int i = 0; i < N; i++) {
    const double xv = x[i], re = xv > 0 ? xv : 0.5 * expm1(xv), rs = lam * (xv > 0 ? xv : alp * expm1(xv));
    if (ulp_error(e[i], re) > 3.0) fail_msg("elu(%.9g) = %.9g, want %.9g", xv, (double)e[i], re);
    if (ulp_error(se[i], rs) > 4.0) fail_msg("selu(%.9g) = %.9g, want %.9g", xv, (double)se[i], rs);
  }
  /* hand-worked: gelu(0) = 0, gelu(1) = 0.5 (1 + erf(0.70710678)) = 0.8413447; gelu'(0) = 0.5 */
  assert_true(y[2000] == 0.f && d[2000] == 0.5f);
  assert_true(fabsf(y[2200] - 0.8413447f) < 2e-7f);
}

/* Hand-checked values at the edges. */
static void test_specials(void **state) {
  (void)state;
  float x[8] = {NAN, INFINITY, -INFINITY, 0.f, -0.f, 88.7228f, 88.73f, -103.f}, y[8];
  mxw_vexp_f32(x, y, 8);
  assert_true(isnan(y[0]));
  assert_true(isinf(y[1]) && y[1] > 0);
  assert_true(y[2] == 0.f && !signbit(y[2]));
  assert_true(y[3] == 1.f && y[4] == 1.f);
  assert_true(isfinite(y[5]) && y[5] > 3.4e38f); /* just below FLT_MAX */
  assert_true(isinf(y[6]));
  assert_true(y[7] > 0.f && y[7] < 1.2e-38f); /* subnormal, not flushed */
  mxw_vtanh_f32(x, y, 8);
  assert_true(isnan(y[0]));
  assert_true(y[1] == 1.f && y[2] == -1.f);
  assert_true(y[3] == 0.f && !signbit(y[3]) && y[4] == 0.f && signbit(y[4])); /* tanh(-0) = -0 */
  mxw_vsigmoid_f32(x, y, 8);
  assert_true(isnan(y[0]));
  assert_true(y[1] == 1.f && y[2] == 0.f && y[3] == 0.5f);
  mxw_vlog_f32(x, y, 8); /* NaN, inf, -inf, 0, -0, ... */
  assert_true(isnan(y[0]) && isinf(y[1]) && y[1] > 0 && isnan(y[2]));
  assert_true(isinf(y[3]) && y[3] < 0 && isinf(y[4]) && y[4] < 0);
  float lx[4] = {1.f, 1.4e-45f, 2.f, -1.f}, ly[4];
  mxw_vlog_f32(lx, ly, 4);
  assert_true(ly[0] == 0.f && fabsf(ly[1] - -103.27893f) < 1e-4f && ly[2] == 0.69314718f && isnan(ly[3]));
  mxw_vlog1p_f32(lx, ly, 4);
  assert_true(ly[0] == 0.69314718f && ly[1] == 1.4e-45f && ly[2] == 1.09861229f && isinf(ly[3]) && ly[3] < 0);
  mxw_vsoftrelu_f32(x, y, 8);
  assert_true(isnan(y[0]) && isinf(y[1]) && y[2] == 0.f && y[3] == 0.69314718f && y[5] == 88.7228f);
  mxw_verf_f32(x, y, 8);
  assert_true(isnan(y[0]));
  assert_true(y[1] == 1.f && y[2] == -1.f);
  assert_true(y[3] == 0.f && !signbit(y[3]) && y[4] == 0.f && signbit(y[4])); /* erf(-0) = -0 */
  assert_true(y[5] == 1.f && y[7] == -1.f);
  float r[6] = {NAN, -0.f, -2.f, 3.f, INFINITY, -INFINITY}, ry[6];
  mxw_vrelu_f32(r, ry, 6);
  assert_true(isnan(ry[0]));
  assert_true(ry[1] == 0.f && !signbit(ry[1])); /* MXNet's relu(-0) is +0 */
  assert_true(ry[2] == 0.f && ry[3] == 3.f && isinf(ry[4]) && ry[5] == 0.f);
}

/* Odd lengths, in place, and an element's result independent of the call's start. */
static void test_arrays(void **state) {
  (void)state;
  enum { N = 23 };
  float x[N], whole[N], part[N], inplace[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i - 11) * 0.37f;
  void (*fns[9])(const float *, float *, int64_t) = {mxw_vexp_f32,   mxw_vsigmoid_f32,  mxw_vtanh_f32,
                                                     mxw_vrelu_f32,  mxw_verf_f32,      mxw_vlog_f32,
                                                     mxw_vlog1p_f32, mxw_vsoftrelu_f32, mxw_vexpm1_f32};
  double (*refs[9])(double) = {ref_exp, ref_sigmoid, ref_tanh,     NULL,     ref_erf,
                               ref_log, ref_log1p,   ref_softrelu, ref_expm1};
  for (int f = 0; f < 9; f++) {
    fns[f](x, whole, N);
    for (int start = 1; start < 4; start++) { /* the same elements from another offset */
      fns[f](x + start, part + start, N - start);
      for (int i = start; i < N; i++) assert_true(f_to_bits(part[i]) == f_to_bits(whole[i]));
    }
    memcpy(inplace, x, sizeof x);
    fns[f](inplace, inplace, N);
    for (int i = 0; i < N; i++) {
      assert_true(f_to_bits(inplace[i]) == f_to_bits(whole[i]));
      double ref = refs[f] ? refs[f](x[i]) : (x[i] > 0 ? x[i] : 0.0);
      assert_true(ulp_error(whole[i], ref) <= 3.0);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_specials),    cmocka_unit_test(test_arrays),   cmocka_unit_test(test_exp_ulp),
      cmocka_unit_test(test_sigmoid_ulp), cmocka_unit_test(test_tanh_ulp), cmocka_unit_test(test_erf_ulp),
      cmocka_unit_test(test_gelu),        cmocka_unit_test(test_log_ulp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
