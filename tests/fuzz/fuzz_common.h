/* fuzz_common.h -- what the three fuzz targets share (tests/fuzz/README.md).
 *
 * Each target defines LLVMFuzzerTestOneInput. It is linked two ways:
 *   - with libFuzzer (clang-14, -fsanitize=fuzzer,address,undefined; -DMXW_FUZZ=ON, build/fuzz);
 *   - with replay_main.c in the normal native ASan build, where ctest feeds it the committed
 *     seeds and the crashers found so far (tests/fuzz/regressions/<target>/).
 *
 * A finding is anything that aborts: a sanitizer report, a leak, an invariant checked with
 * FUZZ_CHECK, a run over the time limit, or an input that made the library hold more than its
 * memory budget at once (issue 9: a hostile file of up to 1 MB never allocates more than 64 MB;
 * larger inputs get 64 MB per started MiB). The budget is measured through the sanitizer
 * allocator's malloc/free hooks, so it counts the peak of live heap bytes during one input. */
#ifndef MXW_FUZZ_COMMON_H_
#define MXW_FUZZ_COMMON_H_
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mxw_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                           \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                     \
      fprintf(stderr, "\n  last library error: %s\n", mxw_get_last_error());            \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

/* MXW_FUZZ_VERBOSE=1 (replaying seeds by hand): say how far each input got. */
static inline int fuzz_verbose(void) {
  static int v = -1;
  if (v < 0) v = getenv("MXW_FUZZ_VERBOSE") != NULL;
  return v;
}

/* ---- the memory budget ---------------------------------------------------------------------------
 * The hooks exist in every sanitizer runtime (clang's and gcc's libasan); without a sanitizer the
 * weak references stay NULL and the budget is not measured. */
extern int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                                     void (*free_hook)(const volatile void *)) __attribute__((weak));
extern size_t __sanitizer_get_allocated_size(const volatile void *p) __attribute__((weak));

#define FUZZ_BUDGET_PER_MIB ((size_t)64 << 20)

static volatile int fuzz_counting;
static size_t fuzz_live, fuzz_peak;

static void fuzz_malloc_hook(const volatile void *p, size_t n) {
  (void)p;
  if (!fuzz_counting) return;
  size_t live = __atomic_add_fetch(&fuzz_live, n, __ATOMIC_RELAXED);
  if (live > fuzz_peak) fuzz_peak = live;
}
static void fuzz_free_hook(const volatile void *p) {
  if (!fuzz_counting || !p) return;
  size_t n = __sanitizer_get_allocated_size(p);
  /* blocks allocated before counting started may be freed now: never go below zero */
  size_t live = __atomic_load_n(&fuzz_live, __ATOMIC_RELAXED);
  __atomic_store_n(&fuzz_live, live > n ? live - n : 0, __ATOMIC_RELAXED);
}

static inline void fuzz_budget_begin(void) {
  static int installed;
  if (!installed) {
    installed = 1;
    if (__sanitizer_install_malloc_and_free_hooks && __sanitizer_get_allocated_size)
      __sanitizer_install_malloc_and_free_hooks(fuzz_malloc_hook, fuzz_free_hook);
  }
  fuzz_live = fuzz_peak = 0;
  fuzz_counting = 1;
}

/* Aborts (a finding) when the input made the library hold more than its budget at once. */
static inline void fuzz_budget_end(size_t input_len, const char *what) {
  fuzz_counting = 0;
  size_t mib = (input_len + ((size_t)1 << 20) - 1) >> 20;
  size_t budget = FUZZ_BUDGET_PER_MIB * (mib ? mib : 1);
  if (fuzz_peak > budget) {
    fprintf(stderr, "FUZZ memory budget exceeded: %s of a %zu-byte input held %zu bytes at once (budget %zu)\n", what,
            input_len, fuzz_peak, budget);
    abort();
  }
}

/* The input as a NUL-terminated string (text parsers stop at the first NUL, as the JS side's
 * stringToUTF8 of a JS string would never contain one anyway). Caller frees. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
  char *s = (char *)malloc(size + 1);
  if (!s) abort();
  if (size) memcpy(s, data, size);
  s[size] = 0;
  return s;
}

#endif
