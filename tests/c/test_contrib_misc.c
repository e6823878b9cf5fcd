/* The misc contrib, attention and spatial ops (csrc/ops/contrib_misc.c, contrib_attention.c,
 * spatial.c) natively under ASan/UBSan: every forward and `_backward_*` kernel on edge shapes
 * (outputs larger or smaller than the input, sizes 1 and 0, sample points far outside the image,
 * NaN and infinite grids / offsets) with hand-worked values where they are short. The values at
 * scale are checked by tests/js/contrib_misc.test.mjs, contrib_attention.test.mjs and
 * spatial.test.mjs against float64 references, TF.js and finite differences. */
#include "mxw_test.h"

#define RUN(name, ins, nin, outs, nout, ...)                                                         \
  do {                                                                                               \
    int n_ = (nout);                                                                                 \
    if (t_invoke(name, ins, nin, outs, &n_, __VA_ARGS__) != 0) fail_msg("%s", mxw_get_last_error()); \
  } while (0)

/* A float32 array filled with a deterministic pattern in [-1, 1] (or `v` everywhere when fill). */
static mxw_ndarray *pattern(int ndim, const int32_t *shape, unsigned seed) {
  mxw_ndarray *a = t_array(ndim, shape, NULL);
  float *p = (float *)mxw_ndarray_data(a);
  unsigned s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < mxw_ndarray_size(a); i++) {
    s = s * 1103515245u + 12345u;
    p[i] = (float)((s >> 8) & 0xffff) / 32768.f - 1.f;
  }
  return a;
}
static mxw_ndarray *filled(int ndim, const int32_t *shape, float v) {
  mxw_ndarray *a = t_array(ndim, shape, NULL);
  float *p = (float *)mxw_ndarray_data(a);
  for (int64_t i = 0; i < mxw_ndarray_size(a); i++) p[i] = v;
  return a;
}
static void free_all(mxw_ndarray **a, int n) {
  for (int i = 0; i < n; i++)
    if (a[i]) mxw_ndarray_free(a[i]), a[i] = NULL;
}
static const float *f32(const mxw_ndarray *a) { return (const float *)mxw_ndarray_data((mxw_ndarray *)a); }

