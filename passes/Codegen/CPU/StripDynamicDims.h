//===- StripDynamicDims.h - kiln-strip-dynamic-dims internals ----*- C++ -*-===//
//
// Private to kiln-strip-dynamic-dims: what the pass (StripDynamicDims.cpp),
// its rules for which dims to strip and how (StripRules.cpp), its
// epilogue handling (StripEpilogues.cpp) and its flattened 1x1 convs run
// image row by image row (StripImageRows.cpp) share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CODEGEN_CPU_STRIPDYNAMICDIMS_H
#define KILN_PASSES_CODEGEN_CPU_STRIPDYNAMICDIMS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

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

//===----------------------------------------------------------------------===//
// Which generics and dims are stripped, and how (StripRules.cpp)
//===----------------------------------------------------------------------===//

/// Whether the body of `op` reads its position (linalg.index) along a
/// loop dim for which `dim` holds: within a window or block it would read
/// its position there.
bool readsPosition(mlir::linalg::GenericOp op, llvm::function_ref<bool(unsigned)> dim);

/// An operand dim indexed as d * stride + (static loop dims) + c, the
/// input of a conv or pool window along output dim d: a window of w rows
/// of d reads (w - 1) * stride + `extent` elements from at * stride.
struct StridedUse {
  unsigned dim;
  int64_t stride, extent;
};

/// `e` as such a use, if it is one: one dynamic loop dim with a positive
/// coefficient, the others static with coefficients >= 0, a constant >= 0.
std::optional<StridedUse> stridedUse(mlir::AffineExpr e, llvm::ArrayRef<int64_t> ranges);

/// The one dynamic reduction dim of an f32 multiply-accumulate `op`
/// among `dims`, which an input indexes directly and none through a
/// window: the contraction kernels loop over it whole.
std::optional<unsigned> wholeReduction(mlir::linalg::GenericOp op, DynamicDims dims);

/// The dynamic columns of an f32 multiply-accumulate `op` among `dims`
/// (the keys of attention's queries times keys, a stride-1 conv's
/// row-stacked grid): the output's innermost dim, parallel, which one
/// input alone has, in its innermost index only (alone, or plus
/// reduction dims: the conv's `n + kw`), both with a unit innermost
/// stride. The contraction kernels run along it whole, masking what is
/// left after their whole tiles.
std::optional<unsigned> wholeColumns(mlir::linalg::GenericOp op, DynamicDims dims);

/// Whether the contraction kernels can take dynamic dim `d` of the f32
/// multiply-accumulate `op` as their rows (Contraction::dynamicRows: M,
/// or a loop around the tiles): a parallel output dim other than the
/// innermost, which one input alone has, as one index of its own, and
/// that input not the output's innermost dim.
bool restAsRows(mlir::linalg::GenericOp op, unsigned d);

/// Whether the elementwise generic `op` transposes into its dynamic dim
/// `d` (attention's keys written as [heads, 64, length]): `d` is every
/// output's innermost dim, and an input that reads along `d` has another
/// dim as its innermost index. Its windows of 8 and 4 along `d` take
/// the vector kernels' block transposes; one column at a time went
/// element by element (24 us of the encoder's 437 at 12 tokens).
bool transposesInto(mlir::linalg::GenericOp op, unsigned d);

/// The dynamic loop dims of `op` in loop order, each with where its size
/// is read; empty if there are none or the generic cannot be strip-mined.
llvm::SmallVector<std::pair<unsigned, SizeSource>> dynamicDims(mlir::linalg::GenericOp op);

/// Whether `op` only copies rows of its one input (every loop parallel,
/// both maps permutations with the same innermost dim, the body yielding
/// the input's element as it is). A transpose of the innermost dim is not
/// one: it keeps its pieces, which the vector kernels transpose in blocks.
bool plainCopy(mlir::linalg::GenericOp op);

/// The product of the static loop ranges: the work of one element (row)
/// of the dynamic dims.
int64_t staticWork(llvm::ArrayRef<int64_t> ranges);

/// For a contraction's generic: a static parallel loop dim that its
/// weights (an input indexed by no dynamic dim) and every output are
/// indexed by and no other input is (a conv's output channels, a
/// matmul's columns), with a block size that divides it: the largest of
/// at least 64 whose weights stay within `budget` bytes (of those that
/// make an even number of blocks, if any), else the smallest of at
/// least 64; none when the weights fit whole or no such block divides
/// the dim.
std::optional<std::pair<unsigned, int64_t>>
channelBlocks(mlir::linalg::GenericOp op, llvm::ArrayRef<int64_t> ranges, int64_t budget);

/// A static parallel loop dim of at least 2 that every output is
/// indexed by, not as its innermost dim, and that every operand uses, if
/// at all, as one of its dims as it is (the channels of an activation or
/// a depthwise conv; with reductions, every operand), whose position
/// the body does not read, with a block size that divides it into at
/// most 16 blocks: the outermost such dim in loop order. None when the
/// static dims' product is below 64.
std::optional<std::pair<unsigned, int64_t>> parallelBlocks(mlir::linalg::GenericOp op,
                                                           llvm::ArrayRef<int64_t> ranges);

//===----------------------------------------------------------------------===//
// Pieces and whole-buffer fills (StripDynamicDims.cpp), epilogues
// (StripEpilogues.cpp)
//===----------------------------------------------------------------------===//

/// A window's width that runs from its offset to the end of the dim.
inline constexpr int64_t kToEnd = -1;

