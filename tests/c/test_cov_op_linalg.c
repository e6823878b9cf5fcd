/* linalg.c's gradients and edge paths: FullyConnected's backward (flatten on 3-D data, a
 * (num_hidden, 1) bias, no_bias; float32, float64 and float16), _backward_FullyConnected called
 * directly, dot and batch_dot gradients for every transpose_a / transpose_b combination, and the
 * shape errors. References are plain float64 loops of MXNet's formulas: FC y = x w^T + b,
 * dx = dy w, dw = dy^T x, db = sum_rows dy; dot's gradients by unit perturbation of a float64
 * loss sum(head * op(A) op(B)) (exact: the loss is linear in each operand). */
#include "cov_op_helpers.h"

/* x (R, K), w (H, K), head (R, H) -> dx (R, K), dw (H, K), db (H) */
static void ref_fc_grads(int R, int K, int H, const double *x, const double *w, const double *hd, double *dx,
                         double *dw, double *db) {
  for (int r = 0; r < R; r++)
    for (int k = 0; k < K; k++) {
      double s = 0;
      for (int j = 0; j < H; j++) s += hd[r * H + j] * w[j * K + k];
      dx[r * K + k] = s;
    }
  for (int j = 0; j < H; j++) {
    for (int k = 0; k < K; k++) {
      double s = 0;
      for (int r = 0; r < R; r++) s += hd[r * H + j] * x[r * K + k];
      dw[j * K + k] = s;
    }
    double s = 0;
    for (int r = 0; r < R; r++) s += hd[r * H + j];
    db[j] = s;
  }
}

static void test_fc_backward(void **state) {
  (void)state;
  /* data (2, 2, 3) flattened to (2, 6); weight (3, 6); bias (3, 1) */
  double x[12], w[18], b[3] = {0.5, -1, 2}, hd[6] = {1, -2, 0.5, 3, 0.25, -1};
  for (int i = 0; i < 12; i++) x[i] = 0.1 * i - 0.4;
  for (int i = 0; i < 18; i++) w[i] = 0.05 * (i % 7) - 0.2 + 0.01 * i;
  double dx[12], dw[18], db[3];
  ref_fc_grads(2, 6, 3, x, w, hd, dx, dw, db);
  static const int dts[] = {MXW_FLOAT32, MXW_FLOAT64, MXW_FLOAT16};
  for (int d = 0; d < 3; d++) {
    const double tol = dts[d] == MXW_FLOAT16 ? 2e-2 : 1e-5;
    mxw_ndarray *in[3] = {c_arr(dts[d], 3, SHP(2, 2, 3), x), c_arr(dts[d], 2, SHP(3, 6), w),
                          c_arr(dts[d], 2, SHP(3, 1), b)};
    const char **kv = KV("num_hidden", "3");
    mxw_ndarray *g = c_grad("FullyConnected", in, 3, 0, 0, hd, kv);
    t_expect_shape(g, 3, SHP(2, 2, 3));
    c_expect(g, dx, 12, tol);
    mxw_ndarray_free(g);
    g = c_grad("FullyConnected", in, 3, 1, 0, hd, kv);
    c_expect(g, dw, 18, tol);
    mxw_ndarray_free(g);
    g = c_grad("FullyConnected", in, 3, 2, 0, hd, kv);
    t_expect_shape(g, 2, SHP(3, 1));
    c_expect(g, db, 3, tol);
    mxw_ndarray_free(g);
    /* no_bias: the weight gradient alone */
    g = c_grad("FullyConnected", in, 2, 1, 0, hd, KV("num_hidden", "3", "no_bias", "True"));
    c_expect(g, dw, 18, tol);
    mxw_ndarray_free(g);
    c_free(3, in);
  }
  /* _backward_FullyConnected(ograd, data, weight) directly: (dx, dw, db); no_bias: (dx, dw) */
  for (int d = 0; d < 2; d++) {
    mxw_ndarray *in[3] = {c_arr(dts[d], 2, SHP(2, 3), hd), c_arr(dts[d], 2, SHP(2, 6), x),
                          c_arr(dts[d], 2, SHP(3, 6), w)};
    mxw_ndarray *out[3];
    int nout = 3;
    assert_int_equal(c_run("_backward_FullyConnected", in, 3, KV("num_hidden", "3"), out, &nout), 0);
    assert_int_equal(nout, 3);
    c_expect(out[0], dx, 12, 1e-5);
    c_expect(out[1], dw, 18, 1e-5);
    c_expect(out[2], db, 3, 1e-5);
    c_free(3, out);
    nout = 3;
    assert_int_equal(c_run("_backward_FullyConnected", in, 3, KV("num_hidden", "3", "no_bias", "1"), out, &nout), 0);
    assert_int_equal(nout, 2);
    c_expect(out[1], dw, 18, 1e-5);
    c_free(2, out);
    /* the weight half alone */
    nout = 3;
    assert_int_equal(c_run("_backward_FullyConnected_weight", in, 2, KV("num_hidden", "3"), out, &nout), 0);
    assert_int_equal(nout, 2);
    c_expect(out[0], dw, 18, 1e-5);
    c_expect(out[1], db, 3, 1e-5);
    c_free(2, out);
    c_free(3, in);
  }
  /* flatten=False on 3-D data: rows are every leading index */
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT64, 3, SHP(2, 1, 6), x), c_arr(MXW_FLOAT64, 2, SHP(3, 6), w)};
  mxw_ndarray *g = c_grad("FullyConnected", in, 2, 0, 0, hd, KV("num_hidden", "3", "no_bias", "1", "flatten", "0"));
  c_expect(g, dx, 12, 1e-12);
  mxw_ndarray_free(g);
  c_free(2, in);
}

