//===- LowerCopies.cpp - kiln-lower-copies pass ----------------------------===//
//
// Strided memref.copy would need MLIR's runtime library; make it an
// identity linalg.generic instead, which becomes plain (vectorisable)
// loops. A pad (the whole buffer filled with a constant, then the source
// copied, or its producer writing, into a window of it) fills only the
// border around the window: slabs of the outer dims, and the column
// borders as one run per row (a row's right border and the next row's
// left border are adjacent). A copy of what the elementwise op just before
// it wrote becomes another output of that op (a recurrent layer's new
// state copied over the old one, every step).
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/CPU/VectorHelpers.h"
#include "passes/Utils/Buffers.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#define DEBUG_TYPE "kiln-lower-copies"

namespace kiln {
#define GEN_PASS_DEF_LOWERCOPIESPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
bool contiguous(Type type) {
  auto m = dyn_cast<MemRefType>(type);
  return m && m.getLayout().isIdentity();
}

/// A unit-stride window at static offsets (a pad's low padding); its
/// sizes may be dynamic.
bool padWindow(memref::SubViewOp window) {
  return window.hasUnitStride() &&
         llvm::none_of(window.getStaticOffsets(), ShapedType::isDynamic);
}

/// Whether `op` writes every element of `window` without reading it or
/// anything else in the memory of `root` (a copy into it, or an
/// all-parallel linalg op whose only output it is and whose body ignores
/// the old value).
bool overwrites(Operation *op, Value window, Value root) {
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return copy.getTarget() == window &&
           kiln::vec::rootBuffer(copy.getSource()) != root;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getDpsInitOperand(0)->get() != window ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops() ||
      !linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0)).isPermutation() ||
      linalgOp.payloadUsesValueFromOperand(linalgOp.getDpsInitOperand(0)))
    return false;
  return llvm::none_of(linalgOp.getDpsInputs(), [&](Value in) {
    return kiln::vec::rootBuffer(in) == root;
  });
}

/// Index arithmetic on static-or-dynamic sizes, folded where both sides
/// are constants.
struct SizeMath {
  OpBuilder &b;
  Location loc;
  Value value(OpFoldResult v) {
    if (auto c = getConstantIntValue(v))
      return arith::ConstantIndexOp::create(b, loc, *c);
    return cast<Value>(v);
  }
  OpFoldResult add(OpFoldResult x, OpFoldResult y) {
    auto cx = getConstantIntValue(x), cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(*cx + *cy);
    if ((cx && *cx == 0) || (cy && *cy == 0))
      return cx ? y : x;
    return arith::AddIOp::create(b, loc, value(x), value(y)).getResult();
  }
  OpFoldResult sub(OpFoldResult x, OpFoldResult y) {
    if (std::optional<int64_t> d = kiln::vec::constantDifference(x, y))
      return b.getIndexAttr(*d);
    if (auto cy = getConstantIntValue(y); cy && *cy == 0)
      return x;
    return arith::SubIOp::create(b, loc, value(x), value(y)).getResult();
  }
  OpFoldResult mul(OpFoldResult x, OpFoldResult y) {
    auto cx = getConstantIntValue(x), cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(*cx * *cy);
    if ((cx && *cx == 1) || (cy && *cy == 1))
      return cx ? y : x;
    return arith::MulIOp::create(b, loc, value(x), value(y)).getResult();
  }
};

