/* Threaded op families (issue 10): every op that splits its work over the thread pool gives,
 * with 2, 3 and 4 threads, the bytes it gives with 1 thread -- outputs, and the inputs it mutates
 * (BatchNorm's moving statistics, the optimizers' states). Each op runs twice per thread count:
 * with the pool's split threshold forced down to 1 element-op (every call with two units of work
 * splits, into as many chunks as threads, on small uneven shapes) and, for the larger cases, with
 * the default threshold. The values themselves are checked by each family's own tests
 * (test_<family>.c, tests/js); this file checks only that threads do not change them. */
#include "core/mxw_parallel.h"
#include "mxw_test.h"

#define MAX_ARRAYS 12

static uint32_t g_seed = 12345;
static double urand(void) { /* [0, 1) */
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 17;
  g_seed ^= g_seed << 5;
  return (g_seed >> 8) * (1.0 / 16777216.0);
}

/* An array of dtype with values in [lo, hi) (integer dtypes: truncated). */
static mxw_ndarray *rand_array(int dtype, double lo, double hi, int ndim, const int32_t *shape) {
  mxw_ndarray *a = NULL;
  if (mxw_ndarray_create(ndim, shape, dtype, &a) != 0) fail_msg("%s", mxw_get_last_error());
  const int64_t n = mxw_ndarray_size(a);
  for (int64_t i = 0; i < n; i++) mxw_store_f64(mxw_ndarray_data(a), dtype, i, lo + (hi - lo) * urand());
  return a;
}
/* RAND(dtype, lo, hi, dims...) */
#define RAND(dt, lo, hi, ...) \
  rand_array(dt, lo, hi, (int)(sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t)), (const int32_t[]){__VA_ARGS__})
#define F32(...) RAND(MXW_FLOAT32, -2.0, 2.0, __VA_ARGS__)
#define F64(...) RAND(MXW_FLOAT64, -2.0, 2.0, __VA_ARGS__)
#define F16(...) RAND(MXW_FLOAT16, -2.0, 2.0, __VA_ARGS__)
#define POS32(...) RAND(MXW_FLOAT32, 0.25, 3.0, __VA_ARGS__)

static size_t nbytes(const mxw_ndarray *a) {
  return (size_t)mxw_ndarray_size(a) * (size_t)mxw_dtype_size(mxw_ndarray_dtype(a));
}

static mxw_ndarray *clone(const mxw_ndarray *a) {
  int32_t shape[MXW_MAX_NDIM];
  mxw_ndarray_shape(a, shape);
  mxw_ndarray *c = NULL;
  if (mxw_ndarray_create(mxw_ndarray_ndim(a), shape, mxw_ndarray_dtype(a), &c) != 0)
    fail_msg("%s", mxw_get_last_error());
  memcpy(mxw_ndarray_data(c), mxw_ndarray_data(a), nbytes(a));
  return c;
}

/* Runs op(kv...) on copies of ins (train: is_train), outs allocated; *nout set. */
static void run(const char *op, const char *const *kv, int nin, mxw_ndarray **ins, int train, mxw_ndarray **outs,
                int *nout) {
  const char *keys[16], *vals[16];
  int nkv = 0;
  for (; kv && kv[2 * nkv]; nkv++) {
    keys[nkv] = kv[2 * nkv];
    vals[nkv] = kv[2 * nkv + 1];
  }
  const int id = mxw_op_find(op);
  if (id < 0) fail_msg("operator %s is not registered", op);
  mxw_params *p = NULL;
  if (mxw_params_create(id, nkv, keys, vals, &p) != 0) fail_msg("%s: %s", op, mxw_get_last_error());
  *nout = mxw_params_num_outputs(p);
  for (int i = 0; i < *nout; i++) outs[i] = NULL;
  mxw_set_training(train);
  mxw_random_seed(7); /* Dropout and rrelu draw the same numbers on every run */
  if (mxw_op_invoke(id, p, nin, ins, nout, outs) != 0) fail_msg("%s: %s", op, mxw_get_last_error());
  mxw_set_training(0);
  mxw_params_free(p);
}

