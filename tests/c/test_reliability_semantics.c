/* Issue 9, findings 4, 6 and 7 in the C core (run under ASan/UBSan natively): the one conversion
 * rule into integer dtypes (static_cast as MXNet 1.9.1 computes it on x86-64), integer negation
 * and abs wrapping, zero-size creation, shape limits and slicing past the end. Every expected
 * value is worked by hand in the comments. */
#include "mxw_test.h"

static mxw_ndarray *make(int n, int dtype, const void *vals) {
  mxw_ndarray *a = NULL;
  int32_t shape[1] = {n};
  if (mxw_ndarray_create(1, shape, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  if (vals) memcpy(mxw_ndarray_data(a), vals, (size_t)n * (size_t)mxw_dtype_size(dtype));
  return a;
}

/* Cast through the op (the path of nd.Cast / astype) and through mxw_ndarray_copy (nd.array's
 * staging copy): both must give `want` (n elements of the target dtype, compared bytewise). */
static void expect_cast(const mxw_ndarray *src, int dtype, const void *want) {
  int n = (int)mxw_ndarray_size(src);
  mxw_ndarray *o[1] = {NULL};
  int nout = 1;
  mxw_ndarray *in[1] = {(mxw_ndarray *)src};
  if (t_invoke("Cast", in, 1, o, &nout, "dtype", mxw_dtype_name(dtype), NULL) != 0)
    fail_msg("%s", mxw_get_last_error());
  if (memcmp(mxw_ndarray_data(o[0]), want, (size_t)n * (size_t)mxw_dtype_size(dtype)) != 0)
    fail_msg("Cast to %s differs from the hand-worked values", mxw_dtype_name(dtype));
  mxw_ndarray *c = make(n, dtype, NULL);
  assert_int_equal(mxw_ndarray_copy(src, c), 0);
  if (memcmp(mxw_ndarray_data(c), want, (size_t)n * (size_t)mxw_dtype_size(dtype)) != 0)
    fail_msg("copy to %s differs from Cast", mxw_dtype_name(dtype));
  mxw_ndarray_free(o[0]);
  mxw_ndarray_free(c);
}

static void test_float_to_int_rule(void **state) {
  (void)state;
  /* x86-64: cvttsd2si into 32 bits for int32 and narrower (out of range / NaN -> 0x80000000, then
   * the low bits), into 64 bits for int64 and uint32 (-> 0x8000000000000000) */
  const double v[] = {1e20, -1e20, NAN, 300.7, -1.5, -129.0, 2147483648.0, -2147483648.9};
  mxw_ndarray *x = make(8, MXW_FLOAT64, v);
  expect_cast(x, MXW_INT32, (int32_t[]){INT32_MIN, INT32_MIN, INT32_MIN, 300, -1, -129, INT32_MIN, INT32_MIN});
  /* 300 = 0x12c -> 0x2c = 44; -1 -> 0xff; -129 = 0x..ff7f -> 0x7f = 127; 0x80000000 -> 0 */
  expect_cast(x, MXW_INT8, (int8_t[]){0, 0, 0, 44, -1, 127, 0, 0});
  expect_cast(x, MXW_UINT8, (uint8_t[]){0, 0, 0, 44, 255, 127, 0, 0});
  /* 300 -> 300; -1 -> 0xffff = 65535; -129 -> 65407 */
  expect_cast(x, MXW_UINT16, (uint16_t[]){0, 0, 0, 300, 65535, 65407, 0, 0});
  expect_cast(x, MXW_INT16, (int16_t[]){0, 0, 0, 300, -1, -129, 0, 0});
  /* 64-bit conversion then the low 32 bits: -1 -> 4294967295, 2^31 -> 2147483648, -2^31 -> 2^31 */
  expect_cast(x, MXW_UINT32, (uint32_t[]){0, 0, 0, 300, 4294967295u, 4294967167u, 2147483648u, 2147483648u});
  expect_cast(x, MXW_INT64, (int64_t[]){INT64_MIN, INT64_MIN, INT64_MIN, 300, -1, -129, 2147483648LL, -2147483648LL});
  expect_cast(x, MXW_BOOL, (uint8_t[]){1, 1, 1, 1, 1, 1, 1, 1});
  mxw_ndarray_free(x);

  /* uint64: below 2^63 the signed conversion (-1 -> 2^64 - 1, NaN -> 2^63); from 2^63 on, 2^63 is
   * subtracted first and the top bit set again (9.3e18 is a double and converts exactly); 1.9e19
   * - 2^63 is still >= 2^63 -> 0x8000000000000000 ^ top bit = 0 */
  const double u[] = {-1.0, NAN, 9.3e18, 1.9e19, 0.0, -0.0};
  x = make(6, MXW_FLOAT64, u);
  expect_cast(x, MXW_UINT64, (uint64_t[]){UINT64_MAX, UINT64_C(1) << 63, UINT64_C(9300000000000000000), 0, 0, 0});
  expect_cast(x, MXW_BOOL, (uint8_t[]){1, 1, 1, 1, 0, 0});
  mxw_ndarray_free(x);

  /* float32 source, the fast path: 3e9 and -3e9 are out of int32's range */
  const float f[] = {3e9f, -3e9f, 2.9f, -2.9f, NAN};
  x = make(5, MXW_FLOAT32, f);
  expect_cast(x, MXW_INT32, (int32_t[]){INT32_MIN, INT32_MIN, 2, -2, INT32_MIN});
  mxw_ndarray_free(x);
}

static void test_int_to_int_wraps(void **state) {
  (void)state;
  /* static_cast between integer types keeps the low bits */
  const int32_t v[] = {300, -129, INT32_MIN, 65541};
  mxw_ndarray *x = make(4, MXW_INT32, v);
  expect_cast(x, MXW_INT8, (int8_t[]){44, 127, 0, 5}); /* 65541 = 0x10005 */
  expect_cast(x, MXW_UINT16, (uint16_t[]){300, 65407, 0, 5});
  expect_cast(x, MXW_UINT64, (uint64_t[]){300, UINT64_MAX - 128, UINT64_MAX - 2147483647u, 65541}); /* sign-extended */
  mxw_ndarray_free(x);

  const int64_t w[] = {INT64_C(0x100000005), -1, INT64_MAX};
  x = make(3, MXW_INT64, w);
  expect_cast(x, MXW_INT32, (int32_t[]){5, -1, -1});
  expect_cast(x, MXW_UINT32, (uint32_t[]){5, UINT32_MAX, UINT32_MAX});
  mxw_ndarray_free(x);

  /* integer -> float rounds once from the integer: 2^53 + 2^29 + 1 is above the midpoint between
   * the floats 2^53 and 2^53 + 2^30, so float32 gets 2^53 + 2^30 (through double it would tie
   * twice and land on 2^53) */
  const int64_t big[] = {(INT64_C(1) << 53) + (INT64_C(1) << 29) + 1};
  x = make(1, MXW_INT64, big);
  expect_cast(x, MXW_FLOAT32, (float[]){9007200328482816.0f}); /* 2^53 + 2^30 */
  mxw_ndarray_free(x);
  const uint64_t ub[] = {UINT64_MAX};
  x = make(1, MXW_UINT64, ub);
  expect_cast(x, MXW_FLOAT64, (double[]){18446744073709551616.0}); /* 2^64 - 1 rounds to 2^64 */
  mxw_ndarray_free(x);
}

static mxw_ndarray *run1(const char *op, mxw_ndarray *x) {
  mxw_ndarray *in[1] = {x}, *o[1] = {NULL};
  int n = 1;
  if (t_invoke(op, in, 1, o, &n, NULL) != 0) fail_msg("%s", mxw_get_last_error());
  return o[0];
}

static void expect_unary(const char *op, int dtype, int n, const void *in, const void *want) {
  mxw_ndarray *x = make(n, dtype, in);
  mxw_ndarray *y = run1(op, x);
  if (memcmp(mxw_ndarray_data(y), want, (size_t)n * (size_t)mxw_dtype_size(dtype)) != 0)
    fail_msg("%s on %s differs from the hand-worked values", op, mxw_dtype_name(dtype));
  mxw_ndarray_free(x);
  mxw_ndarray_free(y);
}

static void test_negative_abs_wrap(void **state) {
  (void)state;
  /* negative is -a in the dtype: -INT_MIN wraps to INT_MIN; uint8 5 -> 256 - 5 = 251 */
  expect_unary("negative", MXW_INT8, 3, (int8_t[]){-128, 127, 5}, (int8_t[]){-128, -127, -5});
  expect_unary("negative", MXW_INT16, 2, (int16_t[]){-32768, 7}, (int16_t[]){-32768, -7});
  expect_unary("negative", MXW_INT32, 3, (int32_t[]){INT32_MIN, INT32_MAX, 0}, (int32_t[]){INT32_MIN, -INT32_MAX, 0});
  expect_unary("negative", MXW_INT64, 2, (int64_t[]){INT64_MIN, (INT64_C(1) << 53) + 1},
               (int64_t[]){INT64_MIN, -(INT64_C(1) << 53) - 1});
  expect_unary("negative", MXW_UINT8, 3, (uint8_t[]){5, 0, 255}, (uint8_t[]){251, 0, 1});
  expect_unary("negative", MXW_UINT32, 1, (uint32_t[]){1}, (uint32_t[]){UINT32_MAX});
  expect_unary("negative", MXW_BOOL, 2, (uint8_t[]){0, 1}, (uint8_t[]){0, 1});
  expect_unary("negative", MXW_FLOAT16, 2, (uint16_t[]){0x3c00, 0x0000},
               (uint16_t[]){0xbc00, 0x8000}); /* 1 -> -1, 0 -> -0 */
  /* abs is DType(fabs(double(a))): |INT_MIN| = 2^31 does not fit and converts to INT_MIN */
  expect_unary("abs", MXW_INT32, 3, (int32_t[]){INT32_MIN, -7, 7}, (int32_t[]){INT32_MIN, 7, 7});
  expect_unary("abs", MXW_INT8, 2, (int8_t[]){-128, -5}, (int8_t[]){-128, 5});
  expect_unary("abs", MXW_INT64, 1, (int64_t[]){INT64_MIN}, (int64_t[]){INT64_MIN});
  /* identity copies every bit: 2^53 + 1 survives (a double round trip would make it 2^53) */
  expect_unary("_copy", MXW_INT64, 1, (int64_t[]){(INT64_C(1) << 53) + 1}, (int64_t[]){(INT64_C(1) << 53) + 1});
  expect_unary("BlockGrad", MXW_UINT64, 1, (uint64_t[]){UINT64_MAX}, (uint64_t[]){UINT64_MAX});
}

static mxw_ndarray *run0(const char *op, const char *shape) {
  mxw_ndarray *o[1] = {NULL};
  int n = 1;
  if (t_invoke(op, NULL, 0, o, &n, "shape", shape, NULL) != 0) return NULL;
  return o[0];
}

static void test_zero_size_and_limits(void **state) {
  (void)state;
  /* eagerly a 0 dim is 0 (nothing else can fill it) */
  const char *ops[] = {"_zeros", "_ones", "_random_uniform"};
  for (int i = 0; i < 3; i++) {
    mxw_ndarray *z = run0(ops[i], "(0, 3)");
    if (!z) fail_msg("%s: %s", ops[i], mxw_get_last_error());
    t_expect_shape(z, 2, (int32_t[]){0, 3});
    mxw_ndarray_free(z);
  }
  mxw_ndarray *z = run0("_zeros", "(4, 0)");
  t_expect_shape(z, 2, (int32_t[]){4, 0});
  mxw_ndarray_free(z);
  /* "()" is an unknown shape in legacy semantics, still an error */
  assert_null(run0("_zeros", "()"));
  assert_error_contains("could not infer the shape of output 0");
  /* InitShape: 2^31 - 1 elements or more are refused, without the product overflowing */
  assert_null(run0("_zeros", "(4294967297,)"));
  assert_error_contains("below 2^31 - 1 elements");
  assert_null(run0("_ones", "(65536, 65536, 65536, 65536)"));
  assert_error_contains("below 2^31 - 1 elements");
  /* zero elements but a dim that would not fit the int32 shapes of the API */
  assert_null(run0("_zeros", "(0, 4294967296)"));
  assert_error_contains("more than 2^31 - 1");
  /* a zero-size input through an op and a reduction */
  z = run0("_zeros", "(0, 3)");
  mxw_ndarray *e = run1("exp", z);
  t_expect_shape(e, 2, (int32_t[]){0, 3});
  mxw_ndarray *in[1] = {z}, *o[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("sum", in, 1, o, &n, "axis", "0", NULL), 0);
  t_expect_f32(o[0], (float[]){0, 0, 0}, 3, 0); /* the empty sum of each column */
  mxw_ndarray_free(o[0]);
  mxw_ndarray_free(e);
  mxw_ndarray_free(z);
}

static void test_slice_past_the_end(void **state) {
  (void)state;
  /* MXNet 1.9.1's GetIndexRange (since "Numpy compatible slicing", #15798) clamps: begin 5 of an
   * axis of 2 is an empty range, so slice gives (0, 3); slice_axis still checks begin < end */
  mxw_ndarray *x = t_array(2, (int32_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
  mxw_ndarray *in[1] = {x}, *o[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("slice", in, 1, o, &n, "begin", "(5,)", "end", "(None,)", NULL), 0);
  t_expect_shape(o[0], 2, (int32_t[]){0, 3});
  mxw_ndarray_free(o[0]);
  o[0] = NULL;
  assert_int_equal(t_invoke("slice_axis", in, 1, o, &n, "axis", "0", "begin", "5", "end", "None", NULL), -1);
  assert_error_contains("slice_axis");
  mxw_ndarray_free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float_to_int_rule),  cmocka_unit_test(test_int_to_int_wraps),
      cmocka_unit_test(test_negative_abs_wrap),  cmocka_unit_test(test_zero_size_and_limits),
      cmocka_unit_test(test_slice_past_the_end),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
