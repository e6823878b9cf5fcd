/* contrib_dcn.c -- _contrib_ModulatedDeformableConvolution (DCNv2), as MXNet 1.9.1's
 * contrib/modulated_deformable_convolution-inl.h and contrib/nn/modulated_deformable_im2col.h(.cuh):
 * GluonCV's CenterNet *_dcnv2 models (gluon.contrib.cnn.ModulatedDeformableConvolution).
 *
 * Inputs data (N, C, H, W), offset (N, DG * 2 * kh * kw, Ho, Wo), mask (N, DG * kh * kw, Ho, Wo),
 * weight (F, C / G, kh, kw)[, bias (F,)]. Each kernel tap (i, j) at output (y, x) samples its
 * channel plane at h = y * sh - ph + i * dh + offset[2k], w = x * sw - pw + j * dw + offset[2k + 1]
 * (k = i * kw + j, offsets of the tap's deformable group) and scales the sample by mask[k]. The
 * sample is MXNet's dmcn_im2col_bilinear: a point in (-1, H) x (-1, W) interpolates its four
 * neighbours, those outside the plane reading 0; a point outside that box is 0. The column
 * matrix then goes through the grouped GEMM of a convolution (plus bias).
 *
 * Backward (MXNet computes it on GPU only; the same derivatives here): data (the column gradient
 * Wᵀ . ograd, times the mask, spread over the taps' neighbours), offset (the interpolation's
 * derivative times the mask, summed over the group's channels), mask (the column gradient times
 * the unmasked sample, summed likewise), weight (ograd . colᵀ) and bias (ograd summed). */
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
typedef struct {
  mxw_tuple kernel, stride, dilate, pad;
  int64_t num_filter, num_group, num_deformable_group, workspace, im2col_step;
  int no_bias;
  mxw_opt_int layout;
} MDCNParam;
static const mxw_attr_spec k_mdcn_attrs[] = {
    MXW_A_SHAPE("kernel", MDCNParam, kernel, NULL, "convolution kernel size (h, w)"),
    MXW_A_SHAPE("stride", MDCNParam, stride, "()", "convolution stride (h, w); default 1"),
    MXW_A_SHAPE("dilate", MDCNParam, dilate, "()", "convolution dilate (h, w); default 1"),
    MXW_A_SHAPE("pad", MDCNParam, pad, "()", "zero pad (h, w); default 0"),
    MXW_A_INT("num_filter", MDCNParam, num_filter, NULL, "number of output channels"),
    MXW_A_INT("num_group", MDCNParam, num_group, "1", "number of group partitions"),
    MXW_A_INT("num_deformable_group", MDCNParam, num_deformable_group, "1", "number of deformable group partitions"),
    MXW_A_INT("workspace", MDCNParam, workspace, "1024", "maximum workspace in MB (ignored)"),
    MXW_A_BOOL("no_bias", MDCNParam, no_bias, "False", "whether to disable the bias"),
    MXW_A_INT("im2col_step", MDCNParam, im2col_step, "64",
              "maximum images per im2col computation (the batch must be smaller or a multiple)"),
    MXW_A_OPT_ENUM("layout", MDCNParam, layout, "None", k_layouts, "layout of data, weight and output (NCHW only)"),
};
#define MDCN_NUM_ATTRS ((int)(sizeof k_mdcn_attrs / sizeof k_mdcn_attrs[0]))
static const char *const k_mdcn_inputs[] = {"data", "offset", "mask", "weight", "bias", NULL};
static const char *const k_mdcn_bwd_inputs[] = {"ograd", "data", "offset", "mask", "weight", NULL};

