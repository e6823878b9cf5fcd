/* The smaller gaps of reduce.c, spatial.c, random.c, init_ops.c and slice_assign.c: reductions
 * on narrow integer dtypes, norm's and pick's gradients, argmax on float16 and an empty axis;
 * GridGenerator, BilinearSampler, SpatialTransformer and DeformableConvolution in float64 with
 * their gradients on identity transforms and zero offsets (where they reduce to the identity and
 * to a plain convolution); multinomial's log-probability gradient, exponential samples, shape
 * errors; _arange / _linspace on float64, float16 and integer dtypes; _slice_assign with a step on
 * 1-, 2- and 8-byte elements. Expected values are hand-worked from MXNet's definitions. */
#include "cov_op_helpers.h"

static void test_reduce(void **state) {
  (void)state;
  static const int dts[] = {MXW_INT16, MXW_UINT16, MXW_UINT32, MXW_INT8, MXW_UINT8, MXW_INT64};
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    mxw_ndarray *x = c_arr(dts[d], 2, SHP(2, 2), DV(1, 2, 3, 4));
    mxw_ndarray *o = c_run1("sum", &x, 1, KV("axis", "1"));
    c_expect(o, DV(3, 7), 2, 0);
    mxw_ndarray_free(o);
    o = c_run1("prod", &x, 1, KV("axis", "1"));
    c_expect(o, DV(2, 12), 2, 0);
    mxw_ndarray_free(o);
    o = c_run1("mean", &x, 1, KV("axis", "1")); /* integer mean truncates: 1.5 -> 1, 3.5 -> 3 */
    c_expect(o, DV(1, 3), 2, 0);
    mxw_ndarray_free(o);
    mxw_ndarray_free(x);
  }
  mxw_ndarray *x = c_arr(MXW_BOOL, 1, SHP(3), DV(1, 0, 1));
  mxw_ndarray *o = c_run1("max", &x, 1, NULL);
  c_expect(o, DV(1), 1, 0);
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
  /* norm (L2): d ||x|| / dx = x / ||x||; float32 and float16 */
  for (int d = 0; d < 2; d++) {
    x = c_arr(d ? MXW_FLOAT16 : MXW_FLOAT32, 2, SHP(2, 2), DV(3, 4, 0, 0));
    mxw_ndarray *g = c_grad("norm", &x, 1, 0, 0, DV(10), NULL);
    c_expect(g, DV(6, 8, 0, 0), 4, 2e-3);
    mxw_ndarray_free(g);
    mxw_ndarray_free(x);
  }
  /* mean of a (1, 1): the gradient is the head */
  x = c_arr(MXW_FLOAT32, 2, SHP(1, 1), DV(5));
  mxw_ndarray *g = c_grad("mean", &x, 1, 0, 0, DV(3), NULL);
  c_expect(g, DV(3), 1, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
  /* pick along axis 1: the head lands at the picked positions */
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 2, SHP(2, 3), DV(1, 2, 3, 4, 5, 6)),
                        c_arr(MXW_FLOAT32, 1, SHP(2), DV(2, 0))};
  g = c_grad("pick", in, 2, 0, 0, DV(5, 7), KV("axis", "1"));
  c_expect(g, DV(0, 0, 5, 7, 0, 0), 6, 0);
  mxw_ndarray_free(g);
  c_free(2, in);
  /* argmax on float16; an empty reduced axis has no index */
  x = c_arr(MXW_FLOAT16, 2, SHP(2, 3), DV(1, 5, 2, 7, 0, 3));
  o = c_run1("argmax", &x, 1, KV("axis", "1"));
  c_expect(o, DV(1, 0), 2, 0);
  mxw_ndarray_free(o);
  mxw_ndarray_free(x);
  x = c_arr(MXW_FLOAT32, 2, SHP(2, 0), NULL);
  c_fail("argmax", &x, 1, KV("axis", "1"), "along an empty axis (data shape (2, 0))");
  mxw_ndarray_free(x);
}

