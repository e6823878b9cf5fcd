/* shape.c -- shape helpers and the shared inference rules. */
#include <stdio.h>

#include "mxw_core.h"

/* Saturates at INT64_MAX (INT64_MIN) instead of overflowing, so that dims taken from hostile
 * attributes or files give a size every later check refuses (fuzz_attrs: Reshape shape=(2, 2^63 - 1)). */
int64_t mxw_shape_size(const mxw_shape *s) {
  for (int i = 0; i < s->ndim; i++)
    if (s->dims[i] == 0) return 0;
  int64_t n = 1;
  for (int i = 0; i < s->ndim; i++) {
    int64_t r;
    if (__builtin_mul_overflow(n, s->dims[i], &r)) return (n < 0) != (s->dims[i] < 0) ? INT64_MIN : INT64_MAX;
    n = r;
  }
  return n;
}

int mxw_shape_known(const mxw_shape *s) {
  if (s->ndim < 0) return 0;
  for (int i = 0; i < s->ndim; i++)
    if (s->dims[i] < 0) return 0;
  return 1;
}

int mxw_shape_equal(const mxw_shape *a, const mxw_shape *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

mxw_shape mxw_shape_make(int ndim, const int64_t *dims) {
  mxw_shape s;
  memset(&s, 0, sizeof s);
  s.ndim = ndim;
  for (int i = 0; i < ndim && i < MXW_MAX_NDIM; i++) s.dims[i] = dims[i];
  return s;
}

char *mxw_shape_str(const mxw_shape *s, char *buf, size_t len) {
  if (len == 0) return buf;
  if (s->ndim < 0) {
    snprintf(buf, len, "None");
    return buf;
  }
  size_t used = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < s->ndim && used < len; i++) {
    if (s->dims[i] < 0)
      used += (size_t)snprintf(buf + used, len - used, i ? ", ?" : "?");
    else
      used += (size_t)snprintf(buf + used, len - used, i ? ", %lld" : "%lld", (long long)s->dims[i]);
  }
  if (used < len) snprintf(buf + used, len - used, s->ndim == 1 ? ",)" : ")");
  return buf;
}

/* The name is `what`, or the format `what` with n (n >= 0): formatted only for an error, as shape
 * inference runs on every eager call. */
static int assign_mismatch(const mxw_shape *dst, const mxw_shape *src, const char *what, int n) {
  char name[96], a[128], b[128];
  if (n >= 0) snprintf(name, sizeof name, what, n);
  return mxw_fail("shape mismatch for %s: expected %s, got %s", n >= 0 ? name : what, mxw_shape_str(dst, a, sizeof a),
                  mxw_shape_str(src, b, sizeof b));
}

static int assign(mxw_shape *dst, const mxw_shape *src, const char *what, int n) {
  if (src->ndim < 0) return 0;
  if (dst->ndim < 0) {
    *dst = *src;
    return 0;
  }
  if (dst->ndim != src->ndim) return assign_mismatch(dst, src, what, n);
  for (int i = 0; i < dst->ndim; i++) {
    if (src->dims[i] < 0) continue;
    if (dst->dims[i] < 0)
      dst->dims[i] = src->dims[i];
    else if (dst->dims[i] != src->dims[i])
      return assign_mismatch(dst, src, what, n);
  }
  return 0;
}

int mxw_shape_assign(mxw_shape *dst, const mxw_shape *src, const char *what) { return assign(dst, src, what, -1); }

int mxw_shape_assign_nth(mxw_shape *dst, const mxw_shape *src, const char *what_fmt, int n) {
  return assign(dst, src, what_fmt, n < 0 ? 0 : n);
}

int mxw_shape_unify(mxw_shape *have, const mxw_shape *want, const char *name, const char *rule) {
  if (want->ndim < 0) return 0;
  if (have->ndim < 0) {
    *have = *want;
    return 0;
  }
  int ok = have->ndim == want->ndim;
  for (int i = 0; ok && i < have->ndim; i++)
    if (have->dims[i] >= 0 && want->dims[i] >= 0 && have->dims[i] != want->dims[i]) ok = 0;
  if (!ok) {
    char a[128], b[128];
    return mxw_fail("%s has shape %s, expected %s%s", name, mxw_shape_str(have, a, sizeof a),
                    mxw_shape_str(want, b, sizeof b), rule ? rule : "");
  }
  for (int i = 0; i < have->ndim; i++)
    if (have->dims[i] < 0) have->dims[i] = want->dims[i];
  return 0;
}

int mxw_infer_shape_same(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  mxw_shape s;
  s.ndim = -1;
  for (int i = 0; i < nin; i++) MXW_TRY(mxw_shape_assign_nth(&s, &in[i], "input %d", i));
  for (int i = 0; i < nout; i++) MXW_TRY(mxw_shape_assign_nth(&s, &out[i], "output %d", i));
  for (int i = 0; i < nin; i++) MXW_TRY(mxw_shape_assign(&in[i], &s, "input"));
  for (int i = 0; i < nout; i++) MXW_TRY(mxw_shape_assign(&out[i], &s, "output"));
  return 0;
}

int mxw_infer_type_same(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  int t = -1;
  for (int i = 0; i < nin + nout; i++) {
    int v = i < nin ? in[i] : out[i - nin];
    if (v < 0) continue;
    if (t < 0)
      t = v;
    else if (t != v)
      return mxw_fail("dtype mismatch: %s %d is %s but another is %s", i < nin ? "input" : "output",
                      i < nin ? i : i - nin, mxw_dtype_name(v), mxw_dtype_name(t));
  }
  if (t < 0) return 0;
  for (int i = 0; i < nin; i++) in[i] = t;
  for (int i = 0; i < nout; i++) out[i] = t;
  return 0;
}

