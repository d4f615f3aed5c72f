/* Runs a --target=cuda library (inputs of zeros) and prints each run's
 * status and, on failure, the library's kiln_cuda_error():
 * test/runtime/cuda.test.
 *
 *   cuda_run LIBRARY.so NAME host     NAME_run twice, then NAME_run_dims
 *   cuda_run LIBRARY.so NAME device   on buffers of the driver's
 *       ($KILN_CUDA_LIBRARY's cuMemAlloc_v2): NAME_run_device_async on
 *       stream 0x77 twice, NAME_run_device, then NAME_run_device_async on
 *       another workspace and the default stream
 *   cuda_run LIBRARY.so NAME threads  NAME_run 8 times on each of 4 threads
 *       at once
 *   cuda_run LIBRARY.so NAME dims     a model with one dynamic dim and no dim
 *       expressions: NAME_run_dims at 3, 3, 7, 2 and 0 (host buffers sized
 *       for each), at -1 and with NULL dims; NAME_run; then
 *       NAME_run_dims_device at 5 on buffers of the driver's */
#include "kiln/runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*run_fn)(const void *const *, void *const *, void *);
typedef int (*run_async_fn)(const void *const *, void *const *, void *, void *);
typedef int (*run_dims_fn)(const int64_t *, const void *const *, void *const *, void *);

static const kiln_model_desc *desc;
static const char *(*error)(void);

static void report(const char *what, int status) {
  printf("%s: status %d%s%s\n", what, status, status ? ": " : "", status ? error() : "");
}

/// The bytes of tensor \p t when the model's one dynamic dim is \p value.
static size_t bytesAt(const kiln_tensor_desc *t, int64_t value) {
  size_t bytes = (size_t)(t->num_bytes / (t->num_elements ? t->num_elements : 1));
  for (int32_t k = 0; k < t->rank; ++k)
    bytes *= (size_t)(t->dims[k] < 0 ? value : t->dims[k]);
  return bytes;
}

typedef int (*mem_alloc_fn)(unsigned long long *, size_t);

/// The driver's cuMemAlloc ($KILN_CUDA_LIBRARY's), for buffers of device
/// memory; NULL without one.
static mem_alloc_fn driverMemAlloc(void) {
  const char *driverPath = getenv("KILN_CUDA_LIBRARY");
  void *driver = driverPath ? dlopen(driverPath, RTLD_NOW | RTLD_LOCAL) : NULL;
  mem_alloc_fn memAlloc = NULL;
  if (driver)
    *(void **)&memAlloc = dlsym(driver, "cuMemAlloc_v2");
  return memAlloc;
}

