//===- Passes.h - INT8 quantisation passes -----------------------*- C++ -*-===//

#ifndef KILN_PASSES_QUANTIZATION_PASSES_H
#define KILN_PASSES_QUANTIZATION_PASSES_H

#include "dialects/Onnx/IR/OnnxOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln::quantization {

#define GEN_PASS_DECL
#include "passes/Quantization/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Quantization/Passes.h.inc"

} // namespace kiln::quantization

#endif // KILN_PASSES_QUANTIZATION_PASSES_H
