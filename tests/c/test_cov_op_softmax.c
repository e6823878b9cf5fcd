/* softmax.c through autograd: softmax / log_softmax gradients (float32 rows of 7 for the vector
 * loop and its tail, float64, temperature, the dtype attribute, use_length), SoftmaxActivation's
 * gradient in both modes, SoftmaxOutput's gradient (out_grad, normalization 'batch' and 'valid'
 * with use_ignore, float64), the regression outputs' gradients and LogisticRegressionOutput in
 * float64, and the shape errors. References: a float64 softmax written here with central
 * differences of sum(head * y) for the softmax ops; MXNet's documented gradients for the output
 * layers ((y - onehot(label)) * grad_scale / norm, (y - label) * grad_scale / num_output, sign for
 * MAE). */
#include "cov_op_helpers.h"

static void ref_softmax(const double *x, int n, double t, int logv, int len, double *y) {
  double m = -INFINITY, s = 0;
  for (int i = 0; i < len; i++) m = fmax(m, x[i] / t);
  for (int i = 0; i < len; i++) s += exp(x[i] / t - m);
  for (int i = 0; i < n; i++)
    y[i] = i < len ? (logv ? x[i] / t - m - log(s) : exp(x[i] / t - m) / s) : (logv ? -INFINITY : 0);
}
/* d sum(head * y) / dx by central differences, rows of n */
static void ref_grad(const double *x, int rows, int n, double t, int logv, const int *lens, const double *h,
                     double *g) {
  for (int r = 0; r < rows; r++)
    for (int i = 0; i < n; i++) {
      double xp[16], yp[16], ym[16];
      memcpy(xp, x + r * n, sizeof(double) * (size_t)n);
      const int len = lens ? lens[r] : n;
      xp[i] += 1e-6;
      ref_softmax(xp, n, t, logv, len, yp);
      xp[i] -= 2e-6;
      ref_softmax(xp, n, t, logv, len, ym);
      double s = 0;
      for (int j = 0; j < len; j++) s += h[r * n + j] * (yp[j] - ym[j]) / 2e-6;
      g[r * n + i] = s;
    }
}

static void test_softmax_gradients(void **state) {
  (void)state;
  double x[14], h[14];
  for (int i = 0; i < 14; i++) x[i] = ((i * 5) % 9) / 3.0 - 1, h[i] = ((i * 3) % 7) / 2.0 - 1.5;
  static const char *const ops[] = {"softmax", "log_softmax"};
  for (int lg = 0; lg < 2; lg++)
    for (int d = 0; d < 2; d++)
      for (int tmp = 0; tmp < 2; tmp++) {
        const int dt = d ? MXW_FLOAT64 : MXW_FLOAT32;
        const double t = tmp ? 2.5 : 1, tol = d ? 1e-6 : 1e-4;
        double y[14], g[14];
        for (int r = 0; r < 2; r++) ref_softmax(x + 7 * r, 7, t, lg, 7, y + 7 * r);
        ref_grad(x, 2, 7, t, lg, NULL, h, g);
        mxw_ndarray *in = c_arr(dt, 2, SHP(2, 7), x);
        const char **kv = tmp ? KV("temperature", "2.5") : KV("axis", "-1");
        mxw_ndarray *o = c_run1(ops[lg], &in, 1, kv);
        c_expect(o, y, 14, tol);
        mxw_ndarray_free(o);
        mxw_ndarray *gr = c_grad(ops[lg], &in, 1, 0, 0, h, kv);
        c_expect(gr, g, 14, tol * 10);
        mxw_ndarray_free(gr);
        mxw_ndarray_free(in);
      }
  /* dtype=float64 on float32 data: the output is float64 and the gradient float32 */
  mxw_ndarray *in = c_arr(MXW_FLOAT32, 2, SHP(2, 7), x);
  double g[14];
  ref_grad(x, 2, 7, 1, 0, NULL, h, g);
  mxw_ndarray *o = c_run1("softmax", &in, 1, KV("dtype", "float64"));
  assert_int_equal(mxw_ndarray_dtype(o), MXW_FLOAT64);
  mxw_ndarray_free(o);
  mxw_ndarray *gr = c_grad("softmax", &in, 1, 0, 0, h, KV("dtype", "float64"));
  c_expect(gr, g, 14, 1e-4);
  mxw_ndarray_free(gr);
  /* use_length: rows of 3 and 5 valid entries */
  const int lens[2] = {3, 5};
  ref_grad(x, 2, 7, 1, 0, lens, h, g);
  mxw_ndarray *two[2] = {in, c_arr(MXW_INT32, 1, SHP(2), DV(3, 5))};
  gr = c_grad("softmax", two, 2, 0, 0, h, KV("use_length", "True"));
  c_expect(gr, g, 14, 1e-4);
  mxw_ndarray_free(gr);
  mxw_ndarray_free(two[1]);
  mxw_ndarray_free(in);
}

