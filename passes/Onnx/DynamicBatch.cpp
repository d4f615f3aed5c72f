//===- DynamicBatch.cpp - kiln-dynamic-batch pass --------------------------===//
//
// A model exported with a symbolic batch dim (torch.onnx.export's
// dynamic_axes={'x': {0: 'batch'}}) is compiled for one batch item: the
// importer pins the leading dim of those inputs to 1 and marks them
// `kiln.dynamic_dim`, and the generated entry point runs the item-sized code
// once per item, at the item's offset in each batched input and output. The
// plan stays static (the workspace does not grow with the batch), which is
// what firmware needs.
//
// That is only right if every item is computed independently of the others.
// This pass proves it: it follows the batch dim from the marked inputs
// through every op (elementwise ops with broadcasting, convolutions and
// pools, MatMul/Gemm, reshapes, transposes, reductions over other axes,
// normalisations, Gather, RNNs, ...), and fails on the first op that would
// mix items (a reduction, concat or gather over the batch axis, training-
// mode BatchNorm, MaxPool's flat indices, a change of the batch dim's size,
// an op it does not know) with a reason that names the op. Transposes may
// move the batch anywhere; outputs must carry it leading.
// kiln-dynamic-batch-values (DynamicBatchValues.cpp), first in the onnx
// phase, catches the batch size used as a value before shape folding turns
// it into 1. Graph outputs that carry the batch must carry
// it as their leading dim; they get `kiln.dynamic_dim` too. Outputs that do
// not depend on the batch are computed once per item, identically.
//
// In the item-sized graph a batch dim of its own has size 1; that is what
// makes the broadcasting rules simple: a batch dim that is broadcast
// against a larger dim (result size > 1) mixes items.
//
// A value's batch axis is where the batch sits in the model run for the
// whole batch; it may share that dim with others, as torch's
// nn.MultiheadAttention export has it ([L, N*heads, d], [L*N, E]), which
// the batch's inner size records (Analysis::Batch). Every rule derives
// both exactly from the op's attributes but Reshape's, where several result
// dims can fit the batch: the dims kiln-dynamic-batch-values saw grow with
// the batch decide, else the only one that fits, else for a batch
// outermost in its input the leading dim (an item of [1, 64] reshaped to
// [1, 1, 8, 8] is read as [N, 1, 8, 8], not [1, N, 8, 8]), which is how
// exporters write the batch.
//
//===----------------------------------------------------------------------===//

#include "passes/Onnx/Passes.h"
#include "passes/Onnx/DynamicBatchUtils.h"

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace kiln::onnx {
#define GEN_PASS_DEF_ONNXDYNAMICBATCHPASS
#include "passes/Onnx/Passes.h.inc"
} // namespace kiln::onnx

using namespace mlir;
namespace onnx = kiln::onnx;

/// "ReduceMean (opset 17): cannot run the dynamic batch dim 'N' one item at
/// a time: <why>; pin the batch with --input-shape for static code".
std::string kiln::onnx::batch::refusal(Operation *op, StringRef dimName, const Twine &why) {
  return (onnx::opLabel(op) + ": cannot run the dynamic batch dim '" + dimName +
          "' one item at a time: " + why + "; pin the batch with --input-shape for static code")
      .str();
}

/// Elementwise ops, with numpy broadcasting.
bool kiln::onnx::batch::isElementwise(Operation *op) {
  return isa<onnx::AbsOp, onnx::AcosOp, onnx::AcoshOp, onnx::AddOp, onnx::AndOp, onnx::AsinOp,
             onnx::AsinhOp, onnx::AtanOp, onnx::AtanhOp, onnx::BitShiftOp,
             onnx::CastOp, onnx::CeilOp, onnx::CeluOp, onnx::ClipOp, onnx::CosOp, onnx::CoshOp,
             onnx::DivOp, onnx::EluOp, onnx::EqualOp, onnx::ErfOp, onnx::ExpOp, onnx::FloorOp,
             onnx::GreaterOp, onnx::GreaterOrEqualOp, onnx::HardSigmoidOp, onnx::HardSwishOp,
             onnx::IdentityOp, onnx::IsInfOp, onnx::IsNaNOp, onnx::LeakyReluOp, onnx::LessOp,
             onnx::LessOrEqualOp, onnx::LogOp, onnx::MaxOp, onnx::MeanOp, onnx::MinOp,
             onnx::ModOp, onnx::MulOp, onnx::NegOp, onnx::NotOp, onnx::OrOp, onnx::PReluOp,
             onnx::PowOp, onnx::ReciprocalOp, onnx::ReluOp, onnx::RoundOp, onnx::SeluOp,
             onnx::ShrinkOp, onnx::SigmoidOp, onnx::SignOp, onnx::SinOp, onnx::SinhOp,
             onnx::SoftplusOp, onnx::SoftsignOp, onnx::SqrtOp, onnx::SubOp, onnx::SumOp,
             onnx::TanOp, onnx::TanhOp, onnx::ThresholdedReluOp, onnx::WhereOp, onnx::XorOp>(op);
}

