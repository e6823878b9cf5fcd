/* spatial.c -- sampling-grid operators (MXNet 1.9.1): GridGenerator (grid_generator-inl.h),
 * BilinearSampler (bilinear_sampler.cc) and SpatialTransformer (spatial_transformer.cc); the
 * deformable convolutions are in contrib_dcn.c.
 *
 * Grids are normalised to [-1, 1]: x = -1 is the centre of the first column, x = 1 that of the
 * last, so a source pixel is ((x + 1) * (W - 1) / 2, (y + 1) * (H - 1) / 2); BilinearSampler and
 * SpatialTransformer read the four neighbours of that point, zero outside the image.
 *
 * dtypes: float32 and float64 (float16 / bfloat16 through float32 copies). The hidden outputs (grid_dst, tmp, grid_src)
 * are MXNet's; BilinearSampler's tmp (cuDNN's workspace) is zeros here.
 * Gradients (`_backward_<op>`, inputs ograd and what each needs): GridGenerator affine:
 * d data = ograd (N*2, HW) . grid_dstᵀ, warp: ograd / ((W - 1) / 2, (H - 1) / 2); the samplers:
 * data gets ograd spread with the bilinear weights, the grid the derivative of the interpolation
 * in x and y times (size - 1) / 2; SpatialTransformer's loc: d grid_src (N, 2, HW) . grid_dstᵀ. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/mxw_core.h"
#include "../kernels/gemm.h"

#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
#define TUPLE_STR(t, b) mxw_tuple_str((t), (b), sizeof(b))
typedef char shape_buf[160];

static int is_half(int dtype) { return dtype == MXW_FLOAT16 || dtype == MXW_BFLOAT16; }
static int check_real(const char *op, int dtype) {
  if (dtype == MXW_FLOAT32 || dtype == MXW_FLOAT64 || is_half(dtype)) return 0;
  return mxw_fail("%s only supports floating point types, got %s", op, mxw_dtype_name(dtype));
}
static void zero(mxw_tensor *t) { memset(t->data, 0, (size_t)mxw_tensor_size(t) * (size_t)mxw_dtype_size(t->dtype)); }

static int set_shape(mxw_shape *dst, int ndim, const int64_t *dims, const char *what) {
  mxw_shape s = mxw_shape_make(ndim, dims);
  return mxw_shape_assign(dst, &s, what);
}
static int num_visible_one(const void *param) {
  (void)param;
  return 1;
}

/* ==== GridGenerator ============================================================================== */
enum { GG_AFFINE, GG_WARP };
static const char *const k_gg_types[] = {"affine", "warp", NULL};
typedef struct {
  int transform_type;
  mxw_tuple target_shape;
} GridParam;
static const mxw_attr_spec k_gg_attrs[] = {
    MXW_A_ENUM("transform_type", GridParam, transform_type, NULL, k_gg_types,
               "affine: data is (batch, 6) affine matrices; warp: data is an optical flow (batch, 2, h, w)"),
    MXW_A_SHAPE("target_shape", GridParam, target_shape, "(0, 0)", "the output (H, W) (affine only)"),
};
static const char *const k_data[] = {"data", NULL};
static const char *const k_gg_outputs[] = {"output", "grid_dst", NULL};
static const char *const k_gg_bwd_inputs[] = {"ograd", "grid_dst", NULL};

