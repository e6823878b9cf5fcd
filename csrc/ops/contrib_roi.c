/* contrib_roi.c -- MXNet 1.9.1's region-of-interest operators (src/operator/contrib/roi_align.cc,
 * src/operator/roi_pooling.cc, src/operator/contrib/psroi_pooling.cc, proposal.cc,
 * multi_proposal.cc):
 *
 *   _contrib_ROIAlign(data (N, C, H, W), rois (R, 5); pooled_size, spatial_scale, sample_ratio,
 *       position_sensitive, aligned) -> (R, C or C / (ph * pw), ph, pw)
 *   ROIPooling (alias _npx_roi_pooling)(data, rois; pooled_size, spatial_scale) -> (R, C, ph, pw),
 *       hidden maxidx (int32, the argmax of each cell) for the gradient
 *   _contrib_PSROIPooling(data, rois; spatial_scale, output_dim, pooled_size, group_size)
 *       -> (R, output_dim, pooled_size, pooled_size)
 *   _contrib_Proposal / _contrib_MultiProposal(cls_prob (B, 2A, H, W), bbox_pred (B, 4A, H, W),
 *       im_info (B, 3); rpn_pre_nms_top_n, rpn_post_nms_top_n, threshold, rpn_min_size, scales,
 *       ratios, feature_stride, output_score, iou_loss) -> rois (B * post, 5) [, scores (B * post, 1)]
 *
 * Each rois row is [batch_index, x1, y1, x2, y2] in image coordinates (times spatial_scale on the
 * feature map). The kernels follow MXNet's CPU code operation by operation in the data's type
 * (float16 through float32; Proposal is float32 only, as MXNet's):
 *   ROIAlign: bins of (roi size / pooled size), each the mean of a sample_ratio^2 grid (adaptive:
 *     ceil(roi size / pooled size) per side) of bilinear samples; samples more than one pixel
 *     outside the map count as 0; aligned shifts by half a pixel (Detectron2) and needs positive
 *     sizes, otherwise a roi is at least 1x1; position_sensitive reads channel
 *     (c * ph + i) * pw + j for bin (i, j). A roi with a negative batch index gives zeros. The
 *     forward merges each bin's taps that fall on the same pixel (weights added) before the
 *     channel loop: MXNet's terms, summed in another order.
 *   ROIPooling: the roi rounded to pixels, at least 1x1, max over floor/ceil bins (empty bins and
 *     rois of an invalid batch give 0).
 *   PSROIPooling: rounded corners, end + 1, the mean over floor/ceil bins of channel
 *     (ctop * group_size + gh) * group_size + gw.
 *   Proposal: anchors from scales and ratios around each feature_stride cell, decoded with the
 *     deltas (or added: iou_loss) and clipped to the image, boxes smaller than rpn_min_size *
 *     im_info[2] given score -1, the rpn_pre_nms_top_n best through NMS (IoU > threshold, areas
 *     with +1), the first rpn_post_nms_top_n kept ones written, repeated cyclically when fewer.
 *
 * Gradients (MXNet's FGradient): ROIAlign, ROIPooling and PSROIPooling send the output gradient
 * back to the data through the same samples / argmax / bins (_backward_ROIAlign,
 * _backward_ROIPooling, _backward_PSROIPooling); rois get zero gradients. Proposal and
 * MultiProposal are non-differentiable (MXNet's backward writes zeros).
 *
 * Where MXNet reads outside an array (a batch index >= N, PSROIPooling channels < output_dim *
 * group_size^2) these ops fail with a message instead. MXNet's ROIAlign zeroes only element n of
 * the output for a roi with a negative batch index (a bug, racing other rois); here the roi's
 * whole output block is 0, as its documentation says. */
#include <float.h>

#include "../core/mxw_parallel.h"
#include "det_common.h"

static const char *const k_data_rois[] = {"data", "rois", NULL};

/* static_cast<int> of a float (as x86: values outside int's range and NaN give INT_MIN). */
static inline int64_t to_int32(double v) {
  return v > -2147483649.0 && v < 2147483648.0 ? (int64_t)(int32_t)v : (int64_t)INT32_MIN;
}

/* pooled_size: 2 positive values; spatial_scale in [0, 1] (MXNet's set_expect_ndim(2).enforce_nonzero()
 * and set_range(0.0, 1.0)). */
static int check_pooled_scale(const mxw_tuple *ps, double scale) {
  MXW_CHECK(ps->ndim == 2, "pooled_size must have 2 elements (h, w), got %d", ps->ndim);
  MXW_CHECK(ps->v[0] > 0 && ps->v[1] > 0, "pooled_size must be positive, got (%lld, %lld)", (long long)ps->v[0],
            (long long)ps->v[1]);
  MXW_CHECK(scale >= 0 && scale <= 1, "value %g for Parameter spatial_scale exceed bound [0,1]", scale);
  return 0;
}

/* data (N, C, H, W) and rois (R, 5) */
static int check_data_rois(const mxw_shape *d, const mxw_shape *r) {
  MXW_CHECK(d->ndim == 4, "data should be a 4D tensor");
  MXW_CHECK(r->ndim == 2, "bbox should be a 2D tensor of shape [batch, 5]");
  MXW_CHECK(r->dims[1] < 0 || r->dims[1] == 5, "bbox should be a 2D tensor of shape [batch, 5]");
  return 0;
}

/* data and rois share one dtype, which the output takes (MXNet's "Input must have specified type"). */
static int infer_type_data_rois(const void *param, int nin, int *in, int nout, int *out) {
  (void)param, (void)nin;
  int dt = in[0] >= 0 ? in[0] : (in[1] >= 0 ? in[1] : out[0]);
  if (dt < 0) return 0;
  MXW_CHECK((in[0] < 0 || in[0] == dt) && (in[1] < 0 || in[1] == dt) && (out[0] < 0 || out[0] == dt),
            "data and rois must have the same dtype, got %s and %s", mxw_dtype_name(in[0]), mxw_dtype_name(in[1]));
  in[0] = in[1] = out[0] = dt;
  for (int i = 1; i < nout; i++)
    if (out[i] < 0) out[i] = MXW_INT32; /* ROIPooling's maxidx */
  return 0;
}

/* The batch index of every roi: 0 <= b < N (or < 0 where allow_negative: such a roi is skipped). */
static int check_batch_indices(const char *op, const mxw_tensor *rois, int64_t N, int allow_negative) {
  const int64_t R = rois->shape.dims[0];
  for (int64_t n = 0; n < R; n++) {
    const int64_t b = to_int32(mxw_load_f64(rois->data, rois->dtype, n * 5));
    if (b < 0 && allow_negative) continue;
    MXW_CHECK(b >= 0 && b < N, "%s: rois[%lld] has batch index %lld, out of range [0, %lld)", op, (long long)n,
              (long long)b, (long long)N);
  }
  return 0;
}

/* ==== _contrib_ROIAlign ============================================================================= */
typedef struct {
  mxw_tuple pooled_size;
  double spatial_scale;
  int64_t sample_ratio;
  int position_sensitive, aligned;
} ROIAlignParam;

static const mxw_attr_spec k_roialign_attrs[] = {
    MXW_A_SHAPE("pooled_size", ROIAlignParam, pooled_size, NULL,
                "ROI Align output roi feature map height and width: (h, w)"),
    MXW_A_FLOAT("spatial_scale", ROIAlignParam, spatial_scale, NULL,
                "Ratio of input feature map height (or w) to raw image height (or w). Equals the reciprocal of total "
                "stride in convolutional layers"),
    MXW_A_INT("sample_ratio", ROIAlignParam, sample_ratio, "-1",
              "Optional sampling ratio of ROI align, using adaptive size by default."),
    MXW_A_BOOL("position_sensitive", ROIAlignParam, position_sensitive, "False",
               "Whether to perform position-sensitive RoI pooling. PSRoIPooling is first proposaled by R-FCN and it "
               "can reduce the input channels by ph*pw times, where (ph, pw) is the pooled_size"),
    MXW_A_BOOL("aligned", ROIAlignParam, aligned, "False",
               "Center-aligned ROIAlign introduced in Detectron2. To enable, set aligned to True."),
};

