/* gemm.c -- single-precision GEMM: a plain reference, a packed and cache-blocked driver around a
 * 4x8 WASM SIMD microkernel, and matrix-vector paths that stream the matrix once.
 *
 * mxw_sgemm picks, in order:
 *   M == 1                       rowdot (B transposed: y[j] = x . B[j]) or rowaxpy (y += x[i] B[i])
 *   M < 8, B transposed          rowdot 2x4 (two rows of x per pass over B): small-batch FC;
 *                                also M < 24 while B is small enough to stay in cache
 *   N < 8, A not transposed      the same over the rows of A, two columns of op(B) per pass
 *                                (also N < 24 not a multiple of 8, A small enough)
 *   op(A) packed <= 640 KiB      "whole A" (the FullyConnected and convolution shapes):
 *     pack all of op(A) once (4-row micro-panels, alpha applied)              ~ L2
 *     for jc over N by 64:         B block (kc x 64, packed just before use)  ~ L2
 *       for pc over K by KC (<= 512):
 *         for jr over the block by 8:   one B micro-panel (kc x 8 <= 16 KiB) ~ L1
 *           for ir over M by 4:         4x8 microkernel
 *     Every element of B is packed once, and a C block gets all its K blocks while in L1/L2.
 *   otherwise the blocked driver (GotoBLAS/BLIS loop order):
 *   for jc over N by NC:           B block  (kc x nc, packed once per pc)  ~ L2/L3
 *     for pc over K by KC:
 *       pack op(B)[pc:, jc:] into 8-column micro-panels (k-major, zero-padded)
 *       for ic over M by MC:       A block  (mc x kc, packed with alpha)   ~ L2
 *         pack op(A)[ic:, pc:] into 4-row micro-panels (k-major, zero-padded)
 *         for jr over nc by 8:     one B micro-panel (kc x 8 <= 16 KiB)     ~ L1
 *           for ir over mc by 4:   4x8 microkernel: C tile (+)= A panel * B panel
 * The first K block applies beta to C (beta == 0: C is only written), later ones add.
 *
 * Tile choice (../shared/notes/toolchain.md): in V8 (Node 20) a 4x8 tile with 8 f32x4
 * accumulators stays within the XMM registers while 6x8 spills. How the k loop is written
 * matters as much (see gemm_4x8): called once per tile on L1/L2-resident panels, a plain loop ran
 * at ~45 GFLOP/s here, plainly unrolled ones spilled (~32), and the form used reaches ~49-50;
 * inlined into the drivers' tile loops (no call per tile) whole products reach ~50 (FullyConnected
 * at batch 64, 256^3) and 45-48 (the convolution GEMMs). 3x12, 2x16 and pairwise-summed 4x8
 * tiles, pre-splatted A panels, and B blocks of 8..256 columns were not faster. For reference,
 * register-only f32x4 multiply+add peaks at ~59 with 12 independent accumulators and ~44 with 8.
 * The relaxed-SIMD tiers keep the 4x8 tile too (measured 2026-11-25, Node 20, x64 with FMA3):
 * TurboFan allocates 15 XMM registers and issues a step's loads before its multiply-adds, so a tile
 * fits only when accumulators + B vectors + A broadcasts <= 15 even with the fused multiply-add's
 * free temporary. 6x8 (12 + 2 + 6) spilled 4 accumulators per step and ran 20% slower; 3x12
 * (9 + 3 + 3) fits and ran 5% faster on L1-resident panels, but the partial tiles it leaves on
 * power-of-two shapes (N = 1024 = 85 * 12 + 4, M = 341 * 3 + 1) took that back on whole products
 * (bench/gemm.mjs: 0.96-1.01x). 4x8's 8 accumulator chains just cover the FMA latency (4 cycles,
 * 2 per cycle), which is where its ~83% of the relaxed_madd peak on L1-resident panels comes from.
 * Measured again on AMD Zen 3 (relaxed_madd peak ~50 GFLOP/s a thread), more chains did not help:
 * a 5x8 tile (10 chains) whose k step is cut into two basic blocks by a never-true test, so that at
 * most 10 + 2 + 3 values are live, ran 0.96-1.01x of 4x8 on L2-resident panels, 3x12 0.98-1.02x
 * (interleaved runs, 4x8 ~44 GFLOP/s); the unsplit 5x8 spilled and ran at half speed. Whole 1024^3
 * products vary from call to call there (36-48 GFLOP/s, either tile) while the register-only peak
 * stays within 1%, so the product's shortfall from the peak is not the tile's chain count.
 * Threads: a column split of a large product has every chunk pack all of op(A) for itself; packing
 * it once across the pool for all chunks to share measured slower (1024^3, 2 threads: 83-84 vs
 * 86-88 GFLOP/s on the simd tier, relaxed alike): a chunk's own packed copy sits in its core's L2.
 */
#include "gemm.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mxw_core.h"
#include "../core/simd.h"

enum {
  GEMM_MR = 4,    /* microkernel rows */
  GEMM_NR = 8,    /* microkernel columns (two f32x4) */
  GEMM_KC = 512,  /* depth of a packed block: a 4x512 A panel is 8 KiB, a 512x8 B panel 16 KiB
                     (256 measured 1-8% slower on large products) */
  GEMM_MC = 128,  /* rows of a packed A block: 256 KiB */
  GEMM_NC = 2048, /* columns of a packed B block: 4 MiB */
  /* "whole A": op(A) is packed at once up to this size (of a ~1 MiB L2), B in blocks of
   * GEMM_NC_WHOLE columns (8..256 measured alike) */
  GEMM_A_WHOLE_BYTES = 640 * 1024,
  GEMM_NC_WHOLE = 64,
  GEMV_NCHUNK = 1024, /* rowaxpy: y columns kept in L1 while all of x's rows stream past */
  /* Below GEMV_MAX_ROWS rows of A (with B transposed, as in FullyConnected) rowdot 2x4 passes over
   * B once per pair of rows instead of packing it: measured faster than packing B up to M = 7
   * always, and up to M = 23 while B (N x K) is at most GEMV_CACHED_FLOATS, so that it stays in
   * L2/L3 between the passes (at M = 8 with a 16 MiB B, packing was 1.3x faster). Likewise for a
   * few columns of op(B) against the rows of A, where from N = 8 on only widths that leave a
   * partial 8-column tile go this way (N = 16 packed: 40 GFLOP/s, rowdot 36; N = 10: 23 vs 37). */
  GEMV_MAX_ROWS = 8,
  GEMV_MAX_ROWS_CACHED = 24,
  GEMV_CACHED_FLOATS = 512 * 1024 /* 2 MiB */
};

static inline size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }
static inline size_t round_up(size_t a, size_t m) { return (a + m - 1) / m * m; }

/* ---- packing buffers (owned here, grow-only) ------------------------------------------------ */
typedef struct {
  float *p;
  size_t cap; /* floats */
} pack_buf;
/* per thread: the chunks of a threaded product pack their own panels (mxw_parallel_for) */
static _Thread_local pack_buf g_pack_a, g_pack_b;

static float *pack_buf_get(pack_buf *b, size_t n) {
  if (n <= b->cap) return b->p;
  free(b->p);
  mxw_scratch_account(-(int64_t)(b->cap * sizeof(float)));
  b->p = NULL;
  b->cap = 0;
  size_t bytes = round_up(n * sizeof(float), 64);
  float *p = (float *)aligned_alloc(64, bytes);
  if (!p) {
    mxw_fail("out of memory: %zu bytes for GEMM packing", bytes);
    return NULL;
  }
  b->p = p;
  b->cap = bytes / sizeof(float);
  mxw_scratch_account((int64_t)bytes);
  return p;
}

