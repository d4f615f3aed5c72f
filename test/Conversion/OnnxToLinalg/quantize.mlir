// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear
// (Quantize.cpp), as one elementwise generic each: a per-tensor scale and
// zero point are 0-D tensors read with a () map, per-axis ones are
// reshaped to broadcast along the axis. Quantize is
// saturate(roundeven(x / scale) + zp) in f32, then converted to the
// (signless) 8-bit result; dequantize is (x - zp) * scale.
// The integer ops (MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv) subtract the zero points in i32, contract in i32, and
// QLinear* requantise the accumulator in f64 like the ONNX reference.

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
// so the range holds 0, each in two steps: per row over the innermost dim
// (parallel over the rows), then over the rows; scale = (max - min) /
// 255; zero point = saturate(roundeven(-min / scale)) as uint8; then the
// uint8 quantize of x with them. The scale and zero point are 0-D results.
// CHECK-LABEL: func.func @dynamic_quantize(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>) -> (tensor<2x3xi8>, tensor<f32>, tensor<i8>)
// CHECK: %[[Z0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT0:.*]] = linalg.fill ins(%[[Z0]] : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: %[[ROWMAX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x3xf32>) outs(%[[INIT0]] : tensor<2xf32>)
// CHECK: arith.maximumf
// CHECK: %[[INIT1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%[[ROWMAX]] : tensor<2xf32>) outs(%[[INIT1]] : tensor<f32>)
// CHECK: arith.maximumf
// CHECK: %[[ROWMIN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x3xf32>)
// CHECK: arith.minimumf
// CHECK: %[[MIN:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[ROWMIN]] : tensor<2xf32>)
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

// -----

