/* Shape manipulation ops: Reshape's special codes (every example of ops.md §3) through the public
 * shape inference, and forwards checked against values worked by hand or against a plain loop
 * written here (the blocked SIMD transpose, on odd sizes and every element size). */
#include <stdlib.h>

#include "mxw_test.h"

/* Params for op `name` from key/value strings (NULL-terminated); fails the test on error. */
static mxw_params *t_params(const char *name, va_list ap) {
  const char *keys[16], *vals[16];
  int n = 0;
  for (const char *k; (k = va_arg(ap, const char *)) != NULL && n < 16; n++) {
    keys[n] = k;
    vals[n] = va_arg(ap, const char *);
  }
  mxw_params *p = NULL;
  if (mxw_params_create(mxw_op_find(name), n, keys, vals, &p) != 0) return NULL;
  return p;
}

/* Output shape of a one-input op for a known input shape, through mxw_op_infer_shape (what the
 * JS NDArray.reshape uses). Returns the status; out gets ndim then dims. */
static int infer1(const char *name, int ndim, const int32_t *dims, int32_t *out, ...) {
  va_list ap;
  va_start(ap, out);
  mxw_params *p = t_params(name, ap);
  va_end(ap);
  if (!p) return -1;
  int32_t in[1 + MXW_MAX_NDIM];
  in[0] = ndim;
  memcpy(in + 1, dims, sizeof(int32_t) * (size_t)ndim);
  int rc = mxw_op_infer_shape(p, 1, in, out);
  mxw_params_free(p);
  return rc;
}

#define assert_shape(out, ...)                                                 \
  do {                                                                         \
    const int32_t exp_[] = {__VA_ARGS__};                                      \
    int n_ = (int)(sizeof exp_ / sizeof exp_[0]);                              \
    assert_int_equal((out)[0], n_);                                            \
    for (int i_ = 0; i_ < n_; i_++) assert_int_equal((out)[1 + i_], exp_[i_]); \
  } while (0)

static const int32_t k234[3] = {2, 3, 4};

static void test_reshape_codes(void **state) {
  (void)state;
  int32_t o[1 + MXW_MAX_NDIM];
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(4, 0, 2)", NULL), 0);
  assert_shape(o, 4, 3, 2);
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(2, 0, 0)", NULL), 0);
  assert_shape(o, 2, 3, 4);
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(6, 1, -1)", NULL), 0);
  assert_shape(o, 6, 1, 4);
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(-2,)", NULL), 0);
  assert_shape(o, 2, 3, 4);
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(2, -2)", NULL), 0);
  assert_shape(o, 2, 3, 4);
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(-3, 4)", NULL), 0);
  assert_shape(o, 6, 4);
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(-4, 1, 2, -2)", NULL), 0);
  assert_shape(o, 1, 2, 3, 4);
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(2, -4, -1, 3, -2)", NULL), 0);
  assert_shape(o, 2, 1, 3, 4);
  const int32_t d1054[3] = {10, 5, 4};
  assert_int_equal(infer1("Reshape", 3, d1054, o, "shape", "(-1, 0)", "reverse", "True", NULL), 0);
  assert_shape(o, 50, 4);
  /* without reverse the 0 copies dim 1 (5): (10*5*4/5, 5) */
  assert_int_equal(infer1("reshape", 3, d1054, o, "shape", "(-1, 0)", NULL), 0);
  assert_shape(o, 40, 5);
  /* -4 with the -1 on the right, -3 then -1 */
  assert_int_equal(infer1("reshape", 3, k234, o, "shape", "(-4, 2, -1, 0, 0)", NULL), 0);
  assert_shape(o, 2, 1, 3, 4);
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(-3, -1)", NULL), 0);
  assert_shape(o, 6, 4);
}

static void test_reshape_legacy_target_shape(void **state) {
  (void)state;
  int32_t o[1 + MXW_MAX_NDIM];
  assert_int_equal(infer1("Reshape", 3, k234, o, "target_shape", "(4, 0)", NULL), 0);
  assert_shape(o, 4, 6);
  /* keep_highest: dim 0 stays 2 whatever is written; the one 0 after it is inferred */
  assert_int_equal(infer1("Reshape", 3, k234, o, "target_shape", "(7, 0)", "keep_highest", "True", NULL), 0);
  assert_shape(o, 2, 12);
  assert_int_equal(infer1("Reshape", 3, k234, o, "target_shape", "(3, 8)", NULL), 0);
  assert_shape(o, 3, 8);
  /* shape wins over target_shape */
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(-1,)", "target_shape", "(3, 8)", NULL), 0);
  assert_shape(o, 24);
}

