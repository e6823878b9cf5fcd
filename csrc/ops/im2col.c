/* im2col.c -- im2col and col2im (MXNet 1.9.1 src/operator/nn/im2col.h, im2col.cc): the sliding
 * blocks of a batch of images (N, C, *spatial) with 1 to 3 spatial axes, as columns.
 *
 *   im2col(data, kernel, stride=(), dilate=(), pad=())              -> (N, C * prod(kernel), L)
 *   col2im(data, output_size, kernel, stride=(), dilate=(), pad=()) -> (N, C, *output_size)
 *
 * Row (c, k_0, ..., k_{d-1}) (channel slowest) and column (o_0, ..., o_{d-1}) of an image's
 * block matrix hold data[c, o_i * stride_i - pad_i + k_i * dilate_i, ...], 0 in the padding;
 * L = prod over axes of (size + 2 pad - (1 + (kernel - 1) dilate)) / stride + 1. col2im sums the
 * columns back into the image (overlapping blocks add up), so each op is the other's adjoint: the
 * gradient of im2col is col2im of the head gradient and the other way round (_backward_im2col,
 * _backward_col2im), which differentiate again. Empty stride / dilate default to 1s and pad to 0s,
 * as MXNet's SlidingParser. Every dtype (copies; col2im adds through double for non-float32). */
#include <stdio.h>
#include <string.h>

#include "../core/mxw_parallel.h"

#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
typedef char shape_buf[160];

typedef struct {
  mxw_tuple output_size, kernel, stride, dilate, pad; /* (output_size: col2im's only) */
} SlideParam;
#define SLIDE_ATTRS                                                                                                \
  MXW_A_SHAPE("kernel", SlideParam, kernel, NULL, "Sliding kernel size: (w,), (h, w) or (d, h, w)."),              \
      MXW_A_SHAPE("stride", SlideParam, stride, "()", "The stride between adjacent sliding blocks (default 1s)."), \
      MXW_A_SHAPE("dilate", SlideParam, dilate, "()", "The spacing between adjacent kernel points (default 1s)."), \
      MXW_A_SHAPE("pad", SlideParam, pad, "()", "The zero-value padding size on both sides (default 0s).")
static const mxw_attr_spec k_im2col_attrs[] = {SLIDE_ATTRS};
static const mxw_attr_spec k_col2im_attrs[] = {
    MXW_A_SHAPE("output_size", SlideParam, output_size, NULL,
                "The spatial dimension of image array: (w,), (h, w) or (d, h, w)."),
    SLIDE_ATTRS};

static int fill_default(mxw_tuple *t, int d, int64_t v, const char *what) {
  if (t->ndim == 0) {
    t->ndim = d;
    for (int i = 0; i < d; i++) t->v[i] = v;
  }
  MXW_CHECK(t->ndim == d, "%s must have the same number of dimensions as the kernel (%d), got %d", what, d, t->ndim);
  return 0;
}
static int validate_slide(void *param) {
  SlideParam *p = (SlideParam *)param;
  const int d = p->kernel.ndim;
  MXW_CHECK(d >= 1 && d <= 3, "the kernel must have 1 to 3 dimensions, got %d", d);
  MXW_TRY(fill_default(&p->stride, d, 1, "stride"));
  MXW_TRY(fill_default(&p->dilate, d, 1, "dilate"));
  MXW_TRY(fill_default(&p->pad, d, 0, "pad"));
  for (int i = 0; i < d; i++)
    MXW_CHECK(p->kernel.v[i] > 0 && p->stride.v[i] > 0 && p->dilate.v[i] > 0 && p->pad.v[i] >= 0,
              "axis %d: kernel, stride and dilate must be positive and pad not negative", i);
  return 0;
}
static int validate_col2im(void *param) {
  MXW_TRY(validate_slide(param));
  const SlideParam *p = (const SlideParam *)param;
  MXW_CHECK(p->output_size.ndim == p->kernel.ndim, "output_size must have %d dimensions, got %d", p->kernel.ndim,
            p->output_size.ndim);
  return 0;
}

