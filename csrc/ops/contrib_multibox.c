/* contrib_multibox.c -- MXNet 1.9.1's SSD operators (src/operator/contrib/multibox_prior*,
 * multibox_detection*, multibox_target*):
 *
 *   _contrib_MultiBoxPrior (alias _npx_multibox_prior)(data (N, C, H, W); sizes, ratios, clip, steps,
 *       offsets) -> anchors (1, H * W * (len(sizes) + len(ratios) - 1), 4), corner format
 *   _contrib_MultiBoxDetection (alias _npx_multibox_detection)(cls_prob (B, C, A), loc_pred (B, A * 4),
 *       anchor (1, A, 4); clip, threshold, background_id, nms_threshold, force_suppress, variances,
 *       nms_topk) -> (B, A, 6) rows [id, score, xmin, ymin, xmax, ymax]
 *   _contrib_MultiBoxTarget (alias _npx_multibox_target)(anchor (1, A, 4), label (B, L, >= 5),
 *       cls_pred (B, C, A); overlap_threshold, ignore_label, negative_mining_ratio,
 *       negative_mining_thresh, minimum_negative_samples, variances) -> loc_target (B, A * 4),
 *       loc_mask (B, A * 4), cls_target (B, A)
 *
 * As MXNet's CPU code: MultiBoxPrior computes in float (sizes first with ratio[0], then the other
 * ratios with sizes[0]; steps <= 0 mean 1 / H and 1 / W). MultiBoxDetection takes each anchor's
 * best non-background class (ids shifted down by one; below `threshold` it is dropped), decodes
 * the box with the variances, moves the kept rows to the front, and -- when 0 < nms_threshold <= 1
 * -- sorts them by score (stable), marks rows past nms_topk with id -1 (their other columns keep
 * the unsorted values, as MXNet) and suppresses same-class (or any, with force_suppress) boxes of
 * IoU >= nms_threshold by setting their id to -1. Rows past the kept ones are all -1.
 * MultiBoxTarget matches ground truths to anchors greedily by IoU, then anchors above
 * overlap_threshold to their best ground truth, then picks negatives (all, or by hard negative
 * mining on the background softmax probability), and encodes the positives' locations in float.
 * background_id (MultiBoxDetection) and minimum_negative_samples (MultiBoxTarget) are accepted and
 * unused, as in MXNet's CPU code.
 *
 * Arithmetic runs in the data's type (float16 through float32). These are MXNet legacy operators
 * whose backward writes zero gradients: non-differentiable here. */
#include "det_common.h"

static const char *const k_data[] = {"data", NULL};

/* ==== _contrib_MultiBoxPrior ====================================================================== */
typedef struct {
  mxw_str sizes_s, ratios_s;
  int clip;
  mxw_str steps_s, offsets_s;
  float sizes[DET_MAX_FLOATS], ratios[DET_MAX_FLOATS], steps[DET_MAX_FLOATS], offsets[DET_MAX_FLOATS];
  int nsizes, nratios, nsteps, noffsets;
} PriorParam;

static const mxw_attr_spec k_prior_attrs[] = {
    MXW_A_STRING("sizes", PriorParam, sizes_s, "[1]", "List of sizes of generated MultiBoxPriores."),
    MXW_A_STRING("ratios", PriorParam, ratios_s, "[1]", "List of aspect ratios of generated MultiBoxPriores."),
    MXW_A_BOOL("clip", PriorParam, clip, "False", "Whether to clip out-of-boundary boxes."),
    MXW_A_STRING("steps", PriorParam, steps_s, "[-1,-1]", "Priorbox step across y and x, -1 for auto calculation."),
    MXW_A_STRING("offsets", PriorParam, offsets_s, "[0.5,0.5]", "Priorbox center offsets, y and x respectively"),
};

static int validate_prior(void *param) {
  PriorParam *p = (PriorParam *)param;
  MXW_TRY(det_parse_floats("sizes", p->sizes_s.s, p->sizes, &p->nsizes));
  MXW_TRY(det_parse_floats("ratios", p->ratios_s.s, p->ratios, &p->nratios));
  MXW_TRY(det_parse_floats("steps", p->steps_s.s, p->steps, &p->nsteps));
  MXW_TRY(det_parse_floats("offsets", p->offsets_s.s, p->offsets, &p->noffsets));
  MXW_CHECK(p->nsizes > 0, "MultiBoxPrior: sizes must not be empty");
  MXW_CHECK(p->nratios > 0, "MultiBoxPrior: ratios must not be empty");
  MXW_CHECK(p->nsteps == 2, "Step ndim must be 2: (step_y, step_x)");
  MXW_CHECK(p->noffsets == 2, "MultiBoxPrior: offsets must have 2 elements (y, x), got %d", p->noffsets);
  for (int k = 0; k < 2; k++)
    MXW_CHECK(p->offsets[k] >= 0.f && p->offsets[k] <= 1.f, "MultiBoxPrior: offsets[%d] = %g is out of range [0, 1]", k,
              (double)p->offsets[k]);
  MXW_CHECK(p->steps[0] * p->steps[1] >= 0, "Must specify both step_y and step_x");
  return 0;
}

