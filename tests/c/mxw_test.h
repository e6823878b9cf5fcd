/* Helpers shared by the C unit tests (cmocka). */
#ifndef MXW_TEST_H_
#define MXW_TEST_H_
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

#define assert_close(a, b, tol)                                                                   \
  do {                                                                                            \
    double a_ = (a), b_ = (b);                                                                    \
    if (!(fabs(a_ - b_) <= (tol) * (1.0 + fabs(b_))))                                             \
      fail_msg("%s = %.9g, expected %.9g (tol %g)", #a, a_, b_, (double)(tol));                   \
  } while (0)

#define assert_error_contains(needle)                                                             \
  do {                                                                                            \
    if (!strstr(mxw_get_last_error(), needle))                                                    \
      fail_msg("error '%s' does not mention '%s'", mxw_get_last_error(), needle);                 \
  } while (0)
#endif
