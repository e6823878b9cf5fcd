/* contrib_attention.c -- GluonNLP's fused multi-head attention products (MXNet 1.9.1's
 * src/operator/contrib/transformer.cc): _contrib_interleaved_matmul_selfatt_qk / _valatt and
 * _contrib_interleaved_matmul_encdec_qk / _valatt, each a batch of strided matrix products
 * through mxw_sgemm (mxw_dgemm for float64).
 *
 * Layouts (T: sequence length, S: batch, H: heads, D: head size, E = H * D; batch b = s * H + h):
 *   selfatt: queries_keys_values (T, S, 3E), the last axis (H, 3, D): q, k, v of head h side by side;
 *   encdec:  queries (Tq, S, E) as (H, D); keys_values (Tk, S, 2E) as (H, 2, D): k, then v;
 *   attention (S * H, Tq, Tk); the value products' output (Tq, S, E).
 *   qk:     out[b, i, j] = <q_i, k_j> / sqrt(D)      valatt: out[i, s, h * D + d] = sum_j att[b, i, j] v_j[d]
 * Row i of head b's q (or k, v) starts at element i * ld + b * stride (+ D, + 2D) of its input, with
 * ld = S * 3E (selfatt), S * E (queries), S * 2E (keys_values): plain row-major matrices with a
 * leading dimension, so each product is one gemm call.
 * MXNet's CPU kernels take float32 only ("Only FP32 is supported on CPU at the moment"); float64
 * runs the same products in double (for gradient checks). Gradients: the `_backward_interleaved_*`
 * ops (inputs ograd and the forward inputs) give every input's gradient; the parts of an
 * interleaved input the forward does not read (selfatt_qk's values, valatt's queries and keys,
 * encdec_qk's values, encdec_valatt's keys) get zeros. */
#include <math.h>
#include <stdio.h>

#include "../core/mxw_core.h"
#include "../kernels/gemm.h"

#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
typedef char shape_buf[160];

typedef struct {
  int64_t heads;
} InterleavedParam;
static const mxw_attr_spec k_attrs[] = {
    MXW_A_INT("heads", InterleavedParam, heads, NULL, "number of attention heads"),
};
static int validate(void *param) {
  const InterleavedParam *p = (const InterleavedParam *)param;
  MXW_CHECK(p->heads >= 1, "heads must be >= 1, got %lld", (long long)p->heads);
  return 0;
}

static const char *const k_qkv[] = {"queries_keys_values", NULL};
static const char *const k_qkv_att[] = {"queries_keys_values", "attention", NULL};
static const char *const k_q_kv[] = {"queries", "keys_values", NULL};
static const char *const k_kv_att[] = {"keys_values", "attention", NULL};
static const char *const k_og_qkv[] = {"ograd", "queries_keys_values", NULL};
static const char *const k_og_qkv_att[] = {"ograd", "queries_keys_values", "attention", NULL};
static const char *const k_og_q_kv[] = {"ograd", "queries", "keys_values", NULL};
static const char *const k_og_kv_att[] = {"ograd", "keys_values", "attention", NULL};
static const char *const k_output[] = {"output", NULL};

/* ---- the strided batched product ----------------------------------------------------------------
 * For b < batches: C_b = alpha * op(A_b) op(B_b) (+ C_b when beta is 1), X_b = X + b * stride_x. */
typedef struct {
  int ta, tb;
  int64_t M, N, K;
  double alpha;
  const void *A;
  int64_t lda, sa;
  const void *B;
  int64_t ldb, sb;
  void *C;
  int64_t ldc, sc;
} batched;
static int run_batched(int dtype, int64_t batches, const batched *g) {
  for (int64_t b = 0; b < batches; b++) {
    if (dtype == MXW_FLOAT32) {
      MXW_TRY(mxw_sgemm(g->ta, g->tb, g->M, g->N, g->K, (float)g->alpha, (const float *)g->A + b * g->sa, g->lda,
                        (const float *)g->B + b * g->sb, g->ldb, 0.f, (float *)g->C + b * g->sc, g->ldc));
    } else {
      MXW_TRY(mxw_dgemm(g->ta, g->tb, g->M, g->N, g->K, g->alpha, (const double *)g->A + b * g->sa, g->lda,
                        (const double *)g->B + b * g->sb, g->ldb, 0.0, (double *)g->C + b * g->sc, g->ldc));
    }
  }
  return 0;
}
static int check_dtype(int dtype) {
  MXW_CHECK(dtype == MXW_FLOAT32 || dtype == MXW_FLOAT64,
            "Only FP32 is supported on CPU at the moment (float64 too here), got %s", mxw_dtype_name(dtype));
  return 0;
}
static void zero(mxw_tensor *t) { memset(t->data, 0, (size_t)mxw_tensor_size(t) * (size_t)mxw_dtype_size(t->dtype)); }
/* MXNet's scale: 1 / sqrt(float(head_dim)) as a float (in double for float64). */
static double qk_scale(int64_t D, int dtype) {
  const double s = 1.0 / sqrt((double)D);
  return dtype == MXW_FLOAT32 ? (double)(float)s : s;
}

