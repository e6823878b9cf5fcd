/* optimizer.c -- MXNet 1.9.1's optimizer update operators (src/operator/optimizer_op-inl.h,
 * optimizer_op.cc): the ops mx.optimizer's classes call, with MXNet's names, inputs, attributes,
 * defaults and kernels.
 *
 *   sgd_update(weight, grad)                      out = (1 - lr*wd)*w - lr*clip(rescale_grad*g)
 *   sgd_mom_update(weight, grad, mom)             mom = momentum*mom - lr*wd*w - lr*clip(rescale_grad*g)
 *                                                 out = w + mom
 *   mp_sgd_update(weight, grad, weight32)         the same on the float32 master copy weight32
 *   mp_sgd_mom_update(weight, grad, mom, weight32)
 *   nag_mom_update(weight, grad, mom)             Nesterov momentum
 *   mp_nag_mom_update(weight, grad, mom, weight32)
 *   ftml_update(weight, grad, d, v, z)            FTML
 *   adam_update(weight, grad, mean, var)          Adam (the bias correction is in lr, by the caller)
 *   rmsprop_update(weight, grad, n)               Tieleman & Hinton
 *   rmspropalex_update(weight, grad, n, g, delta) Graves (centered)
 *   ftrl_update(weight, grad, z, n)               FTRL-proximal
 *   signsgd_update(weight, grad)                  out = (1 - lr*wd)*w - lr*sign(g)
 *   signum_update(weight, grad, mom)              sign of the momentum
 *   lamb_update_phase1(weight, grad, mean, var)   -> g, the LAMB direction
 *   lamb_update_phase2(weight, g, r1, r2)         out = w - lr * (r1/r2) * g
 *   mp_lamb_update_phase1/2                       the same with a float32 master copy
 *   multi_sgd_update, multi_sgd_mom_update,       a group of weights in one call (Python's SGD),
 *   multi_mp_sgd_update, multi_mp_sgd_mom_update  each with its own lr and wd (below)
 *
 * The states (mom, mean, var, n, z, ..., weight32) are updated in place, as MXNet's
 * FMutateInputs: the kernels write them through the input tensors. The output is the new
 * weight; Python's optimizers call `op(weight, grad, ..., out=weight)` (the runtime computes an
 * output that aliases an input into a temporary, so the kernels read the old weight throughout).
 * clip_gradient < 0 turns clipping off (the kernels test `>= 0`, as MXNet's do; the Python
 * optimizers pass it only when set). MXNet's attributes are C floats: each is rounded to float
 * and then converted to the weight's dtype, as MXNet does. float32 and float64 compute in their
 * own type; float16 computes through float32 copies (the mp_ variants keep a float32 master copy
 * instead). lazy_update only matters for row_sparse gradients and is accepted and ignored.
 * The mp_ kernels compute in float32 whatever the weight's dtype (MXNet's MP kernels).
 * Every kernel maps element i of its inputs to element i of the output and states, so large
 * updates split into element ranges over the thread pool (kern_run). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/mxw_parallel.h"
#include "../core/simd.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define MAX_IN 8

/* mshadow_op::clip: x bounded to [-b, b]. */
#define CLIP(x, b) ((x) > (b) ? (b) : ((x) < -(b) ? -(b) : (x)))
/* an attribute as the kernel sees it: MXNet's float field cast to DType */
#define PF(x) ((T)(float)(x))
/* Optimizer states that decay geometrically (momentum, Adam's moments, RMSProp's averages) pass
 * through the subnormal range when their gradient stays zero (pixels that are always 0, dead
 * units), and WebAssembly has no flush-to-zero mode: subnormal arithmetic runs ~17x slower on
 * x86 (measured: sgd_mom_update on 200k subnormal momenta 1.67 ms against 0.10 ms). The states
 * are flushed to zero as they are stored, as CPU frameworks do with FTZ/DAZ on (TensorFlow
 * turns it on for its CPU kernels): a difference below 1.2e-38 (float32) per element. */
#define TINY_T ((T)(sizeof(T) == 4 ? FLT_MIN : DBL_MIN))
/* One comparison of |x| and a select: the two-sided test compiled to branches on the state's
 * sign, which random gradients mispredict half the time (sgd_mom_update: ~6 ns per element). */
#define FTZ(x) (ABS_T(x) < TINY_T ? (T)0 : (x))
#define ABS_T(x) _Generic((x), float : fabsf, default : fabs)(x)
/* mshadow_op::sign */
#define SIGN(x) ((x) > 0 ? (T)1 : ((x) < 0 ? (T)-1 : (T)0))

/* One kernel: n elements, the op's inputs (in the op's order), its output and parsed params. */
typedef void (*kern_fn)(int64_t n, void *const *in, void *out, const void *vp);

/* Defines name_f32 and name_f64 from one body written in the element type T. */
#define DEFINE_KERNEL(name, ...)                                                  \
  static void name##_f32(int64_t n, void *const *in, void *out, const void *vp) { \
    typedef float T;                                                              \
    __VA_ARGS__                                                                   \
  }                                                                               \
  static void name##_f64(int64_t n, void *const *in, void *out, const void *vp) { \
    typedef double T;                                                             \
    __VA_ARGS__                                                                   \
  }

static int dtype_error(int dtype) {
  return mxw_fail("This operation only support floating point types, not %s", mxw_dtype_name(dtype));
}

/* The states this op mutates (FMutateInputs). */
static int is_mutated(const mxw_op_def *op, int i) { return mxw_op_mutates_input(op, i); }

/* A kernel over elements [begin, end) on the pool: the inputs with n elements (`full`) and the
 * output are offset to begin; the others (lamb's r1, r2) are passed whole. With copy_weight
 * (out= weight, in place) input 0 is read from a stack copy of each block, so the compiler's
 * overlap check between weight and output does not send the whole loop down its scalar path. */
typedef struct {
  kern_fn f;
  int nin, copy_weight;
  void *in[MAX_IN];
  uint8_t full[MAX_IN];
  void *out;
  size_t es;
  const void *param;
} kern_job;

#define KERN_COST 4.0 /* element-ops per element of an update (a few multiply-adds, a sqrt, a division) */

static void kern_chunk(void *ctx, int64_t begin, int64_t end) {
  const kern_job *j = (const kern_job *)ctx;
  void *cin[MAX_IN];
  for (int i = 0; i < j->nin; i++) cin[i] = j->full[i] ? (char *)j->in[i] + (size_t)begin * j->es : j->in[i];
  char *out = (char *)j->out + (size_t)begin * j->es;
  const int64_t n = end - begin;
  if (!j->copy_weight) {
    j->f(n, cin, out, j->param);
    return;
  }
  double wbuf[512];
  const int64_t chunk = (int64_t)(sizeof wbuf / j->es);
  char *w = (char *)cin[0];
  for (int64_t off = 0; off < n; off += chunk) {
    const int64_t len = n - off < chunk ? n - off : chunk;
    void *bin[MAX_IN];
    for (int i = 0; i < j->nin; i++) bin[i] = j->full[i] ? (char *)cin[i] + (size_t)off * j->es : cin[i];
    memcpy(wbuf, w + (size_t)off * j->es, (size_t)len * j->es);
    bin[0] = wbuf;
    j->f(len, bin, out + (size_t)off * j->es, j->param);
  }
}

static int is_lane_kernel(kern_fn f);

/* Runs f over n elements: in[i] has sizes[i] elements of es bytes. */
static void kern_run(kern_fn f, int nin, void *const *in, const int64_t *sizes, void *out, size_t es, int64_t n,
                     const void *param) {
  kern_job j = {f, nin, !is_lane_kernel(f), {0}, {0}, out, es, param};
  for (int i = 0; i < nin; i++) {
    j.in[i] = in[i];
    j.full[i] = sizes[i] == n;
    j.copy_weight &= sizes[i] == n;
  }
  j.copy_weight &= out == in[0];
  mxw_parallel_run(n, 16, KERN_COST * (es == 8 ? 2.0 : 1.0), kern_chunk, &j);
}

/* Runs a same-dtype kernel: float32/float64 directly; float16 through float32 copies of every
 * input, the mutated inputs and the output converted back after. */
static int run_same(const mxw_op_call *c, kern_fn f32, kern_fn f64) {
  const int dt = c->inputs[0].dtype;
  const int64_t n = mxw_tensor_size(&c->inputs[0]);
  void *in[MAX_IN];
  int64_t sizes[MAX_IN];
  for (int i = 0; i < c->num_inputs; i++) sizes[i] = mxw_tensor_size(&c->inputs[i]);
  if (dt == MXW_FLOAT32 || dt == MXW_FLOAT64) {
    for (int i = 0; i < c->num_inputs; i++) in[i] = c->inputs[i].data;
    kern_run(dt == MXW_FLOAT32 ? f32 : f64, c->num_inputs, in, sizes, c->outputs[0].data, (size_t)mxw_dtype_size(dt), n,
             c->param);
    return 0;
  }
  if (dt != MXW_FLOAT16) return dtype_error(dt);
  float *buf[MAX_IN + 1] = {0};
  int rc = 0;
  for (int i = 0; i <= c->num_inputs && rc == 0; i++) {
    int64_t m = i < c->num_inputs ? sizes[i] : n;
    buf[i] = (float *)malloc((size_t)(m > 0 ? m : 1) * sizeof(float));
    if (!buf[i])
      rc = mxw_fail("out of memory");
    else if (i < c->num_inputs)
      mxw_parallel_convert(c->inputs[i].data, dt, buf[i], MXW_FLOAT32, m);
  }
  if (rc == 0) {
    for (int i = 0; i < c->num_inputs; i++) in[i] = buf[i];
    kern_run(f32, c->num_inputs, in, sizes, buf[c->num_inputs], sizeof(float), n, c->param);
    for (int i = 0; i < c->num_inputs; i++)
      if (is_mutated(c->op, i)) mxw_parallel_convert(buf[i], MXW_FLOAT32, c->inputs[i].data, dt, sizes[i]);
    mxw_parallel_convert(buf[c->num_inputs], MXW_FLOAT32, c->outputs[0].data, c->outputs[0].dtype, n);
  }
  for (int i = 0; i <= c->num_inputs; i++) free(buf[i]);
  return rc;
}

/* Runs a float32 mixed-precision kernel: the inputs in `low` (a bit mask: weight, grad) have the
 * weight's dtype and are read as float32 (copies unless float32 already); the other inputs are
 * float32; the output (the weight's dtype, or float32) is written from float32. */
static int run_mp(const mxw_op_call *c, unsigned low, kern_fn f32) {
  const int64_t n = mxw_tensor_size(&c->inputs[0]);
  for (int i = 0; i < c->num_inputs; i++) {
    int dt = c->inputs[i].dtype;
    if (dt != MXW_FLOAT16 && dt != MXW_FLOAT32 && dt != MXW_FLOAT64) return dtype_error(dt);
  }
  void *in[MAX_IN];
  float *tmp[MAX_IN + 1] = {0};
  int rc = 0;
  for (int i = 0; i < c->num_inputs && rc == 0; i++) {
    in[i] = c->inputs[i].data;
    if (!((low >> i) & 1u) || c->inputs[i].dtype == MXW_FLOAT32) continue;
    tmp[i] = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!tmp[i])
      rc = mxw_fail("out of memory");
    else
      mxw_parallel_convert(c->inputs[i].data, c->inputs[i].dtype, tmp[i], MXW_FLOAT32, n);
    in[i] = tmp[i];
  }
  void *out = c->outputs[0].data;
  if (rc == 0 && c->outputs[0].dtype != MXW_FLOAT32) {
    tmp[MAX_IN] = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!tmp[MAX_IN]) rc = mxw_fail("out of memory");
    out = tmp[MAX_IN];
  }
  if (rc == 0) {
    int64_t sizes[MAX_IN];
    for (int i = 0; i < c->num_inputs; i++) sizes[i] = mxw_tensor_size(&c->inputs[i]);
    kern_run(f32, c->num_inputs, in, sizes, out, sizeof(float), n, c->param);
    if (tmp[MAX_IN]) mxw_parallel_convert(tmp[MAX_IN], MXW_FLOAT32, c->outputs[0].data, c->outputs[0].dtype, n);
  }
  for (int i = 0; i <= MAX_IN; i++) free(tmp[i]);
  return rc;
}

