/* Calls mlp_run_dims (mlp.onnx compiled with a dynamic batch) directly:
 * batch 0, 1 and 3 give what mlp_run gives item by item; bad dims are
 * refused. Prints one line per check; exits 0 when all pass. With
 * WHOLE_BATCH (a --target=cuda library, which runs the batch whole), a
 * batch of 0 computes the output that does not depend on the batch;
 * else (items one after another) it leaves it alone. */
#include "mlp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

_Static_assert(mlp_NUM_DYNAMIC_DIMS == 1, "one dynamic dim");
_Static_assert(mlp_INPUT_0_NUM_ELEMENTS == 4, "x: 4 values per item");

static int failures;

static void expect(const char *what, int ok) {
  printf("%s: %s\n", what, ok ? "ok" : "FAILED");
  failures += !ok;
}

int main(void) {
  static unsigned char ws[mlp_WORKSPACE_SIZE + 64] __attribute__((aligned(64)));
  float x[3 * 4], y[3 * 3], k[2], one[3], k1[2];
  for (int i = 0; i < 12; ++i)
    x[i] = (float)(i % 5) - 2.0f;
  const void *in[1] = {x};
  void *out[2] = {y, k};
  int64_t dims[1] = {3};
  expect("run_dims batch 3", mlp_run_dims(dims, in, out, ws) == 0);
  int same = 1;
  for (int n = 0; n < 3; ++n) {
    const void *in1[1] = {x + 4 * n};
    void *out1[2] = {one, k1};
    same &= mlp_run(in1, out1, ws) == 0;
    for (int j = 0; j < 3; ++j)
      same &= fabsf(one[j] - y[3 * n + j]) <= 1e-6f;
    same &= memcmp(k, k1, sizeof k) == 0;
  }
  expect("each item as mlp_run computes it", same);
  dims[0] = 0;
  const void *noIn[1] = {NULL};
  void *noOut[2] = {NULL, k};
  k[0] = k[1] = 42.0f;
  expect("batch 0 with NULL batched tensors", mlp_run_dims(dims, noIn, noOut, ws) == 0);
#ifdef WHOLE_BATCH
  expect("batch 0 computes the unbatched output", memcmp(k, k1, sizeof k) == 0);
#else
  expect("batch 0 leaves the unbatched output alone", k[0] == 42.0f && k[1] == 42.0f);
#endif
  dims[0] = -1;
  expect("negative batch refused", mlp_run_dims(dims, in, out, ws) == 1);
  expect("NULL dims refused", mlp_run_dims(NULL, in, out, ws) == 1);
  expect("workspace size", mlp_workspace_size(dims) == mlp_WORKSPACE_SIZE);
  expect("descriptor", mlp_describe()->num_dynamic_dims == 1 &&
                           strcmp(mlp_describe()->dynamic_dim_names[0], "N") == 0 &&
                           mlp_describe()->inputs[0].dims[0] == -1 &&
                           mlp_describe()->outputs[1].dims[0] == 2);
  return failures ? 1 : 0;
}
