//===- LowerCopies.cpp - kiln-lower-copies pass ----------------------------===//
//
// Strided memref.copy would need MLIR's runtime library; make it an
// identity linalg.generic instead, which becomes plain (vectorisable)
// loops. A pad (the whole buffer filled with a constant, then the source
// copied into a window of it) fills only the border around the window.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

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

/// fill(buffer); copy(src, subview(buffer)) -> fills of the slabs of
/// buffer outside the window (two per padded dim, corners twice; generics
/// that yield the constant), then the copy. Only static, unit-stride
/// windows.
void fillBorderOnly(memref::CopyOp copy) {
  auto window = copy.getTarget().getDefiningOp<memref::SubViewOp>();
  if (!window || !window->hasOneUse())
    return;
  Value buffer = window.getSource();
  Operation *before = window->getPrevNode();
  if (before && before == copy.getSource().getDefiningOp())
    before = before->getPrevNode();
  Operation *fill = before;
  std::optional<Value> value = kiln::vec::constantFill(before, buffer);
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!value || !type || !type.hasStaticShape() ||
      !window.hasUnitStride() || !llvm::all_of(window.getStaticOffsets(), [](int64_t o) {
        return !ShapedType::isDynamic(o);
      }) || !llvm::all_of(window.getStaticSizes(), [](int64_t s) {
        return !ShapedType::isDynamic(s);
      }))
    return;
  // Nothing else may use the buffer between the fill and the copy.
  for (Operation *op = fill->getNextNode(); op != copy; op = op->getNextNode())
    if (op != window && op != copy.getSource().getDefiningOp())
      return;
  OpBuilder b(fill);
  Location loc = fill->getLoc();
  ArrayRef<int64_t> shape = type.getShape();
  ArrayRef<int64_t> offsets = window.getStaticOffsets(), sizes = window.getStaticSizes();
  int64_t rank = type.getRank();
  SmallVector<int64_t> ones(rank, 1);
  auto slab = [&](int64_t dim, int64_t from, int64_t count) {
    if (count <= 0)
      return;
    SmallVector<int64_t> off(rank, 0), size(shape);
    off[dim] = from;
    size[dim] = count;
    Value part = memref::SubViewOp::create(b, loc, buffer, off, size, ones);
    // A generic rather than linalg.fill: kiln-vectorize-elementwise then
    // writes it with (masked) vector stores, one per row of a column
    // border, and threads, instead of a serial strided loop.
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{}, ValueRange{part},
        ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location loc, ValueRange) {
          linalg::YieldOp::create(nb, loc, *value);
        });
  };
  for (int64_t d = 0; d < rank; ++d) {
    slab(d, 0, offsets[d]);
    slab(d, offsets[d] + sizes[d], shape[d] - offsets[d] - sizes[d]);
  }
  fill->erase();
}

struct LowerCopiesPass
    : public kiln::impl::LowerCopiesPassBase<LowerCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) {
      if (!contiguous(op.getSource().getType()) ||
          !contiguous(op.getTarget().getType()))
        copies.push_back(op);
    });
    for (memref::CopyOp op : copies) {
      fillBorderOnly(op);
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
