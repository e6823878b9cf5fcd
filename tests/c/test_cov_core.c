/* The core beyond test_core.c: the registry and the eager invoke (csrc/core/registry.c: argument
 * and shape errors, an output that aliases an input, the float16-through-float32 path, shape
 * inference's limits, the registry JSON and checksum), MXNet's conversion rule between every kind
 * of dtype (csrc/core/dtype.c: static_cast as x86-64 computes it, half and bfloat16 specials),
 * arrays' limits and views (csrc/core/ndarray.c) and the error text (csrc/core/error.c). Expected
 * values are hand-worked from the rule stated in dtype.c's comment (C's static_cast). */
#include <float.h>

#include "core/ndarray.h"
#include "cov_graph.h"

static void test_invoke_errors(void **state) {
  (void)state;
  int op = mxw_op_find("elemwise_add");
  assert_true(op >= 0 && op < mxw_op_count());
  assert_null(mxw_op_get(-1));
  assert_null(mxw_op_get(mxw_op_count()));
  mxw_params *p = NULL;
  const char *k[1] = {NULL}, *v[1] = {"1"};
  assert_int_equal(mxw_params_create(op, 1, k, v, &p), -1);
  assert_error_contains("NULL attribute key or value");
  assert_int_equal(mxw_params_create(op, 0, NULL, NULL, &p), 0);
  mxw_ndarray *a = t_array(1, (int32_t[]){2}, (float[]){1, 2}), *b = t_array(1, (int32_t[]){2}, (float[]){10, 20});
  mxw_ndarray *ab[2] = {a, b}, *out[1] = {NULL};
  int nout = 0;
  assert_int_equal(mxw_op_invoke(op, p, 2, ab, &nout, out), -1);
  assert_error_contains("Operator elemwise_add: room for 0 outputs given, the op has 1");
  nout = 1;
  mxw_ndarray *an[2] = {a, NULL};
  assert_int_equal(mxw_op_invoke(op, p, 2, an, &nout, out), -1);
  assert_error_contains("Operator elemwise_add: input 1 is NULL");
  /* a caller output of the wrong shape */
  mxw_ndarray *c3 = t_array(1, (int32_t[]){3}, NULL);
  out[0] = c3;
  assert_int_equal(mxw_op_invoke(op, p, 2, ab, &nout, out), -1);
  assert_error_contains("output 0 has shape (3,) and dtype float32, expected (2,) and float32");
  /* out= the second input: computed into a temporary, then copied back */
  out[0] = b;
  assert_int_equal(mxw_op_invoke(op, p, 2, ab, &nout, out), 0);
  assert_ptr_equal(out[0], b);
  t_expect_f32(b, (float[]){11, 22}, 2, 0);
  /* out= the first input of an in-place op: written in place */
  out[0] = a;
  assert_int_equal(mxw_op_invoke(op, p, 2, ab, &nout, out), 0);
  t_expect_f32(a, (float[]){12, 24}, 2, 0);
  /* shape inference: the input count, an unsupported rank */
  int32_t shapes[2 * (1 + MXW_MAX_NDIM)];
  assert_int_equal(mxw_op_infer_shape(p, 1, (int32_t[]){1, 2}, shapes), -1);
  assert_error_contains("Operator elemwise_add: expected 2 inputs, got 1");
  assert_int_equal(mxw_op_infer_shape(p, 2, (int32_t[]){11, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2}, shapes), -1);
  assert_error_contains("input 0: rank 11 is not supported");
  assert_int_equal(mxw_op_infer_shape(p, 2, (int32_t[]){1, 2, 1, 2}, shapes), 0);
  assert_int_equal(shapes[0], 1);
  assert_int_equal(shapes[1], 2);
  assert_int_equal(mxw_op_infer_shape(NULL, 0, NULL, shapes), -1);
  assert_error_contains("NULL argument");
  mxw_params_free(p);
  /* an inferred dim past 2^31 - 1 is refused, not narrowed */
  int cop = mxw_op_find("Concat");
  const char *ck[2] = {"num_args", "dim"}, *cv[2] = {"2", "0"};
  assert_int_equal(mxw_params_create(cop, 2, ck, cv, &p), 0);
  assert_int_equal(mxw_op_infer_shape(p, 2, (int32_t[]){1, 2147483647, 1, 2147483647}, shapes), -1);
  assert_error_contains("output 0 dim 0 is 4294967294, outside the supported range [-1, 2^31 - 1]");
  mxw_params_free(p);
  mxw_ndarray_free(a);
  mxw_ndarray_free(b);
  mxw_ndarray_free(c3);
}

