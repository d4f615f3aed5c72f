//===- runtime.h - kiln's C runtime API ---------------------------*- C -*-===//
//
// The one public header of kiln_runtime, the small C11 library that code
// compiled by kiln links against and that hosts may use to run it. It holds:
//
//   - the status codes and the model descriptor, defined exactly as in every
//     generated model header (docs/abi.md) and under the same include guards,
//     so this header and any number of model headers can be included together;
//   - kiln_parallel_for, the hook generated code calls for parallel loops;
//   - the session helper: owns a model's workspace and checks every tensor
//     against the descriptor before calling the model's run function;
//   - small dtype helpers for tools;
//   - the hooks generated code calls for string tensors.
//
// Self-contained: includes only <stddef.h> and <stdint.h>; usable from C and
// C++. No function here aborts; failures are reported as kiln_status codes.
// The only global mutable state is the thread pool behind kiln_parallel_for;
// only kiln_session_create and the string hooks allocate.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Status codes returned by generated `NAME_run` functions and by the runtime.
/// The same definition appears in every generated model header.
#ifndef KILN_STATUS_DEFINED
#define KILN_STATUS_DEFINED
typedef enum kiln_status {
  KILN_STATUS_OK = 0,
  KILN_STATUS_INVALID_ARGUMENT = 1, /* NULL pointer, misaligned workspace   */
  KILN_STATUS_SHAPE_MISMATCH = 2,   /* a tensor's dtype/shape/size is wrong  */
  KILN_STATUS_OUT_OF_MEMORY = 3,
  KILN_STATUS_UNSUPPORTED = 4,
  KILN_STATUS_INTERNAL = 5,
} kiln_status;
#endif /* KILN_STATUS_DEFINED */

/// The descriptor of one compiled model (`NAME_describe()`, `NAME_kiln_desc`)
/// and of each of its input and output tensors. The same definitions appear
/// in every generated model header.
#ifndef KILN_MODEL_DESC_DEFINED
#define KILN_MODEL_DESC_DEFINED
typedef struct kiln_tensor_desc {
  const char *name;
  int32_t dtype;          /* ONNX TensorProto.DataType: 1 float, 7 int64... */
  int32_t rank;
  const int64_t *dims;    /* rank entries; -1-k for dynamic dim k, and
                             -1-(num_dynamic_dims + j) for dim expression j */
  int64_t num_elements;
  int64_t num_bytes;
} kiln_tensor_desc;

typedef struct kiln_model_desc {
  uint32_t abi_version;   /* 5 (4: without dim_expr_ops; 3: without the dim
                             expressions; 2: without
                             workspace_size_for either; 1: without the
                             fields from num_dynamic_dims either) */
  const char *name;       /* NAME */
  int32_t num_inputs;
  int32_t num_outputs;
  const kiln_tensor_desc *inputs;
  const kiln_tensor_desc *outputs;
  int64_t workspace_size;
  int64_t workspace_alignment;
  int (*run)(const void *const *inputs, void *const *outputs, void *workspace);
  /* From abi_version 2: */
  int32_t num_dynamic_dims;            /* values passed to run_dims        */
  const char *const *dynamic_dim_names;
  int (*run_dims)(const int64_t *dims, const void *const *inputs,
                  void *const *outputs, void *workspace);
  /* From abi_version 3: the workspace's bytes for the dynamic dims' values
     (-1 for values the model cannot run with); workspace_size is -1 when it
     depends on them. */
  int64_t (*workspace_size_for)(const int64_t *dims);
  /* From abi_version 4: output dims that are sums of the dynamic dims (a
     key/value cache of past + seq tokens). Expression j is row j of
     dim_exprs, 1 + num_dynamic_dims entries c: its value is c[0] + c[1]
     dims[0] + c[2] dims[1] + ...; dim_expr_names[j] writes it out. */
  int32_t num_dim_exprs;
  const int64_t *dim_exprs;
  const char *const *dim_expr_names;
  /* From abi_version 5: how each dim expression is computed, 4 entries
     per expression j: {0, 0, 0, 0} for the sum of row j of dim_exprs;
     {1, x, a, s} for floor((d(x) + a) / s), a conv's or pool's output
     size; {2, c, x, y} for c d(x) d(y), dims merged by a Reshape. x and y
     index the dynamic dims and then the expressions (num_dynamic_dims + i
     for expression i < j), as -1-x does in a tensor's dims. NULL: every
     expression is a sum. */
  const int64_t *dim_expr_ops;
} kiln_model_desc;
#endif /* KILN_MODEL_DESC_DEFINED */

