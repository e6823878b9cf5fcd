/* optimizer.c: the update ops the other C tests leave out (nag_mom_update, mp_nag_mom_update,
 * rmsprop_update with clip_weights, ftrl_update, signsgd_update, mp_lamb_update_phase1/2, and the
 * clip_gradient branches of sgd_update / sgd_mom_update), float32 and float64, outputs and the
 * states they update in place, against float64 loops of MXNet 1.9.1's kernels
 * (optimizer_op-inl.h). Attributes are exact binary fractions, so MXNet's rounding of them to
 * float changes nothing. */
#include "cov_op_helpers.h"

static const double k_w[4] = {0.5, -1.25, 2, -0.75}, k_g[4] = {1.5, -0.25, -3, 0.5};

static double clipd(double x, double c) { return c >= 0 ? (x > c ? c : x < -c ? -c : x) : x; }

/* Runs op on inputs of dtype dt built from vals[i] (n_in of them) and returns the output; the
 * inputs (states updated in place) stay in ins for the caller to check and free. */
static mxw_ndarray *run_update(const char *op, int dt, int n_in, const double *const *vals, mxw_ndarray **ins,
                               const char **kv) {
  for (int i = 0; i < n_in; i++) ins[i] = c_arr(dt, 1, SHP(4), vals[i]);
  return c_run1(op, ins, n_in, kv);
}

static void test_sgd_clip(void **state) {
  (void)state;
  const double lr = 0.5, wd = 0.25, rs = 2, clip = 1.5, mu = 0.75, mom0[4] = {0.5, 0.25, -0.5, 1};
  double want[4], mom[4], wm[4];
  for (int i = 0; i < 4; i++) {
    want[i] = (1 - lr * wd) * k_w[i] - lr * clipd(rs * k_g[i], clip);
    mom[i] = mu * mom0[i] - lr * wd * k_w[i] - lr * clipd(rs * k_g[i], clip);
    wm[i] = k_w[i] + mom[i];
  }
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT64 : MXW_FLOAT32;
    mxw_ndarray *in[3];
    mxw_ndarray *o = run_update("sgd_update", dt, 2, (const double *[]){k_w, k_g}, in,
                                KV("lr", "0.5", "wd", "0.25", "rescale_grad", "2", "clip_gradient", "1.5"));
    c_expect(o, want, 4, 1e-6);
    mxw_ndarray_free(o);
    c_free(2, in);
    o = run_update("sgd_mom_update", dt, 3, (const double *[]){k_w, k_g, mom0}, in,
                   KV("lr", "0.5", "wd", "0.25", "rescale_grad", "2", "clip_gradient", "1.5", "momentum", "0.75"));
    c_expect(o, wm, 4, 1e-6);
    c_expect(in[2], mom, 4, 1e-6);
    mxw_ndarray_free(o);
    c_free(3, in);
  }
  /* the mp_ forms: float16 weight and grad, float32 master copy (and momentum) */
  mxw_ndarray *in[4] = {c_arr(MXW_FLOAT16, 1, SHP(4), k_w), c_arr(MXW_FLOAT16, 1, SHP(4), k_g),
                        c_arr(MXW_FLOAT32, 1, SHP(4), k_w), NULL};
  mxw_ndarray *o =
      c_run1("mp_sgd_update", in, 3, KV("lr", "0.5", "wd", "0.25", "rescale_grad", "2", "clip_gradient", "1.5"));
  c_expect(o, want, 4, 1e-3);
  c_expect(in[2], want, 4, 1e-6);
  mxw_ndarray_free(o);
  mxw_ndarray_free(in[2]);
  in[2] = c_arr(MXW_FLOAT32, 1, SHP(4), mom0);
  in[3] = c_arr(MXW_FLOAT32, 1, SHP(4), k_w);
  o = c_run1("mp_sgd_mom_update", in, 4,
             KV("lr", "0.5", "wd", "0.25", "rescale_grad", "2", "clip_gradient", "1.5", "momentum", "0.75"));
  c_expect(o, wm, 4, 1e-3);
  c_expect(in[2], mom, 4, 1e-6);
  c_expect(in[3], wm, 4, 1e-6);
  mxw_ndarray_free(o);
  c_free(4, in);
}

