//===- parallel.c - The parallel_for hook -------------------------*- C -*-===//
//
// kiln_parallel_for, the hook generated code calls for its parallel loops.
// Serial today: the whole range runs as one chunk on the calling thread. A
// thread pool, when it comes, lives here and is the runtime's only global
// state (see STYLE.md).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

void kiln_parallel_for(int64_t n,
                       void (*fn)(void *ctx, int64_t begin, int64_t end),
                       void *ctx) {
  if (n <= 0 || !fn)
    return;
  fn(ctx, 0, n);
}
