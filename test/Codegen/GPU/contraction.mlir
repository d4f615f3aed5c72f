// RUN: kiln-opt %s --kiln-gpu-map-loops -canonicalize -cse | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-map-loops=tf32=true -canonicalize -cse | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt %s --kiln-gpu-map-loops=async-copies=false -canonicalize -cse | FileCheck %s --check-prefix=REGS
// kiln-gpu-map-loops' tiled contractions (passes/Codegen/GPU/Contraction.cpp):
// a GEMM-like linalg op as one launch of 64 x 64 output tiles, 256 threads
// each computing 4 x 4 outputs, the inputs staged in shared memory 16
// reduction steps at a time.

// 100 x 90 outputs: 2 x 2 tiles (grid x over the columns, y over the rows),
// 70 reduction steps: ceil(70 / 16) = 5 staged steps, 4 tiles and too few
// steps to split. Two stages of A and B tiles (2 x 16 x 64 each). Before
// the loop a thread starts copying its 4 + 4 elements of the first step
// into stage 0 (cp.async: one element each, none read outside the
// operands, which zero-fills, from a clamped index), one group. The loop
// carries the 16 sums and the token of the copies in flight; step s waits
// for them and at a barrier for every thread's, starts copying step s + 1
// (if any) into the other stage (1 - s % 2), then does 16 x 16 fused
// multiply-adds from stage s % 2, with no second barrier; then each of a
// thread's 16 sums is added to C's value where it falls inside C.
// CHECK-LABEL: func.func @matmul(
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %{{.*}}) in (%{{.*}} = %[[C2]], %{{.*}} = %[[C2]], %{{.*}} = %c1) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]], %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%[[AT:.*]] : memref<2x16x64xf32, #gpu.address_space<workgroup>>, %[[BT:.*]] : memref<2x16x64xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[IN:.*]] = arith.andi
// CHECK: %[[ROW:.*]] = arith.select %[[IN]], %{{.*}}, %c0 : index
// CHECK: %[[K:.*]] = arith.select %[[IN]], %{{.*}}, %c0 : index
// CHECK: %[[N:.*]] = arith.select %[[IN]], %c1, %c0 : index
// CHECK: nvgpu.device_async_copy %arg0[%[[ROW]], %[[K]]], %[[AT]][%c0, %{{.*}}, %{{.*}}], 1, %[[N]]
// CHECK-COUNT-3: nvgpu.device_async_copy %arg0
// CHECK-COUNT-4: nvgpu.device_async_copy %arg1[{{.*}}], %[[BT]][%c0,
// CHECK: %[[FIRST:.*]] = nvgpu.device_async_create_group
// CHECK-NOT: memref.load %arg
// CHECK: %{{.*}}:17 = scf.for %[[STEP:.*]] = %c0 to %[[C5]] step %c1 iter_args({{.*}}, %[[TOKEN:.*]] = %[[FIRST]]) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, !nvgpu.device.async.token)
// CHECK: %[[STAGE:.*]] = arith.remui %[[STEP]], %[[C2]]
// CHECK: nvgpu.device_async_wait %[[TOKEN]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: %[[NEXT:.*]] = arith.addi %[[STEP]], %c1
// CHECK: %[[MORE:.*]] = arith.cmpi ult, %[[NEXT]], %[[C5]]
// CHECK: scf.if %[[MORE]] -> (!nvgpu.device.async.token) {
// CHECK: %[[OTHER:.*]] = arith.subi %c1, %[[STAGE]]
// CHECK-COUNT-4: nvgpu.device_async_copy %arg0[{{.*}}], %[[AT]][%[[OTHER]],
// CHECK-COUNT-4: nvgpu.device_async_copy %arg1[{{.*}}], %[[BT]][%[[OTHER]],
// CHECK: %[[GROUP:.*]] = nvgpu.device_async_create_group
// CHECK: scf.yield %[[GROUP]]
// CHECK: } else {
// CHECK: scf.yield %[[TOKEN]]
// CHECK: memref.load %[[AT]][%[[STAGE]], %c0,
// CHECK: memref.load %[[BT]][%[[STAGE]], %c0,
// CHECK-COUNT-256: math.fma
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: %[[OLD:.*]] = memref.load %arg2
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]]
// CHECK: memref.store %[[NEW]], %arg2
// CHECK-NOT: memref.atomic_rmw
// With async-copies=false (and for an operand whose innermost dim is
// strided: @strided below), one stage: a thread loads its 4 + 4 elements of
// the first step's A and B (guarded loads, zero outside) before the loop,
// which carries them with the 16 sums: each step stores them into shared
// memory, waits, loads the next step's (their latency hidden by what
// follows), does 16 x 16 fused multiply-adds from shared memory, waits.
// REGS-LABEL: func.func @matmul(
// REGS: workgroup(%[[AT:.*]] : memref<1x16x64xf32, #gpu.address_space<workgroup>>, %[[BT:.*]] : memref<1x16x64xf32, #gpu.address_space<workgroup>>)
// REGS: scf.if %{{.*}} -> (f32) {
// REGS: memref.load %arg0
// REGS: } else {
// REGS: scf.yield %cst : f32
// REGS: memref.load %arg1
// REGS: %{{.*}}:24 = scf.for %{{.*}} = %c0 to %c5 step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// REGS-COUNT-4: memref.store %{{.*}}, %[[AT]][%c0,
// REGS-COUNT-4: memref.store %{{.*}}, %[[BT]][%c0,
// REGS: gpu.barrier
// REGS: memref.load %arg0
// REGS: memref.load %arg1
// REGS-COUNT-256: math.fma
// REGS: gpu.barrier
// REGS: scf.yield
// REGS-NOT: nvgpu
// With tf32 (--gpu-precision=tf32) the staged step runs on the tensor
// cores: each warp a 16 x 32 block as four m16n8 tiles, two k8 steps of
// mma.sync a tile (8 a staged step), its A and B fragments read from
// shared memory and rounded to TF32 (4 A values, 2 B values a tile); the
// sums land in C as before.
// TF32-LABEL: func.func @matmul(
// TF32: scf.for
// TF32: gpu.barrier
// TF32-COUNT-8: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// TF32: gpu.barrier
// TF32-NOT: math.fma
// TF32: memref.store %{{.*}}, %arg2
func.func @matmul(%a: memref<100x70xf32>, %b: memref<70x90xf32>, %c: memref<100x90xf32>) {
  linalg.matmul ins(%a, %b : memref<100x70xf32>, memref<70x90xf32>) outs(%c : memref<100x90xf32>)
  return
}