static int check_3d(const mxw_shape *s, const char *what, const char *layout) {
  shape_buf b;
  MXW_CHECK(s->ndim == 3, "Input %s should be 3D in %s, currently is %dD (shape %s)", what, layout, s->ndim,
            SHAPE_STR(s, b));
  return 0;
}
/* A last axis of `mult` interleaved projections of `heads` heads: its size must divide evenly. */
static int check_proj(int64_t size, int64_t mult, int64_t heads, const char *what) {
  MXW_CHECK(size % (mult * heads) == 0, "%s.shape[2] = %lld must be a multiple of %lld * heads = %lld", what,
            (long long)size, (long long)mult, (long long)(mult * heads));
  return 0;
}
static int set_out(mxw_shape *out, int64_t a, int64_t b, int64_t c) {
  const int64_t d[3] = {a, b, c};
  mxw_shape s = mxw_shape_make(3, d);
  return mxw_shape_assign(out, &s, "output");
}

/* ==== selfatt_qk: (T, S, 3E) -> (S * H, T, T) ==================================================== */
static int infer_selfatt_qk(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const InterleavedParam *p = (const InterleavedParam *)param;
  (void)nin;
  (void)nout;
  if (!mxw_shape_known(&in[0])) return 0;
  MXW_TRY(check_3d(&in[0], "queries_keys_values", "seq_length-batch-proj_dim"));
  MXW_TRY(check_proj(in[0].dims[2], 3, p->heads, "queries_keys_values"));
  return set_out(&out[0], p->heads * in[0].dims[1], in[0].dims[0], in[0].dims[0]);
}
static int fwd_selfatt_qk(const mxw_op_call *c) {
  const InterleavedParam *p = (const InterleavedParam *)c->param;
  const mxw_tensor *qkv = &c->inputs[0];
  MXW_TRY(check_dtype(qkv->dtype));
  const int64_t T = qkv->shape.dims[0], S = qkv->shape.dims[1], D = qkv->shape.dims[2] / 3 / p->heads;
  const int64_t B = S * p->heads, ld = B * 3 * D;
  const size_t es = (size_t)mxw_dtype_size(qkv->dtype);
  const char *q = (const char *)qkv->data;
  batched g = {0, 1,    T, T, D, qk_scale(D, qkv->dtype), q, ld, 3 * D, q + D * es, ld, 3 * D, c->outputs[0].data,
               T, T * T};
  return run_batched(qkv->dtype, B, &g);
}
/* (ograd, qkv) -> d qkv: dq_b = s dOut_b K_b, dk_b = s dOut_b^T Q_b, dv = 0 */
static int fwd_backward_selfatt_qk(const mxw_op_call *c) {
  const InterleavedParam *p = (const InterleavedParam *)c->param;
  const mxw_tensor *og = &c->inputs[0], *qkv = &c->inputs[1];
  mxw_tensor *dqkv = &c->outputs[0];
  MXW_TRY(check_dtype(qkv->dtype));
  const int64_t T = qkv->shape.dims[0], S = qkv->shape.dims[1], D = qkv->shape.dims[2] / 3 / p->heads;
  const int64_t B = S * p->heads, ld = B * 3 * D;
  const size_t es = (size_t)mxw_dtype_size(qkv->dtype);
  const char *q = (const char *)qkv->data;
  char *dq = (char *)dqkv->data;
  zero(dqkv);
  const double s = qk_scale(D, qkv->dtype);
  batched gq = {0, 0, T, D, T, s, og->data, T, T * T, q + D * es, ld, 3 * D, dq, ld, 3 * D};
  MXW_TRY(run_batched(qkv->dtype, B, &gq));
  batched gk = {1, 0, T, D, T, s, og->data, T, T * T, q, ld, 3 * D, dq + D * es, ld, 3 * D};
  return run_batched(qkv->dtype, B, &gk);
}

