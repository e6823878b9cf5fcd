/* softmax.c -- softmax along an axis and the output layers built on it (ops.md §2), forward
 * and backward:
 *   softmax (_npx_softmax), log_softmax (_npx_log_softmax), softmin, SoftmaxActivation,
 *   SoftmaxOutput (Softmax), LinearRegressionOutput, LogisticRegressionOutput,
 *   MAERegressionOutput.
 * Gradients (MXNet's FGradients, see "gradients" below): softmax-type ops through
 * _backward_softmax / _backward_log_softmax / _backward_SoftmaxActivation from the output; the
 * output layers through _backward_SoftmaxOutput and _backward_{linear,mae,logistic}_reg_out, which
 * (as in MXNet) ignore the head gradient: they ARE the loss's gradient.
 *
 * Every softmax is one kernel over an (outer, n, inner) view with the axis in the middle:
 *   m = max_j x_j,  e_j = exp((x_j - m) / T),  softmax_j = e_j / sum_k e_k,
 *   log_softmax_j = (x_j - m) / T - log(sum_k e_k);
 * with a length input only the first length[o, i] entries of a line take part and the rest
 * are 0. float32 -> float32 computes in float32 (the sum accumulates in float32, as MXNet);
 * contiguous lines (the last axis) use a SIMD exp. Every other dtype combination computes each
 * line in double and stores in the output dtype.
 *
 * Threads: lines are independent, so large calls split over them (rows when the axis is last,
 * else blocks of LANES neighbouring lines of each outer slice, the same blocks as one thread
 * uses, so each line takes the same SIMD or scalar path whatever the thread count).
 */
#include <math.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "../core/mxw_parallel.h"
#include "../kernels/vmath.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <simde/wasm/simd128.h>
#endif

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
static const char *const k_data[] = {"data", NULL};
static const char *const k_data_length[] = {"data", "length", NULL};
static const char *const k_data_label[] = {"data", "label", NULL};

/* ==== the kernel ============================================================================= */

typedef struct {
  int64_t outer, n, inner;  /* the axis is the middle one */
  double temperature;       /* 1 when not given */
  int log;                  /* log_softmax */
  const mxw_tensor *length; /* NULL, or one length per (outer, inner) line */
} softmax_plan;

/* exp of four floats known to be <= 0 (x - max, divided by T > 0), or NaN: x = k ln2 + r with
 * |r| <= ln2/2 (Cody-Waite split of ln2), exp(r) by Cephes' degree-7 polynomial, and 2^k built
 * in the exponent bits. Adding 1.5 * 2^23 rounds x / ln2 to the integer k and leaves k + 127 in
 * the low mantissa bits, so one shift makes 2^k. About 1 ulp; x < -87.34 (below FLT_MIN) gives
 * 0, NaN stays NaN. Without the x > 0 cases this needs no upper clamp, which halves its cost
 * against a general exp (V8 turns the rounding and saturating conversion into long sequences). */
static inline v128_t exp_nonpositive_f32x4(v128_t x) {
  const v128_t lo = wasm_f32x4_splat(-87.3365478515625f), magic = wasm_f32x4_splat(12582912.0f);
  v128_t xc = wasm_f32x4_pmax(x, lo); /* NaN stays NaN */
  v128_t t = wasm_f32x4_add(wasm_f32x4_mul(xc, wasm_f32x4_splat(1.44269504088896341f)), magic);
  v128_t k = wasm_f32x4_sub(t, magic);
  v128_t r = wasm_f32x4_sub(xc, wasm_f32x4_mul(k, wasm_f32x4_splat(0.693359375f)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(k, wasm_f32x4_splat(-2.12194440e-4f)));
  v128_t p = wasm_f32x4_splat(1.9875691500e-4f);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.3981999507e-3f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(8.3334519073e-3f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(4.1665795894e-2f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.6666665459e-1f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(5.0000001201e-1f));
  p = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(p, wasm_f32x4_mul(r, r)), r), wasm_f32x4_splat(1.f));
  v128_t scale = wasm_i32x4_shl(wasm_i32x4_add(t, wasm_i32x4_splat(127)), 23);
  return wasm_v128_andnot(wasm_f32x4_mul(p, scale), wasm_f32x4_lt(x, lo));
}

static float max_row_f32(const float *x, int64_t n) {
  float m = x[0];
  int64_t i = 0;
  if (n >= 8) {
    v128_t a = wasm_v128_load(x);
    for (i = 4; i + 4 <= n; i += 4) a = wasm_f32x4_pmax(a, wasm_v128_load(x + i));
    float l0 = wasm_f32x4_extract_lane(a, 0), l1 = wasm_f32x4_extract_lane(a, 1);
    float l2 = wasm_f32x4_extract_lane(a, 2), l3 = wasm_f32x4_extract_lane(a, 3);
    m = l0 > l1 ? l0 : l1;
    if (l2 > m) m = l2;
    if (l3 > m) m = l3;
  }
  for (; i < n; i++)
    if (x[i] > m) m = x[i];
  return m;
}

/* One contiguous float32 line of n entries, of which the first len take part (1 <= len <= n).
 * t > 0 keeps every exp argument <= 0 for the SIMD exp; other temperatures take expf. */
static void softmax_row_f32(const float *x, float *y, int64_t len, int64_t n, float t, int has_t, int log) {
  float m = max_row_f32(x, len);
  v128_t vm = wasm_f32x4_splat(m), vt = wasm_f32x4_splat(t), acc = wasm_f32x4_splat(0.f);
  int64_t j = 0;
  if (!has_t || t > 0.f) {
    for (; j + 4 <= len; j += 4) {
      v128_t z = wasm_f32x4_sub(wasm_v128_load(x + j), vm);
      if (has_t) z = wasm_f32x4_div(z, vt);
      v128_t e = exp_nonpositive_f32x4(z);
      acc = wasm_f32x4_add(acc, e);
      if (!log) wasm_v128_store(y + j, e);
    }
  }
  float sum = (wasm_f32x4_extract_lane(acc, 0) + wasm_f32x4_extract_lane(acc, 1)) +
              (wasm_f32x4_extract_lane(acc, 2) + wasm_f32x4_extract_lane(acc, 3));
  for (; j < len; j++) {
    float e = expf(has_t ? (x[j] - m) / t : x[j] - m);
    sum += e;
    if (!log) y[j] = e;
  }
  if (log) {
    float ls = logf(sum);
    v128_t vls = wasm_f32x4_splat(ls);
    for (j = 0; j + 4 <= len; j += 4) {
      v128_t z = wasm_f32x4_sub(wasm_v128_load(x + j), vm);
      if (has_t) z = wasm_f32x4_div(z, vt);
      wasm_v128_store(y + j, wasm_f32x4_sub(z, vls));
    }
    for (; j < len; j++) y[j] = (has_t ? (x[j] - m) / t : x[j] - m) - ls;
  } else {
    v128_t vs = wasm_f32x4_splat(sum);
    for (j = 0; j + 4 <= len; j += 4) wasm_v128_store(y + j, wasm_f32x4_div(wasm_v128_load(y + j), vs));
    for (; j < len; j++) y[j] /= sum;
  }
  for (j = len; j < n; j++) y[j] = 0.f;
}

/* float32 lines [i_begin, i_end) (i_begin a multiple of LANES) with stride `inner` (axis not
 * last), no length: blocks of LANES neighbouring lines at a time, so every pass reads contiguous
 * memory and runs four lines per vector. */
