//===- DimExpressions.h - A dim expression's run-time value ---------*- C++ -*-===//
//
// kiln-dim-symbols records a `?` dim that is not one of the model's
// dynamic dims as c0 + sum c_k dim_k ([c0, c_0, ..., c_{n-1}]), a floor
// dim floor((x + a) / s) or a product dim c x y; the lowering
// (DynamicDims.cpp) and kiln-symbolic-arguments both compute its value
// from the dims' values. Header only, like Buffers.h.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_UTILS_DIMEXPRESSIONS_H
#define KILN_PASSES_UTILS_DIMEXPRESSIONS_H

#include "dialects/Onnx/IR/ShapeHelpers.h"

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

/// The value of dim id `id` >= numSymbols of `func` (kiln-dim-symbols'
/// records on it): an expression's, a floor dim's floor((x + a) / s), a
/// product dim's c x y, with `valueOf(k)` the value of the dims it is made
/// of; null when one of those has none, or `id` is none of them.
inline mlir::Value dimIdValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *func,
                              int64_t id, int64_t numSymbols,
                              llvm::function_ref<mlir::Value(int64_t)> valueOf) {
  using namespace mlir;
  if (SmallVector<int64_t> f = kiln::onnx::dimFloor(func, id); !f.empty()) {
    Value base = valueOf(f[0]);
    if (!base)
      return {};
    Value sum = arith::AddIOp::create(b, loc, base, arith::ConstantIndexOp::create(b, loc, f[1]));
    return arith::FloorDivSIOp::create(b, loc, sum, arith::ConstantIndexOp::create(b, loc, f[2]));
  }
  if (SmallVector<int64_t> p = kiln::onnx::dimProduct(func, id); !p.empty()) {
    Value x = valueOf(p[1]), y = valueOf(p[2]);
    if (!x || !y)
      return {};
    Value size = arith::MulIOp::create(b, loc, x, y);
    if (p[0] != 1)
      size = arith::MulIOp::create(b, loc, size, arith::ConstantIndexOp::create(b, loc, p[0]));
    return size;
  }
  SmallVector<int64_t> expr = kiln::onnx::dimExpression(func, id);
  if (expr.empty())
    return {};
  SmallVector<Value> dims(numSymbols);
  for (int64_t k = 0; k < numSymbols; ++k)
    if (k + 1 < int64_t(expr.size()) && expr[k + 1] && !(dims[k] = valueOf(k)))
      return {};
  return dimExpressionValue(b, loc, expr, dims);
}

} // namespace kiln

#endif // KILN_PASSES_UTILS_DIMEXPRESSIONS_H
