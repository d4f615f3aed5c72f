//===- Passes.h - CPU code generation passes ----------------------*- C++ -*-===//

#ifndef KILN_PASSES_CODEGEN_CPU_PASSES_H
#define KILN_PASSES_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Codegen/CPU/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_CODEGEN_CPU_PASSES_H
