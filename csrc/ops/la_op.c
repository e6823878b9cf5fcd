/* la_op.c -- MXNet 1.9.1's linear-algebra operators (src/operator/tensor/la_op.h, la_op.cc,
 * la_op-inl.h), the ones Python reaches as mx.nd.linalg.* / F.linalg.*:
 *   _linalg_gemm  (A, B, C): alpha op(A) op(B) + beta C    _linalg_gemm2 (A, B): alpha op(A) op(B)
 *   _linalg_syrk  (A): alpha A A^T (A^T A with transpose)   _linalg_potrf (A): the Cholesky factor
 *   _linalg_inverse, _linalg_det, _linalg_slogdet (sign, logabsdet), _linalg_sumlogdiag,
 *   _linalg_extractdiag / _linalg_makediag (offset), _linalg_extracttrian / _linalg_maketrian
 *   (a triangle packed as a vector), _linalg_potri (the inverse from a Cholesky factor),
 *   _linalg_trmm / _linalg_trsm (triangular product and solve).
 * Every op works on the last two axes as a batch of matrices (gemm / gemm2: `axis` names the rows'
 * axis, the columns are the last). float32 and float64 (float16 through float32).
 *
 * Numerics: the products run through the package's GEMM (mxw_sgemm / mxw_dgemm) when the rows are
 * the second-to-last axis, else through a strided loop in double; the factorizations (Cholesky,
 * LU with partial pivoting as LAPACK's getrf) compute in double and store in the dtype. As MXNet,
 * det and slogdet keep the LU factors and the (1-based) pivots as hidden outputs. A matrix that is
 * not positive definite (potrf) or singular (inverse) is an error naming its index in the batch;
 * det of a singular matrix is 0 and slogdet's (0, -inf).
 *
 * Gradients (la_op-inl.h's *_backward), built from these ops where MXNet's are products -- so they
 * differentiate again:
 *   gemm2 / gemm: dA, dB = gemm2 of the head gradient with the other operand (transposes kept),
 *                 dC = beta G;
 *   syrk:         dA = alpha (G + G^T) A  (A (G + G^T) with transpose);
 *   inverse:      dA = -Y^T G Y^T, Y = A^-1;   det: dA = G det Y^T;   slogdet: dA = G_logabsdet Y^T;
 *   sumlogdiag:   dA = makediag(G / diag(A));   extractdiag <-> makediag are each other's gradient;
 *   extracttrian <-> maketrian likewise; potri: dL = -tril(A (G + G^T) L^-T) (gemm2, trsm, the
 *                 triangle ops);
 *   potrf:        _backward_linalg_potrf(dL, L) = 0.5 L^-T copyLTU(L^T dL) L^-1 (symmetric, as
 *                 MXNet: a symmetric perturbation of A), with no gradient of its own;
 *   trmm / trsm:  their own backward kernels (below), without gradients of their own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mxw_core.h"
#include "../kernels/gemm.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
typedef char shape_buf[160];

static const char *const k_A[] = {"A", NULL};
static const char *const k_AB[] = {"A", "B", NULL};
static const char *const k_ABC[] = {"A", "B", "C", NULL};

static int shape_known(const mxw_shape *s) {
  if (s->ndim < 0) return 0;
  for (int i = 0; i < s->ndim; i++)
    if (s->dims[i] < 0) return 0;
  return 1;
}
static int64_t batch_of(const mxw_shape *s, int drop) {
  int64_t b = 1;
  for (int i = 0; i < s->ndim - drop; i++) b *= s->dims[i];
  return b;
}
static int float_dtype(const mxw_tensor *t, const char *what) {
  MXW_CHECK(t->dtype == MXW_FLOAT32 || t->dtype == MXW_FLOAT64, "%s must be float32 or float64, got %s", what,
            mxw_dtype_name(t->dtype));
  return 0;
}
/* Strings of the attributes the gradients pass on. */
static void fmt_double(char *buf, size_t n, double v) { snprintf(buf, n, "%.17g", v); }

/* ==== gemm / gemm2 ============================================================================== */
typedef struct {
  int transpose_a, transpose_b;
  double alpha, beta;
  int64_t axis;
} MacParam;

static const mxw_attr_spec k_gemm_attrs[] = {
    MXW_A_BOOL("transpose_a", MacParam, transpose_a, "False", "multiply with the transpose of A"),
    MXW_A_BOOL("transpose_b", MacParam, transpose_b, "False", "multiply with the transpose of B"),
    MXW_A_FLOAT("alpha", MacParam, alpha, "1", "scalar factor of A B"),
    MXW_A_FLOAT("beta", MacParam, beta, "1", "scalar factor of C"),
    MXW_A_INT("axis", MacParam, axis, "-2", "the axis of the matrix rows (the columns are the last axis)"),
};
/* gemm2's table: the same struct without beta (its default stays 1, unused) */
static const mxw_attr_spec k_gemm2_attrs[] = {
    MXW_A_BOOL("transpose_a", MacParam, transpose_a, "False", "multiply with the transpose of A"),
    MXW_A_BOOL("transpose_b", MacParam, transpose_b, "False", "multiply with the transpose of B"),
    MXW_A_FLOAT("alpha", MacParam, alpha, "1", "scalar factor of A B"),
    MXW_A_INT("axis", MacParam, axis, "-2", "the axis of the matrix rows (the columns are the last axis)"),
};

/* The row axis of an ndim-D operand, checked (la_op.h: 0 <= axis < ndim - 1). */
static int row_axis(const MacParam *p, int ndim, int *ax) {
  const int64_t a = p->axis < 0 ? ndim + p->axis : p->axis;
  MXW_CHECK(a >= 0 && a < ndim - 1, "invalid row axis %lld for %d-D operands", (long long)p->axis, ndim);
  *ax = (int)a;
  return 0;
}

static int infer_gemm(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const MacParam *p = (const MacParam *)param;
  (void)nout;
  if (!shape_known(&in[0]) || !shape_known(&in[1])) return 0;
  shape_buf a, b;
  const int nd = in[0].ndim;
  MXW_CHECK(nd >= 2 && in[1].ndim == nd, "A %s and B %s must be matrices (or batches of them) of the same rank",
            SHAPE_STR(&in[0], a), SHAPE_STR(&in[1], b));
  int ax;
  MXW_TRY(row_axis(p, nd, &ax));
  mxw_shape o = in[0];
  for (int i = 0; i < nd - 1; i++)
    MXW_CHECK(i == ax || in[0].dims[i] == in[1].dims[i],
              "A %s and B %s must have the same shape except on the row and column axes", SHAPE_STR(&in[0], a),
              SHAPE_STR(&in[1], b));
  const int64_t ka = p->transpose_a ? in[0].dims[ax] : in[0].dims[nd - 1];
  const int64_t kb = p->transpose_b ? in[1].dims[nd - 1] : in[1].dims[ax];
  MXW_CHECK(ka == kb, "incompatible matrix dimensions for multiplication: A %s%s, B %s%s", SHAPE_STR(&in[0], a),
            p->transpose_a ? " (transposed)" : "", SHAPE_STR(&in[1], b), p->transpose_b ? " (transposed)" : "");
  o.dims[ax] = p->transpose_a ? in[0].dims[nd - 1] : in[0].dims[ax];
  o.dims[nd - 1] = p->transpose_b ? in[1].dims[ax] : in[1].dims[nd - 1];
  MXW_TRY(mxw_shape_assign(&out[0], &o, "output"));
  if (nin > 2) MXW_TRY(mxw_shape_assign(&in[2], &o, "C"));
  return 0;
}

/* Element (r, c) of matrix `b` of an operand whose rows are axis `ax`: offsets by strides. */
typedef struct {
  int nd, ax;
  int64_t dims[MXW_MAX_NDIM], strides[MXW_MAX_NDIM];
} mat_layout;
static void make_layout(const mxw_shape *s, int ax, mat_layout *l) {
  memset(l, 0, sizeof *l);
  l->nd = s->ndim;
  l->ax = ax;
  int64_t st = 1;
  for (int i = s->ndim - 1; i >= 0; i--) {
    l->dims[i] = s->dims[i];
    l->strides[i] = st;
    st *= s->dims[i];
  }
}
/* Offset of batch item b (the dims other than ax and the last, in order). */
static int64_t batch_offset(const mat_layout *l, int64_t b) {
  int64_t off = 0;
  for (int i = (l->nd < MXW_MAX_NDIM ? l->nd : MXW_MAX_NDIM) - 2; i >= 0; i--) {
    if (i == l->ax) continue;
    const int64_t d = l->dims[i] > 0 ? l->dims[i] : 1; /* (an empty batch has no items to place) */
    off += (b % d) * l->strides[i];
    b /= d;
  }
  return off;
}

