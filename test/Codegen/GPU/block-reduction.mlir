// RUN: kiln-opt %s --kiln-gpu-map-loops --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-map-loops="block-reductions=false" --split-input-file | FileCheck %s --check-prefix=OFF
// kiln-gpu-map-loops's block reductions (passes/Codegen/GPU/Reduction.cpp):
// groups of threads share each output's reduction and combine their
// partial values in shared memory.

// OFF-NOT: workgroup(

// 123 rows of 300: 64 threads a row (300 / 4 steps, a power of two), 4
// rows a block, ceil(123 / 4) = 31 blocks; lane = tid mod 64 sums steps
// lane, lane + 64, ... from 0 (addf's identity); the partials go to shared
// memory, after a barrier lanes below 32 add the upper half's, then the
// group's first warp adds its 32 values by xor shuffles (16, 8, 4, 2, 1:
// no barrier); lane 0 of a group whose row exists adds the total to the
// row's initial value.
// CHECK-LABEL: func.func @row_sum(
// CHECK-DAG: %[[C31:.*]] = arith.constant 31 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C31]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]], {{.*}} workgroup(%[[SH:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[LANE:.*]] = arith.remui %[[TX]], %{{.*}}
// CHECK: %[[GROUP0:.*]] = arith.muli %[[BX]], %{{.*}}
// CHECK: %[[ROW:.*]] = arith.addi %[[GROUP0]], %{{.*}}
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %[[ROW]], %{{.*}}
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PART:.*]] = scf.if %[[VALID]] -> (f32) {
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %[[S:.*]] = %[[LANE]] to %{{.*}} step %[[C64]] iter_args(%[[ACC:.*]] = %[[ZERO]])
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[ROW]], %[[S]]] : memref<123x300xf32>
// CHECK: arith.addf %[[ACC]], %[[V]]
// CHECK: } else {
// CHECK: scf.yield %[[ZERO]]
// CHECK: memref.store %[[PART]], %[[SH]][%[[TX]]]
// CHECK-NEXT: gpu.barrier
// CHECK: %[[UPPER:.*]] = arith.cmpi ult, %[[LANE]], %c32
// CHECK: scf.if %[[UPPER]] {
// CHECK: arith.addf
// CHECK-NOT: gpu.barrier
// CHECK: %[[WARP:.*]] = arith.cmpi ult, %[[LANE]], %c32
// CHECK: scf.if %[[WARP]] {
// CHECK: %[[V0:.*]] = memref.load %[[SH]][%[[TX]]]
// CHECK: %[[S0:.*]], %{{.*}} = gpu.shuffle  xor %[[V0]], %c16_i32, %c32_i32 : f32
// CHECK: %[[V1:.*]] = arith.addf %[[V0]], %[[S0]]
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: %[[TOTAL:.*]] = arith.addf
// CHECK-NOT: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %{{.*}}
// CHECK: %[[MINE:.*]] = arith.andi %[[FIRST]], %[[VALID]]
// CHECK: scf.if %[[MINE]] {
// CHECK: %[[INIT:.*]] = memref.load %{{.*}}[%[[ROW]]] : memref<123xf32>
// CHECK: %[[R:.*]] = arith.addf %[[INIT]], %[[TOTAL]]
// CHECK: memref.store %[[R]], %{{.*}}[%[[ROW]]] : memref<123xf32>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

