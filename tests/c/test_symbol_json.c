/* The symbol JSON reader and writer and the executor in C without any real file: every dialect
 * MXNet wrote, as fixtures written here from ../shared/spec/symbol-json.md -- the 1.x writer's
 * exact text (§14's export, its elided nodes filled in by §5's rules), `attr` with an
 * mxnet_version (0.9-0.11 checkpoints), `attrs` without one, and the pre-NNVM 0.8 form (`param`
 * only, backward_source_id, 2-element entries, no node_row_ptr, BatchNorm without aux inputs,
 * hidden keys) with every legacy upgrade of §13 -- checked against hand-worked texts, listings
 * and outputs; then hostile inputs (truncations, mutations, bad references, deep nesting) that
 * must fail cleanly under ASan/UBSan. test_real_symbol_json.c does the same on real files. */
#include <stdlib.h>

#include "mxw_test.h"

/* §14: a Gluon 1.9.1 export of Dense(4, relu) + BatchNorm, in the writer's exact layout. */
static const char *k_spec_export =
    "{\n"
    "  \"nodes\": [\n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"data\", \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"hybridsequential0_dense0_weight\", \n"
    "      \"attrs\": {\n"
    "        \"__dtype__\": \"0\", \n"
    "        \"__lr_mult__\": \"1.0\", \n"
    "        \"__shape__\": \"(4, 0)\", \n"
    "        \"__storage_type__\": \"0\", \n"
    "        \"__wd_mult__\": \"1.0\"\n"
    "      }, \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"hybridsequential0_dense0_bias\", \n"
    "      \"attrs\": {\n"
    "        \"__dtype__\": \"0\", \n"
    "        \"__init__\": \"zeros\", \n"
    "        \"__lr_mult__\": \"1.0\", \n"
    "        \"__shape__\": \"(4,)\", \n"
    "        \"__storage_type__\": \"0\", \n"
    "        \"__wd_mult__\": \"1.0\"\n"
    "      }, \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"FullyConnected\", \n"
    "      \"name\": \"hybridsequential0_dense0_fwd\", \n"
    "      \"attrs\": {\n"
    "        \"flatten\": \"True\", \n"
    "        \"no_bias\": \"False\", \n"
    "        \"num_hidden\": \"4\"\n"
    "      }, \n"
    "      \"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"Activation\", \n"
    "      \"name\": \"hybridsequential0_dense0_relu_fwd\", \n"
    "      \"attrs\": {\"act_type\": \"relu\"}, \n"
    "      \"inputs\": [[3, 0, 0]]\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"hybridsequential0_batchnorm0_gamma\", \n"
    "      \"attrs\": {\n"
    "        \"__dtype__\": \"0\", \n"
    "        \"__init__\": \"ones\", \n"
    "        \"__lr_mult__\": \"1.0\", \n"
    "        \"__shape__\": \"(0,)\", \n"
    "        \"__storage_type__\": \"0\", \n"
    "        \"__wd_mult__\": \"1.0\"\n"
    "      }, \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"hybridsequential0_batchnorm0_beta\", \n"
    "      \"attrs\": {\n"
    "        \"__dtype__\": \"0\", \n"
    "        \"__init__\": \"zeros\", \n"
    "        \"__lr_mult__\": \"1.0\", \n"
    "        \"__shape__\": \"(0,)\", \n"
    "        \"__storage_type__\": \"0\", \n"
    "        \"__wd_mult__\": \"1.0\"\n"
    "      }, \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"hybridsequential0_batchnorm0_running_mean\", \n"
    "      \"attrs\": {\n"
    "        \"__dtype__\": \"0\", \n"
    "        \"__init__\": \"zeros\", \n"
    "        \"__lr_mult__\": \"1.0\", \n"
    "        \"__shape__\": \"(0,)\", \n"
    "        \"__storage_type__\": \"0\", \n"
    "        \"__wd_mult__\": \"1.0\"\n"
    "      }, \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"hybridsequential0_batchnorm0_running_var\", \n"
    "      \"attrs\": {\n"
    "        \"__dtype__\": \"0\", \n"
    "        \"__init__\": \"ones\", \n"
    "        \"__lr_mult__\": \"1.0\", \n"
    "        \"__shape__\": \"(0,)\", \n"
    "        \"__storage_type__\": \"0\", \n"
    "        \"__wd_mult__\": \"1.0\"\n"
    "      }, \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"BatchNorm\", \n"
    "      \"name\": \"hybridsequential0_batchnorm0_fwd\", \n"
    "      \"attrs\": {\n"
    "        \"axis\": \"1\", \n"
    "        \"eps\": \"1e-05\", \n"
    "        \"fix_gamma\": \"False\", \n"
    "        \"momentum\": \"0.9\", \n"
    "        \"use_global_stats\": \"False\"\n"
    "      }, \n"
    "      \"inputs\": [[4, 0, 0], [5, 0, 0], [6, 0, 0], [7, 0, 1], [8, 0, 1]]\n"
    "    }\n"
    "  ], \n"
    "  \"arg_nodes\": [0, 1, 2, 5, 6, 7, 8], \n"
    "  \"node_row_ptr\": [\n"
    "    0, \n"
    "    1, \n"
    "    2, \n"
    "    3, \n"
    "    4, \n"
    "    5, \n"
    "    6, \n"
    "    7, \n"
    "    8, \n"
    "    9, \n"
    "    12\n"
    "  ], \n"
    "  \"heads\": [[9, 0, 0]], \n"
    "  \"attrs\": {\"mxnet_version\": [\"int\", 10901]}\n"
    "}";

