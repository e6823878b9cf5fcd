/* norm.c -- normalization layers (../shared/spec/ops.md §1) and their gradients (the _backward_* ops at
 * the end):
 *   BatchNorm (_npx_batch_norm), _contrib_BatchNormWithReLU, LayerNorm (_npx_layer_norm),
 *   InstanceNorm, GroupNorm, L2Normalization, LRN.
 *
 * Every op views its data either as contiguous rows (InstanceNorm: (N*C, spatial), GroupNorm:
 * (N*G, C/G*spatial), L2Normalization instance/spatial, LayerNorm over the last axis) or as
 * (outer, n, inner) around an axis (BatchNorm's channel axis, LayerNorm over another axis,
 * L2Normalization channel, LRN), and is built from the few kernels in `norm_kernels`:
 *   sums over a contiguous run, Σ(x - mean)², y = ((x - mean) * invstd) * g + b on a run, and
 *   "column" forms that accumulate whole rows of `inner` positions at once.
 * Statistics are two-pass (mean, then Σ(x - mean)²) and kept in double. float32 data runs the
 * float kernels (SIMD sums whose float lanes are flushed into a double every FLUSH elements, and
 * a SIMD affine map); float64 runs the plain double kernels, the readable reference; float16 and
 * bfloat16 go through float64 copies. Integer dtypes are rejected at type inference.
 *
 * BatchNorm training (call->is_train and not use_global_stats) normalizes with the batch's mean
 * and biased variance, writes mean and invstd to its mean/var outputs, and updates the moving
 * statistics in place (inputs 3 and 4, FMutateInputs) as m = m * momentum + batch * (1 -
 * momentum) with the biased variance; MXNet does this update in the backward pass, here it is
 * done once per training forward (and the backward does not repeat it). Inference, as MXNet's CPU kernels, gives
 * mean = moving_mean and var = 1 / sqrt(moving_var + eps) (invstd) on the hidden outputs.
 *
 * Threads: large calls split over independent work -- channels for BatchNorm's statistics (each
 * channel's sums run over the batch in the same order in any chunk), rows or (outer, block of
 * positions) for the other normalizations' statistics, rows for the affine maps. The gamma/beta
 * gradients, which sum over rows, are computed per row (or per fixed block of rows) in parallel
 * and added up in row order on the calling thread, so results do not depend on the thread count.
 */
#include <math.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "../core/mxw_parallel.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <simde/wasm/simd128.h>
#endif

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* FGradients (defined with the backward ops at the end of the file) */
static int grad_bn(mxw_grad_ctx *g);
static int grad_bn_relu(mxw_grad_ctx *g);
static int grad_ln(mxw_grad_ctx *g);
static int grad_in(mxw_grad_ctx *g);
static int grad_gn(mxw_grad_ctx *g);
static int grad_l2(mxw_grad_ctx *g);
static int grad_lrn(mxw_grad_ctx *g);

/* ==== kernels ================================================================================= */
/* One table per compute type. x and y point at elements of that type; statistics are doubles.
 * col_* kernels work on one row of n positions with a statistic per position; a NULL mean
 * means 0. */
typedef struct norm_kernels {
  int dtype; /* MXW_FLOAT32 or MXW_FLOAT64 */
  size_t esize;
  double (*sum)(const void *x, int64_t n);
  double (*sqdev)(const void *x, int64_t n, double mean); /* Σ (x - mean)² */
  /* y = ((x - mean) * inv) * g + b, one mean/inv/g/b for the run */
  void (*affine)(const void *x, void *y, int64_t n, double mean, double inv, double g, double b);
  /* the same with gamma and beta per element (of the compute type) */
  void (*affine_gb)(const void *x, void *y, int64_t n, double mean, double inv, const void *g, const void *b);
  void (*col_sum)(double *acc, const void *x, int64_t n);                       /* acc[i] += x[i] */
  void (*col_sqdev)(double *acc, const void *x, const double *mean, int64_t n); /* += (x - mean)² */
  /* y[i] = ((x[i] - mean[i]) * inv[i]) * g[i * step] + b[i * step] (step 0: one g and b) */
  void (*col_affine)(const void *x, void *y, int64_t n, const double *mean, const double *inv, const double *g,
                     const double *b, int step);
  /* LRN: norm[i] = knorm + salpha * sq[i], y[i] = x[i] * norm[i]^-beta */
  void (*lrn)(const void *x, void *y, void *norm, const double *sq, int64_t n, double knorm, double salpha,
              double beta);
  void (*relu)(void *y, int64_t n); /* y = max(y, 0); NaN stays NaN, as relu */
} norm_kernels;

/* ---- float64: the scalar reference kernels ---------------------------------------------------- */
static double sum_f64(const void *xv, int64_t n) {
  const double *x = (const double *)xv;
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += x[i];
  return s;
}
static double sqdev_f64(const void *xv, int64_t n, double mean) {
  const double *x = (const double *)xv;
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += (x[i] - mean) * (x[i] - mean);
  return s;
}
static void affine_f64(const void *xv, void *yv, int64_t n, double mean, double inv, double g, double b) {
  const double *x = (const double *)xv;
  double *y = (double *)yv;
  for (int64_t i = 0; i < n; i++) y[i] = ((x[i] - mean) * inv) * g + b;
}
static void affine_gb_f64(const void *xv, void *yv, int64_t n, double mean, double inv, const void *gv,
                          const void *bv) {
  const double *x = (const double *)xv, *g = (const double *)gv, *b = (const double *)bv;
  double *y = (double *)yv;
  for (int64_t i = 0; i < n; i++) y[i] = ((x[i] - mean) * inv) * g[i] + b[i];
}
static void col_sum_f64(double *acc, const void *xv, int64_t n) {
  const double *x = (const double *)xv;
  for (int64_t i = 0; i < n; i++) acc[i] += x[i];
}
static void col_sqdev_f64(double *acc, const void *xv, const double *mean, int64_t n) {
  const double *x = (const double *)xv;
  for (int64_t i = 0; i < n; i++) {
    double d = x[i] - (mean ? mean[i] : 0.0);
    acc[i] += d * d;
  }
}
static void col_affine_f64(const void *xv, void *yv, int64_t n, const double *mean, const double *inv, const double *g,
                           const double *b, int step) {
  const double *x = (const double *)xv;
  double *y = (double *)yv;
  for (int64_t i = 0; i < n; i++) y[i] = ((x[i] - (mean ? mean[i] : 0.0)) * inv[i]) * g[i * step] + b[i * step];
}
static void lrn_f64(const void *xv, void *yv, void *normv, const double *sq, int64_t n, double knorm, double salpha,
                    double beta) {
  const double *x = (const double *)xv;
  double *y = (double *)yv, *norm = (double *)normv;
  for (int64_t i = 0; i < n; i++) {
    norm[i] = knorm + salpha * sq[i];
    y[i] = x[i] * pow(norm[i], -beta);
  }
}
static void relu_f64(void *yv, int64_t n) {
  double *y = (double *)yv;
  for (int64_t i = 0; i < n; i++)
    if (y[i] < 0.0) y[i] = 0.0;
}

static const norm_kernels k_f64 = {MXW_FLOAT64, sizeof(double), sum_f64,        sqdev_f64, affine_f64, affine_gb_f64,
                                   col_sum_f64, col_sqdev_f64,  col_affine_f64, lrn_f64,   relu_f64};

/* ---- float32: SIMD runs --------------------------------------------------------------------- */
/* Float lanes are summed into a double every FLUSH elements, so long runs keep double accuracy. */
#define FLUSH 1024

static inline double lanes_sum(v128_t a) {
  return ((double)wasm_f32x4_extract_lane(a, 0) + (double)wasm_f32x4_extract_lane(a, 1)) +
         ((double)wasm_f32x4_extract_lane(a, 2) + (double)wasm_f32x4_extract_lane(a, 3));
}

static double sum_f32(const void *xv, int64_t n) {
  const float *x = (const float *)xv;
  double total = 0.0;
  for (int64_t start = 0; start < n; start += FLUSH) {
    const int64_t end = n - start > FLUSH ? start + FLUSH : n;
    v128_t a0 = wasm_f32x4_splat(0.f), a1 = wasm_f32x4_splat(0.f);
    int64_t i = start;
    for (; i + 8 <= end; i += 8) {
      a0 = wasm_f32x4_add(a0, wasm_v128_load(x + i));
      a1 = wasm_f32x4_add(a1, wasm_v128_load(x + i + 4));
    }
    double part = lanes_sum(wasm_f32x4_add(a0, a1));
    for (; i < end; i++) part += x[i];
    total += part;
  }
  return total;
}

static double sqdev_f32(const void *xv, int64_t n, double mean) {
  const float *x = (const float *)xv;
  const float m = (float)mean;
  const v128_t vm = wasm_f32x4_splat(m);
  double total = 0.0;
  for (int64_t start = 0; start < n; start += FLUSH) {
    const int64_t end = n - start > FLUSH ? start + FLUSH : n;
    v128_t a0 = wasm_f32x4_splat(0.f), a1 = wasm_f32x4_splat(0.f);
    int64_t i = start;
    for (; i + 8 <= end; i += 8) {
      v128_t d0 = wasm_f32x4_sub(wasm_v128_load(x + i), vm), d1 = wasm_f32x4_sub(wasm_v128_load(x + i + 4), vm);
      a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(d0, d0));
      a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(d1, d1));
    }
    double part = lanes_sum(wasm_f32x4_add(a0, a1));
    for (; i < end; i++) {
      float d = x[i] - m;
      part += (double)(d * d);
    }
    total += part;
  }
  return total;
}

/* The BatchNorm inference hot loop: one channel's contiguous H*W block. */
static void affine_f32(const void *xv, void *yv, int64_t n, double mean, double inv, double g, double b) {
  const float *x = (const float *)xv;
  float *y = (float *)yv;
  const float m = (float)mean, s = (float)inv, gg = (float)g, bb = (float)b;
  const v128_t vm = wasm_f32x4_splat(m), vs = wasm_f32x4_splat(s), vg = wasm_f32x4_splat(gg), vb = wasm_f32x4_splat(bb);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v128_t v = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(x + i), vm), vs);
    wasm_v128_store(y + i, wasm_f32x4_add(wasm_f32x4_mul(v, vg), vb));
  }
  for (; i < n; i++) y[i] = ((x[i] - m) * s) * gg + bb;
}

static void affine_gb_f32(const void *xv, void *yv, int64_t n, double mean, double inv, const void *gv,
                          const void *bv) {
  const float *x = (const float *)xv, *g = (const float *)gv, *b = (const float *)bv;
  float *y = (float *)yv;
  const float m = (float)mean, s = (float)inv;
  const v128_t vm = wasm_f32x4_splat(m), vs = wasm_f32x4_splat(s);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v128_t v = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(x + i), vm), vs);
    wasm_v128_store(y + i, wasm_f32x4_add(wasm_f32x4_mul(v, wasm_v128_load(g + i)), wasm_v128_load(b + i)));
  }
  for (; i < n; i++) y[i] = ((x[i] - m) * s) * g[i] + b[i];
}

static void col_sum_f32(double *acc, const void *xv, int64_t n) {
  const float *x = (const float *)xv;
  for (int64_t i = 0; i < n; i++) acc[i] += x[i];
}
static void col_sqdev_f32(double *acc, const void *xv, const double *mean, int64_t n) {
  const float *x = (const float *)xv;
  for (int64_t i = 0; i < n; i++) {
    double d = x[i] - (mean ? mean[i] : 0.0);
    acc[i] += d * d;
  }
}
static void col_affine_f32(const void *xv, void *yv, int64_t n, const double *mean, const double *inv, const double *g,
                           const double *b, int step) {
  const float *x = (const float *)xv;
  float *y = (float *)yv;
  for (int64_t i = 0; i < n; i++) {
    float v = (x[i] - (mean ? (float)mean[i] : 0.f)) * (float)inv[i];
    y[i] = v * (float)g[i * step] + (float)b[i * step];
  }
}
static void lrn_f32(const void *xv, void *yv, void *normv, const double *sq, int64_t n, double knorm, double salpha,
                    double beta) {
  const float *x = (const float *)xv;
  float *y = (float *)yv, *norm = (float *)normv;
  const float k = (float)knorm, a = (float)salpha, nb = (float)-beta;
  for (int64_t i = 0; i < n; i++) {
    norm[i] = (float)sq[i] * a + k;
    y[i] = x[i] * powf(norm[i], nb);
  }
}
static void relu_f32(void *yv, int64_t n) {
  float *y = (float *)yv;
  for (int64_t i = 0; i < n; i++)
    if (y[i] < 0.f) y[i] = 0.f;
}

static const norm_kernels k_f32 = {MXW_FLOAT32, sizeof(float), sum_f32,        sqdev_f32, affine_f32, affine_gb_f32,
                                   col_sum_f32, col_sqdev_f32, col_affine_f32, lrn_f32,   relu_f32};

/* ==== staging: tensors in the compute type ====================================================== */
/* float32 data computes in float32, everything else in float64. A tensor already of the compute
 * type is used in place; others (float16, bfloat16) get converted copies, and staged outputs are
 * converted back by stage_finish. */
#define STAGE_MAX 6
typedef struct {
  const norm_kernels *k;
  void *own[STAGE_MAX];
  mxw_tensor *back[STAGE_MAX]; /* the output each owned buffer goes back to, or NULL */
  int n;
} stage;

static void stage_init(stage *s, int data_dtype) {
  memset(s, 0, sizeof *s);
  s->k = data_dtype == MXW_FLOAT32 ? &k_f32 : &k_f64;
}

static void *stage_buffer(stage *s, const mxw_tensor *t, int copy_in, mxw_tensor *back) {
  if (t->dtype == s->k->dtype) return t->data;
  const int64_t n = mxw_tensor_size(t);
  if (s->n == STAGE_MAX) {
    mxw_fail("internal: too many staged tensors");
    return NULL;
  }
  void *buf = malloc((size_t)(n > 0 ? n : 1) * s->k->esize);
  if (!buf) {
    mxw_fail("out of memory for a %s copy of %lld elements", mxw_dtype_name(s->k->dtype), (long long)n);
    return NULL;
  }
  if (copy_in) mxw_parallel_convert(t->data, t->dtype, buf, s->k->dtype, n);
  s->own[s->n] = buf;
  s->back[s->n++] = back;
  return buf;
}
static const void *stage_in(stage *s, const mxw_tensor *t) { return stage_buffer(s, t, 1, NULL); }
static void *stage_out(stage *s, mxw_tensor *t) { return stage_buffer(s, t, 0, t); }

/* Converts staged outputs back (when ok) and frees the copies; returns ok ? 0 : -1. */
static int stage_finish(stage *s, int ok) {
  for (int i = 0; i < s->n; i++) {
    if (ok && s->back[i])
      mxw_parallel_convert(s->own[i], s->k->dtype, s->back[i]->data, s->back[i]->dtype, mxw_tensor_size(s->back[i]));
    free(s->own[i]);
  }
  s->n = 0;
  return ok ? 0 : -1;
}

