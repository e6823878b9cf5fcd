/* random.c -- the random operators, all drawing from the core's one seeded stream
 * (mx.random.seed):
 *  - samplers with scalar parameters in attributes and a shape attribute: _random_uniform,
 *    _random_normal, _random_exponential, _random_gamma, _random_poisson,
 *    _random_negative_binomial, _random_generalized_negative_binomial, _random_randint;
 *  - samplers with per-element parameter arrays (Python's nd.random.* given NDArrays):
 *    _sample_uniform, _sample_normal, _sample_exponential, _sample_gamma, _sample_poisson,
 *    _sample_negative_binomial, _sample_generalized_negative_binomial: output shape = parameter
 *    shape + `shape`, each parameter set drawing prod(shape) samples;
 *  - _sample_multinomial (with get_prob's log-probability output) and _shuffle.
 *
 * Names, aliases, attributes, defaults, shape and type rules follow MXNet 1.9.1
 * (src/operator/random/sample_op.h, multisample_op.h, sample_multinomial_op.h, shuffle_op.cc).
 * The values are reproducible per seed here but do not match MXNet's own generator. Draws are
 * computed in double. Where MXNet would loop forever or read out of bounds on a bad
 * per-element parameter, the sample is NaN (negative rates/shapes) or the op fails with a
 * message (negative multinomial probabilities). */
#include <math.h>

#include "../core/mxw_core.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *const k_no_inputs[] = {NULL};

/* ---- draws ------------------------------------------------------------------------------------ */
typedef double (*draw_fn)(double a, double b);

static double draw_uniform(double low, double high) { return low + (high - low) * mxw_rand_uniform(); }
static double draw_normal(double loc, double scale) { return loc + scale * mxw_rand_normal(); }
/* Exponential by inversion: 1 - u is in (0, 1], so the log is finite. */
static double draw_exponential(double lam, double unused) {
  (void)unused;
  return -log(1.0 - mxw_rand_uniform()) / lam;
}

/* Gamma(alpha, scale 1) by Marsaglia and Tsang (2000); alpha < 1 through Gamma(alpha + 1) *
 * U^(1/alpha). alpha == 0 is the point mass at 0; a negative or NaN alpha gives NaN. */
static double gamma1(double alpha) {
  if (alpha == 0.0) return 0.0;
  if (!(alpha > 0.0) || isinf(alpha)) return NAN;
  double boost = 1.0;
  if (alpha < 1.0) {
    double u;
    do u = mxw_rand_uniform();
    while (u <= 0.0);
    boost = pow(u, 1.0 / alpha);
    alpha += 1.0;
  }
  double d = alpha - 1.0 / 3.0, cc = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = mxw_rand_normal();
      v = 1.0 + cc * x;
    } while (v <= 0.0);
    v = v * v * v;
    double u = mxw_rand_uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v * boost;
    if (u > 0.0 && log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v * boost;
  }
}
static double draw_gamma(double alpha, double beta) { return gamma1(alpha) * beta; }

/* Poisson(lam): multiplication of uniforms below 12 (Knuth); above, rejection from a Cauchy
 * envelope (Press et al., Numerical Recipes, ch. 7.3), as MXNet's sampler does. A negative or
 * NaN rate gives NaN, an infinite one infinity. */
static double draw_poisson(double lam, double unused) {
  (void)unused;
  if (!(lam >= 0.0)) return NAN;
  if (isinf(lam)) return INFINITY;
  if (lam < 12.0) {
    double limit = exp(-lam), prod = mxw_rand_uniform();
    double k = 0;
    while (prod > limit) {
      k += 1;
      prod *= mxw_rand_uniform();
    }
    return k;
  }
  const double sq = sqrt(2.0 * lam), loglam = log(lam), g = lam * loglam - lgamma(lam + 1.0);
  for (;;) {
    double y, em;
    do {
      y = tan(3.141592653589793 * mxw_rand_uniform());
      em = sq * y + lam;
    } while (em < 0.0);
    em = floor(em);
    double t = 0.9 * (1.0 + y * y) * exp(em * loglam - lgamma(em + 1.0) - g);
    if (mxw_rand_uniform() <= t) return em;
  }
}

/* Negative binomial in MXNet's parametrisation (k the failure limit, p the failure probability):
 * a Poisson whose rate is Gamma(k, (1 - p) / p), so the mean is k (1 - p) / p and the variance
 * k (1 - p) / p^2. */
static double draw_negative_binomial(double k, double p) { return draw_poisson(gamma1(k) * ((1.0 - p) / p), 0); }
/* Generalized negative binomial with mean mu and dispersion alpha (variance mu + alpha mu^2): a
 * Poisson whose rate is Gamma(1 / alpha, alpha mu); alpha == 0 is Poisson(mu). */
static double draw_generalized_negative_binomial(double mu, double alpha) {
  if (alpha == 0.0) return draw_poisson(mu, 0);
  return draw_poisson(gamma1(1.0 / alpha) * (alpha * mu), 0);
}

