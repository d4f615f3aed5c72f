// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-quantize-static{ranges=-1.0,3.0,0.5,2.0})' --verify-diagnostics


// More activations than ranges (ranges for two, three MatMul inputs
// here): the calibration ran another model.
// expected-error @+1 {{static quantisation: 2 calibrated ranges for more activations to quantise}}
func.func @mismatch(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
  %a = "onnx.MatMul"(%x, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = "onnx.MatMul"(%a, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %c = "onnx.MatMul"(%b, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %c : tensor<2x2xf32>
}
