/* The .params reader on real files MXNet wrote ($MXW_MODELS, default ../shared/models; see
 * ../shared/models/README.md): the legacy unnamed list MXNet's own tests use, a V1 checkpoint,
 * and truncations/mutations of a Gluon export. Skipped (exit 77) when the folder is absent; the
 * same record versions are covered without it by test_ndlist.c's generated fixtures. */
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
      cmocka_unit_test(test_truncations_and_corruption_fail_cleanly),
  };
  return t_run_real_file_tests(tests);
}
