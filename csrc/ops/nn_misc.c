/* nn_misc.c -- Dropout, LeakyReLU (leaky, prelu, rrelu, elu, selu, gelu), Embedding and the
 * legacy Crop. Semantics: ../shared/spec/ops.md §1 (Dropout, LeakyReLU, Embedding) and MXNet
 * 1.9.1's crop-inl.h for Crop. float32 computes in float, other dtypes through double.
 * Threads: large calls split over elements (the activations, Dropout's product with its mask),
 * over the (d0, d1) planes (prelu), over indices (Embedding) or over blocks of columns
 * (Embedding's gradient, which adds rows in index order). Random draws (Dropout's mask, rrelu's
 * slopes in training) stay on the calling thread, in order, so they are the 1-thread ones. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/mxw_parallel.h"
#include "../core/simd.h"
#include "../kernels/vmath.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define SHAPE_STR(s, buf) mxw_shape_str((s), (buf), sizeof(buf))

static const char *const k_data[] = {"data", NULL};
static const char *const k_output_mask[] = {"output", "mask", NULL};

static int num_visible_one(const void *param) {
  (void)param;
  return 1;
}

/* Unifies data and output 0 (same shape, both directions) into *s. */
static int same_data_output_shape(mxw_shape *in, mxw_shape *out, mxw_shape *s) {
  *s = in[0];
  MXW_TRY(mxw_shape_assign(s, &out[0], "output"));
  MXW_TRY(mxw_shape_assign(&in[0], s, "data"));
  return mxw_shape_assign(&out[0], s, "output");
}

/* ==== Dropout =================================================================================== */
enum { DROPOUT_TRAINING, DROPOUT_ALWAYS };
static const char *const k_dropout_modes[] = {"training", "always", NULL};
typedef struct {
  double p;
  int mode;
  mxw_tuple axes;
  mxw_opt_int cudnn_off;
} DropoutParam;

static const mxw_attr_spec k_dropout_attrs[] = {
    MXW_A_FLOAT("p", DropoutParam, p, "0.5", "fraction of the input dropped during training, in [0, 1]"),
    MXW_A_ENUM("mode", DropoutParam, mode, "training", k_dropout_modes,
               "training: only when training; always: at inference too"),
    MXW_A_SHAPE("axes", DropoutParam, axes, "()", "axes along which one mask value is shared (variational dropout)"),
    MXW_A_OPT_BOOL("cudnn_off", DropoutParam, cudnn_off, "False", "ignored (GPU only)"),
};

static int validate_dropout(void *param) {
  const DropoutParam *p = (const DropoutParam *)param;
  MXW_CHECK(p->p >= 0 && p->p <= 1, "p=%g is out of range [0, 1]", p->p);
  return 0;
}

/* output = data shape; mask = data shape with every dim listed in `axes` set to 1. */
static int infer_dropout(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const DropoutParam *p = (const DropoutParam *)param;
  mxw_shape s;
  MXW_TRY(same_data_output_shape(in, out, &s));
  if (s.ndim < 0) return 0;
  mxw_shape m = s;
  for (int i = 0; i < p->axes.ndim; i++) {
    int ax;
    if (mxw_normalize_axis(p->axes.v[i], s.ndim, &ax) != 0)
      return mxw_fail("axes[%d] = %lld is out of range for %d-D data", i, (long long)p->axes.v[i], s.ndim);
    m.dims[ax] = 1;
  }
  return mxw_shape_assign(&out[1], &m, "mask");
}

static void contiguous_strides(const mxw_shape *s, int64_t *st) {
  int64_t acc = 1;
  for (int d = s->ndim - 1; d >= 0; d--) {
    st[d] = acc;
    acc *= s->dims[d];
  }
}

/* output = data * mask for elements [b, e) of a mask of the data's shape. */
static void dropout_mul_chunk(void *ctx, int64_t b, int64_t e) {
  const mxw_op_call *c = (const mxw_op_call *)ctx;
  const mxw_tensor *in = &c->inputs[0], *mask = &c->outputs[1];
  mxw_tensor *out = &c->outputs[0];
  if (in->dtype == MXW_FLOAT32) {
    const float *x = (const float *)in->data, *m = (const float *)mask->data;
    float *y = (float *)out->data;
    for (int64_t i = b; i < e; i++) y[i] = x[i] * m[i];
    return;
  }
  for (int64_t i = b; i < e; i++) {
    const double x = mxw_load_f64(in->data, in->dtype, i), m = mxw_load_f64(mask->data, mask->dtype, i);
    mxw_store_f64(out->data, out->dtype, i, x * m);
  }
}

static int fwd_Dropout(const mxw_op_call *c) {
  const DropoutParam *p = (const DropoutParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0], *mask = &c->outputs[1];
  int64_t n = mxw_tensor_size(in), nm = mxw_tensor_size(mask);
  int active = p->p > 0 && (c->is_train || p->mode == DROPOUT_ALWAYS);
  if (!active) { /* identity; the mask holds the scale factor 1 */
    memcpy(out->data, in->data, (size_t)n * (size_t)mxw_dtype_size(in->dtype));
    if (mask->dtype == MXW_FLOAT32) {
      for (int64_t i = 0; i < nm; i++) ((float *)mask->data)[i] = 1.f;
    } else {
      for (int64_t i = 0; i < nm; i++) mxw_store_f64(mask->data, mask->dtype, i, 1.0);
    }
    return 0;
  }
  /* mask = Bernoulli(1 - p) / (1 - p), the scale computed in float as MXNet does; p == 1 drops
   * everything (mask 0) instead of producing 0 * inf. */
  float pkeep = 1.0f - (float)p->p;
  double scale = pkeep > 0 ? (double)(1.0f / pkeep) : 0.0;
  if (mask->dtype == MXW_FLOAT32) {
    /* the same draws and values, without a call per element or a float select (which V8 makes a
     * branch that p = 0.5 mispredicts half the time): keep (0 or 1) times the scale */
    uint32_t *m = (uint32_t *)mask->data;
    const float sf = (float)scale;
    uint32_t sbits;
    memcpy(&sbits, &sf, sizeof sbits);
    /* uniform < pkeep, i.e. (u >> 11) 2^-53 < pkeep, is (u >> 11) < ceil(pkeep 2^53) (exact: a
     * power-of-two scale, and pkeep 2^53 <= 2^53): an integer comparison whose 0 / all-ones mask
     * picks the scale's bits */
    const uint64_t thresh = (uint64_t)ceil((double)pkeep * 0x1.0p53);
    uint64_t u[256];
    for (int64_t i0 = 0; i0 < nm; i0 += 256) {
      const int64_t len = nm - i0 < 256 ? nm - i0 : 256;
      mxw_rand_u64_fill(u, len);
      for (int64_t k = 0; k < len; k++) m[i0 + k] = sbits & (0u - (uint32_t)((u[k] >> 11) < thresh));
    }
  } else {
    for (int64_t i = 0; i < nm; i++)
      mxw_store_f64(mask->data, mask->dtype, i, mxw_rand_uniform() < (double)pkeep ? scale : 0.0);
  }
  /* output = data * mask, the mask broadcast along the shared axes */
  if (nm == n) {
    mxw_parallel_run(n, 16, MXW_COST_CHEAP * mxw_par_dtype_factor(in->dtype), dropout_mul_chunk, (void *)c);
    return 0;
  }
  int nd = in->shape.ndim;
  int64_t mst[MXW_MAX_NDIM], idx[MXW_MAX_NDIM] = {0};
  contiguous_strides(&mask->shape, mst);
  for (int d = 0; d < nd; d++)
    if (mask->shape.dims[d] == 1) mst[d] = 0;
  int64_t mi = 0;
  for (int64_t i = 0; i < n; i++) {
    if (in->dtype == MXW_FLOAT32)
      ((float *)out->data)[i] = ((const float *)in->data)[i] * ((const float *)mask->data)[mi];
    else
      mxw_store_f64(out->data, out->dtype, i,
                    mxw_load_f64(in->data, in->dtype, i) * mxw_load_f64(mask->data, mask->dtype, mi));
    for (int d = nd - 1; d >= 0; d--) { /* advance the multi-index, tracking the mask offset */
      mi += mst[d];
      if (++idx[d] < in->shape.dims[d]) break;
      mi -= mst[d] * idx[d];
      idx[d] = 0;
    }
  }
  return 0;
}

