/* gemm.h -- dense matrix products (the kernel layer: no shapes, no attributes).
 *
 *   float a[2 * 3] = {1, 2, 3, 4, 5, 6}, b[3 * 2] = {1, 0, 0, 1, 1, 1}, c[2 * 2];
 *   mxw_sgemm(0, 0, 2, 2, 3, 1.f, a, 3, b, 2, 0.f, c, 2);      // c = {4, 5, 10, 11}
 *
 * All matrices are row-major. op(X) is X, or Xᵀ when trans_x is non-zero:
 *   C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C
 * A is (M, K) with lda >= K, or (K, M) with lda >= M when transposed; likewise B is (K, N)
 * with ldb >= N, or (N, K) with ldb >= K; ldc >= N. As in BLAS, beta == 0 overwrites C without
 * reading it (old NaNs do not leak through), and alpha == 0 or K == 0 does not read A or B.
 * C must not overlap A or B. Each returns 0, or -1 with an error (mxw_get_last_error) for bad
 * arguments or an allocation failure.
 *
 * mxw_sgemm is the fast path: packed panels, cache blocking, a 4x8 WASM SIMD microkernel (SIMDe
 * natively), and paths that stream one operand as dot products instead of packing it when the
 * other has few rows (M == 1; M < 8, or < 24 with a cache-sized B, when B is transposed: a
 * small-batch FullyConnected) or op(B) few columns (N < 8, or < 24 with a partial 8-column tile
 * and a cache-sized A). gemm.c's header lists the dispatch. Its packing buffers are its own, so
 * callers may hold any mxw_scratch slot across the call. Products split across the thread pool
 * (by columns or rows of C; mxw_dgemm by rows), bit-identical for any thread count.
 * mxw_sgemm_ref is the plain triple loop (accumulating in double) that tests compare against.
 * mxw_dgemm is the plain double-precision version used for float64 (and, through conversion,
 * float16/bfloat16) operands.
 */
#ifndef MXW_KERNELS_GEMM_H_
#define MXW_KERNELS_GEMM_H_

#include <stddef.h>
#include <stdint.h>

int mxw_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
              const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
int mxw_sgemm_ref(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                  const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
int mxw_dgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double *A, int64_t lda,
              const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

/* Products of fewer multiply-adds than this run on the calling thread; larger ones split across
 * the thread pool (mxw_parallel_for), bit-identical to one thread. Tests lower it. */
extern int64_t mxw_gemm_parallel_min_macs;
/* Frees the calling thread's packing buffers (they grow back on the next product). */
void mxw_gemm_release_buffers(void);

/* The microkernels, exposed for tests and benchmarks.
 *
 * gemm 4x8: c[0:mr, 0:nr] = acc + beta * c (beta == 0: c = acc), acc = sum over k < kc of
 * a[k*4 + i] * b[k*8 + j] -- a is one packed 4-row micro-panel (kc x 4), b one packed 8-column
 * micro-panel (kc x 8), both zero-padded; mr <= 4, nr <= 8 clip the store. */
void mxw_f32_gemm_ukernel_4x8__wasmsimd(size_t mr, size_t nr, size_t kc, const float *a, const float *b, float *c,
                                        size_t ldc, float beta);
/* rowdot: y[r * incy] = alpha * dot(R[r * ldr : r * ldr + k], x) + beta * y[r * incy] for r < rows
 * (beta == 0: y not read). Four rows at a time, so each row streams once. */
void mxw_f32_rowdot_ukernel_4__wasmsimd(size_t rows, size_t k, float alpha, const float *R, size_t ldr, const float *x,
                                        float beta, float *y, size_t incy);
/* rowdot 2x4: the same for two vectors at once (y0 from x0, y1 from x1), reading R once. */
void mxw_f32_rowdot_ukernel_2x4__wasmsimd(size_t rows, size_t k, float alpha, const float *R, size_t ldr,
                                          const float *x0, const float *x1, float beta, float *y0, float *y1,
                                          size_t incy);
/* rowaxpy: y[0:n] = alpha * sum over i < k of x[i] * R[i * ldr : i * ldr + n] + beta * y[0:n]. */
void mxw_f32_rowaxpy_ukernel_4__wasmsimd(size_t k, size_t n, float alpha, const float *x, const float *R, size_t ldr,
                                         float beta, float *y);

#endif /* MXW_KERNELS_GEMM_H_ */
