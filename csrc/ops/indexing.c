/* indexing.c -- take, where, topk, sort, argsort, one_hot and gather_nd.
 * Semantics: ../shared/spec/ops.md §7 (MXNet 1.9.1 indexing_op.h, control_flow_op.h,
 * ordering_op-inl.h). Indices may come in any dtype: integers are used exactly, floats are
 * truncated toward zero (int64(idx), as MXNet's static_cast). Data is moved as raw elements, so
 * every dtype is supported; sorting compares values as double.
 *
 * Gradients (MXNet's FGradient): take, gather_nd, topk (values) and sort add the output's
 * gradient back at the positions each element was read from (_backward_take, _backward_gather_nd,
 * _backward_topk: scatter-adds, so repeated indices accumulate); where routes it by the
 * condition; index inputs, argsort, one_hot and topk's indices/mask get none. */
#include <math.h>
#include <stdio.h>

#include "../core/mxw_core.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define SHAPE_STR(s, buf) mxw_shape_str((s), (buf), sizeof(buf))

static const char *const k_data[] = {"data", NULL};

/* int64(v) for an index held in any dtype (NaN taken as 0, huge values pinned so the
 * conversion is defined). */
static int64_t load_index(const mxw_tensor *t, int64_t i) {
  switch (t->dtype) {
    case MXW_INT32: return ((const int32_t *)t->data)[i];
    case MXW_INT64: return ((const int64_t *)t->data)[i];
    case MXW_UINT8:
    case MXW_BOOL: return ((const uint8_t *)t->data)[i];
    case MXW_INT8: return ((const int8_t *)t->data)[i];
    default: break;
  }
  double v = mxw_load_f64(t->data, t->dtype, i);
  if (v != v) return 0;
  if (v > 4e18) return (int64_t)4e18;
  if (v < -4e18) return -(int64_t)4e18;
  return (int64_t)v;
}

static mxw_shape unknown_rank(void) {
  mxw_shape s;
  memset(&s, 0, sizeof s);
  s.ndim = -1;
  return s;
}

static int64_t prod_dims(const mxw_shape *s, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; d++) n *= s->dims[d];
  return n;
}

/* dst[di + i] += src[si + i] for i < n (gradients: float32/float64 directly, other dtypes through double). */
static void add_row(int dtype, void *dst, int64_t di, const void *src, int64_t si, int64_t n) {
  if (dtype == MXW_FLOAT32) {
    float *d = (float *)dst + di;
    const float *s = (const float *)src + si;
    for (int64_t i = 0; i < n; i++) d[i] += s[i];
  } else if (dtype == MXW_FLOAT64) {
    double *d = (double *)dst + di;
    const double *s = (const double *)src + si;
    for (int64_t i = 0; i < n; i++) d[i] += s[i];
  } else {
    for (int64_t i = 0; i < n; i++)
      mxw_store_f64(dst, dtype, di + i, mxw_load_f64(dst, dtype, di + i) + mxw_load_f64(src, dtype, si + i));
  }
}

static void zero_tensor(mxw_tensor *t) {
  size_t n = (size_t)mxw_tensor_size(t) * (size_t)mxw_dtype_size(t->dtype);
  if (n) memset(t->data, 0, n);
}

/* The dtype flag of an entry of a dtype-name enum. */
static int enum_dtype(const char *const *names, int index) { return mxw_dtype_from_name(names[index]); }

/* ==== take ====================================================================================== */
enum { TAKE_RAISE, TAKE_WRAP, TAKE_CLIP };
static const char *const k_take_modes[] = {"raise", "wrap", "clip", NULL};
static const char *const k_take_inputs[] = {"a", "indices", NULL};
typedef struct {
  int64_t axis;
  int mode;
} TakeParam;

static const mxw_attr_spec k_take_attrs[] = {
    MXW_A_INT("axis", TakeParam, axis, "0", "the axis of `a` to take along; negative counts from the end"),
    MXW_A_ENUM("mode", TakeParam, mode, "clip", k_take_modes,
               "out-of-range indices: clip to the ends, wrap around, or raise an error"),
};

/* output = a.shape[:axis] + indices.shape + a.shape[axis+1:] */
static int infer_take(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const TakeParam *p = (const TakeParam *)param;
  const mxw_shape *a = &in[0], *idx = &in[1];
  char s1[128], s2[128];
  if (a->ndim < 0 || idx->ndim < 0) return 0;
  MXW_CHECK(a->ndim >= 1, "a must have at least 1 dim, got shape %s", SHAPE_STR(a, s1));
  int ax;
  if (mxw_normalize_axis(p->axis, a->ndim, &ax) != 0)
    return mxw_fail("axis=%lld is out of range [%d, %d] for a of shape %s", (long long)p->axis, -a->ndim, a->ndim - 1,
                    SHAPE_STR(a, s1));
  int ond = a->ndim - 1 + idx->ndim;
  MXW_CHECK(ond <= MXW_MAX_NDIM, "the output would have %d dims (a %s, indices %s); at most %d are supported", ond,
            SHAPE_STR(a, s1), SHAPE_STR(idx, s2), MXW_MAX_NDIM);
  if (a->dims[ax] == 0 && mxw_shape_known(idx) && mxw_shape_size(idx) > 0)
    return mxw_fail("axis %d of a (shape %s) is empty, so no index can be taken from it", ax, SHAPE_STR(a, s1));
  mxw_shape o;
  o.ndim = ond;
  int k = 0;
  for (int d = 0; d < ax; d++) o.dims[k++] = a->dims[d];
  for (int d = 0; d < idx->ndim; d++) o.dims[k++] = idx->dims[d];
  for (int d = ax + 1; d < a->ndim; d++) o.dims[k++] = a->dims[d];
  return mxw_shape_assign(&out[0], &o, "output");
}

/* output has a's dtype; the indices may have any dtype */
static int infer_type_first_out(const void *param, int nin, int *in, int nout, int *out) {
  return mxw_infer_type_same(param, 1, in, nout, out);
}