static void test_adaptive_pooling(void **state) {
  (void)state;
  /* 1x1x3x3 of 0..8 to 2x2: windows rows/cols [0, 2) and [1, 3) */
  const int32_t s[4] = {1, 1, 3, 3};
  const float v[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  mxw_ndarray *x = t_array(4, s, v), *in[2] = {x, NULL}, *out[1] = {NULL};
  RUN("_contrib_AdaptiveAvgPooling2D", in, 1, out, 1, "output_size", "2", NULL);
  t_expect_f32(out[0], (const float[]){2, 3, 5, 6}, 4, 1e-6);
  /* its gradient from ograd 1, 2, 3, 4 */
  mxw_ndarray *og = t_array(4, (const int32_t[]){1, 1, 2, 2}, (const float[]){1, 2, 3, 4}), *bin[2] = {og, x},
              *g[1] = {NULL};
  RUN("_backward_contrib_AdaptiveAvgPooling2D", bin, 2, g, 1, "output_size", "2", NULL);
  t_expect_f32(g[0], (const float[]){0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1}, 9, 1e-6);
  free_all(out, 1);
  free_all(g, 1);
  mxw_ndarray_free(og);
  /* larger than the input, and a zero-sized output */
  const char *sizes[] = {"(7, 5)", "(1, 9)", "(0, 3)"};
  for (int k = 0; k < 3; k++) {
    RUN("_contrib_AdaptiveAvgPooling2D", in, 1, out, 1, "output_size", sizes[k], NULL);
    mxw_ndarray *o = out[0], *bi[2] = {o, x};
    RUN("_backward_contrib_AdaptiveAvgPooling2D", bi, 2, g, 1, "output_size", sizes[k], NULL);
    t_expect_shape(g[0], 4, s);
    free_all(out, 1);
    free_all(g, 1);
  }
  mxw_ndarray_free(x);
}

static void test_bilinear_resize(void **state) {
  (void)state;
  const int32_t s[4] = {2, 3, 5, 4};
  mxw_ndarray *x = pattern(4, s, 1), *in[2] = {x, NULL}, *out[2] = {NULL, NULL}, *g[2] = {NULL, NULL};
  static const char *const modes[][6] = {{"height", "9", "width", "2", "align_corners", "True"},
                                         {"height", "1", "width", "1", "align_corners", "False"},
                                         {"height", "5", "width", "4", "align_corners", "True"},
                                         {"mode", "to_even_down", "align_corners", "False", NULL, NULL},
                                         {"mode", "odd_scale", "scale_height", "0.1", "scale_width", "3"},
                                         {"mode", "to_odd_up", NULL, NULL, NULL, NULL}};
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    const char *const *a = modes[m];
    if (t_invoke("_contrib_BilinearResize2D", in, 1, out, &(int){1}, a[0], a[1], a[2], a[3], a[4], a[5], NULL) != 0)
      fail_msg("mode %zu: %s", m, mxw_get_last_error());
    mxw_ndarray *bi[2] = {out[0], x};
    if (t_invoke("_backward_contrib_BilinearResize2D", bi, 2, g, &(int){1}, a[0], a[1], a[2], a[3], a[4], a[5], NULL) !=
        0)
      fail_msg("backward %zu: %s", m, mxw_get_last_error());
    t_expect_shape(g[0], 4, s);
    free_all(out, 1);
    free_all(g, 1);
  }
  /* like: the second output is zero */
  const int32_t ls[4] = {1, 1, 7, 3};
  mxw_ndarray *like = filled(4, ls, 1), *lin[2] = {x, like};
  RUN("_contrib_BilinearResize2D", lin, 2, out, 1, "mode", "like", NULL);
  mxw_ndarray *bi[3] = {out[0], x, like};
  RUN("_backward_contrib_BilinearResize2D", bi, 3, g, 2, "mode", "like", NULL);
  t_expect_shape(g[1], 4, ls);
  for (int i = 0; i < 21; i++) assert_true(f32(g[1])[i] == 0);
  free_all(out, 1);
  free_all(g, 2);
  /* 2x2 to 3x3 (align_corners: corners kept, midpoints between), and a 1-pixel source to 3x2 */
  mxw_ndarray *two = t_array(4, (const int32_t[]){1, 1, 2, 2}, (const float[]){1, 2, 3, 4}), *tin[1] = {two};
  RUN("_contrib_BilinearResize2D", tin, 1, out, 1, "height", "3", "width", "3", NULL);
  t_expect_f32(out[0], (const float[]){1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}, 9, 1e-6);
  free_all(out, 1);
  mxw_ndarray *one = filled(4, (const int32_t[]){1, 1, 1, 1}, 5), *oin[1] = {one};
  RUN("_contrib_BilinearResize2D", oin, 1, out, 1, "height", "3", "width", "2", "align_corners", "False", NULL);
  for (int i = 0; i < 6; i++) assert_true(f32(out[0])[i] == 5);
  free_all(out, 1);
  mxw_ndarray_free(two);
  mxw_ndarray_free(one);
  mxw_ndarray_free(like);
  mxw_ndarray_free(x);
}

