// RUN: kiln-opt %s --kiln-vectorize-contractions="vector-bits=256 vector-registers=16" --canonicalize --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-vectorize-contractions --split-input-file | FileCheck %s --check-prefix=NONE
// Register-blocked kernels for f32 contractions on buffers. With 256-bit
// vectors and 16 registers, a 13x20 output is tiled 6 rows x 2 vectors.
// The weight (8x20) is larger than the input (13x8), so the column tiles
// are the outer loop: two of them, the last (4 columns, one masked vector)
// under an scf.if; inside each, a loop over three row tiles, the last (one
// row) under an scf.if. Without vector registers (the default) nothing
// changes.

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<13x8xf32>, %[[W:[a-z0-9]+]]: memref<8x20xf32>, %[[Y:[a-z0-9]+]]: memref<13x20xf32>)
// CHECK-DAG: %[[MASK:.+]] = arith.constant dense<[true, true, true, true, false, false, false, false]> : vector<8xi1>
// CHECK-DAG: %[[C12:.+]] = arith.constant 12 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C18:.+]] = arith.constant 18 : index
// CHECK-DAG: %[[C6:.+]] = arith.constant 6 : index
// CHECK: scf.for %[[N:.+]] = %{{.+}} to %{{.+}} step %[[C16]] {
// CHECK-NEXT: %[[FULLN:.+]] = arith.cmpi slt, %[[N]], %[[C16]]
// CHECK-NEXT: scf.if %[[FULLN]] {
// CHECK-NEXT: scf.for %[[M:.+]] = %{{.+}} to %[[C18]] step %[[C6]] {
// CHECK-NEXT: %[[FULLM:.+]] = arith.cmpi slt, %[[M]], %[[C12]]
// CHECK-NEXT: scf.if %[[FULLM]] {
// CHECK-COUNT-12: vector.load %[[Y]]
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.load %[[W]]
// CHECK: vector.load %[[W]]
// CHECK: %[[S:.+]] = memref.load %[[X]][%[[M]],
// CHECK: %[[B:.+]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK: arith.mulf %[[B]], {{.+}} fastmath<contract> : vector<8xf32>
// CHECK: arith.addf {{.+}} fastmath<contract> : vector<8xf32>
// CHECK-COUNT-12: vector.store
// The last row: one row of accumulators.
// CHECK: } else {
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>) {
// The last column tile: one masked vector.
// CHECK: } else {
// CHECK: scf.for
// CHECK: vector.maskedload %[[Y]][%{{.+}}, %[[N]]], %[[MASK]]
// CHECK: vector.maskedstore
// CHECK-NOT: linalg.generic
// NONE-LABEL: func.func @matmul(
// NONE: linalg.generic
func.func @matmul(%x: memref<13x8xf32>, %w: memref<8x20xf32>, %y: memref<13x20xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<13x8xf32>, memref<8x20xf32>) outs(%y : memref<13x20xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A stride-2 convolution (loops n, g, mg, cg, kh, kw, oh, ow as the
// lowering writes them): each row vector is every other element of a wide
// load that stops at the last element needed.
#x = affine_map<(n, g, mg, cg, kh, kw, oh, ow) -> (n, g, cg, oh * 2 + kh, ow * 2 + kw)>
#w = affine_map<(n, g, mg, cg, kh, kw, oh, ow) -> (g, mg, cg, kh, kw)>
#y = affine_map<(n, g, mg, cg, kh, kw, oh, ow) -> (n, g, mg, oh, ow)>
// CHECK-LABEL: func.func @conv_s2(
// CHECK: vector.maskedload {{.+}} : memref<1x1x3x17x17xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: vector.shuffle {{.+}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @conv_s2(%x: memref<1x1x3x17x17xf32>, %w: memref<1x4x3x3x3xf32>, %y: memref<1x1x4x8x8xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x1x3x17x17xf32>, memref<1x4x3x3x3xf32>) outs(%y : memref<1x1x4x8x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// B transposed: no operand is contiguous along the output's last dim, so
// the generic stays for the loop lowering.
#a = affine_map<(m, k, n) -> (m, k)>
#bt = affine_map<(m, k, n) -> (n, k)>
#c = affine_map<(m, k, n) -> (m, n)>
// CHECK-LABEL: func.func @transposed(
// CHECK: linalg.generic
func.func @transposed(%x: memref<4x8xf32>, %w: memref<20x8xf32>, %y: memref<4x20xf32>) {
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<4x8xf32>, memref<20x8xf32>) outs(%y : memref<4x20xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A constant fill of the output just before: the accumulators start from
// the constant and the fill goes (every element is written by one tile).
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
// CHECK-LABEL: func.func @filled(
// CHECK-SAME: %[[Y:[a-z0-9]+]]: memref<2x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-NOT: vector.load %[[Y]]
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %[[ZERO]], %{{.+}} = %[[ZERO]])
// CHECK: vector.store {{.+}}, %[[Y]]
func.func @filled(%x: memref<2x4xf32>, %w: memref<4x8xf32>, %y: memref<2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x4xf32>, memref<4x8xf32>) outs(%y : memref<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The input (20x3) larger than the weight (3x8): row tiles outside (8 rows
// each: with one vector per row, 8 accumulators fit).
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
// CHECK-LABEL: func.func @tall(
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C24:.+]] = arith.constant 24 : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C24]] step %[[C8]] {
// CHECK-NOT: scf.for
// CHECK: vector.load
func.func @tall(%x: memref<20x3xf32>, %w: memref<3x8xf32>, %y: memref<20x8xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<20x3xf32>, memref<3x8xf32>) outs(%y : memref<20x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Constant weights as the row operand are packed at compile time into
// [column tiles][reduction steps][tile width]: here 10 columns at 8 lanes x
// 2 vectors are one tile of 16, zero-padded, read whole (no masks); the
// original global goes.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
memref.global "private" constant @w : memref<3x10xf32> = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0]]>
// CHECK-NOT: memref.global "private" constant @w
// CHECK-LABEL: func.func @packed(
// CHECK: %[[FLAT:.+]] = memref.get_global @__kiln_packed_0 : memref<48xf32>
// CHECK: %[[PANEL:.+]] = memref.expand_shape %[[FLAT]] {{.+}} into memref<1x3x16xf32>
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: vector.load %[[PANEL]][%{{.+}}, %[[K]], %{{.+}}] : memref<1x3x16xf32>, vector<8xf32>
// CHECK: vector.load %[[PANEL]][%{{.+}}, %[[K]], %{{.+}}] : memref<1x3x16xf32>, vector<8xf32>
// CHECK: memref.global "private" constant @__kiln_packed_0 : memref<48xf32> = dense_resource<__kiln_packed_0> {alignment = 64 : i64}
func.func @packed(%x: memref<4x3xf32>, %y: memref<4x10xf32>) {
  %w = memref.get_global @w : memref<3x10xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<4x3xf32>, memref<3x10xf32>) outs(%y : memref<4x10xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A block of constant weights (kiln-strip-dynamic-dims' blocks of columns
// around its windows of rows): a subview at an offset that a loop steps
// by whole panels (16 columns here). The whole weight is packed (2 tiles
// of 16, 3 steps) and each block's kernel starts at its own first tile,
// the offset over the panel width; the original global goes.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
memref.global "private" constant @wb : memref<3x32xf32> = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0], [32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0], [64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0]]>
// CHECK-NOT: memref.global "private" constant @wb
// CHECK-LABEL: func.func @packed_blocks(
// CHECK: scf.for %[[J:.+]] = %c0 to %c32 step %c16
// CHECK: %[[FIRST:.+]] = arith.divui %[[J]], %c16
// CHECK: %[[FLAT:.+]] = memref.get_global @__kiln_packed_0 : memref<96xf32>
// CHECK: %[[PANEL:.+]] = memref.expand_shape %[[FLAT]] {{.+}} into memref<2x3x16xf32>
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: vector.load %[[PANEL]][%[[FIRST]], %[[K]], %c0] : memref<2x3x16xf32>, vector<8xf32>
// CHECK: vector.load %[[PANEL]][%[[FIRST]], %[[K]], %c8] : memref<2x3x16xf32>, vector<8xf32>
// CHECK: memref.global "private" constant @__kiln_packed_0 : memref<96xf32>
func.func @packed_blocks(%x: memref<4x3xf32>, %y: memref<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %w = memref.get_global @wb : memref<3x32xf32>
  scf.for %j = %c0 to %c32 step %c16 {
    %wj = memref.subview %w[0, %j] [3, 16] [1, 1] : memref<3x32xf32> to memref<3x16xf32, strided<[32, 1], offset: ?>>
    %yj = memref.subview %y[0, %j] [4, 16] [1, 1] : memref<4x32xf32> to memref<4x16xf32, strided<[32, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%x, %wj : memref<4x3xf32>, memref<3x16xf32, strided<[32, 1], offset: ?>>)
        outs(%yj : memref<4x16xf32, strided<[32, 1], offset: ?>>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %0 = arith.mulf %p, %q : f32
      %1 = arith.addf %acc, %0 : f32
      linalg.yield %1 : f32
    }
  }
  return
}

// -----

// The same with blocks of 12 columns, not whole panels of 16: a block's
// tile would read the next block's columns. Not packed: the kernel reads
// the view.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
memref.global "private" constant @wh : memref<3x32xf32> = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0], [32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0], [64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0]]>
// CHECK: memref.global "private" constant @wh
// CHECK-LABEL: func.func @partial_panel_blocks(
// CHECK-NOT: __kiln_packed
// CHECK: %[[W:.+]] = memref.get_global @wh
// CHECK: scf.for %[[J:.+]] = %c0 to %c24 step %c12
// CHECK: %[[WJ:.+]] = memref.subview %[[W]][0, %[[J]]] [3, 12] [1, 1]
// CHECK: vector.load %[[WJ]]
// CHECK-NOT: __kiln_packed
// CHECK: return
func.func @partial_panel_blocks(%x: memref<4x3xf32>, %y: memref<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c12 = arith.constant 12 : index
  %c24 = arith.constant 24 : index
  %w = memref.get_global @wh : memref<3x32xf32>
  scf.for %j = %c0 to %c24 step %c12 {
    %wj = memref.subview %w[0, %j] [3, 12] [1, 1] : memref<3x32xf32> to memref<3x12xf32, strided<[32, 1], offset: ?>>
    %yj = memref.subview %y[0, %j] [4, 12] [1, 1] : memref<4x32xf32> to memref<4x12xf32, strided<[32, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%x, %wj : memref<4x3xf32>, memref<3x12xf32, strided<[32, 1], offset: ?>>)
        outs(%yj : memref<4x12xf32, strided<[32, 1], offset: ?>>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %0 = arith.mulf %p, %q : f32
      %1 = arith.addf %acc, %0 : f32
      linalg.yield %1 : f32
    }
  }
  return
}