/* `count` doubles of scratch (slot 0) for per-channel / per-row statistics. */
static double *scratch_doubles(int64_t count) {
  return (double *)mxw_scratch(0, (size_t)(count > 0 ? count : 1) * sizeof(double));
}

/* A small vector tensor (gamma, beta, moving stats) as doubles; writing back the same way. */
static void load_vec(const mxw_tensor *t, double *dst) {
  mxw_convert(t->data, t->dtype, dst, MXW_FLOAT64, mxw_tensor_size(t));
}
static void store_vec(const double *src, const mxw_tensor *t) {
  mxw_convert(src, MXW_FLOAT64, t->data, t->dtype, mxw_tensor_size(t));
}

static inline const char *at(const void *p, int64_t elem, size_t esize) {
  return (const char *)p + (size_t)elem * esize;
}
static inline char *at_mut(void *p, int64_t elem, size_t esize) { return (char *)p + (size_t)elem * esize; }

/* ==== shared inference helpers ================================================================== */
/* Unifies `have` with `want` (-1 dims are free on both sides, in both directions); a conflict
 * names the input/output, both shapes and the rule that gave `want`. */
static int unify_vec(mxw_shape *have, int64_t len, const char *name, const char *rule) {
  const mxw_shape want = mxw_shape_make(1, &len);
  return mxw_shape_unify(have, &want, name, rule);
}
/* A vector of data.shape[axis] elements; the rule naming the axis is formatted only on a conflict
 * (mxw_shape_unify changes nothing when it fails). */
static int unify_axis_vec(mxw_shape *have, int64_t len, const char *name, int axis) {
  if (unify_vec(have, len, name, NULL) == 0) return 0;
  char rule[64];
  snprintf(rule, sizeof rule, " = (data.shape[%d],)", axis);
  return unify_vec(have, len, name, rule);
}
static int unify2(mxw_shape *have, int64_t d0, int64_t d1, const char *name, const char *rule) {
  const int64_t dims[2] = {d0, d1};
  const mxw_shape want = mxw_shape_make(2, dims);
  return mxw_shape_unify(have, &want, name, rule);
}
/* data and an output of the same shape fill each other. */
static int same_shape(mxw_shape *data, mxw_shape *out, const char *out_name) {
  MXW_TRY(mxw_shape_unify(data, out, "data", " (from the output's shape)"));
  return mxw_shape_unify(out, data, out_name, " (the data's shape)");
}

/* The axis of data (negative counts from the end) with an error naming the data's shape. */
static int data_axis(int64_t axis, const mxw_shape *data, int *out) {
  const int64_t a = axis < 0 ? axis + data->ndim : axis;
  if (a < 0 || a >= data->ndim) {
    char s[128];
    return mxw_fail("axis %lld is out of range for data of shape %s", (long long)axis,
                    mxw_shape_str(data, s, sizeof s));
  }
  *out = (int)a;
  return 0;
}

/* When data's dims[axis] is unknown, takes it from the first known 1-D vector input. */
static void fill_dim_from_vectors(mxw_shape *data, int axis, mxw_shape *vecs, int nvec) {
  for (int i = 0; i < nvec && data->dims[axis] < 0; i++)
    if (vecs[i].ndim == 1 && vecs[i].dims[0] >= 0) data->dims[axis] = vecs[i].dims[0];
}

/* (outer, n, inner) around axis. */
typedef struct {
  int64_t outer, n, inner;
} axis_view;
static axis_view view_around(const mxw_shape *s, int axis) {
  axis_view v = {1, s->dims[axis], 1};
  for (int i = 0; i < axis; i++) v.outer *= s->dims[i];
  for (int i = axis + 1; i < s->ndim; i++) v.inner *= s->dims[i];
  return v;
}

/* All operands share one floating-point dtype. */
static int infer_type_float(const void *param, int nin, int *in, int nout, int *out) {
  MXW_TRY(mxw_infer_type_same(param, nin, in, nout, out));
  const int t = nin > 0 ? in[0] : -1;
  if (t >= 0 && !mxw_dtype_is_float(t))
    return mxw_fail("dtype %s is not supported (float32, float64, float16 or bfloat16 only)", mxw_dtype_name(t));
  return 0;
}

static int one_visible(const void *param) {
  (void)param;
  return 1;
}

/* Row statistics for `rows` contiguous rows of `len` elements: mean and biased variance. */
static void row_moments(const norm_kernels *k, const void *x, int64_t rows, int64_t len, double *mean, double *var) {
  for (int64_t r = 0; r < rows; r++) {
    const void *row = at(x, r * len, k->esize);
    const double m = len > 0 ? k->sum(row, len) / (double)len : NAN;
    mean[r] = m;
    var[r] = len > 0 ? k->sqdev(row, len, m) / (double)len : NAN;
  }
}

/* ==== BatchNorm and _contrib_BatchNormWithReLU =================================================== */
typedef struct {
  double eps;
  double momentum;
  int fix_gamma;
  int use_global_stats;
  int output_mean_var;
  int64_t axis;
  int cudnn_off;
  mxw_opt_float min_calib_range, max_calib_range;
} BatchNormParam;

static const mxw_attr_spec k_bn_attrs[] = {
    MXW_A_FLOAT("eps", BatchNormParam, eps, "0.001", "added to the variance before the square root"),
    MXW_A_FLOAT("momentum", BatchNormParam, momentum, "0.9", "moving average momentum (training)"),
    MXW_A_BOOL("fix_gamma", BatchNormParam, fix_gamma, "True", "use gamma = 1 and ignore the gamma input"),
    MXW_A_BOOL("use_global_stats", BatchNormParam, use_global_stats, "False",
               "normalize with the moving statistics even in training"),
    MXW_A_BOOL("output_mean_var", BatchNormParam, output_mean_var, "False", "also return the mean and var outputs"),
    MXW_A_INT("axis", BatchNormParam, axis, "1", "the channel axis (negative counts from the end)"),
    MXW_A_BOOL("cudnn_off", BatchNormParam, cudnn_off, "False", "accepted for compatibility (no cuDNN here)"),
    MXW_A_OPT_FLOAT("min_calib_range", BatchNormParam, min_calib_range, "None", "quantization only; ignored"),
    MXW_A_OPT_FLOAT("max_calib_range", BatchNormParam, max_calib_range, "None", "quantization only; ignored"),
};
static const char *const k_bn_inputs[] = {"data", "gamma", "beta", "moving_mean", "moving_var", NULL};
static const char *const k_bn_outputs[] = {"output", "mean", "var", NULL};
static const char *const k_bn_relu_outputs[] = {"output", "mean", "var", "workspace", NULL};
static const int k_bn_mutate[] = {3, 4};

static int bn_visible(const void *param) { return ((const BatchNormParam *)param)->output_mean_var ? 3 : 1; }

static const char *bn_input_var_init(const void *param, int index) {
  (void)param;
  return index == 3 ? "[\"zero\", {}]" : index == 4 ? "[\"one\", {}]" : NULL;
}

/* data (..., C, ...) with C = data.shape[axis]; gamma, beta, moving_mean, moving_var, and the
 * mean and var outputs (C,); output (and BatchNormWithReLU's workspace) = data's shape. C comes
 * from the data, or from any vector whose length is known (deferred initialization relies on
 * the vectors being filled from the data). */
static int bn_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const BatchNormParam *p = (const BatchNormParam *)param;
  mxw_shape *data = &in[0];
  MXW_TRY(same_shape(data, &out[0], "output"));
  if (data->ndim < 0) return 0;
  if (data->ndim == 0) return mxw_fail("data has shape (), expected at least one dimension (the channel axis)");
  int axis;
  MXW_TRY(data_axis(p->axis, data, &axis));
  if (data->dims[axis] < 0) {
    fill_dim_from_vectors(data, axis, &in[1], nin - 1);
    if (data->dims[axis] < 0) fill_dim_from_vectors(data, axis, &out[1], 2);
    MXW_TRY(same_shape(data, &out[0], "output"));
  }
  const int64_t C = data->dims[axis];
  for (int i = 1; i < nin; i++) MXW_TRY(unify_axis_vec(&in[i], C, k_bn_inputs[i], axis));
  MXW_TRY(unify_axis_vec(&out[1], C, "mean output", axis));
  MXW_TRY(unify_axis_vec(&out[2], C, "var output", axis));
  if (nout > 3) MXW_TRY(same_shape(data, &out[3], "workspace output"));
  return 0;
}

/* data's dtype for output 0; gamma, beta, the moving stats and the other outputs are float32
 * for float16/bfloat16 data and otherwise the data's dtype. */
static int bn_infer_type(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  int t = in[0] >= 0 ? in[0] : out[0];
  if (t < 0) return 0;
  if (!mxw_dtype_is_float(t))
    return mxw_fail("dtype %s is not supported (float32, float64, float16 or bfloat16 only)", mxw_dtype_name(t));
  if (in[0] >= 0 && out[0] >= 0 && in[0] != out[0])
    return mxw_fail("output has dtype %s but data is %s", mxw_dtype_name(out[0]), mxw_dtype_name(in[0]));
  in[0] = out[0] = t;
  const int pt = (t == MXW_FLOAT16 || t == MXW_BFLOAT16) ? MXW_FLOAT32 : t;
  for (int i = 1; i < nin; i++) {
    if (in[i] >= 0 && in[i] != pt)
      return mxw_fail("%s has dtype %s, expected %s for %s data", k_bn_inputs[i], mxw_dtype_name(in[i]),
                      mxw_dtype_name(pt), mxw_dtype_name(t));
    in[i] = pt;
  }
  for (int i = 1; i < nout; i++) {
    if (out[i] >= 0 && out[i] != pt)
      return mxw_fail("output %d has dtype %s, expected %s", i, mxw_dtype_name(out[i]), mxw_dtype_name(pt));
    out[i] = pt;
  }
  return 0;
}

/* ---- the shared parallel loops ------------------------------------------------------------------
 * One context for the loops below: the kernels, the data and its (outer, n, inner) view (or rows
 * of len), the statistics and the parameters each loop reads. */
typedef struct {
  const norm_kernels *k;
  const void *x, *g; /* data, and the output gradient (backward) */
  void *y;           /* output, or the data gradient (backward) */
  axis_view v;
  int64_t len, G; /* rows of len elements; gamma/beta index = row % G */
  double *mean, *var, *inv, *gam, *beta, *sa, *sb;
  double *ca, *cb, *cc;    /* the gradients' per-group constants (see "gradients") */
  const void *gvec, *bvec; /* per-element gamma and beta in the compute type (LayerNorm, last axis) */
  double eps;
  const mxw_tensor *t0; /* an extra tensor (BatchNormWithReLU's workspace) */
  mxw_tensor *t1;
} norm_job;

/* Element-ops per element of the data for a pass over it (float16/bfloat16 were converted). */
static double pass_cost(const norm_kernels *k) { return k->dtype == MXW_FLOAT32 ? 1.0 : 2.0; }

/* Channels [c0, c1) of the batch mean and biased variance over the (outer, C, inner) view: each
 * channel's sums run over the batch in the same order whatever chunk holds it. */
static void moments_chunk(void *ctx, int64_t c0, int64_t c1) {
  const norm_job *j = (const norm_job *)ctx;
  const norm_kernels *k = j->k;
  const axis_view v = j->v;
  const int64_t C = v.n, count = v.outer * v.inner;
  double *mean = j->mean, *var = j->var;
  for (int64_t c = c0; c < c1; c++) mean[c] = var[c] = 0.0;
  if (v.inner == 1) { /* channels last: whole rows of channels at a time */
    for (int64_t o = 0; o < v.outer; o++) k->col_sum(mean + c0, at(j->x, o * C + c0, k->esize), c1 - c0);
  } else {
    for (int64_t o = 0; o < v.outer; o++)
      for (int64_t c = c0; c < c1; c++) mean[c] += k->sum(at(j->x, (o * C + c) * v.inner, k->esize), v.inner);
  }
  for (int64_t c = c0; c < c1; c++) mean[c] = count > 0 ? mean[c] / (double)count : 0.0;
  if (v.inner == 1) {
    for (int64_t o = 0; o < v.outer; o++) k->col_sqdev(var + c0, at(j->x, o * C + c0, k->esize), mean + c0, c1 - c0);
  } else {
    for (int64_t o = 0; o < v.outer; o++)
      for (int64_t c = c0; c < c1; c++) var[c] += k->sqdev(at(j->x, (o * C + c) * v.inner, k->esize), v.inner, mean[c]);
  }
  for (int64_t c = c0; c < c1; c++) var[c] = count > 0 ? var[c] / (double)count : 0.0;
}

/* Batch mean and biased variance per channel of the (outer, C, inner) view, split over the
 * channels (groups of 16 keep the channel-last column kernels' vectors whole). */
static void channel_moments(norm_job *j) {
  const axis_view v = j->v;
  mxw_parallel_run(v.n, v.inner == 1 ? 16 : 1, 2.0 * pass_cost(j->k) * (double)(v.outer * v.inner), moments_chunk, j);
}

/* Units [u0, u1) of y = ((x - mean[c]) * inv[c]) * g[c] + b[c] over the (outer, C, inner) view:
 * rows of C channels (inner == 1) or (outer, channel) runs of inner. */
static void affine_chunk(void *ctx, int64_t u0, int64_t u1) {
  const norm_job *j = (const norm_job *)ctx;
  const norm_kernels *k = j->k;
  const int64_t C = j->v.n, inner = j->v.inner;
  for (int64_t u = u0; u < u1; u++) {
    if (inner == 1) {
      k->col_affine(at(j->x, u * C, k->esize), at_mut(j->y, u * C, k->esize), C, j->mean, j->inv, j->gam, j->beta, 1);
    } else {
      const int64_t c = u % C;
      k->affine(at(j->x, u * inner, k->esize), at_mut(j->y, u * inner, k->esize), inner, j->mean[c], j->inv[c],
                j->gam[c], j->beta[c]);
    }
  }
}

static void channel_affine(norm_job *j) {
  const axis_view v = j->v;
  const int64_t units = v.inner == 1 ? v.outer : v.outer * v.n, per = v.inner == 1 ? v.n : v.inner;
  mxw_parallel_run(units, 1, 2.0 * pass_cost(j->k) * (double)per, affine_chunk, j);
}

/* y = max(y, 0) over elements [b, e) of j->y. */
static void relu_chunk(void *ctx, int64_t b, int64_t e) {
  const norm_job *j = (const norm_job *)ctx;
  j->k->relu(at_mut(j->y, b, j->k->esize), e - b);
}

/* BatchNormWithReLU's workspace t1 = (t0 > 0), elements [b, e). */
static void mask_chunk(void *ctx, int64_t b, int64_t e) {
  const norm_job *j = (const norm_job *)ctx;
  for (int64_t i = b; i < e; i++)
    mxw_store_f64(j->t1->data, j->t1->dtype, i, mxw_load_f64(j->t0->data, j->t0->dtype, i) > 0 ? 1.0 : 0.0);
}

