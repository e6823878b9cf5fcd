/* The .params reader and writer without any real file: the byte-level worked examples of
 * ../shared/spec/params-format.md, and fixtures of every record version MXNet wrote (legacy V0
 * with u32 dims, V1, V2, V3; dense in every dtype, none records, row_sparse and csr; named and
 * unnamed lists) built by tests/c/fixtures.h from the spec, each checked against hand-worked
 * bytes and values. test_real_ndlist.c runs the reader on real MXNet files when they are there. */
#include <stdlib.h>

#include "mxw_test.h"
#include "fixtures.h"

/* §9 of params-format.md: nd.save of {'arg:w': [[1,2],[3,4]], 'aux:m': [0.5, 0, -1]}. */
static const uint8_t k_worked[] = {
    0x12, 0x01, 0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    2,    0,
    0,    0,    0,    0,    0,    0,    0xc9, 0xfa, 0x93, 0xf9, 0,    0,    0,    0,    2,    0,    0,    0,
    2,    0,    0,    0,    0,    0,    0,    0,    2,    0,    0,    0,    0,    0,    0,    0,    1,    0,
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40,
    0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40, 0xc9, 0xfa, 0x93, 0xf9, 0,    0,    0,    0,    1,    0,
    0,    0,    3,    0,    0,    0,    0,    0,    0,    0,    1,    0,    0,    0,    0,    0,    0,    0,
    0,    0,    0,    0,    0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0xbf, 2,    0,
    0,    0,    0,    0,    0,    0,    5,    0,    0,    0,    0,    0,    0,    0,    'a',  'r',  'g',  ':',
    'w',  5,    0,    0,    0,    0,    0,    0,    0,    'a',  'u',  'x',  ':',  'm'};

static void test_writer_matches_worked_example(void **state) {
  (void)state;
  assert_int_equal(sizeof k_worked, 158);
  int32_t s1[2] = {2, 2}, s2[1] = {3};
  float v1[4] = {1, 2, 3, 4}, v2[3] = {0.5f, 0.f, -1.f};
  mxw_ndarray *arrs[2] = {t_array(2, s1, v1), t_array(1, s2, v2)};
  const char *names[2] = {"arg:w", "aux:m"};
  uint8_t *out = NULL;
  size_t len = 0;
  assert_int_equal(mxw_ndlist_save(2, arrs, names, &out, &len), 0);
  assert_int_equal(len, sizeof k_worked);
  assert_memory_equal(out, k_worked, sizeof k_worked);
  mxw_buffer_free(out);
  /* the list form ends with a zero name count: 132 bytes */
  assert_int_equal(mxw_ndlist_save(2, arrs, NULL, &out, &len), 0);
  assert_int_equal(len, 132);
  assert_memory_equal(out, k_worked, 124);
  mxw_buffer_free(out);
  mxw_ndarray_free(arrs[0]);
  mxw_ndarray_free(arrs[1]);
}

/* §5's row-sparse record (shape (4,2), rows 1 and 3 = [[1,2],[3,4]]) in a one-array list. */
static void test_row_sparse_densified(void **state) {
  (void)state;
  uint8_t f[24 + 108 + 8];
  memset(f, 0, sizeof f);
  f[0] = 0x12;
  f[1] = 0x01;
  f[16] = 1;
  uint8_t *r = f + 24;
  const uint8_t magic[4] = {0xc9, 0xfa, 0x93, 0xf9};
  memcpy(r, magic, 4);
  r[0x04] = 1; /* stype row_sparse */
  r[0x08] = 2;
  r[0x0c] = 2;
  r[0x14] = 2; /* storage shape (2, 2) */
  r[0x1c] = 2;
  r[0x20] = 4;
  r[0x28] = 2; /* shape (4, 2) */
  r[0x30] = 1; /* cpu */
  r[0x3c] = 6; /* aux int64 */
  r[0x40] = 1;
  r[0x44] = 2; /* aux shape (2,) */
  float vals[4] = {1, 2, 3, 4};
  memcpy(r + 0x4c, vals, 16);
  r[0x5c] = 1;
  r[0x64] = 3; /* row indices 1, 3 */
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(f, sizeof f, &l), 0);
  mxw_ndarray *a = mxw_ndlist_take(l, 0);
  const float want[8] = {0, 0, 1, 2, 0, 0, 3, 4};
  assert_memory_equal(mxw_ndarray_data(a), want, sizeof want);
  mxw_ndarray_free(a);
  mxw_ndlist_free(l);
}

