/* dtype.c -- MXNet's dtype flags: names, sizes, element access and conversion. */
#include <math.h>

#include "mxw_core.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <simde/wasm/simd128.h>
#endif

static const char *const k_names[MXW_NUM_DTYPES] = {"float32", "float64", "float16", "uint8", "int32",
                                                    "int8",    "int64",   "bool",    "int16", "uint16",
                                                    "uint32",  "uint64",  "bfloat16"};
static const int k_sizes[MXW_NUM_DTYPES] = {4, 8, 2, 1, 4, 1, 8, 1, 2, 2, 4, 8, 2};

int mxw_dtype_size(int dtype) { return dtype >= 0 && dtype < MXW_NUM_DTYPES ? k_sizes[dtype] : 0; }

const char *mxw_dtype_name(int dtype) { return dtype >= 0 && dtype < MXW_NUM_DTYPES ? k_names[dtype] : "unknown"; }

int mxw_dtype_from_name(const char *name) {
  for (int i = 0; i < MXW_NUM_DTYPES; i++)
    if (strcmp(name, k_names[i]) == 0) return i;
  if (strcmp(name, "bool_") == 0) return MXW_BOOL;
  return -1;
}

int mxw_dtype_is_float(int dtype) {
  return dtype == MXW_FLOAT32 || dtype == MXW_FLOAT64 || dtype == MXW_FLOAT16 || dtype == MXW_BFLOAT16;
}

/* IEEE binary16 <-> binary32, round to nearest even. */
float mxw_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: normalise */
      int e = -1;
      do {
        man <<= 1;
        e++;
      } while (!(man & 0x400));
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t mxw_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) /* inf or nan */
    return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 | ((absx >> 13) & 0x3ff) : 0));
  if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* overflow to inf */
  if (absx < 0x38800000u) {                                  /* subnormal or zero in half */
    if (absx < 0x33000000u) return (uint16_t)sign;
    uint32_t e = absx >> 23, m = (absx & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - e; /* 14..24 */
    uint32_t half = m >> shift, rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t h = ((absx >> 13) - ((127 - 15) << 10));
  uint32_t rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

/* The same conversions eight lanes at a time, bit for bit (float16 tensors go through float32
 * copies for most kernels, and Cast/amp_cast convert: 7.2 ns per element scalar, branchy). */
/* float32 -> float16 bits in the low half of each i32 lane: the four cases of mxw_float_to_half
 * computed for every lane, then selected by masks. The normal case rounds by adding 0xfff plus the
 * kept mantissa's lowest bit before the shift (a carry exactly when the rounding goes up); the
 * subnormal one lets the float addition to 0.5f round the mantissa at the half's last place (the
 * binade of 0.5 has the ulp 2^-24 of the smallest half subnormal), values below 2^-25 included. */
static v128_t f32x4_to_half_bits(v128_t x) {
  const v128_t absx = wasm_v128_and(x, wasm_i32x4_splat(0x7fffffff));
  const v128_t sign = wasm_v128_and(wasm_u32x4_shr(x, 16), wasm_i32x4_splat(0x8000));
  const v128_t inf = wasm_i32x4_splat(0x7f800000);
  /* NaN keeps its top payload bits, quiet; infinity and overflow give 0x7c00 */
  v128_t special = wasm_v128_or(
      wasm_i32x4_splat(0x7c00),
      wasm_v128_and(
          wasm_i32x4_gt(absx, inf),
          wasm_v128_or(wasm_i32x4_splat(0x200), wasm_v128_and(wasm_u32x4_shr(absx, 13), wasm_i32x4_splat(0x3ff)))));
  v128_t odd = wasm_v128_and(wasm_u32x4_shr(absx, 13), wasm_i32x4_splat(1));
  v128_t normal = wasm_u32x4_shr(
      wasm_i32x4_add(wasm_i32x4_add(absx, wasm_i32x4_splat((int32_t)(0u - (112u << 23)) + 0xfff)), odd), 13);
  v128_t sub = wasm_i32x4_sub(wasm_f32x4_add(absx, wasm_f32x4_splat(0.5f)), wasm_f32x4_splat(0.5f));
  v128_t r = wasm_v128_bitselect(sub, normal, wasm_i32x4_lt(absx, wasm_i32x4_splat(0x38800000)));
  r = wasm_v128_bitselect(special, r, wasm_i32x4_ge(absx, wasm_i32x4_splat(0x477ff000)));
  return wasm_v128_or(r, sign);
}
/* float16 bits (low half of each i32 lane) -> float32: the exponent rebiased, subnormals
 * normalised by a float subtraction (exact), infinities and NaN (payload kept) to exponent 255. */
static v128_t half_bits_to_f32x4(v128_t h) {
  const v128_t shifted = wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x7fff)), 13);
  const v128_t exp = wasm_v128_and(shifted, wasm_i32x4_splat(0x0f800000));
  v128_t o = wasm_i32x4_add(shifted, wasm_i32x4_splat(112 << 23));
  v128_t special = wasm_i32x4_add(o, wasm_i32x4_splat(112 << 23));
  v128_t sub = wasm_f32x4_sub(wasm_i32x4_add(o, wasm_i32x4_splat(1 << 23)), wasm_i32x4_splat(113 << 23));
  o = wasm_v128_bitselect(special, o, wasm_i32x4_eq(exp, wasm_i32x4_splat(0x0f800000)));
  o = wasm_v128_bitselect(sub, o, wasm_i32x4_eq(exp, wasm_i32x4_splat(0)));
  return wasm_v128_or(o, wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16));
}
/* In place (src == dst) works: each step's loads come before its stores, which stay below the
 * elements not loaded yet. */
