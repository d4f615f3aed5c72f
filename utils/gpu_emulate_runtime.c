/* The host side of utils/gpu_emulate.py: runs the kernels of a
 * --target=cuda build, compiled for the host, one GPU thread per host
 * thread. Blocks run one after another (a kernel's shared memory is one
 * global of the library, which each block then has to itself); a block's
 * threads run at once, __syncthreads() a barrier across them. The stand-in
 * CUDA driver (test/runtime/fake_cuda.c) calls emu_launch for each
 * cuLaunchKernel when FAKE_CUDA_EMULATE names such a library. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*entry_fn)(void **params);
struct emu_kernel {
  const char *name;
  entry_fn entry;
};
extern const struct emu_kernel emu_kernels[]; /* gpu_emulate.py's table */
extern const int emu_num_kernels;

static _Thread_local unsigned tTid[3], tCta[3];
static unsigned gNtid[3], gNcta[3];
static pthread_barrier_t gBarrier;

unsigned emu_tid_x(void) { return tTid[0]; }
unsigned emu_tid_y(void) { return tTid[1]; }
unsigned emu_tid_z(void) { return tTid[2]; }
unsigned emu_ctaid_x(void) { return tCta[0]; }
unsigned emu_ctaid_y(void) { return tCta[1]; }
unsigned emu_ctaid_z(void) { return tCta[2]; }
unsigned emu_ntid_x(void) { return gNtid[0]; }
unsigned emu_ntid_y(void) { return gNtid[1]; }
unsigned emu_ntid_z(void) { return gNtid[2]; }
unsigned emu_nctaid_x(void) { return gNcta[0]; }
unsigned emu_nctaid_y(void) { return gNcta[1]; }
unsigned emu_nctaid_z(void) { return gNcta[2]; }
void emu_barrier(int id) {
  (void)id;
  pthread_barrier_wait(&gBarrier);
}
void emu_barrier0(void) { pthread_barrier_wait(&gBarrier); }

struct thread_arg {
  entry_fn entry;
  void **params;
  unsigned tid[3], cta[3];
};

static void *threadMain(void *p) {
  struct thread_arg *a = p;
  memcpy(tTid, a->tid, sizeof tTid);
  memcpy(tCta, a->cta, sizeof tCta);
  a->entry(a->params);
  return NULL;
}

/* Runs kernel `name` over the grid; 0, or -1 for a kernel not in the
 * library or threads that cannot be made. */
int emu_launch(const char *name, const unsigned grid[3], const unsigned block[3],
               void **params) {
  entry_fn entry = NULL;
  for (int k = 0; k < emu_num_kernels; ++k)
    if (strcmp(emu_kernels[k].name, name) == 0)
      entry = emu_kernels[k].entry;
  if (!entry)
    return -1;
  unsigned n = block[0] * block[1] * block[2];
  memcpy(gNtid, block, sizeof gNtid);
  memcpy(gNcta, grid, sizeof gNcta);
  pthread_t *threads = calloc(n, sizeof *threads);
  struct thread_arg *args = calloc(n, sizeof *args);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  int status = threads && args ? 0 : -1;
  for (unsigned z = 0; z < grid[2] && !status; ++z)
    for (unsigned y = 0; y < grid[1] && !status; ++y)
      for (unsigned x = 0; x < grid[0] && !status; ++x) {
        pthread_barrier_init(&gBarrier, NULL, n);
        unsigned made = 0;
        for (unsigned t = 0; t < n; ++t) {
          struct thread_arg *a = &args[t];
          a->entry = entry;
          a->params = params;
          a->tid[0] = t % block[0];
          a->tid[1] = t / block[0] % block[1];
          a->tid[2] = t / (block[0] * block[1]);
          a->cta[0] = x;
          a->cta[1] = y;
          a->cta[2] = z;
          if (pthread_create(&threads[t], &attr, threadMain, a) != 0) {
            fprintf(stderr, "gpu_emulate: cannot create thread %u of %u\n", t, n);
            abort(); /* The others would wait at a barrier for ever. */
          }
          ++made;
        }
        for (unsigned t = 0; t < made; ++t)
          pthread_join(threads[t], NULL);
        pthread_barrier_destroy(&gBarrier);
      }
  pthread_attr_destroy(&attr);
  free(threads);
  free(args);
  return status;
}
