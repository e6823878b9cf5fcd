/* elemwise_unary.c through the invoke and autograd paths: every unary op forward in float32,
 * float64 and float16 against the C library's double function (the formula MXNet documents),
 * every gradient against a central finite difference of that double function, negative's
 * two's-complement wrap on integers, hard_sigmoid, Activation's five types (forward and
 * _backward_Activation in float32, float64 and float16) and mxw_apply_act (the fused-producer
 * pass). */
#include "cov_op_helpers.h"

static double f_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double f_relu(double x) { return x > 0 ? x : 0; }
static double f_rsqrt(double x) { return 1 / sqrt(x); }
static double f_square(double x) { return x * x; }
static double f_recip(double x) { return 1 / x; }
static double f_softsign(double x) { return x / (1 + fabs(x)); }
static double f_softrelu(double x) { return log(1 + exp(x)); }
static double f_degrees(double x) { return x * 180 / M_PI; }
static double f_radians(double x) { return x * M_PI / 180; }
static double f_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
static double f_not(double x) { return x == 0; }
static double f_id(double x) { return x; }
static double f_neg(double x) { return -x; }
static double f_zero(double x) { return 0 * x; }
static double f_one(double x) { return 1 + 0 * x; }

typedef struct {
  const char *name;
  double (*f)(double);
  int grad; /* 1: differentiable (checked by finite differences); 0: no gradient (zeros) */
  double x[4];
} unary_case;

/* x avoids each function's kinks and poles; 4 values, one negative where the domain allows. */
static const unary_case k_cases[] = {
    {"relu", f_relu, 1, {-1.5, 0.25, 0.75, 2}},
    {"sigmoid", f_sigmoid, 1, {-1.5, 0.25, 0.75, 2}},
    {"tanh", tanh, 1, {-1.5, 0.25, 0.75, 2}},
    {"exp", exp, 1, {-1.5, 0.25, 0.75, 2}},
    {"expm1", expm1, 1, {-1.5, 0.25, 0.75, 2}},
    {"log", log, 1, {0.3, 0.25, 0.75, 2}},
    {"log1p", log1p, 1, {-0.5, 0.25, 0.75, 2}},
    {"log2", log2, 1, {0.3, 0.25, 0.75, 2}},
    {"log10", log10, 1, {0.3, 0.25, 0.75, 2}},
    {"sqrt", sqrt, 1, {0.3, 0.25, 0.75, 2}},
    {"rsqrt", f_rsqrt, 1, {0.3, 0.25, 0.75, 2}},
    {"cbrt", cbrt, 1, {-1.5, 0.25, 0.75, 2}},
    {"square", f_square, 1, {-1.5, 0.25, 0.75, 2}},
    {"reciprocal", f_recip, 1, {-1.5, 0.25, 0.75, 2}},
    {"abs", fabs, 1, {-1.5, 0.25, 0.75, 2}},
    {"erf", erf, 1, {-1.5, 0.25, 0.75, 2}},
    {"softsign", f_softsign, 1, {-1.5, 0.25, 0.75, 2}},
    {"sin", sin, 1, {-1.5, 0.25, 0.75, 2}},
    {"cos", cos, 1, {-1.5, 0.25, 0.75, 2}},
    {"tan", tan, 1, {-1.2, 0.25, 0.75, 1.1}},
    {"arcsin", asin, 1, {-0.5, 0.25, 0.75, 0.1}},
    {"arccos", acos, 1, {-0.5, 0.25, 0.75, 0.1}},
    {"arctan", atan, 1, {-1.5, 0.25, 0.75, 2}},
    {"sinh", sinh, 1, {-1.5, 0.25, 0.75, 2}},
    {"cosh", cosh, 1, {-1.5, 0.25, 0.75, 2}},
    {"arcsinh", asinh, 1, {-1.5, 0.25, 0.75, 2}},
    {"arccosh", acosh, 1, {1.2, 1.5, 2.75, 4}},
    {"arctanh", atanh, 1, {-0.5, 0.25, 0.75, 0.1}},
    {"gamma", tgamma, 1, {-0.5, 0.25, 1.75, 4.5}},
    {"gammaln", lgamma, 1, {-0.5, 0.25, 1.75, 7.5}},
    {"degrees", f_degrees, 1, {-1.5, 0.25, 0.75, 2}},
    {"radians", f_radians, 1, {-1.5, 0.25, 0.75, 2}},
    {"negative", f_neg, 1, {-1.5, 0.25, 0.75, 2}},
    {"_copy", f_id, 1, {-1.5, 0.25, 0.75, 2}},
    {"identity", f_id, 1, {-1.5, 0.25, 0.75, 2}},
    {"sign", f_sign, 0, {-1.5, 0, 0.75, 2}},
    {"floor", floor, 0, {-1.5, 0.25, 0.75, 2.5}},
    {"ceil", ceil, 0, {-1.5, 0.25, 0.75, 2.5}},
    {"round", round, 0, {-1.5, 0.25, 0.5, 2.5}},
    {"rint", rint, 0, {-1.5, 0.25, 0.5, 2.5}},
    {"fix", trunc, 0, {-1.5, 0.25, 0.75, 2.5}},
    {"trunc", trunc, 0, {-1.5, 0.25, 0.75, 2.5}},
    {"logical_not", f_not, 0, {-1.5, 0, 0.75, 0}},
    {"BlockGrad", f_id, 0, {-1.5, 0.25, 0.75, 2}},
    {"zeros_like", f_zero, 0, {-1.5, 0.25, 0.75, 2}},
    {"ones_like", f_one, 0, {-1.5, 0.25, 0.75, 2}},
};

