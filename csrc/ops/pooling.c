/* pooling.c -- Pooling (max, avg, sum, lp) over 1, 2 or 3 spatial dims.
 * Semantics: ../shared/spec/ops.md §1 "Pooling" (MXNet 1.9.1 pooling.cc / pool.h).
 *
 * Shapes: data (N, C, W) / (N, C, H, W) / (N, C, D, H, W) -> (N, C, Wo) / ..., or with a
 * channel-last layout (NWC, NHWC, NDHWC) data (N, W, C) / ... -> (N, Wo, C) / ..., with, per
 * spatial dim (in, k, s, p):
 *   valid:  1 + floor((in + 2p - k) / s)
 *   full:   1 + (int)ceil((float)(in + 2p - k) / s)      (float32 division, as MXNet)
 *   same:   (int)ceil((float)in / s)                      (1-D only, pad 0)
 *   global: 1 (kernel = whole spatial extent, stride 1, pad 0)
 *
 * Windows, for output o of one dim, start = o*s - p:
 *   max:      cells [max(start, 0), min(start + k, in)); padded cells never take part; an empty
 *             window gives the lowest finite value (-FLT_MAX for float32).
 *   avg:      end = min(start + k, in + p); pool_size = product of (end - start) over the dims,
 *             taken BEFORE clipping to [0, in) (padding counts, the part of a `full` window past
 *             in + p does not); count_include_pad=False counts only in-range cells. Output is
 *             sum(x / pool_size), each element divided before it is added.
 *   sum:      the avg window, divisor 1.        lp: (sum x^p)^(1/p) over it, p in {1, 2, 3}.
 * float32 and float16/bfloat16 accumulate in float, float64 in double.
 *
 * Kernels: pool_point_* computes one output cell (the readable reference); pool_plane_f32 uses
 * it on the borders and, for 2-D 2x2/3x3 max/avg/sum windows, a SIMD row kernel on the interior
 * where no window is clipped (same arithmetic in the same order, so the results are identical).
 * Channel-last data is pooled in place by pool_last_*: each output cell is a vector of C
 * channels, and every channel goes through its window in the same (d, h, w) order with the same
 * arithmetic as pool_point_*, so both layouts give the same values. Gradients likewise.
 *
 * Threads: channel-first work splits over the N*C planes, channel-last forward over the output
 * rows (n, od, oh), channel-last backward over (n, block of channels) (windows overlap, so a
 * gradient cell gathers from several output cells: each cell's sum keeps the output order). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <simde/wasm/simd128.h>
#endif

#include "../core/mxw_parallel.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define SHAPE_STR(s, buf) mxw_shape_str((s), (buf), sizeof(buf))

static const char *const k_data[] = {"data", NULL};

enum { POOL_MAX, POOL_AVG, POOL_SUM, POOL_LP };
enum { CONV_FULL, CONV_VALID, CONV_SAME };
enum { LAYOUT_NCW, LAYOUT_NCHW, LAYOUT_NCDHW, LAYOUT_NWC, LAYOUT_NHWC, LAYOUT_NDHWC };
static const char *const k_pool_types[] = {"max", "avg", "sum", "lp", NULL};
static const char *const k_conventions[] = {"full", "valid", "same", NULL};
static const char *const k_layouts[] = {"NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC", NULL};

typedef struct {
  mxw_tuple kernel;
  int pool_type;
  int global_pool;
  int cudnn_off;
  int pooling_convention;
  mxw_tuple stride;
  mxw_tuple pad;
  mxw_opt_int p_value;
  mxw_opt_int count_include_pad;
  mxw_opt_int layout;
} PoolingParam;

static const mxw_attr_spec k_pooling_attrs[] = {
    MXW_A_SHAPE("kernel", PoolingParam, kernel, "()", "window: (w,), (h, w) or (d, h, w); ignored with global_pool"),
    MXW_A_ENUM("pool_type", PoolingParam, pool_type, "max", k_pool_types, "max, avg, sum or lp (p-norm) pooling"),
    MXW_A_BOOL("global_pool", PoolingParam, global_pool, "False", "pool over the whole spatial extent"),
    MXW_A_BOOL("cudnn_off", PoolingParam, cudnn_off, "False", "ignored (GPU only)"),
    MXW_A_ENUM("pooling_convention", PoolingParam, pooling_convention, "valid", k_conventions,
               "output size rule: valid (floor), full (ceil) or same (1-D only)"),
    MXW_A_SHAPE("stride", PoolingParam, stride, "()", "window step per spatial dim; () means 1"),
    MXW_A_SHAPE("pad", PoolingParam, pad, "()", "symmetric padding per spatial dim; () means 0"),
    MXW_A_OPT_INT("p_value", PoolingParam, p_value, "None", "p of lp pooling (1, 2 or 3)"),
    MXW_A_OPT_BOOL("count_include_pad", PoolingParam, count_include_pad, "None",
                   "avg: count padded cells in the divisor (None means True)"),
    MXW_A_OPT_ENUM("layout", PoolingParam, layout, "None", k_layouts,
                   "data layout: NCW, NCHW, NCDHW (the default by rank) or channel-last NWC, NHWC, NDHWC"),
};

static int validate_pooling(void *param) {
  PoolingParam *p = (PoolingParam *)param;
  int nk = p->kernel.ndim;
  if (!p->global_pool) {
    MXW_CHECK(nk > 0, "kernel is required unless global_pool=True");
  }
  MXW_CHECK(nk <= 3, "kernel has %d dims; Pooling supports 1-D, 2-D and 3-D windows", nk);
  for (int i = 0; i < nk; i++)
    MXW_CHECK(p->kernel.v[i] > 0, "kernel[%d] = %lld must be positive", i, (long long)p->kernel.v[i]);
  if (p->pool_type == POOL_LP) {
    MXW_CHECK(p->p_value.has, "pool_type='lp' needs p_value (1, 2 or 3)");
    MXW_CHECK(p->p_value.v >= 1 && p->p_value.v <= 3, "p_value=%lld is not supported: lp pooling takes 1, 2 or 3",
              (long long)p->p_value.v);
  }
  /* stride / pad: () means 1 / 0 for every kernel dim; otherwise one entry per kernel dim. */
  if (nk > 0) {
    if (p->stride.ndim == 0) {
      p->stride.ndim = nk;
      for (int i = 0; i < nk; i++) p->stride.v[i] = 1;
    }
    if (p->pad.ndim == 0) {
      p->pad.ndim = nk;
      for (int i = 0; i < nk; i++) p->pad.v[i] = 0;
    }
    MXW_CHECK(p->stride.ndim == nk, "stride has %d entries but kernel has %d", p->stride.ndim, nk);
    MXW_CHECK(p->pad.ndim == nk, "pad has %d entries but kernel has %d", p->pad.ndim, nk);
    for (int i = 0; i < nk; i++) {
      MXW_CHECK(p->stride.v[i] > 0, "stride[%d] = %lld must be positive", i, (long long)p->stride.v[i]);
      MXW_CHECK(p->pad.v[i] >= 0, "pad[%d] = %lld must not be negative", i, (long long)p->pad.v[i]);
    }
  }
  return 0;
}

/* ---- geometry --------------------------------------------------------------------------------- */
/* Spatial geometry normalised to 3 dims (d, h, w): a 1-D or 2-D pooling gets leading dims of
 * size 1 with kernel 1, stride 1, pad 0, which change nothing. */
