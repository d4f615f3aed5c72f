// strings.test: the C ABI of string tensors, through the generated headers
// of the `normalize` and `casts` models (Inputs/make_string_models.py)
// linked from their static libraries (which carry kiln_runtime).
#include "casts.h"
#include "normalize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char *what) {
  printf("%s: %s\n", what, ok ? "ok" : "FAILED");
  failures += !ok;
}

static void *workspace(size_t size, size_t alignment) {
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  return aligned_alloc(alignment, rounded ? rounded : alignment);
}

int main(void) {
  // StringNormalizer: stopwords removed ignoring case, the rest lower-cased.
  const char *x[6] = {"The", "\xc3\x84PFEL", "\xc3\xa4rger", "Stra\xc3\x9f" "e", NULL, "x1"};
  char *y[4] = {0};
  void *ws = workspace(normalize_WORKSPACE_SIZE, normalize_WORKSPACE_ALIGNMENT);
  int status = normalize_run_typed(x, y, ws);
  check(status == 0, "normalize runs");
  // NULL reads as "" (kept: not a stopword).
  const char *want[4] = {"\xc3\xa4pfel", "stra\xc3\x9f" "e", "", "x1"};
  int same = 1;
  for (int i = 0; i < 4; ++i)
    same &= y[i] && strcmp(y[i], want[i]) == 0;
  check(same, "normalize gives the lower-cased words but the stopwords");
  // The outputs are the caller's own copies: writable, freed with free().
  int distinct = y[0] != x[1] && y[3] != x[5];
  for (int i = 0; i < 4; ++i)
    free(y[i]);
  check(distinct, "output strings are the caller's copies");
  // A second run on the same workspace.
  status = normalize_run_typed(x, y, ws);
  check(status == 0 && y[3] && strcmp(y[3], "x1") == 0, "normalize runs again");
  for (int i = 0; i < 4; ++i)
    free(y[i]);
  free(ws);

  // Casts between numbers and text.
  float f[8] = {0.5f, -1.25f, 3.1415927f, 100.0f, 1e-5f, 0.1f, NAN, -INFINITY};
  const char *t[6] = {"1.5", "-2", "NaN", "1e3", "INF", "-inf"};
  const char *i[3] = {"42", "-7", "+0012"};
  char *f_text[8] = {0}, *i_text[3] = {0};
  float t_float[6];
  int64_t i_int[3];
  ws = workspace(casts_WORKSPACE_SIZE, casts_WORKSPACE_ALIGNMENT);
  status = casts_run_typed(f, t, i, f_text, t_float, i_int, i_text, ws);
  check(status == 0, "casts run");
  const char *wantText[8] = {"0.5", "-1.25", "3.1415927", "100.0",
                             "1e-05", "0.1", "NaN", "-INF"};
  same = 1;
  for (int k = 0; k < 8; ++k)
    same &= f_text[k] && strcmp(f_text[k], wantText[k]) == 0;
  check(same, "floats become their shortest text");
  check(t_float[0] == 1.5f && t_float[1] == -2.0f && isnan(t_float[2]) &&
            t_float[3] == 1000.0f && isinf(t_float[4]) && t_float[4] > 0 &&
            isinf(t_float[5]) && t_float[5] < 0,
        "text becomes floats");
  check(i_int[0] == 42 && i_int[1] == -7 && i_int[2] == 12 && i_text[2] &&
            strcmp(i_text[2], "12") == 0,
        "text becomes integers and back");
  for (int k = 0; k < 8; ++k)
    free(f_text[k]);
  for (int k = 0; k < 3; ++k)
    free(i_text[k]);
  free(ws);
  // The descriptor says string and a pointer per element.
  const kiln_model_desc *d = casts_describe();
  check(d->inputs[1].dtype == 8 && d->inputs[1].num_bytes == 6 * (int64_t)sizeof(char *),
        "descriptor: string inputs are pointer arrays");
  return failures ? 1 : 0;
}