static int infer_prior(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin, (void)nout;
  const PriorParam *p = (const PriorParam *)param;
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim >= 4, "Input data should be 4D: batch-channel-y-x");
  const int64_t h = in[0].dims[2], w = in[0].dims[3];
  if (h < 0 || w < 0) return 0;
  MXW_CHECK(h > 0, "Input height should > 0");
  MXW_CHECK(w > 0, "Input width should > 0");
  const int64_t dims[3] = {1, h * w * (p->nsizes + p->nratios - 1), 4};
  const mxw_shape o = mxw_shape_make(3, dims);
  return mxw_shape_assign(&out[0], &o, "output");
}

static int fwd_prior(const mxw_op_call *c) {
  const PriorParam *p = (const PriorParam *)c->param;
  mxw_tensor *y = &c->outputs[0];
  int ct;
  MXW_TRY(det_compute_type("MultiBoxPrior", y->dtype, &ct));
  const int H = (int)c->inputs[0].shape.dims[2], W = (int)c->inputs[0].shape.dims[3];
  float step_y = p->steps[0], step_x = p->steps[1];
  if (step_y <= 0 || step_x <= 0) step_y = 1.f / H, step_x = 1.f / W;
  int64_t count = 0;
  float b[4];
#define PUT_BOX()                                                 \
  do {                                                            \
    for (int k = 0; k < 4; k++) {                                 \
      float v = b[k];                                             \
      if (p->clip) v = v < 0.f ? 0.f : (v > 1.f ? 1.f : v);       \
      mxw_store_f64(y->data, y->dtype, count * 4 + k, (double)v); \
    }                                                             \
    count++;                                                      \
  } while (0)
  for (int r = 0; r < H; r++) {
    const float cy = (r + p->offsets[0]) * step_y;
    for (int col = 0; col < W; col++) {
      const float cx = (col + p->offsets[1]) * step_x;
      /* the first ratio with every size */
      const float ratio = sqrtf(p->ratios[0]);
      for (int i = 0; i < p->nsizes; i++) {
        const float size = p->sizes[i];
        const float w = size * H / W * ratio / 2, h = size / ratio / 2;
        b[0] = cx - w, b[1] = cy - h, b[2] = cx + w, b[3] = cy + h;
        PUT_BOX();
      }
      /* the other ratios with sizes[0] */
      const float size = p->sizes[0];
      for (int j = 1; j < p->nratios; j++) {
        const float rr = sqrtf(p->ratios[j]);
        const float w = size * H / W * rr / 2, h = size / rr / 2;
        b[0] = cx - w, b[1] = cy - h, b[2] = cx + w, b[3] = cy + h;
        PUT_BOX();
      }
    }
  }
#undef PUT_BOX
  return 0;
}

static const mxw_op_def op_MultiBoxPrior = {
    .name = "_contrib_MultiBoxPrior",
    .aliases = ALIASES("_npx_multibox_prior"),
    .doc = MXW_DOC("prior (anchor) boxes for every cell of a feature map, from sizes and aspect ratios"),
    .attrs = k_prior_attrs,
    .num_attrs = NUM_ATTRS(k_prior_attrs),
    .param_size = sizeof(PriorParam),
    .validate = validate_prior,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_prior,
    .forward = fwd_prior,
    .no_grad = 1,
};

/* ==== _contrib_MultiBoxDetection ================================================================== */
typedef struct {
  int clip;
  double threshold;
  int64_t background_id;
  double nms_threshold;
  int force_suppress;
  mxw_str variances_s;
  int64_t nms_topk;
  float variances[DET_MAX_FLOATS];
  int nvariances;
} DetParam;

static const mxw_attr_spec k_det_attrs[] = {
    MXW_A_BOOL("clip", DetParam, clip, "True", "Clip out-of-boundary boxes."),
    MXW_A_FLOAT("threshold", DetParam, threshold, "0.01", "Threshold to be a positive prediction."),
    MXW_A_INT("background_id", DetParam, background_id, "0", "Background id."),
    MXW_A_FLOAT("nms_threshold", DetParam, nms_threshold, "0.5", "Non-maximum suppression threshold."),
    MXW_A_BOOL("force_suppress", DetParam, force_suppress, "False", "Suppress all detections regardless of class_id."),
    MXW_A_STRING("variances", DetParam, variances_s, "[0.1,0.1,0.2,0.2]",
                 "Variances to be decoded from box regression output."),
    MXW_A_INT("nms_topk", DetParam, nms_topk, "-1", "Keep maximum top k detections before nms, -1 for no limit."),
};

