/* Pooling: hand-worked values on a 1x1x5x5 ramp (valid / full conventions, padding with and
 * without count_include_pad, global pooling), 1-D 'same' and lp, 3-D, empty windows, float64 and
 * float16, the channel-last layouts (NWC, NHWC, NDHWC) and their agreement with the channel-first
 * results (forward and gradient, bit for bit), the SIMD interior path against a plain reference
 * loop written here, and errors. */
#include <float.h>
#include <stdlib.h>

#include "mxw_test.h"

/* x[i] = i on (1, 1, 5, 5):
 *    0  1  2  3  4
 *    5  6  7  8  9
 *   10 11 12 13 14
 *   15 16 17 18 19
 *   20 21 22 23 24 */
static mxw_ndarray *ramp_5x5(void) {
  int32_t s[4] = {1, 1, 5, 5};
  float v[25];
  for (int i = 0; i < 25; i++) v[i] = (float)i;
  return t_array(4, s, v);
}

/* Runs Pooling on x with attributes (NULL-ended pairs); fails the test on error. */
#define POOL(x, ...)                                                                                    \
  ({                                                                                                    \
    mxw_ndarray *in_[1] = {(x)}, *out_[1] = {NULL};                                                     \
    int n_ = 1;                                                                                         \
    if (t_invoke("Pooling", in_, 1, out_, &n_, __VA_ARGS__) != 0) fail_msg("%s", mxw_get_last_error()); \
    out_[0];                                                                                            \
  })

