/* dwconv.c -- depthwise 3x3 convolution of one channel plane, pad 1, stride 1 or 2 (MobileNet's).
 *
 *   out[y][x] = bias + sum over i, j < 3 of w[3i + j] * in[s*y - 1 + i][s*x - 1 + j]   (0 outside)
 *
 * The plane is read in place (the old path's zero-padded copy cost a third of its time). Each
 * output is bias + (weights row 0 . input row above) + (row 1 . the row) + (row 2 . the row
 * below), each term the three column taps in order, whatever path computes it. Two paths:
 *
 *  - row pairs (rows of 48 or more outputs, stride 2 from 96 input columns): two output rows
 *    at a time, in blocks of 4 (stride 2: 8) along the rows; a block loads the 4 (stride 2: 5)
 *    input rows feeding it once and applies each weights row where it belongs. Walking along the
 *    rows keeps the memory streams sequential: on planes beyond L1 this ran 1.4x faster than the
 *    strips. Rows outside the plane read a row of zeros.
 *  - vertical strips of 4 or 8 outputs (smaller planes): down a strip every input row is loaded
 *    once and feeds the three output rows it belongs to through running partial sums (fewer
 *    loads per output than row pairs, which wins while the plane stays in L1).
 *
 * Column padding: only blocks at the left and right edges build their outer tap vectors by
 * shuffling in a zero lane; the others load them straight from the row. For stride 2 the even
 * and odd columns are separated by shuffles of two loads.
 *
 * V8 (Node 20, TurboFan) shaped the code: the weights are pre-broadcast vectors read with plain
 * loads (a v128.load takes its offset for free, a v128.load32_splat with an offset costs an add;
 * nine weights held in registers spill); interior blocks take row pointers one column to the left
 * (wasm load offsets are unsigned, so p - 1 costs an add per load); a basic block's loads all
 * issue first, so blocks of 4 outputs (12 input vectors live) beat blocks of 8 (24: spills).
 * Measured in this module against the old path (copy + per-tap loop), one thread, float32:
 *   112x112 s1 32 ch 18 -> 36 GFLOP/s, 56x56 s1 17 -> 35, 28x28 s1 15 -> 30, 14x14 s1 11 -> 28,
 *   7x7 s1 9 -> 25; stride 2: 112 -> 56 12 -> 18, 56 -> 28 12 -> 19, 14 -> 7 6 -> 18 (the large
 *   stride-2 planes are bound by reading four inputs per output).
 */
#include "conv_kernels.h"

#include <stddef.h>

#include "../core/simd.h"

#define MADD(acc, a, b) MXW_F32X4_MADD(acc, a, b)
/* The weights come broadcast, one vector each, and are read with plain vector loads: V8 gives a
 * v128.load its offset for free but computes base + offset into a register for every
 * v128.load32_splat, and holding nine weights in registers leaves too few for the rest. */
#define WV(o) wasm_v128_load(w + 4 * (o))

/* acc + w[o] * l + w[o + 1] * c + w[o + 2] * r: weights row o / 3 against one input row's taps. */
#define TAPS(acc, o, l, c, r) MADD(MADD(MADD(acc, WV(o), l), WV((o) + 1), c), WV((o) + 2), r)

enum { EDGE_LEFT = 1, EDGE_RIGHT = 2 };

/* Stride 1: the three tap vectors of input row `p` for outputs x .. x+3 (columns x - 1, x, x + 1);
 * at an edge the outer column comes from a shuffle with zero. */
#define ROW_S1(left, right, p, l, c, r)                                                      \
  const v128_t c = wasm_v128_load(p);                                                        \
  const v128_t l = (left) ? wasm_i32x4_shuffle(zero, c, 3, 4, 5, 6) : wasm_v128_load((p)-1); \
  const v128_t r = (right) ? wasm_i32x4_shuffle(c, zero, 1, 2, 3, 4) : wasm_v128_load((p) + 1)