/* Gradient: ograd * mask (MXNet's _backward_Dropout; the mask already holds 1/(1-p) or 0, and 1 when
 * the forward was the identity), the mask broadcast along the shared axes. */
static int grad_Dropout(mxw_grad_ctx *g) {
  const int same = mxw_shape_equal(mxw_grad_out_shape(g, 0), mxw_grad_out_shape(g, 1));
  mxw_gid dx =
      mxw_grad_op(g, same ? "elemwise_mul" : "broadcast_mul", NULL, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 1)));
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_Dropout = {
    .name = "Dropout",
    .aliases = ALIASES("_npx_dropout"),
    .doc =
        MXW_DOC("zeroes elements with probability p and scales the rest by 1/(1-p) when training (or mode='always'); "
                "identity otherwise"),
    .attrs = k_dropout_attrs,
    .num_attrs = (int)(sizeof k_dropout_attrs / sizeof k_dropout_attrs[0]),
    .param_size = sizeof(DropoutParam),
    .validate = validate_dropout,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 2,
    .num_visible_outputs_fn = num_visible_one,
    .output_names = k_output_mask,
    .infer_shape = infer_dropout,
    .forward = fwd_Dropout,
    .gradient = grad_Dropout,
};

/* ==== LeakyReLU ================================================================================= */
enum { ACT_RRELU, ACT_LEAKY, ACT_PRELU, ACT_ELU, ACT_SELU, ACT_GELU };
static const char *const k_leaky_types[] = {"rrelu", "leaky", "prelu", "elu", "selu", "gelu", NULL};
static const char *const k_data_gamma[] = {"data", "gamma", NULL};
typedef struct {
  int act_type;
  double slope, lower_bound, upper_bound;
} LeakyReLUParam;

static const mxw_attr_spec k_leaky_attrs[] = {
    MXW_A_ENUM("act_type", LeakyReLUParam, act_type, "leaky", k_leaky_types, "the activation"),
    MXW_A_FLOAT("slope", LeakyReLUParam, slope, "0.25", "negative slope of leaky, alpha of elu"),
    MXW_A_FLOAT("lower_bound", LeakyReLUParam, lower_bound, "0.125", "rrelu: lowest random slope"),
    MXW_A_FLOAT("upper_bound", LeakyReLUParam, upper_bound, "0.334", "rrelu: highest random slope"),
};

static int leaky_num_inputs(const void *param) {
  return ((const LeakyReLUParam *)param)->act_type == ACT_PRELU ? 2 : 1;
}
static int leaky_num_outputs(const void *param) {
  return ((const LeakyReLUParam *)param)->act_type == ACT_RRELU ? 2 : 1;
}
static const char *leaky_input_var_init(const void *param, int index) {
  (void)param;
  return index == 1 ? "[\"Constant\", {\"value\": 0.25}]" : NULL;
}

/* gamma is aligned to data as MXNet's expand_shape: walking both shapes from the right, a gamma
 * dim lands on data dim 0 or 1 when the sizes match or the gamma dim is 1; every other data dim
 * broadcasts. g01 receives the expanded sizes of data dims 0 and 1. */
static int prelu_gamma_layout(const mxw_shape *gamma, const mxw_shape *data, int64_t g01[2]) {
  int s = gamma->ndim - 1;
  g01[0] = g01[1] = 1;
  for (int i = data->ndim - 1; i >= 0; i--) {
    if (s >= 0 && i <= 1 && (data->dims[i] == gamma->dims[s] || gamma->dims[s] == 1)) {
      g01[i] = gamma->dims[s];
      s--;
    }
  }
  if (s != -1) {
    char a[128], b[128];
    return mxw_fail(
        "cannot broadcast gamma of shape %s to data of shape %s: gamma must be (C,) with "
        "C = data.shape[1], or hold one element",
        SHAPE_STR(gamma, a), SHAPE_STR(data, b));
  }
  return 0;
}

static int infer_leaky(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const LeakyReLUParam *p = (const LeakyReLUParam *)param;
  mxw_shape s;
  MXW_TRY(same_data_output_shape(in, out, &s));
  if (nout > 1) MXW_TRY(mxw_shape_assign(&out[1], &s, "mask"));
  if (p->act_type == ACT_PRELU && s.ndim >= 0) {
    if (in[1].ndim < 0) { /* an unknown gamma becomes (C,) */
      int64_t c = s.ndim >= 2 ? s.dims[1] : (s.ndim == 1 ? s.dims[0] : 1);
      in[1] = mxw_shape_make(1, &c);
    }
    if (mxw_shape_known(&in[1]) && mxw_shape_known(&s)) {
      int64_t g01[2];
      MXW_TRY(prelu_gamma_layout(&in[1], &s, g01));
    }
  }
  return 0;
}

static const float k_selu_alpha = 1.6732632423543772848170429916717f;
static const float k_selu_lambda = 1.0507009873554804934193349852946f;

