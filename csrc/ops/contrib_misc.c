/* contrib_misc.c -- the small operators real GluonCV / GluonNLP exports use beside their main
 * layers (MXNet 1.9.1): _contrib_AdaptiveAvgPooling2D (adaptive_avg_pooling.cc),
 * _contrib_BilinearResize2D (bilinear_resize-inl.h, every mode), shape_array and size_array
 * (elemwise_unary_op_basic.cc), broadcast_axis / broadcast_axes (broadcast_reduce_op_value.cc),
 * _contrib_arange_like (init_op.h), _contrib_div_sqrt_dim (transformer-inl.h) and erfinv.
 *
 * dtypes: the pooling and resize kernels run in float32 and float64; float16 / bfloat16 go through
 * float32 copies (MXNet computes them in the 16-bit type); integer data is an error there, as
 * MXNet's MSHADOW_REAL_TYPE_SWITCH. The index ops take any dtype.
 * Gradients: adaptive pooling and resize have `_backward_contrib_*` kernels whose inputs are
 * (ograd, data[, like]), data for its shape (MXNet's take ograd only; its executor knows the
 * shapes); broadcast_axis sums ograd back (MXNet's _broadcast_backward); div_sqrt_dim is its own
 * gradient; erfinv's is ograd * sqrt(pi)/2 * exp(erfinv(x)^2) from the output. shape_array,
 * size_array and arange_like are non-differentiable (MakeZeroGradNodes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/mxw_parallel.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
typedef char shape_buf[160];

static const char *const k_data[] = {"data", NULL};
static const char *const k_ograd_data[] = {"ograd", "data", NULL};
static const char *const k_lhs_rhs[] = {"lhs", "rhs", NULL};

static size_t esize(int dtype) { return (size_t)mxw_dtype_size(dtype); }
static int is_half(int dtype) { return dtype == MXW_FLOAT16 || dtype == MXW_BFLOAT16; }

/* The floating dtypes these kernels take (MXNet: "This operation only support floating point types"). */
static int check_real(const char *op, int dtype) {
  if (dtype == MXW_FLOAT32 || dtype == MXW_FLOAT64 || is_half(dtype)) return 0;
  return mxw_fail("%s only supports floating point types, got %s", op, mxw_dtype_name(dtype));
}

/* A 4-D (N, C, H, W) data shape, or an error naming the op. */
static int check_4d(const char *op, const mxw_shape *s, const char *what) {
  shape_buf b;
  MXW_CHECK(s->ndim == 4, "%s: %s must be 4-D (N, C, H, W), got shape %s", op, what, SHAPE_STR(s, b));
  return 0;
}

/* (ograd, data, ...) -> gradients shaped like data (and the later inputs): for the backward ops. */
static int infer_backward_like_inputs(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  for (int i = 0; i < nout && i + 1 < nin; i++) {
    MXW_TRY(mxw_shape_assign(&out[i], &in[i + 1], "input gradient"));
    MXW_TRY(mxw_shape_assign(&in[i + 1], &out[i], "input"));
  }
  return 0;
}

/* ==== _contrib_AdaptiveAvgPooling2D ============================================================== */
typedef struct {
  mxw_tuple output_size;
} AdaptivePoolParam;

static const mxw_attr_spec k_adaptive_attrs[] = {
    MXW_A_SHAPE("output_size", AdaptivePoolParam, output_size, "()",
                "int (output size) or a tuple of int for output (height, width); () is 1x1"),
};
static int validate_adaptive(void *param) {
  const AdaptivePoolParam *p = (const AdaptivePoolParam *)param;
  for (int i = 0; i < p->output_size.ndim; i++)
    MXW_CHECK(p->output_size.v[i] >= 0, "output_size must not be negative, got %lld", (long long)p->output_size.v[i]);
  return 0;
}
/* MXNet: one value -> (v, v); two -> (h, w); none (or more than two) -> (1, 1). */
static void adaptive_out_hw(const AdaptivePoolParam *p, int64_t *oh, int64_t *ow) {
  const mxw_tuple *t = &p->output_size;
  if (t->ndim == 1) {
    *oh = *ow = t->v[0];
  } else if (t->ndim == 2) {
    *oh = t->v[0];
    *ow = t->v[1];
  } else {
    *oh = *ow = 1;
  }
}
static int infer_adaptive(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  (void)nout;
  if (in[0].ndim < 0) return 0;
  MXW_TRY(check_4d("AdaptiveAvgPooling2D", &in[0], "data"));
  mxw_shape o = in[0];
  adaptive_out_hw((const AdaptivePoolParam *)param, &o.dims[2], &o.dims[3]);
  return mxw_shape_assign(&out[0], &o, "output");
}

/* MXNet's START_IND / END_IND: the window of output cell a of b over c inputs, in float. */
static inline int64_t ap_start(int64_t a, int64_t b, int64_t c) { return (int64_t)floorf((float)(a * c) / (float)b); }
static inline int64_t ap_end(int64_t a, int64_t b, int64_t c) {
  return (int64_t)ceilf((float)((a + 1) * c) / (float)b);
}

typedef struct {
  const void *x;
  void *y;
  int64_t H, W, OH, OW;
  const int64_t *hs, *he, *ws, *we; /* windows per output row / column */
  int dtype;
} ap_job;

/* Each output cell: the window's sum (rows, then columns, in the dtype) / kW / kH. */
#define DEFINE_AP_FWD(NAME, T)                                                                \
  static void NAME(void *ctx, int64_t p0, int64_t p1) {                                       \
    const ap_job *j = (const ap_job *)ctx;                                                    \
    for (int64_t p = p0; p < p1; p++) {                                                       \
      const T *x = (const T *)j->x + p * j->H * j->W;                                         \
      T *y = (T *)j->y + p * j->OH * j->OW;                                                   \
      for (int64_t oh = 0; oh < j->OH; oh++)                                                  \
        for (int64_t ow = 0; ow < j->OW; ow++) {                                              \
          T sum = 0;                                                                          \
          for (int64_t ih = j->hs[oh]; ih < j->he[oh]; ih++)                                  \
            for (int64_t iw = j->ws[ow]; iw < j->we[ow]; iw++) sum += x[ih * j->W + iw];      \
          y[oh * j->OW + ow] = sum / (T)(j->we[ow] - j->ws[ow]) / (T)(j->he[oh] - j->hs[oh]); \
        }                                                                                     \
    }                                                                                         \
  }
