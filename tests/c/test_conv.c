/* Convolution, Deconvolution and UpSampling through the invoke path: hand-worked values (each
 * worked out in the comment above it), shape inference that fills the weight and bias, the
 * error messages, the channel-last layouts, and random cases against the spec's formulas as
 * plain loops (including the direct float32 kernel for few filters on odd sizes). */
#include <stdlib.h>

#include "mxw_test.h"

static void free_all(mxw_ndarray **a, int n) {
  for (int i = 0; i < n; i++) mxw_ndarray_free(a[i]);
}

/* in = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,2],[3,4]], b = 0.5, stride 1:
 *   out[y][x] = in[y][x] + 2 in[y][x+1] + 3 in[y+1][x] + 4 in[y+1][x+1] + 0.5
 *   (0,0) 1+4+12+20 = 37   (0,1) 2+6+15+24 = 47   (1,0) 4+10+21+32 = 67   (1,1) 5+12+24+36 = 77
 * stride 2, pad 1 (no bias): out[y][x] = sum w[i][j] in[2y-1+i][2x-1+j], Ho = (3+2-2)/2+1 = 2
 *   (0,0) 4*1 = 4   (0,1) 3*2 + 4*3 = 18   (1,0) 2*4 + 4*7 = 36   (1,1) 5+12+24+36 = 77 */
static const float k_in9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, k_w4[4] = {1, 2, 3, 4}, k_half[1] = {0.5f};

static void test_conv_hand_worked(void **state) {
  (void)state;
  int32_t xs[4] = {1, 1, 3, 3}, ws[4] = {1, 1, 2, 2}, bs[1] = {1};
  mxw_ndarray *in[3] = {t_array(4, xs, k_in9), t_array(4, ws, k_w4), t_array(1, bs, k_half)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("Convolution", in, 3, out, &nout, "kernel", "(2, 2)", "num_filter", "1", NULL), 0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 1, 2, 2});
  t_expect_f32(out[0], (const float[]){37.5f, 47.5f, 67.5f, 77.5f}, 4, 1e-6);
  mxw_ndarray_free(out[0]);

  out[0] = NULL;
  assert_int_equal(t_invoke("_npx_convolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "stride",
                            "(2, 2)", "pad", "(1, 1)", "no_bias", "True", NULL),
                   0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 1, 2, 2});
  t_expect_f32(out[0], (const float[]){4, 18, 36, 77}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  free_all(in, 3);
}

/* The same two cases in float64 (the GEMM path; float32 single-channel runs the depthwise loop). */
static void test_conv_float64(void **state) {
  (void)state;
  int32_t xs[4] = {1, 1, 3, 3}, ws[4] = {1, 1, 2, 2}, bs[1] = {1};
  const double x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 2, 3, 4}, b[1] = {0.5};
  mxw_ndarray *in[3] = {t_array_f64(4, xs, x), t_array_f64(4, ws, w), t_array_f64(1, bs, b)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("Convolution", in, 3, out, &nout, "kernel", "(2, 2)", "num_filter", "1", NULL), 0);
  assert_int_equal(mxw_ndarray_dtype(out[0]), MXW_FLOAT64);
  t_expect_f64(out[0], (const double[]){37.5, 47.5, 67.5, 77.5}, 4, 1e-12);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  assert_int_equal(t_invoke("Convolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "stride", "(2, 2)",
                            "pad", "(1, 1)", "no_bias", "True", NULL),
                   0);
  t_expect_f64(out[0], (const double[]){4, 18, 36, 77}, 4, 1e-12);
  mxw_ndarray_free(out[0]);
  free_all(in, 3);
}

/* Two filters over one channel (GEMM path): filter 0 = [[1,2],[3,4]] as above, filter 1 =
 * [[0,0],[0,1]] picks in[y+1][x+1] = 5, 6, 8, 9; biases 0.5 and -1. */
static void test_conv_two_filters(void **state) {
  (void)state;
  int32_t xs[4] = {1, 1, 3, 3}, ws[4] = {2, 1, 2, 2}, bs[1] = {2};
  const float w[8] = {1, 2, 3, 4, 0, 0, 0, 1}, b[2] = {0.5f, -1};
  mxw_ndarray *in[3] = {t_array(4, xs, k_in9), t_array(4, ws, w), t_array(1, bs, b)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("Convolution", in, 3, out, &nout, "kernel", "(2, 2)", "num_filter", "2", NULL), 0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 2, 2, 2});
  t_expect_f32(out[0], (const float[]){37.5f, 47.5f, 67.5f, 77.5f, 4, 5, 7, 8}, 8, 1e-6);
  mxw_ndarray_free(out[0]);
  free_all(in, 3);
}

/* Groups: data (1, 2, 2, 2), channel 0 = [1,2,3,4], channel 1 = [5,6,7,8]; num_group 2 and
 * num_filter 4, so filters 0-1 see channel 0 and filters 2-3 see channel 1.
 * 2x2 kernel -> 1x1 output: f0 = ones -> 10, f1 = [1,0,0,0] -> 1, f2 = ones -> 26,
 * f3 = [0,0,0,1] -> 8.
 * 1x1 kernel (the pointwise path), weights 1, 2, 3, 4: 1*ch0, 2*ch0, 3*ch1, 4*ch1. */
static void test_conv_grouped(void **state) {
  (void)state;
  int32_t xs[4] = {1, 2, 2, 2}, ws[4] = {4, 1, 2, 2}, ws1[4] = {4, 1, 1, 1};
  const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const float w[16] = {1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1};
  mxw_ndarray *in[2] = {t_array(4, xs, x), t_array(4, ws, w)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("Convolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "4", "num_group", "2",
                            "no_bias", "True", NULL),
                   0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 4, 1, 1});
  t_expect_f32(out[0], (const float[]){10, 1, 26, 8}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(in[1]);
  in[1] = t_array(4, ws1, (const float[]){1, 2, 3, 4});
  out[0] = NULL;
  assert_int_equal(t_invoke("Convolution", in, 2, out, &nout, "kernel", "(1, 1)", "num_filter", "4", "num_group", "2",
                            "no_bias", "True", NULL),
                   0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 4, 2, 2});
  t_expect_f32(out[0], (const float[]){1, 2, 3, 4, 2, 4, 6, 8, 15, 18, 21, 24, 20, 24, 28, 32}, 16, 1e-6);
  mxw_ndarray_free(out[0]);
  free_all(in, 2);
}

