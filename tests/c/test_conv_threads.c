/* Threaded convolution (issue 10): Convolution, Deconvolution and their weight/bias gradients give
 * bit for bit the same results with 2, 3 and 4 threads as with 1, on every path (depthwise, the
 * direct few-filter kernel, im2col + GEMM in one or several bands, pointwise, col2im, the
 * depthwise scatter), in float32 and float64, with groups, stride, dilation, padding and shapes
 * that split unevenly; and the 1-thread results agree with the convolution formulas written as
 * plain loops. The split thresholds are lowered so that small shapes take the threaded paths
 * (mxw_conv_parallel_min_work, mxw_gemm_parallel_min_macs); one pass keeps the defaults. */
#include <stdlib.h>

#include "kernels/conv_kernels.h"
#include "kernels/gemm.h"
#include "mxw_test.h"

enum { OP_CONV, OP_DECONV, OP_CONV_WGRAD, OP_DECONV_WGRAD };
static const char *const k_op_names[] = {"Convolution", "Deconvolution", "_backward_Convolution_weight",
                                         "_backward_Deconvolution_weight"};

typedef struct {
  int op, dtype, nsp, N, C, F, G, bias;
  int in[3], k[3], s[3], d[3], p[3], adj[3];
  int chan_last;
} tcase;

static uint32_t g_lcg = 4242;
static double rnd(void) {
  g_lcg = g_lcg * 1664525u + 1013904223u;
  return (double)(g_lcg >> 8) / 16777216.0 * 2.0 - 1.0;
}

static void fmt_tuple(char *buf, size_t len, const int *v, int n) {
  size_t u = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < n; i++) u += (size_t)snprintf(buf + u, len - u, i ? ", %d" : "%d", v[i]);
  snprintf(buf + u, len - u, n == 1 ? ",)" : ")");
}

static mxw_ndarray *make(int dtype, int ndim, const int32_t *shape) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  const int64_t n = mxw_ndarray_size(a);
  for (int64_t i = 0; i < n; i++) {
    if (dtype == MXW_FLOAT32)
      ((float *)mxw_ndarray_data(a))[i] = (float)rnd();
    else
      ((double *)mxw_ndarray_data(a))[i] = rnd();
  }
  return a;
}
static double at(const mxw_ndarray *a, int64_t i) {
  return mxw_ndarray_dtype(a) == MXW_FLOAT32 ? (double)((const float *)mxw_ndarray_data(a))[i]
                                             : ((const double *)mxw_ndarray_data(a))[i];
}

/* Output spatial size of a Convolution (grid) or Deconvolution (image) for dim i. */
static int out_size(const tcase *k, int deconv, int i) {
  const int dk = k->d[i] * (k->k[i] - 1) + 1;
  return deconv ? k->s[i] * (k->in[i] - 1) + dk - 2 * k->p[i] + k->adj[i] : (k->in[i] + 2 * k->p[i] - dk) / k->s[i] + 1;
}

/* The formulas as loops (channel-first, every rank as 3-D), in double. With `grid` the
 * Convolution's output / the Deconvolution's input positions and `img` the other side:
 *   Convolution    out[n, fo, Y] = bias[fo] + sum w[fo, c, t] x[n, ci, pos(Y, t)]
 *   Deconvolution  out[n, fo, pos(Y, t)] += w[ci, o, t] x[n, ci, Y]   (+ bias[fo])
 *   weight grads   dW = the sums of the products above with the weight left out, over n and Y
 * where pos(Y, t) = Y * s - p + t * d per dim. */
