// RUN: kiln-opt %s --kiln-symbolic-arguments --canonicalize --kiln-plan-memory --canonicalize --split-input-file | FileCheck %s
// A dynamic dim: the arguments become data pointers plus the dim's value,
// and the buffers sized by it get offsets computed at run time. The
// reference plan (dim = 64) puts b above a and c at a's place; for any
// value of the dim, b starts at a's rounded-up end and c at 0, and the
// workspace is that end plus b's bytes, which @chain_workspace_size
// computes alone.

// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[IN:[^:]*]]: memref<1xf32>, %[[OUT:[^:]*]]: memref<1xf32>, %[[N:[^:]*]]: index {kiln.symbolic_dim}, %[[WS:[^:]*]]: memref<1xi8> {kiln.workspace})
// CHECK-SAME: kiln.workspace_size = -1 : i64
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %c64 = arith.constant 64 : index
// CHECK: %[[A_END:.*]] = arith.muli %{{.*}}, %c64 : index
// CHECK: %[[C_END:.*]] = arith.muli %{{.*}}, %c64 : index
// CHECK: %[[B_AT:.*]] = arith.maxui %[[A_END]], %[[C_END]] : index
// CHECK-DAG: %[[X:.*]] = memref.reinterpret_cast %[[IN]] to offset: [0], sizes: [%[[N]], 4], strides: [4, 1] : memref<1xf32> to memref<?x4xf32>
// CHECK-DAG: %[[Y:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [%[[N]], 4], strides: [4, 1] : memref<1xf32> to memref<?x4xf32>
// CHECK: %[[A:.*]] = memref.view %[[WS]][%[[C0]]][%{{.*}}] : memref<1xi8> to memref<?x4xf32>
// CHECK: memref.copy %[[X]], %[[A]]
// CHECK: %[[B:.*]] = memref.view %[[WS]][%[[B_AT]]][%{{.*}}] : memref<1xi8> to memref<?x4xf32>
// CHECK: memref.copy %[[A]], %[[B]]
// CHECK: %[[C:.*]] = memref.view %[[WS]][%[[C0]]][%{{.*}}] : memref<1xi8> to memref<?x4xf32>
// CHECK: memref.copy %[[B]], %[[C]]
// CHECK: memref.copy %[[C]], %[[Y]]
// CHECK-NOT: memref.alloc

// CHECK-LABEL: func.func @chain_workspace_size(
// CHECK-SAME: %[[M:.*]]: index) -> index
// CHECK: arith.muli %[[M]]
// CHECK: return
func.func @chain(%in: memref<?x4xf32>, %out: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %in, %c0 : memref<?x4xf32>
  %a = memref.alloc(%n) : memref<?x4xf32>
  memref.copy %in, %a : memref<?x4xf32> to memref<?x4xf32>
  %b = memref.alloc(%n) : memref<?x4xf32>
  memref.copy %a, %b : memref<?x4xf32> to memref<?x4xf32>
  %c = memref.alloc(%n) : memref<?x4xf32>
  memref.copy %b, %c : memref<?x4xf32> to memref<?x4xf32>
  memref.copy %c, %out : memref<?x4xf32> to memref<?x4xf32>
  return
}

// -----

