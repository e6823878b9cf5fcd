/* linalg.c -- FullyConnected, dot and batch_dot: matrix products over views of the operands.
 * Semantics: ../shared/spec/ops.md §1 FullyConnected and §4 dot / batch_dot.
 *
 * Every op reduces to (a batch of) C = op(A) * op(B) on row-major views, run by mxw_sgemm for
 * float32, float16 and bfloat16 (the half types through float32 copies, accumulating in float32
 * as MXNet's CPU GEMM of half_t does) and by the plain mxw_dgemm for float64. Integer dtypes are
 * rejected at type inference, as MXNet does.
 * Gradients (MXNet's _backward_FullyConnected, _backward_dot, _backward_batch_dot) are GEMMs of
 * the output gradient with the other operand over the same views; see "gradients" below.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../core/mxw_core.h"
#include "../kernels/gemm.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- shared helpers ---------------------------------------------------------------------------- */

/* Product of dims [from, to) of s; -1 if any of them is unknown. */
static int64_t dims_prod(const mxw_shape *s, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; i++) {
    if (s->dims[i] < 0) return -1;
    n *= s->dims[i];
  }
  return n;
}

/* All operands share one floating-point dtype. */
static int infer_type_float(const void *param, int nin, int *in, int nout, int *out) {
  MXW_TRY(mxw_infer_type_same(param, nin, in, nout, out));
  int t = nin > 0 ? in[0] : -1;
  if (t >= 0 && !mxw_dtype_is_float(t))
    return mxw_fail("dtype %s is not supported (float32, float64, float16 or bfloat16 only)", mxw_dtype_name(t));
  return 0;
}

/* A batch of products C[b] = op(A[b]) * op(B[b]) over row-major (M, N, K) views; A[b] starts at
 * element b * stride_a of the tensor a, and so on. */
typedef struct {
  int trans_a, trans_b;
  int64_t batch, M, N, K;
  int64_t lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
} gemm_plan;

/* A float32 copy of a float16 / bfloat16 t (copy: its values, else uninitialised), or NULL after
 * mxw_fail. */
static float *f32_copy(const mxw_tensor *t, int copy) {
  int64_t n = mxw_tensor_size(t);
  float *d = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  if (!d) {
    mxw_fail("out of memory for a float32 copy of %lld elements", (long long)n);
    return NULL;
  }
  if (copy) mxw_convert(t->data, t->dtype, d, MXW_FLOAT32, n);
  return d;
}

static int run_gemm(const gemm_plan *g, const mxw_tensor *a, const mxw_tensor *b, mxw_tensor *c, int accumulate);
/* float16 / bfloat16: the float32 plan over float32 copies, C rounded back (FullyConnected at
 * 64x512x512: 13.7 ms through float64 copies and the plain dgemm, against 0.8 for float32) */
static int run_gemm_half(const gemm_plan *g, const mxw_tensor *a, const mxw_tensor *b, mxw_tensor *c, int accumulate) {
  mxw_tensor a32 = *a, b32 = *b, c32 = *c;
  float *fa = f32_copy(a, 1), *fb = fa ? f32_copy(b, 1) : NULL, *fc = fb ? f32_copy(c, accumulate) : NULL;
  int rc = -1;
  if (fc) {
    a32.data = fa, b32.data = fb, c32.data = fc;
    a32.dtype = b32.dtype = c32.dtype = MXW_FLOAT32;
    rc = run_gemm(g, &a32, &b32, &c32, accumulate);
    if (rc == 0) mxw_convert(fc, MXW_FLOAT32, c->data, c->dtype, mxw_tensor_size(c));
  }
  free(fa);
  free(fb);
  free(fc);
  return rc;
}

/* Runs the plan in the operands' dtype. accumulate: C += product (C holds e.g. the bias);
 * otherwise C = product. */
static int run_gemm(const gemm_plan *g, const mxw_tensor *a, const mxw_tensor *b, mxw_tensor *c, int accumulate) {
  if (g->batch == 0 || g->M == 0 || g->N == 0) return 0;
  if (c->dtype == MXW_FLOAT16 || c->dtype == MXW_BFLOAT16) return run_gemm_half(g, a, b, c, accumulate);
    /* the batch of products in T through GEMM (mxw_sgemm for float32, mxw_dgemm for float64: type
     * inference admits the four float dtypes only) */
#define RUN_BATCH(T, GEMM)                                                                                           \
  do {                                                                                                               \
    const T *A = (const T *)a->data, *B = (const T *)b->data;                                                        \
    T *C = (T *)c->data;                                                                                             \
    for (int64_t i = 0; i < g->batch; i++)                                                                           \
      MXW_TRY(GEMM(g->trans_a, g->trans_b, g->M, g->N, g->K, (T)1, A + i * g->stride_a, g->lda, B + i * g->stride_b, \
                   g->ldb, (T)(accumulate ? 1 : 0), C + i * g->stride_c, g->ldc));                                   \
  } while (0)
  if (c->dtype == MXW_FLOAT32)
    RUN_BATCH(float, mxw_sgemm);
  else
    RUN_BATCH(double, mxw_dgemm);
#undef RUN_BATCH
  return 0;
}

/* ---- FullyConnected ---------------------------------------------------------------------------- */
typedef struct {
  int64_t num_hidden;
  int no_bias;
  int flatten;
} FCParam;

