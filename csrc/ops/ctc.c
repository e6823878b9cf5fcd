/* ctc.c -- Connectionist Temporal Classification loss (MXNet 1.9.1's CTCLoss, src/operator/nn/
 * ctc_loss-inl.h with warp-ctc's CPU kernel, 3rdparty/ctc_include/detail/cpu_ctc.h), which
 * gluon.loss.CTCLoss calls.
 *
 *   data (T, N, A): activations before the softmax, A = the alphabet with its blank;
 *   label (N, Lmax): label indices, any dtype (truncated to integers);
 *   data_lengths (N,) with use_data_lengths, label_lengths (N,) with use_label_lengths;
 *   out (N,): -log p(label | data), and the hidden output grad (T, N, A): d out / d data, which
 *   the forward computes with the loss, as MXNet's does (its backward scales it by ograd).
 *
 * blank_label 'first': channel 0 is the blank, labels are 1..A-1 and a label row ends at its first
 * 0 (without label_lengths); 'last': channel A-1 is the blank, labels 0..A-2, padding -1.
 *
 * Per sequence b, with T_b steps and L_b labels, l' = the labels with blanks around and between
 * them (S = 2 L_b + 1 states), y = softmax over the alphabet, all in log space (double):
 *   alpha_t(s) = (alpha_{t-1}(s) + alpha_{t-1}(s-1) [+ alpha_{t-1}(s-2) when l'_s is not the blank
 *                and differs from l'_{s-2}]) y_t(l'_s),   alpha_0 set on the first two states;
 *   beta_t(s)  = the same recursion backward from the last two states at T_b - 1;
 *   p = alpha_{T-1}(S-1) + alpha_{T-1}(S-2);
 *   grad_t(k) = y_t(k) - sum over s with l'_s = k of alpha_t(s) beta_t(s) / (y_t(k) p)
 * (Graves et al. 2006, eq. 16). As warp-ctc: a sequence whose labels cannot fit its steps
 * (L_b + repeated neighbours > T_b) gets loss 0 and gradient 0; steps t >= T_b get gradient 0.
 *
 * MXNet reads out of bounds for a label outside the alphabet, a length beyond its axis or a
 * negative one: here each is an error naming the value. MXNet computes in float; here in double
 * (float32 results agree to rounding). float16 runs through float32. Threads: one unit per
 * sequence, each sequence computed the same way whatever thread holds it. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "../core/mxw_parallel.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
typedef char shape_buf[160];

enum { BLANK_FIRST, BLANK_LAST };
static const char *const k_blank_labels[] = {"first", "last", NULL};

typedef struct {
  int use_data_lengths;
  int use_label_lengths;
  int blank_label;
} CTCParam;

static const mxw_attr_spec k_ctc_attrs[] = {
    MXW_A_BOOL("use_data_lengths", CTCParam, use_data_lengths, "False",
               "data_lengths gives each sequence's steps (else every sequence has all T)"),
    MXW_A_BOOL("use_label_lengths", CTCParam, use_label_lengths, "False",
               "label_lengths gives each label sequence's length (else it ends at the first padding value)"),
    MXW_A_ENUM("blank_label", CTCParam, blank_label, "first", k_blank_labels,
               "first: channel 0 is the blank, padding 0; last: channel A-1 is the blank, padding -1"),
};

static const char *const k_ctc_inputs[] = {"data", "label", "data_lengths", "label_lengths", NULL};

static int ctc_num_inputs(const void *param) {
  const CTCParam *p = (const CTCParam *)param;
  return 2 + p->use_data_lengths + p->use_label_lengths;
}
/* MXNet's FListInputNames: the third input is label_lengths when only label lengths are used. */
static const char *ctc_input_name(const void *param, int i) {
  const CTCParam *p = (const CTCParam *)param;
  if (i == 2) return p->use_data_lengths ? "data_lengths" : (p->use_label_lengths ? "label_lengths" : NULL);
  if (i == 3) return "label_lengths";
  return NULL;
}
static int ctc_visible(const void *param) {
  (void)param;
  return 1;
}

