// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear
// (Quantize.cpp), as one elementwise generic each: a per-tensor scale and
// zero point are 0-D tensors read with a () map, per-axis ones are
// reshaped to broadcast along the axis. Quantize is
// saturate(roundeven(x / scale) + zp) in f32, then converted to the
// (signless) 8-bit result; dequantize is (x - zp) * scale.

// Per tensor to uint8: the ui8 zero point converts unsigned, the sum
// clamps to [0, 255] and converts unsigned.
// CHECK-LABEL: func.func @quantize_per_tensor_u8(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>) -> tensor<2x3xi8>
// CHECK: %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[Z:.*]] = arith.constant dense<10> : tensor<i8>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[S]], %[[Z]] : tensor<2x3xf32>, tensor<f32>, tensor<i8>) outs(%{{.*}} : tensor<2x3xi8>)
// CHECK: ^bb0(%[[XV:.*]]: f32, %[[SV:.*]]: f32, %[[ZV:.*]]: i8, %{{.*}}: i8):
// CHECK: %[[Q:.*]] = arith.divf %[[XV]], %[[SV]] : f32
// CHECK: %[[ZF:.*]] = arith.uitofp %[[ZV]] : i8 to f32
// CHECK: %[[R:.*]] = math.roundeven %[[Q]] : f32
// CHECK: %[[SUM:.*]] = arith.addf %[[R]], %[[ZF]] : f32
// CHECK: %[[LO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[CL:.*]] = arith.maximumf %[[SUM]], %[[LO]] : f32
// CHECK: %[[HI:.*]] = arith.constant 2.550000e+02 : f32
// CHECK: %[[C:.*]] = arith.minimumf %[[CL]], %[[HI]] : f32
// NaN (a zero scale) becomes 0 rather than a poison conversion.
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[C]], %[[C]] : f32
// CHECK: %[[G:.*]] = arith.select %[[NAN]], %{{.*}}, %[[C]] : f32
// CHECK: %[[I:.*]] = arith.fptoui %[[G]] : f32 to i8
// CHECK: linalg.yield %[[I]] : i8
// CHECK: return %[[Y]] : tensor<2x3xi8>
func.func @quantize_per_tensor_u8(%x: tensor<2x3xf32>) -> tensor<2x3xui8> {
  %s = "onnx.Constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
  %z = "onnx.Constant"() <{value = dense<10> : tensor<ui8>}> : () -> tensor<ui8>
  %0 = "onnx.QuantizeLinear"(%x, %s, %z) <{axis = 1 : i64}> : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// No zero point: a constant 0 is added and the result is uint8.
// CHECK-LABEL: func.func @quantize_no_zero_point(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>) -> tensor<4xi8>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[R:.*]] = math.roundeven %{{.*}} : f32
// CHECK: arith.addf %[[R]], %[[ZERO]] : f32
// CHECK: arith.constant 2.550000e+02 : f32
// CHECK: arith.fptoui %{{.*}} : f32 to i8
func.func @quantize_no_zero_point(%x: tensor<4xf32>) -> tensor<4xui8> {
  %s = "onnx.Constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
  %none = onnx.NoValue
  %0 = "onnx.QuantizeLinear"(%x, %s, %none) <{axis = 1 : i64}> : (tensor<4xf32>, tensor<f32>, none) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Per axis (axis 1, int8): scale and zero point [3] become [1, 3, 1, 1]
// and are read with a (d0, d1, 0, 0) map; the zero point converts signed
// and the sum clamps to [-128, 127].
// CHECK-LABEL: func.func @quantize_per_axis_i8(
// CHECK-SAME: %[[X:.*]]: tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xi8>
// CHECK: %[[S:.*]] = arith.constant dense<[5.000000e-01, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK: %[[Z:.*]] = arith.constant dense<[0, -3, 5]> : tensor<3xi8>
// CHECK: %[[S4:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0, 1, 2, 3]] output_shape [1, 3, 1, 1] : tensor<3xf32> into tensor<1x3x1x1xf32>
// CHECK: %[[Z4:.*]] = tensor.expand_shape %[[Z]] {{\[\[}}0, 1, 2, 3]] output_shape [1, 3, 1, 1] : tensor<3xi8> into tensor<1x3x1x1xi8>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME: ins(%[[X]], %[[S4]], %[[Z4]] : tensor<1x3x2x2xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xi8>)
// CHECK: arith.divf
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK: math.roundeven
// CHECK: arith.constant -1.280000e+02 : f32
// CHECK: arith.maximumf
// CHECK: arith.constant 1.270000e+02 : f32
// CHECK: arith.minimumf
// CHECK: arith.fptosi %{{.*}} : f32 to i8
func.func @quantize_per_axis_i8(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xi8> {
  %s = "onnx.Constant"() <{value = dense<[5.000000e-01, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>}> : () -> tensor<3xf32>
  %z = "onnx.Constant"() <{value = dense<[0, -3, 5]> : tensor<3xi8>}> : () -> tensor<3xi8>
  %0 = "onnx.QuantizeLinear"(%x, %s, %z) <{axis = 1 : i64}> : (tensor<1x3x2x2xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3x2x2xi8>
  return %0 : tensor<1x3x2x2xi8>
}

// -----

// Dequantize uint8 per tensor: x and the zero point convert unsigned,
// (x - zp) * scale.
// CHECK-LABEL: func.func @dequantize_per_tensor_u8(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xi8>) -> tensor<2x3xf32>
// CHECK: %[[S:.*]] = arith.constant dense<2.500000e-01> : tensor<f32>
// CHECK: %[[Z:.*]] = arith.constant dense<-128> : tensor<i8>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: ins(%[[X]], %[[S]], %[[Z]] : tensor<2x3xi8>, tensor<f32>, tensor<i8>)
// CHECK: ^bb0(%[[XV:.*]]: i8, %[[SV:.*]]: f32, %[[ZV:.*]]: i8, %{{.*}}: f32):
// CHECK: %[[XF:.*]] = arith.uitofp %[[XV]] : i8 to f32
// CHECK: %[[ZF:.*]] = arith.uitofp %[[ZV]] : i8 to f32
// CHECK: %[[D:.*]] = arith.subf %[[XF]], %[[ZF]] : f32
// CHECK: %[[R:.*]] = arith.mulf %[[D]], %[[SV]] : f32
// CHECK: linalg.yield %[[R]] : f32
// CHECK: return %[[Y]]
func.func @dequantize_per_tensor_u8(%x: tensor<2x3xui8>) -> tensor<2x3xf32> {
  %s = "onnx.Constant"() <{value = dense<2.500000e-01> : tensor<f32>}> : () -> tensor<f32>
  %z = "onnx.Constant"() <{value = dense<128> : tensor<ui8>}> : () -> tensor<ui8>
  %0 = "onnx.DequantizeLinear"(%x, %s, %z) <{axis = 1 : i64}> : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Dequantize int8 with a zero point: both convert signed.
// CHECK-LABEL: func.func @dequantize_per_tensor_i8(
// CHECK: ^bb0(%[[XV:.*]]: i8, %[[SV:.*]]: f32, %[[ZV:.*]]: i8, %{{.*}}: f32):
// CHECK: %[[XF:.*]] = arith.sitofp %[[XV]] : i8 to f32
// CHECK: %[[ZF:.*]] = arith.sitofp %[[ZV]] : i8 to f32
// CHECK: %[[D:.*]] = arith.subf %[[XF]], %[[ZF]] : f32
// CHECK: arith.mulf %[[D]], %[[SV]] : f32
func.func @dequantize_per_tensor_i8(%x: tensor<2x3xi8>) -> tensor<2x3xf32> {
  %s = "onnx.Constant"() <{value = dense<2.500000e-01> : tensor<f32>}> : () -> tensor<f32>
  %z = "onnx.Constant"() <{value = dense<-2> : tensor<i8>}> : () -> tensor<i8>
  %0 = "onnx.DequantizeLinear"(%x, %s, %z) <{axis = 1 : i64}> : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Per axis -1 with a run-time scale and no zero point: the scale becomes
// [1, 3] (a (0, d1) map) and there is no subtraction.
// CHECK-LABEL: func.func @dequantize_per_axis(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xi8>, %[[S:.*]]: tensor<3xf32>)
// CHECK: %[[S2:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: ins(%[[X]], %[[S2]] : tensor<2x3xi8>, tensor<1x3xf32>)
// CHECK: %[[XF:.*]] = arith.sitofp %{{.*}} : i8 to f32
// CHECK-NOT: arith.subf
// CHECK: arith.mulf %[[XF]], %{{.*}} : f32
func.func @dequantize_per_axis(%x: tensor<2x3xi8>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %none = onnx.NoValue
  %0 = "onnx.DequantizeLinear"(%x, %s, %none) <{axis = -1 : i64}> : (tensor<2x3xi8>, tensor<3xf32>, none) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// DynamicQuantizeLinear: max and min over every dim, both starting at 0
// so the range holds 0; scale = (max - min) / 255; zero point =
// saturate(roundeven(-min / scale)) as uint8; then the uint8 quantize of
// x with them. The scale and zero point are 0-D results.
// CHECK-LABEL: func.func @dynamic_quantize(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>) -> (tensor<2x3xi8>, tensor<f32>, tensor<i8>)
// CHECK: %[[Z0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT0:.*]] = linalg.fill ins(%[[Z0]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%[[X]] : tensor<2x3xf32>) outs(%[[INIT0]] : tensor<f32>)
// CHECK: arith.maximumf
// CHECK: %[[INIT1:.*]] = linalg.fill
// CHECK: %[[MIN:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%[[X]] : tensor<2x3xf32>) outs(%[[INIT1]] : tensor<f32>)
// CHECK: arith.minimumf
// CHECK: %[[SCALE:.*]] = linalg.generic {{.*}} ins(%[[MAX]], %[[MIN]] : tensor<f32>, tensor<f32>)
// CHECK: arith.subf
// CHECK: arith.constant 2.550000e+02 : f32
// CHECK: arith.divf
// CHECK: %[[ZP:.*]] = linalg.generic {{.*}} ins(%[[MIN]], %[[SCALE]] : tensor<f32>, tensor<f32>) outs(%{{.*}} : tensor<i8>)
// CHECK: %[[NEG:.*]] = arith.negf %{{.*}} : f32
// CHECK: arith.divf %[[NEG]], %{{.*}} : f32
// CHECK: math.roundeven
// CHECK: arith.fptoui %{{.*}} : f32 to i8
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: ins(%[[X]], %[[SCALE]], %[[ZP]] : tensor<2x3xf32>, tensor<f32>, tensor<i8>)
// CHECK: arith.divf
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK: math.roundeven
// CHECK: arith.fptoui %{{.*}} : f32 to i8
// CHECK: return %[[Y]], %[[SCALE]], %[[ZP]] : tensor<2x3xi8>, tensor<f32>, tensor<i8>
func.func @dynamic_quantize(%x: tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) {
  %y, %s, %z = "onnx.DynamicQuantizeLinear"(%x) : (tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>)
  return %y, %s, %z : tensor<2x3xui8>, tensor<f32>, tensor<ui8>
}
