/* vmath.c -- the array forms of vmath.h's lane functions (see the header). */
#include "vmath.h"

#include <string.h>

/* Four lanes at a time; the last 1-3 elements go through the same lane function on a padded
 * copy, so every element's result is the same wherever the call starts. */
#define VMATH_ARRAY(NAME, LANES)                                                     \
  void NAME(const float *x, float *y, int64_t n) {                                   \
    int64_t i = 0;                                                                   \
    for (; i + 8 <= n; i += 8) {                                                     \
      v128_t a = wasm_v128_load(x + i), b = wasm_v128_load(x + i + 4);               \
      wasm_v128_store(y + i, LANES(a));                                              \
      wasm_v128_store(y + i + 4, LANES(b));                                          \
    }                                                                                \
    for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, LANES(wasm_v128_load(x + i))); \
    if (i < n) {                                                                     \
      float t[4] = {0.f, 0.f, 0.f, 0.f};                                             \
      memcpy(t, x + i, (size_t)(n - i) * sizeof(float));                             \
      wasm_v128_store(t, LANES(wasm_v128_load(t)));                                  \
      memcpy(y + i, t, (size_t)(n - i) * sizeof(float));                             \
    }                                                                                \
  }

VMATH_ARRAY(mxw_vexp_f32, mxw_exp_f32x4)
VMATH_ARRAY(mxw_vsigmoid_f32, mxw_sigmoid_f32x4)
VMATH_ARRAY(mxw_vtanh_f32, mxw_tanh_f32x4)
VMATH_ARRAY(mxw_vrelu_f32, mxw_relu_f32x4)
VMATH_ARRAY(mxw_verf_f32, mxw_erf_f32x4)
VMATH_ARRAY(mxw_vlog_f32, mxw_log_f32x4)
VMATH_ARRAY(mxw_vexpm1_f32, mxw_expm1_f32x4)
VMATH_ARRAY(mxw_vlog1p_f32, mxw_log1p_f32x4)
VMATH_ARRAY(mxw_vsoftrelu_f32, mxw_softrelu_f32x4)
VMATH_ARRAY(mxw_vgelu_f32, mxw_gelu_f32x4)

void mxw_vgelu_grad_f32(const float *g, const float *x, float *d, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(d + i, wasm_f32x4_mul(wasm_v128_load(g + i), mxw_gelu_grad_f32x4(wasm_v128_load(x + i))));
  if (i < n) {
    float tg[4] = {0.f, 0.f, 0.f, 0.f}, tx[4] = {0.f, 0.f, 0.f, 0.f};
    memcpy(tg, g + i, (size_t)(n - i) * sizeof(float));
    memcpy(tx, x + i, (size_t)(n - i) * sizeof(float));
    wasm_v128_store(tg, wasm_f32x4_mul(wasm_v128_load(tg), mxw_gelu_grad_f32x4(wasm_v128_load(tx))));
    memcpy(d + i, tg, (size_t)(n - i) * sizeof(float));
  }
}

/* the same padded tail as VMATH_ARRAY, for lane functions with parameters */
#define VMATH_ARRAY_P(BODY)                            \
  int64_t i = 0;                                       \
  for (; i + 4 <= n; i += 4) {                         \
    const v128_t v = wasm_v128_load(x + i);            \
    wasm_v128_store(y + i, BODY);                      \
  }                                                    \
  if (i < n) {                                         \
    float t[4] = {0.f, 0.f, 0.f, 0.f};                 \
    memcpy(t, x + i, (size_t)(n - i) * sizeof(float)); \
    const v128_t v = wasm_v128_load(t);                \
    wasm_v128_store(t, BODY);                          \
    memcpy(y + i, t, (size_t)(n - i) * sizeof(float)); \
  }

void mxw_velu_f32(const float *x, float *y, int64_t n, float a) {
  const v128_t va = wasm_f32x4_splat(a), zero = wasm_f32x4_splat(0.f);
  VMATH_ARRAY_P(wasm_v128_bitselect(v, wasm_f32x4_mul(va, mxw_expm1_f32x4(v)), wasm_f32x4_gt(v, zero)))
}

void mxw_vselu_f32(const float *x, float *y, int64_t n, float lambda, float alpha) {
  const v128_t vl = wasm_f32x4_splat(lambda), va = wasm_f32x4_splat(alpha), zero = wasm_f32x4_splat(0.f);
  VMATH_ARRAY_P(
      wasm_f32x4_mul(vl, wasm_v128_bitselect(v, wasm_f32x4_mul(va, mxw_expm1_f32x4(v)), wasm_f32x4_gt(v, zero))))
}