/* Output 0 of op(kv...) on ins, at one thread (e.g. a forward output a backward op reads). */
static mxw_ndarray *forward1(const char *op, const char *const *kv, int nin, mxw_ndarray **ins, int train) {
  mxw_ndarray *outs[MAX_ARRAYS];
  int nout = 0;
  assert_int_equal(mxw_set_num_threads(1), 0);
  run(op, kv, nin, ins, train, outs, &nout);
  for (int i = 1; i < nout; i++) mxw_ndarray_free(outs[i]);
  return outs[0];
}

/* Every output and every input of op at 2, 3 and 4 threads equals, byte for byte, what 1 thread
 * gives; once with the split threshold at 1 element-op, once at the default. Frees ins. */
static void check(const char *op, const char *const *kv, int nin, mxw_ndarray **ins, int train) {
  mxw_ndarray *ref[2 * MAX_ARRAYS] = {0};
  int nref = 0;
  for (int pass = 0; pass < 2; pass++) {
    mxw_par_set_chunk_work(pass == 0 ? 1.0 : 0.0);
    for (int threads = 1; threads <= 4; threads++) {
      assert_int_equal(mxw_set_num_threads(threads), 0);
      mxw_ndarray *in[MAX_ARRAYS], *outs[MAX_ARRAYS];
      for (int i = 0; i < nin; i++) in[i] = clone(ins[i]);
      int nout = 0;
      run(op, kv, nin, in, train, outs, &nout);
      mxw_ndarray *all[2 * MAX_ARRAYS];
      int n = 0;
      for (int i = 0; i < nout; i++) all[n++] = outs[i];
      for (int i = 0; i < nin; i++) all[n++] = in[i];
      if (pass == 0 && threads == 1) {
        for (int i = 0; i < n; i++) ref[i] = all[i];
        nref = n;
        continue;
      }
      assert_int_equal(n, nref);
      for (int i = 0; i < n; i++) {
        const unsigned char *a = (const unsigned char *)mxw_ndarray_data(all[i]);
        const unsigned char *b = (const unsigned char *)mxw_ndarray_data(ref[i]);
        assert_int_equal(nbytes(all[i]), nbytes(ref[i]));
        if (memcmp(a, b, nbytes(all[i])) != 0) {
          size_t at = 0;
          while (a[at] == b[at]) at++;
          fail_msg("%s: %s %d with %d threads (threshold %s) differs from 1 thread at byte %zu", op,
                   i < nout ? "output" : "input", i < nout ? i : i - nout, threads, pass == 0 ? "1" : "default", at);
        }
        mxw_ndarray_free(all[i]);
      }
    }
  }
  for (int i = 0; i < nref; i++) mxw_ndarray_free(ref[i]);
  for (int i = 0; i < nin; i++) mxw_ndarray_free(ins[i]);
  mxw_par_set_chunk_work(0.0);
  assert_int_equal(mxw_set_num_threads(1), 0);
}

#define KV(...) ((const char *const[]){__VA_ARGS__, NULL})
/* CHECK(op, kv, inputs...) at inference, CHECK_TRAIN in training */
#define ARRAYS_(...) \
  (int)(sizeof((mxw_ndarray *[]){__VA_ARGS__}) / sizeof(mxw_ndarray *)), ((mxw_ndarray *[]){__VA_ARGS__})
#define CHECK(op, kv, ...) check(op, kv, ARRAYS_(__VA_ARGS__), 0)
#define CHECK_TRAIN(op, kv, ...) check(op, kv, ARRAYS_(__VA_ARGS__), 1)

