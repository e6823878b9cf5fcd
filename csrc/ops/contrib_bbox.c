/* contrib_bbox.c -- MXNet 1.9.1's bounding-box operators (src/operator/contrib/bounding_box-inl.h,
 * bounding_box-common.h, bounding_box.cc):
 *
 *   _contrib_box_nms (alias _contrib_box_non_maximum_suppression)  data (..., N, W) -> the boxes
 *       sorted by score, suppressed / filtered rows written as -1; a hidden second output
 *       (..., N, 1) records each output row's source row (MXNet's "temp") for the gradient
 *   _contrib_box_iou(lhs (..., 4), rhs (..., 4); format) -> lhs.shape[:-1] + rhs.shape[:-1]
 *   _contrib_bipartite_matching(data (..., N, M); is_ascend, threshold, topk) -> row matches
 *       (..., N), column matches (..., M)
 *   _contrib_box_encode(samples, matches, anchors, refs, means, stds) -> targets, masks (B, N, 4)
 *   _contrib_box_decode(data (B, N, 4), anchors (1, N, 4); std0..3, clip, format) -> (B, N, 4)
 *
 * box_nms follows MXNet's CPU kernel step by step: boxes whose score > valid_thresh (and, with
 * id_index >= 0, whose id != background_id) are kept, sorted per batch by score descending (a
 * stable sort: ties keep input order), the first topk of each batch go through greedy NMS (IoU >
 * overlap_thresh suppresses the later box; with id_index >= 0 and force_suppress off only boxes
 * whose ids truncate to the same int), and the survivors are written in order, the rest of the
 * rows being -1. topk = 0 copies the input unchanged; when nothing is valid every row is -1.
 * out_format != in_format converts the written rows whose first coordinate is not negative (as
 * MXNet, which uses that test to skip the -1 rows). Arithmetic runs in the data's type (float16
 * through float32), the thresholds as MXNet's float parameters.
 *
 * Gradients: box_nms copies each output row's gradient back to its source row
 * (_backward_contrib_box_nms, from the hidden record; unchanged by an out_format conversion, as
 * MXNet's); box_iou and bipartite_matching have
 * MXNet's zero gradients, box_encode / box_decode MXNet's MakeZeroGradNodes: all non-differentiable
 * here. MXNet quirks kept: bipartite_matching's topk stops after topk + 1 matches (its count test
 * runs after the match is made); the record of a float16 box_nms loses exact row numbers past
 * 2048 boxes, as MXNet's. Out-of-range indices MXNet would read past an array with (box_encode's
 * matches of positive samples) are errors here. */
#include "det_common.h"

enum { FMT_CORNER = 0, FMT_CENTER = 1 };
static const char *const k_formats[] = {"corner", "center", NULL};
static const char *const k_data[] = {"data", NULL};

/* static_cast<int> of a float as x86 does it: values outside int's range (and NaN) give INT_MIN. */
static inline int64_t to_int32(double v) {
  return v > -2147483649.0 && v < 2147483648.0 ? (int64_t)(int32_t)v : (int64_t)INT32_MIN;
}

/* ==== _contrib_box_nms ============================================================================ */
typedef struct {
  double overlap_thresh, valid_thresh;
  int64_t topk, coord_start, score_index, id_index, background_id;
  int force_suppress, in_format, out_format;
} NMSParam;

static const mxw_attr_spec k_nms_attrs[] = {
    MXW_A_FLOAT("overlap_thresh", NMSParam, overlap_thresh, "0.5",
                "Overlapping(IoU) threshold to suppress object with smaller score."),
    MXW_A_FLOAT("valid_thresh", NMSParam, valid_thresh, "0",
                "Filter input boxes to those whose scores greater than valid_thresh."),
    MXW_A_INT("topk", NMSParam, topk, "-1", "Apply nms to topk boxes with descending scores, -1 to no restriction."),
    MXW_A_INT("coord_start", NMSParam, coord_start, "2", "Start index of the consecutive 4 coordinates."),
    MXW_A_INT("score_index", NMSParam, score_index, "1", "Index of the scores/confidence of boxes."),
    MXW_A_INT("id_index", NMSParam, id_index, "-1", "Optional, index of the class categories, -1 to disable."),
    MXW_A_INT("background_id", NMSParam, background_id, "-1",
              "Optional, id of the background class which will be ignored in nms."),
    MXW_A_BOOL("force_suppress", NMSParam, force_suppress, "False",
               "Optional, if set false and id_index is provided, nms will only apply to boxes belongs to the same "
               "category"),
    MXW_A_ENUM("in_format", NMSParam, in_format, "corner", k_formats,
               "The input box encoding type: corner [xmin, ymin, xmax, ymax] or center [x, y, width, height]."),
    MXW_A_ENUM("out_format", NMSParam, out_format, "corner", k_formats,
               "The output box encoding type: corner [xmin, ymin, xmax, ymax] or center [x, y, width, height]."),
};

