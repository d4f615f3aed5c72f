//===- ViewRowStacks.cpp - kiln-view-row-stacks pass -----------------------===//
//
// After bufferization: a buffer S [D..., R, L] whose R rows are copies of
// windows of one contiguous buffer F [D..., M], row r the window of length
// L at r * P (the same P for every row), becomes a view of F itself whose
// rows overlap: strides [F's..., P, 1]. The lowering of a stride-1 conv
// over dynamic dims makes such a stack (its KH rows are the padded input
// flat, each starting one padded row further: kh * Wp), and copying it
// cost three passes over the input per 3x3 conv (mobilenet_v2 over a
// dynamic height and width: one of its 11 ms).
//
// The view reads F where the copies read it, later: nothing from the first
// copy to the last read of S may write F, and nothing but the copies may
// write S. The ops that read S through views (reshapes, subviews) are
// recreated on the view, their types recomputed for its layout.
//
//===----------------------------------------------------------------------===//

#include "passes/Memory/Passes.h"
#include "passes/Utils/Buffers.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace kiln {
#define GEN_PASS_DEF_VIEWROWSTACKSPASS
#include "passes/Memory/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// One row copy into the stack: its row, the offset it reads F at, and
/// the ops to erase (the copy and the two subviews).
struct RowCopy {
  int64_t row;
  OpFoldResult offset;
  memref::CopyOp copy;
};

/// Whether `offset` is `row` times `pitch` (row 0: zero; row 1: the pitch
/// itself; a constant pitch times the row, or a product of the pitch and
/// the row as a constant).
bool isRowOffset(OpFoldResult offset, int64_t row, OpFoldResult pitch) {
  std::optional<int64_t> value = getConstantIntValue(offset);
  if (row == 0)
    return value == 0;
  if (row == 1)
    return isEqualConstantIntOrValue(offset, pitch);
  if (std::optional<int64_t> p = getConstantIntValue(pitch))
    return value == row * *p;
  auto v = dyn_cast<Value>(offset);
  auto mul = v ? v.getDefiningOp<arith::MulIOp>() : arith::MulIOp();
  if (!mul)
    return false;
  Value p = cast<Value>(pitch);
  return (mul.getLhs() == p && getConstantIntValue(mul.getRhs()) == row) ||
         (mul.getRhs() == p && getConstantIntValue(mul.getLhs()) == row);
}

/// The copy `copy` into row r of `stack` [D..., R, L] from the window of
/// length L at some offset of the last dim of a buffer [D..., M]: both
/// subviews whole along D (unit strides, the row dim dropped or kept).
std::optional<RowCopy> rowCopy(memref::CopyOp copy, Value stack, Value &source) {
  auto dst = copy.getTarget().getDefiningOp<memref::SubViewOp>();
  auto src = copy.getSource().getDefiningOp<memref::SubViewOp>();
  if (!dst || !src || dst.getSource() != stack || !dst.hasUnitStride() || !src.hasUnitStride())
    return std::nullopt;
  auto stackType = cast<MemRefType>(stack.getType());
  auto srcType = cast<MemRefType>(src.getSource().getType());
  int64_t rank = stackType.getRank();
  if (srcType.getRank() != rank - 1 || !srcType.getLayout().isIdentity() ||
      srcType.getElementType() != stackType.getElementType())
    return std::nullopt;
  SmallVector<OpFoldResult> dstOffsets = dst.getMixedOffsets(), dstSizes = dst.getMixedSizes();
  SmallVector<OpFoldResult> srcOffsets = src.getMixedOffsets(), srcSizes = src.getMixedSizes();
  std::optional<int64_t> row = getConstantIntValue(dstOffsets[rank - 2]);
  if (!row || !isConstantIntValue(dstSizes[rank - 2], 1) ||
      !isConstantIntValue(dstOffsets[rank - 1], 0) ||
      !isEqualConstantIntOrValue(dstSizes[rank - 1], srcSizes[rank - 2]))
    return std::nullopt;
  // Whole along D in both, and the row as long as the stack's.
  for (int64_t d = 0; d + 2 < rank; ++d) {
    int64_t full = stackType.getDimSize(d);
    if (ShapedType::isDynamic(full) || srcType.getDimSize(d) != full ||
        !isConstantIntValue(dstOffsets[d], 0) || !isConstantIntValue(srcOffsets[d], 0) ||
        !isConstantIntValue(dstSizes[d], full) || !isConstantIntValue(srcSizes[d], full))
      return std::nullopt;
  }
  if (stackType.isDynamicDim(rank - 1)) {
    auto alloc = stack.getDefiningOp<memref::AllocOp>();
    Value length = alloc.getDynamicSizes()[stackType.getDynamicDimIndex(rank - 1)];
    if (!isEqualConstantIntOrValue(dstSizes[rank - 1], length))
      return std::nullopt;
  } else if (!isConstantIntValue(dstSizes[rank - 1], stackType.getDimSize(rank - 1))) {
    return std::nullopt;
  }
  if (source && source != src.getSource())
    return std::nullopt;
  source = src.getSource();
  return RowCopy{*row, srcOffsets[rank - 2], copy};
}

