/* The fused RNN op (csrc/ops/rnn.c): GetRnnParamSize and the shapes through the op's shape
 * inference (forwards from data, backwards from the parameter count), hand-worked one-cell values
 * for each mode, the packed layout's bias positions, and threads: RNN and _backward_RNN give the
 * same bytes with 1 to 4 threads. The values at scale are checked by tests/js/rnn_op.test.mjs and
 * grad_rnn.test.mjs against a float64 loop, TF.js and finite differences. */
#include "core/mxw_parallel.h"
#include "mxw_test.h"

#define KV(...) ((const char *const[]){__VA_ARGS__, NULL})

static mxw_params *make(const char *op, const char *const *kv) {
  const char *keys[16], *vals[16];
  int n = 0;
  for (; kv && kv[2 * n]; n++) {
    keys[n] = kv[2 * n];
    vals[n] = kv[2 * n + 1];
  }
  const int id = mxw_op_find(op);
  if (id < 0) fail_msg("operator %s is not registered", op);
  mxw_params *p = NULL;
  if (mxw_params_create(id, n, keys, vals, &p) != 0) fail_msg("%s", mxw_get_last_error());
  return p;
}

static mxw_shape shp(int ndim, const int64_t *d) { return mxw_shape_make(ndim, d); }
static mxw_shape unknown(void) {
  mxw_shape s;
  s.ndim = -1;
  return s;
}
static void expect_shape(const mxw_shape *s, int ndim, const int64_t *d) {
  assert_int_equal(s->ndim, ndim);
  for (int i = 0; i < ndim; i++) assert_int_equal(s->dims[i], d[i]);
}

/* GetRnnParamSize, by hand: per layer and direction G*H*(in + Ho) + P*H + 2*G*H. */
static int64_t param_size(int G, int64_t I, int64_t H, int L, int D, int64_t P) {
  const int64_t Ho = P ? P : H;
  int64_t n = 0;
  for (int l = 0; l < L; l++) n += D * (G * H * ((l ? D * Ho : I) + Ho) + P * H + 2 * G * H);
  return n;
}

static void test_param_size_and_shapes(void **state) {
  (void)state;
  static const struct {
    const char *mode;
    int G;
    const char *L, *bid, *proj;
    int Li, D;
    int64_t P;
  } cases[] = {
      {"rnn_relu", 1, "1", "False", "None", 1, 1, 0}, {"rnn_tanh", 1, "3", "True", "None", 3, 2, 0},
      {"lstm", 4, "2", "False", "None", 2, 1, 0},     {"lstm", 4, "2", "True", "3", 2, 2, 3},
      {"gru", 3, "2", "True", "None", 2, 2, 0},       {"lstm", 4, "1", "False", "7", 1, 1, 7},
  };
  const int64_t T = 5, N = 3, I = 6, H = 7;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    mxw_params *p = make("RNN", KV("mode", cases[c].mode, "state_size", "7", "num_layers", cases[c].L, "bidirectional",
                                   cases[c].bid, "projection_size", cases[c].proj, "state_outputs", "True"));
    const int lstm = cases[c].G == 4, nin = mxw_params_num_inputs(p), nout = mxw_params_num_outputs(p);
    assert_int_equal(nin, lstm ? 4 : 3);
    assert_int_equal(nout, lstm ? 3 : 2);
    const int64_t D = cases[c].D, L = cases[c].Li, P = cases[c].P, Ho = P ? P : H;
    const int64_t want = param_size(cases[c].G, I, H, (int)L, (int)D, P);
    /* forwards: from the data */
    mxw_shape in[4] = {shp(3, (int64_t[]){T, N, I}), unknown(), unknown(), unknown()},
              out[3] = {unknown(), unknown(), unknown()};
    assert_int_equal(p->op->infer_shape(p->param, nin, in, nout, out), 0);
    expect_shape(&in[1], 1, (int64_t[]){want});
    expect_shape(&in[2], 3, (int64_t[]){L * D, N, Ho});
    if (lstm) expect_shape(&in[3], 3, (int64_t[]){L * D, N, H});
    expect_shape(&out[0], 3, (int64_t[]){T, N, D * Ho});
    expect_shape(&out[1], 3, (int64_t[]){L * D, N, Ho});
    if (lstm) expect_shape(&out[2], 3, (int64_t[]){L * D, N, H});
    /* backwards: the parameter count gives the input size, the output T, the state N */
    mxw_shape in2[4] = {unknown(), shp(1, (int64_t[]){want}), shp(3, (int64_t[]){L * D, N, Ho}), unknown()};
    mxw_shape out2[3] = {shp(3, (int64_t[]){T, -1, -1}), unknown(), unknown()};
    assert_int_equal(p->op->infer_shape(p->param, nin, in2, nout, out2), 0);
    expect_shape(&in2[0], 3, (int64_t[]){T, N, I});
    /* a parameter count no input size gives */
    mxw_shape in3[4] = {unknown(), shp(1, (int64_t[]){want + 1}), unknown(), unknown()},
              out3[3] = {unknown(), unknown(), unknown()};
    assert_int_not_equal(p->op->infer_shape(p->param, nin, in3, nout, out3), 0);
    assert_error_contains("parameters");
    mxw_params_free(p);
  }
  /* the hidden dropout mask: p > 0 with more than one layer */
  mxw_params *p =
      make("RNN", KV("mode", "gru", "state_size", "4", "num_layers", "3", "p", "0.5", "bidirectional", "True"));
  assert_int_equal(mxw_params_num_outputs(p), 2);
  assert_int_equal(mxw_params_num_visible_outputs(p), 1);
  mxw_shape in[3] = {shp(3, (int64_t[]){T, N, I}), unknown(), unknown()}, out[2] = {unknown(), unknown()};
  assert_int_equal(p->op->infer_shape(p->param, 3, in, 2, out), 0);
  expect_shape(&out[1], 4, (int64_t[]){2, T, N, 8});
  mxw_params_free(p);
  /* data of rank 2 */
  p = make("RNN", KV("mode", "lstm", "state_size", "4", "num_layers", "1"));
  mxw_shape bad[4] = {shp(2, (int64_t[]){T, N}), unknown(), unknown(), unknown()}, o1[1] = {unknown()};
  assert_int_not_equal(p->op->infer_shape(p->param, 4, bad, 1, o1), 0);
  assert_error_contains("rank-3");
  mxw_params_free(p);
}