/* AdaptiveAvgPooling2D on float16 runs its float32 kernel through mxw_run_as_f32: the mean of each
 * 2x2 window of a (1, 1, 4, 2) input pooled to (2, 1). */
static void test_half_through_f32(void **state) {
  (void)state;
  mxw_ndarray *x = NULL;
  assert_int_equal(mxw_ndarray_create(4, (int32_t[]){1, 1, 4, 2}, MXW_FLOAT16, &x), 0);
  const float v[8] = {1, 2, 3, 4, 0.5f, 0.5f, -1, -3};
  for (int i = 0; i < 8; i++) ((uint16_t *)mxw_ndarray_data(x))[i] = mxw_float_to_half(v[i]);
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_contrib_AdaptiveAvgPooling2D", &x, 1, out, &nout, "output_size", "(2, 1)", NULL), 0);
  assert_int_equal(mxw_ndarray_dtype(out[0]), MXW_FLOAT16);
  t_expect_shape(out[0], 4, (int32_t[]){1, 1, 2, 1});
  const uint16_t *y = mxw_ndarray_data(out[0]);
  assert_close(mxw_half_to_float(y[0]), 2.5, 0);   /* (1 + 2 + 3 + 4) / 4 */
  assert_close(mxw_half_to_float(y[1]), -0.75, 0); /* (0.5 + 0.5 - 1 - 3) / 4 */
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(x);
}

static void test_registry_listing(void **state) {
  (void)state;
  const char *j = mxw_registry_json();
  assert_non_null(j);
  assert_int_equal(mxw_registry_json_size(), strlen(j));
  assert_ptr_equal(mxw_registry_json(), j); /* built once */
  assert_non_null(strstr(j, "\"max_ndim\":10"));
  assert_non_null(strstr(j, "\"dtypes\":{\"float32\":0,\"float64\":1,\"float16\":2,"));
  assert_non_null(strstr(j, "{\"name\":\"elemwise_add\","));
  uint32_t c = mxw_registry_checksum();
  assert_true(c != 0);
  assert_int_equal(mxw_registry_checksum(), c); /* a function of the definitions only */
}

/* Conversions between dtypes by mxw_ndarray_copy (MXNet's Cast): C's static_cast on x86-64. */
static mxw_ndarray *one(int dtype) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(1, (int32_t[]){1}, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  return a;
}
static void put_bits(mxw_ndarray *a, uint64_t u) {
  memcpy(mxw_ndarray_data(a), &u, (size_t)mxw_dtype_size(mxw_ndarray_dtype(a)));
}
static uint64_t get_bits(const mxw_ndarray *a) {
  uint64_t u = 0;
  memcpy(&u, mxw_ndarray_data(a), (size_t)mxw_dtype_size(mxw_ndarray_dtype(a)));
  return u;
}
/* src dtype with bit pattern `bits` copied into dst dtype: the resulting bit pattern */
static uint64_t cast_bits(int src, uint64_t bits, int dst) {
  mxw_ndarray *s = one(src), *d = one(dst);
  put_bits(s, bits);
  if (mxw_ndarray_copy(s, d) != 0) fail_msg("%s", mxw_get_last_error());
  uint64_t r = get_bits(d);
  mxw_ndarray_free(s);
  mxw_ndarray_free(d);
  return r;
}
static double f64_of(int dtype, uint64_t bits) {
  mxw_ndarray *s = one(dtype);
  put_bits(s, bits);
  double v = mxw_load_f64(mxw_ndarray_data(s), dtype, 0);
  mxw_ndarray_free(s);
  return v;
}
static uint64_t bits_of_f64(double v, int dst) {
  mxw_ndarray *s = one(MXW_FLOAT64), *d = one(dst);
  *(double *)mxw_ndarray_data(s) = v;
  if (mxw_ndarray_copy(s, d) != 0) fail_msg("%s", mxw_get_last_error());
  uint64_t r = get_bits(d);
  mxw_ndarray_free(s);
  mxw_ndarray_free(d);
  return r;
}
static uint64_t dbits(double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  return u;
}

