//===- Buffers.h - Which buffer a memref views ----------------------*- C++ -*-===//
//
// The memory passes and the CPU code generation both ask which buffer a
// memref value is a view of, and whether an op touches that buffer. Header
// only, like ElementsData.h.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_UTILS_BUFFERS_H
#define KILN_PASSES_UTILS_BUFFERS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {

/// The buffer `v` views: through view-like ops (reshapes, subviews,
/// casts, ...) up to an alloc, a memref.view of the workspace (one per
/// planned buffer), an argument or a global. Two values with different
/// roots do not share memory, unless both are views of the workspace.
inline mlir::Value rootBuffer(mlir::Value v) {
  while (mlir::Operation *def = v.getDefiningOp()) {
    // Each planned buffer is its own view of the workspace.
    if (mlir::isa<mlir::memref::ViewOp>(def))
      break;
    auto view = mlir::dyn_cast<mlir::ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

/// `a` and `b` view two different planned buffers (memref.views of one
/// workspace). They share no memory when both are live at once, which
/// the caller must know (kiln-plan-memory reuses the memory of dead
/// buffers): their byte ranges may not tell it, as over dynamic dims.
inline bool distinctPlannedBuffers(mlir::Value a, mlir::Value b) {
  auto va = rootBuffer(a).getDefiningOp<mlir::memref::ViewOp>();
  auto vb = rootBuffer(b).getDefiningOp<mlir::memref::ViewOp>();
  return va && vb && va != vb && va.getSource() == vb.getSource();
}

/// How far (in top-level ops) kiln-plan-memory looks back from an
/// epilogue's output buffer for the contraction it follows, to start that
/// buffer's life there (views and fills sit between them); the CPU code
/// generation relies on the same reach.
inline constexpr int64_t kEpilogueReach = 16;

/// Set by kiln-plan-memory on the view of a buffer whose life it started
/// at the contraction before the epilogue that writes it (see
/// kEpilogueReach): that buffer shares no memory with what the
/// contraction reads, so the epilogue may write it before the contraction
/// has read all of its inputs.
inline constexpr llvm::StringLiteral kLiveFromContraction = "kiln.live_from_contraction";

/// Whether `op` or an op nested in it has a memref operand whose root
/// buffer is `root`.
inline bool touches(mlir::Operation *op, mlir::Value root) {
  return op
      ->walk([&](mlir::Operation *inner) {
        for (mlir::Value v : inner->getOperands())
          if (mlir::isa<mlir::MemRefType>(v.getType()) && rootBuffer(v) == root)
            return mlir::WalkResult::interrupt();
        return mlir::WalkResult::advance();
      })
      .wasInterrupted();
}

} // namespace kiln

#endif // KILN_PASSES_UTILS_BUFFERS_H