/* The row of an index k along an axis of size n (n > 0): wrapped, or clipped (raise checked k before). */
static int64_t take_index(const TakeParam *p, int64_t k, int64_t n) {
  if (p->mode == TAKE_WRAP) {
    k %= n;
    return k < 0 ? k + n : k;
  }
  return k < 0 ? 0 : (k >= n ? n - 1 : k);
}

static int fwd_take(const mxw_op_call *c) {
  const TakeParam *p = (const TakeParam *)c->param;
  const mxw_tensor *a = &c->inputs[0], *idx = &c->inputs[1];
  mxw_tensor *out = &c->outputs[0];
  int ax;
  MXW_TRY(mxw_normalize_axis(p->axis, a->shape.ndim, &ax));
  int64_t outer = prod_dims(&a->shape, 0, ax), n = a->shape.dims[ax];
  int64_t inner = prod_dims(&a->shape, ax + 1, a->shape.ndim), m = mxw_tensor_size(idx);
  if (p->mode == TAKE_RAISE) {
    for (int64_t j = 0; j < m; j++) {
      int64_t k = load_index(idx, j);
      if (k < 0 || k >= n)
        return mxw_fail("index %lld (indices element %lld) is out of bounds for axis %d with size %lld (mode='raise')",
                        (long long)k, (long long)j, ax, (long long)n);
    }
  }
  if (outer * m * inner == 0) return 0;
  size_t es = (size_t)mxw_dtype_size(a->dtype), row = (size_t)inner * es;
  const char *src = (const char *)a->data;
  char *dst = (char *)out->data;
  for (int64_t j = 0; j < m; j++) {
    int64_t k = take_index(p, load_index(idx, j), n);
    for (int64_t o = 0; o < outer; o++) memcpy(dst + (size_t)(o * m + j) * row, src + (size_t)(o * n + k) * row, row);
  }
  return 0;
}

/* da = ograd added into zeros of a's shape at the (clipped or wrapped) indices: repeated indices
 * accumulate (MXNet's _backward_take); the indices get no gradient. */
static int grad_take(mxw_grad_ctx *g) {
  mxw_gid da;
  mxw_gid og = mxw_grad_ograd(g, 0), idx = mxw_grad_in(g, 1), a = mxw_grad_in(g, 0);
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_take", MXW_GIDS(og, idx, a), &da, 1));
  return mxw_grad_set(g, 0, da);
}

static const mxw_op_def op_take = {
    .name = "take",
    .aliases = ALIASES("_npi_take"),
    .doc = MXW_DOC("elements of `a` at `indices` along an axis (out-of-range indices clipped, wrapped or an error)"),
    .attrs = k_take_attrs,
    .num_attrs = (int)(sizeof k_take_attrs / sizeof k_take_attrs[0]),
    .param_size = sizeof(TakeParam),
    .num_inputs = 2,
    .input_names = k_take_inputs,
    .num_outputs = 1,
    .infer_shape = infer_take,
    .infer_type = infer_type_first_out,
    .forward = fwd_take,
    .gradient = grad_take,
};

/* _backward_take(ograd, indices, a): a's shape, ograd's dtype */
static const char *const k_backward_take_inputs[] = {"ograd", "indices", "a", NULL};
static int infer_backward_take(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  MXW_TRY(mxw_shape_assign(&out[0], &in[2], "output"));
  return mxw_shape_assign(&in[2], &out[0], "a");
}
static int infer_type_backward_take(const void *param, int nin, int *in, int nout, int *out) {
  int t[2] = {in[0], in[2]};
  MXW_TRY(mxw_infer_type_same(param, 2, t, nout, out));
  in[0] = t[0];
  in[2] = t[1];
  return 0;
}
static int fwd_backward_take(const mxw_op_call *c) {
  const TakeParam *p = (const TakeParam *)c->param;
  const mxw_tensor *gy = &c->inputs[0], *idx = &c->inputs[1];
  mxw_tensor *ga = &c->outputs[0];
  int ax;
  MXW_TRY(mxw_normalize_axis(p->axis, ga->shape.ndim, &ax));
  int64_t outer = prod_dims(&ga->shape, 0, ax), n = ga->shape.dims[ax];
  int64_t inner = prod_dims(&ga->shape, ax + 1, ga->shape.ndim), m = mxw_tensor_size(idx);
  zero_tensor(ga);
  if (outer * m * inner == 0 || n == 0) return 0;
  for (int64_t j = 0; j < m; j++) {
    int64_t k = take_index(p, load_index(idx, j), n);
    for (int64_t o = 0; o < outer; o++)
      add_row(ga->dtype, ga->data, (o * n + k) * inner, gy->data, (o * m + j) * inner, inner);
  }
  return 0;
}
/* linear in ograd: its gradient is take again */
static int grad_backward_take(mxw_grad_ctx *g) {
  mxw_gid d;
  MXW_TRY(mxw_grad_op_fwd(g, "take", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 1)), &d, 1));
  return mxw_grad_set(g, 0, d);
}
static const mxw_op_def op_backward_take = {
    .name = "_backward_take",
    .doc = MXW_DOC("the gradient of take: ograd added into zeros of a's shape at the indices"),
    .attrs = k_take_attrs,
    .num_attrs = (int)(sizeof k_take_attrs / sizeof k_take_attrs[0]),
    .param_size = sizeof(TakeParam),
    .num_inputs = 3,
    .input_names = k_backward_take_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_take,
    .infer_type = infer_type_backward_take,
    .forward = fwd_backward_take,
    .gradient = grad_backward_take,
};

/* ==== where ===================================================================================== */
static const char *const k_where_inputs[] = {"condition", "x", "y", NULL};

/* x, y and the output share one shape; condition has it too, or is 1-D of length x.shape[0]
 * (then it selects whole rows). */
