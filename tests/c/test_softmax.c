/* softmax, log_softmax, SoftmaxActivation, SoftmaxOutput and the regression outputs. Expected
 * values are worked by hand, or computed here in double with libm's exp (independent of the
 * library's SIMD exp). */
#include "mxw_test.h"

static mxw_ndarray *run(const char *name, mxw_ndarray **ins, int nin, const char *k1, const char *v1, const char *k2,
                        const char *v2) {
  mxw_ndarray *out[1] = {NULL};
  int n = 1;
  int rc = k2   ? t_invoke(name, ins, nin, out, &n, k1, v1, k2, v2, NULL)
           : k1 ? t_invoke(name, ins, nin, out, &n, k1, v1, NULL)
                : t_invoke(name, ins, nin, out, &n, NULL);
  if (rc != 0) fail_msg("%s", mxw_get_last_error());
  return out[0];
}

/* The label shape an op's shape inference fills in when only the data shape is known. */
static mxw_shape infer_label(const char *name, const char *key, const char *val, int ndim, const int64_t *dims) {
  int op = mxw_op_find(name);
  const mxw_op_def *def = mxw_op_get(op);
  mxw_params *p = NULL;
  if (mxw_params_create(op, key ? 1 : 0, &key, &val, &p) != 0) fail_msg("%s", mxw_get_last_error());
  mxw_shape in[2] = {mxw_shape_make(ndim, dims), {.ndim = -1}}, out[1] = {{.ndim = -1}};
  if (def->infer_shape(p->param, 2, in, 1, out) != 0) fail_msg("%s", mxw_get_last_error());
  assert_true(mxw_shape_equal(&out[0], &in[0]));
  mxw_params_free(p);
  return in[1];
}

static void assert_values(const mxw_ndarray *a, int n, const double *want, double tol) {
  assert_int_equal((int)mxw_ndarray_size(a), n);
  const float *p = (const float *)mxw_ndarray_data(a);
  for (int i = 0; i < n; i++) assert_close(p[i], want[i], tol);
}

