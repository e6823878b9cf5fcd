/* The detection operators (csrc/ops/contrib_bbox.c, contrib_multibox.c, contrib_roi.c) under
 * ASan/UBSan: hand-worked values from MXNet 1.9.1's documentation examples, every kernel path
 * (float32, float64, float16 through float32, the backward ops called directly) and random inputs
 * with rois partly or wholly outside the feature map. The JS tests (tests/js/contrib_*.test.mjs)
 * compare the values with references on larger inputs. */
#include "mxw_test.h"

static uint32_t g_seed = 12345;
static float t_rand(void) { /* [0, 1) */
  g_seed = g_seed * 1664525u + 1013904223u;
  return (float)(g_seed >> 8) / 16777216.0f;
}
static mxw_ndarray *t_random(int ndim, const int32_t *shape, int dtype, float lo, float hi) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  const int64_t n = mxw_ndarray_size(a);
  for (int64_t i = 0; i < n; i++) mxw_store_f64(mxw_ndarray_data(a), dtype, i, lo + (hi - lo) * t_rand());
  return a;
}
static void t_free_all(mxw_ndarray **a, int n) {
  for (int i = 0; i < n; i++) {
    mxw_ndarray_free(a[i]);
    a[i] = NULL;
  }
}

static void test_box_nms_doc_example(void **state) {
  (void)state;
  /* MXNet's box_nms docstring: overlap_thresh 0.1, id_index 0, force_suppress */
  mxw_ndarray *x =
      t_array(2, (int32_t[]){4, 6}, (float[]){0, 0.5f, 0.1f, 0.1f, 0.2f,  0.2f,  1, 0.4f, 0.1f, 0.1f, 0.2f, 0.2f,
                                              0, 0.3f, 0.1f, 0.1f, 0.14f, 0.14f, 2, 0.6f, 0.5f, 0.5f, 0.7f, 0.8f});
  mxw_ndarray *y[2] = {NULL, NULL};
  int nout = 2;
  assert_int_equal(t_invoke("_contrib_box_nms", &x, 1, y, &nout, "overlap_thresh", "0.1", "id_index", "0",
                            "force_suppress", "True", NULL),
                   0);
  t_expect_f32(y[0], (float[]){2,  0.6f, 0.5f, 0.5f, 0.7f, 0.8f, 0,  0.5f, 0.1f, 0.1f, 0.2f, 0.2f,
                               -1, -1,   -1,   -1,   -1,   -1,   -1, -1,   -1,   -1,   -1,   -1},
               24, 1e-6);
  t_expect_shape(y[1], 2, (int32_t[]){4, 1});
  t_expect_f32(y[1], (float[]){3, 0, -1, -1}, 4, 0); /* the record: source rows */
  /* the gradient: out_grad rows back at their source rows (MXNet's docstring in_grad) */
  mxw_ndarray *g = t_array(2, (int32_t[]){4, 6}, NULL);
  float *gp = (float *)mxw_ndarray_data(g);
  for (int i = 0; i < 24; i++) {
    const int row = i / 6;
    gp[i] = 0.1f * (float)(row + 1);
  }
  mxw_ndarray *bin[2] = {g, y[1]}, *dx[1] = {NULL};
  nout = 1;
  assert_int_equal(t_invoke("_backward_contrib_box_nms", bin, 2, dx, &nout, "overlap_thresh", "0.1", "id_index", "0",
                            "force_suppress", "True", NULL),
                   0);
  t_expect_f32(dx[0], (float[]){0.2f, 0.2f, 0.2f, 0.2f, 0.2f, 0.2f, 0,    0,    0,    0,    0,    0,
                                0,    0,    0,    0,    0,    0,    0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f},
               24, 1e-6);
  mxw_ndarray_free(dx[0]);
  mxw_ndarray_free(g);
  t_free_all(y, 2);
  /* the alias, the center format and a bad coordinate range */
  nout = 2;
  assert_int_equal(t_invoke("_contrib_box_non_maximum_suppression", &x, 1, y, &nout, "out_format", "center", NULL), 0);
  t_free_all(y, 2);
  assert_int_equal(t_invoke("_contrib_box_nms", &x, 1, y, &nout, "score_index", "3", NULL), -1);
  assert_error_contains("conflict with coordinates");
  mxw_ndarray_free(x);
}

