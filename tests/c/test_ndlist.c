/* The .params reader and writer against real MXNet files (../shared/models) and the byte-level
 * worked examples of ../shared/spec/params-format.md. */
#include <stdlib.h>

#include "mxw_test.h"

static void test_legacy_v0_unnamed_list(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = (uint8_t *)t_read_model_file("mxnet-fixtures/legacy_ndarray.v0", &len);
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(b, len, &l), 0);
  assert_int_equal(mxw_ndlist_size(l), 6);
  assert_false(mxw_ndlist_has_names(l));
  for (int i = 0; i < 6; i++) {
    mxw_ndarray *a = mxw_ndlist_take(l, i);
    assert_int_equal(mxw_ndarray_dtype(a), MXW_FLOAT32);
    assert_int_equal((int)mxw_ndarray_size(a), 128);
    const float *v = mxw_ndarray_data(a);
    for (int k = 0; k < 128; k++) assert_close(v[k], k, 0);
    mxw_ndarray_free(a);
  }
  mxw_ndlist_free(l);
  free(b);
}

static void test_v1_named(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = (uint8_t *)t_read_model_file("linreg-v1/model-0000.params", &len);
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(b, len, &l), 0);
  assert_int_equal(mxw_ndlist_size(l), 2);
  int found = 0;
  for (int i = 0; i < 2; i++) {
    const char *name = mxw_ndlist_name(l, i);
    if (strcmp(name, "arg:fc1_weight") == 0) {
      mxw_ndarray *w = mxw_ndlist_take(l, i);
      int32_t s[2];
      mxw_ndarray_shape(w, s);
      assert_int_equal(mxw_ndarray_ndim(w), 2);
      assert_int_equal(s[0], 1);
      assert_int_equal(s[1], 2);
      mxw_ndarray_free(w);
      found++;
    } else {
      assert_string_equal(name, "arg:fc1_bias");
      found++;
    }
  }
  assert_int_equal(found, 2);
  mxw_ndlist_free(l);
  free(b);
}

/* §9 of params-format.md: nd.save of {'arg:w': [[1,2],[3,4]], 'aux:m': [0.5, 0, -1]}. */
static const uint8_t k_worked[] = {
    0x12, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
    0xc9, 0xfa, 0x93, 0xf9, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40,
    0xc9, 0xfa, 0x93, 0xf9, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0xbf,
    2, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 'a', 'r', 'g', ':', 'w',
    5, 0, 0, 0, 0, 0, 0, 0, 'a', 'u', 'x', ':', 'm'};

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
  f[0] = 0x12; f[1] = 0x01; f[16] = 1;
  uint8_t *r = f + 24;
  const uint8_t magic[4] = {0xc9, 0xfa, 0x93, 0xf9};
  memcpy(r, magic, 4);
  r[0x04] = 1;                        /* stype row_sparse */
  r[0x08] = 2; r[0x0c] = 2; r[0x14] = 2; /* storage shape (2, 2) */
  r[0x1c] = 2; r[0x20] = 4; r[0x28] = 2; /* shape (4, 2) */
  r[0x30] = 1;                        /* cpu */
  r[0x3c] = 6;                        /* aux int64 */
  r[0x40] = 1; r[0x44] = 2;           /* aux shape (2,) */
  float vals[4] = {1, 2, 3, 4};
  memcpy(r + 0x4c, vals, 16);
  r[0x5c] = 1; r[0x64] = 3;           /* row indices 1, 3 */
  mxw_ndlist *l = NULL;
  assert_int_equal(mxw_ndlist_load(f, sizeof f, &l), 0);
  mxw_ndarray *a = mxw_ndlist_take(l, 0);
  const float want[8] = {0, 0, 1, 2, 0, 0, 3, 4};
  assert_memory_equal(mxw_ndarray_data(a), want, sizeof want);
  mxw_ndarray_free(a);
  mxw_ndlist_free(l);
}

static void test_truncations_and_corruption_fail_cleanly(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = (uint8_t *)t_read_model_file("lenet-gluon/lenet-0001.params", &len);
  mxw_ndlist *l = NULL;
  for (size_t cut = 0; cut < len; cut += (cut < 200 ? 1 : 97)) {
    uint8_t *p = malloc(cut ? cut : 1);
    memcpy(p, b, cut);
    assert_int_equal(mxw_ndlist_load(p, cut, &l), -1);
    assert_true(strstr(mxw_get_last_error(), "truncated") || strstr(mxw_get_last_error(), "corrupt") ||
                strstr(mxw_get_last_error(), "not an MXNet"));
    free(p);
  }
  /* the error names the array and the offset */
  assert_int_equal(mxw_ndlist_load(b, len - 10, &l), -1);
  assert_error_contains("offset");
  /* flipped bytes anywhere: an error or a successful parse, never a crash (ASan checks) */
  uint32_t seed = 12345;
  for (int trial = 0; trial < 2000; trial++) {
    uint8_t *p = malloc(len);
    memcpy(p, b, len);
    for (int k = 0; k < 4; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = (seed >> 8) % len;
      seed = seed * 1103515245u + 12345u;
      p[at] = (uint8_t)(seed >> 16);
    }
    if (mxw_ndlist_load(p, len, &l) == 0) mxw_ndlist_free(l);
    free(p);
  }
  assert_int_equal(mxw_ndlist_load(b, len, &l), 0); /* still fine */
  assert_int_equal(mxw_ndlist_size(l), 8);
  mxw_ndlist_free(l);
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_legacy_v0_unnamed_list),
      cmocka_unit_test(test_v1_named),
      cmocka_unit_test(test_writer_matches_worked_example),
      cmocka_unit_test(test_row_sparse_densified),
      cmocka_unit_test(test_truncations_and_corruption_fail_cleanly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
