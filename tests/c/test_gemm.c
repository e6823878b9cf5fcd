/* mxw_sgemm (packed, SIMD microkernel, matrix-vector paths) against the plain triple loop
 * mxw_sgemm_ref on odd sizes, all transposes, alpha/beta and padded leading dimensions, the
 * shapes the models hit and both sides of every dispatch threshold; the microkernels directly
 * against plain loops here (every exit of their unrolled k loops); plus hand-worked products and
 * the argument checks. */
#include <stdlib.h>

#include "kernels/gemm.h"
#include "mxw_test.h"

/* Deterministic values in [-1, 1) (xorshift), independent of the library's RNG. */
static uint32_t g_seed = 12345;
static float frand(void) {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 17;
  g_seed ^= g_seed << 5;
  return (float)((g_seed >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0);
}

/* One case: op(A) (M, K), op(B) (K, N), leading dims padded by `pad`; C starts random (or NaN
 * when beta == 0, which must not leak). Checks every element against the reference with the
 * error bound of a float sum: 1e-5 * (|alpha| * sum_k |a_ik b_kj| + |beta c_ij|). */
static void check_case(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, float beta, int64_t pad) {
  int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
  int64_t a_rows = ta ? K : M, b_rows = tb ? N : K;
  size_t na = (size_t)(a_rows * lda), nb = (size_t)(b_rows * ldb), nc = (size_t)(M * ldc);
  float *A = malloc((na + 1) * sizeof(float)), *B = malloc((nb + 1) * sizeof(float));
  float *C = malloc((nc + 1) * sizeof(float)), *R = malloc((nc + 1) * sizeof(float));
  float *C0 = malloc((nc + 1) * sizeof(float));
  for (size_t i = 0; i < na; i++) A[i] = frand();
  for (size_t i = 0; i < nb; i++) B[i] = frand();
  for (size_t i = 0; i < nc; i++) C0[i] = beta == 0.f ? NAN : frand();
  memcpy(C, C0, nc * sizeof(float));
  memcpy(R, C0, nc * sizeof(float));
  assert_int_equal(mxw_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc), 0);
  assert_int_equal(mxw_sgemm_ref(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, R, ldc), 0);
  for (int64_t i = 0; i < M; i++) {
    for (int64_t j = 0; j < ldc; j++) {
      size_t at = (size_t)(i * ldc + j);
      if (j >= N) { /* padding columns of C are never touched */
        if (!(C[at] == C0[at] || (isnan(C[at]) && isnan(C0[at]))))
          fail_msg("ta=%d tb=%d M=%lld N=%lld K=%lld: padding C[%lld][%lld] was written", ta, tb, (long long)M,
                   (long long)N, (long long)K, (long long)i, (long long)j);
        continue;
      }
      double bound = 0;
      for (int64_t k = 0; k < K; k++) {
        float a = ta ? A[k * lda + i] : A[i * lda + k];
        float b = tb ? B[j * ldb + k] : B[k * ldb + j];
        bound += fabs((double)a * b);
      }
      bound = fabs(alpha) * bound + (beta != 0.f ? fabs(beta * C0[at]) : 0.0);
      if (!(fabs((double)C[at] - R[at]) <= 1e-5 * bound + 1e-30))
        fail_msg("ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g pad=%lld: C[%lld][%lld] = %.9g, ref %.9g", ta, tb,
                 (long long)M, (long long)N, (long long)K, alpha, beta, (long long)pad, (long long)i, (long long)j,
                 C[at], R[at]);
    }
  }
  free(A);
  free(B);
  free(C);
  free(R);
  free(C0);
}

static const int64_t k_sizes[] = {1, 2, 3, 4, 5, 7, 17, 33, 65, 130};
#define NSIZES (sizeof k_sizes / sizeof k_sizes[0])

/* Every (M, N, K) in the size set, all four transpose combinations, alpha = 1, beta = 0 (C NaN). */
static void test_sizes_all_transposes(void **state) {
  (void)state;
  for (int t = 0; t < 4; t++)
    for (size_t a = 0; a < NSIZES; a++)
      for (size_t b = 0; b < NSIZES; b++)
        for (size_t c = 0; c < NSIZES; c++) check_case(t & 1, t >> 1, k_sizes[a], k_sizes[b], k_sizes[c], 1.f, 0.f, 0);
}

/* alpha/beta combinations and padded leading dims (lda > K etc.) on a subset of the sizes. */
static void test_alpha_beta_padding(void **state) {
  (void)state;
  const float ab[][2] = {{1.f, 1.f}, {-0.5f, 2.f}, {2.5f, 0.f}, {0.75f, -1.f}};
  const int64_t sz[] = {1, 3, 7, 17, 65};
  for (int t = 0; t < 4; t++)
    for (size_t q = 0; q < 4; q++)
      for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++)
          for (size_t c = 0; c < 5; c++) check_case(t & 1, t >> 1, sz[a], sz[b], sz[c], ab[q][0], ab[q][1], 3);
}

