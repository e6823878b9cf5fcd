/* Control-flow operators (_foreach, _while_loop, _cond) in C under ASan/UBSan: the fixtures of
 * tests/js/fixtures/control_flow (written in MXNet 1.9.1's layout by an emulation of dmlc's JSON
 * writer, make_fixtures.py) load, run with hand-worked results and are written back byte for
 * byte; hostile files (bad locs, missing or extra subgraphs, deep nesting, bad attributes) fail
 * with an error naming the problem and leak nothing; gradients through the three in a recorded
 * graph run equal hand-worked ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ndarray.h"
#include "mxw_test.h"

static char *read_fixture(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/js/fixtures/control_flow/%s.json", MXW_PROJECT_ROOT, name);
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = (char *)malloc((size_t)n + 1);
  if (fread(s, 1, (size_t)n, f) != (size_t)n) fail_msg("short read of %s", path);
  s[n] = 0;
  fclose(f);
  return s;
}

static mxw_symbol *load(const char *text) {
  mxw_symbol *s = NULL;
  if (mxw_sym_fromjson(text, &s) != 0) fail_msg("%s", mxw_get_last_error());
  return s;
}

static void round_trip(const char *name) {
  char *text = read_fixture(name);
  mxw_symbol *s = load(text);
  char *out = NULL;
  assert_int_equal(mxw_sym_tojson(s, &out), 0);
  assert_string_equal(out, text);
  free(out);
  mxw_sym_free(s);
  free(text);
}

static void test_round_trips(void **state) {
  (void)state;
  round_trip("foreach");
  round_trip("while_loop");
  round_trip("cond");
}

/* Runs the graph's executor; outs must be freed. */
static void run(mxw_symbol *s, int nin, mxw_ndarray **in, int nout, mxw_ndarray **outs) {
  mxw_executor *ex = NULL;
  assert_int_equal(mxw_exec_create(s, &ex), 0);
  assert_int_equal(mxw_exec_num_inputs(ex), nin);
  int n = nout;
  for (int i = 0; i < nout; i++) outs[i] = NULL;
  if (mxw_exec_forward(ex, nin, in, 0, &n, outs) != 0) fail_msg("%s", mxw_get_last_error());
  assert_int_equal(n, nout);
  mxw_exec_free(ex);
}

static void test_foreach_runs(void **state) {
  (void)state;
  char *text = read_fixture("foreach");
  mxw_symbol *s = load(text);
  /* out_t = x_t + s; s <- out_t + bias; x = [[1, 2], [3, 4], [5, 6]], s0 = [10, 20], bias = [1, -1]:
   * out0 = [11, 22], s = [12, 21]; out1 = [15, 25], s = [16, 24]; out2 = [21, 30], s = [22, 29] */
  int32_t d[] = {3, 2}, v[] = {2};
  mxw_ndarray *in[3] = {t_array(2, d, (float[]){1, 2, 3, 4, 5, 6}), t_array(1, v, (float[]){10, 20}),
                        t_array(1, v, (float[]){1, -1})};
  mxw_ndarray *out[2];
  run(s, 3, in, 2, out);
  t_expect_shape(out[0], 2, d);
  t_expect_f32(out[0], (float[]){11, 22, 15, 25, 21, 30}, 6, 0);
  t_expect_f32(out[1], (float[]){22, 29}, 2, 0);
  for (int i = 0; i < 2; i++) mxw_ndarray_free(out[i]);
  /* a second run with another length reuses the node (the subgraph plan is bound once per shape) */
  int32_t d1[] = {1, 2};
  mxw_ndarray_free(in[0]);
  in[0] = t_array(2, d1, (float[]){0, 0});
  run(s, 3, in, 2, out);
  t_expect_f32(out[0], (float[]){10, 20}, 2, 0);
  t_expect_f32(out[1], (float[]){11, 19}, 2, 0);
  for (int i = 0; i < 2; i++) mxw_ndarray_free(out[i]);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);
  mxw_sym_free(s);
  free(text);
}