/* ==== selfatt_valatt: (T, S, 3E), (S * H, T, T) -> (T, S, E) ====================================== */
static int infer_selfatt_valatt(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const InterleavedParam *p = (const InterleavedParam *)param;
  (void)nin;
  (void)nout;
  if (!mxw_shape_known(&in[0])) return 0;
  MXW_TRY(check_3d(&in[0], "queries_keys_values", "seq_length-batch-3*proj_dim"));
  MXW_TRY(check_proj(in[0].dims[2], 3, p->heads, "queries_keys_values"));
  const int64_t T = in[0].dims[0], S = in[0].dims[1];
  const int64_t ad[3] = {S * p->heads, T, T};
  mxw_shape a = mxw_shape_make(3, ad);
  if (in[1].ndim >= 0) {
    MXW_TRY(check_3d(&in[1], "attention", "batch-seq_length-seq_length"));
    MXW_CHECK(in[1].dims[1] < 0 || in[1].dims[1] == T,
              "queries_keys_values.shape[0] and attention.shape[1] should be the same, currently are %lld and %lld",
              (long long)T, (long long)in[1].dims[1]);
    MXW_CHECK(in[1].dims[2] < 0 || in[1].dims[2] == T,
              "queries_keys_values.shape[0] and attention.shape[2] should be the same, currently are %lld and %lld",
              (long long)T, (long long)in[1].dims[2]);
  }
  MXW_TRY(mxw_shape_unify(&in[1], &a, "attention", " (batch * heads, seq_length, seq_length)"));
  return set_out(&out[0], T, S, in[0].dims[2] / 3);
}
static int fwd_selfatt_valatt(const mxw_op_call *c) {
  const InterleavedParam *p = (const InterleavedParam *)c->param;
  const mxw_tensor *qkv = &c->inputs[0], *att = &c->inputs[1];
  MXW_TRY(check_dtype(qkv->dtype));
  const int64_t T = qkv->shape.dims[0], S = qkv->shape.dims[1], D = qkv->shape.dims[2] / 3 / p->heads;
  const int64_t B = S * p->heads, ld = B * 3 * D;
  const size_t es = (size_t)mxw_dtype_size(qkv->dtype);
  batched g = {
      0,     0, T, D, T, 1.0, att->data, T, T * T, (const char *)qkv->data + 2 * D * es, ld, 3 * D, c->outputs[0].data,
      B * D, D};
  return run_batched(qkv->dtype, B, &g);
}
/* (ograd, qkv, att) -> (d qkv, d att): dv_b = Att_b^T dOut_b, dAtt_b = dOut_b V_b^T, dq = dk = 0 */
static int fwd_backward_selfatt_valatt(const mxw_op_call *c) {
  const InterleavedParam *p = (const InterleavedParam *)c->param;
  const mxw_tensor *og = &c->inputs[0], *qkv = &c->inputs[1], *att = &c->inputs[2];
  mxw_tensor *dqkv = &c->outputs[0], *datt = &c->outputs[1];
  MXW_TRY(check_dtype(qkv->dtype));
  const int64_t T = qkv->shape.dims[0], S = qkv->shape.dims[1], D = qkv->shape.dims[2] / 3 / p->heads;
  const int64_t B = S * p->heads, ld = B * 3 * D;
  const size_t es = (size_t)mxw_dtype_size(qkv->dtype);
  zero(dqkv);
  batched gv = {1,  0,    T, D, T, 1.0, att->data, T, T * T, og->data, B * D, D, (char *)dqkv->data + 2 * D * es,
                ld, 3 * D};
  MXW_TRY(run_batched(qkv->dtype, B, &gv));
  batched ga = {0,  1,     T,          T, D,    1.0, og->data, B * D, D, (const char *)qkv->data + 2 * D * es,
                ld, 3 * D, datt->data, T, T * T};
  return run_batched(qkv->dtype, B, &ga);
}