/* Past the cache blocks: K > KC (512, split into equal blocks), M > MC (128), N > NC (2048). */
static void test_block_boundaries(void **state) {
  (void)state;
  for (int t = 0; t < 4; t++) {
    check_case(t & 1, t >> 1, 9, 11, 600, 1.f, 0.f, 1);
    check_case(t & 1, t >> 1, 131, 19, 257, -1.f, 0.5f, 0);
    check_case(t & 1, t >> 1, 5, 2051, 6, 1.f, 1.f, 2);
    check_case(t & 1, t >> 1, 1, 3000, 301, 1.f, 0.f, 0); /* M == 1: the streaming paths */
    check_case(t & 1, t >> 1, 300, 1, 513, 2.f, 0.f, 1);  /* N == 1 */
    check_case(t & 1, t >> 1, 4, 37, 301, 1.f, 0.f, 2);   /* M < 8: rows of A in pairs */
    check_case(t & 1, t >> 1, 6, 9, 64, -1.f, 1.f, 0);
    check_case(t & 1, t >> 1, 8, 13, 29, 1.f, 0.f, 0);
  }
}

/* The shapes the models hit: FullyConnected at batch 64 (B = the weight, transposed), the seed
 * MLP's last layer (N = 2), the convolution GEMMs (3x3 convs via im2col, a 1x1 conv, also
 * accumulating), batch 1; then the same paths with odd edges and padded leading dimensions. */
static void test_model_shapes(void **state) {
  (void)state;
  check_case(0, 1, 64, 256, 512, 1.f, 0.f, 0);
  check_case(0, 1, 64, 128, 256, 1.f, 0.f, 0);
  check_case(0, 1, 64, 2, 128, 1.f, 0.f, 0);
  check_case(0, 0, 64, 3136, 576, 1.f, 0.f, 0);
  check_case(0, 0, 128, 784, 1152, 1.f, 0.f, 0);
  check_case(0, 0, 256, 196, 64, 1.f, 0.f, 0);
  check_case(0, 0, 256, 196, 64, 1.f, 1.f, 0);
  check_case(0, 1, 1, 256, 512, 1.f, 0.f, 0);
  check_case(0, 0, 1, 256, 512, 1.f, 0.f, 0);
  check_case(0, 1, 63, 255, 513, -0.5f, 0.f, 1);
  check_case(0, 0, 65, 1001, 577, 1.f, 2.f, 3);
  check_case(1, 0, 129, 203, 1153, 1.f, 0.f, 1);
  check_case(1, 1, 62, 129, 255, 0.25f, -1.f, 2);
}

/* Both sides of each dispatch threshold (see gemm.c's enum): rows of A streamed against B up to
 * M = 23 while B has at most 512 Ki elements, columns of op(B) against A for N < 8 and for
 * N < 24 that is not a multiple of 8, and op(A) packed whole up to 640 KiB (160 Ki elements). */
static void test_dispatch_thresholds(void **state) {
  (void)state;
  const int64_t ms[] = {7, 8, 12, 23, 24, 25};
  const int64_t ns[] = {2, 3, 7, 8, 9, 10, 15, 16, 17, 23, 24};
  for (int t = 0; t < 4; t++) {
    const int ta = t & 1, tb = t >> 1;
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) check_case(ta, tb, ms[i], 300, 501, 1.f, 0.f, 1);
    check_case(ta, tb, 12, 1100, 480, 1.f, 0.5f, 0); /* B 528 Ki elements: packed */
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) check_case(ta, tb, 37, ns[i], 301, 1.f, 0.f, 2);
    check_case(ta, tb, 37, 10, 14200, 1.f, 0.f, 0); /* A 525 Ki elements: packed */
    check_case(ta, tb, 156, 40, 1024, 1.f, 0.f, 0); /* 156 x 1024 packed: whole A, two K blocks */
    check_case(ta, tb, 161, 40, 1024, 2.f, 1.f, 1); /* 164 x 1024: the blocked driver, two K blocks */
    check_case(ta, tb, 261, 21, 1500, 1.f, 0.f, 0); /* blocked, three K blocks and three M blocks */
  }
}

/* The 4x8 microkernel against a plain loop: kc = 0..40 (every exit of its 8-step unrolled loop),
 * full and edge tiles, beta 0 (C NaN: not read), 1 and -0.5; C entries outside the tile kept. */
