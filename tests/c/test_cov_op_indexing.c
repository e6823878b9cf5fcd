/* indexing.c: where (same-shape and 1-D conditions, float32 fast path and the generic one, its
 * gradients, shape errors), take and _backward_take on several index dtypes and value dtypes
 * (float64 and float16 accumulation), topk's heap selection (k * 8 <= n) with ties, every
 * ret_typ, argsort with axis=None, one_hot's off value, gather_nd / _backward_gather_nd with
 * integer and negative indices, second-order gradients of the backward ops, and the error
 * messages. Expected values are worked by hand from MXNet's definitions. */
#include "cov_op_helpers.h"

static void test_where(void **state) {
  (void)state;
  const double x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {-1, -2, -3, -4, -5, -6};
  /* float32 condition and data: the fast path */
  mxw_ndarray *in[3] = {c_arr(MXW_FLOAT32, 2, SHP(2, 3), DV(1, 0, 2, 0, 0, -1)), c_arr(MXW_FLOAT32, 2, SHP(2, 3), x),
                        c_arr(MXW_FLOAT32, 2, SHP(2, 3), y)};
  mxw_ndarray *o = c_run1("where", in, 3, NULL);
  c_expect(o, DV(1, -2, 3, -4, -5, 6), 6, 0);
  mxw_ndarray_free(o);
  const double h[6] = {10, 20, 30, 40, 50, 60};
  mxw_ndarray *g = c_grad("where", in, 3, 1, 0, h, NULL);
  c_expect(g, DV(10, 0, 30, 0, 0, 60), 6, 0);
  mxw_ndarray_free(g);
  g = c_grad("where", in, 3, 2, 0, h, NULL);
  c_expect(g, DV(0, 20, 0, 40, 50, 0), 6, 0);
  mxw_ndarray_free(g);
  c_free(3, in);
  /* int32 condition, float64 data: element bytes */
  in[0] = c_arr(MXW_INT32, 2, SHP(2, 3), DV(0, 1, 0, 1, 1, 0));
  in[1] = c_arr(MXW_FLOAT64, 2, SHP(2, 3), x);
  in[2] = c_arr(MXW_FLOAT64, 2, SHP(2, 3), y);
  o = c_run1("where", in, 3, NULL);
  c_expect(o, DV(-1, 2, -3, 4, 5, -6), 6, 0);
  mxw_ndarray_free(o);
  mxw_ndarray_free(in[0]);
  /* a 1-D condition picks whole rows */
  in[0] = c_arr(MXW_FLOAT32, 1, SHP(2), DV(0, 3));
  o = c_run1("where", in, 3, NULL);
  c_expect(o, DV(-1, -2, -3, 4, 5, 6), 6, 0);
  mxw_ndarray_free(o);
  mxw_ndarray_free(in[0]);
  /* errors: condition of another shape, 1-D of the wrong length; x and y differ */
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(3, 2), NULL);
  c_fail("where", in, 3, NULL, "condition of shape (3, 2) must have the shape of x (2, 3)");
  mxw_ndarray_free(in[0]);
  in[0] = c_arr(MXW_FLOAT32, 1, SHP(3), NULL);
  c_fail("where", in, 3, NULL, "condition");
  mxw_ndarray_free(in[0]);
  mxw_ndarray_free(in[2]);
  in[0] = c_arr(MXW_FLOAT32, 1, SHP(2), NULL);
  in[2] = c_arr(MXW_FLOAT64, 2, SHP(3, 2), NULL);
  c_fail("where", in, 3, NULL, "x and y must have the same shape, got (2, 3) and (3, 2)");
  c_free(3, in);
  /* inference: shapes flow from y to x and the output; condition unknown */
  int32_t out[16];
  assert_int_equal(c_infer("where", NULL, 3, (const int32_t[]){-1, -1, 2, 4, 5}, out), 0);
  assert_int_equal(out[0], 2);
  assert_int_equal(out[1], 4);
  assert_int_equal(out[2], 5);
}