static void test_reshape_errors(void **state) {
  (void)state;
  int32_t o[1 + MXW_MAX_NDIM];
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(5, 5)", NULL), -1);
  assert_error_contains("Operator Reshape");
  assert_error_contains("(2, 3, 4)");
  assert_error_contains("shape=(5, 5)");
  assert_error_contains("25 elements");
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(-1, -1)", NULL), -1);
  assert_error_contains("(2, 3, 4)");
  assert_error_contains("shape=(-1, -1)");
  assert_error_contains("only one dimension can be -1");
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(-3, -3)", NULL), -1);
  assert_error_contains("(2, 3, 4)");
  assert_error_contains("-3 at position 1");
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(0, 0, -4, 2)", NULL), -1);
  assert_error_contains("-4 at position 2 must be followed by two sizes");
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(0, 0, 0, -4, 1, 1)", NULL), -1);
  assert_error_contains("-4 at position 3 splits input dimension 3");
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(-4, 2, 2, -2)", NULL), -1);
  assert_error_contains("splits 2 into 2 x 2");
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(0, 0, 0, 0)", NULL), -1);
  assert_error_contains("0 at position 3");
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(-5, 2)", NULL), -1);
  assert_error_contains("-5 at position 0");
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(5, -1)", NULL), -1);
  assert_error_contains("do not divide");
  /* the registry keeps working */
  assert_int_equal(infer1("Reshape", 3, k234, o, "shape", "(-1,)", NULL), 0);
  assert_shape(o, 24);
}

static void test_reshape_forward_and_partial_shapes(void **state) {
  (void)state;
  float v[24];
  for (int i = 0; i < 24; i++) v[i] = (float)i;
  mxw_ndarray *x = t_array(3, k234, v), *y[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("Reshape", &x, 1, y, &nout, "shape", "(-3, -1)", NULL), 0);
  int32_t s[MXW_MAX_NDIM];
  assert_int_equal(mxw_ndarray_ndim(y[0]), 2);
  mxw_ndarray_shape(y[0], s);
  assert_int_equal(s[0], 6);
  assert_int_equal(s[1], 4);
  for (int i = 0; i < 24; i++) assert_close(((float *)mxw_ndarray_data(y[0]))[i], (double)i, 0);
  mxw_ndarray_free(y[0]);
  mxw_ndarray_free(x);

  /* graph-style inference: an unknown input dim follows from a known output */
  mxw_params *p = NULL;
  const char *k[] = {"shape"}, *val[] = {"(0, -1)"};
  assert_int_equal(mxw_params_create(mxw_op_find("Reshape"), 1, k, val, &p), 0);
  mxw_shape in = mxw_shape_make(3, (const int64_t[]){2, -1, 4}), out = mxw_shape_make(2, (const int64_t[]){2, 12});
  assert_int_equal(p->op->infer_shape(p->param, 1, &in, 1, &out), 0);
  assert_int_equal(in.dims[1], 3);
  mxw_params_free(p);
}

static void test_flatten_expand_squeeze(void **state) {
  (void)state;
  int32_t o[1 + MXW_MAX_NDIM];
  assert_int_equal(infer1("Flatten", 3, k234, o, NULL), 0);
  assert_shape(o, 2, 12);
  const int32_t d5[1] = {5};
  assert_int_equal(infer1("flatten", 1, d5, o, NULL), 0);
  assert_shape(o, 5, 1);
  assert_int_equal(infer1("expand_dims", 3, k234, o, "axis", "-1", NULL), 0);
  assert_shape(o, 2, 3, 4, 1);
  assert_int_equal(infer1("expand_dims", 3, k234, o, "axis", "-4", NULL), 0);
  assert_shape(o, 1, 2, 3, 4);
  assert_int_equal(infer1("expand_dims", 3, k234, o, "axis", "4", NULL), -1);
  assert_error_contains("axis=4 is out of range [-4, 3]");
  const int32_t d1311[4] = {1, 3, 1, 1};
  assert_int_equal(infer1("squeeze", 4, d1311, o, NULL), 0);
  assert_shape(o, 3);
  assert_int_equal(infer1("squeeze", 4, d1311, o, "axis", "(0, -1)", NULL), 0);
  assert_shape(o, 3, 1);
  const int32_t d111[3] = {1, 1, 1};
  assert_int_equal(infer1("squeeze", 3, d111, o, NULL), 0);
  assert_shape(o, 1);
  assert_int_equal(infer1("squeeze", 4, d1311, o, "axis", "1", NULL), -1);
  assert_error_contains("its size is 3, not 1");
  assert_int_equal(infer1("squeeze", 4, d1311, o, "axis", "(2, -2)", NULL), -1);
  assert_error_contains("twice");
}

