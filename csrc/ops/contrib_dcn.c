/* contrib_dcn.c -- the deformable convolutions of MXNet 1.9.1, one implementation:
 *   _contrib_DeformableConvolution (DCNv1: contrib/deformable_convolution-inl.h,
 *     nn/deformable_im2col.h) and
 *   _contrib_ModulatedDeformableConvolution (DCNv2: contrib/modulated_deformable_convolution-inl.h,
 *     nn/modulated_deformable_im2col.h(.cuh)), GluonCV's CenterNet *_dcnv2 models
 *     (gluon.contrib.cnn.ModulatedDeformableConvolution).
 *
 * Inputs data (N, C, H, W), offset (N, DG * 2 * kh * kw, Ho, Wo), for DCNv2 mask
 * (N, DG * kh * kw, Ho, Wo), weight (F, C / G, kh, kw)[, bias (F,)]. Each kernel tap (i, j) at
 * output (y, x) samples its channel plane at h = y * sh - ph + i * dh + offset[2k],
 * w = x * sw - pw + j * dw + offset[2k + 1] (k = i * kw + j, offsets of the tap's deformable
 * group); DCNv2 scales the sample by mask[k]. The two sample differently, as MXNet's:
 *   DCNv1 (deformable_im2col_bilinear): a point inside [0, H) x [0, W) interpolates its four
 *     neighbours, one on or past the last row (column) reads that row (column); else 0;
 *   DCNv2 (dmcn_im2col_bilinear): a point in (-1, H) x (-1, W) interpolates its four neighbours,
 *     those outside the plane reading 0; else 0.
 * The column matrix then goes through the grouped GEMM of a convolution (plus bias).
 *
 * Backward (MXNet computes DCNv2's on GPU only; the same derivatives here): data (the column
 * gradient Wᵀ . ograd, times the mask, spread over the taps' neighbours), offset (the
 * interpolation's derivative times the mask, summed over the group's channels), mask (the column
 * gradient times the unmasked sample, summed likewise), weight (ograd . colᵀ) and bias (ograd
 * summed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mxw_core.h"
#include "../kernels/gemm.h"

#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
#define TUPLE_STR(t, b) mxw_tuple_str((t), (b), sizeof(b))
typedef char shape_buf[160];

static int set_shape(mxw_shape *dst, int ndim, const int64_t *dims, const char *what) {
  mxw_shape s = mxw_shape_make(ndim, dims);
  return mxw_shape_assign(dst, &s, what);
}

static const char *const k_layouts[] = {"NCW", "NCHW", "NCDHW", NULL};
enum { LAYOUT_NCHW = 1 };
/* both ops' attributes (DCNv1 has no im2col_step) */
typedef struct {
  mxw_tuple kernel, stride, dilate, pad;
  int64_t num_filter, num_group, num_deformable_group, workspace, im2col_step;
  int no_bias;
  mxw_opt_int layout;
} DCNParam;
#define DCN_COMMON_ATTRS                                                                                               \
  MXW_A_SHAPE("kernel", DCNParam, kernel, NULL, "convolution kernel size (h, w)"),                                     \
      MXW_A_SHAPE("stride", DCNParam, stride, "()", "convolution stride (h, w); default 1"),                           \
      MXW_A_SHAPE("dilate", DCNParam, dilate, "()", "convolution dilate (h, w); default 1"),                           \
      MXW_A_SHAPE("pad", DCNParam, pad, "()", "zero pad (h, w); default 0"),                                           \
      MXW_A_INT("num_filter", DCNParam, num_filter, NULL, "number of output channels"),                                \
      MXW_A_INT("num_group", DCNParam, num_group, "1", "number of group partitions"),                                  \
      MXW_A_INT("num_deformable_group", DCNParam, num_deformable_group, "1", "number of deformable group partitions"), \
      MXW_A_INT("workspace", DCNParam, workspace, "1024", "maximum workspace in MB (ignored)"),                        \
      MXW_A_BOOL("no_bias", DCNParam, no_bias, "False", "whether to disable the bias")
