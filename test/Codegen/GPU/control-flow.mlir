// RUN: kiln-opt %s --kiln-gpu-map-loops --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-map-loops --gpu-kernel-outlining --kiln-gpu-launch-to-runtime | FileCheck %s --check-prefix=HOST
// Loops and branches (ONNX Loop, Scan and If bodies; ReduceSum choosing
// its result's buffer) with parallel work run on the host, their bodies
// mapped as a function's is (kiln-gpu-map-loops, MapLoops.cpp): each
// linalg op a launch of its own from inside the loop or branch, views
// and sizes on the host. Those with little work, and those whose body
// computes in one GPU thread a value the host would need, run in one
// thread as a whole.

// A Scan-like loop over 64-element rows: the loop and the row's view stay
// on the host, the add is a launch of 64 threads at each step.
// CHECK-LABEL: func.func @steps(
// CHECK-NOT: gpu.launch
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[ROW:.*]] = memref.subview %arg0[%[[T]], 0]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{.*}} = %c64
// CHECK: memref.load %[[ROW]]
// CHECK: arith.addf
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
// HOST-LABEL: func.func @steps(
// HOST: scf.for
// HOST: call @kiln_cuda_launch
func.func @steps(%x: memref<4x64xf32>, %state: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %t = %c0 to %c4 step %c1 {
    %row = memref.subview %x[%t, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                    iterator_types = ["parallel"]}
        ins(%row : memref<64xf32, strided<[1], offset: ?>>) outs(%state : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  }
  return
}

// The same loop over 2-element rows: 8 additions in all, in one thread.
// CHECK-LABEL: func.func @tiny_steps(
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: memref.subview
// CHECK: arith.addf
// CHECK: gpu.terminator
func.func @tiny_steps(%x: memref<4x2xf32>, %state: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %t = %c0 to %c4 step %c1 {
    %row = memref.subview %x[%t, 0] [1, 2] [1, 1] : memref<4x2xf32> to memref<2xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                    iterator_types = ["parallel"]}
        ins(%row : memref<2xf32, strided<[1], offset: ?>>) outs(%state : memref<2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  }
  return
}

// A branch that picks its result's buffer (ReduceSum with its axis an
// input): the condition is read on the host, each branch's sum over 64
// values is a block reduction launched there (a warp a row, its
// partials combined by shuffles), and the copy after it reads the buffer
// the host picked.
// CHECK-LABEL: func.func @choose(
// CHECK: %[[C:.*]] = memref.load %arg1[]
// CHECK: %[[R:.*]] = scf.if %[[C]] -> (memref<3xf32>) {
// CHECK: gpu.launch
// CHECK: gpu.shuffle
// CHECK: gpu.terminator
// CHECK: scf.yield %arg3
// CHECK: } else {
// CHECK: gpu.launch
// CHECK: gpu.shuffle
// CHECK: gpu.terminator
// CHECK: scf.yield %arg4
// CHECK: }
// CHECK: gpu.launch
// CHECK: memref.load %[[R]]
// HOST-LABEL: func.func @choose(
// HOST: %[[W:.*]] = call @kiln_cuda_read
// HOST: %[[C:.*]] = arith.trunci %[[W]] : i64 to i1
// HOST: scf.if %[[C]]
// HOST: call @kiln_cuda_launch
// HOST: } else {
// HOST: call @kiln_cuda_launch
// HOST: }
// HOST: call @kiln_cuda_launch
func.func @choose(%x: memref<3x64xf32>, %cond: memref<i1>, %out: memref<3xf32>,
                  %a: memref<3xf32>, %b: memref<3xf32>) {
  %c = memref.load %cond[] : memref<i1>
  %r = scf.if %c -> (memref<3xf32>) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<3x64xf32>) outs(%a : memref<3xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    }
    scf.yield %a : memref<3xf32>
  } else {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<3x64xf32>) outs(%b : memref<3xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.maximumf %acc, %in : f32
      linalg.yield %s : f32
    }
    scf.yield %b : memref<3xf32>
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%r : memref<3xf32>) outs(%out : memref<3xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  return
}

// An ONNX Loop with a condition its body computes: the loop and the
// branch on the running flag stay on the host; the body's work is a
// launch, the 0-d condition's load, compare and store a launch of one
// thread, and the flag for the next step a read of device memory there.
// CHECK-LABEL: func.func @loop(
// CHECK: scf.for {{.*}} iter_args(%[[FLAG:.*]] = %true) -> (i1) {
// CHECK: scf.if %[[FLAG]] -> (i1) {
// CHECK: gpu.launch
// CHECK: arith.mulf
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: arith.cmpf
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK: %[[NEXT:.*]] = memref.load %arg2[]
// CHECK: scf.yield %[[NEXT]]
// CHECK: } else {
// HOST-LABEL: func.func @loop(
// HOST: scf.for
// HOST: scf.if
// HOST: call @kiln_cuda_launch
// HOST: call @kiln_cuda_launch
// HOST: call @kiln_cuda_read
func.func @loop(%state: memref<64xf32>, %scale: memref<64xf32>, %flag: memref<i1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %true = arith.constant true
  %false = arith.constant false
  %limit = arith.constant 100.0 : f32
  %done = scf.for %t = %c0 to %c10 step %c1 iter_args(%run = %true) -> (i1) {
    %next = scf.if %run -> (i1) {
      linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                      iterator_types = ["parallel"]}
          ins(%scale : memref<64xf32>) outs(%state : memref<64xf32>) {
      ^bb0(%in: f32, %out: f32):
        %m = arith.mulf %in, %out : f32
        linalg.yield %m : f32
      }
      %v = memref.load %state[%c0] : memref<64xf32>
      %small = arith.cmpf olt, %v, %limit : f32
      memref.store %small, %flag[] : memref<i1>
      %k = memref.load %flag[] : memref<i1>
      scf.yield %k : i1
    } else {
      scf.yield %false : i1
    }
    scf.yield %next : i1
  }
  return
}

// A loop carrying a count that a sequential loop in its body computes
// from a tensor's values (NonMaxSuppression's rounds): on the host, that
// count would be a GPU value the host needs, so the whole loop runs in
// one thread, its 64-element fill too.
// CHECK-LABEL: func.func @carried_count(
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: scf.for
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @carried_count(%a: memref<4xi64>, %flags: memref<64xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %false = arith.constant false
  %n = scf.for %c = %c0 to %c4 step %c1 iter_args(%count = %c0) -> (index) {
    linalg.fill ins(%false : i1) outs(%flags : memref<64xi1>)
    %m = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %count) -> (index) {
      %v = memref.load %a[%i] : memref<4xi64>
      %vi = arith.index_cast %v : i64 to index
      %s = arith.addi %acc, %vi : index
      scf.yield %s : index
    }
    scf.yield %m : index
  }
  return
}
