/* reduce.c -- reductions over axes and the index reductions (ops.md §7):
 *   sum (sum_axis), mean, max (max_axis), min (min_axis), prod, nansum, nanprod, norm,
 *   argmax, argmin, pick (choose_element_0index).
 *
 * How a reduction runs. The reduced axes are resolved (negative axes, exclude), size-1 dims are
 * dropped and neighbouring dims of the same kind (kept K / reduced R) are merged, leaving an
 * alternating list of blocks such as (K R K R). Each reduced block is then one *stage* over an
 * (outer, red, inner) view, last block first; a stage writes outer*inner partial results that
 * the next stage reads. Most real reductions are a single stage: (K R) reduces contiguous rows,
 * (R K) reduces columns.
 *
 * Numerics. float32 (and float16/bfloat16, converted to float32 first) accumulates in float32
 * and float64 in double, as MXNet accumulates in the data type; sums are pairwise (SIMD leaves
 * of up to SUM_LEAF elements) so that a 10^6-element float32 sum stays within ~1e-6 relative.
 * Integer types accumulate in int64 with wrap-around and are then wrapped to the output type,
 * which gives exactly the bits of MXNet's accumulation in the type itself. max/min propagate
 * NaN; nansum/nanprod read NaN as 0/1. mean divides in the output type (integer division for
 * integer types, as MXNet's `out /= count`).
 *
 * Threads. A stage splits over its independent outputs: rows (inner == 1), or blocks of
 * COL_LANES neighbouring columns of each outer slice; each output is computed by the same loop
 * whatever chunk holds it. A sum of one long row (a full reduction) evaluates the top of its
 * pairwise tree in parallel: the subtrees of at most TREE_BLOCK elements are the same for every
 * thread count, and are added back in the tree's order, so the result is the 1-thread one. A
 * max/min/prod of one long row stays on one thread. The backward kernels split the input's rows.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/mxw_parallel.h"

#include <stdatomic.h>
#include <stdlib.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <simde/wasm/simd128.h>
#endif

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
static const char *const k_data[] = {"data", NULL};
static const char *const k_pick_inputs[] = {"data", "index", NULL};

static inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

/* "(0, -1)"-style text of an axis tuple, for error messages. */
static const char *tuple_str(const mxw_tuple *t, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < t->ndim && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, i ? ", %lld" : "%lld", (long long)t->v[i]);
  if (used < len) snprintf(buf + used, len - used, t->ndim == 1 ? ",)" : ")");
  return buf;
}

/* ==== reduced axes and output shapes ======================================================== */

/* Marks the reduced axes of `in`: None or () reduces every axis; otherwise the listed axes
 * (negative ones count from the end), or with `exclude` every axis that is not listed. */
static int resolve_axes(const mxw_tuple *axis, int exclude, const mxw_shape *in, uint8_t reduced[MXW_MAX_NDIM]) {
  int ndim = in->ndim;
  if (axis->ndim <= 0) {
    for (int i = 0; i < ndim; i++) reduced[i] = 1;
    return 0;
  }
  uint8_t listed[MXW_MAX_NDIM] = {0};
  char a_buf[160], s_buf[128];
  for (int k = 0; k < axis->ndim; k++) {
    int64_t a = axis->v[k] < 0 ? axis->v[k] + ndim : axis->v[k];
    if (a < 0 || a >= ndim)
      return mxw_fail("axis %lld is out of range for data of shape %s (%d dimension%s)", (long long)axis->v[k],
                      mxw_shape_str(in, s_buf, sizeof s_buf), ndim, ndim == 1 ? "" : "s");
    if (listed[a])
      return mxw_fail("axis=%s names axis %lld more than once", tuple_str(axis, a_buf, sizeof a_buf), (long long)a);
    listed[a] = 1;
  }
  for (int i = 0; i < ndim; i++) reduced[i] = exclude ? !listed[i] : listed[i];
  return 0;
}

/* The input shape with the reduced axes removed (set to 1 with keepdims); removing every axis
 * gives (1,). With exclude the kept axes are the listed ones, so this is also MXNet's
 * "rank len(axis) filled with the kept sizes". */
static mxw_shape reduced_shape(const mxw_shape *in, const uint8_t *reduced, int keepdims) {
  mxw_shape o;
  memset(&o, 0, sizeof o);
  for (int i = 0; i < in->ndim; i++) {
    if (keepdims)
      o.dims[o.ndim++] = reduced[i] ? 1 : in->dims[i];
    else if (!reduced[i])
      o.dims[o.ndim++] = in->dims[i];
  }
  if (!keepdims && o.ndim == 0) {
    o.ndim = 1;
    o.dims[0] = 1;
  }
  return o;
}

static int infer_reduce_shape(const mxw_tuple *axis, int exclude, int keepdims, mxw_shape *in, mxw_shape *out) {
  if (in->ndim < 0) return 0;
  uint8_t reduced[MXW_MAX_NDIM];
  MXW_TRY(resolve_axes(axis, exclude, in, reduced));
  mxw_shape o = reduced_shape(in, reduced, keepdims);
  return mxw_shape_assign(out, &o, "output");
}

/* ==== the stage plan ========================================================================= */

typedef struct {
  int64_t outer, red, inner;
} stage_dims;

/* Merges the dims into alternating kept/reduced blocks (size-1 dims dropped) and lists one stage
 * per reduced block, last block first. With nothing to reduce, one stage of red = 1 (a copy
 * that still applies the element map, e.g. |x| for norm). Returns the number of stages. */
static int plan_stages(const mxw_shape *s, const uint8_t *reduced, stage_dims stages[MXW_MAX_NDIM]) {
  int64_t size[MXW_MAX_NDIM];
  uint8_t kind[MXW_MAX_NDIM];
  int nb = 0;
  for (int i = 0; i < s->ndim; i++) {
    if (s->dims[i] == 1) continue;
    if (nb > 0 && kind[nb - 1] == reduced[i]) {
      size[nb - 1] *= s->dims[i];
    } else {
      size[nb] = s->dims[i];
      kind[nb] = reduced[i];
      nb++;
    }
  }
  int ns = 0;
  int64_t inner = 1; /* kept blocks after the current one (later reduced blocks are gone) */
  for (int b = nb - 1; b >= 0; b--) {
    if (!kind[b]) {
      inner *= size[b];
      continue;
    }
    int64_t outer = 1;
    for (int k = 0; k < b; k++) outer *= size[k];
    stages[ns++] = (stage_dims){outer, size[b], inner};
  }
  if (ns == 0) stages[ns++] = (stage_dims){mxw_shape_size(s), 1, 1};
  return ns;
}

/* ==== what is reduced ======================================================================== */

typedef enum { COMB_SUM, COMB_PROD, COMB_MAX, COMB_MIN } comb_kind;
/* Applied to the input elements in the first stage only. */
typedef enum { MAP_ID, MAP_NAN_TO_0, MAP_NAN_TO_1, MAP_ABS, MAP_SQUARE } map_kind;
typedef enum { POST_NONE, POST_MEAN, POST_SQRT } post_kind;

typedef struct {
  comb_kind comb;
  map_kind map;
  post_kind post;
} reduce_kind;

/* ==== float kernels ========================================================================== */
/* Scalar definitions for float and double: the element map, the combine (NaN-propagating
 * max/min), a strided fold (the reference loop), and column reductions (inner > 1) that run
 * over blocks of COL_LANES neighbouring outputs; column sums are pairwise over rows. */
#define COL_LANES 64
#define COL_LEAF 64

#define DEFINE_FLOAT_KERNELS(T, SFX, ABS)                                                                          \
  static inline T map_##SFX(T v, map_kind m) {                                                                     \
    switch (m) {                                                                                                   \
      case MAP_NAN_TO_0: return v != v ? (T)0 : v;                                                                 \
      case MAP_NAN_TO_1: return v != v ? (T)1 : v;                                                                 \
      case MAP_ABS: return ABS(v);                                                                                 \
      case MAP_SQUARE: return v * v;                                                                               \
      default: return v;                                                                                           \
    }                                                                                                              \
  }                                                                                                                \
  static inline T comb_##SFX(T acc, T v, comb_kind c) {                                                            \
    switch (c) {                                                                                                   \
      case COMB_SUM: return acc + v;                                                                               \
      case COMB_PROD: return acc * v;                                                                              \
      case COMB_MAX: return (v > acc || v != v) ? v : acc;                                                         \
      default: return (v < acc || v != v) ? v : acc;                                                               \
    }                                                                                                              \
  }                                                                                                                \
  /* fold of map(x[i * stride]) for i < n (n >= 1) */                                                              \
  static T fold_strided_##SFX(const T *x, int64_t n, int64_t stride, comb_kind c, map_kind m) {                    \
    T acc = map_##SFX(x[0], m);                                                                                    \
    for (int64_t i = 1; i < n; i++) acc = comb_##SFX(acc, map_##SFX(x[i * stride], m), c);                         \
    return acc;                                                                                                    \
  }                                                                                                                \
  /* out[j] = sum over r < rows of map(x[r * stride + j]) for j < w, pairwise over rows */                         \
  static void sum_cols_##SFX(const T *x, int64_t stride, int64_t rows, int w, T *out, map_kind m) {                \
    if (rows <= COL_LEAF) {                                                                                        \
      for (int j = 0; j < w; j++) out[j] = 0;                                                                      \
      for (int64_t r = 0; r < rows; r++) {                                                                         \
        const T *xr = x + r * stride;                                                                              \
        for (int j = 0; j < w; j++) out[j] += map_##SFX(xr[j], m);                                                 \
      }                                                                                                            \
      return;                                                                                                      \
    }                                                                                                              \
    T tmp[COL_LANES];                                                                                              \
    int64_t half = rows / 2;                                                                                       \
    sum_cols_##SFX(x, stride, half, w, out, m);                                                                    \
    sum_cols_##SFX(x + half * stride, stride, rows - half, w, tmp, m);                                             \
    for (int j = 0; j < w; j++) out[j] += tmp[j];                                                                  \
  }                                                                                                                \
  /* y[j] = fold over r < red of map(x[r * stride + j]) for j < w (prod, max, min) */                              \
  static void fold_cols_##SFX(const T *x, int64_t red, int64_t stride, int64_t w, T *y, comb_kind c, map_kind m) { \
    for (int64_t j = 0; j < w; j++) y[j] = map_##SFX(x[j], m);                                                     \
    for (int64_t r = 1; r < red; r++) {                                                                            \
      const T *xr = x + r * stride;                                                                                \
      for (int64_t j = 0; j < w; j++) y[j] = comb_##SFX(y[j], map_##SFX(xr[j], m), c);                             \
    }                                                                                                              \
  }