static int infer_where(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  mxw_shape s = in[1];
  char a[128], b[128];
  if (mxw_shape_assign(&s, &in[2], "y") != 0)
    return mxw_fail("x and y must have the same shape, got %s and %s", SHAPE_STR(&in[1], a), SHAPE_STR(&in[2], b));
  MXW_TRY(mxw_shape_assign(&s, &out[0], "output"));
  MXW_TRY(mxw_shape_assign(&in[1], &s, "x"));
  MXW_TRY(mxw_shape_assign(&in[2], &s, "y"));
  MXW_TRY(mxw_shape_assign(&out[0], &s, "output"));
  const mxw_shape *cond = &in[0];
  if (cond->ndim < 0 || s.ndim < 0) return 0;
  if (cond->ndim == s.ndim) {
    if (mxw_shape_assign(&in[0], &s, "condition") != 0)
      return mxw_fail("condition of shape %s must have the shape of x %s, or be 1-D of length x.shape[0]",
                      SHAPE_STR(cond, a), SHAPE_STR(&s, b));
    return 0;
  }
  MXW_CHECK(cond->ndim == 1 && s.ndim >= 1 && (cond->dims[0] < 0 || s.dims[0] < 0 || cond->dims[0] == s.dims[0]),
            "condition of shape %s must have the shape of x %s, or be 1-D of length x.shape[0]", SHAPE_STR(cond, a),
            SHAPE_STR(&s, b));
  return 0;
}

/* x, y and the output share a dtype; the condition may have any dtype */
static int infer_type_where(const void *param, int nin, int *in, int nout, int *out) {
  return mxw_infer_type_same(param, 2, in + 1, nout, out);
}

static int fwd_where(const mxw_op_call *c) {
  const mxw_tensor *cond = &c->inputs[0], *x = &c->inputs[1], *y = &c->inputs[2];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(x);
  size_t es = (size_t)mxw_dtype_size(x->dtype);
  const char *px = (const char *)x->data, *py = (const char *)y->data;
  char *po = (char *)out->data;
  if (cond->shape.ndim == x->shape.ndim) {
    if (cond->dtype == MXW_FLOAT32 && x->dtype == MXW_FLOAT32) {
      const float *cf = (const float *)cond->data, *xf = (const float *)px, *yf = (const float *)py;
      float *of = (float *)po;
      for (int64_t i = 0; i < n; i++) of[i] = cf[i] != 0.f ? xf[i] : yf[i];
      return 0;
    }
    for (int64_t i = 0; i < n; i++)
      memcpy(po + (size_t)i * es, (mxw_load_f64(cond->data, cond->dtype, i) != 0 ? px : py) + (size_t)i * es, es);
    return 0;
  }
  int64_t rows = x->shape.dims[0], row = rows ? n / rows : 0;
  for (int64_t r = 0; r < rows; r++) {
    const char *src = mxw_load_f64(cond->data, cond->dtype, r) != 0 ? px : py;
    memcpy(po + (size_t)(r * row) * es, src + (size_t)(r * row) * es, (size_t)row * es);
  }
  return 0;
}

/* dx = ograd where condition, dy = ograd elsewhere; the condition gets none (MXNet's _backward_where). */
static int grad_where(mxw_grad_ctx *g) {
  mxw_gid og = mxw_grad_ograd(g, 0), cond = mxw_grad_in(g, 0);
  mxw_gid zero = mxw_grad_zeros_like(g, og);
  MXW_TRY(mxw_grad_set(g, 1, mxw_grad_op(g, "where", NULL, MXW_GIDS(cond, og, zero))));
  return mxw_grad_set(g, 2, mxw_grad_op(g, "where", NULL, MXW_GIDS(cond, zero, og)));
}

static const mxw_op_def op_where = {
    .name = "where",
    .aliases = ALIASES("_sparse_where"),
    .doc = MXW_DOC("condition != 0 ? x : y, elementwise or by rows of a 1-D condition"),
    .num_inputs = 3,
    .input_names = k_where_inputs,
    .num_outputs = 1,
    .infer_shape = infer_where,
    .infer_type = infer_type_where,
    .forward = fwd_where,
    .gradient = grad_where,
};

/* ==== ordering: topk, sort, argsort ============================================================= */
enum { RET_VALUE, RET_INDICES, RET_MASK, RET_BOTH };
static const char *const k_ret_types[] = {"value", "indices", "mask", "both", NULL};
static const char *const k_index_dtypes[] = {"uint8", "int32", "int64", "float16", "float32", "float64", NULL};

typedef struct {
  mxw_opt_int axis;
  int64_t k;
  int ret_typ;
  int is_ascend;
  int dtype; /* index into k_index_dtypes */
} TopKParam;
typedef struct {
  mxw_opt_int axis;
  int is_ascend;
} SortParam;
typedef struct {
  mxw_opt_int axis;
  int is_ascend;
  int dtype;
} ArgSortParam;

static const mxw_attr_spec k_topk_attrs[] = {
    MXW_A_OPT_INT("axis", TopKParam, axis, "-1", "axis to select along; None flattens the input"),
    MXW_A_INT("k", TopKParam, k, "1", "number of elements to select; k <= 0 selects all"),
    MXW_A_ENUM("ret_typ", TopKParam, ret_typ, "indices", k_ret_types,
               "value, indices, mask (1 at selected positions) or both [value, indices]"),
    MXW_A_BOOL("is_ascend", TopKParam, is_ascend, "False", "select the smallest (True) or largest (False)"),
    MXW_A_ENUM("dtype", TopKParam, dtype, "float32", k_index_dtypes, "dtype of the returned indices"),
};
static const mxw_attr_spec k_sort_attrs[] = {
    MXW_A_OPT_INT("axis", SortParam, axis, "-1", "axis to sort along; None flattens the input"),
    MXW_A_BOOL("is_ascend", SortParam, is_ascend, "True", "ascending (True) or descending order"),
};
static const mxw_attr_spec k_argsort_attrs[] = {
    MXW_A_OPT_INT("axis", ArgSortParam, axis, "-1", "axis to sort along; None flattens the input"),
    MXW_A_BOOL("is_ascend", ArgSortParam, is_ascend, "True", "ascending (True) or descending order"),
    MXW_A_ENUM("dtype", ArgSortParam, dtype, "float32", k_index_dtypes, "dtype of the returned indices"),
};

/* Rows to sort: the input as (outer, n, inner) around the axis, or (1, size, 1) for axis=None. */
typedef struct {
  int64_t outer, n, inner, k;
  int axis; /* -1 for None */
} order_geom;

