//===- parallel.c - The parallel_for hook and its thread pool -----*- C -*-===//
//
// kiln_parallel_for, the hook generated code calls for its parallel loops,
// and the runtime's one piece of global state: a pool of worker threads,
// created at the first parallel loop that wants them and kept for the
// process's life. The range [0, n) is split into contiguous blocks, 16
// per thread (KILN_BLOCKS_PER_THREAD), and each participating thread owns
// a contiguous run of them: it runs its own in order (the first is its
// alone, the rest from an atomic counter per run), then takes what is
// left of the others' runs from their counters, so that uneven
// iterations (a conv's last, partial tile) and a thread that starts late
// even out. Owning a contiguous part keeps consecutive loops over the
// same dim on the same core for the same rows: what one kernel wrote
// stays in that core's cache for the next. The calling thread is one of
// them and waits for the others.
//
// The thread count: kiln_set_num_threads(), else the KILN_NUM_THREADS
// environment variable read once, else 1. One thread means no worker is
// ever created and every loop runs on the calling thread.
//
// Workers spin briefly on a generation counter before sleeping on a
// condition variable: a model issues a parallel loop per convolution, and
// waking a sleeping thread costs more than most of them take. Parallel loops
// from several host threads take turns; a loop started from inside a chunk
// runs serially on that thread.
//
// Strings that generated code makes inside a chunk belong to the run that
// started the loop: workers take the caller's string arena for the loop.
//
// A child of fork() starts its own workers. Without POSIX threads
// (firmware) the hook is serial.
//
// With KILN_LOOP_PROFILE set, each loop's wall and busy times are recorded
// (loop_profile.c).
//
//===----------------------------------------------------------------------===//

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "kiln/runtime.h"
#include "internal.h"

#include <stdlib.h>

#if defined(__unix__) || defined(__APPLE__)
#define KILN_HAVE_PTHREADS 1
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#endif

/// Upper bound on threads (the caller included).
#define KILN_MAX_THREADS 256

typedef void (*kiln_chunk_fn)(void *ctx, int64_t begin, int64_t end);

static int clamp_threads(long n) {
  if (n < 1)
    return 1;
  return n > KILN_MAX_THREADS ? KILN_MAX_THREADS : (int)n;
}

#ifdef KILN_HAVE_PTHREADS

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/// Blocks of a parallel loop per participating thread: the grain at which
/// a thread that is done takes over what is left of another's run (16:
/// resnet50 at two threads 1% faster than with 4, paired, in session 39).
#define KILN_BLOCKS_PER_THREAD 16
/// Spins of a waiting worker before it sleeps (tens of microseconds).
#define KILN_SPINS (1 << 15)
/// state = generation * KILN_STATE_PARTS + chunks (chunks <= KILN_MAX_THREADS).
#define KILN_STATE_PARTS 512ul

static struct {
  pthread_mutex_t run;  ///< One parallel loop at a time.
  pthread_mutex_t lock; ///< Guards sleeping and the thread count.
  pthread_cond_t wake;
  /// The loop's generation (bumped once per parallel loop) times
  /// KILN_STATE_PARTS plus its number of chunks, in one word so that a
  /// worker reads both at once.
  _Atomic unsigned long state;
  _Atomic int pending; ///< Workers yet to finish this loop's chunks.
  _Atomic int requested;            ///< 0: not yet resolved.
  int workers;                      ///< Started so far (under lock).
  /* The current loop; written before generation is bumped. */
  kiln_chunk_fn fn;
  void *ctx;
  void *strings; ///< The caller's string arena (internal.h).
  int64_t n;
  int64_t blocks;
  int parts; ///< Participating threads.
  int profiling; ///< Workers time their blocks into the two fields below.
  _Atomic int64_t workers_ns, slowest_worker_ns;
  /// Per participating thread, the next block of its run (runs end where
  /// the next thread's start); on their own cache lines.
  struct {
    _Alignas(64) _Atomic int64_t next;
  } run_next[KILN_MAX_THREADS];
} pool = {.run = PTHREAD_MUTEX_INITIALIZER,
          .lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER};