DEFINE_FLOAT_KERNELS(float, f32, fabsf)
DEFINE_FLOAT_KERNELS(double, f64, fabs)

/* ---- float32 contiguous rows: SIMD --------------------------------------------------------- */
static inline v128_t vmap_f32(v128_t v, map_kind m) {
  switch (m) {
    case MAP_NAN_TO_0: return wasm_v128_and(v, wasm_f32x4_eq(v, v));
    case MAP_NAN_TO_1: return wasm_v128_bitselect(v, wasm_f32x4_splat(1.f), wasm_f32x4_eq(v, v));
    case MAP_ABS: return wasm_f32x4_abs(v);
    case MAP_SQUARE: return wasm_f32x4_mul(v, v);
    default: return v;
  }
}

/* Sum of map(x[i]), i < n: 16 lanes in four vector accumulators, then the tail. Inlined per
 * map kind so the map folds away. */
static inline __attribute__((always_inline)) float sum_leaf_f32_m(const float *x, int64_t n, map_kind m) {
  v128_t a0 = wasm_f32x4_splat(0.f), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = wasm_f32x4_add(a0, vmap_f32(wasm_v128_load(x + i), m));
    a1 = wasm_f32x4_add(a1, vmap_f32(wasm_v128_load(x + i + 4), m));
    a2 = wasm_f32x4_add(a2, vmap_f32(wasm_v128_load(x + i + 8), m));
    a3 = wasm_f32x4_add(a3, vmap_f32(wasm_v128_load(x + i + 12), m));
  }
  for (; i + 4 <= n; i += 4) a0 = wasm_f32x4_add(a0, vmap_f32(wasm_v128_load(x + i), m));
  v128_t a = wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3));
  float s = (wasm_f32x4_extract_lane(a, 0) + wasm_f32x4_extract_lane(a, 1)) +
            (wasm_f32x4_extract_lane(a, 2) + wasm_f32x4_extract_lane(a, 3));
  for (; i < n; i++) s += map_f32(x[i], m);
  return s;
}

#define SUM_LEAF 512
static float sum_contig_f32(const float *x, int64_t n, map_kind m) {
  if (n <= SUM_LEAF) {
    switch (m) {
      case MAP_NAN_TO_0: return sum_leaf_f32_m(x, n, MAP_NAN_TO_0);
      case MAP_ABS: return sum_leaf_f32_m(x, n, MAP_ABS);
      case MAP_SQUARE: return sum_leaf_f32_m(x, n, MAP_SQUARE);
      default: return sum_leaf_f32_m(x, n, MAP_ID);
    }
  }
  int64_t half = (n / 2) & ~(int64_t)15; /* keep the left half a whole number of vectors */
  return sum_contig_f32(x, half, m) + sum_contig_f32(x + half, n - half, m);
}

/* prod / max / min of map(x[i]), i < n, four lanes at a time. max/min track NaN lanes apart
 * (pmax/pmin ignore NaN) so the result is NaN exactly when an element is, on every target. */
static float fold_contig_f32(const float *x, int64_t n, comb_kind c, map_kind m) {
  if (n < 8) return fold_strided_f32(x, n, 1, c, m);
  v128_t acc = vmap_f32(wasm_v128_load(x), m);
  v128_t nan = wasm_f32x4_ne(acc, acc);
  int64_t i = 4;
  for (; i + 4 <= n; i += 4) {
    v128_t v = vmap_f32(wasm_v128_load(x + i), m);
    if (c == COMB_PROD) {
      acc = wasm_f32x4_mul(acc, v);
    } else {
      nan = wasm_v128_or(nan, wasm_f32x4_ne(v, v));
      acc = c == COMB_MAX ? wasm_f32x4_pmax(acc, v) : wasm_f32x4_pmin(acc, v);
    }
  }
  float r = wasm_f32x4_extract_lane(acc, 0);
  r = comb_f32(r, wasm_f32x4_extract_lane(acc, 1), c);
  r = comb_f32(r, wasm_f32x4_extract_lane(acc, 2), c);
  r = comb_f32(r, wasm_f32x4_extract_lane(acc, 3), c);
  for (; i < n; i++) r = comb_f32(r, map_f32(x[i], m), c);
  if (c != COMB_PROD && wasm_v128_any_true(nan)) return NAN;
  return r;
}

/* fold_cols_f32 (prod, max, min down columns) four columns at a time: comb_f32's rule lane by lane
 * by masks (as scalar code its float selects are branches in V8, mispredicted on random data) */
static void fold_cols_f32_v(const float *x, int64_t red, int64_t stride, int64_t w, float *y, comb_kind c, map_kind m) {
  int64_t j0 = 0;
  for (; j0 + 4 <= w; j0 += 4) {
    v128_t acc = vmap_f32(wasm_v128_load(x + j0), m);
    for (int64_t r = 1; r < red; r++) {
      const v128_t v = vmap_f32(wasm_v128_load(x + r * stride + j0), m);
      if (c == COMB_PROD) {
        acc = wasm_f32x4_mul(acc, v);
      } else {
        const v128_t better = c == COMB_MAX ? wasm_f32x4_gt(v, acc) : wasm_f32x4_lt(v, acc);
        acc = wasm_v128_bitselect(v, acc, wasm_v128_or(better, wasm_f32x4_ne(v, v)));
      }
    }
    wasm_v128_store(y + j0, acc);
  }
  if (j0 < w) fold_cols_f32(x + j0, red, stride, w - j0, y + j0, c, m);
}

/* ---- float64 contiguous rows: scalar with four accumulators ---------------------------------- */
static double sum_contig_f64(const double *x, int64_t n, map_kind m) {
  if (n <= SUM_LEAF) {
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      a0 += map_f64(x[i], m);
      a1 += map_f64(x[i + 1], m);
      a2 += map_f64(x[i + 2], m);
      a3 += map_f64(x[i + 3], m);
    }
    for (; i < n; i++) a0 += map_f64(x[i], m);
    return (a0 + a1) + (a2 + a3);
  }
  int64_t half = (n / 2) & ~(int64_t)3;
  return sum_contig_f64(x, half, m) + sum_contig_f64(x + half, n - half, m);
}

static double fold_contig_f64(const double *x, int64_t n, comb_kind c, map_kind m) {
  return fold_strided_f64(x, n, 1, c, m);
}

/* ---- one stage over (outer, red, inner) ------------------------------------------------------ */
/* A stage's units of work: one per output row when inner == 1, else one per block of COL_LANES
 * neighbouring columns of each outer slice. */
static int64_t col_blocks(stage_dims d) { return (d.inner + COL_LANES - 1) / COL_LANES; }
static int64_t stage_units(stage_dims d) { return d.inner == 1 ? d.outer : d.outer * col_blocks(d); }

/* Units [u0, u1) of a stage. */
#define DEFINE_STAGE(T, SFX)                                                                                           \
  static void stage_units_##SFX(const T *x, T *y, stage_dims d, comb_kind c, map_kind m, int64_t u0, int64_t u1) {     \
    if (d.inner == 1) {                                                                                                \
      for (int64_t o = u0; o < u1; o++)                                                                                \
        y[o] =                                                                                                         \
            c == COMB_SUM ? sum_contig_##SFX(x + o * d.red, d.red, m) : fold_contig_##SFX(x + o * d.red, d.red, c, m); \
      return;                                                                                                          \
    }                                                                                                                  \
    const int64_t nb = col_blocks(d);                                                                                  \
    for (int64_t u = u0; u < u1; u++) {                                                                                \
      const int64_t o = u / nb, i0 = (u % nb) * COL_LANES, w = min_i64(COL_LANES, d.inner - i0);                       \
      const T *xo = x + o * d.red * d.inner + i0;                                                                      \
      T *yo = y + o * d.inner + i0;                                                                                    \
      if (c == COMB_SUM)                                                                                               \
        sum_cols_##SFX(xo, d.inner, d.red, (int)w, yo, m);                                                             \
      else                                                                                                             \
        FOLD_COLS_##SFX(xo, d.red, d.inner, w, yo, c, m);                                                              \
    }                                                                                                                  \
  }
#define FOLD_COLS_f32 fold_cols_f32_v
#define FOLD_COLS_f64 fold_cols_f64
DEFINE_STAGE(float, f32)
DEFINE_STAGE(double, f64)

/* ---- a full-row sum over the pool: the pairwise tree's top in parallel -------------------------- */
/* Subtrees of at most TREE_BLOCK elements are summed in parallel (each exactly as the 1-thread
 * recursion sums it), then added back up the tree in its order. */
#define TREE_BLOCK 32768
typedef struct {
  const void *x;
  int f64;
  map_kind m;
  int64_t nleaves;
  int64_t *off, *len; /* the leaves, in order */
  double *res;        /* their sums (float sums widened exactly) */
} tree_job;

/* The split of sum_contig_f32 / sum_contig_f64 at a node of n > SUM_LEAF elements. */
static int64_t tree_half(int64_t n, int f64) { return (n / 2) & ~(int64_t)(f64 ? 3 : 15); }

static void tree_leaves(tree_job *t, int64_t off, int64_t n) {
  if (n <= TREE_BLOCK) {
    if (t->off) {
      t->off[t->nleaves] = off;
      t->len[t->nleaves] = n;
    }
    t->nleaves++;
    return;
  }
  const int64_t half = tree_half(n, t->f64);
  tree_leaves(t, off, half);
  tree_leaves(t, off + half, n - half);
}

