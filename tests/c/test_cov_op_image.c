/* image.c: _image_resize's bicubic, Lanczos-4 and area kernels (uint8, float32, float64),
 * keep_ratio and the same-size copy; to_tensor / normalize on float64 and float16 with their
 * gradients; the gradients of crop and the flips; the one-channel and float paths of the color
 * ops. Expected values are hand-worked: a constant image stays constant under any
 * interpolation (the weights sum to 1), area downscaling averages whole and partial cells as
 * OpenCV's INTER_AREA defines them, brightness / contrast scale as MXNet documents. */
#include "cov_op_helpers.h"

/* interp 2 (bicubic) and 4 (Lanczos-4), up and down: a constant image stays constant */
static void test_resize_constant(void **state) {
  (void)state;
  double v[60];
  for (int i = 0; i < 60; i++) v[i] = 7;
  static const int dts[] = {MXW_UINT8, MXW_FLOAT32, MXW_FLOAT64};
  static const char *const interps[] = {"2", "4"};
  static const char *const sizes[] = {"(3, 7)", "(9, 2)"};
  for (int d = 0; d < 3; d++)
    for (int i = 0; i < 2; i++)
      for (int s = 0; s < 2; s++) {
        mxw_ndarray *x = c_arr(dts[d], 3, SHP(4, 5, 3), v);
        mxw_ndarray *o = c_run1("_image_resize", &x, 1, KV("size", sizes[s], "interp", interps[i]));
        const int n = (int)mxw_ndarray_size(o);
        double want[200];
        for (int k = 0; k < n; k++) want[k] = 7;
        c_expect(o, want, n, 1e-5);
        mxw_ndarray_free(o);
        mxw_ndarray_free(x);
      }
}

/* area: 4x4 -> 2x2 averages 2x2 blocks; 3x3 -> 2x2 weighs a whole cell 1 and the shared middle
 * one 0.5, over 1.5 per axis */
static void test_resize_area(void **state) {
  (void)state;
  double x4[16], x3[9];
  for (int i = 0; i < 16; i++) x4[i] = 10 * i;
  for (int i = 0; i < 9; i++) x3[i] = 30 * i;
  const double want4[4] = {(0 + 10 + 40 + 50) / 4.0, (20 + 30 + 60 + 70) / 4.0, (80 + 90 + 120 + 130) / 4.0,
                           (100 + 110 + 140 + 150) / 4.0};
  const double w[2][3] = {{1 / 1.5, 0.5 / 1.5, 0}, {0, 0.5 / 1.5, 1 / 1.5}};
  double want3[4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      double s = 0;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) s += w[i][a] * w[j][b] * x3[a * 3 + b];
      want3[i * 2 + j] = s;
    }
  static const int dts[] = {MXW_UINT8, MXW_FLOAT32, MXW_FLOAT64};
  for (int d = 0; d < 3; d++) {
    const double tol = dts[d] == MXW_UINT8 ? 0.04 : 1e-5; /* uint8 rounds: within 1 */
    mxw_ndarray *x = c_arr(dts[d], 3, SHP(4, 4, 1), x4);
    mxw_ndarray *o = c_run1("_image_resize", &x, 1, KV("size", "(2, 2)", "interp", "3"));
    c_expect(o, want4, 4, tol);
    mxw_ndarray_free(o);
    mxw_ndarray_free(x);
    x = c_arr(dts[d], 3, SHP(3, 3, 1), x3);
    o = c_run1("_image_resize", &x, 1, KV("size", "(2, 2)", "interp", "3"));
    c_expect(o, want3, 4, tol);
    mxw_ndarray_free(o);
    /* the same size: a copy */
    o = c_run1("_image_resize", &x, 1, KV("size", "(3, 3)", "interp", "3"));
    c_expect(o, x3, 9, 0);
    mxw_ndarray_free(o);
    mxw_ndarray_free(x);
  }
  /* keep_ratio: the shorter side becomes size, the other scales (integer division) */
  mxw_ndarray *x = c_arr(MXW_FLOAT32, 3, SHP(4, 8, 1), NULL);
  mxw_ndarray *o = c_run1("_image_resize", &x, 1, KV("size", "(2,)", "keep_ratio", "True"));
  t_expect_shape(o, 3, SHP(2, 4, 1));
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
  x = c_arr(MXW_FLOAT32, 3, SHP(8, 4, 1), NULL);
  o = c_run1("_image_resize", &x, 1, KV("size", "(2,)", "keep_ratio", "True"));
  t_expect_shape(o, 3, SHP(4, 2, 1));
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
}