/* out = alpha op(A) op(B) (+ beta C) over the batch. */
static int gemm_run(const mxw_op_call *c, const MacParam *p, int with_c) {
  const mxw_tensor *A = &c->inputs[0], *B = &c->inputs[1];
  mxw_tensor *O = &c->outputs[0];
  MXW_TRY(float_dtype(A, "A"));
  const int nd = A->shape.ndim;
  int ax;
  MXW_TRY(row_axis(p, nd, &ax));
  const int64_t M = O->shape.dims[ax], N = O->shape.dims[nd - 1];
  const int64_t K = p->transpose_a ? A->shape.dims[ax] : A->shape.dims[nd - 1];
  const double beta = with_c ? p->beta : 0.0;
  const size_t es = (size_t)mxw_dtype_size(O->dtype);
  if (with_c)
    memcpy(O->data, c->inputs[2].data, (size_t)mxw_tensor_size(O) * es);
  else
    memset(O->data, 0, (size_t)mxw_tensor_size(O) * es);
  int64_t batch = 1;
  for (int i = 0; i < nd - 1; i++)
    if (i != ax) batch *= A->shape.dims[i];
  if (ax == nd - 2) { /* contiguous matrices: the GEMM */
    const int64_t sa = A->shape.dims[nd - 2] * A->shape.dims[nd - 1],
                  sb = B->shape.dims[nd - 2] * B->shape.dims[nd - 1];
    const int64_t lda = A->shape.dims[nd - 1], ldb = B->shape.dims[nd - 1];
    for (int64_t b = 0; b < batch; b++) {
      int rc;
      if (O->dtype == MXW_FLOAT32)
        rc = mxw_sgemm(p->transpose_a, p->transpose_b, M, N, K, (float)p->alpha, (const float *)A->data + b * sa, lda,
                       (const float *)B->data + b * sb, ldb, (float)beta, (float *)O->data + b * M * N, N);
      else
        rc = mxw_dgemm(p->transpose_a, p->transpose_b, M, N, K, p->alpha, (const double *)A->data + b * sa, lda,
                       (const double *)B->data + b * sb, ldb, beta, (double *)O->data + b * M * N, N);
      if (rc != 0) return -1;
    }
    return 0;
  }
  /* rows on another axis: strided, in double */
  mat_layout la, lb, lo;
  make_layout(&A->shape, ax, &la);
  make_layout(&B->shape, ax, &lb);
  make_layout(&O->shape, ax, &lo);
  const int64_t ra = la.strides[ax], rb = lb.strides[ax], ro = lo.strides[ax];
  for (int64_t b = 0; b < batch; b++) {
    const int64_t oa = batch_offset(&la, b), ob = batch_offset(&lb, b), oo = batch_offset(&lo, b);
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double s = 0.0;
        for (int64_t k = 0; k < K; k++) {
          const int64_t ia = p->transpose_a ? oa + k * ra + i : oa + i * ra + k;
          const int64_t ib = p->transpose_b ? ob + j * rb + k : ob + k * rb + j;
          s += mxw_load_f64(A->data, A->dtype, ia) * mxw_load_f64(B->data, B->dtype, ib);
        }
        const int64_t io = oo + i * ro + j;
        mxw_store_f64(O->data, O->dtype, io, p->alpha * s + beta * mxw_load_f64(O->data, O->dtype, io));
      }
  }
  return 0;
}
static int fwd_gemm(const mxw_op_call *c) { return gemm_run(c, (const MacParam *)c->param, 1); }
static int fwd_gemm2(const mxw_op_call *c) { return gemm_run(c, (const MacParam *)c->param, 0); }

/* la_op-inl.h's gemm2_backward, as gemm2 nodes: dA = tA ? alpha op(B) G^T : alpha G op(B)^T,
 * dB = tB ? alpha G^T op(A) : alpha op(A)^T G. */
static mxw_gid gemm2_node(mxw_grad_ctx *g, mxw_gid a, mxw_gid b, int ta, int tb, double alpha, int64_t axis) {
  char al[40], axs[24];
  fmt_double(al, sizeof al, alpha);
  snprintf(axs, sizeof axs, "%lld", (long long)axis);
  return mxw_grad_op(
      g, "_linalg_gemm2",
      MXW_KV("transpose_a", ta ? "True" : "False", "transpose_b", tb ? "True" : "False", "alpha", al, "axis", axs),
      MXW_GIDS(a, b));
}
static int grad_gemm_common(mxw_grad_ctx *g, int with_c) {
  const MacParam *p = (const MacParam *)mxw_grad_param(g);
  const mxw_gid G = mxw_grad_ograd(g, 0), A = mxw_grad_in(g, 0), B = mxw_grad_in(g, 1);
  const int tA = p->transpose_a, tB = p->transpose_b;
  const mxw_gid dA =
      tA ? gemm2_node(g, B, G, tB, 1, p->alpha, p->axis) : gemm2_node(g, G, B, 0, !tB, p->alpha, p->axis);
  const mxw_gid dB =
      tB ? gemm2_node(g, G, A, 1, tA, p->alpha, p->axis) : gemm2_node(g, A, G, !tA, 0, p->alpha, p->axis);
  MXW_TRY(mxw_grad_set(g, 0, dA));
  MXW_TRY(mxw_grad_set(g, 1, dB));
  if (!with_c) return 0;
  char be[40];
  fmt_double(be, sizeof be, p->beta);
  return mxw_grad_set(g, 2, mxw_grad_op(g, "_mul_scalar", MXW_KV("scalar", be), MXW_GIDS(G)));
}
static int grad_gemm(mxw_grad_ctx *g) { return grad_gemm_common(g, 1); }
static int grad_gemm2(mxw_grad_ctx *g) { return grad_gemm_common(g, 0); }

static const mxw_op_def op_gemm = {
    .name = "_linalg_gemm",
    .aliases = ALIASES("linalg_gemm"),
    .doc = MXW_DOC("alpha op(A) op(B) + beta C over batches of matrices (op: optional transpose)"),
    .attrs = k_gemm_attrs,
    .num_attrs = 5,
    .param_size = sizeof(MacParam),
    .num_inputs = 3,
    .input_names = k_ABC,
    .num_outputs = 1,
    .infer_shape = infer_gemm,
    .half_as_f32 = 1,
    .forward = fwd_gemm,
    .gradient = grad_gemm,
};
static const mxw_op_def op_gemm2 = {
    .name = "_linalg_gemm2",
    .aliases = ALIASES("linalg_gemm2"),
    .doc = MXW_DOC("alpha op(A) op(B) over batches of matrices (op: optional transpose)"),
    .attrs = k_gemm2_attrs,
    .num_attrs = 4,
    .param_size = sizeof(MacParam),
    .num_inputs = 2,
    .input_names = k_AB,
    .num_outputs = 1,
    .infer_shape = infer_gemm,
    .half_as_f32 = 1,
    .forward = fwd_gemm2,
    .gradient = grad_gemm2,
};

/* ==== square-matrix ops: shared helpers ========================================================== */
/* n of a batch of square matrices (last two axes), checked. */
static int square_n(const mxw_shape *s, int64_t *n) {
  shape_buf b;
  MXW_CHECK(s->ndim >= 2 && s->dims[s->ndim - 1] == s->dims[s->ndim - 2],
            "A must be a square matrix or a batch of them, got shape %s", SHAPE_STR(s, b));
  *n = s->dims[s->ndim - 1];
  return 0;
}
static int infer_same_square(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (!shape_known(&in[0])) return 0;
  int64_t n;
  MXW_TRY(square_n(&in[0], &n));
  return mxw_shape_assign(&out[0], &in[0], "output");
}
/* The batch shape of square matrices, (1,) for one matrix (la_op.h's LaReduceShape<2>). */
static mxw_shape reduce2_shape(const mxw_shape *s) {
  mxw_shape o;
  memset(&o, 0, sizeof o);
  for (int i = 0; i < s->ndim - 2; i++) o.dims[o.ndim++] = s->dims[i];
  if (o.ndim == 0) o.dims[o.ndim++] = 1;
  return o;
}

/* Matrix b of t into w (n x n doubles), and back. */
static void load_mat(const mxw_tensor *t, int64_t b, int64_t n, double *w) {
  for (int64_t i = 0; i < n * n; i++) w[i] = mxw_load_f64(t->data, t->dtype, b * n * n + i);
}
static void store_mat(mxw_tensor *t, int64_t b, int64_t n, const double *w) {
  for (int64_t i = 0; i < n * n; i++) mxw_store_f64(t->data, t->dtype, b * n * n + i, w[i]);
}

/* LU with partial pivoting in place (LAPACK getrf: P A = L U, unit L below the diagonal); piv[i] the
 * 0-based row swapped with row i. Returns the number of row swaps, or -1 for an exactly singular
 * matrix (a zero pivot; the factorization still completes as getrf's). */
static int lu_factor(double *a, int64_t n, int64_t *piv, int *singular) {
  int swaps = 0;
  *singular = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t p = k;
    double best = fabs(a[k * n + k]);
    for (int64_t i = k + 1; i < n; i++)
      if (fabs(a[i * n + k]) > best) {
        best = fabs(a[i * n + k]);
        p = i;
      }
    piv[k] = p;
    if (p != k) {
      swaps++;
      for (int64_t j = 0; j < n; j++) {
        const double t = a[k * n + j];
        a[k * n + j] = a[p * n + j];
        a[p * n + j] = t;
      }
    }
    const double d = a[k * n + k];
    if (d == 0.0) {
      *singular = 1;
      continue;
    }
    for (int64_t i = k + 1; i < n; i++) {
      const double f = a[i * n + k] / d;
      a[i * n + k] = f;
      for (int64_t j = k + 1; j < n; j++) a[i * n + j] -= f * a[k * n + j];
    }
  }
  return swaps;
}

/* ==== inverse ===================================================================================== */
/* inv = w^-1 by LU (w overwritten), stored by columns (inv[j * n + i] is row i of column j); -1 when
 * w is singular. */
static int invert(double *w, int64_t n, int64_t *piv, double *inv) {
  int singular;
  lu_factor(w, n, piv, &singular);
  if (singular) return -1;
  /* solve A X = I column by column: apply the row swaps to e_j, then L and U substitutions */
  for (int64_t j = 0; j < n; j++) {
    double *x = inv + j * n; /* column j, stored as a row for now */
    for (int64_t i = 0; i < n; i++) x[i] = i == j;
    for (int64_t k = 0; k < n; k++)
      if (piv[k] != k) {
        const double t = x[k];
        x[k] = x[piv[k]];
        x[piv[k]] = t;
      }
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < i; k++) x[i] -= w[i * n + k] * x[k];
    for (int64_t i = n - 1; i >= 0; i--) {
      for (int64_t k = i + 1; k < n; k++) x[i] -= w[i * n + k] * x[k];
      x[i] /= w[i * n + i];
    }
  }
  return 0;
}
static int fwd_inverse(const mxw_op_call *c) {
  const mxw_tensor *A = &c->inputs[0];
  mxw_tensor *O = &c->outputs[0];
  MXW_TRY(float_dtype(A, "A"));
  int64_t n;
  MXW_TRY(square_n(&A->shape, &n));
  const int64_t batch = batch_of(&A->shape, 2);
  double *w = (double *)mxw_scratch(0, (size_t)(2 * n * n + 1) * sizeof(double) + (size_t)(n + 1) * sizeof(int64_t));
  if (!w) return -1;
  double *inv = w + n * n;
  int64_t *piv = (int64_t *)(inv + n * n + 1);
  for (int64_t b = 0; b < batch; b++) {
    load_mat(A, b, n, w);
    MXW_CHECK(invert(w, n, piv, inv) == 0, "matrix %lld of the batch is singular: it has no inverse", (long long)b);
    for (int64_t i = 0; i < n; i++) /* columns -> rows */
      for (int64_t j = 0; j < n; j++) mxw_store_f64(O->data, O->dtype, b * n * n + i * n + j, inv[j * n + i]);
  }
  return 0;
}

