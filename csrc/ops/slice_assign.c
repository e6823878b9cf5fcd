/* slice_assign.c -- the writing side of NDArray indexing (MXNet's __setitem__): _slice_assign,
 * _slice_assign_scalar and _scatter_set_nd.
 *
 * Each op returns its first input with a part overwritten. MXNet runs them with out= that input
 * (FInplaceOption {0, 0}); here too the output may be the first input's own buffer (`inplace`,
 * and the JS indexing passes out=self). When the output is another buffer, the first input is
 * copied into it first (MXNet's kWriteTo), so every call has the same result.
 *
 *   _slice_assign(lhs, rhs; begin, end, step)          out = lhs; out[begin:end:step] = rhs
 *   _slice_assign_scalar(data; scalar, begin, end, step) out = data; out[begin:end:step] = scalar
 *   _scatter_set_nd(lhs, rhs, indices; shape)           out = lhs; out[indices[:, i]] = rhs[i]
 *
 * begin/end/step follow the slice op's numpy rules (MXNet's GetIndexRange: None defaults,
 * negative values from the end, clamping); rhs has exactly the sliced shape. _scatter_set_nd's
 * indices are (M, Y...) as gather_nd's: column i addresses out[idx0, ..., idx{M-1}, ...] and
 * rhs[i...] (shape Y... followed by out's dims from M) is written there; negative indices count
 * from the end, and every index is checked before anything is written.
 *
 * Gradients: the overwritten part of the first input gets none (ograd with the part zeroed: the
 * same assign of 0), the assigned values get ograd's part (slice / gather_nd). MXNet 1.9.1
 * registers no FGradient for these (x[key] = v under autograd.record is an error there when x is
 * in the graph, as here); they are differentiable as functions of their inputs, so we give them
 * their gradients. With repeated indices _scatter_set_nd keeps one write, but every duplicate's
 * rhs element gets ograd (as MXNet's scatter_nd gradient). */
#include <math.h>
#include <stdio.h>

#include "../core/mxw_core.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
static const char *const k_data[] = {"data", NULL};
static const char *const k_lhs_rhs[] = {"lhs", "rhs", NULL};
static const char *const k_lhs_rhs_indices[] = {"lhs", "rhs", "indices", NULL};

typedef char shape_buf[160];
typedef char tuple_buf[512];
#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
#define TUPLE_STR(t, b) mxw_tuple_str((t), (b), sizeof(b))

/* ---- the slice box ------------------------------------------------------------------------ */
/* begin/end/step as the slice op takes them (fields shared by both slice-assign params). */
typedef struct {
  mxw_tuple begin, end, step;
} SliceBox;

static int validate_box(const SliceBox *p) { return mxw_slice_check(&p->begin, &p->end, &p->step); }

typedef mxw_axis_range axis_range;

/* The box of `p` in an array of shape x (MXNet's GetIndexRange + SetSliceOpOutputDimSize). */
static int box_ranges(const SliceBox *p, const mxw_shape *x, axis_range *r) {
  return mxw_slice_ranges(&p->begin, &p->end, &p->step, x, r);
}

static void box_shape(const axis_range *r, int ndim, mxw_shape *out) {
  memset(out, 0, sizeof *out);
  out->ndim = ndim;
  for (int d = 0; d < ndim; d++) out->dims[d] = r[d].len;
}

/* Visits every element of the box in row-major order: dst element offsets into `out`, in
 * order, while the source index counts 0, 1, 2, ...; `fn` writes one run of the innermost axis
 * (n elements at stride `step` starting at offset `off`, source elements from `src_index`). */
typedef void (*row_fn)(void *ctx, int64_t off, int64_t step, int64_t n, int64_t src_index);

