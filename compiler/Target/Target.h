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

#include <string>
#include <vector>

namespace kiln {

/// One graph input or output as the generated ABI describes it.
struct TensorInfo {
  std::string name;
  int32_t dtype = 0; ///< ONNX TensorProto.DataType.
  llvm::SmallVector<int64_t> dims;
  int64_t numElements() const;
  int64_t numBytes() const;
};

/// What the header and the descriptor say about a compiled model.
struct ModelInfo {
  std::string name; ///< The C prefix of every exported symbol.
  std::vector<TensorInfo> inputs, outputs;
  int64_t workspaceSize = 0;
  int64_t workspaceAlignment = 16;
};

/// Reads names, dtypes and static shapes from @main after the onnx phase.
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
};

enum class OutputKind { MLIR, LLVMIR, Assembly, Object, SharedLibrary, StaticLibrary };

/// Bytes of bytes of bytes: one emitted artefact.
using Bytes = llvm::SmallVector<char, 0>;

/// Translates `module` (LLVM dialect), adds the entry points of `info`,
/// optimises and emits `kind` (LLVMIR, Assembly or Object) into `out`.
/// Errors go to `error`.
mlir::LogicalResult emitCode(mlir::ModuleOp module, const ModelInfo &info,
                             const TargetOptions &options, OutputKind kind,
                             Bytes &out, std::string &error);

/// Links one object into a shared library at `path` with lld, in-process.
mlir::LogicalResult linkSharedLibrary(llvm::StringRef objectBytes,
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

/// True when `triple` (empty = host) is the machine kiln runs on.
bool isHostTriple(llvm::StringRef triple);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_TARGET_H