static mxw_gid swap_last2(mxw_grad_ctx *g, mxw_gid x, int ndim) {
  char d1[16], d2[16];
  snprintf(d1, sizeof d1, "%d", ndim - 2);
  snprintf(d2, sizeof d2, "%d", ndim - 1);
  return mxw_grad_op(g, "SwapAxis", MXW_KV("dim1", d1, "dim2", d2), MXW_GIDS(x));
}
/* dA = -Y^T G Y^T */
static int grad_inverse(mxw_grad_ctx *g) {
  const mxw_gid Y = mxw_grad_out(g, 0), G = mxw_grad_ograd(g, 0);
  return mxw_grad_set(g, 0, gemm2_node(g, gemm2_node(g, Y, G, 1, 0, 1.0, -2), Y, 0, 1, -1.0, -2));
}

static const mxw_op_def op_inverse = {
    .name = "_linalg_inverse",
    .aliases = ALIASES("linalg_inverse"),
    .doc = MXW_DOC("the inverse of square matrices (LU with partial pivoting); singular is an error"),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 1,
    .infer_shape = infer_same_square,
    .half_as_f32 = 1,
    .forward = fwd_inverse,
    .gradient = grad_inverse,
};

/* ==== det / slogdet ================================================================================ */
/* outputs: det: (det, LU, pivot); slogdet: (sign, logabsdet, LU, pivot); pivot int32, 1-based */
static int infer_det_common(mxw_shape *in, mxw_shape *out, int nvals) {
  if (!shape_known(&in[0])) return 0;
  int64_t n;
  MXW_TRY(square_n(&in[0], &n));
  const mxw_shape r = reduce2_shape(&in[0]);
  for (int i = 0; i < nvals; i++) MXW_TRY(mxw_shape_assign(&out[i], &r, "output"));
  MXW_TRY(mxw_shape_assign(&out[nvals], &in[0], "LU"));
  mxw_shape pv = in[0];
  pv.ndim -= 1;
  return mxw_shape_assign(&out[nvals + 1], &pv, "pivot");
}
static int infer_det(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  return infer_det_common(in, out, 1);
}
static int infer_slogdet(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  return infer_det_common(in, out, 2);
}
static int infer_type_det_common(int *in, int nout, int *out) {
  if (in[0] < 0) in[0] = out[0];
  if (in[0] < 0) return 0;
  for (int i = 0; i < nout - 1; i++) out[i] = in[0];
  out[nout - 1] = MXW_INT32;
  return 0;
}
static int infer_type_det(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  return infer_type_det_common(in, nout, out);
}

static int det_run(const mxw_op_call *c, int nvals) {
  const mxw_tensor *A = &c->inputs[0];
  MXW_TRY(float_dtype(A, "A"));
  int64_t n;
  MXW_TRY(square_n(&A->shape, &n));
  mxw_tensor *LU = &c->outputs[nvals], *PV = &c->outputs[nvals + 1];
  const int64_t batch = batch_of(&A->shape, 2);
  double *w = (double *)mxw_scratch(0, (size_t)(n * n + 1) * sizeof(double) + (size_t)(n + 1) * sizeof(int64_t));
  if (!w) return -1;
  int64_t *piv = (int64_t *)(w + n * n + 1);
  for (int64_t b = 0; b < batch; b++) {
    load_mat(A, b, n, w);
    int singular;
    const int swaps = lu_factor(w, n, piv, &singular);
    double sign = swaps % 2 ? -1.0 : 1.0, logabs = 0.0, det = sign;
    for (int64_t i = 0; i < n; i++) {
      const double d = w[i * n + i];
      det *= d;
      if (d < 0) sign = -sign;
      logabs += log(fabs(d));
    }
    if (singular) {
      sign = 0.0;
      logabs = -INFINITY;
      det = 0.0;
    }
    store_mat(LU, b, n, w);
    for (int64_t i = 0; i < n; i++) ((int32_t *)PV->data)[b * n + i] = (int32_t)(piv[i] + 1);
    if (nvals == 1) {
      mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, b, det);
    } else {
      mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, b, sign);
      mxw_store_f64(c->outputs[1].data, c->outputs[1].dtype, b, logabs);
    }
  }
  return 0;
}
static int fwd_det(const mxw_op_call *c) { return det_run(c, 1); }
static int fwd_slogdet(const mxw_op_call *c) { return det_run(c, 2); }

/* "(d0, d1, ..., <tail>" for the batch dims of square matrices s (all but the last two). */
static void batch_shape_str(const mxw_shape *s, const char *tail, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < s->ndim - 2 && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%lld, ", (long long)s->dims[i]);
  if (used < len) snprintf(buf + used, len - used, "%s", tail);
}
/* G (batch shape) times a value of it, reshaped to (batch..., 1, 1) and broadcast onto inverse(A)^T */
static int grad_det_common(mxw_grad_ctx *g, mxw_gid scale) {
  const mxw_shape *s = mxw_grad_in_shape(g, 0);
  char shp[200];
  batch_shape_str(s, "1, 1)", shp, sizeof shp);
  const mxw_gid t = mxw_grad_op(g, "Reshape", MXW_KV("shape", shp), MXW_GIDS(scale));
  const mxw_gid yt = swap_last2(g, mxw_grad_op(g, "_linalg_inverse", NULL, MXW_GIDS(mxw_grad_in(g, 0))), s->ndim);
  return mxw_grad_set(g, 0, mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(t, yt)));
}
/* dA = G det A^-T */
static int grad_det(mxw_grad_ctx *g) {
  return grad_det_common(g, mxw_grad_mul(g, mxw_grad_ograd(g, 0), mxw_grad_out(g, 0)));
}
/* dA = G_logabsdet A^-T (the sign has none) */
static int grad_slogdet(mxw_grad_ctx *g) { return grad_det_common(g, mxw_grad_ograd(g, 1)); }

static int det_visible(const void *param) {
  (void)param;
  return 1;
}
static int slogdet_visible(const void *param) {
  (void)param;
  return 2;
}
static const char *const k_det_outputs[] = {"output", "LU", "pivot", NULL};
static const char *const k_slogdet_outputs[] = {"sign", "logabsdet", "LU", "pivot", NULL};

static const mxw_op_def op_det = {
    .name = "_linalg_det",
    .aliases = ALIASES("linalg_det"),
    .doc = MXW_DOC("the determinant of square matrices (LU with partial pivoting; 0 when singular)"),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 3,
    .num_visible_outputs_fn = det_visible,
    .output_names = k_det_outputs,
    .infer_shape = infer_det,
    .infer_type = infer_type_det,
    .forward = fwd_det,
    .gradient = grad_det,
};
static const mxw_op_def op_slogdet = {
    .name = "_linalg_slogdet",
    .aliases = ALIASES("linalg_slogdet"),
    .doc = MXW_DOC("sign and log |determinant| of square matrices ((0, -inf) when singular)"),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 4,
    .num_visible_outputs_fn = slogdet_visible,
    .output_names = k_slogdet_outputs,
    .infer_shape = infer_slogdet,
    .infer_type = infer_type_det,
    .forward = fwd_slogdet,
    .gradient = grad_slogdet,
};

/* ==== potrf ======================================================================================== */
typedef struct {
  int lower;
} CholParam;
static const mxw_attr_spec k_chol_attrs[] = {
    MXW_A_BOOL("lower", CholParam, lower, "True", "the factor is lower triangular (False: upper, L^T)"),
};

/* A = L L^T from A's lower triangle, in double; 0 when positive definite. */
static int cholesky(double *a, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    double d = a[j * n + j];
    for (int64_t k = 0; k < j; k++) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0.0)) return -1;
    d = sqrt(d);
    a[j * n + j] = d;
    for (int64_t i = j + 1; i < n; i++) {
      double s = a[i * n + j];
      for (int64_t k = 0; k < j; k++) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
    for (int64_t k = j + 1; k < n; k++) a[j * n + k] = 0.0; /* the upper triangle of L */
  }
  return 0;
}

static int fwd_potrf(const mxw_op_call *c) {
  const CholParam *p = (const CholParam *)c->param;
  const mxw_tensor *A = &c->inputs[0];
  mxw_tensor *O = &c->outputs[0];
  MXW_TRY(float_dtype(A, "A"));
  int64_t n;
  MXW_TRY(square_n(&A->shape, &n));
  const int64_t batch = batch_of(&A->shape, 2);
  double *w = (double *)mxw_scratch(0, (size_t)(n * n + 1) * sizeof(double));
  if (!w) return -1;
  for (int64_t b = 0; b < batch; b++) {
    load_mat(A, b, n, w);
    if (!p->lower) /* the upper triangle holds A: factor its transpose */
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < i; j++) w[i * n + j] = w[j * n + i];
    MXW_CHECK(cholesky(w, n) == 0, "matrix %lld of the batch is not positive definite", (long long)b);
    if (!p->lower)
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
          w[i * n + j] = w[j * n + i];
          w[j * n + i] = 0.0;
        }
    store_mat(O, b, n, w);
  }
  return 0;
}

static int grad_potrf(mxw_grad_ctx *g) {
  mxw_gid dA = -1;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_linalg_potrf", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 0)), &dA, 1));
  return mxw_grad_set(g, 0, dA);
}

