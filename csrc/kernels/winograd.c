/* winograd.c -- the transforms of Winograd's F(2x2, 3x3) convolution (Lavin & Gray 2015).
 *
 * A 3x3 stride-1 convolution computes each 2x2 output tile from a 4x4 input patch d with
 *   Y = A^T [ (G g G^T) (.) (B^T d B) ] A        ((.) elementwise, summed over input channels)
 *   B^T = | 1  0 -1  0 |    G = | 1    0    0  |    A^T = | 1  1  1  0 |
 *         | 0  1  1  0 |        | 1/2  1/2  1/2 |          | 0  1 -1 -1 |
 *         | 0 -1  1  0 |        | 1/2 -1/2  1/2 |
 *         | 0  1  0 -1 |        | 0    0    1  |
 * so that the 16 elementwise products summed over channels are 16 matrix products
 *   M[xi] (F, tiles) = U[xi] (F, C) * V[xi] (C, tiles),   U = G g G^T, V = B^T d B,
 * 4 multiply-adds per output and channel instead of 9. The op (conv.c) runs the products with
 * mxw_sgemm; this file holds the filter, input and output transforms. The input and output
 * transforms work on four tiles side by side (one f32x4 per patch cell), from an input plane
 * already zero-padded by the caller.
 */
#include "conv_kernels.h"

#include "../core/simd.h"

/* U[xi][f][c] = (G g G^T)[xi] for g = w[f][c]; four channels at a time (the 9 taps of 4 channels
 * are 36 consecutive floats, transposed to 9 vectors of 4 channels), so U is written in vectors
 * along c. (A scalar loop writing 16 strided streams made the transform of a 512x512x3x3 weight
 * cost more than the convolution it served.) */
void mxw_f32_winograd2x3_filter(size_t F, size_t C, const float *w, float *U, size_t ldxi) {
  const size_t FC = ldxi;
  const v128_t half = wasm_f32x4_splat(0.5f);
  for (size_t f = 0; f < F; f++) {
    size_t c = 0;
    for (; c + 4 <= C; c += 4) {
      const float *g4 = w + (f * C + c) * 9;
      v128_t r[12]; /* 36 floats + 12 unused lanes: r[k] holds floats 4k .. 4k + 3 */
      for (int k = 0; k < 9; k++) r[k] = wasm_v128_load(g4 + 4 * k);
      /* tap k of channel q is float 9q + k: gather into g[k] = (ch0, ch1, ch2, ch3) */
      float tmp[36];
      for (int k = 0; k < 9; k++) wasm_v128_store(tmp + 4 * k, r[k]);
      v128_t g[9];
      for (int k = 0; k < 9; k++) g[k] = wasm_f32x4_make(tmp[k], tmp[9 + k], tmp[18 + k], tmp[27 + k]);
      v128_t t[4][3]; /* G g */
      for (int j = 0; j < 3; j++) {
        const v128_t g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
        t[0][j] = g0;
        t[1][j] = wasm_f32x4_mul(half, wasm_f32x4_add(wasm_f32x4_add(g0, g1), g2));
        t[2][j] = wasm_f32x4_mul(half, wasm_f32x4_add(wasm_f32x4_sub(g0, g1), g2));
        t[3][j] = g2;
      }
      float *u = U + f * C + c;
      for (int i = 0; i < 4; i++) { /* (G g) G^T */
        const v128_t a = t[i][0], b = t[i][1], e = t[i][2];
        wasm_v128_store(u + (size_t)(i * 4 + 0) * FC, a);
        wasm_v128_store(u + (size_t)(i * 4 + 1) * FC, wasm_f32x4_mul(half, wasm_f32x4_add(wasm_f32x4_add(a, b), e)));
        wasm_v128_store(u + (size_t)(i * 4 + 2) * FC, wasm_f32x4_mul(half, wasm_f32x4_add(wasm_f32x4_sub(a, b), e)));
        wasm_v128_store(u + (size_t)(i * 4 + 3) * FC, e);
      }
    }
    for (; c < C; c++) {
      const float *g = w + (f * C + c) * 9;
      float t[4][3];
      for (int j = 0; j < 3; j++) {
        const float g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
        t[0][j] = g0;
        t[1][j] = 0.5f * ((g0 + g1) + g2);
        t[2][j] = 0.5f * ((g0 - g1) + g2);
        t[3][j] = g2;
      }
      float *u = U + f * C + c;
      for (int i = 0; i < 4; i++) {
        const float a = t[i][0], b = t[i][1], e = t[i][2];
        u[(size_t)(i * 4 + 0) * FC] = a;
        u[(size_t)(i * 4 + 1) * FC] = 0.5f * ((a + b) + e);
        u[(size_t)(i * 4 + 2) * FC] = 0.5f * ((a - b) + e);
        u[(size_t)(i * 4 + 3) * FC] = e;
      }
    }
  }
}

/* lanes [0, n) of v into p[0], p[step], ... (a partial group of tiles) */
static inline void store_lanes(float *p, v128_t v, size_t n) {
  float tmp[4];
  wasm_v128_store(tmp, v);
  for (size_t i = 0; i < n; i++) p[i] = tmp[i];
}

