/* conv.c -- Convolution, Deconvolution and UpSampling (nearest and bilinear).
 * Semantics: ../shared/spec/ops.md §1 Convolution, Deconvolution, UpSampling.
 *
 * Every spatial rank is run as 3-D with leading size-1 dims, so one set of kernels covers 1-D,
 * 2-D and 3-D. A convolution and its transpose share one description of the sliding window:
 *
 *     image position = grid position * stride - pad + tap * dilate      (per spatial dim)
 *
 * For Convolution the image is the input and the grid the output; for Deconvolution the image is
 * the output and the grid the input. Then, per batch item n and group g (G groups):
 *   Convolution    out[n,g] (F/G, grid) = W[g] (F/G, C/G*taps) * im2col(in[n,g]) (C/G*taps, grid)
 *   Deconvolution  out[n,g] (F/G, image) = col2im(W[g]^T (F/G*taps, C/G) * in[n,g] (C/G, grid))
 * run by mxw_sgemm (float32) or mxw_dgemm (float64). The column buffer (mxw_scratch slot 0) is
 * filled a band of grid rows at a time, so it stays within COL_BUDGET bytes for large images.
 * Float32 special cases, in the order conv_run tries them:
 *  - depthwise (num_group == C == num_filter): MobileNet's 3x3 / pad 1 / stride 1 or 2 by the
 *    in-place kernel of kernels/dwconv.c, other windows by a SIMD loop over a zero-padded copy;
 *  - 3x3 stride 1 with >= 16 channels and filters per group: Winograd F(2x2, 3x3)
 *    (kernels/winograd.c + mxw_sgemm), 4 multiply-adds per output and channel instead of 9;
 *  - up to DIRECT_MAX_FG filters per group (LeNet's): a direct SIMD kernel over blocks of up to 5
 *    filters and 8 outputs of a row, with no column buffer (direct_f32);
 *  - a 1x1, stride-1, pad-0 window needs no column buffer (the input is the column matrix).
 * A depthwise deconvolution (bilinear UpSampling, depthwise data gradients) scatters directly.
 * The channel-last layouts NHWC and NDHWC (MXNet accepts them, its CPU kernels refuse them) run
 * natively with (position, tap * channel) column matrices: see "channel-last layouts" below.
 * Every path splits across the thread pool in units fixed by the shapes (see "threads").
 *
 * Gradients ("gradients" below): the data gradient of a Convolution is the Deconvolution of the output
 * gradient with the same weight and window (and vice versa), its own graph node so that it is left out
 * when the data needs none; the weight and bias gradients are _backward_Convolution_weight /
 * _backward_Deconvolution_weight: im2col + GEMMs (mxw_sgemm with B transposed) per block of channels,
 * the float32 depthwise case SIMD runs over the padded channel buffer; UpSampling's is
 * _backward_UpSampling (nearest) or its depthwise deconvolution's (bilinear).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <stdatomic.h>

#include "../core/mxw_core.h"
#include "../core/simd.h"
#include "../kernels/conv_kernels.h"
#include "../kernels/gemm.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})

enum {
  COL_BUDGET = 2 << 20, /* bytes of im2col / col2im buffer per band of grid rows (1-16 MiB measured
                         * within noise; smaller stays in L2/L3 between im2col and the GEMM) */
  DW_MAX_TAPS = 128     /* depthwise fast path: kernels up to 11x11 */
};

/* ---- small helpers --------------------------------------------------------------------------- */
typedef char shape_buf[160];

/* "(3, 3)" for an attribute tuple. */
static char *tuple_str(const mxw_tuple *t, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < t->ndim && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, i ? ", %lld" : "%lld", (long long)t->v[i]);
  if (used < len) snprintf(buf + used, len - used, t->ndim == 1 ? ",)" : ")");
  return buf;
}

static int infer_type_f32_f64(const void *param, int nin, int *in, int nout, int *out) {
  MXW_TRY(mxw_infer_type_same(param, nin, in, nout, out));
  int t = nin > 0 ? in[0] : -1;
  if (t >= 0 && t != MXW_FLOAT32 && t != MXW_FLOAT64 && t != MXW_FLOAT16 && t != MXW_BFLOAT16)
    return mxw_fail("dtype %s is not supported (float32, float64, float16 and bfloat16)", mxw_dtype_name(t));
  return 0;
}

/* ---- the window and its row kernels ------------------------------------------------------------ */
/* One sliding window over 3 spatial dims (depth, height, width); unused leading dims have size 1,
 * kernel 1, stride 1, dilate 1, pad 0. */
typedef struct {
  int64_t img[3], grid[3], k[3], s[3], d[3], p[3];
} window;

static int64_t prod3(const int64_t *v) { return v[0] * v[1] * v[2]; }

/* Grid positions x in [*lo, *hi) of a row of n whose image position x * s + off lies in
 * [0, size). */
static void valid_range(int64_t off, int64_t s, int64_t size, int64_t n, int64_t *lo, int64_t *hi) {
  int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t last = size - 1 - off; /* need x * s <= last */
  int64_t b = last < 0 ? 0 : last / s + 1;
  if (b > n) b = n;
  if (a > b) a = b;
  *lo = a;
  *hi = b;
}

/* dst[x] = src[x * stride] for x < n. */
static void row_gather(void *dst, const void *src, int64_t n, int64_t stride, size_t esize) {
  if (stride == 1 && esize == 4 && n <= 64) { /* short rows (LeNet's 8 to 24): inline, not a memcpy call */
    float *d = (float *)dst;
    const float *s = (const float *)src;
    int64_t x = 0;
    for (; x + 4 <= n; x += 4) wasm_v128_store(d + x, wasm_v128_load(s + x));
    for (; x < n; x++) d[x] = s[x];
  } else if (stride == 1) {
    memcpy(dst, src, (size_t)n * esize);
  } else if (esize == 4 && stride == 2) { /* the even lanes of two loads (never past s[2n - 2]) */
    float *d = (float *)dst;
    const float *s = (const float *)src;
    int64_t x = 0;
    for (; x + 5 <= n; x += 4)
      wasm_v128_store(d + x, wasm_i32x4_shuffle(wasm_v128_load(s + 2 * x), wasm_v128_load(s + 2 * x + 4), 0, 2, 4, 6));
    for (; x < n; x++) d[x] = s[2 * x];
  } else if (esize == 4) {
    float *d = (float *)dst;
    const float *s = (const float *)src;
    for (int64_t x = 0; x < n; x++) d[x] = s[x * stride];
  } else {
    double *d = (double *)dst;
    const double *s = (const double *)src;
    for (int64_t x = 0; x < n; x++) d[x] = s[x * stride];
  }
}

/* dst[x * stride] += alpha * src[x] for x < n. */
static void row_scatter_add(void *dst, const void *src, int64_t n, int64_t stride, double alpha, size_t esize) {
  if (esize == 4) {
    float *d = (float *)dst;
    const float *s = (const float *)src;
    const float a = (float)alpha;
    if (stride == 1)
      for (int64_t x = 0; x < n; x++) d[x] += a * s[x];
    else
      for (int64_t x = 0; x < n; x++) d[x * stride] += a * s[x];
  } else {
    double *d = (double *)dst;
    const double *s = (const double *)src;
    for (int64_t x = 0; x < n; x++) d[x * stride] += alpha * s[x];
  }
}

/* dst[x * stride] += src[x] for x < n (col2im); float32 stride 1 in SIMD. */
static void row_add(void *dst, const void *src, int64_t n, int64_t stride, size_t esize) {
  if (esize == 4 && stride == 1) {
    float *d = (float *)dst;
    const float *s = (const float *)src;
    int64_t x = 0;
    for (; x + 4 <= n; x += 4) wasm_v128_store(d + x, wasm_f32x4_add(wasm_v128_load(d + x), wasm_v128_load(s + x)));
    for (; x < n; x++) d[x] += s[x];
  } else {
    row_scatter_add(dst, src, n, stride, 1.0, esize);
  }
}

static inline double lanes_sum_f32(v128_t a) {
  return ((double)wasm_f32x4_extract_lane(a, 0) + (double)wasm_f32x4_extract_lane(a, 1)) +
         ((double)wasm_f32x4_extract_lane(a, 2) + (double)wasm_f32x4_extract_lane(a, 3));
}

/* n zeros; short float32 rows inline rather than through a memset call. */
static void zero_row(char *dst, int64_t n, size_t esize) {
  if (n <= 0) return;
  if (esize == 4 && n <= 64) {
    float *d = (float *)dst;
    for (int64_t x = 0; x < n; x++) d[x] = 0.f;
  } else {
    memset(dst, 0, (size_t)n * esize);
  }
}

/* Walks the grid rows [row0, row0 + nrows) of a window for one tap (tz, ty): calls
 * fn(row index from 0, image row offset in elements within a channel, or -1 in the padding).
 * The (depth, height) position advances by counters, not by a division per row. */
#define FOR_TAP_ROWS(w, row0, nrows, tz, ty, R, OFF, BODY)                                 \
  do {                                                                                     \
    int64_t gz_ = (row0) / (w)->grid[1], gy_ = (row0) % (w)->grid[1];                      \
    for (int64_t R = 0; R < (nrows); R++) {                                                \
      const int64_t iz_ = gz_ * (w)->s[0] - (w)->p[0] + (tz) * (w)->d[0];                  \
      const int64_t iy_ = gy_ * (w)->s[1] - (w)->p[1] + (ty) * (w)->d[1];                  \
      const int64_t OFF = (iz_ < 0 || iz_ >= (w)->img[0] || iy_ < 0 || iy_ >= (w)->img[1]) \
                              ? -1                                                         \
                              : (iz_ * (w)->img[1] + iy_) * (w)->img[2];                   \
      BODY;                                                                                \
      if (++gy_ == (w)->grid[1]) {                                                         \
        gy_ = 0;                                                                           \
        gz_++;                                                                             \
      }                                                                                    \
    }                                                                                      \
  } while (0)

/* im2col over a band of grid rows [row0, row0 + nrows):
 *   col[(c, tz, ty, tx), (r - row0, x)] = img[c, image position of (r, x) for tap (tz, ty, tx)] or 0
 * col is (chans * taps, nrows * grid_w), img is (chans, image). */
static void im2col(const window *w, size_t esize, const void *img, int64_t chans, int64_t row0, int64_t nrows,
                   void *col) {
  const int64_t gw = w->grid[2], plane = prod3(w->img);
  char *dst = (char *)col;
  for (int64_t c = 0; c < chans; c++) {
    const char *chan = (const char *)img + (size_t)(c * plane) * esize;
    for (int64_t tz = 0; tz < w->k[0]; tz++)
      for (int64_t ty = 0; ty < w->k[1]; ty++)
        for (int64_t tx = 0; tx < w->k[2]; tx++) {
          const int64_t off = tx * w->d[2] - w->p[2];
          int64_t lo, hi;
          valid_range(off, w->s[2], w->img[2], gw, &lo, &hi);
          if (esize == 4 && w->img[0] == 1 && w->grid[0] == 1 && w->k[0] == 1 && w->p[0] == 0 && w->s[2] == 1) {
            /* 1-D / 2-D float32, width stride 1: rows copied inline */
            const float *cf = (const float *)chan + off;
            float *d = (float *)dst;
            const int64_t y0 = row0 * w->s[1] - w->p[1] + ty * w->d[1], ys = w->s[1], ih = w->img[1], iw = w->img[2];
            if (lo == 0 && hi == gw && (gw & 3) == 0) { /* whole rows of 4-float groups (LeNet's 8-wide grids) */
              for (int64_t r = 0; r < nrows; r++, d += gw) {
                const int64_t iy = y0 + r * ys;
                if (iy >= 0 && iy < ih) {
                  const float *src = cf + iy * iw;
                  for (int64_t x = 0; x < gw; x += 4) wasm_v128_store(d + x, wasm_v128_load(src + x));
                } else {
                  for (int64_t x = 0; x < gw; x += 4) wasm_v128_store(d + x, wasm_f32x4_splat(0.f));
                }
              }
              dst += (size_t)(nrows * gw) * esize;
              continue;
            }
            for (int64_t r = 0; r < nrows; r++, d += gw) {
              const int64_t iy = y0 + r * ys;
              int64_t x = 0;
              if (iy >= 0 && iy < ih) {
                const float *src = cf + iy * iw;
                for (; x < lo; x++) d[x] = 0.f;
                for (; x + 4 <= hi; x += 4) wasm_v128_store(d + x, wasm_v128_load(src + x));
                for (; x < hi; x++) d[x] = src[x];
              }
              for (; x < gw; x++) d[x] = 0.f;
            }
            dst += (size_t)(nrows * gw) * esize;
            continue;
          }
          FOR_TAP_ROWS(w, row0, nrows, tz, ty, r, src_off, {
            char *d = dst + (size_t)(r * gw) * esize;
            if (src_off < 0) {
              zero_row(d, gw, esize);
            } else {
              zero_row(d, lo, esize);
              if (hi > lo) /* else the source offset may lie before the channel: no pointer made there */
                row_gather(d + (size_t)lo * esize, chan + (size_t)(src_off + lo * w->s[2] + off) * esize, hi - lo,
                           w->s[2], esize);
              zero_row(d + (size_t)hi * esize, gw - hi, esize);
            }
          });
          dst += (size_t)(nrows * gw) * esize;
        }
  }
}

/* The transpose of im2col: img[c, image position] += col[(c, taps), (r, x)]. */
static void col2im(const window *w, size_t esize, const void *col, int64_t chans, int64_t row0, int64_t nrows,
                   void *img) {
  const int64_t gw = w->grid[2], plane = prod3(w->img);
  const char *src = (const char *)col;
  for (int64_t c = 0; c < chans; c++) {
    char *chan = (char *)img + (size_t)(c * plane) * esize;
    for (int64_t tz = 0; tz < w->k[0]; tz++)
      for (int64_t ty = 0; ty < w->k[1]; ty++)
        for (int64_t tx = 0; tx < w->k[2]; tx++) {
          const int64_t off = tx * w->d[2] - w->p[2];
          int64_t lo, hi;
          valid_range(off, w->s[2], w->img[2], gw, &lo, &hi);
          if (esize == 4 && w->img[0] == 1 && w->grid[0] == 1 && w->k[0] == 1 && w->p[0] == 0 && w->s[2] == 1) {
            /* 1-D / 2-D float32, width stride 1: rows added inline */
            float *cf = (float *)chan + off;
            const float *sr = (const float *)src;
            for (int64_t r = 0; r < nrows; r++, sr += gw) {
              const int64_t iy = (row0 + r) * w->s[1] - w->p[1] + ty * w->d[1];
              if (iy < 0 || iy >= w->img[1]) continue;
              float *d = cf + iy * w->img[2];
              int64_t x = lo;
              for (; x + 4 <= hi; x += 4)
                wasm_v128_store(d + x, wasm_f32x4_add(wasm_v128_load(d + x), wasm_v128_load(sr + x)));
              for (; x < hi; x++) d[x] += sr[x];
            }
            src += (size_t)(nrows * gw) * esize;
            continue;
          }
          FOR_TAP_ROWS(w, row0, nrows, tz, ty, r, dst_off, {
            if (dst_off >= 0 && hi > lo)
              row_add(chan + (size_t)(dst_off + lo * w->s[2] + off) * esize, src + (size_t)(r * gw + lo) * esize,
                      hi - lo, w->s[2], esize);
          });
          src += (size_t)(nrows * gw) * esize;
        }
  }
}

/* Image row of channel c for grid row gr (a flat (depth, height) index) and taps (tz, ty); NULL
 * when that row falls into the padding. */
static const char *image_row(const window *w, const char *img, int64_t c, int64_t gr, int64_t tz, int64_t ty,
                             size_t esize) {
  const int64_t gz = gr / w->grid[1], gy = gr % w->grid[1];
  const int64_t iz = gz * w->s[0] - w->p[0] + tz * w->d[0];
  const int64_t iy = gy * w->s[1] - w->p[1] + ty * w->d[1];
  if (iz < 0 || iz >= w->img[0] || iy < 0 || iy >= w->img[1]) return NULL;
  return img + (size_t)(((c * w->img[0] + iz) * w->img[1] + iy) * w->img[2]) * esize;
}

/* out (N, F, per) = bias[f] along each channel, or zeros. */
static void fill_channels(void *out, int dtype, int64_t N, int64_t F, int64_t per, const void *bias) {
  const size_t esize = (size_t)mxw_dtype_size(dtype);
  if (!bias) {
    memset(out, 0, (size_t)(N * F * per) * esize);
    return;
  }
  for (int64_t n = 0; n < N; n++)
    for (int64_t f = 0; f < F; f++) {
      const int64_t base = (n * F + f) * per;
      if (dtype == MXW_FLOAT32) {
        const float b = ((const float *)bias)[f];
        float *o = (float *)out + base;
        for (int64_t i = 0; i < per; i++) o[i] = b;
      } else {
        const double b = ((const double *)bias)[f];
        double *o = (double *)out + base;
        for (int64_t i = 0; i < per; i++) o[i] = b;
      }
    }
}

/* C (M, N) = op(A) op(B) (+ C when accumulate), in the dtype of the operands. */
static int gemm(int dtype, int trans_a, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda, const void *B,
                int64_t ldb, int accumulate, void *C, int64_t ldc) {
  if (dtype == MXW_FLOAT32)
    return mxw_sgemm(trans_a, 0, M, N, K, 1.f, (const float *)A, lda, (const float *)B, ldb, accumulate ? 1.f : 0.f,
                     (float *)C, ldc);
  return mxw_dgemm(trans_a, 0, M, N, K, 1.0, (const double *)A, lda, (const double *)B, ldb, accumulate ? 1.0 : 0.0,
                   (double *)C, ldc);
}

/* Grid rows per band so that a (rows_per_pos, band) column buffer stays within COL_BUDGET. */
static int64_t band_rows(const window *w, int64_t rows_per_pos, size_t esize) {
  const int64_t total = w->grid[0] * w->grid[1];
  const int64_t per_row = rows_per_pos * w->grid[2] * (int64_t)esize;
  int64_t band = per_row > 0 ? (int64_t)COL_BUDGET / per_row : total;
  if (band < 1) band = 1;
  return band < total ? band : total;
}

/* A 1-D or 2-D window (depth 1 everywhere, no depth padding): what the depthwise loop handles. */
static int is_planar(const window *w) { return w->img[0] == 1 && w->grid[0] == 1 && w->k[0] == 1 && w->p[0] == 0; }

static int is_pointwise(const window *w) {
  for (int i = 0; i < 3; i++)
    if (w->k[i] != 1 || w->s[i] != 1 || w->p[i] != 0 || w->img[i] != w->grid[i]) return 0;
  return 1;
}

/* ---- threads ------------------------------------------------------------------------------------
 * Every path splits its work into units fixed by the shapes alone (planes, (image, group, band)
 * triples, filter blocks, channel blocks) and runs each unit the same way on whatever thread
 * holds it, so results are bit-identical for any thread count. The units go to the pool when the
 * call is big enough (mxw_conv_parallel_min_work multiply-adds) and there are enough of them to
 * keep every thread busy; otherwise they run in order on the calling thread, and the GEMMs inside
 * split themselves (mxw_sgemm is bit-identical for any split). A unit that fails (scratch memory)
 * sets `failed`; the error message is already set. */
int64_t mxw_conv_parallel_min_work = 1 << 18;

/* Whether `units` units of `work` multiply-adds in all should go to the pool as units. */
static int split_units(int64_t units, double work) {
  const int threads = mxw_get_num_threads();
  if (threads <= 1 || units < 2 || work < (double)mxw_conv_parallel_min_work) return 0;
  /* few units over many threads leave some idle: 3 units on 2 threads use 3/4 of them */
  return units % threads == 0 || units >= 3 * (int64_t)threads;
}

/* fn over [0, units): on the pool when the work pays for a wake-up, else inline. */
static void run_units(int64_t units, double work, mxw_task_fn fn, void *ctx) {
  if (units <= 0) return;
  if (mxw_get_num_threads() > 1 && units > 1 && work >= (double)mxw_conv_parallel_min_work)
    mxw_parallel_for(units, 1, fn, ctx);
  else
    fn(ctx, 0, units);
}

/* ---- float32 depthwise 1-D/2-D convolution -------------------------------------------------------- */
/* One output row: y[x] = b + sum over taps t of wt[t] * base[off[t] + x], x < n; 16 outputs
 * (four f32x4 accumulators) at a time, then 4; rows of 4 or more end with an overlapping 4-wide
 * block (it recomputes equal values) instead of a scalar tail. (A copy specialised to 9 taps,
 * unrolled, measured slower on wide rows in V8: the hoisted weight splats spill.) */
