// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// Data movement (DataMovement.cpp): reshapes become collapse/expand pairs,
// Transpose a linalg.transpose, Concat a chain of insert_slices, Slice an
// extract_slice (a generic for negative steps), Gather a generic that
// extracts from the data, constant Pad a tensor.pad (other modes a generic
// that computes the source index), Constant an arith.constant.

// Reshape goes through the flat vector: collapse everything, expand again.
// CHECK-LABEL: func.func @reshape(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: %[[Y:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
// CHECK: return %[[Y]]
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %shape = "onnx.Constant"() <{value = dense<[6, 4]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %0 = "onnx.Reshape"(%x, %shape) <{allowzero = 0 : i64}> : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @unsqueeze(
// CHECK: tensor.collapse_shape
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 1, 3] : tensor<6xf32> into tensor<2x1x3xf32>
func.func @unsqueeze(%x: tensor<2x3xf32>) -> tensor<2x1x3xf32> {
  %axes = "onnx.Constant"() <{value = dense<[1]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %0 = "onnx.Unsqueeze"(%x, %axes) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1x3xf32>
  return %0 : tensor<2x1x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK: linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<4x2x3xf32>) permutation = [2, 0, 1]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "onnx.Transpose"(%x) <{perm = array<i64: 2, 0, 1>}> : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat(
// CHECK-SAME: %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK: %[[T0:.*]] = tensor.insert_slice %[[A]] into %[[INIT]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
// CHECK: %[[T1:.*]] = tensor.insert_slice %[[B]] into %[[T0]][0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
// CHECK: return %[[T1]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = "onnx.Concat"(%a, %b) <{axis = 1 : i64}> : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Gather along axis 0: the generic iterates over the result, reads the
// index, wraps a negative one, clamps it into [0, 4] and extracts.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[DATA:.*]]: tensor<5x3xf32>, %[[IDX:.*]]: tensor<2xi64>) -> tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[IDX]] : tensor<2xi64>)
// CHECK: ^bb0(%[[I:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[IX:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[IX]]
// CHECK: %[[WRAPPED:.*]] = arith.select %[[NEG]]
// CHECK: %[[LOW:.*]] = arith.maxsi %[[WRAPPED]]
// CHECK: %[[ROW:.*]] = arith.minsi %[[LOW]]
// CHECK: %[[COL:.*]] = linalg.index 1 : index
// CHECK: %[[V:.*]] = tensor.extract %[[DATA]][%[[ROW]], %[[COL]]] : tensor<5x3xf32>
// CHECK: linalg.yield %[[V]] : f32
func.func @gather(%x: tensor<5x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = "onnx.Gather"(%x, %i) <{axis = 0 : i64}> : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Constant starts, ends, axes and steps: one strided extract_slice.
// CHECK-LABEL: func.func @slice(
// CHECK-SAME: %[[X:.*]]: tensor<6x8xf32>)
// CHECK: %[[Y:.*]] = tensor.extract_slice %[[X]][1, 2] [2, 3] [2, 2] : tensor<6x8xf32> to tensor<2x3xf32>
// CHECK: return %[[Y]]
func.func @slice(%x: tensor<6x8xf32>) -> tensor<2x3xf32> {
  %starts = "onnx.Constant"() <{value = dense<[1, 2]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %ends = "onnx.Constant"() <{value = dense<[5, 8]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %axes = "onnx.Constant"() <{value = dense<[0, 1]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %steps = "onnx.Constant"() <{value = dense<2> : tensor<2xi64>}> : () -> tensor<2xi64>
  %0 = "onnx.Slice"(%x, %starts, %ends, %axes, %steps) : (tensor<6x8xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A negative step reads backwards: rows 5, 3, 1.
// CHECK-LABEL: func.func @slice_negative_step(
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 * -2 + 5, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
func.func @slice_negative_step(%x: tensor<6x8xf32>) -> tensor<3x8xf32> {
  %starts = "onnx.Constant"() <{value = dense<[-1]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %ends = "onnx.Constant"() <{value = dense<[-7]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %axes = "onnx.Constant"() <{value = dense<[0]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %steps = "onnx.Constant"() <{value = dense<[-2]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%x, %starts, %ends, %axes, %steps) : (tensor<6x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// CHECK-LABEL: func.func @split(
// CHECK-SAME: %[[X:.*]]: tensor<2x6xf32>)
// CHECK: %[[A:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 2] [1, 1]
// CHECK: %[[B:.*]] = tensor.extract_slice %[[X]][0, 2] [2, 4] [1, 1]
// CHECK: return %[[A]], %[[B]]
func.func @split(%x: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x4xf32>) {
  %sizes = "onnx.Constant"() <{value = dense<[2, 4]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %0:2 = "onnx.Split"(%x, %sizes) <{axis = 1 : i64}> : (tensor<2x6xf32>, tensor<2xi64>) -> (tensor<2x2xf32>, tensor<2x4xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x4xf32>
}

// -----

// Pad with a constant value operand.
// CHECK-LABEL: func.func @pad_constant(
// CHECK: %[[V:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: tensor.pad %{{.*}} low[1, 2] high[0, 1]
// CHECK: tensor.yield %[[V]] : f32
// CHECK: } : tensor<2x3xf32> to tensor<3x6xf32>
func.func @pad_constant(%x: tensor<2x3xf32>) -> tensor<3x6xf32> {
  %pads = "onnx.Constant"() <{value = dense<[1, 2, 0, 1]> : tensor<4xi64>}> : () -> tensor<4xi64>
  %value = "onnx.Constant"() <{value = dense<7.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "onnx.Pad"(%x, %pads, %value) <{mode = "constant"}> : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// Reflect padding: no tensor.pad, each output element reads a reflected
// source index (clamped into the input) from the data.
// CHECK-LABEL: func.func @pad_reflect(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>) -> tensor<6xf32>
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(
// CHECK: linalg.index 0
// CHECK: arith.remsi
// CHECK: %[[I:.*]] = arith.minsi
// CHECK: tensor.extract %[[X]][%[[I]]] : tensor<4xf32>
func.func @pad_reflect(%x: tensor<4xf32>) -> tensor<6xf32> {
  %pads = "onnx.Constant"() <{value = dense<1> : tensor<2xi64>}> : () -> tensor<2xi64>
  %none = onnx.NoValue
  %0 = "onnx.Pad"(%x, %pads, %none) <{mode = "reflect"}> : (tensor<4xf32>, tensor<2xi64>, none) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// CHECK-LABEL: func.func @expand(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %shape = "onnx.Constant"() <{value = dense<[2, 1, 4]> : tensor<3xi64>}> : () -> tensor<3xi64>
  %0 = "onnx.Expand"(%x, %shape) : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @constant(
// CHECK: %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[C]] :
func.func @constant(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = "onnx.Constant"() <{value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>}> : () -> tensor<3xf32>
  %0 = "onnx.Add"(%x, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A ui8 constant keeps its bits in a signless i8 (200 -> -56, 255 -> -1).
// CHECK-LABEL: func.func @constant_ui8(
// CHECK-SAME: -> tensor<3xi8>
// CHECK: arith.constant dense<[1, -56, -1]> : tensor<3xi8>
func.func @constant_ui8() -> tensor<3xui8> {
  %0 = "onnx.Constant"() <{value = dense<[1, 200, 255]> : tensor<3xui8>}> : () -> tensor<3xui8>
  return %0 : tensor<3xui8>
}

// -----

// Shape of a static tensor is a constant.
// CHECK-LABEL: func.func @shape(
// CHECK: %[[S:.*]] = arith.constant dense<[3, 1]> : tensor<2xi64>
// CHECK: return %[[S]]
func.func @shape(%x: tensor<3x1xf32>) -> tensor<2xi64> {
  %0 = "onnx.Shape"(%x) : (tensor<3x1xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @identity(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.Identity"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
