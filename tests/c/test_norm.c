/* Normalization ops through the invoke path: hand-worked BatchNorm (inference with fix_gamma
 * True/False, training with the moving-statistics update), LayerNorm and BatchNormWithReLU;
 * BatchNorm training on odd sizes (both the per-channel-block and the channels-last paths, and a
 * run longer than the SIMD flush length) against a plain double loop written here; float64 and
 * float16 dtypes; error messages. */
#include <stdlib.h>

#include "mxw_test.h"

static mxw_ndarray *t_array_dtype(int ndim, const int32_t *shape, int dtype, const double *vals) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  for (int64_t i = 0; i < mxw_ndarray_size(a); i++) mxw_store_f64(mxw_ndarray_data(a), dtype, i, vals[i]);
  return a;
}

static double value_at(const mxw_ndarray *a, int64_t i) {
  return mxw_load_f64(mxw_ndarray_data((mxw_ndarray *)a), mxw_ndarray_dtype(a), i);
}

static void expect_values(const mxw_ndarray *a, const double *want, int64_t n, double tol) {
  assert_int_equal(mxw_ndarray_size(a), n);
  for (int64_t i = 0; i < n; i++) {
    if (!(fabs(value_at(a, i) - want[i]) <= tol * (1.0 + fabs(want[i]))))
      fail_msg("element %lld = %.9g, expected %.9g (tol %g)", (long long)i, value_at(a, i), want[i], tol);
  }
}

static void free_all(mxw_ndarray **a, int n) {
  for (int i = 0; i < n; i++) {
    mxw_ndarray_free(a[i]);
    a[i] = NULL;
  }
}

/* x (2, 2, 1, 1) = [[1, 2], [3, 4]] (n-major), gamma [0.5676, 2], beta [0.1, -0.1],
 * moving_mean [2, 3], moving_var [1, 4], eps 1e-3:
 *   invstd = 1/sqrt(1.001) = 0.99950037468777, 1/sqrt(4.001) = 0.49993751171631
 *   fix_gamma=True  (gamma ignored, even though it holds 0.5676):
 *     c0: (1-2)*0.9995004 + 0.1 = -0.8995004,  (3-2)*0.9995004 + 0.1 = 1.0995004
 *     c1: (2-3)*0.4999375 - 0.1 = -0.5999375,  (4-3)*0.4999375 - 0.1 = 0.3999375
 *   fix_gamma=False:
 *     c0: -0.9995004*0.5676 + 0.1 = -0.4673164, 0.6673164;  c1: -0.999875 - 0.1 = -1.099875, 0.899875 */
static const double k_x[4] = {1, 2, 3, 4}, k_gamma[2] = {0.5676, 2}, k_beta[2] = {0.1, -0.1};
static const double k_mm[2] = {2, 3}, k_mv[2] = {1, 4};
static const double k_fix_true[4] = {-0.8995003746877732, -0.599937511716309, 1.0995003746877732, 0.3999375117163091};
static const double k_fix_false[4] = {-0.4673164126727801, -1.0998750234326182, 0.6673164126727801, 0.8998750234326182};
static const double k_invstd[2] = {0.9995003746877732, 0.49993751171630907};

static void make_bn_inputs(mxw_ndarray **in, int dtype, int param_dtype) {
  const int32_t xs[4] = {2, 2, 1, 1}, cs[1] = {2};
  in[0] = t_array_dtype(4, xs, dtype, k_x);
  in[1] = t_array_dtype(1, cs, param_dtype, k_gamma);
  in[2] = t_array_dtype(1, cs, param_dtype, k_beta);
  in[3] = t_array_dtype(1, cs, param_dtype, k_mm);
  in[4] = t_array_dtype(1, cs, param_dtype, k_mv);
}

