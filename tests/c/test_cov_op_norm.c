/* norm.c through autograd, in float64: the gradients of BatchNorm (training: batch statistics),
 * LayerNorm, InstanceNorm, GroupNorm, L2Normalization and LRN with respect to data, gamma and
 * beta, against float64 references of MXNet's formulas written here (biased variance; LRN's
 * alpha / nsize over a window of nsize channels) and central differences of sum(head * y). Data
 * (N, C, W) = (2, 4, 3). */
#include "cov_op_helpers.h"

enum { BN, LN, IN, GN, L2, LRN };
#define N_ 2
#define C_ 4
#define W_ 3
#define SZ (N_ * C_ * W_)

/* normalizes the elements idx[0..m-1] of x (mean, biased variance, eps) into z */
static void normalize(const double *x, const int *idx, int m, double eps, double *z) {
  double mean = 0, var = 0;
  for (int i = 0; i < m; i++) mean += x[idx[i]];
  mean /= m;
  for (int i = 0; i < m; i++) var += (x[idx[i]] - mean) * (x[idx[i]] - mean);
  var /= m;
  for (int i = 0; i < m; i++) z[idx[i]] = (x[idx[i]] - mean) / sqrt(var + eps);
}
#define AT(n, c, w) (((n)*C_ + (c)) * W_ + (w))

static void ref(int op, const double *x, const double *gm, const double *bt, double *y) {
  double z[SZ];
  int idx[SZ], m;
  switch (op) {
    case BN: /* per channel over (N, W), eps 1e-3 */
      for (int c = 0; c < C_; c++) {
        m = 0;
        for (int n = 0; n < N_; n++)
          for (int w = 0; w < W_; w++) idx[m++] = AT(n, c, w);
        normalize(x, idx, m, 1e-3, z);
      }
      for (int i = 0; i < SZ; i++) y[i] = z[i] * gm[(i / W_) % C_] + bt[(i / W_) % C_];
      return;
    case LN: /* over the last axis, eps 1e-5; gamma, beta (W,) */
      for (int r = 0; r < N_ * C_; r++) {
        for (m = 0; m < W_; m++) idx[m] = r * W_ + m;
        normalize(x, idx, m, 1e-5, z);
      }
      for (int i = 0; i < SZ; i++) y[i] = z[i] * gm[i % W_] + bt[i % W_];
      return;
    case IN: /* per (n, c) over W, eps 1e-3 */
      for (int r = 0; r < N_ * C_; r++) {
        for (m = 0; m < W_; m++) idx[m] = r * W_ + m;
        normalize(x, idx, m, 1e-3, z);
      }
      for (int i = 0; i < SZ; i++) y[i] = z[i] * gm[(i / W_) % C_] + bt[(i / W_) % C_];
      return;
    case GN: /* 2 groups of 2 channels, per (n, g) over (2, W), eps 1e-5; gamma, beta per group (num_groups,) */
      for (int n = 0; n < N_; n++)
        for (int g = 0; g < 2; g++) {
          m = 0;
          for (int c = 2 * g; c < 2 * g + 2; c++)
            for (int w = 0; w < W_; w++) idx[m++] = AT(n, c, w);
          normalize(x, idx, m, 1e-5, z);
        }
      for (int i = 0; i < SZ; i++) y[i] = z[i] * gm[(i / W_) % C_ / 2] + bt[(i / W_) % C_ / 2];
      return;
    case L2: /* per instance: x / sqrt(sum x^2 + 1e-10) */
      for (int n = 0; n < N_; n++) {
        double s = 1e-10;
        for (int i = 0; i < C_ * W_; i++) s += x[n * C_ * W_ + i] * x[n * C_ * W_ + i];
        for (int i = 0; i < C_ * W_; i++) y[n * C_ * W_ + i] = x[n * C_ * W_ + i] / sqrt(s);
      }
      return;
    default: /* LRN nsize 3, alpha 0.5, beta 0.75, knorm 2: x / (knorm + alpha / 3 * sum_window x^2)^beta */
      for (int n = 0; n < N_; n++)
        for (int c = 0; c < C_; c++)
          for (int w = 0; w < W_; w++) {
            double s = 0;
            for (int k = c - 1; k <= c + 1; k++)
              if (k >= 0 && k < C_) s += x[AT(n, k, w)] * x[AT(n, k, w)];
            y[AT(n, c, w)] = x[AT(n, c, w)] * pow(2 + 0.5 / 3 * s, -0.75);
          }
      return;
  }
}

