/* Symbols through the C API (csrc/graph/symbol.c) and the symbol JSON reader's error branches
 * (csrc/graph/json.c) beyond test_symbol_json.c: composition errors, group / output / internals /
 * substitute / set_attrs as the JS Symbol uses them (values checked by running the graphs on
 * hand-worked inputs), crafted JSON texts for each error the reader gives (MXNet-style
 * messages), the unsupported-operator report's limits, the writer's escapes, and the string map
 * (strmap.h) growing past its first size. */
#include "cov_graph.h"
#include "graph/strmap.h"

static void test_compose_errors(void **state) {
  (void)state;
  mxw_symbol *x = cg_var("x"), *y = cg_var("y");
  mxw_symbol *xy[2] = {x, y}, *g = NULL;
  assert_null(cg_op("relu", "r", 2, xy, NULL));
  assert_error_contains("Operator relu: 2 inputs given, it takes 1");
  assert_int_equal(mxw_sym_group(2, xy, &g), 0);
  assert_int_equal(mxw_sym_num_outputs(g), 2);
  assert_null(cg_op("relu", "r", 1, &g, NULL));
  assert_error_contains("Operator relu: input data (0) must have exactly one output, it has 2");
  /* a variadic op's inputs cannot be made up */
  assert_null(cg_op("add_n", "s", 1, &x, "num_args", "3", NULL));
  assert_error_contains("Operator add_n: all 3 inputs must be given");
  /* missing inputs become variables "<name>_<input>" copying the node's attributes, whose hints
   * must parse */
  assert_null(cg_op("FullyConnected", "fc", 1, &x, "num_hidden", "2", "__shape__", "(2, x)", NULL));
  assert_error_contains("variable 'fc_weight': attribute __shape__ = '(2, x)' is not a valid shape");
  mxw_symbol *bad = NULL;
  assert_int_equal(mxw_sym_compose(-5, "q", 0, NULL, NULL, 0, NULL, &bad), -1);
  assert_error_contains("unknown operator id -5");
  assert_int_equal(mxw_sym_group(1, (mxw_symbol *[]){NULL}, &bad), -1);
  assert_error_contains("symbol 0 is NULL");
  assert_int_equal(mxw_sym_output(g, 2, &bad), -1);
  assert_error_contains("output index 2 out of range (the symbol has 2 outputs)");
  mxw_sym_free(g);
  mxw_sym_free(x);
  mxw_sym_free(y);
}

/* (x * 2) + y: internals lists every node's outputs; substitute puts z * 10 in place of y;
 * set_attrs on the head, on a grouped symbol, on a variable with a bad hint. */
static void test_group_internals_substitute_attrs(void **state) {
  (void)state;
  mxw_symbol *x = cg_var("x"), *y = cg_var("y");
  mxw_symbol *m = cg_op("_mul_scalar", "m", 1, &x, "scalar", "2", NULL);
  mxw_symbol *my[2] = {m, y};
  mxw_symbol *s = cg_op("elemwise_add", "add", 2, my, NULL);
  mxw_symbol *in = NULL;
  assert_int_equal(mxw_sym_internals(s, &in), 0);
  assert_int_equal(mxw_sym_num_outputs(in), 4); /* x, m, y, add */
  const char *info = mxw_sym_info(in);
  assert_non_null(info);
  assert_non_null(strstr(info, "\"outputs\":[\"x\",\"m_output\",\"y\",\"add_output\"]"));
  mxw_symbol *o1 = NULL;
  assert_int_equal(mxw_sym_output(in, 1, &o1), 0);
  assert_non_null(strstr(mxw_sym_info(o1), "\"name\":\"m\""));
  /* substitute y -> z * 10 */
  mxw_symbol *z = cg_var("z");
  mxw_symbol *z10 = cg_op("_mul_scalar", "z10", 1, &z, "scalar", "10", NULL);
  mxw_symbol *sub = NULL;
  const char *names[2] = {"y", "nosuch"};
  mxw_symbol *subs[2] = {z10, z10};
  assert_int_equal(mxw_sym_substitute(s, 2, names, subs, &sub), 0);
  mxw_executor *ex = cg_exec(sub);
  assert_int_equal(mxw_exec_num_inputs(ex), 2);
  assert_string_equal(mxw_exec_input_name(ex, 0), "x");
  assert_string_equal(mxw_exec_input_name(ex, 1), "z");
  mxw_ndarray *xa = t_array(1, (int32_t[]){2}, (float[]){1, 2}), *za = t_array(1, (int32_t[]){2}, (float[]){3, 4});
  mxw_ndarray *ins[2] = {xa, za}, *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(mxw_exec_forward(ex, 2, ins, 0, &nout, out), 0);
  t_expect_f32(out[0], (float[]){32, 44}, 2, 0); /* 2x + 10z */
  mxw_ndarray_free(out[0]);
  mxw_exec_free(ex);
  /* the original graph is unchanged */
  assert_non_null(strstr(mxw_sym_info(s), "\"arguments\":[\"x\",\"y\"]"));
  assert_int_equal(mxw_sym_substitute(s, 1, names, (mxw_symbol *[]){in}, &sub), -1);
  assert_error_contains("substitute for 'y' must be a one-output symbol");
  assert_int_equal(mxw_sym_substitute(s, 1, (const char *[]){NULL}, &z10, &o1), -1);
  assert_error_contains("NULL name");
  /* attributes: the head's op params are re-parsed, so a bad value is refused here */
  assert_int_equal(mxw_sym_set_attrs(m, 1, (const char *[]){"scalar"}, (const char *[]){"3"}), 0);
  assert_int_equal(mxw_sym_set_attrs(m, 1, (const char *[]){"scalar"}, (const char *[]){"abc"}), -1);
  assert_error_contains("scalar");
  assert_int_equal(mxw_sym_set_attrs(in, 1, (const char *[]){"k"}, (const char *[]){"v"}), -1);
  assert_error_contains("cannot set attributes on a grouped symbol");
  assert_int_equal(mxw_sym_set_attrs(x, 1, (const char *[]){"__dtype__"}, (const char *[]){"float"}), -1);
  assert_error_contains("variable 'x'");
  assert_int_equal(mxw_sym_set_attrs(x, 1, (const char *[]){"__shape__"}, (const char *[]){"(2,)"}), 0);
  char *json = NULL;
  assert_int_equal(mxw_sym_tojson(x, &json), 0);
  assert_non_null(strstr(json, "\"__shape__\": \"(2,)\""));
  mxw_buffer_free(json);
  mxw_symbol *all[] = {x, y, m, s, in, o1, z, z10, sub};
  for (int i = 0; i < 9; i++) mxw_sym_free(all[i]);
  mxw_ndarray_free(xa);
  mxw_ndarray_free(za);
}

