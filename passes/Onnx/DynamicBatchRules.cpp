//===- DynamicBatchRules.cpp - How each op family treats the batch -------===//
//
// kiln-dynamic-batch's rules (see DynamicBatch.cpp for the pass): for each
// op with a batched operand, at which axis each result carries the batch,
// or why the op cannot run one batch item at a time. One function per op
// family; rule() asks each in turn.
//
//===----------------------------------------------------------------------===//

#include "passes/Onnx/DynamicBatchAnalysis.h"
#include "passes/Onnx/DynamicBatchUtils.h"

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

using namespace mlir;
namespace onnx = kiln::onnx;

namespace kiln::onnx::batch {

Verdict Analysis::rule(Operation *op) {
  for (auto family : {&Analysis::elementwiseRule, &Analysis::channelsFirstRule,
                      &Analysis::matmulRule, &Analysis::layoutRule, &Analysis::movementRule,
                      &Analysis::gatherRule, &Analysis::alongAxisRule, &Analysis::recurrentRule})
    if (std::optional<Verdict> verdict = (this->*family)(op))
      return *verdict;
  return Verdict::no("kiln does not know how it treats the batch dim");
}

/// Elementwise ops and those that keep every axis: casts, Dropout,
/// (de)quantisation; Shape and Size.
std::optional<Verdict> Analysis::elementwiseRule(Operation *op) {
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
  return std::nullopt;
}

/// [N, C, ...] ops: convolutions, pools, normalisations, resampling.
std::optional<Verdict> Analysis::channelsFirstRule(Operation *op) {
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
  return std::nullopt;
}

/// MatMul, MatMulInteger, QLinearMatMul, Gemm and Einsum: where each
/// operand's batch lands in the result.
std::optional<Verdict> Analysis::matmulRule(Operation *op) {
  if (isa<onnx::MatMulOp, onnx::MatMulIntegerOp, onnx::QLinearMatMulOp>(op)) {
    // QLinearMatMul: a, a_scale, a_zero_point, b, ...; the others: a, b,
    // then zero points.
    bool qlinear = isa<onnx::QLinearMatMulOp>(op);
    unsigned bIndex = qlinear ? 3 : 1;
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      if (i != bIndex && axisOf(op->getOperand(i)))
        return Verdict::no(qlinear ? "a scale or zero point depends on the batch"
                                   : "its zero point depends on the batch");
    Value a = op->getOperand(0), b = op->getOperand(bIndex);
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
  if (auto einsum = dyn_cast<onnx::EinsumOp>(op)) {
    // The batched operands carry the batch at one letter, used once in
    // each of their terms, by no other operand, and kept in the output.
    std::string error;
    std::optional<EinsumTerms> terms = parseEinsum(einsum.getEquation(), error);
    if (!terms || terms->inputs.size() != op->getNumOperands())
      return Verdict::no("its equation does not match its operands");
    // The letter of `term` at axis `axis` of a value of rank `rank` ('.'
    // inside the ellipsis).
    auto letterAt = [](const std::string &term, int64_t axis, int64_t rank) {
      bool hasEllipsis = term.find('.') != std::string::npos;
      int64_t spans = rank - (int64_t(term.size()) - (hasEllipsis ? 1 : 0)), pos = 0;
      for (char ch : term) {
        int64_t width = ch == '.' ? spans : 1;
        if (axis < pos + width)
          return ch;
        pos += width;
      }
      return '\0';
    };
    std::optional<char> letter;
    for (auto [term, operand] : llvm::zip(terms->inputs, op->getOperands())) {
      Axis a = axisOf(operand);
      if (!a)
        continue;
      char at = letterAt(term, *a, rankOf(operand));
      if (at == '.' || at == '\0')
        return Verdict::no("the batch is in an ellipsis");
      if (letter && *letter != at)
        return Verdict::no("its operands carry the batch at different letters");
      if (llvm::count(term, at) != 1)
        return Verdict::no("the batch's letter is a diagonal");
      letter = at;
    }
    if (!letter)
      return Verdict::no("unexpected operands");
    for (auto [term, operand] : llvm::zip(terms->inputs, op->getOperands()))
      if (!axisOf(operand) && term.find(*letter) != std::string::npos)
        return Verdict::no("an operand that does not depend on the batch has its letter");
    size_t at = terms->output.find(*letter);
    if (at == std::string::npos)
      return Verdict::no("it sums over the batch");
    int64_t r = rankOf(op->getResult(0));
    int64_t named = int64_t(terms->output.size()) -
                    (terms->output.find('.') != std::string::npos ? 1 : 0);
    int64_t axis = 0;
    for (char ch : StringRef(terms->output).take_front(at))
      axis += ch == '.' ? r - named : 1;
    set(op->getResult(0), axis);
    return Verdict::ok();
  }
  return std::nullopt;
}

/// Ops that move dims: Flatten, Reshape, Transpose, Squeeze, Unsqueeze.
std::optional<Verdict> Analysis::layoutRule(Operation *op) {
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
  return std::nullopt;
}

/// Concat, Split, Slice, Expand, Tile and Pad: along other axes only.
std::optional<Verdict> Analysis::movementRule(Operation *op) {
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
  return std::nullopt;
}

/// Gather and GatherElements.
std::optional<Verdict> Analysis::gatherRule(Operation *op) {
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
  return std::nullopt;
}

/// Ops along one axis or reducing some: softmax, normalisations,
/// CumSum, TopK, ArgMax/ArgMin, the Reduce ops.
std::optional<Verdict> Analysis::alongAxisRule(Operation *op) {
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
  return std::nullopt;
}

/// RNN, GRU and LSTM: the batch at their layout's batch axes.
std::optional<Verdict> Analysis::recurrentRule(Operation *op) {
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
  return std::nullopt;
}

} // namespace kiln::onnx::batch
