//===- internal.h - Between the runtime's own files ---------------*- C -*-===//
//
// Not installed: what parallel.c needs from strings.c.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_INTERNAL_H
#define KILN_RUNTIME_INTERNAL_H

/// The string arena of the run on this thread (NULL outside a run), and the
/// swap a parallel loop's workers make so that strings made in their chunks
/// belong to the run that started the loop. Returns the previous one.
void *kiln_string_arena_current(void);
void *kiln_string_arena_swap(void *arena);

#endif // KILN_RUNTIME_INTERNAL_H