#define LANES 64
static void softmax_cols_f32(const float *x, float *y, int64_t n, int64_t inner, int64_t i_begin, int64_t i_end,
                             float t, int has_t, int log) {
  float m[LANES], s[LANES];
  int simd = !has_t || t > 0.f; /* exp arguments <= 0 */
  v128_t vt = wasm_f32x4_splat(t);
  for (int64_t i0 = i_begin; i0 < i_end; i0 += LANES) {
    int w = (int)(inner - i0 < LANES ? inner - i0 : LANES);
    const float *xb = x + i0;
    float *yb = y + i0;
    for (int l = 0; l < w; l++) {
      m[l] = xb[l];
      s[l] = 0.f;
    }
    /* the running max, four lanes by pmax (`v > m ? v : m` exactly; as a scalar float select it
     * would be a branch in V8), the rest as written */
    for (int64_t j = 1; j < n; j++) {
      const float *xr = xb + j * inner;
      int l = 0;
      for (; l + 4 <= w; l += 4) wasm_v128_store(m + l, wasm_f32x4_pmax(wasm_v128_load(m + l), wasm_v128_load(xr + l)));
      for (; l < w; l++)
        if (xr[l] > m[l]) m[l] = xr[l];
    }
    for (int64_t j = 0; j < n; j++) {
      const float *xr = xb + j * inner;
      float *yr = yb + j * inner;
      int l = 0;
      for (; simd && l + 4 <= w; l += 4) {
        v128_t z = wasm_f32x4_sub(wasm_v128_load(xr + l), wasm_v128_load(m + l));
        if (has_t) z = wasm_f32x4_div(z, vt);
        v128_t e = exp_nonpositive_f32x4(z);
        wasm_v128_store(s + l, wasm_f32x4_add(wasm_v128_load(s + l), e));
        wasm_v128_store(yr + l, log ? z : e);
      }
      for (; l < w; l++) {
        float z = has_t ? (xr[l] - m[l]) / t : xr[l] - m[l];
        float e = expf(z);
        s[l] += e;
        yr[l] = log ? z : e;
      }
    }
    for (int l = 0; l < w; l++) s[l] = log ? logf(s[l]) : s[l];
    for (int64_t j = 0; j < n; j++) {
      float *yr = yb + j * inner;
      int l = 0;
      for (; l + 4 <= w; l += 4) {
        const v128_t v = wasm_v128_load(yr + l), d = wasm_v128_load(s + l);
        wasm_v128_store(yr + l, log ? wasm_f32x4_sub(v, d) : wasm_f32x4_div(v, d));
      }
      for (; l < w; l++) yr[l] = log ? yr[l] - s[l] : yr[l] / s[l];
    }
  }
}

/* Any dtypes: each line is gathered into doubles, computed, and stored in the output dtype.
 * Lines [k0, k1) of the outer * inner ones; scratch slot 0 of the running thread. */
static int softmax_generic(const softmax_plan *p, const mxw_tensor *in, mxw_tensor *out, int64_t k0, int64_t k1) {
  double *row = (double *)mxw_scratch(0, (size_t)p->n * sizeof(double));
  if (!row) return -1;
  for (int64_t k = k0; k < k1; k++) {
    const int64_t o = k / p->inner, i = k % p->inner;
    int64_t base = o * p->n * p->inner + i, len = p->n;
    if (p->length) {
      double l = mxw_load_f64(p->length->data, p->length->dtype, o * p->inner + i);
      len = !(l > 0) ? 0 : (l >= (double)p->n ? p->n : (int64_t)l);
    }
    for (int64_t j = 0; j < len; j++) row[j] = mxw_load_f64(in->data, in->dtype, base + j * p->inner);
    double m = len ? row[0] : 0.0, sum = 0.0;
    for (int64_t j = 1; j < len; j++)
      if (row[j] > m) m = row[j];
    for (int64_t j = 0; j < len; j++) {
      row[j] = (row[j] - m) / p->temperature;
      sum += exp(row[j]);
    }
    double ls = log(sum);
    for (int64_t j = 0; j < p->n; j++) {
      double v = j >= len ? 0.0 : p->log ? row[j] - ls : exp(row[j]) / sum;
      mxw_store_f64(out->data, out->dtype, base + j * p->inner, v);
    }
  }
  return 0;
}

/* The three kernels' units of work: rows (float32, axis last), blocks of LANES lines of each
 * outer slice (float32, axis not last, no length), lines (any dtypes). */
enum { RUN_ROWS, RUN_COLS, RUN_GENERIC };
typedef struct {
  const softmax_plan *p;
  const mxw_tensor *in;
  mxw_tensor *out;
  int kind;
  atomic_int failed;
} softmax_job;

static void softmax_chunk(void *ctx, int64_t u0, int64_t u1) {
  softmax_job *j = (softmax_job *)ctx;
  const softmax_plan *p = j->p;
  const float t = (float)p->temperature;
  const int has_t = p->temperature != 1.0;
  if (j->kind == RUN_ROWS) {
    const float *x = (const float *)j->in->data;
    float *y = (float *)j->out->data;
    for (int64_t o = u0; o < u1; o++) {
      int64_t len = p->n;
      if (p->length) {
        double l = mxw_load_f64(p->length->data, p->length->dtype, o);
        len = !(l > 0) ? 0 : (l >= (double)p->n ? p->n : (int64_t)l);
      }
      if (len == 0)
        memset(y + o * p->n, 0, (size_t)p->n * sizeof(float));
      else
        softmax_row_f32(x + o * p->n, y + o * p->n, len, p->n, t, has_t, p->log);
    }
  } else if (j->kind == RUN_COLS) {
    const int64_t nb = (p->inner + LANES - 1) / LANES;
    for (int64_t u = u0; u < u1; u++) {
      const int64_t o = u / nb, i0 = (u % nb) * LANES, i1 = i0 + LANES < p->inner ? i0 + LANES : p->inner;
      softmax_cols_f32((const float *)j->in->data + o * p->n * p->inner, (float *)j->out->data + o * p->n * p->inner,
                       p->n, p->inner, i0, i1, t, has_t, p->log);
    }
  } else if (softmax_generic(p, j->in, j->out, u0, u1) != 0) {
    atomic_store(&j->failed, 1);
  }
}

static int softmax_run(const softmax_plan *p, const mxw_tensor *in, mxw_tensor *out) {
  if (p->outer * p->n * p->inner == 0) return 0;
  int f32 = in->dtype == MXW_FLOAT32 && out->dtype == MXW_FLOAT32;
  softmax_job j = {p, in, out, RUN_GENERIC, 0};
  int64_t units = p->outer * p->inner;
  double cost = 24.0 * (double)p->n; /* per line, through double (element-ops, mxw_parallel.h) */
  if (f32 && p->inner == 1) {
    j.kind = RUN_ROWS;
    units = p->outer;
    cost = 8.0 * (double)p->n;
  } else if (f32 && !p->length) {
    j.kind = RUN_COLS;
    units = p->outer * ((p->inner + LANES - 1) / LANES);
    cost = 10.0 * (double)(p->n * (p->inner < LANES ? p->inner : LANES));
  }
  mxw_parallel_run(units, 1, cost, softmax_chunk, &j);
  if (atomic_load(&j.failed)) return softmax_generic(p, in, out, 0, units); /* the error, from this thread */
  return 0;
}

/* The (outer, n, inner) view around axis `axis` of s (rank 0 counts as (1,)). */
static void view_around(const mxw_shape *s, int axis, softmax_plan *p) {
  p->outer = 1;
  p->inner = 1;
  p->n = s->ndim == 0 ? 1 : s->dims[axis];
  for (int i = 0; i < axis; i++) p->outer *= s->dims[i];
  for (int i = axis + 1; i < s->ndim; i++) p->inner *= s->dims[i];
}

/* Output and data share one shape; fills whichever is unknown. */
static int same_shape(mxw_shape *a, mxw_shape *b) {
  mxw_shape s = *a;
  MXW_TRY(mxw_shape_assign(&s, b, "output"));
  *a = s;
  *b = s;
  return 0;
}

