/* Creation ops (_zeros, _ones, _full, _arange, _linspace, _eye), the random samplers, Cast,
 * amp_cast and clip. Expected values are worked by hand (comments show the arithmetic). */
#include "mxw_test.h"

/* Runs a zero-input op; fails the test on error. */
#define RUN0(name, ...)                                                                                 \
  ({                                                                                                    \
    mxw_ndarray *o_[1] = {NULL};                                                                        \
    int n_ = 1;                                                                                         \
    if (t_invoke(name, NULL, 0, o_, &n_, __VA_ARGS__, NULL) != 0) fail_msg("%s", mxw_get_last_error()); \
    o_[0];                                                                                              \
  })
/* Runs a one-input op; fails the test on error. */
#define RUN1(name, x, ...)                                                                            \
  ({                                                                                                  \
    mxw_ndarray *i_[1] = {x}, *o_[1] = {NULL};                                                        \
    int n_ = 1;                                                                                       \
    if (t_invoke(name, i_, 1, o_, &n_, __VA_ARGS__, NULL) != 0) fail_msg("%s", mxw_get_last_error()); \
    o_[0];                                                                                            \
  })

static void assert_shape(const mxw_ndarray *a, int ndim, const int32_t *dims) {
  int32_t s[MXW_MAX_NDIM];
  assert_int_equal(mxw_ndarray_ndim(a), ndim);
  mxw_ndarray_shape(a, s);
  for (int i = 0; i < ndim; i++) assert_int_equal(s[i], dims[i]);
}

static void assert_f32(const mxw_ndarray *a, int n, const float *expected) {
  assert_int_equal(mxw_ndarray_dtype(a), MXW_FLOAT32);
  assert_int_equal((int)mxw_ndarray_size(a), n);
  const float *v = (const float *)mxw_ndarray_data(a);
  for (int i = 0; i < n; i++) assert_close(v[i], expected[i], 1e-7);
}