/* ---- type inference ------------------------------------------------------------------------- */
/* MP_InferType<n_low, 1, nin>: inputs from n_low on are float32 (the master copy and states);
 * the first n_low inputs and the output share the weight's dtype. */
static int mp_type(const char *const *names, int n_low, int nin, int *in, int nout, int *out) {
  for (int i = n_low; i < nin; i++) {
    if (in[i] >= 0 && in[i] != MXW_FLOAT32)
      return mxw_fail(
          "input %d (%s) has dtype %s, expected float32 (Type inconsistent, Provided = %s, inferred type = float32)", i,
          names[i], mxw_dtype_name(in[i]), mxw_dtype_name(in[i]));
    in[i] = MXW_FLOAT32;
  }
  return mxw_infer_type_same(NULL, n_low, in, nout, out);
}

/* ---- shared input names and mutation lists ---------------------------------------------------- */
static const char *const k_w_g[] = {"weight", "grad", NULL};
static const char *const k_w_g_mom[] = {"weight", "grad", "mom", NULL};
static const char *const k_w_g_w32[] = {"weight", "grad", "weight32", NULL};
static const char *const k_w_g_mom_w32[] = {"weight", "grad", "mom", "weight32", NULL};
static const char *const k_w_g_mean_var[] = {"weight", "grad", "mean", "var", NULL};
static const char *const k_w_g_mean_var_w32[] = {"weight", "grad", "mean", "var", "weight32", NULL};
static const char *const k_ftml_in[] = {"weight", "grad", "d", "v", "z", NULL};
static const char *const k_rmsprop_in[] = {"weight", "grad", "n", NULL};
static const char *const k_rmspropalex_in[] = {"weight", "grad", "n", "g", "delta", NULL};
static const char *const k_ftrl_in[] = {"weight", "grad", "z", "n", NULL};
static const char *const k_lamb2_in[] = {"weight", "g", "r1", "r2", NULL};
static const char *const k_mp_lamb2_in[] = {"weight", "g", "r1", "r2", "weight32", NULL};
/* Fields every update op shares: one output (the new weight, written over the weight with
 * out=weight: FInplaceOption {0, 0}) and no FGradient (an in-place update is not part of a
 * model; MXNet registers none); UPDATE_OP_MUT adds the states the op mutates (FMutateInputs). */
#define UPDATE_OP .num_outputs = 1, .no_grad = 1, .inplace = 1
#define UPDATE_OP_MUT(mutated) \
  UPDATE_OP, .mutate_inputs = mutated, .num_mutate_inputs = (int)(sizeof(mutated) / sizeof((mutated)[0]))
static const int k_mut_2[] = {2};
static const int k_mut_2_3[] = {2, 3};
static const int k_mut_2_3_4[] = {2, 3, 4};
static const int k_mut_4[] = {4};

#define DOC_WD                                                                                    \
  "Weight decay augments the objective function with a regularization term that penalizes large " \
  "weights. The penalty scales with the square of the magnitude of each weight."
#define DOC_RESCALE "Rescale gradient to grad = rescale_grad*grad."
#define DOC_CLIP                                                                                   \
  "Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient " \
  "clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient)."

