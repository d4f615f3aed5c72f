// RUN: kiln-opt %s --kiln-fuse-elementwise --split-input-file | FileCheck %s

// A reshape splitting a contraction's innermost output dim (a Winograd
// conv's flat [K, tiles] products read as [K, rows, cols]) is not folded
// into it: the kernels' vectors run along that dim.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @split_innermost(
// CHECK: %[[P:.+]] = linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<4x12xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2]] output_shape [4, 3, 4]
func.func @split_innermost(%x: tensor<4x5xf32>, %w: tensor<5x12xf32>, %init: tensor<4x12xf32>) -> tensor<4x3x4xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x5xf32>, tensor<5x12xf32>) outs(%init : tensor<4x12xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x12xf32>
  %1 = tensor.expand_shape %0 [[0], [1, 2]] output_shape [4, 3, 4] : tensor<4x12xf32> into tensor<4x3x4xf32>
  return %1 : tensor<4x3x4xf32>
}

// -----

// Splitting another dim still folds: the contraction gets the two dims.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @split_outer(
// CHECK: linalg.generic
// CHECK: } -> tensor<2x2x12xf32>
// CHECK-NEXT: return
func.func @split_outer(%x: tensor<4x5xf32>, %w: tensor<5x12xf32>, %init: tensor<4x12xf32>) -> tensor<2x2x12xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x5xf32>, tensor<5x12xf32>) outs(%init : tensor<4x12xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x12xf32>
  %1 = tensor.expand_shape %0 [[0, 1], [2]] output_shape [2, 2, 12] : tensor<4x12xf32> into tensor<2x2x12xf32>
  return %1 : tensor<2x2x12xf32>
}

// -----

// A transpose is generalised and fused into the elementwise op that reads
// it (convnext's NHWC -> NCHW before the layer scale and residual add):
// one generic reads the NHWC input through the permutation.
#id = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-DAG: #[[PERM:.+]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-LABEL: func.func @transpose_into_add(
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[PERM]], #{{.+}}, #{{.+}}]
// CHECK-NOT: linalg.generic
func.func @transpose_into_add(%x: tensor<4x5x3xf32>, %r: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %e = tensor.empty() : tensor<3x4x5xf32>
  %t = linalg.transpose ins(%x : tensor<4x5x3xf32>) outs(%e : tensor<3x4x5xf32>) permutation = [2, 0, 1]
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t, %r : tensor<3x4x5xf32>, tensor<3x4x5xf32>) outs(%e : tensor<3x4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x4x5xf32>
  return %y : tensor<3x4x5xf32>
}

// A transpose read by several ops stays one, as a generic.
// CHECK-LABEL: func.func @transpose_kept(
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[PERM]], #{{.+}}]
func.func @transpose_kept(%x: tensor<4x5x3xf32>) -> (tensor<3x4x5xf32>, tensor<3x4x5xf32>) {
  %e = tensor.empty() : tensor<3x4x5xf32>
  %t = linalg.transpose ins(%x : tensor<4x5x3xf32>) outs(%e : tensor<3x4x5xf32>) permutation = [2, 0, 1]
  return %t, %t : tensor<3x4x5xf32>, tensor<3x4x5xf32>
}
