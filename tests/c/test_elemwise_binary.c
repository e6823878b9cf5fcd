/* Elementwise binary ops: broadcasting, integer division/mod semantics, scalar ops, add_n, shape
 * errors, and the float32 SIMD rows against plain C arithmetic on every size 1..37 (so every
 * SIMD tail length is hit). Expected values are worked by hand or computed here in plain C. */
#include "mxw_test.h"

/* An array of any dtype from double values. */
static mxw_ndarray *t_array_dt(int ndim, const int32_t *shape, int dtype, const double *vals) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  for (int64_t i = 0; vals && i < (int64_t)mxw_ndarray_size(a); i++)
    mxw_store_f64(mxw_ndarray_data(a), dtype, i, vals[i]);
  return a;
}
static double t_get(mxw_ndarray *a, int64_t i) { return mxw_load_f64(mxw_ndarray_data(a), mxw_ndarray_dtype(a), i); }

static void assert_shape(mxw_ndarray *a, int ndim, const int32_t *dims) {
  int32_t s[MXW_MAX_NDIM];
  assert_int_equal(mxw_ndarray_ndim(a), ndim);
  mxw_ndarray_shape(a, s);
  for (int i = 0; i < ndim; i++) assert_int_equal(s[i], dims[i]);
}

/* Runs a two-input op and returns its output (fails the test on error). */
static mxw_ndarray *run2(const char *op, mxw_ndarray *a, mxw_ndarray *b) {
  mxw_ndarray *ins[2] = {a, b}, *out[1] = {NULL};
  int nout = 1;
  if (t_invoke(op, ins, 2, out, &nout, NULL) != 0) fail_msg("%s: %s", op, mxw_get_last_error());
  return out[0];
}
static mxw_ndarray *run_scalar(const char *op, mxw_ndarray *a, const char *scalar) {
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  if (t_invoke(op, &a, 1, out, &nout, "scalar", scalar, NULL) != 0) fail_msg("%s: %s", op, mxw_get_last_error());
  return out[0];
}

