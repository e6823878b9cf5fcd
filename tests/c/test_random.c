/* The random family (csrc/ops/random.c): the samplers added beside _random_uniform & co.
 * (_random_poisson, _random_negative_binomial, _random_generalized_negative_binomial), the
 * per-element samplers (_sample_*), _sample_multinomial and _shuffle. The samples are checked
 * against moments worked by hand from each distribution's definition, with tolerances of 5
 * standard errors for the sample size (the arithmetic is in the comments), and against their
 * support; shapes and dtypes against MXNet 1.9.1's rules. */
#include "mxw_test.h"

#define N_DRAWS 20000

/* Runs an op with 0-2 inputs and one output; fails the test on error. */
#define RUN(name, ins, nin, ...)                                                                         \
  ({                                                                                                     \
    mxw_ndarray *o_[2] = {NULL, NULL};                                                                   \
    int n_ = 2;                                                                                          \
    if (t_invoke(name, ins, nin, o_, &n_, __VA_ARGS__, NULL) != 0) fail_msg("%s", mxw_get_last_error()); \
    assert_int_equal(n_, 1);                                                                             \
    o_[0];                                                                                               \
  })

/* Mean and (population) variance of n values read as doubles. */
typedef struct {
  double mean, var;
} moments;
static moments moments_of(const mxw_ndarray *a, int64_t begin, int64_t n) {
  const void *d = mxw_ndarray_data(a);
  int dt = mxw_ndarray_dtype(a);
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < n; i++) s += mxw_load_f64(d, dt, begin + i);
  double m = s / (double)n;
  for (int64_t i = 0; i < n; i++) {
    double e = mxw_load_f64(d, dt, begin + i) - m;
    s2 += e * e;
  }
  return (moments){m, s2 / (double)n};
}
#define assert_within(v, want, tol)                                                        \
  do {                                                                                     \
    double v_ = (v);                                                                       \
    if (!(fabs(v_ - (want)) <= (tol)))                                                     \
      fail_msg("%s = %.6g, expected %.6g +- %.3g", #v, v_, (double)(want), (double)(tol)); \
  } while (0)

/* Every value is a non-negative integer. */
static void assert_counts(const mxw_ndarray *a, int64_t begin, int64_t n) {
  const void *d = mxw_ndarray_data(a);
  for (int64_t i = 0; i < n; i++) {
    double v = mxw_load_f64(d, mxw_ndarray_dtype(a), begin + i);
    if (!(v >= 0 && v == floor(v))) fail_msg("value %g at %lld is not a count", v, (long long)(begin + i));
  }
}

static void test_random_poisson_family(void **state) {
  (void)state;
  mxw_random_seed(7);
  /* Poisson(3.5), the multiplication branch: mean = var = 3.5. Standard error of the mean
   * sqrt(3.5 / 20000) = 0.0132 (5 se: 0.066); of the variance sqrt((mu4 - var^2) / n) with
   * mu4 = lam (1 + 3 lam) = 40.25: sqrt(28 / 20000) = 0.037 (5 se: 0.19). */
  mxw_ndarray *a = RUN("_random_poisson", NULL, 0, "lam", "3.5", "shape", "(20000,)");
  assert_int_equal(mxw_ndarray_dtype(a), MXW_FLOAT32); /* samples are floats, as in MXNet */
  assert_counts(a, 0, N_DRAWS);
  moments m = moments_of(a, 0, N_DRAWS);
  assert_within(m.mean, 3.5, 0.066);
  assert_within(m.var, 3.5, 0.19);
  /* the same seed gives the same samples */
  mxw_random_seed(7);
  mxw_ndarray *b = RUN("random_poisson", NULL, 0, "lam", "3.5", "shape", "(20000,)");
  assert_memory_equal(mxw_ndarray_data(a), mxw_ndarray_data(b), N_DRAWS * sizeof(float));
  mxw_ndarray_free(a);
  mxw_ndarray_free(b);

  /* Poisson(50), the rejection branch: se of the mean sqrt(50 / 20000) = 0.05 (5 se: 0.25); of
   * the variance sqrt((50 * 151 - 2500) / 20000) = 0.50 (5 se: 2.5). */
  a = RUN("_random_poisson", NULL, 0, "lam", "50", "shape", "(100, 200)", "dtype", "float64");
  assert_int_equal(mxw_ndarray_dtype(a), MXW_FLOAT64);
  assert_counts(a, 0, N_DRAWS);
  m = moments_of(a, 0, N_DRAWS);
  assert_within(m.mean, 50, 0.25);
  assert_within(m.var, 50, 2.5);
  mxw_ndarray_free(a);

  /* lam = 0: every sample is 0 */
  a = RUN("_random_poisson", NULL, 0, "lam", "0", "shape", "(50,)");
  m = moments_of(a, 0, 50);
  assert_true(m.mean == 0 && m.var == 0);
  mxw_ndarray_free(a);

  /* Negative binomial k = 4, p = 0.4: a Poisson with a Gamma(k, (1 - p) / p) rate, so mean
   * k (1 - p) / p = 6 and variance k (1 - p) / p^2 = 15. se of the mean sqrt(15 / 20000) =
   * 0.027 (5 se: 0.14); the excess kurtosis 6 / k + (1 - p)^2 / (k p) = 1.725 gives mu4 = 4.725 *
   * 225 = 1063 and a variance se of sqrt(838 / 20000) = 0.205 (5 se: 1.03). */
  a = RUN("_random_negative_binomial", NULL, 0, "k", "4", "p", "0.4", "shape", "(20000,)");
  assert_counts(a, 0, N_DRAWS);
  m = moments_of(a, 0, N_DRAWS);
  assert_within(m.mean, 6, 0.14);
  assert_within(m.var, 15, 1.03);
  mxw_ndarray_free(a);

  /* Generalized negative binomial mu = 2, alpha = 0.5: mean 2, variance mu + alpha mu^2 = 4.
   * se of the mean sqrt(4 / 20000) = 0.014 (5 se: 0.071); as a negative binomial with r =
   * 1 / alpha = 2 and success probability q = r / (r + mu) = 0.5 its excess kurtosis is
   * 6 / r + (1 - q)^2 / (r q) = 3.25, so mu4 = 6.25 * 16 = 100 and the variance se is
   * sqrt(84 / 20000) = 0.065 (5 se: 0.33). */
  a = RUN("random_generalized_negative_binomial", NULL, 0, "mu", "2", "alpha", "0.5", "shape", "(20000,)");
  assert_counts(a, 0, N_DRAWS);
  m = moments_of(a, 0, N_DRAWS);
  assert_within(m.mean, 2, 0.071);
  assert_within(m.var, 4, 0.33);
  mxw_ndarray_free(a);
  /* alpha = 0 is Poisson(mu): mean = var = 2 (5 se: 0.05 and 0.15) */
  a = RUN("_random_generalized_negative_binomial", NULL, 0, "mu", "2", "alpha", "0", "shape", "(20000,)");
  m = moments_of(a, 0, N_DRAWS);
  assert_within(m.mean, 2, 0.05);
  assert_within(m.var, 2, 0.15);
  mxw_ndarray_free(a);

  /* Gamma with alpha < 1 (the boosted branch): alpha 0.5, beta 2: mean 1, variance alpha
   * beta^2 = 2; se of the mean sqrt(2 / 20000) = 0.01 (5 se: 0.05). */
  a = RUN("_random_gamma", NULL, 0, "alpha", "0.5", "beta", "2", "shape", "(20000,)");
  m = moments_of(a, 0, N_DRAWS);
  assert_within(m.mean, 1, 0.05);
  mxw_ndarray_free(a);

  /* attribute checks */
  mxw_ndarray *o[2] = {NULL, NULL};
  int n = 1;
  assert_int_equal(t_invoke("_random_poisson", NULL, 0, o, &n, "lam", "-1", "shape", "(2,)", NULL), -1);
  assert_error_contains("lam");
  assert_int_equal(t_invoke("_random_negative_binomial", NULL, 0, o, &n, "k", "1.5", NULL), -1);
  assert_error_contains("'k'");
  assert_int_equal(t_invoke("_random_negative_binomial", NULL, 0, o, &n, "k", "-1", NULL), -1);
  assert_error_contains("k must be non-negative");
  assert_int_equal(t_invoke("_random_negative_binomial", NULL, 0, o, &n, "p", "0", NULL), -1);
  assert_error_contains("p must be in (0, 1]");
  assert_int_equal(t_invoke("_random_generalized_negative_binomial", NULL, 0, o, &n, "alpha", "-0.5", NULL), -1);
  assert_error_contains("alpha");
  assert_int_equal(t_invoke("_random_poisson", NULL, 0, o, &n, "shape", "(2,)", "dtype", "int32", NULL), -1);
  assert_error_contains("'dtype'");
}

static void test_sample_per_element(void **state) {
  (void)state;
  mxw_random_seed(11);
  const int64_t S = 10000;
  /* uniform: row 0 on [0, 1) (mean 0.5, se sqrt(1/12/1e4) = 0.0029), row 1 on [10, 20) (mean 15,
   * se 0.029) */
  mxw_ndarray *low = t_array(1, (int32_t[]){2}, (float[]){0, 10});
  mxw_ndarray *high = t_array(1, (int32_t[]){2}, (float[]){1, 20});
  mxw_ndarray *ins[2] = {low, high};
  mxw_ndarray *a = RUN("_sample_uniform", ins, 2, "shape", "(10000,)");
  t_expect_shape(a, 2, (int32_t[]){2, 10000});
  const float *v = (const float *)mxw_ndarray_data(a);
  for (int64_t i = 0; i < S; i++) assert_true(v[i] >= 0 && v[i] < 1);
  for (int64_t i = S; i < 2 * S; i++) assert_true(v[i] >= 10 && v[i] < 20);
  assert_within(moments_of(a, 0, S).mean, 0.5, 5 * 0.0029);
  assert_within(moments_of(a, S, S).mean, 15, 5 * 0.029);
  mxw_ndarray_free(a);
  mxw_ndarray_free(low);
  mxw_ndarray_free(high);

  /* normal mu = (-5, 5), sigma = (1, 0.1), float64 parameters and output: row means within 5 se
   * (0.05, 0.005), sds within 5 se (sigma / sqrt(2n): 0.035, 0.0035) */
  mxw_ndarray *mu = t_array_f64(1, (int32_t[]){2}, (double[]){-5, 5});
  mxw_ndarray *sg = t_array_f64(1, (int32_t[]){2}, (double[]){1, 0.1});
  ins[0] = mu;
  ins[1] = sg;
  a = RUN("sample_normal", ins, 2, "shape", "(100, 100)", "dtype", "float64");
  t_expect_shape(a, 3, (int32_t[]){2, 100, 100});
  assert_int_equal(mxw_ndarray_dtype(a), MXW_FLOAT64);
  moments m0 = moments_of(a, 0, S), m1 = moments_of(a, S, S);
  assert_within(m0.mean, -5, 0.05);
  assert_within(sqrt(m0.var), 1, 0.035);
  assert_within(m1.mean, 5, 0.005);
  assert_within(sqrt(m1.var), 0.1, 0.0035);
  mxw_ndarray_free(a);
  /* no shape attr: one sample per parameter set, output shape = parameter shape; the output
   * dtype defaults to float32 whatever the parameters' */
  a = RUN("_sample_normal", ins, 2, "dtype", "None");
  t_expect_shape(a, 1, (int32_t[]){2});
  assert_int_equal(mxw_ndarray_dtype(a), MXW_FLOAT32);
  mxw_ndarray_free(a);
  mxw_ndarray_free(mu);
  mxw_ndarray_free(sg);

  /* exponential lam = (1, 4): means 1 and 0.25 (se 0.01 and 0.0025) */
  mxw_ndarray *lam = t_array(1, (int32_t[]){2}, (float[]){1, 4});
  a = RUN("_sample_exponential", &lam, 1, "shape", "(10000,)");
  assert_within(moments_of(a, 0, S).mean, 1, 0.05);
  assert_within(moments_of(a, S, S).mean, 0.25, 0.0125);
  mxw_ndarray_free(a);
  mxw_ndarray_free(lam);

  /* gamma alpha = (2, 0), beta = (3, 1): row 0 mean 6 (se sqrt(18 / 1e4) = 0.042); alpha 0 is
   * the point mass at 0 (MXNet's documented example) */
  mxw_ndarray *al = t_array(1, (int32_t[]){2}, (float[]){2, 0});
  mxw_ndarray *be = t_array(1, (int32_t[]){2}, (float[]){3, 1});
  ins[0] = al;
  ins[1] = be;
  a = RUN("_sample_gamma", ins, 2, "shape", "(10000,)");
  assert_within(moments_of(a, 0, S).mean, 6, 0.21);
  m1 = moments_of(a, S, S);
  assert_true(m1.mean == 0 && m1.var == 0);
  mxw_ndarray_free(a);
  mxw_ndarray_free(al);
  mxw_ndarray_free(be);

  /* poisson with int32 rates (any parameter dtype is read): (2, 1) rates (0, 2) -> (2, 1, 10000) */
  mxw_ndarray *ilam = NULL;
  assert_int_equal(mxw_ndarray_create(2, (int32_t[]){2, 1}, MXW_INT32, &ilam), 0);
  ((int32_t *)mxw_ndarray_data(ilam))[0] = 0;
  ((int32_t *)mxw_ndarray_data(ilam))[1] = 2;
  a = RUN("_sample_poisson", &ilam, 1, "shape", "(10000,)");
  t_expect_shape(a, 3, (int32_t[]){2, 1, 10000});
  assert_counts(a, 0, 2 * S);
  m0 = moments_of(a, 0, S);
  assert_true(m0.mean == 0);
  assert_within(moments_of(a, S, S).mean, 2, 5 * sqrt(2.0 / 1e4));
  mxw_ndarray_free(a);
  mxw_ndarray_free(ilam);

  /* negative binomial k = (0, 4), p = (0.5, 0.4): row 0 all 0, row 1 mean 6 (se 0.039) */
  mxw_ndarray *k = t_array(1, (int32_t[]){2}, (float[]){0, 4});
  mxw_ndarray *p = t_array(1, (int32_t[]){2}, (float[]){0.5f, 0.4f});
  ins[0] = k;
  ins[1] = p;
  a = RUN("_sample_negative_binomial", ins, 2, "shape", "(10000,)");
  assert_counts(a, 0, 2 * S);
  assert_true(moments_of(a, 0, S).mean == 0);
  assert_within(moments_of(a, S, S).mean, 6, 0.2);
  mxw_ndarray_free(a);
  mxw_ndarray_free(k);
  mxw_ndarray_free(p);

  /* generalized negative binomial mu = (3, 3), alpha = (0, 1): variances mu = 3 and
   * mu + mu^2 = 12 (5 se about 0.3 and 2) */
  mxw_ndarray *gm = t_array(1, (int32_t[]){2}, (float[]){3, 3});
  mxw_ndarray *ga = t_array(1, (int32_t[]){2}, (float[]){0, 1});
  ins[0] = gm;
  ins[1] = ga;
  a = RUN("sample_generalized_negative_binomial", ins, 2, "shape", "(10000,)");
  m0 = moments_of(a, 0, S);
  m1 = moments_of(a, S, S);
  assert_within(m0.mean, 3, 0.09);
  assert_within(m0.var, 3, 0.3);
  assert_within(m1.mean, 3, 0.18);
  assert_within(m1.var, 12, 2.0);
  mxw_ndarray_free(a);

  /* shape and type errors: parameters of different shapes or dtypes, a zero sample dim, an
   * integer output dtype */
  mxw_ndarray *o[2] = {NULL, NULL};
  int n = 1;
  mxw_ndarray *three = t_array(1, (int32_t[]){3}, (float[]){1, 2, 3});
  ins[1] = three;
  assert_int_equal(t_invoke("_sample_uniform", ins, 2, o, &n, NULL), -1);
  assert_error_contains("Operator _sample_uniform");
  assert_error_contains("share one shape");
  ins[1] = ga;
  assert_int_equal(t_invoke("_sample_uniform", ins, 2, o, &n, "shape", "(2, 0)", NULL), -1);
  assert_error_contains("positive");
  assert_int_equal(t_invoke("_sample_uniform", ins, 2, o, &n, "dtype", "int32", NULL), -1);
  assert_error_contains("'dtype'");
  mxw_ndarray *f64 = t_array_f64(1, (int32_t[]){2}, (double[]){1, 2});
  ins[1] = f64;
  assert_int_equal(t_invoke("_sample_uniform", ins, 2, o, &n, NULL), -1);
  assert_error_contains("one dtype");
  mxw_ndarray_free(f64);
  mxw_ndarray_free(three);
  mxw_ndarray_free(gm);
  mxw_ndarray_free(ga);
}

static void test_multinomial(void **state) {
  (void)state;
  mxw_random_seed(3);
  const int64_t S = 20000;
  const float probs[10] = {0, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.5f, 0, 0, 0};
  mxw_ndarray *x = t_array(2, (int32_t[]){2, 5}, probs);
  mxw_ndarray *o[2] = {NULL, NULL};
  int n = 2;
  assert_int_equal(t_invoke("_sample_multinomial", &x, 1, o, &n, "shape", "(20000,)", "get_prob", "True", NULL), 0);
  assert_int_equal(n, 2);
  t_expect_shape(o[0], 2, (int32_t[]){2, 20000});
  t_expect_shape(o[1], 2, (int32_t[]){2, 20000});
  assert_int_equal(mxw_ndarray_dtype(o[0]), MXW_INT32);   /* dtype default int32 */
  assert_int_equal(mxw_ndarray_dtype(o[1]), MXW_FLOAT32); /* log-probabilities in data's dtype */
  const int32_t *idx = (const int32_t *)mxw_ndarray_data(o[0]);
  const float *lp = (const float *)mxw_ndarray_data(o[1]);
  for (int r = 0; r < 2; r++) {
    int64_t count[5] = {0};
    for (int64_t j = 0; j < S; j++) {
      int32_t c = idx[r * S + j];
      assert_true(c >= 0 && c < 5);
      assert_true(probs[r * 5 + c] > 0); /* a zero-probability outcome is never drawn */
      assert_close(lp[r * S + j], logf(probs[r * 5 + c]), 1e-6);
      count[c]++;
    }
    /* frequencies within 5 se of the probabilities: se <= sqrt(0.25 / 20000) = 0.0035 */
    for (int c = 0; c < 5; c++) assert_within((double)count[c] / (double)S, probs[r * 5 + c], 0.018);
  }
  mxw_ndarray_free(o[0]);
  mxw_ndarray_free(o[1]);

  /* one output without get_prob; a 1-d distribution with shape () gives shape (1,), with
   * shape (3, 2) gives (3, 2) */
  mxw_ndarray *d1 = t_array(1, (int32_t[]){3}, (float[]){0, 0, 1});
  n = 2;
  o[0] = o[1] = NULL;
  assert_int_equal(t_invoke("sample_multinomial", &d1, 1, o, &n, NULL), 0);
  assert_int_equal(n, 1);
  t_expect_shape(o[0], 1, (int32_t[]){1});
  assert_int_equal(((const int32_t *)mxw_ndarray_data(o[0]))[0], 2);
  mxw_ndarray_free(o[0]);
  n = 2;
  o[0] = o[1] = NULL;
  assert_int_equal(t_invoke("_sample_multinomial", &d1, 1, o, &n, "shape", "(3, 2)", "dtype", "float64", NULL), 0);
  t_expect_shape(o[0], 2, (int32_t[]){3, 2});
  t_expect_f64(o[0], (double[]){2, 2, 2, 2, 2, 2}, 6, 0);
  mxw_ndarray_free(o[0]);
  /* no shape attr with 2-d data: one sample per distribution, shape (2,) */
  o[0] = RUN("_sample_multinomial", &x, 1, "dtype", "uint8");
  t_expect_shape(o[0], 1, (int32_t[]){2});
  assert_int_equal(mxw_ndarray_dtype(o[0]), MXW_UINT8);
  mxw_ndarray_free(o[0]);

  /* errors: a negative probability, integer data */
  ((float *)mxw_ndarray_data(d1))[0] = -0.5f;
  n = 2;
  o[0] = o[1] = NULL;
  assert_int_equal(t_invoke("_sample_multinomial", &d1, 1, o, &n, NULL), -1);
  assert_error_contains("Operator _sample_multinomial");
  assert_error_contains("non-negative");
  mxw_ndarray *ints = NULL;
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){3}, MXW_INT32, &ints), 0);
  assert_int_equal(t_invoke("_sample_multinomial", &ints, 1, o, &n, NULL), -1);
  assert_error_contains("float");
  mxw_ndarray_free(ints);
  mxw_ndarray_free(d1);
  mxw_ndarray_free(x);
}

