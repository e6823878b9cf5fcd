/* The graph executor (csrc/graph/exec.c) beyond test_symbol_json.c: a deep Dense chain whose
 * intermediates are planned in place, with relu fused into its producer and arena blocks reused
 * (checked against a float64 reference loop), rebinding on a new input shape, monitoring
 * (registerOpHook: every node's inputs and outputs named and readable), mxw_sym_infer's request
 * parser, and the executor's errors with MXNet-style messages. */
#include "cov_graph.h"

/* x -> [FullyConnected(num_hidden h) -> relu] x 3 -> FullyConnected(num_hidden 2) -> out */
static mxw_symbol *dense_chain(void) {
  mxw_symbol *cur = cg_var("x");
  const char *nh[4] = {"5", "4", "3", "2"};
  for (int l = 0; l < 4; l++) {
    char name[32];
    snprintf(name, sizeof name, "fc%d", l);
    mxw_symbol *fc = cg_op("FullyConnected", name, 1, &cur, "num_hidden", nh[l], NULL); /* w, b: new variables */
    assert_non_null(fc);
    mxw_sym_free(cur);
    cur = fc;
    if (l == 3) break;
    snprintf(name, sizeof name, "relu%d", l);
    mxw_symbol *act = cg_op("Activation", name, 1, &cur, "act_type", "relu", NULL);
    mxw_sym_free(cur);
    cur = act;
  }
  return cur;
}

static void ref_dense(int n, int k, int m, const double *x, const float *w, const float *b, int relu, double *y) {
  for (int r = 0; r < n; r++)
    for (int j = 0; j < m; j++) {
      double s = b[j];
      for (int c = 0; c < k; c++) s += x[r * k + c] * w[j * k + c];
      y[r * m + j] = relu && s < 0 ? 0 : s;
    }
}

