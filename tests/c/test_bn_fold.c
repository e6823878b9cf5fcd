/* BatchNorm folding in the executor (csrc/graph/exec.c): data -> Convolution -> BatchNorm ->
 * clip(0, 6) or relu -> x + x. At inference (is_train 0) the BatchNorm and the activation are
 * applied by the convolution (mxw_exec_num_fused counts both); with is_train 1 the BatchNorm runs
 * with batch statistics. Both against float64 loops written here, NCHW and NHWC. */
#include "cov_graph.h"

enum { N = 2, C = 3, H = 5, W = 4, F = 4, K = 3 };

static float frand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) / 16777216.0f;
}

/* the NCHW convolution (pad 1, stride 1) with bias, in float64 */
static void conv_ref(const float *x, const float *w, const float *b, double *conv) {
  for (int n = 0; n < N; n++)
    for (int f = 0; f < F; f++)
      for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++) {
          double s = b[f];
          for (int c = 0; c < C; c++)
            for (int u = 0; u < K; u++)
              for (int v = 0; v < K; v++) {
                int r = i + u - 1, q = j + v - 1;
                if (r >= 0 && r < H && q >= 0 && q < W)
                  s += (double)x[((n * C + c) * H + r) * W + q] * w[((f * C + c) * K + u) * K + v];
              }
          conv[((n * F + f) * H + i) * W + j] = s;
        }
}

/* NCHW reference of conv (pad 1, stride 1) + BatchNorm (mean/var per channel) + activation, x2 */
static void reference(const float *x, const float *w, const float *b, const float *gamma, const float *beta,
                      const double *mean, const double *var, int relu6, double *y) {
  double conv[N * F * H * W];
  conv_ref(x, w, b, conv);
  for (int k = 0; k < N * F * H * W; k++) {
    int f = (k / (H * W)) % F;
    double v = (conv[k] - mean[f]) / sqrt(var[f] + 1e-5) * gamma[f] + beta[f];
    v = v < 0 ? 0 : v;
    if (relu6 && v > 6) v = 6;
    y[k] = 2 * v;
  }
}

static void batch_stats(const float *x, const float *w, const float *b, double *mean, double *var) {
  /* the convolution's output statistics per channel (biased variance, as MXNet's) */
  double conv[N * F * H * W];
  conv_ref(x, w, b, conv);
  for (int f = 0; f < F; f++) {
    double m = 0, q = 0;
    for (int n = 0; n < N; n++)
      for (int i = 0; i < H * W; i++) m += conv[(n * F + f) * H * W + i];
    m /= N * H * W;
    for (int n = 0; n < N; n++)
      for (int i = 0; i < H * W; i++) q += pow(conv[(n * F + f) * H * W + i] - m, 2);
    mean[f] = m;
    var[f] = q / (N * H * W);
  }
}