static void test_broadcast_2x1x3_plus_4x1(void **state) {
  (void)state;
  int32_t sl[3] = {2, 1, 3}, sr[2] = {4, 1}, so[3] = {2, 4, 3};
  float l[6] = {1, 2, 3, 4, 5, 6}, r[4] = {10, 20, 30, 40};
  mxw_ndarray *a = t_array(3, sl, l), *b = t_array(2, sr, r);
  mxw_ndarray *y = run2("broadcast_add", a, b);
  assert_shape(y, 3, so);
  /* y[i][j][k] = l[i][0][k] + r[j][0] */
  const float expect[24] = {11, 12, 13, 21, 22, 23, 31, 32, 33, 41, 42, 43,
                            14, 15, 16, 24, 25, 26, 34, 35, 36, 44, 45, 46};
  const float *py = (const float *)mxw_ndarray_data(y);
  for (int i = 0; i < 24; i++) assert_close(py[i], expect[i], 0);
  mxw_ndarray_free(y);
  /* the reverse order and a non-commutative op: r - l */
  y = run2("broadcast_sub", b, a);
  assert_shape(y, 3, so);
  py = (const float *)mxw_ndarray_data(y);
  for (int i = 0; i < 24; i++) assert_close(py[i], 2 * ((i % 12) / 3 + 1) * 10 - expect[i], 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(a);
  mxw_ndarray_free(b);
}

static void test_row_column_and_channel_broadcast(void **state) {
  (void)state;
  /* (2, 3) * (3,), (2, 3) * (2, 1), (2, 2, 1, 2) + (1, 2, 1, 1) */
  int32_t s23[2] = {2, 3}, s3[1] = {3}, s21[2] = {2, 1};
  float x[6] = {1, 2, 3, 4, 5, 6}, row[3] = {1, 10, 100}, col[2] = {2, 3};
  mxw_ndarray *a = t_array(2, s23, x), *r = t_array(1, s3, row), *c = t_array(2, s21, col);
  mxw_ndarray *y = run2("broadcast_mul", a, r);
  const float e1[6] = {1, 20, 300, 4, 50, 600};
  for (int i = 0; i < 6; i++) assert_close(((float *)mxw_ndarray_data(y))[i], e1[i], 0);
  mxw_ndarray_free(y);
  y = run2("broadcast_mul", a, c);
  const float e2[6] = {2, 4, 6, 12, 15, 18};
  for (int i = 0; i < 6; i++) assert_close(((float *)mxw_ndarray_data(y))[i], e2[i], 0);
  mxw_ndarray_free(y);
  int32_t s4[4] = {2, 2, 1, 2}, sb[4] = {1, 2, 1, 1};
  float v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, bias[2] = {100, 200};
  mxw_ndarray *n = t_array(4, s4, v), *bb = t_array(4, sb, bias);
  y = run2("broadcast_add", n, bb);
  const float e3[8] = {101, 102, 203, 204, 105, 106, 207, 208};
  for (int i = 0; i < 8; i++) assert_close(((float *)mxw_ndarray_data(y))[i], e3[i], 0);
  assert_shape(y, 4, s4);
  mxw_ndarray_free(y);
  mxw_ndarray_free(a);
  mxw_ndarray_free(r);
  mxw_ndarray_free(c);
  mxw_ndarray_free(n);
  mxw_ndarray_free(bb);
}

static void test_int32_div_mod(void **state) {
  (void)state;
  int32_t s[1] = {8};
  const double a[8] = {7, -7, 7, -7, 5, -2147483648.0, 0, 3};
  const double b[8] = {2, 2, -2, -2, 0, -1, 5, 0};
  mxw_ndarray *x = t_array_dt(1, s, MXW_INT32, a), *y = t_array_dt(1, s, MXW_INT32, b);
  mxw_ndarray *q = run2("broadcast_div", x, y);
  assert_int_equal(mxw_ndarray_dtype(q), MXW_INT32);
  /* truncation toward zero; x / 0 is 0; INT_MIN / -1 wraps */
  const int32_t eq[8] = {3, -3, -3, 3, 0, INT32_MIN, 0, 0};
  for (int i = 0; i < 8; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(q))[i], eq[i]);
  mxw_ndarray *m = run2("_mod", x, y);
  /* the sign of the divisor; x mod 0 is 0 */
  const int32_t em[8] = {1, 1, -1, -1, 0, 0, 0, 0};
  for (int i = 0; i < 8; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(m))[i], em[i]);
  mxw_ndarray_free(q);
  mxw_ndarray_free(m);
  /* int32 add/mul wrap around instead of trapping */
  const double big[1] = {2147483647.0}, one[1] = {2};
  int32_t s1[1] = {1};
  mxw_ndarray *p = t_array_dt(1, s1, MXW_INT32, big), *o = t_array_dt(1, s1, MXW_INT32, one);
  mxw_ndarray *w = run2("elemwise_add", p, o);
  assert_int_equal(((int32_t *)mxw_ndarray_data(w))[0], -2147483647);
  mxw_ndarray_free(w);
  w = run2("elemwise_mul", p, o);
  assert_int_equal(((int32_t *)mxw_ndarray_data(w))[0], -2);
  mxw_ndarray_free(w);
  mxw_ndarray_free(p);
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
  mxw_ndarray_free(y);
}