/* BoxNMSShape: data (..., N, W) with W wide enough and the score, id and 4 coordinates in range. */
static int check_nms_width(const NMSParam *p, int64_t width) {
  const int64_t expected = p->id_index >= 0 ? 6 : 5;
  MXW_CHECK(width >= expected,
            "the last dimension must have at least 5 elements namely (score, coordinates x 4) %lld provided, %lld "
            "expected.",
            (long long)width, (long long)expected);
  const int64_t cs = p->coord_start, ce = p->coord_start + 3, si = p->score_index;
  MXW_CHECK(si >= 0 && si < width, "score_index: %lld out of range: (0, %lld)", (long long)si, (long long)width);
  MXW_CHECK(si < cs || si > ce, "score_index: %lld conflict with coordinates: (%lld, %lld).", (long long)si,
            (long long)cs, (long long)ce);
  MXW_CHECK(cs >= 0 && ce < width, "coordinates: (%lld, %lld) out of range:: (0, %lld)", (long long)cs, (long long)ce,
            (long long)width);
  if (p->id_index >= 0) {
    const int64_t id = p->id_index;
    MXW_CHECK(id < width, "id_index: %lld out of range: (0, %lld)", (long long)id, (long long)width);
    MXW_CHECK(id < cs || id > ce, "id_index: %lld conflict with coordinates: (%lld, %lld).", (long long)id,
              (long long)cs, (long long)ce);
    MXW_CHECK(id != si, "id_index: %lld conflict with score_index: %lld", (long long)id, (long long)si);
  }
  return 0;
}

static int infer_nms(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin, (void)nout;
  MXW_TRY(mxw_shape_assign(&in[0], &out[0], "data"));
  if (in[0].ndim < 0) return 0;
  shape_buf b;
  const mxw_shape *s = &in[0];
  MXW_CHECK(s->ndim >= 2, "input must have dim >= 2 the last two dimensions are num_box and box_width %s provided",
            SHAPE_STR(s, b));
  if (s->dims[s->ndim - 1] >= 0) MXW_TRY(check_nms_width((const NMSParam *)param, s->dims[s->ndim - 1]));
  MXW_TRY(mxw_shape_assign(&out[0], s, "output"));
  mxw_shape r = *s;
  r.dims[r.ndim - 1] = 1;
  return mxw_shape_assign(&out[1], &r, "the index record");
}

/* (..., N, W) -> batches B, boxes N, width W */
static void nms_dims(const mxw_shape *s, int64_t *B, int64_t *N, int64_t *W) {
  int64_t b = 1;
  for (int i = 0; i < s->ndim - 2; i++) b *= s->dims[i];
  *B = b;
  *N = s->dims[s->ndim - 2];
  *W = s->dims[s->ndim - 1];
}

typedef struct {
  const void *x;
  int64_t N, W, score;
} nms_sort_ctx;

/* Generic kernels over T (float, double); S names the instance. */
#define DEF_BOX_HELPERS(T, S)                                                                               \
  /* Intersect of bounding_box-common.h: overlap of [a0, a2] and [b0, b2] (corner) or of centred extents */ \
  static inline T intersect_##S(const T *a, const T *b, int fmt) {                                          \
    T w;                                                                                                    \
    if (fmt == FMT_CORNER) {                                                                                \
      T left = a[0] > b[0] ? a[0] : b[0], right = a[2] < b[2] ? a[2] : b[2];                                \
      w = right - left;                                                                                     \
    } else {                                                                                                \
      T aw = a[2] / 2, bw = b[2] / 2;                                                                       \
      T al = a[0] - aw, ar = a[0] + aw, bl = b[0] - bw, br = b[0] + bw;                                     \
      T left = bl > al ? bl : al, right = br < ar ? br : ar;                                                \
      w = right - left;                                                                                     \
    }                                                                                                       \
    return w > 0 ? w : (T)0;                                                                                \
  }                                                                                                         \
  /* BoxArea: 0 for a negative width or height */                                                           \
  static inline T area_##S(const T *box, int fmt) {                                                         \
    T w = fmt == FMT_CORNER ? box[2] - box[0] : box[2], h = fmt == FMT_CORNER ? box[3] - box[1] : box[3];   \
    return (w < 0 || h < 0) ? (T)0 : w * h;                                                                 \
  }                                                                                                         \
  /* batch ascending, then score descending; equal keys keep their order (stable sort) */                   \
  static int nms_cmp_##S(const void *ctx, int32_t a, int32_t b) {                                           \
    const nms_sort_ctx *c = (const nms_sort_ctx *)ctx;                                                      \
    const int64_t ba = a / c->N, bb = b / c->N;                                                             \
    if (ba != bb) return ba < bb ? -1 : 1;                                                                  \
    const T sa = ((const T *)c->x)[a * c->W + c->score], sb = ((const T *)c->x)[b * c->W + c->score];       \
    return sa > sb ? -1 : (sb > sa ? 1 : 0);                                                                \
  }

DEF_BOX_HELPERS(float, f32)
DEF_BOX_HELPERS(double, f64)

/* idx/tmp: B*N int32; bstart: B + 1; work: 5 * N of T (a batch's candidates' extents and areas,
 * gathered for locality; tmp holds their class ids once sorting is done). */