static inline double leaky_apply(int act, double x, double a) {
  switch (act) {
    case ACT_ELU: return x > 0 ? x : a * expm1(x);
    case ACT_SELU: return (double)k_selu_lambda * (x > 0 ? x : (double)k_selu_alpha * expm1(x));
    case ACT_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    default: return x > 0 ? x : x * a; /* leaky, prelu, rrelu */
  }
}
static inline float leaky_apply_f(int act, float x, float a) {
  switch (act) {
    case ACT_ELU: return x > 0 ? x : a * expm1f(x);
    case ACT_SELU: return k_selu_lambda * (x > 0 ? x : k_selu_alpha * expm1f(x));
    case ACT_GELU: return 0.5f * x * (1.0f + erff(x / (float)M_SQRT2));
    default: return x > 0 ? x : x * a;
  }
}

/* prelu: data viewed as (d0, d1, rest), the gamma index from the (expanded) positions in d0 and
 * d1; planes (a, b) [u0, u1). */
typedef struct {
  const mxw_tensor *x, *gamma, *g; /* data, gamma, output gradient (backward) */
  mxw_tensor *y;                   /* output, or the data gradient (backward) */
  int64_t d1, rest, g01[2];
  double *plane_sums; /* backward: each plane's share of dgamma */
} prelu_job;

static int64_t prelu_gi(const prelu_job *j, int64_t u) {
  const int64_t a = u / j->d1, b = u % j->d1;
  return (j->g01[0] == 1 ? 0 : a) * j->g01[1] + (j->g01[1] == 1 ? 0 : b);
}

static void prelu_chunk(void *ctx, int64_t u0, int64_t u1) {
  const prelu_job *j = (const prelu_job *)ctx;
  const mxw_tensor *in = j->x, *gamma = j->gamma;
  mxw_tensor *out = j->y;
  for (int64_t u = u0; u < u1; u++) {
    const int64_t gi = prelu_gi(j, u), i = u * j->rest;
    if (in->dtype == MXW_FLOAT32) {
      const float *x = (const float *)in->data + i;
      float *y = (float *)out->data + i, g = ((const float *)gamma->data)[gi];
      for (int64_t r = 0; r < j->rest; r++) y[r] = x[r] > 0 ? x[r] : x[r] * g;
    } else {
      double g = mxw_load_f64(gamma->data, gamma->dtype, gi);
      for (int64_t r = 0; r < j->rest; r++) {
        double x = mxw_load_f64(in->data, in->dtype, i + r);
        mxw_store_f64(out->data, out->dtype, i + r, x > 0 ? x : x * g);
      }
    }
  }
}

/* The (d0, d1, rest) view of data for gamma; error when gamma does not fit. */
static int prelu_view(const mxw_tensor *in, const mxw_tensor *gamma, prelu_job *j) {
  MXW_TRY(prelu_gamma_layout(&gamma->shape, &in->shape, j->g01));
  const int nd = in->shape.ndim;
  j->d1 = nd > 1 ? in->shape.dims[1] : 1;
  j->rest = 1;
  for (int d = 2; d < nd; d++) j->rest *= in->shape.dims[d];
  return 0;
}

/* Every kind but prelu and rrelu in training, elementwise (rrelu at inference: the mean slope,
 * also written to the mask). */