static void test_dtype_conversions(void **state) {
  (void)state;
  /* integer -> integer keeps the low bits, signed sources sign-extend */
  assert_int_equal(cast_bits(MXW_INT8, 0xfd, MXW_INT64), (uint64_t)(int64_t)-3);
  assert_int_equal(cast_bits(MXW_INT16, 0xfed4, MXW_INT32), 0xfffffed4u); /* -300 */
  assert_int_equal(cast_bits(MXW_UINT16, 0xffff, MXW_INT64), 65535);
  assert_int_equal(cast_bits(MXW_UINT32, 0xffffffffu, MXW_INT64), 4294967295u);
  assert_int_equal(cast_bits(MXW_UINT64, UINT64_C(0x8000000000000005), MXW_INT64), UINT64_C(0x8000000000000005));
  assert_int_equal(cast_bits(MXW_INT32, 300, MXW_INT8), 44);
  assert_int_equal(cast_bits(MXW_INT32, 70000, MXW_INT16), 4464); /* 70000 - 65536 */
  assert_int_equal(cast_bits(MXW_INT32, 70000, MXW_UINT16), 4464);
  assert_int_equal(cast_bits(MXW_INT16, 0xfed4, MXW_BOOL), 1);
  assert_int_equal(cast_bits(MXW_UINT8, 200, MXW_UINT32), 200);
  assert_int_equal(cast_bits(MXW_INT8, 0xff, MXW_UINT64), UINT64_MAX);
  /* integer -> float */
  assert_int_equal(cast_bits(MXW_UINT64, UINT64_MAX, MXW_FLOAT64), dbits(18446744073709551615.0));
  assert_int_equal(cast_bits(MXW_INT64, (uint64_t)(int64_t)-7, MXW_FLOAT64), dbits(-7.0));
  assert_int_equal(cast_bits(MXW_INT32, 2048, MXW_FLOAT16), 0x6800); /* 2^11 */
  assert_int_equal(cast_bits(MXW_INT8, 0xfd, MXW_BFLOAT16), 0xc040); /* -3.0f = 0xc0400000 */
  assert_int_equal(cast_bits(MXW_UINT16, 3, MXW_FLOAT32), 0x40400000u);
  /* float -> integer truncates; out of range gives x86-64's integer indefinite */
  assert_int_equal(bits_of_f64(1e19, MXW_UINT64), UINT64_C(10000000000000000000));
  assert_int_equal(bits_of_f64(5.9, MXW_UINT64), 5);
  assert_int_equal(bits_of_f64(4e9, MXW_UINT32), 4000000000u);
  assert_int_equal(bits_of_f64(-2.7, MXW_INT64), (uint64_t)(int64_t)-2);
  assert_int_equal(bits_of_f64(100.7, MXW_INT8), 100);
  assert_int_equal(bits_of_f64(300.5, MXW_UINT8), 44);
  assert_int_equal(bits_of_f64(1e20, MXW_INT8), 0);
  assert_int_equal(bits_of_f64(-1.5, MXW_UINT8), 255);
  assert_int_equal(bits_of_f64(-0.0, MXW_BOOL), 0);
  assert_int_equal(bits_of_f64(NAN, MXW_BOOL), 1);
  assert_int_equal(bits_of_f64(1.5, MXW_BFLOAT16), 0x3fc0);
  /* mxw_load_f64 of every kind */
  assert_close(f64_of(MXW_BFLOAT16, 0x3fc0), 1.5, 0);
  assert_close(f64_of(MXW_INT16, 0xfed4), -300, 0);
  assert_close(f64_of(MXW_UINT16, 0xffff), 65535, 0);
  assert_close(f64_of(MXW_UINT32, 0xffffffffu), 4294967295.0, 0);
  assert_close(f64_of(MXW_UINT64, UINT64_C(1) << 63), 9223372036854775808.0, 0);
  assert_close(f64_of(MXW_INT8, 0x80), -128, 0);
  assert_close(f64_of(MXW_BOOL, 1), 1, 0);
  assert_close(mxw_load_f64(NULL, 99, 0), 0, 0); /* an unknown flag reads 0 */
  /* half's specials: inf, -inf and NaN both ways; overflow to inf; float16 -> float32 copies */
  assert_int_equal(mxw_float_to_half(INFINITY), 0x7c00);
  assert_int_equal(mxw_float_to_half(-INFINITY), 0xfc00);
  assert_int_equal(mxw_float_to_half(NAN) & 0x7e00, 0x7e00);
  assert_int_equal(mxw_float_to_half(70000.f), 0x7c00);
  assert_true(isinf(mxw_half_to_float(0x7c00)) && mxw_half_to_float(0x7c00) > 0);
  assert_true(isinf(mxw_half_to_float(0xfc00)) && mxw_half_to_float(0xfc00) < 0);
  assert_true(isnan(mxw_half_to_float(0x7e00)));
  mxw_ndarray *h = NULL, *f = t_array(1, (int32_t[]){3}, NULL);
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){3}, MXW_FLOAT16, &h), 0);
  uint16_t *hp = mxw_ndarray_data(h);
  hp[0] = 0x3c00; /* 1 */
  hp[1] = 0xc000; /* -2 */
  hp[2] = 0x3555; /* 0.333251953125 */
  assert_int_equal(mxw_ndarray_copy(h, f), 0);
  t_expect_f32(f, (float[]){1, -2, 0.333251953125f}, 3, 0);
  mxw_ndarray_free(h);
  mxw_ndarray_free(f);
  /* an in-place widening conversion runs backwards: int16 -> int32 over the same bytes */
  uint8_t buf[8];
  int16_t s16[2] = {-5, 7};
  memcpy(buf, s16, 4);
  mxw_convert(buf, MXW_INT16, buf, MXW_INT32, 2);
  int32_t s32[2];
  memcpy(s32, buf, 8);
  assert_int_equal(s32[0], -5);
  assert_int_equal(s32[1], 7);
}

