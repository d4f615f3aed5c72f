//===- Reduction.h - GPU reductions across a block's threads ----*- C++ -*-===//
//
// Used by kiln-gpu-map-loops (MapLoops.cpp). One thread per output runs an
// output's whole reduction alone: a LayerNorm's mean over 256 values is 256
// dependent steps in one thread, with a few hundred threads in all at batch
// 1. Here the threads of a group share each output's reduction and combine
// their partial results in shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CODEGEN_GPU_REDUCTION_H
#define KILN_PASSES_CODEGEN_GPU_REDUCTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// Replaces `op` (on buffers, in a block the host runs, its parallel dims
/// first) with a gpu.launch in which a group of threads computes each
/// output, when it is a reduction that gains from it: static sizes, at
/// least 32 reduction steps per output, every output indexed by parallel
/// dims only and updated by one associative, commutative arith op whose
/// identity is known (a sum, product, max, min, and, or) of its running
/// value and a value that does not depend on it; and either few outputs
/// (at most 4096) or inputs read contiguously along the innermost
/// reduction dim (then neighbouring threads read neighbouring elements).
/// Each thread combines every group-size-th step of the reduction into a
/// partial value starting at the identity; the group combines those in
/// shared memory (a tree of log2(group) steps, the last five by warp
/// shuffles for 32-bit values), and its first thread combines the
/// output's initial value with the total and stores it.
/// The order of the combinations differs from the sequential loop's, as
/// for any parallel reduction (a float sum rounds differently). With
/// `fuse`, a linalg.fill of an output just before `op` whose every element
/// `op` writes folds in (its value is where lane 0 starts) and is added to
/// `folded`. The caller erases `op` and `folded`. False, with nothing
/// changed, for any other op.
bool lowerBlockReduction(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op, bool fuse,
                         llvm::SmallVectorImpl<mlir::Operation *> &folded);

} // namespace kiln

#endif // KILN_PASSES_CODEGEN_GPU_REDUCTION_H