static int order_geometry(const mxw_opt_int *axis, int64_t k_attr, const mxw_shape *s, order_geom *g) {
  if (!axis->has) {
    g->axis = -1;
    g->outer = g->inner = 1;
    g->n = mxw_shape_size(s);
  } else {
    char a[128];
    if (mxw_normalize_axis(axis->v, s->ndim, &g->axis) != 0)
      return mxw_fail("axis=%lld is out of range for data of shape %s", (long long)axis->v, SHAPE_STR(s, a));
    g->outer = prod_dims(s, 0, g->axis);
    g->n = s->dims[g->axis];
    g->inner = prod_dims(s, g->axis + 1, s->ndim);
  }
  g->k = k_attr <= 0 ? g->n : k_attr;
  MXW_CHECK(g->k <= g->n, "k=%lld must not exceed the %lld elements along the axis", (long long)g->k, (long long)g->n);
  return 0;
}

/* Shape of the value / index outputs: the axis resized to k, or (k,) when flattened. */
static mxw_shape selected_shape(const mxw_shape *s, const order_geom *g) {
  if (g->axis < 0) return mxw_shape_make(1, &g->k);
  mxw_shape o = *s;
  o.dims[g->axis] = g->k;
  return o;
}

static int check_index_dtype(int dtype, int64_t n) {
  int64_t max = dtype == MXW_UINT8     ? 255
                : dtype == MXW_FLOAT16 ? 2048
                : dtype == MXW_FLOAT32 ? 16777216
                : dtype == MXW_INT32   ? 2147483647
                                       : INT64_MAX;
  MXW_CHECK(n <= max, "index dtype %s cannot represent the indices of an axis with %lld elements (at most %lld)",
            mxw_dtype_name(dtype), (long long)n, (long long)max);
  return 0;
}

static int topk_num_outputs(const void *param) {
  int r = ((const TopKParam *)param)->ret_typ;
  return r == RET_INDICES || r == RET_MASK ? 1 : 2;
}
static int topk_num_visible(const void *param) { return ((const TopKParam *)param)->ret_typ == RET_BOTH ? 2 : 1; }
static int num_visible_one(const void *param) {
  (void)param;
  return 1;
}

static int infer_topk(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const TopKParam *p = (const TopKParam *)param;
  if (!mxw_shape_known(&in[0])) return 0;
  order_geom g;
  MXW_TRY(order_geometry(&p->axis, p->k, &in[0], &g));
  if (p->ret_typ == RET_MASK) return mxw_shape_assign(&out[0], &in[0], "output");
  mxw_shape o = selected_shape(&in[0], &g);
  for (int i = 0; i < nout; i++) MXW_TRY(mxw_shape_assign(&out[i], &o, i ? "indices" : "output"));
  return 0;
}

/* indices -> the dtype attribute; mask, value -> the data dtype; the hidden indices of 'value'
 * are int32, those of 'both' the dtype attribute (MXNet's TopKType). */
static int infer_type_topk(const void *param, int nin, int *in, int nout, int *out) {
  const TopKParam *p = (const TopKParam *)param;
  int idt = enum_dtype(k_index_dtypes, p->dtype);
  if (p->ret_typ == RET_INDICES) {
    MXW_CHECK(out[0] < 0 || out[0] == idt, "output dtype %s differs from dtype=%s", mxw_dtype_name(out[0]),
              mxw_dtype_name(idt));
    out[0] = idt;
    return 0;
  }
  MXW_TRY(mxw_infer_type_same(param, 1, in, 1, out));
  if (nout > 1) {
    int want = p->ret_typ == RET_VALUE ? MXW_INT32 : idt;
    MXW_CHECK(out[1] < 0 || out[1] == want, "indices dtype %s differs from %s", mxw_dtype_name(out[1]),
              mxw_dtype_name(want));
    out[1] = want;
  }
  return 0;
}

/* NaN orders above every number (last when ascending, first when descending). */
static inline int key_less(double a, double b) {
  if (a != a) return 0;
  if (b != b) return 1;
  return a < b;
}

/* Stable bottom-up merge sort of idx[0..n) by key (ascending or descending); ties keep the lower
 * index first. tmp has room for n entries. */
static void stable_argsort(const double *key, int64_t n, int descending, int64_t *idx, int64_t *tmp) {
  for (int64_t i = 0; i < n; i++) idx[i] = i;
  int64_t *src = idx, *dst = tmp;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) {
        /* take from the right run only when it strictly goes first: stability */
        int right_first = descending ? key_less(key[src[i]], key[src[j]]) : key_less(key[src[j]], key[src[i]]);
        dst[o++] = right_first ? src[j++] : src[i++];
      }
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != idx) memcpy(idx, src, (size_t)n * sizeof *idx);
}

/* a goes before b: by key, ties by the lower index -- the order a stable sort gives. */
static inline int goes_before(const double *key, int64_t a, int64_t b, int descending) {
  double ka = key[a], kb = key[b];
  if (descending ? key_less(kb, ka) : key_less(ka, kb)) return 1;
  if (descending ? key_less(ka, kb) : key_less(kb, ka)) return 0;
  return a < b;
}

/* Moves heap[i] down a heap whose root is the element that goes last. */
static void sift_down(const double *key, int64_t *heap, int64_t size, int64_t i, int descending) {
  for (;;) {
    int64_t l = 2 * i + 1, r = l + 1, worst = i;
    if (l < size && goes_before(key, heap[worst], heap[l], descending)) worst = l;
    if (r < size && goes_before(key, heap[worst], heap[r], descending)) worst = r;
    if (worst == i) return;
    int64_t t = heap[i];
    heap[i] = heap[worst];
    heap[worst] = t;
    i = worst;
  }
}

/* The first k of n in the stable order, sorted, into idx[0..k): a heap of the k best seen so far
 * (O(n log k)), for small k. */
static void select_first_k(const double *key, int64_t n, int64_t k, int descending, int64_t *idx) {
  for (int64_t i = 0; i < k; i++) idx[i] = i;
  for (int64_t i = k / 2 - 1; i >= 0; i--) sift_down(key, idx, k, i, descending);
  for (int64_t j = k; j < n; j++) {
    if (goes_before(key, j, idx[0], descending)) {
      idx[0] = j;
      sift_down(key, idx, k, 0, descending);
    }
  }
  for (int64_t end = k - 1; end > 0; end--) { /* heap sort: the worst goes to the back */
    int64_t t = idx[0];
    idx[0] = idx[end];
    idx[end] = t;
    sift_down(key, idx, end, 0, descending);
  }
}