/* _rnn_param_concat infers one or two unknown inputs from the output (MXNet's RNNParamConcatShape). */
static void test_rnn_param_concat_shapes(void **state) {
  (void)state;
  mxw_params *p = make("_rnn_param_concat", KV("num_args", "4", "dim", "0"));
  mxw_shape in[4] = {shp(1, (int64_t[]){-1}), shp(1, (int64_t[]){-1}), shp(1, (int64_t[]){5}), shp(1, (int64_t[]){3})};
  mxw_shape out[1] = {shp(1, (int64_t[]){28})};
  assert_int_equal(p->op->infer_shape(p->param, 4, in, 1, out), 0);
  expect_shape(&in[0], 1, (int64_t[]){10});
  expect_shape(&in[1], 1, (int64_t[]){10});
  mxw_shape in2[4] = {shp(1, (int64_t[]){-1}), shp(1, (int64_t[]){-1}), shp(1, (int64_t[]){-1}),
                      shp(1, (int64_t[]){3})};
  assert_int_not_equal(p->op->infer_shape(p->param, 4, in2, 1, out), 0);
  assert_error_contains("1 or 2 inputs");
  mxw_params_free(p);
}

/* Runs RNN (kv) on float64 inputs, returns output values into y (n of them). */
static void run_f64(const char *const *kv, int nin, mxw_ndarray **ins, double *y, int n, int which) {
  mxw_params *p = make("RNN", kv);
  mxw_ndarray *outs[4] = {0};
  int nout = 4;
  const int id = mxw_op_find("RNN");
  if (mxw_op_invoke(id, p, nin, ins, &nout, outs) != 0) fail_msg("%s", mxw_get_last_error());
  assert_int_equal((int)mxw_ndarray_size(outs[which]), n);
  memcpy(y, mxw_ndarray_data(outs[which]), sizeof(double) * (size_t)n);
  for (int i = 0; i < nout; i++) mxw_ndarray_free(outs[i]);
  mxw_params_free(p);
}

static double sigm(double v) { return 1 / (1 + exp(-v)); }

