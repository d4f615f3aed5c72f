/* Runs a --target=cuda library once through its descriptor's NAME_run
 * (host pointers; inputs of zeros), twice, and prints the status and, on
 * failure, the library's kiln_cuda_error(): test/runtime/cuda.test.
 *
 *   cuda_run LIBRARY.so NAME */
#include "kiln/runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  char symbol[256];
  snprintf(symbol, sizeof symbol, "%s_kiln_desc", argv[2]);
  const kiln_model_desc *desc = dlsym(lib, symbol);
  const char *(*error)(void) = (const char *(*)(void))dlsym(lib, "kiln_cuda_error");
  if (!desc || !error)
    return 2;
  const void *inputs[16];
  void *outputs[16];
  for (int i = 0; i < desc->num_inputs; ++i)
    inputs[i] = calloc(1, (size_t)desc->inputs[i].num_bytes);
  for (int i = 0; i < desc->num_outputs; ++i)
    outputs[i] = calloc(1, (size_t)desc->outputs[i].num_bytes);
  for (int run = 0; run < 2; ++run) {
    int status = desc->run(inputs, outputs, NULL);
    printf("run %d: status %d%s%s\n", run, status, status ? ": " : "", status ? error() : "");
  }
  return 0;
}