/* ==== sgd_update / mp_sgd_update =============================================================== */
typedef struct {
  double lr, wd, rescale_grad, clip_gradient;
  int lazy_update;
} SGDParam;
static const mxw_attr_spec k_sgd_attrs[] = {
    MXW_A_FLOAT("lr", SGDParam, lr, NULL, "Learning rate"),
    MXW_A_FLOAT("wd", SGDParam, wd, "0", DOC_WD),
    MXW_A_FLOAT("rescale_grad", SGDParam, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_gradient", SGDParam, clip_gradient, "-1", DOC_CLIP),
    MXW_A_BOOL("lazy_update", SGDParam, lazy_update, "True",
               "If true, lazy updates are applied if gradient's stype is row_sparse (dense here: ignored)."),
};

DEFINE_KERNEL(sgd, {
  const SGDParam *p = (const SGDParam *)vp;
  T *o = (T *)out;
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T clip = PF(p->clip_gradient), lr = PF(p->lr), wd = PF(p->wd), rs = PF(p->rescale_grad);
  if (clip >= 0.0f) {
    for (int64_t i = 0; i < n; i++) o[i] = (1.f - lr * wd) * w[i] - lr * CLIP(rs * g[i], clip);
  } else {
    for (int64_t i = 0; i < n; i++) o[i] = (1.f - lr * wd) * w[i] - (lr * rs) * g[i];
  }
})
static int fwd_sgd(const mxw_op_call *c);

static const mxw_op_def op_sgd_update = {
    .name = "sgd_update",
    .aliases = ALIASES("_sparse_sgd_update"),
    .doc = MXW_DOC("Update function for Stochastic Gradient Descent (SGD) optimizer: "
                   "weight = weight - learning_rate * (gradient + wd * weight)"),
    .attrs = k_sgd_attrs,
    .num_attrs = 5,
    .param_size = sizeof(SGDParam),
    .num_inputs = 2,
    .input_names = k_w_g,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_sgd,
    UPDATE_OP,
};

/* MP_SGDKernel: w32 = (1 - lr*wd)*w32 - lr*clip(rescale_grad*float(g)); out = DType(w32). */
static void mp_sgd_f32(int64_t n, void *const *in, void *out, const void *vp) {
  typedef float T;
  const SGDParam *p = (const SGDParam *)vp;
  float *o = (float *)out, *w32 = (float *)in[2];
  const float *g = (const float *)in[1];
  const float clip = PF(p->clip_gradient), lr = PF(p->lr), wd = PF(p->wd), rs = PF(p->rescale_grad);
  for (int64_t i = 0; i < n; i++) {
    float w = w32[i];
    if (clip >= 0.0f)
      w = (1.f - lr * wd) * w - lr * CLIP(rs * g[i], clip);
    else
      w = (1.f - lr * wd) * w - (lr * rs) * g[i];
    w32[i] = w;
    o[i] = w;
  }
}
static int fwd_mp_sgd(const mxw_op_call *c) { return run_mp(c, 0x2u, mp_sgd_f32); }
static int infer_type_mp_sgd(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  return mp_type(k_w_g_w32, 2, nin, in, nout, out);
}

static const mxw_op_def op_mp_sgd_update = {
    .name = "mp_sgd_update",
    .doc = MXW_DOC("Updater function for multi-precision sgd optimizer"),
    .attrs = k_sgd_attrs,
    .num_attrs = 5,
    .param_size = sizeof(SGDParam),
    .num_inputs = 3,
    .input_names = k_w_g_w32,
    .infer_shape = mxw_infer_shape_same,
    .infer_type = infer_type_mp_sgd,
    .forward = fwd_mp_sgd,
    UPDATE_OP_MUT(k_mut_2),
};

/* ==== sgd_mom_update / mp_sgd_mom_update ======================================================= */
typedef struct {
  double lr, momentum, wd, rescale_grad, clip_gradient;
  int lazy_update;
} SGDMomParam;
static const mxw_attr_spec k_sgd_mom_attrs[] = {
    MXW_A_FLOAT("lr", SGDMomParam, lr, NULL, "Learning rate"),
    MXW_A_FLOAT("momentum", SGDMomParam, momentum, "0", "The decay rate of momentum estimates at each epoch."),
    MXW_A_FLOAT("wd", SGDMomParam, wd, "0", DOC_WD),
    MXW_A_FLOAT("rescale_grad", SGDMomParam, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_gradient", SGDMomParam, clip_gradient, "-1", DOC_CLIP),
    MXW_A_BOOL("lazy_update", SGDMomParam, lazy_update, "True",
               "If true, lazy updates are applied if gradient's stype is row_sparse and both weight and momentum "
               "have the same stype (dense here: ignored)."),
};

DEFINE_KERNEL(sgd_mom, {
  const SGDMomParam *p = (const SGDMomParam *)vp;
  T *o = (T *)out, *mom = (T *)in[2];
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T clip = PF(p->clip_gradient), mu = PF(p->momentum), lr = PF(p->lr), wd = PF(p->wd), rs = PF(p->rescale_grad);
  for (int64_t i = 0; i < n; i++) {
    T m;
    if (clip >= 0.0f)
      m = mu * mom[i] - lr * wd * w[i] - lr * CLIP(rs * g[i], clip);
    else
      m = mu * mom[i] - lr * wd * w[i] - lr * rs * g[i];
    mom[i] = m = FTZ(m);
    o[i] = w[i] + m;
  }
})
static int fwd_sgd_mom(const mxw_op_call *c);

static const mxw_op_def op_sgd_mom_update = {
    .name = "sgd_mom_update",
    .aliases = ALIASES("_sparse_sgd_mom_update"),
    .doc = MXW_DOC("Momentum update function for Stochastic Gradient Descent (SGD) optimizer: "
                   "v = momentum * v - learning_rate * gradient; weight += v"),
    .attrs = k_sgd_mom_attrs,
    .num_attrs = 6,
    .param_size = sizeof(SGDMomParam),
    .num_inputs = 3,
    .input_names = k_w_g_mom,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_sgd_mom,
    UPDATE_OP_MUT(k_mut_2),
};

/* MP_SGDMomKernel: on the float32 mom and weight32. */
static void mp_sgd_mom_f32(int64_t n, void *const *in, void *out, const void *vp) {
  typedef float T;
  const SGDMomParam *p = (const SGDMomParam *)vp;
  float *o = (float *)out, *mom = (float *)in[2], *w32 = (float *)in[3];
  const float *g = (const float *)in[1];
  const float clip = PF(p->clip_gradient), mu = PF(p->momentum), lr = PF(p->lr), wd = PF(p->wd),
              rs = PF(p->rescale_grad);
  for (int64_t i = 0; i < n; i++) {
    float w = w32[i], m = mom[i];
    if (clip >= 0.0f)
      m = mu * m - lr * wd * w - lr * CLIP(rs * g[i], clip);
    else
      m = mu * m - lr * wd * w - lr * rs * g[i];
    mom[i] = m = FTZ(m);
    w = w + m;
    w32[i] = w;
    o[i] = w;
  }
}
static int fwd_mp_sgd_mom(const mxw_op_call *c) { return run_mp(c, 0x2u, mp_sgd_mom_f32); }
static int infer_type_mp_mom(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  return mp_type(k_w_g_mom_w32, 2, nin, in, nout, out);
}

static const mxw_op_def op_mp_sgd_mom_update = {
    .name = "mp_sgd_mom_update",
    .doc = MXW_DOC("Updater function for multi-precision sgd optimizer"),
    .attrs = k_sgd_mom_attrs,
    .num_attrs = 6,
    .param_size = sizeof(SGDMomParam),
    .num_inputs = 4,
    .input_names = k_w_g_mom_w32,
    .infer_shape = mxw_infer_shape_same,
    .infer_type = infer_type_mp_mom,
    .forward = fwd_mp_sgd_mom,
    UPDATE_OP_MUT(k_mut_2_3),
};

/* ==== nag_mom_update / mp_nag_mom_update ======================================================= */
typedef struct {
  double lr, momentum, wd, rescale_grad, clip_gradient;
} NAGMomParam;
static const mxw_attr_spec k_nag_attrs[] = {
    MXW_A_FLOAT("lr", NAGMomParam, lr, NULL, "Learning rate"),
    MXW_A_FLOAT("momentum", NAGMomParam, momentum, "0", "The decay rate of momentum estimates at each epoch."),
    MXW_A_FLOAT("wd", NAGMomParam, wd, "0", DOC_WD),
    MXW_A_FLOAT("rescale_grad", NAGMomParam, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_gradient", NAGMomParam, clip_gradient, "-1", DOC_CLIP),
};

/* NAGMomKernel: m = momentum*mom; out = w - m + (momentum+1)*(m - lr*(grad' + wd*w));
 * mom = m - lr*(grad' + wd*w), with grad' = clip(rescale_grad*g). */
DEFINE_KERNEL(nag_mom, {
  const NAGMomParam *p = (const NAGMomParam *)vp;
  T *o = (T *)out, *mom = (T *)in[2];
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T clip = PF(p->clip_gradient), mu = PF(p->momentum), lr = PF(p->lr), wd = PF(p->wd), rs = PF(p->rescale_grad);
  for (int64_t i = 0; i < n; i++) {
    const T gr = clip >= 0.0f ? CLIP(rs * g[i], clip) : rs * g[i];
    const T wi = w[i];
    const T m = mu * mom[i];
    o[i] = wi - m + (mu + 1) * (m - lr * (gr + wd * wi));
    mom[i] = FTZ(m - lr * (gr + wd * wi));
  }
})
static int fwd_nag_mom(const mxw_op_call *c);

static const mxw_op_def op_nag_mom_update = {
    .name = "nag_mom_update",
    .doc = MXW_DOC("Update function for Nesterov Accelerated Gradient( NAG) optimizer: "
                   "v_t = gamma v_{t-1} + eta * grad(W_{t-1} - gamma v_{t-1}); W_t = W_{t-1} - v_t"),
    .attrs = k_nag_attrs,
    .num_attrs = 5,
    .param_size = sizeof(NAGMomParam),
    .num_inputs = 3,
    .input_names = k_w_g_mom,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_nag_mom,
    UPDATE_OP_MUT(k_mut_2),
};

/* MP_NAGMomKernel: as nag_mom_update on weight32, except that the momentum's weight-decay term
 * reads the already updated weight (MXNet's kernel reassigns w before that line). */
static void mp_nag_mom_f32(int64_t n, void *const *in, void *out, const void *vp) {
  typedef float T;
  const NAGMomParam *p = (const NAGMomParam *)vp;
  float *o = (float *)out, *mom = (float *)in[2], *w32 = (float *)in[3];
  const float *g = (const float *)in[1];
  const float clip = PF(p->clip_gradient), mu = PF(p->momentum), lr = PF(p->lr), wd = PF(p->wd),
              rs = PF(p->rescale_grad);
  for (int64_t i = 0; i < n; i++) {
    float w = w32[i];
    const float gr = clip >= 0.0f ? CLIP(rs * g[i], clip) : rs * g[i];
    const float m = mu * mom[i];
    w = w - m + (mu + 1) * (m - lr * (gr + wd * w));
    mom[i] = FTZ(m - lr * (gr + wd * w));
    w32[i] = w;
    o[i] = w;
  }
}
static int fwd_mp_nag_mom(const mxw_op_call *c) { return run_mp(c, 0x2u, mp_nag_mom_f32); }

static const mxw_op_def op_mp_nag_mom_update = {
    .name = "mp_nag_mom_update",
    .doc = MXW_DOC("Update function for multi-precision Nesterov Accelerated Gradient( NAG) optimizer."),
    .attrs = k_nag_attrs,
    .num_attrs = 5,
    .param_size = sizeof(NAGMomParam),
    .num_inputs = 4,
    .input_names = k_w_g_mom_w32,
    .infer_shape = mxw_infer_shape_same,
    .infer_type = infer_type_mp_mom,
    .forward = fwd_mp_nag_mom,
    UPDATE_OP_MUT(k_mut_2_3),
};

/* ==== ftml_update ============================================================================== */
typedef struct {
  double lr, beta1, beta2, epsilon;
  int64_t t;
  double wd, rescale_grad, clip_grad;
} FTMLParam;
static const mxw_attr_spec k_ftml_attrs[] = {
    MXW_A_FLOAT("lr", FTMLParam, lr, NULL, "Learning rate."),
    MXW_A_FLOAT("beta1", FTMLParam, beta1, "0.6", "Generally close to 0.5."),
    MXW_A_FLOAT("beta2", FTMLParam, beta2, "0.999", "Generally close to 1."),
    MXW_A_FLOAT("epsilon", FTMLParam, epsilon, "1e-08", "Epsilon to prevent div 0."),
    MXW_A_INT("t", FTMLParam, t, NULL, "Number of update."),
    MXW_A_FLOAT("wd", FTMLParam, wd, "0", DOC_WD),
    MXW_A_FLOAT("rescale_grad", FTMLParam, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_grad", FTMLParam, clip_grad, "-1", DOC_CLIP),
};
static int validate_ftml(void *param) {
  const FTMLParam *p = (const FTMLParam *)param;
  /* dmlc's set_range(0, 1) */
  MXW_CHECK(p->beta1 >= 0 && p->beta1 <= 1, "value %g for Parameter beta1 exceed bound [0,1]", p->beta1);
  MXW_CHECK(p->beta2 >= 0 && p->beta2 <= 1, "value %g for Parameter beta2 exceed bound [0,1]", p->beta2);
  return 0;
}

/* FTMLKernel (epsilon is a double attribute there). */
DEFINE_KERNEL(ftml, {
  const FTMLParam *p = (const FTMLParam *)vp;
  T *o = (T *)out, *d = (T *)in[2], *v = (T *)in[3], *z = (T *)in[4];
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T lr = PF(p->lr), b1 = PF(p->beta1), b2 = PF(p->beta2), eps = (T)p->epsilon, t = (T)p->t;
  const T wd = PF(p->wd), rs = PF(p->rescale_grad), clip = PF(p->clip_grad);
  const T b1t = (T)pow((double)b1, (double)t), b2t = (T)pow((double)b2, (double)t);
  for (int64_t i = 0; i < n; i++) {
    const T gi = clip >= 0.0f ? CLIP(rs * g[i] + wd * w[i], clip) : rs * g[i] + wd * w[i];
    v[i] = FTZ(b2 * v[i] + (1 - b2) * gi * gi);
    const T dt = (1 - b1t) / lr * ((T)sqrt((double)(v[i] / (1 - b2t))) + eps);
    z[i] = b1 * z[i] + (1 - b1) * gi - (dt - b1 * d[i]) * w[i];
    d[i] = dt;
    o[i] = -z[i] / dt;
  }
})
static int fwd_ftml(const mxw_op_call *c) { return run_same(c, ftml_f32, ftml_f64); }

static const mxw_op_def op_ftml_update = {
    .name = "ftml_update",
    .doc =
        MXW_DOC("The FTML optimizer (FTML - Follow the Moving Leader in Deep Learning): v_t = beta2 v + (1-beta2) g^2, "
                "d_t = (1-beta1^t)/lr (sqrt(v_t/(1-beta2^t)) + eps), z_t = beta1 z + (1-beta1) g - (d_t - beta1 d) W, "
                "W = -z_t/d_t"),
    .attrs = k_ftml_attrs,
    .num_attrs = 8,
    .param_size = sizeof(FTMLParam),
    .validate = validate_ftml,
    .num_inputs = 5,
    .input_names = k_ftml_in,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_ftml,
    UPDATE_OP_MUT(k_mut_2_3_4),
};

/* ==== adam_update ============================================================================== */
typedef struct {
  double lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient;
  int lazy_update;
} AdamParam;
static const mxw_attr_spec k_adam_attrs[] = {
    MXW_A_FLOAT("lr", AdamParam, lr, NULL, "Learning rate"),
    MXW_A_FLOAT("beta1", AdamParam, beta1, "0.9", "The decay rate for the 1st moment estimates."),
    MXW_A_FLOAT("beta2", AdamParam, beta2, "0.999", "The decay rate for the 2nd moment estimates."),
    MXW_A_FLOAT("epsilon", AdamParam, epsilon, "1e-08", "A small constant for numerical stability."),
    MXW_A_FLOAT("wd", AdamParam, wd, "0", DOC_WD),
    MXW_A_FLOAT("rescale_grad", AdamParam, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_gradient", AdamParam, clip_gradient, "-1", DOC_CLIP),
    MXW_A_BOOL("lazy_update", AdamParam, lazy_update, "True",
               "If true, lazy updates are applied if gradient's stype is row_sparse and all of w, m and v have the "
               "same stype (dense here: ignored)."),
};

/* AdamUpdateKernel: g' = clip(rescale_grad*g + wd*w); m = b1*m + (1-b1)*g'; v = b2*v + (1-b2)*g'^2;
 * out = w - lr*m/(sqrt(v) + eps). */
DEFINE_KERNEL(adam, {
  const AdamParam *p = (const AdamParam *)vp;
  T *o = (T *)out, *mean = (T *)in[2], *var = (T *)in[3];
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T clip = PF(p->clip_gradient), rs = PF(p->rescale_grad), b1 = PF(p->beta1), b2 = PF(p->beta2);
  const T lr = PF(p->lr), wd = PF(p->wd), eps = PF(p->epsilon);
  for (int64_t i = 0; i < n; i++) {
    T gr = g[i] * rs + w[i] * wd;
    if (clip >= 0.f) gr = CLIP(gr, clip);
    mean[i] = FTZ(b1 * mean[i] + (1.f - b1) * gr);
    var[i] = FTZ(b2 * var[i] + (1.f - b2) * gr * gr);
    o[i] = w[i] - lr * mean[i] / ((T)sqrt((double)var[i]) + eps);
  }
})

/* ---- float32 SGD, SGD with momentum and Adam in f32x4 lanes ------------------------------------
 * The updates training runs after every step, written with lane masks: scalar, -Os leaves these
 * loops unvectorised (no run-time overlap checks when optimising for size) and V8 compiles a float
 * select to a branch. Each lane does the scalar body's operations in the same order (CLIP as
 * pmin/pmax, FTZ as a mask, sqrt correctly rounded in float as sqrt in double then float is), so
 * the results are the same bits. Element i is read before it is written, so out may be the
 * weight (in place) without the stack copy the scalar kernels take. */
static inline v128_t clip_f32x4(v128_t x, v128_t b, v128_t nb) { return wasm_f32x4_pmax(wasm_f32x4_pmin(x, b), nb); }
static inline v128_t ftz_f32x4(v128_t x) {
  return wasm_v128_andnot(x, wasm_f32x4_lt(wasm_f32x4_abs(x), wasm_f32x4_splat(FLT_MIN)));
}

/* The lane loops, specialised on clip_on (always inlined with a constant), so that the loop has no
 * clip test: at -Os clang keeps `clip >= 0 ? a : b` in the loop as both sides and a bitselect.
 * Pointers step by four floats with a 32-bit count (no 64-bit index wrapped per access). */
#define LANE_INLINE static inline __attribute__((always_inline))
LANE_INLINE void sgd_lanes(size_t nq, const float *w, const float *g, float *o, const SGDParam *p, int clip_on) {
  const float clip = (float)p->clip_gradient, lr = (float)p->lr, wd = (float)p->wd, rs = (float)p->rescale_grad;
  const v128_t keep = wasm_f32x4_splat(1.f - lr * wd), vlr = wasm_f32x4_splat(lr), vrs = wasm_f32x4_splat(rs),
               vlrrs = wasm_f32x4_splat(lr * rs), vb = wasm_f32x4_splat(clip), vnb = wasm_f32x4_splat(-clip);
  for (size_t q = 0; q < nq; q++, w += 4, g += 4, o += 4) {
    const v128_t wv = wasm_v128_load(w), gv = wasm_v128_load(g);
    const v128_t step =
        clip_on ? wasm_f32x4_mul(vlr, clip_f32x4(wasm_f32x4_mul(vrs, gv), vb, vnb)) : wasm_f32x4_mul(vlrrs, gv);
    wasm_v128_store(o, wasm_f32x4_sub(wasm_f32x4_mul(keep, wv), step));
  }
}
static void sgd_f32x4(int64_t n, void *const *in, void *out, const void *vp) {
  const SGDParam *p = (const SGDParam *)vp;
  float *o = (float *)out;
  const float *w = (const float *)in[0], *g = (const float *)in[1];
  const size_t nq = (size_t)n / 4, i = 4 * nq;
  if ((float)p->clip_gradient >= 0.0f)
    sgd_lanes(nq, w, g, o, p, 1);
  else
    sgd_lanes(nq, w, g, o, p, 0);
  if (i < (size_t)n) sgd_f32(n - (int64_t)i, (void *const[]){(void *)(w + i), (void *)(g + i)}, o + i, vp);
}

/* also multi_sgd_update's (MultiSGDKernel with momentum, FTZ'd), and, with with_mom 0, its rule
 * without momentum: w + ((0 - lr*wd*w) - step) */
LANE_INLINE void sgd_mom_lanes(size_t nq, const float *w, const float *g, float *mom, float *o, const SGDMomParam *p,
                               int clip_on, int with_mom) {
  const float clip = (float)p->clip_gradient, mu = (float)p->momentum, lr = (float)p->lr, wd = (float)p->wd,
              rs = (float)p->rescale_grad;
  const v128_t vmu = wasm_f32x4_splat(mu), vlrwd = wasm_f32x4_splat(lr * wd), vlr = wasm_f32x4_splat(lr),
               vrs = wasm_f32x4_splat(rs), vlrrs = wasm_f32x4_splat(lr * rs), vb = wasm_f32x4_splat(clip),
               vnb = wasm_f32x4_splat(-clip), zero = wasm_f32x4_splat(0.f);
  for (size_t q = 0; q < nq; q++, w += 4, g += 4, o += 4) {
    const v128_t wv = wasm_v128_load(w), gv = wasm_v128_load(g);
    const v128_t step =
        clip_on ? wasm_f32x4_mul(vlr, clip_f32x4(wasm_f32x4_mul(vrs, gv), vb, vnb)) : wasm_f32x4_mul(vlrrs, gv);
    if (with_mom) {
      const v128_t m = ftz_f32x4(
          wasm_f32x4_sub(wasm_f32x4_sub(wasm_f32x4_mul(vmu, wasm_v128_load(mom)), wasm_f32x4_mul(vlrwd, wv)), step));
      wasm_v128_store(mom, m);
      mom += 4;
      wasm_v128_store(o, wasm_f32x4_add(wv, m));
    } else {
      wasm_v128_store(o, wasm_f32x4_add(wv, wasm_f32x4_sub(wasm_f32x4_sub(zero, wasm_f32x4_mul(vlrwd, wv)), step)));
    }
  }
}
static void sgd_mom_f32x4(int64_t n, void *const *in, void *out, const void *vp) {
  const SGDMomParam *p = (const SGDMomParam *)vp;
  float *o = (float *)out, *mom = (float *)in[2];
  const float *w = (const float *)in[0], *g = (const float *)in[1];
  const size_t nq = (size_t)n / 4, i = 4 * nq;
  if ((float)p->clip_gradient >= 0.0f)
    sgd_mom_lanes(nq, w, g, mom, o, p, 1, 1);
  else
    sgd_mom_lanes(nq, w, g, mom, o, p, 0, 1);
  if (i < (size_t)n) sgd_mom_f32(n - (int64_t)i, (void *const[]){(void *)(w + i), (void *)(g + i), mom + i}, o + i, vp);
}

LANE_INLINE void adam_lanes(size_t nq, const float *w, const float *g, float *mean, float *var, float *o,
                            const AdamParam *p, int clip_on) {
  const float clip = (float)p->clip_gradient, rs = (float)p->rescale_grad, b1 = (float)p->beta1, b2 = (float)p->beta2;
  const float lr = (float)p->lr, wd = (float)p->wd, eps = (float)p->epsilon;
  const v128_t vrs = wasm_f32x4_splat(rs), vwd = wasm_f32x4_splat(wd), vb = wasm_f32x4_splat(clip),
               vnb = wasm_f32x4_splat(-clip), vb1 = wasm_f32x4_splat(b1), vc1 = wasm_f32x4_splat(1.f - b1),
               vb2 = wasm_f32x4_splat(b2), vc2 = wasm_f32x4_splat(1.f - b2), vlr = wasm_f32x4_splat(lr),
               veps = wasm_f32x4_splat(eps);
  for (size_t q = 0; q < nq; q++, w += 4, g += 4, mean += 4, var += 4, o += 4) {
    const v128_t wv = wasm_v128_load(w);
    v128_t gr = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(g), vrs), wasm_f32x4_mul(wv, vwd));
    if (clip_on) gr = clip_f32x4(gr, vb, vnb);
    const v128_t m = ftz_f32x4(wasm_f32x4_add(wasm_f32x4_mul(vb1, wasm_v128_load(mean)), wasm_f32x4_mul(vc1, gr)));
    const v128_t v = ftz_f32x4(
        wasm_f32x4_add(wasm_f32x4_mul(vb2, wasm_v128_load(var)), wasm_f32x4_mul(wasm_f32x4_mul(vc2, gr), gr)));
    wasm_v128_store(mean, m);
    wasm_v128_store(var, v);
    wasm_v128_store(
        o, wasm_f32x4_sub(wv, wasm_f32x4_div(wasm_f32x4_mul(vlr, m), wasm_f32x4_add(wasm_f32x4_sqrt(v), veps))));
  }
}
static void adam_f32x4(int64_t n, void *const *in, void *out, const void *vp) {
  const AdamParam *p = (const AdamParam *)vp;
  float *o = (float *)out, *mean = (float *)in[2], *var = (float *)in[3];
  const float *w = (const float *)in[0], *g = (const float *)in[1];
  const size_t nq = (size_t)n / 4, i = 4 * nq;
  if ((float)p->clip_gradient >= 0.0f)
    adam_lanes(nq, w, g, mean, var, o, p, 1);
  else
    adam_lanes(nq, w, g, mean, var, o, p, 0);
  if (i < (size_t)n)
    adam_f32(n - (int64_t)i, (void *const[]){(void *)(w + i), (void *)(g + i), mean + i, var + i}, o + i, vp);
}

static int fwd_adam(const mxw_op_call *c) { return run_same(c, adam_f32x4, adam_f64); }

static const mxw_op_def op_adam_update = {
    .name = "adam_update",
    .aliases = ALIASES("_sparse_adam_update"),
    .doc =
        MXW_DOC("Update function for Adam optimizer: m = beta1*m + (1-beta1)*grad; v = beta2*v + (1-beta2)*(grad**2); "
                "w += - learning_rate * m / (sqrt(v) + epsilon)"),
    .attrs = k_adam_attrs,
    .num_attrs = 8,
    .param_size = sizeof(AdamParam),
    .num_inputs = 4,
    .input_names = k_w_g_mean_var,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_adam,
    UPDATE_OP_MUT(k_mut_2_3),
};

/* ==== rmspropalex_update ======================================================================= */
typedef struct {
  double lr, gamma1, gamma2, epsilon, wd, rescale_grad, clip_gradient, clip_weights;
} RMSPropAlexParam;
static const mxw_attr_spec k_rmspropalex_attrs[] = {
    MXW_A_FLOAT("lr", RMSPropAlexParam, lr, NULL, "Learning rate"),
    MXW_A_FLOAT("gamma1", RMSPropAlexParam, gamma1, "0.95", "Decay rate."),
    MXW_A_FLOAT("gamma2", RMSPropAlexParam, gamma2, "0.9", "Decay rate."),
    MXW_A_FLOAT("epsilon", RMSPropAlexParam, epsilon, "1e-08", "A small constant for numerical stability."),
    MXW_A_FLOAT("wd", RMSPropAlexParam, wd, "0", DOC_WD),
    MXW_A_FLOAT("rescale_grad", RMSPropAlexParam, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_gradient", RMSPropAlexParam, clip_gradient, "-1", DOC_CLIP),
    MXW_A_FLOAT("clip_weights", RMSPropAlexParam, clip_weights, "-1",
                "Clip weights to the range of [-clip_weights, clip_weights] If clip_weights <= 0, weight clipping is "
                "turned off. weights = max(min(weights, clip_weights), -clip_weights)."),
};

DEFINE_KERNEL(rmspropalex, {
  const RMSPropAlexParam *p = (const RMSPropAlexParam *)vp;
  T *o = (T *)out, *sn = (T *)in[2], *sg = (T *)in[3], *delta = (T *)in[4];
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T clip = PF(p->clip_gradient), rs = PF(p->rescale_grad), g1 = PF(p->gamma1), g2 = PF(p->gamma2);
  const T lr = PF(p->lr), wd = PF(p->wd), cw = PF(p->clip_weights), eps = PF(p->epsilon);
  for (int64_t i = 0; i < n; i++) {
    T gr = rs * g[i] + wd * w[i];
    if (clip >= 0.0f) gr = CLIP(gr, clip);
    sn[i] = FTZ((1.f - g1) * gr * gr + g1 * sn[i]);
    sg[i] = FTZ((1.f - g1) * gr + g1 * sg[i]);
    delta[i] = FTZ(g2 * delta[i] - (lr * gr / (T)sqrt((double)(sn[i] - sg[i] * sg[i] + eps))));
    if (cw >= 0.0f)
      o[i] = CLIP(w[i] + delta[i], cw);
    else
      o[i] = w[i] + delta[i];
  }
})
static int fwd_rmspropalex(const mxw_op_call *c);

static const mxw_op_def op_rmspropalex_update = {
    .name = "rmspropalex_update",
    .doc = MXW_DOC("Update function for RMSPropAlex optimizer (Graves 2013): E[g^2] = g1 E[g^2] + (1-g1) g^2; "
                   "E[g] = g1 E[g] + (1-g1) g; delta = g2 delta - lr g / sqrt(E[g^2] - E[g]^2 + eps); w += delta"),
    .attrs = k_rmspropalex_attrs,
    .num_attrs = 8,
    .param_size = sizeof(RMSPropAlexParam),
    .num_inputs = 5,
    .input_names = k_rmspropalex_in,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_rmspropalex,
    UPDATE_OP_MUT(k_mut_2_3_4),
};

/* ==== rmsprop_update =========================================================================== */
typedef struct {
  double lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights;
} RMSPropParam;
static const mxw_attr_spec k_rmsprop_attrs[] = {
    MXW_A_FLOAT("lr", RMSPropParam, lr, NULL, "Learning rate"),
    MXW_A_FLOAT("gamma1", RMSPropParam, gamma1, "0.95", "The decay rate of momentum estimates."),
    MXW_A_FLOAT("epsilon", RMSPropParam, epsilon, "1e-08", "A small constant for numerical stability."),
    MXW_A_FLOAT("wd", RMSPropParam, wd, "0", DOC_WD),
    MXW_A_FLOAT("rescale_grad", RMSPropParam, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_gradient", RMSPropParam, clip_gradient, "-1", DOC_CLIP),
    MXW_A_FLOAT("clip_weights", RMSPropParam, clip_weights, "-1",
                "Clip weights to the range of [-clip_weights, clip_weights] If clip_weights <= 0, weight clipping is "
                "turned off. weights = max(min(weights, clip_weights), -clip_weights)."),
};

DEFINE_KERNEL(rmsprop, {
  const RMSPropParam *p = (const RMSPropParam *)vp;
  T *o = (T *)out, *sn = (T *)in[2];
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T clip = PF(p->clip_gradient), rs = PF(p->rescale_grad), g1 = PF(p->gamma1);
  const T lr = PF(p->lr), wd = PF(p->wd), cw = PF(p->clip_weights), eps = PF(p->epsilon);
  for (int64_t i = 0; i < n; i++) {
    T gr = rs * g[i] + wd * w[i];
    if (clip >= 0.0f) gr = CLIP(gr, clip);
    sn[i] = FTZ((1.f - g1) * (gr * gr) + g1 * sn[i]);
    T wn = w[i] - lr * (gr / (T)sqrt((double)(sn[i] + eps)));
    if (cw >= 0.0f) wn = CLIP(wn, cw);
    o[i] = wn;
  }
})

/* NAG, RMSProp and RMSPropAlex (centered) in f32x4 lanes, as sgd_f32x4 and the others above */
static void nag_mom_f32x4(int64_t n, void *const *in, void *out, const void *vp) {
  const NAGMomParam *p = (const NAGMomParam *)vp;
  float *o = (float *)out, *mom = (float *)in[2];
  const float *w = (const float *)in[0], *g = (const float *)in[1];
  const float clip = (float)p->clip_gradient, mu = (float)p->momentum, lr = (float)p->lr, wd = (float)p->wd,
              rs = (float)p->rescale_grad;
  const v128_t vrs = wasm_f32x4_splat(rs), vmu = wasm_f32x4_splat(mu), vmu1 = wasm_f32x4_splat(mu + 1),
               vlr = wasm_f32x4_splat(lr), vwd = wasm_f32x4_splat(wd), vb = wasm_f32x4_splat(clip),
               vnb = wasm_f32x4_splat(-clip);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v128_t gr = wasm_f32x4_mul(vrs, wasm_v128_load(g + i));
    if (clip >= 0.0f) gr = clip_f32x4(gr, vb, vnb);
    const v128_t wi = wasm_v128_load(w + i), m = wasm_f32x4_mul(vmu, wasm_v128_load(mom + i));
    const v128_t step = wasm_f32x4_sub(m, wasm_f32x4_mul(vlr, wasm_f32x4_add(gr, wasm_f32x4_mul(vwd, wi))));
    wasm_v128_store(o + i, wasm_f32x4_add(wasm_f32x4_sub(wi, m), wasm_f32x4_mul(vmu1, step)));
    wasm_v128_store(mom + i, ftz_f32x4(step));
  }
  if (i < n) nag_mom_f32(n - i, (void *const[]){(void *)(w + i), (void *)(g + i), mom + i}, o + i, vp);
}

static void rmsprop_f32x4(int64_t n, void *const *in, void *out, const void *vp) {
  const RMSPropParam *p = (const RMSPropParam *)vp;
  float *o = (float *)out, *sn = (float *)in[2];
  const float *w = (const float *)in[0], *g = (const float *)in[1];
  const float clip = (float)p->clip_gradient, rs = (float)p->rescale_grad, g1 = (float)p->gamma1;
  const float lr = (float)p->lr, wd = (float)p->wd, cw = (float)p->clip_weights, eps = (float)p->epsilon;
  const v128_t vrs = wasm_f32x4_splat(rs), vwd = wasm_f32x4_splat(wd), vb = wasm_f32x4_splat(clip),
               vnb = wasm_f32x4_splat(-clip), vc1 = wasm_f32x4_splat(1.f - g1), vg1 = wasm_f32x4_splat(g1),
               vlr = wasm_f32x4_splat(lr), veps = wasm_f32x4_splat(eps), vcw = wasm_f32x4_splat(cw),
               vncw = wasm_f32x4_splat(-cw);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t wv = wasm_v128_load(w + i);
    v128_t gr = wasm_f32x4_add(wasm_f32x4_mul(vrs, wasm_v128_load(g + i)), wasm_f32x4_mul(vwd, wv));
    if (clip >= 0.0f) gr = clip_f32x4(gr, vb, vnb);
    const v128_t s = ftz_f32x4(
        wasm_f32x4_add(wasm_f32x4_mul(vc1, wasm_f32x4_mul(gr, gr)), wasm_f32x4_mul(vg1, wasm_v128_load(sn + i))));
    wasm_v128_store(sn + i, s);
    v128_t wn = wasm_f32x4_sub(wv, wasm_f32x4_mul(vlr, wasm_f32x4_div(gr, wasm_f32x4_sqrt(wasm_f32x4_add(s, veps)))));
    if (cw >= 0.0f) wn = clip_f32x4(wn, vcw, vncw);
    wasm_v128_store(o + i, wn);
  }
  if (i < n) rmsprop_f32(n - i, (void *const[]){(void *)(w + i), (void *)(g + i), sn + i}, o + i, vp);
}

static void rmspropalex_f32x4(int64_t n, void *const *in, void *out, const void *vp) {
  const RMSPropAlexParam *p = (const RMSPropAlexParam *)vp;
  float *o = (float *)out, *sn = (float *)in[2], *sg = (float *)in[3], *delta = (float *)in[4];
  const float *w = (const float *)in[0], *g = (const float *)in[1];
  const float clip = (float)p->clip_gradient, rs = (float)p->rescale_grad, g1 = (float)p->gamma1, g2 = (float)p->gamma2;
  const float lr = (float)p->lr, wd = (float)p->wd, cw = (float)p->clip_weights, eps = (float)p->epsilon;
  const v128_t vrs = wasm_f32x4_splat(rs), vwd = wasm_f32x4_splat(wd), vb = wasm_f32x4_splat(clip),
               vnb = wasm_f32x4_splat(-clip), vc1 = wasm_f32x4_splat(1.f - g1), vg1 = wasm_f32x4_splat(g1),
               vg2 = wasm_f32x4_splat(g2), vlr = wasm_f32x4_splat(lr), veps = wasm_f32x4_splat(eps),
               vcw = wasm_f32x4_splat(cw), vncw = wasm_f32x4_splat(-cw);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t wv = wasm_v128_load(w + i);
    v128_t gr = wasm_f32x4_add(wasm_f32x4_mul(vrs, wasm_v128_load(g + i)), wasm_f32x4_mul(vwd, wv));
    if (clip >= 0.0f) gr = clip_f32x4(gr, vb, vnb);
    const v128_t a = ftz_f32x4(
        wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_mul(vc1, gr), gr), wasm_f32x4_mul(vg1, wasm_v128_load(sn + i))));
    const v128_t b = ftz_f32x4(wasm_f32x4_add(wasm_f32x4_mul(vc1, gr), wasm_f32x4_mul(vg1, wasm_v128_load(sg + i))));
    const v128_t den = wasm_f32x4_sqrt(wasm_f32x4_add(wasm_f32x4_sub(a, wasm_f32x4_mul(b, b)), veps));
    const v128_t d = ftz_f32x4(
        wasm_f32x4_sub(wasm_f32x4_mul(vg2, wasm_v128_load(delta + i)), wasm_f32x4_div(wasm_f32x4_mul(vlr, gr), den)));
    wasm_v128_store(sn + i, a);
    wasm_v128_store(sg + i, b);
    wasm_v128_store(delta + i, d);
    v128_t wn = wasm_f32x4_add(wv, d);
    if (cw >= 0.0f) wn = clip_f32x4(wn, vcw, vncw);
    wasm_v128_store(o + i, wn);
  }
  if (i < n)
    rmspropalex_f32(n - i, (void *const[]){(void *)(w + i), (void *)(g + i), sn + i, sg + i, delta + i}, o + i, vp);
}

