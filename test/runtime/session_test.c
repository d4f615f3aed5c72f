//===- session_test.c - Tests for the kiln runtime ----------------*- C -*-===//
//
// Unit tests for kiln_runtime: a hand-written fake model (one float32 input
// and one float32 output of shape [2,3], y = x * 2, with a 64-byte workspace
// aligned to 16) run through the session helper, with every check the session
// makes provoked once; plus the status and dtype names and kiln_parallel_for
// with its thread pool (chunks cover the range once, run on other threads,
// nested loops serial, thousands of loops in a row, a forked child).
// Prints each failure and exits non-zero if there was any.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures = 0;

/// Under AddressSanitizer, lets the huge-workspace case see malloc return NULL
/// rather than abort; unused otherwise.
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1";
}

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond);       \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

//===----------------------------------------------------------------------===//
// The fake models
//===----------------------------------------------------------------------===//

static const int64_t kDims23[] = {2, 3};
static const int64_t kDimsDyn3[] = {-1, 3};

static int fake_run(const void *const *inputs, void *const *outputs,
                    void *workspace) {
  if (!inputs || !outputs || !inputs[0] || !outputs[0] || !workspace ||
      (uintptr_t)workspace % 16 != 0)
    return KILN_STATUS_INVALID_ARGUMENT;
  // Touch the whole workspace so that the sanitizers see its size.
  memset(workspace, 0xAB, 64);
  const float *x = inputs[0];
  float *y = outputs[0];
  for (int i = 0; i < 6; ++i)
    y[i] = x[i] * 2.0f;
  return KILN_STATUS_OK;
}

static const kiln_tensor_desc kFakeInputs[] = {
    {"x", 1, 2, kDims23, 6, 24},
};
static const kiln_tensor_desc kFakeOutputs[] = {
    {"y", 1, 2, kDims23, 6, 24},
};
static const kiln_model_desc kFake = {
    1, "fake", 1, 1, kFakeInputs, kFakeOutputs, 64, 16, fake_run,
    0, NULL, NULL, NULL, 0, NULL, NULL, NULL, /* abi_version 1: not read */
};

/// Needs a workspace aligned to 256, more than malloc gives.
static int wide_align_run(const void *const *inputs, void *const *outputs,
                          void *workspace) {
  (void)inputs;
  (void)outputs;
  if (!workspace || (uintptr_t)workspace % 256 != 0)
    return KILN_STATUS_INVALID_ARGUMENT;
  memset(workspace, 0, 1000);
  return KILN_STATUS_OK;
}
static const kiln_model_desc kWideAlign = {
    1, "wide", 1, 1, kFakeInputs, kFakeOutputs, 1000, 256, wide_align_run,
    0, NULL, NULL, NULL, 0, NULL, NULL, NULL, /* abi_version 1: not read */
};

/// Fails with an internal error; needs no workspace, so gets NULL.
static int failing_run(const void *const *inputs, void *const *outputs,
                       void *workspace) {
  (void)inputs;
  (void)outputs;
  return workspace ? KILN_STATUS_INVALID_ARGUMENT : KILN_STATUS_INTERNAL;
}
static const kiln_model_desc kFailing = {
    1, "failing", 1, 1, kFakeInputs, kFakeOutputs, 0, 0, failing_run,
    0, NULL, NULL, NULL, 0, NULL, NULL, NULL, /* abi_version 1: not read */
};

/// A dynamic batch dim: input and output [?,3].
static int dyn_run(const void *const *inputs, void *const *outputs,
                   void *workspace) {
  (void)inputs;
  (void)outputs;
  (void)workspace;
  return KILN_STATUS_OK;
}
static const kiln_tensor_desc kDynInputs[] = {
    {"x", 1, 2, kDimsDyn3, -1, -1},
};
static const kiln_tensor_desc kDynOutputs[] = {
    {"y", 1, 2, kDimsDyn3, -1, -1},
};
static const kiln_model_desc kDyn = {
    1, "dyn", 1, 1, kDynInputs, kDynOutputs, 0, 0, dyn_run,
    0, NULL, NULL, NULL, 0, NULL, NULL, NULL, /* abi_version 1: not read */
};

/// abi_version 2: dynamic dim 0 'batch', input [batch,3], output [batch,3],
/// y = 2x, run through run_dims; the last dims[0] it saw is kept.
static int64_t last_batch = -1;
static int dims_run_one(const void *const *inputs, void *const *outputs,
                        void *workspace) {
  (void)inputs;
  (void)outputs;
  (void)workspace;
  return KILN_STATUS_INTERNAL; // The session must call run_dims instead.
}
static int dims_run(const int64_t *dims, const void *const *inputs,
                    void *const *outputs, void *workspace) {
  (void)workspace;
  if (!dims || dims[0] < 0)
    return KILN_STATUS_INVALID_ARGUMENT;
  last_batch = dims[0];
  const float *x = inputs[0];
  float *y = outputs[0];
  for (int64_t i = 0; i < dims[0] * 3; ++i)
    y[i] = x[i] * 2.0f;
  return KILN_STATUS_OK;
}
static const int64_t kDimsBatch3[] = {-1, 3};
static const char *const kBatchName[] = {"batch"};
static const kiln_tensor_desc kBatchInputs[] = {
    {"x", 1, 2, kDimsBatch3, 3, 12},
};
static const kiln_tensor_desc kBatchOutputs[] = {
    {"y", 1, 2, kDimsBatch3, 3, 12},
};
static const kiln_model_desc kBatch = {
    2, "batched", 1, 1, kBatchInputs, kBatchOutputs, 0, 0, dims_run_one,
    1, kBatchName, dims_run, NULL, 0, NULL, NULL, NULL,
};