static int validate_variances(const char *text, float *v, int *n) {
  MXW_TRY(det_parse_floats("variances", text, v, n));
  MXW_CHECK(*n == 4, "Variance size must be 4");
  return 0;
}
static int validate_det(void *param) {
  DetParam *p = (DetParam *)param;
  return validate_variances(p->variances_s.s, p->variances, &p->nvariances);
}

static const char *const k_det_inputs[] = {"cls_prob", "loc_pred", "anchor", NULL};

static int infer_det(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param, (void)nin, (void)nout;
  const mxw_shape *cs = &in[0], *ls = &in[1], *as = &in[2];
  if (cs->ndim < 0 || ls->ndim < 0 || as->ndim < 0) return 0;
  shape_buf b;
  MXW_CHECK(cs->ndim == 3, "Provided: %s (cls_prob must be (batch, num_classes, num_anchors))", SHAPE_STR(cs, b));
  MXW_CHECK(ls->ndim == 2, "Provided: %s (loc_pred must be (batch, num_anchors * 4))", SHAPE_STR(ls, b));
  MXW_CHECK(as->ndim == 3, "Provided: %s (anchor must be (1, num_anchors, 4))", SHAPE_STR(as, b));
  MXW_CHECK(cs->dims[2] == as->dims[1], "Number of anchors mismatch");
  MXW_CHECK(cs->dims[2] * 4 == ls->dims[1], "# anchors mismatch with # loc");
  MXW_CHECK(as->dims[1] > 0, "Number of anchors must > 0");
  MXW_CHECK(as->dims[2] == 4, "anchor must be (1, num_anchors, 4), got %s", SHAPE_STR(as, b));
  const int64_t dims[3] = {cs->dims[0], as->dims[1], 6};
  const mxw_shape o = mxw_shape_make(3, dims);
  return mxw_shape_assign(&out[0], &o, "output");
}

typedef struct {
  const void *rows; /* the compacted rows (stride 6) */
} det_sort_ctx;