static int infer_gg(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const GridParam *p = (const GridParam *)param;
  (void)nin;
  (void)nout;
  if (in[0].ndim < 0) return 0;
  shape_buf b;
  if (p->transform_type == GG_AFFINE) {
    MXW_CHECK(in[0].ndim == 2,
              "if transform_type is affine, data is affine matrix: it should be 2D in batch-num_hidden, "
              "got shape %s",
              SHAPE_STR(&in[0], b));
    MXW_CHECK(in[0].dims[1] < 0 || in[0].dims[1] == 6, "incorrect data shape[1], should be 6 (got shape %s)",
              SHAPE_STR(&in[0], b));
    MXW_CHECK(p->target_shape.ndim == 2, "target_shape must be (H, W) for an affine grid");
    MXW_CHECK(p->target_shape.v[0] > 0, "incorrect target_shape: %lld", (long long)p->target_shape.v[0]);
    MXW_CHECK(p->target_shape.v[1] > 0, "incorrect target_shape: %lld", (long long)p->target_shape.v[1]);
    const int64_t H = p->target_shape.v[0], W = p->target_shape.v[1];
    const int64_t o[4] = {in[0].dims[0], 2, H, W}, g[2] = {3, H * W};
    MXW_TRY(set_shape(&out[0], 4, o, "output"));
    return set_shape(&out[1], 2, g, "grid_dst");
  }
  MXW_CHECK(in[0].ndim == 4,
            "if transform_type is warp, data is optical flow: it should be 4D in batch-2-y-x, got "
            "shape %s",
            SHAPE_STR(&in[0], b));
  MXW_CHECK(in[0].dims[1] < 0 || in[0].dims[1] == 2, "incorrect data shape[1], should be 2 (got shape %s)",
            SHAPE_STR(&in[0], b));
  MXW_TRY(mxw_shape_assign(&out[0], &in[0], "output"));
  const int64_t g[3] = {2, in[0].dims[2], in[0].dims[3]};
  return set_shape(&out[1], 3, g, "grid_dst");
}

/* grid_dst rows x, y, 1 of the target pixels (affine), in the dtype as MXNet's expressions. */
#define DEFINE_GG(T, SFX)                                                                             \
  static void gg_affine_##SFX(const T *theta, T *out, T *gd, int64_t N, int64_t H, int64_t W) {       \
    const int64_t HW = H * W;                                                                         \
    const T sx = (T)(2.0 / (double)(W - 1)), sy = (T)(2.0 / (double)(H - 1));                         \
    for (int64_t i = 0; i < HW; i++) {                                                                \
      gd[i] = (T)-1 + (T)(i % W) * sx;                                                                \
      gd[HW + i] = (T)-1 + (T)(i / W) * sy;                                                           \
      gd[2 * HW + i] = 1;                                                                             \
    }                                                                                                 \
    for (int64_t r = 0; r < 2 * N; r++) {                                                             \
      const T a = theta[3 * r], b = theta[3 * r + 1], c = theta[3 * r + 2];                           \
      T *o = out + r * HW;                                                                            \
      for (int64_t i = 0; i < HW; i++) o[i] = a * gd[i] + b * gd[HW + i] + c * gd[2 * HW + i];        \
    }                                                                                                 \
  }                                                                                                   \
  static void gg_warp_##SFX(const T *flow, T *out, T *gd, int64_t N, int64_t H, int64_t W, int bwd) { \
    const T wx = (T)(((double)(T)W - 1.0) / 2.0), wy = (T)(((double)(T)H - 1.0) / 2.0);               \
    const int64_t HW = H * W;                                                                         \
    for (int64_t n = 0; n < N; n++)                                                                   \
      for (int64_t i = 0; i < HW; i++) {                                                              \
        const T *f = flow + n * 2 * HW;                                                               \
        T *o = out + n * 2 * HW;                                                                      \
        if (bwd) {                                                                                    \
          o[i] = f[i] / wx;                                                                           \
          o[HW + i] = f[HW + i] / wy;                                                                 \
        } else {                                                                                      \
          o[i] = (f[i] + (T)(i % W)) / wx - (T)1;                                                     \
          o[HW + i] = (f[HW + i] + (T)(i / W)) / wy - (T)1;                                           \
        }                                                                                             \
      }                                                                                               \
    if (gd)                                                                                           \
      for (int64_t i = 0; i < HW; i++) {                                                              \
        gd[i] = (T)(i % W);                                                                           \
        gd[HW + i] = (T)(i / W);                                                                      \
      }                                                                                               \
  }                                                                                                   \
  /* d theta (N*2, 3) = ograd (N*2, HW) . grid_dstᵀ */                                              \
  static void gg_affine_bwd_##SFX(const T *og, const T *gd, T *dtheta, int64_t N, int64_t HW) {       \
    for (int64_t r = 0; r < 2 * N; r++)                                                               \
      for (int k = 0; k < 3; k++) {                                                                   \
        T s = 0;                                                                                      \
        for (int64_t i = 0; i < HW; i++) s += og[r * HW + i] * gd[k * HW + i];                        \
        dtheta[3 * r + k] = s;                                                                        \
      }                                                                                               \
  }
DEFINE_GG(float, f32)
DEFINE_GG(double, f64)