/* ---- elementwise unary, Activation, copies ---------------------------------------------------- */
static void test_unary(void **state) {
  (void)state;
  static const char *const ops[] = {"relu",   "sigmoid",  "tanh",  "exp",      "log",      "sqrt",
                                    "sin",    "erf",      "gamma", "abs",      "negative", "_copy",
                                    "square", "softsign", "round", "ones_like"};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
    CHECK(ops[k], NULL, F32(3, 37, 11, 29));
    CHECK(ops[k], NULL, F64(1, 5003));
  }
  CHECK("relu", NULL, F32(1, 300007)); /* beyond the default threshold */
  CHECK("exp", NULL, F16(2, 20011));
  CHECK("negative", NULL, RAND(MXW_INT32, -1000, 1000, 7777));
  CHECK("abs", NULL, RAND(MXW_INT8, -100, 100, 7777));
  CHECK("hard_sigmoid", KV("alpha", "0.3"), F32(2, 4001));
  static const char *const acts[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign"};
  for (size_t k = 0; k < sizeof acts / sizeof *acts; k++) {
    CHECK("Activation", KV("act_type", acts[k]), F32(5, 3001));
    if (k == 0)
      CHECK("_backward_Activation", KV("act_type", acts[k]), F32(5, 3001), F32(5, 3001));
    else
      CHECK("_backward_Activation", KV("act_type", acts[k]), F32(5, 3001), F32(5, 3001), F32(5, 3001));
  }
  CHECK("_backward_Activation", KV("act_type", "relu"), F64(7, 1001), F64(7, 1001));
  static const char *const bwd[] = {"_backward_relu", "_backward_sigmoid", "_backward_tanh",  "_backward_log",
                                    "_backward_sqrt", "_backward_erf",     "_backward_gamma", "_backward_arctan"};
  for (size_t k = 0; k < sizeof bwd / sizeof *bwd; k++) CHECK(bwd[k], NULL, F32(9, 1111), POS32(9, 1111));
  CHECK("_backward_hard_sigmoid", NULL, F32(3, 3333), F32(3, 3333));
}

/* ---- elementwise binary, broadcasting, scalars, add_n ---------------------------------------- */
static void test_binary(void **state) {
  (void)state;
  static const char *const ops[] = {"elemwise_add", "elemwise_mul", "elemwise_div",   "_maximum",    "_power",
                                    "_mod",         "_hypot",       "_greater_equal", "_logical_xor"};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) CHECK(ops[k], NULL, F32(3, 7, 1001), F32(3, 7, 1001));
  CHECK("elemwise_sub", NULL, F64(1, 9999), F64(1, 9999));
  CHECK("elemwise_add", NULL, F32(1, 300001), F32(1, 300001));
  CHECK("elemwise_add", NULL, RAND(MXW_INT32, -50, 50, 7001), RAND(MXW_INT32, -50, 50, 7001));
  CHECK("elemwise_mul", NULL, F16(2, 5001), F16(2, 5001));
  /* broadcasting: a channel vector, an outer product, a middle axis, rows */
  CHECK("broadcast_add", NULL, F32(3, 13, 17, 19), F32(1, 13, 1, 1));
  CHECK("broadcast_mul", NULL, F32(301, 1), F32(1, 299));
  CHECK("broadcast_sub", NULL, F32(7, 1, 13, 5), F32(1, 11, 1, 5));
  CHECK("broadcast_div", NULL, F32(1001, 33), F32(33));
  CHECK("broadcast_maximum", NULL, F64(5, 1, 401), F64(1, 7, 1));
  CHECK("broadcast_power", NULL, POS32(4, 2001), F32(4, 1));
  CHECK("broadcast_add", NULL, F32(64, 64, 64), F32(64, 1, 64)); /* default threshold */
  CHECK("_plus_scalar", KV("scalar", "1.5"), F32(3, 9001));
  CHECK("_rdiv_scalar", KV("scalar", "2"), F32(3, 9001));
  CHECK("_rpower_scalar", KV("scalar", "1.1"), F64(2, 3001));
  CHECK("add_n", KV("num_args", "3"), F32(7, 3003), F32(7, 3003), F32(7, 3003));
}