/* Frees the calling thread's packing buffers (mxw_scratch_release). */
void mxw_gemm_release_buffers(void) {
  free(g_pack_a.p);
  free(g_pack_b.p);
  mxw_scratch_account(-(int64_t)((g_pack_a.cap + g_pack_b.cap) * sizeof(float)));
  g_pack_a = (pack_buf){NULL, 0};
  g_pack_b = (pack_buf){NULL, 0};
}

/* ---- argument checks shared by every entry point ------------------------------------------- */
static int check_args(const char *fn, int64_t M, int64_t N, int64_t K, int trans_a, int trans_b, int64_t lda,
                      int64_t ldb, int64_t ldc, const void *A, const void *B, const void *C) {
  if (M < 0 || N < 0 || K < 0)
    return mxw_fail("%s: negative size M=%lld N=%lld K=%lld", fn, (long long)M, (long long)N, (long long)K);
  int64_t a_cols = trans_a ? M : K, b_cols = trans_b ? K : N;
  if (lda < a_cols) return mxw_fail("%s: lda %lld is less than %lld", fn, (long long)lda, (long long)a_cols);
  if (ldb < b_cols) return mxw_fail("%s: ldb %lld is less than %lld", fn, (long long)ldb, (long long)b_cols);
  if (ldc < N) return mxw_fail("%s: ldc %lld is less than N=%lld", fn, (long long)ldc, (long long)N);
  if (M > 0 && N > 0 && !C) return mxw_fail("%s: C is NULL", fn);
  if (M > 0 && N > 0 && K > 0 && (!A || !B)) return mxw_fail("%s: A or B is NULL", fn);
  return 0;
}

/* C = beta * C over an (M, N) block; beta == 0 writes zeros without reading C. */
static void scale_c(size_t M, size_t N, float beta, float *C, size_t ldc) {
  if (beta == 1.f) return;
  for (size_t i = 0; i < M; i++) {
    float *row = C + i * ldc;
    if (beta == 0.f) {
      memset(row, 0, N * sizeof(float));
    } else {
      for (size_t j = 0; j < N; j++) row[j] *= beta;
    }
  }
}

/* ---- reference ------------------------------------------------------------------------------- */
int mxw_sgemm_ref(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                  const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  MXW_TRY(check_args("sgemm_ref", M, N, K, trans_a, trans_b, lda, ldb, ldc, A, B, C));
  for (int64_t i = 0; i < M; i++) {
    for (int64_t j = 0; j < N; j++) {
      double sum = 0;
      if (alpha != 0.f) {
        for (int64_t k = 0; k < K; k++) {
          float a = trans_a ? A[k * lda + i] : A[i * lda + k];
          float b = trans_b ? B[j * ldb + k] : B[k * ldb + j];
          sum += (double)a * (double)b;
        }
      }
      double v = (double)alpha * sum;
      if (beta != 0.f) v += (double)beta * (double)C[i * ldc + j];
      C[i * ldc + j] = (float)v;
    }
  }
  return 0;
}

/* Below this many multiply-adds a product runs on the calling thread (the pool's hand-off costs
 * a few microseconds); tests lower it (gemm.h). */
int64_t mxw_gemm_parallel_min_macs = 1 << 17;

/* Rows [begin, end) of the double product: each row of C is computed by the same loop whatever
 * chunk holds it, so the row split across the pool is bit-identical to one thread. */
typedef struct {
  int trans_a, trans_b;
  int64_t N, K, lda, ldb, ldc;
  double alpha, beta;
  const double *A, *B;
  double *C;
} dgemm_job;

static void dgemm_rows(void *ctx, int64_t begin, int64_t end) {
  const dgemm_job *j = (const dgemm_job *)ctx;
  const int64_t N = j->N, K = j->K, lda = j->lda, ldb = j->ldb;
  const double alpha = j->alpha, beta = j->beta, *A = j->A, *B = j->B;
  for (int64_t i = begin; i < end; i++) {
    double *row = j->C + i * j->ldc;
    for (int64_t c = 0; c < N; c++) row[c] = beta == 0 ? 0.0 : beta * row[c];
    if (alpha == 0 || K == 0) continue;
    if (!j->trans_b) { /* row i of C += a_ik * row k of B: unit stride inside */
      for (int64_t k = 0; k < K; k++) {
        double a = alpha * (j->trans_a ? A[k * lda + i] : A[i * lda + k]);
        const double *brow = B + k * ldb;
        for (int64_t c = 0; c < N; c++) row[c] += a * brow[c];
      }
    } else { /* C[i][c] += dot(row i of op(A), row c of B) */
      for (int64_t c = 0; c < N; c++) {
        const double *brow = B + c * ldb;
        double sum = 0;
        for (int64_t k = 0; k < K; k++) sum += (j->trans_a ? A[k * lda + i] : A[i * lda + k]) * brow[k];
        row[c] += alpha * sum;
      }
    }
  }
}

int mxw_dgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double *A, int64_t lda,
              const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
  MXW_TRY(check_args("dgemm", M, N, K, trans_a, trans_b, lda, ldb, ldc, A, B, C));
  dgemm_job j = {trans_a, trans_b, N, K, lda, ldb, ldc, alpha, beta, A, B, C};
  if (M > 1 && mxw_get_num_threads() > 1 && (double)M * (double)N * (double)K >= (double)mxw_gemm_parallel_min_macs)
    mxw_parallel_for(M, 1, dgemm_rows, &j);
  else
    dgemm_rows(&j, 0, M);
  return 0;
}

/* ---- SIMD helpers ------------------------------------------------------------------------------ */
#define F4_MADD(acc, a, b) MXW_F32X4_MADD(acc, a, b) /* fused in the relaxed-SIMD tiers (core/simd.h) */

/* In-place 4x4 transpose of r0..r3 (rows become columns). */
#define TRANSPOSE4(r0, r1, r2, r3)                       \
  do {                                                   \
    v128_t t0_ = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5); \
    v128_t t1_ = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5); \
    v128_t t2_ = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7); \
    v128_t t3_ = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7); \
    r0 = wasm_i32x4_shuffle(t0_, t1_, 0, 1, 4, 5);       \
    r1 = wasm_i32x4_shuffle(t0_, t1_, 2, 3, 6, 7);       \
    r2 = wasm_i32x4_shuffle(t2_, t3_, 0, 1, 4, 5);       \
    r3 = wasm_i32x4_shuffle(t2_, t3_, 2, 3, 6, 7);       \
  } while (0)

/* Horizontal sums of four vectors: lane q of the result is the sum of the lanes of s_q. */
static inline v128_t hsum4(v128_t s0, v128_t s1, v128_t s2, v128_t s3) {
  v128_t a = wasm_f32x4_add(wasm_i32x4_shuffle(s0, s1, 0, 4, 1, 5), wasm_i32x4_shuffle(s0, s1, 2, 6, 3, 7));
  v128_t b = wasm_f32x4_add(wasm_i32x4_shuffle(s2, s3, 0, 4, 1, 5), wasm_i32x4_shuffle(s2, s3, 2, 6, 3, 7));
  /* a = (s0[0]+s0[2], s1[0]+s1[2], s0[1]+s0[3], s1[1]+s1[3]); b likewise for s2, s3 */
  return wasm_f32x4_add(wasm_i32x4_shuffle(a, b, 0, 1, 4, 5), wasm_i32x4_shuffle(a, b, 2, 3, 6, 7));
}