/* Writes n draws draw(a, b) into out[begin, begin + n) of a float16/32/64 output. */
static void store_draws(mxw_tensor *out, int64_t begin, int64_t n, draw_fn draw, double a, double b) {
  if (out->dtype == MXW_FLOAT32) {
    float *restrict o = (float *)out->data + begin;
    for (int64_t i = 0; i < n; i++) o[i] = (float)draw(a, b);
  } else if (out->dtype == MXW_FLOAT64) {
    double *restrict o = (double *)out->data + begin;
    for (int64_t i = 0; i < n; i++) o[i] = draw(a, b);
  } else {
    for (int64_t i = 0; i < n; i++) mxw_store_f64(out->data, out->dtype, begin + i, draw(a, b));
  }
}

/* ---- shared shape and type rules --------------------------------------------------------------- */
/* The `shape` attribute of the scalar samplers as a (possibly partial) output shape, in MXNet
 * 1.x's legacy convention: rank 0 -> unknown rank, 0 dims -> unknown dims (inside a graph the
 * shape may then come from the consumer). */
static int infer_shape_from_attr(const mxw_tuple *t, mxw_shape *out) {
  char buf[160];
  if (t->ndim > MXW_MAX_NDIM)
    return mxw_fail("attribute 'shape' has %d dimensions, at most %d are supported", t->ndim, MXW_MAX_NDIM);
  if (t->ndim <= 0) return 0;
  mxw_shape s;
  s.ndim = t->ndim;
  for (int i = 0; i < t->ndim; i++) {
    if (t->v[i] < 0) {
      return mxw_fail("attribute 'shape' %s has a negative dimension", mxw_tuple_str(t, buf, sizeof buf));
    }
    s.dims[i] = t->v[i] == 0 ? -1 : t->v[i];
  }
  return mxw_shape_assign(&out[0], &s, "output (attribute 'shape')");
}

/* SampleOpType: a known output dtype wins (and must match a given dtype attr); else the attr;
 * else the default. The result must be one of the allowed dtypes. */
static int sample_dtype(int *out, int attr_flag, int def, const int *allowed, int num_allowed,
                        const char *allowed_text) {
  int dt;
  if (out[0] >= 0) {
    if (attr_flag >= 0 && out[0] != attr_flag)
      return mxw_fail("output dtype %s does not match attribute dtype=%s", mxw_dtype_name(out[0]),
                      mxw_dtype_name(attr_flag));
    dt = out[0];
  } else {
    dt = attr_flag >= 0 ? attr_flag : def;
  }
  int ok = 0;
  for (int i = 0; i < num_allowed; i++) ok |= allowed[i] == dt;
  MXW_CHECK(ok, "output dtype must be %s, got %s", allowed_text, mxw_dtype_name(dt));
  out[0] = dt;
  return 0;
}
static const int k_float_flags[] = {MXW_FLOAT16, MXW_FLOAT32, MXW_FLOAT64};

/* ==== samplers with scalar parameters ============================================================ */
/* The dtype enums are MXNet's: "None" means "from the graph if known, else the default". */
static const char *const k_real_dtypes[] = {"None", "float32", "float64", "float16", NULL};
static const int k_real_flags[] = {-1, MXW_FLOAT32, MXW_FLOAT64, MXW_FLOAT16};
static const char *const k_int_dtypes[] = {"None", "int32", "int64", NULL};
static const int k_int_flags[] = {-1, MXW_INT32, MXW_INT64};

/* One param struct for the real-valued samplers: a and b are (low, high), (loc, scale),
 * (lam, -), (alpha, beta), (mu, alpha) or (k, p) with k parsed as an integer. */
typedef struct {
  double a, b;
  int64_t k;
  mxw_tuple shape;
  mxw_str ctx;
  int dtype; /* index into k_real_dtypes */
} SampleParam;

#define SAMPLE_COMMON_ATTRS                                                                  \
  MXW_A_SHAPE("shape", SampleParam, shape, "()", "shape of the output"),                     \
      MXW_A_STRING("ctx", SampleParam, ctx, "", "device of the output (accepted, ignored)"), \
      MXW_A_ENUM("dtype", SampleParam, dtype, "None", k_real_dtypes, "dtype of the output; None: float32")