static void test_batchnorm_inference(void **state) {
  (void)state;
  mxw_ndarray *in[5], *out[3] = {NULL, NULL, NULL};
  make_bn_inputs(in, MXW_FLOAT32, MXW_FLOAT32);
  int nout = 3;
  assert_int_equal(t_invoke("BatchNorm", in, 5, out, &nout, NULL), 0);
  assert_int_equal(nout, 3);
  expect_values(out[0], k_fix_true, 4, 1e-6);
  /* inference: mean = moving_mean, var = invstd of moving_var (as MXNet's CPU kernels) */
  expect_values(out[1], k_mm, 2, 1e-7);
  expect_values(out[2], k_invstd, 2, 1e-6);
  free_all(out, 3);
  /* inference leaves gamma and the moving statistics alone */
  expect_values(in[1], k_gamma, 2, 1e-7);
  expect_values(in[3], k_mm, 2, 0);
  expect_values(in[4], k_mv, 2, 0);

  assert_int_equal(t_invoke("_npx_batch_norm", in, 5, out, &nout, "fix_gamma", "False", NULL), 0);
  expect_values(out[0], k_fix_false, 4, 1e-6);
  free_all(out, 3);

  /* training mode with use_global_stats normalizes with the moving statistics and updates nothing */
  int prev = mxw_set_training(1);
  assert_int_equal(t_invoke("BatchNorm", in, 5, out, &nout, "fix_gamma", "False", "use_global_stats", "True", NULL), 0);
  mxw_set_training(prev);
  expect_values(out[0], k_fix_false, 4, 1e-6);
  expect_values(in[3], k_mm, 2, 0);
  expect_values(in[4], k_mv, 2, 0);
  free_all(out, 3);
  free_all(in, 5);
}

/* axis = -1 on (2, 2): the channel is the last axis; same numbers as above. */
static void test_batchnorm_channels_last(void **state) {
  (void)state;
  const int32_t xs[2] = {2, 2}, cs[1] = {2};
  mxw_ndarray *in[5] = {t_array_dtype(2, xs, MXW_FLOAT32, k_x), t_array_dtype(1, cs, MXW_FLOAT32, k_gamma),
                        t_array_dtype(1, cs, MXW_FLOAT32, k_beta), t_array_dtype(1, cs, MXW_FLOAT32, k_mm),
                        t_array_dtype(1, cs, MXW_FLOAT32, k_mv)};
  mxw_ndarray *out[3] = {NULL, NULL, NULL};
  int nout = 3;
  assert_int_equal(t_invoke("BatchNorm", in, 5, out, &nout, "axis", "-1", "fix_gamma", "False", NULL), 0);
  expect_values(out[0], k_fix_false, 4, 1e-6);
  free_all(out, 3);
  free_all(in, 5);
}

/* float64 (the scalar double kernels) and float16 data (float32 gamma/beta/moving stats and
 * mean/var outputs, as MXNet's BatchNormType). */
static void test_batchnorm_dtypes(void **state) {
  (void)state;
  mxw_ndarray *in[5], *out[3] = {NULL, NULL, NULL};
  int nout = 3;
  make_bn_inputs(in, MXW_FLOAT64, MXW_FLOAT64);
  assert_int_equal(t_invoke("BatchNorm", in, 5, out, &nout, "fix_gamma", "False", NULL), 0);
  assert_int_equal(mxw_ndarray_dtype(out[0]), MXW_FLOAT64);
  expect_values(out[0], k_fix_false, 4, 1e-14);
  expect_values(out[2], k_invstd, 2, 1e-14);
  free_all(out, 3);
  free_all(in, 5);

  make_bn_inputs(in, MXW_FLOAT16, MXW_FLOAT32);
  assert_int_equal(t_invoke("BatchNorm", in, 5, out, &nout, NULL), 0);
  assert_int_equal(mxw_ndarray_dtype(out[0]), MXW_FLOAT16);
  assert_int_equal(mxw_ndarray_dtype(out[1]), MXW_FLOAT32);
  assert_int_equal(mxw_ndarray_dtype(out[2]), MXW_FLOAT32);
  expect_values(out[0], k_fix_true, 4, 1e-3);
  expect_values(out[2], k_invstd, 2, 1e-6);
  free_all(out, 3);
  free_all(in, 5);

  /* float16 data with float16 gamma is an error naming gamma */
  make_bn_inputs(in, MXW_FLOAT16, MXW_FLOAT16);
  assert_int_equal(t_invoke("BatchNorm", in, 5, out, &nout, NULL), -1);
  assert_error_contains("gamma");
  assert_error_contains("float32");
  free_all(in, 5);
}