static void dw_row_f32(const float *base, const int64_t *off, const float *wt, int ntaps, float b, float *y,
                       int64_t n) {
  int64_t x = 0;
  for (; x + 16 <= n; x += 16) {
    v128_t a0 = wasm_f32x4_splat(b), a1 = a0, a2 = a0, a3 = a0;
    for (int t = 0; t < ntaps; t++) {
      const float *s = base + off[t] + x;
      const v128_t wv = wasm_f32x4_splat(wt[t]);
      a0 = MXW_F32X4_MADD(a0, wv, wasm_v128_load(s));
      a1 = MXW_F32X4_MADD(a1, wv, wasm_v128_load(s + 4));
      a2 = MXW_F32X4_MADD(a2, wv, wasm_v128_load(s + 8));
      a3 = MXW_F32X4_MADD(a3, wv, wasm_v128_load(s + 12));
    }
    wasm_v128_store(y + x, a0);
    wasm_v128_store(y + x + 4, a1);
    wasm_v128_store(y + x + 8, a2);
    wasm_v128_store(y + x + 12, a3);
  }
  if (n >= 4) {
    for (;;) {
      if (x + 4 > n) x = n - 4; /* the last block overlaps the previous one: same values */
      v128_t a0 = wasm_f32x4_splat(b);
      for (int t = 0; t < ntaps; t++)
        a0 = MXW_F32X4_MADD(a0, wasm_f32x4_splat(wt[t]), wasm_v128_load(base + off[t] + x));
      wasm_v128_store(y + x, a0);
      x += 4;
      if (x >= n) break;
    }
  }
  for (; x < n; x++) {
    float acc = b;
    for (int t = 0; t < ntaps; t++) acc += wt[t] * base[off[t] + x];
    y[x] = acc;
  }
}

/* One input row (W values) into a zero-padded row split into `sw` phases: padded column
 * q*sw + ph goes to phase ph, slot q, at row + ph * Wq + q. Only the W data cells are written. */
static void split_row_f32(float *row, const float *src, int64_t W, int64_t pw, int64_t sw, int64_t Wq) {
  if (sw == 1) {
    memcpy(row + pw, src, (size_t)W * sizeof(float));
    return;
  }
  if (sw == 2) {
    /* 8 inputs at a time: the even ones go to one phase, the odd ones to the other */
    float *even = row + (pw % 2) * Wq + pw / 2, *odd = row + ((pw + 1) % 2) * Wq + (pw + 1) / 2;
    int64_t x = 0;
    for (; x + 8 <= W; x += 8) {
      const v128_t v0 = wasm_v128_load(src + x), v1 = wasm_v128_load(src + x + 4);
      wasm_v128_store(even + x / 2, wasm_i32x4_shuffle(v0, v1, 0, 2, 4, 6));
      wasm_v128_store(odd + x / 2, wasm_i32x4_shuffle(v0, v1, 1, 3, 5, 7));
    }
    for (; x < W; x++) (x % 2 ? odd : even)[x / 2] = src[x];
    return;
  }
  /* phase ph takes the inputs x with (x + pw) % sw == ph, at slot (x + pw) / sw */
  for (int64_t phase = 0; phase < sw; phase++) {
    const int64_t x0 = ((phase - pw) % sw + sw) % sw;
    float *dst = row + phase * Wq + (x0 + pw) / sw;
    for (int64_t x = x0; x < W; x += sw) *dst++ = src[x];
  }
}

/* Each channel is copied into a zero-padded buffer whose rows are split into `sw` phases
 * (split_row_f32), so that for every tap the inputs of consecutive outputs are contiguous,
 * whatever the width stride:
 *   out[y][x] = sum_{i,j} w[i][j] * buf[y*sh + i*dh][phase (j*dw) % sw][(j*dw) / sw + x]
 * Bounds: x <= Wo-1 gives (Wo-1)*sw + (kw-1)*dw <= W + 2*pw - 1, i.e. slot <= Wq - 1.
 * Threads: one unit per (image, channel) plane, each thread with its own buffer. */
typedef struct {
  const window *w;
  const float *data, *weight, *bias;
  float *out;
  int64_t C;
  atomic_int failed;
} dw_job;

/* MobileNet's depthwise 3x3 (pad 1, stride 1 or 2 in both dims, no dilation) runs the in-place
 * kernel of kernels/dwconv.c: no padded copy, rows loaded once for every output row they feed. */
static int is_dw3x3(const window *w) {
  return is_planar(w) && w->k[1] == 3 && w->k[2] == 3 && w->p[1] == 1 && w->p[2] == 1 && w->d[1] == 1 && w->d[2] == 1 &&
         w->s[1] == w->s[2] && (w->s[1] == 1 || w->s[1] == 2);
}

static void depthwise_planes(void *ctx, int64_t begin, int64_t end) {
  dw_job *j = (dw_job *)ctx;
  const window *w = j->w;
  if (is_dw3x3(w)) {
    const int64_t plane = w->img[1] * w->img[2], oplane = w->grid[1] * w->grid[2];
    for (int64_t u = begin; u < end; u++) {
      const int64_t c = u % j->C;
      mxw_f32_dwconv3x3((size_t)w->img[1], (size_t)w->img[2], (int)w->s[1], j->data + u * plane, j->weight + c * 9,
                        j->bias ? j->bias[c] : 0.f, j->out + u * oplane);
    }
    return;
  }
  const int64_t H = w->img[1], W = w->img[2], Ho = w->grid[1], Wo = w->grid[2];
  const int64_t kh = w->k[1], kw = w->k[2], sh = w->s[1], sw = w->s[2], dh = w->d[1], dw = w->d[2];
  const int64_t ph = w->p[1], pw = w->p[2];
  const int64_t Hp = H + 2 * ph, Wp = W + 2 * pw, Wq = (Wp + sw - 1) / sw, pitch = sw * Wq;
  const int ntaps = (int)(kh * kw);
  float *buf = (float *)mxw_scratch(0, (size_t)(Hp * pitch) * sizeof(float));
  if (!buf) {
    atomic_store(&j->failed, 1);
    return;
  }
  int64_t off[DW_MAX_TAPS];
  for (int64_t i = 0; i < kh; i++)
    for (int64_t k = 0; k < kw; k++) off[i * kw + k] = i * dh * pitch + ((k * dw) % sw) * Wq + (k * dw) / sw;
  /* The padding cells are never written below, so zeroing once serves every plane. */
  memset(buf, 0, (size_t)(Hp * pitch) * sizeof(float));
  for (int64_t u = begin; u < end; u++) {
    const int64_t c = u % j->C;
    const float *in = j->data + u * H * W;
    for (int64_t y = 0; y < H; y++) split_row_f32(buf + (y + ph) * pitch, in + y * W, W, pw, sw, Wq);
    const float *wt = j->weight + c * ntaps;
    const float b = j->bias ? j->bias[c] : 0.f;
    float *o = j->out + u * Ho * Wo;
    for (int64_t y = 0; y < Ho; y++) dw_row_f32(buf + y * sh * pitch, off, wt, ntaps, b, o + y * Wo, Wo);
  }
}

static int depthwise_f32(const window *w, const float *data, const float *weight, const float *bias, float *out,
                         int64_t N, int64_t C) {
  dw_job j = {w, data, weight, bias, out, C, 0};
  run_units(N * C, (double)(N * C) * (double)prod3(w->grid) * (double)prod3(w->k), depthwise_planes, &j);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* ---- float32 depthwise 1-D/2-D transposed convolution and weight gradient ------------------------ */
/* Both use depthwise_f32's zero-padded, phase-split channel buffer, where the image cells that tap t
 * of consecutive grid positions x touch are consecutive: buf[y*sh*pitch + off[t] + x]. */
typedef struct {
  int64_t H, W, Ho, Wo, sh, ph, pw, sw, Wq, pitch, Hp;
  int ntaps;
  int64_t off[DW_MAX_TAPS];
} dw_layout;

static void dw_layout_init(const window *w, dw_layout *l) {
  l->H = w->img[1];
  l->W = w->img[2];
  l->Ho = w->grid[1];
  l->Wo = w->grid[2];
  l->sh = w->s[1];
  l->sw = w->s[2];
  l->ph = w->p[1];
  l->pw = w->p[2];
  l->Hp = l->H + 2 * l->ph;
  l->Wq = (l->W + 2 * l->pw + l->sw - 1) / l->sw;
  l->pitch = l->sw * l->Wq;
  l->ntaps = (int)(w->k[1] * w->k[2]);
  for (int64_t i = 0; i < w->k[1]; i++)
    for (int64_t j = 0; j < w->k[2]; j++)
      l->off[i * w->k[2] + j] = i * w->d[1] * l->pitch + ((j * w->d[2]) % l->sw) * l->Wq + (j * w->d[2]) / l->sw;
}

/* The inverse of split_row_f32: dst[x] = the cell of data column x in a padded, phase-split row. */
static void merge_row_f32(float *dst, const float *row, int64_t W, int64_t pw, int64_t sw, int64_t Wq, float bias) {
  if (sw == 1) {
    for (int64_t x = 0; x < W; x++) dst[x] = row[pw + x] + bias;
    return;
  }
  for (int64_t phase = 0; phase < sw; phase++) {
    const int64_t x0 = ((phase - pw) % sw + sw) % sw;
    const float *src = row + phase * Wq + (x0 + pw) / sw;
    for (int64_t x = x0; x < W; x += sw) dst[x] = *src++ + bias;
  }
}

/* Depthwise transposed convolution (one input channel to one output channel, Cg == Fg == 1): the
 * image of channel c is bias[c] + sum over grid cells and taps of wt[t] * grid value, scattered as
 * whole contiguous runs into the padded buffer, then merged out of it. data (N, C, grid) -> out
 * (N, C, image). Threads: one unit per (image, channel) plane. */
static void depthwise_deconv_planes(void *ctx, int64_t begin, int64_t end) {
  dw_job *j = (dw_job *)ctx;
  dw_layout l;
  dw_layout_init(j->w, &l);
  float *buf = (float *)mxw_scratch(0, (size_t)(l.Hp * l.pitch + 1) * sizeof(float));
  if (!buf) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t u = begin; u < end; u++) {
    const int64_t c = u % j->C;
    memset(buf, 0, (size_t)(l.Hp * l.pitch) * sizeof(float));
    const float *g = j->data + u * l.Ho * l.Wo, *wt = j->weight + c * l.ntaps;
    for (int64_t y = 0; y < l.Ho; y++) {
      const float *gr = g + y * l.Wo;
      float *base = buf + y * l.sh * l.pitch;
      for (int t = 0; t < l.ntaps; t++) {
        float *d = base + l.off[t];
        const v128_t wv = wasm_f32x4_splat(wt[t]);
        int64_t x = 0;
        for (; x + 4 <= l.Wo; x += 4)
          wasm_v128_store(d + x, MXW_F32X4_MADD(wasm_v128_load(d + x), wv, wasm_v128_load(gr + x)));
        for (; x < l.Wo; x++) d[x] += wt[t] * gr[x];
      }
    }
    float *o = j->out + u * l.H * l.W;
    const float b = j->bias ? j->bias[c] : 0.f;
    for (int64_t y = 0; y < l.H; y++) merge_row_f32(o + y * l.W, buf + (y + l.ph) * l.pitch, l.W, l.pw, l.sw, l.Wq, b);
  }
}

static int depthwise_deconv_f32(const window *w, const float *data, const float *weight, const float *bias, float *out,
                                int64_t N, int64_t C) {
  dw_job j = {w, data, weight, bias, out, C, 0};
  run_units(N * C, (double)(N * C) * (double)prod3(w->grid) * (double)prod3(w->k), depthwise_deconv_planes, &j);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* Depthwise weight gradient: dw[c, t] = sum over n and grid cells of grid[n, c, cell] * the image
 * cell tap t of that cell reads (img split into the padded buffer once per (n, c)); one f32x4
 * accumulator per tap over each (n, c), summed into double. img (N, C, image), grid (N, C, grid).
 * Threads: one unit per channel (its sum over the batch stays in one unit, in batch order). */
typedef struct {
  const window *w;
  const float *img, *grid;
  float *dw;
  int64_t N, C;
  atomic_int failed;
} dw_wgrad_job;

static void depthwise_wgrad_channels(void *ctx, int64_t begin, int64_t end) {
  dw_wgrad_job *j = (dw_wgrad_job *)ctx;
  dw_layout l;
  dw_layout_init(j->w, &l);
  float *buf = (float *)mxw_scratch(0, (size_t)(l.Hp * l.pitch + 1) * sizeof(float));
  if (!buf) {
    atomic_store(&j->failed, 1);
    return;
  }
  memset(buf, 0, (size_t)(l.Hp * l.pitch) * sizeof(float)); /* the padding cells are never written */
  double sum[DW_MAX_TAPS];
  v128_t acc[DW_MAX_TAPS];
  const int64_t W4 = l.Wo & ~(int64_t)3, C = j->C;
  for (int64_t c = begin; c < end; c++) {
    for (int t = 0; t < l.ntaps; t++) sum[t] = 0.0;
    for (int64_t n = 0; n < j->N; n++) {
      const float *x = j->img + (n * C + c) * l.H * l.W, *g = j->grid + (n * C + c) * l.Ho * l.Wo;
      for (int64_t y = 0; y < l.H; y++) split_row_f32(buf + (y + l.ph) * l.pitch, x + y * l.W, l.W, l.pw, l.sw, l.Wq);
      for (int t = 0; t < l.ntaps; t++) acc[t] = wasm_f32x4_splat(0.f);
      for (int64_t y = 0; y < l.Ho; y++) {
        const float *gr = g + y * l.Wo, *base = buf + y * l.sh * l.pitch;
        for (int64_t xx = 0; xx < W4; xx += 4) {
          const v128_t gv = wasm_v128_load(gr + xx);
          for (int t = 0; t < l.ntaps; t++) acc[t] = MXW_F32X4_MADD(acc[t], gv, wasm_v128_load(base + l.off[t] + xx));
        }
        for (int64_t xx = W4; xx < l.Wo; xx++)
          for (int t = 0; t < l.ntaps; t++) sum[t] += (double)(gr[xx] * base[l.off[t] + xx]);
      }
      for (int t = 0; t < l.ntaps; t++) sum[t] += lanes_sum_f32(acc[t]);
    }
    for (int t = 0; t < l.ntaps; t++) j->dw[c * l.ntaps + t] = (float)sum[t];
  }
}

static int depthwise_wgrad_f32(const window *w, const float *img, const float *grid, float *dw, int64_t N, int64_t C) {
  dw_wgrad_job j = {w, img, grid, dw, N, C, 0};
  run_units(C, (double)(N * C) * (double)prod3(w->grid) * (double)prod3(w->k), depthwise_wgrad_channels, &j);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* ---- float32 direct convolution for few filters per group ---------------------------------------- */
/* With few filters per group (LeNet: 5) im2col + GEMM wastes most of its work: the column matrix
 * is taps times the size of the image, and a 5-row product fills the 4x8 GEMM microkernel only
 * 5/8 of the time (LeNet's two convolutions ran at 4-7 GFLOP/s in V8; this runs them at 30-35).
 * Instead, each group's channels are copied once into the zero-padded, phase-split layout of
 * depthwise_f32 (not at all without padding and with width stride 1), and for each block of fb
 * filters and 8 (or 4) consecutive outputs of an output row:
 *   acc[f][x, x+8) = bias[f] + sum over k < K of wpk[k][f] * src[row + off[k] + x, ... + 8)
 * with K = Cg * taps, off[k] the buffer offset of tap k = (channel, tz, ty, tx) and wpk the
 * block's weights transposed to (K, fb) so that one tap's fb weights are adjacent. Each input
 * vector loaded serves fb filters, and no column matrix is written. Rows of 4 or more outputs
 * only (the caller checks): a row ends with a block that overlaps the previous one (it
 * recomputes equal values). */
enum {
  DIRECT_FB = 5,     /* filters per block: 10 accumulators, 2 inputs, 4 weights, 1 splat: 14 registers */
  DIRECT_MAX_FG = 32 /* used up to this many filters per group: measured 1.1-4x faster than im2col +
                      * GEMM from 5 to 32 filters (about even at 64); for a 1x1 stride-1 window, where
                      * the GEMM needs no column matrix, only up to DIRECT_FB filters */
};

/* Keeps clang from unrolling a loop (V8 then spills the accumulators). */
#ifdef __clang__
#define NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define NO_UNROLL
#endif

typedef struct {
  const float *src;     /* the group's channel 0 for this image (padded buffer or the data) */
  const ptrdiff_t *off; /* K tap offsets into src */
  int64_t K;
  const float *wpk; /* (K, fb) weights, then fb biases */
  float *out;       /* the block's first filter for this image; filters grid apart */
  int64_t grid, go, ho, wo;
  int64_t zstep, ystep; /* src offset per output depth / per output row */
} direct_job;

/* Lane f (0..3) of w in every lane. */
static inline __attribute__((always_inline)) v128_t lane_splat(v128_t w, int f) {
  switch (f) {
    case 0: return wasm_i32x4_shuffle(w, w, 0, 0, 0, 0);
    case 1: return wasm_i32x4_shuffle(w, w, 1, 1, 1, 1);
    case 2: return wasm_i32x4_shuffle(w, w, 2, 2, 2, 2);
    default: return wasm_i32x4_shuffle(w, w, 3, 3, 3, 3);
  }
}

/* Outputs [x, x + 4*nv) of fb filters for the output row whose inputs start at src. With 4 or 5
 * filters, the first 4 weights of a tap come from one load and are broadcast by shuffles: with a
 * load-and-splat per filter V8 loads all of them up front and, at 5 filters, spills accumulators. */
static inline __attribute__((always_inline)) void direct_block_f32(const int fb, const int nv, const float *src,
                                                                   const direct_job *j, float *y) {
  v128_t acc[DIRECT_FB][2];
  const float *wk = j->wpk;
  for (int f = 0; f < fb; f++) acc[f][0] = acc[f][1] = wasm_f32x4_splat(wk[j->K * fb + f]);
  NO_UNROLL
  for (int64_t k = 0; k < j->K; k++, wk += fb) {
    const float *s = src + j->off[k];
    const v128_t x0 = wasm_v128_load(s);
    const v128_t x1 = nv > 1 ? wasm_v128_load(s + 4) : x0;
    const v128_t w4 = fb >= 4 ? wasm_v128_load(wk) : x0;
    for (int f = 0; f < fb; f++) {
      const v128_t wv = fb >= 4 && f < 4 ? lane_splat(w4, f) : wasm_v128_load32_splat(wk + f);
      acc[f][0] = MXW_F32X4_MADD(acc[f][0], wv, x0);
      if (nv > 1) acc[f][1] = MXW_F32X4_MADD(acc[f][1], wv, x1);
    }
  }
  for (int f = 0; f < fb; f++) {
    wasm_v128_store(y + f * j->grid, acc[f][0]);
    if (nv > 1) wasm_v128_store(y + f * j->grid + 4, acc[f][1]);
  }
}

/* One function per (fb, nv), called through a table: that keeps each out of line (clang and
 * binaryen inline functions with one caller), and V8 unrolls an inner loop by up to 5 times when
 * it is nested deeply in its function, which makes it spill the accumulators; at the top level of
 * a function it leaves the tap loop alone. */
typedef void direct_block_fn(const float *src, const direct_job *j, float *y);
#define DIRECT_BLOCK(FB)                                                               \
  static void direct_block_##FB##x8(const float *src, const direct_job *j, float *y) { \
    direct_block_f32(FB, 2, src, j, y);                                                \
  }                                                                                    \
  static void direct_block_##FB##x4(const float *src, const direct_job *j, float *y) { \
    direct_block_f32(FB, 1, src, j, y);                                                \
  }
DIRECT_BLOCK(1)
DIRECT_BLOCK(2)
DIRECT_BLOCK(3)
DIRECT_BLOCK(4)
DIRECT_BLOCK(5)
#undef DIRECT_BLOCK
static direct_block_fn *const k_direct_blocks[DIRECT_FB][2] = {
    {direct_block_1x4, direct_block_1x8}, {direct_block_2x4, direct_block_2x8}, {direct_block_3x4, direct_block_3x8},
    {direct_block_4x4, direct_block_4x8}, {direct_block_5x4, direct_block_5x8},
};

/* One block of fb (1..DIRECT_FB) filters over one image. */
static void direct_plane(int fb, const direct_job *j) {
  direct_block_fn *const block4 = k_direct_blocks[fb - 1][0], *const block8 = k_direct_blocks[fb - 1][1];
  const int64_t wo = j->wo;
  for (int64_t gz = 0; gz < j->go; gz++)
    for (int64_t gy = 0; gy < j->ho; gy++) {
      const float *src = j->src + gz * j->zstep + gy * j->ystep;
      float *y = j->out + (gz * j->ho + gy) * wo;
      int64_t x = 0;
      for (; x + 8 <= wo; x += 8) block8(src + x, j, y + x);
      if (x == wo) continue;
      if (wo >= 8) {
        block8(src + wo - 8, j, y + wo - 8);
      } else {
        block4(src, j, y);
        if (wo > 4) block4(src + wo - 4, j, y + wo - 4);
      }
    }
}