static void tree_chunk(void *ctx, int64_t l0, int64_t l1) {
  tree_job *t = (tree_job *)ctx;
  for (int64_t l = l0; l < l1; l++)
    t->res[l] = t->f64 ? sum_contig_f64((const double *)t->x + t->off[l], t->len[l], t->m)
                       : (double)sum_contig_f32((const float *)t->x + t->off[l], t->len[l], t->m);
}

#define DEFINE_TREE_COMBINE(T, SFX)                                          \
  static T tree_combine_##SFX(const tree_job *t, int64_t n, int64_t *next) { \
    if (n <= TREE_BLOCK) return (T)t->res[(*next)++];                        \
    const int64_t half = tree_half(n, t->f64);                               \
    const T left = tree_combine_##SFX(t, half, next);                        \
    return left + tree_combine_##SFX(t, n - half, next);                     \
  }
DEFINE_TREE_COMBINE(float, f32)
DEFINE_TREE_COMBINE(double, f64)

/* sum of map(x[i]) for i < n on the pool; 0 when it stays on one thread (the caller then sums). */
static int tree_sum(const void *x, int64_t n, int f64, map_kind m, void *result) {
  if (n <= TREE_BLOCK || mxw_par_chunks((double)n * (f64 ? 2.0 : 1.0)) <= 1) return 0;
  tree_job t = {x, f64, m, 0, NULL, NULL, NULL};
  tree_leaves(&t, 0, n);
  const int64_t count = t.nleaves;
  char *mem = (char *)malloc((size_t)count * (2 * sizeof(int64_t) + sizeof(double)));
  if (!mem) return 0;
  t.off = (int64_t *)mem;
  t.len = t.off + count;
  t.res = (double *)(t.len + count);
  t.nleaves = 0;
  tree_leaves(&t, 0, n);
  mxw_parallel_run(count, 1, (double)TREE_BLOCK * (f64 ? 2.0 : 1.0), tree_chunk, &t);
  int64_t next = 0;
  if (f64)
    *(double *)result = tree_combine_f64(&t, n, &next);
  else
    *(float *)result = tree_combine_f32(&t, n, &next);
  free(mem);
  return 1;
}

typedef struct {
  const void *x;
  void *y;
  stage_dims d;
  comb_kind c;
  map_kind m;
  int f64;
} stage_job;

static void stage_chunk(void *ctx, int64_t u0, int64_t u1) {
  const stage_job *j = (const stage_job *)ctx;
  if (j->f64)
    stage_units_f64((const double *)j->x, (double *)j->y, j->d, j->c, j->m, u0, u1);
  else
    stage_units_f32((const float *)j->x, (float *)j->y, j->d, j->c, j->m, u0, u1);
}

/* One stage, split over its units when large. */
static void stage_run(const void *x, void *y, stage_dims d, comb_kind c, map_kind m, int f64) {
  if (d.outer == 1 && d.inner == 1 && c == COMB_SUM && tree_sum(x, d.red, f64, m, y)) return;
  stage_job j = {x, y, d, c, m, f64};
  const int64_t units = stage_units(d);
  const double per_unit = (double)d.red * (double)(d.inner == 1 ? 1 : min_i64(COL_LANES, d.inner)) * (f64 ? 2.0 : 1.0);
  mxw_parallel_run(units, 1, per_unit, stage_chunk, &j);
}

/* ==== integer kernels: int64 accumulation with wrap-around ================================== */
static inline int64_t load_i64(const void *p, int dtype, int64_t i) {
  switch (dtype) {
    case MXW_INT64: return ((const int64_t *)p)[i];
    case MXW_UINT64: return (int64_t)((const uint64_t *)p)[i]; /* the bits; see `flip` */
    case MXW_INT32: return ((const int32_t *)p)[i];
    case MXW_UINT32: return ((const uint32_t *)p)[i];
    case MXW_INT16: return ((const int16_t *)p)[i];
    case MXW_UINT16: return ((const uint16_t *)p)[i];
    case MXW_INT8: return ((const int8_t *)p)[i];
    case MXW_UINT8:
    case MXW_BOOL: return ((const uint8_t *)p)[i];
    default: return 0;
  }
}

/* Stores v modulo the width of the integer dtype (bool: v != 0). */
static inline void store_i64_wrap(void *p, int dtype, int64_t i, int64_t v) {
  uint64_t u = (uint64_t)v;
  switch (dtype) {
    case MXW_INT64: ((int64_t *)p)[i] = v; break;
    case MXW_UINT64: ((uint64_t *)p)[i] = u; break;
    case MXW_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)u; break;
    case MXW_UINT32: ((uint32_t *)p)[i] = (uint32_t)u; break;
    case MXW_INT16: ((int16_t *)p)[i] = (int16_t)(uint16_t)u; break;
    case MXW_UINT16: ((uint16_t *)p)[i] = (uint16_t)u; break;
    case MXW_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)u; break;
    case MXW_UINT8: ((uint8_t *)p)[i] = (uint8_t)u; break;
    case MXW_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
  }
}

static inline int64_t comb_i64(int64_t acc, int64_t v, comb_kind c) {
  switch (c) {
    case COMB_SUM: return (int64_t)((uint64_t)acc + (uint64_t)v);
    case COMB_PROD: return (int64_t)((uint64_t)acc * (uint64_t)v);
    case COMB_MAX: return v > acc ? v : acc;
    default: return v < acc ? v : acc;
  }
}

/* One stage reading elements of `dtype`; `flip` toggles the sign bit as elements are read, which
 * maps uint64 order onto int64 order for max/min (flipped back at the end). Outputs [k0, k1) of
 * the outer * inner ones (exact integer arithmetic: any split gives the same results). */
typedef struct {
  const void *x;
  int dtype;
  uint64_t flip;
  int64_t *y;
  stage_dims d;
  comb_kind c;
} stage_i64_job;

static void stage_i64_chunk(void *ctx, int64_t k0, int64_t k1) {
  const stage_i64_job *j = (const stage_i64_job *)ctx;
  const stage_dims d = j->d;
  for (int64_t k = k0; k < k1; k++) {
    const int64_t o = k / d.inner, i = k % d.inner, base = o * d.red * d.inner + i;
    int64_t acc = (int64_t)((uint64_t)load_i64(j->x, j->dtype, base) ^ j->flip);
    for (int64_t r = 1; r < d.red; r++)
      acc = comb_i64(acc, (int64_t)((uint64_t)load_i64(j->x, j->dtype, base + r * d.inner) ^ j->flip), j->c);
    j->y[k] = acc;
  }
}

static void stage_i64(const void *x, int dtype, uint64_t flip, int64_t *y, stage_dims d, comb_kind c) {
  stage_i64_job j = {x, dtype, flip, y, d, c};
  mxw_parallel_run(d.outer * d.inner, 1, 2.0 * (double)d.red, stage_i64_chunk, &j);
}

/* ==== the reduction driver =================================================================== */

/* An empty input: sum-like results are 0, products 1, mean 0/0 (NaN; 0 for integer types). */
static void fill_empty(mxw_tensor *out, reduce_kind k) {
  double v = k.comb == COMB_PROD ? 1.0 : 0.0;
  if (k.post == POST_MEAN && mxw_dtype_is_float(out->dtype)) v = NAN;
  int64_t n = mxw_tensor_size(out);
  for (int64_t i = 0; i < n; i++) mxw_store_f64(out->data, out->dtype, i, v);
}

static int reduce_integer(const mxw_tensor *in, mxw_tensor *out, const stage_dims *st, int ns, reduce_kind k) {
  int64_t n_in = mxw_tensor_size(in), n_out = mxw_tensor_size(out);
  uint64_t flip = (in->dtype == MXW_UINT64 && (k.comb == COMB_MAX || k.comb == COMB_MIN)) ? (uint64_t)1 << 63 : 0;
  const void *cur = in->data;
  int cur_dtype = in->dtype;
  for (int s = 0; s < ns; s++) {
    int64_t *dst = (int64_t *)mxw_scratch(s == ns - 1 ? 3 : 1 + (s & 1), (size_t)(st[s].outer * st[s].inner) * 8);
    if (!dst) return -1;
    stage_i64(cur, cur_dtype, s == 0 ? flip : 0, dst, st[s], k.comb);
    cur = dst;
    cur_dtype = MXW_INT64;
  }
  const int64_t *res = (const int64_t *)cur;
  for (int64_t i = 0; i < n_out; i++) store_i64_wrap(out->data, out->dtype, i, (int64_t)((uint64_t)res[i] ^ flip));
  if (k.post == POST_MEAN) { /* in the output type, after the wrap, as `out /= count` */
    int64_t count = n_in / n_out;
    for (int64_t i = 0; i < n_out; i++) {
      int64_t v = load_i64(out->data, out->dtype, i);
      if (out->dtype == MXW_UINT64)
        v = (int64_t)((uint64_t)v / (uint64_t)count);
      else
        v /= count;
      store_i64_wrap(out->data, out->dtype, i, v);
    }
  }
  return 0;
}

