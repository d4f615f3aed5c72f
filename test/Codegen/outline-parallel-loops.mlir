// RUN: kiln-opt %s --kiln-outline-parallel-loops --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-outline-parallel-loops --convert-scf-to-cf --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm=use-bare-ptr-memref-call-conv=1 --convert-cf-to-llvm --convert-index-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM
// A loop marked kiln.parallel becomes kiln_parallel_for(trips, fn, ctx):
// the memrefs and the index it uses from outside travel in a stack struct
// (descriptors and i64), constants are recreated in fn, and fn runs
// iterations [begin, end) as lb + i * step. Unmarked loops stay.

// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[X:.+]]: memref<10x4xf32>, %[[Y:.+]]: memref<10x4xf32>, %[[K:.+]]: index)
// CHECK: %[[CTX:.+]] = llvm.alloca %{{.+}} x !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, i64, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>
// CHECK: %[[XD:.+]] = builtin.unrealized_conversion_cast %[[X]] : memref<10x4xf32> to !llvm.struct
// CHECK: llvm.store %[[XD]]
// CHECK: %[[KI:.+]] = arith.index_cast %[[K]] : index to i64
// CHECK: llvm.store %[[KI]]
// CHECK: %[[FN:.+]] = constant @scale_parallel_0 : (!llvm.ptr, i64, i64) -> ()
// CHECK: %[[N:.+]] = arith.constant 5 : i64
// CHECK: call @kiln_parallel_for(%[[N]], %[[FN]], %[[CTX]])
// CHECK-NOT: scf.for {{.*}}kiln.parallel
// CHECK: scf.for
// CHECK-LABEL: func.func private @scale_parallel_0(
// CHECK-SAME: %[[C:.+]]: !llvm.ptr, %[[B:.+]]: i64, %[[E:.+]]: i64)
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: %[[L:.+]] = llvm.load %{{.+}} : !llvm.ptr -> !llvm.struct
// CHECK: builtin.unrealized_conversion_cast %[[L]] {{.*}} to memref<10x4xf32>
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK: arith.muli %[[I]], %{{.+}} : index
// CHECK-LABEL: func.func private @kiln_parallel_for(i64, (!llvm.ptr, i64, i64) -> (), !llvm.ptr)
// LLVM: llvm.call @kiln_parallel_for
// LLVM: llvm.func @scale_parallel_0(
// LLVM-NOT: unrealized_conversion_cast
func.func @scale(%x: memref<10x4xf32>, %y: memref<10x4xf32>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c10 step %c2 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %j] : memref<10x4xf32>
      %w = arith.mulf %v, %two : f32
      %ik = arith.addi %i, %k : index
      memref.store %w, %y[%i, %j] : memref<10x4xf32>
    }
  } {kiln.parallel}
  scf.for %i = %c0 to %c10 step %c1 {
    memref.store %two, %y[%i, %c0] : memref<10x4xf32>
  }
  return
}

// -----

// Nested marked loops (a window loop marked kiln.parallel_nests around a
// kernel's own parallel loop): the inner loop is outlined first; its
// context, stored inside the outer loop, is recreated in the outer
// function (each thread stores its own), and the outer function calls the
// hook for the inner loop.
// CHECK-LABEL: func.func @nested(
// CHECK: call @kiln_parallel_for(%{{.+}}, %{{.+}}, %{{.+}})
// CHECK-NOT: scf.for
// CHECK: return
// CHECK-LABEL: func.func private @nested_parallel_1(
// CHECK: %[[OWN:.+]] = llvm.alloca %{{.+}} x !llvm.struct{{.*}} {kiln.scratch}
// CHECK: scf.for
// CHECK: llvm.store %{{.+}}, %{{.+}}
// CHECK: %[[INNER:.+]] = {{(func\.)?}}constant @nested_parallel_0
// CHECK: call @kiln_parallel_for(%{{.+}}, %[[INNER]], %[[OWN]])
// CHECK-LABEL: func.func private @nested_parallel_0(
// CHECK: scf.for
// CHECK: memref.store
func.func @nested(%y: memref<32x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %n step %c16 {
    scf.for %j = %c0 to %c64 step %c8 {
      memref.store %two, %y[%i, %j] : memref<32x64xf32>
    } {kiln.parallel}
  } {kiln.parallel, kiln.parallel_nests}
  return
}
