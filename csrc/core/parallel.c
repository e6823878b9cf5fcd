/* parallel.c -- the kernels' thread pool (mxw_parallel_for).
 *
 * One persistent pool of worker threads, started at the first parallel call that can use them
 * (or by mxw_set_num_threads / mxw_start_pool) and kept for the life of the module (XNNPACK's pthreadpool, ggml's
 * threadpool). A call splits [0, n) into at most num_threads contiguous chunks whose boundaries are multiples of
 * `align` (so that a kernel can keep its SIMD tiles whole); the chunks depend only on n, align and the thread count,
 * never on which thread runs them, and each kernel computes every output element the same way whatever chunk holds it:
 * results are bit-identical for any thread count. The calling thread runs chunks too and returns when all are done.
 *
 * Builds without threads (the simd and relaxed-simd wasm tiers) run every call inline. A call
 * made from inside a chunk (a kernel calling a kernel) runs inline as well.
 *
 * Synchronization: a mutex and two condition variables (work posted, work done); a generation
 * counter tells workers that a new job is there. Before sleeping on a condition variable, a
 * worker waiting for the next job and the caller waiting for the workers spin on the counters for
 * up to MXW_SPIN_NS (0.2 ms): a woken thread often starts 0.1-0.2 ms late, which made splits of
 * ops under ~1 ms pay nothing at 2 threads (measured by helper "threads": relu/add 1M 0.9x
 * without spinning, 1.9-2.0x with it, in the threaded wasm tier and natively). In Emscripten's pthreads build the
 * workers are Web Workers that start_workers adds to the module's pool (mxw_js_add_workers), at
 * most the pool's size (mxw_pool_configure); the main thread waits with the futex-based condition wait. A created
 * worker takes part in jobs once it runs (g_live): the threaded wasm tiers' workers load the module on their own while
 * the first calls run on the caller (js/tiers.mjs does not wait for them; results are the same). */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "mxw_core.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define MXW_THREADS 1
#include <pthread.h>
#include <unistd.h>
#ifdef __EMSCRIPTEN__
#include <emscripten/threading.h>
#endif
#else
#define MXW_THREADS 0
#endif

#ifndef MXW_MAX_THREADS
#define MXW_MAX_THREADS 16
#endif

static int g_num_threads = 1; /* what the next parallel call may use (the caller included) */

#if MXW_THREADS
typedef struct job {
  void (*each)(void); /* mxw_parallel_each: every thread runs it once (then no chunks) */
  mxw_task_fn fn;
  void *ctx;
  int64_t n, align;
  int chunks;
  /* chunk c taken (by thread c first, so that a thread gets the same part of the same arrays
   * job after job; a thread done with its own takes any left, e.g. a sleeping worker's) */
  atomic_uchar taken[MXW_MAX_THREADS];
} job;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_work = PTHREAD_COND_INITIALIZER, g_done = PTHREAD_COND_INITIALIZER;
static pthread_t g_workers[MXW_MAX_THREADS];
static int g_started;   /* workers created (by the calling thread, with g_lock held) */
static int g_live;      /* workers that have entered their loop: the ones a job counts on (changed
                           with g_lock held, read atomically) */
static unsigned g_gen;  /* bumped for each job (atomically: workers spin on it unlocked) */
static unsigned g_busy; /* workers still in the current job (likewise) */
/* Threads asleep on g_work / g_done. A job wakes the workers, and the last worker the caller,
 * only when someone sleeps: a wake-up is a call out to JS in wasm (emscripten_futex_wake), about
 * 10% of a batch-1 training step on the threaded tier when it was made for every job. The
 * spinning threads see a job and its end through g_gen / g_busy alone, without g_lock: taking it
 * on every job had the caller and a worker contend for it (futex waits and wakes, JS calls in
 * wasm: ~10% of the main thread's time in a batch-1 training step at 2 threads). A sleeper
 * counts itself, with g_lock held, before it looks at the counter it waits on; the thread that
 * changes that counter then reads the sleepers (both sequentially consistent): either the sleeper
 * sees the change, or the changer sees the sleeper and signals it under g_lock. */
static int g_work_sleepers, g_done_sleepers;
static job g_job;
static _Thread_local int t_inside; /* this thread is running a chunk */
static _Thread_local int t_id;     /* 0: the caller; workers 1, 2, ... in the order they went live */

#ifndef MXW_SPIN_NS
#define MXW_SPIN_NS 200000
#endif
static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
/* Spins while *p == v, for at most MXW_SPIN_NS; 1 when it changed. (The clock is read every 4096
 * rounds, a few microseconds: in wasm it is a call out to JS.) */
static int spin_while(const unsigned *p, unsigned v) {
  int64_t end = 0;
  for (unsigned i = 0;; i++) {
    if (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v) return 1;
    if ((i & 4095) == 0) {
      int64_t t = now_ns();
      if (!end)
        end = t + MXW_SPIN_NS;
      else if (t >= end)
        return 0;
    }
    cpu_relax();
  }
}

