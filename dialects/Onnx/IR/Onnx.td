//===- Onnx.td - All ops of the onnx dialect ---------------*- tablegen -*-===//
//
// The generated ONNX operators plus the dialect's own helper ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ONNX_TD
#define KILN_ONNX_TD

include "dialects/Onnx/IR/OnnxBase.td"
include "dialects/Onnx/IR/OnnxOps.td"

def Onnx_NoValueOp : Onnx_Op<"NoValue", [Pure, ConstantLike]> {
  let summary = "The absent value of an optional input or output";
  let description = [{
    Stands for an optional ONNX input that a node leaves out (an empty name
    in the node's input list).

    Example:
    ```mlir
    %none = onnx.NoValue
    %y = onnx.Clip(%x, %none, %max) : (tensor<4xf32>, none, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let results = (outs NoneType:$none);
  let assemblyFormat = "attr-dict";
  let hasFolder = 1;
}

def Onnx_YieldOp : Onnx_Op<"Yield", [Pure, Terminator, ReturnLike]> {
  let summary = "Ends the region of a graph attribute (If/Loop/Scan bodies)";
  let description = [{
    Returns the outputs of a subgraph, in the order of the subgraph's
    `output` list.
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // KILN_ONNX_TD
