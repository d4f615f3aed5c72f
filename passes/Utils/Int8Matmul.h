//===- Int8Matmul.h - The int8 matmul generic's form -------------*- C++ -*-===//
//
// The contract between the lowering of MatMulInteger/QLinearMatMul by a
// constant B (Int8ConstantWeights.cpp, matMulConstantB), which makes
//
//   out[d0, ..., d(r-1)] += ext(A[d0, ..., d(r-2), dr]) * extsi(B[dr, d(r-1)])
//
// (r the rank of A and out, dr the reduction), and kiln-vectorize-int8-
// matmul, which matches exactly that form; and the same contract for the
// integer convolutions by constant weights (ConvInteger, QLinearConv),
// which are matmuls with the weights on the left:
//
//   out[d0, ..., d(r-1)] += ext(X[d0, ..., d(r-3), dr, d(r-1)]) * extsi(W[d(r-2), dr])
//
// (X [..., K, P] the input, im2col'd where the conv is not 1x1, W [M, K]
// the weights, out [..., M, P]). Header only.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_UTILS_INT8MATMUL_H
#define KILN_PASSES_UTILS_INT8MATMUL_H

#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SmallVector.h"

namespace kiln {

/// The indexing maps of A, B and out for A and out of rank `rank`.
inline llvm::SmallVector<mlir::AffineMap, 3> int8MatmulMaps(mlir::MLIRContext *ctx,
                                                            int64_t rank) {
  auto d = [&](int64_t i) { return mlir::getAffineDimExpr(unsigned(i), ctx); };
  llvm::SmallVector<mlir::AffineExpr> aExprs, outExprs;
  for (int64_t i = 0; i < rank - 1; ++i) {
    aExprs.push_back(d(i));
    outExprs.push_back(d(i));
  }
  aExprs.push_back(d(rank));
  outExprs.push_back(d(rank - 1));
  return {mlir::AffineMap::get(unsigned(rank + 1), 0, aExprs, ctx),
          mlir::AffineMap::get(unsigned(rank + 1), 0, {d(rank), d(rank - 1)}, ctx),
          mlir::AffineMap::get(unsigned(rank + 1), 0, outExprs, ctx)};
}

/// The indexing maps of X, W and out for the weights-left form, X and out
/// of rank `rank` (at least 2).
inline llvm::SmallVector<mlir::AffineMap, 3> int8WeightsLeftMaps(mlir::MLIRContext *ctx,
                                                                 int64_t rank) {
  auto d = [&](int64_t i) { return mlir::getAffineDimExpr(unsigned(i), ctx); };
  llvm::SmallVector<mlir::AffineExpr> xExprs, outExprs;
  for (int64_t i = 0; i < rank; ++i)
    outExprs.push_back(d(i));
  for (int64_t i = 0; i < rank - 2; ++i)
    xExprs.push_back(d(i));
  xExprs.push_back(d(rank));
  xExprs.push_back(d(rank - 1));
  return {mlir::AffineMap::get(unsigned(rank + 1), 0, xExprs, ctx),
          mlir::AffineMap::get(unsigned(rank + 1), 0, {d(rank - 2), d(rank)}, ctx),
          mlir::AffineMap::get(unsigned(rank + 1), 0, outExprs, ctx)};
}

} // namespace kiln

#endif // KILN_PASSES_UTILS_INT8MATMUL_H
