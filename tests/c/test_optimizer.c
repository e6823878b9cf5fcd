/* The optimizer update ops (csrc/ops/optimizer.c) against hand-worked values of MXNet 1.9.1's
 * formulas: in-place calls (out = weight), states written through the inputs, the float32
 * master copy of the mp_ variants, type and shape errors. */
#include "mxw_test.h"

static mxw_ndarray *t_typed(int dtype, int n, const double *vals) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(1, (int32_t[]){n}, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  if (vals) mxw_convert(vals, MXW_FLOAT64, mxw_ndarray_data(a), dtype, n);
  return a;
}
static void t_expect_values(const mxw_ndarray *a, const double *want, int n, double tol) {
  double got[16];
  assert_int_equal((int)mxw_ndarray_size(a), n);
  mxw_convert(mxw_ndarray_data(a), mxw_ndarray_dtype(a), got, MXW_FLOAT64, n);
  for (int i = 0; i < n; i++) assert_close(got[i], want[i], tol);
}

static void test_sgd_update_in_place(void **state) {
  (void)state;
  /* w = [1, -2, 3], g = [0.5, 4, -1], lr 0.1, wd 0.01, rescale_grad 0.5, clip_gradient 1:
   * rescaled g = [0.25, 2, -0.5] -> clipped [0.25, 1, -0.5];
   * (1 - 0.001) w - 0.1 g' = [0.974, -2.098, 3.047] */
  mxw_ndarray *ins[2] = {t_array(1, (int32_t[]){3}, (float[]){1, -2, 3}),
                         t_array(1, (int32_t[]){3}, (float[]){0.5f, 4, -1})};
  mxw_ndarray *out[1] = {ins[0]};
  int nout = 1;
  assert_int_equal(t_invoke("sgd_update", ins, 2, out, &nout, "lr", "0.1", "wd", "0.01", "rescale_grad", "0.5",
                            "clip_gradient", "1", NULL),
                   0);
  t_expect_f32(ins[0], (float[]){0.974f, -2.098f, 3.047f}, 3, 1e-6);
  /* float64 and no clipping: w - 0.1 * 0.5 g = [0.975, -2.2, 3.05] */
  mxw_ndarray *d[2] = {t_array_f64(1, (int32_t[]){3}, (double[]){1, -2, 3}),
                       t_array_f64(1, (int32_t[]){3}, (double[]){0.5, 4, -1})};
  out[0] = NULL;
  assert_int_equal(t_invoke("sgd_update", d, 2, out, &nout, "lr", "0.1", "rescale_grad", "0.5", NULL), 0);
  t_expect_f64(out[0], (double[]){0.975, -2.2, 3.05}, 3, 1e-7);
  t_expect_f64(d[0], (double[]){1, -2, 3}, 3, 0); /* a fresh output leaves the weight */
  mxw_ndarray_free(out[0]);
  for (int i = 0; i < 2; i++) mxw_ndarray_free(ins[i]), mxw_ndarray_free(d[i]);
}

static void test_sgd_mom_update_writes_momentum(void **state) {
  (void)state;
  /* mom = 0.9 [0.1, 0, -0.2] - 0.1*0.01 w - 0.1 * 0.5 g = [0.064, -0.198, -0.133]; out = w + mom */
  mxw_ndarray *ins[3] = {t_array(1, (int32_t[]){3}, (float[]){1, -2, 3}),
                         t_array(1, (int32_t[]){3}, (float[]){0.5f, 4, -1}),
                         t_array(1, (int32_t[]){3}, (float[]){0.1f, 0, -0.2f})};
  mxw_ndarray *out[1] = {ins[0]};
  int nout = 1;
  assert_int_equal(t_invoke("sgd_mom_update", ins, 3, out, &nout, "lr", "0.1", "momentum", "0.9", "wd", "0.01",
                            "rescale_grad", "0.5", NULL),
                   0);
  t_expect_f32(ins[2], (float[]){0.064f, -0.198f, -0.133f}, 3, 1e-6);
  t_expect_f32(ins[0], (float[]){1.064f, -2.198f, 2.867f}, 3, 1e-6);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(ins[i]);
}