/* One strip of 4 * nv outputs, stride 1, down all rows: `in` and `y` at the strip's first column. */
static inline __attribute__((always_inline)) void strip_s1(const int edge, const int nv, size_t H, const float *in,
                                                           size_t W, const float *w, float *y) {
  const v128_t zero = wasm_f32x4_splat(0.f), vb = WV(9);
  const int left = edge & EDGE_LEFT, right0 = (edge & EDGE_RIGHT) && nv == 1, right1 = edge & EDGE_RIGHT;
  v128_t a0, a1 = vb, b0, b1 = vb; /* partial sums of output rows r - 1 and r before input row r */
#define S1_BOTH(p, BODY0, BODY1)         \
  {                                      \
    ROW_S1(left, right0, p, l, c, r);    \
    BODY0;                               \
  }                                      \
  if (nv > 1) {                          \
    ROW_S1(0, right1, (p) + 4, l, c, r); \
    BODY1;                               \
  }
  /* input row 0: output row 0 (weights row 0 met the padding) and output row 1 */
  S1_BOTH(in, (a0 = TAPS(vb, 3, l, c, r), b0 = TAPS(vb, 0, l, c, r)),
          (a1 = TAPS(vb, 3, l, c, r), b1 = TAPS(vb, 0, l, c, r)))
  for (size_t row = 1; row < H; row++) {
    const float *p = in + row * W;
    float *yr = y + (row - 1) * W;
    S1_BOTH(p, (wasm_v128_store(yr, TAPS(a0, 6, l, c, r)), a0 = TAPS(b0, 3, l, c, r), b0 = TAPS(vb, 0, l, c, r)),
            (wasm_v128_store(yr + 4, TAPS(a1, 6, l, c, r)), a1 = TAPS(b1, 3, l, c, r), b1 = TAPS(vb, 0, l, c, r)))
  }
  wasm_v128_store(y + (H - 1) * W, a0); /* weights row 2 met the padding */
  if (nv > 1) wasm_v128_store(y + (H - 1) * W + 4, a1);
#undef S1_BOTH
}

/* Stride 2: the tap vectors of one input row for outputs x..x+3 (input columns 2x - 1 + 2i + j):
 * two loads split into even (j = 1) and odd (j = 2) columns; j = 0 is the odd vector shifted by
 * one lane, with column 2x - 1 in front: lane 3 of `prev` (the previous odd vector, column 2x - 1
 * broadcast, or zero at the left edge). At the right edge of an odd width the last column read
 * (2x + 7 = W) is padding: the second load moves back by one and a zero is shuffled in. */
#define ROW_S2(right, prev, p, l, c, r)                                                                  \
  const v128_t lo_ = wasm_v128_load(p);                                                                  \
  const v128_t hi_ =                                                                                     \
      (right) ? wasm_i32x4_shuffle(wasm_v128_load((p) + 3), zero, 1, 2, 3, 4) : wasm_v128_load((p) + 4); \
  const v128_t c = wasm_i32x4_shuffle(lo_, hi_, 0, 2, 4, 6);                                             \
  const v128_t r = wasm_i32x4_shuffle(lo_, hi_, 1, 3, 5, 7);                                             \
  const v128_t l = wasm_i32x4_shuffle(prev, r, 3, 4, 5, 6)

/* One strip of 4 * nv outputs, stride 2, down all rows: `in` at input column 2x, `y` at output
 * column x. Output row k: bias + weights row 0 . input row 2k - 1 + row 1 . 2k + row 2 . 2k + 1. */
static inline __attribute__((always_inline)) void strip_s2(const int edge, const int nv, size_t H, size_t Ho,
                                                           const float *in, size_t W, const float *w, float *y,
                                                           size_t Wo) {
  const v128_t zero = wasm_f32x4_splat(0.f), vb = WV(9);
  const int left = edge & EDGE_LEFT, right0 = (edge & EDGE_RIGHT) && nv == 1, right1 = edge & EDGE_RIGHT;
  v128_t a0 = vb, a1 = vb; /* output row k before input row 2k */
#define S2_BOTH(p, BODY0, BODY1)                                             \
  {                                                                          \
    ROW_S2(right0, left ? zero : wasm_v128_load32_splat((p)-1), p, l, c, r); \
    BODY0;                                                                   \
    if (nv > 1) {                                                            \
      const v128_t r0_ = r;                                                  \
      ROW_S2(right1, r0_, (p) + 8, l, c, r);                                 \
      BODY1;                                                                 \
    }                                                                        \
  }
  for (size_t k = 0; k < Ho; k++) {
    {
      const float *p = in + 2 * k * W;
      S2_BOTH(p, a0 = TAPS(a0, 3, l, c, r), a1 = TAPS(a1, 3, l, c, r))
    }
    float *yr = y + k * Wo;
    if (2 * k + 1 < H) {
      const float *p = in + (2 * k + 1) * W;
      S2_BOTH(p, (wasm_v128_store(yr, TAPS(a0, 6, l, c, r)), a0 = TAPS(vb, 0, l, c, r)),
              (wasm_v128_store(yr + 4, TAPS(a1, 6, l, c, r)), a1 = TAPS(vb, 0, l, c, r)))
    } else {
      wasm_v128_store(yr, a0);
      if (nv > 1) wasm_v128_store(yr + 4, a1);
    }
  }
#undef S2_BOTH
}

