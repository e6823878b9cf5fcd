/* Gradients of shape_ops, indexing and slice_assign through the C autograd API, against
 * hand-worked values, so that the backward kernels (_backward_slice, _backward_tile,
 * _backward_repeat, _backward_Pad, _backward_take, _backward_topk, _backward_gather_nd, ...) run
 * under ASan/UBSan on odd shapes, negative steps, wrapped and repeated indices. The JS tests
 * (tests/js/grad_shape_ops, grad_indexing) check every op against finite differences. */
#include "mxw_test.h"

/* The gradient of input 0 (float32 x) of op `name` (extra inputs ins[1..nin-1] fixed) with head
 * gradient `head` on output `which`; attributes as key/value strings. */
static mxw_ndarray *grad_of(const char *name, mxw_ndarray **ins, int nin, int which, const float *head,
                            const char **kv) {
  mxw_ndarray *g0 = NULL;
  int32_t shape[MXW_MAX_NDIM];
  mxw_ndarray_shape(ins[0], shape);
  if (mxw_ndarray_create(mxw_ndarray_ndim(ins[0]), shape, MXW_FLOAT32, &g0) != 0) fail_msg("%s", mxw_get_last_error());
  int32_t req = 1;
  assert_int_equal(mxw_autograd_mark_variables(1, ins, &g0, &req), 0);
  const char *keys[16], *vals[16];
  int n = 0;
  for (; kv && kv[2 * n]; n++) {
    keys[n] = kv[2 * n];
    vals[n] = kv[2 * n + 1];
  }
  int op = mxw_op_find(name);
  assert_true(op >= 0);
  mxw_params *p = NULL;
  assert_int_equal(mxw_params_create(op, n, keys, vals, &p), 0);
  mxw_ndarray *outs[8] = {NULL};
  int nout = 8;
  mxw_autograd_set_recording(1);
  int rc = mxw_op_invoke(op, p, nin, ins, &nout, outs);
  mxw_autograd_set_recording(0);
  mxw_params_free(p);
  if (rc != 0) fail_msg("%s: %s", name, mxw_get_last_error());
  int32_t os[MXW_MAX_NDIM];
  mxw_ndarray_shape(outs[which], os);
  mxw_ndarray *h = t_array(mxw_ndarray_ndim(outs[which]), os, head);
  mxw_ndarray *g = NULL;
  if (mxw_autograd_grad(1, &outs[which], &h, 1, ins, 0, 1, &g) != 0)
    fail_msg("%s backward: %s", name, mxw_get_last_error());
  for (int i = 0; i < nout; i++) mxw_ndarray_free(outs[i]);
  mxw_ndarray_free(h);
  mxw_ndarray_free(g0);
  return g;
}
#define KV(...) ((const char *[]){__VA_ARGS__, NULL})

