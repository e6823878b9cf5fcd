/* contrib_more.c -- operators that GluonCV's exported inference graphs use beyond the detection
 * families (docs/gluon-exports.md):
 *  - amp_multicast (src/operator/tensor/amp_cast.h): GluonCV 0.8+'s NormalizedBoxCenterDecoder
 *    (SSD, Faster/Mask R-CNN's RPN) casts (x, anchors) to a common float type with it. Inputs of
 *    float32/float16/bfloat16 become the widest of them (float32 if any is float32), or with
 *    cast_narrow the narrowest (float16 before bfloat16, as MXNet's loop lets the last match win);
 *    other dtypes pass unchanged. Gradient: each output gradient cast back to its input's dtype
 *    (MXNet's _backward_amp_multicast).
 *  - _contrib_SyncBatchNorm (contrib/sync_batch_norm-inl.h): what segmentation and detection
 *    models trained with gluon.contrib.nn.SyncBatchNorm export. On one device it is BatchNorm over
 *    axis 1 (the inference path, moving statistics, is exactly MXNet's), and it runs BatchNorm's
 *    kernels here (forward, and _backward_BatchNorm for the gradient). Differences from MXNet's
 *    multi-GPU op, which only matter in training: the moving statistics are updated by the
 *    forward (as BatchNorm does) rather than by the backward, and the hidden var output is
 *    BatchNorm's. ndev and key (the cross-device barrier) are accepted and ignored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mxw_core.h"
#include "../include/mxw.h"

static const char *const k_variadic[] = {NULL};

/* ==== amp_multicast ============================================================================ */
typedef struct {
  int64_t num_outputs;
  int cast_narrow;
} MultiCastParam;
static const mxw_attr_spec k_multicast_attrs[] = {
    MXW_A_INT("num_outputs", MultiCastParam, num_outputs, NULL,
              "number of input/output pairs to be casted to the widest type"),
    MXW_A_BOOL("cast_narrow", MultiCastParam, cast_narrow, "False", "whether to cast to the narrowest type"),
};
static int validate_multicast(void *param) {
  const MultiCastParam *p = (const MultiCastParam *)param;
  MXW_CHECK(p->num_outputs >= 1 && p->num_outputs <= 100000, "num_outputs must be at least 1, got %lld",
            (long long)p->num_outputs);
  return 0;
}
static int multicast_n(const void *param) { return (int)((const MultiCastParam *)param)->num_outputs; }
#define MULTICAST_NAMES 32
static const char *const k_multicast_names[MULTICAST_NAMES] = {
    "data_0",  "data_1",  "data_2",  "data_3",  "data_4",  "data_5",  "data_6",  "data_7",
    "data_8",  "data_9",  "data_10", "data_11", "data_12", "data_13", "data_14", "data_15",
    "data_16", "data_17", "data_18", "data_19", "data_20", "data_21", "data_22", "data_23",
    "data_24", "data_25", "data_26", "data_27", "data_28", "data_29", "data_30", "data_31"};
static const char *multicast_input_name(const void *param, int index) {
  (void)param;
  return index >= 0 && index < MULTICAST_NAMES ? k_multicast_names[index] : NULL;
}
static int is_amp_float(int dt) { return dt == MXW_FLOAT32 || dt == MXW_FLOAT16 || dt == MXW_BFLOAT16; }

static int infer_shape_multicast(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  MXW_CHECK(nin == nout, "amp_multicast: %d inputs for %d outputs", nin, nout);
  for (int i = 0; i < nin; i++) {
    MXW_TRY(mxw_shape_assign(&out[i], &in[i], "output"));
    MXW_TRY(mxw_shape_assign(&in[i], &out[i], "input"));
  }
  return 0;
}
/* MXNet's AMPMultiCastType: the target is float32 if any input (or known output) is float32, else
 * input 0's dtype; with cast_narrow it starts at float32 and the last float16/bfloat16 seen wins. */
