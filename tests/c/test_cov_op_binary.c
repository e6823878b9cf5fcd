/* elemwise_binary.c: every binary op in its elemwise, broadcast and scalar forms, forward in
 * float32 and float64 against a float64 reference of MXNet's formula (mod takes the divisor's
 * sign, as mshadow's mod), gradients of the differentiable ones against central finite
 * differences of that reference (broadcast gradients summed over the broadcast rows), integer
 * dtypes of every width (truncating division, x / 0 = 0, x mod 0 = 0, saturating power), add_n
 * and its gradient, and the shape errors. */
#include "cov_op_helpers.h"

static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_mod(double a, double b) { return a - b * floor(a / b); }
static double r_pow(double a, double b) { return pow(a, b); }
static double r_max(double a, double b) { return a > b ? a : b; }
static double r_min(double a, double b) { return a < b ? a : b; }
static double r_hypot(double a, double b) { return sqrt(a * a + b * b); }
static double r_eq(double a, double b) { return a == b; }
static double r_ne(double a, double b) { return a != b; }
static double r_gt(double a, double b) { return a > b; }
static double r_ge(double a, double b) { return a >= b; }
static double r_lt(double a, double b) { return a < b; }
static double r_le(double a, double b) { return a <= b; }
static double r_and(double a, double b) { return a != 0 && b != 0; }
static double r_or(double a, double b) { return a != 0 || b != 0; }
static double r_xor(double a, double b) { return (a != 0) != (b != 0); }

typedef struct {
  const char *bname, *ename, *sname, *rname; /* broadcast_, elemwise, _x_scalar, _rx_scalar (or NULL) */
  double (*f)(double, double);
  int grad, set; /* differentiable; operands: 0 general, 1 positive (power), 2 with zeros and ties (logic) */
} binary_case;

static const binary_case k_cases[] = {
    {"broadcast_add", "elemwise_add", "_plus_scalar", NULL, r_add, 1, 0},
    {"broadcast_sub", "elemwise_sub", "_minus_scalar", "_rminus_scalar", r_sub, 1, 0},
    {"broadcast_mul", "elemwise_mul", "_mul_scalar", NULL, r_mul, 1, 0},
    {"broadcast_div", "elemwise_div", "_div_scalar", "_rdiv_scalar", r_div, 1, 0},
    {"broadcast_mod", "_mod", "_mod_scalar", "_rmod_scalar", r_mod, 1, 0},
    {"broadcast_power", "_power", "_power_scalar", "_rpower_scalar", r_pow, 1, 1},
    {"broadcast_maximum", "_maximum", "_maximum_scalar", NULL, r_max, 1, 0},
    {"broadcast_minimum", "_minimum", "_minimum_scalar", NULL, r_min, 1, 0},
    {"broadcast_hypot", "_hypot", "_hypot_scalar", NULL, r_hypot, 1, 0},
    {"broadcast_equal", "_equal", "_equal_scalar", NULL, r_eq, 0, 2},
    {"broadcast_not_equal", "_not_equal", "_not_equal_scalar", NULL, r_ne, 0, 2},
    {"broadcast_greater", "_greater", "_greater_scalar", NULL, r_gt, 0, 2},
    {"broadcast_greater_equal", "_greater_equal", "_greater_equal_scalar", NULL, r_ge, 0, 2},
    {"broadcast_lesser", "_lesser", "_lesser_scalar", NULL, r_lt, 0, 2},
    {"broadcast_lesser_equal", "_lesser_equal", "_lesser_equal_scalar", NULL, r_le, 0, 2},
    {"broadcast_logical_and", "_logical_and", "_logical_and_scalar", NULL, r_and, 0, 2},
    {"broadcast_logical_or", "_logical_or", "_logical_or_scalar", NULL, r_or, 0, 2},
    {"broadcast_logical_xor", "_logical_xor", "_logical_xor_scalar", NULL, r_xor, 0, 2},
};
#define NCASES (int)(sizeof k_cases / sizeof k_cases[0])

/* lhs (2, 4), rhs (4,) broadcast along rows: no ties and no integer ratios (mod's jumps) in the
 * general set; positive operands for power and the reversed scalar ops (x = 0 would divide by
 * zero); zeros and ties for the comparisons and logical ops */
