/* shape_ops.c -- shape manipulation: Reshape, Flatten, transpose, expand_dims, squeeze, Concat,
 * stack, SliceChannel, slice, slice_axis, slice_like, SwapAxis, broadcast_to, broadcast_like,
 * reshape_like, tile, repeat, reverse, depth_to_space, space_to_depth and Pad.
 * Semantics: ../shared/spec/ops.md §3 (Flatten and Pad in §1).
 *
 * These ops only move bytes, so every kernel works for any element size (1, 2, 4 or 8 bytes);
 * the only per-dtype code is Pad's constant fill. Reshape-like ops are one memcpy. The others
 * describe their output to the strided copy engine below: a list of dims, each with a source and
 * a destination element stride (0 repeats an element, a negative stride walks backwards). The
 * engine drops size-1 dims, merges dims that are contiguous on both sides, and then either
 * copies rows (memcpy when both sides are contiguous) or, when the innermost two dims are
 * transposed between source and destination, runs a blocked 2-D transpose with 4x4 SIMD tiles
 * for 4-byte elements. So transpose, SwapAxis, depth_to_space, space_to_depth, Concat, stack,
 * split, slices, broadcasts, tile, repeat and reverse share one tested kernel.
 *
 * Gradients (MXNet's FGradient of each op): reshapes view the gradient under the input's shape,
 * permutations apply the inverse permutation, Concat/stack/split slice or join the gradient,
 * slices scatter it into zeros (_backward_slice, _backward_slice_axis, _backward_slice_like),
 * broadcasts sum it over the broadcast axes, and tile, repeat and Pad add it back onto the
 * elements each output position copied (_backward_tile, _backward_repeat, _backward_Pad: the
 * adjoint of the same copy plan). The _backward_* ops take (ograd, data), data for its shape. */
#include <stdio.h>
#include <stdlib.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <simde/wasm/simd128.h>
#endif

#include "../core/mxw_core.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
static const char *const k_data[] = {"data", NULL};
static const char *const k_lhs_rhs[] = {"lhs", "rhs", NULL};
/* Variadic ops name their inputs arg0, arg1, ... (MXNet's FListInputNames); no fixed list. */
static const char *const k_variadic[] = {NULL};

/* ---- small helpers ------------------------------------------------------------------------- */
typedef char shape_buf[160];
typedef char tuple_buf[512];

#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
#define TUPLE_STR(t, b) mxw_tuple_str((t), (b), sizeof(b))

static void contiguous_strides(const mxw_shape *s, int64_t *st) {
  int64_t acc = 1;
  for (int i = s->ndim - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= s->dims[i];
  }
}

static mxw_shape unknown_shape(int ndim) {
  mxw_shape s;
  memset(&s, 0, sizeof s);
  s.ndim = ndim;
  for (int i = 0; i < ndim && i < MXW_MAX_NDIM; i++) s.dims[i] = -1;
  return s;
}

/* Number of dims of s that are unknown (-1). */
static int count_unknown(const mxw_shape *s) {
  int n = 0;
  for (int i = 0; i < s->ndim; i++) n += s->dims[i] < 0;
  return n;
}

/* Output dtype follows input 0 (data/lhs); the second input only lends its shape. */
static int infer_type_first(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[0] >= 0 && out[0] >= 0 && in[0] != out[0])
    return mxw_fail("dtype mismatch: input is %s but output is %s", mxw_dtype_name(in[0]), mxw_dtype_name(out[0]));
  if (in[0] >= 0)
    out[0] = in[0];
  else if (out[0] >= 0)
    in[0] = out[0];
  return 0;
}

/* ---- the strided copy engine ----------------------------------------------------------------- */
/* tile doubles the rank (a repeat dim beside every input dim), so a plan holds up to 2x. */
#define PLAN_MAX (2 * MXW_MAX_NDIM + 2)
typedef struct copy_plan {
  int ndim;
  int64_t size[PLAN_MAX];
  int64_t src[PLAN_MAX]; /* element strides into the source, outer to inner */
  int64_t dst[PLAN_MAX]; /* element strides into the destination */
} copy_plan;

static void plan_push(copy_plan *p, int64_t size, int64_t src_stride, int64_t dst_stride) {
  if (p->ndim >= PLAN_MAX) return; /* callers never build more dims than PLAN_MAX */
  p->size[p->ndim] = size;
  p->src[p->ndim] = src_stride;
  p->dst[p->ndim] = dst_stride;
  p->ndim++;
}

/* Drops size-1 dims and merges an outer dim into its inner neighbour when both sides step
 * through them as one run. Returns the element count (0: nothing to copy). */
static int64_t plan_simplify(copy_plan *p) {
  copy_plan q;
  q.ndim = 0;
  int64_t total = 1;
  for (int i = 0; i < p->ndim; i++) {
    int64_t n = p->size[i], s = p->src[i], d = p->dst[i];
    if (n == 0) return 0;
    total *= n;
    if (n == 1) continue;
    if (q.ndim > 0) {
      int t = q.ndim - 1;
      if (q.src[t] == s * n && q.dst[t] == d * n) {
        q.size[t] *= n;
        q.src[t] = s;
        q.dst[t] = d;
        continue;
      }
    }
    q.size[q.ndim] = n;
    q.src[q.ndim] = s;
    q.dst[q.ndim] = d;
    q.ndim++;
  }
  *p = q;
  return total;
}

/* Element types for moving bytes; may_alias because the same storage is read as float elsewhere. */
typedef uint8_t u8a;
typedef uint16_t __attribute__((may_alias)) u16a;
typedef uint32_t __attribute__((may_alias)) u32a;
typedef uint64_t __attribute__((may_alias)) u64a;

#define ROW_LOOP(T)                                          \
  do {                                                       \
    const T *s_ = (const T *)src;                            \
    T *d_ = (T *)dst;                                        \
    for (int64_t i = 0; i < n; i++) d_[i * ds] = s_[i * ss]; \
  } while (0)

/* dst[i * ds] = src[i * ss] for i < n. */
static void copy_row(size_t es, const char *src, int64_t ss, char *dst, int64_t ds, int64_t n) {
  if (ss == 1 && ds == 1) {
    memcpy(dst, src, (size_t)n * es);
    return;
  }
  switch (es) {
    case 1: ROW_LOOP(u8a); break;
    case 2: ROW_LOOP(u16a); break;
    case 4: ROW_LOOP(u32a); break;
    default: ROW_LOOP(u64a); break;
  }
}

/* The inner two dims of a transposing plan: dst[a * da + b] = src[a + b * sb] for a < A, b < B
 * (source contiguous along a, destination contiguous along b). Tiles keep both sides in cache. */
#define TILE 32
#define TRANSPOSE_LOOP(T)                                                                   \
  do {                                                                                      \
    const T *s_ = (const T *)src;                                                           \
    T *d_ = (T *)dst;                                                                       \
    for (int64_t a0 = 0; a0 < A; a0 += TILE)                                                \
      for (int64_t b0 = 0; b0 < B; b0 += TILE) {                                            \
        int64_t amax = a0 + TILE < A ? a0 + TILE : A, bmax = b0 + TILE < B ? b0 + TILE : B; \
        for (int64_t a = a0; a < amax; a++)                                                 \
          for (int64_t b = b0; b < bmax; b++) d_[a * da + b] = s_[a + b * sb];              \
      }                                                                                     \
  } while (0)

/* 4-byte elements: 4x4 blocks transposed in registers (two rounds of i32x4 shuffles). */
static void transpose_2d_u32(const u32a *s, int64_t sb, u32a *d, int64_t da, int64_t A, int64_t B) {
  for (int64_t a0 = 0; a0 < A; a0 += TILE) {
    for (int64_t b0 = 0; b0 < B; b0 += TILE) {
      int64_t amax = a0 + TILE < A ? a0 + TILE : A, bmax = b0 + TILE < B ? b0 + TILE : B;
      int64_t a4 = a0 + ((amax - a0) & ~(int64_t)3), b4 = b0 + ((bmax - b0) & ~(int64_t)3);
      for (int64_t a = a0; a < a4; a += 4) {
        for (int64_t b = b0; b < b4; b += 4) {
          /* v_k = src[a..a+3] at b + k; w_j = (v_0[j], v_1[j], v_2[j], v_3[j]) goes to row a + j */
          v128_t v0 = wasm_v128_load(s + a + (b + 0) * sb);
          v128_t v1 = wasm_v128_load(s + a + (b + 1) * sb);
          v128_t v2 = wasm_v128_load(s + a + (b + 2) * sb);
          v128_t v3 = wasm_v128_load(s + a + (b + 3) * sb);
          v128_t t0 = wasm_i32x4_shuffle(v0, v1, 0, 4, 1, 5);
          v128_t t1 = wasm_i32x4_shuffle(v2, v3, 0, 4, 1, 5);
          v128_t t2 = wasm_i32x4_shuffle(v0, v1, 2, 6, 3, 7);
          v128_t t3 = wasm_i32x4_shuffle(v2, v3, 2, 6, 3, 7);
          wasm_v128_store(d + (a + 0) * da + b, wasm_i32x4_shuffle(t0, t1, 0, 1, 4, 5));
          wasm_v128_store(d + (a + 1) * da + b, wasm_i32x4_shuffle(t0, t1, 2, 3, 6, 7));
          wasm_v128_store(d + (a + 2) * da + b, wasm_i32x4_shuffle(t2, t3, 0, 1, 4, 5));
          wasm_v128_store(d + (a + 3) * da + b, wasm_i32x4_shuffle(t2, t3, 2, 3, 6, 7));
        }
        for (int64_t b = b4; b < bmax; b++)
          for (int64_t k = 0; k < 4; k++) d[(a + k) * da + b] = s[a + k + b * sb];
      }
      for (int64_t a = a4; a < amax; a++)
        for (int64_t b = b0; b < bmax; b++) d[a * da + b] = s[a + b * sb];
    }
  }
}

static void transpose_2d(size_t es, const char *src, int64_t sb, char *dst, int64_t da, int64_t A, int64_t B) {
  switch (es) {
    case 1: TRANSPOSE_LOOP(u8a); break;
    case 2: TRANSPOSE_LOOP(u16a); break;
    case 4: transpose_2d_u32((const u32a *)src, sb, (u32a *)dst, da, A, B); break;
    default: TRANSPOSE_LOOP(u64a); break;
  }
}

/* Copies every element the plan describes from src to dst (es bytes each). src and dst point at
 * the element with all indices 0; strides may be zero or negative. */
