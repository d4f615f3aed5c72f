//===- Int8Matmul.h - The int8 matmul generic's form -------------*- C++ -*-===//
//
// The contract between the lowering of MatMulInteger/QLinearMatMul by a
// constant B (Quantize.cpp, matMulConstantB), which makes
//
//   out[d0, ..., d(r-1)] += ext(A[d0, ..., d(r-2), dr]) * extsi(B[dr, d(r-1)])
//
// (r the rank of A and out, dr the reduction), and kiln-vectorize-int8-
// matmul, which matches exactly that form. Header only.
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

} // namespace kiln

#endif // KILN_PASSES_UTILS_INT8MATMUL_H
