/* contrib_misc.c: AdaptiveAvgPooling2D and BilinearResize2D in float64 (and float16 through
 * float32) with their gradients, BilinearResize2D's "like" mode, broadcast_axis's gradient,
 * _contrib_arange_like on every dtype family and with axis, _contrib_div_sqrt_dim on float64,
 * int32 (truncating) and float16 with its gradient, erfinv and its gradient, and attribute
 * errors. Expected values are worked by hand from MXNet's definitions (adaptive pooling averages
 * the cells [floor(i H / OH), ceil((i + 1) H / OH)); bilinear resizing with align_corners maps
 * the corners onto each other). */
#include "cov_op_helpers.h"

static void test_adaptive_pool(void **state) {
  (void)state;
  double x[16];
  for (int i = 0; i < 16; i++) x[i] = i;
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT16 : MXW_FLOAT64;
    mxw_ndarray *in = c_arr(dt, 4, SHP(1, 1, 4, 4), x);
    mxw_ndarray *o = c_run1("_contrib_AdaptiveAvgPooling2D", &in, 1, KV("output_size", "(2,)"));
    c_expect(o, DV(2.5, 4.5, 10.5, 12.5), 4, 1e-3);
    mxw_ndarray_free(o);
    o = c_run1("_contrib_AdaptiveAvgPooling2D", &in, 1, NULL); /* output_size () -> 1 x 1 */
    c_expect(o, DV(7.5), 1, 1e-3);
    mxw_ndarray_free(o);
    /* the gradient spreads each head value over its 2 x 2 cell, / 4 */
    mxw_ndarray *g = c_grad("_contrib_AdaptiveAvgPooling2D", &in, 1, 0, 0, DV(4, 8, 12, 16), KV("output_size", "2"));
    c_expect(g, DV(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4), 16, 1e-3);
    mxw_ndarray_free(g);
    mxw_ndarray_free(in);
  }
}

static void test_bilinear(void **state) {
  (void)state;
  /* (2, 2) [[0, 1], [2, 3]] -> (3, 3) with corners aligned: the midpoints are the means */
  for (int d = 0; d < 2; d++) {
    const int dt = d ? MXW_FLOAT16 : MXW_FLOAT64;
    mxw_ndarray *in[2] = {c_arr(dt, 4, SHP(1, 1, 2, 2), DV(0, 1, 2, 3)), c_arr(dt, 4, SHP(1, 1, 3, 3), NULL)};
    mxw_ndarray *o = c_run1("_contrib_BilinearResize2D", in, 1, KV("height", "3", "width", "3"));
    c_expect(o, DV(0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3), 9, 1e-3);
    mxw_ndarray_free(o);
    /* ones as head: each input pixel collects 1 + 0.5 + 0.5 + 0.25 */
    mxw_ndarray *g = c_grad("_contrib_BilinearResize2D", in, 1, 0, 0, DV(1, 1, 1, 1, 1, 1, 1, 1, 1),
                            KV("height", "3", "width", "3"));
    c_expect(g, DV(2.25, 2.25, 2.25, 2.25), 4, 1e-3);
    mxw_ndarray_free(g);
    /* mode like: the second input gives the size and gets a zero gradient */
    o = c_run1("_contrib_BilinearResize2D", in, 2, KV("mode", "like"));
    c_expect(o, DV(0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3), 9, 1e-3);
    mxw_ndarray_free(o);
    g = c_grad("_contrib_BilinearResize2D", in, 2, 1, 0, DV(1, 1, 1, 1, 1, 1, 1, 1, 1), KV("mode", "like"));
    c_expect(g, DV(0, 0, 0, 0, 0, 0, 0, 0, 0), 9, 0);
    mxw_ndarray_free(g);
    g = c_grad("_contrib_BilinearResize2D", in, 2, 0, 0, DV(1, 1, 1, 1, 1, 1, 1, 1, 1), KV("mode", "like"));
    c_expect(g, DV(2.25, 2.25, 2.25, 2.25), 4, 1e-3);
    mxw_ndarray_free(g);
    c_free(2, in);
  }
  c_bad_params("_contrib_BilinearResize2D", KV("scale_height", "2"),
               "scale_width must be given with scale_height (mode size)");
  c_bad_params("_contrib_BilinearResize2D", KV("mode", "odd_scale"),
               "mode odd_scale needs scale_height and scale_width");
  c_bad_params("_contrib_BilinearResize2D", KV("height", "0"),
               "value 0 for Parameter height should be greater equal to 1");
  mxw_ndarray *x = c_arr(MXW_INT32, 4, SHP(1, 1, 2, 2), NULL);
  c_fail("_contrib_BilinearResize2D", &x, 1, KV("height", "3", "width", "3"), "only supports floating point types");
  mxw_ndarray_free(x);
}