/* Output 0 takes input 1's shape / dtype (backward ops whose input 1 is the data, e.g. (ograd, data)). */
int mxw_infer_shape_second(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  return mxw_shape_assign(&out[0], &in[1], "output");
}
int mxw_infer_type_second(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[1] >= 0) out[0] = in[1];
  return 0;
}

int mxw_infer_type_first(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[0] >= 0) out[0] = in[0];
  return 0;
}

int mxw_normalize_axis(int64_t axis, int ndim, int *out) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) return mxw_fail("axis %lld is out of range for %d dimensions", (long long)axis, ndim);
  *out = (int)a;
  return 0;
}

/* (A, R, S) -> (A, S, R) for 1, 2, 4 or 8-byte elements: the channel-last <-> channel-first move
 * of layout-converting ops. */
void mxw_swap_last2(const void *src, void *dst, int64_t A, int64_t R, int64_t S, size_t esize) {
#define MXW_SWAP_LAST2(T)                                  \
  for (int64_t a = 0; a < A; a++) {                        \
    const T *x = (const T *)src + a * R * S;               \
    T *y = (T *)dst + a * R * S;                           \
    for (int64_t s = 0; s < S; s++)                        \
      for (int64_t r = 0; r < R; r++) *y++ = x[r * S + s]; \
  }
  switch (esize) {
    case 1: MXW_SWAP_LAST2(uint8_t) break;
    case 2: MXW_SWAP_LAST2(uint16_t) break;
    case 4: MXW_SWAP_LAST2(uint32_t) break;
    default: MXW_SWAP_LAST2(uint64_t) break;
  }
#undef MXW_SWAP_LAST2
}

char *mxw_tuple_str(const mxw_tuple *t, char *buf, size_t len) {
  if (len == 0) return buf;
  if (t->ndim < 0) {
    snprintf(buf, len, "None");
    return buf;
  }
  size_t used = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < t->ndim && used < len; i++) {
    if (t->has[i])
      used += (size_t)snprintf(buf + used, len - used, i ? ", %lld" : "%lld", (long long)t->v[i]);
    else
      used += (size_t)snprintf(buf + used, len - used, i ? ", None" : "None");
  }
  if (used < len) snprintf(buf + used, len - used, t->ndim == 1 ? ",)" : ")");
  return buf;
}

char *mxw_shape_attr(const mxw_shape *s, char *buf, size_t len) {
  mxw_tuple t;
  t.ndim = s->ndim;
  for (int i = 0; i < s->ndim; i++) {
    t.v[i] = s->dims[i];
    t.has[i] = 1;
  }
  return mxw_tuple_str(&t, buf, len);
}

/* ---- strided boxes (slice, _slice_assign) ------------------------------------------------------ */
int mxw_slice_check(const mxw_tuple *begin, const mxw_tuple *end, const mxw_tuple *step) {
  char a[512], b[512];
  MXW_CHECK(begin->ndim >= 0 && end->ndim >= 0, "begin and end must be tuples, not None");
  MXW_CHECK(begin->ndim == end->ndim, "begin=%s and end=%s must have the same length",
            mxw_tuple_str(begin, a, sizeof a), mxw_tuple_str(end, b, sizeof b));
  MXW_CHECK(step->ndim <= 0 || step->ndim == begin->ndim, "step=%s and begin=%s must have the same length",
            mxw_tuple_str(step, a, sizeof a), mxw_tuple_str(begin, b, sizeof b));
  for (int i = 0; i < step->ndim; i++)
    MXW_CHECK(!step->has[i] || step->v[i] != 0, "step=%s: step %d is 0", mxw_tuple_str(step, a, sizeof a), i);
  return 0;
}

int mxw_slice_ranges(const mxw_tuple *begin, const mxw_tuple *end, const mxw_tuple *step, const mxw_shape *x,
                     mxw_axis_range *r) {
  char xs[160], t[512];
  MXW_CHECK(x->ndim >= 1, "cannot slice an array of shape %s: it has no dimensions", mxw_shape_str(x, xs, sizeof xs));
  MXW_CHECK(begin->ndim <= x->ndim, "begin=%s has %d entries but the array of shape %s has only %d dimensions",
            mxw_tuple_str(begin, t, sizeof t), begin->ndim, mxw_shape_str(x, xs, sizeof xs), x->ndim);
  for (int i = 0; i < x->ndim; i++) {
    int64_t L = x->dims[i];
    if (i >= begin->ndim) {
      r[i] = (mxw_axis_range){0, 1, L};
      continue;
    }
    int64_t s = (i < step->ndim && step->has[i]) ? step->v[i] : 1;
    r[i] = (mxw_axis_range){0, s, L < 0 ? -1 : 0};
    if (L <= 0) continue;
    int64_t b = begin->has[i] ? begin->v[i] : (s < 0 ? L - 1 : 0);
    int64_t e = end->has[i] ? end->v[i] : (s < 0 ? -1 : L);
    if (b < 0) b += L;
    if (e < 0 && end->has[i]) e += L;
    if (b < 0 && s > 0) b = 0;
    if (b > L - 1 && s < 0) b = L - 1;
    if (b < 0 || b > L - 1) b = -1; /* an empty range */
    if (e < -1) e = -1;
    if (e > L) e = L;
    int64_t len = 0;
    if (b >= 0 && b != e) len = s > 0 ? (e > b ? (e - b - 1) / s + 1 : 0) : (e < b ? (b - e - 1) / (-s) + 1 : 0);
    r[i].begin = b < 0 ? 0 : b;
    r[i].len = len;
  }
  return 0;
}
