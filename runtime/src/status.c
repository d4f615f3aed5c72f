//===- status.c - Status and dtype names --------------------------*- C -*-===//
//
// kiln_status_string, kiln_dtype_name and kiln_dtype_size: static tables, no
// state.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

const char *kiln_status_string(int status) {
  switch (status) {
  case KILN_STATUS_OK:
    return "ok";
  case KILN_STATUS_INVALID_ARGUMENT:
    return "invalid argument";
  case KILN_STATUS_SHAPE_MISMATCH:
    return "shape mismatch";
  case KILN_STATUS_OUT_OF_MEMORY:
    return "out of memory";
  case KILN_STATUS_UNSUPPORTED:
    return "unsupported";
  case KILN_STATUS_INTERNAL:
    return "internal error";
  default:
    return "unknown status";
  }
}

/// One ONNX TensorProto.DataType: its name and whole-byte element size.
typedef struct dtype_info {
  const char *name;
  int64_t size;
} dtype_info;

/// Indexed by TensorProto.DataType; a NULL name is not an ONNX type.
static const dtype_info kDtypes[] = {
    {NULL, 0},             // 0 UNDEFINED
    {"float32", 4},        // 1 FLOAT
    {"uint8", 1},          // 2 UINT8
    {"int8", 1},           // 3 INT8
    {"uint16", 2},         // 4 UINT16
    {"int16", 2},          // 5 INT16
    {"int32", 4},          // 6 INT32
    {"int64", 8},          // 7 INT64
    {"string", sizeof(char *)}, // 8 STRING (a pointer to UTF-8)
    {"bool", 1},           // 9 BOOL
    {"float16", 2},        // 10 FLOAT16
    {"float64", 8},        // 11 DOUBLE
    {"uint32", 4},         // 12 UINT32
    {"uint64", 8},         // 13 UINT64
    {"complex64", 8},      // 14 COMPLEX64
    {"complex128", 16},    // 15 COMPLEX128
    {"bfloat16", 2},       // 16 BFLOAT16
    {"float8e4m3fn", 1},   // 17 FLOAT8E4M3FN
    {"float8e4m3fnuz", 1}, // 18 FLOAT8E4M3FNUZ
    {"float8e5m2", 1},     // 19 FLOAT8E5M2
    {"float8e5m2fnuz", 1}, // 20 FLOAT8E5M2FNUZ
    {"uint4", 0},          // 21 UINT4 (two per byte)
    {"int4", 0},           // 22 INT4 (two per byte)
    {"float4e2m1", 0},     // 23 FLOAT4E2M1 (two per byte)
};

#define KILN_NUM_DTYPES ((int32_t)(sizeof(kDtypes) / sizeof(kDtypes[0])))

/// "dtype N" for the codes below 32 that name no type, so that
/// kiln_dtype_name can return a static string for them.
static const char *const kOtherNames[32] = {
    "dtype 0",  "dtype 1",  "dtype 2",  "dtype 3",  "dtype 4",  "dtype 5",
    "dtype 6",  "dtype 7",  "dtype 8",  "dtype 9",  "dtype 10", "dtype 11",
    "dtype 12", "dtype 13", "dtype 14", "dtype 15", "dtype 16", "dtype 17",
    "dtype 18", "dtype 19", "dtype 20", "dtype 21", "dtype 22", "dtype 23",
    "dtype 24", "dtype 25", "dtype 26", "dtype 27", "dtype 28", "dtype 29",
    "dtype 30", "dtype 31",
};

const char *kiln_dtype_name(int32_t dtype) {
  if (dtype >= 0 && dtype < KILN_NUM_DTYPES && kDtypes[dtype].name)
    return kDtypes[dtype].name;
  if (dtype >= 0 && dtype < 32)
    return kOtherNames[dtype];
  return "unknown dtype";
}

int64_t kiln_dtype_size(int32_t dtype) {
  if (dtype >= 0 && dtype < KILN_NUM_DTYPES)
    return kDtypes[dtype].size;
  return 0;
}
