/* ndarray.c -- NDArray storage (refcounted, shared by views), creation, views (whole or a
 * contiguous element range), copies, and the kernels' scratch buffers. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndarray.h"
#include "../kernels/gemm.h"

static double g_live_arrays = 0, g_live_bytes = 0, g_peak_bytes = 0;

void mxw_memory_stats(double *out) {
  out[0] = g_live_arrays;
  out[1] = g_live_bytes;
  out[2] = g_peak_bytes;
}
void mxw_memory_reset_peak(void) { g_peak_bytes = g_live_bytes; }

void mxw_memory_account(double delta) {
  g_live_bytes += delta;
  if (g_live_bytes > g_peak_bytes) g_peak_bytes = g_live_bytes;
}

/* A new array's bytes are not cleared (MXNet's empty()): every operator writes each element of
 * its outputs, and what needs zeros asks for them (_zeros, zeros_like, ...). Clearing was a memset
 * of every fresh output on the calling thread: an eager relu of 200k floats took 47 us against 26
 * into an existing array, and 61 on 2 threads (the other core then pulled the cleared lines).
 * Builds with MXW_POISON_OUTPUTS (the native tests, and a wasm build the JS suite runs on) fill
 * them with NaN bytes instead, so a kernel that leaves an element unwritten fails its tests. */
static mxw_storage *storage_new(size_t nbytes) {
  mxw_storage *s = (mxw_storage *)malloc(sizeof *s);
  if (!s) return NULL;
  /* malloc(0) may return NULL: keep a minimal block so data is never NULL. */
  s->ptr = malloc(nbytes ? nbytes : 1);
  if (!s->ptr) {
    free(s);
    return NULL;
  }
#ifdef MXW_POISON_OUTPUTS
  memset(s->ptr, 0xFF, nbytes);
#endif
  s->nbytes = nbytes;
  s->refcount = 1;
  mxw_memory_account((double)nbytes);
  return s;
}

static void storage_release(mxw_storage *s) {
  if (--s->refcount > 0) return;
  mxw_memory_account(-(double)s->nbytes);
  free(s->ptr);
  free(s);
}

mxw_ndarray *mxw_ndarray_alloc(const mxw_shape *shape, int dtype) {
  if (mxw_dtype_size(dtype) == 0) {
    mxw_fail("unknown dtype flag %d", dtype);
    return NULL;
  }
  if (shape->ndim < 0 || shape->ndim > MXW_MAX_NDIM) {
    mxw_fail("rank %d is not supported (0..%d)", shape->ndim, MXW_MAX_NDIM);
    return NULL;
  }
  double total = mxw_dtype_size(dtype), nonzero = 1;
  for (int i = 0; i < shape->ndim; i++) {
    if (shape->dims[i] < 0) {
      char b[128];
      mxw_fail("cannot allocate an array of unknown shape %s", mxw_shape_str(shape, b, sizeof b));
      return NULL;
    }
    if (shape->dims[i] > INT32_MAX) { /* shapes cross the API as int32 (mxw_ndarray_shape) */
      char b[128];
      mxw_fail("array of shape %s: dimension %d is %lld, more than 2^31 - 1, the largest this runtime supports",
               mxw_shape_str(shape, b, sizeof b), i, (long long)shape->dims[i]);
      return NULL;
    }
    total *= (double)shape->dims[i];
    if (shape->dims[i]) nonzero *= (double)shape->dims[i];
  }
  /* a zero-size array too: its other dims must not multiply past the element limit, or every
   * product over its shape (mxw_shape_size, strides) overflows (fuzz_ndlist found (2^24, .., 0)) */
  if (nonzero > 2147483647.0) {
    char b[256];
    mxw_fail(
        "array of shape %s: its nonzero dimensions multiply to %.0f elements, more than 2^31 - 1, the largest "
        "this runtime supports",
        mxw_shape_str(shape, b, sizeof b), nonzero);
    return NULL;
  }
  if (total > 2147483647.0) {
    char b[128];
    mxw_fail("array of shape %s and dtype %s (%.0f bytes) is too large", mxw_shape_str(shape, b, sizeof b),
             mxw_dtype_name(dtype), total);
    return NULL;
  }
  mxw_ndarray *a = (mxw_ndarray *)malloc(sizeof *a);
  mxw_storage *s = a ? storage_new((size_t)total) : NULL;
  if (!s) {
    free(a);
    char b[128], what[192];
    snprintf(what, sizeof what, "an array of shape %s and dtype %s", mxw_shape_str(shape, b, sizeof b),
             mxw_dtype_name(dtype));
    mxw_fail_oom(what, total);
    return NULL;
  }
  a->storage = s;
  a->ag_node = NULL;
  a->ag_index = 0;
  s->fresh_grad = 0;
  a->t.data = s->ptr;
  a->t.dtype = dtype;
  a->t.shape = *shape;
  g_live_arrays += 1;
  return a;
}