static const double k_a[8] = {1.5, -2.2, 3.4, 0.5, 0.3, 2.6, -0.7, 1.35};
static const double k_b[4] = {2, 0.5, 3.3, -1.25};
static const double k_pa[8] = {1.6, 2.2, 3.3, 0.5, 0.75, 2.5, 0.7, 1.25};
static const double k_pb[4] = {2, 0.5, 1.5, -1.25};
static const double k_la[8] = {1.5, 0, 3.3, 0, 0, 2.5, -0.7, 1.75};
static const double k_lb[4] = {2, 0, 3.3, -1.25};
static const double k_s = 1.75;

static double fd_a(double (*f)(double, double), double a, double b) { return (f(a + 1e-6, b) - f(a - 1e-6, b)) / 2e-6; }
static double fd_b(double (*f)(double, double), double a, double b) { return (f(a, b + 1e-6) - f(a, b - 1e-6)) / 2e-6; }
static void check(const char *what, const mxw_ndarray *y, const double *want, int n, double tol) {
  assert_int_equal((int)mxw_ndarray_size(y), n);
  for (int i = 0; i < n; i++)
    if (!(fabs(c_at(y, i) - want[i]) <= tol * (1 + fabs(want[i]))))
      fail_msg("%s [%d] = %.9g, expected %.9g", what, i, c_at(y, i), want[i]);
}

static void test_forward_and_gradients(void **state) {
  (void)state;
  const double head[8] = {1, -0.5, 2, 0.25, 1.5, -1, 0.5, 3};
  for (int k = 0; k < NCASES; k++) {
    const binary_case *c = &k_cases[k];
    const double *A = c->set == 1 ? k_pa : c->set == 2 ? k_la : k_a, *B = c->set == 1 ? k_pb : c->set == 2 ? k_lb : k_b;
    double B8[8], yw[8], dA[8], dB8[8], dB[4] = {0}, ys[8], dS[8], yr[8], dR[8];
    for (int i = 0; i < 8; i++) {
      double a = A[i], b = B[i % 4];
      B8[i] = b;
      yw[i] = c->f(a, b);
      dA[i] = c->grad ? head[i] * fd_a(c->f, a, b) : 0;
      dB8[i] = c->grad ? head[i] * fd_b(c->f, a, b) : 0;
      dB[i % 4] += dB8[i];
      ys[i] = c->f(a, k_s);
      dS[i] = c->grad ? head[i] * fd_a(c->f, a, k_s) : 0;
      yr[i] = c->f(k_s, k_pa[i]);
      dR[i] = c->grad ? head[i] * fd_b(c->f, k_s, k_pa[i]) : 0;
    }
    for (int d = 0; d < 2; d++) {
      const int dt = d ? MXW_FLOAT32 : MXW_FLOAT64;
      const double tol = d ? 2e-5 : 1e-7, gtol = d ? 2e-4 : 1e-6;
      /* broadcast: (2, 4) with (4,) */
      mxw_ndarray *in[2] = {c_arr(dt, 2, SHP(2, 4), A), c_arr(dt, 1, SHP(4), B)};
      mxw_ndarray *y = c_run1(c->bname, in, 2, NULL);
      check(c->bname, y, yw, 8, tol);
      mxw_ndarray_free(y);
      mxw_ndarray *g = c_grad(c->bname, in, 2, 0, 0, head, NULL);
      check(c->bname, g, dA, 8, gtol);
      mxw_ndarray_free(g);
      g = c_grad(c->bname, in, 2, 1, 0, head, NULL);
      check(c->bname, g, dB, 4, gtol);
      mxw_ndarray_free(g);
      mxw_ndarray_free(in[1]);
      /* elemwise: same shapes (and the broadcast op on equal shapes) */
      in[1] = c_arr(dt, 2, SHP(2, 4), B8);
      for (int form = 0; form < 2; form++) {
        const char *name = form ? c->bname : c->ename;
        y = c_run1(name, in, 2, NULL);
        check(name, y, yw, 8, tol);
        mxw_ndarray_free(y);
        g = c_grad(name, in, 2, 0, 0, head, NULL);
        check(name, g, dA, 8, gtol);
        mxw_ndarray_free(g);
        g = c_grad(name, in, 2, 1, 0, head, NULL);
        check(name, g, dB8, 8, gtol);
        mxw_ndarray_free(g);
      }
      mxw_ndarray_free(in[1]);
      /* scalar forms, scalar 1.75 */
      y = c_run1(c->sname, in, 1, KV("scalar", "1.75"));
      check(c->sname, y, ys, 8, tol);
      mxw_ndarray_free(y);
      g = c_grad(c->sname, in, 1, 0, 0, head, KV("scalar", "1.75", "is_int", "False"));
      check(c->sname, g, dS, 8, gtol);
      mxw_ndarray_free(g);
      if (c->rname) {
        mxw_ndarray *x = c_arr(dt, 2, SHP(2, 4), k_pa);
        y = c_run1(c->rname, &x, 1, KV("scalar", "1.75"));
        check(c->rname, y, yr, 8, tol);
        mxw_ndarray_free(y);
        g = c_grad(c->rname, &x, 1, 0, 0, head, KV("scalar", "1.75"));
        check(c->rname, g, dR, 8, gtol);
        mxw_ndarray_free(g);
        mxw_ndarray_free(x);
      }
      mxw_ndarray_free(in[0]);
    }
  }
}