static int reduce_forward(const mxw_op_call *c, reduce_kind k, const mxw_tuple *axis, int exclude) {
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t n_in = mxw_tensor_size(in), n_out = mxw_tensor_size(out);
  if (n_out == 0) return 0;
  if (n_in == 0) {
    fill_empty(out, k);
    return 0;
  }
  uint8_t reduced[MXW_MAX_NDIM];
  MXW_TRY(resolve_axes(axis, exclude, &in->shape, reduced));
  stage_dims st[MXW_MAX_NDIM];
  int ns = plan_stages(&in->shape, reduced, st);

  int is_float = mxw_dtype_is_float(in->dtype);
  if (!is_float && k.map != MAP_ABS && k.map != MAP_SQUARE) return reduce_integer(in, out, st, ns, k);

  /* Float domains: float32 (float16/bfloat16 are widened to it) or double (float64, and norm
   * of integer data). */
  int acc = (in->dtype == MXW_FLOAT64 || !is_float) ? MXW_FLOAT64 : MXW_FLOAT32;
  size_t es = acc == MXW_FLOAT64 ? 8 : 4;
  const void *src = in->data;
  if (in->dtype != acc) {
    void *wide = mxw_scratch(0, (size_t)n_in * es);
    if (!wide) return -1;
    mxw_parallel_convert(in->data, in->dtype, wide, acc, n_in);
    src = wide;
  }
  void *res = out->data;
  if (out->dtype != acc && !(res = mxw_scratch(3, (size_t)n_out * es))) return -1;

  const void *cur = src;
  for (int s = 0; s < ns; s++) {
    void *dst = res;
    if (s < ns - 1 && !(dst = mxw_scratch(1 + (s & 1), (size_t)(st[s].outer * st[s].inner) * es))) return -1;
    map_kind m = s == 0 ? k.map : MAP_ID;
    stage_run(cur, dst, st[s], k.comb, m, acc == MXW_FLOAT64);
    cur = dst;
  }

  if (k.post != POST_NONE) {
    int64_t count = n_in / n_out;
    for (int64_t i = 0; i < n_out; i++) {
      if (acc == MXW_FLOAT32) {
        float *r = (float *)res;
        r[i] = k.post == POST_MEAN ? r[i] / (float)count : sqrtf(r[i]);
      } else {
        double *r = (double *)res;
        r[i] = k.post == POST_MEAN ? r[i] / (double)count : sqrt(r[i]);
      }
    }
  }
  if (res != out->data) mxw_convert(res, acc, out->data, out->dtype, n_out);
  return 0;
}

/* ==== sum, mean, max, min, prod, nansum, nanprod ============================================= */
typedef struct {
  mxw_tuple axis;
  int keepdims;
  int exclude;
} ReduceAxesParam;

static const mxw_attr_spec k_reduce_attrs[] = {
    MXW_A_OPT_SHAPE("axis", ReduceAxesParam, axis, "None",
                    "axes to reduce; None or () reduces all, negative axes count from the end"),
    MXW_A_BOOL("keepdims", ReduceAxesParam, keepdims, "False", "keep reduced axes as size-1 dims"),
    MXW_A_BOOL("exclude", ReduceAxesParam, exclude, "False", "reduce the axes NOT listed in axis"),
};

static int infer_reduce(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ReduceAxesParam *p = (const ReduceAxesParam *)param;
  return infer_reduce_shape(&p->axis, p->exclude, p->keepdims, &in[0], &out[0]);
}

/* max and min have no identity: MXNet rejects an empty input. */
static int infer_reduce_minmax(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  char buf[128];
  if (mxw_shape_known(&in[0]) && mxw_shape_size(&in[0]) == 0)
    return mxw_fail("cannot reduce an empty array (data shape %s): the input size must be > 0",
                    mxw_shape_str(&in[0], buf, sizeof buf));
  return infer_reduce(param, nin, in, nout, out);
}

/* ==== gradients of the reductions ==============================================================
 * MXNet's FGradients (broadcast_reduce_*_value.cc): sum and mean broadcast the output's gradient
 * back over the reduced axes (ElemwiseGradUseNone; mean divides by the reduced count), the others
 * read the input and the output (ReduceAxesBackwardUseInOut): max/min pass it where x == y (every
 * tied element gets it), prod multiplies by y / x, nansum/nanprod give NaN inputs 0, norm multiplies
 * by x / y (ord 2) or sign(x) (ord 1). One kernel runs them all: `_backward_<op>(ograd, data[, out])`
 * walks the input with the flat index of its output element (the kept dims' strides, 0 along the
 * reduced ones), writing each input element's gradient once. */
typedef enum { BW_SUM, BW_MEAN, BW_EQ, BW_PROD, BW_NANSUM, BW_NANPROD, BW_NORM1, BW_NORM2 } backward_kind;

/* The input dims merged into blocks as in plan_stages, each with its output stride (0 when
 * reduced). At least one block. */
typedef struct {
  int nb;
  int64_t size[MXW_MAX_NDIM], ostride[MXW_MAX_NDIM];
} bcast_map;

static void make_bcast_map(const mxw_shape *s, const uint8_t *reduced, bcast_map *m) {
  uint8_t kind[MXW_MAX_NDIM];
  m->nb = 0;
  for (int i = 0; i < s->ndim; i++) {
    if (s->dims[i] == 1) continue;
    if (m->nb > 0 && kind[m->nb - 1] == reduced[i]) {
      m->size[m->nb - 1] *= s->dims[i];
    } else {
      m->size[m->nb] = s->dims[i];
      kind[m->nb] = reduced[i];
      m->nb++;
    }
  }
  if (m->nb == 0) {
    m->nb = 1;
    m->size[0] = 1;
    kind[0] = 1;
  }
  int64_t st = 1;
  for (int b = m->nb - 1; b >= 0; b--) {
    m->ostride[b] = kind[b] ? 0 : st;
    if (!kind[b]) st *= m->size[b];
  }
}

/* Calls BODY(i, o) for every input element i of rows [r0, r1) (rows of the last block's size,
 * in order) with its output element o. */
#define BCAST_FOR(m, r0, r1, ...)                                                           \
  do {                                                                                      \
    const int last_ = (m)->nb - 1;                                                          \
    const int64_t inner_ = (m)->size[last_], istr_ = (m)->ostride[last_];                   \
    int64_t idx_[MXW_MAX_NDIM] = {0}, o_ = 0, q_ = (r0);                                    \
    for (int b_ = last_ - 1; b_ >= 0; b_--) { /* row r0 -> the outer blocks' multi-index */ \
      idx_[b_] = q_ % (m)->size[b_];                                                        \
      q_ /= (m)->size[b_];                                                                  \
      o_ += idx_[b_] * (m)->ostride[b_];                                                    \
    }                                                                                       \
    for (int64_t r_ = (r0); r_ < (r1); r_++) {                                              \
      const int64_t i0_ = r_ * inner_;                                                      \
      if (istr_) {                                                                          \
        for (int64_t j_ = 0; j_ < inner_; j_++) {                                           \
          const int64_t i = i0_ + j_, o = o_ + j_;                                          \
          __VA_ARGS__;                                                                      \
        }                                                                                   \
      } else {                                                                              \
        for (int64_t j_ = 0; j_ < inner_; j_++) {                                           \
          const int64_t i = i0_ + j_, o = o_;                                               \
          __VA_ARGS__;                                                                      \
        }                                                                                   \
      }                                                                                     \
      for (int b_ = last_ - 1; b_ >= 0; b_--) {                                             \
        o_ += (m)->ostride[b_];                                                             \
        if (++idx_[b_] < (m)->size[b_]) break;                                              \
        o_ -= (m)->ostride[b_] * (m)->size[b_];                                             \
        idx_[b_] = 0;                                                                       \
      }                                                                                     \
    }                                                                                       \
  } while (0)

#define BACKWARD_VALUE(T, k, x, y, g, count)                         \
  ((k) == BW_SUM       ? (g)                                         \
   : (k) == BW_MEAN    ? (g) / (count)                               \
   : (k) == BW_EQ      ? ((x) == (y) ? (g) : (T)0)                   \
   : (k) == BW_PROD    ? (g) * ((y) / (x))                           \
   : (k) == BW_NANSUM  ? ((x) != (x) ? (T)0 : (g))                   \
   : (k) == BW_NANPROD ? ((x) != (x) ? (T)0 : (g) * ((y) / (x)))     \
   : (k) == BW_NORM1   ? (g) * (T)((x) > 0 ? 1 : ((x) < 0 ? -1 : 0)) \
                       : (g) * ((x) / (y)))

typedef struct {
  const mxw_tensor *og, *x, *y;
  mxw_tensor *dx;
  backward_kind k;
  bcast_map m;
  int64_t count;
} backward_job;

/* The gradient of the input's rows [r0, r1); each input element is written once. */
static void backward_rows(void *ctx, int64_t r0, int64_t r1) {
  const backward_job *j = (const backward_job *)ctx;
  const mxw_tensor *og = j->og, *x = j->x, *y = j->y;
  mxw_tensor *dx = j->dx;
  const bcast_map *m = &j->m;
  const backward_kind k = j->k;
  const int dt = dx->dtype;
  const int same = og->dtype == dt && x->dtype == dt && (!y || y->dtype == dt);
  if (same && dt == MXW_FLOAT32) {
    const float *g = (const float *)og->data, *xs = (const float *)x->data;
    const float *ys = y ? (const float *)y->data : NULL;
    float *d = (float *)dx->data, count = (float)j->count;
    switch (k) {
      case BW_SUM: BCAST_FOR(m, r0, r1, d[i] = g[o]); break;
      case BW_MEAN: BCAST_FOR(m, r0, r1, d[i] = g[o] / count); break;
      default: BCAST_FOR(m, r0, r1, d[i] = BACKWARD_VALUE(float, k, xs[i], ys ? ys[o] : 0.f, g[o], count)); break;
    }
    return;
  }
  if (same && dt == MXW_FLOAT64) {
    const double *g = (const double *)og->data, *xs = (const double *)x->data;
    const double *ys = y ? (const double *)y->data : NULL;
    double *d = (double *)dx->data, count = (double)j->count;
    BCAST_FOR(m, r0, r1, d[i] = BACKWARD_VALUE(double, k, xs[i], ys ? ys[o] : 0.0, g[o], count));
    return;
  }
  /* other dtype combinations (norm's out_dtype, float16, integers) through double */
  double count = (double)j->count;
  BCAST_FOR(m, r0, r1, {
    double xv = mxw_load_f64(x->data, x->dtype, i), yv = y ? mxw_load_f64(y->data, y->dtype, o) : 0.0;
    double gv = mxw_load_f64(og->data, og->dtype, o);
    mxw_store_f64(dx->data, dt, i, BACKWARD_VALUE(double, k, xv, yv, gv, count));
  });
}

