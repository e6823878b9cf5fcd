/* shape_ops.c: slice_like, broadcast_like and reshape_like (values, gradients, inference and
 * every error message), SwapAxis with its gradient and errors, the second-order gradients of the
 * _backward_ ops (slice, slice_axis, slice_like, tile, repeat, which are linear in ograd), the
 * gradients of reverse, depth_to_space / space_to_depth and SliceChannel(squeeze_axis), the
 * accumulation of tile's gradient in float64 and float16, Reshape's error messages (special
 * codes and the deprecated target_shape), Concat's errors and Pad's constant fill on 1- and
 * 2-byte dtypes. Expected values are worked by hand. */
#include "cov_op_helpers.h"

static const double k_iota[24] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};

static void test_slice_like(void **state) {
  (void)state;
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 2, SHP(3, 4), k_iota), c_arr(MXW_FLOAT32, 2, SHP(2, 3), NULL)};
  mxw_ndarray *o = c_run1("slice_like", in, 2, NULL);
  t_expect_shape(o, 2, SHP(2, 3));
  c_expect(o, DV(0, 1, 2, 4, 5, 6), 6, 0);
  mxw_ndarray_free(o);
  mxw_ndarray *g = c_grad("slice_like", in, 2, 0, 0, DV(1, 2, 3, 4, 5, 6), NULL);
  c_expect(g, DV(1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0), 12, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(in[1]);
  /* axes=(-1,): only the last axis */
  in[1] = c_arr(MXW_FLOAT32, 2, SHP(1, 2), NULL);
  o = c_run1("slice_like", in, 2, KV("axes", "(-1,)"));
  t_expect_shape(o, 2, SHP(3, 2));
  c_expect(o, DV(0, 1, 4, 5, 8, 9), 6, 0);
  mxw_ndarray_free(o);
  c_fail("slice_like", in, 2, KV("axes", "(5,)"), "axis 5 is out of range for data (3, 4) or shape_like (1, 2)");
  mxw_ndarray_free(in[1]);
  in[1] = c_arr(MXW_FLOAT32, 2, SHP(4, 4), NULL);
  c_fail("slice_like", in, 2, NULL, "shape_like (4, 4) is larger than data (3, 4) along axis 0");
  c_fail("slice_like", in, 2, KV("axes", "(0,)"), "shape_like (4, 4) is larger than data (3, 4) along axis 0");
  mxw_ndarray_free(in[1]);
  in[1] = c_arr(MXW_FLOAT32, 1, SHP(2), NULL);
  c_fail("slice_like", in, 2, NULL, "differ in rank");
  c_free(2, in);
  /* _backward_slice_like(ograd (2, 3), data (3, 4)) and its gradient, slice_like of the head */
  in[0] = c_arr(MXW_FLOAT64, 2, SHP(2, 3), DV(1, 2, 3, 4, 5, 6));
  in[1] = c_arr(MXW_FLOAT64, 2, SHP(3, 4), NULL);
  o = c_run1("_backward_slice_like", in, 2, NULL);
  c_expect(o, DV(1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0), 12, 0);
  mxw_ndarray_free(o);
  g = c_grad("_backward_slice_like", in, 2, 0, 0, k_iota, NULL);
  c_expect(g, DV(0, 1, 2, 4, 5, 6), 6, 0);
  mxw_ndarray_free(g);
  c_free(2, in);
  int32_t out[16];
  assert_int_equal(c_infer("slice_like", NULL, 2, (const int32_t[]){2, 3, 4, -1}, out), 0);
  assert_int_equal(out[0], -1);
}