static void test_to_tensor_normalize(void **state) {
  (void)state;
  /* (H=1, W=2, C=2) float64 -> (C, H, W) float32 / 255 */
  mxw_ndarray *x = c_arr(MXW_FLOAT64, 3, SHP(1, 2, 2), DV(255, 51, 102, 0));
  mxw_ndarray *o = c_run1("_image_to_tensor", &x, 1, NULL);
  assert_int_equal(mxw_ndarray_dtype(o), MXW_FLOAT32);
  t_expect_shape(o, 3, SHP(2, 1, 2));
  c_expect(o, DV(1, 0.4, 0.2, 0), 4, 1e-6);
  mxw_ndarray_free(o);
  /* the gradient: transposed back, / 255, cast to float64 */
  mxw_ndarray *g = c_grad("_image_to_tensor", &x, 1, 0, 0, DV(255, 510, 765, 1020), NULL);
  assert_int_equal(mxw_ndarray_dtype(g), MXW_FLOAT64);
  c_expect(g, DV(1, 3, 2, 4), 4, 1e-6);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
  /* batched float32 */
  x = c_arr(MXW_FLOAT32, 4, SHP(1, 1, 2, 2), DV(255, 51, 102, 0));
  g = c_grad("_image_to_tensor", &x, 1, 0, 0, DV(255, 510, 765, 1020), NULL);
  c_expect(g, DV(1, 3, 2, 4), 4, 1e-6);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
  /* normalize (C=3, 1, 2): (x - mean_c) / std_c, float64 and float16; gradient dy / std_c */
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT16 : MXW_FLOAT64;
    x = c_arr(dt, 3, SHP(3, 1, 2), DV(1, 2, 3, 4, 5, 6));
    const char **kv = KV("mean", "(1, 2, 3)", "std", "(2, 4, 8)");
    o = c_run1("_image_normalize", &x, 1, kv);
    c_expect(o, DV(0, 0.5, 0.25, 0.5, 0.25, 0.375), 6, 1e-3);
    mxw_ndarray_free(o);
    g = c_grad("_image_normalize", &x, 1, 0, 0, DV(2, 4, 8, 16, 32, 64), kv);
    c_expect(g, DV(1, 2, 2, 4, 4, 8), 6, 1e-3);
    mxw_ndarray_free(g);
    mxw_ndarray_free(x);
  }
  x = c_arr(MXW_FLOAT32, 3, SHP(1, 1, 2), DV(3, 5));
  g = c_grad("_image_normalize", &x, 1, 0, 0, DV(2, 4), KV("mean", "(1,)", "std", "(2,)"));
  c_expect(g, DV(1, 2), 2, 1e-6);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
}

