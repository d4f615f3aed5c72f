//===- Passes.h - Passes on the onnx dialect ----------------------*- C++ -*-===//

#ifndef KILN_PASSES_ONNX_PASSES_H
#define KILN_PASSES_ONNX_PASSES_H

#include "dialects/Onnx/IR/OnnxOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln::onnx {

#define GEN_PASS_DECL
#include "passes/Onnx/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Onnx/Passes.h.inc"

/// What onnx-shape-inference does to `func`: refines result types and folds
/// shape computations to a fixed point. Fails when a shape function found
/// operands that contradict their op (it emitted the diagnostic).
mlir::LogicalResult inferShapes(mlir::func::FuncOp func);

} // namespace kiln::onnx

#endif // KILN_PASSES_ONNX_PASSES_H