static int kern_leaky(const mxw_op_call *c) {
  const LeakyReLUParam *p = (const LeakyReLUParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(in);
  int act = p->act_type, f32 = in->dtype == MXW_FLOAT32;
  if (act == ACT_RRELU) {
    mxw_tensor *mask = &c->outputs[1];
    float slope = (float)((p->lower_bound + p->upper_bound) / 2.0);
    for (int64_t i = 0; i < n; i++) mxw_store_f64(mask->data, mask->dtype, i, slope);
    if (f32) {
      const float *x = (const float *)in->data;
      float *y = (float *)out->data;
      for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : x[i] * slope;
    } else {
      for (int64_t i = 0; i < n; i++)
        mxw_store_f64(out->data, out->dtype, i, leaky_apply(ACT_LEAKY, mxw_load_f64(in->data, in->dtype, i), slope));
    }
    return 0;
  }
  if (f32) {
    const float *x = (const float *)in->data;
    float *y = (float *)out->data;
    float a = (float)p->slope;
    if (act == ACT_GELU) { /* vmath: erf in lanes, every element through the same path */
      mxw_vgelu_f32(x, y, n);
      return 0;
    }
    if (act == ACT_ELU) { /* vmath: expm1 in lanes */
      mxw_velu_f32(x, y, n, a);
      return 0;
    }
    if (act == ACT_SELU) {
      mxw_vselu_f32(x, y, n, k_selu_lambda, k_selu_alpha);
      return 0;
    }
    int64_t i = 0;
    if (act == ACT_LEAKY) { /* x > 0 ? x : a x, by a lane mask (a scalar float select is a branch in V8) */
      const v128_t va = wasm_f32x4_splat(a), zero = wasm_f32x4_splat(0.f);
      for (; i + 4 <= n; i += 4) {
        v128_t v = wasm_v128_load(x + i);
        wasm_v128_store(y + i, wasm_v128_bitselect(v, wasm_f32x4_mul(v, va), wasm_f32x4_gt(v, zero)));
      }
    }
    for (; i < n; i++) y[i] = leaky_apply_f(act, x[i], a);
  } else {
    double a = (double)(float)p->slope; /* MXNet's slope is a float */
    for (int64_t i = 0; i < n; i++)
      mxw_store_f64(out->data, out->dtype, i, leaky_apply(act, mxw_load_f64(in->data, in->dtype, i), a));
  }
  return 0;
}

static double leaky_cost(int act) {
  return act == ACT_GELU || act == ACT_ELU || act == ACT_SELU ? MXW_COST_MATH : MXW_COST_CHEAP;
}

static int fwd_LeakyReLU(const mxw_op_call *c) {
  const LeakyReLUParam *p = (const LeakyReLUParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(in);
  int act = p->act_type;
  if (act == ACT_PRELU) {
    prelu_job j = {in, &c->inputs[1], NULL, out, 0, 0, {0, 0}, NULL};
    MXW_TRY(prelu_view(in, &c->inputs[1], &j));
    mxw_parallel_run(j.rest ? n / j.rest : 0, 1, (double)j.rest * mxw_par_dtype_factor(in->dtype), prelu_chunk, &j);
    return 0;
  }
  if (act == ACT_RRELU && c->is_train) { /* one random slope per element, kept in the mask, in order */
    mxw_tensor *mask = &c->outputs[1];
    double lo = p->lower_bound, span = p->upper_bound - p->lower_bound;
    for (int64_t i = 0; i < n; i++) {
      double a = lo + span * mxw_rand_uniform();
      mxw_store_f64(mask->data, mask->dtype, i, a);
      a = mxw_load_f64(mask->data, mask->dtype, i); /* the slope as stored */
      double x = mxw_load_f64(in->data, in->dtype, i);
      mxw_store_f64(out->data, out->dtype, i, x > 0 ? x : x * a);
    }
    return 0;
  }
  return mxw_parallel_elemwise(c, n, leaky_cost(act), kern_leaky);
}

/* ---- LeakyReLU's gradient: _backward_LeakyReLU(ograd, data, output[, gamma | mask]) -> data's
 * gradient (and gamma's for prelu), as MXNet's LeakyReLUOp::Backward:
 *   leaky: g * (y > 0 ? 1 : slope)        rrelu: g * (y > 0 ? 1 : mask)     elu: g * (y > 0 ? 1 : y + slope)
 *   prelu: g * (x > 0 ? 1 : gamma), dgamma = the sum of g * (x > 0 ? 0 : x) over the axes gamma is
 *          broadcast along
 *   gelu:  g * 0.5 * (1 + erf(x / sqrt 2) + x * sqrt(2 / pi) * exp(-x^2 / 2))
 *   selu:  g * (y > 0 ? lambda : y + lambda * alpha) -- the derivative of the forward; MXNet 1.9.1's
 *          selu_grad computes lambda * (y + alpha) there, which is not (see the tests). */
static int leaky_grad_num_inputs(const void *param) {
  const int act = ((const LeakyReLUParam *)param)->act_type;
  return act == ACT_PRELU || act == ACT_RRELU ? 4 : 3;
}
static int leaky_grad_num_outputs(const void *param) {
  return ((const LeakyReLUParam *)param)->act_type == ACT_PRELU ? 2 : 1;
}

static inline double leaky_grad_scale(int act, double x, double y, double a) {
  switch (act) {
    case ACT_ELU: return y > 0 ? 1.0 : y + a;
    case ACT_SELU: return y > 0 ? (double)k_selu_lambda : y + (double)k_selu_lambda * (double)k_selu_alpha;
    case ACT_GELU: return 0.5 * (1.0 + erf(x / sqrt(2.0)) + x * sqrt(2.0 / M_PI) * exp(-0.5 * x * x));
    default: return y > 0 ? 1.0 : a; /* leaky, rrelu (a = the element's mask) */
  }
}
static inline float leaky_grad_scale_f(int act, float x, float y, float a) {
  switch (act) {
    case ACT_ELU: return y > 0 ? 1.f : y + a;
    case ACT_SELU: return y > 0 ? k_selu_lambda : y + k_selu_lambda * k_selu_alpha;
    case ACT_GELU:
      return 0.5f * (1.f + erff(x / (float)M_SQRT2) + x * (float)(M_2_SQRTPI / M_SQRT2) * expf(-0.5f * x * x));
    default: return y > 0 ? 1.f : a;
  }
}

/* prelu's gradient, planes [u0, u1): dx, and each plane's sum of g * (x > 0 ? 0 : x). */
static void prelu_grad_chunk(void *ctx, int64_t u0, int64_t u1) {
  const prelu_job *j = (const prelu_job *)ctx;
  const mxw_tensor *in = j->x, *gamma = j->gamma, *og = j->g;
  mxw_tensor *dx = j->y;
  for (int64_t u = u0; u < u1; u++) {
    const int64_t gi = prelu_gi(j, u), i = u * j->rest;
    double s = 0.0;
    if (in->dtype == MXW_FLOAT32) {
      const float *x = (const float *)in->data + i, *g = (const float *)og->data + i;
      float *y = (float *)dx->data + i, gm = ((const float *)gamma->data)[gi];
      for (int64_t r = 0; r < j->rest; r++) {
        y[r] = x[r] > 0 ? g[r] : g[r] * gm;
        if (!(x[r] > 0)) s += (double)(g[r] * x[r]);
      }
    } else {
      const double gm = mxw_load_f64(gamma->data, gamma->dtype, gi);
      for (int64_t r = 0; r < j->rest; r++) {
        const double x = mxw_load_f64(in->data, in->dtype, i + r), g = mxw_load_f64(og->data, og->dtype, i + r);
        mxw_store_f64(dx->data, dx->dtype, i + r, x > 0 ? g : g * gm);
        if (!(x > 0)) s += g * x;
      }
    }
    j->plane_sums[u] = s;
  }
}

/* Every kind but prelu, elementwise: dx = g * the derivative. */
static int kern_backward_leaky(const mxw_op_call *c) {
  const LeakyReLUParam *p = (const LeakyReLUParam *)c->param;
  const mxw_tensor *og = &c->inputs[0], *in = &c->inputs[1], *out = &c->inputs[2];
  mxw_tensor *dx = &c->outputs[0];
  const int64_t n = mxw_tensor_size(in);
  const int act = p->act_type;
  const mxw_tensor *mask = act == ACT_RRELU ? &c->inputs[3] : NULL;
  if (in->dtype == MXW_FLOAT32) {
    const float *x = (const float *)in->data, *y = (const float *)out->data, *g = (const float *)og->data;
    const float *m = mask ? (const float *)mask->data : NULL;
    float *d = (float *)dx->data;
    const float a = (float)p->slope;
    if (act == ACT_GELU) {
      mxw_vgelu_grad_f32(g, x, d, n);
      return 0;
    }
    int64_t i = 0;
    if (act == ACT_LEAKY || act == ACT_ELU || act == ACT_SELU) {
      /* g * (y > 0 ? 1 : a), elu: g * (y > 0 ? 1 : y + a), selu: g * (y > 0 ? lambda : y + lambda alpha) */
      const v128_t zero = wasm_f32x4_splat(0.f);
      const v128_t pos = wasm_f32x4_splat(act == ACT_SELU ? k_selu_lambda : 1.f);
      const v128_t off = wasm_f32x4_splat(act == ACT_SELU ? k_selu_lambda * k_selu_alpha : a);
      for (; i + 4 <= n; i += 4) {
        const v128_t yv = wasm_v128_load(y + i);
        const v128_t neg = act == ACT_LEAKY ? off : wasm_f32x4_add(yv, off);
        const v128_t s = wasm_v128_bitselect(pos, neg, wasm_f32x4_gt(yv, zero));
        wasm_v128_store(d + i, wasm_f32x4_mul(wasm_v128_load(g + i), s));
      }
    }
    for (; i < n; i++) d[i] = g[i] * leaky_grad_scale_f(act, x[i], y[i], m ? m[i] : a);
  } else {
    const double a = (double)(float)p->slope;
    for (int64_t i = 0; i < n; i++) {
      const double x = mxw_load_f64(in->data, in->dtype, i), y = mxw_load_f64(out->data, out->dtype, i);
      const double s = leaky_grad_scale(act, x, y, mask ? mxw_load_f64(mask->data, mask->dtype, i) : a);
      mxw_store_f64(dx->data, dx->dtype, i, mxw_load_f64(og->data, og->dtype, i) * s);
    }
  }
  return 0;
}

static int fwd_backward_LeakyReLU(const mxw_op_call *c) {
  const LeakyReLUParam *p = (const LeakyReLUParam *)c->param;
  const mxw_tensor *og = &c->inputs[0], *in = &c->inputs[1];
  const int64_t n = mxw_tensor_size(in);
  if (p->act_type != ACT_PRELU) {
    const double cost = p->act_type == ACT_GELU ? MXW_COST_MATH : MXW_COST_CHEAP;
    return mxw_parallel_elemwise(c, n, cost, kern_backward_leaky);
  }
  const mxw_tensor *gamma = &c->inputs[3];
  mxw_tensor *dgamma = &c->outputs[1];
  prelu_job j = {in, gamma, og, &c->outputs[0], 0, 0, {0, 0}, NULL};
  MXW_TRY(prelu_view(in, gamma, &j));
  const int64_t planes = j.rest ? n / j.rest : 0, ng = mxw_tensor_size(gamma);
  double *acc = (double *)mxw_scratch(0, (size_t)(ng + planes + 1) * sizeof(double));
  if (!acc) return -1;
  j.plane_sums = acc + ng;
  mxw_parallel_run(planes, 1, 2.0 * (double)j.rest * mxw_par_dtype_factor(in->dtype), prelu_grad_chunk, &j);
  for (int64_t i = 0; i < ng; i++) acc[i] = 0.0;
  for (int64_t u = 0; u < planes; u++) acc[prelu_gi(&j, u)] += j.plane_sums[u]; /* in plane order */
  for (int64_t k = 0; k < ng; k++) mxw_store_f64(dgamma->data, dgamma->dtype, k, acc[k]);
  return 0;
}

static int infer_backward_leaky(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  MXW_TRY(mxw_shape_assign(&out[0], &in[1], "data gradient"));
  if (nout > 1 && nin > 3) MXW_TRY(mxw_shape_assign(&out[1], &in[3], "gamma gradient"));
  return 0;
}

static int grad_LeakyReLU(mxw_grad_ctx *g) {
  const LeakyReLUParam *p = (const LeakyReLUParam *)mxw_grad_param(g);
  const int prelu = p->act_type == ACT_PRELU, rrelu = p->act_type == ACT_RRELU;
  mxw_gid ins[4] = {mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_out(g, 0), 0};
  if (prelu) ins[3] = mxw_grad_in(g, 1);
  if (rrelu) ins[3] = mxw_grad_out(g, 1);
  mxw_gid out[2];
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_LeakyReLU", ins, prelu || rrelu ? 4 : 3, out, prelu ? 2 : 1));
  MXW_TRY(mxw_grad_set(g, 0, out[0]));
  return prelu ? mxw_grad_set(g, 1, out[1]) : 0;
}

/* prelu's second order: gamma's shape for broadcasting against the data (MXNet's expand_shape, as
 * prelu_gamma_layout) in `bshape`, and the data axes gamma is broadcast along in `axes` (returns
 * their count). */
static int prelu_broadcast_attrs(const mxw_shape *gamma, const mxw_shape *data, char *bshape, size_t nb, char *axes,
                                 size_t na) {
  int64_t g01[2], dims[MXW_MAX_NDIM];
  MXW_TRY(prelu_gamma_layout(gamma, data, g01));
  int count = 0;
  size_t used = (size_t)snprintf(axes, na, "(");
  for (int i = 0; i < data->ndim; i++) {
    dims[i] = i <= 1 ? g01[i] : 1;
    if (dims[i] == 1 && data->dims[i] != 1 && used < na)
      used += (size_t)snprintf(axes + used, na - used, "%s%d", count++ ? ", " : "", i);
  }
  if (used < na) snprintf(axes + used, na - used, count == 1 ? ",)" : ")");
  const mxw_shape b = mxw_shape_make(data->ndim, dims);
  mxw_shape_attr(&b, bshape, nb);
  return count;
}

/* Second order (autograd.grad with create_graph), with h the incoming gradient of the data
 * gradient dx = g * s (s the derivative, as above): d/d ograd = h * s, the same op on h (every
 * kind); then by kind --
 *   leaky, rrelu: s is piecewise constant: nothing more;
 *   elu, selu: s = y + c where y <= 0 (1 or lambda elsewhere), so d/d output = h * g * (y <= 0), and
 *              the output's own gradient carries it to the data (f'' = f' where x <= 0);
 *   gelu: d/d data = h * g * phi(x) (2 - x^2), f'' of the erf form (phi the normal density);
 *   prelu (dgamma = sum of g * x * (x <= 0), incoming gradient k): d/d ograd += k * x * (x <= 0),
 *          d/d data = k * g * (x <= 0), d/d gamma = the sum of h * g * (x <= 0) over gamma's
 *          broadcast axes. */
static int grad_backward_LeakyReLU(mxw_grad_ctx *g) {
  const LeakyReLUParam *p = (const LeakyReLUParam *)mxw_grad_param(g);
  const int act = p->act_type, four = act == ACT_PRELU || act == ACT_RRELU;
  const mxw_gid h = mxw_grad_ograd(g, 0), G = mxw_grad_in(g, 0), x = mxw_grad_in(g, 1), y = mxw_grad_in(g, 2);
  mxw_gid d[2] = {-1, -1}, ins[4] = {h, x, y, four ? mxw_grad_in(g, 3) : 0};
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_LeakyReLU", ins, four ? 4 : 3, d, act == ACT_PRELU ? 2 : 1));
  mxw_gid d0 = d[0];
  const char *const *zero = MXW_KV("scalar", "0");
  if (act == ACT_ELU || act == ACT_SELU) {
    const mxw_gid m = mxw_grad_op(g, "_lesser_equal_scalar", zero, MXW_GIDS(y));
    MXW_TRY(mxw_grad_set(g, 2, mxw_grad_mul(g, mxw_grad_mul(g, h, G), m)));
  } else if (act == ACT_GELU) {
    char c[40];
    snprintf(c, sizeof c, "%.17g", 1.0 / sqrt(2.0 * M_PI));
    const mxw_gid x2 = mxw_grad_op(g, "square", NULL, MXW_GIDS(x));
    const mxw_gid e =
        mxw_grad_op(g, "exp", NULL, MXW_GIDS(mxw_grad_op(g, "_mul_scalar", MXW_KV("scalar", "-0.5"), MXW_GIDS(x2))));
    const mxw_gid t = mxw_grad_op(g, "_rminus_scalar", MXW_KV("scalar", "2"), MXW_GIDS(x2));
    const mxw_gid f2 = mxw_grad_op(g, "_mul_scalar", MXW_KV("scalar", c), MXW_GIDS(mxw_grad_mul(g, e, t)));
    MXW_TRY(mxw_grad_set(g, 1, mxw_grad_mul(g, mxw_grad_mul(g, h, G), f2)));
  } else if (act == ACT_PRELU) {
    char bshape[MXW_MAX_NDIM * 24 + 8], axes[MXW_MAX_NDIM * 4 + 8], gshape[MXW_MAX_NDIM * 24 + 8];
    const int naxes = prelu_broadcast_attrs(mxw_grad_in_shape(g, 3), mxw_grad_in_shape(g, 1), bshape, sizeof bshape,
                                            axes, sizeof axes);
    if (naxes < 0) return -1;
    mxw_shape_attr(mxw_grad_in_shape(g, 3), gshape, sizeof gshape);
    const mxw_gid k = mxw_grad_op(g, "Reshape", MXW_KV("shape", bshape), MXW_GIDS(mxw_grad_ograd(g, 1)));
    const mxw_gid m = mxw_grad_op(g, "_lesser_equal_scalar", zero, MXW_GIDS(x));
    const mxw_gid kx = mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(mxw_grad_mul(g, x, m), k));
    d0 = mxw_grad_op(g, "elemwise_add", NULL, MXW_GIDS(d0, kx));
    MXW_TRY(mxw_grad_set(g, 1, mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(mxw_grad_mul(g, G, m), k))));
    mxw_gid dg = mxw_grad_mul(g, mxw_grad_mul(g, h, G), m);
    if (naxes > 0) dg = mxw_grad_op(g, "sum", MXW_KV("axis", axes, "keepdims", "True"), MXW_GIDS(dg));
    MXW_TRY(mxw_grad_set(g, 3, mxw_grad_op(g, "Reshape", MXW_KV("shape", gshape), MXW_GIDS(dg))));
  }
  return mxw_grad_set(g, 0, d0);
}

