/* ndarray.h -- the NDArray object (internal layout). */
#ifndef MXW_NDARRAY_H_
#define MXW_NDARRAY_H_
#include "mxw_core.h"

typedef struct mxw_storage {
  void *ptr;
  size_t nbytes;
  int refcount;
} mxw_storage;

struct mxw_ndarray {
  mxw_tensor t; /* t.data points into storage */
  mxw_storage *storage;
};

/* Allocates a zero-filled array of a known shape; NULL with an error set on failure. */
mxw_ndarray *mxw_ndarray_alloc(const mxw_shape *shape, int dtype);
#endif
