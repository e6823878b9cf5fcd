/* ravel_krprod.c -- index arithmetic and the Khatri-Rao product of MXNet 1.9.1:
 *
 *   _ravel_multi_index(data, shape) (alias ravel_multi_index)       src/operator/tensor/ravel.h
 *       data (ndim, N) of multi-indices into an array of `shape` -> (N,) flat indices:
 *       ret = ret * shape[j] + data[j, i] over j, in int64 (a float index is truncated on each
 *       addition, as MXNet's index_t arithmetic)
 *   _unravel_index(data, shape) (alias unravel_index)
 *       data (N,) of flat indices -> (ndim, N): from the last axis, idx % shape[j] and idx /
 *       shape[j] (C's truncating division; shape[0] is not used)
 *       Both keep the input's dtype and are non-differentiable (MakeZeroGradNodes); indices are
 *       not range-checked (MXNet's are not either), a zero extent in shape is an error.
 *   khatri_rao(arg0, ..., num_args)                                src/operator/contrib/krprod.h
 *       the column-wise Kronecker product of (M_i, N) matrices: (M_1 ... M_n, N) with
 *       X[(r_1, ..., r_n), k] = prod_i A_i[r_i, k] (r_1 the slowest). MXNet defines no gradient for
 *       it; here _backward_khatri_rao gives each A_j the sum over the other rows of the head
 *       gradient times the other factors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mxw_parallel.h"

/* ==== ravel / unravel ========================================================================= */
typedef struct {
  mxw_tuple shape;
} RavelParam;
static const mxw_attr_spec k_ravel_attrs[] = {
    MXW_A_SHAPE("shape", RavelParam, shape, "()", "Shape of the array into which the multi-indices apply."),
};
static const char *const k_data[] = {"data", NULL};
static int validate_ravel(void *param) {
  const RavelParam *p = (const RavelParam *)param;
  MXW_CHECK(p->shape.ndim > 0, "Empty shape parameter for ravel operator.");
  for (int j = 0; j < p->shape.ndim; j++)
    MXW_CHECK(p->shape.v[j] > 0, "shape[%d] is %lld: every extent must be positive", j, (long long)p->shape.v[j]);
  return 0;
}
static int infer_ravel(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const RavelParam *p = (const RavelParam *)param;
  (void)nin;
  (void)nout;
  if (in[0].ndim < 0) {
    if (out[0].ndim < 0) return 0;
    const int64_t d[2] = {p->shape.ndim, out[0].dims[0]};
    const mxw_shape s = mxw_shape_make(2, d);
    return mxw_shape_assign(&in[0], &s, "data");
  }
  MXW_CHECK(in[0].ndim == 2, "Input to ravel operator must be two-dimensional.");
  MXW_CHECK(in[0].dims[0] < 0 || in[0].dims[0] == p->shape.ndim,
            "First dimension of input of ravel operator does not match shape parameter dimension.");
  const mxw_shape s = mxw_shape_make(1, &in[0].dims[1]);
  return mxw_shape_assign(&out[0], &s, "output");
}
static int infer_unravel(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const RavelParam *p = (const RavelParam *)param;
  (void)nin;
  (void)nout;
  if (in[0].ndim < 0) {
    if (out[0].ndim < 0) return 0;
    MXW_CHECK(out[0].ndim == 2 && out[0].dims[0] == p->shape.ndim,
              "Output of unravel operator must be two-dimensional with a first dimension of shape's length");
    const mxw_shape s = mxw_shape_make(1, &out[0].dims[1]);
    return mxw_shape_assign(&in[0], &s, "data");
  }
  const int64_t n = mxw_shape_size(&in[0]);
  const int64_t d[2] = {p->shape.ndim, n};
  const mxw_shape s = mxw_shape_make(2, d);
  return n < 0 ? 0 : mxw_shape_assign(&out[0], &s, "output");
}
/* int64 of an index value: truncated, NaN as 0, pinned far inside int64's range */
static int64_t as_index(double v) {
  return v != v ? 0 : v > 4e18 ? (int64_t)4e18 : v < -4e18 ? -(int64_t)4e18 : (int64_t)v;
}
static int fwd_ravel(const mxw_op_call *c) {
  const RavelParam *p = (const RavelParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  const int64_t n = mxw_tensor_size(out);
  for (int64_t i = 0; i < n; i++) {
    int64_t ret = 0;
    for (int j = 0; j < p->shape.ndim; j++)
      ret = (int64_t)((uint64_t)ret * (uint64_t)p->shape.v[j] + /* (wrapping, never undefined) */
                      (uint64_t)as_index(mxw_load_f64(in->data, in->dtype, i + (int64_t)j * n)));
    mxw_store_f64(out->data, out->dtype, i, (double)ret);
  }
  return 0;
}
static int fwd_unravel(const mxw_op_call *c) {
  const RavelParam *p = (const RavelParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  const int64_t n = mxw_tensor_size(in);
  for (int64_t i = 0; i < n; i++) {
    int64_t idx = as_index(mxw_load_f64(in->data, in->dtype, i));
    for (int j = p->shape.ndim - 1; j > 0; j--) {
      const int64_t t = idx / p->shape.v[j];
      mxw_store_f64(out->data, out->dtype, i + (int64_t)j * n, (double)(idx - t * p->shape.v[j]));
      idx = t;
    }
    mxw_store_f64(out->data, out->dtype, i, (double)idx);
  }
  return 0;
}
static const mxw_op_def op_ravel_multi_index = {
    .name = "_ravel_multi_index",
    .aliases = (const char *const[]){"ravel_multi_index", NULL},
    .doc = MXW_DOC("Converts a batch of index arrays into an array of flat indices."),
    .attrs = k_ravel_attrs,
    .num_attrs = 1,
    .param_size = sizeof(RavelParam),
    .validate = validate_ravel,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_ravel,
    .forward = fwd_ravel,
    .no_grad = 1,
};
static const mxw_op_def op_unravel_index = {
    .name = "_unravel_index",
    .aliases = (const char *const[]){"unravel_index", NULL},
    .doc = MXW_DOC("Converts an array of flat indices into a batch of index arrays."),
    .attrs = k_ravel_attrs,
    .num_attrs = 1,
    .param_size = sizeof(RavelParam),
    .validate = validate_ravel,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_unravel,
    .forward = fwd_unravel,
    .no_grad = 1,
};

/* ==== khatri_rao ============================================================================== */
#define KR_MAX 32
typedef struct {
  int64_t num_args;
} KhatriRaoParam;
static const mxw_attr_spec k_kr_attrs[] = {
    MXW_A_INT("num_args", KhatriRaoParam, num_args, NULL, "Number of input matrices."),
};
static int validate_kr(void *param) {
  const KhatriRaoParam *p = (const KhatriRaoParam *)param;
  MXW_CHECK(p->num_args >= 1 && p->num_args <= KR_MAX, "num_args must be in [1, %d], got %lld", KR_MAX,
            (long long)p->num_args);
  return 0;
}
static int kr_num_args(const void *param) { return (int)((const KhatriRaoParam *)param)->num_args; }
static const char *const k_args[] = {"args", NULL};
static int infer_kr(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nout;
  int64_t rows = 1, cols = -1;
  for (int i = 0; i < nin; i++) {
    if (in[i].ndim < 0) return 0;
    MXW_CHECK(in[i].ndim == 2, "arg%d must be a matrix, got %d-D", i, in[i].ndim);
    MXW_CHECK(cols < 0 || in[i].dims[1] == cols,
              "All input matrices must have the same number of columns: arg%d has %lld, not %lld", i,
              (long long)in[i].dims[1], (long long)cols);
    cols = in[i].dims[1];
    rows *= in[i].dims[0];
  }
  const int64_t d[2] = {rows, cols};
  const mxw_shape s = mxw_shape_make(2, d);
  return mxw_shape_assign(&out[0], &s, "output");
}
/* the factors' row indices r[] of output row `row` (arg0 the slowest) */
static void kr_rows(const mxw_tensor *in, int n, int64_t row, int64_t *r) {
  for (int i = n - 1; i >= 0; i--) {
    const int64_t m = in[i].shape.dims[0];
    r[i] = row % m;
    row /= m;
  }
}
static int fwd_kr(const mxw_op_call *c) {
  const int n = c->num_inputs;
  mxw_tensor *out = &c->outputs[0];
  const int64_t rows = out->shape.dims[0], cols = out->shape.dims[1];
  int64_t r[KR_MAX];
  for (int64_t row = 0; row < rows; row++) {
    kr_rows(c->inputs, n, row, r);
    for (int64_t k = 0; k < cols; k++) {
      double v = 1;
      for (int i = 0; i < n; i++) v *= mxw_load_f64(c->inputs[i].data, c->inputs[i].dtype, r[i] * cols + k);
      mxw_store_f64(out->data, out->dtype, row * cols + k, v);
    }
  }
  return 0;
}
/* _backward_khatri_rao(ograd, arg0, ...): dA_j[r, k] = sum over the output rows with r_j = r of
 * ograd[row, k] * prod_{i != j} A_i[r_i, k] */
static int fwd_backward_kr(const mxw_op_call *c) {
  const int n = c->num_inputs - 1;
  const mxw_tensor *og = &c->inputs[0], *A = c->inputs + 1;
  const int64_t rows = og->shape.dims[0], cols = og->shape.dims[1];
  for (int j = 0; j < n; j++)
    memset(c->outputs[j].data, 0,
           (size_t)mxw_tensor_size(&c->outputs[j]) * (size_t)mxw_dtype_size(c->outputs[j].dtype));
  int64_t r[KR_MAX];
  for (int64_t row = 0; row < rows; row++) {
    kr_rows(A, n, row, r);
    for (int64_t k = 0; k < cols; k++) {
      const double g = mxw_load_f64(og->data, og->dtype, row * cols + k);
      for (int j = 0; j < n; j++) {
        double v = g;
        for (int i = 0; i < n; i++)
          if (i != j) v *= mxw_load_f64(A[i].data, A[i].dtype, r[i] * cols + k);
        const int64_t at = r[j] * cols + k;
        mxw_store_f64(c->outputs[j].data, c->outputs[j].dtype, at,
                      mxw_load_f64(c->outputs[j].data, c->outputs[j].dtype, at) + v);
      }
    }
  }
  return 0;
}
static int grad_kr(mxw_grad_ctx *g) {
  const int n = mxw_grad_num_inputs(g);
  mxw_gid in[KR_MAX + 1], out[KR_MAX];
  in[0] = mxw_grad_ograd(g, 0);
  for (int i = 0; i < n; i++) in[i + 1] = mxw_grad_in(g, i);
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_khatri_rao", in, n + 1, out, n));
  for (int i = 0; i < n; i++) MXW_TRY(mxw_grad_set(g, i, out[i]));
  return 0;
}
static const mxw_op_def op_khatri_rao = {
    .name = "khatri_rao",
    .doc = MXW_DOC("Computes the Khatri-Rao product of the input matrices."),
    .attrs = k_kr_attrs,
    .num_attrs = 1,
    .param_size = sizeof(KhatriRaoParam),
    .validate = validate_kr,
    .num_inputs = MXW_VARIADIC,
    .input_names = k_args,
    .num_inputs_fn = kr_num_args,
    .num_outputs = 1,
    .infer_shape = infer_kr,
    .forward = fwd_kr,
    .gradient = grad_kr,
};
static int kr_backward_num_inputs(const void *param) { return kr_num_args(param) + 1; }
static int infer_backward_kr(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  for (int j = 0; j < nout; j++) MXW_TRY(mxw_shape_assign(&out[j], &in[j + 1], "output"));
  return 0;
}
static int infer_type_backward_kr(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  for (int j = 0; j < nout; j++)
    if (in[j + 1] >= 0) out[j] = in[j + 1];
  return 0;
}
static const char *kr_backward_input_name(const void *param, int index) {
  static char names[KR_MAX + 1][8];
  (void)param;
  if (index == 0) return "ograd";
  if (index < 1 || index > KR_MAX) return NULL;
  if (!names[index][0]) snprintf(names[index], sizeof names[0], "arg%d", index - 1);
  return names[index];
}
static const mxw_op_def op_backward_khatri_rao = {
    .name = "_backward_khatri_rao",
    .doc = MXW_DOC("the gradients of khatri_rao's matrices"),
    .attrs = k_kr_attrs,
    .num_attrs = 1,
    .param_size = sizeof(KhatriRaoParam),
    .validate = validate_kr,
    .num_inputs = MXW_VARIADIC,
    .input_names = k_args,
    .num_inputs_fn = kr_backward_num_inputs,
    .input_name_fn = kr_backward_input_name,
    .num_outputs_fn = kr_num_args,
    .infer_shape = infer_backward_kr,
    .infer_type = infer_type_backward_kr,
    .forward = fwd_backward_kr,
};

MXW_FAMILY(ravel_krprod, &op_ravel_multi_index, &op_unravel_index, &op_khatri_rao, &op_backward_khatri_rao);