static void test_broadcast_shape_size_range(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(3, (const int32_t[]){1, 2, 1}, (const float[]){1, 2}), *in[1] = {x}, *out[1] = {NULL};
  RUN("broadcast_axes", in, 1, out, 1, "axis", "(0, 2)", "size", "(2, 3)", NULL);
  t_expect_f32(out[0], (const float[]){1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}, 12, 0);
  free_all(out, 1);
  RUN("broadcast_axis", in, 1, out, 1, "axis", "0", "size", "0", NULL);
  assert_int_equal(mxw_ndarray_size(out[0]), 0);
  free_all(out, 1);
  RUN("shape_array", in, 1, out, 1, NULL);
  assert_int_equal(mxw_ndarray_dtype(out[0]), MXW_INT64);
  const int64_t *sh = (const int64_t *)mxw_ndarray_data(out[0]);
  assert_true(sh[0] == 1 && sh[1] == 2 && sh[2] == 1);
  free_all(out, 1);
  RUN("size_array", in, 1, out, 1, NULL);
  assert_true(((const int64_t *)mxw_ndarray_data(out[0]))[0] == 2);
  free_all(out, 1);
  RUN("_contrib_arange_like", in, 1, out, 1, "start", "3", "step", "-2", NULL);
  t_expect_f32(out[0], (const float[]){3, 1}, 2, 0);
  free_all(out, 1);
  RUN("_contrib_div_sqrt_dim", in, 1, out, 1, NULL);
  t_expect_f32(out[0], (const float[]){1, 2}, 2, 0);
  free_all(out, 1);
  mxw_ndarray_free(x);
}

static void test_erfinv(void **state) {
  (void)state;
  const double v[7] = {0, 0.5, -0.5, 0.999999, -1, 1, 2};
  mxw_ndarray *x = t_array_f64(1, (const int32_t[]){7}, v), *in[1] = {x}, *out[1] = {NULL};
  RUN("erfinv", in, 1, out, 1, NULL);
  const double *y = (const double *)mxw_ndarray_data(out[0]);
  assert_true(y[0] == 0);
  assert_close(y[1], 0.476936276204469873, 1e-15);
  assert_close(y[2], -0.476936276204469873, 1e-15);
  assert_close(y[3], 3.45891073727549877753, 1e-14);
  assert_true(isinf(y[4]) && y[4] < 0 && isinf(y[5]) && y[5] > 0 && isnan(y[6]));
  /* erf(erfinv(x)) == x across (-1, 1) */
  for (int i = -999; i <= 999; i += 7) {
    const double a = i / 1000.0;
    mxw_ndarray *xi = t_array_f64(1, (const int32_t[]){1}, &a), *ii[1] = {xi}, *oi[1] = {NULL};
    RUN("erfinv", ii, 1, oi, 1, NULL);
    assert_close(erf(((const double *)mxw_ndarray_data(oi[0]))[0]), a, 1e-15);
    mxw_ndarray_free(xi);
    free_all(oi, 1);
  }
  free_all(out, 1);
  mxw_ndarray_free(x);
}

static void test_attention(void **state) {
  (void)state;
  const int32_t T = 5, S = 2, H = 3, D = 4;
  mxw_ndarray *qkv = pattern(3, (const int32_t[]){T, S, 3 * H * D}, 2), *in[1] = {qkv}, *att[1] = {NULL};
  RUN("_contrib_interleaved_matmul_selfatt_qk", in, 1, att, 1, "heads", "3", NULL);
  t_expect_shape(att[0], 3, (const int32_t[]){S * H, T, T});
  /* score (b = 1: sequence 0, head 1; rows 2 and 4) by hand */
  const float *q = f32(qkv);
  double dot = 0;
  for (int d = 0; d < D; d++)
    dot += q[(2 * S + 0) * 3 * H * D + 1 * 3 * D + d] * q[(4 * S + 0) * 3 * H * D + 1 * 3 * D + D + d];
  assert_close(f32(att[0])[(1 * T + 2) * T + 4], dot / 2.0, 1e-5);
  mxw_ndarray *vin[2] = {qkv, att[0]}, *out[1] = {NULL};
  RUN("_contrib_interleaved_matmul_selfatt_valatt", vin, 2, out, 1, "heads", "3", NULL);
  mxw_ndarray *b1[2] = {att[0], qkv}, *g1[1] = {NULL};
  RUN("_backward_interleaved_matmul_selfatt_qk", b1, 2, g1, 1, "heads", "3", NULL);
  mxw_ndarray *b2[3] = {out[0], qkv, att[0]}, *g2[2] = {NULL, NULL};
  RUN("_backward_interleaved_matmul_selfatt_valatt", b2, 3, g2, 2, "heads", "3", NULL);
  free_all(g1, 1);
  free_all(g2, 2);
  free_all(out, 1);
  free_all(att, 1);
  /* encdec with Tk != Tq */
  mxw_ndarray *qq = pattern(3, (const int32_t[]){T, S, H * D}, 3),
              *kv = pattern(3, (const int32_t[]){T + 2, S, 2 * H * D}, 4);
  mxw_ndarray *ein[2] = {qq, kv};
  RUN("_contrib_interleaved_matmul_encdec_qk", ein, 2, att, 1, "heads", "3", NULL);
  t_expect_shape(att[0], 3, (const int32_t[]){S * H, T, T + 2});
  mxw_ndarray *e2[2] = {kv, att[0]};
  RUN("_contrib_interleaved_matmul_encdec_valatt", e2, 2, out, 1, "heads", "3", NULL);
  t_expect_shape(out[0], 3, (const int32_t[]){T, S, H * D});
  mxw_ndarray *b3[3] = {att[0], qq, kv}, *b4[3] = {out[0], kv, att[0]};
  RUN("_backward_interleaved_matmul_encdec_qk", b3, 3, g2, 2, "heads", "3", NULL);
  free_all(g2, 2);
  RUN("_backward_interleaved_matmul_encdec_valatt", b4, 3, g2, 2, "heads", "3", NULL);
  free_all(g2, 2);
  free_all(out, 1);
  free_all(att, 1);
  mxw_ndarray_free(qq);
  mxw_ndarray_free(kv);
  mxw_ndarray_free(qkv);
}

