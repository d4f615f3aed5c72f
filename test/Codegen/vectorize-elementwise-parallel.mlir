// RUN: kiln-opt %s --kiln-vectorize-elementwise="vector-bits=512 parallel=1" --split-input-file | FileCheck %s

// Which elementwise loops get threads: some tens of thousands of
// elements (2^15), each row counting as 16 at least, since a row costs a
// cache line however short it is.

#id = affine_map<(d0, d1) -> (d0, d1)>

// A pad's column borders: 4096 runs of two elements, 8192 elements but
// 4096 lines.
// CHECK-LABEL: func.func @border_runs(
// CHECK:         scf.for
// CHECK:         } {kiln.parallel}
func.func @border_runs(%buf: memref<4096x2xf32, strided<[30, 1], offset: 29>>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%buf : memref<4096x2xf32, strided<[30, 1], offset: 29>>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The same 8192 elements as 256 whole rows: too little to share.
// CHECK-LABEL: func.func @whole_rows(
// CHECK-NOT:     kiln.parallel
// CHECK:         return
func.func @whole_rows(%buf: memref<256x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%buf : memref<256x32xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// 1024 runs of two: 16384 lines' worth, under the bar.
// CHECK-LABEL: func.func @few_runs(
// CHECK-NOT:     kiln.parallel
// CHECK:         return
func.func @few_runs(%buf: memref<1024x2xf32, strided<[30, 1], offset: 29>>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%buf : memref<1024x2xf32, strided<[30, 1], offset: 29>>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// 2048 elements, each through two exponentials (math ops count 8 plain
// elements each): worth two threads, as an LSTM's gates over [8, 256].
// The same elements through an add alone are not (@cheap_body).
// CHECK-LABEL: func.func @math_body(
// CHECK:         math.exp
// CHECK:         } {kiln.parallel}
func.func @math_body(%x: memref<8x256xf32>, %y: memref<8x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x256xf32>) outs(%y : memref<8x256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.exp %i : f32
    %t = math.tanh %e : f32
    linalg.yield %t : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @cheap_body(
// CHECK-NOT:     kiln.parallel
// CHECK:         return
func.func @cheap_body(%x: memref<8x256xf32>, %y: memref<8x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x256xf32>) outs(%y : memref<8x256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = arith.addf %i, %i : f32
    linalg.yield %e : f32
  }
  return
}
