/* Helpers shared by the C unit tests (cmocka). */
#ifndef MXW_TEST_H_
#define MXW_TEST_H_
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/mxw_core.h"

/* A float32 array from values; fails the test on error. */
static inline mxw_ndarray *t_array(int ndim, const int32_t *shape, const float *vals) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, MXW_FLOAT32, &a) != 0) fail_msg("%s", mxw_get_last_error());
  if (vals) memcpy(mxw_ndarray_data(a), vals, sizeof(float) * (size_t)mxw_ndarray_size(a));
  return a;
}

/* Runs an op by name with attributes as alternating key/value strings (NULL-terminated).
 * Returns the op's status; outputs are allocated into outs. */
static inline int t_invoke(const char *name, mxw_ndarray **ins, int nin, mxw_ndarray **outs, int *nout, ...) {
  const char *keys[32], *vals[32];
  int n = 0;
  va_list ap;
  va_start(ap, nout);
  for (const char *k; (k = va_arg(ap, const char *)) != NULL && n < 32; n++) {
    keys[n] = k;
    vals[n] = va_arg(ap, const char *);
  }
  va_end(ap);
  int op = mxw_op_find(name);
  if (op < 0) fail_msg("operator %s is not registered", name);
  mxw_params *p = NULL;
  if (mxw_params_create(op, n, keys, vals, &p) != 0) return -1;
  int rc = mxw_op_invoke(op, p, nin, ins, nout, outs);
  mxw_params_free(p);
  return rc;
}

#define assert_close(a, b, tol)                                                 \
  do {                                                                          \
    double a_ = (a), b_ = (b);                                                  \
    if (!(fabs(a_ - b_) <= (tol) * (1.0 + fabs(b_))))                           \
      fail_msg("%s = %.9g, expected %.9g (tol %g)", #a, a_, b_, (double)(tol)); \
  } while (0)

#define assert_error_contains(needle)                                             \
  do {                                                                            \
    if (!strstr(mxw_get_last_error(), needle))                                    \
      fail_msg("error '%s' does not mention '%s'", mxw_get_last_error(), needle); \
  } while (0)
static inline mxw_ndarray *t_array_f64(int ndim, const int32_t *shape, const double *vals) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, MXW_FLOAT64, &a) != 0) fail_msg("%s", mxw_get_last_error());
  if (vals) memcpy(mxw_ndarray_data(a), vals, sizeof(double) * (size_t)mxw_ndarray_size(a));
  return a;
}

static inline void t_expect_shape(const mxw_ndarray *a, int ndim, const int32_t *dims) {
  int32_t s[MXW_MAX_NDIM];
  assert_int_equal(mxw_ndarray_ndim(a), ndim);
  mxw_ndarray_shape(a, s);
  for (int i = 0; i < ndim; i++) assert_int_equal(s[i], dims[i]);
}

/* A float32 (f32) or float64 (f64) array's n values against hand-worked ones, within tol. */
static inline void t_expect_f32(const mxw_ndarray *a, const float *want, int n, double tol) {
  assert_int_equal((int)mxw_ndarray_size(a), n);
  const float *y = (const float *)mxw_ndarray_data(a);
  for (int i = 0; i < n; i++) assert_close(y[i], want[i], tol);
}
static inline void t_expect_f64(const mxw_ndarray *a, const double *want, int n, double tol) {
  assert_int_equal((int)mxw_ndarray_size(a), n);
  const double *y = (const double *)mxw_ndarray_data(a);
  for (int i = 0; i < n; i++) assert_close(y[i], want[i], tol);
}

/* ---- real MXNet files ----------------------------------------------------------------------
 * One setting says where they are: the environment variable MXW_MODELS (a relative value is
 * taken from the project root), else ../shared/models beside the project root. The tests that
 * need them live in tests/c/test_real_*.c; when the folder is absent they print why and exit
 * with T_SKIP_CODE, which CMakeLists.txt declares as the tests' SKIP_RETURN_CODE. */