/* dA = 0.5 L^-T copyLTU(L^T dL) L^-1 for L lower (upper: L = U^T, dL = dU^T), in double. */
static int fwd_backward_potrf(const mxw_op_call *c) {
  const CholParam *p = (const CholParam *)c->param;
  const mxw_tensor *dLt = &c->inputs[0], *Lt = &c->inputs[1];
  mxw_tensor *dA = &c->outputs[0];
  int64_t n;
  MXW_TRY(square_n(&Lt->shape, &n));
  const int64_t batch = batch_of(&Lt->shape, 2);
  double *L = (double *)mxw_scratch(0, (size_t)(4 * n * n + 1) * sizeof(double));
  if (!L) return -1;
  double *dL = L + n * n, *P = dL + n * n, *Li = P + n * n;
  for (int64_t b = 0; b < batch; b++) {
    load_mat(Lt, b, n, L);
    load_mat(dLt, b, n, dL);
    if (!p->lower)
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
          double t = L[i * n + j];
          L[i * n + j] = L[j * n + i];
          L[j * n + i] = t;
          t = dL[i * n + j];
          dL[i * n + j] = dL[j * n + i];
          dL[j * n + i] = t;
        }
    for (int64_t i = 0; i < n; i++) /* P = L^T dL, only L's lower triangle read */
      for (int64_t j = 0; j < n; j++) {
        double s = 0.0;
        for (int64_t k = i; k < n; k++) s += L[k * n + i] * dL[k * n + j];
        P[i * n + j] = s;
      }
    for (int64_t i = 0; i < n; i++) /* copyLTU */
      for (int64_t j = i + 1; j < n; j++) P[i * n + j] = P[j * n + i];
    for (int64_t j = 0; j < n; j++) { /* Li = L^-1 (lower), column j by forward substitution */
      for (int64_t i = 0; i < n; i++) {
        double s = i == j;
        for (int64_t k = j; k < i; k++) s -= L[i * n + k] * Li[k * n + j];
        Li[i * n + j] = i < j ? 0.0 : s / L[i * n + i];
      }
    }
    /* dA = 0.5 Li^T P Li: first T = P Li (into dL), then Li^T T */
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0.0;
        for (int64_t k = j; k < n; k++) s += P[i * n + k] * Li[k * n + j];
        dL[i * n + j] = s;
      }
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0.0;
        for (int64_t k = i; k < n; k++) s += Li[k * n + i] * dL[k * n + j];
        mxw_store_f64(dA->data, dA->dtype, b * n * n + i * n + j, 0.5 * s);
      }
  }
  return 0;
}
static const char *const k_dL_L[] = {"ograd", "L", NULL};

static const mxw_op_def op_potrf = {
    .name = "_linalg_potrf",
    .aliases = ALIASES("linalg_potrf"),
    .doc = MXW_DOC("the Cholesky factor L (A = L L^T, from A's lower triangle; upper: L^T) of symmetric "
                   "positive-definite matrices"),
    .attrs = k_chol_attrs,
    .num_attrs = 1,
    .param_size = sizeof(CholParam),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 1,
    .infer_shape = infer_same_square,
    .half_as_f32 = 1,
    .forward = fwd_potrf,
    .gradient = grad_potrf,
};
static const mxw_op_def op_backward_potrf = {
    .name = "_backward_linalg_potrf",
    .doc = MXW_DOC("the gradient of potrf: 0.5 L^-T copyLTU(L^T dL) L^-1"),
    .attrs = k_chol_attrs,
    .num_attrs = 1,
    .param_size = sizeof(CholParam),
    .num_inputs = 2,
    .input_names = k_dL_L,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_second,
    .half_as_f32 = 1,
    .forward = fwd_backward_potrf,
};

/* ==== potri ======================================================================================== */
/* potri(L): (L L^T)^-1 from a Cholesky factor (lower: L's lower triangle is read; upper: U's upper
 * triangle, A = U^T U), in double; a zero on the diagonal is an error. */
static int fwd_potri(const mxw_op_call *c) {
  const CholParam *p = (const CholParam *)c->param;
  const mxw_tensor *L = &c->inputs[0];
  mxw_tensor *O = &c->outputs[0];
  MXW_TRY(float_dtype(L, "A"));
  int64_t n;
  MXW_TRY(square_n(&L->shape, &n));
  const int64_t batch = batch_of(&L->shape, 2);
  double *w = (double *)mxw_scratch(0, (size_t)(3 * n * n + 1) * sizeof(double) + (size_t)(n + 1) * sizeof(int64_t));
  if (!w) return -1;
  double *s = w + n * n, *inv = s + n * n;
  int64_t *piv = (int64_t *)(inv + n * n + 1);
  for (int64_t b = 0; b < batch; b++) {
    load_mat(L, b, n, w);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) { /* S = L L^T (lower) or U^T U (upper), the triangle read */
        double v = 0;
        for (int64_t k = 0; k <= (i < j ? i : j); k++)
          v += p->lower ? w[i * n + k] * w[j * n + k] : w[k * n + i] * w[k * n + j];
        s[i * n + j] = v;
      }
    for (int64_t i = 0; i < n; i++)
      MXW_CHECK(w[i * n + i] != 0.0, "matrix %lld of the batch has a zero on its diagonal: L L^T is singular",
                (long long)b);
    MXW_CHECK(invert(s, n, piv, inv) == 0, "matrix %lld of the batch: L L^T is singular", (long long)b);
    store_mat(O, b, n, inv); /* (symmetric: by columns is by rows) */
  }
  return 0;
}
/* MXNet's potri_backward: dL = -tril(A (G + G^T) L^-T) (upper: dU = -triu(U^-T (G + G^T) A)), A the
 * output; built from gemm2, trsm and the triangle ops, so it differentiates again. */
static int grad_potri(mxw_grad_ctx *g) {
  const CholParam *p = (const CholParam *)mxw_grad_param(g);
  const mxw_gid A = mxw_grad_out(g, 0), G = mxw_grad_ograd(g, 0), L = mxw_grad_in(g, 0);
  const char *low = p->lower ? "True" : "False";
  mxw_gid M = p->lower ? mxw_grad_op(g, "elemwise_add", NULL,
                                     MXW_GIDS(gemm2_node(g, A, G, 0, 0, 1.0, -2), gemm2_node(g, A, G, 0, 1, 1.0, -2)))
                       : mxw_grad_op(g, "elemwise_add", NULL,
                                     MXW_GIDS(gemm2_node(g, G, A, 0, 0, 1.0, -2), gemm2_node(g, G, A, 1, 0, 1.0, -2)));
  mxw_gid X = mxw_grad_op(g, "_linalg_trsm", MXW_KV("transpose", "True", "rightside", low, "lower", low, "alpha", "-1"),
                          MXW_GIDS(L, M));
  mxw_gid T = mxw_grad_op(g, "_linalg_extracttrian", MXW_KV("lower", low), MXW_GIDS(X));
  return mxw_grad_set(g, 0, mxw_grad_op(g, "_linalg_maketrian", MXW_KV("lower", low), MXW_GIDS(T)));
}
static const mxw_op_def op_potri = {
    .name = "_linalg_potri",
    .aliases = ALIASES("linalg_potri"),
    .doc = MXW_DOC("the inverse (L L^T)^-1 of a matrix from its Cholesky factor L (upper: A = U^T U)"),
    .attrs = k_chol_attrs,
    .num_attrs = 1,
    .param_size = sizeof(CholParam),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 1,
    .infer_shape = infer_same_square,
    .half_as_f32 = 1,
    .forward = fwd_potri,
    .gradient = grad_potri,
};

/* ==== syrk ========================================================================================= */
typedef struct {
  int transpose;
  double alpha;
} SyrkParam;
static const mxw_attr_spec k_syrk_attrs[] = {
    MXW_A_BOOL("transpose", SyrkParam, transpose, "False", "A^T A instead of A A^T"),
    MXW_A_FLOAT("alpha", SyrkParam, alpha, "1", "scalar factor of the result"),
};
static int infer_syrk(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const SyrkParam *p = (const SyrkParam *)param;
  (void)nin;
  (void)nout;
  if (!shape_known(&in[0])) return 0;
  shape_buf b;
  MXW_CHECK(in[0].ndim >= 2, "A must be a matrix or a batch of them, got shape %s", SHAPE_STR(&in[0], b));
  mxw_shape o = in[0];
  const int nd = o.ndim;
  o.dims[nd - 2] = o.dims[nd - 1] = p->transpose ? in[0].dims[nd - 1] : in[0].dims[nd - 2];
  return mxw_shape_assign(&out[0], &o, "output");
}
static int fwd_syrk(const mxw_op_call *c) {
  const SyrkParam *p = (const SyrkParam *)c->param;
  const mxw_tensor *A = &c->inputs[0];
  mxw_tensor *O = &c->outputs[0];
  MXW_TRY(float_dtype(A, "A"));
  const int nd = A->shape.ndim;
  const int64_t r = A->shape.dims[nd - 2], k = A->shape.dims[nd - 1], m = p->transpose ? k : r,
                K = p->transpose ? r : k;
  const int64_t batch = batch_of(&A->shape, 2);
  for (int64_t b = 0; b < batch; b++) {
    int rc;
    if (A->dtype == MXW_FLOAT32)
      rc = mxw_sgemm(p->transpose, !p->transpose, m, m, K, (float)p->alpha, (const float *)A->data + b * r * k, k,
                     (const float *)A->data + b * r * k, k, 0.f, (float *)O->data + b * m * m, m);
    else
      rc = mxw_dgemm(p->transpose, !p->transpose, m, m, K, p->alpha, (const double *)A->data + b * r * k, k,
                     (const double *)A->data + b * r * k, k, 0.0, (double *)O->data + b * m * m, m);
    if (rc != 0) return -1;
  }
  return 0;
}
/* dA = alpha (G + G^T) A, or alpha A (G + G^T) with transpose */
static int grad_syrk(mxw_grad_ctx *g) {
  const SyrkParam *p = (const SyrkParam *)mxw_grad_param(g);
  const mxw_gid G = mxw_grad_ograd(g, 0), A = mxw_grad_in(g, 0);
  const mxw_gid S = mxw_grad_op(g, "elemwise_add", NULL, MXW_GIDS(G, swap_last2(g, G, mxw_grad_in_shape(g, 0)->ndim)));
  return mxw_grad_set(g, 0,
                      p->transpose ? gemm2_node(g, A, S, 0, 0, p->alpha, -2) : gemm2_node(g, S, A, 0, 0, p->alpha, -2));
}
static const mxw_op_def op_syrk = {
    .name = "_linalg_syrk",
    .aliases = ALIASES("linalg_syrk"),
    .doc = MXW_DOC("alpha A A^T (alpha A^T A with transpose) over batches of matrices"),
    .attrs = k_syrk_attrs,
    .num_attrs = 2,
    .param_size = sizeof(SyrkParam),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 1,
    .infer_shape = infer_syrk,
    .half_as_f32 = 1,
    .forward = fwd_syrk,
    .gradient = grad_syrk,
};

