/* Hybridized training (csrc/graph/cached_op.c and the training half of exec.c): a graph run by
 * mxw_exec_forward while autograd records, with inputs that carry history, goes through a
 * training executor and lands on the tape as one _CachedOp node; backward runs its
 * _backward_CachedOp. As MXNet's CachedOp with static_alloc: one plan per input signature (at
 * most 4 kept), arenas pooled per plan, grad_req write/add/null, head gradients, retain_graph,
 * autograd.grad, unbound inputs, several heads. Values are checked against a float64 reference
 * loop of Dense + relu written here, or hand-worked sums. */
#include "cov_graph.h"

/* y = relu(x W^T + b), x (n, k), W (m, k), b (m); with head gradient hg (n, m): the gradients of
 * sum(hg * y) in float64. */
static void ref_dense_relu(int n, int k, int m, const float *x, const float *w, const float *b, const float *hg,
                           double *y, double *dx, double *dw, double *db) {
  for (int i = 0; i < m * k; i++) dw[i] = 0;
  for (int j = 0; j < m; j++) db[j] = 0;
  for (int i = 0; i < n * k; i++) dx[i] = 0;
  for (int r = 0; r < n; r++)
    for (int j = 0; j < m; j++) {
      double s = b[j];
      for (int c = 0; c < k; c++) s += (double)x[r * k + c] * w[j * k + c];
      y[r * m + j] = s > 0 ? s : 0;
      double d = s > 0 ? hg[r * m + j] : 0;
      db[j] += d;
      for (int c = 0; c < k; c++) {
        dw[j * k + c] += d * x[r * k + c];
        dx[r * k + c] += d * w[j * k + c];
      }
    }
}

static void expect_vals(const mxw_ndarray *a, const double *want, int n) {
  assert_int_equal((int)mxw_ndarray_size(a), n);
  const float *y = (const float *)mxw_ndarray_data(a);
  for (int i = 0; i < n; i++) assert_close(y[i], want[i], 1e-5);
}

/* relu(FullyConnected(x, w, b; num_hidden = m)) */
static mxw_symbol *dense_relu(int m) {
  mxw_symbol *x = cg_var("x"), *w = cg_var("w"), *b = cg_var("b");
  mxw_symbol *ins[3] = {x, w, b};
  char nh[16];
  snprintf(nh, sizeof nh, "%d", m);
  mxw_symbol *fc = cg_op("FullyConnected", "fc", 3, ins, "num_hidden", nh, NULL);
  mxw_symbol *y = cg_op("Activation", "relu", 1, &fc, "act_type", "relu", NULL);
  assert_non_null(y);
  mxw_sym_free(x);
  mxw_sym_free(w);
  mxw_sym_free(b);
  mxw_sym_free(fc);
  return y;
}

static void fill_pattern(mxw_ndarray *a, float scale, float shift) {
  float *p = (float *)mxw_ndarray_data(a);
  int n = (int)mxw_ndarray_size(a);
  for (int i = 0; i < n; i++) p[i] = scale * (float)((i * 7) % 5 - 2) + shift;
}

