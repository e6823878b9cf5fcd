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
 * Resize: MXNet calls OpenCV. interp 0 is INTER_NEAREST (source index floor(d * src / dst));
 * interp 1 is INTER_LINEAR with half-pixel centres (s = (d + 0.5) * src / dst - 0.5, clamped to
 * the edge pixels), computed as OpenCV does: float coefficients for float32/float64 images and,
 * for uint8, OpenCV's 11-bit fixed-point coefficients with its rounding (bit-exact). Other
 * interpolations (cubic, area, lanczos) are not implemented here and fail with a message.
 *
 * Random ops draw from the core's one seeded stream (mx.random.seed); the values differ from
 * MXNet's generator. None of these ops has a gradient yet (MXNet's are mostly "_copy").
 * Where MXNet leaves the output unwritten (the middle column of an out-of-place flip of an odd
 * width, hue/lighting on one channel) the input is copied instead. */
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
  if (mxw_grad_in_dtype(g, 0) != MXW_FLOAT32) d = mxw_grad_op(g, "Cast", MXW_KV("dtype", mxw_dtype_name(mxw_grad_in_dtype(g, 0))), MXW_GIDS(d));
  return mxw_grad_set(g, 0, d);
}

static const mxw_op_def op_to_tensor = {
    .gradient = grad_to_tensor,
    .name = "_image_to_tensor",
    .aliases = ALIASES("_npx__image_to_tensor"),
    .doc = "(H, W, C) or (N, H, W, C) image with values in [0, 255] -> float32 (C, H, W) or (N, C, H, W) / 255",
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

/* "(a, b, c)", "[a,b]", "(a,)", "a" -> floats; -1 with an error naming the attribute. */
static int parse_float_tuple(const char *name, const char *text, float *v, int *n) {
  const char *p = text;
  while (*p == ' ') p++;
  char close = 0;
  if (*p == '(' || *p == '[') close = *p == '(' ? ')' : ']', p++;
  *n = 0;
  for (;;) {
    while (*p == ' ') p++;
    if (close && *p == close) break;
    if (!close && *p == '\0') break;
    char *end;
    double d = strtod(p, &end);
    if (end == p || *n >= MAX_FLOATS) goto bad;
    v[(*n)++] = (float)d;
    p = end;
    while (*p == ' ') p++;
    if (*p == ',') p++;
    else if (!(close ? *p == close : *p == '\0')) goto bad;
  }
  if (close) p++;
  while (*p == ' ') p++;
  if (*p != '\0' || *n == 0) goto bad;
  return 0;
bad:
  return mxw_fail("invalid value '%s' for attribute '%s': expected a float or a tuple of at most %d floats "
                  "such as (0.5, 0.5, 0.5)", text, name, MAX_FLOATS);
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
              "input with shape %s", s.ndim == 3 ? "first" : "second", SHAPE_STR(&s, b));
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
  return mxw_grad_set(g, 0, mxw_grad_op(g, "_image_normalize", MXW_KV("mean", mean, "std", p->std_s.s),
                                        MXW_GIDS(mxw_grad_ograd(g, 0))));
}

static const mxw_op_def op_normalize = {
    .gradient = grad_normalize,
    .name = "_image_normalize",
    .aliases = ALIASES("_npx__image_normalize"),
    .doc = "(C, H, W) or (N, C, H, W) tensor: out[c] = (in[c] - mean[c]) / std[c]; one mean/std value applies to "
           "every channel",
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
    MXW_A_INT("interp", ResizeParam, interp, "1",
              "interpolation: 0 nearest neighbour, 1 bilinear (as OpenCV's INTER_NEAREST / INTER_LINEAR)"),
};

