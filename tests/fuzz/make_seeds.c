/* make_seeds: writes generated seed inputs for the fuzz targets into a folder (scripts/fuzz.sh
 * gives it build/fuzz/seeds): .params files of every record version and dtype through the
 * tests' own fixture writer (tests/c/fixtures.h: legacy V0, V1, V2, V3, none records, 0-d,
 * row_sparse, csr, named and unnamed lists) and through the library's writer, and symbol JSON
 * that the library writes for graphs composed here (every op family the tests load from real
 * files: conv / BatchNorm / pooling / FullyConnected / loss heads, multi-output heads).
 *
 *   make_seeds OUT_DIR      -> OUT_DIR/ndlist/ (.params files) and OUT_DIR/symbol_json/ (.json files) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/mxw_core.h"
#include "../c/fixtures.h"

static const char *g_out;
static int g_count;

static void write_file(const char *sub, const char *name, const void *p, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", g_out, sub);
  if (mkdir(path, 0777) != 0 && errno != EEXIST) {
    perror(path);
    exit(1);
  }
  snprintf(path, sizeof path, "%s/%s/%s", g_out, sub, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
  g_count++;
}

static void put_params(const char *name, fx_buf *b) {
  mxw_ndlist *l = NULL;
  if (mxw_ndlist_load(b->p, b->len, &l) != 0) { /* a seed should load: it is a valid file */
    fprintf(stderr, "make_seeds: %s does not load: %s\n", name, mxw_get_last_error());
    exit(1);
  }
  mxw_ndlist_free(l);
  write_file("ndlist", name, b->p, b->len);
  free(b->p);
  memset(b, 0, sizeof *b);
}

static void params_seeds(void) {
  fx_buf b = {0};
  const float f6[6] = {0, 1, 2, 3, 4, 5};
  const double d2[2] = {-1.5, 2.25};
  const uint8_t u8[4] = {0, 1, 254, 255};
  const int64_t i64[2] = {-7, 9};
  const uint16_t h3[3] = {0x3c00, 0xc000, 0x7e00}; /* float16 1, -2, NaN */
  const uint32_t ld[2] = {2, 3};
  const int64_t s23[2] = {2, 3}, s2[1] = {2}, s4[1] = {4}, s3[1] = {3};

  /* legacy V0, unnamed (as mxnet-fixtures/legacy_ndarray.v0) */
  fx_header(&b, 2);
  fx_rec_legacy(&b, 2, ld, 0, f6, sizeof f6);
  fx_rec_legacy(&b, 1, ld, 0, f6, 2 * sizeof(float));
  fx_names(&b, 0, NULL);
  put_params("legacy_unnamed.params", &b);

  /* V1 with names "arg:"/"aux:", a none record */
  const char *n3[3] = {"arg:fc_weight", "arg:fc_bias", "aux:none"};
  fx_header(&b, 3);
  fx_rec_v1(&b, 2, s23, 0, f6, sizeof f6);
  fx_rec_v1(&b, 1, s2, 1, d2, sizeof d2);
  fx_rec_v1(&b, -1, NULL, 0, NULL, 0);
  fx_names(&b, 3, n3);
  put_params("v1_named.params", &b);

  /* V2 dense of several dtypes, and a V2 none (ndim 0) */
  const char *n5[5] = {"u8", "i64", "f16", "bool", "none"};
  const uint8_t bl[4] = {1, 0, 1, 1};
  fx_header(&b, 5);
  fx_rec_dense(&b, FX_V2, 1, s4, 3, u8, sizeof u8);
  fx_rec_dense(&b, FX_V2, 1, s2, 6, i64, sizeof i64);
  fx_rec_dense(&b, FX_V2, 1, s3, 2, h3, sizeof h3);
  fx_rec_dense(&b, FX_V2, 1, s4, 7, bl, sizeof bl);
  fx_rec_dense(&b, FX_V2, 0, NULL, 0, NULL, 0);
  fx_names(&b, 5, n5);
  put_params("v2_dtypes.params", &b);

  /* V3 (numpy semantics): a 0-d scalar, a zero-size array, a none record (ndim -1) */
  const int64_t s0x3[2] = {0, 3};
  const char *n3b[3] = {"scalar", "empty", "none"};
  fx_header(&b, 3);
  fx_rec_dense(&b, FX_V3, 0, NULL, 0, f6, sizeof(float));
  fx_rec_dense(&b, FX_V3, 2, s0x3, 0, NULL, 0);
  fx_rec_dense(&b, FX_V3, -1, NULL, 0, NULL, 0);
  fx_names(&b, 3, n3b);
  put_params("v3_scalar_empty_none.params", &b);

  /* row_sparse: rows 0 and 2 of a (3, 2) */
  const float rv[4] = {1, 2, 5, 6};
  const int64_t ri[2] = {0, 2};
  const char *nr[1] = {"rs"};
  fx_header(&b, 1);
  fx_rec_row_sparse(&b, 3, 2, 2, rv, ri);
  fx_names(&b, 1, nr);
  put_params("row_sparse.params", &b);

  /* csr (2, 3): [[0, 7, 0], [8, 0, 9]] */
  const float cv[3] = {7, 8, 9};
  const int64_t ip[3] = {0, 1, 3}, ci[3] = {1, 0, 2};
  const char *nc[1] = {"csr"};
  fx_header(&b, 1);
  fx_rec_csr(&b, 2, 3, 3, cv, ip, ci);
  fx_names(&b, 1, nc);
  put_params("csr.params", &b);

  /* an empty list */
  fx_header(&b, 0);
  fx_names(&b, 0, NULL);
  put_params("empty_list.params", &b);

  /* the library's own writer (V2, cpu(0)) */
  int32_t sh[2] = {2, 3};
  mxw_ndarray *a[2] = {NULL, NULL};
  mxw_ndarray_create(2, sh, MXW_FLOAT32, &a[0]);
  mxw_ndarray_create(1, sh, MXW_INT32, &a[1]);
  memcpy(mxw_ndarray_data(a[0]), f6, sizeof f6);
  const char *nl[2] = {"arg:w", "aux:running_mean"};
  uint8_t *out = NULL;
  size_t len = 0;
  if (mxw_ndlist_save(2, a, nl, &out, &len) == 0) write_file("ndlist", "saved_by_library.params", out, len);
  mxw_buffer_free(out);
  if (mxw_ndlist_save(2, a, NULL, &out, &len) == 0) write_file("ndlist", "saved_unnamed.params", out, len);
  mxw_buffer_free(out);
  mxw_ndarray_free(a[0]);
  mxw_ndarray_free(a[1]);
}