static const mxw_attr_spec k_fc_attrs[] = {
    MXW_A_INT("num_hidden", FCParam, num_hidden, NULL, "number of output units"),
    MXW_A_BOOL("no_bias", FCParam, no_bias, "False", "leave out the bias input"),
    MXW_A_BOOL("flatten", FCParam, flatten, "True",
               "True: data (B, d1, ..., dk) is used as (B, d1*...*dk); False: the last axis is the input"),
};
static const char *const k_fc_inputs[] = {"data", "weight", "bias", NULL};

static int fc_validate(void *param) {
  const FCParam *p = (const FCParam *)param;
  MXW_CHECK(p->num_hidden >= 1, "num_hidden must be >= 1, got %lld", (long long)p->num_hidden);
  return 0;
}
static int fc_num_inputs(const void *param) { return ((const FCParam *)param)->no_bias ? 2 : 3; }

/* data (B, d1, ..., dk) -> in = d1*...*dk, output (B, num_hidden)   [flatten]
 * data (..., in)         -> output (..., num_hidden)                [flatten=False]
 * weight (num_hidden, in); bias (num_hidden,) or (num_hidden, 1). Both directions are filled. */
static int fc_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const FCParam *p = (const FCParam *)param;
  mxw_shape *data = &in[0], *weight = &in[1];
  const int64_t nh = p->num_hidden;
  char a[128];
  if (data->ndim == 0) return mxw_fail("data has shape (), expected at least one dimension");
  /* As MXNet's FullyConnectedShape: nothing is inferred while data's shape is unknown (the
   * weight and bias stay unknown, infer_shape_partial gives them ()). */
  if (data->ndim < 0) return 0;

  /* Output -> data: the batch dims of a known output fill unknown ones of data. */
  if (data->ndim > 0 && out[0].ndim >= 0) {
    mxw_shape want = *data;
    if (p->flatten) {
      if (out[0].ndim == 2) want.dims[0] = data->dims[0] >= 0 ? data->dims[0] : out[0].dims[0];
    } else if (out[0].ndim == data->ndim) {
      for (int i = 0; i + 1 < data->ndim; i++)
        if (want.dims[i] < 0) want.dims[i] = out[0].dims[i];
    }
    *data = want;
  }

  /* The input size, from data or else from the weight (which then fills data where it can). */
  int64_t in_dim = -1;
  if (data->ndim > 0) in_dim = p->flatten ? dims_prod(data, 1, data->ndim) : data->dims[data->ndim - 1];
  if (in_dim < 0 && weight->ndim == 2 && weight->dims[1] >= 0) {
    in_dim = weight->dims[1];
    if (data->ndim > 0 && (!p->flatten || data->ndim == 2) && data->dims[data->ndim - 1] < 0)
      data->dims[data->ndim - 1] = in_dim;
  }

  const int64_t w_dims[2] = {nh, in_dim};
  mxw_shape w_want = mxw_shape_make(2, w_dims);
  if (mxw_shape_unify(weight, &w_want, "weight", NULL) != 0) { /* the message is formatted only on a conflict */
    char rule[200];
    snprintf(rule, sizeof rule, " = (num_hidden, input size) for data %s", mxw_shape_str(data, a, sizeof a));
    return mxw_shape_unify(weight, &w_want, "weight", rule);
  }

  if (!p->no_bias) {
    mxw_shape *bias = &in[2];
    const int64_t b_dims[2] = {nh, 1};
    mxw_shape b_want = mxw_shape_make(bias->ndim == 2 ? 2 : 1, b_dims); /* (nh, 1) is accepted too */
    MXW_TRY(mxw_shape_unify(bias, &b_want, "bias", " = (num_hidden,)"));
  }

  if (data->ndim > 0) {
    mxw_shape o = *data;
    if (p->flatten) {
      o.ndim = 2;
      o.dims[1] = nh;
    } else {
      o.dims[o.ndim - 1] = nh;
    }
    MXW_TRY(mxw_shape_unify(&out[0], &o, "output", ""));
  }
  return 0;
}

static int fc_forward(const mxw_op_call *c) {
  const FCParam *p = (const FCParam *)c->param;
  const mxw_tensor *x = &c->inputs[0], *w = &c->inputs[1];
  mxw_tensor *y = &c->outputs[0];
  const int64_t nh = p->num_hidden, in_dim = w->shape.dims[1];
  const int64_t rows = mxw_tensor_size(y) / nh;
  /* Y (rows, nh) = X (rows, in) * W (nh, in)^T [+ b]: the bias is written first and accumulated onto */
  if (!p->no_bias) {
    const size_t row_bytes = (size_t)nh * (size_t)mxw_dtype_size(y->dtype);
    for (int64_t r = 0; r < rows; r++) memcpy((char *)y->data + (size_t)r * row_bytes, c->inputs[2].data, row_bytes);
  }
  gemm_plan g = {0, 1, 1, rows, nh, in_dim, in_dim, in_dim, nh, 0, 0, 0};
  MXW_TRY(run_gemm(&g, x, w, y, !p->no_bias));
  if (c->fused_act) mxw_apply_act(y->data, y->dtype, mxw_tensor_size(y), c->fused_act); /* graph fusion */
  return 0;
}