static void test_while_loop_runs(void **state) {
  (void)state;
  char *text = read_fixture("while_loop");
  mxw_symbol *s = load(text);
  /* (i, s) = (0, 1), n = 3: steps give out = 2s, i += 1, s += i (old i): out rows 2, 2, 4, then the
   * rows past the last step (max_iterations 5) are zeros; final i = 3, s = 4 */
  int32_t v[] = {1};
  mxw_ndarray *in[3] = {t_array(1, v, (float[]){0}), t_array(1, v, (float[]){1}), t_array(1, v, (float[]){3})};
  mxw_ndarray *out[3];
  run(s, 3, in, 3, out);
  t_expect_shape(out[0], 2, (int32_t[]){5, 1});
  t_expect_f32(out[0], (float[]){2, 2, 4, 0, 0}, 5, 0);
  t_expect_f32(out[1], (float[]){3}, 1, 0);
  t_expect_f32(out[2], (float[]){4}, 1, 0);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(out[i]);
  /* n = 0: no step; the outputs are zeros and the loop variables as given */
  ((float *)mxw_ndarray_data(in[2]))[0] = 0;
  run(s, 3, in, 3, out);
  t_expect_f32(out[0], (float[]){0, 0, 0, 0, 0}, 5, 0);
  t_expect_f32(out[1], (float[]){0}, 1, 0);
  t_expect_f32(out[2], (float[]){1}, 1, 0);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(out[i]);
  /* n = 100: stops at max_iterations (5 steps): s = 1, 1, 2, 4, 7, 11 -> out 2, 2, 4, 8, 14 */
  ((float *)mxw_ndarray_data(in[2]))[0] = 100;
  run(s, 3, in, 3, out);
  t_expect_f32(out[0], (float[]){2, 2, 4, 8, 14}, 5, 0);
  t_expect_f32(out[1], (float[]){5}, 1, 0);
  t_expect_f32(out[2], (float[]){11}, 1, 0);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(out[i]);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);
  mxw_sym_free(s);
  free(text);
}

static void test_cond_runs(void **state) {
  (void)state;
  char *text = read_fixture("cond");
  mxw_symbol *s = load(text);
  int32_t v[] = {1}, d[] = {2};
  mxw_ndarray *in[3] = {t_array(1, v, (float[]){1}), t_array(1, d, (float[]){2, 3}), t_array(1, d, (float[]){5, 7})};
  mxw_ndarray *out[1];
  run(s, 3, in, 1, out);
  t_expect_f32(out[0], (float[]){10, 21}, 2, 0); /* then: a * b */
  mxw_ndarray_free(out[0]);
  ((float *)mxw_ndarray_data(in[0]))[0] = -1;
  run(s, 3, in, 1, out);
  t_expect_f32(out[0], (float[]){3, 4}, 2, 0); /* else: b - a */
  mxw_ndarray_free(out[0]);
  /* a predicate of two elements is refused at inference */
  mxw_ndarray_free(in[0]);
  in[0] = t_array(1, d, (float[]){1, 1});
  mxw_executor *ex = NULL;
  assert_int_equal(mxw_exec_create(s, &ex), 0);
  int n = 1;
  out[0] = NULL;
  assert_int_not_equal(mxw_exec_forward(ex, 3, in, 0, &n, out), 0);
  assert_error_contains("one element");
  mxw_exec_free(ex);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);
  mxw_sym_free(s);
  free(text);
}

/* The fixture with `from` replaced by `to` (once) must fail to load with `needle`. */
static void expect_bad(const char *name, const char *from, const char *to, const char *needle) {
  char *text = read_fixture(name);
  char *at = strstr(text, from);
  if (!at) fail_msg("'%s' not in %s", from, name);
  size_t n = strlen(text), fl = strlen(from), tl = strlen(to);
  char *bad = (char *)malloc(n - fl + tl + 1);
  memcpy(bad, text, (size_t)(at - text));
  memcpy(bad + (at - text), to, tl);
  strcpy(bad + (at - text) + tl, at + fl);
  mxw_symbol *s = NULL;
  if (mxw_sym_fromjson(bad, &s) == 0) fail_msg("%s with '%s' -> '%s' loaded", name, from, to);
  assert_error_contains(needle);
  free(bad);
  free(text);
}