/* NAGMomKernel: m = mu mom; out = w - m + (mu + 1)(m - lr (g' + wd w)); mom = m - lr (g' + wd w). */
static void test_nag(void **state) {
  (void)state;
  const double lr = 0.25, wd = 0.125, mu = 0.5, rs = 0.5, mom0[4] = {0.5, -0.25, 0.125, 1};
  for (int clipped = 0; clipped < 2; clipped++) {
    const double clip = clipped ? 0.5 : -1;
    double want[4], mom[4], w32[4], mom32[4];
    for (int i = 0; i < 4; i++) {
      double gr = clipd(rs * k_g[i], clip), m = mu * mom0[i];
      want[i] = k_w[i] - m + (mu + 1) * (m - lr * (gr + wd * k_w[i]));
      mom[i] = m - lr * (gr + wd * k_w[i]);
      /* the mp kernel reads the updated weight in the momentum's weight decay */
      w32[i] = want[i];
      mom32[i] = m - lr * (gr + wd * w32[i]);
    }
    const char **kv =
        clipped ? KV("lr", "0.25", "wd", "0.125", "momentum", "0.5", "rescale_grad", "0.5", "clip_gradient", "0.5")
                : KV("lr", "0.25", "wd", "0.125", "momentum", "0.5", "rescale_grad", "0.5");
    for (int d = 0; d < 2; d++) {
      const int dt = d ? MXW_FLOAT64 : MXW_FLOAT32;
      mxw_ndarray *in[4];
      mxw_ndarray *o = run_update("nag_mom_update", dt, 3, (const double *[]){k_w, k_g, mom0}, in, kv);
      c_expect(o, want, 4, 1e-6);
      c_expect(in[2], mom, 4, 1e-6);
      mxw_ndarray_free(o);
      c_free(3, in);
    }
    /* mp: float16 weight and grad, float32 mom and weight32 */
    mxw_ndarray *in[4] = {c_arr(MXW_FLOAT16, 1, SHP(4), k_w), c_arr(MXW_FLOAT16, 1, SHP(4), k_g),
                          c_arr(MXW_FLOAT32, 1, SHP(4), mom0), c_arr(MXW_FLOAT32, 1, SHP(4), k_w)};
    mxw_ndarray *o = c_run1("mp_nag_mom_update", in, 4, kv);
    assert_int_equal(mxw_ndarray_dtype(o), MXW_FLOAT16);
    c_expect(o, w32, 4, 1e-3);
    c_expect(in[3], w32, 4, 1e-6);
    c_expect(in[2], mom32, 4, 1e-6);
    mxw_ndarray_free(o);
    c_free(4, in);
  }
}

/* RMSPropUpdateKernel: g' = clip(rs g + wd w); n = (1 - gamma1) g'^2 + gamma1 n;
 * w' = clip(w - lr g' / sqrt(n + eps), clip_weights). */
static void test_rmsprop(void **state) {
  (void)state;
  const double lr = 0.5, g1 = 0.75, eps = 0.0625, wd = 0.25, rs = 2, clip = 2, cw = 1, n0[4] = {0.25, 1, 0.5, 2};
  double want[4], n[4];
  for (int i = 0; i < 4; i++) {
    double gr = clipd(rs * k_g[i] + wd * k_w[i], clip);
    n[i] = (1 - g1) * gr * gr + g1 * n0[i];
    want[i] = clipd(k_w[i] - lr * gr / sqrt(n[i] + eps), cw);
  }
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT64 : MXW_FLOAT32;
    mxw_ndarray *in[3];
    mxw_ndarray *o = run_update("rmsprop_update", dt, 3, (const double *[]){k_w, k_g, n0}, in,
                                KV("lr", "0.5", "gamma1", "0.75", "epsilon", "0.0625", "wd", "0.25", "rescale_grad",
                                   "2", "clip_gradient", "2", "clip_weights", "1"));
    c_expect(o, want, 4, 1e-6);
    c_expect(in[2], n, 4, 1e-6);
    mxw_ndarray_free(o);
    c_free(3, in);
  }
}

