/* Runs the kiln-compiled digits model on a test set and prints its accuracy.
 *
 *   usage: digits TEST_SET.bin
 *
 * TEST_SET.bin (written by train.py), little-endian:
 *   uint32 magic 0x4B444731 ('KDG1'), uint32 count N,
 *   N*64 float32 pixels in [0,1] (one 1x1x8x8 input per sample),
 *   N uint8 labels in 0..9.
 *
 * Prints "accuracy: 97.78% (352/360)". Exit status: 0 on success, 2 on a bad
 * file, a failed run or any other error. */
#include "digits.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC 0x4B444731u /* 'KDG1' */
#define NUM_PIXELS 64
#define NUM_CLASSES 10
#define HEADER_BYTES 8

_Static_assert(digits_NUM_INPUTS == 1 && digits_NUM_OUTPUTS == 1,
               "expected a model with one input and one output");
_Static_assert(digits_INPUT_0_DTYPE == 1 && digits_OUTPUT_0_DTYPE == 1,
               "expected float32 input and output");
_Static_assert(digits_INPUT_0_NUM_ELEMENTS == NUM_PIXELS,
               "expected an input of 1x1x8x8 floats");
_Static_assert(digits_OUTPUT_0_NUM_ELEMENTS == NUM_CLASSES,
               "expected an output of 10 logits");

static const char *prog = "digits";