static void test_train_steps_and_plans(void **state) {
  (void)state;
  const int k = 3, m = 4;
  mxw_symbol *sym = dense_relu(m);
  mxw_executor *ex = cg_exec(sym);
  assert_int_equal(mxw_exec_num_inputs(ex), 3);
  assert_string_equal(mxw_exec_input_name(ex, 0), "x");
  assert_string_equal(mxw_exec_input_name(ex, 1), "w");
  assert_string_equal(mxw_exec_input_name(ex, 2), "b");
  mxw_ndarray *w = t_array(2, (int32_t[]){m, k}, NULL), *b = t_array(1, (int32_t[]){m}, NULL);
  fill_pattern(w, 0.5f, 0.1f);
  fill_pattern(b, 0.25f, 0.0f);
  mxw_ndarray *gw = t_array(2, (int32_t[]){m, k}, NULL), *gb = t_array(1, (int32_t[]){m}, NULL);
  cg_mark(w, gw, 1);
  cg_mark(b, gb, 1);
  /* batch sizes 2, 2 (same plan), 3, 1, 5, 6 (the fifth signature evicts the first), 2 again */
  const int batches[] = {2, 2, 3, 1, 5, 6, 2};
  const int built_after[] = {1, 1, 2, 3, 4, 5, 6};
  for (int step = 0; step < 7; step++) {
    int n = batches[step];
    mxw_ndarray *x = t_array(2, (int32_t[]){n, k}, NULL);
    fill_pattern(x, 1.0f, (float)step * 0.1f);
    mxw_ndarray *hg = t_array(2, (int32_t[]){n, m}, NULL);
    fill_pattern(hg, 0.3f, 1.0f);
    mxw_ndarray *in[3] = {x, w, b}, *out[1] = {NULL};
    int nout = 1;
    mxw_autograd_set_recording(1);
    assert_int_equal(mxw_exec_forward(ex, 3, in, 1, &nout, out), 0);
    mxw_autograd_set_recording(0);
    assert_int_equal(nout, 1);
    double y[24], dx[24], dw[12], db[4];
    ref_dense_relu(n, k, m, mxw_ndarray_data(x), mxw_ndarray_data(w), mxw_ndarray_data(b), mxw_ndarray_data(hg), y, dx,
                   dw, db);
    expect_vals(out[0], y, n * m);
    assert_int_equal(mxw_autograd_backward(1, out, &hg, 0, 1), 0);
    expect_vals(gw, dw, m * k);
    expect_vals(gb, db, m);
    assert_int_equal(mxw_ndarray_fresh_grad(gw, -1), 1);
    int32_t stats[3];
    assert_int_equal(mxw_exec_stats(ex, stats), 0);
    assert_int_equal(stats[1], built_after[step]);
    assert_true(stats[2] >= stats[1]); /* each plan bound at least once */
    /* a second backward without retain_graph: the saved values are gone */
    assert_int_equal(mxw_autograd_backward(1, out, &hg, 0, 1), -1);
    assert_error_contains("retain_graph=True");
    mxw_ndarray_free(out[0]);
    mxw_ndarray_free(hg);
    mxw_ndarray_free(x);
  }
  int32_t stats[3];
  assert_int_equal(mxw_exec_stats(NULL, stats), -1);
  assert_error_contains("NULL argument");
  mxw_exec_free(ex);
  mxw_sym_free(sym);
  mxw_ndarray_free(w);
  mxw_ndarray_free(b);
  mxw_ndarray_free(gw);
  mxw_ndarray_free(gb);
}

/* Data with history (a marked variable, and a recorded eager result), grad_req add and null,
 * retain_graph, and six recorded calls alive at once (more arenas than the pool keeps). */
