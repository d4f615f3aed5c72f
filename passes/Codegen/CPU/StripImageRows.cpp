//===- StripImageRows.cpp - Convs and their epilogues by image rows -------===//
//
// Part of kiln-strip-dynamic-dims (StripDynamicDims.cpp). A flattened 1x1
// conv over a dynamic H x W (its columns N = H * W whole, its only
// dynamic dim) whose epilogue writes a window of a padded buffer
// (windowEpilogue: the ReLU6 or SiLU before a depthwise conv) runs as a
// loop over H: each trip writes the padded buffer's column borders on
// that row, then the conv over the row's W columns with the epilogue on
// that row of the window, a kernel that folds it in. Before, the epilogue
// ran as a pass of its own over the whole map, or (before
// kiln-prepare-destinations let the pad be written in place) the kernel
// wrote a buffer that was then copied into the pad after a fill of all
// of it: 250 us of the 880 of mobilenet_v2's features.2 at 224x224. The
// static build does the same (KernelSurroundings' splitToView).
//
// Narrow maps (fewer than kMinImageRow columns, decided at run time) run
// flat as before: a 7x7 map's rows are one part-filled vector each, with
// the weights read once a row. There, the whole buffer is filled in
// chunks, the conv writes its own buffer with the epilogue in place (an
// activation) or then runs the epilogue into the window.
//
// The border fills between the two (kiln-lower-copies' pieces) are
// replaced. Nothing changes when the kernel would not fold the epilogue,
// or the window is not a pad's of the last two dims.
//
// A stride-1 conv over a dynamic H x W is a conv over the row-stacked
// grid (kiln-view-row-stacks): its output [C, H * Wp] has the padded
// width Wp a row, of which the first W columns are the conv's output,
// and the epilogue after it (the ReLU6 after a depthwise conv) reads
// that [C, H, W] window and writes a buffer of its own: a pass over the
// whole map (mobilenet_v2's features.1 at 224x224: 70 us of the
// depthwise conv's 197 on one thread, 125 us at two). gridByRows runs
// both by image rows too: each trip the conv over the row's W columns,
// its kernel storing the epilogue's row; the grid's two extra columns a
// row are never computed. Narrow maps (fewer than kMinGridRow columns)
// keep the grid, whose windows of 16 span rows.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/StripDynamicDims.h"
#include "passes/Codegen/CPU/VectorHelpers.h"
#include "passes/Utils/Buffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::strip;

namespace {

/// The image width from which byImageRows runs a conv and its epilogue
/// row by row (a full vector a row): at 7 columns mobilenet_v2's
/// 160 -> 960 convs took 2.2x their flat time, at 14 efficientnet_b0's
/// expansions lost more than their pads' copies saved.
constexpr int64_t kMinImageRow = 16;

/// The image width from which gridByRows runs a stride-1 conv over the
/// row-stacked grid row by row: at 4, mobilenet_v2's 14x14 and 7x7
/// depthwise convs lost about what their epilogues' passes had cost
/// (one part-filled vector a row against the grid's windows spanning
/// rows), and two threads ran 3% slower over the model.
constexpr int64_t kMinGridRow = 16;

/// Moves what sits between the contraction `op` and the op after it to
/// before `op` when that is views, index arithmetic and constant fills
/// of a buffer that the memory plan keeps apart from `op`'s operands
/// (made live from the contraction, kLiveFromContraction: the border of
/// the padded buffer that `op`'s epilogue writes into, kiln-lower-copies'
/// pieces). Over dynamic sizes, KernelSurroundings cannot tell that they
/// share no memory. Returns the fills moved.
SmallVector<linalg::GenericOp> hoistBorderFills(linalg::GenericOp op) {
  SmallVector<Operation *> between;
  SmallVector<linalg::GenericOp> fills;
  for (Operation *o = op->getNextNode(); o; o = o->getNextNode()) {
    if (kiln::contraction::isView(o)) {
      between.push_back(o);
      continue;
    }
    auto fill = dyn_cast<linalg::GenericOp>(o);
    if (!fill || fill.getNumDpsInputs() || fill.getNumDpsInits() != 1 ||
        !fill.hasPureBufferSemantics() ||
        !kiln::vec::constantFill(fill, fill.getDpsInitOperand(0)->get()))
      break;
    Value root = kiln::rootBuffer(fill.getDpsInitOperand(0)->get());
    auto view = root.getDefiningOp<memref::ViewOp>();
    if (!view || !view->hasAttr(kiln::kLiveFromContraction))
      break;
    // Each of `op`'s operands another planned buffer, or memory outside
    // the workspace (a weight, the model's input).
    auto apart = [&](Value v) {
      Value other = kiln::rootBuffer(v);
      return kiln::distinctPlannedBuffers(v, root) ||
             (other != root && other != view.getSource() &&
              !other.getDefiningOp<memref::ViewOp>());
    };
    if (!llvm::all_of(op->getOperands(), apart))
      break;
    between.push_back(o);
    fills.push_back(fill);
  }
  if (fills.empty())
    return {};
  for (Operation *o : between)
    o->moveBefore(op);
  return fills;
}

/// A generic writing `value` into all of `view`, added to `ops`.
void fillAll(OpBuilder &b, Location loc, Value view, Value value,
             SmallVectorImpl<linalg::GenericOp> &ops) {
  int64_t rank = cast<MemRefType>(view.getType()).getRank();
  ops.push_back(linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{}, ValueRange{view},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange) { linalg::YieldOp::create(nb, l, value); }));
}