static int reduce_backward(const mxw_op_call *c, backward_kind k, const mxw_tuple *axis, int exclude) {
  const mxw_tensor *og = &c->inputs[0], *x = &c->inputs[1], *y = c->num_inputs > 2 ? &c->inputs[2] : NULL;
  mxw_tensor *dx = &c->outputs[0];
  int64_t n = mxw_tensor_size(dx), n_out = mxw_tensor_size(og);
  if (n == 0) return 0;
  uint8_t reduced[MXW_MAX_NDIM];
  MXW_TRY(resolve_axes(axis, exclude, &x->shape, reduced));
  backward_job j = {og, x, y, dx, k, {0}, n_out ? n / n_out : 1};
  make_bcast_map(&x->shape, reduced, &j.m);
  const int64_t inner = j.m.size[j.m.nb - 1];
  const int same_f32 = dx->dtype == MXW_FLOAT32 && og->dtype == MXW_FLOAT32 && x->dtype == MXW_FLOAT32;
  const double cost = (k == BW_SUM || k == BW_MEAN ? 1.0 : 2.0) * (same_f32 ? 1.0 : 4.0);
  mxw_parallel_run(n / inner, 1, cost * (double)inner, backward_rows, &j);
  return 0;
}

/* dx has data's shape and dtype (input 1). */
static int infer_reduce_backward(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  return mxw_shape_assign(&out[0], &in[1], "output");
}
static int infer_type_reduce_backward(const void *param, int nin, int *in, int nout, int *out) {
  if (in[1] >= 0) {
    MXW_CHECK(out[0] < 0 || out[0] == in[1], "output dtype %s does not match the data's %s", mxw_dtype_name(out[0]),
              mxw_dtype_name(in[1]));
    out[0] = in[1];
  }
  return 0;
}
static const char *const k_backward_inputs[] = {"ograd", "data", "output", NULL};

/* The gradient node: _backward_<op>(ograd, data) or (ograd, data, output). */
static int grad_reduce_with(mxw_grad_ctx *g, const char *op, int use_out) {
  mxw_gid dx;
  if (use_out)
    MXW_TRY(mxw_grad_op_fwd(g, op, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_out(g, 0)), &dx, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, op, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}

/* BWGRAD: the backward op's own gradient (second order), or .gradient = NULL */
#define REDUCE_OP(NAME, ALIAS_LIST, COMB, MAP, POST, INFER, DOC, BWKIND, USE_OUT, BWGRAD)                            \
  static int fwd_##NAME(const mxw_op_call *c) {                                                                      \
    const ReduceAxesParam *p = (const ReduceAxesParam *)c->param;                                                    \
    return reduce_forward(c, (reduce_kind){COMB, MAP, POST}, &p->axis, p->exclude);                                  \
  }                                                                                                                  \
  static int fwd_backward_##NAME(const mxw_op_call *c) {                                                             \
    const ReduceAxesParam *p = (const ReduceAxesParam *)c->param;                                                    \
    return reduce_backward(c, BWKIND, &p->axis, p->exclude);                                                         \
  }                                                                                                                  \
  static int grad_##NAME(mxw_grad_ctx *g) { return grad_reduce_with(g, "_backward_" #NAME, USE_OUT); }               \
  static const mxw_op_def op_##NAME = {.name = #NAME,                                                                \
                                       .aliases = ALIAS_LIST,                                                        \
                                       .doc = MXW_DOC(DOC),                                                          \
                                       .attrs = k_reduce_attrs,                                                      \
                                       .num_attrs = 3,                                                               \
                                       .param_size = sizeof(ReduceAxesParam),                                        \
                                       .num_inputs = 1,                                                              \
                                       .input_names = k_data,                                                        \
                                       .num_outputs = 1,                                                             \
                                       .infer_shape = INFER,                                                         \
                                       .half_as_f32 = 1,                                                             \
                                       .forward = fwd_##NAME,                                                        \
                                       .gradient = grad_##NAME};                                                     \
  static const mxw_op_def op_backward_##NAME = {.name = "_backward_" #NAME,                                          \
                                                .doc = MXW_DOC("the gradient of " #NAME " (ograd, data[, output])"), \
                                                .attrs = k_reduce_attrs,                                             \
                                                .num_attrs = 3,                                                      \
                                                .param_size = sizeof(ReduceAxesParam),                               \
                                                .num_inputs = (USE_OUT) ? 3 : 2,                                     \
                                                .input_names = k_backward_inputs,                                    \
                                                .num_outputs = 1,                                                    \
                                                .infer_shape = infer_reduce_backward,                                \
                                                .infer_type = infer_type_reduce_backward,                            \
                                                .half_as_f32 = 1,                                                    \
                                                .forward = fwd_backward_##NAME,                                      \
                                                BWGRAD};

/* Second order (autograd.grad with create_graph) of the linear ones: _backward_sum and
 * _backward_mean broadcast ograd back over the reduced axes (mean divides by the count), so their
 * gradient is the reduction itself of the incoming gradient, with the same axes; zero for data.
 * max, min, prod and nansum: below; nanprod has none, as in MXNet 1.9.1. */
static int grad2_reduce(mxw_grad_ctx *g, const char *reduction) {
  mxw_gid d;
  MXW_TRY(mxw_grad_op_fwd(g, reduction, MXW_GIDS(mxw_grad_ograd(g, 0)), &d, 1));
  MXW_TRY(mxw_grad_set(g, 0, d));
  return mxw_grad_set(g, 1, mxw_grad_zeros_like(g, mxw_grad_in(g, 1)));
}
static int grad2_sum(mxw_grad_ctx *g) { return grad2_reduce(g, "sum"); }

/* _backward_<op>(ograd, x[, y]) = ograd broadcast * u(x, y) for max and min (u = (x == y)), nansum
 * (u = x is a number) and prod (u = y / x), u = the same op on ones: linear in ograd, so its gradient
 * for an incoming h is S = sum(h * u) over the reduced axes (the op's own axes, keepdims and
 * exclude). u is piecewise constant but for prod, where d/dx = -h * (ograd u) / x and d/dy =
 * sum(h * ograd / x) = sum(h * the op on (ograd, x, ones)) (second order). */
static int grad2_routed(mxw_grad_ctx *g) {
  const int prod = strcmp(mxw_grad_op_name(g), "_backward_prod") == 0, nin = mxw_grad_num_inputs(g);
  const mxw_gid G = mxw_grad_in(g, 0), x = mxw_grad_in(g, 1), y = nin > 2 ? mxw_grad_in(g, 2) : -1;
  const mxw_gid h = mxw_grad_ograd(g, 0), ones = mxw_grad_op(g, "ones_like", NULL, MXW_GIDS(G));
  mxw_gid u = -1, d = -1;
  MXW_TRY(mxw_grad_op_fwd(g, mxw_grad_op_name(g), (const mxw_gid[]){ones, x, y}, nin, &u, 1));
  MXW_TRY(mxw_grad_op_fwd(g, "sum", MXW_GIDS(mxw_grad_mul(g, h, u)), &d, 1));
  MXW_TRY(mxw_grad_set(g, 0, d));
  if (!prod) return 0;
  mxw_gid gu = -1, gx = -1, dy = -1;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_prod", MXW_GIDS(G, x, y), &gu, 1));
  const mxw_gid t = mxw_grad_op(g, "elemwise_div", NULL, MXW_GIDS(mxw_grad_mul(g, h, gu), x));
  MXW_TRY(mxw_grad_set(g, 1, mxw_grad_op(g, "negative", NULL, MXW_GIDS(t))));
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_prod", MXW_GIDS(G, x, mxw_grad_op(g, "ones_like", NULL, MXW_GIDS(y))), &gx, 1));
  MXW_TRY(mxw_grad_op_fwd(g, "sum", MXW_GIDS(mxw_grad_mul(g, h, gx)), &dy, 1));
  return mxw_grad_set(g, 2, dy);
}
static int grad2_mean(mxw_grad_ctx *g) { return grad2_reduce(g, "mean"); }

REDUCE_OP(sum, ALIASES("sum_axis"), COMB_SUM, MAP_ID, POST_NONE, infer_reduce, "sum over the given axes", BW_SUM, 0,
          .gradient = grad2_sum)
REDUCE_OP(mean, NULL, COMB_SUM, MAP_ID, POST_MEAN, infer_reduce, "mean over the given axes", BW_MEAN, 0,
          .gradient = grad2_mean)
REDUCE_OP(max, ALIASES("max_axis"), COMB_MAX, MAP_ID, POST_NONE, infer_reduce_minmax,
          "maximum over the given axes (NaN propagates)", BW_EQ, 1, .gradient = grad2_routed)
REDUCE_OP(min, ALIASES("min_axis"), COMB_MIN, MAP_ID, POST_NONE, infer_reduce_minmax,
          "minimum over the given axes (NaN propagates)", BW_EQ, 1, .gradient = grad2_routed)
REDUCE_OP(prod, NULL, COMB_PROD, MAP_ID, POST_NONE, infer_reduce, "product over the given axes", BW_PROD, 1,
          .gradient = grad2_routed)
REDUCE_OP(nansum, NULL, COMB_SUM, MAP_NAN_TO_0, POST_NONE, infer_reduce, "sum over the given axes, NaN counted as 0",
          BW_NANSUM, 0, .gradient = grad2_routed)
REDUCE_OP(nanprod, NULL, COMB_PROD, MAP_NAN_TO_1, POST_NONE, infer_reduce,
          "product over the given axes, NaN counted as 1", BW_NANPROD, 1, .gradient = NULL)

/* ==== norm ==================================================================================== */
typedef struct {
  int64_t ord;
  mxw_tuple axis;
  mxw_opt_int out_dtype;
  int keepdims;
} NormParam;

/* MXNet's enum order, and the dtype flag of each entry. */
static const char *const k_norm_dtype_names[] = {"float16", "float32", "float64", "int64", "int32", "int8", NULL};
static const int k_norm_dtypes[] = {MXW_FLOAT16, MXW_FLOAT32, MXW_FLOAT64, MXW_INT64, MXW_INT32, MXW_INT8};

static const mxw_attr_spec k_norm_attrs[] = {
    MXW_A_INT("ord", NormParam, ord, "2", "1: sum of |x|; 2: sqrt of the sum of squares (Frobenius over 2 axes)"),
    MXW_A_OPT_SHAPE("axis", NormParam, axis, "None", "axes to reduce; None or () reduces all"),
    MXW_A_OPT_ENUM("out_dtype", NormParam, out_dtype, "None", k_norm_dtype_names, "output dtype; None = input dtype"),
    MXW_A_BOOL("keepdims", NormParam, keepdims, "False", "keep reduced axes as size-1 dims"),
};

