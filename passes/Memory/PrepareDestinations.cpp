//===- PrepareDestinations.cpp - kiln-prepare-destinations pass -----------===//
//
// Lets ops write their results where they end up. Empty-tensor elimination
// makes the producer of an `insert_slice` source write straight into the
// destination's window, but only when the producer's chain starts at a
// `tensor.empty` of its own and the destination is defined before that
// empty. After CSE, neither holds in a model: one zero fill serves every
// conv of a shape (bufferization then copies it before each), concats
// start from shared empties defined after their branches, and pads are
// `tensor.pad`, which no producer can write into. This pass:
//
// 1. folds static reshapes of empties into empties;
// 2. turns a `tensor.pad` with a constant (rows of at least
//    kMinPaddedRow elements, or dynamic ones) into a fill of a new empty
//    and an `insert_slice` of the source (the fill becomes border-only in
//    kiln-lower-copies); over dynamic sizes, the new empty is sized from
//    the source producer's destination (sizeBeforeProducer), so that it
//    can come before that producer;
// 3. gives the destination chain of each `insert_slice` source its own
//    empty and initialiser where they are shared (and an empty of its own
//    for a dynamic reshape of one), and moves the insert's destination (an
//    empty, a fill of one, or earlier inserts into those) before that
//    empty;
// 4. gives every other user of a shared initialiser (the zero fill of
//    the convs and matmuls of one shape) its own empty and initialiser,
//    right before it: bufferization would otherwise fill one buffer and
//    copy it before each user, and the kernels fold an initialiser that
//    comes right before them into their accumulators.
//
// Other shared empties stay shared: bufferization then happens to write
// many elementwise ops over their input, which the kernels' epilogues
// rely on.
//
// All of it only reorders or clones side-effect-free tensor ops; where a
// move is not possible the IR stays as it was, and bufferization copies
// as before.
//
//===----------------------------------------------------------------------===//

#include "passes/Memory/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"

#define DEBUG_TYPE "kiln-prepare-destinations"

namespace kiln {
#define GEN_PASS_DEF_PREPAREDESTINATIONSPASS
#include "passes/Memory/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

bool isEmpty(Operation *op) { return isa_and_nonnull<tensor::EmptyOp>(op); }

bool isStaticEmpty(Operation *op) {
  auto empty = dyn_cast_or_null<tensor::EmptyOp>(op);
  return empty && empty.getType().hasStaticShape();
}

/// Rows narrower than this stay a copy: written in place, a padded row is
/// a strided window, and an elementwise producer then runs row by row with
/// a partial vector per row instead of over the flat buffer. A dynamic row
/// (an image's width) counts as wide.
constexpr int64_t kMinPaddedRow = 32;

/// `a` + `c` (`a` * `c` when `multiply`), as an attribute when `a` is one,
/// else an op right after `a`'s definition: the sum must be available
/// wherever `a` is.
OpFoldResult combine(OpBuilder &b, Location loc, OpFoldResult a, int64_t c,
                     bool multiply) {
  if (std::optional<int64_t> v = getConstantIntValue(a))
    return b.getIndexAttr(multiply ? *v * c : *v + c);
  if (c == (multiply ? 1 : 0))
    return a;
  OpBuilder::InsertionGuard guard(b);
  Value value = cast<Value>(a);
  b.setInsertionPointAfterValue(value);
  Value k = arith::ConstantIndexOp::create(b, loc, c);
  if (multiply)
    return arith::MulIOp::create(b, loc, value, k).getResult();
  return arith::AddIOp::create(b, loc, value, k).getResult();
}

/// The product of `sizes` (a collapsed group's), at most one of them
/// dynamic; none when two are.
std::optional<OpFoldResult> groupSize(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes) {
  int64_t product = 1;
  OpFoldResult dynamic;
  for (OpFoldResult size : sizes) {
    if (std::optional<int64_t> c = getConstantIntValue(size))
      product *= *c;
    else if (dynamic)
      return std::nullopt;
    else
      dynamic = size;
  }
  if (!dynamic)
    return OpFoldResult(b.getIndexAttr(product));
  return combine(b, loc, dynamic, product, true);
}

/// The sizes of `reshape`'s result, a reshape of an empty, as values
/// available where the empty is: an expand's output shape, or the
/// products of the empty's sizes for a collapse. None when a collapsed
/// group has two dynamic sizes.
std::optional<SmallVector<OpFoldResult>> reshapedSizes(OpBuilder &b, Operation *reshape) {
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape))
    return expand.getMixedOutputShape();
  auto collapse = cast<tensor::CollapseShapeOp>(reshape);
  SmallVector<OpFoldResult> from =
      collapse.getSrc().getDefiningOp<tensor::EmptyOp>().getMixedSizes();
  SmallVector<OpFoldResult> sizes;
  for (const ReassociationIndices &group : collapse.getReassociationIndices()) {
    SmallVector<OpFoldResult> parts;
    for (int64_t d : group)
      parts.push_back(from[d]);
    std::optional<OpFoldResult> size = groupSize(b, reshape->getLoc(), parts);
    if (!size)
      return std::nullopt;
    sizes.push_back(*size);
  }
  return sizes;
}

