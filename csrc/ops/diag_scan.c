/* diag_scan.c -- cumsum (MXNet 1.9.1's _np_cumsum, alias cumsum: src/operator/numpy/np_cumsum-inl.h)
 * and diag (src/operator/tensor/diag_op-inl.h).
 *
 * cumsum(a, axis=None, dtype=None): running sums along `axis` (None: over the flattened array, a
 * 1-D result), accumulated in the output dtype (`dtype`, else a's) as MXNet's `out[i] = out[i-1] +
 * OType(in[i])`; integer outputs wrap. Its gradient is the reversed running sum of the head gradient
 * (reverse, cumsum, reverse; reshaped to a's shape for axis None and cast to a's dtype), built from
 * differentiable ops.
 *
 * diag(data, k=0, axis1=0, axis2=1): of a 1-D array the square matrix with it on diagonal k; of
 * an N-D array the diagonal k of the (axis1, axis2) planes, appended as the last axis after the
 * other axes in order, of length min(h, w - k) (k >= 0) or min(h + k, w) (k < 0), at least 0.
 * Gradient: of a 1-D input the diagonal k of the head gradient (diag itself); of an N-D input
 * _backward_diag(ograd, data), which writes ograd back onto the diagonal of zeros (its own
 * gradient is diag again). These ops move or add elements only, so every dtype works. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mxw_parallel.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
typedef char shape_buf[160];

/* ==== cumsum =================================================================================== */
static const char *const k_cumsum_dtypes[] = {"float16", "float32", "float64", "int32", "int64", "int8", NULL};
static const int k_cumsum_dtype_ids[] = {MXW_FLOAT16, MXW_FLOAT32, MXW_FLOAT64, MXW_INT32, MXW_INT64, MXW_INT8};

typedef struct {
  mxw_opt_int axis;
  mxw_opt_int dtype;
} CumsumParam;

static const mxw_attr_spec k_cumsum_attrs[] = {
    MXW_A_OPT_INT("axis", CumsumParam, axis, "None", "axis of the running sums; None: the flattened array"),
    MXW_A_OPT_ENUM("dtype", CumsumParam, dtype, "None", k_cumsum_dtypes, "output dtype (None: the input's)"),
};
static const char *const k_a[] = {"a", NULL};

static int infer_cumsum(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const CumsumParam *p = (const CumsumParam *)param;
  (void)nin;
  (void)nout;
  if (in[0].ndim < 0) return 0;
  if (p->axis.has) {
    int ax;
    if (mxw_normalize_axis(p->axis.v, in[0].ndim, &ax) != 0)
      return mxw_fail("axis %lld is out of range for a %d-D array", (long long)p->axis.v, in[0].ndim);
    return mxw_shape_assign(&out[0], &in[0], "output");
  }
  int64_t n = 1;
  for (int i = 0; i < in[0].ndim; i++) {
    if (in[0].dims[i] < 0) return 0;
    n *= in[0].dims[i];
  }
  const mxw_shape s = mxw_shape_make(1, &n);
  return mxw_shape_assign(&out[0], &s, "output");
}

static int infer_type_cumsum(const void *param, int nin, int *in, int nout, int *out) {
  const CumsumParam *p = (const CumsumParam *)param;
  (void)nin;
  (void)nout;
  if (p->dtype.has) {
    const int dt = k_cumsum_dtype_ids[p->dtype.v];
    MXW_CHECK(out[0] < 0 || out[0] == dt, "output dtype %s does not match dtype=%s", mxw_dtype_name(out[0]),
              mxw_dtype_name(dt));
    out[0] = dt;
    return 0;
  }
  if (in[0] < 0) in[0] = out[0];
  if (out[0] < 0) out[0] = in[0];
  MXW_CHECK(in[0] == out[0], "output dtype %s does not match the input's %s", mxw_dtype_name(out[0]),
            mxw_dtype_name(in[0]));
  return 0;
}

typedef struct {
  const mxw_tensor *in;
  mxw_tensor *out;
  int64_t n, inner;
} scan_job;

/* int64 of a value as OType(x) for an integer OType: truncation, saturated at the int64 range. */
static int64_t to_i64(double x) {
  if (x != x) return 0;
  if (x >= 9223372036854775807.0) return INT64_MAX;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)x;
}

