/* FullyConnected, dot and batch_dot through the invoke path: hand-worked values, shape
 * inference (including filling the weight shape) and the error messages. */
#include "mxw_test.h"

/* X = [[1,2,3],[4,5,6]], W = [[1,0,-1],[0.5,0.5,0.5]], b = [10,-1]:
 * X W^T = [[-2, 3], [-2, 7.5]]; + b = [[8, 2], [8, 6.5]]. */
static const float k_x[6] = {1, 2, 3, 4, 5, 6}, k_w[6] = {1, 0, -1, 0.5f, 0.5f, 0.5f}, k_b[2] = {10, -1};

static void test_fc_hand_worked(void **state) {
  (void)state;
  int32_t xs[2] = {2, 3}, ws[2] = {2, 3}, bs[1] = {2}, bs2[2] = {2, 1};
  mxw_ndarray *in[3] = {t_array(2, xs, k_x), t_array(2, ws, k_w), t_array(1, bs, k_b)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("FullyConnected", in, 3, out, &nout, "num_hidden", "2", NULL), 0);
  const int32_t os[2] = {2, 2};
  t_expect_shape(out[0], 2, os);
  t_expect_f32(out[0], (const float[]){8, 2, 8, 6.5f}, 4, 1e-6);
  mxw_ndarray_free(out[0]);

  /* no_bias, by the _npx_ alias */
  out[0] = NULL;
  assert_int_equal(t_invoke("_npx_fully_connected", in, 2, out, &nout, "num_hidden", "2", "no_bias", "True", NULL), 0);
  t_expect_f32(out[0], (const float[]){-2, 3, -2, 7.5f}, 4, 1e-6);
  mxw_ndarray_free(out[0]);

  /* a (num_hidden, 1) bias is accepted */
  mxw_ndarray_free(in[2]);
  in[2] = t_array(2, bs2, k_b);
  out[0] = NULL;
  assert_int_equal(t_invoke("FullyConnected", in, 3, out, &nout, "num_hidden", "2", NULL), 0);
  t_expect_f32(out[0], (const float[]){8, 2, 8, 6.5f}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);
}

/* flatten: data (2, 1, 3) is used as (2, 3); flatten=False: data (1, 2, 3) keeps (1, 2) in front. */
static void test_fc_flatten(void **state) {
  (void)state;
  int32_t xs[3] = {2, 1, 3}, xs2[3] = {1, 2, 3}, ws[2] = {2, 3}, bs[1] = {2};
  mxw_ndarray *in[3] = {t_array(3, xs, k_x), t_array(2, ws, k_w), t_array(1, bs, k_b)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("FullyConnected", in, 3, out, &nout, "num_hidden", "2", NULL), 0);
  t_expect_shape(out[0], 2, (const int32_t[]){2, 2});
  t_expect_f32(out[0], (const float[]){8, 2, 8, 6.5f}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(in[0]);
  in[0] = t_array(3, xs2, k_x);
  out[0] = NULL;
  assert_int_equal(t_invoke("FullyConnected", in, 3, out, &nout, "num_hidden", "2", "flatten", "False", NULL), 0);
  t_expect_shape(out[0], 3, (const int32_t[]){1, 2, 2});
  t_expect_f32(out[0], (const float[]){8, 2, 8, 6.5f}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);
}

/* float64 goes through the double loop; same hand-worked values. */
static void test_fc_float64(void **state) {
  (void)state;
  int32_t xs[2] = {2, 3}, ws[2] = {2, 3}, bs[1] = {2};
  const double x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 0, -1, 0.5, 0.5, 0.5}, b[2] = {10, -1};
  mxw_ndarray *in[3] = {t_array_f64(2, xs, x), t_array_f64(2, ws, w), t_array_f64(1, bs, b)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("FullyConnected", in, 3, out, &nout, "num_hidden", "2", NULL), 0);
  assert_int_equal(mxw_ndarray_dtype(out[0]), MXW_FLOAT64);
  const double *y = (const double *)mxw_ndarray_data(out[0]), want[4] = {8, 2, 8, 6.5};
  for (int i = 0; i < 4; i++) assert_close(y[i], want[i], 1e-15);
  mxw_ndarray_free(out[0]);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);
}