/* ---- symbols composed here, written by the library ---------------------------------------------- */
static mxw_symbol *op(const char *name, const char *node, const char *const *kv, int nin, mxw_symbol *const *in) {
  const char *keys[16], *vals[16];
  int n = 0;
  for (; kv && kv[2 * n]; n++) {
    keys[n] = kv[2 * n];
    vals[n] = kv[2 * n + 1];
  }
  mxw_symbol *s = NULL;
  if (mxw_sym_compose(mxw_op_find(name), node, n, keys, vals, nin, in, &s) != 0) {
    fprintf(stderr, "make_seeds: %s: %s\n", name, mxw_get_last_error());
    exit(1);
  }
  return s;
}

static void put_symbol(const char *name, const mxw_symbol *s) {
  char *j = NULL;
  if (mxw_sym_tojson(s, &j) != 0) {
    fprintf(stderr, "make_seeds: %s\n", mxw_get_last_error());
    exit(1);
  }
  write_file("symbol_json", name, j, strlen(j));
  mxw_buffer_free(j);
}

static void symbol_seeds(void) {
  mxw_symbol *data = NULL;
  const char *shk[1] = {"__shape__"}, *shv[1] = {"(1, 3, 8, 8)"};
  mxw_sym_var("data", 1, shk, shv, &data);
  mxw_symbol *c = op("Convolution", "conv0", MXW_KV("kernel", "(3, 3)", "num_filter", "4", "pad", "(1, 1)"), 1, &data);
  mxw_symbol *bn = op("BatchNorm", "bn0", MXW_KV("fix_gamma", "False", "eps", "1e-05"), 1, &c);
  mxw_symbol *r = op("Activation", "relu0", MXW_KV("act_type", "relu"), 1, &bn);
  mxw_symbol *p = op("Pooling", "pool0", MXW_KV("kernel", "(2, 2)", "stride", "(2, 2)", "pool_type", "max"), 1, &r);
  mxw_symbol *f = op("Flatten", "flat0", NULL, 1, &p);
  mxw_symbol *fc = op("FullyConnected", "fc0", MXW_KV("num_hidden", "10"), 1, &f);
  mxw_symbol *so = op("SoftmaxOutput", "softmax", NULL, 1, &fc);
  put_symbol("conv_bn_pool_fc_softmax.json", so);

  mxw_symbol *sl = op("SliceChannel", "split0", MXW_KV("num_outputs", "2", "axis", "1"), 1, &data);
  mxw_symbol *o0 = NULL, *o1 = NULL;
  mxw_sym_output(sl, 0, &o0);
  mxw_sym_output(sl, 1, &o1);
  mxw_symbol *two[2] = {o0, o1};
  mxw_symbol *cat = op("Concat", "cat0", MXW_KV("num_args", "2", "dim", "1"), 2, two);
  mxw_symbol *rs = op("Reshape", "rs0", MXW_KV("shape", "(0, -1)"), 1, &cat);
  mxw_symbol *heads[2] = {rs, fc};
  mxw_symbol *g = NULL;
  mxw_sym_group(2, heads, &g);
  put_symbol("split_concat_reshape_group.json", g);

  mxw_symbol *all[] = {data, c, bn, r, p, f, fc, so, sl, o0, o1, cat, rs, g};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mxw_sym_free(all[i]);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  g_out = argv[1];
  if (mkdir(g_out, 0777) != 0 && errno != EEXIST) {
    perror(g_out);
    return 1;
  }
  params_seeds();
  symbol_seeds();
  printf("make_seeds: %d files in %s\n", g_count, g_out);
  return 0;
}