/* _backward_FullyConnected(ograd, data, weight) -> (d data, d weight[, d bias]), on the 2-D views
 * G (rows, nh), X (rows, in), W (nh, in):  dX = G W,  dW = G^T X,  db = column sums of G. */
static int fc_backward_num_outputs(const void *param) { return ((const FCParam *)param)->no_bias ? 2 : 3; }
static const char *const k_fc_backward_inputs[] = {"ograd", "data", "weight", NULL};

static int fc_backward_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const FCParam *p = (const FCParam *)param;
  MXW_TRY(mxw_shape_assign(&out[0], &in[1], "data gradient"));
  MXW_TRY(mxw_shape_assign(&out[1], &in[2], "weight gradient"));
  if (nout > 2) {
    mxw_shape b = mxw_shape_make(1, (const int64_t[]){p->num_hidden});
    MXW_TRY(mxw_shape_assign(&out[2], &b, "bias gradient"));
  }
  return 0;
}

/* dW (nh, in) = G^T (nh, rows) X (rows, in);  db (nh) = column sums of G (rows, nh) */
static int fc_weight_grads(const mxw_tensor *gy, const mxw_tensor *x, mxw_tensor *dw, mxw_tensor *db) {
  const int64_t nh = dw->shape.dims[0], in_dim = dw->shape.dims[1];
  const int64_t rows = mxw_tensor_size(gy) / nh;
  gemm_plan gw = {
      .trans_a = 1, .trans_b = 0, .batch = 1, .M = nh, .N = in_dim, .K = rows, .lda = nh, .ldb = in_dim, .ldc = in_dim};
  MXW_TRY(run_gemm(&gw, gy, x, dw, 0));
  if (!db) return 0;
  if (gy->dtype == MXW_FLOAT32) {
    const float *g = (const float *)gy->data;
    float *b = (float *)db->data;
    for (int64_t j = 0; j < nh; j++) b[j] = 0.f;
    for (int64_t r = 0; r < rows; r++)
      for (int64_t j = 0; j < nh; j++) b[j] += g[r * nh + j];
    return 0;
  }
  double *acc = (double *)calloc((size_t)(nh > 0 ? nh : 1), sizeof(double));
  MXW_CHECK(acc != NULL, "out of memory");
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < nh; j++) acc[j] += mxw_load_f64(gy->data, gy->dtype, r * nh + j);
  mxw_convert(acc, MXW_FLOAT64, db->data, db->dtype, nh);
  free(acc);
  return 0;
}

static int fc_backward(const mxw_op_call *c) {
  const FCParam *p = (const FCParam *)c->param;
  const mxw_tensor *gy = &c->inputs[0], *x = &c->inputs[1], *w = &c->inputs[2];
  mxw_tensor *dx = &c->outputs[0];
  const int64_t nh = p->num_hidden, in_dim = w->shape.dims[1];
  const int64_t rows = mxw_tensor_size(gy) / nh;
  /* dX (rows, in) = G (rows, nh) W (nh, in) */
  gemm_plan gx = {
      .trans_a = 0, .trans_b = 0, .batch = 1, .M = rows, .N = in_dim, .K = nh, .lda = nh, .ldb = in_dim, .ldc = in_dim};
  MXW_TRY(run_gemm(&gx, gy, w, dx, 0));
  return fc_weight_grads(gy, x, &c->outputs[1], c->num_outputs > 2 ? &c->outputs[2] : NULL);
}

/* _backward_FullyConnected_weight(ograd, data) -> (d weight[, d bias]): the weight half of
 * _backward_FullyConnected. The gradient below builds the data gradient as its own node (a dot of
 * the output gradient with the weight), as Convolution's does, so that it is left out when the
 * data needs none (a network's first layer): the product a training step would throw away. */
static int fc_wgrad_num_outputs(const void *param) { return ((const FCParam *)param)->no_bias ? 1 : 2; }
static const char *const k_fc_wgrad_inputs[] = {"ograd", "data", NULL};
static const char *const k_fc_wgrad_outputs[] = {"weight_grad", "bias_grad", NULL};

static int fc_wgrad_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const FCParam *p = (const FCParam *)param;
  (void)nin;
  const mxw_shape *x = &in[1];
  if (x->ndim < 1) return 0;
  const int64_t in_dim = p->flatten ? dims_prod(x, 1, x->ndim) : x->dims[x->ndim - 1];
  if (in_dim < 0) return 0;
  mxw_shape w = mxw_shape_make(2, (const int64_t[]){p->num_hidden, in_dim});
  MXW_TRY(mxw_shape_assign(&out[0], &w, "weight gradient"));
  if (nout > 1) {
    mxw_shape b = mxw_shape_make(1, (const int64_t[]){p->num_hidden});
    MXW_TRY(mxw_shape_assign(&out[1], &b, "bias gradient"));
  }
  return 0;
}

static int fc_wgrad(const mxw_op_call *c) {
  return fc_weight_grads(&c->inputs[0], &c->inputs[1], &c->outputs[0], c->num_outputs > 1 ? &c->outputs[1] : NULL);
}

/* d data = G W (G the output gradient, W a weight): dot contracts G's last axis (num_hidden) with
 * W's first, giving (..., in) = the data's shape when flatten=False, (batch, d1*...*dk) when it
 * flattened, then reshaped to the data's shape xs. */
