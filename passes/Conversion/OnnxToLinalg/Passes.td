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
  let options = [
    Option<"winograd", "winograd", "bool", /*default=*/"false",
           "3x3 stride-1 convs with constant weights and at least 64 input "
           "and output channels as Winograd F(2x2, 3x3) (Winograd.cpp): "
           "2.25x fewer multiplies, 16 transformed copies of the input and "
           "of the products in the workspace">,
    Option<"backend", "backend", "std::string", /*default=*/"\"CPU\"",
           "The backend the lowered code is for, as refusals name it "
           "(\"not supported by the GPU backend\" for --target=cuda, which "
           "lowers with the same patterns)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect"];
}

def WidenHalfPass : Pass<"kiln-widen-half", "mlir::ModuleOp"> {
  let summary = "Compute float16/bfloat16 ops in f32 between Casts";
  let description = [{
    Every onnx op with a float16 or bfloat16 tensor operand whose lowering
    takes f32 and f64 only (all but elementwise ops, Where excepted, and
    ops that only move elements) gets its half operands as f32 (constants
    converted at compile time, other values through a Cast) and its half
    results as f32, each cast back to its type for its users. Not Cast,
    CastLike, constants, ops with subgraphs (their inner ops are widened),
    ops with a `dtype` or `to` attribute, or ops on sequences.
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

#endif // KILN_PASSES_CONVERSION_ONNXTOLINALG_PASSES_TD
