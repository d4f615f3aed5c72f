//===- internal.h - Between the runtime's own files ---------------*- C -*-===//
//
// Not installed: what parallel.c needs from strings.c and loop_profile.c.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_INTERNAL_H
#define KILN_RUNTIME_INTERNAL_H

/// The string arena of the run on this thread (NULL outside a run), and the
/// swap a parallel loop's workers make so that strings made in their chunks
/// belong to the run that started the loop. Returns the previous one.
void *kiln_string_arena_current(void);
void *kiln_string_arena_swap(void *arena);

#include <stdint.h>

/// Whether loops are being timed (KILN_LOOP_PROFILE set; read once).
int kiln_loop_profile_on(void);
/// A monotonic clock in nanoseconds.
int64_t kiln_loop_profile_now(void);
/// One parallel loop run from outside a chunk: from `start` to `end` (ns),
/// `threads` taking part, the caller busy `caller_ns` and the workers
/// `workers_ns` together (the slowest `slowest_worker_ns`).
void kiln_loop_profile_record(const void *fn, int64_t n, int threads, int64_t start,
                              int64_t end, int64_t caller_ns, int64_t workers_ns,
                              int64_t slowest_worker_ns);

#endif // KILN_RUNTIME_INTERNAL_H