/* Convolution as above: data (N, C, image), weight (F, C/G, taps), bias (F,) or NULL -> out
 * (N, F, grid). Correct for any F/G (DIRECT_MAX_FG is about speed); the grid width must be >= 4.
 * Threads: one unit per (group, image, filter block), in that order; a chunk copies an image's
 * channels into its own buffer once for the blocks it holds. */
typedef struct {
  const window *w;
  const float *data;
  float *out;
  const float *wpk;     /* every group's packed blocks, group g at g * Fg * (K + 1) */
  const ptrdiff_t *off; /* K tap offsets into a group's channel 0 */
  int64_t N, C, F, Cg, Fg, K, nblocks, chan, plane, pitch, Wq;
  int copy;
  atomic_int failed;
} direct_conv_job;

static void direct_units(void *ctx, int64_t begin, int64_t end) {
  direct_conv_job *d = (direct_conv_job *)ctx;
  const window *w = d->w;
  const int64_t D = w->img[0], H = w->img[1], W = w->img[2], sw = w->s[2], grid = prod3(w->grid);
  float *buf = NULL;
  if (d->copy) {
    if (!(buf = (float *)mxw_scratch(0, (size_t)(d->Cg * d->chan + 1) * sizeof(float)))) {
      atomic_store(&d->failed, 1);
      return;
    }
    /* The padding cells are never written below, so zeroing once serves every image. */
    memset(buf, 0, (size_t)(d->Cg * d->chan) * sizeof(float));
  }
  direct_job j = {.off = d->off,
                  .K = d->K,
                  .grid = grid,
                  .go = w->grid[0],
                  .ho = w->grid[1],
                  .wo = w->grid[2],
                  .zstep = w->s[0] * d->plane,
                  .ystep = w->s[1] * d->pitch};
  int64_t in_buf = -1; /* the (group, image) pair whose channels buf holds */
  for (int64_t u = begin; u < end; u++) {
    const int64_t b = u % d->nblocks, gn = u / d->nblocks, g = gn / d->N, n = gn % d->N;
    const float *x = d->data + (n * d->C + g * d->Cg) * D * H * W;
    if (d->copy && in_buf != gn) {
      for (int64_t c = 0; c < d->Cg; c++)
        for (int64_t z = 0; z < D; z++)
          for (int64_t yy = 0; yy < H; yy++)
            split_row_f32(buf + c * d->chan + (z + w->p[0]) * d->plane + (yy + w->p[1]) * d->pitch,
                          x + ((c * D + z) * H + yy) * W, W, w->p[2], sw, d->Wq);
      in_buf = gn;
    }
    const int64_t f0 = b * d->Fg / d->nblocks, fb = (b + 1) * d->Fg / d->nblocks - f0;
    j.src = d->copy ? buf : x;
    j.wpk = d->wpk + (g * d->Fg + f0) * (d->K + 1);
    j.out = d->out + (n * d->F + g * d->Fg + f0) * grid;
    direct_plane((int)fb, &j);
  }
}

static int direct_f32(const window *w, const float *data, const float *weight, const float *bias, float *out, int64_t N,
                      int64_t C, int64_t F, int64_t G) {
  const int64_t Cg = C / G, Fg = F / G, K = Cg * prod3(w->k);
  const int64_t D = w->img[0], H = w->img[1], W = w->img[2], sw = w->s[2];
  const int copy = w->p[0] != 0 || w->p[1] != 0 || w->p[2] != 0 || sw != 1;
  const int64_t Wq = copy ? (W + 2 * w->p[2] + sw - 1) / sw : W, pitch = sw * Wq;
  const int64_t plane = (H + 2 * w->p[1]) * pitch, chan = (D + 2 * w->p[0]) * plane;
  const int64_t nblocks = (Fg + DIRECT_FB - 1) / DIRECT_FB;
  float *wpk = (float *)mxw_scratch(1, (size_t)(F * (K + 1)) * sizeof(float));
  ptrdiff_t *off = (ptrdiff_t *)mxw_scratch(2, (size_t)(K + 1) * sizeof(ptrdiff_t));
  if (!wpk || !off) return -1;
  int64_t k = 0;
  for (int64_t c = 0; c < Cg; c++)
    for (int64_t tz = 0; tz < w->k[0]; tz++)
      for (int64_t ty = 0; ty < w->k[1]; ty++)
        for (int64_t tx = 0; tx < w->k[2]; tx++)
          off[k++] = (ptrdiff_t)(c * chan + tz * w->d[0] * plane + ty * w->d[1] * pitch + ((tx * w->d[2]) % sw) * Wq +
                                 (tx * w->d[2]) / sw);
  /* per group, filter blocks of nearly equal size, each as (K, fb) weights followed by fb biases
   * (block b of group g at (g * Fg + f0) * (K + 1)) */
  float *dst = wpk;
  for (int64_t g = 0; g < G; g++)
    for (int64_t b = 0; b < nblocks; b++) {
      const int64_t f0 = b * Fg / nblocks, fb = (b + 1) * Fg / nblocks - f0;
      const float *wf = weight + (g * Fg + f0) * K;
      for (int64_t kk = 0; kk < K; kk++)
        for (int64_t f = 0; f < fb; f++) *dst++ = wf[f * K + kk];
      for (int64_t f = 0; f < fb; f++) *dst++ = bias ? bias[g * Fg + f0 + f] : 0.f;
    }
  direct_conv_job d = {w, data, out, wpk, off, N, C, F, Cg, Fg, K, nblocks, chan, plane, pitch, Wq, copy, 0};
  run_units(G * N * nblocks, (double)(N * F) * (double)K * (double)prod3(w->grid), direct_units, &d);
  return atomic_load(&d.failed) ? -1 : 0;
}

/* ---- the two drivers ----------------------------------------------------------------------------- */
/* Grid rows in `nbands` equal bands of `band` rows, each within COL_BUDGET (fixed by the shape). */
static void split_bands(const window *w, int64_t rows_per_pos, size_t esize, int64_t *nbands, int64_t *band) {
  const int64_t total = w->grid[0] * w->grid[1], most = band_rows(w, rows_per_pos, esize);
  *nbands = total > 0 ? (total + most - 1) / most : 1;
  *band = total > 0 ? (total + *nbands - 1) / *nbands : 0;
}

/* im2col / col2im over channels [0, chans), split across the pool by channels (each channel's
 * rows of col are its own), for a unit that runs on the calling thread. */
typedef struct {
  const window *w;
  size_t esize;
  const char *src;
  char *dst;
  int64_t row0, nrows, taps;
  int to_image; /* 0: im2col (src image, dst col); 1: col2im (src col, dst image) */
} colimg_job;

static void colimg_chunk(void *ctx, int64_t begin, int64_t end) {
  const colimg_job *j = (const colimg_job *)ctx;
  const size_t plane = (size_t)prod3(j->w->img) * j->esize,
               colc = (size_t)(j->taps * j->nrows * j->w->grid[2]) * j->esize;
  if (j->to_image)
    col2im(j->w, j->esize, j->src + (size_t)begin * colc, end - begin, j->row0, j->nrows,
           j->dst + (size_t)begin * plane);
  else
    im2col(j->w, j->esize, j->src + (size_t)begin * plane, end - begin, j->row0, j->nrows,
           j->dst + (size_t)begin * colc);
}

static void colimg_split(const window *w, size_t esize, const void *src, int64_t chans, int64_t row0, int64_t nrows,
                         void *dst, int to_image) {
  const int64_t taps = prod3(w->k);
  colimg_job j = {w, esize, (const char *)src, (char *)dst, row0, nrows, taps, to_image};
  run_units(chans, (double)(chans * taps) * (double)(nrows * w->grid[2]), colimg_chunk, &j);
}

/* Convolution by im2col + GEMM: one unit per (image, group, band of grid rows):
 *   out[n, g] (Fg, band) (= bias) (+)= W[g] (Fg, Cg*taps) * im2col(in[n, g], band) */
typedef struct {
  const window *w;
  int dtype, pointwise, inner; /* inner: units run in order on the calling thread, im2col and GEMM split */
  size_t esize;
  const char *data, *weight;
  const void *bias;
  char *out;
  int64_t C, F, G, Cg, Fg, rows, img, grid, gw, total_rows, nbands, band;
  atomic_int failed;
} conv_gemm_job;

static void conv_gemm_units(void *ctx, int64_t begin, int64_t end) {
  conv_gemm_job *j = (conv_gemm_job *)ctx;
  const size_t es = j->esize;
  void *col = NULL;
  if (!j->pointwise && !(col = mxw_scratch(0, (size_t)(j->rows * j->band * j->gw) * es + 1))) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t u = begin; u < end; u++) {
    const int64_t b = u % j->nbands, ng = u / j->nbands, g = ng % j->G, n = ng / j->G;
    const int64_t r0 = b * j->band, nr = j->band < j->total_rows - r0 ? j->band : j->total_rows - r0;
    const int64_t cols = nr * j->gw;
    const char *x = j->data + (size_t)((n * j->C + g * j->Cg) * j->img) * es;
    const char *wg = j->weight + (size_t)(g * j->Fg * j->rows) * es;
    char *y = j->out + (size_t)((n * j->F + g * j->Fg) * j->grid + r0 * j->gw) * es;
    if (j->bias)
      for (int64_t f = 0; f < j->Fg; f++) {
        char *yf = y + (size_t)(f * j->grid) * es;
        if (j->dtype == MXW_FLOAT32) {
          const float bv = ((const float *)j->bias)[g * j->Fg + f];
          for (int64_t i = 0; i < cols; i++) ((float *)yf)[i] = bv;
        } else {
          const double bv = ((const double *)j->bias)[g * j->Fg + f];
          for (int64_t i = 0; i < cols; i++) ((double *)yf)[i] = bv;
        }
      }
    int rc;
    if (j->pointwise) {
      rc = gemm(j->dtype, 0, j->Fg, cols, j->Cg, wg, j->Cg, x + (size_t)(r0 * j->gw) * es, j->img, j->bias != NULL, y,
                j->grid);
    } else {
      if (j->inner)
        colimg_split(j->w, es, x, j->Cg, r0, nr, col, 0);
      else
        im2col(j->w, es, x, j->Cg, r0, nr, col);
      rc = gemm(j->dtype, 0, j->Fg, cols, j->rows, wg, j->rows, col, cols, j->bias != NULL, y, j->grid);
    }
    if (rc != 0) {
      atomic_store(&j->failed, 1);
      return;
    }
  }
}

/* ---- Winograd F(2x2, 3x3) for 3x3 stride-1 float32 convolution (kernels/winograd.c) ----------------
 * Per image and group, blocks of whole tile rows (about WINO_TILES tiles, fixed by the shape) are
 * the units: a unit copies the input rows its tiles read into a zero-padded buffer, transforms
 * them (V), runs the 16 products M[xi] = U[xi] V[xi] (mxw_sgemm) and transforms M into its output
 * rows. The filter transform U is computed once per call. Units go to the pool as units when there
 * are enough of them; otherwise (one 14x14 image: a single unit) each unit's three phases are split
 * instead: the input transform by channels, the products by xi, the output transform by filters.
 * Every output is computed the same way whatever unit, phase split or thread holds it. */
enum { WINO_TILES = 128, WINO_MIN_TILES = 32 };

static int is_wino3x3(const window *w) {
  return is_planar(w) && w->k[1] == 3 && w->k[2] == 3 && w->s[1] == 1 && w->s[2] == 1 && w->d[1] == 1 && w->d[2] == 1 &&
         w->grid[2] >= 2;
}

typedef struct {
  const window *w;
  const float *data, *bias, *U;
  float *out;
  int64_t C, F, G, Cg, Fg, th, tw, pw, rows, nblk; /* rows: tile rows per unit */
  atomic_int failed;
} wino_job;

/* One unit: its buffers (the calling thread's scratch) and where its tiles are. */
typedef struct {
  wino_job *j;
  float *pad, *V, *M;
  int64_t n, g, ty0, nty, nrow, T;
} wino_unit;

/* Channels [c0, c1): zero-padded input rows, then their V[.][c]. */
static void wino_in(void *ctx, int64_t c0, int64_t c1) {
  const wino_unit *u = (const wino_unit *)ctx;
  const wino_job *j = u->j;
  const window *w = j->w;
  const int64_t H = w->img[1], W = w->img[2], ph = w->p[1], pw = w->p[2], nrow = u->nrow;
  const float *x = j->data + (u->n * j->C + u->g * j->Cg) * H * W;
  float *pad = u->pad + c0 * nrow * j->pw;
  /* padded rows 2 ty0 .. 2 (ty0 + nty) + 1 = input rows 2 ty0 - ph + i, columns shifted by pw */
  memset(pad, 0, (size_t)((c1 - c0) * nrow * j->pw) * sizeof(float));
  for (int64_t c = c0; c < c1; c++)
    for (int64_t i = 0; i < nrow; i++) {
      const int64_t iy = 2 * u->ty0 - ph + i;
      if (iy < 0 || iy >= H) continue;
      memcpy(u->pad + (c * nrow + i) * j->pw + pw, x + (c * H + iy) * W, (size_t)W * sizeof(float));
    }
  mxw_f32_winograd2x3_input((size_t)(c1 - c0), pad, (size_t)nrow, (size_t)j->pw, 0, (size_t)u->nty, (size_t)j->tw,
                            u->V + c0 * u->T, (size_t)u->T, (size_t)(j->Cg * u->T));
}

/* Products xi in [x0, x1): M[xi] = U[g][xi] V[xi]. */
static void wino_mul(void *ctx, int64_t x0, int64_t x1) {
  const wino_unit *u = (const wino_unit *)ctx;
  wino_job *j = u->j;
  for (int64_t xi = x0; xi < x1; xi++)
    if (mxw_sgemm(0, 0, j->Fg, u->T, j->Cg, 1.f, j->U + (u->g * 16 + xi) * j->Fg * j->Cg, j->Cg,
                  u->V + xi * j->Cg * u->T, u->T, 0.f, u->M + xi * j->Fg * u->T, u->T) != 0)
      atomic_store(&j->failed, 1);
}

/* Filters [f0, f1): their output rows from M. */
static void wino_out(void *ctx, int64_t f0, int64_t f1) {
  const wino_unit *u = (const wino_unit *)ctx;
  const wino_job *j = u->j;
  const int64_t Ho = j->w->grid[1], Wo = j->w->grid[2], f = u->g * j->Fg + f0;
  mxw_f32_winograd2x3_output((size_t)(f1 - f0), u->M + f0 * u->T, (size_t)u->T, (size_t)(j->Fg * u->T), (size_t)u->ty0,
                             (size_t)u->nty, (size_t)j->tw, j->bias ? j->bias + f : NULL,
                             j->out + (u->n * j->F + f) * Ho * Wo, (size_t)Ho, (size_t)Wo);
}

/* Units [begin, end), each whole on this thread, or (split) each with its phases across the pool. */
static void wino_run(wino_job *j, int64_t begin, int64_t end, int split) {
  const int64_t Tmax = j->rows * j->tw, prow = 2 * j->rows + 2;
  wino_unit u = {j,
                 (float *)mxw_scratch(3, (size_t)(j->Cg * prow * j->pw) * sizeof(float)),
                 (float *)mxw_scratch(0, (size_t)(16 * j->Cg * Tmax + 4) * sizeof(float)),
                 (float *)mxw_scratch(2, (size_t)(16 * j->Fg * Tmax + 4) * sizeof(float)),
                 0,
                 0,
                 0,
                 0,
                 0,
                 0};
  if (!u.pad || !u.V || !u.M) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t k = begin; k < end && !atomic_load(&j->failed); k++) {
    const int64_t blk = k % j->nblk, ng = k / j->nblk;
    u.g = ng % j->G;
    u.n = ng / j->G;
    u.ty0 = blk * j->rows;
    u.nty = j->rows < j->th - u.ty0 ? j->rows : j->th - u.ty0;
    u.T = u.nty * j->tw;
    u.nrow = 2 * u.nty + 2;
    if (split) {
      mxw_parallel_for(j->Cg, 1, wino_in, &u);
      mxw_parallel_for(16, 1, wino_mul, &u);
      mxw_parallel_for(j->Fg, 1, wino_out, &u);
    } else {
      wino_in(&u, 0, j->Cg);
      wino_mul(&u, 0, 16);
      wino_out(&u, 0, j->Fg);
    }
  }
}

static void wino_units(void *ctx, int64_t begin, int64_t end) { wino_run((wino_job *)ctx, begin, end, 0); }

/* The filter transform, one unit per filter (group g's U at g * 16 * Fg * Cg). */
typedef struct {
  const float *weight;
  float *U;
  int64_t Fg, Cg;
} wino_filter_job;

static void wino_filter_units(void *ctx, int64_t begin, int64_t end) {
  const wino_filter_job *j = (const wino_filter_job *)ctx;
  for (int64_t u = begin; u < end;) { /* filters of one group at a time */
    const int64_t g = u / j->Fg, f0 = u % j->Fg, f1 = end - g * j->Fg < j->Fg ? end - g * j->Fg : j->Fg;
    mxw_f32_winograd2x3_filter((size_t)(f1 - f0), (size_t)j->Cg, j->weight + (g * j->Fg + f0) * j->Cg * 9,
                               j->U + g * 16 * j->Fg * j->Cg + f0 * j->Cg, (size_t)(j->Fg * j->Cg));
    u = g * j->Fg + f1;
  }
}

static int winograd_f32(const window *w, const float *data, const float *weight, const float *bias, float *out,
                        int64_t N, int64_t C, int64_t F, int64_t G) {
  const int64_t Cg = C / G, Fg = F / G, Ho = w->grid[1], Wo = w->grid[2];
  const int64_t th = (Ho + 1) / 2, tw = (Wo + 1) / 2, tw4 = (tw + 3) / 4 * 4;
  float *U = (float *)mxw_scratch(1, (size_t)(G * 16 * Fg * Cg) * sizeof(float));
  if (!U) return -1;
  wino_filter_job fj = {weight, U, Fg, Cg};
  run_units(G * Fg, (double)(G * Fg * Cg) * 64.0, wino_filter_units, &fj);
  /* tile rows per unit: a divisor of th (equal units) giving about WINO_TILES tiles, and an even
   * number of units (two threads share them evenly) unless there is one */
  int64_t rows = 0;
  double best = 1e300;
  for (int64_t r = 1; r <= th; r++) {
    const int64_t nb = th / r;
    if (th % r != 0 || (nb != 1 && nb % 2 != 0)) continue;
    const double d = fabs(log((double)(r * tw) / (double)WINO_TILES));
    if (d < best) best = d, rows = r;
  }
  if (rows == 0) rows = WINO_TILES / tw < 1 ? 1 : WINO_TILES / tw < th ? WINO_TILES / tw : th;
  /* padded row width: the tiles' columns (groups of 4 tiles read 2 * tw4 + 4) and the image */
  int64_t pw = 2 * tw4 + 4;
  if (pw < w->img[2] + w->p[2]) pw = w->img[2] + w->p[2];
  wino_job j = {w, data, bias, U, out, C, F, G, Cg, Fg, th, tw, pw, rows, (th + rows - 1) / rows, 0};
  const int64_t units = N * G * j.nblk;
  const double work = (double)(N * F) * (double)Cg * (double)(th * tw) * 16.0;
  if (split_units(units, work))
    mxw_parallel_for(units, 1, wino_units, &j);
  else /* too few units for the pool: their phases split instead, if the work pays for it */
    wino_run(&j, 0, units, mxw_get_num_threads() > 1 && work >= (double)mxw_conv_parallel_min_work);
  return atomic_load(&j.failed) ? -1 : 0;
}

int mxw_conv_winograd = 1; /* 0: never (for tests and measurements) */

