/* The digits example as firmware: the model object kiln compiled for the
 * target, one static workspace of digits_WORKSPACE_SIZE bytes (no heap for
 * the model), the held-out test set read over semihosting. Prints one line
 * per sample (its predicted class and logits), the accuracy, the measured
 * stack depth of digits_run and, on Cortex-M, the SysTick ticks the
 * inferences took. The same file built for the host gives the reference
 * output that test/firmware/run.sh compares with.
 *
 *   usage: digits_main TEST_SET.bin   (format: examples/digits/main.c) */
#include "digits.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NUM_PIXELS 64
#define NUM_CLASSES 10
#define MAX_SAMPLES 512

_Static_assert(digits_INPUT_0_NUM_ELEMENTS == NUM_PIXELS, "1x1x8x8 input");
_Static_assert(digits_OUTPUT_0_NUM_ELEMENTS == NUM_CLASSES, "10 logits");

static uint8_t workspace[digits_WORKSPACE_SIZE + 1]
    __attribute__((aligned(digits_WORKSPACE_ALIGNMENT)));
static float pixels[MAX_SAMPLES][NUM_PIXELS];
static uint8_t labels[MAX_SAMPLES];

#if defined(__arm__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define CORTEX_M 1
/* SysTick counts down from LOAD at the core clock (25 MHz on mps2-an386). */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#endif

#ifdef CORTEX_M
/* Stack measurement: fill the region below the caller's stack pointer with a
 * pattern, run, and find the deepest word that changed. */
#define STACK_PAINT_BYTES 16384
#define STACK_PATTERN 0xA5C3E1F0u

static __attribute__((noinline)) void paint(uint32_t *lo, uint32_t *hi) {
  for (volatile uint32_t *p = lo; p < hi; ++p)
    *p = STACK_PATTERN;
}

static __attribute__((noinline)) uintptr_t deepest_change(uint32_t *lo, uint32_t *hi) {
  for (uint32_t *p = lo; p < hi; ++p)
    if (*p != STACK_PATTERN)
      return (uintptr_t)p;
  return (uintptr_t)hi;
}
#endif

static uint32_t load_u32le(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static int read_test_set(const char *path, uint32_t *count) {
  FILE *f = fopen(path, "rb");
  unsigned char header[8];
  if (!f || fread(header, 1, 8, f) != 8 || load_u32le(header) != 0x4B444731u) {
    fprintf(stderr, "digits_main: cannot read a test set from '%s'\n", path);
    if (f)
      fclose(f);
    return 0;
  }
  *count = load_u32le(header + 4);
  if (*count == 0 || *count > MAX_SAMPLES) {
    fprintf(stderr, "digits_main: '%s': %lu samples (1..%d supported)\n", path,
            (unsigned long)*count, MAX_SAMPLES);
    fclose(f);
    return 0;
  }
  /* Little-endian float32 pixels, then the labels. */
  int ok = fread(pixels, sizeof(float) * NUM_PIXELS, *count, f) == *count &&
           fread(labels, 1, *count, f) == *count;
  fclose(f);
  if (!ok)
    fprintf(stderr, "digits_main: '%s' is truncated\n", path);
  return ok;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "test_set.bin";
  uint32_t count;
  if (!read_test_set(path, &count))
    return 2;

  float logits[NUM_CLASSES];
  /* The stack digits_run needs (on Cortex-M): one inference on a painted
     stack, measured from main's stack pointer, so it includes the call and
     the C library's memcpy/memset. paint() is a leaf that stays within the
     64 bytes left unpainted. */
  long stack_used = -1;
#ifdef CORTEX_M
  uintptr_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  uint32_t *top = (uint32_t *)((sp - 64) & ~(uintptr_t)3);
  uint32_t *bottom = top - STACK_PAINT_BYTES / 4;
  paint(bottom, top);
#endif
  int first = digits_run_typed(pixels[0], logits, workspace);
#ifdef CORTEX_M
  stack_used = (long)(sp - deepest_change(bottom, top));
#endif
  if (first != KILN_STATUS_OK) {
    printf("digits_run failed with status %d\n", first);
    return 2;
  }

#ifdef CORTEX_M
  SYST_RVR = 0x00FFFFFFu;
  SYST_CVR = 0;
  SYST_CSR = 5u; /* Enable, core clock, no interrupt. */
  uint64_t ticks = 0;
#endif
  uint32_t correct = 0;
  for (uint32_t i = 0; i < count; ++i) {
#ifdef CORTEX_M
    uint32_t before = SYST_CVR;
#endif
    int status = digits_run_typed(pixels[i], logits, workspace);
#ifdef CORTEX_M
    uint32_t after = SYST_CVR;
    ticks += (before - after) & 0x00FFFFFFu; /* Counts down; one inference < 2^24. */
#endif
    if (status != KILN_STATUS_OK) {
      printf("sample %lu: digits_run failed with status %d\n", (unsigned long)i, status);
      return 2;
    }
    int best = 0;
    for (int k = 1; k < NUM_CLASSES; ++k)
      if (logits[k] > logits[best])
        best = k;
    correct += best == labels[i];
    printf("sample %lu class %d logits", (unsigned long)i, best);
    for (int k = 0; k < NUM_CLASSES; ++k)
      printf(" %.9g", (double)logits[k]);
    printf("\n");
  }
  printf("accuracy: %.2f%% (%lu/%lu)\n", 100.0 * correct / count,
         (unsigned long)correct, (unsigned long)count);
  printf("stack: measured %ld bytes, digits_STACK_SIZE %ld\n", stack_used,
         (long)digits_STACK_SIZE);
#ifdef CORTEX_M
  printf("systick: %llu ticks for %lu inferences\n", (unsigned long long)ticks,
         (unsigned long)count);
  /* Calibration: a loop of 2 instructions (subs, bne) run 1,000,000 times.
     Under QEMU's -icount the ratio gives instructions per tick. */
  uint32_t n = 1000000u, before = SYST_CVR;
  __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
  uint32_t after = SYST_CVR;
  printf("systick: %lu ticks for 2000000 loop instructions\n",
         (unsigned long)((before - after) & 0x00FFFFFFu));
#endif
  return 0;
}
