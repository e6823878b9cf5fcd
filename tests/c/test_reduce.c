/* Reductions, argmax/argmin, norm and pick. Expected values are worked by hand, or computed here
 * with plain double loops over the index space (independent of the library's stage plan). */
#include "mxw_test.h"

/* Runs a one-input op; fails the test on error. Attributes as key/value pairs, NULL-ended. */
#define RUN1(name, x, ...)                                                                         \
  ({                                                                                               \
    mxw_ndarray *in_[1] = {(x)}, *out_[1] = {NULL};                                                \
    int n_ = 1;                                                                                    \
    if (t_invoke(name, in_, 1, out_, &n_, __VA_ARGS__) != 0) fail_msg("%s", mxw_get_last_error()); \
    out_[0];                                                                                       \
  })

static void assert_shape(const mxw_ndarray *a, int ndim, const int32_t *dims) {
  int32_t s[MXW_MAX_NDIM];
  assert_int_equal(mxw_ndarray_ndim(a), ndim);
  mxw_ndarray_shape(a, s);
  for (int i = 0; i < ndim; i++) assert_int_equal(s[i], dims[i]);
}

static void assert_values(const mxw_ndarray *a, int n, const float *want, double tol) {
  assert_int_equal((int)mxw_ndarray_size(a), n);
  const float *p = (const float *)mxw_ndarray_data(a);
  for (int i = 0; i < n; i++) assert_close(p[i], want[i], tol);
}

static mxw_ndarray *typed_array(int ndim, const int32_t *shape, int dtype, const void *vals) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  memcpy(mxw_ndarray_data(a), vals, (size_t)mxw_ndarray_size(a) * (size_t)mxw_dtype_size(dtype));
  return a;
}

static const int32_t k_2x3[] = {2, 3};
static const float k_x23[] = {1, 2, 3, 4, 5, 6};