#define DEF_NMS(T, S)                                                                                                 \
  static void nms_##S(const T *x, T *out, T *rec, int64_t B, int64_t N, int64_t W, const NMSParam *p, int32_t *idx,   \
                      int32_t *tmp, int64_t *bstart, T *work) {                                                       \
    const int64_t total = B * N;                                                                                      \
    const int64_t topk = p->topk < 0 ? N : (p->topk < N ? p->topk : N);                                               \
    if (topk < 1) { /* MXNet returns the input and the identity record */                                             \
      memcpy(out, x, (size_t)(total * W) * sizeof(T));                                                                \
      for (int64_t i = 0; i < total; i++) rec[i] = (T)i;                                                              \
      return;                                                                                                         \
    }                                                                                                                 \
    const int64_t si = p->score_index, cs = p->coord_start, id = p->id_index;                                         \
    const T vth = (T)(float)p->valid_thresh, bg = (T)p->background_id;                                                \
    const T oth = (T)(float)p->overlap_thresh;                                                                        \
    int64_t nv = 0;                                                                                                   \
    for (int64_t i = 0; i < total; i++) {                                                                             \
      int ok = x[i * W + si] > vth;                                                                                   \
      if (id >= 0) ok = ok && x[i * W + id] != bg;                                                                    \
      if (ok) idx[nv++] = (int32_t)i;                                                                                 \
    }                                                                                                                 \
    for (int64_t i = 0; i < total * W; i++) out[i] = (T)-1;                                                           \
    for (int64_t i = 0; i < total; i++) rec[i] = (T)-1;                                                               \
    if (nv == 0) return;                                                                                              \
    nms_sort_ctx ctx = {x, N, W, si};                                                                                 \
    det_stable_sort(idx, tmp, nv, nms_cmp_##S, &ctx);                                                                 \
    /* bstart[b]: the first sorted position of batch b */                                                             \
    int64_t pos = 0;                                                                                                  \
    for (int64_t b = 0; b <= B; b++) {                                                                                \
      while (pos < nv && idx[pos] / N < b) pos++;                                                                     \
      bstart[b] = pos;                                                                                                \
    }                                                                                                                 \
    const int center = p->in_format == FMT_CENTER, by_class = !p->force_suppress && id >= 0;                          \
    T *ex = work, *ar = work + 4 * N;                                                                                 \
    int32_t *cl = tmp;                                                                                                \
    for (int64_t b = 0; b < B; b++) {                                                                                 \
      const int64_t lo = bstart[b], hi = bstart[b + 1] < lo + topk ? bstart[b + 1] : lo + topk, n = hi - lo;          \
      int32_t *ix = idx + lo;                                                                                         \
      /* the batch's first topk boxes: extents (left, top, right, bottom as Intersect computes them),                 \
       * areas and class ids */                                                                                       \
      for (int64_t k = 0; k < n; k++) {                                                                               \
        const T *bx = x + (int64_t)ix[k] * W + cs;                                                                    \
        if (center) {                                                                                                 \
          const T hw = bx[2] / 2, hh = bx[3] / 2;                                                                     \
          ex[4 * k] = bx[0] - hw, ex[4 * k + 1] = bx[1] - hh, ex[4 * k + 2] = bx[0] + hw, ex[4 * k + 3] = bx[1] + hh; \
        } else {                                                                                                      \
          ex[4 * k] = bx[0], ex[4 * k + 1] = bx[1], ex[4 * k + 2] = bx[2], ex[4 * k + 3] = bx[3];                     \
        }                                                                                                             \
        ar[k] = area_##S(bx, p->in_format);                                                                           \
        cl[k] = by_class ? (int32_t)to_int32((double)x[(int64_t)ix[k] * W + id]) : 0;                                 \
      }                                                                                                               \
      /* greedy NMS: a kept box suppresses every later one of its class with IoU > overlap_thresh */                  \
      for (int64_t r = 0; r < n; r++) {                                                                               \
        if (ix[r] < 0) continue;                                                                                      \
        const T *a = ex + 4 * r;                                                                                      \
        for (int64_t q = r + 1; q < n; q++) {                                                                         \
          if (ix[q] < 0 || cl[q] != cl[r]) continue;                                                                  \
          const T *e = ex + 4 * q;                                                                                    \
          T w, h;                                                                                                     \
          if (center) { /* Intersect's centre branch: max(b, a), min(b, a) */                                         \
            w = (e[2] < a[2] ? e[2] : a[2]) - (e[0] > a[0] ? e[0] : a[0]);                                            \
            h = (e[3] < a[3] ? e[3] : a[3]) - (e[1] > a[1] ? e[1] : a[1]);                                            \
          } else {                                                                                                    \
            w = (a[2] < e[2] ? a[2] : e[2]) - (a[0] > e[0] ? a[0] : e[0]);                                            \
            h = (a[3] < e[3] ? a[3] : e[3]) - (a[1] > e[1] ? a[1] : e[1]);                                            \
          }                                                                                                           \
          const T inter = (w > 0 ? w : (T)0) * (h > 0 ? h : (T)0);                                                    \
          if (inter / (ar[r] + ar[q] - inter) > oth) ix[q] = -1;                                                      \
        }                                                                                                             \
      }                                                                                                               \
      /* the survivors, in order, from row b * N; the record keeps each one's source row */                           \
      int64_t count = 0;                                                                                              \
      for (int64_t k = 0; k < n; k++) {                                                                               \
        if (ix[k] < 0) continue;                                                                                      \
        memcpy(out + (b * N + count) * W, x + (int64_t)ix[k] * W, (size_t)W * sizeof(T));                             \
        rec[b * N + count] = (T)ix[k];                                                                                \
        count++;                                                                                                      \
      }                                                                                                               \
    }                                                                                                                 \
    if (p->in_format == p->out_format) return;                                                                        \
    for (int64_t i = 0; i < total; i++) {                                                                             \
      T *d = out + i * W + cs;                                                                                        \
      if (d[0] < 0) continue; /* MXNet's test for the -1 rows */                                                      \
      if (p->out_format == FMT_CENTER) {                                                                              \
        T l = d[0], t = d[1], r = d[2], bo = d[3];                                                                    \
        d[0] = (l + r) / 2, d[1] = (t + bo) / 2, d[2] = r - l, d[3] = bo - t;                                         \
      } else {                                                                                                        \
        T cx = d[0], cy = d[1], w = d[2] / 2, h = d[3] / 2;                                                           \
        d[0] = cx - w, d[1] = cy - h, d[2] = cx + w, d[3] = cy + h;                                                   \
      }                                                                                                               \
    }                                                                                                                 \
  }

DEF_NMS(float, f32)
DEF_NMS(double, f64)

static int fwd_box_nms(const mxw_op_call *c) {
  const NMSParam *p = (const NMSParam *)c->param;
  int64_t B, N, W;
  nms_dims(&c->inputs[0].shape, &B, &N, &W);
  const int64_t total = B * N;
  if (total == 0 || W == 0) return 0;
  MXW_CHECK(total < INT32_MAX, "box_nms: %lld boxes are more than the int32 indices hold", (long long)total);
  det_view v;
  MXW_TRY(det_view_begin(c, "box_nms", c->inputs[0].dtype, &v));
  const size_t es = v.dtype == MXW_FLOAT32 ? sizeof(float) : sizeof(double);
  int32_t *idx = (int32_t *)det_alloc("box_nms", total, sizeof(int32_t));
  int32_t *tmp = idx ? (int32_t *)det_alloc("box_nms", total, sizeof(int32_t)) : NULL;
  int64_t *bstart = tmp ? (int64_t *)det_alloc("box_nms", B + 1, sizeof(int64_t)) : NULL;
  void *areas = bstart ? det_alloc("box_nms", 5 * N, es) : NULL;
  int rc = areas ? 0 : -1;
  if (rc == 0) {
    if (v.dtype == MXW_FLOAT32)
      nms_f32((const float *)v.in[0].data, (float *)v.out[0].data, (float *)v.out[1].data, B, N, W, p, idx, tmp, bstart,
              (float *)areas);
    else
      nms_f64((const double *)v.in[0].data, (double *)v.out[0].data, (double *)v.out[1].data, B, N, W, p, idx, tmp,
              bstart, (double *)areas);
  }
  free(idx), free(tmp), free(bstart), free(areas);
  return det_view_end(c, &v, rc);
}

/* The gradient: each output row's gradient goes back to its source row (the record); the rows
 * that were suppressed or filtered get 0. */
static int grad_box_nms(mxw_grad_ctx *g) {
  mxw_gid dx;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_contrib_box_nms", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 1)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}

static int num_visible_one(const void *param) {
  (void)param;
  return 1;
}

static const mxw_op_def op_box_nms = {
    .name = "_contrib_box_nms",
    .aliases = ALIASES("_contrib_box_non_maximum_suppression"),
    .doc = MXW_DOC("non-maximum suppression: boxes sorted by score per batch, overlapping (IoU > overlap_thresh), "
                   "low-score and background boxes removed and their rows filled with -1"),
    .attrs = k_nms_attrs,
    .num_attrs = NUM_ATTRS(k_nms_attrs),
    .param_size = sizeof(NMSParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 2,
    .num_visible_outputs_fn = num_visible_one,
    .infer_shape = infer_nms,
    .forward = fwd_box_nms,
    .gradient = grad_box_nms,
};

/* _backward_contrib_box_nms(ograd (..., N, W), record (..., N, 1)) -> data's gradient */
static const char *const k_nms_backward_inputs[] = {"ograd", "record", NULL};
static int infer_backward_nms(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param, (void)nin, (void)nout;
  MXW_TRY(mxw_shape_assign(&out[0], &in[0], "data gradient"));
  return mxw_shape_assign(&in[0], &out[0], "ograd");
}
#define DEF_NMS_BACKWARD(T, S)                                                                                       \
  static int nms_backward_##S(const T *og, const T *rec, T *dx, int64_t total, int64_t W) {                          \
    if (total > 0 && W > 0) memset(dx, 0, (size_t)(total * W) * sizeof(T));                                          \
    for (int64_t i = 0; i < total; i++) {                                                                            \
      const int64_t k = to_int32((double)rec[i]);                                                                    \
      if (k < 0) continue;                                                                                           \
      MXW_CHECK(k < total, "_backward_contrib_box_nms: record[%lld] = %lld is out of range [0, %lld)", (long long)i, \
                (long long)k, (long long)total);                                                                     \
      memcpy(dx + k * W, og + i * W, (size_t)W * sizeof(T));                                                         \
    }                                                                                                                \
    return 0;                                                                                                        \
  }
DEF_NMS_BACKWARD(float, f32)
DEF_NMS_BACKWARD(double, f64)

static int fwd_backward_box_nms(const mxw_op_call *c) {
  int64_t B, N, W;
  nms_dims(&c->outputs[0].shape, &B, &N, &W);
  MXW_CHECK(mxw_tensor_size(&c->inputs[1]) == B * N, "_backward_contrib_box_nms: the record must have %lld elements",
            (long long)(B * N));
  det_view v;
  MXW_TRY(det_view_begin(c, "_backward_contrib_box_nms", c->outputs[0].dtype, &v));
  MXW_CHECK(v.in[1].dtype == v.dtype && v.in[0].dtype == v.dtype, "_backward_contrib_box_nms: dtype mismatch");
  int rc = v.dtype == MXW_FLOAT32 ? nms_backward_f32((const float *)v.in[0].data, (const float *)v.in[1].data,
                                                     (float *)v.out[0].data, B * N, W)
                                  : nms_backward_f64((const double *)v.in[0].data, (const double *)v.in[1].data,
                                                     (double *)v.out[0].data, B * N, W);
  return det_view_end(c, &v, rc);
}

static const mxw_op_def op_backward_box_nms = {
    .name = "_backward_contrib_box_nms",
    .doc = MXW_DOC("the data gradient of box_nms: each output row's gradient back at its source row"),
    .attrs = k_nms_attrs,
    .num_attrs = NUM_ATTRS(k_nms_attrs),
    .param_size = sizeof(NMSParam),
    .num_inputs = 2,
    .input_names = k_nms_backward_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_nms,
    .forward = fwd_backward_box_nms,
};

/* ==== _contrib_box_iou ============================================================================ */
typedef struct {
  int format;
} IoUParam;
static const mxw_attr_spec k_iou_attrs[] = {
    MXW_A_ENUM("format", IoUParam, format, "corner", k_formats,
               "The box encoding type: corner [xmin, ymin, xmax, ymax] or center [x, y, width, height]."),
};
static const char *const k_lhs_rhs[] = {"lhs", "rhs", NULL};

static int infer_box_iou(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param, (void)nin, (void)nout;
  if (in[0].ndim < 0 || in[1].ndim < 0) return 0;
  const char *name[2] = {"lhs", "rhs"};
  for (int k = 0; k < 2; k++) {
    MXW_CHECK(in[k].ndim >= 2, "%s must have dim >= 2 %d provided", name[k], in[k].ndim);
    const int64_t d = in[k].dims[in[k].ndim - 1];
    MXW_CHECK(d < 0 || d == 4, "last dimension of %s must be 4 %lld provided", name[k], (long long)d);
  }
  mxw_shape o;
  o.ndim = in[0].ndim + in[1].ndim - 2;
  MXW_CHECK(o.ndim <= MXW_MAX_NDIM, "box_iou: the output would have %d dimensions (at most %d)", o.ndim, MXW_MAX_NDIM);
  int k = 0;
  for (int i = 0; i < in[0].ndim - 1; i++) o.dims[k++] = in[0].dims[i];
  for (int i = 0; i < in[1].ndim - 1; i++) o.dims[k++] = in[1].dims[i];
  return mxw_shape_assign(&out[0], &o, "output");
}

#define DEF_IOU(T, S)                                                                                \
  static void box_iou_##S(const T *l, const T *r, T *out, int64_t nl, int64_t nr, int fmt) {         \
    for (int64_t i = 0; i < nl; i++)                                                                 \
      for (int64_t j = 0; j < nr; j++) {                                                             \
        const T *a = l + i * 4, *b = r + j * 4;                                                      \
        T inter = intersect_##S(a, b, fmt) * intersect_##S(a + 1, b + 1, fmt);                       \
        out[i * nr + j] = inter <= 0 ? (T)0 : inter / (area_##S(a, fmt) + area_##S(b, fmt) - inter); \
      }                                                                                              \
  }
DEF_IOU(float, f32)
DEF_IOU(double, f64)

static int fwd_box_iou(const mxw_op_call *c) {
  const IoUParam *p = (const IoUParam *)c->param;
  const int64_t nl = mxw_tensor_size(&c->inputs[0]) / 4, nr = mxw_tensor_size(&c->inputs[1]) / 4;
  det_view v;
  MXW_TRY(det_view_begin(c, "box_iou", c->inputs[0].dtype, &v));
  if (v.dtype == MXW_FLOAT32)
    box_iou_f32((const float *)v.in[0].data, (const float *)v.in[1].data, (float *)v.out[0].data, nl, nr, p->format);
  else
    box_iou_f64((const double *)v.in[0].data, (const double *)v.in[1].data, (double *)v.out[0].data, nl, nr, p->format);
  return det_view_end(c, &v, 0);
}

static const mxw_op_def op_box_iou = {
    .name = "_contrib_box_iou",
    .doc = MXW_DOC("intersection-over-union of every lhs box (..., 4) with every rhs box (..., 4)"),
    .attrs = k_iou_attrs,
    .num_attrs = NUM_ATTRS(k_iou_attrs),
    .param_size = sizeof(IoUParam),
    .num_inputs = 2,
    .input_names = k_lhs_rhs,
    .num_outputs = 1,
    .infer_shape = infer_box_iou,
    .forward = fwd_box_iou,
    .no_grad = 1,
};

/* ==== _contrib_bipartite_matching ================================================================ */
typedef struct {
  int is_ascend;
  double threshold;
  int64_t topk;
} BMParam;
static const mxw_attr_spec k_bm_attrs[] = {
    MXW_A_BOOL("is_ascend", BMParam, is_ascend, "False",
               "Use ascend order for scores instead of descending. Please set threshold accordingly."),
    MXW_A_FLOAT(
        "threshold", BMParam, threshold, NULL,
        "Ignore matching when score < thresh, if is_ascend=false, or ignore score > thresh, if is_ascend=true."),
    MXW_A_INT("topk", BMParam, topk, "-1", "Limit the number of matches to topk, set -1 for no limit"),
};

static int infer_bm(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param, (void)nin, (void)nout;
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim >= 2, "score matrix must have dim >= 2 %d provided", in[0].ndim);
  mxw_shape o = in[0];
  o.ndim--;
  MXW_TRY(mxw_shape_assign(&out[0], &o, "row matches"));
  o.dims[o.ndim - 1] = in[0].dims[in[0].ndim - 1];
  return mxw_shape_assign(&out[1], &o, "column matches");
}

typedef struct {
  const double *s;
  int asc;
} bm_sort_ctx;
static int bm_cmp(const void *ctx, int32_t a, int32_t b) {
  const bm_sort_ctx *c = (const bm_sort_ctx *)ctx;
  const double x = c->s[a], y = c->s[b];
  if (c->asc) return x < y ? -1 : (y < x ? 1 : 0);
  return x > y ? -1 : (y > x ? 1 : 0);
}

static int fwd_bipartite_matching(const mxw_op_call *c) {
  const BMParam *p = (const BMParam *)c->param;
  const mxw_tensor *x = &c->inputs[0];
  const int dt = x->dtype;
  int ct;
  MXW_TRY(det_compute_type("bipartite_matching", dt, &ct));
  const int64_t R = x->shape.dims[x->shape.ndim - 2], C = x->shape.dims[x->shape.ndim - 1];
  const int64_t stride = R * C, B = stride ? mxw_tensor_size(x) / stride : 0;
  for (int64_t i = 0; i < B * R; i++) mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, i, -1);
  for (int64_t i = 0; i < B * C; i++) mxw_store_f64(c->outputs[1].data, c->outputs[1].dtype, i, -1);
  if (stride == 0 || B == 0) return 0;
  MXW_CHECK(stride < INT32_MAX, "bipartite_matching: %lld scores per batch are too many", (long long)stride);
  double *s = (double *)det_alloc("bipartite_matching", stride, sizeof(double));
  int32_t *idx = s ? (int32_t *)det_alloc("bipartite_matching", stride, sizeof(int32_t)) : NULL;
  int32_t *tmp = idx ? (int32_t *)det_alloc("bipartite_matching", stride, sizeof(int32_t)) : NULL;
  double *rm = tmp ? (double *)det_alloc("bipartite_matching", R + C, sizeof(double)) : NULL;
  if (!rm) {
    free(s), free(idx), free(tmp);
    return -1;
  }
  double *cm = rm + R;
  const double thr = (double)(float)p->threshold;
  bm_sort_ctx ctx = {s, p->is_ascend};
  for (int64_t b = 0; b < B; b++) {
    for (int64_t j = 0; j < stride; j++) {
      s[j] = mxw_load_f64(x->data, dt, b * stride + j);
      idx[j] = (int32_t)j;
    }
    /* MXNet sorts every score, then stable-sorts by batch: each batch's scores in order, ties in
     * input order */
    det_stable_sort(idx, tmp, stride, bm_cmp, &ctx);
    for (int64_t i = 0; i < R + C; i++) rm[i] = -1;
    int64_t count = 0;
    for (int64_t j = 0; j < stride; j++) {
      const int64_t r = idx[j] / C, col = idx[j] % C;
      if (rm[r] != -1 || cm[col] != -1) continue;
      const double v = s[idx[j]];
      if (!((!p->is_ascend && v > thr) || (p->is_ascend && v < thr))) break; /* the rest are worse */
      rm[r] = (double)col;
      cm[col] = (double)r;
      if (p->topk > 0 && ++count > p->topk) break; /* MXNet's test, after the match */
    }
    for (int64_t i = 0; i < R; i++) mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, b * R + i, rm[i]);
    for (int64_t i = 0; i < C; i++) mxw_store_f64(c->outputs[1].data, c->outputs[1].dtype, b * C + i, cm[i]);
  }
  free(s), free(idx), free(tmp), free(rm);
  return 0;
}

