// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// MatMul, Gemm and Conv (Linear.cpp): contractions as linalg.generic with
// the transposes, broadcasts, strides and groups folded into the indexing
// maps; the accumulator is zero-filled or starts from the broadcast bias.

// Batched MatMul: A's size-1 batch dim broadcasts against B's batch of 5,
// B's missing leading dim is dropped from its map; d3 is the reduction.
// CHECK-LABEL: func.func @matmul_batch_broadcast(
// CHECK-SAME: %[[A:.*]]: tensor<2x1x3x4xf32>, %[[B:.*]]: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x5x3x6xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : {{.*}}) outs(%[[FILL]] : tensor<2x5x3x6xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @matmul_batch_broadcast(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  return %0 : tensor<2x5x3x6xf32>
}

// -----

// A 1-D right operand becomes a (k, 1) matrix; the unit dim is dropped
// from the result by a reshape.
// CHECK-LABEL: func.func @matmul_vector(
// CHECK-SAME: %[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<2x3xf32>
// CHECK: %[[B2:.*]] = tensor.expand_shape %[[B]] {{\[}}[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B2]] :
// CHECK: tensor.collapse_shape %[[Y]]
// CHECK: into tensor<2x3xf32>
func.func @matmul_vector(%a: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// transB reads B as (n, k); alpha scales the product, C broadcasts.
// CHECK-LABEL: func.func @gemm_transb(
// CHECK-SAME: %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<4x3xf32>, %[[C:.*]]: tensor<4xf32>)
// CHECK: %[[AB:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] :
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: ins(%[[AB]], %[[C]] :
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @gemm_transb(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %c: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = "onnx.Gemm"(%a, %b, %c) <{alpha = 5.000000e-01 : f32, beta = 1.000000e+00 : f32, transA = 0 : i64, transB = 1 : i64}> : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// transA reads A as (k, m).
// CHECK-LABEL: func.func @gemm_transa_no_c(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @gemm_transa_no_c(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %none = onnx.NoValue
  %0 = "onnx.Gemm"(%a, %b, %none) <{alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, transA = 1 : i64, transB = 0 : i64}> : (tensor<3x2xf32>, tensor<3x4xf32>, none) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Conv with pads, strides 2 and 2 groups: the input is zero-padded, input,
// weight and bias get a group dim (expand_shape), the window map reads
// input row oh * 2 + kh, the bias initialises the accumulator, and the
// group dim is collapsed back into the channels.
// CHECK-LABEL: func.func @conv_pads_groups(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x8x8xf32>, %[[W:.*]]: tensor<4x1x3x3xf32>, %[[BIAS:.*]]: tensor<4xf32>) -> tensor<1x4x4x4xf32>
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %{{.*}} : f32
// CHECK: } : tensor<1x2x8x8xf32> to tensor<1x2x10x10xf32>
// CHECK: %[[XG:.*]] = tensor.expand_shape %[[PAD]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 10, 10] : tensor<1x2x10x10xf32> into tensor<1x2x1x10x10xf32>
// CHECK: %[[WG:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 2, 1, 3, 3] : tensor<4x1x3x3xf32> into tensor<2x2x1x3x3xf32>
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0, 0)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>]
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d3, d6 * 2 + d4, d7 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d6, d7)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[XG]], %[[WG]] : tensor<1x2x1x10x10xf32>, tensor<2x2x1x3x3xf32>) outs(%[[INIT]] : tensor<1x2x2x4x4xf32>)
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x2x4x4xf32> into tensor<1x4x4x4xf32>
// CHECK: return %[[OUT]]
func.func @conv_pads_groups(%x: tensor<1x2x8x8xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "onnx.Conv"(%x, %w, %b) <{auto_pad = "NOTSET", group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}> : (tensor<1x2x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// Dilations scale the kernel index; no pads, no pad op; no bias: zero fill.
// CHECK-LABEL: func.func @conv_dilated(
// CHECK-NOT: tensor.pad
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d3, d6 + d4 * 2, d7 + d5 * 2)>
func.func @conv_dilated(%x: tensor<1x1x7x7xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %none = onnx.NoValue
  %0 = "onnx.Conv"(%x, %w, %none) <{auto_pad = "NOTSET", dilations = array<i64: 2, 2>, group = 1 : i64}> : (tensor<1x1x7x7xf32>, tensor<1x1x3x3xf32>, none) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}