// A matrix-vector-like product with few tiles (1 x 16) and a long
// reduction (2048 = 128 staged steps): split 16 ways over grid z, eight
// staged steps each, the partial sums added into C atomically. C's
// innermost dim (n) is B's column.
// CHECK-LABEL: func.func @split(
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C16]], %{{.*}} = %c1, %{{.*}} = %[[C16]])
// CHECK: memref.atomic_rmw addf
func.func @split(%a: memref<1x2048xf32>, %b: memref<2048x1000xf32>, %c: memref<1x1000xf32>) {
  linalg.matmul ins(%a, %b : memref<1x2048xf32>, memref<2048x1000xf32>) outs(%c : memref<1x1000xf32>)
  return
}

// A's innermost dim strided (every other column of a 100 x 140 buffer):
// cp.async takes no such source, so the registers stage both operands.
// CHECK-LABEL: func.func @strided(
// CHECK: workgroup(%{{.*}} : memref<1x16x64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu
// CHECK: math.fma
func.func @strided(%buf: memref<100x140xf32>, %b: memref<70x90xf32>, %c: memref<100x90xf32>) {
  %a = memref.subview %buf[0, 0] [100, 70] [1, 2] : memref<100x140xf32> to memref<100x70xf32, strided<[140, 2]>>
  linalg.matmul ins(%a, %b : memref<100x70xf32, strided<[140, 2]>>, memref<70x90xf32>) outs(%c : memref<100x90xf32>)
  return
}

// Dynamic sizes (a sequence length in M and K): the row tiles and the
// staged steps counted on the host from A's dims, bounds checked against
// them; one block a tile (no split, hence no atomics) and the fill before
// folded into the store.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[A:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?x90xf32>, %[[C:.*]]: memref<?x90xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[M:.*]] = memref.dim %[[A]], %c0
// CHECK: %[[K:.*]] = memref.dim %[[A]], %c1
// CHECK: %[[TILES:.*]] = arith.ceildivui %[[M]], %c64
// CHECK: %[[STEPS:.*]] = arith.ceildivui %[[K]], %c16
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2, %{{.*}} = %[[TILES]], %{{.*}} = %c1)
// CHECK: arith.cmpi ult, %{{.*}}, %[[M]]
// CHECK: arith.cmpi ult, %{{.*}}, %[[K]]
// CHECK: scf.for %{{.*}} = %c0 to %[[STEPS]] step %c1
// CHECK-NOT: memref.atomic_rmw
// CHECK: arith.addf %{{.*}}, %cst : f32
// CHECK-NEXT: memref.store %{{.*}}, %[[C]]
func.func @dynamic(%a: memref<?x?xf32>, %b: memref<?x90xf32>, %c: memref<?x90xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x90xf32>)
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x90xf32>) outs(%c : memref<?x90xf32>)
  return
}

// A convolution is an implicit GEMM: M the output channels (the weights'
// rows), N the batch and output pixels (C's innermost dim, ow, is one), K
// the input channels and the window; the input's window indices are
// affine.apply of the pixel and window dims, no im2col buffer, copied
// from there (cp.async) into the tiles.
// CHECK-LABEL: func.func @conv(
// CHECK: gpu.launch
// CHECK: %[[H:.*]] = affine.apply
// CHECK: %[[W:.*]] = affine.apply
// CHECK: nvgpu.device_async_copy %arg0[%{{.*}}, %{{.*}}, %[[H]], %[[W]]]
// CHECK: math.fma
func.func @conv(%x: memref<2x8x9x9xf32>, %w: memref<16x8x3x3xf32>, %y: memref<2x16x4x4xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<2x8x9x9xf32>, memref<16x8x3x3xf32>) outs(%y : memref<2x16x4x4xf32>)
  return
}

// Not contractions: a depthwise convolution (no dim indexes the weights
// alone) keeps one thread per output with the reduction in a loop; a
// max-reduction's 4096 outputs (few) become a block reduction
// (Reduction.cpp: 64 steps, so groups of a warp combining their partial
// maxima by shuffles; no fma).
// CHECK-LABEL: func.func @depthwise(
// CHECK-NOT: workgroup
// CHECK: scf.for
// CHECK-LABEL: func.func @rowmax(
// CHECK-NOT: math.fma
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor
func.func @depthwise(%x: memref<1x8x9x9xf32>, %w: memref<8x3x3xf32>, %y: memref<1x8x7x7xf32>) {
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x8x9x9xf32>, memref<8x3x3xf32>) outs(%y : memref<1x8x7x7xf32>)
  return
}
func.func @rowmax(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %y: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>,
                                   affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %m = arith.maximumf %acc, %p : f32
    linalg.yield %m : f32
  }
  return
}
