/* A stand-in for libcuda.so.1 for the tests of --target=cuda libraries on
 * machines without a GPU (test/runtime/cuda.test): the driver API calls the
 * runtime makes, on host memory, each logged one a line to the file
 * $KILN_FAKE_CUDA_LOG. Kernels do not run: cuLaunchKernel logs the kernel,
 * the grid, the block and the parameter count, and checks that every
 * pointer parameter is a buffer cuMemAlloc returned (or inside one).
 * FAKE_CUDA_DEVICES=0 makes it report no device. A cubin is refused (as for
 * another GPU), so the runtime loads the PTX. Streams are numbers; a launch
 * on a capturing stream is logged "(captured)" and counted into the graph,
 * whose cuGraphLaunch logs the count; FAKE_CUDA_GRAPH_FAILS=1 makes
 * cuGraphInstantiateWithFlags fail. With FAKE_CUDA_EMULATE naming a
 * library utils/gpu_emulate.py built from the model's device code, the
 * kernels do run (on the host, in emu_launch), launched or replayed from
 * a graph. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static FILE *logFile(void) {
  static FILE *f;
  if (!f) {
    const char *path = getenv("KILN_FAKE_CUDA_LOG");
    f = path ? fopen(path, "a") : stderr;
    if (!f)
      f = stderr;
  }
  return f;
}

#define LOG(...) (fprintf(logFile(), __VA_ARGS__), fflush(logFile()))

/* The allocations, to check the kernels' pointer parameters. */
static struct { uintptr_t base; size_t bytes; } allocs[4096];
static int numAllocs;

static int inAlloc(uint64_t p) {
  for (int i = 0; i < numAllocs; ++i)
    if (p >= allocs[i].base && p <= allocs[i].base + allocs[i].bytes)
      return 1;
  return 0;
}

typedef struct module { char *ptx; } module;

CUresult cuInit(unsigned flags) { LOG("cuInit %u\n", flags); return 0; }
CUresult cuDeviceGetCount(int *n) {
  const char *d = getenv("FAKE_CUDA_DEVICES");
  *n = d ? atoi(d) : 1;
  return 0;
}
CUresult cuDeviceGet(int *d, int i) { *d = i; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) { (void)d; *ctx = (void *)0x1; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }
CUresult cuCtxSynchronize(void) { LOG("cuCtxSynchronize\n"); return 0; }
CUresult cuStreamSynchronize(void *stream) {
  LOG("cuStreamSynchronize %p\n", stream);
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "fake error"; return 0; }

CUresult cuModuleLoadData(void **m, const void *image) {
  const char *ptx = image;
  /* A cubin (ELF): refused as a driver for another GPU would, so that the
   * runtime falls back to the PTX. */
  if (memcmp(image, "\x7f" "ELF", 4) == 0) {
    LOG("cuModuleLoadData cubin: refused (no binary for this GPU)\n");
    return 209; /* CUDA_ERROR_NO_BINARY_FOR_GPU */
  }
  int entries = 0;
  for (const char *p = ptx; (p = strstr(p, ".entry")); ++p)
    ++entries;
  LOG("cuModuleLoadData %zu bytes, %d .entry, %s\n", strlen(ptx), entries,
      strstr(ptx, ".target sm_") ? "target ok" : "no target");
  module *mod = calloc(1, sizeof *mod);
  mod->ptx = strdup(ptx);
  *m = mod;
  return 0;
}

/* A kernel: its name and, from the PTX, which parameters are pointers. */
typedef struct function {
  char name[256];
  int numParams;
  char isPointer[512];
} function;

CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  module *mod = m;
  char entry[512];
  snprintf(entry, sizeof entry, ".entry %s(", name);
  const char *at = strstr(mod->ptx, entry);
  if (!at) {
    LOG("cuModuleGetFunction %s: NOT IN THE PTX\n", name);
    return 500; /* CUDA_ERROR_NOT_FOUND */
  }
  function *fn = calloc(1, sizeof *fn);
  snprintf(fn->name, sizeof fn->name, "%s", name);
  const char *end = strchr(at, ')');
  for (const char *p = at; (p = strstr(p, ".param")) && p < end && fn->numParams < 512; ++p) {
    const char *eol = strchr(p, '\n');
    const char *ptr = strstr(p, ".ptr");
    fn->isPointer[fn->numParams++] = ptr && (!eol || ptr < eol);
  }
  *f = fn;
  return 0;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  void *m = calloc(1, bytes);
  if (!m || numAllocs == 4096)
    return 2;
  allocs[numAllocs].base = (uintptr_t)m;
  allocs[numAllocs++].bytes = bytes;
  *p = (CUdeviceptr)(uintptr_t)m;
  LOG("cuMemAlloc %zu\n", bytes);
  return 0;
}
/* Freed memory leaves the list (a later use of it is then outside any
   allocation) but stays mapped, so that a kernel the emulation runs on it
   does not crash before the log says so. */