typedef struct {
  int64_t in[3], out[3], k[3], s[3], p[3];
  int type, p_value, include_pad;
} pool_geom;

static int64_t pool_out_size(int conv, int64_t in, int64_t k, int64_t s, int64_t p) {
  if (conv == CONV_VALID) return 1 + (in + 2 * p - k) / s;
  if (conv == CONV_FULL) return 1 + (int64_t)ceilf((float)(in + 2 * p - k) / (float)s);
  return (int64_t)ceilf((float)(in + 2 * p) / (float)s);
}

static char *tuple_str(const mxw_tuple *t, char *buf, size_t len) {
  mxw_shape s = mxw_shape_make(t->ndim, t->v);
  return mxw_shape_str(&s, buf, len);
}

static int is_chan_last(const PoolingParam *p) { return p->layout.has && p->layout.v >= LAYOUT_NWC; }

static int infer_pooling(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const PoolingParam *p = (const PoolingParam *)param;
  const mxw_shape *d = &in[0];
  char a[128], b[128];
  if (d->ndim < 0) return 0;
  const int last = is_chan_last(p);
  MXW_CHECK(d->ndim >= 3 && d->ndim <= 5, "input data should be 3-D %s, 4-D %s or 5-D %s; got shape %s",
            last ? "(N, W, C)" : "(N, C, W)", last ? "(N, H, W, C)" : "(N, C, H, W)",
            last ? "(N, D, H, W, C)" : "(N, C, D, H, W)", SHAPE_STR(d, a));
  int nsp = d->ndim - 2;
  if (p->layout.has)
    MXW_CHECK(p->layout.v == (last ? nsp + 2 : nsp - 1),
              "layout %s does not match %d-D data of shape %s (expected %s or %s)", k_layouts[p->layout.v], d->ndim,
              SHAPE_STR(d, a), k_layouts[nsp - 1], k_layouts[nsp + 2]);
  const int sp0 = last ? 1 : 2; /* axis of the first spatial dim */
  if (p->pooling_convention == CONV_SAME && !p->global_pool) {
    MXW_CHECK(d->ndim == 3, "pooling_convention='same' supports 1-D pooling only (3-D data), got shape %s",
              SHAPE_STR(d, a));
    for (int i = 0; i < p->pad.ndim; i++)
      MXW_CHECK(p->pad.v[i] == 0, "pooling_convention='same' does not allow a pad (pad[%d] = %lld)", i,
                (long long)p->pad.v[i]);
  }
  mxw_shape o = *d;
  if (p->global_pool) {
    for (int i = 0; i < nsp; i++) o.dims[sp0 + i] = 1;
  } else {
    MXW_CHECK(p->kernel.ndim == nsp, "kernel %s has %d dims, so data must be %d-D; got shape %s",
              tuple_str(&p->kernel, b, sizeof b), p->kernel.ndim, p->kernel.ndim + 2, SHAPE_STR(d, a));
    for (int i = 0; i < nsp; i++) {
      int64_t n = d->dims[sp0 + i], k = p->kernel.v[i], s = p->stride.v[i], pd = p->pad.v[i];
      if (n < 0) {
        o.dims[sp0 + i] = -1;
        continue;
      }
      MXW_CHECK(k <= n + 2 * pd,
                "kernel size %lld exceeds input size %lld (padded to %lld) in spatial dim %d of data shape %s",
                (long long)k, (long long)n, (long long)(n + 2 * pd), i, SHAPE_STR(d, a));
      o.dims[sp0 + i] = pool_out_size(p->pooling_convention, n, k, s, pd);
    }
  }
  return mxw_shape_assign(&out[0], &o, "output");
}

static int infer_type_pooling(const void *param, int nin, int *in, int nout, int *out) {
  MXW_TRY(mxw_infer_type_same(param, nin, in, nout, out));
  int t = in[0];
  MXW_CHECK(t < 0 || t == MXW_FLOAT32 || t == MXW_FLOAT64 || t == MXW_FLOAT16 || t == MXW_BFLOAT16,
            "data dtype %s is not supported: Pooling takes float32, float64, float16 or bfloat16", mxw_dtype_name(t));
  return 0;
}

