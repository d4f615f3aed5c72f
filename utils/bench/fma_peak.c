/* The single-core FP32 FMA peak of this machine, for utils/bench/bench.py:
 * 12 independent chains of 8-wide fused multiply-adds (AVX2 + FMA), enough
 * to hide the FMA latency on current x86 cores. Prints one JSON line:
 * {"gflops": G, "seconds": S}.
 *
 *   cc -O2 -mavx2 -mfma fma_peak.c -o fma_peak && ./fma_peak [ITERATIONS] */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  long iterations = argc > 1 ? atol(argv[1]) : 100000000L;
  __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  /* Twelve named accumulators (not an array, which a compiler may keep in
     memory), so that each chain lives in a register. */
  __m256 c0 = _mm256_set1_ps(0.f), c1 = _mm256_set1_ps(1.f), c2 = _mm256_set1_ps(2.f),
         c3 = _mm256_set1_ps(3.f), c4 = _mm256_set1_ps(4.f), c5 = _mm256_set1_ps(5.f),
         c6 = _mm256_set1_ps(6.f), c7 = _mm256_set1_ps(7.f), c8 = _mm256_set1_ps(8.f),
         c9 = _mm256_set1_ps(9.f), c10 = _mm256_set1_ps(10.f), c11 = _mm256_set1_ps(11.f);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long it = 0; it < iterations; ++it) {
    c0 = _mm256_fmadd_ps(c0, a, b);
    c1 = _mm256_fmadd_ps(c1, a, b);
    c2 = _mm256_fmadd_ps(c2, a, b);
    c3 = _mm256_fmadd_ps(c3, a, b);
    c4 = _mm256_fmadd_ps(c4, a, b);
    c5 = _mm256_fmadd_ps(c5, a, b);
    c6 = _mm256_fmadd_ps(c6, a, b);
    c7 = _mm256_fmadd_ps(c7, a, b);
    c8 = _mm256_fmadd_ps(c8, a, b);
    c9 = _mm256_fmadd_ps(c9, a, b);
    c10 = _mm256_fmadd_ps(c10, a, b);
    c11 = _mm256_fmadd_ps(c11, a, b);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  /* Keep the results alive. */
  __m256 sum = _mm256_add_ps(
      _mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)),
                    _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11))));
  float out[8];
  _mm256_storeu_ps(out, sum);
  double flops = (double)iterations * 12.0 * 8.0 * 2.0;
  printf("{\"gflops\": %.3f, \"seconds\": %.4f, \"check\": %g}\n", flops / seconds * 1e-9,
         seconds, (double)out[0]);
  return 0;
}