/* The fixture writer reproduces the spec's 158 bytes, so the fixtures below follow the spec. */
static void test_fixture_writer_matches_worked_example(void **state) {
  (void)state;
  fx_buf b = {0};
  const int64_t s1[2] = {2, 2}, s2[1] = {3};
  const float v1[4] = {1, 2, 3, 4}, v2[3] = {0.5f, 0.f, -1.f};
  const char *names[2] = {"arg:w", "aux:m"};
  fx_header(&b, 2);
  fx_rec_dense(&b, FX_V2, 2, s1, 0, v1, sizeof v1);
  fx_rec_dense(&b, FX_V2, 1, s2, 0, v2, sizeof v2);
  fx_names(&b, 2, names);
  assert_int_equal(b.len, 158);
  assert_memory_equal(b.p, k_worked, 158);
  free(b.p);
}

/* Reading the worked example back: names, shapes, values; the np-mode (V3) copy, which differs
 * only in the two magics, reads the same. */
static void test_worked_example_loads(void **state) {
  (void)state;
  uint8_t v3[158];
  memcpy(v3, k_worked, 158);
  v3[0x18] = v3[0x50] = 0xca;
  const uint8_t *files[2] = {k_worked, v3};
  for (int f = 0; f < 2; f++) {
    mxw_ndlist *l = NULL;
    assert_int_equal(mxw_ndlist_load(files[f], 158, &l), 0);
    assert_int_equal(mxw_ndlist_size(l), 2);
    assert_true(mxw_ndlist_has_names(l));
    assert_string_equal(mxw_ndlist_name(l, 0), "arg:w");
    assert_string_equal(mxw_ndlist_name(l, 1), "aux:m");
    mxw_ndarray *w = mxw_ndlist_take(l, 0), *m = mxw_ndlist_take(l, 1);
    const int32_t sw[2] = {2, 2}, sm[1] = {3};
    const float vw[4] = {1, 2, 3, 4}, vm[3] = {0.5f, 0.f, -1.f};
    t_expect_shape(w, 2, sw);
    t_expect_shape(m, 1, sm);
    t_expect_f32(w, vw, 4, 0);
    t_expect_f32(m, vm, 3, 0);
    mxw_ndarray_free(w);
    mxw_ndarray_free(m);
    mxw_ndlist_free(l);
  }
  /* the list form: 132 bytes, no names */
  uint8_t list[132];
  memcpy(list, k_worked, 124);
  memset(list + 124, 0, 8);
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(list, sizeof list, &l), 0);
  assert_int_equal(mxw_ndlist_size(l), 2);
  assert_false(mxw_ndlist_has_names(l));
  assert_null(mxw_ndlist_name(l, 0));
  mxw_ndlist_free(l);
  /* an empty list is 32 bytes */
  uint8_t empty[32] = {0x12, 0x01};
  assert_int_equal(mxw_ndlist_load(empty, 32, &l), 0);
  assert_int_equal(mxw_ndlist_size(l), 0);
  mxw_ndlist_free(l);
}