static void make_geom(const PoolingParam *p, const mxw_shape *ishape, const mxw_shape *oshape, pool_geom *g) {
  int nsp = ishape->ndim - 2, off = 3 - nsp;
  for (int i = 0; i < 3; i++) {
    g->in[i] = g->out[i] = g->k[i] = g->s[i] = 1;
    g->p[i] = 0;
  }
  for (int i = 0; i < nsp; i++) {
    g->in[off + i] = ishape->dims[2 + i];
    g->out[off + i] = oshape->dims[2 + i];
    if (p->global_pool) {
      g->k[off + i] = ishape->dims[2 + i];
    } else {
      g->k[off + i] = p->kernel.v[i];
      g->s[off + i] = p->stride.v[i];
      g->p[off + i] = p->pad.v[i];
    }
  }
  g->type = p->pool_type;
  g->p_value = p->pool_type == POOL_LP ? (int)p->p_value.v : 1;
  g->include_pad = p->count_include_pad.has ? (int)p->count_include_pad.v : 1;
}

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The window of the output cell whose corner is (d0, h0, w0) (= out * stride - pad), clipped to
 * the data: [lo, hi) per axis (d, h, w). Returns average pooling's divisor: the window clipped to
 * the padded data (count_include_pad, MXNet's default) or only its in-range cells; 1 for the
 * other pool types. The kernels of both layouts, forward and backward, take their window here. */
static inline int64_t pool_window(const pool_geom *g, int64_t d0, int64_t h0, int64_t w0, int64_t lo[3],
                                  int64_t hi[3]) {
  const int64_t c[3] = {d0, h0, w0};
  int64_t padded = 1, in_range = 1;
  for (int a = 0; a < 3; a++) {
    const int64_t e = min64(c[a] + g->k[a], g->in[a] + g->p[a]);
    padded *= e - c[a];
    lo[a] = max64(c[a], 0);
    hi[a] = min64(e, g->in[a]);
    in_range *= hi[a] - lo[a];
  }
  if (g->type != POOL_AVG) return 1;
  return g->include_pad ? padded : in_range;
}

/* ---- the reference kernel: one output cell --------------------------------------------------- */
/* x is one (D, H, W) plane. T is the accumulation type (float or double), LOWEST its lowest
 * finite value. */
#define DEFINE_POOL_POINT(NAME, T, LOWEST, SQRT, CBRT)                                                      \
  static T NAME(const T *x, const pool_geom *g, int64_t od, int64_t oh, int64_t ow) {                       \
    int64_t H = g->in[1], W = g->in[2];                                                                     \
    int64_t d0 = od * g->s[0] - g->p[0], h0 = oh * g->s[1] - g->p[1], w0 = ow * g->s[2] - g->p[2];          \
    if (g->type == POOL_MAX) {                                                                              \
      int64_t d1 = min64(d0 + g->k[0], g->in[0]), h1 = min64(h0 + g->k[1], H), w1 = min64(w0 + g->k[2], W); \
      d0 = max64(d0, 0);                                                                                    \
      h0 = max64(h0, 0);                                                                                    \
      w0 = max64(w0, 0);                                                                                    \
      T m = LOWEST;                                                                                         \
      for (int64_t d = d0; d < d1; d++)                                                                     \
        for (int64_t h = h0; h < h1; h++)                                                                   \
          for (int64_t w = w0; w < w1; w++) {                                                               \
            T v = x[(d * H + h) * W + w];                                                                   \
            if (v > m) m = v;                                                                               \
          }                                                                                                 \
      return m;                                                                                             \
    }                                                                                                       \
    int64_t lo_[3], hi_[3];                                                                                 \
    const int64_t pool_size = pool_window(g, d0, h0, w0, lo_, hi_);                                         \
    d0 = lo_[0];                                                                                            \
    h0 = lo_[1];                                                                                            \
    w0 = lo_[2];                                                                                            \
    const int64_t d1 = hi_[0], h1 = hi_[1], w1 = hi_[2];                                                    \
    T div = (T)pool_size, sum = 0;                                                                          \
    for (int64_t d = d0; d < d1; d++)                                                                       \
      for (int64_t h = h0; h < h1; h++)                                                                     \
        for (int64_t w = w0; w < w1; w++) {                                                                 \
          T v = x[(d * H + h) * W + w];                                                                     \
          if (g->p_value == 2)                                                                              \
            v = v * v;                                                                                      \
          else if (g->p_value == 3)                                                                         \
            v = v * v * v;                                                                                  \
          sum += v / div;                                                                                   \
        }                                                                                                   \
    if (g->p_value == 2) return SQRT(sum);                                                                  \
    if (g->p_value == 3) return CBRT(sum);                                                                  \
    return sum;                                                                                             \
  }

DEFINE_POOL_POINT(pool_point_f32, float, -FLT_MAX, sqrtf, cbrtf)
DEFINE_POOL_POINT(pool_point_f64, double, -DBL_MAX, sqrt, cbrt)

static void pool_plane_f64(const double *x, double *y, const pool_geom *g) {
  for (int64_t od = 0; od < g->out[0]; od++)
    for (int64_t oh = 0; oh < g->out[1]; oh++)
      for (int64_t ow = 0; ow < g->out[2]; ow++) *y++ = pool_point_f64(x, g, od, oh, ow);
}

/* ---- float32 fast path: 2-D 2x2 / 3x3 interior windows ---------------------------------------- */
/* Output range [lo, hi) of one dim whose windows lie wholly inside [0, in): no clipping, and the
 * avg divisor is kh*kw whether or not padding counts. */
static void interior_range(int64_t in, int64_t k, int64_t s, int64_t p, int64_t out, int64_t *lo, int64_t *hi) {
  int64_t a = (p + s - 1) / s;                            /* first o with o*s - p >= 0 */
  int64_t b = in + p - k >= 0 ? (in + p - k) / s + 1 : 0; /* past the last o with o*s - p + k <= in */
  *lo = min64(a, out);
  *hi = max64(min64(b, out), *lo);
}

/* Interior outputs [ow0, ow1) of one output row. rows[i] points at input row (oh*sh - ph + i),
 * column 0. Max keeps `v > m ? v : m` (pmax has the same NaN behaviour); avg adds v / (kh*kw) in
 * row-major window order, as the reference does. */
static void pool_row_interior_f32(const float *const *rows, int kh, int kw, int64_t sw, int64_t pw, int type, int64_t W,
                                  int64_t ow0, int64_t ow1, float *y) {
  const float div = (float)(kh * kw);
  int64_t ow = ow0;
  if (sw <= 2) {
    const v128_t vdiv = wasm_f32x4_splat(div);
    for (; ow + 4 <= ow1; ow += 4) {
      int64_t c = ow * sw - pw;
      /* stride 2 reads 8 consecutive floats per (row, j): stay inside the row */
      if (sw == 2 && c + (kw - 1) + 8 > W) break;
      v128_t acc = type == POOL_MAX ? wasm_f32x4_splat(-FLT_MAX) : wasm_f32x4_splat(0.f);
      for (int i = 0; i < kh; i++) {
        for (int j = 0; j < kw; j++) {
          const float *src = rows[i] + c + j;
          v128_t v;
          if (sw == 1) {
            v = wasm_v128_load(src);
          } else {
            v128_t lo = wasm_v128_load(src), hi = wasm_v128_load(src + 4);
            v = wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6);
          }
          if (type == POOL_MAX)
            acc = wasm_f32x4_pmax(acc, v);
          else if (type == POOL_AVG)
            acc = wasm_f32x4_add(acc, wasm_f32x4_div(v, vdiv));
          else
            acc = wasm_f32x4_add(acc, v);
        }
      }
      wasm_v128_store(y + (ow - ow0), acc);
    }
  }
  for (; ow < ow1; ow++) {
    int64_t c = ow * sw - pw;
    float acc = type == POOL_MAX ? -FLT_MAX : 0.f;
    for (int i = 0; i < kh; i++) {
      for (int j = 0; j < kw; j++) {
        float v = rows[i][c + j];
        if (type == POOL_MAX)
          acc = v > acc ? v : acc;
        else if (type == POOL_AVG)
          acc += v / div;
        else
          acc += v;
      }
    }
    y[ow - ow0] = acc;
  }
}

static int use_fast_2d(const pool_geom *g) {
  return g->in[0] == 1 && g->k[0] == 1 && g->p[0] == 0 && (g->k[1] == 2 || g->k[1] == 3) &&
         (g->k[2] == 2 || g->k[2] == 3) && (g->type == POOL_MAX || g->type == POOL_AVG || g->type == POOL_SUM);
}

/* 2-D 2x2 stride-2 max pooling without padding (LeNet, VGG): 4 outputs from two 8-wide row loads,
 * the pmax chain in the reference's order; other cells (a `full` window past the edge) by the
 * reference. */
static void pool_plane_max2x2_f32(const float *x, float *y, const pool_geom *g) {
  const int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
  const v128_t lowest = wasm_f32x4_splat(-FLT_MAX);
  for (int64_t oh = 0; oh < OH; oh++) {
    float *yr = y + oh * OW;
    int64_t ow = 0;
    if (2 * oh + 1 < H) {
      const float *r0 = x + 2 * oh * W, *r1 = r0 + W;
      for (; ow + 4 <= OW && 2 * ow + 8 <= W; ow += 4) {
        const v128_t p0 = wasm_v128_load(r0 + 2 * ow), p1 = wasm_v128_load(r0 + 2 * ow + 4);
        const v128_t q0 = wasm_v128_load(r1 + 2 * ow), q1 = wasm_v128_load(r1 + 2 * ow + 4);
        v128_t m = wasm_f32x4_pmax(lowest, wasm_i32x4_shuffle(p0, p1, 0, 2, 4, 6));
        m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(p0, p1, 1, 3, 5, 7));
        m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(q0, q1, 0, 2, 4, 6));
        m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(q0, q1, 1, 3, 5, 7));
        wasm_v128_store(yr + ow, m);
      }
    }
    for (; ow < OW; ow++) yr[ow] = pool_point_f32(x, g, 0, oh, ow);
  }
}