/* 1-D: in = [1, 2, 3, 4, 5], w = [1, -1], dilate 2: out[x] = in[x] - in[x+2] = -2, -2, -2. */
static void test_conv_1d_dilated(void **state) {
  (void)state;
  int32_t xs[3] = {1, 1, 5}, ws[3] = {1, 1, 2};
  mxw_ndarray *in[2] = {t_array(3, xs, (const float[]){1, 2, 3, 4, 5}), t_array(3, ws, (const float[]){1, -1})};
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("Convolution", in, 2, out, &nout, "kernel", "(2,)", "dilate", "(2,)", "num_filter", "1",
                            "no_bias", "True", NULL),
                   0);
  t_expect_shape(out[0], 3, (const int32_t[]){1, 1, 3});
  t_expect_f32(out[0], (const float[]){-2, -2, -2}, 3, 1e-6);
  mxw_ndarray_free(out[0]);
  free_all(in, 2);
}

/* Shape inference from data alone fills weight (num_filter, C/G, k...) and bias (num_filter,). */
static void test_conv_infer_fills_weight(void **state) {
  (void)state;
  int op = mxw_op_find("Convolution");
  const char *keys[4] = {"kernel", "num_filter", "num_group", "stride"}, *vals[4] = {"(3, 3)", "8", "2", "(2, 2)"};
  mxw_params *p = NULL;
  assert_int_equal(mxw_params_create(op, 4, keys, vals, &p), 0);
  mxw_shape in[3], out[1];
  const int64_t d[4] = {2, 6, 11, 10};
  in[0] = mxw_shape_make(4, d);
  in[1].ndim = in[2].ndim = out[0].ndim = -1;
  assert_int_equal(mxw_op_get(op)->infer_shape(p->param, 3, in, 1, out), 0);
  const int64_t w[4] = {8, 3, 3, 3}, b[1] = {8}, o[4] = {2, 8, 5, 4};
  mxw_shape ws = mxw_shape_make(4, w), bs = mxw_shape_make(1, b), os = mxw_shape_make(4, o);
  assert_true(mxw_shape_equal(&in[1], &ws));
  assert_true(mxw_shape_equal(&in[2], &bs));
  assert_true(mxw_shape_equal(&out[0], &os));
  mxw_params_free(p);

  /* Deconvolution: weight (C, num_filter / num_group, k...), no bias by default; the output
   * is 2*(11-1) + 3 = 23 by 2*(10-1) + 3 = 21. */
  op = mxw_op_find("Deconvolution");
  assert_int_equal(mxw_params_create(op, 4, keys, vals, &p), 0);
  in[1].ndim = out[0].ndim = -1;
  assert_int_equal(mxw_op_get(op)->infer_shape(p->param, 2, in, 1, out), 0);
  const int64_t dw[4] = {6, 4, 3, 3}, dout[4] = {2, 8, 23, 21};
  mxw_shape dws = mxw_shape_make(4, dw), dos = mxw_shape_make(4, dout);
  assert_true(mxw_shape_equal(&in[1], &dws));
  assert_true(mxw_shape_equal(&out[0], &dos));
  mxw_params_free(p);
}

