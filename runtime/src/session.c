//===- session.c - The session helper -----------------------------*- C -*-===//
//
// A session binds a model descriptor to a workspace of its own and checks the
// tensors a host passes against the descriptor before calling the model's run
// function, saying what is wrong in a message kept inside the session.
//
// kiln_session_create makes the only allocation: one block holding the
// session, the arrays of data pointers handed to `run`, and the workspace,
// aligned by hand (not aligned_alloc, which some C libraries lack). The run
// path allocates nothing, and messages are built by hand in the session's
// fixed buffer rather than with snprintf, which keeps stdio (and its int64
// formatting, missing from some embedded C libraries) out of the runtime.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include <stdlib.h>

/// Bytes in a session's message buffer, terminator included; longer messages
/// are cut short.
#define KILN_SESSION_ERROR_SIZE 512

struct kiln_session {
  const kiln_model_desc *model;
  int32_t num_dynamic_dims; ///< 0 for an abi_version 1 descriptor.
  int64_t dynamic_dims[KILN_MAX_DYNAMIC_DIMS]; ///< Values, set by run.
  void *workspace;         ///< Aligned; NULL when the model needs none.
  /// A workspace sized by the dynamic dims (workspace_size -1): the block
  /// holding it and its bytes after alignment, grown as runs need.
  void *dynamic_block;
  uint64_t dynamic_capacity;
  const void **input_data; ///< model->num_inputs entries, filled by run.
  void **output_data;      ///< model->num_outputs entries, filled by run.
  char error[KILN_SESSION_ERROR_SIZE];
};

//===----------------------------------------------------------------------===//
// Messages
//===----------------------------------------------------------------------===//

/// A string being built in a fixed buffer; always NUL-terminated, silently
/// truncated when full.
typedef struct msg {
  char *buf;
  size_t cap; ///< Size of buf, terminator included; at least 1.
  size_t len;
} msg;

static msg msg_start(char *buf, size_t cap) {
  msg m = {buf, cap, 0};
  buf[0] = '\0';
  return m;
}

static int msg_full(const msg *m) { return m->len + 1 >= m->cap; }

static void msg_str(msg *m, const char *s) {
  while (*s && !msg_full(m))
    m->buf[m->len++] = *s++;
  m->buf[m->len] = '\0';
}