static const mxw_attr_spec k_dcn_attrs[] = {
    DCN_COMMON_ATTRS,
    MXW_A_OPT_ENUM("layout", DCNParam, layout, "None", k_layouts, "layout of data, weight and output (NCHW only)"),
};
static const mxw_attr_spec k_mdcn_attrs[] = {
    DCN_COMMON_ATTRS,
    MXW_A_INT("im2col_step", DCNParam, im2col_step, "64",
              "maximum images per im2col computation (the batch must be smaller or a multiple)"),
    MXW_A_OPT_ENUM("layout", DCNParam, layout, "None", k_layouts, "layout of data, weight and output (NCHW only)"),
};
#define DCN_NUM_ATTRS ((int)(sizeof k_dcn_attrs / sizeof k_dcn_attrs[0]))
#define MDCN_NUM_ATTRS ((int)(sizeof k_mdcn_attrs / sizeof k_mdcn_attrs[0]))
static const char *const k_dcn_inputs[] = {"data", "offset", "weight", "bias", NULL};
static const char *const k_dcn_bwd_inputs[] = {"ograd", "data", "offset", "weight", NULL};
static const char *const k_mdcn_inputs[] = {"data", "offset", "mask", "weight", "bias", NULL};
static const char *const k_mdcn_bwd_inputs[] = {"ograd", "data", "offset", "mask", "weight", NULL};