/// abi_version 3: as kBatch, but the workspace depends on the dim (64
/// bytes per item, -1 above 1000 items); run_dims fills it and checks its
/// alignment, which must be 32.
static int64_t ws_size_for(const int64_t *dims) {
  return dims[0] > 1000 ? -1 : dims[0] * 64;
}
static int ws_run(const int64_t *dims, const void *const *inputs,
                  void *const *outputs, void *workspace) {
  if ((dims[0] > 0 && !workspace) || (uintptr_t)workspace % 32 != 0)
    return KILN_STATUS_INVALID_ARGUMENT;
  for (int64_t i = 0; i < dims[0] * 64; ++i)
    ((unsigned char *)workspace)[i] = (unsigned char)i;
  return dims_run(dims, inputs, outputs, workspace);
}
static const kiln_model_desc kSized = {
    3, "sized", 1, 1, kBatchInputs, kBatchOutputs, -1, 32, dims_run_one,
    1, kBatchName, ws_run, ws_size_for,
    0, NULL, NULL, NULL, /* abi_version 3: not read */
};

/// abi_version 4: a key/value cache. Inputs past [P,2] and x [S,2], output
/// keys [P + S, 2] (dim expression 0) = past then x; no workspace.
static int cache_run(const int64_t *dims, const void *const *inputs,
                     void *const *outputs, void *workspace) {
  (void)workspace;
  const float *past = inputs[0], *x = inputs[1];
  float *keys = outputs[0];
  for (int64_t i = 0; i < dims[0] * 2; ++i)
    keys[i] = past[i];
  for (int64_t i = 0; i < dims[1] * 2; ++i)
    keys[dims[0] * 2 + i] = x[i];
  return KILN_STATUS_OK;
}
static const int64_t kDimsP2[] = {-1, 2}, kDimsS2[] = {-2, 2}, kDimsPS2[] = {-3, 2};
static const char *const kCacheNames[] = {"P", "S"};
static const int64_t kCacheExprs[] = {0, 1, 1};
static const char *const kCacheExprNames[] = {"P + S"};
static const kiln_tensor_desc kCacheInputs[] = {
    {"past", 1, 2, kDimsP2, 2, 8},
    {"x", 1, 2, kDimsS2, 2, 8},
};
static const kiln_tensor_desc kCacheOutputs[] = {
    {"keys", 1, 2, kDimsPS2, 2, 8},
};
static const kiln_model_desc kCache = {
    4, "cache", 2, 1, kCacheInputs, kCacheOutputs, 0, 16, dims_run_one,
    2, kCacheNames, cache_run, NULL,
    1, kCacheExprs, kCacheExprNames, NULL,
};

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static kiln_tensor tensor(void *data, int32_t dtype, int32_t rank,
                          const int64_t *dims, int64_t num_bytes) {
  kiln_tensor t = {data, dtype, rank, dims, num_bytes};
  return t;
}

