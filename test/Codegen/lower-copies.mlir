// RUN: kiln-opt %s --kiln-lower-copies --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-lower-copies=all=true --split-input-file | FileCheck %s --check-prefix=GPU
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

// The same over a dynamic H x W: the buffer's sizes are the window's plus
// two (a view of the workspace, as kiln-prepare-destinations sizes it), so
// the slabs are one row thick and the runs two elements long; the window's
// writer comes after a memref.dim of it. On the GPU (all), where each piece
// would be a kernel, the fill stays whole.
// CHECK-LABEL: func.func @dynamic_in_place(
// CHECK-NOT: linalg.fill
// CHECK: %[[TOP:.+]] = memref.subview %[[BUF:.+]][0, 0, 0] [2, 1, %[[WP:.+]]] [1, 1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[TOP]]
// CHECK: %[[BOTTOM:.+]] = memref.subview %[[BUF]][0, %{{.+}}, 0] [2, 1, %[[WP]]] [1, 1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[BOTTOM]]
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[BUF]]
// CHECK: memref.reinterpret_cast %[[FLAT]] to offset: [0], sizes: [%[[EDGE:.+]], 1], strides: [%[[WP]], 1]
// CHECK: %[[RUNS:.+]] = memref.reinterpret_cast %[[FLAT]] to offset: [%{{.+}}], sizes: [%{{.+}}, 2], strides: [%[[WP]], 1]
// CHECK: linalg.generic {{.+}} outs(%[[RUNS]]
// CHECK: memref.reinterpret_cast %[[FLAT]] to offset: [%{{.+}}], sizes: [%[[EDGE]], 1], strides: [%[[WP]], 1]
// CHECK: arith.maximumf
// CHECK-NOT: linalg.fill
// GPU-LABEL: func.func @dynamic_in_place(
// GPU: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<2x?x?xf32>)
// GPU-NOT: reinterpret_cast
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @dynamic_in_place(%x: memref<2x?x?xf32>, %ws: memref<?xi8>) {
  %cst = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = memref.dim %x, %c1 : memref<2x?x?xf32>
  %w = memref.dim %x, %c2 : memref<2x?x?xf32>
  %hp = arith.addi %h, %c2 : index
  %wp = arith.addi %w, %c2 : index
  %buf = memref.view %ws[%c0][%hp, %wp] : memref<?xi8> to memref<2x?x?xf32>
  linalg.fill ins(%cst : f32) outs(%buf : memref<2x?x?xf32>)
  %win = memref.subview %buf[0, 1, 1] [2, %h, %w] [1, 1, 1] : memref<2x?x?xf32> to memref<2x?x?xf32, strided<[?, ?, 1], offset: ?>>
  %d = memref.dim %win, %c1 : memref<2x?x?xf32, strided<[?, ?, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<2x?x?xf32>) outs(%win : memref<2x?x?xf32, strided<[?, ?, 1], offset: ?>>) {
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

// -----

// A recurrent step: the new hidden state (also the step's row of Y) and
// the new cell state are copied over the old ones after the generic that
// computes them. The generic writes the hidden state's buffer as another
// output, and the cell state's in place (it reads the old one at the same
// element; its own buffer has no other use); the copies go.
// CHECK-LABEL: func.func @state_copies(
// CHECK-SAME: %[[WS:[^:]+]]: memref<4096xi8>
// CHECK-DAG: %[[H:.+]] = memref.view %[[WS]][%c0{{[_0-9]*}}][] : memref<4096xi8> to memref<4x8xf32>
// CHECK-DAG: %[[C:.+]] = memref.view %[[WS]][%c128{{[_0-9]*}}][] : memref<4096xi8> to memref<4x8xf32>
// CHECK: scf.for
// CHECK: %[[ROW:.+]] = memref.subview %arg1
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[C]] : {{.+}}) outs(%[[ROW]], %[[C]], %[[H]] :
// CHECK: linalg.yield %[[NEWH:.+]], %[[NEWC:.+]], %[[NEWH]] : f32, f32, f32
// CHECK-NOT: copy
#m2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @state_copies(%x: memref<3x4x8xf32>, %y: memref<3x4x8xf32>, %ws: memref<4096xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %h = memref.view %ws[%c0][] : memref<4096xi8> to memref<4x8xf32>
  %c = memref.view %ws[%c128][] : memref<4096xi8> to memref<4x8xf32>
  scf.for %t = %c0 to %c3 step %c1 {
    %xt = memref.subview %x[%t, 0, 0] [1, 4, 8] [1, 1, 1] : memref<3x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    %tmp = memref.view %ws[%c256][] : memref<4096xi8> to memref<4x8xf32>
    %row = memref.subview %y[%t, 0, 0] [1, 4, 8] [1, 1, 1] : memref<3x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%xt, %c : memref<4x8xf32, strided<[8, 1], offset: ?>>, memref<4x8xf32>)
        outs(%row, %tmp : memref<4x8xf32, strided<[8, 1], offset: ?>>, memref<4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32, %p: f32):
      %s = arith.addf %a, %b : f32
      %e = math.tanh %s : f32
      linalg.yield %e, %s : f32, f32
    }
    linalg.copy ins(%row : memref<4x8xf32, strided<[8, 1], offset: ?>>) outs(%h : memref<4x8xf32>)
    linalg.copy ins(%tmp : memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  }
  return
}