static int bn_forward_common(const mxw_op_call *call, int with_relu) {
  const BatchNormParam *p = (const BatchNormParam *)call->param;
  const mxw_tensor *x = &call->inputs[0], *gamma = &call->inputs[1], *beta = &call->inputs[2];
  const mxw_tensor *moving_mean = &call->inputs[3], *moving_var = &call->inputs[4];
  mxw_tensor *y = &call->outputs[0];
  int axis;
  MXW_TRY(data_axis(p->axis, &x->shape, &axis));
  const axis_view v = view_around(&x->shape, axis);
  const int64_t C = v.n;
  const int training = call->is_train && !p->use_global_stats;

  double *mean = scratch_doubles(6 * C);
  if (!mean) return -1;
  double *var = mean + C, *inv = var + C, *g = inv + C, *b = g + C, *tmp = b + C;
  load_vec(beta, b);
  if (p->fix_gamma) {
    for (int64_t c = 0; c < C; c++) g[c] = 1.0;
  } else {
    load_vec(gamma, g);
  }

  stage st;
  stage_init(&st, x->dtype);
  const void *xd = stage_in(&st, x);
  void *yd = xd ? stage_out(&st, y) : NULL;
  if (!yd) return stage_finish(&st, 0);
  const norm_kernels *k = st.k;

  norm_job j = {.k = k, .x = xd, .y = yd, .v = v, .mean = mean, .var = var, .inv = inv, .gam = g, .beta = b};
  if (training) {
    channel_moments(&j);
    for (int64_t c = 0; c < C; c++) inv[c] = (var[c] == 0.0 && p->eps == 0.0) ? 0.0 : 1.0 / sqrt(var[c] + p->eps);
    /* moving statistics, in place (FMutateInputs {3, 4}); MXNet's momentum is a float */
    const double momentum = (double)(float)p->momentum;
    load_vec(moving_mean, tmp);
    for (int64_t c = 0; c < C; c++) tmp[c] = tmp[c] * momentum + mean[c] * (1.0 - momentum);
    store_vec(tmp, moving_mean);
    load_vec(moving_var, tmp);
    for (int64_t c = 0; c < C; c++) tmp[c] = tmp[c] * momentum + var[c] * (1.0 - momentum);
    store_vec(tmp, moving_var);
    if (p->fix_gamma) store_vec(g, gamma); /* g holds 1s: the kernel writes 1 into gamma, as MXNet's */
  } else {
    load_vec(moving_mean, mean);
    load_vec(moving_var, var);
    for (int64_t c = 0; c < C; c++) inv[c] = 1.0 / sqrt(var[c] + p->eps);
  }
  channel_affine(&j);
  if (with_relu) mxw_parallel_run(mxw_tensor_size(y), 16, pass_cost(k), relu_chunk, &j);
  MXW_TRY(stage_finish(&st, 1));
  /* graph fusion: the activation after it (exec.c) */
  if (!with_relu && call->fused_act) mxw_apply_act(y->data, y->dtype, mxw_tensor_size(y), call->fused_act);

  store_vec(mean, &call->outputs[1]);
  store_vec(inv, &call->outputs[2]); /* the var output holds invstd, in training and inference */
  if (with_relu) {                   /* workspace: the ReLU mask (1 where the output is positive) */
    j.t0 = y;
    j.t1 = &call->outputs[3];
    mxw_parallel_run(mxw_tensor_size(y), 16, 4.0, mask_chunk, &j);
  }
  return 0;
}

static int bn_forward(const mxw_op_call *call) { return bn_forward_common(call, 0); }

/* At inference BatchNorm is y = x * scale[c] + shift[c] with scale = gamma / sqrt(moving_var + eps)
 * (gamma 1 with fix_gamma) and shift = beta - moving_mean * scale: exec.c folds it into the
 * Convolution before it. */
static int bn_as_affine(const void *param, int ndim, const mxw_tensor *in, float *scale, float *shift) {
  const BatchNormParam *p = (const BatchNormParam *)param;
  const int64_t a = p->axis < 0 ? p->axis + ndim : p->axis;
  if (a < 0 || a >= ndim) return -1;
  if (!in) return (int)a;
  const int64_t C = mxw_tensor_size(&in[3]);
  for (int64_t c = 0; c < C; c++) {
    const double g = p->fix_gamma ? 1.0 : mxw_load_f64(in[1].data, in[1].dtype, c);
    const double sc = g / sqrt(mxw_load_f64(in[4].data, in[4].dtype, c) + p->eps);
    scale[c] = (float)sc;
    shift[c] = (float)(mxw_load_f64(in[2].data, in[2].dtype, c) - mxw_load_f64(in[3].data, in[3].dtype, c) * sc);
  }
  return (int)a;
}
static int bn_relu_forward(const mxw_op_call *call) { return bn_forward_common(call, 1); }

static const mxw_op_def op_BatchNorm = {
    .name = "BatchNorm",
    .aliases = ALIASES("_npx_batch_norm"),
    .doc =
        MXW_DOC("y = (x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c] over the channel axis; batch statistics "
                "in training (updating moving_mean/moving_var), the moving statistics otherwise"),
    .attrs = k_bn_attrs,
    .num_attrs = (int)(sizeof k_bn_attrs / sizeof k_bn_attrs[0]),
    .param_size = sizeof(BatchNormParam),
    .num_inputs = 5,
    .input_names = k_bn_inputs,
    .num_outputs = 3,
    .num_visible_outputs_fn = bn_visible,
    .output_names = k_bn_outputs,
    .mutate_inputs = k_bn_mutate,
    .num_mutate_inputs = 2,
    .infer_shape = bn_infer_shape,
    .infer_type = bn_infer_type,
    .half_as_f32 = 1,
    .forward = bn_forward,
    .input_var_init = bn_input_var_init,
    .fusable_act = 1,
    .as_affine = bn_as_affine,
    .gradient = grad_bn,
};

static const mxw_op_def op_BatchNormWithReLU = {
    .name = "_contrib_BatchNormWithReLU",
    .doc = MXW_DOC("BatchNorm followed by relu; the hidden workspace output holds the ReLU mask"),
    .attrs = k_bn_attrs,
    .num_attrs = (int)(sizeof k_bn_attrs / sizeof k_bn_attrs[0]),
    .param_size = sizeof(BatchNormParam),
    .num_inputs = 5,
    .input_names = k_bn_inputs,
    .num_outputs = 4,
    .num_visible_outputs_fn = bn_visible,
    .output_names = k_bn_relu_outputs,
    .mutate_inputs = k_bn_mutate,
    .num_mutate_inputs = 2,
    .infer_shape = bn_infer_shape,
    .infer_type = bn_infer_type,
    .half_as_f32 = 1,
    .forward = bn_relu_forward,
    .input_var_init = bn_input_var_init,
    .gradient = grad_bn_relu,
};

/* ==== LayerNorm =============================================================================== */
typedef struct {
  int64_t axis;
  double eps;
  int output_mean_var;
} LayerNormParam;

static const mxw_attr_spec k_ln_attrs[] = {
    MXW_A_INT("axis", LayerNormParam, axis, "-1", "the axis to normalize over (negative counts from the end)"),
    MXW_A_FLOAT("eps", LayerNormParam, eps, "1e-05", "added to the variance before the square root"),
    MXW_A_BOOL("output_mean_var", LayerNormParam, output_mean_var, "False", "also return the mean and std outputs"),
};
static const char *const k_data_gamma_beta[] = {"data", "gamma", "beta", NULL};
static const char *const k_mean_std_outputs[] = {"output", "mean", "std", NULL};
static const char *const k_mean_var_outputs[] = {"output", "mean", "var", NULL};

static int ln_visible(const void *param) { return ((const LayerNormParam *)param)->output_mean_var ? 3 : 1; }

/* gamma, beta (data.shape[axis],); mean and std = data's shape with dims[axis] = 1. */
static int ln_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const LayerNormParam *p = (const LayerNormParam *)param;
  mxw_shape *data = &in[0];
  MXW_TRY(same_shape(data, &out[0], "output"));
  if (data->ndim < 0) return 0;
  if (data->ndim == 0) return mxw_fail("data has shape (), expected at least one dimension");
  int axis;
  MXW_TRY(data_axis(p->axis, data, &axis));
  if (data->dims[axis] < 0) {
    fill_dim_from_vectors(data, axis, &in[1], nin - 1);
    MXW_TRY(same_shape(data, &out[0], "output"));
  }
  MXW_TRY(unify_axis_vec(&in[1], data->dims[axis], "gamma", axis));
  MXW_TRY(unify_axis_vec(&in[2], data->dims[axis], "beta", axis));
  mxw_shape moments = *data;
  moments.dims[axis] = 1;
  for (int k = 1; k <= 2; k++) {
    const char *name = k == 1 ? "mean output" : "std output";
    if (mxw_shape_unify(&out[k], &moments, name, NULL) == 0) continue;
    char rule[64];
    snprintf(rule, sizeof rule, " (the data's shape with axis %d set to 1)", axis);
    return mxw_shape_unify(&out[k], &moments, name, rule);
  }
  return 0;
}

/* LayerNorm over the last axis, rows [r0, r1): mean, std = sqrt(var + eps) and the affine map with
 * per-element gamma and beta. */
static void ln_rows_chunk(void *ctx, int64_t r0, int64_t r1) {
  const norm_job *j = (const norm_job *)ctx;
  const norm_kernels *k = j->k;
  const int64_t n = j->v.n;
  row_moments(k, at(j->x, r0 * n, k->esize), r1 - r0, n, j->mean + r0, j->var + r0);
  for (int64_t o = r0; o < r1; o++) {
    j->var[o] = sqrt(j->var[o] + j->eps);
    k->affine_gb(at(j->x, o * n, k->esize), at_mut(j->y, o * n, k->esize), n, j->mean[o], 1.0 / j->var[o], j->gvec,
                 j->bvec);
  }
}

/* LayerNorm over an inner axis: units of (outer slice, block of LN_COLS positions); statistics
 * per position, accumulated a row of the block at a time. */
#define LN_COLS 64
static void ln_cols_chunk(void *ctx, int64_t u0, int64_t u1) {
  const norm_job *j = (const norm_job *)ctx;
  const norm_kernels *k = j->k;
  const axis_view v = j->v;
  const int64_t nb = (v.inner + LN_COLS - 1) / LN_COLS;
  for (int64_t u = u0; u < u1; u++) {
    const int64_t o = u / nb, i0 = (u % nb) * LN_COLS, w = v.inner - i0 < LN_COLS ? v.inner - i0 : LN_COLS;
    double *mo = j->mean + o * v.inner + i0, *so = j->var + o * v.inner + i0, *io = j->inv + o * v.inner + i0;
    for (int64_t i = 0; i < w; i++) mo[i] = so[i] = 0.0;
    for (int64_t r = 0; r < v.n; r++) k->col_sum(mo, at(j->x, (o * v.n + r) * v.inner + i0, k->esize), w);
    for (int64_t i = 0; i < w; i++) mo[i] = v.n > 0 ? mo[i] / (double)v.n : NAN;
    for (int64_t r = 0; r < v.n; r++) k->col_sqdev(so, at(j->x, (o * v.n + r) * v.inner + i0, k->esize), mo, w);
    for (int64_t i = 0; i < w; i++) {
      so[i] = sqrt((v.n > 0 ? so[i] / (double)v.n : NAN) + j->eps);
      io[i] = 1.0 / so[i];
    }
    for (int64_t r = 0; r < v.n; r++) {
      const int64_t off = (o * v.n + r) * v.inner + i0;
      k->col_affine(at(j->x, off, k->esize), at_mut(j->y, off, k->esize), w, mo, io, &j->gam[r], &j->beta[r], 0);
    }
  }
}

/* Over one axis: mean, var = mean((x - mean)²), std = sqrt(var + eps),
 * y = (x - mean) / std * gamma + beta. */
static int ln_forward(const mxw_op_call *call) {
  const LayerNormParam *p = (const LayerNormParam *)call->param;
  const mxw_tensor *x = &call->inputs[0];
  mxw_tensor *y = &call->outputs[0];
  int axis;
  MXW_TRY(data_axis(p->axis, &x->shape, &axis));
  const axis_view v = view_around(&x->shape, axis);
  const double eps = (double)(float)p->eps; /* MXNet's eps is a float */
  const int64_t nstat = v.outer * v.inner;

  stage st;
  stage_init(&st, x->dtype);
  const norm_kernels *k = st.k;
  const void *xd = stage_in(&st, x);
  void *yd = xd ? stage_out(&st, y) : NULL;
  if (!yd) return stage_finish(&st, 0);

  norm_job j = {.k = k, .x = xd, .y = yd, .v = v, .eps = eps};
  if (v.inner == 1) { /* the last axis (or trailing 1s): contiguous rows with per-element gamma/beta */
    const void *g = stage_in(&st, &call->inputs[1]);
    const void *b = g ? stage_in(&st, &call->inputs[2]) : NULL;
    double *mean = b ? scratch_doubles(2 * nstat) : NULL;
    if (!mean) return stage_finish(&st, 0);
    j.mean = mean;
    j.var = mean + nstat; /* the std, in the end */
    j.gvec = g;
    j.bvec = b;
    mxw_parallel_run(v.outer, 1, 4.0 * pass_cost(k) * (double)v.n, ln_rows_chunk, &j);
    MXW_TRY(stage_finish(&st, 1));
    store_vec(mean, &call->outputs[1]);
    store_vec(j.var, &call->outputs[2]);
    return 0;
  }

  /* An inner axis: statistics per (outer, inner) position, accumulated a row of `inner` at a time,
   * over units of (outer, block of LN_COLS positions). */
  double *mean = scratch_doubles(3 * nstat + 2 * v.n);
  if (!mean) return stage_finish(&st, 0);
  j.mean = mean;
  j.var = mean + nstat; /* the std, in the end */
  j.inv = j.var + nstat;
  j.gam = j.inv + nstat;
  j.beta = j.gam + v.n;
  load_vec(&call->inputs[1], j.gam);
  load_vec(&call->inputs[2], j.beta);
  const int64_t nb = (v.inner + LN_COLS - 1) / LN_COLS;
  mxw_parallel_run(v.outer * nb, 1, 4.0 * pass_cost(k) * (double)(v.n * (v.inner < LN_COLS ? v.inner : LN_COLS)),
                   ln_cols_chunk, &j);
  MXW_TRY(stage_finish(&st, 1));
  store_vec(mean, &call->outputs[1]);
  store_vec(j.var, &call->outputs[2]);
  return 0;
}