// MatMulInteger: each operand minus its zero point in i32 (one generic
// per operand; uint8 widens with extui, int8 with extsi; b's per-column
// zero point [4] becomes [1, 4] read at (0, d1)), then an i32 matmul
// generic from a 0 fill: acc + a * b with muli/addi.
// CHECK-LABEL: func.func @matmul_integer(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<2x3xi8>, %[[B:[a-z0-9_]+]]: tensor<3x4xi8>, %[[AZ:[a-z0-9_]+]]: tensor<i8>, %[[BZ:[a-z0-9_]+]]: tensor<4xi8>) -> tensor<2x4xi32>
// CHECK: %[[A32:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[AZ]] : tensor<2x3xi8>, tensor<i8>) outs(%{{.*}} : tensor<2x3xi32>)
// CHECK-NEXT: ^bb0(%[[AV:[a-z0-9_]+]]: i8, %[[AZV:[a-z0-9_]+]]: i8, %{{.*}}: i32):
// CHECK-NEXT: %[[AW:.*]] = arith.extui %[[AV]] : i8 to i32
// CHECK-NEXT: %[[AZW:.*]] = arith.extui %[[AZV]] : i8 to i32
// CHECK-NEXT: %[[AS:.*]] = arith.subi %[[AW]], %[[AZW]] : i32
// CHECK-NEXT: linalg.yield %[[AS]] : i32
// CHECK: %[[BZ2:.*]] = tensor.expand_shape %[[BZ]] {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xi8> into tensor<1x4xi8>
// CHECK: %[[B32:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[B]], %[[BZ2]] : tensor<3x4xi8>, tensor<1x4xi8>) outs(%{{.*}} : tensor<3x4xi32>)
// CHECK-NEXT: ^bb0(%[[BV:[a-z0-9_]+]]: i8, %[[BZV:[a-z0-9_]+]]: i8, %{{.*}}: i32):
// CHECK-NEXT: %[[BW:.*]] = arith.extsi %[[BV]] : i8 to i32
// CHECK-NEXT: %[[BZW:.*]] = arith.extsi %[[BZV]] : i8 to i32
// CHECK-NEXT: %[[BS:.*]] = arith.subi %[[BW]], %[[BZW]] : i32
// CHECK-NEXT: linalg.yield %[[BS]] : i32
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.*}} : tensor<2x4xi32>)
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[A32]], %[[B32]] : tensor<2x3xi32>, tensor<3x4xi32>) outs(%[[INIT]] : tensor<2x4xi32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: i32, %[[W:[a-z0-9_]+]]: i32, %[[ACC:[a-z0-9_]+]]: i32):
// CHECK-NEXT: %[[P:.*]] = arith.muli %[[X]], %[[W]] : i32
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[ACC]], %[[P]] : i32
// CHECK-NEXT: linalg.yield %[[S]] : i32
// CHECK: return %[[Y]] : tensor<2x4xi32>
func.func @matmul_integer(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>, %az: tensor<ui8>, %bz: tensor<4xi8>) -> tensor<2x4xi32> {
  %0 = "onnx.MatMulInteger"(%a, %b, %az, %bz) : (tensor<2x3xui8>, tensor<3x4xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

// ConvInteger (uint8, pads 1): x and w shifted by their zero points into
// i32 (extui + subi); the shifted x is padded with 0 (the zero point's
// value after the shift) and convolved by the grouped conv generic in
// i32 (muli/addi from a 0 fill).
// CHECK-LABEL: func.func @conv_integer(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x2x4x4xi8>, %[[W:[a-z0-9_]+]]: tensor<3x2x3x3xi8>, %[[XZ:[a-z0-9_]+]]: tensor<i8>, %[[WZ:[a-z0-9_]+]]: tensor<i8>) -> tensor<1x3x4x4xi32>
// CHECK: %[[X32:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME: ins(%[[X]], %[[XZ]] : tensor<1x2x4x4xi8>, tensor<i8>) outs(%{{.*}} : tensor<1x2x4x4xi32>)
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.subi %{{.*}}, %{{.*}} : i32
// CHECK: %[[W32:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[WZ]] : tensor<3x2x3x3xi8>, tensor<i8>) outs(%{{.*}} : tensor<3x2x3x3xi32>)
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.subi %{{.*}}, %{{.*}} : i32
// CHECK: %[[PADV:.*]] = arith.constant 0 : i32
// CHECK: %[[XP:.*]] = tensor.pad %[[X32]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[PADV]] : i32
// CHECK: } : tensor<1x2x4x4xi32> to tensor<1x2x6x6xi32>
// CHECK: %[[XG:.*]] = tensor.expand_shape %[[XP]] {{.*}} into tensor<1x1x2x6x6xi32>
// CHECK: %[[WG:.*]] = tensor.expand_shape %[[W32]] {{.*}} into tensor<1x3x2x3x3xi32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<1x1x3x4x4xi32>)
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d3, d4 + d6, d5 + d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d6, d7)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[XG]], %[[WG]] : tensor<1x1x2x6x6xi32>, tensor<1x3x2x3x3xi32>) outs(%[[INIT]] : tensor<1x1x3x4x4xi32>)
// CHECK: arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[Y:.*]] = tensor.collapse_shape %[[ACC]] {{.*}} : tensor<1x1x3x4x4xi32> into tensor<1x3x4x4xi32>
// CHECK: return %[[Y]]
func.func @conv_integer(%x: tensor<1x2x4x4xui8>, %w: tensor<3x2x3x3xui8>, %xz: tensor<ui8>, %wz: tensor<ui8>) -> tensor<1x3x4x4xi32> {
  %0 = "onnx.ConvInteger"(%x, %w, %xz, %wz) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x2x4x4xui8>, tensor<3x2x3x3xui8>, tensor<ui8>, tensor<ui8>) -> tensor<1x3x4x4xi32>
  return %0 : tensor<1x3x4x4xi32>
}

// -----