/* Integer math on every width: division truncates and x / 0 = 0, mod takes the divisor's sign
 * and x mod 0 = 0, power and hypot through double (exact values chosen). */
static void test_integer_dtypes(void **state) {
  (void)state;
  static const int dts[] = {MXW_INT8, MXW_INT16, MXW_INT32, MXW_INT64, MXW_UINT8, MXW_UINT16, MXW_UINT32, MXW_UINT64};
  static const struct {
    const char *op;
    double a[4], b[4], want[4];
  } k[] = {
      {"elemwise_div", {7, 9, 2, 5}, {2, 0, 3, 5}, {3, 0, 0, 1}},
      {"_mod", {7, 9, 2, 5}, {2, 0, 3, 5}, {1, 0, 2, 0}},
      {"_power", {2, 3, 1, 0}, {3, 2, 5, 0}, {8, 9, 1, 1}},
      {"_hypot", {3, 9, 6, 5}, {4, 0, 8, 12}, {5, 9, 10, 13}},
      {"_maximum", {7, 9, 2, 5}, {2, 0, 3, 5}, {7, 9, 3, 5}},
      {"_minimum", {7, 9, 2, 5}, {2, 0, 3, 5}, {2, 0, 2, 5}},
      {"elemwise_mul", {7, 9, 2, 5}, {2, 0, 3, 5}, {14, 0, 6, 25}},
      {"elemwise_add", {7, 9, 2, 5}, {2, 0, 3, 5}, {9, 9, 5, 10}},
      {"_greater", {7, 9, 2, 5}, {2, 0, 3, 5}, {1, 1, 0, 0}},
  };
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
      mxw_ndarray *in[2] = {c_arr(dts[t], 1, SHP(4), k[i].a), c_arr(dts[t], 1, SHP(4), k[i].b)};
      mxw_ndarray *y = c_run1(k[i].op, in, 2, NULL);
      assert_int_equal(mxw_ndarray_dtype(y), dts[t]);
      check(k[i].op, y, k[i].want, 4, 0);
      mxw_ndarray_free(y);
      c_free(2, in);
    }
  /* signed: truncation toward zero, the divisor's sign for mod, saturating power */
  mxw_ndarray *in[2] = {c_arr(MXW_INT32, 1, SHP(4), DV(-7, 7, -7, 2)), c_arr(MXW_INT32, 1, SHP(4), DV(2, -2, -2, 40))};
  mxw_ndarray *y = c_run1("elemwise_div", in, 2, NULL);
  check("int div", y, DV(-3, -3, 3, 0), 4, 0);
  mxw_ndarray_free(y);
  y = c_run1("_mod", in, 2, NULL);
  check("int mod", y, DV(1, -1, -1, 2), 4, 0);
  mxw_ndarray_free(y);
  c_free(2, in);
  in[0] = c_arr(MXW_INT64, 1, SHP(2), DV(2, -2));
  in[1] = c_arr(MXW_INT64, 1, SHP(2), DV(70, 71));
  y = c_run1("_power", in, 2, NULL);
  check("int64 power", y, DV(9223372036854775807.0, -9223372036854775808.0), 2, 1e-15);
  mxw_ndarray_free(y);
  c_free(2, in);
  in[0] = c_arr(MXW_UINT64, 1, SHP(1), DV(2));
  in[1] = c_arr(MXW_UINT64, 1, SHP(1), DV(70));
  y = c_run1("_power", in, 2, NULL);
  check("uint64 power", y, DV(18446744073709551615.0), 1, 1e-15);
  mxw_ndarray_free(y);
  c_free(2, in);
  /* float mod's sign cases and x mod 0 */
  in[0] = c_arr(MXW_FLOAT64, 1, SHP(5), DV(-7, 7, -7, 7, 3));
  in[1] = c_arr(MXW_FLOAT64, 1, SHP(5), DV(2, -2, -2, 2, 0));
  y = c_run1("_mod", in, 2, NULL);
  check("float mod", y, DV(1, -1, -1, 1, 0), 5, 0);
  mxw_ndarray_free(y);
  c_free(2, in);
  /* maximum / minimum keep NaN */
  in[0] = c_arr(MXW_FLOAT64, 1, SHP(2), DV(NAN, 1));
  in[1] = c_arr(MXW_FLOAT64, 1, SHP(2), DV(1, NAN));
  y = c_run1("_minimum", in, 2, NULL);
  c_expect(y, DV(NAN, NAN), 2, 0);
  mxw_ndarray_free(y);
  y = c_run1("broadcast_maximum", in, 2, NULL);
  c_expect(y, DV(NAN, NAN), 2, 0);
  mxw_ndarray_free(y);
  c_free(2, in);
}