static void test_softmax_of_1_2_3(void **state) {
  (void)state;
  int32_t s3[] = {3};
  mxw_ndarray *x = t_array(1, s3, (float[]){1, 2, 3}), *y;
  /* e^-2, e^-1, 1 over their sum 1.50321472 */
  y = run("softmax", &x, 1, NULL, NULL, NULL, NULL);
  assert_values(y, 3, (double[]){0.0900305732, 0.2447284711, 0.6652409558}, 1e-6);
  mxw_ndarray_free(y);
  y = run("_npx_log_softmax", &x, 1, NULL, NULL, NULL, NULL);
  assert_values(y, 3, (double[]){-2.4076059644, -1.4076059644, -0.4076059644}, 1e-6);
  mxw_ndarray_free(y);
  /* T = 2: softmax of (0.5, 1, 1.5) */
  y = run("softmax", &x, 1, "temperature", "2", NULL, NULL);
  assert_values(y, 3, (double[]){0.1863237232, 0.3071958953, 0.5064803815}, 1e-6);
  mxw_ndarray_free(y);
  y = run("SoftmaxActivation", &x, 1, NULL, NULL, NULL, NULL);
  assert_values(y, 3, (double[]){0.0900305732, 0.2447284711, 0.6652409558}, 1e-6);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

/* Rows of many lengths through the SIMD path (4-wide body, scalar tail), with and without a
 * temperature, against double precision. Values span [-40, 10] so some exps are tiny. */
static void test_f32_rows_on_odd_sizes(void **state) {
  (void)state;
  static const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 33, 101};
  float v[101];
  double want[101];
  for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
    int n = sizes[t];
    for (int i = 0; i < n; i++) v[i] = (float)(((i * 37) % 51) - 40) + 0.25f * (float)(i % 3);
    int32_t shape[] = {2, n};
    float v2[202];
    memcpy(v2, v, sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++) v2[n + i] = -v[i] * 0.1f;
    mxw_ndarray *x = t_array(2, shape, v2);
    /* softmax, log_softmax, T = 0.7, and T = -1.5 (exp arguments >= 0: the scalar expf path) */
    for (int variant = 0; variant < 4; variant++) {
      double temp = variant == 2 ? 0.7 : variant == 3 ? -1.5 : 1.0;
      int is_log = variant == 1;
      mxw_ndarray *y = variant == 0   ? run("softmax", &x, 1, NULL, NULL, NULL, NULL)
                       : variant == 1 ? run("log_softmax", &x, 1, NULL, NULL, NULL, NULL)
                       : variant == 2 ? run("softmax", &x, 1, "temperature", "0.7", "axis", "1")
                                      : run("softmax", &x, 1, "temperature", "-1.5", NULL, NULL);
      for (int r = 0; r < 2; r++) {
        const float *row = v2 + r * n;
        double m = row[0], sum = 0;
        for (int i = 1; i < n; i++) m = row[i] > m ? row[i] : m;
        double zw = 0; /* sum-weighted |z|: how much rounding of z enters the sum */
        for (int i = 0; i < n; i++) {
          double z = ((double)row[i] - m) / temp;
          sum += exp(z);
          zw += exp(z) * fabs(z);
        }
        zw /= sum;
        for (int i = 0; i < n; i++) {
          double z = ((double)row[i] - m) / temp;
          want[i] = is_log ? z - log(sum) : exp(z) / sum;
        }
        const float *got = (const float *)mxw_ndarray_data(y) + r * n;
        for (int i = 0; i < n; i++) {
          /* float32 rounds z = (x - m) / T to |z| ulps of 1, which exp turns into a relative
           * error of about |z| * 6e-8 (for this z and for those in the sum); log values near 0
           * carry the absolute rounding of log(sum). */
          double z = ((double)row[i] - m) / temp;
          double tol = is_log ? 1e-6 * fabs(want[i]) + 3e-7 : 2e-7 * (4 + fabs(z) + zw) * want[i] + 1e-30;
          if (fabs(got[i] - want[i]) > tol)
            fail_msg("n=%d variant %d row %d [%d]: got %.9g, expected %.9g", n, variant, r, i, got[i], want[i]);
        }
      }
      mxw_ndarray_free(y);
    }
    mxw_ndarray_free(x);
  }
}