static void test_spec_export_round_trips_exactly(void **state) {
  (void)state;
  mxw_symbol *s = NULL;
  assert_int_equal(mxw_sym_fromjson(k_spec_export, &s), 0);
  char *out = NULL;
  assert_int_equal(mxw_sym_tojson(s, &out), 0);
  assert_string_equal(out, k_spec_export);
  mxw_buffer_free(out);
  const char *info = mxw_sym_info(s);
  assert_non_null(strstr(info,
                         "\"aux\":[\"hybridsequential0_batchnorm0_running_mean\","
                         "\"hybridsequential0_batchnorm0_running_var\"]"));
  /* deferred __shape__ dims (0) are filled by inference from the data */
  const char *r = mxw_sym_infer(s, "{\"shapes\": {\"data\": [2, 3]}}");
  assert_non_null(r);
  assert_non_null(strstr(r, "\"name\":\"hybridsequential0_dense0_weight\",\"shape\":[4,3]"));
  assert_non_null(strstr(r, "\"outputs\":[{\"shape\":[2,4]"));
  mxw_sym_free(s);
}

/* A 0.9-0.11 checkpoint: `attr` dicts (the op's attributes copied onto its variables), an
 * mxnet_version of 1100, a loss head whose label is not a parameter. */
static const char *k_attr_dialect =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []}, "
    "{\"op\": \"null\", \"name\": \"fc1_weight\", \"attr\": {\"num_hidden\": \"1\"}, \"inputs\": []}, "
    "{\"op\": \"null\", \"name\": \"fc1_bias\", \"attr\": {\"num_hidden\": \"1\"}, \"inputs\": []}, "
    "{\"op\": \"FullyConnected\", \"name\": \"fc1\", \"attr\": {\"num_hidden\": \"1\"}, "
    "\"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}, "
    "{\"op\": \"null\", \"name\": \"lin_reg_label\", \"inputs\": []}, "
    "{\"op\": \"LinearRegressionOutput\", \"name\": \"lin_reg\", \"inputs\": [[3, 0, 0], [4, 0, 0]]}], "
    "\"arg_nodes\": [0, 1, 2, 4], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6], \"heads\": [[5, 0, 0]], "
    "\"attrs\": {\"mxnet_version\": [\"int\", 1100]}}";

/* What the 1.x writer makes of it, worked out by hand from §1-§5: attr -> attrs, one-key maps
 * on one line, the version of this writer. */
