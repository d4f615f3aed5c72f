//===- CodeGenInternal.h - Between CodeGen.cpp and GpuCode.cpp ---*- C++ -*-===//
//
// Not for the rest of the compiler: the pieces of the host code generator
// that the GPU's (GpuCode.cpp) shares, and the GPU's entry points that
// emitCode adds for a --target=cuda library.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_CODEGENINTERNAL_H
#define KILN_COMPILER_TARGET_CODEGENINTERNAL_H

#include "compiler/Target/Target.h"

#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace kiln {

/// A private NUL-terminated string constant named `name`.
llvm::Constant *cString(llvm::Module &m, llvm::StringRef s, const llvm::Twine &name);

/// LLVM's -O`level` pipeline for `tm` over `m`.
void optimize(llvm::Module &m, llvm::TargetMachine &tm, int level);

/// --target=cuda (GpuCode.cpp): NAME_cuda_program (PTX, cubin, kernel
/// names), kiln_cuda_program(), and NAME_run_device and
/// NAME_run_dims_device (and their _async forms) around the generated
/// NAME_run and NAME_run_dims (renamed NAME_run_checked and
/// NAME_run_dims_checked); NAME_run and NAME_run_dims are declared, and
/// given their bodies (host pointers, kiln_cuda_run_host) by finishCudaRun
/// once the descriptor exists.
mlir::LogicalResult addCudaEntryPoints(llvm::Module &m, const ModelInfo &info,
                                       std::string &error);
void finishCudaRun(llvm::Module &m, const ModelInfo &info);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_CODEGENINTERNAL_H