/* ==== sumlogdiag, extractdiag, makediag ============================================================== */
static int infer_sumlogdiag(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (!shape_known(&in[0])) return 0;
  int64_t n;
  MXW_TRY(square_n(&in[0], &n));
  const mxw_shape r = reduce2_shape(&in[0]);
  return mxw_shape_assign(&out[0], &r, "output");
}
static int fwd_sumlogdiag(const mxw_op_call *c) {
  const mxw_tensor *A = &c->inputs[0];
  MXW_TRY(float_dtype(A, "A"));
  int64_t n;
  MXW_TRY(square_n(&A->shape, &n));
  const int64_t batch = batch_of(&A->shape, 2);
  for (int64_t b = 0; b < batch; b++) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += log(mxw_load_f64(A->data, A->dtype, b * n * n + i * n + i));
    mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, b, s);
  }
  return 0;
}
/* dA = makediag(G / diag(A)) */
static int grad_sumlogdiag(mxw_grad_ctx *g) {
  char shp[200];
  batch_shape_str(mxw_grad_in_shape(g, 0), "1)", shp, sizeof shp);
  const mxw_gid G = mxw_grad_op(g, "Reshape", MXW_KV("shape", shp), MXW_GIDS(mxw_grad_ograd(g, 0)));
  const mxw_gid d = mxw_grad_op(g, "_linalg_extractdiag", NULL, MXW_GIDS(mxw_grad_in(g, 0)));
  const mxw_gid q = mxw_grad_op(g, "broadcast_div", NULL, MXW_GIDS(G, d));
  return mxw_grad_set(g, 0, mxw_grad_op(g, "_linalg_makediag", NULL, MXW_GIDS(q)));
}
static const mxw_op_def op_sumlogdiag = {
    .name = "_linalg_sumlogdiag",
    .aliases = ALIASES("linalg_sumlogdiag"),
    .doc = MXW_DOC("the sum of the logarithms of the diagonal of square matrices"),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 1,
    .infer_shape = infer_sumlogdiag,
    .half_as_f32 = 1,
    .forward = fwd_sumlogdiag,
    .gradient = grad_sumlogdiag,
};

typedef struct {
  int64_t offset;
} LaDiagParam;
static const mxw_attr_spec k_ladiag_attrs[] = {
    MXW_A_INT("offset", LaDiagParam, offset, "0", "the diagonal: 0 the main one, > 0 above it, < 0 below"),
};
static int64_t iabs64(int64_t v) { return v < 0 ? -v : v; }

