//===- cuda.c - The CUDA driver loader behind --target=cuda -------*- C -*-===//
//
// Libraries compiled with `kiln compile --target=cuda` call these hooks:
// the driver (libcuda.so.1, or $KILN_CUDA_LIBRARY) is loaded with dlopen at
// first use, never linked, so such a library loads on machines without a
// GPU and its runs then fail with KILN_STATUS_UNSUPPORTED and a message
// (kiln_cuda_error). One context per process (the first device's primary
// context); per compiled model (kiln_cuda_program) the PTX module, its
// kernels and the device copies of its weights, made once; the default
// stream.
//
// Within a run, a failure is sticky: later launches are skipped and
// kiln_cuda_run_end returns the first failure, so generated code needs no
// error paths of its own.
//
//===----------------------------------------------------------------------===//

#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif

#include "kiln/runtime.h"

#if defined(__unix__) || defined(__APPLE__)

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The driver API's types, as the CUDA headers define them (this file must
// build without them).
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

typedef struct driver {
  void *library;
  CUresult (*init)(unsigned);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxSynchronize)(void);
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, CUstream, void **, void **);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*getErrorString)(CUresult, const char **);
  CUcontext context;
  int status; // KILN_STATUS_OK once loaded and initialised
} driver;

/// What the runtime keeps for one compiled model (kiln_cuda_program.state).
typedef struct program_state {
  CUmodule module;
  CUfunction *functions;
  // The weights' device copies, by host address.
  struct weight {
    const void *host;
    CUdeviceptr device;
  } *weights;
  int64_t numWeights, capacity;
  // kiln_cuda_run_host's device buffers: inputs, outputs, workspace.
  CUdeviceptr *buffers;
  int32_t numBuffers;
  int status; // sticky within a run
} program_state;

static driver gDriver;
static char gDriverMessage[256];
static _Thread_local char tMessage[512];

static pthread_once_t gDriverOnce = PTHREAD_ONCE_INIT;
static pthread_mutex_t gLock = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&gLock)
#define UNLOCK() pthread_mutex_unlock(&gLock)

static int fail(int status, const char *fmt, const char *detail) {
  snprintf(tMessage, sizeof tMessage, fmt, detail ? detail : "");
  return status;
}

/// "cuXxx failed: <the driver's description>" for a driver error.
static int driverFailure(const char *call, CUresult result) {
  const char *what = NULL;
  if (gDriver.getErrorString)
    gDriver.getErrorString(result, &what);
  snprintf(tMessage, sizeof tMessage, "CUDA: %s failed: %s (error %d)", call,
           what ? what : "unknown error", result);
  return result == 2 ? KILN_STATUS_OUT_OF_MEMORY : KILN_STATUS_INTERNAL;
}

static void *symbol(const char *name) { return dlsym(gDriver.library, name); }

