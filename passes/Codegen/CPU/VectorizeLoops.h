//===- VectorizeLoops.h - Loops shared by the elementwise vectorisers -*- C++ -*-===//
//
// Private to kiln-vectorize-elementwise (VectorizeElementwise.cpp and
// VectorizeWindows.cpp): the scalar loops around a vectorised generic and
// the vector steps along its vector dim (VectorizeLoops.cpp), and the
// window vectoriser (VectorizeWindows.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CODEGEN_CPU_VECTORIZELOOPS_H
#define KILN_PASSES_CODEGEN_CPU_VECTORIZELOOPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>
#include <optional>

namespace kiln::vec {

/// Nested scf.for over `dims` of `op` (whole ranges, step 1) around
/// `body`. The first loop with two trips or more ends the search for the
/// parallel loop (`pending`): it is marked kiln.parallel if its dim is
/// parallel and every output has it (chunks then write disjoint elements)
/// and no reduction loop encloses it.
void outerLoops(mlir::OpBuilder &b, mlir::linalg::GenericOp op, llvm::ArrayRef<int64_t> ranges,
                llvm::ArrayRef<unsigned> dims, llvm::SmallVector<mlir::Value> &ivs, bool &pending,
                const std::function<void(mlir::OpBuilder &, llvm::SmallVector<mlir::Value> &)> &body);

/// Vector steps over [0, n) at `b`, `iv` set to each step's start: one loop
/// over the full vectors (straight-line code for one), then one step of the
/// n % lanes lanes left. `step` gets the lanes in bounds. Returns the loop,
/// if there is one.
mlir::scf::ForOp vectorSteps(mlir::OpBuilder &b, mlir::Location loc, int64_t n, int64_t lanes,
                             mlir::Value &iv,
                             const std::function<void(mlir::OpBuilder &, int64_t)> &step);

/// Vector steps over [0, n) for an `n` known only at run time: a loop
/// over the full vectors, then, when lanes are left, one step of kMasked
/// lanes from `iv`, `mask` set to the lanes left for that step. Returns
/// the loop.
mlir::scf::ForOp vectorSteps(mlir::OpBuilder &b, mlir::Location loc, mlir::Value n,
                             int64_t lanes, mlir::Value &iv, mlir::Value &mask,
                             const std::function<void(mlir::OpBuilder &, int64_t)> &step);

/// How operands of a generic move along its dim `p`, the output's last
/// index: per operand 0 (not at all), or the coefficient of `p` in its
/// last index, the only index that has it. None if some operand moves
/// along `p` otherwise, or the output does not have `p` last.
std::optional<llvm::SmallVector<int64_t>> stridesAlong(mlir::linalg::GenericOp op, unsigned p);

/// Replaces the loops of `op`, a generic whose output's last index is
/// its parallel dim `p` (pooling windows, a strided im2col copy), by
/// vectors along `p` with the reduction loops inside each vector step
/// (`strides` from stridesAlong). `parallel`: the first outer loop of two
/// trips or more may be marked kiln.parallel. `init`: the constant every
/// output element holds before, if known (the tiles start from it
/// instead of loading the output). Does not erase `op`.
void vectorizeWindow(mlir::linalg::GenericOp op, unsigned p, llvm::ArrayRef<int64_t> strides,
                     int64_t lanes, bool parallel, mlir::Value init);

} // namespace kiln::vec

#endif // KILN_PASSES_CODEGEN_CPU_VECTORIZELOOPS_H
