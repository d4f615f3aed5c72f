//===- cuda.c - The CUDA driver loader behind --target=cuda -------*- C -*-===//
//
// Libraries compiled with `kiln compile --target=cuda` call these hooks:
// the driver (libcuda.so.1, or $KILN_CUDA_LIBRARY) is loaded with dlopen at
// first use, never linked, so such a library loads on machines without a
// GPU and its runs then fail with KILN_STATUS_UNSUPPORTED and a message
// (kiln_cuda_error). One context per process (the first device's primary
// context); per compiled model (kiln_cuda_program) the PTX module, its
// kernels and the device copies of its weights, made once.
//
// A run (run_begin .. run_end) belongs to its thread: its stream (the
// host's, or the default one) and its status. A failure is sticky: later
// launches are skipped and kiln_cuda_run_end returns the first failure, so
// generated code needs no error paths of its own. Threads may run models,
// the same one too, at the same time.
//
// Launches are recorded during the run and go to the GPU at run_end as a
// CUDA graph: captured once, replayed while later runs make the same
// launches with the same parameters (the same buffers and dims; what
// kiln_cuda_run_host passes is always the same), captured again when they
// differ. One cuGraphLaunch instead of a cuLaunchKernel per kernel (the
// host's cost of a run of a small model). Without the graph API, with
// KILN_CUDA_GRAPHS=0, or once a graph call fails, launches go one by one.
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
typedef void *CUgraph;
typedef void *CUgraphExec;
typedef unsigned long long CUdeviceptr;

enum {
  kStreamNonBlocking = 1,  // CU_STREAM_NON_BLOCKING
  kCaptureModeRelaxed = 2, // CU_STREAM_CAPTURE_MODE_RELAXED
};

typedef struct driver {
  void *library;
  CUresult (*init)(unsigned);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxSynchronize)(void);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, CUstream, void **, void **);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*getErrorString)(CUresult, const char **);
  // CUDA graphs (optional: without them every run launches its kernels one
  // by one).
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*streamBeginCapture)(CUstream, int);
  CUresult (*streamEndCapture)(CUstream, CUgraph *);
  CUresult (*graphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*graphLaunch)(CUgraphExec, CUstream);
  CUresult (*graphExecDestroy)(CUgraphExec);
  CUresult (*graphDestroy)(CUgraph);
  int graphs; // the graph API is there and KILN_CUDA_GRAPHS is not 0
  CUcontext context;
  int status; // KILN_STATUS_OK once loaded and initialised
} driver;

/// One kernel launch as a run made it: the kernel, the grid, the block and
/// where its parameters start in the list's parameters.
typedef struct launch_record {
  int32_t kernel, numParams;
  uint32_t grid[3], block[3];
  int64_t firstParam;
} launch_record;

/// A run's launches, in order.
typedef struct launch_list {
  launch_record *launches;
  int64_t numLaunches, launchCapacity;
  uint64_t *params;
  int64_t numParams, paramCapacity;
} launch_list;

/// What the runtime keeps for one compiled model (kiln_cuda_program.state).
typedef struct program_state {
  CUmodule module;
  CUfunction *functions;
  // The weights' device copies, by host address (under gLock).
  struct weight {
    const void *host;
    CUdeviceptr device;
  } *weights;
  int64_t numWeights, capacity;
  // kiln_cuda_run_host's device buffers: inputs, outputs, workspace, each
  // with its size (grown when a run's dims need more); one
  // kiln_cuda_run_host at a time (hostLock).
  pthread_mutex_t hostLock;
  CUdeviceptr *buffers;
  int64_t *bufferBytes;
  int32_t numBuffers;
  // The CUDA graph of the latest run's launches (under graphLock): replayed
  // while runs make the same launches with the same parameters (the same
  // buffers, the same dims), made again when they change.
  pthread_mutex_t graphLock;
  launch_list graphLaunches;
  CUgraphExec graph;
  CUstream captureStream;
  int graphsOff; // a graph call failed: launches one by one from then on
} program_state;