static void loadDriver(void) {
  const char *path = getenv("KILN_CUDA_LIBRARY");
  if (!path || !*path)
    path = "libcuda.so.1";
  gDriver.status = KILN_STATUS_UNSUPPORTED;
  gDriver.library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!gDriver.library) {
    const char *why = dlerror();
    snprintf(gDriverMessage, sizeof gDriverMessage,
             "no CUDA driver: cannot load %s (%s)", path, why ? why : "not found");
    return;
  }
  *(void **)&gDriver.init = symbol("cuInit");
  *(void **)&gDriver.deviceGetCount = symbol("cuDeviceGetCount");
  *(void **)&gDriver.deviceGet = symbol("cuDeviceGet");
  *(void **)&gDriver.primaryCtxRetain = symbol("cuDevicePrimaryCtxRetain");
  *(void **)&gDriver.ctxSetCurrent = symbol("cuCtxSetCurrent");
  *(void **)&gDriver.ctxSynchronize = symbol("cuCtxSynchronize");
  *(void **)&gDriver.moduleLoadData = symbol("cuModuleLoadData");
  *(void **)&gDriver.moduleGetFunction = symbol("cuModuleGetFunction");
  *(void **)&gDriver.launchKernel = symbol("cuLaunchKernel");
  *(void **)&gDriver.memAlloc = symbol("cuMemAlloc_v2");
  *(void **)&gDriver.memFree = symbol("cuMemFree_v2");
  *(void **)&gDriver.memcpyHtoD = symbol("cuMemcpyHtoD_v2");
  *(void **)&gDriver.memcpyDtoH = symbol("cuMemcpyDtoH_v2");
  *(void **)&gDriver.getErrorString = symbol("cuGetErrorString");
  if (!gDriver.init || !gDriver.deviceGetCount || !gDriver.deviceGet ||
      !gDriver.primaryCtxRetain || !gDriver.ctxSetCurrent || !gDriver.ctxSynchronize ||
      !gDriver.moduleLoadData || !gDriver.moduleGetFunction || !gDriver.launchKernel ||
      !gDriver.memAlloc || !gDriver.memFree || !gDriver.memcpyHtoD || !gDriver.memcpyDtoH) {
    snprintf(gDriverMessage, sizeof gDriverMessage,
             "no CUDA driver: %s lacks the driver API kiln uses (cuInit, cuLaunchKernel, "
             "cuMemAlloc_v2...)", path);
    return;
  }
  CUresult r = gDriver.init(0);
  int count = 0;
  if (r == 0)
    r = gDriver.deviceGetCount(&count);
  if (r != 0 || count < 1) {
    snprintf(gDriverMessage, sizeof gDriverMessage,
             r != 0 ? "no CUDA device: cuInit/cuDeviceGetCount failed (error %d)"
                    : "no CUDA device (the driver sees none)%.0d",
             r);
    return;
  }
  CUdevice device;
  if ((r = gDriver.deviceGet(&device, 0)) != 0 ||
      (r = gDriver.primaryCtxRetain(&gDriver.context, device)) != 0) {
    snprintf(gDriverMessage, sizeof gDriverMessage,
             "CUDA: cannot create a context on device 0 (error %d)", r);
    return;
  }
  gDriver.status = KILN_STATUS_OK;
}

/// Loads the driver once; then makes its context current on this thread.
static int useDriver(void) {
  pthread_once(&gDriverOnce, loadDriver);
  if (gDriver.status != KILN_STATUS_OK)
    return fail(gDriver.status, "%s", gDriverMessage);
  CUresult r = gDriver.ctxSetCurrent(gDriver.context);
  return r == 0 ? KILN_STATUS_OK : driverFailure("cuCtxSetCurrent", r);
}

int kiln_cuda_available(void) {
  int status = useDriver();
  if (status == KILN_STATUS_OK)
    tMessage[0] = '\0';
  return status;
}

const char *kiln_cuda_error(void) { return tMessage; }

/// The program's module and kernels, loaded once (under gLock).
static int loadProgram(kiln_cuda_program *p) {
  if (p->state)
    return KILN_STATUS_OK;
  if (!p->ptx || p->num_kernels < 0 || (p->num_kernels > 0 && !p->kernel_names))
    return fail(KILN_STATUS_INVALID_ARGUMENT, "CUDA: malformed program%s", "");
  program_state *s = calloc(1, sizeof *s);
  if (!s || !(s->functions = calloc((size_t)p->num_kernels + 1, sizeof(CUfunction)))) {
    free(s);
    return fail(KILN_STATUS_OUT_OF_MEMORY, "CUDA: out of host memory%s", "");
  }
  // The cubin when there is one and the driver takes it, else the PTX
  // (which the driver compiles for its GPU).
  CUresult r = p->cubin_size > 0 ? gDriver.moduleLoadData(&s->module, p->cubin) : 1;
  if (r != 0)
    r = gDriver.moduleLoadData(&s->module, p->ptx);
  if (r != 0) {
    free(s->functions);
    free(s);
    return driverFailure("cuModuleLoadData (the model's PTX)", r);
  }
  for (int32_t k = 0; k < p->num_kernels; ++k)
    if ((r = gDriver.moduleGetFunction(&s->functions[k], s->module, p->kernel_names[k])) != 0) {
      free(s->functions);
      free(s);
      return driverFailure("cuModuleGetFunction", r);
    }
  p->state = s;
  return KILN_STATUS_OK;
}

int kiln_cuda_run_begin(kiln_cuda_program *p) {
  if (!p)
    return fail(KILN_STATUS_INVALID_ARGUMENT, "CUDA: no program%s", "");
  int status = useDriver();
  if (status != KILN_STATUS_OK)
    return status;
  LOCK();
  status = loadProgram(p);
  UNLOCK();
  if (status != KILN_STATUS_OK)
    return status;
  ((program_state *)p->state)->status = KILN_STATUS_OK;
  return KILN_STATUS_OK;
}

