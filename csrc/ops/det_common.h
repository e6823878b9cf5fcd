/* det_common.h -- helpers shared by the detection op families (contrib_bbox.c, contrib_multibox.c,
 * contrib_roi.c); not a family itself (the family table lists the .c files of csrc/ops only).
 *
 * - compute views: MXNet runs these ops in the data's own real type (MSHADOW_REAL_TYPE_SWITCH:
 *   float16, float32, float64). Here float32 and float64 run as they are; float16 and bfloat16
 *   tensors are converted to float32 copies, computed in float32 and the outputs converted back
 *   (MXNet's half_t also computes each operation in float and rounds to half).
 * - Tuple<float> attributes (sizes, ratios, variances, scales, ...) kept as their text and parsed
 *   into floats by the op's validate.
 * - a stable merge sort of int32 indices under a comparator (MXNet's std::stable_sort). */
#ifndef MXW_DET_COMMON_H_
#define MXW_DET_COMMON_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/mxw_core.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NUM_ATTRS(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
typedef char shape_buf[160];

/* ---- compute views ------------------------------------------------------------------------------ */
#define DET_MAX_TENSORS 8
typedef struct {
  mxw_tensor in[DET_MAX_TENSORS], out[DET_MAX_TENSORS];
  void *buf[2 * DET_MAX_TENSORS];
  int nbuf;
  int dtype; /* the compute type: MXW_FLOAT32 or MXW_FLOAT64 */
} det_view;

static inline int det_is_half(int dt) { return dt == MXW_FLOAT16 || dt == MXW_BFLOAT16; }

/* The compute type for data of dtype dt (MXNet's real types), or an error naming the op. */
static inline int det_compute_type(const char *op, int dt, int *out) {
  if (dt == MXW_FLOAT32 || det_is_half(dt))
    *out = MXW_FLOAT32;
  else if (dt == MXW_FLOAT64)
    *out = MXW_FLOAT64;
  else
    return mxw_fail("%s: dtype %s is not supported (float16, float32 or float64)", op, mxw_dtype_name(dt));
  return 0;
}

static inline void det_view_free(det_view *v) {
  for (int i = 0; i < v->nbuf; i++) free(v->buf[i]);
  v->nbuf = 0;
}

/* Views of the call's tensors: float16/bfloat16 ones become float32 copies (inputs converted,
 * outputs allocated); every other tensor is the call's own. key_dtype picks the compute type. */
static inline int det_view_begin(const mxw_op_call *c, const char *op, int key_dtype, det_view *v) {
  memset(v, 0, sizeof *v);
  MXW_TRY(det_compute_type(op, key_dtype, &v->dtype));
  if (c->num_inputs > DET_MAX_TENSORS || c->num_outputs > DET_MAX_TENSORS) return mxw_fail("%s: too many tensors", op);
  for (int k = 0; k < 2; k++) {
    const int n = k ? c->num_outputs : c->num_inputs;
    for (int i = 0; i < n; i++) {
      const mxw_tensor *t = k ? &c->outputs[i] : &c->inputs[i];
      mxw_tensor *d = k ? &v->out[i] : &v->in[i];
      *d = *t;
      if (!det_is_half(t->dtype)) continue;
      const int64_t size = mxw_tensor_size(t);
      void *b = malloc((size_t)(size > 0 ? size : 1) * sizeof(float));
      if (!b) {
        det_view_free(v);
        return mxw_fail("%s: out of memory (%lld bytes for a float32 copy)", op, (long long)(size * 4));
      }
      v->buf[v->nbuf++] = b;
      if (!k) mxw_convert(t->data, t->dtype, b, MXW_FLOAT32, size);
      d->data = b;
      d->dtype = MXW_FLOAT32;
    }
  }
  return 0;
}

/* Converts the float32 copies of float16/bfloat16 outputs back (when ok) and frees the copies;
 * returns ok's status (0 or -1) so `return det_view_end(c, &v, rc)` reads well. */
static inline int det_view_end(const mxw_op_call *c, det_view *v, int rc) {
  if (rc == 0)
    for (int i = 0; i < c->num_outputs; i++)
      if (det_is_half(c->outputs[i].dtype))
        mxw_convert(v->out[i].data, MXW_FLOAT32, c->outputs[i].data, c->outputs[i].dtype,
                    mxw_tensor_size(&c->outputs[i]));
  det_view_free(v);
  return rc;
}

/* ---- Tuple<float> attributes ------------------------------------------------------------------------ */
#define DET_MAX_FLOATS 16
/* an op's Tuple<float> attribute (mxw_parse_floats) */
static inline int det_parse_floats(const char *name, const char *text, float *v, int *n) {
  return mxw_parse_floats(name, text, v, DET_MAX_FLOATS, n);
}

/* ---- stable sort of indices --------------------------------------------------------------------------- */
/* cmp(ctx, a, b) < 0 when a goes before b. A stable merge sort (std::stable_sort's result) of idx[0..n)
 * using tmp[0..n) as scratch. */
typedef int (*det_cmp_fn)(const void *ctx, int32_t a, int32_t b);
static inline void det_stable_sort(int32_t *idx, int32_t *tmp, int64_t n, det_cmp_fn cmp, const void *ctx) {
  /* bottom-up: runs of width w merged pairwise, ping-ponging between idx and tmp */
  int32_t *src = idx, *dst = tmp;
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = cmp(ctx, src[j], src[i]) < 0 ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    int32_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != idx) memcpy(idx, src, (size_t)n * sizeof(int32_t));
}

/* A zero-filled int32/int64/float... buffer of n elements of size es, or NULL with an out-of-memory error. */
static inline void *det_alloc(const char *op, int64_t n, size_t es) {
  void *p = calloc((size_t)(n > 0 ? n : 1), es);
  if (!p) mxw_fail("%s: out of memory (%lld bytes of workspace)", op, (long long)(n * (int64_t)es));
  return p;
}

#endif /* MXW_DET_COMMON_H_ */
