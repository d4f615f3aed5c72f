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

#include "passes/Onnx/DynamicBatchAnalysis.h"
#include "passes/Onnx/DynamicBatchUtils.h"
#include "passes/Onnx/Passes.h"

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

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

namespace kiln::onnx::batch {

namespace {

/// Whether every element of `v` is the same (ConstantOfShape, a splat):
/// any part of it is the part for any item (torch's zeros_like of a mask
/// merged with the heads).
bool uniform(Value v) {
  if (isa_and_nonnull<onnx::ConstantOfShapeOp>(v.getDefiningOp()))
    return true;
  DenseElementsAttr values;
  return matchPattern(v, m_Constant(&values)) && values.isSplat();
}

} // namespace

LogicalResult Analysis::run(func::FuncOp func) {
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

bool Analysis::followsMergedBatch(Operation *op) {
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

LogicalResult Analysis::visit(Operation *op) {
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

LogicalResult Analysis::fail(Operation *op, StringRef reason) {
  return op->emitError() << refusal(op, dimName, reason);
}

Verdict Analysis::broadcast(Operation *op, ValueRange operands, ValueRange results) {
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

Verdict Analysis::leadingBatch(Operation *op, ArrayRef<unsigned> batchedOperands,
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

Verdict Analysis::otherAxis(Operation *op, Value data, int64_t axis, ValueRange results) {
  int64_t b = *axisOf(data);
  int64_t n = normalize(axis, rankOf(data));
  if (n < 0 || n == b)
    return Verdict::no("it works along the batch axis");
  for (Value r : results)
    if (!isa<NoneType>(r.getType()))
      set(r, b);
  return Verdict::ok();
}

bool Analysis::onlyBatched(Operation *op, unsigned index) {
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (i != index && axisOf(v))
      return false;
  return true;
}

Verdict Analysis::reduce(Operation *op, Value data, std::optional<SmallVector<int64_t>> axesList,
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

std::optional<Size> Analysis::elementsInside(Value data, int64_t end) const {
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
Verdict Analysis::reshape(Operation *op) {
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

} // namespace kiln::onnx::batch

namespace {

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
    onnx::batch::Analysis analysis(name);
    if (failed(analysis.run(func)))
      signalPassFailure();
  }
};

} // namespace