/* Attribute maps past 16 entries go through the hash index: later pairs win, existing keys are
 * kept or overwritten. */
static void test_many_attrs(void **state) {
  (void)state;
  const char *keys[40], *vals[40];
  char kb[40][16], vb[40][16];
  for (int i = 0; i < 40; i++) {
    snprintf(kb[i], sizeof kb[i], "k%d", i % 30); /* k0..k9 twice */
    snprintf(vb[i], sizeof vb[i], "v%d", i);
    keys[i] = kb[i];
    vals[i] = vb[i];
  }
  mxw_symbol *x = NULL;
  assert_int_equal(mxw_sym_var("x", 40, keys, vals, &x), 0);
  char *json = NULL;
  assert_int_equal(mxw_sym_tojson(x, &json), 0);
  assert_non_null(strstr(json, "\"k0\": \"v30\"")); /* the later pair */
  assert_non_null(strstr(json, "\"k29\": \"v29\""));
  assert_null(strstr(json, "\"v0\""));
  mxw_buffer_free(json);
  keys[3] = NULL;
  assert_int_equal(mxw_sym_set_attrs(x, 40, keys, vals), -1);
  assert_error_contains("NULL attribute key or value");
  mxw_sym_free(x);
}

/* Each crafted text's error. */
static void expect_json_error(const char *text, const char *msg) {
  mxw_symbol *s = NULL;
  if (mxw_sym_fromjson(text, &s) == 0) fail_msg("parsed: %s", text);
  if (!strstr(mxw_get_last_error(), msg)) fail_msg("error '%s' does not mention '%s'", mxw_get_last_error(), msg);
}

static void test_json_errors(void **state) {
  (void)state;
  expect_json_error(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"attrs\": {\"__shape__\": 3}, \"inputs\": []}], "
      "\"arg_nodes\": [0], \"heads\": [[0, 0, 0]]}",
      "node 0 ('x'): attribute '__shape__' is not a string");
  expect_json_error(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"attrs\": [], \"inputs\": []}], "
      "\"arg_nodes\": [0], \"heads\": [[0, 0, 0]]}",
      "node 0 ('x'): attributes must be an object");
  expect_json_error(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": [], \"subgraphs\": {}}], "
      "\"arg_nodes\": [0], \"heads\": [[0, 0, 0]]}",
      "node 0 ('x'): \"subgraphs\" must be an array");
  expect_json_error(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": {}}], "
      "\"arg_nodes\": [0], \"heads\": [[0, 0, 0]]}",
      "node 0 ('x'): \"inputs\" must be an array");
  expect_json_error(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
      "{\"op\": \"null\", \"name\": \"y\", \"inputs\": [[0, 0, 0]]}], "
      "\"arg_nodes\": [0, 1], \"heads\": [[1, 0, 0]]}",
      "node 1 ('y'): a variable cannot have inputs");
  expect_json_error("{\"nodes\": [1], \"heads\": []}", "invalid symbol JSON: node 0 needs string \"op\" and \"name\"");
  expect_json_error("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\"}], \"heads\": [[5, 0, 0]]}",
                    "does not name a node");
  /* a legacy hidden key on an input of an op whose attributes do not parse */
  expect_json_error(
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\"}, {\"op\": \"FullyConnected\", \"name\": \"fc\", "
      "\"param\": {\"num_hidden\": \"abc\", \"weight_lr_mult\": \"2\"}, \"inputs\": [[0, 0]]}], "
      "\"heads\": [[1, 0]]}",
      "node 1 ('fc'): ");
}