DEFINE_AP_FWD(ap_fwd_f32, float)
DEFINE_AP_FWD(ap_fwd_f64, double)

/* The gradient: ograd / kH / kW added to every cell of the window. */
#define DEFINE_AP_BWD(NAME, T)                                                                       \
  static void NAME(void *ctx, int64_t p0, int64_t p1) {                                              \
    const ap_job *j = (const ap_job *)ctx;                                                           \
    for (int64_t p = p0; p < p1; p++) {                                                              \
      const T *dy = (const T *)j->x + p * j->OH * j->OW;                                             \
      T *dx = (T *)j->y + p * j->H * j->W;                                                           \
      for (int64_t i = 0; i < j->H * j->W; i++) dx[i] = 0;                                           \
      for (int64_t oh = 0; oh < j->OH; oh++)                                                         \
        for (int64_t ow = 0; ow < j->OW; ow++) {                                                     \
          const T g = dy[oh * j->OW + ow] / (T)(j->he[oh] - j->hs[oh]) / (T)(j->we[ow] - j->ws[ow]); \
          for (int64_t ih = j->hs[oh]; ih < j->he[oh]; ih++)                                         \
            for (int64_t iw = j->ws[ow]; iw < j->we[ow]; iw++) dx[ih * j->W + iw] += g;              \
        }                                                                                            \
    }                                                                                                \
  }
DEFINE_AP_BWD(ap_bwd_f32, float)
DEFINE_AP_BWD(ap_bwd_f64, double)

/* x: the tensor read (data, or ograd), y: the one written; (H, W) the data plane, (OH, OW) the pooled one. */
static int adaptive_run(const mxw_tensor *x, mxw_tensor *y, const mxw_shape *data, const mxw_shape *pooled, int bwd) {
  const int64_t planes = data->dims[0] * data->dims[1], H = data->dims[2], W = data->dims[3];
  const int64_t OH = pooled->dims[2], OW = pooled->dims[3];
  int64_t *win = (int64_t *)mxw_scratch(0, (size_t)(2 * (OH + OW) + 1) * sizeof(int64_t));
  if (!win) return -1;
  int64_t *hs = win, *he = hs + OH, *ws = he + OH, *we = ws + OW;
  for (int64_t i = 0; i < OH; i++) hs[i] = ap_start(i, OH, H), he[i] = ap_end(i, OH, H);
  for (int64_t i = 0; i < OW; i++) ws[i] = ap_start(i, OW, W), we[i] = ap_end(i, OW, W);
  ap_job j = {x->data, y->data, H, W, OH, OW, hs, he, ws, we, x->dtype};
  const double cost = (double)(H * W + OH * OW) * (x->dtype == MXW_FLOAT64 ? 2.0 : 1.0);
  if (x->dtype == MXW_FLOAT32)
    mxw_parallel_run(planes, 1, cost, bwd ? ap_bwd_f32 : ap_fwd_f32, &j);
  else
    mxw_parallel_run(planes, 1, cost, bwd ? ap_bwd_f64 : ap_fwd_f64, &j);
  return 0;
}
static int fwd_adaptive(const mxw_op_call *c) {
  MXW_TRY(check_real("AdaptiveAvgPooling2D", c->inputs[0].dtype));
  if (is_half(c->inputs[0].dtype)) return mxw_run_as_f32(c, fwd_adaptive);
  return adaptive_run(&c->inputs[0], &c->outputs[0], &c->inputs[0].shape, &c->outputs[0].shape, 0);
}
static int fwd_backward_adaptive(const mxw_op_call *c) {
  MXW_TRY(check_real("AdaptiveAvgPooling2D", c->inputs[0].dtype));
  if (is_half(c->inputs[0].dtype)) return mxw_run_as_f32(c, fwd_backward_adaptive);
  return adaptive_run(&c->inputs[0], &c->outputs[0], &c->outputs[0].shape, &c->inputs[0].shape, 1);
}
static int grad_adaptive(mxw_grad_ctx *g) {
  mxw_gid dx;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_contrib_AdaptiveAvgPooling2D",
                          MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}
/* Second order: the backward spreads each output cell's gradient over its window divided by the
 * window's size, the transpose of the forward's average: its gradient is the forward of h. */
static int grad_backward_adaptive(mxw_grad_ctx *g) {
  mxw_gid d = -1;
  MXW_TRY(mxw_grad_op_fwd(g, "_contrib_AdaptiveAvgPooling2D", MXW_GIDS(mxw_grad_ograd(g, 0)), &d, 1));
  return mxw_grad_set(g, 0, d);
}
static const mxw_op_def op_adaptive = {
    .name = "_contrib_AdaptiveAvgPooling2D",
    .doc = MXW_DOC("2-D adaptive average pooling of NCHW data to output_size (h, w): output cell (i, j) averages rows "
                   "[floor(i*H/h), ceil((i+1)*H/h)) and the matching columns"),
    .attrs = k_adaptive_attrs,
    .num_attrs = 1,
    .param_size = sizeof(AdaptivePoolParam),
    .validate = validate_adaptive,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_adaptive,
    .forward = fwd_adaptive,
    .gradient = grad_adaptive};