/* v2: the modulated op (mask input, im2col_step) */
static int validate_common(DCNParam *p, const char *op, int v2) {
  char t[96];
  MXW_CHECK(p->kernel.ndim == 2, "%s: kernel=%s: not implemented (only 2-D kernels)", op, TUPLE_STR(&p->kernel, t));
  MXW_CHECK(!p->layout.has || p->layout.v == LAYOUT_NCHW, "%s: only the NCHW layout is supported", op);
  if (p->stride.ndim <= 0) p->stride = (mxw_tuple){.ndim = 2, .v = {1, 1}};
  if (p->dilate.ndim <= 0) p->dilate = (mxw_tuple){.ndim = 2, .v = {1, 1}};
  if (p->pad.ndim <= 0) p->pad = (mxw_tuple){.ndim = 2, .v = {0, 0}};
  MXW_CHECK(p->stride.ndim == 2 && p->dilate.ndim == 2 && p->pad.ndim == 2,
            "stride, dilate and pad must have 2 values like kernel");
  for (int i = 0; i < 2; i++) {
    MXW_CHECK(p->kernel.v[i] > 0, "incorrect kernel size: %s", TUPLE_STR(&p->kernel, t));
    MXW_CHECK(p->stride.v[i] > 0, "incorrect stride size: %s", TUPLE_STR(&p->stride, t));
    MXW_CHECK(p->dilate.v[i] > 0, "incorrect dilate size: %s", TUPLE_STR(&p->dilate, t));
    MXW_CHECK(p->pad.v[i] >= 0, "incorrect pad size: %s", TUPLE_STR(&p->pad, t));
  }
  MXW_CHECK(p->num_filter >= 1, "value %lld for Parameter num_filter should be greater equal to 1",
            (long long)p->num_filter);
  MXW_CHECK(p->num_group >= 1, "num_group must be >= 1, got %lld", (long long)p->num_group);
  MXW_CHECK(p->num_deformable_group >= 1, "num_deformable_group must be >= 1, got %lld",
            (long long)p->num_deformable_group);
  MXW_CHECK(p->workspace >= 0, "value %lld for Parameter workspace should be greater equal to 0",
            (long long)p->workspace);
  if (v2) MXW_CHECK(p->im2col_step >= 1, "im2col_step must be >= 1, got %lld", (long long)p->im2col_step);
  return 0;
}
static int validate_dcn(void *param) { return validate_common((DCNParam *)param, "DeformableConvolution", 0); }
static int validate_mdcn(void *param) {
  return validate_common((DCNParam *)param, "ModulatedDeformableConvolution", 1);
}
static int dcn_num_inputs(const void *param) { return ((const DCNParam *)param)->no_bias ? 3 : 4; }
static int mdcn_num_inputs(const void *param) { return ((const DCNParam *)param)->no_bias ? 4 : 5; }
/* shapes of both ops (v2: the mask input, at 2, and MXNet's extra checks of DCNv2) */
static int infer_common(const DCNParam *p, int v2, int nin, mxw_shape *in, mxw_shape *out) {
  shape_buf a;
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim == 4, "Input data should be 4D in batch-num_filter-y-x, got shape %s", SHAPE_STR(&in[0], a));
  const int64_t N = in[0].dims[0], C = in[0].dims[1], H = in[0].dims[2], W = in[0].dims[3];
  const int64_t kh = p->kernel.v[0], kw = p->kernel.v[1], F = p->num_filter, G = p->num_group;
  const int64_t DG = p->num_deformable_group;
  const int wi = v2 ? 3 : 2; /* the weight's input */
  if (v2 && N >= 0)
    MXW_CHECK(N <= p->im2col_step || N % p->im2col_step == 0,
              "incorrect batch size: %lld is larger than im2col_step %lld and not a multiple of it", (long long)N,
              (long long)p->im2col_step);
  if (C >= 0) {
    MXW_CHECK(C % G == 0, "input num_filter must divide group size (channels %lld, num_group %lld)", (long long)C,
              (long long)G);
    MXW_CHECK(C % DG == 0,
              "input num_filter must divide deformable group size (channels %lld, num_deformable_group %lld)",
              (long long)C, (long long)DG);
  }
  MXW_CHECK(F % G == 0, "output num_filter must divide group size (num_filter %lld, num_group %lld)", (long long)F,
            (long long)G);
  if (v2)
    MXW_CHECK(F % DG == 0, "output num_filter must divide deformable group size (num_filter %lld, %lld groups)",
              (long long)F, (long long)DG);
  const int64_t wd[4] = {F, C >= 0 ? C / G : -1, kh, kw};
  MXW_TRY(set_shape(&in[wi], 4, wd, "weight"));
  if (!p->no_bias && nin > wi + 1) MXW_TRY(set_shape(&in[wi + 1], 1, &F, "bias"));
  int64_t Ho = -1, Wo = -1;
  if (H >= 0) {
    if (!v2)
      MXW_CHECK(kh <= H + 2 * p->pad.v[0], "kernel size exceed input (kernel %lld, padded height %lld)", (long long)kh,
                (long long)(H + 2 * p->pad.v[0]));
    Ho = (H + 2 * p->pad.v[0] - (p->dilate.v[0] * (kh - 1) + 1)) / p->stride.v[0] + 1;
    MXW_CHECK(H + 2 * p->pad.v[0] - (p->dilate.v[0] * (kh - 1) + 1) >= 0 && Ho > 0,
              "the dilated kernel is larger than the padded input height %lld", (long long)(H + 2 * p->pad.v[0]));
  }
  if (W >= 0) {
    if (!v2)
      MXW_CHECK(kw <= W + 2 * p->pad.v[1], "kernel size exceed input (kernel %lld, padded width %lld)", (long long)kw,
                (long long)(W + 2 * p->pad.v[1]));
    Wo = (W + 2 * p->pad.v[1] - (p->dilate.v[1] * (kw - 1) + 1)) / p->stride.v[1] + 1;
    MXW_CHECK(W + 2 * p->pad.v[1] - (p->dilate.v[1] * (kw - 1) + 1) >= 0 && Wo > 0,
              "the dilated kernel is larger than the padded input width %lld", (long long)(W + 2 * p->pad.v[1]));
  }
  for (int m = 1; m <= (v2 ? 2 : 1); m++) {
    const mxw_shape *o = &in[m];
    const char *what = m == 1 ? "offset" : "mask";
    const int64_t per = (m == 1 ? 2 : 1) * kh * kw;
    if (o->ndim < 0) continue;
    MXW_CHECK(o->ndim == 4, "Input %s should be 4D in batch-num_filter-y-x, got shape %s", what, SHAPE_STR(o, a));
    MXW_CHECK(o->dims[2] < 0 || Ho < 0 || o->dims[2] == Ho,
              "output height must equal to %s map height (output %lld, %s %lld)", what, (long long)Ho, what,
              (long long)o->dims[2]);
    MXW_CHECK(o->dims[3] < 0 || Wo < 0 || o->dims[3] == Wo,
              "output width must equal to %s map width (output %lld, %s %lld)", what, (long long)Wo, what,
              (long long)o->dims[3]);
    if (v2)
      MXW_CHECK(o->dims[1] < 0 || o->dims[1] == per * DG,
                "%s filter must divide deformable group size: %s has %lld channels, expected %lld (%s * kernel[0] * "
                "kernel[1] * num_deformable_group)",
                what, what, (long long)o->dims[1], (long long)(per * DG), m == 1 ? "2" : "1");
    else /* DCNv1's check, as MXNet's: an integer division */
      MXW_CHECK(o->dims[1] < 0 || (o->dims[1] % (kh * kw) == 0 && o->dims[1] / (2 * kh * kw) == DG),
                "offset filter must divide deformable group size: offset has %lld channels, expected "
                "2 * kernel[0] * kernel[1] * num_deformable_group = %lld",
                (long long)o->dims[1], (long long)(2 * kh * kw * DG));
  }
  const int64_t od[4] = {N, 2 * kh * kw * DG, Ho, Wo}, md[4] = {N, kh * kw * DG, Ho, Wo}, outd[4] = {N, F, Ho, Wo};
  MXW_TRY(set_shape(&in[1], 4, od, "offset"));
  if (v2) MXW_TRY(set_shape(&in[2], 4, md, "mask"));
  return set_shape(&out[0], 4, outd, "output");
}
static int infer_dcn(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nout;
  return infer_common((const DCNParam *)param, 0, nin, in, out);
}
static int infer_mdcn(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nout;
  return infer_common((const DCNParam *)param, 1, nin, in, out);
}

