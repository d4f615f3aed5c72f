// RUN: kiln-opt %s --kiln-outline-parallel-loops --split-input-file | FileCheck %s
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

// -----

// With kiln.min_trips (work per trip too small for threads unless there
// are enough of them), fewer trips call the outlined function directly,
// on the calling thread; the hook gets the rest.
// CHECK-LABEL: func.func @few_trips(
// CHECK: %[[T:.+]] = arith.divsi
// CHECK: %[[TN:.+]] = arith.index_cast %[[T]] : index to i64
// CHECK: %[[MIN:.+]] = arith.constant 11 : i64
// CHECK: %[[ENOUGH:.+]] = arith.cmpi sge, %[[TN]], %[[MIN]] : i64
// CHECK: scf.if %[[ENOUGH]] {
// CHECK:   call @kiln_parallel_for(%[[TN]], %[[FN:.+]], %[[CTX:.+]]) :
// CHECK: } else {
// CHECK:   %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK:   call @few_trips_parallel_0(%[[CTX]], %[[ZERO]], %[[TN]]) :
// CHECK: }
// CHECK-LABEL: func.func private @few_trips_parallel_0(
func.func @few_trips(%x: memref<?xf32>, %lo: index, %hi: index) {
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %lo to %hi step %c16 {
    memref.store %zero, %x[%i] : memref<?xf32>
  } {kiln.min_trips = 11 : i64, kiln.parallel}
  return
}