static void test_broadcast_like(void **state) {
  (void)state;
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 2, SHP(1, 3), DV(1, 2, 3)), c_arr(MXW_FLOAT32, 2, SHP(2, 3), NULL)};
  mxw_ndarray *o = c_run1("broadcast_like", in, 2, NULL);
  c_expect(o, DV(1, 2, 3, 1, 2, 3), 6, 0);
  mxw_ndarray_free(o);
  mxw_ndarray *g = c_grad("broadcast_like", in, 2, 0, 0, DV(1, 2, 3, 4, 5, 6), NULL);
  c_expect(g, DV(5, 7, 9), 3, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(in[1]);
  /* lhs axis 0 takes rhs axis 1's size 4 */
  in[1] = c_arr(MXW_FLOAT32, 2, SHP(3, 4), NULL);
  o = c_run1("broadcast_like", in, 2, KV("lhs_axes", "(0,)", "rhs_axes", "(1,)"));
  t_expect_shape(o, 2, SHP(4, 3));
  c_expect(o, DV(1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3), 12, 0);
  mxw_ndarray_free(o);
  c_fail("broadcast_like", in, 2, KV("lhs_axes", "(3,)", "rhs_axes", "(1,)"),
         "lhs_axes: axis 3 is out of range for lhs of shape (1, 3)");
  c_fail("broadcast_like", in, 2, KV("lhs_axes", "(0,)", "rhs_axes", "(5,)"),
         "rhs_axes: axis 5 is out of range for rhs of shape (3, 4)");
  c_fail("broadcast_like", in, 2, KV("lhs_axes", "(1,)", "rhs_axes", "(1,)"),
         "axis 1 of lhs (1, 3) has size 3 and cannot be broadcast to 4 (axis 1 of rhs (3, 4))");
  c_fail("broadcast_like", in, 2, NULL,
         "lhs of shape (1, 3) cannot be broadcast like rhs of shape (3, 4): axis 1 has size 3 (only size-1 axes grow)");
  c_bad_params("broadcast_like", KV("lhs_axes", "(0, 1)", "rhs_axes", "(1,)"), "must have the same length");
  c_bad_params("broadcast_like", KV("lhs_axes", "()", "rhs_axes", "()"), "lhs_axes and rhs_axes must not be empty");
  mxw_ndarray_free(in[1]);
  in[1] = c_arr(MXW_FLOAT32, 1, SHP(3), NULL);
  c_fail("broadcast_like", in, 2, NULL, "(ranks differ)");
  c_free(2, in);
  int32_t out[16];
  assert_int_equal(c_infer("broadcast_like", NULL, 2, (const int32_t[]){-1, 2, 3, 4}, out), 0);
  assert_int_equal(out[0], -1);
}

static void test_reshape_like(void **state) {
  (void)state;
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 2, SHP(2, 3), k_iota), c_arr(MXW_FLOAT32, 2, SHP(3, 2), NULL)};
  mxw_ndarray *o = c_run1("reshape_like", in, 2, NULL);
  t_expect_shape(o, 2, SHP(3, 2));
  c_expect(o, k_iota, 6, 0);
  mxw_ndarray_free(o);
  mxw_ndarray *g = c_grad("reshape_like", in, 2, 0, 0, DV(6, 5, 4, 3, 2, 1), NULL);
  t_expect_shape(g, 2, SHP(2, 3));
  c_expect(g, DV(6, 5, 4, 3, 2, 1), 6, 0);
  mxw_ndarray_free(g);
  c_free(2, in);
  /* lhs (2, 6): axes [1, 2) replaced by rhs axes [0, 2) of (6, 1): (2, 6, 1) */
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(2, 6), k_iota);
  in[1] = c_arr(MXW_FLOAT32, 2, SHP(6, 1), NULL);
  o = c_run1("reshape_like", in, 2, KV("lhs_begin", "-1", "lhs_end", "None", "rhs_begin", "0", "rhs_end", "2"));
  t_expect_shape(o, 3, SHP(2, 6, 1));
  mxw_ndarray_free(o);
  c_fail("reshape_like", in, 2, KV("lhs_begin", "3"),
         "lhs_begin=3, lhs_end=None is not a non-empty axis range of the lhs (2 dimensions)");
  c_fail("reshape_like", in, 2, KV("rhs_begin", "1", "rhs_end", "1"),
         "rhs_begin=1, rhs_end=1 is not a non-empty axis range of the rhs (2 dimensions)");
  c_fail("reshape_like", in, 2, KV("lhs_begin", "1", "rhs_begin", "1"),
         "cannot reshape lhs of shape (2, 6) like rhs of shape (6, 1): the result (2, 1) has 2 elements, lhs 12");
  c_free(2, in);
  /* the result beyond 10 dimensions */
  in[0] = c_arr(MXW_FLOAT32, 6, SHP(1, 1, 1, 1, 1, 1), NULL);
  in[1] = c_arr(MXW_FLOAT32, 6, SHP(1, 1, 1, 1, 1, 1), NULL);
  c_fail("reshape_like", in, 2, KV("lhs_begin", "0", "lhs_end", "1"), "the result would have 11 dimensions");
  c_free(2, in);
  int32_t out[16];
  assert_int_equal(c_infer("reshape_like", NULL, 2, (const int32_t[]){-1, 2, 3, 4}, out), 0);
  assert_int_equal(out[0], -1);
}