static const mxw_op_def op_backward_adaptive = {
    .name = "_backward_contrib_AdaptiveAvgPooling2D",
    .doc = MXW_DOC("the gradient of _contrib_AdaptiveAvgPooling2D (inputs ograd and data, for its shape)"),
    .attrs = k_adaptive_attrs,
    .num_attrs = 1,
    .param_size = sizeof(AdaptivePoolParam),
    .validate = validate_adaptive,
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = infer_backward_like_inputs,
    .forward = fwd_backward_adaptive,
    .gradient = grad_backward_adaptive,
};

/* ==== _contrib_BilinearResize2D ================================================================== */
enum { RS_SIZE, RS_ODD_SCALE, RS_LIKE, RS_TO_EVEN_DOWN, RS_TO_EVEN_UP, RS_TO_ODD_DOWN, RS_TO_ODD_UP };
static const char *const k_resize_modes[] = {"size",       "odd_scale",   "like",      "to_even_down",
                                             "to_even_up", "to_odd_down", "to_odd_up", NULL};
typedef struct {
  int64_t height, width;
  mxw_opt_float scale_height, scale_width;
  int mode;
  int align_corners;
} ResizeParam;

static const mxw_attr_spec k_resize_attrs[] = {
    MXW_A_INT("height", ResizeParam, height, "1",
              "output height (ignored if scale_height is given or mode is not \"size\")"),
    MXW_A_INT("width", ResizeParam, width, "1",
              "output width (ignored if scale_height is given or mode is not \"size\")"),
    MXW_A_OPT_FLOAT("scale_height", ResizeParam, scale_height, "None",
                    "sampling scale of the height (size, odd_scale)"),
    MXW_A_OPT_FLOAT("scale_width", ResizeParam, scale_width, "None", "sampling scale of the width (size, odd_scale)"),
    MXW_A_ENUM("mode", ResizeParam, mode, "size", k_resize_modes,
               "size, odd_scale, like (the second input's H and W), to_even_down, to_even_up, to_odd_down, to_odd_up"),
    MXW_A_BOOL("align_corners", ResizeParam, align_corners, "True",
               "True: corner pixels map to corner pixels; False: half-pixel centres"),
};
static const char *const k_resize_inputs[] = {"data", "like", NULL};
static const char *const k_resize_bwd_inputs[] = {"ograd", "data", "like", NULL};

static int validate_resize(void *param) {
  const ResizeParam *p = (const ResizeParam *)param;
  MXW_CHECK(p->height >= 1, "value %lld for Parameter height should be greater equal to 1", (long long)p->height);
  MXW_CHECK(p->width >= 1, "value %lld for Parameter width should be greater equal to 1", (long long)p->width);
  if (p->mode == RS_ODD_SCALE)
    MXW_CHECK(p->scale_height.has && p->scale_width.has, "mode odd_scale needs scale_height and scale_width");
  /* MXNet's "size" mode reads scale_width whenever scale_height is given */
  if (p->mode == RS_SIZE && p->scale_height.has)
    MXW_CHECK(p->scale_width.has, "scale_width must be given with scale_height (mode size)");
  return 0;
}
static int resize_num_inputs(const void *param) { return ((const ResizeParam *)param)->mode == RS_LIKE ? 2 : 1; }
static int resize_bwd_num_inputs(const void *param) { return resize_num_inputs(param) + 1; }

/* MXNet keeps the new sizes in int16_t; larger ones are an error here instead of wrapping. */
static int resize_dim(int64_t v, const char *what, int64_t *out) {
  MXW_CHECK(v >= 0 && v <= 32767, "BilinearResize2D: output %s %lld is out of range [0, 32767]", what, (long long)v);
  *out = v;
  return 0;
}
/* (int)(scale * size) in float, as MXNet (a float scale times the dim). */
static int64_t scaled(double scale, int64_t size) { return (int64_t)((float)scale * (float)size); }

static int infer_resize(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const ResizeParam *p = (const ResizeParam *)param;
  (void)nout;
  if (in[0].ndim < 0) return 0;
  MXW_TRY(check_4d("BilinearResize2D", &in[0], "data"));
  const int64_t H = in[0].dims[2], W = in[0].dims[3];
  int64_t nh = -1, nw = -1; /* -1: unknown until data's (or like's) size is */
  switch (p->mode) {
    case RS_SIZE:
      nh = !p->scale_height.has ? p->height : H >= 0 ? scaled(p->scale_height.v, H) : -1;
      nw = !p->scale_height.has ? p->width : W >= 0 ? scaled(p->scale_width.v, W) : -1;
      break;
    case RS_ODD_SCALE:
      if (H >= 0) nh = H % 2 == 0 ? scaled(p->scale_height.v, H) : scaled(p->scale_height.v, H - 1) + 1;
      if (W >= 0) nw = W % 2 == 0 ? scaled(p->scale_width.v, W) : scaled(p->scale_width.v, W - 1) + 1;
      break;
    case RS_LIKE:
      MXW_CHECK(nin == 2, "BilinearResize2D: mode like takes a second input `like`");
      if (in[1].ndim < 0) return 0;
      MXW_TRY(check_4d("BilinearResize2D", &in[1], "like"));
      nh = in[1].dims[2];
      nw = in[1].dims[3];
      break;
    default: {
      /* to_even_down, to_even_up, to_odd_down, to_odd_up: the nearest even / odd size below / above */
      const int want_odd = p->mode == RS_TO_ODD_DOWN || p->mode == RS_TO_ODD_UP;
      const int64_t delta = p->mode == RS_TO_EVEN_DOWN || p->mode == RS_TO_ODD_DOWN ? -1 : 1;
      if (H >= 0) nh = H % 2 == want_odd ? H : H + delta;
      if (W >= 0) nw = W % 2 == want_odd ? W : W + delta;
    }
  }
  mxw_shape o = in[0];
  o.dims[2] = -1;
  o.dims[3] = -1;
  if (nh >= 0 || (p->mode != RS_LIKE && H >= 0)) MXW_TRY(resize_dim(nh, "height", &o.dims[2]));
  if (nw >= 0 || (p->mode != RS_LIKE && W >= 0)) MXW_TRY(resize_dim(nw, "width", &o.dims[3]));
  return mxw_shape_assign(&out[0], &o, "output");
}

