/* rnn.c -- the fused recurrent operator RNN (alias _npx_rnn: vanilla relu/tanh, LSTM with optional
 * projection and cell clipping, GRU; stacked layers, bidirectional, dropout between layers,
 * variable sequence lengths), its gradient _backward_RNN, and _rnn_param_concat (the Concat Gluon's
 * recurrent layers pack their weights with). Semantics: ../shared/spec/ops.md "RNN" and MXNet 1.9.1's
 * rnn-inl.h / rnn.cc / rnn_impl.h (CPU kernels) and, where the CPU kernels refuse an option
 * (projection in training, state clipping, use_sequence_length), cuDNN's definition the GPU path uses.
 *
 * Shapes (L layers, D = 2 if bidirectional, H = state_size, P = projection_size, Ho = P or H):
 *   data (T, N, I) -- layout TNC; state (L*D, N, Ho); state_cell (L*D, N, H); sequence_length (N)
 *   output (T, N, D*Ho); state_output (L*D, N, Ho); statecell_output (L*D, N, H)
 * The parameter vector, exactly MXNet's: first every weight, for each layer l and direction d in
 * turn: W_x (G*H, In_l), W_h (G*H, Ho) [, W_r (P, H) with a projection]; then every bias, for each
 * (l, d): b_x (G*H), b_h (G*H). G = 1 / 4 / 3 gates, In_0 = I, In_l = D*Ho. Gate rows in MXNet's
 * order: LSTM i, f, g, o; GRU r, z, n. Per step, with x_t the layer input and h the state:
 *   rnn    h' = act(W_x x + b_x + W_h h + b_h)
 *   lstm   i, f, o = sigmoid(.), g = tanh(.), c' = f c + i g [clipped to [min, max]], h' = o tanh(c')
 *          [projection: r' = W_r h', which is the state and the output]
 *   gru    r, z = sigmoid(.), n = tanh(W_xn x + b_xn + r (W_hn h + b_hn)), h' = (1 - z) n + z h
 * The reverse direction runs t = T-1 .. 0 and writes the upper half of each output row. A layer
 * after the first takes the previous layer's output, dropped out (p) when training.
 *
 * sequence_length (cuDNN's unpacked padded layout, padding fill 0): batch item n runs only its
 * first len[n] steps: outputs at t >= len[n] are 0 and the state carries over unchanged, so the
 * forward direction's final state is the one at t = len[n] - 1 and the reverse direction starts at
 * t = len[n] - 1. Lengths must be in [1, T] (cuDNN's rule).
 * Clipping (cuDNN's CUDNN_RNN_CLIP_MINMAX): c' is clipped before h' = o tanh(c'); with
 * lstm_state_clip_nan a NaN cell becomes lstm_state_clip_min (fmax(c, min) then fmin(., max)),
 * otherwise it propagates. The clipped cell gets no gradient where clipping changed it.
 *
 * Kernels: per layer and direction, the input projection of all T steps is one GEMM (T*N, In) x
 * (In, G*H) with the biases folded in; each step is one GEMM (N, Ho) x (Ho, G*H) [+ the projection
 * GEMM] and an elementwise pass over the N*H cells split across the thread pool (float32: four
 * cells of a batch row at a time with vmath's sigmoid / tanh lanes, a partial group padded, so
 * results do not depend on the thread count). GEMMs are mxw_sgemm (float32, SIMD, threaded) or
 * mxw_dgemm (float64); float16 / bfloat16 run on float32 copies. Timing (simd tier, one thread):
 * LSTM T=35 N=32 I=H=200, 2 layers: forward 45 ms (32 GFLOP/s), forward + backward 170 ms. The kernels are written once
 * for a real type RT and instantiated for float and double by including this file into itself (the RNN_TEMPLATE section
 * at the end).
 *
 * Gradient: _backward_RNN(data, parameters, state[, state_cell][, sequence_length][, mask], d output
 * [, d state_output[, d statecell_output]]) -> d data, d parameters, d state[, d state_cell].
 * It RECOMPUTES the forward (keeping every gate, cell and layer input of that pass in a workspace
 * freed at the end) and then runs backpropagation through time; the forward keeps nothing. Why:
 * the alternative, a hidden "reserve" output holding the gates (MXNet's CPU reserve space), would
 * be allocated by every graph and eager call whether or not anything is differentiated (output
 * shapes cannot depend on the training flag), (G + 2..4) times the size of every layer's output --
 * memory paid by all inference -- while recomputing costs one extra forward pass, about a third of
 * a training step's RNN work. The only thing the backward cannot recompute is the dropout mask:
 * when p > 0 and num_layers > 1 the op has one hidden output `mask` (L-1, T, N, D*Ho) holding
 * 0 or 1/(1-p) per element of each inner layer's output (1 everywhere when not training), as
 * Dropout's hidden mask. The weight gradients are again batched over time: dW_x = dA_x^T X,
 * dW_h = dA_h^T H_prev and dX = dA_x W_x are single GEMMs per layer and direction; only
 * dh_prev = dA_h W_h runs per step. */
#ifndef RNN_TEMPLATE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/mxw_parallel.h"
#include "../kernels/gemm.h"
#include "../kernels/vmath.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ==== parameters ================================================================================ */
enum { MODE_RNN_RELU, MODE_RNN_TANH, MODE_LSTM, MODE_GRU };
static const char *const k_rnn_modes[] = {"rnn_relu", "rnn_tanh", "lstm", "gru", NULL};

typedef struct {
  int64_t state_size, num_layers;
  int bidirectional, mode;
  double p;
  int state_outputs;
  mxw_opt_int projection_size;
  mxw_opt_float lstm_state_clip_min, lstm_state_clip_max;
  int lstm_state_clip_nan, use_sequence_length;
} RNNParam;

static const mxw_attr_spec k_rnn_attrs[] = {
    MXW_A_INT("state_size", RNNParam, state_size, NULL, "size of the state for each layer"),
    MXW_A_INT("num_layers", RNNParam, num_layers, NULL, "number of stacked layers"),
    MXW_A_BOOL("bidirectional", RNNParam, bidirectional, "False", "whether to use bidirectional recurrent layers"),
    MXW_A_ENUM("mode", RNNParam, mode, NULL, k_rnn_modes, "the type of RNN to compute"),
    MXW_A_FLOAT("p", RNNParam, p, "0",
                "drop rate of the dropout on the outputs of each RNN layer, except the last "
                "layer (training only)"),
    MXW_A_BOOL("state_outputs", RNNParam, state_outputs, "False", "whether to have the states as symbol outputs"),
    MXW_A_OPT_INT("projection_size", RNNParam, projection_size, "None", "size of the LSTM projection"),
    MXW_A_OPT_FLOAT("lstm_state_clip_min", RNNParam, lstm_state_clip_min, "None",
                    "minimum clip value of LSTM states (together with lstm_state_clip_max)"),
    MXW_A_OPT_FLOAT("lstm_state_clip_max", RNNParam, lstm_state_clip_max, "None",
                    "maximum clip value of LSTM states (together with lstm_state_clip_min)"),
    MXW_A_BOOL("lstm_state_clip_nan", RNNParam, lstm_state_clip_nan, "False",
               "whether to stop NaN from propagating in the cell state by clipping it to min"),
    MXW_A_BOOL("use_sequence_length", RNNParam, use_sequence_length, "False",
               "whether the op takes an extra input sequence_length giving each batch item's length"),
};
#define NUM_RNN_ATTRS ((int)(sizeof k_rnn_attrs / sizeof k_rnn_attrs[0]))

/* MXNet's checks (RNNParam ranges, the cuDNN path's checks for projection and clipping). */
static int rnn_validate(void *param) {
  const RNNParam *p = (const RNNParam *)param;
  MXW_CHECK(p->state_size >= 1 && p->state_size <= INT32_MAX, "state_size must be a positive integer, got %lld",
            (long long)p->state_size);
  MXW_CHECK(p->num_layers >= 1 && p->num_layers <= 4096, "num_layers must be a positive integer, got %lld",
            (long long)p->num_layers);
  MXW_CHECK(p->p >= 0.0 && p->p < 1.0, "unsupported dropout value p=%g, should be 0 <= dropout < 1", p->p);
  if (p->projection_size.has) {
    MXW_CHECK(p->mode == MODE_LSTM, "Projection is only supported for LSTM.");
    MXW_CHECK(p->projection_size.v >= 1, "projection_size must be a positive integer, got %lld",
              (long long)p->projection_size.v);
    MXW_CHECK(p->state_size >= p->projection_size.v,
              "State size must be larger than projection size (state_size=%lld, projection_size=%lld).",
              (long long)p->state_size, (long long)p->projection_size.v);
  }
  if (p->lstm_state_clip_min.has || p->lstm_state_clip_max.has) {
    MXW_CHECK(p->mode == MODE_LSTM, "State clipping is only supported for LSTM.");
    MXW_CHECK(p->lstm_state_clip_min.has && p->lstm_state_clip_max.has,
              "lstm_state_clip_min and lstm_state_clip_max must be specified together.");
    MXW_CHECK(p->lstm_state_clip_max.v >= p->lstm_state_clip_min.v,
              "lstm_state_clip_max must be greater or equal to lstm_state_clip_min (got min=%g, max=%g)",
              p->lstm_state_clip_min.v, p->lstm_state_clip_max.v);
  }
  return 0;
}

static int rnn_gates(int mode) { return mode == MODE_LSTM ? 4 : mode == MODE_GRU ? 3 : 1; }
static int rnn_dirs(const RNNParam *p) { return p->bidirectional ? 2 : 1; }
static int64_t rnn_out_size(const RNNParam *p) { return p->projection_size.has ? p->projection_size.v : p->state_size; }
static int rnn_has_mask(const RNNParam *p) { return p->p > 0 && p->num_layers > 1; }