/* Convolution: data (N, C, image), weight (F, C/G, taps), bias (F,) or NULL -> out (N, F, grid). */
static int conv_run(const window *w, int dtype, const void *data, const void *weight, const void *bias, void *out,
                    int64_t N, int64_t C, int64_t F, int64_t G) {
  const size_t esize = (size_t)mxw_dtype_size(dtype);
  const int64_t Cg = C / G, Fg = F / G, taps = prod3(w->k), img = prod3(w->img), grid = prod3(w->grid);
  const int64_t rows = Cg * taps; /* depth of the product */
  if (N == 0 || grid == 0) return 0;
  /* the depthwise path's padded rows are about max(width, stride) long: not for a stride far past
   * the image (fuzz_attrs: a stride of 1.4e14 asked for 166 PB of scratch) */
  if (dtype == MXW_FLOAT32 && G == C && F == C && is_planar(w) && taps <= DW_MAX_TAPS &&
      w->s[2] <= w->img[2] + 2 * w->p[2] + 1)
    return depthwise_f32(w, (const float *)data, (const float *)weight, (const float *)bias, (float *)out, N, C);
  /* Winograd where the filter transform (per call) is paid back: with at least WINO_MIN_TILES
   * tiles in the batch (ResNet-18 at batch 1, one thread: 56x56 1.83x, 28x28 1.84x, 14x14 1.43x
   * faster than im2col + GEMM; 7x7 (16 tiles) 0.9x) */
  if (dtype == MXW_FLOAT32 && mxw_conv_winograd && is_wino3x3(w) && Cg >= 16 && Fg >= 16 &&
      N * ((w->grid[1] + 1) / 2) * ((w->grid[2] + 1) / 2) >= WINO_MIN_TILES)
    return winograd_f32(w, (const float *)data, (const float *)weight, (const float *)bias, (float *)out, N, C, F, G);
  if (dtype == MXW_FLOAT32 && Fg <= (is_pointwise(w) ? DIRECT_FB : DIRECT_MAX_FG) && w->grid[2] >= 4)
    return direct_f32(w, (const float *)data, (const float *)weight, (const float *)bias, (float *)out, N, C, F, G);
  conv_gemm_job j = {.w = w,
                     .dtype = dtype,
                     .pointwise = is_pointwise(w),
                     .esize = esize,
                     .data = (const char *)data,
                     .weight = (const char *)weight,
                     .bias = bias,
                     .out = (char *)out,
                     .C = C,
                     .F = F,
                     .G = G,
                     .Cg = Cg,
                     .Fg = Fg,
                     .rows = rows,
                     .img = img,
                     .grid = grid,
                     .gw = w->grid[2],
                     .total_rows = w->grid[0] * w->grid[1]};
  if (j.pointwise) { /* the input is the column matrix: one unit per (image, group) */
    j.nbands = 1;
    j.band = j.total_rows;
  } else {
    split_bands(w, rows, esize, &j.nbands, &j.band);
  }
  const int64_t units = N * G * j.nbands;
  const double work = (double)(N * F) * (double)rows * (double)grid;
  j.inner = !split_units(units, work);
  if (j.inner)
    conv_gemm_units(&j, 0, units);
  else
    mxw_parallel_for(units, 1, conv_gemm_units, &j);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* Deconvolution by GEMM + col2im: one unit per (image, group) (bands of one image overlap in
 * the output, so they stay in one unit, in order):
 *   out[n, g] (= bias) += col2im(W[g]^T (Fg*taps, Cg) * in[n, g] (Cg, band)) */
typedef struct {
  const window *w;
  int dtype, pointwise, direct, inner;
  size_t esize;
  const char *data, *weight;
  const void *bias;
  char *out;
  int64_t C, F, G, Cg, Fg, rows, img, grid, gw, total_rows, nbands, band;
  atomic_int failed;
} deconv_job;

static void deconv_units(void *ctx, int64_t begin, int64_t end) {
  deconv_job *j = (deconv_job *)ctx;
  const window *w = j->w;
  const size_t es = j->esize;
  const int64_t gw = j->gw;
  void *col = NULL;
  if (!j->pointwise && !j->direct && !(col = mxw_scratch(0, (size_t)(j->rows * j->band * gw) * es + 1))) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t u = begin; u < end; u++) {
    const int64_t g = u % j->G, n = u / j->G;
    const char *x = j->data + (size_t)((n * j->C + g * j->Cg) * j->grid) * es;
    const char *wg = j->weight + (size_t)(g * j->Cg * j->rows) * es;
    char *y = j->out + (size_t)((n * j->F + g * j->Fg) * j->img) * es;
    fill_channels(y, j->dtype, 1, j->Fg, j->img, j->bias ? (const char *)j->bias + (size_t)(g * j->Fg) * es : NULL);
    if (j->pointwise) {
      if (gemm(j->dtype, 1, j->Fg, j->grid, j->Cg, wg, j->Fg, x, j->grid, 1, y, j->img) != 0) goto fail;
    } else if (j->direct) {
      /* one input channel to one output channel: scatter every tap's weighted input row */
      int64_t t = 0;
      for (int64_t tz = 0; tz < w->k[0]; tz++)
        for (int64_t ty = 0; ty < w->k[1]; ty++)
          for (int64_t tx = 0; tx < w->k[2]; tx++, t++) {
            const double wt = mxw_load_f64(wg, j->dtype, t);
            const int64_t off = tx * w->d[2] - w->p[2];
            int64_t lo, hi;
            valid_range(off, w->s[2], w->img[2], gw, &lo, &hi);
            for (int64_t r = 0; r < j->total_rows; r++) {
              char *dst = (char *)image_row(w, y, 0, r, tz, ty, es);
              if (dst && hi > lo)
                row_scatter_add(dst + (size_t)(lo * w->s[2] + off) * es, x + (size_t)(r * gw + lo) * es, hi - lo,
                                w->s[2], wt, es);
            }
          }
    } else {
      for (int64_t r0 = 0; r0 < j->total_rows; r0 += j->band) {
        const int64_t nr = j->band < j->total_rows - r0 ? j->band : j->total_rows - r0;
        if (gemm(j->dtype, 1, j->rows, nr * gw, j->Cg, wg, j->rows, x + (size_t)(r0 * gw) * es, j->grid, 0, col,
                 nr * gw) != 0)
          goto fail;
        if (j->inner)
          colimg_split(w, es, col, j->Fg, r0, nr, y, 1);
        else
          col2im(w, es, col, j->Fg, r0, nr, y);
      }
    }
  }
  return;
fail:
  atomic_store(&j->failed, 1);
}

/* Deconvolution: data (N, C, grid), weight (C, F/G, taps), bias (F,) or NULL -> out (N, F, image). */
static int deconv_run(const window *w, int dtype, const void *data, const void *weight, const void *bias, void *out,
                      int64_t N, int64_t C, int64_t F, int64_t G) {
  const size_t esize = (size_t)mxw_dtype_size(dtype);
  const int64_t Cg = C / G, Fg = F / G, taps = prod3(w->k), img = prod3(w->img), grid = prod3(w->grid);
  const int64_t rows = Fg * taps;
  /* the depthwise path's padded rows are about max(width, stride) long: not for a stride far past
   * the image (fuzz_attrs: stride 4e14 on a 3-wide output asked for 211 TB of scratch) */
  if (dtype == MXW_FLOAT32 && Cg == 1 && Fg == 1 && is_planar(w) && taps <= DW_MAX_TAPS && N > 0 &&
      w->s[2] <= w->img[2] + 2 * w->p[2] + 1)
    return depthwise_deconv_f32(w, (const float *)data, (const float *)weight, (const float *)bias, (float *)out, N, C);
  if (N == 0) return 0;
  deconv_job j = {.w = w,
                  .dtype = dtype,
                  .pointwise = is_pointwise(w),
                  .direct = Cg == 1 && Fg == 1,
                  .esize = esize,
                  .data = (const char *)data,
                  .weight = (const char *)weight,
                  .bias = bias,
                  .out = (char *)out,
                  .C = C,
                  .F = F,
                  .G = G,
                  .Cg = Cg,
                  .Fg = Fg,
                  .rows = rows,
                  .img = img,
                  .grid = grid,
                  .gw = w->grid[2],
                  .total_rows = w->grid[0] * w->grid[1]};
  split_bands(w, rows, esize, &j.nbands, &j.band);
  const int64_t units = N * G;
  const double work = (double)(N * C) * (double)rows * (double)grid;
  j.inner = !split_units(units, work);
  if (j.inner)
    deconv_units(&j, 0, units);
  else
    mxw_parallel_for(units, 1, deconv_units, &j);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* ---- channel-last layouts (NHWC, NDHWC) -------------------------------------------------------------
 * The data is (N, image positions, C), the output (N, grid positions, F) and the weight (F, taps,
 * C/G) for Convolution, (C, taps, F/G) for Deconvolution: the column matrix has one row per grid
 * position and (tap, channel) columns, which is the weight's own order, so no operand is
 * transposed (this used to run on channel-first copies of data, weight and output):
 *   Convolution    out[n, :, g] (grid, Fg) = im2col(x[n, :, g]) (grid, taps*Cg) * W[g]^T (taps*Cg, Fg)
 *   Deconvolution  out[n, :, g] (image, Fg) += col2im(x[n, :, g] (grid, Cg) * W[g] (Cg, taps*Fg))
 *   weight grads   dW[g] (Fg, taps*Cg) = sum over n of dy[n, :, g]^T (Fg, grid) * im2col(x[n, :, g])
 * A 1x1 stride-1 window needs no column matrix (the data is it); depthwise float32 (one channel
 * per group) runs loops vectorized over the channels instead (dwconv.c for the forward). */

/* C (M, N) (+)= op(A) op(B) in the operands' dtype. */
static int gemm2(int dtype, int ta, int tb, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda, const void *B,
                 int64_t ldb, int accumulate, void *C, int64_t ldc) {
  if (dtype == MXW_FLOAT32)
    return mxw_sgemm(ta, tb, M, N, K, 1.f, (const float *)A, lda, (const float *)B, ldb, accumulate ? 1.f : 0.f,
                     (float *)C, ldc);
  return mxw_dgemm(ta, tb, M, N, K, 1.0, (const double *)A, lda, (const double *)B, ldb, accumulate ? 1.0 : 0.0,
                   (double *)C, ldc);
}

/* Channel-last im2col over the grid rows [row0, row0 + nrows) and taps [t0, t1):
 *   col[(r - row0) * gw + x][(t - t0) * cg + c] = img[image position of (r, x) for tap t][c], or 0
 * img points at the group's first channel of image position 0; positions are `pix` elements
 * apart. With to_image it runs the other way (col2im): img[...] += col[...]. Per row and tap the
 * columns inside the image are found once (valid_range), so the copies need no test. */
static inline void cells_copy(char *dst, const char *src, int64_t cg, size_t es, int to_image) {
  if (to_image) {
    row_add((char *)src, dst, cg, 1, es);
  } else if (es == 4 && cg <= 8) {
    for (int64_t c = 0; c < cg; c++) ((float *)dst)[c] = ((const float *)src)[c];
  } else {
    memcpy(dst, src, (size_t)cg * es);
  }
}

static void im2col_cl(const window *w, size_t es, const char *img, int64_t pix, int64_t cg, int64_t t0, int64_t t1,
                      int64_t row0, int64_t nrows, char *col, int to_image) {
  const int64_t gw = w->grid[2], ld = (t1 - t0) * cg;
  const size_t run = (size_t)cg * es, step = (size_t)ld * es;
  int64_t gz = row0 / w->grid[1], gy = row0 % w->grid[1];
  for (int64_t r = 0; r < nrows; r++) {
    char *row = col + (size_t)(r * gw * ld) * es;
    int64_t t = 0;
    for (int64_t tz = 0; tz < w->k[0]; tz++) {
      const int64_t iz = gz * w->s[0] - w->p[0] + tz * w->d[0];
      for (int64_t ty = 0; ty < w->k[1]; ty++) {
        const int64_t iy = gy * w->s[1] - w->p[1] + ty * w->d[1];
        const int row_in = iz >= 0 && iz < w->img[0] && iy >= 0 && iy < w->img[1];
        for (int64_t tx = 0; tx < w->k[2]; tx++, t++) {
          if (t < t0 || t >= t1) continue;
          char *cell = row + (size_t)((t - t0) * cg) * es;
          const int64_t off = tx * w->d[2] - w->p[2];
          int64_t lo = 0, hi = 0;
          if (row_in) valid_range(off, w->s[2], w->img[2], gw, &lo, &hi);
          if (!to_image) {
            for (int64_t x = 0; x < lo; x++) memset(cell + (size_t)x * step, 0, run);
            for (int64_t x = hi; x < gw; x++) memset(cell + (size_t)x * step, 0, run);
          }
          if (hi <= lo) continue;
          /* image position of column lo; consecutive columns are s[2] positions apart */
          const char *src = img + (size_t)((((iz * w->img[1] + iy) * w->img[2]) + lo * w->s[2] + off) * pix) * es;
          const size_t sstep = (size_t)(w->s[2] * pix) * es;
          for (int64_t x = lo; x < hi; x++, src += sstep) cells_copy(cell + (size_t)x * step, src, cg, es, to_image);
        }
      }
    }
    if (++gy == w->grid[1]) {
      gy = 0;
      gz++;
    }
  }
}

/* Convolution, channel-last: one unit per (image, group, band of grid rows). */
typedef struct {
  const window *w;
  int dtype, pointwise;
  size_t esize;
  const char *data, *weight;
  const void *bias;
  char *out;
  int64_t C, F, G, Cg, Fg, K, img, grid, gw, total_rows, nbands, band;
  atomic_int failed;
} conv_cl_job;

/* rows (P, Fg) of a channel-last output, `ld` apart, set to the group's biases */
static void fill_rows_bias(char *y, int dtype, int64_t P, int64_t Fg, int64_t ld, const char *bias) {
  const size_t es = (size_t)mxw_dtype_size(dtype);
  for (int64_t i = 0; i < P; i++) memcpy(y + (size_t)(i * ld) * es, bias, (size_t)Fg * es);
}

static void conv_cl_units(void *ctx, int64_t begin, int64_t end) {
  conv_cl_job *j = (conv_cl_job *)ctx;
  const size_t es = j->esize;
  const int64_t taps = j->K / j->Cg;
  void *col = NULL;
  if (!j->pointwise && !(col = mxw_scratch(0, (size_t)(j->K * j->band * j->gw) * es + 1))) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t u = begin; u < end; u++) {
    const int64_t b = u % j->nbands, ng = u / j->nbands, g = ng % j->G, n = ng / j->G;
    const int64_t r0 = b * j->band, nr = j->band < j->total_rows - r0 ? j->band : j->total_rows - r0;
    const int64_t P = nr * j->gw;
    const char *x = j->data + (size_t)(n * j->img * j->C + g * j->Cg) * es;
    const char *wg = j->weight + (size_t)(g * j->Fg * j->K) * es;
    char *y = j->out + (size_t)((n * j->grid + r0 * j->gw) * j->F + g * j->Fg) * es;
    if (j->bias) fill_rows_bias(y, j->dtype, P, j->Fg, j->F, (const char *)j->bias + (size_t)(g * j->Fg) * es);
    int rc;
    if (j->pointwise) {
      rc = gemm2(j->dtype, 0, 1, P, j->Fg, j->Cg, x + (size_t)(r0 * j->gw * j->C) * es, j->C, wg, j->K, j->bias != NULL,
                 y, j->F);
    } else {
      im2col_cl(j->w, es, x, j->C, j->Cg, 0, taps, r0, nr, (char *)col, 0);
      rc = gemm2(j->dtype, 0, 1, P, j->Fg, j->K, col, j->K, wg, j->K, j->bias != NULL, y, j->F);
    }
    if (rc != 0) {
      atomic_store(&j->failed, 1);
      return;
    }
  }
}

/* Depthwise float32, channel-last: one unit per (image, output row); the weight (C, taps) is
 * transposed to (taps, C) once. */
typedef struct {
  mxw_dw_nhwc geom;
  const float *data, *wt, *bias;
  float *out;
  int64_t rows; /* output rows per image */
} dw_cl_job;

static void dw_cl_units(void *ctx, int64_t begin, int64_t end) {
  const dw_cl_job *j = (const dw_cl_job *)ctx;
  const mxw_dw_nhwc *g = &j->geom;
  const size_t in_img = g->H * g->W * g->C, out_img = g->Ho * g->Wo * g->C;
  for (int64_t u = begin; u < end;) { /* rows of one image at a time */
    const int64_t n = u / j->rows, y0 = u % j->rows;
    const int64_t y1 = end - n * j->rows < j->rows ? end - n * j->rows : j->rows;
    mxw_f32_dwconv_nhwc(g, (size_t)y0, (size_t)y1, j->data + (size_t)n * in_img, j->wt, j->bias,
                        j->out + (size_t)n * out_img);
    u = n * j->rows + y1;
  }
}

static int conv_cl_run(const window *w, int dtype, const void *data, const void *weight, const void *bias, void *out,
                       int64_t N, int64_t C, int64_t F, int64_t G) {
  const size_t esize = (size_t)mxw_dtype_size(dtype);
  const int64_t Cg = C / G, Fg = F / G, taps = prod3(w->k), grid = prod3(w->grid);
  if (N == 0 || grid == 0) return 0;
  if (dtype == MXW_FLOAT32 && G == C && F == C && is_planar(w)) {
    float *wt = (float *)mxw_scratch(1, (size_t)(taps * C + 1) * sizeof(float));
    if (!wt) return -1;
    mxw_swap_last2(weight, wt, 1, C, taps, sizeof(float)); /* (C, taps) -> (taps, C) */
    dw_cl_job j = {{(size_t)w->img[1], (size_t)w->img[2], (size_t)C, (size_t)w->grid[1], (size_t)w->grid[2],
                    (size_t)w->k[1], (size_t)w->k[2], (size_t)w->s[1], (size_t)w->s[2], (size_t)w->p[1],
                    (size_t)w->p[2], (size_t)w->d[1], (size_t)w->d[2]},
                   (const float *)data,
                   wt,
                   (const float *)bias,
                   (float *)out,
                   w->grid[1]};
    run_units(N * w->grid[1], (double)(N * C) * (double)taps * (double)grid, dw_cl_units, &j);
    return 0;
  }
  if (dtype == MXW_FLOAT32 && C == 1 && Fg <= DIRECT_MAX_FG && w->grid[2] >= 4 && !is_pointwise(w)) {
    /* one input channel (a first layer, LeNet's) and few filters: the data is already channel-first,
     * so the direct kernel runs on it and only its output (N, F, grid) is transposed to (N, grid,
     * F) -- 2x faster than im2col + GEMM for LeNet's 28x28 Conv2D(6, 5) */
    float *cf = (float *)mxw_scratch(3, (size_t)(N * F * grid + 1) * sizeof(float));
    if (!cf) return -1;
    MXW_TRY(direct_f32(w, (const float *)data, (const float *)weight, (const float *)bias, cf, N, C, F, G));
    mxw_swap_last2(cf, out, N, F, grid, sizeof(float));
    return 0;
  }
  conv_cl_job j = {.w = w,
                   .dtype = dtype,
                   .pointwise = is_pointwise(w),
                   .esize = esize,
                   .data = (const char *)data,
                   .weight = (const char *)weight,
                   .bias = bias,
                   .out = (char *)out,
                   .C = C,
                   .F = F,
                   .G = G,
                   .Cg = Cg,
                   .Fg = Fg,
                   .K = Cg * taps,
                   .img = prod3(w->img),
                   .grid = grid,
                   .gw = w->grid[2],
                   .total_rows = w->grid[0] * w->grid[1]};
  split_bands(w, j.K, esize, &j.nbands, &j.band);
  const int64_t units = N * G * j.nbands;
  const double work = (double)(N * F) * (double)j.K * (double)grid;
  if (split_units(units, work))
    mxw_parallel_for(units, 1, conv_cl_units, &j);
  else
    conv_cl_units(&j, 0, units);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* Deconvolution, channel-last: one unit per (image, group) (its bands overlap in the output);
 * depthwise float32 by a scatter vectorized over the channels, one unit per block of channels. */
typedef struct {
  const window *w;
  int dtype, pointwise;
  size_t esize;
  const char *data, *weight;
  const void *bias;
  char *out;
  int64_t N, C, F, G, Cg, Fg, R, img, grid, gw, total_rows, nbands, band;
  atomic_int failed;
} deconv_cl_job;

static void deconv_cl_units(void *ctx, int64_t begin, int64_t end) {
  deconv_cl_job *j = (deconv_cl_job *)ctx;
  const size_t es = j->esize;
  const int64_t taps = j->R / j->Fg, gw = j->gw;
  void *col = NULL;
  if (!j->pointwise && !(col = mxw_scratch(0, (size_t)(j->R * j->band * gw) * es + 1))) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t u = begin; u < end; u++) {
    const int64_t g = u % j->G, n = u / j->G;
    const char *x = j->data + (size_t)(n * j->grid * j->C + g * j->Cg) * es;
    const char *wg = j->weight + (size_t)(g * j->Cg * j->R) * es;
    char *y = j->out + (size_t)(n * j->img * j->F + g * j->Fg) * es;
    if (j->bias)
      fill_rows_bias(y, j->dtype, j->img, j->Fg, j->F, (const char *)j->bias + (size_t)(g * j->Fg) * es);
    else
      for (int64_t i = 0; i < j->img; i++) memset(y + (size_t)(i * j->F) * es, 0, (size_t)j->Fg * es);
    if (j->pointwise) {
      if (gemm2(j->dtype, 0, 0, j->grid, j->Fg, j->Cg, x, j->C, wg, j->Fg, 1, y, j->F) != 0) goto fail;
      continue;
    }
    for (int64_t r0 = 0; r0 < j->total_rows; r0 += j->band) {
      const int64_t nr = j->band < j->total_rows - r0 ? j->band : j->total_rows - r0;
      if (gemm2(j->dtype, 0, 0, nr * gw, j->R, j->Cg, x + (size_t)(r0 * gw * j->C) * es, j->C, wg, j->R, 0, col,
                j->R) != 0)
        goto fail;
      im2col_cl(j->w, es, y, j->F, j->Fg, 0, taps, r0, nr, (char *)col, 1);
    }
  }
  return;
fail:
  atomic_store(&j->failed, 1);
}