static void float_to_half_array(const float *src, uint16_t *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v128_t lo = f32x4_to_half_bits(wasm_v128_load(src + i)), hi = f32x4_to_half_bits(wasm_v128_load(src + i + 4));
    wasm_v128_store(dst + i, wasm_u16x8_narrow_i32x4(lo, hi));
  }
  for (; i < n; i++) dst[i] = mxw_float_to_half(src[i]);
}
/* src and dst must not overlap (mxw_convert goes backwards by element when they do) */
static void half_to_float_array(const uint16_t *src, float *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v128_t h = wasm_v128_load(src + i);
    wasm_v128_store(dst + i, half_bits_to_f32x4(wasm_u32x4_extend_low_u16x8(h)));
    wasm_v128_store(dst + i + 4, half_bits_to_f32x4(wasm_u32x4_extend_high_u16x8(h)));
  }
  for (; i < n; i++) dst[i] = mxw_half_to_float(src[i]);
}

float mxw_bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t mxw_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet nan */
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

double mxw_load_f64(const void *data, int dtype, int64_t i) {
  switch (dtype) {
    case MXW_FLOAT32: return ((const float *)data)[i];
    case MXW_FLOAT64: return ((const double *)data)[i];
    case MXW_FLOAT16: return mxw_half_to_float(((const uint16_t *)data)[i]);
    case MXW_BFLOAT16: return mxw_bf16_to_float(((const uint16_t *)data)[i]);
    case MXW_UINT8:
    case MXW_BOOL: return ((const uint8_t *)data)[i];
    case MXW_INT8: return ((const int8_t *)data)[i];
    case MXW_INT32: return ((const int32_t *)data)[i];
    case MXW_INT64: return (double)((const int64_t *)data)[i];
    case MXW_INT16: return ((const int16_t *)data)[i];
    case MXW_UINT16: return ((const uint16_t *)data)[i];
    case MXW_UINT32: return ((const uint32_t *)data)[i];
    case MXW_UINT64: return (double)((const uint64_t *)data)[i];
    default: return 0.0;
  }
}