/* ==== encdec_qk: (Tq, S, E), (Tk, S, 2E) -> (S * H, Tq, Tk) ====================================== */
static int infer_encdec_qk(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const InterleavedParam *p = (const InterleavedParam *)param;
  (void)nin;
  (void)nout;
  if (!mxw_shape_known(&in[0]) || !mxw_shape_known(&in[1])) return 0;
  MXW_TRY(check_3d(&in[0], "queries", "seq_length-batch-proj_dim"));
  MXW_TRY(check_3d(&in[1], "keys_values", "seq_length-batch-2*proj_dim"));
  MXW_CHECK(in[0].dims[2] * 2 == in[1].dims[2],
            "keys_values.shape[2] should be equal to queries.shape[2] * 2, currently are: %lld and %lld",
            (long long)in[1].dims[2], (long long)in[0].dims[2]);
  MXW_CHECK(in[0].dims[1] == in[1].dims[1],
            "queries.shape[1] should be equal to keys_values.shape[1], currently are: %lld and %lld",
            (long long)in[0].dims[1], (long long)in[1].dims[1]);
  MXW_TRY(check_proj(in[0].dims[2], 1, p->heads, "queries"));
  return set_out(&out[0], in[0].dims[1] * p->heads, in[0].dims[0], in[1].dims[0]);
}
static int fwd_encdec_qk(const mxw_op_call *c) {
  const InterleavedParam *p = (const InterleavedParam *)c->param;
  const mxw_tensor *q = &c->inputs[0], *kv = &c->inputs[1];
  MXW_TRY(check_dtype(q->dtype));
  MXW_CHECK(kv->dtype == q->dtype, "queries and keys_values must share a dtype");
  const int64_t Tq = q->shape.dims[0], S = q->shape.dims[1], Tk = kv->shape.dims[0], D = q->shape.dims[2] / p->heads;
  const int64_t B = S * p->heads;
  batched g = {0,      1, Tq,       Tk,        D,     qk_scale(D, q->dtype), q->data,
               B * D,  D, kv->data, B * 2 * D, 2 * D, c->outputs[0].data,    Tk,
               Tq * Tk};
  return run_batched(q->dtype, B, &g);
}
/* (ograd, q, kv) -> (dq, dkv): dq_b = s dOut_b K_b, dk_b = s dOut_b^T Q_b, dv = 0 */
static int fwd_backward_encdec_qk(const mxw_op_call *c) {
  const InterleavedParam *p = (const InterleavedParam *)c->param;
  const mxw_tensor *og = &c->inputs[0], *q = &c->inputs[1], *kv = &c->inputs[2];
  mxw_tensor *dq = &c->outputs[0], *dkv = &c->outputs[1];
  MXW_TRY(check_dtype(q->dtype));
  const int64_t Tq = q->shape.dims[0], S = q->shape.dims[1], Tk = kv->shape.dims[0], D = q->shape.dims[2] / p->heads;
  const int64_t B = S * p->heads;
  const double s = qk_scale(D, q->dtype);
  zero(dkv);
  batched gq = {0, 0, Tq, D, Tk, s, og->data, Tk, Tq * Tk, kv->data, B * 2 * D, 2 * D, dq->data, B * D, D};
  MXW_TRY(run_batched(q->dtype, B, &gq));
  batched gk = {1, 0, Tk, D, Tq, s, og->data, Tk, Tq * Tk, q->data, B * D, D, dkv->data, B * 2 * D, 2 * D};
  return run_batched(q->dtype, B, &gk);
}

