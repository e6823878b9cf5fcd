/* Helpers of the test_cov_*.c programs: symbols built through the public C API (mxw_sym_var,
 * mxw_sym_compose), executors, and arrays marked for autograd. */
#ifndef MXW_COV_GRAPH_H_
#define MXW_COV_GRAPH_H_
#include "mxw_test.h"

/* A variable; fails the test on error. */
static inline mxw_symbol *cg_var(const char *name) {
  mxw_symbol *s = NULL;
  if (mxw_sym_var(name, 0, NULL, NULL, &s) != 0) fail_msg("%s", mxw_get_last_error());
  return s;
}

/* An op node `name` of `opname` on nin one-output inputs, attributes as NULL-terminated key/value
 * strings; returns NULL (error set) when the composition fails. */
static inline mxw_symbol *cg_op(const char *opname, const char *name, int nin, mxw_symbol *const *ins, ...) {
  const char *keys[16], *vals[16];
  int n = 0;
  va_list ap;
  va_start(ap, ins);
  for (const char *k; (k = va_arg(ap, const char *)) != NULL && n < 16; n++) {
    keys[n] = k;
    vals[n] = va_arg(ap, const char *);
  }
  va_end(ap);
  int op = mxw_op_find(opname);
  if (op < 0) fail_msg("operator %s is not registered", opname);
  mxw_symbol *s = NULL;
  if (mxw_sym_compose(op, name, n, keys, vals, nin, ins, &s) != 0) return NULL;
  return s;
}

static inline mxw_executor *cg_exec(const mxw_symbol *s) {
  mxw_executor *ex = NULL;
  if (mxw_exec_create(s, &ex) != 0) fail_msg("%s", mxw_get_last_error());
  return ex;
}

/* Marks one array as a variable with gradient buffer g and grad_req req (0 null, 1 write, 2 add). */
static inline void cg_mark(mxw_ndarray *x, mxw_ndarray *g, int32_t req) {
  if (mxw_autograd_mark_variables(1, &x, &g, &req) != 0) fail_msg("%s", mxw_get_last_error());
}

static inline void cg_fill(mxw_ndarray *a, const float *v) {
  memcpy(mxw_ndarray_data(a), v, sizeof(float) * (size_t)mxw_ndarray_size(a));
}

static inline void cg_zero(mxw_ndarray *a) {
  memset(mxw_ndarray_data(a), 0, (size_t)mxw_ndarray_size(a) * (size_t)mxw_dtype_size(mxw_ndarray_dtype(a)));
}

#endif