/* Training: x (2, 2, 1, 1) = [[1, 2], [3, 6]]: channel 0 {1, 3} has mean 2 and biased variance 1,
 * channel 1 {2, 6} mean 4 and variance 4. fix_gamma (default True), beta [0.1, -0.1]:
 *   y = c0: -0.9995004 + 0.1, 0.9995004 + 0.1;  c1: -2*0.4999375 - 0.1, 2*0.4999375 - 0.1
 * moving_mean [0, 0] -> 0.9*0 + 0.1*[2, 4] = [0.2, 0.4]; moving_var [1, 1] -> 0.9 + 0.1*[1, 4] =
 * [1, 1.3]; the var output holds invstd; gamma is overwritten with 1s. */
static void test_batchnorm_training(void **state) {
  (void)state;
  const int32_t xs[4] = {2, 2, 1, 1}, cs[1] = {2};
  const double x[4] = {1, 2, 3, 6}, zeros[2] = {0, 0}, ones[2] = {1, 1};
  mxw_ndarray *in[5] = {t_array_dtype(4, xs, MXW_FLOAT32, x), t_array_dtype(1, cs, MXW_FLOAT32, k_gamma),
                        t_array_dtype(1, cs, MXW_FLOAT32, k_beta), t_array_dtype(1, cs, MXW_FLOAT32, zeros),
                        t_array_dtype(1, cs, MXW_FLOAT32, ones)};
  mxw_ndarray *out[3] = {NULL, NULL, NULL};
  int nout = 3;
  int prev = mxw_set_training(1);
  int rc = t_invoke("BatchNorm", in, 5, out, &nout, NULL);
  mxw_set_training(prev);
  assert_int_equal(rc, 0);
  expect_values(out[0],
                (const double[]){-0.8995003746877732, -1.0998750234326182, 1.0995003746877732, 0.8998750234326182}, 4,
                1e-6);
  expect_values(out[1], (const double[]){2, 4}, 2, 1e-7);
  expect_values(out[2], k_invstd, 2, 1e-6);
  expect_values(in[3], (const double[]){0.2, 0.4}, 2, 1e-6);
  expect_values(in[4], (const double[]){1, 1.3}, 2, 1e-6);
  expect_values(in[1], ones, 2, 0);
  free_all(out, 3);

  /* momentum 0.5, fix_gamma False: gamma [1, 1] now; moving stats move half way again */
  prev = mxw_set_training(1);
  rc = t_invoke("BatchNorm", in, 5, out, &nout, "momentum", "0.5", "fix_gamma", "False", NULL);
  mxw_set_training(prev);
  assert_int_equal(rc, 0);
  expect_values(in[3], (const double[]){0.5 * 0.2 + 0.5 * 2, 0.5 * 0.4 + 0.5 * 4}, 2, 1e-6);
  expect_values(in[4], (const double[]){0.5 * 1 + 0.5 * 1, 0.5 * 1.3 + 0.5 * 4}, 2, 1e-6);
  free_all(out, 3);
  free_all(in, 5);
}

/* ---- training on odd sizes against a plain double loop ------------------------------------------ */
/* The reference: channel c of the (outer, C, inner) view; mean, biased var, invstd, y. */
static void ref_batchnorm_train(const float *x, int64_t outer, int64_t C, int64_t inner, double eps, const float *gamma,
                                const float *beta, int fix_gamma, double *y, double *mean, double *invstd,
                                double *var) {
  for (int64_t c = 0; c < C; c++) {
    double s = 0, q = 0;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) s += x[(o * C + c) * inner + i];
    const double m = s / (double)(outer * inner);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        const double d = x[(o * C + c) * inner + i] - m;
        q += d * d;
      }
    var[c] = q / (double)(outer * inner);
    mean[c] = m;
    invstd[c] = 1.0 / sqrt(var[c] + eps);
    const double g = fix_gamma ? 1.0 : gamma[c];
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        const int64_t k = (o * C + c) * inner + i;
        y[k] = (x[k] - m) * invstd[c] * g + beta[c];
      }
  }
}