static const char *k_attr_dialect_out =
    "{\n"
    "  \"nodes\": [\n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"data\", \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"fc1_weight\", \n"
    "      \"attrs\": {\"num_hidden\": \"1\"}, \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"fc1_bias\", \n"
    "      \"attrs\": {\"num_hidden\": \"1\"}, \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"FullyConnected\", \n"
    "      \"name\": \"fc1\", \n"
    "      \"attrs\": {\"num_hidden\": \"1\"}, \n"
    "      \"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"null\", \n"
    "      \"name\": \"lin_reg_label\", \n"
    "      \"inputs\": []\n"
    "    }, \n"
    "    {\n"
    "      \"op\": \"LinearRegressionOutput\", \n"
    "      \"name\": \"lin_reg\", \n"
    "      \"inputs\": [[3, 0, 0], [4, 0, 0]]\n"
    "    }\n"
    "  ], \n"
    "  \"arg_nodes\": [0, 1, 2, 4], \n"
    "  \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6], \n"
    "  \"heads\": [[5, 0, 0]], \n"
    "  \"attrs\": {\"mxnet_version\": [\"int\", 10901]}\n"
    "}";

static void test_attr_dialect_with_version(void **state) {
  (void)state;
  mxw_symbol *s = NULL;
  assert_int_equal(mxw_sym_fromjson(k_attr_dialect, &s), 0);
  char *out = NULL;
  assert_int_equal(mxw_sym_tojson(s, &out), 0);
  assert_string_equal(out, k_attr_dialect_out);
  mxw_buffer_free(out);
  /* runs with the label unbound: x [[1, 2]], w [[0.5, 2]], b [0.25] -> 0.5 + 4 + 0.25 */
  mxw_executor *ex = NULL;
  assert_int_equal(mxw_exec_create(s, &ex), 0);
  assert_int_equal(mxw_exec_num_inputs(ex), 4);
  assert_string_equal(mxw_exec_input_name(ex, 3), "lin_reg_label");
  int32_t s12[2] = {1, 2}, s1[1] = {1};
  float xv[2] = {1, 2}, wv[2] = {0.5f, 2.0f}, bv[1] = {0.25f};
  mxw_ndarray *in[4] = {t_array(2, s12, xv), t_array(2, s12, wv), t_array(1, s1, bv), NULL};
  mxw_ndarray *o[1] = {NULL};
  int nout = 1;
  assert_int_equal(mxw_exec_forward(ex, 4, in, 0, &nout, o), 0);
  const float want[1] = {4.75f};
  t_expect_f32(o[0], want, 1, 0);
  mxw_ndarray_free(o[0]);
  for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);
  mxw_exec_free(ex);
  mxw_sym_free(s);
}

/* The pre-NNVM form (MXNet <= 0.8): `param` dicts, backward_source_id, 2-element entries, no
 * node_row_ptr or mxnet_version, BatchNorm without its aux inputs, hidden keys in `attr` (a
 * plain lr_mult, and weight_lr_mult meant for FullyConnected's weight), argmax with axis -1,
 * and a LeakyReLU(prelu) whose gamma has no initializer. */
static const char *k_param_dialect =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"param\": {}, \"name\": \"data\", \"inputs\": [], \"backward_source_id\": -1}, "
    "{\"op\": \"null\", \"param\": {}, \"name\": \"fc1_weight\", \"inputs\": [], \"backward_source_id\": -1}, "
    "{\"op\": \"null\", \"param\": {}, \"name\": \"fc1_bias\", \"inputs\": [], \"backward_source_id\": -1}, "
    "{\"op\": \"FullyConnected\", \"param\": {\"no_bias\": \"False\", \"num_hidden\": \"3\"}, \"name\": \"fc1\", "
    "\"inputs\": [[0, 0], [1, 0], [2, 0]], \"backward_source_id\": -1, "
    "\"attr\": {\"ctx_group\": \"stage1\", \"weight_lr_mult\": \"1.2\"}}, "
    "{\"op\": \"null\", \"param\": {}, \"name\": \"bn_gamma\", \"inputs\": [], \"backward_source_id\": -1}, "
    "{\"op\": \"null\", \"param\": {}, \"name\": \"bn_beta\", \"inputs\": [], \"backward_source_id\": -1}, "
    "{\"op\": \"BatchNorm\", \"param\": {\"eps\": \"0.001\", \"fix_gamma\": \"True\", \"momentum\": \"0.9\"}, "
    "\"name\": \"bn\", \"inputs\": [[3, 0], [4, 0], [5, 0]], \"backward_source_id\": -1, "
    "\"attr\": {\"lr_mult\": \"0.5\"}}, "
    "{\"op\": \"null\", \"param\": {}, \"name\": \"act_gamma\", \"inputs\": [], \"backward_source_id\": -1}, "
    "{\"op\": \"LeakyReLU\", \"param\": {\"act_type\": \"prelu\"}, \"name\": \"act\", "
    "\"inputs\": [[6, 0], [7, 0]], \"backward_source_id\": -1}, "
    "{\"op\": \"argmax\", \"param\": {\"axis\": \"-1\"}, \"name\": \"am\", \"inputs\": [[8, 0]], "
    "\"backward_source_id\": -1}], "
    "\"arg_nodes\": [0, 1, 2, 4, 5, 7], \"heads\": [[8, 0], [9, 0]]}";

