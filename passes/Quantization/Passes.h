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

/// An onnx.Constant holding `value` (of `value`'s type), as the
/// quantisation passes make scales, zero points and weights.
inline mlir::Value onnxConstant(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::ElementsAttr value) {
  return kiln::onnx::ConstantOp::create(b, loc, value.getType(), nullptr, value, nullptr,
                                        nullptr, nullptr, nullptr, nullptr, nullptr);
}

/// One weighted op that --quantize=int8 quantises (QuantizeStatic.cpp):
/// its weights as kiln-quantize-static writes them and the QDQ export
/// writes them into the ONNX file.
struct StaticQuantization {
  mlir::Operation *op = nullptr; ///< A Conv, MatMul or Gemm.
  /// The weight in int8 steps: a Conv's [M, C, K...]; a MatMul's or a
  /// Gemm's [K, N] (a Gemm's transposed when transB), one scale per
  /// output channel along `weightAxis` (0 for a Conv, 1 otherwise; a
  /// Gemm's alpha folded in).
  std::vector<int8_t> weights;
  std::vector<int64_t> weightShape;
  std::vector<float> weightScales;
  int64_t weightAxis = 0;
};

/// One activation that --quantize=int8 quantises: uint8 per tensor, read
/// through QuantizeLinear -> DequantizeLinear by the quantised ops'
/// operands `readers` (its other readers keep the float tensor).
struct ActivationQuantization {
  mlir::Value tensor;
  float scale = 1.0f;
  uint8_t zeroPoint = 0;
  llvm::SmallVector<mlir::OpOperand *, 2> readers;
};

struct StaticPlan {
  std::vector<ActivationQuantization> activations;
  std::vector<StaticQuantization> weighted;
};

/// What --quantize=int8 quantises in `module`'s entry functions, with
/// `ranges` (lo, hi per activation, in the order of
/// kiln-expose-activation-ranges) turned into parameters. An activation
/// whose range is not finite stays float, and so do the weighted ops that
/// read it. Fails (with a diagnostic) when the counts differ.
mlir::FailureOr<StaticPlan> planStaticQuantization(mlir::ModuleOp module,
                                                   llvm::ArrayRef<double> ranges);

} // namespace kiln::quantization

#endif // KILN_PASSES_QUANTIZATION_PASSES_H