static void check_training_case(int ndim, const int32_t *shape, int axis_attr, int fix_gamma) {
  const int axis = axis_attr < 0 ? axis_attr + ndim : axis_attr;
  int64_t outer = 1, inner = 1, n = 1;
  for (int i = 0; i < ndim; i++) {
    n *= shape[i];
    if (i < axis) outer *= shape[i];
    if (i > axis) inner *= shape[i];
  }
  const int64_t C = shape[axis];
  float *x = malloc((size_t)n * sizeof(float)), *params = malloc((size_t)C * 4 * sizeof(float));
  double *want = malloc((size_t)(n + 3 * C) * sizeof(double));
  assert_non_null(x);
  assert_non_null(params);
  assert_non_null(want);
  /* values with an offset per channel, so the mean matters */
  for (int64_t i = 0; i < n; i++) x[i] = (float)(3.0 * sin(0.37 * (double)i) + 1.5 + (double)(i % 3));
  float *gamma = params, *beta = params + C, *mm = params + 2 * C, *mv = params + 3 * C;
  for (int64_t c = 0; c < C; c++) {
    gamma[c] = (float)(0.5 + 0.1 * (double)c);
    beta[c] = (float)(0.25 * (double)c - 0.3);
    mm[c] = (float)(0.1 * (double)c);
    mv[c] = (float)(1.0 + 0.2 * (double)c);
  }
  double *mean = want + n, *invstd = mean + C, *var = invstd + C;
  ref_batchnorm_train(x, outer, C, inner, 1e-3, gamma, beta, fix_gamma, want, mean, invstd, var);

  const int32_t cs[1] = {(int32_t)C};
  mxw_ndarray *in[5] = {t_array(ndim, shape, x), t_array(1, cs, gamma), t_array(1, cs, beta), t_array(1, cs, mm),
                        t_array(1, cs, mv)};
  mxw_ndarray *out[3] = {NULL, NULL, NULL};
  int nout = 3;
  char axis_text[16];
  snprintf(axis_text, sizeof axis_text, "%d", axis_attr);
  int prev = mxw_set_training(1);
  int rc = t_invoke("BatchNorm", in, 5, out, &nout, "axis", axis_text, "fix_gamma", fix_gamma ? "True" : "False", NULL);
  mxw_set_training(prev);
  assert_int_equal(rc, 0);
  expect_values(out[0], want, n, 2e-5);
  expect_values(out[1], mean, C, 1e-5);
  expect_values(out[2], invstd, C, 1e-5);
  for (int64_t c = 0; c < C; c++) {
    const double m_want = 0.9 * mm[c] + 0.1 * mean[c], v_want = 0.9 * mv[c] + 0.1 * var[c];
    assert_close(value_at(in[3], c), m_want, 1e-5);
    assert_close(value_at(in[4], c), v_want, 1e-5);
  }
  free_all(out, 3);
  free_all(in, 5);
  free(x);
  free(params);
  free(want);
}

static void test_batchnorm_training_odd_sizes(void **state) {
  (void)state;
  check_training_case(3, (const int32_t[]){3, 5, 7}, 1, 1); /* per-channel blocks of 7 */
  check_training_case(3, (const int32_t[]){3, 5, 7}, 1, 0);
  check_training_case(3, (const int32_t[]){4, 3, 5}, -1, 0);    /* channels last: whole rows */
  check_training_case(2, (const int32_t[]){5, 6}, 0, 0);        /* axis 0 */
  check_training_case(4, (const int32_t[]){2, 3, 3, 11}, 1, 0); /* NCHW with odd H*W = 33 */
  check_training_case(3, (const int32_t[]){2, 3, 2113}, 1, 0);  /* runs longer than the flush length */
  check_training_case(4, (const int32_t[]){2, 3, 4, 5}, 2, 0);  /* an inner axis */
}

/* BatchNormWithReLU: the fix_gamma=True numbers with negatives clipped, workspace = mask. */
static void test_batchnorm_relu(void **state) {
  (void)state;
  mxw_ndarray *in[5], *out[4] = {NULL, NULL, NULL, NULL};
  make_bn_inputs(in, MXW_FLOAT32, MXW_FLOAT32);
  int nout = 4;
  assert_int_equal(t_invoke("_contrib_BatchNormWithReLU", in, 5, out, &nout, NULL), 0);
  assert_int_equal(nout, 4);
  expect_values(out[0], (const double[]){0, 0, 1.0995003746877732, 0.3999375117163091}, 4, 1e-6);
  expect_values(out[3], (const double[]){0, 0, 1, 1}, 4, 0);
  free_all(out, 4);
  free_all(in, 5);
}