static const mxw_op_def op_LayerNorm = {
    .name = "LayerNorm",
    .aliases = ALIASES("_npx_layer_norm"),
    .doc = MXW_DOC("y = (x - mean) / sqrt(var + eps) * gamma + beta with the moments over one axis"),
    .attrs = k_ln_attrs,
    .num_attrs = (int)(sizeof k_ln_attrs / sizeof k_ln_attrs[0]),
    .param_size = sizeof(LayerNormParam),
    .num_inputs = 3,
    .input_names = k_data_gamma_beta,
    .num_outputs = 3,
    .num_visible_outputs_fn = ln_visible,
    .output_names = k_mean_std_outputs,
    .infer_shape = ln_infer_shape,
    .infer_type = infer_type_float,
    .half_as_f32 = 1,
    .forward = ln_forward,
    .gradient = grad_ln,
};

/* ==== InstanceNorm ============================================================================ */
typedef struct {
  double eps;
} InstanceNormParam;

static const mxw_attr_spec k_in_attrs[] = {
    MXW_A_FLOAT("eps", InstanceNormParam, eps, "0.001", "added to the variance before the square root"),
};

/* data (N, C, spatial...) with ndim >= 3; gamma, beta (C,); mean and var (N, C). */
static int in_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  mxw_shape *data = &in[0];
  MXW_TRY(same_shape(data, &out[0], "output"));
  if (data->ndim < 0) return 0;
  if (data->ndim < 3) {
    char s[128];
    return mxw_fail("data has shape %s, expected (N, C, spatial...) with at least 3 dimensions",
                    mxw_shape_str(data, s, sizeof s));
  }
  if (data->dims[1] < 0) {
    fill_dim_from_vectors(data, 1, &in[1], nin - 1);
    MXW_TRY(same_shape(data, &out[0], "output"));
  }
  MXW_TRY(unify_vec(&in[1], data->dims[1], "gamma", " = (data.shape[1],)"));
  MXW_TRY(unify_vec(&in[2], data->dims[1], "beta", " = (data.shape[1],)"));
  MXW_TRY(unify2(&out[1], data->dims[0], data->dims[1], "mean output", " = (N, C)"));
  MXW_TRY(unify2(&out[2], data->dims[0], data->dims[1], "var output", " = (N, C)"));
  return 0;
}

/* Rows [r0, r1) (one per (n, c)): mean and biased var, then the affine map. */
static void in_rows_chunk(void *ctx, int64_t r0, int64_t r1) {
  const norm_job *j = (const norm_job *)ctx;
  const norm_kernels *k = j->k;
  row_moments(k, at(j->x, r0 * j->len, k->esize), r1 - r0, j->len, j->mean + r0, j->var + r0);
  for (int64_t r = r0; r < r1; r++) {
    const int64_t c = r % j->G;
    k->affine(at(j->x, r * j->len, k->esize), at_mut(j->y, r * j->len, k->esize), j->len, j->mean[r],
              1.0 / sqrt(j->var[r] + j->eps), j->gam[c], j->beta[c]);
  }
}

/* Per (n, c) over the spatial positions: mean, biased var (the var output, without eps);
 * y = gamma[c] * (x - mean) / sqrt(var + eps) + beta[c]. */
static int in_forward(const mxw_op_call *call) {
  const InstanceNormParam *p = (const InstanceNormParam *)call->param;
  const mxw_tensor *x = &call->inputs[0];
  mxw_tensor *y = &call->outputs[0];
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1], rows = N * C;
  const int64_t len = rows > 0 ? mxw_tensor_size(x) / rows : 0;
  const double eps = (double)(float)p->eps;

  double *mean = scratch_doubles(2 * rows + 2 * C);
  if (!mean) return -1;
  double *var = mean + rows, *g = var + rows, *b = g + C;
  load_vec(&call->inputs[1], g);
  load_vec(&call->inputs[2], b);
  stage st;
  stage_init(&st, x->dtype);
  const norm_kernels *k = st.k;
  const void *xd = stage_in(&st, x);
  void *yd = xd ? stage_out(&st, y) : NULL;
  if (!yd) return stage_finish(&st, 0);
  norm_job j = {
      .k = k, .x = xd, .y = yd, .len = len, .G = C, .mean = mean, .var = var, .gam = g, .beta = b, .eps = eps};
  mxw_parallel_run(rows, 1, 4.0 * pass_cost(k) * (double)len, in_rows_chunk, &j);
  MXW_TRY(stage_finish(&st, 1));
  store_vec(mean, &call->outputs[1]);
  store_vec(var, &call->outputs[2]);
  return 0;
}

static const mxw_op_def op_InstanceNorm = {
    .name = "InstanceNorm",
    .doc = MXW_DOC("y = gamma[c] * (x - mean) / sqrt(var + eps) + beta[c] with the moments per (sample, channel)"),
    .attrs = k_in_attrs,
    .num_attrs = 1,
    .param_size = sizeof(InstanceNormParam),
    .num_inputs = 3,
    .input_names = k_data_gamma_beta,
    .num_outputs = 3,
    .num_visible_outputs_fn = one_visible,
    .output_names = k_mean_var_outputs,
    .infer_shape = in_infer_shape,
    .infer_type = infer_type_float,
    .half_as_f32 = 1,
    .forward = in_forward,
    .gradient = grad_in,
};

/* ==== GroupNorm =============================================================================== */
typedef struct {
  int64_t num_groups;
  double eps;
  int output_mean_var;
} GroupNormParam;

static const mxw_attr_spec k_gn_attrs[] = {
    MXW_A_INT("num_groups", GroupNormParam, num_groups, "1", "number of channel groups"),
    MXW_A_FLOAT("eps", GroupNormParam, eps, "1e-05", "added to the variance before the square root"),
    MXW_A_BOOL("output_mean_var", GroupNormParam, output_mean_var, "False", "also return the mean and std outputs"),
};

static int gn_validate(void *param) {
  const GroupNormParam *p = (const GroupNormParam *)param;
  MXW_CHECK(p->num_groups >= 1, "num_groups must be >= 1, got %lld", (long long)p->num_groups);
  return 0;
}
static int gn_visible(const void *param) { return ((const GroupNormParam *)param)->output_mean_var ? 3 : 1; }

/* data (N, C, spatial...) with ndim >= 3 and C % num_groups == 0; gamma, beta (num_groups,) (MXNet
 * 1.x: one scale and shift per group); mean and std (N, num_groups). */
static int gn_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  (void)nout;
  const GroupNormParam *p = (const GroupNormParam *)param;
  const int64_t G = p->num_groups;
  mxw_shape *data = &in[0];
  MXW_TRY(unify_vec(&in[1], G, "gamma", " = (num_groups,)"));
  MXW_TRY(unify_vec(&in[2], G, "beta", " = (num_groups,)"));
  MXW_TRY(same_shape(data, &out[0], "output"));
  if (data->ndim < 0) return 0;
  char s[128];
  if (data->ndim < 3)
    return mxw_fail("data has shape %s, expected (N, C, spatial...) with at least 3 dimensions",
                    mxw_shape_str(data, s, sizeof s));
  if (data->dims[1] >= 0 && data->dims[1] % G != 0)
    return mxw_fail("data has %lld channels (shape %s), which num_groups = %lld does not divide",
                    (long long)data->dims[1], mxw_shape_str(data, s, sizeof s), (long long)G);
  MXW_TRY(unify2(&out[1], data->dims[0], G, "mean output", " = (N, num_groups)"));
  MXW_TRY(unify2(&out[2], data->dims[0], G, "std output", " = (N, num_groups)"));
  return 0;
}

/* Rows [r0, r1) (one per (n, group)): mean and std (in j->var), then the affine map. */
static void gn_rows_chunk(void *ctx, int64_t r0, int64_t r1) {
  const norm_job *j = (const norm_job *)ctx;
  const norm_kernels *k = j->k;
  double *sd = j->var;
  row_moments(k, at(j->x, r0 * j->len, k->esize), r1 - r0, j->len, j->mean + r0, sd + r0);
  for (int64_t r = r0; r < r1; r++) {
    sd[r] = sqrt(sd[r] + j->eps);
    k->affine(at(j->x, r * j->len, k->esize), at_mut(j->y, r * j->len, k->esize), j->len, j->mean[r], 1.0 / sd[r],
              j->gam[r % j->G], j->beta[r % j->G]);
  }
}

/* Per (n, group) over the group's channels and spatial positions: mean, biased var,
 * std = sqrt(var + eps); y = (x - mean) / std * gamma[g] + beta[g]. */
static int gn_forward(const mxw_op_call *call) {
  const GroupNormParam *p = (const GroupNormParam *)call->param;
  const mxw_tensor *x = &call->inputs[0];
  mxw_tensor *y = &call->outputs[0];
  const int64_t G = p->num_groups, rows = x->shape.dims[0] * G;
  const int64_t len = rows > 0 ? mxw_tensor_size(x) / rows : 0;
  const double eps = (double)(float)p->eps;

  double *mean = scratch_doubles(2 * rows + 2 * G);
  if (!mean) return -1;
  double *sd = mean + rows, *g = sd + rows, *b = g + G;
  load_vec(&call->inputs[1], g);
  load_vec(&call->inputs[2], b);
  stage st;
  stage_init(&st, x->dtype);
  const norm_kernels *k = st.k;
  const void *xd = stage_in(&st, x);
  void *yd = xd ? stage_out(&st, y) : NULL;
  if (!yd) return stage_finish(&st, 0);
  norm_job j = {.k = k, .x = xd, .y = yd, .len = len, .G = G, .mean = mean, .var = sd, .gam = g, .beta = b, .eps = eps};
  mxw_parallel_run(rows, 1, 4.0 * pass_cost(k) * (double)len, gn_rows_chunk, &j);
  MXW_TRY(stage_finish(&st, 1));
  store_vec(mean, &call->outputs[1]);
  store_vec(sd, &call->outputs[2]);
  return 0;
}

static const mxw_op_def op_GroupNorm = {
    .name = "GroupNorm",
    .doc =
        MXW_DOC("y = (x - mean) / sqrt(var + eps) * gamma[g] + beta[g] with the moments per (sample, channel group)"),
    .attrs = k_gn_attrs,
    .num_attrs = (int)(sizeof k_gn_attrs / sizeof k_gn_attrs[0]),
    .param_size = sizeof(GroupNormParam),
    .validate = gn_validate,
    .num_inputs = 3,
    .input_names = k_data_gamma_beta,
    .num_outputs = 3,
    .num_visible_outputs_fn = gn_visible,
    .output_names = k_mean_std_outputs,
    .infer_shape = gn_infer_shape,
    .infer_type = infer_type_float,
    .half_as_f32 = 1,
    .forward = gn_forward,
    .gradient = grad_gn,
};

/* ==== L2Normalization ========================================================================= */
enum { L2_INSTANCE, L2_SPATIAL, L2_CHANNEL };
static const char *const k_l2_modes[] = {"instance", "spatial", "channel", NULL};
typedef struct {
  double eps;
  int mode;
} L2NormParam;

static const mxw_attr_spec k_l2_attrs[] = {
    MXW_A_FLOAT("eps", L2NormParam, eps, "1e-10", "added to the sum of squares inside the square root"),
    MXW_A_ENUM("mode", L2NormParam, mode, "instance", k_l2_modes,
               "instance: over all axes but 0; spatial: over axes >= 2; channel: over axis 1"),
};
static const char *const k_data[] = {"data", NULL};
static const char *const k_l2_outputs[] = {"output", "norm", NULL};

/* norm: instance (N,); spatial (N, C); channel = data's shape with dims[1] = 1. */
static int l2_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  (void)nout;
  const L2NormParam *p = (const L2NormParam *)param;
  mxw_shape *data = &in[0];
  MXW_TRY(same_shape(data, &out[0], "output"));
  if (data->ndim < 0) return 0;
  char s[128];
  if (data->ndim < 1) return mxw_fail("data has shape (), expected at least one dimension");
  if (p->mode != L2_INSTANCE && data->ndim < 3)
    return mxw_fail("data has shape %s, but mode '%s' needs at least 3 dimensions", mxw_shape_str(data, s, sizeof s),
                    k_l2_modes[p->mode]);
  if (p->mode == L2_INSTANCE) return unify_vec(&out[1], data->dims[0], "norm output", " = (N,)");
  if (p->mode == L2_SPATIAL) return unify2(&out[1], data->dims[0], data->dims[1], "norm output", " = (N, C)");
  mxw_shape norm = *data;
  norm.dims[1] = 1;
  return mxw_shape_unify(&out[1], &norm, "norm output", " (the data's shape with axis 1 set to 1)");
}

/* Rows [r0, r1) of len: norm = sqrt(Σ x² + eps) (in j->var), y = x / norm. */
static void l2_rows_chunk(void *ctx, int64_t r0, int64_t r1) {
  const norm_job *j = (const norm_job *)ctx;
  const norm_kernels *k = j->k;
  for (int64_t r = r0; r < r1; r++) {
    const void *row = at(j->x, r * j->len, k->esize);
    j->var[r] = sqrt(k->sqdev(row, j->len, 0.0) + j->eps);
    k->affine(row, at_mut(j->y, r * j->len, k->esize), j->len, 0.0, 1.0 / j->var[r], 1.0, 0.0);
  }
}

/* Channel mode, units of (outer slice, block of LN_COLS positions): the norm per position over
 * the channels (in j->var), then y = x / norm. */
static void l2_cols_chunk(void *ctx, int64_t u0, int64_t u1) {
  const norm_job *j = (const norm_job *)ctx;
  const norm_kernels *k = j->k;
  const axis_view v = j->v;
  const int64_t nb = (v.inner + LN_COLS - 1) / LN_COLS;
  for (int64_t u = u0; u < u1; u++) {
    const int64_t o = u / nb, i0 = (u % nb) * LN_COLS, w = v.inner - i0 < LN_COLS ? v.inner - i0 : LN_COLS;
    double *no = j->var + o * v.inner + i0, *io = j->inv + o * v.inner + i0;
    for (int64_t i = 0; i < w; i++) no[i] = 0.0;
    for (int64_t c = 0; c < v.n; c++) k->col_sqdev(no, at(j->x, (o * v.n + c) * v.inner + i0, k->esize), NULL, w);
    for (int64_t i = 0; i < w; i++) {
      no[i] = sqrt(no[i] + j->eps);
      io[i] = 1.0 / no[i];
    }
    for (int64_t c = 0; c < v.n; c++) {
      const int64_t off = (o * v.n + c) * v.inner + i0;
      k->col_affine(at(j->x, off, k->esize), at_mut(j->y, off, k->esize), w, NULL, io, j->gam, j->beta, 0);
    }
  }
}