static void test_transpose_2x3(void **state) {
  (void)state;
  const int32_t s[2] = {2, 3};
  const float v[6] = {0, 1, 2, 3, 4, 5};
  mxw_ndarray *x = t_array(2, s, v), *y[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("transpose", &x, 1, y, &nout, NULL), 0);
  const float expect[6] = {0, 3, 1, 4, 2, 5};
  int32_t ys[2];
  mxw_ndarray_shape(y[0], ys);
  assert_int_equal(ys[0], 3);
  assert_int_equal(ys[1], 2);
  for (int i = 0; i < 6; i++) assert_close(((float *)mxw_ndarray_data(y[0]))[i], expect[i], 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("transpose", &x, 1, y, &nout, "axes", "(0, 0)", NULL), -1);
  assert_error_contains("not a permutation");
  assert_int_equal(t_invoke("transpose", &x, 1, y, &nout, "axes", "(1, 0, 2)", NULL), -1);
  assert_error_contains("has 3 entries but the input has 2 dimensions");
  mxw_ndarray_free(x);
}

/* Element k of dtype `dt` holding the value k (mod 2^bits), so every element is distinct enough. */
static mxw_ndarray *iota(int ndim, const int32_t *shape, int dt) {
  mxw_ndarray *a = NULL;
  assert_int_equal(mxw_ndarray_create(ndim, shape, dt, &a), 0);
  int64_t n = (int64_t)mxw_ndarray_size(a);
  for (int64_t i = 0; i < n; i++) mxw_store_f64(mxw_ndarray_data(a), dt, i, (double)(i % 101));
  return a;
}

/* transpose of (B, R, C) with axes (0, 2, 1) and of (R, C) with the default axes, against the
 * plain index formula; odd sizes exercise the SIMD tiles' edges, every element size once. */
static void test_transpose_blocked_vs_loop(void **state) {
  (void)state;
  const int dts[] = {MXW_FLOAT32, MXW_INT8, MXW_FLOAT16, MXW_FLOAT64, MXW_INT32};
  const int32_t sizes[][3] = {{1, 37, 53}, {3, 67, 19}, {2, 4, 4}, {1, 5, 3}, {2, 64, 33}};
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
      const int32_t *s = sizes[z];
      int B = s[0], R = s[1], C = s[2];
      mxw_ndarray *x = iota(3, s, dts[t]), *y[1] = {NULL};
      int nout = 1;
      assert_int_equal(t_invoke("transpose", &x, 1, y, &nout, "axes", "(0, 2, 1)", NULL), 0);
      const void *xd = mxw_ndarray_data(x), *yd = mxw_ndarray_data(y[0]);
      for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++)
          for (int r = 0; r < R; r++) {
            double got = mxw_load_f64(yd, dts[t], ((int64_t)b * C + c) * R + r);
            double want = mxw_load_f64(xd, dts[t], ((int64_t)b * R + r) * C + c);
            if (got != want)
              fail_msg("dtype %d size (%d,%d,%d) at (%d,%d,%d): %g vs %g", dts[t], B, R, C, b, c, r, got, want);
          }
      mxw_ndarray_free(y[0]);
      mxw_ndarray_free(x);
    }
  }
  /* a 4-D permutation that is not a batched 2-D transpose */
  const int32_t s4[4] = {3, 5, 2, 7};
  mxw_ndarray *x = iota(4, s4, MXW_FLOAT32), *y[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("transpose", &x, 1, y, &nout, "axes", "(2, 0, 3, 1)", NULL), 0);
  const float *xd = (const float *)mxw_ndarray_data(x), *yd = (const float *)mxw_ndarray_data(y[0]);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 5; b++)
      for (int c = 0; c < 2; c++)
        for (int d = 0; d < 7; d++)
          assert_close(yd[((c * 3 + a) * 7 + d) * 5 + b], xd[((a * 5 + b) * 2 + c) * 7 + d], 0);
  mxw_ndarray_free(y[0]);
  mxw_ndarray_free(x);
}

