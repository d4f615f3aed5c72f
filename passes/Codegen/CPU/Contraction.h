//===- Contraction.h - Which generics the CPU kernels take --------*- C++ -*-===//
//
// The analysis half of kiln-vectorize-contractions: an f32 multiply-
// accumulate generic on buffers read as a register-blocked kernel (roles
// N, M, row and column operands, loop classes), plus what around it can
// fold into the kernel (the output's init before it, an elementwise
// epilogue after it). The kernel builder is in VectorizeContractions.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CODEGEN_CPU_CONTRACTION_H
#define KILN_PASSES_CODEGEN_CPU_CONTRACTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace kiln::contraction {

/// Which output dim the kernel's vectors run along.
enum class Variant {
  /// The output's innermost dim (a matmul's columns, a conv's output
  /// width), along which the row operand is contiguous or regularly
  /// strided in memory.
  Rows,
  /// Another output dim that only a constant operand has (a conv's output
  /// channels): that operand, the row, is packed at compile time; the
  /// output is read and written with strided gathers and scatters, once
  /// per tile. For convs whose output rows are short or strided.
  Channels,
};

/// What a dynamic reduction extent counts as where the kernel's choices
/// need a number (tiles, threads, the variant).
inline constexpr int64_t kNominalExtent = 64;

/// How one generic maps onto the kernel.
struct Contraction {
  mlir::linalg::GenericOp op;
  Variant variant = Variant::Rows;
  mlir::Value row, col, out;
  mlir::AffineMap rowMap, colMap, outMap;
  unsigned dimN = 0;
  unsigned outPosN = 0; ///< The output index that is N (the last one for Rows).
  std::optional<unsigned> dimM;
  /// M is an output dim of the row operand, not of the column operand: a
  /// depthwise conv has no dim the weights alone have, so its tile rows
  /// are output rows, each reading its own row vectors against one
  /// broadcast weight (Rows only).
  bool mInRow = false;
  int64_t strideN = 1;               ///< Coefficient of N in the row's last index (Rows).
  llvm::SmallVector<unsigned> outer; ///< Parallel dims the column operand has.
  llvm::SmallVector<unsigned> inner; ///< Other parallel dims (row and output only).
  llvm::SmallVector<unsigned> reductions;
  llvm::SmallVector<int64_t> ranges;
  /// The one reduction dim whose extent is known only at run time (the
  /// keys of a strip-mined attention's probabilities times values): its
  /// range holds kNominalExtent for the heuristics, and the kernel's loop
  /// over it reads the size (no packed panels, no prefetches) as dim
  /// `pos` of input `input`, which indexes it directly.
  struct DynamicReduction {
    unsigned dim, input, pos;
  };
  std::optional<DynamicReduction> dynamicReduction;
  /// N's extent is known only at run time (the keys of attention's
  /// queries times keys, Rows only, the row operand contiguous along N):
  /// its range holds kNominalExtent for the heuristics; the kernel reads
  /// the output's size, runs whole tiles of N and then one tile of the
  /// vectors left, the last under a mask made at run time. Epilogues and
  /// copied inits fold in, their operands along N contiguous (any size).
  bool dynamicN = false;
  /// A parallel dim other than N whose extent is known only at run time
  /// (the rows left after kiln-strip-dynamic-dims' windows, fewer than a
  /// window; Rows only), which the column operand alone has: its range
  /// holds kNominalExtent; the kernel reads the output's size. It is M
  /// unless another such dim is static with 2 or more (a window of
  /// time steps in a batch's rows left): then a loop outside the tiles.
  /// As M, the kernel runs whole tiles of MR rows, then the rows left as
  /// one tile of their own (an scf.index_switch over 1 .. MR - 1). No
  /// loop over it goes to threads.
  std::optional<unsigned> dynamicRows;
  /// What writes the output just before the generic, folded into the
  /// kernel (and erased): a constant fill (the accumulators start from the
  /// constant) or a copy/broadcast generic (a conv's bias: they start from
  /// its input).
  mlir::Operation *init = nullptr;
  std::optional<float> fillValue;
  mlir::linalg::GenericOp initCopy;
  /// An elementwise generic reading the output just after (bias, batch
  /// norm, activation, residual add): applied to the accumulators before
  /// they are stored (and erased); out of place it names the buffer the
  /// kernel stores to.
  mlir::linalg::GenericOp epilogue;
};

