/* image.c -- MXNet's image operators (mx.nd.image.* in Python; gluon.data.vision.transforms
 * lowers to them). Names, aliases, inputs, attributes, shape/type rules and error messages
 * follow MXNet 1.9.1's src/operator/image/image_random-inl.h, image_random.cc, resize-inl.h and
 * crop-inl.h:
 *
 *   _image_to_tensor(data)          (H, W, C) -> (C, H, W) float32 / 255; (N, H, W, C) -> (N, C, H, W)
 *   _image_normalize(data; mean, std)  (C, H, W) or (N, C, H, W): out[c] = (in[c] - mean[c]) / std[c]
 *   _image_resize(data; size, keep_ratio, interp)  (H, W, C) or (N, H, W, C), as OpenCV's cv::resize
 *   _image_crop(data; x, y, width, height)          (H, W, C) or (N, H, W, C)
 *   _image_flip_left_right, _image_flip_top_bottom, _image_random_flip_left_right,
 *   _image_random_flip_top_bottom                   (H, W, C), C in {1, 3}
 *   _image_random_brightness / _contrast / _saturation / _hue (min_factor, max_factor),
 *   _image_random_color_jitter (brightness, contrast, saturation, hue),
 *   _image_adjust_lighting (alpha), _image_random_lighting (alpha_std)   (H, W, C)
 *
 * Resize: MXNet calls OpenCV's cv::resize; this follows its scalar reference code (imgproc's
 * resize.cpp). interp 0 is INTER_NEAREST (source index floor(d * src / dst)). 1 (INTER_LINEAR),
 * 2 (INTER_CUBIC, a = -0.75, 4x4) and 4 (INTER_LANCZOS4, 8x8) are separable with half-pixel centres
 * (f = (d + 0.5) * src / dst - 0.5) and the edge pixels replicated; float images use float weights,
 * uint8 images OpenCV's 11-bit fixed-point weights and integer rounding. 3 (INTER_AREA) averages
 * pixel areas when shrinking (box means for integer factors, fractional coverage otherwise) and is
 * OpenCV's bilinear variant when enlarging; bilinear halving of both sides is done as area, as
 * OpenCV does. OpenCV's SIMD paths for uint8 cubic and 2x2 float area round or sum slightly
 * differently from its scalar code (uint8 cubic can differ by 1 level from cv2's output).
 *
 * Random ops draw from the core's one seeded stream (mx.random.seed); the values differ from
 * MXNet's generator. None of these ops has a gradient yet (MXNet's are mostly "_copy").
 * Where MXNet leaves the output unwritten (the middle column of an out-of-place flip of an odd
 * width, hue/lighting on one channel) the input is copied instead. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/mxw_core.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NUM_ATTRS(a) ((int)(sizeof(a) / sizeof((a)[0])))
typedef char shape_buf[160];
#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))

static const char *const k_data[] = {"data", NULL};

/* saturate_cast<DType>(float) of image_random-inl.h: uint8 clamps to [0, 255] (then truncates),
 * every other dtype is a plain conversion. */
static inline uint8_t sat_u8(float v) { return (uint8_t)(v > 0.f ? (v < 255.f ? v : 255.f) : 0.f); } /* NaN -> 0 */
/* saturate_cast<uchar>(float) of OpenCV: rounded to nearest (ties to even), then clamped to [0, 255]. */
static inline uint8_t sat_u8_round(float v) {
  long r = lrintf(v > -1.f ? (v < 256.f ? v : 256.f) : -1.f);
  return (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
}

static size_t esize(int dtype) { return (size_t)mxw_dtype_size(dtype); }

/* ==== _image_to_tensor ========================================================================== */
static int infer_to_tensor(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param, (void)nin, (void)nout;
  shape_buf b;
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim == 3 || in[0].ndim == 4,
            "Input image must have shape (height, width, channels), or (N, height, width, channels) but got %s",
            SHAPE_STR(&in[0], b));
  mxw_shape o = in[0];
  if (in[0].ndim == 3) {
    o.dims[0] = in[0].dims[2], o.dims[1] = in[0].dims[0], o.dims[2] = in[0].dims[1];
  } else {
    o.dims[1] = in[0].dims[3], o.dims[2] = in[0].dims[1], o.dims[3] = in[0].dims[2];
  }
  return mxw_shape_assign(&out[0], &o, "output");
}

/* The output is float32 whatever the input's dtype. */
static int infer_type_to_tensor(const void *param, int nin, int *in, int nout, int *out) {
  (void)param, (void)nin, (void)in, (void)nout;
  if (out[0] >= 0 && out[0] != MXW_FLOAT32)
    return mxw_fail("output dtype %s does not match to_tensor's float32", mxw_dtype_name(out[0]));
  out[0] = MXW_FLOAT32;
  return 0;
}

static int fwd_to_tensor(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  float *o = (float *)c->outputs[0].data;
  int nd = in->shape.ndim;
  int64_t n = nd == 4 ? in->shape.dims[0] : 1;
  int64_t hw = in->shape.dims[nd - 3] * in->shape.dims[nd - 2], ch = in->shape.dims[nd - 1];
  if (in->dtype == MXW_FLOAT16 || in->dtype == MXW_BFLOAT16) {
    for (int64_t b = 0; b < n; b++)
      for (int64_t ci = 0; ci < ch; ci++)
        for (int64_t i = 0; i < hw; i++)
          o[(b * ch + ci) * hw + i] = (float)mxw_load_f64(in->data, in->dtype, (b * hw + i) * ch + ci) / 255.0f;
    return 0;
  }
  /* in / 255.0f with C's arithmetic conversions, as MXNet's ToTensor kernel */
  MXW_REAL_TYPE_SWITCH(in->dtype, T, {
    const T *x = (const T *)in->data;
    for (int64_t b = 0; b < n; b++)
      for (int64_t ci = 0; ci < ch; ci++)
        for (int64_t i = 0; i < hw; i++) o[(b * ch + ci) * hw + i] = (float)(x[(b * hw + i) * ch + ci] / 255.0f);
  });
  return 0;
}

/* Gradients. MXNet registers a `_copy` of the output gradient for every image op (and
 * `_backward_image_normalize` / `_backward_image_crop`), which is not the derivative for flips,
 * crops, layout changes or resizes (the shapes do not even match). Here each deterministic op gets
 * its true gradient; resize and the random augmentations (whose draws are not kept) are marked
 * non-differentiable (zero gradients). */
static int grad_to_tensor(mxw_grad_ctx *g) { /* out = transpose(x) / 255 */
  if (!mxw_dtype_is_float(mxw_grad_in_dtype(g, 0))) return 0;
  const char *axes = mxw_grad_in_shape(g, 0)->ndim == 3 ? "(1, 2, 0)" : "(0, 2, 3, 1)";
  mxw_gid t = mxw_grad_op(g, "transpose", MXW_KV("axes", axes), MXW_GIDS(mxw_grad_ograd(g, 0)));
  mxw_gid d = mxw_grad_op(g, "_div_scalar", MXW_KV("scalar", "255"), MXW_GIDS(t));
  if (mxw_grad_in_dtype(g, 0) != MXW_FLOAT32)
    d = mxw_grad_op(g, "Cast", MXW_KV("dtype", mxw_dtype_name(mxw_grad_in_dtype(g, 0))), MXW_GIDS(d));
  return mxw_grad_set(g, 0, d);
}

static const mxw_op_def op_to_tensor = {
    .gradient = grad_to_tensor,
    .name = "_image_to_tensor",
    .aliases = ALIASES("_npx__image_to_tensor"),
    .doc =
        MXW_DOC("(H, W, C) or (N, H, W, C) image with values in [0, 255] -> float32 (C, H, W) or (N, C, H, W) / 255"),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_to_tensor,
    .infer_type = infer_type_to_tensor,
    .forward = fwd_to_tensor,
};

/* ==== _image_normalize ========================================================================== */
/* mean and std are MXNet Tuple<float>: the text "(0.485, 0.456, 0.406)" (or one number) is kept as
 * a string attribute and parsed into floats here. */
#define MAX_FLOATS 8
typedef struct {
  mxw_str mean_s, std_s;
  int nmean, nstd;
  float mean[MAX_FLOATS], std[MAX_FLOATS];
} NormalizeParam;