static void test_spatial_f64(void **state) {
  (void)state;
  /* GridGenerator affine, identity theta, target (2, 3): x = [-1, 0, 1], y = [-1, 1] */
  mxw_ndarray *theta = c_arr(MXW_FLOAT64, 2, SHP(1, 6), DV(1, 0, 0, 0, 1, 0));
  const char **gkv = KV("transform_type", "affine", "target_shape", "(2, 3)");
  mxw_ndarray *grid = c_run1("GridGenerator", &theta, 1, gkv);
  t_expect_shape(grid, 4, SHP(1, 2, 2, 3));
  c_expect(grid, DV(-1, 0, 1, -1, 0, 1, -1, -1, -1, 1, 1, 1), 12, 1e-12);
  /* d theta row r = sum over pixels of head_r * (x, y, 1); ones: (0, 0, 6) */
  mxw_ndarray *g = c_grad("GridGenerator", &theta, 1, 0, 0, DV(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), gkv);
  c_expect(g, DV(0, 0, 6, 0, 0, 6), 6, 1e-12);
  mxw_ndarray_free(g);
  /* warp with a zero flow: the pixel grid itself, normalized; its gradient scales the head by 2 / (size - 1) */
  mxw_ndarray *flow = c_arr(MXW_FLOAT64, 4, SHP(1, 2, 2, 3), NULL);
  mxw_ndarray *o = c_run1("GridGenerator", &flow, 1, KV("transform_type", "warp"));
  c_expect(o, DV(-1, 0, 1, -1, 0, 1, -1, -1, -1, 1, 1, 1), 12, 1e-12);
  mxw_ndarray_free(o);
  g = c_grad("GridGenerator", &flow, 1, 0, 0, DV(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), KV("transform_type", "warp"));
  c_expect(g, DV(1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2), 12, 1e-12);
  mxw_ndarray_free(g);
  mxw_ndarray_free(flow);
  /* BilinearSampler on that grid: the data itself; its data gradient the head */
  const double d6[6] = {1, 2, 3, 4, 5, 6}, h6[6] = {6, 5, 4, 3, 2, 1};
  mxw_ndarray *in[4] = {c_arr(MXW_FLOAT64, 4, SHP(1, 1, 2, 3), d6), grid};
  o = c_run1("BilinearSampler", in, 2, NULL);
  c_expect(o, d6, 6, 1e-12);
  mxw_ndarray_free(o);
  g = c_grad("BilinearSampler", in, 2, 0, 0, h6, NULL);
  c_expect(g, h6, 6, 1e-12);
  mxw_ndarray_free(g);
  /* SpatialTransformer with the identity: the same */
  in[1] = theta;
  const char **skv = KV("target_shape", "(2, 3)", "transform_type", "affine", "sampler_type", "bilinear");
  o = c_run1("SpatialTransformer", in, 2, skv);
  c_expect(o, d6, 6, 1e-12);
  mxw_ndarray_free(o);
  g = c_grad("SpatialTransformer", in, 2, 0, 0, h6, skv);
  c_expect(g, h6, 6, 1e-12);
  mxw_ndarray_free(g);
  mxw_ndarray_free(in[0]);
  mxw_ndarray_free(grid);
  mxw_ndarray_free(theta);
  /* DeformableConvolution with zero offsets: a plain 3 x 3 convolution, y = sum x w + b */
  double x9[9], w9[9], y = 0.5;
  for (int i = 0; i < 9; i++) x9[i] = i - 4, w9[i] = 0.5 * (i % 3) - 0.25 * (i / 3), y += x9[i] * w9[i];
  in[0] = c_arr(MXW_FLOAT64, 4, SHP(1, 1, 3, 3), x9);
  in[1] = c_arr(MXW_FLOAT64, 4, SHP(1, 18, 1, 1), NULL);
  in[2] = c_arr(MXW_FLOAT64, 4, SHP(1, 1, 3, 3), w9);
  in[3] = c_arr(MXW_FLOAT64, 1, SHP(1), DV(0.5));
  const char **dkv = KV("kernel", "(3, 3)", "num_filter", "1");
  o = c_run1("_contrib_DeformableConvolution", in, 4, dkv);
  c_expect(o, DV(y), 1, 1e-12);
  mxw_ndarray_free(o);
  double hw[9], hx[9];
  for (int i = 0; i < 9; i++) hw[i] = 2 * w9[i], hx[i] = 2 * x9[i];
  g = c_grad("_contrib_DeformableConvolution", in, 4, 0, 0, DV(2), dkv);
  c_expect(g, hw, 9, 1e-12);
  mxw_ndarray_free(g);
  g = c_grad("_contrib_DeformableConvolution", in, 4, 2, 0, DV(2), dkv);
  c_expect(g, hx, 9, 1e-12);
  mxw_ndarray_free(g);
  g = c_grad("_contrib_DeformableConvolution", in, 4, 3, 0, DV(2), dkv);
  c_expect(g, DV(2), 1, 1e-12);
  mxw_ndarray_free(g);
  c_free(4, in);
  /* integer data is refused */
  mxw_ndarray *bad = c_arr(MXW_INT32, 2, SHP(1, 6), NULL);
  c_fail("GridGenerator", &bad, 1, gkv, "only supports floating point types, got int32");
  mxw_ndarray_free(bad);
}

