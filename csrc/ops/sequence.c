/* sequence.c -- the sequence ops recurrent nets use (Gluon's cells unroll with valid_length through
 * them): SequenceMask, SequenceLast, SequenceReverse (MXNet 1.9.1's sequence_mask-inl.h,
 * sequence_last-inl.h, sequence_reverse-inl.h).
 *
 * Layouts: data is viewed as (d0, d1, rest); the time axis is `axis` (0: (T, N, ...), 1: (N, T, ...);
 * SequenceReverse takes axis 0 only, as MXNet). `sequence_length` (shape (N,), any dtype) holds
 * each sequence's length, truncated to an integer as MXNet's static_cast<int>; MXNet reads out of
 * bounds for a length outside [0, T] ([1, T] for SequenceLast), which here is an error.
 *
 * These ops only move elements, so the kernels copy element bytes and work for every dtype
 * (SequenceMask's fill value is converted once). Gradients: SequenceMask masks ograd with 0
 * (the same op, value 0), SequenceReverse reverses ograd with the same lengths (self-adjoint),
 * SequenceLast scatters ograd into zeros at each sequence's last step (_backward_SequenceLast,
 * inputs (ograd, data[, sequence_length]), data for its shape); sequence_length gets none. */
#include <math.h>
#include <stdio.h>

#include "../core/mxw_core.h"

#define ALIASES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define SHAPE_STR(s, b) mxw_shape_str((s), (b), sizeof(b))
typedef char shape_buf[160];

static const char *const k_data_len[] = {"data", "sequence_length", NULL};
static const char *const k_ograd_data_len[] = {"ograd", "data", "sequence_length", NULL};

static size_t esize(const mxw_tensor *t) { return (size_t)mxw_dtype_size(t->dtype); }

/* ---- shared parameter layout: use_sequence_length first, axis last ---------------------------- */
typedef struct {
  int use_sequence_length;
  double value;
  int64_t axis;
} SeqParam;

static const mxw_attr_spec k_mask_attrs[] = {
    MXW_A_BOOL("use_sequence_length", SeqParam, use_sequence_length, "False",
               "take a second input sequence_length (N,) giving each sequence's length"),
    MXW_A_FLOAT("value", SeqParam, value, "0", "the value written outside each sequence"),
    MXW_A_INT("axis", SeqParam, axis, "0", "the time axis: 0 (T, N, ...) or 1 (N, T, ...)"),
};
static const mxw_attr_spec k_last_attrs[] = {
    MXW_A_BOOL("use_sequence_length", SeqParam, use_sequence_length, "False",
               "take a second input sequence_length (N,) giving each sequence's length"),
    MXW_A_INT("axis", SeqParam, axis, "0", "the time axis: 0 (T, N, ...) or 1 (N, T, ...)"),
};
static const mxw_attr_spec k_reverse_attrs[] = {
    MXW_A_BOOL("use_sequence_length", SeqParam, use_sequence_length, "False",
               "take a second input sequence_length (N,) giving each sequence's length"),
    MXW_A_INT("axis", SeqParam, axis, "0", "the time axis (only 0)"),
};

static int validate_axis01(void *param) {
  const SeqParam *p = (const SeqParam *)param;
  MXW_CHECK(p->axis == 0 || p->axis == 1, "Current implementation expects axis to be 0 or 1, got %lld",
            (long long)p->axis);
  return 0;
}
static int validate_axis0(void *param) {
  const SeqParam *p = (const SeqParam *)param;
  MXW_CHECK(p->axis == 0, "Current implementation expects axis to be 0, got %lld", (long long)p->axis);
  return 0;
}
static int num_inputs_seq(const void *param) { return ((const SeqParam *)param)->use_sequence_length ? 2 : 1; }
static int num_inputs_backward_seq(const void *param) { return ((const SeqParam *)param)->use_sequence_length ? 3 : 2; }

