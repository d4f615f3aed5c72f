/* The host side of utils/gpu_emulate.py: runs the kernels of a
 * --target=cuda build, compiled for the host, one GPU thread per host
 * thread. Blocks run one after another (a kernel's shared memory is one
 * global of the library, which each block then has to itself); a block's
 * threads run at once, __syncthreads() a barrier across them, or, in a
 * kernel that has no barrier, shuffle or mma.sync (its threads never wait
 * for each other), one after another in the caller's thread. The stand-in
 * CUDA driver (test/runtime/fake_cuda.c) calls emu_launch for each
 * cuLaunchKernel when FAKE_CUDA_EMULATE names such a library. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*entry_fn)(void **params);
struct emu_kernel {
  const char *name;
  entry_fn entry;
  int sync; /* Waits at barriers or in mma.sync: its threads run at once. */
};
extern const struct emu_kernel emu_kernels[]; /* gpu_emulate.py's table */
extern const int emu_num_kernels;

static _Thread_local unsigned tTid[3], tCta[3], tLinear;
static unsigned gNtid[3], gNcta[3];
static pthread_barrier_t gBarrier;
/* Warp-wide operations (mma.sync, shfl.sync): a barrier per warp and the
 * lanes' operands. */
static pthread_barrier_t gWarpBarriers[32];
static struct {
  uint32_t a[32][4], b[32][2];
} gWarpOperands[32];
static uint32_t gWarpShuffle[32][32];
static _Thread_local float tMma[4];

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

/* shfl.sync.bfly.b32 d, a, b, c (PTX ISA, "shfl.sync"): lane l gets a
 * from lane j = l ^ b when j is at most the segment's last lane (c's
 * clamp in bits 0-4, its segment mask in bits 8-12), else its own a.
 * Every lane of the warp calls it. */
static uint32_t shuffleXor(uint32_t a, int b, int c) {
  unsigned warp = tLinear / 32, lane = tLinear % 32;
  gWarpShuffle[warp][lane] = a;
  pthread_barrier_wait(&gWarpBarriers[warp]);
  unsigned clamp = (unsigned)c & 31u, segment = ((unsigned)c >> 8) & 31u;
  unsigned last = (lane & segment) | (clamp & ~segment);
  unsigned j = lane ^ ((unsigned)b & 31u);
  uint32_t d = j <= last ? gWarpShuffle[warp][j] : a;
  pthread_barrier_wait(&gWarpBarriers[warp]); /* Before the slots are reused. */
  return d;
}
float emu_shfl_bfly_f32(int mask, float a, int b, int c) {
  (void)mask;
  uint32_t bits;
  memcpy(&bits, &a, sizeof bits);
  bits = shuffleXor(bits, b, c);
  memcpy(&a, &bits, sizeof a);
  return a;
}
int32_t emu_shfl_bfly_i32(int mask, int32_t a, int b, int c) {
  (void)mask;
  return (int32_t)shuffleXor((uint32_t)a, b, c);
}

/* cvt.rna.tf32.f32: the mantissa rounded to 10 bits, ties away from
 * zero (in the low 13 bits: infinities and NaNs kept). */
uint32_t emu_f2tf32_rna(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) != 0x7f800000u)
    u += 0x1000u;
  return u & ~0x1fffu;
}

static float tf32Value(uint32_t bits) {
  bits &= ~0x1fffu; /* The tensor cores read 10 mantissa bits. */
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, as the PTX ISA
 * describes its fragments (section "Matrix Fragments for mma.m16n8k8"):
 * with g = lane / 4 and t = lane % 4, lane holds A[g][t], A[g+8][t],
 * A[g][t+4], A[g+8][t+4] (a0..a3), B[t][g], B[t+4][g] (b0, b1) and
 * C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1] (c0..c3). Every lane of
 * the warp calls it; each returns its four elements of D = A B + C. */
float *emu_mma_m16n8k8_tf32(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                            uint32_t b1, float c0, float c1, float c2, float c3) {
  unsigned warp = tLinear / 32, lane = tLinear % 32;
  uint32_t *a = gWarpOperands[warp].a[lane], *b = gWarpOperands[warp].b[lane];
  a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3, b[0] = b0, b[1] = b1;
  pthread_barrier_wait(&gWarpBarriers[warp]);
  float c[4] = {c0, c1, c2, c3};
  unsigned g = lane / 4, t = lane % 4;
  for (unsigned r = 0; r < 4; ++r) {
    unsigned row = g + (r >= 2 ? 8 : 0), col = 2 * t + (r & 1);
    float sum = c[r];
    for (unsigned k = 0; k < 8; ++k) {
      /* A[row][k] is in lane (row % 8) * 4 + k % 4, register
       * (row >= 8) + 2 (k >= 4); B[k][col] in lane col * 4 + k % 4,
       * register k >= 4. */
      float x = tf32Value(gWarpOperands[warp].a[(row % 8) * 4 + k % 4][(row >= 8) + 2 * (k >= 4)]);
      float y = tf32Value(gWarpOperands[warp].b[col * 4 + k % 4][k >= 4]);
      sum += x * y;
    }
    tMma[r] = sum;
  }
  pthread_barrier_wait(&gWarpBarriers[warp]); /* Before the operands are reused. */
  return tMma;
}