static void box_walk(const mxw_shape *shape, const axis_range *r, row_fn fn, void *ctx) {
  int nd = shape->ndim;
  int64_t stride[MXW_MAX_NDIM], acc = 1, rows = 1;
  for (int d = nd - 1; d >= 0; d--) {
    stride[d] = acc;
    acc *= shape->dims[d];
  }
  for (int d = 0; d < nd; d++) {
    if (r[d].len == 0) return;
    if (d < nd - 1) rows *= r[d].len;
  }
  int64_t inner = r[nd - 1].len, idx[MXW_MAX_NDIM] = {0};
  for (int64_t row = 0; row < rows; row++) {
    int64_t off = 0;
    for (int d = 0; d < nd; d++) off += (r[d].begin + idx[d] * r[d].step) * stride[d];
    fn(ctx, off, r[nd - 1].step, inner, row * inner);
    for (int d = nd - 2; d >= 0; d--) { /* odometer over the outer axes */
      if (++idx[d] < r[d].len) break;
      idx[d] = 0;
    }
  }
}

/* out = in, unless they are the same buffer (the in-place call). */
static void copy_first_input(const mxw_tensor *in, mxw_tensor *out) {
  if (in->data != out->data)
    memmove(out->data, in->data, (size_t)mxw_tensor_size(in) * (size_t)mxw_dtype_size(in->dtype));
}

/* Copies es-byte elements: n of them from contiguous src into dst at a stride. */
static void put_strided(char *dst, int64_t step, const char *src, int64_t n, size_t es) {
  switch (es) {
    case 1:
      for (int64_t j = 0; j < n; j++) dst[j * step] = src[j];
      break;
    case 2:
      for (int64_t j = 0; j < n; j++) memcpy(dst + j * step * 2, src + j * 2, 2);
      break;
    case 4:
      for (int64_t j = 0; j < n; j++) memcpy(dst + j * step * 4, src + j * 4, 4);
      break;
    case 8:
      for (int64_t j = 0; j < n; j++) memcpy(dst + j * step * 8, src + j * 8, 8);
      break;
    default:
      for (int64_t j = 0; j < n; j++) memcpy(dst + j * step * (int64_t)es, src + j * (int64_t)es, es);
      break;
  }
}

/* The box's begin/end/step as attribute strings, for building slice / _slice_assign_scalar nodes. */
typedef struct {
  tuple_buf begin, end, step;
} box_strs;
static void box_attrs(const SliceBox *p, box_strs *s) {
  TUPLE_STR(&p->begin, s->begin);
  TUPLE_STR(&p->end, s->end);
  TUPLE_STR(&p->step, s->step);
}
/* ograd with the box set to 0: what flows to the first input (its box was overwritten). */
static mxw_gid zero_box(mxw_grad_ctx *g, const SliceBox *p) {
  box_strs b;
  box_attrs(p, &b);
  return mxw_grad_op(g, "_slice_assign_scalar", MXW_KV("scalar", "0", "begin", b.begin, "end", b.end, "step", b.step),
                     MXW_GIDS(mxw_grad_ograd(g, 0)));
}

/* ==== _slice_assign ============================================================================ */
static const mxw_attr_spec k_slice_assign_attrs[] = {
    MXW_A_OPT_TUPLE("begin", SliceBox, begin, NULL, "start index per axis (None: from the start)"),
    MXW_A_OPT_TUPLE("end", SliceBox, end, NULL, "end index per axis, exclusive (None: to the end)"),
    MXW_A_OPT_TUPLE("step", SliceBox, step, "()", "step per axis (None or omitted: 1; negative walks back)"),
};
static int validate_slice_assign(void *param) { return validate_box((const SliceBox *)param); }

/* lhs and the output share a shape; rhs has the box's shape. */
static int infer_slice_assign(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  MXW_TRY(mxw_shape_assign(&in[0], &out[0], "lhs"));
  if (in[0].ndim < 0) return 0;
  axis_range r[MXW_MAX_NDIM];
  MXW_TRY(box_ranges((const SliceBox *)param, &in[0], r));
  mxw_shape v;
  box_shape(r, in[0].ndim, &v);
  MXW_TRY(mxw_shape_unify(&in[1], &v, "rhs", " (the shape of lhs[begin:end:step])"));
  return mxw_shape_assign(&out[0], &in[0], "output");
}

typedef struct {
  char *out;
  const char *rhs;
  size_t es;
} assign_ctx;
static void assign_row(void *vctx, int64_t off, int64_t step, int64_t n, int64_t src_index) {
  const assign_ctx *c = (const assign_ctx *)vctx;
  put_strided(c->out + off * (int64_t)c->es, step, c->rhs + src_index * (int64_t)c->es, n, c->es);
}

