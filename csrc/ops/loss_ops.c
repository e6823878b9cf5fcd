/* loss_ops.c -- MXNet 1.9.1's loss operators that the legacy symbolic API and old model files use:
 *
 *   MakeLoss(data, grad_scale=1, valid_thresh=0, normalization='null')   src/operator/make_loss-inl.h
 *       identity forward; the gradient ignores the head gradient: grad_scale, divided by the batch
 *       size (normalization 'batch') or by the number of elements above valid_thresh, at least 1
 *       ('valid')
 *   SVMOutput(data, label, margin=1, regularization_coefficient=1, use_linear=False)
 *       identity forward on (N, C) scores with labels (N,); the gradient ignores the head gradient
 *       (src/operator/svm_output.cc, L1_SVM / L2_SVM): for the label's class k,
 *       -reg * (margin > y_k) (L1) or -reg * 2 (margin - y_k) where margin > y_k (L2), for the
 *       other classes reg * (margin > -y_x) (L1) or reg * 2 (margin + y_x) where margin > -y_x (L2)
 *   softmax_cross_entropy(data, label)                         src/operator/loss_binary_op-inl.h
 *       (1,): the sum over the batch of -log(max(softmax(data)[label], 1e-8)); gradient
 *       ograd * (softmax(data) - one_hot(label)); the label gets none
 *
 * Labels are class indices stored as any dtype (truncated as MXNet's casts); one outside
 * [0, classes) is an MXNetError naming it (MXNet reads out of bounds). The backward kernels
 * compute in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mxw_parallel.h"

#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
typedef char shape_buf[160];

static const char *const k_data[] = {"data", NULL};
static const char *const k_data_label[] = {"data", "label", NULL};

/* The class index of row r: an MXNetError when it is not a class. */
static int label_at(const mxw_tensor *label, int64_t r, int64_t classes, int64_t *k) {
  const double v = mxw_load_f64(label->data, label->dtype, r);
  MXW_CHECK(v > -1.0 && v < (double)classes, "label %g of row %lld is not a class index in [0, %lld)", v, (long long)r,
            (long long)classes);
  *k = (int64_t)v;
  return 0;
}