/* Inputs: data, parameters, state[, state_cell (LSTM)][, sequence_length]. */
static int rnn_num_inputs(const void *param) {
  const RNNParam *p = (const RNNParam *)param;
  return 3 + (p->mode == MODE_LSTM) + (p->use_sequence_length != 0);
}
static int rnn_seq_index(const RNNParam *p) { return p->mode == MODE_LSTM ? 4 : 3; }
static const char *const k_rnn_inputs[] = {"data", "parameters", "state", "state_cell", "sequence_length", NULL};
static const char *rnn_input_name(const void *param, int index) {
  const RNNParam *p = (const RNNParam *)param;
  if (index < 3) return k_rnn_inputs[index];
  if (index == 3 && p->mode == MODE_LSTM) return "state_cell";
  if (index == rnn_seq_index(p) && p->use_sequence_length) return "sequence_length";
  return NULL;
}
/* Outputs: output[, state_output[, statecell_output (LSTM)]] visible, then the hidden dropout mask. */
static int rnn_num_visible(const void *param) {
  const RNNParam *p = (const RNNParam *)param;
  return p->state_outputs ? (p->mode == MODE_LSTM ? 3 : 2) : 1;
}
static int rnn_num_outputs(const void *param) {
  const RNNParam *p = (const RNNParam *)param;
  return rnn_num_visible(param) + rnn_has_mask(p);
}

/* GetRnnParamSize: the flat parameter count for input size I. */
static int64_t rnn_param_size(const RNNParam *p, int64_t I) {
  const int64_t H = p->state_size, D = rnn_dirs(p), G = rnn_gates(p->mode), L = p->num_layers;
  const int64_t Ho = rnn_out_size(p), Pw = p->projection_size.has ? p->projection_size.v * H : 0;
  const int64_t first = (I + Ho + 2) * G * H * D + Pw * D;
  const int64_t other = (D * Ho + Ho + 2) * G * H * D + Pw * D;
  return first + (L - 1) * other;
}

/* ==== the compute description shared by the kernels ============================================ */
typedef struct {
  int mode, L, D, G;
  int64_t T, N, I, H, P, Ho, GH;
  int clip, clip_nan;
  double cmin, cmax;
  const int64_t *len; /* per batch item, or NULL: every item runs all T steps */
  double p;
} rnn_cfg;

static rnn_cfg rnn_make_cfg(const RNNParam *p, const mxw_shape *data) {
  rnn_cfg c;
  memset(&c, 0, sizeof c);
  c.mode = p->mode;
  c.L = (int)p->num_layers;
  c.D = rnn_dirs(p);
  c.G = rnn_gates(p->mode);
  c.T = data->dims[0];
  c.N = data->dims[1];
  c.I = data->dims[2];
  c.H = p->state_size;
  c.P = p->projection_size.has ? p->projection_size.v : 0;
  c.Ho = c.P ? c.P : c.H;
  c.GH = c.G * c.H;
  c.clip = p->lstm_state_clip_min.has;
  c.clip_nan = p->lstm_state_clip_nan;
  c.cmin = p->lstm_state_clip_min.v;
  c.cmax = p->lstm_state_clip_max.v;
  c.p = p->p;
  return c;
}

static int64_t layer_in(const rnn_cfg *c, int l) { return l ? c->D * c->Ho : c->I; }

/* Where layer l, direction d's matrices and biases start in the parameter vector. */
typedef struct {
  int64_t wx, wh, wr, bx, bh;
} rnn_off;
static rnn_off rnn_offsets(const rnn_cfg *c, int l, int d) {
  rnn_off o = {0, 0, 0, 0, 0};
  int64_t w = 0, total = 0;
  for (int ll = 0; ll < c->L; ll++) {
    for (int dd = 0; dd < c->D; dd++) {
      const int64_t sx = c->GH * layer_in(c, ll), sh = c->GH * c->Ho, sr = c->P * c->H;
      if (ll == l && dd == d) {
        o.wx = w;
        o.wh = w + sx;
        o.wr = w + sx + sh;
      }
      w += sx + sh + sr;
    }
  }
  total = w;
  o.bx = total + (int64_t)(l * c->D + d) * 2 * c->GH;
  o.bh = o.bx + c->GH;
  return o;
}

/* What the backward's forward pass keeps per layer and direction (element counts), and the inner
 * layers' outputs (the next layers' inputs, after dropout). */
static int64_t save_per_ld(const rnn_cfg *c) {
  const int64_t TN = c->T * c->N;
  int64_t s = TN * c->GH + TN * c->Ho;          /* gates, h_prev */
  if (c->mode == MODE_LSTM) s += 2 * TN * c->H; /* c_prev, c */
  if (c->P) s += TN * c->H;                     /* h before the projection */
  if (c->mode == MODE_GRU) s += TN * c->H;      /* W_hn h + b_hn */
  return s;
}
static int64_t save_total(const rnn_cfg *c) {
  return save_per_ld(c) * c->L * c->D + (int64_t)(c->L - 1) * c->T * c->N * c->D * c->Ho;
}

/* 1 when batch item n skips time t (t >= its sequence length). */
static inline int rnn_skip(const rnn_cfg *c, int64_t n, int64_t t) { return c->len && t >= c->len[n]; }

/* mask_mode of the forward: no mask; draw one (training, written to the mask output); apply a given one. */
enum { MASK_NONE, MASK_DRAW, MASK_GIVEN };

/* float32 lanes: m <= 4 valid elements at p (a partial group is padded with zeros, so every element
 * takes the same vector path wherever a thread's chunk starts). */
static inline v128_t ld4(const float *p, int64_t m) {
  if (m == 4) return wasm_v128_load(p);
  float t[4] = {0, 0, 0, 0};
  memcpy(t, p, sizeof(float) * (size_t)m);
  return wasm_v128_load(t);
}
static inline void st4(float *p, v128_t v, int64_t m) {
  if (m == 4) {
    wasm_v128_store(p, v);
    return;
  }
  float t[4];
  wasm_v128_store(t, v);
  memcpy(p, t, sizeof(float) * (size_t)m);
}
/* The cell clipping of RF(clip), four lanes: pmax(v, min) keeps a NaN, as does pmin(., max). */
static inline v128_t clip4(const rnn_cfg *c, v128_t v) {
  const v128_t lo = wasm_f32x4_splat((float)c->cmin);
  v128_t r = wasm_f32x4_pmin(wasm_f32x4_pmax(v, lo), wasm_f32x4_splat((float)c->cmax));
  return c->clip_nan ? wasm_v128_bitselect(lo, r, wasm_f32x4_ne(v, v)) : r;
}

/* ==== the kernels, for float and double =========================================================== */
#define RNN_TEMPLATE 1
#define RNN_VEC 1
#define RT float
#define RF(name) name##_f32
#define RGEMM mxw_sgemm
#define REXP expf
#define RTANH tanhf
#include "rnn.c"
#undef RT
#undef RF
#undef RGEMM
#undef REXP
#undef RTANH
#undef RNN_VEC
#define RT double
#define RF(name) name##_f64
#define RGEMM mxw_dgemm
#define REXP exp
#define RTANH tanh
#include "rnn.c"
#undef RT
#undef RF
#undef RGEMM
#undef REXP
#undef RTANH
#undef RNN_TEMPLATE

/* ==== shape and type inference =================================================================== */
typedef char shape_buf[160];

/* Unifies one of T, N, I with a dimension seen elsewhere (-1: unknown). */
static void pick(int64_t *v, int64_t seen) {
  if (*v < 0 && seen >= 0) *v = seen;
}