/* ---- Cast and clip ------------------------------------------------------------------------- */
static void test_cast_clip(void **state) {
  (void)state;
  CHECK("Cast", KV("dtype", "float16"), F32(3, 30011));
  CHECK("Cast", KV("dtype", "int32"), RAND(MXW_FLOAT32, -1e5, 1e5, 40001));
  CHECK("Cast", KV("dtype", "float64"), F16(5, 3001));
  CHECK("clip", KV("a_min", "-0.5", "a_max", "0.7"), F32(7, 11, 1013));
  CHECK("clip", KV("a_min", "-0.5", "a_max", "0.7"), F64(7, 1013));
  CHECK("_backward_clip", KV("a_min", "-0.5", "a_max", "0.7"), F32(3, 7001), F32(3, 7001));
}

/* ---- optimizer updates (states mutated in place) ----------------------------------------------- */
static void test_optimizer(void **state) {
  (void)state;
  CHECK("sgd_update", KV("lr", "0.1", "wd", "0.01"), F32(3, 7001), F32(3, 7001));
  CHECK("sgd_update", KV("lr", "0.1", "clip_gradient", "0.5"), F64(3, 7001), F64(3, 7001));
  CHECK("sgd_mom_update", KV("lr", "0.1", "momentum", "0.9", "wd", "1e-4"), F32(11, 2003), F32(11, 2003),
        F32(11, 2003));
  CHECK("adam_update", KV("lr", "0.01", "wd", "1e-4"), F32(1, 30001), F32(1, 30001), F32(1, 30001), POS32(1, 30001));
  CHECK("rmspropalex_update", KV("lr", "0.01"), F32(5, 999), F32(5, 999), POS32(5, 999), F32(5, 999), F32(5, 999));
  CHECK("ftml_update", KV("lr", "0.01", "t", "3"), F32(5, 999), F32(5, 999), POS32(5, 999), POS32(5, 999), F32(5, 999));
  CHECK("signum_update", KV("lr", "0.01", "momentum", "0.9"), F32(4, 2001), F32(4, 2001), F32(4, 2001));
  CHECK("sgd_mom_update", KV("lr", "0.1", "momentum", "0.9"), F16(3, 2001), F16(3, 2001), F16(3, 2001));
  CHECK("mp_sgd_mom_update", KV("lr", "0.1", "momentum", "0.9"), F16(3, 2001), F16(3, 2001), F32(3, 2001),
        F32(3, 2001));
  CHECK("lamb_update_phase1", KV("t", "2", "wd", "0.01"), F32(3, 3001), F32(3, 3001), F32(3, 3001), POS32(3, 3001));
  CHECK("lamb_update_phase2", KV("lr", "0.01"), F32(3, 3001), F32(3, 3001), POS32(1), POS32(1));
  CHECK("sgd_mom_update", KV("lr", "0.1", "momentum", "0.9"), F32(1, 400001), F32(1, 400001), F32(1, 400001));
}

