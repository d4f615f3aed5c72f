// RUN: kiln-opt %s --kiln-outline-parallel-loops | FileCheck %s
// Dynamic bounds (the windows of a dynamic dim): the trip count is
// computed before the call, ceil((ub - lb) / step), and the lower bound
// travels in the context for the induction variable.
// CHECK-LABEL: func.func @windows(
// CHECK-SAME: %[[XW:.+]]: memref<?xf32>, %[[LO:.+]]: index, %[[HI:.+]]: index)
// CHECK: %[[SPAN:.+]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK: %[[UP:.+]] = arith.addi %[[SPAN]], %{{.+}} : index
// CHECK: %[[T:.+]] = arith.divsi %[[UP]], %{{.+}} : index
// CHECK: %[[TN:.+]] = arith.index_cast %[[T]] : index to i64
// CHECK: call @kiln_parallel_for(%[[TN]],
// CHECK-LABEL: func.func private @windows_parallel_0(
// CHECK: %[[LOW:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: scf.for %[[J:.+]] =
// CHECK: %[[OFF:.+]] = arith.muli %[[J]], %{{.+}} : index
// CHECK: arith.addi %[[LOW]], %[[OFF]] : index
func.func @windows(%x: memref<?xf32>, %lo: index, %hi: index) {
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %lo to %hi step %c16 {
    memref.store %zero, %x[%i] : memref<?xf32>
  } {kiln.parallel}
  return
}