/* One output coordinate's source: the lower index, whether a next one exists (h1p), and the weights
 * in float, as MXNet's area_pixel_compute_scale / area_pixel_compute_source_index. */
typedef struct {
  int64_t i0, step;
  float l0, l1;
} rs_coord;
static void resize_coords(int64_t in, int64_t out, int align, rs_coord *c) {
  const float scale = out > 1 ? (align ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out) : 0.f;
  for (int64_t o = 0; o < out; o++) {
    float r;
    if (align) {
      r = scale * (float)o;
    } else {
      r = (float)((double)scale * ((double)o + 0.5) - 0.5);
      if (r < 0) r = 0;
    }
    const int64_t i = (int64_t)r;
    c[o].i0 = i;
    c[o].step = i < in - 1 ? 1 : 0;
    c[o].l1 = r - (float)i;
    c[o].l0 = 1.f - c[o].l1;
  }
}

typedef struct {
  const void *x;
  void *y;
  int64_t H, W, OH, OW;
  const rs_coord *ch, *cw;
} rs_job;

#define DEFINE_RS_FWD(NAME, T)                                                                        \
  static void NAME(void *ctx, int64_t p0, int64_t p1) {                                               \
    const rs_job *j = (const rs_job *)ctx;                                                            \
    for (int64_t p = p0; p < p1; p++) {                                                               \
      const T *x = (const T *)j->x + p * j->H * j->W;                                                 \
      T *y = (T *)j->y + p * j->OH * j->OW;                                                           \
      for (int64_t oh = 0; oh < j->OH; oh++) {                                                        \
        const rs_coord h = j->ch[oh];                                                                 \
        const T h0 = (T)h.l0, h1 = (T)h.l1;                                                           \
        for (int64_t ow = 0; ow < j->OW; ow++) {                                                      \
          const rs_coord w = j->cw[ow];                                                               \
          const T w0 = (T)w.l0, w1 = (T)w.l1;                                                         \
          const T *a = x + h.i0 * j->W + w.i0, *b = a + h.step * j->W;                                \
          y[oh * j->OW + ow] = h0 * (w0 * a[0] + w1 * a[w.step]) + h1 * (w0 * b[0] + w1 * b[w.step]); \
        }                                                                                             \
      }                                                                                               \
    }                                                                                                 \
  }
DEFINE_RS_FWD(rs_fwd_f32, float)
DEFINE_RS_FWD(rs_fwd_f64, double)

/* dx = 0, then each output cell's gradient spread over its four sources (same weights). */
#define DEFINE_RS_BWD(NAME, T)                                         \
  static void NAME(void *ctx, int64_t p0, int64_t p1) {                \
    const rs_job *j = (const rs_job *)ctx;                             \
    for (int64_t p = p0; p < p1; p++) {                                \
      const T *dy = (const T *)j->x + p * j->OH * j->OW;               \
      T *dx = (T *)j->y + p * j->H * j->W;                             \
      for (int64_t i = 0; i < j->H * j->W; i++) dx[i] = 0;             \
      for (int64_t oh = 0; oh < j->OH; oh++) {                         \
        const rs_coord h = j->ch[oh];                                  \
        const T h0 = (T)h.l0, h1 = (T)h.l1;                            \
        for (int64_t ow = 0; ow < j->OW; ow++) {                       \
          const rs_coord w = j->cw[ow];                                \
          const T w0 = (T)w.l0, w1 = (T)w.l1, g = dy[oh * j->OW + ow]; \
          T *a = dx + h.i0 * j->W + w.i0, *b = a + h.step * j->W;      \
          a[0] += h0 * w0 * g;                                         \
          a[w.step] += h0 * w1 * g;                                    \
          b[0] += h1 * w0 * g;                                         \
          b[w.step] += h1 * w1 * g;                                    \
        }                                                              \
      }                                                                \
    }                                                                  \
  }
DEFINE_RS_BWD(rs_bwd_f32, float)
DEFINE_RS_BWD(rs_bwd_f64, double)