/* ---- MXNet's conversion rule ------------------------------------------------------------------
 * One rule for every conversion into an integer dtype (Cast, astype, nd.array(..., dtype), fills,
 * scalar operands, kernels computing through double): C's static_cast<DType>, as MXNet 1.9.1 (and
 * numpy's astype, which nd.array uses) compute it on x86-64, the platform of its releases:
 *  - integer -> integer keeps the low bits (two's complement wrap: int32 300 -> int8 44);
 *  - float -> integer truncates toward zero; a value out of range, or NaN, is undefined in C and
 *    x86-64 gives the "integer indefinite" of its cvtt instruction: INT32_MIN for the 32-bit
 *    conversion gcc uses for int32 and every narrower type (whose bits are then truncated:
 *    1e20 -> int8 0, 300.5 -> uint8 44, -1.5 -> uint8 255), INT64_MIN for the 64-bit one used
 *    for int64 and uint32; uint64 takes gcc's two-step sequence (values >= 2^63 are converted
 *    after subtracting 2^63);
 *  - anything -> bool is `!= 0` (NaN is true).
 * Written without undefined behaviour: every C conversion below is in range. */
static inline int32_t cvt_i32(double v) { return v > -2147483649.0 && v < 2147483648.0 ? (int32_t)v : INT32_MIN; }
static inline int64_t cvt_i64(double v) {
  return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}

static int is_int_dtype(int dtype) {
  return dtype == MXW_UINT8 || dtype == MXW_INT8 || dtype == MXW_INT32 || dtype == MXW_INT64 || dtype == MXW_INT16 ||
         dtype == MXW_UINT16 || dtype == MXW_UINT32 || dtype == MXW_UINT64;
}

/* The integer (or bool) element i as a two's complement 64-bit pattern (signed types sign-extend). */
static inline uint64_t load_bits(const void *data, int dtype, int64_t i) {
  switch (dtype) {
    case MXW_UINT8:
    case MXW_BOOL: return ((const uint8_t *)data)[i];
    case MXW_INT8: return (uint64_t)(int64_t)((const int8_t *)data)[i];
    case MXW_INT16: return (uint64_t)(int64_t)((const int16_t *)data)[i];
    case MXW_UINT16: return ((const uint16_t *)data)[i];
    case MXW_INT32: return (uint64_t)(int64_t)((const int32_t *)data)[i];
    case MXW_UINT32: return ((const uint32_t *)data)[i];
    case MXW_INT64: return (uint64_t)((const int64_t *)data)[i];
    case MXW_UINT64: return ((const uint64_t *)data)[i];
    default: return 0;
  }
}

/* Stores the low bits of u (bool: u != 0). The narrowing goes through the unsigned type of the same
 * width and a memcpy, so no signed conversion is out of range. */
static inline void store_bits(void *data, int dtype, int64_t i, uint64_t u) {
  switch (dtype) {
    case MXW_UINT8:
    case MXW_INT8: ((uint8_t *)data)[i] = (uint8_t)u; break;
    case MXW_BOOL: ((uint8_t *)data)[i] = u != 0; break;
    case MXW_INT16:
    case MXW_UINT16: ((uint16_t *)data)[i] = (uint16_t)u; break;
    case MXW_INT32:
    case MXW_UINT32: {
      uint32_t w = (uint32_t)u;
      memcpy((char *)data + 4 * i, &w, 4);
      break;
    }
    case MXW_INT64:
    case MXW_UINT64: memcpy((char *)data + 8 * i, &u, 8); break;
    default: break;
  }
}

/* static_cast<DType>(v) for an integer dtype, as x86-64 computes it (see above). */
static inline uint64_t f64_to_bits(double v, int dtype) {
  switch (dtype) {
    case MXW_INT64:
    case MXW_UINT32: return (uint64_t)cvt_i64(v);
    case MXW_UINT64:
      if (v >= 9223372036854775808.0) return (uint64_t)cvt_i64(v - 9223372036854775808.0) ^ (UINT64_C(1) << 63);
      return (uint64_t)cvt_i64(v);
    default: return (uint64_t)(int64_t)cvt_i32(v);
  }
}

