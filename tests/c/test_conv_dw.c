/* The depthwise 3x3 kernel (kernels/dwconv.c: pad 1, stride 1 or 2) against the convolution
 * formula as a plain loop in double, on every plane size from 1x1 to 13x21 and some wide ones,
 * through each of its paths (vertical strips of 4 and 8, row pairs), which must also agree with
 * each other bit for bit (the same sum in the same order); and through the Convolution op
 * (num_group = C = num_filter, kernel 3x3, pad 1), whose result must match the kernel's. */
#include <stdlib.h>

#include "kernels/conv_kernels.h"
#include "mxw_test.h"

static uint32_t g_lcg = 99;
static float rnd(void) {
  g_lcg = g_lcg * 1664525u + 1013904223u;
  return (float)(g_lcg >> 8) / 16777216.f * 2.f - 1.f;
}

/* out[y][x] = bias + sum over i, j < 3 of w[3i + j] in[s*y - 1 + i][s*x - 1 + j], 0 outside. */
static double reference(const float *in, size_t H, size_t W, int s, const float *w, float bias, size_t y, size_t x) {
  double acc = bias;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      const long iy = (long)y * s - 1 + i, ix = (long)x * s - 1 + j;
      if (iy >= 0 && iy < (long)H && ix >= 0 && ix < (long)W) acc += (double)w[3 * i + j] * in[iy * (long)W + ix];
    }
  return acc;
}

/* One plane through every path: each within float error of the loop, all paths equal. The
 * output buffers have guard cells after the plane that must stay untouched. */
static void check_plane(size_t H, size_t W, int s) {
  const size_t Ho = (H - 1) / (size_t)s + 1, Wo = (W - 1) / (size_t)s + 1, n = Ho * Wo, guard = 16;
  float *in = malloc(sizeof(float) * H * W), w[9], bias = rnd();
  float *out[4];
  for (size_t i = 0; i < H * W; i++) in[i] = rnd();
  for (int i = 0; i < 9; i++) w[i] = rnd();
  for (int path = 0; path < 4; path++) {
    out[path] = malloc(sizeof(float) * (n + guard));
    for (size_t i = 0; i < n + guard; i++) out[path][i] = 12345.f;
    mxw_dwconv3x3_path = path;
    mxw_f32_dwconv3x3(H, W, s, in, w, bias, out[path]);
    for (size_t i = n; i < n + guard; i++)
      if (out[path][i] != 12345.f) fail_msg("H %zu W %zu stride %d path %d: wrote past the plane", H, W, s, path);
    if (path > 0 && memcmp(out[path], out[0], sizeof(float) * n) != 0)
      fail_msg("H %zu W %zu stride %d: path %d differs from path 0", H, W, s, path);
  }
  mxw_dwconv3x3_path = 0;
  for (size_t y = 0; y < Ho; y++)
    for (size_t x = 0; x < Wo; x++) {
      const double want = reference(in, H, W, s, w, bias, y, x), got = out[0][y * Wo + x];
      if (!(fabs(got - want) <= 1e-5 * (1.0 + fabs(want))))
        fail_msg("H %zu W %zu stride %d: out[%zu][%zu] = %.8g, want %.8g", H, W, s, y, x, got, want);
    }
  free(in);
  for (int path = 0; path < 4; path++) free(out[path]);
}

static void test_dw3x3_all_small_planes(void **state) {
  (void)state;
  for (int s = 1; s <= 2; s++)
    for (size_t H = 1; H <= 13; H++)
      for (size_t W = 1; W <= 21; W++) check_plane(H, W, s);
}

static void test_dw3x3_model_planes(void **state) {
  (void)state;
  const size_t sizes[][2] = {{112, 112}, {56, 56}, {28, 28}, {14, 14}, {7, 7}, {57, 49}, {3, 100}, {50, 47}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int s = 1; s <= 2; s++) check_plane(sizes[i][0], sizes[i][1], s);
}

/* Convolution with num_group = C: the op takes the kernel for 3x3 / pad 1 / stride 1 or 2 and
 * must give what the kernel gives on each plane (bias included). */
static void test_dw3x3_through_op(void **state) {
  (void)state;
  const int N = 2, C = 3, H = 9, W = 11;
  for (int s = 1; s <= 2; s++) {
    int32_t xs[4] = {N, C, H, W}, ws[4] = {C, 1, 3, 3}, bs[1] = {C};
    mxw_ndarray *in[3] = {t_array(4, xs, NULL), t_array(4, ws, NULL), t_array(1, bs, NULL)}, *out[1] = {NULL};
    for (int a = 0; a < 3; a++)
      for (int64_t i = 0; i < mxw_ndarray_size(in[a]); i++) ((float *)mxw_ndarray_data(in[a]))[i] = rnd();
    char stride[16], ng[8];
    snprintf(stride, sizeof stride, "(%d, %d)", s, s);
    snprintf(ng, sizeof ng, "%d", C);
    int nout = 1;
    assert_int_equal(t_invoke("Convolution", in, 3, out, &nout, "kernel", "(3, 3)", "pad", "(1, 1)", "stride", stride,
                              "num_filter", ng, "num_group", ng, NULL),
                     0);
    const float *x = mxw_ndarray_data(in[0]), *w = mxw_ndarray_data(in[1]), *b = mxw_ndarray_data(in[2]);
    const int Ho = (H - 1) / s + 1, Wo = (W - 1) / s + 1;
    float *want = malloc(sizeof(float) * (size_t)(Ho * Wo));
    for (int n = 0; n < N; n++)
      for (int c = 0; c < C; c++) {
        mxw_f32_dwconv3x3(H, W, s, x + (n * C + c) * H * W, w + c * 9, b[c], want);
        assert_memory_equal(want, (const float *)mxw_ndarray_data(out[0]) + (n * C + c) * Ho * Wo,
                            sizeof(float) * (size_t)(Ho * Wo));
      }
    free(want);
    mxw_ndarray_free(out[0]);
    for (int a = 0; a < 3; a++) mxw_ndarray_free(in[a]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dw3x3_all_small_planes),
      cmocka_unit_test(test_dw3x3_model_planes),
      cmocka_unit_test(test_dw3x3_through_op),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
