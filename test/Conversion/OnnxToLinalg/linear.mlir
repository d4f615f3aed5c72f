// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// MatMul, Gemm, Conv and ConvTranspose (Linear.cpp): contractions as
// linalg.generic with the transposes, broadcasts, strides and groups folded
// into the indexing maps; the accumulator is zero-filled or starts from the
// broadcast bias. ConvTranspose is a stride-1 Conv of the stride-spread,
// padded input with the spatially flipped kernel.

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

// -----

// ConvTranspose, strides 2, pads 1: x is inserted with strides 2 into a
// zero [1, 2, 7, 5] tensor, padded by k - 1 - pad = 1 on each side; the
// kernel [C, M, kh, kw] becomes [M, C, kh, kw] with its window flipped
// (a generic reading (g, c, m, 2 - kh, 2 - kw)); the convolution that
// follows has unit strides and starts from the bias.
// CHECK-LABEL: func.func @conv_transpose_strides_pads(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x4x3xf32>, %[[W:.*]]: tensor<2x3x3x3xf32>, %[[BIAS:.*]]: tensor<3xf32>) -> tensor<1x3x7x5xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[BASE:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x2x7x5xf32>)
// CHECK: %[[SPREAD:.*]] = tensor.insert_slice %[[X]] into %[[BASE]][0, 0, 0, 0] [1, 2, 4, 3] [1, 1, 2, 2] : tensor<1x2x4x3xf32> into tensor<1x2x7x5xf32>
// CHECK: %[[PAD:.*]] = tensor.pad %[[SPREAD]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK: } : tensor<1x2x7x5xf32> to tensor<1x2x9x7xf32>
// CHECK: %[[WG:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2], [3], [4]] output_shape [1, 2, 3, 3, 3] : tensor<2x3x3x3xf32> into tensor<1x2x3x3x3xf32>
// CHECK: %[[FLIP:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, -d3 + 2, -d4 + 2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[WG]] : tensor<1x2x3x3x3xf32>) outs(%{{.*}} : tensor<1x3x2x3x3xf32>)
// CHECK: %[[WT:.*]] = tensor.collapse_shape %[[FLIP]] {{\[}}[0, 1], [2], [3], [4]] : tensor<1x3x2x3x3xf32> into tensor<3x2x3x3xf32>
// CHECK: %[[XG:.*]] = tensor.expand_shape %[[PAD]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 1, 2, 9, 7]
// CHECK: %[[WTG:.*]] = tensor.expand_shape %[[WT]] {{\[}}[0, 1], [2], [3], [4]] output_shape [1, 3, 2, 3, 3]
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0, 0)>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d3, d4 + d6, d5 + d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d6, d7)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[XG]], %[[WTG]] : tensor<1x1x2x9x7xf32>, tensor<1x3x2x3x3xf32>) outs(%[[INIT]] : tensor<1x1x3x7x5xf32>)
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x1x3x7x5xf32> into tensor<1x3x7x5xf32>
// CHECK: return %[[OUT]]
func.func @conv_transpose_strides_pads(%x: tensor<1x2x4x3xf32>, %w: tensor<2x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x7x5xf32> {
  %0 = "onnx.ConvTranspose"(%x, %w, %b) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}> : (tensor<1x2x4x3xf32>, tensor<2x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x7x5xf32>
  return %0 : tensor<1x3x7x5xf32>
}

// -----

// Two groups, strides (2, 3), dilations (2, 1), asymmetric pads and
// output_padding: the spread input is [2, 4, 5, 7]; the effective kernel
// (3, 3) gives low pads (3 - 1 - 0, 3 - 1 - 1) and high pads that reach
// the result size, output_padding included; the kernel flips within each
// group, and the convolution keeps the dilation 2 on kh.
// CHECK-LABEL: func.func @conv_transpose_groups(
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 0] [2, 4, 3, 3] [1, 1, 2, 3] : tensor<2x4x3x3xf32> into tensor<2x4x5x7xf32>
// CHECK: tensor.pad %{{.*}} low[0, 0, 2, 1] high[0, 0, 2, 4]
// CHECK: } : tensor<2x4x5x7xf32> to tensor<2x4x9x12xf32>
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 2, 2, 2, 3] : tensor<4x2x2x3xf32> into tensor<2x2x2x2x3xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, -d3 + 1, -d4 + 2)>
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d3, d6 + d4 * 2, d5 + d7)>
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x2x2x9x12xf32>, tensor<2x2x2x2x3xf32>) outs(%{{.*}} : tensor<2x2x2x7x10xf32>)
// CHECK: tensor.collapse_shape %{{.*}} : tensor<2x2x2x7x10xf32> into tensor<2x4x7x10xf32>
func.func @conv_transpose_groups(%x: tensor<2x4x3x3xf32>, %w: tensor<4x2x2x3xf32>) -> tensor<2x4x7x10xf32> {
  %none = onnx.NoValue
  %0 = "onnx.ConvTranspose"(%x, %w, %none) <{auto_pad = "NOTSET", dilations = array<i64: 2, 1>, group = 2 : i64, output_padding = array<i64: 1, 2>, pads = array<i64: 0, 1, 1, 0>, strides = array<i64: 2, 3>}> : (tensor<2x4x3x3xf32>, tensor<4x2x2x3xf32>, none) -> tensor<2x4x7x10xf32>
  return %0 : tensor<2x4x7x10xf32>
}

