/* ndlist.c -- MXNet's NDArray-list binary format (`.params`, `mx.nd.save`), read and written
 * byte for byte per ../shared/spec/params-format.md: the list magic 0x112, then legacy (V0,
 * u32 dims), V1, V2 and V3 records, every dense dtype, sparse records densified, then the
 * optional names list. Every read is bounds-checked: a truncated or corrupt file is an error
 * naming the array and the byte offset, never a trap. */
#include <stdio.h>
#include <stdlib.h>

#include "../core/ndarray.h"
#include "../graph/strmap.h"

#define LIST_MAGIC 0x112ull
#define V1_MAGIC 0xF993FAC8u
#define V2_MAGIC 0xF993FAC9u
#define V3_MAGIC 0xF993FACAu

struct mxw_ndlist {
  int n;
  mxw_ndarray **arrays; /* NULL entries for "none" records */
  char **names;         /* NULL when the file has no names */
};

/* What one array costs beyond its values (handle, storage record, allocator headers): counted
 * against the load's memory limit so that a file of many tiny records is bounded too. */
#define ARRAY_OVERHEAD ((double)(sizeof(mxw_ndarray) + sizeof(mxw_storage) + 64))
/* The default limit: this many times the file's size, plus this slack, plus the bytes of every
 * array whose values are actually in the file. */
#define DEFAULT_FACTOR 8.0
#define DEFAULT_SLACK (1024.0 * 1024.0)

typedef struct reader {
  const uint8_t *p;
  size_t len, off;
  int index, count; /* which array is being read, for messages */
  double limit;     /* > 0: the caller's cap on the bytes this load allocates; 0: the default */
  double used;      /* bytes allocated so far */
  double backed;    /* of which values (and names) present in the file */
} reader;

/* Every length field is compared at its full 64-bit width with the bytes that remain (a size
 * is never narrowed to size_t before it is checked). */
static int need(reader *r, uint64_t n, const char *what) {
  if (n > (uint64_t)(r->len - r->off)) {
    if (r->index >= 0)
      return mxw_fail(
          "truncated or corrupt params data: array %d of %d needs %llu bytes for %s at offset %zu, "
          "but only %zu remain",
          r->index, r->count, (unsigned long long)n, what, r->off, r->len - r->off);
    return mxw_fail("truncated or corrupt params data: %llu bytes needed for %s at offset %zu, only %zu remain",
                    (unsigned long long)n, what, r->off, r->len - r->off);
  }
  return 0;
}

/* Accounts for an allocation of `bytes` (of which `backed` are values read from the file)
 * before it is made: an error when the load would pass its limit. */
static int charge(reader *r, double bytes, double backed, const char *what) {
  double cap = r->limit > 0 ? r->limit : DEFAULT_FACTOR * (double)r->len + DEFAULT_SLACK + r->backed + backed;
  if (r->used + bytes > cap) {
    if (r->limit > 0)
      return mxw_fail(
          "params data: %s needs %.0f bytes, which would take this load past its limit of %.0f bytes "
          "(maxBytes); %.0f are allocated already",
          what, bytes, cap, r->used);
    return mxw_fail(
        "params data: %s needs %.0f bytes, which would take this load past its default limit of %.0f bytes "
        "(8 x the %zu-byte file + 1 MiB + the values present in the file); pass a larger maxBytes to "
        "load it",
        what, bytes, cap, r->len);
  }
  r->used += bytes;
  r->backed += backed;
  return 0;
}

static int rd_u32(reader *r, uint32_t *v, const char *what) {
  MXW_TRY(need(r, 4, what));
  memcpy(v, r->p + r->off, 4); /* little-endian host (wasm32, x86) */
  r->off += 4;
  return 0;
}
static int rd_i32(reader *r, int32_t *v, const char *what) { return rd_u32(r, (uint32_t *)v, what); }
static int rd_u64(reader *r, uint64_t *v, const char *what) {
  MXW_TRY(need(r, 8, what));
  memcpy(v, r->p + r->off, 8);
  r->off += 8;
  return 0;
}

/* A shape's element count must be computable: the product of its non-zero dims (a zero-size
 * shape such as (0, 2^31-1, 2^31-1, 2^31-1) too) at most 2^53, so that no size computed from it
 * later overflows int64. */