static const mxw_attr_spec k_normalize_attrs[] = {
    MXW_A_STRING("mean", NormalizeParam, mean_s, "(0.0, 0.0, 0.0, 0.0)",
                 "sequence of means for each channel (a tuple of floats, or one float for all)"),
    MXW_A_STRING("std", NormalizeParam, std_s, "(1.0, 1.0, 1.0, 1.0)",
                 "sequence of standard deviations for each channel (a tuple of floats, or one float for all)"),
};

/* a non-empty Tuple<float> attribute (mxw_parse_floats) */
static int parse_float_tuple(const char *name, const char *text, float *v, int *n) {
  MXW_TRY(mxw_parse_floats(name, text, v, MAX_FLOATS, n));
  if (*n == 0) return mxw_fail("invalid value '%s' for attribute '%s': expected at least one float", text, name);
  return 0;
}

static int validate_normalize(void *param) {
  NormalizeParam *p = (NormalizeParam *)param;
  MXW_TRY(parse_float_tuple("mean", p->mean_s.s, p->mean, &p->nmean));
  return parse_float_tuple("std", p->std_s.s, p->std, &p->nstd);
}

static void float_tuple_str(const float *v, int n, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "[");
  for (int i = 0; i < n && used < len; i++) used += (size_t)snprintf(buf + used, len - used, i ? ",%g" : "%g", v[i]);
  if (used < len) snprintf(buf + used, len - used, "]");
}

static int infer_normalize(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin, (void)nout;
  const NormalizeParam *p = (const NormalizeParam *)param;
  shape_buf b;
  char t[160];
  mxw_shape s = in[0];
  MXW_TRY(mxw_shape_assign(&s, &out[0], "output"));
  if (s.ndim < 0) return 0;
  MXW_CHECK(s.ndim == 3 || s.ndim == 4,
            "Input tensor must have shape (channels, height, width), or (N, channels, height, width), but got %s",
            SHAPE_STR(&s, b));
  int64_t nch = s.ndim == 3 ? s.dims[0] : s.dims[1];
  if (nch >= 0) {
    MXW_CHECK(nch == 3 || nch == 1,
              "The %s dimension of input tensor must be the channel dimension with either 1 or 3 elements, but got "
              "input with shape %s",
              s.ndim == 3 ? "first" : "second", SHAPE_STR(&s, b));
    float_tuple_str(p->mean, p->nmean, t, sizeof t);
    MXW_CHECK(p->nmean == 1 || p->nmean == nch,
              "Invalid mean for input with shape %s. mean must have either 1 or %lld elements, but got %s",
              SHAPE_STR(&s, b), (long long)nch, t);
    float_tuple_str(p->std, p->nstd, t, sizeof t);
    MXW_CHECK(p->nstd == 1 || p->nstd == nch,
              "Invalid std for input with shape %s. std must have either 1 or %lld elements, but got %s",
              SHAPE_STR(&s, b), (long long)nch, t);
  }
  MXW_TRY(mxw_shape_assign(&in[0], &s, "data"));
  return mxw_shape_assign(&out[0], &s, "output");
}