static mxw_gid fc_data_grad(mxw_grad_ctx *g, const FCParam *p, const mxw_shape *xs, mxw_gid G, mxw_gid W) {
  mxw_gid dx = mxw_grad_op(g, "dot", NULL, MXW_GIDS(G, W));
  if (p->flatten && xs->ndim != 2) {
    char shape[MXW_MAX_NDIM * 24 + 8];
    mxw_shape_attr(xs, shape, sizeof shape);
    dx = mxw_grad_op(g, "Reshape", MXW_KV("shape", shape), MXW_GIDS(dx));
  }
  return dx;
}

static int fc_gradient(mxw_grad_ctx *g) {
  const FCParam *p = (const FCParam *)mxw_grad_param(g);
  MXW_TRY(mxw_grad_set(g, 0, fc_data_grad(g, p, mxw_grad_in_shape(g, 0), mxw_grad_ograd(g, 0), mxw_grad_in(g, 1))));
  mxw_gid d[2];
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_FullyConnected_weight", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0)), d,
                          p->no_bias ? 1 : 2));
  MXW_TRY(mxw_grad_set(g, 1, d[0]));
  if (p->no_bias) return 0;
  const mxw_shape *bs = mxw_grad_in_shape(g, 2);
  if (bs->ndim == 2) { /* a (num_hidden, 1) bias */
    char shape[64];
    snprintf(shape, sizeof shape, "(%lld, 1)", (long long)p->num_hidden);
    d[1] = mxw_grad_op(g, "Reshape", MXW_KV("shape", shape), MXW_GIDS(d[1]));
  }
  return mxw_grad_set(g, 2, d[1]);
}

/* Second order (autograd.grad with create_graph). dW = G^T X and db = column sums of G are bilinear
 * in (G, X): with incoming gradients hW, hb, <hW, dW> + <hb, db> = <G, X hW^T + hb>, so
 * d/dG = FullyConnected(X, hW, hb) (the node's own attributes) and d/dX = G hW, the data gradient
 * of a FullyConnected of weight hW. */
static int fc_wgrad_gradient(mxw_grad_ctx *g) {
  const FCParam *p = (const FCParam *)mxw_grad_param(g);
  const mxw_gid G = mxw_grad_in(g, 0), X = mxw_grad_in(g, 1), hW = mxw_grad_ograd(g, 0);
  mxw_gid dG = -1;
  if (p->no_bias)
    MXW_TRY(mxw_grad_op_fwd(g, "FullyConnected", MXW_GIDS(X, hW), &dG, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, "FullyConnected", MXW_GIDS(X, hW, mxw_grad_ograd(g, 1)), &dG, 1));
  MXW_TRY(mxw_grad_set(g, 0, dG));
  return mxw_grad_set(g, 1, fc_data_grad(g, p, mxw_grad_in_shape(g, 1), G, hW));
}

/* _backward_FullyConnected(G, X, W) = (G W, G^T X, colsum G): with incoming gradients hX, hW, hb,
 * d/dG = hX W^T + X hW^T + hb (two FullyConnected), d/dX = G hW, d/dW = G^T hX (the weight
 * gradient of the same layer for data hX). */
static int fc_backward_gradient(mxw_grad_ctx *g) {
  const FCParam *p = (const FCParam *)mxw_grad_param(g);
  const mxw_gid G = mxw_grad_in(g, 0), X = mxw_grad_in(g, 1), W = mxw_grad_in(g, 2);
  const mxw_gid hX = mxw_grad_ograd(g, 0), hW = mxw_grad_ograd(g, 1);
  char nh[32];
  snprintf(nh, sizeof nh, "%lld", (long long)p->num_hidden);
  const char *const *kv = MXW_KV("num_hidden", nh, "no_bias", "True", "flatten", p->flatten ? "True" : "False");
  const mxw_gid t1 = mxw_grad_op(g, "FullyConnected", kv, MXW_GIDS(hX, W));
  mxw_gid t2 = -1, dW[2] = {-1, -1};
  if (p->no_bias)
    MXW_TRY(mxw_grad_op_fwd(g, "FullyConnected", MXW_GIDS(X, hW), &t2, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, "FullyConnected", MXW_GIDS(X, hW, mxw_grad_ograd(g, 2)), &t2, 1));
  MXW_TRY(mxw_grad_set(g, 0, mxw_grad_op(g, "elemwise_add", NULL, MXW_GIDS(t1, t2))));
  MXW_TRY(mxw_grad_set(g, 1, fc_data_grad(g, p, mxw_grad_in_shape(g, 1), G, hW)));
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_FullyConnected_weight", MXW_GIDS(G, hX), dW, p->no_bias ? 1 : 2));
  return mxw_grad_set(g, 2, dW[0]);
}

static const mxw_op_def op_FullyConnected = {
    .name = "FullyConnected",
    .aliases = ALIASES("_npx_fully_connected", "_sparse_FullyConnected"),
    .doc = MXW_DOC("Y = X * W^T + b, with X the data viewed as (batch, input size) (flatten) or (..., input size)"),
    .attrs = k_fc_attrs,
    .num_attrs = 3,
    .param_size = sizeof(FCParam),
    .validate = fc_validate,
    .num_inputs = 3,
    .input_names = k_fc_inputs,
    .num_inputs_fn = fc_num_inputs,
    .num_outputs = 1,
    .infer_shape = fc_infer_shape,
    .infer_type = infer_type_float,
    .forward = fc_forward,
    .fusable_act = 1,
    .gradient = fc_gradient,
};