/// The run in progress on this thread (between run_begin and run_end):
/// launches and weights take its stream and its sticky status, so that
/// threads may run models, the same one too, at the same time.
typedef struct run_state {
  kiln_cuda_program *program;
  CUstream stream;
  int status;
  int record;           // launches go to `launches`, for a graph, until run_end
  launch_list launches; // kept between runs (freed when the thread ends)
} run_state;

static driver gDriver;
static char gDriverMessage[256];
static _Thread_local char tMessage[512];
static _Thread_local run_state tRun;

static pthread_once_t gDriverOnce = PTHREAD_ONCE_INIT;
static pthread_mutex_t gLock = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&gLock)
#define UNLOCK() pthread_mutex_unlock(&gLock)

// Frees a thread's launch list when the thread ends.
static pthread_key_t gRunKey;
static pthread_once_t gRunKeyOnce = PTHREAD_ONCE_INIT;

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

static void freeLaunches(launch_list *l) {
  free(l->launches);
  free(l->params);
  memset(l, 0, sizeof *l);
}

static void freeRunState(void *run) { freeLaunches(&((run_state *)run)->launches); }
static void makeRunKey(void) { pthread_key_create(&gRunKey, freeRunState); }

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
  *(void **)&gDriver.streamSynchronize = symbol("cuStreamSynchronize");
  *(void **)&gDriver.moduleLoadData = symbol("cuModuleLoadData");
  *(void **)&gDriver.moduleGetFunction = symbol("cuModuleGetFunction");
  *(void **)&gDriver.launchKernel = symbol("cuLaunchKernel");
  *(void **)&gDriver.memAlloc = symbol("cuMemAlloc_v2");
  *(void **)&gDriver.memFree = symbol("cuMemFree_v2");
  *(void **)&gDriver.memcpyHtoD = symbol("cuMemcpyHtoD_v2");
  *(void **)&gDriver.memcpyDtoH = symbol("cuMemcpyDtoH_v2");
  *(void **)&gDriver.getErrorString = symbol("cuGetErrorString");
  *(void **)&gDriver.streamCreate = symbol("cuStreamCreate");
  *(void **)&gDriver.streamBeginCapture = symbol("cuStreamBeginCapture_v2");
  *(void **)&gDriver.streamEndCapture = symbol("cuStreamEndCapture");
  *(void **)&gDriver.graphInstantiate = symbol("cuGraphInstantiateWithFlags");
  *(void **)&gDriver.graphLaunch = symbol("cuGraphLaunch");
  *(void **)&gDriver.graphExecDestroy = symbol("cuGraphExecDestroy");
  *(void **)&gDriver.graphDestroy = symbol("cuGraphDestroy");
  if (!gDriver.init || !gDriver.deviceGetCount || !gDriver.deviceGet ||
      !gDriver.primaryCtxRetain || !gDriver.ctxSetCurrent || !gDriver.ctxSynchronize ||
      !gDriver.streamSynchronize || !gDriver.moduleLoadData || !gDriver.moduleGetFunction ||
      !gDriver.launchKernel || !gDriver.memAlloc || !gDriver.memFree || !gDriver.memcpyHtoD ||
      !gDriver.memcpyDtoH) {
    snprintf(gDriverMessage, sizeof gDriverMessage,
             "no CUDA driver: %s lacks the driver API kiln uses (cuInit, cuLaunchKernel, "
             "cuMemAlloc_v2...)", path);
    return;
  }
  const char *graphs = getenv("KILN_CUDA_GRAPHS");
  gDriver.graphs = gDriver.streamCreate && gDriver.streamBeginCapture &&
                   gDriver.streamEndCapture && gDriver.graphInstantiate &&
                   gDriver.graphLaunch && gDriver.graphExecDestroy && gDriver.graphDestroy &&
                   !(graphs && strcmp(graphs, "0") == 0);
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
  pthread_mutex_init(&s->hostLock, NULL);
  pthread_mutex_init(&s->graphLock, NULL);
  s->graphsOff = !gDriver.graphs;
  p->state = s;
  return KILN_STATUS_OK;
}

