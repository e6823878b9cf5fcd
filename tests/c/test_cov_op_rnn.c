/* rnn.c through autograd: RNN's gradient (the _backward_RNN node it records) for every mode, with
 * and without use_sequence_length, with an LSTM projection, in float64 and float32, against a
 * float64 reference of MXNet's recurrences written here (rnn_impl.h: gate orders LSTM [i, f, g,
 * o], GRU [r, z, n] with n = tanh(Wx x + bx + r (Wh h + bh)); packed parameters [Wx, Wh, (Wr),
 * biases]; steps past a sequence's length output 0 and keep the state) and central differences
 * of that reference; _rnn_param_concat forward, gradient and errors; RNN's dtype errors. */
#include "cov_op_helpers.h"

enum { M_RELU, M_TANH, M_LSTM, M_GRU };
static const char *const k_modes[] = {"rnn_relu", "rnn_tanh", "lstm", "gru"};
typedef struct {
  int mode, T, N, I, H, P; /* P: projection size (LSTM), 0 for none */
  int clip;                /* LSTM: the cell state clipped to [-0.3, 0.3] (lstm_state_clip_min/max) */
} cfg;

static int gates(int mode) { return mode == M_LSTM ? 4 : mode == M_GRU ? 3 : 1; }
static int ho(const cfg *c) { return c->P ? c->P : c->H; }
static int nparams(const cfg *c) {
  int GH = gates(c->mode) * c->H;
  return GH * c->I + GH * ho(c) + (c->P ? c->P * c->H : 0) + 2 * GH;
}
static double sg(double v) { return 1 / (1 + exp(-v)); }

/* y (T, N, Ho), hT (N, Ho), cT (N, H) from x (T, N, I), w, h0 (N, Ho), c0 (N, H); lens NULL or (N,) */
static void ref_rnn(const cfg *c, const double *x, const double *w, const double *h0, const double *c0, const int *lens,
                    double *y, double *hT, double *cT) {
  const int G = gates(c->mode), H = c->H, GH = G * H, Ho = ho(c), I = c->I, N = c->N;
  const double *wx = w, *wh = wx + GH * I, *wr = wh + GH * Ho, *bx = wr + (c->P ? c->P * H : 0), *bh = bx + GH;
  double h[8][8], cc[8][8];
  for (int n = 0; n < N; n++) {
    for (int k = 0; k < Ho; k++) h[n][k] = h0[n * Ho + k];
    for (int k = 0; k < H; k++) cc[n][k] = c0 ? c0[n * H + k] : 0;
  }
  for (int t = 0; t < c->T; t++)
    for (int n = 0; n < N; n++) {
      double *yt = y + (t * N + n) * Ho;
      if (lens && t >= lens[n]) {
        for (int k = 0; k < Ho; k++) yt[k] = 0;
        continue;
      }
      double ax[32], ah[32], hn[8];
      for (int j = 0; j < GH; j++) {
        ax[j] = bx[j];
        ah[j] = bh[j];
        for (int i = 0; i < I; i++) ax[j] += wx[j * I + i] * x[(t * N + n) * I + i];
        for (int k = 0; k < Ho; k++) ah[j] += wh[j * Ho + k] * h[n][k];
      }
      for (int k = 0; k < H; k++) {
        if (c->mode == M_RELU) {
          hn[k] = fmax(0, ax[k] + ah[k]);
        } else if (c->mode == M_TANH) {
          hn[k] = tanh(ax[k] + ah[k]);
        } else if (c->mode == M_LSTM) {
          double ig = sg(ax[k] + ah[k]), fg = sg(ax[H + k] + ah[H + k]), gg = tanh(ax[2 * H + k] + ah[2 * H + k]),
                 og = sg(ax[3 * H + k] + ah[3 * H + k]);
          cc[n][k] = fg * cc[n][k] + ig * gg;
          if (c->clip) cc[n][k] = fmin(0.3, fmax(-0.3, cc[n][k]));
          hn[k] = og * tanh(cc[n][k]);
        } else {
          double r = sg(ax[k] + ah[k]), z = sg(ax[H + k] + ah[H + k]), nn = tanh(ax[2 * H + k] + r * ah[2 * H + k]);
          hn[k] = (1 - z) * nn + z * h[n][k];
        }
      }
      for (int k = 0; k < Ho; k++) {
        double v = hn[k];
        if (c->P) {
          v = 0;
          for (int q = 0; q < H; q++) v += wr[k * H + q] * hn[q];
        }
        yt[k] = v;
      }
      for (int k = 0; k < Ho; k++) h[n][k] = yt[k];
    }
  for (int n = 0; n < N; n++) {
    for (int k = 0; k < Ho; k++) hT[n * Ho + k] = h[n][k];
    if (cT)
      for (int k = 0; k < H; k++) cT[n * H + k] = cc[n][k];
  }
}

