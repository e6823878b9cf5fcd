/* Winograd F(2x2, 3x3) (float32 3x3 stride-1 Convolution with at least 16 channels and 16 filters per
 * group) against the convolution formula as a plain loop in double, on odd and even output sizes
 * from 1 to 17 (partial tiles and partial groups of 4 tiles), pads 0 to 2, groups, batches and
 * bias; against the im2col + GEMM path with Winograd turned off; and bit for bit across 1 to 4
 * threads. Winograd's transforms add rounding, so the bound is relative to the sum of
 * |weight * input| of each output (the scale of its rounding error), not to the output. */
#include <stdlib.h>

#include "kernels/conv_kernels.h"
#include "kernels/gemm.h"
#include "mxw_test.h"

extern int mxw_conv_winograd;

static uint32_t g_lcg = 2024;
static float rnd(void) {
  g_lcg = g_lcg * 1664525u + 1013904223u;
  return (float)(g_lcg >> 8) / 16777216.f * 2.f - 1.f;
}

typedef struct {
  int N, C, F, G, H, W, pad, bias;
} wcase;

static mxw_ndarray *run(const wcase *k, mxw_ndarray **in, int threads) {
  char pad[32], nf[16], ng[16];
  snprintf(pad, sizeof pad, "(%d, %d)", k->pad, k->pad);
  snprintf(nf, sizeof nf, "%d", k->F);
  snprintf(ng, sizeof ng, "%d", k->G);
  assert_int_equal(mxw_set_num_threads(threads), 0);
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  if (t_invoke("Convolution", in, k->bias ? 3 : 2, out, &nout, "kernel", "(3, 3)", "pad", pad, "num_filter", nf,
               "num_group", ng, "no_bias", k->bias ? "False" : "True", NULL) != 0)
    fail_msg("%s", mxw_get_last_error());
  assert_int_equal(mxw_set_num_threads(1), 0);
  return out[0];
}

static void check(const wcase *k) {
  const int Cg = k->C / k->G, Fg = k->F / k->G, Ho = k->H + 2 * k->pad - 2, Wo = k->W + 2 * k->pad - 2;
  int32_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->F, Cg, 3, 3}, bs[1] = {k->F};
  mxw_ndarray *in[3] = {t_array(4, xs, NULL), t_array(4, ws, NULL), t_array(1, bs, NULL)};
  for (int a = 0; a < 3; a++)
    for (int64_t i = 0; i < mxw_ndarray_size(in[a]); i++) ((float *)mxw_ndarray_data(in[a]))[i] = rnd();
  const float *x = mxw_ndarray_data(in[0]), *w = mxw_ndarray_data(in[1]), *b = mxw_ndarray_data(in[2]);
  mxw_ndarray *y1 = run(k, in, 1);
  const float *got = mxw_ndarray_data(y1);
  for (int n = 0; n < k->N; n++)
    for (int f = 0; f < k->F; f++)
      for (int oy = 0; oy < Ho; oy++)
        for (int ox = 0; ox < Wo; ox++) {
          const int g = f / Fg;
          double want = k->bias ? b[f] : 0.0, scale = fabs(want);
          for (int c = 0; c < Cg; c++)
            for (int i = 0; i < 3; i++)
              for (int j = 0; j < 3; j++) {
                const int iy = oy - k->pad + i, ix = ox - k->pad + j;
                if (iy < 0 || iy >= k->H || ix < 0 || ix >= k->W) continue;
                const double p =
                    (double)w[((f * Cg + c) * 3 + i) * 3 + j] * x[((n * k->C + g * Cg + c) * k->H + iy) * k->W + ix];
                want += p;
                scale += fabs(p);
              }
          const double v = got[((n * k->F + f) * Ho + oy) * Wo + ox];
          if (!(fabs(v - want) <= 2e-6 * scale + 1e-7))
            fail_msg("N %d C %d F %d G %d %dx%d pad %d: out[%d][%d][%d][%d] = %.8g, want %.8g (scale %.3g)", k->N, k->C,
                     k->F, k->G, k->H, k->W, k->pad, n, f, oy, ox, v, want, scale);
        }
  /* the same through im2col + GEMM: within the same bound */
  mxw_conv_winograd = 0;
  mxw_ndarray *yg = run(k, in, 1);
  mxw_conv_winograd = 1;
  const float *gg = mxw_ndarray_data(yg);
  for (int64_t i = 0; i < mxw_ndarray_size(yg); i++)
    if (!(fabs((double)gg[i] - got[i]) <= 1e-5 * (1.0 + fabs((double)got[i])) * Cg))
      fail_msg("Winograd and im2col + GEMM differ at %lld: %.8g vs %.8g", (long long)i, got[i], gg[i]);
  /* threads: bit for bit, with the split thresholds lowered so that small shapes split */
  const int64_t conv_min = mxw_conv_parallel_min_work, gemm_min = mxw_gemm_parallel_min_macs;
  mxw_conv_parallel_min_work = 1;
  mxw_gemm_parallel_min_macs = 1;
  for (int t = 2; t <= 4; t++) {
    mxw_ndarray *yt = run(k, in, t);
    if (memcmp(mxw_ndarray_data(yt), got, sizeof(float) * (size_t)mxw_ndarray_size(yt)) != 0)
      fail_msg("N %d C %d F %d %dx%d: %d threads differ from 1", k->N, k->C, k->F, k->H, k->W, t);
    mxw_ndarray_free(yt);
  }
  mxw_conv_parallel_min_work = conv_min;
  mxw_gemm_parallel_min_macs = gemm_min;
  mxw_ndarray_free(y1);
  mxw_ndarray_free(yg);
  for (int a = 0; a < 3; a++) mxw_ndarray_free(in[a]);
}

static void test_winograd_shapes(void **state) {
  (void)state;
  const wcase cases[] = {
      {1, 16, 16, 1, 3, 3, 1, 1},   {1, 16, 17, 1, 4, 5, 1, 0},   {2, 17, 16, 1, 9, 8, 1, 1},
      {1, 16, 16, 1, 7, 7, 1, 1},   {1, 20, 18, 1, 14, 14, 1, 1}, {1, 16, 24, 1, 17, 11, 0, 1},
      {3, 16, 16, 1, 6, 13, 2, 1},  {1, 32, 32, 2, 10, 9, 1, 1},  {2, 48, 48, 3, 5, 12, 1, 0},
      {1, 16, 16, 1, 1, 1, 1, 1},   {1, 16, 16, 1, 2, 9, 1, 1},   {1, 16, 16, 1, 30, 3, 1, 1},
      {1, 64, 64, 1, 56, 56, 1, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_winograd_shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