void mxw_f32_winograd2x3_input(size_t C, const float *pad, size_t ph, size_t pw, size_t ty0, size_t nty, size_t tw,
                               float *V, size_t ldv, size_t ldxi) {
  for (size_t c = 0; c < C; c++) {
    const float *plane = pad + c * ph * pw;
    for (size_t r = 0; r < nty; r++) {
      const float *top = plane + 2 * (ty0 + r) * pw;
      for (size_t tx = 0; tx < tw; tx += 4) {
        v128_t d[4][4];
        for (int i = 0; i < 4; i++) {
          const float *row = top + (size_t)i * pw + 2 * tx;
          const v128_t a = wasm_v128_load(row), b = wasm_v128_load(row + 4), e = wasm_v128_load(row + 8);
          d[i][0] = wasm_i32x4_shuffle(a, b, 0, 2, 4, 6);
          d[i][1] = wasm_i32x4_shuffle(a, b, 1, 3, 5, 7);
          d[i][2] = wasm_i32x4_shuffle(d[i][0], e, 1, 2, 3, 4);
          d[i][3] = wasm_i32x4_shuffle(d[i][1], e, 1, 2, 3, 5);
        }
        v128_t t[4][4];
        for (int j = 0; j < 4; j++) { /* B^T d */
          t[0][j] = wasm_f32x4_sub(d[0][j], d[2][j]);
          t[1][j] = wasm_f32x4_add(d[1][j], d[2][j]);
          t[2][j] = wasm_f32x4_sub(d[2][j], d[1][j]);
          t[3][j] = wasm_f32x4_sub(d[1][j], d[3][j]);
        }
        const size_t n = tw - tx < 4 ? tw - tx : 4;
        float *v = V + c * ldv + r * tw + tx;
        for (int i = 0; i < 4; i++) { /* (B^T d) B */
          const v128_t v0 = wasm_f32x4_sub(t[i][0], t[i][2]), v1 = wasm_f32x4_add(t[i][1], t[i][2]);
          const v128_t v2 = wasm_f32x4_sub(t[i][2], t[i][1]), v3 = wasm_f32x4_sub(t[i][1], t[i][3]);
          float *o = v + (size_t)(i * 4) * ldxi;
          if (n == 4) {
            wasm_v128_store(o, v0);
            wasm_v128_store(o + ldxi, v1);
            wasm_v128_store(o + 2 * ldxi, v2);
            wasm_v128_store(o + 3 * ldxi, v3);
          } else {
            store_lanes(o, v0, n);
            store_lanes(o + ldxi, v1, n);
            store_lanes(o + 2 * ldxi, v2, n);
            store_lanes(o + 3 * ldxi, v3, n);
          }
        }
      }
    }
  }
}

void mxw_f32_winograd2x3_output(size_t F, const float *M, size_t ldm, size_t ldxi, size_t ty0, size_t nty, size_t tw,
                                const float *bias, float *y, size_t Ho, size_t Wo) {
  for (size_t f = 0; f < F; f++) {
    const v128_t vb = wasm_f32x4_splat(bias ? bias[f] : 0.f);
    float *plane = y + f * Ho * Wo;
    for (size_t r = 0; r < nty; r++) {
      const size_t oy = 2 * (ty0 + r);
      for (size_t tx = 0; tx < tw; tx += 4) {
        const float *m = M + f * ldm + r * tw + tx;
        const size_t xi = ldxi; /* stride between the 16 products */
        v128_t s0[4], s1[4];
        for (int j = 0; j < 4; j++) { /* A^T m */
          const v128_t m0 = wasm_v128_load(m + (size_t)j * xi), m1 = wasm_v128_load(m + (size_t)(4 + j) * xi);
          const v128_t m2 = wasm_v128_load(m + (size_t)(8 + j) * xi), m3 = wasm_v128_load(m + (size_t)(12 + j) * xi);
          s0[j] = wasm_f32x4_add(wasm_f32x4_add(m0, m1), m2);
          s1[j] = wasm_f32x4_sub(wasm_f32x4_sub(m1, m2), m3);
        }
        /* (A^T m) A, plus the bias: y_ab for tiles tx..tx+3 */
        const v128_t y00 = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(s0[0], s0[1]), s0[2]), vb);
        const v128_t y01 = wasm_f32x4_add(wasm_f32x4_sub(wasm_f32x4_sub(s0[1], s0[2]), s0[3]), vb);
        const v128_t y10 = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(s1[0], s1[1]), s1[2]), vb);
        const v128_t y11 = wasm_f32x4_add(wasm_f32x4_sub(wasm_f32x4_sub(s1[1], s1[2]), s1[3]), vb);
        /* output columns 2tx .. 2tx + 7 of rows oy and oy + 1 */
        const v128_t r0lo = wasm_i32x4_shuffle(y00, y01, 0, 4, 1, 5), r0hi = wasm_i32x4_shuffle(y00, y01, 2, 6, 3, 7);
        const v128_t r1lo = wasm_i32x4_shuffle(y10, y11, 0, 4, 1, 5), r1hi = wasm_i32x4_shuffle(y10, y11, 2, 6, 3, 7);
        const size_t ox = 2 * tx, ncol = Wo - ox < 8 ? Wo - ox : 8;
        float *o0 = plane + oy * Wo + ox;
        if (ncol == 8) {
          wasm_v128_store(o0, r0lo);
          wasm_v128_store(o0 + 4, r0hi);
          if (oy + 1 < Ho) {
            wasm_v128_store(o0 + Wo, r1lo);
            wasm_v128_store(o0 + Wo + 4, r1hi);
          }
        } else {
          float tmp[2][8];
          wasm_v128_store(tmp[0], r0lo);
          wasm_v128_store(tmp[0] + 4, r0hi);
          wasm_v128_store(tmp[1], r1lo);
          wasm_v128_store(tmp[1] + 4, r1hi);
          for (size_t k = 0; k < ncol; k++) o0[k] = tmp[0][k];
          if (oy + 1 < Ho)
            for (size_t k = 0; k < ncol; k++) o0[Wo + k] = tmp[1][k];
        }
      }
    }
  }
}
