// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// MaxPool and AveragePool (Pooling.cpp): the input is padded (MaxPool with
// -inf, AveragePool with 0), a linalg.generic reduces each window through a
// strided map, with an empty kernel-shaped tensor giving the window dims;
// AveragePool then divides by a constant tensor of per-window counts.

// CHECK-LABEL: func.func @maxpool_pads_strides(
// CHECK-SAME: %[[X:.*]]: tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32>
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NEGINF]] : f32
// CHECK: } : tensor<1x1x8x8xf32> to tensor<1x1x10x10xf32>
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<1x1x4x4xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[PAD]], %[[WIN]] : tensor<1x1x10x10xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x1x4x4xf32>)
// CHECK: arith.maximumf
func.func @maxpool_pads_strides(%x: tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32> {
  %y, %indices = "onnx.MaxPool"(%x) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, storage_order = 0 : i64, strides = array<i64: 2, 2>}> : (tensor<1x1x8x8xf32>) -> (tensor<1x1x4x4xf32>, none)
  return %y : tensor<1x1x4x4xf32>
}

// -----

// An Indices result that nobody reads is fine.
// CHECK-LABEL: func.func @maxpool_unused_indices(
// CHECK: linalg.generic
// CHECK-NOT: onnx.
func.func @maxpool_unused_indices(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  %y, %indices = "onnx.MaxPool"(%x) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, kernel_shape = array<i64: 2, 2>, storage_order = 0 : i64}> : (tensor<1x1x4x4xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x3x3xi64>)
  return %y : tensor<1x1x3x3xf32>
}

// -----

// Unsigned integers: padded with 0 (the lowest ui8), compared unsigned.
// CHECK-LABEL: func.func @maxpool_ui8(
// CHECK-SAME: tensor<1x1x4x4xi8>
// CHECK: %[[LOW:.*]] = arith.constant 0 : i8
// CHECK: linalg.fill ins(%[[LOW]] : i8)
// CHECK: arith.maxui
func.func @maxpool_ui8(%x: tensor<1x1x4x4xui8>) -> tensor<1x1x2x2xui8> {
  %y, %indices = "onnx.MaxPool"(%x) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, kernel_shape = array<i64: 2, 2>, storage_order = 0 : i64, strides = array<i64: 2, 2>}> : (tensor<1x1x4x4xui8>) -> (tensor<1x1x2x2xui8>, none)
  return %y : tensor<1x1x2x2xui8>
}

// -----

// No pads: every window counts kernel_shape elements, one splat divisor.
// CHECK-LABEL: func.func @averagepool(
// CHECK-NOT: tensor.pad
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK: arith.addf
// CHECK: %[[COUNT:.*]] = arith.constant dense<4.000000e+00> : tensor<1x1x2x2xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SUM]], %[[COUNT]] :
// CHECK: arith.divf
func.func @averagepool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.AveragePool"(%x) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, count_include_pad = 0 : i64, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Pads at the end, count_include_pad = 0: windows over the padding count
// only the real elements (4, 2, 2, 1).
// CHECK-LABEL: func.func @averagepool_exclude_pad(
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK: arith.constant dense<{{\[\[\[\[}}4.000000e+00, 2.000000e+00], [2.000000e+00, 1.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK: arith.divf
func.func @averagepool_exclude_pad(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.AveragePool"(%x) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, count_include_pad = 0 : i64, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>}> : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Same, count_include_pad = 1: the pads count.
// CHECK-LABEL: func.func @averagepool_include_pad(
// CHECK: arith.constant dense<4.000000e+00> : tensor<1x1x2x2xf32>
func.func @averagepool_include_pad(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.AveragePool"(%x) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, count_include_pad = 1 : i64, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>}> : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// ceil_mode: the last window reaches past the explicit padding; that extra
// part is padded too but never counted, even with count_include_pad.
// CHECK-LABEL: func.func @averagepool_ceil_mode(
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: arith.constant dense<{{\[\[\[\[}}4.000000e+00, 2.000000e+00], [2.000000e+00, 1.000000e+00]]]]> : tensor<1x1x2x2xf32>
func.func @averagepool_ceil_mode(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.AveragePool"(%x) <{auto_pad = "NOTSET", ceil_mode = 1 : i64, count_include_pad = 1 : i64, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