/* ==== the backward kernel ===================================================================== */
/* Per line (the axis in the middle of (outer, n, inner)), with y the forward output, g its
 * gradient and the first len entries taking part (MXNet's SoftmaxGrad):
 *   softmax:      s = sum_j g_j y_j,  dx_j = y_j (g_j - s) / T
 *   log_softmax:  s = sum_j g_j,      dx_j = (g_j - exp(y_j) s) / T
 * and dx_j = 0 for j >= len. Sums accumulate in the data type, as MXNet does by default. Lines are
 * processed in blocks of up to LANES neighbours (one contiguous line when inner == 1), so each
 * pass over the axis reads contiguous memory. */
#define SOFTMAX_BACKWARD(T, SFX, EXPF)                                                                          \
  static void softmax_backward_##SFX(const T *g, const T *y, T *dx, const softmax_plan *p, const int64_t *lens, \
                                     int64_t u0, int64_t u1) {                                                  \
    const T t = (T)p->temperature;                                                                              \
    const int has_t = p->temperature != 1.0, is_log = p->log;                                                   \
    const int64_t n = p->n, inner = p->inner, nb = (inner + LANES - 1) / LANES;                                 \
    T s[LANES];                                                                                                 \
    int64_t L[LANES];                                                                                           \
    for (int64_t u = u0; u < u1; u++) { /* unit u: block u % nb of outer slice u / nb */                        \
      const int64_t o = u / nb, i0 = (u % nb) * LANES;                                                          \
      {                                                                                                         \
        int w = (int)(inner - i0 < LANES ? inner - i0 : LANES);                                                 \
        int64_t base = o * n * inner + i0;                                                                      \
        for (int l = 0; l < w; l++) {                                                                           \
          s[l] = 0;                                                                                             \
          L[l] = lens ? lens[o * inner + i0 + l] : n;                                                           \
        }                                                                                                       \
        for (int64_t j = 0; j < n; j++) {                                                                       \
          const T *gr = g + base + j * inner, *yr = y + base + j * inner;                                       \
          for (int l = 0; l < w; l++)                                                                           \
            if (j < L[l]) s[l] += is_log ? gr[l] : gr[l] * yr[l];                                               \
        }                                                                                                       \
        for (int64_t j = 0; j < n; j++) {                                                                       \
          const T *gr = g + base + j * inner, *yr = y + base + j * inner;                                       \
          T *dr = dx + base + j * inner;                                                                        \
          for (int l = 0; l < w; l++) {                                                                         \
            T v = is_log ? gr[l] - EXPF(yr[l]) * s[l] : yr[l] * (gr[l] - s[l]);                                 \
            if (has_t) v /= t;                                                                                  \
            dr[l] = j < L[l] ? v : (T)0;                                                                        \
          }                                                                                                     \
        }                                                                                                       \
      }                                                                                                         \
    }                                                                                                           \
  }
SOFTMAX_BACKWARD(double, f64, exp)
SOFTMAX_BACKWARD(float, f32_strided, expf)

/* float32 contiguous lines [o0, o1) without length: the sums four lanes at a time. */
static void softmax_backward_f32_rows(const float *g, const float *y, float *dx, const softmax_plan *p, int64_t o0,
                                      int64_t o1) {
  const float t = (float)p->temperature;
  const int has_t = p->temperature != 1.0;
  const int64_t n = p->n;
  for (int64_t o = o0; o < o1; o++) {
    const float *gr = g + o * n, *yr = y + o * n;
    float *dr = dx + o * n;
    v128_t acc = wasm_f32x4_splat(0.f);
    int64_t j = 0;
    if (p->log) {
      for (; j + 4 <= n; j += 4) acc = wasm_f32x4_add(acc, wasm_v128_load(gr + j));
    } else {
      for (; j + 4 <= n; j += 4)
        acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_v128_load(gr + j), wasm_v128_load(yr + j)));
    }
    float s = (wasm_f32x4_extract_lane(acc, 0) + wasm_f32x4_extract_lane(acc, 1)) +
              (wasm_f32x4_extract_lane(acc, 2) + wasm_f32x4_extract_lane(acc, 3));
    for (; j < n; j++) s += p->log ? gr[j] : gr[j] * yr[j];
    if (p->log) {
      for (j = 0; j < n; j++) dr[j] = gr[j] - expf(yr[j]) * s;
    } else {
      v128_t vs = wasm_f32x4_splat(s);
      for (j = 0; j + 4 <= n; j += 4) {
        v128_t yv = wasm_v128_load(yr + j);
        wasm_v128_store(dr + j, wasm_f32x4_mul(yv, wasm_f32x4_sub(wasm_v128_load(gr + j), vs)));
      }
      for (; j < n; j++) dr[j] = yr[j] * (gr[j] - s);
    }
    if (has_t)
      for (j = 0; j < n; j++) dr[j] /= t;
  }
}

/* The backward kernels' units: rows (float32 contiguous lines without length), else blocks of
 * LANES neighbouring lines of each outer slice (float32, or float64 for every other dtype). */
enum { BWD_F64, BWD_F32, BWD_ROWS };
typedef struct {
  const softmax_plan *p;
  const void *g, *y;
  void *dx;
  const int64_t *lens;
  int kind;
} backward_job;

static void backward_chunk(void *ctx, int64_t u0, int64_t u1) {
  const backward_job *j = (const backward_job *)ctx;
  if (j->kind == BWD_ROWS)
    softmax_backward_f32_rows((const float *)j->g, (const float *)j->y, (float *)j->dx, j->p, u0, u1);
  else if (j->kind == BWD_F32)
    softmax_backward_f32_strided((const float *)j->g, (const float *)j->y, (float *)j->dx, j->p, j->lens, u0, u1);
  else
    softmax_backward_f64((const double *)j->g, (const double *)j->y, (double *)j->dx, j->p, j->lens, u0, u1);
}

static void backward_run(const backward_job *j) {
  const softmax_plan *p = j->p;
  const int rows = j->kind == BWD_ROWS;
  const int64_t w = p->inner < LANES ? p->inner : LANES; /* lines per unit */
  const int64_t units = rows ? p->outer : p->outer * ((p->inner + LANES - 1) / LANES);
  const double cost = (rows ? 4.0 : j->kind == BWD_F32 ? 6.0 : 12.0) * (double)(p->n * (rows ? 1 : w));
  mxw_parallel_run(units, 1, cost, backward_chunk, (void *)j);
}

/* dx from g and y (any float dtypes: float32 in float32, everything else through double). */
static int softmax_backward_run(const softmax_plan *p, const mxw_tensor *g, const mxw_tensor *y, mxw_tensor *dx) {
  int64_t size = p->outer * p->n * p->inner;
  if (size == 0) return 0;
  int64_t *lens = NULL;
  if (p->length) {
    lens = (int64_t *)mxw_scratch(1, (size_t)(p->outer * p->inner) * sizeof(int64_t));
    if (!lens) return -1;
    for (int64_t k = 0; k < p->outer * p->inner; k++) {
      double l = mxw_load_f64(p->length->data, p->length->dtype, k);
      lens[k] = !(l > 0) ? 0 : (l >= (double)p->n ? p->n : (int64_t)l);
    }
  }
  backward_job j = {p, NULL, NULL, NULL, lens, BWD_F64};
  int direct = 0; /* g, y and dx all float32 or all float64: no copies */
  if (g->dtype == MXW_FLOAT32 && y->dtype == MXW_FLOAT32 && dx->dtype == MXW_FLOAT32) {
    j.kind = p->inner == 1 && !lens ? BWD_ROWS : BWD_F32;
    direct = 1;
  } else if (g->dtype == MXW_FLOAT64 && y->dtype == MXW_FLOAT64 && dx->dtype == MXW_FLOAT64) {
    direct = 1;
  }
  if (direct) {
    j.g = g->data;
    j.y = y->data;
    j.dx = dx->data;
    backward_run(&j);
    return 0;
  }
  double *buf = (double *)malloc((size_t)size * 3 * sizeof(double));
  if (!buf) return mxw_fail("out of memory for the softmax gradient (%lld elements)", (long long)size);
  mxw_parallel_convert(g->data, g->dtype, buf, MXW_FLOAT64, size);
  mxw_parallel_convert(y->data, y->dtype, buf + size, MXW_FLOAT64, size);
  j.g = buf;
  j.y = buf + size;
  j.dx = buf + 2 * size;
  backward_run(&j);
  mxw_parallel_convert(buf + 2 * size, MXW_FLOAT64, dx->data, dx->dtype, size);
  free(buf);
  return 0;
}