func.func @row_sum(%x: memref<123x300xf32>, %out: memref<123xf32>) {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<123x300xf32>) outs(%out : memref<123xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A full reduction: one block of 256 threads, no bounds check, 8 steps:
// 3 through shared memory (128, 64, 32) between barriers, 5 by shuffles.
// CHECK-LABEL: func.func @total(
// CHECK: gpu.launch {{.*}} workgroup(
// CHECK-NOT: scf.if {{.*}} -> (f32)
// CHECK: scf.for
// CHECK-COUNT-3: gpu.barrier
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-5: gpu.shuffle
// CHECK: gpu.terminator
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

func.func @total(%x: memref<5000xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction"]}
      ins(%x : memref<5000xf32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 6000 outputs, read across the reduction dim (not contiguous): one
// thread a column, as before.
// CHECK-LABEL: func.func @column_max_many(
// CHECK-NOT: workgroup(
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: arith.maximumf
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

func.func @column_max_many(%x: memref<40x6000xf32>, %out: memref<6000xf32>) {
  linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<40x6000xf32>) outs(%out : memref<6000xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// 900 outputs (few): groups of 32 (the least) over 40 steps, strided;
// -inf is maximumf's identity; 8 columns a block, ceil(900 / 8) = 113.
// A group is a warp: its partials are combined by shuffles alone, no
// shared memory, no barrier.
// CHECK-LABEL: func.func @column_max_few(
// CHECK: %[[C113:.*]] = arith.constant 113 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C113]],
// CHECK-NOT: workgroup(
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: scf.for {{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<40x900xf32>
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: arith.maximumf
// CHECK-NOT: gpu.barrier
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

func.func @column_max_few(%x: memref<40x900xf32>, %out: memref<900xf32>) {
  linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<40x900xf32>) outs(%out : memref<900xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// acc - x is not a combiner with an identity: one thread a row.
// CHECK-LABEL: func.func @not_associative(
// CHECK-NOT: workgroup(
// CHECK: arith.subf
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

func.func @not_associative(%x: memref<8x300xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x300xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.subf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 16 steps are too few to share.
// CHECK-LABEL: func.func @short(
// CHECK-NOT: workgroup(
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

func.func @short(%x: memref<8x16xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x16xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two outputs, two shared buffers: a sum of squares (addi, from 0) and a
// minimum (minsi, from INT32_MAX), both through the tree (i32: its last
// five steps by shuffles too).
// CHECK-LABEL: func.func @sum_and_min(
// CHECK: workgroup(%[[S:.*]] : memref<256xi32, #gpu.address_space<workgroup>>, %[[M:.*]] : memref<256xi32, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %c0_i32, %{{.*}} = %c2147483647_i32) -> (i32, i32)
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK: arith.minsi
// CHECK-COUNT-3: arith.minsi
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : i32
// CHECK: arith.addi
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : i32
// CHECK: arith.minsi
// CHECK-COUNT-4: arith.minsi
// CHECK: arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: arith.minsi
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

func.func @sum_and_min(%x: memref<2x4096xi32>, %sum: memref<2xi32>, %min: memref<2xi32>) {
  linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x4096xi32>) outs(%sum, %min : memref<2xi32>, memref<2xi32>) {
  ^bb0(%a: i32, %s: i32, %m: i32):
    %sq = arith.muli %a, %a : i32
    %s2 = arith.addi %s, %sq : i32
    %m2 = arith.minsi %a, %m : i32
    linalg.yield %s2, %m2 : i32, i32
  }
  return
}

// -----

// The fill of the output just before (a row max's -inf, past an op that
// shares no memory with either) folds in: lane 0 combines the fill's value
// with the total, not the output's loaded value, and no launch fills the
// output first. A fill of a whole buffer before a reduction into a view
// of part of it stays a launch of its own.
// CHECK-LABEL: func.func @folded_fill(
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PART:.*]] = memref.subview %arg2
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg4
// CHECK: gpu.terminator
// CHECK: gpu.launch {{.*}} workgroup(%[[SH:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref.load %arg1[
// CHECK: gpu.barrier
// CHECK-NOT: memref.load %arg1[
// CHECK-COUNT-4: gpu.shuffle
// CHECK: gpu.shuffle
// CHECK-NEXT: %[[TOTAL:.*]] = arith.maximumf
// CHECK-NOT: memref.load %arg1[
// CHECK: arith.cmpi eq
// CHECK-NOT: memref.load %arg1[
// CHECK: %[[R:.*]] = arith.maximumf %[[NEGINF]], %[[TOTAL]]
// CHECK-NEXT: memref.store %[[R]], %arg1[
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: gpu.terminator
// CHECK: gpu.launch {{.*}} workgroup(
// CHECK: %[[INIT:.*]] = memref.load %[[PART]]
// CHECK: arith.addf %[[INIT]]
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0) -> (d0)>

func.func @folded_fill(%x: memref<4x300xf32>, %out: memref<4xf32>, %big: memref<8xf32>,
                       %other: memref<16xf32>, %y: memref<16xf32>) {
  %neginf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %part = memref.subview %big[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.fill ins(%neginf : f32) outs(%out : memref<4xf32>)
  linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel"]}
      ins(%other : memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x300xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%big : memref<8xf32>)
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x300xf32>) outs(%part : memref<4xf32, strided<[1]>>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Dynamic sizes (a sequence length): the rows and the steps are counted
// on the host from the operand's dims. The steps being unknown, a warp
// shares each row (8 rows a block, ceil(rows / 8) blocks); every group
// checks that its row exists, the lanes' loop runs to the row's length,
// and the warp's shuffles finish it. The fill before it still folds in:
// the reduction writes every element of the output (its one dim is the
// rows).
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME: %[[X:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[NROWS:.*]] = memref.dim %[[X]], %c0
// CHECK-DAG: %[[NSTEPS:.*]] = memref.dim %[[X]], %c1
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[NROWS]], %c8
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// CHECK-NOT: workgroup
// CHECK: %[[LANE:.*]] = arith.remui %[[TX]], %c32
// CHECK: %[[ROW:.*]] = arith.addi
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %[[ROW]], %[[NROWS]]
// CHECK: scf.if %[[VALID]] -> (f32) {
// CHECK: scf.for %{{.*}} = %[[LANE]] to %[[NSTEPS]] step %{{.*}} iter_args
// CHECK: memref.load %[[X]][%[[ROW]], %{{.*}}] : memref<?x?xf32>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: %[[TOTAL:.*]] = arith.maximumf
// CHECK: scf.if
// CHECK: %[[R:.*]] = arith.maximumf %[[NEGINF]], %[[TOTAL]]
// CHECK: memref.store %[[R]], %[[OUT]][%[[ROW]]] : memref<?xf32>
#id2 = affine_map<(i, k) -> (i, k)>
#row = affine_map<(i, k) -> (i)>
func.func @dynamic_rows(%x: memref<?x?xf32>, %out: memref<?xf32>) {
  %neginf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%neginf : f32) outs(%out : memref<?xf32>)
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  return
}