/* Sorts every row and writes the first k of each: values (data dtype) into val, indices into
 * ind, or 1s into mask (zeroed first). Any of val / ind / mask may be NULL. */
static int order_run(const mxw_tensor *in, const order_geom *g, int ascend, mxw_tensor *val, mxw_tensor *ind,
                     mxw_tensor *mask) {
  int64_t n = g->n, k = g->k;
  if (mask) {
    int64_t total = mxw_tensor_size(mask);
    memset(mask->data, 0, (size_t)total * (size_t)mxw_dtype_size(mask->dtype));
  }
  if (n == 0 || g->outer * g->inner == 0) return 0;
  double *key = (double *)mxw_scratch(0, (size_t)n * sizeof(double));
  int64_t *idx = (int64_t *)mxw_scratch(1, (size_t)n * sizeof(int64_t));
  int64_t *tmp = (int64_t *)mxw_scratch(2, (size_t)n * sizeof(int64_t));
  if (!key || !idx || !tmp) return -1;
  size_t es = (size_t)mxw_dtype_size(in->dtype);
  for (int64_t o = 0; o < g->outer; o++) {
    for (int64_t i = 0; i < g->inner; i++) {
      int64_t base = o * n * g->inner + i, obase = o * k * g->inner + i;
      if (in->dtype == MXW_FLOAT32) {
        const float *x = (const float *)in->data;
        for (int64_t j = 0; j < n; j++) key[j] = x[base + j * g->inner];
      } else {
        for (int64_t j = 0; j < n; j++) key[j] = mxw_load_f64(in->data, in->dtype, base + j * g->inner);
      }
      if (k > 0 && k * 8 <= n)
        select_first_k(key, n, k, !ascend, idx);
      else
        stable_argsort(key, n, !ascend, idx, tmp);
      for (int64_t j = 0; j < k; j++) {
        int64_t from = base + idx[j] * g->inner, to = obase + j * g->inner;
        if (val) memcpy((char *)val->data + (size_t)to * es, (const char *)in->data + (size_t)from * es, es);
        if (ind) mxw_store_f64(ind->data, ind->dtype, to, (double)idx[j]);
        if (mask) mxw_store_f64(mask->data, mask->dtype, from, 1.0);
      }
    }
  }
  return 0;
}

static int fwd_topk(const mxw_op_call *c) {
  const TopKParam *p = (const TopKParam *)c->param;
  order_geom g;
  MXW_TRY(order_geometry(&p->axis, p->k, &c->inputs[0].shape, &g));
  switch (p->ret_typ) {
    case RET_INDICES:
      MXW_TRY(check_index_dtype(c->outputs[0].dtype, g.n));
      return order_run(&c->inputs[0], &g, p->is_ascend, NULL, &c->outputs[0], NULL);
    case RET_MASK: return order_run(&c->inputs[0], &g, p->is_ascend, NULL, NULL, &c->outputs[0]);
    default:
      MXW_TRY(check_index_dtype(c->outputs[1].dtype, g.n));
      return order_run(&c->inputs[0], &g, p->is_ascend, &c->outputs[0], &c->outputs[1], NULL);
  }
}

/* ret_typ value / both: ograd of the values added back at the positions they came from
 * (MXNet's _backward_topk); indices / mask: no gradient (MXNet's MakeZeroGradNodes). */