static int rnn_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const RNNParam *p = (const RNNParam *)param;
  const int64_t L = p->num_layers, D = rnn_dirs(p), H = p->state_size, Ho = rnn_out_size(p);
  const int lstm = p->mode == MODE_LSTM, nvis = rnn_num_visible(p);
  shape_buf a;
  mxw_shape *data = &in[0];
  if (data->ndim >= 0 && data->ndim != 3)
    return mxw_fail("Input data should be rank-3 tensor of dim [sequence length, batch size, input size], got %s",
                    mxw_shape_str(data, a, sizeof a));
  if (out[0].ndim >= 0 && out[0].ndim != 3)
    return mxw_fail("output should be rank 3 (sequence length, batch size, D*state size), got %s",
                    mxw_shape_str(&out[0], a, sizeof a));
  /* T, N and I from wherever they are known */
  int64_t T = -1, N = -1, I = -1;
  if (data->ndim == 3) {
    T = data->dims[0];
    N = data->dims[1];
    I = data->dims[2];
  }
  if (out[0].ndim == 3) {
    pick(&T, out[0].dims[0]);
    pick(&N, out[0].dims[1]);
  }
  if (in[2].ndim == 3) pick(&N, in[2].dims[1]);
  if (lstm && in[3].ndim == 3) pick(&N, in[3].dims[1]);
  if (p->use_sequence_length && in[rnn_seq_index(p)].ndim == 1) pick(&N, in[rnn_seq_index(p)].dims[0]);
  for (int k = 1; k < nvis && k < nout; k++)
    if (out[k].ndim == 3) pick(&N, out[k].dims[1]);
  /* the input size from a known parameter count: size = I * (G*H*D) + rest */
  if (I < 0 && in[1].ndim == 1 && in[1].dims[0] >= 0) {
    const int64_t rest = rnn_param_size(p, 0), per = rnn_gates(p->mode) * H * D;
    const int64_t n = in[1].dims[0] - rest;
    if (n >= 0 && n % per == 0)
      I = n / per;
    else
      return mxw_fail(
          "parameters has %lld elements, which no input size gives for these attributes (%lld + "
          "I * %lld)",
          (long long)in[1].dims[0], (long long)rest, (long long)per);
  }

  const int64_t dd[3] = {T, N, I};
  mxw_shape want = mxw_shape_make(3, dd);
  MXW_TRY(mxw_shape_unify(data, &want, "data", " = (sequence length, batch size, input size)"));
  const int64_t sd[3] = {L * D, N, Ho};
  want = mxw_shape_make(3, sd);
  MXW_TRY(mxw_shape_unify(&in[2], &want, "state", " = (num_layers * directions, batch size, state size)"));
  if (lstm) {
    const int64_t cd[3] = {L * D, N, H};
    want = mxw_shape_make(3, cd);
    MXW_TRY(mxw_shape_unify(&in[3], &want, "state_cell", " = (num_layers * directions, batch size, state size)"));
  }
  if (I >= 0) {
    const int64_t pd[1] = {rnn_param_size(p, I)};
    want = mxw_shape_make(1, pd);
    if (mxw_shape_unify(&in[1], &want, "parameters", NULL) != 0) { /* formatted only on a conflict */
      char rule[128];
      snprintf(rule, sizeof rule, " (GetRnnParamSize for input size %lld)", (long long)I);
      return mxw_shape_unify(&in[1], &want, "parameters", rule);
    }
  } else {
    const int64_t pd[1] = {-1};
    want = mxw_shape_make(1, pd);
    MXW_TRY(mxw_shape_unify(&in[1], &want, "parameters", " (1-D)"));
  }
  if (p->use_sequence_length) {
    const int64_t qd[1] = {N};
    want = mxw_shape_make(1, qd);
    MXW_TRY(mxw_shape_unify(&in[rnn_seq_index(p)], &want, "sequence_length", " = (batch size,)"));
  }
  (void)nin;
  const int64_t od[3] = {T, N, D * Ho};
  want = mxw_shape_make(3, od);
  MXW_TRY(mxw_shape_unify(&out[0], &want, "output", ""));
  if (p->state_outputs) {
    want = mxw_shape_make(3, sd);
    MXW_TRY(mxw_shape_unify(&out[1], &want, "state_output", ""));
    if (lstm) {
      const int64_t cd[3] = {L * D, N, H};
      want = mxw_shape_make(3, cd);
      MXW_TRY(mxw_shape_unify(&out[2], &want, "statecell_output", ""));
    }
  }
  if (rnn_has_mask(p)) {
    const int64_t md[4] = {L - 1, T, N, D * Ho};
    want = mxw_shape_make(4, md);
    MXW_TRY(mxw_shape_unify(&out[nvis], &want, "mask", ""));
  }
  return 0;
}

/* One floating-point dtype for everything but sequence_length (any numeric dtype). */
static int rnn_infer_type(const void *param, int nin, int *in, int nout, int *out) {
  const RNNParam *p = (const RNNParam *)param;
  const int seq = p->use_sequence_length ? rnn_seq_index(p) : -1;
  int dt = -1;
  for (int i = 0; i < nin && dt < 0; i++)
    if (i != seq && in[i] >= 0) dt = in[i];
  for (int i = 0; i < nout && dt < 0; i++)
    if (out[i] >= 0) dt = out[i];
  if (dt < 0) return 0;
  if (!mxw_dtype_is_float(dt))
    return mxw_fail("dtype %s is not supported (float32, float64, float16 or bfloat16 only)", mxw_dtype_name(dt));
  for (int i = 0; i < nin; i++) {
    if (i == seq) continue;
    if (in[i] >= 0 && in[i] != dt)
      return mxw_fail("input %s has dtype %s, expected %s (all inputs but sequence_length share data's dtype)",
                      rnn_input_name(p, i), mxw_dtype_name(in[i]), mxw_dtype_name(dt));
    in[i] = dt;
  }
  if (seq >= 0 && seq < nin && in[seq] < 0) in[seq] = dt;
  for (int i = 0; i < nout; i++) {
    if (out[i] >= 0 && out[i] != dt)
      return mxw_fail("output %d has dtype %s, expected %s", i, mxw_dtype_name(out[i]), mxw_dtype_name(dt));
    out[i] = dt;
  }
  return 0;
}

/* ==== the op calls ================================================================================ */
/* The sequence lengths as int64, checked to lie in [1, T]; *lens NULL without use_sequence_length. */
static int read_lengths(const RNNParam *p, const mxw_op_call *call, const rnn_cfg *c, int64_t **lens) {
  *lens = NULL;
  if (!p->use_sequence_length) return 0;
  const mxw_tensor *s = &call->inputs[rnn_seq_index(p)];
  int64_t *v = (int64_t *)malloc(sizeof(int64_t) * (size_t)(c->N > 0 ? c->N : 1));
  MXW_CHECK(v != NULL, "out of memory");
  for (int64_t n = 0; n < c->N; n++) {
    const double x = mxw_load_f64(s->data, s->dtype, n);
    if (!(x >= 1 && x <= (double)c->T)) {
      free(v);
      return mxw_fail(
          "sequence_length[%lld] = %g is out of range: each length must be in [1, %lld] (the sequence "
          "length of data)",
          (long long)n, x, (long long)c->T);
    }
    v[n] = (int64_t)x;
  }
  *lens = v;
  return 0;
}

/* Staging for float16 / bfloat16: float32 copies of inputs, float32 buffers for outputs. */
typedef struct {
  int conv; /* 1 when tensors are converted */
  void *owned[16];
  int n;
} rnn_stage;
static void *stage_in(rnn_stage *st, const mxw_tensor *t) {
  if (!st->conv || !t) return t ? t->data : NULL;
  const int64_t n = mxw_tensor_size(t);
  float *f = (float *)malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  if (!f) {
    mxw_fail("out of memory");
    return NULL;
  }
  mxw_convert(t->data, t->dtype, f, MXW_FLOAT32, n);
  st->owned[st->n++] = f;
  return f;
}
static void *stage_out(rnn_stage *st, const mxw_tensor *t) {
  if (!st->conv || !t) return t ? t->data : NULL;
  const int64_t n = mxw_tensor_size(t);
  float *f = (float *)calloc((size_t)(n > 0 ? n : 1), sizeof(float));
  if (!f) {
    mxw_fail("out of memory");
    return NULL;
  }
  st->owned[st->n++] = f;
  return f;
}
static void stage_back(const rnn_stage *st, const void *buf, mxw_tensor *t) {
  if (st->conv && t && buf) mxw_convert(buf, MXW_FLOAT32, t->data, t->dtype, mxw_tensor_size(t));
}
static void stage_free(rnn_stage *st) {
  for (int i = 0; i < st->n; i++) free(st->owned[i]);
  st->n = 0;
}

static int rnn_forward(const mxw_op_call *call) {
  const RNNParam *p = (const RNNParam *)call->param;
  rnn_cfg c = rnn_make_cfg(p, &call->inputs[0].shape);
  const int dt = call->inputs[0].dtype, lstm = p->mode == MODE_LSTM, nvis = rnn_num_visible(p);
  int64_t *lens = NULL;
  MXW_TRY(read_lengths(p, call, &c, &lens));
  c.len = lens;
  mxw_tensor *y = &call->outputs[0];
  mxw_tensor *hy = p->state_outputs ? &call->outputs[1] : NULL;
  mxw_tensor *cy = p->state_outputs && lstm ? &call->outputs[2] : NULL;
  mxw_tensor *mask = rnn_has_mask(p) ? &call->outputs[nvis] : NULL;
  const int mode = mask ? (call->is_train ? MASK_DRAW : MASK_NONE) : MASK_NONE;
  rnn_stage st = {.conv = dt != MXW_FLOAT32 && dt != MXW_FLOAT64};
  int rc = -1;
  void *x = stage_in(&st, &call->inputs[0]), *w = stage_in(&st, &call->inputs[1]);
  void *hx = stage_in(&st, &call->inputs[2]), *cx = lstm ? stage_in(&st, &call->inputs[3]) : NULL;
  void *yb = stage_out(&st, y), *hyb = stage_out(&st, hy), *cyb = stage_out(&st, cy), *mb = stage_out(&st, mask);
  if (!x || !w || !hx || (lstm && !cx) || !yb || (hy && !hyb) || (cy && !cyb) || (mask && !mb)) goto done;
  if (dt == MXW_FLOAT64)
    rc = rnn_fwd_f64(&c, x, w, hx, cx, yb, hyb, cyb, mb, mode, NULL);
  else
    rc = rnn_fwd_f32(&c, x, w, hx, cx, yb, hyb, cyb, mb, mode, NULL);
  if (rc == 0) {
    stage_back(&st, yb, y);
    stage_back(&st, hyb, hy);
    stage_back(&st, cyb, cy);
    stage_back(&st, mb, mask);
  }
done:
  stage_free(&st);
  free(lens);
  return rc;
}

/* ---- _backward_RNN ---------------------------------------------------------------------------------
 * Inputs: the forward's inputs, its mask (when it has one), then the gradients of its visible outputs. */
static int rnn_bwd_num_inputs(const void *param) {
  const RNNParam *p = (const RNNParam *)param;
  return rnn_num_inputs(param) + rnn_has_mask(p) + rnn_num_visible(param);
}
static int rnn_bwd_num_outputs(const void *param) { return ((const RNNParam *)param)->mode == MODE_LSTM ? 4 : 3; }
static const char *const k_rnn_bwd_inputs[] = {
    "data", "parameters", "state",       "state_cell",      "sequence_length",
    "mask", "ograd",      "ograd_state", "ograd_statecell", NULL};
static const char *const k_rnn_bwd_outputs[] = {"data_grad", "parameters_grad", "state_grad", "state_cell_grad", NULL};