static void test_max_valid_and_full(void **state) {
  (void)state;
  mxw_ndarray *x = ramp_5x5(), *y;
  /* 3x3 stride 2 valid: windows start at 0 and 2 -> maxima at (2,2), (2,4), (4,2), (4,4) */
  y = POOL(x, "kernel", "(3, 3)", "stride", "(2, 2)", NULL);
  t_expect_shape(y, 4, (int32_t[]){1, 1, 2, 2});
  t_expect_f32(y, (float[]){12, 14, 22, 24}, 4, 0);
  mxw_ndarray_free(y);
  /* 2x2 stride 2: valid keeps 2x2 (rows 0-1, 2-3) */
  y = POOL(x, "kernel", "(2, 2)", "stride", "(2, 2)", "pool_type", "max", NULL);
  t_expect_shape(y, 4, (int32_t[]){1, 1, 2, 2});
  t_expect_f32(y, (float[]){6, 8, 16, 18}, 4, 0);
  mxw_ndarray_free(y);
  /* full: 1 + ceil(3 / 2) = 3; the last window (row/col 4) is cut to one cell */
  y = POOL(x, "kernel", "(2, 2)", "stride", "(2, 2)", "pooling_convention", "full", NULL);
  t_expect_shape(y, 4, (int32_t[]){1, 1, 3, 3});
  t_expect_f32(y, (float[]){6, 8, 9, 16, 18, 19, 21, 23, 24}, 9, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

/* avg with the full convention: the part of the last window past in + p does not count, so the
 * corner window (row 4, col 4) has pool_size 1 and the edge windows 2. */
static void test_avg_full_divisors(void **state) {
  (void)state;
  mxw_ndarray *x = ramp_5x5();
  mxw_ndarray *y =
      POOL(x, "kernel", "(2, 2)", "stride", "(2, 2)", "pooling_convention", "full", "pool_type", "avg", NULL);
  t_expect_f32(y,
               (float[]){(0 + 1 + 5 + 6) / 4.f, (2 + 3 + 7 + 8) / 4.f, (4 + 9) / 2.f, (10 + 11 + 15 + 16) / 4.f,
                         (12 + 13 + 17 + 18) / 4.f, (14 + 19) / 2.f, (20 + 21) / 2.f, (22 + 23) / 2.f, 24},
               9, 1e-6);
  mxw_ndarray_free(y);
  /* sum: same windows, divisor 1 */
  y = POOL(x, "kernel", "(2, 2)", "stride", "(2, 2)", "pooling_convention", "full", "pool_type", "sum", NULL);
  t_expect_f32(y, (float[]){12, 20, 13, 52, 60, 33, 41, 45, 24}, 9, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

/* 3x3, stride 1, pad 1 keeps 5x5. Corner (0,0) sees 0+1+5+6 = 12: /9 with padding counted, /4
 * without. Edge (0,2) sees 1+2+3+6+7+8 = 27: /9 or /6. The centre sees 108: /9 either way. */
static void test_avg_padding_and_count_include_pad(void **state) {
  (void)state;
  mxw_ndarray *x = ramp_5x5(), *y;
  y = POOL(x, "kernel", "(3, 3)", "pad", "(1, 1)", "pool_type", "avg", NULL);
  t_expect_shape(y, 4, (int32_t[]){1, 1, 5, 5});
  const float *v = (const float *)mxw_ndarray_data(y);
  assert_close(v[0], 12 / 9.0, 1e-6);
  assert_close(v[2], 27 / 9.0, 1e-6);
  assert_close(v[12], 12, 1e-6);
  assert_close(v[24], (18 + 19 + 23 + 24) / 9.0, 1e-6);
  mxw_ndarray_free(y);
  y = POOL(x, "kernel", "(3, 3)", "pad", "(1, 1)", "pool_type", "avg", "count_include_pad", "False", NULL);
  v = (const float *)mxw_ndarray_data(y);
  assert_close(v[0], 3, 1e-6);
  assert_close(v[2], 4.5, 1e-6);
  assert_close(v[12], 12, 1e-6);
  assert_close(v[24], (18 + 19 + 23 + 24) / 4.0, 1e-6);
  mxw_ndarray_free(y);
  /* max never sees the padding: the corner is max(0, 1, 5, 6) */
  y = POOL(x, "kernel", "(3, 3)", "pad", "(1, 1)", NULL);
  v = (const float *)mxw_ndarray_data(y);
  assert_close(v[0], 6, 0);
  assert_close(v[24], 24, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

static void test_global_pool(void **state) {
  (void)state;
  mxw_ndarray *x = ramp_5x5(), *y;
  y = POOL(x, "global_pool", "True", "pool_type", "avg", NULL);
  t_expect_shape(y, 4, (int32_t[]){1, 1, 1, 1});
  t_expect_f32(y, (float[]){12}, 1, 1e-6);
  mxw_ndarray_free(y);
  /* kernel, stride and pad are ignored */
  y = POOL(x, "global_pool", "True", "kernel", "(2, 2)", "stride", "(2, 2)", "pad", "(1, 1)", NULL);
  t_expect_shape(y, 4, (int32_t[]){1, 1, 1, 1});
  t_expect_f32(y, (float[]){24}, 1, 0);
  mxw_ndarray_free(y);
  y = POOL(x, "global_pool", "True", "pool_type", "sum", "__layout__", "hidden keys are ignored", NULL);
  t_expect_f32(y, (float[]){300}, 1, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
  /* (2, 3, 4) 1-D data: one value per (n, c) */
  int32_t s3[3] = {2, 3, 4};
  float v[24];
  for (int i = 0; i < 24; i++) v[i] = (float)((i * 7) % 11);
  x = t_array(3, s3, v);
  y = POOL(x, "global_pool", "True", "pool_type", "max", NULL);
  t_expect_shape(y, 3, (int32_t[]){2, 3, 1});
  for (int r = 0; r < 6; r++) {
    float m = -1;
    for (int j = 0; j < 4; j++) m = v[r * 4 + j] > m ? v[r * 4 + j] : m;
    assert_close(((float *)mxw_ndarray_data(y))[r], m, 0);
  }
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

/* 1-D: x = [1, -2, 2, 4], kernel 2 stride 2. lp: p=1 sums with sign, p=2 sqrt(sum x^2),
 * p=3 cbrt(sum x^3). */
static void test_lp_1d(void **state) {
  (void)state;
  int32_t s[3] = {1, 1, 4};
  mxw_ndarray *x = t_array(3, s, (float[]){1, -2, 2, 4}), *y;
  y = POOL(x, "kernel", "(2,)", "stride", "(2,)", "pool_type", "lp", "p_value", "1", NULL);
  t_expect_shape(y, 3, (int32_t[]){1, 1, 2});
  t_expect_f32(y, (float[]){-1, 6}, 2, 1e-6);
  mxw_ndarray_free(y);
  y = POOL(x, "kernel", "2", "stride", "2", "pool_type", "lp", "p_value", "2", NULL);
  t_expect_f32(y, (float[]){2.2360680f, 4.4721360f}, 2, 1e-6);
  mxw_ndarray_free(y);
  y = POOL(x, "kernel", "(2,)", "stride", "(2,)", "pool_type", "lp", "p_value", "3", NULL);
  t_expect_f32(y, (float[]){-1.9129312f, 4.1601676f}, 2, 1e-6); /* cbrt(1-8), cbrt(8+64) */
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

/* 'same' (1-D): ceil(5 / 2) = 3 outputs, windows [0,3), [2,5), [4,5). */
static void test_same_1d_and_empty_windows(void **state) {
  (void)state;
  int32_t s[3] = {1, 1, 5};
  mxw_ndarray *x = t_array(3, s, (float[]){1, 5, 2, 4, 3}), *y;
  y = POOL(x, "kernel", "(3,)", "stride", "(2,)", "pooling_convention", "same", NULL);
  t_expect_shape(y, 3, (int32_t[]){1, 1, 3});
  t_expect_f32(y, (float[]){5, 4, 3}, 3, 0);
  mxw_ndarray_free(y);
  y = POOL(x, "kernel", "(3,)", "stride", "(2,)", "pooling_convention", "same", "pool_type", "avg", NULL);
  t_expect_f32(y, (float[]){8 / 3.f, 3, 3}, 3, 1e-6); /* the last window holds one cell */
  mxw_ndarray_free(y);
  /* kernel 1, pad 1, stride 3 on 5 cells: windows start at -1, 2, 5 -> the first and last are
   * empty, so max gives the lowest float and avg 0 */
  y = POOL(x, "kernel", "(1,)", "stride", "(3,)", "pad", "(1,)", NULL);
  t_expect_shape(y, 3, (int32_t[]){1, 1, 3}); /* 1 + (5 + 2 - 1) / 3 */
  t_expect_f32(y, (float[]){-FLT_MAX, 2, -FLT_MAX}, 3, 0);
  mxw_ndarray_free(y);
  y = POOL(x, "kernel", "(1,)", "stride", "(3,)", "pad", "(1,)", "pool_type", "avg", NULL);
  t_expect_f32(y, (float[]){0, 2, 0}, 3, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

/* 3-D: (1, 2, 2, 3, 3) with kernel (2, 2, 2), stride 1: each output is the max / mean of a
 * 2x2x2 block, worked with loops over the indices. */
static void test_3d(void **state) {
  (void)state;
  int32_t s[5] = {1, 2, 2, 3, 3};
  float v[36];
  for (int i = 0; i < 36; i++) v[i] = (float)((i * 13) % 17) - 8;
  mxw_ndarray *x = t_array(5, s, v), *ymax, *yavg;
  ymax = POOL(x, "kernel", "(2, 2, 2)", NULL);
  yavg = POOL(x, "kernel", "(2, 2, 2)", "pool_type", "avg", NULL);
  t_expect_shape(ymax, 5, (int32_t[]){1, 2, 1, 2, 2});
  const float *pm = (const float *)mxw_ndarray_data(ymax), *pa = (const float *)mxw_ndarray_data(yavg);
  for (int c = 0; c < 2; c++)
    for (int oh = 0; oh < 2; oh++)
      for (int ow = 0; ow < 2; ow++) {
        float m = -1e9f, sum = 0;
        for (int d = 0; d < 2; d++)
          for (int h = 0; h < 2; h++)
            for (int w = 0; w < 2; w++) {
              float e = v[c * 18 + d * 9 + (oh + h) * 3 + ow + w];
              m = e > m ? e : m;
              sum += e;
            }
        assert_close(pm[c * 4 + oh * 2 + ow], m, 0);
        assert_close(pa[c * 4 + oh * 2 + ow], sum / 8, 1e-6);
      }
  mxw_ndarray_free(ymax);
  mxw_ndarray_free(yavg);
  mxw_ndarray_free(x);
}

/* float64 and float16 give the ramp's results too */
static void test_other_dtypes(void **state) {
  (void)state;
  int32_t s[4] = {1, 1, 5, 5};
  mxw_ndarray *x64 = NULL, *x16 = NULL;
  assert_int_equal(mxw_ndarray_create(4, s, MXW_FLOAT64, &x64), 0);
  assert_int_equal(mxw_ndarray_create(4, s, MXW_FLOAT16, &x16), 0);
  for (int i = 0; i < 25; i++) {
    ((double *)mxw_ndarray_data(x64))[i] = i;
    ((uint16_t *)mxw_ndarray_data(x16))[i] = mxw_float_to_half((float)i);
  }
  mxw_ndarray *y = POOL(x64, "kernel", "(3, 3)", "pad", "(1, 1)", "pool_type", "avg", "count_include_pad", "0", NULL);
  assert_int_equal(mxw_ndarray_dtype(y), MXW_FLOAT64);
  assert_close(((double *)mxw_ndarray_data(y))[0], 3, 1e-12);
  assert_close(((double *)mxw_ndarray_data(y))[2], 4.5, 1e-12);
  mxw_ndarray_free(y);
  y = POOL(x16, "kernel", "(2, 2)", "stride", "(2, 2)", "pooling_convention", "full", NULL);
  assert_int_equal(mxw_ndarray_dtype(y), MXW_FLOAT16);
  const float want[9] = {6, 8, 9, 16, 18, 19, 21, 23, 24};
  for (int i = 0; i < 9; i++) assert_close(mxw_half_to_float(((uint16_t *)mxw_ndarray_data(y))[i]), want[i], 0);
  mxw_ndarray_free(y);
  /* an empty float16 max window is float16's lowest value, not -inf */
  int32_t s1[3] = {1, 1, 2};
  mxw_ndarray *h = NULL;
  assert_int_equal(mxw_ndarray_create(3, s1, MXW_FLOAT16, &h), 0);
  y = POOL(h, "kernel", "(1,)", "pad", "(1,)", NULL);
  assert_close(mxw_half_to_float(((uint16_t *)mxw_ndarray_data(y))[0]), -65504, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(h);
  mxw_ndarray_free(x64);
  mxw_ndarray_free(x16);
}

/* The plain definition, written here independently of the library: float accumulation,
 * each element divided by the pool size before it is added. */
static float ref_pool2d(const float *x, int H, int W, int kh, int kw, int sh, int sw, int ph, int pw, int type, int oh,
                        int ow) {
  int h0 = oh * sh - ph, w0 = ow * sw - pw;
  if (type == 0) {
    float m = -FLT_MAX;
    for (int h = h0; h < h0 + kh; h++)
      for (int w = w0; w < w0 + kw; w++)
        if (h >= 0 && h < H && w >= 0 && w < W && x[h * W + w] > m) m = x[h * W + w];
    return m;
  }
  int h1 = h0 + kh < H + ph ? h0 + kh : H + ph, w1 = w0 + kw < W + pw ? w0 + kw : W + pw;
  float size = type == 1 ? (float)((h1 - h0) * (w1 - w0)) : 1.f, sum = 0;
  for (int h = h0; h < h1; h++)
    for (int w = w0; w < w1; w++)
      if (h >= 0 && h < H && w >= 0 && w < W) sum += x[h * W + w] / size;
  return sum;
}

/* The SIMD interior path of 2x2 / 3x3 windows against the reference on odd sizes, strides 1-3,
 * pads 0-1, both conventions. */
static void test_fast_path_matches_reference(void **state) {
  (void)state;
  static const char *types[] = {"max", "avg", "sum"};
  const int sizes[][2] = {{11, 13}, {7, 9}, {16, 17}, {3, 5}, {24, 31}};
  unsigned seed = 12345;
  for (int si = 0; si < 5; si++) {
    int H = sizes[si][0], W = sizes[si][1];
    int32_t shape[4] = {2, 3, H, W};
    int n = 6 * H * W;
    float *v = (float *)malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      v[i] = (float)((seed >> 8) % 2001) / 1000.f - 1.f;
    }
    mxw_ndarray *x = t_array(4, shape, v);
    for (int k = 2; k <= 3; k++)
      for (int s = 1; s <= 3; s++)
        for (int pad = 0; pad <= 1; pad++)
          for (int conv = 0; conv < 2; conv++)
            for (int t = 0; t < 3; t++) {
              if (k > H + 2 * pad || k > W + 2 * pad) continue;
              char ks[32], ss[32], ps[32];
              snprintf(ks, sizeof ks, "(%d, %d)", k, k);
              snprintf(ss, sizeof ss, "(%d, %d)", s, s);
              snprintf(ps, sizeof ps, "(%d, %d)", pad, pad);
              mxw_ndarray *y = POOL(x, "kernel", ks, "stride", ss, "pad", ps, "pool_type", types[t],
                                    "pooling_convention", conv ? "full" : "valid", NULL);
              int32_t os[4];
              mxw_ndarray_shape(y, os);
              const float *py = (const float *)mxw_ndarray_data(y);
              for (int plane = 0; plane < 6; plane++)
                for (int oh = 0; oh < os[2]; oh++)
                  for (int ow = 0; ow < os[3]; ow++) {
                    float want = ref_pool2d(v + plane * H * W, H, W, k, k, s, s, pad, pad, t, oh, ow);
                    float got = py[(plane * os[2] + oh) * os[3] + ow];
                    if (!(fabsf(got - want) <= 1e-6f * (1 + fabsf(want))))
                      fail_msg("%dx%d k%d s%d p%d %s %s at plane %d (%d, %d): %.9g vs %.9g", H, W, k, s, pad, types[t],
                               conv ? "full" : "valid", plane, oh, ow, got, want);
                  }
              mxw_ndarray_free(y);
            }
    mxw_ndarray_free(x);
    free(v);
  }
}

/* Channel-last layouts. NHWC data (1, 5, 5, 2): channel 0 is the ramp x[h][w] = 5h + w, channel 1
 * its negation, stored interleaved (v[(5h + w)*2 + c]).
 *   max 3x3 stride 2: channel 0 as in test_max_valid_and_full (12, 14, 22, 24); channel 1 takes
 *   minus the smallest ramp value of each window, -(0, 2, 10, 12); output (1, 2, 2, 2)
 *   interleaved.
 *   avg 3x3 pad 1 (padding counted): corner (0+1+5+6)/9 = 4/3, centre 12, last corner
 *   (18+19+23+24)/9 = 28/3; channel 1 the negations.
 *   global max: (1, 1, 1, 2) = (24, 0). */
static void test_channel_last(void **state) {
  (void)state;
  float v[50];
  for (int i = 0; i < 25; i++) v[2 * i] = (float)i, v[2 * i + 1] = (float)-i;
  mxw_ndarray *x = t_array(4, (int32_t[]){1, 5, 5, 2}, v), *y;
  y = POOL(x, "kernel", "(3, 3)", "stride", "(2, 2)", "layout", "NHWC", NULL);
  t_expect_shape(y, 4, (int32_t[]){1, 2, 2, 2});
  t_expect_f32(y, (float[]){12, 0, 14, -2, 22, -10, 24, -12}, 8, 0);
  mxw_ndarray_free(y);
  y = POOL(x, "kernel", "(3, 3)", "pad", "(1, 1)", "pool_type", "avg", "layout", "NHWC", NULL);
  t_expect_shape(y, 4, (int32_t[]){1, 5, 5, 2});
  const float *a = (const float *)mxw_ndarray_data(y);
  assert_close(a[0], 4 / 3.0, 1e-6);
  assert_close(a[1], -4 / 3.0, 1e-6);
  assert_close(a[2 * 12], 12, 1e-6);
  assert_close(a[2 * 12 + 1], -12, 1e-6);
  assert_close(a[2 * 24], 28 / 3.0, 1e-6);
  assert_close(a[2 * 24 + 1], -28 / 3.0, 1e-6);
  mxw_ndarray_free(y);
  y = POOL(x, "global_pool", "True", "layout", "NHWC", NULL);
  t_expect_shape(y, 4, (int32_t[]){1, 1, 1, 2});
  t_expect_f32(y, (float[]){24, 0}, 2, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);

  /* NWC (2, 4, 3): x[n][w][c] = 12n + 3w + c; kernel 2 stride 2 sum: (x[2o] + x[2o+1]) per channel
   * = 2*(12n + c) + 3*(4o + 1); global avg over w: 12n + c + 4.5 */
  float u[24];
  for (int i = 0; i < 24; i++) u[i] = (float)i;
  x = t_array(3, (int32_t[]){2, 4, 3}, u);
  y = POOL(x, "kernel", "(2,)", "stride", "(2,)", "pool_type", "sum", "layout", "NWC", NULL);
  t_expect_shape(y, 3, (int32_t[]){2, 2, 3});
  float want[12];
  for (int n = 0; n < 2; n++)
    for (int o = 0; o < 2; o++)
      for (int c = 0; c < 3; c++) want[(n * 2 + o) * 3 + c] = (float)(2 * (12 * n + c) + 3 * (4 * o + 1));
  t_expect_f32(y, want, 12, 0);
  mxw_ndarray_free(y);
  y = POOL(x, "global_pool", "True", "pool_type", "avg", "layout", "NWC", NULL);
  t_expect_shape(y, 3, (int32_t[]){2, 1, 3});
  t_expect_f32(y, (float[]){4.5f, 5.5f, 6.5f, 16.5f, 17.5f, 18.5f}, 6, 1e-6);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);

  /* NDHWC (1, 2, 2, 2, 2): channel 0 = 0..7, channel 1 = 8..15 (x[(d*4 + h*2 + w)*2 + c]); a 2x2x2
   * sum is 28 and 92; a 1x1x2 max along w gives the odd cells: (1, 9), (3, 11), (5, 13), (7, 15) */
  float t[16];
  for (int i = 0; i < 8; i++) t[2 * i] = (float)i, t[2 * i + 1] = (float)(8 + i);
  x = t_array(5, (int32_t[]){1, 2, 2, 2, 2}, t);
  y = POOL(x, "kernel", "(2, 2, 2)", "pool_type", "sum", "layout", "NDHWC", NULL);
  t_expect_shape(y, 5, (int32_t[]){1, 1, 1, 1, 2});
  t_expect_f32(y, (float[]){28, 92}, 2, 0);
  mxw_ndarray_free(y);
  y = POOL(x, "kernel", "(1, 1, 2)", "layout", "NDHWC", NULL);
  t_expect_shape(y, 5, (int32_t[]){1, 2, 2, 1, 2});
  t_expect_f32(y, (float[]){1, 9, 3, 11, 5, 13, 7, 15}, 8, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);

  /* float16 and float64 NHWC: the first data set, max 3x3 stride 2 */
  mxw_ndarray *h = NULL, *d = NULL;
  assert_int_equal(mxw_ndarray_create(4, (int32_t[]){1, 5, 5, 2}, MXW_FLOAT16, &h), 0);
  assert_int_equal(mxw_ndarray_create(4, (int32_t[]){1, 5, 5, 2}, MXW_FLOAT64, &d), 0);
  for (int i = 0; i < 50; i++) {
    ((uint16_t *)mxw_ndarray_data(h))[i] = mxw_float_to_half(v[i]);
    ((double *)mxw_ndarray_data(d))[i] = v[i];
  }
  const float mx[8] = {12, 0, 14, -2, 22, -10, 24, -12};
  y = POOL(h, "kernel", "(3, 3)", "stride", "(2, 2)", "layout", "NHWC", NULL);
  assert_int_equal(mxw_ndarray_dtype(y), MXW_FLOAT16);
  for (int i = 0; i < 8; i++) assert_close(mxw_half_to_float(((uint16_t *)mxw_ndarray_data(y))[i]), mx[i], 0);
  mxw_ndarray_free(y);
  y = POOL(d, "kernel", "(3, 3)", "stride", "(2, 2)", "layout", "NHWC", NULL);
  for (int i = 0; i < 8; i++) assert_close(((double *)mxw_ndarray_data(y))[i], mx[i], 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(h);
  mxw_ndarray_free(d);
}

/* Channel-last pooling runs in place (no transposed copies): each channel goes through its window
 * with the channel-first kernels' arithmetic in the same order, so on random data the NHWC (NWC,
 * NDHWC) results, forward and gradient, equal the NCHW ones transposed, bit for bit. The
 * transposes here are plain loops over (N, C, S) <-> (N, S, C). */
static void to_last(const float *src, float *dst, int N, int C, int S) {
  for (int n = 0; n < N; n++)
    for (int c = 0; c < C; c++)
      for (int i = 0; i < S; i++) dst[((size_t)n * S + i) * C + c] = src[((size_t)n * C + c) * S + i];
}

static mxw_ndarray *invoke1(const char *op, mxw_ndarray **ins, int nin, const char *const *kv) {
  mxw_ndarray *out[1] = {NULL};
  int n = 1;
  const char *k[12], *v[12];
  int m = 0;
  for (; kv[2 * m]; m++) k[m] = kv[2 * m], v[m] = kv[2 * m + 1];
  const int id = mxw_op_find(op);
  mxw_params *p = NULL;
  if (mxw_params_create(id, m, k, v, &p) != 0 || mxw_op_invoke(id, p, nin, ins, &n, out) != 0)
    fail_msg("%s: %s", op, mxw_get_last_error());
  mxw_params_free(p);
  return out[0];
}

static void check_last_equals_first(int nsp, const int32_t *sp, int N, int C, const char *const *kv_first,
                                    const char *const *kv_last) {
  int32_t sf[5] = {N, C}, sl[5] = {N};
  int S = 1;
  for (int i = 0; i < nsp; i++) sf[2 + i] = sl[1 + i] = sp[i], S *= sp[i];
  sl[1 + nsp] = C;
  float *v = malloc(sizeof(float) * (size_t)(N * C * S)), *t = malloc(sizeof(float) * (size_t)(N * C * S));
  uint32_t seed = 99;
  for (int i = 0; i < N * C * S; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((seed >> 9) % 64) / 8.f - 4.f; /* ties on purpose: max's first-cell rule */
  }
  to_last(v, t, N, C, S);
  mxw_ndarray *xf = t_array(2 + nsp, sf, v), *xl = t_array(2 + nsp, sl, t);
  mxw_ndarray *yf = invoke1("Pooling", &xf, 1, kv_first), *yl = invoke1("Pooling", &xl, 1, kv_last);
  const int So = (int)(mxw_ndarray_size(yf) / (N * C));
  float *yt = malloc(sizeof(float) * (size_t)(N * C * So) + 4), *g = malloc(sizeof(float) * (size_t)(N * C * So) + 4);
  to_last((const float *)mxw_ndarray_data(yf), yt, N, C, So);
  assert_memory_equal(yt, mxw_ndarray_data(yl), sizeof(float) * (size_t)(N * C * So));
  /* gradients from the same head */
  int32_t so_f[5], so_l[5];
  mxw_ndarray_shape(yf, so_f);
  mxw_ndarray_shape(yl, so_l);
  for (int i = 0; i < N * C * So; i++) g[i] = (float)(i % 7) - 3.f;
  mxw_ndarray *gf = t_array(2 + nsp, so_f, g);
  to_last(g, yt, N, C, So);
  mxw_ndarray *gl = t_array(2 + nsp, so_l, yt);
  mxw_ndarray *inf[3] = {gf, xf, yf}, *inl[3] = {gl, xl, yl};
  mxw_ndarray *df = invoke1("_backward_Pooling", inf, 3, kv_first), *dl = invoke1("_backward_Pooling", inl, 3, kv_last);
  to_last((const float *)mxw_ndarray_data(df), t, N, C, S);
  assert_memory_equal(t, mxw_ndarray_data(dl), sizeof(float) * (size_t)(N * C * S));
  mxw_ndarray *all[] = {xf, xl, yf, yl, gf, gl, df, dl};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) mxw_ndarray_free(all[i]);
  free(v), free(t), free(yt), free(g);
}

static void test_channel_last_equals_channel_first(void **state) {
  (void)state;
  static const char *const types[] = {"max", "avg", "sum"};
#define KV(...) ((const char *const[]){__VA_ARGS__, NULL})
  for (int k = 0; k < 3; k++) {
    const char *ty = types[k];
    check_last_equals_first(
        2, (int32_t[]){9, 11}, 2, 5, KV("kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)", "pool_type", ty),
        KV("kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)", "pool_type", ty, "layout", "NHWC"));
    check_last_equals_first(2, (int32_t[]){8, 12}, 3, 6, KV("kernel", "(2, 2)", "stride", "(2, 2)", "pool_type", ty),
                            KV("kernel", "(2, 2)", "stride", "(2, 2)", "pool_type", ty, "layout", "NHWC"));
    check_last_equals_first(2, (int32_t[]){7, 10}, 2, 3,
                            KV("kernel", "(2, 3)", "stride", "(2, 2)", "pad", "(1, 1)", "pooling_convention", "full",
                               "pool_type", ty, "count_include_pad", "False"),
                            KV("kernel", "(2, 3)", "stride", "(2, 2)", "pad", "(1, 1)", "pooling_convention", "full",
                               "pool_type", ty, "count_include_pad", "False", "layout", "NHWC"));
    check_last_equals_first(1, (int32_t[]){13}, 2, 4, KV("kernel", "(3,)", "stride", "(2,)", "pool_type", ty),
                            KV("kernel", "(3,)", "stride", "(2,)", "pool_type", ty, "layout", "NWC"));
    check_last_equals_first(3, (int32_t[]){4, 5, 6}, 2, 3,
                            KV("kernel", "(2, 2, 3)", "pad", "(1, 0, 1)", "pool_type", ty),
                            KV("kernel", "(2, 2, 3)", "pad", "(1, 0, 1)", "pool_type", ty, "layout", "NDHWC"));
    check_last_equals_first(2, (int32_t[]){5, 7}, 2, 9, KV("global_pool", "True", "pool_type", ty),
                            KV("global_pool", "True", "pool_type", ty, "layout", "NHWC"));
  }
  check_last_equals_first(2, (int32_t[]){9, 11}, 2, 5, KV("kernel", "(3, 3)", "pool_type", "lp", "p_value", "2"),
                          KV("kernel", "(3, 3)", "pool_type", "lp", "p_value", "2", "layout", "NHWC"));
  check_last_equals_first(2, (int32_t[]){9, 11}, 2, 5, KV("kernel", "(2, 2)", "pool_type", "lp", "p_value", "3"),
                          KV("kernel", "(2, 2)", "pool_type", "lp", "p_value", "3", "layout", "NHWC"));
#undef KV
}

static void test_errors_name_op_and_problem(void **state) {
  (void)state;
  mxw_ndarray *x = ramp_5x5(), *in[1] = {x}, *out[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("Pooling", in, 1, out, &n, "kernel", "(7, 7)", NULL), -1);
  assert_error_contains("Operator Pooling");
  assert_error_contains("kernel size 7 exceeds input size 5");
  assert_int_equal(t_invoke("Pooling", in, 1, out, &n, "kernel", "(3,)", NULL), -1);
  assert_error_contains("data must be 3-D");
  assert_int_equal(t_invoke("Pooling", in, 1, out, &n, "kernel", "(2, 2)", "layout", "NWC", NULL), -1);
  assert_error_contains("layout NWC does not match 4-D data of shape (1, 1, 5, 5) (expected NCHW or NHWC)");
  assert_int_equal(t_invoke("Pooling", in, 1, out, &n, "global_pool", "True", "layout", "NCDHW", NULL), -1);
  assert_error_contains("layout NCDHW does not match 4-D data");
  assert_int_equal(t_invoke("Pooling", in, 1, out, &n, "kernel", "(2, 2)", "pool_type", "lp", NULL), -1);
  assert_error_contains("p_value");
  assert_int_equal(t_invoke("Pooling", in, 1, out, &n, "kernel", "(2, 2)", "stride", "(1, 1, 1)", NULL), -1);
  assert_error_contains("stride has 3 entries but kernel has 2");
  assert_int_equal(t_invoke("Pooling", in, 1, out, &n, NULL), -1);
  assert_error_contains("kernel is required");
  assert_int_equal(t_invoke("Pooling", in, 1, out, &n, "kernel", "(2, 2)", "pooling_convention", "same", NULL), -1);
  assert_error_contains("'same' supports 1-D");
  assert_null(out[0]);
  /* the next call works */
  mxw_ndarray *y = POOL(x, "kernel", "(2, 2)", NULL);
  t_expect_shape(y, 4, (int32_t[]){1, 1, 4, 4});
  mxw_ndarray_free(y);
  /* integer data is refused by name */
  int32_t s[4] = {1, 1, 2, 2};
  mxw_ndarray *xi = NULL;
  assert_int_equal(mxw_ndarray_create(4, s, MXW_INT32, &xi), 0);
  in[0] = xi;
  assert_int_equal(t_invoke("_npx_pooling", in, 1, out, &n, "kernel", "(2, 2)", NULL), -1);
  assert_error_contains("int32");
  mxw_ndarray_free(xi);
  mxw_ndarray_free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_max_valid_and_full),
      cmocka_unit_test(test_avg_full_divisors),
      cmocka_unit_test(test_avg_padding_and_count_include_pad),
      cmocka_unit_test(test_global_pool),
      cmocka_unit_test(test_lp_1d),
      cmocka_unit_test(test_same_1d_and_empty_windows),
      cmocka_unit_test(test_3d),
      cmocka_unit_test(test_other_dtypes),
      cmocka_unit_test(test_fast_path_matches_reference),
      cmocka_unit_test(test_channel_last),
      cmocka_unit_test(test_channel_last_equals_channel_first),
      cmocka_unit_test(test_errors_name_op_and_problem),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
