//===- StripEpilogues.cpp - Epilogues and fills in kiln-strip-dynamic-dims -===//
//
// The part of kiln-strip-dynamic-dims that runs a contraction's
// elementwise epilogue window by window with it: which epilogue may
// (plainEpilogue, flatEpilogue: nothing it writes may be memory the
// contraction still reads) and the pieces of both (pieceWithEpilogue).
// The pass itself is in StripDynamicDims.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/StripDynamicDims.h"

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/VectorHelpers.h"
#include "passes/Utils/Buffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace kiln::strip {

namespace {

/// The all-parallel generic with one output right after the
/// contraction `op` (views, sizes, constants and index arithmetic
/// between: ops without memory effects or regions): the candidate
/// for its epilogue. Null when there is none, when its body reads its
/// position (linalg.index: within a window it would read it there), or
/// when `op` cannot run window by window with one: not one output
/// indexed by loop dims alone, or a reduction dim among `dims` (the
/// epilogue needs every window's sums; one the kernels take whole,
/// wholeReduction, is not among them).
linalg::GenericOp nextElementwise(linalg::GenericOp op, DynamicDims dims) {
  if (op.getNumDpsInits() != 1 || !op.getNumReductionLoops() ||
      llvm::any_of(dims, [&](auto d) {
        return op.getIteratorTypesArray()[d.first] != utils::IteratorType::parallel;
      }) ||
      !llvm::all_of(op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResults(),
                    [](AffineExpr e) { return isa<AffineDimExpr>(e); }))
    return {};
  // Index arithmetic may sit between them too (the next op's sizes: a
  // strided conv's (H + 1) / 2 after the stem's conv).
  Operation *next = op->getNextNode();
  while (next && kiln::contraction::isView(next))
    next = next->getNextNode();
  auto after = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!after || !after.hasPureBufferSemantics() || after.getNumDpsInits() != 1 ||
      after.getNumParallelLoops() != after.getNumLoops() || after.getNumResults() ||
      readsPosition(after, [](unsigned) { return true; }))
    return {};
  return after;
}

/// Whether what `after` writes is memory that no input of `op` can be
/// in: run window by window, `after` writes before `op` has read all its
/// inputs. kiln-plan-memory lets a buffer first used after a top-level
/// op take the memory of one dead after it, unless it makes the buffer
/// live from the contraction (an epilogue that is the last reader of
/// the contraction's output, within kEpilogueReach ops of it: the
/// kernels fold such epilogues), which it marks kLiveFromContraction.
/// Safe when the written buffer is not a planned one, or is used before
/// `op`, or is so marked.
bool writesOwnMemory(linalg::GenericOp op, linalg::GenericOp after) {
  Value written = rootBuffer(after.getDpsInitOperand(0)->get());
  if (!written.getDefiningOp<memref::ViewOp>() || !isa<func::FuncOp>(op->getParentOp()))
    return true; // An argument, an alloc of its own; or planned per top-level op.
  // As the plan counts uses: not views, not sizes read.
  auto used = [](Operation *o, Value root) {
    return !isa<ViewLikeOpInterface, memref::DimOp>(o) && touches(o, root);
  };
  for (Operation *o = &op->getBlock()->front(); o != op; o = o->getNextNode())
    if (used(o, written))
      return true;
  // What the plan did, not what it would do: the conditions it checks
  // (the epilogue the last reader of every input, within reach of the
  // contraction) are not all visible here. Guessing them let an
  // efficientnet_b0 expansion conv's SiLU, run in blocks of channels,
  // overwrite the conv's input before the next block read it.
  return written.getDefiningOp()->hasAttr(kLiveFromContraction);
}

} // namespace

