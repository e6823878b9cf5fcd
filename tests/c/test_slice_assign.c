/* The writing side of indexing: _slice_assign, _slice_assign_scalar, _scatter_set_nd, and the
 * contiguous range view mxw_ndarray_view_range, against hand-worked values. */
#include "mxw_test.h"

static mxw_ndarray *t_arange(int ndim, const int32_t *shape) {
  mxw_ndarray *a = t_array(ndim, shape, NULL);
  float *p = (float *)mxw_ndarray_data(a);
  for (int i = 0; i < (int)mxw_ndarray_size(a); i++) p[i] = (float)i;
  return a;
}

static void test_slice_assign_strided(void **state) {
  (void)state;
  /* lhs = arange(12).reshape(3, 4); lhs[0::2, 1::2] = [[100, 101], [102, 103]] */
  mxw_ndarray *ins[2] = {t_arange(2, (int32_t[]){3, 4}), t_array(2, (int32_t[]){2, 2}, (float[]){100, 101, 102, 103})};
  mxw_ndarray *y[1] = {NULL};
  int nout = 1;
  assert_int_equal(
      t_invoke("_slice_assign", ins, 2, y, &nout, "begin", "(0, 1)", "end", "(None, None)", "step", "(2, 2)", NULL), 0);
  const float want[] = {0, 100, 2, 101, 4, 5, 6, 7, 8, 102, 10, 103};
  t_expect_shape(y[0], 2, (int32_t[]){3, 4});
  t_expect_f32(y[0], want, 12, 0);
  /* a fresh output leaves lhs as it was */
  t_expect_f32(ins[0], (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12, 0);
  mxw_ndarray_free(y[0]);
  /* out = lhs: in place, as x[key] = value */
  y[0] = ins[0];
  assert_int_equal(
      t_invoke("_slice_assign", ins, 2, y, &nout, "begin", "(0, 1)", "end", "(None, None)", "step", "(2, 2)", NULL), 0);
  assert_ptr_equal(y[0], ins[0]);
  t_expect_f32(ins[0], want, 12, 0);
  mxw_ndarray_free(ins[0]);
  mxw_ndarray_free(ins[1]);
}

static void test_slice_assign_negative_step_and_empty(void **state) {
  (void)state;
  /* x = arange(6); x[::-2] = [10, 11, 12] writes x[5], x[3], x[1] */
  mxw_ndarray *ins[2] = {t_arange(1, (int32_t[]){6}), t_array(1, (int32_t[]){3}, (float[]){10, 11, 12})};
  mxw_ndarray *y[1] = {ins[0]};
  int nout = 1;
  assert_int_equal(
      t_invoke("_slice_assign", ins, 2, y, &nout, "begin", "(None,)", "end", "(None,)", "step", "(-2,)", NULL), 0);
  t_expect_f32(ins[0], (float[]){0, 12, 2, 11, 4, 10}, 6, 0);
  /* x[-1:-4:-1] = [20, 21, 22] (negative begin and end) -> x[5], x[4], x[3] */
  memcpy(mxw_ndarray_data(ins[1]), (float[]){20, 21, 22}, 3 * sizeof(float));
  assert_int_equal(t_invoke("_crop_assign", ins, 2, y, &nout, "begin", "(-1,)", "end", "(-4,)", "step", "(-1,)", NULL),
                   0);
  t_expect_f32(ins[0], (float[]){0, 12, 2, 22, 21, 20}, 6, 0);
  mxw_ndarray_free(ins[1]);
  /* an empty slice x[4:1] takes a (0,) rhs and changes nothing */
  ins[1] = t_array(1, (int32_t[]){0}, NULL);
  assert_int_equal(t_invoke("_slice_assign", ins, 2, y, &nout, "begin", "(4,)", "end", "(1,)", NULL), 0);
  t_expect_f32(ins[0], (float[]){0, 12, 2, 22, 21, 20}, 6, 0);
  mxw_ndarray_free(ins[1]);
  mxw_ndarray_free(ins[0]);
}

static void test_slice_assign_errors(void **state) {
  (void)state;
  mxw_ndarray *ins[2] = {t_arange(2, (int32_t[]){3, 4}), t_array(2, (int32_t[]){2, 3}, NULL)};
  mxw_ndarray *y[1] = {ins[0]};
  int nout = 1;
  /* lhs[0:2, 0:2] is (2, 2), rhs is (2, 3) */
  assert_int_equal(t_invoke("_slice_assign", ins, 2, y, &nout, "begin", "(0, 0)", "end", "(2, 2)", NULL), -1);
  assert_error_contains("rhs has shape (2, 3), expected (2, 2)");
  assert_error_contains("_slice_assign");
  /* too many axes, a zero step, begin/end of different lengths */
  assert_int_equal(t_invoke("_slice_assign", ins, 2, y, &nout, "begin", "(0, 0, 0)", "end", "(1, 1, 1)", NULL), -1);
  assert_error_contains("only 2 dimensions");
  assert_int_equal(t_invoke("_slice_assign", ins, 2, y, &nout, "begin", "(0,)", "end", "(2,)", "step", "(0,)", NULL),
                   -1);
  assert_error_contains("is 0");
  assert_int_equal(t_invoke("_slice_assign_scalar", ins, 1, y, &nout, "begin", "(0,)", "end", "(1, 2)", NULL), -1);
  assert_error_contains("same length");
  /* nothing was written */
  t_expect_f32(ins[0], (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12, 0);
  mxw_ndarray_free(ins[0]);
  mxw_ndarray_free(ins[1]);
}

static void test_slice_assign_scalar(void **state) {
  (void)state;
  /* int32 x (2, 3) of zeros; x[1, -1:] = 7.9 writes 7 (static_cast truncates) */
  mxw_ndarray *x = NULL;
  assert_int_equal(mxw_ndarray_create(2, (int32_t[]){2, 3}, MXW_INT32, &x), 0);
  mxw_ndarray *y[1] = {x};
  int nout = 1;
  assert_int_equal(
      t_invoke("_slice_assign_scalar", &x, 1, y, &nout, "scalar", "7.9", "begin", "(1, -1)", "end", "(2, None)", NULL),
      0);
  const int32_t *p = (const int32_t *)mxw_ndarray_data(x);
  const int32_t want[] = {0, 0, 0, 0, 0, 7};
  for (int i = 0; i < 6; i++) assert_int_equal(p[i], want[i]);
  /* x[:, ::2] = -3 (None entries and a step) */
  assert_int_equal(t_invoke("_crop_assign_scalar", &x, 1, y, &nout, "scalar", "-3", "begin", "(None, None)", "end",
                            "(None, None)", "step", "(None, 2)", NULL),
                   0);
  const int32_t want2[] = {-3, 0, -3, -3, 0, -3};
  for (int i = 0; i < 6; i++) assert_int_equal(p[i], want2[i]);
  /* the default scalar is 0; a fresh output is a copy of data with the box set */
  mxw_ndarray *z[1] = {NULL};
  assert_int_equal(t_invoke("_slice_assign_scalar", &x, 1, z, &nout, "begin", "(0,)", "end", "(1,)", NULL), 0);
  const int32_t *q = (const int32_t *)mxw_ndarray_data(z[0]);
  const int32_t want3[] = {0, 0, 0, -3, 0, -3};
  for (int i = 0; i < 6; i++) assert_int_equal(q[i], want3[i]);
  for (int i = 0; i < 6; i++) assert_int_equal(p[i], want2[i]);
  mxw_ndarray_free(z[0]);
  mxw_ndarray_free(x);

  /* float16: x[1:3] = 0.5 */
  mxw_ndarray *h = NULL;
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){4}, MXW_FLOAT16, &h), 0);
  y[0] = h;
  assert_int_equal(
      t_invoke("_slice_assign_scalar", &h, 1, y, &nout, "scalar", "0.5", "begin", "(1,)", "end", "(3,)", NULL), 0);
  const uint16_t *hp = (const uint16_t *)mxw_ndarray_data(h);
  const float hw[] = {0, 0.5f, 0.5f, 0};
  for (int i = 0; i < 4; i++) assert_close(mxw_half_to_float(hp[i]), hw[i], 0);
  mxw_ndarray_free(h);
}