static void multi_sgd_f32x4(int64_t n, void *const *in, void *out, const void *vp);
static int is_lane_kernel(kern_fn f) {
  return f == multi_sgd_f32x4 || f == sgd_f32x4 || f == sgd_mom_f32x4 || f == adam_f32x4 || f == nag_mom_f32x4 ||
         f == rmsprop_f32x4 || f == rmspropalex_f32x4;
}
static int fwd_sgd(const mxw_op_call *c) { return run_same(c, sgd_f32x4, sgd_f64); }
static int fwd_sgd_mom(const mxw_op_call *c) { return run_same(c, sgd_mom_f32x4, sgd_mom_f64); }
static int fwd_nag_mom(const mxw_op_call *c) { return run_same(c, nag_mom_f32x4, nag_mom_f64); }
static int fwd_rmsprop(const mxw_op_call *c) { return run_same(c, rmsprop_f32x4, rmsprop_f64); }
static int fwd_rmspropalex(const mxw_op_call *c) { return run_same(c, rmspropalex_f32x4, rmspropalex_f64); }

static const mxw_op_def op_rmsprop_update = {
    .name = "rmsprop_update",
    .doc = MXW_DOC(
        "Update function for RMSProp optimizer (Tieleman & Hinton 2012): E[g^2] = gamma1 E[g^2] + (1-gamma1) g^2; "
        "w -= lr g / sqrt(E[g^2] + eps)"),
    .attrs = k_rmsprop_attrs,
    .num_attrs = 7,
    .param_size = sizeof(RMSPropParam),
    .num_inputs = 3,
    .input_names = k_rmsprop_in,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_rmsprop,
    UPDATE_OP_MUT(k_mut_2),
};

