/* control_flow.c -- registers MXNet's control-flow operators _foreach, _while_loop and _cond.
 * Their nodes carry subgraphs, and their params hold a reference to them, so they are defined
 * beside the subgraph runner in csrc/graph/subgraph.c, with their backward ops. */
#include "../core/mxw_core.h"

extern const mxw_op_def mxw_op_foreach, mxw_op_while_loop, mxw_op_cond, mxw_op_backward_foreach,
    mxw_op_backward_while_loop, mxw_op_backward_cond;

MXW_FAMILY(control_flow, &mxw_op_foreach, &mxw_op_while_loop, &mxw_op_cond, &mxw_op_backward_foreach,
           &mxw_op_backward_while_loop, &mxw_op_backward_cond);
