/* Dropout, LeakyReLU (rrelu's random slopes), Embedding, Crop, and the hand-worked take / topk
 * cases: values worked by hand, training-mode statistics checked against their definitions,
 * and the error messages. */
#include <stdlib.h>

#include "mxw_test.h"

#define RUN(name, ins, nin, outs, nout, ...)                                                         \
  do {                                                                                               \
    int n_ = (nout);                                                                                 \
    if (t_invoke(name, ins, nin, outs, &n_, __VA_ARGS__) != 0) fail_msg("%s", mxw_get_last_error()); \
  } while (0)

static mxw_ndarray *typed(int ndim, const int32_t *shape, int dtype, const void *vals) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  memcpy(mxw_ndarray_data(a), vals, (size_t)mxw_ndarray_size(a) * (size_t)mxw_dtype_size(dtype));
  return a;
}

static mxw_ndarray *ramp(int ndim, const int32_t *shape, float start) {
  mxw_ndarray *a = t_array(ndim, shape, NULL);
  float *p = (float *)mxw_ndarray_data(a);
  for (int i = 0; i < (int)mxw_ndarray_size(a); i++) p[i] = start + (float)i;
  return a;
}

/* ---- Dropout ------------------------------------------------------------------------------------ */
static void test_dropout_identity_at_inference(void **state) {
  (void)state;
  int32_t s[2] = {3, 4};
  mxw_ndarray *x = ramp(2, s, -5), *in[1] = {x}, *out[2] = {NULL, NULL};
  assert_int_equal(mxw_set_training(0), 0);
  RUN("Dropout", in, 1, out, 2, "p", "0.5", NULL);
  t_expect_shape(out[1], 2, s);
  const float *px = (const float *)mxw_ndarray_data(x);
  t_expect_f32(out[0], px, 12, 0);
  for (int i = 0; i < 12; i++) assert_close(((float *)mxw_ndarray_data(out[1]))[i], 1, 0);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  /* p = 0 is the identity even when training */
  mxw_set_training(1);
  out[0] = out[1] = NULL;
  RUN("_npx_dropout", in, 1, out, 2, "p", "0", NULL);
  t_expect_f32(out[0], px, 12, 0);
  mxw_set_training(0);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  mxw_ndarray_free(x);
}

/* Training (or mode='always'): every mask value is 0 or 1/(1-p), output = x * mask, and about a
 * fraction p is dropped. */
static void check_dropout_active(mxw_ndarray *x, mxw_ndarray **out, double p, int n) {
  const float *px = (const float *)mxw_ndarray_data(x), *py = (const float *)mxw_ndarray_data(out[0]);
  const float *pm = (const float *)mxw_ndarray_data(out[1]);
  float scale = 1.0f / (1.0f - (float)p);
  int zeros = 0;
  for (int i = 0; i < n; i++) {
    if (pm[i] != 0.f && pm[i] != scale) fail_msg("mask[%d] = %g is neither 0 nor %g", i, pm[i], scale);
    zeros += pm[i] == 0.f;
    assert_close(py[i], px[i] * pm[i], 1e-6);
  }
  double frac = (double)zeros / n;
  if (fabs(frac - p) > 0.03) fail_msg("dropped fraction %g, expected about %g", frac, p);
}

static void test_dropout_training_and_always(void **state) {
  (void)state;
  int32_t s[2] = {50, 200};
  mxw_ndarray *x = ramp(2, s, 1), *in[1] = {x}, *out[2] = {NULL, NULL};
  mxw_random_seed(7);
  mxw_set_training(1);
  RUN("Dropout", in, 1, out, 2, "p", "0.3", NULL);
  mxw_set_training(0);
  check_dropout_active(x, out, 0.3, 10000);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  out[0] = out[1] = NULL;
  RUN("Dropout", in, 1, out, 2, "p", "0.5", "mode", "always", NULL); /* at inference */
  check_dropout_active(x, out, 0.5, 10000);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  /* p = 1 drops everything */
  out[0] = out[1] = NULL;
  RUN("Dropout", in, 1, out, 2, "p", "1", "mode", "always", NULL);
  for (int i = 0; i < 10000; i++) assert_close(((float *)mxw_ndarray_data(out[0]))[i], 0, 0);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  mxw_ndarray_free(x);
}

