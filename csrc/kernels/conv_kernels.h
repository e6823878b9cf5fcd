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

#endif /* MXW_KERNELS_CONV_KERNELS_H_ */
