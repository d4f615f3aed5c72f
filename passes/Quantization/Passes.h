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

/// One op that --quantize=int8 quantises, and how (QuantizeStatic.cpp):
/// what kiln-quantize-static writes as QDQ and the QDQ export writes into
/// the ONNX file.
struct StaticQuantization {
  mlir::Operation *op = nullptr; ///< A Conv, MatMul or Gemm.
  /// The activation (operand 0): uint8 per tensor.
  float inputScale = 1.0f;
  uint8_t inputZeroPoint = 0;
  /// The weight in int8 steps: a Conv's [M, C, K...]; a MatMul's or a
  /// Gemm's [K, N] (a Gemm's transposed when transB), one scale per
  /// output channel along `weightAxis` (0 for a Conv, 1 otherwise; a
  /// Gemm's alpha folded in).
  std::vector<int8_t> weights;
  std::vector<int64_t> weightShape;
  std::vector<float> weightScales;
  int64_t weightAxis = 0;
};

/// The ops of `module`'s entry functions that --quantize=int8 quantises,
/// with `ranges` (lo, hi per op, in the order of kiln-expose-activation-
/// ranges) turned into their parameters; ops whose range is not finite are
/// left out. Fails (with a diagnostic) when the counts differ.
mlir::FailureOr<std::vector<StaticQuantization>>
planStaticQuantization(mlir::ModuleOp module, llvm::ArrayRef<double> ranges);

} // namespace kiln::quantization

#endif // KILN_PASSES_QUANTIZATION_PASSES_H