static void chunk_range(const job *j, int c, int64_t *b, int64_t *e) {
  const int64_t units = (j->n + j->align - 1) / j->align;
  *b = units * c / j->chunks * j->align;
  *e = units * (c + 1) / j->chunks * j->align;
  if (*e > j->n) *e = j->n;
}

/* Runs chunk t_id, then any chunk no thread has taken yet (chunk c belongs to thread c; every
 * chunk's thread is live: chunks <= live workers + 1). Which chunks run where varies, their
 * results do not. Taking chunks in order of arrival, as before, let the threads swap halves from
 * one job to the next: memory-bound kernels then pulled their data across cores (a split relu of
 * 200k floats between other work: 13.6 us with the caller first to its half, 17-20 us
 * racing). */
static void run_chunks(job *j) {
  if (t_id >= j->chunks) return; /* (a job of fewer chunks than threads: each chunk's own thread runs or leaves it) */
  t_inside = 1;
  for (int k = 0; k < j->chunks; k++) {
    const int c = (t_id + k) % j->chunks;
    if (atomic_exchange_explicit(&j->taken[c], 1, memory_order_acq_rel)) continue;
    int64_t b, e;
    chunk_range(j, c, &b, &e);
    if (b < e) j->fn(j->ctx, b, e);
  }
  t_inside = 0;
}

/* Sleeps until *counter != seen (g_work: a new job) or == 0 (g_done: the job's end); see above. */
static void sleep_until_changed(pthread_cond_t *cond, int *sleepers, const unsigned *counter, unsigned seen,
                                int until_zero) {
  pthread_mutex_lock(&g_lock);
  __atomic_add_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
  for (;;) {
    const unsigned v = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
    if (until_zero ? v == 0 : v != seen) break;
    pthread_cond_wait(cond, &g_lock);
  }
  __atomic_sub_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&g_lock);
}
static void wake_sleepers(pthread_cond_t *cond, const int *sleepers) {
  if (__atomic_load_n(sleepers, __ATOMIC_SEQ_CST) == 0) return;
  pthread_mutex_lock(&g_lock);
  pthread_cond_broadcast(cond);
  pthread_mutex_unlock(&g_lock);
}

static void *worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&g_lock);
  /* live from now on: the next job counts on this worker, a job already published does not
   * (a job is published with g_lock held while a created worker is not live yet) */
  unsigned seen = __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE);
  t_id = g_live + 1;
  __atomic_store_n(&g_live, g_live + 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&g_done); /* start_workers may be waiting for it (natively) */
  pthread_mutex_unlock(&g_lock);
  for (;;) {
    /* back-to-back jobs start at once; else sleep until the next one */
    if (!spin_while(&g_gen, seen)) sleep_until_changed(&g_work, &g_work_sleepers, &g_gen, seen, 0);
    seen = __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE);
    if (g_job.each)
      g_job.each();
    else
      run_chunks(&g_job);
    if (__atomic_sub_fetch(&g_busy, 1, __ATOMIC_SEQ_CST) == 0) wake_sleepers(&g_done, &g_done_sleepers);
  }
  return NULL;
}

/* The pool's size: workers besides the caller (mxw_pool_configure). */
static int g_max_workers = MXW_MAX_THREADS - 1;
#ifdef __EMSCRIPTEN__
/* wasm/library_mxw.js: adds n Web Workers to Emscripten's pool and starts loading the module in
 * them. The pool is empty when the module starts (js/tiers.mjs): its workers are made when first
 * wanted, so that their start-up (a Node worker's bootstrap, the glue, the module) does not run
 * beside the import and the first calls on a 2-core host (~8 ms of the threads tier's import to
 * a first LeNet inference). */
extern int mxw_js_add_workers(int n); /* returns how many it added */
static int g_allocated;               /* workers made in JS */
#endif

/* Starts workers up to want - 1 (the caller is the other thread) within the pool's size; returns
 * how many were created. Natively it returns once they run (a thread starts at once); in wasm a
 * worker may still be loading the module, and takes part in jobs from when it runs (g_live):
 * waiting here would make the caller wait for the load, which the JS side does not
 * (scripts/patch-glue.mjs). g_lock held. */
static int start_workers(int want) {
  int target = want - 1 < g_max_workers ? want - 1 : g_max_workers;
#ifdef __EMSCRIPTEN__
  if (g_allocated < target) g_allocated += mxw_js_add_workers(target - g_allocated);
#endif
  while (g_started < target) {
    if (pthread_create(&g_workers[g_started], NULL, worker, NULL) != 0) break; /* e.g. no pooled worker left */
    g_started++;
  }
  /* what cannot start is not reported as running (features().numThreads) */
  if (g_started < target && g_num_threads > g_started + 1) g_num_threads = g_started + 1;
#ifndef __EMSCRIPTEN__
  while (g_live < g_started) pthread_cond_wait(&g_done, &g_lock);
#endif
  return g_started;
}
#endif

#if MXW_THREADS
/* Publishes g_job (filled in by the caller) to the workers, runs the caller's part, and returns
 * when every worker is done. With `locked` (workers still starting), g_lock is held on entry and
 * released once the job is published. */
