//===- Passes.h - GPU code generation passes ----------------------*- C++ -*-===//

#ifndef KILN_PASSES_CODEGEN_GPU_PASSES_H
#define KILN_PASSES_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Codegen/GPU/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_CODEGEN_GPU_PASSES_H
