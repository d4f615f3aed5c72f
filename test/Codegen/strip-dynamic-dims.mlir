// RUN: kiln-opt %s --kiln-strip-dynamic-dims --split-input-file -mlir-print-local-scope | FileCheck %s
// RUN: kiln-opt %s --kiln-strip-dynamic-dims --kiln-vectorize-contractions=vector-bits=256 --kiln-vectorize-elementwise=vector-bits=256 --split-input-file | FileCheck %s --check-prefix=KERNEL
// RUN: kiln-opt %s --kiln-strip-dynamic-dims=parallel=1 --kiln-vectorize-contractions="vector-bits=256 parallel=1" --kiln-vectorize-elementwise="vector-bits=256 parallel=1" --split-input-file | FileCheck %s --check-prefix=THREADS
// Generics with a dynamic loop range (a model's dynamic dim) become loops
// over static windows: full windows of 16 along the dim, then (in a
// contraction with an operand the rows share) a window of 8 and one of 4,
// then the rest one at a time, each a copy of the generic on subviews,
// which the kernels take. A contraction whose kernel takes its rows as a
// dynamic M runs the rows left after the windows of 16 as one piece
// instead.

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @rows(
// CHECK-SAME: %[[X:.*]]: memref<?x8xf32>, %[[W:.*]]: memref<8x32xf32>, %[[Y:.*]]: memref<?x32xf32>)
// CHECK: %[[S:.*]] = memref.dim %[[X]], %c0
// CHECK: %[[R:.*]] = arith.remui %[[S]], %c16
// CHECK: %[[FULL:.*]] = arith.subi %[[S]], %[[R]]
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[FULL]] step %c16 {
// CHECK:   %[[XS:.*]] = memref.subview %[[X]][%[[I]], 0] [16, 8] [1, 1]
// CHECK:   %[[YS:.*]] = memref.subview %[[Y]][%[[I]], 0] [16, 32] [1, 1]
// CHECK:   linalg.generic {{.*}} ins(%[[XS]], %[[W]] : memref<16x8xf32, strided<[8, 1], offset: ?>>, memref<8x32xf32>) outs(%[[YS]] : memref<16x32xf32, strided<[32, 1], offset: ?>>)
// CHECK: scf.for %[[J:.*]] = %[[FULL]] to %[[S]] step %c16 {
// CHECK:   %[[LEFT:.*]] = arith.subi %[[S]], %[[J]]
// CHECK-NOT: memref.dim
// CHECK:   %[[XR:.*]] = memref.subview %[[X]][%[[J]], 0] [%[[LEFT]], 8] [1, 1]
// CHECK:   %[[YR:.*]] = memref.subview %[[Y]][%[[J]], 0] [%[[LEFT]], 32] [1, 1]
// CHECK:   linalg.generic {{.*}} ins(%[[XR]], %[[W]] : memref<?x8xf32, strided<[8, 1], offset: ?>>, memref<8x32xf32>) outs(%[[YR]] : memref<?x32xf32, strided<[32, 1], offset: ?>>)
// CHECK-NOT: linalg.generic
// Both pieces become vector kernels: the rows left in whole tiles of 6,
// then a tile of 1 to 5 rows, whichever are left.
// KERNEL-LABEL: func.func @rows(
// KERNEL-NOT: linalg.generic
// KERNEL: vector.store {{.*}} : memref<16x32xf32, strided<[32, 1], offset: ?>>, vector<8xf32>
// KERNEL-NOT: linalg.generic
// KERNEL: %[[M:.*]] = memref.dim %{{.*}}, %c0{{.*}} : memref<?x32xf32, strided<[32, 1], offset: ?>>
// KERNEL: %[[LEFT:.*]] = arith.remui %[[M]], %c6
// KERNEL: %[[TILES:.*]] = arith.subi %[[M]], %[[LEFT]]
// KERNEL: scf.for %{{.*}} = %c0{{.*}} to %[[TILES]] step %c6
// KERNEL: scf.index_switch %[[LEFT]]
// KERNEL: case 1 {
// KERNEL: vector.store %{{.*}}, %{{.*}}[%[[TILES]], %{{.*}}] : memref<?x32xf32, strided<[32, 1], offset: ?>>, vector<8xf32>
// KERNEL: case 5 {
// KERNEL: default {
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @rows(%x: memref<?x8xf32>, %w: memref<8x32xf32>, %y: memref<?x32xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<8x32xf32>) outs(%y : memref<?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Batch rows left over a static window of time steps (an LSTM's input
// projection): the kernel's M is the 16 time steps (tiles of 6, 6 and
// 4, each pass over the weights serving 6 rows), the rows left a loop
// around them to their size; no tile of the rows left.
#bm = affine_map<(b, t, n, k) -> (b, t, k)>
#kn4 = affine_map<(b, t, n, k) -> (k, n)>
#bn = affine_map<(b, t, n, k) -> (b, t, n)>
// CHECK-LABEL: func.func @rows_loop(
// CHECK: scf.for {{.*}} step %c16 {
// CHECK: scf.for {{.*}} step %c16 {
// CHECK:   linalg.generic {{.+}} outs(%{{.+}} : memref<?x16x64xf32
// KERNEL-LABEL: func.func @rows_loop(
// KERNEL: scf.for {{.*}} step %c16
// KERNEL-NOT: linalg.generic
// KERNEL: %[[B:.*]] = memref.dim %{{.*}}, %c0{{.*}} : memref<?x16x64xf32, strided<[1024, 64, 1], offset: ?>>
// KERNEL: scf.for %{{.*}} = %c0{{.*}} to %[[B]] step %c1
// KERNEL: scf.for %{{.*}} = %c0{{.*}} to %c18 step %c6
// KERNEL-NOT: scf.index_switch
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @rows_loop(%x: memref<?x16x80xf32>, %w: memref<80x64xf32>, %y: memref<?x16x64xf32>) {
  linalg.generic {indexing_maps = [#bm, #kn4, #bn], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x16x80xf32>, memref<80x64xf32>) outs(%y : memref<?x16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A transpose into the dynamic dim (attention's keys written as
// [heads, 64, length]): windows of 16, 8 and 4 along it before the single
// columns, which the elementwise kernels take as block transposes.
#keys = affine_map<(h, k, j) -> (j, h, k)>
#keysT = affine_map<(h, k, j) -> (h, k, j)>
// CHECK-LABEL: func.func @transpose_into(
// CHECK: scf.for {{.*}} step %c16 {
// CHECK:   linalg.generic {{.+}} outs(%{{.+}} : memref<4x64x16xf32
// CHECK: scf.for {{.*}} step %c8 {
// CHECK:   linalg.generic {{.+}} outs(%{{.+}} : memref<4x64x8xf32
// CHECK: scf.for {{.*}} step %c4 {
// CHECK:   linalg.generic {{.+}} outs(%{{.+}} : memref<4x64x4xf32
// CHECK: scf.for {{.*}} step %c1 {
// CHECK:   linalg.generic {{.+}} outs(%{{.+}} : memref<4x64x1xf32
// KERNEL-LABEL: func.func @transpose_into(
// KERNEL-NOT: linalg.generic
// KERNEL: vector.shuffle
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @transpose_into(%k: memref<?x4x64xf32>, %kt: memref<4x64x?xf32>) {
  linalg.generic {indexing_maps = [#keys, #keysT], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : memref<?x4x64xf32>) outs(%kt : memref<4x64x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// The rows left as one piece only where its kernel takes them whole with
// its epilogue folded in: here the epilogue writes another buffer while
// the output stays live (a function result), so the kernel could not fold
// it, and the rest goes back to windows of 8, 4 and 1, which the vector
// passes take static.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @rest_windows(
// CHECK: scf.for {{.*}} step %c16 {
// CHECK:   linalg.generic {{.+}} outs(%{{.+}} : memref<16x32xf32
// CHECK:   linalg.generic {{.+}} outs(%{{.+}} : memref<16x32xf32
// CHECK: scf.for {{.*}} step %c8 {
// CHECK:   linalg.generic {{.+}} outs(%{{.+}} : memref<8x32xf32
// CHECK: scf.for {{.*}} step %c4 {
// CHECK: scf.for {{.*}} step %c1 {
// CHECK:   linalg.generic {{.+}} outs(%{{.+}} : memref<1x32xf32
// CHECK:   linalg.generic {{.+}} outs(%{{.+}} : memref<1x32xf32
// CHECK-NOT: scf.index_switch
// CHECK-NOT: memref<?x
// CHECK: return
// KERNEL-LABEL: func.func @rest_windows(
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @rest_windows(%x: memref<?x8xf32>, %w: memref<8x32xf32>, %y: memref<?x32xf32>, %z: memref<?x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<8x32xf32>) outs(%y : memref<?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<?x32xf32>) outs(%z : memref<?x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The same with dynamic columns too, which stay windows (an epilogue runs
// window by window): every piece inside the rows left, the columns'
// windows too, is checked; the kernel would fold none of the epilogues,
// so the rows go back to windows of 8, 4 and 1.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @rest_windows_inner(
// CHECK: scf.for {{.*}} step %c16 {
// CHECK:   scf.for {{.*}} step %c16{{.*}} {
// CHECK: scf.for {{.*}} step %c8 {
// CHECK: scf.for {{.*}} step %c4 {
// CHECK: scf.for {{.*}} step %c1{{.*}} {
// CHECK-NOT: memref<?x16xf32
// CHECK-NOT: memref<?x1xf32
// CHECK: return
func.func @rest_windows_inner(%q: memref<?x64xf32>, %kt: memref<64x?xf32>, %s: memref<?x?xf32>, %z: memref<?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %kt : memref<?x64xf32>, memref<64x?xf32>) outs(%s : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<?x?xf32>) outs(%z : memref<?x?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A dynamic reduction dim (attention's probabilities times values) stays
// whole: windows along it would each load and store the output tile
// again; the kernel loops over it, to its size. The dynamic output rows
// are windows of 16, then the rows left as one piece.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @both(
// CHECK-SAME: %[[P:.*]]: memref<?x?xf32>, %[[V:.*]]: memref<?x64xf32>, %[[O:.*]]: memref<?x64xf32>)
// CHECK: %[[M:.*]] = memref.dim %[[P]], %c0
// CHECK: scf.for %[[I:.*]] =
// CHECK:   %[[K:.*]] = memref.dim %[[P]], %c1
// CHECK:   %[[W:.*]] = memref.subview %[[P]][%[[I]], 0] [16, %[[K]]] [1, 1]
// CHECK:   %[[WO:.*]] = memref.subview %[[O]][%[[I]], 0] [16, 64] [1, 1]
// CHECK:   linalg.generic {{.+}} ins(%[[W]], %[[V]] : {{.+}}) outs(%[[WO]] :
// CHECK-NOT: scf.for
// CHECK: scf.for %[[J:.*]] =
// CHECK:   memref.subview %[[P]][%[[J]], 0] [%{{.*}}, %{{.*}}] [1, 1] : memref<?x?xf32> to memref<?x?xf32
// CHECK:   linalg.generic
// CHECK-NOT: scf.for
// KERNEL-LABEL: func.func @both(
// KERNEL: scf.for
// KERNEL: %[[KK:.*]] = memref.dim %{{.*}}, %c1{{.*}} : memref<16x?xf32
// KERNEL: scf.for %{{.*}} = %{{.*}} to %[[KK]] step %c1{{.*}} iter_args(
// KERNEL: vector.load %{{.*}} : memref<?x64xf32>, vector<8xf32>
// KERNEL: arith.mulf {{.*}} : vector<8xf32>
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @both(%p: memref<?x?xf32>, %v: memref<?x64xf32>, %o: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : memref<?x?xf32>, memref<?x64xf32>) outs(%o : memref<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %s = arith.addf %c, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same with an epilogue in place (a bias and ReLU on the output):
// with the keys whole, each window's sums are complete, so the epilogue
// runs window by window after its piece, and the kernel folds it in.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
// CHECK-LABEL: func.func @whole_keys_epilogue(
// CHECK: scf.for
// CHECK:   linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]{{.+}} outs(%[[W:[^ ]+]] : memref<16x64xf32
// CHECK:   linalg.generic {{.+}} ins(%[[W]], %{{.+}}) outs(%{{.+}} : memref<16x64xf32
// CHECK:     arith.maximumf
// KERNEL-LABEL: func.func @whole_keys_epilogue(
// KERNEL: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1{{.*}} iter_args(
// KERNEL: arith.maximumf {{.*}} : vector<8xf32>
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @whole_keys_epilogue(%p: memref<?x?xf32>, %v: memref<?x64xf32>, %b: memref<64xf32>, %o: memref<?x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : memref<?x?xf32>, memref<?x64xf32>) outs(%o : memref<?x64xf32>) {
  ^bb0(%a: f32, %x: f32, %c: f32):
    %m = arith.mulf %a, %x : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%o, %b : memref<?x64xf32>, memref<64xf32>) outs(%o : memref<?x64xf32>) {
  ^bb0(%y: f32, %bias: f32, %out: f32):
    %t = arith.addf %y, %bias : f32
    %r = arith.maximumf %t, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Dynamic columns (attention's queries times keys: the keys are the
// output's innermost dim, which only the transposed keys have, as their
// innermost index) stay whole: the pieces are windows of rows alone, and
// the kernel runs whole tiles of 16 columns (two vectors of 8), then the
// columns left as one tile of one or two vectors, the last one under a
// mask made from the columns left.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @whole_columns(
// CHECK-SAME: %[[Q:.*]]: memref<?x64xf32>, %[[KT:.*]]: memref<64x?xf32>, %[[S:.*]]: memref<?x?xf32>)
// CHECK: scf.for %[[I:.*]] =
// CHECK:   %[[N:.*]] = memref.dim %[[S]], %c1
// CHECK:   %[[W:.*]] = memref.subview %[[S]][%[[I]], 0] [16, %[[N]]] [1, 1]
// CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %[[KT]] : memref<16x64xf32{{.+}}, memref<64x?xf32>) outs(%[[W]] :
// CHECK-NOT: scf.for
// CHECK: scf.for %[[J:.*]] =
// CHECK:   memref.subview %[[S]][%[[J]], 0] [%{{.*}}, %{{.*}}] [1, 1] : memref<?x?xf32> to memref<?x?xf32
// CHECK-NOT: scf.for
// KERNEL-LABEL: func.func @whole_columns(
// KERNEL: %[[NN:.*]] = memref.dim %{{.*}}, %c1{{.*}} : memref<16x?xf32
// KERNEL: %[[REM:.*]] = arith.remui %[[NN]], %c16
// KERNEL: %[[WHOLE:.*]] = arith.subi %[[NN]], %[[REM]]
// KERNEL: scf.for %{{.*}} = %c0{{.*}} to %[[WHOLE]] step %c16
// KERNEL:   vector.load %{{.*}} : memref<64x?xf32>, vector<8xf32>
// KERNEL:   vector.store %{{.*}} : memref<16x?xf32, {{.+}}>, vector<8xf32>
// KERNEL: %[[LEFT:.*]] = arith.subi %[[NN]], %[[WHOLE]]
// KERNEL: %[[UP:.*]] = arith.addi %[[LEFT]], %c7
// KERNEL: %[[VECS:.*]] = arith.divui %[[UP]], %c8
// KERNEL: scf.index_switch %[[VECS]]
// KERNEL: case 1 {
// KERNEL:   %[[MASK:.*]] = vector.create_mask %[[LEFT]] : vector<8xi1>
// KERNEL:   vector.maskedload %{{.*}}[%{{.*}}, %[[WHOLE]]], %[[MASK]], %{{.*}} : memref<16x?xf32, {{.+}}>, vector<8xi1>, vector<8xf32>
// KERNEL:   vector.maskedload %{{.*}}, %[[MASK]], %{{.*}} : memref<64x?xf32>, vector<8xi1>, vector<8xf32>
// KERNEL:   vector.maskedstore %{{.*}}, %[[MASK]], %{{.*}} : memref<16x?xf32, {{.+}}>, vector<8xi1>, vector<8xf32>
// KERNEL: case 2 {
// KERNEL:   %[[LEFT2:.*]] = arith.subi %[[LEFT]], %c8
// KERNEL:   %[[MASK2:.*]] = vector.create_mask %[[LEFT2]] : vector<8xi1>
// KERNEL:   vector.load %{{.*}} : memref<64x?xf32>, vector<8xf32>
// KERNEL:   vector.maskedload %{{.*}}, %[[MASK2]], %{{.*}} : memref<64x?xf32>, vector<8xi1>, vector<8xf32>
// KERNEL:   vector.maskedstore %{{.*}}, %[[MASK2]], %{{.*}} : memref<16x?xf32, {{.+}}>, vector<8xi1>, vector<8xf32>
// KERNEL: default {
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @whole_columns(%q: memref<?x64xf32>, %kt: memref<64x?xf32>, %s: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %kt : memref<?x64xf32>, memref<64x?xf32>) outs(%s : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// With an epilogue to run window by window (a bias along the dynamic
// columns), the columns are still windows: an epilogue that the kernel
// could not fold in would be left over a dynamic dim.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
// CHECK-LABEL: func.func @columns_epilogue(
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     linalg.generic {{.+}} outs(%{{.+}} : memref<16x16xf32
// CHECK:     linalg.generic {{.+}} outs(%{{.+}} : memref<16x16xf32
// KERNEL-LABEL: func.func @columns_epilogue(
// KERNEL-NOT: vector.create_mask
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @columns_epilogue(%q: memref<?x64xf32>, %kt: memref<64x?xf32>, %b: memref<?xf32>, %s: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %kt : memref<?x64xf32>, memref<64x?xf32>) outs(%s : memref<?x?xf32>) {
  ^bb0(%a: f32, %x: f32, %c: f32):
    %m = arith.mulf %a, %x : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %b : memref<?x?xf32>, memref<?xf32>) outs(%s : memref<?x?xf32>) {
  ^bb0(%y: f32, %bias: f32, %out: f32):
    %t = arith.addf %y, %bias : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A dynamic dim read through a window offset (a stride-2 convolution
// over the dynamic dim): a window of w outputs at t reads (w - 1) * 2 + 3
// inputs from 2t. A conv takes windows of 8, 4 and 2 (once each at most)
// before single rows.
#in = affine_map<(t, k) -> (t * 2 + k)>
#w = affine_map<(t, k) -> (k)>
#out = affine_map<(t, k) -> (t)>
// CHECK-LABEL: func.func @window(
// KERNEL-LABEL: func.func @window(
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %c16
// CHECK: %[[AT:.*]] = arith.muli %[[T]], %c2
// CHECK: memref.subview %{{.*}}[%[[AT]]] [33] [1]
// CHECK: memref.subview %{{.*}}[%[[T]]] [16] [1]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<33xf32, {{.*}}>, memref<3xf32>) outs(%{{.*}} : memref<16xf32,
// CHECK: step %c8
// CHECK: memref.subview {{.*}} [17] [1]
// CHECK: step %c4
// CHECK: memref.subview {{.*}} [9] [1]
// CHECK: step %c2
// CHECK: memref.subview {{.*}} [5] [1]
// CHECK: step %c1
// CHECK: memref.subview {{.*}} [3] [1]
// CHECK: memref.subview {{.*}} [1] [1]
func.func @window(%x: memref<?xf32>, %w: memref<3xf32>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : memref<?xf32>, memref<3xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x2 = arith.mulf %a, %b : f32
    %s = arith.addf %c, %x2 : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A copy of stride-2 windows (a strided conv's im2col, every loop
// parallel) takes the conv's windows of 8, 4 and 2; with threads its
// window loops stay serial (a small map has one or two windows, 1024 x 3
// x 16 elements a window would have been shared out as a plain generic):
// blocks of 64 channels around them go to threads.
#cin = affine_map<(c, k, t) -> (c, t * 2 + k)>
#cout = affine_map<(c, k, t) -> (c, k, t)>
// CHECK-LABEL: func.func @window_copy(
// CHECK: scf.for {{.*}} step %c16
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<1024x33xf32, {{.*}}>) outs(%{{.*}} : memref<1024x3x16xf32,
// CHECK: step %c8
// CHECK: step %c4
// CHECK: step %c2
// CHECK: step %c1
// THREADS-LABEL: func.func @window_copy(
// THREADS: scf.for {{.*}} = %c0 to %c1024 step %c64 {
// THREADS-NOT: kiln.parallel
// THREADS: } {kiln.parallel}
// THREADS-NEXT: return
func.func @window_copy(%x: memref<1024x?xf32>, %y: memref<1024x3x?xf32>) {
  linalg.generic {indexing_maps = [#cin, #cout], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<1024x?xf32>) outs(%y : memref<1024x3x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// With threads, an activation over [144, ?, ?] whose windows are too
// small to share out (144 x 16 elements a row of windows): blocks of 9
// channels (16 blocks) go to threads, every piece inside them, so that
// the op is one parallel loop; the kernels inside mark nothing. Over
// [?, 256] the only static dim is the innermost, along which the kernels'
// vectors run: no blocks.
#e3 = affine_map<(c, h, w) -> (c, h, w)>
#e2 = affine_map<(r, c) -> (r, c)>
// THREADS-LABEL: func.func @activation_blocks(
// THREADS: scf.for {{.*}} = %c0 to %c144 step %c9 {
// THREADS-NOT: kiln.parallel
// THREADS: } {kiln.parallel}
// THREADS-NEXT: return
// A body that reads its position along the channels (a gather's row)
// gets no blocks: within one it would read its position in the block.
// THREADS-LABEL: func.func @positional(
// THREADS-NOT: step %c9
// THREADS: return
// THREADS-LABEL: func.func @row_activation(
// THREADS-NOT: = %c0 to %c256 step %c16
// THREADS: return
func.func @activation_blocks(%x: memref<144x?x?xf32>, %y: memref<144x?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<144x?x?xf32>) outs(%y : memref<144x?x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  return
}
func.func @positional(%x: memref<144x?x?xf32>, %t: memref<144xf32>, %y: memref<144x?x?xf32>) {
  linalg.generic {indexing_maps = [#e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<144x?x?xf32>) outs(%y : memref<144x?x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %c = linalg.index 0 : index
    %v = memref.load %t[%c] : memref<144xf32>
    %r = arith.addf %a, %v : f32
    linalg.yield %r : f32
  }
  return
}
func.func @row_activation(%x: memref<?x256xf32>, %y: memref<?x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#e2, #e2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x256xf32>) outs(%y : memref<?x256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A contraction over a dynamic size whose output an activation reads
// expanded ([4, P] as [4, H, W]: a flattened 1x1 conv's ReLU): the
// activation is rebuilt on [4, P] (its output collapsed) and each window
// of the contraction is followed by the activation on the same window,
// reading the very view the contraction writes, while it is in cache.
#k = affine_map<(m, p, k) -> (k, p)>
#wk = affine_map<(m, p, k) -> (m, k)>
#mp = affine_map<(m, p, k) -> (m, p)>
#e3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @epilogue(
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : memref<4x?x?xf32> into memref<4x?xf32>
// CHECK: scf.for {{.*}} step %c16
// CHECK: %[[W16:.+]] = memref.subview %{{.*}} [4, 16] [1, 1] : memref<4x?xf32> to memref<4x16xf32
// CHECK: linalg.generic {{.*}} outs(%[[W16]] :
// CHECK-NEXT: ^bb0
// CHECK: linalg.generic {{.*}} ins(%[[W16]] : {{.*}}) outs(%{{.*}} : memref<4x16xf32
// CHECK: arith.maximumf
// CHECK: scf.for {{.*}} step %c4
// CHECK: %[[W4:.+]] = memref.subview %{{.*}} [4, 4] [1, 1] : memref<4x?xf32> to memref<4x4xf32
// CHECK: linalg.generic {{.*}} ins(%[[W4]] : {{.*}}) outs(%{{.*}} : memref<4x4xf32
// CHECK: scf.for {{.*}} step %c1
// CHECK: %[[W1:.+]] = memref.subview %{{.*}} [4, 1] [1, 1] : memref<4x?xf32> to memref<4x1xf32
// CHECK: linalg.generic {{.*}} ins(%[[W1]] : {{.*}}) outs(%{{.*}} : memref<4x1xf32
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @epilogue(%x: memref<8x?xf32>, %w: memref<4x8xf32>, %a: memref<4x?xf32>,
                    %y: memref<4x?x?xf32>, %h: index, %wd: index) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#k, #wk, #mp], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x?xf32>, memref<4x8xf32>) outs(%a : memref<4x?xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %v = memref.expand_shape %a [[0], [1, 2]] output_shape [4, %h, %wd] : memref<4x?xf32> into memref<4x?x?xf32>
  linalg.generic {indexing_maps = [#e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : memref<4x?x?xf32>) outs(%y : memref<4x?x?xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Kept apart: the activation writes a planned buffer (a view of the
// workspace) first used there, and the contraction's output is read again
// after it. The plan then did not start that buffer at the contraction:
// it may sit where the contraction's input was, which the later windows
// still read.
#k = affine_map<(m, p, k) -> (k, p)>
#wk = affine_map<(m, p, k) -> (m, k)>
#mp = affine_map<(m, p, k) -> (m, p)>
#e3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @epilogue_kept(
// CHECK-NOT: memref.collapse_shape
// CHECK: return
func.func @epilogue_kept(%ws: memref<?xi8>, %x: memref<8x?xf32>, %w: memref<4x8xf32>,
                         %z: memref<4x?xf32>, %p: index, %h: index, %wd: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %a = memref.view %ws[%c0][%p] : memref<?xi8> to memref<4x?xf32>
  %y = memref.view %ws[%c4096][%h, %wd] : memref<?xi8> to memref<4x?x?xf32>
  linalg.generic {indexing_maps = [#k, #wk, #mp], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x?xf32>, memref<4x8xf32>) outs(%a : memref<4x?xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %v = memref.expand_shape %a [[0], [1, 2]] output_shape [4, %h, %wd] : memref<4x?xf32> into memref<4x?x?xf32>
  linalg.generic {indexing_maps = [#e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : memref<4x?x?xf32>) outs(%y : memref<4x?x?xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %zero : f32
    linalg.yield %r : f32
  }
  memref.copy %a, %z : memref<4x?xf32> to memref<4x?xf32>
  return
}

// -----

// A plain copy (a pad's interior, the rows a stride-1 conv stacks) stays
// one generic over its dynamic sizes: its loops, left to LLVM, copy whole
// rows, where pieces of 16 columns and a rest one column at a time cost
// more (a 64-channel 56x56 conv's copies: 0.32 -> 0.14 ms).
#id = affine_map<(c, t) -> (c, t)>
// CHECK-LABEL: func.func @plain_copy(
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<64x?xf32, strided<[?, 1], offset: ?>>) outs(%{{.*}} : memref<64x?xf32>)
// CHECK-NOT: scf.for
// With threads, blocks of its 64 channels go to threads, each copied
// whole along the dynamic dim: vectors along it, the last one masked.
// THREADS-LABEL: func.func @plain_copy(
// THREADS: scf.for {{.*}} = %c0 to %c64 step %c4 {
// THREADS: memref.subview {{.*}} : memref<64x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32, strided<[?, 1], offset: ?>>
// THREADS: vector.load {{.*}} : memref<4x?xf32, strided<[?, 1], offset: ?>>, vector<8xf32>
// THREADS: vector.maskedstore
// THREADS-NOT: kiln.parallel
// THREADS: } {kiln.parallel}
// THREADS-NEXT: return
func.func @plain_copy(%x: memref<64x?xf32, strided<[?, 1], offset: ?>>, %y: memref<64x?xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x?xf32, strided<[?, 1], offset: ?>>) outs(%y : memref<64x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// A copy that transposes the innermost dim keeps its pieces (the vector
// kernels transpose them in blocks).
#tr = affine_map<(c, t) -> (t, c)>
// CHECK-LABEL: func.func @transposing_copy(
// CHECK: scf.for {{.*}} step %c16
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<16x64xf32, {{.*}}>) outs(%{{.*}} : memref<64x16xf32,
func.func @transposing_copy(%x: memref<?x64xf32>, %y: memref<64x?xf32>) {
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xf32>) outs(%y : memref<64x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// Updated in place (LayerNorm's x - mean): the input and the output are one
// window, as the elementwise vectoriser needs to see.
#rows = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (m)>
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[X:.*]]: memref<?x256xf32>, %[[MEAN:.*]]: memref<?xf32>)
// CHECK: scf.for %[[I:.*]] =
// CHECK:   %[[XS:.*]] = memref.subview %[[X]][%[[I]], 0] [16, 256] [1, 1]
// CHECK:   %[[MS:.*]] = memref.subview %[[MEAN]][%[[I]]] [16] [1]
// CHECK:   linalg.generic {{.*}} ins(%[[XS]], %[[MS]] : {{.*}}) outs(%[[XS]] : {{.*}})
// KERNEL-LABEL: func.func @in_place(
// KERNEL-NOT: linalg.generic
// KERNEL: vector.store {{.*}} : memref<16x256xf32, strided<[256, 1], offset: ?>>, vector<8xf32>
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @in_place(%x: memref<?x256xf32>, %mean: memref<?xf32>) {
  linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : memref<?x256xf32>, memref<?xf32>) outs(%x : memref<?x256xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// A dynamic innermost dim that the elementwise kernels take whole (a
// softmax's max over its keys, both dims dynamic): windows along the
// queries only, each piece over every key; its kernel runs whole vectors
// along the keys, then the lanes left under a mask.
#qk = affine_map<(q, k) -> (q, k)>
#q = affine_map<(q, k) -> (q)>
// CHECK-LABEL: func.func @whole_keys(
// CHECK-SAME: %[[S:.*]]: memref<?x?xf32>, %[[M:.*]]: memref<?xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} step %c16 {
// CHECK:   %[[K:.*]] = memref.dim %[[S]], %c1
// CHECK:   %[[SS:.*]] = memref.subview %[[S]][%[[I]], 0] [16, %[[K]]] [1, 1]
// CHECK:   %[[MS:.*]] = memref.subview %[[M]][%[[I]]] [16] [1]
// CHECK:   linalg.generic {{.*}} ins(%[[SS]] : memref<16x?xf32, {{.*}}>) outs(%[[MS]] : {{.*}})
// CHECK: scf.for %[[J:.*]] = %{{.*}} step %c1 {
// CHECK:   linalg.generic {{.*}} ins(%{{.*}} : memref<1x?xf32, {{.*}}>)
// CHECK-NOT: linalg.generic
// KERNEL-LABEL: func.func @whole_keys(
// KERNEL-NOT: linalg.generic
// KERNEL: vector.create_mask
// KERNEL: vector.maskedload {{.*}} : memref<16x?xf32, strided<[?, 1], offset: ?>>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// KERNEL: vector.reduction <maximumf>
// KERNEL: vector.create_mask
// KERNEL: vector.maskedload {{.*}} : memref<1x?xf32, strided<[?, 1], offset: ?>>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @whole_keys(%s: memref<?x?xf32>, %m: memref<?xf32>) {
  linalg.generic {indexing_maps = [#qk, #q], iterator_types = ["parallel", "reduction"]}
      ins(%s : memref<?x?xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x = arith.maximumf %o, %a : f32
    linalg.yield %x : f32
  }
  return
}

// -----

// A body that reads its position along the dynamic dim (an ArgMax's index)
// is left alone: within a window the position would start at 0.
#in2 = affine_map<(t) -> (t)>
#out2 = affine_map<(t) -> ()>
// CHECK-LABEL: func.func @position(
// CHECK-NOT: scf.for
// CHECK: linalg.index 0
func.func @position(%x: memref<?xf32>, %y: memref<i64>) {
  linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["reduction"]}
      ins(%x : memref<?xf32>) outs(%y : memref<i64>) {
  ^bb0(%a: f32, %o: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    %m = arith.maxsi %o, %c : i64
    linalg.yield %m : i64
  }
  return
}

// -----

// With threads, large enough windows: the loop over the windows of 16
// rows is parallel (they write disjoint rows); as a window of 16 rows is
// enough work to split alone, it is marked kiln.parallel_nests too and
// the kernel inside marks its own loop (run serially when the windows go
// to threads, shared out when there is one window). The rows left run
// once, as one piece: its loop is serial and its kernel shares out its
// own (columns), reading the weight once. A dynamic reduction dim stays
// whole (no windows): the kernel marks its own loop.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// THREADS-LABEL: func.func @threads(
// THREADS: scf.for
// THREADS: memref.subview {{.*}} [16, 256] [1, 1]
// THREADS-NOT: kiln.parallel
// THREADS: } {kiln.parallel}
// THREADS-NEXT: } {kiln.parallel, kiln.parallel_nests}
// THREADS-NEXT: scf.for
// THREADS: memref.subview {{.*}} [%{{.*}}, 256] [1, 1]
// THREADS: scf.index_switch
// THREADS: } {kiln.parallel}
// THREADS-NEXT: }{{$}}
// THREADS: memref.dim {{.*}} : memref<256x?xf32>
// THREADS: scf.for
// THREADS: } {kiln.parallel}
// THREADS-NEXT: return
func.func @threads(%x: memref<?x256xf32>, %w: memref<256x256xf32>, %y: memref<?x256xf32>,
                   %p: memref<256x?xf32>, %v: memref<?x64xf32>, %o: memref<256x64xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x256xf32>, memref<256x256xf32>) outs(%y : memref<?x256xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : memref<256x?xf32>, memref<?x64xf32>) outs(%o : memref<256x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A conv whose weights (1.4 MB) would stream once per window: blocks of
// 256 output channels outside the windows, each block's weights staying
// in L2 across them. (Strided: at stride 1 the kernel takes the columns
// whole, see @conv_columns_whole.)
#in = affine_map<(m, t, k) -> (2 * t + k)>
#w = affine_map<(m, t, k) -> (m, k)>
#out = affine_map<(m, t, k) -> (m, t)>
// CHECK-LABEL: func.func @channel_blocks(
// CHECK: scf.for %[[M:.*]] = %{{.*}} to %c512{{.*}} step %c256
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %c16
// CHECK: memref.subview %{{.*}}[%{{.*}}] [730] [1]
// CHECK: memref.subview %{{.*}}[%[[M]], 0] [256, 700] [1, 1]
// CHECK: memref.subview %{{.*}}[%[[M]], %[[T]]] [256, 16] [1, 1]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<256x16xf32,
func.func @channel_blocks(%x: memref<?xf32>, %w: memref<512x700xf32>, %y: memref<512x?xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?xf32>, memref<512x700xf32>) outs(%y : memref<512x?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A stride-2 max pool over a dynamic H x W: its output columns stay whole
// (the window vectors take a dynamic row, masking its last vector), and
// only its rows run in windows, each filled with -inf first. In 2-D
// windows of 16/8/4/2/1 a 111 x 111 map's pool ran as pieces of 25
// shapes, most of them narrow.
#x = affine_map<(c, oh, ow, kh, kw) -> (c, oh * 2 + kh, ow * 2 + kw)>
#k = affine_map<(c, oh, ow, kh, kw) -> (kh, kw)>
#y = affine_map<(c, oh, ow, kh, kw) -> (c, oh, ow)>
// CHECK-LABEL: func.func @pool_columns_whole(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8x?x?xf32>, %[[K:[a-z0-9]+]]: memref<3x3xf32>, %[[Y:[a-z0-9]+]]: memref<8x?x?xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[R:.+]] = %{{.+}} to %{{.+}} step %c16
// CHECK: %[[OUT:.+]] = memref.subview %[[Y]][0, %[[R]], 0] [8, 16, %{{.+}}] [1, 1, 1]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[OUT]] :
// CHECK: linalg.generic {{.+}} outs(%[[OUT]] : memref<8x16x?xf32,
// CHECK-NOT: [8, 16, 16]
// CHECK-NOT: [8, 1, 1]
// CHECK: return
// KERNEL-LABEL: func.func @pool_columns_whole(
// KERNEL-NOT: linalg.generic
// KERNEL: vector.create_mask
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @pool_columns_whole(%x: memref<8x?x?xf32>, %k: memref<3x3xf32>, %y: memref<8x?x?xf32>) {
  %neg = arith.constant 0xFF800000 : f32
  linalg.fill ins(%neg : f32) outs(%y : memref<8x?x?xf32>)
  linalg.generic {indexing_maps = [#x, #k, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %k : memref<8x?x?xf32>, memref<3x3xf32>) outs(%y : memref<8x?x?xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// The same at stride 1 (a row read at t + k, as a stride-1 conv over the
// row-stacked grid reads its input): the kernel takes the dynamic columns
// whole, masking the last vector, its tiles of output channels outside
// those of columns (each weight read once). In windows of 16 columns, a
// 7x7 map's 3x3 convs in resnet18 (512 channels) took 2.5x the time.
#in = affine_map<(m, t, k) -> (t + k)>
#w = affine_map<(m, t, k) -> (m, k)>
#out = affine_map<(m, t, k) -> (m, t)>
// CHECK-LABEL: func.func @conv_columns_whole(
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<?xf32>, memref<512x700xf32>) outs(%{{.*}} : memref<512x?xf32>)
// CHECK-NOT: scf.for
// CHECK: return
// KERNEL-LABEL: func.func @conv_columns_whole(
// KERNEL: scf.for %{{.*}} = %c0{{.*}} to %c516 step %c6 {
// KERNEL: arith.remui
// KERNEL: vector.create_mask
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @conv_columns_whole(%x: memref<?xf32>, %w: memref<512x700xf32>, %y: memref<512x?xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?xf32>, memref<512x700xf32>) outs(%y : memref<512x?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A contraction's zero fill just before it and its bias and ReLU just
// after it, into another planned buffer that kiln-plan-memory made live
// from the contraction on (kiln.live_from_contraction: it shares no
// memory with the contraction's inputs): each window fills its own window
// of the output, then the contraction's piece, then the epilogue's piece
// on the same window. The piece is marked kiln.output_read_once (nothing
// after the epilogue reads the output), so that the kernels fold the
// fill and the epilogue out of place: accumulators start at 0 and the
// tiles go straight to the epilogue's buffer, no linalg op left.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
// CHECK-LABEL: func.func @fill_epilogue(
// CHECK: %[[A:.+]] = memref.view %{{.*}}[%c0]
// CHECK: %[[Y:.+]] = memref.view %{{.*}}[%c4096]
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] :
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c16 {
// CHECK: %[[A16:.+]] = memref.subview %[[A]][%[[I]], 0] [16, 32] [1, 1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A16]] :
// CHECK: linalg.generic {{.*}} outs(%[[A16]] : {{.*}}) attrs = {kiln.output_read_once, kiln.window_piece}
// CHECK: %[[Y16:.+]] = memref.subview %[[Y]][%[[I]], 0] [16, 32] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[A16]], %{{.*}} : {{.*}}) outs(%[[Y16]] :
// CHECK: arith.maximumf
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c16 {
// CHECK: %[[AR:.+]] = memref.subview %[[A]][%[[J]], 0] [%{{.+}}, 32] [1, 1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[AR]] :
// CHECK: %[[YR:.+]] = memref.subview %[[Y]][%[[J]], 0] [%{{.+}}, 32] [1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[AR]] : {{.*}}) attrs = {kiln.output_read_once, kiln.window_piece}
// CHECK: linalg.generic {{.*}} ins(%[[AR]], %{{.*}} : {{.*}}) outs(%[[YR]] :
// CHECK: return
// KERNEL-LABEL: func.func @fill_epilogue(
// KERNEL-NOT: linalg.
// KERNEL: memref.subview %{{.*}}[%{{.*}}, 0] [16, 32] [1, 1]
// KERNEL: %[[Y16:.+]] = memref.subview %{{.*}}[%{{.*}}, 0] [16, 32] [1, 1]
// KERNEL: arith.maximumf
// KERNEL: vector.store %{{.*}}, %[[Y16]]
// KERNEL-NOT: linalg.
// KERNEL: scf.index_switch
// KERNEL: arith.maximumf
// KERNEL-NOT: linalg.
// KERNEL: return
func.func @fill_epilogue(%ws: memref<?xi8>, %x: memref<?x8xf32>, %w: memref<8x32xf32>,
                         %bias: memref<32xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %a = memref.view %ws[%c0][%n] : memref<?xi8> to memref<?x32xf32>
  %y = memref.view %ws[%c4096][%n] {kiln.live_from_contraction} : memref<?xi8> to memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<?x32xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<8x32xf32>) outs(%a : memref<?x32xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %bias : memref<?x32xf32>, memref<32xf32>) outs(%y : memref<?x32xf32>) {
  ^bb0(%i: f32, %b: f32, %o: f32):
    %s = arith.addf %i, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The same without the plan's mark: the epilogue's buffer may sit where
// the contraction's input %x was (its life starting at the epilogue), so
// the epilogue does not run window by window with the contraction, which
// would write it before the later windows have read %x. The fill still
// moves into the windows.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
// CHECK-LABEL: func.func @epilogue_unmarked(
// CHECK: scf.for {{.*}} step %c16 {
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK-NOT: kiln.output_read_once
// CHECK-SAME: {
// CHECK-NOT: arith.maximumf
// CHECK: scf.for {{.*}} step %c16 {
// CHECK: linalg.fill
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : memref<?x32xf32
// CHECK-NOT: arith.maximumf
// CHECK: memref.dim
// CHECK: scf.for {{.*}} step %c16{{.*}} {
// CHECK: arith.maximumf
func.func @epilogue_unmarked(%ws: memref<?xi8>, %x: memref<?x8xf32>, %w: memref<8x32xf32>,
                             %bias: memref<32xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %a = memref.view %ws[%c4096][%n] : memref<?xi8> to memref<?x32xf32>
  %y = memref.view %ws[%c0][%n] : memref<?xi8> to memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<?x32xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<8x32xf32>) outs(%a : memref<?x32xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %bias : memref<?x32xf32>, memref<32xf32>) outs(%y : memref<?x32xf32>) {
  ^bb0(%i: f32, %b: f32, %o: f32):
    %s = arith.addf %i, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A matmul whose weights (800 KB) would stream once per window of rows:
// blocks of 512 columns (400 KB, within half of L2) go outside the
// windows, each block's weights staying in cache across them; the blocks,
// not the windows, go to threads.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @column_blocks(
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c1024 step %c512 {
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c16 {
// CHECK: memref.subview %{{.*}}[%[[I]], 0] [16, 200] [1, 1]
// CHECK: memref.subview %{{.*}}[0, %[[J]]] [200, 512] [1, 1]
// CHECK: memref.subview %{{.*}}[%[[I]], %[[J]]] [16, 512] [1, 1]
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %c16 {
// CHECK: memref.subview %{{.*}}[%[[R]], %[[J]]] [%{{.*}}, 512] [1, 1]
// THREADS-LABEL: func.func @column_blocks(
// THREADS: step %c16 {
// THREADS-NOT: kiln.parallel
// THREADS: } {kiln.parallel}
// THREADS-NEXT: return
func.func @column_blocks(%x: memref<?x200xf32>, %w: memref<200x1024xf32>, %y: memref<?x1024xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x200xf32>, memref<200x1024xf32>) outs(%y : memref<?x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 768 columns of 2 KB of weights each: blocks of 256 (512 KB) would fit
// the budget but make 3 blocks, one thread idle a third of the time at
// two; blocks of 192 make 4.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @column_blocks_even(
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c768 step %c192 {
// CHECK: memref.subview %{{.*}}[0, %[[J]]] [512, 192] [1, 1]
func.func @column_blocks_even(%x: memref<?x512xf32>, %w: memref<512x768xf32>, %y: memref<?x768xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x512xf32>, memref<512x768xf32>) outs(%y : memref<?x768xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Over dynamic dims, sizes are read between a zero fill and the copy of
// it that is a contraction's init (CSE shares one zero buffer between
// inits): a size read touches no element, so the fill still moves into
// the windows. Both copies of the filled %z go, and then the fill of %z,
// which nothing reads any more.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @copied_fill_after_dim(
// CHECK: %[[Z:.+]] = memref.view %{{.*}}[%c0]
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%[[Z]] :
// CHECK: scf.for {{.*}} step %c16{{.*}} {
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK: scf.for {{.*}} step %c16{{.*}} {
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK-NOT: memref.copy
// CHECK: return
func.func @copied_fill_after_dim(%ws: memref<?xi8>, %x: memref<?x8xf32>, %w: memref<8x32xf32>,
                                 %n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %c8192 = arith.constant 8192 : index
  %z = memref.view %ws[%c0][%n] : memref<?xi8> to memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<?x32xf32>)
  %d = memref.dim %z, %c0 : memref<?x32xf32>
  %a = memref.view %ws[%c4096][%d] : memref<?xi8> to memref<?x32xf32>
  %b = memref.view %ws[%c8192][%d] : memref<?xi8> to memref<?x32xf32>
  memref.copy %z, %a : memref<?x32xf32> to memref<?x32xf32>
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<8x32xf32>) outs(%a : memref<?x32xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %e = memref.dim %z, %c0 : memref<?x32xf32>
  memref.copy %z, %b : memref<?x32xf32> to memref<?x32xf32>
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<8x32xf32>) outs(%b : memref<?x32xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The filled buffer is read again after the copy (here: copied out): the
// fill stays, and the init still moves into the windows.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @copied_fill_read_later(
// CHECK: %[[Z:.+]] = memref.view %{{.*}}[%c0]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[Z]] :
// CHECK-NOT: memref.copy %[[Z]], %{{.*}} : memref<?x32xf32> to memref<?x32xf32>
// CHECK: scf.for {{.*}} step %c16{{.*}} {
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK: memref.copy %[[Z]], %{{.*}} : memref<?x32xf32> to memref<?x32xf32>
// CHECK-NEXT: return
func.func @copied_fill_read_later(%ws: memref<?xi8>, %x: memref<?x8xf32>, %w: memref<8x32xf32>,
                                  %out: memref<?x32xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %z = memref.view %ws[%c0][%n] : memref<?xi8> to memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<?x32xf32>)
  %a = memref.view %ws[%c4096][%n] : memref<?xi8> to memref<?x32xf32>
  memref.copy %z, %a : memref<?x32xf32> to memref<?x32xf32>
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<8x32xf32>) outs(%a : memref<?x32xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.copy %z, %out : memref<?x32xf32> to memref<?x32xf32>
  return
}

// -----

// A contraction's zero fill far before it, other work between that does
// not touch its buffer (a recurrent layer's backward projection, whose
// zero buffer the forward one's init copied): the fill moves into the
// windows. When something between reads the buffer, it stays whole.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @earlier_fill(
// CHECK: %[[A:.+]] = memref.view %{{.*}}[%c0]
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] :
// CHECK: arith.negf
// CHECK: arith.negf
// CHECK: scf.for {{.*}} step %c16{{.*}} {
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK: return
func.func @earlier_fill(%ws: memref<?xi8>, %x: memref<?x8xf32>, %w: memref<8x32xf32>,
                        %p: memref<?x32xf32>, %q: memref<?x32xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %a = memref.view %ws[%c0][%n] : memref<?xi8> to memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<?x32xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : memref<?x32xf32>) outs(%q : memref<?x32xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.negf %i : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<8x32xf32>) outs(%a : memref<?x32xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @earlier_fill_read_between(
// CHECK: %[[A:.+]] = memref.view %{{.*}}[%c0]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] :
// CHECK: arith.negf
// CHECK: arith.negf
// CHECK: scf.for {{.*}} step %c16{{.*}} {
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @earlier_fill_read_between(%ws: memref<?xi8>, %x: memref<?x8xf32>, %w: memref<8x32xf32>,
                                     %q: memref<?x32xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %a = memref.view %ws[%c0][%n] : memref<?xi8> to memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<?x32xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x32xf32>) outs(%q : memref<?x32xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.negf %i : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<8x32xf32>) outs(%a : memref<?x32xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An elementwise generic whose rows are costly (four math ops on 256
// elements: 33 x 256 per row, four rows worth two threads): its rest, one
// row at a time, goes to threads too (an LSTM's gates over a dynamic batch
// of 8, below a window of 16). A cheap one's rest stays serial. Its
// windows of 16 rows go to threads from two of them on (kiln.min_trips).
// The pieces are marked kiln.window_piece: a window of 16 rows does not
// split itself on the math ops' cost.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @costly_rows(
// CHECK: linalg.generic {{.*}} attrs = {kiln.window_piece}
// THREADS-LABEL: func.func @costly_rows(
// THREADS: scf.for {{.*}} step %c16 {
// THREADS-NOT: kiln.parallel
// THREADS: } {kiln.min_trips = 2 : i64, kiln.parallel}
// THREADS: scf.for {{.*}} step %c1 {
// THREADS: math.exp
// THREADS: } {kiln.parallel}
// THREADS-NEXT: return
func.func @costly_rows(%x: memref<?x256xf32>, %y: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x256xf32>) outs(%y : memref<?x256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.exp %i : f32
    %t = math.tanh %e : f32
    %e2 = math.exp %t : f32
    %t2 = math.tanh %e2 : f32
    linalg.yield %t2 : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
// THREADS-LABEL: func.func @cheap_rows(
// THREADS: scf.for {{.*}} step %c1 {
// THREADS: arith.addf
// THREADS-NOT: kiln.parallel
// THREADS: return
func.func @cheap_rows(%x: memref<?x256xf32>, %y: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x256xf32>) outs(%y : memref<?x256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = arith.addf %i, %i : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A flattened 1x1 conv over a dynamic H x W (dynamic columns) with a
// bias and ReLU6 into another planned buffer: the kernels fold that
// epilogue in over dynamic columns too, so the op stays whole (no windows
// of 16 columns, one vector a tile row) and is marked
// kiln.output_read_once. The kernel writes the epilogue's buffer: whole
// tiles, then the columns left as one tile of one or two vectors. Its
// work at a nominal 64 columns is below what threads need, so with
// threads the loop over whole tiles goes to them from 11 trips on
// (16 x 96 x 16 multiply-adds a trip, 2^18 in all).
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (m)>
// CHECK-LABEL: func.func @columns_epilogue(
// CHECK: %[[A:.+]] = memref.view %{{.*}}[%c0]
// CHECK: %[[Y:.+]] = memref.view %{{.*}}[%c4096]
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} outs(%[[A]] : memref<96x?xf32>) attrs = {kiln.output_read_once}
// CHECK: linalg.generic {{.*}} ins(%[[A]], %{{.*}} : {{.*}}) outs(%[[Y]] :
// CHECK-NOT: scf.for
// CHECK: return
// KERNEL-LABEL: func.func @columns_epilogue(
// KERNEL: %[[Y:.+]] = memref.view %{{.*}}[%c4096]
// KERNEL-NOT: linalg.
// KERNEL: scf.for
// KERNEL: arith.minimumf
// KERNEL: vector.store %{{.*}}, %[[Y]]
// KERNEL: scf.index_switch
// KERNEL: case 1 {
// KERNEL: arith.minimumf
// KERNEL: vector.maskedstore %[[Y]]
// KERNEL-NOT: linalg.
// KERNEL: return
// THREADS-LABEL: func.func @columns_epilogue(
// THREADS-NOT: kiln.parallel
// THREADS: } {kiln.min_trips = 11 : i64, kiln.parallel}
// THREADS-NEXT: arith.subi
// THREADS-NOT: kiln.parallel
// THREADS: return
func.func @columns_epilogue(%ws: memref<?xi8>, %x: memref<16x?xf32>, %w: memref<96x16xf32>,
                            %bias: memref<96xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %a = memref.view %ws[%c0][%n] : memref<?xi8> to memref<96x?xf32>
  %y = memref.view %ws[%c4096][%n] {kiln.live_from_contraction} : memref<?xi8> to memref<96x?xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<96x?xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%w, %x : memref<96x16xf32>, memref<16x?xf32>) outs(%a : memref<96x?xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %bias : memref<96x?xf32>, memref<96xf32>) outs(%y : memref<96x?xf32>) {
  ^bb0(%i: f32, %b: f32, %o: f32):
    %s = arith.addf %i, %b : f32
    %r = arith.maximumf %s, %zero : f32
    %t = arith.minimumf %r, %six : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// The same conv's ReLU, read as [96, H, W], writing its channels of a
// concatenation ([1, 160, H, W], squeezenet's fire modules: a
// rank-reducing subview with whole rows): flattened as [96, H * W] too,
// the collapsed window recast with its unit innermost stride (collapsed
// over dynamic sizes its type says none), so that the kernel folds the
// ReLU and stores it into the concatenation.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @concat_epilogue(
// CHECK: %[[CAT:.+]] = memref.view %{{.*}}[%c4096]
// CHECK: %[[SLICE:.+]] = memref.subview %[[CAT]][0, 32, 0, 0] [1, 96, %{{.+}}, %{{.+}}] [1, 1, 1, 1]
// CHECK-NOT: scf.for
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[SLICE]] {{\[}}[0], [1, 2]]
// CHECK: %{{.+}}, %[[OFF:.+]], %{{.+}}:2, %[[STRIDES:.+]]:2 = memref.extract_strided_metadata %[[FLAT]]
// CHECK: %[[UNIT:.+]] = memref.reinterpret_cast %[[FLAT]] to offset: [%[[OFF]]], sizes: [96, %{{.+}}], strides: [%[[STRIDES]]#0, 1] : {{.+}} to memref<96x?xf32, strided<[?, 1], offset: ?>>
// CHECK: linalg.generic {{.*}} attrs = {kiln.output_read_once}
// CHECK: linalg.generic {{.*}} outs(%[[UNIT]] :
// CHECK-NOT: scf.for
// CHECK: return
// KERNEL-LABEL: func.func @concat_epilogue(
// KERNEL: memref.reinterpret_cast
// KERNEL-NOT: linalg.
// KERNEL: arith.maximumf
// KERNEL-NOT: linalg.
// KERNEL: return
func.func @concat_epilogue(%ws: memref<?xi8>, %x: memref<16x?xf32>, %w: memref<96x16xf32>,
                           %h: index, %wd: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %n = arith.muli %h, %wd : index
  %a = memref.view %ws[%c0][%n] : memref<?xi8> to memref<96x?xf32>
  %cat = memref.view %ws[%c4096][%h, %wd] {kiln.live_from_contraction} : memref<?xi8> to memref<1x160x?x?xf32>
  %slice = memref.subview %cat[0, 32, 0, 0] [1, 96, %h, %wd] [1, 1, 1, 1] : memref<1x160x?x?xf32> to memref<96x?x?xf32, strided<[?, ?, 1], offset: ?>>
  linalg.fill ins(%zero : f32) outs(%a : memref<96x?xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%w, %x : memref<96x16xf32>, memref<16x?xf32>) outs(%a : memref<96x?xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %e = memref.expand_shape %a [[0], [1, 2]] output_shape [96, %h, %wd] : memref<96x?xf32> into memref<96x?x?xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e : memref<96x?x?xf32>) outs(%slice : memref<96x?x?xf32, strided<[?, ?, 1], offset: ?>>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A copy over dynamic dims into a planned buffer that nothing reads
// afterwards (only its size is asked: a reshape's copy whose result gave
// the next op's sizes) goes; the copy into a buffer read later stays.
#id3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @dead_copy(
// CHECK: %[[DEAD:.+]] = memref.view %{{.*}}[%c0]
// CHECK: %[[LIVE:.+]] = memref.view %{{.*}}[%c4096]
// CHECK-NOT: outs(%[[DEAD]]
// CHECK: outs(%[[LIVE]]
// CHECK-NOT: outs(%[[DEAD]]
// CHECK: return
func.func @dead_copy(%ws: memref<?xi8>, %x: memref<16x?x?xf32>, %y: memref<16x?x?xf32>,
                     %h: index, %w: index) -> index {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4096 = arith.constant 4096 : index
  %dead = memref.view %ws[%c0][%h, %w] : memref<?xi8> to memref<16x?x?xf32>
  %live = memref.view %ws[%c4096][%h, %w] : memref<?xi8> to memref<16x?x?xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<16x?x?xf32>) outs(%dead : memref<16x?x?xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<16x?x?xf32>) outs(%live : memref<16x?x?xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  %flat = memref.collapse_shape %dead [[0], [1, 2]] : memref<16x?x?xf32> into memref<16x?xf32>
  %n = memref.dim %flat, %c2 : memref<16x?xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%live : memref<16x?x?xf32>) outs(%y : memref<16x?x?xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  return %n : index
}

// -----

// Windows of 16 rows of a contraction with little work each (16 x 96 x
// 16 multiply-adds) go to threads only from 11 windows on, checked at
// run time (kiln.min_trips); the rest stays serial.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// THREADS-LABEL: func.func @small_windows(
// THREADS: memref.subview {{.*}} [16, 96] [1, 1]
// THREADS-NOT: kiln.parallel
// THREADS: } {kiln.min_trips = 11 : i64, kiln.parallel}
// THREADS-NOT: kiln.parallel
// THREADS: return
func.func @small_windows(%x: memref<?x16xf32>, %w: memref<16x96xf32>, %o: memref<?x96xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x16xf32>, memref<16x96xf32>) outs(%o : memref<?x96xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same with index arithmetic between the contraction and its
// epilogue (the next op's sizes: a strided conv's (H + 1) / 2), which the
// epilogue search passes over (the kernel moves it before the
// contraction); the op stays whole with it folded in. With
// more work (32 x 128 x 64 multiply-adds at a nominal 64 columns) and the
// input larger than the weights (the whole tiles outside), the kernel's
// loops along M go to threads; the loop over whole tiles around them too
// from 8 tiles at run time (kiln.parallel_nests: with fewer it runs on
// the calling thread and the loops inside share out), and the rest's
// loop along M.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
// CHECK-LABEL: func.func @epilogue_after_sizes(
// CHECK: %[[A:.+]] = memref.view %{{.*}}[%c0]
// CHECK-NOT: scf.for
// CHECK: arith.floordivsi
// CHECK: linalg.generic {{.*}} outs(%[[A]] : memref<32x?xf32>) attrs = {kiln.output_read_once}
// CHECK-NEXT: ^bb0
// CHECK: linalg.generic {{.*}} ins(%[[A]] : {{.*}}) outs(
// CHECK-NOT: scf.for
// CHECK: return
// KERNEL-LABEL: func.func @epilogue_after_sizes(
// KERNEL-NOT: linalg.
// KERNEL: arith.maximumf
// KERNEL-NOT: linalg.
// KERNEL: return
// THREADS-LABEL: func.func @epilogue_after_sizes(
// THREADS: scf.for
// THREADS: scf.for {{.*}} = %c0{{.*}} to %c{{[0-9]+}} step %c6
// THREADS: } {kiln.parallel}
// THREADS-NEXT: } {kiln.min_trips = 8 : i64, kiln.parallel, kiln.parallel_nests}
// THREADS: scf.index_switch
// THREADS: case 1 {
// THREADS: } {kiln.parallel}
// THREADS: return
func.func @epilogue_after_sizes(%ws: memref<?xi8>, %x: memref<128x?xf32>, %w: memref<32x128xf32>,
                                %n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4096 = arith.constant 4096 : index
  %a = memref.view %ws[%c0][%n] : memref<?xi8> to memref<32x?xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<32x?xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%w, %x : memref<32x128xf32>, memref<128x?xf32>) outs(%a : memref<32x?xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %up = arith.addi %n, %c1 : index
  %half = arith.floordivsi %up, %c2 : index
  %y = memref.view %ws[%c4096][%half] {kiln.live_from_contraction} : memref<?xi8> to memref<32x?xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<32x?xf32>) outs(%y : memref<32x?xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A dynamic pad: a constant fill of the whole padded buffer, then a plain
// copy into its interior. With threads the fill runs in chunks of 16384
// elements of the flattened buffer, on threads from two chunks on (one
// thread writing lines that the other core held was 10x slower); the copy
// goes in blocks of channels as before. Without threads both stay.
#id = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @pad_fill(
// CHECK: linalg.map outs(%{{.*}} : memref<96x?x?xf32>)
// THREADS-LABEL: func.func @pad_fill(
// THREADS: %[[BUF:.+]] = memref.view
// THREADS: %[[FLAT:.+]] = memref.collapse_shape %[[BUF]] {{\[}}[0, 1, 2]] : memref<96x?x?xf32> into memref<?xf32>
// THREADS: %[[N:.+]] = memref.dim %[[FLAT]], %[[ZERO:c0[_0-9]*]]
// THREADS: scf.for %[[AT:.+]] = %[[ZERO]] to %[[N]] step %c16384 {
// THREADS:   %[[LEFT:.+]] = arith.subi %[[N]], %[[AT]]
// THREADS:   %[[LEN:.+]] = arith.minui %[[LEFT]], %c16384
// THREADS:   %[[PIECE:.+]] = memref.subview %[[FLAT]][%[[AT]]] [%[[LEN]]] [1]
// THREADS:   linalg.map outs(%[[PIECE]] : memref<?xf32, strided<[1], offset: ?>>)
// THREADS: } {kiln.min_trips = 2 : i64, kiln.parallel}
// THREADS: } {kiln.parallel}
// THREADS: return
func.func @pad_fill(%ws: memref<?xi8>, %x: memref<96x?x?xf32>, %h: index, %w: index,
                    %out: memref<96x?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %hp = arith.addi %h, %c2 : index
  %wp = arith.addi %w, %c2 : index
  %buf = memref.view %ws[%c0][%hp, %wp] : memref<?xi8> to memref<96x?x?xf32>
  linalg.map outs(%buf : memref<96x?x?xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %inner = memref.subview %buf[0, 1, 1] [96, %h, %w] [1, 1, 1] : memref<96x?x?xf32> to memref<96x?x?xf32, strided<[?, ?, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<96x?x?xf32>) outs(%inner : memref<96x?x?xf32, strided<[?, ?, 1], offset: ?>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  // The padded buffer read (a conv's input).
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%buf : memref<96x?x?xf32>) outs(%out : memref<96x?x?xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  return
}

// -----

// A flattened 1x1 conv over a dynamic H x W whose ReLU6 writes the window
// of a padded buffer (kiln-prepare-destinations made the pad's producer
// write in place; kiln-lower-copies left the border's pieces, here the
// top rows and the rest, between the two). From 16 columns on (checked at
// run time) it runs image row by image row: each trip fills the row's
// left and right columns, then the conv over the row's W columns (its init
// filled right before) and the ReLU6 on that row of the window, which the
// kernel folds in (kiln.output_read_once); the rows above and below are
// filled before the loop, which goes to threads from 2 rows on. Narrower
// maps fill the whole buffer in chunks, run the conv flat with the ReLU6
// in place, then copy into the window.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
#id3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @image_rows(
// CHECK-SAME: %[[H:[^:]+]]: index, %[[W:[^:]+]]: index
// CHECK: %[[A:.+]] = memref.view %{{.*}}[%c0]
// CHECK: %[[P:.+]] = memref.view %{{.*}}[%c8192]
// CHECK-NOT: linalg.fill
// CHECK: %[[WIDE:.+]] = arith.cmpi uge, %{{.+}}, %c16
// CHECK: scf.if %[[WIDE]] {
// CHECK:   memref.subview %[[P]][0, 0, 0] [32, 1, %{{.+}}] [1, 1, 1]
// CHECK:   linalg.generic
// CHECK:   memref.subview %[[P]][0, %{{.+}}, 0] [32, 1, %{{.+}}] [1, 1, 1]
// CHECK:   linalg.generic
// CHECK:   scf.for %[[R:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:     %[[PR:.+]] = arith.addi %[[R]], %c1
// CHECK:     %[[LEFT:.+]] = memref.subview %[[P]][0, %[[PR]], 0] [32, 1, 1] [1, 1, 1] : memref<32x?x?xf32> to memref<32x1xf32, strided<[?, 1], offset: ?>>
// CHECK:     linalg.generic {{.+}} outs(%[[LEFT]]
// CHECK:     %[[RIGHT:.+]] = memref.subview %[[P]][0, %[[PR]], %{{.+}}] [32, 1, 1] [1, 1, 1] : memref<32x?x?xf32> to memref<32x1xf32, strided<[?, 1], offset: ?>>
// CHECK:     linalg.generic {{.+}} outs(%[[RIGHT]]
// CHECK:     %[[COL:.+]] = arith.muli %[[R]], %{{.+}}
// CHECK:     %[[OUT:.+]] = memref.subview %[[A]][0, %[[COL]]] [32, %{{.+}}] [1, 1] : memref<32x?xf32> to memref<32x?xf32, strided<[?, 1], offset: ?>>
// CHECK:     linalg.fill ins(%{{.+}} : f32) outs(%[[OUT]]
// CHECK:     %[[ROW:.+]] = memref.subview %{{.+}}[0, %[[R]], 0] [32, 1, %{{.+}}] [1, 1, 1] : {{.+}} to memref<32x?xf32, strided<[?, 1], offset: ?>>
// CHECK:     linalg.generic {{.+}} outs(%[[OUT]] : {{.+}}) attrs = {kiln.output_read_once, kiln.window_piece}
// CHECK:     linalg.generic {{.+}} ins(%[[OUT]] : {{.+}}) outs(%[[ROW]] :
// CHECK:   }
// CHECK: } else {
// CHECK:   scf.for
// CHECK:   linalg.fill ins(%{{.+}} : f32) outs(%[[A]] : memref<32x?xf32>)
// CHECK:   linalg.generic {{.+}} outs(%[[A]] : memref<32x?xf32>)
// CHECK:   linalg.generic {{.+}} ins(%[[A]] : memref<32x?xf32>) outs(%[[A]] : memref<32x?xf32>)
// CHECK:   linalg.generic {{.+}} ins(%{{.+}} : memref<32x?x?xf32>) outs(%{{.+}} : memref<32x?x?xf32, strided<[?, ?, 1], offset: ?>>)
// CHECK:   linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
// KERNEL-LABEL: func.func @image_rows(
// KERNEL: scf.if
// KERNEL: scf.for
// KERNEL-NOT: linalg.
// KERNEL: arith.minimumf
// KERNEL: } else {
// THREADS-LABEL: func.func @image_rows(
// THREADS: scf.if
// THREADS: } {kiln.min_trips = 2 : i64, kiln.parallel}
// THREADS: } else {
func.func @image_rows(%ws: memref<?xi8>, %wt: memref<32x16xf32>, %h: index, %w: index) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4096 = arith.constant 4096 : index
  %c8192 = arith.constant 8192 : index
  %n = arith.muli %h, %w : index
  %hp = arith.addi %h, %c2 : index
  %wp = arith.addi %w, %c2 : index
  %x = memref.view %ws[%c4096][%n] : memref<?xi8> to memref<16x?xf32>
  %a = memref.view %ws[%c0][%n] : memref<?xi8> to memref<32x?xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<32x?xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%wt, %x : memref<32x16xf32>, memref<16x?xf32>) outs(%a : memref<32x?xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %p = memref.view %ws[%c8192][%hp, %wp] {kiln.live_from_contraction} : memref<?xi8> to memref<32x?x?xf32>
  %top = memref.subview %p[0, 0, 0] [32, 1, %wp] [1, 1, 1] : memref<32x?x?xf32> to memref<32x1x?xf32, strided<[?, ?, 1]>>
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%top : memref<32x1x?xf32, strided<[?, ?, 1]>>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %rest = memref.subview %p[0, 1, 0] [32, %h, %wp] [1, 1, 1] : memref<32x?x?xf32> to memref<32x?x?xf32, strided<[?, ?, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%rest : memref<32x?x?xf32, strided<[?, ?, 1], offset: ?>>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %e = memref.expand_shape %a [[0], [1, 2]] output_shape [32, %h, %w] : memref<32x?xf32> into memref<32x?x?xf32>
  %win = memref.subview %p[0, 1, 1] [32, %h, %w] [1, 1, 1] : memref<32x?x?xf32> to memref<32x?x?xf32, strided<[?, ?, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e : memref<32x?x?xf32>) outs(%win : memref<32x?x?xf32, strided<[?, ?, 1], offset: ?>>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %zero : f32
    %t = arith.minimumf %r, %six : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A dynamic pad's column borders (kiln-lower-copies: runs of two elements
// a row of the flat buffer): each short row costs a cache line, 16
// elements of work, so its windows of 16 go to threads from 128 of them
// on (2^15), checked at run time. They ran serially.
#id = affine_map<(r, c) -> (r, c)>
// THREADS-LABEL: func.func @border_runs(
// THREADS: scf.for {{.+}} step %c16 {
// THREADS: } {kiln.min_trips = 128 : i64, kiln.parallel}
// THREADS-NOT: kiln.parallel
// THREADS: return
func.func @border_runs(%runs: memref<?x2xf32, strided<[?, 1], offset: ?>>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%runs : memref<?x2xf32, strided<[?, 1], offset: ?>>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  return
}

// -----

// The same, but the epilogue adds into what the window held (its body
// reads its output): the flat path could not run it in place on the
// conv's output, so nothing runs by rows.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @window_read(
// CHECK-NOT: scf.if
// CHECK: return
func.func @window_read(%ws: memref<?xi8>, %wt: memref<32x16xf32>, %h: index, %w: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4096 = arith.constant 4096 : index
  %c8192 = arith.constant 8192 : index
  %n = arith.muli %h, %w : index
  %hp = arith.addi %h, %c2 : index
  %wp = arith.addi %w, %c2 : index
  %x = memref.view %ws[%c4096][%n] : memref<?xi8> to memref<16x?xf32>
  %a = memref.view %ws[%c0][%n] : memref<?xi8> to memref<32x?xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<32x?xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%wt, %x : memref<32x16xf32>, memref<16x?xf32>) outs(%a : memref<32x?xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %p = memref.view %ws[%c8192][%hp, %wp] {kiln.live_from_contraction} : memref<?xi8> to memref<32x?x?xf32>
  %top = memref.subview %p[0, 0, 0] [32, 1, %wp] [1, 1, 1] : memref<32x?x?xf32> to memref<32x1x?xf32, strided<[?, ?, 1]>>
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%top : memref<32x1x?xf32, strided<[?, ?, 1]>>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %e = memref.expand_shape %a [[0], [1, 2]] output_shape [32, %h, %w] : memref<32x?xf32> into memref<32x?x?xf32>
  %win = memref.subview %p[0, 1, 1] [32, %h, %w] [1, 1, 1] : memref<32x?x?xf32> to memref<32x?x?xf32, strided<[?, ?, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e : memref<32x?x?xf32>) outs(%win : memref<32x?x?xf32, strided<[?, ?, 1], offset: ?>>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %zero : f32
    %t = arith.addf %r, %o : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A stride-1 depthwise conv over the row-stacked grid (the padded input
// flat, its three rows each one padded row further: [C, 3, H * Wp + 2]
// read at n + kw) writes [C, H * Wp]; its ReLU6 reads the conv's output
// as [C, H, W] out of [C, H, Wp] and writes a buffer of its own. Images
// at least 16 wide run row by row: each row's conv over its W columns,
// the ReLU6 on that row, one kernel storing the ReLU6 (the grid's two
// extra columns a row are never computed). Narrower ones run over the
// whole grid, its columns whole (the kernel's dynamic N), with threads in
// blocks of channels, each block's output filled first, which its kernel
// folds in; their ReLU6 is a pass of its own.
#in = affine_map<(c, kh, kw, n) -> (c, kh, n + kw)>
#wt = affine_map<(c, kh, kw, n) -> (c, kh, kw)>
#out = affine_map<(c, kh, kw, n) -> (c, n)>
#id3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @grid_rows(
// CHECK-SAME: %[[H:[^:]+]]: index, %[[W:[^:]+]]: index
// CHECK: %[[X:.+]] = memref.reinterpret_cast
// CHECK: %[[G:.+]] = memref.view %{{.*}}[%c4096]
// CHECK-NOT: linalg.fill
// CHECK: %[[O:.+]] = memref.view %{{.*}}[%c8192]
// CHECK: %[[WP:.+]] = memref.dim %{{.+}}, %c2
// CHECK: %[[WIDE:.+]] = arith.cmpi uge, %[[W]], %c16
// CHECK: scf.if %[[WIDE]] {
// CHECK:   scf.for %[[R:.+]] = %{{.+}} to %[[H]] step %{{.+}} {
// CHECK:     %[[AT:.+]] = arith.muli %[[R]], %[[WP]]
// CHECK:     %[[READ:.+]] = arith.addi %{{.+}}, %c2
// CHECK:     %[[IN:.+]] = memref.subview %[[X]][0, 0, %{{.+}}] [32, 3, %[[READ]]] [1, 1, 1]
// CHECK:     %[[OUT:.+]] = memref.subview %[[G]][0, %[[AT]]] [32, %[[W]]] [1, 1]
// CHECK:     linalg.fill ins(%{{.+}} : f32) outs(%[[OUT]]
// CHECK:     %[[ROW:.+]] = memref.subview %[[O]][0, %[[R]], 0] [32, 1, %{{.+}}] [1, 1, 1] : memref<32x?x?xf32> to memref<32x?xf32, strided<[?, 1], offset: ?>>
// CHECK:     linalg.generic {{.+}} ins(%[[IN]], %{{.+}} : {{.+}}) outs(%[[OUT]] : {{.+}}) attrs = {kiln.output_read_once, kiln.window_piece}
// CHECK:     linalg.generic {{.+}} ins(%[[OUT]] : {{.+}}) outs(%[[ROW]] :
// CHECK:   }
// CHECK: } else {
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[G]] :
// CHECK-NEXT: linalg.generic {{.+}} ins(%[[X]], %{{.+}} : {{.+}}) outs(%[[G]] : memref<32x?xf32>) {
// CHECK:   memref.subview %[[O]][0, %{{.+}}, 0] [32, 16, %{{.+}}] [1, 1, 1]
// CHECK: return
// KERNEL-LABEL: func.func @grid_rows(
// KERNEL: scf.if
// KERNEL: scf.for
// KERNEL-NOT: linalg.
// KERNEL: arith.minimumf
// KERNEL-NOT: linalg.
// KERNEL: } else {
// THREADS-LABEL: func.func @grid_rows(
// THREADS: scf.if
// THREADS: } {kiln.min_trips = 15 : i64, kiln.parallel}
// THREADS: } else {
// THREADS-NOT: linalg.fill
// THREADS: scf.for %{{.+}} = %c0{{.*}} to %c32{{.*}} step %c2
// THREADS-NOT: linalg.
// THREADS: } {kiln.parallel}
func.func @grid_rows(%ws: memref<?xi8>, %wt: memref<32x3x3xf32>, %h: index, %w: index) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4096 = arith.constant 4096 : index
  %c8192 = arith.constant 8192 : index
  %wp = arith.addi %w, %c2 : index
  %hp = arith.addi %h, %c3 : index
  %n = arith.muli %h, %wp : index
  %len = arith.addi %n, %c2 : index
  %padded = memref.view %ws[%c0][%hp, %wp] : memref<?xi8> to memref<32x?x?xf32>
  %plane = arith.muli %hp, %wp : index
  %flat = memref.collapse_shape %padded [[0], [1, 2]] : memref<32x?x?xf32> into memref<32x?xf32>
  %x = memref.reinterpret_cast %flat to offset: [0], sizes: [32, 3, %len], strides: [%plane, %wp, 1] : memref<32x?xf32> to memref<32x3x?xf32, strided<[?, ?, 1]>>
  %g = memref.view %ws[%c4096][%n] : memref<?xi8> to memref<32x?xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<32x?xf32>)
  linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %wt : memref<32x3x?xf32, strided<[?, ?, 1]>>, memref<32x3x3xf32>) outs(%g : memref<32x?xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %o = memref.view %ws[%c8192][%h, %w] {kiln.live_from_contraction} : memref<?xi8> to memref<32x?x?xf32>
  %e = memref.expand_shape %g [[0], [1, 2]] output_shape [32, %h, %wp] : memref<32x?xf32> into memref<32x?x?xf32>
  %win = memref.subview %e[0, 0, 0] [32, %h, %w] [1, 1, 1] : memref<32x?x?xf32> to memref<32x?x?xf32, strided<[?, ?, 1]>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%win : memref<32x?x?xf32, strided<[?, ?, 1]>>) outs(%o : memref<32x?x?xf32>) {
  ^bb0(%i: f32, %out: f32):
    %r = arith.maximumf %i, %zero : f32
    %t = arith.minimumf %r, %six : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// The same, but the grid is read again after the ReLU6: the rows would
// leave its extra columns unwritten, and its values unstored. It stays
// whole.
#in = affine_map<(c, kh, kw, n) -> (c, kh, n + kw)>
#wt = affine_map<(c, kh, kw, n) -> (c, kh, kw)>
#out = affine_map<(c, kh, kw, n) -> (c, n)>
#id3 = affine_map<(c, h, w) -> (c, h, w)>
// CHECK-LABEL: func.func @grid_read_after(
// CHECK-NOT: scf.if
// CHECK: return
func.func @grid_read_after(%ws: memref<?xi8>, %wt: memref<32x3x3xf32>, %h: index, %w: index, %copy: memref<32x?xf32>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4096 = arith.constant 4096 : index
  %c8192 = arith.constant 8192 : index
  %wp = arith.addi %w, %c2 : index
  %hp = arith.addi %h, %c3 : index
  %n = arith.muli %h, %wp : index
  %len = arith.addi %n, %c2 : index
  %padded = memref.view %ws[%c0][%hp, %wp] : memref<?xi8> to memref<32x?x?xf32>
  %plane = arith.muli %hp, %wp : index
  %flat = memref.collapse_shape %padded [[0], [1, 2]] : memref<32x?x?xf32> into memref<32x?xf32>
  %x = memref.reinterpret_cast %flat to offset: [0], sizes: [32, 3, %len], strides: [%plane, %wp, 1] : memref<32x?xf32> to memref<32x3x?xf32, strided<[?, ?, 1]>>
  %g = memref.view %ws[%c4096][%n] : memref<?xi8> to memref<32x?xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<32x?xf32>)
  linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %wt : memref<32x3x?xf32, strided<[?, ?, 1]>>, memref<32x3x3xf32>) outs(%g : memref<32x?xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %o = memref.view %ws[%c8192][%h, %w] {kiln.live_from_contraction} : memref<?xi8> to memref<32x?x?xf32>
  %e = memref.expand_shape %g [[0], [1, 2]] output_shape [32, %h, %wp] : memref<32x?xf32> into memref<32x?x?xf32>
  %win = memref.subview %e[0, 0, 0] [32, %h, %w] [1, 1, 1] : memref<32x?x?xf32> to memref<32x?x?xf32, strided<[?, ?, 1]>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%win : memref<32x?x?xf32, strided<[?, ?, 1]>>) outs(%o : memref<32x?x?xf32>) {
  ^bb0(%i: f32, %out: f32):
    %r = arith.maximumf %i, %zero : f32
    %t = arith.minimumf %r, %six : f32
    linalg.yield %t : f32
  }
  memref.copy %g, %copy : memref<32x?xf32> to memref<32x?xf32>
  return
}

// -----

// A depthwise conv over a dynamic H x W with 256 channels: its windows of
// 16 rows would be work enough for threads, but blocks of its channels go
// to threads around all of its pieces, as they do for its activation
// after it (and the windows left after the 16s no longer run on one
// thread).
#in = affine_map<(c, kh, kw, h, w) -> (c, h + kh, w + kw)>
#wt = affine_map<(c, kh, kw, h, w) -> (c, kh, kw)>
#out = affine_map<(c, kh, kw, h, w) -> (c, h, w)>
// THREADS-LABEL: func.func @depthwise_blocks(
// THREADS: scf.for %{{.+}} = %c0{{.*}} to %c256{{.*}} step %c16
// THREADS-NOT: kiln.parallel
// THREADS: } {kiln.parallel}
// THREADS-NEXT: return
func.func @depthwise_blocks(%x: memref<256x?x?xf32>, %wt: memref<256x3x3xf32>, %y: memref<256x?x?xf32>) {
  linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %wt : memref<256x?x?xf32>, memref<256x3x3xf32>) outs(%y : memref<256x?x?xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
