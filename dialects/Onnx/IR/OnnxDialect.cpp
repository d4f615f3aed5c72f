//===- OnnxDialect.cpp - The onnx dialect and its types --------------------===//
//
// Registers the onnx dialect's types and ops, and materialises constants
// produced by folding as `onnx.Constant`.
//
//===----------------------------------------------------------------------===//

#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::onnx;

#include "dialects/Onnx/IR/OnnxDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Onnx/IR/OnnxTypes.cpp.inc"

#include "dialects/Onnx/IR/OnnxInterfaces.cpp.inc"

void OnnxDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "dialects/Onnx/IR/OnnxOps.cpp.inc"
      >();
}

void OnnxDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Onnx/IR/OnnxTypes.cpp.inc"
      >();
}

Operation *OnnxDialect::materializeConstant(OpBuilder &builder,
                                            Attribute value, Type type,
                                            Location loc) {
  if (isa<NoneType>(type))
    return NoValueOp::create(builder, loc, builder.getNoneType());
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, /*sparse_value=*/nullptr,
                            elements, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr);
}
