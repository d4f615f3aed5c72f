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
// In the item-sized graph every value's batch dim has size 1; that is what
// makes the broadcasting rules simple: a batch dim that is broadcast
// against a larger dim (result size > 1) mixes items.
//
// A value's batch axis is where the batch sits in the model run for the
// whole batch. Every rule derives it exactly from the op's attributes but
// one: a Reshape whose input has the batch outermost is taken to keep it as
// the leading dim (an item of [1, 64] reshaped to [1, 1, 8, 8] is read as
// [N, 1, 8, 8], not [1, N, 8, 8]), which is how exporters write the batch.
// Not yet handled: the batch merged with another dim, as torch's
// nn.MultiheadAttention export does ([L, N*heads, d], [L*N, E]); such
// models are refused at that Reshape.
//
//===----------------------------------------------------------------------===//

#include "passes/Onnx/Passes.h"

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

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

class Analysis {
public:
  explicit Analysis(StringRef dimName) : dimName(dimName) {}

  LogicalResult run(func::FuncOp func) {
    for (BlockArgument arg : func.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), "kiln.dynamic_dim"))
        axes[arg] = 0;
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
    auto it = axes.find(v);
    return it == axes.end() ? Axis() : Axis(it->second);
  }

  void set(Value v, int64_t axis) { axes[v] = axis; }

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
    Verdict v = rule(op);
    if (!v.reason.empty())
      return fail(op, v.reason);
    // Every result that carries the batch carries it at a dim of size 1,
    // as every value of the one-item graph does.
    for (Value r : op->getResults()) {
      Axis a = axisOf(r);
      if (a && (*a < 0 || *a >= rankOf(r) || dimOf(r, *a) != 1))
        return fail(op, "it changes the size of the batch dim");
    }
    return success();
  }

  LogicalResult fail(Operation *op, StringRef reason) {
    return op->emitError() << refusal(op, dimName, reason);
  }

  /// Numpy broadcasting: the batched operands' axes, aligned to the
  /// result's rank, must agree, and the result's dim there must stay 1.
  Verdict broadcast(Operation *op, ValueRange operands, ValueRange results) {
    int64_t rank = -1;
    for (Value r : results)
      rank = std::max(rank, rankOf(r));
    Axis aligned;
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
    }
    if (!aligned)
      return Verdict::ok(); // Nothing batched: the results are not either.
    for (Value r : results) {
      if (rankOf(r) != rank)
        return Verdict::no("its results have different ranks");
      if (dimOf(r, *aligned) != 1)
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

  Verdict rule(Operation *op);
  LogicalResult finish(func::FuncOp func, func::ReturnOp ret);

  std::string dimName;
  llvm::DenseMap<Value, int64_t> axes;
};