static void test_float_mod_and_power(void **state) {
  (void)state;
  int32_t s[1] = {6};
  float a[6] = {-7.5f, 7.5f, 5.f, -7.5f, 3.f, 0.f}, b[6] = {2.f, -2.f, 0.f, -2.f, 1.5f, 2.f};
  mxw_ndarray *x = t_array(1, s, a), *y = t_array(1, s, b);
  mxw_ndarray *m = run2("broadcast_mod", x, y);
  const float em[6] = {0.5f, -0.5f, 0.f, -1.5f, 0.f, 0.f};
  for (int i = 0; i < 6; i++) assert_close(((float *)mxw_ndarray_data(m))[i], em[i], 0);
  mxw_ndarray_free(m);
  float pa[3] = {2.f, 9.f, 4.f}, pb[3] = {10.f, 0.5f, -1.f};
  int32_t s3[1] = {3};
  mxw_ndarray *u = t_array(1, s3, pa), *v = t_array(1, s3, pb);
  mxw_ndarray *pw = run2("_power", u, v);
  assert_close(((float *)mxw_ndarray_data(pw))[0], 1024, 0);
  assert_close(((float *)mxw_ndarray_data(pw))[1], 3, 1e-7);
  assert_close(((float *)mxw_ndarray_data(pw))[2], 0.25, 0);
  mxw_ndarray_free(pw);
  pw = run2("broadcast_hypot", u, v); /* sqrt(4 + 100), sqrt(81.25), sqrt(17) */
  assert_close(((float *)mxw_ndarray_data(pw))[0], sqrt(104.0), 1e-6);
  assert_close(((float *)mxw_ndarray_data(pw))[1], sqrt(81.25), 1e-6);
  assert_close(((float *)mxw_ndarray_data(pw))[2], sqrt(17.0), 1e-6);
  mxw_ndarray_free(pw);
  mxw_ndarray_free(u);
  mxw_ndarray_free(v);
  mxw_ndarray_free(x);
  mxw_ndarray_free(y);
}

/* maximum/minimum: `a > b ? a : b` (so +0 vs -0 picks rhs), and NaN on either side gives NaN. */
static void test_maximum_minimum_nan_and_zero_signs(void **state) {
  (void)state;
  int32_t s[1] = {5};
  float a[5] = {NAN, 1.f, 0.f, -0.f, 3.f}, b[5] = {1.f, NAN, -0.f, 0.f, -3.f};
  mxw_ndarray *x = t_array(1, s, a), *y = t_array(1, s, b);
  mxw_ndarray *mx = run2("broadcast_maximum", x, y), *mn = run2("_minimum", x, y);
  const float *p = (const float *)mxw_ndarray_data(mx), *q = (const float *)mxw_ndarray_data(mn);
  assert_true(isnan(p[0]) && isnan(p[1]) && isnan(q[0]) && isnan(q[1]));
  assert_true(p[2] == 0.f && signbit(p[2]));  /* 0 > -0 is false: rhs (-0) */
  assert_true(p[3] == 0.f && !signbit(p[3])); /* rhs (+0) */
  assert_true(q[2] == 0.f && signbit(q[2]));
  assert_true(q[3] == 0.f && !signbit(q[3]));
  assert_close(p[4], 3, 0);
  assert_close(q[4], -3, 0);
  mxw_ndarray_free(mx);
  mxw_ndarray_free(mn);
  mxw_ndarray_free(x);
  mxw_ndarray_free(y);
}

/* The float32 SIMD rows (add, sub, mul, div, maximum, minimum) against plain C float arithmetic on
 * every length 1..37, for same-shape, lhs-scalar and rhs-scalar rows, NaNs and signed zeros included. */
static float ref_f32(int op, float a, float b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return a != a ? a : (a > b ? a : b);
    default: return a != a ? a : (a < b ? a : b);
  }
}
static int same_bits(float x, float y) { return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0; }

static void test_f32_simd_rows_match_scalar(void **state) {
  (void)state;
  static const char *const ops[6] = {"broadcast_add", "broadcast_sub",     "broadcast_mul",
                                     "broadcast_div", "broadcast_maximum", "broadcast_minimum"};
  float a[37], b[37];
  for (int i = 0; i < 37; i++) {
    a[i] = (float)((i * 37) % 11) * 0.37f - 1.7f;
    b[i] = (float)((i * 13) % 7) * 0.61f - 1.3f;
  }
  a[3] = NAN;
  b[8] = NAN;
  a[5] = 0.f;
  b[5] = -0.f;
  a[6] = -0.f;
  b[6] = 0.f;
  for (int op = 0; op < 6; op++) {
    for (int n = 1; n <= 37; n++) {
      int32_t sn[1] = {n}, s1[1] = {1};
      mxw_ndarray *x = t_array(1, sn, a), *y = t_array(1, sn, b);
      mxw_ndarray *xs = t_array(1, s1, &a[2]), *ys = t_array(1, s1, &b[4]);
      mxw_ndarray *outs[3] = {run2(ops[op], x, y), run2(ops[op], xs, y), run2(ops[op], x, ys)};
      for (int k = 0; k < 3; k++) {
        const float *p = (const float *)mxw_ndarray_data(outs[k]);
        for (int i = 0; i < n; i++) {
          float l = k == 1 ? a[2] : a[i], r = k == 2 ? b[4] : b[i], e = ref_f32(op, l, r);
          if (!same_bits(p[i], e)) fail_msg("%s n=%d form %d index %d: %g vs %g", ops[op], n, k, i, p[i], e);
        }
        mxw_ndarray_free(outs[k]);
      }
      mxw_ndarray_free(x);
      mxw_ndarray_free(y);
      mxw_ndarray_free(xs);
      mxw_ndarray_free(ys);
    }
  }
}