/* One function per (stride, edge, width): each strip loop is its own function (V8 treats a loop at
 * the top level of a function better than one nested in a caller's loop). */
#define STRIPS(E, NV)                                                                                       \
  static void strip_s1_##E##_##NV(size_t H, const float *in, size_t W, const float *w, float *y) {          \
    strip_s1(E, NV, H, in, W, w, y);                                                                        \
  }                                                                                                         \
  static void strip_s2_##E##_##NV(size_t H, size_t Ho, const float *in, size_t W, const float *w, float *y, \
                                  size_t Wo) {                                                              \
    strip_s2(E, NV, H, Ho, in, W, w, y, Wo);                                                                \
  }
STRIPS(0, 1)
STRIPS(1, 1)
STRIPS(2, 1)
STRIPS(3, 1)
STRIPS(0, 2)
STRIPS(1, 2)
STRIPS(2, 2)
STRIPS(3, 2)
#undef STRIPS
typedef void strip_s1_fn(size_t, const float *, size_t, const float *, float *);
typedef void strip_s2_fn(size_t, size_t, const float *, size_t, const float *, float *, size_t);
static strip_s1_fn *const k_strip_s1[2][4] = {{strip_s1_0_1, strip_s1_1_1, strip_s1_2_1, strip_s1_3_1},
                                              {strip_s1_0_2, strip_s1_1_2, strip_s1_2_2, strip_s1_3_2}};
static strip_s2_fn *const k_strip_s2[2][4] = {{strip_s2_0_1, strip_s2_1_1, strip_s2_2_1, strip_s2_3_1},
                                              {strip_s2_0_2, strip_s2_1_2, strip_s2_2_2, strip_s2_3_2}};

int mxw_dwconv3x3_path = 0;

/* ---- row pairs: two output rows at a time, walking along the rows --------------------------------
 * For each block of outputs of rows y and y + 1 the input rows feeding them are loaded once and
 * every weights row applied where it belongs:
 *   top (row y)        = bias + w row 0 . r0 + w row 1 . r1 + w row 2 . r2
 *   bottom (row y + 1) = bias + w row 0 . r1 + w row 1 . r2 + w row 2 . r3
 * (stride 2: r0..r4 = input rows 2y - 1 .. 2y + 3, top from r0, r1, r2 and bottom from r2, r3, r4).
 * Rows outside the plane are a row of zeros. */

/* An edge block of 4, stride 1 (pointers at column x): left and/or right edge. */
static inline __attribute__((always_inline)) void block_s1(const int left, const int right, const int two,
                                                           const float *r0, const float *r1, const float *r2,
                                                           const float *r3, const float *w, float *y0, float *y1) {
  const v128_t zero = wasm_f32x4_splat(0.f), vb = WV(9);
  v128_t t = vb, b = vb;
#define IN_S1(rp, TOP, BOT)                           \
  {                                                   \
    ROW_S1(left, right, rp, l, c, r);                 \
    if ((TOP) >= 0) t = TAPS(t, TOP, l, c, r);        \
    if ((BOT) >= 0 && two) b = TAPS(b, BOT, l, c, r); \
  }
  IN_S1(r0, 0, -1)
  IN_S1(r1, 3, 0)
  IN_S1(r2, 6, 3)
  if (two) {
    IN_S1(r3, -1, 6)
  }
#undef IN_S1
  wasm_v128_store(y0, t);
  if (two) wasm_v128_store(y1, b);
}

/* An interior block of 4, stride 1, with the row pointers at column x - 1 (the loads then take
 * non-negative offsets, which V8 folds into the address; x - 1 from x costs an add per load). */