static void test_ukernel_4x8(void **state) {
  (void)state;
  enum { KMAX = 40, LDC = 11 };
  float a[4 * KMAX], b[8 * KMAX];
  for (int i = 0; i < 4 * KMAX; i++) a[i] = frand();
  for (int i = 0; i < 8 * KMAX; i++) b[i] = frand();
  const size_t tiles[][2] = {{4, 8}, {3, 5}, {1, 1}, {4, 7}, {2, 8}};
  const float betas[] = {0.f, 1.f, -0.5f};
  for (size_t kc = 0; kc <= KMAX; kc++) {
    for (size_t t = 0; t < 5; t++) {
      for (size_t q = 0; q < 3; q++) {
        const size_t mr = tiles[t][0], nr = tiles[t][1];
        const float beta = betas[q];
        float c[4 * LDC], c0[4 * LDC];
        for (int i = 0; i < 4 * LDC; i++) c0[i] = c[i] = (beta == 0.f && i % LDC < 8) ? NAN : frand();
        mxw_f32_gemm_ukernel_4x8__wasmsimd(mr, nr, kc, a, b, c, LDC, beta);
        for (size_t i = 0; i < 4; i++) {
          for (size_t j = 0; j < LDC; j++) {
            const float got = c[i * LDC + j], old = c0[i * LDC + j];
            if (i >= mr || j >= nr) {
              if (!(got == old || (isnan(got) && isnan(old))))
                fail_msg("kc=%zu mr=%zu nr=%zu: c[%zu][%zu] outside the tile was written", kc, mr, nr, i, j);
              continue;
            }
            double want = 0, bound = 0;
            for (size_t k = 0; k < kc; k++) {
              want += (double)a[k * 4 + i] * b[k * 8 + j];
              bound += fabs((double)a[k * 4 + i] * b[k * 8 + j]);
            }
            if (beta != 0.f) want += (double)beta * old, bound += fabs((double)beta * old);
            if (!(fabs(got - want) <= 1e-6 * bound + 1e-30))
              fail_msg("kc=%zu mr=%zu nr=%zu beta=%g: c[%zu][%zu] = %.9g, want %.9g", kc, mr, nr, beta, i, j, got,
                       want);
          }
        }
      }
    }
  }
}

/* The row-dot kernels against plain loops: 1..9 rows (groups of four and the rest), k = 0..41
 * (every exit of the unrolled loop and the tail), a strided y, beta 0 (y NaN) and 0.5. */
static void test_ukernel_rowdot(void **state) {
  (void)state;
  enum { KMAX = 41, RMAX = 9, LDR = 45, INCY = 3 };
  float R[RMAX * LDR], x0[KMAX], x1[KMAX];
  for (int i = 0; i < RMAX * LDR; i++) R[i] = frand();
  for (int i = 0; i < KMAX; i++) x0[i] = frand(), x1[i] = frand();
  for (size_t rows = 1; rows <= RMAX; rows++) {
    for (size_t k = 0; k <= KMAX; k++) {
      for (int q = 0; q < 2; q++) {
        const float beta = q ? 0.5f : 0.f, alpha = 1.5f;
        float y0[RMAX * INCY], y1[RMAX * INCY], z0[RMAX * INCY], old0[RMAX * INCY], old1[RMAX * INCY];
        for (int i = 0; i < RMAX * INCY; i++) {
          old0[i] = y0[i] = z0[i] = beta == 0.f ? NAN : frand();
          old1[i] = y1[i] = beta == 0.f ? NAN : frand();
        }
        mxw_f32_rowdot_ukernel_2x4__wasmsimd(rows, k, alpha, R, LDR, x0, x1, beta, y0, y1, INCY);
        mxw_f32_rowdot_ukernel_4__wasmsimd(rows, k, alpha, R, LDR, x0, beta, z0, INCY);
        for (size_t r = 0; r < rows; r++) {
          double d0 = 0, d1 = 0, bound = 0;
          for (size_t i = 0; i < k; i++) {
            d0 += (double)R[r * LDR + i] * x0[i];
            d1 += (double)R[r * LDR + i] * x1[i];
            bound += fabs((double)R[r * LDR + i]) * (fabs(x0[i]) + fabs(x1[i]));
          }
          const size_t at = r * INCY;
          double w0 = alpha * d0 + (beta != 0.f ? beta * old0[at] : 0.0);
          double w1 = alpha * d1 + (beta != 0.f ? beta * old1[at] : 0.0);
          double tol = 1e-6 * (alpha * bound + 1.0);
          if (!(fabs(y0[at] - w0) <= tol) || !(fabs(z0[at] - w0) <= tol) || !(fabs(y1[at] - w1) <= tol))
            fail_msg("rows=%zu k=%zu beta=%g: row %zu: 2x4 gives %.9g, %.9g and 4 gives %.9g; want %.9g, %.9g", rows, k,
                     beta, r, y0[at], y1[at], z0[at], w0, w1);
          for (size_t g = 1; g < INCY; g++) /* between the strided outputs: untouched */
            if (!isnan(old0[at + g]) && y0[at + g] != old0[at + g]) fail_msg("rows=%zu k=%zu: y gap written", rows, k);
        }
      }
    }
  }
}