/// Size `d` of `v` as a value that does not depend on the op producing
/// `v`: through destination-style ops to their tied init and inserts to
/// their destination, up to an empty's sizes, an expand's output shape or
/// the product of a collapse's source sizes; else a tensor.dim of `v`.
OpFoldResult sizeBeforeProducer(OpBuilder &b, Value v, int64_t d) {
  for (int steps = 0; steps < 64; ++steps) {
    auto type = cast<RankedTensorType>(v.getType());
    if (!type.isDynamicDim(d))
      return b.getIndexAttr(type.getDimSize(d));
    Operation *def = v.getDefiningOp();
    if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(def))
      return empty.getMixedSizes()[d];
    if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(def))
      return expand.getMixedOutputShape()[d];
    if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(def)) {
      SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
      SmallVector<OpFoldResult> parts;
      for (int64_t k : groups[d])
        parts.push_back(sizeBeforeProducer(b, collapse.getSrc(), k));
      if (std::optional<OpFoldResult> size = groupSize(b, v.getLoc(), parts))
        return *size;
      break;
    }
    if (auto insert = dyn_cast_or_null<tensor::InsertSliceOp>(def)) {
      v = insert.getDest();
      continue;
    }
    auto dps = dyn_cast_or_null<DestinationStyleOpInterface>(def);
    if (!dps || !dps.hasPureTensorSemantics())
      break;
    v = dps.getTiedOpOperand(cast<OpResult>(v))->get();
  }
  return tensor::DimOp::create(b, v.getLoc(), v, d).getResult();
}

/// A pad with a constant value and static low and high padding as fill +
/// insert_slice. Dynamic sizes come from what the source's producer was
/// given (its destination's sizes), so that the padded buffer can exist
/// before that producer and the producer can write into its window.
void decomposePad(tensor::PadOp pad) {
  RankedTensorType type = pad.getResultType();
  RankedTensorType sourceType = pad.getSourceType();
  Value value = pad.getConstantPaddingValue();
  int64_t row = type.getRank() ? sourceType.getShape().back() : 0;
  if (type.getRank() == 0 || (!ShapedType::isDynamic(row) && row < kMinPaddedRow) ||
      !value || !matchPattern(value, m_Constant()) ||
      llvm::any_of(pad.getStaticLow(), [](int64_t l) { return l < 0; }) ||
      llvm::any_of(pad.getStaticHigh(), [](int64_t h) { return h < 0; }))
    return;
  OpBuilder b(pad);
  Location loc = pad.getLoc();
  SmallVector<OpFoldResult> offsets, sizes, padded,
      strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t low = pad.getStaticLow()[d], high = pad.getStaticHigh()[d];
    offsets.push_back(b.getIndexAttr(low));
    sizes.push_back(sizeBeforeProducer(b, pad.getSource(), d));
    padded.push_back(type.isDynamicDim(d) ? combine(b, loc, sizes.back(), low + high, false)
                                          : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
  }
  Value empty = tensor::EmptyOp::create(b, loc, padded, type.getElementType());
  Value filled = linalg::FillOp::create(b, loc, value, empty).getResult(0);
  auto insert = tensor::InsertSliceOp::create(b, loc, pad.getSource(), filled,
                                              offsets, sizes, strides);
  // The fill's type may be more static than the pad's.
  Value result = insert.getResult();
  if (result.getType() != type)
    result = tensor::CastOp::create(b, loc, type, result);
  pad.replaceAllUsesWith(result);
  pad.erase();
}