static int validate_roialign(void *param) {
  const ROIAlignParam *p = (const ROIAlignParam *)param;
  return check_pooled_scale(&p->pooled_size, p->spatial_scale);
}

static int infer_roialign(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin, (void)nout;
  const ROIAlignParam *p = (const ROIAlignParam *)param;
  if (in[0].ndim < 0 || in[1].ndim < 0) return 0;
  MXW_TRY(check_data_rois(&in[0], &in[1]));
  const int64_t ph = p->pooled_size.v[0], pw = p->pooled_size.v[1];
  int64_t c = in[0].dims[1];
  if (p->position_sensitive && c >= 0) {
    MXW_CHECK(c % (ph * pw) == 0,
              "Input channels should be divided by pooled_size[0]*pooled_size[1]when position_sensitive is true.");
    c /= ph * pw;
  }
  const int64_t dims[4] = {in[1].dims[0], c, ph, pw};
  const mxw_shape o = mxw_shape_make(4, dims);
  return mxw_shape_assign(&out[0], &o, "output");
}

/* One roi's geometry, computed the same way by the forward and backward kernels. */
typedef struct {
  int64_t batch;
  double start_h, start_w, bin_h, bin_w; /* values of T */
  int64_t grid_h, grid_w;
} roi_geom;

typedef struct {
  const ROIAlignParam *p;
  const void *x, *rois;
  void *y;
  int64_t C, H, W, Cout, PH, PW;
  volatile int failed; /* a chunk could not allocate its sample tables */
} roialign_job;