/// The descriptor ABI version kiln writes; the runtime also reads versions 1
/// (no dynamic dims, no run_dims), 2 (no workspace_size_for), 3 (no dim
/// expressions) and 4 (dim expressions that are sums only).
#define KILN_ABI_VERSION 5

/// The most dynamic dims a session handles.
#define KILN_MAX_DYNAMIC_DIMS 8

/// A short lowercase description of \p status ("ok", "shape mismatch", ...);
/// "unknown status" for a value that is not a kiln_status. Never NULL; the
/// string is static.
const char *kiln_status_string(int status);

/// The name of an ONNX TensorProto.DataType: "float32", "int64", "uint8",
/// "bool", "float16", "float64", "int32", "int8", "int16", "uint16",
/// "uint32", "uint64", "bfloat16", and ONNX's other types ("string",
/// "complex64", "float8e4m3fn", "int4", ...); "dtype N" for any other code N
/// in [0, 32), "unknown dtype" beyond. Never NULL; the string is static.
const char *kiln_dtype_name(int32_t dtype);

/// Bytes per element of an ONNX TensorProto.DataType; 0 for an unknown code
/// and for types without a whole-byte element size (int4, uint4,
/// float4e2m1). A string element is a pointer: sizeof(char *).
int64_t kiln_dtype_size(int32_t dtype);

/// The actual dims of tensor \p t of \p model (one of its inputs or
/// outputs) for the dynamic dims' values \p dims (model->num_dynamic_dims
/// entries): writes t->rank dims to \p out, each static dim as it is, a
/// dynamic dim's value and a dim expression's (abi_version 4), and returns
/// the number of elements. Returns -1 when a dim names no dynamic dim or
/// expression of the model, or a value is negative or overflows int64
/// (\p out is then partly written). \p dims may be NULL for a tensor
/// without dynamic dims.
int64_t kiln_tensor_dims(const kiln_model_desc *model,
                         const kiln_tensor_desc *t, const int64_t *dims,
                         int64_t *out);

/// Calls \p fn over the index range [0, \p n), split into chunks
/// [begin, end) that together cover every index exactly once; \p ctx is
/// passed through. The hook generated code calls for parallel loops. With
/// more than one thread (kiln_set_num_threads, else KILN_NUM_THREADS) the
/// chunks run on a pool of worker threads, started at the first such call
/// and kept; the calling thread runs the first chunk and returns when all
/// are done. One thread: one call fn(ctx, 0, n) on the calling thread.
/// Nothing is called when n <= 0.
void kiln_parallel_for(int64_t n,
                       void (*fn)(void *ctx, int64_t begin, int64_t end),
                       void *ctx);

/// Sets the number of threads parallel loops use, the calling thread
/// included (clamped to [1, 256]); 1 means no threads at all. Takes effect
/// at the next parallel loop. Without it the count comes from the
/// KILN_NUM_THREADS environment variable, read once, else 1.
void kiln_set_num_threads(int n);

/// The number of threads parallel loops use (1 where the runtime was built
/// without POSIX threads).
int kiln_get_num_threads(void);

/// String tensors. An element is a `char *` to NUL-terminated UTF-8 (an
/// input element may be NULL, read as ""); kiln_dtype_size(8) is the size of
/// that pointer. A model reads its input strings during the call only. Each
/// string of a string output is a new malloc'd copy that the caller owns
/// and releases with free(), once the run returned KILN_STATUS_OK (after a
/// failed run the outputs own nothing).
///
/// The hooks below are what generated code calls (strings as uintptr_t);
/// hosts do not call them. Strings made during a run belong to the run's
/// arena, opened and closed by the model's entry point around its code.
typedef struct kiln_string_arena {
  void *owned;    /* strings the run made, freed at its end            */
  void *exported; /* the outputs' strings, freed only if the run fails */
  void *previous; /* the thread's arena before this run               */
  int64_t failed; /* non-zero once an allocation failed               */
} kiln_string_arena;