typedef struct {
  int64_t N, C, H, W, F, G, DG, kh, kw, ph, pw, sh, sw, dh, dw, Ho, Wo;
} dcn_geom;
static dcn_geom dcn_make_geom(const DCNParam *p, const mxw_shape *data, const mxw_shape *out) {
  dcn_geom g = {data->dims[0],           data->dims[1],  data->dims[2],  data->dims[3], p->num_filter, p->num_group,
                p->num_deformable_group, p->kernel.v[0], p->kernel.v[1], p->pad.v[0],   p->pad.v[1],   p->stride.v[0],
                p->stride.v[1],          p->dilate.v[0], p->dilate.v[1], out->dims[2],  out->dims[3]};
  return g;
}

/* The four neighbours of (h, w) as plane indices and their bilinear weights; ok = 0: the sample
 * is 0. DCNv2 (v2): inside (-1, H) x (-1, W), a neighbour outside the plane (in[] = 0) reads 0;
 * DCNv1: inside [0, H) x [0, W), a point on or past the last row (column) reads that row (column)
 * alone (the neighbour index repeats, its weight 0). */
typedef struct {
  int64_t idx[4];
  int in[4];
  double lh, lw;
  int ok;
} dcn_pt;
static inline dcn_pt dcn_locate(int v2, double h, double w, int64_t H, int64_t W) {
  dcn_pt p;
  memset(&p, 0, sizeof p);
  if (v2 ? !(h > -1 && w > -1 && h < (double)H && w < (double)W)
         : !(h >= 0 && w >= 0 && h < (double)H && w < (double)W))
    return p;
  int64_t hl = (int64_t)floor(h), wl = (int64_t)floor(w), hh = hl + 1, wh = wl + 1;
  if (!v2 && hl >= H - 1) {
    hh = hl = H - 1;
    h = (double)hl;
  }
  if (!v2 && wl >= W - 1) {
    wh = wl = W - 1;
    w = (double)wl;
  }
  p.lh = h - (double)hl;
  p.lw = w - (double)wl;
  const int64_t hs[4] = {hl, hl, hh, hh}, ws[4] = {wl, wh, wl, wh};
  for (int q = 0; q < 4; q++) {
    p.in[q] = hs[q] >= 0 && hs[q] <= H - 1 && ws[q] >= 0 && ws[q] <= W - 1;
    p.idx[q] = p.in[q] ? hs[q] * W + ws[q] : 0;
  }
  p.ok = 1;
  return p;
}