/// fill(buffer), then the first access to the buffer writes all of a
/// window of it (a pad's copy of its source, or the producer that writes
/// the source in place): fill only the slabs of buffer outside the window
/// (two per padded dim, corners twice; generics that yield the constant).
/// Only unit-stride windows at static offsets of identity-layout buffers;
/// with `dynamicSizes`, sizes may be dynamic (a pad over an image of any
/// size; a slab whose thickness is not known is filled whatever it turns
/// out to be). Not on the GPU (`all`), where each piece is a kernel
/// launch and a whole dynamic buffer is one.
void fillBorderOnly(Operation *fill, bool dynamicSizes) {
  auto linalgOp = cast<linalg::LinalgOp>(fill);
  if (linalgOp.getNumDpsInits() != 1)
    return;
  Value buffer = linalgOp.getDpsInitOperand(0)->get();
  std::optional<Value> value = kiln::vec::constantFill(fill, buffer);
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!value || !type || type.getRank() == 0 || !type.getLayout().isIdentity())
    return;
  // The first op after the fill that touches the buffer's memory (through
  // any view of it, or of the workspace buffer it is a view of).
  Value root = kiln::vec::rootBuffer(buffer);
  memref::SubViewOp window;
  for (Operation *op = fill->getNextNode(); op; op = op->getNextNode()) {
    if (isa<ViewLikeOpInterface>(op) || kiln::contraction::isView(op) ||
        !kiln::vec::touches(op, root))
      continue;
    for (Value v : op->getOperands()) {
      auto sub = v.getDefiningOp<memref::SubViewOp>();
      if (sub && sub.getSource() == buffer && padWindow(sub) && overwrites(op, v, root))
        window = sub;
    }
    break;
  }
  if (!window || (!dynamicSizes && (!type.hasStaticShape() ||
                                     llvm::any_of(window.getStaticSizes(), ShapedType::isDynamic))))
    return;
  OpBuilder b(fill);
  Location loc = fill->getLoc();
  SizeMath math{b, loc};
  SmallVector<OpFoldResult> shape = kiln::vec::bufferSizes(b, loc, buffer);
  SmallVector<OpFoldResult> offsets = window.getMixedOffsets(), sizes = window.getMixedSizes();
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> ones(rank, b.getIndexAttr(1));
  auto isZero = [](OpFoldResult v) { return isConstantIntValue(v, 0); };
  // A generic rather than linalg.fill: kiln-vectorize-elementwise then
  // writes it with (masked) vector stores, one per row, and threads,
  // instead of a serial strided loop.
  auto fillView = [&](Value part) {
    int64_t partRank = cast<MemRefType>(part.getType()).getRank();
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{}, ValueRange{part},
        ArrayRef<AffineMap>{b.getMultiDimIdentityMap(partRank)},
        SmallVector<utils::IteratorType>(partRank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location loc, ValueRange) {
          linalg::YieldOp::create(nb, loc, *value);
        });
  };
  auto slab = [&](int64_t dim, OpFoldResult from, OpFoldResult count) {
    if (isZero(count) || getConstantIntValue(count).value_or(1) < 0)
      return;
    SmallVector<OpFoldResult> off(rank, b.getIndexAttr(0)), size(shape);
    off[dim] = from;
    size[dim] = count;
    fillView(memref::SubViewOp::create(b, loc, buffer, off, size, ones));
  };
  // Where the window ends in each dim, and the padding after it.
  SmallVector<OpFoldResult> ends, highs;
  for (int64_t d = 0; d < rank; ++d) {
    ends.push_back(math.add(offsets[d], sizes[d]));
    highs.push_back(math.sub(math.sub(shape[d], sizes[d]), offsets[d]));
  }
  // The column borders (the last dim's): the right border of one row and
  // the left border of the next are adjacent in memory, so they are one
  // run per row of the flat buffer, written by one short vector store,
  // instead of two single elements per row (which LLVM turns into
  // scatters across rows).
  int64_t last = rank - 1;
  OpFoldResult width = shape[last], left = offsets[last], right = highs[last];
  OpFoldResult rows = b.getIndexAttr(1);
  for (int64_t d = 0; d < last; ++d)
    rows = math.mul(rows, shape[d]);
  bool runs = rank >= 2 && !isZero(width) && (!isZero(left) || !isZero(right)) &&
              getConstantIntValue(rows).value_or(2) >= 2;
  for (int64_t d = 0; d < (runs ? last : rank); ++d) {
    slab(d, b.getIndexAttr(0), offsets[d]);
    slab(d, ends[d], highs[d]);
  }
  if (runs) {
    ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    Value flat = memref::CollapseShapeOp::create(b, loc, buffer,
                                                 ArrayRef<ReassociationIndices>{all});
    // A generic writing `value` into `count` runs of `length` elements,
    // `stride` apart, from element `start` of the flat buffer.
    auto fillRuns = [&](OpFoldResult start, OpFoldResult count, OpFoldResult length,
                        OpFoldResult stride) {
      if (isZero(count) || isZero(length))
        return;
      auto staticOr = [](OpFoldResult v) {
        return getConstantIntValue(v).value_or(ShapedType::kDynamic);
      };
      auto runType = MemRefType::get(
          {staticOr(count), staticOr(length)}, type.getElementType(),
          StridedLayoutAttr::get(b.getContext(), staticOr(start), {staticOr(stride), 1}));
      fillView(memref::ReinterpretCastOp::create(
          b, loc, runType, flat, start, ArrayRef<OpFoldResult>{count, length},
          ArrayRef<OpFoldResult>{stride, b.getIndexAttr(1)}));
    };
    // One run at each end (`edge`), none when there are no rows (a
    // dynamic outer dim, a batch, of 0 at run time: those runs would be
    // written outside the buffer).
    OpFoldResult one = b.getIndexAttr(1);
    OpFoldResult edge = getConstantIntValue(rows)
                            ? one
                            : OpFoldResult(arith::MinUIOp::create(b, loc, math.value(rows),
                                                                  math.value(one))
                                               .getResult());
    OpFoldResult rightStart = math.sub(width, right);
    OpFoldResult lastRow = math.mul(math.sub(rows, edge), width);
    fillRuns(b.getIndexAttr(0), edge, left, width);                        // Row 0's left.
    fillRuns(rightStart, math.sub(rows, edge), math.add(right, left), width); // Right + next left.
    fillRuns(math.add(lastRow, rightStart), edge, right, width);          // Last row's right.
  }
  fill->erase();
}

