//===- DimExpressions.h - A dim expression's run-time value ---------*- C++ -*-===//
//
// kiln-dim-symbols records a `?` dim that is not one of the model's
// dynamic dims as c0 + sum c_k dim_k ([c0, c_0, ..., c_{n-1}]); the
// lowering (DynamicDims.cpp) and kiln-symbolic-arguments both compute its
// value from the dims' values. Header only, like Buffers.h.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_UTILS_DIMEXPRESSIONS_H
#define KILN_PASSES_UTILS_DIMEXPRESSIONS_H

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace kiln {

/// c0 + sum c_k dims[k] as index arithmetic, for `expr` = [c0, c_0, ...];
/// dims[k] may be null where c_k is 0.
inline mlir::Value dimExpressionValue(mlir::OpBuilder &b, mlir::Location loc,
                                      llvm::ArrayRef<int64_t> expr,
                                      llvm::ArrayRef<mlir::Value> dims) {
  mlir::Value sum = mlir::arith::ConstantIndexOp::create(b, loc, expr[0]);
  for (size_t k = 0; k + 1 < expr.size() && k < dims.size(); ++k) {
    if (!expr[k + 1])
      continue;
    mlir::Value term = dims[k];
    if (expr[k + 1] != 1)
      term = mlir::arith::MulIOp::create(
          b, loc, term, mlir::arith::ConstantIndexOp::create(b, loc, expr[k + 1]));
    sum = mlir::arith::AddIOp::create(b, loc, sum, term);
  }
  return sum;
}

} // namespace kiln

#endif // KILN_PASSES_UTILS_DIMEXPRESSIONS_H
