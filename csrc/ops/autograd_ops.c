/* autograd_ops.c -- internal ops the autograd runtime records:
 *
 *   _view_range(data; offset, shape)            elements offset .. offset + size(shape) - 1 of
 *                                                data (flat order) with `shape`: what a reshape or
 *                                                a contiguous slice view of a recorded array is
 *                                                (MXNet records Reshape / slice for such views)
 *   _backward_view_range(ograd, data; ...)       zeros of data's shape with that range = ograd
 */
#include <stdio.h>

#include "../core/mxw_core.h"

static const char *const k_data[] = {"data", NULL};
static const char *const k_ograd_data[] = {"ograd", "data", NULL};

typedef struct {
  int64_t offset;
  mxw_tuple shape;
} ViewRangeParam;

static const mxw_attr_spec k_view_range_attrs[] = {
    MXW_A_INT("offset", ViewRangeParam, offset, "0", "first element (flat order)"),
    MXW_A_SHAPE("shape", ViewRangeParam, shape, NULL, "shape of the view"),
};

static int view_shape(const ViewRangeParam *p, const mxw_shape *in, mxw_shape *out) {
  MXW_CHECK(p->shape.ndim >= 0 && p->shape.ndim <= MXW_MAX_NDIM, "shape has rank %d", (int)p->shape.ndim);
  out->ndim = p->shape.ndim;
  for (int i = 0; i < out->ndim; i++) out->dims[i] = p->shape.v[i];
  if (mxw_shape_known(in)) {
    char a[128];
    MXW_CHECK(p->offset >= 0 && p->offset + mxw_shape_size(out) <= mxw_shape_size(in),
              "elements %lld..%lld are outside an array of shape %s", (long long)p->offset,
              (long long)(p->offset + mxw_shape_size(out) - 1), mxw_shape_str(in, a, sizeof a));
  }
  return 0;
}

static int infer_view_range(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  (void)nout;
  mxw_shape s;
  MXW_TRY(view_shape((const ViewRangeParam *)param, &in[0], &s));
  return mxw_shape_assign(&out[0], &s, "output");
}

static int fwd_view_range(const mxw_op_call *c) {
  const ViewRangeParam *p = (const ViewRangeParam *)c->param;
  size_t es = (size_t)mxw_dtype_size(c->inputs[0].dtype);
  memcpy(c->outputs[0].data, (const char *)c->inputs[0].data + (size_t)p->offset * es,
         (size_t)mxw_tensor_size(&c->outputs[0]) * es);
  return 0;
}

static int grad_view_range(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_backward_view_range", 1); }

static const mxw_op_def op_view_range = {
    .name = "_view_range",
    .doc = MXW_DOC("a contiguous range of data's elements with a new shape (a recorded reshape or slice view)"),
    .attrs = k_view_range_attrs,
    .num_attrs = 2,
    .param_size = sizeof(ViewRangeParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_view_range,
    .forward = fwd_view_range,
    .gradient = grad_view_range,
};

static int fwd_backward_view_range(const mxw_op_call *c) {
  const ViewRangeParam *p = (const ViewRangeParam *)c->param;
  size_t es = (size_t)mxw_dtype_size(c->outputs[0].dtype);
  memset(c->outputs[0].data, 0, (size_t)mxw_tensor_size(&c->outputs[0]) * es);
  memcpy((char *)c->outputs[0].data + (size_t)p->offset * es, c->inputs[0].data,
         (size_t)mxw_tensor_size(&c->inputs[0]) * es);
  return 0;
}

/* Second order: _backward_view_range is linear in ograd (a scatter into zeros), so its gradient is
 * the same range of the incoming gradient; data (its shape only) gets none. */
static int grad_backward_view_range(mxw_grad_ctx *g) {
  mxw_gid d;
  MXW_TRY(mxw_grad_op_fwd(g, "_view_range", MXW_GIDS(mxw_grad_ograd(g, 0)), &d, 1));
  MXW_TRY(mxw_grad_set(g, 0, d));
  return mxw_grad_set(g, 1, mxw_grad_zeros_like(g, mxw_grad_in(g, 1)));
}

static const mxw_op_def op_backward_view_range = {
    .name = "_backward_view_range",
    .doc = MXW_DOC("the gradient of _view_range: zeros of data's shape with the range set to ograd"),
    .attrs = k_view_range_attrs,
    .num_attrs = 2,
    .param_size = sizeof(ViewRangeParam),
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_second,
    .forward = fwd_backward_view_range,
    .gradient = grad_backward_view_range,
};

MXW_FAMILY(autograd_ops, &op_view_range, &op_backward_view_range);