static int check_count(reader *r, const mxw_shape *s, size_t at) {
  double n = 1;
  for (int i = 0; i < s->ndim; i++)
    if (s->dims[i] > 0) n *= (double)s->dims[i];
  if (n > 9007199254740992.0) {
    char b[160];
    return mxw_fail("corrupt params data: array %d of %d has shape %s at offset %zu, whose element count overflows",
                    r->index, r->count, mxw_shape_str(s, b, sizeof b), at);
  }
  return 0;
}

/* i32 ndim then ndim i64 dims (V1/V2/V3). ndim -1 (unknown) is reported through *unknown. */
static int rd_shape64(reader *r, mxw_shape *s, int *unknown) {
  int32_t nd;
  MXW_TRY(rd_i32(r, &nd, "a shape's rank"));
  *unknown = 0;
  if (nd == -1) {
    *unknown = 1;
    s->ndim = 0;
    return 0;
  }
  if (nd < 0 || nd > MXW_MAX_NDIM)
    return mxw_fail("corrupt params data: array %d of %d has rank %d at offset %zu (at most %d supported)", r->index,
                    r->count, (int)nd, r->off - 4, MXW_MAX_NDIM);
  s->ndim = nd;
  for (int i = 0; i < nd; i++) {
    uint64_t d;
    MXW_TRY(rd_u64(r, &d, "a dimension"));
    int64_t sd = (int64_t)d;
    if (sd == -1)
      *unknown = 1;
    else if (sd < 0 || sd > 0x7fffffff)
      return mxw_fail("corrupt params data: array %d of %d has dimension %lld at offset %zu", r->index, r->count,
                      (long long)sd, r->off - 8);
    s->dims[i] = sd;
  }
  return check_count(r, s, r->off - 4 - 8 * (size_t)nd);
}

/* The bytes of a shape's values, which must be present from the current offset + skip. */
static int payload_bytes(reader *r, size_t skip, const mxw_shape *s, int dtype, size_t *out) {
  int es = mxw_dtype_size(dtype);
  if (es == 0)
    // GCOVR_EXCL_START: unreachable: read_array checks every dtype flag first
    return mxw_fail("corrupt params data: array %d of %d has unknown dtype flag %d", r->index, r->count, dtype);
  // GCOVR_EXCL_STOP
  double n = (double)es;
  for (int i = 0; i < s->ndim; i++) n *= (double)s->dims[i];
  size_t at = r->off + skip;
  if (n > (double)(r->len - at)) {
    char b[128];
    return mxw_fail(
        "truncated params data: array %d of %d (shape %s, %s) needs %.0f bytes of values at offset %zu, "
        "but only %zu remain",
        r->index, r->count, mxw_shape_str(s, b, sizeof b), mxw_dtype_name(dtype), n, at, r->len - at);
  }
  *out = (size_t)n;
  return 0;
}

/* File payloads are unaligned: read one index element through an aligned copy. */
static int64_t load_index(const uint8_t *base, int dtype, int64_t k) {
  uint64_t tmp = 0;
  int es = mxw_dtype_size(dtype);
  memcpy(&tmp, base + (size_t)k * (size_t)es, (size_t)es);
  double d = mxw_load_f64(&tmp, dtype, 0);
  return d >= -9.0e18 && d <= 9.0e18 ? (int64_t)d : -1; /* NaN or out of int64: an invalid index */
}

/* A sparse record: its values and aux arrays, all present in the file. */
typedef struct sparse_rec {
  const uint8_t *vals, *aux[2];
  int64_t aux_n[2];
  size_t vbytes, total;
} sparse_rec;

/* Locates a sparse record's payloads and checks their shapes agree, before anything is
 * allocated for it. */