static int fwd_gg(const mxw_op_call *c) {
  const GridParam *p = (const GridParam *)c->param;
  const mxw_tensor *x = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0], *gd = &c->outputs[1];
  MXW_TRY(check_real("GridGenerator", x->dtype));
  if (is_half(x->dtype)) return mxw_run_as_f32(c, fwd_gg);
  const int64_t N = out->shape.dims[0], H = out->shape.dims[2], W = out->shape.dims[3];
  const int f32 = x->dtype == MXW_FLOAT32;
  if (p->transform_type == GG_AFFINE) {
    if (f32)
      gg_affine_f32(x->data, out->data, gd->data, N, H, W);
    else
      gg_affine_f64(x->data, out->data, gd->data, N, H, W);
  } else {
    if (f32)
      gg_warp_f32(x->data, out->data, gd->data, N, H, W, 0);
    else
      gg_warp_f64(x->data, out->data, gd->data, N, H, W, 0);
  }
  return 0;
}
/* (ograd[, grid_dst]) -> d data */
static int fwd_backward_gg(const mxw_op_call *c) {
  const GridParam *p = (const GridParam *)c->param;
  const mxw_tensor *og = &c->inputs[0];
  mxw_tensor *dx = &c->outputs[0];
  MXW_TRY(check_real("GridGenerator", og->dtype));
  if (is_half(og->dtype)) return mxw_run_as_f32(c, fwd_backward_gg);
  const int64_t N = og->shape.dims[0], H = og->shape.dims[2], W = og->shape.dims[3];
  const int f32 = og->dtype == MXW_FLOAT32;
  if (p->transform_type == GG_AFFINE) {
    if (f32)
      gg_affine_bwd_f32(og->data, c->inputs[1].data, dx->data, N, H * W);
    else
      gg_affine_bwd_f64(og->data, c->inputs[1].data, dx->data, N, H * W);
  } else {
    if (f32)
      gg_warp_f32(og->data, dx->data, NULL, N, H, W, 1);
    else
      gg_warp_f64(og->data, dx->data, NULL, N, H, W, 1);
  }
  return 0;
}
static int gg_bwd_num_inputs(const void *param) {
  return ((const GridParam *)param)->transform_type == GG_AFFINE ? 2 : 1;
}
static int infer_backward_gg(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const GridParam *p = (const GridParam *)param;
  (void)nin;
  (void)nout;
  if (in[0].ndim < 0) return 0;
  if (p->transform_type == GG_WARP) return mxw_shape_assign(&out[0], &in[0], "data gradient");
  const int64_t d[2] = {in[0].dims[0], 6};
  return set_shape(&out[0], 2, d, "data gradient");
}
static int grad_gg(mxw_grad_ctx *g) {
  const GridParam *p = (const GridParam *)mxw_grad_param(g);
  mxw_gid dx;
  if (p->transform_type == GG_AFFINE)
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_GridGenerator", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 1)), &dx, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_GridGenerator", MXW_GIDS(mxw_grad_ograd(g, 0)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}
static const mxw_op_def op_gg = {
    .name = "GridGenerator",
    .doc = MXW_DOC("sampling grids for BilinearSampler: an affine transform of the target's normalised coordinates, or "
                   "pixel coordinates plus an optical flow, normalised to [-1, 1]"),
    .attrs = k_gg_attrs,
    .num_attrs = 2,
    .param_size = sizeof(GridParam),
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 2,
    .num_visible_outputs_fn = num_visible_one,
    .output_names = k_gg_outputs,
    .infer_shape = infer_gg,
    .forward = fwd_gg,
    .gradient = grad_gg};
static const mxw_op_def op_backward_gg = {.name = "_backward_GridGenerator",
                                          .doc = MXW_DOC("the gradient of GridGenerator (inputs ograd[, grid_dst])"),
                                          .attrs = k_gg_attrs,
                                          .num_attrs = 2,
                                          .param_size = sizeof(GridParam),
                                          .num_inputs = 2,
                                          .input_names = k_gg_bwd_inputs,
                                          .num_inputs_fn = gg_bwd_num_inputs,
                                          .num_outputs = 1,
                                          .infer_shape = infer_backward_gg,
                                          .forward = fwd_backward_gg};

/* ==== the bilinear sampler kernels (BilinearSampler and SpatialTransformer) ======================== */
/* data (N, C, IH, IW), grid (N, 2, OH*OW): x then y in [-1, 1]; out (N, C, OH, OW). A grid point far
 * outside the image (or NaN) reads nothing. */
typedef struct {
  int64_t y0, x0; /* the top-left neighbour */
  double wy, wx;  /* its weights along y and x (MXNet's top_left_y_w, top_left_x_w) */
  int ok;
} bs_point;
#define DEFINE_BS(T, SFX)                                                                                       \
  static bs_point bs_locate_##SFX(T gx, T gy, int64_t IH, int64_t IW) {                                         \
    bs_point p = {0, 0, 0, 0, 0};                                                                               \
    const T yr = (gy + (T)1) * (T)(IH - 1) / (T)2, xr = (gx + (T)1) * (T)(IW - 1) / (T)2;                       \
    if (!(yr > -2 && yr < (T)IH + 1 && xr > -2 && xr < (T)IW + 1)) return p;                                    \
    p.y0 = (int64_t)floor((double)yr);                                                                          \
    p.x0 = (int64_t)floor((double)xr);                                                                          \
    p.wy = (double)(T)(1.0 - ((double)yr - (double)p.y0));                                                      \
    p.wx = (double)(T)(1.0 - ((double)xr - (double)p.x0));                                                      \
    p.ok = 1;                                                                                                   \
    return p;                                                                                                   \
  }                                                                                                             \
  static void bs_fwd_##SFX(const T *data, const T *grid, T *out, int64_t N, int64_t C, int64_t IH, int64_t IW,  \
                           int64_t OHW) {                                                                       \
    for (int64_t n = 0; n < N; n++)                                                                             \
      for (int64_t i = 0; i < OHW; i++) {                                                                       \
        const bs_point p = bs_locate_##SFX(grid[n * 2 * OHW + i], grid[n * 2 * OHW + OHW + i], IH, IW);         \
        const int y0in = p.y0 >= 0 && p.y0 < IH, y1in = p.y0 + 1 >= 0 && p.y0 + 1 < IH;                         \
        const int x0in = p.x0 >= 0 && p.x0 < IW, x1in = p.x0 + 1 >= 0 && p.x0 + 1 < IW;                         \
        for (int64_t c = 0; c < C; c++) {                                                                       \
          T *o = out + (n * C + c) * OHW + i;                                                                   \
          if (!p.ok) {                                                                                          \
            *o = 0;                                                                                             \
            continue;                                                                                           \
          }                                                                                                     \
          const T *d = data + (n * C + c) * IH * IW;                                                            \
          const double tl = y0in && x0in ? (double)d[p.y0 * IW + p.x0] : 0.0;                                   \
          const double tr = y0in && x1in ? (double)d[p.y0 * IW + p.x0 + 1] : 0.0;                               \
          const double bl = y1in && x0in ? (double)d[(p.y0 + 1) * IW + p.x0] : 0.0;                             \
          const double br = y1in && x1in ? (double)d[(p.y0 + 1) * IW + p.x0 + 1] : 0.0;                         \
          *o = (T)(tl * p.wy * p.wx + tr * p.wy * (1.0 - p.wx) + bl * (1.0 - p.wy) * p.wx +                     \
                   br * (1.0 - p.wy) * (1.0 - p.wx));                                                           \
        }                                                                                                       \
      }                                                                                                         \
  }                                                                                                             \
  /* ddata += ograd spread with the weights (ddata zeroed by the caller); dgrid = the derivative. */            \
  static void bs_bwd_##SFX(const T *og, const T *data, const T *grid, T *ddata, T *dgrid, int64_t N, int64_t C, \
                           int64_t IH, int64_t IW, int64_t OHW) {                                               \
    for (int64_t n = 0; n < N; n++)                                                                             \
      for (int64_t i = 0; i < OHW; i++) {                                                                       \
        const bs_point p = bs_locate_##SFX(grid[n * 2 * OHW + i], grid[n * 2 * OHW + OHW + i], IH, IW);         \
        double gy = 0, gx = 0;                                                                                  \
        if (p.ok) {                                                                                             \
          const int y0in = p.y0 >= 0 && p.y0 < IH, y1in = p.y0 + 1 >= 0 && p.y0 + 1 < IH;                       \
          const int x0in = p.x0 >= 0 && p.x0 < IW, x1in = p.x0 + 1 >= 0 && p.x0 + 1 < IW;                       \
          for (int64_t c = 0; c < C; c++) {                                                                     \
            const double g = (double)og[(n * C + c) * OHW + i];                                                 \
            const T *d = data + (n * C + c) * IH * IW;                                                          \
            T *dd = ddata + (n * C + c) * IH * IW;                                                              \
            double tl = 0, tr = 0, bl = 0, br = 0;                                                              \
            if (y0in && x0in) {                                                                                 \
              dd[p.y0 * IW + p.x0] += (T)(g * p.wy * p.wx);                                                     \
              tl = d[p.y0 * IW + p.x0];                                                                         \
            }                                                                                                   \
            if (y0in && x1in) {                                                                                 \
              dd[p.y0 * IW + p.x0 + 1] += (T)(g * p.wy * (1.0 - p.wx));                                         \
              tr = d[p.y0 * IW + p.x0 + 1];                                                                     \
            }                                                                                                   \
            if (y1in && x0in) {                                                                                 \
              dd[(p.y0 + 1) * IW + p.x0] += (T)(g * (1.0 - p.wy) * p.wx);                                       \
              bl = d[(p.y0 + 1) * IW + p.x0];                                                                   \
            }                                                                                                   \
            if (y1in && x1in) {                                                                                 \
              dd[(p.y0 + 1) * IW + p.x0 + 1] += (T)(g * (1.0 - p.wy) * (1.0 - p.wx));                           \
              br = d[(p.y0 + 1) * IW + p.x0 + 1];                                                               \
            }                                                                                                   \
            gy -= g * (tr - br + (tl - tr - bl + br) * p.wx);                                                   \
            gx -= g * (bl - br + (tl - tr - bl + br) * p.wy);                                                   \
          }                                                                                                     \
        }                                                                                                       \
        dgrid[n * 2 * OHW + OHW + i] = (T)(gy * (double)(IH - 1) / 2.0);                                        \
        dgrid[n * 2 * OHW + i] = (T)(gx * (double)(IW - 1) / 2.0);                                              \
      }                                                                                                         \
  }