/* axes=(1,): one mask value per row of (400, 25), shared along axis 1 */
static void test_dropout_axes(void **state) {
  (void)state;
  int32_t s[2] = {400, 25};
  mxw_ndarray *x = ramp(2, s, 1), *in[1] = {x}, *out[2] = {NULL, NULL};
  RUN("Dropout", in, 1, out, 2, "p", "0.5", "mode", "always", "axes", "(1,)", NULL);
  t_expect_shape(out[1], 2, (int32_t[]){400, 1});
  const float *px = (const float *)mxw_ndarray_data(x), *py = (const float *)mxw_ndarray_data(out[0]);
  const float *pm = (const float *)mxw_ndarray_data(out[1]);
  int zeros = 0;
  for (int r = 0; r < 400; r++) {
    assert_true(pm[r] == 0.f || pm[r] == 2.f);
    zeros += pm[r] == 0.f;
    for (int c = 0; c < 25; c++) assert_close(py[r * 25 + c], px[r * 25 + c] * pm[r], 0);
  }
  assert_true(zeros > 150 && zeros < 250);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  /* errors: p out of range, axis out of range; then a good call */
  int n = 2;
  out[0] = out[1] = NULL;
  assert_int_equal(t_invoke("Dropout", in, 1, out, &n, "p", "1.5", NULL), -1);
  assert_error_contains("Operator Dropout");
  assert_error_contains("p=1.5");
  assert_int_equal(t_invoke("Dropout", in, 1, out, &n, "axes", "(2,)", NULL), -1);
  assert_error_contains("axes[0] = 2");
  RUN("Dropout", in, 1, out, 2, NULL);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  mxw_ndarray_free(x);
}

/* ---- LeakyReLU rrelu --------------------------------------------------------------------------------- */
static void test_rrelu(void **state) {
  (void)state;
  int32_t s[1] = {1000};
  mxw_ndarray *x = ramp(1, s, -600), *in[1] = {x}, *out[2] = {NULL, NULL};
  const float *px = (const float *)mxw_ndarray_data(x);
  /* inference: slope (lower + upper) / 2 = 0.2 */
  RUN("LeakyReLU", in, 1, out, 2, "act_type", "rrelu", "lower_bound", "0.1", "upper_bound", "0.3", NULL);
  for (int i = 0; i < 1000; i++)
    assert_close(((float *)mxw_ndarray_data(out[0]))[i], px[i] > 0 ? px[i] : 0.2f * px[i], 1e-6);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  /* training: one slope per element in [lower, upper], recorded in the mask */
  out[0] = out[1] = NULL;
  mxw_set_training(1);
  RUN("_npx_leaky_relu", in, 1, out, 2, "act_type", "rrelu", "lower_bound", "0.1", "upper_bound", "0.3", NULL);
  mxw_set_training(0);
  const float *py = (const float *)mxw_ndarray_data(out[0]), *pm = (const float *)mxw_ndarray_data(out[1]);
  double mean = 0;
  for (int i = 0; i < 1000; i++) {
    assert_true(pm[i] >= 0.1f && pm[i] <= 0.3f);
    mean += pm[i];
    assert_close(py[i], px[i] > 0 ? px[i] : pm[i] * px[i], 1e-6);
  }
  assert_close(mean / 1000, 0.2, 0.02);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  mxw_ndarray_free(x);
}

/* prelu: gamma (C,) along axis 1, a one-element gamma everywhere; a wrong gamma is an error. */
static void test_prelu_broadcast(void **state) {
  (void)state;
  int32_t s[3] = {2, 3, 2}, gs[1] = {3}, g1[1] = {1}, g4[1] = {4};
  mxw_ndarray *x = ramp(3, s, -6), *g = t_array(1, gs, (float[]){0.1f, 0.2f, 0.3f}), *in[2] = {x, g}, *out[1] = {NULL};
  RUN("LeakyReLU", in, 2, out, 1, "act_type", "prelu", NULL);
  /* x = -6..5: n=0: c0 {-6,-5}*0.1, c1 {-4,-3}*0.2, c2 {-2,-1}*0.3; n=1: all >= 0 */
  t_expect_f32(out[0], (float[]){-0.6f, -0.5f, -0.8f, -0.6f, -0.6f, -0.3f, 0, 1, 2, 3, 4, 5}, 12, 1e-6);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(g);
  in[1] = g = t_array(1, g1, (float[]){0.5f});
  out[0] = NULL;
  RUN("LeakyReLU", in, 2, out, 1, "act_type", "prelu", NULL);
  t_expect_f32(out[0], (float[]){-3, -2.5f, -2, -1.5f, -1, -0.5f, 0, 1, 2, 3, 4, 5}, 12, 1e-6);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(g);
  in[1] = g = t_array(1, g4, NULL);
  out[0] = NULL;
  int n = 1;
  assert_int_equal(t_invoke("LeakyReLU", in, 2, out, &n, "act_type", "prelu", NULL), -1);
  assert_error_contains("Operator LeakyReLU");
  assert_error_contains("cannot broadcast gamma of shape (4,) to data of shape (2, 3, 2)");
  mxw_ndarray_free(g);
  mxw_ndarray_free(x);
}