static void test_samplers(void **state) {
  (void)state;
  /* grids far outside, NaN and inf: zeros, no reads out of bounds */
  const int32_t ds[4] = {2, 3, 4, 5}, gs[4] = {2, 2, 3, 3};
  mxw_ndarray *data = pattern(4, ds, 5), *grid = pattern(4, gs, 6);
  float *gp = (float *)mxw_ndarray_data(grid);
  gp[0] = NAN;
  gp[1] = INFINITY;
  gp[2] = -1e30f;
  gp[3] = 1.0f; /* x = 1 exactly: the last column */
  gp[9] = 3.f;
  gp[10] = -3.f;
  mxw_ndarray *in[2] = {data, grid}, *out[2] = {NULL, NULL};
  RUN("BilinearSampler", in, 2, out, 2, NULL);
  t_expect_shape(out[0], 4, (const int32_t[]){2, 3, 3, 3});
  assert_true(f32(out[0])[0] == 0 && f32(out[0])[1] == 0 && f32(out[0])[2] == 0);
  mxw_ndarray *bin[3] = {out[0], data, grid}, *g[2] = {NULL, NULL};
  RUN("_backward_BilinearSampler", bin, 3, g, 2, NULL);
  assert_true(f32(g[1])[0] == 0 && f32(g[1])[1] == 0);
  free_all(g, 2);
  free_all(out, 2);
  /* GridGenerator both ways and its gradients; SpatialTransformer and its gradient */
  mxw_ndarray *theta = pattern(2, (const int32_t[]){2, 6}, 7), *tin[1] = {theta};
  RUN("GridGenerator", tin, 1, out, 2, "transform_type", "affine", "target_shape", "(3, 4)", NULL);
  t_expect_shape(out[1], 2, (const int32_t[]){3, 12});
  mxw_ndarray *gb[2] = {out[0], out[1]};
  RUN("_backward_GridGenerator", gb, 2, g, 1, "transform_type", "affine", "target_shape", "(3, 4)", NULL);
  t_expect_shape(g[0], 2, (const int32_t[]){2, 6});
  free_all(g, 1);
  free_all(out, 2);
  mxw_ndarray *flow = pattern(4, (const int32_t[]){1, 2, 3, 1}, 8), *fin[1] = {flow};
  RUN("GridGenerator", fin, 1, out, 2, "transform_type", "warp", NULL);
  mxw_ndarray *wb[1] = {out[0]};
  RUN("_backward_GridGenerator", wb, 1, g, 1, "transform_type", "warp", NULL);
  free_all(g, 1);
  free_all(out, 2);
  mxw_ndarray *sin[2] = {data, theta}, *so[3] = {NULL, NULL, NULL};
  RUN("SpatialTransformer", sin, 2, so, 3, "target_shape", "(2, 7)", "transform_type", "affine", "sampler_type",
      "bilinear", NULL);
  mxw_ndarray *sb[4] = {so[0], data, so[1], so[2]};
  RUN("_backward_SpatialTransformer", sb, 4, g, 2, "target_shape", "(2, 7)", "transform_type", "affine", "sampler_type",
      "bilinear", NULL);
  t_expect_shape(g[1], 2, (const int32_t[]){2, 6});
  free_all(g, 2);
  free_all(so, 3);
  mxw_ndarray_free(flow);
  mxw_ndarray_free(theta);
  mxw_ndarray_free(grid);
  mxw_ndarray_free(data);
}