static inline __attribute__((always_inline)) void block_s1_q(const int two, const float *q0, const float *q1,
                                                             const float *q2, const float *q3, const float *w,
                                                             float *y0, float *y1) {
  const v128_t vb = WV(9);
  v128_t t = vb, b = vb;
#define IN_Q(q, TOP, BOT)                                                                         \
  {                                                                                               \
    const v128_t l = wasm_v128_load(q), c = wasm_v128_load((q) + 1), r = wasm_v128_load((q) + 2); \
    if ((TOP) >= 0) t = TAPS(t, TOP, l, c, r);                                                    \
    if ((BOT) >= 0 && two) b = TAPS(b, BOT, l, c, r);                                             \
  }
  IN_Q(q0, 0, -1)
  IN_Q(q1, 3, 0)
  IN_Q(q2, 6, 3)
  if (two) {
    IN_Q(q3, -1, 6)
  }
#undef IN_Q
  wasm_v128_store(y0, t);
  if (two) wasm_v128_store(y1, b);
}

/* One block, stride 2: nv vectors at output column x; the row pointers at input column 2x. */
static inline __attribute__((always_inline)) void block_s2(const int left, const int right, const int nv, const int two,
                                                           const float *r0, const float *r1, const float *r2,
                                                           const float *r3, const float *r4, const float *w, float *y0,
                                                           float *y1) {
  const v128_t zero = wasm_f32x4_splat(0.f), vb = WV(9);
  v128_t t0 = vb, t1 = vb, b0 = vb, b1 = vb;
  const int right0 = right && nv == 1;
#define IN_S2(rp, TOP, BOT)                                                    \
  {                                                                            \
    ROW_S2(right0, left ? zero : wasm_v128_load32_splat((rp)-1), rp, l, c, r); \
    if ((TOP) >= 0) t0 = TAPS(t0, TOP, l, c, r);                               \
    if ((BOT) >= 0 && two) b0 = TAPS(b0, BOT, l, c, r);                        \
    if (nv > 1) {                                                              \
      const v128_t r0_ = r;                                                    \
      ROW_S2(right, r0_, (rp) + 8, l, c, r);                                   \
      if ((TOP) >= 0) t1 = TAPS(t1, TOP, l, c, r);                             \
      if ((BOT) >= 0 && two) b1 = TAPS(b1, BOT, l, c, r);                      \
    }                                                                          \
  }
  IN_S2(r0, 0, -1)
  IN_S2(r1, 3, -1)
  IN_S2(r2, 6, 0)
  if (two) {
    IN_S2(r3, -1, 3)
    IN_S2(r4, -1, 6)
  }
#undef IN_S2
  wasm_v128_store(y0, t0);
  if (nv > 1) wasm_v128_store(y0 + 4, t1);
  if (two) {
    wasm_v128_store(y1, b0);
    if (nv > 1) wasm_v128_store(y1 + 4, b1);
  }
}

/* An interior block of 4 * nv, stride 2, with the row pointers at input column 2x - 1. */
static inline __attribute__((always_inline)) void block_s2_q(const int nv, const int two, const float *q0,
                                                             const float *q1, const float *q2, const float *q3,
                                                             const float *q4, const float *w, float *y0, float *y1) {
  const v128_t vb = WV(9);
  v128_t t0 = vb, t1 = vb, b0 = vb, b1 = vb;
#define IN_Q2(q, TOP, BOT)                                                                                       \
  {                                                                                                              \
    const v128_t lo_ = wasm_v128_load((q) + 1), hi_ = wasm_v128_load((q) + 5);                                   \
    const v128_t c = wasm_i32x4_shuffle(lo_, hi_, 0, 2, 4, 6), r = wasm_i32x4_shuffle(lo_, hi_, 1, 3, 5, 7);     \
    const v128_t l = wasm_i32x4_shuffle(wasm_v128_load32_splat(q), r, 3, 4, 5, 6);                               \
    if ((TOP) >= 0) t0 = TAPS(t0, TOP, l, c, r);                                                                 \
    if ((BOT) >= 0 && two) b0 = TAPS(b0, BOT, l, c, r);                                                          \
    if (nv > 1) {                                                                                                \
      const v128_t lo2 = wasm_v128_load((q) + 9), hi2 = wasm_v128_load((q) + 13);                                \
      const v128_t c2 = wasm_i32x4_shuffle(lo2, hi2, 0, 2, 4, 6), r2 = wasm_i32x4_shuffle(lo2, hi2, 1, 3, 5, 7); \
      const v128_t l2 = wasm_i32x4_shuffle(r, r2, 3, 4, 5, 6);                                                   \
      if ((TOP) >= 0) t1 = TAPS(t1, TOP, l2, c2, r2);                                                            \
      if ((BOT) >= 0 && two) b1 = TAPS(b1, BOT, l2, c2, r2);                                                     \
    }                                                                                                            \
  }
  IN_Q2(q0, 0, -1)
  IN_Q2(q1, 3, -1)
  IN_Q2(q2, 6, 0)
  if (two) {
    IN_Q2(q3, -1, 3)
    IN_Q2(q4, -1, 6)
  }
#undef IN_Q2
  wasm_v128_store(y0, t0);
  if (nv > 1) wasm_v128_store(y0 + 4, t1);
  if (two) {
    wasm_v128_store(y1, b0);
    if (nv > 1) wasm_v128_store(y1 + 4, b1);
  }
}

