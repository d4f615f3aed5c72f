//===- OnnxOps.cpp - Definitions of the generated onnx ops -----------------===//
//
// Instantiates the generated op classes. Hand-written verifiers, folders and
// shape functions live beside this file, grouped by op family.
//
//===----------------------------------------------------------------------===//

#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kiln::onnx;

OpFoldResult NoValueOp::fold(FoldAdaptor) { return UnitAttr::get(getContext()); }

#define GET_OP_CLASSES
#include "dialects/Onnx/IR/OnnxOps.cpp.inc"
