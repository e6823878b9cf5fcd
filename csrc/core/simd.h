/* simd.h -- the wasm_simd128 intrinsics for every build, and the multiply-add the kernels share.
 *
 * wasm builds use clang's <wasm_simd128.h>; native builds (the C tests) SIMDe's portable
 * implementation of the same intrinsics. MXW_F32X4_MADD(acc, a, b) is acc + a * b: in the
 * relaxed-SIMD tiers (-mrelaxed-simd) f32x4.relaxed_madd, which the engine may fuse (one
 * rounding: results differ from the plain tier in the last bits, within 1e-5 relative on the
 * tests' workloads), elsewhere a multiply then an add. Within one tier it is the same
 * instruction whatever the thread count, so threaded results stay bit-identical. */
#ifndef MXW_SIMD_H_
#define MXW_SIMD_H_

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <simde/wasm/simd128.h>
#endif

#ifdef __wasm_relaxed_simd__
#define MXW_F32X4_MADD(acc, a, b) wasm_f32x4_relaxed_madd((a), (b), (acc))
#define MXW_RELAXED_SIMD 1
#else
#define MXW_F32X4_MADD(acc, a, b) wasm_f32x4_add((acc), wasm_f32x4_mul((a), (b)))
#define MXW_RELAXED_SIMD 0
#endif

#endif /* MXW_SIMD_H_ */