static void test_hostile(void **state) {
  (void)state;
  expect_bad("foreach", "\"in_data_locs\": \"[0]\"", "\"in_data_locs\": \"[7]\"", "in_data_locs[0] is 7");
  expect_bad("foreach", "\"in_state_locs\": \"[1]\"", "\"in_state_locs\": \"[0]\"", "both name subgraph input 0");
  expect_bad("foreach", "\"remain_locs\": \"[2]\"", "\"remain_locs\": \"[2, 3]\"", "the locs name 4 inputs");
  expect_bad("foreach", "\"remain_locs\": \"[2]\"", "\"remain_locs\": \"[2\"", "not a tuple");
  expect_bad("foreach", "\"remain_locs\": \"[2]\"", "\"remain_locs_\": \"[2]\"", "required attribute 'remain_locs'");
  expect_bad("foreach", "\"num_outputs\": \"2\"", "\"num_outputs\": \"3\"", "num_outputs is 3");
  expect_bad("foreach", "\"num_args\": \"4\"", "\"num_args\": \"x\"", "not an integer");
  expect_bad("foreach", "\"subgraphs\": [", "\"subgraphs\": 5, \"x\": [", "\"subgraphs\" must be an array");
  expect_bad("foreach", "\"subgraphs\": [", "\"subgraphs\": [], \"x\": [", "takes 1 subgraph, the node has 0");
  expect_bad("foreach", "\"heads\": [[2, 0, 0], [4, 0, 0]]", "\"heads\": [[2, 0, 0], [9, 0, 0]]",
             "subgraph 0: invalid symbol JSON: head 1 does not name a node");
  expect_bad("foreach", "\"op\": \"elemwise_add\"", "\"op\": \"NoSuchOp\"", "subgraph 0: unsupported operator");
  expect_bad("while_loop", "\"func_var_locs\": \"[1, 0]\"", "\"func_var_locs\": \"[1, 5]\"", "func_var_locs[1] is 5");
  expect_bad("while_loop", "\"max_iterations\": \"5\"", "\"max_iterations\": \"0\"", "must be at least 1");
  expect_bad("while_loop", "\"cond_input_locs\": \"[0, 2]\"", "\"cond_input_locs\": \"[0]\"",
             "cond_input_locs names 1 inputs, the cond subgraph has 2");
  expect_bad("cond", "\"then_input_locs\": \"[1, 2]\"", "\"then_input_locs\": \"[1, 1]\"", "names input 1 twice");
  expect_bad("cond", "\"num_outputs\": \"1\"", "\"num_outputs\": \"2\"", "num_outputs is 2");
  /* subgraphs on an op that takes none, and on a variable */
  expect_bad("cond", "\"op\": \"elemwise_mul\"",
             "\"op\": \"elemwise_mul\", \"subgraphs\": [{\"nodes\": [], \"heads\": []}]",
             "operator elemwise_mul takes no subgraphs");
  expect_bad("cond", "\"name\": \"p\", ", "\"name\": \"p\", \"subgraphs\": [{\"nodes\": [], \"heads\": []}], ",
             "a variable cannot have subgraphs");
}

/* A chain of nested subgraphs deeper than the reader's limit fails with its message (and a
 * nesting within the limit reads). */