namespace {

using onnx::batch::isElementwise;
using onnx::batch::refusal;
using Axis = std::optional<int64_t>;

/// Why an op cannot run one batch item at a time, or success.
struct Verdict {
  std::string reason; ///< Empty: fine.
  static Verdict ok() { return {}; }
  static Verdict no(const Twine &why) { return {why.str()}; }
};

int64_t rankOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getRank() : -1;
}

int64_t dimOf(Value v, int64_t axis) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getDimSize(axis);
}

/// `axis` in [-rank, rank) as [0, rank); -1 when out of range.
int64_t normalize(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

/// The axes of `list` (in [-rank, rank)) that lie before `batch`, or
/// std::nullopt when one of them is the batch axis.
std::optional<int64_t> axesBefore(ArrayRef<int64_t> list, int64_t rank, int64_t batch) {
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

Size sizeOfDim(int64_t dim) { return ShapedType::isDynamic(dim) ? Size{1, 1} : Size{dim, 0}; }

/// `x * y`; std::nullopt on overflow.
std::optional<Size> times(Size x, Size y) {
  Size p{x.factor, x.symbolic + y.symbolic};
  if (llvm::MulOverflow(x.factor, y.factor, p.factor))
    return std::nullopt;
  return p;
}

/// `start` times the product of `dims`; std::nullopt on overflow.
std::optional<Size> product(ArrayRef<int64_t> dims, Size start = Size()) {
  std::optional<Size> p = start;
  for (int64_t d : dims)
    if (!(p = times(*p, sizeOfDim(d))))
      return std::nullopt;
  return p;
}

/// Why a batch merged with other dims cannot meet an operand's values.
constexpr const char *kSpansMergedBatch =
    "an operand that does not depend on the batch spans the dim the batch is merged with";

/// `whole / part` when `part` divides `whole`.
std::optional<Size> quotient(Size whole, Size part) {
  if (part.factor <= 0 || whole.factor % part.factor || whole.symbolic < part.symbolic)
    return std::nullopt;
  return Size{whole.factor / part.factor, whole.symbolic - part.symbolic};
}

/// Whether every element of `v` is the same (ConstantOfShape, a splat):
/// any part of it is the part for any item (torch's zeros_like of a mask
/// merged with the heads).
bool uniform(Value v) {
  if (isa_and_nonnull<onnx::ConstantOfShapeOp>(v.getDefiningOp()))
    return true;
  DenseElementsAttr values;
  return matchPattern(v, m_Constant(&values)) && values.isSplat();
}

class Analysis {
public:
  explicit Analysis(StringRef dimName) : dimName(dimName) {}

  LogicalResult run(func::FuncOp func) {
    for (BlockArgument arg : func.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), "kiln.dynamic_dim"))
        batches[arg] = {0, Size()};
    for (Operation &op : func.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op))
        return finish(func, ret);
      if (failed(visit(&op)))
        return failure();
    }
    return success();
  }