/* ---- nn_misc: LeakyReLU (all kinds), Dropout, Embedding ------------------------------------------ */
static void test_nn_misc(void **state) {
  (void)state;
  static const char *const kinds[] = {"leaky", "elu", "selu", "gelu"};
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    CHECK("LeakyReLU", KV("act_type", kinds[k], "slope", "0.3"), F32(7, 3001));
    CHECK("LeakyReLU", KV("act_type", kinds[k], "slope", "0.3"), F64(7, 301));
    mxw_ndarray *x = F32(7, 3001);
    mxw_ndarray *y = forward1("LeakyReLU", KV("act_type", kinds[k], "slope", "0.3"), 1, &x, 0);
    CHECK("_backward_LeakyReLU", KV("act_type", kinds[k], "slope", "0.3"), F32(7, 3001), x, y);
  }
  /* prelu: gamma per channel (axis 1); its gradient sums over the other axes */
  CHECK("LeakyReLU", KV("act_type", "prelu"), F32(3, 19, 13, 17), F32(19));
  CHECK("_backward_LeakyReLU", KV("act_type", "prelu"), F32(3, 19, 13, 17), F32(3, 19, 13, 17), F32(3, 19, 13, 17),
        F32(19));
  CHECK("_backward_LeakyReLU", KV("act_type", "prelu"), F64(5, 7, 301), F64(5, 7, 301), F64(5, 7, 301), F64(1));
  CHECK_TRAIN("LeakyReLU", KV("act_type", "rrelu"), F32(3, 3001));
  CHECK_TRAIN("Dropout", KV("p", "0.3"), F32(5, 7, 301));
  CHECK_TRAIN("Dropout", KV("p", "0.3", "axes", "(1,)"), F32(5, 7, 301));
  CHECK("Dropout", KV("p", "0.3"), F32(5, 7, 301)); /* inference: a copy */
  CHECK("Embedding", KV("input_dim", "50", "output_dim", "301"), RAND(MXW_FLOAT32, 0, 50, 13, 17), F32(50, 301));
  CHECK("_backward_Embedding", KV("input_dim", "50", "output_dim", "301"), F32(13, 17, 301),
        RAND(MXW_FLOAT32, 0, 50, 13, 17));
  CHECK("_backward_Embedding", KV("input_dim", "20", "output_dim", "63"), F64(5, 9, 63), RAND(MXW_INT32, 0, 20, 5, 9));
}

/* ---- reductions ------------------------------------------------------------------------------ */
static void test_reduce(void **state) {
  (void)state;
  CHECK("sum", KV("axis", "-1"), F32(301, 257));
  CHECK("sum", KV("axis", "0"), F32(301, 257));        /* columns */
  CHECK("sum", KV("axis", "(0, 2)"), F32(13, 31, 97)); /* two stages */
  CHECK("sum", NULL, F32(1, 100003));                  /* one value: the parallel pairwise tree */
  CHECK("sum", NULL, F64(3, 77777));
  CHECK("sum", NULL, F32(1, 1000003)); /* default threshold */
  CHECK("mean", KV("axis", "1"), F32(7, 1001, 3));
  CHECK("max", KV("axis", "1"), F32(17, 301, 67));
  CHECK("min", KV("axis", "-1"), F64(301, 67));
  CHECK("prod", KV("axis", "0"), RAND(MXW_FLOAT32, 0.9, 1.1, 99, 301));
  CHECK("nansum", KV("axis", "1"), F16(7, 501, 9));
  CHECK("norm", KV("ord", "2", "axis", "1"), F32(31, 67, 13));
  CHECK("norm", KV("ord", "1"), F32(3, 50001));
  CHECK("sum", KV("axis", "1"), RAND(MXW_INT32, -1000, 1000, 11, 301, 7));
  CHECK("max", NULL, RAND(MXW_INT64, -1e6, 1e6, 30001));
  CHECK("argmax", KV("axis", "1"), F32(301, 67));
  CHECK("argmin", KV("axis", "0"), F32(67, 301));
  CHECK("argmax", KV("axis", "-1"), RAND(MXW_INT32, -9, 9, 301, 67));
  /* backward: broadcast the output gradient back over the reduced axes */
  CHECK("_backward_sum", KV("axis", "(0, 2)"), F32(31), F32(13, 31, 97));
  CHECK("_backward_mean", KV("axis", "1"), F32(17, 67), F32(17, 301, 67));
  {
    mxw_ndarray *x = F32(17, 301, 67);
    mxw_ndarray *y = forward1("max", KV("axis", "1"), 1, &x, 0);
    CHECK("_backward_max", KV("axis", "1"), F32(17, 67), x, y);
  }
  {
    mxw_ndarray *x = F64(301, 67);
    mxw_ndarray *y = forward1("norm", KV("ord", "2", "axis", "0"), 1, &x, 0);
    CHECK("_backward_norm", KV("ord", "2", "axis", "0"), F64(67), x, y);
  }
}

