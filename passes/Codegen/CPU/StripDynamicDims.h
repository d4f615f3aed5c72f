//===- StripDynamicDims.h - kiln-strip-dynamic-dims internals ----*- C++ -*-===//
//
// Private to kiln-strip-dynamic-dims: what the pass (StripDynamicDims.cpp)
// and its epilogue handling (StripEpilogues.cpp) share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CODEGEN_CPU_STRIPDYNAMICDIMS_H
#define KILN_PASSES_CODEGEN_CPU_STRIPDYNAMICDIMS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include "llvm/ADT/DenseSet.h"

namespace kiln::strip {

/// Where a dynamic loop dim's size can be read: operand `operand`'s dim
/// `pos`.
struct SizeSource {
  unsigned operand;
  unsigned pos;
};

/// A generic's dynamic loop dims, each with where its size is read.
using DynamicDims = llvm::ArrayRef<std::pair<unsigned, SizeSource>>;

/// Whether the body of `op` reads its position (linalg.index) along a
/// loop dim for which `dim` holds: within a window or block it would read
/// its position there.
bool readsPosition(mlir::linalg::GenericOp op, llvm::function_ref<bool(unsigned)> dim);

/// A window's width that runs from its offset to the end of the dim.
inline constexpr int64_t kToEnd = -1;

/// A copy of `op` on the windows of its operands at `at` (`width` wide)
/// along the stripped loop dims (a width of 0: the whole dim; kToEnd: to
/// its end, for dims that operands index directly only).
mlir::linalg::GenericOp piece(mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                              llvm::ArrayRef<mlir::Value> at, llvm::ArrayRef<int64_t> width);

/// The elementwise generic right after the contraction `op` that reads
/// its output where it writes, to run window by window with it; null when
/// there is none or it may not (StripEpilogues.cpp).
mlir::linalg::GenericOp plainEpilogue(mlir::linalg::GenericOp op, DynamicDims dims);

/// The elementwise generic right after the contraction `op` that reads
/// its output through an expansion, rebuilt on the output's shape (the
/// one replaced goes into `erased`); null when there is none or it may
/// not run window by window with `op`.
mlir::linalg::GenericOp flatEpilogue(mlir::linalg::GenericOp op, DynamicDims dims,
                                     llvm::DenseSet<mlir::Operation *> &erased);

/// A piece of `op` and then one of its epilogue `after` on the same
/// window of `op`'s output; returns `op`'s piece.
mlir::linalg::GenericOp pieceWithEpilogue(mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                                          mlir::linalg::GenericOp after,
                                          llvm::ArrayRef<mlir::Value> at,
                                          llvm::ArrayRef<int64_t> width);

} // namespace kiln::strip

#endif // KILN_PASSES_CODEGEN_CPU_STRIPDYNAMICDIMS_H
