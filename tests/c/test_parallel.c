/* The thread pool (csrc/core/parallel.c) and the threaded GEMM: mxw_parallel_for covers [0, n)
 * exactly once in aligned chunks for every thread count; set/get_num_threads; mxw_sgemm with 2,
 * 3 and 4 threads gives bit for bit what 1 thread gives (split by columns and by rows, every
 * transpose, odd sizes, alpha/beta, padded leading dimensions), and agrees with the plain triple
 * loop mxw_sgemm_ref within a float sum's error bound. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "kernels/gemm.h"
#include "mxw_test.h"

typedef struct {
  int64_t n, align;
  atomic_int *hits;
  atomic_int bad_bounds, calls;
} cover_ctx;

static void cover(void *ctx, int64_t b, int64_t e) {
  cover_ctx *c = (cover_ctx *)ctx;
  atomic_fetch_add(&c->calls, 1);
  if (b % c->align != 0 || (e != c->n && e % c->align != 0) || b >= e) atomic_store(&c->bad_bounds, 1);
  for (int64_t i = b; i < e; i++) atomic_fetch_add(&c->hits[i], 1);
}

static void test_parallel_for_covers_once(void **state) {
  (void)state;
  const int64_t ns[] = {1, 3, 8, 9, 64, 100, 1001};
  const int64_t aligns[] = {1, 4, 8};
  for (int threads = 1; threads <= 4; threads++) {
    assert_int_equal(mxw_set_num_threads(threads), 0);
    assert_int_equal(mxw_get_num_threads(), threads);
    for (size_t a = 0; a < sizeof aligns / sizeof *aligns; a++)
      for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
        const int64_t n = ns[t], align = aligns[a];
        cover_ctx c = {n, align, calloc((size_t)n, sizeof(atomic_int)), 0, 0};
        mxw_parallel_for(n, align, cover, &c);
        for (int64_t i = 0; i < n; i++) assert_int_equal(atomic_load(&c.hits[i]), 1);
        assert_int_equal(atomic_load(&c.bad_bounds), 0);
        /* at most one chunk per thread, and no more chunks than aligned units */
        int64_t units = (n + align - 1) / align;
        assert_true(atomic_load(&c.calls) <= threads && atomic_load(&c.calls) <= units);
        free(c.hits);
      }
  }
  mxw_parallel_for(0, 1, cover, NULL); /* nothing to do: fn is not called */
  assert_int_equal(mxw_set_num_threads(1), 0);
}

/* mxw_parallel_each: every started thread (workers and caller) runs fn exactly once, each on its
 * own thread; used to free each thread's buffers (mxw_scratch_release) */
static atomic_int g_each_calls;
static _Thread_local int t_each_seen;
static atomic_int g_each_twice;
static void each_fn(void) {
  atomic_fetch_add(&g_each_calls, 1);
  if (t_each_seen++) atomic_store(&g_each_twice, 1);
}
static void touch(void *ctx, int64_t b, int64_t e) { (void)ctx, (void)b, (void)e; }

static void test_parallel_each_runs_once_per_thread(void **state) {
  (void)state;
  assert_int_equal(mxw_set_num_threads(3), 0);
  mxw_parallel_for(3, 1, touch, NULL); /* starts the pool's workers (as many as can run) */
  int threads = mxw_threads_supported() ? mxw_get_num_threads() : 1;
  mxw_parallel_each(each_fn);
  /* the workers earlier tests started (up to the clamp) run it too: at least the current count */
  assert_true(atomic_load(&g_each_calls) >= threads);
  assert_int_equal(atomic_load(&g_each_twice), 0);
  /* the kernels' retained buffers on every thread are counted, and all freed */
  mxw_scratch_release();
  float *a = calloc(300 * 300, sizeof(float)), *c = calloc(300 * 300, sizeof(float));
  assert_int_equal(mxw_sgemm(0, 0, 300, 300, 300, 1.f, a, 300, a, 300, 0.f, c, 300), 0);
  assert_true(mxw_scratch_bytes() > 0);
  mxw_scratch_release();
  assert_true(mxw_scratch_bytes() == 0);
  free(a);
  free(c);
  assert_int_equal(mxw_set_num_threads(1), 0);
}

static void test_num_threads_arguments(void **state) {
  (void)state;
  assert_int_equal(mxw_threads_supported(), 1); /* native builds have pthreads */
  int d = mxw_default_num_threads();
  assert_true(d >= 1 && d <= 4);
  assert_int_not_equal(mxw_set_num_threads(0), 0);
  assert_non_null(strstr(mxw_get_last_error(), "at least 1"));
  assert_int_equal(mxw_set_num_threads(1000), 0); /* clamped to what can run */
  assert_true(mxw_get_num_threads() >= 1 && mxw_get_num_threads() <= 1000);
  assert_int_equal(mxw_set_num_threads(1), 0);
  assert_int_equal(mxw_get_num_threads(), 1);
}

