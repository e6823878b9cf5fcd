/* conv_kernels.h -- convolution microkernels and the threading knobs of the convolution ops
 * (csrc/ops/conv.c). The kernel layer: raw pointers and sizes, no attributes.
 */
#ifndef MXW_KERNELS_CONV_KERNELS_H_
#define MXW_KERNELS_CONV_KERNELS_H_

#include <stddef.h>
#include <stdint.h>

/* A convolution call is split across the thread pool only when it has at least this many
 * multiply-adds (a wake-up of the pool costs a few microseconds). Tests lower it to run the
 * threaded paths on small shapes; results never depend on it (every split is bit-identical). */
extern int64_t mxw_conv_parallel_min_work;

/* Depthwise 3x3 convolution of one channel plane (H, W) with pad 1 and stride 1 or 2 (dwconv.c):
 *   out[y][x] = bias + sum over i, j < 3 of w[3i + j] * in[s*y - 1 + i][s*x - 1 + j]  (0 outside),
 * out (Ho, Wo) with Ho = (H - 1) / s + 1, Wo = (W - 1) / s + 1. Any H, W >= 1. Every output is
 * the same sum in the same order whatever path computes it (bit-identical paths). */
void mxw_f32_dwconv3x3(size_t H, size_t W, int stride, const float *in, const float *w, float bias, float *out);
/* Its path, for tests: 0 chosen by shape, 1 vertical strips of 4, 2 strips of 8 (rows of 8 or
 * more outputs), 3 row pairs (rows up to 2048 wide). */
extern int mxw_dwconv3x3_path;

/* Channel-last depthwise convolution (dwconv.c), output rows [y0, y1) of one image:
 *   out[y][x][c] = bias[c] + sum over taps (i, j) inside the image of
 *                  wt[(i * kw + j) * C + c] * in[y*sh - ph + i*dh][x*sw - pw + j*dw][c]
 * in (H, W, C), out (Ho, Wo, C), wt (kh * kw, C), bias (C,) or NULL. */
typedef struct {
  size_t H, W, C, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw;
} mxw_dw_nhwc;
void mxw_f32_dwconv_nhwc(const mxw_dw_nhwc *g, size_t y0, size_t y1, const float *in, const float *wt,
                         const float *bias, float *out);

/* Winograd F(2x2, 3x3) transforms (winograd.c); xi = 0..15 indexes the 4x4 transformed cells.
 * filter: U[xi][f][c] (xi stride ldxi >= F * C) from w (F, C, 3, 3).
 * input:  V[xi][c][t] (xi stride ldxi >= C * ldv, c stride ldv) for the tiles t = r * tw + tx of tile rows
 *         ty0 .. ty0 + nty - 1, from `pad` (C planes of ph rows of pw, the input zero-padded so that
 *         tile (ty, tx) reads rows 2ty .. 2ty + 3 and columns 2tx .. 2tx + 3; pw >= 2 * (tw rounded
 *         up to 4) + 4, ph >= 2 * (ty0 + nty) + 2, cells past the image zero).
 * output: y[f] rows 2ty, 2ty + 1 (those < Ho) of (F, Ho, Wo) = A^T M[.][f][t] A + bias[f], from
 *         M[xi][f][t] (xi stride ldxi >= F * ldm, f stride ldm), with 3 readable floats past M's end.
 * A caller may transform a range of channels (filters) of a larger V (M) by passing its first
 * channel's (filter's) planes and the whole array's ldxi. */
void mxw_f32_winograd2x3_filter(size_t F, size_t C, const float *w, float *U, size_t ldxi);
void mxw_f32_winograd2x3_input(size_t C, const float *pad, size_t ph, size_t pw, size_t ty0, size_t nty, size_t tw,
                               float *V, size_t ldv, size_t ldxi);
void mxw_f32_winograd2x3_output(size_t F, const float *M, size_t ldm, size_t ldxi, size_t ty0, size_t nty, size_t tw,
                                const float *bias, float *y, size_t Ho, size_t Wo);

#endif /* MXW_KERNELS_CONV_KERNELS_H_ */