static double ref_loss(const cfg *c, const double *x, const double *w, const double *h0, const double *c0,
                       const int *lens, const double *head) {
  double y[256], hT[64], cT[64];
  ref_rnn(c, x, w, h0, c0, lens, y, hT, cT);
  double L = 0;
  for (int i = 0; i < c->T * c->N * ho(c); i++) L += head[i] * y[i];
  return L;
}

/* d loss / d v[i] by central differences of the reference (v is one of the operands, perturbed in place) */
static void ref_grad(const cfg *c, double *x, double *w, double *h0, double *c0, const int *lens, const double *head,
                     double *v, int n, double *out) {
  for (int i = 0; i < n; i++) {
    const double keep = v[i];
    v[i] = keep + 1e-6;
    double lp = ref_loss(c, x, w, h0, c0, lens, head);
    v[i] = keep - 1e-6;
    double lm = ref_loss(c, x, w, h0, c0, lens, head);
    v[i] = keep;
    out[i] = (lp - lm) / 2e-6;
  }
}

static void check_case(const cfg *c, int dt, int with_lens) {
  const int T = c->T, N = c->N, I = c->I, H = c->H, Ho = ho(c), np = nparams(c), lstm = c->mode == M_LSTM;
  double x[64], w[256], h0[16], c0[16], head[128];
  uint32_t s = 12345u + (uint32_t)(c->mode * 7 + with_lens * 3 + c->P);
  for (int i = 0; i < T * N * I; i++) x[i] = ((s = s * 1103515245u + 12345u) >> 16) % 1000 / 500.0 - 1;
  for (int i = 0; i < np; i++) w[i] = ((s = s * 1103515245u + 12345u) >> 16) % 1000 / 1000.0 - 0.5;
  for (int i = 0; i < N * Ho; i++) h0[i] = ((s = s * 1103515245u + 12345u) >> 16) % 1000 / 1000.0 - 0.5;
  for (int i = 0; i < N * H; i++) c0[i] = ((s = s * 1103515245u + 12345u) >> 16) % 1000 / 1000.0 - 0.5;
  for (int i = 0; i < T * N * Ho; i++) head[i] = ((s = s * 1103515245u + 12345u) >> 16) % 1000 / 500.0 - 1;
  const int lens[2] = {T, 1};
  const int *lp = with_lens ? lens : NULL;
  double y[256], hT[64], cT[64];
  ref_rnn(c, x, w, h0, lstm ? c0 : NULL, lp, y, hT, cT);

  char hs[8], ps[8];
  snprintf(hs, sizeof hs, "%d", H);
  snprintf(ps, sizeof ps, "%d", c->P);
  const char **kv =
      KV("mode", k_modes[c->mode], "state_size", hs, "num_layers", "1", "state_outputs", "True", "use_sequence_length",
         with_lens ? "True" : "False", "projection_size", c->P ? ps : "None", "lstm_state_clip_min",
         c->clip ? "-0.3" : "None", "lstm_state_clip_max", c->clip ? "0.3" : "None");
  mxw_ndarray *in[5];
  int nin = 0;
  in[nin++] = c_arr(dt, 3, SHP(T, N, I), x);
  in[nin++] = c_arr(dt, 1, SHP(np), w);
  in[nin++] = c_arr(dt, 3, SHP(1, N, Ho), h0);
  if (lstm) in[nin++] = c_arr(dt, 3, SHP(1, N, H), c0);
  if (with_lens) in[nin++] = c_arr(MXW_INT32, 1, SHP(N), DV(lens[0], lens[1]));
  const double tol = dt == MXW_FLOAT64 ? 1e-7 : dt == MXW_FLOAT32 ? 2e-4 : 2e-2;
  mxw_ndarray *outs[3];
  int nout = 3;
  if (c_run("RNN", in, nin, kv, outs, &nout) != 0) fail_msg("RNN %s: %s", k_modes[c->mode], mxw_get_last_error());
  assert_int_equal(nout, lstm ? 3 : 2);
  c_expect(outs[0], y, T * N * Ho, tol);
  c_expect(outs[1], hT, N * Ho, tol);
  if (lstm) c_expect(outs[2], cT, N * H, tol);
  c_free(nout, outs);

  /* gradients of sum(head * y) with respect to data, parameters, state (and cell) */
  double *vs[4] = {x, w, h0, c0};
  const int ns[4] = {T * N * I, np, N * Ho, N * H};
  const double gtol = dt == MXW_FLOAT64 ? 1e-6 : dt == MXW_FLOAT32 ? 2e-3 : 5e-2;
  for (int v = 0; v < (lstm ? 4 : 3); v++) {
    double want[256];
    ref_grad(c, x, w, h0, lstm ? c0 : NULL, lp, head, vs[v], ns[v], want);
    mxw_ndarray *g = c_grad("RNN", in, nin, v, 0, head, kv);
    for (int i = 0; i < ns[v]; i++)
      if (!(fabs(c_at(g, i) - want[i]) <= gtol * (1 + fabs(want[i]))))
        fail_msg("RNN %s (P %d, lens %d, dtype %d): d input %d [%d] = %.9g, expected %.9g", k_modes[c->mode], c->P,
                 with_lens, dt, v, i, c_at(g, i), want[i]);
    mxw_ndarray_free(g);
  }
  c_free(nin, in);
}