static double fd(double (*f)(double), double x) {
  const double h = 1e-6;
  return (f(x + h) - f(x - h)) / (2 * h);
}

static void test_forward_all_dtypes(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof k_cases / sizeof k_cases[0]; k++) {
    const unary_case *u = &k_cases[k];
    double want[4];
    for (int i = 0; i < 4; i++) want[i] = u->f(u->x[i]);
    static const int dtypes[] = {MXW_FLOAT32, MXW_FLOAT64, MXW_FLOAT16};
    static const double tols[] = {2e-6, 1e-13, 2e-3};
    for (int d = 0; d < 3; d++) {
      /* float16 input: the reference takes the rounded input */
      mxw_ndarray *x = c_arr(dtypes[d], 1, SHP(4), u->x);
      double w[4];
      for (int i = 0; i < 4; i++) w[i] = dtypes[d] == MXW_FLOAT16 ? u->f(c_at(x, i)) : want[i];
      mxw_ndarray *y = c_run1(u->name, &x, 1, NULL);
      assert_int_equal(mxw_ndarray_dtype(y), dtypes[d]);
      for (int i = 0; i < 4; i++)
        if (!(fabs(c_at(y, i) - w[i]) <= tols[d] * (1 + fabs(w[i]))))
          fail_msg("%s dtype %d [%d] = %.9g, expected %.9g", u->name, dtypes[d], i, c_at(y, i), w[i]);
      mxw_ndarray_free(y);
      mxw_ndarray_free(x);
    }
  }
}

/* d f / dx through autograd (the _backward_<op> kernels or the composed gradients) against a
 * central difference of the double function, in float64 and float32; head gradient 0.5, 1, 2, -1. */
static void test_gradients(void **state) {
  (void)state;
  const double head[4] = {0.5, 1, 2, -1};
  for (size_t k = 0; k < sizeof k_cases / sizeof k_cases[0]; k++) {
    const unary_case *u = &k_cases[k];
    for (int d = 0; d < 2; d++) {
      const int dt = d ? MXW_FLOAT32 : MXW_FLOAT64;
      mxw_ndarray *x = c_arr(dt, 1, SHP(4), u->x);
      mxw_ndarray *g = c_grad(u->name, &x, 1, 0, 0, head, NULL);
      for (int i = 0; i < 4; i++) {
        double want = u->grad ? head[i] * fd(u->f, u->x[i]) : 0;
        double tol = d ? 1e-4 : 1e-6;
        if (!(fabs(c_at(g, i) - want) <= tol * (1 + fabs(want))))
          fail_msg("d %s (dtype %d) at %g = %.9g, expected %.9g", u->name, dt, u->x[i], c_at(g, i), want);
      }
      mxw_ndarray_free(g);
      mxw_ndarray_free(x);
    }
  }
}