static void test_random_init(void **state) {
  (void)state;
  mxw_random_seed(11);
  /* multinomial with one-hot probabilities: the samples are certain, log-probability 0;
   * its gradient d log p[k] / d p = 1 / p[k] at the sampled k */
  mxw_ndarray *p = c_arr(MXW_FLOAT64, 2, SHP(2, 3), DV(0, 1, 0, 0, 0, 1));
  mxw_ndarray *outs[2];
  int nout = 2;
  assert_int_equal(c_run("_sample_multinomial", &p, 1, KV("get_prob", "True"), outs, &nout), 0);
  c_expect(outs[0], DV(1, 2), 2, 0);
  c_expect(outs[1], DV(0, 0), 2, 0);
  c_free(2, outs);
  mxw_ndarray *g = c_grad("_sample_multinomial", &p, 1, 0, 1, DV(2, 3), KV("get_prob", "True"));
  c_expect(g, DV(0, 2, 0, 0, 0, 3), 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(p);
  /* exponential(lam 4): 4000 draws, all >= 0, mean 1/4 within 10% */
  mxw_ndarray *o = c_run1("_random_exponential", NULL, 0, KV("lam", "4", "shape", "(4000,)"));
  double s = 0;
  for (int i = 0; i < 4000; i++) {
    assert_true(c_at(o, i) >= 0);
    s += c_at(o, i);
  }
  assert_close(s / 4000, 0.25, 0.1);
  mxw_ndarray_free(o);
  /* uniform float16 in [2, 3); randint int64 in [5, 8) */
  o = c_run1("_random_uniform", NULL, 0, KV("low", "2", "high", "3", "shape", "(50,)", "dtype", "float16"));
  assert_int_equal(mxw_ndarray_dtype(o), MXW_FLOAT16);
  for (int i = 0; i < 50; i++) assert_true(c_at(o, i) >= 2 && c_at(o, i) <= 3);
  mxw_ndarray_free(o);
  o = c_run1("_random_randint", NULL, 0, KV("low", "5", "high", "8", "shape", "(50,)", "dtype", "int64"));
  for (int i = 0; i < 50; i++) assert_true(c_at(o, i) >= 5 && c_at(o, i) < 8 && c_at(o, i) == floor(c_at(o, i)));
  mxw_ndarray_free(o);
  c_fail("_random_uniform", NULL, 0, KV("shape", "(2, -3)"), "attribute 'shape' (2, -3) has a negative dimension");
  c_fail("_random_uniform", NULL, 0, KV("shape", "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)"),
         "attribute 'shape' has 11 dimensions, at most 10 are supported");
  /* _arange: start + (i / repeat) * step on float64, float16, int8, bool; _linspace float64 */
  o = c_run1("_arange", NULL, 0, KV("start", "1", "stop", "2.5", "step", "0.5", "dtype", "float64"));
  c_expect(o, DV(1, 1.5, 2), 3, 0);
  mxw_ndarray_free(o);
  o = c_run1("_arange", NULL, 0, KV("start", "1", "stop", "4", "repeat", "2", "dtype", "float16"));
  c_expect(o, DV(1, 1, 2, 2, 3, 3), 6, 0);
  mxw_ndarray_free(o);
  o = c_run1("_arange", NULL, 0, KV("start", "-2", "stop", "2", "dtype", "int8"));
  c_expect(o, DV(-2, -1, 0, 1), 4, 0);
  mxw_ndarray_free(o);
  o = c_run1("_arange", NULL, 0, KV("start", "0", "stop", "3", "dtype", "int16"));
  c_expect(o, DV(0, 1, 2), 3, 0);
  mxw_ndarray_free(o);
  o = c_run1("_linspace", NULL, 0, KV("start", "0", "stop", "1", "num", "5", "dtype", "float64"));
  c_expect(o, DV(0, 0.25, 0.5, 0.75, 1), 5, 1e-15);
  mxw_ndarray_free(o);
  o = c_run1("_full", NULL, 0, KV("shape", "(3,)", "value", "7", "dtype", "uint8"));
  c_expect(o, DV(7, 7, 7), 3, 0);
  mxw_ndarray_free(o);
  c_fail("_full", NULL, 0, KV("shape", "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)", "value", "1"),
         "attribute 'shape' has 11 dimensions, at most 10 are supported");
}

/* _slice_assign(lhs, rhs) with step 2 writes every other element, whatever the width. */
static void test_slice_assign_widths(void **state) {
  (void)state;
  static const int dts[] = {MXW_UINT8, MXW_FLOAT16, MXW_INT64};
  for (int d = 0; d < 3; d++) {
    mxw_ndarray *in[2] = {c_arr(dts[d], 1, SHP(5), DV(1, 2, 3, 4, 5)), c_arr(dts[d], 1, SHP(3), DV(9, 8, 7))};
    mxw_ndarray *o = c_run1("_slice_assign", in, 2, KV("begin", "(0,)", "end", "(5,)", "step", "(2,)"));
    c_expect(o, DV(9, 2, 8, 4, 7), 5, 0);
    mxw_ndarray_free(o);
    c_free(2, in);
  }
}

/* clip's gradient passes the head inside [a_min, a_max] (float64, float16) */
static void test_clip_gradient(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    mxw_ndarray *x = c_arr(d ? MXW_FLOAT16 : MXW_FLOAT64, 1, SHP(4), DV(-2, 0.5, 1, 3));
    mxw_ndarray *g = c_grad("clip", &x, 1, 0, 0, DV(1, 2, 3, 4), KV("a_min", "-1", "a_max", "1"));
    c_expect(g, DV(0, 2, 3, 0), 4, 0);
    mxw_ndarray_free(g);
    mxw_ndarray_free(x);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reduce),        cmocka_unit_test(test_spatial_f64),
      cmocka_unit_test(test_random_init),   cmocka_unit_test(test_slice_assign_widths),
      cmocka_unit_test(test_clip_gradient),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
