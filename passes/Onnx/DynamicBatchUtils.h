//===- DynamicBatchUtils.h - Shared by the dynamic batch passes -*- C++ -*-===//
//
// What kiln-dynamic-batch (DynamicBatch.cpp) and kiln-dynamic-batch-values
// (DynamicBatchValues.cpp) share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_ONNX_DYNAMICBATCHUTILS_H
#define KILN_PASSES_ONNX_DYNAMICBATCHUTILS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace kiln::onnx::batch {

/// "ReduceMean (opset 17): cannot run the dynamic batch dim 'N' one item at
/// a time: <why>; pin the batch with --input-shape for static code".
std::string refusal(mlir::Operation *op, llvm::StringRef dimName, const llvm::Twine &why);

/// Elementwise ops, with numpy broadcasting.
bool isElementwise(mlir::Operation *op);

} // namespace kiln::onnx::batch

#endif // KILN_PASSES_ONNX_DYNAMICBATCHUTILS_H
