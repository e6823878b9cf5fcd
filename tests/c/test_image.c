/* The image operators (csrc/ops/image.c) against hand-worked values, under ASan/UBSan: every
 * kernel path (uint8 / float resize, batched inputs, in-place flips, the colour ops) runs at
 * least once here. The JS tests compare the same ops with TF.js and JS loops on larger inputs. */
#include "mxw_test.h"

static mxw_ndarray *t_u8(int ndim, const int32_t *shape, const uint8_t *vals) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, MXW_UINT8, &a) != 0) fail_msg("%s", mxw_get_last_error());
  memcpy(mxw_ndarray_data(a), vals, (size_t)mxw_ndarray_size(a));
  return a;
}
static void t_expect_u8(const mxw_ndarray *a, const uint8_t *want, int n) {
  assert_int_equal((int)mxw_ndarray_size(a), n);
  const uint8_t *p = (const uint8_t *)mxw_ndarray_data(a);
  for (int i = 0; i < n; i++) {
    if (p[i] != want[i]) fail_msg("element %d = %d, expected %d", i, p[i], want[i]);
  }
}

static void test_to_tensor_and_normalize(void **state) {
  (void)state;
  /* (1, 2, 3) uint8 -> (3, 1, 2) float32 / 255 */
  mxw_ndarray *x = t_u8(3, (int32_t[]){1, 2, 3}, (uint8_t[]){0, 51, 102, 153, 204, 255});
  mxw_ndarray *y[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_image_to_tensor", &x, 1, y, &nout, NULL), 0);
  t_expect_shape(y[0], 3, (int32_t[]){3, 1, 2});
  t_expect_f32(y[0], (float[]){0, 0.6f, 0.2f, 0.8f, 0.4f, 1.0f}, 6, 1e-6);
  /* normalize channel c by mean (0, 0.5, 1) and std 0.5 */
  mxw_ndarray *z[1] = {NULL};
  assert_int_equal(t_invoke("_image_normalize", y, 1, z, &nout, "mean", "(0, 0.5, 1)", "std", "0.5", NULL), 0);
  t_expect_f32(z[0], (float[]){0, 1.2f, -0.6f, 0.6f, -1.2f, 0}, 6, 1e-6);
  mxw_ndarray_free(z[0]);
  z[0] = NULL;
  assert_int_equal(t_invoke("_image_normalize", y, 1, z, &nout, "mean", "[1, 2]", NULL), -1);
  assert_error_contains("mean must have either 1 or 3 elements, but got [1,2]");
  assert_int_equal(t_invoke("_image_normalize", y, 1, z, &nout, "mean", "(1, x)", NULL), -1);
  assert_error_contains("invalid value '(1, x)' for attribute 'mean'");
  mxw_ndarray_free(y[0]);
  mxw_ndarray_free(x);
}

static void test_resize(void **state) {
  (void)state;
  int nout = 1;
  /* uint8 (1, 2, 1) [0, 255] -> width 4: positions -0.25, 0.25, 0.75, 1.25; OpenCV's 11-bit weights
   * give 0, 64, 191, 255 */
  mxw_ndarray *u = t_u8(3, (int32_t[]){1, 2, 1}, (uint8_t[]){0, 255});
  mxw_ndarray *y[1] = {NULL};
  assert_int_equal(t_invoke("_image_resize", &u, 1, y, &nout, "size", "(4, 1)", NULL), 0);
  t_expect_u8(y[0], (uint8_t[]){0, 64, 191, 255}, 4);
  mxw_ndarray_free(y[0]);
  /* float (1, 2, 1) [0, 10] -> width 3: positions -1/6 (edge), 0.5, 7/6 (edge) -> 0, 5, 10 */
  mxw_ndarray *f = t_array(3, (int32_t[]){1, 2, 1}, (float[]){0, 10});
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_resize", &f, 1, y, &nout, "size", "(3, 1)", NULL), 0);
  t_expect_f32(y[0], (float[]){0, 5, 10}, 3, 1e-6);
  mxw_ndarray_free(y[0]);
  /* bilinear in both directions, batched: (2, 2, 2, 1) -> (2, 3, 3, 1); image 0 = [[0, 10], [20, 30]]:
   * rows and columns sample at edge, 0.5, edge -> [[0, 5, 10], [10, 15, 20], [20, 25, 30]] */
  mxw_ndarray *b = t_array(4, (int32_t[]){2, 2, 2, 1}, (float[]){0, 10, 20, 30, 1, 1, 1, 1});
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_resize", &b, 1, y, &nout, "size", "3", NULL), 0);
  t_expect_shape(y[0], 4, (int32_t[]){2, 3, 3, 1});
  t_expect_f32(y[0], (float[]){0, 5, 10, 10, 15, 20, 20, 25, 30, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 18, 1e-6);
  mxw_ndarray_free(y[0]);
  /* nearest: [1, 2, 3] -> width 5 samples floor(d * 0.6) = 0, 0, 1, 1, 2; width 2: floor(d * 1.5) = 0, 1 */
  mxw_ndarray *n = t_array_f64(3, (int32_t[]){1, 3, 1}, (double[]){1, 2, 3});
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_resize", &n, 1, y, &nout, "size", "(5, 1)", "interp", "0", NULL), 0);
  t_expect_f64(y[0], (double[]){1, 1, 2, 2, 3}, 5, 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_resize", &n, 1, y, &nout, "size", "(2, 1)", "interp", "0", NULL), 0);
  t_expect_f64(y[0], (double[]){1, 2}, 2, 0);
  mxw_ndarray_free(y[0]);
  /* errors */
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_resize", &f, 1, y, &nout, NULL), -1);
  assert_error_contains("Input size dimension must be 1 or 2, but got 0");
  assert_int_equal(t_invoke("_image_resize", &f, 1, y, &nout, "size", "2", "interp", "5", NULL), -1);
  assert_error_contains("interp=5 is not supported");
  mxw_ndarray_free(n);
  mxw_ndarray_free(b);
  mxw_ndarray_free(f);
  mxw_ndarray_free(u);
}

static void test_crop_and_flips(void **state) {
  (void)state;
  int nout = 1;
  mxw_ndarray *x = t_array(3, (int32_t[]){3, 3, 1}, (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8});
  mxw_ndarray *y[1] = {NULL};
  assert_int_equal(t_invoke("_image_crop", &x, 1, y, &nout, "x", "1", "y", "1", "width", "2", "height", "2", NULL), 0);
  t_expect_f32(y[0], (float[]){4, 5, 7, 8}, 4, 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_crop", &x, 1, y, &nout, "x", "2", "y", "0", "width", "2", "height", "1", NULL), -1);
  assert_error_contains("x + width should not be greater than input width");
  /* odd width out of place: the middle column is copied too */
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_flip_left_right", &x, 1, y, &nout, NULL), 0);
  t_expect_f32(y[0], (float[]){2, 1, 0, 5, 4, 3, 8, 7, 6}, 9, 0);
  mxw_ndarray_free(y[0]);
  /* in place (out = data) */
  y[0] = x;
  assert_int_equal(t_invoke("_image_flip_top_bottom", &x, 1, y, &nout, NULL), 0);
  t_expect_f32(x, (float[]){6, 7, 8, 3, 4, 5, 0, 1, 2}, 9, 0);
  /* three channels: pixels move whole */
  mxw_ndarray *c = t_u8(3, (int32_t[]){1, 2, 3}, (uint8_t[]){1, 2, 3, 4, 5, 6});
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_flip_left_right", &c, 1, y, &nout, NULL), 0);
  t_expect_u8(y[0], (uint8_t[]){4, 5, 6, 1, 2, 3}, 6);
  mxw_ndarray_free(y[0]);
  /* the random flips give one of the two */
  for (int i = 0; i < 8; i++) {
    y[0] = NULL;
    assert_int_equal(
        t_invoke(i % 2 ? "_image_random_flip_left_right" : "_image_random_flip_top_bottom", &c, 1, y, &nout, NULL), 0);
    const uint8_t *p = (const uint8_t *)mxw_ndarray_data(y[0]);
    assert_true((p[0] == 1 && p[3] == 4) || (p[0] == 4 && p[3] == 1));
    mxw_ndarray_free(y[0]);
  }
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_flip_left_right", &x, 1, y, &nout, NULL), 0);
  mxw_ndarray_free(y[0]);
  mxw_ndarray_free(c);
  mxw_ndarray_free(x);
}

static void test_colour(void **state) {
  (void)state;
  int nout = 1;
  mxw_ndarray *x = t_u8(3, (int32_t[]){1, 2, 3}, (uint8_t[]){200, 100, 0, 10, 20, 30});
  mxw_ndarray *y[1] = {NULL};
  /* brightness x2 saturates at 255 */
  assert_int_equal(t_invoke("_image_random_brightness", &x, 1, y, &nout, "min_factor", "2", "max_factor", "2", NULL),
                   0);
  t_expect_u8(y[0], (uint8_t[]){255, 200, 0, 20, 40, 60}, 6);
  mxw_ndarray_free(y[0]);
  /* contrast 0: every value becomes the mean gray level (0.299, 0.587, 0.114 weights):
   * (59.8 + 58.7 + 0 + 2.99 + 11.74 + 3.42) / 2 = 68.325 -> 68 */
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_random_contrast", &x, 1, y, &nout, "min_factor", "0", "max_factor", "0", NULL), 0);
  t_expect_u8(y[0], (uint8_t[]){68, 68, 68, 68, 68, 68}, 6);
  mxw_ndarray_free(y[0]);
  /* hue 0.5 (180 degrees) of pure red is cyan: (0, 255, 255) up to float rounding, which the uint8
   * conversion truncates (MXNet's saturate_cast); saturation, jitter and lighting run on uint8 */
  mxw_ndarray *red = t_u8(3, (int32_t[]){1, 1, 3}, (uint8_t[]){255, 0, 0});
  y[0] = NULL;
  assert_int_equal(t_invoke("_image_random_hue", &red, 1, y, &nout, "min_factor", "0.5", "max_factor", "0.5", NULL), 0);
  const uint8_t *h = (const uint8_t *)mxw_ndarray_data(y[0]);
  assert_true(h[0] == 0 && h[1] >= 254 && h[2] >= 254);
  mxw_ndarray_free(y[0]);
  const char *ops[] = {"_image_random_saturation", "_image_random_color_jitter", "_image_random_lighting",
                       "_image_adjust_lighting"};
  for (int i = 0; i < 4; i++) {
    y[0] = NULL;
    int rc = i == 0   ? t_invoke(ops[i], &x, 1, y, &nout, "min_factor", "0.5", "max_factor", "1.5", NULL)
             : i == 1 ? t_invoke(ops[i], &x, 1, y, &nout, "brightness", "0.3", "contrast", "0.3", "saturation", "0.3",
                                 "hue", "0.3", NULL)
             : i == 2 ? t_invoke(ops[i], &x, 1, y, &nout, NULL)
                      : t_invoke(ops[i], &x, 1, y, &nout, "alpha", "(0.1, 0.2, 0.3)", NULL);
    assert_int_equal(rc, 0);
    t_expect_shape(y[0], 3, (int32_t[]){1, 2, 3});
    mxw_ndarray_free(y[0]);
  }
  mxw_ndarray_free(red);
  mxw_ndarray_free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_to_tensor_and_normalize),
      cmocka_unit_test(test_resize),
      cmocka_unit_test(test_crop_and_flips),
      cmocka_unit_test(test_colour),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