/* FtrlUpdateKernel: z += g' - (sqrt(n + g'^2) - sqrt(n)) w / lr; n += g'^2;
 * out = (sign(z) lamda1 - z) / ((beta + sqrt(n)) / lr + wd) where |z| > lamda1, else 0. */
static void test_ftrl(void **state) {
  (void)state;
  const double lr = 0.5, l1 = 0.25, beta = 1, wd = 0.125, rs = 1, clip = 2;
  const double z0[4] = {0.5, -0.25, 0.125, 0}, n0[4] = {0.25, 1, 0.5, 2};
  double want[4], z[4], n[4];
  for (int i = 0; i < 4; i++) {
    double gr = clipd(k_g[i] * rs, clip);
    z[i] = z0[i] + gr - (sqrt(n0[i] + gr * gr) - sqrt(n0[i])) * k_w[i] / lr;
    n[i] = n0[i] + gr * gr;
    double sg = z[i] > 0 ? 1 : z[i] < 0 ? -1 : 0;
    want[i] = fabs(z[i]) > l1 ? (sg * l1 - z[i]) / ((beta + sqrt(n[i])) / lr + wd) : 0;
  }
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT64 : MXW_FLOAT32;
    mxw_ndarray *in[4];
    mxw_ndarray *o = run_update("ftrl_update", dt, 4, (const double *[]){k_w, k_g, z0, n0}, in,
                                KV("lr", "0.5", "lamda1", "0.25", "beta", "1", "wd", "0.125", "clip_gradient", "2"));
    c_expect(o, want, 4, 1e-6);
    c_expect(in[2], z, 4, 1e-6);
    c_expect(in[3], n, 4, 1e-6);
    mxw_ndarray_free(o);
    c_free(4, in);
  }
}

/* SignSGDKernel: out = (1 - lr wd) w - lr sign(g) (clip_gradient has no effect). */
static void test_signsgd(void **state) {
  (void)state;
  const double g[4] = {1.5, 0, -3, 0.5};
  double want[4];
  for (int i = 0; i < 4; i++) want[i] = (1 - 0.5 * 0.25) * k_w[i] - 0.5 * (g[i] > 0 ? 1 : g[i] < 0 ? -1 : 0);
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT64 : MXW_FLOAT32;
    mxw_ndarray *in[2];
    mxw_ndarray *o = run_update("signsgd_update", dt, 2, (const double *[]){k_w, g}, in,
                                KV("lr", "0.5", "wd", "0.25", "clip_gradient", "0.1"));
    c_expect(o, want, 4, 1e-6);
    mxw_ndarray_free(o);
    c_free(2, in);
  }
}

/* MPLambUpdatePhaseOneKernel on the float32 master copy, with and without bias correction, and
 * phase two's trust ratio with its bounds. */