static void test_mp_sgd_float16_master_copy(void **state) {
  (void)state;
  /* float16 weight with a float32 master copy: w32 = [1, -2, 3] - 0.1 [0.5, 4, -1] */
  mxw_ndarray *ins[3] = {t_typed(MXW_FLOAT16, 3, (double[]){0, 0, 0}), t_typed(MXW_FLOAT16, 3, (double[]){0.5, 4, -1}),
                         t_typed(MXW_FLOAT32, 3, (double[]){1, -2, 3})};
  mxw_ndarray *out[1] = {ins[0]};
  int nout = 1;
  assert_int_equal(t_invoke("mp_sgd_update", ins, 3, out, &nout, "lr", "0.1", NULL), 0);
  t_expect_values(ins[2], (double[]){0.95, -2.4, 3.1}, 3, 1e-6);
  t_expect_values(ins[0], (double[]){0.95, -2.4, 3.1}, 3, 1e-3); /* float16 rounding */
  assert_int_equal(mxw_ndarray_dtype(ins[0]), MXW_FLOAT16);
  /* the master copy must be float32 */
  mxw_ndarray *bad = t_typed(MXW_FLOAT16, 3, NULL);
  mxw_ndarray *ins2[3] = {ins[0], ins[1], bad};
  assert_int_equal(t_invoke("mp_sgd_update", ins2, 3, out, &nout, "lr", "0.1", NULL), -1);
  assert_error_contains("weight32");
  assert_error_contains("float32");
  for (int i = 0; i < 3; i++) mxw_ndarray_free(ins[i]);
  mxw_ndarray_free(bad);
}

static void test_sgd_float16_without_master_copy(void **state) {
  (void)state;
  /* the plain op on float16 weights computes through float32: [1, -2, 3] - 0.5 [1, 1, 1] */
  mxw_ndarray *ins[2] = {t_typed(MXW_FLOAT16, 3, (double[]){1, -2, 3}), t_typed(MXW_FLOAT16, 3, (double[]){1, 1, 1})};
  mxw_ndarray *out[1] = {ins[0]};
  int nout = 1;
  assert_int_equal(t_invoke("sgd_update", ins, 2, out, &nout, "lr", "0.5", NULL), 0);
  t_expect_values(ins[0], (double[]){0.5, -2.5, 2.5}, 3, 0);
  for (int i = 0; i < 2; i++) mxw_ndarray_free(ins[i]);
}

static void test_adam_update(void **state) {
  (void)state;
  /* one Adam step from zero states, lr 0.01, beta1 0.9, beta2 0.999, epsilon 1e-8, wd 0.1:
   * g' = g + 0.1 w = [0.6, 3.8]; m = 0.1 g' = [0.06, 0.38]; v = 0.001 g'^2 = [0.00036, 0.01444];
   * out = w - 0.01 m / (sqrt(v) + 1e-8) */
  mxw_ndarray *ins[4] = {t_array(1, (int32_t[]){2}, (float[]){1, -2}), t_array(1, (int32_t[]){2}, (float[]){0.5f, 4}),
                         t_array(1, (int32_t[]){2}, NULL), t_array(1, (int32_t[]){2}, NULL)};
  memset(mxw_ndarray_data(ins[2]), 0, 8);
  memset(mxw_ndarray_data(ins[3]), 0, 8);
  mxw_ndarray *out[1] = {ins[0]};
  int nout = 1;
  assert_int_equal(t_invoke("adam_update", ins, 4, out, &nout, "lr", "0.01", "wd", "0.1", NULL), 0);
  t_expect_f32(ins[2], (float[]){0.06f, 0.38f}, 2, 1e-6);
  t_expect_f32(ins[3], (float[]){0.00036f, 0.01444f}, 2, 1e-6);
  const double o0 = 1 - 0.01 * 0.06 / (sqrt(0.00036) + 1e-8), o1 = -2 - 0.01 * 0.38 / (sqrt(0.01444) + 1e-8);
  t_expect_f32(ins[0], (float[]){(float)o0, (float)o1}, 2, 1e-6);
  for (int i = 0; i < 4; i++) mxw_ndarray_free(ins[i]);
}

