/* Parser error branches not reached by test_ndlist.c / test_parse_limits.c: crafted .params
 * records (csrc/io/ndlist.c) with an unknown dimension, an unknown sparse storage or index shape,
 * a 0-dimensional row_sparse array, and an unknown dtype; attribute texts (csrc/core/attrs.c)
 * that are not a tuple where MXNet's Tuple<optional<int>> or Tuple<float> is expected. Each
 * asserts the error text. Records are written with tests/c/fixtures.h (from the format spec). */
#include "fixtures.h"
#include "mxw_test.h"

static void expect_load_error(fx_buf *b, const char *msg) {
  mxw_ndlist *l = NULL;
  if (mxw_ndlist_load(b->p, b->len, &l) == 0) fail_msg("loaded a corrupt file (%s)", msg);
  if (!strstr(mxw_get_last_error(), msg)) fail_msg("error '%s' does not mention '%s'", mxw_get_last_error(), msg);
  free(b->p);
  *b = (fx_buf){0};
}

static void test_params_records(void **state) {
  (void)state;
  fx_buf b = {0};
  /* V2 dense with a dimension of -1 */
  fx_header(&b, 1);
  fx_u32(&b, FX_V2);
  fx_i32(&b, 0);
  fx_shape64(&b, 2, (int64_t[]){2, -1});
  fx_ctx_dtype(&b, 1, 0);
  fx_names(&b, 0, NULL);
  expect_load_error(&b, "corrupt params data: array 0 of 1 has an unknown shape");
  /* V2 dense of dtype flag 99 */
  fx_header(&b, 1);
  fx_rec_dense(&b, FX_V2, 1, (int64_t[]){1}, 99, "\0\0\0\0", 4);
  fx_names(&b, 0, NULL);
  expect_load_error(&b, "corrupt params data: array 0 of 1 has unknown dtype flag 99");
  /* row_sparse whose storage shape has rank -1 */
  fx_header(&b, 1);
  fx_u32(&b, FX_V2);
  fx_i32(&b, 1);
  fx_shape64(&b, -1, NULL);
  fx_names(&b, 0, NULL);
  expect_load_error(&b, "corrupt params data: sparse array 0 of 1 has an unknown storage shape");
  /* row_sparse whose index shape has rank -1 */
  fx_header(&b, 1);
  fx_u32(&b, FX_V2);
  fx_i32(&b, 1);
  fx_shape64(&b, 2, (int64_t[]){1, 2});
  fx_shape64(&b, 2, (int64_t[]){3, 2});
  fx_ctx_dtype(&b, 1, 0);
  fx_i32(&b, 6);
  fx_shape64(&b, -1, NULL);
  fx_names(&b, 0, NULL);
  expect_load_error(&b, "corrupt params data: sparse array 0 of 1 has an unknown index shape");
  /* V3 (numpy semantics: a 0-d shape is a scalar, not "none") row_sparse of rank 0 */
  fx_header(&b, 1);
  fx_u32(&b, FX_V3);
  fx_i32(&b, 1);
  fx_shape64(&b, 1, (int64_t[]){0});
  fx_shape64(&b, 0, NULL);
  fx_ctx_dtype(&b, 1, 0);
  fx_i32(&b, 6);
  fx_shape64(&b, 1, (int64_t[]){0});
  fx_names(&b, 0, NULL);
  expect_load_error(&b, "corrupt params data: row_sparse array 0 of 1 is 0-dimensional");
  /* a well-formed V2 file next to them still loads: [1.5, -2] */
  fx_header(&b, 1);
  const float v[2] = {1.5f, -2};
  fx_rec_dense(&b, FX_V2, 1, (int64_t[]){2}, 0, v, sizeof v);
  fx_names(&b, 0, NULL);
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), 0);
  mxw_ndarray *a = mxw_ndlist_take(l, 0);
  t_expect_f32(a, (float[]){1.5f, -2}, 2, 0);
  mxw_ndarray_free(a);
  mxw_ndlist_free(l);
  free(b.p);
}

/* slice's begin/end are Tuple<optional<int>>: each element an integer or None. */
static void test_opt_tuple_attrs(void **state) {
  (void)state;
  int op = mxw_op_find("slice");
  mxw_params *p = NULL;
  const char *k[2] = {"begin", "end"}, *v[2] = {"(0, x)", "(1, 2)"};
  assert_int_equal(mxw_params_create(op, 2, k, v, &p), -1);
  assert_error_contains("invalid value '(0, x)' for attribute 'begin': expected a tuple such as (0, None)");
  v[0] = "None"; /* required, not optional: None is not a tuple */
  assert_int_equal(mxw_params_create(op, 2, k, v, &p), -1);
  assert_error_contains("invalid value 'None' for attribute 'begin': expected a tuple such as (0, None)");
  v[0] = "(0, None)";
  assert_int_equal(mxw_params_create(op, 2, k, v, &p), 0);
  mxw_params_free(p);
}

/* Tuple<float> (MultiBoxPrior's sizes, Normalize's mean): mxw_parse_floats. */
static void test_parse_floats(void **state) {
  (void)state;
  float f[3];
  int n = 0;
  assert_int_equal(mxw_parse_floats("sizes", "(0.5, 1, 2)", f, 3, &n), 0);
  assert_int_equal(n, 3);
  assert_close(f[0], 0.5, 0);
  assert_close(f[2], 2, 0);
  assert_int_equal(mxw_parse_floats("sizes", " [0.25] ", f, 3, &n), 0);
  assert_int_equal(n, 1);
  assert_close(f[0], 0.25, 0);
  assert_int_equal(mxw_parse_floats("sizes", "7", f, 3, &n), 0);
  assert_int_equal(n, 1);
  assert_close(f[0], 7, 0);
  assert_int_equal(mxw_parse_floats("sizes", "()", f, 3, &n), 0);
  assert_int_equal(n, 0);
  const char *bad[] = {"(1, x)", "(1, 2, 3, 4)", "(1 2)", "(1, 2) x", "1 2", "(1, 2"};
  for (int i = 0; i < 6; i++) {
    assert_int_equal(mxw_parse_floats("sizes", bad[i], f, 3, &n), -1);
    char want[160];
    snprintf(want, sizeof want,
             "invalid value '%s' for attribute 'sizes': expected a float or a tuple of at most 3 floats such as "
             "(0.5, 1, 2)",
             bad[i]);
    assert_string_equal(mxw_get_last_error(), want);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_params_records),
      cmocka_unit_test(test_opt_tuple_attrs),
      cmocka_unit_test(test_parse_floats),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
