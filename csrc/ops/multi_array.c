/* multi_array.c -- ops over several whole arrays at once, which MXNet 1.9.1's optimizers, Gluon's
 * zero_grad and AMP's loss scaler call (src/operator/contrib/multi_sum_sq, multi_lars, all_finite,
 * reset_arrays):
 *
 *   multi_sum_sq(array_0, ..., num_arrays)      float32 (num_arrays,): each array's sum of squares
 *   multi_lars(lrs, weights_sum_sq, grads_sum_sq, wds, eta, eps, rescale_grad)
 *       LARS's learning rates: lr * eta * |w| / (|g| * rescale_grad + wd * |w| + eps) where
 *       |w| > 0 and |g|^2 > 0, else lr (MultiLARSKernel; every input float32 of one shape)
 *   all_finite(data, init_output)               float32 (1,): 1 if every element is finite
 *   multi_all_finite(array_0, ..., num_arrays, init_output)
 *   reset_arrays(array_0, ..., num_arrays)      sets every array to zero in place; no outputs
 *
 * With init_output false, all_finite / multi_all_finite only write 0 where they find a non-finite
 * value and otherwise leave the output as it was (AMP passes out= to fold several calls into one
 * flag), as MXNet's. The sums of squares accumulate in double (MXNet: float). Like MXNet, none of
 * them has a gradient; they are marked non-differentiable. Every dtype is accepted (integers are
 * always finite; MXNet's all_finite and multi_sum_sq take the float types only). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/mxw_parallel.h"

#define MAX_ARRAYS 1000 /* the largest num_arrays accepted (MXNet: 200 for multi_all_finite's kernel) */

typedef struct {
  int64_t num_arrays;
  int init_output;
} MultiArrayParam;

static const mxw_attr_spec k_num_arrays_attrs[] = {
    MXW_A_INT("num_arrays", MultiArrayParam, num_arrays, NULL, "number of input arrays."),
};
static const mxw_attr_spec k_all_finite_attrs[] = {
    MXW_A_BOOL("init_output", MultiArrayParam, init_output, "True", "Initialize output to 1."),
};
static const mxw_attr_spec k_multi_all_finite_attrs[] = {
    MXW_A_INT("num_arrays", MultiArrayParam, num_arrays, "1", "Number of arrays."),
    MXW_A_BOOL("init_output", MultiArrayParam, init_output, "True", "Initialize output to 1."),
};

static int validate_num_arrays(void *param) {
  const MultiArrayParam *p = (const MultiArrayParam *)param;
  MXW_CHECK(p->num_arrays >= 1 && p->num_arrays <= MAX_ARRAYS, "num_arrays must be in [1, %d], got %lld", MAX_ARRAYS,
            (long long)p->num_arrays);
  return 0;
}
static int num_arrays(const void *param) { return (int)((const MultiArrayParam *)param)->num_arrays; }
/* "array_0", "array_1", ... (FListInputNames) */
static const char *array_name(const void *param, int index) {
  static char names[MAX_ARRAYS][12];
  (void)param;
  if (index < 0 || index >= MAX_ARRAYS) return NULL;
  if (!names[index][0]) snprintf(names[index], sizeof names[0], "array_%d", index);
  return names[index];
}
static const char *const k_data[] = {"data", NULL};
/* the op-table fields of the ops over num_arrays arrays named array_<i> */
#define ARRAY_INPUTS                                                                                  \
  .param_size = sizeof(MultiArrayParam), .validate = validate_num_arrays, .num_inputs = MXW_VARIADIC, \
  .input_names = k_data, .num_inputs_fn = num_arrays, .input_name_fn = array_name