int kiln_cuda_run_begin(kiln_cuda_program *p, void *stream) {
  if (!p)
    return fail(KILN_STATUS_INVALID_ARGUMENT, "CUDA: no program%s", "");
  if (tRun.program)
    return fail(KILN_STATUS_INVALID_ARGUMENT,
                "CUDA: a run started inside another run on the same thread%s", "");
  int status = useDriver();
  if (status != KILN_STATUS_OK)
    return status;
  LOCK();
  status = loadProgram(p);
  UNLOCK();
  if (status != KILN_STATUS_OK)
    return status;
  pthread_once(&gRunKeyOnce, makeRunKey);
  pthread_setspecific(gRunKey, &tRun);
  tRun.program = p;
  tRun.stream = (CUstream)stream;
  tRun.status = KILN_STATUS_OK;
  tRun.record = !((program_state *)p->state)->graphsOff;
  tRun.launches.numLaunches = 0;
  tRun.launches.numParams = 0;
  return KILN_STATUS_OK;
}

/// Appends a launch to `l`; 0 when out of memory.
static int recordLaunch(launch_list *l, int32_t kernel, const unsigned dims[6],
                        const uint64_t *params, int32_t numParams) {
  if (l->numLaunches == l->launchCapacity) {
    int64_t capacity = l->launchCapacity ? 2 * l->launchCapacity : 256;
    launch_record *grown = realloc(l->launches, (size_t)capacity * sizeof *grown);
    if (!grown)
      return 0;
    l->launches = grown;
    l->launchCapacity = capacity;
  }
  if (l->numParams + numParams > l->paramCapacity) {
    int64_t capacity = l->paramCapacity ? 2 * l->paramCapacity : 4096;
    while (capacity < l->numParams + numParams)
      capacity *= 2;
    uint64_t *grown = realloc(l->params, (size_t)capacity * sizeof *grown);
    if (!grown)
      return 0;
    l->params = grown;
    l->paramCapacity = capacity;
  }
  launch_record *r = &l->launches[l->numLaunches++];
  memset(r, 0, sizeof *r); // No stray padding: lists are compared with memcmp.
  r->kernel = kernel;
  r->numParams = numParams;
  memcpy(r->grid, dims, 3 * sizeof(unsigned));
  memcpy(r->block, dims + 3, 3 * sizeof(unsigned));
  r->firstParam = l->numParams;
  if (numParams > 0)
    memcpy(l->params + l->numParams, params, (size_t)numParams * sizeof *params);
  l->numParams += numParams;
  return 1;
}

static int sameLaunches(const launch_list *x, const launch_list *y) {
  return x->numLaunches == y->numLaunches && x->numParams == y->numParams &&
         (x->numLaunches == 0 ||
          memcmp(x->launches, y->launches, (size_t)x->numLaunches * sizeof *x->launches) == 0) &&
         (x->numParams == 0 ||
          memcmp(x->params, y->params, (size_t)x->numParams * sizeof *x->params) == 0);
}

/// cuLaunchKernel of kernel `kernel` on `stream`; a driver error code.
static CUresult launchOn(kiln_cuda_program *p, CUstream stream, int32_t kernel,
                         const unsigned grid[3], const unsigned block[3], const uint64_t *params,
                         int32_t numParams) {
  program_state *s = (program_state *)p->state;
  // cuLaunchKernel takes a pointer to each parameter; each is 8 bytes
  // here, a narrower one in its low bytes (little endian).
  void *small[64];
  void **args = numParams <= 64 ? small : malloc((size_t)numParams * sizeof(void *));
  if (!args)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  for (int32_t i = 0; i < numParams; ++i)
    args[i] = (void *)(uintptr_t)&params[i];
  CUresult r = gDriver.launchKernel(s->functions[kernel], grid[0], grid[1], grid[2], block[0],
                                    block[1], block[2], 0, stream, args, NULL);
  if (args != small)
    free(args);
  return r;
}

