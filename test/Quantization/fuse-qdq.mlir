// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-fuse-qdq))' --split-input-file | FileCheck %s
// --kiln-fuse-qdq (FuseQdq.cpp): a QDQ MatMul by a constant int8 weight
// as the integer op it stands for.

// Requantised per tensor: one QLinearMatMul, the DequantizeLinears and the
// QuantizeLinear gone; the weight's scale per output column.
// CHECK-LABEL: func.func @requantized(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<4x3xui8>
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: %[[Y:.*]] = "onnx.QLinearMatMul"(%[[X]], %{{.*}}, %{{.*}}, %[[W:.*]], %[[WS:.*]], %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x3xui8>, tensor<f32>, tensor<ui8>, tensor<3x2xi8>, tensor<2xf32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<4x2xui8>
// CHECK-NOT: onnx.QuantizeLinear
// CHECK: return %[[Y]]
func.func @requantized(%x: tensor<4x3xui8>) -> tensor<4x2xui8> {
  %xs = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %xz = "onnx.Constant"() <{value = dense<128> : tensor<ui8>}> : () -> tensor<ui8>
  %w = "onnx.Constant"() <{value = dense<[[1, -2], [3, 4], [-5, 6]]> : tensor<3x2xi8>}> : () -> tensor<3x2xi8>
  %ws = "onnx.Constant"() <{value = dense<[0.25, 0.125]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %wz = "onnx.Constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>
  %ys = "onnx.Constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %yz = "onnx.Constant"() <{value = dense<10> : tensor<ui8>}> : () -> tensor<ui8>
  %xd = "onnx.DequantizeLinear"(%x, %xs, %xz) <{axis = 1 : i64}> : (tensor<4x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xf32>
  %wd = "onnx.DequantizeLinear"(%w, %ws, %wz) <{axis = 1 : i64}> : (tensor<3x2xi8>, tensor<2xf32>, tensor<i8>) -> tensor<3x2xf32>
  %m = "onnx.MatMul"(%xd, %wd) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %y = "onnx.QuantizeLinear"(%m, %ys, %yz) <{axis = 1 : i64}> : (tensor<4x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x2xui8>
  return %y : tensor<4x2xui8>
}

// -----

// A float result (no QuantizeLinear; the weight without a zero point):
// an integer matmul scaled by xs * ws; a zero point of the weight's type
// is made for MatMulInteger.
// CHECK-LABEL: func.func @float_result(
// CHECK: %[[Z:.*]] = "onnx.Constant"() <{value = dense<0> : tensor<i8>}>
// CHECK: %[[ACC:.*]] = "onnx.MatMulInteger"(%{{.*}}, %{{.*}}, %{{.*}}, %[[Z]]) : (tensor<4x3xui8>, tensor<3x2xi8>, tensor<ui8>, tensor<i8>) -> tensor<4x2xi32>
// CHECK: %[[F:.*]] = "onnx.Cast"(%[[ACC]]) <{to = 1 : i64}>
// CHECK: %[[S:.*]] = "onnx.Mul"(%{{.*}}, %{{.*}}) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: %[[Y:.*]] = "onnx.Mul"(%[[F]], %[[S]])
// CHECK: return %[[Y]]
func.func @float_result(%x: tensor<4x3xui8>) -> tensor<4x2xf32> {
  %xs = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %xz = "onnx.Constant"() <{value = dense<128> : tensor<ui8>}> : () -> tensor<ui8>
  %w = "onnx.Constant"() <{value = dense<[[1, -2], [3, 4], [-5, 6]]> : tensor<3x2xi8>}> : () -> tensor<3x2xi8>
  %ws = "onnx.Constant"() <{value = dense<0.25> : tensor<f32>}> : () -> tensor<f32>
  %none = "onnx.NoValue"() : () -> none
  %xd = "onnx.DequantizeLinear"(%x, %xs, %xz) <{axis = 1 : i64}> : (tensor<4x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xf32>
  %wd = "onnx.DequantizeLinear"(%w, %ws, %none) <{axis = 1 : i64}> : (tensor<3x2xi8>, tensor<f32>, none) -> tensor<3x2xf32>
  %m = "onnx.MatMul"(%xd, %wd) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %m : tensor<4x2xf32>
}

// -----

// Left as they are: a weight that is not a constant, and an activation
// scaled per channel (QLinearMatMul has one scale for all of A).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: onnx.QLinearMatMul
// CHECK-NOT: onnx.MatMulInteger
// CHECK-COUNT-2: "onnx.MatMul"
func.func @kept(%x: tensor<4x3xui8>, %w: tensor<3x2xi8>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %xs = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %xsc = "onnx.Constant"() <{value = dense<[0.5, 0.25, 1.0]> : tensor<3xf32>}> : () -> tensor<3xf32>
  %c = "onnx.Constant"() <{value = dense<[[1, -2], [3, 4], [-5, 6]]> : tensor<3x2xi8>}> : () -> tensor<3x2xi8>
  %ws = "onnx.Constant"() <{value = dense<0.25> : tensor<f32>}> : () -> tensor<f32>
  %none = "onnx.NoValue"() : () -> none
  %xd = "onnx.DequantizeLinear"(%x, %xs, %none) <{axis = 1 : i64}> : (tensor<4x3xui8>, tensor<f32>, none) -> tensor<4x3xf32>
  %xdc = "onnx.DequantizeLinear"(%x, %xsc, %none) <{axis = 1 : i64}> : (tensor<4x3xui8>, tensor<3xf32>, none) -> tensor<4x3xf32>
  %wd = "onnx.DequantizeLinear"(%w, %ws, %none) <{axis = 1 : i64}> : (tensor<3x2xi8>, tensor<f32>, none) -> tensor<3x2xf32>
  %cd = "onnx.DequantizeLinear"(%c, %ws, %none) <{axis = 1 : i64}> : (tensor<3x2xi8>, tensor<f32>, none) -> tensor<3x2xf32>
  %m0 = "onnx.MatMul"(%xd, %wd) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %m1 = "onnx.MatMul"(%xdc, %cd) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %m0, %m1 : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// A QDQ Conv requantised per tensor, its bias an int32 DequantizeLinear at
// scale xs * ws (0.5 * [0.25, 0.125]): one QLinearConv taking the int32
// bias, the conv's attributes kept; every DequantizeLinear and the
// QuantizeLinear gone.
// CHECK-LABEL: func.func @conv_requantized(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x3x4x4xui8>
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: %[[Y:.*]] = "onnx.QLinearConv"(%[[X]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[B:.*]]) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<2x3x3x3xi8>, tensor<2xf32>, tensor<i8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x4x4xui8>
// CHECK-NOT: onnx.QuantizeLinear
// CHECK: return %[[Y]]
func.func @conv_requantized(%x: tensor<1x3x4x4xui8>) -> tensor<1x2x4x4xui8> {
  %xs = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %xz = "onnx.Constant"() <{value = dense<128> : tensor<ui8>}> : () -> tensor<ui8>
  %w = "onnx.Constant"() <{value = dense<3> : tensor<2x3x3x3xi8>}> : () -> tensor<2x3x3x3xi8>
  %ws = "onnx.Constant"() <{value = dense<[0.25, 0.125]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %wz = "onnx.Constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>
  %bq = "onnx.Constant"() <{value = dense<[100, -7]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %bs = "onnx.Constant"() <{value = dense<[0.125, 0.0625]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %ys = "onnx.Constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %yz = "onnx.Constant"() <{value = dense<10> : tensor<ui8>}> : () -> tensor<ui8>
  %none = onnx.NoValue
  %xd = "onnx.DequantizeLinear"(%x, %xs, %xz) <{axis = 1 : i64}> : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xf32>
  %wd = "onnx.DequantizeLinear"(%w, %ws, %wz) <{axis = 0 : i64}> : (tensor<2x3x3x3xi8>, tensor<2xf32>, tensor<i8>) -> tensor<2x3x3x3xf32>
  %bd = "onnx.DequantizeLinear"(%bq, %bs, %none) <{axis = 0 : i64}> : (tensor<2xi32>, tensor<2xf32>, none) -> tensor<2xf32>
  %c = "onnx.Conv"(%xd, %wd, %bd) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = "onnx.QuantizeLinear"(%c, %ys, %yz) <{axis = 1 : i64}> : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
  return %y : tensor<1x2x4x4xui8>
}

// -----

// A float bias (not at scale xs * ws as int32): the conv stays float out,
// an integer conv scaled back by xs * ws per channel ([2, 1, 1]) plus the
// bias reshaped to [2, 1, 1]; the QuantizeLinear stays.
// CHECK-LABEL: func.func @conv_float_bias(
// CHECK: %[[ACC:.*]] = "onnx.ConvInteger"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{auto_pad = "NOTSET", group = 1 : i64}> : (tensor<1x3x4x4xui8>, tensor<2x3x1x1xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x2x4x4xi32>
// CHECK: %[[F:.*]] = "onnx.Cast"(%[[ACC]]) <{to = 1 : i64}>
// CHECK: %[[WS:.*]] = "onnx.Reshape"(%{{.*}}, %{{.*}}) <{allowzero = 0 : i64}> : (tensor<2xf32>, tensor<3xi64>) -> tensor<2x1x1xf32>
// CHECK: %[[S:.*]] = "onnx.Mul"(%[[WS]], %{{.*}}) : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
// CHECK: %[[M:.*]] = "onnx.Mul"(%[[F]], %[[S]])
// CHECK: %[[B:.*]] = "onnx.Reshape"(%{{.*}}, %{{.*}}) <{allowzero = 0 : i64}> : (tensor<2xf32>, tensor<3xi64>) -> tensor<2x1x1xf32>
// CHECK: %[[Y:.*]] = "onnx.Add"(%[[M]], %[[B]])
// CHECK: "onnx.QuantizeLinear"(%[[Y]]
func.func @conv_float_bias(%x: tensor<1x3x4x4xui8>) -> tensor<1x2x4x4xui8> {
  %xs = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %xz = "onnx.Constant"() <{value = dense<128> : tensor<ui8>}> : () -> tensor<ui8>
  %w = "onnx.Constant"() <{value = dense<3> : tensor<2x3x1x1xi8>}> : () -> tensor<2x3x1x1xi8>
  %ws = "onnx.Constant"() <{value = dense<[0.25, 0.125]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %wz = "onnx.Constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>
  %b = "onnx.Constant"() <{value = dense<[1.5, -2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %ys = "onnx.Constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %yz = "onnx.Constant"() <{value = dense<10> : tensor<ui8>}> : () -> tensor<ui8>
  %xd = "onnx.DequantizeLinear"(%x, %xs, %xz) <{axis = 1 : i64}> : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xf32>
  %wd = "onnx.DequantizeLinear"(%w, %ws, %wz) <{axis = 0 : i64}> : (tensor<2x3x1x1xi8>, tensor<2xf32>, tensor<i8>) -> tensor<2x3x1x1xf32>
  %c = "onnx.Conv"(%xd, %wd, %b) <{auto_pad = "NOTSET", group = 1 : i64}> : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = "onnx.QuantizeLinear"(%c, %ys, %yz) <{axis = 1 : i64}> : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
  return %y : tensor<1x2x4x4xui8>
}

// -----

// The pairs move through the ops that give the same result on the 8-bit
// values (QdqPropagation.cpp): a DequantizeLinear down through Reshape
// and MaxPool, the QuantizeLinear after it up through Relu (as Max with
// its zero point), and the pair left between cancels; the float Relu
// and MaxPool go.
// CHECK-LABEL: func.func @moves(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x4x6x6xui8>
// CHECK-NOT: onnx.DequantizeLinear
// CHECK-NOT: onnx.QuantizeLinear
// CHECK: %[[P:.*]], %{{.*}} = "onnx.MaxPool"(%[[X]]) {{.*}} : (tensor<1x4x6x6xui8>) -> (tensor<1x4x3x3xui8>, none)
// CHECK: %[[R:.*]] = "onnx.Reshape"(%[[P]], %{{.*}}) {{.*}} -> tensor<1x36xui8>
// CHECK: %[[Z:.*]] = "onnx.Constant"() <{value = dense<10> : tensor<ui8>}>
// CHECK: %[[Y:.*]] = "onnx.Max"(%[[R]], %[[Z]]) : (tensor<1x36xui8>, tensor<ui8>) -> tensor<1x36xui8>
// CHECK: return %[[Y]]
func.func @moves(%x: tensor<1x4x6x6xui8>) -> tensor<1x36xui8> {
  %s = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %z = "onnx.Constant"() <{value = dense<10> : tensor<ui8>}> : () -> tensor<ui8>
  %shape = "onnx.Constant"() <{value = dense<[1, 36]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %xd = "onnx.DequantizeLinear"(%x, %s, %z) <{axis = 1 : i64}> : (tensor<1x4x6x6xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x6x6xf32>
  %p, %i = "onnx.MaxPool"(%xd) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}> : (tensor<1x4x6x6xf32>) -> (tensor<1x4x3x3xf32>, none)
  %r = "onnx.Reshape"(%p, %shape) <{allowzero = 0 : i64}> : (tensor<1x4x3x3xf32>, tensor<2xi64>) -> tensor<1x36xf32>
  %a = "onnx.Relu"(%r) : (tensor<1x36xf32>) -> tensor<1x36xf32>
  %y = "onnx.QuantizeLinear"(%a, %s, %z) <{axis = 1 : i64}> : (tensor<1x36xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x36xui8>
  return %y : tensor<1x36xui8>
}

// -----

// A Concat of inputs at other scales than its QuantizeLinear's: each
// input requantised (QuantizeLinear(DequantizeLinear)), the Concat on the
// 8-bit values; the input already at the output's parameters passes as it
// is. A Clip before a QuantizeLinear becomes an integer Clip at the
// quantised bounds (-1 -> 0 - 2 clamped to 0; 3 -> 6 + 2 = 8).
// CHECK-LABEL: func.func @concat_clip(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<2x3xui8>, %[[B:[a-z0-9_]+]]: tensor<2x3xui8>
// CHECK: %[[AD:.*]] = "onnx.DequantizeLinear"(%[[A]],
// CHECK: %[[AQ:.*]] = "onnx.QuantizeLinear"(%[[AD]],
// CHECK: %[[C:.*]] = "onnx.Concat"(%[[AQ]], %[[B]]) <{axis = 0 : i64}> : (tensor<2x3xui8>, tensor<2x3xui8>) -> tensor<4x3xui8>
// CHECK-DAG: %[[LO:.*]] = "onnx.Constant"() <{value = dense<0> : tensor<ui8>}>
// CHECK-DAG: %[[HI:.*]] = "onnx.Constant"() <{value = dense<8> : tensor<ui8>}>
// CHECK: %[[Y:.*]] = "onnx.Clip"(%[[C]], %[[LO]], %[[HI]]) : (tensor<4x3xui8>, tensor<ui8>, tensor<ui8>) -> tensor<4x3xui8>
// CHECK-NOT: onnx.QuantizeLinear
// CHECK: return %[[Y]]
func.func @concat_clip(%a: tensor<2x3xui8>, %b: tensor<2x3xui8>) -> tensor<4x3xui8> {
  %sa = "onnx.Constant"() <{value = dense<0.25> : tensor<f32>}> : () -> tensor<f32>
  %s = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %z = "onnx.Constant"() <{value = dense<2> : tensor<ui8>}> : () -> tensor<ui8>
  %lo = "onnx.Constant"() <{value = dense<-1.0> : tensor<f32>}> : () -> tensor<f32>
  %hi = "onnx.Constant"() <{value = dense<3.0> : tensor<f32>}> : () -> tensor<f32>
  %ad = "onnx.DequantizeLinear"(%a, %sa, %z) <{axis = 1 : i64}> : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  %bd = "onnx.DequantizeLinear"(%b, %s, %z) <{axis = 1 : i64}> : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  %c = "onnx.Concat"(%ad, %bd) <{axis = 0 : i64}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %k = "onnx.Clip"(%c, %lo, %hi) : (tensor<4x3xf32>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
  %y = "onnx.QuantizeLinear"(%k, %s, %z) <{axis = 1 : i64}> : (tensor<4x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  return %y : tensor<4x3xui8>
}

// -----

// Nothing moves through an op that changes values (Add), through a
// per-axis pair, or when the float result has another reader: the
// Transpose's result feeds the return as well as the QuantizeLinear.
// CHECK-LABEL: func.func @stays(
// CHECK: "onnx.Add"({{.*}}) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "onnx.Transpose"({{.*}}) {{.*}} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: "onnx.QuantizeLinear"
func.func @stays(%a: tensor<2x3xui8>) -> (tensor<3x2xui8>, tensor<3x2xf32>) {
  %s = "onnx.Constant"() <{value = dense<[0.5, 0.25, 0.125]> : tensor<3xf32>}> : () -> tensor<3xf32>
  %z = "onnx.Constant"() <{value = dense<2> : tensor<3xui8>}> : () -> tensor<3xui8>
  %s1 = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %z1 = "onnx.Constant"() <{value = dense<2> : tensor<ui8>}> : () -> tensor<ui8>
  %ad = "onnx.DequantizeLinear"(%a, %s, %z) <{axis = 1 : i64}> : (tensor<2x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xf32>
  %sum = "onnx.Add"(%ad, %ad) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = "onnx.Transpose"(%sum) <{perm = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = "onnx.QuantizeLinear"(%t, %s1, %z1) <{axis = 1 : i64}> : (tensor<3x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<3x2xui8>
  return %y, %t : tensor<3x2xui8>, tensor<3x2xf32>
}

// -----

// A QDQ Gemm with transB = 1 and alpha 2: its weight transposed to [K, N]
// at compile time (the per-channel axis 0 becomes 1), alpha in the
// weight's scale, C added after the integer matmul scaled back to float.
// CHECK-LABEL: func.func @gemm(
// CHECK-DAG: %[[W:.*]] = "onnx.Constant"() <{value = dense<{{\[\[}}1, 3], [-2, 4]]> : tensor<2x2xi8>}>
// CHECK-DAG: %[[WS:.*]] = "onnx.Constant"() <{value = dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>}>
// CHECK: %[[ACC:.*]] = "onnx.MatMulInteger"(%{{.*}}, %[[W]], %{{.*}}, %{{.*}}) : (tensor<4x2xui8>, tensor<2x2xi8>, tensor<ui8>, tensor<i8>) -> tensor<4x2xi32>
// CHECK: %[[F:.*]] = "onnx.Cast"(%[[ACC]])
// CHECK: %[[S:.*]] = "onnx.Mul"(%{{.*}}, %[[WS]])
// CHECK: %[[M:.*]] = "onnx.Mul"(%[[F]], %[[S]])
// CHECK: %[[Y:.*]] = "onnx.Add"(%[[M]], %{{.*}})
// CHECK-NOT: onnx.Gemm
// CHECK: return %[[Y]]
func.func @gemm(%x: tensor<4x2xui8>) -> tensor<4x2xf32> {
  %xs = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %xz = "onnx.Constant"() <{value = dense<128> : tensor<ui8>}> : () -> tensor<ui8>
  %w = "onnx.Constant"() <{value = dense<[[1, -2], [3, 4]]> : tensor<2x2xi8>}> : () -> tensor<2x2xi8>
  %ws = "onnx.Constant"() <{value = dense<[0.25, 0.5]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %c = "onnx.Constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %none = "onnx.NoValue"() : () -> none
  %xd = "onnx.DequantizeLinear"(%x, %xs, %xz) <{axis = 1 : i64}> : (tensor<4x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x2xf32>
  %wd = "onnx.DequantizeLinear"(%w, %ws, %none) <{axis = 0 : i64}> : (tensor<2x2xi8>, tensor<2xf32>, none) -> tensor<2x2xf32>
  %y = "onnx.Gemm"(%xd, %wd, %c) <{alpha = 2.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 1 : i64}> : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