static int sparse_locate(reader *r, int stype, const mxw_shape *shape, const mxw_shape *sshape, int dtype, int naux,
                         const int *aux_type, const mxw_shape *aux_shape, sparse_rec *sp) {
  MXW_TRY(payload_bytes(r, 0, sshape, dtype, &sp->vbytes));
  sp->vals = r->p + r->off;
  size_t skip = sp->vbytes;
  for (int i = 0; i < naux; i++) {
    size_t ab;
    if (mxw_dtype_size(aux_type[i]) == 0)
      return mxw_fail("corrupt params data: sparse array %d of %d has unknown index dtype flag %d", r->index, r->count,
                      aux_type[i]);
    MXW_TRY(payload_bytes(r, skip, &aux_shape[i], aux_type[i], &ab));
    sp->aux[i] = r->p + r->off + skip;
    sp->aux_n[i] = mxw_shape_size(&aux_shape[i]);
    skip += ab;
  }
  sp->total = skip;
  if (stype == 1) { /* row_sparse: aux0 = row indices */
    if (shape->ndim == 0)
      return mxw_fail("corrupt params data: row_sparse array %d of %d is 0-dimensional", r->index, r->count);
    int64_t rows = shape->dims[0];
    double row_elems = 1;
    for (int i = 1; i < shape->ndim; i++) row_elems *= (double)shape->dims[i];
    int64_t nnz = sshape->ndim ? sshape->dims[0] : 0;
    if (nnz != sp->aux_n[0] || (double)mxw_shape_size(sshape) != (double)nnz * row_elems || (rows == 0 && nnz))
      return mxw_fail("corrupt params data: row_sparse array %d of %d has inconsistent storage and index shapes",
                      r->index, r->count);
  } else { /* csr: aux0 = indptr (rows + 1), aux1 = column indices (nnz) */
    if (shape->ndim != 2) return mxw_fail("corrupt params data: csr array %d of %d is not 2-D", r->index, r->count);
    if (sp->aux_n[0] != shape->dims[0] + 1 || sp->aux_n[1] != mxw_shape_size(sshape))
      return mxw_fail("corrupt params data: csr array %d of %d has inconsistent indptr/indices shapes", r->index,
                      r->count);
  }
  return 0;
}

/* Scatters a located sparse record into the (zero-filled) dense array. */
static int densify(reader *r, int stype, const mxw_shape *shape, const mxw_shape *sshape, int dtype,
                   const int *aux_type, const sparse_rec *sp, mxw_ndarray *dst) {
  int es = mxw_dtype_size(dtype);
  if (stype == 1) {
    int64_t rows = shape->dims[0], row_elems = rows ? mxw_shape_size(shape) / rows : 0;
    int64_t nnz = sshape->ndim ? sshape->dims[0] : 0;
    for (int64_t k = 0; k < nnz; k++) {
      int64_t row = load_index(sp->aux[0], aux_type[0], k);
      if (row < 0 || row >= rows)
        return mxw_fail("corrupt params data: row_sparse array %d of %d has row index %lld out of range", r->index,
                        r->count, (long long)row);
      memcpy((uint8_t *)dst->t.data + (size_t)(row * row_elems) * es, sp->vals + (size_t)(k * row_elems) * es,
             (size_t)row_elems * es);
    }
  } else {
    int64_t rows = shape->dims[0], cols = shape->dims[1], nnz = mxw_shape_size(sshape);
    for (int64_t row = 0; row < rows; row++) {
      int64_t b = load_index(sp->aux[0], aux_type[0], row), e = load_index(sp->aux[0], aux_type[0], row + 1);
      if (b < 0 || e < b || e > nnz)
        return mxw_fail("corrupt params data: csr array %d of %d has a bad row pointer", r->index, r->count);
      for (int64_t k = b; k < e; k++) {
        int64_t c = load_index(sp->aux[1], aux_type[1], k);
        if (c < 0 || c >= cols)
          return mxw_fail("corrupt params data: csr array %d of %d has column index %lld out of range", r->index,
                          r->count, (long long)c);
        memcpy((uint8_t *)dst->t.data + (size_t)(row * cols + c) * es, sp->vals + (size_t)k * es, (size_t)es);
      }
    }
  }
  return 0;
}

/* One record; *out stays NULL for a "none" array. Every size is checked against the bytes
 * present, and charged to the load's limit, before the array is allocated. */