static int validate_norm(void *param) {
  const NormParam *p = (const NormParam *)param;
  MXW_CHECK(p->ord == 1 || p->ord == 2, "ord=%lld is not supported: norm supports ord=1 and ord=2", (long long)p->ord);
  return 0;
}

static int infer_norm(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const NormParam *p = (const NormParam *)param;
  return infer_reduce_shape(&p->axis, 0, p->keepdims, &in[0], &out[0]);
}

static int infer_norm_type(const void *param, int nin, int *in, int nout, int *out) {
  const NormParam *p = (const NormParam *)param;
  if (!p->out_dtype.has) return mxw_infer_type_same(param, nin, in, nout, out);
  int dt = k_norm_dtypes[p->out_dtype.v];
  MXW_CHECK(out[0] < 0 || out[0] == dt, "output dtype %s does not match out_dtype=%s", mxw_dtype_name(out[0]),
            mxw_dtype_name(dt));
  out[0] = dt;
  return 0;
}

static int fwd_norm(const mxw_op_call *c) {
  const NormParam *p = (const NormParam *)c->param;
  reduce_kind k =
      p->ord == 1 ? (reduce_kind){COMB_SUM, MAP_ABS, POST_NONE} : (reduce_kind){COMB_SUM, MAP_SQUARE, POST_SQRT};
  return reduce_forward(c, k, &p->axis, 0);
}

static int fwd_backward_norm(const mxw_op_call *c) {
  const NormParam *p = (const NormParam *)c->param;
  return reduce_backward(c, p->ord == 1 ? BW_NORM1 : BW_NORM2, &p->axis, 0);
}
static int grad_norm(mxw_grad_ctx *g) { return grad_reduce_with(g, "_backward_norm", 1); }

/* Second order. _backward_norm(G, x, y) = G broadcast * u with u = x / y (ord 2, 0 where y = 0) or
 * sign(x) (ord 1), u = the same op on ones; with h the incoming gradient and S = sum(h * u) over
 * the norm's axes: d/dG = S; for ord 2 also d/dx = _backward_norm(G, h, y) = G h / y and d/dy =
 * -S G / y (ord 1: u is piecewise constant). */
static int grad2_norm(mxw_grad_ctx *g) {
  const NormParam *p = (const NormParam *)mxw_grad_param(g);
  const mxw_gid G = mxw_grad_in(g, 0), x = mxw_grad_in(g, 1), y = mxw_grad_in(g, 2), h = mxw_grad_ograd(g, 0);
  char axis[MXW_MAX_TUPLE * 24 + 8];
  mxw_tuple_str(&p->axis, axis, sizeof axis);
  mxw_gid u = -1, d = -1;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_norm", MXW_GIDS(mxw_grad_op(g, "ones_like", NULL, MXW_GIDS(G)), x, y), &u, 1));
  const char *const *kv = p->axis.ndim > 0 ? MXW_KV("axis", axis, "keepdims", p->keepdims ? "True" : "False")
                                           : MXW_KV("keepdims", p->keepdims ? "True" : "False");
  const mxw_gid S = mxw_grad_op(g, "sum", kv, MXW_GIDS(mxw_grad_mul(g, h, u)));
  MXW_TRY(mxw_grad_set(g, 0, S));
  if (p->ord == 1) return 0;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_norm", MXW_GIDS(G, h, y), &d, 1));
  MXW_TRY(mxw_grad_set(g, 1, d));
  const mxw_gid t = mxw_grad_op(g, "elemwise_div", NULL, MXW_GIDS(mxw_grad_mul(g, S, G), y));
  return mxw_grad_set(g, 2, mxw_grad_op(g, "negative", NULL, MXW_GIDS(t)));
}

static const mxw_op_def op_norm = {.name = "norm",
                                   .doc = MXW_DOC("L1 or L2 norm over the given axes (all by default)"),
                                   .attrs = k_norm_attrs,
                                   .num_attrs = 4,
                                   .param_size = sizeof(NormParam),
                                   .validate = validate_norm,
                                   .num_inputs = 1,
                                   .input_names = k_data,
                                   .num_outputs = 1,
                                   .infer_shape = infer_norm,
                                   .infer_type = infer_norm_type,
                                   .half_as_f32 = 1,
                                   .forward = fwd_norm,
                                   .gradient = grad_norm};
static const mxw_op_def op_backward_norm = {
    .name = "_backward_norm",
    .doc = MXW_DOC("the gradient of norm: ograd * x / y (ord 2) or ograd * sign(x) (ord 1)"),
    .attrs = k_norm_attrs,
    .num_attrs = 4,
    .param_size = sizeof(NormParam),
    .num_inputs = 3,
    .input_names = k_backward_inputs,
    .num_outputs = 1,
    .infer_shape = infer_reduce_backward,
    .infer_type = infer_type_reduce_backward,
    .half_as_f32 = 1,
    .forward = fwd_backward_norm,
    .gradient = grad2_norm};

/* ==== argmax, argmin ========================================================================== */
typedef struct {
  mxw_opt_int axis;
  int keepdims;
} ReduceAxisParam;

static const mxw_attr_spec k_reduce_axis_attrs[] = {
    MXW_A_OPT_INT("axis", ReduceAxisParam, axis, "None", "the axis; None = index into the flattened array"),
    MXW_A_BOOL("keepdims", ReduceAxisParam, keepdims, "False", "keep the reduced axis as a size-1 dim"),
};

/* The (outer, n, inner) view of one axis (axis None: the flattened array), checking the axis. */
static int axis_view(const mxw_opt_int *axis, const mxw_shape *s, int64_t *outer, int64_t *n, int64_t *inner, int *ax) {
  *outer = 1;
  *inner = 1;
  *ax = -1;
  if (!axis->has) {
    *n = mxw_shape_size(s);
    return 0;
  }
  char buf[128];
  int64_t a = axis->v < 0 ? axis->v + s->ndim : axis->v;
  if (a < 0 || a >= s->ndim)
    return mxw_fail("axis %lld is out of range for data of shape %s (%d dimension%s)", (long long)axis->v,
                    mxw_shape_str(s, buf, sizeof buf), s->ndim, s->ndim == 1 ? "" : "s");
  *ax = (int)a;
  for (int i = 0; i < a; i++) *outer *= s->dims[i];
  *n = s->dims[a];
  for (int i = (int)a + 1; i < s->ndim; i++) *inner *= s->dims[i];
  return 0;
}

/* MXNet's ReduceAxisShapeImpl: axis None or 1-D data -> (1,) (all ones with keepdims);
 * otherwise the axis removed, or set to 1 with keepdims. */
static int reduce_axis_shape(const mxw_opt_int *axis, int keepdims, const mxw_shape *in, mxw_shape *o) {
  int64_t outer, n, inner;
  int ax;
  MXW_TRY(axis_view(axis, in, &outer, &n, &inner, &ax));
  memset(o, 0, sizeof *o);
  if (ax < 0 || in->ndim == 1) {
    o->ndim = keepdims ? in->ndim : 1;
    for (int i = 0; i < o->ndim; i++) o->dims[i] = 1;
    return 0;
  }
  for (int i = 0; i < in->ndim; i++) {
    if (i != ax)
      o->dims[o->ndim++] = in->dims[i];
    else if (keepdims)
      o->dims[o->ndim++] = 1;
  }
  return 0;
}

/* An empty reduced axis has no index to give (unless there is nothing to output). */
static int check_nonempty_axis(const mxw_opt_int *axis, const mxw_shape *in, const char *what) {
  int64_t outer, n, inner;
  int ax;
  MXW_TRY(axis_view(axis, in, &outer, &n, &inner, &ax));
  char buf[128];
  if (mxw_shape_known(in) && n == 0 && outer * inner > 0)
    return mxw_fail("cannot %s along an empty axis (data shape %s)", what, mxw_shape_str(in, buf, sizeof buf));
  return 0;
}

static int infer_argreduce(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ReduceAxisParam *p = (const ReduceAxisParam *)param;
  if (in[0].ndim < 0) return 0;
  MXW_TRY(check_nonempty_axis(&p->axis, &in[0], "take the arg-max/min"));
  mxw_shape o;
  MXW_TRY(reduce_axis_shape(&p->axis, p->keepdims, &in[0], &o));
  return mxw_shape_assign(&out[0], &o, "output");
}

static inline int is_nan_d(double v) { return v != v; }

/* First index of the max (min) of each (outer, inner) line; a NaN counts as the extreme (its
 * first occurrence wins), as numpy. Indices are stored in the output (= input) dtype. */
#define ARG_LOOP(T, LOAD)                                                 \
  for (int64_t o = o0; o < o1; o++) {                                     \
    for (int64_t i = 0; i < inner; i++) {                                 \
      int64_t base = o * n * inner + i, best_j = 0;                       \
      T best = LOAD(base);                                                \
      for (int64_t j = 1; j < n && !is_nan_d((double)best); j++) {        \
        T v = LOAD(base + j * inner);                                     \
        if ((is_max ? v > best : v < best) || is_nan_d((double)v)) {      \
          best = v;                                                       \
          best_j = j;                                                     \
        }                                                                 \
      }                                                                   \
      mxw_store_f64(out->data, out->dtype, o *inner + i, (double)best_j); \
    }                                                                     \
  }

typedef struct {
  const mxw_tensor *in;
  mxw_tensor *out;
  int64_t n, inner;
  int is_max;
  atomic_int failed;
} arg_job;