static _Thread_local int in_chunk;

/// The first block of participating thread `part`'s run.
static int64_t run_start(int part) { return pool.blocks * part / pool.parts; }

/// Runs the blocks of thread `part`'s run, then what is left of the
/// others' (the next thread's first). The first block of each run is its
/// owner's alone, so every participating thread gets work.
static void run_blocks(int part) {
  int64_t first = run_start(part);
  if (first < run_start(part + 1))
    pool.fn(pool.ctx, pool.n * first / pool.blocks, pool.n * (first + 1) / pool.blocks);
  for (int k = 0; k < pool.parts; ++k) {
    int owner = (part + k) % pool.parts;
    int64_t end = run_start(owner + 1);
    for (int64_t b; (b = atomic_fetch_add_explicit(&pool.run_next[owner].next, 1,
                                                   memory_order_relaxed)) < end;)
      pool.fn(pool.ctx, pool.n * b / pool.blocks, pool.n * (b + 1) / pool.blocks);
  }
}

/// The generation current when each worker was started: the worker waits
/// for the next one.
static unsigned long birth_generation[KILN_MAX_THREADS];

static void *worker_main(void *arg) {
  int id = (int)(intptr_t)arg; /* 1 .. workers */
  in_chunk = 1;
  unsigned long seen = birth_generation[id];
  for (;;) {
    unsigned long s;
    int spins = 0;
    while ((s = atomic_load_explicit(&pool.state, memory_order_acquire)) /
               KILN_STATE_PARTS == seen) {
      if (++spins < KILN_SPINS) {
        cpu_relax();
        continue;
      }
      pthread_mutex_lock(&pool.lock);
      while ((s = atomic_load_explicit(&pool.state, memory_order_acquire)) /
                 KILN_STATE_PARTS == seen)
        pthread_cond_wait(&pool.wake, &pool.lock);
      pthread_mutex_unlock(&pool.lock);
      break;
    }
    seen = s / KILN_STATE_PARTS;
    /* Workers without a chunk in this loop are not waited for and touch
       nothing: the next loop may already be filling the pool in. */
    int parts = (int)(s % KILN_STATE_PARTS);
    if (id >= parts)
      continue;
    void *own = kiln_string_arena_swap(pool.strings);
    int64_t start = pool.profiling ? kiln_loop_profile_now() : 0;
    run_blocks(id);
    if (pool.profiling) {
      int64_t busy = kiln_loop_profile_now() - start;
      atomic_fetch_add_explicit(&pool.workers_ns, busy, memory_order_relaxed);
      int64_t slowest = atomic_load_explicit(&pool.slowest_worker_ns, memory_order_relaxed);
      while (busy > slowest && !atomic_compare_exchange_weak_explicit(
                                   &pool.slowest_worker_ns, &slowest, busy,
                                   memory_order_relaxed, memory_order_relaxed)) {
      }
    }
    kiln_string_arena_swap(own);
    atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel);
  }
  return NULL;
}

static int resolve_threads(void) {
  int n = atomic_load_explicit(&pool.requested, memory_order_relaxed);
  if (n > 0)
    return n;
  const char *env = getenv("KILN_NUM_THREADS");
  n = clamp_threads(env ? strtol(env, NULL, 10) : 1);
  int expected = 0;
  atomic_compare_exchange_strong(&pool.requested, &expected, n);
  return atomic_load_explicit(&pool.requested, memory_order_relaxed);
}

/// A child of fork() has none of the parent's workers: it starts its own.
static void reset_after_fork(void) {
  pthread_mutex_init(&pool.run, NULL);
  pthread_mutex_init(&pool.lock, NULL);
  pthread_cond_init(&pool.wake, NULL);
  pool.workers = 0;
  atomic_store_explicit(&pool.pending, 0, memory_order_relaxed);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void register_atfork(void) { pthread_atfork(NULL, NULL, reset_after_fork); }

/// Starts workers up to `wanted` (under pool.run); returns how many run.
static int start_workers(int wanted) {
  pthread_once(&atfork_once, register_atfork);
  pthread_mutex_lock(&pool.lock);
  while (pool.workers < wanted) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* pool.run is held: no loop starts before this worker has its birth. */
    birth_generation[pool.workers + 1] =
        atomic_load_explicit(&pool.state, memory_order_relaxed) / KILN_STATE_PARTS;
    int failed = pthread_create(&thread, &attr, worker_main,
                                (void *)(intptr_t)(pool.workers + 1));
    pthread_attr_destroy(&attr);
    if (failed)
      break; /* Run with the threads there are. */
    ++pool.workers;
  }
  int started = pool.workers;
  pthread_mutex_unlock(&pool.lock);
  return started;
}

