//===- KernelSurroundings.cpp - Epilogues next to their contractions ------===//
//
// Before kiln-vectorize-contractions matches its kernels, what follows each
// contraction is rearranged so that its elementwise epilogue (activation,
// batch norm, residual add) comes right after it, in a shape the kernel
// can apply in registers:
//
// - views and constants after it, and linalg ops that share no memory
//   with it (the border fill of a padded buffer that the epilogue writes
//   into), move before it;
// - an epilogue reading a flattened 1x1 conv's [C, H*W] output through a
//   reshape as [C, H, W] is rebuilt on [C, H*W] when all its operands are
//   contiguous; when it writes a window of a larger buffer (a padded
//   input of the next conv), the conv and its init are rebuilt on
//   [C, H, W] instead, their H*W loop split in two.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "kiln-vectorize-contractions"

using namespace mlir;

namespace kiln::contraction {

namespace {

/// Moves the ops between `op` and the next op that reads its output (an
/// epilogue) to before `op`, so that the kernel, built where `op` is, can
/// fold that op in: views and constants, and linalg ops that share no
/// memory with `op` (the border fill of a padded buffer the epilogue
/// writes into; the memory plan keeps it apart from `op`'s operands).
/// Only views and constants move when no such reader follows.
void hoistViewsAfter(linalg::GenericOp op) {
  Operation *next = op->getNextNode();
  while (next && !next->hasTrait<OpTrait::IsTerminator>() &&
         (isView(next) || independent(next, op)))
    next = next->getNextNode();
  Value outRoot = kiln::vec::rootBuffer(op.getDpsInitOperand(0)->get());
  auto reader = dyn_cast_or_null<linalg::GenericOp>(next);
  bool readsOut = reader && !kiln::vec::isMultiplyAccumulate(reader) &&
                  llvm::any_of(reader.getDpsInputs(), [&](Value in) {
                    return kiln::vec::rootBuffer(in) == outRoot;
                  });
  for (Operation *p = op->getNextNode(); p != next;) {
    Operation *following = p->getNextNode();
    if (!readsOut && !isView(p))
      break; // Views after an op that stays are not needed before `op`.
    p->moveBefore(op);
    p = following;
  }
}

/// `v` as a contiguous buffer of `shape` (same element count, identity
/// layout): through a flat view.
Value reshapedTo(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto type = cast<MemRefType>(v.getType());
  if (type.getShape() == shape)
    return v;
  Value flat = v;
  if (type.getRank() != 1) {
    ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    flat = memref::CollapseShapeOp::create(b, loc, v, ArrayRef<ReassociationIndices>{all});
  }
  if (shape.size() == 1)
    return flat;
  ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, shape.size()));
  return memref::ExpandShapeOp::create(
      b, loc, MemRefType::get(shape, type.getElementType()), flat,
      ArrayRef<ReassociationIndices>{all});
}

/// The loop dims of a generic after its output is viewed through an
/// expansion: each dim the output has becomes the dims of its group.
struct DimSplit {
  /// The sizes each old loop dim becomes (one size: not split).
  SmallVector<SmallVector<int64_t>> sizes;
  /// The first new dim of each old one.
  SmallVector<unsigned> first;
  unsigned count = 0;
};

/// An operand of a split generic: its new indexing map's results, and
/// the expansion that views it on the new dims (none when no split dim
/// indexes it).
struct SplitOperand {
  SmallVector<AffineExpr> results;
  SmallVector<ReassociationIndices> reassociation;
  SmallVector<int64_t> shape;
  MemRefType type;
  bool expands = false;
};

/// `map`'s results on the split dims for the memref `v`: a split dim must
/// be a whole index over the full size of `v`'s dim there; none otherwise,
/// or if the view cannot be expressed as an expansion.
std::optional<SplitOperand> splitOperand(Value v, AffineMap map, const DimSplit &s) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  MLIRContext *ctx = v.getContext();
  SmallVector<AffineExpr> renamed;
  for (unsigned d = 0; d < s.sizes.size(); ++d)
    renamed.push_back(getAffineDimExpr(s.first[d], ctx));
  SplitOperand r;
  for (auto [p, e] : llvm::enumerate(map.getResults())) {
    ReassociationIndices group;
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (dim && s.sizes[dim.getPosition()].size() > 1) {
      ArrayRef<int64_t> sizes = s.sizes[dim.getPosition()];
      if (type.getDimSize(p) != ShapedType::getNumElements(sizes))
        return std::nullopt;
      for (auto [k, size] : llvm::enumerate(sizes)) {
        group.push_back(r.shape.size());
        r.shape.push_back(size);
        r.results.push_back(getAffineDimExpr(s.first[dim.getPosition()] + k, ctx));
      }
      r.expands = true;
    } else {
      for (unsigned d = 0; d < s.sizes.size(); ++d)
        if (s.sizes[d].size() > 1 && e.isFunctionOfDim(d))
          return std::nullopt;
      group.push_back(r.shape.size());
      r.shape.push_back(type.getDimSize(p));
      r.results.push_back(e.replaceDims(renamed));
    }
    r.reassociation.push_back(group);
  }
  r.type = type;
  if (r.expands) {
    FailureOr<MemRefType> expanded =
        memref::ExpandShapeOp::computeExpandedType(type, r.shape, r.reassociation);
    if (failed(expanded))
      return std::nullopt;
    r.type = *expanded;
  }
  return r;
}