static void test_comparisons_and_logic_keep_dtype(void **state) {
  (void)state;
  int32_t s[1] = {4};
  const double a[4] = {0, 1, 2, -3}, b[4] = {0, 2, 2, 0};
  mxw_ndarray *x = t_array_dt(1, s, MXW_INT32, a), *y = t_array_dt(1, s, MXW_INT32, b);
  struct {
    const char *op;
    double e[4];
  } cases[] = {
      {"broadcast_equal", {1, 0, 1, 0}},       {"_not_equal", {0, 1, 0, 1}},
      {"broadcast_greater", {0, 0, 0, 0}},     {"_greater_equal", {1, 0, 1, 0}},
      {"broadcast_lesser", {0, 1, 0, 1}},      {"_lesser_equal", {1, 1, 1, 1}},
      {"broadcast_logical_and", {0, 1, 1, 0}}, {"_logical_or", {0, 1, 1, 1}},
      {"broadcast_logical_xor", {0, 0, 0, 1}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    mxw_ndarray *z = run2(cases[c].op, x, y);
    assert_int_equal(mxw_ndarray_dtype(z), MXW_INT32);
    for (int i = 0; i < 4; i++)
      if (t_get(z, i) != cases[c].e[i]) fail_msg("%s index %d: %g vs %g", cases[c].op, i, t_get(z, i), cases[c].e[i]);
    mxw_ndarray_free(z);
  }
  mxw_ndarray_free(x);
  mxw_ndarray_free(y);
}

static void test_narrow_dtypes(void **state) {
  (void)state;
  int32_t s[1] = {2};
  const double u8a[2] = {250, 3}, u8b[2] = {10, 5};
  mxw_ndarray *x = t_array_dt(1, s, MXW_UINT8, u8a), *y = t_array_dt(1, s, MXW_UINT8, u8b);
  mxw_ndarray *z = run2("broadcast_add", x, y);
  assert_int_equal(mxw_ndarray_dtype(z), MXW_UINT8);
  assert_close(t_get(z, 0), 4, 0); /* 260 wraps to 4 */
  assert_close(t_get(z, 1), 8, 0);
  mxw_ndarray_free(z);
  z = run2("broadcast_sub", x, y); /* 240, 3 - 5 wraps to 254 */
  assert_close(t_get(z, 0), 240, 0);
  assert_close(t_get(z, 1), 254, 0);
  mxw_ndarray_free(z);
  mxw_ndarray_free(x);
  mxw_ndarray_free(y);
  const double i8a[2] = {127, -128}, i8b[2] = {1, -1};
  x = t_array_dt(1, s, MXW_INT8, i8a);
  y = t_array_dt(1, s, MXW_INT8, i8b);
  z = run2("broadcast_add", x, y);
  assert_close(t_get(z, 0), -128, 0);
  assert_close(t_get(z, 1), 127, 0);
  mxw_ndarray_free(z);
  mxw_ndarray_free(x);
  mxw_ndarray_free(y);
  const double ha[2] = {1.5, -2}, hb[2] = {2.25, 0.5};
  x = t_array_dt(1, s, MXW_FLOAT16, ha);
  y = t_array_dt(1, s, MXW_FLOAT16, hb);
  z = run2("broadcast_mul", x, y);
  assert_int_equal(mxw_ndarray_dtype(z), MXW_FLOAT16);
  assert_close(t_get(z, 0), 3.375, 0);
  assert_close(t_get(z, 1), -1, 0);
  mxw_ndarray_free(z);
  mxw_ndarray_free(x);
  mxw_ndarray_free(y);
  const double ba[2] = {1, 0}, bb[2] = {1, 1};
  x = t_array_dt(1, s, MXW_BOOL, ba);
  y = t_array_dt(1, s, MXW_BOOL, bb);
  z = run2("broadcast_add", x, y); /* bool(1 + 1) is true */
  assert_int_equal(((uint8_t *)mxw_ndarray_data(z))[0], 1);
  assert_int_equal(((uint8_t *)mxw_ndarray_data(z))[1], 1);
  mxw_ndarray_free(z);
  mxw_ndarray_free(x);
  mxw_ndarray_free(y);
  /* int64 beyond 2^53 stays exact */
  const double lb[1] = {1};
  int32_t s1[1] = {1};
  x = t_array_dt(1, s1, MXW_INT64, NULL);
  ((int64_t *)mxw_ndarray_data(x))[0] = 9007199254740993LL;
  y = t_array_dt(1, s1, MXW_INT64, lb);
  z = run2("broadcast_add", x, y);
  assert_true(((int64_t *)mxw_ndarray_data(z))[0] == 9007199254740994LL);
  mxw_ndarray_free(z);
  z = run2("broadcast_mod", x, x);
  assert_true(((int64_t *)mxw_ndarray_data(z))[0] == 0);
  mxw_ndarray_free(z);
  mxw_ndarray_free(x);
  mxw_ndarray_free(y);
}

static void test_scalar_ops(void **state) {
  (void)state;
  int32_t s[1] = {4};
  const double v[4] = {7, -7, 2, 0};
  mxw_ndarray *x = t_array_dt(1, s, MXW_INT32, v);
  /* the scalar is converted to int32 first: 2.7 -> 2 */
  mxw_ndarray *y = run_scalar("_div_scalar", x, "2.7");
  assert_int_equal(mxw_ndarray_dtype(y), MXW_INT32);
  const int32_t e1[4] = {3, -3, 1, 0};
  for (int i = 0; i < 4; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(y))[i], e1[i]);
  mxw_ndarray_free(y);
  y = run_scalar("_rdiv_scalar", x, "14"); /* 14 / x, 14 / 0 -> 0 */
  const int32_t e2[4] = {2, -2, 7, 0};
  for (int i = 0; i < 4; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(y))[i], e2[i]);
  mxw_ndarray_free(y);
  y = run_scalar("_rmod_scalar", x, "5"); /* 5 mod x */
  const int32_t e3[4] = {5, -2, 1, 0};
  for (int i = 0; i < 4; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(y))[i], e3[i]);
  mxw_ndarray_free(y);
  y = run_scalar("_rminus_scalar", x, "1");
  const int32_t e4[4] = {-6, 8, -1, 1};
  for (int i = 0; i < 4; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(y))[i], e4[i]);
  mxw_ndarray_free(y);
  y = run_scalar("_rpower_scalar", x, "2"); /* 2^x: 2^-7 truncates to 0 */
  const int32_t e5[4] = {128, 0, 4, 1};
  for (int i = 0; i < 4; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(y))[i], e5[i]);
  mxw_ndarray_free(y);
  y = run_scalar("_greater_equal_scalar", x, "2");
  const int32_t e6[4] = {1, 0, 1, 0};
  for (int i = 0; i < 4; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(y))[i], e6[i]);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
  /* float32 with the default scalar (1) and explicit is_int */
  float f[3] = {0.5f, -2.f, 3.f};
  int32_t s3[1] = {3};
  mxw_ndarray *fx = t_array(1, s3, f), *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_PlusScalar", &fx, 1, out, &nout, NULL), 0);
  const float e7[3] = {1.5f, -1.f, 4.f};
  for (int i = 0; i < 3; i++) assert_close(((float *)mxw_ndarray_data(out[0]))[i], e7[i], 0);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  assert_int_equal(t_invoke("_mod_scalar", &fx, 1, out, &nout, "scalar", "-1.5", "is_int", "False", NULL), 0);
  const float e8[3] = {-1.f, -0.5f, 0.f};
  for (int i = 0; i < 3; i++) assert_close(((float *)mxw_ndarray_data(out[0]))[i], e8[i], 0);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(fx);
}