static void test_param_dialect_and_every_legacy_upgrade(void **state) {
  (void)state;
  mxw_symbol *s = NULL;
  assert_int_equal(mxw_sym_fromjson(k_param_dialect, &s), 0);
  const char *info = mxw_sym_info(s);
  /* 0.8 -> 0.9: the missing aux inputs become variables <node>_<input name> */
  assert_non_null(strstr(info, "\"aux\":[\"bn_moving_mean\",\"bn_moving_var\"]"));
  assert_non_null(
      strstr(info, "\"arguments\":[\"data\",\"fc1_weight\",\"fc1_bias\",\"bn_gamma\",\"bn_beta\",\"act_gamma\"]"));
  char *out = NULL;
  assert_int_equal(mxw_sym_tojson(s, &out), 0);
  /* FixParsing: lr_mult -> __lr_mult__ on the node; weight_lr_mult -> __lr_mult__ on fc1_weight;
   * ctx_group -> __ctx_group__ */
  assert_non_null(strstr(out, "\"name\": \"fc1_weight\", \n      \"attrs\": {\"__lr_mult__\": \"1.2\"}"));
  assert_non_null(strstr(out, "\"__ctx_group__\": \"stage1\""));
  assert_null(strstr(out, "weight_lr_mult"));
  assert_non_null(strstr(out, "\"__lr_mult__\": \"0.5\""));
  /* 0.9.3 -> 0.9.4: initializers of BatchNorm's aux states and PReLU's gamma */
  assert_non_null(strstr(out, "\"__init__\": \"[\\\"zero\\\", {}]\""));
  assert_non_null(strstr(out, "\"__init__\": \"[\\\"one\\\", {}]\""));
  assert_non_null(strstr(out, "\"attrs\": {\"__init__\": \"[\\\"Constant\\\", {\\\"value\\\": 0.25}]\"}"));
  /* 0.9.4 -> 0.9.5: argmax's axis -1 (= no axis) is dropped */
  assert_non_null(strstr(out, "\"op\": \"argmax\", \n      \"name\": \"am\", \n      \"inputs\""));
  /* entries come out with three elements and the aux inputs at version 1 */
  assert_non_null(strstr(out, "\"inputs\": [[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 1], [7, 0, 1]]"));
  assert_non_null(strstr(out, "\"heads\": [[10, 0, 0], [11, 0, 0]]"));
  mxw_buffer_free(out);

  /* and it runs: x [[1, 2]] -> fc1 (w rows [1,0], [0,1], [-1,-1], b [0, 0, 0.5]) = [1, 2, -2.5];
   * BatchNorm at inference with fix_gamma (gamma taken as 1 whatever is stored), mean 0, var 1,
   * eps 1e-3: y = x / sqrt(1.001) + beta (0); PReLU with gamma 0.25 scales the negative one;
   * argmax over everything: index 1 */
  mxw_executor *ex = NULL;
  assert_int_equal(mxw_exec_create(s, &ex), 0);
  int n = mxw_exec_num_inputs(ex);
  assert_int_equal(n, 8);
  int32_t s12[2] = {1, 2}, s32[2] = {3, 2}, s3[1] = {3}, s1[1] = {1};
  const float x[2] = {1, 2}, w[6] = {1, 0, 0, 1, -1, -1}, b[3] = {0, 0, 0.5f}, g[3] = {7, 7, 7}, z[3] = {0, 0, 0},
              one[3] = {1, 1, 1}, slope[1] = {0.25f};
  mxw_ndarray *in[8] = {NULL};
  for (int i = 0; i < n; i++) {
    const char *name = mxw_exec_input_name(ex, i);
    if (!strcmp(name, "data"))
      in[i] = t_array(2, s12, x);
    else if (!strcmp(name, "fc1_weight"))
      in[i] = t_array(2, s32, w);
    else if (!strcmp(name, "fc1_bias"))
      in[i] = t_array(1, s3, b);
    else if (!strcmp(name, "bn_gamma"))
      in[i] = t_array(1, s3, g);
    else if (!strcmp(name, "bn_beta") || !strcmp(name, "bn_moving_mean"))
      in[i] = t_array(1, s3, z);
    else if (!strcmp(name, "bn_moving_var"))
      in[i] = t_array(1, s3, one);
    else if (!strcmp(name, "act_gamma"))
      in[i] = t_array(1, s1, slope);
    else
      fail_msg("unexpected input %s", name);
  }
  mxw_ndarray *o[2] = {NULL, NULL};
  int nout = 2;
  assert_int_equal(mxw_exec_forward(ex, n, in, 0, &nout, o), 0);
  assert_int_equal(nout, 2);
  const double k = 1.0 / sqrt(1.001);
  const float want[3] = {(float)(1 * k), (float)(2 * k), (float)(-2.5 * k * 0.25)};
  t_expect_f32(o[0], want, 3, 1e-6);
  assert_close(((const float *)mxw_ndarray_data(o[1]))[0], 1, 0);
  for (int i = 0; i < 2; i++) mxw_ndarray_free(o[i]);
  for (int i = 0; i < n; i++) mxw_ndarray_free(in[i]);
  mxw_exec_free(ex);
  mxw_sym_free(s);
}