/* One input, one cell, one step: the values worked by hand from the formulas. */
static void test_one_cell_values(void **state) {
  (void)state;
  const int32_t s1[3] = {1, 1, 1};
  double x = 0.5, h = -0.3, c = 0.8, y[2];
  /* rnn_tanh: params wx, wh, bx, bh */
  {
    double pv[4] = {0.7, -1.2, 0.1, 0.05};
    mxw_ndarray *in[3] = {t_array_f64(3, s1, &x), t_array_f64(1, (int32_t[]){4}, pv), t_array_f64(3, s1, &h)};
    run_f64(KV("mode", "rnn_tanh", "state_size", "1", "num_layers", "1"), 3, in, y, 1, 0);
    assert_close(y[0], tanh(0.7 * 0.5 + -1.2 * -0.3 + 0.15), 1e-14);
    run_f64(KV("mode", "rnn_relu", "state_size", "1", "num_layers", "1"), 3, in, y, 1, 0);
    assert_close(y[0], 0.35 + 0.36 + 0.15, 1e-14);
    for (int i = 0; i < 3; i++) mxw_ndarray_free(in[i]);
  }
  /* lstm: W_x rows i, f, g, o; W_h rows; b_x; b_h */
  {
    double pv[16] = {0.1, 0.2, 0.3, 0.4, -0.5, 0.6, -0.7, 0.8, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08};
    mxw_ndarray *in[4] = {t_array_f64(3, s1, &x), t_array_f64(1, (int32_t[]){16}, pv), t_array_f64(3, s1, &h),
                          t_array_f64(3, s1, &c)};
    double pre[4];
    for (int j = 0; j < 4; j++) pre[j] = pv[j] * x + pv[4 + j] * h + pv[8 + j] + pv[12 + j];
    const double i = sigm(pre[0]), f = sigm(pre[1]), g = tanh(pre[2]), o = sigm(pre[3]);
    const double cn = f * c + i * g, hn = o * tanh(cn);
    run_f64(KV("mode", "lstm", "state_size", "1", "num_layers", "1", "state_outputs", "True"), 4, in, y, 1, 0);
    assert_close(y[0], hn, 1e-14);
    run_f64(KV("mode", "lstm", "state_size", "1", "num_layers", "1", "state_outputs", "True"), 4, in, y, 1, 2);
    assert_close(y[0], cn, 1e-14);
    /* clipped to [-0.1, 0.1]: cn = 1.13.. -> 0.1, h = o tanh(0.1) */
    assert_true(cn > 0.1);
    run_f64(KV("mode", "lstm", "state_size", "1", "num_layers", "1", "state_outputs", "True", "lstm_state_clip_min",
               "-0.1", "lstm_state_clip_max", "0.1"),
            4, in, y, 1, 0);
    assert_close(y[0], o * tanh(0.1), 1e-14);
    for (int k = 0; k < 4; k++) mxw_ndarray_free(in[k]);
  }
  /* gru: rows r, z, n; n = tanh(wx_n x + bx_n + r (wh_n h + bh_n)), h' = (1 - z) n + z h */
  {
    double pv[12] = {0.3, -0.2, 0.9, 0.4, 0.5, -0.6, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06};
    mxw_ndarray *in[3] = {t_array_f64(3, s1, &x), t_array_f64(1, (int32_t[]){12}, pv), t_array_f64(3, s1, &h)};
    const double r = sigm(0.3 * x + 0.4 * h + 0.01 + 0.04), z = sigm(-0.2 * x + 0.5 * h + 0.02 + 0.05);
    const double n = tanh(0.9 * x + 0.03 + r * (-0.6 * h + 0.06));
    run_f64(KV("mode", "gru", "state_size", "1", "num_layers", "1"), 3, in, y, 1, 0);
    assert_close(y[0], (1 - z) * n + z * h, 1e-14);
    for (int k = 0; k < 3; k++) mxw_ndarray_free(in[k]);
  }
  /* bidirectional, 2 steps, weights 0: each output is tanh of its direction's biases, which sit after
   * all the weights as (layer 0 forward b_x, b_h), (layer 0 reverse b_x, b_h) */
  {
    const int32_t s2[3] = {2, 1, 1}, sh[3] = {2, 1, 1};
    double xv[2] = {1, 2}, hv[2] = {0, 0}, pv[8] = {0, 0, 0, 0, 0.1, 0.2, -0.3, 0.5};
    mxw_ndarray *in[3] = {t_array_f64(3, s2, xv), t_array_f64(1, (int32_t[]){8}, pv), t_array_f64(3, sh, hv)};
    double yy[4];
    run_f64(KV("mode", "rnn_tanh", "state_size", "1", "num_layers", "1", "bidirectional", "True"), 3, in, yy, 4, 0);
    const double want[4] = {tanh(0.3), tanh(0.2), tanh(0.3), tanh(0.2)};
    for (int k = 0; k < 4; k++) assert_close(yy[k], want[k], 1e-14);
    for (int k = 0; k < 3; k++) mxw_ndarray_free(in[k]);
  }
}