static void plan_run(const copy_plan *plan, size_t es, const void *src_base, void *dst_base) {
  copy_plan p = *plan;
  if (plan_simplify(&p) == 0) return;
  const char *src = (const char *)src_base;
  char *dst = (char *)dst_base;
  if (p.ndim == 0) {
    memcpy(dst, src, es);
    return;
  }
  int nd = p.ndim;
  /* Inner two dims transposed (source contiguous along the outer one, destination along the
   * inner one): blocked transpose instead of a strided gather per row. */
  int blocked = nd >= 2 && p.src[nd - 2] == 1 && p.dst[nd - 1] == 1 && p.size[nd - 2] >= 4 && p.size[nd - 1] >= 4;
  int outer = nd - (blocked ? 2 : 1);
  int64_t idx[PLAN_MAX] = {0};
  int64_t so = 0, dof = 0;
  for (;;) {
    if (blocked)
      transpose_2d(es, src + so * (int64_t)es, p.src[nd - 1], dst + dof * (int64_t)es, p.dst[nd - 2], p.size[nd - 2],
                   p.size[nd - 1]);
    else
      copy_row(es, src + so * (int64_t)es, p.src[nd - 1], dst + dof * (int64_t)es, p.dst[nd - 1], p.size[nd - 1]);
    int d = outer - 1;
    for (; d >= 0; d--) { /* odometer over the outer dims */
      idx[d]++;
      so += p.src[d];
      dof += p.dst[d];
      if (idx[d] < p.size[d]) break;
      so -= p.src[d] * p.size[d];
      dof -= p.dst[d] * p.size[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

/* Element size of a tensor's dtype; 0 means an unknown dtype (never reaches a forward). */
static size_t elsize(const mxw_tensor *t) { return (size_t)mxw_dtype_size(t->dtype); }

/* out[i...] = in[i[perm[0]], ...]: the output's dim k walks the input's dim perm[k]. */
static void permute_copy(const mxw_tensor *in, mxw_tensor *out, const int *perm) {
  int64_t ist[MXW_MAX_NDIM], ost[MXW_MAX_NDIM];
  contiguous_strides(&in->shape, ist);
  contiguous_strides(&out->shape, ost);
  copy_plan p = {0};
  for (int k = 0; k < out->shape.ndim; k++) plan_push(&p, out->shape.dims[k], ist[perm[k]], ost[k]);
  plan_run(&p, elsize(in), in->data, out->data);
}

/* Shared shape rule of transpose and SwapAxis: out.dims[k] = in.dims[perm[k]], both directions. */
static int infer_permuted(const int *perm, int nd, mxw_shape *in, mxw_shape *out) {
  mxw_shape o = unknown_shape(nd), b = unknown_shape(nd);
  if (in->ndim >= 0)
    for (int k = 0; k < nd; k++) o.dims[k] = in->dims[perm[k]];
  MXW_TRY(mxw_shape_assign(out, &o, "output"));
  for (int k = 0; k < nd; k++) b.dims[perm[k]] = out->dims[k];
  return mxw_shape_assign(in, &b, "input data");
}

/* Rank of an op whose input and output ranks are equal; -1 if neither is known. */
static int same_rank(const mxw_shape *in, const mxw_shape *out, int *nd) {
  char a[160], b[160];
  if (in->ndim >= 0 && out->ndim >= 0 && in->ndim != out->ndim)
    return mxw_fail("input %s and output %s differ in rank", SHAPE_STR(in, a), SHAPE_STR(out, b));
  *nd = in->ndim >= 0 ? in->ndim : out->ndim;
  return 0;
}

/* Forward of the ops whose output is the input's bytes under another shape. */
static int fwd_copy_bytes(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  size_t n = (size_t)mxw_tensor_size(in) * elsize(in);
  if (n) memcpy(c->outputs[0].data, in->data, n);
  return 0;
}

/* ---- gradients: shared pieces ------------------------------------------------------------------
 * The ops here only move elements, so each gradient moves the output's gradient back: a reshape
 * back to the input's shape, the inverse permutation, a scatter of a slice into zeros, or -- where
 * the forward repeats elements (tile, repeat, edge/reflect Pad) -- the adjoint of the forward's
 * copy plan, which adds every output element's gradient into the input element it came from. */

/* grad (same size as input `input`) under the input's shape: MXNet's _backward_reshape / _backward_copy.
 * _view_range with offset 0 is exactly that for every shape (Reshape would read a 0 dim as "copy"). */
static mxw_gid view_as_input(mxw_grad_ctx *g, mxw_gid grad, int input) {
  tuple_buf s;
  mxw_shape_attr(mxw_grad_in_shape(g, input), s, sizeof s);
  return mxw_grad_op(g, "_view_range", MXW_KV("offset", "0", "shape", s), MXW_GIDS(grad));
}

/* Gradient of the ops whose output is the input's elements in the same order. */
static int grad_reshape_back(mxw_grad_ctx *g) { return mxw_grad_set(g, 0, view_as_input(g, mxw_grad_ograd(g, 0), 0)); }

/* Backward ops take (ograd, data): data lends only its shape (and dtype) to the result. */
static const char *const k_ograd_data[] = {"ograd", "data", NULL};
static int infer_backward_like_data(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  MXW_TRY(mxw_shape_assign(&out[0], &in[1], "output"));
  return mxw_shape_assign(&in[1], &out[0], "data");
}

/* The adjoint of plan_run: gin[src offset] += gout[dst offset] for every element the plan moves
 * (the caller zeroes gin). A source stride 0 (a repeated element) sums a run into one element. */
#define ACCUM_ROW(T)                                              \
  do {                                                            \
    T *gi_ = (T *)gin + so;                                       \
    const T *go_ = (const T *)gout + dof;                         \
    if (ss == 0) {                                                \
      T acc_ = 0;                                                 \
      for (int64_t i = 0; i < n; i++) acc_ += go_[i * ds];        \
      gi_[0] += acc_;                                             \
    } else {                                                      \
      for (int64_t i = 0; i < n; i++) gi_[i * ss] += go_[i * ds]; \
    }                                                             \
  } while (0)

static void plan_accumulate(const copy_plan *plan, int dtype, const void *gout, void *gin) {
  copy_plan p = *plan;
  if (plan_simplify(&p) == 0) return;
  if (p.ndim == 0) plan_push(&p, 1, 0, 0);
  const int nd = p.ndim;
  const int64_t n = p.size[nd - 1], ss = p.src[nd - 1], ds = p.dst[nd - 1];
  int64_t idx[PLAN_MAX] = {0}, so = 0, dof = 0;
  for (;;) {
    if (dtype == MXW_FLOAT32)
      ACCUM_ROW(float);
    else if (dtype == MXW_FLOAT64)
      ACCUM_ROW(double);
    else
      for (int64_t i = 0; i < n; i++)
        mxw_store_f64(gin, dtype, so + i * ss,
                      mxw_load_f64(gin, dtype, so + i * ss) + mxw_load_f64(gout, dtype, dof + i * ds));
    int d = nd - 2;
    for (; d >= 0; d--) {
      idx[d]++;
      so += p.src[d];
      dof += p.dst[d];
      if (idx[d] < p.size[d]) break;
      so -= p.src[d] * p.size[d];
      dof -= p.dst[d] * p.size[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

static void zero_tensor(mxw_tensor *t) {
  size_t n = (size_t)mxw_tensor_size(t) * elsize(t);
  if (n) memset(t->data, 0, n);
}

/* ==== Reshape ================================================================================= */
typedef struct {
  mxw_tuple shape;
  int reverse;
  mxw_tuple target_shape;
  int keep_highest;
} ReshapeParam;
static const mxw_attr_spec k_reshape_attrs[] = {
    MXW_A_SHAPE("shape", ReshapeParam, shape, "()", "target shape; special codes 0, -1, -2, -3, -4"),
    MXW_A_BOOL("reverse", ReshapeParam, reverse, "False", "match the special codes from the right"),
    MXW_A_SHAPE("target_shape", ReshapeParam, target_shape, "()", "(deprecated) target shape, one 0 is inferred"),
    MXW_A_BOOL("keep_highest", ReshapeParam, keep_highest, "False", "(deprecated) keep dim 0 with target_shape"),
};

/* "shape=(4, 0, 2)" (", reverse=True") or "target_shape=(...)": the target as the user wrote it. */
static char *reshape_target_str(const ReshapeParam *p, char *buf, size_t len) {
  tuple_buf t;
  if (p->shape.ndim > 0)
    snprintf(buf, len, "shape=%s%s", TUPLE_STR(&p->shape, t), p->reverse ? ", reverse=True" : "");
  else
    snprintf(buf, len, "target_shape=%s%s", TUPLE_STR(&p->target_shape, t),
             p->keep_highest ? ", keep_highest=True" : "");
  return buf;
}

/* The special codes, applied left to right with a cursor over the input dims (mirrored for
 * reverse=True). Unknown input dims give unknown output dims where they are copied. */
static int reshape_codes(const ReshapeParam *p, const mxw_shape *x, mxw_shape *target) {
  tuple_buf tgt;
  shape_buf xs;
  const int dn = x->ndim, sn = p->shape.ndim, rev = p->reverse;
  int64_t dv[MXW_MAX_NDIM], sv[MXW_MAX_TUPLE];
  for (int i = 0; i < dn; i++) dv[i] = x->dims[rev ? dn - 1 - i : i];
  for (int i = 0; i < sn; i++) sv[i] = p->shape.v[rev ? sn - 1 - i : i];
#define RESHAPE_FAIL(...)                                                             \
  do {                                                                                \
    char why_[256];                                                                   \
    snprintf(why_, sizeof why_, __VA_ARGS__);                                         \
    return mxw_fail("cannot reshape input of shape %s with %s: %s", SHAPE_STR(x, xs), \
                    reshape_target_str(p, tgt, sizeof tgt), why_);                    \
  } while (0)
  int64_t tmp[2 * MXW_MAX_TUPLE + MXW_MAX_NDIM];
  int tn = 0, src = 0, inf = -1;
  for (int i = 0; i < sn; i++) {
    int pos = rev ? sn - 1 - i : i; /* position in the attribute as written */
    int64_t v = sv[i];
    if (v > 0) {
      tmp[tn++] = v;
      src++;
    } else if (v == 0) {
      if (src >= dn) RESHAPE_FAIL("0 at position %d copies input dimension %d, but the input has %d", pos, src, dn);
      tmp[tn++] = dv[src++];
    } else if (v == -1) {
      if (inf >= 0) RESHAPE_FAIL("only one dimension can be -1 (inferred)");
      inf = tn;
      tmp[tn++] = 1;
      src++;
    } else if (v == -2) {
      while (src < dn) tmp[tn++] = dv[src++];
    } else if (v == -3) {
      if (src + 1 >= dn)
        RESHAPE_FAIL("-3 at position %d merges input dimensions %d and %d, but the input has %d", pos, src, src + 1,
                     dn);
      int64_t d1 = dv[src++], d2 = dv[src++];
      tmp[tn++] = (d1 < 0 || d2 < 0) ? -1 : d1 * d2;
    } else if (v == -4) {
      if (i + 2 >= sn) RESHAPE_FAIL("-4 at position %d must be followed by two sizes", pos);
      if (src >= dn) RESHAPE_FAIL("-4 at position %d splits input dimension %d, but the input has %d", pos, src, dn);
      int64_t d0 = dv[src++], d1 = sv[++i], d2 = sv[++i];
      if (d1 < -1 || d2 < -1) RESHAPE_FAIL("the two sizes after -4 at position %d must be positive or -1", pos);
      if (d1 == -1 && d2 == -1) RESHAPE_FAIL("the two sizes after -4 at position %d cannot both be -1", pos);
      if (d1 == -1 && d0 >= 0) {
        if (d2 == 0 || d0 % d2 != 0)
          RESHAPE_FAIL("-4 at position %d cannot split %lld by %lld", pos, (long long)d0, (long long)d2);
        d1 = d0 / d2;
      }
      if (d2 == -1 && d0 >= 0) {
        if (d1 == 0 || d0 % d1 != 0)
          RESHAPE_FAIL("-4 at position %d cannot split %lld by %lld", pos, (long long)d0, (long long)d1);
        d2 = d0 / d1;
      }
      if (d0 >= 0 && d1 * d2 != d0)
        RESHAPE_FAIL("-4 at position %d splits %lld into %lld x %lld", pos, (long long)d0, (long long)d1,
                     (long long)d2);
      tmp[tn++] = d1;
      tmp[tn++] = d2;
    } else {
      RESHAPE_FAIL("%lld at position %d is not a size or a special code (0, -1, -2, -3, -4)", (long long)v, pos);
    }
  }
  if (tn > MXW_MAX_NDIM) RESHAPE_FAIL("the result would have %d dimensions (at most %d)", tn, MXW_MAX_NDIM);
  if (inf >= 0) {
    if (mxw_shape_known(x)) {
      int64_t rest = 1;
      for (int i = 0; i < tn; i++) rest *= tmp[i];
      int64_t size = mxw_shape_size(x);
      if (rest == 0) RESHAPE_FAIL("-1 cannot be inferred when the other dimensions have size 0");
      if (size % rest != 0)
        RESHAPE_FAIL("the input's %lld elements do not divide into dimensions of product %lld", (long long)size,
                     (long long)rest);
      tmp[inf] = size / rest;
    } else {
      tmp[inf] = -1;
    }
  }
#undef RESHAPE_FAIL
  target->ndim = tn;
  for (int i = 0; i < tn; i++) target->dims[i] = tmp[rev ? tn - 1 - i : i];
  return 0;
}

/* Deprecated target_shape: sizes as given, one 0 inferred; keep_highest copies dim 0. */
static int reshape_legacy(const ReshapeParam *p, const mxw_shape *x, mxw_shape *target) {
  tuple_buf tgt;
  shape_buf xs;
  const mxw_tuple *t = &p->target_shape;
  if (t->ndim > MXW_MAX_NDIM)
    return mxw_fail("cannot reshape input of shape %s with %s: more than %d dimensions", SHAPE_STR(x, xs),
                    reshape_target_str(p, tgt, sizeof tgt), MXW_MAX_NDIM);
  target->ndim = t->ndim;
  int zeros = 0, inf = -1, start = p->keep_highest ? 1 : 0;
  for (int i = 0; i < t->ndim; i++) {
    if (t->v[i] < 0)
      return mxw_fail("cannot reshape input of shape %s with %s: sizes must be >= 0", SHAPE_STR(x, xs),
                      reshape_target_str(p, tgt, sizeof tgt));
    target->dims[i] = t->v[i];
    if (i >= start && t->v[i] == 0) {
      zeros++;
      inf = i;
    }
  }
  if (p->keep_highest) target->dims[0] = x->ndim > 0 ? x->dims[0] : -1;
  if (zeros == 1) {
    if (!mxw_shape_known(x)) {
      target->dims[inf] = -1;
    } else {
      target->dims[inf] = 1;
      int64_t rest = mxw_shape_size(target);
      int64_t size = mxw_shape_size(x);
      if (rest == 0 || size % rest != 0)
        return mxw_fail("cannot reshape input of shape %s with %s: the 0 cannot be inferred", SHAPE_STR(x, xs),
                        reshape_target_str(p, tgt, sizeof tgt));
      target->dims[inf] = size / rest;
    }
  }
  return 0;
}

/* Fills the single unknown dim of `s` so that its size equals `size`. */
static void fill_one_unknown(mxw_shape *s, int64_t size) {
  if (s->ndim < 0 || count_unknown(s) != 1) return;
  int64_t known = 1;
  int at = -1;
  for (int i = 0; i < s->ndim; i++) {
    if (s->dims[i] < 0)
      at = i;
    else
      known *= s->dims[i];
  }
  if (known > 0 && size % known == 0) s->dims[at] = size / known;
}

static int infer_Reshape(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ReshapeParam *p = (const ReshapeParam *)param;
  mxw_shape *x = &in[0];
  if (x->ndim < 0) {
    if (mxw_shape_known(&out[0])) fill_one_unknown(x, mxw_shape_size(&out[0]));
    return 0;
  }
  mxw_shape target;
  if (p->shape.ndim > 0) {
    MXW_TRY(reshape_codes(p, x, &target));
  } else if (p->target_shape.ndim > 0) {
    MXW_TRY(reshape_legacy(p, x, &target));
  } else {
    /* no target: only the output (if known) can say what the input is */
    if (mxw_shape_known(&out[0])) {
      fill_one_unknown(x, mxw_shape_size(&out[0]));
      return 0;
    }
    shape_buf xs;
    return mxw_fail("no target shape for input of shape %s: give shape=(...)", SHAPE_STR(x, xs));
  }
  if (mxw_shape_known(x) && mxw_shape_known(&target) && mxw_shape_size(x) != mxw_shape_size(&target)) {
    shape_buf xs, ts;
    tuple_buf tgt;
    return mxw_fail("cannot reshape input of shape %s (%lld elements) with %s: the target %s has %lld elements",
                    SHAPE_STR(x, xs), (long long)mxw_shape_size(x), reshape_target_str(p, tgt, sizeof tgt),
                    SHAPE_STR(&target, ts), (long long)mxw_shape_size(&target));
  }
  MXW_TRY(mxw_shape_assign(&out[0], &target, "output"));
  /* one unknown dim on either side follows from the other side's size */
  if (mxw_shape_known(x)) fill_one_unknown(&out[0], mxw_shape_size(x));
  if (mxw_shape_known(&out[0])) fill_one_unknown(x, mxw_shape_size(&out[0]));
  return 0;
}

static const mxw_op_def op_Reshape = {
    .name = "Reshape",
    .aliases = ALIASES("reshape"),
    .doc =
        MXW_DOC("the input's elements under a new shape (special codes 0 copy, -1 infer, -2 copy rest, -3 merge two, "
                "-4 split one)"),
    .attrs = k_reshape_attrs,
    .num_attrs = 4,
    .param_size = sizeof(ReshapeParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_Reshape,
    .forward = fwd_copy_bytes,
    .gradient = grad_reshape_back};

/* ==== Flatten ================================================================================= */
static int infer_Flatten(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  if (in[0].ndim < 0) return 0;
  shape_buf xs;
  MXW_CHECK(in[0].ndim >= 1, "input of shape %s has no dimension to keep", SHAPE_STR(&in[0], xs));
  mxw_shape o = unknown_shape(2);
  o.dims[0] = in[0].dims[0];
  o.dims[1] = 1;
  for (int i = 1; i < in[0].ndim; i++) {
    if (in[0].dims[i] < 0 || o.dims[1] < 0)
      o.dims[1] = -1;
    else
      o.dims[1] *= in[0].dims[i];
  }
  MXW_TRY(mxw_shape_assign(&out[0], &o, "output"));
  if (in[0].dims[0] < 0) in[0].dims[0] = out[0].dims[0];
  return 0;
}
static const mxw_op_def op_Flatten = {
    .name = "Flatten",
    .aliases = ALIASES("flatten", "_npx_batch_flatten"),
    .doc = MXW_DOC("(d0, d1, ..., dn) -> (d0, d1 * ... * dn); a 1-D input becomes (d0, 1)"),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_Flatten,
    .forward = fwd_copy_bytes,
    .gradient = grad_reshape_back};

/* ==== transpose ================================================================================ */
typedef struct {
  mxw_tuple axes;
} TransposeParam;
static const mxw_attr_spec k_transpose_attrs[] = {
    MXW_A_SHAPE("axes", TransposeParam, axes, "()", "the permutation; () reverses all axes"),
};

static int transpose_perm(const TransposeParam *p, int nd, int *perm) {
  if (p->axes.ndim <= 0) { /* () or None (numpy's default): reverse */
    for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
    return 0;
  }
  tuple_buf t;
  MXW_CHECK(p->axes.ndim == nd, "axes=%s has %d entries but the input has %d dimensions", TUPLE_STR(&p->axes, t),
            p->axes.ndim, nd);
  int seen[MXW_MAX_NDIM] = {0};
  for (int i = 0; i < nd; i++) {
    int64_t a = p->axes.v[i] < 0 ? p->axes.v[i] + nd : p->axes.v[i];
    MXW_CHECK(a >= 0 && a < nd, "axes=%s: axis %lld is out of range for %d dimensions", TUPLE_STR(&p->axes, t),
              (long long)p->axes.v[i], nd);
    MXW_CHECK(!seen[a], "axes=%s is not a permutation: axis %lld repeats", TUPLE_STR(&p->axes, t), (long long)a);
    seen[a] = 1;
    perm[i] = (int)a;
  }
  return 0;
}

static int infer_transpose(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  int nd, perm[MXW_MAX_NDIM];
  MXW_TRY(same_rank(&in[0], &out[0], &nd));
  if (nd < 0) return 0;
  MXW_TRY(transpose_perm((const TransposeParam *)param, nd, perm));
  return infer_permuted(perm, nd, &in[0], &out[0]);
}
static int fwd_transpose(const mxw_op_call *c) {
  int perm[MXW_MAX_NDIM];
  MXW_TRY(transpose_perm((const TransposeParam *)c->param, c->inputs[0].shape.ndim, perm));
  permute_copy(&c->inputs[0], &c->outputs[0], perm);
  return 0;
}
/* dx = transpose(dy, inverse axes); the default (reversal) is its own inverse. */
static int grad_transpose(mxw_grad_ctx *g) {
  const TransposeParam *p = (const TransposeParam *)mxw_grad_param(g);
  int nd = mxw_grad_in_shape(g, 0)->ndim, perm[MXW_MAX_NDIM];
  MXW_TRY(transpose_perm(p, nd, perm));
  mxw_tuple inv;
  inv.ndim = nd;
  for (int i = 0; i < nd; i++) {
    inv.v[perm[i]] = i;
    inv.has[perm[i]] = 1;
  }
  tuple_buf axes;
  if (p->axes.ndim <= 0)
    snprintf(axes, sizeof axes, "()");
  else
    TUPLE_STR(&inv, axes);
  return mxw_grad_set(g, 0, mxw_grad_op(g, "transpose", MXW_KV("axes", axes), MXW_GIDS(mxw_grad_ograd(g, 0))));
}
static const mxw_op_def op_transpose = {
    .name = "transpose",
    .aliases = ALIASES("_npi_transpose"),
    .doc = MXW_DOC("permutes the axes: out.shape[i] = in.shape[axes[i]]; default reverses them"),
    .attrs = k_transpose_attrs,
    .num_attrs = 1,
    .param_size = sizeof(TransposeParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_transpose,
    .forward = fwd_transpose,
    .gradient = grad_transpose};

/* ==== SwapAxis ================================================================================= */
typedef struct {
  int64_t dim1, dim2;
} SwapAxisParam;
static const mxw_attr_spec k_swapaxis_attrs[] = {
    MXW_A_INT("dim1", SwapAxisParam, dim1, "0", "first axis"),
    MXW_A_INT("dim2", SwapAxisParam, dim2, "0", "second axis"),
};
static int swapaxis_perm(const SwapAxisParam *p, int nd, int *perm) {
  int a, b;
  if (mxw_normalize_axis(p->dim1, nd, &a) != 0)
    return mxw_fail("dim1=%lld is out of range for %d dimensions", (long long)p->dim1, nd);
  if (mxw_normalize_axis(p->dim2, nd, &b) != 0)
    return mxw_fail("dim2=%lld is out of range for %d dimensions", (long long)p->dim2, nd);
  for (int i = 0; i < nd; i++) perm[i] = i;
  perm[a] = b;
  perm[b] = a;
  return 0;
}
static int infer_SwapAxis(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  int nd, perm[MXW_MAX_NDIM];
  MXW_TRY(same_rank(&in[0], &out[0], &nd));
  if (nd < 0) return 0;
  MXW_TRY(swapaxis_perm((const SwapAxisParam *)param, nd, perm));
  return infer_permuted(perm, nd, &in[0], &out[0]);
}
static int fwd_SwapAxis(const mxw_op_call *c) {
  int perm[MXW_MAX_NDIM];
  MXW_TRY(swapaxis_perm((const SwapAxisParam *)c->param, c->inputs[0].shape.ndim, perm));
  permute_copy(&c->inputs[0], &c->outputs[0], perm);
  return 0;
}
/* Swapping the same two axes again undoes the swap (MXNet's _backward_SwapAxis). */
static int grad_SwapAxis(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "SwapAxis", 0); }
static const mxw_op_def op_SwapAxis = {.name = "SwapAxis",
                                       .aliases = ALIASES("swapaxes"),
                                       .doc = MXW_DOC("swaps axes dim1 and dim2"),
                                       .attrs = k_swapaxis_attrs,
                                       .num_attrs = 2,
                                       .param_size = sizeof(SwapAxisParam),
                                       .num_inputs = 1,
                                       .input_names = k_data,
                                       .num_outputs = 1,
                                       .infer_shape = infer_SwapAxis,
                                       .forward = fwd_SwapAxis,
                                       .gradient = grad_SwapAxis};

/* ==== expand_dims ============================================================================== */
typedef struct {
  int64_t axis;
} ExpandDimsParam;
static const mxw_attr_spec k_expand_dims_attrs[] = {
    MXW_A_INT("axis", ExpandDimsParam, axis, NULL, "where the new size-1 axis goes, in [-ndim-1, ndim]"),
};
static int infer_expand_dims(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ExpandDimsParam *p = (const ExpandDimsParam *)param;
  int nd = in[0].ndim;
  if (nd < 0) {
    if (out[0].ndim < 1) return 0;
    nd = out[0].ndim - 1;
  }
  int64_t a = p->axis < 0 ? p->axis + nd + 1 : p->axis;
  MXW_CHECK(a >= 0 && a <= nd, "axis=%lld is out of range [%d, %d] for an input of %d dimensions", (long long)p->axis,
            -nd - 1, nd, nd);
  MXW_CHECK(nd + 1 <= MXW_MAX_NDIM, "the result would have %d dimensions (at most %d)", nd + 1, MXW_MAX_NDIM);
  mxw_shape o = unknown_shape(nd + 1), b = unknown_shape(nd);
  for (int i = 0; i < nd && in[0].ndim >= 0; i++) o.dims[i < a ? i : i + 1] = in[0].dims[i];
  o.dims[a] = 1;
  MXW_TRY(mxw_shape_assign(&out[0], &o, "output"));
  for (int i = 0; i < nd; i++) b.dims[i] = out[0].dims[i < a ? i : i + 1];
  return mxw_shape_assign(&in[0], &b, "input data");
}
static const mxw_op_def op_expand_dims = {.name = "expand_dims",
                                          .aliases = ALIASES("_npi_expand_dims"),
                                          .doc = MXW_DOC("inserts a size-1 axis at `axis`"),
                                          .attrs = k_expand_dims_attrs,
                                          .num_attrs = 1,
                                          .param_size = sizeof(ExpandDimsParam),
                                          .num_inputs = 1,
                                          .input_names = k_data,
                                          .num_outputs = 1,
                                          .infer_shape = infer_expand_dims,
                                          .forward = fwd_copy_bytes,
                                          .gradient = grad_reshape_back};

/* ==== squeeze ================================================================================== */
typedef struct {
  mxw_tuple axis;
} SqueezeParam;
static const mxw_attr_spec k_squeeze_attrs[] = {
    MXW_A_OPT_SHAPE("axis", SqueezeParam, axis, "None", "the size-1 axes to remove; None removes all"),
};
static int infer_squeeze(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const SqueezeParam *p = (const SqueezeParam *)param;
  const mxw_shape *x = &in[0];
  if (!mxw_shape_known(x)) return 0;
  int nd = x->ndim, drop[MXW_MAX_NDIM] = {0};
  shape_buf xs;
  tuple_buf t;
  if (p->axis.ndim < 0) {
    for (int i = 0; i < nd; i++) drop[i] = x->dims[i] == 1;
  } else {
    for (int i = 0; i < p->axis.ndim; i++) {
      int a;
      if (mxw_normalize_axis(p->axis.v[i], nd, &a) != 0)
        return mxw_fail("axis=%s: axis %lld is out of range for input of shape %s", TUPLE_STR(&p->axis, t),
                        (long long)p->axis.v[i], SHAPE_STR(x, xs));
      MXW_CHECK(x->dims[a] == 1, "cannot squeeze axis %d of input of shape %s: its size is %lld, not 1", a,
                SHAPE_STR(x, xs), (long long)x->dims[a]);
      MXW_CHECK(!drop[a], "axis=%s names axis %d twice", TUPLE_STR(&p->axis, t), a);
      drop[a] = 1;
    }
  }
  mxw_shape o = unknown_shape(0);
  for (int i = 0; i < nd; i++)
    if (!drop[i]) o.dims[o.ndim++] = x->dims[i];
  if (o.ndim == 0) { /* everything squeezed: legacy (1,) */
    o.ndim = 1;
    o.dims[0] = 1;
  }
  return mxw_shape_assign(&out[0], &o, "output");
}
static const mxw_op_def op_squeeze = {.name = "squeeze",
                                      .aliases = ALIASES("_npi_squeeze"),
                                      .doc = MXW_DOC("removes size-1 axes (all of them by default)"),
                                      .attrs = k_squeeze_attrs,
                                      .num_attrs = 1,
                                      .param_size = sizeof(SqueezeParam),
                                      .num_inputs = 1,
                                      .input_names = k_data,
                                      .num_outputs = 1,
                                      .infer_shape = infer_squeeze,
                                      .forward = fwd_copy_bytes,
                                      .gradient = grad_reshape_back};

/* ==== Concat =================================================================================== */
typedef struct {
  int64_t num_args, dim;
} ConcatParam;
static const mxw_attr_spec k_concat_attrs[] = {
    MXW_A_INT("num_args", ConcatParam, num_args, NULL, "number of inputs"),
    MXW_A_INT("dim", ConcatParam, dim, "1", "the axis to join along (negative counts from the end)"),
};
static int validate_num_args(void *param) {
  int64_t n = *(const int64_t *)param; /* num_args is the first field of Concat's and stack's params */
  MXW_CHECK(n >= 1, "num_args must be >= 1, got %lld", (long long)n);
  /* MXNet's num_args is a C int: a larger value is not a count it can hold (nor we: inputs are counted in int) */
  MXW_CHECK(n <= INT32_MAX, "num_args %lld is out of range (at most %d)", (long long)n, INT32_MAX);
  return 0;
}
static int num_inputs_concat(const void *param) { return (int)((const ConcatParam *)param)->num_args; }

static int infer_Concat(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ConcatParam *p = (const ConcatParam *)param;
  shape_buf a, b;
  /* the rank: from any known input or the output */
  int nd = out[0].ndim, from = -1;
  for (int i = 0; i < nin; i++) {
    if (in[i].ndim < 0) continue;
    if (nd >= 0 && in[i].ndim != nd)
      return mxw_fail("input arg%d has shape %s but %s has rank %d; all inputs must have the same rank", i,
                      SHAPE_STR(&in[i], a), from >= 0 ? "another input" : "the output", nd);
    nd = in[i].ndim;
    from = i;
  }
  if (nd < 0) return 0;
  MXW_CHECK(nd > 0, "zero-dimensional arrays cannot be concatenated");
  int axis;
  if (mxw_normalize_axis(p->dim, nd, &axis) != 0)
    return mxw_fail("dim=%lld is out of range for inputs of %d dimensions", (long long)p->dim, nd);
  /* every dim but `axis` is shared by all inputs and the output */
  mxw_shape common = unknown_shape(nd);
  int owner[MXW_MAX_NDIM];
  for (int d = 0; d < nd; d++) owner[d] = -1;
  for (int i = 0; i < nin; i++) {
    if (in[i].ndim < 0) continue;
    for (int d = 0; d < nd; d++) {
      if (d == axis || in[i].dims[d] < 0) continue;
      if (common.dims[d] < 0) {
        common.dims[d] = in[i].dims[d];
        owner[d] = i;
      } else if (common.dims[d] != in[i].dims[d]) {
        return mxw_fail(
            "input arg%d has shape %s, incompatible with arg%d of shape %s: all inputs must agree "
            "except along dim=%d",
            i, SHAPE_STR(&in[i], a), owner[d], SHAPE_STR(&in[owner[d]], b), axis);
      }
    }
  }
  if (out[0].ndim >= 0) {
    for (int d = 0; d < nd; d++) {
      if (d == axis || out[0].dims[d] < 0) continue;
      if (common.dims[d] < 0)
        common.dims[d] = out[0].dims[d];
      else if (common.dims[d] != out[0].dims[d])
        return mxw_fail("output shape %s does not match the inputs, e.g. arg%d of shape %s", SHAPE_STR(&out[0], a),
                        owner[d], SHAPE_STR(&in[owner[d]], b));
    }
  }
  /* fill the shared dims in, then the concatenated one */
  int unknown_at = -1, n_unknown = 0;
  int64_t sum = 0;
  for (int i = 0; i < nin; i++) {
    mxw_shape s = common;
    s.dims[axis] = in[i].ndim >= 0 ? in[i].dims[axis] : -1;
    if (in[i].ndim < 0) in[i] = s;
    for (int d = 0; d < nd; d++)
      if (in[i].dims[d] < 0) in[i].dims[d] = s.dims[d];
    if (in[i].dims[axis] < 0) {
      unknown_at = i;
      n_unknown++;
    } else {
      sum += in[i].dims[axis];
    }
  }
  mxw_shape o = common;
  o.dims[axis] = n_unknown ? -1 : sum;
  MXW_TRY(mxw_shape_assign(&out[0], &o, "output"));
  if (n_unknown == 1 && out[0].dims[axis] >= 0) {
    int64_t rest = out[0].dims[axis] - sum;
    MXW_CHECK(rest >= 0, "output shape %s is smaller along dim=%d than the known inputs", SHAPE_STR(&out[0], a), axis);
    in[unknown_at].dims[axis] = rest;
  }
  return 0;
}
static int fwd_Concat(const mxw_op_call *c) {
  mxw_tensor *out = &c->outputs[0];
  int nd = out->shape.ndim, axis;
  MXW_TRY(mxw_normalize_axis(((const ConcatParam *)c->param)->dim, nd, &axis));
  int64_t ost[MXW_MAX_NDIM], ist[MXW_MAX_NDIM];
  contiguous_strides(&out->shape, ost);
  size_t es = elsize(out);
  int64_t offset = 0;
  for (int k = 0; k < c->num_inputs; k++) {
    const mxw_tensor *in = &c->inputs[k];
    contiguous_strides(&in->shape, ist);
    copy_plan p = {0};
    for (int d = 0; d < nd; d++) plan_push(&p, in->shape.dims[d], ist[d], ost[d]);
    plan_run(&p, es, in->data, (char *)out->data + offset * ost[axis] * (int64_t)es);
    offset += in->shape.dims[axis];
  }
  return 0;
}
/* Each input's gradient is its part of dy along dim (MXNet's _backward_Concat). */
static int grad_Concat(mxw_grad_ctx *g) {
  const ConcatParam *p = (const ConcatParam *)mxw_grad_param(g);
  int axis;
  MXW_TRY(mxw_normalize_axis(p->dim, mxw_grad_out_shape(g, 0)->ndim, &axis));
  mxw_gid og = mxw_grad_ograd(g, 0);
  char ax[24], b[24], e[24];
  snprintf(ax, sizeof ax, "%d", axis);
  int64_t off = 0;
  for (int i = 0; i < mxw_grad_num_inputs(g); i++) {
    int64_t len = mxw_grad_in_shape(g, i)->dims[axis];
    snprintf(b, sizeof b, "%lld", (long long)off);
    snprintf(e, sizeof e, "%lld", (long long)(off + len));
    mxw_gid dx = len == 0 ? mxw_grad_zeros_like(g, mxw_grad_in(g, i))
                          : mxw_grad_op(g, "slice_axis", MXW_KV("axis", ax, "begin", b, "end", e), MXW_GIDS(og));
    MXW_TRY(mxw_grad_set(g, i, dx));
    off += len;
  }
  return 0;
}
static const mxw_op_def op_Concat = {.name = "Concat",
                                     .aliases = ALIASES("concat"),
                                     .doc = MXW_DOC("joins arrays along dim; all other dims must agree"),
                                     .attrs = k_concat_attrs,
                                     .num_attrs = 2,
                                     .param_size = sizeof(ConcatParam),
                                     .validate = validate_num_args,
                                     .num_inputs = MXW_VARIADIC,
                                     .input_names = k_variadic,
                                     .num_inputs_fn = num_inputs_concat,
                                     .num_outputs = 1,
                                     .infer_shape = infer_Concat,
                                     .forward = fwd_Concat,
                                     .gradient = grad_Concat};

/* ==== stack ==================================================================================== */
typedef struct {
  int64_t num_args, axis; /* num_args first: validate_num_args reads it */
} StackParam;
static const mxw_attr_spec k_stack_attrs[] = {
    MXW_A_INT("num_args", StackParam, num_args, NULL, "number of inputs"),
    MXW_A_INT("axis", StackParam, axis, "0", "position of the new axis in the result"),
};
static int num_inputs_stack(const void *param) { return (int)((const StackParam *)param)->num_args; }

static int stack_axis(const StackParam *p, int out_nd, int *axis) {
  if (mxw_normalize_axis(p->axis, out_nd, axis) != 0)
    return mxw_fail("axis=%lld is out of range [%d, %d] for inputs of %d dimensions", (long long)p->axis, -out_nd,
                    out_nd - 1, out_nd - 1);
  return 0;
}
static int infer_stack(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const StackParam *p = (const StackParam *)param;
  mxw_shape common = unknown_shape(-1);
  for (int i = 0; i < nin; i++) MXW_TRY(mxw_shape_assign_nth(&common, &in[i], "input arg%d", i));
  int axis;
  if (out[0].ndim >= 0) { /* the inputs' shape is the output's without the new axis */
    shape_buf a;
    MXW_CHECK(out[0].ndim >= 1, "output shape %s has no axis to stack along", SHAPE_STR(&out[0], a));
    MXW_TRY(stack_axis(p, out[0].ndim, &axis));
    MXW_CHECK(out[0].dims[axis] < 0 || out[0].dims[axis] == p->num_args,
              "output shape %s has size %lld along axis %d, but num_args=%lld", SHAPE_STR(&out[0], a),
              (long long)out[0].dims[axis], axis, (long long)p->num_args);
    mxw_shape b = unknown_shape(out[0].ndim - 1);
    for (int d = 0; d < b.ndim; d++) b.dims[d] = out[0].dims[d < axis ? d : d + 1];
    MXW_TRY(mxw_shape_assign(&common, &b, "output"));
  }
  if (common.ndim < 0) return 0;
  MXW_CHECK(common.ndim + 1 <= MXW_MAX_NDIM, "the result would have %d dimensions (at most %d)", common.ndim + 1,
            MXW_MAX_NDIM);
  MXW_TRY(stack_axis(p, common.ndim + 1, &axis));
  mxw_shape o = unknown_shape(common.ndim + 1);
  for (int d = 0; d < common.ndim; d++) o.dims[d < axis ? d : d + 1] = common.dims[d];
  o.dims[axis] = p->num_args;
  MXW_TRY(mxw_shape_assign(&out[0], &o, "output"));
  for (int i = 0; i < nin; i++) MXW_TRY(mxw_shape_assign(&in[i], &common, "input"));
  return 0;
}
static int fwd_stack(const mxw_op_call *c) {
  mxw_tensor *out = &c->outputs[0];
  int axis;
  MXW_TRY(stack_axis((const StackParam *)c->param, out->shape.ndim, &axis));
  int64_t ost[MXW_MAX_NDIM], ist[MXW_MAX_NDIM];
  contiguous_strides(&out->shape, ost);
  size_t es = elsize(out);
  for (int k = 0; k < c->num_inputs; k++) {
    const mxw_tensor *in = &c->inputs[k];
    contiguous_strides(&in->shape, ist);
    copy_plan p = {0};
    for (int d = 0; d < in->shape.ndim; d++) plan_push(&p, in->shape.dims[d], ist[d], ost[d < axis ? d : d + 1]);
    plan_run(&p, es, in->data, (char *)out->data + k * ost[axis] * (int64_t)es);
  }
  return 0;
}
/* Input k's gradient is dy's k-th entry along the new axis: dy split with the axis squeezed
 * (MXNet's _backward_stack). */
static int grad_stack(mxw_grad_ctx *g) {
  const StackParam *p = (const StackParam *)mxw_grad_param(g);
  int n = mxw_grad_num_inputs(g), axis;
  MXW_TRY(stack_axis(p, mxw_grad_out_shape(g, 0)->ndim, &axis));
  char num[24], ax[24];
  snprintf(num, sizeof num, "%d", n);
  snprintf(ax, sizeof ax, "%d", axis);
  mxw_gid *dx = (mxw_gid *)malloc(sizeof(mxw_gid) * (size_t)(n > 0 ? n : 1));
  MXW_CHECK(dx != NULL, "out of memory");
  int rc = mxw_grad_op_n(g, "SliceChannel", MXW_KV("num_outputs", num, "axis", ax, "squeeze_axis", "True"),
                         MXW_GIDS(mxw_grad_ograd(g, 0)), dx, n);
  for (int i = 0; i < n && rc == 0; i++) rc = mxw_grad_set(g, i, dx[i]);
  free(dx);
  return rc;
}
static const mxw_op_def op_stack = {.name = "stack",
                                    .aliases = ALIASES("_npi_stack"),
                                    .doc = MXW_DOC("joins same-shape arrays along a new axis"),
                                    .attrs = k_stack_attrs,
                                    .num_attrs = 2,
                                    .param_size = sizeof(StackParam),
                                    .validate = validate_num_args,
                                    .num_inputs = MXW_VARIADIC,
                                    .input_names = k_variadic,
                                    .num_inputs_fn = num_inputs_stack,
                                    .num_outputs = 1,
                                    .infer_shape = infer_stack,
                                    .forward = fwd_stack,
                                    .gradient = grad_stack};

/* ==== SliceChannel ============================================================================= */
typedef struct {
  int64_t num_outputs, axis;
  int squeeze_axis;
} SliceChannelParam;
static const mxw_attr_spec k_slice_channel_attrs[] = {
    MXW_A_INT("num_outputs", SliceChannelParam, num_outputs, NULL, "number of equal parts"),
    MXW_A_INT("axis", SliceChannelParam, axis, "1", "the axis to split"),
    MXW_A_BOOL("squeeze_axis", SliceChannelParam, squeeze_axis, "False", "drop the split axis (its parts have size 1)"),
};
static int validate_SliceChannel(void *param) {
  const SliceChannelParam *p = (const SliceChannelParam *)param;
  MXW_CHECK(p->num_outputs >= 1, "num_outputs must be >= 1, got %lld", (long long)p->num_outputs);
  MXW_CHECK(p->num_outputs <= INT32_MAX, "num_outputs %lld is out of range (at most %d)", (long long)p->num_outputs,
            INT32_MAX);
  return 0;
}
static int num_outputs_slice_channel(const void *param) { return (int)((const SliceChannelParam *)param)->num_outputs; }

static int infer_SliceChannel(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const SliceChannelParam *p = (const SliceChannelParam *)param;
  mxw_shape *x = &in[0];
  if (x->ndim < 0) return 0;
  shape_buf xs;
  int axis;
  if (mxw_normalize_axis(p->axis, x->ndim, &axis) != 0)
    return mxw_fail("axis=%lld is out of range for input of shape %s", (long long)p->axis, SHAPE_STR(x, xs));
  int64_t n = p->num_outputs, len = x->dims[axis];
  MXW_CHECK(len < 0 || len % n == 0, "cannot split axis %d of input of shape %s into num_outputs=%lld equal parts",
            axis, SHAPE_STR(x, xs), (long long)n);
  MXW_CHECK(!p->squeeze_axis || len < 0 || len == n,
            "squeeze_axis=True needs axis %d of the input to have size num_outputs=%lld, but the input is %s", axis,
            (long long)n, SHAPE_STR(x, xs));
  mxw_shape o = *x;
  o.dims[axis] = len < 0 ? -1 : len / n;
  if (p->squeeze_axis) {
    for (int d = axis; d + 1 < o.ndim; d++) o.dims[d] = o.dims[d + 1];
    o.ndim--;
  }
  for (int i = 0; i < nout; i++) {
    MXW_TRY(mxw_shape_assign_nth(&out[i], &o, "output%d", i));
    /* each output pins down the input's other dims */
    mxw_shape b = unknown_shape(x->ndim);
    for (int d = 0; d < x->ndim; d++) {
      if (p->squeeze_axis)
        b.dims[d] = d == axis ? n : out[i].dims[d < axis ? d : d - 1];
      else
        b.dims[d] = d == axis ? (out[i].dims[d] < 0 ? -1 : out[i].dims[d] * n) : out[i].dims[d];
    }
    MXW_TRY(mxw_shape_assign(x, &b, "input data"));
  }
  return 0;
}
static int fwd_SliceChannel(const mxw_op_call *c) {
  const SliceChannelParam *p = (const SliceChannelParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  int nd = in->shape.ndim, axis;
  MXW_TRY(mxw_normalize_axis(p->axis, nd, &axis));
  int64_t part = in->shape.dims[axis] / p->num_outputs;
  mxw_shape ps = in->shape; /* one part, axis kept */
  ps.dims[axis] = part;
  int64_t ist[MXW_MAX_NDIM], pst[MXW_MAX_NDIM];
  contiguous_strides(&in->shape, ist);
  contiguous_strides(&ps, pst);
  size_t es = elsize(in);
  for (int k = 0; k < c->num_outputs; k++) {
    copy_plan pl = {0};
    for (int d = 0; d < nd; d++) plan_push(&pl, ps.dims[d], ist[d], pst[d]);
    plan_run(&pl, es, (const char *)in->data + k * part * ist[axis] * (int64_t)es, c->outputs[k].data);
  }
  return 0;
}
/* The parts' gradients joined again: Concat along the axis, or stack when the axis was squeezed
 * (outputs without a gradient contribute zeros). */
static int grad_SliceChannel(mxw_grad_ctx *g) {
  const SliceChannelParam *p = (const SliceChannelParam *)mxw_grad_param(g);
  int n = mxw_grad_num_outputs(g), axis;
  MXW_TRY(mxw_normalize_axis(p->axis, mxw_grad_in_shape(g, 0)->ndim, &axis));
  mxw_gid *og = (mxw_gid *)malloc(sizeof(mxw_gid) * (size_t)(n > 0 ? n : 1));
  MXW_CHECK(og != NULL, "out of memory");
  for (int i = 0; i < n; i++) og[i] = mxw_grad_ograd(g, i);
  char num[24], ax[24];
  snprintf(num, sizeof num, "%d", n);
  snprintf(ax, sizeof ax, "%d", axis);
  mxw_gid dx = p->squeeze_axis ? mxw_grad_op(g, "stack", MXW_KV("num_args", num, "axis", ax), og, n)
                               : mxw_grad_op(g, "Concat", MXW_KV("num_args", num, "dim", ax), og, n);
  free(og);
  return mxw_grad_set(g, 0, dx);
}
static const mxw_op_def op_SliceChannel = {.name = "SliceChannel",
                                           .aliases = ALIASES("split"),
                                           .doc = MXW_DOC("splits an axis into num_outputs equal parts"),
                                           .attrs = k_slice_channel_attrs,
                                           .num_attrs = 3,
                                           .param_size = sizeof(SliceChannelParam),
                                           .validate = validate_SliceChannel,
                                           .num_inputs = 1,
                                           .input_names = k_data,
                                           .num_outputs = 1,
                                           .num_outputs_fn = num_outputs_slice_channel,
                                           .infer_shape = infer_SliceChannel,
                                           .forward = fwd_SliceChannel,
                                           .gradient = grad_SliceChannel};

/* ==== _split_v2 ================================================================================= */
/* MXNet's _split_v2 (matrix_op-inl.h; Python's split_v2 passes indices starting with 0): the parts
 * [indices[i], indices[i + 1]) of the axis, the last one to the end; with sections > 0, that many
 * equal parts. Each part must be non-empty (start < end <= the axis size). */
typedef struct {
  mxw_tuple indices;
  int64_t axis;
  int squeeze_axis;
  int64_t sections;
} SplitV2Param;
static const mxw_attr_spec k_split_v2_attrs[] = {
    MXW_A_SHAPE("indices", SplitV2Param, indices, NULL, "the parts' first indices along the axis"),
    MXW_A_INT("axis", SplitV2Param, axis, "1", "the axis to split"),
    MXW_A_BOOL("squeeze_axis", SplitV2Param, squeeze_axis, "False", "drop the split axis (its parts have size 1)"),
    MXW_A_INT("sections", SplitV2Param, sections, "0", "equal parts (0: split at indices)"),
};
static int validate_split_v2(void *param) {
  const SplitV2Param *p = (const SplitV2Param *)param;
  MXW_CHECK(p->sections >= 0 && p->sections <= 65536, "sections must be in [0, 65536], got %lld",
            (long long)p->sections);
  MXW_CHECK(p->sections > 0 || p->indices.ndim >= 1, "indices must list at least one index (or give sections)");
  return 0;
}
static int num_outputs_split_v2(const void *param) {
  const SplitV2Param *p = (const SplitV2Param *)param;
  return p->sections > 0 ? (int)p->sections : p->indices.ndim;
}
/* The parts' start indices (n of them) and the axis, for an input of shape x. */
static int split_v2_points(const SplitV2Param *p, const mxw_shape *x, int *axis, int64_t *pts, int *n) {
  shape_buf xs;
  if (mxw_normalize_axis(p->axis, x->ndim, axis) != 0)
    return mxw_fail("axis=%lld is out of range for input of shape %s", (long long)p->axis, SHAPE_STR(x, xs));
  const int64_t len = x->dims[*axis];
  *n = num_outputs_split_v2(p);
  if (p->sections > 0) {
    MXW_CHECK(len % p->sections == 0, "cannot split axis %d of input of shape %s into sections=%lld equal parts", *axis,
              SHAPE_STR(x, xs), (long long)p->sections);
    for (int i = 0; i < *n; i++) pts[i] = i * (len / p->sections);
  } else {
    for (int i = 0; i < *n; i++) pts[i] = p->indices.v[i];
  }
  for (int i = 0; i < *n; i++) {
    const int64_t start = pts[i], end = i + 1 < *n ? pts[i + 1] : len;
    MXW_CHECK(start >= 0 && start < end && end <= len,
              "part %d would be [%lld, %lld) of axis %d of size %lld: indices must increase and stay below the size", i,
              (long long)start, (long long)end, *axis, (long long)len);
    MXW_CHECK(!p->squeeze_axis || end - start == 1, "squeeze_axis=True needs parts of size 1, part %d has %lld", i,
              (long long)(end - start));
  }
  return 0;
}
static int infer_split_v2(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const SplitV2Param *p = (const SplitV2Param *)param;
  (void)nin;
  const mxw_shape *x = &in[0];
  if (x->ndim < 0) return 0;
  for (int d = 0; d < x->ndim; d++)
    if (x->dims[d] < 0) return 0;
  int axis, n;
  int64_t *pts = (int64_t *)malloc(sizeof(int64_t) * (size_t)(nout > 0 ? nout : 1));
  MXW_CHECK(pts != NULL, "out of memory");
  if (split_v2_points(p, x, &axis, pts, &n) != 0) {
    free(pts);
    return -1;
  }
  int rc = 0;
  for (int i = 0; i < n && i < nout && rc == 0; i++) {
    mxw_shape o = *x;
    o.dims[axis] = (i + 1 < n ? pts[i + 1] : x->dims[axis]) - pts[i];
    if (p->squeeze_axis) {
      for (int d = axis; d + 1 < o.ndim; d++) o.dims[d] = o.dims[d + 1];
      o.ndim--;
    }
    rc = mxw_shape_assign_nth(&out[i], &o, "output%d", i);
  }
  free(pts);
  return rc;
}
static int fwd_split_v2(const mxw_op_call *c) {
  const SplitV2Param *p = (const SplitV2Param *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  const int nd = in->shape.ndim;
  int axis, n;
  int64_t *pts = (int64_t *)malloc(sizeof(int64_t) * (size_t)(c->num_outputs > 0 ? c->num_outputs : 1));
  MXW_CHECK(pts != NULL, "out of memory");
  if (split_v2_points(p, &in->shape, &axis, pts, &n) != 0) {
    free(pts);
    return -1;
  }
  int64_t ist[MXW_MAX_NDIM], pst[MXW_MAX_NDIM];
  contiguous_strides(&in->shape, ist);
  const size_t es = elsize(in);
  for (int k = 0; k < n; k++) {
    mxw_shape ps = in->shape;
    ps.dims[axis] = (k + 1 < n ? pts[k + 1] : in->shape.dims[axis]) - pts[k];
    contiguous_strides(&ps, pst);
    copy_plan pl = {0};
    for (int d = 0; d < nd; d++) plan_push(&pl, ps.dims[d], ist[d], pst[d]);
    plan_run(&pl, es, (const char *)in->data + pts[k] * ist[axis] * (int64_t)es, c->outputs[k].data);
  }
  free(pts);
  return 0;
}
/* The parts' gradients joined (stack when squeezed), after zeros for the axis before indices[0]. */
static int grad_split_v2(mxw_grad_ctx *g) {
  const SplitV2Param *p = (const SplitV2Param *)mxw_grad_param(g);
  const int n = mxw_grad_num_outputs(g);
  int axis;
  MXW_TRY(mxw_normalize_axis(p->axis, mxw_grad_in_shape(g, 0)->ndim, &axis));
  const int64_t first = p->sections > 0 ? 0 : p->indices.v[0];
  mxw_gid *og = (mxw_gid *)malloc(sizeof(mxw_gid) * (size_t)(n + 1));
  MXW_CHECK(og != NULL, "out of memory");
  int k = 0;
  char num[24], ax[24], end[32];
  snprintf(ax, sizeof ax, "%d", axis);
  if (first > 0) {
    snprintf(end, sizeof end, "%lld", (long long)first);
    og[k++] = mxw_grad_op(g, "slice_axis", MXW_KV("axis", ax, "begin", "0", "end", end),
                          MXW_GIDS(mxw_grad_zeros_like(g, mxw_grad_in(g, 0))));
  }
  for (int i = 0; i < n; i++) {
    mxw_gid o = mxw_grad_ograd(g, i);
    if (p->squeeze_axis) o = mxw_grad_op(g, "expand_dims", MXW_KV("axis", ax), MXW_GIDS(o));
    og[k++] = o;
  }
  snprintf(num, sizeof num, "%d", k);
  const mxw_gid dx = mxw_grad_op(g, "Concat", MXW_KV("num_args", num, "dim", ax), og, k);
  free(og);
  return mxw_grad_set(g, 0, dx);
}
static const mxw_op_def op_split_v2 = {.name = "_split_v2",
                                       .doc = MXW_DOC("splits an axis at the given indices (or into equal sections)"),
                                       .attrs = k_split_v2_attrs,
                                       .num_attrs = 4,
                                       .param_size = sizeof(SplitV2Param),
                                       .validate = validate_split_v2,
                                       .num_inputs = 1,
                                       .input_names = k_data,
                                       .num_outputs = 1,
                                       .num_outputs_fn = num_outputs_split_v2,
                                       .infer_shape = infer_split_v2,
                                       .forward = fwd_split_v2,
                                       .gradient = grad_split_v2};

/* ==== slice ==================================================================================== */
typedef struct {
  mxw_tuple begin, end, step;
} SliceParam;
static const mxw_attr_spec k_slice_attrs[] = {
    MXW_A_OPT_TUPLE("begin", SliceParam, begin, NULL, "start index per axis (None: from the start)"),
    MXW_A_OPT_TUPLE("end", SliceParam, end, NULL, "end index per axis, exclusive (None: to the end)"),
    MXW_A_OPT_TUPLE("step", SliceParam, step, "()", "step per axis (None or omitted: 1; negative walks back)"),
};
static int validate_slice(void *param) {
  const SliceParam *p = (const SliceParam *)param;
  return mxw_slice_check(&p->begin, &p->end, &p->step);
}

typedef mxw_axis_range axis_range;

static int slice_ranges(const SliceParam *p, const mxw_shape *x, axis_range *r) {
  return mxw_slice_ranges(&p->begin, &p->end, &p->step, x, r);
}

/* Copies the strided box `r` of `in` into `out` (out has shape r[*].len). */
static void copy_box(const mxw_tensor *in, mxw_tensor *out, const axis_range *r) {
  int nd = in->shape.ndim;
  int64_t ist[MXW_MAX_NDIM], ost[MXW_MAX_NDIM], base = 0;
  contiguous_strides(&in->shape, ist);
  contiguous_strides(&out->shape, ost);
  copy_plan p = {0};
  for (int d = 0; d < nd; d++) {
    if (r[d].len == 0) return;
    base += r[d].begin * ist[d];
    plan_push(&p, r[d].len, r[d].step * ist[d], ost[d]);
  }
  size_t es = elsize(in);
  plan_run(&p, es, (const char *)in->data + base * (int64_t)es, out->data);
}

/* The adjoint of copy_box: zeros of gx's shape with the strided box `r` set to gy (MXNet's
 * _backward_slice; the box's elements are distinct, so a copy suffices). */
static void scatter_box(const mxw_tensor *gy, mxw_tensor *gx, const axis_range *r) {
  zero_tensor(gx);
  int nd = gx->shape.ndim;
  int64_t xst[MXW_MAX_NDIM], yst[MXW_MAX_NDIM], base = 0;
  contiguous_strides(&gx->shape, xst);
  contiguous_strides(&gy->shape, yst);
  copy_plan p = {0};
  for (int d = 0; d < nd; d++) {
    if (r[d].len == 0) return;
    base += r[d].begin * xst[d];
    plan_push(&p, r[d].len, yst[d], r[d].step * xst[d]);
  }
  size_t es = elsize(gx);
  plan_run(&p, es, gy->data, (char *)gx->data + base * (int64_t)es);
}

static int infer_slice(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  if (in[0].ndim < 0) return 0;
  axis_range r[MXW_MAX_NDIM];
  MXW_TRY(slice_ranges((const SliceParam *)param, &in[0], r));
  mxw_shape o = unknown_shape(in[0].ndim);
  for (int d = 0; d < o.ndim; d++) o.dims[d] = r[d].len;
  return mxw_shape_assign(&out[0], &o, "output");
}
static int fwd_slice(const mxw_op_call *c) {
  axis_range r[MXW_MAX_NDIM];
  MXW_TRY(slice_ranges((const SliceParam *)c->param, &c->inputs[0].shape, r));
  copy_box(&c->inputs[0], &c->outputs[0], r);
  return 0;
}
/* dx = zeros with dx[begin:end:step] = dy (_backward_slice, which reads data's shape). */
static int grad_box(mxw_grad_ctx *g, const char *backward_op) {
  mxw_gid dx;
  MXW_TRY(mxw_grad_op_fwd(g, backward_op, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}
static int grad_slice(mxw_grad_ctx *g) { return grad_box(g, "_backward_slice"); }
static const mxw_op_def op_slice = {.name = "slice",
                                    .aliases = ALIASES("crop", "_npx_slice"),
                                    .doc = MXW_DOC("x[begin:end:step] per axis (numpy rules, None entries allowed)"),
                                    .attrs = k_slice_attrs,
                                    .num_attrs = 3,
                                    .param_size = sizeof(SliceParam),
                                    .validate = validate_slice,
                                    .num_inputs = 1,
                                    .input_names = k_data,
                                    .num_outputs = 1,
                                    .infer_shape = infer_slice,
                                    .forward = fwd_slice,
                                    .gradient = grad_slice};

static int fwd_backward_slice(const mxw_op_call *c) {
  axis_range r[MXW_MAX_NDIM];
  MXW_TRY(slice_ranges((const SliceParam *)c->param, &c->outputs[0].shape, r));
  scatter_box(&c->inputs[0], &c->outputs[0], r);
  return 0;
}
/* _backward_slice is linear in ograd: its own gradient is the slice again. */
static int grad_backward_slice(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "slice", 0); }
static const mxw_op_def op_backward_slice = {
    .name = "_backward_slice",
    .doc = MXW_DOC("the gradient of slice: zeros of data's shape with the box set to ograd"),
    .attrs = k_slice_attrs,
    .num_attrs = 3,
    .param_size = sizeof(SliceParam),
    .validate = validate_slice,
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = infer_backward_like_data,
    .forward = fwd_backward_slice,
    .gradient = grad_backward_slice};

/* ==== slice_axis =============================================================================== */
typedef struct {
  int64_t axis, begin;
  mxw_opt_int end;
} SliceAxisParam;
static const mxw_attr_spec k_slice_axis_attrs[] = {
    MXW_A_INT("axis", SliceAxisParam, axis, NULL, "the axis to slice"),
    MXW_A_INT("begin", SliceAxisParam, begin, NULL, "start index (negative counts from the end)"),
    MXW_A_OPT_INT("end", SliceAxisParam, end, NULL, "end index, exclusive; None = to the end"),
};
static int slice_axis_ranges(const SliceAxisParam *p, const mxw_shape *x, axis_range *r) {
  shape_buf xs;
  int axis;
  if (mxw_normalize_axis(p->axis, x->ndim, &axis) != 0)
    return mxw_fail("axis=%lld is out of range for input of shape %s", (long long)p->axis, SHAPE_STR(x, xs));
  for (int d = 0; d < x->ndim; d++) r[d] = (axis_range){0, 1, x->dims[d]};
  int64_t L = x->dims[axis];
  if (L < 0) return 0;
  int64_t b = p->begin < 0 ? p->begin + L : p->begin, e = 0;
  char end_s[32];
  if (p->end.has)
    snprintf(end_s, sizeof end_s, "%lld", (long long)p->end.v);
  else
    snprintf(end_s, sizeof end_s, "None");
  if (L > 0) {
    e = p->end.has ? (p->end.v < 0 ? p->end.v + L : p->end.v) : L;
    MXW_CHECK(e <= L && b >= 0 && b < e,
              "begin=%lld, end=%s is not a non-empty range of axis %d (size %lld) of input of shape %s",
              (long long)p->begin, end_s, axis, (long long)L, SHAPE_STR(x, xs));
  } else {
    b = 0;
  }
  r[axis].begin = b;
  r[axis].len = e - b;
  return 0;
}
static int infer_slice_axis(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  if (in[0].ndim < 0) return 0;
  axis_range r[MXW_MAX_NDIM];
  MXW_TRY(slice_axis_ranges((const SliceAxisParam *)param, &in[0], r));
  mxw_shape o = unknown_shape(in[0].ndim);
  for (int d = 0; d < o.ndim; d++) o.dims[d] = r[d].len;
  return mxw_shape_assign(&out[0], &o, "output");
}
static int fwd_slice_axis(const mxw_op_call *c) {
  axis_range r[MXW_MAX_NDIM];
  MXW_TRY(slice_axis_ranges((const SliceAxisParam *)c->param, &c->inputs[0].shape, r));
  copy_box(&c->inputs[0], &c->outputs[0], r);
  return 0;
}
static int grad_slice_axis(mxw_grad_ctx *g) { return grad_box(g, "_backward_slice_axis"); }
static const mxw_op_def op_slice_axis = {.name = "slice_axis",
                                         .doc = MXW_DOC("x[begin:end] along one axis"),
                                         .attrs = k_slice_axis_attrs,
                                         .num_attrs = 3,
                                         .param_size = sizeof(SliceAxisParam),
                                         .num_inputs = 1,
                                         .input_names = k_data,
                                         .num_outputs = 1,
                                         .infer_shape = infer_slice_axis,
                                         .forward = fwd_slice_axis,
                                         .gradient = grad_slice_axis};

static int fwd_backward_slice_axis(const mxw_op_call *c) {
  axis_range r[MXW_MAX_NDIM];
  MXW_TRY(slice_axis_ranges((const SliceAxisParam *)c->param, &c->outputs[0].shape, r));
  scatter_box(&c->inputs[0], &c->outputs[0], r);
  return 0;
}
static int grad_backward_slice_axis(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "slice_axis", 0); }
static const mxw_op_def op_backward_slice_axis = {
    .name = "_backward_slice_axis",
    .doc = MXW_DOC("the gradient of slice_axis: zeros of data's shape with the range set to ograd"),
    .attrs = k_slice_axis_attrs,
    .num_attrs = 3,
    .param_size = sizeof(SliceAxisParam),
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = infer_backward_like_data,
    .forward = fwd_backward_slice_axis,
    .gradient = grad_backward_slice_axis};

/* ==== slice_like =============================================================================== */
typedef struct {
  mxw_tuple axes;
} SliceLikeParam;
static const mxw_attr_spec k_slice_like_attrs[] = {
    MXW_A_SHAPE("axes", SliceLikeParam, axes, "()", "axes to slice to shape_like's size; () = all"),
};
static const char *const k_slice_like_inputs[] = {"data", "shape_like", NULL};

static int slice_like_shape(const SliceLikeParam *p, const mxw_shape *x, const mxw_shape *like, mxw_shape *o) {
  shape_buf xs, ls;
  *o = *x;
  if (p->axes.ndim <= 0) {
    MXW_CHECK(x->ndim == like->ndim, "data %s and shape_like %s differ in rank (axes=() slices every axis)",
              SHAPE_STR(x, xs), SHAPE_STR(like, ls));
    for (int d = 0; d < x->ndim; d++) {
      MXW_CHECK(like->dims[d] <= x->dims[d], "shape_like %s is larger than data %s along axis %d", SHAPE_STR(like, ls),
                SHAPE_STR(x, xs), d);
      o->dims[d] = like->dims[d];
    }
    return 0;
  }
  for (int i = 0; i < p->axes.ndim; i++) {
    int64_t a = p->axes.v[i] < 0 ? p->axes.v[i] + x->ndim : p->axes.v[i];
    MXW_CHECK(a >= 0 && a < x->ndim && a < like->ndim, "axis %lld is out of range for data %s or shape_like %s",
              (long long)p->axes.v[i], SHAPE_STR(x, xs), SHAPE_STR(like, ls));
    MXW_CHECK(like->dims[a] <= x->dims[a], "shape_like %s is larger than data %s along axis %lld", SHAPE_STR(like, ls),
              SHAPE_STR(x, xs), (long long)a);
    o->dims[a] = like->dims[a];
  }
  return 0;
}
static int infer_slice_like(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  if (!mxw_shape_known(&in[0]) || !mxw_shape_known(&in[1])) return 0;
  mxw_shape o;
  MXW_TRY(slice_like_shape((const SliceLikeParam *)param, &in[0], &in[1], &o));
  return mxw_shape_assign(&out[0], &o, "output");
}
static int fwd_slice_like(const mxw_op_call *c) {
  axis_range r[MXW_MAX_NDIM];
  for (int d = 0; d < c->outputs[0].shape.ndim; d++) r[d] = (axis_range){0, 1, c->outputs[0].shape.dims[d]};
  copy_box(&c->inputs[0], &c->outputs[0], r);
  return 0;
}
/* data gets dy in its leading box; shape_like lends only its shape (no gradient). */
static int grad_slice_like(mxw_grad_ctx *g) { return grad_box(g, "_backward_slice_like"); }
static const mxw_op_def op_slice_like = {.name = "slice_like",
                                         .doc = MXW_DOC("data sliced from the start to shape_like's size along `axes`"),
                                         .attrs = k_slice_like_attrs,
                                         .num_attrs = 1,
                                         .param_size = sizeof(SliceLikeParam),
                                         .num_inputs = 2,
                                         .input_names = k_slice_like_inputs,
                                         .num_outputs = 1,
                                         .infer_shape = infer_slice_like,
                                         .infer_type = infer_type_first,
                                         .forward = fwd_slice_like,
                                         .gradient = grad_slice_like};

static int fwd_backward_slice_like(const mxw_op_call *c) {
  axis_range r[MXW_MAX_NDIM];
  for (int d = 0; d < c->inputs[0].shape.ndim; d++) r[d] = (axis_range){0, 1, c->inputs[0].shape.dims[d]};
  scatter_box(&c->inputs[0], &c->outputs[0], r);
  return 0;
}
/* its gradient: gg sliced like ograd */
static int grad_backward_slice_like(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "slice_like", 1); }
static const mxw_op_def op_backward_slice_like = {
    .name = "_backward_slice_like",
    .doc = MXW_DOC("the gradient of slice_like: zeros of data's shape with the leading box set to ograd"),
    .attrs = k_slice_like_attrs,
    .num_attrs = 1,
    .param_size = sizeof(SliceLikeParam),
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = infer_backward_like_data,
    .forward = fwd_backward_slice_like,
    .gradient = grad_backward_slice_like};

/* ==== broadcast_to / broadcast_like ============================================================ */
/* Output dims where the input has size 1 repeat its element: source stride 0. */
static int fwd_broadcast(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int64_t ist[MXW_MAX_NDIM], ost[MXW_MAX_NDIM];
  contiguous_strides(&in->shape, ist);
  contiguous_strides(&out->shape, ost);
  copy_plan p = {0};
  for (int d = 0; d < out->shape.ndim; d++)
    plan_push(&p, out->shape.dims[d], in->shape.dims[d] == 1 ? 0 : ist[d], ost[d]);
  plan_run(&p, elsize(in), in->data, out->data);
  return 0;
}

/* dx = dy summed over the axes lhs was broadcast along (MXNet's _broadcast_backward); broadcast_like's
 * rhs lends only its shape. */
static int grad_broadcast(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, mxw_grad_reduce_to_input(g, mxw_grad_ograd(g, 0), 0));
}

typedef struct {
  mxw_tuple shape;
} BroadcastToParam;
static const mxw_attr_spec k_broadcast_to_attrs[] = {
    MXW_A_SHAPE("shape", BroadcastToParam, shape, "()", "target shape; 0 keeps the input's size"),
};
static int infer_broadcast_to(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const BroadcastToParam *p = (const BroadcastToParam *)param;
  const mxw_shape *x = &in[0];
  if (!mxw_shape_known(x)) return 0;
  shape_buf xs;
  tuple_buf t;
  MXW_CHECK(x->ndim == p->shape.ndim, "input of shape %s cannot be broadcast to shape=%s (ranks differ)",
            SHAPE_STR(x, xs), TUPLE_STR(&p->shape, t));
  mxw_shape o = *x;
  for (int d = 0; d < x->ndim; d++) {
    int64_t v = p->shape.v[d];
    MXW_CHECK(v >= 0, "shape=%s: sizes must be >= 0", TUPLE_STR(&p->shape, t));
    if (v == 0) continue;
    MXW_CHECK(x->dims[d] == v || x->dims[d] == 1,
              "input of shape %s cannot be broadcast to shape=%s: axis %d has size %lld (only size-1 axes grow)",
              SHAPE_STR(x, xs), TUPLE_STR(&p->shape, t), d, (long long)x->dims[d]);
    o.dims[d] = v;
  }
  return mxw_shape_assign(&out[0], &o, "output");
}
static const mxw_op_def op_broadcast_to = {.name = "broadcast_to",
                                           .doc = MXW_DOC("repeats size-1 axes up to `shape`"),
                                           .attrs = k_broadcast_to_attrs,
                                           .num_attrs = 1,
                                           .param_size = sizeof(BroadcastToParam),
                                           .num_inputs = 1,
                                           .input_names = k_data,
                                           .num_outputs = 1,
                                           .infer_shape = infer_broadcast_to,
                                           .forward = fwd_broadcast,
                                           .gradient = grad_broadcast};

typedef struct {
  mxw_tuple lhs_axes, rhs_axes;
} BroadcastLikeParam;
static const mxw_attr_spec k_broadcast_like_attrs[] = {
    MXW_A_OPT_SHAPE("lhs_axes", BroadcastLikeParam, lhs_axes, "None", "axes of lhs to broadcast"),
    MXW_A_OPT_SHAPE("rhs_axes", BroadcastLikeParam, rhs_axes, "None", "axes of rhs giving their sizes"),
};
static int validate_broadcast_like(void *param) {
  const BroadcastLikeParam *p = (const BroadcastLikeParam *)param;
  if (p->lhs_axes.ndim < 0 || p->rhs_axes.ndim < 0) return 0; /* either None: whole-shape mode */
  tuple_buf a, b;
  MXW_CHECK(p->lhs_axes.ndim == p->rhs_axes.ndim, "lhs_axes=%s and rhs_axes=%s must have the same length",
            TUPLE_STR(&p->lhs_axes, a), TUPLE_STR(&p->rhs_axes, b));
  MXW_CHECK(p->lhs_axes.ndim > 0, "lhs_axes and rhs_axes must not be empty");
  return 0;
}
static int infer_broadcast_like(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const BroadcastLikeParam *p = (const BroadcastLikeParam *)param;
  const mxw_shape *l = &in[0], *r = &in[1];
  if (!mxw_shape_known(l) || !mxw_shape_known(r)) return 0;
  shape_buf ls, rs;
  mxw_shape o = *l;
  if (p->lhs_axes.ndim < 0 || p->rhs_axes.ndim < 0) {
    MXW_CHECK(l->ndim == r->ndim, "lhs of shape %s cannot be broadcast like rhs of shape %s (ranks differ)",
              SHAPE_STR(l, ls), SHAPE_STR(r, rs));
    for (int d = 0; d < l->ndim; d++) {
      MXW_CHECK(l->dims[d] == r->dims[d] || l->dims[d] == 1,
                "lhs of shape %s cannot be broadcast like rhs of shape %s: axis %d has size %lld (only size-1 axes "
                "grow)",
                SHAPE_STR(l, ls), SHAPE_STR(r, rs), d, (long long)l->dims[d]);
      o.dims[d] = r->dims[d];
    }
  } else {
    for (int i = 0; i < p->lhs_axes.ndim; i++) {
      int la, ra;
      if (mxw_normalize_axis(p->lhs_axes.v[i], l->ndim, &la) != 0)
        return mxw_fail("lhs_axes: axis %lld is out of range for lhs of shape %s", (long long)p->lhs_axes.v[i],
                        SHAPE_STR(l, ls));
      if (mxw_normalize_axis(p->rhs_axes.v[i], r->ndim, &ra) != 0)
        return mxw_fail("rhs_axes: axis %lld is out of range for rhs of shape %s", (long long)p->rhs_axes.v[i],
                        SHAPE_STR(r, rs));
      MXW_CHECK(l->dims[la] == 1 || l->dims[la] == r->dims[ra],
                "axis %d of lhs %s has size %lld and cannot be broadcast to %lld (axis %d of rhs %s)", la,
                SHAPE_STR(l, ls), (long long)l->dims[la], (long long)r->dims[ra], ra, SHAPE_STR(r, rs));
      o.dims[la] = r->dims[ra];
    }
  }
  return mxw_shape_assign(&out[0], &o, "output");
}
static const mxw_op_def op_broadcast_like = {
    .name = "broadcast_like",
    .doc = MXW_DOC("broadcasts lhs to rhs's shape (or to rhs's sizes on chosen axes)"),
    .attrs = k_broadcast_like_attrs,
    .num_attrs = 2,
    .param_size = sizeof(BroadcastLikeParam),
    .validate = validate_broadcast_like,
    .num_inputs = 2,
    .input_names = k_lhs_rhs,
    .num_outputs = 1,
    .infer_shape = infer_broadcast_like,
    .infer_type = infer_type_first,
    .forward = fwd_broadcast,
    .gradient = grad_broadcast};

/* ==== reshape_like ============================================================================= */
typedef struct {
  mxw_opt_int lhs_begin, lhs_end, rhs_begin, rhs_end;
} ReshapeLikeParam;
static const mxw_attr_spec k_reshape_like_attrs[] = {
    MXW_A_OPT_INT("lhs_begin", ReshapeLikeParam, lhs_begin, "None", "first lhs axis replaced (None: 0)"),
    MXW_A_OPT_INT("lhs_end", ReshapeLikeParam, lhs_end, "None", "end of the replaced lhs axes (None: ndim)"),
    MXW_A_OPT_INT("rhs_begin", ReshapeLikeParam, rhs_begin, "None", "first rhs axis used (None: 0)"),
    MXW_A_OPT_INT("rhs_end", ReshapeLikeParam, rhs_end, "None", "end of the rhs axes used (None: ndim)"),
};
/* A [begin, end) axis range of a rank-nd shape: None defaults, negatives += nd, non-empty. */
static int reshape_like_range(const char *side, int nd, mxw_opt_int begin, mxw_opt_int end, int *b, int *e) {
  int64_t bb = begin.has ? (begin.v < 0 ? begin.v + nd : begin.v) : 0;
  int64_t ee = end.has ? (end.v < 0 ? end.v + nd : end.v) : nd;
  char bs[32], es[32];
  snprintf(bs, sizeof bs, begin.has ? "%lld" : "None", (long long)begin.v);
  snprintf(es, sizeof es, end.has ? "%lld" : "None", (long long)end.v);
  MXW_CHECK(bb >= 0 && ee <= nd && bb < ee,
            "%s_begin=%s, %s_end=%s is not a non-empty axis range of the %s (%d dimensions)", side, bs, side, es, side,
            nd);
  *b = (int)bb;
  *e = (int)ee;
  return 0;
}
static int infer_reshape_like(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ReshapeLikeParam *p = (const ReshapeLikeParam *)param;
  const mxw_shape *l = &in[0], *r = &in[1];
  if (l->ndim < 0 || r->ndim < 0) return 0;
  int lb, le, rb, re;
  MXW_TRY(reshape_like_range("lhs", l->ndim, p->lhs_begin, p->lhs_end, &lb, &le));
  MXW_TRY(reshape_like_range("rhs", r->ndim, p->rhs_begin, p->rhs_end, &rb, &re));
  int ond = l->ndim - (le - lb) + (re - rb);
  MXW_CHECK(ond <= MXW_MAX_NDIM, "the result would have %d dimensions (at most %d)", ond, MXW_MAX_NDIM);
  mxw_shape o = unknown_shape(0);
  for (int i = 0; i < lb; i++) o.dims[o.ndim++] = l->dims[i];
  for (int i = rb; i < re; i++) o.dims[o.ndim++] = r->dims[i];
  for (int i = le; i < l->ndim; i++) o.dims[o.ndim++] = l->dims[i];
  if (mxw_shape_known(l) && mxw_shape_known(&o) && mxw_shape_size(l) != mxw_shape_size(&o)) {
    shape_buf ls, rs, os;
    return mxw_fail("cannot reshape lhs of shape %s like rhs of shape %s: the result %s has %lld elements, lhs %lld",
                    SHAPE_STR(l, ls), SHAPE_STR(r, rs), SHAPE_STR(&o, os), (long long)mxw_shape_size(&o),
                    (long long)mxw_shape_size(l));
  }
  return mxw_shape_assign(&out[0], &o, "output");
}
static const mxw_op_def op_reshape_like = {
    .name = "reshape_like",
    .aliases = ALIASES("_npx_reshape_like"),
    .doc = MXW_DOC(
        "lhs's elements under rhs's shape (or lhs's axes [lhs_begin, lhs_end) replaced by rhs's [rhs_begin, rhs_end))"),
    .attrs = k_reshape_like_attrs,
    .num_attrs = 4,
    .param_size = sizeof(ReshapeLikeParam),
    .num_inputs = 2,
    .input_names = k_lhs_rhs,
    .num_outputs = 1,
    .infer_shape = infer_reshape_like,
    .infer_type = infer_type_first,
    .forward = fwd_copy_bytes,
    .gradient = grad_reshape_back}; /* rhs lends only its shape: no gradient */

/* ==== tile ===================================================================================== */
typedef struct {
  mxw_tuple reps;
} TileParam;
static const mxw_attr_spec k_tile_attrs[] = {
    MXW_A_SHAPE("reps", TileParam, reps, NULL, "repetitions per axis (aligned at the right)"),
};
static int validate_tile(void *param) {
  const TileParam *p = (const TileParam *)param;
  tuple_buf t;
  for (int i = 0; i < p->reps.ndim; i++)
    MXW_CHECK(p->reps.v[i] >= 0, "reps=%s: repetitions must be >= 0", TUPLE_STR(&p->reps, t));
  return 0;
}
/* a * b (both >= 0) as an output dimension, refused past 2^31 - 1 instead of overflowing int64
 * (fuzz_attrs: tile, repeat, depth_to_space with attribute values near 2^62). */
static int dim_mul(int64_t a, int64_t b, int64_t *out) {
  double v = (double)a * (double)b;
  MXW_CHECK(v <= 2147483647.0,
            "an output dimension would be %lld x %lld = %.0f, more than 2^31 - 1, the largest this "
            "runtime supports",
            (long long)a, (long long)b, v);
  *out = a * b;
  return 0;
}
/* Input dims and reps, both left-padded with 1s to the output rank. */
static int tile_dims(const TileParam *p, const mxw_shape *x, int *nd, int64_t *dims, int64_t *reps) {
  int n = x->ndim > p->reps.ndim ? x->ndim : p->reps.ndim;
  MXW_CHECK(n <= MXW_MAX_NDIM, "the result would have %d dimensions (at most %d)", n, MXW_MAX_NDIM);
  for (int i = 0; i < n; i++) {
    int xi = i - (n - x->ndim), ri = i - (n - p->reps.ndim);
    dims[i] = xi >= 0 ? x->dims[xi] : 1;
    reps[i] = ri >= 0 ? p->reps.v[ri] : 1;
  }
  *nd = n;
  return 0;
}
static int infer_tile(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  if (!mxw_shape_known(&in[0])) return 0;
  int nd;
  int64_t dims[MXW_MAX_NDIM], reps[MXW_MAX_NDIM];
  MXW_TRY(tile_dims((const TileParam *)param, &in[0], &nd, dims, reps));
  mxw_shape o = unknown_shape(nd);
  for (int i = 0; i < nd; i++) MXW_TRY(dim_mul(dims[i], reps[i], &o.dims[i]));
  return mxw_shape_assign(&out[0], &o, "output");
}
/* The copy from an input of shape x into the tiled output of shape o. */
static int tile_plan(const TileParam *param, const mxw_shape *x, const mxw_shape *o, copy_plan *p) {
  int nd;
  int64_t dims[MXW_MAX_NDIM], reps[MXW_MAX_NDIM], ist[MXW_MAX_NDIM], ost[MXW_MAX_NDIM];
  MXW_TRY(tile_dims(param, x, &nd, dims, reps));
  mxw_shape xs = mxw_shape_make(nd, dims);
  contiguous_strides(&xs, ist);
  contiguous_strides(o, ost);
  /* output index along axis i = k * dims[i] + j: a repeat dim k (source stride 0) outside j */
  memset(p, 0, sizeof *p);
  for (int i = 0; i < nd; i++) {
    plan_push(p, reps[i], 0, dims[i] * ost[i]);
    plan_push(p, dims[i], ist[i], ost[i]);
  }
  return 0;
}
/* tile and repeat: the forward copies along a plan from the input shape to the output shape; the
 * backward adds each output gradient back along the same plan (built forward: input = the
 * gradient's shape). */
typedef int (*shape_plan_fn)(const void *param, const mxw_shape *x, const mxw_shape *o, copy_plan *p);
static int fwd_by_plan(const mxw_op_call *c, shape_plan_fn make) {
  copy_plan p;
  MXW_TRY(make(c->param, &c->inputs[0].shape, &c->outputs[0].shape, &p));
  plan_run(&p, elsize(&c->inputs[0]), c->inputs[0].data, c->outputs[0].data);
  return 0;
}
static int bwd_by_plan(const mxw_op_call *c, shape_plan_fn make) {
  copy_plan p;
  MXW_TRY(make(c->param, &c->outputs[0].shape, &c->inputs[0].shape, &p));
  zero_tensor(&c->outputs[0]);
  plan_accumulate(&p, c->outputs[0].dtype, c->inputs[0].data, c->outputs[0].data);
  return 0;
}
static int tile_plan_any(const void *param, const mxw_shape *x, const mxw_shape *o, copy_plan *p) {
  return tile_plan((const TileParam *)param, x, o, p);
}
static int fwd_tile(const mxw_op_call *c) { return fwd_by_plan(c, tile_plan_any); }
/* dx = dy summed over the tiles (MXNet's _backward_tile). */
static int grad_tile(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_backward_tile", 1); }
static int fwd_backward_tile(const mxw_op_call *c) { return bwd_by_plan(c, tile_plan_any); }
static int grad_backward_tile(mxw_grad_ctx *g) { /* linear in ograd: the tiling again */
  return mxw_grad_set_fwd_op(g, "tile", 0);
}
static const mxw_op_def op_tile = {.name = "tile",
                                   .doc = MXW_DOC("repeats the whole array reps[i] times along each axis"),
                                   .attrs = k_tile_attrs,
                                   .num_attrs = 1,
                                   .param_size = sizeof(TileParam),
                                   .validate = validate_tile,
                                   .num_inputs = 1,
                                   .input_names = k_data,
                                   .num_outputs = 1,
                                   .infer_shape = infer_tile,
                                   .forward = fwd_tile,
                                   .gradient = grad_tile};
static const mxw_op_def op_backward_tile = {
    .name = "_backward_tile",
    .doc = MXW_DOC("the gradient of tile: ograd summed over the tiles, in data's shape"),
    .attrs = k_tile_attrs,
    .num_attrs = 1,
    .param_size = sizeof(TileParam),
    .validate = validate_tile,
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = infer_backward_like_data,
    .forward = fwd_backward_tile,
    .gradient = grad_backward_tile};

/* ==== repeat =================================================================================== */
typedef struct {
  int64_t repeats;
  mxw_opt_int axis;
} RepeatParam;
static const mxw_attr_spec k_repeat_attrs[] = {
    MXW_A_INT("repeats", RepeatParam, repeats, NULL, "repetitions of each element"),
    MXW_A_OPT_INT("axis", RepeatParam, axis, "None", "axis to repeat along; None flattens first"),
};
static int validate_repeat(void *param) {
  const RepeatParam *p = (const RepeatParam *)param;
  MXW_CHECK(p->repeats >= 0, "repeats must be >= 0, got %lld", (long long)p->repeats);
  return 0;
}
static int repeat_axis(const RepeatParam *p, const mxw_shape *x, int *axis) {
  *axis = -1;
  if (!p->axis.has) return 0;
  shape_buf xs;
  if (mxw_normalize_axis(p->axis.v, x->ndim, axis) != 0)
    return mxw_fail("axis=%lld is out of range for input of shape %s", (long long)p->axis.v, SHAPE_STR(x, xs));
  return 0;
}
static int infer_repeat(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const RepeatParam *p = (const RepeatParam *)param;
  if (!mxw_shape_known(&in[0])) return 0;
  int axis;
  MXW_TRY(repeat_axis(p, &in[0], &axis));
  mxw_shape o;
  if (p->repeats == 0) { /* MXNet: an empty 1-D array whatever the axis */
    o = unknown_shape(1);
    o.dims[0] = 0;
  } else if (axis < 0) {
    o = unknown_shape(1);
    MXW_TRY(dim_mul(mxw_shape_size(&in[0]), p->repeats, &o.dims[0]));
  } else {
    o = in[0];
    MXW_TRY(dim_mul(o.dims[axis], p->repeats, &o.dims[axis]));
  }
  return mxw_shape_assign(&out[0], &o, "output");
}
/* The copy from an input of shape x into the repeated output of shape o (empty when repeats = 0). */
static int repeat_plan(const RepeatParam *p, const mxw_shape *x, const mxw_shape *o, copy_plan *pl) {
  int axis;
  MXW_TRY(repeat_axis(p, x, &axis));
  int64_t R = p->repeats, ist[MXW_MAX_NDIM], ost[MXW_MAX_NDIM];
  memset(pl, 0, sizeof *pl);
  if (R == 0) {
    plan_push(pl, 0, 0, 0);
  } else if (axis < 0) { /* flat: element i goes to [i * R, (i + 1) * R) */
    plan_push(pl, mxw_shape_size(x), 1, R);
    plan_push(pl, R, 0, 1);
  } else {
    contiguous_strides(x, ist);
    contiguous_strides(o, ost);
    for (int d = 0; d < x->ndim; d++) {
      plan_push(pl, x->dims[d], ist[d], d == axis ? ost[d] * R : ost[d]);
      if (d == axis) plan_push(pl, R, 0, ost[d]);
    }
  }
  return 0;
}
static int repeat_plan_any(const void *param, const mxw_shape *x, const mxw_shape *o, copy_plan *p) {
  return repeat_plan((const RepeatParam *)param, x, o, p);
}
static int fwd_repeat(const mxw_op_call *c) { return fwd_by_plan(c, repeat_plan_any); }
/* dx = dy summed over each element's repeats (MXNet's _backward_repeat). */
static int grad_repeat(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_backward_repeat", 1); }
static int fwd_backward_repeat(const mxw_op_call *c) { return bwd_by_plan(c, repeat_plan_any); }
static int grad_backward_repeat(mxw_grad_ctx *g) { /* linear in ograd: the repeat again */
  return mxw_grad_set_fwd_op(g, "repeat", 0);
}
static const mxw_op_def op_repeat = {
    .name = "repeat",
    .doc = MXW_DOC("repeats each element `repeats` times along axis (None: of the flattened array)"),
    .attrs = k_repeat_attrs,
    .num_attrs = 2,
    .param_size = sizeof(RepeatParam),
    .validate = validate_repeat,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_repeat,
    .forward = fwd_repeat,
    .gradient = grad_repeat};
static const mxw_op_def op_backward_repeat = {
    .name = "_backward_repeat",
    .doc = MXW_DOC("the gradient of repeat: ograd summed over each element's repeats, in data's shape"),
    .attrs = k_repeat_attrs,
    .num_attrs = 2,
    .param_size = sizeof(RepeatParam),
    .validate = validate_repeat,
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = infer_backward_like_data,
    .forward = fwd_backward_repeat,
    .gradient = grad_backward_repeat};

/* ==== reverse ================================================================================== */
typedef struct {
  mxw_tuple axis;
} ReverseParam;
static const mxw_attr_spec k_reverse_attrs[] = {
    MXW_A_SHAPE("axis", ReverseParam, axis, NULL, "the axes to reverse"),
};
/* flip[d] = 1 where axis d is reversed (an axis listed twice is reversed twice, as in MXNet). */
static int reverse_flags(const ReverseParam *p, const mxw_shape *x, int *flip) {
  shape_buf xs;
  for (int d = 0; d < x->ndim; d++) flip[d] = 0;
  for (int i = 0; i < p->axis.ndim; i++) {
    int a;
    if (mxw_normalize_axis(p->axis.v[i], x->ndim, &a) != 0)
      return mxw_fail("axis %lld is out of range for input of shape %s", (long long)p->axis.v[i], SHAPE_STR(x, xs));
    flip[a] ^= 1;
  }
  return 0;
}
static int infer_reverse(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  MXW_TRY(mxw_infer_shape_same(param, nin, in, nout, out));
  int flip[MXW_MAX_NDIM];
  if (in[0].ndim >= 0) MXW_TRY(reverse_flags((const ReverseParam *)param, &in[0], flip));
  return 0;
}
static int fwd_reverse(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  int flip[MXW_MAX_NDIM];
  MXW_TRY(reverse_flags((const ReverseParam *)c->param, &in->shape, flip));
  int64_t st[MXW_MAX_NDIM], base = 0;
  contiguous_strides(&in->shape, st);
  copy_plan p = {0};
  for (int d = 0; d < in->shape.ndim; d++) {
    int64_t n = in->shape.dims[d];
    if (n == 0) return 0;
    if (flip[d]) base += (n - 1) * st[d];
    plan_push(&p, n, flip[d] ? -st[d] : st[d], st[d]);
  }
  size_t es = elsize(in);
  plan_run(&p, es, (const char *)in->data + base * (int64_t)es, c->outputs[0].data);
  return 0;
}
/* Reversing the same axes again undoes it (MXNet's _backward_reverse). */
static int grad_reverse(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "reverse", 0); }
static const mxw_op_def op_reverse = {.name = "reverse",
                                      .aliases = ALIASES("flip"),
                                      .doc = MXW_DOC("reverses the order of elements along the given axes"),
                                      .attrs = k_reverse_attrs,
                                      .num_attrs = 1,
                                      .param_size = sizeof(ReverseParam),
                                      .num_inputs = 1,
                                      .input_names = k_data,
                                      .num_outputs = 1,
                                      .infer_shape = infer_reverse,
                                      .forward = fwd_reverse,
                                      .gradient = grad_reverse};

/* ==== depth_to_space / space_to_depth ========================================================== */
typedef struct {
  int64_t block_size;
} BlockParam;
static const mxw_attr_spec k_block_attrs[] = {
    MXW_A_INT("block_size", BlockParam, block_size, NULL, "edge of the moved blocks"),
};
static int validate_block(void *param) {
  int64_t b = ((const BlockParam *)param)->block_size;
  MXW_CHECK(b >= 1, "block_size must be >= 1, got %lld", (long long)b);
  return 0;
}
static int check_nchw(const mxw_shape *x) {
  shape_buf xs;
  MXW_CHECK(x->ndim == 4, "needs a 4-D (N, C, H, W) input, got shape %s", SHAPE_STR(x, xs));
  for (int d = 0; d < 4; d++) MXW_CHECK(x->dims[d] != 0, "input of shape %s has a zero-size axis", SHAPE_STR(x, xs));
  return 0;
}
static int infer_depth_to_space(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const mxw_shape *x = &in[0];
  if (!mxw_shape_known(x)) return 0;
  MXW_TRY(check_nchw(x));
  int64_t b = ((const BlockParam *)param)->block_size;
  shape_buf xs;
  MXW_CHECK((double)b * (double)b <= (double)x->dims[1] && x->dims[1] % (b * b) == 0,
            "channels of input %s are not a multiple of block_size^2 = %.0f", SHAPE_STR(x, xs), (double)b * (double)b);
  int64_t o[4] = {x->dims[0], x->dims[1] / (b * b), 0, 0};
  MXW_TRY(dim_mul(x->dims[2], b, &o[2]));
  MXW_TRY(dim_mul(x->dims[3], b, &o[3]));
  mxw_shape os = mxw_shape_make(4, o);
  return mxw_shape_assign(&out[0], &os, "output");
}
/* out[n, c, h*b + i, w*b + j] = in[n, (i*b + j)*C' + c, h, w] (DCR), C' = C / b^2. */
static int fwd_depth_to_space(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  int64_t b = ((const BlockParam *)c->param)->block_size;
  int64_t N = in->shape.dims[0], C = in->shape.dims[1], H = in->shape.dims[2], W = in->shape.dims[3], C2 = C / (b * b);
  int64_t sN = C * H * W, sC = H * W;
  /* output walked as (N, C', H, i, W, j), contiguous */
  int64_t size[6] = {N, C2, H, b, W, b};
  int64_t srcs[6] = {sN, sC, W, b * C2 * sC, 1, C2 * sC};
  mxw_shape os = mxw_shape_make(6, size);
  int64_t ost[6];
  contiguous_strides(&os, ost);
  copy_plan p = {0};
  for (int d = 0; d < 6; d++) plan_push(&p, size[d], srcs[d], ost[d]);
  plan_run(&p, elsize(in), in->data, c->outputs[0].data);
  return 0;
}
/* depth_to_space and space_to_depth (same block_size) are each other's inverse and adjoint. */
static int grad_depth_to_space(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "space_to_depth", 0); }
static int grad_space_to_depth(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "depth_to_space", 0); }
static const mxw_op_def op_depth_to_space = {
    .name = "depth_to_space",
    .doc = MXW_DOC("(N, C, H, W) -> (N, C/b^2, H*b, W*b), channel blocks moved into space (DCR)"),
    .attrs = k_block_attrs,
    .num_attrs = 1,
    .param_size = sizeof(BlockParam),
    .validate = validate_block,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_depth_to_space,
    .forward = fwd_depth_to_space,
    .gradient = grad_depth_to_space};

static int infer_space_to_depth(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const mxw_shape *x = &in[0];
  if (!mxw_shape_known(x)) return 0;
  MXW_TRY(check_nchw(x));
  int64_t b = ((const BlockParam *)param)->block_size;
  shape_buf xs;
  MXW_CHECK(x->dims[2] % b == 0 && x->dims[3] % b == 0,
            "height and width of input %s are not multiples of block_size=%lld", SHAPE_STR(x, xs), (long long)b);
  int64_t o[4] = {x->dims[0], 0, x->dims[2] / b, x->dims[3] / b};
  MXW_TRY(dim_mul(x->dims[1], b, &o[1]));
  MXW_TRY(dim_mul(o[1], b, &o[1]));
  mxw_shape os = mxw_shape_make(4, o);
  return mxw_shape_assign(&out[0], &os, "output");
}
/* out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b + i, w*b + j]: the inverse of depth_to_space. */
static int fwd_space_to_depth(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  int64_t b = ((const BlockParam *)c->param)->block_size;
  int64_t N = in->shape.dims[0], C = in->shape.dims[1], H = in->shape.dims[2], W = in->shape.dims[3];
  /* output walked as (N, i, j, C, H/b, W/b), contiguous */
  int64_t size[6] = {N, b, b, C, H / b, W / b};
  int64_t srcs[6] = {C * H * W, W, 1, H * W, b * W, b};
  mxw_shape os = mxw_shape_make(6, size);
  int64_t ost[6];
  contiguous_strides(&os, ost);
  copy_plan p = {0};
  for (int d = 0; d < 6; d++) plan_push(&p, size[d], srcs[d], ost[d]);
  plan_run(&p, elsize(in), in->data, c->outputs[0].data);
  return 0;
}
static const mxw_op_def op_space_to_depth = {
    .name = "space_to_depth",
    .doc = MXW_DOC("(N, C, H, W) -> (N, C*b^2, H/b, W/b), the inverse of depth_to_space"),
    .attrs = k_block_attrs,
    .num_attrs = 1,
    .param_size = sizeof(BlockParam),
    .validate = validate_block,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_space_to_depth,
    .forward = fwd_space_to_depth,
    .gradient = grad_space_to_depth};

/* ==== Pad ====================================================================================== */
enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT };
static const char *const k_pad_modes[] = {"constant", "edge", "reflect", NULL};
typedef struct {
  int mode;
  mxw_tuple pad_width;
  double constant_value;
} PadParam;
static const mxw_attr_spec k_pad_attrs[] = {
    MXW_A_ENUM("mode", PadParam, mode, NULL, k_pad_modes, "constant fill, edge replication or reflection"),
    MXW_A_SHAPE("pad_width", PadParam, pad_width, NULL, "(before_0, after_0, before_1, after_1, ...)"),
    MXW_A_FLOAT("constant_value", PadParam, constant_value, "0", "fill value of mode 'constant'"),
};
static int validate_Pad(void *param) {
  const PadParam *p = (const PadParam *)param;
  tuple_buf t;
  for (int i = 0; i < p->pad_width.ndim; i++)
    MXW_CHECK(p->pad_width.v[i] >= 0, "pad_width=%s: pads must be >= 0", TUPLE_STR(&p->pad_width, t));
  return 0;
}
static int infer_Pad(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const PadParam *p = (const PadParam *)param;
  const mxw_shape *x = &in[0];
  if (!mxw_shape_known(x)) return 0;
  shape_buf xs;
  tuple_buf t;
  const int64_t *pw = p->pad_width.v;
  MXW_CHECK(x->ndim == 4 || x->ndim == 5, "only 4-D or 5-D inputs can be padded, got shape %s", SHAPE_STR(x, xs));
  MXW_CHECK(p->pad_width.ndim == 2 * x->ndim, "pad_width=%s needs %d entries (before, after per axis) for input %s",
            TUPLE_STR(&p->pad_width, t), 2 * x->ndim, SHAPE_STR(x, xs));
  MXW_CHECK(pw[0] == 0 && pw[1] == 0 && pw[2] == 0 && pw[3] == 0,
            "pad_width=%s: the first 4 entries (N and C axes) must be 0", TUPLE_STR(&p->pad_width, t));
  mxw_shape o = *x;
  for (int d = 0; d < x->ndim; d++) {
    int64_t L = x->dims[d], before = pw[2 * d], after = pw[2 * d + 1];
    if (p->mode == PAD_REFLECT && (before || after))
      MXW_CHECK(before < L && after < L,
                "mode 'reflect': pads %lld, %lld of axis %d must be smaller than its size %lld (input %s)",
                (long long)before, (long long)after, d, (long long)L, SHAPE_STR(x, xs));
    if (p->mode == PAD_EDGE && (before || after))
      MXW_CHECK(L > 0, "mode 'edge': axis %d of input %s is empty, there is no edge to repeat", d, SHAPE_STR(x, xs));
    o.dims[d] = L + before + after;
  }
  return mxw_shape_assign(&out[0], &o, "output");
}

/* n copies of the es-byte value at fill. */
static void fill_elems(char *dst, size_t es, const void *fill, int64_t n) {
  switch (es) {
    case 1: {
      uint8_t v;
      memcpy(&v, fill, 1);
      memset(dst, v, (size_t)n);
      break;
    }
    case 2: {
      uint16_t v;
      memcpy(&v, fill, 2);
      for (int64_t i = 0; i < n; i++) ((u16a *)dst)[i] = v;
      break;
    }
    case 4: {
      uint32_t v;
      memcpy(&v, fill, 4);
      for (int64_t i = 0; i < n; i++) ((u32a *)dst)[i] = v;
      break;
    }
    default: {
      uint64_t v;
      memcpy(&v, fill, 8);
      for (int64_t i = 0; i < n; i++) ((u64a *)dst)[i] = v;
      break;
    }
  }
}

/* Source index along one axis for output position o (-1: the fill value). */
static int64_t pad_source(int mode, int64_t o, int64_t before, int64_t L) {
  int64_t i = o - before;
  if (i >= 0 && i < L) return i;
  switch (mode) {
    case PAD_EDGE: return i < 0 ? 0 : L - 1;
    case PAD_REFLECT: return i < 0 ? -i : 2 * (L - 1) - i; /* pads < L: one reflection suffices */
    default: return -1;
  }
}

/* Per axis d, map[d][o]: the source index of output position o (-1: the fill value). */
static int pad_maps(const PadParam *p, const mxw_shape *in, const mxw_shape *out, int64_t **map) {
  int64_t total = 0;
  for (int d = 0; d < out->ndim; d++) total += out->dims[d];
  int64_t *maps = (int64_t *)mxw_scratch(0, (size_t)total * sizeof(int64_t));
  if (!maps) return -1;
  for (int d = 0; d < out->ndim; d++) {
    map[d] = d == 0 ? maps : map[d - 1] + out->dims[d - 1];
    for (int64_t o = 0; o < out->dims[d]; o++) map[d][o] = pad_source(p->mode, o, p->pad_width.v[2 * d], in->dims[d]);
  }
  return 0;
}

static int fwd_Pad(const mxw_op_call *c) {
  const PadParam *p = (const PadParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  const int nd = in->shape.ndim;
  const size_t es = elsize(in);
  const int64_t *pw = p->pad_width.v;
  if (mxw_tensor_size(out) == 0) return 0;
  int64_t *map[MXW_MAX_NDIM];
  MXW_TRY(pad_maps(p, &in->shape, &out->shape, map));
  union {
    uint64_t u;
    char b[8];
  } fill = {0};
  mxw_store_f64(fill.b, in->dtype, 0, p->constant_value);
  int64_t ist[MXW_MAX_NDIM];
  contiguous_strides(&in->shape, ist);
  const int last = nd - 1;
  const int64_t W = out->shape.dims[last], Win = in->shape.dims[last], left = pw[2 * last];
  const char *src = (const char *)in->data;
  char *row = (char *)out->data;
  int64_t idx[MXW_MAX_NDIM] = {0};
  for (;;) { /* one output row (last axis) per step */
    int64_t off = 0;
    int filled = 0;
    for (int d = 0; d < last; d++) {
      int64_t m = map[d][idx[d]];
      if (m < 0)
        filled = 1;
      else
        off += m * ist[d];
    }
    if (filled) {
      fill_elems(row, es, fill.b, W);
    } else {
      const char *srow = src + off * (int64_t)es;
      for (int64_t o = 0; o < W; o++) {
        if (o == left && Win > 0) { /* the interior is one contiguous run */
          memcpy(row + o * (int64_t)es, srow, (size_t)Win * es);
          o += Win - 1;
          continue;
        }
        int64_t m = map[last][o];
        memcpy(row + o * (int64_t)es, m < 0 ? fill.b : srow + m * (int64_t)es, es);
      }
    }
    row += W * (int64_t)es;
    int d = last - 1;
    for (; d >= 0; d--) {
      if (++idx[d] < out->shape.dims[d]) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  return 0;
}
/* dx[i] = the sum of dy over the output positions that copy input element i: the interior once
 * (constant mode: just the interior slice), for edge/reflect also the pads that repeat it
 * (MXNet's _backward_Pad accumulates them). */
static int grad_Pad(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_backward_Pad", 1); }
static const mxw_op_def op_Pad = {
    .name = "Pad",
    .aliases = ALIASES("pad"),
    .doc = MXW_DOC("pads the spatial axes of a 4-D/5-D array (constant, edge or reflect)"),
    .attrs = k_pad_attrs,
    .num_attrs = 3,
    .param_size = sizeof(PadParam),
    .validate = validate_Pad,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_Pad,
    .forward = fwd_Pad,
    .gradient = grad_Pad};

#define PAD_ACCUM_ROW(T)                          \
  do {                                            \
    T *gx_ = (T *)gx->data + off;                 \
    const T *gy_ = (const T *)gy->data + yoff;    \
    for (int64_t o = 0; o < W; o++)               \
      if (mlast[o] >= 0) gx_[mlast[o]] += gy_[o]; \
  } while (0)

static int fwd_backward_Pad(const mxw_op_call *c) {
  const PadParam *p = (const PadParam *)c->param;
  const mxw_tensor *gy = &c->inputs[0];
  mxw_tensor *gx = &c->outputs[0];
  zero_tensor(gx);
  if (mxw_tensor_size(gy) == 0 || mxw_tensor_size(gx) == 0) return 0;
  const int nd = gx->shape.ndim, last = nd - 1;
  int64_t *map[MXW_MAX_NDIM], xst[MXW_MAX_NDIM], idx[MXW_MAX_NDIM] = {0};
  MXW_TRY(pad_maps(p, &gx->shape, &gy->shape, map));
  contiguous_strides(&gx->shape, xst);
  const int64_t W = gy->shape.dims[last], *mlast = map[last];
  for (int64_t yoff = 0;; yoff += W) { /* one row of dy (last axis) per step */
    int64_t off = 0;
    int filled = 0;
    for (int d = 0; d < last; d++) {
      int64_t m = map[d][idx[d]];
      if (m < 0)
        filled = 1;
      else
        off += m * xst[d];
    }
    if (!filled) {
      if (gx->dtype == MXW_FLOAT32)
        PAD_ACCUM_ROW(float);
      else if (gx->dtype == MXW_FLOAT64)
        PAD_ACCUM_ROW(double);
      else
        for (int64_t o = 0; o < W; o++)
          if (mlast[o] >= 0)
            mxw_store_f64(
                gx->data, gx->dtype, off + mlast[o],
                mxw_load_f64(gx->data, gx->dtype, off + mlast[o]) + mxw_load_f64(gy->data, gy->dtype, yoff + o));
    }
    int d = last - 1;
    for (; d >= 0; d--) {
      if (++idx[d] < gy->shape.dims[d]) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  return 0;
}
/* _backward_Pad is linear in ograd; its adjoint is Pad with a zero fill. */
static int grad_backward_Pad(mxw_grad_ctx *g) {
  const PadParam *p = (const PadParam *)mxw_grad_param(g);
  tuple_buf pw;
  TUPLE_STR(&p->pad_width, pw);
  mxw_gid d = mxw_grad_op(g, "Pad", MXW_KV("mode", k_pad_modes[p->mode], "pad_width", pw, "constant_value", "0"),
                          MXW_GIDS(mxw_grad_ograd(g, 0)));
  return mxw_grad_set(g, 0, d);
}
static const mxw_op_def op_backward_Pad = {
    .name = "_backward_Pad",
    .doc = MXW_DOC("the gradient of Pad: ograd summed back onto the input elements each position copies"),
    .attrs = k_pad_attrs,
    .num_attrs = 3,
    .param_size = sizeof(PadParam),
    .validate = validate_Pad,
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = infer_backward_like_data,
    .forward = fwd_backward_Pad,
    .gradient = grad_backward_Pad};

MXW_FAMILY(shape_ops, &op_Reshape, &op_Flatten, &op_transpose, &op_SwapAxis, &op_expand_dims, &op_squeeze, &op_Concat,
           &op_stack, &op_SliceChannel, &op_split_v2, &op_slice, &op_slice_axis, &op_slice_like, &op_broadcast_to,
           &op_broadcast_like, &op_reshape_like, &op_tile, &op_repeat, &op_reverse, &op_depth_to_space,
           &op_space_to_depth, &op_Pad, &op_backward_slice, &op_backward_slice_axis, &op_backward_slice_like,
           &op_backward_tile, &op_backward_repeat, &op_backward_Pad);