static void test_sum_axis1_of_2x3_and_shapes(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(2, k_2x3, k_x23), *y;

  y = RUN1("sum", x, "axis", "1", NULL);
  assert_shape(y, 1, (int32_t[]){2});
  assert_values(y, 2, (float[]){6, 15}, 0);
  mxw_ndarray_free(y);

  y = RUN1("sum_axis", x, "axis", "1", "keepdims", "True", NULL);
  assert_shape(y, 2, (int32_t[]){2, 1});
  assert_values(y, 2, (float[]){6, 15}, 0);
  mxw_ndarray_free(y);

  /* exclude=True with axis 1 reduces axis 0 */
  y = RUN1("sum", x, "axis", "(1,)", "exclude", "True", NULL);
  assert_shape(y, 1, (int32_t[]){3});
  assert_values(y, 3, (float[]){5, 7, 9}, 0);
  mxw_ndarray_free(y);

  y = RUN1("sum", x, "axis", "-1", "exclude", "True", "keepdims", "True", NULL);
  assert_shape(y, 2, (int32_t[]){1, 3});
  mxw_ndarray_free(y);

  /* everything: (1,), or all ones with keepdims; () means all as well */
  y = RUN1("sum", x, NULL);
  assert_shape(y, 1, (int32_t[]){1});
  assert_values(y, 1, (float[]){21}, 0);
  mxw_ndarray_free(y);
  y = RUN1("sum", x, "axis", "()", "keepdims", "1", NULL);
  assert_shape(y, 2, (int32_t[]){1, 1});
  mxw_ndarray_free(y);
  y = RUN1("sum", x, "axis", "(0, 1)", NULL);
  assert_shape(y, 1, (int32_t[]){1});
  mxw_ndarray_free(y);
  /* exclude listing every axis reduces nothing */
  y = RUN1("sum", x, "axis", "(0, 1)", "exclude", "True", NULL);
  assert_shape(y, 2, k_2x3);
  assert_values(y, 6, k_x23, 0);
  mxw_ndarray_free(y);

  y = RUN1("mean", x, "axis", "0", NULL);
  assert_values(y, 3, (float[]){2.5f, 3.5f, 4.5f}, 0);
  mxw_ndarray_free(y);
  y = RUN1("max_axis", x, "axis", "1", NULL);
  assert_values(y, 2, (float[]){3, 6}, 0);
  mxw_ndarray_free(y);
  y = RUN1("min", x, "axis", "0", NULL);
  assert_values(y, 3, (float[]){1, 2, 3}, 0);
  mxw_ndarray_free(y);
  y = RUN1("min_axis", x, NULL);
  assert_values(y, 1, (float[]){1}, 0);
  mxw_ndarray_free(y);
  y = RUN1("prod", x, "axis", "1", NULL);
  assert_values(y, 2, (float[]){6, 120}, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

/* Axes (0, 2) of a (2, 3, 4) array: two reduced blocks, so two stages. */
static void test_two_stage_reduction(void **state) {
  (void)state;
  int32_t shape[] = {2, 3, 4};
  float v[24];
  for (int i = 0; i < 24; i++) v[i] = (float)((i * 7) % 11) - 3.f;
  mxw_ndarray *x = t_array(3, shape, v);
  mxw_ndarray *s = RUN1("sum", x, "axis", "(0, 2)", NULL), *m = RUN1("max", x, "axis", "(2, 0)", NULL);
  mxw_ndarray *k = RUN1("mean", x, "axis", "(0, -1)", "keepdims", "True", NULL);
  assert_shape(s, 1, (int32_t[]){3});
  assert_shape(k, 3, (int32_t[]){1, 3, 1});
  for (int j = 0; j < 3; j++) {
    double sum = 0, mx = -1e30;
    for (int i = 0; i < 2; i++)
      for (int l = 0; l < 4; l++) {
        double e = v[(i * 3 + j) * 4 + l];
        sum += e;
        mx = e > mx ? e : mx;
      }
    assert_close(((float *)mxw_ndarray_data(s))[j], sum, 1e-6);
    assert_close(((float *)mxw_ndarray_data(m))[j], mx, 0);
    assert_close(((float *)mxw_ndarray_data(k))[j], sum / 8, 1e-6);
  }
  mxw_ndarray_free(s);
  mxw_ndarray_free(m);
  mxw_ndarray_free(k);
  mxw_ndarray_free(x);
}

/* The SIMD row kernels on sizes around their vector widths and leaf sizes, against exact sums
 * of integer-valued floats, the last element as the maximum, and powers of two as products. */
static void test_f32_rows_on_odd_sizes(void **state) {
  (void)state;
  static const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 511, 512, 513, 1025, 4097};
  static float v[4097];
  for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
    int n = sizes[t];
    int32_t shape[] = {n};
    double sum = 0, sumsq = 0;
    for (int i = 0; i < n; i++) {
      v[i] = (float)((i % 13) - 6); /* max 6 somewhere, unless the last is larger */
      sum += v[i];
      sumsq += (double)v[i] * v[i];
    }
    v[n - 1] = 100.f;
    sum += 100.0 - ((n - 1) % 13 - 6);
    sumsq += 10000.0 - (double)((n - 1) % 13 - 6) * ((n - 1) % 13 - 6);
    mxw_ndarray *x = t_array(1, shape, v);
    mxw_ndarray *s = RUN1("sum", x, NULL), *mx = RUN1("max", x, NULL), *mn = RUN1("min", x, NULL);
    mxw_ndarray *l2 = RUN1("norm", x, NULL);
    assert_close(*(float *)mxw_ndarray_data(s), sum, 0);
    assert_close(*(float *)mxw_ndarray_data(mx), 100, 0);
    assert_close(*(float *)mxw_ndarray_data(mn), n >= 2 ? -6 : 100, 0);
    assert_close(*(float *)mxw_ndarray_data(l2), sqrt(sumsq), 1e-6);
    mxw_ndarray_free(s);
    mxw_ndarray_free(mx);
    mxw_ndarray_free(mn);
    mxw_ndarray_free(l2);
    mxw_ndarray_free(x);

    /* products: 2 at every 64th element, 1 elsewhere, -1 last */
    for (int i = 0; i < n; i++) v[i] = i % 64 == 5 ? 2.f : 1.f;
    v[n - 1] = -1.f;
    double prod = -1;
    for (int i = 0; i + 1 < n; i++) prod *= v[i];
    x = t_array(1, shape, v);
    mxw_ndarray *p = RUN1("prod", x, NULL);
    assert_close(*(float *)mxw_ndarray_data(p), prod, 0);
    mxw_ndarray_free(p);
    mxw_ndarray_free(x);
  }
}

/* Column reductions (axis 0 of (300, 67)): blocks of 64 columns plus 3, pairwise over rows for
 * sums. Integer-valued floats make the sums exact. */