/* cp.async.ca.shared.global [dst], [src], 4, srcBytes; commit_group;
 * wait_group n (PTX ISA, "cp.async"): a thread's copies run in the
 * background, in groups it closes with commit_group; wait_group n waits
 * until at most n of its groups are still running, and only then may it
 * read what they wrote (other threads: after a barrier too). Here a copy
 * is queued and done at the wait that lets it complete, from the source
 * as it is then, so that a kernel reading a stage before waiting for it
 * reads what was there before, as it may on a GPU. Copies still queued
 * when a block ends are dropped with its shared memory. */
enum { kMaxCopies = 256 };
static _Thread_local struct pending_copy {
  char *dst;
  const char *src;
  unsigned srcBytes, group;
} tCopies[kMaxCopies];
static _Thread_local unsigned tNumCopies, tGroups;

void emu_cp_async_4(void *dst, const void *src, int32_t srcBytes) {
  if (tNumCopies == kMaxCopies) {
    fprintf(stderr, "gpu_emulate: more than %d cp.async in flight in a thread\n", kMaxCopies);
    abort();
  }
  unsigned bytes = srcBytes < 0 ? 0u : srcBytes > 4 ? 4u : (unsigned)srcBytes;
  tCopies[tNumCopies++] = (struct pending_copy){dst, src, bytes, tGroups};
}
void emu_cp_async_commit(void) { ++tGroups; }
void emu_cp_async_wait(int32_t n) {
  /* Groups below `done` complete; uncommitted copies (group tGroups) wait. */
  unsigned done = n < 0 || (unsigned)n >= tGroups ? 0u : tGroups - (unsigned)n;
  unsigned kept = 0;
  for (unsigned i = 0; i < tNumCopies; ++i) {
    struct pending_copy *c = &tCopies[i];
    if (c->group < done) {
      memset(c->dst, 0, 4);
      memcpy(c->dst, c->src, c->srcBytes);
    } else {
      tCopies[kept++] = *c;
    }
  }
  tNumCopies = kept;
}
static void startBlock(void) { tNumCopies = tGroups = 0; }

struct thread_arg {
  entry_fn entry;
  void **params;
  unsigned tid[3], grid[3];
};

/* One GPU thread of every block in turn; after each block it waits for
 * the block's other threads, so that the next block's use of the shared
 * memory starts once this one's is over. */
static void *threadMain(void *p) {
  struct thread_arg *a = p;
  memcpy(tTid, a->tid, sizeof tTid);
  tLinear = tTid[0] + gNtid[0] * (tTid[1] + gNtid[1] * tTid[2]);
  for (unsigned z = 0; z < a->grid[2]; ++z)
    for (unsigned y = 0; y < a->grid[1]; ++y)
      for (unsigned x = 0; x < a->grid[0]; ++x) {
        tCta[0] = x;
        tCta[1] = y;
        tCta[2] = z;
        startBlock();
        a->entry(a->params);
        pthread_barrier_wait(&gBarrier);
      }
  return NULL;
}

/* Runs kernel `name` over the grid; 0, or -1 for a kernel not in the
 * library or threads that cannot be made. */
int emu_launch(const char *name, const unsigned grid[3], const unsigned block[3],
               void **params) {
  entry_fn entry = NULL;
  int sync = 0;
  for (int k = 0; k < emu_num_kernels; ++k)
    if (strcmp(emu_kernels[k].name, name) == 0) {
      entry = emu_kernels[k].entry;
      sync = emu_kernels[k].sync;
    }
  if (!entry)
    return -1;
  unsigned n = block[0] * block[1] * block[2];
  memcpy(gNtid, block, sizeof gNtid);
  memcpy(gNcta, grid, sizeof gNcta);
  if (!sync) {
    /* No thread waits for another: each runs to its end in turn, here. */
    for (unsigned z = 0; z < grid[2]; ++z)
      for (unsigned y = 0; y < grid[1]; ++y)
        for (unsigned x = 0; x < grid[0]; ++x)
          for (unsigned t = 0; t < n; ++t) {
            tTid[0] = t % block[0];
            tTid[1] = t / block[0] % block[1];
            tTid[2] = t / (block[0] * block[1]);
            tCta[0] = x;
            tCta[1] = y;
            tCta[2] = z;
            tLinear = t;
            startBlock();
            entry(params);
          }
    return 0;
  }
  pthread_t *threads = calloc(n, sizeof *threads);
  struct thread_arg *args = calloc(n, sizeof *args);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  int status = threads && args ? 0 : -1;
  if (!status) {
    pthread_barrier_init(&gBarrier, NULL, n);
    for (unsigned w = 0; w * 32 < n; ++w)
      pthread_barrier_init(&gWarpBarriers[w], NULL, n - w * 32 < 32 ? n - w * 32 : 32);
    for (unsigned t = 0; t < n; ++t) {
      struct thread_arg *a = &args[t];
      a->entry = entry;
      a->params = params;
      a->tid[0] = t % block[0];
      a->tid[1] = t / block[0] % block[1];
      a->tid[2] = t / (block[0] * block[1]);
      memcpy(a->grid, grid, sizeof a->grid);
      if (pthread_create(&threads[t], &attr, threadMain, a) != 0) {
        fprintf(stderr, "gpu_emulate: cannot create thread %u of %u\n", t, n);
        abort(); /* The others would wait at a barrier for ever. */
      }
    }
    for (unsigned t = 0; t < n; ++t)
      pthread_join(threads[t], NULL);
    pthread_barrier_destroy(&gBarrier);
    for (unsigned w = 0; w * 32 < n; ++w)
      pthread_barrier_destroy(&gWarpBarriers[w]);
  }
  pthread_attr_destroy(&attr);
  free(threads);
  free(args);
  return status;
}
