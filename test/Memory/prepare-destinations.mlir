// RUN: kiln-opt %s --kiln-prepare-destinations --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-prepare-destinations --eliminate-empty-tensors --split-input-file | FileCheck %s --check-prefix=ELIM
// kiln-prepare-destinations arranges tensor destinations so that
// empty-tensor elimination can make producers write into their final
// buffer: pads become a fill and an insert, and insert destinations move
// before the empty their source's chain starts from.

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A pad of a ReLU: the padded buffer is created and filled before the
// ReLU's empty; after elimination the ReLU writes the window [0, 1, 1].
// CHECK-LABEL: func.func @pad(
// CHECK-NOT: tensor.pad
// CHECK: %[[P:.+]] = tensor.empty() : tensor<2x34x34xf32>
// CHECK: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[P]] : tensor<2x34x34xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x32x32xf32>
// CHECK: %[[R:.+]] = linalg.generic {{.+}} outs(%[[E]]
// CHECK: tensor.insert_slice %[[R]] into %[[F]][0, 1, 1] [2, 32, 32] [1, 1, 1]
// ELIM-LABEL: func.func @pad(
// ELIM: %[[F:.+]] = linalg.fill
// ELIM: %[[W:.+]] = tensor.extract_slice %[[F]][0, 1, 1] [2, 32, 32] [1, 1, 1]
// ELIM: linalg.generic {{.+}} outs(%[[W]]
// ELIM-NOT: tensor.empty() : tensor<2x32x32xf32>
func.func @pad(%x: tensor<2x32x32xf32>) -> tensor<2x34x34xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x32xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x32x32xf32>) outs(%e : tensor<2x32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<2x32x32xf32>
  %p = tensor.pad %r low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %cst : f32
  } : tensor<2x32x32xf32> to tensor<2x34x34xf32>
  return %p : tensor<2x34x34xf32>
}

// -----

// The same over a dynamic H x W, the ReLU's destination a reshape of an
// empty (a flattened conv's [C, H * W] viewed as [C, H, W]): the chain gets
// an empty of its own, and the padded buffer is sized from the ReLU's
// destination sizes plus the padding (not from the ReLU's result), so that
// it can be created before the ReLU, which then writes its window.
// CHECK-LABEL: func.func @dynamic_pad(
// CHECK-SAME: %[[H:[^:]+]]: index, %[[W:[^:]+]]: index
// CHECK-NOT: tensor.pad
// CHECK-DAG: %[[HP:.+]] = arith.addi %[[H]], %{{.+}} : index
// CHECK-DAG: %[[WP:.+]] = arith.addi %[[W]], %{{.+}} : index
// CHECK: %[[P:.+]] = tensor.empty(%[[HP]], %[[WP]]) : tensor<2x?x?xf32>
// CHECK: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[P]] : tensor<2x?x?xf32>)
// CHECK: %[[E:.+]] = tensor.empty(%[[H]], %[[W]]) : tensor<2x?x?xf32>
// CHECK: %[[R:.+]] = linalg.generic {{.+}} outs(%[[E]]
// CHECK: tensor.insert_slice %[[R]] into %[[F]][0, 1, 1] [2, %[[H]], %[[W]]] [1, 1, 1]
// ELIM-LABEL: func.func @dynamic_pad(
// ELIM: %[[F:.+]] = linalg.fill
// ELIM: %[[WIN:.+]] = tensor.extract_slice %[[F]][0, 1, 1] [2, %{{.+}}, %{{.+}}] [1, 1, 1]
// ELIM: linalg.generic {{.+}} outs(%[[WIN]]
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @dynamic_pad(%x: tensor<2x?x?xf32>, %h: index, %w: index) -> tensor<2x?x?xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty(%h, %w) : tensor<1x2x?x?xf32>
  %c = tensor.collapse_shape %e [[0, 1], [2], [3]] : tensor<1x2x?x?xf32> into tensor<2x?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x?x?xf32>) outs(%c : tensor<2x?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<2x?x?xf32>
  %p = tensor.pad %r low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %cst : f32
  } : tensor<2x?x?xf32> to tensor<2x?x?xf32>
  return %p : tensor<2x?x?xf32>
}

// -----

// Rows of 8: a strided window would cost the producer more than the copy
// saves; the pad stays.
// CHECK-LABEL: func.func @narrow_pad(
// CHECK: tensor.pad
func.func @narrow_pad(%x: tensor<2x8x8xf32>) -> tensor<2x10x10xf32> {
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %cst : f32
  } : tensor<2x8x8xf32> to tensor<2x10x10xf32>
  return %p : tensor<2x10x10xf32>
}

// -----

// A concat of two branches that CSE made share one empty (through a
// reshape), with the concat's empty defined last. The second branch gets
// its own empty; the concat's empty and first insert move up, so both
// branches write their halves of the concat.
// CHECK-LABEL: func.func @concat(
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[D:.+]] = tensor.empty() : tensor<8x32xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x32xf32>
// CHECK: %[[A:.+]] = linalg.generic {{.+}} outs(%[[E]]
// CHECK: %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[D]][0, 0] [4, 32] [1, 1]
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<4x32xf32>
// CHECK: %[[B:.+]] = linalg.generic {{.+}} outs(%[[E2]]
// CHECK: tensor.insert_slice %[[B]] into %[[I0]][4, 0] [4, 32] [1, 1]
// ELIM-LABEL: func.func @concat(
// ELIM: %[[D:.+]] = tensor.empty() : tensor<8x32xf32>
// ELIM: %[[W0:.+]] = tensor.extract_slice %[[D]][0, 0] [4, 32] [1, 1]
// ELIM: %[[A:.+]] = linalg.generic {{.+}} outs(%[[W0]]
// ELIM: %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[D]]
// ELIM: %[[W1:.+]] = tensor.extract_slice %[[I0]][4, 0] [4, 32] [1, 1]
// ELIM: linalg.generic {{.+}} outs(%[[W1]]
// ELIM-NOT: tensor.empty() : tensor<4x32xf32>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @concat(%x: tensor<4x32xf32>) -> tensor<8x32xf32> {
  %e0 = tensor.empty() : tensor<1x4x32xf32>
  %e = tensor.collapse_shape %e0 [[0, 1], [2]] : tensor<1x4x32xf32> into tensor<4x32xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x32xf32>) outs(%e : tensor<4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x32xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x32xf32>) outs(%e : tensor<4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4x32xf32>
  %d = tensor.empty() : tensor<8x32xf32>
  %i0 = tensor.insert_slice %a into %d[0, 0] [4, 32] [1, 1] : tensor<4x32xf32> into tensor<8x32xf32>
  %i1 = tensor.insert_slice %b into %i0[4, 0] [4, 32] [1, 1] : tensor<4x32xf32> into tensor<8x32xf32>
  return %i1 : tensor<8x32xf32>
}

// -----

// One zero fill (after CSE) initialises two matmuls: each gets its own
// empty and fill right before it, so bufferization neither fills one
// buffer and copies it before each, nor keeps it alive between them.
// CHECK-LABEL: func.func @shared_fill(
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[F1:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[M1:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x16xf32>, tensor<16x8xf32>) outs(%[[F1]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[E2:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[F2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E2]] : tensor<4x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%[[M1]]{{.*}}outs(%[[F2]] : tensor<4x8xf32>)
// CHECK-NOT: linalg.fill
func.func @shared_fill(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %c: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m2 = linalg.matmul ins(%m1, %c : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %m2 : tensor<4x8xf32>
}
