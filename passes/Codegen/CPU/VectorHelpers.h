//===- VectorHelpers.h - Shared pieces of the CPU vector passes ---*- C++ -*-===//
//
// Loads and stores of 1-D vectors along a memref's innermost dim, masked
// when only the first `on` lanes are in bounds (a static tail).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CODEGEN_CPU_VECTORHELPERS_H
#define KILN_PASSES_CODEGEN_CPU_VECTORHELPERS_H

#include "passes/Utils/Buffers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::vec {

/// True for a memref whose innermost dim has unit stride, whatever its
/// sizes (the keys a contraction's dynamic columns run along).
inline bool unitInnermostStride(mlir::Value v) {
  auto type = mlir::dyn_cast<mlir::MemRefType>(v.getType());
  if (!type || type.getRank() == 0)
    return false;
  llvm::SmallVector<int64_t> strides;
  int64_t offset;
  if (mlir::failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return strides.back() == 1;
}

/// True for a memref whose innermost dim is static with unit stride; its
/// outer dims may be dynamic (the keys of a contraction's dynamic
/// reduction).
inline bool innermostUnitStride(mlir::Value v) {
  auto type = mlir::dyn_cast<mlir::MemRefType>(v.getType());
  return type && type.getRank() && !type.isDynamicDim(type.getRank() - 1) &&
         unitInnermostStride(v);
}

/// True for a memref of static shape whose innermost dim has unit stride
/// (vector loads and stores along it are contiguous).
inline bool innermostContiguous(mlir::Value v) {
  auto type = mlir::dyn_cast<mlir::MemRefType>(v.getType());
  return type && type.hasStaticShape() && innermostUnitStride(v);
}

/// A lane count that stands for the lanes of a mask known only at run
/// time: what is left of a dynamic dim after its whole vectors.
inline constexpr int64_t kMasked = 0;

/// A constant mask with the first `on` of `size` lanes set.
inline mlir::Value constantMask(mlir::OpBuilder &b, mlir::Location loc, int64_t size,
                                int64_t on) {
  llvm::SmallVector<bool> bits(size, false);
  std::fill_n(bits.begin(), on, true);
  auto type = mlir::VectorType::get({size}, b.getI1Type());
  return mlir::arith::ConstantOp::create(
      b, loc, mlir::DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits)));
}

/// `type` read at `idx` of `mem` in the lanes `mask` sets, the others
/// zero (a mask known only at run time: what is left of a dynamic dim).
inline mlir::Value load(mlir::OpBuilder &b, mlir::Location loc, mlir::Value mem,
                        mlir::ValueRange idx, mlir::VectorType type, mlir::Value mask) {
  mlir::Value zero = mlir::arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  return mlir::vector::MaskedLoadOp::create(b, loc, type, mem, idx, mask, zero);
}

/// `type` read at `idx` of `mem`; lanes from `on` on are not read (zero).
inline mlir::Value load(mlir::OpBuilder &b, mlir::Location loc, mlir::Value mem,
                        mlir::ValueRange idx, mlir::VectorType type, int64_t on) {
  int64_t size = type.getNumElements();
  if (on == size)
    return mlir::vector::LoadOp::create(b, loc, type, mem, idx);
  return load(b, loc, mem, idx, type, constantMask(b, loc, size, on));
}

/// Writes the lanes of `value` that `mask` sets at `idx` of `mem`.
inline void store(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value, mlir::Value mem,
                  mlir::ValueRange idx, mlir::Value mask) {
  mlir::vector::MaskedStoreOp::create(b, loc, mem, idx, mask, value);
}

/// Writes the first `on` lanes of `value` at `idx` of `mem`.
inline void store(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value, mlir::Value mem,
                  mlir::ValueRange idx, int64_t on) {
  int64_t size = mlir::cast<mlir::VectorType>(value.getType()).getNumElements();
  if (on == size)
    mlir::vector::StoreOp::create(b, loc, value, mem, idx);
  else
    store(b, loc, value, mem, idx, constantMask(b, loc, size, on));
}

/// The i32 offsets 0, stride, 2 * stride, ... of `lanes` lanes.
mlir::Value laneOffsets(mlir::OpBuilder &b, mlir::Location loc, int64_t lanes, int64_t stride);

/// `lanes` f32 elements of `mem` `stride` elements apart from `idx` (a
/// vector.gather; `mem` must have a unit innermost stride), those that
/// `mask` sets read, the others zero.
mlir::Value gather(mlir::OpBuilder &b, mlir::Location loc, mlir::Value mem,
                   mlir::ValueRange idx, int64_t lanes, int64_t stride, mlir::Value mask);