static int rnn_bwd_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const RNNParam *p = (const RNNParam *)param;
  const int nfi = rnn_num_inputs(param);
  /* the forward's shapes fix everything: infer them from the forward inputs */
  mxw_shape fin[5], fout[4];
  for (int i = 0; i < nfi; i++) fin[i] = in[i];
  const int nfo = rnn_num_outputs(param);
  for (int i = 0; i < nfo; i++) fout[i].ndim = -1;
  MXW_TRY(rnn_infer_shape(param, nfi, fin, nfo, fout));
  int k = nfi;
  if (rnn_has_mask(p)) MXW_TRY(mxw_shape_unify(&in[k++], &fout[rnn_num_visible(p)], "mask", ""));
  for (int i = 0; i < rnn_num_visible(p); i++) MXW_TRY(mxw_shape_unify(&in[k++], &fout[i], "output gradient", ""));
  for (int i = 0; i < nout && i < 4; i++) MXW_TRY(mxw_shape_assign(&out[i], &fin[i], "gradient"));
  (void)nin;
  return 0;
}
static int rnn_bwd_infer_type(const void *param, int nin, int *in, int nout, int *out) {
  const RNNParam *p = (const RNNParam *)param;
  const int seq = p->use_sequence_length ? rnn_seq_index(p) : -1;
  int dt = in[0];
  for (int i = 0; i < nin; i++)
    if (i != seq && in[i] < 0) in[i] = dt;
  for (int i = 0; i < nout; i++) out[i] = dt;
  return 0;
}

static int rnn_backward(const mxw_op_call *call) {
  const RNNParam *p = (const RNNParam *)call->param;
  rnn_cfg c = rnn_make_cfg(p, &call->inputs[0].shape);
  const int dt = call->inputs[0].dtype, lstm = p->mode == MODE_LSTM, nvis = rnn_num_visible(p);
  const int nfi = rnn_num_inputs(p), has_mask = rnn_has_mask(p);
  int64_t *lens = NULL;
  MXW_TRY(read_lengths(p, call, &c, &lens));
  c.len = lens;
  const mxw_tensor *mask = has_mask ? &call->inputs[nfi] : NULL;
  const mxw_tensor *dy = &call->inputs[nfi + has_mask];
  const mxw_tensor *dhy = p->state_outputs ? &call->inputs[nfi + has_mask + 1] : NULL;
  const mxw_tensor *dcy = p->state_outputs && lstm ? &call->inputs[nfi + has_mask + 2] : NULL;
  (void)nvis;
  rnn_stage st = {.conv = dt != MXW_FLOAT32 && dt != MXW_FLOAT64};
  int rc = -1;
  void *x = stage_in(&st, &call->inputs[0]), *w = stage_in(&st, &call->inputs[1]);
  void *hx = stage_in(&st, &call->inputs[2]), *cx = lstm ? stage_in(&st, &call->inputs[3]) : NULL;
  void *mb = stage_in(&st, mask), *dyb = stage_in(&st, dy), *dhyb = stage_in(&st, dhy), *dcyb = stage_in(&st, dcy);
  mxw_tensor *dx = &call->outputs[0], *dw = &call->outputs[1], *dhx = &call->outputs[2];
  mxw_tensor *dcx = lstm ? &call->outputs[3] : NULL;
  void *dxb = stage_out(&st, dx), *dwb = stage_out(&st, dw), *dhxb = stage_out(&st, dhx), *dcxb = stage_out(&st, dcx);
  if (!x || !w || !hx || (lstm && !cx) || (mask && !mb) || !dyb || (dhy && !dhyb) || (dcy && !dcyb) || !dxb || !dwb ||
      !dhxb || (dcx && !dcxb))
    goto done;
  if (dt == MXW_FLOAT64)
    rc = rnn_bwd_f64(&c, x, w, hx, cx, mb, dyb, dhyb, dcyb, dxb, dwb, dhxb, dcxb);
  else
    rc = rnn_bwd_f32(&c, x, w, hx, cx, mb, dyb, dhyb, dcyb, dxb, dwb, dhxb, dcxb);
  if (rc == 0) {
    stage_back(&st, dxb, dx);
    stage_back(&st, dwb, dw);
    stage_back(&st, dhxb, dhx);
    stage_back(&st, dcxb, dcx);
  }
done:
  stage_free(&st);
  free(lens);
  return rc;
}

/* MXNet's RNNGrad: one _backward_RNN node; sequence_length gets no gradient. */
static int rnn_gradient(mxw_grad_ctx *g) {
  const RNNParam *p = (const RNNParam *)mxw_grad_param(g);
  const int nfi = rnn_num_inputs(p), nvis = rnn_num_visible(p), lstm = p->mode == MODE_LSTM;
  mxw_gid ins[12];
  int k = 0;
  for (int i = 0; i < nfi; i++) ins[k++] = mxw_grad_in(g, i);
  if (rnn_has_mask(p)) ins[k++] = mxw_grad_out(g, nvis);
  for (int i = 0; i < nvis; i++) ins[k++] = mxw_grad_ograd(g, i);
  mxw_gid out[4];
  const int nout = lstm ? 4 : 3;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_RNN", ins, k, out, nout));
  for (int i = 0; i < nout; i++) MXW_TRY(mxw_grad_set(g, i, out[i]));
  return 0;
}

static const char *const k_rnn_outputs[] = {"output", "state_output", "statecell_output", NULL};
/* Output names depend on the mode (GRU's second output is state_output, its third the mask). */
static const mxw_op_def op_RNN = {
    .name = "RNN",
    .aliases = ALIASES("_npx_rnn"),
    .doc = MXW_DOC(
        "recurrent layers (rnn_relu, rnn_tanh, lstm, gru) over (T, N, I) data with MXNet's packed parameter vector: "
        "stacked, bidirectional, LSTM projection and state clipping, dropout between layers, sequence lengths"),
    .attrs = k_rnn_attrs,
    .num_attrs = NUM_RNN_ATTRS,
    .param_size = sizeof(RNNParam),
    .validate = rnn_validate,
    .num_inputs = 5,
    .input_names = k_rnn_inputs,
    .num_inputs_fn = rnn_num_inputs,
    .input_name_fn = rnn_input_name,
    .num_outputs = 4,
    .num_outputs_fn = rnn_num_outputs,
    .num_visible_outputs_fn = rnn_num_visible,
    .output_names = k_rnn_outputs,
    .infer_shape = rnn_infer_shape,
    .infer_type = rnn_infer_type,
    .forward = rnn_forward,
    .gradient = rnn_gradient,
};

static const mxw_op_def op_backward_RNN = {
    .name = "_backward_RNN",
    .doc = MXW_DOC("the gradients of RNN's data, parameters, state and state_cell (recomputes the forward, then "
                   "backpropagation through time)"),
    .attrs = k_rnn_attrs,
    .num_attrs = NUM_RNN_ATTRS,
    .param_size = sizeof(RNNParam),
    .validate = rnn_validate,
    .num_inputs = 9,
    .input_names = k_rnn_bwd_inputs,
    .num_inputs_fn = rnn_bwd_num_inputs,
    .num_outputs = 4,
    .num_outputs_fn = rnn_bwd_num_outputs,
    .output_names = k_rnn_bwd_outputs,
    .infer_shape = rnn_bwd_infer_shape,
    .infer_type = rnn_bwd_infer_type,
    .forward = rnn_backward,
};

/* ==== _rnn_param_concat ===========================================================================
 * Concat (num_args, dim) whose shape inference also works backwards from a known output: one or
 * two inputs of unknown size along dim share what the known ones leave (MXNet's RNNParamConcatShape:
 * Gluon's recurrent layers concatenate their flattened weights, the first layer's input weights
 * still of unknown size, and the RNN op infers the total). */
typedef struct {
  int64_t num_args, dim;
} RNNConcatParam;
static const mxw_attr_spec k_rpc_attrs[] = {
    MXW_A_INT("num_args", RNNConcatParam, num_args, NULL, "number of inputs"),
    MXW_A_INT("dim", RNNConcatParam, dim, "1", "the axis to join along (negative counts from the end)"),
};
static int rpc_validate(void *param) {
  const RNNConcatParam *p = (const RNNConcatParam *)param;
  MXW_CHECK(p->num_args >= 1 && p->num_args <= 4096, "num_args must be in [1, 4096], got %lld", (long long)p->num_args);
  return 0;
}
static int rpc_num_inputs(const void *param) { return (int)((const RNNConcatParam *)param)->num_args; }
static const char *const k_rpc_inputs[] = {"arg0", NULL};

static int rpc_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const RNNConcatParam *p = (const RNNConcatParam *)param;
  shape_buf a, b;
  (void)nout;
  int nd = out[0].ndim;
  for (int i = 0; i < nin; i++) {
    if (in[i].ndim < 0) continue;
    if (nd >= 0 && in[i].ndim != nd)
      return mxw_fail("input arg%d has shape %s, expected rank %d like the other inputs and the output", i,
                      mxw_shape_str(&in[i], a, sizeof a), nd);
    nd = in[i].ndim;
  }
  if (nd < 0) return 0;
  MXW_CHECK(nd > 0, "zero-dimensional arrays cannot be concatenated");
  int axis;
  if (mxw_normalize_axis(p->dim, nd, &axis) != 0)
    return mxw_fail("dim=%lld is out of range for inputs of %d dimensions", (long long)p->dim, nd);
  /* the shared dims */
  mxw_shape common;
  common.ndim = nd;
  for (int d = 0; d < nd; d++) common.dims[d] = -1;
  for (int i = 0; i <= nin; i++) {
    const mxw_shape *s = i < nin ? &in[i] : &out[0];
    if (s->ndim < 0) continue;
    for (int d = 0; d < nd; d++) {
      if (d == axis || s->dims[d] < 0) continue;
      if (common.dims[d] >= 0 && common.dims[d] != s->dims[d])
        return mxw_fail("Incompatible input shape: %s %s does not match the other shapes except along dim=%d",
                        i < nin ? "input" : "output", mxw_shape_str(s, a, sizeof a), axis);
      common.dims[d] = s->dims[d];
    }
  }
  int unknown[3], nu = 0;
  int64_t size = 0;
  for (int i = 0; i < nin; i++) {
    mxw_shape want = common;
    want.dims[axis] = in[i].ndim >= 0 ? in[i].dims[axis] : -1;
    MXW_TRY(mxw_shape_assign(&in[i], &want, "input"));
    if (in[i].dims[axis] >= 0)
      size += in[i].dims[axis];
    else if (nu < 3)
      unknown[nu++] = i;
    else
      nu++;
  }
  mxw_shape o = common;
  o.dims[axis] = nu ? -1 : size;
  MXW_TRY(mxw_shape_assign(&out[0], &o, "output"));
  if (nu && out[0].dims[axis] >= 0) {
    const int64_t residual = out[0].dims[axis] - size;
    if (residual < 0)
      return mxw_fail("Input size already exceeds output size. Residual: %lld (output %s)", (long long)residual,
                      mxw_shape_str(&out[0], b, sizeof b));
    MXW_CHECK(nu <= 2, "Expecting 1 or 2 inputs that need shape inference. Got: %d", nu);
    for (int k = 0; k < nu; k++) in[unknown[k]].dims[axis] = residual / nu;
  }
  return 0;
}