private:
  Axis axisOf(Value v) const {
    auto it = batches.find(v);
    return it == batches.end() ? Axis() : Axis(it->second.axis);
  }

  /// How much of the batched dim of `v` lies inside the batch (see Batch).
  Size innerOf(Value v) const {
    auto it = batches.find(v);
    return it == batches.end() ? Size() : it->second.inner;
  }

  /// Whether `v`'s batch shares its dim with other dims of the model run
  /// for the whole batch (its dim in the one-item graph is not 1).
  bool merged(Value v) const {
    Axis a = axisOf(v);
    return a && dimOf(v, *a) != 1;
  }

  /// Results take the batched operands' inner size (visit() checks that
  /// they agree); Reshape, which changes it, passes its own.
  void set(Value v, int64_t axis) { batches[v] = {axis, opInner}; }
  void set(Value v, int64_t axis, Size inner) { batches[v] = {axis, inner}; }

  /// Ops that follow a batch merged with other dims (they treat the dims
  /// they do not work along as independent rows).
  static bool followsMergedBatch(Operation *op) {
    return isElementwise(op) ||
           isa<onnx::CastLikeOp, onnx::DropoutOp, onnx::MatMulOp, onnx::GemmOp, onnx::ReshapeOp,
               onnx::FlattenOp, onnx::ShapeOp, onnx::SizeOp,
               onnx::TransposeOp, onnx::SqueezeOp, onnx::UnsqueezeOp, onnx::ConcatOp,
               onnx::SplitOp, onnx::SliceOp, onnx::GatherOp, onnx::GatherElementsOp,
               onnx::SoftmaxOp, onnx::LogSoftmaxOp, onnx::HardmaxOp, onnx::LpNormalizationOp,
               onnx::LayerNormalizationOp, onnx::CumSumOp, onnx::TopKOp, onnx::ArgMaxOp,
               onnx::ArgMinOp, onnx::ReduceL1Op, onnx::ReduceL2Op, onnx::ReduceLogSumExpOp,
               onnx::ReduceLogSumOp, onnx::ReduceMaxOp, onnx::ReduceMeanOp, onnx::ReduceMinOp,
               onnx::ReduceProdOp, onnx::ReduceSumOp, onnx::ReduceSumSquareOp, onnx::ExpandOp,
               onnx::TileOp, onnx::PadOp>(op);
  }

  LogicalResult visit(Operation *op) {
    bool batched = llvm::any_of(op->getOperands(), [&](Value v) { return axisOf(v).has_value(); });
    // Values a region reads from outside: a subgraph over a batched value
    // would run once for the whole batch.
    bool captures = false;
    op->walk([&](Operation *inner) {
      if (inner == op)
        return;
      for (Value v : inner->getOperands())
        if (axisOf(v) && !op->isAncestor(v.getParentBlock()->getParentOp()))
          captures = true;
    });
    if (!batched && !captures)
      return success();
    if (captures)
      return fail(op, "a subgraph reads a batched value");
    auto ranked = [](Value v) { return isa<RankedTensorType>(v.getType()); };
    for (Value v : op->getOperands())
      if (axisOf(v) && !ranked(v))
        return fail(op, "a batched operand is not a ranked tensor");
    for (Value r : op->getResults())
      if (!isa<NoneType>(r.getType()) && !ranked(r))
        return fail(op, "its results are not ranked tensors");
    // The batched operands' batch dim: its size and inner size, which
    // every batched operand shares.
    std::optional<int64_t> batchDim;
    std::optional<Size> inner;
    for (Value v : op->getOperands()) {
      if (!axisOf(v))
        continue;
      if ((inner && *inner != innerOf(v)) || (batchDim && *batchDim != dimOf(v, *axisOf(v))))
        return fail(op, "its operands carry the batch merged with different dims");
      inner = innerOf(v);
      batchDim = dimOf(v, *axisOf(v));
      if (merged(v) && !followsMergedBatch(op))
        return fail(op, "the batch is merged with other dims (as torch's attention export "
                        "does), which kiln follows through reshapes, transposes, matmuls, "
                        "elementwise ops, softmax, normalisations and reductions over other "
                        "axes, not through this op");
    }
    opInner = *inner;
    Verdict v = rule(op);
    if (!v.reason.empty())
      return fail(op, v.reason);
    // Every result that carries the batch carries it at a dim of the
    // batched operands' size (1 unless merged with others; Reshape and
    // Flatten change it), which holds its inner size.
    for (Value r : op->getResults()) {
      Axis a = axisOf(r);
      if (!a)
        continue;
      if (*a < 0 || *a >= rankOf(r) ||
          (!isa<onnx::ReshapeOp, onnx::FlattenOp>(op) && dimOf(r, *a) != *batchDim) ||
          !quotient(sizeOfDim(dimOf(r, *a)), innerOf(r)))
        return fail(op, "it changes the size of the batch dim");
    }
    return success();
  }

  LogicalResult fail(Operation *op, StringRef reason) {
    return op->emitError() << refusal(op, dimName, reason);
  }

  /// Numpy broadcasting: the batched operands' axes, aligned to the
  /// result's rank, must agree, the result's dim there must stay the
  /// batched operands' one, and other operands must broadcast along it.
  Verdict broadcast(Operation *op, ValueRange operands, ValueRange results) {
    int64_t rank = -1;
    for (Value r : results)
      rank = std::max(rank, rankOf(r));
    Axis aligned;
    int64_t batchDim = 1;
    for (Value v : operands) {
      Axis a = axisOf(v);
      if (!a)
        continue;
      int64_t at = *a + rank - rankOf(v);
      if (at < 0 || at >= rank)
        return Verdict::no("its result does not keep the batch dim");
      if (aligned && *aligned != at)
        return Verdict::no("its operands carry the batch at different axes");
      aligned = at;
      batchDim = dimOf(v, *a);
    }
    if (!aligned)
      return Verdict::ok(); // Nothing batched: the results are not either.
    for (Value v : operands) {
      int64_t at = *aligned - (rank - rankOf(v));
      if (batchDim != 1 && !axisOf(v) && !onnx::isNone(v) && !uniform(v) &&
          (!isa<RankedTensorType>(v.getType()) || (at >= 0 && dimOf(v, at) != 1)))
        return Verdict::no(kSpansMergedBatch);
    }
    for (Value r : results) {
      if (rankOf(r) != rank)
        return Verdict::no("its results have different ranks");
      if (dimOf(r, *aligned) != batchDim)
        return Verdict::no("it broadcasts the batch dim against a larger dim");
      set(r, *aligned);
    }
    return Verdict::ok();
  }

  /// Ops on [N, C, ...] data whose other operands are parameters.
  Verdict leadingBatch(Operation *op, ArrayRef<unsigned> batchedOperands,
                       ArrayRef<unsigned> batchedResults) {
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      Axis a = axisOf(v);
      bool expected = llvm::is_contained(batchedOperands, i);
      if (a && (!expected || *a != 0))
        return Verdict::no(expected ? "its input carries the batch at axis " +
                                          std::to_string(*a) + ", not 0"
                                    : "operand " + std::to_string(i) +
                                          " (a parameter) depends on the batch");
    }
    for (unsigned r : batchedResults)
      if (r < op->getNumResults() && !isa<NoneType>(op->getResult(r).getType()))
        set(op->getResult(r), 0);
    return Verdict::ok();
  }

  /// `axis` must not be the batch axis `b`; results keep `b`.
  Verdict otherAxis(Operation *op, Value data, int64_t axis, ValueRange results) {
    int64_t b = *axisOf(data);
    int64_t n = normalize(axis, rankOf(data));
    if (n < 0 || n == b)
      return Verdict::no("it works along the batch axis");
    for (Value r : results)
      if (!isa<NoneType>(r.getType()))
        set(r, b);
    return Verdict::ok();
  }

  /// Only operand `index` may be batched.
  bool onlyBatched(Operation *op, unsigned index) {
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      if (i != index && axisOf(v))
        return false;
    return true;
  }

  Verdict reduce(Operation *op, Value data, std::optional<SmallVector<int64_t>> axesList,
                 bool keepdims, bool noopWithEmpty) {
    int64_t b = *axisOf(data), rank = rankOf(data);
    if (!axesList || axesList->empty()) {
      if (noopWithEmpty) {
        set(op->getResult(0), b);
        return Verdict::ok();
      }
      return Verdict::no("it reduces over every axis, the batch's too");
    }
    std::optional<int64_t> before = axesBefore(*axesList, rank, b);
    if (!before)
      return Verdict::no("it reduces over the batch axis");
    set(op->getResult(0), keepdims ? b : b - *before);
    return Verdict::ok();
  }

  /// The one-item elements inside `data`'s batch, counting its dims up to
  /// `end`: the inner size times the dims between the batch's and `end`.
  std::optional<Size> elementsInside(Value data, int64_t end) const {
    int64_t a = *axisOf(data);
    ArrayRef<int64_t> shape = cast<RankedTensorType>(data.getType()).getShape();
    return product(shape.slice(a + 1, end - a - 1), innerOf(data));
  }

  /// A Reshape keeps the flat order, so the batch keeps the number of
  /// one-item elements inside it (its inner size times the dims after its
  /// axis). It lands in a result dim c whose later dims fit in that count,
  /// the rest of which (c's new inner size) divides c's dim. Several dims
  /// can fit (unit dims; [L, 4, 64] from [L, 1, 256], which the model run
  /// for the whole batch may have as [L*N, 4, 64] or [L, N*4, 64]):
  /// kiln-dynamic-batch-values recorded which result dims grow with the
  /// batch (`kiln.batch_growth`, from the shape computations run at batch
  /// 2: 1 grows, 0 does not, -1 unknown).
  Verdict reshape(Operation *op) {
    Value data = op->getOperand(0), result = op->getResult(0);
    int64_t a = *axisOf(data);
    ArrayRef<int64_t> in = cast<RankedTensorType>(data.getType()).getShape();
    ArrayRef<int64_t> out = cast<RankedTensorType>(result.getType()).getShape();
    std::optional<Size> inside = elementsInside(data, in.size());
    if (!inside)
      return Verdict::no("its shapes are too large");
    auto growthAttr = op->getAttrOfType<DenseI64ArrayAttr>("kiln.batch_growth");
    ArrayRef<int64_t> growth;
    if (growthAttr && growthAttr.size() == static_cast<int64_t>(out.size()))
      growth = growthAttr.asArrayRef();
    SmallVector<std::pair<int64_t, Size>> candidates, growing;
    for (int64_t c = 0; c < static_cast<int64_t>(out.size()); ++c) {
      std::optional<Size> later = product(out.drop_front(c + 1));
      std::optional<Size> inner = later ? quotient(*inside, *later) : std::nullopt;
      if (!inner || !quotient(sizeOfDim(out[c]), *inner) || (!growth.empty() && growth[c] == 0))
        continue;
      candidates.push_back({c, *inner});
      if (!growth.empty() && growth[c] == 1)
        growing.push_back({c, *inner});
    }
    // The probe's growing dims bind: one at most, and it must fit.
    int64_t grown = llvm::count(growth, 1);
    if (grown > 1)
      return Verdict::no("more than one of its result dims grows with the batch");
    if (candidates.empty() || (grown == 1 && growing.empty()))
      return Verdict::no("it splits the batch across dims");
    // Without a dim seen to grow: the only one that fits, or, for a batch
    // outermost in its input, the leading dim (how exporters write it).
    std::optional<std::pair<int64_t, Size>> chosen;
    if (growing.size() == 1)
      chosen = growing.front();
    else if (candidates.size() == 1)
      chosen = candidates.front();
    else if (!merged(data) && llvm::all_of(in.take_front(a), [](int64_t d) { return d == 1; }) &&
             out[0] == 1 && candidates.front().first == 0)
      chosen = candidates.front();
    if (!chosen)
      return Verdict::no("kiln cannot tell which of its result dims holds the batch");
    set(result, chosen->first, chosen->second);
    return Verdict::ok();
  }

  Verdict rule(Operation *op);
  LogicalResult finish(func::FuncOp func, func::ReturnOp ret);

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
  llvm::DenseMap<Value, Batch> batches;
  Size opInner; ///< The inner size of the batched operands of the op being visited.
};