// -----

// The same with a dynamic batch: the planned buffers' offsets are
// dynamic, but buffers used in one loop are live across all of it, so
// they do not share memory.
// CHECK-LABEL: func.func @state_copies_dynamic(
// CHECK: scf.for
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[C:[^ ]+]] : {{.+}}) outs(%{{.+}}, %[[C]], %{{.+}} : memref<?x8xf32, strided<[8, 1], offset: ?>>, memref<?x8xf32>, memref<?x8xf32>)
// CHECK-NOT: copy
#m2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @state_copies_dynamic(%x: memref<3x?x8xf32>, %y: memref<3x?x8xf32>, %ws: memref<?xi8>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %o1 = arith.muli %n, %c32 : index
  %o2 = arith.addi %o1, %o1 : index
  %h = memref.view %ws[%c0][%n] : memref<?xi8> to memref<?x8xf32>
  %c = memref.view %ws[%o1][%n] : memref<?xi8> to memref<?x8xf32>
  scf.for %t = %c0 to %c3 step %c1 {
    %xt = memref.subview %x[%t, 0, 0] [1, %n, 8] [1, 1, 1] : memref<3x?x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
    %tmp = memref.view %ws[%o2][%n] : memref<?xi8> to memref<?x8xf32>
    %row = memref.subview %y[%t, 0, 0] [1, %n, 8] [1, 1, 1] : memref<3x?x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
    linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%xt, %c : memref<?x8xf32, strided<[8, 1], offset: ?>>, memref<?x8xf32>)
        outs(%row, %tmp : memref<?x8xf32, strided<[8, 1], offset: ?>>, memref<?x8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32, %p: f32):
      %s = arith.addf %a, %b : f32
      %e = math.tanh %s : f32
      linalg.yield %e, %s : f32, f32
    }
    linalg.copy ins(%row : memref<?x8xf32, strided<[8, 1], offset: ?>>) outs(%h : memref<?x8xf32>)
    linalg.copy ins(%tmp : memref<?x8xf32>) outs(%c : memref<?x8xf32>)
  }
  return
}

// -----

// Copies that stay: the target read at another element than the one
// written (a transpose: in place, a later element would read the new
// value); outside a loop with dynamic offsets (the target's buffer may be
// where the generic's input was); something between the generic and the
// copy touching memory.
// CHECK-LABEL: func.func @copies_kept(
// CHECK-COUNT-3: linalg.copy
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#t2 = affine_map<(d0, d1) -> (d1, d0)>
func.func @copies_kept(%x: memref<8x8xf32>, %s: memref<8x8xf32>, %ws: memref<?xi8>, %n: index, %z: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %cst = arith.constant 1.0 : f32
  %o1 = arith.muli %n, %c3 : index
  %tmp = memref.view %ws[%c0][] : memref<?xi8> to memref<8x8xf32>
  scf.for %t = %c0 to %c3 step %c1 {
    linalg.generic {indexing_maps = [#t2, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%s : memref<8x8xf32>) outs(%tmp : memref<8x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    }
    linalg.copy ins(%tmp : memref<8x8xf32>) outs(%s : memref<8x8xf32>)
  }
  %a = memref.view %ws[%c0][] : memref<?xi8> to memref<8x8xf32>
  %b = memref.view %ws[%o1][] : memref<?xi8> to memref<8x8xf32>
  linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%a : memref<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  linalg.copy ins(%a : memref<8x8xf32>) outs(%b : memref<8x8xf32>)
  linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%tmp : memref<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  linalg.fill ins(%cst : f32) outs(%z : memref<8x8xf32>)
  linalg.copy ins(%tmp : memref<8x8xf32>) outs(%z : memref<8x8xf32>)
  return
}

// -----

// A dynamic outer dim that is not padded (a batch) may be 0 at run time:
// the runs at either end are min(rows, 1) long, none when there are no
// rows (they would be written outside the buffer).
// CHECK-LABEL: func.func @dynamic_batch(
// CHECK: %[[EDGE:.+]] = arith.minui %{{.+}}, %{{.+}} : index
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [%[[EDGE]], 1]
// CHECK: memref.reinterpret_cast {{.+}} sizes: [%{{.+}}, 2]
// CHECK: memref.reinterpret_cast {{.+}} sizes: [%[[EDGE]], 1]
func.func @dynamic_batch(%x: memref<?x4xf32>, %ws: memref<?xi8>) {
  %cst = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %buf = memref.view %ws[%c0][%n] : memref<?xi8> to memref<?x6xf32>
  linalg.fill ins(%cst : f32) outs(%buf : memref<?x6xf32>)
  %win = memref.subview %buf[0, 1] [%n, 4] [1, 1] : memref<?x6xf32> to memref<?x4xf32, strided<[6, 1], offset: 1>>
  memref.copy %x, %win : memref<?x4xf32> to memref<?x4xf32, strided<[6, 1], offset: 1>>
  return
}