/* Hand-worked: [[1,2,3],[4,5,6]] * [[1,0],[0,1],[1,1]] = [[4,5],[10,11]]. */
static void test_hand_worked(void **state) {
  (void)state;
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
  const float at[6] = {1, 4, 2, 5, 3, 6}, bt[6] = {1, 0, 1, 0, 1, 1};
  float c[4] = {NAN, NAN, NAN, NAN};
  assert_int_equal(mxw_sgemm(0, 0, 2, 2, 3, 1.f, a, 3, b, 2, 0.f, c, 2), 0);
  assert_close(c[0], 4, 0);
  assert_close(c[1], 5, 0);
  assert_close(c[2], 10, 0);
  assert_close(c[3], 11, 0);
  /* the same product from transposed storage, accumulated: C = 2 * A B + 1 * C */
  assert_int_equal(mxw_sgemm(1, 1, 2, 2, 3, 2.f, at, 2, bt, 3, 1.f, c, 2), 0);
  assert_close(c[0], 12, 0);
  assert_close(c[1], 15, 0);
  assert_close(c[2], 30, 0);
  assert_close(c[3], 33, 0);
  /* row vector times matrix, and matrix times column vector */
  float y[2] = {NAN, NAN};
  assert_int_equal(mxw_sgemm(0, 0, 1, 2, 3, 1.f, a + 3, 3, b, 2, 0.f, y, 2), 0);
  assert_close(y[0], 10, 0);
  assert_close(y[1], 11, 0);
  const float v[3] = {1, -1, 2};
  assert_int_equal(mxw_sgemm(0, 0, 2, 1, 3, 1.f, a, 3, v, 1, 0.f, y, 1), 0);
  assert_close(y[0], 5, 0);
  assert_close(y[1], 11, 0);
}

/* alpha == 0 or K == 0: C = beta * C without reading A or B; beta == 0 clears NaN. */
static void test_degenerate(void **state) {
  (void)state;
  float a[4] = {NAN, NAN, NAN, NAN}, c[4] = {1, 2, NAN, 4};
  assert_int_equal(mxw_sgemm(0, 0, 2, 2, 2, 0.f, a, 2, a, 2, 0.f, c, 2), 0);
  for (int i = 0; i < 4; i++) assert_close(c[i], 0, 0);
  float d[2] = {3, -2};
  assert_int_equal(mxw_sgemm(0, 0, 1, 2, 0, 1.f, NULL, 0, NULL, 2, 2.f, d, 2), 0);
  assert_close(d[0], 6, 0);
  assert_close(d[1], -4, 0);
  assert_int_equal(mxw_sgemm(0, 0, 0, 5, 5, 1.f, NULL, 5, NULL, 5, 0.f, NULL, 5), 0);
}

static void test_bad_arguments(void **state) {
  (void)state;
  float a[4] = {0}, c[4] = {0};
  assert_int_equal(mxw_sgemm(0, 0, 2, 2, 2, 1.f, a, 1, a, 2, 0.f, c, 2), -1);
  assert_error_contains("lda");
  assert_int_equal(mxw_sgemm(0, 1, 2, 2, 3, 1.f, a, 3, a, 2, 0.f, c, 2), -1);
  assert_error_contains("ldb");
  assert_int_equal(mxw_sgemm(0, 0, 2, -1, 2, 1.f, a, 2, a, 2, 0.f, c, 2), -1);
  assert_error_contains("negative");
}

/* The double-precision loop against hand-worked values, all transposes. */
static void test_dgemm(void **state) {
  (void)state;
  const double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
  const double at[6] = {1, 4, 2, 5, 3, 6}, bt[6] = {1, 0, 1, 0, 1, 1};
  const double want[4] = {4, 5, 10, 11};
  for (int t = 0; t < 4; t++) {
    int ta = t & 1, tb = t >> 1;
    double c[4] = {NAN, NAN, NAN, NAN};
    assert_int_equal(mxw_dgemm(ta, tb, 2, 2, 3, 1.0, ta ? at : a, ta ? 2 : 3, tb ? bt : b, tb ? 3 : 2, 0.0, c, 2), 0);
    for (int i = 0; i < 4; i++) assert_close(c[i], want[i], 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hand_worked),          cmocka_unit_test(test_degenerate),
      cmocka_unit_test(test_bad_arguments),        cmocka_unit_test(test_dgemm),
      cmocka_unit_test(test_sizes_all_transposes), cmocka_unit_test(test_alpha_beta_padding),
      cmocka_unit_test(test_block_boundaries),     cmocka_unit_test(test_model_shapes),
      cmocka_unit_test(test_dispatch_thresholds),  cmocka_unit_test(test_ukernel_4x8),
      cmocka_unit_test(test_ukernel_rowdot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
