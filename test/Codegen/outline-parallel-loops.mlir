// RUN: kiln-opt %s --kiln-outline-parallel-loops | FileCheck %s
// RUN: kiln-opt %s --kiln-outline-parallel-loops --convert-scf-to-cf --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm=use-bare-ptr-memref-call-conv=1 --convert-cf-to-llvm --convert-index-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM
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