DEFINE_BS(float, f32)
DEFINE_BS(double, f64)

/* ==== BilinearSampler ============================================================================ */
typedef struct {
  mxw_opt_int cudnn_off;
} SamplerParam;
static const mxw_attr_spec k_bs_attrs[] = {
    MXW_A_OPT_BOOL("cudnn_off", SamplerParam, cudnn_off, "None", "whether to turn cudnn off (ignored)"),
};
static const char *const k_bs_inputs[] = {"data", "grid", NULL};
static const char *const k_bs_outputs[] = {"output", "tmp", NULL};
static const char *const k_bs_bwd_inputs[] = {"ograd", "data", "grid", NULL};

static int infer_bs(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  shape_buf a, b;
  if (!mxw_shape_known(&in[0])) return 0;
  MXW_CHECK(in[0].ndim == 4, "input data should be 4D in batch-num_filter-y-x, got shape %s", SHAPE_STR(&in[0], a));
  if (!mxw_shape_known(&in[1])) return 0;
  MXW_CHECK(in[1].ndim == 4, "Sampler grid should be 4D in batch-2-y-x, got shape %s", SHAPE_STR(&in[1], b));
  MXW_CHECK(in[0].dims[0] == in[1].dims[0], "data %s and grid %s must have the same batch size", SHAPE_STR(&in[0], a),
            SHAPE_STR(&in[1], b));
  MXW_CHECK(in[1].dims[1] == 2, "incorrect grid shape[1], should be 2 (grid shape %s)", SHAPE_STR(&in[1], b));
  MXW_CHECK(in[1].dims[2] > 0, "incorrect grid_shape: %lld", (long long)in[1].dims[2]);
  MXW_CHECK(in[1].dims[3] > 0, "incorrect grid_shape: %lld", (long long)in[1].dims[3]);
  const int64_t o[4] = {in[0].dims[0], in[0].dims[1], in[1].dims[2], in[1].dims[3]};
  const int64_t t[4] = {in[1].dims[0], in[1].dims[2], in[1].dims[3], 2};
  MXW_TRY(set_shape(&out[0], 4, o, "output"));
  return set_shape(&out[1], 4, t, "tmp");
}
static int fwd_bs(const mxw_op_call *c) {
  const mxw_tensor *x = &c->inputs[0], *grid = &c->inputs[1];
  mxw_tensor *out = &c->outputs[0];
  MXW_TRY(check_real("BilinearSampler", x->dtype));
  MXW_CHECK(grid->dtype == x->dtype, "Non-uniform data type in BilinearSampler: data %s, grid %s",
            mxw_dtype_name(x->dtype), mxw_dtype_name(grid->dtype));
  if (is_half(x->dtype)) return mxw_run_as_f32(c, fwd_bs);
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1], IH = x->shape.dims[2], IW = x->shape.dims[3];
  const int64_t OHW = out->shape.dims[2] * out->shape.dims[3];
  zero(&c->outputs[1]);
  if (x->dtype == MXW_FLOAT32)
    bs_fwd_f32(x->data, grid->data, out->data, N, C, IH, IW, OHW);
  else
    bs_fwd_f64(x->data, grid->data, out->data, N, C, IH, IW, OHW);
  return 0;
}
/* (ograd, data, grid) -> (d data, d grid) */
static int fwd_backward_bs(const mxw_op_call *c) {
  const mxw_tensor *og = &c->inputs[0], *x = &c->inputs[1], *grid = &c->inputs[2];
  MXW_TRY(check_real("BilinearSampler", x->dtype));
  if (is_half(x->dtype)) return mxw_run_as_f32(c, fwd_backward_bs);
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1], IH = x->shape.dims[2], IW = x->shape.dims[3];
  const int64_t OHW = og->shape.dims[2] * og->shape.dims[3];
  zero(&c->outputs[0]);
  if (x->dtype == MXW_FLOAT32)
    bs_bwd_f32(og->data, x->data, grid->data, c->outputs[0].data, c->outputs[1].data, N, C, IH, IW, OHW);
  else
    bs_bwd_f64(og->data, x->data, grid->data, c->outputs[0].data, c->outputs[1].data, N, C, IH, IW, OHW);
  return 0;
}
static int infer_backward_inputs(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  for (int i = 0; i < nout && i + 1 < nin; i++) {
    MXW_TRY(mxw_shape_assign(&out[i], &in[i + 1], "input gradient"));
    MXW_TRY(mxw_shape_assign(&in[i + 1], &out[i], "input"));
  }
  return 0;
}
static int grad_bs(mxw_grad_ctx *g) {
  mxw_gid d[2];
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_BilinearSampler",
                          MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1)), d, 2));
  MXW_TRY(mxw_grad_set(g, 0, d[0]));
  return mxw_grad_set(g, 1, d[1]);
}
static const mxw_op_def op_bs = {
    .name = "BilinearSampler",
    .doc = MXW_DOC("samples NCHW data at a grid (N, 2, h, w) of normalised (x, y) points in [-1, 1] with bilinear "
                   "interpolation, zero outside the image"),
    .attrs = k_bs_attrs,
    .num_attrs = 1,
    .param_size = sizeof(SamplerParam),
    .num_inputs = 2,
    .input_names = k_bs_inputs,
    .num_outputs = 2,
    .num_visible_outputs_fn = num_visible_one,
    .output_names = k_bs_outputs,
    .infer_shape = infer_bs,
    .forward = fwd_bs,
    .gradient = grad_bs};
