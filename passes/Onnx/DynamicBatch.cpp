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
// kiln-dynamic-batch-values, first in the onnx phase, catches the batch
// size used as a value before shape folding turns it into 1. Graph outputs that carry the batch must carry
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

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <optional>

namespace kiln::onnx {
#define GEN_PASS_DEF_ONNXDYNAMICBATCHPASS
#define GEN_PASS_DEF_ONNXDYNAMICBATCHVALUESPASS
#include "passes/Onnx/Passes.h.inc"
} // namespace kiln::onnx

using namespace mlir;
namespace onnx = kiln::onnx;

namespace {

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

/// "ReduceMean (opset 17): cannot run the dynamic batch dim 'N' one item at
/// a time: <why>; pin the batch with --input-shape for static code".
std::string refusal(Operation *op, StringRef dimName, const Twine &why) {
  return (onnx::opLabel(op) + ": cannot run the dynamic batch dim '" + dimName +
          "' one item at a time: " + why + "; pin the batch with --input-shape for static code")
      .str();
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

/// The product of `dims`; std::nullopt on overflow.
std::optional<Size> product(ArrayRef<int64_t> dims) {
  Size p;
  for (int64_t d : dims) {
    Size f = sizeOfDim(d);
    if (llvm::MulOverflow(p.factor, f.factor, p.factor))
      return std::nullopt;
    p.symbolic += f.symbolic;
  }
  return p;
}

std::optional<Size> times(Size x, Size y) {
  Size p{x.factor, x.symbolic + y.symbolic};
  if (llvm::MulOverflow(x.factor, y.factor, p.factor))
    return std::nullopt;
  return p;
}

/// `whole / part` when `part` divides `whole`.
std::optional<Size> quotient(Size whole, Size part) {
  if (part.factor <= 0 || whole.factor % part.factor || whole.symbolic < part.symbolic)
    return std::nullopt;
  return Size{whole.factor / part.factor, whole.symbolic - part.symbolic};
}

/// Elementwise ops, with numpy broadcasting.
bool isElementwise(Operation *op) {
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
               onnx::FlattenOp,
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
      if (batchDim != 1 && !axisOf(v) && !onnx::isNone(v) &&
          (!isa<RankedTensorType>(v.getType()) || (at >= 0 && dimOf(v, at) != 1)))
        return Verdict::no("an operand that does not depend on the batch spans the dim the "
                           "batch is merged with");
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
    std::optional<Size> after = product(in.drop_front(a + 1));
    std::optional<Size> inside = after ? times(innerOf(data), *after) : std::nullopt;
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
        return Verdict::no("an operand that does not depend on the batch spans the dim the "
                           "batch is merged with");
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
        return Verdict::no("an operand that does not depend on the batch spans the dim the "
                           "batch is merged with");
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
    int64_t end = b < axis ? axis : rank;
    ArrayRef<int64_t> in = cast<RankedTensorType>(data.getType()).getShape();
    std::optional<Size> after = product(in.slice(b + 1, end - b - 1));
    std::optional<Size> inner = after ? times(innerOf(data), *after) : std::nullopt;
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

/// @main's shape computations worked out on two clones, with the batch at
/// 1 (the one-item graph) and at 2: a dim of the same static size in both
/// is not the batch (so Shape of a batched tensor does not give the batch
/// size there), and a result dim that doubles holds the batch.
class BatchProbe {
public:
  static std::optional<BatchProbe> run(func::FuncOp func) {
    SmallVector<Operation *> originals;
    func.walk([&](Operation *op) {
      if (op != func)
        originals.push_back(op);
    });
    MLIRContext *context = func.getContext();
    // Shapes that only fit one item are the model's business, not errors.
    ScopedDiagnosticHandler quiet(context, [](Diagnostic &) { return success(); });
    BatchProbe probe;
    probe.func = func;
    for (int k = 0; k < 2; ++k) {
      OwningOpRef<ModuleOp> module = ModuleOp::create(func.getLoc());
      auto clone = cast<func::FuncOp>(func->clone());
      module->push_back(clone);
      if (k == 1) {
        for (BlockArgument arg : clone.getArguments()) {
          auto type = dyn_cast<RankedTensorType>(arg.getType());
          if (!clone.getArgAttr(arg.getArgNumber(), "kiln.dynamic_dim") || !type ||
              type.getRank() < 1 || type.getDimSize(0) != 1)
            continue;
          SmallVector<int64_t> shape(type.getShape());
          shape[0] = 2;
          arg.setType(type.clone(shape));
        }
        clone.setFunctionType(FunctionType::get(context, clone.getArgumentTypes(),
                                                clone.getResultTypes()));
        // The importer's result types (from the model's value_info) hold
        // the batch as 1: inference starts over.
        clone.walk([&](Operation *op) {
          if (op == clone || op->hasTrait<OpTrait::ConstantLike>())
            return;
          for (Value r : op->getResults())
            if (auto t = dyn_cast<TensorType>(r.getType()))
              r.setType(UnrankedTensorType::get(t.getElementType()));
        });
      }
      SmallVector<Operation *> ops;
      clone.walk([&](Operation *op) {
        if (op != clone)
          ops.push_back(op);
      });
      if (ops.size() != originals.size())
        return std::nullopt;
      auto i64 = IntegerType::get(context, 64);
      for (auto [i, op] : llvm::enumerate(ops))
        op->setAttr("kiln.probe", IntegerAttr::get(i64, i));
      if (failed(onnx::inferShapes(clone)))
        return std::nullopt;
      clone.walk([&](Operation *op) {
        if (auto id = op->getAttrOfType<IntegerAttr>("kiln.probe"))
          probe.counterparts[originals[id.getInt()]][k] = op;
      });
      probe.clones[k] = clone;
      probe.modules[k] = std::move(module);
    }
    return probe;
  }

  /// Per dim of `v` (a value of @main): whether it may hold the batch,
  /// that is, unless it is the same static size at batch 1 and 2 (a `?`
  /// may be the batch merged with another dim); std::nullopt without both
  /// types.
  std::optional<SmallVector<bool>> batchDims(Value v) const {
    RankedTensorType types[2] = {typeIn(v, 0), typeIn(v, 1)};
    if (!types[0] || !types[1])
      return std::nullopt;
    if (types[0].getRank() != types[1].getRank())
      return std::nullopt;
    SmallVector<bool> dims;
    for (int64_t d = 0; d < types[0].getRank(); ++d) {
      int64_t x = types[0].getDimSize(d), y = types[1].getDimSize(d);
      dims.push_back(ShapedType::isDynamic(x) || ShapedType::isDynamic(y) || x != y);
    }
    return dims;
  }

  /// The type of `v` (a value of @main) at batch 1 (k = 0) or 2 (k = 1),
  /// when inference ranked it.
  RankedTensorType typeIn(Value v, int k) const {
    Value counterpart;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      func::FuncOp clone = clones[k];
      if (arg.getOwner()->getParentOp() == func && arg.getArgNumber() < clone.getNumArguments())
        counterpart = clone.getArgument(arg.getArgNumber());
    } else if (auto it = counterparts.find(v.getDefiningOp()); it != counterparts.end()) {
      Operation *clone = it->second[k];
      unsigned n = cast<OpResult>(v).getResultNumber();
      if (clone && n < clone->getNumResults())
        counterpart = clone->getResult(n);
    }
    return counterpart ? dyn_cast<RankedTensorType>(counterpart.getType()) : nullptr;
  }

  /// Per dim of `op`'s first result: 1 when it doubles at batch 2, 0 when
  /// it stays, -1 when unknown; empty without both shapes.
  SmallVector<int64_t> growth(Operation *op) const {
    auto it = counterparts.find(op);
    if (it == counterparts.end() || !it->second[0] || !it->second[1] ||
        !it->second[0]->getNumResults() || !it->second[1]->getNumResults())
      return {};
    auto one = dyn_cast<RankedTensorType>(it->second[0]->getResult(0).getType());
    auto two = dyn_cast<RankedTensorType>(it->second[1]->getResult(0).getType());
    if (!one || !two || one.getRank() != two.getRank())
      return {};
    SmallVector<int64_t> result;
    for (int64_t d = 0; d < one.getRank(); ++d) {
      int64_t x = one.getDimSize(d), y = two.getDimSize(d);
      result.push_back(ShapedType::isDynamic(x) || ShapedType::isDynamic(y) ? -1
                       : y == x                                              ? 0
                       : y == 2 * x                                          ? 1
                                                                             : -1);
    }
    return result;
  }

private:
  func::FuncOp func;
  func::FuncOp clones[2];
  OwningOpRef<ModuleOp> modules[2];
  llvm::DenseMap<Operation *, std::array<Operation *, 2>> counterparts;
};

/// Which elements of a shape value hold the batch size or something
/// computed from it; empty: all of them, or unknown.
using Mask = SmallVector<bool, 4>;

/// The elements of Shape(x) or Size(x) that may be the batch size: the dims
/// of x the probe does not show the same at both batches.
Mask shapeMask(Operation *op, const std::optional<BatchProbe> &probe) {
  if (!probe)
    return {};
  std::optional<SmallVector<bool>> dims = probe->batchDims(op->getOperand(0));
  if (!dims)
    return {};
  if (isa<onnx::SizeOp>(op))
    return {llvm::is_contained(*dims, true)};
  auto shape = cast<onnx::ShapeOp>(op);
  auto [start, end] = onnx::shapeOpRange(dims->size(), shape.getStart(), shape.getEnd());
  Mask mask;
  for (int64_t d = start; d < end; ++d)
    mask.push_back((*dims)[d]);
  return mask;
}

/// The elements of `op`'s first result that come from the batch size, for
/// shape arithmetic whose operands are in `derived` or constant: followed
/// element by element through the ops that move or combine shape elements
/// (types as imported, else from the probe's one-item clone), all of them
/// otherwise.
Mask propagateMask(Operation *op, const llvm::DenseMap<Value, Mask> &derived,
                   const std::optional<BatchProbe> &probe) {
  if (!probe)
    return {};
  auto typeOf = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.hasStaticShape() ? t : probe->typeIn(v, 0);
  };
  // The rank of a shape value: Shape's results are 1-D.
  auto rankOf = [&](Value v) -> int64_t {
    if (isa_and_nonnull<onnx::ShapeOp>(v.getDefiningOp()))
      return 1;
    RankedTensorType t = typeOf(v);
    return t ? t.getRank() : -1;
  };
  // std::nullopt: all elements, or unknown.
  auto maskOf = [&](Value v) -> std::optional<Mask> {
    if (auto it = derived.find(v); it != derived.end())
      return it->second.empty() ? std::nullopt : std::optional<Mask>(it->second);
    RankedTensorType t = typeOf(v);
    if (!t || !t.hasStaticShape() || t.getNumElements() > 64)
      return std::nullopt;
    return Mask(t.getNumElements(), false);
  };
  auto derivedAt = [&](unsigned i) { return i < op->getNumOperands() && derived.count(op->getOperand(i)); };
  if (isa<onnx::IdentityOp, onnx::CastOp, onnx::UnsqueezeOp, onnx::SqueezeOp, onnx::ReshapeOp,
          onnx::FlattenOp>(op)) {
    // Row-major order is kept; axes and shapes must not be derived.
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      if (derivedAt(i))
        return {};
    return maskOf(op->getOperand(0)).value_or(Mask());
  }
  if (auto gather = dyn_cast<onnx::GatherOp>(op)) {
    std::optional<Mask> data = maskOf(gather.getData());
    std::optional<SmallVector<int64_t>> indices = onnx::constantInts(gather.getIndices());
    if (!data || !indices || derivedAt(1) || rankOf(gather.getData()) != 1)
      return {};
    Mask mask;
    for (int64_t i : *indices) {
      if (i < 0)
        i += data->size();
      if (i < 0 || i >= static_cast<int64_t>(data->size()))
        return {};
      mask.push_back((*data)[i]);
    }
    return mask;
  }
  if (isa<onnx::ConcatOp>(op)) {
    Mask mask;
    for (Value v : op->getOperands()) {
      std::optional<Mask> m = maskOf(v);
      if (!m || rankOf(v) != 1)
        return {};
      mask.append(m->begin(), m->end());
    }
    return mask;
  }
  if (isElementwise(op)) {
    // Scalars and vectors of shape values, broadcast.
    SmallVector<Mask> masks;
    size_t n = 1;
    for (Value v : op->getOperands()) {
      std::optional<Mask> m = maskOf(v);
      if (!m || rankOf(v) > 1)
        return {};
      if (m->size() != 1 && n != 1 && m->size() != n)
        return {};
      n = std::max(n, m->size());
      masks.push_back(*m);
    }
    Mask mask(n, false);
    for (const Mask &m : masks) {
      for (size_t e = 0; e < n; ++e)
        mask[e] = mask[e] || m[m.size() == 1 ? 0 : e];
    }
    return mask;
  }
  return {};
}

/// Before the onnx phase folds shape computations (and so turns the batch
/// size, Shape(x)[0], into the constant 1): the batch size may only shape
/// tensors (the shape operand of Reshape, Expand, Tile, ConstantOfShape),
/// after any arithmetic with constants; any other use would compute with 1
/// for every batch. Every value of Shape/Size of a batched tensor counts,
/// the batch's dim or not, unless the probe at batch 2 (BatchProbe) shows
/// it the same at both batches where it is used. Marks each Reshape of
/// batched data with the result dims that grow with the batch
/// (`kiln.batch_growth`, for kiln-dynamic-batch). Also refuses a Reshape of batched
/// data to a constant target with a fixed leading dim and a -1 ([1, -1]),
/// which puts the whole batch into one item. Records the first problem on
/// @main (`kiln.dynamic_batch_error`) for kiln-dynamic-batch to report:
/// this pass runs before the batch is known to matter and never fails.
struct OnnxDynamicBatchValuesPass
    : onnx::impl::OnnxDynamicBatchValuesPassBase<OnnxDynamicBatchValuesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getName() != "main" || func->hasAttr("kiln.dynamic_batch_error"))
      return;
    std::string name;
    // `derived`: shape values (from Shape/Size of batched tensors and
    // arithmetic on them) with which of their elements are the batch size
    // or computed from it (an empty mask: all, or unknown). `shaped`:
    // tensors shaped by the batch size whose values are not it
    // (ConstantOfShape/Expand/Tile of it, and elementwise ops on those):
    // they may meet the batch size in shape arithmetic (torch's
    // expand(n, -1, -1): Where(Equal(s, -1 * ConstantOfShape(Shape(s))),
    // ..., s)), and their Shape/Size is the batch size again.
    llvm::DenseSet<Value> batched, shaped;
    llvm::DenseMap<Value, Mask> derived;
    auto fromBatch = [&](Value v) {
      auto it = derived.find(v);
      return it != derived.end() && (it->second.empty() || llvm::is_contained(it->second, true));
    };
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto attr = func.getArgAttrOfType<StringAttr>(i, "kiln.dynamic_dim")) {
        name = attr.str();
        batched.insert(func.getArgument(i));
      }
    if (name.empty())
      return;
    std::optional<BatchProbe> probe = BatchProbe::run(func);
    auto constant = [](Value v) {
      Operation *def = v.getDefiningOp();
      return def && (def->hasTrait<OpTrait::ConstantLike>() || isa<onnx::NoValueOp>(def));
    };
    std::string message;
    Location at = func.getLoc();
    auto record = [&](Operation *op, const Twine &why) {
      if (!message.empty())
        return;
      message = refusal(op, name, why);
      at = op->getLoc();
    };
    // Ops whose results reach no output (an unused branch of an exported
    // module) are erased by the onnx phase and matter to no item.
    Block &body = func.getBody().front();
    llvm::DenseSet<Operation *> live;
    SmallVector<Operation *> work;
    for (Operation &op : body)
      if (isa<func::ReturnOp>(op) || !isMemoryEffectFree(&op))
        if (live.insert(&op).second)
          work.push_back(&op);
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (Operation *def = v.getDefiningOp())
            if (Operation *top = body.findAncestorOpInBlock(*def))
              if (live.insert(top).second)
                work.push_back(top);
      });
    }
    func.walk([&](Operation *op) {
      if (isa<func::FuncOp>(op))
        return;
      if (Operation *top = body.findAncestorOpInBlock(*op); !top || !live.contains(top))
        return;
      bool anyBatched = llvm::any_of(op->getOperands(), [&](Value v) { return batched.count(v); });
      bool anyShaped = llvm::any_of(op->getOperands(), [&](Value v) { return shaped.count(v); });
      if (isa<onnx::ShapeOp, onnx::SizeOp>(op) && (anyBatched || anyShaped)) {
        derived[op->getResult(0)] = shapeMask(op, probe);
        return;
      }
      if (isa<func::ReturnOp>(op)) {
        if (llvm::any_of(op->getOperands(), fromBatch))
          record(op, "a graph output is computed from the batch size");
        return;
      }
      // anyDerived: an operand holds the batch size; asValue: a shape
      // value is used other than as a shape.
      bool shapeOnly = true, pure = true, anyDerived = false, asValue = false;
      for (auto [i, v] : llvm::enumerate(op->getOperands())) {
        if (!derived.count(v)) {
          pure &= constant(v) || shaped.count(v);
          continue;
        }
        bool shapeUse = (i == 1 && isa<onnx::ReshapeOp, onnx::ExpandOp, onnx::TileOp>(op)) ||
                        (i == 0 && isa<onnx::ConstantOfShapeOp>(op));
        asValue |= !shapeUse;
        if (fromBatch(v)) {
          anyDerived = true;
          shapeOnly &= shapeUse;
        }
      }
      // Shape arithmetic, followed element by element: what comes out may
      // not hold the batch size (torch slices its packed projection by the
      // width read off a batched tensor).
      bool arithmetic = pure && !anyBatched;
      if (anyDerived && !shapeOnly && !arithmetic) {
        record(op, "it uses the batch size (from Shape or Size of a batched tensor) as a value");
        return;
      }
      if (asValue && arithmetic) {
        Mask mask = propagateMask(op, derived, probe);
        for (Value r : op->getResults())
          derived[r] = r == op->getResult(0) ? mask : Mask();
        return;
      }
      // A non-elementwise op on batch-shaped tensors alone (CumSum of
      // ConstantOfShape(n)) may count along them.
      if (anyShaped && arithmetic && !anyDerived && !isElementwise(op)) {
        for (Value r : op->getResults())
          derived[r] = Mask();
        return;
      }
      if (isa<onnx::ReshapeOp>(op) && batched.count(op->getOperand(0)) &&
          !fromBatch(op->getOperand(1)))
        if (auto target = onnx::constantInts(op->getOperand(1)))
          if (!target->empty() && (*target)[0] > 0 && llvm::is_contained(*target, -1))
            record(op, "its constant target shape fixes the leading dim, so the batch "
                       "items would be merged");
      if (anyBatched)
        for (Value r : op->getResults())
          batched.insert(r);
      if ((anyShaped && arithmetic && isElementwise(op)) ||
          (anyDerived && !anyBatched &&
           isa<onnx::ConstantOfShapeOp, onnx::ExpandOp, onnx::TileOp>(op)))
        for (Value r : op->getResults())
          shaped.insert(r);
      if (probe && isa<onnx::ReshapeOp>(op) && batched.count(op->getOperand(0))) {
        SmallVector<int64_t> growth = probe->growth(op);
        if (!growth.empty())
          op->setAttr("kiln.batch_growth", DenseI64ArrayAttr::get(op->getContext(), growth));
      }
    });
    if (!message.empty())
      func->setAttr("kiln.dynamic_batch_error",
                    DictionaryAttr::get(func.getContext(),
                                        {NamedAttribute(StringAttr::get(func.getContext(), "message"),
                                                        StringAttr::get(func.getContext(), message)),
                                         NamedAttribute(StringAttr::get(func.getContext(), "loc"),
                                                        LocationAttr(at))}));
  }
};

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