/* ---- multi_sum_sq --------------------------------------------------------------------------- */
static int infer_multi_sum_sq(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)in;
  (void)nout;
  MXW_CHECK(nin == num_arrays(param), "%d inputs for num_arrays %d", nin, num_arrays(param));
  const int64_t n = num_arrays(param);
  const mxw_shape s = mxw_shape_make(1, &n);
  return mxw_shape_assign(&out[0], &s, "output");
}
/* the arrays share one dtype (MultiSumSqType); the sums are float32 */
static int infer_type_float_out(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nout;
  int dtype = -1;
  for (int i = 0; i < nin; i++)
    if (in[i] >= 0) {
      MXW_CHECK(dtype < 0 || in[i] == dtype, "array_%d has dtype %s, array 0 %s", i, mxw_dtype_name(in[i]),
                mxw_dtype_name(dtype));
      dtype = in[i];
    }
  for (int i = 0; i < nin; i++) in[i] = dtype;
  out[0] = MXW_FLOAT32;
  return 0;
}
static double sum_sq(const mxw_tensor *t) {
  const int64_t n = mxw_tensor_size(t);
  double s = 0;
  if (t->dtype == MXW_FLOAT32) {
    const float *x = (const float *)t->data;
    for (int64_t i = 0; i < n; i++) s += (double)x[i] * x[i];
  } else {
    for (int64_t i = 0; i < n; i++) {
      const double v = mxw_load_f64(t->data, t->dtype, i);
      s += v * v;
    }
  }
  return s;
}
static int fwd_multi_sum_sq(const mxw_op_call *c) {
  float *o = (float *)c->outputs[0].data;
  for (int i = 0; i < c->num_inputs; i++) o[i] = (float)sum_sq(&c->inputs[i]);
  return 0;
}
static const mxw_op_def op_multi_sum_sq = {
    .name = "multi_sum_sq",
    .doc = MXW_DOC("Compute the sums of squares of multiple arrays"),
    .attrs = k_num_arrays_attrs,
    .num_attrs = 1,
    ARRAY_INPUTS,
    .num_outputs = 1,
    .infer_shape = infer_multi_sum_sq,
    .infer_type = infer_type_float_out,
    .forward = fwd_multi_sum_sq,
    .no_grad = 1,
};

/* ---- multi_lars ----------------------------------------------------------------------------- */
typedef struct {
  double eta, eps, rescale_grad;
} LARSParam;
static const mxw_attr_spec k_lars_attrs[] = {
    MXW_A_FLOAT("eta", LARSParam, eta, NULL, "LARS eta"),
    MXW_A_FLOAT("eps", LARSParam, eps, NULL, "LARS eps"),
    MXW_A_FLOAT("rescale_grad", LARSParam, rescale_grad, "1", "Gradient rescaling factor"),
};
static const char *const k_lars_inputs[] = {"lrs", "weights_sum_sq", "grads_sum_sq", "wds", NULL};
/* ElemwiseType<4, 1>, and MultiLARS takes float32 only */
static int infer_type_lars(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  for (int i = 0; i < nin; i++)
    MXW_CHECK(in[i] < 0 || in[i] == MXW_FLOAT32, "%s has dtype %s: multi_lars takes float32 only", k_lars_inputs[i],
              mxw_dtype_name(in[i]));
  for (int i = 0; i < nin; i++) in[i] = MXW_FLOAT32;
  for (int i = 0; i < nout; i++) out[i] = MXW_FLOAT32;
  return 0;
}
static int fwd_multi_lars(const mxw_op_call *c) {
  const LARSParam *p = (const LARSParam *)c->param;
  const float *lrs = (const float *)c->inputs[0].data, *wss = (const float *)c->inputs[1].data;
  const float *gss = (const float *)c->inputs[2].data, *wds = (const float *)c->inputs[3].data;
  float *o = (float *)c->outputs[0].data;
  const float eta = (float)p->eta, eps = (float)p->eps, rs = (float)p->rescale_grad;
  const int64_t n = mxw_tensor_size(&c->outputs[0]);
  for (int64_t i = 0; i < n; i++) {
    const float w_norm = sqrtf(wss[i]);
    const int valid = w_norm > 0.0f && gss[i] > 0.0f;
    o[i] = valid ? lrs[i] * eta * w_norm / (sqrtf(gss[i]) * rs + wds[i] * w_norm + eps) : lrs[i];
  }
  return 0;
}
static const mxw_op_def op_multi_lars = {
    .name = "multi_lars",
    .doc = MXW_DOC("Compute the LARS coefficients of multiple weights and grads from their sums of square"),
    .attrs = k_lars_attrs,
    .num_attrs = 3,
    .param_size = sizeof(LARSParam),
    .num_inputs = 4,
    .input_names = k_lars_inputs,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .infer_type = infer_type_lars,
    .forward = fwd_multi_lars,
    .inplace = 1,
    .no_grad = 1,
};