/* ==== MakeLoss ================================================================================ */
static const char *const k_make_loss_norms[] = {"null", "batch", "valid", NULL};
enum { NORM_NULL, NORM_BATCH, NORM_VALID };
typedef struct {
  double grad_scale, valid_thresh;
  int normalization;
} MakeLossParam;
static const mxw_attr_spec k_make_loss_attrs[] = {
    MXW_A_FLOAT("grad_scale", MakeLossParam, grad_scale, "1",
                "Gradient scale as a supplement to unary and binary operators"),
    MXW_A_FLOAT("valid_thresh", MakeLossParam, valid_thresh, "0",
                "clip each element in the array to 0 when it is less than ``valid_thresh``."),
    MXW_A_ENUM("normalization", MakeLossParam, normalization, "null", k_make_loss_norms,
               "how the output gradient is normalized: null, batch size, or the valid elements' count"),
};
static int fwd_identity(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  if (c->outputs[0].data != in->data)
    memcpy(c->outputs[0].data, in->data, (size_t)mxw_tensor_size(in) * (size_t)mxw_dtype_size(in->dtype));
  return 0;
}
/* _backward_MakeLoss(data): the constant gradient of data's shape */
static int fwd_backward_make_loss(const mxw_op_call *c) {
  const MakeLossParam *p = (const MakeLossParam *)c->param;
  const mxw_tensor *x = &c->inputs[0];
  mxw_tensor *dx = &c->outputs[0];
  const int64_t n = mxw_tensor_size(x);
  double v = p->grad_scale;
  if (p->normalization == NORM_BATCH && x->shape.ndim > 0 && x->shape.dims[0] > 0) v /= (double)x->shape.dims[0];
  if (p->normalization == NORM_VALID) {
    int64_t valid = 0;
    for (int64_t i = 0; i < n; i++) valid += mxw_load_f64(x->data, x->dtype, i) > p->valid_thresh;
    v /= (double)(valid > 1 ? valid : 1);
  }
  for (int64_t i = 0; i < n; i++) mxw_store_f64(dx->data, dx->dtype, i, v);
  return 0;
}
static int grad_make_loss_op(mxw_grad_ctx *g) {
  return mxw_grad_set_fwd_op_of(g, "_backward_MakeLoss", MXW_GIDS(mxw_grad_in(g, 0)));
}
static const mxw_op_def op_MakeLoss = {
    .name = "MakeLoss",
    .doc = MXW_DOC("Make your own loss function in network construction: identity forward, a constant gradient"),
    .attrs = k_make_loss_attrs,
    .num_attrs = 3,
    .param_size = sizeof(MakeLossParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_identity,
    .inplace = 1,
    .gradient = grad_make_loss_op,
};
/* piecewise constant in data: its own gradient is zero */
static int grad_backward_make_loss(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, mxw_grad_zeros_like(g, mxw_grad_in(g, 0)));
}
static const mxw_op_def op_backward_MakeLoss = {
    .name = "_backward_MakeLoss",
    .doc = MXW_DOC("the gradient of MakeLoss: grad_scale, normalized"),
    .attrs = k_make_loss_attrs,
    .num_attrs = 3,
    .param_size = sizeof(MakeLossParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_backward_make_loss,
    .gradient = grad_backward_make_loss,
};

/* ==== SVMOutput =============================================================================== */
typedef struct {
  double margin, regularization_coefficient;
  int use_linear;
} SVMParam;
static const mxw_attr_spec k_svm_attrs[] = {
    MXW_A_FLOAT("margin", SVMParam, margin, "1", "The loss function penalizes outputs that lie outside this margin."),
    MXW_A_FLOAT("regularization_coefficient", SVMParam, regularization_coefficient, "1",
                "Regularization parameter for the SVM."),
    MXW_A_BOOL("use_linear", SVMParam, use_linear, "False",
               "Whether to use L1-SVM objective. L2-SVM objective is used by default."),
};
/* data (N, ..., C); label: data's shape without the last axis */
static int infer_svm(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim >= 1, "data must have at least 1 axis");
  const mxw_shape l = mxw_shape_make(in[0].ndim - 1, in[0].dims);
  MXW_TRY(mxw_shape_assign(&in[1], &l, "label"));
  return mxw_shape_assign(&out[0], &in[0], "output");
}
static int infer_type_svm(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[0] >= 0 && in[1] < 0) in[1] = in[0];
  out[0] = in[0];
  return 0;
}
/* _backward_SVMOutput(label, output) */
static int fwd_backward_svm(const mxw_op_call *c) {
  const SVMParam *p = (const SVMParam *)c->param;
  const mxw_tensor *label = &c->inputs[0], *y = &c->inputs[1];
  mxw_tensor *dx = &c->outputs[0];
  const int64_t n = mxw_tensor_size(y);
  if (n == 0) return 0;
  const int64_t classes = y->shape.dims[y->shape.ndim - 1], rows = n / classes;
  const double m = p->margin, reg = p->regularization_coefficient;
  for (int64_t r = 0; r < rows; r++) {
    int64_t k;
    MXW_TRY(label_at(label, r, classes, &k));
    for (int64_t x = 0; x < classes; x++) {
      const double v = mxw_load_f64(y->data, y->dtype, r * classes + x);
      double d;
      if (p->use_linear)
        d = x == k ? -(double)(m > v) * reg : (double)(m > -v) * reg;
      else
        d = x == k ? (m > v ? 2 * (m - v) : 0.0) * -reg : (m > -v ? -2 * (m + v) : 0.0) * -reg;
      mxw_store_f64(dx->data, dx->dtype, r * classes + x, d);
    }
  }
  return 0;
}
static int grad_svm(mxw_grad_ctx *g) {
  return mxw_grad_set_fwd_op_of(g, "_backward_SVMOutput", MXW_GIDS(mxw_grad_in(g, 1), mxw_grad_out(g, 0)));
}
static const mxw_op_def op_SVMOutput = {
    .name = "SVMOutput",
    .doc = MXW_DOC("Computes support vector machine based transformation of the input."),
    .attrs = k_svm_attrs,
    .num_attrs = 3,
    .param_size = sizeof(SVMParam),
    .num_inputs = 2,
    .input_names = k_data_label,
    .num_outputs = 1,
    .infer_shape = infer_svm,
    .infer_type = infer_type_svm,
    .forward = fwd_identity,
    .gradient = grad_svm,
};
static const char *const k_label_output[] = {"label", "output", NULL};
static const mxw_op_def op_backward_SVMOutput = {
    .name = "_backward_SVMOutput",
    .doc = MXW_DOC("the gradient of SVMOutput from (label, output)"),
    .attrs = k_svm_attrs,
    .num_attrs = 3,
    .param_size = sizeof(SVMParam),
    .num_inputs = 2,
    .input_names = k_label_output,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_second,
    .infer_type = mxw_infer_type_second,
    .forward = fwd_backward_svm,
};