static int shape_from_i32(int ndim, const int32_t *dims, mxw_shape *out) {
  MXW_CHECK(ndim >= 0 && ndim <= MXW_MAX_NDIM, "rank %d is not supported (0..%d)", ndim, MXW_MAX_NDIM);
  MXW_CHECK(ndim == 0 || dims != NULL, "shape pointer is NULL");
  out->ndim = ndim;
  for (int i = 0; i < ndim; i++) {
    MXW_CHECK(dims[i] >= 0, "negative dimension %d in shape", (int)dims[i]);
    out->dims[i] = dims[i];
  }
  return 0;
}

mxw_ndarray *mxw_ndarray_zeros(const mxw_shape *shape, int dtype) {
  mxw_ndarray *a = mxw_ndarray_alloc(shape, dtype);
  if (a) memset(a->storage->ptr, 0, a->storage->nbytes);
  return a;
}

/* mxw_ndarray_empty / mxw_ndarray_create: the shape checked, then `alloc` (elements not set, or
 * zeros). */
static int create_with(mxw_ndarray *(*alloc)(const mxw_shape *, int), int ndim, const int32_t *shape, int dtype,
                       mxw_ndarray **out) {
  MXW_CHECK(out != NULL, "output pointer is NULL");
  mxw_shape s;
  MXW_TRY(shape_from_i32(ndim, shape, &s));
  mxw_ndarray *a = alloc(&s, dtype);
  if (!a) return -1;
  *out = a;
  return 0;
}

int mxw_ndarray_empty(int ndim, const int32_t *shape, int dtype, mxw_ndarray **out) {
  return create_with(mxw_ndarray_alloc, ndim, shape, dtype, out);
}

int mxw_ndarray_create(int ndim, const int32_t *shape, int dtype, mxw_ndarray **out) {
  return create_with(mxw_ndarray_zeros, ndim, shape, dtype, out);
}

int mxw_ndarray_free(mxw_ndarray *arr) {
  if (!arr) return 0;
  if (arr->ag_node) mxw_autograd_release(arr->ag_node);
  storage_release(arr->storage);
  free(arr);
  g_live_arrays -= 1;
  return 0;
}

void *mxw_ndarray_data(const mxw_ndarray *arr) { return arr ? arr->t.data : NULL; }
int mxw_ndarray_dtype(const mxw_ndarray *arr) { return arr ? arr->t.dtype : -1; }
int mxw_ndarray_ndim(const mxw_ndarray *arr) { return arr ? arr->t.shape.ndim : -1; }
double mxw_ndarray_size(const mxw_ndarray *arr) { return arr ? (double)mxw_shape_size(&arr->t.shape) : 0; }

int mxw_ndarray_shape(const mxw_ndarray *arr, int32_t *shape_out) {
  MXW_CHECK(arr && shape_out, "NULL argument");
  for (int i = 0; i < arr->t.shape.ndim; i++) shape_out[i] = (int32_t)arr->t.shape.dims[i];
  return 0;
}

int mxw_ndarray_info(const mxw_ndarray *arr, int32_t *out) {
  MXW_CHECK(arr && out, "NULL argument");
  out[0] = arr->t.dtype;
  out[1] = arr->t.shape.ndim;
  for (int i = 0; i < arr->t.shape.ndim; i++) out[2 + i] = (int32_t)arr->t.shape.dims[i];
  return 0;
}

mxw_ndarray *mxw_ndarray_share(const mxw_ndarray *a) {
  mxw_ndarray *v = (mxw_ndarray *)malloc(sizeof *v);
  if (!v) {
    mxw_fail("out of memory");
    return NULL;
  }
  *v = *a;
  v->ag_node = NULL;
  v->ag_index = 0;
  v->storage->refcount++;
  g_live_arrays += 1;
  return v;
}

int mxw_ndarray_view(mxw_ndarray *arr, int ndim, const int32_t *shape, mxw_ndarray **out) {
  MXW_CHECK(arr && out, "NULL argument");
  mxw_shape s;
  MXW_TRY(shape_from_i32(ndim, shape, &s));
  char a[128], b[128];
  MXW_CHECK(mxw_shape_size(&s) == mxw_shape_size(&arr->t.shape), "cannot view an array of shape %s as %s: sizes differ",
            mxw_shape_str(&arr->t.shape, a, sizeof a), mxw_shape_str(&s, b, sizeof b));
  mxw_ndarray *v = (mxw_ndarray *)malloc(sizeof *v);
  MXW_CHECK(v != NULL, "out of memory");
  *v = *arr;
  v->t.shape = s;
  v->ag_node = NULL;
  v->storage->refcount++;
  g_live_arrays += 1;
  if (mxw_autograd_record_view(arr, v, 0) != 0) {
    mxw_ndarray_free(v);
    return -1;
  }
  *out = v;
  return 0;
}