/* the block positions along each axis of an image of spatial sizes `size`, and L */
static int blocks(const SlideParam *p, const int64_t *size, int64_t *out, int64_t *L) {
  *L = 1;
  for (int i = 0; i < p->kernel.ndim; i++) {
    const int64_t padded = size[i] + 2 * p->pad.v[i], dk = 1 + (p->kernel.v[i] - 1) * p->dilate.v[i];
    MXW_CHECK(dk <= padded, "kernel size exceed input: axis %d has %lld padded, the dilated kernel %lld", i,
              (long long)padded, (long long)dk);
    out[i] = (padded - dk) / p->stride.v[i] + 1;
    *L *= out[i];
  }
  return 0;
}
static int64_t kernel_size(const SlideParam *p) {
  int64_t k = 1;
  for (int i = 0; i < p->kernel.ndim; i++) k *= p->kernel.v[i];
  return k;
}
/* the column shape of images of shape img */
static int col_shape(const SlideParam *p, const mxw_shape *img, mxw_shape *col) {
  shape_buf b;
  MXW_CHECK(img->ndim == p->kernel.ndim + 2, "data must be (N, C, %d spatial axes), got shape %s", p->kernel.ndim,
            SHAPE_STR(img, b));
  int64_t out[3], L;
  MXW_TRY(blocks(p, img->dims + 2, out, &L));
  const int64_t d[3] = {img->dims[0], img->dims[1] * kernel_size(p), L};
  *col = mxw_shape_make(3, d);
  return 0;
}
static int infer_im2col(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  (void)nout;
  if (!mxw_shape_known(&in[0])) return 0;
  mxw_shape col;
  MXW_TRY(col_shape((const SlideParam *)param, &in[0], &col));
  return mxw_shape_assign(&out[0], &col, "output");
}
static int infer_col2im(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const SlideParam *p = (const SlideParam *)param;
  (void)nin;
  (void)nout;
  if (!mxw_shape_known(&in[0])) return 0;
  shape_buf b;
  MXW_CHECK(in[0].ndim == 3 && in[0].dims[1] % kernel_size(p) == 0, "data must be (N, C * %lld, L), got shape %s",
            (long long)kernel_size(p), SHAPE_STR(&in[0], b));
  int64_t d[5] = {in[0].dims[0], in[0].dims[1] / kernel_size(p)};
  for (int i = 0; i < p->kernel.ndim; i++) d[i + 2] = p->output_size.v[i];
  const mxw_shape img = mxw_shape_make(p->kernel.ndim + 2, d);
  mxw_shape col;
  MXW_TRY(col_shape(p, &img, &col));
  MXW_CHECK(col.dims[2] == in[0].dims[2], "data has %lld columns, output_size %s makes %lld blocks",
            (long long)in[0].dims[2], SHAPE_STR(&img, b), (long long)col.dims[2]);
  return mxw_shape_assign(&out[0], &img, "output");
}

/* Walks every (image, row, column) of the block matrices of images `img` (shape) and copies
 * between the image tensor and the column tensor: to_col, col = img (0 in the padding); otherwise
 * img += col (img zeroed first). */
static int slide(const SlideParam *p, mxw_tensor *img, mxw_tensor *col, int to_col) {
  const int d = p->kernel.ndim;
  const int64_t *size = img->shape.dims + 2, N = img->shape.dims[0], C = img->shape.dims[1], K = kernel_size(p);
  int64_t out[3] = {1, 1, 1}, L, plane = 1;
  MXW_TRY(blocks(p, size, out, &L));
  for (int i = 0; i < d; i++) plane *= size[i];
  const size_t es = (size_t)mxw_dtype_size(img->dtype);
  if (!to_col) memset(img->data, 0, (size_t)mxw_tensor_size(img) * es);
  const int f32 = img->dtype == MXW_FLOAT32;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t k = 0; k < K; k++) {
        int64_t kk[3] = {0, 0, 0}, rest = k;
        for (int i = d - 1; i >= 0; i--) {
          kk[i] = rest % p->kernel.v[i];
          rest /= p->kernel.v[i];
        }
        const int64_t row = (n * C * K + c * K + k) * L;
        for (int64_t l = 0; l < L; l++) {
          int64_t pos = 0, r = l, oo[3] = {0, 0, 0};
          int inside = 1;
          for (int i = d - 1; i >= 0; i--) {
            oo[i] = r % out[i];
            r /= out[i];
          }
          for (int i = 0; i < d; i++) {
            const int64_t x = oo[i] * p->stride.v[i] - p->pad.v[i] + kk[i] * p->dilate.v[i];
            if (x < 0 || x >= size[i]) inside = 0;
            pos = pos * size[i] + x;
          }
          const int64_t at = (n * C + c) * plane + pos;
          if (to_col) {
            if (inside)
              memcpy((char *)col->data + (size_t)(row + l) * es, (const char *)img->data + (size_t)at * es, es);
            else
              memset((char *)col->data + (size_t)(row + l) * es, 0, es);
          } else if (inside) {
            if (f32)
              ((float *)img->data)[at] += ((const float *)col->data)[row + l];
            else
              mxw_store_f64(img->data, img->dtype, at,
                            mxw_load_f64(img->data, img->dtype, at) + mxw_load_f64(col->data, col->dtype, row + l));
          }
        }
      }
  return 0;
}
static int fwd_im2col(const mxw_op_call *c) {
  return slide((const SlideParam *)c->param, (mxw_tensor *)&c->inputs[0], &c->outputs[0], 1);
}
static int fwd_col2im(const mxw_op_call *c) {
  return slide((const SlideParam *)c->param, &c->outputs[0], (mxw_tensor *)&c->inputs[0], 0);
}
/* _backward_im2col(ograd, data): col2im of ograd into data's shape; _backward_col2im(ograd):
 * im2col of ograd */