/* ==== ftrl_update ============================================================================== */
typedef struct {
  double lr, lamda1, beta, wd, rescale_grad, clip_gradient;
} FtrlParam;
static const mxw_attr_spec k_ftrl_attrs[] = {
    MXW_A_FLOAT("lr", FtrlParam, lr, NULL, "Learning rate"),
    MXW_A_FLOAT("lamda1", FtrlParam, lamda1, "0.01", "The L1 regularization coefficient."),
    MXW_A_FLOAT("beta", FtrlParam, beta, "1", "Per-Coordinate Learning Rate beta."),
    MXW_A_FLOAT("wd", FtrlParam, wd, "0", DOC_WD),
    MXW_A_FLOAT("rescale_grad", FtrlParam, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_gradient", FtrlParam, clip_gradient, "-1", DOC_CLIP),
};

/* FtrlUpdateKernel: g' = clip(rescale_grad*g); z += g' - (sqrt(n + g'^2) - sqrt(n))*w/lr;
 * n += g'^2; out = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd) * (|z| > lamda1). */
DEFINE_KERNEL(ftrl, {
  const FtrlParam *p = (const FtrlParam *)vp;
  T *o = (T *)out, *z = (T *)in[2], *sn = (T *)in[3];
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T clip = PF(p->clip_gradient), rs = PF(p->rescale_grad), beta = PF(p->beta), l1 = PF(p->lamda1);
  const T lr = PF(p->lr), wd = PF(p->wd);
  for (int64_t i = 0; i < n; i++) {
    T gr = g[i] * rs;
    if (clip >= 0.0f) gr = CLIP(gr, clip);
    z[i] += gr - ((T)sqrt((double)(sn[i] + gr * gr)) - (T)sqrt((double)sn[i])) * w[i] / lr;
    sn[i] += gr * gr;
    const T az = z[i] < 0 ? -z[i] : z[i];
    o[i] = (SIGN(z[i]) * l1 - z[i]) / ((beta + (T)sqrt((double)sn[i])) / lr + wd) * (az > l1 ? (T)1 : (T)0);
  }
})
static int fwd_ftrl(const mxw_op_call *c) { return run_same(c, ftrl_f32, ftrl_f64); }

static const mxw_op_def op_ftrl_update = {
    .name = "ftrl_update",
    .aliases = ALIASES("_sparse_ftrl_update"),
    .doc = MXW_DOC("Update function for Ftrl optimizer: z += g - (sqrt(n + g**2) - sqrt(n)) * w / lr; n += g**2; "
                   "w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (abs(z) > lamda1)"),
    .attrs = k_ftrl_attrs,
    .num_attrs = 6,
    .param_size = sizeof(FtrlParam),
    .num_inputs = 4,
    .input_names = k_ftrl_in,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_ftrl,
    UPDATE_OP_MUT(k_mut_2_3),
};

/* ==== signsgd_update / signum_update =========================================================== */
typedef struct {
  double lr, wd, rescale_grad, clip_gradient;
} SignSGDParam;
static const mxw_attr_spec k_signsgd_attrs[] = {
    MXW_A_FLOAT("lr", SignSGDParam, lr, NULL, "Learning rate"),
    MXW_A_FLOAT("wd", SignSGDParam, wd, "0", DOC_WD),
    MXW_A_FLOAT("rescale_grad", SignSGDParam, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_gradient", SignSGDParam, clip_gradient, "-1", DOC_CLIP),
};

/* SignSGDKernel: rescale_grad and clip_gradient have no effect (only the sign counts). */
DEFINE_KERNEL(signsgd, {
  const SignSGDParam *p = (const SignSGDParam *)vp;
  T *o = (T *)out;
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T lr = PF(p->lr), wd = PF(p->wd);
  for (int64_t i = 0; i < n; i++) o[i] = (1.f - lr * wd) * w[i] - lr * (T)((g[i] > 0) - (g[i] < 0));
})
static int fwd_signsgd(const mxw_op_call *c) { return run_same(c, signsgd_f32, signsgd_f64); }

static const mxw_op_def op_signsgd_update = {
    .name = "signsgd_update",
    .doc = MXW_DOC("Update function for SignSGD optimizer: weight = weight - learning_rate * sign(gradient)"),
    .attrs = k_signsgd_attrs,
    .num_attrs = 4,
    .param_size = sizeof(SignSGDParam),
    .num_inputs = 2,
    .input_names = k_w_g,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_signsgd,
    UPDATE_OP,
};

typedef struct {
  double lr, momentum, wd, rescale_grad, clip_gradient, wd_lh;
} SignumParam;
static const mxw_attr_spec k_signum_attrs[] = {
    MXW_A_FLOAT("lr", SignumParam, lr, NULL, "Learning rate"),
    MXW_A_FLOAT("momentum", SignumParam, momentum, "0", "The decay rate of momentum estimates at each epoch."),
    MXW_A_FLOAT("wd", SignumParam, wd, "0", DOC_WD),
    MXW_A_FLOAT("rescale_grad", SignumParam, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_gradient", SignumParam, clip_gradient, "-1", DOC_CLIP),
    MXW_A_FLOAT("wd_lh", SignumParam, wd_lh, "0",
                "The amount of weight decay that does not go into gradient/momentum calculationsotherwise do weight "
                "decay algorithmically only."),
};

/* SignumKernel: mom = momentum*mom - (1-momentum)*(wd*w + clip(rescale_grad*g));
 * out = (1 - lr*wd_lh)*w + lr*sign(mom). */
DEFINE_KERNEL(signum, {
  const SignumParam *p = (const SignumParam *)vp;
  T *o = (T *)out, *mom = (T *)in[2];
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T clip = PF(p->clip_gradient), mu = PF(p->momentum), lr = PF(p->lr), wd = PF(p->wd);
  const T rs = PF(p->rescale_grad), wdlh = PF(p->wd_lh);
  for (int64_t i = 0; i < n; i++) {
    if (clip >= 0.0f)
      mom[i] = FTZ(mu * mom[i] - (1 - mu) * wd * w[i] - (1 - mu) * CLIP(rs * g[i], clip));
    else
      mom[i] = FTZ(mu * mom[i] - (1 - mu) * wd * w[i] - (1 - mu) * rs * g[i]);
    o[i] = (1.f - lr * wdlh) * w[i] + lr * (T)((mom[i] > 0) - (mom[i] < 0));
  }
})
static int fwd_signum(const mxw_op_call *c) { return run_same(c, signum_f32, signum_f64); }

static const mxw_op_def op_signum_update = {
    .name = "signum_update",
    .doc = MXW_DOC("SIGN momentUM (Signum) optimizer: state = momentum * state + (1-momentum) * gradient; "
                   "weight = weight - learning_rate * sign(state)"),
    .attrs = k_signum_attrs,
    .num_attrs = 6,
    .param_size = sizeof(SignumParam),
    .num_inputs = 3,
    .input_names = k_w_g_mom,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_signum,
    UPDATE_OP_MUT(k_mut_2),
};

/* ==== lamb_update_phase1 / mp_lamb_update_phase1 =============================================== */
typedef struct {
  double beta1, beta2, epsilon;
  int64_t t;
  int bias_correction;
  double wd, rescale_grad, clip_gradient;
} LambPhase1Param;
static const mxw_attr_spec k_lamb1_attrs[] = {
    MXW_A_FLOAT("beta1", LambPhase1Param, beta1, "0.9", "The decay rate for the 1st moment estimates."),
    MXW_A_FLOAT("beta2", LambPhase1Param, beta2, "0.999", "The decay rate for the 2nd moment estimates."),
    MXW_A_FLOAT("epsilon", LambPhase1Param, epsilon, "1e-06", "A small constant for numerical stability."),
    MXW_A_INT("t", LambPhase1Param, t, NULL, "Index update count."),
    MXW_A_BOOL("bias_correction", LambPhase1Param, bias_correction, "True", "Whether to use bias correction."),
    MXW_A_FLOAT("wd", LambPhase1Param, wd, NULL, DOC_WD),
    MXW_A_FLOAT("rescale_grad", LambPhase1Param, rescale_grad, "1", DOC_RESCALE),
    MXW_A_FLOAT("clip_gradient", LambPhase1Param, clip_gradient, "-1", DOC_CLIP),
};

/* LambUpdatePhaseOneKernel: g' = clip(rescale_grad*g); mean, var as Adam; the direction
 * mean_hat/(sqrt(var_hat) + eps) + wd*w (bias-corrected by 1 - beta^t when bias_correction). */
DEFINE_KERNEL(lamb1, {
  const LambPhase1Param *p = (const LambPhase1Param *)vp;
  T *o = (T *)out, *mean = (T *)in[2], *var = (T *)in[3];
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T clip = PF(p->clip_gradient), rs = PF(p->rescale_grad), b1 = PF(p->beta1), b2 = PF(p->beta2);
  const T wd = PF(p->wd), eps = PF(p->epsilon);
  const T b1t = (T)pow((double)(float)p->beta1, (double)p->t), b2t = (T)pow((double)(float)p->beta2, (double)p->t);
  for (int64_t i = 0; i < n; i++) {
    T gr = g[i] * rs;
    if (clip >= 0.f) gr = CLIP(gr, clip);
    mean[i] = FTZ(b1 * mean[i] + (1.f - b1) * gr);
    var[i] = FTZ(b2 * var[i] + (1.f - b2) * gr * gr);
    T d;
    if (p->bias_correction) {
      const T mh = (T)(mean[i] / (1. - b1t)), vh = (T)(var[i] / (1 - b2t));
      d = mh / ((T)sqrt((double)vh) + eps) + wd * w[i];
    } else {
      d = mean[i] / ((T)sqrt((double)var[i]) + eps) + wd * w[i];
    }
    o[i] = d;
  }
})
static int fwd_lamb1(const mxw_op_call *c) { return run_same(c, lamb1_f32, lamb1_f64); }

static const mxw_op_def op_lamb_update_phase1 = {
    .name = "lamb_update_phase1",
    .doc = MXW_DOC("Phase I of lamb update: mean = beta1*mean + (1-beta1)*grad; var = beta2*var + (1-beta2)*grad^2; "
                   "returns g = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight"),
    .attrs = k_lamb1_attrs,
    .num_attrs = 8,
    .param_size = sizeof(LambPhase1Param),
    .num_inputs = 4,
    .input_names = k_w_g_mean_var,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_lamb1,
    UPDATE_OP_MUT(k_mut_2_3),
};

/* MPLambUpdatePhaseOneKernel: float32 states, the weight decay on weight32. */
static void mp_lamb1_f32(int64_t n, void *const *in, void *out, const void *vp) {
  typedef float T;
  const LambPhase1Param *p = (const LambPhase1Param *)vp;
  float *o = (float *)out, *mean = (float *)in[2], *var = (float *)in[3];
  const float *g = (const float *)in[1], *w32 = (const float *)in[4];
  const float clip = PF(p->clip_gradient), rs = PF(p->rescale_grad), b1 = PF(p->beta1), b2 = PF(p->beta2);
  const float wd = PF(p->wd), eps = PF(p->epsilon);
  const float b1t = (float)pow((double)(float)p->beta1, (double)p->t),
              b2t = (float)pow((double)(float)p->beta2, (double)p->t);
  for (int64_t i = 0; i < n; i++) {
    float gr = g[i] * rs;
    if (clip >= 0.f) gr = CLIP(gr, clip);
    mean[i] = FTZ(b1 * mean[i] + (1.f - b1) * gr);
    var[i] = FTZ(b2 * var[i] + (1.f - b2) * gr * gr);
    float d;
    if (p->bias_correction) {
      const float mh = (float)(mean[i] / (1. - b1t)), vh = var[i] / (1 - b2t);
      d = mh / (sqrtf(vh) + eps) + wd * w32[i];
    } else {
      d = mean[i] / (sqrtf(var[i]) + eps) + wd * w32[i];
    }
    o[i] = d;
  }
}
static int fwd_mp_lamb1(const mxw_op_call *c) { return run_mp(c, 0x2u, mp_lamb1_f32); }
/* MPLambPhaseOneType: weight and grad float16, the states and the output float32. */
static int infer_type_mp_lamb1(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  for (int i = 0; i < 2; i++) {
    if (in[i] >= 0 && in[i] != MXW_FLOAT16)
      return mxw_fail(
          "input %d (%s) has dtype %s, expected float16 (Type inconsistent, Provided = %s, inferred type = float16)", i,
          k_w_g_mean_var_w32[i], mxw_dtype_name(in[i]), mxw_dtype_name(in[i]));
    in[i] = MXW_FLOAT16;
  }
  MXW_TRY(mp_type(k_w_g_mean_var_w32, 2, nin, in, 0, out));
  if (out[0] >= 0 && out[0] != MXW_FLOAT32)
    return mxw_fail("output has dtype %s, expected float32", mxw_dtype_name(out[0]));
  out[0] = MXW_FLOAT32;
  (void)nout;
  return 0;
}

static const mxw_op_def op_mp_lamb_update_phase1 = {
    .name = "mp_lamb_update_phase1",
    .doc =
        MXW_DOC("Mixed Precision version of Phase I of lamb update: as lamb_update_phase1 on float32 states, with the "
                "weight decay on weight32; returns g (float32)"),
    .attrs = k_lamb1_attrs,
    .num_attrs = 8,
    .param_size = sizeof(LambPhase1Param),
    .num_inputs = 5,
    .input_names = k_w_g_mean_var_w32,
    .infer_shape = mxw_infer_shape_same,
    .infer_type = infer_type_mp_lamb1,
    .forward = fwd_mp_lamb1,
    UPDATE_OP_MUT(k_mut_2_3),
};

/* ==== lamb_update_phase2 / mp_lamb_update_phase2 =============================================== */
typedef struct {
  double lr, lower_bound, upper_bound;
} LambPhase2Param;
static const mxw_attr_spec k_lamb2_attrs[] = {
    MXW_A_FLOAT("lr", LambPhase2Param, lr, NULL, "Learning rate"),
    MXW_A_FLOAT("lower_bound", LambPhase2Param, lower_bound, "-1",
                "Lower limit of norm of weight. If lower_bound <= 0, Lower limit is not set"),
    MXW_A_FLOAT("upper_bound", LambPhase2Param, upper_bound, "-1",
                "Upper limit of norm of weight. If upper_bound <= 0, Upper limit is not set"),
};

/* LambUpdatePhaseTwoShape: weight and g share a shape (the output's); r1 and r2 hold one value. */
static int infer_shape_lamb2(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nout;
  MXW_TRY(mxw_shape_assign(&in[0], &in[1], "weight"));
  MXW_TRY(mxw_shape_assign(&in[1], &in[0], "g"));
  if (nin == 5) {
    MXW_TRY(mxw_shape_assign(&in[4], &in[0], "weight32"));
    MXW_TRY(mxw_shape_assign(&in[0], &in[4], "weight"));
    MXW_TRY(mxw_shape_assign(&in[1], &in[0], "g"));
  }
  for (int k = 2; k <= 3; k++) {
    if (in[k].ndim < 0) continue;
    char b[128];
    int64_t size = mxw_shape_size(&in[k]);
    MXW_CHECK(in[k].ndim >= 1 && in[k].dims[0] == 1 && (size == 1 || size < 0),
              "%s shape incorrect: %s (one value, shape (1,))", k == 2 ? "r1" : "r2",
              mxw_shape_str(&in[k], b, sizeof b));
  }
  return mxw_shape_assign(&out[0], &in[0], "output");
}

/* LambUpdatePhaseTwoKernel: r1 bounded to [lower_bound, upper_bound] (each when >= 0); the
 * trust ratio r1/r2 (1 when either is 0); out = w - lr*ratio*g. */
DEFINE_KERNEL(lamb2, {
  const LambPhase2Param *p = (const LambPhase2Param *)vp;
  T *o = (T *)out;
  const T *w = (const T *)in[0], *g = (const T *)in[1], *r1 = (const T *)in[2], *r2 = (const T *)in[3];
  const T lb = PF(p->lower_bound), ub = PF(p->upper_bound);
  T lr = PF(p->lr), nr1 = r1[0];
  if (lb >= 0) nr1 = nr1 > lb ? nr1 : lb;
  if (ub >= 0) nr1 = nr1 < ub ? nr1 : ub;
  if (!(nr1 == 0.0f || r2[0] == 0.0f)) lr = lr * nr1 / r2[0];
  for (int64_t i = 0; i < n; i++) o[i] = w[i] - lr * g[i];
})
static int fwd_lamb2(const mxw_op_call *c) { return run_same(c, lamb2_f32, lamb2_f64); }

static const mxw_op_def op_lamb_update_phase2 = {
    .name = "lamb_update_phase2",
    .doc =
        MXW_DOC("Phase II of lamb update: r1 bounded by lower_bound/upper_bound; lr = lr * r1/r2 unless r1 or r2 is 0; "
                "weight = weight - lr * g"),
    .attrs = k_lamb2_attrs,
    .num_attrs = 3,
    .param_size = sizeof(LambPhase2Param),
    .num_inputs = 4,
    .input_names = k_lamb2_in,
    .infer_shape = infer_shape_lamb2,
    .forward = fwd_lamb2,
    UPDATE_OP,
};

/* MPLambUpdatePhaseTwoKernel: out = weight32 - lr*ratio*g. MXNet 1.9.1's kernel writes only the
 * output although the op declares weight32 mutated and documents `weight32 = weight32 - lr * g;
 * weight(float16) = weight32` (as multi_mp_lamb_update, the path Gluon takes, does): here
 * weight32 is updated too, as documented. */
static void mp_lamb2_f32(int64_t n, void *const *in, void *out, const void *vp) {
  typedef float T;
  const LambPhase2Param *p = (const LambPhase2Param *)vp;
  float *o = (float *)out, *w32 = (float *)in[4];
  const float *g = (const float *)in[1], *r1 = (const float *)in[2], *r2 = (const float *)in[3];
  const float lb = PF(p->lower_bound), ub = PF(p->upper_bound);
  float lr = PF(p->lr), nr1 = r1[0];
  if (lb >= 0) nr1 = nr1 > lb ? nr1 : lb;
  if (ub >= 0) nr1 = nr1 < ub ? nr1 : ub;
  if (!(nr1 == 0.0f || r2[0] == 0.0f)) lr = lr * nr1 / r2[0];
  for (int64_t i = 0; i < n; i++) {
    const float w = w32[i] - lr * g[i];
    w32[i] = w;
    o[i] = w;
  }
}
static int fwd_mp_lamb2(const mxw_op_call *c) { return run_mp(c, 0x0u, mp_lamb2_f32); }
static int infer_type_mp_lamb2(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  return mp_type(k_mp_lamb2_in, 1, nin, in, nout, out);
}

static const mxw_op_def op_mp_lamb_update_phase2 = {
    .name = "mp_lamb_update_phase2",
    .doc = MXW_DOC(
        "Mixed Precision version Phase II of lamb update: as lamb_update_phase2 with weight32 = weight32 - lr * g; "
        "weight = weight32"),
    .attrs = k_lamb2_attrs,
    .num_attrs = 3,
    .param_size = sizeof(LambPhase2Param),
    .num_inputs = 5,
    .input_names = k_mp_lamb2_in,
    .infer_shape = infer_shape_lamb2,
    .infer_type = infer_type_mp_lamb2,
    .forward = fwd_mp_lamb2,
    UPDATE_OP_MUT(k_mut_4),
};

/* ==== multi_sgd_update / multi_sgd_mom_update / multi_mp_sgd_update / multi_mp_sgd_mom_update ==
 * MXNet's aggregated SGD (optimizer_op-inl.h MultiSGDUpdate / MultiSGDMomUpdate), which Python's
 * SGD calls for groups of up to MXNET_OPTIMIZER_AGGREGATION_SIZE weights: the inputs are the
 * groups (weight_i, grad_i[, mom_i][, weight32_i]) one after another, lrs and wds give one learning
 * rate and weight decay per weight, and the outputs are the new weights (out=weights). Each weight
 * runs MultiSGDKernel's formula, which is SGD with momentum's even without momentum:
 *   mom = momentum*mom - lr*wd*w - lr*clip(rescale_grad*g);  w = w + mom
 * (so multi_sgd_update's result rounds as w + ((0 - lr*wd*w) - lr*rescale_grad*g), not as
 * sgd_update's (1 - lr*wd)*w - lr*rescale_grad*g). The mp_ variants compute on the float32
 * master copies weight32_i. Momentum states are flushed to zero as sgd_mom_update's (above). */
#define MULTI_MAX 60 /* MultiSGDKernelParam::N */
typedef struct {
  mxw_str lrs_s, wds_s;
  double momentum, rescale_grad, clip_gradient;
  int64_t num_weights;
  float lrs[MULTI_MAX], wds[MULTI_MAX];
} MultiSGDParam;
#define MULTI_COMMON_ATTRS                                            \
  MXW_A_STRING("lrs", MultiSGDParam, lrs_s, NULL, "Learning rates."), \
      MXW_A_STRING("wds", MultiSGDParam, wds_s, NULL, DOC_WD)
#define MULTI_TAIL_ATTRS                                                          \
  MXW_A_FLOAT("rescale_grad", MultiSGDParam, rescale_grad, "1", DOC_RESCALE),     \
      MXW_A_FLOAT("clip_gradient", MultiSGDParam, clip_gradient, "-1", DOC_CLIP), \
      MXW_A_INT("num_weights", MultiSGDParam, num_weights, "1", "Number of updated weights.")
static const mxw_attr_spec k_multi_sgd_attrs[] = {MULTI_COMMON_ATTRS, MULTI_TAIL_ATTRS};
static const mxw_attr_spec k_multi_sgd_mom_attrs[] = {
    MULTI_COMMON_ATTRS,
    MXW_A_FLOAT("momentum", MultiSGDParam, momentum, "0", "The decay rate of momentum estimates at each epoch."),
    MULTI_TAIL_ATTRS};

static int validate_multi_sgd(void *param) {
  MultiSGDParam *p = (MultiSGDParam *)param;
  MXW_CHECK(p->num_weights >= 1 && p->num_weights <= MULTI_MAX, "num_weights must be in [1, %d], got %lld", MULTI_MAX,
            (long long)p->num_weights);
  int nl = 0, nw = 0;
  MXW_TRY(mxw_parse_floats("lrs", p->lrs_s.s, p->lrs, MULTI_MAX, &nl));
  MXW_TRY(mxw_parse_floats("wds", p->wds_s.s, p->wds, MULTI_MAX, &nw));
  MXW_CHECK(nl == p->num_weights,
            "Number of learning rates is inconsistent with num_weights parameter passed. Expected number of learning "
            "rates: %lld, and got %d",
            (long long)p->num_weights, nl);
  MXW_CHECK(nw == p->num_weights,
            "Number of weight decays is inconsistent with num_weights parameter passed. Expected number of weight "
            "decays: %lld, and got %d",
            (long long)p->num_weights, nw);
  return 0;
}

static int multi_num_outputs(const void *param) { return (int)((const MultiSGDParam *)param)->num_weights; }

/* "weight_0", "grad_0", ... as MXNet's FListInputNames: kind k of group i is names[4*i + k] */
static const char *multi_input_name(int stride, const char *const *kinds, int index) {
  static char names[4 * MULTI_MAX][16];
  if (index < 0 || index >= stride * MULTI_MAX) return NULL;
  const int i = index / stride, k = index % stride;
  char *nm = names[4 * i + k];
  if (!nm[0]) snprintf(nm, sizeof names[0], "%s_%d", kinds[k], i);
  return nm;
}

/* MultiSGD_InferShape: each group's inputs and its output share one shape. */
static int multi_infer_shape(int stride, const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const int nw = multi_num_outputs(param);
  MXW_CHECK(nin == stride * nw && nout == nw, "%d inputs and %d outputs for %d weights", nin, nout, nw);
  for (int i = 0; i < nw; i++) MXW_TRY(mxw_infer_shape_same(NULL, stride, in + stride * i, 1, out + i));
  return 0;
}
/* MP_MultiSGD_InferType: per group, the weight, grad (and mom without mixed precision) and the
 * output share a dtype; the mp_ variants' mom and weight32 are float32. */
static int multi_infer_type(int stride, int n_low, const void *param, int nin, int *in, int nout, int *out) {
  const int nw = multi_num_outputs(param);
  MXW_CHECK(nin == stride * nw && nout == nw, "%d inputs and %d outputs for %d weights", nin, nout, nw);
  for (int i = 0; i < nw; i++) {
    int *g = in + stride * i;
    for (int k = n_low; k < stride; k++) {
      MXW_CHECK(g[k] < 0 || g[k] == MXW_FLOAT32, "input %d has dtype %s, expected float32", stride * i + k,
                mxw_dtype_name(g[k]));
      g[k] = MXW_FLOAT32;
    }
    MXW_TRY(mxw_infer_type_same(NULL, n_low, g, 1, out + i));
  }
  return 0;
}

/* Each variant's per-group layout: its input kinds (stride of them per weight, the first n_low
 * of the weight's dtype, the rest float32) and the registry callbacks that follow from it. */
#define MULTI_VARIANT(v, stride, n_low, ...)                                                    \
  static const char *const k_kinds_##v[] = {__VA_ARGS__};                                       \
  static int v##_num_inputs(const void *p) { return (stride)*multi_num_outputs(p); }            \
  static const char *v##_input_name(const void *p, int i) {                                     \
    (void)p;                                                                                    \
    return multi_input_name(stride, k_kinds_##v, i);                                            \
  }                                                                                             \
  static int v##_infer_shape(const void *p, int nin, mxw_shape *in, int nout, mxw_shape *out) { \
    return multi_infer_shape(stride, p, nin, in, nout, out);                                    \
  }                                                                                             \
  static int v##_infer_type(const void *p, int nin, int *in, int nout, int *out) {              \
    return multi_infer_type(stride, n_low, p, nin, in, nout, out);                              \
  }
MULTI_VARIANT(multi_sgd, 2, 2, "weight", "grad")
MULTI_VARIANT(multi_sgd_mom, 3, 3, "weight", "grad", "mom")
MULTI_VARIANT(multi_mp_sgd, 3, 2, "weight", "grad", "weight32")
MULTI_VARIANT(multi_mp_sgd_mom, 4, 2, "weight", "grad", "mom", "weight32")

/* MultiSGDKernel without momentum: w + ((0 - lr*wd*w) - lr*clip(rs*g)), in T (params: an
 * SGDMomParam whose momentum is unused). */
DEFINE_KERNEL(multi_sgd, {
  const SGDMomParam *p = (const SGDMomParam *)vp;
  T *o = (T *)out;
  const T *w = (const T *)in[0], *g = (const T *)in[1];
  const T clip = PF(p->clip_gradient), lr = PF(p->lr), wd = PF(p->wd), rs = PF(p->rescale_grad);
  for (int64_t i = 0; i < n; i++) {
    const T step = clip >= 0.0f ? lr * CLIP(rs * g[i], clip) : lr * rs * g[i];
    o[i] = w[i] + ((T)0 - lr * wd * w[i] - step);
  }
})
/* (the same dispatch as sgd_mom_f32x4's, kept separate: one function choosing among the four
 * inlined loops at run time measured 30% slower at -Os) */
static void multi_sgd_f32x4(int64_t n, void *const *in, void *out, const void *vp) {
  const SGDMomParam *p = (const SGDMomParam *)vp;
  float *o = (float *)out;
  const float *w = (const float *)in[0], *g = (const float *)in[1];
  const size_t nq = (size_t)n / 4, i = 4 * nq;
  if ((float)p->clip_gradient >= 0.0f)
    sgd_mom_lanes(nq, w, g, NULL, o, p, 1, 0);
  else
    sgd_mom_lanes(nq, w, g, NULL, o, p, 0, 0);
  if (i < (size_t)n) multi_sgd_f32(n - (int64_t)i, (void *const[]){(void *)(w + i), (void *)(g + i)}, o + i, vp);
}
/* the mixed-precision one: the same rule on weight32 (input 2), in place, then copied to the output
 * (float32; run_mp converts it to the weight's dtype) */
static void multi_mp_sgd_f32(int64_t n, void *const *in, void *out, const void *vp) {
  float *w32 = (float *)in[2];
  multi_sgd_f32(n, (void *const[]){w32, in[1]}, w32, vp);
  memcpy(out, w32, (size_t)n * sizeof(float));
}

/* One weight's update at a time, each through the single-weight runner with its own lr and wd:
 * the attributes' (multi_*), or the last two inputs' (preloaded_multi_*: float32 arrays). */
static int multi_run(const mxw_op_call *c, int stride, int mp, kern_fn f32, kern_fn f64) {
  const MultiSGDParam *mp_param = (const MultiSGDParam *)c->param;
  const int nw = (int)mp_param->num_weights, preloaded = c->num_inputs == stride * nw + 2;
  MXW_CHECK((preloaded || c->num_inputs == stride * nw) && c->num_outputs == nw,
            "%d inputs and %d outputs for %d weights", c->num_inputs, c->num_outputs, nw);
  const float *lrs = mp_param->lrs, *wds = mp_param->wds;
  if (preloaded) {
    for (int k = 0; k < 2; k++) {
      const mxw_tensor *t = &c->inputs[stride * nw + k];
      MXW_CHECK(t->dtype == MXW_FLOAT32 && mxw_tensor_size(t) == nw, "%s must be float32 with %d elements",
                k ? "wds" : "lrs", nw);
    }
    lrs = (const float *)c->inputs[stride * nw].data;
    wds = (const float *)c->inputs[stride * nw + 1].data;
  }
  for (int i = 0; i < nw; i++) {
    const SGDMomParam sp = {lrs[i], mp_param->momentum, wds[i], mp_param->rescale_grad, mp_param->clip_gradient, 0};
    mxw_op_call one = *c;
    one.param = &sp;
    one.num_inputs = stride;
    one.inputs = c->inputs + stride * i;
    one.num_outputs = 1;
    one.outputs = c->outputs + i;
    MXW_TRY(mp ? run_mp(&one, 0x2u, f32) : run_same(&one, f32, f64));
  }
  return 0;
}
static int fwd_multi_sgd(const mxw_op_call *c) { return multi_run(c, 2, 0, multi_sgd_f32x4, multi_sgd_f64); }
static int fwd_multi_sgd_mom(const mxw_op_call *c) { return multi_run(c, 3, 0, sgd_mom_f32x4, sgd_mom_f64); }
static int fwd_multi_mp_sgd(const mxw_op_call *c) { return multi_run(c, 3, 1, multi_mp_sgd_f32, NULL); }
static int fwd_multi_mp_sgd_mom(const mxw_op_call *c) { return multi_run(c, 4, 1, mp_sgd_mom_f32, NULL); }

/* FMutateInputs: mom_i (and weight32_i) of every group; a group's pattern first, so that one
 * group's sub-call (multi_run) sees its own states as mutated. */
#define MUT3(i) 3 * (i) + 2
#define MUT4(i) 4 * (i) + 2, 4 * (i) + 3
#define TEN(M, b) M(b), M(b + 1), M(b + 2), M(b + 3), M(b + 4), M(b + 5), M(b + 6), M(b + 7), M(b + 8), M(b + 9)
#define SIXTY(M) TEN(M, 0), TEN(M, 10), TEN(M, 20), TEN(M, 30), TEN(M, 40), TEN(M, 50)
static const int k_mut_multi3[] = {SIXTY(MUT3)};
static const int k_mut_multi4[] = {SIXTY(MUT4)};
/* MXNet's argument: data (NDArray-or-Symbol[]); each input's name comes from input_name_fn */
static const char *const k_multi_data[] = {"data", NULL};

#define MULTI_OP_V(name_, doc_, attrs_, v, stride_, validate_, ...)                                                    \
  .name = name_, .doc = MXW_DOC(doc_), .attrs = attrs_, .num_attrs = (int)(sizeof(attrs_) / sizeof(attrs_[0])),        \
  .param_size = sizeof(MultiSGDParam), .validate = validate_, .num_inputs = MXW_VARIADIC, .input_names = k_multi_data, \
  .num_inputs_fn = v##_num_inputs, .input_name_fn = v##_input_name, .num_outputs_fn = multi_num_outputs,               \
  .infer_shape = v##_infer_shape, .infer_type = v##_infer_type, .forward = fwd_##v, .inplace_stride = stride_,         \
  UPDATE_OP, __VA_ARGS__
#define MULTI_OP(name_, doc_, attrs_, v, stride_, ...) \
  MULTI_OP_V(name_, doc_, attrs_, v, stride_, validate_multi_sgd, __VA_ARGS__)
static const mxw_op_def op_multi_sgd_update = {
    MULTI_OP("multi_sgd_update", "Update function for Stochastic Gradient Descent (SDG) optimizer over several weights",
             k_multi_sgd_attrs, multi_sgd, 2, .num_mutate_inputs = 0)};
static const mxw_op_def op_multi_sgd_mom_update = {
    MULTI_OP("multi_sgd_mom_update",
             "Momentum update function for Stochastic Gradient Descent (SGD) optimizer over several weights",
             k_multi_sgd_mom_attrs, multi_sgd_mom, 3, .mutate_inputs = k_mut_multi3, .num_mutate_inputs = MULTI_MAX)};
static const mxw_op_def op_multi_mp_sgd_update = {
    MULTI_OP("multi_mp_sgd_update",
             "Update function for multi-precision Stochastic Gradient Descent (SDG) optimizer over several weights",
             k_multi_sgd_attrs, multi_mp_sgd, 3, .mutate_inputs = k_mut_multi3, .num_mutate_inputs = MULTI_MAX)};
static const mxw_op_def op_multi_mp_sgd_mom_update = {MULTI_OP(
    "multi_mp_sgd_mom_update",
    "Momentum update function for multi-precision Stochastic Gradient Descent (SGD) optimizer over several weights",
    k_multi_sgd_mom_attrs, multi_mp_sgd_mom, 4, .mutate_inputs = k_mut_multi4, .num_mutate_inputs = 2 * MULTI_MAX)};

/* ==== preloaded_multi_sgd_update / preloaded_multi_sgd_mom_update / preloaded_multi_mp_sgd_update /
 * preloaded_multi_mp_sgd_mom_update (src/operator/contrib/preloaded_multi_sgd-inl.h), which
 * Python's LARS calls: the multi_* updates with the learning rates and weight decays as two more
 * inputs, `lrs` and `wds` (float32, num_weights elements each), after the groups, so that
 * multi_lars can compute them without a round trip through the host. */
static int validate_preloaded(void *param) {
  const MultiSGDParam *p = (const MultiSGDParam *)param;
  MXW_CHECK(p->num_weights >= 1 && p->num_weights <= MULTI_MAX, "num_weights must be in [1, %d], got %lld", MULTI_MAX,
            (long long)p->num_weights);
  return 0;
}
static const mxw_attr_spec k_preloaded_sgd_attrs[] = {MULTI_TAIL_ATTRS};
static const mxw_attr_spec k_preloaded_sgd_mom_attrs[] = {
    MXW_A_FLOAT("momentum", MultiSGDParam, momentum, "0", "The decay rate of momentum estimates at each epoch."),
    MULTI_TAIL_ATTRS};
/* PreloadedMultiSGDShape / MP_PreloadedMultiSGD_InferType: the groups as multi_*'s, then lrs and
 * wds, float32 vectors of num_weights elements */
static int preloaded_infer_shape(int stride, const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const int nw = multi_num_outputs(param);
  MXW_CHECK(nin == stride * nw + 2, "%d inputs for %d weights (expected %d)", nin, nw, stride * nw + 2);
  for (int k = 0; k < 2; k++) {
    mxw_shape *s = &in[stride * nw + k];
    if (s->ndim < 0) {
      const int64_t n = nw;
      *s = mxw_shape_make(1, &n);
    }
    const int64_t size = mxw_shape_size(s);
    MXW_CHECK(size < 0 || size == nw,
              "Number of %s is inconsistent with num_weights parameter passed. Expected number of %s: %d, and got %lld",
              k ? "weight decays" : "learning rates", k ? "weight decays" : "learning rates", nw, (long long)size);
  }
  return multi_infer_shape(stride, param, stride * nw, in, nout, out);
}
static int preloaded_infer_type(int stride, int n_low, const void *param, int nin, int *in, int nout, int *out) {
  const int nw = multi_num_outputs(param);
  MXW_CHECK(nin == stride * nw + 2, "%d inputs for %d weights (expected %d)", nin, nw, stride * nw + 2);
  for (int k = stride * nw; k < nin; k++) {
    MXW_CHECK(in[k] < 0 || in[k] == MXW_FLOAT32, "%s has dtype %s, expected float32", k == stride * nw ? "lrs" : "wds",
              mxw_dtype_name(in[k]));
    in[k] = MXW_FLOAT32;
  }
  return multi_infer_type(stride, n_low, param, stride * nw, in, nout, out);
}
#define PRELOADED_VARIANT(v, base, stride, n_low)                                               \
  static int v##_num_inputs(const void *p) { return (stride)*multi_num_outputs(p) + 2; }        \
  static const char *v##_input_name(const void *p, int i) {                                     \
    const int at = i - (stride)*multi_num_outputs(p);                                           \
    return at == 0 ? "lrs" : at == 1 ? "wds" : multi_input_name(stride, k_kinds_##base, i);     \
  }                                                                                             \
  static int v##_infer_shape(const void *p, int nin, mxw_shape *in, int nout, mxw_shape *out) { \
    return preloaded_infer_shape(stride, p, nin, in, nout, out);                                \
  }                                                                                             \
  static int v##_infer_type(const void *p, int nin, int *in, int nout, int *out) {              \
    return preloaded_infer_type(stride, n_low, p, nin, in, nout, out);                          \
  }                                                                                             \
  static int fwd_##v(const mxw_op_call *c) { return fwd_##base(c); }