static void test_fc_errors_and_inference(void **state) {
  (void)state;
  int32_t xs[2] = {2, 3}, bad_ws[2] = {2, 4}, ws[2] = {2, 3}, bs[1] = {3};
  mxw_ndarray *in[3] = {t_array(2, xs, k_x), t_array(2, bad_ws, NULL), t_array(1, bs, NULL)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("FullyConnected", in, 3, out, &nout, "num_hidden", "2", NULL), -1);
  assert_error_contains("Operator FullyConnected");
  assert_error_contains("weight has shape (2, 4), expected (2, 3)");
  mxw_ndarray_free(in[1]);
  in[1] = t_array(2, ws, k_w);
  assert_int_equal(t_invoke("FullyConnected", in, 3, out, &nout, "num_hidden", "2", NULL), -1);
  assert_error_contains("bias has shape (3,), expected (2,)");
  assert_int_equal(t_invoke("FullyConnected", in, 3, out, &nout, "num_hidden", "0", NULL), -1);
  assert_error_contains("num_hidden");
  assert_int_equal(t_invoke("FullyConnected", in, 3, out, &nout, NULL), -1);
  assert_error_contains("num_hidden");
  assert_int_equal(t_invoke("FullyConnected", in, 3, out, &nout, "num_hidden", "2", "no_bias", "True", NULL), -1);
  assert_error_contains("expected 2 inputs, got 3");
  /* integer inputs are rejected with the dtype named */
  mxw_ndarray *ia = NULL, *ib = NULL;
  assert_int_equal(mxw_ndarray_create(2, xs, MXW_INT32, &ia), 0);
  assert_int_equal(mxw_ndarray_create(2, ws, MXW_INT32, &ib), 0);
  mxw_ndarray *iin[2] = {ia, ib};
  assert_int_equal(t_invoke("FullyConnected", iin, 2, out, &nout, "num_hidden", "2", "no_bias", "True", NULL), -1);
  assert_error_contains("int32");
  mxw_ndarray_free(ia);
  mxw_ndarray_free(ib);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);

  /* inference with an unknown weight and bias: output (5, 7) from data (5, 2, 3) */
  int op = mxw_op_find("FullyConnected");
  mxw_params *p = NULL;
  const char *k[1] = {"num_hidden"}, *v[1] = {"7"};
  assert_int_equal(mxw_params_create(op, 1, k, v, &p), 0);
  const int32_t ins[] = {3, 5, 2, 3, -1, -1};
  int32_t outs[1 + MXW_MAX_NDIM];
  assert_int_equal(mxw_op_infer_shape(p, 3, ins, outs), 0);
  assert_int_equal(outs[0], 2);
  assert_int_equal(outs[1], 5);
  assert_int_equal(outs[2], 7);
  mxw_params_free(p);
}