static int resize_run(const ResizeParam *p, const mxw_tensor *x, mxw_tensor *y, const mxw_shape *data,
                      const mxw_shape *res, int bwd) {
  const int64_t planes = data->dims[0] * data->dims[1], H = data->dims[2], W = data->dims[3];
  const int64_t OH = res->dims[2], OW = res->dims[3];
  if (planes == 0) return 0;
  if (H * W == 0) { /* nothing to sample from */
    MXW_CHECK(bwd || OH * OW == 0, "BilinearResize2D: cannot resize an empty (%lld, %lld) image", (long long)H,
              (long long)W);
    return 0;
  }
  if (OH * OW == 0) { /* nothing sampled: the data gradient is zero */
    if (bwd) memset(y->data, 0, (size_t)(planes * H * W) * esize(y->dtype));
    return 0;
  }
  rs_coord *co = (rs_coord *)mxw_scratch(0, (size_t)(OH + OW) * sizeof(rs_coord));
  if (!co) return -1;
  if (H == OH && W == OW) { /* MXNet's special case: the same grid, a copy */
    for (int64_t i = 0; i < OH; i++) co[i] = (rs_coord){i, 0, 1.f, 0.f};
    for (int64_t i = 0; i < OW; i++) co[OH + i] = (rs_coord){i, 0, 1.f, 0.f};
  } else {
    resize_coords(H, OH, p->align_corners, co);
    resize_coords(W, OW, p->align_corners, co + OH);
  }
  rs_job j = {x->data, y->data, H, W, OH, OW, co, co + OH};
  const double cost = 8.0 * (double)(OH * OW) * (x->dtype == MXW_FLOAT64 ? 2.0 : 1.0);
  if (x->dtype == MXW_FLOAT32)
    mxw_parallel_run(planes, 1, cost, bwd ? rs_bwd_f32 : rs_fwd_f32, &j);
  else
    mxw_parallel_run(planes, 1, cost, bwd ? rs_bwd_f64 : rs_fwd_f64, &j);
  return 0;
}
static int fwd_resize(const mxw_op_call *c) {
  MXW_TRY(check_real("BilinearResize2D", c->inputs[0].dtype));
  if (is_half(c->inputs[0].dtype)) return mxw_run_as_f32(c, fwd_resize);
  return resize_run((const ResizeParam *)c->param, &c->inputs[0], &c->outputs[0], &c->inputs[0].shape,
                    &c->outputs[0].shape, 0);
}
/* (ograd, data[, like]) -> d data[, d like = 0]. */
static int fwd_backward_resize(const mxw_op_call *c) {
  MXW_TRY(check_real("BilinearResize2D", c->inputs[0].dtype));
  if (is_half(c->inputs[0].dtype) || (c->num_outputs > 1 && is_half(c->outputs[1].dtype)))
    return mxw_run_as_f32(c, fwd_backward_resize);
  if (c->num_outputs > 1)
    memset(c->outputs[1].data, 0, (size_t)mxw_tensor_size(&c->outputs[1]) * esize(c->outputs[1].dtype));
  return resize_run((const ResizeParam *)c->param, &c->inputs[0], &c->outputs[0], &c->outputs[0].shape,
                    &c->inputs[0].shape, 1);
}
static int grad_resize(mxw_grad_ctx *g) {
  const ResizeParam *p = (const ResizeParam *)mxw_grad_param(g);
  mxw_gid d[2];
  if (p->mode == RS_LIKE) {
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_contrib_BilinearResize2D",
                            MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1)), d, 2));
    MXW_TRY(mxw_grad_set(g, 1, d[1]));
  } else {
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_contrib_BilinearResize2D", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0)),
                            d, 1));
  }
  return mxw_grad_set(g, 0, d[0]);
}
/* Second order: the backward (ograd, data[, like]) is the transpose of the forward's bilinear
 * interpolation, linear in ograd: its gradient is the forward of h (with like when it has one). */
static int grad_backward_resize(mxw_grad_ctx *g) {
  const ResizeParam *p = (const ResizeParam *)mxw_grad_param(g);
  mxw_gid d = -1;
  if (p->mode == RS_LIKE)
    MXW_TRY(mxw_grad_op_fwd(g, "_contrib_BilinearResize2D", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 2)), &d, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, "_contrib_BilinearResize2D", MXW_GIDS(mxw_grad_ograd(g, 0)), &d, 1));
  return mxw_grad_set(g, 0, d);
}
/* The output follows data's dtype; like lends only its shape. */
static int infer_type_resize(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[0] >= 0 && out[0] >= 0 && in[0] != out[0])
    return mxw_fail("dtype mismatch: data is %s but output is %s", mxw_dtype_name(in[0]), mxw_dtype_name(out[0]));
  if (in[0] < 0) in[0] = out[0];
  if (out[0] < 0) out[0] = in[0];
  if (nin > 1 && in[1] < 0) in[1] = in[0];
  return 0;
}
static int infer_type_backward_resize(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  for (int i = 0; i < nout && i + 1 < nin; i++) {
    if (out[i] < 0) out[i] = in[i + 1] >= 0 ? in[i + 1] : in[0];
    if (in[i + 1] < 0) in[i + 1] = out[i];
  }
  if (in[0] < 0) in[0] = out[0];
  return 0;
}
static const mxw_op_def op_resize = {
    .name = "_contrib_BilinearResize2D",
    .doc = MXW_DOC("bilinear resizing of NCHW data to (height, width), a scale, the like input's size or the nearest "
                   "even/odd size; align_corners or half-pixel centres"),
    .attrs = k_resize_attrs,
    .num_attrs = 6,
    .param_size = sizeof(ResizeParam),
    .validate = validate_resize,
    .num_inputs = 2,
    .input_names = k_resize_inputs,
    .num_inputs_fn = resize_num_inputs,
    .num_outputs = 1,
    .infer_shape = infer_resize,
    .infer_type = infer_type_resize,
    .forward = fwd_resize,
    .gradient = grad_resize};
static const mxw_op_def op_backward_resize = {
    .name = "_backward_contrib_BilinearResize2D",
    .doc = MXW_DOC("the gradient of _contrib_BilinearResize2D (inputs ograd, data[, like]; like's gradient is zero)"),
    .attrs = k_resize_attrs,
    .num_attrs = 6,
    .param_size = sizeof(ResizeParam),
    .validate = validate_resize,
    .num_inputs = 3,
    .input_names = k_resize_bwd_inputs,
    .num_inputs_fn = resize_bwd_num_inputs,
    .num_outputs = 2,
    .num_outputs_fn = resize_num_inputs,
    .infer_shape = infer_backward_like_inputs,
    .infer_type = infer_type_backward_resize,
    .forward = fwd_backward_resize,
    .gradient = grad_backward_resize};

