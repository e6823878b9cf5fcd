/* pdf.c -- the densities of MXNet 1.9.1's sampling distributions (src/operator/random/pdf_op.h):
 * _random_pdf_<distr>(sample, params..., is_log=False), aliases random_pdf_<distr>:
 *
 *   uniform(low, high)         1 / (high - low) (the support is not checked, as MXNet)
 *   normal(mu, sigma)          exp(-(x - mu)^2 / 2 sigma^2) / (sqrt(2 pi) sigma)
 *   gamma(alpha, beta)         beta^alpha x^(alpha - 1) exp(-beta x) / Gamma(alpha) (beta a rate)
 *   exponential(lam)           lam exp(-lam x)
 *   poisson(lam)               lam^x exp(-lam) / Gamma(x + 1)
 *   negative_binomial(k, p)    Gamma(x + k) / (Gamma(x + 1) Gamma(k)) p^k (1 - p)^x
 *   generalized_negative_binomial(mu, alpha)   negative_binomial(1 / alpha, 1 / (mu alpha + 1))
 *   dirichlet(alpha)           Gamma(sum alpha) / prod Gamma(alpha_j) prod x_j^(alpha_j - 1)
 *
 * The parameters (all of one shape S) hold one distribution each; the sample's shape starts with
 * S and each distribution's density is taken at every sample under it (dirichlet: parameters
 * (S', k), samples (S', n, k) of vectors, the output without the last axis, (1,) for a single
 * 1-D sample). is_log gives the log density. In double.
 * Gradients (MXNet's PDF_*_Grad, through one kernel, _backward_pdf): the parameters' summed over
 * their samples; the sample's for the continuous distributions, 0 for uniform, poisson and the
 * binomials; psi is the digamma function. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/mxw_parallel.h"

#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
typedef char shape_buf[160];

enum { UNIFORM, NORMAL, GAMMA, EXPONENTIAL, POISSON, NEG_BINOMIAL, GEN_NEG_BINOMIAL, DIRICHLET };
static const char *const k_distrs[] = {
    "uniform",   "normal", "gamma", "exponential", "poisson", "negative_binomial", "generalized_negative_binomial",
    "dirichlet", NULL}; /* (in the enum's order) */
static const int k_nparams[] = {2, 2, 2, 1, 1, 2, 2, 1};
static const int k_sample_grad[] = {0, 1, 1, 1, 0, 0, 0, 1};

typedef struct {
  int is_log;
  int distr; /* _backward_pdf's: an index of k_distrs */
} PdfParam;
static const mxw_attr_spec k_pdf_attrs[] = {
    MXW_A_BOOL("is_log", PdfParam, is_log, "False",
               "If set, compute the density of the log-probability instead of the probability."),
};
static const mxw_attr_spec k_pdf_backward_attrs[] = {
    MXW_A_BOOL("is_log", PdfParam, is_log, "False", "the forward's is_log"),
    MXW_A_ENUM("distr", PdfParam, distr, "uniform", k_distrs, "the distribution"),
};

/* the layout: P distributions, S samples each, k elements per sample (dirichlet), n outputs */
typedef struct {
  int64_t P, S, k;
} pdf_layout;
static int layout(int kind, const mxw_shape *sample, const mxw_shape *param, pdf_layout *l) {
  shape_buf a, b;
  const int vec = kind == DIRICHLET;
  MXW_CHECK(param->ndim <= sample->ndim, "the sample %s must have at least the parameters' %d axes",
            SHAPE_STR(sample, a), param->ndim);
  for (int i = 0; i < param->ndim; i++) {
    const int64_t want = vec && i == param->ndim - 1 ? sample->dims[sample->ndim - 1] : sample->dims[i];
    MXW_CHECK(param->dims[i] == want, "the parameters' shape %s does not lead the sample's %s", SHAPE_STR(param, a),
              SHAPE_STR(sample, b));
  }
  MXW_CHECK(!vec || (param->ndim > 0 && param->dims[param->ndim - 1] > 0),
            "dirichlet: the parameters %s need a last axis of at least one element", SHAPE_STR(param, a));
  const int64_t ps = mxw_shape_size(param), ss = mxw_shape_size(sample);
  l->k = vec ? (param->ndim ? param->dims[param->ndim - 1] : 1) : 1;
  l->P = vec ? (l->k ? ps / l->k : 0) : ps;
  l->S = l->P && l->k ? ss / l->k / l->P : 0;
  return 0;
}
static int infer_pdf_kind(int kind, int nin, mxw_shape *in, mxw_shape *out) {
  for (int i = 0; i < nin; i++)
    if (!mxw_shape_known(&in[i])) return 0;
  for (int i = 2; i < nin; i++) MXW_TRY(mxw_shape_assign(&in[i], &in[1], "parameter"));
  pdf_layout l;
  MXW_TRY(layout(kind, &in[0], &in[1], &l));
  if (kind != DIRICHLET) return mxw_shape_assign(&out[0], &in[0], "output");
  if (in[0].ndim == 1) {
    const int64_t one = 1;
    const mxw_shape s = mxw_shape_make(1, &one);
    return mxw_shape_assign(&out[0], &s, "output");
  }
  const mxw_shape s = mxw_shape_make(in[0].ndim - 1, in[0].dims);
  return mxw_shape_assign(&out[0], &s, "output");
}

