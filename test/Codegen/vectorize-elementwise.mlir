// RUN: kiln-opt %s --kiln-vectorize-elementwise="vector-bits=256" --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-vectorize-elementwise --split-input-file | FileCheck %s --check-prefix=NONE

// An innermost sum (softmax's denominator: exp fused in) over 20 elements
// with 8 lanes: two full vectors in a loop carrying the partial sums, a
// tail of 4 lanes whose other lanes keep the identity (-0.0), one
// reduction across lanes, and one combine with the output.
#x = affine_map<(i, j) -> (i, j)>
#y = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @sum_exp(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<3x20xf32>, %[[Y:[a-z0-9]+]]: memref<3xf32>)
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[ID:.+]] = arith.constant dense<-0.000000e+00> : vector<8xf32>
// CHECK: %[[PART:.+]] = scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[ID]]) -> (vector<8xf32>) {
// CHECK: %[[V:.+]] = vector.load %[[X]][%[[I]], %[[J]]] : memref<3x20xf32>, vector<8xf32>
// CHECK: %[[E:.+]] = math.exp %[[V]] : vector<8xf32>
// CHECK: %[[S:.+]] = arith.addf %[[ACC]], %[[E]] : vector<8xf32>
// CHECK: scf.yield %[[S]]
// CHECK: vector.maskedload %[[X]]
// CHECK: %[[TAIL:.+]] = arith.addf %[[PART]],
// CHECK: %[[KEPT:.+]] = arith.select %{{.+}}, %[[TAIL]], %[[PART]] : vector<8xi1>, vector<8xf32>
// CHECK: %[[R:.+]] = vector.reduction <add>, %[[KEPT]] fastmath<reassoc> : vector<8xf32> into f32
// CHECK: %[[OLD:.+]] = memref.load %[[Y]][%[[I]]]
// CHECK: %[[NEW:.+]] = arith.addf %[[OLD]], %[[R]] : f32
// CHECK: memref.store %[[NEW]], %[[Y]][%[[I]]]
// CHECK-NOT: linalg.generic
// NONE-LABEL: func.func @sum_exp(
// NONE: linalg.generic
func.func @sum_exp(%x: memref<3x20xf32>, %y: memref<3xf32>) {
  linalg.generic {indexing_maps = [#x, #y], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x20xf32>) outs(%y : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    %s = arith.addf %out, %e : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A max with the output as the combiner's second operand: the identity is
// -inf and the lanes reduce with maximumf (exact).
#x = affine_map<(i, j) -> (i, j)>
#y = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @max(
// CHECK: arith.constant dense<0xFF800000> : vector<8xf32>
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: vector.reduction <maximumf>
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f32
func.func @max(%x: memref<3x16xf32>, %y: memref<3xf32>) {
  linalg.generic {indexing_maps = [#x, #y], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x16xf32>) outs(%y : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Not a combine of the output with the inputs (the output is used twice):
// left for the scalar loops.
#x = affine_map<(i, j) -> (i, j)>
#y = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @not_a_combine(
// CHECK: linalg.generic
func.func @not_a_combine(%x: memref<3x16xf32>, %y: memref<3xf32>) {
  linalg.generic {indexing_maps = [#x, #y], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x16xf32>) outs(%y : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %out, %out : f32
    %s = arith.addf %m, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// LayerNorm's last step: the row's statistics are loaded once per row and
// 1 / sqrt(var + eps) is computed once, outside the vector loop, which
// only multiplies and adds.
#x = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
#g = affine_map<(i, j) -> (j)>
// CHECK-LABEL: func.func @normalize(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x32xf32>, %[[V:[a-z0-9]+]]: memref<4xf32>
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: memref.load %[[V]][%[[I]]]
// CHECK: math.sqrt %{{.+}} : vector<8xf32>
// CHECK: arith.divf %{{.+}} : vector<8xf32>
// CHECK: scf.for
// CHECK-NOT: math.sqrt
// CHECK-NOT: arith.divf
// CHECK: vector.store
func.func @normalize(%x: memref<4x32xf32>, %var: memref<4xf32>, %g: memref<32xf32>, %y: memref<4x32xf32>) {
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#x, #r, #g, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %var, %g : memref<4x32xf32>, memref<4xf32>, memref<32xf32>) outs(%y : memref<4x32xf32>) {
  ^bb0(%in: f32, %v: f32, %gamma: f32, %out: f32):
    %0 = arith.addf %v, %eps : f32
    %1 = math.sqrt %0 : f32
    %2 = arith.divf %one, %1 : f32
    %3 = arith.mulf %in, %2 : f32
    %4 = arith.mulf %3, %gamma : f32
    linalg.yield %4 : f32
  }
  return
}

// -----

// A stride-2 pooling window: vectors along the output row (ow, 10 = one
// vector of 8 and a tail of 2), the window loops inside each step carrying
// the output tile, every 2nd element of the input picked from a wide
// load (15 lanes of 16: the 8th element needed is the 15th) by one
// shuffle. Each output element sees the window in the generic's order.
#x = affine_map<(c, oh, ow, kh, kw) -> (c, oh * 2 + kh, ow * 2 + kw)>
#k = affine_map<(c, oh, ow, kh, kw) -> (kh, kw)>
#y = affine_map<(c, oh, ow, kh, kw) -> (c, oh, ow)>
// CHECK-LABEL: func.func @window(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x9x21xf32>, %[[K:[a-z0-9]+]]: memref<3x3xf32>, %[[Y:[a-z0-9]+]]: memref<2x4x10xf32>)
// CHECK: scf.for %[[C:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: scf.for %[[OH:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[INIT:.+]] = vector.load %[[Y]][%[[C]], %[[OH]], %{{.+}}] : memref<2x4x10xf32>, vector<8xf32>
// CHECK: scf.for %{{.+}} = {{.+}} iter_args(%[[A:.+]] = %[[INIT]]) -> (vector<8xf32>)
// CHECK: scf.for %{{.+}} = {{.+}} iter_args(%[[B:.+]] = %[[A]]) -> (vector<8xf32>)
// CHECK-NOT: vector.gather
// CHECK: %[[MASK:.+]] = arith.constant dense<[true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false]> : vector<16xi1>
// CHECK: %[[W:.+]] = vector.maskedload %[[X]][%[[C]], %{{.+}}, %{{.+}}], %[[MASK]], %{{.+}} : memref<2x9x21xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: %[[V:.+]] = vector.shuffle %[[W]], %[[W]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// CHECK: arith.maximumf %[[B]], %[[V]] : vector<8xf32>
// CHECK: vector.store %{{.+}}, %[[Y]][%[[C]], %[[OH]], %{{.+}}] : memref<2x4x10xf32>, vector<8xf32>
// CHECK: vector.maskedload %[[Y]]
// CHECK: vector.maskedstore %[[Y]]
// CHECK-NOT: linalg.generic
func.func @window(%x: memref<2x9x21xf32>, %k: memref<3x3xf32>, %y: memref<2x4x10xf32>) {
  linalg.generic {indexing_maps = [#x, #k, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %k : memref<2x9x21xf32>, memref<3x3xf32>) outs(%y : memref<2x4x10xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// The same window with a dynamic output row (kiln-strip-dynamic-dims
// leaves a pool's output columns whole): full vectors to the row's size
// rounded down to 8, then the lanes left under a mask made at run time;
// the wide load of that step is masked to end at the last element the
// lanes left need (wide lane j read when lane ceil(j / 2) is set, from a
// shuffle of the mask with all-false lanes).
#x = affine_map<(c, oh, ow, kh, kw) -> (c, oh * 2 + kh, ow * 2 + kw)>
#k = affine_map<(c, oh, ow, kh, kw) -> (kh, kw)>
#y = affine_map<(c, oh, ow, kh, kw) -> (c, oh, ow)>
// CHECK-LABEL: func.func @dynamic_window(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x9x?xf32>, %[[K:[a-z0-9]+]]: memref<3x3xf32>, %[[Y:[a-z0-9]+]]: memref<2x4x?xf32>)
// CHECK: %[[N:.+]] = memref.dim %[[Y]], %c2
// CHECK: %[[REM:.+]] = arith.remui %[[N]], %c8
// CHECK: %[[WHOLE:.+]] = arith.subi %[[N]], %[[REM]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[WHOLE]] step %c8
// CHECK: vector.maskedload %[[X]]{{.+}} : memref<2x9x?xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: vector.store %{{.+}}, %[[Y]]
// CHECK: %[[LEFT:.+]] = arith.subi %[[N]], %[[WHOLE]]
// CHECK: scf.if
// CHECK: %[[TAIL:.+]] = vector.create_mask %[[LEFT]] : vector<8xi1>
// CHECK: vector.maskedload %[[Y]]{{.+}}, %[[TAIL]]
// CHECK: %[[WIDE:.+]] = vector.shuffle %[[TAIL]], %{{.+}} [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8] : vector<8xi1>, vector<8xi1>
// CHECK: %[[W:.+]] = vector.maskedload %[[X]]{{.+}}, %[[WIDE]], %{{.+}} : memref<2x9x?xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: vector.shuffle %[[W]], %[[W]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK: vector.maskedstore %[[Y]]{{.+}}, %[[TAIL]]
// CHECK-NOT: linalg.generic
// NONE-LABEL: func.func @dynamic_window(
// NONE: linalg.generic
func.func @dynamic_window(%x: memref<2x9x?xf32>, %k: memref<3x3xf32>, %y: memref<2x4x?xf32>) {
  linalg.generic {indexing_maps = [#x, #k, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %k : memref<2x9x?xf32>, memref<3x3xf32>) outs(%y : memref<2x4x?xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A copy of stride-2 windows (a strided conv's im2col: [C, KH, KW, OH,
// OW], every loop parallel): vectors along ow, every 2nd input element
// picked from a wide load by one shuffle, no load of the output it
// overwrites; an input that shares the output's buffer stays scalar.
#xi = affine_map<(c, kh, kw, oh, ow) -> (c, kh + oh * 2, kw + ow * 2)>
#yi = affine_map<(c, kh, kw, oh, ow) -> (c, kh, kw, oh, ow)>
// CHECK-LABEL: func.func @im2col(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x9x21xf32>, %[[Y:[a-z0-9]+]]: memref<2x3x3x4x8xf32>)
// CHECK-NOT: memref.load
// CHECK: %[[W:.+]] = vector.maskedload %[[X]]{{.+}} : memref<2x9x21xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: %[[V:.+]] = vector.shuffle %[[W]], %[[W]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// CHECK: vector.store %[[V]], %[[Y]]
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @im2col_aliased(
// CHECK: linalg.generic
func.func @im2col(%x: memref<2x9x21xf32>, %y: memref<2x3x3x4x8xf32>) {
  linalg.generic {indexing_maps = [#xi, #yi], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x9x21xf32>) outs(%y : memref<2x3x3x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}
func.func @im2col_aliased(%y: memref<2x3x3x4x8xf32>) {
  %x = memref.collapse_shape %y [[0], [1, 2, 3], [4]] : memref<2x3x3x4x8xf32> into memref<2x36x8xf32>
  %s = memref.subview %x[0, 0, 0] [2, 9, 8] [1, 1, 1] : memref<2x36x8xf32> to memref<2x9x8xf32, strided<[288, 8, 1]>>
  linalg.generic {indexing_maps = [affine_map<(c, kh, kw, oh, ow) -> (c, kh + oh * 2, ow)>, #yi], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%s : memref<2x9x8xf32, strided<[288, 8, 1]>>) outs(%y : memref<2x3x3x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// The same window after a -inf fill of its output (a max pool): the tiles
// start from -inf instead of loading the output, and the fill goes.
#x = affine_map<(c, oh, ow, kh, kw) -> (c, oh * 2 + kh, ow * 2 + kw)>
#k = affine_map<(c, oh, ow, kh, kw) -> (kh, kw)>
#y = affine_map<(c, oh, ow, kh, kw) -> (c, oh, ow)>
// CHECK-LABEL: func.func @filled_window(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x9x21xf32>, %[[K:[a-z0-9]+]]: memref<3x3xf32>, %[[Y:[a-z0-9]+]]: memref<2x4x10xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NOT: vector.load %[[Y]]
// CHECK: %[[INIT:.+]] = vector.broadcast %[[NEG]] : f32 to vector<8xf32>
// CHECK: scf.for %{{.+}} = {{.+}} iter_args(%{{.+}} = %[[INIT]]) -> (vector<8xf32>)
// CHECK: vector.store %{{.+}}, %[[Y]][
// CHECK-NOT: vector.maskedload %[[Y]]
// CHECK: vector.maskedstore %[[Y]]
// CHECK-NOT: linalg
func.func @filled_window(%x: memref<2x9x21xf32>, %k: memref<3x3xf32>, %y: memref<2x4x10xf32>) {
  %neg = arith.constant 0xFF800000 : f32
  linalg.fill ins(%neg : f32) outs(%y : memref<2x4x10xf32>)
  linalg.generic {indexing_maps = [#x, #k, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %k : memref<2x9x21xf32>, memref<3x3xf32>) outs(%y : memref<2x4x10xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A window whose output map has a constant index writes only part of its
// output (row 0 of 2): the rest keeps the fill, which stays.
#x = affine_map<(c, ow, kw) -> (c, ow * 2 + kw)>
#k = affine_map<(c, ow, kw) -> (kw)>
#y = affine_map<(c, ow, kw) -> (c, 0, ow)>
// CHECK-LABEL: func.func @partly_written_window(
// CHECK: linalg.fill
// CHECK: vector.store
func.func @partly_written_window(%x: memref<2x21xf32>, %k: memref<3xf32>, %y: memref<2x2x10xf32>) {
  %neg = arith.constant 0xFF800000 : f32
  linalg.fill ins(%neg : f32) outs(%y : memref<2x2x10xf32>)
  linalg.generic {indexing_maps = [#x, #k, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %k : memref<2x21xf32>, memref<3xf32>) outs(%y : memref<2x2x10xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A transpose: the output moves along its last dim j, the input has j in
// its first index (9 floats apart) and the output's i last. It runs in
// blocks of 8 x 8 of (i, j): 8 rows of the input loaded along i,
// transposed in three stages of 8 shuffles, 8 stores along j; then the
// last value of i (9 = 8 + 1) as a block of one-lane rows.
#x = affine_map<(i, j) -> (j, i)>
#y = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8x9xf32>, %[[Y:[a-z0-9]+]]: memref<9x8xf32>)
// CHECK-NOT: vector.gather
// CHECK-COUNT-8: vector.load %[[X]]
// CHECK-COUNT-24: vector.shuffle
// CHECK-COUNT-8: vector.store %{{.+}}, %[[Y]]
// CHECK-COUNT-8: vector.maskedload %[[X]]
// CHECK-COUNT-24: vector.shuffle
// CHECK: vector.store %{{.+}}, %[[Y]]
// CHECK-NOT: vector.store
// CHECK-NOT: vector.gather
func.func @transpose(%x: memref<8x9xf32>, %y: memref<9x8xf32>) {
  linalg.generic {indexing_maps = [#x, #y], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x9xf32>) outs(%y : memref<9x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A transpose whose output has only 3 rows: too few for blocks of 8, so
// the input (a view with rows 5 floats apart) is gathered along j, 8
// lanes at a time.
#x = affine_map<(i, j) -> (j, i)>
#y = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @transpose_gathered(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<16x3xf32, strided<[5, 1]>>, %[[Y:[a-z0-9]+]]: memref<3x16xf32>)
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[OFF:.+]] = arith.constant dense<[0, 5, 10, 15, 20, 25, 30, 35]> : vector<8xi32>
// CHECK: %[[V:.+]] = vector.gather %[[X]][%{{.+}}, %[[I]]] [%[[OFF]]]
// CHECK: vector.store %[[V]], %[[Y]][%[[I]], %{{.+}}] : memref<3x16xf32>, vector<8xf32>
func.func @transpose_gathered(%x: memref<16x3xf32, strided<[5, 1]>>, %y: memref<3x16xf32>) {
  linalg.generic {indexing_maps = [#x, #y], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x3xf32, strided<[5, 1]>>) outs(%y : memref<3x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A reduction that also reads its output as an input: the scalar loops
// see each partial update, a vector of partials would not. Left alone.
#o = affine_map<(i, j) -> (i)>
#x = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @reads_its_output(
// CHECK: linalg.generic
func.func @reads_its_output(%x: memref<3x32xf32>, %y: memref<3xf32>) {
  linalg.generic {indexing_maps = [#o, #x, #o], iterator_types = ["parallel", "reduction"]}
      ins(%y, %x : memref<3xf32>, memref<3x32xf32>) outs(%y : memref<3xf32>) {
  ^bb0(%prev: f32, %in: f32, %out: f32):
    %m = arith.mulf %prev, %in : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A global pool over 3x3 maps: rows of 3 are too short for vectors of 8,
// so the two reduction dims are collapsed into one of 9 (one vector and a
// masked tail), the input viewed as [4, 9].
#in = affine_map<(c, h, w) -> (c, h, w)>
#out = affine_map<(c, h, w) -> (c)>
// CHECK-LABEL: func.func @short_rows(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x3x3xf32>
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[X]] {{\[\[}}0], [1, 2]] : memref<4x3x3xf32> into memref<4x9xf32>
// CHECK: vector.load %[[FLAT]][%{{.+}}, %{{.+}}] : memref<4x9xf32>, vector<8xf32>
// CHECK: vector.maskedload %[[FLAT]]
// CHECK: vector.reduction <add>
// CHECK-NOT: linalg.generic
// NONE-LABEL: func.func @short_rows(
// NONE: linalg.generic
func.func @short_rows(%x: memref<4x3x3xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : memref<4x3x3xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Stride-2 windows (a Winograd conv's taps and the parities of its
// output), rank-reducing: read through the buffer they view as a wide
// load up to the last element needed (15 of 16 lanes) and a shuffle of
// every other lane; written as a shuffle spreading the lanes two apart
// and a store masked to every other lane (10 columns: one vector of 8,
// then 2 lanes of the next).
#id = affine_map<(c, w) -> (c, w)>
// CHECK-LABEL: func.func @windows(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x3x21xf32>, %[[Y:[a-z0-9]+]]: memref<1x3x20xf32>)
// CHECK: vector.maskedload %[[X]][%{{.+}}, %{{.+}}, %{{.+}}], %{{.+}}, %{{.+}} : memref<1x3x21xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK: %[[SPREAD:.+]] = vector.shuffle %{{.+}}, %{{.+}} [0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0]
// CHECK: %[[EVERY:.+]] = arith.constant dense<[true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false]> : vector<16xi1>
// CHECK: vector.maskedstore %[[Y]][%{{.+}}, %{{.+}}, %{{.+}}], %[[EVERY]], %[[SPREAD]]
// CHECK: arith.constant dense<[true, false, true, false, false, false, false, false, false, false, false, false, false, false, false, false]> : vector<16xi1>
// CHECK-NOT: linalg.generic
// NONE-LABEL: func.func @windows(
// NONE: linalg.generic
func.func @windows(%x: memref<1x3x21xf32>, %y: memref<1x3x20xf32>) {
  %in = memref.subview %x[0, 0, 1] [1, 3, 10] [1, 1, 2] : memref<1x3x21xf32> to memref<3x10xf32, strided<[21, 2], offset: 1>>
  %out = memref.subview %y[0, 0, 1] [1, 3, 10] [1, 1, 2] : memref<1x3x20xf32> to memref<3x10xf32, strided<[20, 2], offset: 1>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<3x10xf32, strided<[21, 2], offset: 1>>)
      outs(%out : memref<3x10xf32, strided<[20, 2], offset: 1>>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// float16 in and out (a float16 model's ReLU, computed in f32): loaded as
// vector<8xf16>, extended, rounded back and stored as vector<8xf16>; a
// bfloat16 bias broadcast along the rows stays a scalar.
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @half_relu(
// CHECK: memref.load %arg1[%{{.*}}] : memref<4xbf16>
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}] : memref<4x16xf16>, vector<8xf16>
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<4x16xf16>, vector<8xf16>
func.func @half_relu(%x: memref<4x16xf16>, %b: memref<4xbf16>, %y: memref<4x16xf16>) {
  linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<4x16xf16>, memref<4xbf16>) outs(%y : memref<4x16xf16>) {
  ^bb0(%in: f16, %bias: bf16, %out: f16):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %bias : bf16 to f32
    %2 = arith.addf %0, %1 : f32
    %zero = arith.constant 0.0 : f32
    %3 = arith.maximumf %2, %zero : f32
    %4 = arith.truncf %3 : f32 to f16
    linalg.yield %4 : f16
  }
  return
}

// -----

// A dynamic innermost dim (attention's keys over a dynamic length), with
// a bias broadcast along it: its size read once, whole vectors in a loop,
// then, if lanes are left, one step under a mask of them.
#row = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @dynamic_row(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x?xf32>, %[[B:[a-z0-9]+]]: memref<4xf32>, %[[Y:[a-z0-9]+]]: memref<4x?xf32>)
// CHECK: %[[N:.+]] = memref.dim %[[X]], %c1
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: memref.load %[[B]][%[[I]]]
// CHECK: %[[REM:.+]] = arith.remui %[[N]], %c8
// CHECK: %[[WHOLE:.+]] = arith.subi %[[N]], %[[REM]]
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %[[WHOLE]] step %c8 {
// CHECK: vector.load %[[X]][%[[I]], %[[J]]] : memref<4x?xf32>, vector<8xf32>
// CHECK: vector.store %{{.+}}, %[[Y]][%[[I]], %[[J]]] : memref<4x?xf32>, vector<8xf32>
// CHECK: %[[LEFT:.+]] = arith.subi %[[N]], %[[WHOLE]]
// CHECK: %[[ANY:.+]] = arith.cmpi ne, %[[LEFT]], %c0
// CHECK: scf.if %[[ANY]] {
// CHECK: %[[MASK:.+]] = vector.create_mask %[[LEFT]] : vector<8xi1>
// CHECK: vector.maskedload %[[X]][%[[I]], %[[WHOLE]]], %[[MASK]]
// CHECK: vector.maskedstore %[[Y]][%[[I]], %[[WHOLE]]], %[[MASK]]
// CHECK-NOT: linalg.generic
func.func @dynamic_row(%x: memref<4x?xf32>, %b: memref<4xf32>, %y: memref<4x?xf32>) {
  linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<4x?xf32>, memref<4xf32>) outs(%y : memref<4x?xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An innermost sum over a dynamic dim (softmax's denominator over its
// keys): the whole vectors carry the partial sums, then the lanes left
// are added under their mask, the others keeping the sums so far.
#x = affine_map<(i, j) -> (i, j)>
#y = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @dynamic_sum_exp(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<3x?xf32>, %[[Y:[a-z0-9]+]]: memref<3xf32>)
// CHECK: %[[N:.+]] = memref.dim %[[X]], %c1
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[PART:.+]] = scf.for %{{.+}} = %{{.+}} to %[[WHOLE:.+]] step %c8 iter_args(%{{.+}}) -> (vector<8xf32>) {
// CHECK: vector.load %[[X]]
// CHECK: math.exp
// CHECK: %[[LEFT:.+]] = arith.subi %[[N]], %[[WHOLE]]
// CHECK: %[[SUM:.+]] = scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK: %[[MASK:.+]] = vector.create_mask %[[LEFT]] : vector<8xi1>
// CHECK: vector.maskedload %[[X]][%[[I]], %[[WHOLE]]], %[[MASK]]
// CHECK: %[[TAIL:.+]] = arith.addf %[[PART]],
// CHECK: %[[KEPT:.+]] = arith.select %[[MASK]], %[[TAIL]], %[[PART]] : vector<8xi1>, vector<8xf32>
// CHECK: scf.yield %[[KEPT]]
// CHECK: } else {
// CHECK: scf.yield %[[PART]]
// CHECK: vector.reduction <add>, %[[SUM]]
// CHECK: memref.store %{{.+}}, %[[Y]][%[[I]]]
// CHECK-NOT: linalg.generic
func.func @dynamic_sum_exp(%x: memref<3x?xf32>, %y: memref<3xf32>) {
  linalg.generic {indexing_maps = [#x, #y], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x?xf32>) outs(%y : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    %s = arith.addf %out, %e : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A dynamic innermost dim that an input reads across (a transpose into
// it), or a dynamic outer dim: left to the scalar loops.
#t = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @dynamic_refused(
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @dynamic_refused(%x: memref<?x4xf32>, %y: memref<4x?xf32>, %z: memref<?x8xf32>, %w: memref<?x8xf32>) {
  linalg.generic {indexing_maps = [#t, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x4xf32>) outs(%y : memref<4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<?x8xf32>) outs(%w : memref<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  return
}