/// Whether `op` may write memory rooted at `root` (a block argument root
/// may alias any other argument).
bool mayWrite(Operation *op, Value root) {
  auto aliases = [&](Value v) {
    Value r = kiln::rootBuffer(v);
    return r == root || (isa<BlockArgument>(r) && isa<BlockArgument>(root));
  };
  if (isa<ViewLikeOpInterface, memref::DimOp>(op))
    return false;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return !linalgOp.hasPureBufferSemantics() ||
           llvm::any_of(linalgOp.getDpsInits(), [&](Value v) { return aliases(v); });
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return aliases(copy.getTarget());
  if (isMemoryEffectFree(op))
    return false;
  // Anything else (loops, calls) that touches memory like root's.
  return op
      ->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (isa<MemRefType>(v.getType()) && aliases(v))
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// Collects into `readers` every op that uses `v` (the stack or a view of
/// it), through views, but those `skip` holds for; false if one may write
/// it or is not one this pass can retype (reshapes, subviews, dims, linalg
/// inputs, copy sources).
bool onlyRead(Value v, SmallVectorImpl<Operation *> &readers,
              llvm::function_ref<bool(Operation *)> skip = nullptr) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (skip && skip(user))
      continue;
    readers.push_back(user);
    if (isa<memref::DimOp>(user))
      continue;
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user) ||
        (isa<memref::SubViewOp>(user) &&
         cast<memref::SubViewOp>(user).getDroppedDims().none())) {
      if (!onlyRead(user->getResult(0), readers))
        return false;
      continue;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
        linalgOp && linalgOp.hasPureBufferSemantics() && linalgOp.isDpsInput(&use))
      continue;
    if (auto copy = dyn_cast<memref::CopyOp>(user); copy && copy.getSource() == v)
      continue;
    return false;
  }
  return true;
}

/// Recreates the readers of `from` on `to` (a view with another layout).
void retype(Value from, Value to) {
  for (OpOperand &use : llvm::make_early_inc_range(from.getUses())) {
    Operation *user = use.getOwner();
    OpBuilder b(user);
    Value next;
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(user)) {
      FailureOr<MemRefType> type = memref::ExpandShapeOp::computeExpandedType(
          cast<MemRefType>(to.getType()), expand.getResultType().getShape(),
          expand.getReassociationIndices());
      next = memref::ExpandShapeOp::create(b, expand.getLoc(), *type, to,
                                           expand.getReassociationIndices(),
                                           expand.getMixedOutputShape());
    } else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(user)) {
      next = memref::CollapseShapeOp::create(b, collapse.getLoc(), to,
                                             collapse.getReassociationIndices());
    } else if (auto subview = dyn_cast<memref::SubViewOp>(user)) {
      next = memref::SubViewOp::create(b, subview.getLoc(), to, subview.getMixedOffsets(),
                                       subview.getMixedSizes(), subview.getMixedStrides());
    } else {
      use.set(to);
      continue;
    }
    retype(user->getResult(0), next);
    user->erase();
  }
}

/// The checks on the reshapes that `retype` will make: each type
/// computable for the view's layout.
bool retypable(Value from, MemRefType to) {
  for (Operation *user : from.getUsers()) {
    std::optional<MemRefType> next;
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(user)) {
      FailureOr<MemRefType> type = memref::ExpandShapeOp::computeExpandedType(
          to, expand.getResultType().getShape(), expand.getReassociationIndices());
      if (failed(type))
        return false;
      next = *type;
    } else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(user)) {
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(to,
                                                            collapse.getReassociationIndices()))
        return false;
      next = memref::CollapseShapeOp::computeCollapsedType(to,
                                                           collapse.getReassociationIndices());
    } else if (auto subview = dyn_cast<memref::SubViewOp>(user)) {
      next = memref::SubViewOp::inferResultType(to, subview.getStaticOffsets(),
                                                subview.getStaticSizes(),
                                                subview.getStaticStrides());
    }
    if (next && !retypable(user->getResult(0), *next))
      return false;
  }
  return true;
}