static int infer_ctc(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const CTCParam *p = (const CTCParam *)param;
  (void)nout;
  shape_buf a, b;
  if (in[0].ndim < 0 && out[1].ndim >= 0) MXW_TRY(mxw_shape_assign(&in[0], &out[1], "data"));
  const mxw_shape *d = &in[0], *l = &in[1];
  MXW_CHECK(d->ndim < 0 || d->ndim == 3, "data must be 3-D (sequence_length, batch_size, alphabet_size), got shape %s",
            SHAPE_STR(d, a));
  MXW_CHECK(l->ndim < 0 || l->ndim == 2, "label must be 2-D (batch_size, label_sequence_length), got shape %s",
            SHAPE_STR(l, a));
  int64_t n = -1;
  if (d->ndim == 3) n = d->dims[1];
  if (l->ndim == 2 && l->dims[0] >= 0) {
    MXW_CHECK(n < 0 || n == l->dims[0], "the batch size of data %s and label %s differ", SHAPE_STR(d, a),
              SHAPE_STR(l, b));
    n = l->dims[0];
  }
  if (d->ndim == 3 && l->ndim == 2 && d->dims[0] >= 0 && l->dims[1] >= 0)
    MXW_CHECK(d->dims[0] >= l->dims[1],
              "the label sequence length (%lld) cannot exceed the data sequence length (%lld)", (long long)l->dims[1],
              (long long)d->dims[0]);
  mxw_shape ns = mxw_shape_make(1, &n);
  for (int i = 2; i < nin; i++) {
    const char *nm = ctc_input_name(p, i);
    MXW_CHECK(in[i].ndim < 0 || in[i].ndim == 1, "%s must be a vector, got shape %s", nm, SHAPE_STR(&in[i], a));
    if (n >= 0) MXW_TRY(mxw_shape_assign(&in[i], &ns, nm));
  }
  if (n >= 0) MXW_TRY(mxw_shape_assign(&out[0], &ns, "out"));
  if (d->ndim == 3) MXW_TRY(mxw_shape_assign(&out[1], d, "grad"));
  return 0;
}

/* out and grad take data's dtype; label and the lengths keep theirs (data's when unknown). */
static int infer_type_ctc(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  if (in[0] < 0) in[0] = out[0] >= 0 ? out[0] : out[1];
  if (in[0] < 0) return 0;
  for (int i = 0; i < nout; i++) {
    if (out[i] >= 0 && out[i] != in[0])
      return mxw_fail("output %d is %s but data is %s", i, mxw_dtype_name(out[i]), mxw_dtype_name(in[0]));
    out[i] = in[0];
  }
  for (int i = 1; i < nin; i++)
    if (in[i] < 0) in[i] = in[0];
  return 0;
}

/* ---- the kernel ------------------------------------------------------------------------------ */
typedef struct {
  const CTCParam *p;
  const mxw_tensor *data;
  mxw_tensor *loss, *grad;
  int64_t T, N, A, Lmax, blank;
  const int64_t *steps, *lens; /* per sequence */
  const int32_t *labels;       /* (N, Lmax), the first lens[b] of row b used */
  atomic_int failed;
} ctc_job;