/* ---- threads ------------------------------------------------------------------------------------- */
static uint32_t g_seed = 99;
static double urand(void) {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 17;
  g_seed ^= g_seed << 5;
  return (g_seed >> 8) * (1.0 / 16777216.0);
}
static mxw_ndarray *rand_f32(int ndim, const int32_t *shape, double scale) {
  mxw_ndarray *a = t_array(ndim, shape, NULL);
  float *p = (float *)mxw_ndarray_data(a);
  for (int64_t i = 0; i < mxw_ndarray_size(a); i++) p[i] = (float)((2 * urand() - 1) * scale);
  return a;
}
static size_t nbytes(const mxw_ndarray *a) {
  return (size_t)mxw_ndarray_size(a) * (size_t)mxw_dtype_size(mxw_ndarray_dtype(a));
}

/* op(kv) on ins at 1..4 threads, the split threshold at 1 element-op: outputs byte-identical. */
static void same_bytes(const char *op, const char *const *kv, int nin, mxw_ndarray **ins, int train) {
  mxw_params *p = make(op, kv);
  const int id = mxw_op_find(op);
  mxw_ndarray *ref[8] = {0};
  int nref = 0;
  mxw_par_set_chunk_work(1.0);
  for (int threads = 1; threads <= 4; threads++) {
    assert_int_equal(mxw_set_num_threads(threads), 0);
    mxw_ndarray *outs[8] = {0};
    int nout = 8;
    mxw_set_training(train);
    mxw_random_seed(5);
    if (mxw_op_invoke(id, p, nin, ins, &nout, outs) != 0) fail_msg("%s: %s", op, mxw_get_last_error());
    mxw_set_training(0);
    if (threads == 1) {
      for (int i = 0; i < nout; i++) ref[i] = outs[i];
      nref = nout;
      continue;
    }
    assert_int_equal(nout, nref);
    for (int i = 0; i < nout; i++) {
      if (memcmp(mxw_ndarray_data(outs[i]), mxw_ndarray_data(ref[i]), nbytes(ref[i])) != 0)
        fail_msg("%s output %d differs with %d threads", op, i, threads);
      mxw_ndarray_free(outs[i]);
    }
  }
  for (int i = 0; i < nref; i++) mxw_ndarray_free(ref[i]);
  mxw_par_set_chunk_work(0.0);
  assert_int_equal(mxw_set_num_threads(1), 0);
  mxw_params_free(p);
}

static void test_threads_same_bytes(void **state) {
  (void)state;
  const int T = 5, N = 3, I = 6, H = 9;
  static const char *const modes[] = {"lstm", "gru", "rnn_tanh"};
  for (int m = 0; m < 3; m++) {
    const int G = m == 0 ? 4 : m == 1 ? 3 : 1, lstm = m == 0;
    const int32_t xs[3] = {T, N, I}, ps[1] = {(int32_t)param_size(G, I, H, 2, 2, 0)}, hs[3] = {4, N, H};
    const int32_t ys[3] = {T, N, 2 * H}, ms[4] = {1, T, N, 2 * H};
    mxw_ndarray *x = rand_f32(3, xs, 1), *w = rand_f32(1, ps, 0.5), *h = rand_f32(3, hs, 1), *c = rand_f32(3, hs, 1);
    const char *const *kv = KV("mode", modes[m], "state_size", "9", "num_layers", "2", "bidirectional", "True", "p",
                               "0.3", "state_outputs", "True");
    mxw_ndarray *fin[4] = {x, w, h, c};
    same_bytes("RNN", kv, lstm ? 4 : 3, fin, 1);
    /* _backward_RNN(inputs, mask, d output, d state[, d cell]) */
    mxw_ndarray *mask = rand_f32(4, ms, 1), *dy = rand_f32(3, ys, 1), *dh = rand_f32(3, hs, 1),
                *dc = rand_f32(3, hs, 1);
    float *mk = (float *)mxw_ndarray_data(mask);
    for (int64_t i = 0; i < mxw_ndarray_size(mask); i++) mk[i] = mk[i] > 0 ? 1.0f / 0.7f : 0.0f;
    mxw_ndarray *bin[9];
    int k = 0;
    bin[k++] = x;
    bin[k++] = w;
    bin[k++] = h;
    if (lstm) bin[k++] = c;
    bin[k++] = mask;
    bin[k++] = dy;
    bin[k++] = dh;
    if (lstm) bin[k++] = dc;
    same_bytes("_backward_RNN", kv, k, bin, 1);
    mxw_ndarray *all[8] = {x, w, h, c, mask, dy, dh, dc};
    for (int i = 0; i < 8; i++) mxw_ndarray_free(all[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_param_size_and_shapes),
      cmocka_unit_test(test_rnn_param_concat_shapes),
      cmocka_unit_test(test_one_cell_values),
      cmocka_unit_test(test_threads_same_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