#define DEF_DETECTION(T, S, EXP)                                                                               \
  /* TransformLocations: decode one anchor's offsets into a corner box (clipped to [0, 1]) */                  \
  static void det_transform_##S(T *o, const T *a, const T *l, int clip, const float *v) {                      \
    const T aw = a[2] - a[0], ah = a[3] - a[1], ax = (a[0] + a[2]) / 2.f, ay = (a[1] + a[3]) / 2.f;            \
    const T ox = l[0] * v[0] * aw + ax, oy = l[1] * v[1] * ah + ay;                                            \
    const T ow = EXP(l[2] * v[2]) * aw / 2, oh = EXP(l[3] * v[3]) * ah / 2;                                    \
    const T r[4] = {ox - ow, oy - oh, ox + ow, oy + oh};                                                       \
    for (int k = 0; k < 4; k++) o[k] = clip ? (r[k] < 1 ? (r[k] > 0 ? r[k] : (T)0) : (T)1) : r[k];             \
  }                                                                                                            \
  /* CalculateOverlap: IoU, 0 when the union is not positive */                                                \
  static T det_overlap_##S(const T *a, const T *b) {                                                           \
    T w = (a[2] < b[2] ? a[2] : b[2]) - (a[0] > b[0] ? a[0] : b[0]);                                           \
    T h = (a[3] < b[3] ? a[3] : b[3]) - (a[1] > b[1] ? a[1] : b[1]);                                           \
    w = w > 0 ? w : (T)0;                                                                                      \
    h = h > 0 ? h : (T)0;                                                                                      \
    const T i = w * h, u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i;                  \
    return u <= 0.f ? (T)0 : i / u;                                                                            \
  }                                                                                                            \
  static int det_cmp_##S(const void *ctx, int32_t a, int32_t b) {                                              \
    const T *r = (const T *)((const det_sort_ctx *)ctx)->rows;                                                 \
    const T sa = r[a * 6 + 1], sb = r[b * 6 + 1];                                                              \
    return sa > sb ? -1 : (sb > sa ? 1 : 0);                                                                   \
  }                                                                                                            \
  /* rows: A * 6 scratch; tmp: A * 6 (the compacted copy); idx, itmp: A int32 */                               \
  static void detection_##S(const T *cls, const T *loc, const T *anc, T *out, int64_t B, int64_t C, int64_t A, \
                            const DetParam *p, T *rows, T *tmp, int32_t *idx, int32_t *itmp) {                 \
    const T thr = (T)(float)p->threshold;                                                                      \
    const float nms = (float)p->nms_threshold;                                                                 \
    for (int64_t i = 0; i < B * A * 6; i++) out[i] = (T)-1;                                                    \
    for (int64_t n = 0; n < B; n++) {                                                                          \
      const T *pc = cls + n * C * A, *pl = loc + n * A * 4;                                                    \
      T *po = out + n * A * 6;                                                                                 \
      for (int64_t i = 0; i < A; i++) {                                                                        \
        T score = -1;                                                                                          \
        int64_t id = 0;                                                                                        \
        for (int64_t j = 1; j < C; j++) {                                                                      \
          const T t = pc[j * A + i];                                                                           \
          if (t > score) score = t, id = j;                                                                    \
        }                                                                                                      \
        if (id > 0 && score < thr) id = 0;                                                                     \
        rows[i * 6] = (T)(id - 1);                                                                             \
        rows[i * 6 + 1] = score;                                                                               \
        det_transform_##S(rows + i * 6 + 2, anc + i * 4, pl + i * 4, p->clip, p->variances);                   \
      }                                                                                                        \
      int64_t valid = 0;                                                                                       \
      for (int64_t i = 0; i < A; i++)                                                                          \
        if (rows[i * 6] >= 0) memcpy(po + 6 * valid++, rows + i * 6, 6 * sizeof(T));                           \
      if (valid < 1 || nms <= 0 || nms > 1) continue;                                                          \
      memcpy(tmp, po, (size_t)(valid * 6) * sizeof(T));                                                        \
      for (int64_t i = 0; i < valid; i++) idx[i] = (int32_t)i;                                                 \
      det_sort_ctx ctx = {tmp};                                                                                \
      det_stable_sort(idx, itmp, valid, det_cmp_##S, &ctx);                                                    \
      int64_t keep = valid;                                                                                    \
      if (p->nms_topk > 0 && p->nms_topk < keep) {                                                             \
        keep = p->nms_topk;                                                                                    \
        for (int64_t i = keep; i < valid; i++) po[i * 6] = -1;                                                 \
      }                                                                                                        \
      for (int64_t i = 0; i < keep; i++) memcpy(po + i * 6, tmp + (int64_t)idx[i] * 6, 6 * sizeof(T));         \
      for (int64_t i = 0; i < keep; i++) {                                                                     \
        if (po[i * 6] < 0) continue;                                                                           \
        for (int64_t j = i + 1; j < keep; j++) {                                                               \
          if (po[j * 6] < 0) continue;                                                                         \
          if (p->force_suppress || po[i * 6] == po[j * 6]) {                                                   \
            if (det_overlap_##S(po + i * 6 + 2, po + j * 6 + 2) >= nms) po[j * 6] = -1;                        \
          }                                                                                                    \
        }                                                                                                      \
      }                                                                                                        \
    }                                                                                                          \
  }

DEF_DETECTION(float, f32, expf)
DEF_DETECTION(double, f64, exp)

static int fwd_det(const mxw_op_call *c) {
  const DetParam *p = (const DetParam *)c->param;
  const mxw_shape *cs = &c->inputs[0].shape;
  const int64_t B = cs->dims[0], C = cs->dims[1], A = cs->dims[2];
  MXW_CHECK(mxw_tensor_size(&c->inputs[2]) == A * 4, "MultiBoxDetection: anchor must hold (1, %lld, 4) values",
            (long long)A);
  MXW_CHECK(A < INT32_MAX, "MultiBoxDetection: too many anchors");
  det_view v;
  MXW_TRY(det_view_begin(c, "MultiBoxDetection", c->inputs[0].dtype, &v));
  for (int i = 1; i < 3; i++)
    if (v.in[i].dtype != v.dtype) {
      det_view_free(&v);
      return mxw_fail("MultiBoxDetection: every input must have the dtype of cls_prob (%s), got %s",
                      mxw_dtype_name(c->inputs[0].dtype), mxw_dtype_name(c->inputs[i].dtype));
    }
  const size_t es = v.dtype == MXW_FLOAT32 ? sizeof(float) : sizeof(double);
  void *rows = det_alloc("MultiBoxDetection", A * 6, es);
  void *tmp = rows ? det_alloc("MultiBoxDetection", A * 6, es) : NULL;
  int32_t *idx = tmp ? (int32_t *)det_alloc("MultiBoxDetection", A, sizeof(int32_t)) : NULL;
  int32_t *itmp = idx ? (int32_t *)det_alloc("MultiBoxDetection", A, sizeof(int32_t)) : NULL;
  const int rc = itmp ? 0 : -1;
  if (rc == 0) {
    if (v.dtype == MXW_FLOAT32)
      detection_f32((const float *)v.in[0].data, (const float *)v.in[1].data, (const float *)v.in[2].data,
                    (float *)v.out[0].data, B, C, A, p, (float *)rows, (float *)tmp, idx, itmp);
    else
      detection_f64((const double *)v.in[0].data, (const double *)v.in[1].data, (const double *)v.in[2].data,
                    (double *)v.out[0].data, B, C, A, p, (double *)rows, (double *)tmp, idx, itmp);
  }
  free(rows), free(tmp), free(idx), free(itmp);
  return det_view_end(c, &v, rc);
}

static const mxw_op_def op_MultiBoxDetection = {
    .name = "_contrib_MultiBoxDetection",
    .aliases = ALIASES("_npx_multibox_detection"),
    .doc =
        MXW_DOC("SSD detections from class probabilities, box offsets and anchors: rows [id, score, xmin, ymin, xmax, "
                "ymax] sorted by score after non-maximum suppression"),
    .attrs = k_det_attrs,
    .num_attrs = NUM_ATTRS(k_det_attrs),
    .param_size = sizeof(DetParam),
    .validate = validate_det,
    .num_inputs = 3,
    .input_names = k_det_inputs,
    .num_outputs = 1,
    .infer_shape = infer_det,
    .forward = fwd_det,
    .no_grad = 1,
};

/* ==== _contrib_MultiBoxTarget ===================================================================== */
typedef struct {
  double overlap_threshold, ignore_label, negative_mining_ratio, negative_mining_thresh;
  int64_t minimum_negative_samples;
  mxw_str variances_s;
  float variances[DET_MAX_FLOATS];
  int nvariances;
} TargetParam;

static const mxw_attr_spec k_target_attrs[] = {
    MXW_A_FLOAT("overlap_threshold", TargetParam, overlap_threshold, "0.5",
                "Anchor-GT overlap threshold to be regarded as a positive match."),
    MXW_A_FLOAT("ignore_label", TargetParam, ignore_label, "-1", "Label for ignored anchors."),
    MXW_A_FLOAT("negative_mining_ratio", TargetParam, negative_mining_ratio, "-1",
                "Max negative to positive samples ratio, use -1 to disable mining"),
    MXW_A_FLOAT("negative_mining_thresh", TargetParam, negative_mining_thresh, "0.5",
                "Threshold used for negative mining."),
    MXW_A_INT("minimum_negative_samples", TargetParam, minimum_negative_samples, "0",
              "Minimum number of negative samples."),
    MXW_A_STRING("variances", TargetParam, variances_s, "[0.1,0.1,0.2,0.2]",
                 "Variances to be encoded in box regression target."),
};
static int validate_target(void *param) {
  TargetParam *p = (TargetParam *)param;
  return validate_variances(p->variances_s.s, p->variances, &p->nvariances);
}

static const char *const k_target_inputs[] = {"anchor", "label", "cls_pred", NULL};
static const char *const k_target_outputs[] = {"loc_target", "loc_mask", "cls_target", NULL};

static int infer_target(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param, (void)nin, (void)nout;
  const mxw_shape *as = &in[0], *ls = &in[1], *ps = &in[2];
  if (as->ndim < 0 || ls->ndim < 0 || ps->ndim < 0) return 0;
  MXW_CHECK(as->ndim == 3, "Anchor should be batch shared N*4 tensor");
  MXW_CHECK(as->dims[0] == 1, "Anchors are shared across batches, first dimension should be 1");
  MXW_CHECK(as->dims[1] > 0, "Number boxes should be greater than 0");
  MXW_CHECK(as->dims[2] == 4, "Box dimension should be 4: [xmin, ymin, xmax, ymax]");
  MXW_CHECK(ls->ndim == 3, "Label should be [batch, num_labels, label_width] tensor");
  MXW_CHECK(ls->dims[1] > 0, "Padded label should be greater than 0");
  MXW_CHECK(ls->dims[2] >= 5, "Label width should be greater than or equal to 5");
  MXW_CHECK(ps->ndim == 3, "Prediction: [batch, num_classes, num_anchors]");
  MXW_CHECK(ps->dims[2] == as->dims[1], "Number of anchors mismatch");
  MXW_CHECK(ps->dims[0] == ls->dims[0], "cls_pred has batch size %lld but label has %lld", (long long)ps->dims[0],
            (long long)ls->dims[0]);
  const int64_t loc[2] = {ls->dims[0], as->dims[1] * 4}, cls[2] = {ls->dims[0], as->dims[1]};
  const mxw_shape l = mxw_shape_make(2, loc), c = mxw_shape_make(2, cls);
  MXW_TRY(mxw_shape_assign(&out[0], &l, "loc_target"));
  MXW_TRY(mxw_shape_assign(&out[1], &l, "loc_mask"));
  return mxw_shape_assign(&out[2], &c, "cls_target");
}

typedef struct {
  const float *v;
} tgt_sort_ctx;
static int tgt_cmp(const void *ctx, int32_t a, int32_t b) {
  const float *v = ((const tgt_sort_ctx *)ctx)->v;
  return v[a] > v[b] ? -1 : (v[b] > v[a] ? 1 : 0);
}

/* AssignLocTargets: the ground truth's center offsets from the anchor, in float */
static void assign_loc(const float *a, const float *g, float *dst, const float *var) {
  const float aw = a[2] - a[0], ah = a[3] - a[1], ax = (a[0] + a[2]) * 0.5f, ay = (a[1] + a[3]) * 0.5f;
  const float gw = g[2] - g[0], gh = g[3] - g[1], gx = (g[0] + g[2]) * 0.5f, gy = (g[1] + g[3]) * 0.5f;
  dst[0] = (gx - ax) / aw / var[0];
  dst[1] = (gy - ay) / ah / var[1];
  dst[2] = logf(gw / aw) / var[2];
  dst[3] = logf(gh / ah) / var[3];
}

/* Per batch work: ov (A * G floats: anchor-major IoUs), match (A), mval (A floats), flags (A), neg
 * (A floats) and its index lists. */
typedef struct {
  float *ov, *mval, *negv;
  int64_t *match;
  signed char *flags;
  int32_t *nidx, *nitmp;
  float *labels; /* G * 5 of this batch's (id, box) as DType-then-float values */
} tgt_work;

#define DEF_TARGET(T, S, EXP)                                                                              \
  /* the IoUs of every anchor with the batch's first G labels, in T, then as float (MXNet's temp_space) */ \
  static void tgt_overlaps_##S(const T *anc, const T *lab, int64_t A, int64_t G, int64_t LW, float *ov) {  \
    for (int64_t j = 0; j < A; j++) {                                                                      \
      const T *a = anc + j * 4;                                                                            \
      for (int64_t k = 0; k < G; k++) {                                                                    \
        const T *g = lab + k * LW + 1;                                                                     \
        T w = (a[2] < g[2] ? a[2] : g[2]) - (a[0] > g[0] ? a[0] : g[0]);                                   \
        T h = (a[3] < g[3] ? a[3] : g[3]) - (a[1] > g[1] ? a[1] : g[1]);                                   \
        const T inter = (w > 0 ? w : (T)0) * (h > 0 ? h : (T)0);                                           \
        const T uni = (a[2] - a[0]) * (a[3] - a[1]) + (g[2] - g[0]) * (g[3] - g[1]) - inter;               \
        ov[j * G + k] = (float)(uni == 0 ? (T)0 : inter / uni);                                            \
      }                                                                                                    \
    }                                                                                                      \
  }                                                                                                        \
  /* the background probability of anchor j: softmax over the classes, in T */                             \
  static float tgt_bg_prob_##S(const T *pred, int64_t A, int64_t C, int64_t j) {                           \
    T mx = pred[j];                                                                                        \
    for (int64_t k = 1; k < C; k++)                                                                        \
      if (pred[j + A * k] > mx) mx = pred[j + A * k];                                                      \
    T sum = 0;                                                                                             \
    for (int64_t k = 0; k < C; k++) sum += EXP(pred[j + A * k] - mx);                                      \
    return (float)(EXP(pred[j] - mx) / sum);                                                               \
  }