/* ==== softmax, log_softmax ===================================================================== */
static const char *const k_softmax_dtype_names[] = {"float16", "float32", "float64", NULL};
static const int k_softmax_dtypes[] = {MXW_FLOAT16, MXW_FLOAT32, MXW_FLOAT64};

typedef struct {
  int64_t axis;
  mxw_opt_float temperature;
  mxw_opt_int dtype;
  mxw_opt_int use_length;
} SoftmaxParam;

static const mxw_attr_spec k_softmax_attrs[] = {
    MXW_A_INT("axis", SoftmaxParam, axis, "-1", "the axis to normalise over"),
    MXW_A_OPT_FLOAT("temperature", SoftmaxParam, temperature, "None", "divides (x - max) before exp; None = 1"),
    MXW_A_OPT_ENUM("dtype", SoftmaxParam, dtype, "None", k_softmax_dtype_names, "output dtype; None = input dtype"),
    MXW_A_OPT_BOOL("use_length", SoftmaxParam, use_length, "False",
                   "take a second input `length`: only the first length[i] entries of each line count"),
};

static int softmax_uses_length(const SoftmaxParam *p) { return p->use_length.has && p->use_length.v; }
static int softmax_num_inputs(const void *param) { return softmax_uses_length((const SoftmaxParam *)param) ? 2 : 1; }

static int softmax_axis(int64_t axis, const mxw_shape *s, int *out) {
  char buf[128];
  int ndim = s->ndim == 0 ? 1 : s->ndim;
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    return mxw_fail("axis %lld is out of range for data of shape %s (%d dimension%s)", (long long)axis,
                    mxw_shape_str(s, buf, sizeof buf), s->ndim, s->ndim == 1 ? "" : "s");
  *out = (int)a;
  return 0;
}

/* length: the data shape without the axis ((1,) for 1-D data). */
static int infer_softmax(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const SoftmaxParam *p = (const SoftmaxParam *)param;
  MXW_TRY(same_shape(&in[0], &out[0]));
  if (in[0].ndim < 0) return 0;
  int axis;
  MXW_TRY(softmax_axis(p->axis, &in[0], &axis));
  if (softmax_uses_length(p)) {
    mxw_shape l;
    memset(&l, 0, sizeof l);
    for (int i = 0; i < in[0].ndim; i++)
      if (i != axis) l.dims[l.ndim++] = in[0].dims[i];
    if (l.ndim == 0) l.dims[l.ndim++] = 1;
    MXW_TRY(mxw_shape_assign(&in[1], &l, "length"));
  }
  return 0;
}

/* Output dtype: `dtype` when given, else the data's. The length may have any dtype. */
static int infer_softmax_type(const void *param, int nin, int *in, int nout, int *out) {
  const SoftmaxParam *p = (const SoftmaxParam *)param;
  if (!p->dtype.has) return mxw_infer_type_same(param, 1, in, nout, out);
  int dt = k_softmax_dtypes[p->dtype.v];
  MXW_CHECK(out[0] < 0 || out[0] == dt, "output dtype %s does not match dtype=%s", mxw_dtype_name(out[0]),
            mxw_dtype_name(dt));
  out[0] = dt;
  if (in[0] < 0) in[0] = dt;
  return 0;
}