PRELOADED_VARIANT(preloaded_multi_sgd, multi_sgd, 2, 2)
PRELOADED_VARIANT(preloaded_multi_sgd_mom, multi_sgd_mom, 3, 3)
PRELOADED_VARIANT(preloaded_multi_mp_sgd, multi_mp_sgd, 3, 2)
PRELOADED_VARIANT(preloaded_multi_mp_sgd_mom, multi_mp_sgd_mom, 4, 2)
#define PRELOADED_OP(name_, doc_, attrs_, v, stride_, ...) \
  MULTI_OP_V(name_, doc_, attrs_, v, stride_, validate_preloaded, __VA_ARGS__)
static const mxw_op_def op_preloaded_multi_sgd_update = {
    PRELOADED_OP("preloaded_multi_sgd_update", "Update function for Stochastic Gradient Descent (SDG) optimizer.",
                 k_preloaded_sgd_attrs, preloaded_multi_sgd, 2, .num_mutate_inputs = 0)};
static const mxw_op_def op_preloaded_multi_sgd_mom_update = {
    PRELOADED_OP("preloaded_multi_sgd_mom_update",
                 "Momentum update function for Stochastic Gradient Descent (SGD) optimizer.", k_preloaded_sgd_mom_attrs,
                 preloaded_multi_sgd_mom, 3, .mutate_inputs = k_mut_multi3, .num_mutate_inputs = MULTI_MAX)};