/// Runs \p s with one input and one output and checks that it fails with
/// \p expected_status and a message containing each of the \p needles.
static void expect_failure(const char *what, kiln_session *s, kiln_tensor in,
                           kiln_tensor out, int expected_status,
                           const char *needle1, const char *needle2) {
  int status = kiln_session_run(s, &in, 1, &out, 1);
  const char *err = kiln_session_error(s);
  CHECK(status == expected_status, "%s: status %d (%s), want %d; message: %s",
        what, status, kiln_status_string(status), expected_status, err);
  CHECK(err && err[0], "%s: empty message", what);
  CHECK(!needle1 || strstr(err, needle1), "%s: message '%s' lacks '%s'", what,
        err, needle1);
  CHECK(!needle2 || strstr(err, needle2), "%s: message '%s' lacks '%s'", what,
        err, needle2);
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

static void test_correct_run(void) {
  kiln_session *s = NULL;
  int status = kiln_session_create(&kFake, &s);
  CHECK(status == KILN_STATUS_OK && s, "create: %d", status);
  if (!s)
    return;
  CHECK(strcmp(kiln_session_error(s), "") == 0,
        "fresh session has message '%s'", kiln_session_error(s));

  float x[6] = {1, 2, 3, -4, 0.5f, 0};
  float y[6] = {0};
  kiln_tensor in = tensor(x, 1, 2, kDims23, sizeof x);
  kiln_tensor out = tensor(y, 1, 2, kDims23, sizeof y);
  for (int round = 0; round < 2; ++round) {
    status = kiln_session_run(s, &in, 1, &out, 1);
    CHECK(status == KILN_STATUS_OK, "run: %d: %s", status,
          kiln_session_error(s));
    CHECK(strcmp(kiln_session_error(s), "") == 0, "message after success: %s",
          kiln_session_error(s));
    for (int i = 0; i < 6; ++i)
      CHECK(y[i] == x[i] * 2.0f, "y[%d] = %g, want %g", i, (double)y[i],
            (double)(x[i] * 2.0f));
  }

  // A larger buffer than needed is fine.
  float big[8] = {0};
  out = tensor(big, 1, 2, kDims23, sizeof big);
  status = kiln_session_run(s, &in, 1, &out, 1);
  CHECK(status == KILN_STATUS_OK, "run with a larger output buffer: %s",
        kiln_session_error(s));
  CHECK(big[5] == 0.0f && big[6] == 0.0f, "wrote past the output");

  // A failure, then a success clears the message.
  float y_bad[6];
  kiln_tensor bad = tensor(y_bad, 7, 2, kDims23, sizeof y_bad);
  CHECK(kiln_session_run(s, &in, 1, &bad, 1) != KILN_STATUS_OK, "int64 output");
  CHECK(kiln_session_error(s)[0], "no message after a failure");
  out = tensor(y, 1, 2, kDims23, sizeof y);
  CHECK(kiln_session_run(s, &in, 1, &out, 1) == KILN_STATUS_OK, "rerun: %s",
        kiln_session_error(s));
  CHECK(kiln_session_error(s)[0] == '\0', "message kept after a success: %s",
        kiln_session_error(s));
  kiln_session_destroy(s);
}

static void test_bad_tensors(void) {
  kiln_session *s = NULL;
  if (kiln_session_create(&kFake, &s) != KILN_STATUS_OK || !s) {
    CHECK(0, "create failed");
    return;
  }
  float x[6] = {0}, y[6] = {0};
  float wide[12] = {0};
  double xd[6] = {0};
  static const int64_t dims24[] = {2, 4};
  static const int64_t dims6[] = {6};
  static const int64_t dims231[] = {2, 3, 1};
  kiln_tensor in = tensor(x, 1, 2, kDims23, sizeof x);
  kiln_tensor out = tensor(y, 1, 2, kDims23, sizeof y);

  // The exact message of docs/abi.md's form.
  static const int64_t dims22[] = {2, 2};
  int status =
      kiln_session_run(s, &(kiln_tensor){x, 1, 2, dims22, 16}, 1, &out, 1);
  CHECK(status == KILN_STATUS_SHAPE_MISMATCH, "wrong dims: %d", status);
  CHECK(strcmp(kiln_session_error(s),
               "input 0 'x': expected float32 [2,3] (24 bytes), got float32 "
               "[2,2] (16 bytes)") == 0,
        "message: %s", kiln_session_error(s));

  expect_failure("wrong dims", s, tensor(wide, 1, 2, dims24, sizeof wide), out,
                 KILN_STATUS_SHAPE_MISMATCH, "input 0 'x'", "[2,4]");
  expect_failure("wrong rank", s, tensor(x, 1, 1, dims6, sizeof x), out,
                 KILN_STATUS_SHAPE_MISMATCH, "input 0 'x'", "[6]");
  expect_failure("wrong rank (3)", s, tensor(x, 1, 3, dims231, sizeof x), out,
                 KILN_STATUS_SHAPE_MISMATCH, "input 0 'x'", "[2,3,1]");
  expect_failure("scalar", s, tensor(x, 1, 0, NULL, sizeof x), out,
                 KILN_STATUS_SHAPE_MISMATCH, "input 0 'x'", "got float32 []");
  expect_failure("wrong dtype", s, tensor(xd, 11, 2, kDims23, sizeof xd), out,
                 KILN_STATUS_SHAPE_MISMATCH, "input 0 'x'", "got float64");
  expect_failure("unknown dtype", s, tensor(x, 1234, 2, kDims23, sizeof x), out,
                 KILN_STATUS_SHAPE_MISMATCH, "input 0 'x'", "dtype 1234");
  expect_failure("too-small input", s, tensor(x, 1, 2, kDims23, 20), out,
                 KILN_STATUS_SHAPE_MISMATCH, "input 0 'x'", "(20 bytes)");
  expect_failure("too-small output", s, in, tensor(y, 1, 2, kDims23, 23),
                 KILN_STATUS_SHAPE_MISMATCH, "output 0 'y'", "(23 bytes)");
  expect_failure("NULL input data", s, tensor(NULL, 1, 2, kDims23, sizeof x),
                 out, KILN_STATUS_INVALID_ARGUMENT, "input 0 'x'", "NULL");
  expect_failure("NULL output data", s, in,
                 tensor(NULL, 1, 2, kDims23, sizeof y),
                 KILN_STATUS_INVALID_ARGUMENT, "output 0 'y'", "NULL");
  expect_failure("NULL dims", s, tensor(x, 1, 2, NULL, sizeof x), out,
                 KILN_STATUS_INVALID_ARGUMENT, "input 0 'x'", "dims");
  expect_failure("negative rank", s, tensor(x, 1, -1, kDims23, sizeof x), out,
                 KILN_STATUS_INVALID_ARGUMENT, "input 0 'x'", "rank");
  expect_failure("misaligned input", s,
                 tensor((char *)wide + 1, 1, 2, kDims23, sizeof x), out,
                 KILN_STATUS_INVALID_ARGUMENT, "input 0 'x'", "aligned");

  // Wrong counts and NULL arrays.
  status = kiln_session_run(s, &in, 2, &out, 1);
  CHECK(status == KILN_STATUS_INVALID_ARGUMENT, "2 inputs: %d", status);
  CHECK(strstr(kiln_session_error(s), "expected 1 input ('x'), got 2"),
        "2 inputs: %s", kiln_session_error(s));
  status = kiln_session_run(s, &in, 0, &out, 1);
  CHECK(status == KILN_STATUS_INVALID_ARGUMENT, "0 inputs: %d", status);
  CHECK(strstr(kiln_session_error(s), "'x'"), "0 inputs: %s",
        kiln_session_error(s));
  status = kiln_session_run(s, &in, 1, &out, 0);
  CHECK(status == KILN_STATUS_INVALID_ARGUMENT, "0 outputs: %d", status);
  CHECK(strstr(kiln_session_error(s), "expected 1 output ('y'), got 0"),
        "0 outputs: %s", kiln_session_error(s));
  status = kiln_session_run(s, NULL, 1, &out, 1);
  CHECK(status == KILN_STATUS_INVALID_ARGUMENT, "NULL inputs: %d", status);
  CHECK(strstr(kiln_session_error(s), "inputs"), "NULL inputs: %s",
        kiln_session_error(s));
  status = kiln_session_run(s, &in, 1, NULL, 1);
  CHECK(status == KILN_STATUS_INVALID_ARGUMENT, "NULL outputs: %d", status);
  CHECK(strstr(kiln_session_error(s), "outputs"), "NULL outputs: %s",
        kiln_session_error(s));
  status = kiln_session_run(NULL, &in, 1, &out, 1);
  CHECK(status == KILN_STATUS_INVALID_ARGUMENT, "NULL session: %d", status);
  CHECK(kiln_session_error(NULL)[0], "NULL session has an empty message");
  kiln_session_destroy(s);
}

static void test_workspace_alignment(void) {
  // Several sessions, so that some blocks come back from malloc at addresses
  // that need padding.
  kiln_session *s[8] = {NULL};
  float x[6] = {0}, y[6] = {0};
  kiln_tensor in = tensor(x, 1, 2, kDims23, sizeof x);
  kiln_tensor out = tensor(y, 1, 2, kDims23, sizeof y);
  for (int i = 0; i < 8; ++i) {
    int status = kiln_session_create(&kWideAlign, &s[i]);
    CHECK(status == KILN_STATUS_OK && s[i], "create %d: %d", i, status);
    if (!s[i])
      continue;
    status = kiln_session_run(s[i], &in, 1, &out, 1);
    CHECK(status == KILN_STATUS_OK, "run %d: %d: %s", i, status,
          kiln_session_error(s[i]));
  }
  for (int i = 0; i < 8; ++i)
    kiln_session_destroy(s[i]);
}

static void test_run_failure(void) {
  kiln_session *s = NULL;
  if (kiln_session_create(&kFailing, &s) != KILN_STATUS_OK || !s) {
    CHECK(0, "create failed");
    return;
  }
  float x[6] = {0}, y[6] = {0};
  int status = kiln_session_run(s, &(kiln_tensor){x, 1, 2, kDims23, 24}, 1,
                                &(kiln_tensor){y, 1, 2, kDims23, 24}, 1);
  CHECK(status == KILN_STATUS_INTERNAL, "failing run: %d", status);
  CHECK(strstr(kiln_session_error(s), "failing") &&
            strstr(kiln_session_error(s), "internal error"),
        "failing run: %s", kiln_session_error(s));
  kiln_session_destroy(s);
}

static void test_dynamic_dims(void) {
  kiln_session *s = NULL;
  if (kiln_session_create(&kDyn, &s) != KILN_STATUS_OK || !s) {
    CHECK(0, "create failed");
    return;
  }
  float buf[15] = {0};
  static const int64_t dims53[] = {5, 3};
  static const int64_t dims54[] = {5, 4};
  kiln_tensor in = tensor(buf, 1, 2, dims53, sizeof buf);
  kiln_tensor out = tensor(buf, 1, 2, dims53, sizeof buf);
  int status = kiln_session_run(s, &in, 1, &out, 1);
  CHECK(status == KILN_STATUS_OK, "[5,3] for [?,3]: %s", kiln_session_error(s));
  expect_failure("dynamic too small", s, tensor(buf, 1, 2, dims53, 56), out,
                 KILN_STATUS_SHAPE_MISMATCH,
                 "expected float32 [?,3] (60 bytes)",
                 "got float32 [5,3] (56 bytes)");
  expect_failure("dynamic wrong static dim", s,
                 tensor(buf, 1, 2, dims54, sizeof buf), out,
                 KILN_STATUS_SHAPE_MISMATCH, "input 0 'x'", "[5,4]");
  kiln_session_destroy(s);
}

static void test_dynamic_workspace(void) {
  kiln_session *s = NULL;
  if (kiln_session_create(&kSized, &s) != KILN_STATUS_OK || !s) {
    CHECK(0, "create failed");
    return;
  }
  // Growing: 2 items, then 300, then 2 again (the larger block stays).
  static float x[300 * 3], y[300 * 3];
  static const int64_t dims2[] = {2, 3}, dims300[] = {300, 3}, dims2000[] = {2000, 3};
  const int64_t *each[] = {dims2, dims300, dims2};
  for (int k = 0; k < 3; ++k) {
    int status = kiln_session_run(s, &(kiln_tensor){x, 1, 2, each[k], sizeof x}, 1,
                                  &(kiln_tensor){y, 1, 2, each[k], sizeof y}, 1);
    CHECK(status == KILN_STATUS_OK && last_batch == each[k][0],
          "run %d with %lld items: status %d: %s", k, (long long)each[k][0], status,
          kiln_session_error(s));
  }
  static float big[2000 * 3];
  expect_failure("no workspace size for the dims", s,
                 tensor(big, 1, 2, dims2000, sizeof big), tensor(big, 1, 2, dims2000, sizeof big),
                 KILN_STATUS_SHAPE_MISMATCH, "model 'sized'", "cannot run with these dynamic dims");
  kiln_session_destroy(s);
  kiln_model_desc bad = kSized;
  bad.workspace_size_for = NULL;
  CHECK(kiln_session_create(&bad, &s) == KILN_STATUS_INVALID_ARGUMENT && !s,
        "a dynamic workspace without workspace_size_for");
}

static void test_run_dims(void) {
  kiln_session *s = NULL;
  if (kiln_session_create(&kBatch, &s) != KILN_STATUS_OK || !s) {
    CHECK(0, "create failed");
    return;
  }
  float x[12], y[12] = {0};
  for (int i = 0; i < 12; ++i)
    x[i] = (float)i;
  static const int64_t dims43[] = {4, 3};
  static const int64_t dims33[] = {3, 3};
  kiln_tensor in = tensor(x, 1, 2, dims43, sizeof x);
  kiln_tensor out = tensor(y, 1, 2, dims43, sizeof y);
  int status = kiln_session_run(s, &in, 1, &out, 1);
  CHECK(status == KILN_STATUS_OK, "[4,3]: %s", kiln_session_error(s));
  CHECK(last_batch == 4, "run_dims got batch %lld, want 4", (long long)last_batch);
  CHECK(y[11] == 22.0f, "y[11] = %g, want 22", (double)y[11]);
  static const int64_t dims03[] = {0, 3};
  status = kiln_session_run(s, &(kiln_tensor){NULL, 1, 2, dims03, 0}, 1,
                            &(kiln_tensor){NULL, 1, 2, dims03, 0}, 1);
  CHECK(status == KILN_STATUS_OK && last_batch == 0,
        "batch 0 with NULL data: status %d, batch %lld: %s", status,
        (long long)last_batch, kiln_session_error(s));
  expect_failure("NULL data with items", s, tensor(NULL, 1, 2, dims43, 48), out,
                 KILN_STATUS_INVALID_ARGUMENT, "input 0 'x'", "data is NULL");
  expect_failure("batch differs between tensors", s, in,
                 tensor(y, 1, 2, dims33, sizeof y), KILN_STATUS_SHAPE_MISMATCH,
                 "output 0 'y': dim 0 is 3",
                 "the dynamic dim 'batch' is 4 in an earlier tensor");
  expect_failure("batch larger than the buffer", s,
                 tensor(x, 1, 2, dims43, 36), out, KILN_STATUS_SHAPE_MISMATCH,
                 "expected float32 [?,3] (48 bytes)", "(36 bytes)");
  kiln_session_destroy(s);
  kiln_model_desc bad = kBatch;
  bad.run_dims = NULL;
  CHECK(kiln_session_create(&bad, &s) == KILN_STATUS_INVALID_ARGUMENT && !s,
        "dynamic dims without run_dims");
  bad = kBatch;
  bad.num_dynamic_dims = KILN_MAX_DYNAMIC_DIMS + 1;
  CHECK(kiln_session_create(&bad, &s) == KILN_STATUS_UNSUPPORTED && !s,
        "too many dynamic dims");
}

static void test_dim_exprs(void) {
  int64_t shape[2] = {0, 0};
  static const int64_t values[] = {3, 2};
  CHECK(kiln_tensor_dims(&kCache, &kCacheOutputs[0], values, shape) == 10 &&
            shape[0] == 5 && shape[1] == 2,
        "keys' dims for P = 3, S = 2: [%lld,%lld]", (long long)shape[0],
        (long long)shape[1]);
  CHECK(kiln_tensor_dims(&kCache, &kCacheInputs[1], values, shape) == 4 &&
            shape[0] == 2,
        "x's dims for S = 2");
  CHECK(kiln_tensor_dims(&kCache, &kCacheOutputs[0], NULL, shape) == -1,
        "expression without dims");
  static const int64_t negative[] = {3, -1};
  CHECK(kiln_tensor_dims(&kCache, &kCacheOutputs[0], negative, shape) == -1,
        "negative dim");
  static const int64_t huge[] = {INT64_MAX, 1};
  CHECK(kiln_tensor_dims(&kCache, &kCacheOutputs[0], huge, shape) == -1,
        "overflowing expression");

  kiln_session *s = NULL;
  if (kiln_session_create(&kCache, &s) != KILN_STATUS_OK || !s) {
    CHECK(0, "create failed");
    return;
  }
  float past[6] = {1, 2, 3, 4, 5, 6}, x[4] = {7, 8, 9, 10}, keys[10] = {0};
  static const int64_t d32[] = {3, 2}, d22[] = {2, 2}, d52[] = {5, 2}, d42[] = {4, 2};
  kiln_tensor ins[2] = {tensor(past, 1, 2, d32, sizeof past),
                        tensor(x, 1, 2, d22, sizeof x)};
  kiln_tensor out = tensor(keys, 1, 2, d52, sizeof keys);
  int status = kiln_session_run(s, ins, 2, &out, 1);
  CHECK(status == KILN_STATUS_OK, "P 3, S 2: %s", kiln_session_error(s));
  for (int i = 0; i < 10; ++i)
    CHECK(keys[i] == (float)(i + 1), "keys[%d] = %g", i, (double)keys[i]);
  out = tensor(keys, 1, 2, d42, sizeof keys);
  status = kiln_session_run(s, ins, 2, &out, 1);
  CHECK(status == KILN_STATUS_SHAPE_MISMATCH &&
            strstr(kiln_session_error(s), "output 0 'keys': dim 0 is 4, but P + S is 5"),
        "keys of 4 rows: status %d: %s", status, kiln_session_error(s));
  kiln_session_destroy(s);

  // A dim naming an expression the model does not have.
  static const int64_t beyond[] = {-4, 2};
  kiln_tensor_desc outputs[1] = {kCacheOutputs[0]};
  outputs[0].dims = beyond;
  kiln_model_desc bad = kCache;
  bad.outputs = outputs;
  CHECK(kiln_session_create(&bad, &s) == KILN_STATUS_INVALID_ARGUMENT && !s,
        "a dim beyond the expressions");
  bad = kCache;
  bad.dim_exprs = NULL;
  CHECK(kiln_session_create(&bad, &s) == KILN_STATUS_INVALID_ARGUMENT && !s,
        "expressions without coefficients");
}

/// abi_version 5: dims H, W; expression 0 is floor((H - 1) / 2), 1 is
/// floor((e0 + 1) / 2) (a floor of expression 0), 2 is 4 H' W' (e0 times
/// W'': e1 and dim 1 is not used, a product of expression 0 and dim W).
static const int64_t kMapExprs[3 * 3] = {0};
static const int64_t kMapOps[] = {1, 0, -1, 2, /* floor((H - 1) / 2) */
                                  1, 2, 1, 2,  /* floor((e0 + 1) / 2) */
                                  2, 4, 2, 1}; /* 4 e0 W */
static const char *const kMapExprNames[] = {"floor((H - 1)/2)", "floor((H + 1)/4)",
                                            "4*floor((H - 1)/2)*W"};
static const int64_t kDimsMap[] = {-3, -4, -5};
static const kiln_tensor_desc kMapOutputs[] = {
    {"map", 1, 3, kDimsMap, 1, 4},
};
static const kiln_model_desc kMap = {
    5, "map", 0, 1, NULL, kMapOutputs, 0, 16, dims_run_one,
    2, kCacheNames, cache_run, NULL,
    3, kMapExprs, kMapExprNames, kMapOps,
};

static void test_floor_and_product_exprs(void) {
  int64_t shape[3] = {0, 0, 0};
  static const int64_t values[] = {9, 5};
  CHECK(kiln_tensor_dims(&kMap, &kMapOutputs[0], values, shape) == 4 * 2 * 80 &&
            shape[0] == 4 && shape[1] == 2 && shape[2] == 80,
        "map's dims for H = 9, W = 5: [%lld,%lld,%lld]", (long long)shape[0],
        (long long)shape[1], (long long)shape[2]);
  // H = 0: floor((0 - 1) / 2) names no size.
  static const int64_t empty[] = {0, 5};
  CHECK(kiln_tensor_dims(&kMap, &kMapOutputs[0], empty, shape) == -1, "H = 0");
  static const int64_t huge[] = {INT64_MAX, INT64_MAX};
  CHECK(kiln_tensor_dims(&kMap, &kMapOutputs[0], huge, shape) == -1, "overflowing product");
  // An operation naming itself or a later expression, or of no kind.
  int64_t ops[12];
  memcpy(ops, kMapOps, sizeof ops);
  ops[5] = 3; // expression 1 of expression 1
  kiln_model_desc bad = kMap;
  bad.dim_expr_ops = ops;
  CHECK(kiln_tensor_dims(&bad, &kMapOutputs[0], values, shape) == -1, "a floor of itself");
  memcpy(ops, kMapOps, sizeof ops);
  ops[8] = 7;
  CHECK(kiln_tensor_dims(&bad, &kMapOutputs[0], values, shape) == -1, "an unknown kind");
  memcpy(ops, kMapOps, sizeof ops);
  ops[3] = 0;
  CHECK(kiln_tensor_dims(&bad, &kMapOutputs[0], values, shape) == -1, "a floor by 0");
  // Before abi_version 5 the operations are not read: every expression is
  // its (zero) row of coefficients.
  bad = kMap;
  bad.abi_version = 4;
  CHECK(kiln_tensor_dims(&bad, &kMapOutputs[0], values, shape) == 0 && shape[0] == 0,
        "abi_version 4 reads sums only");
}

static void test_create_failures(void) {
  kiln_session *s = (kiln_session *)&s; // Must be reset to NULL.
  CHECK(kiln_session_create(NULL, &s) == KILN_STATUS_INVALID_ARGUMENT && !s,
        "NULL model");
  CHECK(kiln_session_create(&kFake, NULL) == KILN_STATUS_INVALID_ARGUMENT,
        "NULL out");
  kiln_model_desc bad = kFake;
  bad.abi_version = KILN_ABI_VERSION + 1;
  CHECK(kiln_session_create(&bad, &s) == KILN_STATUS_UNSUPPORTED && !s,
        "abi version past the runtime's");
  bad = kFake;
  bad.workspace_alignment = 24;
  CHECK(kiln_session_create(&bad, &s) == KILN_STATUS_INVALID_ARGUMENT && !s,
        "alignment 24");
  bad = kFake;
  bad.run = NULL;
  CHECK(kiln_session_create(&bad, &s) == KILN_STATUS_INVALID_ARGUMENT && !s,
        "NULL run");
  bad = kFake;
  bad.num_inputs = -1;
  CHECK(kiln_session_create(&bad, &s) == KILN_STATUS_INVALID_ARGUMENT && !s,
        "negative input count");
  bad = kFake;
  bad.workspace_size = INT64_MAX;
  CHECK(kiln_session_create(&bad, &s) == KILN_STATUS_OUT_OF_MEMORY && !s,
        "huge workspace");
  kiln_session_destroy(NULL);
}

static void test_status_and_dtype_names(void) {
  for (int status = KILN_STATUS_OK; status <= KILN_STATUS_INTERNAL; ++status) {
    const char *text = kiln_status_string(status);
    CHECK(text && text[0], "status %d has no string", status);
  }
  CHECK(strcmp(kiln_status_string(KILN_STATUS_SHAPE_MISMATCH),
               "shape mismatch") == 0,
        "shape mismatch");
  CHECK(kiln_status_string(99)[0] && kiln_status_string(-1)[0],
        "unknown status");

  static const struct {
    int32_t dtype;
    const char *name;
    int64_t size;
  } kCases[] = {
      {1, "float32", 4},
      {2, "uint8", 1},
      {3, "int8", 1},
      {4, "uint16", 2},
      {5, "int16", 2},
      {6, "int32", 4},
      {7, "int64", 8},
      {8, "string", (int64_t)sizeof(char *)},
      {9, "bool", 1},
      {10, "float16", 2},
      {11, "float64", 8},
      {12, "uint32", 4},
      {13, "uint64", 8},
      {16, "bfloat16", 2},
      {0, "dtype 0", 0},
      {31, "dtype 31", 0},
      {-3, "unknown dtype", 0},
      {1000, "unknown dtype", 0},
  };
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; ++i) {
    CHECK(strcmp(kiln_dtype_name(kCases[i].dtype), kCases[i].name) == 0,
          "dtype %d: name '%s', want '%s'", (int)kCases[i].dtype,
          kiln_dtype_name(kCases[i].dtype), kCases[i].name);
    CHECK(kiln_dtype_size(kCases[i].dtype) == kCases[i].size,
          "dtype %d: size %lld, want %lld", (int)kCases[i].dtype,
          (long long)kiln_dtype_size(kCases[i].dtype),
          (long long)kCases[i].size);
  }
}