Verdict Analysis::rule(Operation *op) {
  if (isElementwise(op))
    return broadcast(op, op->getOperands(), op->getResults());
  // The batch size in a shape is 1 here; kiln-dynamic-batch-values checked
  // that it only shapes tensors (a dynamic dim besides the batch keeps
  // Shape from folding).
  if (isa<onnx::ShapeOp, onnx::SizeOp>(op))
    return Verdict::ok();
  if (isa<onnx::CastLikeOp>(op)) {
    // The second operand only gives the element type.
    if (Axis a = axisOf(op->getOperand(0)))
      set(op->getResult(0), *a);
    return Verdict::ok();
  }
  if (auto d = dyn_cast<onnx::DropoutOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its ratio depends on the batch");
    SmallVector<Value> results;
    for (Value r : op->getResults())
      if (!isa<NoneType>(r.getType()))
        results.push_back(r);
    return broadcast(op, d.getData(), results);
  }
  // Per-tensor or per-axis (de)quantisation of batched data.
  if (isa<onnx::QuantizeLinearOp, onnx::DequantizeLinearOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its scale or zero point depends on the batch");
    Value x = op->getOperand(0), scale = op->getOperand(1);
    if (rankOf(scale) == 1 && dimOf(scale, 0) != 1) {
      int64_t axis = op->getAttrOfType<IntegerAttr>("axis")
                         ? op->getAttrOfType<IntegerAttr>("axis").getInt()
                         : 1;
      return otherAxis(op, x, axis, op->getResults());
    }
    set(op->getResult(0), *axisOf(x));
    return Verdict::ok();
  }

  // [N, C, ...] ops: convolutions, pools, normalisations, resampling.
  if (isa<onnx::ConvOp, onnx::ConvTransposeOp, onnx::ConvIntegerOp, onnx::AveragePoolOp,
          onnx::LpPoolOp, onnx::GlobalAveragePoolOp, onnx::GlobalMaxPoolOp,
          onnx::GlobalLpPoolOp, onnx::InstanceNormalizationOp, onnx::LRNOp,
          onnx::DepthToSpaceOp, onnx::SpaceToDepthOp, onnx::ResizeOp, onnx::UpsampleOp>(op))
    return leadingBatch(op, {0}, {0});
  if (auto pool = dyn_cast<onnx::MaxPoolOp>(op)) {
    if (op->getNumResults() > 1 && !op->getResult(1).use_empty())
      return Verdict::no("its indices count elements across the whole batch");
    return leadingBatch(op, {0}, {0});
  }
  if (auto bn = dyn_cast<onnx::BatchNormalizationOp>(op)) {
    auto training = op->getAttrOfType<IntegerAttr>("training_mode");
    if (training && training.getInt() != 0)
      return Verdict::no("in training mode it normalises with the batch's statistics");
    for (unsigned r = 1; r < op->getNumResults(); ++r)
      if (!isa<NoneType>(op->getResult(r).getType()) && !op->getResult(r).use_empty())
        return Verdict::no("in training mode it takes statistics over the batch");
    return leadingBatch(op, {0}, {0});
  }
  if (isa<onnx::GridSampleOp>(op))
    return leadingBatch(op, {0, 1}, {0});
  if (auto mvn = dyn_cast<onnx::MeanVarianceNormalizationOp>(op)) {
    for (int64_t a : mvn.getAxes())
      if (normalize(a, rankOf(op->getOperand(0))) == *axisOf(op->getOperand(0)))
        return Verdict::no("it normalises over the batch axis");
    if (!onlyBatched(op, 0))
      return Verdict::no("a parameter depends on the batch");
    set(op->getResult(0), *axisOf(op->getOperand(0)));
    return Verdict::ok();
  }

  if (isa<onnx::MatMulOp, onnx::MatMulIntegerOp>(op)) {
    for (unsigned i = 2; i < op->getNumOperands(); ++i)
      if (axisOf(op->getOperand(i)))
        return Verdict::no("its zero point depends on the batch");
    Value a = op->getOperand(0), b = op->getOperand(1);
    int64_t ra = rankOf(a), rb = rankOf(b), r = rankOf(op->getResult(0));
    Axis aa = axisOf(a), ab = axisOf(b);
    // Where each operand's batch dim lands in the result.
    Axis fromA, fromB;
    if (aa) {
      if (*aa == ra - 1)
        return Verdict::no("the batch is the contracted dim of its first operand");
      fromA = rb == 1 ? *aa : *aa + r - ra;
    }
    if (ab) {
      if (rb == 1 || *ab == rb - 2)
        return Verdict::no("the batch is the contracted dim of its second operand");
      fromB = *ab == rb - 1 ? r - 1 : *ab + r - rb;
      if (*ab < rb - 2 && ra == 1)
        fromB = *ab + (r - (rb - 1));
    }
    if (!fromA && !fromB)
      return Verdict::no("unexpected operands");
    if (fromA && fromB && *fromA != *fromB)
      return Verdict::no("its operands carry the batch at different axes");
    int64_t at = fromA ? *fromA : *fromB;
    int64_t batchDim = fromA ? dimOf(a, *aa) : dimOf(b, *ab);
    if (at < 0 || at >= r || dimOf(op->getResult(0), at) != batchDim)
      return Verdict::no("it broadcasts the batch dim against a larger dim");
    if (fromA && fromB && *fromA >= r - 2)
      return Verdict::no("both operands carry the batch in their matrix dims");
    // A batch merged into a broadcast dim: the other operand must not
    // span that dim on its own.
    if (at < r - 2 && !(fromA && fromB)) {
      Value other = fromA ? b : a;
      int64_t ro = fromA ? rb : ra;
      int64_t there = at - (r - ro);
      if (ro >= 3 && there >= 0 && there < ro - 2 && dimOf(other, there) != 1)
        return Verdict::no(kSpansMergedBatch);
    }
    set(op->getResult(0), at);
    return Verdict::ok();
  }
  if (auto gemm = dyn_cast<onnx::GemmOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its B or C operand depends on the batch");
    int64_t a = *axisOf(op->getOperand(0));
    if (a != (gemm.getTransA() ? 1 : 0))
      return Verdict::no("the batch is the contracted dim of A");
    // C broadcasts to [M, N]: with the batch merged into the rows, C must
    // not span them.
    if (merged(op->getOperand(0)) && op->getNumOperands() > 2) {
      Value c = op->getOperand(2);
      auto ct = dyn_cast<RankedTensorType>(c.getType());
      if (!onnx::isNone(c) && (!ct || (ct.getRank() == 2 && ct.getDimSize(0) != 1)))
        return Verdict::no(kSpansMergedBatch);
    }
    set(op->getResult(0), 0);
    return Verdict::ok();
  }

  if (auto flatten = dyn_cast<onnx::FlattenOp>(op)) {
    // The batch's dim joins the result's first dim (the dims before
    // `axis`) or its second, inside the dims after it up to there.
    Value data = op->getOperand(0);
    int64_t b = *axisOf(data), rank = rankOf(data);
    int64_t axis = flatten.getAxis();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank)
      return Verdict::no("its axis is out of range");
    std::optional<Size> inner = elementsInside(data, b < axis ? axis : rank);
    if (!inner)
      return Verdict::no("its shapes are too large");
    set(op->getResult(0), b < axis ? 0 : 1, *inner);
    return Verdict::ok();
  }
  if (isa<onnx::ReshapeOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its shape depends on the batch");
    return reshape(op);
  }
  if (auto t = dyn_cast<onnx::TransposeOp>(op)) {
    int64_t b = *axisOf(op->getOperand(0)), rank = rankOf(op->getOperand(0));
    SmallVector<int64_t> perm;
    if (auto p = t.getPerm())
      perm.assign(p->begin(), p->end());
    else
      for (int64_t i = rank - 1; i >= 0; --i)
        perm.push_back(i);
    for (auto [i, p] : llvm::enumerate(perm))
      if (p == b) {
        set(op->getResult(0), static_cast<int64_t>(i));
        return Verdict::ok();
      }
    return Verdict::no("its permutation is malformed");
  }
  if (isa<onnx::SqueezeOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its axes depend on the batch");
    Value data = op->getOperand(0);
    int64_t b = *axisOf(data), rank = rankOf(data);
    std::optional<SmallVector<int64_t>> list;
    if (op->getNumOperands() > 1 && !onnx::isNone(op->getOperand(1)))
      list = onnx::constantInts(op->getOperand(1));
    if (!list)
      return Verdict::no("without constant axes it would squeeze the batch dim too");
    std::optional<int64_t> before = axesBefore(*list, rank, b);
    if (!before)
      return Verdict::no("it squeezes the batch dim");
    set(op->getResult(0), b - *before);
    return Verdict::ok();
  }
  if (isa<onnx::UnsqueezeOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its axes depend on the batch");
    int64_t b = *axisOf(op->getOperand(0)), outRank = rankOf(op->getResult(0));
    if (op->getNumOperands() < 2)
      return Verdict::no("it has no axes");
    auto list = onnx::constantInts(op->getOperand(1));
    if (!list)
      return Verdict::no("its axes are not constant");
    SmallVector<bool> inserted(outRank, false);
    for (int64_t a : *list) {
      int64_t n = normalize(a, outRank);
      if (n < 0)
        return Verdict::no("its axes are out of range");
      inserted[n] = true;
    }
    int64_t seen = -1;
    for (int64_t i = 0; i < outRank; ++i)
      if (!inserted[i] && ++seen == b) {
        set(op->getResult(0), i);
        return Verdict::ok();
      }
    return Verdict::no("its axes are malformed");
  }
  if (auto concat = dyn_cast<onnx::ConcatOp>(op)) {
    int64_t axis = normalize(concat.getAxis(), rankOf(op->getResult(0)));
    for (Value v : op->getOperands())
      if (Axis a = axisOf(v); a && *a == axis)
        return Verdict::no("it concatenates along the batch axis");
    return broadcast(op, op->getOperands(), op->getResults());
  }
  if (auto split = dyn_cast<onnx::SplitOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its split sizes depend on the batch");
    return otherAxis(op, op->getOperand(0), split.getAxis(), op->getResults());
  }
  if (isa<onnx::SliceOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its starts, ends, axes or steps depend on the batch");
    Value data = op->getOperand(0);
    int64_t b = *axisOf(data), rank = rankOf(data);
    auto starts = onnx::constantInts(op->getOperand(1));
    auto ends = onnx::constantInts(op->getOperand(2));
    std::optional<SmallVector<int64_t>> axesList, steps;
    if (op->getNumOperands() > 3 && !onnx::isNone(op->getOperand(3)))
      axesList = onnx::constantInts(op->getOperand(3));
    else if (starts) {
      axesList.emplace();
      for (int64_t i = 0; i < static_cast<int64_t>(starts->size()); ++i)
        axesList->push_back(i);
    }
    if (op->getNumOperands() > 4 && !onnx::isNone(op->getOperand(4)))
      steps = onnx::constantInts(op->getOperand(4));
    if (!starts || !ends || !axesList)
      return Verdict::no("its starts, ends or axes are not constant");
    for (size_t i = 0; i < axesList->size() && i < starts->size() && i < ends->size(); ++i) {
      if (normalize((*axesList)[i], rank) != b)
        continue;
      // Slicing the batch axis is only harmless when it keeps all of it.
      int64_t step = steps && i < steps->size() ? (*steps)[i] : 1;
      if (step != 1 || (*starts)[i] != 0 || (*ends)[i] < (int64_t(1) << 31) - 1)
        return Verdict::no("it slices the batch axis");
    }
    set(op->getResult(0), b);
    return Verdict::ok();
  }
  if (auto gather = dyn_cast<onnx::GatherOp>(op)) {
    Value data = gather.getData(), indices = gather.getIndices();
    Axis ad = axisOf(data), ai = axisOf(indices);
    int64_t axis = normalize(gather.getAxis(), rankOf(data));
    if (ad && ai)
      return Verdict::no("both its data and its indices depend on the batch");
    if (axis < 0)
      return Verdict::no("its axis is out of range");
    if (ad) {
      if (axis == *ad)
        return Verdict::no("it gathers along the batch axis");
      set(op->getResult(0), axis < *ad ? *ad - 1 + rankOf(indices) : *ad);
      return Verdict::ok();
    }
    set(op->getResult(0), axis + *ai); // Embedding lookups: indices [N, ...].
    return Verdict::ok();
  }
  if (auto ge = dyn_cast<onnx::GatherElementsOp>(op)) {
    Axis ad = axisOf(op->getOperand(0)), ai = axisOf(op->getOperand(1));
    if (!ad || !ai || *ad != *ai)
      return Verdict::no("its data and indices do not both carry the batch at one axis");
    return otherAxis(op, op->getOperand(0), ge.getAxis(), op->getResults());
  }
  if (auto s = dyn_cast<onnx::SoftmaxOp>(op))
    return onlyBatched(op, 0) ? otherAxis(op, op->getOperand(0), s.getAxis(), op->getResults())
                              : Verdict::no("unexpected operands");
  if (auto s = dyn_cast<onnx::LogSoftmaxOp>(op))
    return otherAxis(op, op->getOperand(0), s.getAxis(), op->getResults());
  if (auto s = dyn_cast<onnx::HardmaxOp>(op))
    return otherAxis(op, op->getOperand(0), s.getAxis(), op->getResults());
  if (auto s = dyn_cast<onnx::LpNormalizationOp>(op))
    return otherAxis(op, op->getOperand(0), s.getAxis(), op->getResults());
  if (isa<onnx::CumSumOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its axis depends on the batch");
    auto axis = onnx::constantInts(op->getOperand(1));
    if (!axis || axis->size() != 1)
      return Verdict::no("its axis is not constant");
    return otherAxis(op, op->getOperand(0), (*axis)[0], op->getResults());
  }
  if (auto topk = dyn_cast<onnx::TopKOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its K depends on the batch");
    return otherAxis(op, op->getOperand(0), topk.getAxis(), op->getResults());
  }
  if (auto ln = dyn_cast<onnx::LayerNormalizationOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its scale or bias depends on the batch");
    Value x = op->getOperand(0);
    int64_t b = *axisOf(x), axis = normalize(ln.getAxis(), rankOf(x));
    if (axis <= b)
      return Verdict::no("it normalises over the batch axis");
    for (Value r : op->getResults())
      if (!isa<NoneType>(r.getType()))
        set(r, b);
    return Verdict::ok();
  }
  if (auto am = dyn_cast<onnx::ArgMaxOp>(op))
    return reduce(op, op->getOperand(0), SmallVector<int64_t>{am.getAxis()}, am.getKeepdims(),
                  false);
  if (auto am = dyn_cast<onnx::ArgMinOp>(op))
    return reduce(op, op->getOperand(0), SmallVector<int64_t>{am.getAxis()}, am.getKeepdims(),
                  false);
  if (isa<onnx::ReduceL1Op, onnx::ReduceL2Op, onnx::ReduceLogSumExpOp, onnx::ReduceLogSumOp,
          onnx::ReduceMaxOp, onnx::ReduceMeanOp, onnx::ReduceMinOp, onnx::ReduceProdOp,
          onnx::ReduceSumOp, onnx::ReduceSumSquareOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its axes depend on the batch");
    std::optional<SmallVector<int64_t>> list;
    if (auto attr = op->getAttrOfType<DenseI64ArrayAttr>("axes"))
      list = SmallVector<int64_t>(attr.asArrayRef());
    else if (op->getNumOperands() > 1 && !onnx::isNone(op->getOperand(1))) {
      list = onnx::constantInts(op->getOperand(1));
      if (!list)
        return Verdict::no("its axes are not constant");
    }
    auto keep = op->getAttrOfType<IntegerAttr>("keepdims");
    auto noop = op->getAttrOfType<IntegerAttr>("noop_with_empty_axes");
    return reduce(op, op->getOperand(0), list, !keep || keep.getInt() != 0,
                  noop && noop.getInt() != 0);
  }
  if (isa<onnx::ExpandOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its shape depends on the batch");
    return broadcast(op, op->getOperand(0), op->getResults());
  }
  if (isa<onnx::TileOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its repeats depend on the batch");
    int64_t b = *axisOf(op->getOperand(0));
    auto repeats = onnx::constantInts(op->getOperand(1));
    if (!repeats || b >= static_cast<int64_t>(repeats->size()) || (*repeats)[b] != 1)
      return Verdict::no("it repeats along the batch axis");
    set(op->getResult(0), b);
    return Verdict::ok();
  }
  if (isa<onnx::PadOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its pads or value depend on the batch");
    Value data = op->getOperand(0);
    int64_t b = *axisOf(data), rank = rankOf(data);
    auto pads = onnx::constantInts(op->getOperand(1));
    if (!pads || static_cast<int64_t>(pads->size()) != 2 * rank)
      return Verdict::no("its pads are not constant");
    if ((*pads)[b] != 0 || (*pads)[b + rank] != 0)
      return Verdict::no("it pads the batch axis");
    set(op->getResult(0), b);
    return Verdict::ok();
  }
  if (isa<onnx::RNNOp, onnx::GRUOp, onnx::LSTMOp>(op)) {
    // Operands X, W, R, B, sequence_lens, initial_h[, initial_c, P];
    // results Y, Y_h[, Y_c].
    auto layoutAttr = op->getAttrOfType<IntegerAttr>("layout");
    bool batchFirst = layoutAttr && layoutAttr.getInt() == 1;
    int64_t xAxis = batchFirst ? 0 : 1, stateAxis = batchFirst ? 0 : 1;
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      Axis a = axisOf(v);
      if (!a)
        continue;
      int64_t want = i == 0 ? xAxis : i == 4 ? 0 : (i == 5 || i == 6) ? stateAxis : -1;
      if (*a != want)
        return Verdict::no("the batch is not the batch axis of its operand " +
                           std::to_string(i));
    }
    for (auto [i, r] : llvm::enumerate(op->getResults()))
      if (!isa<NoneType>(r.getType()))
        set(r, i == 0 ? (batchFirst ? 0 : 2) : stateAxis);
    return Verdict::ok();
  }
  return Verdict::no("kiln does not know how it treats the batch dim");
}