/* The _backward_<op> kernels on float16 (the generic double loop): ograd 2 at x = 0.5. */
static void test_backward_kernels_float16(void **state) {
  (void)state;
  static const struct {
    const char *op;
    double a, want; /* a: x (or y for the ...UseOut ones) */
  } k[] = {
      {"_backward_log", 0.5, 4},           {"_backward_square", 0.5, 2},
      {"_backward_sigmoid", 0.5, 0.5},     {"_backward_relu", 0.5, 2},
      {"_backward_abs", -0.5, -2},         {"_backward_sqrt", 0.5, 2},
      {"_backward_reciprocal", 0.5, -8},   {"_backward_tanh", 0.5, 1.5},
      {"_backward_cbrt", 0.5, 2.0 / 0.75}, {"_backward_degrees", 0.5, 360 / M_PI},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    mxw_ndarray *in[2] = {c_arr(MXW_FLOAT16, 1, SHP(1), DV(2)), c_arr(MXW_FLOAT16, 1, SHP(1), DV(k[i].a))};
    mxw_ndarray *y = c_run1(k[i].op, in, 2, NULL);
    assert_int_equal(mxw_ndarray_dtype(y), MXW_FLOAT16);
    if (!(fabs(c_at(y, 0) - k[i].want) <= 2e-3 * (1 + fabs(k[i].want))))
      fail_msg("%s = %g, expected %g", k[i].op, c_at(y, 0), k[i].want);
    mxw_ndarray_free(y);
    c_free(2, in);
  }
  /* relu's derivative keeps NaN (MXNet's relu_grad): float32 and float64 */
  for (int d = 0; d < 2; d++) {
    int dt = d ? MXW_FLOAT64 : MXW_FLOAT32;
    mxw_ndarray *in[2] = {c_arr(dt, 1, SHP(3), DV(1, 1, 1)), c_arr(dt, 1, SHP(3), DV(NAN, 0, 3))};
    mxw_ndarray *y = c_run1("_backward_relu", in, 2, NULL);
    c_expect(y, DV(NAN, 0, 1), 3, 0);
    mxw_ndarray_free(y);
    c_free(2, in);
  }
}

/* digamma's special points through gammaln's gradient: a pole gives the largest double (as
 * cephes psi), NaN stays NaN; psi(1) = -Euler's gamma. */
static void test_digamma_points(void **state) {
  (void)state;
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT64, 1, SHP(3), DV(1, 1, 1)), c_arr(MXW_FLOAT64, 1, SHP(3), DV(-2, NAN, 1))};
  mxw_ndarray *y = c_run1("_backward_gammaln", in, 2, NULL);
  c_expect(y, DV(1.7976931348623157e308, NAN, -0.57721566490153286), 3, 1e-12);
  mxw_ndarray_free(y);
  c_free(2, in);
}