void mxw_store_f64(void *data, int dtype, int64_t i, double v) {
  switch (dtype) {
    case MXW_FLOAT32: ((float *)data)[i] = (float)v; break;
    case MXW_FLOAT64: ((double *)data)[i] = v; break;
    case MXW_FLOAT16: ((uint16_t *)data)[i] = mxw_float_to_half((float)v); break;
    case MXW_BFLOAT16: ((uint16_t *)data)[i] = mxw_float_to_bf16((float)v); break;
    case MXW_BOOL: ((uint8_t *)data)[i] = v != 0.0; break;
    default:
      if (is_int_dtype(dtype)) store_bits(data, dtype, i, f64_to_bits(v, dtype));
      break;
  }
}

/* Integer element i converted to a float dtype as C does, from the integer itself (int64 -> float32
 * rounds once, not through double); float16 and bfloat16 through float, as mshadow's half_t. */
static inline void store_int_as_float(void *dst, int dst_dtype, int64_t i, uint64_t u, int unsigned_src) {
  if (dst_dtype == MXW_FLOAT64) {
    ((double *)dst)[i] = unsigned_src ? (double)u : (double)(int64_t)u;
    return;
  }
  float f = unsigned_src ? (float)u : (float)(int64_t)u;
  if (dst_dtype == MXW_FLOAT32)
    ((float *)dst)[i] = f;
  else if (dst_dtype == MXW_FLOAT16)
    ((uint16_t *)dst)[i] = mxw_float_to_half(f);
  else
    ((uint16_t *)dst)[i] = mxw_float_to_bf16(f);
}

static void convert_one(const void *src, int src_dtype, void *dst, int dst_dtype, int64_t i) {
  int src_int = is_int_dtype(src_dtype) || src_dtype == MXW_BOOL;
  if (src_int && (is_int_dtype(dst_dtype) || dst_dtype == MXW_BOOL)) {
    store_bits(dst, dst_dtype, i, load_bits(src, src_dtype, i));
  } else if (src_int) {
    int uns = src_dtype == MXW_UINT64; /* the only source whose pattern exceeds int64 */
    store_int_as_float(dst, dst_dtype, i, load_bits(src, src_dtype, i), uns);
  } else {
    mxw_store_f64(dst, dst_dtype, i, mxw_load_f64(src, src_dtype, i));
  }
}

void mxw_convert(const void *src, int src_dtype, void *dst, int dst_dtype, int64_t n) {
  if (src_dtype == dst_dtype) {
    if (src != dst) memmove(dst, src, (size_t)n * (size_t)mxw_dtype_size(src_dtype));
    return;
  }
  if (src_dtype == MXW_FLOAT32 && dst_dtype == MXW_FLOAT16) {
    float_to_half_array((const float *)src, (uint16_t *)dst, n);
    return;
  }
  const char *s0 = (const char *)src, *d0 = (const char *)dst;
  if (src_dtype == MXW_FLOAT16 && dst_dtype == MXW_FLOAT32 && (d0 >= s0 + 2 * n || s0 >= d0 + 4 * n)) {
    half_to_float_array((const uint16_t *)src, (float *)dst, n);
    return;
  }
  if (src_dtype == MXW_FLOAT32 && dst_dtype == MXW_INT32) {
    for (int64_t i = 0; i < n; i++) ((int32_t *)dst)[i] = cvt_i32(((const float *)src)[i]);
    return;
  }
  if (src_dtype == MXW_INT32 && dst_dtype == MXW_FLOAT32) {
    for (int64_t i = 0; i < n; i++) ((float *)dst)[i] = (float)((const int32_t *)src)[i];
    return;
  }
  /* Overlapping in-place conversion to a wider type would clobber: go backwards then. */
  if (mxw_dtype_size(dst_dtype) > mxw_dtype_size(src_dtype) && src == dst) {
    for (int64_t i = n - 1; i >= 0; i--) convert_one(src, src_dtype, dst, dst_dtype, i);
  } else {
    for (int64_t i = 0; i < n; i++) convert_one(src, src_dtype, dst, dst_dtype, i);
  }
}