enum { CL_CBLOCK = 16 }; /* channels per unit of the channel-last depthwise loops */

/* out (N, image, C) = bias + sum over grid cells and taps of wt[t][c] * x[cell][c], scattered in
 * grid order; wt (taps, C). Units: (image, block of CL_CBLOCK channels). */
typedef struct {
  const window *w;
  const float *data, *wt, *bias;
  float *out;
  int64_t C, nblk;
} dw_deconv_cl_job;

/* d[c] += a[c] * b[c] for c < n, f32x4 then scalar. */
static inline void axpy_lanes(float *d, const float *a, const float *b, int64_t n) {
  int64_t c = 0;
  for (; c + 4 <= n; c += 4)
    wasm_v128_store(d + c, MXW_F32X4_MADD(wasm_v128_load(d + c), wasm_v128_load(a + c), wasm_v128_load(b + c)));
  for (; c < n; c++) d[c] += a[c] * b[c];
}

static void dw_deconv_cl_units(void *ctx, int64_t begin, int64_t end) {
  const dw_deconv_cl_job *j = (const dw_deconv_cl_job *)ctx;
  const window *w = j->w;
  const int64_t C = j->C, img = prod3(w->img), grid = prod3(w->grid);
  for (int64_t u = begin; u < end; u++) {
    const int64_t n = u / j->nblk, c0 = (u % j->nblk) * CL_CBLOCK, nc = C - c0 < CL_CBLOCK ? C - c0 : CL_CBLOCK;
    float *y = j->out + n * img * C + c0;
    const float *x = j->data + n * grid * C + c0;
    for (int64_t i = 0; i < img; i++)
      for (int64_t c = 0; c < nc; c++) y[i * C + c] = j->bias ? j->bias[c0 + c] : 0.f;
    for (int64_t cell = 0; cell < grid; cell++) {
      const int64_t gz = cell / (w->grid[1] * w->grid[2]), gy = cell / w->grid[2] % w->grid[1], gx = cell % w->grid[2];
      int64_t t = 0;
      for (int64_t tz = 0; tz < w->k[0]; tz++)
        for (int64_t ty = 0; ty < w->k[1]; ty++)
          for (int64_t tx = 0; tx < w->k[2]; tx++, t++) {
            const int64_t iz = gz * w->s[0] - w->p[0] + tz * w->d[0], iy = gy * w->s[1] - w->p[1] + ty * w->d[1];
            const int64_t ix = gx * w->s[2] - w->p[2] + tx * w->d[2];
            if (iz < 0 || iz >= w->img[0] || iy < 0 || iy >= w->img[1] || ix < 0 || ix >= w->img[2]) continue;
            axpy_lanes(y + ((iz * w->img[1] + iy) * w->img[2] + ix) * C, j->wt + t * C + c0, x + cell * C, nc);
          }
    }
  }
}

static int deconv_cl_run(const window *w, int dtype, const void *data, const void *weight, const void *bias, void *out,
                         int64_t N, int64_t C, int64_t F, int64_t G) {
  const size_t esize = (size_t)mxw_dtype_size(dtype);
  const int64_t Cg = C / G, Fg = F / G, taps = prod3(w->k), img = prod3(w->img), grid = prod3(w->grid);
  if (N == 0) return 0;
  if (dtype == MXW_FLOAT32 && Cg == 1 && Fg == 1) {
    float *wt = (float *)mxw_scratch(1, (size_t)(taps * C + 1) * sizeof(float));
    if (!wt) return -1;
    mxw_swap_last2(weight, wt, 1, C, taps, sizeof(float)); /* (C, taps) -> (taps, C) */
    dw_deconv_cl_job j = {
        w, (const float *)data, wt, (const float *)bias, (float *)out, C, (C + CL_CBLOCK - 1) / CL_CBLOCK};
    run_units(N * j.nblk, (double)(N * C) * (double)(taps * grid + img), dw_deconv_cl_units, &j);
    return 0;
  }
  deconv_cl_job j = {.w = w,
                     .dtype = dtype,
                     .pointwise = is_pointwise(w),
                     .esize = esize,
                     .data = (const char *)data,
                     .weight = (const char *)weight,
                     .bias = bias,
                     .out = (char *)out,
                     .N = N,
                     .C = C,
                     .F = F,
                     .G = G,
                     .Cg = Cg,
                     .Fg = Fg,
                     .R = Fg * taps,
                     .img = img,
                     .grid = grid,
                     .gw = w->grid[2],
                     .total_rows = w->grid[0] * w->grid[1]};
  split_bands(w, j.R, esize, &j.nbands, &j.band);
  const int64_t units = N * G;
  const double work = (double)(N * C) * (double)j.R * (double)grid;
  if (split_units(units, work))
    mxw_parallel_for(units, 1, deconv_cl_units, &j);
  else
    deconv_cl_units(&j, 0, units);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* Weight gradient, channel-last: one unit per (group, block of taps) owning those columns of
 * dW[g] (F/G, taps * Cg) -- contiguous in the weight's (tap, channel) order -- and summing them
 * over the images and bands in order. Blocks hold about 64 columns, fixed by the shape. */
typedef struct {
  const window *w;
  int dtype, pointwise;
  size_t esize;
  const char *img, *grid;
  char *dw;
  int64_t N, C, F, G, Cg, Fg, K, isz, gsz, gw, total_rows, nbands, band, tb, ntb;
  atomic_int failed;
} wgrad_cl_job;

static void wgrad_cl_units(void *ctx, int64_t begin, int64_t end) {
  wgrad_cl_job *j = (wgrad_cl_job *)ctx;
  const size_t es = j->esize;
  const int64_t taps = j->K / j->Cg;
  void *col = NULL;
  if (!j->pointwise && !(col = mxw_scratch(0, (size_t)(j->tb * j->Cg * j->band * j->gw) * es + 1))) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t u = begin; u < end; u++) {
    const int64_t blk = u % j->ntb, g = u / j->ntb;
    const int64_t t0 = blk * j->tb, t1 = t0 + j->tb < taps ? t0 + j->tb : taps, ncols = (t1 - t0) * j->Cg;
    char *dwb = j->dw + (size_t)(g * j->Fg * j->K + t0 * j->Cg) * es;
    for (int64_t f = 0; f < j->Fg; f++) memset(dwb + (size_t)(f * j->K) * es, 0, (size_t)ncols * es);
    for (int64_t n = 0; n < j->N; n++) {
      const char *x = j->img + (size_t)(n * j->isz * j->C + g * j->Cg) * es;
      const char *dy = j->grid + (size_t)(n * j->gsz * j->F + g * j->Fg) * es;
      if (j->pointwise) {
        if (gemm2(j->dtype, 1, 0, j->Fg, ncols, j->gsz, dy, j->F, x, j->C, 1, dwb, j->K) != 0) goto fail;
        continue;
      }
      for (int64_t r0 = 0; r0 < j->total_rows; r0 += j->band) {
        const int64_t nr = j->band < j->total_rows - r0 ? j->band : j->total_rows - r0;
        im2col_cl(j->w, es, x, j->C, j->Cg, t0, t1, r0, nr, (char *)col, 0);
        if (gemm2(j->dtype, 1, 0, j->Fg, ncols, nr * j->gw, dy + (size_t)(r0 * j->gw * j->F) * es, j->F, col, ncols, 1,
                  dwb, j->K) != 0)
          goto fail;
      }
    }
  }
  return;
fail:
  atomic_store(&j->failed, 1);
}

/* Depthwise float32 weight gradient, channel-last: dw[c, t] = sum over images and grid cells of
 * grid[n, cell, c] * img[n, the cell tap t reads, c], vectorized over the channels; per image an
 * f32x4 sum per (tap, channel lanes), added into double. One unit per block of CL_CBLOCK channels. */
typedef struct {
  const window *w;
  const float *img, *grid;
  float *dw;
  int64_t N, C, nblk;
} dw_wgrad_cl_job;

static void dw_wgrad_cl_units(void *ctx, int64_t begin, int64_t end) {
  const dw_wgrad_cl_job *j = (const dw_wgrad_cl_job *)ctx;
  const window *w = j->w;
  const int64_t C = j->C, isz = prod3(w->img), gsz = prod3(w->grid), taps = prod3(w->k);
  double sum[CL_CBLOCK];
  float part[CL_CBLOCK];
  for (int64_t blk = begin; blk < end; blk++) {
    const int64_t c0 = blk * CL_CBLOCK, nc = C - c0 < CL_CBLOCK ? C - c0 : CL_CBLOCK;
    int64_t t = 0;
    for (int64_t tz = 0; tz < w->k[0]; tz++)
      for (int64_t ty = 0; ty < w->k[1]; ty++)
        for (int64_t tx = 0; tx < w->k[2]; tx++, t++) {
          for (int64_t c = 0; c < nc; c++) sum[c] = 0.0;
          for (int64_t n = 0; n < j->N; n++) {
            for (int64_t c = 0; c < nc; c++) part[c] = 0.f;
            const float *x = j->img + n * isz * C + c0, *g = j->grid + n * gsz * C + c0;
            for (int64_t cell = 0; cell < gsz; cell++) {
              const int64_t gz = cell / (w->grid[1] * w->grid[2]), gy = cell / w->grid[2] % w->grid[1];
              const int64_t gx = cell % w->grid[2];
              const int64_t iz = gz * w->s[0] - w->p[0] + tz * w->d[0], iy = gy * w->s[1] - w->p[1] + ty * w->d[1];
              const int64_t ix = gx * w->s[2] - w->p[2] + tx * w->d[2];
              if (iz < 0 || iz >= w->img[0] || iy < 0 || iy >= w->img[1] || ix < 0 || ix >= w->img[2]) continue;
              axpy_lanes(part, g + cell * C, x + ((iz * w->img[1] + iy) * w->img[2] + ix) * C, nc);
            }
            for (int64_t c = 0; c < nc; c++) sum[c] += part[c];
          }
          for (int64_t c = 0; c < nc; c++) j->dw[(c0 + c) * taps + t] = (float)sum[c];
        }
  }
}

