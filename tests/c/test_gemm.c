/* mxw_sgemm (packed, SIMD microkernel, matrix-vector paths) against the plain triple loop
 * mxw_sgemm_ref on odd sizes, all transposes, alpha/beta and padded leading dimensions; plus
 * hand-worked products and the argument checks. */
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
        fail_msg("ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g pad=%lld: C[%lld][%lld] = %.9g, ref %.9g",
                 ta, tb, (long long)M, (long long)N, (long long)K, alpha, beta, (long long)pad, (long long)i,
                 (long long)j, C[at], R[at]);
    }
  }
  free(A);
  free(B);
  free(C);
  free(R);
  free(C0);
}

static const int64_t k_sizes[] = {1, 2, 3, 5, 7, 17, 33, 65, 130};
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

/* Past the cache blocks: K > KC (256, split into several blocks), M > MC (128), N > NC (2048). */
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
      cmocka_unit_test(test_hand_worked),         cmocka_unit_test(test_degenerate),
      cmocka_unit_test(test_bad_arguments),       cmocka_unit_test(test_dgemm),
      cmocka_unit_test(test_sizes_all_transposes), cmocka_unit_test(test_alpha_beta_padding),
      cmocka_unit_test(test_block_boundaries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