/* the extent n - |offset| of a diagonal or triangle of the n x n matrices of shape s */
static int offset_extent(const mxw_shape *s, int64_t offset, int64_t *m) {
  int64_t n;
  MXW_TRY(square_n(s, &n));
  *m = n - iabs64(offset);
  MXW_CHECK(*m > 0, "offset %lld is too large for %lld x %lld matrices", (long long)offset, (long long)n, (long long)n);
  return 0;
}
static int infer_extractdiag(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const LaDiagParam *p = (const LaDiagParam *)param;
  (void)nin;
  (void)nout;
  if (!shape_known(&in[0])) return 0;
  int64_t m;
  MXW_TRY(offset_extent(&in[0], p->offset, &m));
  mxw_shape o = in[0];
  o.ndim -= 1;
  o.dims[o.ndim - 1] = m;
  return mxw_shape_assign(&out[0], &o, "output");
}
static int infer_makediag(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const LaDiagParam *p = (const LaDiagParam *)param;
  (void)nin;
  (void)nout;
  if (!shape_known(&in[0])) return 0;
  shape_buf b;
  MXW_CHECK(in[0].ndim >= 1 && in[0].ndim < MXW_MAX_NDIM, "A must be a vector or a batch of them, got shape %s",
            SHAPE_STR(&in[0], b));
  mxw_shape o = in[0];
  const int64_t m = in[0].dims[in[0].ndim - 1] + iabs64(p->offset);
  o.dims[o.ndim - 1] = m;
  o.dims[o.ndim++] = m;
  return mxw_shape_assign(&out[0], &o, "output");
}
/* element t of diagonal `offset` of an m x m matrix */
static int64_t diag_index(int64_t t, int64_t offset, int64_t m) {
  return offset >= 0 ? t * m + t + offset : (t - offset) * m + t;
}
static int fwd_extractdiag(const mxw_op_call *c) {
  const LaDiagParam *p = (const LaDiagParam *)c->param;
  const mxw_tensor *A = &c->inputs[0];
  mxw_tensor *O = &c->outputs[0];
  const int64_t n = A->shape.dims[A->shape.ndim - 1], m = n - iabs64(p->offset), batch = batch_of(&A->shape, 2);
  const size_t es = (size_t)mxw_dtype_size(A->dtype);
  for (int64_t b = 0; b < batch; b++)
    for (int64_t t = 0; t < m; t++)
      memcpy((char *)O->data + (size_t)(b * m + t) * es,
             (const char *)A->data + (size_t)(b * n * n + diag_index(t, p->offset, n)) * es, es);
  return 0;
}
static int fwd_makediag(const mxw_op_call *c) {
  const LaDiagParam *p = (const LaDiagParam *)c->param;
  const mxw_tensor *A = &c->inputs[0];
  mxw_tensor *O = &c->outputs[0];
  const int64_t k = A->shape.dims[A->shape.ndim - 1], m = k + iabs64(p->offset), batch = batch_of(&A->shape, 1);
  const size_t es = (size_t)mxw_dtype_size(A->dtype);
  memset(O->data, 0, (size_t)mxw_tensor_size(O) * es);
  for (int64_t b = 0; b < batch; b++)
    for (int64_t t = 0; t < k; t++)
      memcpy((char *)O->data + (size_t)(b * m * m + diag_index(t, p->offset, m)) * es,
             (const char *)A->data + (size_t)(b * k + t) * es, es);
  return 0;
}
static int grad_extractdiag(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_linalg_makediag", 0); }
static int grad_makediag(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_linalg_extractdiag", 0); }

static const mxw_op_def op_extractdiag = {
    .name = "_linalg_extractdiag",
    .aliases = ALIASES("linalg_extractdiag"),
    .doc = MXW_DOC("diagonal `offset` of square matrices, as vectors"),
    .attrs = k_ladiag_attrs,
    .num_attrs = 1,
    .param_size = sizeof(LaDiagParam),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 1,
    .infer_shape = infer_extractdiag,
    .forward = fwd_extractdiag,
    .gradient = grad_extractdiag,
};
static const mxw_op_def op_makediag = {
    .name = "_linalg_makediag",
    .aliases = ALIASES("linalg_makediag"),
    .doc = MXW_DOC("square matrices with the vectors on diagonal `offset`, zeros elsewhere"),
    .attrs = k_ladiag_attrs,
    .num_attrs = 1,
    .param_size = sizeof(LaDiagParam),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 1,
    .infer_shape = infer_makediag,
    .forward = fwd_makediag,
    .gradient = grad_makediag,
};

/* ==== extracttrian / maketrian ===================================================================== */
/* The triangle of an n x n matrix (lower, or upper; offset k > 0 above the diagonal, < 0 below)
 * packed row by row into m = p (p + 1) / 2 elements, p = n - |k| (la_op-inl.h's CopyTrian): for
 * k > 0 or an upper triangle the coordinates are transposed, then row -= |k|, and element (row,
 * col) with row >= col goes to row (row + 1) / 2 + col. */
typedef struct {
  int64_t offset;
  int lower;
} LaTrianParam;
static const mxw_attr_spec k_latrian_attrs[] = {
    MXW_A_INT("offset", LaTrianParam, offset, "0",
              "the first diagonal of the triangle: > 0 above the main one, < 0 below"),
    MXW_A_BOOL("lower", LaTrianParam, lower, "True", "the lower triangle (for offset 0); False: the upper"),
};
/* the packed position of element i of an n x n matrix, or -1 outside the triangle */
static int64_t trian_index(const LaTrianParam *p, int64_t n, int64_t i) {
  int64_t row = i / n, col = i % n;
  if (p->offset > 0 || (p->offset == 0 && !p->lower)) {
    const int64_t t = row;
    row = col;
    col = t;
  }
  row -= iabs64(p->offset);
  return row >= col ? row * (row + 1) / 2 + col : -1;
}
static int infer_extracttrian(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const LaTrianParam *p = (const LaTrianParam *)param;
  (void)nin;
  (void)nout;
  if (!shape_known(&in[0])) return 0;
  int64_t q;
  MXW_TRY(offset_extent(&in[0], p->offset, &q));
  mxw_shape o = in[0];
  o.ndim -= 1;
  o.dims[o.ndim - 1] = q * (q + 1) / 2;
  return mxw_shape_assign(&out[0], &o, "output");
}
static int infer_maketrian(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const LaTrianParam *p = (const LaTrianParam *)param;
  (void)nin;
  (void)nout;
  if (!shape_known(&in[0])) return 0;
  shape_buf b;
  MXW_CHECK(in[0].ndim >= 1 && in[0].ndim < MXW_MAX_NDIM, "A must be a vector or a batch of them, got shape %s",
            SHAPE_STR(&in[0], b));
  const int64_t m = in[0].dims[in[0].ndim - 1];
  int64_t q = (int64_t)((sqrt(8.0 * (double)m + 1.0) - 1.0) / 2.0);
  while (q * (q + 1) / 2 < m) q++;
  MXW_CHECK(m > 0 && q * (q + 1) / 2 == m, "%lld elements do not make a triangle (1, 3, 6, 10, ...)", (long long)m);
  mxw_shape o = in[0];
  o.dims[o.ndim - 1] = q + iabs64(p->offset);
  o.dims[o.ndim++] = q + iabs64(p->offset);
  return mxw_shape_assign(&out[0], &o, "output");
}
static int trian_run(const mxw_op_call *c, int extract) {
  const LaTrianParam *p = (const LaTrianParam *)c->param;
  const mxw_tensor *A = &c->inputs[0];
  mxw_tensor *O = &c->outputs[0];
  const mxw_tensor *M = extract ? A : O; /* the matrices' side */
  const int64_t n = M->shape.dims[M->shape.ndim - 1], batch = batch_of(&M->shape, 2), q = n - iabs64(p->offset);
  const int64_t m = q * (q + 1) / 2;
  const size_t es = (size_t)mxw_dtype_size(A->dtype);
  if (!extract) memset(O->data, 0, (size_t)mxw_tensor_size(O) * es);
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < n * n; i++) {
      const int64_t t = trian_index(p, n, i);
      if (t < 0) continue;
      if (extract)
        memcpy((char *)O->data + (size_t)(b * m + t) * es, (const char *)A->data + (size_t)(b * n * n + i) * es, es);
      else
        memcpy((char *)O->data + (size_t)(b * n * n + i) * es, (const char *)A->data + (size_t)(b * m + t) * es, es);
    }
  return 0;
}
static int fwd_extracttrian(const mxw_op_call *c) { return trian_run(c, 1); }
static int fwd_maketrian(const mxw_op_call *c) { return trian_run(c, 0); }
static int grad_extracttrian(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_linalg_maketrian", 0); }
static int grad_maketrian(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_linalg_extracttrian", 0); }
static const mxw_op_def op_extracttrian = {
    .name = "_linalg_extracttrian",
    .aliases = ALIASES("linalg_extracttrian"),
    .doc = MXW_DOC("the triangle of square matrices (lower or upper, from diagonal `offset`), packed as vectors"),
    .attrs = k_latrian_attrs,
    .num_attrs = 2,
    .param_size = sizeof(LaTrianParam),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 1,
    .infer_shape = infer_extracttrian,
    .forward = fwd_extracttrian,
    .gradient = grad_extracttrian,
};
static const mxw_op_def op_maketrian = {
    .name = "_linalg_maketrian",
    .aliases = ALIASES("linalg_maketrian"),
    .doc = MXW_DOC("square matrices with packed vectors as their triangle (lower or upper, from diagonal `offset`)"),
    .attrs = k_latrian_attrs,
    .num_attrs = 2,
    .param_size = sizeof(LaTrianParam),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 1,
    .infer_shape = infer_maketrian,
    .forward = fwd_maketrian,
    .gradient = grad_maketrian,
};

/* ==== gelqf / syevd ================================================================================ */
/* gelqf(A) -> (Q, L): A (x, y), x <= y, = L Q with L (x, x) lower triangular and Q (x, y) of
 * orthonormal rows, as LAPACK's gelqf + orglq: Householder reflections from the right whose
 * diagonal entries come out as dlarfg's beta = -sign(alpha) |(alpha, rest)| (a row already zero
 * past the diagonal is left as it is); Q is [I 0] H_x ... H_1. In double.
 * syevd(A) -> (U, L): the eigenvectors as U's rows (U A = diag(L) U) and the eigenvalues L in
 * ascending order, of A's lower triangle taken as a symmetric matrix; cyclic Jacobi rotations in
 * double (at most 64 sweeps: bounded time, NaN stays NaN); each row of U is signed so that its
 * largest-magnitude element is positive (SyevdEigenVecSigns).
 * Their gradients are MXNet's, in kernels of their own (without second order):
 *   gelqf: dA = L^-T (dQ + copyLTU(M) Q), M = L^T dL - dQ Q^T
 *   syevd: dA = U^T Y U, Y = dL on the diagonal and (X_ij - X_ji) / (2 max(L_i - L_j, eps)) off it
 *          (symmetric), X = dU U^T. */
static int infer_gelqf(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (!shape_known(&in[0])) return 0;
  shape_buf b;
  const mxw_shape *a = &in[0];
  MXW_CHECK(a->ndim >= 2 && a->dims[a->ndim - 2] <= a->dims[a->ndim - 1],
            "A must be (x, y) with x <= y, or a batch of them, got shape %s", SHAPE_STR(a, b));
  MXW_TRY(mxw_shape_assign(&out[0], a, "Q"));
  mxw_shape l = *a;
  l.dims[l.ndim - 1] = l.dims[l.ndim - 2];
  return mxw_shape_assign(&out[1], &l, "L");
}
static int fwd_gelqf(const mxw_op_call *c) {
  const mxw_tensor *A = &c->inputs[0];
  MXW_TRY(float_dtype(A, "A"));
  const int64_t x = A->shape.dims[A->shape.ndim - 2], y = A->shape.dims[A->shape.ndim - 1],
                batch = batch_of(&A->shape, 2);
  double *a = (double *)mxw_scratch(0, (size_t)(2 * x * y + x + 1) * sizeof(double));
  if (!a) return -1;
  double *q = a + x * y, *tau = q + x * y;
  for (int64_t b = 0; b < batch; b++) {
    for (int64_t i = 0; i < x * y; i++) a[i] = mxw_load_f64(A->data, A->dtype, b * x * y + i);
    for (int64_t k = 0; k < x; k++) { /* the reflector of row k, stored in a[k][k+1..] with v[k] = 1 */
      double *r = a + k * y, xn = 0;
      for (int64_t j = k + 1; j < y; j++) xn = hypot(xn, r[j]);
      tau[k] = 0;
      if (xn == 0.0) continue;
      const double alpha = r[k], beta = -copysign(hypot(alpha, xn), alpha);
      tau[k] = (beta - alpha) / beta;
      for (int64_t j = k + 1; j < y; j++) r[j] /= alpha - beta;
      r[k] = beta;
      for (int64_t i = k + 1; i < x; i++) { /* rows below: row -= tau (row . v) v */
        double *ri = a + i * y, d = ri[k];
        for (int64_t j = k + 1; j < y; j++) d += ri[j] * r[j];
        d *= tau[k];
        ri[k] -= d;
        for (int64_t j = k + 1; j < y; j++) ri[j] -= d * r[j];
      }
    }
    for (int64_t i = 0; i < x; i++) /* Q = [I 0] H_x ... H_1 */
      for (int64_t j = 0; j < y; j++) q[i * y + j] = i == j;
    for (int64_t k = x - 1; k >= 0; k--) {
      const double *v = a + k * y;
      for (int64_t i = 0; i < x; i++) {
        double *qi = q + i * y, d = qi[k];
        for (int64_t j = k + 1; j < y; j++) d += qi[j] * v[j];
        d *= tau[k];
        qi[k] -= d;
        for (int64_t j = k + 1; j < y; j++) qi[j] -= d * v[j];
      }
    }
    for (int64_t i = 0; i < x * y; i++) mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, b * x * y + i, q[i]);
    for (int64_t i = 0; i < x; i++)
      for (int64_t j = 0; j < x; j++)
        mxw_store_f64(c->outputs[1].data, c->outputs[1].dtype, b * x * x + i * x + j, j <= i ? a[i * y + j] : 0.0);
  }
  return 0;
}
static int infer_syevd(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (!shape_known(&in[0])) return 0;
  int64_t n;
  MXW_TRY(square_n(&in[0], &n));
  MXW_TRY(mxw_shape_assign(&out[0], &in[0], "U"));
  mxw_shape l = in[0];
  l.ndim -= 1;
  return mxw_shape_assign(&out[1], &l, "L");
}
static void jacobi_eigen(double *a, double *v, int64_t n) {
  for (int64_t i = 0; i < n * n; i++) v[i] = i % (n + 1) == 0;
  for (int sweep = 0; sweep < 64; sweep++) {
    double off = 0, diag = 0;
    for (int64_t i = 0; i < n; i++) {
      diag += a[i * n + i] * a[i * n + i];
      for (int64_t j = i + 1; j < n; j++) off += a[i * n + j] * a[i * n + j];
    }
    if (!(off > 1e-32 * diag) || off == 0.0) break; /* (NaN: stop) */
    for (int64_t p = 0; p < n; p++)
      for (int64_t q = p + 1; q < n; q++) {
        const double apq = a[p * n + q];
        if (apq == 0.0) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
        const double cs = 1 / sqrt(t * t + 1), sn = t * cs;
        for (int64_t k = 0; k < n; k++) {
          const double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = cs * akp - sn * akq;
          a[k * n + q] = sn * akp + cs * akq;
        }
        for (int64_t k = 0; k < n; k++) {
          const double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = cs * apk - sn * aqk;
          a[q * n + k] = sn * apk + cs * aqk;
        }
        for (int64_t k = 0; k < n; k++) {
          const double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = cs * vkp - sn * vkq;
          v[k * n + q] = sn * vkp + cs * vkq;
        }
      }
  }
}
static int fwd_syevd(const mxw_op_call *c) {
  const mxw_tensor *A = &c->inputs[0];
  MXW_TRY(float_dtype(A, "A"));
  int64_t n;
  MXW_TRY(square_n(&A->shape, &n));
  const int64_t batch = batch_of(&A->shape, 2);
  double *a = (double *)mxw_scratch(0, (size_t)(2 * n * n + 1) * sizeof(double) + (size_t)(n + 1) * sizeof(int64_t));
  if (!a) return -1;
  double *v = a + n * n;
  int64_t *order = (int64_t *)(v + n * n + 1);
  for (int64_t b = 0; b < batch; b++) {
    load_mat(A, b, n, a);
    for (int64_t i = 0; i < n; i++) /* the lower triangle, symmetric */
      for (int64_t j = i + 1; j < n; j++) a[i * n + j] = a[j * n + i];
    jacobi_eigen(a, v, n);
    for (int64_t i = 0; i < n; i++) { /* ascending eigenvalues (insertion sort, stable) */
      int64_t j = i;
      for (; j > 0 && a[order[j - 1] * (n + 1)] > a[i * (n + 1)]; j--) order[j] = order[j - 1];
      order[j] = i;
    }
    for (int64_t r = 0; r < n; r++) {
      const int64_t col = order[r];
      int64_t big = 0;
      for (int64_t k = 1; k < n; k++)
        if (fabs(v[k * n + col]) > fabs(v[big * n + col])) big = k;
      const double sgn = v[big * n + col] < 0 ? -1.0 : 1.0;
      for (int64_t k = 0; k < n; k++)
        mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, b * n * n + r * n + k, sgn * v[k * n + col]);
      mxw_store_f64(c->outputs[1].data, c->outputs[1].dtype, b * n + r, a[col * (n + 1)]);
    }
  }
  return 0;
}
/* the backward kernels' inputs (dX, dL, X, L) with X = Q or U, in double */
typedef struct {
  int64_t rows, cols, batch; /* X's matrices: rows x cols */
  double *dX, *dL, *X, *L, *t1, *t2;
} factor_grad;
static int factor_grad_load(const mxw_op_call *c, int64_t lsize, factor_grad *f, int64_t b) {
  const mxw_tensor *X = &c->inputs[2];
  if (b == 0) {
    f->rows = X->shape.dims[X->shape.ndim - 2];
    f->cols = X->shape.dims[X->shape.ndim - 1];
    f->batch = batch_of(&X->shape, 2);
    const int64_t xs = f->rows * f->cols, big = xs > f->cols * f->cols ? xs : f->cols * f->cols;
    f->dX = (double *)mxw_scratch(0, (size_t)(2 * xs + 2 * lsize + 2 * big + 1) * sizeof(double));
    if (!f->dX) return -1;
    f->X = f->dX + xs;
    f->dL = f->X + xs;
    f->L = f->dL + lsize;
    f->t1 = f->L + lsize;
    f->t2 = f->t1 + big;
  }
  const int64_t xs = f->rows * f->cols;
  for (int64_t i = 0; i < xs; i++) {
    f->dX[i] = mxw_load_f64(c->inputs[0].data, c->inputs[0].dtype, b * xs + i);
    f->X[i] = mxw_load_f64(c->inputs[2].data, c->inputs[2].dtype, b * xs + i);
  }
  for (int64_t i = 0; i < lsize; i++) {
    f->dL[i] = mxw_load_f64(c->inputs[1].data, c->inputs[1].dtype, b * lsize + i);
    f->L[i] = mxw_load_f64(c->inputs[3].data, c->inputs[3].dtype, b * lsize + i);
  }
  return 0;
}
static int fwd_backward_gelqf(const mxw_op_call *c) {
  const mxw_tensor *Q = &c->inputs[2];
  const int64_t x = Q->shape.dims[Q->shape.ndim - 2], y = Q->shape.dims[Q->shape.ndim - 1];
  factor_grad f;
  for (int64_t b = 0; b < batch_of(&Q->shape, 2); b++) {
    MXW_TRY(factor_grad_load(c, x * x, &f, b));
    double *M = f.t1, *dA = f.t2;
    for (int64_t i = 0; i < x; i++) /* M = L^T dL - dQ Q^T */
      for (int64_t j = 0; j < x; j++) {
        double s = 0;
        for (int64_t k = 0; k < x; k++) s += f.L[k * x + i] * f.dL[k * x + j];
        for (int64_t k = 0; k < y; k++) s -= f.dX[i * y + k] * f.X[j * y + k];
        M[i * x + j] = s;
      }
    for (int64_t i = 0; i < x; i++) /* copyLTU */
      for (int64_t j = i + 1; j < x; j++) M[i * x + j] = M[j * x + i];
    for (int64_t i = 0; i < x; i++) /* dA = dQ + M Q */
      for (int64_t j = 0; j < y; j++) {
        double s = f.dX[i * y + j];
        for (int64_t k = 0; k < x; k++) s += M[i * x + k] * f.X[k * y + j];
        dA[i * y + j] = s;
      }
    for (int64_t i = x - 1; i >= 0; i--) { /* L^T Z = dA: back substitution (L^T upper) */
      MXW_CHECK(f.L[i * x + i] != 0.0, "matrix %lld of the batch: L is singular", (long long)b);
      for (int64_t j = 0; j < y; j++) {
        double s = dA[i * y + j];
        for (int64_t k = i + 1; k < x; k++) s -= f.L[k * x + i] * dA[k * y + j];
        dA[i * y + j] = s / f.L[i * x + i];
      }
    }
    for (int64_t i = 0; i < x * y; i++) mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, b * x * y + i, dA[i]);
  }
  return 0;
}
static int fwd_backward_syevd(const mxw_op_call *c) {
  const mxw_tensor *U = &c->inputs[2];
  const int64_t n = U->shape.dims[U->shape.ndim - 1];
  const double eps = c->outputs[0].dtype == MXW_FLOAT64 ? 1e-100 : 1e-30;
  factor_grad f;
  for (int64_t b = 0; b < batch_of(&U->shape, 2); b++) {
    MXW_TRY(factor_grad_load(c, n, &f, b));
    double *X = f.t1, *Y = f.t2;
    for (int64_t i = 0; i < n; i++) /* X = dU U^T */
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t k = 0; k < n; k++) s += f.dX[i * n + k] * f.X[j * n + k];
        X[i * n + j] = s;
      }
    for (int64_t i = 0; i < n; i++) {
      Y[i * n + i] = f.dL[i];
      for (int64_t j = 0; j < i; j++) {
        double d = f.L[i] - f.L[j];
        if (d < eps) d = eps;
        Y[i * n + j] = Y[j * n + i] = (X[i * n + j] - X[j * n + i]) / (2 * d);
      }
    }
    for (int64_t i = 0; i < n; i++) /* X = Y U, then dA = U^T X */
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t k = 0; k < n; k++) s += Y[i * n + k] * f.X[k * n + j];
        X[i * n + j] = s;
      }
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t k = 0; k < n; k++) s += f.X[k * n + i] * X[k * n + j];
        mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, b * n * n + i * n + j, s);
      }
  }
  return 0;
}
static int grad_factor(mxw_grad_ctx *g, const char *backward) {
  mxw_gid dA = -1;
  MXW_TRY(mxw_grad_op_fwd(g, backward,
                          MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_ograd(g, 1), mxw_grad_out(g, 0), mxw_grad_out(g, 1)),
                          &dA, 1));
  return mxw_grad_set(g, 0, dA);
}
static int grad_gelqf(mxw_grad_ctx *g) { return grad_factor(g, "_backward_linalg_gelqf"); }
static int grad_syevd(mxw_grad_ctx *g) { return grad_factor(g, "_backward_linalg_syevd"); }
static int infer_backward_factor(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  return mxw_shape_assign(&out[0], &in[2], "output");
}
static int infer_type_backward_factor(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[2] >= 0) out[0] = in[2];
  return 0;
}
static const char *const k_gelqf_outputs[] = {"Q", "L", NULL};
static const char *const k_syevd_outputs[] = {"U", "L", NULL};
static const char *const k_factor_grad_inputs[] = {"dX", "dL", "X", "L", NULL};
static const mxw_op_def op_gelqf = {
    .name = "_linalg_gelqf",
    .aliases = ALIASES("linalg_gelqf"),
    .doc = MXW_DOC("LQ factorization A = L Q of (x, y) matrices, x <= y (LAPACK gelqf + orglq)"),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 2,
    .output_names = k_gelqf_outputs,
    .infer_shape = infer_gelqf,
    .half_as_f32 = 1,
    .forward = fwd_gelqf,
    .gradient = grad_gelqf,
};
static const mxw_op_def op_syevd = {
    .name = "_linalg_syevd",
    .aliases = ALIASES("linalg_syevd"),
    .doc = MXW_DOC("Eigendecomposition U A = diag(L) U of symmetric matrices (eigenvalues ascending)"),
    .num_inputs = 1,
    .input_names = k_A,
    .num_outputs = 2,
    .output_names = k_syevd_outputs,
    .infer_shape = infer_syevd,
    .half_as_f32 = 1,
    .forward = fwd_syevd,
    .gradient = grad_syevd,
};
static const mxw_op_def op_backward_gelqf = {
    .name = "_backward_linalg_gelqf",
    .doc = MXW_DOC("the gradient of gelqf: L^-T (dQ + copyLTU(L^T dL - dQ Q^T) Q)"),
    .num_inputs = 4,
    .input_names = k_factor_grad_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_factor,
    .infer_type = infer_type_backward_factor,
    .half_as_f32 = 1,
    .forward = fwd_backward_gelqf,
};
static const mxw_op_def op_backward_syevd = {
    .name = "_backward_linalg_syevd",
    .doc = MXW_DOC("the gradient of syevd: U^T Y U"),
    .num_inputs = 4,
    .input_names = k_factor_grad_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_factor,
    .infer_type = infer_type_backward_factor,
    .half_as_f32 = 1,
    .forward = fwd_backward_syevd,
};

