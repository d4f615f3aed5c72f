//===- Passes.td - onnx -> linalg conversion ---------------*- tablegen -*-===//

#ifndef KILN_PASSES_CONVERSION_ONNXTOLINALG_PASSES_TD
#define KILN_PASSES_CONVERSION_ONNXTOLINALG_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertOnnxToLinalgPass : Pass<"convert-onnx-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower the onnx dialect to linalg, tensor, arith and math";
  let description = [{
    Rewrites every onnx op into upstream ops on tensors: elementwise ops,
    reductions, pooling and convolutions become `linalg.generic` or named
    linalg ops, data movement becomes `tensor` ops, constants become
    `arith.constant`. Unsigned ONNX element types become signless integers
    (the patterns remember the signedness). Shapes must be static.

    Ops, attributes or element types that are not supported yet are errors
    on the op naming the reason; the pass reports all unsupported op types
    of a model at once.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect"];
}

#endif // KILN_PASSES_CONVERSION_ONNXTOLINALG_PASSES_TD