Verdict Analysis::rule(Operation *op) {
  // Elementwise ops, with numpy broadcasting.
  if (isa<onnx::AbsOp, onnx::AcosOp, onnx::AcoshOp, onnx::AddOp, onnx::AndOp, onnx::AsinOp,
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
          onnx::TanOp, onnx::TanhOp, onnx::ThresholdedReluOp, onnx::WhereOp, onnx::XorOp>(op))
    return broadcast(op, op->getOperands(), op->getResults());
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
    if (at < 0 || at >= r || dimOf(op->getResult(0), at) != 1)
      return Verdict::no("it broadcasts the batch dim against a larger dim");
    if (fromA && fromB && *fromA >= r - 2)
      return Verdict::no("both operands carry the batch in their matrix dims");
    set(op->getResult(0), at);
    return Verdict::ok();
  }
  if (auto gemm = dyn_cast<onnx::GemmOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its B or C operand depends on the batch");
    int64_t a = *axisOf(op->getOperand(0));
    if (a != (gemm.getTransA() ? 1 : 0))
      return Verdict::no("the batch is the contracted dim of A");
    set(op->getResult(0), 0);
    return Verdict::ok();
  }

  if (auto flatten = dyn_cast<onnx::FlattenOp>(op)) {
    int64_t b = *axisOf(op->getOperand(0));
    int64_t axis = normalize(flatten.getAxis(), rankOf(op->getOperand(0)) + 1);
    if (b != 0 || axis < 1 || dimOf(op->getResult(0), 0) != 1)
      return Verdict::no("it merges the batch with other dims");
    set(op->getResult(0), 0);
    return Verdict::ok();
  }
  if (isa<onnx::ReshapeOp>(op)) {
    if (!onlyBatched(op, 0))
      return Verdict::no("its shape depends on the batch");
    Value data = op->getOperand(0);
    int64_t b = *axisOf(data);
    // The batch must be the outermost dim of both shapes (only 1s before
    // it), so that each item stays one contiguous block.
    for (int64_t d = 0; d < b; ++d)
      if (dimOf(data, d) != 1)
        return Verdict::no("the batch is not the outermost dim of its input");
    if (rankOf(op->getResult(0)) < 1 || dimOf(op->getResult(0), 0) != 1)
      return Verdict::no("it merges the batch with other dims");
    set(op->getResult(0), 0);
    return Verdict::ok();
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
    if (*a != 0) {
      std::string name = "#" + std::to_string(i);
      if (auto attr = func.getResultAttrOfType<StringAttr>(i, "onnx.name"))
        name = "'" + attr.str() + "'";
      return func.emitError() << "graph output " << name << " carries the dynamic batch dim '"
                              << dimName << "' at axis " << *a
                              << ", not as its leading dim; pin the batch with --input-shape "
                                 "for static code";
    }
    func.setResultAttr(i, "kiln.dynamic_dim", StringAttr::get(func.getContext(), dimName));
  }
  return success();
}

/// Before the onnx phase folds shape computations (and so turns the batch
/// size, Shape(x)[0], into the constant 1): the batch size may only shape
/// tensors (the shape operand of Reshape, Expand, Tile, ConstantOfShape),
/// after any arithmetic with constants; any other use would compute with 1
/// for every batch. Conservative: every value of Shape/Size of a batched
/// tensor counts, the batch's dim or not. Also refuses a Reshape of batched
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
    llvm::DenseSet<Value> batched, derived;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto attr = func.getArgAttrOfType<StringAttr>(i, "kiln.dynamic_dim")) {
        name = attr.str();
        batched.insert(func.getArgument(i));
      }
    if (name.empty())
      return;
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
    func.walk([&](Operation *op) {
      if (isa<func::FuncOp>(op))
        return;
      bool anyBatched = llvm::any_of(op->getOperands(), [&](Value v) { return batched.count(v); });
      if (isa<onnx::ShapeOp, onnx::SizeOp>(op) && anyBatched) {
        derived.insert(op->getResult(0));
        return;
      }
      if (isa<func::ReturnOp>(op)) {
        if (llvm::any_of(op->getOperands(), [&](Value v) { return derived.count(v); }))
          record(op, "a graph output is computed from the batch size");
        return;
      }
      bool shapeOnly = true, pure = true, anyDerived = false;
      for (auto [i, v] : llvm::enumerate(op->getOperands())) {
        if (!derived.count(v)) {
          pure &= constant(v);
          continue;
        }
        anyDerived = true;
        bool shapeUse = (i == 1 && isa<onnx::ReshapeOp, onnx::ExpandOp, onnx::TileOp>(op)) ||
                        (i == 0 && isa<onnx::ConstantOfShapeOp>(op));
        shapeOnly &= shapeUse;
      }
      if (anyDerived && !shapeOnly) {
        if (pure) { // Arithmetic on shapes: still the batch size.
          for (Value r : op->getResults())
            derived.insert(r);
          return;
        }
        record(op, "it uses the batch size (from Shape or Size of a batched tensor) as a value");
        return;
      }
      if (isa<onnx::ReshapeOp>(op) && batched.count(op->getOperand(0)) &&
          !derived.count(op->getOperand(1)))
        if (auto target = onnx::constantInts(op->getOperand(1)))
          if (!target->empty() && (*target)[0] > 0 && llvm::is_contained(*target, -1))
            record(op, "its constant target shape fixes the leading dim, so the batch "
                       "items would be merged");
      if (anyBatched)
        for (Value r : op->getResults())
          batched.insert(r);
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