/* ==== shape_array / size_array =================================================================== */
static int infer_shape_array(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[0].ndim < 0) return 0;
  const int64_t n = in[0].ndim;
  mxw_shape s = mxw_shape_make(1, &n);
  return mxw_shape_assign(&out[0], &s, "output");
}
static int infer_size_array(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  (void)in;
  const int64_t one = 1;
  mxw_shape s = mxw_shape_make(1, &one);
  return mxw_shape_assign(&out[0], &s, "output");
}
/* The output is int64 whatever the input's dtype. */
static int infer_type_int64_out(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)nout;
  (void)in;
  MXW_CHECK(out[0] < 0 || out[0] == MXW_INT64, "the output is int64, not %s", mxw_dtype_name(out[0]));
  out[0] = MXW_INT64;
  return 0;
}
static int fwd_shape_array(const mxw_op_call *c) {
  const mxw_shape *s = &c->inputs[0].shape;
  for (int i = 0; i < s->ndim; i++) ((int64_t *)c->outputs[0].data)[i] = s->dims[i];
  return 0;
}
static int fwd_size_array(const mxw_op_call *c) {
  ((int64_t *)c->outputs[0].data)[0] = mxw_tensor_size(&c->inputs[0]);
  return 0;
}
static const mxw_op_def op_shape_array = {.name = "shape_array",
                                          .aliases = ALIASES("_npx_shape_array"),
                                          .doc = MXW_DOC("a 1-D int64 array holding the shape of data"),
                                          .num_inputs = 1,
                                          .input_names = k_data,
                                          .num_outputs = 1,
                                          .infer_shape = infer_shape_array,
                                          .infer_type = infer_type_int64_out,
                                          .forward = fwd_shape_array,
                                          .no_grad = 1};
static const mxw_op_def op_size_array = {.name = "size_array",
                                         .doc = MXW_DOC("a 1-D int64 array holding the number of elements of data"),
                                         .num_inputs = 1,
                                         .input_names = k_data,
                                         .num_outputs = 1,
                                         .infer_shape = infer_size_array,
                                         .infer_type = infer_type_int64_out,
                                         .forward = fwd_size_array,
                                         .no_grad = 1};

/* ==== broadcast_axis ============================================================================= */
typedef struct {
  mxw_tuple axis, size;
} BroadcastAxesParam;
static const mxw_attr_spec k_broadcast_axes_attrs[] = {
    MXW_A_SHAPE("axis", BroadcastAxesParam, axis, "()", "the axes to perform the broadcasting (each of size 1)"),
    MXW_A_SHAPE("size", BroadcastAxesParam, size, "()", "target sizes of the broadcasting axes"),
};
static int validate_broadcast_axes(void *param) {
  const BroadcastAxesParam *p = (const BroadcastAxesParam *)param;
  const int na = p->axis.ndim < 0 ? 0 : p->axis.ndim, ns = p->size.ndim < 0 ? 0 : p->size.ndim;
  MXW_CHECK(na == ns, "axis and size must have the same length, got %d axes and %d sizes", na, ns);
  for (int i = 0; i < ns; i++)
    MXW_CHECK(p->size.v[i] >= 0, "size must not be negative, got %lld", (long long)p->size.v[i]);
  return 0;
}
static int infer_broadcast_axes(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const BroadcastAxesParam *p = (const BroadcastAxesParam *)param;
  (void)nin;
  (void)nout;
  if (!mxw_shape_known(&in[0])) return 0;
  shape_buf b;
  mxw_shape o = in[0];
  for (int i = 0; i < (p->axis.ndim < 0 ? 0 : p->axis.ndim); i++) {
    const int64_t ax = p->axis.v[i];
    /* MXNet 1.x indexes the shape with the axis as given: negative axes are out of range */
    MXW_CHECK(ax >= 0 && ax < o.ndim, "axis %lld is out of range [0, %d) for input of shape %s", (long long)ax, o.ndim,
              SHAPE_STR(&in[0], b));
    MXW_CHECK(o.dims[ax] == 1, "Broadcasting axis must have size 1: axis %lld of input shape %s has size %lld",
              (long long)ax, SHAPE_STR(&in[0], b), (long long)o.dims[ax]);
    o.dims[ax] = p->size.v[i];
  }
  return mxw_shape_assign(&out[0], &o, "output");
}
/* Copies in to out, repeating it along the axes where in has size 1 and out does not. */
static int fwd_broadcast_axes(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  const int nd = out->shape.ndim;
  const size_t es = esize(in->dtype);
  if (mxw_tensor_size(out) == 0) return 0;
  /* the trailing dims that match form one contiguous run */
  int k = nd;
  int64_t inner = 1;
  while (k > 0 && in->shape.dims[k - 1] == out->shape.dims[k - 1]) inner *= out->shape.dims[--k];
  int64_t ist[MXW_MAX_NDIM], idx[MXW_MAX_NDIM] = {0}, acc = 1;
  for (int d = nd - 1; d >= 0; d--) {
    ist[d] = in->shape.dims[d] == 1 && out->shape.dims[d] != 1 ? 0 : acc;
    acc *= in->shape.dims[d];
  }
  int64_t outer = 1;
  for (int d = 0; d < k; d++) outer *= out->shape.dims[d];
  const char *src = (const char *)in->data;
  char *dst = (char *)out->data;
  const size_t run = (size_t)inner * es;
  int64_t s = 0;
  for (int64_t o = 0; o < outer; o++) {
    memcpy(dst + (size_t)o * run, src + (size_t)s * es, run);
    for (int d = k - 1; d >= 0; d--) {
      s += ist[d];
      if (++idx[d] < out->shape.dims[d]) break;
      s -= ist[d] * idx[d];
      idx[d] = 0;
    }
  }
  return 0;
}
static int grad_broadcast_axes(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, mxw_grad_reduce_to_input(g, mxw_grad_ograd(g, 0), 0));
}
static const mxw_op_def op_broadcast_axis = {
    .name = "broadcast_axis",
    .aliases = ALIASES("broadcast_axes"),
    .doc = MXW_DOC("broadcasts the input over the given axes (each of size 1) to the given sizes"),
    .attrs = k_broadcast_axes_attrs,
    .num_attrs = 2,
    .param_size = sizeof(BroadcastAxesParam),
    .validate = validate_broadcast_axes,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_broadcast_axes,
    .forward = fwd_broadcast_axes,
    .gradient = grad_broadcast_axes};