void kiln_set_num_threads(int n) {
  atomic_store_explicit(&pool.requested, clamp_threads(n), memory_order_relaxed);
}

int kiln_get_num_threads(void) { return resolve_threads(); }

void kiln_parallel_for(int64_t n, kiln_chunk_fn fn, void *ctx) {
  if (n <= 0 || !fn)
    return;
  int threads = resolve_threads();
  int profiling = !in_chunk && kiln_loop_profile_on();
  int64_t start = profiling ? kiln_loop_profile_now() : 0;
  if (threads <= 1 || n == 1 || in_chunk) {
    fn(ctx, 0, n);
    if (profiling) {
      int64_t end = kiln_loop_profile_now();
      kiln_loop_profile_record((const void *)fn, n, 1, start, end, end - start, 0, 0);
    }
    return;
  }
  pthread_mutex_lock(&pool.run);
  int workers = start_workers(threads - 1);
  int parts = workers + 1 < threads ? workers + 1 : threads;
  if (parts > n)
    parts = (int)n;
  pool.fn = fn;
  pool.ctx = ctx;
  pool.strings = kiln_string_arena_current();
  pool.n = n;
  pool.blocks = n < (int64_t)parts * KILN_BLOCKS_PER_THREAD ? n
                                                           : (int64_t)parts * KILN_BLOCKS_PER_THREAD;
  pool.parts = parts;
  pool.profiling = profiling;
  atomic_store_explicit(&pool.workers_ns, 0, memory_order_relaxed);
  atomic_store_explicit(&pool.slowest_worker_ns, 0, memory_order_relaxed);
  for (int p = 0; p < parts; ++p)
    atomic_store_explicit(&pool.run_next[p].next, run_start(p) + 1, memory_order_relaxed);
  atomic_store_explicit(&pool.pending, parts - 1, memory_order_relaxed);
  unsigned long generation =
      atomic_load_explicit(&pool.state, memory_order_relaxed) / KILN_STATE_PARTS + 1;
  pthread_mutex_lock(&pool.lock);
  atomic_store_explicit(&pool.state, generation * KILN_STATE_PARTS + (unsigned long)parts,
                        memory_order_release);
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);
  in_chunk = 1;
  int64_t caller_start = profiling ? kiln_loop_profile_now() : 0;
  run_blocks(0);
  int64_t caller_ns = profiling ? kiln_loop_profile_now() - caller_start : 0;
  in_chunk = 0;
  /* Spin for the others; yield the core if they take long (more threads
     than cores). */
  for (int spins = 0; atomic_load_explicit(&pool.pending, memory_order_acquire) > 0; ++spins) {
    if (spins < KILN_SPINS)
      cpu_relax();
    else
      sched_yield();
  }
  if (profiling)
    kiln_loop_profile_record(
        (const void *)fn, n, parts, start, kiln_loop_profile_now(), caller_ns,
        atomic_load_explicit(&pool.workers_ns, memory_order_relaxed),
        atomic_load_explicit(&pool.slowest_worker_ns, memory_order_relaxed));
  pthread_mutex_unlock(&pool.run);
}

#else /* !KILN_HAVE_PTHREADS */

static int requested_threads = 1;

void kiln_set_num_threads(int n) { requested_threads = clamp_threads(n); }

int kiln_get_num_threads(void) { return 1; }

void kiln_parallel_for(int64_t n, kiln_chunk_fn fn, void *ctx) {
  (void)requested_threads;
  if (n <= 0 || !fn)
    return;
  fn(ctx, 0, n);
}

#endif