static void reference(const tcase *k, const mxw_ndarray *x, const mxw_ndarray *w, const mxw_ndarray *b,
                      const mxw_ndarray *dy, double *out) {
  const int deconv = k->op == OP_DECONV || k->op == OP_DECONV_WGRAD, wgrad = k->op >= OP_CONV_WGRAD;
  const int Cg = k->C / k->G, Fg = k->F / k->G;
  int in[3] = {1, 1, 1}, ks[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pd[3] = {0, 0, 0}, os[3] = {1, 1, 1};
  for (int i = 0; i < k->nsp; i++) {
    const int s = 3 - k->nsp + i;
    in[s] = k->in[i], ks[s] = k->k[i], st[s] = k->s[i], dl[s] = k->d[i], pd[s] = k->p[i];
    os[s] = out_size(k, deconv, i);
  }
  const int isz = in[0] * in[1] * in[2], ksz = ks[0] * ks[1] * ks[2], osz = os[0] * os[1] * os[2];
  const int *grid = deconv ? in : os, *img = deconv ? os : in;
  const int nw = (deconv ? k->C * Fg : k->F * Cg) * ksz;
  if (wgrad) {
    for (int i = 0; i < nw; i++) out[i] = 0;
    if (k->bias)
      for (int i = 0; i < k->F; i++) out[nw + i] = 0;
  } else {
    for (int i = 0; i < k->N * k->F * osz; i++) out[i] = b ? at(b, (i / osz) % k->F) : 0.0;
  }
  for (int n = 0; n < k->N; n++)
    for (int g = 0; g < k->G; g++)
      for (int o = 0; o < Fg; o++)
        for (int c = 0; c < Cg; c++)
          for (int z = 0; z < grid[0]; z++)
            for (int y = 0; y < grid[1]; y++)
              for (int xx = 0; xx < grid[2]; xx++)
                for (int tz = 0; tz < ks[0]; tz++)
                  for (int ty = 0; ty < ks[1]; ty++)
                    for (int tx = 0; tx < ks[2]; tx++) {
                      const int iz = z * st[0] - pd[0] + tz * dl[0], iy = y * st[1] - pd[1] + ty * dl[1],
                                ix = xx * st[2] - pd[2] + tx * dl[2];
                      if (iz < 0 || iz >= img[0] || iy < 0 || iy >= img[1] || ix < 0 || ix >= img[2]) continue;
                      const int t = (tz * ks[1] + ty) * ks[2] + tx;
                      const int gpos = (z * grid[1] + y) * grid[2] + xx, ipos = (iz * img[1] + iy) * img[2] + ix;
                      const int ci = g * Cg + c, fo = g * Fg + o;
                      const int widx = deconv ? (ci * Fg + o) * ksz + t : (fo * Cg + c) * ksz + t;
                      const int xidx = (n * k->C + ci) * isz + (deconv ? gpos : ipos);
                      const int yidx = (n * k->F + fo) * osz + (deconv ? ipos : gpos);
                      if (wgrad)
                        out[widx] += at(dy, yidx) * at(x, xidx);
                      else
                        out[yidx] += at(w, widx) * at(x, xidx);
                    }
  if (wgrad && k->bias)
    for (int i = 0; i < k->N * k->F * osz; i++) out[nw + (i / osz) % k->F] += at(dy, i);
}

/* dst (A, S, R) = src (A, R, S) for arrays of esize-byte elements. */
static void swap_axes(const char *src, char *dst, int A, int R, int S, size_t es) {
  for (int a = 0; a < A; a++)
    for (int r = 0; r < R; r++)
      for (int s = 0; s < S; s++)
        memcpy(dst + ((size_t)(a * S + s) * R + r) * es, src + ((size_t)(a * R + r) * S + s) * es, es);
}

/* A channel-last copy (N, spatial, C) of a channel-first (N, C, spatial) array. */
static mxw_ndarray *to_chan_last(const mxw_ndarray *a) {
  int32_t shape[5];
  const int nd = mxw_ndarray_ndim(a);
  int32_t dims[5];
  mxw_ndarray_shape(a, dims);
  int sp = 1;
  shape[0] = (int32_t)dims[0];
  for (int i = 2; i < nd; i++) shape[i - 1] = (int32_t)dims[i], sp *= (int)dims[i];
  shape[nd - 1] = (int32_t)dims[1];
  mxw_ndarray *r = NULL;
  if (mxw_ndarray_create(nd, shape, mxw_ndarray_dtype(a), &r) != 0) fail_msg("%s", mxw_get_last_error());
  const size_t es = mxw_ndarray_dtype(a) == MXW_FLOAT32 ? 4 : 8;
  swap_axes((const char *)mxw_ndarray_data(a), (char *)mxw_ndarray_data(r), (int)dims[0], (int)dims[1], sp, es);
  return r;
}

static int invoke(const tcase *k, mxw_ndarray **ins, int nin, mxw_ndarray **outs, int *nout) {
  char kern[64], str[64], dil[64], pad[64], adj[64], nf[16], ng[16];
  fmt_tuple(kern, sizeof kern, k->k, k->nsp);
  fmt_tuple(str, sizeof str, k->s, k->nsp);
  fmt_tuple(dil, sizeof dil, k->d, k->nsp);
  fmt_tuple(pad, sizeof pad, k->p, k->nsp);
  fmt_tuple(adj, sizeof adj, k->adj, k->nsp);
  snprintf(nf, sizeof nf, "%d", k->F);
  snprintf(ng, sizeof ng, "%d", k->G);
  const int deconv = k->op == OP_DECONV || k->op == OP_DECONV_WGRAD;
  const char *layout = !k->chan_last ? "None" : k->nsp == 2 ? "NHWC" : "NDHWC";
  const char *keys[] = {"kernel", "stride", "dilate", "pad", "num_filter", "num_group", "no_bias", "layout", "adj"};
  const char *vals[] = {kern, str, dil, pad, nf, ng, k->bias ? "False" : "True", layout, adj};
  mxw_params *p = NULL;
  const int op = mxw_op_find(k_op_names[k->op]);
  if (mxw_params_create(op, deconv ? 9 : 8, keys, vals, &p) != 0) fail_msg("%s", mxw_get_last_error());
  const int rc = mxw_op_invoke(op, p, nin, ins, nout, outs);
  mxw_params_free(p);
  return rc;
}

static void run_case(const tcase *k) {
  const int deconv = k->op == OP_DECONV || k->op == OP_DECONV_WGRAD, wgrad = k->op >= OP_CONV_WGRAD;
  const int nd = k->nsp + 2;
  int32_t xs[5] = {k->N, k->C}, ws[5] = {deconv ? k->C : k->F, deconv ? k->F / k->G : k->C / k->G}, bs[1] = {k->F};
  int32_t ys[5] = {k->N, k->F};
  for (int i = 0; i < k->nsp; i++) {
    xs[2 + i] = k->in[i];
    ws[2 + i] = k->k[i];
    ys[2 + i] = out_size(k, deconv, i);
  }
  mxw_ndarray *x = make(k->dtype, nd, xs), *w = make(k->dtype, nd, ws), *b = make(k->dtype, 1, bs);
  mxw_ndarray *dy = make(k->dtype, nd, ys);
  /* the op's inputs: forward (data, weight[, bias]); weight gradient (ograd, data) */
  mxw_ndarray *ins[3];
  int nin;
  mxw_ndarray *xl = k->chan_last ? to_chan_last(x) : NULL, *wl = k->chan_last ? to_chan_last(w) : NULL;
  mxw_ndarray *dyl = k->chan_last ? to_chan_last(dy) : NULL;
  if (wgrad) {
    ins[0] = k->chan_last ? dyl : dy;
    ins[1] = k->chan_last ? xl : x;
    nin = 2;
  } else {
    ins[0] = k->chan_last ? xl : x;
    ins[1] = k->chan_last ? wl : w;
    ins[2] = b;
    nin = k->bias ? 3 : 2;
  }
  char *first[2] = {NULL, NULL};
  size_t bytes[2] = {0, 0};
  int nout_first = 0;
  for (int threads = 1; threads <= 4; threads++) {
    assert_int_equal(mxw_set_num_threads(threads), 0);
    mxw_ndarray *outs[2] = {NULL, NULL};
    int nout = wgrad && k->bias ? 2 : 1;
    if (invoke(k, ins, nin, outs, &nout) != 0) fail_msg("%s: %s", k_op_names[k->op], mxw_get_last_error());
    assert_true(nout >= 1 && nout <= 2);
    for (int o = 0; o < nout && o < 2; o++) {
      const size_t nb = (size_t)mxw_ndarray_size(outs[o]) * (k->dtype == MXW_FLOAT32 ? 4 : 8);
      if (threads == 1) {
        first[o] = malloc(nb + 1);
        memcpy(first[o], mxw_ndarray_data(outs[o]), nb);
        bytes[o] = nb;
        nout_first = nout;
      } else if (!first[o] || nb != bytes[o] || memcmp(first[o], mxw_ndarray_data(outs[o]), nb) != 0) {
        fail_msg(
            "%s %s nsp %d N %d C %d F %d G %d in (%d, %d, %d) kernel (%d, %d, %d): output %d with %d threads "
            "differs from 1 thread",
            k_op_names[k->op], k->dtype == MXW_FLOAT32 ? "float32" : "float64", k->nsp, k->N, k->C, k->F, k->G,
            k->in[0], k->in[1], k->in[2], k->k[0], k->k[1], k->k[2], o, threads);
      }
      mxw_ndarray_free(outs[o]);
    }
  }
  assert_int_equal(mxw_set_num_threads(1), 0);
  /* the 1-thread result against the loops (channel-last results back to channel-first) */
  int64_t n_first = (int64_t)(bytes[0] / (k->dtype == MXW_FLOAT32 ? 4 : 8));
  int64_t n_want = n_first + (nout_first > 1 ? k->F : 0);
  double *want = malloc(sizeof(double) * (size_t)n_want + 1), *got = malloc(sizeof(double) * (size_t)n_want + 1);
  reference(k, x, w, k->bias ? b : NULL, dy, want);
  const int32_t *gshape = wgrad ? ws : ys;
  for (int64_t i = 0; i < n_first; i++)
    got[i] = k->dtype == MXW_FLOAT32 ? (double)((const float *)first[0])[i] : ((const double *)first[0])[i];
  if (k->chan_last) { /* (lead, spatial, second) -> (lead, second, spatial) */
    int sp = 1;
    for (int i = 2; i < nd; i++) sp *= gshape[i];
    double *cf = malloc(sizeof(double) * (size_t)n_first + 1);
    swap_axes((const char *)got, (char *)cf, gshape[0], sp, gshape[1], sizeof(double));
    memcpy(got, cf, sizeof(double) * (size_t)n_first);
    free(cf);
  }
  for (int64_t i = 0; i < (nout_first > 1 ? k->F : 0); i++)
    got[n_first + i] = k->dtype == MXW_FLOAT32 ? (double)((const float *)first[1])[i] : ((const double *)first[1])[i];
  const double tol = k->dtype == MXW_FLOAT32 ? 1e-4 : 1e-10;
  for (int64_t i = 0; i < n_want; i++)
    if (!(fabs(got[i] - want[i]) <= tol * (1.0 + fabs(want[i]))))
      fail_msg("%s %s: index %lld got %.9g want %.9g", k_op_names[k->op], k->dtype == MXW_FLOAT32 ? "f32" : "f64",
               (long long)i, got[i], want[i]);
  free(want), free(got), free(first[0]), free(first[1]);
  mxw_ndarray_free(x), mxw_ndarray_free(w), mxw_ndarray_free(b), mxw_ndarray_free(dy);
  if (xl) mxw_ndarray_free(xl), mxw_ndarray_free(wl), mxw_ndarray_free(dyl);
}

#define F32 MXW_FLOAT32
#define F64 MXW_FLOAT64
/* {op, dtype, nsp, N, C, F, G, bias, in, kernel, stride, dilate, pad, adj, channel-last} */
static const tcase k_cases[] = {
    /* depthwise float32 (planes: 7 and 5 over 2..4 threads), MobileNet's 3x3 s1/s2 pad 1 */
    {OP_CONV, F32, 2, 1, 7, 7, 7, 1, {13, 18}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 0},
    {OP_CONV, F32, 2, 1, 5, 5, 5, 0, {15, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0}, 0},
    {OP_CONV, F32, 1, 3, 3, 3, 3, 1, {29}, {5}, {2}, {2}, {2}, {0}, 0},
    /* direct float32 (few filters per group): blocks of filters over images and groups */
    {OP_CONV, F32, 2, 3, 2, 7, 1, 1, {12, 13}, {5, 5}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
    {OP_CONV, F32, 2, 1, 6, 9, 3, 1, {10, 11}, {3, 3}, {2, 1}, {1, 2}, {1, 1}, {0}, 0},
    {OP_CONV, F32, 3, 2, 2, 5, 1, 0, {4, 5, 9}, {2, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {0}, 0},
    /* im2col + GEMM float32 (more filters than the direct kernel): one image, several bands */
    {OP_CONV, F32, 2, 1, 16, 34, 1, 1, {62, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 0},
    {OP_CONV, F32, 2, 5, 3, 36, 1, 1, {9, 10}, {3, 3}, {2, 1}, {1, 1}, {1, 0}, {0}, 0},
    {OP_CONV, F32, 2, 2, 6, 66, 3, 0, {7, 9}, {3, 2}, {1, 2}, {2, 1}, {1, 1}, {0}, 0},
    /* pointwise float32 */
    {OP_CONV, F32, 2, 1, 13, 40, 1, 1, {9, 11}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
    {OP_CONV, F32, 2, 3, 8, 12, 2, 1, {5, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
    /* float64 (dgemm): groups, stride, dilation, 1-D and 3-D */
    {OP_CONV, F64, 2, 2, 4, 6, 2, 1, {9, 8}, {3, 3}, {2, 1}, {1, 2}, {1, 1}, {0}, 0},
    {OP_CONV, F64, 1, 3, 3, 5, 1, 1, {17}, {3}, {1}, {1}, {1}, {0}, 0},
    {OP_CONV, F64, 3, 1, 2, 3, 1, 0, {4, 5, 6}, {2, 2, 2}, {1, 1, 2}, {1, 1, 1}, {1, 0, 1}, {0}, 0},
    {OP_CONV, F64, 2, 1, 5, 5, 5, 1, {9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 0},
    /* Deconvolution: depthwise float32, GEMM + col2im, pointwise, float64, the direct scatter */
    {OP_DECONV, F32, 2, 1, 7, 7, 7, 1, {9, 10}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 0}, 0},
    {OP_DECONV, F32, 2, 3, 4, 6, 2, 1, {6, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 0}, {1, 1}, 0},
    {OP_DECONV, F32, 2, 1, 8, 64, 1, 1, {40, 50}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 0},
    {OP_DECONV, F32, 2, 2, 6, 9, 3, 0, {5, 6}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
    {OP_DECONV, F64, 2, 2, 3, 4, 1, 1, {5, 6}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {1, 0}, 0},
    {OP_DECONV, F64, 2, 3, 5, 5, 5, 1, {6, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0}, 0},
    {OP_DECONV, F32, 3, 2, 3, 3, 3, 0, {3, 4, 5}, {2, 2, 2}, {2, 1, 2}, {1, 1, 1}, {0, 1, 0}, {1, 0, 1}, 0},
    /* weight and bias gradients: channel blocks, pointwise, depthwise float32, float64 */
    {OP_CONV_WGRAD, F32, 2, 3, 19, 6, 1, 1, {11, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 0},
    {OP_CONV_WGRAD, F32, 2, 1, 16, 34, 1, 1, {62, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 0},
    {OP_CONV_WGRAD, F32, 2, 2, 12, 6, 3, 0, {7, 8}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {0}, 0},
    {OP_CONV_WGRAD, F32, 2, 2, 70, 9, 1, 1, {5, 6}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
    {OP_CONV_WGRAD, F32, 2, 3, 7, 7, 7, 1, {12, 9}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {0}, 0},
    /* few channel blocks (LeNet's conv2: 20 channels at 5x5 are blocks of 8, 8, 4): parts of dW's
     * rows, 2 of 50 rows, 3 of 73 */
    {OP_CONV_WGRAD, F32, 2, 3, 20, 50, 1, 1, {12, 12}, {5, 5}, {1, 1}, {1, 1}, {0, 0}, {0}, 0},
    {OP_CONV_WGRAD, F32, 2, 2, 20, 73, 1, 0, {11, 12}, {5, 5}, {1, 1}, {1, 1}, {1, 0}, {0}, 0},
    {OP_CONV_WGRAD, F64, 2, 2, 10, 4, 2, 1, {6, 7}, {3, 3}, {1, 2}, {2, 1}, {1, 1}, {0}, 0},
    {OP_CONV_WGRAD, F64, 1, 3, 3, 3, 3, 0, {13}, {3}, {2}, {1}, {1}, {0}, 0},
    {OP_DECONV_WGRAD, F32, 2, 2, 5, 20, 1, 1, {6, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 0}, 0},
    {OP_DECONV_WGRAD, F32, 2, 3, 6, 6, 6, 0, {5, 5}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {0}, 0},
    {OP_DECONV_WGRAD, F64, 2, 1, 4, 6, 2, 1, {4, 5}, {3, 3}, {1, 2}, {1, 1}, {0, 1}, {0, 1}, 0},
    /* channel-last layouts */
    {OP_CONV, F32, 2, 2, 5, 40, 1, 1, {9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 1},
    {OP_CONV, F32, 2, 3, 4, 6, 2, 1, {8, 9}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {0}, 1},
    {OP_CONV, F32, 2, 1, 6, 6, 6, 0, {10, 12}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0}, 1},
    {OP_DECONV, F32, 2, 2, 4, 6, 1, 1, {5, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1},
    {OP_CONV_WGRAD, F32, 2, 2, 9, 12, 1, 1, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 1},
    {OP_CONV, F64, 3, 1, 3, 4, 1, 1, {3, 4, 5}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0}, 1},
    /* channel-last paths: depthwise (forward, transposed, weight gradient; more channels than a
     * block of 16 and a tail), pointwise, groups, 3-D, float64 */
    {OP_CONV, F32, 2, 2, 21, 21, 21, 1, {7, 9}, {3, 3}, {1, 2}, {2, 1}, {2, 1}, {0}, 1},
    {OP_DECONV, F32, 2, 2, 19, 19, 19, 1, {5, 6}, {3, 3}, {2, 1}, {1, 1}, {1, 0}, {1, 0}, 1},
    {OP_CONV_WGRAD, F32, 2, 3, 18, 18, 18, 1, {6, 7}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, {0}, 1},
    {OP_DECONV_WGRAD, F32, 2, 2, 17, 17, 17, 1, {5, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0}, 1},
    {OP_CONV, F32, 2, 2, 12, 20, 4, 1, {5, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 1},
    {OP_DECONV, F32, 2, 2, 12, 20, 4, 1, {5, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 1},
    {OP_CONV_WGRAD, F32, 2, 2, 12, 20, 4, 1, {5, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0}, 1},
    {OP_DECONV_WGRAD, F32, 2, 2, 6, 9, 3, 1, {4, 5}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {1, 0}, 1},
    {OP_CONV_WGRAD, F32, 2, 2, 70, 9, 1, 0, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 1},
    {OP_CONV, F32, 3, 2, 4, 6, 2, 1, {3, 4, 5}, {2, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {0}, 1},
    {OP_DECONV, F32, 3, 1, 4, 4, 4, 1, {3, 3, 4}, {2, 2, 2}, {2, 1, 2}, {1, 1, 1}, {0, 1, 0}, {1, 0, 1}, 1},
    {OP_CONV_WGRAD, F64, 3, 2, 3, 3, 3, 1, {3, 4, 4}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}, {0}, 1},
    {OP_DECONV, F64, 2, 2, 4, 6, 2, 1, {5, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1},
};

static void run_all(void) {
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) run_case(&k_cases[i]);
}

static void test_threads_lowered_thresholds(void **state) {
  (void)state;
  const int64_t conv_min = mxw_conv_parallel_min_work, gemm_min = mxw_gemm_parallel_min_macs;
  mxw_conv_parallel_min_work = 1;
  mxw_gemm_parallel_min_macs = 1;
  run_all();
  mxw_conv_parallel_min_work = conv_min;
  mxw_gemm_parallel_min_macs = gemm_min;
}

static void test_threads_default_thresholds(void **state) {
  (void)state;
  run_all();
}

/* Random shapes over every op and path, thresholds lowered. */
static int rnd_int(int lo, int hi) { return lo + (int)((rnd() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1); }

static void test_threads_random(void **state) {
  (void)state;
  const int64_t conv_min = mxw_conv_parallel_min_work, gemm_min = mxw_gemm_parallel_min_macs;
  mxw_conv_parallel_min_work = 1;
  mxw_gemm_parallel_min_macs = 1;
  for (int iter = 0; iter < 60; iter++) {
    tcase k;
    memset(&k, 0, sizeof k);
    k.op = rnd_int(0, 3);
    k.dtype = rnd_int(0, 3) == 0 ? F64 : F32;
    k.nsp = iter % 6 == 0 ? 3 : iter % 4 == 0 ? 1 : 2;
    const int kind = rnd_int(0, 3); /* 0 depthwise, 1 few filters, 2 many filters, 3 grouped */
    k.G = kind == 3 ? rnd_int(2, 3) : 1;
    k.C = k.G * rnd_int(1, 5);
    k.F = kind == 2 ? rnd_int(33, 45) : k.G * rnd_int(1, 7);
    if (kind == 0) k.F = k.G = k.C;
    if (kind == 2 && k.F % k.G) k.F -= k.F % k.G;
    k.N = rnd_int(1, 4);
    k.bias = rnd_int(0, 1);
    const int deconv = k.op == OP_DECONV || k.op == OP_DECONV_WGRAD;
    for (int i = 0; i < k.nsp; i++) {
      k.k[i] = rnd_int(1, k.nsp == 3 ? 2 : 4);
      k.s[i] = rnd_int(1, 2);
      k.d[i] = rnd_int(1, 2);
      k.in[i] = rnd_int(2, k.nsp == 3 ? 5 : 14);
      const int dk = k.d[i] * (k.k[i] - 1) + 1;
      if (deconv) {
        k.adj[i] = rnd_int(0, k.s[i] - 1);
        k.p[i] = rnd_int(0, (k.s[i] * (k.in[i] - 1) + dk + k.adj[i] - 1) / 2);
      } else {
        if (k.in[i] < dk) k.in[i] = dk + rnd_int(0, 3);
        k.p[i] = rnd_int(0, k.k[i] / 2 + 1);
      }
    }
    k.chan_last = k.nsp > 1 && iter % 3 == 2;
    run_case(&k);
  }
  mxw_conv_parallel_min_work = conv_min;
  mxw_gemm_parallel_min_macs = gemm_min;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_lowered_thresholds),
      cmocka_unit_test(test_threads_default_thresholds),
      cmocka_unit_test(test_threads_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