/* ==== _contrib_arange_like ======================================================================= */
typedef struct {
  double start, step;
  int64_t repeat;
  mxw_str ctx;
  mxw_opt_int axis;
} RangeLikeParam;
static const mxw_attr_spec k_range_like_attrs[] = {
    MXW_A_FLOAT("start", RangeLikeParam, start, "0", "start of the interval (included)"),
    MXW_A_FLOAT("step", RangeLikeParam, step, "1", "spacing between values"),
    MXW_A_INT("repeat", RangeLikeParam, repeat, "1", "how many times each value is repeated"),
    MXW_A_STRING("ctx", RangeLikeParam, ctx, "", "device of the output (accepted, ignored)"),
    MXW_A_OPT_INT("axis", RangeLikeParam, axis, "None",
                  "arange along this axis of the input (a 1-D output); None: the input's whole shape"),
};
static int validate_range_like(void *param) {
  const RangeLikeParam *p = (const RangeLikeParam *)param;
  MXW_CHECK(p->repeat > 0, "repeat must be > 0, got %lld", (long long)p->repeat);
  return 0;
}
static int infer_range_like(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const RangeLikeParam *p = (const RangeLikeParam *)param;
  (void)nin;
  (void)nout;
  if (!p->axis.has) {
    MXW_TRY(mxw_shape_assign(&out[0], &in[0], "output"));
    return mxw_shape_assign(&in[0], &out[0], "data");
  }
  if (in[0].ndim < 0) return 0;
  const int64_t ax = p->axis.v < 0 ? p->axis.v + in[0].ndim : p->axis.v;
  MXW_CHECK(ax >= 0 && ax < in[0].ndim, "cannot handle param.axis %lld.", (long long)p->axis.v);
  mxw_shape s = mxw_shape_make(1, &in[0].dims[ax]);
  return mxw_shape_assign(&out[0], &s, "output");
}
/* out[i] = start + (i / repeat) * step in the output dtype (integer dtypes take start and step
 * truncated, and wrap as the type does), as MXNet's range_fwd. */
static int fwd_range_like(const mxw_op_call *c) {
  const RangeLikeParam *p = (const RangeLikeParam *)c->param;
  mxw_tensor *out = &c->outputs[0];
  const int64_t n = mxw_tensor_size(out), rep = p->repeat;
  const int dt = out->dtype;
  if (dt == MXW_FLOAT32) {
    float *o = (float *)out->data;
    const float start = (float)p->start, step = (float)p->step;
    for (int64_t i = 0; i < n; i++) o[i] = start + (float)(i / rep) * step;
  } else if (dt == MXW_FLOAT64) {
    double *o = (double *)out->data;
    for (int64_t i = 0; i < n; i++) o[i] = p->start + (double)(i / rep) * p->step;
  } else if (is_half(dt)) {
    uint16_t hs, hd;
    mxw_store_f64(&hs, dt, 0, p->start);
    mxw_store_f64(&hd, dt, 0, p->step);
    const float start = (float)mxw_load_f64(&hs, dt, 0), step = (float)mxw_load_f64(&hd, dt, 0);
    for (int64_t i = 0; i < n; i++) mxw_store_f64(out->data, dt, i, start + (float)(i / rep) * step);
  } else {
    const double lim = 9.2e18;
    MXW_CHECK(fabs(p->start) < lim && fabs(p->step) < lim, "start and step must fit an integer for dtype %s",
              mxw_dtype_name(dt));
    const uint64_t start = (uint64_t)(int64_t)p->start, step = (uint64_t)(int64_t)p->step;
    const size_t es = esize(dt);
    for (int64_t i = 0; i < n; i++) {
      const uint64_t v = start + (uint64_t)(i / rep) * step;
      if (dt == MXW_BOOL) {
        ((uint8_t *)out->data)[i] = (uint8_t)((uint8_t)v != 0);
      } else {
        switch (es) {
          case 1: ((uint8_t *)out->data)[i] = (uint8_t)v; break;
          case 2: ((uint16_t *)out->data)[i] = (uint16_t)v; break;
          case 4: ((uint32_t *)out->data)[i] = (uint32_t)v; break;
          default: ((uint64_t *)out->data)[i] = v; break;
        }
      }
    }
  }
  return 0;
}
static const mxw_op_def op_range_like = {
    .name = "_contrib_arange_like",
    .aliases = ALIASES("_npx_arange_like"),
    .doc = MXW_DOC("evenly spaced values start + (i / repeat) * step shaped like the input (or along one of its axes)"),
    .attrs = k_range_like_attrs,
    .num_attrs = 5,
    .param_size = sizeof(RangeLikeParam),
    .validate = validate_range_like,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_range_like,
    .forward = fwd_range_like,
    .no_grad = 1};

/* ==== _contrib_div_sqrt_dim ====================================================================== */
static int infer_div_sqrt_dim(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  MXW_TRY(mxw_infer_shape_same(param, nin, in, nout, out));
  MXW_CHECK(in[0].ndim != 0, "div_sqrt_dim needs data of rank >= 1");
  return 0;
}
/* out = data / DType(sqrt(data.shape[-1])) in the dtype (integers divide by the truncated root). */
static int fwd_div_sqrt_dim(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  const int64_t n = mxw_tensor_size(in);
  if (n == 0) return 0;
  const double root = sqrt((double)in->shape.dims[in->shape.ndim - 1]);
  switch (in->dtype) {
    case MXW_FLOAT32: {
      const float d = (float)root, *x = (const float *)in->data;
      float *y = (float *)out->data;
      for (int64_t i = 0; i < n; i++) y[i] = x[i] / d;
      break;
    }
    case MXW_FLOAT64: {
      const double *x = (const double *)in->data;
      double *y = (double *)out->data;
      for (int64_t i = 0; i < n; i++) y[i] = x[i] / root;
      break;
    }
    default: {
      uint64_t w = 0;
      mxw_store_f64(&w, in->dtype, 0, root); /* DType(sqrt_dim) */
      const double d = mxw_load_f64(&w, in->dtype, 0);
      const int integer = !mxw_dtype_is_float(in->dtype);
      for (int64_t i = 0; i < n; i++) {
        const double x = mxw_load_f64(in->data, in->dtype, i);
        mxw_store_f64(out->data, out->dtype, i, integer ? trunc(x / d) : x / d);
      }
    }
  }
  return 0;
}
static int grad_div_sqrt_dim(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, mxw_grad_op(g, "_contrib_div_sqrt_dim", NULL, MXW_GIDS(mxw_grad_ograd(g, 0))));
}
static const mxw_op_def op_div_sqrt_dim = {
    .name = "_contrib_div_sqrt_dim",
    .doc = MXW_DOC("rescales the input by the square root of its last dimension"),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_div_sqrt_dim,
    .forward = fwd_div_sqrt_dim,
    .inplace = 1,
    .gradient = grad_div_sqrt_dim};