static void test_take(void **state) {
  (void)state;
  /* a (3, 2); indices [2, 0, -1] in wrap mode: rows 2, 0, 2 */
  const double a[6] = {1, 2, 3, 4, 5, 6};
  static const int idts[] = {MXW_INT64, MXW_INT8, MXW_FLOAT32};
  for (int t = 0; t < 3; t++) {
    mxw_ndarray *in[2] = {c_arr(MXW_FLOAT64, 2, SHP(3, 2), a), c_arr(idts[t], 1, SHP(3), DV(2, 0, -1))};
    mxw_ndarray *o = c_run1("take", in, 2, KV("mode", "wrap"));
    c_expect(o, DV(5, 6, 1, 2, 5, 6), 6, 0);
    mxw_ndarray_free(o);
    /* the gradient adds the head rows back: row 0 gets head row 1, row 2 gets rows 0 and 2 */
    mxw_ndarray *g = c_grad("take", in, 2, 0, 0, DV(1, 2, 3, 4, 5, 6), KV("mode", "wrap"));
    c_expect(g, DV(3, 4, 0, 0, 6, 8), 6, 0);
    mxw_ndarray_free(g);
    c_free(2, in);
  }
  /* uint8 / bool indices; float16 values accumulate through double */
  mxw_ndarray *in[3] = {c_arr(MXW_FLOAT16, 2, SHP(3, 2), a), c_arr(MXW_UINT8, 1, SHP(3), DV(2, 0, 2)), NULL};
  mxw_ndarray *g = c_grad("take", in, 2, 0, 0, DV(1, 2, 3, 4, 5, 6), NULL);
  c_expect(g, DV(3, 4, 0, 0, 6, 8), 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(in[1]);
  in[1] = c_arr(MXW_BOOL, 1, SHP(2), DV(1, 0));
  mxw_ndarray *o = c_run1("take", in, 2, NULL);
  c_expect(o, DV(3, 4, 1, 2), 4, 0);
  mxw_ndarray_free(o);
  c_free(2, in);
  /* _backward_take(ograd, indices, a) directly, and its own gradient (take of the head) */
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(3, 2), DV(1, 2, 3, 4, 5, 6));
  in[1] = c_arr(MXW_INT32, 1, SHP(3), DV(2, 0, 2));
  in[2] = c_arr(MXW_FLOAT32, 2, SHP(3, 2), a);
  o = c_run1("_backward_take", in, 3, NULL);
  c_expect(o, DV(3, 4, 0, 0, 6, 8), 6, 0);
  mxw_ndarray_free(o);
  g = c_grad("_backward_take", in, 3, 0, 0, DV(10, 20, 30, 40, 50, 60), NULL);
  c_expect(g, DV(50, 60, 10, 20, 50, 60), 6, 0);
  mxw_ndarray_free(g);
  c_free(3, in);
  /* errors */
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(3, 2), a);
  in[1] = c_arr(MXW_INT32, 1, SHP(1), DV(0));
  c_fail("take", in, 2, KV("axis", "2"), "axis=2 is out of range [-2, 1] for a of shape (3, 2)");
  c_free(2, in);
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(0, 2), NULL);
  in[1] = c_arr(MXW_INT32, 1, SHP(1), DV(0));
  c_fail("take", in, 2, NULL, "axis 0 of a (shape (0, 2)) is empty, so no index can be taken from it");
  c_free(2, in);
}

static void test_topk_heap(void **state) {
  (void)state;
  /* row 0: (7 i) mod 16 (a permutation of 0..15); row 1: all 5 but 9 at 11 (ties keep index order) */
  double v[32];
  for (int i = 0; i < 16; i++) v[i] = (7 * i) % 16, v[16 + i] = i == 11 ? 9 : 5;
  mxw_ndarray *x = c_arr(MXW_FLOAT64, 2, SHP(2, 16), v);
  mxw_ndarray *o = c_run1("topk", &x, 1, KV("k", "2"));
  c_expect(o, DV(9, 2, 11, 0), 4, 0); /* 15 at 9, 14 at 2; 9 at 11, then the first 5 */
  mxw_ndarray_free(o);
  o = c_run1("topk", &x, 1, KV("k", "2", "is_ascend", "True", "ret_typ", "value"));
  c_expect(o, DV(0, 1, 5, 5), 4, 0);
  mxw_ndarray_free(o);
  mxw_ndarray *outs[2];
  int nout = 2;
  assert_int_equal(
      c_run("topk", &x, 1, KV("k", "2", "is_ascend", "1", "ret_typ", "both", "dtype", "int32"), outs, &nout), 0);
  c_expect(outs[0], DV(0, 1, 5, 5), 4, 0);
  c_expect(outs[1], DV(0, 7, 0, 1), 4, 0);
  assert_int_equal(mxw_ndarray_dtype(outs[1]), MXW_INT32);
  c_free(2, outs);
  o = c_run1("topk", &x, 1, KV("k", "2", "ret_typ", "mask"));
  double m[32] = {0};
  m[9] = m[2] = 1;
  m[16 + 11] = m[16 + 0] = 1;
  c_expect(o, m, 32, 0);
  mxw_ndarray_free(o);
  /* axis out of range; k beyond the axis */
  c_fail("topk", &x, 1, KV("axis", "2"), "axis=2 is out of range for data of shape (2, 16)");
  c_fail("topk", &x, 1, KV("k", "17"), "k=17 must not exceed the 16 elements along the axis");
  mxw_ndarray_free(x);
}