CUresult cuMemFree_v2(CUdeviceptr p) {
  for (int i = 0; i < numAllocs; ++i)
    if (allocs[i].base == p) {
      LOG("cuMemFree %zu\n", allocs[i].bytes);
      allocs[i] = allocs[--numAllocs];
      return 0;
    }
  LOG("cuMemFree: NOT AN ALLOCATION\n");
  return 1;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  LOG("cuMemcpyHtoD %zu%s\n", n, inAlloc(d) ? "" : " OUTSIDE ANY ALLOCATION");
  memcpy((void *)(uintptr_t)d, s, n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  LOG("cuMemcpyDtoH %zu%s\n", n, inAlloc(s) ? "" : " OUTSIDE ANY ALLOCATION");
  memcpy(d, (void *)(uintptr_t)s, n);
  return 0;
}

/* Streams and graphs. A graph is the launches captured into it. */
typedef struct launch {
  function *fn;
  unsigned grid[3], block[3];
  uint64_t params[512];
} launch;
typedef struct graph {
  long count;
  launch *launches;
} graph;

static int numStreams;
static void *capturing;
static graph capture;

/* Runs a kernel when FAKE_CUDA_EMULATE names an emulation library; 0, or
 * a driver error. */
static CUresult emulate(function *fn, const unsigned grid[3], const unsigned block[3],
                        void **params) {
  static void *emu;
  static int (*run)(const char *, const unsigned *, const unsigned *, void **);
  const char *path = getenv("FAKE_CUDA_EMULATE");
  if (!path)
    return 0;
  if (!emu) {
    emu = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (emu)
      *(void **)&run = dlsym(emu, "emu_launch");
    if (!run) {
      LOG("FAKE_CUDA_EMULATE: cannot load %s\n", path);
      return 719; /* CUDA_ERROR_LAUNCH_FAILED */
    }
  }
  if (run(fn->name, grid, block, params) != 0) {
    LOG("emulate %s: NOT IN THE EMULATION LIBRARY\n", fn->name);
    return 719;
  }
  return 0;
}

CUresult cuStreamCreate(void **stream, unsigned flags) {
  *stream = (void *)(uintptr_t)(0x5000 + ++numStreams);
  LOG("cuStreamCreate %p flags %u\n", *stream, flags);
  return 0;
}
CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  LOG("cuStreamBeginCapture %p mode %d\n", stream, mode);
  capturing = stream;
  capture.count = 0;
  capture.launches = NULL;
  return 0;
}
CUresult cuStreamEndCapture(void *stream, void **graph_out) {
  if (stream != capturing)
    return 900; /* CUDA_ERROR_STREAM_CAPTURE_UNMATCHED */
  LOG("cuStreamEndCapture %p: %ld kernels\n", stream, capture.count);
  capturing = NULL;
  graph *g = malloc(sizeof *g);
  *g = capture;
  *graph_out = g;
  return 0;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph_in, unsigned long long flags) {
  (void)flags;
  const char *fails = getenv("FAKE_CUDA_GRAPH_FAILS");
  if (fails && atoi(fails)) {
    LOG("cuGraphInstantiate: fails\n");
    return 1;
  }
  graph *e = malloc(sizeof *e);
  const graph *g = graph_in;
  e->count = g->count;
  e->launches = malloc((size_t)(g->count + 1) * sizeof *e->launches);
  memcpy(e->launches, g->launches, (size_t)g->count * sizeof *e->launches);
  *exec = e;
  LOG("cuGraphInstantiate\n");
  return 0;
}
CUresult cuGraphDestroy(void *g) {
  free(((graph *)g)->launches);
  free(g);
  return 0;
}
CUresult cuGraphExecDestroy(void *exec) {
  LOG("cuGraphExecDestroy\n");
  return cuGraphDestroy(exec);
}
CUresult cuGraphLaunch(void *exec, void *stream) {
  graph *e = exec;
  LOG("cuGraphLaunch %ld kernels, stream %p\n", e->count, stream);
  for (long i = 0; i < e->count; ++i) {
    launch *l = &e->launches[i];
    void *params[512];
    for (int p = 0; p < l->fn->numParams; ++p) {
      params[p] = &l->params[p];
      if (l->fn->isPointer[p] && !inAlloc(l->params[p]))
        LOG("cuGraphLaunch: a pointer parameter OUTSIDE ANY ALLOCATION\n");
    }
    CUresult r = emulate(l->fn, l->grid, l->block, params);
    if (r)
      return r;
  }
  return 0;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, void *stream, void **params, void **extra) {
  (void)smem; (void)extra;
  function *fn = f;
  int bad = 0;
  for (int i = 0; i < fn->numParams; ++i)
    if (fn->isPointer[i] && !inAlloc(*(uint64_t *)params[i]))
      ++bad;
  int inCapture = capturing && stream == capturing;
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  if (inCapture) {
    launch *grown = realloc(capture.launches, (size_t)(capture.count + 1) * sizeof *grown);
    if (!grown)
      return 2;
    capture.launches = grown;
    launch *l = &capture.launches[capture.count++];
    l->fn = fn;
    memcpy(l->grid, grid, sizeof grid);
    memcpy(l->block, block, sizeof block);
    for (int p = 0; p < fn->numParams; ++p)
      l->params[p] = *(uint64_t *)params[p]; /* The runtime's 8-byte slots. */
  }
  LOG("cuLaunchKernel %s grid %u,%u,%u block %u,%u,%u, %d params%s, stream %p%s\n", fn->name,
      gx, gy, gz, bx, by, bz, fn->numParams, bad ? ", A POINTER OUTSIDE DEVICE MEMORY" : "",
      stream, inCapture ? " (captured)" : "");
  return inCapture ? 0 : emulate(fn, grid, block, params);
}