static inline float hsum(v128_t s) {
  return (wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1)) +
         (wasm_f32x4_extract_lane(s, 2) + wasm_f32x4_extract_lane(s, 3));
}

/* c = acc + beta * c, with beta == 0 not reading c and beta == 1 a plain add. */
static inline void store_f4(float *c, v128_t acc, float beta) {
  if (beta == 0.f) {
    wasm_v128_store(c, acc);
  } else if (beta == 1.f) {
    wasm_v128_store(c, wasm_f32x4_add(acc, wasm_v128_load(c)));
  } else {
    wasm_v128_store(c, F4_MADD(acc, wasm_f32x4_splat(beta), wasm_v128_load(c)));
  }
}
static inline float finish1(float acc, float beta, float old) { return beta == 0.f ? acc : acc + beta * old; }

/* ---- packing ---------------------------------------------------------------------------------- */
/* op(A)[ic:ic+mc, pc:pc+kc] (A points at its first element) into 4-row micro-panels:
 * dst[(i0/4) * kc * 4 + k * 4 + r] = alpha * op(A)[i0 + r][k], zero for rows past mc. */
static void pack_a(int trans_a, size_t mc, size_t kc, const float *A, size_t lda, float alpha, float *dst) {
  const v128_t valpha = wasm_f32x4_splat(alpha);
  for (size_t i0 = 0; i0 < mc; i0 += GEMM_MR) {
    size_t mr = min_sz(GEMM_MR, mc - i0);
    float *d = dst + i0 * kc;
    if (mr == GEMM_MR && !trans_a) { /* four rows, each contiguous in k: transpose 4x4 blocks */
      const float *r0 = A + i0 * lda, *r1 = r0 + lda, *r2 = r1 + lda, *r3 = r2 + lda;
      size_t k = 0;
      for (; k + 4 <= kc; k += 4) {
        v128_t v0 = wasm_v128_load(r0 + k), v1 = wasm_v128_load(r1 + k);
        v128_t v2 = wasm_v128_load(r2 + k), v3 = wasm_v128_load(r3 + k);
        TRANSPOSE4(v0, v1, v2, v3);
        wasm_v128_store(d + k * 4, wasm_f32x4_mul(v0, valpha));
        wasm_v128_store(d + k * 4 + 4, wasm_f32x4_mul(v1, valpha));
        wasm_v128_store(d + k * 4 + 8, wasm_f32x4_mul(v2, valpha));
        wasm_v128_store(d + k * 4 + 12, wasm_f32x4_mul(v3, valpha));
      }
      for (; k < kc; k++) {
        d[k * 4 + 0] = alpha * r0[k];
        d[k * 4 + 1] = alpha * r1[k];
        d[k * 4 + 2] = alpha * r2[k];
        d[k * 4 + 3] = alpha * r3[k];
      }
    } else if (mr == GEMM_MR) { /* transposed: the four values of each k are contiguous */
      for (size_t k = 0; k < kc; k++)
        wasm_v128_store(d + k * 4, wasm_f32x4_mul(wasm_v128_load(A + k * lda + i0), valpha));
    } else {
      for (size_t k = 0; k < kc; k++) {
        for (size_t r = 0; r < GEMM_MR; r++) {
          d[k * 4 + r] = r < mr ? alpha * (trans_a ? A[k * lda + i0 + r] : A[(i0 + r) * lda + k]) : 0.f;
        }
      }
    }
  }
}

/* op(B)[pc:pc+kc, jc:jc+nc] (B points at its first element) into 8-column micro-panels:
 * dst[(j0/8) * kc * 8 + k * 8 + c] = op(B)[k][j0 + c], zero for columns past nc. */
static void pack_b(int trans_b, size_t kc, size_t nc, const float *B, size_t ldb, float *dst) {
  for (size_t j0 = 0; j0 < nc; j0 += GEMM_NR) {
    size_t nr = min_sz(GEMM_NR, nc - j0);
    float *d = dst + j0 * kc;
    if (nr == GEMM_NR && !trans_b) { /* rows of B are contiguous in j */
      const float *b = B + j0;
      for (size_t k = 0; k < kc; k++, b += ldb) {
        wasm_v128_store(d + k * 8, wasm_v128_load(b));
        wasm_v128_store(d + k * 8 + 4, wasm_v128_load(b + 4));
      }
    } else if (nr == GEMM_NR) { /* B is (N, K): eight rows contiguous in k, transposed 4x4 at a time */
      const float *r[8];
      for (int c = 0; c < 8; c++) r[c] = B + (j0 + (size_t)c) * ldb;
      size_t k = 0;
      for (; k + 4 <= kc; k += 4) {
        v128_t l0 = wasm_v128_load(r[0] + k), l1 = wasm_v128_load(r[1] + k);
        v128_t l2 = wasm_v128_load(r[2] + k), l3 = wasm_v128_load(r[3] + k);
        v128_t h0 = wasm_v128_load(r[4] + k), h1 = wasm_v128_load(r[5] + k);
        v128_t h2 = wasm_v128_load(r[6] + k), h3 = wasm_v128_load(r[7] + k);
        TRANSPOSE4(l0, l1, l2, l3);
        TRANSPOSE4(h0, h1, h2, h3);
        float *o = d + k * 8;
        wasm_v128_store(o + 0, l0);
        wasm_v128_store(o + 4, h0);
        wasm_v128_store(o + 8, l1);
        wasm_v128_store(o + 12, h1);
        wasm_v128_store(o + 16, l2);
        wasm_v128_store(o + 20, h2);
        wasm_v128_store(o + 24, l3);
        wasm_v128_store(o + 28, h3);
      }
      for (; k < kc; k++)
        for (int c = 0; c < 8; c++) d[k * 8 + (size_t)c] = r[c][k];
    } else {
      for (size_t k = 0; k < kc; k++) {
        for (size_t c = 0; c < GEMM_NR; c++) {
          d[k * 8 + c] = c < nr ? (trans_b ? B[(j0 + c) * ldb + k] : B[k * ldb + j0 + c]) : 0.f;
        }
      }
    }
  }
}

/* ---- microkernels ------------------------------------------------------------------------------ */
/* Keeps the compiler from folding a pointer's per-step increments into load offsets (a no-op in the
 * generated code). See the microkernel below for why that matters. */
#if defined(__wasm__) || defined(__GNUC__)
#define GEMM_OPAQUE(p) __asm__("" : "+r"(p))
#else
#define GEMM_OPAQUE(p) ((void)0)
#endif

/* One k step of the 4x8 tile: two f32x4 of the B row times the four broadcast A values of this k
 * (A is read at offsets 0..3 of the current `a`; B at row `o` of the current 8-row group). */
#define UK_4X8_STEP(o)                                                                   \
  do {                                                                                   \
    const v128_t bl = wasm_v128_load(b + 8 * (o)), bh = wasm_v128_load(b + 8 * (o) + 4); \
    v128_t x = wasm_v128_load32_splat(a);                                                \
    c0l = F4_MADD(c0l, x, bl);                                                           \
    c0h = F4_MADD(c0h, x, bh);                                                           \
    x = wasm_v128_load32_splat(a + 1);                                                   \
    c1l = F4_MADD(c1l, x, bl);                                                           \
    c1h = F4_MADD(c1h, x, bh);                                                           \
    x = wasm_v128_load32_splat(a + 2);                                                   \
    c2l = F4_MADD(c2l, x, bl);                                                           \
    c2h = F4_MADD(c2h, x, bh);                                                           \
    x = wasm_v128_load32_splat(a + 3);                                                   \
    c3l = F4_MADD(c3l, x, bl);                                                           \
    c3h = F4_MADD(c3h, x, bh);                                                           \
  } while (0)