/* y = x / sqrt(Σ x² + eps), the sum as the mode says; the norm output holds sqrt(Σ x² + eps). */
static int l2_forward(const mxw_op_call *call) {
  const L2NormParam *p = (const L2NormParam *)call->param;
  const mxw_tensor *x = &call->inputs[0];
  mxw_tensor *y = &call->outputs[0];
  const double eps = (double)(float)p->eps;
  const int64_t total = mxw_tensor_size(x), N = x->shape.dims[0];

  stage st;
  stage_init(&st, x->dtype);
  const norm_kernels *k = st.k;
  const void *xd = stage_in(&st, x);
  void *yd = xd ? stage_out(&st, y) : NULL;
  if (!yd) return stage_finish(&st, 0);

  norm_job j = {.k = k, .x = xd, .y = yd, .eps = eps};
  if (p->mode != L2_CHANNEL) { /* rows: (N, rest) or (N*C, spatial) */
    const int64_t rows = p->mode == L2_INSTANCE ? N : N * x->shape.dims[1];
    j.len = rows > 0 ? total / rows : 0;
    j.var = scratch_doubles(rows);
    if (!j.var) return stage_finish(&st, 0);
    mxw_parallel_run(rows, 1, 3.0 * pass_cost(k) * (double)j.len, l2_rows_chunk, &j);
    MXW_TRY(stage_finish(&st, 1));
    store_vec(j.var, &call->outputs[1]);
    return 0;
  }

  /* channel: over axis 1 of (N, C, rest), a row of a block of positions at a time */
  j.v = view_around(&x->shape, 1);
  const int64_t nstat = j.v.outer * j.v.inner;
  j.var = scratch_doubles(2 * nstat + 2);
  if (!j.var) return stage_finish(&st, 0);
  j.inv = j.var + nstat;
  j.gam = j.inv + nstat; /* 1 */
  j.beta = j.gam + 1;    /* 0 */
  j.gam[0] = 1.0;
  j.beta[0] = 0.0;
  const int64_t nb = (j.v.inner + LN_COLS - 1) / LN_COLS, w = j.v.inner < LN_COLS ? j.v.inner : LN_COLS;
  mxw_parallel_run(j.v.outer * nb, 1, 3.0 * pass_cost(k) * (double)(j.v.n * w), l2_cols_chunk, &j);
  MXW_TRY(stage_finish(&st, 1));
  store_vec(j.var, &call->outputs[1]);
  return 0;
}

static const mxw_op_def op_L2Normalization = {
    .name = "L2Normalization",
    .doc =
        MXW_DOC("y = x / sqrt(sum(x^2) + eps), the sum per instance, per (n, c) (spatial) or per position (channel)"),
    .attrs = k_l2_attrs,
    .num_attrs = 2,
    .param_size = sizeof(L2NormParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 2,
    .num_visible_outputs_fn = one_visible,
    .output_names = k_l2_outputs,
    .infer_shape = l2_infer_shape,
    .infer_type = infer_type_float,
    .half_as_f32 = 1,
    .forward = l2_forward,
    .gradient = grad_l2,
};

/* ==== LRN ===================================================================================== */
typedef struct {
  double alpha, beta, knorm;
  int64_t nsize;
} LRNParam;

static const mxw_attr_spec k_lrn_attrs[] = {
    MXW_A_FLOAT("alpha", LRNParam, alpha, "0.0001", "scale of the sum of squares (divided by nsize)"),
    MXW_A_FLOAT("beta", LRNParam, beta, "0.75", "exponent"),
    MXW_A_FLOAT("knorm", LRNParam, knorm, "2", "additive constant"),
    MXW_A_INT("nsize", LRNParam, nsize, NULL, "number of neighbouring channels summed (odd)"),
};
static const char *const k_lrn_outputs[] = {"output", "tmp_norm", NULL};

static int lrn_validate(void *param) {
  const LRNParam *p = (const LRNParam *)param;
  MXW_CHECK(p->nsize >= 1 && p->nsize % 2 == 1, "nsize must be a positive odd number, got %lld", (long long)p->nsize);
  return 0;
}

/* data (N, C, H, W) with nsize <= C; tmp_norm = data's shape. */
static int lrn_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  (void)nout;
  const LRNParam *p = (const LRNParam *)param;
  mxw_shape *data = &in[0];
  MXW_TRY(same_shape(data, &out[0], "output"));
  MXW_TRY(same_shape(data, &out[1], "tmp_norm output"));
  if (data->ndim < 0) return 0;
  char s[128];
  if (data->ndim != 4)
    return mxw_fail("data has shape %s, expected 4 dimensions (N, C, H, W)", mxw_shape_str(data, s, sizeof s));
  if (data->dims[1] >= 0 && p->nsize > data->dims[1])
    return mxw_fail("nsize = %lld is larger than the %lld channels of data %s", (long long)p->nsize,
                    (long long)data->dims[1], mxw_shape_str(data, s, sizeof s));
  return 0;
}

/* tmp_norm[c] = knorm + alpha / nsize * Σ_{|c' - c| <= nsize / 2} x[c']²; y = x * tmp_norm^-beta. */
typedef struct {
  const LRNParam *p;
  const norm_kernels *k;
  const void *x;
  void *y, *norm;
  int64_t C, HW;
  double salpha;
  atomic_int failed;
} lrn_job;

/* Planes (n, c) [u0, u1); the squares' sums in scratch slot 2 of the running thread. */
static void lrn_chunk(void *ctx, int64_t u0, int64_t u1) {
  lrn_job *j = (lrn_job *)ctx;
  const norm_kernels *k = j->k;
  const int64_t C = j->C, HW = j->HW, half = j->p->nsize / 2;
  double *sq = (double *)mxw_scratch(2, (size_t)(HW > 0 ? HW : 1) * sizeof(double));
  if (!sq) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t u = u0; u < u1; u++) {
    const int64_t n = u / C, c = u % C;
    for (int64_t i = 0; i < HW; i++) sq[i] = 0.0;
    const int64_t lo = c - half < 0 ? 0 : c - half, hi = c + half > C - 1 ? C - 1 : c + half;
    for (int64_t cc = lo; cc <= hi; cc++) k->col_sqdev(sq, at(j->x, (n * C + cc) * HW, k->esize), NULL, HW);
    const int64_t off = u * HW;
    k->lrn(at(j->x, off, k->esize), at_mut(j->y, off, k->esize), at_mut(j->norm, off, k->esize), sq, HW, j->p->knorm,
           j->salpha, j->p->beta);
  }
}

static int lrn_forward(const mxw_op_call *call) {
  const LRNParam *p = (const LRNParam *)call->param;
  const mxw_tensor *x = &call->inputs[0];
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1], HW = x->shape.dims[2] * x->shape.dims[3];
  /* float arithmetic as MXNet: salpha = alpha / nsize in float */
  const double salpha = (double)((float)p->alpha / (float)p->nsize);
  stage st;
  stage_init(&st, x->dtype);
  const norm_kernels *k = st.k;
  const void *xd = stage_in(&st, x);
  void *yd = xd ? stage_out(&st, &call->outputs[0]) : NULL;
  void *nd = yd ? stage_out(&st, &call->outputs[1]) : NULL;
  if (!nd) return stage_finish(&st, 0);
  lrn_job j = {p, k, xd, yd, nd, C, HW, salpha, 0};
  mxw_parallel_run(N * C, 1, (double)HW * (2.0 * (double)p->nsize + MXW_COST_MATH) * pass_cost(k), lrn_chunk, &j);
  return stage_finish(&st, !atomic_load(&j.failed));
}

static const mxw_op_def op_LRN = {
    .name = "LRN",
    .doc = MXW_DOC("local response normalization across channels: y = x * (knorm + alpha / nsize * sum of x^2 over "
                   "nsize neighbouring channels)^-beta"),
    .attrs = k_lrn_attrs,
    .num_attrs = 4,
    .param_size = sizeof(LRNParam),
    .validate = lrn_validate,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 2,
    .num_visible_outputs_fn = one_visible,
    .output_names = k_lrn_outputs,
    .infer_shape = lrn_infer_shape,
    .infer_type = infer_type_float,
    .half_as_f32 = 1,
    .forward = lrn_forward,
    .gradient = grad_lrn,
};

/* ==== gradients ================================================================================
 * Each op's FGradient is a _backward_<op> node (MXNet's names and inputs) whose kernel works in
 * the forward's compute type (float32, else float64 copies) with statistics in double. The data
 * gradients of the normalizations share one form per normalized group of m elements:
 *     dx = c * (g - a - (x - mean) * b),   a = Σ g / m,  b = Σ (x - mean) g * inv² / m,  c = gamma * inv
 * (inv = 1 / std; in BatchNorm inference a = b = 0: the statistics are constants), with
 * dgamma = Σ (x - mean) g * inv and dbeta = Σ g. */

/* Over a run of n: *sg += Σ g, *sxg += Σ (x - mean) g. */
static void gsums_f64(const void *xv, const void *gv, int64_t n, double mean, double *sg, double *sxg) {
  const double *x = (const double *)xv, *g = (const double *)gv;
  double a = 0.0, b = 0.0;
  for (int64_t i = 0; i < n; i++) {
    a += g[i];
    b += (x[i] - mean) * g[i];
  }
  *sg += a;
  *sxg += b;
}
static void gsums_f32(const void *xv, const void *gv, int64_t n, double mean, double *sg, double *sxg) {
  const float *x = (const float *)xv, *g = (const float *)gv;
  const float m = (float)mean;
  const v128_t vm = wasm_f32x4_splat(m);
  double ta = 0.0, tb = 0.0;
  for (int64_t start = 0; start < n; start += FLUSH) {
    const int64_t end = n - start > FLUSH ? start + FLUSH : n;
    v128_t a0 = wasm_f32x4_splat(0.f), b0 = a0;
    int64_t i = start;
    for (; i + 4 <= end; i += 4) {
      const v128_t gv4 = wasm_v128_load(g + i);
      a0 = wasm_f32x4_add(a0, gv4);
      b0 = wasm_f32x4_add(b0, wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(x + i), vm), gv4));
    }
    double pa = lanes_sum(a0), pb = lanes_sum(b0);
    for (; i < end; i++) {
      pa += g[i];
      pb += (double)((x[i] - m) * g[i]);
    }
    ta += pa;
    tb += pb;
  }
  *sg += ta;
  *sxg += tb;
}
/* dx = c * (g - a - (x - mean) * b) over a run of n. */
static void gapply_f64(const void *xv, const void *gv, void *dxv, int64_t n, double mean, double a, double b,
                       double c) {
  const double *x = (const double *)xv, *g = (const double *)gv;
  double *dx = (double *)dxv;
  for (int64_t i = 0; i < n; i++) dx[i] = c * (g[i] - a - (x[i] - mean) * b);
}
static void gapply_f32(const void *xv, const void *gv, void *dxv, int64_t n, double mean, double a, double b,
                       double c) {
  const float *x = (const float *)xv, *g = (const float *)gv;
  float *dx = (float *)dxv;
  const float m = (float)mean, fa = (float)a, fb = (float)b, fc = (float)c;
  const v128_t vm = wasm_f32x4_splat(m), va = wasm_f32x4_splat(fa), vb = wasm_f32x4_splat(fb),
               vc = wasm_f32x4_splat(fc);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t xm = wasm_f32x4_sub(wasm_v128_load(x + i), vm);
    const v128_t t = wasm_f32x4_sub(wasm_f32x4_sub(wasm_v128_load(g + i), va), wasm_f32x4_mul(xm, vb));
    wasm_v128_store(dx + i, wasm_f32x4_mul(vc, t));
  }
  for (; i < n; i++) dx[i] = fc * (g[i] - fa - (x[i] - m) * fb);
}
typedef struct {
  void (*sums)(const void *x, const void *g, int64_t n, double mean, double *sg, double *sxg);
  void (*apply)(const void *x, const void *g, void *dx, int64_t n, double mean, double a, double b, double c);
} grad_kernels;
static const grad_kernels k_grad_f32 = {gsums_f32, gapply_f32}, k_grad_f64 = {gsums_f64, gapply_f64};
static const grad_kernels *grad_k(const norm_kernels *k) { return k->dtype == MXW_FLOAT32 ? &k_grad_f32 : &k_grad_f64; }

/* One element of a compute-type buffer (float32 or float64) as a double, and back. */
static inline double ldc(const norm_kernels *k, const void *p, int64_t i) {
  return k->dtype == MXW_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}
