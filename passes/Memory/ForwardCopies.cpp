//===- ForwardCopies.cpp - kiln-forward-copies pass ------------------------===//
//
// After bufferization: a buffer that one linalg op writes and that is then
// only copied into a window of another buffer is dropped, and the op
// writes into the window instead. One-shot bufferization leaves such
// copies where one op writes several slices of one tensor (a Winograd
// conv's 16 transformed inputs, each a slice of the batched contraction's
// operand): it proves only the first insert in place.
//
// The window is then written at the op, earlier than the copy wrote it,
// so nothing between the op and the copy may touch the window: other ops
// may use the target buffer only through windows disjoint from it (both
// static), and the op's own inputs likewise. The window's view ops move
// before the op.
//
//===----------------------------------------------------------------------===//

#include "passes/Memory/Passes.h"
#include "passes/Utils/Buffers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace kiln {
#define GEN_PASS_DEF_FORWARDCOPIESPASS
#include "passes/Memory/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The elements [first, last] of its root buffer that the static view `v`
/// spans, if its layout is static.
std::optional<std::pair<int64_t, int64_t>> extent(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || !type.hasStaticShape() || failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  int64_t last = offset;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides)) {
    if (size == 0)
      return std::make_pair(offset, offset - 1);
    last += (size - 1) * stride;
  }
  return std::make_pair(offset, last);
}

/// `a` and `b` are static subviews of one view whose index sets along
/// some dim do not meet: ranges apart, or interleaved with one stride at
/// offsets that differ by a non-multiple of it (a Winograd conv's output
/// parities, each writing every m-th element of the output's rows and
/// columns).
bool interleaved(Value a, Value b) {
  auto x = a.getDefiningOp<memref::SubViewOp>(), y = b.getDefiningOp<memref::SubViewOp>();
  if (!x || !y || x.getSource() != y.getSource())
    return false;
  ArrayRef<int64_t> xo = x.getStaticOffsets(), yo = y.getStaticOffsets();
  ArrayRef<int64_t> xs = x.getStaticSizes(), ys = y.getStaticSizes();
  ArrayRef<int64_t> xt = x.getStaticStrides(), yt = y.getStaticStrides();
  for (size_t d = 0; d < xo.size(); ++d) {
    if (llvm::any_of(ArrayRef<int64_t>{xo[d], yo[d], xs[d], ys[d], xt[d], yt[d]},
                     ShapedType::isDynamic))
      continue;
    if (xs[d] == 0 || ys[d] == 0 || xo[d] + (xs[d] - 1) * xt[d] < yo[d] ||
        yo[d] + (ys[d] - 1) * yt[d] < xo[d])
      return true;
    if (xt[d] == yt[d] && xt[d] > 1 && (xo[d] - yo[d]) % xt[d] != 0)
      return true;
  }
  return false;
}

/// The views `a` and `b` of one buffer share no element: their static
/// extents do not overlap, or they are interleaved windows of one view.
bool disjoint(Value a, Value b) {
  std::optional<std::pair<int64_t, int64_t>> x = extent(a), y = extent(b);
  if (x && y && (x->second < y->first || y->second < x->first))
    return true;
  return interleaved(a, b);
}

/// `op` (and what it nests) uses the memory of `window` only through
/// views of static extent disjoint from it.
bool avoids(Operation *op, Value window) {
  Value root = kiln::rootBuffer(window);
  return !op->walk([&](Operation *inner) {
              // A view op of the root is not an access.
              if (isa<ViewLikeOpInterface>(inner) && inner->getNumResults() == 1)
                return WalkResult::advance();
              for (Value v : inner->getOperands())
                if (isa<MemRefType>(v.getType()) && kiln::rootBuffer(v) == root &&
                    !disjoint(v, window))
                  return WalkResult::interrupt();
              return WalkResult::advance();
            })
              .wasInterrupted();
}

/// Moves the pure view ops that define `v` before `point` where they are
/// after it (`v` dominates an op in `point`'s block that follows it).
/// False if one is not a view or a constant.
bool hoistViews(Value v, Operation *point) {
  Operation *def = v.getDefiningOp();
  // An argument, or defined in an enclosing block: it dominates point.
  if (!def || def->getBlock() != point->getBlock() || def->isBeforeInBlock(point))
    return true;
  if (!isa<ViewLikeOpInterface>(def) && !def->hasTrait<OpTrait::ConstantLike>())
    return false;
  for (Value operand : def->getOperands())
    if (!hoistViews(operand, point))
      return false;
  def->moveBefore(point);
  return true;
}

void forward(memref::CopyOp copy) {
  auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != copy->getBlock() || !alloc.getType().hasStaticShape())
    return;
  // Its users: one linalg op that writes it, and the copy.
  linalg::LinalgOp writer;
  for (Operation *user : alloc->getUsers()) {
    if (user == copy)
      continue;
    auto op = dyn_cast<linalg::LinalgOp>(user);
    if (writer || !op || !op.hasPureBufferSemantics() || op->getBlock() != copy->getBlock())
      return;
    writer = op;
  }
  if (!writer || !writer->isBeforeInBlock(copy))
    return;
  Value window = copy.getTarget();
  OpOperand *init = nullptr;
  for (OpOperand &operand : writer->getOpOperands()) {
    if (operand.get() != alloc.getResult())
      continue;
    // Written, and not read: its initial contents are undefined anyway.
    if (!writer.isDpsInit(&operand) || writer.payloadUsesValueFromOperand(&operand) || init)
      return;
    init = &operand;
  }
  auto windowType = dyn_cast<MemRefType>(window.getType());
  if (!init || !windowType || windowType.getShape() != alloc.getType().getShape() ||
      windowType.getElementType() != alloc.getType().getElementType())
    return;
  // The writer's other operands and everything up to the copy keep off
  // the window.
  for (OpOperand &operand : writer->getOpOperands())
    if (&operand != init && isa<MemRefType>(operand.get().getType()) &&
        kiln::rootBuffer(operand.get()) == kiln::rootBuffer(window) &&
        !disjoint(operand.get(), window))
      return;
  for (Operation *op = writer->getNextNode(); op != copy; op = op->getNextNode())
    if (!avoids(op, window))
      return;
  if (!hoistViews(window, writer))
    return;
  init->set(window);
  copy.erase();
  alloc.erase();
}

struct ForwardCopiesPass : public kiln::impl::ForwardCopiesPassBase<ForwardCopiesPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      SmallVector<memref::CopyOp> copies;
      func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
      for (memref::CopyOp copy : copies)
        forward(copy);
    });
  }
};

} // namespace