/* Lines of the outer slices [o0, o1). */
static int argreduce_range(const arg_job *j, int64_t o0, int64_t o1) {
  const mxw_tensor *in = j->in;
  mxw_tensor *out = j->out;
  const int64_t n = j->n, inner = j->inner;
  const int is_max = j->is_max;
  if (in->dtype == MXW_FLOAT32 && out->dtype == MXW_FLOAT32 && inner >= 4) {
    /* four lines at a time (adjacent inner positions: an argmax over channels, as a segmentation
     * net's output takes), by lane masks: a scalar float select is a branch in V8, which random
     * data mispredicts. The same rule as ARG_LOOP lane by lane, so the same indices. */
    const float *x = (const float *)in->data;
    float *y = (float *)out->data;
    for (int64_t o = o0; o < o1; o++) {
      int64_t i = 0;
      for (; i + 4 <= inner; i += 4) {
        const float *p = x + o * n * inner + i;
        v128_t best = wasm_v128_load(p), bj = wasm_i32x4_splat(0);
        for (int64_t jj = 1; jj < n; jj++) {
          const v128_t v = wasm_v128_load(p + jj * inner);
          const v128_t better = is_max ? wasm_f32x4_gt(v, best) : wasm_f32x4_lt(v, best);
          const v128_t upd = wasm_v128_and(wasm_v128_or(better, wasm_f32x4_ne(v, v)), wasm_f32x4_eq(best, best));
          best = wasm_v128_bitselect(v, best, upd);
          bj = wasm_v128_bitselect(wasm_i32x4_splat((int32_t)jj), bj, upd);
        }
        wasm_v128_store(y + o * inner + i, wasm_f32x4_convert_i32x4(bj));
      }
      for (; i < inner; i++) {
        const float *p = x + o * n * inner + i;
        int64_t best_j = 0;
        float best = p[0];
        for (int64_t jj = 1; jj < n && best == best; jj++) {
          const float v = p[jj * inner];
          if ((is_max ? v > best : v < best) || v != v) {
            best = v;
            best_j = jj;
          }
        }
        y[o * inner + i] = (float)best_j;
      }
    }
    return 0;
  }
  if (in->dtype == MXW_FLOAT16 || in->dtype == MXW_BFLOAT16) {
#define LOAD_GENERIC(k) mxw_load_f64(in->data, in->dtype, (k))
    ARG_LOOP(double, LOAD_GENERIC)
#undef LOAD_GENERIC
    return 0;
  }
#define LOAD_TYPED(k) (x[(k)])
  MXW_REAL_TYPE_SWITCH(in->dtype, T, {
    const T *x = (const T *)in->data;
    ARG_LOOP(T, LOAD_TYPED)
  })
#undef LOAD_TYPED
  return 0;
}

static void argreduce_chunk(void *ctx, int64_t o0, int64_t o1) {
  arg_job *j = (arg_job *)ctx;
  if (argreduce_range(j, o0, o1) != 0) atomic_store(&j->failed, 1);
}

static int argreduce_forward(const mxw_op_call *c, int is_max) {
  const ReduceAxisParam *p = (const ReduceAxisParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  int64_t outer, n, inner;
  int ax;
  MXW_TRY(axis_view(&p->axis, &in->shape, &outer, &n, &inner, &ax));
  if (outer * inner == 0 || n == 0) return 0;
  arg_job j = {in, &c->outputs[0], n, inner, is_max, 0};
  mxw_parallel_run(outer, 1, 2.0 * (double)(n * inner), argreduce_chunk, &j);
  if (atomic_load(&j.failed)) return argreduce_range(&j, 0, outer); /* the error, from this thread */
  return 0;
}

static int fwd_argmax(const mxw_op_call *c) { return argreduce_forward(c, 1); }
static int fwd_argmin(const mxw_op_call *c) { return argreduce_forward(c, 0); }

static const mxw_op_def op_argmax = {
    .name = "argmax",
    .doc = MXW_DOC("index of the maximum along an axis (flattened when axis=None), as the input dtype"),
    .attrs = k_reduce_axis_attrs,
    .num_attrs = 2,
    .param_size = sizeof(ReduceAxisParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_argreduce,
    .half_as_f32 = 1,
    .forward = fwd_argmax,
    .no_grad = 1};
static const mxw_op_def op_argmin = {
    .name = "argmin",
    .doc = MXW_DOC("index of the minimum along an axis (flattened when axis=None), as the input dtype"),
    .attrs = k_reduce_axis_attrs,
    .num_attrs = 2,
    .param_size = sizeof(ReduceAxisParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_argreduce,
    .half_as_f32 = 1,
    .forward = fwd_argmin,
    .no_grad = 1};

/* argmax_channel(data): argmax over the last axis (MXNet registers it as argmax with axis -1 and no
 * parameters of its own). */
static const ReduceAxisParam k_last_axis = {{1, -1}, 0};
static int infer_argmax_channel(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  return infer_argreduce(&k_last_axis, nin, in, nout, out);
}
static int fwd_argmax_channel(const mxw_op_call *c) {
  mxw_op_call last = *c;
  last.param = &k_last_axis;
  return argreduce_forward(&last, 1);
}
static const mxw_op_def op_argmax_channel = {
    .name = "argmax_channel",
    .doc = MXW_DOC("index of the maximum along the last axis, as the input dtype"),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_argmax_channel,
    .half_as_f32 = 1,
    .forward = fwd_argmax_channel,
    .no_grad = 1};

/* ==== pick ===================================================================================== */
enum { PICK_WRAP, PICK_CLIP };
static const char *const k_pick_modes[] = {"wrap", "clip", NULL};
typedef struct {
  mxw_opt_int axis;
  int keepdims;
  int mode;
} PickParam;

static const mxw_attr_spec k_pick_attrs[] = {
    MXW_A_OPT_INT("axis", PickParam, axis, "-1", "the axis to pick along"),
    MXW_A_BOOL("keepdims", PickParam, keepdims, "False", "keep the picked axis as a size-1 dim"),
    MXW_A_ENUM("mode", PickParam, mode, "clip", k_pick_modes, "out-of-range indices: clip to the ends or wrap around"),
};

/* Output as argmax's; the index has the output's shape (with or without the size-1 axis,
 * told apart by its rank as in MXNet). */
static int infer_pick(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const PickParam *p = (const PickParam *)param;
  MXW_CHECK(p->axis.has, "axis=None is not supported: give the axis to pick along");
  if (in[0].ndim < 0) return 0;
  MXW_TRY(check_nonempty_axis(&p->axis, &in[0], "pick"));
  mxw_shape o, idx;
  MXW_TRY(reduce_axis_shape(&p->axis, p->keepdims, &in[0], &o));
  MXW_TRY(mxw_shape_assign(&out[0], &o, "output"));
  int idx_keepdims = in[1].ndim < 0 ? p->keepdims : in[1].ndim == in[0].ndim;
  MXW_TRY(reduce_axis_shape(&p->axis, idx_keepdims, &in[0], &idx));
  if (in[1].ndim >= 0 && !mxw_shape_equal(&in[1], &idx) && mxw_shape_known(&in[1])) {
    char a[128], b[128], d[128];
    return mxw_fail("index shape %s does not match data shape %s: expected %s", mxw_shape_str(&in[1], a, sizeof a),
                    mxw_shape_str(&in[0], d, sizeof d), mxw_shape_str(&idx, b, sizeof b));
  }
  return mxw_shape_assign(&in[1], &idx, "index");
}

/* data and output share a dtype; the index may be any dtype. */
static int infer_pick_type(const void *param, int nin, int *in, int nout, int *out) {
  return mxw_infer_type_same(param, 1, in, nout, out);
}

/* The position index[k] picks among n (int64 of the value, truncating; NaN and huge values are
 * pinned first so the cast is defined), clipped or wrapped as the mode says. */
static int64_t pick_index(const PickParam *p, const mxw_tensor *index, int64_t k, int64_t n) {
  double v = mxw_load_f64(index->data, index->dtype, k);
  int64_t j = is_nan_d(v) ? 0 : v > 4e18 ? (int64_t)4e18 : v < -4e18 ? -(int64_t)4e18 : (int64_t)v;
  if (p->mode == PICK_CLIP) return j < 0 ? 0 : (j >= n ? n - 1 : j);
  j %= n;
  return j < 0 ? j + n : j;
}

static int fwd_pick(const mxw_op_call *c) {
  const PickParam *p = (const PickParam *)c->param;
  const mxw_tensor *data = &c->inputs[0], *index = &c->inputs[1];
  mxw_tensor *out = &c->outputs[0];
  int64_t outer, n, inner;
  int ax;
  MXW_TRY(axis_view(&p->axis, &data->shape, &outer, &n, &inner, &ax));
  if (outer * inner == 0) return 0;
  size_t es = (size_t)mxw_dtype_size(data->dtype);
  const char *src = (const char *)data->data;
  char *dst = (char *)out->data;
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t i = 0; i < inner; i++) {
      int64_t k = o * inner + i;
      int64_t j = pick_index(p, index, k, n);
      memcpy(dst + (size_t)k * es, src + (size_t)((o * n + j) * inner + i) * es, es);
    }
  }
  return 0;
}

/* pick's gradient (MXNet's _backward_pick): zeros of data's shape with ograd at the picked
 * positions (the same clip/wrap of the index as the forward); the index gets none. Inputs
 * (ograd, index, data): data only gives the shape. */
static int fwd_backward_pick(const mxw_op_call *c) {
  const PickParam *p = (const PickParam *)c->param;
  const mxw_tensor *og = &c->inputs[0], *index = &c->inputs[1];
  mxw_tensor *dx = &c->outputs[0];
  int64_t outer, n, inner;
  int ax;
  MXW_TRY(axis_view(&p->axis, &dx->shape, &outer, &n, &inner, &ax));
  size_t es = (size_t)mxw_dtype_size(dx->dtype);
  memset(dx->data, 0, (size_t)mxw_tensor_size(dx) * es);
  if (outer * inner == 0 || n == 0) return 0;
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t i = 0; i < inner; i++) {
      int64_t k = o * inner + i;
      int64_t j = pick_index(p, index, k, n);
      int64_t at = (o * n + j) * inner + i;
      if (dx->dtype == og->dtype)
        memcpy((char *)dx->data + (size_t)at * es, (const char *)og->data + (size_t)k * es, es);
      else
        mxw_store_f64(dx->data, dx->dtype, at, mxw_load_f64(og->data, og->dtype, k));
    }
  }
  return 0;
}
static int infer_backward_pick(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  return mxw_shape_assign(&out[0], &in[2], "output");
}
static int infer_type_backward_pick(const void *param, int nin, int *in, int nout, int *out) {
  if (in[2] >= 0) out[0] = in[2];
  return 0;
}
static int grad_pick(mxw_grad_ctx *g) {
  mxw_gid dx;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_pick", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 1), mxw_grad_in(g, 0)),
                          &dx, 1));
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_pick = {
    .name = "pick",
    .aliases = ALIASES("choose_element_0index"),
    .doc = MXW_DOC("out[..] = data[.., index[..], ..] along an axis (indices clipped or wrapped)"),
    .attrs = k_pick_attrs,
    .num_attrs = 3,
    .param_size = sizeof(PickParam),
    .num_inputs = 2,
    .input_names = k_pick_inputs,
    .num_outputs = 1,
    .infer_shape = infer_pick,
    .infer_type = infer_pick_type,
    .forward = fwd_pick,
    .gradient = grad_pick};