static void test_swapaxis_and_second_order(void **state) {
  (void)state;
  mxw_ndarray *x = c_arr(MXW_FLOAT32, 2, SHP(2, 3), k_iota);
  mxw_ndarray *o = c_run1("SwapAxis", &x, 1, KV("dim1", "0", "dim2", "1"));
  t_expect_shape(o, 2, SHP(3, 2));
  c_expect(o, DV(0, 3, 1, 4, 2, 5), 6, 0);
  mxw_ndarray_free(o);
  mxw_ndarray *g = c_grad("SwapAxis", &x, 1, 0, 0, DV(1, 2, 3, 4, 5, 6), KV("dim1", "1", "dim2", "0"));
  c_expect(g, DV(1, 3, 5, 2, 4, 6), 6, 0);
  mxw_ndarray_free(g);
  c_fail("SwapAxis", &x, 1, KV("dim1", "2"), "dim1=2 is out of range for 2 dimensions");
  c_fail("SwapAxis", &x, 1, KV("dim2", "-3"), "dim2=-3 is out of range for 2 dimensions");
  /* reverse, depth_to_space / space_to_depth gradients: the same permutation backwards */
  g = c_grad("reverse", &x, 1, 0, 0, DV(1, 2, 3, 4, 5, 6), KV("axis", "(1,)"));
  c_expect(g, DV(3, 2, 1, 6, 5, 4), 6, 0);
  mxw_ndarray_free(g);
  c_fail("reverse", &x, 1, KV("axis", "(2,)"), "axis 2 is out of range for input of shape (2, 3)");
  mxw_ndarray_free(x);
  /* depth_to_space (1, 4, 1, 1) block 2 -> (1, 1, 2, 2): element order kept; gradient likewise */
  x = c_arr(MXW_FLOAT32, 4, SHP(1, 4, 1, 1), DV(1, 2, 3, 4));
  g = c_grad("depth_to_space", &x, 1, 0, 0, DV(10, 20, 30, 40), KV("block_size", "2"));
  c_expect(g, DV(10, 20, 30, 40), 4, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
  x = c_arr(MXW_FLOAT32, 4, SHP(1, 1, 2, 2), DV(1, 2, 3, 4));
  g = c_grad("space_to_depth", &x, 1, 0, 0, DV(10, 20, 30, 40), KV("block_size", "2"));
  c_expect(g, DV(10, 20, 30, 40), 4, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
  /* SliceChannel with squeeze_axis: the gradient stacks the heads back along the axis */
  x = c_arr(MXW_FLOAT32, 2, SHP(2, 2), DV(1, 2, 3, 4));
  g = c_grad("SliceChannel", &x, 1, 0, 1, DV(7, 8), KV("num_outputs", "2", "axis", "1", "squeeze_axis", "True"));
  c_expect(g, DV(0, 7, 0, 8), 4, 0);
  mxw_ndarray_free(g);
  c_fail("SliceChannel", &x, 1, KV("num_outputs", "2", "axis", "3"),
         "axis=3 is out of range for input of shape (2, 2)");
  mxw_ndarray_free(x);

  /* the backward ops are linear in ograd: their gradients are the forward ops again */
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 1, SHP(2), DV(1, 2)), c_arr(MXW_FLOAT32, 1, SHP(4), NULL)};
  g = c_grad("_backward_slice", in, 2, 0, 0, DV(1, 2, 3, 4), KV("begin", "(1,)", "end", "(3,)"));
  c_expect(g, DV(2, 3), 2, 0);
  mxw_ndarray_free(g);
  g = c_grad("_backward_slice_axis", in, 2, 0, 0, DV(1, 2, 3, 4), KV("axis", "0", "begin", "2", "end", "None"));
  c_expect(g, DV(3, 4), 2, 0);
  mxw_ndarray_free(g);
  c_free(2, in);
  /* _backward_tile(ograd (4,), data (2,)) reps 2: its gradient tiles the head */
  in[0] = c_arr(MXW_FLOAT32, 1, SHP(4), DV(1, 2, 3, 4));
  in[1] = c_arr(MXW_FLOAT32, 1, SHP(2), NULL);
  g = c_grad("_backward_tile", in, 2, 0, 0, DV(5, 6), KV("reps", "(2,)"));
  c_expect(g, DV(5, 6, 5, 6), 4, 0);
  mxw_ndarray_free(g);
  g = c_grad("_backward_repeat", in, 2, 0, 0, DV(5, 6), KV("repeats", "2", "axis", "0"));
  c_expect(g, DV(5, 5, 6, 6), 4, 0);
  mxw_ndarray_free(g);
  c_free(2, in);
  /* repeat: an axis out of range; repeats 0 of a flattened input */
  x = c_arr(MXW_FLOAT32, 2, SHP(2, 2), DV(1, 2, 3, 4));
  c_fail("repeat", &x, 1, KV("repeats", "2", "axis", "2"), "axis=2 is out of range for input of shape (2, 2)");
  o = c_run1("repeat", &x, 1, KV("repeats", "0"));
  t_expect_shape(o, 1, SHP(0));
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
}

