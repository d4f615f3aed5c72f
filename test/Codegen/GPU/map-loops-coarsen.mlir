// RUN: kiln-opt %s --kiln-gpu-map-loops="coarsen=4 tile-contractions=false" | FileCheck %s
// kiln-gpu-map-loops{coarsen=4}: each thread of a reduction computes four
// outputs along a parallel dim that the input neighbouring threads walk
// does not use, so that input's element is loaded once for the four.

// C[i, j] += A[i, k] * B[k, j] with j the innermost dim: B varies along j
// and not along i, so a thread takes rows i .. i+3: 8 / 4 x 5 = 10 threads,
// four sums carried through the k loop, one load of B and four of A at each
// step, four stores.
// CHECK-LABEL: func.func @matmul(
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c10{{[_0-9]*}},
// CHECK-COUNT-4: memref.load %{{.*}} : memref<8x5xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32, f32, f32)
// CHECK-COUNT-1: memref.load %{{.*}} : memref<3x5xf32>
// CHECK-NOT: memref.load %{{.*}} : memref<3x5xf32>
// CHECK: scf.yield
// CHECK-COUNT-4: memref.store %{{.*}} : memref<8x5xf32>
func.func @matmul(%a: memref<8x3xf32>, %b: memref<3x5xf32>, %c: memref<8x5xf32>) {
  linalg.matmul ins(%a, %b : memref<8x3xf32>, memref<3x5xf32>) outs(%c : memref<8x5xf32>)
  return
}

// A convolution's output channels (f, 8 of them) share the input window:
// 8 / 4 x 3 x 3 = 18 threads.
// CHECK-LABEL: func.func @conv(
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c18{{[_0-9]*}},
// CHECK: -> (f32, f32, f32, f32)
func.func @conv(%x: memref<1x3x7x7xf32>, %w: memref<8x3x3x3xf32>, %y: memref<1x8x3x3xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x7x7xf32>, memref<8x3x3x3xf32>) outs(%y : memref<1x8x3x3xf32>)
  return
}

// No coarsening where it would not divide (7 rows) or nothing is shared (a
// row sum: the input varies along the only parallel dim).
// CHECK-LABEL: func.func @uneven(
// CHECK: iter_args(%{{.*}} = %{{.*}}) -> (f32)
// CHECK-LABEL: func.func @rowsum(
// CHECK: iter_args(%{{.*}} = %{{.*}}) -> (f32)
func.func @uneven(%a: memref<7x3xf32>, %b: memref<3x5xf32>, %c: memref<7x5xf32>) {
  linalg.matmul ins(%a, %b : memref<7x3xf32>, memref<3x5xf32>) outs(%c : memref<7x5xf32>)
  return
}
func.func @rowsum(%x: memref<8x6xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x6xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}
