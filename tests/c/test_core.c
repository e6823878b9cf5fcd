/* The core: attribute parsing (MXNet's string forms), dtype conversion, NDArray views and the
 * invoke path's error handling. Expected values are worked by hand. */
#include "mxw_test.h"

typedef struct {
  int64_t i;
  double f;
  int b;
  int e;
  mxw_tuple shape;
  mxw_tuple opt;
  mxw_opt_int oi;
  int dt;
} P;
static const char *const k_enum[] = {"relu", "tanh", NULL};
static const mxw_attr_spec k_specs[] = {
    MXW_A_INT("i", P, i, "0", ""),          MXW_A_FLOAT("f", P, f, "0", ""),
    MXW_A_BOOL("b", P, b, "False", ""),     MXW_A_ENUM("e", P, e, "relu", k_enum, ""),
    MXW_A_SHAPE("s", P, shape, "()", ""),   MXW_A_OPT_TUPLE("o", P, opt, "()", ""),
    MXW_A_OPT_INT("oi", P, oi, "None", ""), MXW_A_DTYPE("dt", P, dt, "float32", ""),
};

static void test_attr_forms(void **state) {
  (void)state;
  P p;
  memset(&p, 0, sizeof p);
  assert_int_equal(mxw_attr_parse(&k_specs[0], " 42 ", &p), 0);
  assert_int_equal(p.i, 42);
  assert_int_equal(mxw_attr_parse(&k_specs[0], "7L", &p), 0);
  assert_int_equal(p.i, 7);
  assert_int_equal(mxw_attr_parse(&k_specs[0], "3.0", &p), -1); /* not an int, as in C++ */
  assert_error_contains("'i'");
  assert_int_equal(mxw_attr_parse(&k_specs[1], "1e-05", &p), 0);
  assert_close(p.f, 1e-5, 1e-12);
  assert_int_equal(mxw_attr_parse(&k_specs[2], "True", &p), 0);
  assert_int_equal(p.b, 1);
  assert_int_equal(mxw_attr_parse(&k_specs[2], "false", &p), 0);
  assert_int_equal(p.b, 0);
  assert_int_equal(mxw_attr_parse(&k_specs[2], "yes", &p), -1);
  assert_int_equal(mxw_attr_parse(&k_specs[3], "tanh", &p), 0);
  assert_int_equal(p.e, 1);
  assert_int_equal(mxw_attr_parse(&k_specs[3], "Tanh", &p), -1); /* case-sensitive */
  assert_error_contains("'relu', 'tanh'");
  assert_int_equal(mxw_attr_parse(&k_specs[4], "(3, 3)", &p), 0);
  assert_int_equal(p.shape.ndim, 2);
  assert_int_equal(p.shape.v[1], 3);
  assert_int_equal(mxw_attr_parse(&k_specs[4], "[2,4,6]", &p), 0);
  assert_int_equal(p.shape.ndim, 3);
  assert_int_equal(p.shape.v[2], 6);
  assert_int_equal(mxw_attr_parse(&k_specs[4], "(5,)", &p), 0);
  assert_int_equal(p.shape.ndim, 1);
  assert_int_equal(mxw_attr_parse(&k_specs[4], "4", &p), 0);
  assert_int_equal(p.shape.ndim, 1);
  assert_int_equal(p.shape.v[0], 4);
  assert_int_equal(mxw_attr_parse(&k_specs[4], "()", &p), 0);
  assert_int_equal(p.shape.ndim, 0);
  assert_int_equal(mxw_attr_parse(&k_specs[4], "(1, 2", &p), -1);
  assert_int_equal(mxw_attr_parse(&k_specs[5], "(None, -1, 2)", &p), 0);
  assert_int_equal(p.opt.ndim, 3);
  assert_int_equal(p.opt.has[0], 0);
  assert_int_equal(p.opt.has[1], 1);
  assert_int_equal(p.opt.v[1], -1);
  assert_int_equal(mxw_attr_parse(&k_specs[6], "None", &p), 0);
  assert_int_equal(p.oi.has, 0);
  assert_int_equal(mxw_attr_parse(&k_specs[6], "-1", &p), 0);
  assert_int_equal(p.oi.has, 1);
  assert_int_equal(p.oi.v, -1);
  assert_int_equal(mxw_attr_parse(&k_specs[7], "int64", &p), 0);
  assert_int_equal(p.dt, MXW_INT64);
}

/* mxw_parse_double against the C library's strtod (glibc natively: an independent, correctly
 * rounding implementation) on the same text: the value bit for bit and where parsing stopped.
 * Texts: hand-picked forms and edge cases, %.17g / %.9g / %g of random doubles over a wide
 * exponent range, and random digit strings with a point and an exponent. */
