/* A test-only writer of MXNet's NDArray-list (.params) records, written from
 * ../shared/spec/params-format.md and independent of csrc/io: every record version MXNet wrote
 * (legacy V0 with u32 dims and no magic, V1, V2, V3; dense, row_sparse and csr), with or
 * without names. The tests build their fixture files with it and check what the library reads
 * back against hand-worked values. Little-endian host assumed (x86, wasm), as the format is. */
#ifndef MXW_TEST_FIXTURES_H_
#define MXW_TEST_FIXTURES_H_
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FX_V1 0xF993FAC8u
#define FX_V2 0xF993FAC9u
#define FX_V3 0xF993FACAu

typedef struct fx_buf {
  uint8_t *p;
  size_t len, cap;
} fx_buf;

static inline void fx_put(fx_buf *b, const void *src, size_t n) {
  if (b->len + n > b->cap) {
    b->cap = (b->len + n) * 2 + 64;
    b->p = (uint8_t *)realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  if (n) memcpy(b->p + b->len, src, n);
  b->len += n;
}
static inline void fx_u32(fx_buf *b, uint32_t v) { fx_put(b, &v, 4); }
static inline void fx_i32(fx_buf *b, int32_t v) { fx_put(b, &v, 4); }
static inline void fx_u64(fx_buf *b, uint64_t v) { fx_put(b, &v, 8); }
static inline void fx_i64(fx_buf *b, int64_t v) { fx_put(b, &v, 8); }

/* §2: list magic 0x112, reserved 0, array count. */
static inline void fx_header(fx_buf *b, uint64_t n) {
  fx_u64(b, 0x112);
  fx_u64(b, 0);
  fx_u64(b, n);
}
/* §2: the name count (0 = a list file), then each name as u64 length + bytes. */
static inline void fx_names(fx_buf *b, int k, const char *const *names) {
  fx_u64(b, (uint64_t)k);
  for (int i = 0; i < k; i++) {
    fx_u64(b, strlen(names[i]));
    fx_put(b, names[i], strlen(names[i]));
  }
}
/* §3.3: i32 ndim then ndim i64 dims. */
static inline void fx_shape64(fx_buf *b, int ndim, const int64_t *dims) {
  fx_i32(b, ndim);
  for (int i = 0; i < ndim; i++) fx_i64(b, dims[i]);
}
/* §6, then the dtype flag: cpu(0) as every Gluon file has it. */
static inline void fx_ctx_dtype(fx_buf *b, int32_t dev_type, int32_t dtype) {
  fx_i32(b, dev_type);
  fx_i32(b, 0);
  fx_i32(b, dtype);
}

/* §3.2 legacy (V0): u32 ndim (no magic), ndim u32 dims, context, dtype, payload. */
static inline void fx_rec_legacy(fx_buf *b, int ndim, const uint32_t *dims, int32_t dtype, const void *data,
                                 size_t nbytes) {
  fx_u32(b, (uint32_t)ndim);
  for (int i = 0; i < ndim; i++) fx_u32(b, dims[i]);
  fx_ctx_dtype(b, 1, dtype);
  fx_put(b, data, nbytes);
}
/* §3.2 V1: magic, i64 shape, context, dtype, payload (no storage type). ndim -1: a none record,
 * which ends after the shape. */
static inline void fx_rec_v1(fx_buf *b, int ndim, const int64_t *dims, int32_t dtype, const void *data, size_t nbytes) {
  fx_u32(b, FX_V1);
  fx_shape64(b, ndim, dims);
  if (ndim < 0) return;
  fx_ctx_dtype(b, 1, dtype);
  fx_put(b, data, nbytes);
}
/* §3.1 V2/V3 dense: magic, stype 0, shape, context, dtype, payload. A V2 record with ndim 0 or a
 * V3 record with ndim -1 is "none" and ends after the shape. */
static inline void fx_rec_dense(fx_buf *b, uint32_t magic, int ndim, const int64_t *dims, int32_t dtype,
                                const void *data, size_t nbytes) {
  fx_u32(b, magic);
  fx_i32(b, 0);
  fx_shape64(b, ndim, dims);
  if ((magic == FX_V2 && ndim == 0) || (magic == FX_V3 && ndim < 0)) return;
  fx_ctx_dtype(b, 1, dtype);
  fx_put(b, data, nbytes);
}
/* §5 row_sparse (V2): storage shape (nnz_rows, cols), shape (rows, cols), float32 values,
 * int64 row indices. */
static inline void fx_rec_row_sparse(fx_buf *b, int64_t rows, int64_t cols, int64_t nnz_rows, const float *vals,
                                     const int64_t *row_idx) {
  const int64_t sshape[2] = {nnz_rows, cols}, shape[2] = {rows, cols}, ashape[1] = {nnz_rows};
  fx_u32(b, FX_V2);
  fx_i32(b, 1);
  fx_shape64(b, 2, sshape);
  fx_shape64(b, 2, shape);
  fx_ctx_dtype(b, 1, 0);
  fx_i32(b, 6);
  fx_shape64(b, 1, ashape);
  fx_put(b, vals, sizeof(float) * (size_t)(nnz_rows * cols));
  fx_put(b, row_idx, sizeof(int64_t) * (size_t)nnz_rows);
}
/* §5 csr (V2, 2-D): storage shape (nnz,), shape (rows, cols), float32 values, then aux 0 the
 * int64 row pointer (rows + 1) and aux 1 the int64 column indices (nnz). */
static inline void fx_rec_csr(fx_buf *b, int64_t rows, int64_t cols, int64_t nnz, const float *vals,
                              const int64_t *indptr, const int64_t *indices) {
  const int64_t sshape[1] = {nnz}, shape[2] = {rows, cols}, pshape[1] = {rows + 1};
  fx_u32(b, FX_V2);
  fx_i32(b, 2);
  fx_shape64(b, 1, sshape);
  fx_shape64(b, 2, shape);
  fx_ctx_dtype(b, 1, 0);
  fx_i32(b, 6);
  fx_shape64(b, 1, pshape);
  fx_i32(b, 6);
  fx_shape64(b, 1, sshape);
  fx_put(b, vals, sizeof(float) * (size_t)nnz);
  fx_put(b, indptr, sizeof(int64_t) * (size_t)(rows + 1));
  fx_put(b, indices, sizeof(int64_t) * (size_t)nnz);
}

#endif