/* Advances a by one k step and leaves the k loop after the last one. */
#define UK_4X8_NEXT() \
  a += GEMM_MR;       \
  GEMM_OPAQUE(a);     \
  if (a == a_end) break

/* The 4x8 tile of mxw_f32_gemm_ukernel_4x8__wasmsimd (gemm.h), inlined into the drivers.
 * Why its k loop looks like this (V8's TurboFan on x64, measured; see the file header):
 *  - TurboFan places all loads of a basic block ahead of its arithmetic, so a plainly unrolled
 *    body keeps every step's B rows and A broadcasts live at once and spills (8 accumulators +
 *    6 loads per step already fill the 15 usable XMM registers). An exit test after every step
 *    makes each step its own block, so its loads stay next to its arithmetic.
 *  - The unrolling pays for the per-iteration stack check and induction updates of a wasm loop.
 *  - `a` advances by one step each time (kept opaque so clang does not fold it into offsets):
 *    V8 materializes base+offset in a register for every v128.load32_splat with a non-zero
 *    offset, while offsets 0..12 on one index register reuse three hoisted bases. The B loads
 *    take their offsets for free, so b advances once per eight steps.
 * Each step is then 6 loads, 8 mul, 8 add, 1 add and a fused compare-branch. */
static inline __attribute__((always_inline)) void gemm_4x8(size_t mr, size_t nr, size_t kc, const float *restrict a,
                                                           const float *restrict b, float *restrict c, size_t ldc,
                                                           float beta) {
  v128_t c0l = wasm_f32x4_splat(0.f), c0h = c0l, c1l = c0l, c1h = c0l;
  v128_t c2l = c0l, c2h = c0l, c3l = c0l, c3h = c0l;
  if (kc > 0) {
    const float *const a_end = a + kc * GEMM_MR;
    for (;;) {
      UK_4X8_STEP(0);
      UK_4X8_NEXT();
      UK_4X8_STEP(1);
      UK_4X8_NEXT();
      UK_4X8_STEP(2);
      UK_4X8_NEXT();
      UK_4X8_STEP(3);
      UK_4X8_NEXT();
      UK_4X8_STEP(4);
      UK_4X8_NEXT();
      UK_4X8_STEP(5);
      UK_4X8_NEXT();
      UK_4X8_STEP(6);
      UK_4X8_NEXT();
      UK_4X8_STEP(7);
      b += 8 * GEMM_NR;
      UK_4X8_NEXT();
    }
  }
  if (mr == GEMM_MR && nr == GEMM_NR) {
    store_f4(c, c0l, beta);
    store_f4(c + 4, c0h, beta);
    c += ldc;
    store_f4(c, c1l, beta);
    store_f4(c + 4, c1h, beta);
    c += ldc;
    store_f4(c, c2l, beta);
    store_f4(c + 4, c2h, beta);
    c += ldc;
    store_f4(c, c3l, beta);
    store_f4(c + 4, c3h, beta);
    return;
  }
  /* edge tile: through a local tile, storing only the mr x nr valid part */
  float tile[GEMM_MR][GEMM_NR];
  wasm_v128_store(&tile[0][0], c0l);
  wasm_v128_store(&tile[0][4], c0h);
  wasm_v128_store(&tile[1][0], c1l);
  wasm_v128_store(&tile[1][4], c1h);
  wasm_v128_store(&tile[2][0], c2l);
  wasm_v128_store(&tile[2][4], c2h);
  wasm_v128_store(&tile[3][0], c3l);
  wasm_v128_store(&tile[3][4], c3h);
  for (size_t i = 0; i < mr; i++)
    for (size_t j = 0; j < nr; j++) c[i * ldc + j] = finish1(tile[i][j], beta, c[i * ldc + j]);
}

void mxw_f32_gemm_ukernel_4x8__wasmsimd(size_t mr, size_t nr, size_t kc, const float *restrict a,
                                        const float *restrict b, float *restrict c, size_t ldc, float beta) {
  gemm_4x8(mr, nr, kc, a, b, c, ldc, beta);
}

/* One k step of the 4x4 tile: the first f32x4 of the 8-wide B row times the four A values. */
#define UK_4X4_STEP(o)                                     \
  do {                                                     \
    const v128_t bl = wasm_v128_load(b + 8 * (o));         \
    c0l = F4_MADD(c0l, wasm_v128_load32_splat(a), bl);     \
    c1l = F4_MADD(c1l, wasm_v128_load32_splat(a + 1), bl); \
    c2l = F4_MADD(c2l, wasm_v128_load32_splat(a + 2), bl); \
    c3l = F4_MADD(c3l, wasm_v128_load32_splat(a + 3), bl); \
  } while (0)

/* The left half of gemm_4x8 for a B micro-panel with at most 4 valid columns (an N that is not a
 * multiple of 8, e.g. a 7x7 image's 49 positions): half the arithmetic of the 8-wide tile, and
 * each element summed in the same order, so C does not depend on which tile computed it. */
static inline __attribute__((always_inline)) void gemm_4x4(size_t mr, size_t nr, size_t kc, const float *restrict a,
                                                           const float *restrict b, float *restrict c, size_t ldc,
                                                           float beta) {
  v128_t c0l = wasm_f32x4_splat(0.f), c1l = c0l, c2l = c0l, c3l = c0l;
  if (kc > 0) {
    const float *const a_end = a + kc * GEMM_MR;
    for (;;) {
      UK_4X4_STEP(0);
      UK_4X8_NEXT();
      UK_4X4_STEP(1);
      UK_4X8_NEXT();
      UK_4X4_STEP(2);
      UK_4X8_NEXT();
      UK_4X4_STEP(3);
      UK_4X8_NEXT();
      UK_4X4_STEP(4);
      UK_4X8_NEXT();
      UK_4X4_STEP(5);
      UK_4X8_NEXT();
      UK_4X4_STEP(6);
      UK_4X8_NEXT();
      UK_4X4_STEP(7);
      b += 8 * GEMM_NR;
      UK_4X8_NEXT();
    }
  }
  if (mr == GEMM_MR && nr == 4) {
    store_f4(c, c0l, beta);
    store_f4(c + ldc, c1l, beta);
    store_f4(c + 2 * ldc, c2l, beta);
    store_f4(c + 3 * ldc, c3l, beta);
    return;
  }
  float tile[GEMM_MR][4];
  wasm_v128_store(&tile[0][0], c0l);
  wasm_v128_store(&tile[1][0], c1l);
  wasm_v128_store(&tile[2][0], c2l);
  wasm_v128_store(&tile[3][0], c3l);
  for (size_t i = 0; i < mr; i++)
    for (size_t j = 0; j < nr; j++) c[i * ldc + j] = finish1(tile[i][j], beta, c[i * ldc + j]);
}

/* C[0:m, 0:nr] (+)= every 4-row panel of a packed A block times one packed B micro-panel, with
 * the tile inlined: a call per tile cost 6-10% of the whole product here (K = 64..1152), and so
 * did leaving this loop a separate function (it is inlined into both drivers). Panels of at most
 * 4 columns take the 4x4 tile. */
