//===- DataTypes.h - ONNX data type codes <-> MLIR types ----------*- C++ -*-===//
//
// ONNX names element types by TensorProto::DataType codes (1 = FLOAT,
// 7 = INT64, ...): in tensors, in Cast's `to`, in EyeLike's `dtype`. This is
// the one mapping between those codes and the dialect's element types, used
// by the importer and by the verifiers alike. The codes are ONNX's stable
// wire values, so the dialect does not need ONNX's headers for them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_IR_DATATYPES_H
#define KILN_DIALECTS_ONNX_IR_DATATYPES_H

#include "mlir/IR/Types.h"

#include <cstdint>

namespace kiln::onnx {

/// The element type of ONNX data type `dataType`: float -> f32, int8 -> i8
/// (signless), uint8 -> ui8, bool -> i1, string -> !onnx.string,
/// complex64 -> complex<f32>... Null for codes kiln does not support.
mlir::Type elementTypeForDataType(mlir::MLIRContext *context,
                                  int64_t dataType);

/// The ONNX data type code of an element type; 0 (UNDEFINED) if it has none.
int64_t dataTypeForElementType(mlir::Type type);

/// Whether `type` (a tensor or an element type) has ONNX string elements.
bool isStringType(mlir::Type type);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_IR_DATATYPES_H
