/* Helpers of the test_cov_op_*.c programs (operator coverage, issue 15): arrays of any dtype
 * from double values, running an op and reading one output, the gradient of one input through
 * the C autograd API, and expecting an op's error. */
#ifndef COV_OP_HELPERS_H_
#define COV_OP_HELPERS_H_
#include "mxw_test.h"

#define KV(...) ((const char *[]){__VA_ARGS__, NULL})
#define SHP(...) ((const int32_t[]){__VA_ARGS__})
#define DV(...) ((const double[]){__VA_ARGS__})

/* An array of `dtype` holding vals (converted as Cast does); vals NULL: zeros. */
static inline mxw_ndarray *c_arr(int dtype, int ndim, const int32_t *shape, const double *vals) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  if (vals) mxw_convert(vals, MXW_FLOAT64, mxw_ndarray_data(a), dtype, (int64_t)mxw_ndarray_size(a));
  return a;
}
static inline double c_at(const mxw_ndarray *a, int64_t i) {
  return mxw_load_f64(mxw_ndarray_data(a), mxw_ndarray_dtype(a), i);
}
/* a's values against want (n of them), within tol relative (see assert_close). */
static inline void c_expect(const mxw_ndarray *a, const double *want, int n, double tol) {
  assert_int_equal((int)mxw_ndarray_size(a), n);
  for (int i = 0; i < n; i++) {
    double v = c_at(a, i);
    if (isnan(want[i])) {
      if (!isnan(v)) fail_msg("element %d = %g, expected NaN", i, v);
      continue;
    }
    if (!(fabs(v - want[i]) <= tol * (1.0 + fabs(want[i]))))
      fail_msg("element %d = %.9g, expected %.9g (tol %g)", i, v, want[i], tol);
  }
}

static inline int c_params(const char *name, const char **kv, mxw_params **p) {
  const char *keys[32], *vals[32];
  int n = 0;
  for (; kv && kv[2 * n]; n++) {
    keys[n] = kv[2 * n];
    vals[n] = kv[2 * n + 1];
  }
  int op = mxw_op_find(name);
  if (op < 0) fail_msg("operator %s is not registered", name);
  return mxw_params_create(op, n, keys, vals, p);
}

/* Runs op `name` (attributes kv, NULL-terminated key/value list) into outs (room for nout);
 * returns the status; *nout becomes the number of outputs. */
static inline int c_run(const char *name, mxw_ndarray **ins, int nin, const char **kv, mxw_ndarray **outs, int *nout) {
  mxw_params *p = NULL;
  if (c_params(name, kv, &p) != 0) return -1;
  for (int i = 0; i < *nout; i++) outs[i] = NULL;
  int rc = mxw_op_invoke(mxw_op_find(name), p, nin, ins, nout, outs);
  mxw_params_free(p);
  return rc;
}
/* The first output of a run that must succeed (the others are freed). */
static inline mxw_ndarray *c_run1(const char *name, mxw_ndarray **ins, int nin, const char **kv) {
  mxw_ndarray *outs[8];
  int nout = 8;
  if (c_run(name, ins, nin, kv, outs, &nout) != 0) fail_msg("%s: %s", name, mxw_get_last_error());
  for (int i = 1; i < nout; i++) mxw_ndarray_free(outs[i]);
  return outs[0];
}
/* A run that must fail with an error mentioning needle. */
static inline void c_fail(const char *name, mxw_ndarray **ins, int nin, const char **kv, const char *needle) {
  mxw_ndarray *outs[8];
  int nout = 8;
  int rc = c_run(name, ins, nin, kv, outs, &nout);
  if (rc == 0) {
    for (int i = 0; i < nout; i++) mxw_ndarray_free(outs[i]);
    fail_msg("%s succeeded; expected an error mentioning '%s'", name, needle);
  }
  assert_error_contains(needle);
}
/* Attribute parsing / validation that must fail with needle. */
static inline void c_bad_params(const char *name, const char **kv, const char *needle) {
  mxw_params *p = NULL;
  if (c_params(name, kv, &p) == 0) {
    mxw_params_free(p);
    fail_msg("%s: attributes accepted; expected an error mentioning '%s'", name, needle);
  }
  assert_error_contains(needle);
}

/* The gradient of input `wrt` of op `name` (every input fixed but that one) with head gradient
 * head (NULL: ones) on output `which`; the gradient has input wrt's dtype. */
static inline mxw_ndarray *c_grad(const char *name, mxw_ndarray **ins, int nin, int wrt, int which, const double *head,
                                  const char **kv) {
  int32_t shape[MXW_MAX_NDIM];
  mxw_ndarray_shape(ins[wrt], shape);
  mxw_ndarray *g0 = c_arr(mxw_ndarray_dtype(ins[wrt]), mxw_ndarray_ndim(ins[wrt]), shape, NULL);
  int32_t req = 1;
  assert_int_equal(mxw_autograd_mark_variables(1, &ins[wrt], &g0, &req), 0);
  mxw_ndarray *outs[8];
  int nout = 8;
  mxw_autograd_set_recording(1);
  int rc = c_run(name, ins, nin, kv, outs, &nout);
  mxw_autograd_set_recording(0);
  if (rc != 0) fail_msg("%s: %s", name, mxw_get_last_error());
  int32_t os[MXW_MAX_NDIM];
  mxw_ndarray_shape(outs[which], os);
  mxw_ndarray *h = NULL;
  if (head) h = c_arr(mxw_ndarray_dtype(outs[which]), mxw_ndarray_ndim(outs[which]), os, head);
  mxw_ndarray *g = NULL;
  if (mxw_autograd_grad(1, &outs[which], head ? &h : NULL, 1, &ins[wrt], 0, 1, &g) != 0)
    fail_msg("%s backward: %s", name, mxw_get_last_error());
  for (int i = 0; i < nout; i++) mxw_ndarray_free(outs[i]);
  if (h) mxw_ndarray_free(h);
  mxw_ndarray_free(g0);
  return g;
}

/* Shape inference of op name with packed input shapes (ndim -1: unknown); returns the status and
 * fills out (packed, room for 8 outputs). */
static inline int c_infer(const char *name, const char **kv, int nin, const int32_t *in, int32_t *out) {
  mxw_params *p = NULL;
  if (c_params(name, kv, &p) != 0) return -1;
  int rc = mxw_op_infer_shape(p, nin, in, out);
  mxw_params_free(p);
  return rc;
}

static inline void c_free(int n, mxw_ndarray **a) {
  for (int i = 0; i < n; i++)
    if (a[i]) mxw_ndarray_free(a[i]);
}
#endif