static inline void stc(const norm_kernels *k, void *p, int64_t i, double v) {
  if (k->dtype == MXW_FLOAT32)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

/* ---- BatchNorm / BatchNormWithReLU: _backward_BatchNorm(ograd, mean, var, data, gamma, beta, moving_mean,
 * moving_var[, workspace]) -> (data, gamma, beta) gradients. In training (is_train and not
 * use_global_stats, as MXNet decides at backward time) through the batch statistics saved by the
 * forward (mean and invstd on the hidden outputs); otherwise with the moving statistics as
 * constants. The moving statistics get no gradient and are not updated here (the forward did). With
 * ReLU the output gradient is first masked by the workspace (1 where the output was positive). */
/* g * mask (BatchNormWithReLU's workspace t0) into y, elements [b, e). */
static void bn_mask_chunk(void *ctx, int64_t b, int64_t e) {
  const norm_job *j = (const norm_job *)ctx;
  for (int64_t i = b; i < e; i++)
    stc(j->k, j->y, i, mxw_load_f64(j->t0->data, j->t0->dtype, i) > 0 ? ldc(j->k, j->g, i) : 0.0);
}

/* Channels [c0, c1): sa = Σ g, sb = Σ (x - mean) g over the batch, in batch order. */
static void bn_sums_chunk(void *ctx, int64_t c0, int64_t c1) {
  const norm_job *j = (const norm_job *)ctx;
  const norm_kernels *k = j->k;
  const grad_kernels *gk = grad_k(k);
  const int64_t C = j->v.n, inner = j->v.inner;
  for (int64_t c = c0; c < c1; c++) j->sa[c] = j->sb[c] = 0.0;
  for (int64_t o = 0; o < j->v.outer; o++) {
    if (inner == 1) { /* channels last: a row of C channels */
      for (int64_t c = c0; c < c1; c++) {
        const double gv = ldc(k, j->g, o * C + c);
        j->sa[c] += gv;
        j->sb[c] += (ldc(k, j->x, o * C + c) - j->mean[c]) * gv;
      }
    } else {
      for (int64_t c = c0; c < c1; c++) {
        const int64_t off = (o * C + c) * inner;
        gk->sums(at(j->x, off, k->esize), at(j->g, off, k->esize), inner, j->mean[c], &j->sa[c], &j->sb[c]);
      }
    }
  }
}

/* Units [u0, u1) of dx = cc * (g - ca - (x - mean) * cb): rows of C channels (inner == 1) or
 * (outer, channel) runs of inner. */
static void bn_apply_chunk(void *ctx, int64_t u0, int64_t u1) {
  const norm_job *j = (const norm_job *)ctx;
  const norm_kernels *k = j->k;
  const grad_kernels *gk = grad_k(k);
  const int64_t C = j->v.n, inner = j->v.inner;
  for (int64_t u = u0; u < u1; u++) {
    if (inner == 1) {
      for (int64_t c = 0; c < C; c++) {
        const int64_t i = u * C + c;
        stc(k, j->y, i, j->cc[c] * (ldc(k, j->g, i) - j->ca[c] - (ldc(k, j->x, i) - j->mean[c]) * j->cb[c]));
      }
    } else {
      const int64_t c = u % C, off = u * inner;
      gk->apply(at(j->x, off, k->esize), at(j->g, off, k->esize), at_mut(j->y, off, k->esize), inner, j->mean[c],
                j->ca[c], j->cb[c], j->cc[c]);
    }
  }
}

static int bn_backward_common(const mxw_op_call *call, int with_relu) {
  const BatchNormParam *p = (const BatchNormParam *)call->param;
  const mxw_tensor *og = &call->inputs[0], *x = &call->inputs[3];
  mxw_tensor *dx = &call->outputs[0];
  int axis;
  MXW_TRY(data_axis(p->axis, &x->shape, &axis));
  const axis_view v = view_around(&x->shape, axis);
  const int64_t C = v.n, m = v.outer * v.inner, total = mxw_tensor_size(x);
  const int training = call->is_train && !p->use_global_stats;
  double *mean = scratch_doubles(7 * C);
  if (!mean) return -1;
  double *inv = mean + C, *w = inv + C, *sg = w + C, *sxg = sg + C, *dg = sxg + C, *db = dg + C;
  if (training) {
    load_vec(&call->inputs[1], mean);
    load_vec(&call->inputs[2], inv);
  } else {
    load_vec(&call->inputs[6], mean);
    load_vec(&call->inputs[7], inv);
    for (int64_t c = 0; c < C; c++) inv[c] = 1.0 / sqrt(inv[c] + p->eps);
  }
  if (p->fix_gamma) {
    for (int64_t c = 0; c < C; c++) w[c] = 1.0;
  } else {
    load_vec(&call->inputs[4], w);
  }

  stage st;
  stage_init(&st, x->dtype);
  const norm_kernels *k = st.k;
  const void *xd = stage_in(&st, x);
  const void *gd = xd ? stage_in(&st, og) : NULL;
  void *dxd = gd ? stage_out(&st, dx) : NULL;
  if (!dxd) return stage_finish(&st, 0);
  norm_job j = {.k = k, .x = xd, .g = gd, .y = dxd, .v = v, .mean = mean, .inv = inv, .sa = sg, .sb = sxg};
  const double pc = pass_cost(k) * (k->dtype == MXW_FLOAT32 && v.inner > 1 ? 1.0 : 2.0); /* ldc/stc loops */
  if (with_relu) { /* g * mask, computed into dx's buffer (each element is read before it is written) */
    j.t0 = &call->inputs[8];
    mxw_parallel_run(total, 16, 4.0, bn_mask_chunk, &j);
    j.g = gd = dxd;
  }
  mxw_parallel_run(C, v.inner == 1 ? 16 : 1, 2.0 * pc * (double)m, bn_sums_chunk, &j);
  /* per channel: a, b, c of the common form, kept in dg (a), db (b), w (c) until the end */
  double *ca = dg, *cb = db, *cc = w;
  for (int64_t c = 0; c < C; c++) {
    const double wc = w[c];
    ca[c] = training && m > 0 ? sg[c] / (double)m : 0.0;
    cb[c] = training && m > 0 ? sxg[c] * inv[c] * inv[c] / (double)m : 0.0;
    cc[c] = inv[c] * wc;
  }
  j.ca = ca;
  j.cb = cb;
  j.cc = cc;
  const int64_t units = v.inner == 1 ? v.outer : v.outer * C, per = v.inner == 1 ? C : v.inner;
  mxw_parallel_run(units, 1, 3.0 * pc * (double)per, bn_apply_chunk, &j);
  MXW_TRY(stage_finish(&st, 1));
  for (int64_t c = 0; c < C; c++) {
    dg[c] = p->fix_gamma ? 0.0 : sxg[c] * inv[c];
    db[c] = sg[c];
  }
  store_vec(dg, &call->outputs[1]);
  store_vec(db, &call->outputs[2]);
  return 0;
}
static int bn_backward(const mxw_op_call *call) { return bn_backward_common(call, 0); }
static int bn_relu_backward(const mxw_op_call *call) { return bn_backward_common(call, 1); }

/* data gradient = data's shape and dtype; gamma / beta gradients = gamma's. */
static int bn_backward_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  MXW_TRY(mxw_shape_assign(&out[0], &in[3], "data gradient"));
  MXW_TRY(mxw_shape_assign(&out[1], &in[4], "gamma gradient"));
  return mxw_shape_assign(&out[2], &in[4], "beta gradient");
}
static int bn_backward_infer_type(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)nout;
  out[0] = in[3];
  out[1] = out[2] = in[4];
  return 0;
}

/* ---- differentiable gradients (autograd.grad with create_graph) ----------------------------------
 * The fused _backward_BatchNorm / _backward_LayerNorm / _backward_InstanceNorm kernels have no
 * gradient of their own. When the gradient graph is built to be differentiated again
 * (MXW_GRAD_DIFFERENTIABLE) these ops build their gradients from differentiable registered ops
 * instead, recomputing the statistics from the data (their saved mean and std outputs are not
 * functions of the data on the tape):
 *   mu = mean(x), xc = x - mu, r = rsqrt(mean(xc^2) + eps), xh = xc r     (over the statistics axes)
 *   gh = G gamma,  dx = r (gh - mean(gh) - xh mean(gh xh)),  dgamma = sum(G xh),  dbeta = sum(G)
 * (the sums over every axis but the channel axis); with the moving statistics (BatchNorm in
 * predict mode or use_global_stats) xh = (x - moving_mean) r with r = rsqrt(moving_var + eps),
 * and dx = gh r. fix_gamma: gamma is 1 and gets no gradient. A second backward then
 * differentiates these ops (second order and on). */
typedef struct {
  const char *stats_axes; /* "(a, ...)" for mean over the statistics axes */
  int stats_exclude;      /* the statistics axes are every axis but those */
  int caxis;              /* gamma's axis in the data */
  double eps;
  int fix_gamma, moving; /* moving: normalize with inputs 3 and 4 (moving_mean, moving_var) */
  int64_t groups;        /* GroupNorm: the data seen as (N, groups, rest), gamma per group */
} norm_grad_spec;

/* (not inlined: the three callers share one copy, outside the first part of the split module) */
__attribute__((noinline)) static int norm_grad_differentiable(mxw_grad_ctx *g, const norm_grad_spec *s) {
  const mxw_shape *gs = mxw_grad_in_shape(g, 1);
  char bshape[MXW_MAX_NDIM * 24 + 8], gshape[MXW_MAX_NDIM * 24 + 8], dshape[MXW_MAX_NDIM * 24 + 8], view[80], caxis[24],
      eps[40];
  mxw_gid x = mxw_grad_in(g, 0), G = mxw_grad_ograd(g, 0);
  const mxw_shape *xs = mxw_grad_in_shape(g, 0);
  mxw_shape_attr(xs, dshape, sizeof dshape);
  mxw_shape grouped;
  if (s->groups > 0) {
    grouped =
        mxw_shape_make(3, (const int64_t[]){xs->dims[0], s->groups, mxw_shape_size(xs) / xs->dims[0] / s->groups});
    snprintf(view, sizeof view, "(0, %lld, -1)", (long long)s->groups);
    x = mxw_grad_op(g, "Reshape", MXW_KV("shape", view), MXW_GIDS(x));
    G = mxw_grad_op(g, "Reshape", MXW_KV("shape", view), MXW_GIDS(G));
    xs = &grouped;
  }
  int64_t dims[MXW_MAX_NDIM];
  for (int i = 0; i < xs->ndim; i++) dims[i] = i == s->caxis ? xs->dims[i] : 1;
  const mxw_shape b = mxw_shape_make(xs->ndim, dims);
  mxw_shape_attr(&b, bshape, sizeof bshape);
  mxw_shape_attr(gs, gshape, sizeof gshape);
  snprintf(caxis, sizeof caxis, "%d", s->caxis);
  snprintf(eps, sizeof eps, "%.17g", s->eps);
  const char *const *stats =
      MXW_KV("axis", s->stats_axes, "keepdims", "True", "exclude", s->stats_exclude ? "True" : "False");
  const char *const *per_channel = MXW_KV("axis", caxis, "exclude", "True");
  const mxw_gid gh =
      s->fix_gamma
          ? G
          : mxw_grad_op(g, "broadcast_mul", NULL,
                        MXW_GIDS(G, mxw_grad_op(g, "Reshape", MXW_KV("shape", bshape), MXW_GIDS(mxw_grad_in(g, 1)))));
  mxw_gid r, xh, dx;
  if (s->moving) {
    const mxw_gid mm = mxw_grad_op(g, "Reshape", MXW_KV("shape", bshape), MXW_GIDS(mxw_grad_in(g, 3)));
    const mxw_gid mv = mxw_grad_op(g, "Reshape", MXW_KV("shape", bshape), MXW_GIDS(mxw_grad_in(g, 4)));
    r = mxw_grad_op(g, "rsqrt", NULL, MXW_GIDS(mxw_grad_op(g, "_plus_scalar", MXW_KV("scalar", eps), MXW_GIDS(mv))));
    xh = mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(mxw_grad_op(g, "broadcast_sub", NULL, MXW_GIDS(x, mm)), r));
    dx = mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(gh, r));
  } else {
    const mxw_gid xc = mxw_grad_op(g, "broadcast_sub", NULL, MXW_GIDS(x, mxw_grad_op(g, "mean", stats, MXW_GIDS(x))));
    const mxw_gid var = mxw_grad_op(g, "mean", stats, MXW_GIDS(mxw_grad_op(g, "square", NULL, MXW_GIDS(xc))));
    r = mxw_grad_op(g, "rsqrt", NULL, MXW_GIDS(mxw_grad_op(g, "_plus_scalar", MXW_KV("scalar", eps), MXW_GIDS(var))));
    xh = mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(xc, r));
    const mxw_gid m1 = mxw_grad_op(g, "mean", stats, MXW_GIDS(gh));
    const mxw_gid m2 = mxw_grad_op(g, "mean", stats, MXW_GIDS(mxw_grad_mul(g, gh, xh)));
    const mxw_gid t = mxw_grad_op(g, "broadcast_sub", NULL,
                                  MXW_GIDS(mxw_grad_op(g, "broadcast_sub", NULL, MXW_GIDS(gh, m1)),
                                           mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(xh, m2))));
    dx = mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(t, r));
  }
  if (s->groups > 0) dx = mxw_grad_op(g, "Reshape", MXW_KV("shape", dshape), MXW_GIDS(dx));
  MXW_TRY(mxw_grad_set(g, 0, dx));
  if (!s->fix_gamma) {
    const mxw_gid dg = mxw_grad_op(g, "sum", per_channel, MXW_GIDS(mxw_grad_mul(g, G, xh)));
    MXW_TRY(mxw_grad_set(g, 1, mxw_grad_op(g, "Reshape", MXW_KV("shape", gshape), MXW_GIDS(dg))));
  }
  const mxw_gid db = mxw_grad_op(g, "sum", per_channel, MXW_GIDS(G));
  return mxw_grad_set(g, 2, mxw_grad_op(g, "Reshape", MXW_KV("shape", gshape), MXW_GIDS(db)));
}

static int grad_bn_common(mxw_grad_ctx *g, int with_relu) {
  if (!with_relu && (mxw_grad_flags(g) & MXW_GRAD_DIFFERENTIABLE)) {
    const BatchNormParam *p = (const BatchNormParam *)mxw_grad_param(g);
    int axis;
    MXW_TRY(data_axis(p->axis, mxw_grad_in_shape(g, 0), &axis));
    char a[24];
    snprintf(a, sizeof a, "%d", axis);
    const norm_grad_spec s = {.stats_axes = a,
                              .stats_exclude = 1,
                              .caxis = axis,
                              .eps = p->eps,
                              .fix_gamma = p->fix_gamma,
                              .moving = p->use_global_stats || !(mxw_grad_flags(g) & MXW_GRAD_TRAIN)};
    return norm_grad_differentiable(g, &s);
  }
  mxw_gid ins[9] = {mxw_grad_ograd(g, 0), mxw_grad_out(g, 1), mxw_grad_out(g, 2),
                    mxw_grad_in(g, 0),    mxw_grad_in(g, 1),  mxw_grad_in(g, 2),
                    mxw_grad_in(g, 3),    mxw_grad_in(g, 4),  with_relu ? mxw_grad_out(g, 3) : 0};
  mxw_gid out[3];
  MXW_TRY(mxw_grad_op_fwd(g, with_relu ? "_backward_contrib_BatchNormWithReLU" : "_backward_BatchNorm", ins,
                          with_relu ? 9 : 8, out, 3));
  for (int i = 0; i < 3; i++) MXW_TRY(mxw_grad_set(g, i, out[i])); /* none for the moving statistics */
  return 0;
}
static int grad_bn(mxw_grad_ctx *g) { return grad_bn_common(g, 0); }
static int grad_bn_relu(mxw_grad_ctx *g) { return grad_bn_common(g, 1); }

static const char *const k_bn_backward_inputs[] = {"ograd", "mean",        "var",        "data",      "gamma",
                                                   "beta",  "moving_mean", "moving_var", "workspace", NULL};
static const char *const k_grad3_outputs[] = {"data_grad", "gamma_grad", "beta_grad", NULL};

static const mxw_op_def op_backward_BatchNorm = {
    .name = "_backward_BatchNorm",
    .doc = MXW_DOC("the gradients of BatchNorm's data, gamma and beta"),
    .attrs = k_bn_attrs,
    .num_attrs = (int)(sizeof k_bn_attrs / sizeof k_bn_attrs[0]),
    .param_size = sizeof(BatchNormParam),
    .num_inputs = 8,
    .input_names = k_bn_backward_inputs,
    .num_outputs = 3,
    .output_names = k_grad3_outputs,
    .infer_shape = bn_backward_infer_shape,
    .infer_type = bn_backward_infer_type,
    .half_as_f32 = 1,
    .forward = bn_backward,
};
static const mxw_op_def op_backward_BatchNormWithReLU = {
    .name = "_backward_contrib_BatchNormWithReLU",
    .doc =
        MXW_DOC("the gradients of _contrib_BatchNormWithReLU's data, gamma and beta (ograd masked by the workspace)"),
    .attrs = k_bn_attrs,
    .num_attrs = (int)(sizeof k_bn_attrs / sizeof k_bn_attrs[0]),
    .param_size = sizeof(BatchNormParam),
    .num_inputs = 9,
    .input_names = k_bn_backward_inputs,
    .num_outputs = 3,
    .output_names = k_grad3_outputs,
    .infer_shape = bn_backward_infer_shape,
    .infer_type = bn_backward_infer_type,
    .half_as_f32 = 1,
    .forward = bn_relu_backward,
};

/* ---- LayerNorm: _backward_LayerNorm(ograd, data, gamma, mean, std) -> (data, gamma, beta) gradients.
 * Per normalized vector (m = data.shape[axis] elements, gamma per element):
 *   gg = g * gamma, dx = inv * (gg - Σ gg / m - (x - mean) * inv² * Σ (x - mean) gg / m),
 *   dgamma += g * (x - mean) * inv, dbeta += g. */