static void test_mp_lamb(void **state) {
  (void)state;
  const double b1 = 0.75, b2 = 0.875, eps = 0.0625, wd = 0.25, rs = 0.5, clip = 0.5;
  const double mean0[4] = {0.25, -0.5, 0, 1}, var0[4] = {0.5, 0.25, 1, 0.125};
  const int t = 3;
  for (int bc = 0; bc < 2; bc++) {
    double want[4], mean[4], var[4];
    for (int i = 0; i < 4; i++) {
      double gr = clipd(k_g[i] * rs, clip);
      mean[i] = b1 * mean0[i] + (1 - b1) * gr;
      var[i] = b2 * var0[i] + (1 - b2) * gr * gr;
      if (bc)
        want[i] = (mean[i] / (1 - pow(b1, t))) / (sqrt(var[i] / (1 - pow(b2, t))) + eps) + wd * k_w[i];
      else
        want[i] = mean[i] / (sqrt(var[i]) + eps) + wd * k_w[i];
    }
    mxw_ndarray *in[5] = {c_arr(MXW_FLOAT16, 1, SHP(4), k_w), c_arr(MXW_FLOAT16, 1, SHP(4), k_g),
                          c_arr(MXW_FLOAT32, 1, SHP(4), mean0), c_arr(MXW_FLOAT32, 1, SHP(4), var0),
                          c_arr(MXW_FLOAT32, 1, SHP(4), k_w)};
    mxw_ndarray *o = c_run1("mp_lamb_update_phase1", in, 5,
                            KV("beta1", "0.75", "beta2", "0.875", "epsilon", "0.0625", "t", "3", "bias_correction",
                               bc ? "True" : "False", "wd", "0.25", "rescale_grad", "0.5", "clip_gradient", "0.5"));
    assert_int_equal(mxw_ndarray_dtype(o), MXW_FLOAT32);
    c_expect(o, want, 4, 1e-5);
    c_expect(in[2], mean, 4, 1e-6);
    c_expect(in[3], var, 4, 1e-6);
    mxw_ndarray_free(o);
    c_free(5, in);
  }
  /* phase 2: r1 = 4 clamped to upper_bound 2, r2 = 0.5: lr 0.25 * 2 / 0.5 = 1; r1 = 0: lr stays */
  const double gdir[4] = {0.5, -1, 0.25, 2};
  for (int k = 0; k < 3; k++) {
    const double r1 = k == 0 ? 4 : k == 1 ? 0.125 : 0, lr = k == 0 ? 1 : k == 1 ? 0.25 * 0.5 / 0.5 : 0.25;
    mxw_ndarray *in[5] = {c_arr(MXW_FLOAT16, 1, SHP(4), k_w), c_arr(MXW_FLOAT32, 1, SHP(4), gdir),
                          c_arr(MXW_FLOAT32, 1, SHP(1), DV(r1)), c_arr(MXW_FLOAT32, 1, SHP(1), DV(0.5)),
                          c_arr(MXW_FLOAT32, 1, SHP(4), k_w)};
    /* k == 1: r1 0.125 raised to lower_bound 0.5 */
    mxw_ndarray *o = c_run1("mp_lamb_update_phase2", in, 5, KV("lr", "0.25", "lower_bound", "0.5", "upper_bound", "2"));
    double want[4];
    for (int i = 0; i < 4; i++) want[i] = k_w[i] - lr * gdir[i];
    assert_int_equal(mxw_ndarray_dtype(o), MXW_FLOAT16);
    c_expect(o, want, 4, 1e-3);
    c_expect(in[4], want, 4, 1e-6);
    mxw_ndarray_free(o);
    c_free(5, in);
  }
  /* the mp ops want a float16 weight */
  mxw_ndarray *in[5] = {c_arr(MXW_FLOAT32, 1, SHP(4), k_w), c_arr(MXW_FLOAT32, 1, SHP(4), k_g),
                        c_arr(MXW_FLOAT32, 1, SHP(4), mean0), c_arr(MXW_FLOAT32, 1, SHP(4), var0),
                        c_arr(MXW_FLOAT32, 1, SHP(4), k_w)};
  c_fail("mp_lamb_update_phase1", in, 5, KV("t", "1", "wd", "0"), "float16");
  c_free(5, in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sgd_clip), cmocka_unit_test(test_nag),     cmocka_unit_test(test_rmsprop),
      cmocka_unit_test(test_ftrl),     cmocka_unit_test(test_signsgd), cmocka_unit_test(test_mp_lamb),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