static void test_data_grads_add_null_retain(void **state) {
  (void)state;
  const int n = 2, k = 3, m = 2;
  mxw_symbol *sym = dense_relu(m);
  mxw_executor *ex = cg_exec(sym);
  mxw_ndarray *x0 = t_array(2, (int32_t[]){n, k}, (float[]){1, 2, 3, -1, 0.5f, 2});
  mxw_ndarray *w = t_array(2, (int32_t[]){m, k}, (float[]){1, 0, -1, 0.5f, 0.5f, 0.5f});
  mxw_ndarray *b = t_array(1, (int32_t[]){m}, (float[]){3, -1});
  mxw_ndarray *gx0 = t_array(2, (int32_t[]){n, k}, NULL), *gw = t_array(2, (int32_t[]){m, k}, NULL);
  mxw_ndarray *gb = t_array(1, (int32_t[]){m}, (float[]){7, 8});
  cg_mark(x0, gx0, 2); /* add */
  cg_mark(w, gw, 2);   /* add */
  cg_mark(b, gb, 0);   /* null: never written */
  mxw_autograd_set_recording(1);
  /* x = x0 * 2, recorded eagerly: the hybridized call's data has history */
  mxw_ndarray *x[1] = {NULL};
  int one = 1;
  assert_int_equal(t_invoke("_mul_scalar", &x0, 1, x, &one, "scalar", "2", NULL), 0);
  mxw_ndarray *y[6] = {NULL};
  for (int c = 0; c < 6; c++) {
    mxw_ndarray *in[3] = {x[0], w, b};
    int nout = 1;
    assert_int_equal(mxw_exec_forward(ex, 3, in, 1, &nout, &y[c]), 0);
  }
  mxw_autograd_set_recording(0);
  /* hand-worked: x = [[2, 4, 6], [-2, 1, 4]]; pre = x W^T + b = [[2-6+3, 6-1], [-2-4+3, 1.5-1]]
   * = [[-1, 5], [-3, 0.5]] -> y = [[0, 5], [0, 0.5]] */
  const double want_y[4] = {0, 5, 0, 0.5};
  for (int c = 0; c < 6; c++) expect_vals(y[c], want_y, 4);
  /* head gradient ones: d pre = [[0, 1], [0, 1]]; dW = d pre^T x = [[0, 0, 0], [0, 5, 10]];
   * dx = d pre W = [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], dx0 = 2 dx = 1 */
  assert_int_equal(mxw_autograd_backward(1, &y[0], NULL, 1, 1), 0);
  t_expect_f32(gw, (float[]){0, 0, 0, 0, 5, 10}, 6, 1e-6);
  /* another call's graph (sharing the recorded x0 * 2): autograd.grad of y[1] w.r.t. w, retained,
   * the buffers untouched */
  mxw_ndarray *g[1] = {NULL};
  assert_int_equal(mxw_autograd_grad(1, &y[1], NULL, 1, &w, 1, 1, g), 0);
  t_expect_f32(g[0], (float[]){0, 0, 0, 0, 5, 10}, 6, 1e-6);
  t_expect_f32(gw, (float[]){0, 0, 0, 0, 5, 10}, 6, 1e-6);
  mxw_ndarray_free(g[0]);
  assert_int_equal(mxw_autograd_backward(1, &y[0], NULL, 0, 1), 0); /* retained: runs again, adds */
  t_expect_f32(gw, (float[]){0, 0, 0, 0, 10, 20}, 6, 1e-6);
  t_expect_f32(gx0, (float[]){2, 2, 2, 2, 2, 2}, 6, 1e-6);
  t_expect_f32(gb, (float[]){7, 8}, 2, 0);
  /* y[1] shares x0 * 2's node, whose saved values that backward released */
  assert_int_equal(mxw_autograd_backward(1, &y[1], NULL, 0, 1), -1);
  assert_error_contains("freed by the first backward");
  /* a head gradient of another shape is refused */
  mxw_ndarray *bad = t_array(1, (int32_t[]){4}, NULL);
  assert_int_equal(mxw_autograd_backward(1, &y[2], &bad, 0, 1), -1);
  assert_error_contains("head gradient 0 has shape (4,), the head (2, 2)");
  mxw_ndarray_free(bad);
  for (int c = 0; c < 6; c++) mxw_ndarray_free(y[c]); /* the arenas go back to the pool (4) or are freed */
  mxw_ndarray_free(x[0]);
  /* the pool serves the next call */
  mxw_ndarray *in[3] = {x0, w, b}, *z[1] = {NULL};
  int nout = 1;
  mxw_autograd_set_recording(1);
  assert_int_equal(mxw_exec_forward(ex, 3, in, 1, &nout, z), 0);
  mxw_autograd_set_recording(0);
  /* pre = [[1-3+3, 3-1], [-1-2+3, 0.75-1]] = [[1, 2], [0, -0.25]] */
  t_expect_f32(z[0], (float[]){1, 2, 0, 0}, 4, 1e-6);
  mxw_ndarray_free(z[0]);
  mxw_exec_free(ex);
  mxw_sym_free(sym);
  mxw_ndarray *all[] = {x0, w, b, gx0, gw, gb};
  for (int i = 0; i < 6; i++) mxw_ndarray_free(all[i]);
}

/* Gradients that are not computed by a backward node: d(x + w)/dw is the output gradient itself
 * (a graph input), and x's equals w's (the same entry twice): both are copied out of the run. Two
 * heads, one differentiated: the other's gradient is zero. */