static void launchFailed(kiln_cuda_program *p, int32_t kernel, CUresult r) {
  snprintf(tMessage, sizeof tMessage, "CUDA: launching kernel '%s' failed (error %d)",
           p->kernel_names[kernel], r);
  tRun.status = KILN_STATUS_INTERNAL;
}

/// Captures `l`'s launches in a graph on the program's capture stream
/// (under graphLock); 0 when a graph call fails.
static int captureGraph(kiln_cuda_program *p, program_state *s, const launch_list *l) {
  if (s->graph) {
    gDriver.graphExecDestroy(s->graph); // An in-flight one finishes first.
    s->graph = NULL;
  }
  if (!s->captureStream && gDriver.streamCreate(&s->captureStream, kStreamNonBlocking) != 0) {
    s->captureStream = NULL;
    return 0;
  }
  if (gDriver.streamBeginCapture(s->captureStream, kCaptureModeRelaxed) != 0)
    return 0;
  int launched = 1;
  for (int64_t i = 0; i < l->numLaunches && launched; ++i) {
    const launch_record *r = &l->launches[i];
    launched = launchOn(p, s->captureStream, r->kernel, r->grid, r->block,
                        l->params + r->firstParam, r->numParams) == 0;
  }
  CUgraph graph = NULL;
  CUresult ended = gDriver.streamEndCapture(s->captureStream, &graph);
  if (!launched || ended != 0 || !graph) {
    if (graph)
      gDriver.graphDestroy(graph);
    return 0;
  }
  CUgraphExec exec = NULL;
  CUresult r = gDriver.graphInstantiate(&exec, graph, 0);
  gDriver.graphDestroy(graph);
  if (r != 0 || !exec)
    return 0;
  // Keep a copy of the launches the graph holds.
  launch_list *kept = &s->graphLaunches;
  kept->numLaunches = kept->numParams = 0;
  for (int64_t i = 0; i < l->numLaunches; ++i) {
    const launch_record *rec = &l->launches[i];
    unsigned dims[6] = {rec->grid[0], rec->grid[1], rec->grid[2],
                        rec->block[0], rec->block[1], rec->block[2]};
    if (!recordLaunch(kept, rec->kernel, dims, l->params + rec->firstParam, rec->numParams)) {
      gDriver.graphExecDestroy(exec);
      kept->numLaunches = kept->numParams = 0;
      return 0;
    }
  }
  s->graph = exec;
  return 1;
}

/// The launches this run recorded, one by one on its stream.
static void launchRecorded(kiln_cuda_program *p) {
  const launch_list *l = &tRun.launches;
  for (int64_t i = 0; i < l->numLaunches && tRun.status == KILN_STATUS_OK; ++i) {
    const launch_record *r = &l->launches[i];
    CUresult result = launchOn(p, tRun.stream, r->kernel, r->grid, r->block,
                               l->params + r->firstParam, r->numParams);
    if (result != 0)
      launchFailed(p, r->kernel, result);
  }
}

/// The launches this run recorded, on its stream: as the program's graph
/// when it holds the same launches (captured again when not), else one by
/// one (no graph API, or a graph call failed: then never again).
static void flushLaunches(kiln_cuda_program *p, program_state *s) {
  const launch_list *l = &tRun.launches;
  if (l->numLaunches == 0)
    return;
  pthread_mutex_lock(&s->graphLock);
  if (!s->graphsOff) {
    int ready = (s->graph && sameLaunches(&s->graphLaunches, l)) || captureGraph(p, s, l);
    if (ready && gDriver.graphLaunch(s->graph, tRun.stream) == 0) {
      pthread_mutex_unlock(&s->graphLock);
      return;
    }
    s->graphsOff = 1;
  }
  pthread_mutex_unlock(&s->graphLock);
  launchRecorded(p);
}