static int softmax_forward(const mxw_op_call *c, int log) {
  const SoftmaxParam *p = (const SoftmaxParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  int axis;
  MXW_TRY(softmax_axis(p->axis, &in->shape, &axis));
  softmax_plan plan;
  view_around(&in->shape, axis, &plan);
  plan.temperature = p->temperature.has ? p->temperature.v : 1.0;
  plan.log = log;
  plan.length = softmax_uses_length(p) ? &c->inputs[1] : NULL;
  return softmax_run(&plan, in, &c->outputs[0]);
}

static int fwd_softmax(const mxw_op_call *c) { return softmax_forward(c, 0); }
static int fwd_log_softmax(const mxw_op_call *c) { return softmax_forward(c, 1); }

/* softmin = softmax of -data (MXNet's SoftmaxCompute with negate): the softmax kernel on a negated
 * copy (float32, or double for the other dtypes), which keeps its max subtraction exact. */
static int fwd_softmin(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  const int64_t n = mxw_tensor_size(in);
  const int f32 = in->dtype == MXW_FLOAT32;
  void *buf = malloc((size_t)(n > 0 ? n : 1) * (f32 ? sizeof(float) : sizeof(double)));
  if (!buf) return mxw_fail("out of memory for the negated data (%lld elements)", (long long)n);
  if (f32) {
    for (int64_t i = 0; i < n; i++) ((float *)buf)[i] = -((const float *)in->data)[i];
  } else {
    for (int64_t i = 0; i < n; i++) ((double *)buf)[i] = -mxw_load_f64(in->data, in->dtype, i);
  }
  mxw_tensor ins[2];
  ins[0] = *in;
  ins[0].data = buf;
  ins[0].dtype = f32 ? MXW_FLOAT32 : MXW_FLOAT64;
  if (c->num_inputs > 1) ins[1] = c->inputs[1];
  mxw_op_call neg = *c;
  neg.inputs = ins;
  const int rc = softmax_forward(&neg, 0);
  free(buf);
  return rc;
}

/* Gradient (MXNet's SoftmaxFGradient): _backward_softmax / _backward_log_softmax(ograd, output
 * [, data][, length]) -- data only when `dtype` overrides the output dtype (it gives dx's dtype),
 * length when use_length (entries past it get 0; the length itself gets no gradient). */
static int softmax_has_dtype(const SoftmaxParam *p) { return p->dtype.has; }
static int softmax_backward_num_inputs(const void *param) {
  const SoftmaxParam *p = (const SoftmaxParam *)param;
  return 2 + softmax_has_dtype(p) + softmax_uses_length(p);
}
static const char *softmax_backward_input_name(const void *param, int index) {
  const SoftmaxParam *p = (const SoftmaxParam *)param;
  if (index == 0) return "ograd";
  if (index == 1) return "output";
  if (index == 2 && softmax_has_dtype(p)) return "data";
  return "length";
}
static const char *const k_softmax_backward_inputs[] = {"ograd", "output", "data", "length", NULL};
static int infer_softmax_backward(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  MXW_TRY(mxw_shape_assign(&in[0], &in[1], "ograd"));
  return mxw_shape_assign(&out[0], &in[1], "output");
}
static int infer_softmax_backward_type(const void *param, int nin, int *in, int nout, int *out) {
  const SoftmaxParam *p = (const SoftmaxParam *)param;
  int dt = softmax_has_dtype(p) ? in[2] : in[1];
  if (dt >= 0) out[0] = dt;
  return 0;
}
static int softmax_backward(const mxw_op_call *c, int log) {
  const SoftmaxParam *p = (const SoftmaxParam *)c->param;
  const mxw_tensor *y = &c->inputs[1];
  int axis;
  MXW_TRY(softmax_axis(p->axis, &y->shape, &axis));
  softmax_plan plan;
  view_around(&y->shape, axis, &plan);
  plan.temperature = p->temperature.has ? p->temperature.v : 1.0;
  plan.log = log;
  plan.length = softmax_uses_length(p) ? &c->inputs[c->num_inputs - 1] : NULL;
  return softmax_backward_run(&plan, &c->inputs[0], y, &c->outputs[0]);
}
static int fwd_backward_softmax(const mxw_op_call *c) { return softmax_backward(c, 0); }
static int fwd_backward_log_softmax(const mxw_op_call *c) { return softmax_backward(c, 1); }

static int grad_softmax_with(mxw_grad_ctx *g, const char *op, int negate) {
  const SoftmaxParam *p = (const SoftmaxParam *)mxw_grad_param(g);
  mxw_gid in[4], dx;
  int nin = 0;
  in[nin++] = mxw_grad_ograd(g, 0);
  in[nin++] = mxw_grad_out(g, 0);
  if (softmax_has_dtype(p)) in[nin++] = mxw_grad_in(g, 0);
  if (softmax_uses_length(p)) in[nin++] = mxw_grad_in(g, 1);
  MXW_TRY(mxw_grad_op_fwd(g, op, in, nin, &dx, 1));
  if (negate) dx = mxw_grad_op(g, "negative", NULL, MXW_GIDS(dx));
  return mxw_grad_set(g, 0, dx);
}
static int grad_softmax(mxw_grad_ctx *g) { return grad_softmax_with(g, "_backward_softmax", 0); }
static int grad_log_softmax(mxw_grad_ctx *g) { return grad_softmax_with(g, "_backward_log_softmax", 0); }
/* softmin y = softmax(-x / T): dx = -_backward_softmax(g, y) */
static int grad_softmin(mxw_grad_ctx *g) { return grad_softmax_with(g, "_backward_softmax", 1); }

/* softmax, log_softmax and softmin: one attribute table, inputs (data[, length]), shapes and types. */
#define SOFTMAX_OP(VAR, NAME, ALIAS_LIST, DOC, FWD, GRAD)             \
  static const mxw_op_def VAR = {.name = NAME,                        \
                                 .aliases = ALIAS_LIST,               \
                                 .doc = MXW_DOC(DOC),                 \
                                 .attrs = k_softmax_attrs,            \
                                 .num_attrs = 4,                      \
                                 .param_size = sizeof(SoftmaxParam),  \
                                 .num_inputs = 1,                     \
                                 .input_names = k_data_length,        \
                                 .num_inputs_fn = softmax_num_inputs, \
                                 .num_outputs = 1,                    \
                                 .infer_shape = infer_softmax,        \
                                 .infer_type = infer_softmax_type,    \
                                 .half_as_f32 = 1,                    \
                                 .forward = FWD,                      \
                                 .gradient = GRAD};
SOFTMAX_OP(op_softmax, "softmax", ALIASES("_npx_softmax"),
           "exp((x - max) / T) / sum along an axis, optionally over the first length[i] entries only", fwd_softmax,
           grad_softmax)
SOFTMAX_OP(op_log_softmax, "log_softmax", ALIASES("_npx_log_softmax"),
           "(x - max) / T - log(sum(exp((x - max) / T))) along an axis", fwd_log_softmax, grad_log_softmax)
SOFTMAX_OP(op_softmin, "softmin", NULL, "softmax of -x along an axis: exp((min - x) / T) / sum", fwd_softmin,
           grad_softmin)

/* Second order (autograd.grad with create_graph), for the plain forms (no dtype, no length). With
 * s = sum(g y), the backward dx = y (g - s) / T (softmax) and dx = (g - exp(y) sum(g)) / T
 * (log_softmax), along the axis; for the incoming gradient h:
 *   softmax:     d/dg = _backward_softmax(h, y) (the Jacobian is symmetric),
 *                d/dy = (h (g - s) - g sum(h y)) / T;
 *   log_softmax: d/dg = (h - sum(h exp(y))) / T,  d/dy = -h exp(y) sum(g) / T. */
static int grad2_softmax_with(mxw_grad_ctx *g, int log) {
  const SoftmaxParam *p = (const SoftmaxParam *)mxw_grad_param(g);
  if (softmax_has_dtype(p) || softmax_uses_length(p))
    return mxw_fail("the gradient of %s (second order) is not implemented with %s",
                    log ? "_backward_log_softmax" : "_backward_softmax", softmax_has_dtype(p) ? "dtype" : "use_length");
  char axis[32], scale[40];
  snprintf(axis, sizeof axis, "%lld", (long long)p->axis);
  const double t = p->temperature.has ? p->temperature.v : 1.0;
  const char *const *along = MXW_KV("axis", axis, "keepdims", "1");
  const mxw_gid h = mxw_grad_ograd(g, 0), og = mxw_grad_in(g, 0), y = mxw_grad_in(g, 1);
  mxw_gid dg, dy;
  if (!log) {
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_softmax", MXW_GIDS(h, y), &dg, 1));
    const mxw_gid sg = mxw_grad_op(g, "sum", along, MXW_GIDS(mxw_grad_mul(g, og, y)));
    const mxw_gid sh = mxw_grad_op(g, "sum", along, MXW_GIDS(mxw_grad_mul(g, h, y)));
    const mxw_gid a = mxw_grad_mul(g, h, mxw_grad_op(g, "broadcast_sub", NULL, MXW_GIDS(og, sg)));
    dy = mxw_grad_op(g, "elemwise_sub", NULL, MXW_GIDS(a, mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(og, sh))));
    snprintf(scale, sizeof scale, "%.17g", 1.0 / t);
  } else {
    const mxw_gid e = mxw_grad_op(g, "exp", NULL, MXW_GIDS(y));
    const mxw_gid he = mxw_grad_mul(g, h, e);
    dg = mxw_grad_op(g, "broadcast_sub", NULL, MXW_GIDS(h, mxw_grad_op(g, "sum", along, MXW_GIDS(he))));
    if (t != 1.0) {
      snprintf(scale, sizeof scale, "%.17g", 1.0 / t);
      dg = mxw_grad_op(g, "_mul_scalar", MXW_KV("scalar", scale), MXW_GIDS(dg));
    }
    dy = mxw_grad_op(g, "broadcast_mul", NULL, MXW_GIDS(he, mxw_grad_op(g, "sum", along, MXW_GIDS(og))));
    snprintf(scale, sizeof scale, "%.17g", -1.0 / t);
  }
  if (log || t != 1.0) dy = mxw_grad_op(g, "_mul_scalar", MXW_KV("scalar", scale), MXW_GIDS(dy));
  MXW_TRY(mxw_grad_set(g, 0, dg));
  return mxw_grad_set(g, 1, dy);
}
static int grad2_softmax(mxw_grad_ctx *g) { return grad2_softmax_with(g, 0); }
static int grad2_log_softmax(mxw_grad_ctx *g) { return grad2_softmax_with(g, 1); }

#define SOFTMAX_BACKWARD_OP(VAR, NAME, FWD, DOC, GRAD2)                        \
  static const mxw_op_def VAR = {.name = NAME,                                 \
                                 .doc = MXW_DOC(DOC),                          \
                                 .attrs = k_softmax_attrs,                     \
                                 .num_attrs = 4,                               \
                                 .param_size = sizeof(SoftmaxParam),           \
                                 .num_inputs = 2,                              \
                                 .input_names = k_softmax_backward_inputs,     \
                                 .num_inputs_fn = softmax_backward_num_inputs, \
                                 .input_name_fn = softmax_backward_input_name, \
                                 .num_outputs = 1,                             \
                                 .infer_shape = infer_softmax_backward,        \
                                 .infer_type = infer_softmax_backward_type,    \
                                 .half_as_f32 = 1,                             \
                                 .forward = FWD,                               \
                                 .gradient = GRAD2};
SOFTMAX_BACKWARD_OP(op_backward_softmax, "_backward_softmax", fwd_backward_softmax,
                    "the gradient of softmax: y (ograd - sum(ograd y)) / T along the axis", grad2_softmax)
SOFTMAX_BACKWARD_OP(op_backward_log_softmax, "_backward_log_softmax", fwd_backward_log_softmax,
                    "the gradient of log_softmax: (ograd - exp(y) sum(ograd)) / T along the axis", grad2_log_softmax)