static void test_lamb_phase2_trust_ratio(void **state) {
  (void)state;
  /* out = w - lr * r1/r2 * g = [1, 2] - 0.1 * (2/4) [1, -1] = [0.95, 2.05]; with r2 = 0 the
   * ratio is 1: [0.9, 2.1]; upper_bound 1 caps r1: ratio 1/4 */
  mxw_ndarray *ins[4] = {t_array(1, (int32_t[]){2}, (float[]){1, 2}), t_array(1, (int32_t[]){2}, (float[]){1, -1}),
                         t_array(1, (int32_t[]){1}, (float[]){2}), t_array(1, (int32_t[]){1}, (float[]){4})};
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("lamb_update_phase2", ins, 4, out, &nout, "lr", "0.1", NULL), 0);
  t_expect_f32(out[0], (float[]){0.95f, 2.05f}, 2, 1e-6);
  assert_int_equal(t_invoke("lamb_update_phase2", ins, 4, out, &nout, "lr", "0.1", "upper_bound", "1", NULL), 0);
  t_expect_f32(out[0], (float[]){0.975f, 2.025f}, 2, 1e-6);
  *(float *)mxw_ndarray_data(ins[3]) = 0;
  assert_int_equal(t_invoke("lamb_update_phase2", ins, 4, out, &nout, "lr", "0.1", NULL), 0);
  t_expect_f32(out[0], (float[]){0.9f, 2.1f}, 2, 1e-6);
  mxw_ndarray_free(out[0]);
  /* r1 must hold one value */
  mxw_ndarray *r = t_array(1, (int32_t[]){2}, (float[]){1, 1});
  mxw_ndarray *bad[4] = {ins[0], ins[1], r, ins[3]};
  out[0] = NULL;
  assert_int_equal(t_invoke("lamb_update_phase2", bad, 4, out, &nout, "lr", "0.1", NULL), -1);
  assert_error_contains("r1 shape incorrect");
  mxw_ndarray_free(r);
  for (int i = 0; i < 4; i++) mxw_ndarray_free(ins[i]);
}

static void test_errors_and_schema(void **state) {
  (void)state;
  /* integer weights: MXNet's MSHADOW_REAL_TYPE_SWITCH message */
  mxw_ndarray *ins[2] = {NULL, NULL};
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){2}, MXW_INT32, &ins[0]), 0);
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){2}, MXW_INT32, &ins[1]), 0);
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("sgd_update", ins, 2, out, &nout, "lr", "0.1", NULL), -1);
  assert_error_contains("only support floating point types");
  mxw_ndarray_free(ins[0]);
  mxw_ndarray_free(ins[1]);
  /* lr is required; unknown attributes are refused */
  int op = mxw_op_find("sgd_mom_update");
  mxw_params *p = NULL;
  assert_int_equal(mxw_params_create(op, 0, NULL, NULL, &p), -1);
  assert_error_contains("lr");
  assert_int_equal(mxw_params_create(op, 2, (const char *[]){"lr", "beta1"}, (const char *[]){"0.1", "0.9"}, &p), -1);
  assert_error_contains("beta1");
  /* lamb phase 1 requires t and wd, as MXNet */
  op = mxw_op_find("lamb_update_phase1");
  assert_int_equal(mxw_params_create(op, 1, (const char *[]){"t"}, (const char *[]){"1"}, &p), -1);
  assert_error_contains("wd");
  /* sparse aliases and the mutated inputs reach the registry */
  assert_int_equal(mxw_op_find("_sparse_adam_update"), mxw_op_find("adam_update"));
  const char *json = mxw_registry_json();
  assert_non_null(strstr(json, "\"name\":\"rmspropalex_update\""));
  assert_non_null(strstr(json, "\"inputs\":[\"weight\",\"grad\",\"n\",\"g\",\"delta\"]"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sgd_update_in_place),
      cmocka_unit_test(test_sgd_mom_update_writes_momentum),
      cmocka_unit_test(test_mp_sgd_float16_master_copy),
      cmocka_unit_test(test_sgd_float16_without_master_copy),
      cmocka_unit_test(test_adam_update),
      cmocka_unit_test(test_lamb_phase2_trust_ratio),
      cmocka_unit_test(test_errors_and_schema),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