static int fwd_slice_assign(const mxw_op_call *c) {
  const mxw_tensor *lhs = &c->inputs[0], *rhs = &c->inputs[1];
  mxw_tensor *out = &c->outputs[0];
  axis_range r[MXW_MAX_NDIM];
  MXW_TRY(box_ranges((const SliceBox *)c->param, &lhs->shape, r));
  copy_first_input(lhs, out);
  assign_ctx ctx = {(char *)out->data, (const char *)rhs->data, (size_t)mxw_dtype_size(out->dtype)};
  box_walk(&out->shape, r, assign_row, &ctx);
  return 0;
}

/* d lhs = ograd with the box zeroed, d rhs = ograd[begin:end:step]. */
static int grad_slice_assign(mxw_grad_ctx *g) {
  const SliceBox *p = (const SliceBox *)mxw_grad_param(g);
  box_strs b;
  box_attrs(p, &b);
  MXW_TRY(mxw_grad_set(g, 0, zero_box(g, p)));
  return mxw_grad_set(
      g, 1,
      mxw_grad_op(g, "slice", MXW_KV("begin", b.begin, "end", b.end, "step", b.step), MXW_GIDS(mxw_grad_ograd(g, 0))));
}

static const mxw_op_def op_slice_assign = {
    .name = "_slice_assign",
    .aliases = ALIASES("_crop_assign", "_npi_slice_assign"),
    .doc = MXW_DOC("lhs with lhs[begin:end:step] replaced by rhs (x[key] = array); in place with out=lhs"),
    .attrs = k_slice_assign_attrs,
    .num_attrs = 3,
    .param_size = sizeof(SliceBox),
    .validate = validate_slice_assign,
    .num_inputs = 2,
    .input_names = k_lhs_rhs,
    .num_outputs = 1,
    .infer_shape = infer_slice_assign,
    .forward = fwd_slice_assign,
    .inplace = 1,
    .gradient = grad_slice_assign,
};

/* ==== _slice_assign_scalar ===================================================================== */
typedef struct {
  SliceBox box; /* first, so validate_box/box_ranges take the param as a SliceBox */
  double scalar;
} SliceAssignScalarParam;
static const mxw_attr_spec k_slice_assign_scalar_attrs[] = {
    MXW_A_FLOAT("scalar", SliceAssignScalarParam, scalar, "0", "the value written into the slice"),
    MXW_A_OPT_TUPLE("begin", SliceAssignScalarParam, box.begin, NULL, "start index per axis (None: from the start)"),
    MXW_A_OPT_TUPLE("end", SliceAssignScalarParam, box.end, NULL, "end index per axis, exclusive (None: to the end)"),
    MXW_A_OPT_TUPLE("step", SliceAssignScalarParam, box.step, "()",
                    "step per axis (None or omitted: 1; negative walks back)"),
};
static int validate_slice_assign_scalar(void *param) {
  return validate_box(&((const SliceAssignScalarParam *)param)->box);
}

static int infer_slice_assign_scalar(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  MXW_TRY(mxw_shape_assign(&in[0], &out[0], "data"));
  if (in[0].ndim < 0) return 0;
  axis_range r[MXW_MAX_NDIM];
  MXW_TRY(box_ranges(&((const SliceAssignScalarParam *)param)->box, &in[0], r)); /* checks begin's length */
  return mxw_shape_assign(&out[0], &in[0], "output");
}

typedef struct {
  char *out;
  uint8_t value[8]; /* the scalar in the array's dtype */
  size_t es;
} fill_ctx;
static void fill_row(void *vctx, int64_t off, int64_t step, int64_t n, int64_t src_index) {
  (void)src_index;
  const fill_ctx *c = (const fill_ctx *)vctx;
  char *dst = c->out + off * (int64_t)c->es;
  for (int64_t j = 0; j < n; j++) memcpy(dst + j * step * (int64_t)c->es, c->value, c->es);
}