/* ==== trmm / trsm ================================================================================== */
/* trmm: alpha op(A) B (rightside: alpha B op(A)); trsm: the X of op(A) X = alpha B (rightside:
 * X op(A) = alpha B); A triangular: only its `lower` (or upper) triangle is read, as BLAS does, and
 * the gradient of the other triangle is 0. Computed in double. */
typedef struct {
  int transpose, rightside, lower;
  double alpha;
} TriParam;
static const mxw_attr_spec k_tri_attrs[] = {
    MXW_A_BOOL("transpose", TriParam, transpose, "False", "use the transpose of the triangular matrix"),
    MXW_A_BOOL("rightside", TriParam, rightside, "False", "the triangular matrix on the right of B"),
    MXW_A_BOOL("lower", TriParam, lower, "True", "A is lower triangular (False: upper)"),
    MXW_A_FLOAT("alpha", TriParam, alpha, "1", "scalar factor"),
};

static int infer_tri(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const TriParam *p = (const TriParam *)param;
  (void)nin;
  (void)nout;
  if (!shape_known(&in[0]) || !shape_known(&in[1])) return 0;
  shape_buf a, b;
  const int nd = in[0].ndim;
  int64_t n;
  MXW_TRY(square_n(&in[0], &n));
  MXW_CHECK(in[1].ndim == nd, "A %s and B %s must have the same rank", SHAPE_STR(&in[0], a), SHAPE_STR(&in[1], b));
  for (int i = 0; i < nd - 2; i++)
    MXW_CHECK(in[0].dims[i] == in[1].dims[i], "A %s and B %s must have the same batch shape", SHAPE_STR(&in[0], a),
              SHAPE_STR(&in[1], b));
  MXW_CHECK(in[1].dims[p->rightside ? nd - 1 : nd - 2] == n, "incompatible matrix dimensions: A %s, B %s%s",
            SHAPE_STR(&in[0], a), SHAPE_STR(&in[1], b), p->rightside ? " (rightside)" : "");
  return mxw_shape_assign(&out[0], &in[1], "output");
}

/* M = op(tri(A)) of matrix b into w (n x n) */
static void load_tri(const TriParam *p, const mxw_tensor *A, int64_t b, int64_t n, double *w) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      const int in = p->lower ? j <= i : j >= i;
      const double v = in ? mxw_load_f64(A->data, A->dtype, b * n * n + i * n + j) : 0.0;
      if (p->transpose)
        w[j * n + i] = v;
      else
        w[i * n + j] = v;
    }
}
/* Y (r x c) = M X (left) or X M (right), M n x n; X r x c */
static void tri_mul(const double *M, const double *X, double *Y, int64_t r, int64_t c, int64_t n, int right) {
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++) {
      double s = 0.0;
      for (int64_t k = 0; k < n; k++) s += right ? X[i * c + k] * M[k * n + j] : M[i * n + k] * X[k * c + j];
      Y[i * c + j] = s;
    }
}
/* Y = M^-1 X (left) or X M^-1 (right) for triangular M (lower or upper as stored), in place on Y = X
 * copy; 0, or -1 for a zero on the diagonal */