static void test_scatter_set_nd(void **state) {
  (void)state;
  /* MXNet's example: out = [[1, 1], [1, 1]], data = [2, 3, 0], indices = [[1, 1, 0], [0, 1, 0]]
   * -> out[1, 0] = 2, out[1, 1] = 3, out[0, 0] = 0 -> [[0, 1], [2, 3]] */
  mxw_ndarray *lhs = t_array(2, (int32_t[]){2, 2}, (float[]){1, 1, 1, 1});
  mxw_ndarray *rhs = t_array(1, (int32_t[]){3}, (float[]){2, 3, 0});
  mxw_ndarray *idx = NULL;
  assert_int_equal(mxw_ndarray_create(2, (int32_t[]){2, 3}, MXW_INT32, &idx), 0);
  memcpy(mxw_ndarray_data(idx), (int32_t[]){1, 1, 0, 0, 1, 0}, 6 * sizeof(int32_t));
  mxw_ndarray *ins[3] = {lhs, rhs, idx};
  mxw_ndarray *y[1] = {lhs};
  int nout = 1;
  assert_int_equal(t_invoke("_scatter_set_nd", ins, 3, y, &nout, "shape", "(2, 2)", NULL), 0);
  t_expect_f32(lhs, (float[]){0, 1, 2, 3}, 4, 0);

  /* float indices (truncated) and negative ones (from the end): [[-1.0], [0.7]] -> out[1, 0] */
  mxw_ndarray *fidx = t_array(2, (int32_t[]){2, 1}, (float[]){-1.0f, 0.7f});
  mxw_ndarray *r1 = t_array(1, (int32_t[]){1}, (float[]){9});
  mxw_ndarray *ins2[3] = {lhs, r1, fidx};
  assert_int_equal(t_invoke("_npi_scatter_set_nd", ins2, 3, y, &nout, "shape", "(2, 2)", NULL), 0);
  t_expect_f32(lhs, (float[]){0, 1, 9, 3}, 4, 0);

  /* out of range: nothing is written, the error names the index, axis and size */
  float *fp = (float *)mxw_ndarray_data(fidx);
  fp[0] = 2;
  assert_int_equal(t_invoke("_scatter_set_nd", ins2, 3, y, &nout, "shape", "(2, 2)", NULL), -1);
  assert_error_contains("index 2 is out of bounds for axis 0 with size 2");
  fp[0] = -3;
  assert_int_equal(t_invoke("_scatter_set_nd", ins2, 3, y, &nout, "shape", "(2, 2)", NULL), -1);
  assert_error_contains("index -3 is out of bounds for axis 0 with size 2");
  t_expect_f32(lhs, (float[]){0, 1, 9, 3}, 4, 0);

  /* shape attribute and rhs shape checks */
  assert_int_equal(t_invoke("_scatter_set_nd", ins2, 3, y, &nout, "shape", "(2, 3)", NULL), -1);
  assert_error_contains("shape");
  mxw_ndarray *r2 = t_array(1, (int32_t[]){2}, (float[]){5, 6});
  mxw_ndarray *ins3[3] = {lhs, r2, fidx};
  assert_int_equal(t_invoke("_scatter_set_nd", ins3, 3, y, &nout, "shape", "(2, 2)", NULL), -1);
  assert_error_contains("rhs has shape (2,), expected (1,)");
  mxw_ndarray_free(r2);
  mxw_ndarray_free(fidx);
  mxw_ndarray_free(r1);
  mxw_ndarray_free(idx);
  mxw_ndarray_free(rhs);
  mxw_ndarray_free(lhs);
}