// QLinearMatMul (uint8): the i32 matmul of the shifted operands, then one
// generic requantises it: scale = a_scale * b_scale / y_scale in f32,
// acc (sitofp) * scale (extf) in f64, roundeven, + y_zero_point (uitofp),
// clamped to [0, 255], NaN to 0, fptoui to the uint8 result.
// CHECK-LABEL: func.func @qlinear_matmul(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<2x3xi8>, %[[AS:[a-z0-9_]+]]: tensor<f32>, %[[AZ:[a-z0-9_]+]]: tensor<i8>, %[[B:[a-z0-9_]+]]: tensor<3x4xi8>, %[[BS:[a-z0-9_]+]]: tensor<f32>, %[[BZ:[a-z0-9_]+]]: tensor<i8>, %[[YS:[a-z0-9_]+]]: tensor<f32>, %[[YZ:[a-z0-9_]+]]: tensor<i8>) -> tensor<2x4xi8>
// CHECK: %[[A32:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[AZ]] : tensor<2x3xi8>, tensor<i8>) outs(%{{.*}} : tensor<2x3xi32>)
// CHECK: arith.extui
// CHECK: arith.subi
// CHECK: %[[B32:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[BZ]] : tensor<3x4xi8>, tensor<i8>) outs(%{{.*}} : tensor<3x4xi32>)
// CHECK: arith.extui
// CHECK: arith.subi
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[A32]], %[[B32]] : tensor<2x3xi32>, tensor<3x4xi32>) outs(%{{.*}} : tensor<2x4xi32>)
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[ACC]], %[[AS]], %[[BS]], %[[YS]], %[[YZ]] : tensor<2x4xi32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i8>) outs(%{{.*}} : tensor<2x4xi8>)
// CHECK-NEXT: ^bb0(%[[V:[a-z0-9_]+]]: i32, %[[SA:[a-z0-9_]+]]: f32, %[[SB:[a-z0-9_]+]]: f32, %[[SY:[a-z0-9_]+]]: f32, %[[ZY:[a-z0-9_]+]]: i8, %{{.*}}: i8):
// CHECK-NEXT: %[[SAB:.*]] = arith.mulf %[[SA]], %[[SB]] : f32
// CHECK-NEXT: %[[SC:.*]] = arith.divf %[[SAB]], %[[SY]] : f32
// CHECK-NEXT: %[[VF:.*]] = arith.sitofp %[[V]] : i32 to f64
// CHECK-NEXT: %[[SCF:.*]] = arith.extf %[[SC]] : f32 to f64
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[VF]], %[[SCF]] : f64
// CHECK-NEXT: %[[ZF:.*]] = arith.uitofp %[[ZY]] : i8 to f64
// CHECK-NEXT: %[[R:.*]] = math.roundeven %[[M]] : f64
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[R]], %[[ZF]] : f64
// CHECK-NEXT: %[[LO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[C1:.*]] = arith.maximumf %[[SUM]], %[[LO]] : f64
// CHECK-NEXT: %[[HI:.*]] = arith.constant 2.550000e+02 : f64
// CHECK-NEXT: %[[C2:.*]] = arith.minimumf %[[C1]], %[[HI]] : f64
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[C2]], %[[C2]] : f64
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[G:.*]] = arith.select %[[NAN]], %[[ZERO]], %[[C2]] : f64
// CHECK-NEXT: %[[Q:.*]] = arith.fptoui %[[G]] : f64 to i8
// CHECK-NEXT: linalg.yield %[[Q]] : i8
// CHECK: return %[[Y]] : tensor<2x4xi8>
func.func @qlinear_matmul(%a: tensor<2x3xui8>, %as: tensor<f32>, %az: tensor<ui8>, %b: tensor<3x4xui8>, %bs: tensor<f32>, %bz: tensor<ui8>, %ys: tensor<f32>, %yz: tensor<ui8>) -> tensor<2x4xui8> {
  %0 = "onnx.QLinearMatMul"(%a, %as, %az, %b, %bs, %bz, %ys, %yz) : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<3x4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4xui8>
  return %0 : tensor<2x4xui8>
}

// -----

