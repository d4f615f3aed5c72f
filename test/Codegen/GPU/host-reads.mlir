// RUN: kiln-opt %s --kiln-gpu-map-loops | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-map-loops --gpu-kernel-outlining --kiln-gpu-launch-to-runtime | FileCheck %s --check-prefix=HOST
// A value the host needs (a loop bound, an offset a kernel takes) loaded
// from a buffer stays a host load after the launches before it
// (kiln-gpu-map-loops), which kiln-gpu-launch-to-runtime makes a read of
// device memory: kiln_cuda_read(program, address, bytes).

// The start of a slice, an input: loaded on the host, the kernel takes
// the index as a parameter.
// CHECK-LABEL: func.func @slice_by_input(
// CHECK: %[[S:.*]] = memref.load %arg1
// CHECK: %[[I:.*]] = arith.index_cast %[[S]]
// CHECK: gpu.launch
// CHECK: arith.addi %{{.*}}, %[[I]]
// HOST-LABEL: func.func @slice_by_input(
// HOST-NOT: memref.load
// HOST: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %arg1
// HOST: %[[ADDR:.*]] = arith.addi %[[BASE]]
// HOST: %[[WORD:.*]] = call @kiln_cuda_read(%{{.*}}, %[[ADDR]], %c8_i32{{[_0-9]*}})
// HOST: arith.index_cast %[[WORD]] : i64 to index
// HOST: call @kiln_cuda_launch
func.func @slice_by_input(%x: memref<16xf32>, %start: memref<1xi64>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = memref.load %start[%c0] : memref<1xi64>
  %i = arith.index_cast %s : i64 to index
  scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
    %k = arith.addi %j, %i : index
    %v = memref.load %x[%k] : memref<16xf32>
    memref.store %v, %y[%j] : memref<8xf32>
    scf.reduce
  }
  return
}

// A value computed on the GPU (a one-thread launch stores it) and then
// needed as a loop bound: that launch goes first, then the host read.
// A 0-d op's load, arithmetic and store, which the host does not need,
// stay in a launch of one thread. A half-precision value is read as 2
// bytes and bitcast.
// CHECK-LABEL: func.func @computed_bound(
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg1[]
// CHECK: gpu.terminator
// CHECK: %[[N:.*]] = memref.load %arg1[]
// CHECK: gpu.launch
// CHECK: memref.load %arg0[]
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %arg2[]
// CHECK: gpu.terminator
// CHECK: memref.load %arg3[]
// HOST-LABEL: func.func @computed_bound(
// HOST: call @kiln_cuda_launch
// HOST: call @kiln_cuda_read(%{{.*}}, %{{.*}}, %c4_i32{{[_0-9]*}})
// HOST: call @kiln_cuda_launch
// HOST: %[[H:.*]] = call @kiln_cuda_read(%{{.*}}, %{{.*}}, %c2_i32{{[_0-9]*}})
// HOST: %[[T:.*]] = arith.trunci %[[H]] : i64 to i16
// HOST: arith.bitcast %[[T]] : i16 to f16
func.func @computed_bound(%x: memref<f32>, %n: memref<i32>, %y: memref<f32>, %h: memref<f16>,
                          %out: memref<64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : i32
  memref.store %c5, %n[] : memref<i32>
  %v = memref.load %n[] : memref<i32>
  %b = arith.index_cast %v : i32 to index
  %a = memref.load %x[] : memref<f32>
  %two = arith.mulf %a, %a : f32
  memref.store %two, %y[] : memref<f32>
  %hv = memref.load %h[] : memref<f16>
  scf.parallel (%j) = (%c0) to (%b) step (%c1) {
    memref.store %hv, %out[%j] : memref<64xf16>
    scf.reduce
  }
  return
}
