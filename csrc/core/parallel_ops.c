/* parallel_ops.c -- the op families' side of the thread pool: when a call is worth splitting,
 * elementwise sub-calls and parallel dtype conversion (mxw_parallel.h). */
#include <stdatomic.h>

#include "mxw_parallel.h"

double mxw_par_dtype_factor(int dtype) {
  if (dtype == MXW_FLOAT32) return 1.0;
  if (dtype == MXW_FLOAT64) return 2.0;
  return 4.0;
}

static double g_chunk_work = MXW_PAR_CHUNK_WORK;
double mxw_par_chunk_work(void) { return g_chunk_work; }
void mxw_par_set_chunk_work(double work) { g_chunk_work = work > 0 ? work : MXW_PAR_CHUNK_WORK; }

int mxw_par_chunks(double work) {
  const int threads = mxw_get_num_threads();
  if (threads <= 1 || !(work >= 2.0 * g_chunk_work)) return 1;
  const double worth = work / g_chunk_work;
  return worth < (double)threads ? (int)worth : threads;
}

void mxw_parallel_run(int64_t n, int64_t align, double cost_per_item, mxw_task_fn fn, void *ctx) {
  if (n <= 0) return;
  if (align < 1) align = 1;
  const int chunks = mxw_par_chunks((double)n * cost_per_item);
  if (chunks <= 1 || n <= align) {
    fn(ctx, 0, n);
    return;
  }
  /* units of `grain` items (a multiple of align): at most `chunks` of them, so mxw_parallel_for
   * makes at most that many chunks, each of about n / chunks items */
  int64_t grain = (n + chunks - 1) / chunks;
  grain = (grain + align - 1) / align * align;
  mxw_parallel_for(n, grain, fn, ctx);
}

/* ---- elementwise sub-calls ------------------------------------------------------------------ */
#define ELEM_MAX_TENSORS 8

typedef struct {
  const mxw_op_call *call;
  int64_t n;
  int (*kernel)(const mxw_op_call *);
  atomic_int failed;
} elem_job;

/* t restricted to elements [b, e) when it has n elements, else t itself. */
static mxw_tensor elem_slice(const mxw_tensor *t, int64_t n, int64_t b, int64_t e) {
  mxw_tensor s = *t;
  if (mxw_tensor_size(t) != n) return s;
  s.data = (char *)t->data + (size_t)b * (size_t)mxw_dtype_size(t->dtype);
  s.shape.ndim = 1;
  s.shape.dims[0] = e - b;
  return s;
}

static void elem_chunk(void *ctx, int64_t b, int64_t e) {
  elem_job *j = (elem_job *)ctx;
  const mxw_op_call *c = j->call;
  mxw_tensor ins[ELEM_MAX_TENSORS], outs[ELEM_MAX_TENSORS];
  for (int i = 0; i < c->num_inputs; i++) ins[i] = elem_slice(&c->inputs[i], j->n, b, e);
  for (int i = 0; i < c->num_outputs; i++) outs[i] = elem_slice(&c->outputs[i], j->n, b, e);
  mxw_op_call sub = *c;
  sub.inputs = ins;
  sub.outputs = outs;
  if (j->kernel(&sub) != 0) atomic_store(&j->failed, 1);
}

int mxw_parallel_elemwise(const mxw_op_call *c, int64_t n, double cost_per_elem, int (*kernel)(const mxw_op_call *)) {
  const double cost = cost_per_elem * mxw_par_dtype_factor(c->num_outputs > 0 ? c->outputs[0].dtype : MXW_FLOAT32);
  if (c->num_inputs > ELEM_MAX_TENSORS || c->num_outputs > ELEM_MAX_TENSORS || mxw_par_chunks((double)n * cost) <= 1)
    return kernel(c);
  elem_job j = {c, n, kernel, 0};
  /* chunks of whole 16-element groups keep the kernels' SIMD bodies on the same elements */
  mxw_parallel_run(n, 16, cost, elem_chunk, &j);
  if (atomic_load(&j.failed)) return kernel(c); /* the error, recorded from this thread */
  return 0;
}

/* ---- conversions ---------------------------------------------------------------------------- */
typedef struct {
  const void *src;
  void *dst;
  int src_dtype, dst_dtype;
} convert_job;

static void convert_chunk(void *ctx, int64_t b, int64_t e) {
  const convert_job *j = (const convert_job *)ctx;
  const size_t ss = (size_t)mxw_dtype_size(j->src_dtype), ds = (size_t)mxw_dtype_size(j->dst_dtype);
  mxw_convert((const char *)j->src + (size_t)b * ss, j->src_dtype, (char *)j->dst + (size_t)b * ds, j->dst_dtype,
              e - b);
}

void mxw_parallel_convert(const void *src, int src_dtype, void *dst, int dst_dtype, int64_t n) {
  const char *s0 = (const char *)src, *d0 = (const char *)dst;
  const char *s1 = s0 + (size_t)(n > 0 ? n : 0) * (size_t)mxw_dtype_size(src_dtype);
  const char *d1 = d0 + (size_t)(n > 0 ? n : 0) * (size_t)mxw_dtype_size(dst_dtype);
  if (s0 < d1 && d0 < s1) { /* overlapping (in place): the one ordered pass mxw_convert makes */
    mxw_convert(src, src_dtype, dst, dst_dtype, n);
    return;
  }
  convert_job j = {src, dst, src_dtype, dst_dtype};
  const double cost = src_dtype == dst_dtype ? 0.5 : 2.0; /* a copy, or a per-element conversion */
  mxw_parallel_run(n, 16, cost, convert_chunk, &j);
}
