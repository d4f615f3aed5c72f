//===- LowerCopies.cpp - kiln-lower-copies pass ----------------------------===//
//
// Strided memref.copy would need MLIR's runtime library; make it a
// linalg.copy instead, which becomes plain loops.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

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
      OpBuilder b(op);
      linalg::CopyOp::create(b, op.getLoc(), op.getSource(), op.getTarget());
      op.erase();
    }
  }
};
} // namespace