static void test_box_nms_random(void **state) {
  (void)state;
  const int dtypes[3] = {MXW_FLOAT32, MXW_FLOAT64, MXW_FLOAT16};
  for (int t = 0; t < 12; t++) {
    const int dt = dtypes[t % 3];
    mxw_ndarray *x = t_random(3, (int32_t[]){1 + t % 3, 5 + t, 6}, dt, 0, 3);
    mxw_ndarray *y[2] = {NULL, NULL};
    int nout = 2;
    char topk[8];
    snprintf(topk, sizeof topk, "%d", t % 4 - 1);
    assert_int_equal(t_invoke("_contrib_box_nms", &x, 1, y, &nout, "topk", topk, "id_index", t % 2 ? "0" : "-1",
                              "valid_thresh", "0.3", "in_format", t % 3 ? "corner" : "center", NULL),
                     0);
    t_free_all(y, 2);
    mxw_ndarray_free(x);
  }
}

static void test_box_iou_matching_encode_decode(void **state) {
  (void)state;
  mxw_ndarray *in[6] = {t_array(2, (int32_t[]){2, 4}, (float[]){0.5f, 0.5f, 1, 1, 0, 0, 0.5f, 0.5f}),
                        t_array(2, (int32_t[]){1, 4}, (float[]){0.25f, 0.25f, 0.75f, 0.75f})};
  mxw_ndarray *y[2] = {NULL, NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_contrib_box_iou", in, 2, y, &nout, NULL), 0);
  t_expect_f32(y[0], (float[]){1 / 7.0f, 1 / 7.0f}, 2, 1e-6);
  t_free_all(y, 1);
  t_free_all(in, 2);
  /* bipartite_matching's docstring example */
  in[0] = t_array(2, (int32_t[]){3, 2}, (float[]){0.5f, 0.6f, 0.1f, 0.2f, 0.3f, 0.4f});
  nout = 2;
  assert_int_equal(t_invoke("_contrib_bipartite_matching", in, 1, y, &nout, "threshold", "1e-12", NULL), 0);
  t_expect_f32(y[0], (float[]){1, -1, 0}, 3, 0);
  t_expect_f32(y[1], (float[]){2, 0}, 2, 0);
  t_free_all(y, 2);
  t_free_all(in, 1);
  /* box_encode: a positive sample matched to itself encodes to 0 */
  in[0] = t_array(2, (int32_t[]){1, 2}, (float[]){0, 1});
  in[1] = t_array(2, (int32_t[]){1, 2}, (float[]){0, 1});
  in[2] = t_array(3, (int32_t[]){1, 2, 4}, (float[]){0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f});
  in[3] = t_array(3, (int32_t[]){1, 2, 4}, (float[]){0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f});
  in[4] = t_array(1, (int32_t[]){4}, (float[]){0, 0, 0, 0});
  in[5] = t_array(1, (int32_t[]){4}, (float[]){0.1f, 0.1f, 0.2f, 0.2f});
  nout = 2;
  assert_int_equal(t_invoke("_contrib_box_encode", in, 6, y, &nout, NULL), 0);
  t_expect_f32(y[0], (float[]){0, 0, 0, 0, 0, 0, 0, 0}, 8, 1e-6);
  t_expect_f32(y[1], (float[]){0, 0, 0, 0, 1, 1, 1, 1}, 8, 0);
  t_free_all(y, 2);
  /* a positive sample matched past the references is an error (MXNet reads out of bounds) */
  ((float *)mxw_ndarray_data(in[1]))[1] = 2;
  assert_int_equal(t_invoke("_contrib_box_encode", in, 6, y, &nout, NULL), -1);
  assert_error_contains("out of range");
  /* box_decode's test values (center anchors, stds 0.1, 0.1, 0.2, 0.2) */
  mxw_ndarray *d[2] = {in[2], in[3]};
  nout = 1;
  assert_int_equal(
      t_invoke("_contrib_box_decode", d, 2, y, &nout, "std0", "0.1", "std1", "0.1", "std2", "0.2", "std3", "0.2", NULL),
      0);
  t_expect_f32(
      y[0],
      (float[]){-0.0562755f, -0.00865743f, 0.26227552f, 0.42465743f, 0.13240421f, 0.17859563f, 0.93759584f, 1.1174043f},
      8, 1e-5);
  t_free_all(y, 1);
  t_free_all(in, 6);
}

static void test_multibox(void **state) {
  (void)state;
  /* one 1 x 1 cell, size 0.5, ratio 1: the box [0.25, 0.25, 0.75, 0.75]; clipped second size 1.5 */
  mxw_ndarray *x = t_array(4, (int32_t[]){1, 1, 1, 1}, (float[]){0});
  mxw_ndarray *y[3] = {NULL, NULL, NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_contrib_MultiBoxPrior", &x, 1, y, &nout, "sizes", "(0.5, 1.5)", "clip", "True", NULL), 0);
  t_expect_f32(y[0], (float[]){0.25f, 0.25f, 0.75f, 0.75f, 0, 0, 1, 1}, 8, 1e-6);
  mxw_ndarray *anchors = y[0];
  mxw_ndarray_free(x);
  /* MultiBoxDetection over those 2 anchors, 3 classes; anchor 1 below threshold */
  mxw_ndarray *in[3] = {t_array(3, (int32_t[]){1, 3, 2}, (float[]){0.2f, 0.995f, 0.7f, 0.004f, 0.1f, 0.001f}),
                        t_array(2, (int32_t[]){1, 8}, (float[]){0, 0, 0, 0, 0, 0, 0, 0}), anchors};
  y[0] = NULL;
  assert_int_equal(t_invoke("_contrib_MultiBoxDetection", in, 3, y, &nout, NULL), 0);
  t_expect_f32(y[0], (float[]){0, 0.7f, 0.25f, 0.25f, 0.75f, 0.75f, -1, -1, -1, -1, -1, -1}, 12, 1e-6);
  t_free_all(y, 1);
  /* MultiBoxTarget: one ground truth equal to anchor 0 */
  mxw_ndarray *tin[3] = {anchors, t_array(3, (int32_t[]){1, 1, 5}, (float[]){2, 0.25f, 0.25f, 0.75f, 0.75f}),
                         t_array(3, (int32_t[]){1, 3, 2}, (float[]){0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f})};
  nout = 3;
  assert_int_equal(t_invoke("_contrib_MultiBoxTarget", tin, 3, y, &nout, NULL), 0);
  t_expect_f32(y[0], (float[]){0, 0, 0, 0, 0, 0, 0, 0}, 8, 1e-6);
  t_expect_f32(y[1], (float[]){1, 1, 1, 1, 0, 0, 0, 0}, 8, 0);
  t_expect_f32(y[2], (float[]){3, 0}, 2, 0);
  t_free_all(y, 3);
  assert_int_equal(t_invoke("_contrib_MultiBoxTarget", tin, 3, y, &nout, "negative_mining_ratio", "3", NULL), 0);
  t_free_all(y, 3);
  t_free_all(in, 3);
  mxw_ndarray_free(tin[1]);
  mxw_ndarray_free(tin[2]);
  /* random float64 / float16 runs */
  for (int t = 0; t < 4; t++) {
    const int dt = t % 2 ? MXW_FLOAT16 : MXW_FLOAT64;
    mxw_ndarray *c[3] = {t_random(3, (int32_t[]){2, 4, 9}, dt, 0, 1), t_random(2, (int32_t[]){2, 36}, dt, -1, 1),
                         t_random(3, (int32_t[]){1, 9, 4}, dt, 0, 1)};
    nout = 1;
    assert_int_equal(t_invoke("_contrib_MultiBoxDetection", c, 3, y, &nout, "nms_topk", "4", NULL), 0);
    t_free_all(y, 1);
    mxw_ndarray *lab = t_random(3, (int32_t[]){2, 3, 5}, dt, 0, 1);
    mxw_ndarray *tt[3] = {c[2], lab, c[0]};
    nout = 3;
    assert_int_equal(t_invoke("_contrib_MultiBoxTarget", tt, 3, y, &nout, "negative_mining_ratio", "2",
                              "overlap_threshold", "0.1", NULL),
                     0);
    t_free_all(y, 3);
    mxw_ndarray_free(lab);
    t_free_all(c, 3);
  }
}

static void test_roi_ops(void **state) {
  (void)state;
  /* ROIPooling's docstring example: (1, 1, 8, 6) of 0..47, roi [0, 0, 0, 4, 4], (2, 2) */
  mxw_ndarray *x = t_array(4, (int32_t[]){1, 1, 8, 6}, NULL);
  for (int i = 0; i < 48; i++) ((float *)mxw_ndarray_data(x))[i] = (float)i;
  mxw_ndarray *in[3] = {x, t_array(2, (int32_t[]){1, 5}, (float[]){0, 0, 0, 4, 4})};
  mxw_ndarray *y[2] = {NULL, NULL};
  int nout = 2;
  assert_int_equal(t_invoke("ROIPooling", in, 2, y, &nout, "pooled_size", "(2, 2)", "spatial_scale", "1.0", NULL), 0);
  t_expect_f32(y[0], (float[]){14, 16, 26, 28}, 4, 0);
  assert_int_equal(mxw_ndarray_dtype(y[1]), MXW_INT32);
  const int32_t *arg = (const int32_t *)mxw_ndarray_data(y[1]);
  assert_int_equal(arg[0], 14);
  assert_int_equal(arg[3], 28);
  /* its gradient: 1 at each argmax */
  mxw_ndarray *og = t_array(4, (int32_t[]){1, 1, 2, 2}, (float[]){1, 2, 3, 4});
  mxw_ndarray *bin[3] = {og, y[1], x}, *dx[1] = {NULL};
  nout = 1;
  assert_int_equal(
      t_invoke("_backward_ROIPooling", bin, 3, dx, &nout, "pooled_size", "(2, 2)", "spatial_scale", "1.0", NULL), 0);
  const float *g = (const float *)mxw_ndarray_data(dx[0]);
  assert_close(g[14], 1, 0);
  assert_close(g[28], 4, 0);
  t_free_all(dx, 1);
  mxw_ndarray_free(og);
  t_free_all(y, 2);
  t_free_all(in, 2);
  /* ROIAlign: (1, 1, 2, 2) [[0, 1], [2, 3]], roi [0, 0, 0, 1, 1], one sample at (0.5, 0.5): 1.5;
   * PSROIPooling of the same: the mean over [0, 2) x [0, 2) = 1.5 */
  in[0] = t_array(4, (int32_t[]){1, 1, 2, 2}, (float[]){0, 1, 2, 3});
  in[1] = t_array(2, (int32_t[]){1, 5}, (float[]){0, 0, 0, 1, 1});
  nout = 1;
  assert_int_equal(t_invoke("_contrib_ROIAlign", in, 2, y, &nout, "pooled_size", "(1, 1)", "spatial_scale", "1",
                            "sample_ratio", "1", NULL),
                   0);
  t_expect_f32(y[0], (float[]){1.5f}, 1, 1e-6);
  t_free_all(y, 1);
  assert_int_equal(t_invoke("_contrib_PSROIPooling", in, 2, y, &nout, "spatial_scale", "1", "output_dim", "1",
                            "pooled_size", "1", NULL),
                   0);
  t_expect_f32(y[0], (float[]){1.5f}, 1, 1e-6);
  t_free_all(y, 1);
  t_free_all(in, 2);
  /* random rois, partly and wholly outside, a negative batch index; every dtype; backward ops */
  const int dtypes[3] = {MXW_FLOAT32, MXW_FLOAT64, MXW_FLOAT16};
  for (int t = 0; t < 9; t++) {
    const int dt = dtypes[t % 3], R = 6;
    mxw_ndarray *d = t_random(4, (int32_t[]){2, 12, 7, 9}, dt, -1, 1);
    mxw_ndarray *r = t_random(2, (int32_t[]){R, 5}, dt, -10, 30);
    for (int k = 0; k < R; k++) {
      const double b = k == 0 && t % 2 ? -1 : (double)(k % 2);
      mxw_store_f64(mxw_ndarray_data(r), dt, k * 5, b);
      const double x1 = mxw_load_f64(mxw_ndarray_data(r), dt, k * 5 + 1),
                   y1 = mxw_load_f64(mxw_ndarray_data(r), dt, k * 5 + 2);
      mxw_store_f64(mxw_ndarray_data(r), dt, k * 5 + 3, x1 + 1 + 10 * t_rand());
      mxw_store_f64(mxw_ndarray_data(r), dt, k * 5 + 4, y1 + 1 + 10 * t_rand());
    }
    mxw_ndarray *ri[2] = {d, r};
    nout = 1;
    assert_int_equal(t_invoke("_contrib_ROIAlign", ri, 2, y, &nout, "pooled_size", "(2, 3)", "spatial_scale", "0.5",
                              "sample_ratio", t % 2 ? "-1" : "2", "position_sensitive", t % 3 == 1 ? "False" : "True",
                              "aligned", t > 5 ? "True" : "False", NULL),
                     0);
    mxw_ndarray *ab[3] = {y[0], r, d};
    assert_int_equal(t_invoke("_backward_ROIAlign", ab, 3, dx, &nout, "pooled_size", "(2, 3)", "spatial_scale", "0.5",
                              "sample_ratio", t % 2 ? "-1" : "2", "position_sensitive", t % 3 == 1 ? "False" : "True",
                              "aligned", t > 5 ? "True" : "False", NULL),
                     0);
    t_expect_shape(dx[0], 4, (int32_t[]){2, 12, 7, 9});
    t_free_all(dx, 1);
    t_free_all(y, 1);
    nout = 2;
    assert_int_equal(t_invoke("ROIPooling", ri, 2, y, &nout, "pooled_size", "(3, 2)", "spatial_scale", "0.5", NULL), 0);
    t_free_all(y, 2);
    if (!(t % 2)) { /* PSROIPooling needs valid batch indices */
      nout = 1;
      assert_int_equal(t_invoke("_contrib_PSROIPooling", ri, 2, y, &nout, "spatial_scale", "0.5", "output_dim", "2",
                                "pooled_size", "2", NULL),
                       0);
      mxw_ndarray *pb[3] = {y[0], r, d};
      assert_int_equal(t_invoke("_backward_PSROIPooling", pb, 3, dx, &nout, "spatial_scale", "0.5", "output_dim", "2",
                                "pooled_size", "2", NULL),
                       0);
      t_free_all(dx, 1);
      t_free_all(y, 1);
    }
    mxw_ndarray_free(r);
    mxw_ndarray_free(d);
  }
}

static void test_proposal(void **state) {
  (void)state;
  for (int t = 0; t < 3; t++) {
    const int B = t + 1, A = 6, H = 5, W = 6;
    mxw_ndarray *in[3] = {t_random(4, (int32_t[]){B, 2 * A, H, W}, MXW_FLOAT32, 0, 1),
                          t_random(4, (int32_t[]){B, 4 * A, H, W}, MXW_FLOAT32, -0.3f, 0.3f),
                          t_random(2, (int32_t[]){B, 3}, MXW_FLOAT32, 60, 80)};
    for (int b = 0; b < B; b++) ((float *)mxw_ndarray_data(in[2]))[b * 3 + 2] = 1.0f;
    mxw_ndarray *y[2] = {NULL, NULL};
    int nout = 2;
    assert_int_equal(t_invoke("_contrib_MultiProposal", in, 3, y, &nout, "scales", "(2, 4)", "ratios", "(0.5, 1, 2)",
                              "rpn_pre_nms_top_n", t ? "50" : "-1", "rpn_post_nms_top_n", "40", "iou_loss",
                              t == 2 ? "True" : "False", "output_score", "True", NULL),
                     0);
    t_expect_shape(y[0], 2, (int32_t[]){B * 40, 5});
    const float *o = (const float *)mxw_ndarray_data(y[0]);
    for (int i = 0; i < B * 40; i++) {
      const int image = i / 40;
      assert_close(o[i * 5], (float)image, 0);
      for (int k = 1; k < 5; k++) assert_true(isfinite(o[i * 5 + k]));
    }
    t_free_all(y, 2);
    if (B == 1) {
      assert_int_equal(
          t_invoke("_contrib_Proposal", in, 3, y, &nout, "scales", "(2, 4)", "ratios", "(0.5, 1, 2)", NULL), 0);
      t_expect_shape(y[0], 2, (int32_t[]){300, 5});
      t_free_all(y, 2);
    } else {
      assert_int_equal(
          t_invoke("_contrib_Proposal", in, 3, y, &nout, "scales", "(2, 4)", "ratios", "(0.5, 1, 2)", NULL), -1);
      assert_error_contains("multiple images");
    }
    t_free_all(in, 3);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_box_nms_doc_example),
      cmocka_unit_test(test_box_nms_random),
      cmocka_unit_test(test_box_iou_matching_encode_decode),
      cmocka_unit_test(test_multibox),
      cmocka_unit_test(test_roi_ops),
      cmocka_unit_test(test_proposal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