#define DEFINE_DCN(T, SFX, GEMM)                                                                                       \
  static inline void dcn_pos_##SFX(const dcn_geom *g, const T *off, int64_t i, int64_t j, int64_t y, int64_t x, T *ph, \
                                   T *pw) {                                                                            \
    const int64_t HWo = g->Ho * g->Wo, k = i * g->kw + j;                                                              \
    *ph = (T)(y * g->sh - g->ph + i * g->dh) + off[(2 * k) * HWo + y * g->Wo + x];                                     \
    *pw = (T)(x * g->sw - g->pw + j * g->dw) + off[(2 * k + 1) * HWo + y * g->Wo + x];                                 \
  }                                                                                                                    \
  static inline T dcn_sample_##SFX(const T *plane, const dcn_pt *p) {                                                  \
    const T lh = (T)p->lh, lw = (T)p->lw, hh = (T)1 - lh, hw = (T)1 - lw;                                              \
    const T v1 = p->in[0] ? plane[p->idx[0]] : 0, v2 = p->in[1] ? plane[p->idx[1]] : 0;                                \
    const T v3 = p->in[2] ? plane[p->idx[2]] : 0, v4 = p->in[3] ? plane[p->idx[3]] : 0;                                \
    return hh * hw * v1 + hh * lw * v2 + lh * hw * v3 + lh * lw * v4;                                                  \
  }                                                                                                                    \
  /* col (C * kh * kw, Ho * Wo) of one image, masked (DCNv2) when mask is given */                                     \
  static void dcn_im2col_##SFX(const dcn_geom *g, const T *im, const T *offset, const T *mask, T *col) {               \
    const int64_t HWo = g->Ho * g->Wo, cpg = g->C / g->DG, K = g->kh * g->kw;                                          \
    for (int64_t c = 0; c < g->C; c++) {                                                                               \
      const int64_t dg = c / cpg;                                                                                      \
      const T *plane = im + c * g->H * g->W, *off = offset + dg * 2 * K * HWo,                                         \
              *msk = mask ? mask + dg * K * HWo : NULL;                                                                \
      for (int64_t i = 0; i < g->kh; i++)                                                                              \
        for (int64_t j = 0; j < g->kw; j++) {                                                                          \
          const int64_t k = i * g->kw + j;                                                                             \
          T *row = col + (c * K + k) * HWo;                                                                            \
          for (int64_t y = 0; y < g->Ho; y++)                                                                          \
            for (int64_t x = 0; x < g->Wo; x++) {                                                                      \
              T h, w;                                                                                                  \
              dcn_pos_##SFX(g, off, i, j, y, x, &h, &w);                                                               \
              const dcn_pt p = dcn_locate(mask != NULL, (double)h, (double)w, g->H, g->W);                             \
              const T v = p.ok ? dcn_sample_##SFX(plane, &p) : (T)0;                                                   \
              row[y * g->Wo + x] = msk ? v * msk[k * HWo + y * g->Wo + x] : v;                                         \
            }                                                                                                          \
        }                                                                                                              \
    }                                                                                                                  \
  }                                                                                                                    \
  /* d image (+=), d offset and d mask (=, DCNv2) of one image from the column gradient */                             \
  static void dcn_col2im_##SFX(const dcn_geom *g, const T *colg, const T *im, const T *offset, const T *mask, T *dim,  \
                               T *doffset, T *dmask) {                                                                 \
    const int64_t HWo = g->Ho * g->Wo, cpg = g->C / g->DG, K = g->kh * g->kw;                                          \
    memset(doffset, 0, (size_t)(g->DG * 2 * K * HWo) * sizeof(T));                                                     \
    if (dmask) memset(dmask, 0, (size_t)(g->DG * K * HWo) * sizeof(T));                                                \
    for (int64_t c = 0; c < g->C; c++) {                                                                               \
      const int64_t dg = c / cpg;                                                                                      \
      const T *plane = im + c * g->H * g->W, *off = offset + dg * 2 * K * HWo,                                         \
              *msk = mask ? mask + dg * K * HWo : NULL;                                                                \
      T *dplane = dim + c * g->H * g->W, *doff = doffset + dg * 2 * K * HWo,                                           \
        *dmsk = dmask ? dmask + dg * K * HWo : NULL;                                                                   \
      for (int64_t i = 0; i < g->kh; i++)                                                                              \
        for (int64_t j = 0; j < g->kw; j++) {                                                                          \
          const int64_t k = i * g->kw + j;                                                                             \
          const T *row = colg + (c * K + k) * HWo;                                                                     \
          for (int64_t y = 0; y < g->Ho; y++)                                                                          \
            for (int64_t x = 0; x < g->Wo; x++) {                                                                      \
              T h, w;                                                                                                  \
              dcn_pos_##SFX(g, off, i, j, y, x, &h, &w);                                                               \
              const dcn_pt p = dcn_locate(mask != NULL, (double)h, (double)w, g->H, g->W);                             \
              if (!p.ok) continue;                                                                                     \
              const int64_t q = y * g->Wo + x;                                                                         \
              const T gv = row[q], m = msk ? msk[k * HWo + q] : (T)1, gm = gv * m;                                     \
              const T lh = (T)p.lh, lw = (T)p.lw, hh = (T)1 - lh, hw = (T)1 - lw;                                      \
              const T wt[4] = {hh * hw, hh * lw, lh * hw, lh * lw};                                                    \
              T v[4];                                                                                                  \
              for (int t = 0; t < 4; t++) {                                                                            \
                v[t] = p.in[t] ? plane[p.idx[t]] : (T)0;                                                               \
                if (p.in[t]) dplane[p.idx[t]] += wt[t] * gm;                                                           \
              }                                                                                                        \
              doff[(2 * k) * HWo + q] += gm * (-hw * v[0] - lw * v[1] + hw * v[2] + lw * v[3]);                        \
              doff[(2 * k + 1) * HWo + q] += gm * (-hh * v[0] + hh * v[1] - lh * v[2] + lh * v[3]);                    \
              if (dmsk) dmsk[k * HWo + q] += gv * (wt[0] * v[0] + wt[1] * v[1] + wt[2] * v[2] + wt[3] * v[3]);         \
            }                                                                                                          \
        }                                                                                                              \
    }                                                                                                                  \
  }                                                                                                                    \
  static int dcn_forward_##SFX(const dcn_geom *g, const T *data, const T *offset, const T *mask, const T *weight,      \
                               const T *bias, T *out) {                                                                \
    const int64_t HWo = g->Ho * g->Wo, M = g->F / g->G, K = g->C / g->G * g->kh * g->kw, KK = g->kh * g->kw;           \
    T *col = (T *)mxw_scratch(0, (size_t)(g->C * KK * HWo + 1) * sizeof(T));                                           \
    if (!col) return -1;                                                                                               \
    for (int64_t n = 0; n < g->N; n++) {                                                                               \
      dcn_im2col_##SFX(g, data + n * g->C * g->H * g->W, offset + n * g->DG * 2 * KK * HWo,                            \
                       mask ? mask + n * g->DG * KK * HWo : NULL, col);                                                \
      T *o = out + n * g->F * HWo;                                                                                     \
      for (int64_t gr = 0; gr < g->G; gr++)                                                                            \
        MXW_TRY(GEMM(0, 0, M, HWo, K, 1, weight + gr * M * K, K, col + gr * K * HWo, HWo, 0, o + gr * M * HWo, HWo));  \
      if (bias)                                                                                                        \
        for (int64_t f = 0; f < g->F; f++)                                                                             \
          for (int64_t q = 0; q < HWo; q++) o[f * HWo + q] += bias[f];                                                 \
    }                                                                                                                  \
    return 0;                                                                                                          \
  }                                                                                                                    \
  static int dcn_backward_##SFX(const dcn_geom *g, const T *og, const T *data, const T *offset, const T *mask,         \
                                const T *weight, T *ddata, T *doffset, T *dmask, T *dweight, T *dbias) {               \
    const int64_t HWo = g->Ho * g->Wo, M = g->F / g->G, K = g->C / g->G * g->kh * g->kw, KK = g->kh * g->kw;           \
    const size_t colsz = (size_t)(g->C * KK * HWo + 1) * sizeof(T);                                                    \
    T *col = (T *)mxw_scratch(0, colsz), *colg = (T *)mxw_scratch(1, colsz);                                           \
    if (!col || !colg) return -1;                                                                                      \
    memset(ddata, 0, (size_t)(g->N * g->C * g->H * g->W) * sizeof(T));                                                 \
    if (g->N == 0) memset(dweight, 0, (size_t)(g->F * K) * sizeof(T));                                                 \
    for (int64_t n = 0; n < g->N; n++) {                                                                               \
      const T *ogn = og + n * g->F * HWo, *im = data + n * g->C * g->H * g->W;                                         \
      const T *off = offset + n * g->DG * 2 * KK * HWo, *msk = mask ? mask + n * g->DG * KK * HWo : NULL;              \
      for (int64_t gr = 0; gr < g->G; gr++)                                                                            \
        MXW_TRY(                                                                                                       \
            GEMM(1, 0, K, HWo, M, 1, weight + gr * M * K, K, ogn + gr * M * HWo, HWo, 0, colg + gr * K * HWo, HWo));   \
      dcn_col2im_##SFX(g, colg, im, off, msk, ddata + n * g->C * g->H * g->W, doffset + n * g->DG * 2 * KK * HWo,      \
                       dmask ? dmask + n * g->DG * KK * HWo : NULL);                                                   \
      dcn_im2col_##SFX(g, im, off, msk, col);                                                                          \
      for (int64_t gr = 0; gr < g->G; gr++)                                                                            \
        MXW_TRY(GEMM(0, 1, M, K, HWo, 1, ogn + gr * M * HWo, HWo, col + gr * K * HWo, HWo, n ? 1 : 0,                  \
                     dweight + gr * M * K, K));                                                                        \
    }                                                                                                                  \
    if (dbias)                                                                                                         \
      for (int64_t f = 0; f < g->F; f++) {                                                                             \
        T s = 0;                                                                                                       \
        for (int64_t n = 0; n < g->N; n++)                                                                             \
          for (int64_t q = 0; q < HWo; q++) s += og[(n * g->F + f) * HWo + q];                                         \
        dbias[f] = s;                                                                                                  \
      }                                                                                                                \
    return 0;                                                                                                          \
  }
