// RUN: kiln-opt %s --kiln-lower-copies --split-input-file | FileCheck %s
// A bufferized pad (the buffer filled with 0, the input copied into a
// window at [1, 2] of the last two dims) fills only the slabs around the
// window: rows 0 and 4, then columns 0-1 and 6 as runs of the flat
// buffer (row 0's left, each row's right and the next row's left, the
// last row's right), all generics that yield the constant, for
// kiln-vectorize-elementwise. The strided copy becomes an identity
// linalg.generic (no runtime library call).

// CHECK-LABEL: func.func @pad(
// CHECK-NOT: linalg.map
// CHECK: %[[TOP:.+]] = memref.subview %{{.+}}[0, 0, 0, 0] [1, 2, 1, 7] [1, 1, 1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[TOP]]
// CHECK: %[[BOTTOM:.+]] = memref.subview %{{.+}}[0, 0, 4, 0] [1, 2, 1, 7] [1, 1, 1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[BOTTOM]]
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1, 2, 3]] : memref<1x2x5x7xf32> into memref<70xf32>
// CHECK: %[[FIRST:.+]] = memref.reinterpret_cast %[[FLAT]] to offset: [0], sizes: [1, 2], strides: [7, 1]
// CHECK: linalg.generic {{.+}} outs(%[[FIRST]]
// CHECK: %[[RUNS:.+]] = memref.reinterpret_cast %[[FLAT]] to offset: [6], sizes: [9, 3], strides: [7, 1]
// CHECK: linalg.generic {{.+}} outs(%[[RUNS]]
// CHECK: %[[LAST:.+]] = memref.reinterpret_cast %[[FLAT]] to offset: [69], sizes: [1, 1], strides: [7, 1]
// CHECK: linalg.generic {{.+}} outs(%[[LAST]]
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

// -----

// The pad's source was written in place (kiln-prepare-destinations): the
// first access to the filled buffer after the fill writes all of a window
// without reading it, so only the border is filled.
// CHECK-LABEL: func.func @written_in_place(
// CHECK-NOT: linalg.fill
// CHECK: %[[TOP:.+]] = memref.subview %{{.+}}[0, 0, 0] [2, 1, 6] [1, 1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[TOP]]
// CHECK: %[[BOTTOM:.+]] = memref.subview %{{.+}}[0, 5, 0] [2, 1, 6] [1, 1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[BOTTOM]]
// CHECK: %[[FLAT:.+]] = memref.collapse_shape
// CHECK: %[[FIRST:.+]] = memref.reinterpret_cast %[[FLAT]] to offset: [0], sizes: [1, 1], strides: [6, 1]
// CHECK: linalg.generic {{.+}} outs(%[[FIRST]]
// CHECK: %[[RUNS:.+]] = memref.reinterpret_cast %[[FLAT]] to offset: [5], sizes: [11, 2], strides: [6, 1]
// CHECK: linalg.generic {{.+}} outs(%[[RUNS]]
// CHECK: %[[LAST:.+]] = memref.reinterpret_cast %[[FLAT]] to offset: [71], sizes: [1, 1], strides: [6, 1]
// CHECK: linalg.generic {{.+}} outs(%[[LAST]]
// CHECK: arith.maximumf
// CHECK-NOT: linalg.fill
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @written_in_place(%x: memref<2x4x4xf32>, %buf: memref<2x6x6xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%buf : memref<2x6x6xf32>)
  %w = memref.subview %buf[0, 1, 1] [2, 4, 4] [1, 1, 1] : memref<2x6x6xf32> to memref<2x4x4xf32, strided<[36, 6, 1], offset: 7>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<2x4x4xf32>) outs(%w : memref<2x4x4xf32, strided<[36, 6, 1], offset: 7>>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %cst : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The first access reads the window (an accumulation): the fill stays whole.
// CHECK-LABEL: func.func @window_read_first(
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<2x6x6xf32>)
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @window_read_first(%x: memref<2x4x4xf32>, %buf: memref<2x6x6xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%buf : memref<2x6x6xf32>)
  %w = memref.subview %buf[0, 1, 1] [2, 4, 4] [1, 1, 1] : memref<2x6x6xf32> to memref<2x4x4xf32, strided<[36, 6, 1], offset: 7>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<2x4x4xf32>) outs(%w : memref<2x4x4xf32, strided<[36, 6, 1], offset: 7>>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Another view of the buffer is read between the fill and the writer: the
// fill stays whole.
// CHECK-LABEL: func.func @read_between(
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<2x6x6xf32>)
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @read_between(%x: memref<2x4x4xf32>, %buf: memref<2x6x6xf32>, %o: memref<2x4x4xf32, strided<[36, 6, 1]>>) {
  %cst = arith.constant 0.0 : f32
  %w = memref.subview %buf[0, 1, 1] [2, 4, 4] [1, 1, 1] : memref<2x6x6xf32> to memref<2x4x4xf32, strided<[36, 6, 1], offset: 7>>
  %corner = memref.subview %buf[0, 0, 0] [2, 4, 4] [1, 1, 1] : memref<2x6x6xf32> to memref<2x4x4xf32, strided<[36, 6, 1]>>
  linalg.fill ins(%cst : f32) outs(%buf : memref<2x6x6xf32>)
  memref.copy %corner, %o : memref<2x4x4xf32, strided<[36, 6, 1]>> to memref<2x4x4xf32, strided<[36, 6, 1]>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<2x4x4xf32>) outs(%w : memref<2x4x4xf32, strided<[36, 6, 1], offset: 7>>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}