static void test_array_limits_and_views(void **state) {
  (void)state;
  mxw_ndarray *a = NULL;
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){2}, 99, &a), -1);
  assert_error_contains("unknown dtype flag 99");
  assert_int_equal(mxw_ndarray_create(2, (int32_t[]){536870912, 2}, MXW_FLOAT32, &a), -1);
  assert_error_contains("array of shape (536870912, 2) and dtype float32 (4294967296 bytes) is too large");
  mxw_shape big = {1, {INT64_C(2147483648)}};
  assert_null(mxw_ndarray_alloc(&big, MXW_UINT8));
  assert_error_contains("dimension 0 is 2147483648, more than 2^31 - 1");
  mxw_shape deep = {11, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
  assert_null(mxw_ndarray_alloc(&deep, MXW_FLOAT32));
  assert_error_contains("rank 11 is not supported (0..10)");
  mxw_ndarray *x = t_array(2, (int32_t[]){2, 3}, (float[]){0, 1, 2, 3, 4, 5}), *v = NULL;
  assert_int_equal(mxw_ndarray_view(x, 1, (int32_t[]){4}, &v), -1);
  assert_error_contains("cannot view an array of shape (2, 3) as (4,): sizes differ");
  assert_int_equal(mxw_ndarray_view_range(x, 4, 1, (int32_t[]){3}, &v), -1);
  assert_error_contains("cannot view elements 4..6 (shape (3,)) of an array of shape (2, 3) (6 elements)");
  assert_int_equal(mxw_ndarray_view_range(x, 1, 2, (int32_t[]){2, 2}, &v), 0);
  t_expect_f32(v, (float[]){1, 2, 3, 4}, 4, 0);
  ((float *)mxw_ndarray_data(v))[0] = 9; /* writes go through */
  assert_close(((float *)mxw_ndarray_data(x))[1], 9, 0);
  mxw_ndarray *c = t_array(1, (int32_t[]){5}, NULL);
  assert_int_equal(mxw_ndarray_copy(x, c), -1);
  assert_error_contains("cannot copy an array of shape (2, 3) into one of shape (5,)");
  int32_t info[2 + MXW_MAX_NDIM];
  assert_int_equal(mxw_ndarray_info(v, info), 0);
  assert_int_equal(info[0], MXW_FLOAT32);
  assert_int_equal(info[1], 2);
  assert_int_equal(info[2], 2);
  assert_int_equal(mxw_ndarray_info(NULL, info), -1);
  assert_int_equal(mxw_ndarray_shape(NULL, info), -1);
  assert_int_equal(mxw_ndarray_dtype(NULL), -1);
  assert_int_equal(mxw_ndarray_ndim(NULL), -1);
  assert_null(mxw_ndarray_data(NULL));
  assert_int_equal(mxw_dtype_size(42), 0);
  mxw_ndarray_free(v);
  mxw_ndarray_free(x);
  mxw_ndarray_free(c);
  /* kernels' scratch: slots 0..3, 64-byte aligned, released on demand */
  assert_null(mxw_scratch(-1, 16));
  assert_error_contains("scratch slot -1 out of range");
  assert_null(mxw_scratch(MXW_SCRATCH_SLOTS, 16));
  void *s = mxw_scratch(1, 1000);
  assert_non_null(s);
  assert_int_equal((uintptr_t)s % 64, 0);
  assert_ptr_equal(mxw_scratch(1, 500), s); /* big enough already */
  mxw_scratch_release();
  assert_non_null(mxw_scratch(1, 16));
  mxw_scratch_release();
}