/* ==== erfinv ===================================================================================== */
/* The inverse error function on (-1, 1) (+-inf at +-1, NaN outside) in double. A starting value
 * from Giles' single-precision rational fit ("Approximating the erfinv function", GPU Computing
 * Gems, 2011), then two Halley steps on erf(x) - y, written with erfc near 1 so that the residual
 * keeps its digits; tiny arguments take the series' first term x = sqrt(pi)/2 y, as MXNet. */
static double erfinv_d(double y) {
  if (!(y > -1.0 && y < 1.0)) {
    if (y == 1.0) return INFINITY;
    if (y == -1.0) return -INFINITY;
    return NAN;
  }
  const double a = fabs(y);
  if (a < 1e-7) return y * 0.88622692545275801365; /* sqrt(pi) / 2 */
  double w = -log((1.0 - a) * (1.0 + a)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * a;
  const double two_over_sqrt_pi = 1.12837916709551257390;
  for (int it = 0; it < 2; it++) {
    /* f = erf(x) - a; f' = 2/sqrt(pi) exp(-x^2); f'' = -2x f' (Halley: x -= u / (1 + x u), u = f/f') */
    const double f = a < 0.5 ? erf(x) - a : (1.0 - a) - erfc(x);
    const double u = f / (two_over_sqrt_pi * exp(-x * x));
    x -= u / (1.0 + x * u);
  }
  return y < 0 ? -x : x;
}

static int kern_erfinv(const mxw_op_call *c) {
  const mxw_tensor *in = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  const int64_t n = mxw_tensor_size(in);
  if (in->dtype == MXW_FLOAT32) {
    const float *x = (const float *)in->data;
    float *y = (float *)out->data;
    for (int64_t i = 0; i < n; i++) y[i] = (float)erfinv_d((double)x[i]);
  } else if (in->dtype == MXW_FLOAT64) {
    const double *x = (const double *)in->data;
    double *y = (double *)out->data;
    for (int64_t i = 0; i < n; i++) y[i] = erfinv_d(x[i]);
  } else {
    for (int64_t i = 0; i < n; i++)
      mxw_store_f64(out->data, out->dtype, i, erfinv_d(mxw_load_f64(in->data, in->dtype, i)));
  }
  return 0;
}
static int fwd_erfinv(const mxw_op_call *c) {
  return mxw_parallel_elemwise(c, mxw_tensor_size(&c->outputs[0]), MXW_COST_SPECIAL, kern_erfinv);
}
/* _backward_erfinv(ograd, output) = ograd * sqrt(pi)/2 * exp(output^2) */
static int kern_backward_erfinv(const mxw_op_call *c) {
  const mxw_tensor *gt = &c->inputs[0], *at = &c->inputs[1];
  mxw_tensor *out = &c->outputs[0];
  const int64_t n = mxw_tensor_size(out);
  if (out->dtype == MXW_FLOAT32 && gt->dtype == MXW_FLOAT32 && at->dtype == MXW_FLOAT32) {
    const float *g = (const float *)gt->data, *a = (const float *)at->data;
    float *y = (float *)out->data;
    for (int64_t i = 0; i < n; i++) y[i] = g[i] * (0.886226925f * expf(a[i] * a[i]));
  } else {
    for (int64_t i = 0; i < n; i++) {
      const double g = mxw_load_f64(gt->data, gt->dtype, i), a = mxw_load_f64(at->data, at->dtype, i);
      mxw_store_f64(out->data, out->dtype, i, g * (0.88622692545275801365 * exp(a * a)));
    }
  }
  return 0;
}
static int fwd_backward_erfinv(const mxw_op_call *c) {
  return mxw_parallel_elemwise(c, mxw_tensor_size(&c->outputs[0]), MXW_COST_MATH, kern_backward_erfinv);
}
static int grad_erfinv(mxw_grad_ctx *g) { /* ElemwiseGradUseOut{"_backward_erfinv"} */
  return mxw_grad_set(g, 0,
                      mxw_grad_op(g, "_backward_erfinv", NULL, MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 0))));
}
static const mxw_op_def op_erfinv = {
    .name = "erfinv",
    .aliases = ALIASES("_npx_erfinv"),
    .doc = MXW_DOC("inverse of the Gauss error function: erf(erfinv(x)) = x on (-1, 1), +-inf at +-1, NaN outside"),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_erfinv,
    .inplace = 1,
    .gradient = grad_erfinv};
static const mxw_op_def op_backward_erfinv = {
    .name = "_backward_erfinv",
    .doc = MXW_DOC("the gradient of erfinv: ograd * sqrt(pi)/2 * exp(erfinv(x)^2)"),
    .num_inputs = 2,
    .input_names = k_lhs_rhs,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .forward = fwd_backward_erfinv,
    .inplace = 1};

MXW_FAMILY(contrib_misc, &op_adaptive, &op_backward_adaptive, &op_resize, &op_backward_resize, &op_shape_array,
           &op_size_array, &op_broadcast_axis, &op_range_like, &op_div_sqrt_dim, &op_erfinv, &op_backward_erfinv);