#define DEF_ROIALIGN(T, S)                                                                                           \
  /* the roi's start, bin sizes and sampling grid; 0, -1 for an aligned roi without a positive size, -2 for a        \
   * roi that cannot be sampled */                                                                                   \
  static int roi_geom_##S(const ROIAlignParam *p, const T *roi, int64_t PH, int64_t PW, roi_geom *g) {               \
    g->batch = to_int32((double)roi[0]);                                                                             \
    const T scale = (T)(float)p->spatial_scale, off = p->aligned ? (T)0.5 : (T)0;                                    \
    const T sw = roi[1] * scale - off, sh = roi[2] * scale - off;                                                    \
    const T ew = roi[3] * scale - off, eh = roi[4] * scale - off;                                                    \
    T rw = ew - sw, rh = eh - sh;                                                                                    \
    if (p->aligned) {                                                                                                \
      if (!(rw > 0) || !(rh > 0)) return -1;                                                                         \
    } else {                                                                                                         \
      rw = rw < (T)1. ? (T)1. : rw; /* std::max(rw, 1) */                                                            \
      rh = rh < (T)1. ? (T)1. : rh;                                                                                  \
    }                                                                                                                \
    const T bh = rh / (T)PH, bw = rw / (T)PW;                                                                        \
    g->start_h = sh, g->start_w = sw, g->bin_h = bh, g->bin_w = bw;                                                  \
    /* non-finite corners, or more samples than a table can hold: -2 (MXNet's loops would misbehave) */              \
    const double gh = p->sample_ratio > 0 ? (double)p->sample_ratio : ceil(rh / PH);                                 \
    const double gw = p->sample_ratio > 0 ? (double)p->sample_ratio : ceil(rw / PW);                                 \
    if (!isfinite((double)sw) || !isfinite((double)sh) || !isfinite((double)rw) || !isfinite((double)rh) ||          \
        !(gh >= 1 && gw >= 1 && gh * gw * (double)(PH * PW) <= 67108864.0))                                          \
      return -2;                                                                                                     \
    g->grid_h = (int64_t)gh, g->grid_w = (int64_t)gw;                                                                \
    return 0;                                                                                                        \
  }                                                                                                                  \
  /* bilinear weights and positions of the sample (y, x); all 0 (and pos -1) outside the map's margin */             \
  static void bilinear_##S(int64_t H, int64_t W, T y, T x, T *w, int64_t *pos) {                                     \
    if (y < -1.0 || y > H || x < -1.0 || x > W) {                                                                    \
      for (int k = 0; k < 4; k++) w[k] = 0, pos[k] = -1;                                                             \
      return;                                                                                                        \
    }                                                                                                                \
    if (y <= 0) y = 0;                                                                                               \
    if (x <= 0) x = 0;                                                                                               \
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;                                                                \
    if (yl >= H - 1)                                                                                                 \
      yh = yl = H - 1, y = (T)yl;                                                                                    \
    else                                                                                                             \
      yh = yl + 1;                                                                                                   \
    if (xl >= W - 1)                                                                                                 \
      xh = xl = W - 1, x = (T)xl;                                                                                    \
    else                                                                                                             \
      xh = xl + 1;                                                                                                   \
    const T ly = y - yl, lx = x - xl, hy = 1. - ly, hx = 1. - lx;                                                    \
    w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;                                                  \
    pos[0] = yl * W + xl, pos[1] = yl * W + xh, pos[2] = yh * W + xl, pos[3] = yh * W + xh;                          \
  }                                                                                                                  \
  /* the sample (iy, ix) of bin (ph, pw) */                                                                          \
  static inline void sample_yx_##S(const roi_geom *g, int64_t ph, int64_t pw, int64_t iy, int64_t ix, T *y, T *x) {  \
    const T sh = (T)g->start_h, sw = (T)g->start_w, bh = (T)g->bin_h, bw = (T)g->bin_w;                              \
    *y = sh + ph * bh + (T)(iy + .5f) * bh / (T)g->grid_h;                                                           \
    *x = sw + pw * bw + (T)(ix + .5f) * bw / (T)g->grid_w;                                                           \
  }                                                                                                                  \
  static void roialign_chunk_##S(void *ctx, int64_t r0, int64_t r1) {                                                \
    roialign_job *j = (roialign_job *)ctx;                                                                           \
    const ROIAlignParam *p = j->p;                                                                                   \
    const int64_t C = j->C, H = j->H, W = j->W, Cout = j->Cout, PH = j->PH, PW = j->PW;                              \
    const int64_t block = Cout * PH * PW;                                                                            \
    T *sw = NULL, *tw = NULL;                                                                                        \
    int64_t *sp = NULL, *bstart = NULL, cap = 0;                                                                     \
    int32_t *tp = NULL;                                                                                              \
    for (int64_t n = r0; n < r1; n++) {                                                                              \
      const T *roi = (const T *)j->rois + n * 5;                                                                     \
      T *yo = (T *)j->y + n * block;                                                                                 \
      roi_geom g;                                                                                                    \
      const int bad = roi_geom_##S(p, roi, PH, PW, &g); /* validated before the split */                             \
      if (g.batch < 0 || bad) {                                                                                      \
        for (int64_t i = 0; i < block; i++) yo[i] = 0;                                                               \
        continue;                                                                                                    \
      }                                                                                                              \
      /* every sample's 4 bilinear taps (weight 0 at position 0 outside the map, as MXNet) */                        \
      const int64_t per_bin = g.grid_h * g.grid_w, ns = PH * PW * per_bin;                                           \
      if (ns > cap || !bstart) {                                                                                     \
        free(sw), free(sp), free(tw), free(tp), free(bstart);                                                        \
        cap = ns;                                                                                                    \
        sw = (T *)calloc((size_t)(4 * ns), sizeof(T));                                                               \
        sp = (int64_t *)calloc((size_t)(4 * ns), sizeof(int64_t));                                                   \
        tw = (T *)calloc((size_t)(4 * ns), sizeof(T));                                                               \
        tp = (int32_t *)calloc((size_t)(4 * ns), sizeof(int32_t));                                                   \
        bstart = (int64_t *)calloc((size_t)(PH * PW + 1), sizeof(int64_t));                                          \
        if (!sw || !sp || !tw || !tp || !bstart) { /* reported by the caller after the split */                      \
          j->failed = 1;                                                                                             \
          break;                                                                                                     \
        }                                                                                                            \
      }                                                                                                              \
      int64_t k = 0;                                                                                                 \
      for (int64_t ph = 0; ph < PH; ph++)                                                                            \
        for (int64_t pw = 0; pw < PW; pw++)                                                                          \
          for (int64_t iy = 0; iy < g.grid_h; iy++)                                                                  \
            for (int64_t ix = 0; ix < g.grid_w; ix++, k++) {                                                         \
              T y, x;                                                                                                \
              sample_yx_##S(&g, ph, pw, iy, ix, &y, &x);                                                             \
              bilinear_##S(H, W, y, x, sw + 4 * k, sp + 4 * k);                                                      \
              for (int q = 0; q < 4; q++)                                                                            \
                if (sp[4 * k + q] < 0) sp[4 * k + q] = 0;                                                            \
            }                                                                                                        \
      /* per bin, the taps of its samples merged by position (weights added): the same sum over                      \
       * every channel with fewer multiplications when samples share pixels */                                       \
      int64_t nt = 0;                                                                                                \
      for (int64_t b = 0; b < PH * PW; b++) {                                                                        \
        bstart[b] = nt;                                                                                              \
        for (int64_t q = b * per_bin * 4; q < (b + 1) * per_bin * 4; q++) {                                          \
          int64_t t = bstart[b];                                                                                     \
          while (t < nt && tp[t] != (int32_t)sp[q]) t++;                                                             \
          if (t == nt)                                                                                               \
            tp[nt] = (int32_t)sp[q], tw[nt++] = sw[q];                                                               \
          else                                                                                                       \
            tw[t] += sw[q];                                                                                          \
        }                                                                                                            \
      }                                                                                                              \
      bstart[PH * PW] = nt;                                                                                          \
      const T count = (T)per_bin;                                                                                    \
      for (int64_t c = 0; c < Cout; c++) {                                                                           \
        for (int64_t b = 0; b < PH * PW; b++) {                                                                      \
          const int64_t cu = p->position_sensitive ? c * PH * PW + b : c;                                            \
          const T *xd = (const T *)j->x + (g.batch * C + cu) * H * W;                                                \
          T v = 0;                                                                                                   \
          for (int64_t t = bstart[b]; t < bstart[b + 1]; t++) v += tw[t] * xd[tp[t]];                                \
          yo[c * PH * PW + b] = v / count;                                                                           \
        }                                                                                                            \
      }                                                                                                              \
    }                                                                                                                \
    free(sw), free(sp), free(tw), free(tp), free(bstart);                                                            \
  }                                                                                                                  \
  /* the gradient, in MXNet's order: every output cell's samples add ograd * w / count */                            \
  static void roialign_backward_##S(const ROIAlignParam *p, const T *dy, const T *rois, T *dx, int64_t R, int64_t C, \
                                    int64_t H, int64_t W, int64_t Cout, int64_t PH, int64_t PW) {                    \
    for (int64_t n = 0; n < R; n++) {                                                                                \
      roi_geom g;                                                                                                    \
      if (roi_geom_##S(p, rois + n * 5, PH, PW, &g) != 0 || g.batch < 0) continue; /* validated before */            \
      const T count = (T)(g.grid_h * g.grid_w);                                                                      \
      for (int64_t c = 0; c < Cout; c++)                                                                             \
        for (int64_t ph = 0; ph < PH; ph++)                                                                          \
          for (int64_t pw = 0; pw < PW; pw++) {                                                                      \
            const int64_t cu = p->position_sensitive ? (c * PH + ph) * PW + pw : c;                                  \
            T *gx = dx + (g.batch * C + cu) * H * W;                                                                 \
            const T top = dy[((n * Cout + c) * PH + ph) * PW + pw];                                                  \
            for (int64_t iy = 0; iy < g.grid_h; iy++)                                                                \
              for (int64_t ix = 0; ix < g.grid_w; ix++) {                                                            \
                T y, x, w[4];                                                                                        \
                int64_t pos[4];                                                                                      \
                sample_yx_##S(&g, ph, pw, iy, ix, &y, &x);                                                           \
                bilinear_##S(H, W, y, x, w, pos);                                                                    \
                if (pos[0] < 0) continue;                                                                            \
                for (int q = 0; q < 4; q++) gx[pos[q]] += top * w[q] / count;                                        \
              }                                                                                                      \
          }                                                                                                          \
    }                                                                                                                \
  }

DEF_ROIALIGN(float, f32)
DEF_ROIALIGN(double, f64)

/* Checks every roi before the kernels run: batch index < N, and positive sizes when aligned. */
static int check_roialign_rois(const ROIAlignParam *p, const mxw_tensor *rois, int dtype, const void *data, int64_t N) {
  const int64_t R = rois->shape.dims[0], PH = p->pooled_size.v[0], PW = p->pooled_size.v[1];
  MXW_TRY(check_batch_indices("ROIAlign", rois, N, 1));
  for (int64_t n = 0; n < R; n++) {
    roi_geom g;
    const int bad = dtype == MXW_FLOAT32 ? roi_geom_f32(p, (const float *)data + n * 5, PH, PW, &g)
                                         : roi_geom_f64(p, (const double *)data + n * 5, PH, PW, &g);
    if (bad == -1 && g.batch >= 0)
      return mxw_fail(
          "ROIAlign: rois[%lld] has no positive width and height on the feature map (aligned=True needs "
          "them: Check failed: roi_width > 0)",
          (long long)n);
    if (bad == -2 && g.batch >= 0)
      return mxw_fail("ROIAlign: rois[%lld] has non-finite corners or needs more than 2^26 samples", (long long)n);
  }
  return 0;
}

static int fwd_roialign(const mxw_op_call *c) {
  const ROIAlignParam *p = (const ROIAlignParam *)c->param;
  const mxw_shape *ds = &c->inputs[0].shape, *os = &c->outputs[0].shape;
  det_view v;
  MXW_TRY(det_view_begin(c, "ROIAlign", c->inputs[0].dtype, &v));
  int rc = check_roialign_rois(p, &c->inputs[1], v.dtype, v.in[1].data, ds->dims[0]);
  if (rc == 0) {
    roialign_job j = {p,
                      v.in[0].data,
                      v.in[1].data,
                      v.out[0].data,
                      ds->dims[1],
                      ds->dims[2],
                      ds->dims[3],
                      os->dims[1],
                      os->dims[2],
                      os->dims[3],
                      0};
    const double cost = (double)(os->dims[1] * os->dims[2] * os->dims[3]) * 40.0;
    mxw_parallel_run(os->dims[0], 1, cost, v.dtype == MXW_FLOAT32 ? roialign_chunk_f32 : roialign_chunk_f64, &j);
    if (j.failed) rc = mxw_fail("ROIAlign: out of memory for the bilinear sample tables");
  }
  return det_view_end(c, &v, rc);
}

static int grad_roialign(mxw_grad_ctx *g) {
  mxw_gid dx;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_ROIAlign", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 1), mxw_grad_in(g, 0)),
                          &dx, 1));
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_ROIAlign = {
    .name = "_contrib_ROIAlign",
    .doc = MXW_DOC("ROI Align: each roi's (ph, pw) bins averaged from bilinear samples of the feature map"),
    .attrs = k_roialign_attrs,
    .num_attrs = NUM_ATTRS(k_roialign_attrs),
    .param_size = sizeof(ROIAlignParam),
    .validate = validate_roialign,
    .num_inputs = 2,
    .input_names = k_data_rois,
    .num_outputs = 1,
    .infer_shape = infer_roialign,
    .infer_type = infer_type_data_rois,
    .forward = fwd_roialign,
    .gradient = grad_roialign,
};