static int read_array(reader *r, mxw_ndarray **out) {
  *out = NULL;
  size_t start = r->off;
  uint32_t magic;
  MXW_TRY(rd_u32(r, &magic, "the record header"));
  mxw_shape shape, sshape;
  int unknown = 0, stype = 0, naux = 0;
  int aux_type[2] = {0, 0};
  mxw_shape aux_shape[2];
  int32_t dev_type, dev_id, dtype;
  if (magic == V2_MAGIC || magic == V3_MAGIC) {
    int np = magic == V3_MAGIC;
    int32_t st;
    MXW_TRY(rd_i32(r, &st, "the storage type"));
    if (st != 0 && st != 1 && st != 2)
      return mxw_fail("corrupt params data: array %d of %d has storage type %d at offset %zu", r->index, r->count,
                      (int)st, r->off - 4);
    stype = st;
    naux = stype;
    if (naux) {
      MXW_TRY(rd_shape64(r, &sshape, &unknown));
      if (unknown)
        return mxw_fail("corrupt params data: sparse array %d of %d has an unknown storage shape", r->index, r->count);
    }
    MXW_TRY(rd_shape64(r, &shape, &unknown));
    if ((!np && shape.ndim == 0 && !unknown) || (np && unknown)) return 0; /* none */
    if (unknown) return mxw_fail("corrupt params data: array %d of %d has an unknown shape", r->index, r->count);
    MXW_TRY(rd_i32(r, &dev_type, "the context"));
    MXW_TRY(rd_i32(r, &dev_id, "the context"));
    MXW_TRY(rd_i32(r, &dtype, "the dtype"));
    for (int i = 0; i < naux; i++) {
      MXW_TRY(rd_i32(r, &aux_type[i], "a sparse index dtype"));
      MXW_TRY(rd_shape64(r, &aux_shape[i], &unknown));
      if (unknown)
        return mxw_fail("corrupt params data: sparse array %d of %d has an unknown index shape", r->index, r->count);
    }
  } else {
    if (magic == V1_MAGIC) {
      MXW_TRY(rd_shape64(r, &shape, &unknown));
      if (unknown) return 0;
    } else { /* legacy: the u32 is ndim, then u32 dims */
      if (magic > MXW_MAX_NDIM)
        return mxw_fail(
            "corrupt params data: array %d of %d starts at offset %zu with 0x%08X, which is neither a "
            "record magic nor a rank",
            r->index, r->count, start, (unsigned)magic);
      shape.ndim = (int32_t)magic;
      for (int i = 0; i < shape.ndim; i++) {
        uint32_t d;
        MXW_TRY(rd_u32(r, &d, "a dimension"));
        if (d > 0x7fffffffu)
          return mxw_fail("corrupt params data: array %d of %d has dimension %u at offset %zu", r->index, r->count,
                          (unsigned)d, r->off - 4);
        shape.dims[i] = d;
      }
      MXW_TRY(check_count(r, &shape, start));
    }
    MXW_TRY(rd_i32(r, &dev_type, "the context"));
    MXW_TRY(rd_i32(r, &dev_id, "the context"));
    MXW_TRY(rd_i32(r, &dtype, "the dtype"));
  }
  (void)dev_type;
  (void)dev_id;
  if (mxw_dtype_size(dtype) == 0)
    return mxw_fail("corrupt params data: array %d of %d has unknown dtype flag %d", r->index, r->count, (int)dtype);
  char what[64];
  snprintf(what, sizeof what, "array %d of %d", r->index, r->count);
  if (naux) {
    sparse_rec sp;
    MXW_TRY(sparse_locate(r, stype, &shape, &sshape, dtype, naux, aux_type, aux_shape, &sp));
    double dense = (double)mxw_dtype_size(dtype);
    for (int i = 0; i < shape.ndim; i++) dense *= (double)shape.dims[i];
    MXW_TRY(charge(r, ARRAY_OVERHEAD + dense, (double)sp.vbytes, what)); /* the dense form of a sparse record */
    mxw_ndarray *a = mxw_ndarray_zeros(&shape, dtype); /* densify writes the stored rows/values only */
    if (!a) return -1;
    if (densify(r, stype, &shape, &sshape, dtype, aux_type, &sp, a) != 0) {
      mxw_ndarray_free(a);
      return -1;
    }
    r->off += sp.total;
    *out = a;
    return 0;
  }
  size_t nb;
  MXW_TRY(payload_bytes(r, 0, &shape, dtype, &nb));
  MXW_TRY(charge(r, ARRAY_OVERHEAD + (double)nb, (double)nb, what));
  mxw_ndarray *a = mxw_ndarray_alloc(&shape, dtype);
  if (!a) return -1;
  memcpy(a->t.data, r->p + r->off, nb);
  r->off += nb;
  *out = a;
  return 0;
}

int mxw_ndlist_free(mxw_ndlist *l) {
  if (!l) return 0;
  for (int i = 0; i < l->n; i++) {
    mxw_ndarray_free(l->arrays[i]);
    if (l->names) free(l->names[i]);
  }
  free(l->arrays);
  free(l->names);
  free(l);
  return 0;
}