static void test_add_n(void **state) {
  (void)state;
  int32_t s[2] = {2, 2};
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, c[4] = {100, 200, 300, 400};
  mxw_ndarray *ins[3] = {t_array(2, s, a), t_array(2, s, b), t_array(2, s, c)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("add_n", ins, 3, out, &nout, "num_args", "3", NULL), 0);
  const float e[4] = {111, 222, 333, 444};
  for (int i = 0; i < 4; i++) assert_close(((float *)mxw_ndarray_data(out[0]))[i], e[i], 0);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  assert_int_equal(t_invoke("ElementWiseSum", ins, 1, out, &nout, "num_args", "1", NULL), 0);
  for (int i = 0; i < 4; i++) assert_close(((float *)mxw_ndarray_data(out[0]))[i], a[i], 0);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  /* errors: count mismatch, num_args 0, a shape mismatch */
  assert_int_equal(t_invoke("add_n", ins, 2, out, &nout, "num_args", "3", NULL), -1);
  assert_error_contains("Operator add_n");
  assert_error_contains("expected 3 inputs, got 2");
  assert_int_equal(t_invoke("add_n", ins, 0, out, &nout, "num_args", "0", NULL), -1);
  assert_error_contains("num_args");
  assert_int_equal(t_invoke("add_n", ins, 2, out, &nout, NULL), -1);
  assert_error_contains("required attribute 'num_args'");
  int32_t s3[1] = {3};
  mxw_ndarray *odd = t_array(1, s3, a), *mixed[2] = {ins[0], odd};
  assert_int_equal(t_invoke("add_n", mixed, 2, out, &nout, "num_args", "2", NULL), -1);
  assert_error_contains("(2, 2)");
  assert_error_contains("(3,)");
  assert_null(out[0]);
  mxw_ndarray_free(odd);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(ins[i]);
}