static void test_concat_and_stack(void **state) {
  (void)state;
  const int32_t sa[2] = {2, 2}, sb[2] = {2, 3};
  const float va[4] = {1, 2, 3, 4}, vb[6] = {5, 6, 7, 8, 9, 10};
  mxw_ndarray *in[2] = {t_array(2, sa, va), t_array(2, sb, vb)}, *y[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("Concat", in, 2, y, &nout, "num_args", "2", "dim", "-1", NULL), 0);
  const float expect[10] = {1, 2, 5, 6, 7, 3, 4, 8, 9, 10};
  for (int i = 0; i < 10; i++) assert_close(((float *)mxw_ndarray_data(y[0]))[i], expect[i], 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("Concat", in, 2, y, &nout, "num_args", "2", "dim", "0", NULL), -1);
  assert_error_contains("Operator Concat");
  assert_error_contains("input arg1 has shape (2, 3)");
  assert_int_equal(t_invoke("stack", in, 2, y, &nout, "num_args", "2", NULL), -1);
  assert_error_contains("input arg1");
  mxw_ndarray_free(in[1]);

  /* stack two (2, 2) along axis 1: out[i, k, j] = in_k[i, j] */
  const float vc[4] = {10, 20, 30, 40};
  in[1] = t_array(2, sa, vc);
  assert_int_equal(t_invoke("stack", in, 2, y, &nout, "num_args", "2", "axis", "1", NULL), 0);
  const float expect_s[8] = {1, 2, 10, 20, 3, 4, 30, 40};
  for (int i = 0; i < 8; i++) assert_close(((float *)mxw_ndarray_data(y[0]))[i], expect_s[i], 0);
  mxw_ndarray_free(y[0]);
  mxw_ndarray_free(in[0]);
  mxw_ndarray_free(in[1]);

  /* inference fills one unknown concatenated size from the output, and shared dims across */
  mxw_params *p = NULL;
  const char *k[] = {"num_args"}, *v[] = {"3"};
  assert_int_equal(mxw_params_create(mxw_op_find("concat"), 1, k, v, &p), 0);
  mxw_shape ins[3] = {mxw_shape_make(2, (const int64_t[]){4, 2}), mxw_shape_make(2, (const int64_t[]){-1, -1}),
                      mxw_shape_make(-1, NULL)};
  ins[2].ndim = -1;
  mxw_shape out = mxw_shape_make(2, (const int64_t[]){-1, 9});
  assert_int_equal(p->op->infer_shape(p->param, 3, ins, 1, &out), 0);
  assert_int_equal(out.dims[0], 4);
  assert_int_equal(ins[1].dims[0], 4);
  assert_int_equal(ins[1].dims[1], -1); /* two unknown sizes: cannot split 7 */
  ins[2] = mxw_shape_make(2, (const int64_t[]){4, 3});
  assert_int_equal(p->op->infer_shape(p->param, 3, ins, 1, &out), 0);
  assert_int_equal(ins[1].dims[1], 4);
  mxw_params_free(p);
}

static const float *fdata(mxw_ndarray *a) { return (const float *)mxw_ndarray_data(a); }