static double nb_lpdf(double l, double p, double x) {
  return (lgamma(x + l) - lgamma(x + 1) - lgamma(l)) + l * log(p) + x * log(1 - p);
}
/* the log density of sample x (k elements) under parameters a, b (dirichlet: a[0..k)) */
static double lpdf(int kind, const double *x, const double *a, double b, int64_t k) {
  switch (kind) {
    case UNIFORM: return -log(b - a[0]);
    case NORMAL: return -0.5 * (x[0] - a[0]) * (x[0] - a[0]) / (b * b) - log(sqrt(2 * M_PI) * b);
    case GAMMA: return a[0] * log(b) + (a[0] - 1) * log(x[0]) - b * x[0] - lgamma(a[0]);
    case EXPONENTIAL: return log(a[0]) - a[0] * x[0];
    case POISSON: return x[0] * log(a[0]) - lgamma(x[0] + 1) - a[0];
    case NEG_BINOMIAL: return nb_lpdf(a[0], b, x[0]);
    case GEN_NEG_BINOMIAL: return nb_lpdf(1 / b, 1 / (a[0] * b + 1), x[0]);
    default: {
      double sa = 0, sl = 0, sx = 0;
      for (int64_t j = 0; j < k; j++) {
        sa += a[j];
        sl += lgamma(a[j]);
        sx += (a[j] - 1) * log(x[j]);
      }
      return sx + (lgamma(sa) - sl);
    }
  }
}
/* d(log density) / d(x, a, b) for one sample: dx[0..k), da[0..k), *db */
static void dlpdf(int kind, const double *x, const double *a, double b, int64_t k, double *dx, double *da, double *db) {
  dx[0] = 0;
  *db = 0;
  switch (kind) {
    case UNIFORM:
      da[0] = 1 / (b - a[0]);
      *db = 1 / (a[0] - b);
      break;
    case NORMAL: {
      const double d = x[0] - a[0], s2 = b * b;
      da[0] = d / s2;
      *db = (d * d - s2) / (s2 * b);
      dx[0] = -d / s2;
      break;
    }
    case GAMMA:
      da[0] = log(b) + log(x[0]) - mxw_digamma(a[0]);
      *db = a[0] / b - x[0];
      dx[0] = (a[0] - 1) / x[0] - b;
      break;
    case EXPONENTIAL:
      da[0] = 1 / a[0] - x[0];
      dx[0] = -a[0];
      break;
    case POISSON: da[0] = x[0] / a[0] - 1; break;
    case NEG_BINOMIAL:
      da[0] = mxw_digamma(x[0] + a[0]) - mxw_digamma(a[0]) + log(b);
      *db = a[0] / b - x[0] / (1 - b);
      break;
    case GEN_NEG_BINOMIAL: {
      const double l = 1 / b, p = 1 / (a[0] * b + 1), den = a[0] * b + 1;
      const double gl = mxw_digamma(x[0] + l) - mxw_digamma(l) + log(p), gp = l / p - x[0] / (1 - p);
      da[0] = -gp * b / (den * den);
      *db = -gl / (b * b) - gp * a[0] / (den * den);
      break;
    }
    default: {
      double sa = 0;
      for (int64_t j = 0; j < k; j++) sa += a[j];
      const double psi_sum = mxw_digamma(sa);
      for (int64_t j = 0; j < k; j++) {
        da[j] = log(x[j]) + psi_sum - mxw_digamma(a[j]);
        dx[j] = (a[j] - 1) / x[j];
      }
    }
  }
}

