/* elemwise_binary.c -- elementwise binary math in its three MXNet forms, plus add_n:
 *   broadcast_<op>(lhs, rhs)   NumPy broadcasting            (broadcast_add, ..., _npi_add, ...)
 *   elemwise/_<op>(lhs, rhs)   identical shapes              (elemwise_add, _power, _equal, ...)
 *   _<op>_scalar(data)         data op DType(scalar), or the reverse for _r*_scalar
 *   add_n(args...)             the sum of N same-shape arrays (alias ElementWiseSum)
 * Semantics: ../shared/spec/ops.md §5. Every output has the input dtype (comparisons give 1/0).
 *
 * Layers, bottom up:
 *  1. The per-element math, written once per op for four compute types: float (float32),
 *     double (float64, and float16/bfloat16 through double), int64_t (every signed integer
 *     dtype) and uint64_t (every unsigned dtype and bool).
 *  2. Row kernels: out[i] = op(a[i*sa], b[i*sb]) with sa, sb in {0, 1}, one per op and compute
 *     type, generated from (1). float32 add/sub/mul/div/maximum/minimum have a wasm SIMD body.
 *  3. run_row(): calls the row kernel of a dtype directly when the dtype is a compute type,
 *     else converts blocks of the row to the compute type and back.
 *  4. binary_apply(): the broadcast plan. Output dims of size 1 are dropped and adjacent dims
 *     whose strides chain are merged in both inputs, which leaves the innermost dim with input
 *     strides 0 or 1. So the fast paths are not special cases: same shape becomes one flat row,
 *     array-op-scalar one row with stride 0, (N,C)+(C,) N rows, (N,C,H,W)+(1,C,1,1) N*C rows
 *     with a splatted rhs; anything else walks the outer dims with an odometer. Large calls
 *     split the output's flat element range over the thread pool (every element is computed
 *     the same way in any chunk, so results do not depend on the thread count).
 *  5. Shape inference, forwards and the op definitions.
 */
#include <math.h>
#include <stdio.h>
#include <stdint.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <simde/wasm/simd128.h>
#endif

#include "../core/mxw_parallel.h"

/* ---- 1. the per-element math ---------------------------------------------------------------- */
/* Integer results that come from double math (power, hypot) saturate instead of overflowing the
 * conversion (which would be undefined behaviour); NaN becomes 0. */
static inline int64_t sat_i64(double v) {
  if (!(v == v)) return 0;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  return (int64_t)v;
}
static inline uint64_t sat_u64(double v) {
  if (!(v > 0)) return 0;
  if (v >= 18446744073709551615.0) return UINT64_MAX;
  return (uint64_t)v;
}

/* Signed integer arithmetic wraps (two's complement) as the hardware does, without the undefined
 * behaviour of signed overflow in C. */