/* Legacy (V0) unnamed list, as MXNet 0.x wrote it: no record magic, u32 ndim and u32 dims. */
static void test_legacy_v0_unnamed_list(void **state) {
  (void)state;
  fx_buf b = {0};
  const uint32_t d1[2] = {2, 3}, d2[1] = {4}, d3[3] = {1, 1, 2};
  const float a1[6] = {0, 1, 2, 3, 4, 5};
  const int32_t a2[4] = {-1, 0, 7, 65536};
  const double a3[2] = {0.25, -3};
  fx_header(&b, 3);
  fx_rec_legacy(&b, 2, d1, MXW_FLOAT32, a1, sizeof a1);
  fx_rec_legacy(&b, 1, d2, MXW_INT32, a2, sizeof a2);
  fx_rec_legacy(&b, 3, d3, MXW_FLOAT64, a3, sizeof a3);
  fx_names(&b, 0, NULL);
  /* hand-worked: 24 header + (4+8+12+24) + (4+4+12+16) + (4+12+12+16) + 8 = 160 bytes */
  assert_int_equal(b.len, 160);
  const uint8_t rec0[20] = {2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  assert_memory_equal(b.p + 24, rec0, 20); /* ndim 2, dims 2 3 (u32), cpu, dev 0 */
  const uint8_t rec1[16] = {1, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  assert_memory_equal(b.p + 72, rec1, 16); /* record 1 at 24 + 48: ndim 1, dim 4, cpu, 0 */
  assert_int_equal(b.p[88], MXW_INT32);    /* its dtype flag */
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), 0);
  assert_int_equal(mxw_ndlist_size(l), 3);
  assert_false(mxw_ndlist_has_names(l));
  mxw_ndarray *x = mxw_ndlist_take(l, 0);
  const int32_t s1[2] = {2, 3};
  t_expect_shape(x, 2, s1);
  assert_int_equal(mxw_ndarray_dtype(x), MXW_FLOAT32);
  t_expect_f32(x, a1, 6, 0);
  mxw_ndarray_free(x);
  x = mxw_ndlist_take(l, 1);
  assert_int_equal(mxw_ndarray_dtype(x), MXW_INT32);
  assert_memory_equal(mxw_ndarray_data(x), a2, sizeof a2);
  mxw_ndarray_free(x);
  x = mxw_ndlist_take(l, 2);
  const int32_t s3[3] = {1, 1, 2};
  t_expect_shape(x, 3, s3);
  t_expect_f64(x, a3, 2, 0);
  mxw_ndarray_free(x);
  mxw_ndlist_free(l);
  free(b.p);
}

/* V1 (MXNet 0.9-0.11 checkpoints): i64 dims, no storage type; names in arbitrary order; an
 * unknown shape (ndim -1) is a none record that ends after its shape. */
static void test_v1_named_with_none(void **state) {
  (void)state;
  fx_buf b = {0};
  const int64_t sb[1] = {1}, sw[2] = {1, 2};
  const float bias[1] = {0.25f}, w[2] = {0.5f, 2.f};
  const char *names[3] = {"arg:fc1_bias", "arg:fc1_weight", "x"};
  fx_header(&b, 3);
  fx_rec_v1(&b, 1, sb, 0, bias, sizeof bias);
  fx_rec_v1(&b, 2, sw, 0, w, sizeof w);
  fx_rec_v1(&b, -1, NULL, 0, NULL, 0);
  fx_names(&b, 3, names);
  /* 24 + (4+4+8+12+4) + (4+4+16+12+8) + (4+4) + 8 + (8+12) + (8+14) + (8+1) = 167 */
  assert_int_equal(b.len, 167);
  const uint8_t v1magic[4] = {0xc8, 0xfa, 0x93, 0xf9};
  assert_memory_equal(b.p + 24, v1magic, 4);
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), 0);
  assert_int_equal(mxw_ndlist_size(l), 3);
  assert_string_equal(mxw_ndlist_name(l, 1), "arg:fc1_weight");
  assert_string_equal(mxw_ndlist_name(l, 2), "x");
  mxw_ndarray *x = mxw_ndlist_take(l, 1);
  const int32_t s[2] = {1, 2};
  t_expect_shape(x, 2, s);
  t_expect_f32(x, w, 2, 0);
  mxw_ndarray_free(x);
  x = mxw_ndlist_take(l, 0);
  t_expect_f32(x, bias, 1, 0);
  mxw_ndarray_free(x);
  assert_null(mxw_ndlist_take(l, 2));
  mxw_ndlist_free(l);
  free(b.p);
}

/* V2 records in every dtype 1.9.1 can save, plus 2.x's int16/uint16/uint32/uint64: the payload
 * comes back bit for bit under its own dtype; a 0-size dimension has an empty payload; a V2
 * record with ndim 0 is none. */