static double loss(int op, const double *x, const double *gm, const double *bt, const double *h) {
  double y[SZ], L = 0;
  ref(op, x, gm, bt, y);
  for (int i = 0; i < SZ; i++) L += h[i] * y[i];
  return L;
}

static void test_norm_gradients(void **state) {
  (void)state;
  static const char *const names[] = {"BatchNorm", "LayerNorm", "InstanceNorm", "GroupNorm", "L2Normalization", "LRN"};
  double x[SZ], h[SZ], gm[C_], bt[C_];
  for (int i = 0; i < SZ; i++) x[i] = ((i * 7) % 11) / 4.0 - 1.2, h[i] = ((i * 5) % 9) / 3.0 - 1;
  for (int c = 0; c < C_; c++) gm[c] = 0.5 + 0.25 * c, bt[c] = 0.1 * c - 0.2;
  mxw_set_training(1);
  for (int op = 0; op < 6; op++) {
    const int ng = op == LN ? W_ : op == GN ? 2 : C_, has_gb = op <= GN;
    const char **kv = op == BN    ? KV("fix_gamma", "False")
                      : op == GN  ? KV("num_groups", "2")
                      : op == LRN ? KV("nsize", "3", "alpha", "0.5", "beta", "0.75", "knorm", "2")
                                  : NULL;
    mxw_ndarray *in[5];
    int nin = 0;
    in[nin++] = op == LRN ? c_arr(MXW_FLOAT64, 4, SHP(N_, C_, W_, 1), x) : c_arr(MXW_FLOAT64, 3, SHP(N_, C_, W_), x);
    if (has_gb) {
      in[nin++] = c_arr(MXW_FLOAT64, 1, SHP(ng), gm);
      in[nin++] = c_arr(MXW_FLOAT64, 1, SHP(ng), bt);
    }
    if (op == BN) {
      in[nin++] = c_arr(MXW_FLOAT64, 1, SHP(C_), NULL);
      in[nin++] = c_arr(MXW_FLOAT64, 1, SHP(C_), DV(1, 1, 1, 1));
    }
    double y[SZ];
    ref(op, x, gm, bt, y);
    mxw_ndarray *o = c_run1(names[op], in, nin, kv);
    c_expect(o, y, SZ, 1e-7); /* eps and alpha are C floats in MXNet */
    mxw_ndarray_free(o);
    double *vs[3] = {x, gm, bt};
    const int ns[3] = {SZ, ng, ng};
    for (int v = 0; v < (has_gb ? 3 : 1); v++) {
      double want[SZ];
      for (int i = 0; i < ns[v]; i++) {
        const double keep = vs[v][i];
        vs[v][i] = keep + 1e-6;
        const double lp = loss(op, x, gm, bt, h);
        vs[v][i] = keep - 1e-6;
        const double lm = loss(op, x, gm, bt, h);
        vs[v][i] = keep;
        want[i] = (lp - lm) / 2e-6;
      }
      mxw_ndarray *g = c_grad(names[op], in, nin, v, 0, h, kv);
      for (int i = 0; i < ns[v]; i++)
        if (!(fabs(c_at(g, i) - want[i]) <= 1e-6 * (1 + fabs(want[i]))))
          fail_msg("%s d input %d [%d] = %.9g, expected %.9g", names[op], v, i, c_at(g, i), want[i]);
      mxw_ndarray_free(g);
    }
    c_free(nin, in);
  }
  mxw_set_training(0);
}

/* BatchNormWithReLU in float64: relu of the batch-normalized data; the gradient is zero where the
 * output is 0. Inference mode with moving statistics (0, 1): y = relu(x / sqrt(1 + eps)). */
static void test_bn_relu_f64(void **state) {
  (void)state;
  mxw_set_training(0);
  mxw_ndarray *in[5] = {c_arr(MXW_FLOAT64, 2, SHP(2, 2), DV(-1, 2, 3, -4)), c_arr(MXW_FLOAT64, 1, SHP(2), DV(1, 1)),
                        c_arr(MXW_FLOAT64, 1, SHP(2), DV(0, 0)), c_arr(MXW_FLOAT64, 1, SHP(2), DV(0, 0)),
                        c_arr(MXW_FLOAT64, 1, SHP(2), DV(1, 1))};
  mxw_ndarray *o = c_run1("_contrib_BatchNormWithReLU", in, 5, KV("eps", "0.001"));
  const double s = 1 / sqrt(1.001);
  c_expect(o, DV(0, 2 * s, 3 * s, 0), 4, 1e-12);
  mxw_ndarray_free(o);
  c_free(5, in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_norm_gradients),
      cmocka_unit_test(test_bn_relu_f64),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