LogicalResult Analysis::finish(func::FuncOp func, func::ReturnOp ret) {
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Axis a = axisOf(v);
    if (!a) {
      // Declared with the batch but computed without it (say, zeros shaped
      // by Shape(x), which the one-item graph folded to 1).
      if (func.getResultAttr(i, "kiln.declared_dynamic_dim")) {
        std::string name = "#" + std::to_string(i);
        if (auto attr = func.getResultAttrOfType<StringAttr>(i, "onnx.name"))
          name = "'" + attr.str() + "'";
        return func.emitError()
               << "graph output " << name << " is declared with the dynamic batch dim '"
               << dimName << "' but does not carry the batch of any input; pin the "
               << "batch with --input-shape for static code";
      }
      continue;
    }
    if (*a != 0 || merged(v)) {
      std::string name = "#" + std::to_string(i);
      if (auto attr = func.getResultAttrOfType<StringAttr>(i, "onnx.name"))
        name = "'" + attr.str() + "'";
      auto diag = func.emitError() << "graph output " << name << " carries the dynamic batch dim '"
                                   << dimName << "' ";
      if (*a != 0)
        diag << "at axis " << *a << ", not as its leading dim";
      else
        diag << "merged with other dims, not as a dim of its own";
      return diag << "; pin the batch with --input-shape for static code";
    }
    func.setResultAttr(i, "kiln.dynamic_dim", StringAttr::get(func.getContext(), dimName));
  }
  return success();
}

struct OnnxDynamicBatchPass
    : onnx::impl::OnnxDynamicBatchPassBase<OnnxDynamicBatchPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getName() != "main")
      return;
    std::string name;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto attr = func.getArgAttrOfType<StringAttr>(i, "kiln.dynamic_dim"))
        name = attr.str();
    if (name.empty())
      return;
    if (func.getBody().getBlocks().size() != 1) {
      func.emitError("a function with more than one block");
      return signalPassFailure();
    }
    // What kiln-dynamic-batch-values found before the batch size was folded.
    if (auto found = func->getAttrOfType<DictionaryAttr>("kiln.dynamic_batch_error")) {
      auto loc = found.getAs<LocationAttr>("loc");
      auto message = found.getAs<StringAttr>("message");
      emitError(loc ? Location(loc) : func.getLoc())
          << (message ? message.str() : std::string("the batch size is used as a value"));
      return signalPassFailure();
    }
    Analysis analysis(name);
    if (failed(analysis.run(func)))
      signalPassFailure();
  }
};

} // namespace