/* The last axis in float32 (rows of n): SIMD over each row; the gamma/beta gradients gather in float
 * vectors over blocks of FLUSH_ROWS rows and then in double (dg, db), block after block. The blocks
 * are the same for any thread count: they run in parallel, each into its own float partials, which
 * are then added to dg and db in block order. */
enum { FLUSH_ROWS = 64 };
typedef struct {
  const float *x, *g, *gm; /* gm: gamma as float */
  float *dx, *part;        /* part: per block, ag (n) then ab (n) */
  int64_t rows, n;
  const double *mean, *inv;
} ln_rows_job;

static void ln_rows_block_chunk(void *ctx, int64_t b0, int64_t b1) {
  const ln_rows_job *J = (const ln_rows_job *)ctx;
  const int64_t n = J->n, n4 = n & ~(int64_t)3;
  const float *gm = J->gm;
  for (int64_t blk = b0; blk < b1; blk++) {
    float *ag = J->part + 2 * blk * n, *ab = ag + n;
    for (int64_t j = 0; j < n; j++) ag[j] = ab[j] = 0.f;
    const int64_t r1 = (blk + 1) * FLUSH_ROWS < J->rows ? (blk + 1) * FLUSH_ROWS : J->rows;
    for (int64_t o = blk * FLUSH_ROWS; o < r1; o++) {
      const float *xr = J->x + o * n, *gr = J->g + o * n;
      float *dr = J->dx + o * n;
      const float m = (float)J->mean[o], iv = (float)J->inv[o];
      const v128_t vm = wasm_f32x4_splat(m), vi = wasm_f32x4_splat(iv);
      v128_t sa = wasm_f32x4_splat(0.f), sb = sa;
      for (int64_t j = 0; j < n4; j += 4) {
        const v128_t gv = wasm_v128_load(gr + j), xm = wasm_f32x4_sub(wasm_v128_load(xr + j), vm);
        const v128_t t = wasm_f32x4_mul(gv, wasm_v128_load(gm + j));
        sa = wasm_f32x4_add(sa, t);
        sb = wasm_f32x4_add(sb, wasm_f32x4_mul(xm, t));
        wasm_v128_store(ag + j, wasm_f32x4_add(wasm_v128_load(ag + j), wasm_f32x4_mul(gv, wasm_f32x4_mul(xm, vi))));
        wasm_v128_store(ab + j, wasm_f32x4_add(wasm_v128_load(ab + j), gv));
      }
      double da = lanes_sum(sa), dbb = lanes_sum(sb);
      for (int64_t j = n4; j < n; j++) {
        const float xm = xr[j] - m, t = gr[j] * gm[j];
        da += t;
        dbb += (double)(xm * t);
        ag[j] += gr[j] * (xm * iv);
        ab[j] += gr[j];
      }
      const float a = (float)(da / (double)n), b = (float)(dbb * J->inv[o] * J->inv[o] / (double)n);
      const v128_t va = wasm_f32x4_splat(a), vb = wasm_f32x4_splat(b);
      for (int64_t j = 0; j < n4; j += 4) {
        const v128_t xm = wasm_f32x4_sub(wasm_v128_load(xr + j), vm);
        const v128_t t = wasm_f32x4_mul(wasm_v128_load(gr + j), wasm_v128_load(gm + j));
        wasm_v128_store(dr + j, wasm_f32x4_mul(vi, wasm_f32x4_sub(wasm_f32x4_sub(t, va), wasm_f32x4_mul(xm, vb))));
      }
      for (int64_t j = n4; j < n; j++) dr[j] = iv * (gr[j] * gm[j] - a - (xr[j] - m) * b);
    }
  }
}

/* Scratch slot 1: gamma as float and the blocks' partials. */
static int ln_backward_rows_f32(const float *x, const float *g, float *dx, int64_t rows, int64_t n, const double *mean,
                                const double *inv, const double *gam, double *dg, double *db) {
  const int64_t blocks = (rows + FLUSH_ROWS - 1) / FLUSH_ROWS;
  float *gm = (float *)mxw_scratch(1, (size_t)((1 + 2 * blocks) * n + 4) * sizeof(float));
  if (!gm) return -1;
  for (int64_t j = 0; j < n; j++) gm[j] = (float)gam[j];
  ln_rows_job J = {x, g, gm, dx, gm + n, rows, n, mean, inv};
  mxw_parallel_run(blocks, 1, 8.0 * (double)(FLUSH_ROWS * n), ln_rows_block_chunk, &J);
  for (int64_t blk = 0; blk < blocks; blk++) {
    const float *ag = J.part + 2 * blk * n, *ab = ag + n;
    for (int64_t j = 0; j < n; j++) {
      dg[j] += ag[j];
      db[j] += ab[j];
    }
  }
  return 0;
}

/* Any other case (an inner axis, or float64): units of (outer slice, block of LN_COLS positions)
 * compute sa = Σ g gamma and sb = Σ (x - mean) g gamma per position and the data gradient;
 * then units of gamma entries sum dgamma and dbeta over (outer, position) in that order. */
static void ln_grad_cols_chunk(void *ctx, int64_t u0, int64_t u1) {
  const norm_job *J = (const norm_job *)ctx;
  const norm_kernels *k = J->k;
  const axis_view v = J->v;
  const int64_t n = v.n, nb = (v.inner + LN_COLS - 1) / LN_COLS;
  for (int64_t u = u0; u < u1; u++) {
    const int64_t o = u / nb, i0 = (u % nb) * LN_COLS, i1 = v.inner - i0 < LN_COLS ? v.inner : i0 + LN_COLS;
    const double *mo = J->mean + o * v.inner, *io = J->inv + o * v.inner;
    double *sa = J->sa + o * v.inner, *sb = J->sb + o * v.inner;
    for (int64_t i = i0; i < i1; i++) sa[i] = sb[i] = 0.0;
    for (int64_t j = 0; j < n; j++) {
      const int64_t off = (o * n + j) * v.inner;
      for (int64_t i = i0; i < i1; i++) {
        const double gg = ldc(k, J->g, off + i) * J->gam[j];
        sa[i] += gg;
        sb[i] += (ldc(k, J->x, off + i) - mo[i]) * gg;
      }
    }
    for (int64_t j = 0; j < n; j++) {
      const int64_t off = (o * n + j) * v.inner;
      for (int64_t i = i0; i < i1; i++) {
        const double gg = ldc(k, J->g, off + i) * J->gam[j], xm = ldc(k, J->x, off + i) - mo[i];
        stc(k, J->y, off + i, io[i] * (gg - sa[i] / (double)n - xm * io[i] * io[i] * sb[i] / (double)n));
      }
    }
  }
}

static void ln_grad_gamma_chunk(void *ctx, int64_t j0, int64_t j1) {
  const norm_job *J = (const norm_job *)ctx;
  const norm_kernels *k = J->k;
  const axis_view v = J->v;
  for (int64_t j = j0; j < j1; j++) {
    double dg = 0.0, db = 0.0;
    for (int64_t o = 0; o < v.outer; o++) {
      const double *mo = J->mean + o * v.inner, *io = J->inv + o * v.inner;
      const int64_t off = (o * v.n + j) * v.inner;
      for (int64_t i = 0; i < v.inner; i++) {
        const double gv = ldc(k, J->g, off + i), xm = ldc(k, J->x, off + i) - mo[i];
        dg += gv * xm * io[i];
        db += gv;
      }
    }
    J->ca[j] = dg;
    J->cb[j] = db;
  }
}

static int ln_backward(const mxw_op_call *call) {
  const LayerNormParam *p = (const LayerNormParam *)call->param;
  const mxw_tensor *og = &call->inputs[0], *x = &call->inputs[1];
  int axis;
  MXW_TRY(data_axis(p->axis, &x->shape, &axis));
  const axis_view v = view_around(&x->shape, axis);
  const int64_t n = v.n, nstat = v.outer * v.inner;
  double *mean = scratch_doubles(4 * nstat + 3 * n);
  if (!mean) return -1;
  double *inv = mean + nstat, *gam = inv + nstat, *dg = gam + n, *db = dg + n, *sa = db + n, *sb = sa + nstat;
  load_vec(&call->inputs[3], mean);
  load_vec(&call->inputs[4], inv);
  for (int64_t i = 0; i < nstat; i++) inv[i] = 1.0 / inv[i];
  load_vec(&call->inputs[2], gam);
  for (int64_t j = 0; j < n; j++) dg[j] = db[j] = 0.0;
  stage st;
  stage_init(&st, x->dtype);
  const norm_kernels *k = st.k;
  const void *xd = stage_in(&st, x);
  const void *gd = xd ? stage_in(&st, og) : NULL;
  void *dxd = gd ? stage_out(&st, &call->outputs[0]) : NULL;
  if (!dxd) return stage_finish(&st, 0);
  if (v.inner == 1 && k->dtype == MXW_FLOAT32) {
    MXW_TRY(
        ln_backward_rows_f32((const float *)xd, (const float *)gd, (float *)dxd, v.outer, n, mean, inv, gam, dg, db));
    MXW_TRY(stage_finish(&st, 1));
    store_vec(dg, &call->outputs[1]);
    store_vec(db, &call->outputs[2]);
    return 0;
  }
  norm_job j = {.k = k,
                .x = xd,
                .g = gd,
                .y = dxd,
                .v = v,
                .mean = mean,
                .inv = inv,
                .gam = gam,
                .sa = sa,
                .sb = sb,
                .ca = dg,
                .cb = db};
  const int64_t nb = (v.inner + LN_COLS - 1) / LN_COLS, w = v.inner < LN_COLS ? v.inner : LN_COLS;
  mxw_parallel_run(v.outer * nb, 1, 8.0 * pass_cost(k) * (double)(n * w), ln_grad_cols_chunk, &j);
  mxw_parallel_run(n, 1, 4.0 * pass_cost(k) * (double)nstat, ln_grad_gamma_chunk, &j);
  MXW_TRY(stage_finish(&st, 1));
  store_vec(dg, &call->outputs[1]);
  store_vec(db, &call->outputs[2]);
  return 0;
}

/* data gradient = data's shape; gamma and beta gradients = gamma's (inputs 1 and 2 in every
 * _backward_ op below that has them). */
static int grad3_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  MXW_TRY(mxw_shape_assign(&out[0], &in[1], "data gradient"));
  MXW_TRY(mxw_shape_assign(&out[1], &in[2], "gamma gradient"));
  return mxw_shape_assign(&out[2], &in[2], "beta gradient");
}

/* A _backward_<op>(ograd, data, gamma, out1, out2) node for a data/gamma/beta op. */
static int grad_norm3(mxw_grad_ctx *g, const char *op) {
  mxw_gid out[3];
  MXW_TRY(mxw_grad_op_fwd(
      g, op,
      MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1), mxw_grad_out(g, 1), mxw_grad_out(g, 2)), out,
      3));
  for (int i = 0; i < 3; i++) MXW_TRY(mxw_grad_set(g, i, out[i]));
  return 0;
}
static int grad_ln(mxw_grad_ctx *g) {
  if (mxw_grad_flags(g) & MXW_GRAD_DIFFERENTIABLE) {
    const LayerNormParam *p = (const LayerNormParam *)mxw_grad_param(g);
    int axis;
    MXW_TRY(data_axis(p->axis, mxw_grad_in_shape(g, 0), &axis));
    char a[24];
    snprintf(a, sizeof a, "%d", axis);
    const norm_grad_spec s = {.stats_axes = a, .caxis = axis, .eps = p->eps};
    return norm_grad_differentiable(g, &s);
  }
  return grad_norm3(g, "_backward_LayerNorm");
}
static int grad_in(mxw_grad_ctx *g) {
  if (mxw_grad_flags(g) & MXW_GRAD_DIFFERENTIABLE) {
    const norm_grad_spec s = {.stats_axes = "(0, 1)",
                              .stats_exclude = 1,
                              .caxis = 1,
                              .eps = ((const InstanceNormParam *)mxw_grad_param(g))->eps};
    return norm_grad_differentiable(g, &s);
  }
  return grad_norm3(g, "_backward_InstanceNorm");
}
static int grad_gn(mxw_grad_ctx *g) {
  if (mxw_grad_flags(g) & MXW_GRAD_DIFFERENTIABLE) {
    const GroupNormParam *p = (const GroupNormParam *)mxw_grad_param(g);
    const norm_grad_spec s = {.stats_axes = "(2,)", .caxis = 1, .eps = p->eps, .groups = p->num_groups};
    return norm_grad_differentiable(g, &s);
  }
  return grad_norm3(g, "_backward_GroupNorm");
}

static const char *const k_ln_backward_inputs[] = {"ograd", "data", "gamma", "mean", "std", NULL};
static const char *const k_in_backward_inputs[] = {"ograd", "data", "gamma", "mean", "var", NULL};

static const mxw_op_def op_backward_LayerNorm = {
    .name = "_backward_LayerNorm",
    .doc = MXW_DOC("the gradients of LayerNorm's data, gamma and beta"),
    .attrs = k_ln_attrs,
    .num_attrs = (int)(sizeof k_ln_attrs / sizeof k_ln_attrs[0]),
    .param_size = sizeof(LayerNormParam),
    .num_inputs = 5,
    .input_names = k_ln_backward_inputs,
    .num_outputs = 3,
    .output_names = k_grad3_outputs,
    .infer_shape = grad3_infer_shape,
    .infer_type = infer_type_float,
    .half_as_f32 = 1,
    .forward = ln_backward,
};

/* ---- InstanceNorm / GroupNorm: rows of the data (one per (n, c) / (n, group)), a gamma per
 * channel / per group; InstanceNorm saved the variance, GroupNorm the std. */
/* rows (n, c) or (n, group) of the data; gamma index = row % G; stat_is_var: input 4 holds the
 * variance (InstanceNorm, std = sqrt(var + eps)), else the std (GroupNorm). */
/* Rows [r0, r1): sa[r] = Σ g, sb[r] = Σ (x - mean) g, and the row's data gradient. */
static void rows_grad_chunk(void *ctx, int64_t r0, int64_t r1) {
  const norm_job *J = (const norm_job *)ctx;
  const norm_kernels *k = J->k;
  const grad_kernels *gk = grad_k(k);
  const int64_t len = J->len;
  for (int64_t r = r0; r < r1; r++) {
    const int64_t c = r % J->G;
    double sg = 0.0, sxg = 0.0;
    const void *xr = at(J->x, r * len, k->esize), *gr = at(J->g, r * len, k->esize);
    gk->sums(xr, gr, len, J->mean[r], &sg, &sxg);
    J->sa[r] = sg;
    J->sb[r] = sxg;
    gk->apply(xr, gr, at_mut(J->y, r * len, k->esize), len, J->mean[r], len > 0 ? sg / (double)len : 0.0,
              len > 0 ? sxg * J->inv[r] * J->inv[r] / (double)len : 0.0, J->gam[c] * J->inv[r]);
  }
}