void viewRows(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  int64_t rank = type.getRank();
  if (rank < 2 || !type.getLayout().isIdentity() || type.isDynamicDim(rank - 2) ||
      type.getDimSize(rank - 2) < 2)
    return;
  int64_t rows = type.getDimSize(rank - 2);
  Value stack = alloc.getResult();
  Value source;
  SmallVector<std::optional<RowCopy>> copies(rows);
  SmallVector<Operation *> readers;
  // The row copies: each row once, by a subview that only the copy uses.
  llvm::SmallPtrSet<Operation *, 4> rowViews;
  for (Operation *user : stack.getUsers()) {
    auto subview = dyn_cast<memref::SubViewOp>(user);
    if (!subview || !subview->hasOneUse())
      continue;
    auto copy = dyn_cast<memref::CopyOp>(*subview->getUsers().begin());
    if (!copy || copy.getTarget() != subview.getResult())
      continue;
    std::optional<RowCopy> row = rowCopy(copy, stack, source);
    if (!row || copies[row->row] || copy->getBlock() != alloc->getBlock())
      return;
    copies[row->row] = row;
    rowViews.insert(subview);
  }
  if (llvm::any_of(copies, [](const std::optional<RowCopy> &c) { return !c; }))
    return;
  // The rows start one pitch apart.
  OpFoldResult pitch = copies[1]->offset;
  for (const std::optional<RowCopy> &c : copies)
    if (!isRowOffset(c->offset, c->row, pitch))
      return;
  // Every other use reads.
  if (!onlyRead(stack, readers, [&](Operation *user) {
        return isa<memref::DeallocOp>(user) || rowViews.contains(user);
      }))
    return;
  // From the first copy to the last reader, nothing writes the source.
  Block *block = alloc->getBlock();
  Operation *first = copies[0]->copy, *lastCopy = first, *last = nullptr;
  for (const std::optional<RowCopy> &c : copies) {
    if (c->copy->isBeforeInBlock(first))
      first = c->copy;
    if (lastCopy->isBeforeInBlock(c->copy))
      lastCopy = c->copy;
  }
  for (Operation *reader : readers) {
    Operation *top = block->findAncestorOpInBlock(*reader);
    if (!top)
      return;
    if (!last || last->isBeforeInBlock(top))
      last = top;
  }
  if (!last || last->isBeforeInBlock(first))
    return;
  Value root = kiln::rootBuffer(source);
  for (Operation *op = first; op != last->getNextNode(); op = op->getNextNode())
    if (!llvm::any_of(copies, [&](const std::optional<RowCopy> &c) { return c->copy == op; }) &&
        mayWrite(op, root))
      return;
  // The view: F's strides along D, the pitch between rows. F is
  // contiguous (identity layout, offset 0).
  auto sourceType = cast<MemRefType>(source.getType());
  SmallVector<int64_t> strides(rank, 1);
  strides[rank - 2] = getConstantIntValue(pitch).value_or(ShapedType::kDynamic);
  int64_t inner = sourceType.getDimSize(rank - 2);
  for (int64_t d = rank - 3; d >= 0; --d) {
    strides[d] = inner;
    if (!ShapedType::isDynamic(inner))
      inner *= sourceType.getDimSize(d);
  }
  auto viewType = MemRefType::get(type.getShape(), type.getElementType(),
                                  StridedLayoutAttr::get(type.getContext(), 0, strides));
  if (!retypable(stack, viewType))
    return;
  // Build the view at the last copy (after everything the copies use),
  // before every reader.
  for (Operation *reader : readers)
    if (!lastCopy->isBeforeInBlock(block->findAncestorOpInBlock(*reader)))
      return;
  OpBuilder b(lastCopy);
  Location loc = alloc.getLoc();
  auto fold = [&](OpFoldResult v) {
    return isa<Value>(v) ? getAsOpFoldResult(cast<Value>(v)) : v;
  };
  SmallVector<OpFoldResult> sizes, viewStrides(rank);
  for (int64_t d = 0; d + 1 < rank; ++d)
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  OpFoldResult length =
      copies[0]->copy.getTarget().getDefiningOp<memref::SubViewOp>().getMixedSizes()[rank - 1];
  sizes.push_back(type.isDynamicDim(rank - 1)
                      ? OpFoldResult(getValueOrCreateConstantIndexOp(b, loc, length))
                      : OpFoldResult(b.getIndexAttr(type.getDimSize(rank - 1))));
  viewStrides[rank - 1] = b.getIndexAttr(1);
  viewStrides[rank - 2] = fold(pitch);
  Value product;
  for (int64_t d = rank - 3; d >= 0; --d) {
    Value size =
        getValueOrCreateConstantIndexOp(b, loc, memref::getMixedSize(b, loc, source, d + 1));
    product = product ? arith::MulIOp::create(b, loc, product, size).getResult() : size;
    viewStrides[d] = ShapedType::isDynamic(strides[d]) ? OpFoldResult(product)
                                                       : OpFoldResult(b.getIndexAttr(strides[d]));
  }
  Value view = memref::ReinterpretCastOp::create(b, loc, viewType, source, b.getIndexAttr(0),
                                                 sizes, viewStrides);
  for (std::optional<RowCopy> &c : copies) {
    Operation *dst = c->copy.getTarget().getDefiningOp();
    Operation *src = c->copy.getSource().getDefiningOp();
    c->copy.erase();
    dst->erase();
    if (src->use_empty())
      src->erase();
  }
  for (Operation *user : llvm::make_early_inc_range(stack.getUsers()))
    if (isa<memref::DeallocOp>(user))
      user->erase();
  retype(stack, view);
  alloc.erase();
}

struct ViewRowStacksPass : public kiln::impl::ViewRowStacksPassBase<ViewRowStacksPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs)
      viewRows(alloc);
  }
};

} // namespace