static const char *const k_backward_leaky_inputs[] = {"ograd", "data", "output", "gamma_or_mask", NULL};
static const char *const k_backward_leaky_outputs[] = {"data_grad", "gamma_grad", NULL};

static const mxw_op_def op_backward_LeakyReLU = {
    .name = "_backward_LeakyReLU",
    .doc = MXW_DOC(
        "the gradient of LeakyReLU (and of prelu's gamma) from ograd, data, output and gamma (prelu) or mask (rrelu)"),
    .attrs = k_leaky_attrs,
    .num_attrs = (int)(sizeof k_leaky_attrs / sizeof k_leaky_attrs[0]),
    .param_size = sizeof(LeakyReLUParam),
    .num_inputs = 4,
    .input_names = k_backward_leaky_inputs,
    .num_inputs_fn = leaky_grad_num_inputs,
    .num_outputs = 1,
    .num_outputs_fn = leaky_grad_num_outputs,
    .output_names = k_backward_leaky_outputs,
    .infer_shape = infer_backward_leaky,
    .half_as_f32 = 1,
    .forward = fwd_backward_LeakyReLU,
    .gradient = grad_backward_LeakyReLU,
};

static const mxw_op_def op_LeakyReLU = {
    .name = "LeakyReLU",
    .aliases = ALIASES("_npx_leaky_relu"),
    .doc = MXW_DOC("leaky: x > 0 ? x : slope*x; prelu: learned gamma per channel; rrelu: random slope when training; "
                   "elu, selu, gelu (erf form)"),
    .attrs = k_leaky_attrs,
    .num_attrs = (int)(sizeof k_leaky_attrs / sizeof k_leaky_attrs[0]),
    .param_size = sizeof(LeakyReLUParam),
    .num_inputs = 2,
    .input_names = k_data_gamma,
    .num_inputs_fn = leaky_num_inputs,
    .num_outputs = 1,
    .num_outputs_fn = leaky_num_outputs,
    .num_visible_outputs_fn = num_visible_one,
    .output_names = k_output_mask,
    .infer_shape = infer_leaky,
    .half_as_f32 = 1,
    .forward = fwd_LeakyReLU,
    .input_var_init = leaky_input_var_init,
    .gradient = grad_LeakyReLU,
};