static void test_chain_inplace_fusion_rebind(void **state) {
  (void)state;
  mxw_symbol *s = dense_chain();
  mxw_executor *ex = cg_exec(s);
  /* inputs in list_inputs order: x, fc0_weight, fc0_bias, fc1_weight, ... */
  assert_int_equal(mxw_exec_num_inputs(ex), 9);
  assert_string_equal(mxw_exec_input_name(ex, 1), "fc0_weight");
  assert_string_equal(mxw_exec_input_name(ex, 8), "fc3_bias");
  assert_null(mxw_exec_input_name(ex, 9));
  assert_int_equal(mxw_exec_num_outputs(ex), 1);
  assert_int_equal(mxw_exec_num_fused(ex), 0); /* not planned yet */
  const int dims[5] = {6, 5, 4, 3, 2};
  mxw_ndarray *in[9] = {NULL};
  for (int l = 0; l < 4; l++) {
    in[1 + 2 * l] = t_array(2, (int32_t[]){dims[l + 1], dims[l]}, NULL);
    in[2 + 2 * l] = t_array(1, (int32_t[]){dims[l + 1]}, NULL);
    float *w = mxw_ndarray_data(in[1 + 2 * l]), *b = mxw_ndarray_data(in[2 + 2 * l]);
    for (int i = 0; i < dims[l + 1] * dims[l]; i++) w[i] = (float)((i * 5 + l) % 7 - 3) * 0.25f;
    for (int i = 0; i < dims[l + 1]; i++) b[i] = (float)(i % 3 - 1) * 0.5f;
  }
  for (int pass = 0; pass < 3; pass++) {
    int n = pass == 1 ? 4 : 2; /* 2, 4, then 2 again: two rebinds after the first bind */
    in[0] = t_array(2, (int32_t[]){n, 6}, NULL);
    float *x = mxw_ndarray_data(in[0]);
    for (int i = 0; i < n * 6; i++) x[i] = (float)((i * 3) % 11 - 5) * 0.3f;
    mxw_ndarray *out[1] = {NULL};
    int nout = 1;
    assert_int_equal(mxw_exec_forward(ex, 9, in, 0, &nout, out), 0);
    double a[64], b[64];
    for (int i = 0; i < n * 6; i++) a[i] = x[i];
    for (int l = 0; l < 4; l++) {
      ref_dense(n, dims[l], dims[l + 1], a, mxw_ndarray_data(in[1 + 2 * l]), mxw_ndarray_data(in[2 + 2 * l]), l < 3, b);
      memcpy(a, b, sizeof(double) * (size_t)(n * dims[l + 1]));
    }
    t_expect_shape(out[0], 2, (int32_t[]){n, 2});
    const float *y = mxw_ndarray_data(out[0]);
    for (int i = 0; i < n * 2; i++) assert_close(y[i], a[i], 1e-5);
    /* each relu follows a FullyConnected whose output only it reads: applied by the producer */
    assert_int_equal(mxw_exec_num_fused(ex), 3);
    assert_true(mxw_exec_arena_bytes(ex) > 0);
    mxw_ndarray_free(out[0]);
    mxw_ndarray_free(in[0]);
  }
  int32_t stats[3];
  assert_int_equal(mxw_exec_stats(ex, stats), 0);
  assert_int_equal(stats[0], 3);
  assert_int_equal(stats[1], 0);
  /* errors: the input count, the room for outputs, an unbound input whose shape nothing gives */
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(mxw_exec_forward(ex, 8, in, 0, &nout, out), -1);
  assert_error_contains("the graph has 9 inputs, 8 given");
  nout = 0;
  in[0] = t_array(2, (int32_t[]){2, 6}, NULL);
  assert_int_equal(mxw_exec_forward(ex, 9, in, 0, &nout, out), -1);
  assert_error_contains("room for 0 outputs given, the graph has 1");
  mxw_ndarray_free(in[0]);
  in[0] = NULL;
  nout = 1;
  assert_int_equal(mxw_exec_forward(ex, 9, in, 0, &nout, out), -1);
  assert_error_contains("input 'x' is not bound and its shape cannot be inferred");
  /* a weight of the wrong shape: the node says which input and what it needs */
  in[0] = t_array(2, (int32_t[]){2, 6}, NULL);
  mxw_ndarray *w0 = in[1];
  in[1] = t_array(2, (int32_t[]){5, 7}, NULL);
  assert_int_equal(mxw_exec_forward(ex, 9, in, 0, &nout, out), -1);
  assert_error_contains("node 'fc0' (FullyConnected)");
  mxw_ndarray_free(in[1]);
  in[1] = w0;
  mxw_ndarray_free(in[0]);
  for (int i = 1; i < 9; i++) mxw_ndarray_free(in[i]);
  mxw_exec_free(ex);
  assert_int_equal(mxw_exec_create(NULL, &ex), -1);
  assert_error_contains("NULL argument");
  mxw_sym_free(s);
}

/* x + y with y float64: the node reports the dtype conflict. */
static void test_dtype_conflict(void **state) {
  (void)state;
  mxw_symbol *x = cg_var("x"), *y = cg_var("y");
  mxw_symbol *ins[2] = {x, y};
  mxw_symbol *s = cg_op("elemwise_add", "add", 2, ins, NULL);
  mxw_executor *ex = cg_exec(s);
  mxw_ndarray *a = t_array(1, (int32_t[]){2}, NULL), *b = t_array_f64(1, (int32_t[]){2}, NULL);
  mxw_ndarray *in[2] = {a, b}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(mxw_exec_forward(ex, 2, in, 0, &nout, out), -1);
  assert_error_contains("node 'add' (elemwise_add)");
  assert_error_contains("float64");
  mxw_ndarray_free(a);
  mxw_ndarray_free(b);
  mxw_exec_free(ex);
  mxw_sym_free(s);
  mxw_sym_free(x);
  mxw_sym_free(y);
}

