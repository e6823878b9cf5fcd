/* fuzz_ndlist: MXNet's NDArray-list (.params) reader, through the public C entry points the JS
 * side uses (js/io.mjs: mxw_ndlist_load_ex with the default cap = mxw_ndlist_load, _size,
 * _has_names, _name, _take, _free), then once more with a tight cap (maxBytes).
 *
 * Invariants beyond "no crash, no leak, within the memory budget":
 *   - every array taken out has a known dtype, a rank 0..MXW_MAX_NDIM, non-negative dims, and
 *     all of its bytes are readable (ASan checks the read);
 *   - a named list has a name for every array;
 *   - what loads saves back (V2, when every array has rank >= 1) and reloads to the same
 *     count, names, dtypes, shapes and bytes. */
#include "fuzz_common.h"

#define MAX_ROUNDTRIP_BYTES ((size_t)1 << 20)

static void check_roundtrip(int n, mxw_ndarray **arrs, char **names, size_t total) {
  if (total > MAX_ROUNDTRIP_BYTES) return;
  for (int i = 0; i < n; i++)
    if (!arrs[i] || mxw_ndarray_ndim(arrs[i]) == 0) return; /* none / 0-d: V2 cannot store them */
  uint8_t *buf = NULL;
  size_t len = 0;
  FUZZ_CHECK(mxw_ndlist_save(n, arrs, (const char *const *)names, &buf, &len) == 0, "saving what loaded failed");
  mxw_ndlist *l2 = NULL;
  FUZZ_CHECK(mxw_ndlist_load(buf, len, &l2) == 0, "reloading what was saved failed");
  FUZZ_CHECK(mxw_ndlist_size(l2) == n, "reloaded %d arrays, saved %d", mxw_ndlist_size(l2), n);
  FUZZ_CHECK(mxw_ndlist_has_names(l2) == (names != NULL), "names lost or gained in the round trip");
  for (int i = 0; i < n; i++) {
    if (names) FUZZ_CHECK(strcmp(mxw_ndlist_name(l2, i), names[i]) == 0, "name %d changed", i);
    mxw_ndarray *b = mxw_ndlist_take(l2, i);
    FUZZ_CHECK(b != NULL, "array %d came back as none", i);
    int32_t ia[2 + MXW_MAX_NDIM], ib[2 + MXW_MAX_NDIM];
    mxw_ndarray_info(arrs[i], ia);
    mxw_ndarray_info(b, ib);
    FUZZ_CHECK(memcmp(ia, ib, sizeof(int32_t) * (size_t)(2 + ia[1])) == 0, "array %d: dtype or shape changed", i);
    size_t nb = (size_t)mxw_ndarray_size(b) * (size_t)mxw_dtype_size(ib[0]);
    FUZZ_CHECK(memcmp(mxw_ndarray_data(arrs[i]), mxw_ndarray_data(b), nb) == 0, "array %d: values changed", i);
    mxw_ndarray_free(b);
  }
  mxw_ndlist_free(l2);
  mxw_buffer_free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_budget_begin();
  mxw_ndlist *l = NULL;
  if (mxw_ndlist_load(data, size, &l) == 0) {
    int n = mxw_ndlist_size(l), named = mxw_ndlist_has_names(l);
    FUZZ_CHECK(n >= 0, "negative count %d", n);
    mxw_ndarray **arrs = (mxw_ndarray **)calloc((size_t)n + 1, sizeof *arrs);
    char **names = named ? (char **)calloc((size_t)n + 1, sizeof *names) : NULL;
    FUZZ_CHECK(arrs && (!named || names), "out of memory in the harness");
    size_t total = 0;
    unsigned sum = 0;
    for (int i = 0; i < n; i++) {
      if (named) {
        const char *nm = mxw_ndlist_name(l, i);
        FUZZ_CHECK(nm != NULL, "named list without a name for array %d", i);
        names[i] = strdup(nm);
      }
      mxw_ndarray *a = arrs[i] = mxw_ndlist_take(l, i);
      FUZZ_CHECK(mxw_ndlist_take(l, i) == NULL, "array %d could be taken twice", i);
      if (!a) continue;
      int32_t info[2 + MXW_MAX_NDIM];
      FUZZ_CHECK(mxw_ndarray_info(a, info) == 0, "info of array %d", i);
      FUZZ_CHECK(mxw_dtype_size(info[0]) > 0, "array %d has dtype flag %d", i, info[0]);
      FUZZ_CHECK(info[1] >= 0 && info[1] <= MXW_MAX_NDIM, "array %d has rank %d", i, info[1]);
      double elems = 1;
      for (int d = 0; d < info[1]; d++) {
        FUZZ_CHECK(info[2 + d] >= 0, "array %d has dimension %d = %d", i, d, info[2 + d]);
        elems *= info[2 + d];
      }
      FUZZ_CHECK(elems == mxw_ndarray_size(a), "array %d: size %.0f for its shape's %.0f", i, mxw_ndarray_size(a),
                 elems);
      size_t nb = (size_t)elems * (size_t)mxw_dtype_size(info[0]);
      const uint8_t *p = (const uint8_t *)mxw_ndarray_data(a);
      for (size_t k = 0; k < nb; k += 61) sum += p[k];
      if (nb) sum += p[nb - 1];
      total += nb;
    }
    (void)sum;
    mxw_ndlist_free(l);
    check_roundtrip(n, arrs, names, total);
    for (int i = 0; i < n; i++) {
      mxw_ndarray_free(arrs[i]);
      if (names) free(names[i]);
    }
    free(arrs);
    free(names);
    if (fuzz_verbose()) fprintf(stderr, "loaded %d arrays%s\n", n, named ? " with names" : "");
  } else if (fuzz_verbose()) {
    fprintf(stderr, "not loaded: %s\n", mxw_get_last_error());
  }
  /* a tight cap (nd.load's maxBytes option): the refusal paths must be as clean */
  mxw_ndlist *capped = NULL;
  if (mxw_ndlist_load_ex(data, size, (double)(size / 2 + 1), &capped) == 0) mxw_ndlist_free(capped);
  fuzz_budget_end(size, "mxw_ndlist_load");
  return 0;
}