/* The names list: k names, each a u64 length then its bytes; no NUL inside, no duplicate. */
static int read_names(reader *r, mxw_ndlist *l) {
  uint64_t k;
  MXW_TRY(rd_u64(r, &k, "the name count"));
  if (k == 0) return 0;
  if (k != (uint64_t)l->n)
    return mxw_fail("corrupt params data: %llu names for %d arrays", (unsigned long long)k, l->n);
  MXW_TRY(charge(r, (double)sizeof(char *) * (double)l->n, 0, "the names"));
  l->names = (char **)calloc((size_t)l->n, sizeof *l->names);
  MXW_CHECK(l->names != NULL, "out of memory");
  for (int i = 0; i < l->n; i++) {
    uint64_t sl;
    r->index = i;
    MXW_TRY(rd_u64(r, &sl, "a name's length"));
    MXW_TRY(need(r, sl, "its name"));
    if (memchr(r->p + r->off, 0, (size_t)sl))
      return mxw_fail("corrupt params data: the name of array %d of %d contains a NUL byte (at offset %zu)", i, l->n,
                      r->off);
    MXW_TRY(charge(r, (double)sl + 17, (double)sl, "a name"));
    MXW_CHECK((l->names[i] = (char *)malloc((size_t)sl + 1)) != NULL, "out of memory");
    memcpy(l->names[i], r->p + r->off, (size_t)sl);
    l->names[i][sl] = 0;
    r->off += (size_t)sl;
  }
  r->index = -1;
  /* a name given twice would silently drop the earlier array (a dict keeps the last) */
  mxw_strmap seen;
  MXW_TRY(charge(r, 32.0 * (double)l->n + 64, 0, "the name index"));
  MXW_CHECK(mxw_strmap_init(&seen, (size_t)l->n) == 0, "out of memory");
  int rc = 0;
  for (int i = 0; i < l->n && rc == 0; i++) {
    const int *prev = mxw_strmap_find(&seen, l->names[i]);
    if (prev)
      rc = mxw_fail(
          "corrupt params data: the name '%s' is given twice (arrays %d and %d of %d); MXNet's dict would "
          "silently keep only the last",
          l->names[i], *prev, i, l->n);
    else if (mxw_strmap_put(&seen, l->names[i], i) != 0)
      // GCOVR_EXCL_START: allocation failure, not reachable natively
      rc = mxw_fail("out of memory");
    // GCOVR_EXCL_STOP
  }
  mxw_strmap_free(&seen);
  return rc;
}

int mxw_ndlist_load_ex(const uint8_t *bytes, size_t len, double max_bytes, mxw_ndlist **out) {
  MXW_CHECK(out != NULL && (bytes != NULL || len == 0), "NULL argument");
  MXW_CHECK(max_bytes >= 0 && max_bytes == max_bytes,
            "the memory limit of a load must be a non-negative number of bytes (0 for the default), got %g", max_bytes);
  reader r = {bytes, len, 0, -1, 0, max_bytes, 0, 0};
  uint64_t magic, reserved, n;
  MXW_TRY(rd_u64(&r, &magic, "the file header"));
  MXW_CHECK(magic == LIST_MAGIC, "not an MXNet NDArray file: header is 0x%llX, expected 0x112",
            (unsigned long long)magic);
  MXW_TRY(rd_u64(&r, &reserved, "the reserved header word"));
  MXW_TRY(rd_u64(&r, &n, "the array count"));
  /* every record takes at least 8 bytes (a V1 record of unknown shape); the check allows 4 so
   * that a file cut short names the record it cuts. A larger count is corrupt, and nothing is
   * allocated for it. */
  MXW_CHECK(n <= (uint64_t)(len - r.off) / 4 && n < (uint64_t)INT32_MAX,
            "corrupt params data: the file claims %llu arrays but has %zu bytes left", (unsigned long long)n,
            len - r.off);
  MXW_TRY(charge(&r, (double)sizeof(mxw_ndlist) + (double)sizeof(mxw_ndarray *) * (double)n, 0, "the list"));
  mxw_ndlist *l = (mxw_ndlist *)calloc(1, sizeof *l);
  if (l) l->arrays = (mxw_ndarray **)calloc(n ? (size_t)n : 1, sizeof *l->arrays);
  if (!l || !l->arrays) {
    // GCOVR_EXCL_START: allocation failure, not reachable natively
    free(l);
    return mxw_fail("out of memory");
    // GCOVR_EXCL_STOP
  }
  r.count = (int)n;
  for (uint64_t i = 0; i < n; i++) {
    r.index = (int)i;
    l->n = (int)i;
    if (read_array(&r, &l->arrays[i]) != 0) {
      mxw_ndlist_free(l);
      return -1;
    }
  }
  l->n = (int)n;
  r.index = -1;
  if (read_names(&r, l) != 0) {
    mxw_ndlist_free(l);
    return -1;
  }
  *out = l;
  return 0;
}