/* All blocks of one output row pair (two) or of the last row: a left edge block, interior blocks
 * while they end inside the row, then one ending at the right edge (it may overlap the previous
 * one and recompute equal values). Stride 1 in blocks of 4; stride 2 in blocks of 8 (4 when the
 * row has fewer than 8 outputs). */
#define ROWPAIR(TWO)                                                                                         \
  static void rowpair_s1_##TWO(size_t W, const float *r0, const float *r1, const float *r2, const float *r3, \
                               const float *w, float *y0, float *y1) {                                       \
    const int two = TWO;                                                                                     \
    if (W == 4) {                                                                                            \
      block_s1(1, 1, two, r0, r1, r2, r3, w, y0, y1);                                                        \
      return;                                                                                                \
    }                                                                                                        \
    block_s1(1, 0, two, r0, r1, r2, r3, w, y0, y1);                                                          \
    const float *q0 = r0 + 3, *q1 = r1 + 3, *q2 = r2 + 3, *q3 = r3 + 3;                                      \
    float *z0 = y0 + 4, *z1 = y1 + 4;                                                                        \
    for (size_t x = 4; x + 4 < W; x += 4) {                                                                  \
      block_s1_q(two, q0, q1, q2, q3, w, z0, z1);                                                            \
      q0 += 4, q1 += 4, q2 += 4, q3 += 4, z0 += 4, z1 += 4;                                                  \
    }                                                                                                        \
    const size_t x = W - 4;                                                                                  \
    block_s1(0, 1, two, r0 + x, r1 + x, r2 + x, r3 + x, w, y0 + x, y1 + x);                                  \
  }                                                                                                          \
  static void rowpair_s2_##TWO(size_t W, size_t Wo, const float *r0, const float *r1, const float *r2,       \
                               const float *r3, const float *r4, const float *w, float *y0, float *y1) {     \
    const int two = TWO, odd = W % 2 == 1;                                                                   \
    if (Wo < 8) {                                                                                            \
      if (Wo == 4) {                                                                                         \
        if (odd)                                                                                             \
          block_s2(1, 1, 1, two, r0, r1, r2, r3, r4, w, y0, y1);                                             \
        else                                                                                                 \
          block_s2(1, 0, 1, two, r0, r1, r2, r3, r4, w, y0, y1);                                             \
        return;                                                                                              \
      }                                                                                                      \
      block_s2(1, 0, 1, two, r0, r1, r2, r3, r4, w, y0, y1);                                                 \
      const size_t x = Wo - 4, i = 2 * x;                                                                    \
      if (odd)                                                                                               \
        block_s2(0, 1, 1, two, r0 + i, r1 + i, r2 + i, r3 + i, r4 + i, w, y0 + x, y1 + x);                   \
      else                                                                                                   \
        block_s2(0, 0, 1, two, r0 + i, r1 + i, r2 + i, r3 + i, r4 + i, w, y0 + x, y1 + x);                   \
      return;                                                                                                \
    }                                                                                                        \
    if (Wo == 8) {                                                                                           \
      if (odd)                                                                                               \
        block_s2(1, 1, 2, two, r0, r1, r2, r3, r4, w, y0, y1);                                               \
      else                                                                                                   \
        block_s2(1, 0, 2, two, r0, r1, r2, r3, r4, w, y0, y1);                                               \
      return;                                                                                                \
    }                                                                                                        \
    block_s2(1, 0, 2, two, r0, r1, r2, r3, r4, w, y0, y1);                                                   \
    size_t x = 8;                                                                                            \
    const float *q0 = r0 + 15, *q1 = r1 + 15, *q2 = r2 + 15, *q3 = r3 + 15, *q4 = r4 + 15;                   \
    float *z0 = y0 + 8, *z1 = y1 + 8;                                                                        \
    for (; x + 8 < Wo; x += 8) {                                                                             \
      block_s2_q(2, two, q0, q1, q2, q3, q4, w, z0, z1);                                                     \
      q0 += 16, q1 += 16, q2 += 16, q3 += 16, q4 += 16, z0 += 8, z1 += 8;                                    \
    }                                                                                                        \
    x = Wo - 8;                                                                                              \
    const size_t i = 2 * x;                                                                                  \
    if (odd)                                                                                                 \
      block_s2(0, 1, 2, two, r0 + i, r1 + i, r2 + i, r3 + i, r4 + i, w, y0 + x, y1 + x);                     \
    else                                                                                                     \
      block_s2(0, 0, 2, two, r0 + i, r1 + i, r2 + i, r3 + i, r4 + i, w, y0 + x, y1 + x);                     \
  }
