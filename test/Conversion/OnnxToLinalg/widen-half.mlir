// RUN: kiln-opt %s --kiln-widen-half --split-input-file | FileCheck %s
// kiln-widen-half (WidenHalf.cpp): ops whose lowering takes f32 and f64
// only compute float16/bfloat16 in f32 between Casts; half constants are
// converted at compile time (exactly: subnormals, infinities); ops that
// handle half themselves are left alone.

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf16>
// CHECK: %[[XF:.*]] = "onnx.Cast"(%[[X]]) <{to = 1 : i64}> : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK-NOT: xf16>
// CHECK: %[[W:.*]] = "onnx.Constant"() <{value = dense<{{\[\[}}1.000000e+00, 2.000000e+00], [5.96046448E-8, -1.000000e+00], [0xFF800000, 6.550400e+04]]> : tensor<3x2xf32>}>
// CHECK: %[[MM:.*]] = "onnx.MatMul"(%[[XF]], %[[W]]) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
// CHECK: %[[BACK:.*]] = "onnx.Cast"(%[[MM]]) <{to = 10 : i64}> : (tensor<2x2xf32>) -> tensor<2x2xf16>
// CHECK: %[[R:.*]] = "onnx.Relu"(%[[BACK]]) : (tensor<2x2xf16>) -> tensor<2x2xf16>
// CHECK: %[[S:.*]] = "onnx.Softmax"(%[[XF]]) {{.*}}: (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "onnx.Cast"(%[[S]]) <{to = 10 : i64}>
func.func @matmul(%x: tensor<2x3xf16>) -> (tensor<2x2xf16>, tensor<2x3xf16>) {
  %w = "onnx.Constant"() {value = dense<[[1.0, 2.0], [5.96046448E-8, -1.0], [0xFC00, 65504.0]]> : tensor<3x2xf16>} : () -> tensor<3x2xf16>
  %0 = "onnx.MatMul"(%x, %w) : (tensor<2x3xf16>, tensor<3x2xf16>) -> tensor<2x2xf16>
  %1 = "onnx.Relu"(%0) : (tensor<2x2xf16>) -> tensor<2x2xf16>
  %2 = "onnx.Softmax"(%x) {axis = 1 : i64} : (tensor<2x3xf16>) -> tensor<2x3xf16>
  return %1, %2 : tensor<2x2xf16>, tensor<2x3xf16>
}

// -----

// bfloat16: a splat constant, Where (whose first operand is bool), an
// integer result left as it is, a Cast left alone.
// CHECK-LABEL: func.func @bf16(
// CHECK-DAG: %[[C:.*]] = "onnx.Constant"() <{value = dense<1.500000e+00> : tensor<4xf32>}>
// CHECK-DAG: %[[A:.*]] = "onnx.Cast"(%arg1) <{to = 1 : i64}> : (tensor<4xbf16>) -> tensor<4xf32>
// CHECK: %[[W:.*]] = "onnx.Where"(%arg0, %[[A]], %[[C]]) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[WB:.*]] = "onnx.Cast"(%[[W]]) <{to = 16 : i64}> : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK: "onnx.ArgMax"(%[[A]]) {{.*}}: (tensor<4xf32>) -> tensor<1xi64>
// CHECK: "onnx.Cast"(%[[WB]]) <{to = 1 : i64}> : (tensor<4xbf16>) -> tensor<4xf32>
func.func @bf16(%c: tensor<4xi1>, %a: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<1xi64>, tensor<4xf32>) {
  %k = "onnx.Constant"() {value = dense<1.5> : tensor<4xbf16>} : () -> tensor<4xbf16>
  %0 = "onnx.Where"(%c, %a, %k) : (tensor<4xi1>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %1 = "onnx.ArgMax"(%a) {axis = 0 : i64} : (tensor<4xbf16>) -> tensor<1xi64>
  %2 = "onnx.Cast"(%0) {to = 1 : i64} : (tensor<4xbf16>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xbf16>, tensor<1xi64>, tensor<4xf32>
}

// -----

// Ops that compute half themselves, or only move it, are left alone.
// CHECK-LABEL: func.func @native(
// CHECK-NOT: onnx.Cast
// CHECK: return
func.func @native(%a: tensor<2x3xf16>) -> tensor<3x2xf16> {
  %0 = "onnx.Exp"(%a) : (tensor<2x3xf16>) -> tensor<2x3xf16>
  %1 = "onnx.Transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<2x3xf16>) -> tensor<3x2xf16>
  return %1 : tensor<3x2xf16>
}