/* LayerNorm of [1, 2, 3]: mean 2, var 2/3, std = sqrt(2/3 + 1e-5) = 0.81650270463;
 * (x - 2) / std = [-1.22473568591, 0, 1.22473568591]; gamma [1, 2, 3], beta [0.5, 0, -0.5]
 * -> [-0.72473568591, 0, 3.17420705773]. */
static void test_layernorm(void **state) {
  (void)state;
  const int32_t xs[2] = {1, 3}, cs[1] = {3};
  mxw_ndarray *in[3] = {t_array_dtype(2, xs, MXW_FLOAT32, (const double[]){1, 2, 3}),
                        t_array_dtype(1, cs, MXW_FLOAT32, (const double[]){1, 2, 3}),
                        t_array_dtype(1, cs, MXW_FLOAT32, (const double[]){0.5, 0, -0.5})};
  mxw_ndarray *out[3] = {NULL, NULL, NULL};
  int nout = 3;
  assert_int_equal(t_invoke("LayerNorm", in, 3, out, &nout, NULL), 0);
  expect_values(out[0], (const double[]){-0.7247356859083902, 0, 3.1742070577251704}, 3, 1e-6);
  expect_values(out[1], (const double[]){2}, 1, 1e-7);
  expect_values(out[2], (const double[]){0.8165027046291191}, 1, 1e-6);
  assert_int_equal(mxw_ndarray_ndim(out[1]), 2); /* (1, 1): the data's shape with the axis set to 1 */
  free_all(out, 3);
  free_all(in, 3);

  /* axis 0 of [[1, 10], [2, 20], [3, 30]], gamma/beta per row: column 1 has mean 20 and
   * std sqrt(200/3 + 1e-5) = 8.16496642165, (x - 20) / std = [-1.22474477954, 0, 1.22474477954] */
  const int32_t ys[2] = {3, 2};
  mxw_ndarray *in2[3] = {t_array_dtype(2, ys, MXW_FLOAT64, (const double[]){1, 10, 2, 20, 3, 30}),
                         t_array_dtype(1, cs, MXW_FLOAT64, (const double[]){1, 2, 3}),
                         t_array_dtype(1, cs, MXW_FLOAT64, (const double[]){0.5, 0, -0.5})};
  assert_int_equal(t_invoke("_npx_layer_norm", in2, 3, out, &nout, "axis", "0", NULL), 0);
  expect_values(out[0],
                (const double[]){-0.7247356859083902, -0.724744779535734, 0, 0, 3.1742070577251704, 3.174234338607202},
                6, 1e-12);
  expect_values(out[1], (const double[]){2, 20}, 2, 1e-14);
  expect_values(out[2], (const double[]){0.8165027046291191, 8.164966421649673}, 2, 1e-12);
  free_all(out, 3);
  free_all(in2, 3);
}

