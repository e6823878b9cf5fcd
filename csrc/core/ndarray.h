/* ndarray.h -- the NDArray object (internal layout). */
#ifndef MXW_NDARRAY_H_
#define MXW_NDARRAY_H_
#include "mxw_core.h"

typedef struct mxw_storage {
  void *ptr;
  size_t nbytes;
  int refcount;
  int fresh_grad; /* set when a backward pass writes this storage as a gradient */
} mxw_storage;

struct mxw_node;
struct mxw_ndarray {
  mxw_tensor t; /* t.data points into storage */
  mxw_storage *storage;
  /* autograd: the recorded node (and output index) that produced this array, or the variable
   * node of an array marked for gradients; NULL otherwise (a reference is held) */
  struct mxw_node *ag_node;
  uint32_t ag_index;
};

/* Allocates a zero-filled array of a known shape; NULL with an error set on failure. */
mxw_ndarray *mxw_ndarray_alloc(const mxw_shape *shape, int dtype);
/* The same, zero-filled: for what is read as zeros before anything writes it (an unbound input,
 * a densified sparse record). mxw_ndarray_alloc's elements are not set (see storage_new). */
mxw_ndarray *mxw_ndarray_zeros(const mxw_shape *shape, int dtype);
/* A new handle on a's storage (same shape and dtype, no autograd history). */
mxw_ndarray *mxw_ndarray_share(const mxw_ndarray *a);

/* autograd hooks (csrc/graph/autograd.c) for the eager operator call */
int mxw_autograd_is_recording(void);
/* Before the kernel runs: fails if a recorded call would write into an array already in a graph. */
int mxw_autograd_check_outputs(int nin, mxw_ndarray *const *inputs, int nout, mxw_ndarray *const *outputs);
/* After the kernel ran: records the call on the tape when an input has autograd history. */
int mxw_autograd_record(const mxw_params *p, int nin, mxw_ndarray *const *inputs, int nout,
                        mxw_ndarray *const *outputs);
/* Records a view made while recording (reshape / contiguous range at element offset). */
int mxw_autograd_record_view(mxw_ndarray *arr, mxw_ndarray *view, int64_t offset);
/* Records a copy of a recorded array (NDArray.copyto, x[:] = y): before (after = 0: checks) and after. */
int mxw_autograd_record_copy(const mxw_ndarray *src, mxw_ndarray *dst, int after);
/* Releases an array's autograd reference (mxw_ndarray_free). */
void mxw_autograd_release(struct mxw_node *n);
#endif