static void test_softmax_activation(void **state) {
  (void)state;
  double x[12], h[12];
  for (int i = 0; i < 12; i++) x[i] = 0.3 * i - 1.5, h[i] = (i % 4) - 1.5;
  /* instance on (N, C) = (4, 3): rows of 3 (MXNet's forward and backward agree on 2-D data) */
  mxw_ndarray *in = c_arr(MXW_FLOAT32, 2, SHP(4, 3), x);
  double g[12];
  ref_grad(x, 4, 3, 1, 0, NULL, h, g);
  mxw_ndarray *gr = c_grad("SoftmaxActivation", &in, 1, 0, 0, h, NULL);
  c_expect(gr, g, 12, 1e-4);
  mxw_ndarray_free(gr);
  mxw_ndarray_free(in);
  in = c_arr(MXW_FLOAT32, 3, SHP(2, 3, 2), x);
  /* channel: for each (n, w), a softmax over the 3 channels */
  double xt[12], ht[12], gt[12], want[12];
  for (int n = 0; n < 2; n++)
    for (int c = 0; c < 3; c++)
      for (int w = 0; w < 2; w++) {
        xt[(n * 2 + w) * 3 + c] = x[(n * 3 + c) * 2 + w];
        ht[(n * 2 + w) * 3 + c] = h[(n * 3 + c) * 2 + w];
      }
  ref_grad(xt, 4, 3, 1, 0, NULL, ht, gt);
  for (int n = 0; n < 2; n++)
    for (int c = 0; c < 3; c++)
      for (int w = 0; w < 2; w++) want[(n * 3 + c) * 2 + w] = gt[(n * 2 + w) * 3 + c];
  gr = c_grad("SoftmaxActivation", &in, 1, 0, 0, h, KV("mode", "channel"));
  c_expect(gr, want, 12, 1e-4);
  mxw_ndarray_free(gr);
  mxw_ndarray_free(in);
  in = c_arr(MXW_FLOAT32, 1, SHP(3), x);
  c_fail("SoftmaxActivation", &in, 1, KV("mode", "channel"), "mode='channel' needs data of at least 2 dimensions");
  mxw_ndarray_free(in);
}