static char *nested(int depth) {
  size_t cap = 256 + (size_t)depth * 160;
  char *s = (char *)malloc(cap);
  size_t n = 0;
  for (int d = 0; d < depth; d++)
    n += (size_t)snprintf(s + n, cap - n,
                          "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                          "{\"op\": \"_copy\", \"name\": \"c\", \"inputs\": [[0, 0, 0]], \"subgraphs\": [");
  n += (size_t)snprintf(s + n, cap - n,
                        "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}], \"heads\": [[0, 0, 0]]}");
  for (int d = 0; d < depth; d++) n += (size_t)snprintf(s + n, cap - n, "]}], \"heads\": [[1, 0, 0]]}");
  return s;
}

static void test_deep_nesting(void **state) {
  (void)state;
  char *s = nested(40);
  mxw_symbol *sym = NULL;
  assert_int_not_equal(mxw_sym_fromjson(s, &sym), 0);
  assert_error_contains("nested more than 16 levels deep");
  free(s);
  /* within the limit the reader gets to the node, whose op takes no subgraph */
  s = nested(3);
  assert_int_not_equal(mxw_sym_fromjson(s, &sym), 0);
  assert_error_contains("operator _copy takes no subgraphs");
  free(s);
}

/* The ops without their subgraphs (an imperative call) explain what to use. */
static void test_imperative_refused(void **state) {
  (void)state;
  mxw_ndarray *out[1] = {NULL};
  int n = 1;
  assert_int_not_equal(t_invoke("_while_loop", NULL, 0, out, &n, NULL), 0);
  assert_error_contains("runs only in a graph whose node carries its subgraphs");
}

/* mxw_sym_cut_subgraph and mxw_sym_compose_subgraphs (csrc/graph/subgraph.c; used by
 * js/control_flow.mjs to trace sym.contrib.foreach): a body traced in scope "sg" (a placeholder
 * data variable, an outside variable w, an outside op 2x) is cut, composed into a _foreach node,
 * run, and written / read back. */
int mxw_sym_cut_subgraph(const mxw_symbol *g, const char *subgraph_name, int nplace, const char *const *names,
                         mxw_symbol **sub, mxw_symbol **cut);
int mxw_sym_compose_subgraphs(int op_id, const char *name, int nattr, const char *const *keys, const char *const *vals,
                              int nsub, mxw_symbol *const *subs, int num_inputs, mxw_symbol *const *inputs,
                              mxw_symbol **out);

static mxw_symbol *var(const char *name, int scoped) {
  const char *k[] = {"__subgraph_name__"}, *v[] = {"sg"};
  mxw_symbol *s = NULL;
  assert_int_equal(mxw_sym_var(name, scoped, k, v, &s), 0);
  return s;
}
static mxw_symbol *op(const char *name, const char *node, int scoped, const char *key, const char *val, int nin,
                      mxw_symbol **in) {
  const char *k[2] = {"__subgraph_name__", key}, *v[2] = {"sg", val};
  mxw_symbol *s = NULL;
  int n = (scoped ? 1 : 0) + (key ? 1 : 0);
  if (mxw_sym_compose(mxw_op_find(name), node, n, scoped ? k : k + 1, scoped ? v : v + 1, nin, in, &s) != 0)
    fail_msg("%s", mxw_get_last_error());
  return s;
}

static void test_cut_and_compose(void **state) {
  (void)state;
  mxw_symbol *x = var("x", 0), *w = var("w", 0), *ph = var("sg_data0", 1), *data = var("data", 0);
  mxw_symbol *e = op("_mul_scalar", "twice", 0, "scalar", "2", 1, &x);
  mxw_symbol *m = op("elemwise_mul", "mul", 1, NULL, NULL, 2, (mxw_symbol *[]){ph, w});
  mxw_symbol *add = op("elemwise_add", "add", 1, NULL, NULL, 2, (mxw_symbol *[]){m, e});
  mxw_symbol *g = NULL, *sub = NULL, *cut = NULL;
  assert_int_equal(mxw_sym_group(2, (mxw_symbol *[]){add, ph}, &g), 0);
  const char *names[] = {"sg_data0"};
  if (mxw_sym_cut_subgraph(g, "sg", 1, names, &sub, &cut) != 0) fail_msg("%s", mxw_get_last_error());
  /* the cut entries: w (a variable keeps its name) and 2x, in the subgraph's input order */
  assert_int_equal(mxw_sym_num_outputs(cut), 2);
  assert_int_equal(mxw_sym_num_outputs(sub), 2);
  const char *info = mxw_sym_info(sub);
  if (!strstr(info, "\"inputs\":[\"sg_data0\",\"w\",\"twice_output\"]")) fail_msg("%s", info);
  mxw_symbol *c0 = NULL, *c1 = NULL, *node = NULL;
  assert_int_equal(mxw_sym_output(cut, 0, &c0), 0);
  assert_int_equal(mxw_sym_output(cut, 1, &c1), 0);
  const char *k[] = {"num_args", "num_outputs", "num_out_data", "in_data_locs", "in_state_locs", "remain_locs"};
  const char *v[] = {"4", "2", "2", "[0]", "[]", "[1, 2]"};
  if (mxw_sym_compose_subgraphs(mxw_op_find("_foreach"), "fe", 6, k, v, 1, &sub, 3, (mxw_symbol *[]){data, c0, c1},
                                &node) != 0)
    fail_msg("%s", mxw_get_last_error());
  /* a wrong input count is refused */
  mxw_symbol *bad = NULL;
  assert_int_not_equal(
      mxw_sym_compose_subgraphs(mxw_op_find("_foreach"), "fe2", 6, k, v, 1, &sub, 2, (mxw_symbol *[]){data, c0}, &bad),
      0);
  assert_error_contains("2 inputs given, num_args says 3");
  assert_int_not_equal(mxw_sym_compose_subgraphs(mxw_op_find("relu"), "r", 0, NULL, NULL, 0, NULL, 0, NULL, &bad), 0);
  /* out_t = d_t * w + 2x, and the identity of d_t */
  int32_t d[] = {2, 2}, v2[] = {2};
  mxw_ndarray *in[3] = {t_array(2, d, (float[]){1, 2, 3, 4}), t_array(1, v2, (float[]){10, 100}),
                        t_array(1, v2, (float[]){0.5f, -1})};
  mxw_executor *ex = NULL;
  assert_int_equal(mxw_exec_create(node, &ex), 0);
  assert_string_equal(mxw_exec_input_name(ex, 0), "data");
  assert_string_equal(mxw_exec_input_name(ex, 1), "w");
  assert_string_equal(mxw_exec_input_name(ex, 2), "x");
  mxw_ndarray *out[2] = {NULL, NULL};
  int n = 2;
  if (mxw_exec_forward(ex, 3, in, 0, &n, out) != 0) fail_msg("%s", mxw_get_last_error());
  t_expect_f32(out[0], (float[]){11, 198, 31, 398}, 4, 0);
  t_expect_f32(out[1], (float[]){1, 2, 3, 4}, 4, 0);
  /* written and read back: the same text */
  char *j1 = NULL, *j2 = NULL;
  mxw_symbol *back = NULL;
  assert_int_equal(mxw_sym_tojson(node, &j1), 0);
  assert_int_equal(mxw_sym_fromjson(j1, &back), 0);
  assert_int_equal(mxw_sym_tojson(back, &j2), 0);
  assert_string_equal(j1, j2);
  free(j1);
  free(j2);
  mxw_sym_free(back);
  for (int i = 0; i < 2; i++) mxw_ndarray_free(out[i]);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);
  mxw_exec_free(ex);
  mxw_symbol *all[] = {x, w, ph, data, e, m, add, g, sub, cut, c0, c1, node};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mxw_sym_free(all[i]);
}

