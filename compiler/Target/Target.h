//===- Target.h - From the LLVM dialect to files on disk ---------*- C++ -*-===//
//
// The llvm phase's back half: translate the LLVM-dialect module to LLVM IR,
// add the model's exported entry points and descriptor, optimise for the
// target machine, and write LLVM IR, assembly, an object, a shared library
// (linked in-process with lld) or a static library. Also the C header.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_TARGET_H
#define KILN_COMPILER_TARGET_TARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
class Triple;
} // namespace llvm

namespace mlir {
class PassManager;
} // namespace mlir

namespace kiln {

/// One graph input or output as the generated ABI describes it.
struct TensorInfo {
  std::string name;
  int32_t dtype = 0; ///< ONNX TensorProto.DataType.
  /// The dims of one batch item: a dynamic batch dim (dynamicBatch) is
  /// dims[0] and 1 here.
  /// -1-k marks the model's symbolic dim k (ModelInfo::symbolicDims) and,
  /// past them, -1-(symbolicDims.size() + j) its dim expression j
  /// (ModelInfo::dimExprs).
  llvm::SmallVector<int64_t> dims;
  bool dynamicBatch = false; ///< dims[0] is the model's dynamic batch dim.
  /// Per batch item and per unit of each symbolic dim and expression
  /// (counted once for each dim that has it): the static dims' product.
  int64_t numElements() const;
  int64_t numBytes() const;
  /// How many dims are symbolic dim or expression `k` (stored as -1-k).
  int64_t numSymbolic(int64_t k) const;
  bool hasSymbolic() const; ///< Whether any dim is symbolic.
};

/// What kiln reads off the object it wrote: the sizes a firmware engineer
/// budgets flash and RAM with, and the stack the entry point needs.
struct CodeStats {
  bool known = false;
  int64_t codeSize = 0;  ///< Executable sections (flash).
  int64_t constSize = 0; ///< Read-only data: weights, tables (flash).
  int64_t dataSize = 0;  ///< Initialised writable data (flash and RAM).
  int64_t bssSize = 0;   ///< Zero-initialised writable data (RAM).
  /// Bytes of stack NAME_run's own code needs: the deepest chain of frames
  /// in the call graph of the generated code, not counting what it calls
  /// outside (the C library's memcpy/memset, compiler-runtime helpers), so
  /// not an upper bound. -1 when a frame is dynamic or the graph recursive.
  int64_t stackSize = -1;
};

/// What the header and the descriptor say about a compiled model.
struct ModelInfo {
  std::string name; ///< The C prefix of every exported symbol.
  std::vector<TensorInfo> inputs, outputs;
  /// The name of the dynamic batch dim ("" for a static model): inputs and
  /// outputs with dynamicBatch carry it as their leading dim, and the entry
  /// point runs the item-sized code once per item.
  std::string dynamicDim;
  /// The model's other dynamic dims, in order: they stay `?` in the
  /// compiled code, which takes their values as arguments, and the
  /// workspace's size depends on them (workspaceSize is then -1, unless
  /// --max-shape gave every one its largest value). TensorInfo dims hold
  /// dim k as -1-k.
  struct SymbolicDim {
    std::string name;
    /// --max-shape's value (0: none); with one for every dim the
    /// workspace is static, sized for them.
    int64_t max = 0;
    /// The smallest value the code runs with (1 when it gathers along
    /// the dim, else 0).
    int64_t min = 0;
    /// A dynamic batch kept symbolic (--target=cuda): NAME_run is one item.
    bool batch = false;
  };
  std::vector<SymbolicDim> symbolicDims;
  /// c0 + sum c_k dim_k over the symbolic dims; as an output's dim also a
  /// floor or a product of dims.
  struct DimExpression {
    std::vector<int64_t> coefficients; ///< [c0, c_0, ...] (zeros but for a sum).
    std::string text;                  ///< "P + S - 1", or "P + S - 1 >= 0".
    /// A sum of the coefficients; floor((d(x) + a) / s) of args {x, a, s}
    /// (a conv's or pool's output size); c d(x) d(y) of args {c, x, y}
    /// (dims a Reshape merges). x and y are TensorInfo dim indices: k for
    /// symbolic dim k, symbolicDims.size() + i for an earlier dimExprs[i].
    enum class Kind { Sum = 0, Floor = 1, Product = 2 } kind = Kind::Sum;
    std::array<int64_t, 3> args = {0, 0, 0};
    bool operator==(const DimExpression &o) const {
      return coefficients == o.coefficients && kind == o.kind && args == o.args;
    }
  };
  /// What the dims' values must also satisfy, each expression >= 0 (a
  /// slice's bounds inside its dim, a dim computed as P + S - 1 not
  /// negative).
  std::vector<DimExpression> dimConstraints;
  /// The graph outputs' dims that are expressions of the symbolic dims (a
  /// key/value cache output of past + seq tokens), in order of first use.
  std::vector<DimExpression> dimExprs;
  bool symbolic() const { return !symbolicDims.empty(); }
  /// Whether every symbolic dim is a dynamic batch kept symbolic, so that
  /// NAME_run has values for them (1).
  bool batchOnly() const {
    return symbolic() && llvm::all_of(symbolicDims, [](const SymbolicDim &d) { return d.batch; });
  }
  int numDynamicDims() const {
    return !dynamicDim.empty() + static_cast<int>(symbolicDims.size());
  }
  /// The index of symbolic dim `k` among the dynamic dims (after the batch).
  int symbolicIndex(size_t k) const { return (dynamicDim.empty() ? 0 : 1) + k; }
  /// A TensorInfo dim index (symbolic dim k, or symbolicDims.size() + j
  /// for dimExprs[j]) as the descriptor numbers it: its dynamic dim index,
  /// or numDynamicDims() + j.
  int64_t descriptorIndex(int64_t k) const {
    return k < int64_t(symbolicDims.size())
               ? symbolicIndex(k)
               : numDynamicDims() + (k - int64_t(symbolicDims.size()));
  }
  /// A TensorInfo dim as the header and the descriptor write it: a static
  /// dim as it is, symbolic dim k as -1 - its dynamic dim index, and
  /// expression j as -1 - (numDynamicDims() + j).
  int64_t descriptorDim(int64_t d) const {
    if (d >= 0)
      return d;
    size_t k = -1 - d;
    if (k < symbolicDims.size())
      return -1 - symbolicIndex(k);
    return -1 - (numDynamicDims() + static_cast<int64_t>(k - symbolicDims.size()));
  }
  /// A TensorInfo dim's text: "8", "seq", "past + seq".
  std::string dimText(int64_t d) const {
    if (d >= 0)
      return std::to_string(d);
    size_t k = -1 - d;
    return k < symbolicDims.size() ? symbolicDims[k].name
                                   : dimExprs[k - symbolicDims.size()].text;
  }
  /// The largest value that every symbolic dim may take at once without a
  /// size in the plan overflowing (0: no limit beyond 2^31 - 1).
  int64_t symbolicLimit = 0;
  /// The largest value the entry points accept for symbolic dim `k`.
  int64_t symbolicTop(size_t k) const {
    int64_t top = (int64_t(1) << 31) - 1;
    if (symbolicDims[k].max > 0)
      top = std::min(top, symbolicDims[k].max);
    if (symbolicLimit > 0)
      top = std::min(top, symbolicLimit);
    return top;
  }
  int64_t workspaceSize = 0;
  int64_t workspaceAlignment = 16;
  CodeStats stats; ///< Filled by emitCode for objects.
  std::string targetLabel; ///< "cortex-m4 (thumbv7em-unknown-none-eabihf)".
  /// --target=cuda: the device code (PTX) and its kernels' names, in the
  /// order the host's launches number them. Empty for the CPU targets.
  std::string gpuPtx;
  std::string gpuCubin; ///< ptxas's cubin of gpuPtx, when ptxas was found.
  std::vector<std::string> gpuKernels;
  bool cuda() const { return !gpuPtx.empty(); }
};

/// Reads names, dtypes and shapes from @main after the onnx phase and
/// kiln-dim-symbols (whose names it gives the dynamic dims).
/// Fails (with an error on the function) for dynamic or unsupported types.
mlir::LogicalResult readModelInfo(mlir::ModuleOp module, ModelInfo &info);

/// Reads the workspace size the memory plan chose (from the LLVM dialect).
void readWorkspace(mlir::ModuleOp module, ModelInfo &info);

/// The target machine kiln compiles for.
struct TargetOptions {
  std::string triple; ///< Empty: the host.
  std::string cpu;    ///< Empty: the host CPU for the host, else generic.
  std::string features;
  int optLevel = 3;
  /// The object defines memcpy/memmove/memset (and Arm's __aeabi_mem*
  /// forms) itself, weak and hidden, so firmware links without a C library.
  bool freestanding = false;
};

/// What the rest of the compiler needs to know about the target machine.
struct TargetDescription {
  std::string triple; ///< Normalised.
  std::string cpu;    ///< The CPU code is tuned for ("generic" if none).
  unsigned pointerBits = 64;
  /// No operating system (OS "none"/"unknown" with an EABI environment or an
  /// ELF bare-metal triple): firmware objects, static relocation, no shared
  /// libraries.
  bool bareMetal = false;
  bool hasFloat32 = true; ///< Hardware single precision.
  bool hasFloat64 = true; ///< Hardware double precision.
  bool elf = true;        ///< Objects are ELF (kiln links shared libraries for ELF only).
  /// Float min/max must become compare and select: outside x86 and AArch64
  /// LLVM may call libm's fminf/fmaxf/fmaximumf for them.
  bool expandFloatMinMax = false;
  /// Vector registers the kernels may use: width in bits (0: none worth
  /// using) and count.
  unsigned vectorBits = 0;
  unsigned vectorRegisters = 16;
  /// Reduction steps ahead that the kernels prefetch operands they read
  /// 1 KiB or more apart per step (0: none; for cached application cores).
  unsigned prefetchDistance = 0;
  /// The integer dot product of int8 matmul kernels: "vnni512" (AVX-512
  /// VNNI), "pmaddwd512" (AVX-512BW), "pmaddwd256" (AVX2), "sdot128"
  /// (AArch64 with the dot product extension), or empty.
  std::string int8DotProduct;
  /// Floor, ceil, trunc and round-half-even are one instruction, scalar
  /// and vector (x86 with SSE4.1, AArch64): LLVM emits them, no libm call.
  bool nativeRounding = false;
  /// "cortex-m4 (thumbv7em-unknown-none-eabihf)", for messages.
  std::string label() const;
};

/// The LLVM target machine for `options`: the host CPU and its features for
/// host builds, ARM's default CPU for an ARM architecture without --mcpu,
/// static relocation on bare-metal targets and PIC elsewhere.
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const TargetOptions &options, std::string &error);