/* ---- Embedding ------------------------------------------------------------------------------------- */
/* weight rows r = [10r, 10r + 1]; indices are clipped to [0, input_dim - 1] and floats truncated */
static void test_embedding(void **state) {
  (void)state;
  int32_t is[2] = {2, 3}, ws[2] = {4, 2};
  mxw_ndarray *idx = t_array(2, is, (float[]){-1, 0, 2.9f, 3, 7, 1.2f});
  mxw_ndarray *w = t_array(2, ws, (float[]){0, 1, 10, 11, 20, 21, 30, 31}), *in[2] = {idx, w}, *out[1] = {NULL};
  RUN("Embedding", in, 2, out, 1, "input_dim", "4", "output_dim", "2", NULL);
  t_expect_shape(out[0], 3, (int32_t[]){2, 3, 2});
  t_expect_f32(out[0], (float[]){0, 1, 0, 1, 20, 21, 30, 31, 30, 31, 10, 11}, 12, 0);
  mxw_ndarray_free(out[0]);
  /* int32 indices, float64 weight: the output takes weight's dtype */
  int32_t iv[3] = {3, -2, 1}, is1[1] = {3};
  double wv[8] = {0, 1, 10, 11, 20, 21, 30, 31};
  mxw_ndarray *idx32 = typed(1, is1, MXW_INT32, iv), *w64 = typed(2, ws, MXW_FLOAT64, wv);
  in[0] = idx32;
  in[1] = w64;
  out[0] = NULL;
  RUN("_sparse_Embedding", in, 2, out, 1, "input_dim", "4", "output_dim", "2", "dtype", "float16", NULL);
  assert_int_equal(mxw_ndarray_dtype(out[0]), MXW_FLOAT64);
  const double *pd = (const double *)mxw_ndarray_data(out[0]);
  const double want[6] = {30, 31, 0, 1, 10, 11};
  for (int i = 0; i < 6; i++) assert_close(pd[i], want[i], 0);
  mxw_ndarray_free(out[0]);
  /* a weight that does not match (input_dim, output_dim) */
  out[0] = NULL;
  int n = 1;
  assert_int_equal(t_invoke("Embedding", in, 2, out, &n, "input_dim", "5", "output_dim", "2", NULL), -1);
  assert_error_contains("Operator Embedding");
  assert_error_contains("weight has shape (4, 2), expected (input_dim, output_dim) = (5, 2)");
  mxw_ndarray_free(idx32);
  mxw_ndarray_free(w64);
  mxw_ndarray_free(idx);
  mxw_ndarray_free(w);
}

/* ---- Crop -------------------------------------------------------------------------------------------- */
/* data (1, 2, 4, 5) = 0..39 */
static void test_crop(void **state) {
  (void)state;
  int32_t s[4] = {1, 2, 4, 5}, ls[4] = {3, 7, 2, 2};
  mxw_ndarray *x = ramp(4, s, 0), *like = t_array(4, ls, NULL), *in[2] = {x, like}, *out[1] = {NULL};
  RUN("Crop", in, 1, out, 1, "num_args", "1", "h_w", "(2, 3)", "offset", "(1, 2)", NULL);
  t_expect_shape(out[0], 4, (int32_t[]){1, 2, 2, 3});
  t_expect_f32(out[0], (float[]){7, 8, 9, 12, 13, 14, 27, 28, 29, 32, 33, 34}, 12, 0);
  mxw_ndarray_free(out[0]);
  /* center: offset ((4 - 2) / 2, (5 - 2) / 2) = (1, 1), the size from crop_like */
  out[0] = NULL;
  RUN("Crop", in, 2, out, 1, "num_args", "2", "center_crop", "True", NULL);
  t_expect_shape(out[0], 4, (int32_t[]){1, 2, 2, 2});
  t_expect_f32(out[0], (float[]){6, 7, 11, 12, 26, 27, 31, 32}, 8, 0);
  mxw_ndarray_free(out[0]);
  /* errors: the offset leaves the data; a crop larger than the data */
  out[0] = NULL;
  int n = 1;
  assert_int_equal(t_invoke("Crop", in, 1, out, &n, "num_args", "1", "h_w", "(2, 3)", "offset", "(3, 0)", NULL), -1);
  assert_error_contains("Operator Crop");
  assert_error_contains("offset[0] = 3 must be in [0, 2]");
  assert_int_equal(t_invoke("Crop", in, 1, out, &n, "num_args", "1", "h_w", "(5, 3)", NULL), -1);
  assert_error_contains("larger than the data");
  mxw_ndarray_free(x);
  mxw_ndarray_free(like);
}