// -----

// Around the kernel: the shared zero init (filled once, copied in), and
// an out-of-place ReLU into a graph output, with the kernel's own output
// dead afterwards, fold into the kernel: accumulators start at 0, the
// ReLU is applied in registers, the tile goes straight to %y. The zero
// buffer, now unread, is not filled either.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @fused(
// CHECK-SAME: %[[Y:[a-z0-9]+]]: memref<2x8xf32>, %[[WS:[a-z0-9]+]]: memref<128xi8>)
// CHECK-NOT: linalg.
// CHECK-NOT: memref.copy
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %[[ZERO]], %{{.+}} = %[[ZERO]])
// CHECK: %[[R0:.+]] = arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: vector.store %[[R0]], %[[Y]]
// CHECK-NOT: linalg.
func.func @fused(%x: memref<2x4xf32>, %w: memref<4x8xf32>, %y: memref<2x8xf32>, %ws: memref<128xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zeros = memref.view %ws[%c0][] : memref<128xi8> to memref<2x8xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%zeros : memref<2x8xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %t = memref.view %ws[%c64][] : memref<128xi8> to memref<2x8xf32>
  memref.copy %zeros, %t : memref<2x8xf32> to memref<2x8xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x4xf32>, memref<4x8xf32>) outs(%t : memref<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : memref<2x8xf32>) outs(%y : memref<2x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// One op, two kernels: the copy E from A's output into B's is A's epilogue
// (A's output is dead after it: A's kernel writes B's buffer) and looks
// like B's init. The first claim wins; B then starts from its buffer as
// A's kernel left it, and E is erased once.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @claimed(
// CHECK: %[[AOUT:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<128xi8> to memref<2x8xf32>
// CHECK: %[[BOUT:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<128xi8> to memref<2x8xf32>
// CHECK: vector.load %[[AOUT]]
// CHECK: vector.store %{{.+}}, %[[BOUT]]
// CHECK: vector.load %[[BOUT]]
// CHECK: vector.store %{{.+}}, %[[BOUT]]
// CHECK-NOT: linalg.generic
func.func @claimed(%x: memref<2x4xf32>, %w: memref<4x8xf32>, %ws: memref<128xi8>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %aout = memref.view %ws[%c0][] : memref<128xi8> to memref<2x8xf32>
  %bout = memref.view %ws[%c64][] : memref<128xi8> to memref<2x8xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x4xf32>, memref<4x8xf32>) outs(%aout : memref<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%aout : memref<2x8xf32>) outs(%bout : memref<2x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x4xf32>, memref<4x8xf32>) outs(%bout : memref<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Short output rows (7) with enough channels (8, one full vector) and
// multiply-adds per output (K = 16 x 3 x 3 = 144): vectors run along the
// output channels (the Channels kernels). The weights are packed along
// them, the 7 positions of a row are the broadcast scalars of the input,
// and the tile is gathered from the output (channels 49 floats apart)
// before the reduction loops. After them it is transposed in registers
// (7 rows padded to 8: three stages of 8 two-vector shuffles) and stored
// a channel at a time, 7 contiguous floats each.
#x = affine_map<(oc, ic, kh, kw, oh, ow) -> (ic, oh + kh, ow + kw)>
#w = affine_map<(oc, ic, kh, kw, oh, ow) -> (oc, ic, kh, kw)>
#y = affine_map<(oc, ic, kh, kw, oh, ow) -> (oc, oh, ow)>
memref.global "private" constant @w8 : memref<1152xf32> = dense<[-3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0]>
// CHECK-LABEL: func.func @channels(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<16x9x9xf32>, %[[Y:[a-z0-9]+]]: memref<8x7x7xf32>)
// CHECK-DAG: %[[OFFSETS:.+]] = arith.constant dense<[0, 49, 98, 147, 196, 245, 294, 343]> : vector<8xi32>
// CHECK-DAG: %[[SEVEN:.+]] = arith.constant dense<[true, true, true, true, true, true, true, false]> : vector<8xi1>
// CHECK-DAG: %[[PANEL:.+]] = memref.expand_shape {{.+}} into memref<1x144x8xf32>
// CHECK: scf.for %[[OH:[a-z0-9]+]] =
// CHECK-COUNT-7: vector.gather %[[Y]][%{{.+}}, %[[OH]], %{{.+}}] [%[[OFFSETS]]]
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.load %[[PANEL]]
// CHECK-COUNT-7: memref.load %[[X]]
// CHECK-COUNT-24: vector.shuffle
// CHECK-COUNT-8: vector.maskedstore %[[Y]][%{{.+}}, %[[OH]], %{{.+}}], %[[SEVEN]], %{{.+}} : memref<8x7x7xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NOT: vector.scatter
// CHECK-NOT: linalg.generic
// CHECK: memref.global "private" constant @__kiln_packed_0 : memref<1152xf32>
func.func @channels(%x: memref<16x9x9xf32>, %y: memref<8x7x7xf32>) {
  %flat = memref.get_global @w8 : memref<1152xf32>
  %w = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [8, 16, 3, 3] : memref<1152xf32> into memref<8x16x3x3xf32>
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<16x9x9xf32>, memref<8x16x3x3xf32>) outs(%y : memref<8x7x7xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A strided conv whose output map is larger than its channel count (a
// stem: 2 -> 8 channels, 8x8 stride 2, 15x15 outputs, K = 128): the
// Channels reading takes the output channels, which only the constant
// weights have, as N, not the output rows, which only the input has.
#x = affine_map<(oc, ic, kh, kw, oh, ow) -> (ic, oh * 2 + kh, ow * 2 + kw)>
#w = affine_map<(oc, ic, kh, kw, oh, ow) -> (oc, ic, kh, kw)>
#y = affine_map<(oc, ic, kh, kw, oh, ow) -> (oc, oh, ow)>
memref.global "private" constant @stem_w : memref<1024xf32> = dense<[-3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0]>
// CHECK-LABEL: func.func @stem(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x37x37xf32>, %[[Y:[a-z0-9]+]]: memref<8x15x15xf32>)
// CHECK-DAG: %[[PANEL:.+]] = memref.expand_shape {{.+}} into memref<1x128x8xf32>
// CHECK: vector.load %[[PANEL]]
// CHECK: vector.shuffle
// CHECK: vector.maskedstore %[[Y]]
// CHECK-NOT: vector.scatter
// CHECK-NOT: linalg.generic
func.func @stem(%x: memref<2x37x37xf32>, %y: memref<8x15x15xf32>) {
  %flat = memref.get_global @stem_w : memref<1024xf32>
  %w = memref.expand_shape %flat [[0, 1, 2, 3]] output_shape [8, 2, 8, 8] : memref<1024xf32> into memref<8x2x8x8xf32>
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<2x37x37xf32>, memref<8x2x8x8xf32>) outs(%y : memref<8x15x15xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Out of place, an epilogue whose buffer the memory plan put where the
// contraction's input was (bytes 0-32 of the workspace: the input is dead
// after the matmul) stays a separate loop: the kernel would overwrite the
// input while it still reads it. The views in between do not stop the
// folding as such.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @overlap(
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
func.func @overlap(%w: memref<4x8xf32>, %ws: memref<256xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %x = memref.view %ws[%c0][] : memref<256xi8> to memref<2x4xf32>
  %t = memref.view %ws[%c64][] : memref<256xi8> to memref<2x8xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x4xf32>, memref<4x8xf32>) outs(%t : memref<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %r = memref.view %ws[%c0][] : memref<256xi8> to memref<2x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : memref<2x8xf32>) outs(%r : memref<2x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// The same with a residual add written in place into the skip
// connection's buffer (bytes 64-128): the epilogue is rebuilt on the flat
// shape with one view of that buffer for its input and its output, and
// folded in: each tile reads the elements of that buffer it then writes.
#ra = affine_map<(m, k, n) -> (m, k)>
#rb = affine_map<(m, k, n) -> (k, n)>
#rc = affine_map<(m, k, n) -> (m, n)>
#rid3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @reshaped_residual(
// CHECK-NOT: linalg.generic
// CHECK: %[[R:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<256xi8> to memref<2x2x4xf32>
// CHECK: %[[RV:.+]] = memref.collapse_shape %[[R]] {{\[\[}}0], [1, 2]] : memref<2x2x4xf32> into memref<2x8xf32>
// CHECK: %[[ACC:.+]]:2 = scf.for
// CHECK: %[[S:.+]] = vector.load %[[RV]][%{{.+}}, %{{.+}}] : memref<2x8xf32>, vector<8xf32>
// CHECK-NEXT: %[[A:.+]] = arith.addf %[[ACC]]#0, %[[S]] : vector<8xf32>
// CHECK-NEXT: %[[M:.+]] = arith.maximumf %[[A]], %{{.+}} : vector<8xf32>
// CHECK-NEXT: vector.store %[[M]], %[[RV]][
// CHECK-NOT: linalg.generic
func.func @reshaped_residual(%w: memref<2x4xf32>, %ws: memref<256xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %x = memref.view %ws[%c128][] : memref<256xi8> to memref<4x8xf32>
  %t = memref.view %ws[%c0][] : memref<256xi8> to memref<2x8xf32>
  %r = memref.view %ws[%c64][] : memref<256xi8> to memref<2x2x4xf32>
  linalg.generic {indexing_maps = [#ra, #rb, #rc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<2x4xf32>, memref<4x8xf32>) outs(%t : memref<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %t3 = memref.expand_shape %t [[0], [1, 2]] output_shape [2, 2, 4] : memref<2x8xf32> into memref<2x2x4xf32>
  linalg.generic {indexing_maps = [#rid3, #rid3, #rid3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t3, %r : memref<2x2x4xf32>, memref<2x2x4xf32>) outs(%r : memref<2x2x4xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %a = arith.addf %in, %s : f32
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// An epilogue that reads the output back through reshapes to its own
// shape (what an epilogue rebuilt for the other branch of a residual add
// ends up reading once kernels have moved) reads the output: it is folded
// in, out of place into bytes 64-128.
#sa = affine_map<(m, k, n) -> (m, k)>
#sb = affine_map<(m, k, n) -> (k, n)>
#sc = affine_map<(m, k, n) -> (m, n)>
#sid = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @reshaped_back(
// CHECK-NOT: linalg.generic
// CHECK: %[[ACC:.+]]:2 = scf.for
// CHECK: %[[S:.+]] = vector.load %{{.+}} : memref<2x8xf32>, vector<8xf32>
// CHECK-NEXT: %[[A:.+]] = arith.addf %[[ACC]]#0, %[[S]] : vector<8xf32>
// CHECK-NOT: linalg.generic
func.func @reshaped_back(%w: memref<2x4xf32>, %skip: memref<2x8xf32>, %ws: memref<256xi8>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %x = memref.view %ws[%c128][] : memref<256xi8> to memref<4x8xf32>
  %t = memref.view %ws[%c0][] : memref<256xi8> to memref<2x8xf32>
  %r = memref.view %ws[%c64][] : memref<256xi8> to memref<2x8xf32>
  %flat = memref.collapse_shape %t [[0, 1]] : memref<2x8xf32> into memref<16xf32>
  %back = memref.expand_shape %flat [[0, 1]] output_shape [2, 8] : memref<16xf32> into memref<2x8xf32>
  linalg.generic {indexing_maps = [#sa, #sb, #sc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<2x4xf32>, memref<4x8xf32>) outs(%t : memref<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#sid, #sid, #sid], iterator_types = ["parallel", "parallel"]} ins(%back, %skip : memref<2x8xf32>, memref<2x8xf32>) outs(%r : memref<2x8xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %a = arith.addf %in, %s : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// A flattened 1x1 conv's [C, H*W] output read as [C, H, W] by its ReLU
// (through views defined after the contraction): the ReLU is rebuilt on
// the flat shape, its buffer viewed the same way, and folded in, out of
// place (bytes 0-64 and 64-128 do not overlap the input at 128).
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @reshaped_epilogue(
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: vector.store %{{.+}}, %[[FLAT:[a-z_0-9]+]][
// CHECK-NOT: linalg.generic
func.func @reshaped_epilogue(%w: memref<2x4xf32>, %ws: memref<256xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %x = memref.view %ws[%c128][] : memref<256xi8> to memref<4x8xf32>
  %t = memref.view %ws[%c0][] : memref<256xi8> to memref<2x8xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<2x4xf32>, memref<4x8xf32>) outs(%t : memref<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %t3 = memref.expand_shape %t [[0], [1, 2]] output_shape [2, 2, 4] : memref<2x8xf32> into memref<2x2x4xf32>
  %r = memref.view %ws[%c64][] : memref<256xi8> to memref<2x2x4xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t3 : memref<2x2x4xf32>) outs(%r : memref<2x2x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Constant weights as the column operand (a conv's, against activations
// along the row) are packed too, into [M tiles][reduction steps][MR]: the
// MR broadcasts of a step read adjacent floats. 10 rows in tiles of 8
// (one full, one of 2, zero-padded) over 3 steps.
#w = affine_map<(m, k, n) -> (m, k)>
#x = affine_map<(m, k, n) -> (k, n)>
#y = affine_map<(m, k, n) -> (m, n)>
memref.global "private" constant @wc : memref<10x3xf32> = dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0], [12.0, 13.0, 14.0], [15.0, 16.0, 17.0], [18.0, 19.0, 20.0], [21.0, 22.0, 23.0], [24.0, 25.0, 26.0], [27.0, 28.0, 29.0]]>
// CHECK-NOT: memref.global "private" constant @wc
// CHECK-LABEL: func.func @packed_columns(
// CHECK: %[[PANEL:.+]] = memref.expand_shape %{{.+}} {{.+}} into memref<2x3x8xf32>
// CHECK: scf.for
// CHECK-COUNT-8: memref.load %[[PANEL]]
// CHECK: memref.global "private" constant @__kiln_packed_0 : memref<48xf32>
func.func @packed_columns(%x: memref<3x8xf32>, %y: memref<10x8xf32>) {
  %w = memref.get_global @wc : memref<10x3xf32>
  linalg.generic {indexing_maps = [#w, #x, #y], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<10x3xf32>, memref<3x8xf32>) outs(%y : memref<10x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}


// -----

// A batched contraction whose constant column operand has the batch (a
// Winograd conv's 16 transformed kernels): packed per batch item, one set
// of [M tiles][steps][MR] each, the tile read at batch * tiles + m / MR.
#w = affine_map<(b, m, k, n) -> (b, m, k)>
#x = affine_map<(b, m, k, n) -> (b, k, n)>
#y = affine_map<(b, m, k, n) -> (b, m, n)>
memref.global "private" constant @wb : memref<2x10x3xf32> = dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0], [12.0, 13.0, 14.0], [15.0, 16.0, 17.0], [18.0, 19.0, 20.0], [21.0, 22.0, 23.0], [24.0, 25.0, 26.0], [27.0, 28.0, 29.0]], [[100.0, 101.0, 102.0], [103.0, 104.0, 105.0], [106.0, 107.0, 108.0], [109.0, 110.0, 111.0], [112.0, 113.0, 114.0], [115.0, 116.0, 117.0], [118.0, 119.0, 120.0], [121.0, 122.0, 123.0], [124.0, 125.0, 126.0], [127.0, 128.0, 129.0]]]>
// CHECK-LABEL: func.func @packed_batched_columns(
// CHECK: %[[PANEL:.+]] = memref.expand_shape %{{.+}} {{.+}} into memref<4x3x8xf32>
// CHECK: scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[SET:.+]] = arith.muli %[[B]], %{{.+}} : index
// CHECK: %[[TILE:.+]] = arith.addi %[[SET]], %{{.+}} : index
// CHECK: memref.load %[[PANEL]][%[[TILE]],
// CHECK: memref.global "private" constant @__kiln_packed_0 : memref<96xf32>
func.func @packed_batched_columns(%x: memref<2x3x8xf32>, %y: memref<2x10x8xf32>) {
  %w = memref.get_global @wb : memref<2x10x3xf32>
  linalg.generic {indexing_maps = [#w, #x, #y], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<2x10x3xf32>, memref<2x3x8xf32>) outs(%y : memref<2x10x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The epilogue writes the window of a padded buffer whose border fills sit
// between it and the kernel (as kiln-lower-copies leaves a pad's fill).
// They share no memory with the kernel, so they move before it, the
// kernel still starts from the zero fill (folded) and stores the ReLU's
// result straight into the window.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @epilogue_into_pad(
// CHECK-COUNT-2: linalg.generic {{.+}} outs(%{{.+}} : memref<2x1xf32, strided<[10, 1]{{.*}}>>)
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: %[[R:.+]] = arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: vector.store %[[R]], %{{.+}} : memref<2x8xf32, strided<[10, 1], offset: 1>>, vector<8xf32>
// CHECK-NOT: linalg.generic
func.func @epilogue_into_pad(%x: memref<2x4xf32>, %w: memref<4x8xf32>, %ws: memref<256xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %t = memref.view %ws[%c64][] : memref<256xi8> to memref<2x8xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x8xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x4xf32>, memref<4x8xf32>) outs(%t : memref<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %pad = memref.view %ws[%c128][] : memref<256xi8> to memref<2x10xf32>
  %left = memref.subview %pad[0, 0] [2, 1] [1, 1] : memref<2x10xf32> to memref<2x1xf32, strided<[10, 1]>>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%left : memref<2x1xf32, strided<[10, 1]>>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %right = memref.subview %pad[0, 9] [2, 1] [1, 1] : memref<2x10xf32> to memref<2x1xf32, strided<[10, 1], offset: 9>>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%right : memref<2x1xf32, strided<[10, 1], offset: 9>>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %win = memref.subview %pad[0, 1] [2, 8] [1, 1] : memref<2x10xf32> to memref<2x8xf32, strided<[10, 1], offset: 1>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : memref<2x8xf32>) outs(%win : memref<2x8xf32, strided<[10, 1], offset: 1>>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A flattened 1x1 conv ([2, 16] = [2, 2x8]) whose ReLU reads it as
// [2, 2, 8] and writes the window of a padded [2, 4, 10] buffer, which
// cannot be viewed flat: the conv and its bias broadcast are rebuilt on
// [2, 2, 8] (the 16 split into 2 x 8), and the kernel starts from the bias
// and stores the ReLU's result into the window. Nothing is left as a
// generic.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#bias = affine_map<(m, n) -> (m)>
#id = affine_map<(m, n) -> (m, n)>
#id3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @split_to_window(
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: %[[R:.+]] = arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: vector.store %[[R]], %{{.+}} : memref<2x2x8xf32, strided<[40, 10, 1], offset: 11>>, vector<8xf32>
// CHECK-NOT: linalg.generic
func.func @split_to_window(%w: memref<2x4xf32>, %bv: memref<2xf32>, %ws: memref<512xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %x = memref.view %ws[%c0][] : memref<512xi8> to memref<4x16xf32>
  %pad = memref.view %ws[%c256][] : memref<512xi8> to memref<2x4x10xf32>
  %t = memref.view %ws[%c128][] : memref<512xi8> to memref<2x16xf32>
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]} ins(%bv : memref<2xf32>) outs(%t : memref<2x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<2x4xf32>, memref<4x16xf32>) outs(%t : memref<2x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %t3 = memref.expand_shape %t [[0], [1, 2]] output_shape [2, 2, 8] : memref<2x16xf32> into memref<2x2x8xf32>
  %win = memref.subview %pad[0, 1, 1] [2, 2, 8] [1, 1, 1] : memref<2x4x10xf32> to memref<2x2x8xf32, strided<[40, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t3 : memref<2x2x8xf32>) outs(%win : memref<2x2x8xf32, strided<[40, 10, 1], offset: 11>>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Two flattened 1x1 convs write the same buffer in turn, and one
// expansion of it (CSE keeps one) feeds both ReLUs, each into its own
// padded window. Each conv is rebuilt on a copy of the expansion of its
// own. Both ReLUs fold: the first conv's output, which its kernel then
// never writes, is dead after it, since the second conv's fill writes all
// of it before anything reads it. Nothing is left as a generic.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @split_shared_view(
// CHECK-NOT: linalg.generic
// CHECK: vector.store %{{.+}}, %{{.+}} : memref<2x2x8xf32, strided<[40, 10, 1], offset: 11>>, vector<8xf32>
// CHECK-NOT: linalg.generic
// CHECK: vector.store %{{.+}}, %{{.+}} : memref<2x2x8xf32, strided<[40, 10, 1], offset: 91>>, vector<8xf32>
// CHECK-NOT: linalg.generic
func.func @split_shared_view(%w: memref<2x4xf32>, %w2: memref<2x4xf32>, %ws: memref<1024xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %x = memref.view %ws[%c0][] : memref<1024xi8> to memref<4x16xf32>
  %pad = memref.view %ws[%c256][] : memref<1024xi8> to memref<4x4x10xf32>
  %t = memref.view %ws[%c128][] : memref<1024xi8> to memref<2x16xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<2x4xf32>, memref<4x16xf32>) outs(%t : memref<2x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %t3 = memref.expand_shape %t [[0], [1, 2]] output_shape [2, 2, 8] : memref<2x16xf32> into memref<2x2x8xf32>
  %win = memref.subview %pad[0, 1, 1] [2, 2, 8] [1, 1, 1] : memref<4x4x10xf32> to memref<2x2x8xf32, strided<[40, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t3 : memref<2x2x8xf32>) outs(%win : memref<2x2x8xf32, strided<[40, 10, 1], offset: 11>>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<2x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w2, %x : memref<2x4xf32>, memref<4x16xf32>) outs(%t : memref<2x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %win2 = memref.subview %pad[2, 1, 1] [2, 2, 8] [1, 1, 1] : memref<4x4x10xf32> to memref<2x2x8xf32, strided<[40, 10, 1], offset: 91>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t3 : memref<2x2x8xf32>) outs(%win2 : memref<2x2x8xf32, strided<[40, 10, 1], offset: 91>>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Two flattened 1x1 convs write the same buffer in turn, and one
// expansion of it (CSE keeps one) feeds both ReLUs, each into its own
// padded window. Each conv is rebuilt on a copy of the expansion of its
// own. The first conv's output is read again before the second writes
// it (%keep), so its ReLU stays a generic, and the copy it reads must
// still be defined before it. The second ReLU folds into its kernel.
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
#id3 = affine_map<(c, h, w) -> (c, h, w)>
#id2 = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @split_shared_view_kept(
// CHECK: scf.for
// CHECK: vector.store %{{.+}}, %[[T3:.+]][%{{.+}}] : memref<2x2x8xf32>, vector<8xf32>
// CHECK: linalg.generic {{.+}} ins(%[[T3]] : memref<2x2x8xf32>) outs(%{{.+}} : memref<2x2x8xf32, strided<[40, 10, 1], offset: 11>>)
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : memref<2x16xf32>) outs(%{{.+}} : memref<2x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: vector.store %{{.+}}, %{{.+}} : memref<2x2x8xf32, strided<[40, 10, 1], offset: 91>>, vector<8xf32>
// CHECK-NOT: linalg.generic
func.func @split_shared_view_kept(%w: memref<2x4xf32>, %w2: memref<2x4xf32>, %ws: memref<1024xi8>, %keep: memref<2x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %x = memref.view %ws[%c0][] : memref<1024xi8> to memref<4x16xf32>
  %pad = memref.view %ws[%c256][] : memref<1024xi8> to memref<4x4x10xf32>
  %t = memref.view %ws[%c128][] : memref<1024xi8> to memref<2x16xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<2x4xf32>, memref<4x16xf32>) outs(%t : memref<2x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %t3 = memref.expand_shape %t [[0], [1, 2]] output_shape [2, 2, 8] : memref<2x16xf32> into memref<2x2x8xf32>
  %win = memref.subview %pad[0, 1, 1] [2, 2, 8] [1, 1, 1] : memref<4x4x10xf32> to memref<2x2x8xf32, strided<[40, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t3 : memref<2x2x8xf32>) outs(%win : memref<2x2x8xf32, strided<[40, 10, 1], offset: 11>>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%t : memref<2x16xf32>) outs(%keep : memref<2x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<2x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w2, %x : memref<2x4xf32>, memref<4x16xf32>) outs(%t : memref<2x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %win2 = memref.subview %pad[2, 1, 1] [2, 2, 8] [1, 1, 1] : memref<4x4x10xf32> to memref<2x2x8xf32, strided<[40, 10, 1], offset: 91>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t3 : memref<2x2x8xf32>) outs(%win2 : memref<2x2x8xf32, strided<[40, 10, 1], offset: 91>>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A depthwise conv (1-D here): the channel is in both operands, so no dim
// is the weights' alone. M is then the output rows: tiles of 6 rows (of
// 8 lanes each) keep 6 accumulators, each row loading its own input
// vector against one broadcast weight per step.
#x = affine_map<(c, k, h, w) -> (c, h, w + k)>
#w = affine_map<(c, k, h, w) -> (c, k)>
#y = affine_map<(c, k, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @depthwise(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x6x10xf32>, %[[W:[a-z0-9]+]]: memref<4x3xf32>
// CHECK: scf.for %[[C:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: scf.for {{.+}} iter_args({{.+}}, {{.+}}, {{.+}}, {{.+}}, {{.+}}, {{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-6: vector.load %[[X]][%[[C]], %{{.+}}, %{{.+}}] : memref<4x6x10xf32>, vector<8xf32>
// CHECK: %[[S:.+]] = memref.load %[[W]][%[[C]], %{{.+}}] : memref<4x3xf32>
// CHECK-NEXT: %[[B:.+]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK-COUNT-6: arith.mulf %[[B]], %{{.+}} fastmath<contract> : vector<8xf32>
// CHECK-NOT: memref.load %[[W]]
// CHECK: scf.yield
func.func @depthwise(%x: memref<4x6x10xf32>, %w: memref<4x3xf32>, %y: memref<4x6x8xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<4x6x10xf32>, memref<4x3xf32>) outs(%y : memref<4x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
