//===- loop_profile.c - Timing of each parallel loop --------------*- C -*-===//
//
// With KILN_LOOP_PROFILE=FILE in the environment (read once, at the first
// parallel loop), kiln_parallel_for records for every loop it runs from
// outside a chunk: the loop's function, its trip count, the threads that
// took part, the time since the calling thread's previous loop ended
// (serial code in between), its wall time, and how long the caller and the
// workers were busy in it. The records go to FILE, one line each, when the
// library is unloaded or the process exits; utils/bench/loop_profile.py
// reads them. Without the variable nothing is recorded and the cost is one
// test per loop.
//
// Functions are written as addresses relative to kiln_parallel_for's own,
// which `nm` gives for the same library, so that no symbol lookup is needed
// here. Hosts with POSIX threads only; elsewhere the hooks do nothing.
//
//===----------------------------------------------------------------------===//

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "kiln/runtime.h"
#include "internal.h"

#if defined(__unix__) || defined(__APPLE__)

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/// Records kept at most (a few hundred thousand loops: minutes of a model).
#define KILN_PROFILE_MAX_RECORDS (1 << 22)

typedef struct {
  const void *fn;
  int64_t n;
  int threads;
  int64_t gap_ns, wall_ns, caller_ns, workers_ns, slowest_worker_ns;
} loop_record;

static struct {
  pthread_once_t once;
  pthread_mutex_t lock;
  const char *path; ///< NULL: off.
  loop_record *records;
  size_t count, capacity;
  int64_t last_end; ///< When the previous recorded loop ended.
} profile = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static void read_environment(void) {
  const char *path = getenv("KILN_LOOP_PROFILE");
  profile.path = path && *path ? path : NULL;
}

int kiln_loop_profile_on(void) {
  pthread_once(&profile.once, read_environment);
  return profile.path != NULL;
}

int64_t kiln_loop_profile_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void kiln_loop_profile_record(const void *fn, int64_t n, int threads, int64_t start,
                              int64_t end, int64_t caller_ns, int64_t workers_ns,
                              int64_t slowest_worker_ns) {
  pthread_mutex_lock(&profile.lock);
  if (profile.count == profile.capacity && profile.capacity < KILN_PROFILE_MAX_RECORDS) {
    size_t grown = profile.capacity ? 2 * profile.capacity : 4096;
    loop_record *more = realloc(profile.records, grown * sizeof *more);
    if (more) {
      profile.records = more;
      profile.capacity = grown;
    }
  }
  if (profile.count < profile.capacity)
    profile.records[profile.count++] = (loop_record){
        .fn = fn,
        .n = n,
        .threads = threads,
        .gap_ns = profile.last_end ? start - profile.last_end : -1,
        .wall_ns = end - start,
        .caller_ns = caller_ns,
        .workers_ns = workers_ns,
        .slowest_worker_ns = slowest_worker_ns};
  profile.last_end = end;
  pthread_mutex_unlock(&profile.lock);
}

__attribute__((destructor)) static void write_profile(void) {
  if (!profile.path || !profile.count)
    return;
  FILE *f = fopen(profile.path, "w");
  if (!f)
    return;
  fprintf(f, "# kiln loop profile: fn (offset from kiln_parallel_for), trips, threads,"
             " gap_ns (-1: first), wall_ns, caller_ns, workers_ns, slowest_worker_ns\n");
  const char *base = (const char *)(void *)&kiln_parallel_for;
  for (size_t i = 0; i < profile.count; ++i) {
    const loop_record *r = &profile.records[i];
    fprintf(f, "%lld %lld %d %lld %lld %lld %lld %lld\n",
            (long long)((const char *)r->fn - base), (long long)r->n, r->threads,
            (long long)r->gap_ns, (long long)r->wall_ns, (long long)r->caller_ns,
            (long long)r->workers_ns, (long long)r->slowest_worker_ns);
  }
  fclose(f);
  free(profile.records);
  profile.records = NULL;
  profile.count = profile.capacity = 0;
}

#else /* No POSIX threads: nothing is recorded. */

int kiln_loop_profile_on(void) { return 0; }

int64_t kiln_loop_profile_now(void) { return 0; }

void kiln_loop_profile_record(const void *fn, int64_t n, int threads, int64_t start,
                              int64_t end, int64_t caller_ns, int64_t workers_ns,
                              int64_t slowest_worker_ns) {
  (void)fn, (void)n, (void)threads, (void)start, (void)end, (void)caller_ns,
      (void)workers_ns, (void)slowest_worker_ns;
}

#endif