static void msg_i64(msg *m, int64_t v) {
  char digits[21]; // 2^63 has 19 digits.
  char text[22];
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  size_t n = 0, k = 0;
  do {
    digits[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0)
    text[k++] = '-';
  while (n)
    text[k++] = digits[--n];
  text[k] = '\0';
  msg_str(m, text);
}

static void msg_dtype(msg *m, int32_t dtype) {
  if (dtype >= 0 && dtype < 32) {
    msg_str(m, kiln_dtype_name(dtype));
    return;
  }
  msg_str(m, "dtype ");
  msg_i64(m, dtype);
}

/// "[1,1,8,8]"; with \p dynamic_mark, negative dims print as "?".
static void msg_shape(msg *m, int32_t rank, const int64_t *dims,
                      int dynamic_mark) {
  msg_str(m, "[");
  for (int32_t k = 0; k < rank && !msg_full(m); ++k) {
    if (k)
      msg_str(m, ",");
    if (dynamic_mark && dims[k] < 0)
      msg_str(m, "?");
    else
      msg_i64(m, dims[k]);
  }
  msg_str(m, "]");
}

static const char *tensor_name(const kiln_tensor_desc *d) {
  return d->name ? d->name : "(unnamed)";
}

/// "input 0 'x': ".
static void msg_tensor_prefix(msg *m, const char *kind, int32_t index,
                              const kiln_tensor_desc *d) {
  msg_str(m, kind);
  msg_str(m, " ");
  msg_i64(m, index);
  msg_str(m, " '");
  msg_str(m, tensor_name(d));
  msg_str(m, "': ");
}

/// "input 0 'x': dim 1 is 7, but ", before what it should be.
static void msg_dim_differs(msg *m, const char *kind, int32_t index,
                            const kiln_tensor_desc *d, int32_t dim,
                            int64_t got) {
  msg_tensor_prefix(m, kind, index, d);
  msg_str(m, "dim ");
  msg_i64(m, dim);
  msg_str(m, " is ");
  msg_i64(m, got);
  msg_str(m, ", but ");
}

/// "expected 2 inputs ('a', 'b'), got 1".
static void msg_count(msg *m, const char *kind, int32_t expected,
                      const kiln_tensor_desc *descs, int32_t got) {
  msg_str(m, "expected ");
  msg_i64(m, expected);
  msg_str(m, " ");
  msg_str(m, kind);
  if (expected != 1)
    msg_str(m, "s");
  for (int32_t i = 0; i < expected && !msg_full(m); ++i) {
    msg_str(m, i ? ", '" : " ('");
    msg_str(m, tensor_name(&descs[i]));
    msg_str(m, i + 1 == expected ? "')" : "'");
  }
  msg_str(m, ", got ");
  msg_i64(m, got);
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

/// Whether descriptor \p d has a dynamic (negative) dim.
static int is_dynamic(const kiln_tensor_desc *d) {
  for (int32_t k = 0; k < d->rank; ++k)
    if (d->dims[k] < 0)
      return 1;
  return 0;
}

/// The bytes of a dense tensor of \p dtype and shape \p dims: -1 when its
/// elements are not a whole number of bytes or the dtype is unknown, -2 when
/// the size overflows int64.
static int64_t dense_bytes(int32_t dtype, int32_t rank, const int64_t *dims) {
  int64_t bytes = kiln_dtype_size(dtype);
  if (bytes <= 0)
    return -1;
  for (int32_t k = 0; k < rank; ++k) {
    if (dims[k] != 0 && bytes > INT64_MAX / dims[k])
      return -2;
    bytes *= dims[k];
  }
  return bytes;
}

/// Checks tensor \p t, \p kind \p index of the model, against its descriptor
/// \p d; on failure writes the message to \p m and returns the status.
static int check_tensor(msg *m, const char *kind, int32_t index,
                        const kiln_tensor_desc *d, const kiln_tensor *t) {
  // A tensor without elements may be NULL: nothing is read or written
  // (for a dynamic shape, checked below once the host's dims are known).
  if (!t->data && d->num_bytes != 0 && !is_dynamic(d)) {
    msg_tensor_prefix(m, kind, index, d);
    msg_str(m, "data is NULL");
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  if (t->rank < 0 || (t->rank > 0 && !t->dims)) {
    msg_tensor_prefix(m, kind, index, d);
    msg_str(m, t->rank < 0 ? "rank is negative" : "dims is NULL");
    return KILN_STATUS_INVALID_ARGUMENT;
  }

  int match = t->dtype == d->dtype && t->rank == d->rank;
  for (int32_t k = 0; match && k < d->rank; ++k)
    match = t->dims[k] >= 0 && (d->dims[k] < 0 || t->dims[k] == d->dims[k]);

  // The bytes the tensor needs: the descriptor's for a static shape, else
  // computed from the host's dims once they match; -1 when unknown (then
  // unchecked), -2 when too large.
  int64_t needed = d->num_bytes >= 0 ? d->num_bytes : -1;
  if (is_dynamic(d))
    needed = match ? dense_bytes(d->dtype, t->rank, t->dims) : -1;

  if (match && !t->data && needed != 0) {
    msg_tensor_prefix(m, kind, index, d);
    msg_str(m, "data is NULL");
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  if (!match || needed == -2 || (needed >= 0 && t->num_bytes < needed)) {
    msg_tensor_prefix(m, kind, index, d);
    msg_str(m, "expected ");
    msg_dtype(m, d->dtype);
    msg_str(m, " ");
    msg_shape(m, d->rank, d->dims, 1);
    msg_str(m, " (");
    if (needed >= 0)
      msg_i64(m, needed);
    else
      msg_str(m, needed == -2 ? "too many" : "?");
    msg_str(m, " bytes), got ");
    msg_dtype(m, t->dtype);
    msg_str(m, " ");
    msg_shape(m, t->rank, t->dims, 0);
    msg_str(m, " (");
    msg_i64(m, t->num_bytes);
    msg_str(m, " bytes)");
    return KILN_STATUS_SHAPE_MISMATCH;
  }

  int64_t align = kiln_dtype_size(d->dtype);
  if (align > 1 && (uintptr_t)t->data % (uint64_t)align != 0) {
    msg_tensor_prefix(m, kind, index, d);
    msg_str(m, "data is not aligned to ");
    msg_i64(m, align);
    msg_str(m, " bytes");
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  return KILN_STATUS_OK;
}

/// Records the values of the dynamic dims tensor \p t carries (descriptor
/// dim -1-k is dynamic dim k), which check_tensor has matched in rank; a
/// value that differs from an earlier tensor's is a shape mismatch.
static int bind_dynamic_dims(kiln_session *s, msg *m, const char *kind,
                             int32_t index, const kiln_tensor_desc *d,
                             const kiln_tensor *t) {
  for (int32_t j = 0; j < d->rank; ++j) {
    int64_t k = -1 - d->dims[j];
    if (d->dims[j] >= 0 || k >= s->num_dynamic_dims)
      continue;
    if (s->dynamic_dims[k] < 0) {
      s->dynamic_dims[k] = t->dims[j];
    } else if (s->dynamic_dims[k] != t->dims[j]) {
      const char *const *names = s->model->dynamic_dim_names;
      msg_dim_differs(m, kind, index, d, j, t->dims[j]);
      msg_str(m, "the dynamic dim '");
      msg_str(m, names && names[k] ? names[k] : "?");
      msg_str(m, "' is ");
      msg_i64(m, s->dynamic_dims[k]);
      msg_str(m, " in an earlier tensor");
      return KILN_STATUS_SHAPE_MISMATCH;
    }
  }
  return KILN_STATUS_OK;
}

/// The number of dim expressions of \p model (none before abi_version 4).
static int32_t num_exprs(const kiln_model_desc *model) {
  return model->abi_version >= 4 ? model->num_dim_exprs : 0;
}

/// The dynamic dims of \p model a session or a tool reads values for.
static int32_t dynamic_count(const kiln_model_desc *model) {
  return model->abi_version >= 2 ? model->num_dynamic_dims : 0;
}

/// Dim \p d of a tensor of \p model for the dynamic dims' values \p dims;
/// -1 when it names nothing, or its value is negative or overflows.
static int64_t dim_value(const kiln_model_desc *model, int64_t d,
                         const int64_t *dims) {
  if (d >= 0)
    return d;
  int64_t k = -1 - d, n = dynamic_count(model);
  if (k < n)
    return dims && dims[k] >= 0 ? dims[k] : -1;
  if (k - n >= num_exprs(model) || !model->dim_exprs || !dims)
    return -1;
  const int64_t *op = model->abi_version >= 5 && model->dim_expr_ops
                          ? model->dim_expr_ops + 4 * (k - n)
                          : NULL;
  if (op && op[0] != 0) {
    // A floor or a product of dims and earlier expressions only.
    int64_t x = op[0] == 1 ? op[1] : op[2], y = op[3];
    if (x < 0 || x >= k || (op[0] == 2 && (y < 0 || y >= k)))
      return -1;
    int64_t vx = dim_value(model, -1 - x, dims), value;
    if (vx < 0)
      return -1;
    if (op[0] == 1) {
      // floor((vx + a) / s), s > 0; a negative result names no size.
      int64_t a = op[2], s = op[3], sum;
      if (s <= 0 || __builtin_add_overflow(vx, a, &sum) || sum < 0)
        return -1;
      return sum / s;
    }
    int64_t vy = dim_value(model, -1 - y, dims);
    if (op[0] != 2 || vy < 0 || op[1] < 0 || __builtin_mul_overflow(op[1], vx, &value) ||
        __builtin_mul_overflow(value, vy, &value))
      return -1;
    return value;
  }
  const int64_t *c = model->dim_exprs + (k - n) * (1 + n);
  int64_t value = c[0];
  for (int64_t j = 0; j < n; ++j) {
    int64_t term;
    if (dims[j] < 0 || __builtin_mul_overflow(c[1 + j], dims[j], &term) ||
        __builtin_add_overflow(value, term, &value))
      return -1;
  }
  return value;
}

int64_t kiln_tensor_dims(const kiln_model_desc *model,
                         const kiln_tensor_desc *t, const int64_t *dims,
                         int64_t *out) {
  if (!model || !t || t->rank < 0 || (t->rank > 0 && (!t->dims || !out)))
    return -1;
  int64_t elements = 1;
  for (int32_t k = 0; k < t->rank; ++k) {
    out[k] = dim_value(model, t->dims[k], dims);
    if (out[k] < 0 || __builtin_mul_overflow(elements, out[k], &elements))
      return -1;
  }
  return elements;
}

/// Whether the descriptors of one direction of \p model are usable: each
/// has a rank >= 0 and dims for it, and from abi_version 4 each dynamic dim
/// names a dynamic dim or dim expression of the model.
static int descs_valid(const kiln_model_desc *model,
                       const kiln_tensor_desc *descs, int32_t count) {
  if (count < 0 || (count > 0 && !descs))
    return 0;
  int64_t named = (int64_t)dynamic_count(model) + num_exprs(model);
  for (int32_t i = 0; i < count; ++i) {
    if (descs[i].rank < 0 || (descs[i].rank > 0 && !descs[i].dims))
      return 0;
    for (int32_t k = 0; model->abi_version >= 4 && k < descs[i].rank; ++k)
      if (descs[i].dims[k] < -named)
        return 0;
  }
  return 1;
}

/// Checks that each dim of \p t that is a dim expression of the model
/// (descriptor dim -1-(num_dynamic_dims + j)) has the expression's value
/// for the session's dynamic dims.
static int check_exprs(kiln_session *s, msg *m, const char *kind,
                       int32_t index, const kiln_tensor_desc *d,
                       const kiln_tensor *t) {
  const kiln_model_desc *model = s->model;
  // Before abi_version 4 a dim past the dynamic dims was not checked.
  if (num_exprs(model) == 0)
    return KILN_STATUS_OK;
  for (int32_t j = 0; j < d->rank; ++j) {
    int64_t e = -1 - d->dims[j] - s->num_dynamic_dims;
    if (d->dims[j] >= 0 || e < 0)
      continue;
    int64_t value = dim_value(model, d->dims[j], s->dynamic_dims);
    if (value == t->dims[j])
      continue;
    msg_dim_differs(m, kind, index, d, j, t->dims[j]);
    msg_str(m, model->dim_expr_names && model->dim_expr_names[e]
                   ? model->dim_expr_names[e]
                   : "its dim expression");
    if (value < 0) {
      msg_str(m, " cannot be computed for these dynamic dims");
    } else {
      msg_str(m, " is ");
      msg_i64(m, value);
    }
    return KILN_STATUS_SHAPE_MISMATCH;
  }
  return KILN_STATUS_OK;
}

/// The workspace's alignment: 0 or 1 in the descriptor ask for nothing.
static uint64_t workspace_align(const kiln_model_desc *model) {
  return model->workspace_alignment > 1 ? (uint64_t)model->workspace_alignment : 1;
}

/// The first address at or after \p p that is a multiple of \p align.
static void *align_up(char *p, uint64_t align) {
  return p + (size_t)((align - (uintptr_t)p % align) % align);
}

/// For a model whose workspace depends on the dynamic dims: makes
/// s->workspace hold what the dims in s->dynamic_dims need, growing the
/// block when a run needs more than any earlier one.
static int ensure_workspace(kiln_session *s, msg *m) {
  const kiln_model_desc *model = s->model;
  if (model->abi_version < 3 || model->workspace_size != -1)
    return KILN_STATUS_OK;
  int64_t need = model->workspace_size_for(s->dynamic_dims);
  if (need < 0) {
    msg_str(m, "model '");
    msg_str(m, model->name ? model->name : "(unnamed)");
    msg_str(m, "' cannot run with these dynamic dims (workspace size -1)");
    return KILN_STATUS_SHAPE_MISMATCH;
  }
  if ((uint64_t)need <= s->dynamic_capacity)
    return KILN_STATUS_OK;
  uint64_t align = workspace_align(model);
  if ((uint64_t)need > SIZE_MAX - align)
    return KILN_STATUS_OUT_OF_MEMORY;
  char *block = (char *)malloc((size_t)need + (size_t)align);
  if (!block) {
    msg_str(m, "cannot allocate the workspace (");
    msg_i64(m, need);
    msg_str(m, " bytes)");
    return KILN_STATUS_OUT_OF_MEMORY;
  }
  free(s->dynamic_block);
  s->dynamic_block = block;
  s->dynamic_capacity = (uint64_t)need;
  s->workspace = align_up(block, align);
  return KILN_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// The API
//===----------------------------------------------------------------------===//

int kiln_session_create(const kiln_model_desc *model, kiln_session **out) {
  if (!out)
    return KILN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  if (!model)
    return KILN_STATUS_INVALID_ARGUMENT;
  if (model->abi_version < 1 || model->abi_version > KILN_ABI_VERSION)
    return KILN_STATUS_UNSUPPORTED;
  if (num_exprs(model) < 0 || (num_exprs(model) > 0 && !model->dim_exprs))
    return KILN_STATUS_INVALID_ARGUMENT;
  // A workspace that depends on the dynamic dims: sized at run time.
  int dynamic_ws = model->abi_version >= 3 && model->workspace_size == -1;
  if (dynamic_ws && !model->workspace_size_for)
    return KILN_STATUS_INVALID_ARGUMENT;
  int32_t num_dynamic = dynamic_count(model);
  if (num_dynamic < 0 || (num_dynamic > 0 && !model->run_dims))
    return KILN_STATUS_INVALID_ARGUMENT;
  if (num_dynamic > KILN_MAX_DYNAMIC_DIMS)
    return KILN_STATUS_UNSUPPORTED;
  if (!model->run || !descs_valid(model, model->inputs, model->num_inputs) ||
      !descs_valid(model, model->outputs, model->num_outputs) ||
      (model->workspace_size < 0 && !dynamic_ws) || model->workspace_alignment < 0)
    return KILN_STATUS_INVALID_ARGUMENT;

  // An alignment of 0 or 1 asks for nothing; any other must be a power of 2.
  uint64_t align = workspace_align(model);
  if (align & (align - 1))
    return KILN_STATUS_INVALID_ARGUMENT;

  // One block: the session, the data pointer arrays, then the workspace with
  // room to align it. The arrays need no padding: a pointer's alignment
  // divides sizeof(kiln_session).
  uint64_t num_ptrs =
      (uint64_t)model->num_inputs + (uint64_t)model->num_outputs;
  if (num_ptrs > (SIZE_MAX - sizeof(kiln_session)) / sizeof(void *))
    return KILN_STATUS_OUT_OF_MEMORY;
  size_t head = sizeof(kiln_session) + (size_t)num_ptrs * sizeof(void *);
  uint64_t ws_size = dynamic_ws ? 0 : (uint64_t)model->workspace_size;
  size_t total = head;
  if (ws_size) {
    if (ws_size > SIZE_MAX - head || align - 1 > SIZE_MAX - head - ws_size)
      return KILN_STATUS_OUT_OF_MEMORY;
    total = head + (size_t)ws_size + (size_t)(align - 1);
  }

  kiln_session *s = (kiln_session *)malloc(total);
  if (!s)
    return KILN_STATUS_OUT_OF_MEMORY;
  s->model = model;
  s->num_dynamic_dims = num_dynamic;
  s->input_data = (const void **)(s + 1);
  s->output_data = (void **)(s + 1) + model->num_inputs;
  s->workspace = NULL;
  s->dynamic_block = NULL;
  s->dynamic_capacity = 0;
  if (ws_size) {
    s->workspace = align_up((char *)s + head, align);
  }
  s->error[0] = '\0';
  *out = s;
  return KILN_STATUS_OK;
}

int kiln_session_run(kiln_session *s, const kiln_tensor *inputs,
                     int32_t num_inputs, kiln_tensor *outputs,
                     int32_t num_outputs) {
  if (!s)
    return KILN_STATUS_INVALID_ARGUMENT;
  const kiln_model_desc *model = s->model;
  msg m = msg_start(s->error, sizeof(s->error));

  if (num_inputs != model->num_inputs) {
    msg_count(&m, "input", model->num_inputs, model->inputs, num_inputs);
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  if (num_outputs != model->num_outputs) {
    msg_count(&m, "output", model->num_outputs, model->outputs, num_outputs);
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  if ((num_inputs > 0 && !inputs) || (num_outputs > 0 && !outputs)) {
    msg_str(&m, num_inputs > 0 && !inputs ? "inputs" : "outputs");
    msg_str(&m, " is NULL");
    return KILN_STATUS_INVALID_ARGUMENT;
  }

  for (int32_t k = 0; k < s->num_dynamic_dims; ++k)
    s->dynamic_dims[k] = -1;
  for (int32_t i = 0; i < num_inputs; ++i) {
    int status = check_tensor(&m, "input", i, &model->inputs[i], &inputs[i]);
    if (status == KILN_STATUS_OK)
      status = bind_dynamic_dims(s, &m, "input", i, &model->inputs[i], &inputs[i]);
    if (status != KILN_STATUS_OK)
      return status;
    s->input_data[i] = inputs[i].data;
  }
  for (int32_t i = 0; i < num_outputs; ++i) {
    int status = check_tensor(&m, "output", i, &model->outputs[i], &outputs[i]);
    if (status == KILN_STATUS_OK)
      status = bind_dynamic_dims(s, &m, "output", i, &model->outputs[i], &outputs[i]);
    if (status != KILN_STATUS_OK)
      return status;
    s->output_data[i] = outputs[i].data;
  }

  int status;
  if (s->num_dynamic_dims > 0) {
    for (int32_t k = 0; k < s->num_dynamic_dims; ++k)
      if (s->dynamic_dims[k] < 0)
        s->dynamic_dims[k] = 1; // No tensor carries it.
    for (int32_t i = 0; i < num_inputs + num_outputs; ++i) {
      int out = i >= num_inputs;
      int32_t index = out ? i - num_inputs : i;
      status = check_exprs(s, &m, out ? "output" : "input", index,
                           out ? &model->outputs[index] : &model->inputs[index],
                           out ? &outputs[index] : &inputs[index]);
      if (status != KILN_STATUS_OK)
        return status;
    }
    status = ensure_workspace(s, &m);
    if (status != KILN_STATUS_OK)
      return status;
    status = model->run_dims(s->dynamic_dims, s->input_data, s->output_data,
                             s->workspace);
  } else {
    status = model->run(s->input_data, s->output_data, s->workspace);
  }
  if (status != KILN_STATUS_OK) {
    msg_str(&m, "model '");
    msg_str(&m, model->name ? model->name : "(unnamed)");
    msg_str(&m, "' failed: ");
    msg_str(&m, kiln_status_string(status));
    msg_str(&m, " (status ");
    msg_i64(&m, status);
    msg_str(&m, ")");
  }
  return status;
}

const char *kiln_session_error(const kiln_session *s) {
  return s ? s->error : "session is NULL";
}

void kiln_session_destroy(kiln_session *s) {
  if (s)
    free(s->dynamic_block);
  free(s);
}