/* Axis 0 of a (3, 2) array: the strided path. Column 0 is (1, 2, 3); column 1 is constant. */
static void test_softmax_axis0(void **state) {
  (void)state;
  int32_t shape[] = {3, 2};
  mxw_ndarray *x = t_array(2, shape, (float[]){1, 5, 2, 5, 3, 5});
  mxw_ndarray *y = run("softmax", &x, 1, "axis", "0", NULL, NULL);
  double third = 1.0 / 3;
  assert_values(y, 6, (double[]){0.0900305732, third, 0.2447284711, third, 0.6652409558, third}, 1e-6);
  mxw_ndarray_free(y);
  y = run("SoftmaxActivation", &x, 1, "mode", "channel", NULL, NULL); /* axis 1 */
  assert_values(y, 6, (double[]){0.0179862100, 0.9820137900, 0.0474258732, 0.9525741268, 0.1192029220, 0.8807970780},
                1e-6);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

/* Axis 0 of (5, 67): 64-line blocks, four lines per vector plus scalar leftovers, against
 * double precision, for softmax and log_softmax with T = 0.7. */
static void test_strided_blocks(void **state) {
  (void)state;
  enum { R = 5, C = 67 };
  int32_t shape[] = {R, C};
  float v[R * C];
  for (int i = 0; i < R * C; i++) v[i] = (float)((i * 29) % 23) * 0.5f - 5.f;
  mxw_ndarray *x = t_array(2, shape, v);
  for (int is_log = 0; is_log < 2; is_log++) {
    mxw_ndarray *y = run(is_log ? "log_softmax" : "softmax", &x, 1, "axis", "0", "temperature", "0.7");
    const float *got = (const float *)mxw_ndarray_data(y);
    for (int c = 0; c < C; c++) {
      double m = v[c], sum = 0;
      for (int r = 1; r < R; r++) m = fmax(m, v[r * C + c]);
      for (int r = 0; r < R; r++) sum += exp((v[r * C + c] - m) / 0.7);
      for (int r = 0; r < R; r++) {
        double z = (v[r * C + c] - m) / 0.7;
        assert_close(got[r * C + c], is_log ? z - log(sum) : exp(z) / sum, 2e-6);
      }
    }
    mxw_ndarray_free(y);
  }
  mxw_ndarray_free(x);
}

static void test_use_length(void **state) {
  (void)state;
  int32_t shape[] = {2, 4}, ls[] = {2};
  mxw_ndarray *x = t_array(2, shape, (float[]){1, 2, 3, 4, 1, 2, 3, 4});
  mxw_ndarray *len = NULL;
  assert_int_equal(mxw_ndarray_create(1, ls, MXW_INT32, &len), 0);
  ((int32_t *)mxw_ndarray_data(len))[0] = 2;
  ((int32_t *)mxw_ndarray_data(len))[1] = 9; /* longer than the row: the whole row */
  mxw_ndarray *ins[] = {x, len};
  mxw_ndarray *y = run("softmax", ins, 2, "use_length", "True", NULL, NULL);
  assert_values(
      y, 8, (double[]){0.2689414214, 0.7310585786, 0, 0, 0.0320586033, 0.0871443187, 0.2368828181, 0.6439142599}, 1e-6);
  mxw_ndarray_free(y);
  /* the generic path (float64 output) masks the same way */
  y = run("softmax", ins, 2, "use_length", "True", "dtype", "float64");
  assert_int_equal(mxw_ndarray_dtype(y), MXW_FLOAT64);
  const double *d = (const double *)mxw_ndarray_data(y);
  assert_close(d[0], 0.2689414214, 1e-9);
  assert_close(d[2], 0, 0);
  assert_close(d[7], 0.6439142599, 1e-9);
  mxw_ndarray_free(y);
  mxw_ndarray_free(len);
  mxw_ndarray_free(x);
}

/* (2, 3) rows: (1, 2, 3) and (1, 1, 1). The label is the data shape minus the last dim. */
static void test_softmax_output_2x3(void **state) {
  (void)state;
  int32_t shape[] = {2, 3}, ls[] = {2};
  mxw_ndarray *x = t_array(2, shape, (float[]){1, 2, 3, 1, 1, 1}), *label = t_array(1, ls, (float[]){2, 0});
  mxw_ndarray *ins[] = {x, label};
  double third = 1.0 / 3;
  mxw_ndarray *y = run("SoftmaxOutput", ins, 2, NULL, NULL, NULL, NULL);
  assert_values(y, 6, (double[]){0.0900305732, 0.2447284711, 0.6652409558, third, third, third}, 1e-6);
  mxw_ndarray_free(y);
  y = run("Softmax", ins, 2, "preserve_shape", "True", NULL, NULL);
  assert_values(y, 6, (double[]){0.0900305732, 0.2447284711, 0.6652409558, third, third, third}, 1e-6);
  mxw_ndarray_free(y);

  /* an unknown label is filled: data shape minus the last dim; with multi_output (N, rest) */
  mxw_shape lab = infer_label("SoftmaxOutput", NULL, NULL, 3, (int64_t[]){4, 5, 6});
  assert_int_equal(lab.ndim, 2);
  assert_true(lab.dims[0] == 4 && lab.dims[1] == 5);
  lab = infer_label("SoftmaxOutput", "multi_output", "True", 4, (int64_t[]){4, 5, 6, 7});
  assert_int_equal(lab.ndim, 2);
  assert_true(lab.dims[0] == 4 && lab.dims[1] == 42);

  /* a wrong label shape names both shapes */
  int32_t bad[] = {3};
  mxw_ndarray *lb = t_array(1, bad, (float[]){0, 0, 0});
  ins[1] = lb;
  mxw_ndarray *o[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("SoftmaxOutput", ins, 2, o, &n, NULL), -1);
  assert_error_contains("Operator SoftmaxOutput");
  assert_error_contains("label shape (3,)");
  mxw_ndarray_free(lb);
  mxw_ndarray_free(label);
  mxw_ndarray_free(x);
}

/* multi_output over C of (N, C, rest): data (1, 2, 2), channels (0, 1) and (2, 2). */
static void test_softmax_output_multi(void **state) {
  (void)state;
  int32_t shape[] = {1, 2, 2}, ls[] = {1, 2};
  mxw_ndarray *x = t_array(3, shape, (float[]){0, 2, 1, 2}), *label = t_array(2, ls, (float[]){0, 1});
  mxw_ndarray *ins[] = {x, label};
  mxw_ndarray *y = run("SoftmaxOutput", ins, 2, "multi_output", "True", NULL, NULL);
  assert_values(y, 4, (double[]){0.2689414214, 0.5, 0.7310585786, 0.5}, 1e-6);
  mxw_ndarray_free(y);
  mxw_ndarray_free(label);
  mxw_ndarray_free(x);
}

static void test_regression_outputs(void **state) {
  (void)state;
  int32_t shape[] = {3, 1}, ls[] = {3};
  mxw_ndarray *x = t_array(2, shape, (float[]){0, 2, -1}), *label = t_array(1, ls, (float[]){0, 0, 0});
  mxw_ndarray *ins[] = {x, label};
  mxw_ndarray *y = run("LogisticRegressionOutput", ins, 2, NULL, NULL, NULL, NULL);
  assert_values(y, 3, (double[]){0.5, 0.8807970780, 0.2689414214}, 1e-6);
  mxw_ndarray_free(y);
  y = run("LinearRegressionOutput", ins, 2, "grad_scale", "2", NULL, NULL);
  assert_values(y, 3, (double[]){0, 2, -1}, 0);
  mxw_ndarray_free(y);
  y = run("MAERegressionOutput", ins, 2, NULL, NULL, NULL, NULL);
  assert_values(y, 3, (double[]){0, 2, -1}, 0);
  mxw_ndarray_free(y);

  /* (N, 1) data fills an unknown label as (N,); other data as the data shape */
  mxw_shape lab = infer_label("LinearRegressionOutput", NULL, NULL, 2, (int64_t[]){7, 1});
  assert_int_equal(lab.ndim, 1);
  assert_true(lab.dims[0] == 7);
  lab = infer_label("LogisticRegressionOutput", NULL, NULL, 2, (int64_t[]){7, 2});
  assert_int_equal(lab.ndim, 2);
  assert_true(lab.dims[1] == 2);
  mxw_ndarray_free(label);
  mxw_ndarray_free(x);
}

static void test_errors(void **state) {
  (void)state;
  int32_t shape[] = {2, 3};
  mxw_ndarray *x = t_array(2, shape, (float[]){1, 2, 3, 4, 5, 6}), *out[1] = {NULL};
  int n = 1;
  assert_int_equal(t_invoke("softmax", &x, 1, out, &n, "axis", "2", NULL), -1);
  assert_error_contains("Operator softmax");
  assert_error_contains("axis 2 is out of range");
  assert_int_equal(t_invoke("SoftmaxActivation", &x, 1, out, &n, "mode", "spatial", NULL), -1);
  assert_error_contains("spatial");
  assert_int_equal(t_invoke("softmax", &x, 1, out, &n, "use_length", "True", NULL), -1);
  assert_error_contains("expected 2 inputs");
  assert_null(out[0]);
  mxw_ndarray *y = run("softmax", &x, 1, "axis", "-2", NULL, NULL);
  assert_close(((float *)mxw_ndarray_data(y))[0], 0.0474258732, 1e-6);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_softmax_of_1_2_3),
      cmocka_unit_test(test_f32_rows_on_odd_sizes),
      cmocka_unit_test(test_softmax_axis0),
      cmocka_unit_test(test_strided_blocks),
      cmocka_unit_test(test_use_length),
      cmocka_unit_test(test_softmax_output_2x3),
      cmocka_unit_test(test_softmax_output_multi),
      cmocka_unit_test(test_regression_outputs),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