/* Nested calls (a chunk calling mxw_parallel_for) run inline in that chunk. */
static void inner(void *ctx, int64_t b, int64_t e) { atomic_fetch_add((atomic_int *)ctx, (int)(e - b)); }
static void outer(void *ctx, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; i++) mxw_parallel_for(10, 1, inner, ctx);
}
static void test_nested_runs_inline(void **state) {
  (void)state;
  atomic_int total = 0;
  assert_int_equal(mxw_set_num_threads(3), 0);
  mxw_parallel_for(7, 1, outer, &total);
  assert_int_equal(atomic_load(&total), 70);
  assert_int_equal(mxw_set_num_threads(1), 0);
}

static uint32_t g_seed = 777;
static float frand(void) {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 17;
  g_seed ^= g_seed << 5;
  return (float)((g_seed >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0);
}

static void check_threads(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, float beta, int64_t pad) {
  int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
  size_t na = (size_t)((ta ? K : M) * lda), nb = (size_t)((tb ? N : K) * ldb), nc = (size_t)(M * ldc);
  float *A = malloc(na * sizeof(float)), *B = malloc(nb * sizeof(float)), *C0 = malloc(nc * sizeof(float));
  float *C1 = malloc(nc * sizeof(float)), *Ct = malloc(nc * sizeof(float)), *R = malloc(nc * sizeof(float));
  for (size_t i = 0; i < na; i++) A[i] = frand();
  for (size_t i = 0; i < nb; i++) B[i] = frand();
  for (size_t i = 0; i < nc; i++) C0[i] = frand();
  memcpy(C1, C0, nc * sizeof(float));
  memcpy(R, C0, nc * sizeof(float));
  assert_int_equal(mxw_set_num_threads(1), 0);
  assert_int_equal(mxw_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C1, ldc), 0);
  assert_int_equal(mxw_sgemm_ref(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, R, ldc), 0);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double bound = 1e-5 * ((double)fabsf(alpha) * (double)K + fabs((double)beta * C0[i * ldc + j])) + 1e-6;
      assert_true(fabs((double)C1[i * ldc + j] - (double)R[i * ldc + j]) <= bound);
    }
  for (int threads = 2; threads <= 4; threads++) {
    memcpy(Ct, C0, nc * sizeof(float));
    assert_int_equal(mxw_set_num_threads(threads), 0);
    assert_int_equal(mxw_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, Ct, ldc), 0);
    if (memcmp(Ct, C1, nc * sizeof(float)) != 0)
      fail_msg("threads %d: (%d, %d, %lld x %lld x %lld) differs from 1 thread", threads, ta, tb, (long long)M,
               (long long)N, (long long)K);
  }
  assert_int_equal(mxw_set_num_threads(1), 0);
  free(A), free(B), free(C0), free(C1), free(Ct), free(R);
}

static void test_sgemm_threads_bit_identical(void **state) {
  (void)state;
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      check_threads(ta, tb, 67, 203, 129, 1.f, 0.f, 0);    /* wider than tall: split by columns */
      check_threads(ta, tb, 301, 37, 95, 0.5f, 1.f, 3);    /* taller: split by rows, with beta */
      check_threads(ta, tb, 129, 130, 700, 1.f, 0.f, 1);   /* K in several blocks */
      check_threads(ta, tb, 520, 96, 260, -2.f, 0.25f, 0); /* A beyond the whole-A size: blocked */
      check_threads(ta, tb, 1, 603, 301, 1.f, 0.f, 2);     /* matrix-vector: split by outputs */
      check_threads(ta, tb, 3, 333, 197, 0.5f, 1.f, 0);    /* a few rows (rowdot pairs with B transposed) */
    }
  /* small-batch weight gradients (K < 5, B untransposed): split by rows of C */
  for (int ta = 0; ta < 2; ta++)
    for (int64_t k = 1; k <= 4; k++) check_threads(ta, 0, 517, 263, k, 1.f, k == 2 ? 1.f : 0.f, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parallel_for_covers_once),           cmocka_unit_test(test_num_threads_arguments),
      cmocka_unit_test(test_parallel_each_runs_once_per_thread), cmocka_unit_test(test_nested_runs_inline),
      cmocka_unit_test(test_sgemm_threads_bit_identical),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