/* data (rank >= 2) and sequence_length (N,) where N is the non-time one of the first two dims. */
static int infer_len_shape(const SeqParam *p, const mxw_shape *data, mxw_shape *len) {
  shape_buf a;
  MXW_CHECK(data->ndim > 1, "The data array must be of rank 2 or greater, got shape %s", SHAPE_STR(data, a));
  if (!p->use_sequence_length) return 0;
  const int64_t n = p->axis ? data->dims[0] : data->dims[1];
  mxw_shape s = mxw_shape_make(1, &n);
  return mxw_shape_assign(len, &s, "sequence_length");
}
static int infer_same_seq(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)nin;
  (void)nout;
  MXW_TRY(mxw_shape_assign(&in[0], &out[0], "data"));
  MXW_TRY(mxw_shape_assign(&out[0], &in[0], "output"));
  if (in[0].ndim < 0) return 0;
  return infer_len_shape((const SeqParam *)param, &in[0], &in[1]);
}
/* Output and data share a dtype; sequence_length keeps its own (data's when unknown, as MXNet). */
static int infer_type_seq(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nout;
  if (in[0] >= 0 && out[0] >= 0 && in[0] != out[0])
    return mxw_fail("dtype mismatch: data is %s but output is %s", mxw_dtype_name(in[0]), mxw_dtype_name(out[0]));
  if (in[0] < 0) in[0] = out[0];
  if (out[0] < 0) out[0] = in[0];
  if (nin > 1 && in[1] < 0) in[1] = in[0];
  return 0;
}

/* The lengths as integers (MXNet's static_cast<int>), each checked against [lo, T]; NULL when
 * use_sequence_length is off (every length T). */
static int read_lengths(const mxw_tensor *len, int64_t n, int64_t lo, int64_t T, int64_t **out) {
  *out = NULL;
  if (!len) return 0;
  int64_t *v = (int64_t *)mxw_scratch(3, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  if (!v) return -1;
  for (int64_t b = 0; b < n; b++) {
    const double x = mxw_load_f64(len->data, len->dtype, b);
    MXW_CHECK(x == x && x > -2147483649.0 && x < 2147483648.0, "sequence_length[%lld] = %g is not a valid length",
              (long long)b, x);
    const int64_t k = (int64_t)x; /* truncation toward zero, as static_cast<int> */
    MXW_CHECK(k >= lo && k <= T,
              "sequence_length[%lld] = %g is out of range [%lld, %lld] (the sequence axis has %lld steps)",
              (long long)b, x, (long long)lo, (long long)T, (long long)T);
    v[b] = k;
  }
  *out = v;
  return 0;
}

/* The (d0, d1, rest) view of a rank >= 2 shape. */
static void view3(const mxw_shape *s, int64_t *d0, int64_t *d1, int64_t *rest) {
  *d0 = s->dims[0];
  *d1 = s->dims[1];
  int64_t r = 1;
  for (int i = 2; i < s->ndim; i++) r *= s->dims[i];
  *rest = r;
}

/* ==== SequenceMask ============================================================================== */
/* out = data; then for each sequence b, the steps t >= len[b] are set to value. */
static int fwd_SequenceMask(const mxw_op_call *c) {
  const SeqParam *p = (const SeqParam *)c->param;
  const mxw_tensor *x = &c->inputs[0];
  mxw_tensor *y = &c->outputs[0];
  const size_t es = esize(x);
  const int64_t total = mxw_tensor_size(x);
  if (y->data != x->data && total) memcpy(y->data, x->data, (size_t)total * es);
  if (!p->use_sequence_length || total == 0) return 0;
  int64_t d0, d1, rest;
  view3(&x->shape, &d0, &d1, &rest);
  const int64_t T = p->axis ? d1 : d0, N = p->axis ? d0 : d1;
  int64_t *len;
  MXW_TRY(read_lengths(&c->inputs[1], N, 0, T, &len));
  /* one row of `rest` fill values */
  unsigned char fill[8];
  mxw_store_f64(fill, y->dtype, 0, p->value);
  char *base = (char *)y->data;
  for (int64_t b = 0; b < N; b++) {
    for (int64_t t = len[b]; t < T; t++) {
      const int64_t off = (p->axis ? b * T + t : t * N + b) * rest;
      char *row = base + (size_t)off * es;
      for (int64_t r = 0; r < rest; r++) memcpy(row + (size_t)r * es, fill, es);
    }
  }
  return 0;
}
/* d data = ograd masked with 0 (the mask is linear); sequence_length gets none. */
static int grad_SequenceMask(mxw_grad_ctx *g) {
  const SeqParam *p = (const SeqParam *)mxw_grad_param(g);
  if (!p->use_sequence_length) return mxw_grad_set(g, 0, mxw_grad_ograd(g, 0));
  char ax[8];
  snprintf(ax, sizeof ax, "%d", (int)p->axis);
  mxw_gid dx = mxw_grad_op(g, "SequenceMask", MXW_KV("use_sequence_length", "True", "value", "0", "axis", ax),
                           MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 1)));
  return mxw_grad_set(g, 0, dx);
}
static const mxw_op_def op_SequenceMask = {
    .name = "SequenceMask",
    .aliases = ALIASES("_npx_sequence_mask"),
    .doc = MXW_DOC("sets every step of a sequence at or after its length (sequence_length) to value; identity without "
                   "use_sequence_length"),
    .attrs = k_mask_attrs,
    .num_attrs = 3,
    .param_size = sizeof(SeqParam),
    .validate = validate_axis01,
    .num_inputs = 2,
    .input_names = k_data_len,
    .num_inputs_fn = num_inputs_seq,
    .num_outputs = 1,
    .infer_shape = infer_same_seq,
    .infer_type = infer_type_seq,
    .forward = fwd_SequenceMask,
    .gradient = grad_SequenceMask};