static const mxw_attr_spec k_uniform_attrs[] = {
    MXW_A_FLOAT("low", SampleParam, a, "0", "lower bound (included)"),
    MXW_A_FLOAT("high", SampleParam, b, "1", "upper bound (excluded)"),
    SAMPLE_COMMON_ATTRS,
};
static const mxw_attr_spec k_normal_attrs[] = {
    MXW_A_FLOAT("loc", SampleParam, a, "0", "mean"),
    MXW_A_FLOAT("scale", SampleParam, b, "1", "standard deviation (> 0)"),
    SAMPLE_COMMON_ATTRS,
};
static const mxw_attr_spec k_exponential_attrs[] = {
    MXW_A_FLOAT("lam", SampleParam, a, "1", "rate (> 0); the mean is 1 / lam"),
    SAMPLE_COMMON_ATTRS,
};
static const mxw_attr_spec k_gamma_attrs[] = {
    MXW_A_FLOAT("alpha", SampleParam, a, "1", "shape (> 0)"),
    MXW_A_FLOAT("beta", SampleParam, b, "1", "scale (> 0); the mean is alpha * beta"),
    SAMPLE_COMMON_ATTRS,
};
static const mxw_attr_spec k_poisson_attrs[] = {
    MXW_A_FLOAT("lam", SampleParam, a, "1", "rate (>= 0), the mean; samples are integers stored as floats"),
    SAMPLE_COMMON_ATTRS,
};
static const mxw_attr_spec k_negbin_attrs[] = {
    MXW_A_INT("k", SampleParam, k, "1", "limit of unsuccessful experiments (>= 0)"),
    MXW_A_FLOAT("p", SampleParam, b, "1", "failure probability in each experiment, in (0, 1]; mean k (1 - p) / p"),
    SAMPLE_COMMON_ATTRS,
};
static const mxw_attr_spec k_gennegbin_attrs[] = {
    MXW_A_FLOAT("mu", SampleParam, a, "1", "mean (>= 0)"),
    MXW_A_FLOAT("alpha", SampleParam, b, "1", "dispersion (>= 0); the variance is mu + alpha mu^2"),
    SAMPLE_COMMON_ATTRS,
};

/* The attribute checks MXNet makes when sampling, made at parse time here. */
static int validate_uniform(void *param) {
  const SampleParam *p = (const SampleParam *)param;
  MXW_CHECK(p->a <= p->b, "low must be less than or equal to high, got low=%g high=%g", p->a, p->b);
  return 0;
}
static int validate_normal(void *param) {
  const SampleParam *p = (const SampleParam *)param;
  MXW_CHECK(p->b > 0, "scale must be positive, got %g", p->b);
  return 0;
}
static int validate_exponential(void *param) {
  const SampleParam *p = (const SampleParam *)param;
  MXW_CHECK(p->a > 0, "lam must be positive, got %g", p->a);
  return 0;
}
static int validate_gamma(void *param) {
  const SampleParam *p = (const SampleParam *)param;
  MXW_CHECK(p->a > 0, "alpha must be positive, got %g", p->a);
  MXW_CHECK(p->b > 0, "beta must be positive, got %g", p->b);
  return 0;
}
static int validate_poisson(void *param) {
  const SampleParam *p = (const SampleParam *)param;
  MXW_CHECK(p->a >= 0 && isfinite(p->a), "lam must be non-negative and finite, got %g", p->a);
  return 0;
}
/* MXNet checks k >= 0 and p >= 0; p = 0 (an infinite mean) and p > 1 (a negative rate) are
 * rejected here too. */
static int validate_negbin(void *param) {
  SampleParam *p = (SampleParam *)param;
  MXW_CHECK(p->k >= 0, "k must be non-negative, got %lld", (long long)p->k);
  MXW_CHECK(p->b > 0 && p->b <= 1, "p must be in (0, 1], got %g", p->b);
  p->a = (double)p->k;
  return 0;
}
static int validate_gennegbin(void *param) {
  const SampleParam *p = (const SampleParam *)param;
  MXW_CHECK(p->a >= 0 && isfinite(p->a), "mu must be non-negative and finite, got %g", p->a);
  MXW_CHECK(p->b >= 0 && isfinite(p->b), "alpha must be non-negative and finite, got %g", p->b);
  return 0;
}

static int infer_shape_sample(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  return infer_shape_from_attr(&((const SampleParam *)param)->shape, out);
}
static int infer_type_sample(const void *param, int nin, int *in, int nout, int *out) {
  return sample_dtype(out, k_real_flags[((const SampleParam *)param)->dtype], MXW_FLOAT32, k_float_flags, 3,
                      "float16, float32 or float64");
}

static int fwd_scalar(const mxw_op_call *c, draw_fn draw) {
  const SampleParam *p = (const SampleParam *)c->param;
  store_draws(&c->outputs[0], 0, mxw_tensor_size(&c->outputs[0]), draw, p->a, p->b);
  return 0;
}
#define SCALAR_FORWARD(NAME) \
  static int fwd_random_##NAME(const mxw_op_call *c) { return fwd_scalar(c, draw_##NAME); }
SCALAR_FORWARD(uniform)
SCALAR_FORWARD(normal)
SCALAR_FORWARD(exponential)
SCALAR_FORWARD(gamma)
SCALAR_FORWARD(poisson)
SCALAR_FORWARD(negative_binomial)
SCALAR_FORWARD(generalized_negative_binomial)

#define SAMPLE_OP(VAR, NAME, ALIAS_LIST, ATTRS, VALIDATE, FWD, DOC)                  \
  static const mxw_op_def VAR = {.name = NAME,                                       \
                                 .aliases = ALIAS_LIST,                              \
                                 .doc = MXW_DOC(DOC),                                \
                                 .attrs = ATTRS,                                     \
                                 .num_attrs = (int)(sizeof ATTRS / sizeof ATTRS[0]), \
                                 .param_size = sizeof(SampleParam),                  \
                                 .validate = VALIDATE,                               \
                                 .num_inputs = 0,                                    \
                                 .input_names = k_no_inputs,                         \
                                 .num_outputs = 1,                                   \
                                 .infer_shape = infer_shape_sample,                  \
                                 .infer_type = infer_type_sample,                    \
                                 .forward = FWD,                                     \
                                 .no_grad = 1};

