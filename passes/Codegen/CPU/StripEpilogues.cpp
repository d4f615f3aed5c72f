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

/// `v` is a window of a buffer of identity layout (a unit-stride subview,
/// possibly rank-reducing) whose dims in each of `groups` but the first
/// are whole, so that each group collapses onto contiguous elements: a
/// concat's slice of channels [C, H, W] flattened to [C, H * W]. The
/// buffer's dynamic sizes are told from the memref.view that makes it.
bool flattens(Value v, ArrayRef<ReassociationIndices> groups) {
  auto sub = v.getDefiningOp<memref::SubViewOp>();
  if (!sub || !sub.hasUnitStride() || !sub.getSourceType().getLayout().isIdentity())
    return false;
  MemRefType source = sub.getSourceType();
  auto view = sub.getSource().getDefiningOp<memref::ViewOp>();
  // The source's size of dim d, if it can be told.
  auto sourceSize = [&](int64_t d) -> OpFoldResult {
    if (!source.isDynamicDim(d))
      return Builder(v.getContext()).getIndexAttr(source.getDimSize(d));
    if (!view)
      return {};
    return view.getSizes()[source.getDynamicDimIndex(d)];
  };
  // The source dim of each of the window's dims.
  llvm::SmallBitVector dropped = sub.getDroppedDims();
  SmallVector<int64_t> sourceDim;
  for (int64_t d = 0; d < source.getRank(); ++d)
    if (!dropped.test(d))
      sourceDim.push_back(d);
  SmallVector<OpFoldResult> offsets = sub.getMixedOffsets(), sizes = sub.getMixedSizes();
  for (const ReassociationIndices &group : groups)
    for (int64_t r : ArrayRef<int64_t>(group).drop_front()) {
      int64_t d = sourceDim[r];
      OpFoldResult whole = sourceSize(d);
      if (!whole || getConstantIntValue(offsets[d]) != 0 ||
          kiln::vec::constantDifference(whole, sizes[d]) != 0)
        return false;
    }
  return true;
}

/// `v` as the same elements with a static unit innermost stride (its
/// offset, sizes and outer strides read at run time), for a `v` whose
/// innermost stride is 1 though its type does not say so.
Value unitInnermost(OpBuilder &b, Location loc, Value v) {
  auto type = cast<MemRefType>(v.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, v);
  SmallVector<OpFoldResult> sizes = getAsOpFoldResult(meta.getSizes());
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!type.isDynamicDim(d))
      sizes[d] = b.getIndexAttr(type.getDimSize(d));
  SmallVector<OpFoldResult> strides = getAsOpFoldResult(meta.getStrides());
  strides.back() = b.getIndexAttr(1);
  SmallVector<int64_t> layout(type.getRank(), ShapedType::kDynamic);
  layout.back() = 1;
  auto castType = MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, layout),
      type.getMemorySpace());
  return memref::ReinterpretCastOp::create(b, loc, castType, v, meta.getOffset(), sizes, strides)
      .getResult();
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
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  for (OpOperand &operand : after->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || type.getShape() != expand.getResultType().getShape() ||
        !(type.getLayout().isIdentity() || flattens(operand.get(), groups)) ||
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
                  : memref::CollapseShapeOp::create(b, after.getLoc(), operand.get(), groups)
                        .getResult();
    // A window collapsed over dynamic sizes gets a dynamic innermost
    // stride (a dim of size 1 may have any stride); `flattens` proved it
    // contiguous, and the kernels want to see it so.
    if (v != out && !kiln::vec::unitInnermostStride(v))
      v = unitInnermost(b, after.getLoc(), v);
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

/// Whether the epilogue `after` of the contraction `op`, which reads
/// `op`'s output as `read`, may run image row by image row with it:
/// every operand of `read`'s rank, f32, read and written by identity
/// maps with an innermost stride of one, none but `read` in the output's
/// buffer; what it writes neither `read` nor memory that `op` reads (the
/// rows write before `op` has read all of its inputs), its other inputs
/// apart from the output.
static bool runsByRows(linalg::GenericOp op, linalg::GenericOp after, Value read) {
  Value out = op.getDpsInitOperand(0)->get();
  int64_t rank = cast<MemRefType>(read.getType()).getRank();
  Value outRoot = rootBuffer(out);
  Value written = after.getDpsInitOperand(0)->get();
  for (OpOperand &operand : after->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || type.getRank() != rank || !type.getElementType().isF32() ||
        !after.getMatchingIndexingMap(&operand).isIdentity() ||
        !vec::unitInnermostStride(operand.get()) ||
        (operand.get() != read && rootBuffer(operand.get()) == outRoot))
      return false;
  }
  auto apart = [&](Value a, Value b) {
    return kiln::distinctPlannedBuffers(a, b) || !vec::mayOverlap(a, b);
  };
  if (written == read || !writesOwnMemory(op, after) ||
      llvm::any_of(op.getDpsInputs(), [&](Value in) { return !apart(written, in); }))
    return false;
  return llvm::all_of(after.getDpsInputs(),
                      [&](Value in) { return in == read || apart(in, out); });
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
  // Its body must not read what it overwrites (byImageRows' flat path
  // runs it in place on the output).
  if (after.payloadUsesValueFromOperand(after.getDpsInitOperand(0)) ||
      !runsByRows(op, after, expand.getResult()))
    return {};
  return after;
}

