//===- Int8ConstantWeights.h - integer ops by constant weights --*- C++ -*-===//
//
// The forms of MatMulInteger/QLinearMatMul and ConvInteger/QLinearConv by
// constant weights that kiln-vectorize-int8-matmul runs on dot-product
// kernels (Int8ConstantWeights.cpp), and the per-axis broadcast the
// quantisation patterns share with them (Quantize.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CONVERSION_ONNXTOLINALG_INT8CONSTANTWEIGHTS_H
#define KILN_PASSES_CONVERSION_ONNXTOLINALG_INT8CONSTANTWEIGHTS_H

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include <optional>

namespace kiln::lowering {

/// A per-axis parameter [C] reshaped to broadcast along `axis` of a
/// tensor of rank `rank`; scalars and one-element tensors stay as they are.
mlir::FailureOr<mlir::Value> alongAxis(mlir::OpBuilder &b, mlir::Location loc,
                                       mlir::Value param, int64_t axis, int64_t rank,
                                       int64_t dim);

/// The int32 product A x (B - b_zero_point) - a_zero_point x colsum for a
/// constant 2-D B (see the definition); none when it does not apply.
std::optional<mlir::Value> matMulConstantB(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::Value aOrig, mlir::Value a, mlir::Value bOrig,
                                           mlir::Value aZpOrig, mlir::Value aZp,
                                           mlir::Value bZpOrig, mlir::RankedTensorType accType);

/// The int32 convolution by constant weights as the weights-left int8
/// matmul, [N, M, P] (see the definition); none when it does not apply.
std::optional<mlir::Value> convConstantWeights(mlir::OpBuilder &b, mlir::Location loc,
                                               mlir::Value xOrig, mlir::Value x,
                                               mlir::Value wOrig, mlir::Value xZpOrig,
                                               mlir::Value xZp, mlir::Value wZpOrig,
                                               mlir::Value bias, const ConvAttrs &attrs,
                                               mlir::RankedTensorType accType);

} // namespace kiln::lowering

#endif // KILN_PASSES_CONVERSION_ONNXTOLINALG_INT8CONSTANTWEIGHTS_H