static uint32_t load_u32le(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static float load_f32le(const unsigned char *p) {
  uint32_t bits = load_u32le(p);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static const char *status_name(int status) {
  switch (status) {
  case KILN_STATUS_OK: return "ok";
  case KILN_STATUS_INVALID_ARGUMENT: return "invalid argument";
  case KILN_STATUS_SHAPE_MISMATCH: return "shape mismatch";
  case KILN_STATUS_OUT_OF_MEMORY: return "out of memory";
  case KILN_STATUS_UNSUPPORTED: return "unsupported";
  case KILN_STATUS_INTERNAL: return "internal error";
  default: return "unknown status";
  }
}

/* The test set, decoded. */
typedef struct {
  uint32_t count;
  float *pixels;          /* count * NUM_PIXELS */
  unsigned char *labels;  /* count */
} test_set;

/* Reads and validates PATH. On failure prints why and returns 0. */
static int read_test_set(const char *path, test_set *ts) {
  int ok = 0;
  unsigned char header[HEADER_BYTES];
  unsigned char *raw = NULL;
  memset(ts, 0, sizeof *ts);

  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open '%s': %s\n", prog, path, strerror(errno));
    return 0;
  }
  size_t got = fread(header, 1, HEADER_BYTES, f);
  if (got != HEADER_BYTES) {
    if (ferror(f))
      fprintf(stderr, "%s: cannot read '%s': %s\n", prog, path, strerror(errno));
    else
      fprintf(stderr, "%s: '%s': too short for a test set (%zu bytes, need at least %d)\n",
              prog, path, got, HEADER_BYTES);
    goto done;
  }
  long size_l = -1;
  if (fseek(f, 0, SEEK_END) == 0)
    size_l = ftell(f);
  if (size_l < 0 || fseek(f, HEADER_BYTES, SEEK_SET) != 0) {
    fprintf(stderr, "%s: '%s': cannot determine the file size (not a regular file?)\n",
            prog, path);
    goto done;
  }
  uint64_t size = (uint64_t)size_l;
  uint32_t magic = load_u32le(header);
  if (magic != MAGIC) {
    fprintf(stderr, "%s: '%s': bad magic 0x%08lX (expected 0x%08lX 'KDG1'); "
            "not a test set written by train.py\n",
            prog, path, (unsigned long)magic, (unsigned long)MAGIC);
    goto done;
  }
  uint32_t count = load_u32le(header + 4);
  if (count == 0) {
    fprintf(stderr, "%s: '%s': the test set is empty\n", prog, path);
    goto done;
  }
  /* Fits easily in 64 bits: count < 2^32, each sample 257 bytes. */
  uint64_t payload = (uint64_t)count * (NUM_PIXELS * 4 + 1);
  if (size != HEADER_BYTES + payload) {
    fprintf(stderr, "%s: '%s': file is %llu bytes, but a test set of %lu samples "
            "is %llu bytes\n", prog, path, (unsigned long long)size,
            (unsigned long)count, (unsigned long long)(HEADER_BYTES + payload));
    goto done;
  }
  if (payload > SIZE_MAX) {
    fprintf(stderr, "%s: '%s': test set too large for this machine\n", prog, path);
    goto done;
  }
  raw = malloc((size_t)payload);
  ts->pixels = malloc((size_t)count * NUM_PIXELS * sizeof(float));
  ts->labels = malloc((size_t)count);
  if (!raw || !ts->pixels || !ts->labels) {
    fprintf(stderr, "%s: out of memory reading '%s'\n", prog, path);
    goto done;
  }
  if (fread(raw, 1, (size_t)payload, f) != (size_t)payload) {
    fprintf(stderr, "%s: '%s': read error or file changed while reading\n", prog, path);
    goto done;
  }

  const unsigned char *px = raw;
  const unsigned char *lb = raw + (size_t)count * NUM_PIXELS * 4;
  for (uint32_t i = 0; i < count; ++i) {
    for (int j = 0; j < NUM_PIXELS; ++j) {
      float v = load_f32le(px + ((size_t)i * NUM_PIXELS + (size_t)j) * 4);
      if (!isfinite(v) || v < 0.0f || v > 1.0f) {
        fprintf(stderr, "%s: '%s': sample %lu pixel %d is %g, outside [0,1]\n",
                prog, path, (unsigned long)i, j, (double)v);
        goto done;
      }
      ts->pixels[(size_t)i * NUM_PIXELS + (size_t)j] = v;
    }
    if (lb[i] >= NUM_CLASSES) {
      fprintf(stderr, "%s: '%s': sample %lu has label %u, outside 0..9\n",
              prog, path, (unsigned long)i, (unsigned)lb[i]);
      goto done;
    }
    ts->labels[i] = lb[i];
  }
  ts->count = count;
  ok = 1;

done:
  free(raw);
  fclose(f);
  if (!ok) {
    free(ts->pixels);
    free(ts->labels);
    memset(ts, 0, sizeof *ts);
  }
  return ok;
}

int main(int argc, char **argv) {
  if (argc > 0 && argv[0] && argv[0][0])
    prog = argv[0];
  if (argc != 2) {
    fprintf(stderr, "usage: %s TEST_SET.bin\n", prog);
    return 2;
  }

  test_set ts;
  if (!read_test_set(argv[1], &ts))
    return 2;

  /* The workspace: digits_WORKSPACE_SIZE bytes aligned to
     digits_WORKSPACE_ALIGNMENT (NULL when none is needed). Over-allocate and
     round up rather than use aligned_alloc, which not every C library has. */
  void *workspace_block = NULL;
  void *workspace = NULL;
  if (digits_WORKSPACE_SIZE > 0) {
    size_t align = digits_WORKSPACE_ALIGNMENT > 0 ? (size_t)digits_WORKSPACE_ALIGNMENT : 1;
    workspace_block = malloc((size_t)digits_WORKSPACE_SIZE + align - 1);
    if (!workspace_block) {
      fprintf(stderr, "%s: out of memory allocating a %llu-byte workspace\n",
              prog, (unsigned long long)digits_WORKSPACE_SIZE);
      free(ts.pixels);
      free(ts.labels);
      return 2;
    }
    uintptr_t p = (uintptr_t)workspace_block;
    workspace = (void *)((p + align - 1) / align * align);
  }

  float logits[NUM_CLASSES];
  uint32_t correct = 0;
  int rc = 0;
  for (uint32_t i = 0; i < ts.count; ++i) {
    const void *const inputs[1] = {ts.pixels + (size_t)i * NUM_PIXELS};
    void *const outputs[1] = {logits};
    int status = digits_run(inputs, outputs, workspace);
    if (status != KILN_STATUS_OK) {
      fprintf(stderr, "%s: digits_run failed on sample %lu: status %d (%s)\n",
              prog, (unsigned long)i, status, status_name(status));
      rc = 2;
      break;
    }
    int best = 0;
    for (int k = 1; k < NUM_CLASSES; ++k)
      if (logits[k] > logits[best])
        best = k;
    if (best == ts.labels[i])
      ++correct;
  }

  if (rc == 0)
    printf("accuracy: %.2f%% (%lu/%lu)\n", 100.0 * correct / ts.count,
           (unsigned long)correct, (unsigned long)ts.count);

  free(workspace_block);
  free(ts.pixels);
  free(ts.labels);
  return rc;
}