int mxw_ndlist_load(const uint8_t *bytes, size_t len, mxw_ndlist **out) {
  return mxw_ndlist_load_ex(bytes, len, 0, out);
}

int mxw_ndlist_size(const mxw_ndlist *l) { return l ? l->n : 0; }
int mxw_ndlist_has_names(const mxw_ndlist *l) { return l && l->names != NULL; }
const char *mxw_ndlist_name(const mxw_ndlist *l, int i) {
  return l && l->names && i >= 0 && i < l->n ? l->names[i] : NULL;
}
mxw_ndarray *mxw_ndlist_take(mxw_ndlist *l, int i) {
  if (!l || i < 0 || i >= l->n) return NULL;
  mxw_ndarray *a = l->arrays[i];
  l->arrays[i] = NULL;
  return a;
}

/* ---- writer: V2 records exactly as MXNet 1.x writes them ------------------------------------- */
typedef struct writer {
  uint8_t *p;
  size_t len, cap;
} writer;
static int wr(writer *w, const void *src, size_t n) {
  if (w->len + n > w->cap) {
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + n) cap *= 2;
    uint8_t *q = (uint8_t *)realloc(w->p, cap);
    MXW_CHECK(q != NULL, "out of memory writing params data");
    w->p = q;
    w->cap = cap;
  }
  memcpy(w->p + w->len, src, n);
  w->len += n;
  return 0;
}
static int wr_u32(writer *w, uint32_t v) { return wr(w, &v, 4); }
static int wr_u64(writer *w, uint64_t v) { return wr(w, &v, 8); }

int mxw_ndlist_save(int n, mxw_ndarray *const *arrays, const char *const *names, uint8_t **out, size_t *out_len) {
  MXW_CHECK(out && out_len && n >= 0 && (n == 0 || arrays), "NULL argument");
  for (int i = 0; i < n; i++) {
    MXW_CHECK(arrays[i] != NULL, "array %d is NULL", i);
    /* V2 cannot represent a 0-d array (ndim 0 means "none"); MXNet's legacy mode has none. */
    MXW_CHECK(arrays[i]->t.shape.ndim > 0, "array %d%s%s is 0-dimensional, which the V2 format cannot store", i,
              names ? " " : "", names ? names[i] : "");
  }
  writer w = {NULL, 0, 0};
  int rc = wr_u64(&w, LIST_MAGIC) || wr_u64(&w, 0) || wr_u64(&w, (uint64_t)n);
  for (int i = 0; i < n && rc == 0; i++) {
    const mxw_tensor *t = &arrays[i]->t;
    rc = wr_u32(&w, V2_MAGIC) || wr_u32(&w, 0) || wr_u32(&w, (uint32_t)t->shape.ndim);
    for (int d = 0; d < t->shape.ndim && rc == 0; d++) rc = wr_u64(&w, (uint64_t)t->shape.dims[d]);
    if (rc == 0) rc = wr_u32(&w, 1) || wr_u32(&w, 0) || wr_u32(&w, (uint32_t)t->dtype);
    if (rc == 0) rc = wr(&w, t->data, (size_t)mxw_shape_size(&t->shape) * (size_t)mxw_dtype_size(t->dtype));
  }
  if (rc == 0) rc = wr_u64(&w, names ? (uint64_t)n : 0);
  for (int i = 0; names && i < n && rc == 0; i++) {
    size_t sl = strlen(names[i]);
    rc = wr_u64(&w, sl) || wr(&w, names[i], sl);
  }
  if (rc != 0) {
    free(w.p);
    return -1;
  }
  *out = w.p;
  *out_len = w.len;
  return 0;
}

void mxw_buffer_free(void *p) { free(p); }