typedef struct cover_ctx {
  int hits[100];
  _Atomic int calls;
  _Atomic int bad_range;
  _Atomic int other_thread; /* chunks run off the calling thread */
  pthread_t caller;
  int nested;               /* each chunk starts a parallel loop itself */
  _Atomic int nested_bad;
} cover_ctx;

static void count_all(void *ctx, int64_t begin, int64_t end) {
  _Atomic int *count = ctx;
  atomic_fetch_add(count, (int)(end - begin));
}

static void cover(void *ctx, int64_t begin, int64_t end) {
  cover_ctx *c = ctx;
  atomic_fetch_add(&c->calls, 1);
  if (!pthread_equal(pthread_self(), c->caller))
    atomic_store(&c->other_thread, 1);
  if (begin < 0 || end > 100 || begin >= end) {
    atomic_store(&c->bad_range, 1);
    return;
  }
  for (int64_t i = begin; i < end; ++i)
    ++c->hits[i];
  if (c->nested) {
    /* Runs serially on this thread: one call over the whole range. */
    _Atomic int count = 0;
    kiln_parallel_for(10, count_all, &count);
    if (atomic_load(&count) != 10)
      atomic_store(&c->nested_bad, 1);
  }
}

/// Every index of [0, n) covered exactly once, by at most 16 chunks per
/// thread (one when threads is 1), off the calling thread somewhere when
/// threads and n allow it.
static void check_cover(int threads, int64_t n, int nested) {
  cover_ctx c;
  memset(&c, 0, sizeof c);
  c.caller = pthread_self();
  c.nested = nested;
  kiln_parallel_for(n, cover, &c);
  CHECK(!c.bad_range, "threads=%d n=%lld: a chunk outside [0,n)", threads, (long long)n);
  for (int64_t i = 0; i < 100; ++i)
    CHECK(c.hits[i] == (i < n ? 1 : 0), "threads=%d n=%lld: index %lld hit %d times",
          threads, (long long)n, (long long)i, c.hits[i]);
  int calls = atomic_load(&c.calls);
  CHECK(n > 0 || calls == 0, "n=%lld: fn called", (long long)n);
  /* 16 blocks per thread (KILN_BLOCKS_PER_THREAD in parallel.c). */
  CHECK(calls <= threads * 16, "threads=%d n=%lld: %d chunks", threads, (long long)n, calls);
  CHECK(threads > 1 || n <= 0 || calls == 1, "one thread, n=%lld: %d chunks", (long long)n,
        calls);
  CHECK(!(threads > 1 && n > 1) || atomic_load(&c.other_thread),
        "threads=%d n=%lld: every chunk ran on the calling thread", threads, (long long)n);
  CHECK(!atomic_load(&c.nested_bad), "threads=%d: a nested loop missed indices", threads);
}