static int rpc_forward(const mxw_op_call *call) {
  const RNNConcatParam *p = (const RNNConcatParam *)call->param;
  mxw_tensor *out = &call->outputs[0];
  const int nd = out->shape.ndim;
  int axis;
  MXW_TRY(mxw_normalize_axis(p->dim, nd, &axis));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= out->shape.dims[d];
  for (int d = axis + 1; d < nd; d++) inner *= out->shape.dims[d];
  const size_t es = (size_t)mxw_dtype_size(out->dtype);
  const size_t orow = (size_t)(out->shape.dims[axis] * inner) * es;
  size_t off = 0;
  for (int k = 0; k < call->num_inputs; k++) {
    const mxw_tensor *in = &call->inputs[k];
    const size_t irow = (size_t)(in->shape.dims[axis] * inner) * es;
    for (int64_t o = 0; o < outer; o++)
      memcpy((char *)out->data + (size_t)o * orow + off, (const char *)in->data + (size_t)o * irow, irow);
    off += irow;
  }
  return 0;
}

/* Each input's gradient is its part of the output gradient along dim. */
static int rpc_gradient(mxw_grad_ctx *g) {
  const RNNConcatParam *p = (const RNNConcatParam *)mxw_grad_param(g);
  int axis;
  MXW_TRY(mxw_normalize_axis(p->dim, mxw_grad_out_shape(g, 0)->ndim, &axis));
  mxw_gid og = mxw_grad_ograd(g, 0);
  char ax[24], b[24], e[24];
  snprintf(ax, sizeof ax, "%d", axis);
  int64_t off = 0;
  for (int i = 0; i < mxw_grad_num_inputs(g); i++) {
    const int64_t len = mxw_grad_in_shape(g, i)->dims[axis];
    snprintf(b, sizeof b, "%lld", (long long)off);
    snprintf(e, sizeof e, "%lld", (long long)(off + len));
    mxw_gid dx = len == 0 ? mxw_grad_zeros_like(g, mxw_grad_in(g, i))
                          : mxw_grad_op(g, "slice_axis", MXW_KV("axis", ax, "begin", b, "end", e), MXW_GIDS(og));
    MXW_TRY(mxw_grad_set(g, i, dx));
    off += len;
  }
  return 0;
}

static const mxw_op_def op_rnn_param_concat = {
    .name = "_rnn_param_concat",
    .aliases = ALIASES("_npi_rnn_param_concat"),
    .doc = MXW_DOC(
        "Concat for packing recurrent weights: one or two inputs of unknown size along dim are inferred from the "
        "output's size"),
    .attrs = k_rpc_attrs,
    .num_attrs = 2,
    .param_size = sizeof(RNNConcatParam),
    .validate = rpc_validate,
    .num_inputs = MXW_VARIADIC,
    .input_names = k_rpc_inputs,
    .num_inputs_fn = rpc_num_inputs,
    .num_outputs = 1,
    .infer_shape = rpc_infer_shape,
    .forward = rpc_forward,
    .gradient = rpc_gradient,
};

MXW_FAMILY(rnn, &op_RNN, &op_backward_RNN, &op_rnn_param_concat);

#else /* RNN_TEMPLATE: the kernels for one real type RT ===================================================== */

static inline RT RF(sigm)(RT v) { return (RT)1 / ((RT)1 + REXP(-v)); }

/* cuDNN's cell clipping: fmax(c, min) (a NaN becomes min only with clip_nan), then fmin(., max). */
static inline RT RF(clip)(const rnn_cfg *c, RT v) {
  const RT lo = (RT)c->cmin, hi = (RT)c->cmax;
  if (v != v) return c->clip_nan ? lo : v;
  return v < lo ? lo : v > hi ? hi : v;
}
/* The clipped cell passes no gradient where clipping changed it. */
static inline int RF(clipped)(const rnn_cfg *c, RT v) {
  return c->clip && (v < (RT)c->cmin || v > (RT)c->cmax || (c->clip_nan && v != v));
}

/* What the backward's forward pass keeps for layer l, direction d (NULL members when not kept). */
typedef struct {
  RT *gates; /* (T, N, G*H) activated gates (rnn: h') */
  RT *hprev; /* (T, N, Ho) the state before step t */
  RT *cprev; /* (T, N, H) LSTM: the cell before step t */
  RT *cst;   /* (T, N, H) LSTM: the cell after step t before clipping (f c + i g) */
  RT *hraw;  /* (T, N, H) projection: o tanh(c) before W_r */
  RT *ahn;   /* (T, N, H) GRU: W_hn h + b_hn */
} RF(lsave);

static RF(lsave) RF(lsave_at)(const rnn_cfg *c, RT *base, int l, int d) {
  RF(lsave) s = {NULL, NULL, NULL, NULL, NULL, NULL};
  const int64_t TN = c->T * c->N;
  RT *q = base + save_per_ld(c) * (int64_t)(l * c->D + d);
  s.gates = q;
  q += TN * c->GH;
  s.hprev = q;
  q += TN * c->Ho;
  if (c->mode == MODE_LSTM) {
    s.cprev = q;
    q += TN * c->H;
    s.cst = q;
    q += TN * c->H;
  }
  if (c->P) {
    s.hraw = q;
    q += TN * c->H;
  }
  if (c->mode == MODE_GRU) s.ahn = q;
  return s;
}

/* One step's elementwise pass (cells [b, e) of N*H). */
typedef struct {
  const rnn_cfg *c;
  int d;
  int64_t t;
  const RT *xg;              /* (N, G*H) input projection at t, biases folded in (GRU: b_hn left out) */
  const RT *hg;              /* (N, G*H) W_h h */
  const RT *bhn;             /* GRU: b_hn (H) */
  RT *h;                     /* (N, Ho) state, updated in place (without a projection) */
  RT *cc;                    /* (N, H) LSTM cell, updated in place */
  RT *hraw;                  /* (N, H) projection: o tanh(c) */
  RT *y;                     /* output row block at t: (N, D*Ho) */
  RT *s_gates, *s_c, *s_ahn; /* saving (or NULL) at t */
} RF(step_ctx);