static const mxw_op_def op_backward_FullyConnected = {
    .name = "_backward_FullyConnected",
    .doc =
        MXW_DOC("the gradients of FullyConnected from (ograd, data, weight): data, weight and (unless no_bias) bias"),
    .attrs = k_fc_attrs,
    .num_attrs = 3,
    .param_size = sizeof(FCParam),
    .validate = fc_validate,
    .num_inputs = 3,
    .input_names = k_fc_backward_inputs,
    .num_outputs = 3,
    .num_outputs_fn = fc_backward_num_outputs,
    .infer_shape = fc_backward_infer_shape,
    .infer_type = infer_type_float,
    .forward = fc_backward,
    .gradient = fc_backward_gradient,
};

static const mxw_op_def op_backward_FullyConnected_weight = {
    .name = "_backward_FullyConnected_weight",
    .doc = MXW_DOC("internal: the weight and bias gradients of FullyConnected from its output gradient and data "
                   "(the weight/bias half of _backward_FullyConnected)"),
    .attrs = k_fc_attrs,
    .num_attrs = 3,
    .param_size = sizeof(FCParam),
    .validate = fc_validate,
    .num_inputs = 2,
    .input_names = k_fc_wgrad_inputs,
    .num_outputs = 2,
    .num_outputs_fn = fc_wgrad_num_outputs,
    .output_names = k_fc_wgrad_outputs,
    .infer_shape = fc_wgrad_infer_shape,
    .infer_type = infer_type_float,
    .forward = fc_wgrad,
    .gradient = fc_wgrad_gradient,
};

/* ---- dot and batch_dot ------------------------------------------------------------------------- */
typedef struct {
  int transpose_a, transpose_b;
  mxw_opt_int forward_stype; /* accepted for compatibility; everything here is dense */
} DotParam;

static const char *const k_stypes[] = {"default", "row_sparse", "csr", NULL};
static const mxw_attr_spec k_dot_attrs[] = {
    MXW_A_BOOL("transpose_a", DotParam, transpose_a, "False", "use lhs transposed"),
    MXW_A_BOOL("transpose_b", DotParam, transpose_b, "False", "use rhs transposed"),
    MXW_A_OPT_ENUM("forward_stype", DotParam, forward_stype, "None", k_stypes,
                   "output storage type (ignored: outputs are dense)"),
};
static const char *const k_dot_inputs[] = {"lhs", "rhs", NULL};

/* dot: lhs as 2-D (prod(l[:-1]), l[-1]) -- or with transpose_a (l[0], prod(l[1:])) transposed --
 * times rhs as (r[0], prod(r[1:])) -- or with transpose_b (prod(r[:-1]), r[-1]) transposed.
 * Output: lhs's free dims then rhs's free dims (a 1-D operand has none). 1-D . 1-D -> (1,). */
/* The operands' shapes as text (a, b), formatted only when an error needs them. */
#define SHAPES_AB                  \
  char a[128], b[128];             \
  mxw_shape_str(&l0, a, sizeof a); \
  mxw_shape_str(&r0, b, sizeof b)
static int dot_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const DotParam *p = (const DotParam *)param;
  mxw_shape *l = &in[0], *r = &in[1];
  if (l->ndim < 0 || r->ndim < 0) return 0;
  const mxw_shape l0 = *l, r0 = *r; /* the shapes as given, for the error texts */
  if (l->ndim == 0 || r->ndim == 0) {
    SHAPES_AB;
    return mxw_fail("lhs %s and rhs %s: 0-d operands are not supported", a, b);
  }
  const int ta = p->transpose_a, tb = p->transpose_b;
  if (l->ndim == 1 && r->ndim == 1 && (ta || tb)) {
    SHAPES_AB;
    return mxw_fail("lhs %s and rhs %s are vectors, which cannot be transposed", a, b);
  }

  /* the contracted dims */
  int64_t *kl = ta ? &l->dims[0] : &l->dims[l->ndim - 1];
  int64_t *kr = tb ? &r->dims[r->ndim - 1] : &r->dims[0];
  if (*kl >= 0 && *kr >= 0 && *kl != *kr) {
    SHAPES_AB;
    return mxw_fail(
        "shape mismatch: lhs %s and rhs %s (transpose_a=%d, transpose_b=%d): contracted sizes %lld and "
        "%lld differ",
        a, b, ta, tb, (long long)*kl, (long long)*kr);
  }
  if (*kl < 0) *kl = *kr;
  if (*kr < 0) *kr = *kl;

  mxw_shape o;
  memset(&o, 0, sizeof o);
  if (l->ndim == 1 && r->ndim == 1) {
    o.ndim = 1;
    o.dims[0] = 1;
  } else {
    if (l->ndim + r->ndim - 2 > MXW_MAX_NDIM) {
      SHAPES_AB;
      return mxw_fail("lhs %s and rhs %s: the output would have more than %d dimensions", a, b, MXW_MAX_NDIM);
    }
    if (l->ndim > 1)
      for (int i = ta ? 1 : 0; i < (ta ? l->ndim : l->ndim - 1); i++) o.dims[o.ndim++] = l->dims[i];
    if (r->ndim > 1)
      for (int i = tb ? 0 : 1; i < (tb ? r->ndim - 1 : r->ndim); i++) o.dims[o.ndim++] = r->dims[i];
  }
  return mxw_shape_unify(&out[0], &o, "output", "");
}

