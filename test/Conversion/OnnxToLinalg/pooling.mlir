// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// MaxPool and AveragePool (Pooling.cpp): the input is padded (MaxPool with
// -inf, AveragePool with 0), a linalg.generic reduces each window through a
// strided map, with an empty kernel-shaped tensor giving the window dims;
// AveragePool then divides by a constant tensor of per-window counts. A
// MaxPool whose Indices output is read reduces into two results, the max
// and the flat index of the first max in the unpadded input.

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

// Indices read: one generic with two results, the max (from -inf) and its
// i64 index (from -1). The index is that of the input position: per
// spatial dim o * stride + k - pad, flattened row-major with the batch
// and channel dims ((n * 3 + c) * 5 + h) * 5 + w; a strictly greater
// value wins (ogt), and the first window element always does.
// CHECK-LABEL: func.func @maxpool_indices(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x5x5xf32>) -> (tensor<2x3x3x3xf32>, tensor<2x3x3x3xi64>)
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NEGINF]] : f32
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: %[[VALS:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<2x3x3x3xf32>)
// CHECK: %[[UNSET:.*]] = arith.constant -1 : i64
// CHECK: %[[IDXS:.*]] = linalg.fill ins(%[[UNSET]] : i64) outs(%{{.*}} : tensor<2x3x3x3xi64>)
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[PAD]], %[[WIN]] : tensor<2x3x7x7xf32>, tensor<3x3xf32>) outs(%[[VALS]], %[[IDXS]] : tensor<2x3x3x3xf32>, tensor<2x3x3x3xi64>)
// CHECK: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32, %[[BEST:.*]]: f32, %[[BESTIDX:.*]]: i64):
// CHECK: linalg.index 2 : index
// CHECK: linalg.index 4 : index
// CHECK: %[[H:.*]] = arith.subi %{{.*}}, %{{.*}} : i64
// CHECK: linalg.index 3 : index
// CHECK: linalg.index 5 : index
// CHECK: %[[W:.*]] = arith.subi %{{.*}}, %{{.*}} : i64
// CHECK: linalg.index 0 : index
// CHECK: %[[CH:.*]] = arith.constant 3 : i64
// CHECK: %[[NC:.*]] = arith.muli %{{.*}}, %[[CH]] : i64
// CHECK: linalg.index 1 : index
// CHECK: %[[PLANE:.*]] = arith.addi %[[NC]], %{{.*}} : i64
// CHECK: %[[ROWS:.*]] = arith.muli %[[PLANE]], %{{.*}} : i64
// CHECK: %[[ROW:.*]] = arith.addi %[[ROWS]], %[[H]] : i64
// CHECK: %[[COLS:.*]] = arith.muli %[[ROW]], %{{.*}} : i64
// CHECK: %[[FLAT:.*]] = arith.addi %[[COLS]], %[[W]] : i64
// Taps in the padding never win (inside = every position within the input).
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[BEST]] : f32
// CHECK: %[[FIRST:.*]] = arith.cmpi slt, %[[BESTIDX]], %{{.*}} : i64
// CHECK: %[[EITHER:.*]] = arith.ori %[[GT]], %[[FIRST]] : i1
// CHECK: %[[TAKE:.*]] = arith.andi %{{.*}}, %[[EITHER]] : i1
// CHECK: %[[NV:.*]] = arith.select %[[TAKE]], %[[V]], %[[BEST]] : f32
// CHECK: %[[NI:.*]] = arith.select %[[TAKE]], %[[FLAT]], %[[BESTIDX]] : i64
// CHECK: linalg.yield %[[NV]], %[[NI]] : f32, i64
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<2x3x3x3xf32>, tensor<2x3x3x3xi64>
func.func @maxpool_indices(%x: tensor<2x3x5x5xf32>) -> (tensor<2x3x3x3xf32>, tensor<2x3x3x3xi64>) {
  %y, %indices = "onnx.MaxPool"(%x) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, storage_order = 0 : i64, strides = array<i64: 2, 2>}> : (tensor<2x3x5x5xf32>) -> (tensor<2x3x3x3xf32>, tensor<2x3x3x3xi64>)
  return %y, %indices : tensor<2x3x3x3xf32>, tensor<2x3x3x3xi64>
}

// -----

// storage_order = 1: the spatial dims flatten column-major, the width
// first: ((n * 2 + c) * 6 + w) * 4 + h. No pads, no pad op.
// CHECK-LABEL: func.func @maxpool_indices_column_major(
// CHECK-NOT: tensor.pad
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 * 2 + d5)>
// CHECK: %[[H:.*]] = arith.subi %{{.*}}, %{{.*}} : i64
// CHECK: %[[W:.*]] = arith.subi %{{.*}}, %{{.*}} : i64
// CHECK: %[[PLANE:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: %[[WIDTH:.*]] = arith.constant 6 : i64
// CHECK: %[[COLS:.*]] = arith.muli %[[PLANE]], %[[WIDTH]] : i64
// CHECK: %[[COL:.*]] = arith.addi %[[COLS]], %[[W]] : i64
// CHECK: %[[HEIGHT:.*]] = arith.constant 4 : i64
// CHECK: %[[ROWS:.*]] = arith.muli %[[COL]], %[[HEIGHT]] : i64
// CHECK: %[[FLAT:.*]] = arith.addi %[[ROWS]], %[[H]] : i64
// CHECK: arith.select %{{.*}}, %[[FLAT]], %{{.*}} : i64
// CHECK: return %[[R]]#1 : tensor<1x2x3x2xi64>
func.func @maxpool_indices_column_major(%x: tensor<1x2x4x6xf32>) -> tensor<1x2x3x2xi64> {
  %y, %indices = "onnx.MaxPool"(%x) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, kernel_shape = array<i64: 2, 3>, storage_order = 1 : i64, strides = array<i64: 1, 2>}> : (tensor<1x2x4x6xf32>) -> (tensor<1x2x3x2xf32>, tensor<1x2x3x2xi64>)
  return %indices : tensor<1x2x3x2xi64>
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