/* img (N, image, C), grid (N, grid, F) -> dw (F, taps, C/G) (written). */
static int wgrad_cl_run(const window *w, int dtype, const void *img, const void *gridv, void *dw, int64_t N, int64_t C,
                        int64_t F, int64_t G) {
  const size_t esize = (size_t)mxw_dtype_size(dtype);
  const int64_t Cg = C / G, Fg = F / G, taps = prod3(w->k), grid = prod3(w->grid);
  if (N == 0 || grid == 0) {
    memset(dw, 0, (size_t)(F * Cg * taps) * esize);
    return 0;
  }
  if (dtype == MXW_FLOAT32 && Cg == 1 && Fg == 1) {
    dw_wgrad_cl_job j = {
        w, (const float *)img, (const float *)gridv, (float *)dw, N, C, (C + CL_CBLOCK - 1) / CL_CBLOCK};
    run_units(j.nblk, (double)(N * C) * (double)taps * (double)grid, dw_wgrad_cl_units, &j);
    return 0;
  }
  int64_t tb = Cg >= 64 ? 1 : (64 + Cg - 1) / Cg; /* taps per block: about 64 columns */
  if (tb > taps) tb = taps;
  wgrad_cl_job j = {.w = w,
                    .dtype = dtype,
                    .pointwise = is_pointwise(w),
                    .esize = esize,
                    .img = (const char *)img,
                    .grid = (const char *)gridv,
                    .dw = (char *)dw,
                    .N = N,
                    .C = C,
                    .F = F,
                    .G = G,
                    .Cg = Cg,
                    .Fg = Fg,
                    .K = Cg * taps,
                    .isz = prod3(w->img),
                    .gsz = grid,
                    .gw = w->grid[2],
                    .total_rows = w->grid[0] * w->grid[1],
                    .tb = tb,
                    .ntb = (taps + tb - 1) / tb};
  split_bands(w, tb * Cg, esize, &j.nbands, &j.band);
  const int64_t units = G * j.ntb;
  const double work = (double)(N * F) * (double)j.K * (double)grid;
  if (split_units(units, work))
    mxw_parallel_for(units, 1, wgrad_cl_units, &j);
  else
    wgrad_cl_units(&j, 0, units);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* db[f] = sum over n and positions of dy (N, P, F), channel-last: one unit per block of
 * CL_CBLOCK channels, per image an f32x4 sum over the positions added into double. */
typedef struct {
  int dtype;
  const void *dy;
  void *db;
  int64_t N, F, P, nblk;
} bias_grad_cl_job;

static void bias_grad_cl_units(void *ctx, int64_t begin, int64_t end) {
  const bias_grad_cl_job *j = (const bias_grad_cl_job *)ctx;
  double sum[CL_CBLOCK];
  float part[CL_CBLOCK];
  for (int64_t blk = begin; blk < end; blk++) {
    const int64_t f0 = blk * CL_CBLOCK, nf = j->F - f0 < CL_CBLOCK ? j->F - f0 : CL_CBLOCK;
    for (int64_t f = 0; f < nf; f++) sum[f] = 0.0;
    for (int64_t n = 0; n < j->N; n++) {
      if (j->dtype == MXW_FLOAT32) {
        for (int64_t f = 0; f < nf; f++) part[f] = 0.f;
        const float *y = (const float *)j->dy + n * j->P * j->F + f0;
        for (int64_t p = 0; p < j->P; p++) {
          const float *row = y + p * j->F;
          int64_t f = 0;
          for (; f + 4 <= nf; f += 4)
            wasm_v128_store(part + f, wasm_f32x4_add(wasm_v128_load(part + f), wasm_v128_load(row + f)));
          for (; f < nf; f++) part[f] += row[f];
        }
        for (int64_t f = 0; f < nf; f++) sum[f] += part[f];
      } else {
        const double *y = (const double *)j->dy + n * j->P * j->F + f0;
        for (int64_t p = 0; p < j->P; p++)
          for (int64_t f = 0; f < nf; f++) sum[f] += y[p * j->F + f];
      }
    }
    for (int64_t f = 0; f < nf; f++) mxw_store_f64(j->db, j->dtype, f0 + f, sum[f]);
  }
}

static void bias_grad_cl(int dtype, const void *dy, void *db, int64_t N, int64_t F, int64_t P) {
  bias_grad_cl_job j = {dtype, dy, db, N, F, P, (F + CL_CBLOCK - 1) / CL_CBLOCK};
  run_units(j.nblk, (double)(N * F) * (double)P, bias_grad_cl_units, &j);
}

/* ---- Convolution / Deconvolution parameters -------------------------------------------------------- */
enum { LAYOUT_NCW, LAYOUT_NCHW, LAYOUT_NCDHW, LAYOUT_NHWC, LAYOUT_NDHWC };
static const char *const k_layouts[] = {"NCW", "NCHW", "NCDHW", "NHWC", "NDHWC", NULL};
static const char *const k_cudnn_tune[] = {"off", "limited_workspace", "fastest", NULL};

typedef struct {
  mxw_tuple kernel, stride, dilate, pad, adj, target_shape;
  int64_t num_filter, num_group, workspace;
  int no_bias, cudnn_off;
  mxw_opt_int cudnn_tune, layout;
  int nsp;       /* derived: number of spatial dims (kernel rank) */
  int chan_last; /* derived: layout NHWC or NDHWC */
} ConvParam;

static const mxw_attr_spec k_conv_attrs[] = {
    MXW_A_SHAPE("kernel", ConvParam, kernel, NULL, "window size: (w,), (h, w) or (d, h, w)"),
    MXW_A_SHAPE("stride", ConvParam, stride, "()", "window stride; () = 1 in every dim"),
    MXW_A_SHAPE("dilate", ConvParam, dilate, "()", "kernel dilation; () = 1 in every dim"),
    MXW_A_SHAPE("pad", ConvParam, pad, "()", "zero padding on each side; () = 0 in every dim"),
    MXW_A_INT("num_filter", ConvParam, num_filter, NULL, "number of output channels"),
    MXW_A_INT("num_group", ConvParam, num_group, "1", "number of channel groups"),
    MXW_A_INT("workspace", ConvParam, workspace, "1024", "workspace limit in MB (ignored)"),
    MXW_A_BOOL("no_bias", ConvParam, no_bias, "False", "leave out the bias input"),
    MXW_A_OPT_ENUM("cudnn_tune", ConvParam, cudnn_tune, "None", k_cudnn_tune, "cuDNN algorithm choice (ignored)"),
    MXW_A_BOOL("cudnn_off", ConvParam, cudnn_off, "False", "turn off cuDNN (ignored)"),
    MXW_A_OPT_ENUM("layout", ConvParam, layout, "None", k_layouts,
                   "data layout; None = NCW/NCHW/NCDHW by kernel rank; NHWC/NDHWC: channels last"),
};

static const mxw_attr_spec k_deconv_attrs[] = {
    MXW_A_SHAPE("kernel", ConvParam, kernel, NULL, "window size: (w,), (h, w) or (d, h, w)"),
    MXW_A_SHAPE("stride", ConvParam, stride, "()", "stride; () = 1 in every dim"),
    MXW_A_SHAPE("dilate", ConvParam, dilate, "()", "kernel dilation; () = 1 in every dim"),
    MXW_A_SHAPE("pad", ConvParam, pad, "()", "padding removed from each side of the output; () = 0"),
    MXW_A_SHAPE("adj", ConvParam, adj, "()", "extra output size on the high side; () = 0"),
    MXW_A_SHAPE("target_shape", ConvParam, target_shape, "()",
                "output spatial shape; when set, pad and adj are derived from it"),
    MXW_A_INT("num_filter", ConvParam, num_filter, NULL, "number of output channels"),
    MXW_A_INT("num_group", ConvParam, num_group, "1", "number of channel groups"),
    MXW_A_INT("workspace", ConvParam, workspace, "512", "workspace limit in MB (ignored)"),
    MXW_A_BOOL("no_bias", ConvParam, no_bias, "True", "leave out the bias input"),
    MXW_A_OPT_ENUM("cudnn_tune", ConvParam, cudnn_tune, "None", k_cudnn_tune, "cuDNN algorithm choice (ignored)"),
    MXW_A_BOOL("cudnn_off", ConvParam, cudnn_off, "False", "turn off cuDNN (ignored)"),
    MXW_A_OPT_ENUM("layout", ConvParam, layout, "None", k_layouts,
                   "data layout; None = NCW/NCHW/NCDHW by kernel rank; NHWC/NDHWC: channels last"),
};

static const char *const k_conv_inputs[] = {"data", "weight", "bias", NULL};

/* `t` gets the kernel's rank, filled with `def` when given as (); entries must be >= min. */
static int fill_tuple(mxw_tuple *t, const char *name, int nsp, int64_t def, int64_t min, const mxw_tuple *kernel) {
  char a[256], b[256];
  if (t->ndim <= 0) {
    t->ndim = nsp;
    for (int i = 0; i < nsp; i++) t->v[i] = def;
    return 0;
  }
  MXW_CHECK(t->ndim == nsp, "%s %s must have as many dimensions as kernel %s", name, tuple_str(t, a, sizeof a),
            tuple_str(kernel, b, sizeof b));
  /* at most 2^31 - 1, as every dim here (fuzz_attrs: a pad of 2^63 - 1 overflowed in shape inference) */
  for (int i = 0; i < nsp; i++)
    MXW_CHECK(t->v[i] >= min && t->v[i] <= INT32_MAX, "%s %s: every entry must be in [%lld, 2^31 - 1]", name,
              tuple_str(t, a, sizeof a), (long long)min);
  return 0;
}

static int validate_common(ConvParam *p, int deconv) {
  char a[256], b[256];
  const int nsp = p->kernel.ndim;
  MXW_CHECK(nsp >= 1 && nsp <= 3, "kernel %s must have 1, 2 or 3 dimensions", tuple_str(&p->kernel, a, sizeof a));
  for (int i = 0; i < nsp; i++)
    MXW_CHECK(p->kernel.v[i] >= 1 && p->kernel.v[i] <= INT32_MAX, "kernel %s: every entry must be in [1, 2^31 - 1]",
              tuple_str(&p->kernel, a, sizeof a));
  p->nsp = nsp;
  MXW_TRY(fill_tuple(&p->stride, "stride", nsp, 1, 1, &p->kernel));
  MXW_TRY(fill_tuple(&p->dilate, "dilate", nsp, 1, 1, &p->kernel));
  MXW_TRY(fill_tuple(&p->pad, "pad", nsp, 0, 0, &p->kernel));
  if (deconv) {
    MXW_TRY(fill_tuple(&p->adj, "adj", nsp, 0, 0, &p->kernel));
    for (int i = 0; i < nsp; i++)
      MXW_CHECK(p->adj.v[i] < p->stride.v[i], "adj %s must be smaller than stride %s in every dimension",
                tuple_str(&p->adj, a, sizeof a), tuple_str(&p->stride, b, sizeof b));
    if (p->target_shape.ndim > 0) MXW_TRY(fill_tuple(&p->target_shape, "target_shape", nsp, 0, 0, &p->kernel));
  }
  MXW_CHECK(p->num_filter >= 1 && p->num_filter <= INT32_MAX, "num_filter must be in [1, 2^31 - 1], got %lld",
            (long long)p->num_filter);
  MXW_CHECK(p->num_group >= 1 && p->num_group <= INT32_MAX, "num_group must be in [1, 2^31 - 1], got %lld",
            (long long)p->num_group);
  MXW_CHECK(p->num_filter % p->num_group == 0, "num_filter %lld is not divisible by num_group %lld",
            (long long)p->num_filter, (long long)p->num_group);
  p->chan_last = 0;
  if (p->layout.has) {
    static const int rank_of[] = {1, 2, 3, 2, 3}; /* spatial dims of each layout */
    const int l = (int)p->layout.v;
    MXW_CHECK(rank_of[l] == nsp, "layout %s does not match kernel %s (%d-D: layout %s%s%s)", k_layouts[l],
              tuple_str(&p->kernel, a, sizeof a), nsp, k_layouts[nsp - 1], nsp > 1 ? " or " : "",
              nsp > 1 ? k_layouts[nsp + 1] : "");
    p->chan_last = l == LAYOUT_NHWC || l == LAYOUT_NDHWC;
  }
  return 0;
}
static int validate_conv(void *param) { return validate_common((ConvParam *)param, 0); }
static int validate_deconv(void *param) { return validate_common((ConvParam *)param, 1); }
static int num_inputs_conv(const void *param) { return ((const ConvParam *)param)->no_bias ? 2 : 3; }

/* Where the channels and spatial dim i are in data and output: (N, C, spatial...) for the
 * channel-first layouts, (N, spatial..., C) for NHWC and NDHWC. */
static int chan_axis(const ConvParam *p) { return p->chan_last ? p->nsp + 1 : 1; }
static int spatial_axis(const ConvParam *p, int i) { return p->chan_last ? 1 + i : 2 + i; }
/* Spatial dim i of a data or output shape, -1 when unknown. */
static int64_t spatial_dim(const ConvParam *p, const mxw_shape *s, int i) {
  return s->ndim > 0 ? s->dims[spatial_axis(p, i)] : -1;
}

/* data must be (N, C, spatial...) (channel-last: (N, spatial..., C)) for the kernel's rank. */
static int check_data_rank(const ConvParam *p, const mxw_shape *data) {
  if (data->ndim < 0 || data->ndim == p->nsp + 2) return 0;
  shape_buf a;
  char k[128];
  return mxw_fail("data has shape %s, expected %d dimensions (%s) for kernel %s", mxw_shape_str(data, a, sizeof a),
                  p->nsp + 2, p->chan_last ? "batch, spatial..., channel" : "batch, channel, spatial...",
                  tuple_str(&p->kernel, k, sizeof k));
}

/* The channel count from data, or else from weight dim `wdim` (times `mult`), filled into data. */
static int64_t channels(const ConvParam *p, mxw_shape *data, const mxw_shape *weight, int wdim, int64_t mult) {
  const int ca = chan_axis(p);
  if (data->ndim > ca && data->dims[ca] >= 0) return data->dims[ca];
  if (weight->ndim > wdim && weight->dims[wdim] >= 0) {
    if (data->ndim > ca) data->dims[ca] = weight->dims[wdim] * mult;
    return weight->dims[wdim] * mult;
  }
  return -1;
}

/* Weight (lead, second, kernel...) (channel-last: (lead, kernel..., second)) and bias
 * (num_filter,) against what the op requires. */
static int infer_params(const ConvParam *p, mxw_shape *in, const mxw_shape *data, int64_t lead, int64_t second,
                        const char *rule) {
  int64_t dims[MXW_MAX_NDIM] = {lead};
  dims[chan_axis(p)] = second; /* the weight's axes follow the data's */
  for (int i = 0; i < p->nsp; i++) dims[spatial_axis(p, i)] = p->kernel.v[i];
  const mxw_shape want = mxw_shape_make(p->nsp + 2, dims);
  if (mxw_shape_unify(&in[1], &want, "weight", NULL) != 0) { /* (the message is formatted only on failure) */
    shape_buf a;
    char msg[320];
    snprintf(msg, sizeof msg, " = %s for data %s", rule, mxw_shape_str(data, a, sizeof a));
    return mxw_shape_unify(&in[1], &want, "weight", msg);
  }
  if (!p->no_bias) {
    const mxw_shape b = mxw_shape_make(1, &p->num_filter);
    MXW_TRY(mxw_shape_unify(&in[2], &b, "bias", " = (num_filter,)"));
  }
  return 0;
}

/* Output (N, num_filter, spatial) (channel-last: (N, spatial, num_filter)) with the batch shared
 * both ways between data and output. */
static int infer_output(const ConvParam *p, mxw_shape *data, mxw_shape *out, const int64_t *spatial) {
  if (data->ndim < 0) return 0;
  if (out->ndim == data->ndim && data->dims[0] < 0) data->dims[0] = out->dims[0];
  int64_t dims[MXW_MAX_NDIM] = {data->dims[0]};
  dims[chan_axis(p)] = p->num_filter;
  for (int i = 0; i < p->nsp; i++) dims[spatial_axis(p, i)] = spatial[i];
  const mxw_shape o = mxw_shape_make(p->nsp + 2, dims);
  return mxw_shape_unify(out, &o, "output", "");
}

static int infer_shape_conv(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ConvParam *p = (const ConvParam *)param;
  (void)nin;
  (void)nout;
  mxw_shape *data = &in[0];
  MXW_TRY(check_data_rank(p, data));
  const int64_t G = p->num_group, C = channels(p, data, &in[1], chan_axis(p), G);
  shape_buf a;
  if (C >= 0)
    MXW_CHECK(C % G == 0, "data %s has %lld channels, not divisible by num_group %lld",
              mxw_shape_str(data, a, sizeof a), (long long)C, (long long)G);
  MXW_TRY(infer_params(p, in, data, p->num_filter, C >= 0 ? C / G : -1,
                       p->chan_last ? "(num_filter, kernel..., channels / num_group)"
                                    : "(num_filter, channels / num_group, kernel...)"));
  int64_t spatial[3] = {-1, -1, -1};
  for (int i = 0; data->ndim > 0 && i < p->nsp; i++) {
    const int64_t size = spatial_dim(p, data, i);
    if (size < 0) continue;
    const int64_t padded = size + 2 * p->pad.v[i], dk = p->dilate.v[i] * (p->kernel.v[i] - 1) + 1;
    if (padded < dk) {
      char k[128], pd[128], s[128], d[128];
      return mxw_fail(
          "the dilated kernel (%lld) is larger than the padded input (%lld) in spatial dim %d: data %s, "
          "kernel %s, pad %s, stride %s, dilate %s",
          (long long)dk, (long long)padded, i, mxw_shape_str(data, a, sizeof a), tuple_str(&p->kernel, k, sizeof k),
          tuple_str(&p->pad, pd, sizeof pd), tuple_str(&p->stride, s, sizeof s), tuple_str(&p->dilate, d, sizeof d));
    }
    spatial[i] = (padded - dk) / p->stride.v[i] + 1;
  }
  return infer_output(p, data, &out[0], spatial);
}

/* Deconvolution's effective pad and adj for a data shape (target_shape overrides them), and the
 * output spatial size (-1 where data's size is unknown). */
static int deconv_geometry(const ConvParam *p, const mxw_shape *data, int64_t *pad, int64_t *adj, int64_t *size) {
  int use_target = 0;
  for (int i = 0; i < p->target_shape.ndim; i++)
    if (p->target_shape.v[i] != 0) use_target = 1;
  for (int i = 0; i < p->nsp; i++) {
    const int64_t in = spatial_dim(p, data, i);
    pad[i] = p->pad.v[i];
    adj[i] = p->adj.v[i];
    size[i] = -1;
    if (in < 0) continue;
    const int64_t full = p->stride.v[i] * (in - 1) + p->dilate.v[i] * (p->kernel.v[i] - 1) + 1;
    if (use_target) {
      const int64_t t = full - p->target_shape.v[i];
      if (t < 0) {
        shape_buf a;
        char ts[128];
        return mxw_fail("target_shape %s is too big for data %s: at most %lld in spatial dim %d",
                        tuple_str(&p->target_shape, ts, sizeof ts), mxw_shape_str(data, a, sizeof a), (long long)full,
                        i);
      }
      adj[i] = t % 2;
      pad[i] = (t + 1) / 2;
    }
    size[i] = full - 2 * pad[i] + adj[i];
    if (size[i] <= 0) {
      shape_buf a;
      char k[128], pd[128], s[128];
      return mxw_fail("output size %lld <= 0 in spatial dim %d: data %s, kernel %s, pad %s, stride %s",
                      (long long)size[i], i, mxw_shape_str(data, a, sizeof a), tuple_str(&p->kernel, k, sizeof k),
                      tuple_str(&p->pad, pd, sizeof pd), tuple_str(&p->stride, s, sizeof s));
    }
  }
  return 0;
}

static int infer_shape_deconv(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ConvParam *p = (const ConvParam *)param;
  (void)nin;
  (void)nout;
  mxw_shape *data = &in[0];
  MXW_TRY(check_data_rank(p, data));
  const int64_t G = p->num_group, C = channels(p, data, &in[1], 0, 1);
  shape_buf a;
  if (C >= 0)
    MXW_CHECK(C % G == 0, "data %s has %lld channels, not divisible by num_group %lld",
              mxw_shape_str(data, a, sizeof a), (long long)C, (long long)G);
  MXW_TRY(infer_params(p, in, data, C, p->num_filter / G,
                       p->chan_last ? "(channels, kernel..., num_filter / num_group)"
                                    : "(channels, num_filter / num_group, kernel...)"));
  int64_t pad[3], adj[3], spatial[3];
  MXW_TRY(deconv_geometry(p, data, pad, adj, spatial));
  return infer_output(p, data, &out[0], spatial);
}

/* The window in 3-D form: spatial dim i of nsp goes to slot 3 - nsp + i. */
static void window_init(window *w) {
  for (int i = 0; i < 3; i++) {
    w->img[i] = w->grid[i] = w->k[i] = w->s[i] = w->d[i] = 1;
    w->p[i] = 0;
  }
}
static void window_set(window *w, const ConvParam *p, const mxw_shape *img, const mxw_shape *grid, const int64_t *pad) {
  window_init(w);
  for (int i = 0; i < p->nsp; i++) {
    const int s = 3 - p->nsp + i;
    w->img[s] = img->dims[2 + i];
    w->grid[s] = grid->dims[2 + i];
    w->k[s] = p->kernel.v[i];
    w->s[s] = p->stride.v[i];
    w->d[s] = p->dilate.v[i];
    w->p[s] = pad[i];
  }
}

/* A channel-last shape (N, spatial..., C) as channel-first (N, C, spatial...); also a channel-last
 * weight (lead, kernel..., second) as (lead, second, kernel...). */
static mxw_shape channel_first(const mxw_shape *s) {
  mxw_shape r = *s;
  r.dims[1] = s->dims[s->ndim - 1];
  for (int i = 2; i < s->ndim; i++) r.dims[i] = s->dims[i - 1];
  return r;
}

/* Convolution or Deconvolution of channel-first data (N, C, ...) into a channel-first output. */
static int run_channel_first(const ConvParam *p, int deconv, int dtype, const mxw_shape *xs, const mxw_shape *ys,
                             const int64_t *pad, const void *x, const void *weight, const void *bias, void *y) {
  window w;
  if (deconv) {
    window_set(&w, p, ys, xs, pad);
    return deconv_run(&w, dtype, x, weight, bias, y, xs->dims[0], xs->dims[1], p->num_filter, p->num_group);
  }
  window_set(&w, p, xs, ys, pad);
  return conv_run(&w, dtype, x, weight, bias, y, xs->dims[0], xs->dims[1], p->num_filter, p->num_group);
}

/* NHWC / NDHWC run natively (the channel-last drivers above; MXNet's CPU kernels refuse these
 * layouts). */
/* forward_common's fused path: batch items [b, e), each convolved alone, then its folded affine
 * and activation applied on the cache-hot output */
typedef struct {
  const ConvParam *p;
  int deconv, dtype, act;
  mxw_shape x1, y1;
  const int64_t *pad;
  const char *x;
  const void *w, *bias;
  char *y;
  size_t es;
  int64_t nx1, ny1, F;
  const float *aff;
  atomic_int failed;
} fused_job;
static void fused_items(void *ctx, int64_t b, int64_t e) {
  fused_job *j = (fused_job *)ctx;
  for (int64_t n = b; n < e; n++) {
    char *yn = j->y + (size_t)(n * j->ny1) * j->es;
    if (run_channel_first(j->p, j->deconv, j->dtype, &j->x1, &j->y1, j->pad, j->x + (size_t)(n * j->nx1) * j->es, j->w,
                          j->bias, yn) != 0) {
      atomic_store(&j->failed, 1);
      return;
    }
    if (j->aff)
      mxw_apply_affine_act((float *)yn, 1, j->F, j->ny1 / j->F, j->aff, j->aff + j->F, j->act);
    else
      mxw_apply_act(yn, j->dtype, j->ny1, j->act);
  }
}

static int forward_common(const mxw_op_call *c, int deconv) {
  const ConvParam *p = (const ConvParam *)c->param;
  const mxw_tensor *x = &c->inputs[0], *wt = &c->inputs[1];
  mxw_tensor *y = &c->outputs[0];
  const void *bias = p->no_bias ? NULL : c->inputs[2].data;
  int64_t pad[3], adj[3], spatial[3];
  if (deconv) {
    MXW_TRY(deconv_geometry(p, &x->shape, pad, adj, spatial));
  } else {
    for (int i = 0; i < p->nsp; i++) pad[i] = p->pad.v[i];
  }
  /* graph fusion: a folded BatchNorm's per-channel affine (float32 only: exec.c), then the activation */
  const float *aff = c->affine && y->dtype == MXW_FLOAT32 ? c->affine : NULL;
  const int64_t F = p->num_filter;
  if (!p->chan_last && !c->fused_act && !aff)
    return run_channel_first(p, deconv, x->dtype, &x->shape, &y->shape, pad, x->data, wt->data, bias, y->data);
  if (!p->chan_last) {
    /* graph fusion: one batch item at a time, its activation applied while it is cache-hot; the
     * items spread over the pool when they split evenly (each then runs on one thread: a
     * per-item convolution is often too small to split, LeNet's at batch 16 ran on one thread) */
    fused_job j = {.p = p,
                   .deconv = deconv,
                   .dtype = x->dtype,
                   .x1 = x->shape,
                   .y1 = y->shape,
                   .pad = pad,
                   .x = (const char *)x->data,
                   .w = wt->data,
                   .bias = bias,
                   .y = (char *)y->data,
                   .es = (size_t)mxw_dtype_size(x->dtype),
                   .F = F,
                   .aff = aff,
                   .act = c->fused_act};
    j.x1.dims[0] = j.y1.dims[0] = 1;
    j.nx1 = mxw_shape_size(&j.x1);
    j.ny1 = mxw_shape_size(&j.y1);
    const int64_t N = x->shape.dims[0];
    if (split_units(N, (double)(N * j.ny1) * (double)mxw_shape_size(&wt->shape) / (double)(F > 0 ? F : 1)))
      mxw_parallel_for(N, 1, fused_items, &j);
    else
      fused_items(&j, 0, N);
    return atomic_load(&j.failed) ? -1 : 0;
  }
  const mxw_shape xs = channel_first(&x->shape), ys = channel_first(&y->shape);
  window w;
  int rc;
  if (deconv) {
    window_set(&w, p, &ys, &xs, pad);
    rc = deconv_cl_run(&w, x->dtype, x->data, wt->data, bias, y->data, xs.dims[0], xs.dims[1], p->num_filter,
                       p->num_group);
  } else {
    window_set(&w, p, &xs, &ys, pad);
    rc = conv_cl_run(&w, x->dtype, x->data, wt->data, bias, y->data, xs.dims[0], xs.dims[1], p->num_filter,
                     p->num_group);
  }
  if (rc == 0 && aff)
    mxw_apply_affine_act((float *)y->data, mxw_shape_size(&y->shape) / F, F, 1, aff, aff + F, c->fused_act);
  else if (rc == 0 && c->fused_act)
    mxw_apply_act(y->data, y->dtype, mxw_shape_size(&y->shape), c->fused_act);
  return rc;
}

/* float16 / bfloat16: `fn` computed in float32 on converted copies of every input and output,
 * the outputs rounded back at the end. */
typedef int conv_fn(const mxw_op_call *c, int deconv);
static int run_halves(const mxw_op_call *c, int deconv, conv_fn *fn) {
  const int nin = c->num_inputs, nout = c->num_outputs;
  mxw_tensor in[4], out[4];
  MXW_CHECK(nin <= 4 && nout <= 4, "internal: too many operands");
  int64_t total = 0;
  for (int i = 0; i < nin; i++) total += mxw_tensor_size(&c->inputs[i]);
  for (int i = 0; i < nout; i++) total += mxw_tensor_size(&c->outputs[i]);
  float *buf = (float *)malloc(sizeof(float) * (size_t)(total ? total : 1));
  MXW_CHECK(buf != NULL, "out of memory converting %s data to float32", mxw_dtype_name(c->inputs[0].dtype));
  float *at = buf;
  for (int i = 0; i < nin; i++) {
    in[i] = c->inputs[i];
    mxw_convert(in[i].data, in[i].dtype, at, MXW_FLOAT32, mxw_tensor_size(&in[i]));
    in[i].data = at;
    in[i].dtype = MXW_FLOAT32;
    at += mxw_tensor_size(&c->inputs[i]);
  }
  for (int i = 0; i < nout; i++) {
    out[i] = c->outputs[i];
    out[i].data = at;
    out[i].dtype = MXW_FLOAT32;
    at += mxw_tensor_size(&c->outputs[i]);
  }
  mxw_op_call c32 = *c;
  c32.inputs = in;
  c32.outputs = out;
  const int rc = fn(&c32, deconv);
  for (int i = 0; rc == 0 && i < nout; i++)
    mxw_convert(out[i].data, MXW_FLOAT32, c->outputs[i].data, c->outputs[i].dtype, mxw_tensor_size(&out[i]));
  free(buf);
  return rc;
}
static int is_half(int t) { return t == MXW_FLOAT16 || t == MXW_BFLOAT16; }
static int forward_dispatch(const mxw_op_call *c, int deconv) {
  return is_half(c->inputs[0].dtype) ? run_halves(c, deconv, forward_common) : forward_common(c, deconv);
}
static int forward_conv(const mxw_op_call *c) { return forward_dispatch(c, 0); }
static int forward_deconv(const mxw_op_call *c) { return forward_dispatch(c, 1); }

/* ---- gradients ------------------------------------------------------------------------------------
 * MXNet's _backward_Convolution / _backward_Deconvolution give the data, weight and bias gradients
 * from one node. Here the data gradient is its own node -- of a Convolution the transposed
 * convolution of the output gradient with the same weight (Deconvolution, `adj` restoring the
 * input size), of a Deconvolution the convolution -- so that the executor drops it when the data
 * needs no gradient (the first layer), and the weight and bias gradients are the internal ops
 * _backward_Convolution_weight / _backward_Deconvolution_weight (inputs: ograd, data):
 *   dW[g] (Fg, Cg*taps) = sum over n of grid[n,g] (Fg, grid) * im2col(image[n,g])^T (grid, Cg*taps)
 * with image = data, grid = ograd for Convolution and image = ograd, grid = data for Deconvolution
 * (its weight (C, F/G, taps) is the weight of that convolution), one packed GEMM per batch item
 * and band of grid rows; the bias gradient sums ograd per channel. */

#define WGRAD_PART_ROWS 24 /* rows of dW in a part of a row-split weight gradient (wgrad_run) */

/* C (M, N) (+)= A (M, K) * B^T, B (N, K), in the operands' dtype. */
static int gemm_bt(int dtype, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda, const void *B, int64_t ldb,
                   int accumulate, void *C, int64_t ldc) {
  if (dtype == MXW_FLOAT32)
    return mxw_sgemm(0, 1, M, N, K, 1.f, (const float *)A, lda, (const float *)B, ldb, accumulate ? 1.f : 0.f,
                     (float *)C, ldc);
  return mxw_dgemm(0, 1, M, N, K, 1.0, (const double *)A, lda, (const double *)B, ldb, accumulate ? 1.0 : 0.0,
                   (double *)C, ldc);
}

/* The weight gradient by im2col + GEMM, one unit per (group, block of channels): the unit owns the
 * columns of dW[g] of its channels and sums them over the batch and the bands in order:
 *   dW[g][:, block] (Fg, cb*taps) += dy[n, g] (Fg, band) * im2col(x[n, block], band)^T
 * Channel blocks hold a multiple of 8 columns (8 / gcd(taps, 8) channels) and about 64 columns,
 * fixed by the shape, so every column is summed the same way for any thread count. */
typedef struct {
  const window *w;
  int dtype, pointwise, inner;
  size_t esize;
  const char *img, *grid;
  char *dw;
  int64_t N, C, F, G, Cg, Fg, rows, isz, gsz, gw, total_rows, nbands, band, cb, nblk, rparts;
  atomic_int failed;
} wgrad_job;

/* Rows [f0, f1) of unit u's block of dW (written): summed over the batch and the bands in order. */
static int wgrad_block(const wgrad_job *j, int64_t u, int64_t f0, int64_t f1, void *col) {
  const size_t es = j->esize;
  const int64_t taps = j->rows / j->Cg;
  const int64_t blk = u % j->nblk, g = u / j->nblk;
  const int64_t c0 = blk * j->cb, nc = j->cb < j->Cg - c0 ? j->cb : j->Cg - c0, ncols = nc * taps;
  char *dwb = j->dw + (size_t)((g * j->Fg + f0) * j->rows + c0 * taps) * es;
  for (int64_t f = f0; f < f1; f++) memset(dwb + (size_t)((f - f0) * j->rows) * es, 0, (size_t)ncols * es);
  for (int64_t n = 0; n < j->N; n++) {
    const char *x = j->img + (size_t)((n * j->C + g * j->Cg + c0) * j->isz) * es;
    const char *dy = j->grid + (size_t)((n * j->F + g * j->Fg + f0) * j->gsz) * es;
    if (j->pointwise) {
      if (gemm_bt(j->dtype, f1 - f0, ncols, j->gsz, dy, j->gsz, x, j->isz, 1, dwb, j->rows) != 0) return -1;
      continue;
    }
    for (int64_t r0 = 0; r0 < j->total_rows; r0 += j->band) {
      const int64_t nr = j->band < j->total_rows - r0 ? j->band : j->total_rows - r0;
      if (j->inner)
        colimg_split(j->w, es, x, nc, r0, nr, col, 0);
      else
        im2col(j->w, es, x, nc, r0, nr, col);
      if (gemm_bt(j->dtype, f1 - f0, ncols, nr * j->gw, dy + (size_t)(r0 * j->gw) * es, j->gsz, col, nr * j->gw, 1, dwb,
                  j->rows) != 0)
        return -1;
    }
  }
  return 0;
}

static void *wgrad_col(const wgrad_job *j) {
  const int64_t taps = j->rows / j->Cg;
  return j->pointwise ? (void *)j : mxw_scratch(0, (size_t)(j->cb * taps * j->band * j->gw) * j->esize + 1);
}

static void wgrad_units(void *ctx, int64_t begin, int64_t end) {
  wgrad_job *j = (wgrad_job *)ctx;
  void *col = wgrad_col(j);
  for (int64_t u = begin; col && u < end; u++)
    if (wgrad_block(j, u, 0, j->Fg, col) != 0) col = NULL;
  if (!col) atomic_store(&j->failed, 1);
}

/* Parts of dW's rows, each over every unit: parts [p * Fg / rparts] rounded down to 4 rows. */
static void wgrad_row_parts(void *ctx, int64_t begin, int64_t end) {
  wgrad_job *j = (wgrad_job *)ctx;
  void *col = wgrad_col(j);
  for (int64_t p = begin; col && p < end; p++) {
    const int64_t f0 = p * j->Fg / j->rparts / 4 * 4,
                  f1 = p + 1 == j->rparts ? j->Fg : (p + 1) * j->Fg / j->rparts / 4 * 4;
    for (int64_t u = 0; col && u < j->G * j->nblk; u++)
      if (wgrad_block(j, u, f0, f1, col) != 0) col = NULL;
  }
  if (!col) atomic_store(&j->failed, 1);
}

/* img (N, C, image), grid (N, F, grid) -> dw (F, C/G, taps) (written). */
static int wgrad_run(const window *w, int dtype, const void *img, const void *gridv, void *dw, int64_t N, int64_t C,
                     int64_t F, int64_t G) {
  const size_t esize = (size_t)mxw_dtype_size(dtype);
  const int64_t Cg = C / G, Fg = F / G, taps = prod3(w->k), grid = prod3(w->grid);
  if (dtype == MXW_FLOAT32 && Cg == 1 && Fg == 1 && is_planar(w) && taps <= DW_MAX_TAPS)
    return depthwise_wgrad_f32(w, (const float *)img, (const float *)gridv, (float *)dw, N, C);
  if (N == 0 || grid == 0) {
    memset(dw, 0, (size_t)(F * Cg * taps) * esize);
    return 0;
  }
  int64_t unit = 8; /* channels per block: a multiple of 8 / gcd(taps, 8), about 64 columns */
  for (int64_t t = taps; unit > 1 && t % 2 == 0; t /= 2) unit /= 2;
  int64_t cb = unit * (64 / (unit * taps) > 1 ? 64 / (unit * taps) : 1);
  if (cb > Cg) cb = Cg;
  wgrad_job j = {.w = w,
                 .dtype = dtype,
                 .pointwise = is_pointwise(w),
                 .esize = esize,
                 .img = (const char *)img,
                 .grid = (const char *)gridv,
                 .dw = (char *)dw,
                 .N = N,
                 .C = C,
                 .F = F,
                 .G = G,
                 .Cg = Cg,
                 .Fg = Fg,
                 .rows = Cg * taps,
                 .isz = prod3(w->img),
                 .gsz = grid,
                 .gw = w->grid[2],
                 .total_rows = w->grid[0] * w->grid[1],
                 .cb = cb,
                 .nblk = (Cg + cb - 1) / cb};
  split_bands(w, cb * taps, esize, &j.nbands, &j.band);
  const int64_t units = G * j.nblk;
  const double work = (double)(N * F) * (double)(Cg * taps) * (double)grid;
  /* Too few channel blocks for the threads (LeNet's 20 channels at 5x5 taps make blocks of 8, 8
   * and 4: 1.27x on 2 threads): parts of dW's rows instead, each over every block, the im2col
   * repeated per part. A part starts at a multiple of 4 rows and has at least WGRAD_PART_ROWS, where
   * the GEMM computes each row as it does for all of them (below 24 rows it takes its few-row
   * paths): the results do not depend on the split. */
  const int threads = mxw_get_num_threads();
  j.rparts = Fg / WGRAD_PART_ROWS < threads ? Fg / WGRAD_PART_ROWS : threads;
  if (G == 1 && units % threads != 0 && units < 3 * (int64_t)threads && j.rparts >= 2 &&
      work >= (double)mxw_conv_parallel_min_work) {
    mxw_parallel_for(j.rparts, 1, wgrad_row_parts, &j);
    return atomic_load(&j.failed) ? -1 : 0;
  }
  j.inner = !split_units(units, work);
  if (j.inner)
    wgrad_units(&j, 0, units);
  else
    mxw_parallel_for(units, 1, wgrad_units, &j);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* db[f] = sum over n and the `per` positions of dy (N, F, per); one unit per channel. */
typedef struct {
  int dtype;
  const void *dy;
  void *db;
  int64_t N, F, per;
} bias_grad_job;

static void bias_grad_channels(void *ctx, int64_t begin, int64_t end) {
  const bias_grad_job *j = (const bias_grad_job *)ctx;
  const int64_t N = j->N, F = j->F, per = j->per;
  for (int64_t f = begin; f < end; f++) {
    double s = 0.0;
    for (int64_t n = 0; n < N; n++) {
      const int64_t base = (n * F + f) * per;
      if (j->dtype == MXW_FLOAT32) {
        const float *y = (const float *)j->dy + base;
        v128_t a0 = wasm_f32x4_splat(0.f), a1 = a0;
        int64_t i = 0;
        for (; i + 8 <= per; i += 8) {
          a0 = wasm_f32x4_add(a0, wasm_v128_load(y + i));
          a1 = wasm_f32x4_add(a1, wasm_v128_load(y + i + 4));
        }
        a0 = wasm_f32x4_add(a0, a1);
        double part = ((double)wasm_f32x4_extract_lane(a0, 0) + (double)wasm_f32x4_extract_lane(a0, 1)) +
                      ((double)wasm_f32x4_extract_lane(a0, 2) + (double)wasm_f32x4_extract_lane(a0, 3));
        for (; i < per; i++) part += y[i];
        s += part;
      } else {
        const double *y = (const double *)j->dy + base;
        for (int64_t i = 0; i < per; i++) s += y[i];
      }
    }
    mxw_store_f64(j->db, j->dtype, f, s);
  }
}

static void bias_grad(int dtype, const void *dy, void *db, int64_t N, int64_t F, int64_t per) {
  bias_grad_job j = {dtype, dy, db, N, F, per};
  run_units(F, (double)(N * F) * (double)per, bias_grad_channels, &j);
}

/* Product of dims 2.. of a channel-first shape: the spatial size. */
static int64_t spatial_size(const mxw_shape *s) {
  int64_t n = 1;
  for (int i = 2; i < s->ndim; i++) n *= s->dims[i];
  return n;
}

/* _backward_(De)Convolution_weight: inputs ograd, data; outputs dweight (the weight's shape and
 * layout) and, unless no_bias, dbias (num_filter,). */
static int wgrad_common(const mxw_op_call *c, int deconv) {
  const ConvParam *p = (const ConvParam *)c->param;
  const mxw_tensor *dy = &c->inputs[0], *x = &c->inputs[1];
  mxw_tensor *dw = &c->outputs[0];
  const int dtype = dy->dtype;
  int64_t pad[3], adj[3], spatial[3];
  if (deconv) {
    MXW_TRY(deconv_geometry(p, &x->shape, pad, adj, spatial));
  } else {
    for (int i = 0; i < p->nsp; i++) pad[i] = p->pad.v[i];
  }
  /* channel-last shapes seen channel-first for the window and the counts */
  const mxw_shape dys = p->chan_last ? channel_first(&dy->shape) : dy->shape;
  const mxw_shape xs = p->chan_last ? channel_first(&x->shape) : x->shape;
  int (*run)(const window *, int, const void *, const void *, void *, int64_t, int64_t, int64_t, int64_t) =
      p->chan_last ? wgrad_cl_run : wgrad_run;
  window w;
  int rc;
  if (deconv) {
    window_set(&w, p, &dys, &xs, pad);
    rc = run(&w, dtype, dy->data, x->data, dw->data, xs.dims[0], dys.dims[1], xs.dims[1], p->num_group);
  } else {
    window_set(&w, p, &xs, &dys, pad);
    rc = run(&w, dtype, x->data, dy->data, dw->data, xs.dims[0], xs.dims[1], dys.dims[1], p->num_group);
  }
  if (rc == 0 && !p->no_bias) {
    if (p->chan_last)
      bias_grad_cl(dtype, dy->data, c->outputs[1].data, dys.dims[0], dys.dims[1], spatial_size(&dys));
    else
      bias_grad(dtype, dy->data, c->outputs[1].data, dys.dims[0], dys.dims[1], spatial_size(&dys));
  }
  return rc;
}
static int forward_wgrad_dispatch(const mxw_op_call *c, int deconv) {
  return is_half(c->inputs[0].dtype) ? run_halves(c, deconv, wgrad_common) : wgrad_common(c, deconv);
}
static int forward_conv_wgrad(const mxw_op_call *c) { return forward_wgrad_dispatch(c, 0); }
static int forward_deconv_wgrad(const mxw_op_call *c) { return forward_wgrad_dispatch(c, 1); }

static int num_outputs_wgrad(const void *param) { return ((const ConvParam *)param)->no_bias ? 1 : 2; }

/* dweight: the forward's weight shape for this data (Convolution (F, C/G, k...), Deconvolution
 * (C, F/G, k...), channel-last (lead, k..., second)); dbias (num_filter,). */
static int infer_shape_wgrad_common(const ConvParam *p, int deconv, mxw_shape *in, int nout, mxw_shape *out) {
  mxw_shape *data = &in[1];
  MXW_TRY(check_data_rank(p, data));
  if (data->ndim < 0) return 0;
  const int64_t C = data->dims[chan_axis(p)], G = p->num_group;
  int64_t dims[MXW_MAX_NDIM] = {deconv ? C : p->num_filter};
  dims[chan_axis(p)] = deconv ? p->num_filter / G : (C >= 0 ? C / G : -1);
  for (int i = 0; i < p->nsp; i++) dims[spatial_axis(p, i)] = p->kernel.v[i];
  const mxw_shape want = mxw_shape_make(p->nsp + 2, dims);
  MXW_TRY(mxw_shape_unify(&out[0], &want, "weight gradient", ""));
  if (nout > 1) {
    const mxw_shape b = mxw_shape_make(1, &p->num_filter);
    MXW_TRY(mxw_shape_unify(&out[1], &b, "bias gradient", " = (num_filter,)"));
  }
  return 0;
}
static int infer_shape_conv_wgrad(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  return infer_shape_wgrad_common((const ConvParam *)param, 0, in, nout, out);
}
static int infer_shape_deconv_wgrad(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  return infer_shape_wgrad_common((const ConvParam *)param, 1, in, nout, out);
}

/* Attributes of the Convolution / Deconvolution computing a data gradient: the window of p with
 * pad `pad` (and `adj`), num_filter, the groups and layout of p, no bias. kv gets the list. */
typedef struct {
  char kernel[128], stride[128], dilate[128], pad[128], adj[128], nf[32], ng[32];
  const char *kv[24];
} conv_attrs;
static const char *const *make_conv_attrs(conv_attrs *a, const ConvParam *p, const int64_t *pad, const int64_t *adj,
                                          int64_t num_filter) {
  mxw_tuple t = p->kernel;
  int k = 0;
  a->kv[k++] = "kernel";
  a->kv[k++] = tuple_str(&p->kernel, a->kernel, sizeof a->kernel);
  a->kv[k++] = "stride";
  a->kv[k++] = tuple_str(&p->stride, a->stride, sizeof a->stride);
  a->kv[k++] = "dilate";
  a->kv[k++] = tuple_str(&p->dilate, a->dilate, sizeof a->dilate);
  for (int i = 0; i < p->nsp; i++) t.v[i] = pad[i];
  a->kv[k++] = "pad";
  a->kv[k++] = tuple_str(&t, a->pad, sizeof a->pad);
  if (adj) {
    for (int i = 0; i < p->nsp; i++) t.v[i] = adj[i];
    a->kv[k++] = "adj";
    a->kv[k++] = tuple_str(&t, a->adj, sizeof a->adj);
  }
  snprintf(a->nf, sizeof a->nf, "%lld", (long long)num_filter);
  snprintf(a->ng, sizeof a->ng, "%lld", (long long)p->num_group);
  a->kv[k++] = "num_filter";
  a->kv[k++] = a->nf;
  a->kv[k++] = "num_group";
  a->kv[k++] = a->ng;
  a->kv[k++] = "no_bias";
  a->kv[k++] = "True";
  if (p->layout.has) {
    a->kv[k++] = "layout";
    a->kv[k++] = k_layouts[p->layout.v];
  }
  a->kv[k] = NULL;
  return a->kv;
}

/* Sets the weight (and bias) gradients from a _backward_*_weight node. */
static int set_weight_grads(mxw_grad_ctx *g, const char *op, const ConvParam *p) {
  mxw_gid wb[2] = {-1, -1};
  MXW_TRY(mxw_grad_op_fwd(g, op, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0)), wb, p->no_bias ? 1 : 2));
  MXW_TRY(mxw_grad_set(g, 1, wb[0]));
  return p->no_bias ? 0 : mxw_grad_set(g, 2, wb[1]);
}