static int validate_mdcn(void *param) {
  MDCNParam *p = (MDCNParam *)param;
  char t[96];
  MXW_CHECK(p->kernel.ndim == 2, "ModulatedDeformableConvolution: kernel=%s: not implemented (only 2-D kernels)",
            TUPLE_STR(&p->kernel, t));
  MXW_CHECK(!p->layout.has || p->layout.v == LAYOUT_NCHW,
            "ModulatedDeformableConvolution: only the NCHW layout is supported");
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
  MXW_CHECK(p->im2col_step >= 1, "im2col_step must be >= 1, got %lld", (long long)p->im2col_step);
  return 0;
}
static int mdcn_num_inputs(const void *param) { return ((const MDCNParam *)param)->no_bias ? 4 : 5; }

static int infer_mdcn(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const MDCNParam *p = (const MDCNParam *)param;
  (void)nout;
  shape_buf a;
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim == 4, "Input data should be 4D in batch-num_filter-y-x, got shape %s", SHAPE_STR(&in[0], a));
  const int64_t N = in[0].dims[0], C = in[0].dims[1], H = in[0].dims[2], W = in[0].dims[3];
  const int64_t kh = p->kernel.v[0], kw = p->kernel.v[1], F = p->num_filter, G = p->num_group;
  const int64_t DG = p->num_deformable_group;
  if (N >= 0)
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
  MXW_CHECK(F % DG == 0, "output num_filter must divide deformable group size (num_filter %lld, %lld groups)",
            (long long)F, (long long)DG);
  const int64_t wd[4] = {F, C >= 0 ? C / G : -1, kh, kw};
  MXW_TRY(set_shape(&in[3], 4, wd, "weight"));
  if (!p->no_bias && nin > 4) MXW_TRY(set_shape(&in[4], 1, &F, "bias"));
  int64_t Ho = -1, Wo = -1;
  if (H >= 0) {
    Ho = (H + 2 * p->pad.v[0] - (p->dilate.v[0] * (kh - 1) + 1)) / p->stride.v[0] + 1;
    MXW_CHECK(H + 2 * p->pad.v[0] - (p->dilate.v[0] * (kh - 1) + 1) >= 0 && Ho > 0,
              "the dilated kernel is larger than the padded input height %lld", (long long)(H + 2 * p->pad.v[0]));
  }
  if (W >= 0) {
    Wo = (W + 2 * p->pad.v[1] - (p->dilate.v[1] * (kw - 1) + 1)) / p->stride.v[1] + 1;
    MXW_CHECK(W + 2 * p->pad.v[1] - (p->dilate.v[1] * (kw - 1) + 1) >= 0 && Wo > 0,
              "the dilated kernel is larger than the padded input width %lld", (long long)(W + 2 * p->pad.v[1]));
  }
  for (int m = 1; m <= 2; m++) {
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
    MXW_CHECK(o->dims[1] < 0 || o->dims[1] == per * DG,
              "%s filter must divide deformable group size: %s has %lld channels, expected %lld (%s * kernel[0] * "
              "kernel[1] * num_deformable_group)",
              what, what, (long long)o->dims[1], (long long)(per * DG), m == 1 ? "2" : "1");
  }
  const int64_t od[4] = {N, 2 * kh * kw * DG, Ho, Wo}, md[4] = {N, kh * kw * DG, Ho, Wo}, outd[4] = {N, F, Ho, Wo};
  MXW_TRY(set_shape(&in[1], 4, od, "offset"));
  MXW_TRY(set_shape(&in[2], 4, md, "mask"));
  return set_shape(&out[0], 4, outd, "output");
}

typedef struct {
  int64_t N, C, H, W, F, G, DG, kh, kw, ph, pw, sh, sw, dh, dw, Ho, Wo;
} mdcn_geom;
static mdcn_geom mdcn_make_geom(const MDCNParam *p, const mxw_shape *data, const mxw_shape *out) {
  mdcn_geom g = {data->dims[0],           data->dims[1],  data->dims[2],  data->dims[3], p->num_filter, p->num_group,
                 p->num_deformable_group, p->kernel.v[0], p->kernel.v[1], p->pad.v[0],   p->pad.v[1],   p->stride.v[0],
                 p->stride.v[1],          p->dilate.v[0], p->dilate.v[1], out->dims[2],  out->dims[3]};
  return g;
}