static int grad_topk(mxw_grad_ctx *g) {
  int r = ((const TopKParam *)mxw_grad_param(g))->ret_typ;
  if (r == RET_INDICES || r == RET_MASK) return 0;
  mxw_gid dx;
  mxw_gid og = mxw_grad_ograd(g, 0), indices = mxw_grad_out(g, 1), data = mxw_grad_in(g, 0);
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_topk", MXW_GIDS(og, indices, data), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_topk = {
    .name = "topk",
    .aliases = ALIASES("_npx_topk"),
    .doc = MXW_DOC("the k largest (or smallest) elements along an axis, sorted: values, indices, both or a 0/1 mask"),
    .attrs = k_topk_attrs,
    .num_attrs = (int)(sizeof k_topk_attrs / sizeof k_topk_attrs[0]),
    .param_size = sizeof(TopKParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .num_outputs_fn = topk_num_outputs,
    .num_visible_outputs_fn = topk_num_visible,
    .infer_shape = infer_topk,
    .infer_type = infer_type_topk,
    .forward = fwd_topk,
    .gradient = grad_topk,
};

/* _backward_topk(ograd, indices, data): data's shape and ograd's dtype; ograd (the values'
 * gradient, shape of the selection) added into zeros at data[..., indices[j], ...]. */
static const char *const k_backward_topk_inputs[] = {"ograd", "indices", "data", NULL};
static int infer_backward_topk(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  MXW_TRY(mxw_shape_assign(&out[0], &in[2], "output"));
  return mxw_shape_assign(&in[2], &out[0], "data");
}
static int fwd_backward_topk(const mxw_op_call *c) {
  const TopKParam *p = (const TopKParam *)c->param;
  const mxw_tensor *gy = &c->inputs[0], *ind = &c->inputs[1];
  mxw_tensor *gx = &c->outputs[0];
  order_geom g;
  MXW_TRY(order_geometry(&p->axis, p->k, &gx->shape, &g));
  zero_tensor(gx);
  for (int64_t o = 0; o < g.outer; o++)
    for (int64_t i = 0; i < g.inner; i++) {
      int64_t base = o * g.n * g.inner + i, obase = o * g.k * g.inner + i;
      for (int64_t j = 0; j < g.k; j++) {
        int64_t t = load_index(ind, obase + j * g.inner);
        if (t >= 0 && t < g.n) add_row(gx->dtype, gx->data, base + t * g.inner, gy->data, obase + j * g.inner, 1);
      }
    }
  return 0;
}
static const mxw_op_def op_backward_topk = {
    .name = "_backward_topk",
    .doc = MXW_DOC(
        "the gradient of topk (values) and sort: ograd added into zeros of data's shape at the selected indices"),
    .attrs = k_topk_attrs,
    .num_attrs = (int)(sizeof k_topk_attrs / sizeof k_topk_attrs[0]),
    .param_size = sizeof(TopKParam),
    .num_inputs = 3,
    .input_names = k_backward_topk_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_topk,
    .infer_type = infer_type_backward_take,
    .forward = fwd_backward_topk,
};

/* sort: values (visible) and their int32 indices (hidden), the whole axis sorted */
static int infer_sort(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const SortParam *p = (const SortParam *)param;
  if (!mxw_shape_known(&in[0])) return 0;
  order_geom g;
  MXW_TRY(order_geometry(&p->axis, 0, &in[0], &g));
  mxw_shape o = selected_shape(&in[0], &g);
  MXW_TRY(mxw_shape_assign(&out[0], &o, "output"));
  return mxw_shape_assign(&out[1], &o, "indices");
}
static int infer_type_sort(const void *param, int nin, int *in, int nout, int *out) {
  MXW_TRY(mxw_infer_type_same(param, 1, in, 1, out));
  MXW_CHECK(out[1] < 0 || out[1] == MXW_INT32, "indices dtype %s must be int32", mxw_dtype_name(out[1]));
  out[1] = MXW_INT32;
  return 0;
}
static int fwd_sort(const mxw_op_call *c) {
  const SortParam *p = (const SortParam *)c->param;
  order_geom g;
  MXW_TRY(order_geometry(&p->axis, 0, &c->inputs[0].shape, &g));
  return order_run(&c->inputs[0], &g, p->is_ascend, &c->outputs[0], &c->outputs[1], NULL);
}
/* Each sorted value's gradient goes back to where it came from (MXNet: _backward_topk with k=0,
 * ret_typ='value', through the hidden indices output). */
static int grad_sort(mxw_grad_ctx *g) {
  const SortParam *p = (const SortParam *)mxw_grad_param(g);
  char axis[32];
  if (p->axis.has)
    snprintf(axis, sizeof axis, "%lld", (long long)p->axis.v);
  else
    snprintf(axis, sizeof axis, "None");
  const char *ascend = p->is_ascend ? "True" : "False";
  mxw_gid dx = mxw_grad_op(g, "_backward_topk", MXW_KV("axis", axis, "k", "0", "ret_typ", "value", "is_ascend", ascend),
                           MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 1), mxw_grad_in(g, 0)));
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_sort = {
    .name = "sort",
    .aliases = ALIASES("_npi_sort"),
    .doc = MXW_DOC("a sorted copy along an axis (stable; None flattens)"),
    .attrs = k_sort_attrs,
    .num_attrs = (int)(sizeof k_sort_attrs / sizeof k_sort_attrs[0]),
    .param_size = sizeof(SortParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 2,
    .num_visible_outputs_fn = num_visible_one,
    .infer_shape = infer_sort,
    .infer_type = infer_type_sort,
    .forward = fwd_sort,
    .gradient = grad_sort,
};

static int infer_argsort(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ArgSortParam *p = (const ArgSortParam *)param;
  if (!mxw_shape_known(&in[0])) return 0;
  order_geom g;
  MXW_TRY(order_geometry(&p->axis, 0, &in[0], &g));
  mxw_shape o = selected_shape(&in[0], &g);
  return mxw_shape_assign(&out[0], &o, "output");
}
static int infer_type_argsort(const void *param, int nin, int *in, int nout, int *out) {
  int idt = enum_dtype(k_index_dtypes, ((const ArgSortParam *)param)->dtype);
  MXW_CHECK(out[0] < 0 || out[0] == idt, "output dtype %s differs from dtype=%s", mxw_dtype_name(out[0]),
            mxw_dtype_name(idt));
  out[0] = idt;
  return 0;
}
static int fwd_argsort(const mxw_op_call *c) {
  const ArgSortParam *p = (const ArgSortParam *)c->param;
  order_geom g;
  MXW_TRY(order_geometry(&p->axis, 0, &c->inputs[0].shape, &g));
  MXW_TRY(check_index_dtype(c->outputs[0].dtype, g.n));
  return order_run(&c->inputs[0], &g, p->is_ascend, NULL, &c->outputs[0], NULL);
}
static const mxw_op_def op_argsort = {
    .name = "argsort",
    .aliases = ALIASES("_npi_argsort"),
    .doc = MXW_DOC("the indices that sort an axis (stable; None flattens), in the dtype attribute"),
    .attrs = k_argsort_attrs,
    .num_attrs = (int)(sizeof k_argsort_attrs / sizeof k_argsort_attrs[0]),
    .param_size = sizeof(ArgSortParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_argsort,
    .infer_type = infer_type_argsort,
    .forward = fwd_argsort,
    .no_grad = 1, /* MXNet: MakeZeroGradNodes */
};

/* ==== one_hot =================================================================================== */
static const char *const k_all_dtypes[] = {"float32", "float64", "float16", "bfloat16", "uint8",
                                           "int8",    "int32",   "int64",   NULL};
static const char *const k_indices[] = {"indices", NULL};
typedef struct {
  int64_t depth;
  double on_value, off_value;
  int dtype; /* index into k_all_dtypes */
} OneHotParam;

static const mxw_attr_spec k_one_hot_attrs[] = {
    MXW_A_INT("depth", OneHotParam, depth, NULL, "size of the new last axis"),
    MXW_A_FLOAT("on_value", OneHotParam, on_value, "1", "value at the index"),
    MXW_A_FLOAT("off_value", OneHotParam, off_value, "0", "value everywhere else"),
    MXW_A_ENUM("dtype", OneHotParam, dtype, "float32", k_all_dtypes, "dtype of the output"),
};

static int validate_one_hot(void *param) {
  const OneHotParam *p = (const OneHotParam *)param;
  MXW_CHECK(p->depth >= 0, "depth=%lld must not be negative", (long long)p->depth);
  return 0;
}

static int infer_one_hot(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const OneHotParam *p = (const OneHotParam *)param;
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim + 1 <= MXW_MAX_NDIM, "indices have %d dims; the output would exceed %d", in[0].ndim,
            MXW_MAX_NDIM);
  mxw_shape o = in[0];
  o.dims[o.ndim++] = p->depth;
  return mxw_shape_assign(&out[0], &o, "output");
}
static int infer_type_one_hot(const void *param, int nin, int *in, int nout, int *out) {
  int t = enum_dtype(k_all_dtypes, ((const OneHotParam *)param)->dtype);
  MXW_CHECK(out[0] < 0 || out[0] == t, "output dtype %s differs from dtype=%s", mxw_dtype_name(out[0]),
            mxw_dtype_name(t));
  out[0] = t;
  return 0;
}

static int fwd_one_hot(const mxw_op_call *c) {
  const OneHotParam *p = (const OneHotParam *)c->param;
  const mxw_tensor *idx = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(idx), depth = p->depth, total = mxw_tensor_size(out);
  if (out->dtype == MXW_FLOAT32) {
    float *o = (float *)out->data;
    for (int64_t i = 0; i < total; i++) o[i] = (float)p->off_value;
  } else {
    for (int64_t i = 0; i < total; i++) mxw_store_f64(out->data, out->dtype, i, p->off_value);
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t j = load_index(idx, i);
    if (j >= 0 && j < depth) mxw_store_f64(out->data, out->dtype, i * depth + j, p->on_value);
  }
  return 0;
}

static const mxw_op_def op_one_hot = {
    .name = "one_hot",
    .aliases = ALIASES("_npx_one_hot"),
    .doc = MXW_DOC("indices.shape + (depth,): on_value at int(index) when 0 <= index < depth, off_value elsewhere"),
    .attrs = k_one_hot_attrs,
    .num_attrs = (int)(sizeof k_one_hot_attrs / sizeof k_one_hot_attrs[0]),
    .param_size = sizeof(OneHotParam),
    .validate = validate_one_hot,
    .num_inputs = 1,
    .input_names = k_indices,
    .num_outputs = 1,
    .infer_shape = infer_one_hot,
    .infer_type = infer_type_one_hot,
    .forward = fwd_one_hot,
    .no_grad = 1, /* MXNet: MakeZeroGradNodes */
};

/* ==== gather_nd ================================================================================= */
static const char *const k_data_indices[] = {"data", "indices", NULL};

/* data (X0, ..., X{N-1}), indices (M, Y0, ..., Y{K-1}) -> (Y0, ..., Y{K-1}, XM, ..., X{N-1}) */
static int infer_gather_nd(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const mxw_shape *d = &in[0], *idx = &in[1];
  char a[128], b[128];
  if (d->ndim < 0 || idx->ndim < 0) return 0;
  MXW_CHECK(idx->ndim >= 2, "indices must have at least 2 dims (M, ...), got shape %s", SHAPE_STR(idx, a));
  if (idx->dims[0] < 0) return 0;
  int64_t m = idx->dims[0];
  MXW_CHECK(m <= d->ndim, "indices %s address %lld dims but data %s has %d", SHAPE_STR(idx, a), (long long)m,
            SHAPE_STR(d, b), d->ndim);
  mxw_shape o;
  o.ndim = idx->ndim - 1 + d->ndim - (int)m;
  MXW_CHECK(o.ndim <= MXW_MAX_NDIM, "the output would have %d dims; at most %d are supported", o.ndim, MXW_MAX_NDIM);
  int k = 0;
  for (int i = 1; i < idx->ndim; i++) o.dims[k++] = idx->dims[i];
  for (int i = (int)m; i < d->ndim; i++) o.dims[k++] = d->dims[i];
  return mxw_shape_assign(&out[0], &o, "output");
}

/* One index element as double (exact for float dtypes and for integers up to 2^53). */
static double load_index_f64(const mxw_tensor *t, int64_t i) {
  return mxw_dtype_is_float(t->dtype) ? mxw_load_f64(t->data, t->dtype, i) : (double)load_index(t, i);
}

static int fwd_gather_nd(const mxw_op_call *c) {
  const mxw_tensor *data = &c->inputs[0], *idx = &c->inputs[1];
  mxw_tensor *out = &c->outputs[0];
  int m = (int)idx->shape.dims[0];
  int64_t n = prod_dims(&idx->shape, 1, idx->shape.ndim); /* number of index tuples */
  int64_t inner = prod_dims(&data->shape, m, data->shape.ndim), stride[MXW_MAX_NDIM], acc = inner;
  for (int j = m - 1; j >= 0; j--) {
    stride[j] = acc;
    acc *= data->shape.dims[j];
  }
  /* every index in [-size, size - 1] of its dim; negative ones count from the end */
  for (int j = 0; j < m; j++) {
    int64_t size = data->shape.dims[j];
    for (int64_t i = 0; i < n; i++) {
      double v = load_index_f64(idx, (int64_t)j * n + i);
      if (!(v >= (double)-size && v <= (double)(size - 1)))
        return mxw_fail("index %g is out of bounds for axis %d with size %lld", v, j, (long long)size);
    }
  }
  size_t es = (size_t)mxw_dtype_size(data->dtype), row = (size_t)inner * es;
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0;
    for (int j = 0; j < m; j++) {
      int64_t size = data->shape.dims[j], e = (int64_t)j * n + i, v;
      if (mxw_dtype_is_float(idx->dtype)) /* int64(idx + size) % size, as MXNet */
        v = (int64_t)(mxw_load_f64(idx->data, idx->dtype, e) + (double)size) % size;
      else
        v = (load_index(idx, e) + size) % size;
      off += v * stride[j];
    }
    memcpy((char *)out->data + (size_t)i * row, (const char *)data->data + (size_t)off * es, row);
  }
  return 0;
}