/// The elementwise generic right after the contraction `op` (views and
/// index arithmetic between) that reads its output where it writes (a bias, an
/// activation, a residual add: identity maps on the output's dims), to
/// run window by window with it: the kernels fold it in. Null when there
/// is none, when `op` is strip-mined along a reduction dim (the epilogue
/// needs every window's sums), or when its other operands may share memory
/// with the output or what it writes with `op`'s inputs.
linalg::GenericOp plainEpilogue(linalg::GenericOp op, DynamicDims dims) {
  linalg::GenericOp after = nextElementwise(op, dims);
  if (!after)
    return {};
  Value out = op.getDpsInitOperand(0)->get();
  auto outType = cast<MemRefType>(out.getType());
  if (after.getNumLoops() != unsigned(outType.getRank()) ||
      !after.getMatchingIndexingMap(after.getDpsInitOperand(0)).isIdentity())
    return {};
  // Two planned buffers (views of the workspace) that are both live
  // while `op` runs are apart; sizes over dynamic dims hide that from
  // mayOverlap. The epilogue's other inputs are defined before `op` and
  // read after it; so is what it writes when writesOwnMemory holds.
  auto apart = [&](Value a, Value b) {
    return kiln::distinctPlannedBuffers(a, b) || !vec::mayOverlap(a, b);
  };
  Value written = after.getDpsInitOperand(0)->get();
  bool readsOut = false;
  for (OpOperand *in : after.getDpsInputOperands()) {
    if (in->get() == out) {
      if (!after.getMatchingIndexingMap(in).isIdentity())
        return {};
      readsOut = true;
    } else if (!apart(in->get(), out)) {
      return {};
    }
  }
  if (!readsOut)
    return {};
  if (written != out &&
      (!writesOwnMemory(op, after) || !apart(written, out) ||
       llvm::any_of(op.getDpsInputs(), [&](Value in) { return !apart(written, in); })))
    return {};
  return after;
}

/// The all-parallel generic right after the contraction `op` (views and
/// index arithmetic between) that reads its output through an expansion ([C, H * W] read
/// as [C, H, W]: a flattened conv's activation or residual add), rebuilt
/// on the output's shape, its other operands collapsed the same way (all
/// of them whole contiguous buffers of one shape, identity maps). Null
/// when there is none, or `op` is strip-mined along a reduction dim (the
/// epilogue needs every window's sums). The generic replaced goes into
/// `erased`.
linalg::GenericOp flatEpilogue(linalg::GenericOp op, DynamicDims dims,
                               llvm::DenseSet<Operation *> &erased) {
  linalg::GenericOp after = nextElementwise(op, dims);
  if (!after)
    return {};
  Value out = op.getDpsInitOperand(0)->get();
  // The expansion of `out` it reads, and every operand a whole
  // contiguous buffer of its shape, read and written by identity maps.
  memref::ExpandShapeOp expand;
  for (OpOperand *in : after.getDpsInputOperands())
    if (auto e = in->get().getDefiningOp<memref::ExpandShapeOp>(); e && e.getSrc() == out)
      expand = e;
  auto outType = cast<MemRefType>(out.getType());
  if (!expand || !outType.getLayout().isIdentity())
    return {};
  Value outRoot = rootBuffer(out);
  for (OpOperand &operand : after->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getLayout().isIdentity() ||
        type.getShape() != expand.getResultType().getShape() ||
        !after.getMatchingIndexingMap(&operand).isIdentity() ||
        (operand.get() != expand.getResult() && rootBuffer(operand.get()) == outRoot))
      return {};
  }
  if (after.getDpsInitOperand(0)->get() == expand.getResult() ||
      !writesOwnMemory(op, after))
    return {};
  // Rebuilt flat, where it was.
  OpBuilder b(after);
  SmallVector<Value> ins, outs;
  for (OpOperand &operand : after->getOpOperands()) {
    Value v = operand.get() == expand.getResult()
                  ? out
                  : memref::CollapseShapeOp::create(b, after.getLoc(), operand.get(),
                                                    expand.getReassociationIndices())
                        .getResult();
    (after.isDpsInit(&operand) ? outs : ins).push_back(v);
  }
  unsigned rank = outType.getRank();
  auto flat = linalg::GenericOp::create(
      b, after.getLoc(), TypeRange{}, ins, outs,
      SmallVector<AffineMap>(ins.size() + outs.size(),
                             b.getMultiDimIdentityMap(rank)),
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel));
  flat.getRegion().takeBody(after.getRegion());
  erased.insert(after);
  after.erase();
  return flat;
}