static int fwd_normalize(const mxw_op_call *c) {
  const NormalizeParam *p = (const NormalizeParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int nd = in->shape.ndim;
  int64_t n = nd == 4 ? in->shape.dims[0] : 1, ch = in->shape.dims[nd - 3];
  int64_t hw = in->shape.dims[nd - 2] * in->shape.dims[nd - 1];
  float mean[3], sd[3];
  for (int i = 0; i < 3; i++) {
    mean[i] = p->nmean == 1 ? p->mean[0] : p->mean[i < p->nmean ? i : 0];
    sd[i] = p->nstd == 1 ? p->std[0] : p->std[i < p->nstd ? i : 0];
  }
  /* (in - mean) / std in float (double for float64) as MXNet's kernel; integer dtypes store through the
   * core's clamping conversion */
  for (int64_t b = 0; b < n; b++)
    for (int64_t ci = 0; ci < ch; ci++)
      for (int64_t i = 0; i < hw; i++) {
        int64_t k = (b * ch + ci) * hw + i;
        if (in->dtype == MXW_FLOAT32)
          ((float *)out->data)[k] = (((const float *)in->data)[k] - mean[ci]) / sd[ci];
        else if (in->dtype == MXW_FLOAT64)
          ((double *)out->data)[k] = (((const double *)in->data)[k] - mean[ci]) / sd[ci];
        else
          mxw_store_f64(out->data, out->dtype, k,
                        (float)((float)mxw_load_f64(in->data, in->dtype, k) - mean[ci]) / sd[ci]);
      }
  return 0;
}

static int grad_normalize(mxw_grad_ctx *g) { /* out = (x - mean_c) / std_c: dx = dy / std_c */
  const NormalizeParam *p = (const NormalizeParam *)mxw_grad_param(g);
  char mean[256] = "(0";
  for (int i = 1; i < p->nmean && i < 60; i++) strcat(mean, ", 0");
  strcat(mean, p->nmean <= 1 ? ",)" : ")");
  return mxw_grad_set(
      g, 0,
      mxw_grad_op(g, "_image_normalize", MXW_KV("mean", mean, "std", p->std_s.s), MXW_GIDS(mxw_grad_ograd(g, 0))));
}

static const mxw_op_def op_normalize = {
    .gradient = grad_normalize,
    .name = "_image_normalize",
    .aliases = ALIASES("_npx__image_normalize"),
    .doc =
        MXW_DOC("(C, H, W) or (N, C, H, W) tensor: out[c] = (in[c] - mean[c]) / std[c]; one mean/std value applies to "
                "every channel"),
    .attrs = k_normalize_attrs,
    .num_attrs = NUM_ATTRS(k_normalize_attrs),
    .param_size = sizeof(NormalizeParam),
    .validate = validate_normalize,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_normalize,
    .forward = fwd_normalize,
    .inplace = 1,
};

/* ==== _image_resize ============================================================================= */
typedef struct {
  mxw_tuple size;
  int keep_ratio;
  int64_t interp;
} ResizeParam;

static const mxw_attr_spec k_resize_attrs[] = {
    MXW_A_SHAPE("size", ResizeParam, size, "()", "size of the new image: (width, height) or (size)"),
    MXW_A_BOOL("keep_ratio", ResizeParam, keep_ratio, "False",
               "whether to resize the short edge or both edges to `size`, if size is given as an integer"),
    MXW_A_INT(
        "interp", ResizeParam, interp, "1",
        "interpolation, as OpenCV's: 0 nearest neighbour, 1 bilinear, 2 bicubic (4x4), 3 pixel area, 4 lanczos (8x8)"),
};

static int validate_resize(void *param) {
  const ResizeParam *p = (const ResizeParam *)param;
  /* cv::resize knows INTER_NEAREST .. INTER_LANCZOS4; mx.image's 9 (auto) and 10 (random) are resolved in
   * Python (_get_interp_method) before the operator is called. */
  MXW_CHECK(p->interp >= 0 && p->interp <= 4,
            "interp=%lld is not supported (OpenCV: Unknown interpolation method): resize takes 0 (nearest), "
            "1 (bilinear), "
            "2 (bicubic), 3 (area) or 4 (lanczos)",
            (long long)p->interp);
  return 0;
}

/* GetHeightAndWidth: (height, width) of the output for an input of (h, w). */
static int resize_hw(const ResizeParam *p, int64_t h, int64_t w, int64_t *oh, int64_t *ow) {
  MXW_CHECK(p->size.ndim == 1 || p->size.ndim == 2, "Input size dimension must be 1 or 2, but got %d",
            p->size.ndim < 0 ? 0 : p->size.ndim);
  if (p->size.ndim == 1) {
    int64_t s = p->size.v[0];
    MXW_CHECK(s > 0, "Input size should be greater than 0, but got %lld", (long long)s);
    if (!p->keep_ratio) {
      *oh = *ow = s;
    } else if (h < 0 || w < 0) {
      *oh = *ow = -1;
    } else if (h > w) {
      *ow = s;
      *oh = h * s / w; /* integer division, as MXNet */
    } else {
      *oh = s;
      *ow = w * s / h;
    }
  } else {
    MXW_CHECK(p->size.v[0] > 0, "Input width should be greater than 0, but got %lld", (long long)p->size.v[0]);
    MXW_CHECK(p->size.v[1] > 0, "Input height should be greater than 0, but got %lld", (long long)p->size.v[1]);
    *oh = p->size.v[1];
    *ow = p->size.v[0];
  }
  return 0;
}

static int infer_resize(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin, (void)nout;
  const ResizeParam *p = (const ResizeParam *)param;
  if (in[0].ndim < 0) return 0;
  MXW_CHECK(in[0].ndim == 3 || in[0].ndim == 4, "Input image dimension should be 3 or 4 but got %d", in[0].ndim);
  int nd = in[0].ndim;
  int64_t oh, ow;
  MXW_TRY(resize_hw(p, in[0].dims[nd - 3], in[0].dims[nd - 2], &oh, &ow));
  mxw_shape o = in[0];
  o.dims[nd - 3] = oh;
  o.dims[nd - 2] = ow;
  return mxw_shape_assign(&out[0], &o, "output");
}

static int infer_type_resize(const void *param, int nin, int *in, int nout, int *out) {
  const ResizeParam *p = (const ResizeParam *)param;
  MXW_TRY(mxw_infer_type_same(param, nin, in, nout, out));
  int dt = in[0];
  if (dt < 0) return 0;
  MXW_CHECK(dt != MXW_FLOAT16, "opencv image mat doesn't support fp16");
  MXW_CHECK(dt == MXW_FLOAT32 || dt == MXW_FLOAT64 || dt == MXW_UINT8 || (dt == MXW_INT32 && p->interp == 0),
            "image resize (OpenCV) supports uint8, float32 and float64 images (int32 with interp=0 only), got %s",
            mxw_dtype_name(dt));
  return 0;
}

/* ---- resize kernels: OpenCV's imgproc/src/resize.cpp, its scalar reference paths -------------- */
enum { RS_NEAREST = 0, RS_LINEAR = 1, RS_CUBIC = 2, RS_AREA = 3, RS_LANCZOS4 = 4 };
#define RS_COEF_SCALE 2048.f /* INTER_RESIZE_COEF_SCALE: uint8 weights are 11-bit fixed point */
#define RS_SQRT1_2 0.70710678118654752440084436210485

/* INTER_NEAREST: source index min(floor(d * (1 / (dst / src))), src - 1), in double as OpenCV. */
static void nearest_index(int64_t ssize, int64_t dsize, int64_t *ofs) {
  double ifx = 1.0 / ((double)dsize / (double)ssize);
  for (int64_t d = 0; d < dsize; d++) {
    int64_t s = (int64_t)floor((double)d * ifx);
    ofs[d] = s < ssize - 1 ? s : ssize - 1;
  }
}

static void resize_nearest(const char *src, char *dst, int64_t W, int64_t C, int64_t OH, int64_t OW, size_t es,
                           const int64_t *xo, const int64_t *yo) {
  size_t pix = (size_t)C * es;
  for (int64_t y = 0; y < OH; y++) {
    const char *row = src + (size_t)(yo[y] * W) * pix;
    char *drow = dst + (size_t)(y * OW) * pix;
    for (int64_t x = 0; x < OW; x++) memcpy(drow + (size_t)x * pix, row + (size_t)xo[x] * pix, pix);
  }
}

/* INTER_CUBIC's weights for the taps at -1, 0, 1, 2 of fraction x: Keys' cubic convolution with
 * a = -0.75, in float; the last weight is 1 minus the others (interpolateCubic). */
static void cubic_weights(float x, float *c) {
  const float A = -0.75f;
  c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = 1.f - c[0] - c[1] - c[2];
}

/* INTER_LANCZOS4's weights for the taps at -3..4: sin(pi y / 4) sin(pi y) / (pi^2 y^2 / 4) at y = x + 3 - i,
 * the sines from one angle by the 45-degree rotations, normalised to sum 1 in float (interpolateLanczos4);
 * x below FLT_EPSILON is the source pixel itself. */
static void lanczos4_weights(float x, float *c) {
  static const double cs[8][2] = {{1, 0},  {-RS_SQRT1_2, -RS_SQRT1_2}, {0, 1},  {RS_SQRT1_2, -RS_SQRT1_2},
                                  {-1, 0}, {RS_SQRT1_2, RS_SQRT1_2},   {0, -1}, {-RS_SQRT1_2, RS_SQRT1_2}};
  if (x < FLT_EPSILON) {
    for (int i = 0; i < 8; i++) c[i] = 0.f;
    c[3] = 1.f;
    return;
  }
  float sum = 0.f;
  double y0 = -(x + 3) * M_PI * 0.25, s0 = sin(y0), c0 = cos(y0);
  for (int i = 0; i < 8; i++) {
    double y = -(x + 3 - i) * M_PI * 0.25;
    c[i] = (float)((cs[i][0] * s0 + cs[i][1] * c0) / (y * y));
    sum += c[i];
  }
  sum = 1.f / sum;
  for (int i = 0; i < 8; i++) c[i] *= sum;
}

/* One axis of resizeGeneric_'s tables: output d reads the ksize source pixels from ofs[d] - ksize/2 + 1 with
 * weights w[d * ksize ..]. The fraction f comes from OpenCV's half-pixel mapping (d + 0.5) * scale - 0.5, or,
 * for INTER_AREA when enlarging, from s = floor(d * scale), f = (d + 1) - (s + 1) / scale kept only when
 * positive. Linear and area weights along x are clamped to the edge pixel (weight 1) as OpenCV does; cubic and
 * lanczos taps, and all y taps, past the edge read the edge pixel with unchanged weights (border replicate). */
static void axis_weights(int64_t ssize, int64_t dsize, int interp, int ksize, int clamp_x, int64_t *ofs, float *w) {
  double inv = (double)dsize / (double)ssize, scale = 1.0 / inv;
  for (int64_t d = 0; d < dsize; d++) {
    float f, c[8];
    int64_t s;
    if (interp != RS_AREA) {
      f = (float)(((double)d + 0.5) * scale - 0.5);
      s = (int64_t)floorf(f);
      f -= (float)s;
    } else {
      s = (int64_t)floor((double)d * scale);
      f = (float)((double)(d + 1) - (double)(s + 1) * inv);
      f = f <= 0 ? 0.f : f - floorf(f);
    }
    if (clamp_x && ksize == 2) {
      if (s < 0) f = 0.f, s = 0;
      if (s >= ssize - 1) f = 0.f, s = ssize - 1;
    }
    if (interp == RS_CUBIC)
      cubic_weights(f, c);
    else if (interp == RS_LANCZOS4)
      lanczos4_weights(f, c);
    else
      c[0] = 1.f - f, c[1] = f;
    ofs[d] = s;
    for (int k = 0; k < ksize; k++) w[d * ksize + k] = c[k];
  }
}

/* Horizontal pass over one source row: out[x, c] = sum over k of row[clamp(ofs[x] - ksize/2 + 1 + k), c] * w,
 * accumulated from k = 0 (uint8: pixel * 11-bit weight in int; float32: float; float64: double). */
#define RESIZE_HROW(NAME, T, WT, AT)                                                                                 \
  static void NAME(const T *s, WT *o, int64_t W, int64_t C, int64_t OW, int ksize, const int64_t *xo, const AT *w) { \
    for (int64_t x = 0; x < OW; x++, w += ksize) {                                                                   \
      int64_t base = xo[x] - ksize / 2 + 1;                                                                          \
      for (int64_t c = 0; c < C; c++) {                                                                              \
        WT v = 0;                                                                                                    \
        for (int k = 0; k < ksize; k++) {                                                                            \
          int64_t sx = base + k < 0 ? 0 : base + k >= W ? W - 1 : base + k;                                          \
          v += (WT)s[sx * C + c] * (WT)w[k];                                                                         \
        }                                                                                                            \
        o[x * C + c] = v;                                                                                            \
      }                                                                                                              \
    }                                                                                                                \
  }
RESIZE_HROW(hrow_u8, uint8_t, int32_t, int16_t)
RESIZE_HROW(hrow_f32, float, float, float)
RESIZE_HROW(hrow_f64, double, double, float)

/* Vertical pass: the ksize horizontally resized rows weighted by beta, summed from k = 0. uint8: for linear
 * OpenCV's (((b0 * (S0 >> 4)) >> 16) + ((b1 * (S1 >> 4)) >> 16) + 2) >> 2, for cubic/lanczos
 * (sum + 2^21) >> 22, saturated to [0, 255]. */
static void vrow_u8(int32_t *const *r, uint8_t *o, int64_t n, int ksize, const int16_t *b) {
  if (ksize == 2) {
    for (int64_t i = 0; i < n; i++)
      o[i] = (uint8_t)((((b[0] * (r[0][i] >> 4)) >> 16) + ((b[1] * (r[1][i] >> 4)) >> 16) + 2) >> 2);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t v = 0;
    for (int k = 0; k < ksize; k++) v += (int64_t)r[k][i] * b[k];
    v = (v + (1 << 21)) >> 22;
    o[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
  }
}
#define RESIZE_VROW(NAME, T)                                                  \
  static void NAME(T *const *r, T *o, int64_t n, int ksize, const float *b) { \
    for (int64_t i = 0; i < n; i++) {                                         \
      T v = r[0][i] * (T)b[0];                                                \
      for (int k = 1; k < ksize; k++) v += r[k][i] * (T)b[k];                 \
      o[i] = v;                                                               \
    }                                                                         \
  }
RESIZE_VROW(vrow_f32, float)
RESIZE_VROW(vrow_f64, double)

/* resizeGeneric_ for one image: each output row from ksize source rows (clamped to the image), each source row
 * resized horizontally once and kept while later output rows need it. */
static void resize_generic(const void *src, void *dst, int dt, int64_t H, int64_t W, int64_t C, int64_t OH, int64_t OW,
                           int ksize, const int64_t *xo, const float *xw, const int16_t *xiw, const int64_t *yo,
                           const float *yw, const int16_t *yiw, char *rowbuf, size_t row_bytes) {
  int64_t have[8], need[8];
  char *slot[8];
  void *rows[8];
  size_t es = esize(dt), rw = (size_t)(OW * C);
  for (int i = 0; i < ksize; i++) have[i] = -1, slot[i] = rowbuf + (size_t)i * row_bytes;
  for (int64_t y = 0; y < OH; y++) {
    int used[8] = {0}, which[8];
    for (int k = 0; k < ksize; k++) {
      int64_t sy = yo[y] - ksize / 2 + 1 + k;
      need[k] = sy < 0 ? 0 : sy >= H ? H - 1 : sy;
      which[k] = -1;
      for (int i = 0; i < ksize; i++)
        if (have[i] == need[k]) which[k] = i, used[i] = 1;
    }
    for (int k = 0; k < ksize; k++) {
      if (which[k] >= 0) continue;
      int i = 0;
      while (used[i]) i++;
      const char *srow = (const char *)src + (size_t)(need[k] * W * C) * es;
      if (dt == MXW_UINT8)
        hrow_u8((const uint8_t *)srow, (int32_t *)slot[i], W, C, OW, ksize, xo, xiw);
      else if (dt == MXW_FLOAT32)
        hrow_f32((const float *)srow, (float *)slot[i], W, C, OW, ksize, xo, xw);
      else
        hrow_f64((const double *)srow, (double *)slot[i], W, C, OW, ksize, xo, xw);
      have[i] = need[k], used[i] = 1;
      for (int k2 = k; k2 < ksize; k2++)
        if (need[k2] == need[k]) which[k2] = i;
    }
    for (int k = 0; k < ksize; k++) rows[k] = slot[which[k]];
    char *drow = (char *)dst + (size_t)y * rw * es;
    if (dt == MXW_UINT8)
      vrow_u8((int32_t *const *)rows, (uint8_t *)drow, (int64_t)rw, ksize, yiw + y * ksize);
    else if (dt == MXW_FLOAT32)
      vrow_f32((float *const *)rows, (float *)drow, (int64_t)rw, ksize, yw + y * ksize);
    else
      vrow_f64((double *const *)rows, (double *)drow, (int64_t)rw, ksize, yw + y * ksize);
  }
}

/* INTER_AREA shrinking by integer factors (resizeAreaFast_): the mean of each sy x sx block, summed row by
 * row (in fours, as OpenCV unrolls), times the float 1 / area. uint8: 2 x 2 blocks of 1, 3 or 4 channels
 * round as (sum + 2) >> 2, others round the float to nearest (even); float64 sums in double. */
#define RESIZE_AREA_FAST(NAME, T, WT, STORE)                                                                   \
  static void NAME(const T *s, T *o, int64_t W, int64_t C, int64_t OH, int64_t OW, int64_t isx, int64_t isy) { \
    int64_t area = isx * isy;                                                                                  \
    float scale = 1.f / (float)area;                                                                           \
    int shift2 = isx == 2 && isy == 2 && (C == 1 || C == 3 || C == 4);                                         \
    (void)shift2;                                                                                              \
    for (int64_t y = 0; y < OH; y++)                                                                           \
      for (int64_t x = 0; x < OW; x++)                                                                         \
        for (int64_t c = 0; c < C; c++) {                                                                      \
          const T *p = s + ((y * isy) * W + x * isx) * C + c;                                                  \
          WT sum = 0;                                                                                          \
          int64_t k = 0;                                                                                       \
          for (; k + 4 <= area; k += 4) {                                                                      \
            WT q = p[((k / isx) * W + k % isx) * C];                                                           \
            for (int64_t j = k + 1; j < k + 4; j++) q += p[((j / isx) * W + j % isx) * C];                     \
            sum += q;                                                                                          \
          }                                                                                                    \
          for (; k < area; k++) sum += p[((k / isx) * W + k % isx) * C];                                       \
          STORE;                                                                                               \
        }                                                                                                      \
  }
RESIZE_AREA_FAST(area_fast_u8, uint8_t, int32_t,
                 o[(y * OW + x) * C + c] = shift2 ? (uint8_t)((sum + 2) >> 2) : sat_u8_round((float)sum * scale))
RESIZE_AREA_FAST(area_fast_f32, float, float, o[(y * OW + x) * C + c] = sum * scale)
RESIZE_AREA_FAST(area_fast_f64, double, double, o[(y * OW + x) * C + c] = sum * (double)scale)

/* INTER_AREA shrinking by other factors (computeResizeAreaTab / ResizeArea_Invoker): output cell d covers
 * source [d * scale, (d + 1) * scale); each source pixel it touches weighs (covered length) / (cell width), the
 * partial first and last ones (overlap > 1e-3) included. Rows, then columns, are accumulated in float (double
 * for float64); uint8 rounds to nearest (even) and saturates. */
typedef struct {
  int64_t di, si;
  float alpha;
} area_tab;

static int64_t area_table(int64_t ssize, int64_t dsize, int64_t cn, double scale, area_tab *tab) {
  int64_t k = 0;
  for (int64_t dx = 0; dx < dsize; dx++) {
    double fsx1 = (double)dx * scale, fsx2 = fsx1 + scale;
    double cell = scale < (double)ssize - fsx1 ? scale : (double)ssize - fsx1;
    int64_t sx1 = (int64_t)ceil(fsx1), sx2 = (int64_t)floor(fsx2);
    sx2 = sx2 < ssize - 1 ? sx2 : ssize - 1;
    sx1 = sx1 < sx2 ? sx1 : sx2;
    if ((double)sx1 - fsx1 > 1e-3) tab[k++] = (area_tab){dx * cn, (sx1 - 1) * cn, (float)(((double)sx1 - fsx1) / cell)};
    for (int64_t sx = sx1; sx < sx2; sx++) tab[k++] = (area_tab){dx * cn, sx * cn, (float)(1.0 / cell)};
    if (fsx2 - (double)sx2 > 1e-3) {
      double part = fsx2 - (double)sx2 < 1.0 ? fsx2 - (double)sx2 : 1.0;
      tab[k++] = (area_tab){dx * cn, sx2 * cn, (float)((part < cell ? part : cell) / cell)};
    }
  }
  return k;
}

#define RESIZE_AREA(NAME, T, WT, STORE)                                                                \
  static void NAME(const T *s, T *o, int64_t W, int64_t C, int64_t OW, const area_tab *xt, int64_t nx, \
                   const area_tab *yt, int64_t ny, WT *buf) {                                          \
    int64_t rw = OW * C;                                                                               \
    WT *sum = buf + rw;                                                                                \
    int64_t prev = yt[0].di;                                                                           \
    for (int64_t i = 0; i < rw; i++) sum[i] = 0;                                                       \
    for (int64_t j = 0; j < ny; j++) {                                                                 \
      WT beta = yt[j].alpha;                                                                           \
      const T *row = s + yt[j].si * W * C;                                                             \
      for (int64_t i = 0; i < rw; i++) buf[i] = 0;                                                     \
      for (int64_t k = 0; k < nx; k++) {                                                               \
        WT a = xt[k].alpha;                                                                            \
        for (int64_t c = 0; c < C; c++) buf[xt[k].di + c] += row[xt[k].si + c] * a;                    \
      }                                                                                                \
      if (yt[j].di != prev) {                                                                          \
        T *d = o + prev * rw;                                                                          \
        for (int64_t i = 0; i < rw; i++) {                                                             \
          STORE;                                                                                       \
          sum[i] = beta * buf[i];                                                                      \
        }                                                                                              \
        prev = yt[j].di;                                                                               \
      } else {                                                                                         \
        for (int64_t i = 0; i < rw; i++) sum[i] += beta * buf[i];                                      \
      }                                                                                                \
    }                                                                                                  \
    T *d = o + prev * rw;                                                                              \
    for (int64_t i = 0; i < rw; i++) STORE;                                                            \
  }
RESIZE_AREA(area_u8, uint8_t, float, d[i] = sat_u8_round(sum[i]))
RESIZE_AREA(area_f32, float, float, d[i] = sum[i])
RESIZE_AREA(area_f64, double, double, d[i] = sum[i])

static int fwd_resize(const mxw_op_call *c) {
  const ResizeParam *p = (const ResizeParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int nd = in->shape.ndim, dt = in->dtype;
  int64_t N = nd == 4 ? in->shape.dims[0] : 1;
  int64_t H = in->shape.dims[nd - 3], W = in->shape.dims[nd - 2], C = in->shape.dims[nd - 1];
  int64_t OH = out->shape.dims[nd - 3], OW = out->shape.dims[nd - 2];
  size_t es = esize(dt);
  if (N == 0 || C == 0 || OH == 0 || OW == 0) return 0;
  MXW_CHECK(H > 0 && W > 0, "cannot resize an empty image of height %lld and width %lld", (long long)H, (long long)W);
  size_t in_step = (size_t)(H * W * C) * es, out_step = (size_t)(OH * OW * C) * es;
  if (OH == H && OW == W) { /* cv::resize copies when the size does not change */
    memcpy(out->data, in->data, (size_t)N * in_step);
    return 0;
  }
  /* cv::resize: scale = 1 / (dst / src); an integer scale on both axes is "area fast"; bilinear halving of
   * both axes is done as INTER_AREA; INTER_AREA shrinks by pixel areas and enlarges as a bilinear variant. */
  double scale_x = 1.0 / ((double)OW / (double)W), scale_y = 1.0 / ((double)OH / (double)H);
  int64_t isx = (int64_t)lrint(scale_x), isy = (int64_t)lrint(scale_y);
  int area_fast = fabs(scale_x - (double)isx) < DBL_EPSILON && fabs(scale_y - (double)isy) < DBL_EPSILON;
  int interp = (int)p->interp;
  if (interp == RS_LINEAR && area_fast && isx == 2 && isy == 2) interp = RS_AREA;
  int true_area = interp == RS_AREA && scale_x >= 1 && scale_y >= 1;
  int ksize = interp == RS_CUBIC ? 4 : interp == RS_LANCZOS4 ? 8 : 2;
  size_t wt = dt == MXW_FLOAT64 ? 8 : 4; /* int32 rows for uint8, float for float32, double for float64 */
  size_t row_bytes = ((size_t)(OW * C) * wt + 7) / 8 * 8, bytes;
  if (true_area && !area_fast)
    bytes = 2 * row_bytes + (size_t)(3 * (W + H) + 4) * sizeof(area_tab);
  else if (true_area)
    bytes = 8;
  else
    bytes = (size_t)ksize * row_bytes + (size_t)(OW + OH) * (sizeof(int64_t) + (size_t)ksize * 6) + 16;
  char *buf = (char *)malloc(bytes);
  if (!buf) return mxw_fail_oom("image resize's scratch", (double)bytes);
  int64_t *xo = NULL, *yo = NULL, nx = 0, ny = 0;
  float *xw = NULL, *yw = NULL;
  int16_t *xiw = NULL, *yiw = NULL;
  area_tab *xt = NULL, *yt = NULL;
  if (true_area && !area_fast) {
    xt = (area_tab *)(buf + 2 * row_bytes), yt = xt + 3 * W + 2;
    nx = area_table(W, OW, C, scale_x, xt);
    ny = area_table(H, OH, 1, scale_y, yt);
  } else if (!true_area) {
    xo = (int64_t *)(buf + (size_t)ksize * row_bytes), yo = xo + OW;
    xw = (float *)(yo + OH), yw = xw + OW * ksize;
    xiw = (int16_t *)(yw + OH * ksize), yiw = xiw + OW * ksize;
    if (interp == RS_NEAREST) {
      nearest_index(W, OW, xo);
      nearest_index(H, OH, yo);
    } else {
      axis_weights(W, OW, interp, ksize, 1, xo, xw);
      axis_weights(H, OH, interp, ksize, 0, yo, yw);
      for (int64_t i = 0; i < (OW + OH) * ksize; i++) { /* saturate_cast<short>(w * 2048) */
        long v = lrintf(xw[i] * RS_COEF_SCALE);
        xiw[i] = (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
      }
    }
  }
  for (int64_t b = 0; b < N; b++) {
    const char *s = (const char *)in->data + (size_t)b * in_step;
    char *d = (char *)out->data + (size_t)b * out_step;
    if (true_area && area_fast) {
      if (dt == MXW_UINT8)
        area_fast_u8((const uint8_t *)s, (uint8_t *)d, W, C, OH, OW, isx, isy);
      else if (dt == MXW_FLOAT32)
        area_fast_f32((const float *)s, (float *)d, W, C, OH, OW, isx, isy);
      else
        area_fast_f64((const double *)s, (double *)d, W, C, OH, OW, isx, isy);
    } else if (true_area) {
      if (dt == MXW_UINT8)
        area_u8((const uint8_t *)s, (uint8_t *)d, W, C, OW, xt, nx, yt, ny, (float *)buf);
      else if (dt == MXW_FLOAT32)
        area_f32((const float *)s, (float *)d, W, C, OW, xt, nx, yt, ny, (float *)buf);
      else
        area_f64((const double *)s, (double *)d, W, C, OW, xt, nx, yt, ny, (double *)buf);
    } else if (interp == RS_NEAREST) {
      resize_nearest(s, d, W, C, OH, OW, es, xo, yo);
    } else {
      resize_generic(s, d, dt, H, W, C, OH, OW, ksize, xo, xw, xiw, yo, yw, yiw, buf, row_bytes);
    }
  }
  free(buf);
  return 0;
}

static const mxw_op_def op_resize = {
    .no_grad = 1,
    .name = "_image_resize",
    .aliases = ALIASES("_npx__image_resize"),
    .doc = MXW_DOC(
        "resizes an (H, W, C) or (N, H, W, C) image to size (width, height), or (size, size) / the short edge "
        "to size with keep_ratio, as OpenCV's resize (interp 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 lanczos)"),
    .attrs = k_resize_attrs,
    .num_attrs = NUM_ATTRS(k_resize_attrs),
    .param_size = sizeof(ResizeParam),
    .validate = validate_resize,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_resize,
    .infer_type = infer_type_resize,
    .forward = fwd_resize,
};

/* ==== _image_crop =============================================================================== */
typedef struct {
  int64_t x, y, width, height;
} CropParam;

static const mxw_attr_spec k_crop_attrs[] = {
    MXW_A_INT("x", CropParam, x, NULL, "left boundary of the cropping area"),
    MXW_A_INT("y", CropParam, y, NULL, "top boundary of the cropping area"),
    MXW_A_INT("width", CropParam, width, NULL, "width of the cropping area"),
    MXW_A_INT("height", CropParam, height, NULL, "height of the cropping area"),
};

static int infer_crop(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin, (void)nout;
  const CropParam *p = (const CropParam *)param;
  const mxw_shape *s = &in[0];
  if (s->ndim < 0) return 0;
  MXW_CHECK(s->ndim == 3 || s->ndim == 4, "Image Crop expects inputs of 3D (h, w, c) or 4D (n, h, w, c). But got %d",
            s->ndim);
  int64_t ch = s->dims[s->ndim - 1], h = s->dims[s->ndim - 3], w = s->dims[s->ndim - 2];
  MXW_CHECK(ch < 0 || ch == 1 || ch == 3, "Expect channel of the input image is 1 or 3, but got%lld", (long long)ch);
  MXW_CHECK(p->height > 0 && p->width > 0, "Input height and width must be greater than 0");
  MXW_CHECK(p->x >= 0 && p->y >= 0, "x = %lld and y = %lld must not be negative", (long long)p->x, (long long)p->y);
  MXW_CHECK(w < 0 || p->x + p->width <= w, " x + width should not be greater than input width");
  MXW_CHECK(h < 0 || p->y + p->height <= h, " y + height should not be greater than input height");
  mxw_shape o = *s;
  o.dims[s->ndim - 3] = p->height;
  o.dims[s->ndim - 2] = p->width;
  return mxw_shape_assign(&out[0], &o, "output");
}

static int fwd_crop(const mxw_op_call *c) {
  const CropParam *p = (const CropParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int nd = in->shape.ndim;
  int64_t N = nd == 4 ? in->shape.dims[0] : 1;
  int64_t H = in->shape.dims[nd - 3], W = in->shape.dims[nd - 2], C = in->shape.dims[nd - 1];
  size_t pix = (size_t)C * esize(in->dtype), row = (size_t)p->width * pix;
  for (int64_t b = 0; b < N; b++)
    for (int64_t y = 0; y < p->height; y++)
      memcpy((char *)out->data + (size_t)((b * p->height + y) * p->width) * pix,
             (const char *)in->data + (size_t)((b * H + p->y + y) * W + p->x) * pix, row);
  return 0;
}

static int grad_crop(mxw_grad_ctx *g) { /* zeros with the cropped box = dy */
  if (!mxw_dtype_is_float(mxw_grad_in_dtype(g, 0))) return 0;
  const CropParam *p = (const CropParam *)mxw_grad_param(g);
  char b[128], e[128];
  int batched = mxw_grad_in_shape(g, 0)->ndim == 4;
  snprintf(b, sizeof b, "(%s%lld, %lld, None)", batched ? "None, " : "", (long long)p->y, (long long)p->x);
  snprintf(e, sizeof e, "(%s%lld, %lld, None)", batched ? "None, " : "", (long long)(p->y + p->height),
           (long long)(p->x + p->width));
  mxw_gid z = mxw_grad_zeros_like(g, mxw_grad_in(g, 0));
  return mxw_grad_set(g, 0,
                      mxw_grad_op(g, "_slice_assign", MXW_KV("begin", b, "end", e), MXW_GIDS(z, mxw_grad_ograd(g, 0))));
}

static const mxw_op_def op_crop = {
    .gradient = grad_crop,
    .name = "_image_crop",
    .aliases = ALIASES("_npx__image_crop"),
    .doc = MXW_DOC("crops an (H, W, C) or (N, H, W, C) image to rows y .. y+height-1 and columns x .. x+width-1"),
    .attrs = k_crop_attrs,
    .num_attrs = NUM_ATTRS(k_crop_attrs),
    .param_size = sizeof(CropParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_crop,
    .forward = fwd_crop,
};

/* ==== the (H, W, C) augmenters: flips, brightness, contrast, saturation, hue, lighting ============ */
/* ImageShape: a 3-D (height, width, channels) image with 1 or 3 channels; output of the same shape. */
static int infer_image(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param, (void)nin, (void)nout;
  shape_buf b;
  mxw_shape s = in[0];
  MXW_TRY(mxw_shape_assign(&s, &out[0], "output"));
  if (s.ndim < 0) return 0;
  MXW_CHECK(s.ndim == 3, "Input image must have shape (height, width, channels), but got %s", SHAPE_STR(&s, b));
  int64_t ch = s.dims[2];
  MXW_CHECK(ch < 0 || ch == 3 || ch == 1,
            "The last dimension of input image must be the channel dimension with either 1 or 3 elements, but got "
            "input with shape %s",
            SHAPE_STR(&s, b));
  MXW_TRY(mxw_shape_assign(&in[0], &s, "data"));
  return mxw_shape_assign(&out[0], &s, "output");
}

static void copy_input(const mxw_op_call *c) {
  if (c->outputs[0].data != c->inputs[0].data)
    memcpy(c->outputs[0].data, c->inputs[0].data, (size_t)mxw_tensor_size(&c->inputs[0]) * esize(c->inputs[0].dtype));
}

/* Reverses axis `axis` (0: rows, 1: columns) of an (H, W, C) image; works in place. */
static void flip(const mxw_tensor *in, mxw_tensor *out, int axis) {
  int64_t H = in->shape.dims[0], W = in->shape.dims[1], C = in->shape.dims[2];
  int64_t head = axis == 0 ? 1 : H, mid = axis == 0 ? H : W, tail = axis == 0 ? W * C : C;
  size_t es = esize(in->dtype), run = (size_t)tail * es;
  char tmp[64];
  const char *s = (const char *)in->data;
  char *d = (char *)out->data;
  for (int64_t i = 0; i < head; i++) {
    for (int64_t j = 0; j < (mid + 1) / 2; j++) {
      size_t a = (size_t)((i * mid + j) * tail) * es, b = (size_t)((i * mid + mid - 1 - j) * tail) * es;
      if (a == b) {
        if (d != s) memcpy(d + a, s + a, run);
        continue;
      }
      for (size_t off = 0; off < run; off += sizeof tmp) { /* swap in chunks: safe when d == s */
        size_t n = run - off < sizeof tmp ? run - off : sizeof tmp;
        memcpy(tmp, s + a + off, n);
        memmove(d + a + off, s + b + off, n);
        memcpy(d + b + off, tmp, n);
      }
    }
  }
}

static int fwd_flip_lr(const mxw_op_call *c) {
  flip(&c->inputs[0], &c->outputs[0], 1);
  return 0;
}
static int fwd_flip_tb(const mxw_op_call *c) {
  flip(&c->inputs[0], &c->outputs[0], 0);
  return 0;
}
/* std::bernoulli_distribution(0.5): true keeps the image, false flips it. */
static int fwd_random_flip_lr(const mxw_op_call *c) {
  if (mxw_rand_uniform() < 0.5)
    copy_input(c);
  else
    flip(&c->inputs[0], &c->outputs[0], 1);
  return 0;
}
static int fwd_random_flip_tb(const mxw_op_call *c) {
  if (mxw_rand_uniform() < 0.5)
    copy_input(c);
  else
    flip(&c->inputs[0], &c->outputs[0], 0);
  return 0;
}

#define AUG_OP(var, NAME, DOC, FWD, ...)                           \
  static const mxw_op_def var = {.name = NAME,                     \
                                 .aliases = ALIASES("_npx_" NAME), \
                                 .doc = MXW_DOC(DOC),              \
                                 .num_inputs = 1,                  \
                                 .input_names = k_data,            \
                                 .num_outputs = 1,                 \
                                 .infer_shape = infer_image,       \
                                 .forward = FWD,                   \
                                 .inplace = 1,                     \
                                 __VA_ARGS__}

/* a flip is its own adjoint */
static int grad_flip_lr(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, mxw_grad_op(g, "_image_flip_left_right", NULL, MXW_GIDS(mxw_grad_ograd(g, 0))));
}
static int grad_flip_tb(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, mxw_grad_op(g, "_image_flip_top_bottom", NULL, MXW_GIDS(mxw_grad_ograd(g, 0))));
}
AUG_OP(op_flip_lr, "_image_flip_left_right", "reverses the columns of an (H, W, C) image", fwd_flip_lr,
       .gradient = grad_flip_lr);
AUG_OP(op_flip_tb, "_image_flip_top_bottom", "reverses the rows of an (H, W, C) image", fwd_flip_tb,
       .gradient = grad_flip_tb);
AUG_OP(op_random_flip_lr, "_image_random_flip_left_right",
       "reverses the columns of an (H, W, C) image with probability 0.5", fwd_random_flip_lr, .no_grad = 1);
AUG_OP(op_random_flip_tb, "_image_random_flip_top_bottom",
       "reverses the rows of an (H, W, C) image with probability 0.5", fwd_random_flip_tb, .no_grad = 1);

/* ---- colour adjustments: computed in float as MXNet, stored with its saturate_cast ------------- */
typedef struct {
  double min_factor, max_factor;
} RandomEnhanceParam;
static const mxw_attr_spec k_enhance_attrs[] = {
    MXW_A_FLOAT("min_factor", RandomEnhanceParam, min_factor, NULL, "minimum factor"),
    MXW_A_FLOAT("max_factor", RandomEnhanceParam, max_factor, NULL, "maximum factor"),
};
static int validate_enhance(void *param) {
  const RandomEnhanceParam *p = (const RandomEnhanceParam *)param;
  MXW_CHECK(p->min_factor >= 0, "value of attribute 'min_factor' (%g) must be at least 0", p->min_factor);
  MXW_CHECK(p->max_factor >= 0, "value of attribute 'max_factor' (%g) must be at least 0", p->max_factor);
  return 0;
}
/* std::uniform_real_distribution<float>(lo, hi) */
static float draw_factor(double lo, double hi) {
  return (float)lo + ((float)hi - (float)lo) * (float)mxw_rand_uniform();
}

/* Stores float v at element i with saturate_cast<DType>. */
static void store_sat(void *data, int dtype, int64_t i, float v) {
  if (dtype == MXW_UINT8)
    ((uint8_t *)data)[i] = sat_u8(v);
  else if (dtype == MXW_FLOAT32)
    ((float *)data)[i] = v;
  else
    mxw_store_f64(data, dtype, i, v);
}
static float load_f(const void *data, int dtype, int64_t i) {
  if (dtype == MXW_UINT8) return (float)((const uint8_t *)data)[i];
  if (dtype == MXW_FLOAT32) return ((const float *)data)[i];
  return (float)mxw_load_f64(data, dtype, i);
}

static const float k_gray[3] = {0.299f, 0.587f, 0.114f};

static void adjust_brightness(const mxw_tensor *in, mxw_tensor *out, float alpha) {
  int64_t n = mxw_tensor_size(in);
  for (int64_t i = 0; i < n; i++) store_sat(out->data, out->dtype, i, load_f(in->data, in->dtype, i) * alpha);
}

/* out = in * alpha + (1 - alpha) * mean gray level (0.299 R + 0.587 G + 0.114 B; the value itself for one channel) */
static void adjust_contrast(const mxw_tensor *in, mxw_tensor *out, float alpha) {
  int64_t len = in->shape.dims[0] * in->shape.dims[1], ch = in->shape.dims[2];
  float sum = 0.f;
  if (ch > 1) {
    for (int64_t l = 0; l < len; l++)
      for (int k = 0; k < 3; k++) sum += load_f(in->data, in->dtype, l * 3 + k) * k_gray[k];
  } else {
    for (int64_t l = 0; l < len; l++) sum += load_f(in->data, in->dtype, l);
  }
  float beta = (1 - alpha) * (sum / (float)len);
  for (int64_t i = 0; i < len * ch; i++)
    store_sat(out->data, out->dtype, i, load_f(in->data, in->dtype, i) * alpha + beta);
}

/* MXNet 1.9.1 assigns (not accumulates) the gray level in its loop, so the gray term is 0.114 * B
 * alone; kept as the reference computes it. One channel: a copy. */
static void adjust_saturation(const mxw_tensor *in, mxw_tensor *out, float alpha) {
  int64_t len = in->shape.dims[0] * in->shape.dims[1];
  if (in->shape.dims[2] == 1) {
    for (int64_t l = 0; l < len; l++) store_sat(out->data, out->dtype, l, load_f(in->data, in->dtype, l));
    return;
  }
  for (int64_t l = 0; l < len; l++) {
    float px[3];
    for (int k = 0; k < 3; k++) px[k] = load_f(in->data, in->dtype, l * 3 + k);
    float gray = px[2] * k_gray[2] * (1.f - alpha);
    for (int k = 0; k < 3; k++) store_sat(out->data, out->dtype, l * 3 + k, gray + px[k] * alpha);
  }
}

/* RGB (0..255) -> HLS (h in degrees, l and s in [0, 1]) and back, as OpenCV's float conversion. */
static void rgb_to_hls(float r, float g, float b, float *h, float *l, float *s) {
  r /= 255.f, g /= 255.f, b /= 255.f;
  float vmax = fmaxf(fmaxf(r, g), b), vmin = fminf(fminf(r, g), b), diff = vmax - vmin;
  *h = 0.f, *s = 0.f, *l = (vmax + vmin) * 0.5f;
  if (diff > 1.1920928955078125e-07f) {
    *s = *l < 0.5f ? diff / (vmax + vmin) : diff / (2.0f - vmax - vmin);
    float k = 60.f / diff;
    if (vmax == r)
      *h = (g - b) * k;
    else if (vmax == g)
      *h = (b - r) * k + 120.f;
    else
      *h = (r - g) * k + 240.f;
    if (*h < 0.f) *h += 360.f;
  }
}
static void hls_to_rgb(float h, float l, float s, float *r, float *g, float *b) {
  static const int sector_idx[6][3] = {{1, 3, 0}, {1, 0, 2}, {3, 0, 1}, {0, 2, 1}, {0, 1, 3}, {2, 1, 0}};
  float rr = l, gg = l, bb = l;
  if (s != 0) {
    float p2 = l <= 0.5f ? l * (1 + s) : l + s - l * s, p1 = 2 * l - p2;
    h *= 1.f / 60.f;
    h = isfinite(h) ? fmodf(h, 6.f) : 0.f; /* MXNet loops adding/subtracting 6; same value, no hang */
    if (h < 0) h += 6.f;
    if (h >= 6.f) h = 0.f; /* a tiny negative h rounds up to 6 */
    int sector = (int)h;
    h -= (float)sector;
    float tab[4] = {p2, p1, p1 + (p2 - p1) * (1 - h), p1 + (p2 - p1) * h};
    bb = tab[sector_idx[sector][0]];
    gg = tab[sector_idx[sector][1]];
    rr = tab[sector_idx[sector][2]];
  }
  *r = rr * 255.f, *g = gg * 255.f, *b = bb * 255.f;
}

/* Rotates the hue by alpha * 360 degrees. One channel: a copy. */
static void adjust_hue(const mxw_tensor *in, mxw_tensor *out, float alpha) {
  int64_t len = in->shape.dims[0] * in->shape.dims[1];
  if (in->shape.dims[2] == 1) {
    for (int64_t l = 0; l < len; l++) store_sat(out->data, out->dtype, l, load_f(in->data, in->dtype, l));
    return;
  }
  for (int64_t i = 0; i < len; i++) {
    float h, l, s, r, g, b;
    rgb_to_hls(load_f(in->data, in->dtype, 3 * i), load_f(in->data, in->dtype, 3 * i + 1),
               load_f(in->data, in->dtype, 3 * i + 2), &h, &l, &s);
    h += alpha * 360.f;
    hls_to_rgb(h, l, s, &r, &g, &b);
    store_sat(out->data, out->dtype, 3 * i, r);
    store_sat(out->data, out->dtype, 3 * i + 1, g);
    store_sat(out->data, out->dtype, 3 * i + 2, b);
  }
}

static int fwd_random_brightness(const mxw_op_call *c) {
  const RandomEnhanceParam *p = (const RandomEnhanceParam *)c->param;
  adjust_brightness(&c->inputs[0], &c->outputs[0], draw_factor(p->min_factor, p->max_factor));
  return 0;
}
static int fwd_random_contrast(const mxw_op_call *c) {
  const RandomEnhanceParam *p = (const RandomEnhanceParam *)c->param;
  adjust_contrast(&c->inputs[0], &c->outputs[0], draw_factor(p->min_factor, p->max_factor));
  return 0;
}
static int fwd_random_saturation(const mxw_op_call *c) {
  const RandomEnhanceParam *p = (const RandomEnhanceParam *)c->param;
  adjust_saturation(&c->inputs[0], &c->outputs[0], draw_factor(p->min_factor, p->max_factor));
  return 0;
}
static int fwd_random_hue(const mxw_op_call *c) {
  const RandomEnhanceParam *p = (const RandomEnhanceParam *)c->param;
  adjust_hue(&c->inputs[0], &c->outputs[0], draw_factor(p->min_factor, p->max_factor));
  return 0;
}

#define ENHANCE_OP(var, NAME, DOC, FWD)                                                          \
  AUG_OP(var, NAME, DOC, FWD, .attrs = k_enhance_attrs, .num_attrs = NUM_ATTRS(k_enhance_attrs), \
         .param_size = sizeof(RandomEnhanceParam), .validate = validate_enhance, .no_grad = 1)
ENHANCE_OP(op_random_brightness, "_image_random_brightness",
           "multiplies an (H, W, C) image by a factor drawn from U(min_factor, max_factor)", fwd_random_brightness);
ENHANCE_OP(op_random_contrast, "_image_random_contrast",
           "blends an (H, W, C) image with its mean gray level by a factor drawn from U(min_factor, max_factor)",
           fwd_random_contrast);
ENHANCE_OP(op_random_saturation, "_image_random_saturation",
           "blends an (H, W, C) image with its gray level by a factor drawn from U(min_factor, max_factor)",
           fwd_random_saturation);
ENHANCE_OP(op_random_hue, "_image_random_hue",
           "rotates the hue of an (H, W, C) RGB image by factor * 360 degrees, factor from U(min_factor, max_factor)",
           fwd_random_hue);

/* ---- _image_random_color_jitter: the four adjustments in a random order ------------------------ */
typedef struct {
  double brightness, contrast, saturation, hue;
} ColorJitterParam;
static const mxw_attr_spec k_jitter_attrs[] = {
    MXW_A_FLOAT("brightness", ColorJitterParam, brightness, NULL, "how much to jitter brightness"),
    MXW_A_FLOAT("contrast", ColorJitterParam, contrast, NULL, "how much to jitter contrast"),
    MXW_A_FLOAT("saturation", ColorJitterParam, saturation, NULL, "how much to jitter saturation"),
    MXW_A_FLOAT("hue", ColorJitterParam, hue, NULL, "how much to jitter hue"),
};
static int fwd_color_jitter(const mxw_op_call *c) {
  const ColorJitterParam *p = (const ColorJitterParam *)c->param;
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  int order[4] = {0, 1, 2, 3};
  for (int i = 3; i > 0; i--) { /* a uniform permutation (Fisher-Yates) */
    int j = (int)(mxw_rand_uniform() * (i + 1));
    int t = order[i];
    order[i] = order[j], order[j] = t;
  }
  int done = 0;
  for (int i = 0; i < 4; i++) {
    const mxw_tensor *src = done ? out : in;
    switch (order[i]) {
      case 0:
        if (p->brightness > 0) adjust_brightness(src, out, 1.f + draw_factor(-p->brightness, p->brightness)), done = 1;
        break;
      case 1:
        if (p->contrast > 0) adjust_contrast(src, out, 1.f + draw_factor(-p->contrast, p->contrast)), done = 1;
        break;
      case 2:
        if (p->saturation > 0) adjust_saturation(src, out, 1.f + draw_factor(-p->saturation, p->saturation)), done = 1;
        break;
      default:
        if (p->hue > 0) adjust_hue(src, out, draw_factor(-p->hue, p->hue)), done = 1;
        break;
    }
  }
  if (!done) copy_input(c);
  return 0;
}
AUG_OP(op_random_color_jitter, "_image_random_color_jitter",
       "applies brightness, contrast, saturation and hue jitter (each if > 0) to an (H, W, C) image in a random order",
       fwd_color_jitter, .attrs = k_jitter_attrs, .num_attrs = NUM_ATTRS(k_jitter_attrs),
       .param_size = sizeof(ColorJitterParam), .no_grad = 1);

/* ---- lighting (AlexNet's PCA noise) ----------------------------------------------------------- */
static void adjust_lighting(const mxw_tensor *in, mxw_tensor *out, const float alpha[3]) {
  static const float eig[3][3] = {{55.46f * -0.5675f, 4.794f * 0.7192f, 1.148f * 0.4009f},
                                  {55.46f * -0.5808f, 4.794f * -0.0045f, 1.148f * -0.8140f},
                                  {55.46f * -0.5836f, 4.794f * -0.6948f, 1.148f * 0.4203f}};
  int64_t len = in->shape.dims[0] * in->shape.dims[1];
  if (in->shape.dims[2] == 1) {
    for (int64_t l = 0; l < len; l++) store_sat(out->data, out->dtype, l, load_f(in->data, in->dtype, l));
    return;
  }
  float pca[3];
  for (int k = 0; k < 3; k++) pca[k] = eig[k][0] * alpha[0] + eig[k][1] * alpha[1] + eig[k][2] * alpha[2];
  for (int64_t i = 0; i < len; i++)
    for (int k = 0; k < 3; k++)
      store_sat(out->data, out->dtype, 3 * i + k, load_f(in->data, in->dtype, 3 * i + k) + pca[k]);
}

typedef struct {
  mxw_str alpha_s;
  int nalpha;
  float alpha[MAX_FLOATS];
} AdjustLightingParam;
static const mxw_attr_spec k_adjust_lighting_attrs[] = {
    MXW_A_STRING("alpha", AdjustLightingParam, alpha_s, NULL, "the lighting alphas for the R, G, B channels"),
};
static int validate_adjust_lighting(void *param) {
  AdjustLightingParam *p = (AdjustLightingParam *)param;
  MXW_TRY(parse_float_tuple("alpha", p->alpha_s.s, p->alpha, &p->nalpha));
  MXW_CHECK(p->nalpha == 3, "alpha must have 3 elements (R, G, B), got %d", p->nalpha);
  return 0;
}
static int fwd_adjust_lighting(const mxw_op_call *c) {
  adjust_lighting(&c->inputs[0], &c->outputs[0], ((const AdjustLightingParam *)c->param)->alpha);
  return 0;
}
/* adding a per-channel constant: the gradient passes through */
static int grad_identity(mxw_grad_ctx *g) { return mxw_grad_set(g, 0, mxw_grad_ograd(g, 0)); }
AUG_OP(op_adjust_lighting, "_image_adjust_lighting",
       "adds AlexNet-style PCA lighting noise with the given alphas to an (H, W, C) RGB image", fwd_adjust_lighting,
       .attrs = k_adjust_lighting_attrs, .num_attrs = NUM_ATTRS(k_adjust_lighting_attrs),
       .param_size = sizeof(AdjustLightingParam), .validate = validate_adjust_lighting, .gradient = grad_identity);

typedef struct {
  double alpha_std;
} RandomLightingParam;
static const mxw_attr_spec k_random_lighting_attrs[] = {
    MXW_A_FLOAT("alpha_std", RandomLightingParam, alpha_std, "0.05", "level of the lighting noise"),
};
static int fwd_random_lighting(const mxw_op_call *c) {
  float sd = (float)((const RandomLightingParam *)c->param)->alpha_std, alpha[3];
  for (int k = 0; k < 3; k++) alpha[k] = (float)mxw_rand_normal() * sd;
  adjust_lighting(&c->inputs[0], &c->outputs[0], alpha);
  return 0;
}
AUG_OP(op_random_lighting, "_image_random_lighting",
       "adds AlexNet-style PCA lighting noise with alphas drawn from N(0, alpha_std) to an (H, W, C) RGB image",
       fwd_random_lighting, .attrs = k_random_lighting_attrs, .num_attrs = NUM_ATTRS(k_random_lighting_attrs),
       .param_size = sizeof(RandomLightingParam), .no_grad = 1);

MXW_FAMILY(image, &op_to_tensor, &op_normalize, &op_resize, &op_crop, &op_flip_lr, &op_flip_tb, &op_random_flip_lr,
           &op_random_flip_tb, &op_random_brightness, &op_random_contrast, &op_random_saturation, &op_random_hue,
           &op_random_color_jitter, &op_adjust_lighting, &op_random_lighting);