// Two dynamic dims (kiln-dim-symbols' names): an index argument for each,
// in order; the input's `?` is named by kiln.dim_names, the out-param's by
// kiln.result_dim_names; the [S, T] buffer's size is their product, and
// the workspace size function takes both.
// CHECK-LABEL: func.func @outer(
// CHECK-SAME: %[[A:[^:]*]]: memref<1xf32> {kiln.dim_names = ["S"]}, %[[B:[^:]*]]: memref<1xf32> {kiln.dim_names = ["T"]}, %[[OUT:[^:]*]]: memref<1xf32>, %[[S:[^:]*]]: index {kiln.symbolic_dim = "S"}, %[[T:[^:]*]]: index {kiln.symbolic_dim = "T"}, %{{.*}}: memref<1xi8> {kiln.workspace})
// CHECK-DAG: memref.reinterpret_cast %[[A]] to offset: [0], sizes: [%[[S]]], strides: [1]
// CHECK-DAG: memref.reinterpret_cast %[[B]] to offset: [0], sizes: [%[[T]]], strides: [1]
// CHECK-DAG: memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [%[[T]], %[[S]]], strides: [%[[S]], 1]
// CHECK-LABEL: func.func @outer_workspace_size(
// CHECK-SAME: %[[S2:[^:]*]]: index, %[[T2:[^:]*]]: index) -> index
// CHECK: %[[P:.*]] = arith.muli %[[S2]], %{{.*}}
// CHECK: arith.muli %[[P]], %[[T2]]
func.func @outer(%a: memref<?xf32> {kiln.dim_names = ["S"]}, %b: memref<?xf32> {kiln.dim_names = ["T"]},
                 %out: memref<?x?xf32>)
    attributes {kiln.symbol_names = ["S", "T"], kiln.result_dim_names = [["T", "S"]]} {
  %c0 = arith.constant 0 : index
  %s = memref.dim %a, %c0 : memref<?xf32>
  %t = memref.dim %b, %c0 : memref<?xf32>
  %m = memref.alloc(%s, %t) : memref<?x?xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%m : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  }
  linalg.transpose ins(%m : memref<?x?xf32>) outs(%out : memref<?x?xf32>) permutation = [1, 0]
  return
}

// -----

// An output whose dim is an expression (a key/value cache: P + S rows):
// its out-param's view is sized from both dims' values, and the buffer
// the output was computed in, then copied out, is the out-param itself
// (no second copy of the cache, no workspace).
// CHECK-LABEL: func.func @cache(
// CHECK-SAME: %[[PAST:[^:]*]]: memref<1xf32> {kiln.dim_names = ["P", ""]}, %[[X:[^:]*]]: memref<1xf32> {kiln.dim_names = ["S", ""]}, %[[OUT:[^:]*]]: memref<1xf32>, %[[P:[^:]*]]: index {kiln.symbolic_dim = "P"}, %[[S:[^:]*]]: index {kiln.symbolic_dim = "S"}, %{{.*}}: memref<0xi8> {kiln.workspace})
// CHECK-SAME: kiln.workspace_size = 0 : i64
// CHECK: %[[ROWS:.*]] = arith.addi %[[P]], %[[S]] : index
// CHECK: %[[PRESENT:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [%[[ROWS]], 4], strides: [4, 1]
// CHECK-NOT: memref.view
// CHECK: %[[TOP:.*]] = memref.subview %[[PRESENT]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK: memref.copy %{{.*}}, %[[TOP]]
// CHECK: %[[BOTTOM:.*]] = memref.subview %[[PRESENT]][%{{.*}}, 0] [%{{.*}}, 4] [1, 1]
// CHECK: memref.copy %{{.*}}, %[[BOTTOM]]
// CHECK-NEXT: return
func.func @cache(%past: memref<?x4xf32> {kiln.dim_names = ["P", ""]},
                 %x: memref<?x4xf32> {kiln.dim_names = ["S", ""]}, %out: memref<?x4xf32>)
    attributes {kiln.symbol_names = ["P", "S"], kiln.dim_exprs = [array<i64: 0, 1, 1>],
                kiln.result_dim_names = [["P + S", ""]],
                kiln.result_dim_symbols = [array<i64: 2, -1>]} {
  %c0 = arith.constant 0 : index
  %p = memref.dim %past, %c0 : memref<?x4xf32>
  %s = memref.dim %x, %c0 : memref<?x4xf32>
  %n = arith.addi %p, %s : index
  %k = memref.alloc(%n) : memref<?x4xf32>
  %top = memref.subview %k[0, 0] [%p, 4] [1, 1] : memref<?x4xf32> to memref<?x4xf32, strided<[4, 1]>>
  memref.copy %past, %top : memref<?x4xf32> to memref<?x4xf32, strided<[4, 1]>>
  %bottom = memref.subview %k[%p, 0] [%s, 4] [1, 1] : memref<?x4xf32> to memref<?x4xf32, strided<[4, 1], offset: ?>>
  memref.copy %x, %bottom : memref<?x4xf32> to memref<?x4xf32, strided<[4, 1], offset: ?>>
  memref.copy %k, %out : memref<?x4xf32> to memref<?x4xf32>
  return
}