/* _backward_*(ograd, rois or maxidx, data): data's gradient (data only for its shape and dtype) */
static const char *const k_backward_roi_inputs[] = {"ograd", "rois", "data", NULL};
static const char *const k_backward_roipool_inputs[] = {"ograd", "maxidx", "data", NULL};
static int infer_backward_roi(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param, (void)nin, (void)nout;
  MXW_TRY(mxw_shape_assign(&out[0], &in[2], "data gradient"));
  return mxw_shape_assign(&in[2], &out[0], "data");
}
static int infer_type_backward_roi(const void *param, int nin, int *in, int nout, int *out) {
  (void)param, (void)nin, (void)nout;
  int dt = in[0] >= 0 ? in[0] : (in[2] >= 0 ? in[2] : out[0]);
  if (dt < 0) return 0;
  in[0] = in[2] = out[0] = dt;
  return 0;
}
static int infer_type_backward_rois(const void *param, int nin, int *in, int nout, int *out) {
  MXW_TRY(infer_type_backward_roi(param, nin, in, nout, out));
  if (in[1] < 0 && in[0] >= 0) in[1] = in[0];
  return 0;
}

static int fwd_backward_roialign(const mxw_op_call *c) {
  const ROIAlignParam *p = (const ROIAlignParam *)c->param;
  const mxw_shape *ds = &c->outputs[0].shape, *gs = &c->inputs[0].shape;
  det_view v;
  MXW_TRY(det_view_begin(c, "_backward_ROIAlign", c->outputs[0].dtype, &v));
  int rc = v.in[1].dtype == v.dtype ? 0 : mxw_fail("_backward_ROIAlign: rois must have the data's dtype");
  if (rc == 0) rc = check_roialign_rois(p, &c->inputs[1], v.dtype, v.in[1].data, ds->dims[0]);
  if (rc == 0) {
    const int64_t n = mxw_tensor_size(&c->outputs[0]);
    if (v.dtype == MXW_FLOAT32) {
      if (n) memset(v.out[0].data, 0, (size_t)n * sizeof(float));
      roialign_backward_f32(p, (const float *)v.in[0].data, (const float *)v.in[1].data, (float *)v.out[0].data,
                            gs->dims[0], ds->dims[1], ds->dims[2], ds->dims[3], gs->dims[1], gs->dims[2], gs->dims[3]);
    } else {
      if (n) memset(v.out[0].data, 0, (size_t)n * sizeof(double));
      roialign_backward_f64(p, (const double *)v.in[0].data, (const double *)v.in[1].data, (double *)v.out[0].data,
                            gs->dims[0], ds->dims[1], ds->dims[2], ds->dims[3], gs->dims[1], gs->dims[2], gs->dims[3]);
    }
  }
  return det_view_end(c, &v, rc);
}

static const mxw_op_def op_backward_ROIAlign = {
    .name = "_backward_ROIAlign",
    .doc = MXW_DOC("the data gradient of ROIAlign"),
    .attrs = k_roialign_attrs,
    .num_attrs = NUM_ATTRS(k_roialign_attrs),
    .param_size = sizeof(ROIAlignParam),
    .validate = validate_roialign,
    .num_inputs = 3,
    .input_names = k_backward_roi_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_roi,
    .infer_type = infer_type_backward_rois,
    .forward = fwd_backward_roialign,
};

/* ==== ROIPooling ===================================================================================== */
typedef struct {
  mxw_tuple pooled_size;
  double spatial_scale;
} ROIPoolParam;

static const mxw_attr_spec k_roipool_attrs[] = {
    MXW_A_SHAPE("pooled_size", ROIPoolParam, pooled_size, NULL, "ROI pooling output shape (h,w) "),
    MXW_A_FLOAT("spatial_scale", ROIPoolParam, spatial_scale, NULL,
                "Ratio of input feature map height (or w) to raw image height (or w). Equals the reciprocal of total "
                "stride in convolutional layers"),
};
static int validate_roipool(void *param) {
  const ROIPoolParam *p = (const ROIPoolParam *)param;
  return check_pooled_scale(&p->pooled_size, p->spatial_scale);
}

static int infer_roipool(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin, (void)nout;
  const ROIPoolParam *p = (const ROIPoolParam *)param;
  if (in[0].ndim < 0 || in[1].ndim < 0) return 0;
  MXW_TRY(check_data_rois(&in[0], &in[1]));
  const int64_t dims[4] = {in[1].dims[0], in[0].dims[1], p->pooled_size.v[0], p->pooled_size.v[1]};
  const mxw_shape o = mxw_shape_make(4, dims);
  MXW_TRY(mxw_shape_assign(&out[0], &o, "output"));
  return mxw_shape_assign(&out[1], &o, "maxidx");
}

#define DEF_ROIPOOL(T, S, ROUND)                                                                                     \
  static void roipool_##S(const T *x, const T *rois, T *y, int32_t *arg, int64_t N, int64_t C, int64_t H, int64_t W, \
                          int64_t R, int64_t PH, int64_t PW, float scale) {                                          \
    for (int64_t n = 0; n < R; n++) {                                                                                \
      const T *r = rois + n * 5;                                                                                     \
      const int64_t sw = (int64_t)ROUND(r[1] * scale), sh = (int64_t)ROUND(r[2] * scale);                            \
      const int64_t ew = (int64_t)ROUND(r[3] * scale), eh = (int64_t)ROUND(r[4] * scale);                            \
      const int64_t b = to_int32((double)r[0]);                                                                      \
      const int invalid = b < 0 || b >= N;                                                                           \
      const int64_t rh = eh - sh + 1 > 1 ? eh - sh + 1 : 1, rw = ew - sw + 1 > 1 ? ew - sw + 1 : 1;                  \
      const T bh = (T)rh / (T)PH, bw = (T)rw / (T)PW;                                                                \
      for (int64_t c = 0; c < C; c++) {                                                                              \
        const int64_t base = invalid ? 0 : (b * C + c) * H * W;                                                      \
        T *yc = y + (n * C + c) * PH * PW;                                                                           \
        int32_t *ac = arg + (n * C + c) * PH * PW;                                                                   \
        for (int64_t ph = 0; ph < PH; ph++)                                                                          \
          for (int64_t pw = 0; pw < PW; pw++) {                                                                      \
            int64_t hs = (int64_t)floor((T)ph * bh), ws = (int64_t)floor((T)pw * bw);                                \
            int64_t he = (int64_t)ceil((T)(ph + 1) * bh), we = (int64_t)ceil((T)(pw + 1) * bw);                      \
            hs = hs + sh < 0 ? 0 : (hs + sh > H ? H : hs + sh);                                                      \
            he = he + sh < 0 ? 0 : (he + sh > H ? H : he + sh);                                                      \
            ws = ws + sw < 0 ? 0 : (ws + sw > W ? W : ws + sw);                                                      \
            we = we + sw < 0 ? 0 : (we + sw > W ? W : we + sw);                                                      \
            const int64_t o = ph * PW + pw;                                                                          \
            ac[o] = -1;                                                                                              \
            if (he <= hs || we <= ws || invalid) {                                                                   \
              yc[o] = 0;                                                                                             \
              continue;                                                                                              \
            }                                                                                                        \
            T m = (T)-FLT_MAX;                                                                                       \
            for (int64_t h = hs; h < he; h++)                                                                        \
              for (int64_t w = ws; w < we; w++)                                                                      \
                if (x[base + h * W + w] > m) m = x[base + h * W + w], ac[o] = (int32_t)(base + h * W + w);           \
            yc[o] = m;                                                                                               \
          }                                                                                                          \
      }                                                                                                              \
    }                                                                                                                \
  }                                                                                                                  \
  static void roipool_backward_##S(const T *dy, const int32_t *arg, T *dx, int64_t n, int64_t nx) {                  \
    if (nx) memset(dx, 0, (size_t)nx * sizeof(T));                                                                   \
    for (int64_t i = 0; i < n; i++)                                                                                  \
      if (arg[i] >= 0) dx[arg[i]] += dy[i];                                                                          \
  }

DEF_ROIPOOL(float, f32, roundf)
DEF_ROIPOOL(double, f64, round)

