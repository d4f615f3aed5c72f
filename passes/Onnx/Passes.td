//===- Passes.td - Passes on the onnx dialect --------------*- tablegen -*-===//

#ifndef KILN_PASSES_ONNX_PASSES_TD
#define KILN_PASSES_ONNX_PASSES_TD

include "mlir/Pass/PassBase.td"

def OnnxShapeInferencePass : Pass<"onnx-shape-inference", "mlir::func::FuncOp"> {
  let summary = "Infer result shapes and fold constant shape computations";
  let description = [{
    Refines the result types of every op that implements
    `ShapeInferenceOpInterface` from its operands' types and constant values,
    and folds what becomes constant, until nothing changes. This is what turns
    PyTorch's `Shape -> Gather -> Unsqueeze -> Concat -> Reshape` chains,
    `ConstantOfShape`, `Range` and `Expand` into static shapes. The function's
    result types are updated to match what it returns.
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

def OnnxLowerSequencesPass : Pass<"onnx-lower-sequences", "mlir::func::FuncOp"> {
  let summary = "Rewrite graph-internal sequences of one static element shape as stacked tensors";
  let description = [{
    A sequence built and consumed inside a function's top-level block, with
    a length known at compile time and elements of one static shape S,
    becomes a tensor [L, S...]: SequenceConstruct/Empty/Insert/Erase/At/
    Length, SplitToSequence (equal chunks; data-dependent chunks give the
    length only) and ConcatFromSequence become Reshape, Concat, Transpose
    and Gather (positions are run-time values, wrapped and clamped like
    Gather's indices). Other sequences are left for the lowering to report.
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

#endif // KILN_PASSES_ONNX_PASSES_TD