uint64_t kiln_cuda_read(kiln_cuda_program *p, uintptr_t device, int32_t bytes) {
  program_state *s = p ? (program_state *)p->state : NULL;
  if (!s || tRun.program != p || tRun.status != KILN_STATUS_OK)
    return 0;
  if (bytes < 1 || bytes > 8) {
    tRun.status = fail(KILN_STATUS_INTERNAL, "CUDA: a read of a bad size%s", "");
    return 0;
  }
  // The launches before it run first, one by one (this run then does
  // without a graph: the host's code between its kernels depends on them).
  if (tRun.record) {
    launchRecorded(p);
    tRun.launches.numLaunches = tRun.launches.numParams = 0;
    tRun.record = 0;
    if (tRun.status != KILN_STATUS_OK)
      return 0;
  }
  CUresult r = tRun.stream ? gDriver.streamSynchronize(tRun.stream) : gDriver.ctxSynchronize();
  uint64_t value = 0;
  if (r == 0)
    r = gDriver.memcpyDtoH(&value, (CUdeviceptr)device, (size_t)bytes);
  if (r != 0)
    tRun.status = driverFailure("reading a value the host needs (cuMemcpyDtoH)", r);
  return value; // Little endian: the low bytes.
}

int kiln_cuda_run_end(kiln_cuda_program *p, int wait) {
  program_state *s = p ? (program_state *)p->state : NULL;
  if (!s || tRun.program != p)
    return fail(KILN_STATUS_INVALID_ARGUMENT, "CUDA: run_end without run_begin%s", "");
  tRun.program = NULL;
  if (tRun.status == KILN_STATUS_OK && tRun.record)
    flushLaunches(p, s);
  if (tRun.status != KILN_STATUS_OK || !wait)
    return tRun.status;
  CUresult r = tRun.stream ? gDriver.streamSynchronize(tRun.stream) : gDriver.ctxSynchronize();
  if (r != 0)
    tRun.status = driverFailure(tRun.stream ? "cuStreamSynchronize (a kernel failed)"
                                            : "cuCtxSynchronize (a kernel failed)",
                                r);
  return tRun.status;
}

uintptr_t kiln_cuda_weights(kiln_cuda_program *p, const void *host, int64_t bytes) {
  program_state *s = p ? (program_state *)p->state : NULL;
  if (!s || tRun.program != p || tRun.status != KILN_STATUS_OK)
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
      tRun.status = fail(KILN_STATUS_OUT_OF_MEMORY, "CUDA: out of host memory%s", "");
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
    tRun.status = driverFailure("uploading the weights (cuMemAlloc/cuMemcpyHtoD)", r);
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
  if (!s || tRun.program != p || tRun.status != KILN_STATUS_OK)
    return;
  if (kernel < 0 || kernel >= p->num_kernels || num_params < 0 || (num_params > 0 && !params) ||
      gx < 0 || gy < 0 || gz < 0 || bx < 1 || by < 1 || bz < 1 || gx > 0x7fffffff ||
      gy > 65535 || gz > 65535 || bx > 1024 || by > 1024 || bz > 64 || bx * by * bz > 1024) {
    tRun.status = fail(KILN_STATUS_INTERNAL, "CUDA: a launch out of the device's limits%s", "");
    return;
  }
  if (gx == 0 || gy == 0 || gz == 0)
    return; // Nothing to run (an empty tensor).
  unsigned dims[6] = {(unsigned)gx, (unsigned)gy, (unsigned)gz,
                      (unsigned)bx, (unsigned)by, (unsigned)bz};
  if (tRun.record) {
    if (!recordLaunch(&tRun.launches, kernel, dims, params, num_params))
      tRun.status = fail(KILN_STATUS_OUT_OF_MEMORY, "CUDA: out of host memory%s", "");
    return;
  }
  CUresult r = launchOn(p, tRun.stream, kernel, dims, dims + 3, params, num_params);
  if (r != 0)
    launchFailed(p, kernel, r);
}