/// Row `r` (of H, the next to last dim) of `v`, `count` columns from
/// `from` (all of them without `count`): a rank-reducing subview without
/// the H dim, its type spelled out (strides tell which of two unit dims
/// it drops: a one-column border has two).
Value rowOf(OpBuilder &rb, Location loc, Value v, OpFoldResult r, OpFoldResult from,
            OpFoldResult count) {
  auto type = cast<MemRefType>(v.getType());
  int64_t rank = type.getRank(), hDim = rank - 2, wDim = rank - 1;
  SmallVector<OpFoldResult> at(rank, rb.getIndexAttr(0)), size, ones(rank, rb.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    size.push_back(type.isDynamicDim(d) && (d < hDim || (d == wDim && !count))
                       ? OpFoldResult(memref::DimOp::create(rb, loc, v, d).getResult())
                       : OpFoldResult(rb.getIndexAttr(type.getDimSize(d))));
  at[hDim] = r;
  size[hDim] = rb.getIndexAttr(1);
  at[wDim] = from;
  if (count)
    size[wDim] = count;
  auto [strides, offset] = type.getStridesAndOffset();
  SmallVector<int64_t> rowShape, rowStrides;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == hDim)
      continue;
    rowShape.push_back(getConstantIntValue(size[d]).value_or(ShapedType::kDynamic));
    rowStrides.push_back(strides[d]);
  }
  auto rowType =
      MemRefType::get(rowShape, type.getElementType(),
                      StridedLayoutAttr::get(rb.getContext(), ShapedType::kDynamic, rowStrides));
  return memref::SubViewOp::create(rb, loc, rowType, v, at, size, ones).getResult();
}