/* Gradients through the control-flow nodes of a recorded graph run (the hybridized-training
 * path: a training graph whose _backward_<op> nodes differentiate the subgraphs), hand-worked,
 * under ASan: every input of the fixtures gets a gradient buffer, all heads get ones. */
static void grad_case(const char *name, int nin, mxw_ndarray **in, int nout, const float *const *want) {
  char *text = read_fixture(name);
  mxw_symbol *s = load(text);
  mxw_ndarray *grads[3], *out[3];
  int32_t reqs[3] = {1, 1, 1};
  for (int i = 0; i < nin; i++) {
    grads[i] = mxw_ndarray_alloc(&in[i]->t.shape, in[i]->t.dtype);
    memset(grads[i]->t.data, 0, (size_t)mxw_shape_size(&in[i]->t.shape) * sizeof(float));
  }
  assert_int_equal(mxw_autograd_mark_variables(nin, in, grads, reqs), 0);
  mxw_executor *ex = NULL;
  assert_int_equal(mxw_exec_create(s, &ex), 0);
  int prev = mxw_autograd_set_recording(1), n = nout;
  for (int i = 0; i < nout; i++) out[i] = NULL;
  int rc = mxw_exec_forward(ex, nin, in, 1, &n, out);
  mxw_autograd_set_recording(prev);
  if (rc != 0) fail_msg("%s", mxw_get_last_error());
  if (mxw_autograd_backward(nout, out, NULL, 0, 1) != 0) fail_msg("%s", mxw_get_last_error());
  for (int i = 0; i < nin; i++) t_expect_f32(grads[i], want[i], (int)mxw_shape_size(&grads[i]->t.shape), 1e-6);
  for (int i = 0; i < nout; i++) mxw_ndarray_free(out[i]);
  for (int i = 0; i < nin; i++) {
    mxw_ndarray_free(grads[i]);
    mxw_ndarray_free(in[i]);
  }
  mxw_exec_free(ex);
  mxw_sym_free(s);
  free(text);
}