static void test_broadcast_axis_arange(void **state) {
  (void)state;
  mxw_ndarray *x = c_arr(MXW_FLOAT32, 2, SHP(1, 3), DV(1, 2, 3));
  mxw_ndarray *g = c_grad("broadcast_axis", &x, 1, 0, 0, DV(1, 2, 3, 4, 5, 6), KV("axis", "0", "size", "2"));
  c_expect(g, DV(5, 7, 9), 3, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
  /* arange_like: start + (i / repeat) * step in the data's dtype */
  static const struct {
    int dt;
    double want[6];
  } k[] = {
      {MXW_FLOAT64, {1.5, 1.5, 4, 4, 6.5, 6.5}}, {MXW_FLOAT16, {1.5, 1.5, 4, 4, 6.5, 6.5}},
      {MXW_INT32, {1, 1, 3, 3, 5, 5}},           {MXW_UINT8, {1, 1, 3, 3, 5, 5}},
      {MXW_INT16, {1, 1, 3, 3, 5, 5}},           {MXW_INT64, {1, 1, 3, 3, 5, 5}},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    x = c_arr(k[i].dt, 2, SHP(2, 3), NULL);
    const int integer = !mxw_dtype_is_float(k[i].dt);
    mxw_ndarray *o = c_run1(
        "_contrib_arange_like", &x, 1,
        integer ? KV("start", "1", "step", "2", "repeat", "2") : KV("start", "1.5", "step", "2.5", "repeat", "2"));
    assert_int_equal(mxw_ndarray_dtype(o), k[i].dt);
    c_expect(o, k[i].want, 6, 0);
    mxw_ndarray_free(o);
    mxw_ndarray_free(x);
  }
  x = c_arr(MXW_BOOL, 1, SHP(3), NULL);
  mxw_ndarray *o = c_run1("_contrib_arange_like", &x, 1, NULL);
  c_expect(o, DV(0, 1, 1), 3, 0);
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
  /* axis: a 1-D range as long as that axis */
  x = c_arr(MXW_FLOAT32, 2, SHP(2, 4), NULL);
  o = c_run1("_contrib_arange_like", &x, 1, KV("axis", "-1", "start", "3"));
  t_expect_shape(o, 1, SHP(4));
  c_expect(o, DV(3, 4, 5, 6), 4, 0);
  mxw_ndarray_free(o);
  c_fail("_contrib_arange_like", &x, 1, KV("axis", "2"), "cannot handle param.axis 2.");
  mxw_ndarray_free(x);
  x = c_arr(MXW_INT64, 1, SHP(2), NULL);
  c_fail("_contrib_arange_like", &x, 1, KV("start", "1e19"), "start and step must fit an integer for dtype int64");
  mxw_ndarray_free(x);
}

static void test_div_sqrt_dim_erfinv(void **state) {
  (void)state;
  /* last dim 4: / 2 */
  mxw_ndarray *x = c_arr(MXW_FLOAT64, 2, SHP(1, 4), DV(1, 2, 3, -5));
  mxw_ndarray *o = c_run1("_contrib_div_sqrt_dim", &x, 1, NULL);
  c_expect(o, DV(0.5, 1, 1.5, -2.5), 4, 0);
  mxw_ndarray_free(o);
  mxw_ndarray *g = c_grad("_contrib_div_sqrt_dim", &x, 1, 0, 0, DV(2, 4, 6, 8), NULL);
  c_expect(g, DV(1, 2, 3, 4), 4, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
  x = c_arr(MXW_INT32, 2, SHP(1, 4), DV(1, 2, 3, -5));
  o = c_run1("_contrib_div_sqrt_dim", &x, 1, NULL);
  c_expect(o, DV(0, 1, 1, -2), 4, 0);
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
  x = c_arr(MXW_FLOAT16, 2, SHP(1, 4), DV(1, 2, 3, -5));
  o = c_run1("_contrib_div_sqrt_dim", &x, 1, NULL);
  c_expect(o, DV(0.5, 1, 1.5, -2.5), 4, 0);
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
  /* erfinv: erf of the result gives the input back; d/dx erfinv = sqrt(pi)/2 exp(erfinv(x)^2) */
  const double xs[4] = {-0.9, -0.25, 0, 0.6};
  for (int d = 0; d < 3; d++) {
    const int dt = d == 0 ? MXW_FLOAT32 : d == 1 ? MXW_FLOAT64 : MXW_FLOAT16;
    const double tol = d == 1 ? 1e-9 : d == 0 ? 1e-5 : 2e-3;
    x = c_arr(dt, 1, SHP(4), xs);
    o = c_run1("erfinv", &x, 1, NULL);
    double back[4], dwant[4];
    for (int i = 0; i < 4; i++) {
      back[i] = erf(c_at(o, i));
      dwant[i] = 3 * sqrt(M_PI) / 2 * exp(c_at(o, i) * c_at(o, i));
    }
    double xin[4];
    for (int i = 0; i < 4; i++) xin[i] = c_at(x, i);
    for (int i = 0; i < 4; i++)
      if (!(fabs(back[i] - xin[i]) <= tol * 4)) fail_msg("erf(erfinv(%g)) = %.9g", xin[i], back[i]);
    mxw_ndarray_free(o);
    g = c_grad("erfinv", &x, 1, 0, 0, DV(3, 3, 3, 3), NULL);
    c_expect(g, dwant, 4, tol * 10);
    mxw_ndarray_free(g);
    mxw_ndarray_free(x);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_adaptive_pool),
      cmocka_unit_test(test_bilinear),
      cmocka_unit_test(test_broadcast_axis_arange),
      cmocka_unit_test(test_div_sqrt_dim_erfinv),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