/* tile's gradient sums the copies: float64 and float16 go through the other accumulation loops. */
static void test_tile_accumulation(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT16 : MXW_FLOAT64;
    mxw_ndarray *x = c_arr(dt, 2, SHP(2, 2), DV(1, 2, 3, 4));
    mxw_ndarray *g = c_grad("tile", &x, 1, 0, 0, DV(1, 2, 3, 4, 5, 6, 7, 8), KV("reps", "(1, 2)"));
    c_expect(g, DV(1 + 3, 2 + 4, 5 + 7, 6 + 8), 4, 0);
    mxw_ndarray_free(g);
    mxw_ndarray_free(x);
    x = c_arr(dt, 2, SHP(1, 2), DV(1, 2));
    g = c_grad("broadcast_to", &x, 1, 0, 0, DV(1, 2, 3, 4, 5, 6), KV("shape", "(3, 2)"));
    c_expect(g, DV(9, 12), 2, 0);
    mxw_ndarray_free(g);
    mxw_ndarray_free(x);
  }
}

static void test_reshape_errors(void **state) {
  (void)state;
  mxw_ndarray *x = c_arr(MXW_FLOAT32, 1, SHP(6), k_iota);
  c_fail("Reshape", &x, 1, KV("shape", "(-4, 4, -1)"), "-4 at position 0 cannot split 6 by 4");
  c_fail("Reshape", &x, 1, KV("shape", "(-4, -1, 4)"), "-4 at position 0 cannot split 6 by 4");
  c_fail("Reshape", &x, 1, KV("target_shape", "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 6)"), "more than 10 dimensions");
  c_fail("Reshape", &x, 1, KV("target_shape", "(-2, 3)"), "sizes must be >= 0");
  c_fail("Reshape", &x, 1, KV("target_shape", "(4, 0)"),
         "cannot reshape input of shape (6,) with target_shape=(4, 0): the 0 cannot be inferred");
  c_fail("Reshape", &x, 1, NULL, "no target shape for input of shape (6,): give shape=(...)");
  /* target_shape with one 0 inferred; keep_highest keeps dim 0 */
  mxw_ndarray *o = c_run1("Reshape", &x, 1, KV("target_shape", "(0, 2)"));
  t_expect_shape(o, 2, SHP(3, 2));
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
  x = c_arr(MXW_FLOAT32, 2, SHP(2, 6), k_iota);
  o = c_run1("Reshape", &x, 1, KV("target_shape", "(5, 0, 3)", "keep_highest", "True"));
  t_expect_shape(o, 3, SHP(2, 2, 3));
  c_expect(o, k_iota, 12, 0);
  mxw_ndarray_free(o);
  mxw_ndarray *g = c_grad("Reshape", &x, 1, 0, 0, k_iota, KV("shape", "(3, -1)"));
  t_expect_shape(g, 2, SHP(2, 6));
  c_expect(g, k_iota, 12, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
  int32_t out[16];
  /* data unknown, output known: the one unknown data dim is filled */
  assert_int_equal(c_infer("Reshape", KV("shape", "(3, 4)"), 1, (const int32_t[]){-1}, out), 0);
}

static void test_concat_pad(void **state) {
  (void)state;
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 2, SHP(2, 2), DV(1, 2, 3, 4)), c_arr(MXW_FLOAT32, 1, SHP(2), DV(5, 6))};
  c_fail("Concat", in, 2, KV("num_args", "2"), "all inputs must have the same rank");
  mxw_ndarray_free(in[1]);
  in[1] = c_arr(MXW_FLOAT32, 2, SHP(2, 0), NULL);
  c_fail("Concat", in, 2, KV("num_args", "2", "dim", "2"), "dim=2 is out of range for inputs of 2 dimensions");
  mxw_ndarray *g = c_grad("Concat", in, 2, 1, 0, DV(1, 2, 3, 4), KV("num_args", "2"));
  assert_int_equal((int)mxw_ndarray_size(g), 0);
  mxw_ndarray_free(g);
  c_free(2, in);
  /* Pad constant on uint8 and float16 (1- and 2-byte fills) */
  for (int d = 0; d < 3; d++) {
    const int dt = d == 0 ? MXW_UINT8 : d == 1 ? MXW_FLOAT16 : MXW_INT64;
    mxw_ndarray *x = c_arr(dt, 4, SHP(1, 1, 1, 2), DV(1, 2));
    mxw_ndarray *o =
        c_run1("Pad", &x, 1, KV("mode", "constant", "pad_width", "(0, 0, 0, 0, 0, 0, 1, 1)", "constant_value", "7"));
    c_expect(o, DV(7, 1, 2, 7), 4, 0);
    mxw_ndarray_free(o);
    mxw_ndarray_free(x);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slice_like),        cmocka_unit_test(test_broadcast_like),
      cmocka_unit_test(test_reshape_like),      cmocka_unit_test(test_swapaxis_and_second_order),
      cmocka_unit_test(test_tile_accumulation), cmocka_unit_test(test_reshape_errors),
      cmocka_unit_test(test_concat_pad),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