/* ==== Embedding ================================================================================= */
static const char *const k_embedding_dtypes[] = {"float32", "float64", "float16", "bfloat16", "uint8",
                                                 "int8",    "int32",   "int64",   NULL};
static const char *const k_data_weight[] = {"data", "weight", NULL};
typedef struct {
  int64_t input_dim, output_dim;
  int dtype; /* index into k_embedding_dtypes */
  int sparse_grad;
} EmbeddingParam;

static const mxw_attr_spec k_embedding_attrs[] = {
    MXW_A_INT("input_dim", EmbeddingParam, input_dim, NULL, "vocabulary size (rows of weight)"),
    MXW_A_INT("output_dim", EmbeddingParam, output_dim, NULL, "embedding size (columns of weight)"),
    MXW_A_ENUM("dtype", EmbeddingParam, dtype, "float32", k_embedding_dtypes, "dtype of weight when it is not given"),
    MXW_A_BOOL("sparse_grad", EmbeddingParam, sparse_grad, "False", "row-sparse gradient (training only)"),
};

static int validate_embedding(void *param) {
  const EmbeddingParam *p = (const EmbeddingParam *)param;
  MXW_CHECK(p->input_dim >= 1, "input_dim=%lld must be at least 1", (long long)p->input_dim);
  MXW_CHECK(p->output_dim >= 1, "output_dim=%lld must be at least 1", (long long)p->output_dim);
  return 0;
}

/* weight (input_dim, output_dim); output data.shape + (output_dim,) */
static int infer_embedding(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const EmbeddingParam *p = (const EmbeddingParam *)param;
  int64_t wd[2] = {p->input_dim, p->output_dim};
  mxw_shape w = mxw_shape_make(2, wd);
  if (mxw_shape_assign(&in[1], &w, "weight") != 0) {
    char a[128], b[128];
    return mxw_fail("weight has shape %s, expected (input_dim, output_dim) = %s", SHAPE_STR(&in[1], a),
                    SHAPE_STR(&w, b));
  }
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim + 1 <= MXW_MAX_NDIM, "data has %d dims; the output would exceed %d", in[0].ndim, MXW_MAX_NDIM);
  mxw_shape o = in[0];
  o.ndim++;
  o.dims[o.ndim - 1] = p->output_dim;
  return mxw_shape_assign(&out[0], &o, "output");
}

/* data (the indices) may have any dtype; weight and output share weight's dtype, or the dtype
 * attribute when neither is known. */
static int infer_type_embedding(const void *param, int nin, int *in, int nout, int *out) {
  const EmbeddingParam *p = (const EmbeddingParam *)param;
  int w = in[1], o = out[0];
  MXW_CHECK(w < 0 || o < 0 || w == o, "weight dtype %s and output dtype %s differ", mxw_dtype_name(w),
            mxw_dtype_name(o));
  int t = w >= 0 ? w : o >= 0 ? o : mxw_dtype_from_name(k_embedding_dtypes[p->dtype]);
  in[1] = out[0] = t;
  return 0;
}

/* int64(v) for an index held in any dtype: integers exactly, floats truncated toward zero (NaN
 * taken as 0 and huge values pinned so the conversion is defined). */
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