// -----

// auto_pad SAME_UPPER, strides 2: the output is 6 = 3 * 2, the total
// padding 2 * 2 + 3 - 6 = 1 goes to the end (pads 0 / 1), so the spread
// input gets 2 below and 1 above.
// CHECK-LABEL: func.func @conv_transpose_same_upper(
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 0] [1, 1, 3, 3] [1, 1, 2, 2] : tensor<1x1x3x3xf32> into tensor<1x1x5x5xf32>
// CHECK: tensor.pad %{{.*}} low[0, 0, 2, 2] high[0, 0, 1, 1]
// CHECK: } : tensor<1x1x5x5xf32> to tensor<1x1x8x8xf32>
func.func @conv_transpose_same_upper(%x: tensor<1x1x3x3xf32>, %w: tensor<1x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  %none = onnx.NoValue
  %0 = "onnx.ConvTranspose"(%x, %w, %none) <{auto_pad = "SAME_UPPER", group = 1 : i64, strides = array<i64: 2, 2>}> : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>, none) -> tensor<1x2x6x6xf32>
  return %0 : tensor<1x2x6x6xf32>
}

// -----

// Unit strides: nothing to spread, the input is padded directly by k - 1.
// CHECK-LABEL: func.func @conv_transpose_unit_stride(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x4x3xf32>,
// CHECK-NOT: tensor.insert_slice
// CHECK: tensor.pad %[[X]] low[0, 0, 2, 2] high[0, 0, 2, 2]
// CHECK: } : tensor<1x2x4x3xf32> to tensor<1x2x8x7xf32>
func.func @conv_transpose_unit_stride(%x: tensor<1x2x4x3xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x3x6x5xf32> {
  %none = onnx.NoValue
  %0 = "onnx.ConvTranspose"(%x, %w, %none) <{auto_pad = "NOTSET", group = 1 : i64}> : (tensor<1x2x4x3xf32>, tensor<2x3x3x3xf32>, none) -> tensor<1x3x6x5xf32>
  return %0 : tensor<1x3x6x5xf32>
}

// -----

// Einsum: a loop dim per letter (output letters first, then the summed
// ones), each operand read through its letters.
// CHECK-LABEL: func.func @einsum_batch_matmul(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @einsum_batch_matmul(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %0 = "onnx.Einsum"(%a, %b) <{equation = "bij, bjk -> bik"}> : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// -----

// A repeated letter reads the diagonal; the ellipsis dims come first.
// CHECK-LABEL: func.func @einsum_diagonal(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
func.func @einsum_diagonal(%a: tensor<3x5x5xf32>) -> tensor<3x5xf32> {
  %0 = "onnx.Einsum"(%a) <{equation = "...ii ->...i"}> : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