SAMPLE_OP(op_random_uniform, "_random_uniform", ALIASES("uniform", "random_uniform"), k_uniform_attrs, validate_uniform,
          fwd_random_uniform, "uniform samples in [low, high)")
SAMPLE_OP(op_random_normal, "_random_normal", ALIASES("normal", "random_normal"), k_normal_attrs, validate_normal,
          fwd_random_normal, "normal samples with mean loc and standard deviation scale")
SAMPLE_OP(op_random_exponential, "_random_exponential", ALIASES("random_exponential"), k_exponential_attrs,
          validate_exponential, fwd_random_exponential, "exponential samples with rate lam (mean 1 / lam)")
SAMPLE_OP(op_random_gamma, "_random_gamma", ALIASES("random_gamma"), k_gamma_attrs, validate_gamma, fwd_random_gamma,
          "gamma samples with shape alpha and scale beta (mean alpha * beta)")
SAMPLE_OP(op_random_poisson, "_random_poisson", ALIASES("random_poisson"), k_poisson_attrs, validate_poisson,
          fwd_random_poisson, "Poisson samples with rate lam (mean and variance lam), as floats")
SAMPLE_OP(op_random_negative_binomial, "_random_negative_binomial", ALIASES("random_negative_binomial"), k_negbin_attrs,
          validate_negbin, fwd_random_negative_binomial,
          "negative binomial samples: failures before k successes, failure probability p (mean k (1 - p) / p)")
SAMPLE_OP(op_random_generalized_negative_binomial, "_random_generalized_negative_binomial",
          ALIASES("random_generalized_negative_binomial"), k_gennegbin_attrs, validate_gennegbin,
          fwd_random_generalized_negative_binomial,
          "generalized negative binomial samples with mean mu and dispersion alpha (variance mu + alpha mu^2)")

/* ---- _random_randint -------------------------------------------------------------------------- */
typedef struct {
  int64_t low, high;
  mxw_tuple shape;
  mxw_str ctx;
  int dtype; /* index into k_int_dtypes */
} RandIntParam;

static const mxw_attr_spec k_randint_attrs[] = {
    MXW_A_INT("low", RandIntParam, low, NULL, "lower bound (included)"),
    MXW_A_INT("high", RandIntParam, high, NULL, "upper bound (excluded)"),
    MXW_A_SHAPE("shape", RandIntParam, shape, "()", "shape of the output"),
    MXW_A_STRING("ctx", RandIntParam, ctx, "", "device of the output (accepted, ignored)"),
    MXW_A_ENUM("dtype", RandIntParam, dtype, "None", k_int_dtypes, "dtype of the output; None: int32"),
};

/* MXNet accepts low == high but then divides by zero; an empty interval is an error here. */
static int validate_randint(void *param) {
  const RandIntParam *p = (const RandIntParam *)param;
  MXW_CHECK(p->low < p->high, "low must be less than high, got low=%lld high=%lld", (long long)p->low,
            (long long)p->high);
  return 0;
}
static int infer_shape_randint(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  return infer_shape_from_attr(&((const RandIntParam *)param)->shape, out);
}
static int infer_type_randint(const void *param, int nin, int *in, int nout, int *out) {
  const RandIntParam *p = (const RandIntParam *)param;
  static const int allowed[] = {MXW_INT32, MXW_INT64};
  MXW_TRY(sample_dtype(out, k_int_flags[p->dtype], MXW_INT32, allowed, 2, "int32 or int64"));
  if (out[0] == MXW_INT32)
    MXW_CHECK(p->low >= INT32_MIN && p->high - 1 <= INT32_MAX, "[low, high) = [%lld, %lld) does not fit dtype int32",
              (long long)p->low, (long long)p->high);
  return 0;
}

/* Uniform integer in [0, range) without modulo bias (rejection of the short last block). */
static uint64_t draw_below(uint64_t range) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t r;
  do r = mxw_rand_u64();
  while (r >= limit);
  return r % range;
}

static int fwd_randint(const mxw_op_call *c) {
  const RandIntParam *p = (const RandIntParam *)c->param;
  mxw_tensor *out = &c->outputs[0];
  int64_t n = mxw_tensor_size(out);
  uint64_t range = (uint64_t)p->high - (uint64_t)p->low; /* > 0, exact in unsigned arithmetic */
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = (uint64_t)p->low + draw_below(range);
    if (out->dtype == MXW_INT32)
      ((int32_t *)out->data)[i] = (int32_t)(int64_t)v;
    else
      ((int64_t *)out->data)[i] = (int64_t)v;
  }
  return 0;
}