/* the inputs' values for distribution p, sample s: x[0..k), a[0..k), b */
static void load_point(const mxw_tensor *in, int nparams, const pdf_layout *l, int64_t p, int64_t s, double *x,
                       double *a, double *b) {
  for (int64_t j = 0; j < l->k; j++) {
    x[j] = mxw_load_f64(in[0].data, in[0].dtype, (p * l->S + s) * l->k + j);
    a[j] = mxw_load_f64(in[1].data, in[1].dtype, p * l->k + j);
  }
  *b = nparams > 1 ? mxw_load_f64(in[2].data, in[2].dtype, p) : 0;
}
/* scratch for one sample's values: n arrays of k doubles */
static double *point_scratch(int64_t k, int n) {
  return (double *)mxw_scratch(0, (size_t)(n * k + 1) * sizeof(double));
}
static int pdf_forward(const mxw_op_call *c, int kind) {
  const PdfParam *pp = (const PdfParam *)c->param;
  pdf_layout l;
  MXW_TRY(layout(kind, &c->inputs[0].shape, &c->inputs[1].shape, &l));
  double *x = point_scratch(l.k, 2);
  if (!x) return -1;
  double *a = x + l.k, b;
  for (int64_t p = 0; p < l.P; p++)
    for (int64_t s = 0; s < l.S; s++) {
      load_point(c->inputs, k_nparams[kind], &l, p, s, x, a, &b);
      const double v = lpdf(kind, x, a, b, l.k);
      mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, p * l.S + s, pp->is_log ? v : exp(v));
    }
  return 0;
}
static int grad_pdf(mxw_grad_ctx *g, int kind) {
  const PdfParam *pp = (const PdfParam *)mxw_grad_param(g);
  const int np = k_nparams[kind];
  mxw_gid in[5] = {mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1), np > 1 ? mxw_grad_in(g, 2) : -1, -1},
          out[3];
  in[np + 2] = mxw_grad_out(g, 0);
  MXW_TRY(mxw_grad_op_n(g, "_backward_pdf", MXW_KV("is_log", pp->is_log ? "True" : "False", "distr", k_distrs[kind]),
                        in, np + 3, out, np + 1));
  for (int i = 0; i <= np; i++)
    if (i > 0 || k_sample_grad[kind]) MXW_TRY(mxw_grad_set(g, i, out[i]));
  return 0;
}