static int dot_forward(const mxw_op_call *c) {
  const DotParam *p = (const DotParam *)c->param;
  const mxw_tensor *l = &c->inputs[0], *r = &c->inputs[1];
  const mxw_shape *ls = &l->shape, *rs = &r->shape;
  gemm_plan g;
  memset(&g, 0, sizeof g);
  g.batch = 1;
  if (ls->ndim == 1 && rs->ndim == 1) { /* inner product as (1, K) * (1, K)^T */
    g.trans_b = 1;
    g.M = g.N = 1;
    g.K = g.lda = g.ldb = ls->dims[0];
    g.ldc = 1;
    return run_gemm(&g, l, r, &c->outputs[0], 0);
  }
  /* the 2-D views (ma, na) of lhs and (mb, nb) of rhs, as stored */
  int64_t ma, na, mb, nb;
  if (p->transpose_a) {
    ma = ls->dims[0];
    na = dims_prod(ls, 1, ls->ndim);
  } else {
    na = ls->dims[ls->ndim - 1];
    ma = dims_prod(ls, 0, ls->ndim - 1);
  }
  if (p->transpose_b) {
    nb = rs->dims[rs->ndim - 1];
    mb = dims_prod(rs, 0, rs->ndim - 1);
  } else {
    mb = rs->dims[0];
    nb = dims_prod(rs, 1, rs->ndim);
  }
  g.trans_a = p->transpose_a;
  g.trans_b = p->transpose_b;
  g.M = p->transpose_a ? na : ma;
  g.K = p->transpose_a ? ma : na;
  g.N = p->transpose_b ? mb : nb;
  g.lda = na;
  g.ldb = nb;
  g.ldc = g.N;
  return run_gemm(&g, l, r, &c->outputs[0], 0);
}

/* batch_dot: lhs (..., M, K) or (..., K, M) with transpose_a; rhs (..., K, N) or (..., N, K) with
 * transpose_b; the same rank >= 3 and the same leading dims. Output (..., M, N). */
static int batch_dot_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const DotParam *p = (const DotParam *)param;
  mxw_shape *l = &in[0], *r = &in[1];
  if (l->ndim < 0 || r->ndim < 0) return 0;
  const mxw_shape l0 = *l, r0 = *r; /* the shapes as given, for the error texts */
  const int nd = l->ndim;
  if (nd != r->ndim || nd < 3) {
    SHAPES_AB;
    return mxw_fail("lhs %s and rhs %s must have the same number of dimensions, at least 3", a, b);
  }
  for (int i = 0; i < nd - 2; i++) {
    if (l->dims[i] >= 0 && r->dims[i] >= 0 && l->dims[i] != r->dims[i]) {
      SHAPES_AB;
      return mxw_fail("shape mismatch: lhs %s and rhs %s have different batch dimensions", a, b);
    }
    if (l->dims[i] < 0) l->dims[i] = r->dims[i];
    if (r->dims[i] < 0) r->dims[i] = l->dims[i];
  }
  int64_t *kl = &l->dims[p->transpose_a ? nd - 2 : nd - 1];
  int64_t *kr = &r->dims[p->transpose_b ? nd - 1 : nd - 2];
  if (*kl >= 0 && *kr >= 0 && *kl != *kr) {
    SHAPES_AB;
    return mxw_fail(
        "shape mismatch: lhs %s and rhs %s (transpose_a=%d, transpose_b=%d): contracted sizes %lld and "
        "%lld differ",
        a, b, p->transpose_a, p->transpose_b, (long long)*kl, (long long)*kr);
  }
  if (*kl < 0) *kl = *kr;
  if (*kr < 0) *kr = *kl;
  mxw_shape o = *l;
  o.dims[nd - 2] = l->dims[p->transpose_a ? nd - 1 : nd - 2];
  o.dims[nd - 1] = r->dims[p->transpose_b ? nd - 2 : nd - 1];
  return mxw_shape_unify(&out[0], &o, "output", "");
}

static int batch_dot_forward(const mxw_op_call *c) {
  const DotParam *p = (const DotParam *)c->param;
  const mxw_shape *ls = &c->inputs[0].shape, *rs = &c->inputs[1].shape;
  const int nd = ls->ndim;
  gemm_plan g;
  memset(&g, 0, sizeof g);
  g.trans_a = p->transpose_a;
  g.trans_b = p->transpose_b;
  g.batch = dims_prod(ls, 0, nd - 2);
  g.M = ls->dims[p->transpose_a ? nd - 1 : nd - 2];
  g.K = ls->dims[p->transpose_a ? nd - 2 : nd - 1];
  g.N = rs->dims[p->transpose_b ? nd - 2 : nd - 1];
  g.lda = ls->dims[nd - 1];
  g.ldb = rs->dims[nd - 1];
  g.ldc = g.N;
  g.stride_a = ls->dims[nd - 2] * ls->dims[nd - 1];
  g.stride_b = rs->dims[nd - 2] * rs->dims[nd - 1];
  g.stride_c = g.M * g.N;
  return run_gemm(&g, &c->inputs[0], &c->inputs[1], &c->outputs[0], 0);
}