static void check_parse(const char *text) {
  char *e1, *e2;
  double a = mxw_parse_double(text, &e1), b = strtod(text, &e2);
  uint64_t ba, bb; /* bit for bit: -0 and NaN payloads included */
  memcpy(&ba, &a, sizeof ba);
  memcpy(&bb, &b, sizeof bb);
  if (ba != bb || e1 != e2)
    fail_msg("'%s': %.17g (end %td) vs strtod %.17g (end %td)", text, a, e1 - text, b, e2 - text);
}
static void test_parse_double_matches_strtod(void **state) {
  (void)state;
  static const char *const forms[] = {
      "0",
      "-0",
      "+0",
      "0.0",
      "-0.0",
      "1",
      "-1",
      "0.5",
      ".5",
      "5.",
      "-.5",
      "1e5",
      "1E-5",
      "1e+22",
      "1e22",
      "1e23",
      "1e-22",
      "1e-23",
      "9007199254740992",
      "9007199254740993",
      "9007199254740993e-3",
      "123456789012345678901",
      "0.1",
      "0.2",
      "0.30000000000000004",
      "1.7976931348623157e308",
      "2.2250738585072014e-308",
      "4.9e-324",
      "1e400",
      "-1e400",
      "1e-400",
      "inf",
      "-inf",
      "nan",
      "infinity",
      "0x10",
      "0X1p3",
      "-0x1.8p1",
      "1e",
      "1e+",
      "1e-",
      "2.5e",
      "e5",
      ".",
      "-",
      "+",
      "",
      "abc",
      "12abc",
      "1.5.5",
      "00012",
      "000.000120",
      "1_0",
      "1e0005",
      "1e99999999999",
      "0e99999999999",
      "7.0e-10",
      "1.00000000000000000000001",
      "0.0000000000000000000001e22",
  };
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) check_parse(forms[i]);
  uint64_t x = 0x9e3779b97f4a7c15u;
  char buf[64];
  for (int i = 0; i < 300000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
    double mant = (double)(x >> 11) / 9007199254740992.0;
    int ex = (int)((x >> 3) % 80) - 40;
    double v = (i & 1 ? -1 : 1) * mant * pow(10.0, ex);
    static const char *const fmts[] = {"%.17g", "%.9g", "%g", "%.3f", "%.15e"};
    snprintf(buf, sizeof buf, fmts[i % 5], v);
    check_parse(buf);
    /* random digits: up to 21 of them, a point somewhere, maybe an exponent */
    int nd = 1 + (int)(x % 21), point = (int)((x >> 8) % (uint64_t)(nd + 1)), k = 0;
    uint64_t y = x;
    for (int d = 0; d < nd; d++) {
      if (d == point) buf[k++] = '.';
      buf[k++] = (char)('0' + (y % 10));
      y = y / 10 ? y / 10 : x >> 17;
    }
    if (x & 0x100) k += snprintf(buf + k, sizeof buf - (size_t)k, "e%d", (int)((x >> 20) % 60) - 30);
    buf[k] = 0;
    check_parse(buf);
  }
}

static void test_half_conversion(void **state) {
  (void)state;
  /* binary16 bit patterns worked by hand */
  assert_int_equal(mxw_float_to_half(1.0f), 0x3c00);
  assert_int_equal(mxw_float_to_half(-2.0f), 0xc000);
  assert_int_equal(mxw_float_to_half(65504.f), 0x7bff);
  assert_int_equal(mxw_float_to_half(1e6f), 0x7c00);          /* overflow -> inf */
  assert_int_equal(mxw_float_to_half(5.9604645e-8f), 0x0001); /* smallest subnormal */
  assert_int_equal(mxw_float_to_half(1.0009765625f), 0x3c01);
  assert_int_equal(mxw_float_to_half(1.00048828125f), 0x3c00); /* tie -> even */
  assert_true(mxw_half_to_float(0x3555) > 0.333f && mxw_half_to_float(0x3555) < 0.3334f);
  assert_close(mxw_half_to_float(0x0001), 5.9604645e-8, 1e-12);
  assert_int_equal(mxw_float_to_bf16(1.0f), 0x3f80);
  assert_close(mxw_bf16_to_float(0x4049), 3.140625, 0);
}