/// Checks that kiln can generate code for `options` and describes the
/// target. An unknown triple, CPU or feature is an error.
mlir::LogicalResult describeTarget(const TargetOptions &options,
                                   TargetDescription &desc, std::string &error);

/// Runs `pm`, which lowers `module`'s onnx ops, then reports (as errors on
/// the lowered ops, named by the onnx op each came from, e.g. "Max (opset
/// 13)") arithmetic the target cannot do in hardware and kiln does not
/// emulate: float64 on FPUs without double precision, and without an FPU
/// what only libm computes. Fails when `pm` fails or anything was reported.
mlir::LogicalResult lowerForTarget(mlir::PassManager &pm, mlir::ModuleOp module,
                                   const TargetDescription &target);

enum class OutputKind { MLIR, LLVMIR, Assembly, Object, SharedLibrary, StaticLibrary, ONNX, PTX };

/// Bytes of bytes of bytes: one emitted artefact.
using Bytes = llvm::SmallVector<char, 0>;

/// The GPU architectures --target=cuda takes (--gpu-arch).
bool isGpuArch(llvm::StringRef arch);

/// The architecture to build for: `requested` (--gpu-arch), "sm_80" when
/// it is empty. "" with `error` set when --gpu-arch is given without
/// --target=cuda (`cuda` false) or names an architecture kiln does not take.
std::string gpuArchFor(bool cuda, llvm::StringRef requested, std::string &error);