static mxw_ndarray *typed_array(int n, int dtype) {
  mxw_ndarray *a = NULL;
  int32_t shape[1] = {n};
  if (mxw_ndarray_create(1, shape, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  return a;
}

static void test_arange(void **state) {
  (void)state;
  mxw_ndarray *a = RUN0("_arange", "start", "0", "stop", "5", "step", "2");
  assert_shape(a, 1, (int32_t[]){3}); /* ceil((5 - 0) / 2) = 3 */
  assert_f32(a, 3, (float[]){0, 2, 4});
  mxw_ndarray_free(a);

  a = RUN0("_arange", "start", "3", "repeat", "2"); /* stop None: [0, 3), each twice */
  assert_f32(a, 6, (float[]){0, 0, 1, 1, 2, 2});
  mxw_ndarray_free(a);

  a = RUN0("_npi_arange", "start", "5", "stop", "1", "step", "-1.5"); /* ceil(-4 / -1.5) = 3 */
  assert_f32(a, 3, (float[]){5, 3.5, 2});
  mxw_ndarray_free(a);

  a = RUN0("_arange", "start", "1", "stop", "4", "dtype", "int32");
  assert_int_equal(mxw_ndarray_dtype(a), MXW_INT32);
  const int32_t *iv = (const int32_t *)mxw_ndarray_data(a);
  assert_int_equal(iv[0], 1);
  assert_int_equal(iv[2], 3);
  mxw_ndarray_free(a);

  /* int64 with a fractional start: start is truncated to 2 first, as static_cast<DType> does;
   * the length still comes from the real numbers: ceil((5 - 2.5) / 1) = 3 */
  a = RUN0("_arange", "start", "2.5", "stop", "5", "dtype", "int64");
  const int64_t *lv = (const int64_t *)mxw_ndarray_data(a);
  assert_int_equal(mxw_ndarray_size(a), 3);
  assert_int_equal(lv[0], 2);
  assert_int_equal(lv[2], 4);
  mxw_ndarray_free(a);

  mxw_ndarray *o[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("_arange", NULL, 0, o, &n, "start", "0", "stop", "3", "step", "0", NULL), -1);
  assert_error_contains("Operator _arange");
  assert_error_contains("step=0");
  assert_int_equal(t_invoke("_arange", NULL, 0, o, &n, "start", "5", "stop", "1", NULL), -1);
  assert_error_contains("invalid range");
  assert_int_equal(t_invoke("_arange", NULL, 0, o, &n, "start", "0", "stop", "3", "repeat", "0", NULL), -1);
  assert_error_contains("repeat");
  assert_null(o[0]);
  /* the next call works */
  a = RUN0("_arange", "start", "2");
  assert_f32(a, 2, (float[]){0, 1});
  mxw_ndarray_free(a);
}

static void test_fills(void **state) {
  (void)state;
  mxw_ndarray *a = RUN0("_zeros", "shape", "(2, 3)");
  assert_shape(a, 2, (int32_t[]){2, 3});
  assert_f32(a, 6, (float[]){0, 0, 0, 0, 0, 0});
  mxw_ndarray_free(a);

  a = RUN0("_npi_ones", "shape", "(3,)", "dtype", "int32", "ctx", "cpu(0)");
  assert_int_equal(mxw_ndarray_dtype(a), MXW_INT32);
  for (int i = 0; i < 3; i++) assert_int_equal(((const int32_t *)mxw_ndarray_data(a))[i], 1);
  mxw_ndarray_free(a);

  /* 7 = 1.75 * 2^2: half exponent 2 + 15 = 17 (0x4400), mantissa 0.75 * 1024 = 0x300 */
  a = RUN0("_full", "shape", "(5,)", "value", "7", "dtype", "float16");
  for (int i = 0; i < 5; i++) assert_int_equal(((const uint16_t *)mxw_ndarray_data(a))[i], 0x4700);
  mxw_ndarray_free(a);

  a = RUN0("_npi_full", "shape", "(2, 2)", "value", "-2.9", "dtype", "int32"); /* truncates to -2 */
  for (int i = 0; i < 4; i++) assert_int_equal(((const int32_t *)mxw_ndarray_data(a))[i], -2);
  mxw_ndarray_free(a);

  a = RUN0("_full", "shape", "(3,)", "value", "0.5", "dtype", "float64");
  for (int i = 0; i < 3; i++) assert_close(((const double *)mxw_ndarray_data(a))[i], 0.5, 0);
  mxw_ndarray_free(a);

  a = RUN0("_zeros", "shape", "(4,)", "dtype", "int64");
  for (int i = 0; i < 4; i++) assert_int_equal(((const int64_t *)mxw_ndarray_data(a))[i], 0);
  mxw_ndarray_free(a);

  mxw_ndarray *o[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("_full", NULL, 0, o, &n, "shape", "(2,)", NULL), -1);
  assert_error_contains("Operator _full");
  assert_error_contains("'value'");
  /* legacy shapes: () and 0 dims are "unknown", which an eager call cannot resolve */
  assert_int_equal(t_invoke("_zeros", NULL, 0, o, &n, NULL), -1);
  assert_error_contains("Operator _zeros");
  assert_int_equal(t_invoke("_zeros", NULL, 0, o, &n, "shape", "(2, -1)", NULL), -1);
  assert_error_contains("negative");
  assert_int_equal(t_invoke("_ones", NULL, 0, o, &n, "shape", "(2,)", "dtype", "float99", NULL), -1);
  assert_error_contains("float99");
  assert_null(o[0]);
}

static void test_linspace_eye(void **state) {
  (void)state;
  mxw_ndarray *a = RUN0("_linspace", "start", "0", "stop", "1", "num", "5");
  assert_f32(a, 5, (float[]){0, 0.25f, 0.5f, 0.75f, 1});
  mxw_ndarray_free(a);
  a = RUN0("_npi_linspace", "start", "0", "stop", "1", "num", "5", "endpoint", "False");
  assert_f32(a, 5, (float[]){0, 0.2f, 0.4f, 0.6f, 0.8f});
  mxw_ndarray_free(a);
  a = RUN0("_linspace", "start", "3", "stop", "9", "num", "1"); /* a single value: start */
  assert_f32(a, 1, (float[]){3});
  mxw_ndarray_free(a);

  a = RUN0("_eye", "N", "3", "M", "4", "k", "1");
  assert_shape(a, 2, (int32_t[]){3, 4});
  assert_f32(a, 12, (float[]){0, 1, 0, 0, /**/ 0, 0, 1, 0, /**/ 0, 0, 0, 1});
  mxw_ndarray_free(a);
  a = RUN0("_eye", "N", "3", "k", "-2", "dtype", "int32"); /* only (2, 0) is on diagonal -2 */
  const int32_t *e = (const int32_t *)mxw_ndarray_data(a);
  for (int i = 0; i < 9; i++) assert_int_equal(e[i], i == 6 ? 1 : 0);
  mxw_ndarray_free(a);
  a = RUN0("_eye", "N", "2", "k", "5"); /* the diagonal misses the matrix */
  assert_f32(a, 4, (float[]){0, 0, 0, 0});
  mxw_ndarray_free(a);

  mxw_ndarray *o[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("_linspace", NULL, 0, o, &n, "start", "0", "stop", "1", "num", "-1", NULL), -1);
  assert_error_contains("num");
  assert_int_equal(t_invoke("_eye", NULL, 0, o, &n, "N", "-2", NULL), -1);
  assert_error_contains("Operator _eye");
}

static void test_random(void **state) {
  (void)state;
  mxw_random_seed(42);
  mxw_ndarray *a = RUN0("_random_uniform", "low", "-2", "high", "3", "shape", "(1001,)");
  mxw_random_seed(42);
  mxw_ndarray *b = RUN0("random_uniform", "low", "-2", "high", "3", "shape", "(1001,)");
  const float *va = (const float *)mxw_ndarray_data(a), *vb = (const float *)mxw_ndarray_data(b);
  double sum = 0;
  for (int i = 0; i < 1001; i++) {
    assert_true(va[i] >= -2.f && va[i] <= 3.f);
    assert_true(va[i] == vb[i]); /* same seed, same stream */
    sum += va[i];
  }
  /* mean 0.5, sd of the mean 5 / sqrt(12 * 1001) = 0.0456: 5 sigma is 0.23 */
  assert_true(fabs(sum / 1001 - 0.5) < 0.23);
  mxw_ndarray_free(a);
  mxw_ndarray_free(b);

  a = RUN0("_random_randint", "low", "-3", "high", "4", "shape", "(500,)");
  assert_int_equal(mxw_ndarray_dtype(a), MXW_INT32); /* dtype None -> int32 */
  int seen[7] = {0};
  for (int i = 0; i < 500; i++) {
    int v = ((const int32_t *)mxw_ndarray_data(a))[i];
    assert_true(v >= -3 && v < 4);
    seen[v + 3] = 1;
  }
  for (int k = 0; k < 7; k++) assert_true(seen[k]); /* each value has p = 1 - (6/7)^500 of showing */
  mxw_ndarray_free(a);

  a = RUN0("normal", "loc", "1", "scale", "2", "shape", "(3, 4)", "dtype", "float64");
  assert_int_equal(mxw_ndarray_dtype(a), MXW_FLOAT64);
  assert_shape(a, 2, (int32_t[]){3, 4});
  mxw_ndarray_free(a);

  mxw_ndarray *o[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("_random_uniform", NULL, 0, o, &n, "shape", "(2,)", "dtype", "int32", NULL), -1);
  assert_error_contains("'dtype'");
  assert_int_equal(t_invoke("_random_normal", NULL, 0, o, &n, "shape", "(2,)", "scale", "0", NULL), -1);
  assert_error_contains("scale");
  assert_int_equal(t_invoke("_random_uniform", NULL, 0, o, &n, "low", "2", "high", "1", "shape", "(2,)", NULL), -1);
  assert_error_contains("low");
  assert_int_equal(t_invoke("_random_randint", NULL, 0, o, &n, "low", "0", "high", "0", "shape", "(2,)", NULL), -1);
  assert_error_contains("Operator _random_randint");
}

static void test_cast(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(1, (int32_t[]){6}, (float[]){2.7f, -2.7f, 255.f, 0.1f, 1.0009765625f, -0.5f});
  mxw_ndarray *y = RUN1("Cast", x, "dtype", "int32");
  const int32_t *iv = (const int32_t *)mxw_ndarray_data(y);
  assert_int_equal(mxw_ndarray_dtype(y), MXW_INT32);
  assert_int_equal(iv[0], 2); /* toward zero */
  assert_int_equal(iv[1], -2);
  assert_int_equal(iv[2], 255);
  assert_int_equal(iv[5], 0);
  mxw_ndarray_free(y);

  y = RUN1("cast", x, "dtype", "uint8");
  assert_int_equal(((const uint8_t *)mxw_ndarray_data(y))[2], 255);
  assert_int_equal(((const uint8_t *)mxw_ndarray_data(y))[0], 2);
  mxw_ndarray_free(y);

  /* float16 and back: 0.1 -> nearest half 1638 / 16384 = 0.0999755859375; 1 + 2^-10 is exact */
  y = RUN1("_npx_cast", x, "dtype", "float16");
  assert_int_equal(mxw_ndarray_dtype(y), MXW_FLOAT16);
  mxw_ndarray *z = RUN1("_npi_cast", y, "dtype", "float32");
  const float *zv = (const float *)mxw_ndarray_data(z);
  assert_close(zv[0], 2.69921875, 0); /* 2.7 -> 1382 / 512 */
  assert_close(zv[3], 0.0999755859375, 0);
  assert_close(zv[4], 1.0009765625, 0);
  assert_close(zv[2], 255, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(z);

  /* amp_cast converts float32 inputs, leaves integer ones alone */
  y = RUN1("amp_cast", x, "dtype", "float16");
  assert_int_equal(mxw_ndarray_dtype(y), MXW_FLOAT16);
  mxw_ndarray_free(y);
  mxw_ndarray *ix = typed_array(2, MXW_INT32);
  ((int32_t *)mxw_ndarray_data(ix))[0] = 7;
  y = RUN1("amp_cast", ix, "dtype", "float16");
  assert_int_equal(mxw_ndarray_dtype(y), MXW_INT32);
  assert_int_equal(((const int32_t *)mxw_ndarray_data(y))[0], 7);
  mxw_ndarray_free(y);
  mxw_ndarray_free(ix);

  mxw_ndarray *o[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("Cast", &x, 1, o, &n, "dtype", "float99", NULL), -1);
  assert_error_contains("Operator Cast");
  assert_error_contains("float99");
  assert_int_equal(t_invoke("Cast", &x, 1, o, &n, NULL), -1);
  assert_error_contains("'dtype'");
  mxw_ndarray_free(x);
}

/* clip on 37 float32 values: 9 full SIMD blocks and a tail of 1, NaNs in both. */
static void test_clip(void **state) {
  (void)state;
  enum { N = 37 };
  float vals[N];
  for (int i = 0; i < N; i++) vals[i] = (float)(i - 18) * 0.5f; /* -9.0 .. 9.0 */
  vals[5] = NAN;
  vals[36] = NAN;
  mxw_ndarray *x = t_array(1, (int32_t[]){N}, vals);
  mxw_ndarray *y = RUN1("clip", x, "a_min", "-3", "a_max", "4.25");
  const float *v = (const float *)mxw_ndarray_data(y);
  for (int i = 0; i < N; i++) {
    if (i == 5 || i == 36) {
      assert_true(isnan(v[i]));
    } else {
      float e = (float)(i - 18) * 0.5f;
      if (i < 12)
        e = -3.f; /* (i - 18) / 2 < -3  <=>  i < 12 */
      else if (i > 26)
        e = 4.25f; /* (i - 18) / 2 > 4.25  <=>  i > 26.5 */
      assert_close(v[i], e, 0);
    }
  }
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);

  /* int32: the float bound 2.5 truncates to 2 when stored */
  mxw_ndarray *ix = typed_array(4, MXW_INT32);
  int32_t *iv = (int32_t *)mxw_ndarray_data(ix);
  iv[0] = -5;
  iv[1] = 1;
  iv[2] = 3;
  iv[3] = 100;
  y = RUN1("_npi_clip", ix, "a_min", "-1", "a_max", "2.5");
  assert_int_equal(mxw_ndarray_dtype(y), MXW_INT32);
  const int32_t *r = (const int32_t *)mxw_ndarray_data(y);
  assert_int_equal(r[0], -1);
  assert_int_equal(r[1], 1);
  assert_int_equal(r[2], 2);
  assert_int_equal(r[3], 2);
  mxw_ndarray_free(y);
  mxw_ndarray_free(ix);

  mxw_ndarray *dx = typed_array(3, MXW_FLOAT64);
  double *dv = (double *)mxw_ndarray_data(dx);
  dv[0] = -1e300;
  dv[1] = 0.25;
  dv[2] = NAN;
  y = RUN1("_sparse_clip", dx, "a_min", "0", "a_max", "1");
  const double *dr = (const double *)mxw_ndarray_data(y);
  assert_close(dr[0], 0, 0);
  assert_close(dr[1], 0.25, 0);
  assert_true(isnan(dr[2]));
  mxw_ndarray_free(y);

  mxw_ndarray *o[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("clip", &dx, 1, o, &n, "a_min", "0", NULL), -1);
  assert_error_contains("Operator clip");
  assert_error_contains("'a_max'");
  mxw_ndarray_free(dx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arange), cmocka_unit_test(test_fills), cmocka_unit_test(test_linspace_eye),
      cmocka_unit_test(test_random), cmocka_unit_test(test_cast),  cmocka_unit_test(test_clip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
