// RUN: kiln-opt %s --kiln-forward-copies --split-input-file | FileCheck %s

// One generic writes two buffers that are then copied into disjoint rows
// of one buffer (a multi-result op's slices): it writes the rows, and
// both buffers and copies are gone; the rows' views move before it.
#id = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @slices(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8xf32>, %[[Y:[a-z0-9]+]]: memref<2x8xf32>)
// CHECK: %[[R0:.+]] = memref.subview %[[Y]][0, 0] [1, 8] [1, 1]
// CHECK: %[[R1:.+]] = memref.subview %[[Y]][1, 0] [1, 8] [1, 1]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]] : memref<8xf32>) outs(%[[R0]], %[[R1]] :
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return
func.func @slices(%x: memref<8xf32>, %y: memref<2x8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%a, %b : memref<8xf32>, memref<8xf32>) {
  ^bb0(%in: f32, %o0: f32, %o1: f32):
    %n = arith.negf %in : f32
    linalg.yield %in, %n : f32, f32
  }
  %r0 = memref.subview %y[0, 0] [1, 8] [1, 1] : memref<2x8xf32> to memref<8xf32, strided<[1]>>
  memref.copy %a, %r0 : memref<8xf32> to memref<8xf32, strided<[1]>>
  %r1 = memref.subview %y[1, 0] [1, 8] [1, 1] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: 8>>
  memref.copy %b, %r1 : memref<8xf32> to memref<8xf32, strided<[1], offset: 8>>
  return
}

// -----

// Kept: the window is read between the writer and the copy (moving the
// write earlier would change what is read), and a buffer whose old
// contents the writer reads.
#id = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @kept(
// CHECK: %[[A:.+]] = memref.alloc
// CHECK: memref.copy %[[A]]
// CHECK: %[[B:.+]] = memref.alloc
// CHECK: memref.copy %[[B]]
func.func @kept(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>, %s: memref<8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.copy ins(%y : memref<8xf32>) outs(%s : memref<8xf32>)
  memref.copy %a, %y : memref<8xf32> to memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%b : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.addf %in, %o : f32
    linalg.yield %m : f32
  }
  memref.copy %b, %z : memref<8xf32> to memref<8xf32>
  return
}

// -----

// Interleaved windows (a Winograd conv's output parities: every second
// row and column, at offsets 0 and 1) share no element although their
// extents overlap: the generic writes both. A window at the same parity
// as one the generic reads (column offsets 0 and 2, stride 2) is kept.
#id2 = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @interleaved(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x2xf32>, %[[Y:[a-z0-9]+]]: memref<4x4xf32>
// CHECK: %[[P0:.+]] = memref.subview %[[Y]][0, 0] [2, 2] [2, 2]
// CHECK: %[[P1:.+]] = memref.subview %[[Y]][1, 1] [2, 2] [2, 2]
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[P0]], %[[P1]] :
// CHECK: %[[K:.+]] = memref.alloc
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[K]] :
// CHECK: memref.copy %[[K]]
func.func @interleaved(%x: memref<2x2xf32>, %y: memref<4x4xf32>, %z: memref<4x6xf32>) {
  %a = memref.alloc() : memref<2x2xf32>
  %b = memref.alloc() : memref<2x2xf32>
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<2x2xf32>) outs(%a, %b : memref<2x2xf32>, memref<2x2xf32>) {
  ^bb0(%in: f32, %o0: f32, %o1: f32):
    %n = arith.negf %in : f32
    linalg.yield %in, %n : f32, f32
  }
  %p0 = memref.subview %y[0, 0] [2, 2] [2, 2] : memref<4x4xf32> to memref<2x2xf32, strided<[8, 2]>>
  memref.copy %a, %p0 : memref<2x2xf32> to memref<2x2xf32, strided<[8, 2]>>
  %p1 = memref.subview %y[1, 1] [2, 2] [2, 2] : memref<4x4xf32> to memref<2x2xf32, strided<[8, 2], offset: 5>>
  memref.copy %b, %p1 : memref<2x2xf32> to memref<2x2xf32, strided<[8, 2], offset: 5>>
  %r = memref.subview %z[0, 0] [2, 2] [2, 2] : memref<4x6xf32> to memref<2x2xf32, strided<[12, 2]>>
  %c = memref.alloc() : memref<2x2xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%r : memref<2x2xf32, strided<[12, 2]>>) outs(%c : memref<2x2xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %w = memref.subview %z[0, 2] [2, 2] [2, 2] : memref<4x6xf32> to memref<2x2xf32, strided<[12, 2], offset: 2>>
  memref.copy %c, %w : memref<2x2xf32> to memref<2x2xf32, strided<[12, 2], offset: 2>>
  return
}