/// How `g`'s loop dims split when its output is viewed as `view`, an
/// expansion of it; none when an operand uses a split dim other than as a
/// whole index, or the body reads linalg.index.
std::optional<DimSplit> planSplit(linalg::GenericOp g, memref::ExpandShapeOp view) {
  AffineMap outMap = g.getMatchingIndexingMap(g.getDpsInitOperand(0));
  SmallVector<ReassociationIndices> reassociation = view.getReassociationIndices();
  ArrayRef<int64_t> shape = view.getResultType().getShape();
  if (!g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 ||
      outMap.getNumResults() != reassociation.size() ||
      !g.getBody()->getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  DimSplit s;
  for (int64_t r : ranges)
    s.sizes.push_back({r});
  for (auto [j, e] : llvm::enumerate(outMap.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim)
      return std::nullopt;
    s.sizes[dim.getPosition()].clear();
    for (int64_t k : reassociation[j])
      s.sizes[dim.getPosition()].push_back(shape[k]);
  }
  for (ArrayRef<int64_t> sizes : s.sizes) {
    s.first.push_back(s.count);
    s.count += sizes.size();
  }
  for (OpOperand &operand : g->getOpOperands())
    if (!splitOperand(operand.get(), g.getMatchingIndexingMap(&operand), s))
      return std::nullopt;
  return s;
}

/// Rebuilds `g` on the split dims `s`, writing `view` (its output
/// expanded), its inputs expanded where split dims index them. The views
/// go right before `g`.
void applySplit(linalg::GenericOp g, const DimSplit &s, Value view) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : g->getOpOperands()) {
    SplitOperand r = *splitOperand(operand.get(), g.getMatchingIndexingMap(&operand), s);
    maps.push_back(AffineMap::get(s.count, 0, r.results, g.getContext()));
    if (g.isDpsInit(&operand))
      continue;
    ins.push_back(r.expands ? memref::ExpandShapeOp::create(b, loc, r.type, operand.get(),
                                                            r.reassociation)
                                  .getResult()
                            : operand.get());
  }
  SmallVector<utils::IteratorType> iters;
  for (auto [d, iter] : llvm::enumerate(g.getIteratorTypesArray()))
    iters.append(s.sizes[d].size(), iter);
  auto rebuilt = linalg::GenericOp::create(b, loc, TypeRange{}, ins, ValueRange{view}, maps, iters);
  rebuilt.getRegion().takeBody(g.getRegion());
  g.erase();
}

/// The contraction `op` (a flattened 1x1 conv writing [C, H*W]) rebuilt on
/// `view`, the expansion of its output that its epilogue reads ([C, H,
/// W]), with what initialises the output just before (a constant fill, or
/// a bias broadcast) rebuilt the same way so that the kernel still folds
/// it. Nothing changes when either cannot be rebuilt. `epilogue` is the
/// generic that reads `view`.
void splitToView(linalg::GenericOp op, linalg::GenericOp epilogue, Value view) {
  auto expand = view.getDefiningOp<memref::ExpandShapeOp>();
  Value out = op.getDpsInitOperand(0)->get();
  if (!expand || expand.getSrc() != out || expand->getBlock() != op->getBlock())
    return;
  std::optional<DimSplit> split = planSplit(op, expand);
  if (!split)
    return;
  // The init, if any, is rebuilt on the view as well.
  Operation *init = initCandidate(op);
  std::optional<Value> fillValue = kiln::vec::constantFill(init, out);
  auto initGeneric = dyn_cast_or_null<linalg::GenericOp>(init);
  std::optional<DimSplit> initSplit;
  if (!fillValue && initGeneric && initGeneric.getNumDpsInits() == 1 &&
      initGeneric.getDpsInitOperand(0)->get() == out &&
      initGeneric.getMatchingIndexingMap(initGeneric.getDpsInitOperand(0)).isIdentity())
    initSplit = planSplit(initGeneric, expand);
  bool rebuildInit = fillValue || initSplit;
  if (!rebuildInit && init && kiln::vec::touches(init, kiln::vec::rootBuffer(out)))
    return; // Another kind of init: left flat, the kernel could not fold it.
  Operation *point = rebuildInit ? init : op.getOperation();
  Operation *outDef = out.getDefiningOp();
  if (outDef && (outDef->getBlock() != op->getBlock() || !outDef->isBeforeInBlock(point)))
    return;
  // The expansion may be shared (CSE merges the views of a buffer that two
  // convs write in turn, each read by its own epilogue): this epilogue
  // gets its own copy before `point`, and the original stays where the
  // others need it.
  OpBuilder vb(point);
  view = vb.clone(*expand)->getResult(0);
  epilogue->replaceUsesOfWith(expand.getResult(), view);
  if (expand->use_empty())
    expand->erase();
  if (fillValue) {
    OpBuilder b(init);
    linalg::FillOp::create(b, init->getLoc(), *fillValue, view);
    init->erase();
  } else if (initSplit) {
    applySplit(initGeneric, *initSplit, view);
  }
  applySplit(op, *split, view);
}