/* ==== softmax_cross_entropy =================================================================== */
static int infer_sce(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  const int64_t one = 1;
  const mxw_shape s = mxw_shape_make(1, &one);
  MXW_TRY(mxw_shape_assign(&out[0], &s, "output"));
  if (in[0].ndim < 0) return 0;
  shape_buf a;
  MXW_CHECK(in[0].ndim == 2, "data must be 2-D (batch, classes), got %s", SHAPE_STR(&in[0], a));
  const mxw_shape l = mxw_shape_make(1, in[0].dims);
  return mxw_shape_assign(&in[1], &l, "label");
}
/* Row r's softmax into prob[0..C) (double), returning the row's class k. */
static int sce_row(const mxw_tensor *x, const mxw_tensor *label, int64_t r, double *prob, int64_t *k) {
  const int64_t C = x->shape.dims[1];
  MXW_TRY(label_at(label, r, C, k));
  double mx = -INFINITY, s = 0;
  for (int64_t j = 0; j < C; j++) {
    prob[j] = mxw_load_f64(x->data, x->dtype, r * C + j);
    if (prob[j] > mx) mx = prob[j];
  }
  for (int64_t j = 0; j < C; j++) s += prob[j] = exp(prob[j] - mx);
  for (int64_t j = 0; j < C; j++) prob[j] /= s;
  return 0;
}
static int fwd_sce(const mxw_op_call *c) {
  const mxw_tensor *x = &c->inputs[0], *label = &c->inputs[1];
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1];
  double *prob = (double *)malloc((size_t)(C ? C : 1) * sizeof(double));
  if (!prob) return mxw_fail_oom("softmax_cross_entropy's row", (size_t)C * sizeof(double));
  double loss = 0;
  int rc = 0;
  for (int64_t r = 0; r < N && rc == 0; r++) {
    int64_t k = 0;
    rc = sce_row(x, label, r, prob, &k);
    if (rc == 0) loss -= log(prob[k] > 1e-8 ? prob[k] : 1e-8);
  }
  free(prob);
  MXW_TRY(rc);
  mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, 0, loss);
  return 0;
}
/* _backward_softmax_cross_entropy(ograd, data, label): ograd * (softmax(data) - one_hot(label)) */
static int fwd_backward_sce(const mxw_op_call *c) {
  const mxw_tensor *og = &c->inputs[0], *x = &c->inputs[1], *label = &c->inputs[2];
  mxw_tensor *dx = &c->outputs[0];
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1];
  const double scale = mxw_load_f64(og->data, og->dtype, 0);
  double *prob = (double *)malloc((size_t)(C ? C : 1) * sizeof(double));
  if (!prob) return mxw_fail_oom("softmax_cross_entropy's row", (size_t)C * sizeof(double));
  int rc = 0;
  for (int64_t r = 0; r < N && rc == 0; r++) {
    int64_t k = 0;
    rc = sce_row(x, label, r, prob, &k);
    if (rc != 0) break;
    prob[k] -= 1.0;
    for (int64_t j = 0; j < C; j++) mxw_store_f64(dx->data, dx->dtype, r * C + j, scale * prob[j]);
  }
  free(prob);
  return rc;
}
static int grad_sce(mxw_grad_ctx *g) {
  return mxw_grad_set_fwd_op_of(g, "_backward_softmax_cross_entropy",
                                MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1)));
}
static const mxw_op_def op_softmax_cross_entropy = {
    .name = "softmax_cross_entropy",
    .doc = MXW_DOC("Calculate cross entropy of softmax output and one-hot label."),
    .num_inputs = 2,
    .input_names = k_data_label,
    .num_outputs = 1,
    .infer_shape = infer_sce,
    .forward = fwd_sce,
    .gradient = grad_sce,
};
static const char *const k_sce_backward_inputs[] = {"ograd", "data", "label", NULL};
static const mxw_op_def op_backward_softmax_cross_entropy = {
    .name = "_backward_softmax_cross_entropy",
    .doc = MXW_DOC("the gradient of softmax_cross_entropy with respect to data"),
    .num_inputs = 3,
    .input_names = k_sce_backward_inputs,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_second,
    .infer_type = mxw_infer_type_second,
    .forward = fwd_backward_sce,
};

MXW_FAMILY(loss_ops, &op_MakeLoss, &op_backward_MakeLoss, &op_SVMOutput, &op_backward_SVMOutput,
           &op_softmax_cross_entropy, &op_backward_softmax_cross_entropy);