/* Convolution: data gradient = Deconvolution(ograd, weight) with the same window; adj = the rows
 * the convolution's floor division left out, so that the result has the data's size xs (the
 * output's ys). */
static mxw_gid conv_data_grad(mxw_grad_ctx *g, const ConvParam *p, const mxw_shape *xs, const mxw_shape *ys,
                              mxw_gid ograd, mxw_gid weight) {
  int64_t pad[3], adj[3];
  for (int i = 0; i < p->nsp; i++) {
    const int64_t in = xs->dims[spatial_axis(p, i)], out = ys->dims[spatial_axis(p, i)];
    const int64_t dk = p->dilate.v[i] * (p->kernel.v[i] - 1) + 1;
    pad[i] = p->pad.v[i];
    adj[i] = in + 2 * pad[i] - dk - p->stride.v[i] * (out - 1);
  }
  conv_attrs a;
  const char *const *kv = make_conv_attrs(&a, p, pad, adj, xs->dims[chan_axis(p)]);
  return mxw_grad_op(g, "Deconvolution", kv, MXW_GIDS(ograd, weight));
}
static int grad_conv(mxw_grad_ctx *g) {
  const ConvParam *p = (const ConvParam *)mxw_grad_param(g);
  MXW_TRY(mxw_grad_set(g, 0,
                       conv_data_grad(g, p, mxw_grad_in_shape(g, 0), mxw_grad_out_shape(g, 0), mxw_grad_ograd(g, 0),
                                      mxw_grad_in(g, 1))));
  return set_weight_grads(g, "_backward_Convolution_weight", p);
}

/* Deconvolution: data gradient = Convolution(ograd, weight) with the same window (the effective
 * pad when target_shape set it), num_filter = the data's channels (xs: the data's shape). */
static mxw_gid deconv_data_grad(mxw_grad_ctx *g, const ConvParam *p, const mxw_shape *xs, mxw_gid ograd,
                                mxw_gid weight) {
  int64_t pad[3], adj[3], size[3];
  if (deconv_geometry(p, xs, pad, adj, size) != 0) return -1;
  conv_attrs a;
  const char *const *kv = make_conv_attrs(&a, p, pad, NULL, xs->dims[chan_axis(p)]);
  return mxw_grad_op(g, "Convolution", kv, MXW_GIDS(ograd, weight));
}
static int grad_deconv(mxw_grad_ctx *g) {
  const ConvParam *p = (const ConvParam *)mxw_grad_param(g);
  MXW_TRY(mxw_grad_set(g, 0, deconv_data_grad(g, p, mxw_grad_in_shape(g, 0), mxw_grad_ograd(g, 0), mxw_grad_in(g, 1))));
  return set_weight_grads(g, "_backward_Deconvolution_weight", p);
}

/* Second order (autograd.grad with create_graph). The weight and bias gradients are bilinear in
 * (ograd G, data X): with incoming gradients hW, hb, <hW, dW> + <hb, db> = <G, op(X; hW, hb)>, op
 * the forward layer with weight hW and bias hb (the node's attributes), so d/dG = op(X, hW, hb) and
 * d/dX = the data gradient of that layer for output gradient G and weight hW. */
static int grad_wgrad_common(mxw_grad_ctx *g, int deconv) {
  const ConvParam *p = (const ConvParam *)mxw_grad_param(g);
  const mxw_gid G = mxw_grad_in(g, 0), X = mxw_grad_in(g, 1), hW = mxw_grad_ograd(g, 0);
  const char *fwd = deconv ? "Deconvolution" : "Convolution";
  mxw_gid dG = -1;
  if (p->no_bias)
    MXW_TRY(mxw_grad_op_fwd(g, fwd, MXW_GIDS(X, hW), &dG, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, fwd, MXW_GIDS(X, hW, mxw_grad_ograd(g, 1)), &dG, 1));
  MXW_TRY(mxw_grad_set(g, 0, dG));
  const mxw_shape *xs = mxw_grad_in_shape(g, 1);
  return mxw_grad_set(
      g, 1, deconv ? deconv_data_grad(g, p, xs, G, hW) : conv_data_grad(g, p, xs, mxw_grad_in_shape(g, 0), G, hW));
}
static int grad_conv_wgrad(mxw_grad_ctx *g) { return grad_wgrad_common(g, 0); }
static int grad_deconv_wgrad(mxw_grad_ctx *g) { return grad_wgrad_common(g, 1); }

static const char *const k_wgrad_inputs[] = {"ograd", "data", NULL};
static const char *const k_wgrad_outputs[] = {"weight_grad", "bias_grad", NULL};

static const mxw_op_def op_backward_Convolution_weight = {
    .name = "_backward_Convolution_weight",
    .doc = MXW_DOC("internal: the weight and bias gradients of Convolution from its output gradient and data "
                   "(the weight/bias half of MXNet's _backward_Convolution)"),
    .attrs = k_conv_attrs,
    .num_attrs = (int)(sizeof k_conv_attrs / sizeof k_conv_attrs[0]),
    .param_size = sizeof(ConvParam),
    .validate = validate_conv,
    .num_inputs = 2,
    .input_names = k_wgrad_inputs,
    .num_outputs = 2,
    .num_outputs_fn = num_outputs_wgrad,
    .output_names = k_wgrad_outputs,
    .infer_shape = infer_shape_conv_wgrad,
    .infer_type = infer_type_f32_f64,
    .forward = forward_conv_wgrad,
    .gradient = grad_conv_wgrad,
};