static int fwd_roipool(const mxw_op_call *c) {
  const ROIPoolParam *p = (const ROIPoolParam *)c->param;
  const mxw_shape *ds = &c->inputs[0].shape;
  MXW_CHECK(mxw_tensor_size(&c->inputs[0]) < INT32_MAX, "ROIPooling: data has more elements than int32 maxidx holds");
  MXW_CHECK(c->outputs[1].dtype == MXW_INT32, "ROIPooling: maxidx must be int32");
  det_view v;
  MXW_TRY(det_view_begin(c, "ROIPooling", c->inputs[0].dtype, &v));
  const int64_t R = c->inputs[1].shape.dims[0], PH = p->pooled_size.v[0], PW = p->pooled_size.v[1];
  if (v.dtype == MXW_FLOAT32)
    roipool_f32((const float *)v.in[0].data, (const float *)v.in[1].data, (float *)v.out[0].data,
                (int32_t *)v.out[1].data, ds->dims[0], ds->dims[1], ds->dims[2], ds->dims[3], R, PH, PW,
                (float)p->spatial_scale);
  else
    roipool_f64((const double *)v.in[0].data, (const double *)v.in[1].data, (double *)v.out[0].data,
                (int32_t *)v.out[1].data, ds->dims[0], ds->dims[1], ds->dims[2], ds->dims[3], R, PH, PW,
                (float)p->spatial_scale);
  return det_view_end(c, &v, 0);
}

static int grad_roipool(mxw_grad_ctx *g) {
  mxw_gid dx;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_ROIPooling",
                          MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 1), mxw_grad_in(g, 0)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}

static int num_visible_one(const void *param) {
  (void)param;
  return 1;
}
static const char *const k_roipool_outputs[] = {"output", "maxidx", NULL};

static const mxw_op_def op_ROIPooling = {
    .name = "ROIPooling",
    .aliases = ALIASES("_npx_roi_pooling"),
    .doc = MXW_DOC("region-of-interest max pooling of each roi into a fixed (ph, pw) grid"),
    .attrs = k_roipool_attrs,
    .num_attrs = NUM_ATTRS(k_roipool_attrs),
    .param_size = sizeof(ROIPoolParam),
    .validate = validate_roipool,
    .num_inputs = 2,
    .input_names = k_data_rois,
    .num_outputs = 2,
    .num_visible_outputs_fn = num_visible_one,
    .output_names = k_roipool_outputs,
    .infer_shape = infer_roipool,
    .infer_type = infer_type_data_rois,
    .forward = fwd_roipool,
    .gradient = grad_roipool,
};

static int infer_type_backward_roipool(const void *param, int nin, int *in, int nout, int *out) {
  MXW_TRY(infer_type_backward_roi(param, nin, in, nout, out));
  if (in[1] < 0) in[1] = MXW_INT32;
  return 0;
}

static int fwd_backward_roipool(const mxw_op_call *c) {
  MXW_CHECK(c->inputs[1].dtype == MXW_INT32, "_backward_ROIPooling: maxidx must be int32");
  const int64_t nx = mxw_tensor_size(&c->outputs[0]), n = mxw_tensor_size(&c->inputs[0]);
  MXW_CHECK(mxw_tensor_size(&c->inputs[1]) == n, "_backward_ROIPooling: maxidx must have the output's shape");
  const int32_t *arg = (const int32_t *)c->inputs[1].data;
  for (int64_t i = 0; i < n; i++)
    MXW_CHECK(arg[i] < nx, "_backward_ROIPooling: maxidx[%lld] = %d is out of range", (long long)i, arg[i]);
  det_view v;
  MXW_TRY(det_view_begin(c, "_backward_ROIPooling", c->outputs[0].dtype, &v));
  if (v.dtype == MXW_FLOAT32)
    roipool_backward_f32((const float *)v.in[0].data, arg, (float *)v.out[0].data, n, nx);
  else
    roipool_backward_f64((const double *)v.in[0].data, arg, (double *)v.out[0].data, n, nx);
  return det_view_end(c, &v, 0);
}

static const mxw_op_def op_backward_ROIPooling = {
    .name = "_backward_ROIPooling",
    .doc = MXW_DOC("the data gradient of ROIPooling: each output gradient added at its cell's argmax"),
    .attrs = k_roipool_attrs,
    .num_attrs = NUM_ATTRS(k_roipool_attrs),
    .param_size = sizeof(ROIPoolParam),
    .validate = validate_roipool,
    .num_inputs = 3,
    .input_names = k_backward_roipool_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_roi,
    .infer_type = infer_type_backward_roipool,
    .forward = fwd_backward_roipool,
};

/* ==== _contrib_PSROIPooling ========================================================================== */
typedef struct {
  double spatial_scale;
  int64_t output_dim, pooled_size, group_size;
} PSROIParam;

static const mxw_attr_spec k_psroi_attrs[] = {
    MXW_A_FLOAT("spatial_scale", PSROIParam, spatial_scale, NULL,
                "Ratio of input feature map height (or w) to raw image height (or w). Equals the reciprocal of total "
                "stride in convolutional layers"),
    MXW_A_INT("output_dim", PSROIParam, output_dim, NULL, "fix output dim"),
    MXW_A_INT("pooled_size", PSROIParam, pooled_size, NULL, "fix pooled size"),
    MXW_A_INT("group_size", PSROIParam, group_size, "0", "fix group size"),
};
static int validate_psroi(void *param) {
  PSROIParam *p = (PSROIParam *)param;
  MXW_CHECK(p->spatial_scale >= 0 && p->spatial_scale <= 1, "value %g for Parameter spatial_scale exceed bound [0,1]",
            p->spatial_scale);
  MXW_CHECK(p->output_dim > 0, "PSROIPooling: output_dim must be positive, got %lld", (long long)p->output_dim);
  MXW_CHECK(p->pooled_size > 0, "PSROIPooling: pooled_size must be positive, got %lld", (long long)p->pooled_size);
  MXW_CHECK(p->group_size >= 0, "PSROIPooling: group_size must not be negative, got %lld", (long long)p->group_size);
  return 0;
}
static int64_t psroi_group(const PSROIParam *p) { return p->group_size == 0 ? p->pooled_size : p->group_size; }

static int infer_psroi(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin, (void)nout;
  const PSROIParam *p = (const PSROIParam *)param;
  if (in[0].ndim < 0 || in[1].ndim < 0) return 0;
  MXW_TRY(check_data_rois(&in[0], &in[1]));
  const int64_t gs = psroi_group(p);
  MXW_CHECK(in[0].dims[1] < 0 || in[0].dims[1] >= p->output_dim * gs * gs,
            "PSROIPooling: data has %lld channels, fewer than output_dim * group_size^2 = %lld",
            (long long)in[0].dims[1], (long long)(p->output_dim * gs * gs));
  const int64_t dims[4] = {in[1].dims[0], p->output_dim, p->pooled_size, p->pooled_size};
  const mxw_shape o = mxw_shape_make(4, dims);
  return mxw_shape_assign(&out[0], &o, "output");
}