static const mxw_op_def op_backward_bs = {.name = "_backward_BilinearSampler",
                                          .doc = MXW_DOC("the gradient of BilinearSampler (inputs ograd, data, grid)"),
                                          .attrs = k_bs_attrs,
                                          .num_attrs = 1,
                                          .param_size = sizeof(SamplerParam),
                                          .num_inputs = 3,
                                          .input_names = k_bs_bwd_inputs,
                                          .num_outputs = 2,
                                          .infer_shape = infer_backward_inputs,
                                          .forward = fwd_backward_bs};

/* ==== SpatialTransformer ========================================================================= */
static const char *const k_st_types[] = {"affine", NULL};
static const char *const k_st_samplers[] = {"bilinear", NULL};
typedef struct {
  mxw_tuple target_shape;
  int transform_type, sampler_type;
  mxw_opt_int cudnn_off;
} STParam;
static const mxw_attr_spec k_st_attrs[] = {
    MXW_A_SHAPE("target_shape", STParam, target_shape, "(0, 0)", "output shape (h, w) of the spatial transformer"),
    MXW_A_ENUM("transform_type", STParam, transform_type, NULL, k_st_types, "transformation type (affine)"),
    MXW_A_ENUM("sampler_type", STParam, sampler_type, NULL, k_st_samplers, "sampling type (bilinear)"),
    MXW_A_OPT_BOOL("cudnn_off", STParam, cudnn_off, "None", "whether to turn cudnn off (ignored)"),
};
static const char *const k_st_inputs[] = {"data", "loc", NULL};
static const char *const k_st_outputs[] = {"output", "grid_dst", "grid_src", NULL};
static const char *const k_st_bwd_inputs[] = {"ograd", "data", "grid_dst", "grid_src", NULL};