// QLinearConv (int8, per-output-channel w_scale, i32 bias): the shifted
// operands widen with extsi; the bias [3] is broadcast into the
// accumulator's init (read at (d0, d1, d2, 0, 0)) before the i32 conv
// generic; the requantisation reads w_scale [3] as [1, 3, 1, 1] at
// (d0, d1, 0, 0), works in f64, clamps to [-128, 127] and converts with
// fptosi.
// CHECK-LABEL: func.func @qlinear_conv(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x2x4x4xi8>, %[[XS:[a-z0-9_]+]]: tensor<f32>, %[[XZ:[a-z0-9_]+]]: tensor<i8>, %[[W:[a-z0-9_]+]]: tensor<3x2x3x3xi8>, %[[WS:[a-z0-9_]+]]: tensor<3xf32>, %[[WZ:[a-z0-9_]+]]: tensor<i8>, %[[YS:[a-z0-9_]+]]: tensor<f32>, %[[YZ:[a-z0-9_]+]]: tensor<i8>, %[[BIAS:[a-z0-9_]+]]: tensor<3xi32>) -> tensor<1x3x2x2xi8>
// CHECK: %[[X32:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[XZ]] : tensor<1x2x4x4xi8>, tensor<i8>) outs(%{{.*}} : tensor<1x2x4x4xi32>)
// CHECK-NEXT: ^bb0(%[[XV:[a-z0-9_]+]]: i8, %[[XZV:[a-z0-9_]+]]: i8, %{{.*}}: i32):
// CHECK-NEXT: %[[XW:.*]] = arith.extsi %[[XV]] : i8 to i32
// CHECK-NEXT: %[[XZW:.*]] = arith.extsi %[[XZV]] : i8 to i32
// CHECK-NEXT: arith.subi %[[XW]], %[[XZW]] : i32
// CHECK: %[[W32:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[WZ]] : tensor<3x2x3x3xi8>, tensor<i8>) outs(%{{.*}} : tensor<3x2x3x3xi32>)
// CHECK: arith.extsi
// CHECK: arith.extsi
// CHECK: arith.subi
// CHECK: %[[XG:.*]] = tensor.expand_shape %[[X32]] {{.*}} into tensor<1x1x2x4x4xi32>
// CHECK: %[[WG:.*]] = tensor.expand_shape %[[W32]] {{.*}} into tensor<1x3x2x3x3xi32>
// CHECK: %[[B5:.*]] = tensor.expand_shape %{{.*}} {{.*}} output_shape [1, 1, 3, 1, 1] : tensor<3xi32> into tensor<1x1x3x1x1xi32>
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0, 0)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>]
// CHECK-SAME: ins(%[[B5]] : tensor<1x1x3x1x1xi32>) outs(%{{.*}} : tensor<1x1x3x2x2xi32>)
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[XG]], %[[WG]] : tensor<1x1x2x4x4xi32>, tensor<1x3x2x3x3xi32>) outs(%[[INIT]] : tensor<1x1x3x2x2xi32>)
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK: %[[ACC4:.*]] = tensor.collapse_shape %[[ACC]] {{.*}} : tensor<1x1x3x2x2xi32> into tensor<1x3x2x2xi32>
// CHECK: %[[WS4:.*]] = tensor.expand_shape %[[WS]] {{\[\[}}0, 1, 2, 3]] output_shape [1, 3, 1, 1] : tensor<3xf32> into tensor<1x3x1x1xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME: ins(%[[ACC4]], %[[XS]], %[[WS4]], %[[YS]], %[[YZ]] : tensor<1x3x2x2xi32>, tensor<f32>, tensor<1x3x1x1xf32>, tensor<f32>, tensor<i8>) outs(%{{.*}} : tensor<1x3x2x2xi8>)
// CHECK-NEXT: ^bb0(%[[V:[a-z0-9_]+]]: i32, %[[SX:[a-z0-9_]+]]: f32, %[[SW:[a-z0-9_]+]]: f32, %[[SY:[a-z0-9_]+]]: f32, %[[ZY:[a-z0-9_]+]]: i8, %{{.*}}: i8):
// CHECK-NEXT: %[[SXW:.*]] = arith.mulf %[[SX]], %[[SW]] : f32
// CHECK-NEXT: %[[SC:.*]] = arith.divf %[[SXW]], %[[SY]] : f32
// CHECK-NEXT: %[[VF:.*]] = arith.sitofp %[[V]] : i32 to f64
// CHECK-NEXT: %[[SCF:.*]] = arith.extf %[[SC]] : f32 to f64
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[VF]], %[[SCF]] : f64
// CHECK-NEXT: %[[ZF:.*]] = arith.sitofp %[[ZY]] : i8 to f64
// CHECK-NEXT: %[[R:.*]] = math.roundeven %[[M]] : f64
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[R]], %[[ZF]] : f64
// CHECK-NEXT: %[[LO:.*]] = arith.constant -1.280000e+02 : f64
// CHECK-NEXT: %[[C1:.*]] = arith.maximumf %[[SUM]], %[[LO]] : f64
// CHECK-NEXT: %[[HI:.*]] = arith.constant 1.270000e+02 : f64
// CHECK-NEXT: %[[C2:.*]] = arith.minimumf %[[C1]], %[[HI]] : f64
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[C2]], %[[C2]] : f64
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[G:.*]] = arith.select %[[NAN]], %[[ZERO]], %[[C2]] : f64
// CHECK-NEXT: %[[Q:.*]] = arith.fptosi %[[G]] : f64 to i8
// CHECK-NEXT: linalg.yield %[[Q]] : i8
// CHECK: return %[[Y]] : tensor<1x3x2x2xi8>
func.func @qlinear_conv(%x: tensor<1x2x4x4xi8>, %xs: tensor<f32>, %xz: tensor<i8>, %w: tensor<3x2x3x3xi8>, %ws: tensor<3xf32>, %wz: tensor<i8>, %ys: tensor<f32>, %yz: tensor<i8>, %b: tensor<3xi32>) -> tensor<1x3x2x2xi8> {
  %0 = "onnx.QLinearConv"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) <{auto_pad = "NOTSET", group = 1 : i64}> : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<i8>, tensor<f32>, tensor<i8>, tensor<3xi32>) -> tensor<1x3x2x2xi8>
  return %0 : tensor<1x3x2x2xi8>
}