static void run_case(int nhwc, int relu6) {
  unsigned seed = 7u + (unsigned)(nhwc * 2 + relu6);
  float x[N * C * H * W], w[F * C * K * K], b[F], gamma[F], beta[F], mean[F], var[F];
  for (int i = 0; i < N * C * H * W; i++) x[i] = 8 * frand(&seed) - 4;
  for (int i = 0; i < F * C * K * K; i++) w[i] = frand(&seed) - 0.5f;
  for (int f = 0; f < F; f++) {
    b[f] = frand(&seed) - 0.5f;
    gamma[f] = 0.5f + frand(&seed);
    beta[f] = 2 * frand(&seed) - 1;
    mean[f] = frand(&seed) - 0.5f;
    var[f] = 0.2f + frand(&seed);
  }
  const char *layout = nhwc ? "NHWC" : "NCHW", *axis = nhwc ? "3" : "1";
  mxw_symbol *v[7] = {cg_var("data"), cg_var("w"),    cg_var("b"),  cg_var("gamma"),
                      cg_var("beta"), cg_var("mean"), cg_var("var")};
  mxw_symbol *cv =
      cg_op("Convolution", "conv", 3, v, "kernel", "(3,3)", "pad", "(1,1)", "num_filter", "4", "layout", layout, NULL);
  mxw_symbol *bn_in[5] = {cv, v[3], v[4], v[5], v[6]};
  mxw_symbol *bn = cg_op("BatchNorm", "bn", 5, bn_in, "axis", axis, "fix_gamma", "False", "eps", "1e-5", NULL);
  mxw_symbol *act = relu6 ? cg_op("clip", "relu6", 1, &bn, "a_min", "0", "a_max", "6", NULL)
                          : cg_op("Activation", "relu", 1, &bn, "act_type", "relu", NULL);
  mxw_symbol *two[2] = {act, act};
  mxw_symbol *out = cg_op("elemwise_add", "double", 2, two, NULL);
  assert_non_null(out);
  mxw_executor *ex = cg_exec(out);
  /* inputs in the layout: NHWC data (N, H, W, C), weight (F, K, K, C) */
  float xl[N * C * H * W], wl[F * C * K * K];
  for (int n = 0; n < N; n++)
    for (int c = 0; c < C; c++)
      for (int i = 0; i < H * W; i++)
        xl[nhwc ? (n * H * W + i) * C + c : (n * C + c) * H * W + i] = x[(n * C + c) * H * W + i];
  for (int f = 0; f < F; f++)
    for (int c = 0; c < C; c++)
      for (int i = 0; i < K * K; i++)
        wl[nhwc ? (f * K * K + i) * C + c : (f * C + c) * K * K + i] = w[(f * C + c) * K * K + i];
  mxw_ndarray *in[7] = {nhwc ? t_array(4, (int32_t[]){N, H, W, C}, xl) : t_array(4, (int32_t[]){N, C, H, W}, xl),
                        nhwc ? t_array(4, (int32_t[]){F, K, K, C}, wl) : t_array(4, (int32_t[]){F, C, K, K}, wl),
                        t_array(1, (int32_t[]){F}, b),
                        t_array(1, (int32_t[]){F}, gamma),
                        t_array(1, (int32_t[]){F}, beta),
                        t_array(1, (int32_t[]){F}, mean),
                        t_array(1, (int32_t[]){F}, var)};
  double want[N * F * H * W], m64[F], v64[F];
  for (int pass = 0; pass < 2; pass++) { /* 0: inference (folded), 1: training (batch statistics) */
    if (pass == 0) {
      for (int f = 0; f < F; f++) m64[f] = mean[f], v64[f] = var[f];
    } else {
      batch_stats(x, w, b, m64, v64);
    }
    reference(x, w, b, gamma, beta, m64, v64, relu6, want);
    mxw_ndarray *o[1] = {NULL};
    int nout = 1;
    assert_int_equal(mxw_exec_forward(ex, 7, in, pass, &nout, o), 0);
    if (pass == 0) assert_int_equal(mxw_exec_num_fused(ex), 2); /* the BatchNorm and the activation */
    const float *y = (const float *)mxw_ndarray_data(o[0]);
    for (int n = 0; n < N; n++)
      for (int f = 0; f < F; f++)
        for (int i = 0; i < H * W; i++) {
          const double e = want[(n * F + f) * H * W + i];
          const float g = y[nhwc ? (n * H * W + i) * F + f : (n * F + f) * H * W + i];
          if (fabs(g - e) > 2e-5 * (1 + fabs(e))) fail_msg("%s relu6=%d pass %d: %g vs %g", layout, relu6, pass, g, e);
        }
    mxw_ndarray_free(o[0]);
  }
  for (int k = 0; k < 7; k++) {
    mxw_ndarray_free(in[k]);
    mxw_sym_free(v[k]);
  }
  mxw_sym_free(cv);
  mxw_sym_free(bn);
  mxw_sym_free(act);
  mxw_sym_free(out);
  mxw_exec_free(ex);
}

static void test_fold_nchw_relu6(void **state) {
  (void)state;
  run_case(0, 1);
}
static void test_fold_nhwc_relu(void **state) {
  (void)state;
  run_case(1, 0);
}
static void test_fold_nchw_relu(void **state) {
  (void)state;
  run_case(0, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fold_nchw_relu6),
      cmocka_unit_test(test_fold_nhwc_relu),
      cmocka_unit_test(test_fold_nchw_relu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