static void test_add_n(void **state) {
  (void)state;
  mxw_ndarray *in[3] = {c_arr(MXW_FLOAT32, 1, SHP(3), DV(1, 2, 3)), c_arr(MXW_FLOAT32, 1, SHP(3), DV(10, 20, 30)),
                        c_arr(MXW_FLOAT32, 1, SHP(3), DV(-1, 0.5, 4))};
  mxw_ndarray *y = c_run1("add_n", in, 3, KV("num_args", "3"));
  c_expect(y, DV(10, 22.5, 37), 3, 0);
  mxw_ndarray_free(y);
  y = c_run1("ElementWiseSum", in, 1, KV("num_args", "1"));
  c_expect(y, DV(1, 2, 3), 3, 0);
  mxw_ndarray_free(y);
  for (int w = 0; w < 3; w++) {
    mxw_ndarray *g = c_grad("add_n", in, 3, w, 0, DV(2, -1, 0.5), KV("num_args", "3"));
    c_expect(g, DV(2, -1, 0.5), 3, 0);
    mxw_ndarray_free(g);
  }
  c_bad_params("add_n", KV("num_args", "0"), "num_args must be in [1, 2^31 - 1], got 0");
  c_free(3, in);
}

static void test_shape_errors_and_inference(void **state) {
  (void)state;
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 2, SHP(2, 3), NULL), c_arr(MXW_FLOAT32, 2, SHP(2, 4), NULL)};
  c_fail("broadcast_add", in, 2, NULL, "broadcast");
  c_fail("elemwise_add", in, 2, NULL, "(2, 4)");
  c_free(2, in);
  int32_t out[24];
  /* an unknown dim stays unknown; a rank unknown gives nothing */
  assert_int_equal(c_infer("broadcast_mul", NULL, 2, (const int32_t[]){2, -1, 3, 1, 3}, out), 0);
  assert_int_equal(out[0], 2);
  assert_int_equal(out[1], -1);
  assert_int_equal(out[2], 3);
  assert_int_equal(c_infer("broadcast_mul", NULL, 2, (const int32_t[]){-1, 1, 3}, out), 0);
  assert_int_equal(out[0], -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forward_and_gradients),
      cmocka_unit_test(test_integer_dtypes),
      cmocka_unit_test(test_add_n),
      cmocka_unit_test(test_shape_errors_and_inference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