DEFINE_DCN(float, f32, mxw_sgemm)
DEFINE_DCN(double, f64, mxw_dgemm)

static int check_dtypes(const mxw_op_call *c, const char *op) {
  const int dt = c->inputs[0].dtype;
  MXW_CHECK(dt == MXW_FLOAT32 || dt == MXW_FLOAT64, "%s supports float32 and float64, got %s", op, mxw_dtype_name(dt));
  for (int i = 1; i < c->num_inputs; i++)
    MXW_CHECK(c->inputs[i].dtype == dt, "%s: input %d is %s, data is %s", op, i, mxw_dtype_name(c->inputs[i].dtype),
              mxw_dtype_name(dt));
  return 0;
}
/* (data, offset[, mask], weight[, bias]) -> out */
static int forward_common(const mxw_op_call *c, int v2) {
  const DCNParam *p = (const DCNParam *)c->param;
  MXW_TRY(check_dtypes(c, v2 ? "ModulatedDeformableConvolution" : "DeformableConvolution"));
  const dcn_geom g = dcn_make_geom(p, &c->inputs[0].shape, &c->outputs[0].shape);
  const mxw_tensor *in = c->inputs;
  const void *mask = v2 ? in[2].data : NULL, *weight = in[v2 ? 3 : 2].data;
  const void *bias = p->no_bias ? NULL : in[v2 ? 4 : 3].data;
  if (in[0].dtype == MXW_FLOAT32)
    return dcn_forward_f32(&g, in[0].data, in[1].data, mask, weight, bias, c->outputs[0].data);
  return dcn_forward_f64(&g, in[0].data, in[1].data, mask, weight, bias, c->outputs[0].data);
}
static int fwd_dcn(const mxw_op_call *c) { return forward_common(c, 0); }
static int fwd_mdcn(const mxw_op_call *c) { return forward_common(c, 1); }
/* (ograd, data, offset[, mask], weight) -> (d data, d offset[, d mask], d weight[, d bias]) */
static int backward_common(const mxw_op_call *c, int v2) {
  const DCNParam *p = (const DCNParam *)c->param;
  MXW_TRY(check_dtypes(c, v2 ? "ModulatedDeformableConvolution" : "DeformableConvolution"));
  const dcn_geom g = dcn_make_geom(p, &c->inputs[1].shape, &c->inputs[0].shape);
  const mxw_tensor *in = c->inputs;
  mxw_tensor *o = c->outputs;
  const int w = v2 ? 4 : 3; /* the weight's input and its gradient's output (+ 1) */
  const void *mask = v2 ? in[3].data : NULL;
  void *dmask = v2 ? o[2].data : NULL, *dbias = p->no_bias ? NULL : o[w].data;
  if (in[0].dtype == MXW_FLOAT32)
    return dcn_backward_f32(&g, in[0].data, in[1].data, in[2].data, mask, in[w].data, o[0].data, o[1].data, dmask,
                            o[w - 1].data, dbias);
  return dcn_backward_f64(&g, in[0].data, in[1].data, in[2].data, mask, in[w].data, o[0].data, o[1].data, dmask,
                          o[w - 1].data, dbias);
}
static int fwd_backward_dcn(const mxw_op_call *c) { return backward_common(c, 0); }
static int fwd_backward_mdcn(const mxw_op_call *c) { return backward_common(c, 1); }
/* the gradients take the inputs' shapes (ograd first), the bias gradient (num_filter,) */
static int infer_backward(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const DCNParam *p = (const DCNParam *)param;
  const int n = p->no_bias ? nout : nout - 1;
  for (int i = 0; i < n && i + 1 < nin; i++) MXW_TRY(mxw_shape_assign(&out[i], &in[i + 1], "input gradient"));
  if (!p->no_bias && nout > n) MXW_TRY(set_shape(&out[n], 1, &p->num_filter, "bias gradient"));
  return 0;
}
static int grad_common(mxw_grad_ctx *g, int v2) {
  const DCNParam *p = (const DCNParam *)mxw_grad_param(g);
  mxw_gid in[5] = {mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1), mxw_grad_in(g, 2),
                   v2 ? mxw_grad_in(g, 3) : -1};
  mxw_gid d[5];
  const int n = (v2 ? 4 : 3) + !p->no_bias;
  MXW_TRY(mxw_grad_op_fwd(
      g, v2 ? "_backward__contrib_ModulatedDeformableConvolution" : "_backward__contrib_DeformableConvolution", in,
      v2 ? 5 : 4, d, n));
  for (int i = 0; i < n; i++) MXW_TRY(mxw_grad_set(g, i, d[i]));
  return 0;
}
static int grad_dcn(mxw_grad_ctx *g) { return grad_common(g, 0); }
static int grad_mdcn(mxw_grad_ctx *g) { return grad_common(g, 1); }