static int rows_backward(const mxw_op_call *call, int64_t rows, int64_t G, int stat_is_var, double eps) {
  const mxw_tensor *og = &call->inputs[0], *x = &call->inputs[1];
  const int64_t len = rows > 0 ? mxw_tensor_size(x) / rows : 0;
  double *mean = scratch_doubles(4 * rows + 3 * G);
  if (!mean) return -1;
  double *inv = mean + rows, *gam = inv + rows, *dg = gam + G, *db = dg + G, *sg = db + G, *sxg = sg + rows;
  load_vec(&call->inputs[3], mean);
  load_vec(&call->inputs[4], inv);
  for (int64_t r = 0; r < rows; r++) inv[r] = stat_is_var ? 1.0 / sqrt(inv[r] + eps) : 1.0 / inv[r];
  load_vec(&call->inputs[2], gam);
  for (int64_t c = 0; c < G; c++) dg[c] = db[c] = 0.0;
  stage st;
  stage_init(&st, x->dtype);
  const norm_kernels *k = st.k;
  const void *xd = stage_in(&st, x);
  const void *gd = xd ? stage_in(&st, og) : NULL;
  void *dxd = gd ? stage_out(&st, &call->outputs[0]) : NULL;
  if (!dxd) return stage_finish(&st, 0);
  norm_job j = {.k = k,
                .x = xd,
                .g = gd,
                .y = dxd,
                .len = len,
                .G = G,
                .mean = mean,
                .inv = inv,
                .gam = gam,
                .sa = sg,
                .sb = sxg};
  mxw_parallel_run(rows, 1, 6.0 * pass_cost(k) * (double)len, rows_grad_chunk, &j);
  for (int64_t r = 0; r < rows; r++) { /* the gamma/beta gradients, in row order */
    dg[r % G] += sxg[r] * inv[r];
    db[r % G] += sg[r];
  }
  MXW_TRY(stage_finish(&st, 1));
  store_vec(dg, &call->outputs[1]);
  store_vec(db, &call->outputs[2]);
  return 0;
}
static int in_backward(const mxw_op_call *call) {
  const InstanceNormParam *p = (const InstanceNormParam *)call->param;
  const mxw_shape *s = &call->inputs[1].shape;
  return rows_backward(call, s->dims[0] * s->dims[1], s->dims[1], 1, (double)(float)p->eps);
}
static int gn_backward(const mxw_op_call *call) {
  const GroupNormParam *p = (const GroupNormParam *)call->param;
  return rows_backward(call, call->inputs[1].shape.dims[0] * p->num_groups, p->num_groups, 0, 0.0);
}

static const mxw_op_def op_backward_InstanceNorm = {
    .name = "_backward_InstanceNorm",
    .doc = MXW_DOC("the gradients of InstanceNorm's data, gamma and beta"),
    .attrs = k_in_attrs,
    .num_attrs = 1,
    .param_size = sizeof(InstanceNormParam),
    .num_inputs = 5,
    .input_names = k_in_backward_inputs,
    .num_outputs = 3,
    .output_names = k_grad3_outputs,
    .infer_shape = grad3_infer_shape,
    .infer_type = infer_type_float,
    .half_as_f32 = 1,
    .forward = in_backward,
};
static const mxw_op_def op_backward_GroupNorm = {
    .name = "_backward_GroupNorm",
    .doc = MXW_DOC("the gradients of GroupNorm's data, gamma and beta"),
    .attrs = k_gn_attrs,
    .num_attrs = (int)(sizeof k_gn_attrs / sizeof k_gn_attrs[0]),
    .param_size = sizeof(GroupNormParam),
    .validate = gn_validate,
    .num_inputs = 5,
    .input_names = k_ln_backward_inputs,
    .num_outputs = 3,
    .output_names = k_grad3_outputs,
    .infer_shape = grad3_infer_shape,
    .infer_type = infer_type_float,
    .half_as_f32 = 1,
    .forward = gn_backward,
};

/* ---- L2Normalization: _backward_L2Normalization(ograd, output, norm) -> data gradient
 *   dx = (g - y * Σ g y) / norm, the sum over what the mode normalizes. */
/* Rows [r0, r1) of len (instance, spatial); j->x holds the output y, j->var the norms. */
static void l2_grad_rows_chunk(void *ctx, int64_t r0, int64_t r1) {
  const norm_job *J = (const norm_job *)ctx;
  const norm_kernels *k = J->k;
  const grad_kernels *gk = grad_k(k);
  for (int64_t r = r0; r < r1; r++) {
    double sg = 0.0, syg = 0.0;
    const void *yr = at(J->x, r * J->len, k->esize), *gr = at(J->g, r * J->len, k->esize);
    gk->sums(yr, gr, J->len, 0.0, &sg, &syg);
    gk->apply(yr, gr, at_mut(J->y, r * J->len, k->esize), J->len, 0.0, 0.0, syg, 1.0 / J->var[r]);
  }
}

/* Channel mode: positions [q0, q1) of the outer * inner ones, each over its channels. */
static void l2_grad_cols_chunk(void *ctx, int64_t q0, int64_t q1) {
  const norm_job *J = (const norm_job *)ctx;
  const norm_kernels *k = J->k;
  const axis_view v = J->v;
  for (int64_t q = q0; q < q1; q++) {
    const int64_t o = q / v.inner, i = q % v.inner;
    double syg = 0.0;
    for (int64_t c = 0; c < v.n; c++) {
      const int64_t e = (o * v.n + c) * v.inner + i;
      syg += ldc(k, J->x, e) * ldc(k, J->g, e);
    }
    const double in = 1.0 / J->var[q];
    for (int64_t c = 0; c < v.n; c++) {
      const int64_t e = (o * v.n + c) * v.inner + i;
      stc(k, J->y, e, (ldc(k, J->g, e) - ldc(k, J->x, e) * syg) * in);
    }
  }
}

static int l2_backward(const mxw_op_call *call) {
  const L2NormParam *p = (const L2NormParam *)call->param;
  const mxw_tensor *og = &call->inputs[0], *y = &call->inputs[1];
  const int64_t total = mxw_tensor_size(y), N = y->shape.dims[0];
  stage st;
  stage_init(&st, y->dtype);
  const norm_kernels *k = st.k;
  const void *yd = stage_in(&st, y);
  const void *gd = yd ? stage_in(&st, og) : NULL;
  void *dxd = gd ? stage_out(&st, &call->outputs[0]) : NULL;
  if (!dxd) return stage_finish(&st, 0);
  double *norm = scratch_doubles(mxw_tensor_size(&call->inputs[2]));
  if (!norm) return stage_finish(&st, 0);
  load_vec(&call->inputs[2], norm);
  norm_job j = {.k = k, .x = yd, .g = gd, .y = dxd, .var = norm};
  if (p->mode != L2_CHANNEL) {
    const int64_t rows = p->mode == L2_INSTANCE ? N : N * y->shape.dims[1];
    j.len = rows > 0 ? total / rows : 0;
    mxw_parallel_run(rows, 1, 5.0 * pass_cost(k) * (double)j.len, l2_grad_rows_chunk, &j);
    return stage_finish(&st, 1);
  }
  j.v = view_around(&y->shape, 1);
  mxw_parallel_run(j.v.outer * j.v.inner, 1, 8.0 * pass_cost(k) * (double)j.v.n, l2_grad_cols_chunk, &j);
  return stage_finish(&st, 1);
}
static int l2_backward_infer_shape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  return mxw_shape_assign(&out[0], &in[1], "data gradient");
}
/* Differentiable form (create_graph, as norm_grad_differentiable): over the mode's axes,
 * n = sqrt(sum(x^2) + eps), y = x / n, dx = (G - y sum(G y)) / n. */
static int grad_l2_differentiable(mxw_grad_ctx *g) {
  const L2NormParam *p = (const L2NormParam *)mxw_grad_param(g);
  char eps[40];
  snprintf(eps, sizeof eps, "%.17g", p->eps);
  const char *const *axes = p->mode == L2_INSTANCE  ? MXW_KV("axis", "0", "exclude", "True", "keepdims", "True")
                            : p->mode == L2_SPATIAL ? MXW_KV("axis", "(0, 1)", "exclude", "True", "keepdims", "True")
                                                    : MXW_KV("axis", "1", "keepdims", "True");
  const mxw_gid x = mxw_grad_in(g, 0), G = mxw_grad_ograd(g, 0);
  const mxw_gid ss = mxw_grad_op(g, "sum", axes, MXW_GIDS(mxw_grad_op(g, "square", NULL, MXW_GIDS(x))));
  const mxw_gid n =
      mxw_grad_op(g, "sqrt", NULL, MXW_GIDS(mxw_grad_op(g, "_plus_scalar", MXW_KV("scalar", eps), MXW_GIDS(ss))));
  const mxw_gid y = mxw_grad_op(g, "broadcast_div", NULL, MXW_GIDS(x, n));
  const mxw_gid s = mxw_grad_op(g, "sum", axes, MXW_GIDS(mxw_grad_mul(g, G, y)));
  const mxw_gid t =
      mxw_grad_op(g, "elemwise_sub", NULL, MXW_GIDS(G, mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(y, s))));
  return mxw_grad_set(g, 0, mxw_grad_op(g, "broadcast_div", NULL, MXW_GIDS(t, n)));
}

static int grad_l2(mxw_grad_ctx *g) {
  if (mxw_grad_flags(g) & MXW_GRAD_DIFFERENTIABLE) return grad_l2_differentiable(g);
  mxw_gid dx;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_L2Normalization",
                          MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 0), mxw_grad_out(g, 1)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}
static const char *const k_l2_backward_inputs[] = {"ograd", "output", "norm", NULL};
static const mxw_op_def op_backward_L2Normalization = {
    .name = "_backward_L2Normalization",
    .doc = MXW_DOC("the gradient of L2Normalization from its output gradient, output and norm"),
    .attrs = k_l2_attrs,
    .num_attrs = 2,
    .param_size = sizeof(L2NormParam),
    .num_inputs = 3,
    .input_names = k_l2_backward_inputs,
    .num_outputs = 1,
    .infer_shape = l2_backward_infer_shape,
    .infer_type = infer_type_float,
    .half_as_f32 = 1,
    .forward = l2_backward,
};

/* ---- LRN: _backward_LRN(ograd, data, tmp_norm) -> data gradient
 *   dx[c] = g[c] * norm[c]^-beta - 2 * beta * salpha * x[c] * Σ_{|c' - c| <= nsize/2} g[c'] x[c'] norm[c']^(-beta-1)
 * (MXNet's LRN backward, salpha = alpha / nsize). */
typedef struct {
  const LRNParam *p;
  const norm_kernels *k;
  const void *g, *x, *norm;
  void *dx;
  int64_t C, HW;
  double salpha;
  atomic_int failed;
} lrn_grad_job;

/* Samples [n0, n1); t and acc in scratch slot 2 of the running thread. */
static void lrn_grad_chunk(void *ctx, int64_t n0, int64_t n1) {
  lrn_grad_job *J = (lrn_grad_job *)ctx;
  const norm_kernels *k = J->k;
  const LRNParam *p = J->p;
  const int64_t C = J->C, HW = J->HW, half = p->nsize / 2;
  double *t = (double *)mxw_scratch(2, (size_t)(C * HW + HW + 1) * sizeof(double));
  if (!t) {
    atomic_store(&J->failed, 1);
    return;
  }
  double *acc = t + C * HW;
  for (int64_t n = n0; n < n1; n++) {
    const int64_t base = n * C * HW;
    for (int64_t i = 0; i < C * HW; i++)
      t[i] = ldc(k, J->g, base + i) * ldc(k, J->x, base + i) * pow(ldc(k, J->norm, base + i), -p->beta - 1.0);
    for (int64_t c = 0; c < C; c++) {
      for (int64_t i = 0; i < HW; i++) acc[i] = 0.0;
      const int64_t lo = c - half < 0 ? 0 : c - half, hi = c + half > C - 1 ? C - 1 : c + half;
      for (int64_t cc = lo; cc <= hi; cc++)
        for (int64_t i = 0; i < HW; i++) acc[i] += t[cc * HW + i];
      for (int64_t i = 0; i < HW; i++) {
        const int64_t e = base + c * HW + i;
        stc(k, J->dx, e,
            ldc(k, J->g, e) * pow(ldc(k, J->norm, e), -p->beta) - 2.0 * p->beta * J->salpha * ldc(k, J->x, e) * acc[i]);
      }
    }
  }
}

static int lrn_backward(const mxw_op_call *call) {
  const LRNParam *p = (const LRNParam *)call->param;
  const mxw_tensor *x = &call->inputs[1];
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1], HW = x->shape.dims[2] * x->shape.dims[3];
  const double salpha = (double)((float)p->alpha / (float)p->nsize);
  stage st;
  stage_init(&st, x->dtype);
  const norm_kernels *k = st.k;
  const void *gd = stage_in(&st, &call->inputs[0]);
  const void *xd = gd ? stage_in(&st, x) : NULL;
  const void *nd = xd ? stage_in(&st, &call->inputs[2]) : NULL;
  void *dxd = nd ? stage_out(&st, &call->outputs[0]) : NULL;
  if (!dxd) return stage_finish(&st, 0);
  lrn_grad_job j = {p, k, gd, xd, nd, dxd, C, HW, salpha, 0};
  mxw_parallel_run(N, 1, (double)(C * HW) * (2.0 * (double)p->nsize + 4.0 * MXW_COST_MATH), lrn_grad_chunk, &j);
  return stage_finish(&st, !atomic_load(&j.failed));
}
static int grad_lrn(mxw_grad_ctx *g) {
  mxw_gid dx;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_LRN", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_out(g, 1)),
                          &dx, 1));
  return mxw_grad_set(g, 0, dx);
}
static const char *const k_lrn_backward_inputs[] = {"ograd", "data", "tmp_norm", NULL};
static const mxw_op_def op_backward_LRN = {
    .name = "_backward_LRN",
    .doc = MXW_DOC("the gradient of LRN from its output gradient, data and tmp_norm"),
    .attrs = k_lrn_attrs,
    .num_attrs = 4,
    .param_size = sizeof(LRNParam),
    .validate = lrn_validate,
    .num_inputs = 3,
    .input_names = k_lrn_backward_inputs,
    .num_outputs = 1,
    .infer_shape = l2_backward_infer_shape,
    .infer_type = infer_type_float,
    .half_as_f32 = 1,
    .forward = lrn_backward,
};

MXW_FAMILY(norm, &op_BatchNorm, &op_BatchNormWithReLU, &op_LayerNorm, &op_InstanceNorm, &op_GroupNorm,
           &op_L2Normalization, &op_LRN, &op_backward_BatchNorm, &op_backward_BatchNormWithReLU, &op_backward_LayerNorm,
           &op_backward_InstanceNorm, &op_backward_GroupNorm, &op_backward_L2Normalization, &op_backward_LRN);
