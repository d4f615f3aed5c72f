// RUN: kiln-opt %s --kiln-vectorize-contractions="vector-bits=256 vector-registers=16 prefetch-distance=8" --canonicalize --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-vectorize-contractions="vector-bits=256 vector-registers=16" --canonicalize --split-input-file | FileCheck %s --check-prefix=NONE
// Software prefetches in the kernels: an operand that is not packed and
// jumps 1 KiB or more per step of the innermost reduction loop (a 1x1
// conv's activations, one input channel after the other) is prefetched
// eight steps ahead, the step clamped to the loop's last. Without the
// option, no prefetches.

// out[k, p] += w[k, c] * x[c, p]: x's rows are 512 floats (2 KiB) apart.
// Its two row vectors per step (16 floats) are one cache line: one
// prefetch. w moves 4 bytes per step: none.
#w = affine_map<(k, c, p) -> (k, c)>
#x = affine_map<(k, c, p) -> (c, p)>
#y = affine_map<(k, c, p) -> (k, p)>
// CHECK-LABEL: func.func @far_rows(
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<6x32xf32>, %[[X:[a-z0-9]+]]: memref<32x512xf32>
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C31:.+]] = arith.constant 31 : index
// CHECK: scf.for %[[C:[a-z0-9]+]] = {{.*}} iter_args
// CHECK: %[[NEXT:.+]] = arith.addi %[[C]], %[[C8]] : index
// CHECK: %[[AHEAD:.+]] = arith.minsi %[[NEXT]], %[[C31]] : index
// CHECK: memref.prefetch %[[X]][%[[AHEAD]], %{{.+}}], read, locality<3>, data : memref<32x512xf32>
// CHECK-NOT: memref.prefetch
// CHECK: arith.mulf
// NONE-LABEL: func.func @far_rows(
// NONE-NOT: memref.prefetch
func.func @far_rows(%w: memref<6x32xf32>, %x: memref<32x512xf32>, %y: memref<6x512xf32>) {
  linalg.generic {indexing_maps = [#w, #x, #y], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<6x32xf32>, memref<32x512xf32>) outs(%y : memref<6x512xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Rows 64 floats (256 bytes) apart: the hardware follows them; no prefetch.
#w = affine_map<(k, c, p) -> (k, c)>
#x = affine_map<(k, c, p) -> (c, p)>
#y = affine_map<(k, c, p) -> (k, p)>
// CHECK-LABEL: func.func @near_rows(
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @near_rows(%w: memref<6x32xf32>, %x: memref<32x64xf32>, %y: memref<6x64xf32>) {
  linalg.generic {indexing_maps = [#w, #x, #y], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %x : memref<6x32xf32>, memref<32x64xf32>) outs(%y : memref<6x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The column operand far apart (x[p, c] broadcast, one row of 512 floats
// per step); its 6 tile rows are adjacent: the first and the last are
// prefetched.
#x = affine_map<(p, c, k) -> (c, p)>
#w = affine_map<(p, c, k) -> (c, k)>
#y = affine_map<(p, c, k) -> (p, k)>
// CHECK-LABEL: func.func @far_columns(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<32x512xf32>
// CHECK: scf.for
// CHECK: arith.minsi
// CHECK-COUNT-2: memref.prefetch %[[X]]
// CHECK-NOT: memref.prefetch
// CHECK: arith.mulf
func.func @far_columns(%x: memref<32x512xf32>, %w: memref<32x16xf32>, %y: memref<512x16xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<32x512xf32>, memref<32x16xf32>) outs(%y : memref<512x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