static double log_add(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

static double load_data(const mxw_tensor *t, int64_t i) {
  return t->dtype == MXW_FLOAT32 ? (double)((const float *)t->data)[i] : mxw_load_f64(t->data, t->dtype, i);
}

/* Sequence b: its loss, and its gradient rows for t < steps[b] (the others were zeroed). */
static int ctc_sequence(const ctc_job *j, int64_t b) {
  const int64_t N = j->N, A = j->A, T = j->steps[b], L = j->lens[b], S = 2 * L + 1, blank = j->blank;
  const int32_t *lab = j->labels + b * j->Lmax;
  int64_t repeats = 0;
  for (int64_t i = 1; i < L; i++) repeats += lab[i] == lab[i - 1];
  if (L + repeats > T) { /* no alignment fits: warp-ctc's loss 0, gradient 0 */
    mxw_store_f64(j->loss->data, j->loss->dtype, b, 0.0);
    return 0;
  }
  if (T == 0) { /* no steps and no labels: p = 1 */
    mxw_store_f64(j->loss->data, j->loss->dtype, b, 0.0);
    return 0;
  }
  /* workspace: lp (T, A), alpha (T, S), beta (2, S), acc (A), l' (S) */
  const size_t bytes = (size_t)(T * A + T * S + 2 * S + A) * sizeof(double) + (size_t)S * sizeof(int64_t);
  double *lp = (double *)mxw_scratch(0, bytes);
  if (!lp) return -1;
  double *alpha = lp + T * A, *beta = alpha + T * S, *acc = beta + 2 * S;
  int64_t *lw = (int64_t *)(acc + A);
  for (int64_t s = 0; s < S; s++) lw[s] = s % 2 ? lab[s / 2] : blank;
  for (int64_t t = 0; t < T; t++) { /* log_softmax of the step's activations */
    const int64_t base = (t * N + b) * A;
    double *row = lp + t * A, mx = -INFINITY, sum = 0.0;
    for (int64_t k = 0; k < A; k++) {
      row[k] = load_data(j->data, base + k);
      if (row[k] > mx) mx = row[k];
    }
    for (int64_t k = 0; k < A; k++) sum += exp(row[k] - mx);
    const double lse = mx + log(sum);
    for (int64_t k = 0; k < A; k++) row[k] -= lse;
  }
  /* forward variables */
  for (int64_t s = 0; s < S; s++) alpha[s] = s < 2 ? lp[lw[s]] : -INFINITY;
  for (int64_t t = 1; t < T; t++) {
    const double *prev = alpha + (t - 1) * S, *row = lp + t * A;
    double *cur = alpha + t * S;
    for (int64_t s = 0; s < S; s++) {
      double v = prev[s];
      if (s >= 1) v = log_add(v, prev[s - 1]);
      if (s >= 2 && lw[s] != blank && lw[s] != lw[s - 2]) v = log_add(v, prev[s - 2]);
      cur[s] = v == -INFINITY ? v : v + row[lw[s]];
    }
  }
  const double *last = alpha + (T - 1) * S;
  const double logp = S > 1 ? log_add(last[S - 1], last[S - 2]) : last[S - 1];
  mxw_store_f64(j->loss->data, j->loss->dtype, b, -logp);
  if (!j->grad->data) return 0;
  /* backward variables, one step at a time, and the gradient of each step */
  double *bc = beta, *bn = beta + S; /* beta at t and at t + 1 */
  for (int64_t t = T - 1; t >= 0; t--) {
    const double *row = lp + t * A;
    for (int64_t s = 0; s < S; s++) {
      double v;
      if (t == T - 1) {
        v = s >= S - 2 ? 0.0 : -INFINITY;
      } else {
        v = bn[s];
        if (s + 1 < S) v = log_add(v, bn[s + 1]);
        if (s + 2 < S && lw[s] != blank && lw[s] != lw[s + 2]) v = log_add(v, bn[s + 2]);
      }
      bc[s] = v == -INFINITY ? v : v + row[lw[s]];
    }
    for (int64_t k = 0; k < A; k++) acc[k] = -INFINITY;
    const double *al = alpha + t * S;
    for (int64_t s = 0; s < S; s++)
      if (al[s] != -INFINITY && bc[s] != -INFINITY) acc[lw[s]] = log_add(acc[lw[s]], al[s] + bc[s]);
    const int64_t base = (t * N + b) * A;
    for (int64_t k = 0; k < A; k++) {
      double gk = exp(row[k]);
      if (acc[k] != -INFINITY) gk -= exp(acc[k] - row[k] - logp);
      if (j->grad->dtype == MXW_FLOAT32)
        ((float *)j->grad->data)[base + k] = (float)gk;
      else
        mxw_store_f64(j->grad->data, j->grad->dtype, base + k, gk);
    }
    double *tmp = bc;
    bc = bn;
    bn = tmp;
  }
  return 0;
}

static void ctc_chunk(void *ctx, int64_t b0, int64_t b1) {
  ctc_job *j = (ctc_job *)ctx;
  for (int64_t b = b0; b < b1; b++)
    if (ctc_sequence(j, b) != 0) {
      atomic_store(&j->failed, 1);
      return;
    }
}

/* A length input as integers (MXNet's static_cast<int>), each in [0, hi]. */
static int read_ctc_lengths(const mxw_tensor *t, const char *what, int64_t n, int64_t hi, const char *axis,
                            int64_t *v) {
  for (int64_t b = 0; b < n; b++) {
    const double x = mxw_load_f64(t->data, t->dtype, b);
    MXW_CHECK(x == x && x > -2147483649.0 && x < 2147483648.0, "%s[%lld] = %g is not a valid length", what,
              (long long)b, x);
    const int64_t k = (int64_t)x;
    MXW_CHECK(k >= 0 && k <= hi, "%s[%lld] = %g is out of range [0, %lld] (%s)", what, (long long)b, x, (long long)hi,
              axis);
    v[b] = k;
  }
  return 0;
}

static int fwd_CTCLoss(const mxw_op_call *c) {
  const CTCParam *p = (const CTCParam *)c->param;
  const mxw_tensor *data = &c->inputs[0], *label = &c->inputs[1];
  MXW_CHECK(data->dtype == MXW_FLOAT32 || data->dtype == MXW_FLOAT64, "data must be a floating-point array, got %s",
            mxw_dtype_name(data->dtype));
  const int64_t T = data->shape.dims[0], N = data->shape.dims[1], A = data->shape.dims[2], Lmax = label->shape.dims[1];
  MXW_CHECK(A >= 1 || T == 0 || N == 0, "the alphabet (data's last axis) is empty");
  mxw_tensor *loss = &c->outputs[0], *grad = &c->outputs[1];
  const size_t nint = (size_t)(N > 0 ? N : 1);
  /* steps (N), lens (N), labels (N * Lmax) on the calling thread's scratch slot 1 */
  const size_t bytes = 2 * nint * sizeof(int64_t) + (size_t)(N * Lmax + 1) * sizeof(int32_t);
  int64_t *steps = (int64_t *)mxw_scratch(1, bytes);
  if (!steps) return -1;
  int64_t *lens = steps + nint;
  int32_t *labels = (int32_t *)(lens + nint);
  if (p->use_data_lengths) {
    MXW_TRY(read_ctc_lengths(&c->inputs[2], "data_lengths", N, T, "the sequence length of data", steps));
  } else {
    for (int64_t b = 0; b < N; b++) steps[b] = T;
  }
  const int64_t blank = p->blank_label == BLANK_FIRST ? 0 : A - 1, pad = p->blank_label == BLANK_FIRST ? 0 : -1;
  if (p->use_label_lengths)
    MXW_TRY(read_ctc_lengths(&c->inputs[2 + p->use_data_lengths], "label_lengths", N, Lmax, "the label sequence length",
                             lens));
  for (int64_t b = 0; b < N; b++) {
    int64_t len = p->use_label_lengths ? lens[b] : Lmax;
    for (int64_t i = 0; i < len; i++) {
      const double x = mxw_load_f64(label->data, label->dtype, b * Lmax + i);
      MXW_CHECK(x == x && x > -2147483649.0 && x < 2147483648.0, "label[%lld, %lld] = %g is not a label index",
                (long long)b, (long long)i, x);
      const int64_t k = (int64_t)x;            /* MXNet's IndexTensorToVector: static_cast<int> */
      if (!p->use_label_lengths && k == pad) { /* the first padding value ends the row */
        len = i;
        break;
      }
      MXW_CHECK(k >= 0 && k < A && k != blank,
                "label[%lld, %lld] = %lld is not a label of an alphabet of %lld with blank_label='%s' (labels "
                "%lld..%lld)",
                (long long)b, (long long)i, (long long)k, (long long)A, k_blank_labels[p->blank_label],
                (long long)(blank == 0 ? 1 : 0), (long long)(blank == 0 ? A - 1 : A - 2));
      labels[b * Lmax + i] = (int32_t)k;
    }
    lens[b] = len;
  }
  if (grad->data) memset(grad->data, 0, (size_t)mxw_tensor_size(grad) * (size_t)mxw_dtype_size(grad->dtype));
  ctc_job j = {.p = p,
               .data = data,
               .loss = loss,
               .grad = grad,
               .T = T,
               .N = N,
               .A = A,
               .Lmax = Lmax,
               .blank = blank,
               .steps = steps,
               .lens = lens,
               .labels = labels};
  atomic_init(&j.failed, 0);
  const double per_seq = (double)T * ((double)(2 * Lmax + 1) * 12.0 + (double)A * 2.0 * MXW_COST_MATH);
  mxw_parallel_run(N, 1, per_seq, ctc_chunk, &j);
  if (atomic_load(&j.failed))
    return mxw_fail("out of memory for the workspace of a sequence (%lld steps, %lld labels, alphabet %lld)",
                    (long long)T, (long long)Lmax, (long long)A);
  return 0;
}

/* d data = ograd[b] * grad[t, b, :] (MXNet's _backward_ctc_loss). It has no gradient of its own:
 * second order through CTCLoss would need the loss's Hessian. */
static int grad_CTCLoss(mxw_grad_ctx *g) {
  mxw_gid dx = -1;
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_ctc_loss", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_out(g, 1)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}

static const mxw_op_def op_CTCLoss = {
    .name = "CTCLoss",
    .aliases = ALIASES("ctc_loss", "_npx_ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
    .doc = MXW_DOC("Connectionist Temporal Classification loss: out[b] = -log p(label[b] | softmax(data[:, b, :])) "
                   "over every alignment of the labels with blanks; data (T, N, A) before the softmax, label (N, L)"),
    .attrs = k_ctc_attrs,
    .num_attrs = (int)(sizeof k_ctc_attrs / sizeof k_ctc_attrs[0]),
    .param_size = sizeof(CTCParam),
    .num_inputs = 4,
    .input_names = k_ctc_inputs,
    .num_inputs_fn = ctc_num_inputs,
    .input_name_fn = ctc_input_name,
    .num_outputs = 2,
    .num_visible_outputs_fn = ctc_visible,
    .infer_shape = infer_ctc,
    .infer_type = infer_type_ctc,
    .forward = fwd_CTCLoss,
    .half_as_f32 = 1,
    .gradient = grad_CTCLoss,
};

/* ---- _backward_ctc_loss (ograd (N,), grad (T, N, A)) -> (T, N, A) -------------------------------- */
static const char *const k_backward_ctc_inputs[] = {"ograd", "grad", NULL};

static int infer_backward_ctc(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  shape_buf a, b;
  MXW_TRY(mxw_shape_assign(&out[0], &in[1], "output"));
  MXW_TRY(mxw_shape_assign(&in[1], &out[0], "grad"));
  if (in[1].ndim == 3 && in[0].ndim >= 0)
    MXW_CHECK(in[0].ndim == 1 && in[0].dims[0] == in[1].dims[1], "ograd %s must be (batch_size,) for grad %s",
              SHAPE_STR(&in[0], a), SHAPE_STR(&in[1], b));
  return 0;
}

static int fwd_backward_ctc(const mxw_op_call *c) {
  const mxw_tensor *og = &c->inputs[0], *gr = &c->inputs[1];
  mxw_tensor *dx = &c->outputs[0];
  MXW_CHECK(gr->shape.ndim == 3, "grad must be 3-D");
  const int64_t T = gr->shape.dims[0], N = gr->shape.dims[1], A = gr->shape.dims[2];
  for (int64_t t = 0; t < T; t++)
    for (int64_t b = 0; b < N; b++) {
      const double s = mxw_load_f64(og->data, og->dtype, b);
      const int64_t base = (t * N + b) * A;
      if (dx->dtype == MXW_FLOAT32 && gr->dtype == MXW_FLOAT32) {
        const float *g = (const float *)gr->data + base;
        float *d = (float *)dx->data + base;
        const float sf = (float)s;
        for (int64_t k = 0; k < A; k++) d[k] = g[k] * sf;
      } else {
        for (int64_t k = 0; k < A; k++)
          mxw_store_f64(dx->data, dx->dtype, base + k, mxw_load_f64(gr->data, gr->dtype, base + k) * s);
      }
    }
  return 0;
}

static const mxw_op_def op_backward_ctc_loss = {
    .name = "_backward_ctc_loss",
    .doc = MXW_DOC("the data gradient of CTCLoss: ograd[b] times the gradient its forward computed"),
    .attrs = k_ctc_attrs,
    .num_attrs = (int)(sizeof k_ctc_attrs / sizeof k_ctc_attrs[0]),
    .param_size = sizeof(CTCParam),
    .num_inputs = 2,
    .input_names = k_backward_ctc_inputs,
    .num_outputs = 1,
    .infer_shape = infer_backward_ctc,
    .forward = fwd_backward_ctc,
    .half_as_f32 = 1,
};

MXW_FAMILY(ctc, &op_CTCLoss, &op_backward_ctc_loss);