/* `attrs` without mxnet_version is taken as 0.8: the upgrades run (initializers added to the
 * BatchNorm aux states that lack them), nothing is added when the aux inputs are all there;
 * with a version >= 0.9.4 the same graph is left as written. A node carrying both `param` and
 * `attr`(s) keeps the attrs value of a key both define (param is merged without overwriting). */
static void test_attrs_with_and_without_version(void **state) {
  (void)state;
  const char *g =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
      "{\"op\": \"null\", \"name\": \"bn_gamma\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"bn_beta\", "
      "\"inputs\": []}, "
      "{\"op\": \"null\", \"name\": \"bn_moving_mean\", \"inputs\": []}, "
      "{\"op\": \"null\", \"name\": \"bn_moving_var\", \"inputs\": []}, "
      "{\"op\": \"BatchNorm\", \"name\": \"bn\", \"attrs\": {\"eps\": \"0.01\"}, "
      "\"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]}, "
      "{\"op\": \"Activation\", \"name\": \"a\", \"attrs\": {\"act_type\": \"relu\"}, \"param\": {\"act_type\": "
      "\"tanh\"}, "
      "\"inputs\": [[5, 0, 0]]}], "
      "\"arg_nodes\": [0, 1, 2, 3, 4], \"heads\": [[6, 0, 0]]%s}";
  char text[2048];
  for (int versioned = 0; versioned < 2; versioned++) {
    snprintf(text, sizeof text, g, versioned ? ", \"attrs\": {\"mxnet_version\": [\"int\", 10500]}" : "");
    mxw_symbol *s = NULL;
    assert_int_equal(mxw_sym_fromjson(text, &s), 0);
    assert_non_null(strstr(mxw_sym_info(s), "\"aux\":[\"bn_moving_mean\",\"bn_moving_var\"]"));
    char *out = NULL;
    assert_int_equal(mxw_sym_tojson(s, &out), 0);
    const char *mean_init = "\"name\": \"bn_moving_mean\", \n      \"attrs\": {\"__init__\": \"[\\\"zero\\\", {}]\"}";
    if (versioned)
      assert_null(strstr(out, mean_init));
    else
      assert_non_null(strstr(out, mean_init));
    assert_non_null(strstr(out, "\"attrs\": {\"act_type\": \"relu\"}"));
    assert_null(strstr(out, "bn_moving_mean_"));
    mxw_buffer_free(out);
    /* relu, not tanh: 3 * 1/sqrt(1 + 0.01) */
    mxw_executor *ex = NULL;
    assert_int_equal(mxw_exec_create(s, &ex), 0);
    int32_t s11[2] = {1, 1}, s1[1] = {1};
    const float xv[1] = {3}, onev[1] = {1}, zv[1] = {0}, negv[1] = {-3};
    mxw_ndarray *in[5] = {t_array(2, s11, xv), t_array(1, s1, onev), t_array(1, s1, zv), t_array(1, s1, zv),
                          t_array(1, s1, onev)};
    mxw_ndarray *o[1] = {NULL};
    int nout = 1;
    assert_int_equal(mxw_exec_forward(ex, 5, in, 0, &nout, o), 0);
    assert_close(((const float *)mxw_ndarray_data(o[0]))[0], 3 / sqrt(1.01), 1e-6);
    mxw_ndarray_free(o[0]);
    mxw_ndarray_free(in[0]);
    in[0] = t_array(2, s11, negv);
    nout = 1;
    assert_int_equal(mxw_exec_forward(ex, 5, in, 0, &nout, o), 0);
    assert_close(((const float *)mxw_ndarray_data(o[0]))[0], 0, 0);
    mxw_ndarray_free(o[0]);
    for (int i = 0; i < 5; i++) mxw_ndarray_free(in[i]);
    mxw_exec_free(ex);
    mxw_sym_free(s);
  }
}