static const char *const k_backward_pick_inputs[] = {"ograd", "index", "data", NULL};
/* Second order: _backward_pick is linear in ograd (a scatter), so its gradient is pick of the
 * incoming gradient at the same indices; the indices (integers) and data (its shape only) get
 * none. */
static int grad2_pick(mxw_grad_ctx *g) {
  mxw_gid d;
  MXW_TRY(mxw_grad_op_fwd(g, "pick", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 1)), &d, 1));
  MXW_TRY(mxw_grad_set(g, 0, d));
  return mxw_grad_set(g, 2, mxw_grad_zeros_like(g, mxw_grad_in(g, 2)));
}

static const mxw_op_def op_backward_pick = {
    .name = "_backward_pick",
    .doc = MXW_DOC("the gradient of pick: ograd scattered into zeros of data's shape"),
    .attrs = k_pick_attrs,
    .num_attrs = 3,
    .param_size = sizeof(PickParam),
    .num_inputs = 3,
    .input_names = k_backward_pick_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_pick,
    .infer_type = infer_type_backward_pick,
    .forward = fwd_backward_pick,
    .gradient = grad2_pick};

/* ==== moments ================================================================================ */
/* mean and var = mean((x - mean)^2) over `axes` (MXNet 1.9.1's moments-inl.h: the mean, then the
 * squared deviations reduced the same way), both of the reduced shape. */
typedef struct {
  mxw_tuple axes;
  int keepdims;
} MomentsParam;

static const mxw_attr_spec k_moments_attrs[] = {
    MXW_A_OPT_SHAPE("axes", MomentsParam, axes, "None", "axes to reduce; None reduces all"),
    MXW_A_BOOL("keepdims", MomentsParam, keepdims, "False", "keep reduced axes as size-1 dims"),
};

static int infer_moments(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const MomentsParam *p = (const MomentsParam *)param;
  (void)nin;
  (void)nout;
  MXW_TRY(infer_reduce_shape(&p->axes, 0, p->keepdims, &in[0], &out[0]));
  MXW_TRY(mxw_shape_assign(&out[1], &out[0], "var"));
  return mxw_shape_assign(&out[0], &out[1], "mean");
}

static int fwd_moments(const mxw_op_call *c) {
  const MomentsParam *p = (const MomentsParam *)c->param;
  const mxw_tensor *x = &c->inputs[0];
  MXW_CHECK(x->dtype == MXW_FLOAT32 || x->dtype == MXW_FLOAT64, "data must be a floating-point array, got %s",
            mxw_dtype_name(x->dtype));
  const reduce_kind mean = {COMB_SUM, MAP_ID, POST_MEAN};
  mxw_op_call cm = *c;
  cm.num_outputs = 1;
  MXW_TRY(reduce_forward(&cm, mean, &p->axes, 0));
  const int64_t n = mxw_tensor_size(x);
  const int f32 = x->dtype == MXW_FLOAT32;
  void *dev = malloc((size_t)(n > 0 ? n : 1) * (f32 ? sizeof(float) : sizeof(double)));
  if (!dev) return mxw_fail("out of memory for the squared deviations (%lld elements)", (long long)n);
  if (n > 0 && mxw_tensor_size(&c->outputs[0]) > 0) {
    uint8_t reduced[MXW_MAX_NDIM];
    if (resolve_axes(&p->axes, 0, &x->shape, reduced) != 0) {
      free(dev);
      return -1;
    }
    bcast_map m;
    make_bcast_map(&x->shape, reduced, &m);
    const int64_t rows = n / m.size[m.nb - 1];
    if (f32) {
      const float *xs = (const float *)x->data, *mu = (const float *)c->outputs[0].data;
      float *d = (float *)dev;
      BCAST_FOR(&m, 0, rows, {
        const float e = xs[i] - mu[o];
        d[i] = e * e;
      });
    } else {
      const double *xs = (const double *)x->data, *mu = (const double *)c->outputs[0].data;
      double *d = (double *)dev;
      BCAST_FOR(&m, 0, rows, {
        const double e = xs[i] - mu[o];
        d[i] = e * e;
      });
    }
  }
  mxw_tensor dt = *x;
  dt.data = dev;
  mxw_op_call cv = *c;
  cv.inputs = &dt;
  cv.num_inputs = 1;
  cv.outputs = &c->outputs[1];
  cv.num_outputs = 1;
  const int rc = reduce_forward(&cv, mean, &p->axes, 0);
  free(dev);
  return rc;
}

/* dx = gmean / N + 2 (x - mean) gvar / N, from differentiable ops (so second order follows):
 * _backward_mean(gmean, x) + 2 (x - _backward_sum(mean, x)) _backward_mean(gvar, x). */
static int grad_moments(mxw_grad_ctx *g) {
  const MomentsParam *p = (const MomentsParam *)mxw_grad_param(g);
  char axes[160] = "None";
  if (p->axes.ndim >= 0) tuple_str(&p->axes, axes, sizeof axes);
  const char *const *kv = MXW_KV("axis", axes, "keepdims", p->keepdims ? "True" : "False");
  const mxw_gid x = mxw_grad_in(g, 0);
  const mxw_gid dm = mxw_grad_op(g, "_backward_mean", kv, MXW_GIDS(mxw_grad_ograd(g, 0), x));
  const mxw_gid gv = mxw_grad_op(g, "_backward_mean", kv, MXW_GIDS(mxw_grad_ograd(g, 1), x));
  const mxw_gid centred = mxw_grad_op(
      g, "elemwise_sub", NULL, MXW_GIDS(x, mxw_grad_op(g, "_backward_sum", kv, MXW_GIDS(mxw_grad_out(g, 0), x))));
  const mxw_gid dv = mxw_grad_op(g, "_mul_scalar", MXW_KV("scalar", "2"), MXW_GIDS(mxw_grad_mul(g, centred, gv)));
  return mxw_grad_set(g, 0, mxw_grad_op(g, "elemwise_add", NULL, MXW_GIDS(dm, dv)));
}

static const mxw_op_def op_moments = {
    .name = "moments",
    .doc = MXW_DOC("mean and variance (mean of squared deviations) over the given axes"),
    .attrs = k_moments_attrs,
    .num_attrs = 2,
    .param_size = sizeof(MomentsParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 2,
    .infer_shape = infer_moments,
    .half_as_f32 = 1,
    .forward = fwd_moments,
    .gradient = grad_moments,
};

/* ==== batch_take (deprecated in MXNet for pick) ================================================ */
/* batch_take(a, indices): out[i] = a[i, clip(indices[i], 0, d1 - 1)] for 2-D a (d0, d1) and d0
 * indices: pick along the last axis in clip mode, whose defaults its gradient (_backward_pick)
 * takes. (MXNet accepts more axes, checking the size against all but the last axis while its
 * kernel reads rows of all but the first, out of bounds: here a must be 2-D.) Indices of any
 * dtype (MXNet: int32). */
static const char *const k_batch_take_inputs[] = {"a", "indices", NULL};
static int infer_batch_take(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[1].ndim >= 0) MXW_TRY(mxw_shape_assign(&out[0], &in[1], "output"));
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim == 2, "batch_take takes 2-D data, got %d-D", in[0].ndim);
  MXW_CHECK(in[0].dims[1] != 0, "the data rows have no elements to take");
  const int64_t n = mxw_shape_size(&out[0]);
  MXW_CHECK(n < 0 || in[0].dims[0] < 0 || n == in[0].dims[0],
            "Index array's size must be the same as data array's size excluding the first dimension: %lld indices "
            "for %lld rows",
            (long long)n, (long long)in[0].dims[0]);
  return 0;
}
static int infer_type_batch_take(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[0] >= 0) out[0] = in[0];
  if (in[1] < 0) in[1] = MXW_INT32;
  return 0;
}
static int fwd_batch_take(const mxw_op_call *c) {
  const PickParam pp = {{1, -1}, 0, PICK_CLIP};
  mxw_op_call pc = *c;
  pc.param = &pp;
  return fwd_pick(&pc);
}
/* pick's gradient with pick's defaults (axis -1, clip) */
static int grad_batch_take(mxw_grad_ctx *g) {
  return mxw_grad_set(
      g, 0,
      mxw_grad_op(g, "_backward_pick", NULL, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 1), mxw_grad_in(g, 0))));
}
static const mxw_op_def op_batch_take = {
    .name = "batch_take",
    .doc = MXW_DOC("Takes elements from a data batch: output[i] = input[i, indices[i]]"),
    .num_inputs = 2,
    .input_names = k_batch_take_inputs,
    .num_outputs = 1,
    .infer_shape = infer_batch_take,
    .infer_type = infer_type_batch_take,
    .forward = fwd_batch_take,
    .gradient = grad_batch_take,
};

MXW_FAMILY(reduce, &op_sum, &op_mean, &op_max, &op_min, &op_prod, &op_nansum, &op_nanprod, &op_norm, &op_argmax,
           &op_argmin, &op_argmax_channel, &op_pick, &op_batch_take, &op_moments, &op_backward_sum, &op_backward_mean,
           &op_backward_max, &op_backward_min, &op_backward_prod, &op_backward_nansum, &op_backward_nanprod,
           &op_backward_norm, &op_backward_pick);