/* negative on every integer width wraps as two's complement; bool stays; float16 flips the sign. */
static void test_negative_dtypes(void **state) {
  (void)state;
  mxw_ndarray *x = c_arr(MXW_INT8, 1, SHP(3), DV(-128, 5, -7)), *y = c_run1("negative", &x, 1, NULL);
  c_expect(y, DV(-128, -5, 7), 3, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
  x = c_arr(MXW_UINT8, 1, SHP(2), DV(5, 0));
  y = c_run1("negative", &x, 1, NULL);
  c_expect(y, DV(251, 0), 2, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
  x = c_arr(MXW_INT16, 1, SHP(2), DV(-32768, 300));
  y = c_run1("negative", &x, 1, NULL);
  c_expect(y, DV(-32768, -300), 2, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
  x = c_arr(MXW_INT32, 1, SHP(2), DV(-2147483648.0, 9));
  y = c_run1("negative", &x, 1, NULL);
  c_expect(y, DV(-2147483648.0, -9), 2, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
  x = c_arr(MXW_INT64, 1, SHP(2), DV(-4, 1e15));
  y = c_run1("negative", &x, 1, NULL);
  c_expect(y, DV(4, -1e15), 2, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
  x = c_arr(MXW_BOOL, 1, SHP(2), DV(1, 0));
  y = c_run1("negative", &x, 1, NULL);
  c_expect(y, DV(1, 0), 2, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
  x = c_arr(MXW_BFLOAT16, 1, SHP(2), DV(1.5, -2));
  y = c_run1("negative", &x, 1, NULL);
  c_expect(y, DV(-1.5, 2), 2, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
  /* make_loss: identity forward, ones as gradient whatever the head */
  x = c_arr(MXW_FLOAT32, 1, SHP(2), DV(3, -4));
  y = c_run1("make_loss", &x, 1, NULL);
  c_expect(y, DV(3, -4), 2, 0);
  mxw_ndarray_free(y);
  mxw_ndarray *g = c_grad("make_loss", &x, 1, 0, 0, DV(5, 7), NULL);
  c_expect(g, DV(1, 1), 2, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
}

/* hard_sigmoid = clip(alpha x + beta, 0, 1); its gradient alpha * ograd inside (0, 1). */
static void test_hard_sigmoid(void **state) {
  (void)state;
  const double xs[5] = {-4, -1, 0.5, 1, 4};
  for (int d = 0; d < 3; d++) {
    int dt = d == 0 ? MXW_FLOAT32 : d == 1 ? MXW_FLOAT64 : MXW_FLOAT16;
    mxw_ndarray *x = c_arr(dt, 1, SHP(5), xs);
    mxw_ndarray *y = c_run1("hard_sigmoid", &x, 1, KV("alpha", "0.25", "beta", "0.5"));
    double want[5], gw[5];
    for (int i = 0; i < 5; i++) {
      double v = 0.25 * xs[i] + 0.5;
      want[i] = v < 0 ? 0 : v > 1 ? 1 : v;
      gw[i] = (v > 0 && v < 1) ? 0.25 * 3 : 0;
    }
    c_expect(y, want, 5, 1e-6);
    mxw_ndarray_free(y);
    mxw_ndarray *g = c_grad("hard_sigmoid", &x, 1, 0, 0, DV(3, 3, 3, 3, 3), KV("alpha", "0.25", "beta", "0.5"));
    c_expect(g, gw, 5, 1e-6);
    mxw_ndarray_free(g);
    mxw_ndarray_free(x);
  }
}

/* Activation's five act_types: forward in float32/float64/float16 and the gradient through
 * _backward_Activation, against the double formulas and finite differences. */
static void test_activation(void **state) {
  (void)state;
  static const char *const types[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign"};
  double (*fs[])(double) = {f_relu, f_sigmoid, tanh, f_softrelu, f_softsign};
  const double xs[4] = {-1.5, 0.25, 0.75, 2}, head[4] = {1, -2, 0.5, 3};
  for (int t = 0; t < 5; t++) {
    for (int d = 0; d < 3; d++) {
      int dt = d == 0 ? MXW_FLOAT32 : d == 1 ? MXW_FLOAT64 : MXW_FLOAT16;
      double tol = d == 0 ? 1e-5 : d == 1 ? 1e-10 : 4e-3;
      mxw_ndarray *x = c_arr(dt, 1, SHP(4), xs);
      mxw_ndarray *y = c_run1("Activation", &x, 1, KV("act_type", types[t]));
      double want[4], gw[4];
      for (int i = 0; i < 4; i++) {
        want[i] = fs[t](xs[i]);
        gw[i] = head[i] * fd(fs[t], xs[i]);
      }
      c_expect(y, want, 4, tol);
      mxw_ndarray_free(y);
      mxw_ndarray *g = c_grad("Activation", &x, 1, 0, 0, head, KV("act_type", types[t]));
      c_expect(g, gw, 4, tol * 4);
      mxw_ndarray_free(g);
      /* the fused pass: mxw_apply_act in place */
      mxw_ndarray *z = c_arr(dt, 1, SHP(4), xs);
      mxw_apply_act(mxw_ndarray_data(z), dt, 4, MXW_ACT_RELU + t);
      c_expect(z, want, 4, tol);
      mxw_apply_act(mxw_ndarray_data(z), dt, 4, MXW_ACT_NONE); /* nothing */
      c_expect(z, want, 4, tol);
      mxw_ndarray_free(z);
      mxw_ndarray_free(x);
    }
  }
  c_bad_params("Activation", KV("act_type", "gelu"), "act_type");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forward_all_dtypes),
      cmocka_unit_test(test_gradients),
      cmocka_unit_test(test_backward_kernels_float16),
      cmocka_unit_test(test_digamma_points),
      cmocka_unit_test(test_negative_dtypes),
      cmocka_unit_test(test_hard_sigmoid),
      cmocka_unit_test(test_activation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