/// `op` is a multiply-accumulate generic whose operands are all f32
/// memrefs: what the kernels take, once its shape fits.
bool isF32MultiplyAccumulate(mlir::linalg::GenericOp op);

/// The kernel reading of `op` as `variant`, if it is an f32 multiply-
/// accumulate generic on buffers that fits (static ranges, but for one
/// reduction dim that an input indexes directly and, for Rows, N and M;
/// for Rows a row operand contiguous or regularly strided along the output's
/// innermost dim, for Channels a constant row operand that can be packed,
/// ...).
std::optional<Contraction> match(mlir::linalg::GenericOp op, Variant variant = Variant::Rows);

/// The f32 data of the constant global `v` views (through reshapes of
/// identity layout), if it is one.
std::optional<llvm::ArrayRef<float>> constantData(mlir::Value v);

/// The raw bytes of the constant global `v` views (through reshapes of
/// identity layout), if it is one with `elementType` elements.
std::optional<llvm::ArrayRef<char>> constantBytes(mlir::Value v, mlir::Type elementType);

/// The row operand's indices depend on N and the reduction dims only, so
/// that one packed panel per tile of N serves every other loop.
bool rowPanelIndependent(const Contraction &c);

/// `expr` has no mod or division: a pure affine one is then linear.
bool noDivision(mlir::AffineExpr expr);

/// The coefficient of `dim` in `expr` (over `numDims` dims) if `expr` is
/// linear in it.
std::optional<int64_t> coefficient(mlir::AffineExpr expr, unsigned dim, unsigned numDims);

/// The stride in elements of dim `pos` of the memref `v`, if static.
std::optional<int64_t> staticStride(mlir::Value v, unsigned pos);

/// Bytes between the f32 elements of `operand` (read through `map`) that
/// consecutive values of loop `dim` read, if static: coefficient times
/// staticStride, summed over the indices.
std::optional<int64_t> byteStride(mlir::Value operand, mlir::AffineMap map, unsigned dim);

/// `op` has no body and no memory effects: a view, a constant, index
/// arithmetic. Kernels pass over such ops around them.
bool isView(mlir::Operation *op);

/// Nothing after `op` (in its block, nested regions included) reads the
/// memory of `buffer`, a planned workspace buffer, before an op writes all
/// of it without reading it. Only for ops directly in a function's body:
/// inside a loop, a later iteration could read it.
bool deadAfter(mlir::Operation *op, mlir::Value buffer);

/// The constant `op` writes into every element of `out`, if it does: a
/// fill with a constant, or a copy of a buffer filled with one.
std::optional<float> constantInit(mlir::Operation *op, mlir::Value out);

/// Set by kiln-strip-dynamic-dims on a contraction's piece whose output
/// window nothing reads but the elementwise piece right after it, which
/// writes memory that none of the contraction's inputs share: the kernel
/// may fold that epilogue out of place, as it does when the output is
/// dead after it (deadAfter, which does not look into loops) and the
/// buffers provably apart (mayOverlap, which cannot tell two workspace
/// views apart when their sizes are dynamic).
inline constexpr llvm::StringLiteral kOutputReadOnce = "kiln.output_read_once";

/// The op before `op` that may be its init (the first one with memory
/// effects, passing over linalg ops independent of both), or null.
mlir::Operation *initCandidate(mlir::Operation *op);

/// Rearranges what follows the contraction `op` so that its epilogue, if
/// it has one, comes right after it in a shape the kernel can fold in
/// (KernelSurroundings.cpp).
void prepareEpilogue(mlir::linalg::GenericOp op);

/// `x` and `y` are linalg ops on buffers (their bodies touch no memory)
/// that share none: either may run first.
bool independent(mlir::Operation *x, mlir::Operation *y);

} // namespace kiln::contraction

#endif // KILN_PASSES_CODEGEN_CPU_CONTRACTION_H