static const mxw_op_def op_bipartite_matching = {
    .name = "_contrib_bipartite_matching",
    .doc = MXW_DOC("greedy bipartite matching of a (..., N, M) score matrix: each row's matched column and each "
                   "column's matched row (-1 where unmatched)"),
    .attrs = k_bm_attrs,
    .num_attrs = NUM_ATTRS(k_bm_attrs),
    .param_size = sizeof(BMParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 2,
    .infer_shape = infer_bm,
    .forward = fwd_bipartite_matching,
    .no_grad = 1,
};

/* ==== _contrib_box_encode ========================================================================= */
static const char *const k_encode_inputs[] = {"samples", "matches", "anchors", "refs", "means", "stds", NULL};

static int infer_box_encode(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param, (void)nin, (void)nout;
  const int64_t four = 4;
  const mxw_shape s4 = mxw_shape_make(1, &four);
  MXW_TRY(mxw_shape_assign(&in[4], &s4, "means"));
  MXW_TRY(mxw_shape_assign(&in[5], &s4, "stds"));
  if (in[0].ndim >= 0) MXW_CHECK(in[0].ndim == 2, "samples shape must have dim == 2, %d provided", in[0].ndim);
  if (in[1].ndim >= 0) MXW_CHECK(in[1].ndim >= 2, "matches shape must have dim == 2, %d provided", in[1].ndim);
  if (in[3].ndim >= 0) {
    MXW_CHECK(in[3].ndim >= 3, "refs shape must have dim == 3, %d provided", in[3].ndim);
    const int64_t d = in[3].dims[in[3].ndim - 1];
    MXW_CHECK(d < 0 || d == 4, "last dimension of refs must be 4, %lld provided", (long long)d);
  }
  if (in[2].ndim < 0) return 0;
  MXW_CHECK(in[2].ndim >= 3, "anchors shape must have dim == 3, %d provided", in[2].ndim);
  const int64_t d = in[2].dims[in[2].ndim - 1];
  MXW_CHECK(d < 0 || d == 4, "last dimension of anchors must be 4, %lld provided", (long long)d);
  MXW_TRY(mxw_shape_assign(&out[0], &in[2], "targets"));
  return mxw_shape_assign(&out[1], &in[2], "masks");
}

static int fwd_box_encode(const mxw_op_call *c) {
  const mxw_tensor *samples = &c->inputs[0], *matches = &c->inputs[1], *anchors = &c->inputs[2], *refs = &c->inputs[3];
  const mxw_tensor *means = &c->inputs[4], *stds = &c->inputs[5];
  const int64_t B = anchors->shape.dims[0], N = anchors->shape.dims[1], M = refs->shape.dims[1];
  int ct;
  MXW_TRY(det_compute_type("box_encode", anchors->dtype, &ct));
  MXW_CHECK(mxw_tensor_size(samples) == B * N && mxw_tensor_size(matches) == B * N &&
                mxw_tensor_size(anchors) == B * N * 4 && mxw_tensor_size(refs) == B * M * 4,
            "box_encode: samples and matches must hold (B, N) = (%lld, %lld) values, anchors (B, N, 4) and refs "
            "(B, M, 4)",
            (long long)B, (long long)N);
  double mean[4], std[4];
  for (int k = 0; k < 4; k++) {
    mean[k] = mxw_load_f64(means->data, means->dtype, k);
    std[k] = mxw_load_f64(stds->data, stds->dtype, k);
  }
  void *T = c->outputs[0].data, *Mk = c->outputs[1].data;
  const int ot = c->outputs[0].dtype, mt = c->outputs[1].dtype;
  for (int64_t i = 0; i < B * N; i++) {
    const int64_t j = i / N;
    const double valid = mxw_load_f64(samples->data, samples->dtype, i) > 0.5 ? 1.0 : 0.0;
    for (int k = 0; k < 4; k++) mxw_store_f64(Mk, mt, i * 4 + k, valid);
    if (valid < 0.5) {
      for (int k = 0; k < 4; k++) mxw_store_f64(T, ot, i * 4 + k, 0.0);
      continue;
    }
    const double mv = mxw_load_f64(matches->data, matches->dtype, i);
    MXW_CHECK(mv > -1 && mv < (double)M, "box_encode: matches[%lld] = %g is out of range [0, %lld)", (long long)i, mv,
              (long long)M);
    const int64_t m = (int64_t)mv, ri = (j * M + m) * 4;
    double rb[4], ab[4];
    for (int k = 0; k < 4; k++) {
      rb[k] = mxw_load_f64(refs->data, refs->dtype, ri + k);
      ab[k] = mxw_load_f64(anchors->data, anchors->dtype, i * 4 + k);
    }
    const double rw = rb[2] - rb[0], rh = rb[3] - rb[1], rx = rb[0] + rw * 0.5, ry = rb[1] + rh * 0.5;
    const double aw = ab[2] - ab[0], ah = ab[3] - ab[1], ax = ab[0] + aw * 0.5, ay = ab[1] + ah * 0.5;
    mxw_store_f64(T, ot, i * 4 + 0, ((rx - ax) / aw - mean[0]) / std[0]);
    mxw_store_f64(T, ot, i * 4 + 1, ((ry - ay) / ah - mean[1]) / std[1]);
    mxw_store_f64(T, ot, i * 4 + 2, (log(rw / aw) - mean[2]) / std[2]);
    mxw_store_f64(T, ot, i * 4 + 3, (log(rh / ah) - mean[3]) / std[3]);
  }
  return 0;
}

static const mxw_op_def op_box_encode = {
    .name = "_contrib_box_encode",
    .doc =
        MXW_DOC("encodes matched reference boxes as normalized center offsets from corner anchors: targets and masks"),
    .num_inputs = 6,
    .input_names = k_encode_inputs,
    .num_outputs = 2,
    .infer_shape = infer_box_encode,
    .forward = fwd_box_encode,
    .no_grad = 1,
};

/* ==== _contrib_box_decode ========================================================================= */
typedef struct {
  double std0, std1, std2, std3, clip;
  int format;
} DecodeParam;
static const mxw_attr_spec k_decode_attrs[] = {
    MXW_A_FLOAT("std0", DecodeParam, std0, "1", "value to be divided from the 1st encoded values"),
    MXW_A_FLOAT("std1", DecodeParam, std1, "1", "value to be divided from the 2nd encoded values"),
    MXW_A_FLOAT("std2", DecodeParam, std2, "1", "value to be divided from the 3rd encoded values"),
    MXW_A_FLOAT("std3", DecodeParam, std3, "1", "value to be divided from the 4th encoded values"),
    MXW_A_FLOAT("clip", DecodeParam, clip, "-1",
                "If larger than 0, bounding box target will be clipped to this value."),
    MXW_A_ENUM("format", DecodeParam, format, "center", k_formats,
               "The anchors' encoding type: corner [xmin, ymin, xmax, ymax] or center [x, y, width, height]."),
};
static const char *const k_decode_inputs[] = {"data", "anchors", NULL};

static int infer_box_decode(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param, (void)nin, (void)nout;
  if (in[1].ndim >= 0) {
    MXW_CHECK(in[1].ndim >= 3, "anchors shape must have dim == 3, %d provided", in[1].ndim);
    const int64_t d = in[1].dims[in[1].ndim - 1];
    MXW_CHECK(d < 0 || d == 4, "last dimension of anchors must be 4, %lld provided", (long long)d);
  }
  MXW_TRY(mxw_shape_assign(&in[0], &out[0], "data"));
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim == 3, "data shape must have dim == 3, %d provided", in[0].ndim);
  const int64_t d = in[0].dims[2];
  MXW_CHECK(d < 0 || d == 4, "last dimension of data must be 4, %lld provided", (long long)d);
  return mxw_shape_assign(&out[0], &in[0], "output");
}