static void pool_plane_f32(const float *x, float *y, const pool_geom *g) {
  if (g->type == POOL_MAX && g->in[0] == 1 && g->k[0] == 1 && g->p[0] == 0 && g->k[1] == 2 && g->k[2] == 2 &&
      g->s[1] == 2 && g->s[2] == 2 && g->p[1] == 0 && g->p[2] == 0) {
    pool_plane_max2x2_f32(x, y, g);
    return;
  }
  if (!use_fast_2d(g)) {
    for (int64_t od = 0; od < g->out[0]; od++)
      for (int64_t oh = 0; oh < g->out[1]; oh++)
        for (int64_t ow = 0; ow < g->out[2]; ow++) *y++ = pool_point_f32(x, g, od, oh, ow);
    return;
  }
  int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
  int64_t oh0, oh1, ow0, ow1;
  interior_range(H, g->k[1], g->s[1], g->p[1], OH, &oh0, &oh1);
  interior_range(W, g->k[2], g->s[2], g->p[2], OW, &ow0, &ow1);
  for (int64_t od = 0; od < g->out[0]; od++) {
    for (int64_t oh = 0; oh < OH; oh++) {
      float *yrow = y + (od * OH + oh) * OW;
      if (oh < oh0 || oh >= oh1 || ow0 >= ow1) {
        for (int64_t ow = 0; ow < OW; ow++) yrow[ow] = pool_point_f32(x, g, od, oh, ow);
        continue;
      }
      const float *rows[3];
      int64_t r = oh * g->s[1] - g->p[1];
      for (int i = 0; i < g->k[1]; i++) rows[i] = x + (r + i) * W;
      for (int64_t ow = 0; ow < ow0; ow++) yrow[ow] = pool_point_f32(x, g, od, oh, ow);
      pool_row_interior_f32(rows, (int)g->k[1], (int)g->k[2], g->s[2], g->p[2], g->type, W, ow0, ow1, yrow + ow0);
      for (int64_t ow = ow1; ow < OW; ow++) yrow[ow] = pool_point_f32(x, g, od, oh, ow);
    }
  }
}

/* Pools channel-first planes [i0, i1) of x (g->in each) into y (g->out each). float16 and
 * bfloat16 go one plane at a time through float32 (scratch slots 0 and 1 of the running thread;
 * float accumulation, as MXNet). */
static int pool_planes(const void *x, void *y, int dtype, const pool_geom *g, int64_t i0, int64_t i1) {
  const int64_t isz = g->in[0] * g->in[1] * g->in[2], osz = g->out[0] * g->out[1] * g->out[2];
  if (dtype == MXW_FLOAT64) {
    for (int64_t i = i0; i < i1; i++) pool_plane_f64((const double *)x + i * isz, (double *)y + i * osz, g);
    return 0;
  }
  if (dtype == MXW_FLOAT32) {
    for (int64_t i = i0; i < i1; i++) pool_plane_f32((const float *)x + i * isz, (float *)y + i * osz, g);
    return 0;
  }
  float *xf = (float *)mxw_scratch(0, (size_t)isz * sizeof(float));
  float *yf = (float *)mxw_scratch(1, (size_t)osz * sizeof(float));
  if (!xf || !yf) return -1;
  size_t es = (size_t)mxw_dtype_size(dtype);
  for (int64_t i = i0; i < i1; i++) {
    mxw_convert((const char *)x + (size_t)(i * isz) * es, dtype, xf, MXW_FLOAT32, isz);
    pool_plane_f32(xf, yf, g);
    if (g->type == POOL_MAX) { /* an empty window is the dtype's lowest value, not -inf */
      float lowest = dtype == MXW_FLOAT16 ? -65504.f : -3.38953139e38f;
      for (int64_t j = 0; j < osz; j++)
        if (yf[j] < lowest) yf[j] = lowest;
    }
    mxw_convert(yf, MXW_FLOAT32, (char *)y + (size_t)(i * osz) * es, dtype, osz);
  }
  return 0;
}

/* Element-ops of one output cell: two per window cell (measured), times the dtype's factor. */
static double cell_cost(const pool_geom *g, int dtype) {
  return 2.0 * (double)(g->k[0] * g->k[1] * g->k[2]) * mxw_par_dtype_factor(dtype);
}

typedef struct {
  const void *x;
  void *y;
  int dtype;
  const pool_geom *g;
  int64_t C; /* channel-last only */
  atomic_int failed;
} pool_job;

static void planes_chunk(void *ctx, int64_t i0, int64_t i1) {
  pool_job *j = (pool_job *)ctx;
  if (pool_planes(j->x, j->y, j->dtype, j->g, i0, i1) != 0) atomic_store(&j->failed, 1);
}