static void test_softmax_output(void **state) {
  (void)state;
  /* data (2, 3), labels [2, 0]: dx = (softmax - onehot) * grad_scale / norm */
  const double x[6] = {0.5, -1, 2, 1, 0, -0.5};
  double y[6];
  ref_softmax(x, 3, 1, 0, 3, y);
  ref_softmax(x + 3, 3, 1, 0, 3, y + 3);
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT64 : MXW_FLOAT32;
    mxw_ndarray *in[2] = {c_arr(dt, 2, SHP(2, 3), x), c_arr(dt, 1, SHP(2), DV(2, 0))};
    double want[6];
    for (int i = 0; i < 6; i++) want[i] = (y[i] - ((i == 2 || i == 3) ? 1 : 0)) * 2 / 2;
    mxw_ndarray *g = c_grad("SoftmaxOutput", in, 2, 0, 0, NULL, KV("grad_scale", "2", "normalization", "batch"));
    c_expect(g, want, 6, 1e-5);
    mxw_ndarray_free(g);
    /* out_grad: the head multiplies the gradient */
    const double head[6] = {1, 2, 3, 4, 5, 6};
    for (int i = 0; i < 6; i++) want[i] = (y[i] - ((i == 2 || i == 3) ? 1 : 0)) * head[i];
    g = c_grad("SoftmaxOutput", in, 2, 0, 0, head, KV("out_grad", "True"));
    c_expect(g, want, 6, 1e-5);
    mxw_ndarray_free(g);
    /* use_ignore with label 0 ignored: row 1 gets no gradient; 'valid' divides by 1 valid label */
    for (int i = 0; i < 6; i++) want[i] = i < 3 ? (y[i] - (i == 2)) : 0;
    g = c_grad("SoftmaxOutput", in, 2, 0, 0, NULL,
               KV("use_ignore", "True", "ignore_label", "0", "normalization", "valid"));
    c_expect(g, want, 6, 1e-5);
    mxw_ndarray_free(g);
    c_free(2, in);
  }
  /* label shape errors */
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 2, SHP(2, 3), x), c_arr(MXW_FLOAT32, 1, SHP(3), NULL)};
  c_fail("SoftmaxOutput", in, 2, NULL, "label shape (3,) does not fit data shape (2, 3)");
  c_fail("SoftmaxOutput", in, 2, KV("multi_output", "True"), "with multi_output");
  mxw_ndarray_free(in[0]);
  in[0] = c_arr(MXW_FLOAT32, 1, SHP(3), x);
  c_fail("SoftmaxOutput", in, 2, KV("multi_output", "True"), "multi_output needs data of at least 2 dimensions");
  c_free(2, in);
}

static void test_regression_outputs(void **state) {
  (void)state;
  /* data (2, 2), label (2, 2): num_output 2; grad_scale 3 */
  const double x[4] = {1, -2, 0.5, 4}, lab[4] = {0, -1, 1, 4};
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT64 : MXW_FLOAT32;
    mxw_ndarray *in[2] = {c_arr(dt, 2, SHP(2, 2), x), c_arr(dt, 2, SHP(2, 2), lab)};
    double want[4];
    for (int i = 0; i < 4; i++) want[i] = (x[i] - lab[i]) * 3 / 2;
    mxw_ndarray *g = c_grad("LinearRegressionOutput", in, 2, 0, 0, NULL, KV("grad_scale", "3"));
    c_expect(g, want, 4, 1e-6);
    mxw_ndarray_free(g);
    for (int i = 0; i < 4; i++) want[i] = (x[i] - lab[i] > 0 ? 1 : -1) * 3 / 2.0;
    g = c_grad("MAERegressionOutput", in, 2, 0, 0, NULL, KV("grad_scale", "3"));
    c_expect(g, want, 4, 1e-6);
    mxw_ndarray_free(g);
    /* logistic: forward sigmoid, gradient (sigmoid(x) - label) * grad_scale / num_output */
    mxw_ndarray *o = c_run1("LogisticRegressionOutput", in, 2, NULL);
    double sgm[4];
    for (int i = 0; i < 4; i++) sgm[i] = 1 / (1 + exp(-x[i])), want[i] = (sgm[i] - lab[i]) / 2;
    c_expect(o, sgm, 4, 1e-6);
    mxw_ndarray_free(o);
    g = c_grad("LogisticRegressionOutput", in, 2, 0, 0, NULL, NULL);
    c_expect(g, want, 4, 1e-6);
    mxw_ndarray_free(g);
    c_free(2, in);
  }
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 2, SHP(2, 2), x), c_arr(MXW_FLOAT32, 2, SHP(1, 4), NULL)};
  c_fail("LinearRegressionOutput", in, 2, NULL, "label shape (1, 4) does not fit data shape (2, 2)");
  c_free(2, in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_softmax_gradients),
      cmocka_unit_test(test_softmax_activation),
      cmocka_unit_test(test_softmax_output),
      cmocka_unit_test(test_regression_outputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