static void test_views_share_storage(void **state) {
  (void)state;
  int32_t s[2] = {2, 3}, s2[1] = {6}, bad[1] = {5};
  float v[6] = {1, 2, 3, 4, 5, 6};
  mxw_ndarray *a = t_array(2, s, v), *b = NULL, *c = NULL;
  assert_int_equal(mxw_ndarray_view(a, 1, s2, &b), 0);
  ((float *)mxw_ndarray_data(b))[5] = 60.f;
  assert_close(((float *)mxw_ndarray_data(a))[5], 60.0, 0);
  assert_int_equal(mxw_ndarray_view(a, 1, bad, &c), -1);
  assert_error_contains("sizes differ");
  double st[3];
  mxw_memory_stats(st);
  assert_true(st[0] >= 2);
  /* peak accounting: a 1000-float array raises the peak by 4000 bytes, freeing it does not */
  mxw_memory_reset_peak();
  mxw_memory_stats(st);
  double base = st[1];
  int32_t big[1] = {1000};
  mxw_ndarray *tmp = t_array(1, big, NULL);
  mxw_ndarray_free(tmp);
  mxw_memory_stats(st);
  assert_close(st[1], base, 0);
  assert_close(st[2], base + 4000, 0);
  mxw_ndarray_free(a); /* storage lives on in b */
  assert_close(((float *)mxw_ndarray_data(b))[0], 1.0, 0);
  mxw_ndarray_free(b);
}

static void test_invoke_errors_leave_runtime_usable(void **state) {
  (void)state;
  int32_t s[1] = {4};
  float v[4] = {-1.5f, 0.f, 2.f, NAN};
  mxw_ndarray *x = t_array(1, s, v), *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("Activation", &x, 1, out, &nout, "act_type", "gelu", NULL), -1);
  assert_error_contains("Operator Activation");
  assert_error_contains("gelu");
  assert_int_equal(t_invoke("Activation", &x, 1, out, &nout, NULL), -1);
  assert_error_contains("required attribute 'act_type'");
  assert_int_equal(t_invoke("Activation", &x, 1, out, &nout, "act_type", "relu", "foo", "1", NULL), -1);
  assert_error_contains("unknown attribute 'foo'");
  /* relu has no attribute parser in MXNet: an attribute is ignored */
  assert_int_equal(t_invoke("relu", &x, 1, out, &nout, "foo", "1", NULL), 0);
  mxw_ndarray_free(out[0]);
  out[0] = NULL;
  /* hidden keys are ignored, as MXNet does */
  assert_int_equal(t_invoke("relu", &x, 1, out, &nout, "__lr_mult__", "2", NULL), 0);
  const float *y = (const float *)mxw_ndarray_data(out[0]);
  assert_close(y[0], 0.0, 0);
  assert_close(y[2], 2.0, 0);
  assert_true(isnan(y[3])); /* relu propagates NaN */
  mxw_ndarray_free(out[0]);
  mxw_ndarray_free(x);
}

static void test_registry_json(void **state) {
  (void)state;
  const char *j = mxw_registry_json();
  assert_non_null(j);
  assert_non_null(strstr(j, "\"name\":\"Activation\""));
  assert_non_null(strstr(j, "\"float32\":0"));
  assert_int_equal(mxw_op_find("identity"), mxw_op_find("_copy"));
  assert_int_equal(mxw_op_find("no_such_op"), -1);
}

/* mxw_op_find (a hash index) against the rule written out as a scan: the first op with that
 * name, else the first op with that alias; for every name and alias registered, and misses. */
static int find_by_scan(const char *name) {
  for (int i = 0; i < mxw_op_count(); i++)
    if (strcmp(mxw_op_get(i)->name, name) == 0) return i;
  for (int i = 0; i < mxw_op_count(); i++)
    for (const char *const *a = mxw_op_get(i)->aliases; a && *a; a++)
      if (strcmp(*a, name) == 0) return i;
  return -1;
}
static void test_op_find_every_name(void **state) {
  (void)state;
  int names = 0;
  for (int i = 0; i < mxw_op_count(); i++) {
    const mxw_op_def *op = mxw_op_get(i);
    assert_int_equal(mxw_op_find(op->name), find_by_scan(op->name));
    names++;
    for (const char *const *a = op->aliases; a && *a; a++, names++) assert_int_equal(mxw_op_find(*a), find_by_scan(*a));
  }
  assert_true(names > mxw_op_count());
  const char *misses[] = {"", "fullyconnected", "FullyConnected ", "_", "sgd_mom_updat", "multi_sgd_update_"};
  for (size_t k = 0; k < sizeof misses / sizeof *misses; k++) assert_int_equal(mxw_op_find(misses[k]), -1);
  assert_int_equal(mxw_op_find(NULL), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_op_find_every_name),
      cmocka_unit_test(test_attr_forms),
      cmocka_unit_test(test_parse_double_matches_strtod),
      cmocka_unit_test(test_half_conversion),
      cmocka_unit_test(test_views_share_storage),
      cmocka_unit_test(test_invoke_errors_leave_runtime_usable),
      cmocka_unit_test(test_registry_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