/* dot: [[1,2,3],[4,5,6]] . [[1,0],[0,1],[1,1]] = [[4,5],[10,11]]; vectors; transposes; errors. */
static void test_dot(void **state) {
  (void)state;
  int32_t as[2] = {2, 3}, bs[2] = {3, 2}, vs[1] = {3};
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, v[3] = {1, -1, 2};
  mxw_ndarray *A = t_array(2, as, a), *B = t_array(2, bs, b), *V = t_array(1, vs, v), *out[1] = {NULL};
  int nout = 1;
  mxw_ndarray *ab[2] = {A, B};
  assert_int_equal(t_invoke("dot", ab, 2, out, &nout, NULL), 0);
  t_expect_shape(out[0], 2, (const int32_t[]){2, 2});
  t_expect_f32(out[0], (const float[]){4, 5, 10, 11}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  /* A^T (3, 2) . A (2, 3) -> (3, 3): row i = A[0][i]*[1,2,3] + A[1][i]*[4,5,6] */
  mxw_ndarray *aa[2] = {A, A};
  out[0] = NULL;
  assert_int_equal(t_invoke("dot", aa, 2, out, &nout, "transpose_a", "True", NULL), 0);
  t_expect_shape(out[0], 2, (const int32_t[]){3, 3});
  t_expect_f32(out[0], (const float[]){17, 22, 27, 22, 29, 36, 27, 36, 45}, 9, 1e-6);
  mxw_ndarray_free(out[0]);
  /* vector . vector -> (1,): 1 + 1 + 4 */
  mxw_ndarray *vv[2] = {V, V};
  out[0] = NULL;
  assert_int_equal(t_invoke("_sparse_dot", vv, 2, out, &nout, "forward_stype", "None", NULL), 0);
  t_expect_shape(out[0], 1, (const int32_t[]){1});
  t_expect_f32(out[0], (const float[]){6}, 1, 1e-6);
  mxw_ndarray_free(out[0]);
  /* A (2, 3) . v (3,) -> (2,) */
  mxw_ndarray *av[2] = {A, V};
  out[0] = NULL;
  assert_int_equal(t_invoke("dot", av, 2, out, &nout, NULL), 0);
  t_expect_shape(out[0], 1, (const int32_t[]){2});
  t_expect_f32(out[0], (const float[]){5, 11}, 2, 1e-6);
  mxw_ndarray_free(out[0]);
  /* errors: contraction mismatch names both shapes; vectors cannot be transposed */
  mxw_ndarray *bad[2] = {A, A};
  assert_int_equal(t_invoke("dot", bad, 2, out, &nout, NULL), -1);
  assert_error_contains("Operator dot");
  assert_error_contains("lhs (2, 3) and rhs (2, 3)");
  assert_int_equal(t_invoke("dot", vv, 2, out, &nout, "transpose_a", "True", NULL), -1);
  assert_error_contains("transposed");
  assert_int_equal(t_invoke("dot", ab, 2, out, &nout, "forward_stype", "dense", NULL), -1);
  assert_error_contains("forward_stype");
  mxw_ndarray_free(A);
  mxw_ndarray_free(B);
  mxw_ndarray_free(V);
}

/* batch_dot: two batches of (1, 2) . (2, 2): [1,2].[[1,0],[0,1]] = [1,2]; [3,4].[[0,1],[1,0]] = [4,3]. */
static void test_batch_dot(void **state) {
  (void)state;
  int32_t ls[3] = {2, 1, 2}, rs[3] = {2, 2, 2};
  const float l[4] = {1, 2, 3, 4}, r[8] = {1, 0, 0, 1, 0, 1, 1, 0};
  mxw_ndarray *L = t_array(3, ls, l), *R = t_array(3, rs, r), *out[1] = {NULL};
  mxw_ndarray *lr[2] = {L, R};
  int nout = 1;
  assert_int_equal(t_invoke("batch_dot", lr, 2, out, &nout, NULL), 0);
  t_expect_shape(out[0], 3, (const int32_t[]){2, 1, 2});
  t_expect_f32(out[0], (const float[]){1, 2, 4, 3}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  /* transpose_b of a symmetric rhs changes nothing */
  out[0] = NULL;
  assert_int_equal(t_invoke("_npx_batch_dot", lr, 2, out, &nout, "transpose_b", "True", NULL), 0);
  t_expect_f32(out[0], (const float[]){1, 2, 4, 3}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  mxw_ndarray *rl[2] = {R, L};
  assert_int_equal(t_invoke("batch_dot", rl, 2, out, &nout, NULL), -1);
  assert_error_contains("lhs (2, 2, 2) and rhs (2, 1, 2)");
  mxw_ndarray_free(L);
  mxw_ndarray_free(R);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fc_hand_worked),
      cmocka_unit_test(test_fc_flatten),
      cmocka_unit_test(test_fc_float64),
      cmocka_unit_test(test_fc_errors_and_inference),
      cmocka_unit_test(test_dot),
      cmocka_unit_test(test_batch_dot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