/// `a` and `b` are different planned buffers (views of the workspace)
/// that `op`, nested in a loop or branch, uses: kiln-plan-memory keeps
/// every buffer used inside a top-level op live across all of it, so such
/// buffers never share memory, even where their offsets are dynamic.
bool plannedApart(Value a, Value b, Operation *op) {
  return !isa<FunctionOpInterface>(op->getParentOp()) && kiln::distinctPlannedBuffers(a, b);
}

/// Nothing but `a` and `b` uses the memory of `buffer`, a planned buffer
/// (through any view of it).
bool onlyUsedBy(Value buffer, Operation *a, Operation *b) {
  auto root = kiln::vec::rootBuffer(buffer).getDefiningOp<memref::ViewOp>();
  if (!root)
    return false;
  SmallVector<Value> views = {root};
  while (!views.empty()) {
    Value v = views.pop_back_val();
    for (Operation *user : v.getUsers()) {
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && view.getViewSource() == v)
        llvm::append_range(views, user->getResults());
      else if (user != a && user != b)
        return false;
    }
  }
  return true;
}

/// `copy` (linalg.copy or memref.copy, `source` into `target`) right
/// after an all-parallel generic that writes all of `source` (one of its
/// outputs, through a permutation): the generic writes `target` too, and
/// the copy goes. Only views may sit between them, and the generic may
/// touch `target`'s memory only by reading `target` itself at the place it
/// writes (the elementwise update of an LSTM's cell state in place). A
/// recurrent layer's step copied its new hidden and cell states over the
/// old ones on one thread (two serial copies a step, the other core's
/// lines: about 8 us of the LSTM's 46 us step at batch 32, two threads).
/// Where nothing else uses `source` (the new cell state's own buffer) and
/// the generic does not read it, the generic writes `target` instead.
bool foldIntoProducer(Operation *copy, Value source, Value target, DominanceInfo &dominance) {
  Operation *prev = copy->getPrevNode();
  while (prev && kiln::contraction::isView(prev))
    prev = prev->getPrevNode();
  auto producer = dyn_cast_or_null<linalg::GenericOp>(prev);
  if (!producer || !producer.hasPureBufferSemantics() ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      cast<MemRefType>(source.getType()).getShape() !=
          cast<MemRefType>(target.getType()).getShape() ||
      !dominance.properlyDominates(target, producer))
    return false;
  OpOperand *written = nullptr;
  for (OpOperand &init : producer.getDpsInitsMutable())
    if (init.get() == source) {
      written = &init;
      break;
    }
  if (!written)
    return false;
  AffineMap map = producer.getMatchingIndexingMap(written);
  if (!map.isPermutation())
    return false;
  for (OpOperand &operand : producer->getOpOperands()) {
    if (!kiln::vec::mayOverlap(operand.get(), target) ||
        plannedApart(operand.get(), target, producer))
      continue;
    bool readInPlace = operand.get() == target && producer.isDpsInput(&operand) &&
                       producer.getMatchingIndexingMap(&operand) == map;
    if (!readInPlace)
      return false;
  }
  if (!producer.payloadUsesValueFromOperand(written) && onlyUsedBy(source, producer, copy)) {
    written->set(target);
    copy->erase();
    return true;
  }
  OpBuilder b(producer);
  SmallVector<Value> inits(producer.getDpsInits());
  inits.push_back(target);
  SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
  maps.push_back(map);
  auto yield = cast<linalg::YieldOp>(producer.getRegion().front().getTerminator());
  unsigned result = written->getOperandNumber() - producer.getNumDpsInputs();
  auto folded = linalg::GenericOp::create(b, producer.getLoc(), TypeRange{},
                                          producer.getDpsInputs(), inits, maps,
                                          producer.getIteratorTypesArray());
  folded->setDiscardableAttrs(producer->getDiscardableAttrDictionary());
  Region &region = folded.getRegion();
  region.takeBody(producer.getRegion());
  Block &body = region.front();
  body.addArgument(cast<MemRefType>(target.getType()).getElementType(), copy->getLoc());
  SmallVector<Value> values(yield.getValues());
  values.push_back(values[result]);
  yield->setOperands(values);
  producer.erase();
  copy->erase();
  return true;
}