ROWPAIR(0)
ROWPAIR(1)
#undef ROWPAIR

/* A row of zeros for the padding rows above and below the plane. */
enum { ZERO_ROW = 2048 };
static const float k_zero_row[ZERO_ROW + 16];

static void plane_rows(size_t H, size_t W, int stride, const float *in, const float *w, float *out) {
  const size_t Ho = (H - 1) / (size_t)stride + 1, Wo = (W - 1) / (size_t)stride + 1;
  const float *zero = k_zero_row;
#define IN_ROW(i) ((i) < 0 || (i) >= (ptrdiff_t)H ? zero : in + (size_t)(i)*W)
  for (size_t y = 0; y < Ho; y += 2) {
    const int two = y + 1 < Ho;
    float *y0 = out + y * Wo, *y1 = two ? y0 + Wo : y0;
    if (stride == 1) {
      const ptrdiff_t r = (ptrdiff_t)y - 1;
      (two ? rowpair_s1_1 : rowpair_s1_0)(W, IN_ROW(r), IN_ROW(r + 1), IN_ROW(r + 2), IN_ROW(r + 3), w, y0, y1);
    } else {
      const ptrdiff_t r = 2 * (ptrdiff_t)y - 1;
      (two ? rowpair_s2_1 : rowpair_s2_0)(W, Wo, IN_ROW(r), IN_ROW(r + 1), IN_ROW(r + 2), IN_ROW(r + 3), IN_ROW(r + 4),
                                          w, y0, y1);
    }
  }
#undef IN_ROW
}

/* The plain loop, for output rows narrower than one block. */
static void plane_scalar(size_t H, size_t W, int s, const float *in, const float *w, float bias, float *out) {
  const size_t Ho = (H - 1) / (size_t)s + 1, Wo = (W - 1) / (size_t)s + 1;
  for (size_t y = 0; y < Ho; y++)
    for (size_t x = 0; x < Wo; x++) {
      float acc = bias;
      for (size_t i = 0; i < 3; i++) {
        const size_t iy = y * (size_t)s + i; /* + 1: the padded row */
        if (iy < 1 || iy > H) continue;
        for (size_t j = 0; j < 3; j++) {
          const size_t ix = x * (size_t)s + j;
          if (ix >= 1 && ix <= W) acc += w[3 * i + j] * in[(iy - 1) * W + ix - 1];
        }
      }
      out[y * Wo + x] = acc;
    }
}