#define PDF_OP(KIND, NAME, ...)                                                                                   \
  static const char *const k_inputs_##NAME[] = {"sample", __VA_ARGS__, NULL};                                     \
  static int infer_##NAME(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {                  \
    (void)param;                                                                                                  \
    (void)nout;                                                                                                   \
    return infer_pdf_kind(KIND, nin, in, out);                                                                    \
  }                                                                                                               \
  static int fwd_##NAME(const mxw_op_call *c) { return pdf_forward(c, KIND); }                                    \
  static int grad_##NAME(mxw_grad_ctx *g) { return grad_pdf(g, KIND); }                                           \
  static const mxw_op_def op_##NAME = {.name = "_random_pdf_" #NAME,                                              \
                                       .aliases = (const char *const[]){"random_pdf_" #NAME, NULL},               \
                                       .doc = MXW_DOC("the density of the " #NAME " distribution at the sample"), \
                                       .attrs = k_pdf_attrs,                                                      \
                                       .num_attrs = 1,                                                            \
                                       .param_size = sizeof(PdfParam),                                            \
                                       .num_inputs = (int)(sizeof k_inputs_##NAME / sizeof(char *)) - 1,          \
                                       .input_names = k_inputs_##NAME,                                            \
                                       .num_outputs = 1,                                                          \
                                       .infer_shape = infer_##NAME,                                               \
                                       .forward = fwd_##NAME,                                                     \
                                       .gradient = grad_##NAME};
PDF_OP(UNIFORM, uniform, "low", "high")
PDF_OP(NORMAL, normal, "mu", "sigma")
PDF_OP(GAMMA, gamma, "alpha", "beta")
PDF_OP(EXPONENTIAL, exponential, "lam")
PDF_OP(POISSON, poisson, "lam")
PDF_OP(NEG_BINOMIAL, negative_binomial, "k", "p")
PDF_OP(GEN_NEG_BINOMIAL, generalized_negative_binomial, "mu", "alpha")
PDF_OP(DIRICHLET, dirichlet, "alpha")

/* _backward_pdf(ograd, sample, params..., out; distr, is_log) -> (d sample, d params...) */
static int bwd_kind(const void *param) { return ((const PdfParam *)param)->distr; }
static int bwd_num_inputs(const void *param) { return k_nparams[bwd_kind(param)] + 3; }
static int bwd_num_outputs(const void *param) { return k_nparams[bwd_kind(param)] + 1; }
static int infer_backward_pdf(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  for (int i = 0; i < nout; i++) MXW_TRY(mxw_shape_assign(&out[i], &in[i + 1], "output"));
  (void)param;
  return 0;
}
static int infer_type_backward_pdf(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nin;
  for (int i = 0; i < nout; i++)
    if (in[i + 1] >= 0) out[i] = in[i + 1];
  return 0;
}
static int fwd_backward_pdf(const mxw_op_call *c) {
  const PdfParam *pp = (const PdfParam *)c->param;
  const int kind = bwd_kind(pp), np = k_nparams[kind];
  const mxw_tensor *og = &c->inputs[0], *in = c->inputs + 1, *o = &c->inputs[np + 2];
  pdf_layout l;
  MXW_TRY(layout(kind, &in[0].shape, &in[1].shape, &l));
  double *x = point_scratch(l.k, 4);
  if (!x) return -1;
  double *a = x + l.k, *dx = a + l.k, *da = dx + l.k, b, db;
  for (int i = 1; i <= np; i++) /* the parameters' sums */
    memset(c->outputs[i].data, 0,
           (size_t)mxw_tensor_size(&c->outputs[i]) * (size_t)mxw_dtype_size(c->outputs[i].dtype));
  for (int64_t p = 0; p < l.P; p++)
    for (int64_t s = 0; s < l.S; s++) {
      const int64_t at = p * l.S + s;
      load_point(in, np, &l, p, s, x, a, &b);
      const double g = mxw_load_f64(og->data, og->dtype, at), v = mxw_load_f64(o->data, o->dtype, at);
      const double sc = g * (pp->is_log ? 1.0 : v);
      dlpdf(kind, x, a, b, l.k, dx, da, &db);
      for (int64_t j = 0; j < l.k; j++) {
        mxw_store_f64(c->outputs[0].data, c->outputs[0].dtype, at * l.k + j, k_sample_grad[kind] ? sc * dx[j] : 0.0);
        const int64_t pa = p * l.k + j;
        mxw_store_f64(c->outputs[1].data, c->outputs[1].dtype, pa,
                      mxw_load_f64(c->outputs[1].data, c->outputs[1].dtype, pa) + sc * da[j]);
      }
      if (np > 1)
        mxw_store_f64(c->outputs[2].data, c->outputs[2].dtype, p,
                      mxw_load_f64(c->outputs[2].data, c->outputs[2].dtype, p) + sc * db);
    }
  return 0;
}
static const char *const k_backward_inputs[] = {"ograd", "sample", "param1", "param2", NULL};
static const mxw_op_def op_backward_pdf = {
    .name = "_backward_pdf",
    .doc = MXW_DOC("the gradients of a _random_pdf_* op with respect to its sample and parameters"),
    .attrs = k_pdf_backward_attrs,
    .num_attrs = 2,
    .param_size = sizeof(PdfParam),
    .num_inputs = MXW_VARIADIC,
    .input_names = k_backward_inputs,
    .num_inputs_fn = bwd_num_inputs,
    .num_outputs_fn = bwd_num_outputs,
    .infer_shape = infer_backward_pdf,
    .infer_type = infer_type_backward_pdf,
    .forward = fwd_backward_pdf,
};

MXW_FAMILY(pdf, &op_uniform, &op_normal, &op_gamma, &op_exponential, &op_poisson, &op_negative_binomial,
           &op_generalized_negative_binomial, &op_dirichlet, &op_backward_pdf);