/* registerOpHook: x -> m = x * 2 -> r = relu(m) -> shape_array(r). None of the three registers
 * FListInputNames in MXNet 1.9.1, so their inputs are named input<i> (src/common/utils.cc). */
static void test_monitor(void **state) {
  (void)state;
  mxw_symbol *x = cg_var("x");
  mxw_symbol *m = cg_op("_mul_scalar", "m", 1, &x, "scalar", "2", NULL);
  mxw_symbol *r = cg_op("Activation", "r", 1, &m, "act_type", "relu", NULL);
  mxw_symbol *sa = cg_op("shape_array", "sa", 1, &r, NULL);
  mxw_symbol *heads[2] = {r, sa}, *g = NULL;
  assert_int_equal(mxw_sym_group(2, heads, &g), 0);
  mxw_executor *ex = cg_exec(g);
  mxw_ndarray *xa = t_array(1, (int32_t[]){3}, (float[]){1, -2, 3});
  mxw_ndarray *out[2] = {NULL, NULL}, *e = NULL;
  int nout = 2;
  assert_int_equal(mxw_exec_entry_copy(ex, 0, &e), -1);
  assert_error_contains("entries can be read only after a monitored run");
  assert_int_equal(mxw_exec_set_monitor(ex, 1), 0);
  assert_int_equal(mxw_exec_set_monitor(NULL, 1), -1);
  assert_error_contains("NULL executor");
  assert_int_equal(mxw_exec_forward(ex, 1, &xa, 0, &nout, out), 0);
  t_expect_f32(out[0], (float[]){2, 0, 6}, 3, 0);
  assert_int_equal(((int64_t *)mxw_ndarray_data(out[1]))[0], 3);
  const char *info = mxw_exec_monitor_info(ex);
  assert_non_null(info);
  assert_string_equal(info,
                      "[{\"node\":\"m\",\"op\":\"_mul_scalar\",\"name\":\"m_input0\",\"entry\":0,\"input\":true},"
                      "{\"node\":\"m\",\"op\":\"_mul_scalar\",\"name\":\"m_output\",\"entry\":1,\"input\":false},"
                      "{\"node\":\"r\",\"op\":\"Activation\",\"name\":\"r_input0\",\"entry\":1,\"input\":true},"
                      "{\"node\":\"r\",\"op\":\"Activation\",\"name\":\"r_output\",\"entry\":2,\"input\":false},"
                      "{\"node\":\"sa\",\"op\":\"shape_array\",\"name\":\"sa_input0\",\"entry\":2,\"input\":true},"
                      "{\"node\":\"sa\",\"op\":\"shape_array\",\"name\":\"sa_output\",\"entry\":3,\"input\":false}]");
  /* entry 1: m's output, kept in its own buffer (not overwritten in place by relu) */
  assert_int_equal(mxw_exec_entry_copy(ex, 1, &e), 0);
  t_expect_f32(e, (float[]){2, -4, 6}, 3, 0);
  mxw_ndarray_free(e);
  assert_int_equal(mxw_exec_entry_copy(ex, 0, &e), 0);
  t_expect_f32(e, (float[]){1, -2, 3}, 3, 0);
  mxw_ndarray_free(e);
  assert_int_equal(mxw_exec_entry_copy(ex, 4, &e), -1);
  assert_error_contains("entry 4 out of range");
  assert_int_equal(mxw_exec_entry_copy(ex, -1, &e), -1);
  assert_error_contains("entry -1 out of range");
  assert_int_equal(mxw_exec_entry_copy(NULL, 0, &e), -1);
  assert_error_contains("NULL argument");
  assert_null(mxw_exec_monitor_info(NULL));
  assert_error_contains("NULL executor");
  /* monitoring off: a plain plan again, same values */
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  assert_int_equal(mxw_exec_set_monitor(ex, 0), 0);
  assert_int_equal(mxw_exec_forward(ex, 1, &xa, 0, &nout, out), 0);
  t_expect_f32(out[0], (float[]){2, 0, 6}, 3, 0);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  mxw_ndarray_free(xa);
  mxw_exec_free(ex);
  /* FullyConnected lists its input names: fc_data, fc_weight, fc_bias */
  mxw_symbol *fc = cg_op("FullyConnected", "fc", 1, &x, "num_hidden", "1", NULL);
  ex = cg_exec(fc);
  assert_int_equal(mxw_exec_set_monitor(ex, 1), 0);
  mxw_ndarray *fin[3] = {t_array(2, (int32_t[]){1, 2}, (float[]){1, 2}), t_array(2, (int32_t[]){1, 2}, (float[]){3, 4}),
                         t_array(1, (int32_t[]){1}, (float[]){0.5f})};
  nout = 1;
  assert_int_equal(mxw_exec_forward(ex, 3, fin, 0, &nout, out), 0);
  t_expect_f32(out[0], (float[]){11.5f}, 1, 0);
  info = mxw_exec_monitor_info(ex);
  assert_non_null(strstr(info, "\"name\":\"fc_data\",\"entry\":0"));
  assert_non_null(strstr(info, "\"name\":\"fc_weight\",\"entry\":1"));
  assert_non_null(strstr(info, "\"name\":\"fc_bias\",\"entry\":2"));
  assert_non_null(strstr(info, "\"name\":\"fc_output\",\"entry\":3"));
  mxw_ndarray_free(out[0]);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(fin[i]);
  mxw_exec_free(ex);
  mxw_sym_free(fc);
  mxw_sym_free(g);
  mxw_sym_free(sa);
  mxw_sym_free(r);
  mxw_sym_free(m);
  mxw_sym_free(x);
}