static inline __attribute__((always_inline)) void gemm_4x8_column(size_t m, size_t nr, size_t kc, const float *pa,
                                                                  const float *pb, float *c, size_t ldc, float beta) {
  if (nr <= 4) {
    for (size_t ir = 0; ir < m; ir += GEMM_MR)
      gemm_4x4(min_sz(GEMM_MR, m - ir), nr, kc, pa + ir * kc, pb, c + ir * ldc, ldc, beta);
    return;
  }
  for (size_t ir = 0; ir < m; ir += GEMM_MR)
    gemm_4x8(min_sz(GEMM_MR, m - ir), nr, kc, pa + ir * kc, pb, c + ir * ldc, ldc, beta);
}

/* The row-dot kernels below use the same loop shape as the GEMM microkernel: eight 4-wide k
 * steps per iteration, an exit test after each (`left` counts the k values still to do, kept
 * opaque so clang keeps one test per step), and pointers advanced once per eight steps (v128.load
 * offsets are free). The plain i += 4 loop they replace ran ~20% (2x4) and ~10% (4) slower. */
#define ROWDOT_NEXT() \
  left -= 4;          \
  GEMM_OPAQUE(left);  \
  if (left == 0) break

/* One step of rowdot 4: rows 0..3 times x over k values 4*o .. 4*o+3, into S0..S3. */
#define ROWDOT4_STEP(o, S0, S1, S2, S3)                \
  do {                                                 \
    const v128_t u = wasm_v128_load(xp + 4 * (o));     \
    S0 = F4_MADD(S0, wasm_v128_load(p0 + 4 * (o)), u); \
    S1 = F4_MADD(S1, wasm_v128_load(p1 + 4 * (o)), u); \
    S2 = F4_MADD(S2, wasm_v128_load(p2 + 4 * (o)), u); \
    S3 = F4_MADD(S3, wasm_v128_load(p3 + 4 * (o)), u); \
  } while (0)

void mxw_f32_rowdot_ukernel_4__wasmsimd(size_t rows, size_t k, float alpha, const float *R, size_t ldr, const float *x,
                                        float beta, float *y, size_t incy) {
  const size_t k4 = k & ~(size_t)3;
  size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float *r0 = R + r * ldr, *r1 = r0 + ldr, *r2 = r1 + ldr, *r3 = r2 + ldr;
    /* two accumulator sets (even and odd steps): four chains alone wait on the add latency */
    v128_t s0 = wasm_f32x4_splat(0.f), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
    const float *xp = x, *p0 = r0, *p1 = r1, *p2 = r2, *p3 = r3;
    size_t left = k4;
    if (left > 0) {
      for (;;) {
        ROWDOT4_STEP(0, s0, s1, s2, s3);
        ROWDOT_NEXT();
        ROWDOT4_STEP(1, t0, t1, t2, t3);
        ROWDOT_NEXT();
        ROWDOT4_STEP(2, s0, s1, s2, s3);
        ROWDOT_NEXT();
        ROWDOT4_STEP(3, t0, t1, t2, t3);
        ROWDOT_NEXT();
        ROWDOT4_STEP(4, s0, s1, s2, s3);
        ROWDOT_NEXT();
        ROWDOT4_STEP(5, t0, t1, t2, t3);
        ROWDOT_NEXT();
        ROWDOT4_STEP(6, s0, s1, s2, s3);
        ROWDOT_NEXT();
        ROWDOT4_STEP(7, t0, t1, t2, t3);
        xp += 32;
        p0 += 32;
        p1 += 32;
        p2 += 32;
        p3 += 32;
        ROWDOT_NEXT();
      }
    }
    float out[4];
    wasm_v128_store(
        out, hsum4(wasm_f32x4_add(s0, t0), wasm_f32x4_add(s1, t1), wasm_f32x4_add(s2, t2), wasm_f32x4_add(s3, t3)));
    for (size_t i = k4; i < k; i++) {
      out[0] += r0[i] * x[i];
      out[1] += r1[i] * x[i];
      out[2] += r2[i] * x[i];
      out[3] += r3[i] * x[i];
    }
    for (size_t q = 0; q < 4; q++) {
      float *yq = y + (r + q) * incy;
      *yq = finish1(alpha * out[q], beta, *yq);
    }
  }
  for (; r < rows; r++) {
    const float *r0 = R + r * ldr;
    v128_t s0 = wasm_f32x4_splat(0.f), s1 = s0;
    size_t i = 0;
    for (; i + 8 <= k; i += 8) {
      s0 = F4_MADD(s0, wasm_v128_load(r0 + i), wasm_v128_load(x + i));
      s1 = F4_MADD(s1, wasm_v128_load(r0 + i + 4), wasm_v128_load(x + i + 4));
    }
    for (; i + 4 <= k; i += 4) s0 = F4_MADD(s0, wasm_v128_load(r0 + i), wasm_v128_load(x + i));
    float sum = hsum(wasm_f32x4_add(s0, s1));
    for (; i < k; i++) sum += r0[i] * x[i];
    float *yr = y + r * incy;
    *yr = finish1(alpha * sum, beta, *yr);
  }
}

/* One step of rowdot 2x4: rows 0..3 times x0 (into s0q) and x1 (into s1q). */
#define ROWDOT2X4_STEP(o)                                                            \
  do {                                                                               \
    const v128_t u = wasm_v128_load(u0 + 4 * (o)), v = wasm_v128_load(u1 + 4 * (o)); \
    v128_t w = wasm_v128_load(p0 + 4 * (o));                                         \
    s00 = F4_MADD(s00, w, u);                                                        \
    s10 = F4_MADD(s10, w, v);                                                        \
    w = wasm_v128_load(p1 + 4 * (o));                                                \
    s01 = F4_MADD(s01, w, u);                                                        \
    s11 = F4_MADD(s11, w, v);                                                        \
    w = wasm_v128_load(p2 + 4 * (o));                                                \
    s02 = F4_MADD(s02, w, u);                                                        \
    s12 = F4_MADD(s12, w, v);                                                        \
    w = wasm_v128_load(p3 + 4 * (o));                                                \
    s03 = F4_MADD(s03, w, u);                                                        \
    s13 = F4_MADD(s13, w, v);                                                        \
  } while (0)