static void test_argsort_onehot(void **state) {
  (void)state;
  mxw_ndarray *x = c_arr(MXW_FLOAT64, 2, SHP(2, 2), DV(3, 1, 2, 0));
  mxw_ndarray *o = c_run1("argsort", &x, 1, KV("axis", "None", "dtype", "int32"));
  t_expect_shape(o, 1, SHP(4));
  c_expect(o, DV(3, 1, 2, 0), 4, 0);
  mxw_ndarray_free(o);
  o = c_run1("argsort", &x, 1, KV("axis", "0", "is_ascend", "False"));
  c_expect(o, DV(0, 0, 1, 1), 4, 0);
  mxw_ndarray_free(o);
  c_fail("argsort", &x, 1, KV("axis", "-3"), "axis=-3 is out of range");
  mxw_ndarray_free(x);
  /* uint8 indices cannot number 300 elements */
  x = c_arr(MXW_FLOAT32, 1, SHP(300), NULL);
  c_fail("argsort", &x, 1, KV("dtype", "uint8"),
         "index dtype uint8 cannot represent the indices of an axis with 300 elements (at most 255)");
  mxw_ndarray_free(x);
  int32_t out[16];
  assert_int_equal(c_infer("argsort", KV("axis", "None"), 1, (const int32_t[]){2, 3, 5}, out), 0);
  assert_int_equal(out[0], 1);
  assert_int_equal(out[1], 15);
  assert_int_equal(c_infer("argsort", NULL, 1, (const int32_t[]){-1}, out), 0);
  /* one_hot with a float64 output and an off value */
  x = c_arr(MXW_INT32, 1, SHP(2), DV(1, 0));
  o = c_run1("one_hot", &x, 1, KV("depth", "3", "on_value", "2", "off_value", "-1", "dtype", "float64"));
  assert_int_equal(mxw_ndarray_dtype(o), MXW_FLOAT64);
  c_expect(o, DV(-1, 2, -1, 2, -1, -1), 6, 0);
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
}

static void test_gather_nd(void **state) {
  (void)state;
  /* data (3, 2); indices (2, 2) int32: tuples (-1, 0) -> (2, 0) and (1, 1) */
  const double d[6] = {1, 2, 3, 4, 5, 6};
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT64, 2, SHP(3, 2), d), c_arr(MXW_INT32, 2, SHP(2, 2), DV(-1, 1, 0, 1))};
  mxw_ndarray *o = c_run1("gather_nd", in, 2, NULL);
  c_expect(o, DV(5, 4), 2, 0);
  mxw_ndarray_free(o);
  mxw_ndarray *g = c_grad("gather_nd", in, 2, 0, 0, DV(7, 9), NULL);
  c_expect(g, DV(0, 0, 0, 9, 7, 0), 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(in[1]);
  in[1] = c_arr(MXW_INT32, 2, SHP(2, 1), DV(3, 0));
  c_fail("gather_nd", in, 2, NULL, "index 3 is out of bounds for axis 0 with size 3");
  mxw_ndarray_free(in[1]);
  mxw_ndarray_free(in[0]);
  /* _backward_gather_nd(data (2,), indices (2, 2); shape (3, 2)) with int indices; its gradient is gather_nd */
  in[0] = c_arr(MXW_FLOAT64, 1, SHP(2), DV(7, 9));
  in[1] = c_arr(MXW_INT64, 2, SHP(2, 2), DV(-1, -1, 0, 0));
  o = c_run1("_backward_gather_nd", in, 2, KV("shape", "(3, 2)"));
  c_expect(o, DV(0, 0, 0, 0, 16, 0), 6, 0); /* both tuples are (-1, 0) = (2, 0): 7 + 9 */
  mxw_ndarray_free(o);
  c_free(2, in);
  in[0] = c_arr(MXW_FLOAT64, 1, SHP(2), DV(7, 9));
  in[1] = c_arr(MXW_INT64, 2, SHP(2, 2), DV(-1, 1, 0, 1));
  o = c_run1("_backward_gather_nd", in, 2, KV("shape", "(3, 2)"));
  c_expect(o, DV(0, 0, 0, 9, 7, 0), 6, 0);
  mxw_ndarray_free(o);
  g = c_grad("_backward_gather_nd", in, 2, 0, 0, DV(1, 2, 3, 4, 5, 6), KV("shape", "(3, 2)"));
  c_expect(g, DV(5, 4), 2, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(in[1]);
  in[1] = c_arr(MXW_INT64, 2, SHP(2, 2), DV(-4, 1, 0, 1));
  c_fail("_backward_gather_nd", in, 2, KV("shape", "(3, 2)"), "index -4 is out of bounds for axis 0 with size 3");
  c_free(2, in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_where),          cmocka_unit_test(test_take),      cmocka_unit_test(test_topk_heap),
      cmocka_unit_test(test_argsort_onehot), cmocka_unit_test(test_gather_nd),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