/* mxw_sym_infer's request: {"shapes": {name: [dims]}, "dtypes": {name: flag}}. */
static void test_infer_requests(void **state) {
  (void)state;
  mxw_symbol *x = cg_var("x");
  mxw_symbol *fc = cg_op("FullyConnected", "fc", 1, &x, "num_hidden", "3", NULL);
  const char *r = mxw_sym_infer(fc, "{\"shapes\": {\"x\": [2, 4]}, \"dtypes\": {\"x\": 1}}");
  assert_non_null(r);
  assert_non_null(strstr(r, "{\"name\":\"fc_weight\",\"shape\":[3,4],\"dtype\":1}"));
  assert_non_null(strstr(r, "\"outputs\":[{\"shape\":[2,3],\"dtype\":1}]"));
  /* nothing known: shapes null, not complete */
  r = mxw_sym_infer(fc, "{}");
  assert_non_null(r);
  assert_non_null(strstr(r, "\"complete\":false"));
  assert_null(mxw_sym_infer(fc, "{\"shapes\": "));
  assert_error_contains("invalid inference request");
  assert_null(mxw_sym_infer(fc, "{\"shapes\": {\"x\": 3}}"));
  assert_error_contains("shape for 'x' must be an array of at most 10 dims");
  assert_null(mxw_sym_infer(fc, "{\"shapes\": {\"x\": [1,1,1,1,1,1,1,1,1,1,1]}}"));
  assert_error_contains("shape for 'x' must be an array of at most 10 dims");
  assert_null(mxw_sym_infer(fc, "{\"shapes\": {\"z\": [1]}}"));
  assert_error_contains("cannot infer with a shape for 'z': the graph has no input of that name");
  assert_null(mxw_sym_infer(fc, NULL));
  assert_error_contains("NULL argument");
  /* a conflicting weight shape: the node names the input */
  assert_null(mxw_sym_infer(fc, "{\"shapes\": {\"x\": [2, 4], \"fc_weight\": [3, 5]}}"));
  assert_error_contains("node 'fc' (FullyConnected)");
  mxw_sym_free(fc);
  mxw_sym_free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chain_inplace_fusion_rebind),
      cmocka_unit_test(test_dtype_conflict),
      cmocka_unit_test(test_monitor),
      cmocka_unit_test(test_infer_requests),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