static int infer_backward_im2col(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  (void)nout;
  if (!mxw_shape_known(&in[1])) return 0;
  mxw_shape col;
  MXW_TRY(col_shape((const SlideParam *)param, &in[1], &col));
  MXW_TRY(mxw_shape_assign(&in[0], &col, "ograd"));
  return mxw_shape_assign(&out[0], &in[1], "output");
}
static int infer_type_backward_im2col(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  (void)nout;
  if (in[0] >= 0) out[0] = in[0];
  return 0;
}
static int grad_im2col(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_backward_im2col", 1); }
static int grad_col2im(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "_backward_col2im", 0); }
/* the backward ops are linear in ograd: their gradients are the forward ops again */
static int grad_backward_im2col(mxw_grad_ctx *g) {
  mxw_gid d = -1;
  MXW_TRY(mxw_grad_op_fwd(g, "im2col", MXW_GIDS(mxw_grad_ograd(g, 0)), &d, 1));
  MXW_TRY(mxw_grad_set(g, 0, d));
  return mxw_grad_set(g, 1, mxw_grad_zeros_like(g, mxw_grad_in(g, 1)));
}
static int grad_backward_col2im(mxw_grad_ctx *g) { return mxw_grad_set_fwd_op(g, "col2im", 0); }
static const char *const k_data[] = {"data", NULL};
static const char *const k_ograd_data[] = {"ograd", "data", NULL};
static const mxw_op_def op_im2col = {
    .name = "im2col",
    .doc = MXW_DOC("Extract sliding blocks from input array."),
    .attrs = k_im2col_attrs,
    .num_attrs = 4,
    .param_size = sizeof(SlideParam),
    .validate = validate_slide,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_im2col,
    .forward = fwd_im2col,
    .gradient = grad_im2col,
};
static const mxw_op_def op_col2im = {
    .name = "col2im",
    .doc = MXW_DOC("Combining the output column matrix of im2col back to image array."),
    .attrs = k_col2im_attrs,
    .num_attrs = 5,
    .param_size = sizeof(SlideParam),
    .validate = validate_col2im,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_col2im,
    .forward = fwd_col2im,
    .gradient = grad_col2im,
};
static int fwd_backward_im2col(const mxw_op_call *c) {
  return slide((const SlideParam *)c->param, &c->outputs[0], (mxw_tensor *)&c->inputs[0], 0);
}
static const mxw_op_def op_backward_im2col = {
    .name = "_backward_im2col",
    .doc = MXW_DOC("the gradient of im2col: col2im of the head gradient into data's shape"),
    .attrs = k_im2col_attrs,
    .num_attrs = 4,
    .param_size = sizeof(SlideParam),
    .validate = validate_slide,
    .num_inputs = 2,
    .input_names = k_ograd_data,
    .num_outputs = 1,
    .infer_shape = infer_backward_im2col,
    .infer_type = infer_type_backward_im2col,
    .forward = fwd_backward_im2col,
    .gradient = grad_backward_im2col,
};
static const mxw_op_def op_backward_col2im = {
    .name = "_backward_col2im",
    .doc = MXW_DOC("the gradient of col2im: im2col of the head gradient"),
    .attrs = k_col2im_attrs,
    .num_attrs = 5,
    .param_size = sizeof(SlideParam),
    .validate = validate_col2im,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = infer_im2col,
    .forward = fwd_im2col,
    .gradient = grad_backward_col2im,
};

MXW_FAMILY(im2col, &op_im2col, &op_col2im, &op_backward_im2col, &op_backward_col2im);