static int fwd_slice_assign_scalar(const mxw_op_call *c) {
  const SliceAssignScalarParam *p = (const SliceAssignScalarParam *)c->param;
  const mxw_tensor *data = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  axis_range r[MXW_MAX_NDIM];
  MXW_TRY(box_ranges(&p->box, &data->shape, r));
  copy_first_input(data, out);
  fill_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.out = (char *)out->data;
  ctx.es = (size_t)mxw_dtype_size(out->dtype);
  mxw_store_f64(ctx.value, out->dtype, 0, p->scalar); /* static_cast<DType>(scalar), clamped */
  box_walk(&out->shape, r, fill_row, &ctx);
  return 0;
}

/* d data = ograd with the box zeroed. */
static int grad_slice_assign_scalar(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, zero_box(g, &((const SliceAssignScalarParam *)mxw_grad_param(g))->box));
}

static const mxw_op_def op_slice_assign_scalar = {
    .name = "_slice_assign_scalar",
    .aliases = ALIASES("_crop_assign_scalar", "_npi_slice_assign_scalar"),
    .doc = MXW_DOC("data with data[begin:end:step] set to scalar (x[key] = number); in place with out=data"),
    .attrs = k_slice_assign_scalar_attrs,
    .num_attrs = 4,
    .param_size = sizeof(SliceAssignScalarParam),
    .validate = validate_slice_assign_scalar,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_slice_assign_scalar,
    .forward = fwd_slice_assign_scalar,
    .inplace = 1,
    .gradient = grad_slice_assign_scalar,
};

/* ==== _scatter_set_nd ========================================================================== */
typedef struct {
  mxw_tuple shape;
} ScatterNDParam;
static const mxw_attr_spec k_scatter_nd_attrs[] = {
    MXW_A_SHAPE("shape", ScatterNDParam, shape, NULL, "shape of the output (that of lhs)"),
};

/* out = lhs = `shape`; indices (M, Y...) with M <= ndim; rhs = (Y..., out.dims[M:]...). */
static int infer_scatter_set_nd(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ScatterNDParam *p = (const ScatterNDParam *)param;
  shape_buf a, b;
  if (p->shape.ndim >= 0) {
    MXW_CHECK(p->shape.ndim <= MXW_MAX_NDIM, "shape has %d dims; at most %d are supported", p->shape.ndim,
              MXW_MAX_NDIM);
    mxw_shape s = mxw_shape_make(p->shape.ndim, p->shape.v);
    MXW_TRY(mxw_shape_unify(&out[0], &s, "output", " (the shape attribute)"));
  }
  MXW_TRY(mxw_shape_unify(&in[0], &out[0], "lhs", " (the output's shape)"));
  MXW_TRY(mxw_shape_assign(&out[0], &in[0], "output"));
  const mxw_shape *o = &out[0], *idx = &in[2];
  if (o->ndim < 0 || idx->ndim < 0) return 0;
  MXW_CHECK(idx->ndim >= 2, "indices must have at least 2 dims (M, ...), got shape %s", SHAPE_STR(idx, a));
  if (idx->dims[0] < 0) return 0;
  int64_t m = idx->dims[0];
  MXW_CHECK(m >= 1 && m <= o->ndim, "indices of shape %s address %lld dims but the output %s has %d", SHAPE_STR(idx, a),
            (long long)m, SHAPE_STR(o, b), o->ndim);
  mxw_shape want;
  want.ndim = idx->ndim - 1 + o->ndim - (int)m;
  MXW_CHECK(want.ndim <= MXW_MAX_NDIM, "rhs would have %d dims; at most %d are supported", want.ndim, MXW_MAX_NDIM);
  int k = 0;
  for (int i = 1; i < idx->ndim; i++) want.dims[k++] = idx->dims[i];
  for (int i = (int)m; i < o->ndim; i++) want.dims[k++] = o->dims[i];
  return mxw_shape_unify(&in[1], &want, "rhs", " (indices.shape[1:] + shape[M:])");
}