static void test_rnn_gradients_f64(void **state) {
  (void)state;
  for (int m = 0; m < 4; m++)
    for (int l = 0; l < 2; l++) check_case(&(cfg){m, 3, 2, 2, 3, 0}, MXW_FLOAT64, l);
  check_case(&(cfg){M_LSTM, 3, 2, 2, 3, 2}, MXW_FLOAT64, 0);
  check_case(&(cfg){M_LSTM, 3, 2, 2, 3, 2}, MXW_FLOAT64, 1);
}

static void test_rnn_gradients_f32(void **state) {
  (void)state;
  for (int m = 0; m < 4; m++)
    for (int l = 0; l < 2; l++) check_case(&(cfg){m, 3, 2, 2, 5, 0}, MXW_FLOAT32, l);
  check_case(&(cfg){M_LSTM, 2, 2, 3, 4, 3}, MXW_FLOAT32, 1);
  /* the clipped cell state: no gradient flows through a clipped cell (f32 vector path and f64) */
  check_case(&(cfg){M_LSTM, 3, 2, 2, 5, 0, 1}, MXW_FLOAT32, 0);
  check_case(&(cfg){M_LSTM, 3, 2, 2, 3, 0, 1}, MXW_FLOAT64, 1);
  /* float16 through float32 copies */
  check_case(&(cfg){M_GRU, 2, 2, 2, 3, 0}, MXW_FLOAT16, 0);
}

/* A sequence of no steps: y is empty, the states pass through, and so do their gradients. */
static void test_rnn_zero_steps(void **state) {
  (void)state;
  const char **kv = KV("mode", "lstm", "state_size", "2", "num_layers", "1", "state_outputs", "True");
  /* I = 1, H = 2: parameters 4 * 2 * (1 + 2 + 2) = 40 */
  mxw_ndarray *in[4] = {c_arr(MXW_FLOAT32, 3, SHP(0, 1, 1), NULL), c_arr(MXW_FLOAT32, 1, SHP(40), NULL),
                        c_arr(MXW_FLOAT32, 3, SHP(1, 1, 2), DV(0.5, -1)),
                        c_arr(MXW_FLOAT32, 3, SHP(1, 1, 2), DV(2, 3))};
  mxw_ndarray *outs[3];
  int nout = 3;
  assert_int_equal(c_run("RNN", in, 4, kv, outs, &nout), 0);
  assert_int_equal((int)mxw_ndarray_size(outs[0]), 0);
  c_expect(outs[1], DV(0.5, -1), 2, 0);
  c_expect(outs[2], DV(2, 3), 2, 0);
  c_free(3, outs);
  mxw_ndarray *g = c_grad("RNN", in, 4, 2, 1, DV(7, 8), kv);
  c_expect(g, DV(7, 8), 2, 0);
  mxw_ndarray_free(g);
  g = c_grad("RNN", in, 4, 1, 1, DV(7, 8), kv);
  c_expect(g, (double[40]){0}, 40, 0);
  mxw_ndarray_free(g);
  c_free(4, in);
}