static int infer_st(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const STParam *p = (const STParam *)param;
  (void)nin;
  (void)nout;
  shape_buf a;
  if (!mxw_shape_known(&in[0])) return 0;
  MXW_CHECK(in[0].ndim == 4, "input data should be 4D in batch-num_filter-y-x, got shape %s", SHAPE_STR(&in[0], a));
  const int64_t l[2] = {in[0].dims[0], 6};
  if (in[1].ndim >= 0)
    MXW_CHECK(in[1].ndim == 2, "localisation parameter should be 2D in batch-num_hidden, got shape %s",
              SHAPE_STR(&in[1], a));
  if (in[1].ndim == 2 && in[1].dims[1] >= 0)
    MXW_CHECK(in[1].dims[1] == 6, "incorrect localisation network shape[1], should be 6, got %lld",
              (long long)in[1].dims[1]);
  MXW_TRY(set_shape(&in[1], 2, l, "loc"));
  MXW_CHECK(p->target_shape.ndim == 2, "target_shape must be (h, w)");
  MXW_CHECK(p->target_shape.v[0] > 0, "incorrect target_shape: %lld", (long long)p->target_shape.v[0]);
  MXW_CHECK(p->target_shape.v[1] > 0, "incorrect target_shape: %lld", (long long)p->target_shape.v[1]);
  const int64_t H = p->target_shape.v[0], W = p->target_shape.v[1];
  const int64_t o[4] = {in[0].dims[0], in[0].dims[1], H, W}, gd[2] = {3, H * W}, gs[3] = {in[0].dims[0], 2, H * W};
  MXW_TRY(set_shape(&out[0], 4, o, "output"));
  MXW_TRY(set_shape(&out[1], 2, gd, "grid_dst"));
  return set_shape(&out[2], 3, gs, "grid_src");
}
/* grid_dst (3, HW): x, y, 1, computed in double as MXNet's loop; grid_src[n] = loc[n] (2, 3) . grid_dst */
#define DEFINE_ST(T, SFX)                                                                                \
  static void st_grids_##SFX(const T *loc, T *gd, T *gs, int64_t N, int64_t H, int64_t W) {              \
    const int64_t HW = H * W;                                                                            \
    for (int64_t i = 0; i < HW; i++) {                                                                   \
      gd[i] = (T)(-1.0 + (double)(i % W) * 2.0 / (double)(W - 1));                                       \
      gd[HW + i] = (T)(-1.0 + (double)(i / W) * 2.0 / (double)(H - 1));                                  \
      gd[2 * HW + i] = 1;                                                                                \
    }                                                                                                    \
    for (int64_t r = 0; r < 2 * N; r++) {                                                                \
      const T a = loc[3 * r], b = loc[3 * r + 1], c = loc[3 * r + 2];                                    \
      for (int64_t i = 0; i < HW; i++) gs[r * HW + i] = a * gd[i] + b * gd[HW + i] + c * gd[2 * HW + i]; \
    }                                                                                                    \
  }