/* Inference fills the weight's unknown input dim from data, and the data's last dim from the weight. */
static void test_fc_inference(void **state) {
  (void)state;
  int32_t out[64];
  /* data (4, -1) unknown last dim (0 means unknown in MXNet's shapes here: -1), weight (5, 7) */
  assert_int_equal(
      c_infer("FullyConnected", KV("num_hidden", "5", "no_bias", "1"), 2, (const int32_t[]){2, 4, -1, 2, 5, 7}, out),
      0);
  assert_int_equal(out[0], 2);
  assert_int_equal(out[1], 4);
  assert_int_equal(out[2], 5);
  /* _backward_FullyConnected's shapes: data's, weight's, (num_hidden,) */
  assert_int_equal(
      c_infer("_backward_FullyConnected", KV("num_hidden", "5"), 3, (const int32_t[]){2, 4, 5, 2, 4, 7, 2, 5, 7}, out),
      0);
  /* packed: (4, 7) (5, 7) (5,) */
  const int32_t want[8] = {2, 4, 7, 2, 5, 7, 1, 5};
  for (int i = 0; i < 8; i++) assert_int_equal(out[i], want[i]);
  /* the weight half: (num_hidden, prod(data[1:])) and (num_hidden,); data unknown: nothing */
  assert_int_equal(
      c_infer("_backward_FullyConnected_weight", KV("num_hidden", "5"), 2, (const int32_t[]){2, 4, 5, 3, 4, 2, 3}, out),
      0);
  assert_int_equal(out[0], 2);
  assert_int_equal(out[1], 5);
  assert_int_equal(out[2], 6);
  assert_int_equal(c_infer("_backward_FullyConnected_weight", KV("num_hidden", "5", "no_bias", "1"), 2,
                           (const int32_t[]){2, 4, 5, -1}, out),
                   0);
  assert_int_equal(out[0], -1);
}

/* op(A) (M, K) op(B) (K, N), A stored (M, K) or (K, M) when ta, B (K, N) or (N, K) when tb. */
static double ref_loss(int ta, int tb, int M, int K, int N, const double *A, const double *B, const double *H) {
  double L = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += (ta ? A[k * M + i] : A[i * K + k]) * (tb ? B[j * K + k] : B[k * N + j]);
      L += H[i * N + j] * s;
    }
  return L;
}