/// An op that only initialises a fresh tensor from constants: a fill or an
/// all-parallel generic whose inputs are constants, on an empty.
bool isInitialiser(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || op->getNumResults() != 1 || linalgOp.getNumDpsInits() != 1 ||
      !isEmpty(linalgOp.getDpsInitOperand(0)->get().getDefiningOp()))
    return false;
  if (isa<linalg::FillOp>(op))
    return matchPattern(cast<linalg::FillOp>(op).getInputs()[0], m_Constant());
  if (!isa<linalg::GenericOp>(op) ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return false;
  return llvm::all_of(linalgOp.getDpsInputs(), [](Value in) {
    return matchPattern(in, m_Constant());
  });
}

/// A copy of `def`, an empty or an initialiser of one (with a copy of
/// that empty), at `b`.
Value cloneChainStart(OpBuilder &b, Operation *def) {
  IRMapping map;
  if (!isa<tensor::EmptyOp>(def)) {
    Operation *empty =
        cast<DestinationStyleOpInterface>(def).getDpsInitOperand(0)->get().getDefiningOp();
    map.map(empty->getResult(0), b.clone(*empty)->getResult(0));
  }
  return b.clone(*def, map)->getResult(0);
}

/// The use of the empty that `v`'s destination chain starts from: through
/// the tied init of destination-style ops and the destination of inserts;
/// null when there is none. The chain gets its own empty and initialiser
/// where CSE made them shared, so that replacing the empty touches this
/// chain only.
OpOperand *chainRoot(Value v) {
  OpOperand *use = nullptr;
  for (int steps = 0; steps < 64; ++steps) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return nullptr;
    if (use && !v.hasOneUse() && (isEmpty(def) || isInitialiser(def))) {
      Operation *user = def->getBlock()->findAncestorOpInBlock(*use->getOwner());
      if (!user)
        return nullptr;
      OpBuilder b(user);
      v = cloneChainStart(b, def);
      use->set(v);
      def = v.getDefiningOp();
    }
    if (isa<tensor::EmptyOp>(def))
      return use;
    // A reshape of an empty (over dynamic sizes; static ones are folded
    // already): this chain gets an empty of its own of the reshaped type.
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def) && use &&
        isEmpty(def->getOperand(0).getDefiningOp())) {
      OpBuilder b(def);
      std::optional<SmallVector<OpFoldResult>> sizes = reshapedSizes(b, def);
      auto type = cast<RankedTensorType>(v.getType());
      if (!sizes)
        return nullptr;
      auto empty = tensor::EmptyOp::create(b, def->getLoc(), *sizes, type.getElementType());
      if (empty.getType() != type) {
        empty->erase();
        return nullptr;
      }
      use->set(empty);
      if (def->use_empty()) {
        Operation *source = def->getOperand(0).getDefiningOp();
        def->erase();
        if (source->use_empty())
          source->erase();
      }
      return use;
    }
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
      use = &insert.getDestMutable();
    } else {
      auto dps = dyn_cast<DestinationStyleOpInterface>(def);
      if (!dps || !dps.hasPureTensorSemantics())
        return nullptr;
      use = dps.getTiedOpOperand(cast<OpResult>(v));
    }
    v = use->get();
  }
  return nullptr;
}

