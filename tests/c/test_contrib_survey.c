/* The survey's operators under ASan/UBSan (csrc/ops/contrib_dcn.c, contrib_more.c): hand-worked
 * values, and forward/backward runs whose sample points fall outside the image on every side. */
#include "mxw_test.h"

/* DCNv2 with zero offsets and mask 1 is a 3x3 convolution: x = w = 1..9 (3x3), pad 1. Worked by hand:
 * centre = 1 + 4 + ... + 81 = 285; corner (0, 0) = w5 x1 + w6 x2 + w8 x4 + w9 x5 = 5 + 12 + 32 + 45 = 94. */
static void test_mdcn_hand_worked(void **state) {
  (void)state;
  float v[9];
  for (int i = 0; i < 9; i++) v[i] = (float)(i + 1);
  const int32_t xs[4] = {1, 1, 3, 3}, os[4] = {1, 18, 3, 3}, ms[4] = {1, 9, 3, 3}, ws[4] = {1, 1, 3, 3};
  /* offsets are per output pixel: 18 channels x 9 pixels, all zero */
  float zeros[162] = {0}, ones[81], halves[81];
  for (int i = 0; i < 81; i++) {
    ones[i] = 1.f;
    halves[i] = 0.5f;
  }
  mxw_ndarray *in[4] = {t_array(4, xs, v), t_array(4, os, zeros), t_array(4, ms, ones), t_array(4, ws, v)};
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_contrib_ModulatedDeformableConvolution", in, 4, out, &nout, "kernel", "(3, 3)", "pad",
                            "(1, 1)", "num_filter", "1", "no_bias", "True", NULL),
                   0);
  t_expect_f32(out[0], (const float[]){94, 154, 106, 186, 285, 186, 106, 154, 94}, 9, 1e-6);
  mxw_ndarray_free(out[0]);
  /* mask 0.5 halves every output */
  mxw_ndarray_free(in[2]);
  in[2] = t_array(4, ms, halves);
  out[0] = NULL;
  assert_int_equal(t_invoke("_contrib_ModulatedDeformableConvolution", in, 4, out, &nout, "kernel", "(3, 3)", "pad",
                            "(1, 1)", "num_filter", "1", "no_bias", "True", NULL),
                   0);
  t_expect_f32(out[0], (const float[]){47, 77, 53, 93, 142.5f, 93, 53, 77, 47}, 9, 1e-6);
  mxw_ndarray_free(out[0]);
  for (int i = 0; i < 4; i++) mxw_ndarray_free(in[i]);
}

/* Offsets of +-40 pixels (far outside), +-1.5 (border neighbours) and NaN: every sample rule; forward and
 * backward must stay in bounds and give 0 for samples outside (-1, H) x (-1, W). */