/* The bin [hs, he) x [ws, we) and input channel of output cell (n, ctop, ph, pw). */
#define DEF_PSROI(T, S, ROUND)                                                                                         \
  static int psroi_bin_##S(const T *r, T scale, int64_t H, int64_t W, int64_t P, int64_t gs, int64_t ctop, int64_t ph, \
                           int64_t pw, int64_t *hs, int64_t *he, int64_t *ws, int64_t *we, int64_t *c) {               \
    const T sw = (T)ROUND(r[1]) * scale, sh = (T)ROUND(r[2]) * scale;                                                  \
    const T ew = (T)(ROUND(r[3]) + 1.) * scale, eh = (T)(ROUND(r[4]) + 1.) * scale;                                    \
    const T rw = ew - sw < (T)0.1 ? (T)0.1 : ew - sw, rh = eh - sh < (T)0.1 ? (T)0.1 : eh - sh;                        \
    const T bh = rh / (T)P, bw = rw / (T)P;                                                                            \
    int64_t h0 = (int64_t)floor((T)ph * bh + sh), w0 = (int64_t)floor((T)pw * bw + sw);                                \
    int64_t h1 = (int64_t)ceil((T)(ph + 1) * bh + sh), w1 = (int64_t)ceil((T)(pw + 1) * bw + sw);                      \
    *hs = h0 < 0 ? 0 : (h0 > H ? H : h0), *he = h1 < 0 ? 0 : (h1 > H ? H : h1);                                        \
    *ws = w0 < 0 ? 0 : (w0 > W ? W : w0), *we = w1 < 0 ? 0 : (w1 > W ? W : w1);                                        \
    int64_t gw = (int64_t)floor((T)pw * gs / P), gh = (int64_t)floor((T)ph * gs / P);                                  \
    gw = gw < 0 ? 0 : (gw > gs - 1 ? gs - 1 : gw);                                                                     \
    gh = gh < 0 ? 0 : (gh > gs - 1 ? gs - 1 : gh);                                                                     \
    *c = (ctop * gs + gh) * gs + gw;                                                                                   \
    return *he <= *hs || *we <= *ws; /* empty */                                                                       \
  }                                                                                                                    \
  static void psroi_##S(const PSROIParam *p, const T *x, const T *rois, T *y, int64_t C, int64_t H, int64_t W,         \
                        int64_t R, int backward) {                                                                     \
    const int64_t P = p->pooled_size, D = p->output_dim, gs = psroi_group(p);                                          \
    const T scale = (T)(float)p->spatial_scale;                                                                        \
    for (int64_t i = 0; i < R * D * P * P; i++) {                                                                      \
      const int64_t pw = i % P, ph = (i / P) % P, ctop = (i / P / P) % D, n = i / P / P / D;                           \
      const T *r = rois + n * 5;                                                                                       \
      const int64_t b = to_int32((double)r[0]);                                                                        \
      int64_t hs, he, ws, we, c;                                                                                       \
      const int empty = psroi_bin_##S(r, scale, H, W, P, gs, ctop, ph, pw, &hs, &he, &ws, &we, &c);                    \
      const T area = (T)((he - hs) * (we - ws));                                                                       \
      if (backward) { /* x: ograd, y: data gradient */                                                                 \
        T *g = y + (b * C + c) * H * W;                                                                                \
        const T d = empty ? (T)0. : x[i] / area;                                                                       \
        for (int64_t h = hs; h < he; h++)                                                                              \
          for (int64_t w = ws; w < we; w++) g[h * W + w] = g[h * W + w] + d;                                           \
      } else {                                                                                                         \
        const T *xd = x + (b * C + c) * H * W;                                                                         \
        T sum = 0;                                                                                                     \
        for (int64_t h = hs; h < he; h++)                                                                              \
          for (int64_t w = ws; w < we; w++) sum += xd[h * W + w];                                                      \
        y[i] = empty ? (T)0. : sum / area;                                                                             \
      }                                                                                                                \
    }                                                                                                                  \
  }

DEF_PSROI(float, f32, roundf)
DEF_PSROI(double, f64, round)

static int fwd_psroi(const mxw_op_call *c) {
  const PSROIParam *p = (const PSROIParam *)c->param;
  const mxw_shape *ds = &c->inputs[0].shape;
  MXW_TRY(check_batch_indices("PSROIPooling", &c->inputs[1], ds->dims[0], 0));
  det_view v;
  MXW_TRY(det_view_begin(c, "PSROIPooling", c->inputs[0].dtype, &v));
  const int64_t R = c->inputs[1].shape.dims[0];
  if (v.dtype == MXW_FLOAT32)
    psroi_f32(p, (const float *)v.in[0].data, (const float *)v.in[1].data, (float *)v.out[0].data, ds->dims[1],
              ds->dims[2], ds->dims[3], R, 0);
  else
    psroi_f64(p, (const double *)v.in[0].data, (const double *)v.in[1].data, (double *)v.out[0].data, ds->dims[1],
              ds->dims[2], ds->dims[3], R, 0);
  return det_view_end(c, &v, 0);
}

static int grad_psroi(mxw_grad_ctx *g) {
  mxw_gid dx;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_PSROIPooling",
                          MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 1), mxw_grad_in(g, 0)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_PSROIPooling = {
    .name = "_contrib_PSROIPooling",
    .doc = MXW_DOC("position-sensitive ROI pooling (R-FCN): each bin the mean of its own group of channels"),
    .attrs = k_psroi_attrs,
    .num_attrs = NUM_ATTRS(k_psroi_attrs),
    .param_size = sizeof(PSROIParam),
    .validate = validate_psroi,
    .num_inputs = 2,
    .input_names = k_data_rois,
    .num_outputs = 1,
    .infer_shape = infer_psroi,
    .infer_type = infer_type_data_rois,
    .forward = fwd_psroi,
    .gradient = grad_psroi,
};

static int fwd_backward_psroi(const mxw_op_call *c) {
  const PSROIParam *p = (const PSROIParam *)c->param;
  const mxw_shape *ds = &c->outputs[0].shape;
  MXW_TRY(check_batch_indices("_backward_PSROIPooling", &c->inputs[1], ds->dims[0], 0));
  det_view v;
  MXW_TRY(det_view_begin(c, "_backward_PSROIPooling", c->outputs[0].dtype, &v));
  const int64_t R = c->inputs[1].shape.dims[0], n = mxw_tensor_size(&c->outputs[0]);
  if (v.dtype == MXW_FLOAT32) {
    if (n) memset(v.out[0].data, 0, (size_t)n * sizeof(float));
    psroi_f32(p, (const float *)v.in[0].data, (const float *)v.in[1].data, (float *)v.out[0].data, ds->dims[1],
              ds->dims[2], ds->dims[3], R, 1);
  } else {
    if (n) memset(v.out[0].data, 0, (size_t)n * sizeof(double));
    psroi_f64(p, (const double *)v.in[0].data, (const double *)v.in[1].data, (double *)v.out[0].data, ds->dims[1],
              ds->dims[2], ds->dims[3], R, 1);
  }
  return det_view_end(c, &v, 0);
}

static const mxw_op_def op_backward_PSROIPooling = {
    .name = "_backward_PSROIPooling",
    .doc = MXW_DOC("the data gradient of PSROIPooling: each output gradient spread evenly over its bin"),
    .attrs = k_psroi_attrs,
    .num_attrs = NUM_ATTRS(k_psroi_attrs),
    .param_size = sizeof(PSROIParam),
    .validate = validate_psroi,
    .num_inputs = 3,
    .input_names = k_backward_roi_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_roi,
    .infer_type = infer_type_backward_rois,
    .forward = fwd_backward_psroi,
};

/* ==== _contrib_Proposal, _contrib_MultiProposal ====================================================== */
typedef struct {
  int64_t rpn_pre_nms_top_n, rpn_post_nms_top_n;
  double threshold;
  int64_t rpn_min_size;
  mxw_str scales_s, ratios_s;
  int64_t feature_stride;
  int output_score, iou_loss;
  float scales[DET_MAX_FLOATS], ratios[DET_MAX_FLOATS];
  int nscales, nratios;
} ProposalParam;

static const mxw_attr_spec k_proposal_attrs[] = {
    MXW_A_INT("rpn_pre_nms_top_n", ProposalParam, rpn_pre_nms_top_n, "6000",
              "Number of top scoring boxes to keep before applying NMS to RPN proposals"),
    MXW_A_INT("rpn_post_nms_top_n", ProposalParam, rpn_post_nms_top_n, "300",
              "Number of top scoring boxes to keep after applying NMS to RPN proposals"),
    MXW_A_FLOAT("threshold", ProposalParam, threshold, "0.7", "NMS value, below which to suppress."),
    MXW_A_INT("rpn_min_size", ProposalParam, rpn_min_size, "16", "Minimum height or width in proposal"),
    MXW_A_STRING("scales", ProposalParam, scales_s, "[4,8,16,32]",
                 "Used to generate anchor windows by enumerating scales"),
    MXW_A_STRING("ratios", ProposalParam, ratios_s, "[0.5,1,2]",
                 "Used to generate anchor windows by enumerating ratios"),
    MXW_A_INT("feature_stride", ProposalParam, feature_stride, "16",
              "The size of the receptive field each unit in the convolution layer of the rpn,for example the product "
              "of all stride's prior to this layer."),
    MXW_A_BOOL("output_score", ProposalParam, output_score, "False", "Add score to outputs"),
    MXW_A_BOOL("iou_loss", ProposalParam, iou_loss, "False", "Usage of IoU Loss"),
};

