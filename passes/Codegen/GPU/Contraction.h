//===- Contraction.h - tiled GPU kernels for contractions -------*- C++ -*-===//
//
// Used by kiln-gpu-map-loops (MapLoops.cpp). One thread per output with the
// whole reduction in it reads each input element once per output that uses
// it, all from global memory (through L1); a GEMM of 64 x 64 tiles staged
// through shared memory reads it once per tile and does 16 multiply-adds
// per pair of shared-memory loads.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CODEGEN_GPU_CONTRACTION_H
#define KILN_PASSES_CODEGEN_GPU_CONTRACTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// How lowerTiledContraction builds its kernels.
struct TiledContractionOptions {
  /// Fold the op writing C's initial values and an elementwise op on C.
  bool fuse = true;
  /// Every contraction's multiply-adds on the tensor cores.
  bool tf32 = false;
  /// Stage the operands with cp.async into two pairs of tiles.
  bool asyncCopies = true;
};

/// Replaces `op` (on buffers, in a block the host runs) with a gpu.launch
/// of tiled GEMM kernels when it is a contraction: f32 operands, a body
/// `out + a * b`, C indexed by every parallel dim and by no reduction dim,
/// A and B by every reduction dim, at least one dim indexing A but not B
/// and one B but not A (Contraction.cpp says how). Sizes may be dynamic
/// (the grid and the bounds then computed on the host; the reduction not
/// split). With `fuse` (and no split reduction), the op that writes C's
/// initial values just before (a linalg.fill, a copy or broadcast generic)
/// and an elementwise generic on C just after are folded into the
/// kernel's store and added to `folded`. With `tf32`, or when `op` is
/// marked `kiln.exact_in_tf32` (its operands are TF32 values:
/// kiln-gpu-mark-exact-tf32), the multiply-adds run on the tensor cores
/// (mma.sync m16n8k8, inputs rounded to TF32, f32 sums; sm_80 and up).
/// With `asyncCopies`, operands whose innermost dim is contiguous are
/// staged by cp.async (sm_80 and up) into two buffers taking turns;
/// otherwise through registers into one.
/// The caller erases `op` and the folded ops. False, with nothing changed,
/// for any other op.
bool lowerTiledContraction(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                           const TiledContractionOptions &options,
                           llvm::SmallVectorImpl<mlir::Operation *> &folded);

/// `map`'s results applied to `ivs`: a dim as that iv, any other result an
/// affine.apply (shared with MapLoops.cpp's loop nests).
llvm::SmallVector<mlir::Value> applyIndexingMap(mlir::OpBuilder &b, mlir::Location loc,
                                                mlir::AffineMap map, mlir::ValueRange ivs);

/// The product of `sizes` where `b` builds: an attribute when all are
/// constants, else the product of the dynamic ones (times the constants'),
/// created at `b`'s insertion point.
mlir::OpFoldResult sizeProduct(mlir::OpBuilder &b, mlir::Location loc,
                               llvm::ArrayRef<mlir::OpFoldResult> sizes);

/// `flat` as indices into `sizes`, the last fastest (shared with
/// Reduction.cpp); a size given as a value is a dynamic one.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::Value flat, llvm::ArrayRef<int64_t> sizes);
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::Value flat,
                                           llvm::ArrayRef<mlir::OpFoldResult> sizes);

} // namespace kiln

#endif // KILN_PASSES_CODEGEN_GPU_CONTRACTION_H