/* data gets ograd added at the addressed positions (MXNet's _backward_gather_nd, a scatter_nd that
 * accumulates repeated indices); the indices get none. */
static int grad_gather_nd(mxw_grad_ctx *g) {
  char shape[512];
  mxw_shape_attr(mxw_grad_in_shape(g, 0), shape, sizeof shape);
  mxw_gid og = mxw_grad_ograd(g, 0), idx = mxw_grad_in(g, 1);
  mxw_gid dx = mxw_grad_op(g, "_backward_gather_nd", MXW_KV("shape", shape), MXW_GIDS(og, idx));
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_gather_nd = {
    .name = "gather_nd",
    .aliases = ALIASES("_npi_gather_nd", "_npx_gather_nd"),
    .doc = MXW_DOC(
        "out[y...] = data[indices[0, y...], ..., indices[M-1, y...], ...]; negative indices count from the end"),
    .num_inputs = 2,
    .input_names = k_data_indices,
    .num_outputs = 1,
    .infer_shape = infer_gather_nd,
    .infer_type = infer_type_first_out,
    .forward = fwd_gather_nd,
    .gradient = grad_gather_nd,
};

/* _backward_gather_nd(data, indices; shape): zeros of `shape` with out[indices[:, y...], ...] +=
 * data[y..., ...] (MXNet's op of that name; data has gather_nd's output shape). */
typedef struct {
  mxw_tuple shape;
} ScatterNDParam;
static const mxw_attr_spec k_scatter_nd_attrs[] = {
    MXW_A_SHAPE("shape", ScatterNDParam, shape, NULL, "shape of the output"),
};
static int infer_backward_gather_nd(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ScatterNDParam *p = (const ScatterNDParam *)param;
  MXW_CHECK(p->shape.ndim >= 1 && p->shape.ndim <= MXW_MAX_NDIM, "shape must have 1 to %d dims", MXW_MAX_NDIM);
  mxw_shape s = mxw_shape_make(p->shape.ndim, p->shape.v);
  MXW_TRY(mxw_shape_assign(&out[0], &s, "output"));
  mxw_shape o[1] = {unknown_rank()};
  mxw_shape ins[2] = {s, in[1]};
  MXW_TRY(infer_gather_nd(NULL, 2, ins, 1, o)); /* data must have gather_nd's output shape */
  if (o[0].ndim >= 0) MXW_TRY(mxw_shape_assign(&in[0], &o[0], "data"));
  return 0;
}
/* (accumulate: _backward_gather_nd's +=; otherwise scatter_nd's assignment, the last of repeated
 * indices winning) */
static int scatter_rows(const mxw_op_call *c, int accumulate) {
  const mxw_tensor *gy = &c->inputs[0], *idx = &c->inputs[1];
  mxw_tensor *gx = &c->outputs[0];
  int m = (int)idx->shape.dims[0];
  int64_t n = prod_dims(&idx->shape, 1, idx->shape.ndim);
  int64_t inner = prod_dims(&gx->shape, m, gx->shape.ndim), stride[MXW_MAX_NDIM], acc = inner;
  for (int j = m - 1; j >= 0; j--) {
    stride[j] = acc;
    acc *= gx->shape.dims[j];
  }
  for (int j = 0; j < m; j++) {
    int64_t size = gx->shape.dims[j];
    for (int64_t i = 0; i < n; i++) {
      double v = load_index_f64(idx, (int64_t)j * n + i);
      if (!(v >= (double)-size && v <= (double)(size - 1)))
        return mxw_fail("index %g is out of bounds for axis %d with size %lld", v, j, (long long)size);
    }
  }
  zero_tensor(gx);
  const size_t es = (size_t)mxw_dtype_size(gx->dtype);
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0;
    for (int j = 0; j < m; j++) {
      int64_t size = gx->shape.dims[j], e = (int64_t)j * n + i, v;
      if (mxw_dtype_is_float(idx->dtype)) /* as gather_nd */
        v = (int64_t)(mxw_load_f64(idx->data, idx->dtype, e) + (double)size) % size;
      else
        v = (load_index(idx, e) + size) % size;
      off += v * stride[j];
    }
    if (accumulate)
      add_row(gx->dtype, gx->data, off, gy->data, i * inner, inner);
    else
      memcpy((char *)gx->data + (size_t)off * es, (const char *)gy->data + (size_t)(i * inner) * es,
             (size_t)inner * es);
  }
  return 0;
}
static int fwd_backward_gather_nd(const mxw_op_call *c) { return scatter_rows(c, 1); }
static int fwd_scatter_nd(const mxw_op_call *c) { return scatter_rows(c, 0); }
/* linear in data: its gradient is gather_nd (as MXNet registers) */
static int grad_backward_gather_nd(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, mxw_grad_op(g, "gather_nd", NULL, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 1))));
}
static const mxw_op_def op_backward_gather_nd = {
    .name = "_backward_gather_nd",
    .doc = MXW_DOC("zeros of `shape` with data added at the positions indices (M, ...) address (gather_nd's gradient)"),
    .attrs = k_scatter_nd_attrs,
    .num_attrs = 1,
    .param_size = sizeof(ScatterNDParam),
    .num_inputs = 2,
    .input_names = k_data_indices,
    .num_outputs = 1,
    .infer_shape = infer_backward_gather_nd,
    .infer_type = infer_type_first_out,
    .forward = fwd_backward_gather_nd,
    .gradient = grad_backward_gather_nd,
};

/* scatter_nd(data, indices; shape): zeros of `shape` with out[indices[:, y...], ...] = data[y...,
 * ...] (src/operator/tensor/indexing_op.cc); gradient gather_nd of the head gradient, as MXNet's */
static const mxw_op_def op_scatter_nd = {
    .name = "scatter_nd",
    .doc = MXW_DOC("Scatters data into a new tensor according to indices."),
    .attrs = k_scatter_nd_attrs,
    .num_attrs = 1,
    .param_size = sizeof(ScatterNDParam),
    .num_inputs = 2,
    .input_names = k_data_indices,
    .num_outputs = 1,
    .infer_shape = infer_backward_gather_nd,
    .infer_type = infer_type_first_out,
    .forward = fwd_scatter_nd,
    .gradient = grad_backward_gather_nd,
};

MXW_FAMILY(indexing, &op_take, &op_where, &op_topk, &op_sort, &op_argsort, &op_one_hot, &op_gather_nd, &op_scatter_nd,
           &op_backward_take, &op_backward_topk, &op_backward_gather_nd);