static const mxw_op_def op_backward_Deconvolution_weight = {
    .name = "_backward_Deconvolution_weight",
    .doc = MXW_DOC("internal: the weight and bias gradients of Deconvolution from its output gradient and data "
                   "(the weight/bias half of MXNet's _backward_Deconvolution)"),
    .attrs = k_deconv_attrs,
    .num_attrs = (int)(sizeof k_deconv_attrs / sizeof k_deconv_attrs[0]),
    .param_size = sizeof(ConvParam),
    .validate = validate_deconv,
    .num_inputs = 2,
    .input_names = k_wgrad_inputs,
    .num_outputs = 2,
    .num_outputs_fn = num_outputs_wgrad,
    .output_names = k_wgrad_outputs,
    .infer_shape = infer_shape_deconv_wgrad,
    .infer_type = infer_type_f32_f64,
    .forward = forward_deconv_wgrad,
    .gradient = grad_deconv_wgrad,
};

/* a BatchNorm after it folds in along the output's channel axis (exec.c) */
static int conv_affine_axis(const void *param, int ndim) {
  const ConvParam *p = (const ConvParam *)param;
  return p->chan_last ? ndim - 1 : 1;
}

static const mxw_op_def op_Convolution = {
    .name = "Convolution",
    .aliases = ALIASES("_npx_convolution"),
    .doc = MXW_DOC("N-D convolution (cross-correlation) with zero padding, stride, dilation and channel groups: "
                   "out[n,f] = bias[f] + sum over the group's channels and kernel taps; layouts NCW/NCHW/NCDHW, and "
                   "NHWC/NDHWC with weight (num_filter, kernel..., C/num_group)"),
    .attrs = k_conv_attrs,
    .num_attrs = (int)(sizeof k_conv_attrs / sizeof k_conv_attrs[0]),
    .param_size = sizeof(ConvParam),
    .validate = validate_conv,
    .num_inputs = 3,
    .input_names = k_conv_inputs,
    .num_inputs_fn = num_inputs_conv,
    .num_outputs = 1,
    .infer_shape = infer_shape_conv,
    .infer_type = infer_type_f32_f64,
    .forward = forward_conv,
    .fusable_act = 1,
    .affine_axis = conv_affine_axis,
    .gradient = grad_conv,
};

static const mxw_op_def op_Deconvolution = {
    .name = "Deconvolution",
    .aliases = ALIASES("_npx_deconvolution"),
    .doc = MXW_DOC("transposed convolution (the gradient of Convolution with respect to its data); weight "
                   "(C, num_filter / num_group, kernel...), for NHWC/NDHWC (C, kernel..., num_filter / num_group)"),
    .attrs = k_deconv_attrs,
    .num_attrs = (int)(sizeof k_deconv_attrs / sizeof k_deconv_attrs[0]),
    .param_size = sizeof(ConvParam),
    .validate = validate_deconv,
    .num_inputs = 3,
    .input_names = k_conv_inputs,
    .num_inputs_fn = num_inputs_conv,
    .num_outputs = 1,
    .infer_shape = infer_shape_deconv,
    .infer_type = infer_type_f32_f64,
    .forward = forward_deconv,
    .fusable_act = 1,
    .gradient = grad_deconv,
};

/* ---- UpSampling ---------------------------------------------------------------------------------- */
enum { UP_NEAREST, UP_BILINEAR };
enum { UP_CONCAT, UP_SUM };
static const char *const k_sample_types[] = {"nearest", "bilinear", NULL};
static const char *const k_multi_modes[] = {"concat", "sum", NULL};

typedef struct {
  int64_t scale, num_filter;
  int sample_type, multi_input_mode;
  int64_t num_args, workspace;
} UpSamplingParam;

static const mxw_attr_spec k_upsampling_attrs[] = {
    MXW_A_INT("scale", UpSamplingParam, scale, NULL, "integer upsampling factor"),
    MXW_A_INT("num_filter", UpSamplingParam, num_filter, "0", "bilinear: number of channels of data"),
    MXW_A_ENUM("sample_type", UpSamplingParam, sample_type, NULL, k_sample_types, "nearest or bilinear"),
    MXW_A_ENUM("multi_input_mode", UpSamplingParam, multi_input_mode, "concat", k_multi_modes,
               "nearest with several inputs: concat along channels or sum"),
    MXW_A_INT("num_args", UpSamplingParam, num_args, NULL, "number of inputs (nearest); set automatically"),
    MXW_A_INT("workspace", UpSamplingParam, workspace, "512", "workspace limit in MB (ignored)"),
};
/* nearest names its inputs arg0, arg1, ... (variadic); bilinear takes data and weight. */
static const char *const k_upsampling_inputs[] = {"data", "weight", NULL};

static int validate_upsampling(void *param) {
  const UpSamplingParam *p = (const UpSamplingParam *)param;
  /* MXNet's fields are int: above INT32_MAX, num_args once wrapped to a negative input count (fuzz_attrs) */
  MXW_CHECK(p->scale >= 1 && p->scale <= INT32_MAX, "scale must be in [1, 2^31 - 1], got %lld", (long long)p->scale);
  MXW_CHECK(p->num_args >= 1 && p->num_args <= INT32_MAX, "num_args must be in [1, 2^31 - 1], got %lld",
            (long long)p->num_args);
  MXW_CHECK(p->num_filter >= 0 && p->num_filter <= INT32_MAX, "num_filter must be in [0, 2^31 - 1], got %lld",
            (long long)p->num_filter);
  return 0;
}
static int num_inputs_upsampling(const void *param) {
  const UpSamplingParam *p = (const UpSamplingParam *)param;
  return p->sample_type == UP_NEAREST ? (int)p->num_args : 2;
}

/* Bilinear upsampling is this depthwise deconvolution (no bias). */
static void bilinear_window(const UpSamplingParam *p, int64_t H, int64_t W, window *w) {
  const int64_t s = p->scale, k = 2 * s - s % 2, pad = s / 2; /* = ceil((s - 1) / 2) */
  window_init(w);
  w->grid[1] = H;
  w->grid[2] = W;
  w->img[1] = H * s;
  w->img[2] = W * s;
  w->k[1] = w->k[2] = k;
  w->s[1] = w->s[2] = s;
  w->p[1] = w->p[2] = pad;
}

static int infer_shape_upsampling(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const UpSamplingParam *p = (const UpSamplingParam *)param;
  (void)nout;
  shape_buf a, b;
  const int64_t s = p->scale;
  for (int i = 0; i < nin; i++)
    if (in[i].ndim >= 0 && in[i].ndim != 4 && !(p->sample_type == UP_BILINEAR && i == 1))
      return mxw_fail("input %d has shape %s, expected 4 dimensions (batch, channel, height, width)", i,
                      mxw_shape_str(&in[i], a, sizeof a));
  mxw_shape *data = &in[0];
  if (p->sample_type == UP_BILINEAR) {
    if (data->ndim < 0) return 0;
    const int64_t C = data->dims[1], k = 2 * s - s % 2;
    if (C >= 0)
      MXW_CHECK(p->num_filter == C, "bilinear: num_filter (%lld) must equal the number of channels of data %s",
                (long long)p->num_filter, mxw_shape_str(data, a, sizeof a));
    const int64_t wd[4] = {C, 1, k, k};
    const mxw_shape want = mxw_shape_make(4, wd);
    MXW_TRY(mxw_shape_unify(&in[1], &want, "weight", " = (channels, 1, 2*scale - scale%2, 2*scale - scale%2)"));
    const int64_t od[4] = {data->dims[0], C, data->dims[2] < 0 ? -1 : data->dims[2] * s,
                           data->dims[3] < 0 ? -1 : data->dims[3] * s};
    const mxw_shape o = mxw_shape_make(4, od);
    return mxw_shape_unify(&out[0], &o, "output", "");
  }
  /* nearest: every input is known before the output can be */
  for (int i = 0; i < nin; i++)
    if (!mxw_shape_known(&in[i])) return 0;
  const int64_t oh = data->dims[2] * s, ow = data->dims[3] * s;
  int64_t channels = 0;
  for (int i = 0; i < nin; i++) {
    const int64_t *d = in[i].dims;
    MXW_CHECK(d[0] == data->dims[0], "input %d %s and input 0 %s have different batch sizes", i,
              mxw_shape_str(&in[i], a, sizeof a), mxw_shape_str(data, b, sizeof b));
    MXW_CHECK(d[2] > 0 && d[3] > 0 && oh % d[2] == 0 && ow % d[3] == 0 && oh / d[2] == ow / d[3],
              "input %d %s cannot be upsampled to the output size (%lld, %lld) (input 0's size times scale %lld) "
              "by one integer factor",
              i, mxw_shape_str(&in[i], a, sizeof a), (long long)oh, (long long)ow, (long long)s);
    if (p->multi_input_mode == UP_SUM) {
      MXW_CHECK(d[1] == data->dims[1], "multi_input_mode=sum: input %d %s and input 0 %s have different channels", i,
                mxw_shape_str(&in[i], a, sizeof a), mxw_shape_str(data, b, sizeof b));
      channels = d[1];
    } else {
      channels += d[1];
    }
  }
  const int64_t od[4] = {data->dims[0], channels, oh, ow};
  const mxw_shape o = mxw_shape_make(4, od);
  return mxw_shape_unify(&out[0], &o, "output", "");
}

static int infer_type_upsampling(const void *param, int nin, int *in, int nout, int *out) {
  const UpSamplingParam *p = (const UpSamplingParam *)param;
  if (p->sample_type == UP_BILINEAR) return infer_type_f32_f64(param, nin, in, nout, out);
  return mxw_infer_type_same(param, nin, in, nout, out);
}

/* dst[x] = src[x / f] for x < n, elements of esize bytes. */
static void replicate_row(void *dst, const void *src, int64_t n, int64_t f, size_t esize) {
  switch (esize) {
    case 1:
      for (int64_t x = 0; x < n; x++) ((uint8_t *)dst)[x] = ((const uint8_t *)src)[x / f];
      break;
    case 2:
      for (int64_t x = 0; x < n; x++) ((uint16_t *)dst)[x] = ((const uint16_t *)src)[x / f];
      break;
    case 4:
      for (int64_t x = 0; x < n; x++) ((uint32_t *)dst)[x] = ((const uint32_t *)src)[x / f];
      break;
    default:
      for (int64_t x = 0; x < n; x++) ((uint64_t *)dst)[x] = ((const uint64_t *)src)[x / f];
      break;
  }
}
/* dst[x] += src[x / f] for x < n. */
static void replicate_row_add(void *dst, const void *src, int64_t n, int64_t f, int dtype) {
  if (dtype == MXW_FLOAT32) {
    float *d = (float *)dst;
    const float *s = (const float *)src;
    for (int64_t x = 0; x < n; x++) d[x] += s[x / f];
  } else {
    for (int64_t x = 0; x < n; x++)
      mxw_store_f64(dst, dtype, x, mxw_load_f64(dst, dtype, x) + mxw_load_f64(src, dtype, x / f));
  }
}

static int forward_upsampling(const mxw_op_call *c) {
  const UpSamplingParam *p = (const UpSamplingParam *)c->param;
  mxw_tensor *y = &c->outputs[0];
  const int64_t N = y->shape.dims[0], Cout = y->shape.dims[1], OH = y->shape.dims[2], OW = y->shape.dims[3];
  if (p->sample_type == UP_BILINEAR) {
    const mxw_tensor *x = &c->inputs[0];
    window w;
    bilinear_window(p, x->shape.dims[2], x->shape.dims[3], &w);
    return deconv_run(&w, x->dtype, x->data, c->inputs[1].data, NULL, y->data, N, x->shape.dims[1], Cout, Cout);
  }
  const size_t esize = (size_t)mxw_dtype_size(y->dtype), orow = (size_t)OW * esize;
  int64_t cofs = 0;
  for (int i = 0; i < c->num_inputs; i++) {
    const mxw_tensor *x = &c->inputs[i];
    const int64_t C = x->shape.dims[1], H = x->shape.dims[2], W = x->shape.dims[3], f = OH / H;
    const int add = p->multi_input_mode == UP_SUM && i > 0;
    for (int64_t n = 0; n < N; n++)
      for (int64_t ch = 0; ch < C; ch++) {
        const char *src = (const char *)x->data + (size_t)((n * C + ch) * H * W) * esize;
        char *dst = (char *)y->data + (size_t)((n * Cout + cofs + ch) * OH * OW) * esize;
        for (int64_t oy = 0; oy < OH; oy++) {
          const char *srow = src + (size_t)((oy / f) * W) * esize;
          char *drow = dst + (size_t)oy * orow;
          if (add)
            replicate_row_add(drow, srow, OW, f, y->dtype);
          else if (oy % f)
            memcpy(drow, drow - orow, orow); /* same source row as the one above */
          else
            replicate_row(drow, srow, OW, f, esize);
        }
      }
    if (p->multi_input_mode == UP_CONCAT) cofs += C;
  }
  return 0;
}

/* ---- UpSampling's gradient ---------------------------------------------------------------------
 * nearest: each input's gradient sums the output gradient over its f x f blocks (f = its own
 * factor), in its channel range of the output (concat) or over all of it (sum): the
 * _backward_UpSampling op, whose inputs after ograd are the forward inputs (for their shapes).
 * bilinear: the gradients of the depthwise Deconvolution it is -- data: a depthwise Convolution of
 * the output gradient with the weight; weight: _backward_Deconvolution_weight. */
static int num_inputs_upsampling_grad(const void *param) { return (int)((const UpSamplingParam *)param)->num_args + 1; }
static int num_outputs_upsampling_grad(const void *param) { return (int)((const UpSamplingParam *)param)->num_args; }

static int infer_shape_upsampling_grad(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  for (int i = 0; i < nout && i + 1 < nin; i++) MXW_TRY(mxw_shape_assign(&out[i], &in[i + 1], "input gradient"));
  return 0;
}

/* dx[n, c, y, x] = sum over the f x f block of dy[n, cofs + c, y*f .., x*f ..] (accumulated in
 * double for every dtype but float32, which sums in float as the forward replicates). */
static int forward_upsampling_grad(const mxw_op_call *c) {
  const UpSamplingParam *p = (const UpSamplingParam *)c->param;
  const mxw_tensor *dy = &c->inputs[0];
  const int64_t N = dy->shape.dims[0], Cout = dy->shape.dims[1], OH = dy->shape.dims[2], OW = dy->shape.dims[3];
  int64_t cofs = 0;
  for (int i = 0; i < c->num_outputs; i++) {
    mxw_tensor *dx = &c->outputs[i];
    const int64_t C = dx->shape.dims[1], H = dx->shape.dims[2], W = dx->shape.dims[3], f = H > 0 ? OH / H : 1;
    for (int64_t n = 0; n < N; n++)
      for (int64_t ch = 0; ch < C; ch++) {
        const int64_t src = (n * Cout + cofs + ch) * OH * OW, dst = (n * C + ch) * H * W;
        if (dy->dtype == MXW_FLOAT32) {
          const float *g = (const float *)dy->data + src;
          float *o = (float *)dx->data + dst;
          for (int64_t y = 0; y < H; y++) {
            float *orow = o + y * W;
            for (int64_t x = 0; x < W; x++) orow[x] = 0.f;
            for (int64_t a = 0; a < f; a++) {
              const float *grow = g + (y * f + a) * OW;
              for (int64_t x = 0; x < W; x++)
                for (int64_t b = 0; b < f; b++) orow[x] += grow[x * f + b];
            }
          }
        } else {
          for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++) {
              double s = 0.0;
              for (int64_t a = 0; a < f; a++)
                for (int64_t b = 0; b < f; b++)
                  s += mxw_load_f64(dy->data, dy->dtype, src + (y * f + a) * OW + x * f + b);
              mxw_store_f64(dx->data, dx->dtype, dst + y * W + x, s);
            }
        }
      }
    if (p->multi_input_mode == UP_CONCAT) cofs += C;
  }
  (void)OW;
  return 0;
}

static int grad_upsampling(mxw_grad_ctx *g) {
  const UpSamplingParam *p = (const UpSamplingParam *)mxw_grad_param(g);
  const int nin = mxw_grad_num_inputs(g);
  if (p->sample_type == UP_NEAREST) {
    mxw_gid ins[MXW_MAX_TUPLE + 1], outs[MXW_MAX_TUPLE];
    MXW_CHECK(nin <= MXW_MAX_TUPLE, "UpSampling gradient: too many inputs (%d)", nin);
    ins[0] = mxw_grad_ograd(g, 0);
    for (int i = 0; i < nin; i++) ins[i + 1] = mxw_grad_in(g, i);
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_UpSampling", ins, nin + 1, outs, nin));
    for (int i = 0; i < nin; i++) MXW_TRY(mxw_grad_set(g, i, outs[i]));
    return 0;
  }
  const int64_t s = p->scale, k = 2 * s - s % 2, pad = s / 2, C = mxw_grad_in_shape(g, 0)->dims[1];
  char ks[64], ss[64], ps[64], cs[32];
  snprintf(ks, sizeof ks, "(%lld, %lld)", (long long)k, (long long)k);
  snprintf(ss, sizeof ss, "(%lld, %lld)", (long long)s, (long long)s);
  snprintf(ps, sizeof ps, "(%lld, %lld)", (long long)pad, (long long)pad);
  snprintf(cs, sizeof cs, "%lld", (long long)C);
  const char *const *kv =
      MXW_KV("kernel", ks, "stride", ss, "pad", ps, "num_filter", cs, "num_group", cs, "no_bias", "True");
  mxw_gid og = mxw_grad_ograd(g, 0);
  MXW_TRY(mxw_grad_set(g, 0, mxw_grad_op(g, "Convolution", kv, MXW_GIDS(og, mxw_grad_in(g, 1)))));
  return mxw_grad_set(g, 1, mxw_grad_op(g, "_backward_Deconvolution_weight", kv, MXW_GIDS(og, mxw_grad_in(g, 0))));
}

/* As MXNet's FSetInputVarAttrOnCompose: a variable composed as input 1 (bilinear's weight) is
 * initialised by the bilinear initializer unless it has its own __init__ (the core checks that). */
static const char *input_var_init_upsampling(const void *param, int index) {
  (void)param;
  return index == 1 ? "[\"bilinear\", {}]" : NULL;
}

static const char *input_name_upsampling(const void *param, int index) {
  const UpSamplingParam *p = (const UpSamplingParam *)param;
  return p->sample_type == UP_NEAREST || index > 1 ? NULL : k_upsampling_inputs[index];
}

static const mxw_op_def op_UpSampling = {
    .name = "UpSampling",
    .doc = MXW_DOC("nearest: pixel replication of one or more 4-D inputs (concat or sum); bilinear: a depthwise "
                   "deconvolution with a (C, 1, k, k) weight, k = 2*scale - scale%2"),
    .attrs = k_upsampling_attrs,
    .num_attrs = (int)(sizeof k_upsampling_attrs / sizeof k_upsampling_attrs[0]),
    .param_size = sizeof(UpSamplingParam),
    .validate = validate_upsampling,
    .num_inputs = MXW_VARIADIC,
    .input_names = k_upsampling_inputs,
    .num_inputs_fn = num_inputs_upsampling,
    .num_outputs = 1,
    .infer_shape = infer_shape_upsampling,
    .infer_type = infer_type_upsampling,
    .forward = forward_upsampling,
    .input_var_init = input_var_init_upsampling,
    .input_name_fn = input_name_upsampling,
    .gradient = grad_upsampling,
};

static const char *input_name_upsampling_grad(const void *param, int index) {
  (void)param;
  return index == 0 ? "ograd" : NULL;
}

static const mxw_op_def op_backward_UpSampling = {
    .name = "_backward_UpSampling",
    .doc = MXW_DOC("the gradient of nearest UpSampling: each input's gradient sums ograd over its blocks; inputs "
                   "ograd and the forward inputs (their shapes)"),
    .attrs = k_upsampling_attrs,
    .num_attrs = (int)(sizeof k_upsampling_attrs / sizeof k_upsampling_attrs[0]),
    .param_size = sizeof(UpSamplingParam),
    .validate = validate_upsampling,
    .num_inputs = MXW_VARIADIC,
    .num_inputs_fn = num_inputs_upsampling_grad,
    .num_outputs = 1,
    .num_outputs_fn = num_outputs_upsampling_grad,
    .infer_shape = infer_shape_upsampling_grad,
    .forward = forward_upsampling_grad,
    .input_name_fn = input_name_upsampling_grad,
};

MXW_FAMILY(conv, &op_Convolution, &op_Deconvolution, &op_UpSampling, &op_backward_Convolution_weight,
           &op_backward_Deconvolution_weight, &op_backward_UpSampling);