static void test_identity_grads_two_heads(void **state) {
  (void)state;
  mxw_symbol *x = cg_var("x"), *w = cg_var("w");
  mxw_symbol *ins[2] = {x, w};
  mxw_symbol *s = cg_op("elemwise_add", "add", 2, ins, NULL);
  mxw_symbol *t = cg_op("elemwise_mul", "mul", 2, ins, NULL);
  mxw_symbol *both[2] = {s, t}, *grp = NULL;
  assert_int_equal(mxw_sym_group(2, both, &grp), 0);
  mxw_executor *ex = cg_exec(grp);
  mxw_ndarray *xa = t_array(1, (int32_t[]){3}, (float[]){1, 2, 3});
  mxw_ndarray *wa = t_array(1, (int32_t[]){3}, (float[]){-1, 4, 0.5f});
  mxw_ndarray *gx = t_array(1, (int32_t[]){3}, NULL), *gw = t_array(1, (int32_t[]){3}, NULL);
  cg_mark(xa, gx, 1);
  cg_mark(wa, gw, 1);
  mxw_ndarray *in[2] = {xa, wa}, *out[2] = {NULL, NULL};
  int nout = 2;
  mxw_autograd_set_recording(1);
  assert_int_equal(mxw_exec_forward(ex, 2, in, 1, &nout, out), 0);
  mxw_autograd_set_recording(0);
  assert_int_equal(nout, 2);
  t_expect_f32(out[0], (float[]){0, 6, 3.5f}, 3, 1e-6);
  t_expect_f32(out[1], (float[]){-1, 8, 1.5f}, 3, 1e-6);
  mxw_ndarray *hg = t_array(1, (int32_t[]){3}, (float[]){2, -1, 3});
  /* only the sum head: dx = dw = hg */
  assert_int_equal(mxw_autograd_backward(1, &out[0], &hg, 1, 1), 0);
  t_expect_f32(gx, (float[]){2, -1, 3}, 3, 0);
  t_expect_f32(gw, (float[]){2, -1, 3}, 3, 0);
  /* only the product head: dx = hg * w, dw = hg * x */
  assert_int_equal(mxw_autograd_backward(1, &out[1], &hg, 0, 1), 0);
  t_expect_f32(gx, (float[]){-2, -4, 1.5f}, 3, 1e-6);
  t_expect_f32(gw, (float[]){2, -2, 9}, 3, 1e-6);
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(out[1]);
  mxw_ndarray_free(hg);
  mxw_exec_free(ex);
  mxw_sym_free(grp);
  mxw_sym_free(s);
  mxw_sym_free(t);
  mxw_sym_free(x);
  mxw_sym_free(w);
  mxw_ndarray *all[] = {xa, wa, gx, gw};
  for (int i = 0; i < 4; i++) mxw_ndarray_free(all[i]);
}

/* A loss head's label left unbound (NULL) in a recorded call: zeros of the inferred shape, as at
 * inference; integer inputs never get gradients (only float inputs are differentiated). */
static void test_unbound_label_and_int_input(void **state) {
  (void)state;
  mxw_symbol *p = cg_var("pred"), *l = cg_var("label");
  mxw_symbol *ins[2] = {p, l};
  mxw_symbol *d = cg_op("elemwise_sub", "sub", 2, ins, NULL);
  mxw_symbol *sq = cg_op("square", "sq", 1, &d, NULL);
  assert_non_null(sq);
  mxw_executor *ex = cg_exec(sq);
  mxw_ndarray *pa = t_array(1, (int32_t[]){2}, (float[]){3, -2}), *gp = t_array(1, (int32_t[]){2}, NULL);
  cg_mark(pa, gp, 1);
  mxw_ndarray *in[2] = {pa, NULL}, *out[1] = {NULL};
  int nout = 1;
  mxw_autograd_set_recording(1);
  assert_int_equal(mxw_exec_forward(ex, 2, in, 1, &nout, out), 0);
  mxw_autograd_set_recording(0);
  t_expect_f32(out[0], (float[]){9, 4}, 2, 1e-6); /* (p - 0)^2 */
  assert_int_equal(mxw_autograd_backward(1, out, NULL, 0, 1), 0);
  t_expect_f32(gp, (float[]){6, -4}, 2, 1e-6); /* 2 (p - 0) */
  mxw_ndarray_free(out[0]);
  /* an int32 input with history (a marked variable) is not differentiated: no training plan */
  mxw_ndarray *ia = NULL, *gi = NULL;
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){2}, MXW_INT32, &ia), 0);
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){2}, MXW_INT32, &gi), 0);
  ((int32_t *)mxw_ndarray_data(ia))[0] = 5;
  ((int32_t *)mxw_ndarray_data(ia))[1] = 1;
  cg_mark(ia, gi, 1);
  mxw_symbol *v = cg_var("v");
  mxw_symbol *neg = cg_op("negative", "neg", 1, &v, NULL);
  mxw_executor *ex2 = cg_exec(neg);
  mxw_ndarray *o2[1] = {NULL};
  nout = 1;
  mxw_autograd_set_recording(1);
  assert_int_equal(mxw_exec_forward(ex2, 1, &ia, 1, &nout, o2), 0);
  mxw_autograd_set_recording(0);
  assert_int_equal(((int32_t *)mxw_ndarray_data(o2[0]))[0], -5);
  assert_int_equal(((int32_t *)mxw_ndarray_data(o2[0]))[1], -1);
  int32_t stats[3];
  assert_int_equal(mxw_exec_stats(ex2, stats), 0);
  assert_int_equal(stats[1], 0); /* no training graph was built */
  assert_int_equal(stats[0], 1); /* the plain forward bound once */
  mxw_ndarray_free(o2[0]);
  mxw_exec_free(ex2);
  mxw_sym_free(neg);
  mxw_sym_free(v);
  mxw_ndarray_free(ia);
  mxw_ndarray_free(gi);
  mxw_exec_free(ex);
  mxw_sym_free(sq);
  mxw_sym_free(d);
  mxw_sym_free(p);
  mxw_sym_free(l);
  mxw_ndarray_free(pa);
  mxw_ndarray_free(gp);
}