void mxw_f32_rowdot_ukernel_2x4__wasmsimd(size_t rows, size_t k, float alpha, const float *R, size_t ldr,
                                          const float *x0, const float *x1, float beta, float *y0, float *y1,
                                          size_t incy) {
  const size_t k4 = k & ~(size_t)3;
  size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float *r0 = R + r * ldr, *r1 = r0 + ldr, *r2 = r1 + ldr, *r3 = r2 + ldr;
    v128_t s00 = wasm_f32x4_splat(0.f), s01 = s00, s02 = s00, s03 = s00; /* x0 . rows 0..3 */
    v128_t s10 = s00, s11 = s00, s12 = s00, s13 = s00;                   /* x1 . rows 0..3 */
    const float *u0 = x0, *u1 = x1, *p0 = r0, *p1 = r1, *p2 = r2, *p3 = r3;
    size_t left = k4;
    if (left > 0) {
      for (;;) {
        ROWDOT2X4_STEP(0);
        ROWDOT_NEXT();
        ROWDOT2X4_STEP(1);
        ROWDOT_NEXT();
        ROWDOT2X4_STEP(2);
        ROWDOT_NEXT();
        ROWDOT2X4_STEP(3);
        ROWDOT_NEXT();
        ROWDOT2X4_STEP(4);
        ROWDOT_NEXT();
        ROWDOT2X4_STEP(5);
        ROWDOT_NEXT();
        ROWDOT2X4_STEP(6);
        ROWDOT_NEXT();
        ROWDOT2X4_STEP(7);
        u0 += 32;
        u1 += 32;
        p0 += 32;
        p1 += 32;
        p2 += 32;
        p3 += 32;
        ROWDOT_NEXT();
      }
    }
    float out0[4], out1[4];
    wasm_v128_store(out0, hsum4(s00, s01, s02, s03));
    wasm_v128_store(out1, hsum4(s10, s11, s12, s13));
    for (size_t i = k4; i < k; i++) {
      out0[0] += r0[i] * x0[i];
      out0[1] += r1[i] * x0[i];
      out0[2] += r2[i] * x0[i];
      out0[3] += r3[i] * x0[i];
      out1[0] += r0[i] * x1[i];
      out1[1] += r1[i] * x1[i];
      out1[2] += r2[i] * x1[i];
      out1[3] += r3[i] * x1[i];
    }
    for (size_t q = 0; q < 4; q++) {
      float *p0 = y0 + (r + q) * incy, *p1 = y1 + (r + q) * incy;
      *p0 = finish1(alpha * out0[q], beta, *p0);
      *p1 = finish1(alpha * out1[q], beta, *p1);
    }
  }
  if (r < rows) {
    mxw_f32_rowdot_ukernel_4__wasmsimd(rows - r, k, alpha, R + r * ldr, ldr, x0, beta, y0 + r * incy, incy);
    mxw_f32_rowdot_ukernel_4__wasmsimd(rows - r, k, alpha, R + r * ldr, ldr, x1, beta, y1 + r * incy, incy);
  }
}

void mxw_f32_rowaxpy_ukernel_4__wasmsimd(size_t k, size_t n, float alpha, const float *x, const float *R, size_t ldr,
                                         float beta, float *y) {
  scale_c(1, n, beta, y, n);
  for (size_t n0 = 0; n0 < n; n0 += GEMV_NCHUNK) {
    size_t nn = min_sz(GEMV_NCHUNK, n - n0);
    float *yc = y + n0;
    size_t i = 0;
    for (; i + 4 <= k; i += 4) { /* four rows of R per pass over the y chunk */
      const float x0 = alpha * x[i], x1 = alpha * x[i + 1], x2 = alpha * x[i + 2], x3 = alpha * x[i + 3];
      const v128_t v0 = wasm_f32x4_splat(x0), v1 = wasm_f32x4_splat(x1);
      const v128_t v2 = wasm_f32x4_splat(x2), v3 = wasm_f32x4_splat(x3);
      const float *p0 = R + i * ldr + n0, *p1 = p0 + ldr, *p2 = p1 + ldr, *p3 = p2 + ldr;
      size_t j = 0;
      for (; j + 4 <= nn; j += 4) {
        v128_t s = F4_MADD(wasm_f32x4_mul(v0, wasm_v128_load(p0 + j)), v1, wasm_v128_load(p1 + j));
        s = F4_MADD(s, v2, wasm_v128_load(p2 + j));
        s = F4_MADD(s, v3, wasm_v128_load(p3 + j));
        wasm_v128_store(yc + j, wasm_f32x4_add(wasm_v128_load(yc + j), s));
      }
      for (; j < nn; j++) yc[j] += x0 * p0[j] + x1 * p1[j] + x2 * p2[j] + x3 * p3[j];
    }
    for (; i < k; i++) {
      const float xi = alpha * x[i];
      const v128_t v = wasm_f32x4_splat(xi);
      const float *p = R + i * ldr + n0;
      size_t j = 0;
      for (; j + 4 <= nn; j += 4) wasm_v128_store(yc + j, F4_MADD(wasm_v128_load(yc + j), v, wasm_v128_load(p + j)));
      for (; j < nn; j++) yc[j] += xi * p[j];
    }
  }
}

/* A product with K < RANKK_MAX_K and B (K, N) untransposed (a small-batch weight gradient,
 * dW = dY^T X): each row of C is K rows of B scaled and summed, computed in registers four columns
 * at a time and stored once, row after row. The tiled driver wrote C in 4x8 tiles down each
 * column strip, every cache line in two halves far apart, which made such products bound by
 * store misses (in rows, one thread: 256x1x784 37 -> 24 us, 784x1x256 103 -> 26 us). As the
 * microkernel: alpha goes into A's values, the sum runs over k in order from a product, then
 * beta * C is added. */
#define RANKK_MAX_K 5
/* one copy per K (always inlined with a constant), so that each loop does exactly K products */
static inline __attribute__((always_inline)) void rank_k_rows(size_t K, int trans_a, size_t m, size_t n, float alpha,
                                                              const float *A, size_t sa, const float *B, size_t sb,
                                                              float beta, float *C, size_t sc) {
  const v128_t vbeta = wasm_f32x4_splat(beta);
  for (size_t i = 0; i < m; i++) {
    float as[RANKK_MAX_K];
    v128_t av[RANKK_MAX_K];
    for (size_t kk = 0; kk < K; kk++) {
      as[kk] = alpha * (trans_a ? A[kk * sa + i] : A[i * sa + kk]);
      av[kk] = wasm_f32x4_splat(as[kk]);
    }
    float *c = C + i * sc;
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
      v128_t acc = wasm_f32x4_mul(av[0], wasm_v128_load(B + j));
      for (size_t kk = 1; kk < K; kk++) acc = F4_MADD(acc, av[kk], wasm_v128_load(B + kk * sb + j));
      if (beta != 0.f) acc = wasm_f32x4_add(acc, wasm_f32x4_mul(vbeta, wasm_v128_load(c + j)));
      wasm_v128_store(c + j, acc);
    }
    for (; j < n; j++) {
      float acc = as[0] * B[j];
      for (size_t kk = 1; kk < K; kk++) acc += as[kk] * B[kk * sb + j];
      c[j] = beta != 0.f ? acc + beta * c[j] : acc;
    }
  }
}
static void sgemm_rank_k_rows(int trans_a, size_t m, size_t n, size_t k, float alpha, const float *A, size_t sa,
                              const float *B, size_t sb, float beta, float *C, size_t sc) {
  switch (k) {
    case 1: rank_k_rows(1, trans_a, m, n, alpha, A, sa, B, sb, beta, C, sc); break;
    case 2: rank_k_rows(2, trans_a, m, n, alpha, A, sa, B, sb, beta, C, sc); break;
    case 3: rank_k_rows(3, trans_a, m, n, alpha, A, sa, B, sb, beta, C, sc); break;
    default: rank_k_rows(4, trans_a, m, n, alpha, A, sa, B, sb, beta, C, sc); break;
  }
}

/* ---- the drivers ------------------------------------------------------------------------------- */
/* Splits k into equal blocks of at most kc_max, so that no block is a thin remainder. */
static size_t k_block(size_t k, size_t kc_max) {
  const size_t blocks = (k + kc_max - 1) / kc_max;
  return (k + blocks - 1) / blocks;
}