#ifndef RNN_VEC
static void RF(step_chunk)(void *ctx, int64_t b, int64_t e) {
  const RF(step_ctx) *s = (const RF(step_ctx) *)ctx;
  const rnn_cfg *c = s->c;
  const int64_t H = c->H, GH = c->GH, yrow = c->D * c->Ho, yoff = s->d * c->Ho;
  for (int64_t i = b; i < e; i++) {
    const int64_t n = i / H, k = i % H;
    if (rnn_skip(c, n, s->t)) {
      if (s->s_gates)
        for (int j = 0; j < c->G; j++) s->s_gates[n * GH + j * H + k] = 0;
      if (s->s_c) s->s_c[i] = s->cc[i];
      if (s->s_ahn) s->s_ahn[i] = 0;
      if (s->hraw) s->hraw[i] = 0;
      continue;
    }
    const RT *a = s->xg + n * GH, *r = s->hg + n * GH;
    RT hn;
    if (c->mode == MODE_LSTM) {
      const RT ig = RF(sigm)(a[k] + r[k]);
      const RT fg = RF(sigm)(a[H + k] + r[H + k]);
      const RT gg = RTANH(a[2 * H + k] + r[2 * H + k]);
      const RT og = RF(sigm)(a[3 * H + k] + r[3 * H + k]);
      const RT craw = fg * s->cc[i] + ig * gg;
      const RT cn = c->clip ? RF(clip)(c, craw) : craw;
      s->cc[i] = cn;
      hn = og * RTANH(cn);
      if (s->s_gates) {
        RT *g = s->s_gates + n * GH;
        g[k] = ig;
        g[H + k] = fg;
        g[2 * H + k] = gg;
        g[3 * H + k] = og;
        s->s_c[i] = craw;
      }
      if (c->P) {
        s->hraw[i] = hn;
        continue;
      }
    } else if (c->mode == MODE_GRU) {
      const RT rg = RF(sigm)(a[k] + r[k]);
      const RT zg = RF(sigm)(a[H + k] + r[H + k]);
      const RT ahn = r[2 * H + k] + s->bhn[k];
      const RT ng = RTANH(a[2 * H + k] + rg * ahn);
      hn = (1 - zg) * ng + zg * s->h[i];
      if (s->s_gates) {
        RT *g = s->s_gates + n * GH;
        g[k] = rg;
        g[H + k] = zg;
        g[2 * H + k] = ng;
        s->s_ahn[i] = ahn;
      }
    } else {
      const RT v = a[k] + r[k];
      hn = c->mode == MODE_RNN_RELU ? (v > 0 ? v : 0) : RTANH(v);
      if (s->s_gates) s->s_gates[n * GH + k] = hn;
    }
    s->h[i] = hn;
    s->y[n * yrow + yoff + k] = hn;
  }
}
#else
/* The same over units of four cells of one batch row (N * ceil(H / 4) units), with vmath's lanes. */
static void RF(step_chunk)(void *ctx, int64_t b, int64_t e) {
  const RF(step_ctx) *s = (const RF(step_ctx) *)ctx;
  const rnn_cfg *c = s->c;
  const int64_t H = c->H, GH = c->GH, yrow = c->D * c->Ho, yoff = s->d * c->Ho, nb = (H + 3) / 4;
  const v128_t one = wasm_f32x4_splat(1.f), zero = wasm_f32x4_splat(0.f);
  for (int64_t u = b; u < e; u++) {
    const int64_t n = u / nb, k = (u % nb) * 4, m = H - k < 4 ? H - k : 4, i = n * H + k;
    if (rnn_skip(c, n, s->t)) {
      if (s->s_gates)
        for (int j = 0; j < c->G; j++) st4(s->s_gates + n * GH + j * H + k, zero, m);
      if (s->s_c) memcpy(s->s_c + i, s->cc + i, sizeof(float) * (size_t)m);
      if (s->s_ahn) st4(s->s_ahn + i, zero, m);
      if (s->hraw) st4(s->hraw + i, zero, m);
      continue;
    }
    const float *a = s->xg + n * GH + k, *r = s->hg + n * GH + k;
    v128_t hn;
    if (c->mode == MODE_LSTM) {
      const v128_t ig = mxw_sigmoid_f32x4(wasm_f32x4_add(ld4(a, m), ld4(r, m)));
      const v128_t fg = mxw_sigmoid_f32x4(wasm_f32x4_add(ld4(a + H, m), ld4(r + H, m)));
      const v128_t gg = mxw_tanh_f32x4(wasm_f32x4_add(ld4(a + 2 * H, m), ld4(r + 2 * H, m)));
      const v128_t og = mxw_sigmoid_f32x4(wasm_f32x4_add(ld4(a + 3 * H, m), ld4(r + 3 * H, m)));
      const v128_t craw = wasm_f32x4_add(wasm_f32x4_mul(fg, ld4(s->cc + i, m)), wasm_f32x4_mul(ig, gg));
      const v128_t cn = c->clip ? clip4(c, craw) : craw;
      st4(s->cc + i, cn, m);
      hn = wasm_f32x4_mul(og, mxw_tanh_f32x4(cn));
      if (s->s_gates) {
        float *g = s->s_gates + n * GH + k;
        st4(g, ig, m);
        st4(g + H, fg, m);
        st4(g + 2 * H, gg, m);
        st4(g + 3 * H, og, m);
        st4(s->s_c + i, craw, m);
      }
      if (c->P) {
        st4(s->hraw + i, hn, m);
        continue;
      }
    } else if (c->mode == MODE_GRU) {
      const v128_t rg = mxw_sigmoid_f32x4(wasm_f32x4_add(ld4(a, m), ld4(r, m)));
      const v128_t zg = mxw_sigmoid_f32x4(wasm_f32x4_add(ld4(a + H, m), ld4(r + H, m)));
      const v128_t ahn = wasm_f32x4_add(ld4(r + 2 * H, m), ld4(s->bhn + k, m));
      const v128_t ng = mxw_tanh_f32x4(wasm_f32x4_add(ld4(a + 2 * H, m), wasm_f32x4_mul(rg, ahn)));
      hn = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_sub(one, zg), ng), wasm_f32x4_mul(zg, ld4(s->h + i, m)));
      if (s->s_gates) {
        float *g = s->s_gates + n * GH + k;
        st4(g, rg, m);
        st4(g + H, zg, m);
        st4(g + 2 * H, ng, m);
        st4(s->s_ahn + i, ahn, m);
      }
    } else {
      const v128_t v = wasm_f32x4_add(ld4(a, m), ld4(r, m));
      hn = c->mode == MODE_RNN_RELU ? mxw_relu_f32x4(v) : mxw_tanh_f32x4(v);
      if (s->s_gates) st4(s->s_gates + n * GH + k, hn, m);
    }
    st4(s->h + i, hn, m);
    st4(s->y + n * yrow + yoff + k, hn, m);
  }
}
#endif

/* Layer l, direction d over its input x (T*N, In): writes its half of y (T, N, D*Ho) and, when
 * given, its final state rows hy (N, Ho) / cy (N, H). ws holds the workspace (rnn_fwd_ws). */
static int64_t RF(layer_ws)(const rnn_cfg *c) {
  return c->T * c->N * c->GH + c->N * c->GH + c->N * c->Ho + 2 * c->N * c->H + c->N * c->P + c->GH;
}

typedef struct {
  RT *dst;
  const RT *bias; /* (GH) */
  int64_t GH;
} RF(bias_ctx);
static void RF(row_bias)(void *ctx, int64_t b, int64_t e) {
  const RF(bias_ctx) *bc = (const RF(bias_ctx) *)ctx;
  for (int64_t r = b; r < e; r++) memcpy(bc->dst + r * bc->GH, bc->bias, sizeof(RT) * (size_t)bc->GH);
}

static int RF(layer_fwd)(const rnn_cfg *c, int l, int d, const RT *x, const RT *w, const RT *hx0, const RT *cx0, RT *y,
                         RT *hy, RT *cy, RT *ws, const RF(lsave) * sv) {
  const int64_t T = c->T, N = c->N, H = c->H, GH = c->GH, Ho = c->Ho, P = c->P, In = layer_in(c, l), TN = T * N;
  const rnn_off o = rnn_offsets(c, l, d);
  const int lstm = c->mode == MODE_LSTM, gru = c->mode == MODE_GRU;
  RT *xproj = ws, *hg = xproj + TN * GH, *h = hg + N * GH, *cc = h + N * Ho, *hraw = cc + N * H, *rtmp = hraw + N * H;
  RT *bias = rtmp + N * P;
  /* xproj = X W_x^T + b_x + b_h (GRU: without b_hn, which is applied inside r * (.)) */
  for (int64_t j = 0; j < GH; j++) bias[j] = w[o.bx + j] + (gru && j >= 2 * H ? 0 : w[o.bh + j]);
  RF(bias_ctx) bc = {xproj, bias, GH};
  mxw_parallel_run(TN, 1, (double)GH * 0.25, RF(row_bias), &bc);
  MXW_TRY(RGEMM(0, 1, TN, GH, In, 1, x, In, w + o.wx, In, 1, xproj, GH));
  memcpy(h, hx0, sizeof(RT) * (size_t)(N * Ho));
  if (lstm) memcpy(cc, cx0, sizeof(RT) * (size_t)(N * H));
#ifndef RNN_VEC
  const double cost = (double)c->G * MXW_COST_MATH + 8.0;
#endif
  for (int64_t s = 0; s < T; s++) {
    const int64_t t = d ? T - 1 - s : s;
    RT *yt = y + t * N * c->D * Ho;
    if (sv) {
      memcpy(sv->hprev + t * N * Ho, h, sizeof(RT) * (size_t)(N * Ho));
      if (lstm) memcpy(sv->cprev + t * N * H, cc, sizeof(RT) * (size_t)(N * H));
    }
    MXW_TRY(RGEMM(0, 1, N, GH, Ho, 1, h, Ho, w + o.wh, Ho, 0, hg, GH));
    RF(step_ctx)
    sc = {c,
          d,
          t,
          xproj + t * N * GH,
          hg,
          gru ? w + o.bh + 2 * H : NULL,
          h,
          cc,
          hraw,
          yt,
          sv ? sv->gates + t * N * GH : NULL,
          sv && lstm ? sv->cst + t * N * H : NULL,
          sv && gru ? sv->ahn + t * N * H : NULL};
#ifdef RNN_VEC
    mxw_parallel_run(N * ((H + 3) / 4), 1, (double)c->G * 24.0 + 8.0, RF(step_chunk), &sc);
#else
    mxw_parallel_run(N * H, 4, cost, RF(step_chunk), &sc);
#endif
    if (P) { /* r = W_r h_raw: the state and the output */
      MXW_TRY(RGEMM(0, 1, N, P, H, 1, hraw, H, w + o.wr, H, 0, rtmp, P));
      if (sv) memcpy(sv->hraw + t * N * H, hraw, sizeof(RT) * (size_t)(N * H));
      for (int64_t n = 0; n < N; n++) {
        if (rnn_skip(c, n, t)) continue;
        memcpy(h + n * P, rtmp + n * P, sizeof(RT) * (size_t)P);
        memcpy(yt + n * c->D * Ho + d * Ho, rtmp + n * P, sizeof(RT) * (size_t)P);
      }
    }
    if (c->len)
      for (int64_t n = 0; n < N; n++)
        if (rnn_skip(c, n, t)) memset(yt + n * c->D * Ho + d * Ho, 0, sizeof(RT) * (size_t)Ho);
  }
  if (hy) memcpy(hy, h, sizeof(RT) * (size_t)(N * Ho));
  if (cy && lstm) memcpy(cy, cc, sizeof(RT) * (size_t)(N * H));
  return 0;
}

/* The whole forward. mask: (L-1, T, N, D*Ho) or NULL; mask_mode MASK_DRAW fills it (training) and
 * applies it, MASK_GIVEN applies it, MASK_NONE fills it with 1 when present. sv_base: the
 * backward's save area (save_total elements) or NULL. */