static void test_errors(void **state) {
  (void)state;
  mxw_ndarray *in[5], *out[4] = {NULL, NULL, NULL, NULL};
  int nout = 4;
  make_bn_inputs(in, MXW_FLOAT32, MXW_FLOAT32);
  /* gamma of the wrong length */
  mxw_ndarray *good_gamma = in[1];
  in[1] = t_array_dtype(1, (const int32_t[]){3}, MXW_FLOAT32, (const double[]){1, 2, 3});
  assert_int_equal(t_invoke("BatchNorm", in, 5, out, &nout, NULL), -1);
  assert_error_contains("BatchNorm");
  assert_error_contains("gamma");
  assert_error_contains("(3,)");
  mxw_ndarray_free(in[1]);
  in[1] = good_gamma;
  /* the next call works */
  assert_int_equal(t_invoke("BatchNorm", in, 5, out, &nout, NULL), 0);
  expect_values(out[0], k_fix_true, 4, 1e-6);
  free_all(out, 4);
  /* axis out of range */
  assert_int_equal(t_invoke("BatchNorm", in, 5, out, &nout, "axis", "4", NULL), -1);
  assert_error_contains("axis 4");
  /* an unknown attribute */
  assert_int_equal(t_invoke("BatchNorm", in, 5, out, &nout, "epsilon", "1", NULL), -1);
  assert_error_contains("epsilon");
  free_all(in, 5);

  /* integer data */
  const int32_t xs[4] = {2, 2, 1, 1}, cs[1] = {2};
  mxw_ndarray *ii[5] = {t_array_dtype(4, xs, MXW_INT32, k_x), t_array_dtype(1, cs, MXW_INT32, k_x),
                        t_array_dtype(1, cs, MXW_INT32, k_x), t_array_dtype(1, cs, MXW_INT32, k_x),
                        t_array_dtype(1, cs, MXW_INT32, k_x)};
  assert_int_equal(t_invoke("BatchNorm", ii, 5, out, &nout, NULL), -1);
  assert_error_contains("int32");
  free_all(ii, 5);

  /* GroupNorm: 6 channels in 4 groups */
  const int32_t gs[3] = {1, 6, 2}, g4[1] = {4};
  double vals[12];
  for (int i = 0; i < 12; i++) vals[i] = i;
  mxw_ndarray *gi[3] = {t_array_dtype(3, gs, MXW_FLOAT32, vals), t_array_dtype(1, g4, MXW_FLOAT32, vals),
                        t_array_dtype(1, g4, MXW_FLOAT32, vals)};
  assert_int_equal(t_invoke("GroupNorm", gi, 3, out, &nout, "num_groups", "4", NULL), -1);
  assert_error_contains("GroupNorm");
  assert_error_contains("num_groups");
  assert_int_equal(t_invoke("GroupNorm", gi, 3, out, &nout, "num_groups", "0", NULL), -1);
  assert_error_contains("num_groups");
  free_all(gi, 3);

  /* LRN: even nsize, nsize larger than C, not 4-D */
  mxw_ndarray *li[1] = {t_array_dtype(4, (const int32_t[]){1, 3, 2, 2}, MXW_FLOAT32, vals)};
  assert_int_equal(t_invoke("LRN", li, 1, out, &nout, "nsize", "4", NULL), -1);
  assert_error_contains("nsize");
  assert_int_equal(t_invoke("LRN", li, 1, out, &nout, "nsize", "5", NULL), -1);
  assert_error_contains("nsize = 5");
  assert_int_equal(t_invoke("LRN", li, 1, out, &nout, NULL), -1);
  assert_error_contains("nsize");
  free_all(li, 1);
  mxw_ndarray *l3[1] = {t_array_dtype(3, (const int32_t[]){1, 3, 4}, MXW_FLOAT32, vals)};
  assert_int_equal(t_invoke("LRN", l3, 1, out, &nout, "nsize", "3", NULL), -1);
  assert_error_contains("4 dimensions");

  /* L2Normalization channel/spatial need 3 dimensions; InstanceNorm too */
  mxw_ndarray *l2[1] = {t_array_dtype(2, (const int32_t[]){3, 4}, MXW_FLOAT32, vals)};
  assert_int_equal(t_invoke("L2Normalization", l2, 1, out, &nout, "mode", "channel", NULL), -1);
  assert_error_contains("channel");
  assert_int_equal(t_invoke("L2Normalization", l2, 1, out, &nout, "mode", "pixel", NULL), -1);
  assert_error_contains("pixel");
  assert_int_equal(t_invoke("L2Normalization", l2, 1, out, &nout, NULL), 0); /* instance works on 2-D */
  free_all(out, 4);
  nout = 4; /* the call above set it to L2Normalization's 2 outputs */
  mxw_ndarray *ni[3] = {l2[0], t_array_dtype(1, (const int32_t[]){4}, MXW_FLOAT32, vals),
                        t_array_dtype(1, (const int32_t[]){4}, MXW_FLOAT32, vals)};
  assert_int_equal(t_invoke("InstanceNorm", ni, 3, out, &nout, NULL), -1);
  assert_error_contains("InstanceNorm");
  assert_error_contains("3 dimensions");
  /* LayerNorm with a gamma of the wrong length */
  ni[0] = l3[0];
  assert_int_equal(t_invoke("LayerNorm", ni, 3, out, &nout, "axis", "1", NULL), -1);
  assert_error_contains("LayerNorm");
  assert_error_contains("gamma");
  free_all(ni + 1, 2);
  free_all(l2, 1);
  free_all(l3, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batchnorm_inference),
      cmocka_unit_test(test_batchnorm_channels_last),
      cmocka_unit_test(test_batchnorm_dtypes),
      cmocka_unit_test(test_batchnorm_training),
      cmocka_unit_test(test_batchnorm_training_odd_sizes),
      cmocka_unit_test(test_batchnorm_relu),
      cmocka_unit_test(test_layernorm),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