/* Lines [l0, l1) of the (outer, n, inner) view, line l = (o, i). */
static void scan_lines(void *ctx, int64_t l0, int64_t l1) {
  const scan_job *j = (const scan_job *)ctx;
  const mxw_tensor *in = j->in;
  mxw_tensor *out = j->out;
  const int64_t n = j->n, inner = j->inner;
  for (int64_t l = l0; l < l1; l++) {
    const int64_t base = (l / inner) * n * inner + l % inner;
    if (out->dtype == MXW_FLOAT32) {
      float s = 0.f;
      float *y = (float *)out->data;
      if (in->dtype == MXW_FLOAT32) {
        const float *x = (const float *)in->data;
        for (int64_t k = 0; k < n; k++) y[base + k * inner] = s += x[base + k * inner];
      } else {
        for (int64_t k = 0; k < n; k++)
          y[base + k * inner] = s += (float)mxw_load_f64(in->data, in->dtype, base + k * inner);
      }
    } else if (out->dtype == MXW_FLOAT64) {
      double s = 0.0;
      for (int64_t k = 0; k < n; k++) {
        s += mxw_load_f64(in->data, in->dtype, base + k * inner);
        ((double *)out->data)[base + k * inner] = s;
      }
    } else { /* integer outputs: int64 with wrap-around, then the output type's bits */
      uint64_t s = 0;
      const int int_in = !mxw_dtype_is_float(in->dtype);
      for (int64_t k = 0; k < n; k++) {
        const int64_t idx = base + k * inner;
        int64_t v;
        if (int_in) {
          int64_t tmp = 0;
          mxw_convert((const char *)in->data + idx * mxw_dtype_size(in->dtype), in->dtype, &tmp, MXW_INT64, 1);
          v = tmp;
        } else {
          v = to_i64(mxw_load_f64(in->data, in->dtype, idx));
        }
        s += (uint64_t)v;
        const int64_t sv = (int64_t)s;
        mxw_convert(&sv, MXW_INT64, (char *)out->data + idx * mxw_dtype_size(out->dtype), out->dtype, 1);
      }
    }
  }
}