static void test_conv_errors(void **state) {
  (void)state;
  int32_t xs[4] = {1, 1, 3, 3}, ws[4] = {1, 1, 3, 2}, ws_ok[4] = {1, 1, 2, 2};
  mxw_ndarray *in[2] = {t_array(4, xs, k_in9), t_array(4, ws, NULL)}, *out[1] = {NULL};
  int nout = 1;
  /* weight (1, 1, 3, 2) for a 2x2 kernel */
  assert_int_equal(
      t_invoke("Convolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "no_bias", "True", NULL), -1);
  assert_error_contains("Convolution");
  assert_error_contains("weight has shape (1, 1, 3, 2), expected (1, 1, 2, 2)");
  /* a 5x5 kernel on a 3x3 input with pad 0 */
  mxw_ndarray_free(in[1]);
  in[1] = t_array(4, (const int32_t[]){1, 1, 5, 5}, NULL);
  assert_int_equal(
      t_invoke("Convolution", in, 2, out, &nout, "kernel", "(5, 5)", "num_filter", "1", "no_bias", "True", NULL), -1);
  assert_error_contains("dilated kernel (5) is larger than the padded input (3)");
  assert_error_contains("(1, 1, 3, 3)");
  /* a layout of another rank than the kernel; NWC is not one of Convolution's layouts (as MXNet);
   * bad num_group, missing kernel, kernel rank 4 */
  assert_int_equal(
      t_invoke("Convolution", in, 2, out, &nout, "kernel", "(5,)", "num_filter", "1", "layout", "NHWC", NULL), -1);
  assert_error_contains("layout NHWC does not match kernel (5,) (1-D: layout NCW)");
  assert_int_equal(
      t_invoke("Convolution", in, 2, out, &nout, "kernel", "(5, 5)", "num_filter", "1", "layout", "NDHWC", NULL), -1);
  assert_error_contains("(2-D: layout NCHW or NHWC)");
  assert_int_equal(
      t_invoke("Convolution", in, 2, out, &nout, "kernel", "(5,)", "num_filter", "1", "layout", "NWC", NULL), -1);
  assert_error_contains("invalid value 'NWC' for attribute 'layout'");
  assert_int_equal(
      t_invoke("Convolution", in, 2, out, &nout, "kernel", "(5, 5)", "num_filter", "3", "num_group", "2", NULL), -1);
  assert_error_contains("num_filter 3 is not divisible by num_group 2");
  assert_int_equal(t_invoke("Convolution", in, 2, out, &nout, "num_filter", "1", NULL), -1);
  assert_error_contains("kernel");
  assert_int_equal(t_invoke("Convolution", in, 2, out, &nout, "kernel", "(1, 1, 1, 1)", "num_filter", "1", NULL), -1);
  assert_error_contains("1, 2 or 3 dimensions");
  assert_int_equal(t_invoke("Deconvolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "stride",
                            "(2, 2)", "adj", "(2, 2)", NULL),
                   -1);
  assert_error_contains("adj (2, 2) must be smaller than stride (2, 2)");
  /* a scalar stride for a 2-D kernel is a rank mismatch, as in MXNet */
  assert_int_equal(
      t_invoke("Convolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "stride", "2", NULL), -1);
  assert_error_contains("stride (2,) must have as many dimensions as kernel (2, 2)");
  /* integer data is rejected */
  mxw_ndarray *xi = NULL;
  assert_int_equal(mxw_ndarray_create(4, xs, MXW_INT32, &xi), 0);
  mxw_ndarray *in_i[2] = {xi, t_array(4, ws_ok, k_w4)};
  mxw_ndarray_free(in[1]);
  in[1] = NULL;
  assert_int_equal(
      t_invoke("Convolution", in_i, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "no_bias", "True", NULL), -1);
  assert_error_contains("dtype");
  free_all(in_i, 2);
  /* and the next call works */
  in[1] = t_array(4, ws_ok, k_w4);
  assert_int_equal(
      t_invoke("Convolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "no_bias", "True", NULL), 0);
  t_expect_f32(out[0], (const float[]){37, 47, 67, 77}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  free_all(in, 2);
}

/* data [[1,2],[3,4]], w = [[1,2],[3,4]], stride 1: out[Y][X] = sum in[y][x] w[Y-y][X-x]:
 *   [[1, 1*2+2*1, 4], [1*3+3*1, 1*4+2*3+3*2+4*1, 2*4+4*2], [9, 3*4+4*3, 16]]
 *   = [[1, 4, 4], [6, 20, 16], [9, 24, 16]]
 * A second filter [[1,0],[0,0]] (GEMM path, num_filter 2) places the input at the top left. */
static void test_deconv_hand_worked(void **state) {
  (void)state;
  int32_t xs[4] = {1, 1, 2, 2}, ws[4] = {1, 1, 2, 2}, ws2[4] = {1, 2, 2, 2};
  mxw_ndarray *in[2] = {t_array(4, xs, k_w4), t_array(4, ws, k_w4)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("Deconvolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", NULL), 0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 1, 3, 3});
  t_expect_f32(out[0], (const float[]){1, 4, 4, 6, 20, 16, 9, 24, 16}, 9, 1e-6);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(in[1]);
  in[1] = t_array(4, ws2, (const float[]){1, 2, 3, 4, 1, 0, 0, 0});
  out[0] = NULL;
  assert_int_equal(t_invoke("_npx_deconvolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "2", NULL), 0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 2, 3, 3});
  t_expect_f32(out[0], (const float[]){1, 4, 4, 6, 20, 16, 9, 24, 16, 1, 2, 0, 3, 4, 0, 0, 0, 0}, 18, 1e-6);
  mxw_ndarray_free(out[0]);
  free_all(in, 2);
}

/* Stride 2 with the same data and 2x2 kernel: non-overlapping blocks out[2y+i][2x+j] = in[y][x] w[i][j]
 *   full (4x4): [[1,2,2,4],[3,4,6,8],[3,6,4,8],[9,12,12,16]]
 * pad 1 crops one on each side: [[4,6],[6,4]]; pad 1 adj 1 keeps one more at the end:
 * [[4,6,8],[6,4,8],[12,12,16]]; target_shape (3, 3) gives t = 4 - 3 = 1 -> pad 1, adj 1, the same.
 * With a bias of 0.5 through the GEMM path (two filters, the second all zero). */
static void test_deconv_stride_pad_adj(void **state) {
  (void)state;
  int32_t xs[4] = {1, 1, 2, 2}, ws[4] = {1, 1, 2, 2};
  mxw_ndarray *in[2] = {t_array(4, xs, k_w4), t_array(4, ws, k_w4)}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(
      t_invoke("Deconvolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "stride", "(2, 2)", NULL), 0);
  t_expect_f32(out[0], (const float[]){1, 2, 2, 4, 3, 4, 6, 8, 3, 6, 4, 8, 9, 12, 12, 16}, 16, 1e-6);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  assert_int_equal(t_invoke("Deconvolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "stride",
                            "(2, 2)", "pad", "(1, 1)", NULL),
                   0);
  t_expect_f32(out[0], (const float[]){4, 6, 6, 4}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  assert_int_equal(t_invoke("Deconvolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "stride",
                            "(2, 2)", "pad", "(1, 1)", "adj", "(1, 1)", NULL),
                   0);
  t_expect_f32(out[0], (const float[]){4, 6, 8, 6, 4, 8, 12, 12, 16}, 9, 1e-6);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  assert_int_equal(t_invoke("Deconvolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "stride",
                            "(2, 2)", "pad", "(0, 0)", "target_shape", "(3, 3)", NULL),
                   0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 1, 3, 3});
  t_expect_f32(out[0], (const float[]){4, 6, 8, 6, 4, 8, 12, 12, 16}, 9, 1e-6);
  mxw_ndarray_free(out[0]);

  mxw_ndarray_free(in[1]);
  in[1] = t_array(4, (const int32_t[]){1, 2, 2, 2}, (const float[]){1, 2, 3, 4, 0, 0, 0, 0});
  mxw_ndarray *in3[3] = {in[0], in[1], t_array(1, (const int32_t[]){2}, (const float[]){0.5f, 0})};
  out[0] = NULL;
  assert_int_equal(t_invoke("Deconvolution", in3, 3, out, &nout, "kernel", "(2, 2)", "num_filter", "2", "stride",
                            "(2, 2)", "pad", "(1, 1)", "adj", "(1, 1)", "no_bias", "False", NULL),
                   0);
  t_expect_f32(out[0],
               (const float[]){4.5f, 6.5f, 8.5f, 6.5f, 4.5f, 8.5f, 12.5f, 12.5f, 16.5f, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 18,
               1e-6);
  mxw_ndarray_free(out[0]);
  /* a target_shape the data cannot reach */
  assert_int_equal(t_invoke("Deconvolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "2", "stride",
                            "(2, 2)", "target_shape", "(5, 5)", NULL),
                   -1);
  assert_error_contains("target_shape (5, 5) is too big");
  free_all(in3, 3);
}

/* nearest, scale 2: [[1,2],[3,4]] -> [[1,1,2,2],[1,1,2,2],[3,3,4,4],[3,3,4,4]].
 * With a second input (1, 1, 1, 1) = [10] (factor 4): concat stacks it as a channel of 10s,
 * sum adds 10 everywhere. */
static void test_upsampling_nearest(void **state) {
  (void)state;
  int32_t xs[4] = {1, 1, 2, 2}, x2s[4] = {1, 1, 1, 1};
  mxw_ndarray *in[2] = {t_array(4, xs, k_w4), t_array(4, x2s, (const float[]){10})}, *out[1] = {NULL};
  int nout = 1;
  const float up[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  assert_int_equal(
      t_invoke("UpSampling", in, 1, out, &nout, "scale", "2", "sample_type", "nearest", "num_args", "1", NULL), 0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 1, 4, 4});
  t_expect_f32(out[0], up, 16, 1e-6);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  assert_int_equal(
      t_invoke("UpSampling", in, 2, out, &nout, "scale", "2", "sample_type", "nearest", "num_args", "2", NULL), 0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 2, 4, 4});
  float want[32];
  for (int i = 0; i < 16; i++) want[i] = up[i], want[16 + i] = 10;
  t_expect_f32(out[0], want, 32, 1e-6);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  assert_int_equal(t_invoke("UpSampling", in, 2, out, &nout, "scale", "2", "sample_type", "nearest", "num_args", "2",
                            "multi_input_mode", "sum", NULL),
                   0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 1, 4, 4});
  for (int i = 0; i < 16; i++) want[i] = up[i] + 10;
  t_expect_f32(out[0], want, 16, 1e-6);
  mxw_ndarray_free(out[0]);
  /* a (1, 1, 3, 3) second input does not divide the 4x4 output */
  mxw_ndarray_free(in[1]);
  in[1] = t_array(4, (const int32_t[]){1, 1, 3, 3}, k_in9);
  assert_int_equal(
      t_invoke("UpSampling", in, 2, out, &nout, "scale", "2", "sample_type", "nearest", "num_args", "2", NULL), -1);
  assert_error_contains("UpSampling");
  assert_error_contains("input 1 (1, 1, 3, 3)");
  free_all(in, 2);
}

/* bilinear, scale 2 (MXNet's documented example): data = ones (1, 1, 3, 3), weight = ones
 * (1, 1, 4, 4) -> 6x6 [[1,2,2,2,2,1],[2,4,4,4,4,2] x4,[1,2,2,2,2,1]] (a deconvolution with kernel 4,
 * stride 2, pad 1: each output sees 1 or 2 inputs per axis). */
static void test_upsampling_bilinear(void **state) {
  (void)state;
  float ones[16];
  for (int i = 0; i < 16; i++) ones[i] = 1;
  mxw_ndarray *in[2] = {t_array(4, (const int32_t[]){1, 1, 3, 3}, ones),
                        t_array(4, (const int32_t[]){1, 1, 4, 4}, ones)};
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("UpSampling", in, 2, out, &nout, "scale", "2", "sample_type", "bilinear", "num_args", "2",
                            "num_filter", "1", NULL),
                   0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 1, 6, 6});
  const float edge[6] = {1, 2, 2, 2, 2, 1};
  float want[36];
  for (int y = 0; y < 6; y++)
    for (int x = 0; x < 6; x++) want[y * 6 + x] = edge[y] * edge[x];
  t_expect_f32(out[0], want, 36, 1e-6);
  mxw_ndarray_free(out[0]);
  /* num_filter must equal the channels */
  assert_int_equal(
      t_invoke("UpSampling", in, 2, out, &nout, "scale", "2", "sample_type", "bilinear", "num_args", "2", NULL), -1);
  assert_error_contains("num_filter (0) must equal the number of channels");
  free_all(in, 2);
}

/* The bilinear weight variable gets the bilinear initializer when composed (input 1). */
static void test_upsampling_var_init(void **state) {
  (void)state;
  const mxw_op_def *op = mxw_op_get(mxw_op_find("UpSampling"));
  assert_non_null(op->input_var_init);
  assert_string_equal(op->input_var_init(NULL, 1), "[\"bilinear\", {}]");
  assert_null(op->input_var_init(NULL, 0));
}

/* NHWC: data (1, 3, 3, 2) with channel 0 = k_in9 and channel 1 = ones, stored channel-last
 * (x[(y*3 + x)*2 + c]); weight (num_filter 1, 2, 2, C 2) with [[1,2],[3,4]] on channel 0 and ones
 * on channel 1, bias 0.5: channel 0 gives 37, 47, 67, 77 as in test_conv_hand_worked, channel 1
 * adds 4 ones: 41.5, 51.5, 71.5, 81.5, output (1, 2, 2, 1).
 * Two filters (the second [[0,0],[0,1]] on channel 0 only, bias -1: in[y+1][x+1] - 1 = 4, 5, 7, 8)
 * give output (1, 2, 2, 2) with the filters interleaved. */
static void test_conv_nhwc(void **state) {
  (void)state;
  float x[18], w1[8], w2[16];
  for (int i = 0; i < 9; i++) x[2 * i] = k_in9[i], x[2 * i + 1] = 1;
  for (int t = 0; t < 4; t++) w1[2 * t] = k_w4[t], w1[2 * t + 1] = 1;
  memcpy(w2, w1, sizeof w1);
  for (int t = 0; t < 4; t++) w2[8 + 2 * t] = t == 3, w2[8 + 2 * t + 1] = 0;
  mxw_ndarray *in[3] = {t_array(4, (const int32_t[]){1, 3, 3, 2}, x), t_array(4, (const int32_t[]){1, 2, 2, 2}, w1),
                        t_array(1, (const int32_t[]){1}, k_half)};
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(
      t_invoke("Convolution", in, 3, out, &nout, "kernel", "(2, 2)", "num_filter", "1", "layout", "NHWC", NULL), 0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 2, 2, 1});
  t_expect_f32(out[0], (const float[]){41.5f, 51.5f, 71.5f, 81.5f}, 4, 1e-6);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(in[1]);
  mxw_ndarray_free(in[2]);
  in[1] = t_array(4, (const int32_t[]){2, 2, 2, 2}, w2);
  in[2] = t_array(1, (const int32_t[]){2}, (const float[]){0.5f, -1});
  out[0] = NULL;
  assert_int_equal(
      t_invoke("Convolution", in, 3, out, &nout, "kernel", "(2, 2)", "num_filter", "2", "layout", "NHWC", NULL), 0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 2, 2, 2});
  t_expect_f32(out[0], (const float[]){41.5f, 4, 51.5f, 5, 71.5f, 7, 81.5f, 8}, 8, 1e-6);
  mxw_ndarray_free(out[0]);
  /* a channel-first weight is named with the NHWC rule */
  mxw_ndarray_free(in[1]);
  in[1] = t_array(4, (const int32_t[]){2, 2, 2, 3}, NULL);
  assert_int_equal(
      t_invoke("Convolution", in, 3, out, &nout, "kernel", "(2, 2)", "num_filter", "2", "layout", "NHWC", NULL), -1);
  assert_error_contains(
      "weight has shape (2, 2, 2, 3), expected (2, 2, 2, 2) = (num_filter, kernel..., channels / "
      "num_group)");
  free_all(in, 3);
}

/* NHWC Deconvolution: data (1, 2, 2, 1) = [[1,2],[3,4]], weight (C 1, 2, 2, num_filter 2) with
 * filter 0 = [[1,2],[3,4]] and filter 1 = [[1,0],[0,0]] (w[(i*2 + j)*2 + f]): the two outputs of
 * test_deconv_hand_worked, interleaved into (1, 3, 3, 2). */
static void test_deconv_nhwc(void **state) {
  (void)state;
  float w[8];
  for (int t = 0; t < 4; t++) w[2 * t] = k_w4[t], w[2 * t + 1] = t == 0;
  mxw_ndarray *in[2] = {t_array(4, (const int32_t[]){1, 2, 2, 1}, k_w4), t_array(4, (const int32_t[]){1, 2, 2, 2}, w)};
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(
      t_invoke("Deconvolution", in, 2, out, &nout, "kernel", "(2, 2)", "num_filter", "2", "layout", "NHWC", NULL), 0);
  t_expect_shape(out[0], 4, (const int32_t[]){1, 3, 3, 2});
  const float f0[9] = {1, 4, 4, 6, 20, 16, 9, 24, 16}, f1[9] = {1, 2, 0, 3, 4, 0, 0, 0, 0};
  float want[18];
  for (int i = 0; i < 9; i++) want[2 * i] = f0[i], want[2 * i + 1] = f1[i];
  t_expect_f32(out[0], want, 18, 1e-6);
  mxw_ndarray_free(out[0]);
  free_all(in, 2);
}

/* Shape inference for NHWC / NDHWC fills weight (num_filter, kernel..., C/G), bias and the
 * channel-last output; Deconvolution's weight is (C, kernel..., num_filter/G). */
static void test_conv_infer_channel_last(void **state) {
  (void)state;
  const char *keys[5] = {"kernel", "num_filter", "num_group", "stride", "layout"};
  const char *vals[5] = {"(3, 3)", "8", "2", "(2, 2)", "NHWC"};
  mxw_shape in[3], out[1];
  mxw_params *p = NULL;
  int op = mxw_op_find("Convolution");
  assert_int_equal(mxw_params_create(op, 5, keys, vals, &p), 0);
  in[0] = mxw_shape_make(4, (const int64_t[]){2, 11, 10, 6});
  in[1].ndim = in[2].ndim = out[0].ndim = -1;
  assert_int_equal(mxw_op_get(op)->infer_shape(p->param, 3, in, 1, out), 0);
  const mxw_shape ws = mxw_shape_make(4, (const int64_t[]){8, 3, 3, 3}), bs = mxw_shape_make(1, (const int64_t[]){8});
  const mxw_shape os = mxw_shape_make(4, (const int64_t[]){2, 5, 4, 8});
  assert_true(mxw_shape_equal(&in[1], &ws));
  assert_true(mxw_shape_equal(&in[2], &bs));
  assert_true(mxw_shape_equal(&out[0], &os));
  /* the channels come from the weight when data's are unknown */
  in[0] = mxw_shape_make(4, (const int64_t[]){2, 11, 10, -1});
  in[2].ndim = out[0].ndim = -1;
  assert_int_equal(mxw_op_get(op)->infer_shape(p->param, 3, in, 1, out), 0);
  assert_int_equal(in[0].dims[3], 6);
  mxw_params_free(p);

  op = mxw_op_find("Deconvolution");
  assert_int_equal(mxw_params_create(op, 5, keys, vals, &p), 0);
  in[0] = mxw_shape_make(4, (const int64_t[]){2, 11, 10, 6});
  in[1].ndim = out[0].ndim = -1;
  assert_int_equal(mxw_op_get(op)->infer_shape(p->param, 2, in, 1, out), 0);
  const mxw_shape dws = mxw_shape_make(4, (const int64_t[]){6, 3, 3, 4});
  const mxw_shape dos = mxw_shape_make(4, (const int64_t[]){2, 23, 21, 8});
  assert_true(mxw_shape_equal(&in[1], &dws));
  assert_true(mxw_shape_equal(&out[0], &dos));
  mxw_params_free(p);

  /* NDHWC, 3-D: data (1, 4, 5, 6, 3), kernel (2, 2, 2), 5 filters -> weight (5, 2, 2, 2, 3), out (1, 3, 4, 5, 5) */
  op = mxw_op_find("Convolution");
  const char *k3[3] = {"kernel", "num_filter", "layout"}, *v3[3] = {"(2, 2, 2)", "5", "NDHWC"};
  assert_int_equal(mxw_params_create(op, 3, k3, v3, &p), 0);
  in[0] = mxw_shape_make(5, (const int64_t[]){1, 4, 5, 6, 3});
  in[1].ndim = in[2].ndim = out[0].ndim = -1;
  assert_int_equal(mxw_op_get(op)->infer_shape(p->param, 3, in, 1, out), 0);
  const mxw_shape w3 = mxw_shape_make(5, (const int64_t[]){5, 2, 2, 2, 3});
  const mxw_shape o3 = mxw_shape_make(5, (const int64_t[]){1, 3, 4, 5, 5});
  assert_true(mxw_shape_equal(&in[1], &w3));
  assert_true(mxw_shape_equal(&out[0], &o3));
  mxw_params_free(p);
}

/* ---- random shapes against the spec's formulas as plain loops (run under ASan natively, so
 * the odd sizes below also check that no path reads or writes outside its buffers) ---------- */
static uint32_t g_lcg = 12345;
static float rnd(void) {
  g_lcg = g_lcg * 1664525u + 1013904223u;
  return (float)(g_lcg >> 8) / 16777216.f * 2.f - 1.f;
}

typedef struct {
  int nsp, N, C, F, G, deconv, bias;
  int in[3], k[3], s[3], d[3], p[3], adj[3];
  int chan_last; /* run the op with layout NHWC / NDHWC (the reference stays channel-first) */
} conv_case;

/* dst (A, S, R) = src (A, R, S): between channel-first (N, C, spatial) and channel-last
 * (N, spatial, C) with R = C, S = spatial size, or back with R = spatial size, S = C. */
static void swap_axes(const float *src, float *dst, int A, int R, int S) {
  for (int a = 0; a < A; a++)
    for (int r = 0; r < R; r++)
      for (int s = 0; s < S; s++) dst[(a * S + s) * R + r] = src[(a * R + r) * S + s];
}

static void fmt_tuple(char *buf, size_t len, const int *v, int n) {
  size_t u = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < n; i++) u += (size_t)snprintf(buf + u, len - u, i ? ", %d" : "%d", v[i]);
  snprintf(buf + u, len - u, n == 1 ? ",)" : ")");
}

/* The spec formulas as loops, all dims as 3-D with leading size-1 dims:
 *   Convolution:   out[n,o,Y] = bias[o] + sum_{c',t} w[o,c',t] in[n, g*C/G + c', Y*s - p + t*d]
 *   Deconvolution: out[n, g*F/G + o', Y*s - p + t*d] += in[n,c,Y] w[c,o',t] */
static void reference(const conv_case *k, const float *x, const float *w, const float *b, const int *osz, double *out) {
  const int Cg = k->C / k->G, Fg = k->F / k->G;
  int in[3] = {1, 1, 1}, ks[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pd[3] = {0, 0, 0}, os[3] = {1, 1, 1};
  for (int i = 0; i < k->nsp; i++) {
    const int s = 3 - k->nsp + i;
    in[s] = k->in[i], ks[s] = k->k[i], st[s] = k->s[i], dl[s] = k->d[i], pd[s] = k->p[i], os[s] = osz[i];
  }
  const int isz = in[0] * in[1] * in[2], ksz = ks[0] * ks[1] * ks[2], ons = os[0] * os[1] * os[2];
  for (int i = 0; i < k->N * k->F * ons; i++) out[i] = b ? b[(i / ons) % k->F] : 0.0;
  /* conv: walk outputs (grid = output); deconv: walk inputs (grid = input) */
  const int *grid = k->deconv ? in : os, *img = k->deconv ? os : in;
  for (int n = 0; n < k->N; n++)
    for (int g = 0; g < k->G; g++)
      for (int o = 0; o < Fg; o++)
        for (int c = 0; c < Cg; c++)
          for (int z = 0; z < grid[0]; z++)
            for (int y = 0; y < grid[1]; y++)
              for (int xx = 0; xx < grid[2]; xx++)
                for (int tz = 0; tz < ks[0]; tz++)
                  for (int ty = 0; ty < ks[1]; ty++)
                    for (int tx = 0; tx < ks[2]; tx++) {
                      const int iz = z * st[0] - pd[0] + tz * dl[0], iy = y * st[1] - pd[1] + ty * dl[1],
                                ix = xx * st[2] - pd[2] + tx * dl[2];
                      if (iz < 0 || iz >= img[0] || iy < 0 || iy >= img[1] || ix < 0 || ix >= img[2]) continue;
                      const int t = (tz * ks[1] + ty) * ks[2] + tx;
                      const int gpos = (z * grid[1] + y) * grid[2] + xx, ipos = (iz * img[1] + iy) * img[2] + ix;
                      const int ci = g * Cg + c, fo = g * Fg + o;
                      if (!k->deconv)
                        out[(n * k->F + fo) * ons + gpos] +=
                            (double)w[(fo * Cg + c) * ksz + t] * x[(n * k->C + ci) * isz + ipos];
                      else
                        out[(n * k->F + fo) * ons + ipos] +=
                            (double)w[(ci * Fg + o) * ksz + t] * x[(n * k->C + ci) * isz + gpos];
                    }
}

static void run_case(const conv_case *k) {
  int32_t xs[5] = {k->N, k->C}, ws[5], bs[1] = {k->F};
  int osz[3];
  for (int i = 0; i < k->nsp; i++) {
    xs[2 + i] = k->in[i];
    const int dk = k->d[i] * (k->k[i] - 1) + 1;
    osz[i] = k->deconv ? k->s[i] * (k->in[i] - 1) + dk - 2 * k->p[i] + k->adj[i]
                       : (k->in[i] + 2 * k->p[i] - dk) / k->s[i] + 1;
  }
  ws[0] = k->deconv ? k->C : k->F;
  ws[1] = k->deconv ? k->F / k->G : k->C / k->G;
  for (int i = 0; i < k->nsp; i++) ws[2 + i] = k->k[i];
  mxw_ndarray *in[3] = {t_array(k->nsp + 2, xs, NULL), t_array(k->nsp + 2, ws, NULL), t_array(1, bs, NULL)};
  for (int a = 0; a < 3; a++) {
    float *v = (float *)mxw_ndarray_data(in[a]);
    for (int64_t i = 0; i < mxw_ndarray_size(in[a]); i++) v[i] = rnd();
  }
  /* channel-last: the op gets transposed copies of data (N, spatial, C) and weight
   * (lead, kernel, second); the reference keeps the channel-first originals */
  int isp = 1, ksp = 1, osp = 1;
  for (int i = 0; i < k->nsp; i++) isp *= k->in[i], ksp *= k->k[i], osp *= osz[i];
  mxw_ndarray *op_in[3] = {in[0], in[1], in[2]};
  if (k->chan_last) {
    int32_t xl[5] = {k->N}, wl[5] = {ws[0]};
    for (int i = 0; i < k->nsp; i++) xl[1 + i] = xs[2 + i], wl[1 + i] = ws[2 + i];
    xl[k->nsp + 1] = k->C;
    wl[k->nsp + 1] = ws[1];
    op_in[0] = t_array(k->nsp + 2, xl, NULL);
    op_in[1] = t_array(k->nsp + 2, wl, NULL);
    swap_axes((const float *)mxw_ndarray_data(in[0]), (float *)mxw_ndarray_data(op_in[0]), k->N, k->C, isp);
    swap_axes((const float *)mxw_ndarray_data(in[1]), (float *)mxw_ndarray_data(op_in[1]), ws[0], ws[1], ksp);
  }
  const char *layout = !k->chan_last ? "None" : k->nsp == 2 ? "NHWC" : "NDHWC";
  char kern[64], str[64], dil[64], pad[64], adj[64], nf[16], ng[16];
  fmt_tuple(kern, sizeof kern, k->k, k->nsp);
  fmt_tuple(str, sizeof str, k->s, k->nsp);
  fmt_tuple(dil, sizeof dil, k->d, k->nsp);
  fmt_tuple(pad, sizeof pad, k->p, k->nsp);
  fmt_tuple(adj, sizeof adj, k->adj, k->nsp);
  snprintf(nf, sizeof nf, "%d", k->F);
  snprintf(ng, sizeof ng, "%d", k->G);
  mxw_ndarray *out[1] = {NULL};
  int nout = 1, rc;
  if (k->deconv)
    rc = t_invoke("Deconvolution", op_in, k->bias ? 3 : 2, out, &nout, "kernel", kern, "stride", str, "dilate", dil,
                  "pad", pad, "adj", adj, "num_filter", nf, "num_group", ng, "no_bias", k->bias ? "False" : "True",
                  "layout", layout, NULL);
  else
    rc =
        t_invoke("Convolution", op_in, k->bias ? 3 : 2, out, &nout, "kernel", kern, "stride", str, "dilate", dil, "pad",
                 pad, "num_filter", nf, "num_group", ng, "no_bias", k->bias ? "False" : "True", "layout", layout, NULL);
  if (rc != 0) fail_msg("%s", mxw_get_last_error());
  int64_t n_out = mxw_ndarray_size(out[0]);
  double *want = (double *)malloc(sizeof(double) * (size_t)n_out);
  reference(k, (const float *)mxw_ndarray_data(in[0]), (const float *)mxw_ndarray_data(in[1]),
            k->bias ? (const float *)mxw_ndarray_data(in[2]) : NULL, osz, want);
  float *got = (float *)mxw_ndarray_data(out[0]), *got_cf = NULL;
  if (k->chan_last) { /* the output back to channel-first */
    got_cf = (float *)malloc(sizeof(float) * (size_t)n_out + 1);
    swap_axes(got, got_cf, k->N, osp, k->F);
    got = got_cf;
  }
  for (int64_t i = 0; i < n_out; i++) {
    if (!(fabs(got[i] - want[i]) <= 1e-4 * (1.0 + fabs(want[i]))))
      fail_msg("%s%s nsp %d N %d C %d F %d G %d kernel %s stride %s dilate %s pad %s: index %lld got %.7g want %.7g",
               k->deconv ? "Deconvolution" : "Convolution", k->chan_last ? " (channel-last)" : "", k->nsp, k->N, k->C,
               k->F, k->G, kern, str, dil, pad, (long long)i, got[i], want[i]);
  }
  free(got_cf);
  free(want);
  mxw_ndarray_free(out[0]);
  if (k->chan_last) {
    mxw_ndarray_free(op_in[0]);
    mxw_ndarray_free(op_in[1]);
  }
  free_all(in, 3);
}

static int rnd_int(int lo, int hi) { return lo + (int)((rnd() + 1.f) * 0.5f * (float)(hi - lo + 1)) % (hi - lo + 1); }

static void test_random_vs_loops(void **state) {
  (void)state;
  /* fixed cases for each path: depthwise (phases, SIMD blocks and tails), pointwise, the direct
   * kernel on a large image (C 32, F 3), several im2col bands (C 16, F 34 -- more filters than the
   * direct kernel takes --, 3x3, 62x70: 52 rows per 2 MiB band; deconvolution F 64, 4x4 over 50
   * columns: 10 rows per band), depthwise deconvolution */
  const conv_case fixed[] = {
      {2, 2, 5, 5, 5, 0, 1, {9, 37}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0}, 0},
      {2, 1, 3, 3, 3, 0, 1, {11, 21}, {3, 3}, {2, 3}, {1, 1}, {1, 0}, {0}, 0},
      {2, 1, 4, 4, 4, 0, 0, {13, 6}, {5, 3}, {1, 1}, {2, 1}, {4, 1}, {0}, 0},
      {1, 2, 3, 3, 3, 0, 1, {19}, {3}, {2}, {1}, {1}, {0}, 0},
      {2, 2, 6, 4, 2, 0, 1, {5, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
      {2, 1, 32, 3, 1, 0, 1, {62, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 0},
      {2, 1, 16, 34, 1, 0, 1, {62, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 0},
      {2, 1, 8, 64, 1, 1, 1, {40, 50}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 0},
      {2, 2, 3, 3, 3, 1, 0, {5, 4}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {0, 1}, 0},
      {3, 1, 4, 2, 2, 1, 1, {3, 4, 2}, {2, 3, 2}, {2, 1, 2}, {1, 2, 1}, {0, 1, 1}, {1, 0, 1}, 0},
  };
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) run_case(&fixed[i]);
  for (int iter = 0; iter < 150; iter++) {
    conv_case k;
    memset(&k, 0, sizeof k);
    k.nsp = rnd_int(1, 3);
    k.deconv = rnd_int(0, 2) == 0;
    k.bias = rnd_int(0, 1);
    k.G = rnd_int(1, 3);
    const int depthwise = rnd_int(0, 3) == 0;
    k.C = depthwise ? rnd_int(1, 6) : k.G * rnd_int(1, 3);
    k.F = depthwise ? k.C : k.G * rnd_int(1, 3);
    if (depthwise) k.G = k.C;
    k.N = rnd_int(1, 2);
    for (int i = 0; i < k.nsp; i++) {
      k.k[i] = rnd_int(1, k.nsp == 3 ? 2 : 4);
      k.s[i] = rnd_int(1, 3);
      k.d[i] = rnd_int(1, 2);
      k.in[i] = rnd_int(1, k.nsp == 3 ? 5 : 23);
      const int dk = k.d[i] * (k.k[i] - 1) + 1;
      if (k.deconv) {
        k.adj[i] = rnd_int(0, k.s[i] - 1);
        const int full = k.s[i] * (k.in[i] - 1) + dk;
        k.p[i] = rnd_int(0, (full + k.adj[i] - 1) / 2);
      } else {
        if (k.in[i] < dk) k.in[i] = dk + rnd_int(0, 3);
        k.p[i] = rnd_int(0, k.k[i] / 2 + 1);
      }
    }
    run_case(&k);
    /* the same case channel-last (2-D and 3-D: Convolution has no NWC layout) */
    if (k.nsp > 1 && iter % 3 == 0) {
      k.chan_last = 1;
      run_case(&k);
    }
  }
}

/* The float32 direct kernel (few filters per group, output rows of 4 or more) against the loops
 * on odd sizes: F = 1..9 per group (one or two blocks of up to 5 filters), C = 1..6, batch
 * 1..5, row widths around the 4- and 8-wide blocks and their overlapping ends, strides (the
 * phase-split copy), pads, dilations, groups, 1-D / 2-D / 3-D; also just past its limits (33
 * filters per group, a pointwise window with 6 filters, rows of 3) where the GEMM runs. */
static void test_direct_vs_loops(void **state) {
  (void)state;
  const conv_case fixed[] = {
      /* LeNet's two convolutions at batch 5 */
      {2, 5, 1, 5, 1, 0, 1, {28, 28}, {5, 5}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
      {2, 5, 5, 5, 1, 0, 1, {12, 12}, {5, 5}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
      /* output widths 4, 7, 8, 9, 15, 16, 17 */
      {2, 1, 3, 7, 1, 0, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
      {2, 2, 2, 9, 1, 0, 0, {4, 9}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
      {2, 1, 4, 3, 1, 0, 1, {3, 8}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
      {2, 1, 2, 6, 2, 0, 1, {6, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 0},
      {1, 3, 5, 8, 1, 0, 1, {17}, {3}, {1}, {1}, {0}, {0}, 0},
      {1, 2, 4, 4, 2, 0, 1, {16}, {3}, {1}, {1}, {1}, {0}, 0},
      {1, 1, 6, 5, 1, 0, 0, {33}, {7}, {2}, {1}, {3}, {0}, 0},
      /* stride 3 and dilation 2 with padding, 3-D */
      {2, 2, 3, 4, 1, 0, 1, {13, 29}, {3, 4}, {2, 3}, {2, 1}, {2, 1}, {0}, 0},
      {3, 2, 2, 6, 2, 0, 1, {3, 5, 10}, {2, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {0}, 0},
      /* past the limits: 33 filters, pointwise 6 and 5 filters, rows of 3 */
      {2, 1, 2, 33, 1, 0, 1, {5, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 0},
      {2, 2, 5, 6, 1, 0, 1, {4, 9}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
      {2, 2, 5, 5, 1, 0, 1, {4, 9}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
      {2, 2, 3, 5, 1, 0, 1, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
      /* channel-last through the direct kernel */
      {2, 3, 3, 7, 1, 0, 1, {9, 13}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, {0}, 1},
  };
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) run_case(&fixed[i]);
  for (int iter = 0; iter < 300; iter++) {
    conv_case k;
    memset(&k, 0, sizeof k);
    k.nsp = iter % 7 == 0 ? 3 : iter % 3 == 0 ? 1 : 2;
    k.G = rnd_int(1, 3) == 3 ? rnd_int(2, 3) : 1;
    k.C = k.G * rnd_int(1, 6 / k.G > 0 ? 6 / k.G : 1);
    k.F = k.G * rnd_int(1, 9);
    k.N = rnd_int(1, 5);
    k.bias = rnd_int(0, 1);
    for (int i = 0; i < k.nsp; i++) {
      const int last = i == k.nsp - 1;
      k.k[i] = rnd_int(1, k.nsp == 3 ? 3 : 5);
      k.s[i] = rnd_int(1, 3);
      k.d[i] = rnd_int(1, 2);
      k.p[i] = rnd_int(0, (k.k[i] + 1) / 2);
      const int dk = k.d[i] * (k.k[i] - 1) + 1;
      /* the row (last dim): 2..24 outputs, so mostly >= 4 (the direct kernel) and a few below */
      const int want_out = last ? rnd_int(2, 24) : rnd_int(1, k.nsp == 3 ? 3 : 6);
      k.in[i] = (want_out - 1) * k.s[i] + dk - 2 * k.p[i] + rnd_int(0, k.s[i] - 1);
      if (k.in[i] < 1) k.in[i] = 1;
      if (k.in[i] + 2 * k.p[i] < dk) k.p[i] = (dk - k.in[i] + 1) / 2;
    }
    k.chan_last = k.nsp > 1 && iter % 4 == 1;
    run_case(&k);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_hand_worked),      cmocka_unit_test(test_conv_float64),
      cmocka_unit_test(test_conv_two_filters),      cmocka_unit_test(test_conv_grouped),
      cmocka_unit_test(test_conv_1d_dilated),       cmocka_unit_test(test_conv_infer_fills_weight),
      cmocka_unit_test(test_conv_errors),           cmocka_unit_test(test_deconv_hand_worked),
      cmocka_unit_test(test_deconv_stride_pad_adj), cmocka_unit_test(test_upsampling_nearest),
      cmocka_unit_test(test_upsampling_bilinear),   cmocka_unit_test(test_upsampling_var_init),
      cmocka_unit_test(test_random_vs_loops),       cmocka_unit_test(test_conv_nhwc),
      cmocka_unit_test(test_deconv_nhwc),           cmocka_unit_test(test_conv_infer_channel_last),
      cmocka_unit_test(test_direct_vs_loops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
