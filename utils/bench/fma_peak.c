/* The single-core FP32 FMA peak of this machine, for utils/bench/bench.py:
 * 12 independent chains of fused multiply-adds of the widest vectors the
 * compiler targets (AVX-512 with -march=native on a CPU that has it, else
 * AVX2 + FMA), enough to hide the FMA latency on current x86 cores. Prints
 * one JSON line: {"gflops": G, "seconds": S, "width": floats per vector}.
 *
 *   cc -O2 -march=native fma_peak.c -o fma_peak && ./fma_peak [ITERATIONS] */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef __AVX512F__
typedef __m512 vec;
#define WIDTH 16
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
#define STORE _mm512_storeu_ps
#else
typedef __m256 vec;
#define WIDTH 8
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
#define STORE _mm256_storeu_ps
#endif

int main(int argc, char **argv) {
  long iterations = argc > 1 ? atol(argv[1]) : 100000000L;
  vec a = SET1(0.999999f), b = SET1(1e-7f);
  /* Twelve named accumulators (not an array, which a compiler may keep in
     memory), so that each chain lives in a register. */
  vec c0 = SET1(0.f), c1 = SET1(1.f), c2 = SET1(2.f),
         c3 = SET1(3.f), c4 = SET1(4.f), c5 = SET1(5.f),
         c6 = SET1(6.f), c7 = SET1(7.f), c8 = SET1(8.f),
         c9 = SET1(9.f), c10 = SET1(10.f), c11 = SET1(11.f);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long it = 0; it < iterations; ++it) {
    c0 = FMA(c0, a, b);
    c1 = FMA(c1, a, b);
    c2 = FMA(c2, a, b);
    c3 = FMA(c3, a, b);
    c4 = FMA(c4, a, b);
    c5 = FMA(c5, a, b);
    c6 = FMA(c6, a, b);
    c7 = FMA(c7, a, b);
    c8 = FMA(c8, a, b);
    c9 = FMA(c9, a, b);
    c10 = FMA(c10, a, b);
    c11 = FMA(c11, a, b);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  /* Keep the results alive. */
  vec sum = ADD(
      ADD(ADD(c0, c1), ADD(c2, c3)),
      ADD(ADD(ADD(c4, c5), ADD(c6, c7)),
                    ADD(ADD(c8, c9), ADD(c10, c11))));
  float out[WIDTH];
  STORE(out, sum);
  double flops = (double)iterations * 12.0 * WIDTH * 2.0;
  printf("{\"gflops\": %.3f, \"seconds\": %.4f, \"width\": %d, \"check\": %g}\n",
         flops / seconds * 1e-9, seconds, WIDTH, (double)out[0]);
  return 0;
}
