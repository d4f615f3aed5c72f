//===- OnnxInterfaces.td - Interfaces of onnx ops ----------*- tablegen -*-===//

#ifndef KILN_ONNX_INTERFACES_TD
#define KILN_ONNX_INTERFACES_TD

include "mlir/IR/OpBase.td"

def ShapeInferenceOpInterface : OpInterface<"ShapeInferenceOpInterface"> {
  let cppNamespace = "::kiln::onnx";
  let description = [{
    An op that can refine the types of its results from the types (and
    constant values) of its operands. Results whose dims cannot be known stay
    dynamic; a result type is only ever made more precise, never changed
    incompatibly. Failure means the operands contradict the op's definition,
    and a diagnostic has been emitted on the op.
  }];
  let methods = [
    InterfaceMethod<
      "Infers result types from the operands and refines them in place.",
      "::llvm::LogicalResult", "inferShapes">
  ];
}

#endif // KILN_ONNX_INTERFACES_TD