static void test_error_text(void **state) {
  (void)state;
  /* every "out of memory" message says what the heap holds and what frees it */
  double st[3];
  mxw_ndarray *a = t_array(1, (int32_t[]){262144}, NULL); /* 1 MiB */
  mxw_memory_stats(st);
  assert_true(st[0] >= 1 && st[1] >= 1048576);
  assert_int_equal(mxw_fail("out of memory: %s", "a test"), -1);
  assert_error_contains("out of memory: a test (");
  assert_error_contains(" live arrays and cached graphs hold ");
  assert_error_contains("); dispose() blocks and arrays no longer in use to free memory");
  assert_int_equal(mxw_fail_oom("a float32 copy", 3.0 * 1048576), -1);
  assert_error_contains("out of memory: a float32 copy needs 3145728 bytes (3.0 MiB), which the heap cannot provide (");
  /* other messages are left as they are */
  mxw_fail("plain %d", 7);
  assert_string_equal(mxw_get_last_error(), "plain 7");
  /* a prefix longer than the buffer is cut, never overflows */
  char longp[3000];
  memset(longp, 'p', sizeof longp - 1);
  longp[sizeof longp - 1] = 0;
  mxw_error_prefix("%s", longp);
  assert_true(strlen(mxw_get_last_error()) < 2048);
  assert_int_equal(mxw_get_last_error()[0], 'p');
  mxw_ndarray_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invoke_errors),          cmocka_unit_test(test_half_through_f32),
      cmocka_unit_test(test_registry_listing),       cmocka_unit_test(test_dtype_conversions),
      cmocka_unit_test(test_array_limits_and_views), cmocka_unit_test(test_error_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