static int infer_type_multicast(const void *param, int nin, int *in, int nout, int *out) {
  const MultiCastParam *p = (const MultiCastParam *)param;
  MXW_CHECK(nin == nout, "amp_multicast: %d inputs for %d outputs", nin, nout);
  int target = p->cast_narrow ? MXW_FLOAT32 : in[0];
  for (int i = 0; i < nin; i++) {
    if (!p->cast_narrow && (in[i] == MXW_FLOAT32 || out[i] == MXW_FLOAT32))
      target = MXW_FLOAT32;
    else if (p->cast_narrow && (in[i] == MXW_FLOAT16 || out[i] == MXW_FLOAT16))
      target = MXW_FLOAT16;
    else if (p->cast_narrow && (in[i] == MXW_BFLOAT16 || out[i] == MXW_BFLOAT16))
      target = MXW_BFLOAT16;
  }
  for (int i = 0; i < nin; i++) {
    if (in[i] < 0) continue;
    const int dt = is_amp_float(in[i]) ? target : in[i];
    if (dt < 0) continue;
    if (out[i] >= 0 && out[i] != dt)
      return mxw_fail("amp_multicast: output %d is %s, expected %s", i, mxw_dtype_name(out[i]), mxw_dtype_name(dt));
    out[i] = dt;
  }
  return 0;
}
static int fwd_multicast(const mxw_op_call *c) {
  for (int i = 0; i < c->num_inputs; i++) {
    const mxw_tensor *x = &c->inputs[i];
    mxw_tensor *y = &c->outputs[i];
    if (x->dtype == y->dtype) {
      if (x->data != y->data) memmove(y->data, x->data, (size_t)mxw_tensor_size(x) * (size_t)mxw_dtype_size(x->dtype));
    } else {
      mxw_convert(x->data, x->dtype, y->data, y->dtype, mxw_tensor_size(x));
    }
  }
  return 0;
}
static int grad_multicast(mxw_grad_ctx *g) {
  const int n = mxw_grad_num_inputs(g);
  for (int i = 0; i < n; i++) {
    const char *dt = mxw_dtype_name(mxw_grad_in_dtype(g, i));
    MXW_TRY(mxw_grad_set(g, i, mxw_grad_op(g, "Cast", MXW_KV("dtype", dt), MXW_GIDS(mxw_grad_ograd(g, i)))));
  }
  return 0;
}
static const mxw_op_def op_amp_multicast = {
    .name = "amp_multicast",
    .doc =
        MXW_DOC("casts its float32/float16/bfloat16 inputs to the widest (or with cast_narrow the narrowest) of their "
                "types; other inputs are copied unchanged"),
    .attrs = k_multicast_attrs,
    .num_attrs = 2,
    .param_size = sizeof(MultiCastParam),
    .validate = validate_multicast,
    .num_inputs = MXW_VARIADIC,
    .input_names = k_variadic,
    .num_inputs_fn = multicast_n,
    .input_name_fn = multicast_input_name,
    .num_outputs = 1,
    .num_outputs_fn = multicast_n,
    .infer_shape = infer_shape_multicast,
    .infer_type = infer_type_multicast,
    .forward = fwd_multicast,
    .gradient = grad_multicast};

/* ==== _contrib_SyncBatchNorm ==================================================================== */
typedef struct {
  double eps, momentum;
  int fix_gamma, use_global_stats, output_mean_var;
  int64_t ndev;
  mxw_str key;
} SyncBNParam;
static const mxw_attr_spec k_sbn_attrs[] = {
    MXW_A_FLOAT("eps", SyncBNParam, eps, "0.001", "added to the variance before the square root"),
    MXW_A_FLOAT("momentum", SyncBNParam, momentum, "0.9", "moving average momentum (training)"),
    MXW_A_BOOL("fix_gamma", SyncBNParam, fix_gamma, "True", "use gamma = 1 and ignore the gamma input"),
    MXW_A_BOOL("use_global_stats", SyncBNParam, use_global_stats, "False",
               "normalize with the moving statistics even in training"),
    MXW_A_BOOL("output_mean_var", SyncBNParam, output_mean_var, "False", "also return the mean and var outputs"),
    MXW_A_INT("ndev", SyncBNParam, ndev, "1", "the count of devices (one here)"),
    MXW_A_STRING("key", SyncBNParam, key, NULL, "hash key for the cross-device synchronization (ignored here)"),
};
static const char *const k_sbn_inputs[] = {"data", "gamma", "beta", "moving_mean", "moving_var", NULL};
static const char *const k_sbn_outputs[] = {"output", "mean", "var", NULL};
static const int k_sbn_mutate[] = {3, 4};

static int sbn_visible(const void *param) { return ((const SyncBNParam *)param)->output_mean_var ? 3 : 1; }
static const char *sbn_input_var_init(const void *param, int index) {
  (void)param;
  return index == 3 ? "[\"zero\", {}]" : index == 4 ? "[\"one\", {}]" : NULL;
}

