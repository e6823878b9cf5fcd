/* mxw_parallel.h -- how the op families split their work over the thread pool (mxw_parallel_for,
 * parallel.c), so that every family decides "is this big enough to split?" the same way.
 *
 * Work is counted in element-ops: about one cheap float32 operation on one element (a relu, an
 * add: ~0.1-0.4 ns natively, a little more in wasm). A parallel call pays for waking the pool's
 * workers and joining them (~3 us natively with 2 threads, more in wasm), so a call is split only
 * when every chunk gets at least mxw_par_chunk_work() element-ops; smaller calls run inline on the
 * calling thread, exactly as without threads.
 *
 * Bit-identical results for any thread count are the kernels' business: each one splits over
 * independent outputs (planes, rows, channels, element ranges) and computes every output element
 * with the same sequence of operations whatever chunk holds it.
 *
 * Example (a row-wise kernel, rows of `len` elements, about 3 element-ops each):
 *
 *     static void rows_chunk(void *ctx, int64_t r0, int64_t r1) { ... rows [r0, r1) ... }
 *     mxw_parallel_run(rows, 1, 3.0 * len, rows_chunk, &ctx);
 */
#ifndef MXW_PARALLEL_H_
#define MXW_PARALLEL_H_

#include "mxw_core.h"

/* The least work (element-ops) a chunk must get for a split to pay. Measured with 2 threads in
 * the threaded wasm tier (2-core VM): with workers that sleep between jobs a split cost ~10-40 us
 * of wake-up and paid from ~1M element-ops; now that they spin 0.2 ms before sleeping
 * (parallel.c), relu splits pay from 128k elements (1.65x; 64k 1.31x, 256k 1.86x) and exp from
 * 64k (1.9x). Tests set 1 with mxw_par_set_chunk_work (every call with two units of work
 * splits); <= 0 restores the default. */
#define MXW_PAR_CHUNK_WORK 65536.0
/* Exported from the wasm module too (M._mxw_par_set_chunk_work), for tuning runs. */
MXW_API double mxw_par_chunk_work(void);
MXW_API void mxw_par_set_chunk_work(double work);

/* Per-element costs in element-ops, for the elementwise families (float32; float64 counts 2x,
 * the dtypes computed through double conversions 4x: mxw_par_dtype_factor). */
#define MXW_COST_CHEAP 1.0    /* add, mul, relu, abs, copy, compare, clip, ... */
#define MXW_COST_DIV 2.0      /* div, sqrt, the optimizers' few-op updates */
#define MXW_COST_MATH 16.0    /* exp, log, sin, tanh, erf, pow, ... (libm calls) */
#define MXW_COST_SPECIAL 64.0 /* gamma, gammaln, digamma */

/* 1 for float32, 2 for float64, 4 for the other dtypes (converted element by element). */
double mxw_par_dtype_factor(int dtype);

/* How many chunks `work` element-ops are worth: min(threads, work / mxw_par_chunk_work()), >= 1. */
int mxw_par_chunks(double work);

/* Runs fn(ctx, begin, end) over [0, n) items of cost_per_item element-ops each: split across the
 * pool (chunk boundaries multiples of align) when at least two chunks are worth it, else one
 * inline call fn(ctx, 0, n). n <= 0 calls nothing. */
void mxw_parallel_run(int64_t n, int64_t align, double cost_per_item, mxw_task_fn fn, void *ctx);

/* An elementwise op call split into sub-calls: kernel(sub) where each sub-call sees elements
 * [begin, end) of every input and output that has n elements (as 1-D views of end - begin
 * elements; inputs of another size, e.g. a (1,) scalar operand, are passed whole), the same
 * params and flags. For kernels whose every output element depends only on the same element of
 * those inputs. cost_per_elem in element-ops (before mxw_par_dtype_factor of output 0's dtype).
 * Kernels may fail only before writing anything (a dtype check): then the whole call is repeated
 * on the calling thread, so its error message is the one recorded. */
int mxw_parallel_elemwise(const mxw_op_call *c, int64_t n, double cost_per_elem, int (*kernel)(const mxw_op_call *));

/* mxw_convert of n elements, split across the pool when large. */
void mxw_parallel_convert(const void *src, int src_dtype, void *dst, int dst_dtype, int64_t n);

#endif /* MXW_PARALLEL_H_ */
