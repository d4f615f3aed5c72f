//===- QdqPropagation.h - QDQ pairs moved through exact ops -----*- C++ -*-===//
//
// kiln-fuse-qdq's first stage (QdqPropagation.cpp): DequantizeLinears
// moved down and QuantizeLinears up through the ops that give the same
// result on the 8-bit values (data movement, MaxPool, Relu, Clip), pairs
// of equal parameters cancelled.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_QUANTIZATION_QDQPROPAGATION_H
#define KILN_PASSES_QUANTIZATION_QDQPROPAGATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::quantization {

/// Moves the QDQ pairs of `func` through the exact ops and cancels those
/// that meet. Fails only if the rewrite did not converge.
mlir::LogicalResult propagateQdq(mlir::func::FuncOp func);

} // namespace kiln::quantization

#endif // KILN_PASSES_QUANTIZATION_QDQPROPAGATION_H