/* ---- take and topk, by hand ------------------------------------------------------------------------ */
/* a = [[0, 1, 2], [3, 4, 5]]; indices [-1, 0, 2, 5] */
static void test_take_clip_wrap_raise(void **state) {
  (void)state;
  int32_t as[2] = {2, 3}, is[1] = {4};
  mxw_ndarray *a = ramp(2, as, 0), *idx = t_array(1, is, (float[]){-1, 0, 2, 5}), *in[2] = {a, idx}, *out[1] = {NULL};
  RUN("take", in, 2, out, 1, "axis", "1", NULL); /* clip: -1 -> 0, 5 -> 2 */
  t_expect_shape(out[0], 2, (int32_t[]){2, 4});
  t_expect_f32(out[0], (float[]){0, 0, 2, 2, 3, 3, 5, 5}, 8, 0);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  RUN("take", in, 2, out, 1, "axis", "-1", "mode", "wrap", NULL); /* wrap: -1 -> 2, 5 -> 2 */
  t_expect_f32(out[0], (float[]){2, 0, 2, 2, 5, 3, 5, 5}, 8, 0);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  RUN("_npi_take", in, 2, out, 1, "mode", "wrap", NULL); /* axis 0: rows 1, 0, 0, 1 */
  t_expect_shape(out[0], 2, (int32_t[]){4, 3});
  t_expect_f32(out[0], (float[]){3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5}, 12, 0);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  int n = 1;
  assert_int_equal(t_invoke("take", in, 2, out, &n, "axis", "1", "mode", "raise", NULL), -1);
  assert_error_contains("Operator take");
  assert_error_contains("index -1");
  assert_error_contains("size 3");
  assert_null(out[0]);
  mxw_ndarray_free(a);
  mxw_ndarray_free(idx);
}

/* x = [[3, 1, 4, 1], [5, 9, 2, 6]]: top 2 along the last axis, both values and indices; ties
 * (the two 1s) keep the lower index first. */
static void test_topk_both(void **state) {
  (void)state;
  int32_t s[2] = {2, 4};
  mxw_ndarray *x = t_array(2, s, (float[]){3, 1, 4, 1, 5, 9, 2, 6}), *in[1] = {x}, *out[2] = {NULL, NULL};
  RUN("topk", in, 1, out, 2, "k", "2", "ret_typ", "both", NULL);
  t_expect_shape(out[0], 2, (int32_t[]){2, 2});
  t_expect_f32(out[0], (float[]){4, 3, 9, 6}, 4, 0);
  t_expect_f32(out[1], (float[]){2, 0, 1, 3}, 4, 0);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  out[0] = out[1] = NULL;
  RUN("_npx_topk", in, 1, out, 2, "k", "3", "ret_typ", "both", "is_ascend", "True", "dtype", "int32", NULL);
  assert_int_equal(mxw_ndarray_dtype(out[1]), MXW_INT32);
  t_expect_f32(out[0], (float[]){1, 1, 3, 2, 5, 6}, 6, 0);
  const int32_t *pi = (const int32_t *)mxw_ndarray_data(out[1]);
  const int32_t want[6] = {1, 3, 0, 2, 0, 3};
  for (int i = 0; i < 6; i++) assert_int_equal(pi[i], want[i]);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  /* k larger than the axis */
  out[0] = out[1] = NULL;
  int n = 2;
  assert_int_equal(t_invoke("topk", in, 1, out, &n, "k", "5", NULL), -1);
  assert_error_contains("Operator topk");
  assert_error_contains("k=5 must not exceed the 4 elements");
  mxw_ndarray_free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dropout_identity_at_inference),
      cmocka_unit_test(test_dropout_training_and_always),
      cmocka_unit_test(test_dropout_axes),
      cmocka_unit_test(test_rrelu),
      cmocka_unit_test(test_prelu_broadcast),
      cmocka_unit_test(test_embedding),
      cmocka_unit_test(test_crop),
      cmocka_unit_test(test_take_clip_wrap_raise),
      cmocka_unit_test(test_topk_both),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