static int cmp_row(const void *a, const void *b) {
  const float *x = (const float *)a, *y = (const float *)b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

static void test_shuffle(void **state) {
  (void)state;
  /* a (6, 3) array whose row r is (r, 10 r, 100 r): a permutation of the rows, each row whole */
  float vals[18];
  for (int r = 0; r < 6; r++) {
    vals[3 * r] = (float)r;
    vals[3 * r + 1] = 10.f * (float)r;
    vals[3 * r + 2] = 100.f * (float)r;
  }
  mxw_ndarray *x = t_array(2, (int32_t[]){6, 3}, vals);
  mxw_random_seed(5);
  mxw_ndarray *a = RUN("_shuffle", &x, 1, NULL, NULL);
  mxw_random_seed(5);
  mxw_ndarray *b = RUN("shuffle", &x, 1, NULL, NULL);
  t_expect_shape(a, 2, (int32_t[]){6, 3});
  float rows[18];
  memcpy(rows, mxw_ndarray_data(a), sizeof rows);
  assert_memory_equal(rows, mxw_ndarray_data(b), sizeof rows); /* same seed, same order */
  for (int r = 0; r < 6; r++) {
    assert_true(rows[3 * r + 1] == 10.f * rows[3 * r] && rows[3 * r + 2] == 100.f * rows[3 * r]);
  }
  qsort(rows, 6, 3 * sizeof(float), cmp_row);
  assert_memory_equal(rows, vals, sizeof rows);                /* the same multiset of rows */
  assert_memory_equal(mxw_ndarray_data(x), vals, sizeof vals); /* the input is unchanged */
  mxw_ndarray_free(a);
  mxw_ndarray_free(b);
  mxw_ndarray_free(x);

  /* uniformity: shuffling (0, 1, 2, 3) 24000 times puts 0 in each place with frequency 1/4
   * (se sqrt(3 / 16 / 24000) = 0.0028; 5 se: 0.014); int64 data moves whole */
  mxw_ndarray *y = NULL;
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){4}, MXW_INT64, &y), 0);
  for (int i = 0; i < 4; i++) ((int64_t *)mxw_ndarray_data(y))[i] = (int64_t)i << 40;
  int place[4] = {0};
  for (int t = 0; t < 24000; t++) {
    mxw_ndarray *s = RUN("_npi_shuffle", &y, 1, NULL, NULL);
    const int64_t *sv = (const int64_t *)mxw_ndarray_data(s);
    int64_t sum = 0;
    for (int i = 0; i < 4; i++) {
      sum += sv[i] >> 40;
      if (sv[i] == 0) place[i]++;
    }
    assert_int_equal(sum, 6);
    mxw_ndarray_free(s);
  }
  for (int i = 0; i < 4; i++) assert_within(place[i] / 24000.0, 0.25, 0.014);
  mxw_ndarray_free(y);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_poisson_family),
      cmocka_unit_test(test_sample_per_element),
      cmocka_unit_test(test_multinomial),
      cmocka_unit_test(test_shuffle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