static int validate_proposal(void *param) {
  ProposalParam *p = (ProposalParam *)param;
  MXW_TRY(det_parse_floats("scales", p->scales_s.s, p->scales, &p->nscales));
  MXW_TRY(det_parse_floats("ratios", p->ratios_s.s, p->ratios, &p->nratios));
  MXW_CHECK(p->rpn_post_nms_top_n >= 0, "rpn_post_nms_top_n must not be negative, got %lld",
            (long long)p->rpn_post_nms_top_n);
  return 0;
}
static int proposal_visible(const void *param) { return ((const ProposalParam *)param)->output_score ? 2 : 1; }

static const char *const k_proposal_inputs[] = {"cls_prob", "bbox_pred", "im_info", NULL};
static const char *const k_proposal_outputs[] = {"output", "score", NULL};

static int infer_proposal_common(const ProposalParam *p, mxw_shape *in, mxw_shape *out, int multi) {
  if (in[0].ndim < 0) return 0;
  shape_buf b;
  MXW_CHECK(in[0].ndim == 4, "cls_prob must be (batch, 2 * num_anchors, height, width), got %s", SHAPE_STR(&in[0], b));
  const int64_t B = in[0].dims[0];
  const int64_t bp[4] = {B, in[0].dims[1] < 0 ? -1 : in[0].dims[1] * 2, in[0].dims[2], in[0].dims[3]}, ii[2] = {B, 3};
  const mxw_shape bps = mxw_shape_make(4, bp), iis = mxw_shape_make(2, ii);
  MXW_TRY(mxw_shape_assign(&in[1], &bps, "bbox_pred"));
  MXW_TRY(mxw_shape_assign(&in[2], &iis, "im_info"));
  const int64_t rows = multi ? (B < 0 ? -1 : B * p->rpn_post_nms_top_n) : p->rpn_post_nms_top_n;
  const int64_t o[2] = {rows, 5}, s[2] = {rows, 1};
  const mxw_shape os = mxw_shape_make(2, o), ss = mxw_shape_make(2, s);
  MXW_TRY(mxw_shape_assign(&out[0], &os, "output"));
  return mxw_shape_assign(&out[1], &ss, "score");
}
static int infer_proposal(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin, (void)nout;
  return infer_proposal_common((const ProposalParam *)param, in, out, 0);
}
static int infer_multi_proposal(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin, (void)nout;
  return infer_proposal_common((const ProposalParam *)param, in, out, 1);
}

typedef struct {
  const float *v;
} prop_sort_ctx;
static int prop_cmp(const void *ctx, int32_t a, int32_t b) {
  const float *v = ((const prop_sort_ctx *)ctx)->v;
  return v[a * 5 + 4] > v[b * 5 + 4] ? -1 : (v[b * 5 + 4] > v[a * 5 + 4] ? 1 : 0);
}

/* One image: props (count * 5) workspace, ordered (pre * 5), area/suppressed (pre), keep (pre),
 * order/tmp (count). */
typedef struct {
  float *props, *ordered, *area;
  unsigned char *supp;
  int32_t *keep, *order, *tmp;
  float *anchors; /* A * 4 */
} prop_work;

static int proposal_image(const ProposalParam *p, const float *scores, const float *deltas, const float *info,
                          int64_t A, int64_t H, int64_t W, int64_t pre, int64_t post, float *out, float *out_score,
                          float batch, prop_work *w) {
  const int64_t count = A * H * W, fs = p->feature_stride;
  /* shifted anchors, index (h, w, a), score: the foreground half of cls_prob */
  for (int64_t h = 0; h < H; h++)
    for (int64_t x = 0; x < W; x++)
      for (int64_t a = 0; a < A; a++) {
        float *b = w->props + ((h * W + x) * A + a) * 5;
        b[0] = w->anchors[a * 4 + 0] + x * fs;
        b[1] = w->anchors[a * 4 + 1] + h * fs;
        b[2] = w->anchors[a * 4 + 2] + x * fs;
        b[3] = w->anchors[a * 4 + 3] + h * fs;
        b[4] = scores[((A + a) * H + h) * W + x];
      }
  const float im_h = info[0], im_w = info[1], im_scale = info[2];
  const int64_t real_h = to_int32((double)(im_h / fs)), real_w = to_int32((double)(im_w / fs));
  MXW_CHECK(H >= real_h, "Proposal: the feature map has height %lld, less than im_info's %g / feature_stride %lld",
            (long long)H, (double)im_h, (long long)fs);
  MXW_CHECK(W >= real_w, "Proposal: the feature map has width %lld, less than im_info's %g / feature_stride %lld",
            (long long)W, (double)im_w, (long long)fs);
  for (int64_t a = 0; a < A; a++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t x = 0; x < W; x++) {
        float *b = w->props + ((h * W + x) * A + a) * 5;
        const float d0 = deltas[((a * 4 + 0) * H + h) * W + x], d1 = deltas[((a * 4 + 1) * H + h) * W + x];
        const float d2 = deltas[((a * 4 + 2) * H + h) * W + x], d3 = deltas[((a * 4 + 3) * H + h) * W + x];
        float x1, y1, x2, y2;
        if (p->iou_loss) {
          x1 = b[0] + d0, y1 = b[1] + d1, x2 = b[2] + d2, y2 = b[3] + d3;
        } else {
          const float bw = b[2] - b[0] + 1.0, bh = b[3] - b[1] + 1.0;
          const float cx = b[0] + 0.5 * (bw - 1.0), cy = b[1] + 0.5 * (bh - 1.0);
          const float pcx = d0 * bw + cx, pcy = d1 * bh + cy, pw = expf(d2) * bw, ph = expf(d3) * bh;
          x1 = pcx - 0.5 * (pw - 1.0), y1 = pcy - 0.5 * (ph - 1.0);
          x2 = pcx + 0.5 * (pw - 1.0), y2 = pcy + 0.5 * (ph - 1.0);
        }
/* std::max(std::min(v, hi), 0.0f) */
#define CLIP_TO(v, hi) (((hi) < (v) ? (hi) : (v)) < 0.0f ? 0.0f : ((hi) < (v) ? (hi) : (v)))
        b[0] = CLIP_TO(x1, im_w - 1.0f), b[1] = CLIP_TO(y1, im_h - 1.0f);
        b[2] = CLIP_TO(x2, im_w - 1.0f), b[3] = CLIP_TO(y2, im_h - 1.0f);
#undef CLIP_TO
        if (h >= real_h || x >= real_w) b[4] = -1.0f;
      }
  /* FilterBox: boxes smaller than min_size grow by it and get score -1 */
  const float min_size = p->rpn_min_size * im_scale;
  for (int64_t i = 0; i < count; i++) {
    float *b = w->props + i * 5;
    const float iw = b[2] - b[0] + 1.0f, ih = b[3] - b[1] + 1.0f;
    if (iw < min_size || ih < min_size) {
      b[0] -= min_size / 2, b[1] -= min_size / 2, b[2] += min_size / 2, b[3] += min_size / 2;
      b[4] = -1.0f;
    }
  }
  for (int64_t i = 0; i < count; i++) w->order[i] = (int32_t)i;
  prop_sort_ctx ctx = {w->props};
  det_stable_sort(w->order, w->tmp, count, prop_cmp, &ctx);
  for (int64_t i = 0; i < pre; i++) memcpy(w->ordered + i * 5, w->props + (int64_t)w->order[i] * 5, 5 * sizeof(float));
  /* greedy NMS with MXNet's +1 areas */
  const float thr = (float)p->threshold;
  for (int64_t i = 0; i < pre; i++) {
    const float *d = w->ordered + i * 5;
    w->area[i] = (d[2] - d[0] + 1) * (d[3] - d[1] + 1);
  }
  memset(w->supp, 0, (size_t)pre);
  int64_t kept = 0;
  for (int64_t i = 0; i < pre && kept < post; i++) {
    if (w->supp[i]) continue;
    w->keep[kept++] = (int32_t)i;
    const float *d = w->ordered + i * 5;
    for (int64_t j = i + 1; j < pre; j++) {
      if (w->supp[j]) continue;
      const float *e = w->ordered + j * 5;
      const float xx1 = d[0] > e[0] ? d[0] : e[0], yy1 = d[1] > e[1] ? d[1] : e[1];
      const float xx2 = d[2] < e[2] ? d[2] : e[2], yy2 = d[3] < e[3] ? d[3] : e[3];
      const float iw = xx2 - xx1 + 1.0f, ih = yy2 - yy1 + 1.0f;
      const float inter = (iw > 0.0f ? iw : 0.0f) * (ih > 0.0f ? ih : 0.0f);
      if (inter / (w->area[i] + w->area[j] - inter) > thr) w->supp[j] = 1;
    }
  }
  MXW_CHECK(kept > 0, "Proposal: no proposal survived");
  for (int64_t i = 0; i < p->rpn_post_nms_top_n; i++) {
    const float *d = w->ordered + (int64_t)w->keep[i < kept ? i : i % kept] * 5;
    out[i * 5] = batch;
    for (int k = 0; k < 4; k++) out[i * 5 + 1 + k] = d[k];
    out_score[i] = d[4];
  }
  return 0;
}