static void test_f32_columns(void **state) {
  (void)state;
  enum { R = 300, C = 67 };
  int32_t shape[] = {R, C};
  static float v[R * C];
  for (int i = 0; i < R * C; i++) v[i] = (float)((i * 31) % 17) - 8.f;
  mxw_ndarray *x = t_array(2, shape, v);
  mxw_ndarray *s = RUN1("sum", x, "axis", "0", NULL), *mx = RUN1("max", x, "axis", "0", NULL);
  mxw_ndarray *l1 = RUN1("norm", x, "axis", "0", "ord", "1", NULL);
  for (int c = 0; c < C; c++) {
    double sum = 0, best = -1e30, abs_sum = 0;
    for (int r = 0; r < R; r++) {
      sum += v[r * C + c];
      best = fmax(best, v[r * C + c]);
      abs_sum += fabs(v[r * C + c]);
    }
    assert_close(((float *)mxw_ndarray_data(s))[c], sum, 0);
    assert_close(((float *)mxw_ndarray_data(mx))[c], best, 0);
    assert_close(((float *)mxw_ndarray_data(l1))[c], abs_sum, 0);
  }
  mxw_ndarray_free(s);
  mxw_ndarray_free(mx);
  mxw_ndarray_free(l1);
  mxw_ndarray_free(x);
}

static void test_nan_handling(void **state) {
  (void)state;
  int32_t shape[] = {9};
  float v[9] = {1, 2, NAN, 4, 5, 6, 7, 8, 9};
  mxw_ndarray *x = t_array(1, shape, v);
  mxw_ndarray *a = RUN1("nansum", x, NULL), *b = RUN1("nanprod", x, NULL), *c = RUN1("max", x, NULL);
  mxw_ndarray *d = RUN1("min", x, NULL), *e = RUN1("sum", x, NULL);
  assert_close(*(float *)mxw_ndarray_data(a), 42, 0);
  assert_close(*(float *)mxw_ndarray_data(b), 362880.0 / 3, 0);
  assert_true(isnan(*(float *)mxw_ndarray_data(c)));
  assert_true(isnan(*(float *)mxw_ndarray_data(d)));
  assert_true(isnan(*(float *)mxw_ndarray_data(e)));
  mxw_ndarray *all[] = {a, b, c, d, e, x};
  for (int i = 0; i < 6; i++) mxw_ndarray_free(all[i]);
}

static void test_integer_reductions_are_exact(void **state) {
  (void)state;
  int32_t shape[] = {2, 2};
  int32_t iv[] = {2147483647, 1, -7, 2};
  mxw_ndarray *x = typed_array(2, shape, MXW_INT32, iv);
  mxw_ndarray *s = RUN1("sum", x, "axis", "1", NULL);
  assert_int_equal(mxw_ndarray_dtype(s), MXW_INT32);
  /* wraps as MXNet's int32 accumulation does */
  assert_int_equal(((int32_t *)mxw_ndarray_data(s))[0], INT32_MIN);
  assert_int_equal(((int32_t *)mxw_ndarray_data(s))[1], -5);
  mxw_ndarray *m = RUN1("mean", x, "axis", "1", NULL); /* integer division truncates */
  assert_int_equal(((int32_t *)mxw_ndarray_data(m))[1], -2);
  mxw_ndarray_free(s);
  mxw_ndarray_free(m);
  mxw_ndarray_free(x);

  /* sums of large int64 values that double could not hold exactly */
  int64_t lv[] = {(int64_t)1 << 60, 3, -((int64_t)1 << 59), 1};
  int32_t s4[] = {4};
  x = typed_array(1, s4, MXW_INT64, lv);
  s = RUN1("sum", x, NULL);
  assert_true(((int64_t *)mxw_ndarray_data(s))[0] == ((int64_t)1 << 59) + 4);
  mxw_ndarray_free(s);
  mxw_ndarray_free(x);

  uint8_t uv[] = {200, 10, 255, 3};
  x = typed_array(1, s4, MXW_UINT8, uv);
  mxw_ndarray *mx = RUN1("max", x, NULL), *am = RUN1("argmax", x, NULL), *sm = RUN1("sum", x, NULL);
  assert_int_equal(((uint8_t *)mxw_ndarray_data(mx))[0], 255);
  assert_int_equal(((uint8_t *)mxw_ndarray_data(am))[0], 2);
  assert_int_equal(((uint8_t *)mxw_ndarray_data(sm))[0], (200 + 10 + 255 + 3) % 256);
  mxw_ndarray_free(mx);
  mxw_ndarray_free(am);
  mxw_ndarray_free(sm);
  mxw_ndarray_free(x);

  uint64_t qv[] = {UINT64_MAX - 1, 5, UINT64_MAX, 7};
  x = typed_array(1, s4, MXW_UINT64, qv);
  mx = RUN1("max", x, NULL);
  mxw_ndarray *mn = RUN1("min", x, NULL);
  assert_true(((uint64_t *)mxw_ndarray_data(mx))[0] == UINT64_MAX);
  assert_true(((uint64_t *)mxw_ndarray_data(mn))[0] == 5);
  mxw_ndarray_free(mx);
  mxw_ndarray_free(mn);
  mxw_ndarray_free(x);
}

