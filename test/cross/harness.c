/* Runs one kiln-compiled model (compiled with --name model) on raw tensors,
 * on a cross target: under qemu-aarch64, or as Cortex-M firmware under
 * qemu-system-arm with semihosting (test/firmware). conformance.py writes
 * DIR/in<i>.bin, the dense bytes of input i in the order of
 * model_describe()'s inputs; the harness writes DIR/out<i>.bin the same
 * way and exits with 0, or 2 on any error (said on stderr).
 *
 *   usage: harness DIR */
#include <kiln/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const kiln_model_desc *model_describe(void);

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "harness: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return 2;
}

/* A buffer of `bytes` (at least 1) aligned to 64. */
static void *aligned_block(size_t bytes, void **block) {
  *block = malloc(bytes + 64);
  if (!*block)
    return NULL;
  uintptr_t p = (uintptr_t)*block;
  return (void *)((p + 63) / 64 * 64);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return fail("usage: harness DIR", NULL);
  const char *dir = argv[1];
  const kiln_model_desc *m = model_describe();
  if (!m || m->abi_version != KILN_ABI_VERSION)
    return fail("unexpected model descriptor", NULL);
  int n = m->num_inputs + m->num_outputs;
  void **blocks = calloc((size_t)n + 1, sizeof(void *));
  void **buffers = calloc((size_t)n + 1, sizeof(void *));
  if (!blocks || !buffers)
    return fail("out of memory", NULL);
  char path[512];
  for (int i = 0; i < m->num_inputs; ++i) {
    size_t bytes = (size_t)m->inputs[i].num_bytes;
    buffers[i] = aligned_block(bytes, &blocks[i]);
    if (!buffers[i])
      return fail("out of memory", m->inputs[i].name);
    snprintf(path, sizeof path, "%s/in%d.bin", dir, i);
    FILE *f = fopen(path, "rb");
    if (!f)
      return fail("cannot open", path);
    size_t got = bytes ? fread(buffers[i], 1, bytes, f) : 0;
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != bytes || extra)
      return fail("input file has the wrong size", path);
  }
  for (int i = 0; i < m->num_outputs; ++i) {
    size_t bytes = (size_t)m->outputs[i].num_bytes;
    buffers[m->num_inputs + i] = aligned_block(bytes, &blocks[m->num_inputs + i]);
    if (!buffers[m->num_inputs + i])
      return fail("out of memory", m->outputs[i].name);
    memset(buffers[m->num_inputs + i], 0, bytes);
  }
  void *workspace_block = NULL, *workspace = NULL;
  if (m->workspace_size > 0) {
    workspace = aligned_block((size_t)m->workspace_size, &workspace_block);
    if (!workspace)
      return fail("out of memory for the workspace", NULL);
  }
  int status = m->run((const void *const *)buffers, buffers + m->num_inputs, workspace);
  if (status != KILN_STATUS_OK) {
    fprintf(stderr, "harness: model_run returned status %d\n", status);
    return 2;
  }
  for (int i = 0; i < m->num_outputs; ++i) {
    size_t bytes = (size_t)m->outputs[i].num_bytes;
    snprintf(path, sizeof path, "%s/out%d.bin", dir, i);
    FILE *f = fopen(path, "wb");
    if (!f)
      return fail("cannot create", path);
    size_t put = bytes ? fwrite(buffers[m->num_inputs + i], 1, bytes, f) : 0;
    if (fclose(f) != 0 || put != bytes)
      return fail("cannot write", path);
  }
  for (int i = 0; i < n; ++i)
    free(blocks[i]);
  free(blocks);
  free(buffers);
  free(workspace_block);
  return 0;
}