static const mxw_op_def op_dcn = {
    .name = "_contrib_DeformableConvolution",
    .doc = MXW_DOC(
        "2-D deformable convolution: each kernel tap samples data (bilinear) at its position plus a learned "
        "offset (batch, num_deformable_group * kh * kw * 2, out_h, out_w); weight (num_filter, C / num_group, kh, kw)"),
    .attrs = k_dcn_attrs,
    .num_attrs = DCN_NUM_ATTRS,
    .param_size = sizeof(DCNParam),
    .validate = validate_dcn,
    .num_inputs = 4,
    .input_names = k_dcn_inputs,
    .num_inputs_fn = dcn_num_inputs,
    .num_outputs = 1,
    .infer_shape = infer_dcn,
    .forward = fwd_dcn,
    .gradient = grad_dcn};
static const mxw_op_def op_backward_dcn = {
    .name = "_backward__contrib_DeformableConvolution",
    .doc = MXW_DOC("the gradient of _contrib_DeformableConvolution (inputs ograd, data, offset, weight)"),
    .attrs = k_dcn_attrs,
    .num_attrs = DCN_NUM_ATTRS,
    .param_size = sizeof(DCNParam),
    .validate = validate_dcn,
    .num_inputs = 4,
    .input_names = k_dcn_bwd_inputs,
    .num_outputs = 4,
    .num_outputs_fn = dcn_num_inputs,
    .infer_shape = infer_backward,
    .forward = fwd_backward_dcn};