/* ==== SequenceReverse =========================================================================== */
/* out[len[b] - 1 - t, b] = data[t, b] for t < len[b]; the padded steps stay in place. */
static void reverse_seq(const mxw_tensor *x, mxw_tensor *y, const int64_t *len) {
  int64_t T, N, rest;
  view3(&x->shape, &T, &N, &rest);
  const size_t es = esize(x), row = (size_t)rest * es;
  const char *src = (const char *)x->data;
  char *dst = (char *)y->data;
  for (int64_t b = 0; b < N; b++) {
    const int64_t n = len ? len[b] : T;
    for (int64_t t = 0; t < T; t++) {
      const int64_t to = t < n ? n - 1 - t : t;
      memcpy(dst + (size_t)(to * N + b) * row, src + (size_t)(t * N + b) * row, row);
    }
  }
}
static int fwd_SequenceReverse(const mxw_op_call *c) {
  const SeqParam *p = (const SeqParam *)c->param;
  const mxw_tensor *x = &c->inputs[0];
  if (mxw_tensor_size(x) == 0) return 0;
  int64_t *len;
  MXW_TRY(read_lengths(p->use_sequence_length ? &c->inputs[1] : NULL, x->shape.dims[1], 0, x->shape.dims[0], &len));
  if (c->outputs[0].data == x->data) return mxw_fail("SequenceReverse cannot run in place");
  reverse_seq(x, &c->outputs[0], len);
  return 0;
}
static int grad_SequenceReverse(mxw_grad_ctx *g) {
  const SeqParam *p = (const SeqParam *)mxw_grad_param(g);
  mxw_gid dx;
  if (p->use_sequence_length)
    MXW_TRY(mxw_grad_op_fwd(g, "SequenceReverse", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 1)), &dx, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, "SequenceReverse", MXW_GIDS(mxw_grad_ograd(g, 0)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}
static const mxw_op_def op_SequenceReverse = {
    .name = "SequenceReverse",
    .aliases = ALIASES("_npx_sequence_reverse"),
    .doc = MXW_DOC("reverses each sequence's first sequence_length steps along axis 0 (all T steps without "
                   "use_sequence_length); the padded steps stay in place"),
    .attrs = k_reverse_attrs,
    .num_attrs = 2,
    .param_size = sizeof(SeqParam),
    .validate = validate_axis0,
    .num_inputs = 2,
    .input_names = k_data_len,
    .num_inputs_fn = num_inputs_seq,
    .num_outputs = 1,
    .infer_shape = infer_same_seq,
    .infer_type = infer_type_seq,
    .forward = fwd_SequenceReverse,
    .gradient = grad_SequenceReverse};

/* ==== SequenceLast ============================================================================== */
/* output (N, rest...): each sequence's step len[b] - 1 (T - 1 without use_sequence_length). */
static int infer_SequenceLast(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  const SeqParam *p = (const SeqParam *)param;
  (void)nin;
  (void)nout;
  if (in[0].ndim < 0) {
    /* the output gives every dim but the time axis */
    if (out[0].ndim >= 1) {
      mxw_shape d;
      d.ndim = out[0].ndim + 1;
      for (int i = 0; i < d.ndim; i++) d.dims[i] = -1;
      d.dims[p->axis ? 0 : 1] = out[0].dims[0];
      for (int i = 1; i < out[0].ndim; i++) d.dims[i + 1] = out[0].dims[i];
      MXW_TRY(mxw_shape_assign(&in[0], &d, "data"));
    }
    return 0;
  }
  MXW_TRY(infer_len_shape(p, &in[0], &in[1]));
  mxw_shape o;
  o.ndim = in[0].ndim - 1;
  o.dims[0] = p->axis ? in[0].dims[0] : in[0].dims[1];
  for (int i = 1; i < o.ndim; i++) o.dims[i] = in[0].dims[i + 1];
  MXW_TRY(mxw_shape_assign(&out[0], &o, "output"));
  /* and back: the output's dims fill unknown data dims */
  mxw_shape d = in[0];
  if (d.dims[p->axis ? 0 : 1] < 0) d.dims[p->axis ? 0 : 1] = out[0].dims[0];
  for (int i = 1; i < out[0].ndim; i++)
    if (d.dims[i + 1] < 0) d.dims[i + 1] = out[0].dims[i];
  return mxw_shape_assign(&in[0], &d, "data");
}
/* The byte offset of row (t, b) of the (d0, d1, rest) view. */
static inline size_t row_at(const SeqParam *p, int64_t T, int64_t N, int64_t t, int64_t b, size_t row) {
  return (size_t)(p->axis ? b * T + t : t * N + b) * row;
}
static int fwd_SequenceLast(const mxw_op_call *c) {
  const SeqParam *p = (const SeqParam *)c->param;
  const mxw_tensor *x = &c->inputs[0];
  int64_t d0, d1, rest;
  view3(&x->shape, &d0, &d1, &rest);
  const int64_t T = p->axis ? d1 : d0, N = p->axis ? d0 : d1;
  if (N * rest == 0) return 0;
  MXW_CHECK(T > 0, "the sequence axis has no steps: there is no last step to take");
  int64_t *len;
  MXW_TRY(read_lengths(p->use_sequence_length ? &c->inputs[1] : NULL, N, 1, T, &len));
  const size_t row = (size_t)rest * esize(x);
  for (int64_t b = 0; b < N; b++) {
    const int64_t t = (len ? len[b] : T) - 1;
    memcpy((char *)c->outputs[0].data + (size_t)b * row, (const char *)x->data + row_at(p, T, N, t, b, row), row);
  }
  return 0;
}
static int grad_SequenceLast(mxw_grad_ctx *g) {
  const SeqParam *p = (const SeqParam *)mxw_grad_param(g);
  mxw_gid dx;
  if (p->use_sequence_length)
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_SequenceLast",
                            MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0), mxw_grad_in(g, 1)), &dx, 1));
  else
    MXW_TRY(mxw_grad_op_fwd(g, "_backward_SequenceLast", MXW_GIDS(mxw_grad_ograd(g, 0), mxw_grad_in(g, 0)), &dx, 1));
  return mxw_grad_set(g, 0, dx);
}
static const mxw_op_def op_SequenceLast = {
    .name = "SequenceLast",
    .aliases = ALIASES("_npx_sequence_last"),
    .doc = MXW_DOC("each sequence's last step (step sequence_length - 1; T - 1 without use_sequence_length)"),
    .attrs = k_last_attrs,
    .num_attrs = 2,
    .param_size = sizeof(SeqParam),
    .validate = validate_axis01,
    .num_inputs = 2,
    .input_names = k_data_len,
    .num_inputs_fn = num_inputs_seq,
    .num_outputs = 1,
    .infer_shape = infer_SequenceLast,
    .infer_type = infer_type_seq,
    .forward = fwd_SequenceLast,
    .gradient = grad_SequenceLast};