static inline int64_t add_i(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t sub_i(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t mul_i(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static inline float add_f(float a, float b) { return a + b; }
static inline double add_d(double a, double b) { return a + b; }
static inline uint64_t add_u(uint64_t a, uint64_t b) { return a + b; }
static inline float sub_f(float a, float b) { return a - b; }
static inline double sub_d(double a, double b) { return a - b; }
static inline uint64_t sub_u(uint64_t a, uint64_t b) { return a - b; }
static inline float mul_f(float a, float b) { return a * b; }
static inline double mul_d(double a, double b) { return a * b; }
static inline uint64_t mul_u(uint64_t a, uint64_t b) { return a * b; }

/* Division: integer division truncates toward zero; dividing by zero gives 0 instead of trapping
 * (MXNet would crash), and INT_MIN / -1 wraps. */
static inline float div_f(float a, float b) { return a / b; }
static inline double div_d(double a, double b) { return a / b; }
static inline int64_t div_i(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return sub_i(0, a);
  return a / b;
}
static inline uint64_t div_u(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }

/* mshadow's mod: the result takes the sign of the divisor (Python's %), anything mod 0 is 0.
 * Floats go through double as MXNet does; the branches keep MXNet's signs of zero results. */
static inline double mod_d(double a, double b) {
  if (b == 0) return 0.0;
  if (b < 0) {
    if (a < 0) return -fmod(-a, -b);
    double r = fmod(a, -b);
    return r + (r != 0 ? b : 0.0);
  }
  if (a < 0) {
    double r = fmod(-a, b);
    return -r + (r != 0 ? b : 0.0);
  }
  return fmod(a, b);
}
static inline float mod_f(float a, float b) { return (float)mod_d(a, b); }
/* Exact for every int64 (MXNet's double round trip loses bits above 2^53). */
static inline int64_t mod_i(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0; /* x % -1 is 0, and INT64_MIN % -1 would trap */
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static inline uint64_t mod_u(uint64_t a, uint64_t b) { return b == 0 ? 0 : a % b; }

static inline float power_f(float a, float b) { return powf(a, b); }
static inline float power_f_any(float a, float b) { return powf(a, b); }
static inline double power_d(double a, double b) { return pow(a, b); }
static inline int64_t power_i(int64_t a, int64_t b) { return sat_i64(pow((double)a, (double)b)); }
static inline uint64_t power_u(uint64_t a, uint64_t b) { return sat_u64(pow((double)a, (double)b)); }

/* mshadow_op::smooth_l1_loss, b the scalar sigma: 0.5 (b a)^2 where |a| < 1 / b^2, else |a| - 0.5 / b^2
 * (in float for float32, with MXNet's operation order). */
static inline float smooth_l1_f(float a, float b) {
  const float bsq = b * b, ibsq = 1.0f / bsq;
  return a > ibsq ? a - 0.5f * ibsq : (a < -ibsq ? -a - 0.5f * ibsq : 0.5f * a * a * bsq);
}
static inline double smooth_l1_d(double a, double b) {
  const double bsq = b * b, ibsq = 1.0 / bsq;
  return a > ibsq ? a - 0.5 * ibsq : (a < -ibsq ? -a - 0.5 * ibsq : 0.5 * a * a * bsq);
}
static inline int64_t smooth_l1_i(int64_t a, int64_t b) { return sat_i64(smooth_l1_d((double)a, (double)b)); }
static inline uint64_t smooth_l1_u(uint64_t a, uint64_t b) { return sat_u64(smooth_l1_d((double)a, (double)b)); }

static inline float hypot_f(float a, float b) { return hypotf(a, b); }
static inline double hypot_d(double a, double b) { return hypot(a, b); }
static inline int64_t hypot_i(int64_t a, int64_t b) { return sat_i64(hypot((double)a, (double)b)); }
static inline uint64_t hypot_u(uint64_t a, uint64_t b) { return sat_u64(hypot((double)a, (double)b)); }

/* mshadow_op::maximum/minimum: `a > b ? a : b`, except that a NaN lhs is returned as is, so a
 * NaN on either side gives NaN. */
static inline float maximum_f(float a, float b) { return a != a ? a : (a > b ? a : b); }
static inline double maximum_d(double a, double b) { return a != a ? a : (a > b ? a : b); }
static inline int64_t maximum_i(int64_t a, int64_t b) { return a > b ? a : b; }
static inline uint64_t maximum_u(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline float minimum_f(float a, float b) { return a != a ? a : (a < b ? a : b); }
static inline double minimum_d(double a, double b) { return a != a ? a : (a < b ? a : b); }
static inline int64_t minimum_i(int64_t a, int64_t b) { return a < b ? a : b; }
static inline uint64_t minimum_u(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Comparisons and logic: 1 or 0 in the compute type. The same expression for every type. */
#define MATH_ANY_TYPE(NAME, EXPR)                                                  \
  static inline float NAME##_f(float a, float b) { return (float)(EXPR); }         \
  static inline double NAME##_d(double a, double b) { return (double)(EXPR); }     \
  static inline int64_t NAME##_i(int64_t a, int64_t b) { return (int64_t)(EXPR); } \
  static inline uint64_t NAME##_u(uint64_t a, uint64_t b) { return (uint64_t)(EXPR); }
MATH_ANY_TYPE(equal, a == b)
MATH_ANY_TYPE(not_equal, a != b)
MATH_ANY_TYPE(greater, a > b)
MATH_ANY_TYPE(greater_equal, a >= b)
MATH_ANY_TYPE(lesser, a < b)
MATH_ANY_TYPE(lesser_equal, a <= b)
MATH_ANY_TYPE(logical_and, a != 0 && b != 0)
MATH_ANY_TYPE(logical_or, a != 0 || b != 0)
MATH_ANY_TYPE(logical_xor, (a != 0) != (b != 0))

/* Every op of the family, as X(math, float32 SIMD body or NONE). The SIMD bodies are
 * expressions in the vectors `va`, `vb` that must equal the scalar math bit for bit. */
#define SIMD_add wasm_f32x4_add(va, vb)
#define SIMD_sub wasm_f32x4_sub(va, vb)
#define SIMD_mul wasm_f32x4_mul(va, vb)
#define SIMD_div wasm_f32x4_div(va, vb)
/* pmax(vb, va) is `va > vb ? va : vb` exactly; then a NaN lhs wins, as in maximum_f. */
#define SIMD_maximum wasm_v128_bitselect(va, wasm_f32x4_pmax(vb, va), wasm_f32x4_ne(va, va))
#define SIMD_minimum wasm_v128_bitselect(va, wasm_f32x4_pmin(vb, va), wasm_f32x4_ne(va, va))

/* Comparisons and logic: a lane mask and'ed with 1.0f (a NaN compares as C compares it). As scalar
 * code they would be float selects, which V8 compiles to branches: ~4.5 ns per element on random
 * data against ~0.3. */
#define F32X4_ONE wasm_f32x4_splat(1.f)
#define F32X4_NZ(v) wasm_f32x4_ne((v), wasm_f32x4_splat(0.f))
#define SIMD_equal wasm_v128_and(wasm_f32x4_eq(va, vb), F32X4_ONE)
#define SIMD_not_equal wasm_v128_and(wasm_f32x4_ne(va, vb), F32X4_ONE)
#define SIMD_greater wasm_v128_and(wasm_f32x4_gt(va, vb), F32X4_ONE)
#define SIMD_greater_equal wasm_v128_and(wasm_f32x4_ge(va, vb), F32X4_ONE)
#define SIMD_lesser wasm_v128_and(wasm_f32x4_lt(va, vb), F32X4_ONE)
#define SIMD_lesser_equal wasm_v128_and(wasm_f32x4_le(va, vb), F32X4_ONE)
#define SIMD_logical_and wasm_v128_and(wasm_v128_and(F32X4_NZ(va), F32X4_NZ(vb)), F32X4_ONE)
#define SIMD_logical_or wasm_v128_and(wasm_v128_or(F32X4_NZ(va), F32X4_NZ(vb)), F32X4_ONE)
#define SIMD_logical_xor wasm_v128_and(wasm_v128_xor(F32X4_NZ(va), F32X4_NZ(vb)), F32X4_ONE)

#define BINARY_MATH_SIMD(X) \
  X(add)                    \
  X(sub)                    \
  X(mul)                    \
  X(div)                    \
  X(maximum)                \
  X(minimum)                \
  X(equal)                  \
  X(not_equal) X(greater) X(greater_equal) X(lesser) X(lesser_equal) X(logical_and) X(logical_or) X(logical_xor)
#define BINARY_MATH_SCALAR(X) X(mod) X(hypot) X(smooth_l1)

/* ---- 2. row kernels --------------------------------------------------------------------------- */
/* o[i] = f(a[i*sa], b[i*sb]) for i < n, sa and sb in {0, 1}. Four loops so that each one is a
 * plain loop the compiler can vectorise; o may equal a (add_n accumulates in place), so no
 * `restrict`. */
#define ROW_KERNEL(NAME, SUF, T)                                                            \
  static void row_##NAME##_##SUF(const T *a, int sa, const T *b, int sb, T *o, int64_t n) { \
    size_t len = (size_t)n;                                                                 \
    if (sa && sb) {                                                                         \
      for (size_t i = 0; i < len; i++) o[i] = NAME##_##SUF(a[i], b[i]);                     \
    } else if (sa) {                                                                        \
      const T bv = b[0];                                                                    \
      for (size_t i = 0; i < len; i++) o[i] = NAME##_##SUF(a[i], bv);                       \
    } else if (sb) {                                                                        \
      const T av = a[0];                                                                    \
      for (size_t i = 0; i < len; i++) o[i] = NAME##_##SUF(av, b[i]);                       \
    } else {                                                                                \
      const T v = NAME##_##SUF(a[0], b[0]);                                                 \
      for (size_t i = 0; i < len; i++) o[i] = v;                                            \
    }                                                                                       \
  }

/* float32 with a SIMD body: 4 lanes at a time, the scalar math for the tail (and for sa = sb = 0). */
#define ROW_KERNEL_F32_SIMD(NAME)                                                                   \
  static void row_##NAME##_f(const float *a, int sa, const float *b, int sb, float *o, int64_t n) { \
    size_t len = (size_t)n, i = 0;                                                                  \
    if (sa && sb) {                                                                                 \
      for (; i + 4 <= len; i += 4) {                                                                \
        v128_t va = wasm_v128_load(a + i), vb = wasm_v128_load(b + i);                              \
        wasm_v128_store(o + i, SIMD_##NAME);                                                        \
      }                                                                                             \
    } else if (sa) {                                                                                \
      const v128_t vb = wasm_f32x4_splat(b[0]);                                                     \
      for (; i + 4 <= len; i += 4) {                                                                \
        v128_t va = wasm_v128_load(a + i);                                                          \
        wasm_v128_store(o + i, SIMD_##NAME);                                                        \
      }                                                                                             \
    } else if (sb) {                                                                                \
      const v128_t va = wasm_f32x4_splat(a[0]);                                                     \
      for (; i + 4 <= len; i += 4) {                                                                \
        v128_t vb = wasm_v128_load(b + i);                                                          \
        wasm_v128_store(o + i, SIMD_##NAME);                                                        \
      }                                                                                             \
    }                                                                                               \
    for (; i < len; i++) o[i] = NAME##_f(a[sa ? i : 0], b[sb ? i : 0]);                             \
  }

typedef void (*row_f32)(const float *, int, const float *, int, float *, int64_t);
typedef void (*row_f64)(const double *, int, const double *, int, double *, int64_t);
typedef void (*row_i64)(const int64_t *, int, const int64_t *, int, int64_t *, int64_t);
typedef void (*row_u64)(const uint64_t *, int, const uint64_t *, int, uint64_t *, int64_t);

/* One op's row kernels, one per compute type. */
typedef struct binary_kernels {
  row_f32 f;
  row_f64 d;
  row_i64 i;
  row_u64 u;
  double cost; /* element-ops per float32 element (mxw_parallel.h) */
} binary_kernels;

/* Per-element costs, for splitting large calls over the thread pool. */
#define COST_add MXW_COST_CHEAP
#define COST_sub MXW_COST_CHEAP
#define COST_mul MXW_COST_CHEAP
#define COST_div MXW_COST_DIV
#define COST_maximum MXW_COST_CHEAP
#define COST_minimum MXW_COST_CHEAP
#define COST_mod MXW_COST_MATH
#define COST_power MXW_COST_MATH
#define COST_hypot MXW_COST_MATH
#define COST_smooth_l1 MXW_COST_DIV
#define COST_equal MXW_COST_CHEAP
#define COST_not_equal MXW_COST_CHEAP
#define COST_greater MXW_COST_CHEAP
#define COST_greater_equal MXW_COST_CHEAP
#define COST_lesser MXW_COST_CHEAP
#define COST_lesser_equal MXW_COST_CHEAP
#define COST_logical_and MXW_COST_CHEAP
#define COST_logical_or MXW_COST_CHEAP
#define COST_logical_xor MXW_COST_CHEAP

#define DEFINE_WIDE_KERNELS(NAME) \
  ROW_KERNEL(NAME, d, double)     \
  ROW_KERNEL(NAME, i, int64_t)    \
  ROW_KERNEL(NAME, u, uint64_t)   \
  static const binary_kernels k_##NAME = {row_##NAME##_f, row_##NAME##_d, row_##NAME##_i, row_##NAME##_u, COST_##NAME};
#define DEFINE_KERNELS_SIMD(NAME) ROW_KERNEL_F32_SIMD(NAME) DEFINE_WIDE_KERNELS(NAME)
#define DEFINE_KERNELS_SCALAR(NAME) ROW_KERNEL(NAME, f, float) DEFINE_WIDE_KERNELS(NAME)

BINARY_MATH_SIMD(DEFINE_KERNELS_SIMD)
BINARY_MATH_SCALAR(DEFINE_KERNELS_SCALAR)

/* power: powf per element (a libm call, ~11 ns in V8), except x ^ 2 with the exponent a scalar
 * (`x ** 2`, _power_scalar 2): x * x, which is pow's correctly rounded result. */
ROW_KERNEL(power, f_any, float)
static void row_power_f(const float *a, int sa, const float *b, int sb, float *o, int64_t n) {
  if (sa && !sb && b[0] == 2.f) {
    for (int64_t i = 0; i < n; i++) o[i] = a[i] * a[i];
    return;
  }
  row_power_f_any(a, sa, b, sb, o, n);
}
DEFINE_WIDE_KERNELS(power)

/* ---- 3. running one row in any dtype ------------------------------------------------------------ */
/* Dtypes that are not a compute type go through blocks of this many elements on the stack. */
#define BLOCK 256

typedef union block {
  float f[BLOCK];
  double d[BLOCK];
  int64_t i[BLOCK];
  uint64_t u[BLOCK];
} block;

enum { CLS_F32, CLS_F64, CLS_I64, CLS_U64 };
static int compute_class(int dtype) {
  switch (dtype) {
    case MXW_FLOAT32: return CLS_F32;
    case MXW_INT8:
    case MXW_INT16:
    case MXW_INT32:
    case MXW_INT64: return CLS_I64;
    case MXW_UINT8:
    case MXW_UINT16:
    case MXW_UINT32:
    case MXW_UINT64:
    case MXW_BOOL: return CLS_U64;
    case MXW_FLOAT16:
    case MXW_BFLOAT16: return CLS_F32; /* as MXNet's half_t arithmetic: in float */
    default: return CLS_F64;
  }
}

/* Elements [off, off + m) of src (dtype, not a compute type) into the block's compute type. */
static void load_block(const void *src, int dtype, int64_t off, int64_t m, block *dst) {
#define LOAD(T, FIELD)                                                       \
  for (int64_t j = 0; j < m; j++) dst->FIELD[j] = ((const T *)src)[off + j]; \
  break;
  switch (dtype) {
    case MXW_INT8: LOAD(int8_t, i)
    case MXW_INT16: LOAD(int16_t, i)
    case MXW_INT32: LOAD(int32_t, i)
    case MXW_UINT8:
    case MXW_BOOL: LOAD(uint8_t, u)
    case MXW_UINT16: LOAD(uint16_t, u)
    case MXW_UINT32: LOAD(uint32_t, u)
    default: /* float16, bfloat16: widened to float32 (eight lanes at a time: mxw_convert) */
      mxw_convert((const uint16_t *)src + off, dtype, dst->f, MXW_FLOAT32, m);
  }
#undef LOAD
}

/* The inverse of load_block. Integers narrow by wrapping (C's conversion as DType(x)); bool
 * stores x != 0 as C++'s bool(x) does. */
static void store_block(void *dst, int dtype, int64_t off, int64_t m, const block *src) {
#define STORE(T, FIELD)                                                   \
  for (int64_t j = 0; j < m; j++) ((T *)dst)[off + j] = (T)src->FIELD[j]; \
  break;
  switch (dtype) {
    case MXW_INT8: STORE(int8_t, i)
    case MXW_INT16: STORE(int16_t, i)
    case MXW_INT32: STORE(int32_t, i)
    case MXW_UINT8: STORE(uint8_t, u)
    case MXW_UINT16: STORE(uint16_t, u)
    case MXW_UINT32: STORE(uint32_t, u)
    case MXW_BOOL:
      for (int64_t j = 0; j < m; j++) ((uint8_t *)dst)[off + j] = src->u[j] != 0;
      break;
    default: /* float16, bfloat16 from float32 */ mxw_convert(src->f, MXW_FLOAT32, (uint16_t *)dst + off, dtype, m);
  }
#undef STORE
}

/* o[i] = op(a[i*sa], b[i*sb]) for i < n, in dtype. */
static void run_row(const binary_kernels *k, int dtype, const void *a, int sa, const void *b, int sb, void *o,
                    int64_t n) {
  switch (dtype) {
    case MXW_FLOAT32: k->f((const float *)a, sa, (const float *)b, sb, (float *)o, n); return;
    case MXW_FLOAT64: k->d((const double *)a, sa, (const double *)b, sb, (double *)o, n); return;
    case MXW_INT64: k->i((const int64_t *)a, sa, (const int64_t *)b, sb, (int64_t *)o, n); return;
    case MXW_UINT64: k->u((const uint64_t *)a, sa, (const uint64_t *)b, sb, (uint64_t *)o, n); return;
    default: break;
  }
  int cls = compute_class(dtype);
  block ba, bb, bo;
  for (int64_t start = 0; start < n; start += BLOCK) {
    int64_t m = n - start < BLOCK ? n - start : BLOCK;
    load_block(a, dtype, sa ? start : 0, sa ? m : 1, &ba);
    load_block(b, dtype, sb ? start : 0, sb ? m : 1, &bb);
    if (cls == CLS_I64)
      k->i(ba.i, sa, bb.i, sb, bo.i, m);
    else if (cls == CLS_U64)
      k->u(ba.u, sa, bb.u, sb, bo.u, m);
    else if (cls == CLS_F32)
      k->f(ba.f, sa, bb.f, sb, bo.f, m);
    else
      k->d(ba.d, sa, bb.d, sb, bo.d, m);
    store_block(o, dtype, start, m, &bo);
  }
}

/* ---- 4. the broadcast plan ------------------------------------------------------------------------ */
/* Output dims (outermost first) with the element strides of each input, 0 where it broadcasts. */
typedef struct bcast_plan {
  int ndim; /* >= 1 */
  int64_t dims[MXW_MAX_NDIM];
  int64_t sa[MXW_MAX_NDIM], sb[MXW_MAX_NDIM];
} bcast_plan;

/* Shapes are aligned at the right; out is the broadcast shape (already validated). */
static void plan_broadcast(const mxw_shape *ls, const mxw_shape *rs, const mxw_shape *os, bcast_plan *p) {
  int64_t dims[MXW_MAX_NDIM], sa[MXW_MAX_NDIM], sb[MXW_MAX_NDIM]; /* innermost first */
  int n = 0;
  int64_t stride_l = 1, stride_r = 1;
  for (int d = os->ndim - 1; d >= 0; d--) {
    int li = d - (os->ndim - ls->ndim), ri = d - (os->ndim - rs->ndim);
    int64_t od = os->dims[d], ld = li >= 0 ? ls->dims[li] : 1, rd = ri >= 0 ? rs->dims[ri] : 1;
    if (od != 1) {
      int64_t s_l = ld == 1 ? 0 : stride_l, s_r = rd == 1 ? 0 : stride_r;
      /* Merge into the next-inner dim when both inputs continue its stride pattern. */
      if (n > 0 && s_l == sa[n - 1] * dims[n - 1] && s_r == sb[n - 1] * dims[n - 1]) {
        dims[n - 1] *= od;
      } else {
        dims[n] = od;
        sa[n] = s_l;
        sb[n] = s_r;
        n++;
      }
    }
    stride_l *= ld;
    stride_r *= rd;
  }
  if (n == 0) { /* every dim is 1: one element */
    dims[0] = 1;
    sa[0] = sb[0] = 0;
    n = 1;
  }
  p->ndim = n;
  for (int i = 0; i < n; i++) {
    p->dims[i] = dims[n - 1 - i];
    p->sa[i] = sa[n - 1 - i];
    p->sb[i] = sb[n - 1 - i];
  }
}

/* One call's plan and operands. */
typedef struct binary_job {
  const binary_kernels *k;
  bcast_plan p;
  int dtype;
  size_t es;
  const char *a, *b;
  char *o;
} binary_job;

/* Output elements [begin, end): rows of the innermost dim (the first and last may be partial),
 * the outer dims walked by an odometer started at begin's row. */
static void binary_range(const binary_job *j, int64_t begin, int64_t end) {
  const bcast_plan *p = &j->p;
  const int last = p->ndim - 1;
  const int64_t inner = p->dims[last];
  const int ia = p->sa[last] != 0, ib = p->sb[last] != 0; /* the innermost strides are 0 or 1 */
  int64_t idx[MXW_MAX_NDIM] = {0};
  int64_t off_a = 0, off_b = 0, row = begin / inner, col = begin % inner;
  for (int d = last - 1; d >= 0; d--) { /* row -> outer multi-index */
    idx[d] = row % p->dims[d];
    row /= p->dims[d];
    off_a += idx[d] * p->sa[d];
    off_b += idx[d] * p->sb[d];
  }
  const size_t es = j->es;
  for (int64_t at = begin; at < end;) {
    const int64_t len = inner - col < end - at ? inner - col : end - at;
    const char *a = j->a + (size_t)(off_a + (ia ? col : 0)) * es, *b = j->b + (size_t)(off_b + (ib ? col : 0)) * es;
    run_row(j->k, j->dtype, a, ia, b, ib, j->o + (size_t)at * es, len);
    at += len;
    col = 0;
    for (int d = last - 1; d >= 0; d--) { /* odometer over the outer dims */
      off_a += p->sa[d];
      off_b += p->sb[d];
      if (++idx[d] < p->dims[d]) break;
      off_a -= p->sa[d] * p->dims[d];
      off_b -= p->sb[d] * p->dims[d];
      idx[d] = 0;
    }
  }
}

static void binary_chunk(void *ctx, int64_t begin, int64_t end) { binary_range((const binary_job *)ctx, begin, end); }

/* out = op(lhs, rhs) with broadcasting; all three share a dtype. Large outputs are split into
 * element ranges across the thread pool. */
static void binary_apply(const binary_kernels *k, const mxw_tensor *lhs, const mxw_tensor *rhs, mxw_tensor *out) {
  const int64_t n = mxw_tensor_size(out);
  if (n == 0) return;
  binary_job j = {k,
                  {0},
                  out->dtype,
                  (size_t)mxw_dtype_size(out->dtype),
                  (const char *)lhs->data,
                  (const char *)rhs->data,
                  (char *)out->data};
  plan_broadcast(&lhs->shape, &rhs->shape, &out->shape, &j.p);
  mxw_parallel_run(n, 16, k->cost * mxw_par_dtype_factor(out->dtype), binary_chunk, &j);
}

/* ---- 5. shape inference ------------------------------------------------------------------------- */
static const char *const k_lhs_rhs[] = {"lhs", "rhs", NULL};
static const char *const k_data[] = {"data", NULL};
static const char *const k_args[] = {"args", NULL};

/* NumPy broadcasting. Unknown dims stay unknown; a known conflict is an error naming both shapes. */
static int infer_shape_broadcast(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  const mxw_shape *l = &in[0], *r = &in[1];
  if (l->ndim < 0 || r->ndim < 0) return 0;
  mxw_shape s;
  s.ndim = l->ndim > r->ndim ? l->ndim : r->ndim;
  for (int d = 0; d < s.ndim; d++) {
    int li = d - (s.ndim - l->ndim), ri = d - (s.ndim - r->ndim);
    int64_t ld = li >= 0 ? l->dims[li] : 1, rd = ri >= 0 ? r->dims[ri] : 1;
    if (ld < 0 || rd < 0) {
      s.dims[d] = -1;
    } else if (ld == rd || rd == 1) {
      s.dims[d] = ld;
    } else if (ld == 1) {
      s.dims[d] = rd;
    } else {
      char a[128], b[128];
      return mxw_fail("shape mismatch: lhs %s and rhs %s cannot be broadcast (dim %d: %lld vs %lld)",
                      mxw_shape_str(l, a, sizeof a), mxw_shape_str(r, b, sizeof b), d, (long long)ld, (long long)rd);
    }
  }
  return mxw_shape_assign(&out[0], &s, "output");
}

/* Identical shapes; a known conflict names lhs and rhs. */
static int infer_shape_identical(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  if (mxw_shape_known(&in[0]) && mxw_shape_known(&in[1]) && !mxw_shape_equal(&in[0], &in[1])) {
    char a[128], b[128];
    return mxw_fail("shape mismatch: lhs %s and rhs %s must be identical (use broadcast_* to broadcast)",
                    mxw_shape_str(&in[0], a, sizeof a), mxw_shape_str(&in[1], b, sizeof b));
  }
  return mxw_infer_shape_same(param, nin, in, nout, out);
}

/* ---- forwards ----------------------------------------------------------------------------------- */
/* Broadcasting and same-shape ops share one forward: identical shapes plan to a single row. */
static int forward_binary(const mxw_op_call *c, const binary_kernels *k) {
  binary_apply(k, &c->inputs[0], &c->inputs[1], &c->outputs[0]);
  return 0;
}

typedef struct {
  double scalar;
  int is_int;
} ScalarParam;
static const mxw_attr_spec k_scalar_attrs[] = {
    MXW_A_FLOAT("scalar", ScalarParam, scalar, "1", "the scalar operand, converted to the data dtype"),
    MXW_A_BOOL("is_int", ScalarParam, is_int, "True",
               "whether the scalar was an int in Python (accepted; "
               "the output keeps the input dtype)"),
};

/* data op DType(scalar), or DType(scalar) op data when reversed: the scalar is a one-element
 * operand with stride 0. */
static int forward_scalar(const mxw_op_call *c, const binary_kernels *k, int reversed) {
  const mxw_tensor *data = &c->inputs[0];
  union {
    double d;
    int64_t i;
    uint8_t bytes[8];
  } value;
  value.i = 0;
  mxw_store_f64(&value, data->dtype, 0, ((const ScalarParam *)c->param)->scalar);
  mxw_tensor scalar = {&value, data->dtype, {0, {0}}}; /* rank 0 */
  if (reversed)
    binary_apply(k, &scalar, data, &c->outputs[0]);
  else
    binary_apply(k, data, &scalar, &c->outputs[0]);
  return 0;
}

typedef struct {
  int64_t num_args;
} AddNParam;
static const mxw_attr_spec k_add_n_attrs[] = {
    MXW_A_INT("num_args", AddNParam, num_args, NULL, "number of inputs to sum"),
};
static int validate_add_n(void *param) {
  const AddNParam *p = (const AddNParam *)param;
  /* MXNet: a lower bound of 1 only (elemwise_sum.cc); an int here */
  MXW_CHECK(p->num_args >= 1 && p->num_args <= INT32_MAX, "num_args must be in [1, 2^31 - 1], got %lld",
            (long long)p->num_args);
  return 0;
}
static int num_inputs_add_n(const void *param) { return (int)((const AddNParam *)param)->num_args; }

/* out = ((args[0] + args[1]) + args[2]) + ..., in the dtype, in input order. */
static int forward_add_n(const mxw_op_call *c) {
  mxw_tensor *out = &c->outputs[0];
  if (c->num_inputs == 1) {
    memcpy(out->data, c->inputs[0].data, (size_t)mxw_tensor_size(out) * (size_t)mxw_dtype_size(out->dtype));
    return 0;
  }
  binary_apply(&k_add, &c->inputs[0], &c->inputs[1], out);
  for (int i = 2; i < c->num_inputs; i++) binary_apply(&k_add, out, &c->inputs[i], out);
  return 0;
}

/* ---- gradients (MXNet's FGradient of each op, elemwise_binary_op_basic.cc, elemwise_binary_broadcast_op_*.cc,
 * elemwise_binary_scalar_op_*.cc). g = the output's gradient, a/b = lhs/rhs, y = the output. Broadcast ops sum
 * each input's gradient over the axes it was broadcast along; comparisons and logical ops are
 * non-differentiable (zero gradients, MakeZeroGradNodes). ---------------------------------------------------- */
#define GOP(op, ...) mxw_grad_op(g, op, NULL, MXW_GIDS(__VA_ARGS__))
/* lhs and rhs gradients from full-shape expressions (broadcast ops reduce them to each input) */
static int set_both(mxw_grad_ctx *g, mxw_gid da, mxw_gid db) {
  MXW_TRY(mxw_grad_set(g, 0, mxw_grad_reduce_to_input(g, da, 0)));
  return mxw_grad_set(g, 1, mxw_grad_reduce_to_input(g, db, 1));
}
/* the elementwise form of a binary op: broadcast_* on broadcast ops (shapes may differ), elemwise otherwise */
static const char *bop(const mxw_grad_ctx *g, const char *bname, const char *ename) {
  return mxw_shape_equal(mxw_grad_in_shape(g, 0), mxw_grad_in_shape(g, 1)) ? ename : bname;
}
#define MUL(x, y) GOP(bop(g, "broadcast_mul", "elemwise_mul"), x, y)
#define DIV(x, y) GOP(bop(g, "broadcast_div", "elemwise_div"), x, y)
static int grad_add(mxw_grad_ctx *g) { return set_both(g, mxw_grad_ograd(g, 0), mxw_grad_ograd(g, 0)); }
static int grad_sub(mxw_grad_ctx *g) {
  mxw_gid og = mxw_grad_ograd(g, 0);
  return set_both(g, og, GOP("negative", og));
}
static int grad_mul(mxw_grad_ctx *g) {
  mxw_gid og = mxw_grad_ograd(g, 0), a = mxw_grad_in(g, 0), b = mxw_grad_in(g, 1);
  return set_both(g, MUL(og, b), MUL(og, a));
}
static int grad_div(mxw_grad_ctx *g) { /* da = g / b, db = -g * y / b */
  mxw_gid og = mxw_grad_ograd(g, 0), b = mxw_grad_in(g, 1), y = mxw_grad_out(g, 0);
  mxw_gid da = DIV(og, b);
  mxw_gid db = GOP("negative", DIV(GOP("elemwise_mul", og, y), b));
  return set_both(g, da, db);
}
static int grad_power(mxw_grad_ctx *g) { /* da = g * b * a^(b-1), db = g * y * log(a) */
  mxw_gid og = mxw_grad_ograd(g, 0), a = mxw_grad_in(g, 0), b = mxw_grad_in(g, 1), y = mxw_grad_out(g, 0);
  mxw_gid bm1 = mxw_grad_op(g, "_minus_scalar", MXW_KV("scalar", "1"), MXW_GIDS(b));
  mxw_gid da = MUL(og, MUL(b, GOP(bop(g, "broadcast_power", "_power"), a, bm1)));
  mxw_gid db = MUL(GOP("elemwise_mul", og, y), GOP("log", a));
  return set_both(g, da, db);
}
/* maximum / minimum: the gradient goes to the input that was chosen (lhs on ties, as MXNet's ge/le) */
static int grad_maxmin(mxw_grad_ctx *g, const char *lhs_cmp_b, const char *lhs_cmp_e, const char *rhs_cmp_b,
                       const char *rhs_cmp_e) {
  mxw_gid og = mxw_grad_ograd(g, 0), a = mxw_grad_in(g, 0), b = mxw_grad_in(g, 1);
  mxw_gid ma = GOP(bop(g, lhs_cmp_b, lhs_cmp_e), a, b), mb = GOP(bop(g, rhs_cmp_b, rhs_cmp_e), a, b);
  return set_both(g, MUL(og, ma), MUL(og, mb));
}
static int grad_maximum(mxw_grad_ctx *g) {
  return grad_maxmin(g, "broadcast_greater_equal", "_greater_equal", "broadcast_lesser", "_lesser");
}
static int grad_minimum(mxw_grad_ctx *g) {
  return grad_maxmin(g, "broadcast_lesser_equal", "_lesser_equal", "broadcast_greater", "_greater");
}
static int grad_mod(mxw_grad_ctx *g) { /* da = g, db = -g * floor(a / b) */
  mxw_gid og = mxw_grad_ograd(g, 0), a = mxw_grad_in(g, 0), b = mxw_grad_in(g, 1);
  return set_both(g, og, GOP("negative", MUL(og, GOP("floor", DIV(a, b)))));
}
static int grad_hypot(mxw_grad_ctx *g) { /* da = g * a / y, db = g * b / y */
  mxw_gid og = mxw_grad_ograd(g, 0), a = mxw_grad_in(g, 0), b = mxw_grad_in(g, 1), y = mxw_grad_out(g, 0);
  mxw_gid gy = GOP("elemwise_div", og, y);
  return set_both(g, MUL(gy, a), MUL(gy, b));
}

/* scalar ops: s is the scalar attribute */
static mxw_gid scalar_op(mxw_grad_ctx *g, const char *op, double scalar, mxw_gid x) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", scalar);
  return mxw_grad_op(g, op, MXW_KV("scalar", buf, "is_int", "False"), MXW_GIDS(x));
}
static double gscalar(const mxw_grad_ctx *g) { return ((const ScalarParam *)mxw_grad_param(g))->scalar; }
static int grad_s_same(mxw_grad_ctx *g) { return mxw_grad_set(g, 0, mxw_grad_ograd(g, 0)); }
static int grad_s_neg(mxw_grad_ctx *g) { return mxw_grad_set(g, 0, GOP("negative", mxw_grad_ograd(g, 0))); }
static int grad_s_mul(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, scalar_op(g, "_mul_scalar", gscalar(g), mxw_grad_ograd(g, 0)));
}
static int grad_s_div(mxw_grad_ctx *g) {
  return mxw_grad_set(g, 0, scalar_op(g, "_div_scalar", gscalar(g), mxw_grad_ograd(g, 0)));
}
static int grad_s_rdiv(mxw_grad_ctx *g) { /* y = s / x: dx = -g * y / x */
  mxw_gid og = mxw_grad_ograd(g, 0), x = mxw_grad_in(g, 0), y = mxw_grad_out(g, 0);
  return mxw_grad_set(g, 0, GOP("negative", GOP("elemwise_div", GOP("elemwise_mul", og, y), x)));
}
static int grad_s_rmod(mxw_grad_ctx *g) { /* y = s mod x: dx = -g * floor(s / x) */
  mxw_gid og = mxw_grad_ograd(g, 0), x = mxw_grad_in(g, 0);
  mxw_gid q = GOP("floor", scalar_op(g, "_rdiv_scalar", gscalar(g), x));
  return mxw_grad_set(g, 0, GOP("negative", GOP("elemwise_mul", og, q)));
}
static int grad_s_power(mxw_grad_ctx *g) { /* y = x^s: dx = g * s * x^(s-1) */
  mxw_gid og = mxw_grad_ograd(g, 0), x = mxw_grad_in(g, 0);
  mxw_gid d = scalar_op(g, "_mul_scalar", gscalar(g), scalar_op(g, "_power_scalar", gscalar(g) - 1, x));
  return mxw_grad_set(g, 0, GOP("elemwise_mul", og, d));
}
static int grad_s_rpower(mxw_grad_ctx *g) { /* y = s^x: dx = g * y * log(s) */
  mxw_gid og = mxw_grad_ograd(g, 0), y = mxw_grad_out(g, 0);
  return mxw_grad_set(g, 0, scalar_op(g, "_mul_scalar", log(gscalar(g)), GOP("elemwise_mul", og, y)));
}
static int grad_s_maximum(mxw_grad_ctx *g) { /* dx = g * (x >= s) */
  mxw_gid og = mxw_grad_ograd(g, 0), x = mxw_grad_in(g, 0);
  return mxw_grad_set(g, 0, GOP("elemwise_mul", og, scalar_op(g, "_greater_equal_scalar", gscalar(g), x)));
}
static int grad_s_minimum(mxw_grad_ctx *g) { /* dx = g * (x <= s) */
  mxw_gid og = mxw_grad_ograd(g, 0), x = mxw_grad_in(g, 0);
  return mxw_grad_set(g, 0, GOP("elemwise_mul", og, scalar_op(g, "_lesser_equal_scalar", gscalar(g), x)));
}
static int grad_s_hypot(mxw_grad_ctx *g) { /* dx = g * x / y */
  mxw_gid og = mxw_grad_ograd(g, 0), x = mxw_grad_in(g, 0), y = mxw_grad_out(g, 0);
  return mxw_grad_set(g, 0, GOP("elemwise_mul", GOP("elemwise_div", og, y), x));
}
/* smooth_l1: dx = g * clip(s^2 x, -1, 1) (MXNet's smooth_l1_gradient: s^2 x inside |x| < 1 / s^2,
 * sign(x) outside), from differentiable ops, so the second order follows */
static int grad_s_smooth_l1(mxw_grad_ctx *g) {
  const double s = gscalar(g);
  mxw_gid d = mxw_grad_op(g, "clip", MXW_KV("a_min", "-1", "a_max", "1"),
                          MXW_GIDS(scalar_op(g, "_mul_scalar", s * s, mxw_grad_in(g, 0))));
  return mxw_grad_set(g, 0, GOP("elemwise_mul", mxw_grad_ograd(g, 0), d));
}
static int grad_add_n(mxw_grad_ctx *g) {
  for (int i = 0; i < mxw_grad_num_inputs(g); i++) MXW_TRY(mxw_grad_set(g, i, mxw_grad_ograd(g, 0)));
  return 0;
}
#define NO_GRAD .no_grad = 1
#define GRAD(fn) .gradient = fn

/* ---- the op definitions --------------------------------------------------------------------------- */
#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})

#define BROADCAST_OP(NAME, MATH, ALIAS_LIST, DOC, GRADSPEC)                            \
  static int fwd_##NAME(const mxw_op_call *c) { return forward_binary(c, &k_##MATH); } \
  static const mxw_op_def op_##NAME = {.name = #NAME,                                  \
                                       .aliases = ALIAS_LIST,                          \
                                       .doc = MXW_DOC(DOC " (NumPy broadcasting)"),    \
                                       .num_inputs = 2,                                \
                                       .input_names = k_lhs_rhs,                       \
                                       .num_outputs = 1,                               \
                                       .infer_shape = infer_shape_broadcast,           \
                                       .forward = fwd_##NAME,                          \
                                       GRADSPEC};

#define ELEMWISE_OP(NAME, MATH, ALIAS_LIST, DOC, GRADSPEC)                             \
  static int fwd_##NAME(const mxw_op_call *c) { return forward_binary(c, &k_##MATH); } \
  static const mxw_op_def op_##NAME = {.name = #NAME,                                  \
                                       .aliases = ALIAS_LIST,                          \
                                       .doc = MXW_DOC(DOC " (identical shapes)"),      \
                                       .num_inputs = 2,                                \
                                       .input_names = k_lhs_rhs,                       \
                                       .num_outputs = 1,                               \
                                       .infer_shape = infer_shape_identical,           \
                                       .forward = fwd_##NAME,                          \
                                       GRADSPEC};

#define SCALAR_OP(NAME, MATH, REVERSED, ALIAS_LIST, DOC, GRADSPEC)                               \
  static int fwd_##NAME(const mxw_op_call *c) { return forward_scalar(c, &k_##MATH, REVERSED); } \
  static const mxw_op_def op_##NAME = {.name = #NAME,                                            \
                                       .aliases = ALIAS_LIST,                                    \
                                       .doc = MXW_DOC(DOC),                                      \
                                       .attrs = k_scalar_attrs,                                  \
                                       .num_attrs = 2,                                           \
                                       .param_size = sizeof(ScalarParam),                        \
                                       .num_inputs = 1,                                          \
                                       .input_names = k_data,                                    \
                                       .num_outputs = 1,                                         \
                                       .infer_shape = mxw_infer_shape_same,                      \
                                       .forward = fwd_##NAME,                                    \
                                       GRADSPEC};

BROADCAST_OP(broadcast_add, add, ALIASES("broadcast_plus", "_npi_add", "_sparse_broadcast_add"), "lhs + rhs",
             GRAD(grad_add))
BROADCAST_OP(broadcast_sub, sub, ALIASES("broadcast_minus", "_npi_subtract"), "lhs - rhs", GRAD(grad_sub))
BROADCAST_OP(broadcast_mul, mul, ALIASES("_npi_multiply"), "lhs * rhs", GRAD(grad_mul))
BROADCAST_OP(broadcast_div, div, ALIASES("_npi_true_divide"), "lhs / rhs (integers truncate; x / 0 is 0)",
             GRAD(grad_div))
BROADCAST_OP(broadcast_mod, mod, ALIASES("_npi_mod"), "lhs mod rhs, with the sign of rhs; x mod 0 is 0", GRAD(grad_mod))
BROADCAST_OP(broadcast_power, power, ALIASES("_npi_power"), "lhs ^ rhs", GRAD(grad_power))
BROADCAST_OP(broadcast_maximum, maximum, ALIASES("_npi_maximum"), "lhs > rhs ? lhs : rhs; NaN propagates",
             GRAD(grad_maximum))
BROADCAST_OP(broadcast_minimum, minimum, ALIASES("_npi_minimum"), "lhs < rhs ? lhs : rhs; NaN propagates",
             GRAD(grad_minimum))
BROADCAST_OP(broadcast_hypot, hypot, NULL, "sqrt(lhs^2 + rhs^2)", GRAD(grad_hypot))
BROADCAST_OP(broadcast_equal, equal, NULL, "1 where lhs == rhs, else 0", NO_GRAD)
BROADCAST_OP(broadcast_not_equal, not_equal, NULL, "1 where lhs != rhs, else 0", NO_GRAD)
BROADCAST_OP(broadcast_greater, greater, NULL, "1 where lhs > rhs, else 0", NO_GRAD)
BROADCAST_OP(broadcast_greater_equal, greater_equal, NULL, "1 where lhs >= rhs, else 0", NO_GRAD)
BROADCAST_OP(broadcast_lesser, lesser, NULL, "1 where lhs < rhs, else 0", NO_GRAD)
BROADCAST_OP(broadcast_lesser_equal, lesser_equal, NULL, "1 where lhs <= rhs, else 0", NO_GRAD)
BROADCAST_OP(broadcast_logical_and, logical_and, NULL, "1 where lhs and rhs are both nonzero, else 0", NO_GRAD)
BROADCAST_OP(broadcast_logical_or, logical_or, NULL, "1 where lhs or rhs is nonzero, else 0", NO_GRAD)
BROADCAST_OP(broadcast_logical_xor, logical_xor, NULL, "1 where exactly one of lhs, rhs is nonzero, else 0", NO_GRAD)

ELEMWISE_OP(elemwise_add, add, ALIASES("_add", "_plus", "_Plus"), "lhs + rhs", GRAD(grad_add))
ELEMWISE_OP(elemwise_sub, sub, ALIASES("_sub", "_minus", "_Minus", "_sparse_elemwise_sub"), "lhs - rhs", GRAD(grad_sub))
ELEMWISE_OP(elemwise_mul, mul, ALIASES("_mul", "_Mul", "_sparse_elemwise_mul"), "lhs * rhs", GRAD(grad_mul))
ELEMWISE_OP(elemwise_div, div, ALIASES("_div", "_Div", "_sparse_elemwise_div"),
            "lhs / rhs (integers truncate; x / 0 is 0)", GRAD(grad_div))
ELEMWISE_OP(_power, power, ALIASES("_Power"), "lhs ^ rhs", GRAD(grad_power))
ELEMWISE_OP(_maximum, maximum, ALIASES("_Maximum"), "lhs > rhs ? lhs : rhs; NaN propagates", GRAD(grad_maximum))
ELEMWISE_OP(_minimum, minimum, ALIASES("_Minimum"), "lhs < rhs ? lhs : rhs; NaN propagates", GRAD(grad_minimum))
ELEMWISE_OP(_mod, mod, ALIASES("_Mod"), "lhs mod rhs, with the sign of rhs; x mod 0 is 0", GRAD(grad_mod))
ELEMWISE_OP(_hypot, hypot, NULL, "sqrt(lhs^2 + rhs^2)", GRAD(grad_hypot))
ELEMWISE_OP(_equal, equal, ALIASES("_Equal"), "1 where lhs == rhs, else 0", NO_GRAD)
ELEMWISE_OP(_not_equal, not_equal, ALIASES("_Not_Equal"), "1 where lhs != rhs, else 0", NO_GRAD)
ELEMWISE_OP(_greater, greater, ALIASES("_Greater"), "1 where lhs > rhs, else 0", NO_GRAD)
ELEMWISE_OP(_greater_equal, greater_equal, ALIASES("_Greater_Equal"), "1 where lhs >= rhs, else 0", NO_GRAD)
ELEMWISE_OP(_lesser, lesser, ALIASES("_Lesser"), "1 where lhs < rhs, else 0", NO_GRAD)
ELEMWISE_OP(_lesser_equal, lesser_equal, ALIASES("_Lesser_Equal"), "1 where lhs <= rhs, else 0", NO_GRAD)
ELEMWISE_OP(_logical_and, logical_and, NULL, "1 where lhs and rhs are both nonzero, else 0", NO_GRAD)
ELEMWISE_OP(_logical_or, logical_or, NULL, "1 where lhs or rhs is nonzero, else 0", NO_GRAD)
ELEMWISE_OP(_logical_xor, logical_xor, NULL, "1 where exactly one of lhs, rhs is nonzero, else 0", NO_GRAD)

SCALAR_OP(_plus_scalar, add, 0, ALIASES("_PlusScalar"), "data + scalar", GRAD(grad_s_same))
SCALAR_OP(_minus_scalar, sub, 0, ALIASES("_MinusScalar"), "data - scalar", GRAD(grad_s_same))
SCALAR_OP(_rminus_scalar, sub, 1, ALIASES("_RMinusScalar"), "scalar - data", GRAD(grad_s_neg))
SCALAR_OP(_mul_scalar, mul, 0, ALIASES("_MulScalar"), "data * scalar", GRAD(grad_s_mul))
SCALAR_OP(_div_scalar, div, 0, ALIASES("_DivScalar"), "data / scalar", GRAD(grad_s_div))
SCALAR_OP(_rdiv_scalar, div, 1, ALIASES("_RDivScalar"), "scalar / data", GRAD(grad_s_rdiv))
SCALAR_OP(_mod_scalar, mod, 0, ALIASES("_ModScalar"), "data mod scalar, with the sign of scalar", GRAD(grad_s_same))
SCALAR_OP(_rmod_scalar, mod, 1, ALIASES("_RModScalar"), "scalar mod data, with the sign of data", GRAD(grad_s_rmod))
SCALAR_OP(_power_scalar, power, 0, ALIASES("_PowerScalar"), "data ^ scalar", GRAD(grad_s_power))
SCALAR_OP(_rpower_scalar, power, 1, ALIASES("_RPowerScalar"), "scalar ^ data", GRAD(grad_s_rpower))
SCALAR_OP(_maximum_scalar, maximum, 0, ALIASES("_MaximumScalar"), "data > scalar ? data : scalar", GRAD(grad_s_maximum))
SCALAR_OP(_minimum_scalar, minimum, 0, ALIASES("_MinimumScalar"), "data < scalar ? data : scalar", GRAD(grad_s_minimum))
SCALAR_OP(_hypot_scalar, hypot, 0, ALIASES("_HypotScalar"), "sqrt(data^2 + scalar^2)", GRAD(grad_s_hypot))
SCALAR_OP(smooth_l1, smooth_l1, 0, NULL,
          "smooth L1 with sigma = scalar: 0.5 (scalar x)^2 where |x| < 1 / scalar^2, else |x| - 0.5 / scalar^2",
          GRAD(grad_s_smooth_l1))
SCALAR_OP(_equal_scalar, equal, 0, ALIASES("_EqualScalar"), "1 where data == scalar, else 0", NO_GRAD)
SCALAR_OP(_not_equal_scalar, not_equal, 0, ALIASES("_NotEqualScalar"), "1 where data != scalar, else 0", NO_GRAD)
SCALAR_OP(_greater_scalar, greater, 0, ALIASES("_GreaterScalar"), "1 where data > scalar, else 0", NO_GRAD)
SCALAR_OP(_greater_equal_scalar, greater_equal, 0, ALIASES("_GreaterEqualScalar"), "1 where data >= scalar, else 0",
          NO_GRAD)
SCALAR_OP(_lesser_scalar, lesser, 0, ALIASES("_LesserScalar"), "1 where data < scalar, else 0", NO_GRAD)
SCALAR_OP(_lesser_equal_scalar, lesser_equal, 0, ALIASES("_LesserEqualScalar"), "1 where data <= scalar, else 0",
          NO_GRAD)
SCALAR_OP(_logical_and_scalar, logical_and, 0, NULL, "1 where data and scalar are both nonzero, else 0", NO_GRAD)
SCALAR_OP(_logical_or_scalar, logical_or, 0, NULL, "1 where data or scalar is nonzero, else 0", NO_GRAD)
SCALAR_OP(_logical_xor_scalar, logical_xor, 0, NULL, "1 where exactly one of data, scalar is nonzero, else 0", NO_GRAD)

static const mxw_op_def op_add_n = {.name = "add_n",
                                    .aliases = ALIASES("ElementWiseSum"),
                                    .doc = MXW_DOC("the sum of num_args same-shape arrays"),
                                    .attrs = k_add_n_attrs,
                                    .num_attrs = 1,
                                    .param_size = sizeof(AddNParam),
                                    .validate = validate_add_n,
                                    .num_inputs = MXW_VARIADIC,
                                    .input_names = k_args,
                                    .num_inputs_fn = num_inputs_add_n,
                                    .num_outputs = 1,
                                    .infer_shape = mxw_infer_shape_same,
                                    .forward = forward_add_n,
                                    .gradient = grad_add_n};

MXW_FAMILY(elemwise_binary, &op_broadcast_add, &op_broadcast_sub, &op_broadcast_mul, &op_broadcast_div,
           &op_broadcast_mod, &op_broadcast_power, &op_broadcast_maximum, &op_broadcast_minimum, &op_broadcast_hypot,
           &op_broadcast_equal, &op_broadcast_not_equal, &op_broadcast_greater, &op_broadcast_greater_equal,
           &op_broadcast_lesser, &op_broadcast_lesser_equal, &op_broadcast_logical_and, &op_broadcast_logical_or,
           &op_broadcast_logical_xor, &op_elemwise_add, &op_elemwise_sub, &op_elemwise_mul, &op_elemwise_div,
           &op__power, &op__maximum, &op__minimum, &op__mod, &op__hypot, &op__equal, &op__not_equal, &op__greater,
           &op__greater_equal, &op__lesser, &op__lesser_equal, &op__logical_and, &op__logical_or, &op__logical_xor,
           &op__plus_scalar, &op__minus_scalar, &op__rminus_scalar, &op__mul_scalar, &op__div_scalar, &op__rdiv_scalar,
           &op__mod_scalar, &op__rmod_scalar, &op__power_scalar, &op__rpower_scalar, &op__maximum_scalar,
           &op__minimum_scalar, &op__hypot_scalar, &op_smooth_l1, &op__equal_scalar, &op__not_equal_scalar,
           &op__greater_scalar, &op__greater_equal_scalar, &op__lesser_scalar, &op__lesser_equal_scalar,
           &op__logical_and_scalar, &op__logical_or_scalar, &op__logical_xor_scalar, &op_add_n);