static void test_rnn_errors(void **state) {
  (void)state;
  const char **kv = KV("mode", "gru", "state_size", "2", "num_layers", "1", "use_sequence_length", "True");
  /* (T=2, N=2, I=1): parameters 3*2*(1 + 2 + 2) = 30 */
  mxw_ndarray *in[4] = {c_arr(MXW_FLOAT32, 3, SHP(2, 2, 1), NULL), c_arr(MXW_FLOAT32, 1, SHP(30), NULL),
                        c_arr(MXW_FLOAT32, 3, SHP(1, 2, 2), NULL), c_arr(MXW_FLOAT32, 1, SHP(2), DV(2, 3))};
  c_fail("RNN", in, 4, kv, "sequence_length");
  mxw_ndarray_free(in[3]);
  in[3] = c_arr(MXW_FLOAT32, 1, SHP(2), DV(0, 1));
  c_fail("RNN", in, 4, kv, "sequence_length");
  mxw_ndarray_free(in[2]);
  in[2] = c_arr(MXW_FLOAT64, 3, SHP(1, 2, 2), NULL);
  c_fail("RNN", in, 4, kv, "has dtype float64, expected float32");
  c_free(4, in);
  in[0] = c_arr(MXW_INT32, 3, SHP(2, 2, 1), NULL);
  in[1] = c_arr(MXW_INT32, 1, SHP(30), NULL);
  in[2] = c_arr(MXW_INT32, 3, SHP(1, 2, 2), NULL);
  c_fail("RNN", in, 3, KV("mode", "gru", "state_size", "2", "num_layers", "1"), "dtype int32 is not supported");
  c_free(3, in);
}

/* _rnn_param_concat: a concat along dim (default 1) whose gradient slices the head back. */
static void test_param_concat(void **state) {
  (void)state;
  mxw_ndarray *in[3] = {c_arr(MXW_FLOAT32, 2, SHP(2, 3), DV(1, 2, 3, 4, 5, 6)),
                        c_arr(MXW_FLOAT32, 2, SHP(2, 1), DV(7, 8)), c_arr(MXW_FLOAT32, 2, SHP(2, 0), NULL)};
  mxw_ndarray *o = c_run1("_rnn_param_concat", in, 3, KV("num_args", "3"));
  t_expect_shape(o, 2, SHP(2, 4));
  c_expect(o, DV(1, 2, 3, 7, 4, 5, 6, 8), 8, 0);
  mxw_ndarray_free(o);
  mxw_ndarray *g = c_grad("_rnn_param_concat", in, 3, 1, 0, DV(1, 2, 3, 4, 5, 6, 7, 8), KV("num_args", "3"));
  c_expect(g, DV(4, 8), 2, 0);
  mxw_ndarray_free(g);
  g = c_grad("_rnn_param_concat", in, 3, 0, 0, DV(1, 2, 3, 4, 5, 6, 7, 8), KV("num_args", "3", "dim", "-1"));
  c_expect(g, DV(1, 2, 3, 5, 6, 7), 6, 0);
  mxw_ndarray_free(g);
  g = c_grad("_rnn_param_concat", in, 3, 2, 0, DV(1, 2, 3, 4, 5, 6, 7, 8), KV("num_args", "3"));
  assert_int_equal((int)mxw_ndarray_size(g), 0);
  mxw_ndarray_free(g);
  /* along dim 0 */
  mxw_ndarray *r[2] = {in[0], c_arr(MXW_FLOAT32, 2, SHP(1, 3), DV(9, 9, 9))};
  o = c_run1("_rnn_param_concat", r, 2, KV("num_args", "2", "dim", "0"));
  c_expect(o, DV(1, 2, 3, 4, 5, 6, 9, 9, 9), 9, 0);
  mxw_ndarray_free(o);
  c_fail("_rnn_param_concat", r, 2, KV("num_args", "2", "dim", "2"),
         "dim=2 is out of range for inputs of 2 dimensions");
  c_fail("_rnn_param_concat", r, 2, KV("num_args", "2"),
         "Incompatible input shape: input (1, 3) does not match the other shapes except along dim=1");
  mxw_ndarray_free(r[1]);
  r[1] = c_arr(MXW_FLOAT32, 1, SHP(3), NULL);
  c_fail("_rnn_param_concat", r, 2, KV("num_args", "2"), "expected rank 2 like the other inputs and the output");
  mxw_ndarray_free(r[1]);
  c_free(3, in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rnn_gradients_f64), cmocka_unit_test(test_rnn_gradients_f32),
      cmocka_unit_test(test_rnn_zero_steps),    cmocka_unit_test(test_rnn_errors),
      cmocka_unit_test(test_param_concat),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