/* ---- softmax family -------------------------------------------------------------------------- */
static void test_softmax(void **state) {
  (void)state;
  CHECK("softmax", NULL, F32(301, 129));
  CHECK("softmax", KV("axis", "1"), F32(7, 33, 301)); /* lines across blocks of 64, with a tail */
  CHECK("log_softmax", KV("axis", "0"), F32(33, 1001));
  CHECK("softmax", KV("temperature", "2.5"), F32(301, 129));
  CHECK("softmax", NULL, F64(301, 129));
  CHECK("softmax", KV("axis", "1"), F16(7, 33, 31));
  CHECK("softmax", KV("axis", "-1", "use_length", "True"), F32(31, 7, 33), RAND(MXW_INT32, 0, 40, 31, 7));
  CHECK("softmax", NULL, F32(1001, 1000)); /* default threshold */
  CHECK("SoftmaxActivation", KV("mode", "channel"), F32(5, 17, 13, 11));
  CHECK("SoftmaxOutput", NULL, F32(301, 11), RAND(MXW_FLOAT32, 0, 11, 301));
  {
    mxw_ndarray *x = F32(301, 129);
    mxw_ndarray *y = forward1("softmax", NULL, 1, &x, 0);
    CHECK("_backward_softmax", NULL, F32(301, 129), y);
    mxw_ndarray_free(x);
  }
  {
    mxw_ndarray *x = F32(7, 33, 301);
    mxw_ndarray *y = forward1("log_softmax", KV("axis", "1"), 1, &x, 0);
    CHECK("_backward_log_softmax", KV("axis", "1"), F32(7, 33, 301), y);
    mxw_ndarray_free(x);
  }
  CHECK("_backward_softmax", KV("axis", "0"), F64(33, 501), F64(33, 501));
  CHECK("_backward_SoftmaxOutput", NULL, F32(301, 11), RAND(MXW_FLOAT32, 0, 11, 301));
  CHECK("_backward_SoftmaxOutput",
        KV("multi_output", "True", "use_ignore", "True", "ignore_label", "3", "normalization", "valid"), F32(7, 11, 13),
        RAND(MXW_FLOAT32, 0, 11, 7, 13));
  CHECK("_backward_softmax", KV("axis", "-1", "use_length", "True"), F32(31, 7, 33), F32(31, 7, 33),
        RAND(MXW_INT32, 0, 40, 31, 7));
  CHECK("_backward_softmax", KV("axis", "-1", "dtype", "float64"), F64(31, 77), F64(31, 77), F16(31, 77));
}