/* op(A), packed, fits in L2 (the FullyConnected and convolution shapes): pack it once (K block pc
 * at pa + mp * pc, 4-row micro-panels kc deep), then walk B in blocks of GEMM_NC_WHOLE columns,
 * each packed right before its tiles. Every element of A and B is packed exactly once, and each
 * C block receives all its K blocks back to back while it is still in cache. */
static int sgemm_whole_a(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha, const float *A, size_t sa,
                         const float *B, size_t sb, float beta, float *C, size_t sc) {
  const size_t mp = round_up(m, GEMM_MR), kc_step = k_block(k, GEMM_KC);
  float *pa = pack_buf_get(&g_pack_a, mp * k);
  float *pb = pa ? pack_buf_get(&g_pack_b, GEMM_NC_WHOLE * kc_step) : NULL;
  if (!pb) return -1;
  for (size_t pc = 0; pc < k; pc += kc_step) {
    const size_t kc = min_sz(kc_step, k - pc);
    pack_a(trans_a, m, kc, trans_a ? A + pc * sa : A + pc, sa, alpha, pa + mp * pc);
  }
  for (size_t jc = 0; jc < n; jc += GEMM_NC_WHOLE) {
    const size_t nc = min_sz(GEMM_NC_WHOLE, n - jc);
    for (size_t pc = 0; pc < k; pc += kc_step) {
      const size_t kc = min_sz(kc_step, k - pc);
      const float beta_blk = pc == 0 ? beta : 1.f;
      const float *pa_blk = pa + mp * pc;
      pack_b(trans_b, kc, nc, trans_b ? B + jc * sb + pc : B + pc * sb + jc, sb, pb);
      for (size_t jr = 0; jr < nc; jr += GEMM_NR)
        gemm_4x8_column(m, min_sz(GEMM_NR, nc - jr), kc, pa_blk, pb + jr * kc, C + jc + jr, sc, beta_blk);
    }
  }
  return 0;
}

/* Large A: the GotoBLAS/BLIS loop order of the file header. */
static int sgemm_blocked(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha, const float *A, size_t sa,
                         const float *B, size_t sb, float beta, float *C, size_t sc) {
  const size_t kc_step = k_block(k, GEMM_KC);
  float *pa = pack_buf_get(&g_pack_a, GEMM_MC * kc_step);
  float *pb = pa ? pack_buf_get(&g_pack_b, round_up(min_sz(n, GEMM_NC), GEMM_NR) * kc_step) : NULL;
  if (!pb) return -1;
  for (size_t jc = 0; jc < n; jc += GEMM_NC) {
    const size_t nc = min_sz(GEMM_NC, n - jc);
    for (size_t pc = 0; pc < k; pc += kc_step) {
      const size_t kc = min_sz(kc_step, k - pc);
      const float beta_blk = pc == 0 ? beta : 1.f;
      pack_b(trans_b, kc, nc, trans_b ? B + jc * sb + pc : B + pc * sb + jc, sb, pb);
      for (size_t ic = 0; ic < m; ic += GEMM_MC) {
        const size_t mc = min_sz(GEMM_MC, m - ic);
        pack_a(trans_a, mc, kc, trans_a ? A + pc * sa + ic : A + ic * sa + pc, sa, alpha, pa);
        for (size_t jr = 0; jr < nc; jr += GEMM_NR)
          gemm_4x8_column(mc, min_sz(GEMM_NR, nc - jr), kc, pa, pb + jr * kc, C + ic * sc + jc + jr, sc, beta_blk);
      }
    }
  }
  return 0;
}

/* The tiled product, split across the thread pool: by columns of C (in whole 8-column tiles)
 * when it is at least as wide as it is tall, else by rows (in whole 4-row micro-panels). Every
 * chunk runs the serial driver on its part. whole_a and blocked accumulate each element of C
 * over the same K blocks (k_block depends on k alone) with the same microkernel and tile
 * alignment, so an element's value does not depend on the chunk that computed it: threaded
 * results are bit-identical to one thread's. */
typedef struct {
  int trans_a, trans_b, by_rows;
  size_t m, n, k, sa, sb, sc;
  float alpha, beta;
  const float *A, *B;
  float *C;
  atomic_int failed;
} tiled_job;

static int sgemm_serial(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha, const float *A, size_t sa,
                        const float *B, size_t sb, float beta, float *C, size_t sc) {
  if (k <= GEMM_A_WHOLE_BYTES / sizeof(float) / round_up(m, GEMM_MR)) /* (a division: no overflow) */
    return sgemm_whole_a(trans_a, trans_b, m, n, k, alpha, A, sa, B, sb, beta, C, sc);
  return sgemm_blocked(trans_a, trans_b, m, n, k, alpha, A, sa, B, sb, beta, C, sc);
}

static void tiled_chunk(void *ctx, int64_t begin, int64_t end) {
  tiled_job *j = (tiled_job *)ctx;
  const size_t b = (size_t)begin, len = (size_t)(end - begin);
  int rc;
  if (j->by_rows)
    rc = sgemm_serial(j->trans_a, j->trans_b, len, j->n, j->k, j->alpha, j->trans_a ? j->A + b : j->A + b * j->sa,
                      j->sa, j->B, j->sb, j->beta, j->C + b * j->sc, j->sc);
  else
    rc = sgemm_serial(j->trans_a, j->trans_b, j->m, len, j->k, j->alpha, j->A, j->sa,
                      j->trans_b ? j->B + b * j->sb : j->B + b, j->sb, j->beta, j->C + b, j->sc);
  if (rc != 0) atomic_store(&j->failed, 1);
}

/* (mxw_gemm_parallel_min_macs, defined above mxw_dgemm, keeps small products on the calling thread) */

static int sgemm_tiled(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha, const float *A, size_t sa,
                       const float *B, size_t sb, float beta, float *C, size_t sc) {
  /* a wide product with K < 8 (a batch-1 or small-batch weight gradient) is bound by writing C,
   * which a column split does not speed up here (256x4x784: 53 us on one thread, 74 on two; a
   * tall one split by rows does gain: 784x1x256 103 -> 60 us) */
  if ((double)m * (double)n * (double)k < (double)mxw_gemm_parallel_min_macs || mxw_get_num_threads() <= 1 ||
      (k < 8 && n >= m && mxw_gemm_parallel_min_macs > 1))
    return sgemm_serial(trans_a, trans_b, m, n, k, alpha, A, sa, B, sb, beta, C, sc);
  tiled_job j = {trans_a, trans_b, n < m, m, n, k, sa, sb, sc, alpha, beta, A, B, C, 0};
  /* a column split cuts every row of C: at a multiple of 16 columns (64 bytes, two tiles) the
   * chunks share no cache line in a 64-byte-aligned C with 64-byte rows, where a cut at 8 had
   * both threads writing the same line of every row (256x1x784, a batch-1 weight gradient: 37 us
   * on one thread, 60 on two with the cut at 8) */
  if (j.by_rows)
    mxw_parallel_for((int64_t)m, GEMM_MR, tiled_chunk, &j);
  else
    mxw_parallel_for((int64_t)n, 2 * GEMM_NR, tiled_chunk, &j);
  MXW_CHECK(!atomic_load(&j.failed), "out of memory for GEMM packing buffers");
  return 0;
}