/* (ograd (N, rest...), data, [sequence_length]) -> zeros of data's shape with ograd at the last steps. */
static int infer_backward_SequenceLast(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)nout;
  MXW_TRY(mxw_shape_assign(&out[0], &in[1], "data gradient"));
  return mxw_shape_assign(&in[1], &out[0], "data");
}
static int infer_type_backward_SequenceLast(const void *param, int nin, int *in, int nout, int *out) {
  (void)param;
  (void)nout;
  if (out[0] < 0) out[0] = in[0] >= 0 ? in[0] : in[1];
  if (in[0] < 0) in[0] = out[0];
  if (in[1] < 0) in[1] = out[0];
  if (nin > 2 && in[2] < 0) in[2] = out[0];
  return 0;
}
static int fwd_backward_SequenceLast(const mxw_op_call *c) {
  const SeqParam *p = (const SeqParam *)c->param;
  const mxw_tensor *og = &c->inputs[0];
  mxw_tensor *dx = &c->outputs[0];
  int64_t d0, d1, rest;
  view3(&dx->shape, &d0, &d1, &rest);
  const int64_t T = p->axis ? d1 : d0, N = p->axis ? d0 : d1;
  const size_t row = (size_t)rest * esize(dx);
  if (mxw_tensor_size(dx)) memset(dx->data, 0, (size_t)mxw_tensor_size(dx) * esize(dx));
  if (N * rest == 0) return 0;
  int64_t *len;
  MXW_TRY(read_lengths(p->use_sequence_length ? &c->inputs[2] : NULL, N, 1, T, &len));
  for (int64_t b = 0; b < N; b++) {
    const int64_t t = (len ? len[b] : T) - 1;
    memcpy((char *)dx->data + row_at(p, T, N, t, b, row), (const char *)og->data + (size_t)b * row, row);
  }
  return 0;
}
static const mxw_op_def op_backward_SequenceLast = {
    .name = "_backward_SequenceLast",
    .doc = MXW_DOC("the data gradient of SequenceLast: zeros with ograd at each sequence's last step"),
    .attrs = k_last_attrs,
    .num_attrs = 2,
    .param_size = sizeof(SeqParam),
    .validate = validate_axis01,
    .num_inputs = 3,
    .input_names = k_ograd_data_len,
    .num_inputs_fn = num_inputs_backward_seq,
    .num_outputs = 1,
    .infer_shape = infer_backward_SequenceLast,
    .infer_type = infer_type_backward_SequenceLast,
    .forward = fwd_backward_SequenceLast};

MXW_FAMILY(sequence, &op_SequenceMask, &op_SequenceReverse, &op_SequenceLast, &op_backward_SequenceLast);