static int validate_resize(void *param) {
  const ResizeParam *p = (const ResizeParam *)param;
  MXW_CHECK(p->interp == 0 || p->interp == 1,
            "interp=%lld is not supported: this build implements 0 (nearest neighbour) and 1 (bilinear)",
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

/* INTER_NEAREST: source index min(floor(d * (1 / (dst / src))), src - 1), in double as OpenCV. */
static void nearest_index(int64_t ssize, int64_t dsize, int64_t *ofs) {
  double ifx = 1.0 / ((double)dsize / (double)ssize);
  for (int64_t d = 0; d < dsize; d++) {
    int64_t s = (int64_t)floor((double)d * ifx);
    ofs[d] = s < ssize - 1 ? s : ssize - 1;
  }
}

/* INTER_LINEAR coefficients: f = (float)((d + 0.5) * scale - 0.5), s = floor(f), weights (1 - (f - s), f - s);
 * before the first and past the last pixel the edge pixel alone (weight 1). */
static void linear_coeffs(int64_t ssize, int64_t dsize, int64_t *ofs, float *frac) {
  double scale = 1.0 / ((double)dsize / (double)ssize);
  for (int64_t d = 0; d < dsize; d++) {
    float f = (float)(((double)d + 0.5) * scale - 0.5);
    int64_t s = (int64_t)floorf(f);
    f -= (float)s;
    if (s < 0) f = 0.f, s = 0;
    if (s >= ssize - 1) f = 0.f, s = ssize - 1;
    ofs[d] = s;
    frac[d] = f;
  }
}

static void resize_nearest(const char *src, char *dst, int64_t H, int64_t W, int64_t C, int64_t OH, int64_t OW,
                           size_t es, const int64_t *xo, const int64_t *yo) {
  size_t pix = (size_t)C * es;
  for (int64_t y = 0; y < OH; y++) {
    const char *row = src + (size_t)(yo[y] * W) * pix;
    char *drow = dst + (size_t)(y * OW) * pix;
    for (int64_t x = 0; x < OW; x++) memcpy(drow + (size_t)x * pix, row + (size_t)xo[x] * pix, pix);
  }
  (void)H;
}

/* OpenCV's uint8 bilinear: 11-bit coefficients (rounded), horizontal sums in int, then
 * (((b0 * (S0 >> 4)) >> 16) + ((b1 * (S1 >> 4)) >> 16) + 2) >> 2. */
static void resize_linear_u8(const uint8_t *src, uint8_t *dst, int64_t H, int64_t W, int64_t C, int64_t OH, int64_t OW,
                             const int64_t *xo, const float *xf, const int64_t *yo, const float *yf, int32_t *rows) {
  int64_t rw = OW * C;
  int32_t *r0 = rows, *r1 = rows + rw;
  for (int64_t y = 0; y < OH; y++) {
    int64_t sy[2] = {yo[y], yo[y] + 1 < H ? yo[y] + 1 : H - 1};
    for (int k = 0; k < 2; k++) {
      const uint8_t *s = src + (size_t)(sy[k] * W * C);
      int32_t *d = k ? r1 : r0;
      for (int64_t x = 0; x < OW; x++) {
        int32_t a0 = (int32_t)lrintf((1.f - xf[x]) * 2048.f), a1 = (int32_t)lrintf(xf[x] * 2048.f);
        int64_t sx = xo[x];
        for (int64_t c = 0; c < C; c++) {
          if (sx + 1 >= W) d[x * C + c] = s[sx * C + c] * 2048;
          else d[x * C + c] = s[sx * C + c] * a0 + s[(sx + 1) * C + c] * a1;
        }
      }
    }
    int32_t b0 = (int32_t)lrintf((1.f - yf[y]) * 2048.f), b1 = (int32_t)lrintf(yf[y] * 2048.f);
    uint8_t *o = dst + (size_t)(y * rw);
    for (int64_t i = 0; i < rw; i++)
      o[i] = (uint8_t)((((b0 * (r0[i] >> 4)) >> 16) + ((b1 * (r1[i] >> 4)) >> 16) + 2) >> 2);
  }
}

#define RESIZE_LINEAR_FLOAT(NAME, T)                                                                                  \
  static void NAME(const T *src, T *dst, int64_t H, int64_t W, int64_t C, int64_t OH, int64_t OW, const int64_t *xo, \
                   const float *xf, const int64_t *yo, const float *yf, T *rows) {                                  \
    int64_t rw = OW * C;                                                                                             \
    T *r0 = rows, *r1 = rows + rw;                                                                                   \
    for (int64_t y = 0; y < OH; y++) {                                                                               \
      int64_t sy[2] = {yo[y], yo[y] + 1 < H ? yo[y] + 1 : H - 1};                                                   \
      for (int k = 0; k < 2; k++) {                                                                                  \
        const T *s = src + sy[k] * W * C;                                                                            \
        T *d = k ? r1 : r0;                                                                                          \
        for (int64_t x = 0; x < OW; x++) {                                                                           \
          float a0 = 1.f - xf[x], a1 = xf[x];                                                                        \
          int64_t sx = xo[x];                                                                                        \
          for (int64_t c = 0; c < C; c++)                                                                            \
            d[x * C + c] = sx + 1 >= W ? s[sx * C + c] : s[sx * C + c] * a0 + s[(sx + 1) * C + c] * a1;              \
        }                                                                                                            \
      }                                                                                                              \
      float b0 = 1.f - yf[y], b1 = yf[y];                                                                            \
      T *o = dst + y * rw;                                                                                           \
      for (int64_t i = 0; i < rw; i++) o[i] = r0[i] * b0 + r1[i] * b1;                                               \
    }                                                                                                                \
  }
RESIZE_LINEAR_FLOAT(resize_linear_f32, float)
RESIZE_LINEAR_FLOAT(resize_linear_f64, double)

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
  size_t row_bytes = (size_t)(OW * C) * (dt == MXW_FLOAT64 ? 8 : 4);
  size_t bytes = (size_t)(OW + OH) * (sizeof(int64_t) + sizeof(float)) + 2 * row_bytes + 8;
  char *buf = (char *)malloc(bytes);
  if (!buf) return mxw_fail("image resize: out of memory (%zu bytes of scratch)", bytes);
  void *rows = buf; /* two horizontally resized rows (int32 for uint8, else the dtype) */
  int64_t *xo = (int64_t *)(buf + 2 * row_bytes + (8 - 2 * row_bytes % 8) % 8), *yo = xo + OW;
  float *xf = (float *)(yo + OH), *yf = xf + OW;
  if (p->interp == 0) {
    nearest_index(W, OW, xo);
    nearest_index(H, OH, yo);
  } else {
    linear_coeffs(W, OW, xo, xf);
    linear_coeffs(H, OH, yo, yf);
  }
  size_t in_step = (size_t)(H * W * C) * es, out_step = (size_t)(OH * OW * C) * es;
  for (int64_t b = 0; b < N; b++) {
    const char *s = (const char *)in->data + (size_t)b * in_step;
    char *d = (char *)out->data + (size_t)b * out_step;
    if (p->interp == 0) resize_nearest(s, d, H, W, C, OH, OW, es, xo, yo);
    else if (dt == MXW_UINT8)
      resize_linear_u8((const uint8_t *)s, (uint8_t *)d, H, W, C, OH, OW, xo, xf, yo, yf, (int32_t *)rows);
    else if (dt == MXW_FLOAT32)
      resize_linear_f32((const float *)s, (float *)d, H, W, C, OH, OW, xo, xf, yo, yf, (float *)rows);
    else
      resize_linear_f64((const double *)s, (double *)d, H, W, C, OH, OW, xo, xf, yo, yf, (double *)rows);
  }
  free(buf);
  return 0;
}

static const mxw_op_def op_resize = {
    .no_grad = 1,
    .name = "_image_resize",
    .aliases = ALIASES("_npx__image_resize"),
    .doc = "resizes an (H, W, C) or (N, H, W, C) image to size (width, height), or (size, size) / the short edge "
           "to size with keep_ratio, as OpenCV's resize (interp 0 nearest, 1 bilinear)",
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
  MXW_CHECK(s->ndim == 3 || s->ndim == 4,
            "Image Crop expects inputs of 3D (h, w, c) or 4D (n, h, w, c). But got %d", s->ndim);
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
  snprintf(e, sizeof e, "(%s%lld, %lld, None)", batched ? "None, " : "", (long long)(p->y + p->height), (long long)(p->x + p->width));
  mxw_gid z = mxw_grad_zeros_like(g, mxw_grad_in(g, 0));
  return mxw_grad_set(g, 0, mxw_grad_op(g, "_slice_assign", MXW_KV("begin", b, "end", e), MXW_GIDS(z, mxw_grad_ograd(g, 0))));
}

static const mxw_op_def op_crop = {
    .gradient = grad_crop,
    .name = "_image_crop",
    .aliases = ALIASES("_npx__image_crop"),
    .doc = "crops an (H, W, C) or (N, H, W, C) image to rows y .. y+height-1 and columns x .. x+width-1",
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
            "input with shape %s", SHAPE_STR(&s, b));
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

static int fwd_flip_lr(const mxw_op_call *c) { flip(&c->inputs[0], &c->outputs[0], 1); return 0; }
static int fwd_flip_tb(const mxw_op_call *c) { flip(&c->inputs[0], &c->outputs[0], 0); return 0; }
/* std::bernoulli_distribution(0.5): true keeps the image, false flips it. */
static int fwd_random_flip_lr(const mxw_op_call *c) {
  if (mxw_rand_uniform() < 0.5) copy_input(c);
  else flip(&c->inputs[0], &c->outputs[0], 1);
  return 0;
}
static int fwd_random_flip_tb(const mxw_op_call *c) {
  if (mxw_rand_uniform() < 0.5) copy_input(c);
  else flip(&c->inputs[0], &c->outputs[0], 0);
  return 0;
}

#define AUG_OP(var, NAME, DOC, FWD, ...)                                                                             \
  static const mxw_op_def var = {.name = NAME, .aliases = ALIASES("_npx_" NAME), .doc = DOC, .num_inputs = 1,        \
                                 .input_names = k_data, .num_outputs = 1, .infer_shape = infer_image,               \
                                 .forward = FWD, .inplace = 1, __VA_ARGS__}

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
  if (dtype == MXW_UINT8) ((uint8_t *)data)[i] = sat_u8(v);
  else if (dtype == MXW_FLOAT32) ((float *)data)[i] = v;
  else mxw_store_f64(data, dtype, i, v);
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
    if (vmax == r) *h = (g - b) * k;
    else if (vmax == g) *h = (b - r) * k + 120.f;
    else *h = (r - g) * k + 240.f;
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

#define ENHANCE_OP(var, NAME, DOC, FWD)                                                                              \
  AUG_OP(var, NAME, DOC, FWD, .attrs = k_enhance_attrs, .num_attrs = NUM_ATTRS(k_enhance_attrs),                     \
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