/* The four neighbours of (h, w) and their bilinear weights; ok = 0 outside (-1, H) x (-1, W)
 * (then the sample is 0). A neighbour outside the plane has in[] = 0 (it reads 0). */
typedef struct {
  int64_t idx[4];
  int in[4];
  double lh, lw;
  int ok;
} mdcn_pt;
static inline mdcn_pt mdcn_locate(double h, double w, int64_t H, int64_t W) {
  mdcn_pt p;
  memset(&p, 0, sizeof p);
  if (!(h > -1 && w > -1 && h < (double)H && w < (double)W)) return p;
  const int64_t hl = (int64_t)floor(h), wl = (int64_t)floor(w), hh = hl + 1, wh = wl + 1;
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

#define DEFINE_MDCN(T, SFX, GEMM)                                                                                     \
  static inline void mdcn_pos_##SFX(const mdcn_geom *g, const T *off, int64_t i, int64_t j, int64_t y, int64_t x,     \
                                    T *ph, T *pw) {                                                                   \
    const int64_t HWo = g->Ho * g->Wo, k = i * g->kw + j;                                                             \
    *ph = (T)(y * g->sh - g->ph + i * g->dh) + off[(2 * k) * HWo + y * g->Wo + x];                                    \
    *pw = (T)(x * g->sw - g->pw + j * g->dw) + off[(2 * k + 1) * HWo + y * g->Wo + x];                                \
  }                                                                                                                   \
  static inline T mdcn_sample_##SFX(const T *plane, const mdcn_pt *p) {                                               \
    const T lh = (T)p->lh, lw = (T)p->lw, hh = (T)1 - lh, hw = (T)1 - lw;                                             \
    const T v1 = p->in[0] ? plane[p->idx[0]] : 0, v2 = p->in[1] ? plane[p->idx[1]] : 0;                               \
    const T v3 = p->in[2] ? plane[p->idx[2]] : 0, v4 = p->in[3] ? plane[p->idx[3]] : 0;                               \
    return hh * hw * v1 + hh * lw * v2 + lh * hw * v3 + lh * lw * v4;                                                 \
  }                                                                                                                   \
  /* col (C * kh * kw, Ho * Wo) of one image, masked */                                                               \
  static void mdcn_im2col_##SFX(const mdcn_geom *g, const T *im, const T *offset, const T *mask, T *col) {            \
    const int64_t HWo = g->Ho * g->Wo, cpg = g->C / g->DG, K = g->kh * g->kw;                                         \
    for (int64_t c = 0; c < g->C; c++) {                                                                              \
      const int64_t dg = c / cpg;                                                                                     \
      const T *plane = im + c * g->H * g->W, *off = offset + dg * 2 * K * HWo, *msk = mask + dg * K * HWo;            \
      for (int64_t i = 0; i < g->kh; i++)                                                                             \
        for (int64_t j = 0; j < g->kw; j++) {                                                                         \
          const int64_t k = i * g->kw + j;                                                                            \
          T *row = col + (c * K + k) * HWo;                                                                           \
          for (int64_t y = 0; y < g->Ho; y++)                                                                         \
            for (int64_t x = 0; x < g->Wo; x++) {                                                                     \
              T h, w;                                                                                                 \
              mdcn_pos_##SFX(g, off, i, j, y, x, &h, &w);                                                             \
              const mdcn_pt p = mdcn_locate((double)h, (double)w, g->H, g->W);                                        \
              const T v = p.ok ? mdcn_sample_##SFX(plane, &p) : (T)0;                                                 \
              row[y * g->Wo + x] = v * msk[k * HWo + y * g->Wo + x];                                                  \
            }                                                                                                         \
        }                                                                                                             \
    }                                                                                                                 \
  }                                                                                                                   \
  /* d image (+=), d offset and d mask (=) of one image from the column gradient */                                   \
  static void mdcn_col2im_##SFX(const mdcn_geom *g, const T *colg, const T *im, const T *offset, const T *mask,       \
                                T *dim, T *doffset, T *dmask) {                                                       \
    const int64_t HWo = g->Ho * g->Wo, cpg = g->C / g->DG, K = g->kh * g->kw;                                         \
    memset(doffset, 0, (size_t)(g->DG * 2 * K * HWo) * sizeof(T));                                                    \
    memset(dmask, 0, (size_t)(g->DG * K * HWo) * sizeof(T));                                                          \
    for (int64_t c = 0; c < g->C; c++) {                                                                              \
      const int64_t dg = c / cpg;                                                                                     \
      const T *plane = im + c * g->H * g->W, *off = offset + dg * 2 * K * HWo, *msk = mask + dg * K * HWo;            \
      T *dplane = dim + c * g->H * g->W, *doff = doffset + dg * 2 * K * HWo, *dmsk = dmask + dg * K * HWo;            \
      for (int64_t i = 0; i < g->kh; i++)                                                                             \
        for (int64_t j = 0; j < g->kw; j++) {                                                                         \
          const int64_t k = i * g->kw + j;                                                                            \
          const T *row = colg + (c * K + k) * HWo;                                                                    \
          for (int64_t y = 0; y < g->Ho; y++)                                                                         \
            for (int64_t x = 0; x < g->Wo; x++) {                                                                     \
              T h, w;                                                                                                 \
              mdcn_pos_##SFX(g, off, i, j, y, x, &h, &w);                                                             \
              const mdcn_pt p = mdcn_locate((double)h, (double)w, g->H, g->W);                                        \
              if (!p.ok) continue;                                                                                    \
              const int64_t q = y * g->Wo + x;                                                                        \
              const T gv = row[q], m = msk[k * HWo + q], gm = gv * m;                                                 \
              const T lh = (T)p.lh, lw = (T)p.lw, hh = (T)1 - lh, hw = (T)1 - lw;                                     \
              const T wt[4] = {hh * hw, hh * lw, lh * hw, lh * lw};                                                   \
              T v[4];                                                                                                 \
              for (int t = 0; t < 4; t++) {                                                                           \
                v[t] = p.in[t] ? plane[p.idx[t]] : (T)0;                                                              \
                if (p.in[t]) dplane[p.idx[t]] += wt[t] * gm;                                                          \
              }                                                                                                       \
              doff[(2 * k) * HWo + q] += gm * (-hw * v[0] - lw * v[1] + hw * v[2] + lw * v[3]);                       \
              doff[(2 * k + 1) * HWo + q] += gm * (-hh * v[0] + hh * v[1] - lh * v[2] + lh * v[3]);                   \
              dmsk[k * HWo + q] += gv * (wt[0] * v[0] + wt[1] * v[1] + wt[2] * v[2] + wt[3] * v[3]);                  \
            }                                                                                                         \
        }                                                                                                             \
    }                                                                                                                 \
  }                                                                                                                   \
  static int mdcn_forward_##SFX(const mdcn_geom *g, const T *data, const T *offset, const T *mask, const T *weight,   \
                                const T *bias, T *out) {                                                              \
    const int64_t HWo = g->Ho * g->Wo, M = g->F / g->G, K = g->C / g->G * g->kh * g->kw, KK = g->kh * g->kw;          \
    T *col = (T *)mxw_scratch(0, (size_t)(g->C * KK * HWo + 1) * sizeof(T));                                          \
    if (!col) return -1;                                                                                              \
    for (int64_t n = 0; n < g->N; n++) {                                                                              \
      mdcn_im2col_##SFX(g, data + n * g->C * g->H * g->W, offset + n * g->DG * 2 * KK * HWo,                          \
                        mask + n * g->DG * KK * HWo, col);                                                            \
      T *o = out + n * g->F * HWo;                                                                                    \
      for (int64_t gr = 0; gr < g->G; gr++)                                                                           \
        MXW_TRY(GEMM(0, 0, M, HWo, K, 1, weight + gr * M * K, K, col + gr * K * HWo, HWo, 0, o + gr * M * HWo, HWo)); \
      if (bias)                                                                                                       \
        for (int64_t f = 0; f < g->F; f++)                                                                            \
          for (int64_t q = 0; q < HWo; q++) o[f * HWo + q] += bias[f];                                                \
    }                                                                                                                 \
    return 0;                                                                                                         \
  }                                                                                                                   \
  static int mdcn_backward_##SFX(const mdcn_geom *g, const T *og, const T *data, const T *offset, const T *mask,      \
                                 const T *weight, T *ddata, T *doffset, T *dmask, T *dweight, T *dbias) {             \
    const int64_t HWo = g->Ho * g->Wo, M = g->F / g->G, K = g->C / g->G * g->kh * g->kw, KK = g->kh * g->kw;          \
    const size_t colsz = (size_t)(g->C * KK * HWo + 1) * sizeof(T);                                                   \
    T *col = (T *)mxw_scratch(0, colsz), *colg = (T *)mxw_scratch(1, colsz);                                          \
    if (!col || !colg) return -1;                                                                                     \
    memset(ddata, 0, (size_t)(g->N * g->C * g->H * g->W) * sizeof(T));                                                \
    if (g->N == 0) memset(dweight, 0, (size_t)(g->F * K) * sizeof(T));                                                \
    for (int64_t n = 0; n < g->N; n++) {                                                                              \
      const T *ogn = og + n * g->F * HWo, *im = data + n * g->C * g->H * g->W;                                        \
      const T *off = offset + n * g->DG * 2 * KK * HWo, *msk = mask + n * g->DG * KK * HWo;                           \
      for (int64_t gr = 0; gr < g->G; gr++)                                                                           \
        MXW_TRY(                                                                                                      \
            GEMM(1, 0, K, HWo, M, 1, weight + gr * M * K, K, ogn + gr * M * HWo, HWo, 0, colg + gr * K * HWo, HWo));  \
      mdcn_col2im_##SFX(g, colg, im, off, msk, ddata + n * g->C * g->H * g->W, doffset + n * g->DG * 2 * KK * HWo,    \
                        dmask + n * g->DG * KK * HWo);                                                                \
      mdcn_im2col_##SFX(g, im, off, msk, col);                                                                        \
      for (int64_t gr = 0; gr < g->G; gr++)                                                                           \
        MXW_TRY(GEMM(0, 1, M, K, HWo, 1, ogn + gr * M * HWo, HWo, col + gr * K * HWo, HWo, n ? 1 : 0,                 \
                     dweight + gr * M * K, K));                                                                       \
    }                                                                                                                 \
    if (dbias)                                                                                                        \
      for (int64_t f = 0; f < g->F; f++) {                                                                            \
        T s = 0;                                                                                                      \
        for (int64_t n = 0; n < g->N; n++)                                                                            \
          for (int64_t q = 0; q < HWo; q++) s += og[(n * g->F + f) * HWo + q];                                        \
        dbias[f] = s;                                                                                                 \
      }                                                                                                               \
    return 0;                                                                                                         \
  }