static void test_parallel_for(void) {
  static const int64_t kSizes[] = {0, 1, 2, 3, 7, 100};
  static const int kThreads[] = {1, 2, 4, 3, 1};
  CHECK(kiln_get_num_threads() == 1, "default threads %d, want 1 (KILN_NUM_THREADS unset)",
        kiln_get_num_threads());
  for (size_t t = 0; t < sizeof kThreads / sizeof kThreads[0]; ++t) {
    kiln_set_num_threads(kThreads[t]);
    CHECK(kiln_get_num_threads() == kThreads[t], "set %d threads, got %d", kThreads[t],
          kiln_get_num_threads());
    for (size_t k = 0; k < sizeof kSizes / sizeof kSizes[0]; ++k)
      check_cover(kThreads[t], kSizes[k], 0);
    check_cover(kThreads[t], 100, 1);
    cover_ctx c;
    memset(&c, 0, sizeof c);
    c.caller = pthread_self();
    kiln_parallel_for(-5, cover, &c);
    CHECK(atomic_load(&c.calls) == 0, "n=-5: fn called");
  }
  /* Many short loops in a row: every one complete before the next. */
  kiln_set_num_threads(2);
  int bad = 0;
  for (int i = 0; i < 20000 && !bad; ++i) {
    _Atomic int count = 0;
    kiln_parallel_for(64, count_all, &count);
    bad = atomic_load(&count) != 64;
  }
  CHECK(!bad, "a loop of 20000 returned before all its chunks ran");
  /* A forked child has no workers of its own yet: it must start them. */
  pid_t child = fork();
  if (child == 0) {
    _Atomic int count = 0;
    kiln_parallel_for(64, count_all, &count);
    _exit(atomic_load(&count) == 64 ? 0 : 1);
  }
  int status = -1;
  CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0,
        "a parallel loop in a forked child failed (status %d)", status);
  kiln_set_num_threads(0);
  CHECK(kiln_get_num_threads() == 1, "0 threads clamps to 1, got %d", kiln_get_num_threads());
  kiln_set_num_threads(1);
}