/* Output rows [i0, i1): the weight row each index selects (clipped). */
static void embedding_chunk(void *ctx, int64_t i0, int64_t i1) {
  const mxw_op_call *c = (const mxw_op_call *)ctx;
  const mxw_tensor *idx = &c->inputs[0], *w = &c->inputs[1];
  mxw_tensor *out = &c->outputs[0];
  int64_t rows = w->shape.dims[0], cols = w->shape.dims[1];
  size_t row_bytes = (size_t)cols * (size_t)mxw_dtype_size(w->dtype);
  for (int64_t i = i0; i < i1; i++) {
    int64_t k = load_index(idx, i);
    k = k < 0 ? 0 : (k >= rows ? rows - 1 : k);
    memcpy((char *)out->data + (size_t)i * row_bytes, (const char *)w->data + (size_t)k * row_bytes, row_bytes);
  }
}

static int fwd_Embedding(const mxw_op_call *c) {
  const mxw_tensor *w = &c->inputs[1];
  mxw_parallel_run(mxw_tensor_size(&c->inputs[0]), 1, 0.5 * (double)w->shape.dims[1] * mxw_par_dtype_factor(w->dtype),
                   embedding_chunk, (void *)c);
  return 0;
}

/* Gradient: the weight's gradient scatter-adds each output gradient row into the row its index
 * selected (clipped as the forward), MXNet's _backward_Embedding (AddTakeGrad); the indices get
 * none. */
/* Columns [j0, j1) of the weight's gradient: zeroed, then every index's row added in index order. */
static void embedding_grad_chunk(void *ctx, int64_t j0, int64_t j1) {
  const mxw_op_call *c = (const mxw_op_call *)ctx;
  const mxw_tensor *og = &c->inputs[0], *idx = &c->inputs[1];
  mxw_tensor *dw = &c->outputs[0];
  const int64_t rows = dw->shape.dims[0], cols = dw->shape.dims[1], n = mxw_tensor_size(idx);
  const size_t es = (size_t)mxw_dtype_size(dw->dtype);
  for (int64_t r = 0; r < rows; r++) memset((char *)dw->data + (size_t)(r * cols + j0) * es, 0, (size_t)(j1 - j0) * es);
  for (int64_t i = 0; i < n; i++) {
    int64_t k = load_index(idx, i);
    k = k < 0 ? 0 : (k >= rows ? rows - 1 : k);
    if (dw->dtype == MXW_FLOAT32) {
      float *d = (float *)dw->data + k * cols;
      const float *g = (const float *)og->data + i * cols;
      for (int64_t j = j0; j < j1; j++) d[j] += g[j];
    } else if (dw->dtype == MXW_FLOAT64) {
      double *d = (double *)dw->data + k * cols;
      const double *g = (const double *)og->data + i * cols;
      for (int64_t j = j0; j < j1; j++) d[j] += g[j];
    } else {
      for (int64_t j = j0; j < j1; j++)
        mxw_store_f64(
            dw->data, dw->dtype, k * cols + j,
            mxw_load_f64(dw->data, dw->dtype, k * cols + j) + mxw_load_f64(og->data, og->dtype, i * cols + j));
    }
  }
}

static int fwd_backward_Embedding(const mxw_op_call *c) {
  const mxw_tensor *idx = &c->inputs[1];
  mxw_tensor *dw = &c->outputs[0];
  const int64_t rows = dw->shape.dims[0], cols = dw->shape.dims[1], n = mxw_tensor_size(idx);
  /* blocks of 16 columns keep the vectors whole */
  mxw_parallel_run(cols, 16, (double)(n + rows) * mxw_par_dtype_factor(dw->dtype), embedding_grad_chunk, (void *)c);
  return 0;
}

static int infer_backward_embedding(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const EmbeddingParam *p = (const EmbeddingParam *)param;
  (void)nin;
  (void)nout;
  (void)in;
  const int64_t wd[2] = {p->input_dim, p->output_dim};
  const mxw_shape w = mxw_shape_make(2, wd);
  return mxw_shape_assign(&out[0], &w, "weight gradient");
}

static int grad_Embedding(mxw_grad_ctx *g) {
  mxw_gid dw;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_Embedding", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0)), &dw, 1));
  return mxw_grad_set(g, 1, dw);
}

static const char *const k_ograd_data[] = {"ograd", "data", NULL};

/* Second order: the weight gradient scatter-adds ograd rows, linear in ograd; its adjoint takes
 * the rows of the incoming gradient hW that the indices select: Embedding(indices, hW). */
static int grad_backward_Embedding(mxw_grad_ctx *g) {
  mxw_gid d = -1;
  MXW_TRY(mxw_grad_op_fwd(g, "Embedding", MXW_GIDS(mxw_grad_in(g, 1), mxw_grad_ograd(g, 0)), &d, 1));
  return mxw_grad_set(g, 0, d);
}

static const mxw_op_def op_backward_Embedding = {
    .name = "_backward_Embedding",
    .doc = MXW_DOC("the weight gradient of Embedding: ograd rows scatter-added into the rows their indices select"),
    .attrs = k_embedding_attrs,
    .num_attrs = (int)(sizeof k_embedding_attrs / sizeof k_embedding_attrs[0]),
    .param_size = sizeof(EmbeddingParam),
    .validate = validate_embedding,
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = infer_backward_embedding,
    .infer_type = mxw_infer_type_first,
    .forward = fwd_backward_Embedding,
    .gradient = grad_backward_Embedding,
};

static const mxw_op_def op_Embedding = {
    .name = "Embedding",
    .aliases = ALIASES("_npx_embedding", "_sparse_Embedding"),
    .doc = MXW_DOC("out[..., :] = weight[clip(int(data[...]), 0, input_dim - 1), :]"),
    .attrs = k_embedding_attrs,
    .num_attrs = (int)(sizeof k_embedding_attrs / sizeof k_embedding_attrs[0]),
    .param_size = sizeof(EmbeddingParam),
    .validate = validate_embedding,
    .num_inputs = 2,
    .input_names = k_data_weight,
    .num_outputs = 1,
    .infer_shape = infer_embedding,
    .infer_type = infer_type_embedding,
    .forward = fwd_Embedding,
    .gradient = grad_Embedding,
};

/* ==== Crop (legacy) ============================================================================= */
/* Inputs arg0 (data, NCHW) and, with num_args=2, arg1 (crop_like: only its H and W are used). */
static const char *const k_crop_inputs[] = {"arg0", "arg1", NULL};
typedef struct {
  int64_t num_args;
  mxw_tuple offset, h_w;
  int center_crop;
} CropParam;