DEFINE_MDCN(float, f32, mxw_sgemm)
DEFINE_MDCN(double, f64, mxw_dgemm)

static int mdcn_check_dtypes(const mxw_op_call *c) {
  const int dt = c->inputs[0].dtype;
  MXW_CHECK(dt == MXW_FLOAT32 || dt == MXW_FLOAT64,
            "ModulatedDeformableConvolution supports float32 and float64, got %s", mxw_dtype_name(dt));
  for (int i = 1; i < c->num_inputs; i++)
    MXW_CHECK(c->inputs[i].dtype == dt, "ModulatedDeformableConvolution: input %d is %s, data is %s", i,
              mxw_dtype_name(c->inputs[i].dtype), mxw_dtype_name(dt));
  return 0;
}
static int fwd_mdcn(const mxw_op_call *c) {
  const MDCNParam *p = (const MDCNParam *)c->param;
  MXW_TRY(mdcn_check_dtypes(c));
  const mdcn_geom g = mdcn_make_geom(p, &c->inputs[0].shape, &c->outputs[0].shape);
  const void *bias = p->no_bias ? NULL : c->inputs[4].data;
  const mxw_tensor *in = c->inputs;
  if (in[0].dtype == MXW_FLOAT32)
    return mdcn_forward_f32(&g, in[0].data, in[1].data, in[2].data, in[3].data, bias, c->outputs[0].data);
  return mdcn_forward_f64(&g, in[0].data, in[1].data, in[2].data, in[3].data, bias, c->outputs[0].data);
}
/* (ograd, data, offset, mask, weight) -> (d data, d offset, d mask, d weight[, d bias]) */
static int fwd_backward_mdcn(const mxw_op_call *c) {
  const MDCNParam *p = (const MDCNParam *)c->param;
  MXW_TRY(mdcn_check_dtypes(c));
  const mdcn_geom g = mdcn_make_geom(p, &c->inputs[1].shape, &c->inputs[0].shape);
  void *dbias = p->no_bias ? NULL : c->outputs[4].data;
  const mxw_tensor *in = c->inputs;
  mxw_tensor *o = c->outputs;
  if (in[0].dtype == MXW_FLOAT32)
    return mdcn_backward_f32(&g, in[0].data, in[1].data, in[2].data, in[3].data, in[4].data, o[0].data, o[1].data,
                             o[2].data, o[3].data, dbias);
  return mdcn_backward_f64(&g, in[0].data, in[1].data, in[2].data, in[3].data, in[4].data, o[0].data, o[1].data,
                           o[2].data, o[3].data, dbias);
}
static int infer_backward_mdcn(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const MDCNParam *p = (const MDCNParam *)param;
  (void)nin;
  for (int i = 0; i < 4; i++) MXW_TRY(mxw_shape_assign(&out[i], &in[i + 1], "input gradient"));
  if (!p->no_bias && nout > 4) {
    const int64_t F = p->num_filter;
    MXW_TRY(set_shape(&out[4], 1, &F, "bias gradient"));
  }
  return 0;
}
static int grad_mdcn(mxw_grad_ctx *g) {
  const MDCNParam *p = (const MDCNParam *)mxw_grad_param(g);
  mxw_gid d[5];
  const int n = p->no_bias ? 4 : 5;
  MXW_TRY(mxw_grad_op_fwd(
      g, "_backward__contrib_ModulatedDeformableConvolution",
      MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1), mxw_grad_in(g, 2), mxw_grad_in(g, 3)), d,
      n));
  for (int i = 0; i < n; i++) MXW_TRY(mxw_grad_set(g, i, d[i]));
  return 0;
}
static const mxw_op_def op_mdcn = {
    .name = "_contrib_ModulatedDeformableConvolution",
    .doc =
        "2-D modulated deformable convolution (DCNv2): each kernel tap samples data (bilinear) at its position "
        "plus a learned offset (batch, num_deformable_group * kh * kw * 2, out_h, out_w) and scales it by a mask "
        "(batch, num_deformable_group * kh * kw, out_h, out_w); weight (num_filter, C / num_group, kh, kw)",
    .attrs = k_mdcn_attrs,
    .num_attrs = MDCN_NUM_ATTRS,
    .param_size = sizeof(MDCNParam),
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
    .doc = "the gradient of _contrib_ModulatedDeformableConvolution (inputs ograd, data, offset, mask, weight)",
    .attrs = k_mdcn_attrs,
    .num_attrs = MDCN_NUM_ATTRS,
    .param_size = sizeof(MDCNParam),
    .validate = validate_mdcn,
    .num_inputs = 5,
    .input_names = k_mdcn_bwd_inputs,
    .num_outputs = 5,
    .num_outputs_fn = mdcn_num_inputs,
    .infer_shape = infer_backward_mdcn,
    .forward = fwd_backward_mdcn};

MXW_FAMILY(contrib_dcn, &op_mdcn, &op_backward_mdcn);
