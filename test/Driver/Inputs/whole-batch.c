/* Calls batch_value (y = x / N, refused one item at a time, so compiled
 * with the batch kept whole) directly: batch_value_run is one item (x / 1)
 * and batch_value_run_dims any number of them (x / 3 at 3). Prints one line
 * per check; exits 0 when all pass. */
#include "batch_value.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

_Static_assert(batch_value_NUM_DYNAMIC_DIMS == 1, "one dynamic dim");
_Static_assert(batch_value_INPUT_0_NUM_ELEMENTS == 4, "x: 4 values per item");

static int failures;

static void expect(const char *what, int ok) {
  printf("%s: %s\n", what, ok ? "ok" : "FAILED");
  failures += !ok;
}

/* Runs `items` items (batch_value_run for -1: one) and checks y = x / n. */
static void check(const char *what, int64_t items) {
  int64_t n = items < 0 ? 1 : items;
  int64_t dims[1] = {n};
  int64_t bytes = batch_value_workspace_size(dims);
  void *ws = bytes > 0 ? aligned_alloc(64, ((size_t)bytes + 63) / 64 * 64) : NULL;
  float x[3 * 4], y[3 * 4];
  for (int i = 0; i < 12; ++i) {
    x[i] = (float)i - 5.0f;
    y[i] = 1e9f;
  }
  const void *in[1] = {x};
  void *out[1] = {y};
  int status = bytes < 0 ? -1
               : items < 0 ? batch_value_run(in, out, ws)
                           : batch_value_run_dims(dims, in, out, ws);
  int ok = status == 0;
  for (int64_t i = 0; i < 4 * n; ++i)
    ok &= fabsf(y[i] - x[i] / (float)n) <= 1e-6f;
  expect(what, ok);
  free(ws);
}

int main(void) {
  check("run: x / 1", -1);
  check("run_dims at 3: x / 3", 3);
  return failures ? 1 : 0;
}