int kiln_cuda_run_end(kiln_cuda_program *p) {
  program_state *s = p ? (program_state *)p->state : NULL;
  if (!s)
    return fail(KILN_STATUS_INVALID_ARGUMENT, "CUDA: run_end without run_begin%s", "");
  if (s->status != KILN_STATUS_OK)
    return s->status;
  CUresult r = gDriver.ctxSynchronize();
  if (r != 0)
    s->status = driverFailure("cuCtxSynchronize (a kernel failed)", r);
  return s->status;
}

uintptr_t kiln_cuda_weights(kiln_cuda_program *p, const void *host, int64_t bytes) {
  program_state *s = p ? (program_state *)p->state : NULL;
  if (!s || s->status != KILN_STATUS_OK)
    return 0;
  LOCK();
  for (int64_t i = 0; i < s->numWeights; ++i)
    if (s->weights[i].host == host) {
      CUdeviceptr d = s->weights[i].device;
      UNLOCK();
      return (uintptr_t)d;
    }
  if (s->numWeights == s->capacity) {
    int64_t capacity = s->capacity ? 2 * s->capacity : 64;
    struct weight *grown = realloc(s->weights, (size_t)capacity * sizeof *grown);
    if (!grown) {
      UNLOCK();
      s->status = fail(KILN_STATUS_OUT_OF_MEMORY, "CUDA: out of host memory%s", "");
      return 0;
    }
    s->weights = grown;
    s->capacity = capacity;
  }
  CUdeviceptr d = 0;
  CUresult r = gDriver.memAlloc(&d, bytes > 0 ? (size_t)bytes : 1);
  if (r == 0 && bytes > 0)
    r = gDriver.memcpyHtoD(d, host, (size_t)bytes);
  if (r != 0) {
    if (d)
      gDriver.memFree(d);
    UNLOCK();
    s->status = driverFailure("uploading the weights (cuMemAlloc/cuMemcpyHtoD)", r);
    return 0;
  }
  s->weights[s->numWeights].host = host;
  s->weights[s->numWeights].device = d;
  ++s->numWeights;
  UNLOCK();
  return (uintptr_t)d;
}

void kiln_cuda_launch(kiln_cuda_program *p, int32_t kernel, int64_t gx, int64_t gy, int64_t gz,
                      int64_t bx, int64_t by, int64_t bz, const uint64_t *params,
                      int32_t num_params) {
  program_state *s = p ? (program_state *)p->state : NULL;
  if (!s || s->status != KILN_STATUS_OK)
    return;
  if (kernel < 0 || kernel >= p->num_kernels || num_params < 0 || gx < 0 || gy < 0 ||
      gz < 0 || bx < 1 || by < 1 || bz < 1 || gx > 0x7fffffff || gy > 65535 || gz > 65535 ||
      bx * by * bz > 1024) {
    s->status = fail(KILN_STATUS_INTERNAL, "CUDA: a launch out of the device's limits%s", "");
    return;
  }
  if (gx == 0 || gy == 0 || gz == 0)
    return; // Nothing to run (an empty tensor).
  // cuLaunchKernel takes a pointer to each parameter; each is 8 bytes
  // here, a narrower one in its low bytes (little endian).
  void *small[64];
  void **args = num_params <= 64 ? small : malloc((size_t)num_params * sizeof(void *));
  if (!args) {
    s->status = fail(KILN_STATUS_OUT_OF_MEMORY, "CUDA: out of host memory%s", "");
    return;
  }
  for (int32_t i = 0; i < num_params; ++i)
    args[i] = (void *)(uintptr_t)&params[i];
  CUresult r = gDriver.launchKernel(s->functions[kernel], (unsigned)gx, (unsigned)gy,
                                    (unsigned)gz, (unsigned)bx, (unsigned)by, (unsigned)bz, 0,
                                    NULL, args, NULL);
  if (args != small)
    free(args);
  if (r != 0) {
    snprintf(tMessage, sizeof tMessage, "CUDA: launching kernel '%s' failed (error %d)",
             p->kernel_names[kernel], r);
    s->status = KILN_STATUS_INTERNAL;
  }
}