/* The unsupported-operator report: 34 unknown ops (32 named, "and 2 more"), and one op on 40
 * nodes whose names fill the listing (20 named, "and 20 more"). */
static void test_unknown_ops_report(void **state) {
  (void)state;
  size_t cap = 64 * 1024, used = 0;
  char *t = malloc(cap);
  used += (size_t)snprintf(t + used, cap - used, "{\"nodes\": [");
  for (int i = 0; i < 34; i++)
    used +=
        (size_t)snprintf(t + used, cap - used, "%s{\"op\": \"NoSuchOp%d\", \"name\": \"n%d\"}", i ? ", " : "", i, i);
  snprintf(t + used, cap - used, "], \"heads\": [[0, 0, 0]]}");
  expect_json_error(t, "unsupported operators in the graph: NoSuchOp0 (node n0); NoSuchOp1 (node n1); ");
  expect_json_error(t, "; NoSuchOp31 (node n31); and 2 more");
  used = (size_t)snprintf(t, cap, "{\"nodes\": [");
  for (int i = 0; i < 40; i++) /* names of 22 characters */
    used += (size_t)snprintf(t + used, cap - used, "%s{\"op\": \"Bar\", \"name\": \"a_long_node_name_%05d\"}",
                             i ? ", " : "", i);
  snprintf(t + used, cap - used, "], \"heads\": [[0, 0, 0]]}");
  expect_json_error(t, "unsupported operator in the graph: Bar (nodes a_long_node_name_00000, a_long_node_name_00001");
  expect_json_error(t, "a_long_node_name_00019 and 20 more)");
  free(t);
}

/* dmlc's writer escapes \r \n \\ \t \" in strings; the reader gives them back. */
static void test_writer_escapes(void **state) {
  (void)state;
  mxw_symbol *x = NULL, *back = NULL;
  assert_int_equal(mxw_sym_var("a\rb\tc\nd\\e\"f", 0, NULL, NULL, &x), 0);
  char *json = NULL;
  assert_int_equal(mxw_sym_tojson(x, &json), 0);
  assert_non_null(strstr(json, "\"name\": \"a\\rb\\tc\\nd\\\\e\\\"f\""));
  assert_int_equal(mxw_sym_fromjson(json, &back), 0);
  assert_non_null(strstr(mxw_sym_info(back), "\"name\":\"a\\rb\\tc\\nd\\\\e\\\"f\""));
  mxw_buffer_free(json);
  mxw_sym_free(x);
  mxw_sym_free(back);
}

/* Control dependencies read from JSON survive a substitution: relu(x) after y, x replaced by z. */
static void test_control_deps_substitute(void **state) {
  (void)state;
  const char *text =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
      "{\"op\": \"null\", \"name\": \"y\", \"inputs\": []}, "
      "{\"op\": \"relu\", \"name\": \"r\", \"inputs\": [[0, 0, 0]], \"control_deps\": [1]}], "
      "\"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0]]}";
  mxw_symbol *s = NULL, *z = cg_var("z"), *sub = NULL;
  assert_int_equal(mxw_sym_fromjson(text, &s), 0);
  const char *names[1] = {"x"};
  assert_int_equal(mxw_sym_substitute(s, 1, names, &z, &sub), 0);
  char *json = NULL;
  assert_int_equal(mxw_sym_tojson(sub, &json), 0);
  /* nodes in DFS order: z (0), y (1, the control dependency), r (2) */
  assert_non_null(strstr(json, "\"name\": \"z\""));
  assert_non_null(strstr(json, "\"inputs\": [[0, 0, 0]], \n      \"control_deps\": [1]"));
  mxw_buffer_free(json);
  assert_null(mxw_sym_info(NULL));
  assert_error_contains("NULL symbol");
  mxw_sym_free(s);
  mxw_sym_free(z);
  mxw_sym_free(sub);
}

/* The string map keeps every key findable as it grows past its first capacity. */
static void test_strmap_growth(void **state) {
  (void)state;
  mxw_strmap m;
  assert_int_equal(mxw_strmap_init(&m, 1), 0);
  char keys[200][12];
  for (int i = 0; i < 200; i++) {
    snprintf(keys[i], sizeof keys[i], "key%d", i);
    assert_int_equal(mxw_strmap_put(&m, keys[i], i), 0);
  }
  assert_int_equal(mxw_strmap_put(&m, keys[7], 700), 0); /* overwrite */
  for (int i = 0; i < 200; i++) {
    int *v = mxw_strmap_find(&m, keys[i]);
    assert_non_null(v);
    assert_int_equal(*v, i == 7 ? 700 : i);
  }
  assert_null(mxw_strmap_find(&m, "key200"));
  mxw_strmap_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compose_errors),     cmocka_unit_test(test_group_internals_substitute_attrs),
      cmocka_unit_test(test_many_attrs),         cmocka_unit_test(test_json_errors),
      cmocka_unit_test(test_unknown_ops_report), cmocka_unit_test(test_writer_escapes),
      cmocka_unit_test(test_strmap_growth),      cmocka_unit_test(test_control_deps_substitute),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
