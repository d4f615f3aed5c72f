// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-quantize-dynamic))' --split-input-file | FileCheck %s
// --kiln-quantize-dynamic (QuantizeDynamic.cpp): a float MatMul or Gemm by
// a constant 2-D weight becomes DynamicQuantizeLinear of its input, a
// MatMulInteger by int8 weights (per output column, symmetric), a Cast to
// float and one Mul by the input's scale times the columns' scales.

// W [2, 3]: column maxima 2, 4 and 0.5, so scales 2/127, 4/127, 0.5/127;
// 1.0 in steps of 2/127 is 63.5, rounded to even: 64; 4 / (4/127) = 127;
// -0.25 in steps of 0.5/127 = -63.5 -> -64.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:.*]]: tensor<4x2xf32>
// CHECK-DAG: %[[W:.*]] = "onnx.Constant"() <{value = dense_resource<quantized_weights{{.*}}> : tensor<2x3xi8>}>
// CHECK-DAG: %[[S:.*]] = "onnx.Constant"() <{value = dense<[0.0157480314, 0.0314960629, 0.00393700786]> : tensor<3xf32>}>
// CHECK: %[[Q:.*]], %[[QS:.*]], %[[QZ:.*]] = "onnx.DynamicQuantizeLinear"(%[[A]]) : (tensor<4x2xf32>) -> (tensor<4x2xui8>, tensor<f32>, tensor<ui8>)
// CHECK: %[[NONE:.*]] = onnx.NoValue
// CHECK: %[[ACC:.*]] = "onnx.MatMulInteger"(%[[Q]], %[[W]], %[[QZ]], %[[NONE]]) : (tensor<4x2xui8>, tensor<2x3xi8>, tensor<ui8>, none) -> tensor<4x3xi32>
// CHECK: %[[F:.*]] = "onnx.Cast"(%[[ACC]]) <{to = 1 : i64}> : (tensor<4x3xi32>) -> tensor<4x3xf32>
// CHECK: %[[SC:.*]] = "onnx.Mul"(%[[QS]], %[[S]]) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[Y:.*]] = "onnx.Mul"(%[[F]], %[[SC]]) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: return %[[Y]]
func.func @matmul(%a: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %w = "onnx.Constant"() <{value = dense<[[1.0, 4.0, -0.25], [-2.0, 1.0, 0.5]]> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %0 = "onnx.MatMul"(%a, %w) : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Gemm with transB and alpha 0.5: W [3, 2] read transposed, alpha folded
// into the scales (4/127 * 0.5), the bias added after.
// CHECK-LABEL: func.func @gemm(
// CHECK-SAME: %[[A:.*]]: tensor<4x2xf32>, %[[C:.*]]: tensor<3xf32>
// CHECK-DAG: "onnx.Constant"() <{value = dense_resource<quantized_weights{{.*}}> : tensor<2x3xi8>}>
// CHECK-DAG: "onnx.Constant"() <{value = dense<[0.00787401571, 0.0157480314, 0.00196850393]> : tensor<3xf32>}>
// CHECK: "onnx.MatMulInteger"
// CHECK: "onnx.Mul"
// CHECK: %[[Y:.*]] = "onnx.Mul"
// CHECK: %[[B:.*]] = "onnx.Add"(%[[Y]], %[[C]]) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: return %[[B]]
func.func @gemm(%a: tensor<4x2xf32>, %c: tensor<3xf32>) -> tensor<4x3xf32> {
  %w = "onnx.Constant"() <{value = dense<[[1.0, -2.0], [4.0, 1.0], [-0.25, 0.5]]> : tensor<3x2xf32>}> : () -> tensor<3x2xf32>
  %0 = "onnx.Gemm"(%a, %w, %c) <{alpha = 5.000000e-01 : f32, beta = 1.000000e+00 : f32, transA = 0 : i64, transB = 1 : i64}> : (tensor<4x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// One weight read by two MatMuls (a model's repeated layers) is quantised
// once; a MatMul of two run-time values (attention's) and a Gemm with
// beta != 1 stay in float.
// CHECK-LABEL: func.func @shared_and_kept(
// CHECK-COUNT-1: dense_resource<quantized_weights
// CHECK-NOT: dense_resource<quantized_weights
// CHECK: "onnx.MatMulInteger"
// CHECK: "onnx.MatMulInteger"
// CHECK: "onnx.MatMul"(%{{.*}}, %{{.*}}) : (tensor<4x3xf32>, tensor<3x4xf32>)
// CHECK: "onnx.Gemm"
func.func @shared_and_kept(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>, %c: tensor<3x4xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4x3xf32>) {
  %w = "onnx.Constant"() <{value = dense<[[1.0, 4.0, -0.25], [-2.0, 1.0, 0.5], [0.5, 0.5, 0.5]]> : tensor<3x3xf32>}> : () -> tensor<3x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %0 = "onnx.MatMul"(%a, %w) : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %1 = "onnx.MatMul"(%b, %w) : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %2 = "onnx.MatMul"(%a, %c) : (tensor<4x3xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
  %3 = "onnx.Gemm"(%a, %w, %none) <{alpha = 1.000000e+00 : f32, beta = 2.000000e+00 : f32, transA = 0 : i64, transB = 0 : i64}> : (tensor<4x3xf32>, tensor<3x3xf32>, none) -> tensor<4x3xf32>
  return %0, %1, %2, %3 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4x3xf32>
}

// -----

// A weight with an infinity has no int8 step: the MatMul stays float.
// CHECK-LABEL: func.func @not_finite(
// CHECK-NOT: onnx.MatMulInteger
// CHECK: "onnx.MatMul"
func.func @not_finite(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = "onnx.Constant"() <{value = dense<[[1.0, 0x7F800000], [-2.0, 1.0]]> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
  %0 = "onnx.MatMul"(%a, %w) : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