static void test_v2_every_dtype(void **state) {
  (void)state;
  const double f64[2] = {1.5, -2};
  const uint16_t f16[3] = {0x3C00, 0xC000, 0x3800}; /* 1, -2, 0.5 */
  const uint8_t u8[2] = {0, 255};
  const int32_t i32[2] = {-7, 1 << 30};
  const int8_t i8[2] = {-128, 127};
  const int64_t i64[2] = {-(1ll << 40), 3};
  const uint8_t bo[3] = {1, 0, 1};
  const int16_t i16[2] = {-300, 300};
  const uint16_t u16[2] = {0, 65535};
  const uint32_t u32[2] = {1, 4000000000u};
  const uint64_t u64[2] = {0, 18000000000000000000ull};
  const uint16_t bf16[2] = {0x3F80, 0xC040}; /* 1, -3 */
  struct {
    int dtype;
    int64_t n;
    const void *data;
    size_t nb;
  } c[] = {
      {MXW_FLOAT64, 2, f64, sizeof f64}, {MXW_FLOAT16, 3, f16, sizeof f16}, {MXW_UINT8, 2, u8, sizeof u8},
      {MXW_INT32, 2, i32, sizeof i32},   {MXW_INT8, 2, i8, sizeof i8},      {MXW_INT64, 2, i64, sizeof i64},
      {MXW_BOOL, 3, bo, sizeof bo},      {MXW_INT16, 2, i16, sizeof i16},   {MXW_UINT16, 2, u16, sizeof u16},
      {MXW_UINT32, 2, u32, sizeof u32},  {MXW_UINT64, 2, u64, sizeof u64},  {MXW_BFLOAT16, 2, bf16, sizeof bf16},
  };
  const int nc = (int)(sizeof c / sizeof c[0]);
  fx_buf b = {0};
  fx_header(&b, (uint64_t)nc + 2);
  for (int i = 0; i < nc; i++) fx_rec_dense(&b, FX_V2, 1, &c[i].n, c[i].dtype, c[i].data, c[i].nb);
  const int64_t empty[2] = {0, 3};
  fx_rec_dense(&b, FX_V2, 2, empty, MXW_FLOAT32, NULL, 0);
  fx_rec_dense(&b, FX_V2, 0, NULL, 0, NULL, 0); /* none */
  fx_names(&b, 0, NULL);
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), 0);
  assert_int_equal(mxw_ndlist_size(l), nc + 2);
  for (int i = 0; i < nc; i++) {
    mxw_ndarray *x = mxw_ndlist_take(l, i);
    assert_int_equal(mxw_ndarray_dtype(x), c[i].dtype);
    assert_int_equal((int64_t)mxw_ndarray_size(x), c[i].n);
    assert_memory_equal(mxw_ndarray_data(x), c[i].data, c[i].nb);
    mxw_ndarray_free(x);
  }
  mxw_ndarray *e = mxw_ndlist_take(l, nc);
  const int32_t se[2] = {0, 3};
  t_expect_shape(e, 2, se);
  assert_int_equal((int)mxw_ndarray_size(e), 0);
  mxw_ndarray_free(e);
  assert_null(mxw_ndlist_take(l, nc + 1));
  mxw_ndlist_free(l);
  free(b.p);
}

/* V3 (np shape semantics): ndim 0 is a real 0-d scalar with one element, ndim -1 is none. */
static void test_v3_np_semantics(void **state) {
  (void)state;
  fx_buf b = {0};
  const float scalar = 42.f, vec[2] = {-1.f, 8.f};
  const int64_t s2[1] = {2};
  fx_header(&b, 3);
  fx_rec_dense(&b, FX_V3, 0, NULL, MXW_FLOAT32, &scalar, 4);
  fx_rec_dense(&b, FX_V3, -1, NULL, 0, NULL, 0);
  fx_rec_dense(&b, FX_V3, 1, s2, MXW_FLOAT32, vec, sizeof vec);
  const char *names[3] = {"s", "none", "v"};
  fx_names(&b, 3, names);
  /* 24 + (4+4+4+12+4) + (4+4+4) + (4+4+4+8+12+8) + 8 + 9 + 12 + 9 = 142 */
  assert_int_equal(b.len, 142);
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), 0);
  mxw_ndarray *s = mxw_ndlist_take(l, 0);
  assert_int_equal(mxw_ndarray_ndim(s), 0);
  assert_int_equal((int)mxw_ndarray_size(s), 1);
  t_expect_f32(s, &scalar, 1, 0);
  mxw_ndarray_free(s);
  assert_null(mxw_ndlist_take(l, 1));
  mxw_ndarray *v = mxw_ndlist_take(l, 2);
  t_expect_f32(v, vec, 2, 0);
  mxw_ndarray_free(v);
  mxw_ndlist_free(l);
  free(b.p);
}

