/* Calls the entry points of mlp.onnx compiled with its sequence length
 * 'seq' dynamic ([1, seq, 16] -> softmax rows [1, seq, 8]) directly: the
 * workspace size is a function of seq, runs at two lengths give softmax
 * rows, and bad arguments are refused. Prints one line per check; exits 0
 * when all pass. */
#include "mlp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

_Static_assert(mlp_NUM_DYNAMIC_DIMS == 1, "one dynamic dim");
_Static_assert(mlp_WORKSPACE_SIZE == -1, "the workspace depends on seq");
_Static_assert(mlp_INPUT_0_NUM_ELEMENTS == 16, "x: 16 values per token");

static int failures;

static void expect(const char *what, int ok) {
  printf("%s: %s\n", what, ok ? "ok" : "FAILED");
  failures += !ok;
}

/* Runs seq tokens; every output row must be a softmax (positive, sum 1). */
static int rows_ok(int64_t seq) {
  int64_t dims[1] = {seq};
  int64_t bytes = mlp_workspace_size(dims);
  void *ws = aligned_alloc(64, (size_t)((bytes + 63) / 64 * 64));
  float *x = malloc(sizeof(float) * 16 * (size_t)seq);
  float *y = malloc(sizeof(float) * 8 * (size_t)seq);
  for (int64_t i = 0; i < 16 * seq; ++i)
    x[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
  const void *in[1] = {x};
  void *out[1] = {y};
  int ok = bytes > 0 && ws && mlp_run_dims(dims, in, out, ws) == 0;
  for (int64_t t = 0; ok && t < seq; ++t) {
    float sum = 0;
    for (int j = 0; j < 8; ++j) {
      ok &= y[t * 8 + j] > 0;
      sum += y[t * 8 + j];
    }
    ok &= fabsf(sum - 1.0f) < 1e-5f;
  }
  free(ws);
  free(x);
  free(y);
  return ok;
}

int main(void) {
  int64_t d7[1] = {7}, d130[1] = {130}, d0[1] = {0}, neg[1] = {-1},
          huge[1] = {(int64_t)1 << 31};
  int64_t w7 = mlp_workspace_size(d7), w130 = mlp_workspace_size(d130);
  expect("workspace grows with seq", w7 > 0 && w130 > w7);
  expect("workspace size refuses NULL, negative and huge dims",
         mlp_workspace_size(NULL) == -1 && mlp_workspace_size(neg) == -1 &&
             mlp_workspace_size(huge) == -1);
  expect("seq 7 gives softmax rows", rows_ok(7));
  expect("seq 130 gives softmax rows", rows_ok(130));

  static unsigned char ws[4096] __attribute__((aligned(64)));
  float x[16 * 3] = {0}, y[8 * 3];
  const void *in[1] = {x};
  void *out[1] = {y};
  const void *none_in[1] = {NULL};
  void *none_out[1] = {NULL};
  int64_t d3[1] = {3};
  expect("mlp_run refused (no value for seq)", mlp_run(in, out, ws) == 1);
  expect("NULL dims refused", mlp_run_dims(NULL, in, out, ws) == 1);
  expect("negative seq refused", mlp_run_dims(neg, in, out, ws) == 1);
  expect("huge seq refused", mlp_run_dims(huge, in, out, ws) == 1);
  expect("NULL workspace refused", mlp_run_dims(d3, in, out, NULL) == 1);
  expect("seq 0 with NULL tensors",
         mlp_workspace_size(d0) <= (int64_t)sizeof ws &&
             mlp_run_dims(d0, none_in, none_out, ws) == 0);

  const kiln_model_desc *d = mlp_describe();
  expect("descriptor",
         d->abi_version == 5 && d->num_dynamic_dims == 1 && d->workspace_size == -1 &&
             d->num_dim_exprs == 0 &&
             d->workspace_size_for == mlp_workspace_size && d->inputs[0].dims[1] == -1 &&
             d->outputs[0].dims[1] == -1 && d->dynamic_dim_names[0][0] == 's');
  return failures ? 1 : 0;
}