/// A loop over `rows` image rows, built at `b`: each trip runs `op` on
/// the window of its dynamic columns `n` from h * `pitch`, `width` wide
/// (its output filled with `initValue` first, if any), and then its
/// epilogue `after` on row h of every operand, the piece's output for
/// `read` (the view of `op`'s output that `after` reads): one kernel
/// with the epilogue folded in, out of place when nothing reads the
/// output after `after`. With `parallel`, the rows go to threads when
/// there are enough of them for the work of one (at the nominal width).
/// Null, with nothing built, unless the kernel folds the epilogue.
scf::ForOp rowLoop(OpBuilder &b, linalg::GenericOp op, unsigned n, linalg::GenericOp after,
                   Value read, Value rows, Value pitch, Value width,
                   std::optional<float> initValue, bool parallel) {
  Location loc = op.getLoc();
  auto loop = scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0), rows,
                                 arith::ConstantIndexOp::create(b, loc, 1));
  OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
  Value h = loop.getInductionVar();
  SmallVector<Window> windows(op.getNumLoops());
  windows[n] = {arith::MulIOp::create(nb, loc, h, pitch), kToEnd, width};
  linalg::GenericOp opPiece = piece(nb, op, windows);
  Value pieceOut = opPiece.getDpsInitOperand(0)->get();
  if (initValue) {
    OpBuilder fb(opPiece);
    linalg::FillOp::create(
        fb, loc, arith::ConstantOp::create(fb, loc, fb.getF32FloatAttr(*initValue)).getResult(),
        pieceOut);
  }
  // The epilogue on row h: its operands' rows, the conv's output the
  // very view the piece writes.
  SmallVector<Value> ins, outs;
  for (OpOperand &operand : after->getOpOperands()) {
    Value v = operand.get();
    Value row = v == read ? pieceOut : rowOf(nb, loc, v, h, nb.getIndexAttr(0), OpFoldResult());
    (after.isDpsInit(&operand) ? outs : ins).push_back(row);
  }
  int64_t rank = cast<MemRefType>(outs.front().getType()).getRank();
  auto afterPiece = linalg::GenericOp::create(
      nb, loc, TypeRange{}, ins, outs,
      SmallVector<AffineMap>(ins.size() + outs.size(), nb.getMultiDimIdentityMap(rank)),
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel));
  IRMapping mapping;
  after.getRegion().cloneInto(&afterPiece.getRegion(), mapping);
  if (kiln::contraction::deadAfter(after, op.getDpsInitOperand(0)->get()))
    opPiece->setAttr(kiln::contraction::kOutputReadOnce, UnitAttr::get(op.getContext()));
  kiln::contraction::prepareEpilogue(opPiece);
  std::optional<kiln::contraction::Contraction> c = kiln::contraction::match(opPiece);
  if (!c || !c->dynamicN || c->epilogue != afterPiece) {
    loop.erase();
    return {};
  }
  if (parallel)
    kiln::vec::markParallelFrom(
        loop, staticWork(op.getStaticLoopRanges()) * kiln::contraction::kNominalExtent, 2);
  return loop;
}


/// An scf.if on `width` >= `minWidth` where `loop` was, `loop` moved into
/// its then-branch; the else-branch, empty, is for narrower images.
scf::IfOp whenWide(scf::ForOp loop, Value width, int64_t minWidth) {
  OpBuilder ib(loop);
  Location loc = loop.getLoc();
  Value wide = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::uge, width,
                                     arith::ConstantIndexOp::create(ib, loc, minWidth));
  auto branch = scf::IfOp::create(ib, loc, wide, /*withElseRegion=*/true);
  loop->moveBefore(branch.thenBlock()->getTerminator());
  return branch;
}

} // namespace

/// Declared in StripDynamicDims.h.
std::pair<Operation *, std::optional<float>> kiln::strip::constantInitOf(linalg::GenericOp op) {
  Value output = op.getDpsInitOperand(0)->get();
  Operation *init = kiln::contraction::initCandidate(op);
  std::optional<float> value = kiln::contraction::constantInit(init, output);
  if (!value && (init = earlierFill(op, output)))
    value = kiln::contraction::constantInit(init, output);
  if (!value)
    return {nullptr, std::nullopt};
  return {init, value};
}