/// Makes `v` available before `point` (in the same block) by moving the
/// ops that define it, when they are an empty, an initialiser of an empty,
/// or inserts into those of values already available. True on success.
bool moveBefore(Value v, Operation *point, DominanceInfo &dom) {
  if (dom.properlyDominates(v, point))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != point->getBlock())
    return false;
  if (isa<tensor::EmptyOp>(def)) {
    if (!llvm::all_of(def->getOperands(),
                      [&](Value o) { return dom.properlyDominates(o, point); }))
      return false;
    def->moveBefore(point);
    return true;
  }
  if (isInitialiser(def)) {
    Value init = cast<DestinationStyleOpInterface>(def).getDpsInitOperand(0)->get();
    if (!init.hasOneUse() || !moveBefore(init, point, dom))
      return false;
    // Its inputs are constants: clone those defined too late.
    OpBuilder b(point);
    for (OpOperand &in : def->getOpOperands())
      if (in.get() != init && !dom.properlyDominates(in.get(), point))
        in.set(b.clone(*in.get().getDefiningOp())->getResult(0));
    def->moveBefore(point);
    return true;
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
    for (Value o : insert->getOperands())
      if (o != insert.getDest() && !dom.properlyDominates(o, point))
        return false;
    if (!moveBefore(insert.getDest(), point, dom))
      return false;
    def->moveBefore(point);
    return true;
  }
  return false;
}

/// A copy of the initialiser `init` (and of its empty) right before each
/// of its users; `init` goes when nothing uses it any more.
void splitInitialiser(Operation *init) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : init->getUses())
    uses.push_back(&use);
  Operation *empty =
      cast<DestinationStyleOpInterface>(init).getDpsInitOperand(0)->get().getDefiningOp();
  for (OpOperand *use : uses) {
    Operation *user = init->getBlock()->findAncestorOpInBlock(*use->getOwner());
    if (!user)
      continue;
    OpBuilder b(user);
    use->set(cloneChainStart(b, init));
  }
  if (init->use_empty()) {
    init->erase();
    if (empty->use_empty())
      empty->erase();
  }
}

struct PrepareDestinationsPass
    : public kiln::impl::PrepareDestinationsPassBase<PrepareDestinationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> reshapes;
    module.walk([&](Operation *op) {
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op) &&
          isStaticEmpty(op->getOperand(0).getDefiningOp()) &&
          cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape())
        reshapes.push_back(op);
    });
    for (Operation *op : reshapes) {
      OpBuilder b(op);
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      op->getResult(0).replaceAllUsesWith(tensor::EmptyOp::create(
          b, op->getLoc(), type.getShape(), type.getElementType()));
      Operation *empty = op->getOperand(0).getDefiningOp();
      op->erase();
      if (empty->use_empty())
        empty->erase();
    }

    SmallVector<tensor::PadOp> pads;
    module.walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    for (tensor::PadOp pad : pads)
      decomposePad(pad);

    SmallVector<Operation *> shared;
    module.walk([&](Operation *op) {
      if (isInitialiser(op) && !op->hasOneUse() && !op->use_empty())
        shared.push_back(op);
    });
    for (Operation *init : shared)
      splitInitialiser(init);

    DominanceInfo dom(module);
    SmallVector<tensor::InsertSliceOp> inserts;
    module.walk([&](tensor::InsertSliceOp op) { inserts.push_back(op); });
    for (tensor::InsertSliceOp insert : inserts) {
      OpOperand *use = chainRoot(insert.getSource());
      Operation *root = use ? use->get().getDefiningOp() : nullptr;
      if (!root || root->getBlock() != insert->getBlock())
        continue;
      // The chain's own empty can sit right before its user: later than
      // the destination, which may need values computed in between.
      if (Operation *user = root->getBlock()->findAncestorOpInBlock(*use->getOwner());
          user && root->hasOneUse())
        root->moveBefore(user);
      if (!dom.properlyDominates(insert.getDest(), root))
        (void)moveBefore(insert.getDest(), root, dom);
    }
  }
};
} // namespace