static void test_dot_gradients(void **state) {
  (void)state;
  const int M = 2, K = 3, N = 4;
  double A[6], B[12], H[8];
  for (int i = 0; i < 6; i++) A[i] = 0.5 * i - 1;
  for (int i = 0; i < 12; i++) B[i] = 0.25 * (i % 5) - 0.3 * (i % 2);
  for (int i = 0; i < 8; i++) H[i] = 1 + 0.5 * i - (i % 3);
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      const char **kv = KV("transpose_a", ta ? "True" : "False", "transpose_b", tb ? "True" : "False");
      const int32_t *as = ta ? SHP(K, M) : SHP(M, K), *bs = tb ? SHP(N, K) : SHP(K, N);
      double dA[6], dB[12], base = ref_loss(ta, tb, M, K, N, A, B, H);
      for (int i = 0; i < 6; i++) {
        double P[6];
        memcpy(P, A, sizeof P);
        P[i] += 1;
        dA[i] = ref_loss(ta, tb, M, K, N, P, B, H) - base;
      }
      for (int i = 0; i < 12; i++) {
        double P[12];
        memcpy(P, B, sizeof P);
        P[i] += 1;
        dB[i] = ref_loss(ta, tb, M, K, N, A, P, H) - base;
      }
      for (int d = 0; d < 2; d++) {
        int dt = d ? MXW_FLOAT32 : MXW_FLOAT64;
        double tol = d ? 1e-5 : 1e-12;
        mxw_ndarray *in[2] = {c_arr(dt, 2, as, A), c_arr(dt, 2, bs, B)};
        mxw_ndarray *g = c_grad("dot", in, 2, 0, 0, H, kv);
        c_expect(g, dA, 6, tol);
        mxw_ndarray_free(g);
        g = c_grad("dot", in, 2, 1, 0, H, kv);
        c_expect(g, dB, 12, tol);
        mxw_ndarray_free(g);
        c_free(2, in);
        /* batch_dot with a batch of 2 (the same pair twice, heads H and 2 H) */
        double A2[12], B2[24], H2[16], dA2[12], dB2[24];
        for (int i = 0; i < 6; i++) A2[i] = A2[6 + i] = A[i], dA2[i] = dA[i], dA2[6 + i] = 2 * dA[i];
        for (int i = 0; i < 12; i++) B2[i] = B2[12 + i] = B[i], dB2[i] = dB[i], dB2[12 + i] = 2 * dB[i];
        for (int i = 0; i < 8; i++) H2[i] = H[i], H2[8 + i] = 2 * H[i];
        mxw_ndarray *bin[2] = {c_arr(dt, 3, ta ? SHP(2, K, M) : SHP(2, M, K), A2),
                               c_arr(dt, 3, tb ? SHP(2, N, K) : SHP(2, K, N), B2)};
        g = c_grad("batch_dot", bin, 2, 0, 0, H2, kv);
        c_expect(g, dA2, 12, tol);
        mxw_ndarray_free(g);
        g = c_grad("batch_dot", bin, 2, 1, 0, H2, kv);
        c_expect(g, dB2, 24, tol);
        mxw_ndarray_free(g);
        c_free(2, bin);
      }
    }
  /* dot of higher-rank operands: lhs (2, 1, 3) is (2, 3); rhs (3, 2, 2) is (3, 4) */
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT64, 3, SHP(2, 1, 3), A), c_arr(MXW_FLOAT64, 3, SHP(3, 2, 2), B)};
  double dA[6], base = ref_loss(0, 0, M, K, N, A, B, H);
  for (int i = 0; i < 6; i++) {
    double P[6];
    memcpy(P, A, sizeof P);
    P[i] += 1;
    dA[i] = ref_loss(0, 0, M, K, N, P, B, H) - base;
  }
  mxw_ndarray *g = c_grad("dot", in, 2, 0, 0, H, NULL);
  t_expect_shape(g, 3, SHP(2, 1, 3));
  c_expect(g, dA, 6, 1e-12);
  mxw_ndarray_free(g);
  c_free(2, in);
}

static void test_dot_errors(void **state) {
  (void)state;
  /* batch_dot: ranks differ / below 3, batch dims differ */
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 2, SHP(2, 2), NULL), c_arr(MXW_FLOAT32, 2, SHP(2, 2), NULL)};
  c_fail("batch_dot", in, 2, NULL, "must have the same number of dimensions, at least 3");
  c_free(2, in);
  in[0] = c_arr(MXW_FLOAT32, 3, SHP(2, 2, 3), NULL);
  in[1] = c_arr(MXW_FLOAT32, 3, SHP(3, 3, 2), NULL);
  c_fail("batch_dot", in, 2, NULL, "have different batch dimensions");
  c_free(2, in);
  /* dot: an output beyond 10 dimensions */
  in[0] = c_arr(MXW_FLOAT32, 6, SHP(1, 1, 1, 1, 1, 2), NULL);
  in[1] = c_arr(MXW_FLOAT32, 7, SHP(2, 1, 1, 1, 1, 1, 1), NULL);
  c_fail("dot", in, 2, NULL, "the output would have more than 10 dimensions");
  c_free(2, in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fc_backward),
      cmocka_unit_test(test_fc_inference),
      cmocka_unit_test(test_dot_gradients),
      cmocka_unit_test(test_dot_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
