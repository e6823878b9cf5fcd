/* nn_misc.c through autograd: Dropout in training (float64 and a mask shared along axes: every
 * output is 0 or x / (1 - p), the gradient is the head times the same mask), LeakyReLU's gradient
 * for every act_type in float64 and float32 (PReLU's gamma gradient too) against central
 * differences of MXNet's formulas, Embedding's weight gradient in float64 with several index
 * dtypes, and the legacy Crop's gradient (offset and center_crop). */
#include "cov_op_helpers.h"

static void test_dropout_training(void **state) {
  (void)state;
  double x[24];
  for (int i = 0; i < 24; i++) x[i] = i + 1;
  mxw_random_seed(7);
  mxw_set_training(1);
  for (int ax = 0; ax < 2; ax++) {
    mxw_ndarray *in = c_arr(MXW_FLOAT64, 3, SHP(2, 3, 4), x);
    const char **kv = ax ? KV("p", "0.5", "axes", "(1,)") : KV("p", "0.5");
    mxw_ndarray *outs[2];
    int nout = 2;
    assert_int_equal(c_run("Dropout", &in, 1, kv, outs, &nout), 0);
    int kept = 0;
    for (int i = 0; i < 24; i++) {
      const double y = c_at(outs[0], i);
      if (y != 0 && fabs(y - 2 * x[i]) > 1e-12) fail_msg("Dropout y[%d] = %g, neither 0 nor %g", i, y, 2 * x[i]);
      kept += y != 0;
      /* with axes=(1,), one mask value per (n, w): the same across the 3 rows of axis 1 */
      if (ax && (c_at(outs[0], i) != 0) != (c_at(outs[0], (i / 12) * 12 + i % 4) != 0))
        fail_msg("Dropout mask differs along the shared axis at %d", i);
    }
    assert_true(kept > 0 && kept < 24);
    c_free(nout, outs);
    mxw_ndarray_free(in);
  }
  /* gradient: recorded in training, head * mask */
  mxw_ndarray *in = c_arr(MXW_FLOAT64, 2, SHP(4, 6), x);
  int32_t req = 1;
  mxw_ndarray *g0 = c_arr(MXW_FLOAT64, 2, SHP(4, 6), NULL);
  assert_int_equal(mxw_autograd_mark_variables(1, &in, &g0, &req), 0);
  mxw_ndarray *outs[2];
  int nout = 2;
  mxw_autograd_set_recording(1);
  assert_int_equal(c_run("Dropout", &in, 1, KV("p", "0.5"), outs, &nout), 0);
  mxw_autograd_set_recording(0);
  mxw_ndarray *h = c_arr(MXW_FLOAT64, 2, SHP(4, 6), x), *g = NULL;
  assert_int_equal(mxw_autograd_grad(1, &outs[0], &h, 1, &in, 0, 1, &g), 0);
  for (int i = 0; i < 24; i++) {
    const double mask = c_at(outs[0], i) / x[i];
    assert_close(c_at(g, i), x[i] * mask, 1e-12);
  }
  mxw_set_training(0);
  c_free(nout, outs);
  mxw_ndarray_free(h);
  mxw_ndarray_free(g);
  mxw_ndarray_free(g0);
  mxw_ndarray_free(in);
}

static const double k_lambda = 1.0507009873554804934193349852946, k_alpha = 1.6732632423543772848170429916717;
static double f_leaky(double x) { return x > 0 ? x : 0.25 * x; }
static double f_elu(double x) { return x > 0 ? x : 0.25 * expm1(x); }
static double f_selu(double x) { return k_lambda * (x > 0 ? x : k_alpha * expm1(x)); }
static double f_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }

