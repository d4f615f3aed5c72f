/* Calls m_run (net.onnx compiled with --name m) with bad arguments: each
 * must return KILN_STATUS_INVALID_ARGUMENT (1), never crash or read out of
 * bounds; a good call returns KILN_STATUS_OK (0). Prints one line per call
 * and exits 0 when every status is the expected one. */
#include "m.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void expect(const char *what, int got, int want) {
  printf("%s: %d\n", what, got);
  if (got != want) {
    printf("  expected %d\n", want);
    ++failures;
  }
}

int main(void) {
  _Static_assert(m_WORKSPACE_SIZE > 0, "the model needs a workspace");
  _Static_assert(m_WORKSPACE_ALIGNMENT > 1, "a misaligned pointer exists");
  printf("workspace %d bytes, alignment %d\n", (int)m_WORKSPACE_SIZE,
         (int)m_WORKSPACE_ALIGNMENT);

  static float x[m_INPUT_0_NUM_ELEMENTS], y[m_OUTPUT_0_NUM_ELEMENTS];
  unsigned char *block =
      aligned_alloc(m_WORKSPACE_ALIGNMENT,
                    (m_WORKSPACE_SIZE / m_WORKSPACE_ALIGNMENT + 2) *
                        m_WORKSPACE_ALIGNMENT);
  if (!block)
    return 2;
  memset(x, 0, sizeof x);

  const void *ins[] = {x};
  void *outs[] = {y};
  const void *null_in[] = {NULL};
  void *null_out[] = {NULL};

  expect("null inputs array", m_run(NULL, outs, block), KILN_STATUS_INVALID_ARGUMENT);
  expect("null outputs array", m_run(ins, NULL, block), KILN_STATUS_INVALID_ARGUMENT);
  expect("null input pointer", m_run(null_in, outs, block), KILN_STATUS_INVALID_ARGUMENT);
  expect("null output pointer", m_run(ins, null_out, block), KILN_STATUS_INVALID_ARGUMENT);
  expect("null workspace", m_run(ins, outs, NULL), KILN_STATUS_INVALID_ARGUMENT);
  expect("misaligned workspace", m_run(ins, outs, block + 1), KILN_STATUS_INVALID_ARGUMENT);
  expect("good call", m_run(ins, outs, block), KILN_STATUS_OK);
  expect("typed wrapper", m_run_typed(x, y, block), KILN_STATUS_OK);
  free(block);
  return failures ? 1 : 0;
}