/* ---- normalization --------------------------------------------------------------------------- */
static void test_norm(void **state) {
  (void)state;
  const char *const bn[] = {"fix_gamma", "False", "momentum", "0.8", NULL};
  CHECK("BatchNorm", bn, F32(3, 17, 13, 11), F32(17), F32(17), F32(17), POS32(17));
  CHECK_TRAIN("BatchNorm", bn, F32(3, 17, 13, 11), F32(17), F32(17), F32(17), POS32(17));
  CHECK_TRAIN("BatchNorm", KV("fix_gamma", "False", "axis", "-1"), F32(7, 13, 11, 19), F32(19), F32(19), F32(19),
              POS32(19));
  CHECK_TRAIN("BatchNorm", bn, F64(3, 17, 101), F64(17), F64(17), F64(17), RAND(MXW_FLOAT64, 0.25, 3.0, 17));
  CHECK_TRAIN("BatchNorm", bn, F16(3, 17, 13, 11), F32(17), F32(17), F32(17), POS32(17));
  CHECK_TRAIN("_contrib_BatchNormWithReLU", bn, F32(3, 17, 13, 11), F32(17), F32(17), F32(17), POS32(17));
  CHECK_TRAIN("BatchNorm", bn, F32(8, 64, 28, 28), F32(64), F32(64), F32(64), POS32(64)); /* default threshold */
  /* backward: (ograd, mean, var, data, gamma, beta, moving_mean, moving_var[, workspace]) */
  CHECK_TRAIN("_backward_BatchNorm", bn, F32(3, 17, 13, 11), F32(17), POS32(17), F32(3, 17, 13, 11), F32(17), F32(17),
              F32(17), POS32(17));
  CHECK("_backward_BatchNorm", bn, F32(3, 17, 13, 11), F32(17), POS32(17), F32(3, 17, 13, 11), F32(17), F32(17),
        F32(17), POS32(17));
  CHECK_TRAIN("_backward_BatchNorm", KV("axis", "-1", "fix_gamma", "False"), F32(7, 13, 19), F32(19), POS32(19),
              F32(7, 13, 19), F32(19), F32(19), F32(19), POS32(19));
  CHECK_TRAIN("_backward_contrib_BatchNormWithReLU", bn, F32(3, 17, 13, 11), F32(17), POS32(17), F32(3, 17, 13, 11),
              F32(17), F32(17), F32(17), POS32(17), RAND(MXW_FLOAT32, 0, 2, 3, 17, 13, 11));
  /* LayerNorm: the last axis, a middle axis; backward (ograd, data, gamma, mean, std) */
  CHECK("LayerNorm", NULL, F32(301, 129), F32(129), F32(129));
  CHECK("LayerNorm", KV("axis", "1"), F32(7, 33, 101), F32(33), F32(33));
  CHECK("LayerNorm", NULL, F64(31, 129), F64(129), F64(129));
  CHECK("LayerNorm", NULL, F32(512, 768), F32(768), F32(768)); /* default threshold */
  CHECK("_backward_LayerNorm", NULL, F32(301, 129), F32(301, 129), F32(129), F32(301, 1), POS32(301, 1));
  CHECK("_backward_LayerNorm", KV("axis", "1"), F32(7, 33, 101), F32(7, 33, 101), F32(33), F32(7, 1, 101),
        POS32(7, 1, 101));
  CHECK("_backward_LayerNorm", NULL, F16(31, 129), F16(31, 129), F16(129), F16(31, 1),
        RAND(MXW_FLOAT16, 0.25, 3.0, 31, 1));
  /* InstanceNorm / GroupNorm: rows (n, c) / (n, group) */
  CHECK("InstanceNorm", NULL, F32(3, 17, 13, 11), F32(17), F32(17));
  CHECK("_backward_InstanceNorm", NULL, F32(3, 17, 13, 11), F32(3, 17, 13, 11), F32(17), F32(3, 17), POS32(3, 17));
  CHECK("GroupNorm", KV("num_groups", "4"), F32(3, 16, 13, 11), F32(4), F32(4));
  CHECK("_backward_GroupNorm", KV("num_groups", "4"), F32(3, 16, 13, 11), F32(3, 16, 13, 11), F32(4), F32(3, 4),
        POS32(3, 4));
  /* L2Normalization in its three modes, and its gradient from (ograd, output, norm) */
  static const char *const modes[] = {"instance", "spatial", "channel"};
  for (int m = 0; m < 3; m++) {
    CHECK("L2Normalization", KV("mode", modes[m]), F32(5, 17, 13, 11));
    mxw_ndarray *x = F32(5, 17, 13, 11), *outs[MAX_ARRAYS];
    int nout = 0;
    assert_int_equal(mxw_set_num_threads(1), 0);
    run("L2Normalization", KV("mode", modes[m]), 1, &x, 0, outs, &nout);
    CHECK("_backward_L2Normalization", KV("mode", modes[m]), F32(5, 17, 13, 11), outs[0], outs[1]);
    mxw_ndarray_free(x);
  }
  CHECK("LRN", KV("nsize", "5"), F32(3, 17, 13, 11));
  CHECK("_backward_LRN", KV("nsize", "5"), F32(3, 17, 13, 11), F32(3, 17, 13, 11), POS32(3, 17, 13, 11));
}

