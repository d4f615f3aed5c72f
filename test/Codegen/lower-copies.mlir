// RUN: kiln-opt %s --kiln-lower-copies | FileCheck %s
// A bufferized pad (the buffer filled with 0, the input copied into a
// window at [1, 2] of the last two dims) fills only the slabs around the
// window: rows 0 and 4, columns 0-1 and 6 (generics that yield the
// constant, for kiln-vectorize-elementwise). The strided copy becomes an
// identity linalg.generic (no runtime library call).

// CHECK-LABEL: func.func @pad(
// CHECK-NOT: linalg.map
// CHECK: %[[TOP:.+]] = memref.subview %{{.+}}[0, 0, 0, 0] [1, 2, 1, 7] [1, 1, 1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[TOP]]
// CHECK: %[[BOTTOM:.+]] = memref.subview %{{.+}}[0, 0, 4, 0] [1, 2, 1, 7] [1, 1, 1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[BOTTOM]]
// CHECK: %[[LEFT:.+]] = memref.subview %{{.+}}[0, 0, 0, 0] [1, 2, 5, 2] [1, 1, 1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[LEFT]]
// CHECK: %[[RIGHT:.+]] = memref.subview %{{.+}}[0, 0, 0, 6] [1, 2, 5, 1] [1, 1, 1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[RIGHT]]
// CHECK: %[[WINDOW:.+]] = memref.subview %{{.+}}[0, 0, 1, 2] [1, 2, 3, 4] [1, 1, 1, 1]
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : memref<1x2x3x4xf32>) outs(%[[WINDOW]]
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
// CHECK-NOT: memref.copy
func.func @pad(%x: memref<1x2x3x4xf32>, %buf: memref<1x2x5x7xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.map outs(%buf : memref<1x2x5x7xf32>) (%init: f32) {
    linalg.yield %cst : f32
  }
  %sub = memref.subview %buf[0, 0, 1, 2] [1, 2, 3, 4] [1, 1, 1, 1] : memref<1x2x5x7xf32> to memref<1x2x3x4xf32, strided<[70, 35, 7, 1], offset: 9>>
  memref.copy %x, %sub : memref<1x2x3x4xf32> to memref<1x2x3x4xf32, strided<[70, 35, 7, 1], offset: 9>>
  return
}