static void *runMany(void *failures) {
  const void *inputs[16];
  void *outputs[16];
  for (int i = 0; i < desc->num_inputs; ++i)
    inputs[i] = calloc(1, (size_t)desc->inputs[i].num_bytes);
  for (int i = 0; i < desc->num_outputs; ++i)
    outputs[i] = calloc(1, (size_t)desc->outputs[i].num_bytes);
  for (int run = 0; run < 8; ++run)
    *(int *)failures += desc->run(inputs, outputs, NULL) != KILN_STATUS_OK;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  char symbol[256];
  snprintf(symbol, sizeof symbol, "%s_kiln_desc", argv[2]);
  desc = dlsym(lib, symbol);
  *(void **)&error = dlsym(lib, "kiln_cuda_error");
  if (!desc || !error || desc->num_inputs > 16 || desc->num_outputs > 16)
    return 2;
  const void *inputs[16];
  void *outputs[16];
  if (strcmp(argv[3], "host") == 0) {
    for (int i = 0; i < desc->num_inputs; ++i)
      inputs[i] = calloc(1, (size_t)desc->inputs[i].num_bytes);
    for (int i = 0; i < desc->num_outputs; ++i)
      outputs[i] = calloc(1, (size_t)desc->outputs[i].num_bytes);
    for (int run = 0; run < 2; ++run) {
      char what[32];
      snprintf(what, sizeof what, "run %d", run);
      report(what, desc->run(inputs, outputs, NULL));
    }
    report("run_dims", desc->run_dims(NULL, inputs, outputs, NULL));
    return 0;
  }
  if (strcmp(argv[3], "device") == 0) {
    mem_alloc_fn memAlloc = driverMemAlloc();
    snprintf(symbol, sizeof symbol, "%s_run_device", argv[2]);
    run_fn runDevice;
    *(void **)&runDevice = dlsym(lib, symbol);
    snprintf(symbol, sizeof symbol, "%s_run_device_async", argv[2]);
    run_async_fn runAsync;
    *(void **)&runAsync = dlsym(lib, symbol);
    if (!memAlloc || !runDevice || !runAsync)
      return 2;
    unsigned long long buffer = 0;
    for (int i = 0; i < desc->num_inputs; ++i) {
      memAlloc(&buffer, (size_t)desc->inputs[i].num_bytes);
      inputs[i] = (void *)(uintptr_t)buffer;
    }
    for (int i = 0; i < desc->num_outputs; ++i) {
      memAlloc(&buffer, (size_t)desc->outputs[i].num_bytes);
      outputs[i] = (void *)(uintptr_t)buffer;
    }
    memAlloc(&buffer, (size_t)desc->workspace_size);
    void *workspace = (void *)(uintptr_t)buffer;
    report("async 0", runAsync(inputs, outputs, workspace, (void *)0x77));
    report("async 1", runAsync(inputs, outputs, workspace, (void *)0x77));
    report("device", runDevice(inputs, outputs, workspace));
    memAlloc(&buffer, (size_t)desc->workspace_size);
    report("other workspace", runAsync(inputs, outputs, (void *)(uintptr_t)buffer, NULL));
    return 0;
  }
  if (strcmp(argv[3], "dims") == 0) {
    if (desc->num_dynamic_dims != 1 || desc->num_dim_exprs != 0)
      return 2;
    int64_t values[] = {3, 3, 7, 2, 0};
    for (int v = 0; v < 5; ++v) {
      for (int i = 0; i < desc->num_inputs; ++i)
        inputs[i] = calloc(1, bytesAt(&desc->inputs[i], values[v]) + 1);
      for (int i = 0; i < desc->num_outputs; ++i)
        outputs[i] = calloc(1, bytesAt(&desc->outputs[i], values[v]) + 1);
      char what[32];
      snprintf(what, sizeof what, "run_dims %lld", (long long)values[v]);
      report(what, desc->run_dims(&values[v], inputs, outputs, NULL));
    }
    int64_t negative = -1;
    report("run_dims -1", desc->run_dims(&negative, inputs, outputs, NULL));
    report("run", desc->run(inputs, outputs, NULL));
    report("run_dims NULL", desc->run_dims(NULL, inputs, outputs, NULL));
    mem_alloc_fn memAlloc = driverMemAlloc();
    snprintf(symbol, sizeof symbol, "%s_run_dims_device", argv[2]);
    run_dims_fn runDevice;
    *(void **)&runDevice = dlsym(lib, symbol);
    if (!memAlloc || !runDevice)
      return 2;
    int64_t five = 5;
    unsigned long long buffer = 0;
    for (int i = 0; i < desc->num_inputs; ++i) {
      memAlloc(&buffer, bytesAt(&desc->inputs[i], five));
      inputs[i] = (void *)(uintptr_t)buffer;
    }
    for (int i = 0; i < desc->num_outputs; ++i) {
      memAlloc(&buffer, bytesAt(&desc->outputs[i], five));
      outputs[i] = (void *)(uintptr_t)buffer;
    }
    memAlloc(&buffer, (size_t)desc->workspace_size_for(&five));
    report("run_dims_device 5", runDevice(&five, inputs, outputs, (void *)(uintptr_t)buffer));
    return 0;
  }
  if (strcmp(argv[3], "threads") == 0) {
    pthread_t threads[4];
    int failures[4] = {0};
    for (int t = 0; t < 4; ++t)
      pthread_create(&threads[t], NULL, runMany, &failures[t]);
    int total = 0;
    for (int t = 0; t < 4; ++t) {
      pthread_join(threads[t], NULL);
      total += failures[t];
    }
    printf("threads: %d of 32 runs failed\n", total);
    return 0;
  }
  return 2;
}