/// A window along one loop dim: `width` wide from `at` (a width of 0: the
/// whole dim; kToEnd: to its end, `size` wide; an operand that reads the
/// dim through a strided use, a conv's input, reads (size - 1) * stride +
/// extent elements from at * stride). Every view of a kToEnd window
/// shares `size`, read once where its loop starts, so that an epilogue's
/// piece reads the very view its contraction's piece writes.
struct Window {
  mlir::Value at;
  int64_t width = 0;
  mlir::Value size;
};

/// A copy of `op` on the windows of its operands along its loop dims
/// (`windows`, one per loop dim).
mlir::linalg::GenericOp piece(mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                              llvm::ArrayRef<Window> windows);

/// A loop over chunks of 16384 elements of `buffer` (identity layout)
/// flattened, marked to run on threads from two chunks on when
/// `parallel`; `fillChunk` writes one chunk (a 1-D view).
void inChunks(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer, bool parallel,
              llvm::function_ref<void(mlir::OpBuilder &, mlir::Value)> fillChunk);

/// A constant fill of `output`, a planned buffer, earlier in `op`'s
/// block with nothing between that touches its memory (views and sizes
/// aside; the plan gives it to no other buffer from the fill on): one
/// that initCandidate does not see past other work (a recurrent layer's
/// backward direction shares its zero buffer with the forward one's
/// init, and the whole forward direction runs between).
mlir::Operation *earlierFill(mlir::linalg::GenericOp op, mlir::Value output);

/// A constant init of the contraction `op`'s output (right before it,
/// or earlier: earlierFill) and its value; a null op when there is none.
std::pair<mlir::Operation *, std::optional<float>> constantInitOf(mlir::linalg::GenericOp op);

/// Erases `init` (if any), a constant init of a contraction's output
/// now filled piece by piece, and the fill it copied from when nothing
/// else reads that (the LSTM's input projections over a dynamic length
/// and batch still filled 3.2 MB with zeros on one thread).
void eraseInit(mlir::Operation *init);

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

/// The elementwise generic right after the contraction `op` (a flattened
/// 1x1 conv's [C, H * W] output, its columns whole) that reads the output
/// as [C, H, W] through `expand` and writes a window of a larger buffer
/// (a padded input), to run image row by image row with it; null when
/// there is none or it may not.
mlir::linalg::GenericOp windowEpilogue(mlir::linalg::GenericOp op, DynamicDims dims,
                                       mlir::memref::ExpandShapeOp &expand);

/// The elementwise generic right after the contraction `op` (a stride-1
/// conv over the row-stacked grid: [C, H * Wp] for the padded width Wp)
/// that reads its output through `read`, the window [C, H, W] of the grid
/// that is the conv's output, and writes a buffer of its own, to run
/// image row by image row with it; null when there is none or it may not.
mlir::linalg::GenericOp gridEpilogue(mlir::linalg::GenericOp op, DynamicDims dims,
                                     mlir::memref::SubViewOp &read);

/// A piece of `op` and then one of its epilogue `after` on the same
/// window of `op`'s output; returns `op`'s piece.
mlir::linalg::GenericOp pieceWithEpilogue(mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                                          mlir::linalg::GenericOp after,
                                          llvm::ArrayRef<Window> windows);

//===----------------------------------------------------------------------===//
// Flattened 1x1 convs into a pad's window (StripImageRows.cpp)
//===----------------------------------------------------------------------===//

/// Runs the flattened 1x1 conv `op` (its columns H * W whole, its only
/// dynamic dim) and its windowEpilogue image row by image row when the
/// image is at least 16 columns wide at run time, each trip writing that
/// row of the padded buffer with its borders; narrower images run flat
/// as before (the copies kept flat go into `flatOnly`; every new generic
/// into `ops`; the border fills and epilogue erased into `done`). With
/// `parallel`, the rows go to threads when there are enough. Returns
/// false when `op` is not such a conv or the kernel would not fold its
/// epilogue: nothing is rewritten then, though border fills found right
/// after `op` may have been moved before it (hoistBorderFills).
bool byImageRows(mlir::linalg::GenericOp op, DynamicDims dims, bool parallel,
                 llvm::DenseSet<mlir::Operation *> &flatOnly,
                 llvm::DenseSet<mlir::Operation *> &done,
                 llvm::SmallVectorImpl<mlir::linalg::GenericOp> &ops);

/// Runs the stride-1 conv `op` over the row-stacked grid ([C, H * Wp],
/// its only dynamic dim the grid's columns) and its gridEpilogue image
/// row by image row when the image is at least 16 columns wide at run
/// time: each trip the conv over the row's W columns with the epilogue
/// folded in, writing that row of the epilogue's output (the grid's
/// other columns are never computed). Narrower images run on the grid as
/// before (the copy of `op` kept so goes into `flatOnly`; the new
/// generics into `ops`; the epilogue erased into `done`). With
/// `parallel`, the rows go to threads when there are enough. Returns
/// false, changing nothing, when `op` is not such a conv or the kernel
/// would not fold its epilogue.
bool gridByRows(mlir::linalg::GenericOp op, DynamicDims dims, bool parallel,
                llvm::DenseSet<mlir::Operation *> &flatOnly,
                llvm::DenseSet<mlir::Operation *> &done,
                llvm::SmallVectorImpl<mlir::linalg::GenericOp> &ops);

} // namespace kiln::strip

#endif // KILN_PASSES_CODEGEN_CPU_STRIPDYNAMICDIMS_H