// -----

// MatMulInteger by a constant B (uint8, zero point 128): B - 128 folded
// at compile time into an int8 constant (its column sums beside it), the
// contraction reading A's bytes as they are (extui in its body, the form
// of kiln-vectorize-int8-matmul), and a_zero_point taken off afterwards
// as a_zero_point * sum_k (B - 128)[k, n].
// CHECK-LABEL: func.func @matmul_integer_constant_b(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<2x3xi8>, %[[AZ:[a-z0-9_]+]]: tensor<i8>)
// CHECK: %[[W:.*]] = arith.constant dense_resource<int8_weights{{.*}}> : tensor<3x2xi8>
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[A]], %[[W]] : tensor<2x3xi8>, tensor<3x2xi8>) outs(%{{.*}} : tensor<2x2xi32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: i8, %[[Y:[a-z0-9_]+]]: i8, %[[S:[a-z0-9_]+]]: i32):
// CHECK-NEXT: %[[XW:.*]] = arith.extui %[[X]] : i8 to i32
// CHECK-NEXT: %[[YW:.*]] = arith.extsi %[[Y]] : i8 to i32
// CHECK-NEXT: %[[P:.*]] = arith.muli %[[XW]], %[[YW]] : i32
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[S]], %[[P]] : i32
// CHECK: %[[COLS:.*]] = arith.constant dense<[-126, 120]> : tensor<2xi32>
// CHECK: linalg.generic {{.*}} ins(%[[ACC]], %[[AZ]], %[[COLS]] : tensor<2x2xi32>, tensor<i8>, tensor<2xi32>)
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.muli
// CHECK: arith.subi
func.func @matmul_integer_constant_b(%a: tensor<2x3xui8>, %az: tensor<ui8>) -> tensor<2x2xi32> {
  %b = "onnx.Constant"() <{value = dense<[[130, 120], [128, 255], [0, 129]]> : tensor<3x2xui8>}> : () -> tensor<3x2xui8>
  %bz = "onnx.Constant"() <{value = dense<128> : tensor<ui8>}> : () -> tensor<ui8>
  %0 = "onnx.MatMulInteger"(%a, %b, %az, %bz) : (tensor<2x3xui8>, tensor<3x2xui8>, tensor<ui8>, tensor<ui8>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

// B - b_zero_point beyond int8 (255 - 0): the general form, both operands
// shifted in i32.
// CHECK-LABEL: func.func @matmul_integer_constant_b_wide(
// CHECK-NOT: int8_weights
// CHECK: arith.subi
// CHECK: arith.muli %{{.*}}, %{{.*}} : i32
func.func @matmul_integer_constant_b_wide(%a: tensor<2x3xui8>, %az: tensor<ui8>) -> tensor<2x2xi32> {
  %b = "onnx.Constant"() <{value = dense<[[130, 120], [128, 255], [0, 129]]> : tensor<3x2xui8>}> : () -> tensor<3x2xui8>
  %bz = "onnx.Constant"() <{value = dense<0> : tensor<ui8>}> : () -> tensor<ui8>
  %0 = "onnx.MatMulInteger"(%a, %b, %az, %bz) : (tensor<2x3xui8>, tensor<3x2xui8>, tensor<ui8>, tensor<ui8>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

// ConvInteger 1x1, stride 1, no padding, by constant int8 weights: x is
// read as it is, reshaped to [N, C, P]; the weights become an int8
// constant [M, C] and the contraction the weights-left form of
// kiln-vectorize-int8-matmul (x's bytes widened in its body); x_zero_point
// comes off afterwards as x_zero_point * (the weights' row sums).
// CHECK-LABEL: func.func @conv_integer_constant_w_1x1(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x3x2x2xi8>, %[[XZ:[a-z0-9_]+]]: tensor<i8>)
// CHECK: %[[XC:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 3, 4] : tensor<12xi8> into tensor<1x3x4xi8>
// CHECK: %[[W:.*]] = arith.constant dense_resource<int8_weights{{.*}}> : tensor<2x3xi8>
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[XC]], %[[W]] : tensor<1x3x4xi8>, tensor<2x3xi8>) outs(%{{.*}} : tensor<1x2x4xi32>)
// CHECK-NEXT: ^bb0(%[[XV:[a-z0-9_]+]]: i8, %[[WV:[a-z0-9_]+]]: i8, %[[S:[a-z0-9_]+]]: i32):
// CHECK-NEXT: %[[XW:.*]] = arith.extui %[[XV]] : i8 to i32
// CHECK-NEXT: %[[WW:.*]] = arith.extsi %[[WV]] : i8 to i32
// CHECK-NEXT: %[[P:.*]] = arith.muli %[[XW]], %[[WW]] : i32
// CHECK-NEXT: arith.addi %[[S]], %[[P]] : i32
// CHECK: %[[SUMS:.*]] = arith.constant dense<{{\[\[}}2], [-1]]> : tensor<2x1xi32>
// CHECK: linalg.generic {{.*}} ins(%[[ACC]], %[[XZ]], %[[SUMS]] : tensor<1x2x4xi32>, tensor<i8>, tensor<2x1xi32>)
// CHECK: arith.muli
// CHECK: arith.subi
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, 2, 2, 2] : tensor<8xi32> into tensor<1x2x2x2xi32>
func.func @conv_integer_constant_w_1x1(%x: tensor<1x3x2x2xui8>, %xz: tensor<ui8>) -> tensor<1x2x2x2xi32> {
  %w = "onnx.Constant"() <{value = dense<[[[[1]], [[-2]], [[3]]], [[[127]], [[0]], [[-128]]]]> : tensor<2x3x1x1xi8>}> : () -> tensor<2x3x1x1xi8>
  %n = onnx.NoValue
  %0 = "onnx.ConvInteger"(%x, %w, %xz, %n) <{auto_pad = "NOTSET", group = 1 : i64}> : (tensor<1x3x2x2xui8>, tensor<2x3x1x1xi8>, tensor<ui8>, none) -> tensor<1x2x2x2xi32>
  return %0 : tensor<1x2x2x2xi32>
}

// -----

// QLinearConv 2x2, stride 2, padded, by constant weights with a zero point
// per output channel: x padded with x_zero_point, im2col'd one strided
// window copy per tap into [N, C, KH, KW, OH, OW], read as [N, K, P]; the
// weights minus their zero points ([1, 2, 3, 4] and [5, 6, 7, 8] - 1)
// folded into the int8 constant; x_zero_point * row sums (10 and 22)
// off and the bias on in one generic; then the usual requantisation.
// CHECK-LABEL: func.func @qlinear_conv_constant_w_2x2(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x1x3x3xi8>, %[[XS:[a-z0-9_]+]]: tensor<f32>, %[[XZ:[a-z0-9_]+]]: tensor<i8>
// CHECK: %[[ZV:.*]] = tensor.extract %[[XZ]][] : tensor<i8>
// CHECK: %[[XP:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: tensor.yield %[[ZV]] : i8
// CHECK: %[[COL:.*]] = tensor.empty() : tensor<1x1x2x2x2x2xi8>
// CHECK: %[[T0:.*]] = tensor.extract_slice %[[XP]][0, 0, 0, 0] [1, 1, 2, 2] [1, 1, 2, 2]
// CHECK: %[[C0:.*]] = linalg.generic {{.*}} ins(%[[T0]] : tensor<1x1x2x2xi8>)
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[C0]] into %[[COL]][0, 0, 0, 0, 0, 0] [1, 1, 1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[XP]][0, 0, 0, 1] [1, 1, 2, 2] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[XP]][0, 0, 1, 0] [1, 1, 2, 2] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[XP]][0, 0, 1, 1] [1, 1, 2, 2] [1, 1, 2, 2]
// CHECK: %[[I3:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 1, 0, 0] [1, 1, 1, 1, 2, 2]
// CHECK: %[[XC:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 4, 4] : tensor<16xi8> into tensor<1x4x4xi8>
// CHECK: %[[W:.*]] = arith.constant dense_resource<int8_weights{{.*}}> : tensor<2x4xi8>
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} ins(%[[XC]], %[[W]] : tensor<1x4x4xi8>, tensor<2x4xi8>) outs(%{{.*}} : tensor<1x2x4xi32>)
// CHECK: %[[SUMS:.*]] = arith.constant dense<{{\[\[}}10], [22]]> : tensor<2x1xi32>
// CHECK: %[[BIAS:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 1] : tensor<2xi32> into tensor<2x1xi32>
// CHECK: linalg.generic {{.*}} ins(%[[ACC]], %[[XZ]], %[[SUMS]], %[[BIAS]] : tensor<1x2x4xi32>, tensor<i8>, tensor<2x1xi32>, tensor<2x1xi32>)
// CHECK: arith.subi
// CHECK: arith.addi
// CHECK: math.roundeven
// CHECK: arith.fptoui %{{.*}} : f64 to i8
func.func @qlinear_conv_constant_w_2x2(%x: tensor<1x1x3x3xui8>, %xs: tensor<f32>, %xz: tensor<ui8>, %ys: tensor<f32>, %yz: tensor<ui8>) -> tensor<1x2x2x2xui8> {
  %w = "onnx.Constant"() <{value = dense<[[[[1, 2], [3, 4]]], [[[5, 6], [7, 8]]]]> : tensor<2x1x2x2xi8>}> : () -> tensor<2x1x2x2xi8>
  %ws = "onnx.Constant"() <{value = dense<[0.5, 0.25]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %wz = "onnx.Constant"() <{value = dense<[0, 1]> : tensor<2xi8>}> : () -> tensor<2xi8>
  %b = "onnx.Constant"() <{value = dense<[10, -10]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %0 = "onnx.QLinearConv"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>}> : (tensor<1x1x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<2x1x2x2xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x2x2xui8>
  return %0 : tensor<1x2x2x2xui8>
}