int kiln_cuda_run_host(kiln_cuda_program *p, const kiln_model_desc *model,
                       int (*run_device)(const void *const *, void *const *, void *),
                       const void *const *inputs, void *const *outputs) {
  if (!p || !model || !run_device || (model->num_inputs > 0 && !inputs) ||
      (model->num_outputs > 0 && !outputs))
    return fail(KILN_STATUS_INVALID_ARGUMENT, "NULL argument%s", "");
  int status = kiln_cuda_run_begin(p);
  if (status != KILN_STATUS_OK)
    return status;
  program_state *s = (program_state *)p->state;
  int32_t n = model->num_inputs + model->num_outputs + 1;
  LOCK();
  if (!s->buffers) {
    // One device buffer per input and output and the workspace, made at
    // the first run and kept.
    s->buffers = calloc((size_t)n, sizeof(CUdeviceptr));
    for (int32_t i = 0; s->buffers && i < n; ++i) {
      int64_t bytes = i < model->num_inputs ? model->inputs[i].num_bytes
                      : i < n - 1 ? model->outputs[i - model->num_inputs].num_bytes
                                  : model->workspace_size;
      CUresult r = gDriver.memAlloc(&s->buffers[i], bytes > 0 ? (size_t)bytes : 1);
      if (r != 0) {
        for (int32_t j = 0; j < i; ++j)
          gDriver.memFree(s->buffers[j]);
        free(s->buffers);
        s->buffers = NULL;
        UNLOCK();
        return driverFailure("cuMemAlloc (inputs, outputs, workspace)", r);
      }
    }
    if (!s->buffers) {
      UNLOCK();
      return fail(KILN_STATUS_OUT_OF_MEMORY, "CUDA: out of host memory%s", "");
    }
    s->numBuffers = n;
  }
  UNLOCK();
  void *devices[2 * 64 + 1];
  if (n > (int32_t)(sizeof devices / sizeof devices[0]))
    return fail(KILN_STATUS_UNSUPPORTED, "CUDA: more than 128 inputs and outputs%s", "");
  for (int32_t i = 0; i < n; ++i)
    devices[i] = (void *)(uintptr_t)s->buffers[i];
  for (int32_t i = 0; i < model->num_inputs; ++i) {
    if (!inputs[i])
      return fail(KILN_STATUS_INVALID_ARGUMENT, "input pointer is NULL%s", "");
    CUresult r = gDriver.memcpyHtoD(s->buffers[i], inputs[i], (size_t)model->inputs[i].num_bytes);
    if (r != 0)
      return driverFailure("cuMemcpyHtoD (an input)", r);
  }
  status = run_device((const void *const *)devices, devices + model->num_inputs, devices[n - 1]);
  if (status != KILN_STATUS_OK)
    return status;
  for (int32_t i = 0; i < model->num_outputs; ++i) {
    if (!outputs[i])
      return fail(KILN_STATUS_INVALID_ARGUMENT, "output pointer is NULL%s", "");
    CUresult r = gDriver.memcpyDtoH(outputs[i], s->buffers[model->num_inputs + i],
                                    (size_t)model->outputs[i].num_bytes);
    if (r != 0)
      return driverFailure("cuMemcpyDtoH (an output)", r);
  }
  return KILN_STATUS_OK;
}

#else /* no hosted C library (firmware): no GPU */

int kiln_cuda_available(void) { return KILN_STATUS_UNSUPPORTED; }
const char *kiln_cuda_error(void) { return "no CUDA driver: a runtime without dlopen"; }
int kiln_cuda_run_begin(kiln_cuda_program *p) {
  (void)p;
  return KILN_STATUS_UNSUPPORTED;
}
int kiln_cuda_run_end(kiln_cuda_program *p) {
  (void)p;
  return KILN_STATUS_UNSUPPORTED;
}
uintptr_t kiln_cuda_weights(kiln_cuda_program *p, const void *host, int64_t bytes) {
  (void)p, (void)host, (void)bytes;
  return 0;
}
void kiln_cuda_launch(kiln_cuda_program *p, int32_t kernel, int64_t gx, int64_t gy, int64_t gz,
                      int64_t bx, int64_t by, int64_t bz, const uint64_t *params,
                      int32_t num_params) {
  (void)p, (void)kernel, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz;
  (void)params, (void)num_params;
}
int kiln_cuda_run_host(kiln_cuda_program *p, const kiln_model_desc *model,
                       int (*run_device)(const void *const *, void *const *, void *),
                       const void *const *inputs, void *const *outputs) {
  (void)p, (void)model, (void)run_device, (void)inputs, (void)outputs;
  return KILN_STATUS_UNSUPPORTED;
}

#endif