static const mxw_op_def op_mdcn = {
    .name = "_contrib_ModulatedDeformableConvolution",
    .doc = MXW_DOC(
        "2-D modulated deformable convolution (DCNv2): each kernel tap samples data (bilinear) at its position "
        "plus a learned offset (batch, num_deformable_group * kh * kw * 2, out_h, out_w) and scales it by a mask "
        "(batch, num_deformable_group * kh * kw, out_h, out_w); weight (num_filter, C / num_group, kh, kw)"),
    .attrs = k_mdcn_attrs,
    .num_attrs = MDCN_NUM_ATTRS,
    .param_size = sizeof(DCNParam),
    .validate = validate_mdcn,
    .num_inputs = 5,
    .input_names = k_mdcn_inputs,
    .num_inputs_fn = mdcn_num_inputs,
    .num_outputs = 1,
    .infer_shape = infer_mdcn,
    .forward = fwd_mdcn,
    .gradient = grad_mdcn};
static const mxw_op_def op_backward_mdcn = {
    .name = "_backward__contrib_ModulatedDeformableConvolution",
    .doc =
        MXW_DOC("the gradient of _contrib_ModulatedDeformableConvolution (inputs ograd, data, offset, mask, weight)"),
    .attrs = k_mdcn_attrs,
    .num_attrs = MDCN_NUM_ATTRS,
    .param_size = sizeof(DCNParam),
    .validate = validate_mdcn,
    .num_inputs = 5,
    .input_names = k_mdcn_bwd_inputs,
    .num_outputs = 5,
    .num_outputs_fn = mdcn_num_inputs,
    .infer_shape = infer_backward,
    .forward = fwd_backward_mdcn};

MXW_FAMILY(contrib_dcn, &op_dcn, &op_backward_dcn, &op_mdcn, &op_backward_mdcn);