/* csr (2, 3) = [[0, 5, 0], [7, 0, 9]]: indptr [0, 1, 3], indices [1, 0, 2], values [5, 7, 9];
 * and row_sparse through the fixture writer (the hand-built bytes above are §5's example). */
static void test_sparse_records_densified(void **state) {
  (void)state;
  fx_buf b = {0};
  const float cv[3] = {5, 7, 9}, rv[2] = {-1, 6};
  const int64_t indptr[3] = {0, 1, 3}, indices[3] = {1, 0, 2}, rows[1] = {2};
  fx_header(&b, 2);
  fx_rec_csr(&b, 2, 3, 3, cv, indptr, indices);
  fx_rec_row_sparse(&b, 3, 2, 1, rv, rows);
  fx_names(&b, 0, NULL);
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), 0);
  mxw_ndarray *c = mxw_ndlist_take(l, 0), *r = mxw_ndlist_take(l, 1);
  const int32_t sc[2] = {2, 3}, sr[2] = {3, 2};
  const float wc[6] = {0, 5, 0, 7, 0, 9}, wr[6] = {0, 0, 0, 0, -1, 6};
  t_expect_shape(c, 2, sc);
  t_expect_f32(c, wc, 6, 0);
  t_expect_shape(r, 2, sr);
  t_expect_f32(r, wr, 6, 0);
  mxw_ndarray_free(c);
  mxw_ndarray_free(r);
  mxw_ndlist_free(l);
  /* a column index out of range is an error, not a write out of bounds */
  const int64_t bad_idx[3] = {1, 0, 3};
  b.len = 0;
  fx_header(&b, 1);
  fx_rec_csr(&b, 2, 3, 3, cv, indptr, bad_idx);
  fx_names(&b, 0, NULL);
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), -1);
  assert_error_contains("csr");
  free(b.p);
}

/* One named file holding every version (a reader decides per record), then every truncation
 * and random byte mutations of it: an error naming what was cut, or a parse; never a crash. */
static void fx_every_version(fx_buf *b) {
  const uint32_t d0[2] = {1, 2};
  const int64_t d2[2] = {2, 1};
  const float a[2] = {1, 2}, rv[2] = {3, 4}, cv[1] = {5};
  const int64_t rows[1] = {1}, indptr[3] = {0, 0, 1}, indices[1] = {1};
  const char *names[6] = {"legacy", "v1", "v2", "v3", "rsp", "csr"};
  fx_header(b, 6);
  fx_rec_legacy(b, 2, d0, 0, a, sizeof a);
  fx_rec_v1(b, 2, d2, 0, a, sizeof a);
  fx_rec_dense(b, FX_V2, 2, d2, 0, a, sizeof a);
  fx_rec_dense(b, FX_V3, 2, d2, 0, a, sizeof a);
  fx_rec_row_sparse(b, 2, 2, 1, rv, rows);
  fx_rec_csr(b, 2, 2, 1, cv, indptr, indices);
  fx_names(b, 6, names);
}