/// Declared in StripDynamicDims.h.
bool kiln::strip::byImageRows(linalg::GenericOp op, DynamicDims dims, bool parallel,
                              llvm::DenseSet<Operation *> &flatOnly,
                              llvm::DenseSet<Operation *> &done,
                              SmallVectorImpl<linalg::GenericOp> &ops) {
  if (flatOnly.contains(op))
    return false;
  std::optional<unsigned> n = wholeColumns(op, dims);
  if (!n || dims.size() != 1)
    return false;
  SmallVector<linalg::GenericOp> fills = hoistBorderFills(op);
  memref::ExpandShapeOp expand;
  linalg::GenericOp after;
  if (fills.empty() || !(after = windowEpilogue(op, dims, expand)))
    return false;
  // The padded buffer, the window, and the fill value.
  int64_t rank = expand.getResultType().getRank(), hDim = rank - 2, wDim = rank - 1;
  Value written = after.getDpsInitOperand(0)->get();
  auto window = written.getDefiningOp<memref::SubViewOp>();
  if (!window)
    return false;
  Value padded = window.getSource();
  auto paddedType = cast<MemRefType>(padded.getType());
  std::optional<Value> value =
      kiln::vec::constantFill(fills.front(), fills.front().getDpsInitOperand(0)->get());
  if (!paddedType.getLayout().isIdentity() || paddedType.getRank() != rank ||
      !window.hasUnitStride() ||
      llvm::any_of(window.getStaticOffsets(), ShapedType::isDynamic) || !value ||
      llvm::any_of(fills, [&](linalg::GenericOp f) {
        Value init = f.getDpsInitOperand(0)->get();
        return kiln::rootBuffer(init) != kiln::rootBuffer(padded) ||
               kiln::vec::constantFill(f, init) != value;
      }))
    return false;
  Location loc = op.getLoc();
  OpBuilder b(after);
  SmallVector<OpFoldResult> shape = kiln::vec::bufferSizes(b, loc, padded);
  ArrayRef<int64_t> offsets = window.getStaticOffsets();
  SmallVector<OpFoldResult> sizes = window.getMixedSizes();
  // Padding along H and W only; how much after the window (the pad's
  // high), where it can be told.
  for (int64_t d = 0; d < hDim; ++d)
    if (offsets[d] != 0 || kiln::vec::constantDifference(shape[d], sizes[d]) != 0)
      return false;
  std::optional<int64_t> hHigh = kiln::vec::constantDifference(shape[hDim], sizes[hDim]);
  std::optional<int64_t> wHigh = kiln::vec::constantDifference(shape[wDim], sizes[wDim]);
  if (!hHigh || !wHigh)
    return false;
  *hHigh -= offsets[hDim];
  *wHigh -= offsets[wDim];
  // A constant init is filled row by row, right before each piece.
  auto [init, initValue] = constantInitOf(op);
  Value rows = memref::DimOp::create(b, loc, expand.getResult(), hDim);
  Value width = memref::DimOp::create(b, loc, expand.getResult(), wDim);
  scf::ForOp loop = rowLoop(b, op, *n, after, expand.getResult(), rows, width, width, initValue,
                            parallel);
  if (!loop)
    return false;
  // The padded buffer's borders: the rows above and below the window
  // before the loop, each row's left and right columns in its trip (the
  // thread that writes a row's lines writes all of them).
  scf::IfOp branch = whenWide(loop, width, kMinImageRow);
  OpBuilder tb(loop);
  SmallVector<OpFoldResult> ones(rank, tb.getIndexAttr(1));
  auto slab = [&](OpFoldResult from, int64_t count) {
    if (count <= 0)
      return;
    SmallVector<OpFoldResult> at(rank, tb.getIndexAttr(0)), size(shape);
    at[hDim] = from;
    size[hDim] = tb.getIndexAttr(count);
    fillAll(tb, loc, memref::SubViewOp::create(tb, loc, padded, at, size, ones), *value, ops);
  };
  slab(tb.getIndexAttr(0), offsets[hDim]);
  slab(arith::AddIOp::create(tb, loc, rows,
                             arith::ConstantIndexOp::create(tb, loc, offsets[hDim]))
           .getResult(),
       *hHigh);
  OpBuilder rb = OpBuilder::atBlockBegin(loop.getBody());
  Value paddedRow = arith::AddIOp::create(rb, loc, loop.getInductionVar(),
                                          arith::ConstantIndexOp::create(rb, loc, offsets[hDim]));
  if (offsets[wDim] > 0)
    fillAll(rb, loc,
            rowOf(rb, loc, padded, paddedRow, rb.getIndexAttr(0), rb.getIndexAttr(offsets[wDim])),
            *value, ops);
  if (*wHigh > 0) {
    Value right = arith::AddIOp::create(
        rb, loc, width, arith::ConstantIndexOp::create(rb, loc, offsets[wDim]));
    fillAll(rb, loc, rowOf(rb, loc, padded, paddedRow, right, rb.getIndexAttr(*wHigh)), *value,
            ops);
  }
  // Narrow maps: the whole buffer filled, the conv flat.
  OpBuilder eb = OpBuilder::atBlockTerminator(branch.elseBlock());
  inChunks(eb, loc, padded, parallel, [&](OpBuilder &cb, Value chunk) {
    fillAll(cb, loc, chunk, *value, ops);
  });
  if (init)
    eb.clone(*init);
  auto opFlat = cast<linalg::GenericOp>(eb.clone(*op));
  flatOnly.insert(opFlat);
  ops.push_back(opFlat);
  if (llvm::all_of(after.getDpsInputs(), [&](Value v) { return v == expand.getResult(); })) {
    // An activation: in place on the flat output, which the kernel folds
    // in, then a copy into the window (in blocks of channels, on
    // threads). Written into the window by a pass of its own, an
    // efficientnet_b0 SiLU over 7x7 cost more than the copy.
    Value output = op.getDpsInitOperand(0)->get();
    unsigned outRank = cast<MemRefType>(output.getType()).getRank();
    SmallVector<Value> flatIns(after.getNumDpsInputs(), output);
    auto inPlace = linalg::GenericOp::create(
        eb, loc, TypeRange{}, flatIns, ValueRange{output},
        SmallVector<AffineMap>(flatIns.size() + 1, eb.getMultiDimIdentityMap(outRank)),
        SmallVector<utils::IteratorType>(outRank, utils::IteratorType::parallel));
    IRMapping flatMapping;
    after.getRegion().cloneInto(&inPlace.getRegion(), flatMapping);
    AffineMap id = eb.getMultiDimIdentityMap(rank);
    auto copy = linalg::GenericOp::create(
        eb, loc, TypeRange{}, ValueRange{expand.getResult()}, ValueRange{written},
        ArrayRef<AffineMap>{id, id},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &cb, Location l, ValueRange args) {
          linalg::YieldOp::create(cb, l, args[0]);
        });
    ops.push_back(inPlace);
    ops.push_back(copy);
  } else {
    ops.push_back(cast<linalg::GenericOp>(eb.clone(*after)));
  }
  for (linalg::GenericOp f : fills) {
    done.insert(f);
    f.erase();
  }
  done.insert(after);
  after.erase();
  op.erase();
  eraseInit(init);
  return true;
}