static void run_job(int workers, int locked) {
  __atomic_store_n(&g_busy, (unsigned)workers, __ATOMIC_RELAXED);
  __atomic_add_fetch(&g_gen, 1, __ATOMIC_SEQ_CST); /* publishes the job */
  if (locked) {
    if (__atomic_load_n(&g_work_sleepers, __ATOMIC_SEQ_CST)) pthread_cond_broadcast(&g_work);
    pthread_mutex_unlock(&g_lock);
  } else {
    wake_sleepers(&g_work, &g_work_sleepers);
  }
  if (g_job.each)
    g_job.each();
  else
    run_chunks(&g_job);
  /* the workers usually finish within the spin; else sleep until the last one signals */
  for (;;) {
    unsigned busy = __atomic_load_n(&g_busy, __ATOMIC_ACQUIRE);
    if (busy == 0) return;
    if (!spin_while(&g_busy, busy)) break;
  }
  sleep_until_changed(&g_done, &g_done_sleepers, &g_busy, 0, 1);
}

/* The workers a job can count on, with g_lock taken (*locked) when some are still starting: a
 * worker becoming live while a job is published unlocked could take part without being counted.
 * Once every created worker is live and no more are wanted, jobs go without the lock. */
static int job_workers(int want, int *locked) {
  *locked = 0;
  const int target = want - 1 < g_max_workers ? want - 1 : g_max_workers;
  if (g_started >= target && __atomic_load_n(&g_live, __ATOMIC_ACQUIRE) == g_started) return g_started;
  pthread_mutex_lock(&g_lock);
  *locked = 1;
  start_workers(want);
  return g_live;
}
#endif

void mxw_parallel_for(int64_t n, int64_t align, mxw_task_fn fn, void *ctx) {
  if (n <= 0) return;
  if (align < 1) align = 1;
#if MXW_THREADS
  const int64_t units = (n + align - 1) / align;
  int chunks = g_num_threads < units ? g_num_threads : (int)units;
  if (chunks > 1 && !t_inside) {
    int locked;
    const int workers = job_workers(chunks, &locked); /* created workers not running yet take no part */
    if (workers + 1 < chunks) chunks = workers + 1;
    if (chunks > 1) {
      g_job.each = NULL;
      g_job.fn = fn;
      g_job.ctx = ctx;
      g_job.n = n;
      g_job.align = align;
      g_job.chunks = chunks;
      for (int c = 0; c < chunks; c++) atomic_store_explicit(&g_job.taken[c], 0, memory_order_relaxed);
      run_job(workers, locked);
      return;
    }
    if (locked) pthread_mutex_unlock(&g_lock);
  }
#endif
  fn(ctx, 0, n);
}

void mxw_parallel_each(void (*fn)(void)) {
#if MXW_THREADS
  if (!t_inside) {
    int locked;
    const int workers = job_workers(1, &locked); /* (starts none) */
    if (workers > 0) {
      g_job.each = fn;
      run_job(workers, locked);
      return;
    }
    if (locked) pthread_mutex_unlock(&g_lock);
  }
#endif
  fn();
}

int mxw_threads_supported(void) { return MXW_THREADS; }

int mxw_default_num_threads(void) {
#if MXW_THREADS
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef __EMSCRIPTEN__
  cores = emscripten_num_logical_cores();
#endif
  if (cores < 1) cores = 1;
  return cores > 4 ? 4 : (int)cores;
#else
  return 1;
#endif
}

int mxw_set_num_threads(int n) {
  MXW_CHECK(n >= 1, "the number of threads must be at least 1, got %d", n);
#if MXW_THREADS
  if (n > MXW_MAX_THREADS) n = MXW_MAX_THREADS;
  pthread_mutex_lock(&g_lock);
  int workers = start_workers(n);
  pthread_mutex_unlock(&g_lock);
  g_num_threads = n < workers + 1 ? n : workers + 1;
#else
  g_num_threads = 1;
#endif
  return 0;
}

int mxw_get_num_threads(void) { return g_num_threads; }

int mxw_pool_configure(int max_workers, int threads) {
  MXW_CHECK(max_workers >= 0 && threads >= 1, "the pool takes at least 0 workers and 1 thread, got %d and %d",
            max_workers, threads);
#if MXW_THREADS
  pthread_mutex_lock(&g_lock);
  if (max_workers > MXW_MAX_THREADS - 1) max_workers = MXW_MAX_THREADS - 1;
  if (max_workers < g_started) max_workers = g_started;
  g_max_workers = max_workers;
  pthread_mutex_unlock(&g_lock);
  g_num_threads = threads < max_workers + 1 ? threads : max_workers + 1;
#else
  (void)max_workers;
  g_num_threads = 1;
#endif
  return 0;
}

void mxw_start_pool(void) {
#if MXW_THREADS
  pthread_mutex_lock(&g_lock);
  start_workers(g_num_threads);
  pthread_mutex_unlock(&g_lock);
#endif
}
