/* The symbol JSON reader, writer and executor on real files MXNet wrote ($MXW_MODELS, default
 * ../shared/models): exact round trips, the 0.8 upgrade, a V1-era checkpoint run, and
 * truncations/mutations of a 0.8-era graph under ASan/UBSan. Skipped (exit 77) when the folder
 * is absent; test_symbol_json.c covers every dialect with generated fixtures. */
#include <stdlib.h>

#include "mxw_test.h"

/* MXNet >= 1.0 wrote these with the same writer: our text equals theirs but for the version. */
static void test_exact_round_trip(void **state) {
  (void)state;
  const char *files[] = {"retinaface-mnet25/16-symbol.json", "mnist-mlp-module/model-symbol.json",
                         "mxnet-fixtures/clojure-test-symbol.json"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char *text = t_read_model_file(files[i], NULL);
    mxw_symbol *s = NULL;
    assert_int_equal(mxw_sym_fromjson(text, &s), 0);
    char *out = NULL;
    assert_int_equal(mxw_sym_tojson(s, &out), 0);
    char *v = strstr(text, "\"mxnet_version\": [\"int\", ");
    assert_non_null(v);
    memcpy(v + strlen("\"mxnet_version\": [\"int\", "), "10901", 5);
    assert_string_equal(out, text);
    mxw_buffer_free(out);
    mxw_sym_free(s);
    free(text);
  }
}

static void test_legacy_upgrade_adds_aux(void **state) {
  (void)state;
  char *text = t_read_model_file("mxnet-fixtures/save_000800.json", NULL);
  mxw_symbol *s = NULL;
  assert_int_equal(mxw_sym_fromjson(text, &s), 0);
  const char *info = mxw_sym_info(s);
  assert_non_null(strstr(info, "\"aux\":[\"batchnorm0_moving_mean\",\"batchnorm0_moving_var\"]"));
  mxw_sym_free(s);
  free(text);
}

static void test_executor_runs_linreg(void **state) {
  (void)state;
  char *text = t_read_model_file("linreg-v1/model-symbol.json", NULL);
  mxw_symbol *s = NULL;
  assert_int_equal(mxw_sym_fromjson(text, &s), 0);
  mxw_executor *ex = NULL;
  assert_int_equal(mxw_exec_create(s, &ex), 0);
  assert_int_equal(mxw_exec_num_inputs(ex), 4); /* data, fc1_weight, fc1_bias, lin_reg_label */
  int32_t s12[2] = {1, 2}, s1[1] = {1};
  float xv[2] = {1, 2}, wv[2] = {0.5f, 2.0f}, bv[1] = {0.25f};
  mxw_ndarray *in[4] = {t_array(2, s12, xv), t_array(2, s12, wv), t_array(1, s1, bv), NULL};
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(mxw_exec_forward(ex, 4, in, 0, &nout, out), 0);
  assert_close(((float *)mxw_ndarray_data(out[0]))[0], 0.5 + 4.0 + 0.25, 0); /* hand-worked */
  mxw_ndarray_free(out[0]);
  /* a wrong weight shape is an error naming the parameter; the executor stays usable */
  int32_t s13[2] = {1, 3};
  float w3[3] = {1, 1, 1};
  mxw_ndarray *bad = t_array(2, s13, w3), *keep = in[1];
  in[1] = bad;
  nout = 1;
  assert_int_equal(mxw_exec_forward(ex, 4, in, 0, &nout, out), -1);
  assert_error_contains("fc1_weight");
  in[1] = keep;
  nout = 1;
  assert_int_equal(mxw_exec_forward(ex, 4, in, 0, &nout, out), 0);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(bad);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);
  mxw_exec_free(ex);
  mxw_sym_free(s);
  free(text);
}

static void test_real_file_mutations_fail_cleanly(void **state) {
  (void)state;
  /* truncations and byte mutations of a real file: an error or a graph, never a crash */
  char *text = t_read_model_file("mtcnn-legacy/det2-symbol.json", NULL);
  uint32_t seed = 7;
  t_symbol_json_mutations(text, 37, 0, 1500, "{\"shapes\": {\"data\": [1, 3, 24, 24]}}", &seed);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exact_round_trip),
      cmocka_unit_test(test_legacy_upgrade_adds_aux),
      cmocka_unit_test(test_executor_runs_linreg),
      cmocka_unit_test(test_real_file_mutations_fail_cleanly),
  };
  return t_run_real_file_tests(tests);
}