/// Declared in StripDynamicDims.h.
bool kiln::strip::gridByRows(linalg::GenericOp op, DynamicDims dims, bool parallel,
                             llvm::DenseSet<Operation *> &flatOnly,
                             llvm::DenseSet<Operation *> &done,
                             SmallVectorImpl<linalg::GenericOp> &ops) {
  if (flatOnly.contains(op) || dims.size() != 1 ||
      !kiln::contraction::isF32MultiplyAccumulate(op))
    return false;
  memref::SubViewOp read;
  linalg::GenericOp after = gridEpilogue(op, dims, read);
  if (!after)
    return false;
  Location loc = op.getLoc();
  OpBuilder b(after);
  // The rows of the window the epilogue reads, their width, and the
  // grid's pitch (the padded width).
  auto expand = read.getSource().getDefiningOp<memref::ExpandShapeOp>();
  int64_t eRank = expand.getResultType().getRank();
  SmallVector<OpFoldResult> sizes = read.getMixedSizes();
  Value rows = getValueOrCreateConstantIndexOp(b, loc, sizes[eRank - 2]);
  Value width = getValueOrCreateConstantIndexOp(b, loc, sizes[eRank - 1]);
  Value pitch = memref::DimOp::create(b, loc, expand.getResult(), eRank - 1);
  auto [init, initValue] = constantInitOf(op);
  scf::ForOp loop = rowLoop(b, op, dims.front().first, after, read.getResult(), rows, pitch,
                            width, initValue, parallel);
  if (!loop)
    return false;
  scf::IfOp branch = whenWide(loop, width, kMinGridRow);
  // Narrow maps: the grid whole, then the epilogue over its window.
  OpBuilder eb = OpBuilder::atBlockTerminator(branch.elseBlock());
  if (init)
    eb.clone(*init);
  auto opFlat = cast<linalg::GenericOp>(eb.clone(*op));
  flatOnly.insert(opFlat);
  ops.push_back(opFlat);
  ops.push_back(cast<linalg::GenericOp>(eb.clone(*after)));
  done.insert(after);
  after.erase();
  op.erase();
  eraseInit(init);
  return true;
}