/* ==== SoftmaxActivation ========================================================================== */
enum { ACT_INSTANCE, ACT_CHANNEL };
static const char *const k_act_modes[] = {"instance", "channel", NULL};
typedef struct {
  int mode;
} SoftmaxActivationParam;
static const mxw_attr_spec k_softmax_act_attrs[] = {
    MXW_A_ENUM("mode", SoftmaxActivationParam, mode, "instance", k_act_modes,
               "instance: over the last axis; channel: over axis 1 of (N, C, ...)"),
};

static int infer_softmax_act(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const SoftmaxActivationParam *p = (const SoftmaxActivationParam *)param;
  MXW_TRY(same_shape(&in[0], &out[0]));
  char buf[128];
  if (p->mode == ACT_CHANNEL && in[0].ndim >= 0 && in[0].ndim < 2)
    return mxw_fail("mode='channel' needs data of at least 2 dimensions (N, C, ...), got shape %s",
                    mxw_shape_str(&in[0], buf, sizeof buf));
  return 0;
}

static int fwd_softmax_act(const mxw_op_call *c) {
  const SoftmaxActivationParam *p = (const SoftmaxActivationParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  softmax_plan plan = {.temperature = 1.0};
  view_around(&in->shape, p->mode == ACT_CHANNEL ? 1 : (in->shape.ndim ? in->shape.ndim - 1 : 0), &plan);
  return softmax_run(&plan, in, &c->outputs[0]);
}

/* Gradient: _backward_SoftmaxActivation(ograd, output), softmax's y (ograd - sum(ograd y)). */
static int fwd_backward_softmax_act(const mxw_op_call *c) {
  const SoftmaxActivationParam *p = (const SoftmaxActivationParam *)c->param;
  const mxw_tensor *y = &c->inputs[1];
  softmax_plan plan = {.temperature = 1.0};
  view_around(&y->shape, p->mode == ACT_CHANNEL ? 1 : (y->shape.ndim ? y->shape.ndim - 1 : 0), &plan);
  return softmax_backward_run(&plan, &c->inputs[0], y, &c->outputs[0]);
}
static int grad_softmax_act(mxw_grad_ctx *g) {
  mxw_gid dx;
  MXW_TRY(
      mxw_grad_op_fwd(g, "_backward_SoftmaxActivation", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 0)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}
static const char *const k_ograd_output[] = {"ograd", "output", NULL};

static const mxw_op_def op_SoftmaxActivation = {
    .name = "SoftmaxActivation",
    .doc = MXW_DOC("softmax over the last axis (instance) or over channels (channel)"),
    .attrs = k_softmax_act_attrs,
    .num_attrs = 1,
    .param_size = sizeof(SoftmaxActivationParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_softmax_act,
    .half_as_f32 = 1,
    .forward = fwd_softmax_act,
    .gradient = grad_softmax_act};
static const mxw_op_def op_backward_SoftmaxActivation = {
    .name = "_backward_SoftmaxActivation",
    .doc = MXW_DOC("the gradient of SoftmaxActivation from (ograd, output)"),
    .attrs = k_softmax_act_attrs,
    .num_attrs = 1,
    .param_size = sizeof(SoftmaxActivationParam),
    .num_inputs = 2,
    .input_names = k_ograd_output,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .half_as_f32 = 1,
    .forward = fwd_backward_softmax_act,
    .inplace = 1};

/* ==== SoftmaxOutput ================================================================================ */
enum { NORM_NULL, NORM_BATCH, NORM_VALID };
static const char *const k_norm_modes[] = {"null", "batch", "valid", NULL};
typedef struct {
  double grad_scale, ignore_label;
  int multi_output, use_ignore, preserve_shape, normalization, out_grad;
  double smooth_alpha;
} SoftmaxOutputParam;

static const mxw_attr_spec k_softmax_output_attrs[] = {
    MXW_A_FLOAT("grad_scale", SoftmaxOutputParam, grad_scale, "1", "scales the gradient (training only)"),
    MXW_A_FLOAT("ignore_label", SoftmaxOutputParam, ignore_label, "-1",
                "label ignored with use_ignore (training only)"),
    MXW_A_BOOL("multi_output", SoftmaxOutputParam, multi_output, "False", "softmax over axis 1 of (N, C, ...)"),
    MXW_A_BOOL("use_ignore", SoftmaxOutputParam, use_ignore, "False", "skip ignore_label in the gradient"),
    MXW_A_BOOL("preserve_shape", SoftmaxOutputParam, preserve_shape, "False", "softmax over the last axis"),
    MXW_A_ENUM("normalization", SoftmaxOutputParam, normalization, "null", k_norm_modes,
               "gradient normalisation (training only)"),
    MXW_A_BOOL("out_grad", SoftmaxOutputParam, out_grad, "False", "multiply by the output gradient (training only)"),
    MXW_A_FLOAT("smooth_alpha", SoftmaxOutputParam, smooth_alpha, "0", "label smoothing in [0, 1] (training only)"),
};

static int validate_softmax_output(void *param) {
  const SoftmaxOutputParam *p = (const SoftmaxOutputParam *)param;
  MXW_CHECK(p->smooth_alpha >= 0 && p->smooth_alpha <= 1, "smooth_alpha=%g is outside [0, 1]", p->smooth_alpha);
  return 0;
}

/* Label shape: a probability label of the data's shape is accepted as is; otherwise it is the
 * data shape without the last dim, or (N, prod(spatial)) with multi_output ((N, spatial...) and
 * (N, 1, spatial...) are accepted too). An unknown label is filled. */
static int infer_softmax_output(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const SoftmaxOutputParam *p = (const SoftmaxOutputParam *)param;
  MXW_TRY(same_shape(&in[0], &out[0]));
  const mxw_shape *d = &in[0];
  mxw_shape *label = &in[1];
  if (d->ndim < 0) return 0;
  char a[128], b[128], e[128];
  if (p->multi_output && d->ndim < 2)
    return mxw_fail("multi_output needs data of at least 2 dimensions (N, C, ...), got shape %s",
                    mxw_shape_str(d, a, sizeof a));
  if (label->ndim >= 0 && mxw_shape_equal(label, d)) return 0;
  if (!p->multi_output) {
    mxw_shape l;
    memset(&l, 0, sizeof l);
    for (int i = 0; i + 1 < d->ndim; i++) l.dims[l.ndim++] = d->dims[i];
    if (label->ndim >= 0 && !mxw_shape_known(label)) return mxw_shape_assign(label, &l, "label");
    if (label->ndim >= 0 && !mxw_shape_equal(label, &l))
      return mxw_fail("label shape %s does not fit data shape %s: expected %s (or the data shape)",
                      mxw_shape_str(label, a, sizeof a), mxw_shape_str(d, b, sizeof b), mxw_shape_str(&l, e, sizeof e));
    *label = l;
    return 0;
  }
  mxw_shape l1, l2, l3 = *d;
  memset(&l1, 0, sizeof l1);
  memset(&l2, 0, sizeof l2);
  int64_t spatial = 1;
  for (int i = 2; i < d->ndim; i++) spatial = (spatial < 0 || d->dims[i] < 0) ? -1 : spatial * d->dims[i];
  l1.ndim = 2;
  l1.dims[0] = d->dims[0];
  l1.dims[1] = spatial;
  l2.dims[l2.ndim++] = d->dims[0];
  for (int i = 2; i < d->ndim; i++) l2.dims[l2.ndim++] = d->dims[i];
  l3.dims[1] = 1;
  if (label->ndim < 0) {
    *label = l1;
    return 0;
  }
  if (mxw_shape_equal(label, &l1) || mxw_shape_equal(label, &l2) || mxw_shape_equal(label, &l3)) return 0;
  return mxw_fail("label shape %s does not fit data shape %s with multi_output: expected %s or %s",
                  mxw_shape_str(label, a, sizeof a), mxw_shape_str(d, b, sizeof b), mxw_shape_str(&l1, e, sizeof e),
                  mxw_shape_str(&l2, a, sizeof a));
}

static int fwd_softmax_output(const mxw_op_call *c) {
  const SoftmaxOutputParam *p = (const SoftmaxOutputParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  const mxw_shape *s = &in->shape;
  softmax_plan plan = {.temperature = 1.0};
  if (p->multi_output) {
    view_around(s, 1, &plan); /* (N, C, rest) */
  } else if (p->preserve_shape) {
    view_around(s, s->ndim ? s->ndim - 1 : 0, &plan);
  } else { /* (N, size / N) */
    int64_t size = mxw_shape_size(s);
    plan.outer = s->ndim ? s->dims[0] : 1;
    plan.n = plan.outer ? size / plan.outer : 0;
    plan.inner = 1;
  }
  return softmax_run(&plan, in, &c->outputs[0]);
}

/* Gradient (MXNet's SoftmaxOutput Backward, softmax_output-inl.h): the cross-entropy gradient
 * itself, from the output and the label; the head gradient is not used (only with out_grad).
 *  - a label of the output's shape (probabilities): dx = (y - label) * grad_scale;
 *  - multi_output, y (N, C, R) and label (N, R): dx = y - onehot(label) along C, rows whose label is
 *    ignore_label zero with use_ignore; scaled by grad_scale / R / valid (normalization null: 1,
 *    batch: N) or grad_scale / valid (valid: the labels != ignore_label, at least 1);
 *  - otherwise y as (rows, C) -- (N, size/N), or (size/last, last) with preserve_shape -- and one
 *    label per row: the same with label smoothing (smooth_alpha: the label entry gets
 *    y - 1 + alpha, the others y - alpha / (C - 1)), scaled by grad_scale / valid (null: 1,
 *    batch: rows, valid: as above).
 * Labels are truncated to int (static_cast<int>); a label outside [0, C) marks nothing.
 * out_grad=True multiplies by the head gradient as documented (MXNet 1.9.1's FCompute passes the
 * output in its place). */
/* static_cast<int>(label), with NaN and out-of-range values pinned so the conversion is defined */
static int label_int(double v) {
  return v != v ? 0 : v >= 2147483647.0 ? 2147483647 : v <= -2147483648.0 ? (-2147483647 - 1) : (int)v;
}
static int softmax_output_backward_num_inputs(const void *param) {
  return ((const SoftmaxOutputParam *)param)->out_grad ? 3 : 2;
}
static const char *const k_softmax_output_backward_inputs[] = {"output", "label", "ograd", NULL};

/* Rows [o0, o1) of the (outer, C, inner) view, one label per (o, i). */
typedef struct {
  const mxw_tensor *y, *label, *og;
  mxw_tensor *dx;
  int64_t C, inner;
  int use_ignore, ignore;
  double scale, on, off;
} so_grad_job;

static void so_grad_chunk(void *ctx, int64_t o0, int64_t o1) {
  const so_grad_job *J = (const so_grad_job *)ctx;
  const int64_t C = J->C, inner = J->inner;
  for (int64_t o = o0; o < o1; o++) {
    for (int64_t i = 0; i < inner; i++) {
      int k = label_int(mxw_load_f64(J->label->data, J->label->dtype, o * inner + i));
      int skip = J->use_ignore && k == J->ignore;
      for (int64_t j = 0; j < C; j++) {
        int64_t at = (o * C + j) * inner + i;
        double v = 0.0;
        if (!skip) v = (mxw_load_f64(J->y->data, J->y->dtype, at) - (j == k ? J->on : J->off)) * J->scale;
        if (J->og) v *= mxw_load_f64(J->og->data, J->og->dtype, at);
        mxw_store_f64(J->dx->data, J->dx->dtype, at, v);
      }
    }
  }
}

static int fwd_backward_softmax_output(const mxw_op_call *c) {
  const SoftmaxOutputParam *p = (const SoftmaxOutputParam *)c->param;
  const mxw_tensor *y = &c->inputs[0], *label = &c->inputs[1], *og = p->out_grad ? &c->inputs[2] : NULL;
  mxw_tensor *dx = &c->outputs[0];
  const mxw_shape *s = &y->shape;
  int64_t size = mxw_tensor_size(y);
  if (size == 0) return 0;
  const int ignore = label_int(p->ignore_label);
  double scale;
  if (mxw_shape_equal(&label->shape, s)) { /* probabilities as the label */
    for (int64_t i = 0; i < size; i++) {
      double v = (mxw_load_f64(y->data, y->dtype, i) - mxw_load_f64(label->data, label->dtype, i)) * p->grad_scale;
      if (og) v *= mxw_load_f64(og->data, og->dtype, i);
      mxw_store_f64(dx->data, dx->dtype, i, v);
    }
    return 0;
  }
  /* (outer, C, inner) with one label per (outer, inner) */
  int64_t outer, C, inner;
  int smooth = 0;
  if (p->multi_output) {
    outer = s->dims[0];
    C = s->dims[1];
    inner = (outer != 0 && C != 0) ? size / outer / C : 0;
  } else {
    C = p->preserve_shape ? (s->ndim ? s->dims[s->ndim - 1] : 1) : (s->ndim ? size / s->dims[0] : 1);
    outer = C ? size / C : 0;
    inner = 1;
    smooth = p->smooth_alpha != 0.0;
  }
  /* MXNet counts over the whole label (for (N, d1, d2) data without preserve_shape that is N * d1
   * labels of which the N rows read the first N), and 'batch' is its first dim: N with
   * multi_output, the label size otherwise (it is viewed as 1-D) */
  int64_t nlabels = mxw_tensor_size(label), valid = nlabels;
  if (p->normalization == NORM_BATCH) {
    valid = p->multi_output ? outer : nlabels;
  } else if (p->normalization == NORM_VALID) {
    for (int64_t k = 0; k < nlabels; k++)
      if (label_int(mxw_load_f64(label->data, label->dtype, k)) == ignore) valid--;
    if (valid == 0) valid = 1;
  } else {
    valid = 1;
  }
  scale = p->multi_output ? p->grad_scale / (p->normalization == NORM_VALID ? 1.0 : (double)inner) / (double)valid
                          : p->grad_scale / (double)valid;
  /* MXNet's smoothing spreads alpha over the other C - 1 classes (in float) */
  double off = smooth ? (double)(float)(p->smooth_alpha / (double)(C - 1)) : 0.0;
  double on = smooth ? 1.0 - (double)(float)p->smooth_alpha : 1.0;
  so_grad_job j = {y, label, og, dx, C, inner, p->use_ignore, ignore, scale, on, off};
  mxw_parallel_run(outer, 1, 4.0 * (double)(C * inner), so_grad_chunk, &j);
  return 0;
}
static int infer_softmax_output_backward(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  return mxw_shape_assign(&out[0], &in[0], "output");
}
static int grad_softmax_output(mxw_grad_ctx *g) {
  const SoftmaxOutputParam *p = (const SoftmaxOutputParam *)mxw_grad_param(g);
  mxw_gid dx;
  if (p->out_grad)
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_SoftmaxOutput",
                            MXW_GIDS(mxw_grad_out(g, 0), mxw_grad_in(g, 1), mxw_grad_ograd(g, 0)), &dx, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_SoftmaxOutput", MXW_GIDS(mxw_grad_out(g, 0), mxw_grad_in(g, 1)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_SoftmaxOutput = {
    .name = "SoftmaxOutput",
    .aliases = ALIASES("Softmax"),
    .doc = MXW_DOC("softmax output layer: rows of (N, size/N), channels with multi_output, the last axis with "
                   "preserve_shape (its gradient is the cross-entropy's: y - onehot(label), scaled)"),
    .attrs = k_softmax_output_attrs,
    .num_attrs = 8,
    .param_size = sizeof(SoftmaxOutputParam),
    .validate = validate_softmax_output,
    .num_inputs = 2,
    .input_names = k_data_label,
    .num_outputs = 1,
    .infer_shape = infer_softmax_output,
    .half_as_f32 = 1,
    .forward = fwd_softmax_output,
    .gradient = grad_softmax_output};
static const mxw_op_def op_backward_SoftmaxOutput = {
    .name = "_backward_SoftmaxOutput",
    .doc = MXW_DOC(
        "the gradient of SoftmaxOutput from (output, label[, ograd]): y - onehot(label), scaled and normalised"),
    .attrs = k_softmax_output_attrs,
    .num_attrs = 8,
    .param_size = sizeof(SoftmaxOutputParam),
    .num_inputs = 2,
    .input_names = k_softmax_output_backward_inputs,
    .num_inputs_fn = softmax_output_backward_num_inputs,
    .num_outputs = 1,
    .infer_shape = infer_softmax_output_backward,
    .infer_type = mxw_infer_type_first,
    .half_as_f32 = 1,
    .forward = fwd_backward_softmax_output};

/* ==== regression outputs ============================================================================ */
typedef struct {
  double grad_scale;
} RegressionParam;
static const mxw_attr_spec k_regression_attrs[] = {
    MXW_A_FLOAT("grad_scale", RegressionParam, grad_scale, "1", "scales the gradient (training only)"),
};

/* Label: the data shape, or (N,) for (N, 1) data, filled when unknown; a given label must have
 * the data's first dim and size. */
static int infer_regression(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  MXW_TRY(same_shape(&in[0], &out[0]));
  const mxw_shape *d = &in[0];
  mxw_shape *label = &in[1];
  if (!mxw_shape_known(d)) return 0;
  if (label->ndim < 0) {
    if (d->ndim == 2 && d->dims[1] == 1)
      *label = mxw_shape_make(1, d->dims);
    else
      *label = *d;
    return 0;
  }
  char a[128], b[128];
  if (!mxw_shape_known(label)) return mxw_shape_assign(label, d, "label");
  if (d->ndim == 0 || label->ndim == 0 || label->dims[0] != d->dims[0] || mxw_shape_size(label) != mxw_shape_size(d))
    return mxw_fail("label shape %s does not fit data shape %s: it needs the same first dim and size",
                    mxw_shape_str(label, a, sizeof a), mxw_shape_str(d, b, sizeof b));
  return 0;
}

static int fwd_identity_output(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  memcpy(c->outputs[0].data, in->data, (size_t)mxw_tensor_size(in) * (size_t)mxw_dtype_size(in->dtype));
  return 0;
}

static int fwd_logistic_output(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(in);
  if (in->dtype == MXW_FLOAT32) {
    const float *x = (const float *)in->data;
    float *y = (float *)out->data;
    mxw_vsigmoid_f32(x, y, n); /* 1 / (1 + exp(-x)) */
  } else {
    for (int64_t i = 0; i < n; i++)
      mxw_store_f64(out->data, out->dtype, i, 1.0 / (1.0 + exp(-mxw_load_f64(in->data, in->dtype, i))));
  }
  return 0;
}

/* Gradients (MXNet's RegressionOpGrad / RegressionBackward): _backward_<kind>_reg_out(label,
 * output) = BackwardOp(y, label) * grad_scale / num_output, num_output = label size / label.dims[0];
 * BackwardOp is y - label (linear, logistic) or sign-like (y - label > 0 ? 1 : -1, MAE). The head
 * gradient is not used; the label gets none. */
static int regression_backward(const mxw_op_call *c, int mae) {
  const RegressionParam *p = (const RegressionParam *)c->param;
  const mxw_tensor *label = &c->inputs[0], *y = &c->inputs[1];
  mxw_tensor *dx = &c->outputs[0];
  int64_t n = mxw_tensor_size(dx);
  if (n == 0) return 0;
  int64_t lsize = mxw_tensor_size(label);
  double num_output = label->shape.ndim && label->shape.dims[0] ? (double)(lsize / label->shape.dims[0]) : 1.0;
  double scale = p->grad_scale / num_output;
  if (!mae && y->dtype == MXW_FLOAT32 && label->dtype == MXW_FLOAT32 && dx->dtype == MXW_FLOAT32) {
    const float *ys = (const float *)y->data, *ls = (const float *)label->data;
    float *d = (float *)dx->data, sc = (float)scale;
    for (int64_t i = 0; i < n; i++) d[i] = (ys[i] - ls[i]) * sc;
    return 0;
  }
  for (int64_t i = 0; i < n; i++) {
    double diff = mxw_load_f64(y->data, y->dtype, i) - mxw_load_f64(label->data, label->dtype, i);
    mxw_store_f64(dx->data, dx->dtype, i, (mae ? (diff > 0 ? 1.0 : -1.0) : diff) * scale);
  }
  return 0;
}
static int fwd_backward_linear_reg(const mxw_op_call *c) { return regression_backward(c, 0); }
static int fwd_backward_mae_reg(const mxw_op_call *c) { return regression_backward(c, 1); }
static const char *const k_label_output[] = {"label", "output", NULL};

#define REGRESSION_OP(NAME, FWD, DOC, BWD_NAME, BWD_FWD)                                                          \
  static int grad_##NAME(mxw_grad_ctx *g) {                                                                       \
    mxw_gid dx;                                                                                                   \
    MXW_TRY(mxw_grad_op_fwd(g, BWD_NAME, MXW_GIDS(mxw_grad_in(g, 1), mxw_grad_out(g, 0)), &dx, 1));               \
    return mxw_grad_set(g, 0, dx);                                                                                \
  }                                                                                                               \
  static const mxw_op_def op_##NAME = {.name = #NAME,                                                             \
                                       .doc = MXW_DOC(DOC),                                                       \
                                       .attrs = k_regression_attrs,                                               \
                                       .num_attrs = 1,                                                            \
                                       .param_size = sizeof(RegressionParam),                                     \
                                       .num_inputs = 2,                                                           \
                                       .input_names = k_data_label,                                               \
                                       .num_outputs = 1,                                                          \
                                       .infer_shape = infer_regression,                                           \
                                       .forward = FWD,                                                            \
                                       .gradient = grad_##NAME};                                                  \
  static const mxw_op_def op_backward_##NAME = {.name = BWD_NAME,                                                 \
                                                .doc = MXW_DOC("the gradient of " #NAME " from (label, output)"), \
                                                .attrs = k_regression_attrs,                                      \
                                                .num_attrs = 1,                                                   \
                                                .param_size = sizeof(RegressionParam),                            \
                                                .num_inputs = 2,                                                  \
                                                .input_names = k_label_output,                                    \
                                                .num_outputs = 1,                                                 \
                                                .infer_shape = mxw_infer_shape_second,                            \
                                                .infer_type = mxw_infer_type_second,                              \
                                                .forward = BWD_FWD};
REGRESSION_OP(LinearRegressionOutput, fwd_identity_output,
              "identity forward; gradient (y - label) * grad_scale / num_output", "_backward_linear_reg_out",
              fwd_backward_linear_reg)
REGRESSION_OP(MAERegressionOutput, fwd_identity_output,
              "identity forward; gradient sign(y - label) * grad_scale / num_output", "_backward_mae_reg_out",
              fwd_backward_mae_reg)
REGRESSION_OP(LogisticRegressionOutput, fwd_logistic_output,
              "sigmoid forward; gradient (y - label) * grad_scale / num_output", "_backward_logistic_reg_out",
              fwd_backward_linear_reg)

MXW_FAMILY(softmax, &op_softmax, &op_log_softmax, &op_softmin, &op_SoftmaxActivation, &op_SoftmaxOutput,
           &op_LinearRegressionOutput, &op_MAERegressionOutput, &op_LogisticRegressionOutput, &op_backward_softmax,
           &op_backward_log_softmax, &op_backward_SoftmaxActivation, &op_backward_SoftmaxOutput,
           &op_backward_LinearRegressionOutput, &op_backward_MAERegressionOutput,
           &op_backward_LogisticRegressionOutput);