/// An elementwise generic right after the contraction `op` that reads its
/// output through a reshape (a flattened 1x1 conv's [C, H*W] output read
/// as [C, H, W] by its ReLU) is rebuilt on the output's shape, every
/// operand viewed the same way, so that the kernel can fold it in. Only
/// when every operand is a buffer of one shape read and written by
/// identity maps; when one of them is a window of a larger buffer, the
/// contraction is rebuilt on the epilogue's shape instead (splitToView).
void reshapeEpilogue(linalg::GenericOp op) {
  auto after = dyn_cast_or_null<linalg::GenericOp>(op->getNextNode());
  Value out = op.getDpsInitOperand(0)->get();
  auto outType = dyn_cast<MemRefType>(out.getType());
  // Only bodies that do not depend on the loop structure (no
  // linalg.index), and never another contraction (the caller's list).
  if (!after || !outType || !outType.hasStaticShape() || !outType.getLayout().isIdentity() ||
      !after.hasPureBufferSemantics() || after.getNumDpsInits() != 1 ||
      after.getNumParallelLoops() != after.getNumLoops() || after.getNumResults() ||
      !kiln::vec::vectorisableBody(after) || kiln::vec::isMultiplyAccumulate(after))
    return;
  ArrayRef<int64_t> shape;
  Value outView;
  bool identityLayouts = true;
  for (OpOperand &operand : after->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() || !after.getMatchingIndexingMap(&operand).isIdentity() ||
        (!shape.empty() && type.getShape() != shape))
      return;
    shape = type.getShape();
    identityLayouts &= type.getLayout().isIdentity();
    Operation *def = operand.get().getDefiningOp();
    if (after.isDpsInput(&operand) && def &&
        isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def) && def->getOperand(0) == out)
      outView = operand.get();
  }
  if (!outView || shape == outType.getShape() ||
      outType.getNumElements() != ShapedType::getNumElements(shape))
    return;
  // An operand that is a window of a larger buffer (the epilogue writes
  // into a padded buffer) cannot be viewed flat: the contraction takes the
  // epilogue's shape instead.
  if (!identityLayouts) {
    splitToView(op, after, outView);
    return;
  }
  // The views go before the contraction, the generic stays where it is.
  // One view per buffer: an epilogue that updates one of its inputs in
  // place (a residual add into the skip connection's buffer) must still
  // read and write the same value, or nothing can tell it is in place.
  OpBuilder vb(op), b(after);
  Location loc = after.getLoc();
  SmallVector<Value> ins, outs;
  llvm::DenseMap<Value, Value> viewed;
  for (OpOperand &operand : after->getOpOperands()) {
    Operation *def = operand.get().getDefiningOp();
    Value &v = viewed[operand.get()];
    if (!v)
      v = def && isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def) &&
                  def->getOperand(0) == out
              ? out
              : reshapedTo(vb, loc, operand.get(), outType.getShape());
    (after.isDpsInput(&operand) ? ins : outs).push_back(v);
  }
  unsigned rank = outType.getRank();
  SmallVector<AffineMap> maps(ins.size() + outs.size(),
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto rebuilt = linalg::GenericOp::create(b, loc, TypeRange{}, ins, outs, maps, iters);
  rebuilt.getRegion().takeBody(after.getRegion());
  after.erase();
}

} // namespace

void prepareEpilogue(linalg::GenericOp op) {
  hoistViewsAfter(op);
  reshapeEpilogue(op);
}

} // namespace kiln::contraction