/* _copy(x) on the tape: x's gradient is the output gradient itself (a graph input of the training
 * graph, copied out after the run). Six calls alive, each differentiated without retain_graph:
 * their arenas go back to the plan's pool (four kept, the rest freed). A label bound in one call
 * and unbound in the next needs another plan. */
static void test_copy_grads_pool_unbound_plans(void **state) {
  (void)state;
  mxw_symbol *x = cg_var("x"), *l = cg_var("label");
  mxw_symbol *c = cg_op("_copy", "c", 1, &x, NULL);
  mxw_symbol *cl[2] = {c, l};
  mxw_symbol *d = cg_op("elemwise_sub", "d", 2, cl, NULL);
  mxw_executor *ex = cg_exec(d);
  mxw_ndarray *xa = t_array(1, (int32_t[]){3}, (float[]){1, 2, 3}), *gx = t_array(1, (int32_t[]){3}, NULL);
  mxw_ndarray *la = t_array(1, (int32_t[]){3}, (float[]){1, 1, 1});
  cg_mark(xa, gx, 2); /* add: six backward passes accumulate */
  mxw_ndarray *y[6] = {NULL};
  mxw_autograd_set_recording(1);
  for (int k = 0; k < 6; k++) {
    mxw_ndarray *in[2] = {xa, k < 3 ? la : NULL};
    int nout = 1;
    assert_int_equal(mxw_exec_forward(ex, 2, in, 1, &nout, &y[k]), 0);
  }
  mxw_autograd_set_recording(0);
  t_expect_f32(y[0], (float[]){0, 1, 2}, 3, 0); /* x - 1 */
  t_expect_f32(y[5], (float[]){1, 2, 3}, 3, 0); /* x - 0 */
  int32_t stats[3];
  assert_int_equal(mxw_exec_stats(ex, stats), 0);
  assert_int_equal(stats[1], 2); /* label bound, label unbound */
  mxw_ndarray *hg = t_array(1, (int32_t[]){3}, (float[]){1, -1, 0.5f});
  for (int k = 0; k < 6; k++) assert_int_equal(mxw_autograd_backward(1, &y[k], &hg, 0, 1), 0);
  t_expect_f32(gx, (float[]){6, -6, 3}, 3, 0);
  for (int k = 0; k < 6; k++) mxw_ndarray_free(y[k]);
  mxw_ndarray_free(hg);
  mxw_ndarray_free(xa);
  mxw_ndarray_free(gx);
  mxw_ndarray_free(la);
  mxw_exec_free(ex);
  mxw_symbol *all[] = {x, l, c, d};
  for (int i = 0; i < 4; i++) mxw_sym_free(all[i]);
}

/* _CachedOp and _backward_CachedOp are tape-only ops: called directly they refuse. */
static void test_tape_only_ops(void **state) {
  (void)state;
  const char *names[2] = {"_CachedOp", "_backward_CachedOp"};
  for (int i = 0; i < 2; i++) {
    int op = mxw_op_find(names[i]);
    assert_true(op >= 0);
    mxw_params *p = NULL;
    assert_int_equal(mxw_params_create(op, 0, NULL, NULL, &p), 0);
    mxw_ndarray *out[1] = {NULL};
    int nout = 1;
    assert_int_equal(mxw_op_invoke(op, p, 0, NULL, &nout, out), -1);
    assert_error_contains("no recorded call");
    int32_t shapes[16];
    assert_int_equal(mxw_op_infer_shape(p, 0, NULL, shapes), -1);
    assert_error_contains("no recorded call");
    mxw_params_free(p);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_train_steps_and_plans),
      cmocka_unit_test(test_data_grads_add_null_retain),
      cmocka_unit_test(test_identity_grads_two_heads),
      cmocka_unit_test(test_unbound_label_and_int_input),
      cmocka_unit_test(test_tape_only_ops),
      cmocka_unit_test(test_copy_grads_pool_unbound_plans),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
