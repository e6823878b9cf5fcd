/* cached_op_ops.c -- registers the internal ops of hybridized training: _CachedOp (a hybridized
 * call on the autograd tape) and _backward_CachedOp (its backward half). They hold a reference
 * to the recorded call's state, so they are defined beside it in csrc/graph/cached_op.c. */
#include "../core/mxw_core.h"

extern const mxw_op_def mxw_op_cached_op, mxw_op_backward_cached_op;

MXW_FAMILY(cached_op_ops, &mxw_op_cached_op, &mxw_op_backward_cached_op);