/// The same with the first `on` lanes read.
inline mlir::Value gather(mlir::OpBuilder &b, mlir::Location loc, mlir::Value mem,
                          mlir::ValueRange idx, int64_t lanes, int64_t stride, int64_t on) {
  return gather(b, loc, mem, idx, lanes, stride, constantMask(b, loc, lanes, on));
}

/// `rows` (R vectors of `lanes` lanes, R a power of two no larger than
/// `lanes`) transposed in log2(R) stages of two-vector shuffles: each
/// result vector holds lanes / R blocks of R lanes, block j of vector k
/// being rows 0..R-1 of lane (column) `columns[k][j]`.
struct Transposed {
  llvm::SmallVector<mlir::Value> vectors;
  llvm::SmallVector<llvm::SmallVector<int64_t>> columns;
};
Transposed transposeRows(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<mlir::Value> rows);

/// Strides up to this one are read with a wide load and a shuffle.
constexpr int64_t kMaxShuffledStride = 4;

/// `lanes` f32 elements of `mem` `stride` elements apart along its
/// innermost dim (unit stride) from `idx`, the first `on` of them read,
/// the others zero: a (masked) load for stride 1; for strides up to
/// kMaxShuffledStride every stride-th lane of one wide load that stops at
/// the last element needed; a gather beyond.
mlir::Value stridedLoad(mlir::OpBuilder &b, mlir::Location loc, mlir::Value mem,
                        mlir::ValueRange idx, int64_t lanes, int64_t stride, int64_t on);

/// `value`'s lanes written `stride` elements apart along `mem`'s
/// innermost dim (unit stride) from `idx`, the first `on` of them: one
/// shuffle and a masked store of `stride` times the lanes (the elements
/// between are left alone).
void stridedStore(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value, mlir::Value mem,
                  mlir::ValueRange idx, int64_t stride, int64_t on);

/// The innermost stride of `v` when it is a window of a buffer with a
/// unit innermost stride: a memref.subview of static offsets and strides
/// (it may drop unit dims, not the innermost), innermost stride 2 to
/// kMaxShuffledStride.
std::optional<int64_t> windowStride(mlir::Value v);

/// The window `v` (windowStride) and indices `idx` into it as the buffer
/// it views and the indices there.
std::pair<mlir::Value, llvm::SmallVector<mlir::Value>>
throughWindow(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::ValueRange idx);

/// The buffer a memref views, and whether an op touches it
/// (passes/Utils/Buffers.h).
using kiln::rootBuffer;
using kiln::touches;

/// `a` and `b` may share memory. Views of one workspace (planned buffers
/// with different roots) share it when their byte ranges overlap: the
/// plan reuses memory between buffers whose lifetimes do not overlap, so
/// an op that moves a write earlier (a kernel storing its epilogue's
/// result) must not rely on different roots alone.
bool mayOverlap(mlir::Value a, mlir::Value b);

/// The indices of a projected permutation `map` (constants allowed) with
/// its dims at `dims`.
llvm::SmallVector<mlir::Value> permutedIndices(mlir::OpBuilder &b, mlir::Location loc,
                                               mlir::AffineMap map,
                                               llvm::ArrayRef<mlir::Value> dims);

/// On a loop marked kiln.parallel whose trip count is known only at run
/// time: the fewest trips worth threads (an i64). With fewer,
/// kiln-outline-parallel-loops runs it on the calling thread.
inline constexpr llvm::StringLiteral kMinTrips = "kiln.min_trips";

/// The multiply-adds from which a contraction is worth threads: a few
/// microseconds of one core's work.
inline constexpr int64_t kParallelWork = int64_t(1) << 18;

/// `a` - `b` where it is a constant: both constants, one value, or `a`
/// that value plus a constant (arith.addi, or an affine.apply adding one),
/// as the sizes of a pad's buffer are its window's sizes plus the padding.
std::optional<int64_t> constantDifference(mlir::OpFoldResult a, mlir::OpFoldResult b);

/// The sizes of `buffer`: static ones as attributes, dynamic ones the
/// size operands of the memref.view it is (the values the pad's sizes were
/// computed from, which constantDifference can relate to its window's),
/// else memref.dim.
llvm::SmallVector<mlir::OpFoldResult> bufferSizes(mlir::OpBuilder &b, mlir::Location loc,
                                                  mlir::Value buffer);