/* ---- all_finite / multi_all_finite ---------------------------------------------------------- */
static int infer_flag(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)in;
  (void)nout;
  const int64_t one = 1;
  const mxw_shape s = mxw_shape_make(1, &one);
  return mxw_shape_assign(&out[0], &s, "output");
}
static int infer_type_flag(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)in;
  (void)nout;
  out[0] = MXW_FLOAT32;
  return 0;
}
static int all_finite_tensor(const mxw_tensor *t) {
  const int64_t n = mxw_tensor_size(t);
  if (t->dtype == MXW_FLOAT32) {
    const float *x = (const float *)t->data;
    for (int64_t i = 0; i < n; i++)
      if (!isfinite(x[i])) return 0;
  } else if (mxw_dtype_is_float(t->dtype)) {
    for (int64_t i = 0; i < n; i++)
      if (!isfinite(mxw_load_f64(t->data, t->dtype, i))) return 0;
  }
  return 1;
}
static int fwd_all_finite(const mxw_op_call *c) {
  const MultiArrayParam *p = (const MultiArrayParam *)c->param;
  float *o = (float *)c->outputs[0].data;
  if (p->init_output) o[0] = 1.0f;
  for (int i = 0; i < c->num_inputs; i++)
    if (!all_finite_tensor(&c->inputs[i])) {
      o[0] = 0.0f;
      break;
    }
  return 0;
}
static const mxw_op_def op_all_finite = {
    .name = "all_finite",
    .doc = MXW_DOC("Check if all the float numbers in the array are finite (used for AMP)"),
    .attrs = k_all_finite_attrs,
    .num_attrs = 1,
    .param_size = sizeof(MultiArrayParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_flag,
    .infer_type = infer_type_flag,
    .forward = fwd_all_finite,
    .no_grad = 1,
};
static const mxw_op_def op_multi_all_finite = {
    .name = "multi_all_finite",
    .doc = MXW_DOC("Check if all the float numbers in all the arrays are finite (used for AMP)"),
    .attrs = k_multi_all_finite_attrs,
    .num_attrs = 2,
    ARRAY_INPUTS,
    .num_outputs = 1,
    .infer_shape = infer_flag,
    .infer_type = infer_type_flag,
    .forward = fwd_all_finite,
    .no_grad = 1,
};

/* ---- reset_arrays --------------------------------------------------------------------------- */
static int infer_nothing(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)in;
  (void)nout;
  (void)out;
  MXW_CHECK(nin == num_arrays(param), "%d inputs for num_arrays %d", nin, num_arrays(param));
  return 0;
}
static int infer_type_nothing(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)in;
  (void)nout;
  (void)out;
  return 0;
}
static int fwd_reset_arrays(const mxw_op_call *c) {
  for (int i = 0; i < c->num_inputs; i++) {
    const mxw_tensor *t = &c->inputs[i];
    memset(t->data, 0, (size_t)mxw_tensor_size(t) * (size_t)mxw_dtype_size(t->dtype));
  }
  return 0;
}
static const mxw_op_def op_reset_arrays = {
    .name = "reset_arrays",
    .doc = MXW_DOC("Set to zero multiple arrays"),
    .attrs = k_num_arrays_attrs,
    .num_attrs = 1,
    ARRAY_INPUTS,
    .num_outputs = 0,
    .num_mutate_inputs = MXW_MUTATE_ALL,
    .infer_shape = infer_nothing,
    .infer_type = infer_type_nothing,
    .forward = fwd_reset_arrays,
    .no_grad = 1,
};

MXW_FAMILY(multi_array, &op_multi_sum_sq, &op_multi_lars, &op_all_finite, &op_multi_all_finite, &op_reset_arrays);
