//===- DataTypes.cpp - ONNX data type codes <-> MLIR types -----------------===//

#include "dialects/Onnx/IR/DataTypes.h"
#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln::onnx {

namespace {
/// TensorProto::DataType codes.
enum : int64_t {
  kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6,
  kInt64 = 7, kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11,
  kUint32 = 12, kUint64 = 13, kComplex64 = 14, kComplex128 = 15,
  kBfloat16 = 16
};
} // namespace

Type elementTypeForDataType(MLIRContext *context, int64_t dataType) {
  Builder b(context);
  switch (dataType) {
  case kFloat: return b.getF32Type();
  case kDouble: return b.getF64Type();
  case kFloat16: return b.getF16Type();
  case kBfloat16: return b.getBF16Type();
  case kInt8: return b.getIntegerType(8);
  case kInt16: return b.getIntegerType(16);
  case kInt32: return b.getIntegerType(32);
  case kInt64: return b.getIntegerType(64);
  case kUint8: return b.getIntegerType(8, /*isSigned=*/false);
  case kUint16: return b.getIntegerType(16, false);
  case kUint32: return b.getIntegerType(32, false);
  case kUint64: return b.getIntegerType(64, false);
  case kBool: return b.getI1Type();
  case kString: return StringType::get(context);
  case kComplex64: return ComplexType::get(b.getF32Type());
  case kComplex128: return ComplexType::get(b.getF64Type());
  default: return {};
  }
}

int64_t dataTypeForElementType(Type type) {
  for (int64_t code = kFloat; code <= kBfloat16; ++code)
    if (elementTypeForDataType(type.getContext(), code) == type)
      return code;
  return 0;
}

bool isStringType(Type type) { return isa<StringType>(getElementTypeOrSelf(type)); }

} // namespace kiln::onnx
