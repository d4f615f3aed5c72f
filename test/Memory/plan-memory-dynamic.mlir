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