DEF_TARGET(float, f32, expf)
DEF_TARGET(double, f64, exp)

static int fwd_target(const mxw_op_call *c) {
  const TargetParam *p = (const TargetParam *)c->param;
  const int64_t A = c->inputs[0].shape.dims[1], B = c->inputs[1].shape.dims[0], L = c->inputs[1].shape.dims[1];
  const int64_t LW = c->inputs[1].shape.dims[2], C = c->inputs[2].shape.dims[1];
  det_view v;
  MXW_TRY(det_view_begin(c, "MultiBoxTarget", c->inputs[0].dtype, &v));
  const int f32 = v.dtype == MXW_FLOAT32;
  tgt_work w = {0};
  w.ov = (float *)det_alloc("MultiBoxTarget", A * L, sizeof(float));
  w.mval = w.ov ? (float *)det_alloc("MultiBoxTarget", A, sizeof(float)) : NULL;
  w.negv = w.mval ? (float *)det_alloc("MultiBoxTarget", A, sizeof(float)) : NULL;
  w.match = w.negv ? (int64_t *)det_alloc("MultiBoxTarget", A, sizeof(int64_t)) : NULL;
  w.flags = w.match ? (signed char *)det_alloc("MultiBoxTarget", A, 1) : NULL;
  w.nidx = w.flags ? (int32_t *)det_alloc("MultiBoxTarget", A, sizeof(int32_t)) : NULL;
  w.nitmp = w.nidx ? (int32_t *)det_alloc("MultiBoxTarget", A, sizeof(int32_t)) : NULL;
  unsigned char *gtf = w.nitmp ? (unsigned char *)det_alloc("MultiBoxTarget", L, 1) : NULL;
  float *anc = gtf ? (float *)det_alloc("MultiBoxTarget", A * 4, sizeof(float)) : NULL;
  int rc = anc ? 0 : -1;
  for (int i = 0; rc == 0 && i < 3; i++)
    if (v.in[i].dtype != v.dtype)
      rc = mxw_fail("MultiBoxTarget: every input must have the dtype of anchor (%s), got %s",
                    mxw_dtype_name(c->inputs[0].dtype), mxw_dtype_name(c->inputs[i].dtype));
  const void *anchors = v.in[0].data, *labels = v.in[1].data, *preds = v.in[2].data;
  void *loc_t = v.out[0].data, *loc_m = v.out[1].data, *cls_t = v.out[2].data;
  const int dt = v.dtype;
  if (rc == 0) {
    for (int64_t i = 0; i < A * 4; i++) anc[i] = (float)mxw_load_f64(anchors, dt, i);
    for (int64_t i = 0; i < B * A * 4; i++) mxw_store_f64(loc_t, dt, i, 0), mxw_store_f64(loc_m, dt, i, 0);
    for (int64_t i = 0; i < B * A; i++) mxw_store_f64(cls_t, dt, i, (double)(float)p->ignore_label);
  }
  const float othr = (float)p->overlap_threshold, nratio = (float)p->negative_mining_ratio;
  const float nthr = (float)p->negative_mining_thresh;
  for (int64_t n = 0; rc == 0 && n < B; n++) {
    const int64_t lab0 = n * L * LW;
    /* the valid ground truths: up to the first row whose id is -1 (all of whose box must be -1) */
    int64_t G = 0;
    for (; G < L; G++) {
      if ((float)mxw_load_f64(labels, dt, lab0 + G * LW) != -1.0f) continue;
      for (int k = 1; k < 5; k++)
        if ((float)mxw_load_f64(labels, dt, lab0 + G * LW + k) != -1.0f) {
          rc = mxw_fail("MultiBoxTarget: label row %lld of batch %lld has id -1 (padding) but its box is not all -1",
                        (long long)G, (long long)n);
          break;
        }
      break;
    }
    if (rc != 0 || G == 0) continue;
    if (f32)
      tgt_overlaps_f32((const float *)anchors, (const float *)labels + lab0, A, G, LW, w.ov);
    else
      tgt_overlaps_f64((const double *)anchors, (const double *)labels + lab0, A, G, LW, w.ov);
    for (int64_t j = 0; j < A; j++) w.mval[j] = -1.0f, w.match[j] = -1, w.flags[j] = -1;
    memset(gtf, 0, (size_t)G);
    int64_t npos = 0, nmatched = 0;
    /* greedy: the best remaining (anchor, ground truth) pair until every ground truth is matched */
    while (nmatched < G) {
      int64_t ba = -1, bg = -1;
      float best = 1e-6f;
      for (int64_t j = 0; j < A; j++) {
        if (w.flags[j] == 1) continue;
        for (int64_t k = 0; k < G; k++) {
          if (gtf[k]) continue;
          if (w.ov[j * G + k] > best) ba = j, bg = k, best = w.ov[j * G + k];
        }
      }
      if (ba == -1) break;
      w.mval[ba] = best, w.match[ba] = bg;
      npos++, nmatched++;
      gtf[bg] = 1;
      w.flags[ba] = 1;
    }
    /* every other anchor: its best ground truth, positive above overlap_threshold */
#define BEST_GT(j, bestk, bestv)                                       \
  do {                                                                 \
    bestk = -1, bestv = -1.0f;                                         \
    for (int64_t k = 0; k < G; k++)                                    \
      if (w.ov[(j)*G + k] > bestv) bestk = k, bestv = w.ov[(j)*G + k]; \
  } while (0)
    if (othr > 0) {
      for (int64_t j = 0; j < A; j++) {
        if (w.flags[j] == 1) continue;
        int64_t bk;
        float bv;
        BEST_GT(j, bk, bv);
        if (bk == -1) continue;
        w.mval[j] = bv, w.match[j] = bk;
        if (bv > othr) {
          npos++;
          if (!gtf[bk]) gtf[bk] = 1, nmatched++;
          w.flags[j] = 1;
        }
      }
    }
    if (nratio > 0) {
      if (!(nthr > 0)) {
        rc = mxw_fail("MultiBoxTarget: negative_mining_thresh must be > 0 with negative mining, got %g", (double)nthr);
        break;
      }
      int64_t nneg = (int64_t)(int)((float)npos * nratio);
      if (nneg > A - npos) nneg = A - npos;
      if (nneg > 0) {
        /* hard negatives: the anchors least confident of background, among those below the threshold */
        int64_t cnt = 0;
        for (int64_t j = 0; j < A; j++) {
          if (w.flags[j] == 1) continue;
          if (w.mval[j] < 0) {
            int64_t bk;
            float bv;
            BEST_GT(j, bk, bv);
            if (bk != -1) w.mval[j] = bv, w.match[j] = bk;
          }
          if (w.mval[j] < nthr && w.flags[j] == -1) {
            const float prob = f32 ? tgt_bg_prob_f32((const float *)preds + n * C * A, A, C, j)
                                   : tgt_bg_prob_f64((const double *)preds + n * C * A, A, C, j);
            w.negv[cnt] = -prob;
            w.nidx[cnt] = (int32_t)j;
            cnt++;
          }
        }
        if (cnt < nneg) {
          rc = mxw_fail("MultiBoxTarget: %lld negative samples wanted, only %lld anchors qualify", (long long)nneg,
                        (long long)cnt);
          break;
        }
        /* stable sort of the candidates by -prob descending (positions into negv) */
        int32_t *order = w.nitmp;
        for (int64_t i = 0; i < cnt; i++) order[i] = (int32_t)i;
        int32_t *tmp = (int32_t *)det_alloc("MultiBoxTarget", cnt, sizeof(int32_t));
        if (!tmp) {
          rc = -1;
          break;
        }
        tgt_sort_ctx ctx = {w.negv};
        det_stable_sort(order, tmp, cnt, tgt_cmp, &ctx);
        free(tmp);
        for (int64_t i = 0; i < nneg; i++) w.flags[w.nidx[order[i]]] = 0;
      }
    } else {
      for (int64_t j = 0; j < A; j++)
        if (w.flags[j] != 1) w.flags[j] = 0;
    }
#undef BEST_GT
    /* the targets */
    for (int64_t j = 0; j < A; j++) {
      if (w.flags[j] == 1) {
        const int64_t g = lab0 + w.match[j] * LW;
        mxw_store_f64(cls_t, dt, n * A + j, mxw_load_f64(labels, dt, g) + 1);
        float gb[4], t[4];
        for (int k = 0; k < 4; k++) gb[k] = (float)mxw_load_f64(labels, dt, g + 1 + k);
        assign_loc(anc + j * 4, gb, t, p->variances);
        for (int k = 0; k < 4; k++) {
          mxw_store_f64(loc_m, dt, (n * A + j) * 4 + k, 1);
          mxw_store_f64(loc_t, dt, (n * A + j) * 4 + k, (double)t[k]);
        }
      } else if (w.flags[j] == 0) {
        mxw_store_f64(cls_t, dt, n * A + j, 0);
      }
    }
  }
  free(w.ov), free(w.mval), free(w.negv), free(w.match), free(w.flags), free(w.nidx), free(w.nitmp), free(gtf);
  free(anc);
  return det_view_end(c, &v, rc);
}

static const mxw_op_def op_MultiBoxTarget = {
    .name = "_contrib_MultiBoxTarget",
    .aliases = ALIASES("_npx_multibox_target"),
    .doc = MXW_DOC("SSD training targets: anchors matched to ground-truth boxes, location targets and masks, class "
                   "targets with (optionally mined) negatives"),
    .attrs = k_target_attrs,
    .num_attrs = NUM_ATTRS(k_target_attrs),
    .param_size = sizeof(TargetParam),
    .validate = validate_target,
    .num_inputs = 3,
    .input_names = k_target_inputs,
    .num_outputs = 3,
    .output_names = k_target_outputs,
    .infer_shape = infer_target,
    .forward = fwd_target,
    .no_grad = 1,
};

MXW_FAMILY(contrib_multibox, &op_MultiBoxPrior, &op_MultiBoxDetection, &op_MultiBoxTarget);