static int RF(rnn_fwd)(const rnn_cfg *c, const RT *x, const RT *w, const RT *hx, const RT *cx, RT *y, RT *hy, RT *cy,
                       RT *mask, int mask_mode, RT *sv_base) {
  const int64_t TN = c->T * c->N, ysz = TN * c->D * c->Ho, NHo = c->N * c->Ho, NH = c->N * c->H;
  int64_t ws_n = RF(layer_ws)(c) + (c->L > 1 && !sv_base ? 2 * ysz : 0);
  if (TN == 0) { /* no steps: the final states are the initial ones */
    if (hy) memcpy(hy, hx, sizeof(RT) * (size_t)(c->L * c->D * NHo));
    if (cy && cx) memcpy(cy, cx, sizeof(RT) * (size_t)(c->L * c->D * NH));
    return 0;
  }
  RT *ws = (RT *)malloc(sizeof(RT) * (size_t)(ws_n > 0 ? ws_n : 1));
  MXW_CHECK(ws != NULL, "out of memory for the RNN workspace (%lld elements)", (long long)ws_n);
  RT *ping = ws + RF(layer_ws)(c), *pong = ping + ysz;
  RT *ylayers = sv_base ? sv_base + save_per_ld(c) * c->L * c->D : NULL;
  const RT *in = x;
  int rc = 0;
  if (mask && mask_mode == MASK_NONE)
    for (int64_t i = 0; i < (int64_t)(c->L - 1) * ysz; i++) mask[i] = 1;
  for (int l = 0; l < c->L && rc == 0; l++) {
    RT *out = l == c->L - 1 ? y : ylayers ? ylayers + (int64_t)l * ysz : (l % 2 ? pong : ping);
    for (int d = 0; d < c->D && rc == 0; d++) {
      const int64_t ld = (int64_t)l * c->D + d;
      RF(lsave) sv;
      if (sv_base) sv = RF(lsave_at)(c, sv_base, l, d);
      rc = RF(layer_fwd)(c, l, d, in, w, hx + ld * NHo, cx ? cx + ld * NH : NULL, out, hy ? hy + ld * NHo : NULL,
                         cy ? cy + ld * NH : NULL, ws, sv_base ? &sv : NULL);
    }
    if (rc == 0 && l < c->L - 1 && mask && mask_mode != MASK_NONE) {
      RT *m = mask + (int64_t)l * ysz;
      if (mask_mode == MASK_DRAW) { /* Bernoulli(1 - p) / (1 - p), the scale in float as MXNet's */
        const float pkeep = 1.0f - (float)c->p;
        const RT scale = (RT)(1.0f / pkeep);
        for (int64_t i = 0; i < ysz; i++) m[i] = mxw_rand_uniform() < (double)pkeep ? scale : 0;
      }
      for (int64_t i = 0; i < ysz; i++) out[i] *= m[i];
    }
    in = out;
  }
  free(ws);
  return rc;
}

/* ---- backward ---------------------------------------------------------------------------------- */
typedef struct {
  const rnn_cfg *c;
  int64_t t;
  const RF(lsave) * sv;
  const RT *dhraw; /* (N, H) gradient of o tanh(c) (without a projection: of h', incl. dy) */
  RT *dc;          /* (N, H) running cell gradient, updated */
  RT *dax, *dah;   /* (N, G*H) at t: pre-activation gradients for W_x and W_h (the same but for GRU's n) */
  RT *ddir;        /* GRU: (N, H) dh' z, the direct part of dh_prev */
} RF(bstep_ctx);

#ifndef RNN_VEC
static void RF(bstep_chunk)(void *ctx, int64_t b, int64_t e) {
  const RF(bstep_ctx) *s = (const RF(bstep_ctx) *)ctx;
  const rnn_cfg *c = s->c;
  const int64_t H = c->H, GH = c->GH, N = c->N, t = s->t;
  for (int64_t i = b; i < e; i++) {
    const int64_t n = i / H, k = i % H;
    RT *ax = s->dax + n * GH, *ah = s->dah + n * GH;
    if (rnn_skip(c, n, t)) {
      for (int j = 0; j < c->G; j++) ax[j * H + k] = ah[j * H + k] = 0;
      if (s->ddir) s->ddir[i] = 0;
      continue;
    }
    const RT *g = s->sv->gates + t * N * GH + n * GH;
    const RT dh = s->dhraw[i];
    if (c->mode == MODE_LSTM) {
      const RT ig = g[k], fg = g[H + k], gg = g[2 * H + k], og = g[3 * H + k];
      const RT cp = s->sv->cprev[t * N * H + i], craw = s->sv->cst[t * N * H + i];
      const RT tc = RTANH(c->clip ? RF(clip)(c, craw) : craw);
      RT dcn = s->dc[i] + dh * og * (1 - tc * tc);
      if (RF(clipped)(c, craw)) dcn = 0;
      const RT dog = dh * tc;
      ax[k] = dcn * gg * ig * (1 - ig);
      ax[H + k] = dcn * cp * fg * (1 - fg);
      ax[2 * H + k] = dcn * ig * (1 - gg * gg);
      ax[3 * H + k] = dog * og * (1 - og);
      for (int j = 0; j < 4; j++) ah[j * H + k] = ax[j * H + k];
      s->dc[i] = dcn * fg;
    } else if (c->mode == MODE_GRU) {
      const RT rg = g[k], zg = g[H + k], ng = g[2 * H + k];
      const RT hp = s->sv->hprev[t * N * H + i], ahn = s->sv->ahn[t * N * H + i];
      const RT dn = dh * (1 - zg), dz = dh * (hp - ng);
      const RT dan = dn * (1 - ng * ng);
      const RT dr = dan * ahn;
      ax[k] = ah[k] = dr * rg * (1 - rg);
      ax[H + k] = ah[H + k] = dz * zg * (1 - zg);
      ax[2 * H + k] = dan;
      ah[2 * H + k] = dan * rg;
      s->ddir[i] = dh * zg;
    } else {
      const RT hn = g[k];
      ax[k] = ah[k] = c->mode == MODE_RNN_RELU ? (hn > 0 ? dh : 0) : dh * (1 - hn * hn);
    }
  }
}
#else
/* The same over units of four cells of one batch row. */
static void RF(bstep_chunk)(void *ctx, int64_t b, int64_t e) {
  const RF(bstep_ctx) *s = (const RF(bstep_ctx) *)ctx;
  const rnn_cfg *c = s->c;
  const int64_t H = c->H, GH = c->GH, N = c->N, t = s->t, nb = (H + 3) / 4;
  const v128_t one = wasm_f32x4_splat(1.f), zero = wasm_f32x4_splat(0.f);
  const v128_t lo = wasm_f32x4_splat((float)c->cmin), hi = wasm_f32x4_splat((float)c->cmax);
  for (int64_t u = b; u < e; u++) {
    const int64_t n = u / nb, k = (u % nb) * 4, m = H - k < 4 ? H - k : 4, i = n * H + k;
    float *ax = s->dax + n * GH + k, *ah = s->dah + n * GH + k;
    if (rnn_skip(c, n, t)) {
      for (int j = 0; j < c->G; j++) {
        st4(ax + j * H, zero, m);
        st4(ah + j * H, zero, m);
      }
      if (s->ddir) st4(s->ddir + i, zero, m);
      continue;
    }
    const float *g = s->sv->gates + t * N * GH + n * GH + k;
    const v128_t dh = ld4(s->dhraw + i, m);
    if (c->mode == MODE_LSTM) {
      const v128_t ig = ld4(g, m), fg = ld4(g + H, m), gg = ld4(g + 2 * H, m), og = ld4(g + 3 * H, m);
      const v128_t cp = ld4(s->sv->cprev + t * N * H + i, m), craw = ld4(s->sv->cst + t * N * H + i, m);
      const v128_t tc = mxw_tanh_f32x4(c->clip ? clip4(c, craw) : craw);
      v128_t dcn = wasm_f32x4_add(ld4(s->dc + i, m),
                                  wasm_f32x4_mul(wasm_f32x4_mul(dh, og), wasm_f32x4_sub(one, wasm_f32x4_mul(tc, tc))));
      if (c->clip) { /* no gradient where clipping changed the cell */
        v128_t cut = wasm_v128_or(wasm_f32x4_lt(craw, lo), wasm_f32x4_gt(craw, hi));
        if (c->clip_nan) cut = wasm_v128_or(cut, wasm_f32x4_ne(craw, craw));
        dcn = wasm_v128_andnot(dcn, cut);
      }
      const v128_t dog = wasm_f32x4_mul(dh, tc);
      const v128_t a0 = wasm_f32x4_mul(wasm_f32x4_mul(dcn, gg), wasm_f32x4_mul(ig, wasm_f32x4_sub(one, ig)));
      const v128_t a1 = wasm_f32x4_mul(wasm_f32x4_mul(dcn, cp), wasm_f32x4_mul(fg, wasm_f32x4_sub(one, fg)));
      const v128_t a2 = wasm_f32x4_mul(wasm_f32x4_mul(dcn, ig), wasm_f32x4_sub(one, wasm_f32x4_mul(gg, gg)));
      const v128_t a3 = wasm_f32x4_mul(dog, wasm_f32x4_mul(og, wasm_f32x4_sub(one, og)));
      st4(ax, a0, m);
      st4(ax + H, a1, m);
      st4(ax + 2 * H, a2, m);
      st4(ax + 3 * H, a3, m); /* dah is dax */
      st4(s->dc + i, wasm_f32x4_mul(dcn, fg), m);
    } else if (c->mode == MODE_GRU) {
      const v128_t rg = ld4(g, m), zg = ld4(g + H, m), ng = ld4(g + 2 * H, m);
      const v128_t hp = ld4(s->sv->hprev + t * N * H + i, m), ahn = ld4(s->sv->ahn + t * N * H + i, m);
      const v128_t dn = wasm_f32x4_mul(dh, wasm_f32x4_sub(one, zg)), dz = wasm_f32x4_mul(dh, wasm_f32x4_sub(hp, ng));
      const v128_t dan = wasm_f32x4_mul(dn, wasm_f32x4_sub(one, wasm_f32x4_mul(ng, ng)));
      const v128_t a0 = wasm_f32x4_mul(wasm_f32x4_mul(dan, ahn), wasm_f32x4_mul(rg, wasm_f32x4_sub(one, rg)));
      const v128_t a1 = wasm_f32x4_mul(dz, wasm_f32x4_mul(zg, wasm_f32x4_sub(one, zg)));
      st4(ax, a0, m);
      st4(ah, a0, m);
      st4(ax + H, a1, m);
      st4(ah + H, a1, m);
      st4(ax + 2 * H, dan, m);
      st4(ah + 2 * H, wasm_f32x4_mul(dan, rg), m);
      st4(s->ddir + i, wasm_f32x4_mul(dh, zg), m);
    } else {
      const v128_t hn = ld4(g, m);
      const v128_t d = c->mode == MODE_RNN_RELU ? wasm_v128_and(dh, wasm_f32x4_gt(hn, zero))
                                                : wasm_f32x4_mul(dh, wasm_f32x4_sub(one, wasm_f32x4_mul(hn, hn)));
      st4(ax, d, m); /* dah is dax */
    }
  }
}
#endif