/* A chunk that makes a string in the run's arena (parallel.c hands the
   caller's arena to its workers). */
static void make_strings(void *ctx, int64_t begin, int64_t end) {
  uintptr_t *out = (uintptr_t *)ctx;
  for (int64_t i = begin; i < end; ++i)
    out[i] = kiln_string_from_i64(i);
}

static void test_strings(void) {
  kiln_string_arena arena;
  kiln_string_run_begin(&arena);
  uintptr_t up = kiln_string_change_case((uintptr_t) "Stra\xc3\x9f" "e \xc3\xa4\xce\xb1x", 1);
  CHECK(strcmp((const char *)up, "STRA\xc3\x9f" "E \xc3\x84\xce\x91X") == 0,
        "upper case: '%s'", (const char *)up);
  uintptr_t low = kiln_string_change_case((uintptr_t) "\xc3\x84\xff!", 0);
  CHECK(strcmp((const char *)low, "\xc3\xa4\xff!") == 0, "lower case keeps invalid bytes");
  static const char list[] = "the\0\0\xc3\x84rger";
  CHECK(kiln_string_in_list((uintptr_t) "THE", (uintptr_t)list, 3, 1), "'THE' in list, any case");
  CHECK(!kiln_string_in_list((uintptr_t) "THE", (uintptr_t)list, 3, 0), "'THE' not in list");
  CHECK(kiln_string_in_list((uintptr_t) "", (uintptr_t)list, 3, 0), "'' in list");
  CHECK(kiln_string_in_list((uintptr_t) "\xc3\xa4RGER", (uintptr_t)list, 3, 1),
        "non-ASCII stopword ignoring case");
  CHECK(!kiln_string_in_list((uintptr_t) "\xc3\xa4RGER", (uintptr_t)list, 2, 1),
        "count limits the list");
  CHECK(kiln_string_to_i64(0) == 0 && kiln_string_to_f32((uintptr_t) "x") != kiln_string_to_f32((uintptr_t) "x"),
        "NULL reads as \"\"; text that is no number gives NaN");
  CHECK(strcmp((const char *)kiln_string_from_f64(0.1), "0.1") == 0 &&
            strcmp((const char *)kiln_string_from_f64(1e300), "1e+300") == 0 &&
            strcmp((const char *)kiln_string_from_u64(UINT64_MAX), "18446744073709551615") == 0,
        "number texts");
  /* Strings made on worker threads belong to this run too. */
  kiln_set_num_threads(2);
  uintptr_t made[64];
  kiln_parallel_for(64, make_strings, made);
  kiln_set_num_threads(1);
  int ok = 1;
  for (int i = 0; i < 64; ++i) {
    char want[8];
    snprintf(want, sizeof want, "%d", i);
    ok &= strcmp((const char *)made[i], want) == 0;
  }
  CHECK(ok, "strings made in a parallel loop");
  char *copy = (char *)kiln_string_export(up);
  CHECK(kiln_string_run_end(&arena) == KILN_STATUS_OK, "run end: ok");
  /* The export outlives the run; the caller frees it. */
  CHECK(copy && strcmp(copy, "STRA\xc3\x9f" "E \xc3\x84\xce\x91X") == 0, "exported copy");
  free(copy);
  /* Outside a run: "" and no allocation. */
  CHECK(strcmp((const char *)kiln_string_from_i64(7), "") == 0, "no arena: ''");
}

int main(void) {
  test_strings();
  test_correct_run();
  test_bad_tensors();
  test_workspace_alignment();
  test_run_failure();
  test_dynamic_dims();
  test_run_dims();
  test_dynamic_workspace();
  test_dim_exprs();
  test_floor_and_product_exprs();
  test_create_failures();
  test_status_and_dtype_names();
  test_parallel_for();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("kiln runtime: all checks passed\n");
  return 0;
}