static void test_shape_errors_and_inference(void **state) {
  (void)state;
  int32_t s23[2] = {2, 3}, s43[2] = {4, 3}, s32[2] = {3, 2};
  mxw_ndarray *a = t_array(2, s23, NULL), *b = t_array(2, s43, NULL), *c = t_array(2, s32, NULL);
  mxw_ndarray *ins[2] = {a, b}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("broadcast_add", ins, 2, out, &nout, NULL), -1);
  assert_error_contains("Operator broadcast_add");
  assert_error_contains("lhs (2, 3)");
  assert_error_contains("rhs (4, 3)");
  assert_error_contains("cannot be broadcast");
  assert_null(out[0]);
  ins[1] = c;
  assert_int_equal(t_invoke("elemwise_add", ins, 2, out, &nout, NULL), -1);
  assert_error_contains("Operator elemwise_add");
  assert_error_contains("lhs (2, 3) and rhs (3, 2)");
  /* same-shape ops do not broadcast, even when broadcasting would be possible */
  int32_t s13[2] = {1, 3};
  mxw_ndarray *d = t_array(2, s13, NULL);
  ins[1] = d;
  assert_int_equal(t_invoke("_Plus", ins, 2, out, &nout, NULL), -1);
  assert_error_contains("must be identical");
  /* dtype mismatch */
  mxw_ndarray *i32 = t_array_dt(2, s23, MXW_INT32, NULL);
  ins[1] = i32;
  assert_int_equal(t_invoke("broadcast_mul", ins, 2, out, &nout, NULL), -1);
  assert_error_contains("dtype");
  /* the runtime still works */
  ins[1] = d;
  assert_int_equal(t_invoke("broadcast_add", ins, 2, out, &nout, NULL), 0);
  assert_shape(out[0], 2, s23);
  mxw_ndarray_free(out[0]);

  /* mxw_op_infer_shape: (5, 1, 3) with (4, 1) -> (5, 4, 3); an unknown rank infers nothing */
  int op = mxw_op_find("broadcast_power");
  mxw_params *p = NULL;
  assert_int_equal(mxw_params_create(op, 0, NULL, NULL, &p), 0);
  int32_t packed[] = {3, 5, 1, 3, 2, 4, 1}, res[1 + MXW_MAX_NDIM];
  assert_int_equal(mxw_op_infer_shape(p, 2, packed, res), 0);
  assert_int_equal(res[0], 3);
  assert_int_equal(res[1], 5);
  assert_int_equal(res[2], 4);
  assert_int_equal(res[3], 3);
  int32_t unknown[] = {2, 2, 3, -1};
  assert_int_equal(mxw_op_infer_shape(p, 2, unknown, res), 0);
  assert_int_equal(res[0], -1);
  int32_t bad[] = {1, 5, 1, 4};
  assert_int_equal(mxw_op_infer_shape(p, 2, bad, res), -1);
  assert_error_contains("Operator broadcast_power");
  mxw_params_free(p);

  /* empty arrays broadcast to an empty output */
  int32_t s03[2] = {0, 3};
  mxw_ndarray *e = t_array(2, s03, NULL);
  ins[0] = e;
  ins[1] = d;
  out[0] = NULL;
  assert_int_equal(t_invoke("broadcast_add", ins, 2, out, &nout, NULL), 0);
  assert_shape(out[0], 2, s03);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(e);
  mxw_ndarray_free(i32);
  mxw_ndarray_free(a);
  mxw_ndarray_free(b);
  mxw_ndarray_free(c);
  mxw_ndarray_free(d);
}