/* ==== encdec_valatt: (Tk, S, 2E), (S * H, Tq, Tk) -> (Tq, S, E) =================================== */
static int infer_encdec_valatt(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const InterleavedParam *p = (const InterleavedParam *)param;
  (void)nin;
  (void)nout;
  if (!mxw_shape_known(&in[0]) || !mxw_shape_known(&in[1])) return 0;
  MXW_TRY(check_3d(&in[0], "keys_values", "seq_length-batch-2*proj_dim"));
  MXW_TRY(check_3d(&in[1], "attention", "batch-seq_length-seq_length"));
  MXW_CHECK(in[0].dims[0] == in[1].dims[2],
            "keys_values.shape[0] should be equal to attention.shape[2], currently are %lld and %lld",
            (long long)in[0].dims[0], (long long)in[1].dims[2]);
  MXW_CHECK(in[0].dims[1] * p->heads == in[1].dims[0],
            "attention.shape[0] should be equal to keys_values.shape[1] * heads, currently are: %lld and %lld",
            (long long)in[1].dims[0], (long long)(in[0].dims[1] * p->heads));
  MXW_TRY(check_proj(in[0].dims[2], 2, p->heads, "keys_values"));
  return set_out(&out[0], in[1].dims[1], in[0].dims[1], in[0].dims[2] / 2);
}
static int fwd_encdec_valatt(const mxw_op_call *c) {
  const InterleavedParam *p = (const InterleavedParam *)c->param;
  const mxw_tensor *kv = &c->inputs[0], *att = &c->inputs[1];
  MXW_TRY(check_dtype(kv->dtype));
  MXW_CHECK(att->dtype == kv->dtype, "keys_values and attention must share a dtype");
  const int64_t Tk = kv->shape.dims[0], B = att->shape.dims[0], Tq = att->shape.dims[1];
  const int64_t D = kv->shape.dims[2] / 2 / p->heads;
  const size_t es = (size_t)mxw_dtype_size(kv->dtype);
  batched g = {0,
               0,
               Tq,
               D,
               Tk,
               1.0,
               att->data,
               Tk,
               Tq * Tk,
               (const char *)kv->data + D * es,
               B * 2 * D,
               2 * D,
               c->outputs[0].data,
               B * D,
               D};
  return run_batched(kv->dtype, B, &g);
}
/* (ograd, kv, att) -> (dkv, datt): dv_b = Att_b^T dOut_b, dAtt_b = dOut_b V_b^T, dk = 0 */
static int fwd_backward_encdec_valatt(const mxw_op_call *c) {
  const InterleavedParam *p = (const InterleavedParam *)c->param;
  const mxw_tensor *og = &c->inputs[0], *kv = &c->inputs[1], *att = &c->inputs[2];
  mxw_tensor *dkv = &c->outputs[0], *datt = &c->outputs[1];
  MXW_TRY(check_dtype(kv->dtype));
  const int64_t Tk = kv->shape.dims[0], B = att->shape.dims[0], Tq = att->shape.dims[1];
  const int64_t D = kv->shape.dims[2] / 2 / p->heads;
  const size_t es = (size_t)mxw_dtype_size(kv->dtype);
  zero(dkv);
  batched gv = {1,         0,    Tk, D, Tq, 1.0, att->data, Tk, Tq * Tk, og->data, B * D, D, (char *)dkv->data + D * es,
                B * 2 * D, 2 * D};
  MXW_TRY(run_batched(kv->dtype, B, &gv));
  batched ga = {0,         1,     Tq,         Tk, D,      1.0, og->data, B * D, D, (const char *)kv->data + D * es,
                B * 2 * D, 2 * D, datt->data, Tk, Tq * Tk};
  return run_batched(kv->dtype, B, &ga);
}

/* ---- gradients: ElemwiseGradUseIn{"_backward_interleaved_matmul_*"} ------------------------------ */
static int grad_one(mxw_grad_ctx *g) {
  mxw_gid d;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_interleaved_matmul_selfatt_qk",
                          MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0)), &d, 1));
  return mxw_grad_set(g, 0, d);
}
static int grad_two(mxw_grad_ctx *g, const char *op) {
  mxw_gid d[2];
  MXW_TRY(mxw_grad_op_fwd(g, op, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1)), d, 2));
  MXW_TRY(mxw_grad_set(g, 0, d[0]));
  return mxw_grad_set(g, 1, d[1]);
}
static int grad_selfatt_valatt(mxw_grad_ctx *g) { return grad_two(g, "_backward_interleaved_matmul_selfatt_valatt"); }
static int grad_encdec_qk(mxw_grad_ctx *g) { return grad_two(g, "_backward_interleaved_matmul_encdec_qk"); }
static int grad_encdec_valatt(mxw_grad_ctx *g) { return grad_two(g, "_backward_interleaved_matmul_encdec_valatt"); }