static void test_deformable_convolution(void **state) {
  (void)state;
  /* offsets scattered far outside the image, NaN and inf, with groups, strides and dilation */
  const int32_t ds[4] = {2, 4, 5, 6}, os[4] = {2, 2 * 2 * 6, 3, 2}, ws[4] = {6, 2, 2, 3};
  mxw_ndarray *data = pattern(4, ds, 9), *off = pattern(4, os, 10), *w = pattern(4, ws, 11),
              *b = pattern(1, (const int32_t[]){6}, 12);
  float *o = (float *)mxw_ndarray_data(off);
  for (int64_t i = 0; i < mxw_ndarray_size(off); i++) o[i] *= (i % 7 == 0) ? 40.f : 3.f;
  o[0] = NAN;
  o[1] = INFINITY;
  o[2] = -INFINITY;
  o[5] = 4.9999f;
  mxw_ndarray *in[4] = {data, off, w, b}, *out[1] = {NULL}, *g[4] = {NULL, NULL, NULL, NULL};
#define DCN_ATTRS                                                                                                   \
  "kernel", "(2, 3)", "stride", "(2, 1)", "pad", "(1, 0)", "dilate", "(1, 2)", "num_filter", "6", "num_group", "2", \
      "num_deformable_group", "2"
  RUN("_contrib_DeformableConvolution", in, 4, out, 1, DCN_ATTRS, NULL);
  t_expect_shape(out[0], 4, (const int32_t[]){2, 6, 3, 2});
  for (int64_t i = 0; i < mxw_ndarray_size(out[0]); i++) assert_false(isinf(f32(out[0])[i]));
  mxw_ndarray *bin[4] = {out[0], data, off, w};
  RUN("_backward__contrib_DeformableConvolution", bin, 4, g, 4, DCN_ATTRS, NULL);
  t_expect_shape(g[1], 4, os);
  t_expect_shape(g[2], 4, ws);
  free_all(g, 4);
  free_all(out, 1);
  /* 1x1 image, 1x1 kernel: the last-row rule (a point in [0, 1) reads pixel 0) */
  mxw_ndarray *px = filled(4, (const int32_t[]){1, 1, 1, 1}, 3), *po = filled(4, (const int32_t[]){1, 2, 1, 1}, 0.5f);
  mxw_ndarray *pw = filled(4, (const int32_t[]){1, 1, 1, 1}, 2), *pin[3] = {px, po, pw};
  RUN("_contrib_DeformableConvolution", pin, 3, out, 1, "kernel", "(1, 1)", "num_filter", "1", "no_bias", "True", NULL);
  assert_close(f32(out[0])[0], 6, 0);
  free_all(out, 1);
  mxw_ndarray_free(px);
  mxw_ndarray_free(po);
  mxw_ndarray_free(pw);
  mxw_ndarray_free(data);
  mxw_ndarray_free(off);
  mxw_ndarray_free(w);
  mxw_ndarray_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_adaptive_pooling),
      cmocka_unit_test(test_bilinear_resize),
      cmocka_unit_test(test_broadcast_shape_size_range),
      cmocka_unit_test(test_erfinv),
      cmocka_unit_test(test_attention),
      cmocka_unit_test(test_samplers),
      cmocka_unit_test(test_deformable_convolution),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