static int fwd_proposal_common(const mxw_op_call *c, int multi) {
  const ProposalParam *p = (const ProposalParam *)c->param;
  const char *op = multi ? "MultiProposal" : "Proposal";
  for (int i = 0; i < 3; i++)
    MXW_CHECK(c->inputs[i].dtype == MXW_FLOAT32, "%s: only float32 is supported (%s is %s)", op, k_proposal_inputs[i],
              mxw_dtype_name(c->inputs[i].dtype));
  const mxw_shape *cs = &c->inputs[0].shape;
  const int64_t B = cs->dims[0], A = cs->dims[1] / 2, H = cs->dims[2], W = cs->dims[3];
  if (!multi) MXW_CHECK(B == 1, "Sorry, multiple images each device is not implemented.");
  MXW_CHECK(A == (int64_t)p->nratios * p->nscales,
            "%s: cls_prob has %lld anchors per cell (channels / 2) but ratios x scales make %d", op, (long long)A,
            p->nratios * p->nscales);
  const int64_t count = A * H * W;
  MXW_CHECK(count > 0, "%s: the feature map has no anchors", op);
  MXW_CHECK(count < INT32_MAX, "%s: too many anchors", op);
  int64_t pre = p->rpn_pre_nms_top_n > 0 ? p->rpn_pre_nms_top_n : count;
  pre = pre < count ? pre : count;
  const int64_t post = p->rpn_post_nms_top_n < pre ? p->rpn_post_nms_top_n : pre;
  prop_work w;
  w.props = (float *)det_alloc(op, count * 5, sizeof(float));
  w.ordered = w.props ? (float *)det_alloc(op, pre * 5, sizeof(float)) : NULL;
  w.area = w.ordered ? (float *)det_alloc(op, pre, sizeof(float)) : NULL;
  w.supp = w.area ? (unsigned char *)det_alloc(op, pre, 1) : NULL;
  w.keep = w.supp ? (int32_t *)det_alloc(op, pre, sizeof(int32_t)) : NULL;
  w.order = w.keep ? (int32_t *)det_alloc(op, count, sizeof(int32_t)) : NULL;
  w.tmp = w.order ? (int32_t *)det_alloc(op, count, sizeof(int32_t)) : NULL;
  w.anchors = w.tmp ? (float *)det_alloc(op, A * 4, sizeof(float)) : NULL;
  int rc = w.anchors ? 0 : -1;
  if (rc == 0) {
    /* GenerateAnchors: base [0, 0, stride - 1, stride - 1], for each ratio, each scale */
    const float base[4] = {0.0f, 0.0f, p->feature_stride - 1.0f, p->feature_stride - 1.0f};
    int64_t k = 0;
    for (int j = 0; j < p->nratios; j++)
      for (int s = 0; s < p->nscales; s++, k++) {
        const float scale = p->scales[s], ratio = p->ratios[j];
        const float bw = base[2] - base[0] + 1.0f, bh = base[3] - base[1] + 1.0f;
        const float cx = base[0] + 0.5 * (bw - 1.0f), cy = base[1] + 0.5 * (bh - 1.0f);
        const float size = bw * bh, size_ratios = floorf(size / ratio);
        const float nw = floorf(sqrtf(size_ratios) + 0.5f) * scale;
        const float nh = floorf((nw / scale * ratio) + 0.5f) * scale;
        w.anchors[k * 4 + 0] = cx - 0.5f * (nw - 1.0f);
        w.anchors[k * 4 + 1] = cy - 0.5f * (nh - 1.0f);
        w.anchors[k * 4 + 2] = cx + 0.5f * (nw - 1.0f);
        w.anchors[k * 4 + 3] = cy + 0.5f * (nh - 1.0f);
      }
  }
  const float *scores = (const float *)c->inputs[0].data, *deltas = (const float *)c->inputs[1].data;
  const float *info = (const float *)c->inputs[2].data;
  float *out = (float *)c->outputs[0].data, *out_score = (float *)c->outputs[1].data;
  const int64_t P = p->rpn_post_nms_top_n;
  for (int64_t b = 0; rc == 0 && b < B; b++)
    rc = proposal_image(p, scores + b * 2 * A * H * W, deltas + b * 4 * A * H * W, info + b * 3, A, H, W, pre, post,
                        out + b * P * 5, out_score + b * P, multi ? (float)b : 0.0f, &w);
  free(w.props), free(w.ordered), free(w.area), free(w.supp), free(w.keep), free(w.order), free(w.tmp);
  free(w.anchors);
  return rc;
}
static int fwd_proposal(const mxw_op_call *c) { return fwd_proposal_common(c, 0); }
static int fwd_multi_proposal(const mxw_op_call *c) { return fwd_proposal_common(c, 1); }

static const mxw_op_def op_Proposal = {
    .name = "_contrib_Proposal",
    .doc = MXW_DOC("region proposals of a region proposal network (one image): anchors decoded, clipped, filtered and "
                   "put through NMS; rows [batch_index, x1, y1, x2, y2] (and scores with output_score)"),
    .attrs = k_proposal_attrs,
    .num_attrs = NUM_ATTRS(k_proposal_attrs),
    .param_size = sizeof(ProposalParam),
    .validate = validate_proposal,
    .num_inputs = 3,
    .input_names = k_proposal_inputs,
    .num_outputs = 2,
    .num_visible_outputs_fn = proposal_visible,
    .output_names = k_proposal_outputs,
    .infer_shape = infer_proposal,
    .forward = fwd_proposal,
    .no_grad = 1,
};
static const mxw_op_def op_MultiProposal = {
    .name = "_contrib_MultiProposal",
    .doc =
        MXW_DOC("region proposals of a region proposal network for every image of the batch: rpn_post_nms_top_n rows "
                "[batch_index, x1, y1, x2, y2] per image (and scores with output_score)"),
    .attrs = k_proposal_attrs,
    .num_attrs = NUM_ATTRS(k_proposal_attrs),
    .param_size = sizeof(ProposalParam),
    .validate = validate_proposal,
    .num_inputs = 3,
    .input_names = k_proposal_inputs,
    .num_outputs = 2,
    .num_visible_outputs_fn = proposal_visible,
    .output_names = k_proposal_outputs,
    .infer_shape = infer_multi_proposal,
    .forward = fwd_multi_proposal,
    .no_grad = 1,
};

MXW_FAMILY(contrib_roi, &op_ROIAlign, &op_backward_ROIAlign, &op_ROIPooling, &op_backward_ROIPooling, &op_PSROIPooling,
           &op_backward_PSROIPooling, &op_Proposal, &op_MultiProposal);