/* Backward shapes: each input gradient has the matching forward input's shape. */
static int infer_backward(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  for (int i = 0; i < nout && i + 1 < nin; i++) {
    MXW_TRY(mxw_shape_assign(&out[i], &in[i + 1], "input gradient"));
    MXW_TRY(mxw_shape_assign(&in[i + 1], &out[i], "input"));
  }
  return 0;
}

/* The eight ops share their attributes, params and validation; the backward ones differ in outputs,
 * shapes (infer_backward) and the gradient they lack. */
#define OP_DEF(VAR, NAME, DOC, NIN, INPUTS, NOUT, INFER, FWD, ...)       \
  static const mxw_op_def VAR = {.name = NAME,                           \
                                 .doc = MXW_DOC(DOC),                    \
                                 .attrs = k_attrs,                       \
                                 .num_attrs = 1,                         \
                                 .param_size = sizeof(InterleavedParam), \
                                 .validate = validate,                   \
                                 .num_inputs = NIN,                      \
                                 .input_names = INPUTS,                  \
                                 .num_outputs = NOUT,                    \
                                 .infer_shape = INFER,                   \
                                 .forward = FWD,                         \
                                 __VA_ARGS__};
#define FWD_DEF(VAR, NAME, NIN, INPUTS, INFER, FWD, GRAD, DOC) \
  OP_DEF(VAR, NAME, DOC, NIN, INPUTS, 1, INFER, FWD, .output_names = k_output, .gradient = GRAD)
#define BWD_DEF(VAR, NAME, NIN, INPUTS, NOUT, FWD) \
  OP_DEF(VAR, NAME, "the gradient of " NAME, NIN, INPUTS, NOUT, infer_backward, FWD, .gradient = NULL)

FWD_DEF(op_selfatt_qk, "_contrib_interleaved_matmul_selfatt_qk", 1, k_qkv, infer_selfatt_qk, fwd_selfatt_qk, grad_one,
        "multi-head self-attention scores: (T, S, 3E) interleaved q/k/v -> (S * heads, T, T), q.k / sqrt(head_dim)")
FWD_DEF(
    op_selfatt_valatt, "_contrib_interleaved_matmul_selfatt_valatt", 2, k_qkv_att, infer_selfatt_valatt,
    fwd_selfatt_valatt, grad_selfatt_valatt,
    "multi-head self-attention output: the attention (S * heads, T, T) applied to the interleaved values -> (T, S, E)")
FWD_DEF(op_encdec_qk, "_contrib_interleaved_matmul_encdec_qk", 2, k_q_kv, infer_encdec_qk, fwd_encdec_qk,
        grad_encdec_qk,
        "encoder-decoder attention scores: queries (Tq, S, E), interleaved k/v (Tk, S, 2E) -> (S * heads, Tq, Tk)")
FWD_DEF(
    op_encdec_valatt, "_contrib_interleaved_matmul_encdec_valatt", 2, k_kv_att, infer_encdec_valatt, fwd_encdec_valatt,
    grad_encdec_valatt,
    "encoder-decoder attention output: attention (S * heads, Tq, Tk) applied to the interleaved values -> (Tq, S, E)")
BWD_DEF(op_b_selfatt_qk, "_backward_interleaved_matmul_selfatt_qk", 2, k_og_qkv, 1, fwd_backward_selfatt_qk)
BWD_DEF(op_b_selfatt_valatt, "_backward_interleaved_matmul_selfatt_valatt", 3, k_og_qkv_att, 2,
        fwd_backward_selfatt_valatt)
BWD_DEF(op_b_encdec_qk, "_backward_interleaved_matmul_encdec_qk", 3, k_og_q_kv, 2, fwd_backward_encdec_qk)
BWD_DEF(op_b_encdec_valatt, "_backward_interleaved_matmul_encdec_valatt", 3, k_og_kv_att, 2, fwd_backward_encdec_valatt)

MXW_FAMILY(contrib_attention, &op_selfatt_qk, &op_selfatt_valatt, &op_encdec_qk, &op_encdec_valatt, &op_b_selfatt_qk,
           &op_b_selfatt_valatt, &op_b_encdec_qk, &op_b_encdec_valatt);