/* lhs, rhs and the output share a dtype; indices may be any numeric dtype. */
static int infer_type_scatter_set_nd(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  int t = out[0] >= 0 ? out[0] : (in[0] >= 0 ? in[0] : in[1]);
  if (t < 0) return 0;
  static const char *const names[] = {"lhs", "rhs"};
  for (int i = 0; i < 2; i++)
    if (in[i] >= 0 && in[i] != t)
      return mxw_fail("%s has dtype %s, expected %s (all of lhs, rhs and the output share one dtype)", names[i],
                      mxw_dtype_name(in[i]), mxw_dtype_name(t));
  in[0] = in[1] = out[0] = t;
  return 0;
}

static int fwd_scatter_set_nd(const mxw_op_call *c) {
  const mxw_tensor *lhs = &c->inputs[0], *rhs = &c->inputs[1], *idx = &c->inputs[2];
  mxw_tensor *out = &c->outputs[0];
  int m = (int)idx->shape.dims[0];
  int64_t n = 1, inner = 1, stride[MXW_MAX_NDIM];
  for (int i = 1; i < idx->shape.ndim; i++) n *= idx->shape.dims[i];
  for (int i = m; i < out->shape.ndim; i++) inner *= out->shape.dims[i];
  for (int j = m - 1; j >= 0; j--) stride[j] = j == m - 1 ? inner : stride[j + 1] * out->shape.dims[j + 1];
  /* every index in [-size, size - 1] of its axis (float indices truncate, as MXNet's cast) */
  for (int j = 0; j < m; j++) {
    int64_t size = out->shape.dims[j];
    for (int64_t i = 0; i < n; i++) {
      double v = mxw_load_f64(idx->data, idx->dtype, (int64_t)j * n + i);
      double t = trunc(v);
      if (!(t >= (double)-size && t <= (double)(size - 1)))
        return mxw_fail("index %g is out of bounds for axis %d with size %lld", v, j, (long long)size);
    }
  }
  copy_first_input(lhs, out);
  size_t es = (size_t)mxw_dtype_size(out->dtype), row = (size_t)inner * es;
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0;
    for (int j = 0; j < m; j++) {
      double v = mxw_load_f64(idx->data, idx->dtype, (int64_t)j * n + i);
      int64_t k = (int64_t)v; /* in range: checked above */
      if (k < 0) k += out->shape.dims[j];
      off += k * stride[j];
    }
    memcpy((char *)out->data + (size_t)off * es, (const char *)rhs->data + (size_t)i * row, row);
  }
  return 0;
}

/* d lhs = ograd with the addressed positions zeroed (the same scatter of zeros), d rhs =
 * gather_nd(ograd, indices); the indices get none. */
static int grad_scatter_set_nd(mxw_grad_ctx *g) {
  const ScatterNDParam *p = (const ScatterNDParam *)mxw_grad_param(g);
  tuple_buf shape;
  TUPLE_STR(&p->shape, shape);
  mxw_gid og = mxw_grad_ograd(g, 0), idx = mxw_grad_in(g, 2);
  mxw_gid zeros = mxw_grad_zeros_like(g, mxw_grad_in(g, 1));
  MXW_TRY(mxw_grad_set(g, 0, mxw_grad_op(g, "_scatter_set_nd", MXW_KV("shape", shape), MXW_GIDS(og, zeros, idx))));
  return mxw_grad_set(g, 1, mxw_grad_op(g, "gather_nd", NULL, MXW_GIDS(og, idx)));
}

static const mxw_op_def op_scatter_set_nd = {
    .name = "_scatter_set_nd",
    .aliases = ALIASES("_npi_scatter_set_nd"),
    .doc = MXW_DOC("lhs with the elements (or sub-arrays) addressed by indices (M, ...) set from rhs, as scatter_nd "
                   "but keeping the rest of lhs (x[advanced key] = value); in place with out=lhs"),
    .attrs = k_scatter_nd_attrs,
    .num_attrs = 1,
    .param_size = sizeof(ScatterNDParam),
    .num_inputs = 3,
    .input_names = k_lhs_rhs_indices,
    .num_outputs = 1,
    .infer_shape = infer_scatter_set_nd,
    .infer_type = infer_type_scatter_set_nd,
    .forward = fwd_scatter_set_nd,
    .inplace = 1,
    .gradient = grad_scatter_set_nd,
};

MXW_FAMILY(slice_assign, &op_slice_assign, &op_slice_assign_scalar, &op_scatter_set_nd);