static void test_crop_flip_gradients(void **state) {
  (void)state;
  /* (H=2, W=3, C=1): crop x=1, y=0, 2 wide, 1 high: the head lands in row 0, columns 1..2 */
  mxw_ndarray *x = c_arr(MXW_FLOAT32, 3, SHP(2, 3, 1), DV(1, 2, 3, 4, 5, 6));
  const char **kv = KV("x", "1", "y", "0", "width", "2", "height", "1");
  mxw_ndarray *g = c_grad("_image_crop", &x, 1, 0, 0, DV(7, 8), kv);
  c_expect(g, DV(0, 7, 8, 0, 0, 0), 6, 0);
  mxw_ndarray_free(g);
  g = c_grad("_image_flip_left_right", &x, 1, 0, 0, DV(1, 2, 3, 4, 5, 6), NULL);
  c_expect(g, DV(3, 2, 1, 6, 5, 4), 6, 0);
  mxw_ndarray_free(g);
  g = c_grad("_image_flip_top_bottom", &x, 1, 0, 0, DV(1, 2, 3, 4, 5, 6), NULL);
  c_expect(g, DV(4, 5, 6, 1, 2, 3), 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
  /* batched crop */
  x = c_arr(MXW_FLOAT32, 4, SHP(1, 2, 3, 1), DV(1, 2, 3, 4, 5, 6));
  g = c_grad("_image_crop", &x, 1, 0, 0, DV(7, 8), KV("x", "0", "y", "1", "width", "2", "height", "1"));
  c_expect(g, DV(0, 0, 0, 7, 8, 0), 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
}

/* The color ops with a fixed factor (min_factor = max_factor) on float images, and their
 * one-channel forms (a copy for saturation, hue and lighting). */
static void test_color_ops(void **state) {
  (void)state;
  static const int dts[] = {MXW_FLOAT32, MXW_FLOAT64};
  for (int d = 0; d < 2; d++) {
    /* (1, 2, 3) RGB pixels (10, 20, 30), (40, 50, 60) */
    mxw_ndarray *x = c_arr(dts[d], 3, SHP(1, 2, 3), DV(10, 20, 30, 40, 50, 60));
    mxw_ndarray *o = c_run1("_image_random_brightness", &x, 1, KV("min_factor", "0.5", "max_factor", "0.5"));
    c_expect(o, DV(5, 10, 15, 20, 25, 30), 6, 1e-6);
    mxw_ndarray_free(o);
    /* contrast 0.5: x / 2 + 0.5 * mean gray, gray = 0.299 R + 0.587 G + 0.114 B over the pixels */
    double gray = (0.299 * 10 + 0.587 * 20 + 0.114 * 30 + 0.299 * 40 + 0.587 * 50 + 0.114 * 60) / 2, want[6];
    for (int i = 0; i < 6; i++) want[i] = (10 + 10 * i) * 0.5 + 0.5 * gray;
    o = c_run1("_image_random_contrast", &x, 1, KV("min_factor", "0.5", "max_factor", "0.5"));
    c_expect(o, want, 6, 1e-5);
    mxw_ndarray_free(o);
    /* hue 0: the pixels come back (through HLS and back) */
    o = c_run1("_image_random_hue", &x, 1, KV("min_factor", "0", "max_factor", "0"));
    c_expect(o, DV(10, 20, 30, 40, 50, 60), 6, 1e-3);
    mxw_ndarray_free(o);
    /* lighting with zero alphas: unchanged */
    o = c_run1("_image_adjust_lighting", &x, 1, KV("alpha", "(0, 0, 0)"));
    c_expect(o, DV(10, 20, 30, 40, 50, 60), 6, 1e-6);
    mxw_ndarray_free(o);
    mxw_ndarray_free(x);
    /* one channel: saturation, hue and lighting copy it */
    x = c_arr(dts[d], 3, SHP(1, 2, 1), DV(10, 250));
    o = c_run1("_image_random_saturation", &x, 1, KV("min_factor", "0.3", "max_factor", "0.3"));
    c_expect(o, DV(10, 250), 2, 0);
    mxw_ndarray_free(o);
    o = c_run1("_image_random_hue", &x, 1, KV("min_factor", "0.3", "max_factor", "0.3"));
    c_expect(o, DV(10, 250), 2, 0);
    mxw_ndarray_free(o);
    o = c_run1("_image_adjust_lighting", &x, 1, KV("alpha", "(1, 2, 3)"));
    c_expect(o, DV(10, 250), 2, 0);
    mxw_ndarray_free(o);
    /* contrast of one channel: its own mean */
    o = c_run1("_image_random_contrast", &x, 1, KV("min_factor", "0.5", "max_factor", "0.5"));
    c_expect(o, DV(5 + 65, 125 + 65), 2, 1e-5);
    mxw_ndarray_free(o);
    mxw_ndarray_free(x);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resize_constant),     cmocka_unit_test(test_resize_area),
      cmocka_unit_test(test_to_tensor_normalize), cmocka_unit_test(test_crop_flip_gradients),
      cmocka_unit_test(test_color_ops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