static void test_gradients(void **state) {
  (void)state;
  int32_t d[] = {3, 2}, v[] = {2}, one[] = {1};
  /* foreach: out_t = x_t + s_{t-1}, s_t = out_t + bias; sum(out) + sum(s_3): x_t reaches the
   * outputs from t on and the final state (4, 3, 2), init all of them (4), bias the outputs after
   * step 0 and the final state (0 + 1 + 2 + 3) */
  mxw_ndarray *fin[3] = {t_array(2, d, (float[]){1, 2, 3, 4, 5, 6}), t_array(1, v, (float[]){10, 20}),
                         t_array(1, v, (float[]){1, -1})};
  grad_case("foreach", 3, fin, 2,
            (const float *const[]){(float[]){4, 4, 3, 3, 2, 2}, (float[]){4, 4}, (float[]){6, 6}});
  /* while_loop (i, s) while i < n: out = 2s, i += 1, s += i; n = 3: s_t = s0 + t i0 + t(t-1)/2, the
   * rows past step 3 ignored: d/ds0 = 2 * 3 + 1, d/di0 = 2 * (0 + 1 + 2) + 3 + 1; n (the condition's) 0 */
  mxw_ndarray *win[3] = {t_array(1, one, (float[]){0}), t_array(1, one, (float[]){1}), t_array(1, one, (float[]){3})};
  grad_case("while_loop", 3, win, 3, (const float *const[]){(float[]){10}, (float[]){7}, (float[]){0}});
  /* cond: p > 0 ? a * b : b - a; p = 2: da = b, db = a, dp = 0; p = 0: da = -1, db = 1 */
  mxw_ndarray *cin[3] = {t_array(1, one, (float[]){2}), t_array(1, v, (float[]){2, 3}), t_array(1, v, (float[]){5, 7})};
  grad_case("cond", 3, cin, 1, (const float *const[]){(float[]){0}, (float[]){5, 7}, (float[]){2, 3}});
  mxw_ndarray *cin0[3] = {t_array(1, one, (float[]){0}), t_array(1, v, (float[]){2, 3}),
                          t_array(1, v, (float[]){5, 7})};
  grad_case("cond", 3, cin0, 1, (const float *const[]){(float[]){0}, (float[]){-1, -1}, (float[]){1, 1}});
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trips),
      cmocka_unit_test(test_foreach_runs),
      cmocka_unit_test(test_while_loop_runs),
      cmocka_unit_test(test_cond_runs),
      cmocka_unit_test(test_hostile),
      cmocka_unit_test(test_deep_nesting),
      cmocka_unit_test(test_imperative_refused),
      cmocka_unit_test(test_cut_and_compose),
      cmocka_unit_test(test_gradients),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