void mxw_f32_dwconv3x3(size_t H, size_t W, int stride, const float *in, const float *w, float bias, float *out) {
  const size_t Ho = (H - 1) / (size_t)stride + 1, Wo = (W - 1) / (size_t)stride + 1;
  if (Wo < 4 || H == 0) {
    if (H > 0) plane_scalar(H, W, stride, in, w, bias, out);
    return;
  }
  /* the weights and the bias broadcast: wv[4 * t .. 4 * t + 4) = w[t], then the bias */
  float wv[40] __attribute__((aligned(16)));
  for (int t = 0; t < 10; t++) wasm_v128_store(wv + 4 * t, wasm_f32x4_splat(t < 9 ? w[t] : bias));
  const int path = mxw_dwconv3x3_path;
  if (W <= ZERO_ROW && (path == 3 || (path == 0 && W >= (stride == 1 ? 48u : 96u)))) {
    plane_rows(H, W, stride, in, wv, out);
    return;
  }
  /* strips of 8 outputs (stride 1: unless 4 cover the row with fewer overlapping columns) */
  const int wide = Wo >= 8 && path != 1 && (path == 2 || stride == 2 || (Wo + 7) / 8 * 8 == (Wo + 3) / 4 * 4);
  const size_t sw = wide ? 8 : 4;
  /* strips at x = 0, sw, ... while interior on the right, then one ending at the right edge (it
   * may overlap the previous one and recompute equal values) */
  size_t x = 0;
  if (stride == 1) {
    for (; x + sw < Wo; x += sw) k_strip_s1[wide][x == 0 ? EDGE_LEFT : 0](H, in + x, W, wv, out + x);
    x = Wo - sw;
    k_strip_s1[wide][EDGE_RIGHT | (x == 0 ? EDGE_LEFT : 0)](H, in + x, W, wv, out + x);
  } else {
    const int odd = W % 2 == 1; /* the last strip reads column W (padding) */
    for (; x + sw < Wo; x += sw) k_strip_s2[wide][x == 0 ? EDGE_LEFT : 0](H, Ho, in + 2 * x, W, wv, out + x, Wo);
    x = Wo - sw;
    k_strip_s2[wide][(odd ? EDGE_RIGHT : 0) | (x == 0 ? EDGE_LEFT : 0)](H, Ho, in + 2 * x, W, wv, out + x, Wo);
  }
}

/* ---- channel-last depthwise (NHWC) ----------------------------------------------------------------
 * Channels are contiguous, so the vectors run along them: each output pixel is, per block of 8 (then
 * 4, then 1) channels, bias + the sum over its taps inside the image, in tap order, of the taps'
 * weights (pre-transposed to (taps, C)) times the input pixels. Any window (2-D; 1-D as H = 1).
 * Pixels whose taps are all inside the row go two at a time through a loop over a per-row table of
 * tap offsets (each weight vector loaded serves both); the others test each tap. */
enum { DW_NHWC_MAX_TAPS = 64 };

/* One pixel, every tap tested (the edges). */
static void dw_nhwc_pixel(const mxw_dw_nhwc *g, ptrdiff_t iy0, ptrdiff_t ix0, const float *in, const float *wt,
                          const float *bias, float *o) {
  const size_t C = g->C;
  const ptrdiff_t H = (ptrdiff_t)g->H, W = (ptrdiff_t)g->W;
  size_t c = 0;
  for (; c + 4 <= C; c += 4) {
    v128_t a0 = bias ? wasm_v128_load(bias + c) : wasm_f32x4_splat(0.f);
    for (size_t i = 0; i < g->kh; i++) {
      const ptrdiff_t iy = iy0 + (ptrdiff_t)(i * g->dh);
      if (iy < 0 || iy >= H) continue;
      for (size_t j = 0; j < g->kw; j++) {
        const ptrdiff_t ix = ix0 + (ptrdiff_t)(j * g->dw);
        if (ix < 0 || ix >= W) continue;
        a0 = MADD(a0, wasm_v128_load(wt + (i * g->kw + j) * C + c),
                  wasm_v128_load(in + ((size_t)iy * (size_t)W + (size_t)ix) * C + c));
      }
    }
    wasm_v128_store(o + c, a0);
  }
  for (; c < C; c++) {
    float a = bias ? bias[c] : 0.f;
    for (size_t i = 0; i < g->kh; i++) {
      const ptrdiff_t iy = iy0 + (ptrdiff_t)(i * g->dh);
      if (iy < 0 || iy >= H) continue;
      for (size_t j = 0; j < g->kw; j++) {
        const ptrdiff_t ix = ix0 + (ptrdiff_t)(j * g->dw);
        if (ix < 0 || ix >= W) continue;
        a += wt[(i * g->kw + j) * C + c] * in[((size_t)iy * (size_t)W + (size_t)ix) * C + c];
      }
    }
    o[c] = a;
  }
}