static void test_slice_negative_steps(void **state) {
  (void)state;
  const int32_t s[2] = {2, 5};
  const float v[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  mxw_ndarray *x = t_array(2, s, v), *y[1] = {NULL};
  int nout = 1;
  int32_t ys[2];
  /* x[:, 4:0:-2] = [[4, 2], [9, 7]] */
  assert_int_equal(
      t_invoke("slice", &x, 1, y, &nout, "begin", "(None, 4)", "end", "(None, 0)", "step", "(None, -2)", NULL), 0);
  mxw_ndarray_shape(y[0], ys);
  assert_int_equal(ys[0], 2);
  assert_int_equal(ys[1], 2);
  const float e1[4] = {4, 2, 9, 7};
  for (int i = 0; i < 4; i++) assert_close(fdata(y[0])[i], e1[i], 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  /* x[::-1, ::-1]: begin None with a negative step starts at the end */
  assert_int_equal(
      t_invoke("crop", &x, 1, y, &nout, "begin", "(None, None)", "end", "(None, None)", "step", "(-1, -1)", NULL), 0);
  for (int i = 0; i < 10; i++) assert_close(fdata(y[0])[i], 9 - i, 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  /* clamping: begin 10 with step -3 starts at 4; end -100 + 5 clamps to -1 -> columns 4, 1 */
  assert_int_equal(
      t_invoke("_npx_slice", &x, 1, y, &nout, "begin", "(1, 10)", "end", "(2, -100)", "step", "(1, -3)", NULL), 0);
  mxw_ndarray_shape(y[0], ys);
  assert_int_equal(ys[0], 1);
  assert_int_equal(ys[1], 2);
  assert_close(fdata(y[0])[0], 9, 0);
  assert_close(fdata(y[0])[1], 6, 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  /* an empty result: begin past the end with a positive step */
  assert_int_equal(t_invoke("slice", &x, 1, y, &nout, "begin", "(0, 7)", "end", "(2, 9)", NULL), 0);
  assert_int_equal((int)mxw_ndarray_size(y[0]), 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("slice", &x, 1, y, &nout, "begin", "(0,)", "end", "(2,)", "step", "(0,)", NULL), -1);
  assert_error_contains("step 0 is 0");
  assert_int_equal(t_invoke("slice", &x, 1, y, &nout, "begin", "(0, 0, 0)", "end", "(1, 1, 1)", NULL), -1);
  assert_error_contains("only 2 dimensions");
  /* slice_axis with a negative begin and end=None */
  assert_int_equal(t_invoke("slice_axis", &x, 1, y, &nout, "axis", "-1", "begin", "-2", "end", "None", NULL), 0);
  const float e2[4] = {3, 4, 8, 9};
  for (int i = 0; i < 4; i++) assert_close(fdata(y[0])[i], e2[i], 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("slice_axis", &x, 1, y, &nout, "axis", "1", "begin", "3", "end", "2", NULL), -1);
  assert_error_contains("not a non-empty range");
  mxw_ndarray_free(x);
}

static void test_split_pad_tile_repeat(void **state) {
  (void)state;
  const int32_t s[2] = {2, 4};
  const float v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  mxw_ndarray *x = t_array(2, s, v), *y[4] = {NULL};
  int nout = 4;
  assert_int_equal(t_invoke("SliceChannel", &x, 1, y, &nout, "num_outputs", "2", NULL), 0);
  assert_int_equal(nout, 2);
  const float e0[4] = {0, 1, 4, 5}, e1[4] = {2, 3, 6, 7};
  for (int i = 0; i < 4; i++) {
    assert_close(fdata(y[0])[i], e0[i], 0);
    assert_close(fdata(y[1])[i], e1[i], 0);
  }
  mxw_ndarray_free(y[0]);
  mxw_ndarray_free(y[1]);
  y[0] = y[1] = NULL;
  nout = 4;
  assert_int_equal(t_invoke("split", &x, 1, y, &nout, "num_outputs", "3", NULL), -1);
  assert_error_contains("into num_outputs=3 equal parts");

  /* tile (2, 4) by (2,) -> (2, 8): each row twice over */
  nout = 1;
  assert_int_equal(t_invoke("tile", &x, 1, y, &nout, "reps", "(2,)", NULL), 0);
  const float et[16] = {0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7};
  for (int i = 0; i < 16; i++) assert_close(fdata(y[0])[i], et[i], 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  /* repeat each element twice along axis 0 */
  assert_int_equal(t_invoke("repeat", &x, 1, y, &nout, "repeats", "2", "axis", "0", NULL), 0);
  const float er[16] = {0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7};
  for (int i = 0; i < 16; i++) assert_close(fdata(y[0])[i], er[i], 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("repeat", &x, 1, y, &nout, "repeats", "2", NULL), 0);
  for (int i = 0; i < 16; i++) assert_close(fdata(y[0])[i], i / 2, 0);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  mxw_ndarray_free(x);

  /* Pad a (1, 1, 2, 3) image by 1 on each side of H and 2 before W, int32 */
  const int32_t ps[4] = {1, 1, 2, 3};
  mxw_ndarray *img = NULL;
  assert_int_equal(mxw_ndarray_create(4, ps, MXW_INT32, &img), 0);
  for (int i = 0; i < 6; i++) ((int32_t *)mxw_ndarray_data(img))[i] = i + 1; /* [[1 2 3] [4 5 6]] */
  assert_int_equal(t_invoke("Pad", &img, 1, y, &nout, "mode", "constant", "pad_width", "(0, 0, 0, 0, 1, 1, 2, 0)",
                            "constant_value", "-7", NULL),
                   0);
  const int32_t ec[20] = {-7, -7, -7, -7, -7, -7, -7, 1, 2, 3, -7, -7, 4, 5, 6, -7, -7, -7, -7, -7};
  for (int i = 0; i < 20; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(y[0]))[i], ec[i]);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("pad", &img, 1, y, &nout, "mode", "edge", "pad_width", "(0, 0, 0, 0, 1, 1, 2, 0)", NULL),
                   0);
  const int32_t ee[20] = {1, 1, 1, 2, 3, 1, 1, 1, 2, 3, 4, 4, 4, 5, 6, 4, 4, 4, 5, 6};
  for (int i = 0; i < 20; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(y[0]))[i], ee[i]);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("Pad", &img, 1, y, &nout, "mode", "reflect", "pad_width", "(0, 0, 0, 0, 1, 1, 2, 0)", NULL),
                   0);
  const int32_t ef[20] = {6, 5, 4, 5, 6, 3, 2, 1, 2, 3, 6, 5, 4, 5, 6, 3, 2, 1, 2, 3};
  for (int i = 0; i < 20; i++) assert_int_equal(((int32_t *)mxw_ndarray_data(y[0]))[i], ef[i]);
  mxw_ndarray_free(y[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("Pad", &img, 1, y, &nout, "mode", "reflect", "pad_width", "(0, 0, 0, 0, 2, 0, 0, 0)", NULL),
                   -1);
  assert_error_contains("smaller than its size 2");
  assert_int_equal(
      t_invoke("Pad", &img, 1, y, &nout, "mode", "constant", "pad_width", "(0, 1, 0, 0, 0, 0, 0, 0)", NULL), -1);
  assert_error_contains("first 4 entries");
  mxw_ndarray_free(img);
}

static void test_depth_space_roundtrip(void **state) {
  (void)state;
  /* (1, 4, 1, 1) with b = 2: channel (i*2 + j) lands at (i, j) */
  const int32_t s[4] = {1, 4, 1, 1};
  const float v[4] = {10, 11, 12, 13};
  mxw_ndarray *x = t_array(4, s, v), *y[1] = {NULL}, *z[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("depth_to_space", &x, 1, y, &nout, "block_size", "2", NULL), 0);
  for (int i = 0; i < 4; i++) assert_close(fdata(y[0])[i], v[i], 0);
  assert_int_equal(t_invoke("space_to_depth", y, 1, z, &nout, "block_size", "2", NULL), 0);
  for (int i = 0; i < 4; i++) assert_close(fdata(z[0])[i], v[i], 0);
  mxw_ndarray_free(y[0]);
  mxw_ndarray_free(z[0]);
  y[0] = NULL;
  assert_int_equal(t_invoke("depth_to_space", &x, 1, y, &nout, "block_size", "3", NULL), -1);
  assert_error_contains("block_size^2 = 9");
  mxw_ndarray_free(x);
}

/* mxw_op_infer_shape hands back int32 dims: a dim past 2^31 - 1 is an error naming it, never
 * narrowed (Reshape (2^31 - 1, 2) to (-1,) is 4294967294 elements along one axis). */
static void test_infer_shape_int32_range(void **state) {
  (void)state;
  int32_t o[1 + MXW_MAX_NDIM];
  const int32_t big[2] = {INT32_MAX, 2};
  assert_int_equal(infer1("Reshape", 2, big, o, "shape", "(-1,)", NULL), -1);
  assert_non_null(strstr(mxw_get_last_error(), "4294967294"));
  assert_non_null(strstr(mxw_get_last_error(), "2^31 - 1"));
  assert_int_equal(infer1("Reshape", 2, big, o, "shape", "(2, -1)", NULL), 0);
  assert_shape(o, 2, INT32_MAX);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reshape_codes),
      cmocka_unit_test(test_reshape_legacy_target_shape),
      cmocka_unit_test(test_reshape_errors),
      cmocka_unit_test(test_reshape_forward_and_partial_shapes),
      cmocka_unit_test(test_flatten_expand_squeeze),
      cmocka_unit_test(test_transpose_2x3),
      cmocka_unit_test(test_transpose_blocked_vs_loop),
      cmocka_unit_test(test_concat_and_stack),
      cmocka_unit_test(test_slice_negative_steps),
      cmocka_unit_test(test_split_pad_tile_repeat),
      cmocka_unit_test(test_depth_space_roundtrip),
      cmocka_unit_test(test_infer_shape_int32_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
