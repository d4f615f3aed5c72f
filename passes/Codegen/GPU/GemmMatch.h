//===- GemmMatch.h - contractions as tiled GEMMs, the matching --*- C++ -*-===//
//
// What the GPU's tiled contraction kernels (Contraction.cpp) take: a linalg
// op seen as a batched GEMM, how its reduction is split across blocks, and
// the ops around it that its store folds in. Private to passes/Codegen/GPU.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CODEGEN_GPU_GEMMMATCH_H
#define KILN_PASSES_CODEGEN_GPU_GEMMMATCH_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace kiln::tiled {

constexpr int64_t kTile = 64;     // output rows and columns a block computes
constexpr int64_t kStep = 16;     // reduction steps staged at a time
constexpr int64_t kSide = 16;     // threads along each side of a tile
constexpr int64_t kPerThread = 4; // outputs along each side a thread computes
constexpr int64_t kThreads = kSide * kSide;
// Elements of each operand a thread stages per step.
constexpr int64_t kStaged = kTile * kStep / kThreads;
// Blocks that keep every multiprocessor of a large GPU busy (132 on an
// H100/H200, 108 on an A100, two blocks each): fewer tiles than this split
// the reduction.
constexpr int64_t kBusyBlocks = 256;

int64_t ceilDiv(int64_t a, int64_t b);

/// The op's operands and dims in GEMM terms.
struct Gemm {
  mlir::OpOperand *a = nullptr, *b = nullptr, *c = nullptr;
  llvm::SmallVector<int64_t> sizes; // ShapedType::kDynamic for a dynamic dim
  llvm::SmallVector<unsigned> batch, m, n, k;
  // Products of each role's sizes; kDynamic when one of them is dynamic.
  int64_t batches = 1, rows = 1, cols = 1, depth = 1;
  bool dynamic = false; // some loop dim has a dynamic size
  // Whether the innermost dim of A's (B's) indexing is an M (N) dim: then
  // consecutive threads stage consecutive rows (columns), else consecutive
  // reduction steps.
  bool aRowsFastest = false, bColsFastest = false;
};

/// `op` as a GEMM when it is a contraction (Contraction.h says which).
std::optional<Gemm> asGemm(mlir::linalg::LinalgOp op);

/// How many blocks share each tile's reduction (grid z), and the staged
/// steps each does: split when the tiles alone leave the GPU idle, keeping
/// at least four staged steps per block. Not with dynamic sizes (one
/// block a tile; the steps are then counted at run time).
std::pair<int64_t, int64_t> splitReduction(const Gemm &g);

/// What the kernel folds in around the contraction when it stores each
/// output once (no split reduction).
struct Surroundings {
  /// Writes C's initial values just before: erased, the kernel starts
  /// from `fill` or from `initCopy`'s input instead of loading C.
  mlir::Operation *init = nullptr;
  mlir::Value fill;
  mlir::linalg::GenericOp initCopy;
  /// Elementwise on C just after: erased, the kernel stores its result.
  mlir::linalg::GenericOp epilogue;
};

/// The init and epilogue `op` can fold in (none with a split reduction).
Surroundings findSurroundings(mlir::linalg::LinalgOp op, const Gemm &g, int64_t splits);

} // namespace kiln::tiled

#endif // KILN_PASSES_CODEGEN_GPU_GEMMMATCH_H