/* ---- pooling --------------------------------------------------------------------------------- */
/* Forward, then the backward from the forward's real output (so max finds its cells). */
static void check_pool(const char *const *kv, mxw_ndarray *x) {
  CHECK("Pooling", kv, clone(x));
  mxw_ndarray *y = forward1("Pooling", kv, 1, &x, 0);
  int32_t s[MXW_MAX_NDIM];
  mxw_ndarray_shape(y, s);
  mxw_ndarray *dy = NULL;
  assert_int_equal(mxw_ndarray_create(mxw_ndarray_ndim(y), s, mxw_ndarray_dtype(y), &dy), 0);
  for (int64_t i = 0; i < mxw_ndarray_size(dy); i++)
    mxw_store_f64(mxw_ndarray_data(dy), mxw_ndarray_dtype(dy), i, urand());
  CHECK("_backward_Pooling", kv, dy, x, y);
}

static void test_pooling(void **state) {
  (void)state;
  static const char *const types[] = {"max", "avg", "sum"};
  for (int t = 0; t < 3; t++) {
    check_pool(KV("kernel", "(2, 2)", "stride", "(2, 2)", "pool_type", types[t]), F32(3, 7, 29, 31));
    check_pool(KV("kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)", "pool_type", types[t]), F32(3, 7, 29, 31));
    check_pool(KV("kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)", "pool_type", types[t], "layout", "NHWC"),
               F32(3, 29, 31, 37));
    check_pool(KV("kernel", "(2, 3)", "stride", "(1, 2)", "pooling_convention", "full", "pool_type", types[t],
                  "count_include_pad", "False", "layout", "NHWC"),
               F64(2, 17, 19, 67));
    check_pool(KV("kernel", "(3,)", "stride", "(2,)", "pool_type", types[t], "layout", "NWC"), F32(5, 101, 45));
    check_pool(KV("kernel", "(2, 2, 3)", "pad", "(1, 0, 1)", "pool_type", types[t], "layout", "NDHWC"),
               F32(2, 5, 7, 9, 35));
    check_pool(KV("kernel", "(2, 2, 3)", "pad", "(1, 0, 1)", "pool_type", types[t]), F32(2, 5, 7, 9, 11));
    check_pool(KV("global_pool", "True", "pool_type", types[t]), F32(3, 67, 9, 7));
    check_pool(KV("global_pool", "True", "pool_type", types[t], "layout", "NHWC"), F32(3, 9, 7, 67));
  }
  check_pool(KV("kernel", "(3, 3)", "pool_type", "lp", "p_value", "2"), F32(3, 7, 19, 23));
  check_pool(KV("kernel", "(3, 3)", "pool_type", "lp", "p_value", "3", "layout", "NHWC"), F32(3, 19, 23, 7));
  check_pool(KV("kernel", "(3, 3)", "stride", "(2, 2)"), F16(2, 7, 19, 23));
  check_pool(KV("kernel", "(3, 3)", "stride", "(2, 2)", "pool_type", "avg", "layout", "NHWC"), F16(2, 19, 23, 7));
  check_pool(KV("kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)"), F32(1, 64, 112, 112)); /* default */
  check_pool(KV("kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)", "layout", "NHWC"), F32(1, 112, 112, 64));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unary),     cmocka_unit_test(test_binary),  cmocka_unit_test(test_cast_clip),
      cmocka_unit_test(test_optimizer), cmocka_unit_test(test_nn_misc), cmocka_unit_test(test_reduce),
      cmocka_unit_test(test_softmax),   cmocka_unit_test(test_norm),    cmocka_unit_test(test_pooling),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