static void test_float64_and_float16(void **state) {
  (void)state;
  int32_t s3[] = {3};
  double dv[] = {1e16, 1.0, -1e16};
  mxw_ndarray *x = typed_array(1, s3, MXW_FLOAT64, dv);
  mxw_ndarray *y = RUN1("max", x, NULL);
  assert_int_equal(mxw_ndarray_dtype(y), MXW_FLOAT64);
  assert_true(((double *)mxw_ndarray_data(y))[0] == 1e16);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);

  uint16_t hv[] = {mxw_float_to_half(1.5f), mxw_float_to_half(2.f), mxw_float_to_half(-0.25f)};
  x = typed_array(1, s3, MXW_FLOAT16, hv);
  y = RUN1("sum", x, NULL);
  assert_int_equal(mxw_ndarray_dtype(y), MXW_FLOAT16);
  assert_close(mxw_half_to_float(((uint16_t *)mxw_ndarray_data(y))[0]), 3.25, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

static void test_argmax_ties_take_the_first(void **state) {
  (void)state;
  float v[] = {1, 3, 3, 2, 2, 1};
  mxw_ndarray *x = t_array(2, k_2x3, v), *y;
  y = RUN1("argmax", x, "axis", "1", NULL);
  assert_shape(y, 1, (int32_t[]){2});
  assert_values(y, 2, (float[]){1, 0}, 0);
  mxw_ndarray_free(y);
  y = RUN1("argmin", x, "axis", "0", "keepdims", "True", NULL);
  assert_shape(y, 2, (int32_t[]){1, 3});
  assert_values(y, 3, (float[]){0, 1, 1}, 0);
  mxw_ndarray_free(y);
  y = RUN1("argmax", x, NULL); /* flat index */
  assert_shape(y, 1, (int32_t[]){1});
  assert_values(y, 1, (float[]){1}, 0);
  mxw_ndarray_free(y);
  y = RUN1("argmin", x, "keepdims", "True", NULL);
  assert_shape(y, 2, (int32_t[]){1, 1});
  assert_values(y, 1, (float[]){0}, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);

  int32_t s4[] = {4};
  x = t_array(1, s4, (float[]){0, 5, 5, -1});
  y = RUN1("argmax", x, "axis", "0", NULL); /* 1-D gives (1,) */
  assert_shape(y, 1, (int32_t[]){1});
  assert_values(y, 1, (float[]){1}, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

static void test_norm(void **state) {
  (void)state;
  float v[] = {3, -4, 0, 1, 2, -2};
  mxw_ndarray *x = t_array(2, k_2x3, v), *y;
  y = RUN1("norm", x, "ord", "1", "axis", "1", NULL);
  assert_values(y, 2, (float[]){7, 5}, 0);
  mxw_ndarray_free(y);
  y = RUN1("norm", x, "axis", "0", "keepdims", "True", NULL);
  assert_shape(y, 2, (int32_t[]){1, 3});
  assert_values(y, 3, (float[]){3.16227766f, 4.47213595f, 2}, 1e-6);
  mxw_ndarray_free(y);
  y = RUN1("norm", x, "out_dtype", "float64", NULL);
  assert_int_equal(mxw_ndarray_dtype(y), MXW_FLOAT64);
  assert_close(((double *)mxw_ndarray_data(y))[0], sqrt(34.0), 1e-7);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

static void test_pick_clip_and_wrap(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(2, k_2x3, k_x23);
  int32_t s2[] = {2};
  mxw_ndarray *idx = t_array(1, s2, (float[]){2, -1});
  mxw_ndarray *ins[] = {x, idx}, *out[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("pick", ins, 2, out, &n, NULL), 0);
  assert_values(out[0], 2, (float[]){3, 4}, 0);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  assert_int_equal(t_invoke("choose_element_0index", ins, 2, out, &n, "mode", "wrap", NULL), 0);
  assert_values(out[0], 2, (float[]){3, 6}, 0);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  mxw_ndarray_free(idx);

  /* along axis 0 with keepdims: index (1, 3) */
  int32_t s13[] = {1, 3};
  idx = t_array(2, s13, (float[]){1, 0, 7});
  ins[1] = idx;
  assert_int_equal(t_invoke("pick", ins, 2, out, &n, "axis", "0", "keepdims", "True", NULL), 0);
  assert_shape(out[0], 2, s13);
  assert_values(out[0], 3, (float[]){4, 2, 6}, 0);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  mxw_ndarray_free(idx);

  /* a wrong index shape */
  int32_t s3[] = {3};
  idx = t_array(1, s3, (float[]){0, 0, 0});
  ins[1] = idx;
  assert_int_equal(t_invoke("pick", ins, 2, out, &n, NULL), -1);
  assert_error_contains("Operator pick");
  assert_error_contains("index shape (3,)");
  mxw_ndarray_free(idx);
  mxw_ndarray_free(x);
}

static void test_errors_name_op_and_problem(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(2, k_2x3, k_x23), *ins[1] = {x}, *out[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("sum", ins, 1, out, &n, "axis", "2", NULL), -1);
  assert_error_contains("Operator sum");
  assert_error_contains("axis 2 is out of range");
  assert_int_equal(t_invoke("mean", ins, 1, out, &n, "axis", "(1, -1)", NULL), -1);
  assert_error_contains("more than once");
  assert_int_equal(t_invoke("argmax", ins, 1, out, &n, "axis", "-3", NULL), -1);
  assert_error_contains("Operator argmax");
  assert_int_equal(t_invoke("norm", ins, 1, out, &n, "ord", "3", NULL), -1);
  assert_error_contains("ord=3");
  assert_null(out[0]);
  int32_t s0[] = {0, 3};
  mxw_ndarray *e = t_array(2, s0, NULL);
  ins[0] = e;
  assert_int_equal(t_invoke("max", ins, 1, out, &n, NULL), -1);
  assert_error_contains("empty");
  /* sum of an empty array is 0; prod 1 */
  mxw_ndarray *s = RUN1("sum", e, "axis", "0", NULL), *p = RUN1("prod", e, "axis", "0", NULL);
  assert_values(s, 3, (float[]){0, 0, 0}, 0);
  assert_values(p, 3, (float[]){1, 1, 1}, 0);
  mxw_ndarray_free(s);
  mxw_ndarray_free(p);
  mxw_ndarray_free(e);
  /* the next call works */
  s = RUN1("sum", x, "axis", "0", NULL);
  assert_values(s, 3, (float[]){5, 7, 9}, 0);
  mxw_ndarray_free(s);
  mxw_ndarray_free(x);
}

static void test_shape_inference_only(void **state) {
  (void)state;
  int op = mxw_op_find("sum");
  const char *keys[] = {"axis", "exclude"}, *vals[] = {"(1, 3)", "True"};
  mxw_params *p = NULL;
  assert_int_equal(mxw_params_create(op, 2, keys, vals, &p), 0);
  int32_t in[] = {4, 2, 3, 4, 5}, out[1 + MXW_MAX_NDIM];
  assert_int_equal(mxw_op_infer_shape(p, 1, in, out), 0);
  assert_int_equal(out[0], 2); /* rank len(axis), the kept sizes */
  assert_int_equal(out[1], 3);
  assert_int_equal(out[2], 5);
  mxw_params_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sum_axis1_of_2x3_and_shapes),
      cmocka_unit_test(test_two_stage_reduction),
      cmocka_unit_test(test_f32_rows_on_odd_sizes),
      cmocka_unit_test(test_f32_columns),
      cmocka_unit_test(test_nan_handling),
      cmocka_unit_test(test_integer_reductions_are_exact),
      cmocka_unit_test(test_float64_and_float16),
      cmocka_unit_test(test_argmax_ties_take_the_first),
      cmocka_unit_test(test_norm),
      cmocka_unit_test(test_pick_clip_and_wrap),
      cmocka_unit_test(test_errors_name_op_and_problem),
      cmocka_unit_test(test_shape_inference_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