static int fwd_cumsum(const mxw_op_call *c) {
  const CumsumParam *p = (const CumsumParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t outer = 1, n = mxw_tensor_size(in), inner = 1;
  if (p->axis.has && in->shape.ndim > 0) {
    int ax;
    MXW_TRY(mxw_normalize_axis(p->axis.v, in->shape.ndim, &ax));
    n = in->shape.dims[ax];
    for (int i = 0; i < ax; i++) outer *= in->shape.dims[i];
    for (int i = ax + 1; i < in->shape.ndim; i++) inner *= in->shape.dims[i];
  }
  if (outer * n * inner == 0) return 0;
  scan_job j = {in, out, n, inner};
  mxw_parallel_run(outer * inner, 1, (double)n * mxw_par_dtype_factor(out->dtype), scan_lines, &j);
  return 0;
}

/* dx = reverse(cumsum(reverse(ograd))) along the axis (the flattened one for axis None, then a's
 * shape), cast to a's dtype when `dtype` changed it. */
static int grad_cumsum(mxw_grad_ctx *g) {
  const CumsumParam *p = (const CumsumParam *)mxw_grad_param(g);
  char ax[32];
  snprintf(ax, sizeof ax, "%lld", (long long)(p->axis.has ? p->axis.v : 0));
  const char *const *kv = MXW_KV("axis", ax);
  mxw_gid d = mxw_grad_op(g, "reverse", kv, MXW_GIDS(mxw_grad_ograd(g, 0)));
  d = mxw_grad_op(g, "_np_cumsum", kv, MXW_GIDS(d));
  d = mxw_grad_op(g, "reverse", kv, MXW_GIDS(d));
  const mxw_gid x = mxw_grad_in(g, 0);
  if (!p->axis.has) d = mxw_grad_op(g, "reshape_like", NULL, MXW_GIDS(d, x));
  const int dt = mxw_grad_in_dtype(g, 0);
  if (p->dtype.has && k_cumsum_dtype_ids[p->dtype.v] != dt)
    d = mxw_grad_op(g, "Cast", MXW_KV("dtype", mxw_dtype_name(dt)), MXW_GIDS(d));
  return mxw_grad_set(g, 0, d);
}

static const mxw_op_def op_cumsum = {
    .name = "_np_cumsum",
    .aliases = ALIASES("cumsum"),
    .doc = MXW_DOC("running sums along an axis (None: of the flattened array), in the output dtype"),
    .attrs = k_cumsum_attrs,
    .num_attrs = 2,
    .param_size = sizeof(CumsumParam),
    .num_inputs = 1,
    .input_names = k_a,
    .num_outputs = 1,
    .infer_shape = infer_cumsum,
    .infer_type = infer_type_cumsum,
    .half_as_f32 = 1,
    .forward = fwd_cumsum,
    .gradient = grad_cumsum,
};

/* ==== diag ===================================================================================== */
typedef struct {
  int64_t k, axis1, axis2;
} DiagParam;

static const mxw_attr_spec k_diag_attrs[] = {
    MXW_A_INT("k", DiagParam, k, "0", "the diagonal: 0 the main one, > 0 above it, < 0 below"),
    MXW_A_INT("axis1", DiagParam, axis1, "0", "first axis of the planes (N-D input)"),
    MXW_A_INT("axis2", DiagParam, axis2, "1", "second axis of the planes (N-D input)"),
};
static const char *const k_data[] = {"data", NULL};
static const char *const k_ograd_data[] = {"ograd", "data", NULL};

/* The N-D case's axes (normalized, distinct) and diagonal length. */
static int diag_plan(const DiagParam *p, const mxw_shape *s, int *a1, int *a2, int64_t *len) {
  shape_buf b;
  MXW_CHECK(s->ndim >= 2, "data must be 1-D or at least 2-D, got shape %s", SHAPE_STR(s, b));
  if (mxw_normalize_axis(p->axis1, s->ndim, a1) != 0 || mxw_normalize_axis(p->axis2, s->ndim, a2) != 0)
    return mxw_fail("axis1 = %lld or axis2 = %lld is out of range for shape %s", (long long)p->axis1,
                    (long long)p->axis2, SHAPE_STR(s, b));
  MXW_CHECK(*a1 != *a2, "axis1 and axis2 cannot refer to the same axis %d", *a1);
  const int64_t h = s->dims[*a1], w = s->dims[*a2];
  int64_t n = p->k == 0 ? (h < w ? h : w) : p->k > 0 ? (h < w - p->k ? h : w - p->k) : (h + p->k < w ? h + p->k : w);
  *len = n < 0 ? 0 : n;
  return 0;
}

static int infer_diag(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const DiagParam *p = (const DiagParam *)param;
  (void)nin;
  (void)nout;
  if (in[0].ndim < 0) return 0;
  for (int i = 0; i < in[0].ndim; i++)
    if (in[0].dims[i] < 0) return 0;
  shape_buf b;
  MXW_CHECK(in[0].ndim > 0, "data must be 1-D or at least 2-D, got shape %s", SHAPE_STR(&in[0], b));
  if (in[0].ndim == 1) {
    const int64_t n = in[0].dims[0] + (p->k < 0 ? -p->k : p->k);
    const int64_t d[2] = {n, n};
    const mxw_shape s = mxw_shape_make(2, d);
    return mxw_shape_assign(&out[0], &s, "output");
  }
  int a1, a2;
  int64_t len;
  MXW_TRY(diag_plan(p, &in[0], &a1, &a2, &len));
  mxw_shape s;
  memset(&s, 0, sizeof s);
  for (int i = 0; i < in[0].ndim; i++)
    if (i != a1 && i != a2) s.dims[s.ndim++] = in[0].dims[i];
  s.dims[s.ndim++] = len;
  return mxw_shape_assign(&out[0], &s, "output");
}

/* Visits the diagonal of an N-D x: fn(x index, diagonal-array index) for every element, the
 * diagonal array laid out as (other axes..., len). */
typedef struct {
  int a1, a2, nd;
  int64_t len, off1, off2; /* start offsets of the diagonal along a1 and a2 */
  int64_t dims[MXW_MAX_NDIM], strides[MXW_MAX_NDIM];
} diag_walk;

static void make_walk(const DiagParam *p, const mxw_shape *s, diag_walk *w) {
  diag_plan(p, s, &w->a1, &w->a2, &w->len);
  w->nd = s->ndim;
  int64_t st = 1;
  for (int i = s->ndim - 1; i >= 0; i--) {
    w->dims[i] = s->dims[i];
    w->strides[i] = st;
    st *= s->dims[i];
  }
  w->off1 = p->k < 0 ? -p->k : 0;
  w->off2 = p->k > 0 ? p->k : 0;
}

/* Copies element bytes between x (N-D) and the diagonal array d: to_diag 1 reads x into d, 0 writes d
 * into x (already zeroed). */
static void walk_copy(const diag_walk *w, const char *src, char *dst, size_t es, int to_diag) {
  int64_t outer = 1;
  for (int i = 0; i < w->nd; i++)
    if (i != w->a1 && i != w->a2) outer *= w->dims[i];
  int64_t idx[MXW_MAX_NDIM] = {0};
  for (int64_t o = 0; o < outer; o++) {
    /* o -> the other axes' multi-index (last axis fastest) */
    int64_t q = o, base = 0;
    for (int i = w->nd - 1; i >= 0; i--) {
      if (i == w->a1 || i == w->a2) continue;
      idx[i] = q % w->dims[i];
      q /= w->dims[i];
      base += idx[i] * w->strides[i];
    }
    for (int64_t t = 0; t < w->len; t++) {
      const int64_t xi = base + (w->off1 + t) * w->strides[w->a1] + (w->off2 + t) * w->strides[w->a2];
      const int64_t di = o * w->len + t;
      if (to_diag)
        memcpy(dst + (size_t)di * es, src + (size_t)xi * es, es);
      else
        memcpy(dst + (size_t)xi * es, src + (size_t)di * es, es);
    }
  }
}

static int fwd_diag(const mxw_op_call *c) {
  const DiagParam *p = (const DiagParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  const size_t es = (size_t)mxw_dtype_size(in->dtype);
  if (in->shape.ndim == 1) { /* the square matrix with data on diagonal k */
    const int64_t n = in->shape.dims[0], m = out->shape.dims[0];
    memset(out->data, 0, (size_t)(m * m) * es);
    for (int64_t i = 0; i < n; i++) {
      const int64_t r = p->k >= 0 ? i : i - p->k, col = p->k >= 0 ? i + p->k : i;
      memcpy((char *)out->data + (size_t)(r * m + col) * es, (const char *)in->data + (size_t)i * es, es);
    }
    return 0;
  }
  diag_walk w;
  make_walk(p, &in->shape, &w);
  walk_copy(&w, (const char *)in->data, (char *)out->data, es, 1);
  return 0;
}

static int grad_diag(mxw_grad_ctx *g) {
  mxw_gid dx = -1;
  if (mxw_grad_in_shape(g, 0)->ndim == 1) { /* the diagonal k of the (2-D) head gradient */
    MXW_TRY(mxw_grad_op_fwd(g, "diag", MXW_GIDS(mxw_grad_ograd(g, 0)), &dx, 1));
  } else {
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_diag", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0)), &dx, 1));
  }
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_diag = {
    .name = "diag",
    .doc = MXW_DOC("1-D: the square matrix with data on diagonal k; N-D: diagonal k of the (axis1, axis2) planes"),
    .attrs = k_diag_attrs,
    .num_attrs = 3,
    .param_size = sizeof(DiagParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_diag,
    .forward = fwd_diag,
    .gradient = grad_diag,
};

/* _backward_diag(ograd, data): zeros of data's shape with ograd on the diagonal (N-D data). */
static int fwd_backward_diag(const mxw_op_call *c) {
  const DiagParam *p = (const DiagParam *)c->param;
  const mxw_tensor *og = &c->inputs[0], *x = &c->inputs[1];
  mxw_tensor *dx = &c->outputs[0];
  MXW_CHECK(og->dtype == dx->dtype, "ograd is %s but the gradient is %s", mxw_dtype_name(og->dtype),
            mxw_dtype_name(dx->dtype));
  const size_t es = (size_t)mxw_dtype_size(dx->dtype);
  memset(dx->data, 0, (size_t)mxw_tensor_size(dx) * es);
  diag_walk w;
  MXW_TRY(diag_plan(p, &x->shape, &w.a1, &w.a2, &w.len));
  make_walk(p, &x->shape, &w);
  walk_copy(&w, (const char *)og->data, (char *)dx->data, es, 0);
  return 0;
}
/* linear in ograd, its adjoint the extraction: diag of the incoming gradient */
static int grad_backward_diag(mxw_grad_ctx *g) {
  mxw_gid d = -1;
  MXW_TRY(mxw_grad_op_fwd(g, "diag", MXW_GIDS(mxw_grad_ograd(g, 0)), &d, 1));
  return mxw_grad_set(g, 0, d);
}
static const mxw_op_def op_backward_diag = {
    .name = "_backward_diag",
    .doc = MXW_DOC("the gradient of diag of N-D data: ograd written onto the diagonal of zeros"),
    .attrs = k_diag_attrs,
    .num_attrs = 3,
    .param_size = sizeof(DiagParam),
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_second,
    .infer_type = mxw_infer_type_first,
    .forward = fwd_backward_diag,
    .gradient = grad_backward_diag,
};

MXW_FAMILY(diag_scan, &op_cumsum, &op_diag, &op_backward_diag);