void kiln_string_run_begin(kiln_string_arena *arena);
/// Frees the run's strings; KILN_STATUS_OK, or KILN_STATUS_OUT_OF_MEMORY
/// (and the exported strings freed too) if an allocation failed.
int kiln_string_run_end(kiln_string_arena *arena);
uintptr_t kiln_string_export(uintptr_t s);
uintptr_t kiln_string_from_f32(float x);
uintptr_t kiln_string_from_f64(double x);
uintptr_t kiln_string_from_i64(int64_t x);
uintptr_t kiln_string_from_u64(uint64_t x);
float kiln_string_to_f32(uintptr_t s);
double kiln_string_to_f64(uintptr_t s);
int64_t kiln_string_to_i64(uintptr_t s);
uint64_t kiln_string_to_u64(uintptr_t s);
uintptr_t kiln_string_change_case(uintptr_t s, int32_t upper);
/// Whether \p s is one of the \p count NUL-terminated strings stored one
/// after the other at \p list.
int32_t kiln_string_in_list(uintptr_t s, uintptr_t list, int64_t count,
                            int32_t ignore_case);

/// A tensor as a host passes it to kiln_session_run: a dense row-major buffer
/// and the dtype and shape the host believes it has. The host owns all of it.
typedef struct kiln_tensor {       /* what a host passes in               */
  void *data;
  int32_t dtype;
  int32_t rank;
  const int64_t *dims;
  int64_t num_bytes;               /* size of the buffer at data          */
} kiln_tensor;

/// A model bound to a workspace of its own, plus the message describing the
/// last failure. Opaque; create with kiln_session_create, free with
/// kiln_session_destroy. A session runs one call at a time: use one session
/// per thread to run a model concurrently.
typedef struct kiln_session kiln_session;

/// Creates a session for \p model, allocating its workspace
/// (model->workspace_size bytes aligned to model->workspace_alignment); the
/// session keeps a pointer to \p model, which must outlive it. On success
/// stores the session in \p *out and returns KILN_STATUS_OK. On failure stores
/// NULL in \p *out (when \p out is not NULL) and returns
/// KILN_STATUS_INVALID_ARGUMENT (NULL argument, malformed descriptor),
/// KILN_STATUS_UNSUPPORTED (abi_version is not 1 to 4, or more than
/// KILN_MAX_DYNAMIC_DIMS dynamic dims) or
/// KILN_STATUS_OUT_OF_MEMORY.
int kiln_session_create(const kiln_model_desc *model, kiln_session **out);

/// Checks the tensors against the model's descriptor, then runs the model on
/// them with the session's workspace. Checks, in order: the counts (equal to
/// the descriptor's), then for each input and then each output that data is
/// not NULL, that dtype, rank and dims match (a descriptor dim -1-k, dynamic
/// dim k, accepts any size, the same in every tensor), that num_bytes is at
/// least the bytes the tensor needs and that data is aligned to the element
/// size; then that each dim that is a dim expression is that expression's
/// value for the dynamic dims' values (a dynamic dim no tensor carries is
/// 1). A model with dynamic dims is then run through run_dims with their
/// values. Returns KILN_STATUS_OK, or
/// KILN_STATUS_INVALID_ARGUMENT (NULL session or pointer, wrong count,
/// misaligned data), KILN_STATUS_SHAPE_MISMATCH (dtype, rank, dims or buffer
/// size), or the non-zero status the model's run function returned; the
/// message is then in kiln_session_error. Allocates only for a model whose
/// workspace depends on its dynamic dims, when a run needs more than any
/// earlier one (KILN_STATUS_OUT_OF_MEMORY if that fails).
int kiln_session_run(kiln_session *s, const kiln_tensor *inputs,
                     int32_t num_inputs, kiln_tensor *outputs,
                     int32_t num_outputs);