static void test_scatter_set_nd_rows(void **state) {
  (void)state;
  /* lhs (3, 2) zeros, indices [[2, 0]] (M = 1): rows 2 and 0 from rhs [[1, 2], [3, 4]];
   * a fresh output keeps lhs unchanged */
  mxw_ndarray *lhs = t_array(2, (int32_t[]){3, 2}, (float[]){0, 0, 0, 0, 0, 0});
  mxw_ndarray *rhs = t_array(2, (int32_t[]){2, 2}, (float[]){1, 2, 3, 4});
  mxw_ndarray *idx = NULL;
  assert_int_equal(mxw_ndarray_create(2, (int32_t[]){1, 2}, MXW_INT64, &idx), 0);
  memcpy(mxw_ndarray_data(idx), (int64_t[]){2, 0}, 2 * sizeof(int64_t));
  mxw_ndarray *ins[3] = {lhs, rhs, idx};
  mxw_ndarray *y[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_scatter_set_nd", ins, 3, y, &nout, "shape", "(3, 2)", NULL), 0);
  t_expect_f32(y[0], (float[]){3, 4, 0, 0, 1, 2}, 6, 0);
  t_expect_f32(lhs, (float[]){0, 0, 0, 0, 0, 0}, 6, 0);
  mxw_ndarray_free(y[0]);
  /* rhs must share lhs's dtype */
  mxw_ndarray *rhs64 = t_array_f64(2, (int32_t[]){2, 2}, (double[]){1, 2, 3, 4});
  ins[1] = rhs64;
  y[0] = NULL;
  assert_int_equal(t_invoke("_scatter_set_nd", ins, 3, y, &nout, "shape", "(3, 2)", NULL), -1);
  assert_error_contains("rhs has dtype float64, expected float32");
  mxw_ndarray_free(rhs64);
  mxw_ndarray_free(idx);
  mxw_ndarray_free(rhs);
  mxw_ndarray_free(lhs);
}

static void test_view_range(void **state) {
  (void)state;
  /* x = arange(6).reshape(2, 3); x's elements 3..5 as a (1, 3) view: x[1:2] */
  mxw_ndarray *x = t_arange(2, (int32_t[]){2, 3}), *v = NULL, *w = NULL;
  assert_int_equal(mxw_ndarray_view_range(x, 3, 2, (int32_t[]){1, 3}, &v), 0);
  t_expect_shape(v, 2, (int32_t[]){1, 3});
  t_expect_f32(v, (float[]){3, 4, 5}, 3, 0);
  /* writes go through to x */
  ((float *)mxw_ndarray_data(v))[1] = -4;
  t_expect_f32(x, (float[]){0, 1, 2, 3, -4, 5}, 6, 0);
  /* a view of the view, offsets relative to it; the storage outlives x */
  assert_int_equal(mxw_ndarray_view_range(v, 2, 0, NULL, &w), 0);
  assert_int_equal(mxw_ndarray_ndim(w), 0);
  mxw_ndarray_free(x);
  assert_close(((float *)mxw_ndarray_data(w))[0], 5, 0);
  /* out of range, negative offset */
  mxw_ndarray *bad = NULL;
  assert_int_equal(mxw_ndarray_view_range(v, 1, 1, (int32_t[]){3}, &bad), -1);
  assert_error_contains("cannot view elements 1..3");
  assert_int_equal(mxw_ndarray_view_range(v, -1, 1, (int32_t[]){1}, &bad), -1);
  assert_null(bad);
  /* an empty view at the end is fine */
  assert_int_equal(mxw_ndarray_view_range(v, 3, 1, (int32_t[]){0}, &bad), 0);
  mxw_ndarray_free(bad);
  mxw_ndarray_free(w);
  mxw_ndarray_free(v);
}

static void test_registry_schema(void **state) {
  (void)state;
  /* MXNet's names, inputs and attribute defaults */
  int op = mxw_op_find("_slice_assign_scalar");
  assert_true(op >= 0);
  mxw_params *p = NULL;
  assert_int_equal(mxw_params_create(op, 2, (const char *[]){"begin", "end"}, (const char *[]){"(0,)", "(1,)"}, &p), 0);
  assert_int_equal(mxw_params_num_inputs(p), 1);
  mxw_params_free(p);
  /* begin and end are required; shape is required for _scatter_set_nd */
  assert_int_equal(mxw_params_create(op, 1, (const char *[]){"begin"}, (const char *[]){"(0,)"}, &p), -1);
  assert_error_contains("end");
  op = mxw_op_find("_scatter_set_nd");
  assert_int_equal(mxw_params_create(op, 0, NULL, NULL, &p), -1);
  assert_error_contains("shape");
  const char *json = mxw_registry_json();
  assert_non_null(strstr(json, "\"lhs\",\"rhs\",\"indices\""));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slice_assign_strided), cmocka_unit_test(test_slice_assign_negative_step_and_empty),
      cmocka_unit_test(test_slice_assign_errors),  cmocka_unit_test(test_slice_assign_scalar),
      cmocka_unit_test(test_scatter_set_nd),       cmocka_unit_test(test_scatter_set_nd_rows),
      cmocka_unit_test(test_view_range),           cmocka_unit_test(test_registry_schema),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