DEFINE_ST(float, f32)
DEFINE_ST(double, f64)

static int fwd_st(const mxw_op_call *c) {
  const mxw_tensor *x = &c->inputs[0], *loc = &c->inputs[1];
  mxw_tensor *out = &c->outputs[0], *gd = &c->outputs[1], *gs = &c->outputs[2];
  MXW_TRY(check_real("SpatialTransformer", x->dtype));
  MXW_CHECK(loc->dtype == x->dtype, "Non-uniform data type in SpatialTransformer: data %s, loc %s",
            mxw_dtype_name(x->dtype), mxw_dtype_name(loc->dtype));
  if (is_half(x->dtype)) return mxw_run_as_f32(c, fwd_st);
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1], IH = x->shape.dims[2], IW = x->shape.dims[3];
  const int64_t H = out->shape.dims[2], W = out->shape.dims[3];
  if (x->dtype == MXW_FLOAT32) {
    st_grids_f32(loc->data, gd->data, gs->data, N, H, W);
    bs_fwd_f32(x->data, gs->data, out->data, N, C, IH, IW, H * W);
  } else {
    st_grids_f64(loc->data, gd->data, gs->data, N, H, W);
    bs_fwd_f64(x->data, gs->data, out->data, N, C, IH, IW, H * W);
  }
  return 0;
}
/* (ograd, data, grid_dst, grid_src) -> (d data, d loc) */
static int fwd_backward_st(const mxw_op_call *c) {
  const mxw_tensor *og = &c->inputs[0], *x = &c->inputs[1], *gd = &c->inputs[2], *gs = &c->inputs[3];
  mxw_tensor *dx = &c->outputs[0], *dloc = &c->outputs[1];
  MXW_TRY(check_real("SpatialTransformer", x->dtype));
  if (is_half(x->dtype)) return mxw_run_as_f32(c, fwd_backward_st);
  const int64_t N = x->shape.dims[0], C = x->shape.dims[1], IH = x->shape.dims[2], IW = x->shape.dims[3];
  const int64_t HW = og->shape.dims[2] * og->shape.dims[3];
  const size_t es = (size_t)mxw_dtype_size(x->dtype);
  void *dgrid = malloc((size_t)(N * 2 * HW > 0 ? N * 2 * HW : 1) * es);
  if (!dgrid) return mxw_fail_oom("the grid gradient of SpatialTransformer", (double)(N * 2 * HW) * (double)es);
  zero(dx);
  if (x->dtype == MXW_FLOAT32) {
    bs_bwd_f32(og->data, x->data, gs->data, dx->data, dgrid, N, C, IH, IW, HW);
    gg_affine_bwd_f32(dgrid, gd->data, dloc->data, N, HW);
  } else {
    bs_bwd_f64(og->data, x->data, gs->data, dx->data, dgrid, N, C, IH, IW, HW);
    gg_affine_bwd_f64(dgrid, gd->data, dloc->data, N, HW);
  }
  free(dgrid);
  return 0;
}
static int infer_backward_st(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  MXW_TRY(mxw_shape_assign(&out[0], &in[1], "data gradient"));
  if (in[1].ndim < 1) return 0;
  const int64_t l[2] = {in[1].dims[0], 6};
  return set_shape(&out[1], 2, l, "loc gradient");
}
static int grad_st(mxw_grad_ctx *g) {
  mxw_gid d[2];
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_SpatialTransformer",
                          MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_out(g, 1), mxw_grad_out(g, 2)), d,
                          2));
  MXW_TRY(mxw_grad_set(g, 0, d[0]));
  return mxw_grad_set(g, 1, d[1]);
}
static const mxw_op_def op_st = {
    .name = "SpatialTransformer",
    .doc = MXW_DOC("a spatial transformer: samples NCHW data (bilinear, zero outside) at an affine transform (loc, "
                   "(batch, 6)) of the target_shape grid"),
    .attrs = k_st_attrs,
    .num_attrs = 4,
    .param_size = sizeof(STParam),
    .num_inputs = 2,
    .input_names = k_st_inputs,
    .num_outputs = 3,
    .num_visible_outputs_fn = num_visible_one,
    .output_names = k_st_outputs,
    .infer_shape = infer_st,
    .forward = fwd_st,
    .gradient = grad_st};
static const mxw_op_def op_backward_st = {
    .name = "_backward_SpatialTransformer",
    .doc = MXW_DOC("the gradient of SpatialTransformer (inputs ograd, data, grid_dst, grid_src)"),
    .attrs = k_st_attrs,
    .num_attrs = 4,
    .param_size = sizeof(STParam),
    .num_inputs = 4,
    .input_names = k_st_bwd_inputs,
    .num_outputs = 2,
    .infer_shape = infer_backward_st,
    .forward = fwd_backward_st};

MXW_FAMILY(spatial, &op_gg, &op_backward_gg, &op_bs, &op_backward_bs, &op_st, &op_backward_st);