static const mxw_op_def op_random_randint = {.name = "_random_randint",
                                             .aliases = ALIASES("random_randint", "_npi_random_randint"),
                                             .doc = MXW_DOC("uniform integers in [low, high)"),
                                             .attrs = k_randint_attrs,
                                             .num_attrs = 5,
                                             .param_size = sizeof(RandIntParam),
                                             .validate = validate_randint,
                                             .num_inputs = 0,
                                             .input_names = k_no_inputs,
                                             .num_outputs = 1,
                                             .infer_shape = infer_shape_randint,
                                             .infer_type = infer_type_randint,
                                             .forward = fwd_randint,
                                             .no_grad = 1};

/* ==== samplers with per-element parameter arrays (_sample_*) ===================================== */
static const char *const k_multi_dtypes[] = {"None", "float16", "float32", "float64", NULL};
static const int k_multi_flags[] = {-1, MXW_FLOAT16, MXW_FLOAT32, MXW_FLOAT64};

typedef struct {
  mxw_tuple shape; /* samples drawn per parameter set; () is one */
  int dtype;       /* index into k_multi_dtypes */
} MultiSampleParam;

static const mxw_attr_spec k_multi_attrs[] = {
    MXW_A_SHAPE("shape", MultiSampleParam, shape, "()", "shape to be sampled from each distribution"),
    MXW_A_ENUM("dtype", MultiSampleParam, dtype, "None", k_multi_dtypes, "dtype of the output; None: float32"),
};

static int validate_multi(void *param) {
  const MultiSampleParam *p = (const MultiSampleParam *)param;
  MXW_CHECK(p->shape.ndim <= MXW_MAX_NDIM, "attribute 'shape' has %d dimensions, at most %d are supported",
            p->shape.ndim, MXW_MAX_NDIM);
  for (int i = 0; i < p->shape.ndim; i++)
    MXW_CHECK(p->shape.v[i] > 0, "attribute 'shape' must be positive in every dimension, got %lld at %d",
              (long long)p->shape.v[i], i);
  return 0;
}

/* MultiSampleOpShape: the parameter arrays share one shape [s]; the output is [s] + shape. The
 * parameter shape also follows from a known output (its leading dims). */
static int infer_shape_multi(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const MultiSampleParam *p = (const MultiSampleParam *)param;
  int sn = p->shape.ndim > 0 ? p->shape.ndim : 0;
  mxw_shape t;
  t.ndim = -1;
  if (out[0].ndim > sn) {
    t.ndim = out[0].ndim - sn;
    for (int i = 0; i < t.ndim; i++) t.dims[i] = out[0].dims[i];
  }
  for (int i = 0; i < nin; i++)
    MXW_TRY(mxw_shape_assign(&t, &in[i], "the parameter arrays (they must share one shape)"));
  if (t.ndim < 0) return 0;
  MXW_CHECK(t.ndim + sn <= MXW_MAX_NDIM, "the output would have %d dimensions, at most %d are supported", t.ndim + sn,
            MXW_MAX_NDIM);
  for (int i = 0; i < nin; i++)
    MXW_TRY(mxw_shape_assign(&in[i], &t, "the parameter arrays (they must share one shape)"));
  mxw_shape o = t;
  o.ndim = t.ndim + sn;
  for (int i = 0; i < sn; i++) o.dims[t.ndim + i] = p->shape.v[i];
  return mxw_shape_assign(&out[0], &o, "output");
}

/* MultiSampleOpType: the parameter arrays share one dtype; the output's is its own (known, the
 * attr, or float32) and must be a float type. */
static int infer_type_multi(const void *param, int nin, int *in, int nout, int *out) {
  int t = -1;
  for (int i = 0; i < nin; i++) {
    if (in[i] < 0) continue;
    if (t >= 0 && in[i] != t)
      return mxw_fail("the parameter arrays must share one dtype, got %s and %s", mxw_dtype_name(t),
                      mxw_dtype_name(in[i]));
    t = in[i];
  }
  if (t >= 0)
    for (int i = 0; i < nin; i++) in[i] = t;
  return sample_dtype(out, k_multi_flags[((const MultiSampleParam *)param)->dtype], MXW_FLOAT32, k_float_flags, 3,
                      "float16, float32 or float64");
}

/* Output element i uses parameter set i / per, per = samples per set. */
static int fwd_multi(const mxw_op_call *c, draw_fn draw) {
  const mxw_tensor *a = &c->inputs[0], *b = c->num_inputs > 1 ? &c->inputs[1] : NULL;
  mxw_tensor *out = &c->outputs[0];
  int64_t nparam = mxw_tensor_size(a), nout = mxw_tensor_size(out);
  MXW_CHECK(nparam > 0, "the parameter arrays are empty");
  int64_t per = nout / nparam;
  for (int64_t j = 0; j < nparam; j++) {
    double pa = mxw_load_f64(a->data, a->dtype, j), pb = b ? mxw_load_f64(b->data, b->dtype, j) : 0.0;
    store_draws(out, j * per, per, draw, pa, pb);
  }
  return 0;
}
#define MULTI_FORWARD(NAME) \
  static int fwd_sample_##NAME(const mxw_op_call *c) { return fwd_multi(c, draw_##NAME); }