static int fwd_box_decode(const mxw_op_call *c) {
  const DecodeParam *p = (const DecodeParam *)c->param;
  const mxw_tensor *x = &c->inputs[0], *a = &c->inputs[1];
  const int64_t B = x->shape.dims[0], N = x->shape.dims[1];
  int ct;
  MXW_TRY(det_compute_type("box_decode", x->dtype, &ct));
  MXW_CHECK(mxw_tensor_size(a) == N * 4, "box_decode: anchors must hold (1, N, 4) = (1, %lld, 4) values, got %lld",
            (long long)N, (long long)mxw_tensor_size(a));
  const double sd[4] = {(float)p->std0, (float)p->std1, (float)p->std2, (float)p->std3}, clip = (float)p->clip;
  for (int64_t i = 0; i < B * N; i++) {
    const int64_t ai = (i % N) * 4;
    double ax = mxw_load_f64(a->data, a->dtype, ai), ay = mxw_load_f64(a->data, a->dtype, ai + 1);
    double aw = mxw_load_f64(a->data, a->dtype, ai + 2), ah = mxw_load_f64(a->data, a->dtype, ai + 3);
    if (p->format == FMT_CORNER) {
      aw -= ax, ah -= ay;
      ax += aw * 0.5, ay += ah * 0.5;
    }
    double d[4];
    for (int k = 0; k < 4; k++) d[k] = mxw_load_f64(x->data, x->dtype, i * 4 + k) * sd[k];
    const double ox = d[0] * aw + ax, oy = d[1] * ah + ay;
    double dw = d[2], dh = d[3];
    if (p->clip > 0) {
      dw = dw < clip ? dw : clip;
      dh = dh < clip ? dh : clip;
    }
    const double ow = exp(dw) * aw * 0.5, oh = exp(dh) * ah * 0.5;
    mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, i * 4 + 0, ox - ow);
    mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, i * 4 + 1, oy - oh);
    mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, i * 4 + 2, ox + ow);
    mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, i * 4 + 3, oy + oh);
  }
  return 0;
}

static const mxw_op_def op_box_decode = {
    .name = "_contrib_box_decode",
    .doc = MXW_DOC("decodes (B, N, 4) center-offset predictions against (1, N, 4) anchors into corner boxes"),
    .attrs = k_decode_attrs,
    .num_attrs = NUM_ATTRS(k_decode_attrs),
    .param_size = sizeof(DecodeParam),
    .num_inputs = 2,
    .input_names = k_decode_inputs,
    .num_outputs = 1,
    .infer_shape = infer_box_decode,
    .forward = fwd_box_decode,
    .no_grad = 1,
};

MXW_FAMILY(contrib_bbox, &op_box_nms, &op_backward_box_nms, &op_box_iou, &op_bipartite_matching, &op_box_encode,
           &op_box_decode);