/// The elements from which an elementwise op is worth threads (more
/// where each costs more: elementCost).
inline constexpr int64_t kElementwiseParallelWork = int64_t(1) << 15;

/// Marks `loop`, over a range known only at run time, kiln.parallel from
/// the trips of `tripWork` each that make `enough` (kParallelWork for a
/// contraction's multiply-adds), and at least `atLeast` trips.
void markParallelFrom(mlir::Operation *loop, int64_t tripWork, int64_t atLeast = 1,
                      int64_t enough = kParallelWork);

/// True if `op` is inside a loop already marked kiln.parallel (the windows
/// of a strip-mined dynamic dim): loops inside it are not marked (they
/// would run serially in each chunk).
bool insideParallelLoop(mlir::Operation *op);

/// The body of `op` (two inputs, one output) is out + x * y, float or
/// integer, in either operand order: a matmul/conv contraction.
bool isMultiplyAccumulate(mlir::linalg::GenericOp op);
/// The body of `op` is out + ext(x) * extsi(y) in i32 on 8-bit x and y:
/// the integer matmuls by constant weights that the lowering of
/// MatMulInteger and QLinearMatMul makes. `signedX`, if given, is set to
/// whether x widens signed.
bool isInt8MultiplyAccumulate(mlir::linalg::GenericOp op, bool *signedX = nullptr);

/// True if every op of `op`'s body (but the yield) is a one-result
/// arith/math op on scalar ints and floats: the body can be rebuilt on
/// vectors by vectorizeBody.
bool vectorisableBody(mlir::linalg::GenericOp op);

/// Whether kiln-vectorize-elementwise takes the innermost loop dim of
/// `op`, a dynamic one, whole once the other dims are static: vectors
/// along it, the last one masked at run time (VectorizeElementwise.cpp).
/// Not a contraction (its own kernels take it); every operand that moves
/// along the dim has it as its last index, with a unit stride; the
/// outputs have it, or the op is an innermost reduction (a softmax's max
/// and sum over its keys).
bool takesDynamicInnermost(mlir::linalg::GenericOp op);

/// The dim along which kiln-vectorize-elementwise's window vectors run
/// (VectorizeWindows.cpp) in `op`, a window generic with reductions (a
/// pool), if that dim is dynamic and the vectors take it whole once the
/// other dims are static: the output's last index, which every operand
/// that moves along it has as its last index only, at a static stride,
/// with a unit innermost stride; the last vector masked at run time.
std::optional<unsigned> dynamicWindowDim(mlir::linalg::GenericOp op);

/// Set by kiln-strip-dynamic-dims on the pieces it makes of a generic
/// over dynamic dims. It has chosen their threads (the loop over windows,
/// blocks of channels, or the rest of rows), so that the kernel of a
/// piece left serial splits itself only on the plain element count, not
/// on the math ops elementCost counts: dynamic efficientnet_b0's stem
/// SiLU, 49 pieces of [32, 16, 16], took 1.06x the model's time as 49
/// parallel loops.
inline constexpr llvm::StringLiteral kWindowPiece = "kiln.window_piece";

/// What one element of the elementwise generic `op` costs, in units of
/// a plain element's load and store: half its operands, plus 8 per
/// math-dialect op in its body (exp, tanh, log: each expands to tens of
/// vector instructions) unless `op` is a kWindowPiece. An LSTM's gates
/// (11 operands, three sigmoids and two tanh) cost 45: over [8, 256] they
/// are worth two threads.
int64_t elementCost(mlir::linalg::GenericOp op);

/// Rebuilds the body of `op` on vectors of `lanes` lanes at `b`: `map`
/// holds the vector for each block argument used; values from above the
/// op are broadcast. Returns the vectors the body yields.
llvm::SmallVector<mlir::Value> vectorizeBody(mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                                             mlir::IRMapping &map, int64_t lanes);

/// Erases views and memref.get_global ops nobody uses, then the private
/// globals nobody reads: the weights a kernel pass packed into new globals.
void eraseUnusedGlobals(mlir::ModuleOp module);
/// The constant that `op` writes into every element of `buffer`, if it
/// does: linalg.fill, or a linalg.map / linalg.generic without inputs
/// whose body yields a constant defined outside it.
std::optional<mlir::Value> constantFill(mlir::Operation *op, mlir::Value buffer);

} // namespace kiln::vec

#endif // KILN_PASSES_CODEGEN_CPU_VECTORHELPERS_H