/// What `v` views through reshapes alone (collapses and expansions of
/// identity layout): the same elements in the same order.
static Value reshapeSource(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def) ||
        !cast<MemRefType>(def->getOperand(0).getType()).getLayout().isIdentity())
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// The all-parallel generic right after the contraction `op` (a stride-1
/// conv over the row-stacked grid, its output [C, N] with N = H * Wp, the
/// padded width, its only dynamic dim) that reads the output through a
/// window `read` [C, H, W] of its expansion into [C, H, Wp] (the grid's
/// columns beyond W are not outputs) and writes a buffer of its own:
/// every operand of one rank read and written by identity maps, its
/// innermost stride one. Run row by row of H with `op` (gridByRows), the
/// kernels fold it in. Null when there is none, when what it writes may
/// be memory that `op` reads, or when anything reads `op`'s output after
/// it (the rows leave the grid's other columns unwritten).
linalg::GenericOp gridEpilogue(linalg::GenericOp op, DynamicDims dims,
                               memref::SubViewOp &read) {
  linalg::GenericOp after = nextElementwise(op, dims);
  if (!after)
    return {};
  Value out = op.getDpsInitOperand(0)->get();
  auto outType = cast<MemRefType>(out.getType());
  int64_t outRank = outType.getRank();
  if (!outType.getLayout().isIdentity() || outRank < 2 ||
      llvm::any_of(outType.getShape().drop_back(), ShapedType::isDynamic) ||
      op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResults().back() !=
          getAffineDimExpr(dims.front().first, op.getContext()))
    return {};
  // The window: zero offsets, unit strides, the leading dims whole (unit
  // ones may be dropped) and shaped as the output's, the last two the
  // expansion's rows and columns of the output's last dim.
  read = {};
  memref::ExpandShapeOp expand;
  for (OpOperand *in : after.getDpsInputOperands()) {
    auto view = in->get().getDefiningOp<memref::SubViewOp>();
    auto e = view ? view.getSource().getDefiningOp<memref::ExpandShapeOp>()
                  : memref::ExpandShapeOp();
    if (e && reshapeSource(e.getSrc()) == reshapeSource(out)) {
      read = view;
      expand = e;
    }
  }
  if (!read)
    return {};
  auto expandType = expand.getResultType();
  int64_t rank = read.getType().getRank(), eRank = expandType.getRank();
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  llvm::SmallBitVector dropped = read.getDroppedDims();
  if (!expandType.getLayout().isIdentity() || rank != outRank + 1 || groups.back().size() != 2 ||
      dropped.test(eRank - 1) || dropped.test(eRank - 2) || !read.hasUnitStride() ||
      llvm::any_of(read.getMixedOffsets(), [](OpFoldResult o) { return !isZeroInteger(o); }))
    return {};
  SmallVector<int64_t> leading;
  for (int64_t d = 0; d < eRank - 2; ++d) {
    if (dropped.test(d)) {
      if (expandType.getDimSize(d) != 1)
        return {};
      continue;
    }
    if (getConstantIntValue(read.getMixedSizes()[d]) != expandType.getDimSize(d))
      return {};
    leading.push_back(expandType.getDimSize(d));
  }
  if (ArrayRef(leading) != outType.getShape().drop_back())
    return {};
  if (!kiln::contraction::deadAfter(after, out) || !runsByRows(op, after, read.getResult()))
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