/* Column sums of a (rows, cols) matrix into dst (accumulated in double). */
static void RF(col_sums)(const RT *a, int64_t rows, int64_t cols, RT *dst, double *acc) {
  for (int64_t j = 0; j < cols; j++) acc[j] = 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < cols; j++) acc[j] += (double)a[r * cols + j];
  for (int64_t j = 0; j < cols; j++) dst[j] = (RT)acc[j];
}

/* Backpropagation through layer l, direction d. x: the layer's input (T*N, In); dy: the gradient of
 * the layer's output (T, N, D*Ho); dhy / dcy: of its final state (or NULL); writes its parameter
 * gradients into dw, adds (d > 0) or writes its input gradient into dx (T*N, In), and dhx / dcx. */
static int RF(layer_bwd)(const rnn_cfg *c, int l, int d, const RT *x, const RT *w, const RF(lsave) * sv, const RT *dy,
                         const RT *dhy, const RT *dcy, RT *dw, RT *dx, RT *dhx, RT *dcx, RT *ws, double *acc) {
  const int64_t T = c->T, N = c->N, H = c->H, GH = c->GH, Ho = c->Ho, P = c->P, In = layer_in(c, l), TN = T * N;
  const int64_t yrow = c->D * Ho;
  const rnn_off o = rnn_offsets(c, l, d);
  const int lstm = c->mode == MODE_LSTM, gru = c->mode == MODE_GRU;
  RT *dax = ws, *dah = gru ? dax + TN * GH : dax, *dr = dax + TN * GH * (gru ? 2 : 1);
  RT *dh = dr + TN * P, *dc = dh + N * Ho, *dht = dc + N * H, *dhraw = dht + N * Ho, *ddir = dhraw + N * H;
  if (dhy)
    memcpy(dh, dhy, sizeof(RT) * (size_t)(N * Ho));
  else
    memset(dh, 0, sizeof(RT) * (size_t)(N * Ho));
  if (lstm) {
    if (dcy)
      memcpy(dc, dcy, sizeof(RT) * (size_t)(N * H));
    else
      memset(dc, 0, sizeof(RT) * (size_t)(N * H));
  }
  const double cost = (double)c->G * 6.0 + MXW_COST_MATH * lstm;
  for (int64_t s = T - 1; s >= 0; s--) {
    const int64_t t = d ? T - 1 - s : s;
    const RT *dyt = dy + t * N * yrow + d * Ho;
    for (int64_t n = 0; n < N; n++) {
      const int skip = rnn_skip(c, n, t);
      for (int64_t k = 0; k < Ho; k++) dht[n * Ho + k] = dh[n * Ho + k] + (skip ? 0 : dyt[n * yrow + k]);
    }
    const RT *dhr = dht;
    if (P) { /* through r = W_r h_raw */
      RT *drt = dr + t * N * P;
      for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < P; k++) drt[n * P + k] = rnn_skip(c, n, t) ? 0 : dht[n * P + k];
      MXW_TRY(RGEMM(0, 0, N, H, P, 1, drt, P, w + o.wr, H, 0, dhraw, H));
      dhr = dhraw;
    }
    RF(bstep_ctx) bc = {c, t, sv, dhr, dc, dax + t * N * GH, dah + t * N * GH, gru ? ddir : NULL};
#ifdef RNN_VEC
    mxw_parallel_run(N * ((H + 3) / 4), 1, cost * 2.0, RF(bstep_chunk), &bc);
#else
    mxw_parallel_run(N * H, 4, cost, RF(bstep_chunk), &bc);
#endif
    /* dh_prev = dA_h W_h (+ dh' z for GRU); skipped items pass dh through */
    MXW_TRY(RGEMM(0, 0, N, Ho, GH, 1, dah + t * N * GH, GH, w + o.wh, Ho, 0, dh, Ho));
    for (int64_t n = 0; n < N; n++) {
      if (rnn_skip(c, n, t)) {
        memcpy(dh + n * Ho, dht + n * Ho, sizeof(RT) * (size_t)Ho);
      } else if (gru) {
        for (int64_t k = 0; k < H; k++) dh[n * H + k] += ddir[n * H + k];
      }
    }
  }
  memcpy(dhx, dh, sizeof(RT) * (size_t)(N * Ho));
  if (lstm && dcx) memcpy(dcx, dc, sizeof(RT) * (size_t)(N * H));
  /* weights and biases, batched over time */
  MXW_TRY(RGEMM(1, 0, GH, In, TN, 1, dax, GH, x, In, 0, dw + o.wx, In));
  MXW_TRY(RGEMM(1, 0, GH, Ho, TN, 1, dah, GH, sv->hprev, Ho, 0, dw + o.wh, Ho));
  if (P) MXW_TRY(RGEMM(1, 0, P, H, TN, 1, dr, P, sv->hraw, H, 0, dw + o.wr, H));
  RF(col_sums)(dax, TN, GH, dw + o.bx, acc);
  RF(col_sums)(dah, TN, GH, dw + o.bh, acc);
  /* the input's gradient */
  return RGEMM(0, 0, TN, In, GH, 1, dax, GH, w + o.wx, In, d ? 1 : 0, dx, In);
}

static int RF(rnn_bwd)(const rnn_cfg *c, const RT *x, const RT *w, const RT *hx, const RT *cx, const RT *mask,
                       const RT *dy, const RT *dhy, const RT *dcy, RT *dx, RT *dw, RT *dhx, RT *dcx) {
  const int64_t TN = c->T * c->N, ysz = TN * c->D * c->Ho, NHo = c->N * c->Ho, NH = c->N * c->H;
  const int64_t n_save = save_total(c);
  const int64_t n_bws = TN * c->GH * (c->mode == MODE_GRU ? 2 : 1) + TN * c->P + 2 * NHo + 3 * NH;
  const int64_t n_dy = c->L > 1 ? 2 * ysz : 0;
  const int64_t total = n_save + ysz + n_bws + n_dy;
  if (TN == 0) { /* no steps: the initial states' gradients are the final states' */
    const int64_t LD = (int64_t)c->L * c->D;
    memset(dw, 0, sizeof(RT) * (size_t)rnn_offsets(c, c->L - 1, c->D - 1).bh + sizeof(RT) * (size_t)c->GH);
    for (int64_t i = 0; i < LD * NHo; i++) dhx[i] = dhy ? dhy[i] : 0;
    if (dcx)
      for (int64_t i = 0; i < LD * NH; i++) dcx[i] = dcy ? dcy[i] : 0;
    return 0;
  }
  RT *buf = (RT *)malloc(sizeof(RT) * (size_t)(total > 0 ? total : 1));
  double *acc = (double *)malloc(sizeof(double) * (size_t)(c->GH > 0 ? c->GH : 1));
  if (!buf || !acc) {
    free(buf);
    free(acc);
    return mxw_fail("out of memory for the RNN backward workspace (%lld elements)", (long long)total);
  }
  RT *save = buf, *ytop = save + n_save, *bws = ytop + ysz, *dyl = bws + n_bws, *dxl = dyl + ysz;
  int rc = RF(rnn_fwd)(c, x, w, hx, cx, ytop, NULL, NULL, (RT *)mask, mask ? MASK_GIVEN : MASK_NONE, save);
  const RT *ylayers = save + save_per_ld(c) * c->L * c->D;
  const RT *dycur = dy;
  for (int l = c->L - 1; l >= 0 && rc == 0; l--) {
    const RT *xin = l ? ylayers + (int64_t)(l - 1) * ysz : x;
    RT *dxcur = l ? (dycur == dyl ? dxl : dyl) : dx;
    for (int d = 0; d < c->D && rc == 0; d++) {
      const int64_t ld = (int64_t)l * c->D + d;
      RF(lsave) sv = RF(lsave_at)(c, save, l, d);
      rc = RF(layer_bwd)(c, l, d, xin, w, &sv, dycur, dhy ? dhy + ld * NHo : NULL, dcy ? dcy + ld * NH : NULL, dw,
                         dxcur, dhx + ld * NHo, dcx ? dcx + ld * NH : NULL, bws, acc);
    }
    if (rc == 0 && l > 0 && mask) {
      const RT *m = mask + (int64_t)(l - 1) * ysz;
      for (int64_t i = 0; i < ysz; i++) dxcur[i] *= m[i];
    }
    dycur = dxcur;
  }
  free(buf);
  free(acc);
  return rc;
}

#endif /* RNN_TEMPLATE */