static void test_leaky_relu(void **state) {
  (void)state;
  static const char *const types[] = {"leaky", "elu", "selu", "gelu"};
  double (*fs[])(double) = {f_leaky, f_elu, f_selu, f_gelu};
  const double xs[6] = {-2, -0.5, -0.1, 0.3, 1, 2.5}, head[6] = {1, -1, 2, 0.5, 3, -2};
  for (int t = 0; t < 4; t++)
    for (int d = 0; d < 2; d++) {
      const int dt = d ? MXW_FLOAT32 : MXW_FLOAT64;
      const double tol = d ? 1e-4 : 1e-7;
      mxw_ndarray *x = c_arr(dt, 2, SHP(2, 3), xs);
      const char **kv = KV("act_type", types[t], "slope", "0.25");
      double y[6], gw[6];
      for (int i = 0; i < 6; i++) {
        y[i] = fs[t](xs[i]);
        gw[i] = head[i] * (fs[t](xs[i] + 1e-6) - fs[t](xs[i] - 1e-6)) / 2e-6;
      }
      mxw_ndarray *o = c_run1("LeakyReLU", &x, 1, kv);
      c_expect(o, y, 6, tol);
      mxw_ndarray_free(o);
      mxw_ndarray *g = c_grad("LeakyReLU", &x, 1, 0, 0, head, kv);
      c_expect(g, gw, 6, tol * 10);
      mxw_ndarray_free(g);
      mxw_ndarray_free(x);
    }
  /* float16 leaky goes through double */
  mxw_ndarray *x = c_arr(MXW_FLOAT16, 1, SHP(6), xs);
  mxw_ndarray *o = c_run1("LeakyReLU", &x, 1, KV("slope", "0.25"));
  c_expect(o, DV(-0.5, -0.125, -0.025, 0.3, 1, 2.5), 6, 2e-3);
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
  /* prelu: gamma per channel (axis 1); d gamma_c = sum over the channel of head * min(x, 0) */
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT32 : MXW_FLOAT64;
    mxw_ndarray *in[2] = {c_arr(dt, 2, SHP(2, 3), xs), c_arr(dt, 1, SHP(3), DV(0.1, 0.2, 0.3))};
    const char **kv = KV("act_type", "prelu");
    mxw_ndarray *y = c_run1("LeakyReLU", in, 2, kv);
    c_expect(y, DV(-0.2, -0.1, -0.03, 0.3, 1, 2.5), 6, 1e-6);
    mxw_ndarray_free(y);
    mxw_ndarray *g = c_grad("LeakyReLU", in, 2, 0, 0, head, kv);
    c_expect(g, DV(0.1, -0.2, 0.6, 0.5, 3, -2), 6, 1e-6);
    mxw_ndarray_free(g);
    g = c_grad("LeakyReLU", in, 2, 1, 0, head, kv);
    c_expect(g, DV(-2 * 1, -0.5 * -1, -0.1 * 2), 3, 1e-6);
    mxw_ndarray_free(g);
    c_free(2, in);
  }
  /* rrelu at inference: the mean slope (lower + upper) / 2; its gradient the same slope */
  x = c_arr(MXW_FLOAT64, 1, SHP(2), DV(-2, 3));
  o = c_run1("LeakyReLU", &x, 1, KV("act_type", "rrelu", "lower_bound", "0.25", "upper_bound", "0.75"));
  c_expect(o, DV(-1, 3), 2, 1e-12);
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
}

static void test_embedding_crop(void **state) {
  (void)state;
  /* weight (4, 2) float64; indices [3, 0, 3] as int64, uint8, int8: rows 3 and 0 collect the head */
  static const int idts[] = {MXW_INT64, MXW_UINT8, MXW_INT8};
  for (int t = 0; t < 3; t++) {
    mxw_ndarray *in[2] = {c_arr(idts[t], 1, SHP(3), DV(3, 0, 3)),
                          c_arr(MXW_FLOAT64, 2, SHP(4, 2), DV(0, 1, 2, 3, 4, 5, 6, 7))};
    const char **kv = KV("input_dim", "4", "output_dim", "2", "dtype", "float64");
    mxw_ndarray *o = c_run1("Embedding", in, 2, kv);
    c_expect(o, DV(6, 7, 0, 1, 6, 7), 6, 0);
    mxw_ndarray_free(o);
    mxw_ndarray *g = c_grad("Embedding", in, 2, 1, 0, DV(1, 2, 3, 4, 5, 6), kv);
    c_expect(g, DV(3, 4, 0, 0, 0, 0, 6, 8), 8, 0);
    mxw_ndarray_free(g);
    c_free(2, in);
  }
  /* Crop (1, 1, 3, 4) to h_w (2, 2) at offset (1, 1); center_crop: offset ((3-2)/2, (4-2)/2) = (0, 1) */
  double x[12];
  for (int i = 0; i < 12; i++) x[i] = i;
  mxw_ndarray *in = c_arr(MXW_FLOAT32, 4, SHP(1, 1, 3, 4), x);
  mxw_ndarray *g =
      c_grad("Crop", &in, 1, 0, 0, DV(1, 2, 3, 4), KV("num_args", "1", "h_w", "(2, 2)", "offset", "(1, 1)"));
  c_expect(g, DV(0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0), 12, 0);
  mxw_ndarray_free(g);
  g = c_grad("Crop", &in, 1, 0, 0, DV(1, 2, 3, 4), KV("num_args", "1", "h_w", "(2, 2)", "center_crop", "True"));
  c_expect(g, DV(0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0), 12, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dropout_training),
      cmocka_unit_test(test_leaky_relu),
      cmocka_unit_test(test_embedding_crop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