MULTI_FORWARD(uniform)
MULTI_FORWARD(normal)
MULTI_FORWARD(exponential)
MULTI_FORWARD(gamma)
MULTI_FORWARD(poisson)
MULTI_FORWARD(negative_binomial)
MULTI_FORWARD(generalized_negative_binomial)

#define MULTI_OP(VAR, DISTR, INPUTS, FWD, DOC)                                                      \
  static const char *const k_in_##VAR[] = {INPUTS, NULL};                                           \
  static const mxw_op_def VAR = {.name = "_sample_" DISTR,                                          \
                                 .aliases = ALIASES("sample_" DISTR),                               \
                                 .doc = MXW_DOC(DOC),                                               \
                                 .attrs = k_multi_attrs,                                            \
                                 .num_attrs = 2,                                                    \
                                 .param_size = sizeof(MultiSampleParam),                            \
                                 .validate = validate_multi,                                        \
                                 .num_inputs = (int)(sizeof k_in_##VAR / sizeof k_in_##VAR[0]) - 1, \
                                 .input_names = k_in_##VAR,                                         \
                                 .num_outputs = 1,                                                  \
                                 .infer_shape = infer_shape_multi,                                  \
                                 .infer_type = infer_type_multi,                                    \
                                 .forward = FWD,                                                    \
                                 .no_grad = 1};
#define PAIR(a, b) a, b

MULTI_OP(op_sample_uniform, "uniform", PAIR("low", "high"), fwd_sample_uniform,
         "uniform samples on [low[i], high[i]) per element of the parameter arrays; output shape = their shape + shape")
MULTI_OP(op_sample_normal, "normal", PAIR("mu", "sigma"), fwd_sample_normal,
         "normal samples with mean mu[i] and standard deviation sigma[i]; output shape = parameter shape + shape")
MULTI_OP(op_sample_gamma, "gamma", PAIR("alpha", "beta"), fwd_sample_gamma,
         "gamma samples with shape alpha[i] and scale beta[i]; output shape = parameter shape + shape")
MULTI_OP(op_sample_exponential, "exponential", "lam", fwd_sample_exponential,
         "exponential samples with rate lam[i]; output shape = parameter shape + shape")
MULTI_OP(op_sample_poisson, "poisson", "lam", fwd_sample_poisson,
         "Poisson samples with rate lam[i], as floats; output shape = parameter shape + shape")
MULTI_OP(op_sample_negative_binomial, "negative_binomial", PAIR("k", "p"), fwd_sample_negative_binomial,
         "negative binomial samples with failure limit k[i] and failure probability p[i]; output shape = parameter "
         "shape + shape")
MULTI_OP(op_sample_generalized_negative_binomial, "generalized_negative_binomial", PAIR("mu", "alpha"),
         fwd_sample_generalized_negative_binomial,
         "generalized negative binomial samples with mean mu[i] and dispersion alpha[i]; output shape = parameter "
         "shape + shape")

/* ==== _sample_multinomial =========================================================================== */
static const char *const k_mn_dtypes[] = {"uint8", "int32", "float16", "float32", "float64", NULL};
static const int k_mn_flags[] = {MXW_UINT8, MXW_INT32, MXW_FLOAT16, MXW_FLOAT32, MXW_FLOAT64};

typedef struct {
  mxw_tuple shape;
  int get_prob;
  int dtype; /* index into k_mn_dtypes */
} MultinomialParam;

static const mxw_attr_spec k_mn_attrs[] = {
    MXW_A_SHAPE("shape", MultinomialParam, shape, "()", "shape to be sampled from each distribution"),
    MXW_A_BOOL("get_prob", MultinomialParam, get_prob, "False",
               "also return the log probability of each sampled outcome"),
    MXW_A_ENUM("dtype", MultinomialParam, dtype, "int32", k_mn_dtypes, "dtype of the sampled indices"),
};
static const char *const k_data[] = {"data", NULL};

static int validate_mn(void *param) {
  const MultinomialParam *p = (const MultinomialParam *)param;
  MXW_CHECK(p->shape.ndim <= MXW_MAX_NDIM, "attribute 'shape' has %d dimensions, at most %d are supported",
            p->shape.ndim, MXW_MAX_NDIM);
  for (int i = 0; i < p->shape.ndim; i++)
    MXW_CHECK(p->shape.v[i] > 0, "attribute 'shape' must be positive in every dimension, got %lld at %d",
              (long long)p->shape.v[i], i);
  return 0;
}
static int mn_num_outputs(const void *param) { return ((const MultinomialParam *)param)->get_prob ? 2 : 1; }

/* SampleMultinomialOpShape: data (..., k) -> (...) + shape; a 1-d data gives shape, or (1,) when
 * shape is (). The log-probability output has the same shape. */
static int infer_shape_mn(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const MultinomialParam *p = (const MultinomialParam *)param;
  const mxw_shape *x = &in[0];
  if (x->ndim < 0) return 0;
  MXW_CHECK(x->ndim >= 1, "data must have at least one dimension (the outcomes), got a scalar");
  int sn = p->shape.ndim > 0 ? p->shape.ndim : 0;
  mxw_shape o;
  if (x->ndim == 1) {
    if (sn > 0)
      o = mxw_shape_make(sn, p->shape.v);
    else
      o = mxw_shape_make(1, (int64_t[]){1});
  } else {
    MXW_CHECK(x->ndim - 1 + sn <= MXW_MAX_NDIM, "the output would have %d dimensions, at most %d are supported",
              x->ndim - 1 + sn, MXW_MAX_NDIM);
    o.ndim = x->ndim - 1 + sn;
    for (int i = 0; i < x->ndim - 1; i++) o.dims[i] = x->dims[i];
    for (int i = 0; i < sn; i++) o.dims[x->ndim - 1 + i] = p->shape.v[i];
  }
  for (int i = 0; i < nout; i++) MXW_TRY(mxw_shape_assign(&out[i], &o, i ? "the log-probability output" : "output"));
  return 0;
}
static int infer_type_mn(const void *param, int nin, int *in, int nout, int *out) {
  const MultinomialParam *p = (const MultinomialParam *)param;
  int want = k_mn_flags[p->dtype];
  if (out[0] >= 0 && out[0] != want)
    return mxw_fail("output dtype %s does not match attribute dtype=%s", mxw_dtype_name(out[0]), mxw_dtype_name(want));
  out[0] = want;
  if (in[0] >= 0)
    MXW_CHECK(mxw_dtype_is_float(in[0]), "data must hold probabilities of a float dtype, got %s",
              mxw_dtype_name(in[0]));
  if (nout > 1) {
    if (in[0] < 0)
      in[0] = out[1];
    else if (out[1] >= 0 && out[1] != in[0])
      return mxw_fail("the log-probability output's dtype %s must be the data's %s", mxw_dtype_name(out[1]),
                      mxw_dtype_name(in[0]));
    else
      out[1] = in[0];
  }
  return 0;
}

/* Per distribution: the running sums in double; each draw u in [0, 1) picks the first outcome
 * whose cumulative probability exceeds u (so a zero-probability outcome is never picked). When
 * rounding leaves u at or above the total, the last outcome with a positive probability is
 * taken. */
static int fwd_mn(const mxw_op_call *c) {
  const mxw_tensor *x = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0], *lp = c->num_outputs > 1 ? &c->outputs[1] : NULL;
  int64_t K = x->shape.dims[x->shape.ndim - 1];
  MXW_CHECK(K > 0, "data has no outcomes (its last dimension is 0)");
  int64_t N = mxw_tensor_size(x) / K;
  if (N == 0) return 0;
  int64_t M = mxw_tensor_size(out) / N;
  if (out->dtype == MXW_UINT8) MXW_CHECK(K <= 256, "%lld outcomes do not fit dtype uint8", (long long)K);
  if (out->dtype == MXW_FLOAT16) MXW_CHECK(K <= 2049, "%lld outcomes are not exact in dtype float16", (long long)K);
  double *cum = (double *)mxw_scratch(0, (size_t)K * sizeof(double));
  if (!cum) return -1;
  for (int64_t i = 0; i < N; i++) {
    double acc = 0.0;
    int64_t last = -1;
    for (int64_t k = 0; k < K; k++) {
      double pk = mxw_load_f64(x->data, x->dtype, i * K + k);
      MXW_CHECK(pk >= 0 && isfinite(pk),
                "probabilities must be finite and non-negative, got %g at distribution %lld, outcome %lld", pk,
                (long long)i, (long long)k);
      acc += pk;
      cum[k] = acc;
      if (pk > 0) last = k;
    }
    MXW_CHECK(last >= 0, "distribution %lld has no outcome with a positive probability", (long long)i);
    for (int64_t j = 0; j < M; j++) {
      double u = mxw_rand_uniform();
      int64_t lo = 0, hi = K; /* first k with cum[k] > u */
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > u)
          hi = mid;
        else
          lo = mid + 1;
      }
      if (lo >= K) lo = last;
      mxw_store_f64(out->data, out->dtype, i * M + j, (double)lo);
      if (lp) mxw_store_f64(lp->data, lp->dtype, i * M + j, log(mxw_load_f64(x->data, x->dtype, i * K + lo)));
    }
  }
  return 0;
}