static void test_hostile_json_fails_cleanly(void **state) {
  (void)state;
  const char *bad[] = {
      "",
      "{",
      "[]",
      "{\"nodes\": 3, \"heads\": []}",
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}], \"heads\": [[5, 0, 0]]}",
      "{\"nodes\": [{\"op\": \"relu\", \"name\": \"r\", \"inputs\": [[0, 0, 0]]}], \"heads\": [[0, 0, 0]]}",
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": \"relu\", \"name\": \"r\", "
      "\"inputs\": [[0, 7, 0]]}], \"heads\": [[1, 0, 0]]}",
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": \"relu\", \"name\": \"r\", "
      "\"inputs\": [[0, -1, 0]]}], \"heads\": [[1, 0, 0]]}",
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": \"Activation\", \"name\": \"a\", "
      "\"attrs\": {\"act_type\": \"nope\"}, \"inputs\": [[0, 0, 0]]}], \"heads\": [[1, 0, 0]]}",
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": \"FullyConnected\", \"name\": \"f\", "
      "\"attrs\": {\"num_hidden\": \"2\"}, \"inputs\": [[0, 0, 0]]}], \"heads\": [[1, 0, 0]], "
      "\"attrs\": {\"mxnet_version\": [\"int\", 10500]}}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    mxw_symbol *s = NULL;
    assert_int_equal(mxw_sym_fromjson(bad[i], &s), -1);
    assert_true(strlen(mxw_get_last_error()) > 0);
  }
  /* deep nesting: cJSON's nesting limit answers, not the stack */
  size_t depth = 200000;
  char *deep = malloc(depth * 2 + 1);
  memset(deep, '[', depth);
  memset(deep + depth, ']', depth);
  deep[2 * depth] = 0;
  mxw_symbol *s = NULL;
  assert_int_equal(mxw_sym_fromjson(deep, &s), -1);
  free(deep);
}

/* Truncations and byte mutations of every dialect's fixture: an error or a graph, never a crash. */
static void test_fixture_mutations_fail_cleanly(void **state) {
  (void)state;
  const char *texts[3] = {k_param_dialect, k_attr_dialect, k_spec_export};
  uint32_t seed = 7;
  for (int t = 0; t < 3; t++)
    t_symbol_json_mutations(texts[t], 3, 1, 1500, "{\"shapes\": {\"data\": [1, 2], \"x\": [1, 1]}}", &seed);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spec_export_round_trips_exactly),
      cmocka_unit_test(test_attr_dialect_with_version),
      cmocka_unit_test(test_param_dialect_and_every_legacy_upgrade),
      cmocka_unit_test(test_attrs_with_and_without_version),
      cmocka_unit_test(test_hostile_json_fails_cleanly),
      cmocka_unit_test(test_fixture_mutations_fail_cleanly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