/// The host part of a --target=cuda build: the tensor work runs on the GPU,
/// so the phases before it make no CPU kernels (vectors, prefetches, int8
/// dot products; without vectors no Winograd either).
void withoutCpuKernels(TargetDescription &desc);

/// `module`'s device code (its gpu.module, in the LLVM and NVVM dialects:
/// the llvm phase of --target=cuda) as PTX for `arch` (sm_80...),
/// optimised at `optLevel`, into `ptx`. Errors go to `error`.
mlir::LogicalResult emitPtx(mlir::ModuleOp module, llvm::StringRef arch, int optLevel,
                            std::string &ptx, std::string &error);

/// The CUDA toolkit's ptxas: on PATH, under $CUDA_PATH or $CUDA_HOME, or
/// /usr/local/cuda; "" when there is none.
std::string findPtxas();

/// `ptx` assembled by `ptxas` for `arch` into `cubin`. Fails with `error`
/// (ptxas's log) when ptxas rejects it.
mlir::LogicalResult assemblePtx(llvm::StringRef ptxas, llvm::StringRef ptx, llvm::StringRef arch,
                                std::string &cubin, std::string &error);

/// Translates `module` (LLVM dialect), adds the entry points of `info`,
/// optimises and emits `kind` (LLVMIR, Assembly or Object) into `out`.
/// For objects, also measures them into `stats` (sizes, stack) and, on a
/// bare-metal target, checks that they need nothing from outside but the C
/// library's memcpy/memmove/memset and the compiler runtime's helpers.
/// Errors go to `error`.
mlir::LogicalResult emitCode(mlir::ModuleOp module, const ModelInfo &info,
                             const TargetOptions &options, OutputKind kind,
                             Bytes &out, CodeStats &stats, std::string &error);