/* Pixels x and x + 1 (two = 0: x alone) whose taps all lie inside the row: ntaps taps at input
 * offsets toff[] (from the pixel's first tap column) with weights at woff[]. */
static void dw_nhwc_pair(size_t C, const float *p0, size_t pstep, const ptrdiff_t *toff, const size_t *woff,
                         size_t ntaps, const float *wt, const float *bias, float *o, int two) {
  const float *p1 = p0 + (two ? pstep : 0);
  size_t c = 0;
  for (; c + 4 <= C; c += 4) {
    v128_t a0 = bias ? wasm_v128_load(bias + c) : wasm_f32x4_splat(0.f), a1 = a0;
    for (size_t t = 0; t < ntaps; t++) {
      const v128_t wv = wasm_v128_load(wt + woff[t] + c);
      a0 = MADD(a0, wv, wasm_v128_load(p0 + toff[t] + c));
      a1 = MADD(a1, wv, wasm_v128_load(p1 + toff[t] + c));
    }
    wasm_v128_store(o + c, a0);
    if (two) wasm_v128_store(o + C + c, a1);
  }
  for (; c < C; c++) {
    float a0 = bias ? bias[c] : 0.f, a1 = a0;
    for (size_t t = 0; t < ntaps; t++) {
      a0 += wt[woff[t] + c] * p0[toff[t] + c];
      a1 += wt[woff[t] + c] * p1[toff[t] + c];
    }
    o[c] = a0;
    if (two) o[C + c] = a1;
  }
}

void mxw_f32_dwconv_nhwc(const mxw_dw_nhwc *g, size_t y0, size_t y1, const float *in, const float *wt,
                         const float *bias, float *out) {
  const size_t C = g->C;
  const ptrdiff_t H = (ptrdiff_t)g->H, W = (ptrdiff_t)g->W;
  ptrdiff_t toff[DW_NHWC_MAX_TAPS];
  size_t woff[DW_NHWC_MAX_TAPS];
  const int table = g->kh * g->kw <= DW_NHWC_MAX_TAPS;
  /* output columns [xlo, xhi) have every tap column inside the row */
  size_t xlo = 0, xhi = 0;
  if (table) {
    xlo = (g->pw + g->sw - 1) / g->sw;
    const ptrdiff_t last = W - 1 - (ptrdiff_t)((g->kw - 1) * g->dw) + (ptrdiff_t)g->pw; /* need x * sw <= last */
    xhi = last < 0 ? 0 : (size_t)last / g->sw + 1;
    if (xhi > g->Wo) xhi = g->Wo;
    if (xlo > xhi) xlo = xhi;
  }
  for (size_t y = y0; y < y1; y++) {
    const ptrdiff_t iy0 = (ptrdiff_t)(y * g->sh) - (ptrdiff_t)g->ph;
    float *orow = out + y * g->Wo * C;
    size_t ntaps = 0;
    if (table)
      for (size_t i = 0; i < g->kh; i++) {
        const ptrdiff_t iy = iy0 + (ptrdiff_t)(i * g->dh);
        if (iy < 0 || iy >= H) continue;
        for (size_t j = 0; j < g->kw; j++, ntaps++) {
          toff[ntaps] = (iy * W + (ptrdiff_t)(j * g->dw)) * (ptrdiff_t)C;
          woff[ntaps] = (i * g->kw + j) * C;
        }
      }
    for (size_t x = 0; x < g->Wo; x++) {
      if (x >= xlo && x < xhi) {
        const int two = x + 1 < xhi;
        /* the row's first tap column for pixel x: x * sw - pw >= 0 here */
        const float *p0 = in + (x * g->sw - g->pw) * C;
        dw_nhwc_pair(C, p0, g->sw * C, toff, woff, ntaps, wt, bias, orow + x * C, two);
        if (two) x++;
        continue;
      }
      dw_nhwc_pixel(g, iy0, (ptrdiff_t)(x * g->sw) - (ptrdiff_t)g->pw, in, wt, bias, orow + x * C);
    }
  }
}