static void test_rank0_and_large_general_case(void **state) {
  (void)state;
  /* rank-0 with rank-0 */
  float v1 = 3.f, v2 = 4.f;
  mxw_ndarray *a = t_array(0, NULL, &v1), *b = t_array(0, NULL, &v2);
  mxw_ndarray *y = run2("broadcast_hypot", a, b);
  assert_int_equal(mxw_ndarray_ndim(y), 0);
  assert_close(((float *)mxw_ndarray_data(y))[0], 5, 1e-7);
  mxw_ndarray_free(y);
  mxw_ndarray_free(a);
  mxw_ndarray_free(b);
  /* (3, 1, 4, 1) - (1, 5, 1, 2): no dims merge, every stride pattern; checked by index math */
  int32_t sl[4] = {3, 1, 4, 1}, sr[4] = {1, 5, 1, 2};
  float l[12], r[10];
  for (int i = 0; i < 12; i++) l[i] = (float)(i * 100);
  for (int i = 0; i < 10; i++) r[i] = (float)i;
  a = t_array(4, sl, l);
  b = t_array(4, sr, r);
  y = run2("broadcast_sub", a, b);
  const float *p = (const float *)mxw_ndarray_data(y);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 5; j++)
      for (int k = 0; k < 4; k++)
        for (int m = 0; m < 2; m++) assert_close(p[((i * 5 + j) * 4 + k) * 2 + m], l[i * 4 + k] - r[j * 2 + m], 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(a);
  mxw_ndarray_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_broadcast_2x1x3_plus_4x1),
      cmocka_unit_test(test_row_column_and_channel_broadcast),
      cmocka_unit_test(test_int32_div_mod),
      cmocka_unit_test(test_float_mod_and_power),
      cmocka_unit_test(test_maximum_minimum_nan_and_zero_signs),
      cmocka_unit_test(test_f32_simd_rows_match_scalar),
      cmocka_unit_test(test_comparisons_and_logic_keep_dtype),
      cmocka_unit_test(test_narrow_dtypes),
      cmocka_unit_test(test_scalar_ops),
      cmocka_unit_test(test_add_n),
      cmocka_unit_test(test_shape_errors_and_inference),
      cmocka_unit_test(test_rank0_and_large_general_case),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