/// The bytes of each input and output of \p model, then its workspace, for
/// the dynamic dims' values \p dims (NULL for a model without any): the
/// descriptor's sizes, or kiln_tensor_dims's and workspace_size_for's.
/// Returns a status.
static int hostBytes(const kiln_model_desc *model, const int64_t *dims, int64_t *bytes) {
  int32_t nin = model->num_inputs, nout = model->num_outputs;
  int dynamic = model->abi_version >= 2 && model->num_dynamic_dims > 0;
  if (dynamic && !dims)
    return fail(KILN_STATUS_INVALID_ARGUMENT,
                "dims is NULL, but the model has dynamic dims: NAME_run_dims takes "
                "their values%s", "");
  int32_t maxRank = 1;
  for (int32_t i = 0; i < nin + nout; ++i) {
    const kiln_tensor_desc *t = i < nin ? &model->inputs[i] : &model->outputs[i - nin];
    if (t->rank > maxRank)
      maxRank = t->rank;
  }
  int64_t *shape = dynamic ? malloc((size_t)maxRank * sizeof(int64_t)) : NULL;
  if (dynamic && !shape)
    return fail(KILN_STATUS_OUT_OF_MEMORY, "CUDA: out of host memory%s", "");
  int status = KILN_STATUS_OK;
  for (int32_t i = 0; i < nin + nout && status == KILN_STATUS_OK; ++i) {
    const kiln_tensor_desc *t = i < nin ? &model->inputs[i] : &model->outputs[i - nin];
    bytes[i] = t->num_bytes;
    if (!dynamic)
      continue;
    int64_t elements = kiln_tensor_dims(model, t, dims, shape);
    if (elements < 0 ||
        __builtin_mul_overflow(elements, kiln_dtype_size(t->dtype), &bytes[i]))
      status = fail(KILN_STATUS_INVALID_ARGUMENT,
                    "a dynamic dim's value is negative or too large for tensor '%s'", t->name);
  }
  free(shape);
  if (status != KILN_STATUS_OK)
    return status;
  int64_t workspace = model->workspace_size;
  if (workspace < 0)
    workspace = model->abi_version >= 3 && model->workspace_size_for
                    ? model->workspace_size_for(dims)
                    : -1;
  if (workspace < 0)
    return fail(KILN_STATUS_INVALID_ARGUMENT,
                "the dynamic dims' values are outside what the model accepts%s", "");
  bytes[nin + nout] = workspace;
  return KILN_STATUS_OK;
}