/* Pools `planes` channel-first planes of x into y, split over the planes when large. */
static int pool_channel_first(const void *x, void *y, int dtype, int64_t planes, const pool_geom *g) {
  const int64_t osz = g->out[0] * g->out[1] * g->out[2];
  if (planes == 0 || osz == 0) return 0;
  pool_job j = {x, y, dtype, g, 0, 0};
  mxw_parallel_run(planes, 1, (double)osz * cell_cost(g, dtype), planes_chunk, &j);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* ---- channel-last: output rows (n, od, oh) of (N, D, H, W, C) data ----------------------------- */
/* Output cells of rows [r0, r1), C channels each: the window of pool_point_*, with the channels
 * as the innermost loop. */
#define DEFINE_POOL_LAST(NAME, T, LOWEST, SQRT, CBRT)                                                          \
  static void NAME(const T *x, T *y, const pool_geom *g, int64_t C, int64_t r0, int64_t r1) {                  \
    const int64_t D = g->in[0], H = g->in[1], W = g->in[2], OD = g->out[0], OH = g->out[1];                    \
    const int64_t OW = g->out[2];                                                                              \
    for (int64_t row = r0; row < r1; row++) {                                                                  \
      const int64_t n = row / (OD * OH), od = row / OH % OD, oh = row % OH;                                    \
      const T *xn = x + n * D * H * W * C;                                                                     \
      for (int64_t ow = 0; ow < OW; ow++) {                                                                    \
        T *yc = y + (row * OW + ow) * C;                                                                       \
        int64_t d0 = od * g->s[0] - g->p[0], h0 = oh * g->s[1] - g->p[1], w0 = ow * g->s[2] - g->p[2];         \
        if (g->type == POOL_MAX) {                                                                             \
          const int64_t d1 = min64(d0 + g->k[0], D), h1 = min64(h0 + g->k[1], H), w1 = min64(w0 + g->k[2], W); \
          for (int64_t c = 0; c < C; c++) yc[c] = LOWEST;                                                      \
          for (int64_t d = max64(d0, 0); d < d1; d++)                                                          \
            for (int64_t h = max64(h0, 0); h < h1; h++)                                                        \
              for (int64_t w = max64(w0, 0); w < w1; w++) {                                                    \
                const T *xc = xn + ((d * H + h) * W + w) * C;                                                  \
                for (int64_t c = 0; c < C; c++) yc[c] = xc[c] > yc[c] ? xc[c] : yc[c];                         \
              }                                                                                                \
          continue;                                                                                            \
        }                                                                                                      \
        int64_t lo_[3], hi_[3];                                                                                \
        const int64_t pool_size = pool_window(g, d0, h0, w0, lo_, hi_);                                        \
        d0 = lo_[0];                                                                                           \
        h0 = lo_[1];                                                                                           \
        w0 = lo_[2];                                                                                           \
        const int64_t d1 = hi_[0], h1 = hi_[1], w1 = hi_[2];                                                   \
        const T div = (T)pool_size;                                                                            \
        for (int64_t c = 0; c < C; c++) yc[c] = 0;                                                             \
        for (int64_t d = d0; d < d1; d++)                                                                      \
          for (int64_t h = h0; h < h1; h++)                                                                    \
            for (int64_t w = w0; w < w1; w++) {                                                                \
              const T *xc = xn + ((d * H + h) * W + w) * C;                                                    \
              if (g->p_value == 2) {                                                                           \
                for (int64_t c = 0; c < C; c++) yc[c] += (xc[c] * xc[c]) / div;                                \
              } else if (g->p_value == 3) {                                                                    \
                for (int64_t c = 0; c < C; c++) yc[c] += (xc[c] * xc[c] * xc[c]) / div;                        \
              } else {                                                                                         \
                for (int64_t c = 0; c < C; c++) yc[c] += xc[c] / div;                                          \
              }                                                                                                \
            }                                                                                                  \
        if (g->p_value == 2)                                                                                   \
          for (int64_t c = 0; c < C; c++) yc[c] = SQRT(yc[c]);                                                 \
        else if (g->p_value == 3)                                                                              \
          for (int64_t c = 0; c < C; c++) yc[c] = CBRT(yc[c]);                                                 \
      }                                                                                                        \
    }                                                                                                          \
  }

DEFINE_POOL_LAST(pool_last_f32, float, -FLT_MAX, sqrtf, cbrtf)
DEFINE_POOL_LAST(pool_last_f64, double, -DBL_MAX, sqrt, cbrt)

static void last_chunk(void *ctx, int64_t r0, int64_t r1) {
  const pool_job *j = (const pool_job *)ctx;
  if (j->dtype == MXW_FLOAT64)
    pool_last_f64((const double *)j->x, (double *)j->y, j->g, j->C, r0, r1);
  else
    pool_last_f32((const float *)j->x, (float *)j->y, j->g, j->C, r0, r1);
}

/* Pools channel-last float32 or float64 data of N samples, split over the output rows. */
static void pool_channel_last(const void *x, void *y, int dtype, int64_t N, int64_t C, const pool_geom *g) {
  pool_job j = {x, y, dtype, g, C, 0};
  mxw_parallel_run(N * g->out[0] * g->out[1], 1, (double)(g->out[2] * C) * cell_cost(g, dtype), last_chunk, &j);
}

/* A channel-last shape (N, spatial..., C) as channel-first (N, C, spatial...). */
static mxw_shape channel_first(const mxw_shape *s) {
  mxw_shape r = *s;
  r.dims[1] = s->dims[s->ndim - 1];
  for (int i = 2; i < s->ndim; i++) r.dims[i] = s->dims[i - 1];
  return r;
}

static int fwd_Pooling(const mxw_op_call *c) {
  const PoolingParam *p = (const PoolingParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  pool_geom g;
  if (!is_chan_last(p)) {
    make_geom(p, &in->shape, &out->shape, &g);
    return pool_channel_first(in->data, out->data, in->dtype, in->shape.dims[0] * in->shape.dims[1], &g);
  }
  /* channel-last (N, spatial, C): pooled in place, every channel of an output cell at once */
  const mxw_shape is = channel_first(&in->shape), os = channel_first(&out->shape);
  make_geom(p, &is, &os, &g);
  const int64_t N = is.dims[0], C = is.dims[1];
  const int64_t nx = mxw_tensor_size(in), ny = mxw_tensor_size(out);
  if (N * C == 0 || ny == 0) return 0;
  if (in->dtype == MXW_FLOAT32 || in->dtype == MXW_FLOAT64) {
    pool_channel_last(in->data, out->data, in->dtype, N, C, &g);
    return 0;
  }
  /* float16 / bfloat16: through float32 copies (float accumulation, as MXNet) */
  float *xf = (float *)mxw_scratch(2, (size_t)nx * sizeof(float) + 1);
  float *yf = (float *)mxw_scratch(3, (size_t)ny * sizeof(float) + 1);
  if (!xf || !yf) return -1;
  mxw_parallel_convert(in->data, in->dtype, xf, MXW_FLOAT32, nx);
  pool_channel_last(xf, yf, MXW_FLOAT32, N, C, &g);
  if (g.type == POOL_MAX) { /* an empty window is the dtype's lowest value, not -inf */
    const float lowest = in->dtype == MXW_FLOAT16 ? -65504.f : -3.38953139e38f;
    for (int64_t i = 0; i < ny; i++)
      if (yf[i] < lowest) yf[i] = lowest;
  }
  mxw_parallel_convert(yf, MXW_FLOAT32, out->data, out->dtype, ny);
  return 0;
}

/* ---- the gradient: _backward_Pooling(ograd, data, output) -> data's gradient -------------------------
 * (MXNet's ElemwiseGradUseInOut.) Per output cell and its window (as pool_point_*):
 *   max: the whole output gradient to the first cell of the window (d, h, w order) equal to the
 *        output -- the first max on ties, as MXNet's unpool_max; an empty window gives nothing;
 *   avg: ograd / pool_size to every in-range cell (the forward's divisor);  sum: ograd;
 *   lp:  p=1 ograd; p=2 ograd * x / y; p=3 ograd * (x / y)^2 (0 where y == 0, as MXNet's lp_grad). */
#define DEFINE_POOL_GRAD(NAME, T)                                                                                \
  static void NAME(const T *x, const T *y, const T *dy, T *dx, const pool_geom *g) {                             \
    const int64_t D = g->in[0], H = g->in[1], W = g->in[2];                                                      \
    for (int64_t i = 0; i < D * H * W; i++) dx[i] = 0;                                                           \
    int64_t o = 0;                                                                                               \
    for (int64_t od = 0; od < g->out[0]; od++)                                                                   \
      for (int64_t oh = 0; oh < g->out[1]; oh++)                                                                 \
        for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {                                                        \
          int64_t d0 = od * g->s[0] - g->p[0], h0 = oh * g->s[1] - g->p[1], w0 = ow * g->s[2] - g->p[2];         \
          const T gv = dy[o], yv = y[o];                                                                         \
          if (g->type == POOL_MAX) {                                                                             \
            const int64_t d1 = min64(d0 + g->k[0], D), h1 = min64(h0 + g->k[1], H), w1 = min64(w0 + g->k[2], W); \
            d0 = max64(d0, 0);                                                                                   \
            h0 = max64(h0, 0);                                                                                   \
            w0 = max64(w0, 0);                                                                                   \
            for (int64_t d = d0; d < d1; d++)                                                                    \
              for (int64_t h = h0; h < h1; h++)                                                                  \
                for (int64_t w = w0; w < w1; w++) {                                                              \
                  const int64_t idx = (d * H + h) * W + w;                                                       \
                  if (x[idx] == yv) {                                                                            \
                    dx[idx] += gv;                                                                               \
                    goto next_##NAME;                                                                            \
                  }                                                                                              \
                }                                                                                                \
            next_##NAME : continue;                                                                              \
          }                                                                                                      \
          int64_t lo_[3], hi_[3];                                                                                \
          const int64_t pool_size = pool_window(g, d0, h0, w0, lo_, hi_);                                        \
          d0 = lo_[0];                                                                                           \
          h0 = lo_[1];                                                                                           \
          w0 = lo_[2];                                                                                           \
          const int64_t d1 = hi_[0], h1 = hi_[1], w1 = hi_[2];                                                   \
          const T share = gv / (T)pool_size;                                                                     \
          for (int64_t d = d0; d < d1; d++)                                                                      \
            for (int64_t h = h0; h < h1; h++)                                                                    \
              for (int64_t w = w0; w < w1; w++) {                                                                \
                const int64_t idx = (d * H + h) * W + w;                                                         \
                if (g->p_value == 1) {                                                                           \
                  dx[idx] += share;                                                                              \
                } else if (yv != 0) {                                                                            \
                  const T r = x[idx] / yv;                                                                       \
                  dx[idx] += g->p_value == 2 ? gv * r : gv * r * r;                                              \
                }                                                                                                \
              }                                                                                                  \
        }                                                                                                        \
  }

DEFINE_POOL_GRAD(pool_grad_plane_f32, float)
DEFINE_POOL_GRAD(pool_grad_plane_f64, double)

/* float32 2-D max / avg / sum pooling whose windows do not overlap and lie inside the data (stride ==
 * kernel, no padding, out * kernel <= in; LeNet's and VGG's 2x2 stride 2): each input cell is in at
 * most one window, so dx is written once per cell, without the zeroing pass and the clipping of the
 * general loop; 2x2 max runs 4 windows at a time in SIMD (the first of a window's 4 cells equal to
 * the output takes the gradient, as the general loop). */
static int use_disjoint_f32(const pool_geom *g) {
  return g->in[0] == 1 && g->k[0] == 1 && g->p[0] == 0 && g->p[1] == 0 && g->p[2] == 0 && g->s[1] == g->k[1] &&
         g->s[2] == g->k[2] && g->out[1] * g->k[1] <= g->in[1] && g->out[2] * g->k[2] <= g->in[2] &&
         (g->type == POOL_MAX || g->type == POOL_AVG || g->type == POOL_SUM);
}

static void pool_grad_disjoint_f32(const float *x, const float *y, const float *dy, float *dx, const pool_geom *g) {
  const int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2], kh = g->k[1], kw = g->k[2];
  const int64_t cw = OW * kw; /* covered columns */
  const float scale = g->type == POOL_AVG ? 1.f / (float)(kh * kw) : 1.f;
  for (int64_t oh = 0; oh < OH; oh++) {
    const float *yr = y + oh * OW, *gr = dy + oh * OW;
    const float *x0 = x + oh * kh * W;
    float *d0 = dx + oh * kh * W;
    int64_t ow = 0;
    if (g->type == POOL_MAX && kh == 2 && kw == 2) {
      const float *x1 = x0 + W;
      float *d1 = d0 + W;
      for (; ow + 4 <= OW; ow += 4) {
        const v128_t p0 = wasm_v128_load(x0 + 2 * ow), p1 = wasm_v128_load(x0 + 2 * ow + 4);
        const v128_t q0 = wasm_v128_load(x1 + 2 * ow), q1 = wasm_v128_load(x1 + 2 * ow + 4);
        const v128_t a = wasm_i32x4_shuffle(p0, p1, 0, 2, 4, 6), b = wasm_i32x4_shuffle(p0, p1, 1, 3, 5, 7);
        const v128_t c = wasm_i32x4_shuffle(q0, q1, 0, 2, 4, 6), d = wasm_i32x4_shuffle(q0, q1, 1, 3, 5, 7);
        const v128_t yv = wasm_v128_load(yr + ow), gv = wasm_v128_load(gr + ow);
        const v128_t ma = wasm_f32x4_eq(a, yv);
        const v128_t mb = wasm_v128_andnot(wasm_f32x4_eq(b, yv), ma);
        v128_t seen = wasm_v128_or(ma, mb);
        const v128_t mc = wasm_v128_andnot(wasm_f32x4_eq(c, yv), seen);
        seen = wasm_v128_or(seen, mc);
        const v128_t md = wasm_v128_andnot(wasm_f32x4_eq(d, yv), seen);
        const v128_t ga = wasm_v128_and(gv, ma), gb = wasm_v128_and(gv, mb);
        const v128_t gc = wasm_v128_and(gv, mc), gd = wasm_v128_and(gv, md);
        wasm_v128_store(d0 + 2 * ow, wasm_i32x4_shuffle(ga, gb, 0, 4, 1, 5));
        wasm_v128_store(d0 + 2 * ow + 4, wasm_i32x4_shuffle(ga, gb, 2, 6, 3, 7));
        wasm_v128_store(d1 + 2 * ow, wasm_i32x4_shuffle(gc, gd, 0, 4, 1, 5));
        wasm_v128_store(d1 + 2 * ow + 4, wasm_i32x4_shuffle(gc, gd, 2, 6, 3, 7));
      }
    }
    for (; ow < OW; ow++) {
      const float yv = yr[ow], gv = gr[ow];
      int found = g->type != POOL_MAX;
      for (int64_t i = 0; i < kh; i++)
        for (int64_t j = 0; j < kw; j++) {
          const int64_t e = i * W + ow * kw + j;
          if (found) {
            d0[e] = g->type == POOL_MAX ? 0.f : gv * scale;
          } else if (x0[e] == yv) {
            d0[e] = gv;
            found = 1;
          } else {
            d0[e] = 0.f;
          }
        }
    }
    for (int64_t i = 0; i < kh; i++) /* columns past the last window */
      for (int64_t j = cw; j < W; j++) d0[i * W + j] = 0.f;
  }
  for (int64_t i = OH * kh * W; i < H * W; i++) dx[i] = 0.f; /* rows past the last window */
}

/* Gradients of channel-first planes [i0, i1) (float32 or float64). */
static void pool_grad_planes(const void *x, const void *y, const void *dy, void *dx, int dtype, const pool_geom *g,
                             int64_t i0, int64_t i1) {
  const int64_t isz = g->in[0] * g->in[1] * g->in[2], osz = g->out[0] * g->out[1] * g->out[2];
  const int disjoint = dtype == MXW_FLOAT32 && use_disjoint_f32(g);
  for (int64_t i = i0; i < i1; i++) {
    if (disjoint)
      pool_grad_disjoint_f32((const float *)x + i * isz, (const float *)y + i * osz, (const float *)dy + i * osz,
                             (float *)dx + i * isz, g);
    else if (dtype == MXW_FLOAT32)
      pool_grad_plane_f32((const float *)x + i * isz, (const float *)y + i * osz, (const float *)dy + i * osz,
                          (float *)dx + i * isz, g);
    else
      pool_grad_plane_f64((const double *)x + i * isz, (const double *)y + i * osz, (const double *)dy + i * osz,
                          (double *)dx + i * isz, g);
  }
}

/* Channel-last gradients: for sample n and channels [c0, c1), every output cell in order (as the
 * channel-first loop), each channel through its window as pool_grad_plane_*. */
#define DEFINE_POOL_GRAD_LAST(NAME, T)                                                                               \
  static void NAME(const T *x, const T *y, const T *dy, T *dx, const pool_geom *g, int64_t C, int64_t n, int64_t c0, \
                   int64_t c1) {                                                                                     \
    const int64_t D = g->in[0], H = g->in[1], W = g->in[2], isz = D * H * W;                                         \
    const int64_t osz = g->out[0] * g->out[1] * g->out[2];                                                           \
    x += n * isz * C;                                                                                                \
    dx += n * isz * C;                                                                                               \
    y += n * osz * C;                                                                                                \
    dy += n * osz * C;                                                                                               \
    for (int64_t i = 0; i < isz; i++)                                                                                \
      for (int64_t c = c0; c < c1; c++) dx[i * C + c] = 0;                                                           \
    int64_t o = 0;                                                                                                   \
    for (int64_t od = 0; od < g->out[0]; od++)                                                                       \
      for (int64_t oh = 0; oh < g->out[1]; oh++)                                                                     \
        for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {                                                            \
          int64_t d0 = od * g->s[0] - g->p[0], h0 = oh * g->s[1] - g->p[1], w0 = ow * g->s[2] - g->p[2];             \
          const T *gv = dy + o * C, *yv = y + o * C;                                                                 \
          if (g->type == POOL_MAX) { /* per channel: the first cell of the window equal to y */                      \
            const int64_t d1 = min64(d0 + g->k[0], D), h1 = min64(h0 + g->k[1], H), w1 = min64(w0 + g->k[2], W);     \
            d0 = max64(d0, 0);                                                                                       \
            h0 = max64(h0, 0);                                                                                       \
            w0 = max64(w0, 0);                                                                                       \
            for (int64_t c = c0; c < c1; c++) {                                                                      \
              for (int64_t d = d0; d < d1; d++)                                                                      \
                for (int64_t h = h0; h < h1; h++)                                                                    \
                  for (int64_t w = w0; w < w1; w++) {                                                                \
                    const int64_t idx = ((d * H + h) * W + w) * C + c;                                               \
                    if (x[idx] == yv[c]) {                                                                           \
                      dx[idx] += gv[c];                                                                              \
                      goto next_##NAME;                                                                              \
                    }                                                                                                \
                  }                                                                                                  \
              next_##NAME:;                                                                                          \
            }                                                                                                        \
            continue;                                                                                                \
          }                                                                                                          \
          int64_t lo_[3], hi_[3];                                                                                    \
          const int64_t pool_size = pool_window(g, d0, h0, w0, lo_, hi_);                                            \
          d0 = lo_[0];                                                                                               \
          h0 = lo_[1];                                                                                               \
          w0 = lo_[2];                                                                                               \
          const int64_t d1 = hi_[0], h1 = hi_[1], w1 = hi_[2];                                                       \
          const T div = (T)pool_size;                                                                                \
          for (int64_t d = d0; d < d1; d++)                                                                          \
            for (int64_t h = h0; h < h1; h++)                                                                        \
              for (int64_t w = w0; w < w1; w++) {                                                                    \
                const int64_t cell = ((d * H + h) * W + w) * C;                                                      \
                for (int64_t c = c0; c < c1; c++) {                                                                  \
                  if (g->p_value == 1) {                                                                             \
                    dx[cell + c] += gv[c] / div;                                                                     \
                  } else if (yv[c] != 0) {                                                                           \
                    const T r = x[cell + c] / yv[c];                                                                 \
                    dx[cell + c] += g->p_value == 2 ? gv[c] * r : gv[c] * r * r;                                     \
                  }                                                                                                  \
                }                                                                                                    \
              }                                                                                                      \
        }                                                                                                            \
  }

DEFINE_POOL_GRAD_LAST(pool_grad_last_f32, float)
DEFINE_POOL_GRAD_LAST(pool_grad_last_f64, double)

/* Channel-last units: (sample, block of GRAD_CB channels). */
#define GRAD_CB 32

typedef struct {
  const void *x, *y, *dy;
  void *dx;
  int dtype, last;
  const pool_geom *g;
  int64_t C;
} grad_job;

static void grad_chunk(void *ctx, int64_t u0, int64_t u1) {
  const grad_job *j = (const grad_job *)ctx;
  if (!j->last) {
    pool_grad_planes(j->x, j->y, j->dy, j->dx, j->dtype, j->g, u0, u1);
    return;
  }
  const int64_t nb = (j->C + GRAD_CB - 1) / GRAD_CB;
  for (int64_t u = u0; u < u1; u++) {
    const int64_t n = u / nb, c0 = (u % nb) * GRAD_CB, c1 = min64(c0 + GRAD_CB, j->C);
    if (j->dtype == MXW_FLOAT64)
      pool_grad_last_f64((const double *)j->x, (const double *)j->y, (const double *)j->dy, (double *)j->dx, j->g, j->C,
                         n, c0, c1);
    else
      pool_grad_last_f32((const float *)j->x, (const float *)j->y, (const float *)j->dy, (float *)j->dx, j->g, j->C, n,
                         c0, c1);
  }
}

/* The gradient of N samples of C channels (float32 or float64, either layout), split over the
 * planes (channel-first) or over (sample, channel block) (channel-last) when large. */
static void pool_grad(const grad_job *j, int64_t N) {
  const pool_geom *g = j->g;
  const int64_t isz = g->in[0] * g->in[1] * g->in[2], osz = g->out[0] * g->out[1] * g->out[2];
  const double window = (double)(g->k[0] * g->k[1] * g->k[2]);
  const double per_channel = 2.0 * ((double)isz + 2.0 * (double)osz * window) * mxw_par_dtype_factor(j->dtype);
  if (!j->last) {
    mxw_parallel_run(N * j->C, 1, per_channel, grad_chunk, (void *)j);
    return;
  }
  const int64_t nb = (j->C + GRAD_CB - 1) / GRAD_CB;
  mxw_parallel_run(N * nb, 1, per_channel * (double)min64(j->C, GRAD_CB), grad_chunk, (void *)j);
}

static int fwd_backward_Pooling(const mxw_op_call *c) {
  const PoolingParam *p = (const PoolingParam *)c->param;
  const mxw_tensor *dy = &c->inputs[0], *x = &c->inputs[1], *y = &c->inputs[2];
  mxw_tensor *dx = &c->outputs[0];
  const int last = is_chan_last(p), dtype = x->dtype;
  const mxw_shape is = last ? channel_first(&x->shape) : x->shape, os = last ? channel_first(&y->shape) : y->shape;
  pool_geom g;
  make_geom(p, &is, &os, &g);
  const int64_t N = is.dims[0], C = is.dims[1];
  const int64_t nx = mxw_tensor_size(x), ny = mxw_tensor_size(y);
  grad_job j = {x->data, y->data, dy->data, dx->data, dtype, last, &g, C};
  if (N * C == 0) {
    memset(dx->data, 0, (size_t)nx * (size_t)mxw_dtype_size(dtype));
    return 0;
  }
  if (dtype == MXW_FLOAT32 || dtype == MXW_FLOAT64) {
    pool_grad(&j, N);
    return 0;
  }
  /* float16 / bfloat16: float32 copies, computed there and converted back */
  float *buf = (float *)malloc((size_t)(2 * nx + 2 * ny) * sizeof(float) + 1);
  MXW_CHECK(buf != NULL, "out of memory for the Pooling gradient's copies");
  float *xc = buf, *dxc = xc + nx, *yc = dxc + nx, *dyc = yc + ny;
  mxw_parallel_convert(x->data, dtype, xc, MXW_FLOAT32, nx);
  mxw_parallel_convert(y->data, dtype, yc, MXW_FLOAT32, ny);
  mxw_parallel_convert(dy->data, dtype, dyc, MXW_FLOAT32, ny);
  j.x = xc;
  j.y = yc;
  j.dy = dyc;
  j.dx = dxc;
  j.dtype = MXW_FLOAT32;
  pool_grad(&j, N);
  mxw_parallel_convert(dxc, MXW_FLOAT32, dx->data, dtype, nx);
  free(buf);
  return 0;
}

static int infer_backward_pooling(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  MXW_TRY(mxw_shape_assign(&out[0], &in[1], "data gradient"));
  return mxw_shape_assign(&in[1], &out[0], "data");
}

/* Input 0's gradient: _backward_Pooling of the incoming gradient, routed by data x and output y. */
static int set_backward_pooling(mxw_grad_ctx *g, mxw_gid x, mxw_gid y) {
  mxw_gid dx = -1;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_Pooling", MXW_GIDS(mxw_grad_ograd(g, 0), x, y), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}
static int grad_Pooling(mxw_grad_ctx *g) { return set_backward_pooling(g, mxw_grad_in(g, 0), mxw_grad_out(g, 0)); }

static const char *const k_backward_pooling_inputs[] = {"ograd", "data", "output", NULL};

/* ---- second order (autograd.grad with create_graph) ----------------------------------------------
 * _backward_Pooling is linear in its output gradient G for max, avg and sum pooling, with routing
 * fixed by data and output, so its gradient for an incoming h (data-shaped) is its adjoint applied
 * to h, and nothing for data and output:
 *   avg, sum: the forward pooling of h (the same windows and divisors as the backward's shares);
 *   max: each output cell takes h at the cell its gradient went to -- the first cell of the window
 *        equal to the output, as the backward's -- the internal _backward_grad_Pooling(h, data,
 *        output), whose own gradient is _backward_Pooling again (third order and on).
 * lp pooling's gradient depends on data and output nonlinearly: none (a clear error). */
static void pool_gather_plane(const mxw_tensor *h, const mxw_tensor *x, const mxw_tensor *y, mxw_tensor *out,
                              const pool_geom *g, int64_t ibase, int64_t obase, int64_t step) {
  const int64_t D = g->in[0], H = g->in[1], W = g->in[2];
  int64_t o = 0;
  for (int64_t od = 0; od < g->out[0]; od++)
    for (int64_t oh = 0; oh < g->out[1]; oh++)
      for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {
        const int64_t d0 = max64(od * g->s[0] - g->p[0], 0), h0 = max64(oh * g->s[1] - g->p[1], 0),
                      w0 = max64(ow * g->s[2] - g->p[2], 0);
        const int64_t d1 = min64(od * g->s[0] - g->p[0] + g->k[0], D), h1 = min64(oh * g->s[1] - g->p[1] + g->k[1], H),
                      w1 = min64(ow * g->s[2] - g->p[2] + g->k[2], W);
        const double yv = mxw_load_f64(y->data, y->dtype, obase + o * step);
        double v = 0.0;
        for (int64_t d = d0; d < d1; d++)
          for (int64_t r = h0; r < h1; r++)
            for (int64_t w = w0; w < w1; w++) {
              const int64_t idx = ibase + ((d * H + r) * W + w) * step;
              if (mxw_load_f64(x->data, x->dtype, idx) == yv) {
                v = mxw_load_f64(h->data, h->dtype, idx);
                goto found;
              }
            }
      found:
        mxw_store_f64(out->data, out->dtype, obase + o * step, v);
      }
}

static int fwd_backward_grad_Pooling(const mxw_op_call *c) {
  const PoolingParam *p = (const PoolingParam *)c->param;
  const mxw_tensor *h = &c->inputs[0], *x = &c->inputs[1], *y = &c->inputs[2];
  MXW_CHECK(p->pool_type == POOL_MAX, "_backward_grad_Pooling is the second order of max pooling only");
  const int last = is_chan_last(p);
  const mxw_shape is = last ? channel_first(&x->shape) : x->shape, os = last ? channel_first(&y->shape) : y->shape;
  pool_geom g;
  make_geom(p, &is, &os, &g);
  const int64_t N = is.dims[0], C = is.dims[1], isz = g.in[0] * g.in[1] * g.in[2], osz = g.out[0] * g.out[1] * g.out[2];
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++) {
      if (last)
        pool_gather_plane(h, x, y, &c->outputs[0], &g, n * isz * C + ch, n * osz * C + ch, C);
      else
        pool_gather_plane(h, x, y, &c->outputs[0], &g, (n * C + ch) * isz, (n * C + ch) * osz, 1);
    }
  return 0;
}

static int infer_backward_grad_pooling(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  MXW_TRY(mxw_shape_assign(&in[0], &in[1], "incoming gradient"));
  return mxw_shape_assign(&out[0], &in[2], "gradient of the output gradient");
}

static int grad_backward_Pooling(mxw_grad_ctx *g) {
  const PoolingParam *p = (const PoolingParam *)mxw_grad_param(g);
  const mxw_gid h = mxw_grad_ograd(g, 0);
  mxw_gid d = -1;
  if (p->pool_type == POOL_LP)
    return mxw_fail("the gradient of _backward_Pooling (second order) exists for max, avg and sum pooling, not lp");
  if (p->pool_type == POOL_MAX)
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_grad_Pooling", MXW_GIDS(h, mxw_grad_in(g, 1), mxw_grad_in(g, 2)), &d, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, "Pooling", MXW_GIDS(h), &d, 1));
  return mxw_grad_set(g, 0, d);
}

/* _backward_grad_Pooling(h, data, output) is linear in h; its adjoint is _backward_Pooling. */
static int grad_backward_grad_Pooling(mxw_grad_ctx *g) {
  return set_backward_pooling(g, mxw_grad_in(g, 1), mxw_grad_in(g, 2));
}

static const mxw_op_def op_backward_grad_Pooling = {
    .name = "_backward_grad_Pooling",
    .doc = MXW_DOC("internal: the gradient of max pooling's backward with respect to its output gradient (each "
                   "output cell takes the incoming gradient at the cell the backward routed to)"),
    .attrs = k_pooling_attrs,
    .num_attrs = (int)(sizeof k_pooling_attrs / sizeof k_pooling_attrs[0]),
    .param_size = sizeof(PoolingParam),
    .validate = validate_pooling,
    .num_inputs = 3,
    .input_names = k_backward_pooling_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_grad_pooling,
    .infer_type = infer_type_pooling,
    .half_as_f32 = 1,
    .forward = fwd_backward_grad_Pooling,
    .gradient = grad_backward_grad_Pooling,
};

static const mxw_op_def op_backward_Pooling = {
    .name = "_backward_Pooling",
    .doc = MXW_DOC("the gradient of Pooling with respect to its data, from the output gradient, data and output"),
    .attrs = k_pooling_attrs,
    .num_attrs = (int)(sizeof k_pooling_attrs / sizeof k_pooling_attrs[0]),
    .param_size = sizeof(PoolingParam),
    .validate = validate_pooling,
    .num_inputs = 3,
    .input_names = k_backward_pooling_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_pooling,
    .infer_type = infer_type_pooling,
    .forward = fwd_backward_Pooling,
    .gradient = grad_backward_Pooling,
};

static const mxw_op_def op_Pooling = {
    .name = "Pooling",
    .aliases = ALIASES("_npx_pooling"),
    .doc = MXW_DOC("max / avg / sum / lp pooling over 1-D, 2-D or 3-D windows; layouts NCW/NCHW/NCDHW or "
                   "channel-last NWC/NHWC/NDHWC"),
    .attrs = k_pooling_attrs,
    .num_attrs = (int)(sizeof k_pooling_attrs / sizeof k_pooling_attrs[0]),
    .param_size = sizeof(PoolingParam),
    .validate = validate_pooling,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_pooling,
    .infer_type = infer_type_pooling,
    .forward = fwd_Pooling,
    .gradient = grad_Pooling,
};

MXW_FAMILY(pooling, &op_Pooling, &op_backward_Pooling, &op_backward_grad_Pooling);