static void test_every_version_in_one_file_and_its_corruptions(void **state) {
  (void)state;
  fx_buf b = {0};
  fx_every_version(&b);
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), 0);
  assert_int_equal(mxw_ndlist_size(l), 6);
  const float want[6][4] = {{1, 2}, {1, 2}, {1, 2}, {1, 2}, {0, 0, 3, 4}, {0, 0, 0, 5}};
  for (int i = 0; i < 6; i++) {
    mxw_ndarray *x = mxw_ndlist_take(l, i);
    t_expect_f32(x, want[i], i < 4 ? 2 : 4, 0);
    mxw_ndarray_free(x);
  }
  assert_string_equal(mxw_ndlist_name(l, 5), "csr");
  mxw_ndlist_free(l);
  for (size_t cut = 0; cut < b.len; cut++) {
    uint8_t *p = malloc(cut ? cut : 1);
    memcpy(p, b.p, cut);
    assert_int_equal(mxw_ndlist_load(p, cut, &l), -1);
    assert_true(strstr(mxw_get_last_error(), "truncated") || strstr(mxw_get_last_error(), "corrupt") ||
                strstr(mxw_get_last_error(), "not an MXNet"));
    free(p);
  }
  assert_int_equal(mxw_ndlist_load(b.p, 60, &l), -1);
  assert_error_contains("array 1 of 6"); /* the V1 record is cut */
  assert_error_contains("offset");
  uint32_t seed = 99;
  for (int trial = 0; trial < 3000; trial++) {
    uint8_t *p = malloc(b.len);
    memcpy(p, b.p, b.len);
    for (int k = 0; k < 3; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = (seed >> 8) % b.len;
      seed = seed * 1103515245u + 12345u;
      p[at] = (uint8_t)(seed >> 16);
    }
    if (mxw_ndlist_load(p, b.len, &l) == 0) mxw_ndlist_free(l);
    free(p);
  }
  free(b.p);
}

/* What MXNet's loader rejects: a wrong list magic, a name count other than 0 or N, an unknown
 * storage type or dtype flag, a legacy rank beyond what any array has. */
static void test_invalid_files_are_errors(void **state) {
  (void)state;
  const int64_t s1[1] = {1};
  const float one = 1;
  mxw_ndlist *l = NULL;
  fx_buf b = {0};
  fx_u64(&b, 0x113);
  fx_u64(&b, 0);
  fx_u64(&b, 0);
  fx_u64(&b, 0);
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), -1);
  assert_error_contains("not an MXNet NDArray file");
  b.len = 0; /* two arrays, one name */
  const char *one_name[1] = {"a"};
  fx_header(&b, 2);
  fx_rec_dense(&b, FX_V2, 1, s1, 0, &one, 4);
  fx_rec_dense(&b, FX_V2, 1, s1, 0, &one, 4);
  fx_names(&b, 1, one_name);
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), -1);
  assert_error_contains("1 names for 2 arrays");
  b.len = 0; /* storage type 3 */
  fx_header(&b, 1);
  fx_u32(&b, FX_V2);
  fx_i32(&b, 3);
  fx_shape64(&b, 1, s1);
  fx_ctx_dtype(&b, 1, 0);
  fx_put(&b, &one, 4);
  fx_names(&b, 0, NULL);
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), -1);
  assert_error_contains("storage type 3");
  b.len = 0; /* dtype flag 13 */
  fx_header(&b, 1);
  fx_rec_dense(&b, FX_V2, 1, s1, 13, &one, 4);
  fx_names(&b, 0, NULL);
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), -1);
  assert_error_contains("dtype flag 13");
  b.len = 0; /* legacy rank 0x4000 */
  fx_header(&b, 1);
  fx_u32(&b, 0x4000);
  fx_names(&b, 0, NULL);
  assert_int_equal(mxw_ndlist_load(b.p, b.len, &l), -1);
  assert_error_contains("neither a record magic nor a rank");
  free(b.p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_writer_matches_worked_example),
      cmocka_unit_test(test_fixture_writer_matches_worked_example),
      cmocka_unit_test(test_worked_example_loads),
      cmocka_unit_test(test_legacy_v0_unnamed_list),
      cmocka_unit_test(test_v1_named_with_none),
      cmocka_unit_test(test_v2_every_dtype),
      cmocka_unit_test(test_v3_np_semantics),
      cmocka_unit_test(test_row_sparse_densified),
      cmocka_unit_test(test_sparse_records_densified),
      cmocka_unit_test(test_every_version_in_one_file_and_its_corruptions),
      cmocka_unit_test(test_invalid_files_are_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