/* The attributes of the equivalent BatchNorm (axis 1), in MXNet's string forms. */
typedef struct {
  char eps[40], momentum[40];
  const char *kv[13];
} sbn_bn_attrs;
static void sbn_attrs(const SyncBNParam *p, sbn_bn_attrs *a) {
  snprintf(a->eps, sizeof a->eps, "%.17g", p->eps);
  snprintf(a->momentum, sizeof a->momentum, "%.17g", p->momentum);
  const char *kv[13] = {"eps",
                        a->eps,
                        "momentum",
                        a->momentum,
                        "fix_gamma",
                        p->fix_gamma ? "True" : "False",
                        "use_global_stats",
                        p->use_global_stats ? "True" : "False",
                        "output_mean_var",
                        p->output_mean_var ? "True" : "False",
                        "axis",
                        "1",
                        NULL};
  memcpy(a->kv, kv, sizeof kv);
}
/* A BatchNorm params object for p (freed by the caller with mxw_params_free). */
static int sbn_bn_params(const SyncBNParam *p, mxw_params **out) {
  const int op = mxw_op_find("BatchNorm");
  MXW_CHECK(op >= 0, "SyncBatchNorm: BatchNorm is not registered");
  sbn_bn_attrs a;
  sbn_attrs(p, &a);
  const char *keys[6], *vals[6];
  for (int i = 0; i < 6; i++) {
    keys[i] = a.kv[2 * i];
    vals[i] = a.kv[2 * i + 1];
  }
  return mxw_params_create(op, 6, keys, vals, out);
}
static int infer_shape_sbn(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  mxw_params *bn = NULL;
  MXW_TRY(sbn_bn_params((const SyncBNParam *)param, &bn));
  const int rc = bn->op->infer_shape(bn->param, nin, in, nout, out);
  mxw_params_free(bn);
  return rc;
}
static int infer_type_sbn(const void *param, int nin, int *in, int nout, int *out) {
  mxw_params *bn = NULL;
  MXW_TRY(sbn_bn_params((const SyncBNParam *)param, &bn));
  const int rc = bn->op->infer_type ? bn->op->infer_type(bn->param, nin, in, nout, out)
                                    : mxw_infer_type_same(bn->param, nin, in, nout, out);
  mxw_params_free(bn);
  return rc;
}
static int fwd_sbn(const mxw_op_call *c) {
  mxw_params *bn = NULL;
  MXW_TRY(sbn_bn_params((const SyncBNParam *)c->param, &bn));
  MXW_CHECK(bn != NULL, "SyncBatchNorm: no BatchNorm params");
  mxw_op_call call = *c;
  call.op = bn->op;
  call.param = bn->param;
  call.fused_act = 0;
  const int rc = mxw_op_forward(&call);
  mxw_params_free(bn);
  return rc;
}
static int grad_sbn(mxw_grad_ctx *g) {
  sbn_bn_attrs a;
  sbn_attrs((const SyncBNParam *)mxw_grad_param(g), &a);
  mxw_gid ins[8] = {mxw_grad_ograd(g, 0), mxw_grad_out(g, 1), mxw_grad_out(g, 2), mxw_grad_in(g, 0),
                    mxw_grad_in(g, 1),    mxw_grad_in(g, 2),  mxw_grad_in(g, 3),  mxw_grad_in(g, 4)};
  mxw_gid d[3];
  MXW_TRY(mxw_grad_op_n(g, "_backward_BatchNorm", a.kv, ins, 8, d, 3));
  for (int i = 0; i < 3; i++) MXW_TRY(mxw_grad_set(g, i, d[i])); /* none for the moving statistics */
  return 0;
}
static const mxw_op_def op_SyncBatchNorm = {
    .name = "_contrib_SyncBatchNorm",
    .doc =
        MXW_DOC("batch normalization over axis 1 synchronized across devices (one device here: BatchNorm); the moving "
                "statistics in inference"),
    .attrs = k_sbn_attrs,
    .num_attrs = (int)(sizeof k_sbn_attrs / sizeof k_sbn_attrs[0]),
    .param_size = sizeof(SyncBNParam),
    .num_inputs = 5,
    .input_names = k_sbn_inputs,
    .num_outputs = 3,
    .num_visible_outputs_fn = sbn_visible,
    .output_names = k_sbn_outputs,
    .mutate_inputs = k_sbn_mutate,
    .num_mutate_inputs = 2,
    .infer_shape = infer_shape_sbn,
    .infer_type = infer_type_sbn,
    .forward = fwd_sbn,
    .input_var_init = sbn_input_var_init,
    .gradient = grad_sbn};

MXW_FAMILY(contrib_more, &op_amp_multicast, &op_SyncBatchNorm);
