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