int mxw_ndarray_view_range(mxw_ndarray *arr, int32_t offset, int ndim, const int32_t *shape, mxw_ndarray **out) {
  MXW_CHECK(arr && out, "NULL argument");
  mxw_shape s;
  MXW_TRY(shape_from_i32(ndim, shape, &s));
  int64_t total = mxw_shape_size(&arr->t.shape), count = mxw_shape_size(&s);
  char a[128], b[128];
  MXW_CHECK(offset >= 0 && (int64_t)offset + count <= total,
            "cannot view elements %lld..%lld (shape %s) of an array of shape %s (%lld elements)", (long long)offset,
            (long long)offset + count - 1, mxw_shape_str(&s, b, sizeof b), mxw_shape_str(&arr->t.shape, a, sizeof a),
            (long long)total);
  mxw_ndarray *v = (mxw_ndarray *)malloc(sizeof *v);
  MXW_CHECK(v != NULL, "out of memory");
  *v = *arr;
  v->t.data = (char *)arr->t.data + (size_t)offset * (size_t)mxw_dtype_size(arr->t.dtype);
  v->t.shape = s;
  v->ag_node = NULL;
  v->storage->refcount++;
  g_live_arrays += 1;
  if (mxw_autograd_record_view(arr, v, offset) != 0) {
    mxw_ndarray_free(v);
    return -1;
  }
  *out = v;
  return 0;
}

int mxw_ndarray_copy(const mxw_ndarray *src, mxw_ndarray *dst) {
  MXW_CHECK(src && dst, "NULL argument");
  char a[128], b[128];
  MXW_CHECK(mxw_shape_size(&src->t.shape) == mxw_shape_size(&dst->t.shape),
            "cannot copy an array of shape %s into one of shape %s", mxw_shape_str(&src->t.shape, a, sizeof a),
            mxw_shape_str(&dst->t.shape, b, sizeof b));
  MXW_TRY(mxw_autograd_record_copy(src, dst, 0));
  mxw_convert(src->t.data, src->t.dtype, dst->t.data, dst->t.dtype, mxw_shape_size(&src->t.shape));
  return mxw_autograd_record_copy(src, dst, 1);
}

/* ---- scratch ---------------------------------------------------------------------------------- */
/* per thread: a kernel's chunks running on the pool's workers (mxw_parallel_for) each get their
 * own slots; a worker's slots live as long as the worker (the pool's lifetime) or until
 * mxw_scratch_release */
static _Thread_local void *g_scratch[MXW_SCRATCH_SLOTS];
static _Thread_local size_t g_scratch_size[MXW_SCRATCH_SLOTS];
static atomic_llong g_scratch_bytes; /* all threads' slots and GEMM panels */

void mxw_scratch_account(int64_t delta_bytes) { atomic_fetch_add(&g_scratch_bytes, (long long)delta_bytes); }
double mxw_scratch_bytes(void) { return (double)atomic_load(&g_scratch_bytes); }

void *mxw_scratch(int slot, size_t bytes) {
  if (slot < 0 || slot >= MXW_SCRATCH_SLOTS) {
    mxw_fail("scratch slot %d out of range", slot);
    return NULL;
  }
  if (bytes > g_scratch_size[slot]) {
    size_t n = (bytes + bytes / 4 + 64 + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, n);
    if (!p) {
      mxw_fail("out of memory allocating %zu bytes of scratch", bytes);
      return NULL;
    }
    free(g_scratch[slot]);
    mxw_scratch_account((int64_t)n - (int64_t)g_scratch_size[slot]);
    g_scratch[slot] = p;
    g_scratch_size[slot] = n;
  }
  return g_scratch[slot];
}

/* the calling thread's buffers */
static void release_thread_buffers(void) {
  for (int i = 0; i < MXW_SCRATCH_SLOTS; i++) {
    free(g_scratch[i]);
    mxw_scratch_account(-(int64_t)g_scratch_size[i]);
    g_scratch[i] = NULL;
    g_scratch_size[i] = 0;
  }
  mxw_gemm_release_buffers();
}

/* The grow-only buffers kernels keep between calls (scratch slots, GEMM packing panels), freed on
 * every thread: called when blocks are disposed, so that a later, different model does not find
 * the heap cut up by buffers sized for the last one (they grow back on the next call). */
void mxw_scratch_release(void) { mxw_parallel_each(release_thread_buffers); }
