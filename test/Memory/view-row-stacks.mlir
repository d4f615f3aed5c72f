// RUN: kiln-opt %s --kiln-view-row-stacks --split-input-file | FileCheck %s

// A stride-1 3x3 conv's stack over a dynamic size: its three rows copy
// the flat (padded) input at 0, p and 2 * p. The stack becomes a view of the input
// with rows p apart; the copies and the stack go, and the reshape that
// reads it is made again for the view's layout.
#in = affine_map<(c, r, k, p) -> (c, r, p + k)>
#w = affine_map<(c, r, k, p) -> (c, r, k)>
#out = affine_map<(c, r, k, p) -> (c, p)>
// CHECK-LABEL: func.func @stack(
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<4x3x3xf32>, %[[Y:[a-z0-9]+]]: memref<4x?xf32>, %[[P:[a-z0-9]+]]: index, %[[L:[a-z0-9]+]]: index, %[[N:[a-z0-9]+]]: index)
// CHECK: %[[X:.+]] = memref.alloc(%[[N]]) : memref<1x4x?xf32>
// CHECK: linalg.fill
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: %[[V:.+]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [1, 4, 3, %[[L]]], strides: [%{{.+}}, %[[N]], %[[P]], 1] : memref<1x4x?xf32> to memref<1x4x3x?xf32, strided<[?, ?, ?, 1]>>
// CHECK: %[[C:.+]] = memref.collapse_shape %[[V]] {{\[}}[0, 1], [2], [3]] : memref<1x4x3x?xf32, strided<[?, ?, ?, 1]>> into memref<4x3x?xf32, strided<[?, ?, 1]>>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[C]], %[[W]] :
// CHECK-NOT: memref.copy
// CHECK: return
func.func @stack(%w: memref<4x3x3xf32>, %y: memref<4x?xf32>, %p: index, %len: index,
                 %n: index) {
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  %x = memref.alloc(%n) : memref<1x4x?xf32>
  linalg.fill ins(%one : f32) outs(%x : memref<1x4x?xf32>)
  %s = memref.alloc(%len) : memref<1x4x3x?xf32>
  %x0 = memref.subview %x[0, 0, 0] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1]>>
  %s0 = memref.subview %s[0, 0, 0, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1]>>
  memref.copy %x0, %s0 : memref<4x?xf32, strided<[?, 1]>> to memref<4x?xf32, strided<[?, 1]>>
  %x1 = memref.subview %x[0, 0, %p] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %s1 = memref.subview %s[0, 0, 1, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  memref.copy %x1, %s1 : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %o2 = arith.muli %p, %c2 : index
  %x2 = memref.subview %x[0, 0, %o2] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %s2 = memref.subview %s[0, 0, 2, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  memref.copy %x2, %s2 : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %c = memref.collapse_shape %s [[0, 1], [2], [3]] : memref<1x4x3x?xf32> into memref<4x3x?xf32>
  linalg.generic {indexing_maps = [#in, #w, #out],
                  iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%c, %w : memref<4x3x?xf32>, memref<4x3x3xf32>) outs(%y : memref<4x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s_ = arith.addf %acc, %m : f32
    linalg.yield %s_ : f32
  }
  return
}

// -----

// Kept: the input is written between the copies and the read (the view
// would read the new values), and a stack whose rows are not one pitch
// apart (0, p, 3 * p).
#id = affine_map<(c, r, p) -> (c, r, p)>
// CHECK-LABEL: func.func @written(
// CHECK: memref.alloc
// CHECK-COUNT-3: memref.copy
// CHECK: linalg.fill
// CHECK-NOT: reinterpret_cast
// CHECK: return
func.func @written(%x: memref<1x4x?xf32>, %y: memref<4x3x?xf32>, %p: index, %len: index) {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %x_ = memref.alloc(%len) : memref<1x4x?xf32>
  memref.copy %x, %x_ : memref<1x4x?xf32> to memref<1x4x?xf32>
  %s = memref.alloc(%len) : memref<1x4x3x?xf32>
  %x0 = memref.subview %x_[0, 0, 0] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1]>>
  %s0 = memref.subview %s[0, 0, 0, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1]>>
  memref.copy %x0, %s0 : memref<4x?xf32, strided<[?, 1]>> to memref<4x?xf32, strided<[?, 1]>>
  %x1 = memref.subview %x_[0, 0, %p] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %s1 = memref.subview %s[0, 0, 1, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  memref.copy %x1, %s1 : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %o2 = arith.muli %p, %c2 : index
  %x2 = memref.subview %x_[0, 0, %o2] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %s2 = memref.subview %s[0, 0, 2, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  memref.copy %x2, %s2 : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  linalg.fill ins(%zero : f32) outs(%x_ : memref<1x4x?xf32>)
  %c = memref.collapse_shape %s [[0, 1], [2], [3]] : memref<1x4x3x?xf32> into memref<4x3x?xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : memref<4x3x?xf32>) outs(%y : memref<4x3x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// CHECK-LABEL: func.func @uneven(
// CHECK: memref.alloc
// CHECK: memref.alloc
// CHECK-COUNT-3: memref.copy
// CHECK-NOT: reinterpret_cast
// CHECK: return
func.func @uneven(%y: memref<4x3x?xf32>, %p: index, %len: index, %n: index) {
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  %x = memref.alloc(%n) : memref<1x4x?xf32>
  linalg.fill ins(%one : f32) outs(%x : memref<1x4x?xf32>)
  %s = memref.alloc(%len) : memref<1x4x3x?xf32>
  %x0 = memref.subview %x[0, 0, 0] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1]>>
  %s0 = memref.subview %s[0, 0, 0, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1]>>
  memref.copy %x0, %s0 : memref<4x?xf32, strided<[?, 1]>> to memref<4x?xf32, strided<[?, 1]>>
  %x1 = memref.subview %x[0, 0, %p] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %s1 = memref.subview %s[0, 0, 1, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  memref.copy %x1, %s1 : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %o2 = arith.muli %p, %c3 : index
  %x2 = memref.subview %x[0, 0, %o2] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %s2 = memref.subview %s[0, 0, 2, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  memref.copy %x2, %s2 : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %c = memref.collapse_shape %s [[0, 1], [2], [3]] : memref<1x4x3x?xf32> into memref<4x3x?xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : memref<4x3x?xf32>) outs(%y : memref<4x3x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// Kept: the third row at a constant offset while the pitch is not a
// constant (nothing says 8 is 2 * p). The offset has no defining op to
// look at; the check must not ask a null value for one.
// CHECK-LABEL: func.func @constant_offset(
// CHECK-COUNT-3: memref.copy
// CHECK-NOT: reinterpret_cast
// CHECK: return
func.func @constant_offset(%y: memref<4x3x?xf32>, %p: index, %len: index, %n: index) {
  %one = arith.constant 1.0 : f32
  %x = memref.alloc(%n) : memref<1x4x?xf32>
  linalg.fill ins(%one : f32) outs(%x : memref<1x4x?xf32>)
  %s = memref.alloc(%len) : memref<1x4x3x?xf32>
  %x0 = memref.subview %x[0, 0, 0] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1]>>
  %s0 = memref.subview %s[0, 0, 0, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1]>>
  memref.copy %x0, %s0 : memref<4x?xf32, strided<[?, 1]>> to memref<4x?xf32, strided<[?, 1]>>
  %x1 = memref.subview %x[0, 0, %p] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %s1 = memref.subview %s[0, 0, 1, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  memref.copy %x1, %s1 : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %x2 = memref.subview %x[0, 0, 8] [1, 4, %len] [1, 1, 1] : memref<1x4x?xf32> to memref<4x?xf32, strided<[?, 1], offset: 8>>
  %s2 = memref.subview %s[0, 0, 2, 0] [1, 4, 1, %len] [1, 1, 1, 1] : memref<1x4x3x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  memref.copy %x2, %s2 : memref<4x?xf32, strided<[?, 1], offset: 8>> to memref<4x?xf32, strided<[?, 1], offset: ?>>
  %c = memref.collapse_shape %s [[0, 1], [2], [3]] : memref<1x4x3x?xf32> into memref<4x3x?xf32>
  linalg.generic {indexing_maps = [affine_map<(c, r, p) -> (c, r, p)>, affine_map<(c, r, p) -> (c, r, p)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : memref<4x3x?xf32>) outs(%y : memref<4x3x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