/* ---- gradients of dot and batch_dot ------------------------------------------------------------
 * With A stored (ra, ca), B stored (rb, cb) per batch item (the views the forward uses) and
 * C = op(A) op(B) of shape (M, N) over K:
 *   dA = dC op(B)^T, stored as A: (dC op(B)^T)^T = op(B) dC^T when A is transposed;
 *   dB = op(A)^T dC, stored as B: dC^T op(A) when B is transposed. */
typedef struct {
  int ta, tb;
  int64_t batch, ra, ca, rb, cb;
} prod_views;

static int prod_backward(const prod_views *v, const mxw_tensor *dc, const mxw_tensor *a, const mxw_tensor *b,
                         mxw_tensor *da, mxw_tensor *db) {
  const int64_t M = v->ta ? v->ca : v->ra, K = v->ta ? v->ra : v->ca, N = v->tb ? v->rb : v->cb;
  const int64_t sa = v->ra * v->ca, sb = v->rb * v->cb, sc = M * N;
  gemm_plan p;
  if (!v->ta) /* dA (M, K) = dC (M, N) op(B)^T (N, K) */
    p = (gemm_plan){.trans_a = 0,
                    .trans_b = !v->tb,
                    .batch = v->batch,
                    .M = M,
                    .N = K,
                    .K = N,
                    .lda = N,
                    .ldb = v->cb,
                    .ldc = v->ca,
                    .stride_a = sc,
                    .stride_b = sb,
                    .stride_c = sa};
  else /* dA stored (K, M) = op(B) (K, N) dC^T (N, M) */
    p = (gemm_plan){.trans_a = v->tb,
                    .trans_b = 1,
                    .batch = v->batch,
                    .M = K,
                    .N = M,
                    .K = N,
                    .lda = v->cb,
                    .ldb = N,
                    .ldc = v->ca,
                    .stride_a = sb,
                    .stride_b = sc,
                    .stride_c = sa};
  MXW_TRY(v->ta ? run_gemm(&p, b, dc, da, 0) : run_gemm(&p, dc, b, da, 0));
  if (!v->tb) /* dB (K, N) = op(A)^T (K, M) dC (M, N) */
    p = (gemm_plan){.trans_a = !v->ta,
                    .trans_b = 0,
                    .batch = v->batch,
                    .M = K,
                    .N = N,
                    .K = M,
                    .lda = v->ca,
                    .ldb = N,
                    .ldc = v->cb,
                    .stride_a = sa,
                    .stride_b = sc,
                    .stride_c = sb};
  else /* dB stored (N, K) = dC^T (N, M) op(A) (M, K) */
    p = (gemm_plan){.trans_a = 1,
                    .trans_b = v->ta,
                    .batch = v->batch,
                    .M = N,
                    .N = K,
                    .K = M,
                    .lda = N,
                    .ldb = v->ca,
                    .ldc = v->cb,
                    .stride_a = sc,
                    .stride_b = sa,
                    .stride_c = sb};
  return v->tb ? run_gemm(&p, dc, a, db, 0) : run_gemm(&p, a, dc, db, 0);
}

static const char *const k_dot_backward_inputs[] = {"ograd", "lhs", "rhs", NULL};
static int dot_backward_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  MXW_TRY(mxw_shape_assign(&out[0], &in[1], "lhs gradient"));
  return mxw_shape_assign(&out[1], &in[2], "rhs gradient");
}

/* dot's 2-D views: lhs (prod(l[:-1]), l[-1]) or with transpose_a (l[0], prod(l[1:])); rhs
 * (r[0], prod(r[1:])) or with transpose_b (prod(r[:-1]), r[-1]). Vectors are (1, n) / (n, 1). */
static int dot_backward(const mxw_op_call *c) {
  const DotParam *p = (const DotParam *)c->param;
  const mxw_shape *ls = &c->inputs[1].shape, *rs = &c->inputs[2].shape;
  prod_views v = {.ta = p->transpose_a, .tb = p->transpose_b, .batch = 1};
  if (p->transpose_a) {
    v.ra = ls->dims[0];
    v.ca = dims_prod(ls, 1, ls->ndim);
  } else {
    v.ra = dims_prod(ls, 0, ls->ndim - 1);
    v.ca = ls->dims[ls->ndim - 1];
  }
  if (p->transpose_b) {
    v.rb = dims_prod(rs, 0, rs->ndim - 1);
    v.cb = rs->dims[rs->ndim - 1];
  } else {
    v.rb = rs->dims[0];
    v.cb = dims_prod(rs, 1, rs->ndim);
  }
  return prod_backward(&v, &c->inputs[0], &c->inputs[1], &c->inputs[2], &c->outputs[0], &c->outputs[1]);
}

static int batch_dot_backward(const mxw_op_call *c) {
  const DotParam *p = (const DotParam *)c->param;
  const mxw_shape *ls = &c->inputs[1].shape, *rs = &c->inputs[2].shape;
  const int nd = ls->ndim;
  prod_views v = {.ta = p->transpose_a,
                  .tb = p->transpose_b,
                  .batch = dims_prod(ls, 0, nd - 2),
                  .ra = ls->dims[nd - 2],
                  .ca = ls->dims[nd - 1],
                  .rb = rs->dims[nd - 2],
                  .cb = rs->dims[nd - 1]};
  return prod_backward(&v, &c->inputs[0], &c->inputs[1], &c->inputs[2], &c->outputs[0], &c->outputs[1]);
}

