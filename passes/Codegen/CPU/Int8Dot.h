//===- Int8Dot.h - The targets' int8 dot products ------------------*- C++ -*-===//
//
// What kiln-vectorize-int8-matmul's two kernel builders share: the
// target's integer dot product (`DotKind`), and the builder for the
// weights-left form (VectorizeInt8Conv.cpp), which the pass calls.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CODEGEN_CPU_INT8DOT_H
#define KILN_PASSES_CODEGEN_CPU_INT8DOT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

namespace kiln::int8 {

/// How a dot product reads the bytes of its run-time operand.
enum class ByteOperand {
  Unsigned, ///< u8 (vpdpbusd): int8 data is read as data + 128.
  Signed,   ///< s8 (sdot): uint8 data is read as data - 128.
  Words,    ///< Widened to 16 bits by the data's own signedness (vpmaddwd).
};

/// One target's integer dot product.
struct DotKind {
  int64_t lanes;     ///< i32 lanes of a vector.
  int64_t group;     ///< Products summed per lane: 4 bytes or 2 words.
  int64_t registers; ///< Vector registers.
  llvm::StringRef intrinsic;
  bool accumulates; ///< The intrinsic takes the accumulator (vpdpbusd, sdot).
  ByteOperand a;
};

inline std::optional<DotKind> dotKind(llvm::StringRef name) {
  if (name == "vnni512")
    return DotKind{16, 4, 32, "llvm.x86.avx512.vpdpbusd.512", true, ByteOperand::Unsigned};
  if (name == "pmaddwd512")
    return DotKind{16, 2, 32, "llvm.x86.avx512.pmaddw.d.512", false, ByteOperand::Words};
  if (name == "pmaddwd256")
    return DotKind{8, 2, 16, "llvm.x86.avx2.pmadd.wd", false, ByteOperand::Words};
  if (name == "sdot128")
    return DotKind{4, 4, 32, "llvm.aarch64.neon.sdot.v4i32.v16i8", true, ByteOperand::Signed};
  return std::nullopt;
}

/// A private constant global of `shape` x `elem` holding `bytes` (64-byte
/// aligned), named __kiln_int8_packed_<n>, and its get_global at `b`.
mlir::Value packedGlobal(mlir::OpBuilder &b, mlir::Location loc, mlir::ModuleOp module,
                         unsigned &globals, mlir::Type elem, llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<char> bytes);

/// What the two int8 generic forms of passes/Utils/Int8Matmul.h share, as
/// the kernels take them: a generic on buffers reading an int8 data input
/// of static shape (rank >= 2, innermost contiguous) and a constant int8
/// 2-D weight global, writing an int32 output of the data's rank (static,
/// innermost contiguous), with the indexing maps `maps` gives for that
/// rank, the last loop a reduction and the body out + ext(x) * extsi(w).
struct Int8Contraction {
  mlir::Value x, out;
  mlir::MemRefType xType, wType, outType;
  llvm::ArrayRef<char> weights; ///< The weight global's bytes, row-major.
  bool signedX = false;
  /// The zero fill of `out` before the op (zeroFillBefore), or null.
  mlir::Operation *zeroFill = nullptr;
};
std::optional<Int8Contraction> matchInt8Contraction(
    mlir::linalg::GenericOp op,
    llvm::function_ref<llvm::SmallVector<mlir::AffineMap, 3>(mlir::MLIRContext *, int64_t)>
        maps);

/// The linalg.fill of 0 into `out` that comes just before `op` (views and
/// constants between), or null: the kernels then start their
/// accumulators from zero, and the caller erases the fill.
mlir::Operation *zeroFillBefore(mlir::linalg::GenericOp op, mlir::Value out);

/// Replaces `op`, if it is the weights-left int8 matmul of Int8Matmul.h
/// (an integer conv) on static buffers with constant weights, by a kernel
/// on `dot` (any kind), which also applies the elementwise generic after
/// it where it can (that generic is erased and added to `erased`); false
/// (and nothing changed) otherwise. `op` itself is left for the caller.
bool vectorizeWeightsLeft(mlir::linalg::GenericOp op, const DotKind &dot, bool parallel,
                          mlir::ModuleOp module, unsigned &globals,
                          llvm::SmallPtrSetImpl<mlir::Operation *> &erased);

} // namespace kiln::int8

#endif // KILN_PASSES_CODEGEN_CPU_INT8DOT_H