static const mxw_op_def op_preloaded_multi_mp_sgd_update = {PRELOADED_OP(
    "preloaded_multi_mp_sgd_update", "Update function for multi-precision Stochastic Gradient Descent (SDG) optimizer.",
    k_preloaded_sgd_attrs, preloaded_multi_mp_sgd, 3, .mutate_inputs = k_mut_multi3, .num_mutate_inputs = MULTI_MAX)};
static const mxw_op_def op_preloaded_multi_mp_sgd_mom_update = {
    PRELOADED_OP("preloaded_multi_mp_sgd_mom_update",
                 "Momentum update function for multi-precision Stochastic Gradient Descent (SGD) optimizer.",
                 k_preloaded_sgd_mom_attrs, preloaded_multi_mp_sgd_mom, 4, .mutate_inputs = k_mut_multi4,
                 .num_mutate_inputs = 2 * MULTI_MAX)};

MXW_FAMILY(optimizer, &op_sgd_update, &op_sgd_mom_update, &op_mp_sgd_update, &op_mp_sgd_mom_update, &op_nag_mom_update,
           &op_mp_nag_mom_update, &op_ftml_update, &op_adam_update, &op_rmsprop_update, &op_rmspropalex_update,
           &op_ftrl_update, &op_signsgd_update, &op_signum_update, &op_lamb_update_phase1, &op_lamb_update_phase2,
           &op_mp_lamb_update_phase1, &op_mp_lamb_update_phase2, &op_multi_sgd_update, &op_multi_sgd_mom_update,
           &op_multi_mp_sgd_update, &op_multi_mp_sgd_mom_update, &op_preloaded_multi_sgd_update,
           &op_preloaded_multi_sgd_mom_update, &op_preloaded_multi_mp_sgd_update,
           &op_preloaded_multi_mp_sgd_mom_update);