/// --freestanding: defines memcpy/memmove/memset (and on Arm the
/// __aeabi_mem* forms) in `m` as byte loops, weak (a C library's win when
/// linked) and hidden (never exported from a shared library); functions
/// already defined or declared otherwise are left alone (Freestanding.cpp).
void addMemoryFunctions(llvm::Module &m, const llvm::Triple &triple);

/// Gives every masked gather and scatter of `m` a scalar base with vector
/// offsets again where LLVM's -O pipeline hoisted the offsets into a
/// vector of pointers (GatherBase.cpp): x86 then uses one gather or
/// scatter with 32-bit offsets per vector instead of two with 64-bit
/// addresses.
void uniformGatherBases(llvm::Module &m);

/// Links one object into a shared library at `path` with lld, in-process,
/// with what it needs of the runtime archive at `runtimeArchive` (its
/// kiln_parallel_for; skipped when empty).
mlir::LogicalResult linkSharedLibrary(llvm::StringRef objectBytes,
                                      llvm::StringRef runtimeArchive,
                                      llvm::StringRef path, std::string &error);

/// Writes a static library of the object plus the members of the runtime
/// archive at `runtimeArchive` (skipped when empty).
mlir::LogicalResult writeStaticLibrary(llvm::StringRef objectBytes,
                                       llvm::StringRef objectName,
                                       llvm::StringRef runtimeArchive,
                                       llvm::StringRef path, std::string &error);

/// The self-contained C header of a compiled model.
std::string generateHeader(const ModelInfo &info);

/// `my-net` -> `my_net`, `3d` -> `model_3d`: a C identifier.
std::string makeIdentifier(llvm::StringRef text);

/// True for a triple without an operating system (thumbv7em-none-eabihf,
/// aarch64-none-elf): firmware.
bool isBareMetalTriple(const llvm::Triple &triple);

/// True when `triple` (empty = host) is the machine kiln runs on.
bool isHostTriple(llvm::StringRef triple);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_TARGET_H