/* Truncations (every cut_step bytes; with cuts_fail each must be refused) and `trials` random
 * 3-byte mutations of a symbol JSON text: each gives an error or a graph that serialises and
 * infers with `infer_request`, never a crash; the original text still loads afterwards.
 * `seed` carries the mutation stream across calls. */
static inline void t_symbol_json_mutations(const char *text, size_t cut_step, int cuts_fail, int trials,
                                           const char *infer_request, uint32_t *seed) {
  static const char alphabet[] = "0123456789[]{}\",:-eanull ";
  mxw_symbol *s = NULL;
  size_t len = strlen(text);
  for (size_t cut = 0; cut < len; cut += cut_step) {
    char *p = malloc(cut + 1);
    memcpy(p, text, cut);
    p[cut] = 0;
    int rc = mxw_sym_fromjson(p, &s);
    if (cuts_fail)
      assert_int_equal(rc, -1); /* a cut JSON text never parses */
    else if (rc == 0)
      mxw_sym_free(s);
    free(p);
  }
  for (int trial = 0; trial < trials; trial++) {
    char *p = malloc(len + 1);
    memcpy(p, text, len + 1);
    for (int k = 0; k < 3; k++) {
      *seed = *seed * 1103515245u + 12345u;
      size_t at = (*seed >> 8) % len;
      *seed = *seed * 1103515245u + 12345u;
      p[at] = alphabet[(*seed >> 16) % (sizeof alphabet - 1)];
    }
    if (mxw_sym_fromjson(p, &s) == 0) {
      char *out = NULL;
      if (mxw_sym_tojson(s, &out) == 0) mxw_buffer_free(out);
      (void)mxw_sym_infer(s, infer_request);
      mxw_sym_free(s);
    }
    free(p);
  }
  assert_int_equal(mxw_sym_fromjson(text, &s), 0); /* still fine */
  mxw_sym_free(s);
}

#define T_SKIP_CODE 77

static inline const char *t_models_dir(void) {
  static char dir[4096];
  const char *env = getenv("MXW_MODELS");
  if (env && *env) {
    if (env[0] == '/')
      snprintf(dir, sizeof dir, "%s", env);
    else
      snprintf(dir, sizeof dir, "%s/%s", MXW_PROJECT_ROOT, env);
  } else {
    snprintf(dir, sizeof dir, "%s/../shared/models", MXW_PROJECT_ROOT);
  }
  return dir;
}

static inline int t_models_present(void) {
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/.", t_models_dir());
  FILE *f = fopen(probe, "r"); /* opening a directory for reading succeeds on Linux */
  if (!f) return 0;
  fclose(f);
  return 1;
}

/* main() of a real-file test program: runs the group when the folder is there, else reports
 * every test as skipped with the reason and exits with T_SKIP_CODE. */
#define t_run_real_file_tests(tests)                              \
  (t_models_present() ? cmocka_run_group_tests(tests, NULL, NULL) \
                      : t_skip_all(tests, sizeof(tests) / sizeof((tests)[0])))
static inline int t_skip_all(const struct CMUnitTest *tests, size_t n) {
  const char *env = getenv("MXW_MODELS");
  printf("SKIPPED %zu real-file tests: real MXNet files not found at %s (MXW_MODELS=%s)\n", n, t_models_dir(),
         env && *env ? env : "unset, default ../shared/models");
  for (size_t i = 0; i < n; i++) printf("[  SKIPPED ] %s\n", tests[i].name);
  return T_SKIP_CODE;
}

/* A file of the real-models folder, whole and NUL-terminated (malloc'd); *len gets its size. */
static inline char *t_read_model_file(const char *rel, size_t *len) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", t_models_dir(), rel);
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *p = (char *)malloc((size_t)n + 1);
  if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) fail_msg("cannot read %s", path);
  p[n] = 0;
  fclose(f);
  if (len) *len = (size_t)n;
  return p;
}

#endif
