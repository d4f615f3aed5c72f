/* Calls the entry points of cache_present.onnx (inputs past [1, P, 4] and
 * x [1, S, 4]; outputs y [1, S, 4] and present = past then x [1, P + S, 4])
 * directly, as a decoder loop does: each step's present is the next step's
 * past. The header's expression macros size present; the entry point
 * refuses a NULL present unless P + S is 0. Prints one line per check;
 * exits 0 when all pass. */
#include "cache_present.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(cache_present_NUM_DYNAMIC_DIMS == 2, "P and S");
_Static_assert(cache_present_NUM_DIM_EXPRS == 1, "P + S");

static const int64_t kPresentDims[] = cache_present_OUTPUT_1_DIMS;
static const int64_t kExpr[] = cache_present_DIM_EXPR_0;
_Static_assert(sizeof kExpr / sizeof kExpr[0] == 1 + cache_present_NUM_DYNAMIC_DIMS,
               "c0, then a coefficient per dynamic dim");

static int failures;

static void expect(const char *what, int ok) {
  printf("%s: %s\n", what, ok ? "ok" : "FAILED");
  failures += !ok;
}

/* present's rows for the dims, from the header's macros. */
static int64_t present_rows(const int64_t *dims) {
  int64_t e = -1 - kPresentDims[1] - cache_present_NUM_DYNAMIC_DIMS;
  if (e != 0)
    return -1;
  int64_t rows = kExpr[0];
  for (int k = 0; k < cache_present_NUM_DYNAMIC_DIMS; ++k)
    rows += kExpr[1 + k] * dims[k];
  return rows;
}

int main(void) {
  /* Three steps of 2, 1 and 3 new tokens, the cache growing from empty. */
  float *cache = NULL;
  int64_t past = 0;
  int ok = 1;
  for (int step = 0; step < 3; ++step) {
    int64_t news = step == 1 ? 1 : step == 0 ? 2 : 3;
    int64_t dims[2] = {past, news};
    int64_t rows = present_rows(dims);
    ok &= rows == past + news;
    float *x = malloc(sizeof(float) * 4 * (size_t)news);
    float *y = malloc(sizeof(float) * 4 * (size_t)news);
    float *present = malloc(sizeof(float) * 4 * (size_t)rows);
    for (int64_t i = 0; i < 4 * news; ++i)
      x[i] = (float)(past * 4 + i);
    int64_t bytes = cache_present_workspace_size(dims);
    void *ws = bytes > 0 ? aligned_alloc(64, (size_t)((bytes + 63) / 64 * 64)) : NULL;
    const void *in[2] = {cache, x};
    void *out[2] = {y, present};
    ok &= bytes >= 0 && cache_present_run_dims(dims, in, out, ws) == 0;
    /* present holds every token so far, in order: value = its index. */
    for (int64_t i = 0; ok && i < 4 * rows; ++i)
      ok &= present[i] == (float)i;
    free(cache);
    free(x);
    free(y);
    free(ws);
    cache = present;
    past = rows;
  }
  free(cache);
  expect("three steps grow the cache to 6 tokens", ok && past == 6);

  const kiln_model_desc *d = cache_present_describe();
  expect("descriptor",
         d->abi_version == 5 && d->num_dim_exprs == 1 && d->outputs[1].dims[1] == -3 &&
             d->dim_exprs[0] == 0 && d->dim_exprs[1] == 1 && d->dim_exprs[2] == 1 &&
             strcmp(d->dim_expr_names[0], "P + S") == 0 && d->outputs[1].num_elements == 4);

  /* present may be NULL only without rows. */
  int64_t none[2] = {0, 0}, some[2] = {2, 0};
  float x0[1], y0[1], past2[8] = {0};
  static char ws[4096] __attribute__((aligned(64)));
  const void *in0[2] = {NULL, x0};
  void *out0[2] = {y0, NULL};
  expect("P + S = 0 with a NULL present",
         cache_present_workspace_size(none) <= (int64_t)sizeof ws &&
             cache_present_run_dims(none, in0, out0, ws) == 0);
  const void *in2[2] = {past2, x0};
  expect("P + S = 2 with a NULL present refused",
         cache_present_workspace_size(some) <= (int64_t)sizeof ws &&
             cache_present_run_dims(some, in2, out0, ws) == 1);
  return failures ? 1 : 0;
}