static void test_slices(void **state) {
  (void)state;
  /* x (3, 4); x[2:0:-1, ::3] reads rows 2, 1 and columns 0, 3 */
  mxw_ndarray *x = t_array(2, (int32_t[]){3, 4}, NULL);
  mxw_ndarray *g = grad_of("slice", &x, 1, 0, (float[]){1, 2, 3, 4},
                           KV("begin", "(2, None)", "end", "(0, None)", "step", "(-1, 3)"));
  t_expect_f32(g, (float[]){0, 0, 0, 0, 3, 0, 0, 4, 1, 0, 0, 2}, 12, 0);
  mxw_ndarray_free(g);
  g = grad_of("slice_axis", &x, 1, 0, (float[]){1, 2, 3, 4, 5, 6}, KV("axis", "-1", "begin", "-3", "end", "-1"));
  t_expect_f32(g, (float[]){0, 1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0}, 12, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
}

static void test_repeating_ops(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(2, (int32_t[]){2, 3}, NULL);
  float ones[36];
  for (int i = 0; i < 36; i++) ones[i] = 1;
  /* tile (2, 3) by (3, 1, 2): every element 6 times */
  mxw_ndarray *g = grad_of("tile", &x, 1, 0, ones, KV("reps", "(3, 1, 2)"));
  t_expect_f32(g, (float[]){6, 6, 6, 6, 6, 6}, 6, 0);
  mxw_ndarray_free(g);
  /* repeat along axis 1 twice: head 1..12 pairs up */
  g = grad_of("repeat", &x, 1, 0, (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, KV("repeats", "2", "axis", "1"));
  t_expect_f32(g, (float[]){3, 7, 11, 15, 19, 23}, 6, 0);
  mxw_ndarray_free(g);
  /* broadcast_to (2, 3) from (1, 3) sums rows */
  mxw_ndarray *r = t_array(2, (int32_t[]){1, 3}, NULL);
  g = grad_of("broadcast_to", &r, 1, 0, (float[]){1, 2, 3, 4, 5, 6}, KV("shape", "(2, 3)"));
  t_expect_f32(g, (float[]){5, 7, 9}, 3, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(r);
  mxw_ndarray_free(x);
  /* Pad one row [a, b, c]: reflect (2, 2) is [c, b, a, b, c, b, a], edge (1, 2) is [a, a, b, c, c, c] */
  mxw_ndarray *p = t_array(4, (int32_t[]){1, 1, 1, 3}, NULL);
  g = grad_of("Pad", &p, 1, 0, (float[]){1, 2, 3, 4, 5, 6, 7},
              KV("mode", "reflect", "pad_width", "(0, 0, 0, 0, 0, 0, 2, 2)"));
  t_expect_f32(g, (float[]){3 + 7, 2 + 4 + 6, 1 + 5}, 3, 0);
  mxw_ndarray_free(g);
  g = grad_of("Pad", &p, 1, 0, (float[]){1, 2, 3, 4, 5, 6},
              KV("mode", "edge", "pad_width", "(0, 0, 0, 0, 0, 0, 1, 2)"));
  t_expect_f32(g, (float[]){3, 3, 15}, 3, 0);
  mxw_ndarray_free(g);
  g = grad_of("Pad", &p, 1, 0, (float[]){1, 2, 3, 4, 5, 6},
              KV("mode", "constant", "pad_width", "(0, 0, 0, 0, 0, 0, 1, 2)"));
  t_expect_f32(g, (float[]){2, 3, 4}, 3, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(p);
}

static void test_joins_and_permutations(void **state) {
  (void)state;
  mxw_ndarray *a = t_array(2, (int32_t[]){2, 1}, NULL), *b = t_array(2, (int32_t[]){2, 2}, NULL);
  mxw_ndarray *ab[2] = {a, b};
  /* Concat along 1: a gets column 0 of the head */
  mxw_ndarray *g = grad_of("Concat", ab, 2, 0, (float[]){1, 2, 3, 4, 5, 6}, KV("num_args", "2", "dim", "1"));
  t_expect_f32(g, (float[]){1, 4}, 2, 0);
  mxw_ndarray_free(g);
  /* transpose (2, 2, 1) -> axes (2, 0, 1) and back */
  mxw_ndarray *x = t_array(3, (int32_t[]){2, 3, 1}, NULL);
  g = grad_of("transpose", &x, 1, 0, (float[]){1, 2, 3, 4, 5, 6}, KV("axes", "(2, 0, 1)"));
  t_expect_f32(g, (float[]){1, 2, 3, 4, 5, 6}, 6, 0);
  mxw_ndarray_free(g);
  g = grad_of("transpose", &x, 1, 0, (float[]){1, 2, 3, 4, 5, 6}, KV("axes", "(1, 0, 2)"));
  t_expect_f32(g, (float[]){1, 3, 5, 2, 4, 6}, 6, 0);
  mxw_ndarray_free(g);
  /* split into 3 along 1, output 2 only */
  g = grad_of("SliceChannel", &x, 1, 2, (float[]){7, 8}, KV("num_outputs", "3", "axis", "1"));
  t_expect_f32(g, (float[]){0, 0, 7, 0, 0, 8}, 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
  mxw_ndarray_free(a);
  mxw_ndarray_free(b);
}

static void test_indexing(void **state) {
  (void)state;
  /* take rows 4 (wraps to 1), -1 (wraps to 2), 1 of a (3, 2) array */
  mxw_ndarray *x = t_array(2, (int32_t[]){3, 2}, NULL);
  mxw_ndarray *idx = t_array(1, (int32_t[]){3}, (float[]){4, -1, 1});
  mxw_ndarray *in[2] = {x, idx};
  mxw_ndarray *g = grad_of("take", in, 2, 0, (float[]){1, 2, 3, 4, 5, 6}, KV("mode", "wrap"));
  t_expect_f32(g, (float[]){0, 0, 6, 8, 3, 4}, 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(idx);
  /* gather_nd (1, 1), (2, 0), (1, 1): repeated tuples accumulate */
  idx = t_array(2, (int32_t[]){2, 3}, (float[]){1, 2, 1, 1, 0, 1});
  in[1] = idx;
  g = grad_of("gather_nd", in, 2, 0, (float[]){1, 2, 3}, NULL);
  t_expect_f32(g, (float[]){0, 0, 0, 4, 2, 0}, 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(idx);
  mxw_ndarray_free(x);
  /* topk values: the 2 largest per row of [[3, 9, 1], [5, 2, 8]] */
  mxw_ndarray *y = t_array(2, (int32_t[]){2, 3}, (float[]){3, 9, 1, 5, 2, 8});
  g = grad_of("topk", &y, 1, 0, (float[]){10, 20, 30, 40}, KV("k", "2", "ret_typ", "value"));
  t_expect_f32(g, (float[]){20, 10, 0, 40, 0, 30}, 6, 0);
  mxw_ndarray_free(g);
  /* sort along axis 0 */
  g = grad_of("sort", &y, 1, 0, (float[]){1, 2, 3, 4, 5, 6}, KV("axis", "0"));
  t_expect_f32(g, (float[]){1, 5, 3, 4, 2, 6}, 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(y);
}

static void test_slice_assign(void **state) {
  (void)state;
  mxw_ndarray *lhs = t_array(2, (int32_t[]){2, 3}, NULL), *rhs = t_array(2, (int32_t[]){2, 1}, NULL);
  mxw_ndarray *in[2] = {lhs, rhs};
  /* lhs[:, 2:0:-2] = rhs: column 2 overwritten */
  mxw_ndarray *g = grad_of("_slice_assign", in, 2, 0, (float[]){1, 2, 3, 4, 5, 6},
                           KV("begin", "(None, 2)", "end", "(None, 0)", "step", "(None, -2)"));
  t_expect_f32(g, (float[]){1, 2, 0, 4, 5, 0}, 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(lhs);
  mxw_ndarray_free(rhs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slices),
      cmocka_unit_test(test_repeating_ops),
      cmocka_unit_test(test_joins_and_permutations),
      cmocka_unit_test(test_indexing),
      cmocka_unit_test(test_slice_assign),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