/* ---- matrix-vector products and small-batch weight gradients on the pool --------------------- */
/* Split by rows of B (rowdot: the outputs of a FullyConnected at batch < 8), by columns of C
 * (rowaxpy) or by rows of C (rank-k rows: a weight gradient), each output element computed as on
 * one thread. At 2 threads the halves of a weight matrix are then read by the forward product,
 * written by the weight gradient and updated by the optimizer (elementwise halves, 16-aligned:
 * the same rows for the usual shapes) on the same core: with these products on one thread, the
 * split update pulled half of the weights and gradients across cores and a batch-1 MLP training
 * step was slower at 2 threads than at 1. */
typedef struct {
  int trans_a;
  size_t m, n, k, sa, sb, sc;
  float alpha, beta;
  const float *A, *B;
  float *C;
} gemv_job;

static int gemv_split(double macs) { return mxw_get_num_threads() > 1 && macs >= (double)mxw_gemm_parallel_min_macs; }
/* rows [b, e) of B (N, K) against the m (< GEMV_MAX_ROWS_CACHED) rows of A: C[:, b:e) */
static void rowdot_chunk(void *ctx, int64_t b, int64_t e) {
  const gemv_job *j = (const gemv_job *)ctx;
  const size_t rows = (size_t)(e - b);
  const float *R = j->B + (size_t)b * j->sb;
  size_t i = 0;
  for (; i + 2 <= j->m; i += 2) {
    mxw_f32_rowdot_ukernel_2x4__wasmsimd(rows, j->k, j->alpha, R, j->sb, j->A + i * j->sa, j->A + (i + 1) * j->sa,
                                         j->beta, j->C + i * j->sc + b, j->C + (i + 1) * j->sc + b, 1);
  }
  if (i < j->m)
    mxw_f32_rowdot_ukernel_4__wasmsimd(rows, j->k, j->alpha, R, j->sb, j->A + i * j->sa, j->beta, j->C + i * j->sc + b,
                                       1);
}
/* columns [b, e) of y (1, N) = x (1, K) * B (K, N) */
static void rowaxpy_chunk(void *ctx, int64_t b, int64_t e) {
  const gemv_job *j = (const gemv_job *)ctx;
  mxw_f32_rowaxpy_ukernel_4__wasmsimd(j->k, (size_t)(e - b), j->alpha, j->A, j->B + b, j->sb, j->beta, j->C + b);
}
static void rank_k_chunk(void *ctx, int64_t b, int64_t e) {
  const gemv_job *j = (const gemv_job *)ctx;
  sgemm_rank_k_rows(j->trans_a, (size_t)(e - b), j->n, j->k, j->alpha, j->trans_a ? j->A + b : j->A + (size_t)b * j->sa,
                    j->sa, j->B, j->sb, j->beta, j->C + (size_t)b * j->sc, j->sc);
}

/* ---- the entry point ----------------------------------------------------------------------------- */
/* A strided vector (v[i * inc]) as a contiguous one, in the A packing buffer when inc != 1. */
static const float *contiguous(const float *v, size_t n, size_t inc) {
  if (inc == 1) return v;
  float *d = pack_buf_get(&g_pack_a, n);
  if (!d) return NULL;
  for (size_t i = 0; i < n; i++) d[i] = v[i * inc];
  return d;
}

int mxw_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
              const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  MXW_TRY(check_args("sgemm", M, N, K, trans_a, trans_b, lda, ldb, ldc, A, B, C));
  if (M == 0 || N == 0) return 0;
  const size_t m = (size_t)M, n = (size_t)N, k = (size_t)K;
  const size_t sa = (size_t)lda, sb = (size_t)ldb, sc = (size_t)ldc;
  if (k == 0 || alpha == 0.f) {
    scale_c(m, n, beta, C, sc);
    return 0;
  }

  /* Matrix-vector products stream the matrix once instead of packing it. */
  const double macs = (double)m * (double)n * (double)k;
  if (m == 1) { /* y (1, N) = x (1, K) * op(B) */
    const float *x = contiguous(A, k, trans_a ? sa : 1);
    if (!x) return -1;
    gemv_job j = {0, 1, n, k, k, sb, n, alpha, beta, x, B, C};
    if (trans_b) { /* B is (N, K): each y[j] is a dot of two contiguous K-vectors */
      /* (4-row groups: a chunk's rows are grouped as on one thread) */
      if (gemv_split(macs))
        mxw_parallel_for((int64_t)n, 4, rowdot_chunk, &j);
      else
        mxw_f32_rowdot_ukernel_4__wasmsimd(n, k, alpha, B, sb, x, beta, C, 1);
    } else { /* B is (K, N): y += x[i] * row i of B */
      if (gemv_split(macs))
        mxw_parallel_for((int64_t)n, 16, rowaxpy_chunk, &j); /* (16 floats: no cache line of y shared) */
      else
        mxw_f32_rowaxpy_ukernel_4__wasmsimd(k, n, alpha, x, B, sb, beta, C);
    }
    return 0;
  }
  /* A few rows of A with B transposed (a small-batch FullyConnected): one pass over B per pair of
   * rows of A, each output a dot of two contiguous K-vectors. Up to GEMV_MAX_ROWS_CACHED rows
   * while B stays in cache between the passes; past that, packing B once wins. */
  if (trans_b && !trans_a && (m < GEMV_MAX_ROWS || (m < GEMV_MAX_ROWS_CACHED && k <= GEMV_CACHED_FLOATS / n))) {
    gemv_job j = {0, m, n, k, sa, sb, sc, alpha, beta, A, B, C};
    if (gemv_split(macs))
      mxw_parallel_for((int64_t)n, 16, rowdot_chunk, &j); /* (C's rows cut at 16 floats) */
    else
      rowdot_chunk(&j, 0, (int64_t)n);
    return 0;
  }
  /* The mirror image: a few columns of op(B) against the rows of A (e.g. a FullyConnected with
   * two outputs), one pass over A per pair of columns, each column a contiguous K-vector (rows of
   * B when it is transposed, else copied). */
  if (!trans_a &&
      (n < GEMV_MAX_ROWS || (n < GEMV_MAX_ROWS_CACHED && n % GEMM_NR != 0 && k <= GEMV_CACHED_FLOATS / m))) {
    const float *cols = B; /* column j at cols + j * ldcol */
    size_t ldcol = sb;
    if (!trans_b) {
      float *d = pack_buf_get(&g_pack_b, n * k);
      if (!d) return -1;
      for (size_t i = 0; i < k; i++)
        for (size_t j = 0; j < n; j++) d[j * k + i] = B[i * sb + j];
      cols = d;
      ldcol = k;
    }
    size_t j = 0;
    for (; j + 2 <= n; j += 2) {
      mxw_f32_rowdot_ukernel_2x4__wasmsimd(m, k, alpha, A, sa, cols + j * ldcol, cols + (j + 1) * ldcol, beta, C + j,
                                           C + j + 1, sc);
    }
    if (j < n) mxw_f32_rowdot_ukernel_4__wasmsimd(m, k, alpha, A, sa, cols + j * ldcol, beta, C + j, sc);
    return 0;
  }

  if (!trans_b && k < RANKK_MAX_K) {
    gemv_job j = {trans_a, m, n, k, sa, sb, sc, alpha, beta, A, B, C};
    if (gemv_split(macs))
      mxw_parallel_for((int64_t)m, 4, rank_k_chunk, &j); /* (whole rows of C: no cache line shared) */
    else
      sgemm_rank_k_rows(trans_a, m, n, k, alpha, A, sa, B, sb, beta, C, sc);
    return 0;
  }
  return sgemm_tiled(trans_a, trans_b, m, n, k, alpha, A, sa, B, sb, beta, C, sc);
}
