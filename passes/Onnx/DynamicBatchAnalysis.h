//===- DynamicBatchAnalysis.h - Where the batch runs through ops -*- C++ -*-===//
//
// The analysis behind kiln-dynamic-batch: which axis of each value holds
// the batch, and whether each op keeps the batch items apart. The walk, the
// shared checks and the graph's outputs are in DynamicBatch.cpp; the rules
// of each op family in DynamicBatchRules.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_ONNX_DYNAMICBATCHANALYSIS_H
#define KILN_PASSES_ONNX_DYNAMICBATCHANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <optional>
#include <string>

namespace kiln::onnx::batch {

using Axis = std::optional<int64_t>;

/// Why an op cannot run one batch item at a time, or success.
struct Verdict {
  std::string reason; ///< Empty: fine.
  static Verdict ok() { return {}; }
  static Verdict no(const llvm::Twine &why) { return {why.str()}; }
};

inline int64_t rankOf(mlir::Value v) {
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
  return t ? t.getRank() : -1;
}

inline int64_t dimOf(mlir::Value v, int64_t axis) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getDimSize(axis);
}

/// `axis` in [-rank, rank) as [0, rank); -1 when out of range.
inline int64_t normalize(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

/// The axes of `list` (in [-rank, rank)) that lie before `batch`, or
/// std::nullopt when one of them is the batch axis.
inline std::optional<int64_t> axesBefore(llvm::ArrayRef<int64_t> list, int64_t rank,
                                         int64_t batch) {
  int64_t before = 0;
  for (int64_t a : list) {
    int64_t n = normalize(a, rank);
    if (n == batch)
      return std::nullopt;
    before += n >= 0 && n < batch;
  }
  return before;
}

/// A size in the one-item graph as `factor * s^symbolic`, where s is the
/// model's dynamic dim besides the batch (the lowering takes every `?` of
/// the one-item graph to be that dim and refuses anything else).
struct Size {
  int64_t factor = 1;
  int64_t symbolic = 0;
  bool operator==(const Size &o) const { return factor == o.factor && symbolic == o.symbolic; }
  bool operator!=(const Size &o) const { return !(*this == o); }
};

inline Size sizeOfDim(int64_t dim) {
  return mlir::ShapedType::isDynamic(dim) ? Size{1, 1} : Size{dim, 0};
}

/// `x * y`; std::nullopt on overflow.
inline std::optional<Size> times(Size x, Size y) {
  Size p{x.factor, x.symbolic + y.symbolic};
  if (llvm::MulOverflow(x.factor, y.factor, p.factor))
    return std::nullopt;
  return p;
}

/// `start` times the product of `dims`; std::nullopt on overflow.
inline std::optional<Size> product(llvm::ArrayRef<int64_t> dims, Size start = Size()) {
  std::optional<Size> p = start;
  for (int64_t d : dims)
    if (!(p = times(*p, sizeOfDim(d))))
      return std::nullopt;
  return p;
}

/// `whole / part` when `part` divides `whole`.
inline std::optional<Size> quotient(Size whole, Size part) {
  if (part.factor <= 0 || whole.factor % part.factor || whole.symbolic < part.symbolic)
    return std::nullopt;
  return Size{whole.factor / part.factor, whole.symbolic - part.symbolic};
}

/// Why a batch merged with other dims cannot meet an operand's values.
inline constexpr const char *kSpansMergedBatch =
    "an operand that does not depend on the batch spans the dim the batch is merged with";

/// Follows the batch from @main's arguments marked `kiln.dynamic_dim`
/// through its ops; run() fails, with an error naming the op, at the first
/// op that would mix batch items, and marks the outputs that carry it.
class Analysis {
public:
  explicit Analysis(llvm::StringRef dimName) : dimName(dimName) {}

  mlir::LogicalResult run(mlir::func::FuncOp func);

private:
  Axis axisOf(mlir::Value v) const {
    auto it = batches.find(v);
    return it == batches.end() ? Axis() : Axis(it->second.axis);
  }

  /// How much of the batched dim of `v` lies inside the batch (see Batch).
  Size innerOf(mlir::Value v) const {
    auto it = batches.find(v);
    return it == batches.end() ? Size() : it->second.inner;
  }

  /// Whether `v`'s batch shares its dim with other dims of the model run
  /// for the whole batch (its dim in the one-item graph is not 1).
  bool merged(mlir::Value v) const {
    Axis a = axisOf(v);
    return a && dimOf(v, *a) != 1;
  }

  /// Results take the batched operands' inner size (visit() checks that
  /// they agree); Reshape, which changes it, passes its own.
  void set(mlir::Value v, int64_t axis) { batches[v] = {axis, opInner}; }
  void set(mlir::Value v, int64_t axis, Size inner) { batches[v] = {axis, inner}; }

  /// Ops that follow a batch merged with other dims (they treat the dims
  /// they do not work along as independent rows).
  static bool followsMergedBatch(mlir::Operation *op);

  mlir::LogicalResult visit(mlir::Operation *op);
  mlir::LogicalResult fail(mlir::Operation *op, llvm::StringRef reason);
  mlir::LogicalResult finish(mlir::func::FuncOp func, mlir::func::ReturnOp ret);

  // Checks shared by the rules (DynamicBatch.cpp).

  /// Numpy broadcasting: the batched operands' axes, aligned to the
  /// result's rank, must agree, the result's dim there must stay the
  /// batched operands' one, and other operands must broadcast along it.
  Verdict broadcast(mlir::Operation *op, mlir::ValueRange operands, mlir::ValueRange results);
  /// Ops on [N, C, ...] data whose other operands are parameters.
  Verdict leadingBatch(mlir::Operation *op, llvm::ArrayRef<unsigned> batchedOperands,
                       llvm::ArrayRef<unsigned> batchedResults);
  /// `axis` must not be the batch axis of `data`; results keep it.
  Verdict otherAxis(mlir::Operation *op, mlir::Value data, int64_t axis,
                    mlir::ValueRange results);
  /// Only operand `index` may be batched.
  bool onlyBatched(mlir::Operation *op, unsigned index);
  /// A reduction of `data` over `axesList` (none: every axis).
  Verdict reduce(mlir::Operation *op, mlir::Value data,
                 std::optional<llvm::SmallVector<int64_t>> axesList, bool keepdims,
                 bool noopWithEmpty);
  /// The one-item elements inside `data`'s batch, counting its dims up to
  /// `end`: the inner size times the dims between the batch's and `end`.
  std::optional<Size> elementsInside(mlir::Value data, int64_t end) const;
  /// Where a Reshape puts the batch.
  Verdict reshape(mlir::Operation *op);

  // The rules (DynamicBatchRules.cpp): where `op`'s results carry the
  // batch, or why it cannot run one item at a time. Each family's rule
  // returns std::nullopt for ops outside the family.

  Verdict rule(mlir::Operation *op);
  std::optional<Verdict> elementwiseRule(mlir::Operation *op);
  std::optional<Verdict> channelsFirstRule(mlir::Operation *op);
  std::optional<Verdict> matmulRule(mlir::Operation *op);
  std::optional<Verdict> layoutRule(mlir::Operation *op);
  std::optional<Verdict> movementRule(mlir::Operation *op);
  std::optional<Verdict> gatherRule(mlir::Operation *op);
  std::optional<Verdict> alongAxisRule(mlir::Operation *op);
  std::optional<Verdict> recurrentRule(mlir::Operation *op);

  /// Where a value's batch is: the axis of the dim that holds it, and how
  /// much of that dim (in the one-item graph) lies inside the batch. In the
  /// model run for the whole batch the dim is outer * N * inner, the batch
  /// index b counting in steps of `inner`: [L, N*4, 64] from torch's
  /// attention export has the batch at axis 1 with inner 4 (the heads),
  /// [L*N, 256] at axis 0 with inner 1. A batch of its own dim has inner 1
  /// and dim 1.
  struct Batch {
    int64_t axis;
    Size inner;
  };

  std::string dimName;
  llvm::DenseMap<mlir::Value, Batch> batches;
  Size opInner; ///< The inner size of the batched operands of the op being visited.
};

} // namespace kiln::onnx::batch

#endif // KILN_PASSES_ONNX_DYNAMICBATCHANALYSIS_H