/* The gradient (MXNet's FGradient of _sample_multinomial): with get_prob, the log probabilities
 * log data[i, k] of the drawn outcomes differentiate into data (REINFORCE-style: the reward is
 * the head gradient of that output), through _backward_sample_multinomial(ograd of the log
 * probabilities, data, samples): dx[i, k] = sum over draws j of sample k of ograd[i, j] / data[i, k].
 * Without get_prob the op is non-differentiable (MakeZeroGradNodes). */
static int fwd_mn_backward(const mxw_op_call *c) {
  const mxw_tensor *og = &c->inputs[0], *x = &c->inputs[1], *s = &c->inputs[2];
  mxw_tensor *dx = &c->outputs[0];
  int64_t n = mxw_tensor_size(dx);
  int64_t K = x->shape.ndim ? x->shape.dims[x->shape.ndim - 1] : 1;
  int64_t N = K ? n / K : 0;
  memset(dx->data, 0, (size_t)n * (size_t)mxw_dtype_size(dx->dtype));
  if (N == 0) return 0;
  int64_t M = mxw_tensor_size(s) / N;
  for (int64_t i = 0; i < N; i++) {
    for (int64_t j = 0; j < M; j++) {
      int64_t k = (int64_t)mxw_load_f64(s->data, s->dtype, i * M + j);
      if (k < 0 || k >= K) continue;
      double v = mxw_load_f64(dx->data, dx->dtype, i * K + k) +
                 mxw_load_f64(og->data, og->dtype, i * M + j) / mxw_load_f64(x->data, x->dtype, i * K + k);
      mxw_store_f64(dx->data, dx->dtype, i * K + k, v);
    }
  }
  return 0;
}
static int grad_mn(mxw_grad_ctx *g) {
  if (!((const MultinomialParam *)mxw_grad_param(g))->get_prob) return 0;
  mxw_gid dx;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_sample_multinomial",
                          MXW_GIDS(mxw_grad_ograd(g, 1), mxw_grad_in(g, 0), mxw_grad_out(g, 0)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_sample_multinomial = {
    .name = "_sample_multinomial",
    .aliases = ALIASES("sample_multinomial"),
    .doc = MXW_DOC("samples outcome indices from the distributions on data's last axis (probabilities summing to 1); "
                   "get_prob also returns their log probabilities"),
    .attrs = k_mn_attrs,
    .num_attrs = 3,
    .param_size = sizeof(MultinomialParam),
    .validate = validate_mn,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .num_outputs_fn = mn_num_outputs,
    .infer_shape = infer_shape_mn,
    .infer_type = infer_type_mn,
    .forward = fwd_mn,
    .gradient = grad_mn};

static const char *const k_mn_backward_inputs[] = {"ograd", "data", "sample", NULL};
static const mxw_op_def op_backward_sample_multinomial = {
    .name = "_backward_sample_multinomial",
    .doc = MXW_DOC(
        "the gradient of _sample_multinomial's log probabilities: ograd / data scattered to the drawn outcomes"),
    .attrs = k_mn_attrs,
    .num_attrs = 3,
    .param_size = sizeof(MultinomialParam),
    .num_inputs = 3,
    .input_names = k_mn_backward_inputs,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_second,
    .infer_type = mxw_infer_type_second,
    .forward = fwd_mn_backward};

/* ==== _shuffle ======================================================================================== */
/* A copy of data with the entries along the first axis in random order (Fisher-Yates); each
 * row keeps its contents. In place when the output is the input. */
static int fwd_shuffle(const mxw_op_call *c) {
  const mxw_tensor *x = &c->inputs[0];
  mxw_tensor *out = &c->outputs[0];
  size_t es = (size_t)mxw_dtype_size(x->dtype);
  int64_t n = mxw_tensor_size(x);
  if (out->data != x->data && n > 0) memcpy(out->data, x->data, (size_t)n * es);
  if (x->shape.ndim < 1 || n == 0) return 0;
  int64_t rows = x->shape.dims[0];
  size_t row_bytes = (size_t)(n / rows) * es;
  unsigned char *tmp = (unsigned char *)mxw_scratch(0, row_bytes);
  if (!tmp) return -1;
  unsigned char *d = (unsigned char *)out->data;
  for (int64_t i = rows - 1; i > 0; i--) {
    int64_t j = (int64_t)draw_below((uint64_t)i + 1);
    if (j == i) continue;
    memcpy(tmp, d + (size_t)i * row_bytes, row_bytes);
    memcpy(d + (size_t)i * row_bytes, d + (size_t)j * row_bytes, row_bytes);
    memcpy(d + (size_t)j * row_bytes, tmp, row_bytes);
  }
  return 0;
}

static const mxw_op_def op_shuffle = {
    .name = "_shuffle",
    .aliases = ALIASES("shuffle", "_npi_shuffle"),
    .doc = MXW_DOC("a copy of data with its entries along the first axis randomly permuted"),
    .attrs = NULL,
    .num_attrs = 0,
    .param_size = 0,
    .num_inputs = 1,
    .input_names = k_data,
    .num_outputs = 1,
    .infer_shape = mxw_infer_shape_same,
    .infer_type = NULL,
    .forward = fwd_shuffle,
    .inplace = 1,
    .no_grad = 1 /* MXNet registers no FGradient: a random permutation is not differentiated */};

MXW_FAMILY(random, &op_random_uniform, &op_random_normal, &op_random_exponential, &op_random_gamma, &op_random_poisson,
           &op_random_negative_binomial, &op_random_generalized_negative_binomial, &op_random_randint,
           &op_sample_uniform, &op_sample_normal, &op_sample_gamma, &op_sample_exponential, &op_sample_poisson,
           &op_sample_negative_binomial, &op_sample_generalized_negative_binomial, &op_sample_multinomial, &op_shuffle,
           &op_backward_sample_multinomial);