/// The all-parallel generic right after the contraction `op` (a flattened
/// 1x1 conv writing [C, H * W], its columns whole) that reads its output
/// through an expansion of the columns into [H, W] and writes a window of
/// a larger buffer (the padded input of the next conv): every operand of
/// one rank read and written by identity maps, its innermost stride one.
/// Run row by row of H with `op` (byImageRows), the kernels fold it in.
/// Null when there is none, or what it writes may be memory that `op`
/// reads. `expand` is set to the expansion.
linalg::GenericOp windowEpilogue(linalg::GenericOp op, DynamicDims dims,
                                 memref::ExpandShapeOp &expand) {
  linalg::GenericOp after = nextElementwise(op, dims);
  if (!after)
    return {};
  Value out = op.getDpsInitOperand(0)->get();
  auto outType = cast<MemRefType>(out.getType());
  expand = {};
  for (OpOperand *in : after.getDpsInputOperands())
    if (auto e = in->get().getDefiningOp<memref::ExpandShapeOp>(); e && e.getSrc() == out)
      expand = e;
  if (!expand || !outType.getLayout().isIdentity())
    return {};
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  if (groups.back().size() != 2 ||
      llvm::any_of(ArrayRef(groups).drop_back(), [](auto &g) { return g.size() != 1; }))
    return {};
  int64_t rank = expand.getResultType().getRank();
  Value outRoot = rootBuffer(out);
  Value written = after.getDpsInitOperand(0)->get();
  for (OpOperand &operand : after->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || type.getRank() != rank || !type.getElementType().isF32() ||
        !after.getMatchingIndexingMap(&operand).isIdentity() ||
        !vec::unitInnermostStride(operand.get()) ||
        (operand.get() != expand.getResult() && rootBuffer(operand.get()) == outRoot))
      return {};
  }
  auto apart = [&](Value a, Value b) {
    return kiln::distinctPlannedBuffers(a, b) || !vec::mayOverlap(a, b);
  };
  // Its body must not read what it overwrites (byImageRows' flat path
  // runs it in place on the output).
  if (written == expand.getResult() ||
      after.payloadUsesValueFromOperand(after.getDpsInitOperand(0)) ||
      !writesOwnMemory(op, after) ||
      llvm::any_of(op.getDpsInputs(), [&](Value in) { return !apart(written, in); }))
    return {};
  for (OpOperand *in : after.getDpsInputOperands())
    if (in->get() != expand.getResult() && !apart(in->get(), out))
      return {};
  return after;
}

/// A piece of `op` and then one of `after` on the same window of
/// `op`'s output, reading the very view `op`'s piece writes (so that the
/// kernels see the epilogue right after its contraction).
linalg::GenericOp pieceWithEpilogue(OpBuilder &b, linalg::GenericOp op,
                                    linalg::GenericOp after, ArrayRef<Window> windows) {
  linalg::GenericOp opPiece = piece(b, op, windows);
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<Window> afterWindows;
  for (AffineExpr e : outMap.getResults())
    afterWindows.push_back(windows[cast<AffineDimExpr>(e).getPosition()]);
  linalg::GenericOp afterPiece = piece(b, after, afterWindows);
  Value written = opPiece.getDpsInitOperand(0)->get();
  auto writtenView = written.getDefiningOp<memref::SubViewOp>();
  // The window of the output, read (and, in place, written) by the
  // epilogue, is the same view as the piece's: what the kernel folds.
  for (OpOperand &operand : afterPiece->getOpOperands()) {
    auto view = operand.get().getDefiningOp<memref::SubViewOp>();
    if (operand.get() == written || !view || !writtenView ||
        view.getSource() != writtenView.getSource() ||
        view.getMixedOffsets() != writtenView.getMixedOffsets() ||
        view.getMixedSizes() != writtenView.getMixedSizes() ||
        view.getMixedStrides() != writtenView.getMixedStrides())
      continue;
    operand.set(written);
    if (view->use_empty())
      view->erase();
  }
  return opPiece;
}

} // namespace kiln::strip