int kiln_cuda_run_host(kiln_cuda_program *p, const kiln_model_desc *model,
                       int (*run_device)(const int64_t *, const void *const *, void *const *,
                                         void *),
                       const int64_t *dims, const void *const *inputs, void *const *outputs) {
  if (!p || !model || !run_device || (model->num_inputs > 0 && !inputs) ||
      (model->num_outputs > 0 && !outputs))
    return fail(KILN_STATUS_INVALID_ARGUMENT, "NULL argument%s", "");
  int32_t nin = model->num_inputs, n = model->num_inputs + model->num_outputs + 1;
  void *devices[2 * 64 + 1];
  int64_t bytes[2 * 64 + 1];
  if (n > (int32_t)(sizeof devices / sizeof devices[0]))
    return fail(KILN_STATUS_UNSUPPORTED, "CUDA: more than 128 inputs and outputs%s", "");
  int status = hostBytes(model, dims, bytes);
  if (status != KILN_STATUS_OK)
    return status;
  // A tensor without elements may be passed as NULL.
  for (int32_t i = 0; i < nin; ++i)
    if (!inputs[i] && bytes[i] > 0)
      return fail(KILN_STATUS_INVALID_ARGUMENT, "input pointer is NULL%s", "");
  for (int32_t i = nin; i < n - 1; ++i)
    if (!outputs[i - nin] && bytes[i] > 0)
      return fail(KILN_STATUS_INVALID_ARGUMENT, "output pointer is NULL%s", "");
  // Loads the driver and the program (the launches inside run_device
  // begin a run of their own).
  status = useDriver();
  if (status != KILN_STATUS_OK)
    return status;
  LOCK();
  status = loadProgram(p);
  UNLOCK();
  if (status != KILN_STATUS_OK)
    return status;
  program_state *s = (program_state *)p->state;
  pthread_mutex_lock(&s->hostLock); // The device buffers: one run at a time.
  if (!s->buffers) {
    // One device buffer per input and output and the workspace, made at
    // the first run, kept, and made again larger when a run needs more.
    s->buffers = calloc((size_t)n, sizeof(CUdeviceptr));
    s->bufferBytes = calloc((size_t)n, sizeof(int64_t));
    if (!s->buffers || !s->bufferBytes) {
      free(s->buffers);
      free(s->bufferBytes);
      s->buffers = NULL;
      s->bufferBytes = NULL;
      pthread_mutex_unlock(&s->hostLock);
      return fail(KILN_STATUS_OUT_OF_MEMORY, "CUDA: out of host memory%s", "");
    }
    s->numBuffers = n;
  }
  CUresult r = 0;
  for (int32_t i = 0; i < n && r == 0; ++i) {
    int64_t need = bytes[i] > 0 ? bytes[i] : 1;
    if (s->bufferBytes[i] >= need)
      continue;
    // The runs before have finished (NAME_run_dims_device waits), so the
    // old buffer may go.
    if (s->buffers[i])
      gDriver.memFree(s->buffers[i]);
    s->buffers[i] = 0;
    s->bufferBytes[i] = 0;
    if ((r = gDriver.memAlloc(&s->buffers[i], (size_t)need)) == 0)
      s->bufferBytes[i] = need;
    else
      s->buffers[i] = 0;
  }
  if (r != 0) {
    status = driverFailure("cuMemAlloc (inputs, outputs, workspace)", r);
    pthread_mutex_unlock(&s->hostLock);
    return status;
  }
  for (int32_t i = 0; i < n; ++i)
    devices[i] = (void *)(uintptr_t)s->buffers[i];
  for (int32_t i = 0; i < nin && r == 0; ++i)
    if (bytes[i] > 0)
      r = gDriver.memcpyHtoD(s->buffers[i], inputs[i], (size_t)bytes[i]);
  if (r != 0)
    status = driverFailure("cuMemcpyHtoD (an input)", r);
  else
    status = run_device(dims, (const void *const *)devices, devices + nin, devices[n - 1]);
  for (int32_t i = nin; i < n - 1 && status == KILN_STATUS_OK; ++i)
    if (bytes[i] > 0 &&
        (r = gDriver.memcpyDtoH(outputs[i - nin], s->buffers[i], (size_t)bytes[i])) != 0)
      status = driverFailure("cuMemcpyDtoH (an output)", r);
  pthread_mutex_unlock(&s->hostLock);
  return status;
}

#else /* no hosted C library (firmware): no GPU */

int kiln_cuda_available(void) { return KILN_STATUS_UNSUPPORTED; }
const char *kiln_cuda_error(void) { return "no CUDA driver: a runtime without dlopen"; }
int kiln_cuda_run_begin(kiln_cuda_program *p, void *stream) {
  (void)p, (void)stream;
  return KILN_STATUS_UNSUPPORTED;
}
int kiln_cuda_run_end(kiln_cuda_program *p, int wait) {
  (void)p, (void)wait;
  return KILN_STATUS_UNSUPPORTED;
}
uintptr_t kiln_cuda_weights(kiln_cuda_program *p, const void *host, int64_t bytes) {
  (void)p, (void)host, (void)bytes;
  return 0;
}
uint64_t kiln_cuda_read(kiln_cuda_program *p, uintptr_t device, int32_t bytes) {
  (void)p, (void)device, (void)bytes;
  return 0;
}
void kiln_cuda_launch(kiln_cuda_program *p, int32_t kernel, int64_t gx, int64_t gy, int64_t gz,
                      int64_t bx, int64_t by, int64_t bz, const uint64_t *params,
                      int32_t num_params) {
  (void)p, (void)kernel, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz;
  (void)params, (void)num_params;
}
int kiln_cuda_run_host(kiln_cuda_program *p, const kiln_model_desc *model,
                       int (*run_device)(const int64_t *, const void *const *, void *const *,
                                         void *),
                       const int64_t *dims, const void *const *inputs, void *const *outputs) {
  (void)p, (void)model, (void)run_device, (void)dims, (void)inputs, (void)outputs;
  return KILN_STATUS_UNSUPPORTED;
}

#endif