struct LowerCopiesPass
    : public kiln::impl::LowerCopiesPassBase<LowerCopiesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<std::tuple<Operation *, Value, Value>> folds;
    getOperation().walk([&](Operation *op) {
      if (auto copy = dyn_cast<memref::CopyOp>(op))
        folds.push_back({op, copy.getSource(), copy.getTarget()});
      else if (auto copy = dyn_cast<linalg::CopyOp>(op); copy && copy.hasPureBufferSemantics())
        folds.push_back({op, copy.getInputs()[0], copy.getOutputs()[0]});
    });
    DominanceInfo dominance(getOperation());
    for (auto [copy, source, target] : folds)
      foldIntoProducer(copy, source, target, dominance);
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) {
      if (all || !contiguous(op.getSource().getType()) ||
          !contiguous(op.getTarget().getType()))
        copies.push_back(op);
    });
    SmallVector<Operation *> fills;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::FillOp, linalg::MapOp, linalg::GenericOp>(op))
        fills.push_back(op);
    });
    for (Operation *op : fills)
      fillBorderOnly(op, /*dynamicSizes=*/!all);
    for (memref::CopyOp op : copies) {
      OpBuilder b(op);
      auto type = cast<MemRefType>(op.getTarget().getType());
      AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
      linalg::GenericOp::create(
          b, op.getLoc(), op.getSource(), op.getTarget(),
          ArrayRef<AffineMap>{identity, identity},
          SmallVector<utils::IteratorType>(type.getRank(), utils::IteratorType::parallel),
          [](OpBuilder &nb, Location loc, ValueRange args) {
            linalg::YieldOp::create(nb, loc, args[0]);
          });
      op.erase();
    }
  }
};
} // namespace