static const mxw_attr_spec k_crop_attrs[] = {
    MXW_A_INT("num_args", CropParam, num_args, NULL, "1: crop to h_w; 2: crop to the H, W of the second input"),
    MXW_A_SHAPE("offset", CropParam, offset, "(0, 0)", "top-left corner (y, x) of the crop"),
    MXW_A_SHAPE("h_w", CropParam, h_w, "(0, 0)", "crop height and width (num_args=1)"),
    MXW_A_BOOL("center_crop", CropParam, center_crop, "False", "center the crop instead of using offset"),
};

static int validate_crop(void *param) {
  const CropParam *p = (const CropParam *)param;
  MXW_CHECK(p->num_args == 1 || p->num_args == 2, "num_args=%lld must be 1 or 2", (long long)p->num_args);
  MXW_CHECK(p->offset.ndim == 2, "offset must have 2 entries (y, x), got %d", p->offset.ndim);
  MXW_CHECK(p->h_w.ndim == 2, "h_w must have 2 entries (h, w), got %d", p->h_w.ndim);
  return 0;
}
static int crop_num_inputs(const void *param) { return (int)((const CropParam *)param)->num_args; }

/* The crop's top-left corner for data (H, W) cropped to (h, w); error when it does not fit. */
static int crop_offset(const CropParam *p, int64_t H, int64_t W, int64_t h, int64_t w, int64_t *oy, int64_t *ox) {
  MXW_CHECK(h <= H && w <= W, "the crop (%lld, %lld) is larger than the data's (H, W) = (%lld, %lld)", (long long)h,
            (long long)w, (long long)H, (long long)W);
  if (p->center_crop) {
    *oy = (H - h) / 2;
    *ox = (W - w) / 2;
    return 0;
  }
  *oy = p->offset.v[0];
  *ox = p->offset.v[1];
  MXW_CHECK(*oy >= 0 && *oy <= H - h, "offset[0] = %lld must be in [0, %lld] (data height %lld, crop height %lld)",
            (long long)*oy, (long long)(H - h), (long long)H, (long long)h);
  MXW_CHECK(*ox >= 0 && *ox <= W - w, "offset[1] = %lld must be in [0, %lld] (data width %lld, crop width %lld)",
            (long long)*ox, (long long)(W - w), (long long)W, (long long)w);
  return 0;
}

static int infer_crop(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const CropParam *p = (const CropParam *)param;
  char a[128];
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim == 4, "data should be 4-D (N, C, H, W), got shape %s", SHAPE_STR(&in[0], a));
  int64_t h, w;
  if (p->num_args == 1) {
    h = p->h_w.v[0];
    w = p->h_w.v[1];
    MXW_CHECK(h >= 1 && w >= 1, "h_w = (%lld, %lld): the crop height and width must be at least 1", (long long)h,
              (long long)w);
  } else {
    if (in[1].ndim < 0) return 0;
    MXW_CHECK(in[1].ndim == 4, "crop_like (input 1) should be 4-D (N, C, H, W), got shape %s", SHAPE_STR(&in[1], a));
    h = in[1].dims[2];
    w = in[1].dims[3];
  }
  mxw_shape o = in[0];
  o.dims[2] = h;
  o.dims[3] = w;
  if (mxw_shape_known(&o)) {
    int64_t oy, ox;
    MXW_TRY(crop_offset(p, in[0].dims[2], in[0].dims[3], h, w, &oy, &ox));
  }
  return mxw_shape_assign(&out[0], &o, "output");
}

static int fwd_Crop(const mxw_op_call *c) {
  const CropParam *p = (const CropParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t H = in->shape.dims[2], W = in->shape.dims[3], h = out->shape.dims[2], w = out->shape.dims[3], oy, ox;
  MXW_TRY(crop_offset(p, H, W, h, w, &oy, &ox));
  int64_t planes = in->shape.dims[0] * in->shape.dims[1];
  size_t es = (size_t)mxw_dtype_size(in->dtype);
  for (int64_t pl = 0; pl < planes; pl++)
    for (int64_t y = 0; y < h; y++)
      memcpy((char *)out->data + (size_t)((pl * h + y) * w) * es,
             (const char *)in->data + (size_t)((pl * H + oy + y) * W + ox) * es, (size_t)w * es);
  return 0;
}

/* Gradient: zeros of data's shape with the crop window = ograd (MXNet's _backward_Crop); crop_like
 * gets none (MXNet writes zeros). */
static int fwd_backward_Crop(const mxw_op_call *c) {
  const CropParam *p = (const CropParam *)c->param;
  const mxw_tensor *og = &c->inputs[0];
  mxw_tensor *dx = &c->outputs[0];
  const int64_t H = dx->shape.dims[2], W = dx->shape.dims[3], h = og->shape.dims[2], w = og->shape.dims[3];
  int64_t oy, ox;
  MXW_TRY(crop_offset(p, H, W, h, w, &oy, &ox));
  const int64_t planes = dx->shape.dims[0] * dx->shape.dims[1];
  const size_t es = (size_t)mxw_dtype_size(dx->dtype);
  memset(dx->data, 0, (size_t)mxw_tensor_size(dx) * es);
  for (int64_t pl = 0; pl < planes; pl++)
    for (int64_t y = 0; y < h; y++)
      memcpy((char *)dx->data + (size_t)((pl * H + oy + y) * W + ox) * es,
             (const char *)og->data + (size_t)((pl * h + y) * w) * es, (size_t)w * es);
  return 0;
}
static int infer_backward_crop(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  return mxw_shape_assign(&out[0], &in[1], "data gradient");
}
static int grad_Crop(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_backward_Crop", 1); }
static const mxw_op_def op_backward_Crop = {
    .name = "_backward_Crop",
    .doc = MXW_DOC("the gradient of Crop: zeros of the data's shape with the crop window set to ograd"),
    .attrs = k_crop_attrs,
    .num_attrs = (int)(sizeof k_crop_attrs / sizeof k_crop_attrs[0]),
    .param_size = sizeof(CropParam),
    .validate = validate_crop,
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = infer_backward_crop,
    .forward = fwd_backward_Crop,
};

static const mxw_op_def op_Crop = {
    .name = "Crop",
    .doc = MXW_DOC("crops NCHW data to h_w (or to the H, W of a second input) at offset, or centered"),
    .attrs = k_crop_attrs,
    .num_attrs = (int)(sizeof k_crop_attrs / sizeof k_crop_attrs[0]),
    .param_size = sizeof(CropParam),
    .validate = validate_crop,
    .num_inputs = MXW_VARIADIC,
    .input_names = k_crop_inputs,
    .num_inputs_fn = crop_num_inputs,
    .num_outputs = 1,
    .infer_shape = infer_crop,
    .forward = fwd_Crop,
    .gradient = grad_Crop,
};

MXW_FAMILY(nn_misc, &op_Dropout, &op_LeakyReLU, &op_Embedding, &op_Crop, &op_backward_LeakyReLU, &op_backward_Embedding,
           &op_backward_Crop);
