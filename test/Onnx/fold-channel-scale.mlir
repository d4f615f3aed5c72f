// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(onnx-fold-channel-scale))' --split-input-file | FileCheck %s
// --onnx-fold-channel-scale (FoldChannelScale.cpp): a squeeze-and-excitation
// scale Mul(x, s), s [1, C, 1, 1], read by a group-1 conv alone, moves onto
// the conv's weights: Conv(x, Mul(W, s), B). Anything else stays.

// The SE case, with the factor as either operand of the Mul.
// CHECK-LABEL: func.func @se(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x4x6x6xf32>, %[[S:[a-z0-9]+]]: tensor<1x4x1x1xf32>, %[[W:[a-z0-9]+]]: tensor<8x4x1x1xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>)
// CHECK: %[[WS:.+]] = "onnx.Mul"(%[[W]], %[[S]]) : (tensor<8x4x1x1xf32>, tensor<1x4x1x1xf32>) -> tensor<8x4x1x1xf32>
// CHECK: "onnx.Conv"(%[[X]], %[[WS]], %[[B]])
// CHECK: %[[WS2:.+]] = "onnx.Mul"(%[[W]], %[[S]])
// CHECK: "onnx.Conv"(%[[X]], %[[WS2]], %[[B]])
// CHECK-NOT: onnx.Mul
func.func @se(%x: tensor<1x4x6x6xf32>, %s: tensor<1x4x1x1xf32>, %w: tensor<8x4x1x1xf32>, %b: tensor<8xf32>) -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) {
  %m = "onnx.Mul"(%x, %s) : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %y = "onnx.Conv"(%m, %w, %b) {kernel_shape = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %m2 = "onnx.Mul"(%s, %x) : (tensor<1x4x1x1xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y2 = "onnx.Conv"(%m2, %w, %b) {kernel_shape = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  return %y, %y2 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>
}

// -----

// Not folded: a grouped conv (its weights see one group's channels), a
// product something else reads too, a factor that is not per channel, one
// element per channel (scaling the weights is the more work).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: -> tensor<8x4x1x1xf32>
// CHECK-COUNT-4: "onnx.Mul"({{.+}}) : (tensor<1x4x{{[16]}}x{{[16]}}xf32>, tensor<1x{{[14]}}x{{[16]}}x{{[16]}}xf32>) -> tensor<1x4x
// CHECK-NOT: -> tensor<8x4x1x1xf32>
// CHECK: return
func.func @kept(%x: tensor<1x4x6x6xf32>, %s: tensor<1x4x1x1xf32>, %t: tensor<1x1x6x6xf32>,
                %w: tensor<8x4x1x1xf32>, %wg: tensor<8x2x3x3xf32>, %v: tensor<1x4x1x1xf32>)
    -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x1x1xf32>) {
  %none = onnx.NoValue
  %m = "onnx.Mul"(%x, %s) : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %g = "onnx.Conv"(%m, %wg, %none) {group = 2 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x2x3x3xf32>, none) -> tensor<1x8x6x6xf32>
  %m2 = "onnx.Mul"(%x, %s) : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %y2 = "onnx.Conv"(%m2, %w, %none) {kernel_shape = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>, none) -> tensor<1x8x6x6xf32>
  %m3 = "onnx.Mul"(%x, %t) : (tensor<1x4x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y3 = "onnx.Conv"(%m3, %w, %none) {kernel_shape = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>, none) -> tensor<1x8x6x6xf32>
  %m4 = "onnx.Mul"(%v, %s) : (tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  %y4 = "onnx.Conv"(%m4, %w, %none) {kernel_shape = array<i64: 1, 1>} : (tensor<1x4x1x1xf32>, tensor<8x4x1x1xf32>, none) -> tensor<1x8x1x1xf32>
  return %g, %y2, %m2, %y3, %y4 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x1x1xf32>
}

// -----

// With a dynamic batch the factor would differ per item: nothing moves.
// CHECK-LABEL: func.func @dynamic_batch(
// CHECK: "onnx.Mul"(%arg0, %arg1)
// CHECK: "onnx.Conv"(%{{.+}}, %arg2
func.func @dynamic_batch(%x: tensor<1x4x6x6xf32> {kiln.dynamic_dim = "N"}, %s: tensor<1x4x1x1xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<1x8x6x6xf32> {
  %none = onnx.NoValue
  %m = "onnx.Mul"(%x, %s) : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %y = "onnx.Conv"(%m, %w, %none) {kernel_shape = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>, none) -> tensor<1x8x6x6xf32>
  return %y : tensor<1x8x6x6xf32>
}
