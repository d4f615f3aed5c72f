// RUN: kiln-opt %s --onnx-shape-inference --split-input-file | FileCheck %s
// Shape functions of the onnx ops, run to a fixed point by
// --onnx-shape-inference; the function signature follows what it returns.

// CHECK-LABEL: func.func @unary_chain(
// CHECK-SAME: -> tensor<2x?x3xf32>
func.func @unary_chain(%x: tensor<2x?x3xf32>) -> tensor<*xf32> {
  // CHECK: "onnx.Relu"(%{{.*}}) : (tensor<2x?x3xf32>) -> tensor<2x?x3xf32>
  // CHECK: "onnx.Sigmoid"(%{{.*}}) : (tensor<2x?x3xf32>) -> tensor<2x?x3xf32>
  %0 = "onnx.Relu"(%x) : (tensor<2x?x3xf32>) -> tensor<*xf32>
  %1 = "onnx.Sigmoid"(%0) : (tensor<*xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @unary_unranked(
// CHECK-SAME: -> tensor<*xf32>
func.func @unary_unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // CHECK: "onnx.Exp"(%{{.*}}) : (tensor<*xf32>) -> tensor<*xf32>
  %0 = "onnx.Exp"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// A result that is already partly known keeps its static dims and gains
// the inferred ones.
// CHECK-LABEL: func.func @unary_merge(
// CHECK-SAME: -> tensor<5x4xf32>
func.func @unary_merge(%x: tensor<?x4xf32>) -> tensor<5x?xf32> {
  // CHECK: "onnx.Neg"(%{{.*}}) : (tensor<?x4xf32>) -> tensor<5x4xf32>
  %0 = "onnx.Neg"(%x) : (tensor<?x4xf32>) -> tensor<5x?xf32>
  return %0 : tensor<5x?xf32>
}

// -----

// CHECK-LABEL: func.func @dropout_mask(
// CHECK-SAME: -> (tensor<2x3xf32>, tensor<2x3xi1>)
func.func @dropout_mask(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xi1>) {
  %none = onnx.NoValue
  // CHECK: "onnx.Dropout"{{.*}} -> (tensor<2x3xf32>, tensor<2x3xi1>)
  %0:2 = "onnx.Dropout"(%x, %none, %none) : (tensor<2x3xf32>, none, none) -> (tensor<*xf32>, tensor<*xi1>)
  return %0#0, %0#1 : tensor<*xf32>, tensor<*xi1>
}

// -----

// CHECK-LABEL: func.func @broadcast_static(
// CHECK-SAME: -> tensor<3x4x5xf32>
func.func @broadcast_static(%a: tensor<3x1x5xf32>, %b: tensor<4x1xf32>) -> tensor<*xf32> {
  // CHECK: "onnx.Add"(%{{.*}}, %{{.*}}) : (tensor<3x1x5xf32>, tensor<4x1xf32>) -> tensor<3x4x5xf32>
  %0 = "onnx.Add"(%a, %b) : (tensor<3x1x5xf32>, tensor<4x1xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// A dynamic dim against 1 stays dynamic; against a static dim > 1 it takes
// that dim (in either operand order).
// CHECK-LABEL: func.func @broadcast_dynamic(
// CHECK-SAME: -> (tensor<?x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<?x4xf32>, tensor<?x1xf32>)
func.func @broadcast_dynamic(%a: tensor<?x4xf32>, %b: tensor<1x4xf32>, %c: tensor<3x1xf32>, %d: tensor<?x1xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<?x?xf32>) {
  // CHECK: "onnx.Sub"(%{{.*}}, %{{.*}}) : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %0 = "onnx.Sub"(%a, %b) : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Mul"(%{{.*}}, %{{.*}}) : (tensor<?x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  %1 = "onnx.Mul"(%a, %c) : (tensor<?x4xf32>, tensor<3x1xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Mul"(%{{.*}}, %{{.*}}) : (tensor<3x1xf32>, tensor<?x4xf32>) -> tensor<3x4xf32>
  %2 = "onnx.Mul"(%c, %a) : (tensor<3x1xf32>, tensor<?x4xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Max"(%{{.*}}, %{{.*}}) : (tensor<?x1xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: "onnx.Div"(%{{.*}}, %{{.*}}) : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  %3 = "onnx.Max"(%d, %a) : (tensor<?x1xf32>, tensor<?x4xf32>) -> tensor<*xf32>
  %4 = "onnx.Div"(%d, %d) : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  return %0, %1, %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_rank0(
// CHECK-SAME: -> (tensor<2x3xf32>, tensor<f32>, tensor<2x3xi1>)
func.func @broadcast_rank0(%s: tensor<f32>, %x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xi1>) {
  // CHECK: "onnx.Mul"(%{{.*}}, %{{.*}}) : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = "onnx.Mul"(%s, %x) : (tensor<f32>, tensor<2x3xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Add"(%{{.*}}, %{{.*}}) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "onnx.Add"(%s, %s) : (tensor<f32>, tensor<f32>) -> tensor<*xf32>
  // CHECK: "onnx.Less"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>
  %2 = "onnx.Less"(%x, %s) : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xi1>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xi1>
}

// -----

// CHECK-LABEL: func.func @broadcast_variadic(
// CHECK-SAME: -> (tensor<2x3xf32>, tensor<4x2x3xf32>)
func.func @broadcast_variadic(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %y: tensor<f32>, %z: tensor<4x1x1xf32>)
    -> (tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.Where"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %0 = "onnx.Where"(%c, %x, %y) : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<*xf32>
  // CHECK: "onnx.Sum"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<4x1x1xf32>, tensor<3xf32>) -> tensor<4x2x3xf32>
  %1 = "onnx.Sum"(%0, %z, %x) : (tensor<*xf32>, tensor<4x1x1xf32>, tensor<3xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// An unranked operand leaves the result unranked.
// CHECK-LABEL: func.func @broadcast_unranked(
// CHECK-SAME: -> tensor<*xf32>
func.func @broadcast_unranked(%a: tensor<*xf32>, %b: tensor<4xf32>) -> tensor<*xf32> {
  // CHECK: "onnx.Add"(%{{.*}}, %{{.*}}) : (tensor<*xf32>, tensor<4xf32>) -> tensor<*xf32>
  %0 = "onnx.Add"(%a, %b) : (tensor<*xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_vectors(
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32>, tensor<2xf32>, tensor<2x4xf32>)
func.func @matmul_vectors(%v: tensor<3xf32>, %m: tensor<3x4xf32>, %n: tensor<2x3xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.MatMul"(%{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  %0 = "onnx.MatMul"(%v, %v) : (tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32>
  // CHECK: "onnx.MatMul"(%{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  %1 = "onnx.MatMul"(%v, %m) : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<*xf32>
  // CHECK: "onnx.MatMul"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  %2 = "onnx.MatMul"(%n, %v) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32>
  // CHECK: "onnx.MatMul"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %3 = "onnx.MatMul"(%n, %m) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_batched(
// CHECK-SAME: -> (tensor<2x5x3x6xf32>, tensor<?x7x3x6xf32>, tensor<5x6xf32>)
func.func @matmul_batched(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>, %c: tensor<?x1x3x?xf32>, %d: tensor<7x?x6xf32>, %v: tensor<4xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.MatMul"(%{{.*}}, %{{.*}}) : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<*xf32>
  // CHECK: "onnx.MatMul"(%{{.*}}, %{{.*}}) : (tensor<?x1x3x?xf32>, tensor<7x?x6xf32>) -> tensor<?x7x3x6xf32>
  %1 = "onnx.MatMul"(%c, %d) : (tensor<?x1x3x?xf32>, tensor<7x?x6xf32>) -> tensor<*xf32>
  // CHECK: "onnx.MatMul"(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<5x4x6xf32>) -> tensor<5x6xf32>
  %2 = "onnx.MatMul"(%v, %b) : (tensor<4xf32>, tensor<5x4x6xf32>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @gemm(
// CHECK-SAME: -> (tensor<2x5xf32>, tensor<3x5xf32>, tensor<3x4xf32>)
func.func @gemm(%a: tensor<2x4xf32>, %at: tensor<4x3xf32>, %b: tensor<4x5xf32>, %bt: tensor<5x4xf32>, %c: tensor<5xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  // CHECK: "onnx.Gemm"{{.*}} : (tensor<2x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %0 = "onnx.Gemm"(%a, %b, %c) : (tensor<2x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Gemm"{{.*}}transA = 1 : i64, transB = 1 : i64{{.*}} : (tensor<4x3xf32>, tensor<5x4xf32>, none) -> tensor<3x5xf32>
  %1 = "onnx.Gemm"(%at, %bt, %none) {transA = 1 : i64, transB = 1 : i64} : (tensor<4x3xf32>, tensor<5x4xf32>, none) -> tensor<*xf32>
  // CHECK: "onnx.Gemm"{{.*}}transA = 1 : i64, transB = 0 : i64{{.*}} : (tensor<4x3xf32>, tensor<4x4xf32>, none) -> tensor<3x4xf32>
  %sq = "onnx.Transpose"(%bt) {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<*xf32>
  %g = "onnx.MatMul"(%sq, %bt) : (tensor<*xf32>, tensor<5x4xf32>) -> tensor<*xf32>
  %2 = "onnx.Gemm"(%at, %g, %none) {transA = 1 : i64} : (tensor<4x3xf32>, tensor<*xf32>, none) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Output size: floor((in + pad_begin + pad_end - ((k - 1) * d + 1)) / s) + 1.
// CHECK-LABEL: func.func @conv_explicit(
// CHECK-SAME: -> (tensor<1x8x16x16xf32>, tensor<1x4x6x6xf32>, tensor<1x1x5x7xf32>, tensor<?x8x8xf32>)
func.func @conv_explicit(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>,
                         %x2: tensor<1x3x10x10xf32>, %w2: tensor<4x3x3x3xf32>,
                         %x3: tensor<1x1x5x5xf32>, %w3: tensor<1x1x3x3xf32>,
                         %x4: tensor<?x3x10xf32>, %w4: tensor<8x3x3xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  // CHECK: "onnx.Conv"{{.*}} -> tensor<1x8x16x16xf32>
  %0 = "onnx.Conv"(%x, %w, %b) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Conv"{{.*}} -> tensor<1x4x6x6xf32>
  %1 = "onnx.Conv"(%x2, %w2, %none) {dilations = array<i64: 2, 2>} : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  // Pads are [x1_begin, x2_begin, x1_end, x2_end].
  // CHECK: "onnx.Conv"{{.*}} -> tensor<1x1x5x7xf32>
  %2 = "onnx.Conv"(%x3, %w3, %none) {pads = array<i64: 0, 1, 2, 3>} : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>, none) -> tensor<*xf32>
  // CHECK: "onnx.Conv"{{.*}} -> tensor<?x8x8xf32>
  %3 = "onnx.Conv"(%x4, %w4, %none) : (tensor<?x3x10xf32>, tensor<8x3x3xf32>, none) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @conv_auto_pad_group(
// CHECK-SAME: -> (tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x6x3x3xf32>, tensor<1x4x7x?xf32>)
func.func @conv_auto_pad_group(%x: tensor<1x3x7x7xf32>, %w: tensor<4x3x3x3xf32>,
                               %xg: tensor<1x4x5x5xf32>, %wg: tensor<6x2x3x3xf32>,
                               %xd: tensor<1x3x7x?xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  // SAME_UPPER: ceil(in / stride).
  // CHECK: "onnx.Conv"{{.*}}auto_pad = "SAME_UPPER"{{.*}} -> tensor<1x4x4x4xf32>
  %0 = "onnx.Conv"(%x, %w, %none) {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>} : (tensor<1x3x7x7xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  // VALID: floor((in - k) / stride) + 1.
  // CHECK: "onnx.Conv"{{.*}}auto_pad = "VALID"{{.*}} -> tensor<1x4x3x3xf32>
  %1 = "onnx.Conv"(%x, %w, %none) {auto_pad = "VALID", strides = array<i64: 2, 2>} : (tensor<1x3x7x7xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  // CHECK: "onnx.Conv"{{.*}}group = 2 : i64{{.*}} -> tensor<1x6x3x3xf32>
  %2 = "onnx.Conv"(%xg, %wg, %none) {group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>, none) -> tensor<*xf32>
  // CHECK: "onnx.Conv"{{.*}}auto_pad = "SAME_LOWER"{{.*}} -> tensor<1x4x7x?xf32>
  %3 = "onnx.Conv"(%xd, %w, %none) {auto_pad = "SAME_LOWER"} : (tensor<1x3x7x?xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @maxpool(
// CHECK-SAME: -> (tensor<1x3x3x3xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>, tensor<1x3x5x5xf32>)
func.func @maxpool(%x: tensor<1x3x7x7xf32>, %y: tensor<1x3x9x9xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xi64>, tensor<*xf32>) {
  // CHECK: "onnx.MaxPool"{{.*}} -> (tensor<1x3x3x3xf32>, none)
  %0, %n0 = "onnx.MaxPool"(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x7x7xf32>) -> (tensor<*xf32>, none)
  // CHECK: "onnx.MaxPool"{{.*}}ceil_mode = 1 : i64{{.*}} -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>)
  %1, %i1 = "onnx.MaxPool"(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64} : (tensor<1x3x7x7xf32>) -> (tensor<*xf32>, tensor<*xi64>)
  // CHECK: "onnx.MaxPool"{{.*}}dilations = array<i64: 2, 2>{{.*}} -> (tensor<1x3x5x5xf32>, none)
  %2, %n2 = "onnx.MaxPool"(%y) {kernel_shape = array<i64: 3, 3>, dilations = array<i64: 2, 2>} : (tensor<1x3x9x9xf32>) -> (tensor<*xf32>, none)
  return %0, %1, %i1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xi64>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @averagepool(
// CHECK-SAME: -> (tensor<1x3x4x4xf32>, tensor<1x3x5x5xf32>, tensor<?x3x2x?xf32>)
func.func @averagepool(%x: tensor<1x3x8x8xf32>, %y: tensor<?x3x8x?xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.AveragePool"{{.*}} -> tensor<1x3x4x4xf32>
  %0 = "onnx.AveragePool"(%x) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  // CHECK: "onnx.AveragePool"{{.*}}ceil_mode = 1 : i64{{.*}} -> tensor<1x3x5x5xf32>
  %1 = "onnx.AveragePool"(%x) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  // CHECK: "onnx.AveragePool"{{.*}} -> tensor<?x3x2x?xf32>
  %2 = "onnx.AveragePool"(%y) {kernel_shape = array<i64: 4, 4>, strides = array<i64: 4, 4>} : (tensor<?x3x8x?xf32>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @global_pool(
// CHECK-SAME: -> (tensor<2x3x1x1xf32>, tensor<?x8x1xf32>)
func.func @global_pool(%x: tensor<2x3x?x7xf32>, %y: tensor<?x8x5xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.GlobalAveragePool"(%{{.*}}) : (tensor<2x3x?x7xf32>) -> tensor<2x3x1x1xf32>
  %0 = "onnx.GlobalAveragePool"(%x) : (tensor<2x3x?x7xf32>) -> tensor<*xf32>
  // CHECK: "onnx.GlobalMaxPool"(%{{.*}}) : (tensor<?x8x5xf32>) -> tensor<?x8x1xf32>
  %1 = "onnx.GlobalMaxPool"(%y) : (tensor<?x8x5xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME: -> (tensor<4x?x2xf32>, tensor<2x4x?xf32>)
func.func @transpose(%x: tensor<2x?x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.Transpose"(%{{.*}}) : (tensor<2x?x4xf32>) -> tensor<4x?x2xf32>
  %0 = "onnx.Transpose"(%x) : (tensor<2x?x4xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Transpose"(%{{.*}}) <{perm = array<i64: 0, 2, 1>}> : (tensor<2x?x4xf32>) -> tensor<2x4x?xf32>
  %1 = "onnx.Transpose"(%x) {perm = array<i64: 0, 2, 1>} : (tensor<2x?x4xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant_shape(
// CHECK-SAME: -> (tensor<2x12xf32>, tensor<2x6x2xf32>, tensor<?x2xf32>, tensor<0x3xf32>)
func.func @reshape_constant_shape(%x: tensor<2x3x4xf32>, %d: tensor<?x4xf32>, %z: tensor<3x0xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %s0 = "onnx.Constant"() {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %s1 = "onnx.Constant"() {value = dense<[0, -1, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %s2 = "onnx.Constant"() {value = dense<[-1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %s3 = "onnx.Constant"() {value = dense<[0, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  // CHECK: "onnx.Reshape"{{.*}} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  %0 = "onnx.Reshape"(%x, %s0) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  // CHECK: "onnx.Reshape"{{.*}} : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<2x6x2xf32>
  %1 = "onnx.Reshape"(%x, %s1) : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<*xf32>
  // CHECK: "onnx.Reshape"{{.*}} : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  %2 = "onnx.Reshape"(%d, %s2) : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  // With allowzero, a 0 in the shape is a 0, not a copy of the input dim.
  // CHECK: "onnx.Reshape"{{.*}}allowzero = 1 : i64{{.*}} : (tensor<3x0xf32>, tensor<2xi64>) -> tensor<0x3xf32>
  %3 = "onnx.Reshape"(%z, %s3) {allowzero = 1 : i64} : (tensor<3x0xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// A shape that is not a constant gives only the rank.
// CHECK-LABEL: func.func @reshape_dynamic_shape(
// CHECK-SAME: -> tensor<?x?x?xf32>
func.func @reshape_dynamic_shape(%x: tensor<2x3x4xf32>, %s: tensor<3xi64>) -> tensor<*xf32> {
  // CHECK: "onnx.Reshape"{{.*}} : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %0 = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @flatten(
// CHECK-SAME: -> (tensor<6x20xf32>, tensor<1x120xf32>, tensor<24x5xf32>, tensor<?x12xf32>, tensor<?x?xf32>)
func.func @flatten(%x: tensor<2x3x4x5xf32>, %d: tensor<?x3x4xf32>, %u: tensor<*xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.Flatten"(%{{.*}}) <{axis = 2 : i64}> : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>
  %0 = "onnx.Flatten"(%x) {axis = 2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Flatten"(%{{.*}}) <{axis = 0 : i64}> : (tensor<2x3x4x5xf32>) -> tensor<1x120xf32>
  %1 = "onnx.Flatten"(%x) {axis = 0 : i64} : (tensor<2x3x4x5xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Flatten"(%{{.*}}) <{axis = -1 : i64}> : (tensor<2x3x4x5xf32>) -> tensor<24x5xf32>
  %2 = "onnx.Flatten"(%x) {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Flatten"(%{{.*}}) <{axis = 1 : i64}> : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  %3 = "onnx.Flatten"(%d) : (tensor<?x3x4xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Flatten"(%{{.*}}) <{axis = 1 : i64}> : (tensor<*xf32>) -> tensor<?x?xf32>
  %4 = "onnx.Flatten"(%u) : (tensor<*xf32>) -> tensor<*xf32>
  return %0, %1, %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @concat(
// CHECK-SAME: -> (tensor<2x8xf32>, tensor<?x3xf32>, tensor<4x5x6xf32>)
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<?x3xf32>, %d: tensor<2x?xf32>,
                  %e: tensor<4x5x2xf32>, %f: tensor<4x?x4xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.Concat"(%{{.*}}, %{{.*}}) <{axis = 1 : i64}> : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %0 = "onnx.Concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Concat"(%{{.*}}, %{{.*}}) <{axis = 0 : i64}> : (tensor<?x3xf32>, tensor<2x?xf32>) -> tensor<?x3xf32>
  %1 = "onnx.Concat"(%c, %d) {axis = 0 : i64} : (tensor<?x3xf32>, tensor<2x?xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Concat"(%{{.*}}, %{{.*}}) <{axis = -1 : i64}> : (tensor<4x5x2xf32>, tensor<4x?x4xf32>) -> tensor<4x5x6xf32>
  %2 = "onnx.Concat"(%e, %f) {axis = -1 : i64} : (tensor<4x5x2xf32>, tensor<4x?x4xf32>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze_unsqueeze(
// CHECK-SAME: -> (tensor<3x5xf32>, tensor<3x?xf32>, tensor<1x3x5x1xf32>, tensor<3x5x1xf32>, tensor<?x?xf32>)
func.func @squeeze_unsqueeze(%x: tensor<1x3x1x5xf32>, %y: tensor<1x3x1x?xf32>, %z: tensor<3x5xf32>, %n: tensor<2xi64>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %a0 = "onnx.Constant"() {value = dense<[0, -2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a1 = "onnx.Constant"() {value = dense<[0, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a2 = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  // CHECK: "onnx.Squeeze"{{.*}} : (tensor<1x3x1x5xf32>, tensor<2xi64>) -> tensor<3x5xf32>
  %0 = "onnx.Squeeze"(%x, %a0) : (tensor<1x3x1x5xf32>, tensor<2xi64>) -> tensor<*xf32>
  // CHECK: "onnx.Squeeze"{{.*}} : (tensor<1x3x1x?xf32>, tensor<2xi64>) -> tensor<3x?xf32>
  %1 = "onnx.Squeeze"(%y, %a0) : (tensor<1x3x1x?xf32>, tensor<2xi64>) -> tensor<*xf32>
  // CHECK: "onnx.Unsqueeze"{{.*}} : (tensor<3x5xf32>, tensor<2xi64>) -> tensor<1x3x5x1xf32>
  %2 = "onnx.Unsqueeze"(%z, %a1) : (tensor<3x5xf32>, tensor<2xi64>) -> tensor<*xf32>
  // CHECK: "onnx.Unsqueeze"{{.*}} : (tensor<3x5xf32>, tensor<1xi64>) -> tensor<3x5x1xf32>
  %3 = "onnx.Unsqueeze"(%z, %a2) : (tensor<3x5xf32>, tensor<1xi64>) -> tensor<*xf32>
  // Axes that are not constant: only the rank is known.
  // CHECK: "onnx.Squeeze"{{.*}} : (tensor<1x3x1x5xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %4 = "onnx.Squeeze"(%x, %n) : (tensor<1x3x1x5xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0, %1, %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Without axes, every static 1 goes; a dynamic dim leaves it unknown.
// CHECK-LABEL: func.func @squeeze_no_axes(
// CHECK-SAME: -> (tensor<3x5xf32>, tensor<*xf32>)
func.func @squeeze_no_axes(%x: tensor<1x3x1x5xf32>, %y: tensor<1x?xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  // CHECK: "onnx.Squeeze"{{.*}} : (tensor<1x3x1x5xf32>, none) -> tensor<3x5xf32>
  %0 = "onnx.Squeeze"(%x, %none) : (tensor<1x3x1x5xf32>, none) -> tensor<*xf32>
  // CHECK: "onnx.Squeeze"{{.*}} : (tensor<1x?xf32>, none) -> tensor<*xf32>
  %1 = "onnx.Squeeze"(%y, %none) : (tensor<1x?xf32>, none) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @gather(
// CHECK-SAME: -> (tensor<5x2x2x3xf32>, tensor<4x3xf32>, tensor<5x4x?xf32>)
func.func @gather(%x: tensor<5x4x3xf32>, %i: tensor<2x2xi64>, %s: tensor<i64>, %j: tensor<?xi32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.Gather"{{.*}} : (tensor<5x4x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2x3xf32>
  %0 = "onnx.Gather"(%x, %i) {axis = 1 : i64} : (tensor<5x4x3xf32>, tensor<2x2xi64>) -> tensor<*xf32>
  // CHECK: "onnx.Gather"{{.*}} : (tensor<5x4x3xf32>, tensor<i64>) -> tensor<4x3xf32>
  %1 = "onnx.Gather"(%x, %s) : (tensor<5x4x3xf32>, tensor<i64>) -> tensor<*xf32>
  // CHECK: "onnx.Gather"{{.*}} : (tensor<5x4x3xf32>, tensor<?xi32>) -> tensor<5x4x?xf32>
  %2 = "onnx.Gather"(%x, %j) {axis = -1 : i64} : (tensor<5x4x3xf32>, tensor<?xi32>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// The input has a dynamic dim, so Shape does not fold to a constant
// (unless the dims it reads are static).
// CHECK-LABEL: func.func @shape_and_size(
// CHECK-SAME: -> (tensor<4xi64>, tensor<3xi64>, tensor<2xi64>, tensor<4xi64>, tensor<0xi64>, tensor<i64>)
// CHECK: "onnx.Constant"() <{value = dense<> : tensor<0xi64>}> : () -> tensor<0xi64>
func.func @shape_and_size(%x: tensor<2x?x4x5xf32>)
    -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) {
  // CHECK: "onnx.Shape"(%{{.*}}) {{.*}}: (tensor<2x?x4x5xf32>) -> tensor<4xi64>
  %0 = "onnx.Shape"(%x) : (tensor<2x?x4x5xf32>) -> tensor<*xi64>
  // CHECK: "onnx.Shape"(%{{.*}}) <{start = 1 : i64}> : (tensor<2x?x4x5xf32>) -> tensor<3xi64>
  %1 = "onnx.Shape"(%x) {start = 1 : i64} : (tensor<2x?x4x5xf32>) -> tensor<*xi64>
  // CHECK: "onnx.Shape"(%{{.*}}) <{end = -1 : i64, start = 1 : i64}> : (tensor<2x?x4x5xf32>) -> tensor<2xi64>
  %2 = "onnx.Shape"(%x) {start = 1 : i64, end = -1 : i64} : (tensor<2x?x4x5xf32>) -> tensor<*xi64>
  // Out-of-range start and end are clamped to [0, rank].
  // CHECK: "onnx.Shape"(%{{.*}}) <{end = 100 : i64, start = -10 : i64}> : (tensor<2x?x4x5xf32>) -> tensor<4xi64>
  %3 = "onnx.Shape"(%x) {start = -10 : i64, end = 100 : i64} : (tensor<2x?x4x5xf32>) -> tensor<*xi64>
  // An empty range is known: a constant (first, checked above).
  %4 = "onnx.Shape"(%x) {start = 3 : i64, end = 1 : i64} : (tensor<2x?x4x5xf32>) -> tensor<*xi64>
  // CHECK: "onnx.Size"(%{{.*}}) : (tensor<2x?x4x5xf32>) -> tensor<i64>
  %5 = "onnx.Size"(%x) : (tensor<2x?x4x5xf32>) -> tensor<*xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>
}

// -----

// CHECK-LABEL: func.func @constant_of_shape(
// CHECK-SAME: -> (tensor<2x3xi64>, tensor<?x?x?xf32>)
func.func @constant_of_shape(%n: tensor<3xi64>) -> (tensor<*xi64>, tensor<*xf32>) {
  %s = "onnx.Constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  // A constant shape makes the result static (and then it folds).
  // CHECK: "onnx.Constant"() <{value = dense<7> : tensor<2x3xi64>}>
  %0 = "onnx.ConstantOfShape"(%s) {value = dense<7> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<*xi64>
  // CHECK: "onnx.ConstantOfShape"(%{{.*}}) : (tensor<3xi64>) -> tensor<?x?x?xf32>
  %1 = "onnx.ConstantOfShape"(%n) : (tensor<3xi64>) -> tensor<*xf32>
  return %0, %1 : tensor<*xi64>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @expand(
// CHECK-SAME: -> (tensor<2x3x4xf32>, tensor<?x4xf32>)
func.func @expand(%x: tensor<3x1xf32>, %y: tensor<?x1xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %s0 = "onnx.Constant"() {value = dense<[2, 1, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %s1 = "onnx.Constant"() {value = dense<[1, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  // CHECK: "onnx.Expand"{{.*}} : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  %0 = "onnx.Expand"(%x, %s0) : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<*xf32>
  // CHECK: "onnx.Expand"{{.*}} : (tensor<?x1xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %1 = "onnx.Expand"(%y, %s1) : (tensor<?x1xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// torch's cls_token.expand(n, -1, -1) with n read off a dynamic batch:
// the target [n, -1, -1] has its -1s replaced by 1s (Equal with a
// ConstantOfShape of -1s, Where), which the shape function follows; the
// batch's element stays unknown.
// CHECK-LABEL: func.func @expand_keep_dims(
// CHECK: "onnx.Where"
// CHECK: "onnx.Expand"{{.*}} -> tensor<?x1x8xf32>
func.func @expand_keep_dims(%x: tensor<?x4x8xf32>, %cls: tensor<1x1x8xf32>) -> tensor<*xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?x4x8xf32>) -> tensor<3xi64>
  %i0 = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = "onnx.Gather"(%s, %i0) {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m1 = "onnx.Constant"() {value = dense<[-1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %t = "onnx.Concat"(%n, %m1) {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  %three = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ones = "onnx.ConstantOfShape"(%three) {value = dense<[1]> : tensor<1xi64>} : (tensor<1xi64>) -> tensor<3xi64>
  %minus = "onnx.Constant"() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %neg = "onnx.Mul"(%ones, %minus) : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %eq = "onnx.Equal"(%t, %neg) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %w = "onnx.Where"(%eq, %ones, %t) : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %y = "onnx.Expand"(%cls, %w) : (tensor<1x1x8xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// A ConstantOfShape of bools compares with a constant of bools as their
// values say: Equal gives [true, false, true], which picks [2, 5, 2].
// CHECK-LABEL: func.func @bool_fill(
// CHECK: "onnx.Expand"{{.*}} -> tensor<2x5x2xf32>
func.func @bool_fill(%x: tensor<1x1x1xf32>) -> tensor<*xf32> {
  %three = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ones = "onnx.ConstantOfShape"(%three) {value = dense<[true]> : tensor<1xi1>} : (tensor<1xi64>) -> tensor<3xi1>
  %pick = "onnx.Constant"() {value = dense<[true, false, true]> : tensor<3xi1>} : () -> tensor<3xi1>
  %eq = "onnx.Equal"(%ones, %pick) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %two = "onnx.Constant"() {value = dense<2> : tensor<3xi64>} : () -> tensor<3xi64>
  %five = "onnx.Constant"() {value = dense<5> : tensor<3xi64>} : () -> tensor<3xi64>
  %w = "onnx.Where"(%eq, %two, %five) : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %y = "onnx.Expand"(%x, %w) : (tensor<1x1x1xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Range has max(ceil((limit - start) / delta), 0) elements.
// CHECK-LABEL: func.func @range(
// CHECK-SAME: -> (tensor<4xi64>, tensor<5xi64>, tensor<0xi64>, tensor<4xf32>, tensor<?xi64>)
func.func @range(%l: tensor<i64>) -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xf32>, tensor<*xi64>) {
  %c0 = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %c10 = "onnx.Constant"() {value = dense<10> : tensor<i64>} : () -> tensor<i64>
  %c3 = "onnx.Constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %cm2 = "onnx.Constant"() {value = dense<-2> : tensor<i64>} : () -> tensor<i64>
  %f0 = "onnx.Constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %f1 = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %fd = "onnx.Constant"() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %0 = "onnx.Range"(%c0, %c10, %c3) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  %1 = "onnx.Range"(%c10, %c0, %cm2) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  %2 = "onnx.Range"(%c10, %c0, %c3) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  %3 = "onnx.Range"(%f0, %f1, %fd) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<*xf32>
  // CHECK: "onnx.Range"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %4 = "onnx.Range"(%c0, %l, %c3) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  return %0, %1, %2, %3, %4 : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xf32>, tensor<*xi64>
}

// -----

// CHECK-LABEL: func.func @slice(
// CHECK-SAME: -> (tensor<8x8xf32>, tensor<10x8xf32>, tensor<10x2xf32>, tensor<4x8xf32>, tensor<10x0xf32>, tensor<?x3xf32>)
func.func @slice(%x: tensor<10x8xf32>, %d: tensor<?x8xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %c1 = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %cm1 = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c0 = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c2 = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c3 = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c7 = "onnx.Constant"() {value = dense<[7]> : tensor<1xi64>} : () -> tensor<1xi64>
  %cm2 = "onnx.Constant"() {value = dense<[-2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %big = "onnx.Constant"() {value = dense<[1000]> : tensor<1xi64>} : () -> tensor<1xi64>
  %min = "onnx.Constant"() {value = dense<[-9223372036854775808]> : tensor<1xi64>} : () -> tensor<1xi64>
  // [1, -1) on axis 0 (axes absent).
  // CHECK: "onnx.Slice"{{.*}} -> tensor<8x8xf32>
  %0 = "onnx.Slice"(%x, %c1, %cm1, %none, %none) : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<*xf32>
  // Full reverse: start -1, end INT64_MIN, step -1.
  // CHECK: "onnx.Slice"{{.*}} -> tensor<10x8xf32>
  %1 = "onnx.Slice"(%x, %cm1, %min, %c0, %cm1) : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  // End clamped to the dim: [2, 8) step 3 on axis -1 -> {2, 5}.
  // CHECK: "onnx.Slice"{{.*}} -> tensor<10x2xf32>
  %2 = "onnx.Slice"(%x, %c2, %big, %cm1, %c3) : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  // Step -2 from 7 down to (excluding) 0: {7, 5, 3, 1}.
  // CHECK: "onnx.Slice"{{.*}} -> tensor<4x8xf32>
  %3 = "onnx.Slice"(%x, %c7, %c0, %c0, %cm2) : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  // An empty range.
  // CHECK: "onnx.Slice"{{.*}} -> tensor<10x0xf32>
  %4 = "onnx.Slice"(%x, %c3, %c2, %c1, %none) : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<*xf32>
  // A dynamic dim stays dynamic; the sliced static one is known.
  // CHECK: "onnx.Slice"{{.*}} -> tensor<?x3xf32>
  %5 = "onnx.Slice"(%d, %c2, %c7, %cm1, %c2) : (tensor<?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @slice_dynamic_starts(
// CHECK-SAME: -> tensor<?x?xf32>
func.func @slice_dynamic_starts(%x: tensor<10x8xf32>, %s: tensor<1xi64>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %e = "onnx.Constant"() {value = dense<[5]> : tensor<1xi64>} : () -> tensor<1xi64>
  // CHECK: "onnx.Slice"{{.*}} -> tensor<?x?xf32>
  %0 = "onnx.Slice"(%x, %s, %e, %none, %none) : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_attr_axes(
// CHECK-SAME: -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<3xf32>)
func.func @reduce_attr_axes(%x: tensor<2x3x4xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.ReduceMean"{{.*}} -> tensor<2x1x4xf32>
  %0 = "onnx.ReduceMean"(%x) {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  // CHECK: "onnx.ReduceMax"{{.*}} -> tensor<2x4xf32>
  %1 = "onnx.ReduceMax"(%x) {axes = array<i64: -2>, keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  // No axes: every axis is reduced.
  // CHECK: "onnx.ReduceL2"{{.*}} -> tensor<f32>
  %2 = "onnx.ReduceL2"(%x) {keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  // CHECK: "onnx.ReduceProd"{{.*}} -> tensor<1x1x1xf32>
  %3 = "onnx.ReduceProd"(%x) : (tensor<2x3x4xf32>) -> tensor<*xf32>
  // CHECK: "onnx.ReduceMin"{{.*}} -> tensor<3xf32>
  %4 = "onnx.ReduceMin"(%x) {axes = array<i64: 0, 2>, keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  return %0, %1, %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_sum(
// CHECK-SAME: -> (tensor<2x3xf32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<f32>, tensor<?x?x?xf32>, tensor<2x3x4xf32>)
func.func @reduce_sum(%x: tensor<2x3x4xf32>, %n: tensor<1xi64>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %last = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %empty = "onnx.Constant"() {value = dense<> : tensor<0xi64>} : () -> tensor<0xi64>
  // CHECK: "onnx.ReduceSum"{{.*}} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x3xf32>
  %0 = "onnx.ReduceSum"(%x, %last) {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<*xf32>
  // CHECK: "onnx.ReduceSum"{{.*}} : (tensor<2x3x4xf32>, none) -> tensor<1x1x1xf32>
  %1 = "onnx.ReduceSum"(%x, %none) : (tensor<2x3x4xf32>, none) -> tensor<*xf32>
  // noop_with_empty_axes: absent axes reduce nothing.
  // CHECK: "onnx.ReduceSum"{{.*}}noop_with_empty_axes = 1 : i64{{.*}} : (tensor<2x3x4xf32>, none) -> tensor<2x3x4xf32>
  %2 = "onnx.ReduceSum"(%x, %none) {noop_with_empty_axes = 1 : i64} : (tensor<2x3x4xf32>, none) -> tensor<*xf32>
  // An empty axes constant without noop reduces everything.
  // CHECK: "onnx.ReduceSum"{{.*}} : (tensor<2x3x4xf32>, tensor<0xi64>) -> tensor<f32>
  %3 = "onnx.ReduceSum"(%x, %empty) {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<0xi64>) -> tensor<*xf32>
  // Axes not constant: with keepdims, the rank is known.
  // CHECK: "onnx.ReduceSum"{{.*}} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %4 = "onnx.ReduceSum"(%x, %n) : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<*xf32>
  // CHECK: "onnx.ReduceSum"{{.*}} : (tensor<2x3x4xf32>, tensor<0xi64>) -> tensor<2x3x4xf32>
  %5 = "onnx.ReduceSum"(%x, %empty) {noop_with_empty_axes = 1 : i64} : (tensor<2x3x4xf32>, tensor<0xi64>) -> tensor<*xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @argmax(
// CHECK-SAME: -> (tensor<2x1x4xi64>, tensor<2x4xi64>, tensor<2x3xi64>)
func.func @argmax(%x: tensor<2x3x4xf32>) -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) {
  // CHECK: "onnx.ArgMax"{{.*}} -> tensor<2x1x4xi64>
  %0 = "onnx.ArgMax"(%x) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<*xi64>
  // CHECK: "onnx.ArgMax"{{.*}} -> tensor<2x4xi64>
  %1 = "onnx.ArgMax"(%x) {axis = 1 : i64, keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<*xi64>
  // CHECK: "onnx.ArgMin"{{.*}} -> tensor<2x3xi64>
  %2 = "onnx.ArgMin"(%x) {axis = -1 : i64, keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<*xi64>
  return %0, %1, %2 : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>
}

// -----

// CHECK-LABEL: func.func @tile(
// CHECK-SAME: -> (tensor<4x9xf32>, tensor<?x0xf32>, tensor<?x?xf32>)
func.func @tile(%x: tensor<2x3xf32>, %y: tensor<?x3xf32>, %n: tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %r0 = "onnx.Constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r1 = "onnx.Constant"() {value = dense<[2, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  // CHECK: "onnx.Tile"{{.*}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x9xf32>
  %0 = "onnx.Tile"(%x, %r0) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  // CHECK: "onnx.Tile"{{.*}} : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x0xf32>
  %1 = "onnx.Tile"(%y, %r1) : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  // CHECK: "onnx.Tile"{{.*}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %2 = "onnx.Tile"(%x, %n) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @split(
// CHECK-SAME: -> (tensor<2x4xf32>, tensor<4x4xf32>, tensor<6x2xf32>, tensor<6x2xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
func.func @split(%x: tensor<6x4xf32>, %d: tensor<?x4xf32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %sizes = "onnx.Constant"() {value = dense<[2, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  // CHECK: "onnx.Split"{{.*}} : (tensor<6x4xf32>, tensor<2xi64>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
  %0:2 = "onnx.Split"(%x, %sizes) : (tensor<6x4xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>)
  // No split: equal parts.
  // CHECK: "onnx.Split"{{.*}}axis = 1 : i64{{.*}} : (tensor<6x4xf32>, none) -> (tensor<6x2xf32>, tensor<6x2xf32>)
  %1:2 = "onnx.Split"(%x, %none) {axis = 1 : i64} : (tensor<6x4xf32>, none) -> (tensor<*xf32>, tensor<*xf32>)
  // CHECK: "onnx.Split"{{.*}} : (tensor<?x4xf32>, none) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  %2:2 = "onnx.Split"(%d, %none) : (tensor<?x4xf32>, none) -> (tensor<*xf32>, tensor<*xf32>)
  return %0#0, %0#1, %1#0, %1#1, %2#0, %2#1 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Refinements propagate through a chain, and the signature follows.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %{{.*}}: tensor<1x3x8x8xf32>, %{{.*}}: tensor<4x3x3x3xf32>) -> tensor<1x4xf32>
func.func @chain(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // CHECK: "onnx.Conv"{{.*}} -> tensor<1x4x8x8xf32>
  // CHECK: "onnx.Relu"{{.*}} -> tensor<1x4x8x8xf32>
  // CHECK: "onnx.GlobalAveragePool"{{.*}} -> tensor<1x4x1x1xf32>
  // CHECK: "onnx.Flatten"{{.*}} -> tensor<1x4xf32>
  // CHECK: return %{{.*}} : tensor<1x4xf32>
  %0 = "onnx.Conv"(%x, %w, %none) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  %1 = "onnx.Relu"(%0) : (tensor<*xf32>) -> tensor<?x?x?x?xf32>
  %2 = "onnx.GlobalAveragePool"(%1) : (tensor<?x?x?x?xf32>) -> tensor<*xf32>
  %3 = "onnx.Flatten"(%2) : (tensor<*xf32>) -> tensor<*xf32>
  return %3 : tensor<*xf32>
}

// -----

// With ceil_mode, a last window that would start in the right padding is
// dropped (PyTorch / ONNX Runtime / ONNX from opset 19): 5x5, kernel 2,
// stride 2, pads 1 gives 3x3, not 4x4.
// CHECK-LABEL: func.func @maxpool_ceil_last_window(
// CHECK-SAME: -> tensor<1x1x3x3xf32>
func.func @maxpool_ceil_last_window(%x: tensor<1x1x5x5xf32>) -> tensor<*xf32> {
  %0, %n = "onnx.MaxPool"(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, ceil_mode = 1 : i64} : (tensor<1x1x5x5xf32>) -> (tensor<*xf32>, none)
  return %0 : tensor<*xf32>
}

// -----

// Shape values known in part: the static dims of a tensor with a dynamic
// one fold to constants, and a Reshape target built from them and the
// dynamic dim gives a partly static type (torch's attention export).
// CHECK-LABEL: func.func @partial_shapes(
// CHECK-SAME: -> (tensor<i64>, tensor<?x4x64xf32>)
// CHECK-DAG: %[[HEAD:.*]] = "onnx.Constant"() <{value = dense<64> : tensor<i64>}>
// CHECK-DAG: "onnx.Gather"
// CHECK: "onnx.Reshape"(%{{.*}}, %{{.*}}) {{.*}} -> tensor<?x4x64xf32>
// CHECK: return %[[HEAD]], %{{.*}} : tensor<i64>, tensor<?x4x64xf32>
func.func @partial_shapes(%x: tensor<?x1x256xf32>) -> (tensor<*xi64>, tensor<*xf32>) {
  %s = "onnx.Shape"(%x) : (tensor<?x1x256xf32>) -> tensor<*xi64>
  %c0 = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %c2 = "onnx.Constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %c4 = "onnx.Constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %axes = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %four = "onnx.Constant"() {value = dense<[4]> : tensor<1xi64>} : () -> tensor<1xi64>
  %d = "onnx.Gather"(%s, %c2) {axis = 0 : i64} : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %hd = "onnx.Div"(%d, %c4) : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %n = "onnx.Gather"(%s, %c0) {axis = 0 : i64} : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %nu = "onnx.Unsqueeze"(%n, %axes) : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %hu = "onnx.Unsqueeze"(%hd, %axes) : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %t = "onnx.Concat"(%nu, %four, %hu) {axis = 0 : i64} : (tensor<*xi64>, tensor<1xi64>, tensor<*xi64>) -> tensor<*xi64>
  %r = "onnx.Reshape"(%x, %t) : (tensor<?x1x256xf32>, tensor<*xi64>) -> tensor<*xf32>
  return %hd, %r : tensor<*xi64>, tensor<*xf32>
}

// -----

// A Slice of such a shape value (torch's cross-attention export takes the
// embedding width as shape[2:3] to split its packed projection weights)
// is known too: the weight slices get static types.
// CHECK-LABEL: func.func @partial_shape_slice(
// CHECK-SAME: -> tensor<64x64xf32>
// CHECK: "onnx.Slice"(%{{.*}}) : (tensor<192x64xf32>, {{.*}}) -> tensor<64x64xf32>
func.func @partial_shape_slice(%x: tensor<?x1x64xf32>, %w: tensor<192x64xf32>) -> tensor<*xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?x1x64xf32>) -> tensor<*xi64>
  %c2 = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c3 = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c0 = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = "onnx.NoValue"() : () -> none
  %e = "onnx.Slice"(%s, %c2, %c3, %c0, %none) : (tensor<*xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<*xi64>
  %y = "onnx.Slice"(%w, %c0, %e, %c0, %none) : (tensor<192x64xf32>, tensor<1xi64>, tensor<*xi64>, tensor<1xi64>, none) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// DynamicQuantizeLinear: y has x's shape, y_scale and y_zero_point are
// scalars whatever x is.
// CHECK-LABEL: func.func @dynamic_quantize_linear(
// CHECK: "onnx.DynamicQuantizeLinear"(%{{.*}}) : (tensor<2x?xf32>) -> (tensor<2x?xui8>, tensor<f32>, tensor<ui8>)
func.func @dynamic_quantize_linear(%x: tensor<2x?xf32>) -> (tensor<*xui8>, tensor<*xf32>, tensor<*xui8>) {
  %y, %s, %z = "onnx.DynamicQuantizeLinear"(%x) : (tensor<2x?xf32>) -> (tensor<*xui8>, tensor<*xf32>, tensor<*xui8>)
  return %y, %s, %z : tensor<*xui8>, tensor<*xf32>, tensor<*xui8>
}

// -----

// Einsum: letters' dims from the inputs; the implicit output is the
// ellipsis dims and the letters used once, alphabetically; ellipses
// broadcast as numpy's dims do.
// CHECK-LABEL: func.func @einsum(
func.func @einsum(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %c: tensor<3x1x6x7xf32>, %d: tensor<5x7x8xf32>, %e: tensor<4x?xf32>, %g: tensor<6x5xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  // CHECK: "onnx.Einsum"(%{{.*}}, %{{.*}}) <{equation = "bij, bjk -> bik"}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %0 = "onnx.Einsum"(%a, %b) {equation = "bij, bjk -> bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Einsum"(%{{.*}}) <{equation = "kij"}> : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = "onnx.Einsum"(%a) {equation = "kij"} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  // CHECK: "onnx.Einsum"(%{{.*}}, %{{.*}}) <{equation = "...ij,...jk->...ik"}> : (tensor<3x1x6x7xf32>, tensor<5x7x8xf32>) -> tensor<3x5x6x8xf32>
  %2 = "onnx.Einsum"(%c, %d) {equation = "...ij,...jk->...ik"} : (tensor<3x1x6x7xf32>, tensor<5x7x8xf32>) -> tensor<*xf32>
  // A dynamic dim of one input is the other's static one.
  // CHECK: "onnx.Einsum"(%{{.*}}, %{{.*}}) <{equation = "ij,jk"}> : (tensor<4x?xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %3 = "onnx.Einsum"(%e, %g) {equation = "ij,jk"} : (tensor<4x?xf32>, tensor<6x5xf32>) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// GridSample: X's [N, C] and the grid's output dims; RoiAlign: [rois, C,
// output_height, output_width]; Det: the batch dims.
// CHECK-LABEL: func.func @grid_roi_det(
// CHECK: "onnx.GridSample"{{.*}} -> tensor<1x3x5x7xf32>
// CHECK: "onnx.RoiAlign"{{.*}} -> tensor<6x3x2x4xf32>
// CHECK: "onnx.Det"{{.*}} -> tensor<2x5xf32>
func.func @grid_roi_det(%x: tensor<1x3x10x10xf32>, %grid: tensor<1x5x7x2xf32>, %rois: tensor<6x4xf32>, %idx: tensor<6xi64>, %m: tensor<2x5x3x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "onnx.GridSample"(%x, %grid) : (tensor<1x3x10x10xf32>, tensor<1x5x7x2xf32>) -> tensor<*xf32>
  %1 = "onnx.RoiAlign"(%x, %rois, %idx) {output_height = 2 : i64, output_width = 4 : i64} : (tensor<1x3x10x10xf32>, tensor<6x4xf32>, tensor<6xi64>) -> tensor<*xf32>
  %2 = "onnx.Det"(%m) : (tensor<2x5x3x3xf32>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// DFT: two components last; along the axis dft_length (a constant), half
// of it plus one onesided, or unknown when dft_length is a run-time value.
// CHECK-LABEL: func.func @dft(
// CHECK: "onnx.DFT"{{.*}} -> tensor<2x10x4x2xf32>
// CHECK: "onnx.DFT"{{.*}} -> tensor<2x6x4x2xf32>
// CHECK: "onnx.DFT"{{.*}} -> tensor<2x7x4x2xf32>
// CHECK: "onnx.DFT"{{.*}} -> tensor<2x?x4x2xf32>
func.func @dft(%x: tensor<2x10x4x1xf32>, %n: tensor<i64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %len = "onnx.Constant"() {value = dense<12> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.DFT"(%x, %none) {axis = 1 : i64} : (tensor<2x10x4x1xf32>, none) -> tensor<*xf32>
  %1 = "onnx.DFT"(%x, %none) {axis = 1 : i64, onesided = 1 : i64} : (tensor<2x10x4x1xf32>, none) -> tensor<*xf32>
  %2 = "onnx.DFT"(%x, %len) {axis = -3 : i64, onesided = 1 : i64} : (tensor<2x10x4x1xf32>, tensor<i64>) -> tensor<*xf32>
  %3 = "onnx.DFT"(%x, %n) {axis = 1 : i64} : (tensor<2x10x4x1xf32>, tensor<i64>) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// STFT: [batch, (length - frame) / step + 1, bins, 2], the frame length
// frame_length's or the window's.
// CHECK-LABEL: func.func @stft(
// CHECK: "onnx.STFT"{{.*}} -> tensor<1x15x9x2xf32>
// CHECK: "onnx.STFT"{{.*}} -> tensor<1x15x16x2xf32>
// CHECK: "onnx.STFT"{{.*}} -> tensor<1x?x9x2xf32>
func.func @stft(%s: tensor<1x128x1xf32>, %w: tensor<16xf32>, %dynstep: tensor<i64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %step = "onnx.Constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
  %len = "onnx.Constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.STFT"(%s, %step, %none, %len) : (tensor<1x128x1xf32>, tensor<i64>, none, tensor<i64>) -> tensor<*xf32>
  %1 = "onnx.STFT"(%s, %step, %w, %none) {onesided = 0 : i64} : (tensor<1x128x1xf32>, tensor<i64>, tensor<16xf32>, none) -> tensor<*xf32>
  %2 = "onnx.STFT"(%s, %dynstep, %w, %none) : (tensor<1x128x1xf32>, tensor<i64>, tensor<16xf32>, none) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// MaxUnpool: (in - 1) * stride + kernel - pads per spatial dim, or the
// constant output_shape.
// CHECK-LABEL: func.func @max_unpool(
// CHECK: "onnx.MaxUnpool"{{.*}} -> tensor<1x3x8x7xf32>
// CHECK: "onnx.MaxUnpool"{{.*}} -> tensor<1x3x9x9xf32>
func.func @max_unpool(%x: tensor<1x3x4x4xf32>, %i: tensor<1x3x4x4xi64>) -> (tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %shape = "onnx.Constant"() {value = dense<[1, 3, 9, 9]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.MaxUnpool"(%x, %i, %none) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 1>} : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>, none) -> tensor<*xf32>
  %1 = "onnx.MaxUnpool"(%x, %i, %shape) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>, tensor<4xi64>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// The losses: the target's shape without reduction, else a scalar;
// SoftmaxCrossEntropyLoss's log_prob the scores' shape.
// CHECK-LABEL: func.func @losses(
// CHECK: "onnx.NegativeLogLikelihoodLoss"{{.*}} -> tensor<f32>
// CHECK: "onnx.NegativeLogLikelihoodLoss"{{.*}} -> tensor<3x4x5xf32>
// CHECK: "onnx.SoftmaxCrossEntropyLoss"{{.*}} -> (tensor<3x4x5xf32>, tensor<3x6x4x5xf32>)
func.func @losses(%x: tensor<3x6x4x5xf32>, %t: tensor<3x4x5xi64>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %0 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %none) : (tensor<3x6x4x5xf32>, tensor<3x4x5xi64>, none) -> tensor<*xf32>
  %1 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %none) {reduction = "none"} : (tensor<3x6x4x5xf32>, tensor<3x4x5xi64>, none) -> tensor<*xf32>
  %2:2 = "onnx.SoftmaxCrossEntropyLoss"(%x, %t, %none) {reduction = "none"} : (tensor<3x6x4x5xf32>, tensor<3x4x5xi64>, none) -> (tensor<*xf32>, tensor<*xf32>)
  return %0, %1, %2#0, %2#1 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}
