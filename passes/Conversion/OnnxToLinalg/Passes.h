//===- Passes.h - onnx -> linalg conversion -----------------------*- C++ -*-===//

#ifndef KILN_PASSES_CONVERSION_ONNXTOLINALG_PASSES_H
#define KILN_PASSES_CONVERSION_ONNXTOLINALG_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Conversion/OnnxToLinalg/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Conversion/OnnxToLinalg/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_CONVERSION_ONNXTOLINALG_PASSES_H
