// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-quantize-static{ranges=-1.0,3.0,0.5,2.0})' | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-expose-activation-ranges)' | FileCheck %s --check-prefix=EXPOSE
// kiln-quantize-static and kiln-expose-activation-ranges (QuantizeStatic.cpp):
// the two halves of --quantize=int8 around its calibration run.

// The 1x1 Conv sums 2 products per output, fewer than 64: it stays float.
// The 3x3 Conv's activation over [-1, 3]: uint8, scale 4 / 255, zero
// point round(1 / (4 / 255)) = 64; its weight int8 per output channel
// (scales 0.5 / 127 and 0.25 / 127: 127, then -127, 64 (0.125 / (0.25 /
// 127) = 63.5, rounded to even), -127 in turn). The Gemm's activation
// over [0.5, 2], widened to [0, 2]: scale 2 / 255, zero point 0; the Gemm
// (transB, alpha 2) becomes MatMul by DequantizeLinear of the transposed
// weight [2, 3] per column (alpha in the scales: 2 * [2, 4, 1] / 127)
// plus C. The Relu and ReduceMean between stay float.
// CHECK-LABEL: func.func @main(
// CHECK: %[[C1:.*]] = "onnx.Conv"(%arg0,
// CHECK: %[[R:.*]] = "onnx.Relu"(%[[C1]])
// CHECK: %[[XS:.*]] = "onnx.Constant"() <{value = dense<0.0156862754> : tensor<f32>}>
// CHECK: %[[XZ:.*]] = "onnx.Constant"() <{value = dense<64> : tensor<ui8>}>
// CHECK: %[[Q:.*]] = "onnx.QuantizeLinear"(%[[R]], %[[XS]], %[[XZ]])
// CHECK: %[[XD:.*]] = "onnx.DequantizeLinear"(%[[Q]], %[[XS]], %[[XZ]])
// CHECK: %[[WQ:.*]] = "onnx.Constant"() <{value = dense_resource<[[R0:quantized_weights[_0-9]*]]> : tensor<2x8x3x3xi8>}>
// CHECK: %[[WS:.*]] = "onnx.Constant"() <{value = dense<[0.00393700786, 0.00196850393]> : tensor<2xf32>}>
// CHECK: %[[WD:.*]] = "onnx.DequantizeLinear"(%[[WQ]], %[[WS]], %{{.*}}) <{axis = 0 : i64}>
// CHECK: "onnx.Conv"(%[[XD]], %[[WD]], %{{.*}})
// CHECK: %[[M:.*]] = "onnx.ReduceMean"
// CHECK: "onnx.Constant"() <{value = dense<0.00784313772> : tensor<f32>}>
// CHECK: "onnx.Constant"() <{value = dense<0> : tensor<ui8>}>
// CHECK: %[[GQ:.*]] = "onnx.QuantizeLinear"(%[[M]]
// CHECK: %[[GD:.*]] = "onnx.DequantizeLinear"(%[[GQ]]
// CHECK: "onnx.Constant"() <{value = dense_resource<[[R1:quantized_weights[_0-9]*]]> : tensor<2x3xi8>}>
// CHECK: "onnx.Constant"() <{value = dense<[0.0314960629, 0.0629921257, 0.0157480314]> : tensor<3xf32>}>
// CHECK: %[[BD:.*]] = "onnx.DequantizeLinear"({{.*}}) <{axis = 1 : i64}> : (tensor<2x3xi8>, tensor<3xf32>, none) -> tensor<2x3xf32>
// CHECK: %[[MM:.*]] = "onnx.MatMul"(%[[GD]], %[[BD]])
// CHECK: %[[Y:.*]] = "onnx.Add"(%[[MM]], %{{.*}})
// CHECK: return %[[Y]]
// CHECK: [[R0]]: "0x01000000{{(7F)+(814081)+}}"
// CHECK: [[R1]]: "0x010000004081007F107F"

// The calibration build: ReduceMin and ReduceMax of each activation as
// outputs, named, in order (the 3x3 Conv's input, then the Gemm's).
// EXPOSE-LABEL: func.func @main(
// EXPOSE-SAME: -> (tensor<1x3xf32> {onnx.name = "y"}, tensor<f32> {onnx.name = "kiln_calibration_0_min"}, tensor<f32> {onnx.name = "kiln_calibration_0_max"}, tensor<f32> {onnx.name = "kiln_calibration_1_min"}, tensor<f32> {onnx.name = "kiln_calibration_1_max"})
// EXPOSE: %[[R:.*]] = "onnx.Relu"
// EXPOSE: %[[F:.*]] = "onnx.ReduceMean"
// EXPOSE: %[[Y:.*]] = "onnx.Gemm"
// EXPOSE: %[[MIN0:.*]] = "onnx.ReduceMin"(%[[R]]) <{keepdims = 0 : i64}>
// EXPOSE: %[[MAX0:.*]] = "onnx.ReduceMax"(%[[R]]) <{keepdims = 0 : i64}>
// EXPOSE: %[[MIN1:.*]] = "onnx.ReduceMin"(%[[F]])
// EXPOSE: %[[MAX1:.*]] = "onnx.ReduceMax"(%[[F]])
// EXPOSE: return %[[Y]], %[[MIN0]], %[[MAX0]], %[[MIN1]], %[[MAX1]]
func.func @main(%x: tensor<1x2x3x3xf32> {onnx.name = "x"}) -> (tensor<1x3xf32> {onnx.name = "y"}) {
  %w = "onnx.Constant"() <{value = dense<0.25> : tensor<8x2x1x1xf32>}> : () -> tensor<8x2x1x1xf32>
  %b = "onnx.Constant"() <{value = dense<0.1> : tensor<8xf32>}> : () -> tensor<8xf32>
  %c = "onnx.Conv"(%x, %w, %b) <{auto_pad = "NOTSET", group = 1 : i64}> : (tensor<1x2x3x3xf32>, tensor<8x2x1x1xf32>, tensor<8xf32>) -> tensor<1x8x3x3xf32>
  %r = "onnx.Relu"(%c) : (tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %w2 = "onnx.Constant"() <{value = dense<[[[[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]], [[[-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25]], [[-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25]], [[-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25]], [[-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25]], [[-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25]], [[-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25]], [[-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25]], [[-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25], [-0.25, 0.125, -0.25]]]]> : tensor<2x8x3x3xf32>}> : () -> tensor<2x8x3x3xf32>
  %b2 = "onnx.Constant"() <{value = dense<[0.1, -0.1]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %c2 = "onnx.Conv"(%r, %w2, %b2) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x3x3xf32>, tensor<2x8x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %f = "onnx.ReduceMean"(%c2) <{axes = array<i64: 2, 3>, keepdims = 0 : i64}> : (tensor<1x2x3x3xf32>) -> tensor<1x2xf32>
  %g = "onnx.Constant"() <{value = dense<[[1.0, 2.0], [-4.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf32>}> : () -> tensor<3x2xf32>
  %gc = "onnx.Constant"() <{value = dense<[1.0, 0.0, -1.0]> : tensor<3xf32>}> : () -> tensor<3xf32>
  %y = "onnx.Gemm"(%f, %g, %gc) <{alpha = 2.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 1 : i64}> : (tensor<1x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}