static int tri_solve(const double *M, double *Y, int64_t r, int64_t c, int64_t n, int right) {
  int lowerM = 1; /* M's shape: lower when its strict upper part is 0 */
  for (int64_t i = 0; i < n && lowerM; i++)
    for (int64_t j = i + 1; j < n; j++)
      if (M[i * n + j] != 0.0) {
        lowerM = 0;
        break;
      }
  for (int64_t i = 0; i < n; i++)
    if (M[i * n + i] == 0.0) return -1;
  if (!right) { /* columns of Y: M y = x */
    for (int64_t j = 0; j < c; j++) {
      if (lowerM) {
        for (int64_t i = 0; i < n; i++) {
          double s = Y[i * c + j];
          for (int64_t k = 0; k < i; k++) s -= M[i * n + k] * Y[k * c + j];
          Y[i * c + j] = s / M[i * n + i];
        }
      } else {
        for (int64_t i = n - 1; i >= 0; i--) {
          double s = Y[i * c + j];
          for (int64_t k = i + 1; k < n; k++) s -= M[i * n + k] * Y[k * c + j];
          Y[i * c + j] = s / M[i * n + i];
        }
      }
    }
    return 0;
  }
  /* rows of Y: y M = x, i.e. M^T y^T = x^T (M^T lower when M is upper) */
  for (int64_t i = 0; i < r; i++) {
    double *y = Y + i * c;
    if (!lowerM) {
      for (int64_t j = 0; j < n; j++) {
        double s = y[j];
        for (int64_t k = 0; k < j; k++) s -= y[k] * M[k * n + j];
        y[j] = s / M[j * n + j];
      }
    } else {
      for (int64_t j = n - 1; j >= 0; j--) {
        double s = y[j];
        for (int64_t k = j + 1; k < n; k++) s -= y[k] * M[k * n + j];
        y[j] = s / M[j * n + j];
      }
    }
  }
  return 0;
}

static int tri_forward(const mxw_op_call *c, int solve) {
  const TriParam *p = (const TriParam *)c->param;
  const mxw_tensor *A = &c->inputs[0], *B = &c->inputs[1];
  mxw_tensor *O = &c->outputs[0];
  MXW_TRY(float_dtype(A, "A"));
  const int nd = B->shape.ndim;
  const int64_t n = A->shape.dims[nd - 1], r = B->shape.dims[nd - 2], cc = B->shape.dims[nd - 1],
                batch = batch_of(&A->shape, 2);
  double *M = (double *)mxw_scratch(0, (size_t)(n * n + 2 * r * cc + 1) * sizeof(double));
  if (!M) return -1;
  double *X = M + n * n, *Y = X + r * cc;
  for (int64_t b = 0; b < batch; b++) {
    load_tri(p, A, b, n, M);
    for (int64_t i = 0; i < r * cc; i++) X[i] = p->alpha * mxw_load_f64(B->data, B->dtype, b * r * cc + i);
    if (solve) {
      memcpy(Y, X, (size_t)(r * cc) * sizeof(double));
      MXW_CHECK(tri_solve(M, Y, r, cc, n, p->rightside) == 0,
                "matrix %lld of the batch is singular (a zero on the diagonal of A)", (long long)b);
    } else {
      tri_mul(M, X, Y, r, cc, n, p->rightside);
    }
    for (int64_t i = 0; i < r * cc; i++) mxw_store_f64(O->data, O->dtype, b * r * cc + i, Y[i]);
  }
  return 0;
}
static int fwd_trmm(const mxw_op_call *c) { return tri_forward(c, 0); }
static int fwd_trsm(const mxw_op_call *c) { return tri_forward(c, 1); }

/* _backward_linalg_trmm / _trsm (G, A, B[, X]) -> (dA, dB), with M = op(tri(A)):
 *   trmm left:  dB = alpha M^T G, dM = alpha G B^T;  right: dB = alpha G M^T, dM = alpha B^T G;
 *   trsm left:  Z = M^-T G, dB = alpha Z, dM = -Z X^T;  right: Z = G M^-T, dB = alpha Z, dM = -X^T Z;
 * dA = tri(dM, or dM^T with transpose). */
static int tri_backward(const mxw_op_call *c, int solve) {
  const TriParam *p = (const TriParam *)c->param;
  const mxw_tensor *G = &c->inputs[0], *A = &c->inputs[1], *B = &c->inputs[2], *Xo = solve ? &c->inputs[3] : NULL;
  mxw_tensor *dA = &c->outputs[0], *dB = &c->outputs[1];
  const int nd = B->shape.ndim;
  const int64_t n = A->shape.dims[nd - 1], r = B->shape.dims[nd - 2], cc = B->shape.dims[nd - 1],
                batch = batch_of(&A->shape, 2);
  double *M = (double *)mxw_scratch(0, (size_t)(3 * n * n + 3 * r * cc + 1) * sizeof(double));
  if (!M) return -1;
  double *Mt = M + n * n, *dM = Mt + n * n, *g = dM + n * n, *z = g + r * cc, *o = z + r * cc;
  for (int64_t b = 0; b < batch; b++) {
    load_tri(p, A, b, n, M);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) Mt[i * n + j] = M[j * n + i];
    for (int64_t i = 0; i < r * cc; i++) {
      g[i] = mxw_load_f64(G->data, G->dtype, b * r * cc + i);
      /* o: B (trmm) or X (trsm), the other factor of dM */
      o[i] =
          solve ? mxw_load_f64(Xo->data, Xo->dtype, b * r * cc + i) : mxw_load_f64(B->data, B->dtype, b * r * cc + i);
    }
    if (solve) {
      memcpy(z, g, (size_t)(r * cc) * sizeof(double));
      MXW_CHECK(tri_solve(Mt, z, r, cc, n, p->rightside) == 0, "matrix %lld of the batch is singular", (long long)b);
    } else {
      tri_mul(Mt, g, z, r, cc, n, p->rightside); /* M^T G or G M^T */
    }
    for (int64_t i = 0; i < r * cc; i++) mxw_store_f64(dB->data, dB->dtype, b * r * cc + i, p->alpha * z[i]);
    /* dM (n x n): left: U V^T over the r x c operands (rows n); right: V^T U */
    const double *u = solve ? z : g, *v = o;
    const double f = solve ? -1.0 : p->alpha;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0.0;
        if (!p->rightside)
          for (int64_t k = 0; k < cc; k++) s += u[i * cc + k] * v[j * cc + k];
        else
          for (int64_t k = 0; k < r; k++) s += v[k * cc + i] * u[k * cc + j];
        dM[i * n + j] = f * s;
      }
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        const int in = p->lower ? j <= i : j >= i;
        const double val = in ? (p->transpose ? dM[j * n + i] : dM[i * n + j]) : 0.0;
        mxw_store_f64(dA->data, dA->dtype, b * n * n + i * n + j, val);
      }
  }
  return 0;
}
static int fwd_backward_trmm(const mxw_op_call *c) { return tri_backward(c, 0); }
static int fwd_backward_trsm(const mxw_op_call *c) { return tri_backward(c, 1); }

static int grad_tri(mxw_grad_ctx *g, int solve) {
  mxw_gid d[2] = {-1, -1};
  if (solve)
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_linalg_trsm",
                            MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1), mxw_grad_out(g, 0)), d,
                            2));
  else
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_linalg_trmm",
                            MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1)), d, 2));
  MXW_TRY(mxw_grad_set(g, 0, d[0]));
  return mxw_grad_set(g, 1, d[1]);
}
static int grad_trmm(mxw_grad_ctx *g) { return grad_tri(g, 0); }
static int grad_trsm(mxw_grad_ctx *g) { return grad_tri(g, 1); }

static int infer_backward_tri(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  MXW_TRY(mxw_shape_assign(&out[0], &in[1], "A's gradient"));
  return mxw_shape_assign(&out[1], &in[2], "B's gradient");
}
static const char *const k_tri_bwd_inputs[] = {"ograd", "A", "B", "output", NULL};

/* trmm / trsm and their backward ops: one attribute table (TriParam). */
#define TRI_OP(VAR, NAME, ALIAS_LIST, DOC, NIN, INPUTS, NOUT, INFER, FWD, GRADSPEC) \
  static const mxw_op_def VAR = {.name = NAME,                                      \
                                 .aliases = ALIAS_LIST,                             \
                                 .doc = MXW_DOC(DOC),                               \
                                 .attrs = k_tri_attrs,                              \
                                 .num_attrs = 4,                                    \
                                 .param_size = sizeof(TriParam),                    \
                                 .num_inputs = NIN,                                 \
                                 .input_names = INPUTS,                             \
                                 .num_outputs = NOUT,                               \
                                 .infer_shape = INFER,                              \
                                 .half_as_f32 = 1,                                  \
                                 .forward = FWD,                                    \
                                 GRADSPEC};
TRI_OP(op_trmm, "_linalg_trmm", ALIASES("linalg_trmm"), "alpha op(A) B (rightside: alpha B op(A)) with A triangular", 2,
       k_AB, 1, infer_tri, fwd_trmm, .gradient = grad_trmm)
TRI_OP(op_trsm, "_linalg_trsm", ALIASES("linalg_trsm"),
       "X with op(A) X = alpha B (rightside: X op(A) = alpha B), A triangular", 2, k_AB, 1, infer_tri, fwd_trsm,
       .gradient = grad_trsm)
TRI_OP(op_backward_trmm, "_backward_linalg_trmm", NULL, "the gradients of trmm for A (its triangle) and B", 3,
       k_tri_bwd_inputs, 2, infer_backward_tri, fwd_backward_trmm, .gradient = NULL)
TRI_OP(op_backward_trsm, "_backward_linalg_trsm", NULL, "the gradients of trsm for A (its triangle) and B", 4,
       k_tri_bwd_inputs, 2, infer_backward_tri, fwd_backward_trsm, .gradient = NULL)

MXW_FAMILY(la_op, &op_trmm, &op_trsm, &op_backward_trmm, &op_backward_trsm, &op_gemm, &op_gemm2, &op_syrk, &op_potrf,
           &op_backward_potrf, &op_inverse, &op_det, &op_slogdet, &op_sumlogdiag, &op_extractdiag, &op_makediag,
           &op_potri, &op_extracttrian, &op_maketrian, &op_gelqf, &op_syevd, &op_backward_gelqf, &op_backward_syevd);
