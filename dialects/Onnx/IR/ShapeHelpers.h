//===- ShapeHelpers.h - Helpers for onnx shape functions ----------*- C++ -*-===//
//
// Shared by the shape functions, verifiers and folders of the onnx dialect:
// reading constant operands, numpy broadcasting, axis normalisation and
// refining a result's type without ever contradicting what is known. Also
// how every pass's diagnostics name an onnx op (opLabel).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_IR_SHAPEHELPERS_H
#define KILN_DIALECTS_ONNX_IR_SHAPEHELPERS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <string>

namespace kiln::onnx {

/// A shape: std::nullopt when even the rank is unknown; dims may be
/// ShapedType::kDynamic.
using MaybeShape = std::optional<llvm::SmallVector<int64_t>>;

/// The shape of a tensor-typed value (nullopt if unranked or not a tensor).
MaybeShape shapeOf(mlir::Value v);

/// The dense constant a value is defined by (`onnx.Constant` or any
/// ConstantLike op), if any. Dense resources are not read.
mlir::DenseElementsAttr constantOf(mlir::Value v);

/// The integer values of a constant operand (any integer element type).
std::optional<llvm::SmallVector<int64_t>> constantInts(mlir::Value v);

/// The values of a 0-D or 1-D integer tensor that computes a shape, where
/// they are known at compile time: kDynamic for an element that is not
/// (a dynamic dim read by Shape). Follows constants, Shape, Gather with
/// constant indices, Unsqueeze/Squeeze/Reshape/Identity/Cast, Concat,
/// integer Add/Sub/Mul/Div, and the Equal, Where and ConstantOfShape of
/// torch's expand(n, -1, -1). None when `v` is not such a computation.
std::optional<llvm::SmallVector<int64_t>> partialInts(mlir::Value v);

/// Where element `i` of the 1-D integer tensor `v` (a shape computation)
/// comes from, when it is a dim read with Shape: that value and the dim.
/// Follows Shape, Gather with constant indices, Slice with constant
/// bounds, Unsqueeze/Squeeze/Reshape/Identity/Cast and Concat.
std::optional<std::pair<mlir::Value, int64_t>> shapeElementSource(mlir::Value v, int64_t i);

/// True if `v` is absent (`none`).
bool isNone(mlir::Value v);

/// Which of the model's symbolic dims `names` (kiln-dim-symbols' order)
/// each dim of `type` is, by their names `dimNames` (an argument's
/// `kiln.dim_names`, "" for a static dim): its index in `names`, -1 for a
/// static dim, -2 for a `?` not named so.
llvm::SmallVector<int64_t> namedDimSymbols(mlir::RankedTensorType type,
                                           mlir::ArrayAttr dimNames,
                                           llvm::ArrayRef<mlir::Attribute> names);

/// The symbolic dim each dim of `v` is, as kiln-dim-symbols recorded it
/// (its index in the function's `kiln.symbol_names`, -1 static, -2 none of
/// them): an op result's `kiln.dim_symbols`, a function argument's own
/// `kiln.dim_symbols` or else its `kiln.dim_names`; empty when nothing says.
llvm::SmallVector<int64_t> recordedDimSymbols(mlir::Value v);

/// What dim id `id` (recordedDimSymbols) is on the function `func` of the
/// model: [c0, c_0, ..., c_{n-1}] for c0 + sum c_k dim_k over the n
/// symbolic dims (symbol k: c_k = 1, the rest 0; an expression: the k-th
/// of `func`'s `kiln.dim_exprs`); empty for none.
llvm::SmallVector<int64_t> dimExpression(mlir::Operation *func, int64_t id);

/// `expr` (as dimExpression gives it) written out with the dims' names:
/// "past + seq", "2*seq + 1", "seq - 1".
std::string dimExprString(llvm::ArrayRef<int64_t> expr,
                          llvm::ArrayRef<mlir::Attribute> names);

/// What floor dim `id` is on the function `func` of the model (ids after
/// the expressions, the j-th of `func`'s `kiln.dim_floors`): {id', a, s}
/// for floor((dim(id') + a) / s), a window op's output size; empty for
/// any other id.
llvm::SmallVector<int64_t> dimFloor(mlir::Operation *func, int64_t id);

/// What product dim `id` is on the function `func` of the model (ids
/// after the floor dims, the j-th of `func`'s `kiln.dim_products`): {c, i,
/// j} for c * dim(i) * dim(j), i and j earlier dims (a Reshape merging two
/// dynamic dims); empty for any other id.
llvm::SmallVector<int64_t> dimProduct(mlir::Operation *func, int64_t id);

/// Dim `id` of `func` written out: the symbol's name, the expression
/// ("past + seq"), the floor ("floor((H + 1)/2)") or the product
/// ("8*batch*seq"); "?" for none.
std::string dimIdString(mlir::Operation *func, int64_t id);

/// Adds `constraints` (expressions, as dimExpression gives them, that the
/// entry point checks are >= 0) to `func`'s `kiln.dim_constraints`, once
/// each.
void addDimConstraints(mlir::Operation *func, llvm::ArrayRef<mlir::Attribute> constraints);

/// Spatial dim `spatial` of a window op's output (Conv, MaxPool,
/// AveragePool) as floor((in + a) / s) of the same dim of its input X:
/// {a, s}, valid wherever the op has at least one window (in + a >= s);
/// none for other ops or when no such rule holds (ceil_mode whose last
/// window may be dropped).
std::optional<std::pair<int64_t, int64_t>> windowDimFloor(mlir::Operation *op,
                                                          int64_t spatial);

/// How diagnostics name an onnx op: its type and the model's opset, e.g.
/// "Pad (opset 18)" (the opset is left out when the module has none).
std::string opLabel(mlir::Operation *op);

/// Numpy (multidirectional) broadcasting. Fails, with a diagnostic on `op`,
/// when two static dims disagree and neither is 1.
mlir::FailureOr<MaybeShape> broadcastShapes(mlir::Operation *op,
                                            llvm::ArrayRef<MaybeShape> shapes);

/// Normalises `axis` into [0, rank); fails with a diagnostic naming `what`.
mlir::FailureOr<int64_t> normalizeAxis(mlir::Operation *op, int64_t axis,
                                       int64_t rank, llvm::StringRef what);

/// Refines the type of `result` to `shape` (keeping its element type):
/// unknown dims are filled from either side; a static dim that contradicts
/// the current type is an error on `op`.
mlir::LogicalResult refineResult(mlir::Operation *op, mlir::Value result,
                                 const MaybeShape &shape);

/// Same, with a fully unknown shape of known rank.
mlir::LogicalResult refineRank(mlir::Operation *op, mlir::Value result,
                               int64_t rank);

/// The [start, end) dims that onnx.Shape returns for an input of `rank`
/// (negative values count from the end; both are clamped to [0, rank]).
std::pair<int64_t, int64_t> shapeOpRange(int64_t rank, int64_t start,
                                         std::optional<int64_t> end);

/// Product of dims, or kDynamic if any is dynamic.
int64_t product(llvm::ArrayRef<int64_t> dims);

/// An Einsum equation's terms: each input's letters and the output's,
/// '.' standing for an ellipsis (at most one a term). The output is the
/// explicit one after "->" (with '.' in front when it has none and an
/// input has one, where the broadcast dims go), else numpy's implicit
/// one: '.' if an input has one, then the letters used once,
/// alphabetically.
struct EinsumTerms {
  llvm::SmallVector<std::string> inputs;
  std::string output;
};

/// Parses `equation` (spaces ignored); on failure, says why in `error`.
std::optional<EinsumTerms> parseEinsum(llvm::StringRef equation, std::string &error);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_IR_SHAPEHELPERS_H