static void test_mdcn_wild_offsets_backward(void **state) {
  (void)state;
  const int N = 2, C = 4, H = 5, W = 4, F = 4, kh = 3, kw = 2, DG = 2, G = 2;
  const int Ho = 5, Wo = 5; /* pad (1, 1), stride 1, dilate 1: (5 + 2 - 3) + 1, (4 + 2 - 2) + 1 */
  const int32_t xs[4] = {N, C, H, W}, os[4] = {N, DG * 2 * kh * kw, Ho, Wo}, ms[4] = {N, DG * kh * kw, Ho, Wo};
  const int32_t ws[4] = {F, C / G, kh, kw}, bs[1] = {F};
  const int nx = N * C * H * W, no = N * DG * 2 * kh * kw * Ho * Wo, nm = N * DG * kh * kw * Ho * Wo;
  float *x = malloc(sizeof(float) * (size_t)nx), *o = malloc(sizeof(float) * (size_t)no);
  float *m = malloc(sizeof(float) * (size_t)nm), w[F * (C / G) * kh * kw], b[F];
  for (int i = 0; i < nx; i++) x[i] = (float)((i * 7) % 11) - 5.f;
  const float wild[6] = {40.f, -40.f, 1.5f, -1.5f, 0.25f, NAN};
  for (int i = 0; i < no; i++) o[i] = wild[i % 6];
  for (int i = 0; i < nm; i++) m[i] = (float)(i % 5) / 4.f;
  for (int i = 0; i < F * (C / G) * kh * kw; i++) w[i] = (float)(i % 3) - 1.f;
  for (int i = 0; i < F; i++) b[i] = (float)i;
  mxw_ndarray *in[5] = {t_array(4, xs, x), t_array(4, os, o), t_array(4, ms, m), t_array(4, ws, w), t_array(1, bs, b)};
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_contrib_ModulatedDeformableConvolution", in, 5, out, &nout, "kernel", "(3, 2)", "pad",
                            "(1, 1)", "num_filter", "4", "num_group", "2", "num_deformable_group", "2", NULL),
                   0);
  mxw_ndarray_free(out[0]);
  /* backward: (ograd, data, offset, mask, weight) -> 5 gradients */
  const int32_t ys[4] = {N, F, Ho, Wo};
  float *og = malloc(sizeof(float) * (size_t)(N * F * Ho * Wo));
  for (int i = 0; i < N * F * Ho * Wo; i++) og[i] = 1.f;
  mxw_ndarray *bin[5] = {t_array(4, ys, og), in[0], in[1], in[2], in[3]};
  mxw_ndarray *bout[5] = {NULL};
  int nb = 5;
  assert_int_equal(t_invoke("_backward__contrib_ModulatedDeformableConvolution", bin, 5, bout, &nb, "kernel", "(3, 2)",
                            "pad", "(1, 1)", "num_filter", "4", "num_group", "2", "num_deformable_group", "2", NULL),
                   0);
  assert_int_equal(nb, 5);
  /* bias gradient = sum of ograd over batch and pixels: 2 * 25 */
  t_expect_f32(bout[4], (const float[]){50, 50, 50, 50}, 4, 1e-6);
  /* a tap whose offset is +-40 samples outside: its mask gradient is 0 (offset channels 2k/2k+1 of the
   * first group at pixel 0 hold wild[(2k * 25) % 6], wild[((2k + 1) * 25) % 6]) */
  const float *dm = (const float *)mxw_ndarray_data(bout[2]);
  for (int k = 0; k < kh * kw; k++) {
    const float oh = wild[(2 * k * Ho * Wo) % 6], ow = wild[((2 * k + 1) * Ho * Wo) % 6];
    if (fabsf(oh) == 40.f || fabsf(ow) == 40.f) assert_true(dm[k * Ho * Wo] == 0.f);
  }
  for (int i = 0; i < 5; i++) mxw_ndarray_free(bout[i]);
  mxw_ndarray_free(bin[0]);
  for (int i = 0; i < 5; i++) mxw_ndarray_free(in[i]);
  free(x);
  free(o);
  free(m);
  free(og);
}

/* amp_multicast: float16 + float32 -> float32 both; int32 unchanged. SyncBatchNorm inference, hand-worked:
 * (x - mean) / sqrt(var + eps) with eps 0.25, var 0.75 -> (x - 1) / 1; fix_gamma, beta 2. */
static void test_multicast_and_syncbn(void **state) {
  (void)state;
  const int32_t s[1] = {3};
  mxw_ndarray *a = NULL;
  assert_int_equal(mxw_ndarray_create(1, s, MXW_FLOAT16, &a), 0);
  mxw_ndarray *bb = t_array(1, s, (const float[]){1, 2, 3}), *ins[2] = {a, bb}, *outs[2] = {NULL, NULL};
  int n = 2;
  assert_int_equal(t_invoke("amp_multicast", ins, 2, outs, &n, "num_outputs", "2", NULL), 0);
  assert_int_equal(mxw_ndarray_dtype(outs[0]), MXW_FLOAT32);
  assert_int_equal(mxw_ndarray_dtype(outs[1]), MXW_FLOAT32);
  t_expect_f32(outs[1], (const float[]){1, 2, 3}, 3, 0);
  for (int i = 0; i < 2; i++) mxw_ndarray_free(outs[i]);
  mxw_ndarray_free(a);
  mxw_ndarray_free(bb);

  const int32_t xs[2] = {2, 1}, cs[1] = {1};
  mxw_ndarray *bn_in[5] = {t_array(2, xs, (const float[]){3, -1}), t_array(1, cs, (const float[]){5}),
                           t_array(1, cs, (const float[]){2}), t_array(1, cs, (const float[]){1}),
                           t_array(1, cs, (const float[]){0.75f})};
  mxw_ndarray *y[3] = {NULL, NULL, NULL};
  int ny = 3;
  assert_int_equal(t_invoke("_contrib_SyncBatchNorm", bn_in, 5, y, &ny, "key", "fcn0_syncbatchnorm0_", "eps", "0.25",
                            "ndev", "8", NULL),
                   0);
  t_expect_f32(y[0], (const float[]){4, 0}, 2, 1e-6);
  for (int i = 0; i < ny; i++) mxw_ndarray_free(y[i]);
  /* key is required */
  ny = 3;
  y[0] = y[1] = y[2] = NULL;
  assert_int_not_equal(t_invoke("_contrib_SyncBatchNorm", bn_in, 5, y, &ny, NULL), 0);
  assert_error_contains("key");
  for (int i = 0; i < 5; i++) mxw_ndarray_free(bn_in[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mdcn_hand_worked),
      cmocka_unit_test(test_mdcn_wild_offsets_backward),
      cmocka_unit_test(test_multicast_and_syncbn),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