/// The message for the failure of the latest kiln_session_run on \p s, e.g.
/// "input 0 'x': expected float32 [1,1,8,8] (256 bytes), got float32
/// [1,1,8,7] (224 bytes)"; "" when that call succeeded or none was made.
/// Valid until the next call on \p s. "session is NULL" for a NULL \p s.
const char *kiln_session_error(const kiln_session *s);

/// Frees the session and its workspace. NULL is a no-op.
void kiln_session_destroy(kiln_session *s);

/// NVIDIA GPUs (libraries compiled with --target=cuda). The CUDA driver
/// (libcuda.so.1, or the file $KILN_CUDA_LIBRARY names) is loaded with
/// dlopen at first use, never linked: without a driver or a device the
/// calls return KILN_STATUS_UNSUPPORTED and kiln_cuda_error says why.

/// KILN_STATUS_OK when a GPU is usable (the driver loads, a device exists,
/// its primary context is current on this thread); else
/// KILN_STATUS_UNSUPPORTED or KILN_STATUS_INTERNAL, with the reason in
/// kiln_cuda_error.
int kiln_cuda_available(void);

/// The calling thread's message for its latest CUDA failure, e.g. "no CUDA
/// driver: cannot load libcuda.so.1 (...)"; "" after a success of
/// kiln_cuda_available. Never NULL.
const char *kiln_cuda_error(void);

/// One compiled model's device code, as generated code defines it: the PTX
/// module, the cubin ptxas made of it at compile time (when the toolkit was
/// there; loaded first, the PTX when the driver refuses it, e.g. another
/// GPU), its kernels' names, and the runtime's state (NULL at first: the
/// module, the kernels, the weights' device copies, loaded at the first
/// run and kept).
typedef struct kiln_cuda_program {
  const char *ptx;
  const void *cubin;
  int64_t cubin_size;
  int32_t num_kernels;
  const char *const *kernel_names;
  void *state;
} kiln_cuda_program;

/// The hooks generated code calls; hosts do not call them. A run is
/// run_begin on a stream (a CUstream; NULL: the default stream), the
/// model's launches (each skipped once one failed) and run_end, which
/// sends the launches (a CUDA graph; runtime/src/cuda.c), waits for the
/// kernels when \p wait is nonzero, and returns the run's first failure.
/// A run belongs to its thread; threads may run at the same time.
/// kiln_cuda_weights returns the device copy of a constant (uploaded at
/// its first use), kiln_cuda_launch queues kernel \p kernel with its
/// parameters each widened to 8 bytes, kiln_cuda_read returns the \p bytes
/// (1 to 8) at \p device once the run's kernels so far are done (a size or
/// an index the host needs; it waits for the stream). kiln_cuda_run_host is NAME_run_dims
/// (and NAME_run) of such a library: host pointers, copied to and from
/// device buffers that the runtime allocates at the first run and again,
/// larger, when the dynamic dims' values \p dims (NULL for a model without
/// any) need more, around \p run_device (NAME_run_dims_device); the host's
/// workspace is not used. Calls of one model's NAME_run take turns (its
/// device buffers are shared between them).
int kiln_cuda_run_begin(kiln_cuda_program *p, void *stream);
int kiln_cuda_run_end(kiln_cuda_program *p, int wait);
uintptr_t kiln_cuda_weights(kiln_cuda_program *p, const void *host, int64_t bytes);
uint64_t kiln_cuda_read(kiln_cuda_program *p, uintptr_t device, int32_t bytes);
void kiln_cuda_launch(kiln_cuda_program *p, int32_t kernel, int64_t gx, int64_t gy, int64_t gz,
                      int64_t bx, int64_t by, int64_t bz, const uint64_t *params,
                      int32_t num_params);
int kiln_cuda_run_host(kiln_cuda_program *p, const kiln_model_desc *model,
                       int (*run_device)(const int64_t *, const void *const *, void *const *,
                                         void *),
                       const int64_t *dims, const void *const *inputs, void *const *outputs);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // KILN_RUNTIME_H
