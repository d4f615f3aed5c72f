/* Links two models compiled with --name a (net.onnx) and --name b
 * (addmm.onnx) into one program, runs both and compares their outputs with
 * the NumPy references of make_models.py (expected.h). Prints one line per
 * model and exits 0 when both match. */
#include "a.h"
#include "b.h"
#include "expected.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The workspaces, aligned as the headers ask (sizes may be 0). */
static _Alignas(64) unsigned char ws_a[a_WORKSPACE_SIZE + 1];
static _Alignas(64) unsigned char ws_b[b_WORKSPACE_SIZE + 1];

static int compare(const char *model, const float *got, const float *want,
                   int n) {
  int bad = 0;
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    double err = fabs((double)got[i] - (double)want[i]);
    if (err > worst)
      worst = err;
    if (!(err <= 1e-5 + 1e-4 * fabs((double)want[i])))
      ++bad;
  }
  printf("%s: %d of %d outside tolerance (max abs err %.3g)\n", model, bad, n,
         worst);
  return bad == 0;
}

int main(void) {
  _Static_assert(a_WORKSPACE_ALIGNMENT <= 64, "workspace alignment");
  _Static_assert(b_WORKSPACE_ALIGNMENT <= 64, "workspace alignment");
  _Static_assert(a_INPUT_0_NUM_ELEMENTS == sizeof net_x / sizeof *net_x,
                 "a: input size");
  _Static_assert(a_OUTPUT_0_NUM_ELEMENTS == sizeof net_y / sizeof *net_y,
                 "a: output size");
  _Static_assert(b_NUM_INPUTS == 2 && b_NUM_OUTPUTS == 1, "b: arity");
  _Static_assert(b_OUTPUT_0_NUM_ELEMENTS == sizeof addmm_y / sizeof *addmm_y,
                 "b: output size");

  float ya[a_OUTPUT_0_NUM_ELEMENTS], yb[b_OUTPUT_0_NUM_ELEMENTS];
  for (int i = 0; i < a_OUTPUT_0_NUM_ELEMENTS; ++i) ya[i] = NAN;
  for (int i = 0; i < b_OUTPUT_0_NUM_ELEMENTS; ++i) yb[i] = NAN;

  /* a through the generic entry point, b through the typed wrapper. */
  const void *ins[] = {net_x};
  void *outs[] = {ya};
  int sa = a_run(ins, outs, ws_a);
  int sb = b_run_typed(addmm_a, addmm_b, yb, ws_b);
  printf("a_run: %d, b_run_typed: %d\n", sa, sb);
  if (sa != KILN_STATUS_OK || sb != KILN_STATUS_OK)
    return 1;

  /* The descriptors name their own model. */
  const kiln_model_desc *da = a_describe(), *db = b_describe();
  printf("descriptors: %s %s\n", da->name, db->name);
  if (da->run != a_run || db->run != b_run)
    return 1;

  int ok = compare("a", ya, net_y, a_OUTPUT_0_NUM_ELEMENTS);
  ok &= compare("b", yb, addmm_y, b_OUTPUT_0_NUM_ELEMENTS);
  return ok ? 0 : 1;
}