static int grad_prod_with(mxw_grad_ctx *g, const char *op) {
  mxw_gid d[2];
  MXW_TRY(mxw_grad_op_fwd(g, op, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1)), d, 2));
  MXW_TRY(mxw_grad_set(g, 0, d[0]));
  return mxw_grad_set(g, 1, d[1]);
}
static int dot_gradient(mxw_grad_ctx *g) { return grad_prod_with(g, "_backward_dot"); }
static int batch_dot_gradient(mxw_grad_ctx *g) { return grad_prod_with(g, "_backward_batch_dot"); }

/* Second order (autograd.grad with create_graph). _backward_dot(dC, A, B) = (dA, dB) is bilinear:
 * with the incoming gradients hA, hB, <hA, dA> = <dC, op(hA) op(B)> and <hB, dB> = <dC, op(A) op(hB)>,
 * so d/d dC = dot(hA, B) + dot(A, hB), d/dA = _backward_dot(dC, A, hB)'s dA and d/dB =
 * _backward_dot(dC, hA, B)'s dB, all with the node's transpose flags (batch_dot alike). */
static int grad2_prod_with(mxw_grad_ctx *g, const char *prod, const char *backward) {
  const mxw_gid ha = mxw_grad_ograd(g, 0), hb = mxw_grad_ograd(g, 1);
  const mxw_gid dc = mxw_grad_in(g, 0), a = mxw_grad_in(g, 1), b = mxw_grad_in(g, 2);
  mxw_gid t1, t2, da[2], db[2];
  MXW_TRY(mxw_grad_op_fwd(g, prod, MXW_GIDS(ha, b), &t1, 1));
  MXW_TRY(mxw_grad_op_fwd(g, prod, MXW_GIDS(a, hb), &t2, 1));
  MXW_TRY(mxw_grad_set(g, 0, mxw_grad_op(g, "elemwise_add", NULL, MXW_GIDS(t1, t2))));
  MXW_TRY(mxw_grad_op_fwd(g, backward, MXW_GIDS(dc, a, hb), da, 2));
  MXW_TRY(mxw_grad_op_fwd(g, backward, MXW_GIDS(dc, ha, b), db, 2));
  MXW_TRY(mxw_grad_set(g, 1, da[0]));
  return mxw_grad_set(g, 2, db[1]);
}
static int dot_gradient2(mxw_grad_ctx *g) { return grad2_prod_with(g, "dot", "_backward_dot"); }
static int batch_dot_gradient2(mxw_grad_ctx *g) { return grad2_prod_with(g, "batch_dot", "_backward_batch_dot"); }

static const mxw_op_def op_dot = {
    .name = "dot",
    .aliases = ALIASES("_sparse_dot"),
    .doc = MXW_DOC("matrix product of lhs and rhs viewed as 2-D (or the inner product of two vectors)"),
    .attrs = k_dot_attrs,
    .num_attrs = 3,
    .param_size = sizeof(DotParam),
    .num_inputs = 2,
    .input_names = k_dot_inputs,
    .num_outputs = 1,
    .infer_shape = dot_infer_shape,
    .infer_type = infer_type_float,
    .forward = dot_forward,
    .gradient = dot_gradient,
};

static const mxw_op_def op_batch_dot = {
    .name = "batch_dot",
    .aliases = ALIASES("_npx_batch_dot"),
    .doc = MXW_DOC("matrix products of the last two axes, batched over the leading axes"),
    .attrs = k_dot_attrs,
    .num_attrs = 3,
    .param_size = sizeof(DotParam),
    .num_inputs = 2,
    .input_names = k_dot_inputs,
    .num_outputs = 1,
    .infer_shape = batch_dot_infer_shape,
    .infer_type = infer_type_float,
    .forward = batch_dot_forward,
    .gradient = batch_dot_gradient,
};

#define PROD_BACKWARD_OP(VAR, NAME, FWD, DOC, GRAD2)                      \
  static const mxw_op_def VAR = {.name = NAME,                            \
                                 .doc = MXW_DOC(DOC),                     \
                                 .attrs = k_dot_attrs,                    \
                                 .num_attrs = 3,                          \
                                 .param_size = sizeof(DotParam),          \
                                 .num_inputs = 3,                         \
                                 .input_names = k_dot_backward_inputs,    \
                                 .num_outputs = 2,                        \
                                 .infer_shape = dot_backward_infer_shape, \
                                 .infer_type = infer_type_float,          \
                                 .forward = FWD,                          \
                                 .gradient = GRAD2};
PROD_BACKWARD_OP(op_backward_dot, "_backward_dot", dot_backward, "the gradients of dot from (ograd, lhs, rhs)",
                 dot_gradient2)
PROD_BACKWARD_OP(op_backward_batch_dot, "_backward_batch_dot", batch_dot_backward,
                 "the gradients of batch_dot from (ograd, lhs, rhs)", batch_dot_gradient2)

MXW_FAMILY(linalg, &op_FullyConnected, &op_dot, &op_batch_dot, &op_backward_FullyConnected,
           &op_backward_FullyConnected_weight, &op_backward_dot, &op_backward_batch_dot);
