// RUN: kiln-opt %s --kiln-gpu-map-loops="coarsen=1 tile-contractions=false" --split-input-file --verify-diagnostics | FileCheck %s
// kiln-gpu-map-loops (passes/Codegen/GPU/MapLoops.cpp): the loop nests of
// --target=cuda as GPU launches.

// A 2-D parallel loop: 6 x 50 = 300 iterations, blocks of 256 threads,
// ceil(300 / 256) = 2 blocks; each thread takes index bid * 256 + tid,
// runs the body when it is below 300, the last dim fastest (j = index
// mod 50, i = index / 50). The reduction loop inside stays a loop.
// CHECK-LABEL: func.func @rows(
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C300:.*]] = arith.constant 300 : index
// CHECK-DAG: %[[GRID:.*]] = arith.constant 2 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BS:.*]] = %[[C256]],
// CHECK: %[[MUL:.*]] = arith.muli %[[BX]], %[[BS]]
// CHECK: %[[IDX:.*]] = arith.addi %[[MUL]], %[[TX]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[IDX]], %[[C300]]
// CHECK: scf.if %[[IN]] {
// CHECK: %[[J:.*]] = arith.remui %[[IDX]], %{{.*}}
// CHECK: %[[I:.*]] = arith.divui %[[IDX]], %{{.*}}
// CHECK: scf.for
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: gpu.terminator
// CHECK-NOT: scf.parallel
func.func @rows(%a: memref<6x50x8xf32>, %out: memref<6x50xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c50 = arith.constant 50 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c6, %c50) step (%c1, %c1) {
    %init = memref.load %out[%i, %j] : memref<6x50xf32>
    %sum = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %init) -> f32 {
      %v = memref.load %a[%i, %j, %k] : memref<6x50x8xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    memref.store %sum, %out[%i, %j] : memref<6x50xf32>
    scf.reduce
  }
  return
}

// A loop nest with no parallel dim (a full reduction) and a store: one
// launch of one thread for both, after the view, which stays on the host. A small
// parallel loop (10 iterations) gets one block of 10 threads.
// CHECK-LABEL: func.func @serial(
// CHECK: memref.subview
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:.*]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]],
// CHECK: scf.for
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c10{{.*}}, {{.*}} = %c1
// CHECK: arith.cmpi ult
func.func @serial(%a: memref<10xf32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %cst = arith.constant 0.0 : f32
  %view = memref.subview %out[1] [1] [1] : memref<2xf32> to memref<1xf32, strided<[1], offset: 1>>
  %sum = scf.for %k = %c0 to %c10 step %c1 iter_args(%acc = %cst) -> f32 {
    %v = memref.load %a[%k] : memref<10xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  memref.store %sum, %view[%c0] : memref<1xf32, strided<[1], offset: 1>>
  scf.parallel (%i) = (%c0) to (%c10) step (%c1) {
    memref.store %cst, %a[%i] : memref<10xf32>
    scf.reduce
  }
  return
}

// -----

// A 0-d op's body at the top level (load, arithmetic, store): the
// arithmetic reads a value loaded on the GPU, so it joins the load's
// launch; the view between stays on the host.
// CHECK-LABEL: func.func @scalar(
// CHECK: memref.subview
// CHECK: gpu.launch
// CHECK-NEXT: memref.load
// CHECK-NEXT: arith.divf
// CHECK-NEXT: memref.store
// CHECK-NEXT: gpu.terminator
func.func @scalar(%a: memref<f32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2.0 : f32
  %v = memref.load %a[] : memref<f32>
  %view = memref.subview %out[1] [1] [1] : memref<2xf32> to memref<1xf32, strided<[1], offset: 1>>
  %h = arith.divf %v, %c2 : f32
  memref.store %h, %view[%c0] : memref<1xf32, strided<[1], offset: 1>>
  return
}

// -----

// A size the host needs that a loop over a tensor's values computes (the
// loop runs on the GPU; the loop below runs over a view of the size): an
// error. (A size loaded from a tensor is read by the host: host-reads.mlir.)
func.func @size(%a: memref<4xi64>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 0.0 : f32
  // expected-error @+1 {{--target=cuda: the host needs a value computed on the GPU (a size, an index or a condition known only at run time)}}
  %n = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %c0) -> (index) {
    %v = memref.load %a[%i] : memref<4xi64>
    %vi = arith.index_cast %v : i64 to index
    %s = arith.addi %acc, %vi : index
    scf.yield %s : index
  }
  %view = memref.subview %out[0] [%n] [1] : memref<?xf32> to memref<?xf32, strided<[1]>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %cst, %view[%i] : memref<?xf32, strided<[1]>>
    scf.reduce
  }
  return
}

// -----

// A reduction keeps its output element in a register: one load before the
// reduction loops, the sum carried through them (iter_args), one store
// after; the inputs are loaded inside. (Loaded and stored at every step,
// each multiply-add would be a round trip to global memory.)
// CHECK-LABEL: func.func @matmul(
// CHECK: gpu.launch
// CHECK: %[[INIT:.*]] = memref.load %[[C:.*]][%{{.*}}, %{{.*}}] : memref<4x5xf32>
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK: memref.load %{{.*}} : memref<4x3xf32>
// CHECK: memref.load %{{.*}} : memref<3x5xf32>
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK: memref.store %[[SUM]], %[[C]][%{{.*}}, %{{.*}}] : memref<4x5xf32>
func.func @matmul(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}

// A convolution: the window's indices are affine.apply of the output's and
// the reduction's (oh * 2 + kh), three nested loops carry the sum.
// CHECK-LABEL: func.func @conv(
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<1x2x3x3xf32>
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK: affine.apply
// CHECK: memref.store {{.*}} : memref<1x2x3x3xf32>
func.func @conv(%x: memref<1x3x7x7xf32>, %w: memref<2x3x3x3xf32>, %y: memref<1x2x3x3xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x7x7xf32>, memref<2x3x3x3xf32>) outs(%y : memref<1x2x3x3xf32>)
  return
}

// A generic's linalg.index of a reduction dim reads the loop's index.
// CHECK-LABEL: func.func @indexed(
// CHECK: scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
// CHECK: arith.index_cast %[[K]]
func.func @indexed(%x: memref<4x6xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x6xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %p = arith.mulf %v, %kf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
