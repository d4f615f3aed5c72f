// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// Index-computing ops (Indexing.cpp): ArgMax/ArgMin and Hardmax reduce
// with a 2-result generic that carries the best value and its i64 index;
// Trilu, OneHot, EyeLike, Range and CumSum compare
// linalg.index positions; DepthToSpace/SpaceToDepth reshape, transpose and
// reshape; HannWindow is a constant; ReverseSequence reads x at a selected
// time. Every index read from data has a negative value wrapped and is
// clamped into the dim. Gather* and Scatter* are in gather-scatter.mlir.

// select_last_index: ties go to the later element (oge); the first element
// always wins (the index starts at -1), so an all -inf row gives 0.
// keepdims=0: the index result is returned as it is.
// CHECK-LABEL: func.func @argmax_select_last(
// CHECK-SAME: %[[X:.*]]: tensor<3x4x5xf32>) -> tensor<3x4xi64>
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[VALS:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK: %[[UNSET:.*]] = arith.constant -1 : i64
// CHECK: %[[IDXS:.*]] = linalg.fill ins(%[[UNSET]] : i64) outs(%{{.*}} : tensor<3x4xi64>)
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<3x4x5xf32>) outs(%[[VALS]], %[[IDXS]] : tensor<3x4xf32>, tensor<3x4xi64>)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[BEST:.*]]: f32, %[[BESTIDX:.*]]: i64):
// CHECK: %[[POS:.*]] = linalg.index 2 : index
// CHECK: %[[I:.*]] = arith.index_cast %[[POS]] : index to i64
// CHECK: %[[GE:.*]] = arith.cmpf oge, %[[V]], %[[BEST]] : f32
// CHECK: %[[FIRST:.*]] = arith.cmpi slt, %[[BESTIDX]], %{{.*}} : i64
// CHECK: %[[TAKE:.*]] = arith.ori %[[GE]], %[[FIRST]] : i1
// CHECK: %[[NV:.*]] = arith.select %[[TAKE]], %[[V]], %[[BEST]] : f32
// CHECK: %[[NI:.*]] = arith.select %[[TAKE]], %[[I]], %[[BESTIDX]] : i64
// CHECK: linalg.yield %[[NV]], %[[NI]] : f32, i64
// CHECK: return %[[R]]#1 : tensor<3x4xi64>
func.func @argmax_select_last(%x: tensor<3x4x5xf32>) -> tensor<3x4xi64> {
  %0 = "onnx.ArgMax"(%x) <{axis = -1 : i64, keepdims = 0 : i64, select_last_index = 1 : i64}> : (tensor<3x4x5xf32>) -> tensor<3x4xi64>
  return %0 : tensor<3x4xi64>
}

// -----

// ArgMin of ui8: the value starts at the highest ui8 (255, i.e. -1 in the
// signless i8), compared unsigned and strictly (first index); keepdims=1
// reshapes the index result.
// CHECK-LABEL: func.func @argmin_ui8_keepdims(
// CHECK-SAME: tensor<4x6xi8>) -> tensor<4x1xi64>
// CHECK: %[[HIGH:.*]] = arith.constant -1 : i8
// CHECK: linalg.fill ins(%[[HIGH]] : i8) outs(%{{.*}} : tensor<4xi8>)
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i8
// CHECK: tensor.expand_shape %[[R]]#1 {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xi64> into tensor<4x1xi64>
func.func @argmin_ui8_keepdims(%x: tensor<4x6xui8>) -> tensor<4x1xi64> {
  %0 = "onnx.ArgMin"(%x) <{axis = 1 : i64, keepdims = 1 : i64, select_last_index = 0 : i64}> : (tensor<4x6xui8>) -> tensor<4x1xi64>
  return %0 : tensor<4x1xi64>
}

// -----

// Hardmax: the first argmax (ogt) along the axis, kept as a size-1 dim,
// then a generic over the input shape that yields 1 where the position
// along the axis equals it and 0 elsewhere.
// CHECK-LABEL: func.func @hardmax(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] :
// CHECK: arith.cmpf ogt
// CHECK: %[[KEPT:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 3, 1] : tensor<6xi64> into tensor<2x3x1xi64>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[KEPT]] : tensor<2x3x1xi64>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK: ^bb0(%[[ARG:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[POS:.*]] = linalg.index 2 : index
// CHECK: %[[I:.*]] = arith.index_cast %[[POS]] : index to i64
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[I]], %[[ARG]] : i64
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.select %[[HIT]], %[[ONE]], %[[ZERO]] : f32
func.func @hardmax(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "onnx.Hardmax"(%x) <{axis = -1 : i64}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Trilu, lower, k from an operand: keep x where j - i <= k over the last
// two dims, 0 elsewhere.
// CHECK-LABEL: func.func @trilu_lower_k(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x5xf32>, %[[KT:.*]]: tensor<i64>)
// CHECK: %[[KV:.*]] = tensor.extract %[[KT]][] : tensor<i64>
// CHECK: %[[K:.*]] = arith.index_cast %[[KV]] : i64 to index
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<2x4x5xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[J:.*]] = linalg.index 2 : index
// CHECK: %[[DIFF:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK: %[[KEEP:.*]] = arith.cmpi sle, %[[DIFF]], %[[K]] : index
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.select %[[KEEP]], %[[IN]], %[[ZERO]] : f32
func.func @trilu_lower_k(%x: tensor<2x4x5xf32>, %k: tensor<i64>) -> tensor<2x4x5xf32> {
  %0 = "onnx.Trilu"(%x, %k) <{upper = 0 : i64}> : (tensor<2x4x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

// Upper without k: j - i >= 0.
// CHECK-LABEL: func.func @trilu_upper(
// CHECK: %[[K:.*]] = arith.constant 0 : index
// CHECK: %[[DIFF:.*]] = arith.subi
// CHECK: arith.cmpi sge, %[[DIFF]], %[[K]] : index
// CHECK: arith.constant 0 : i32
func.func @trilu_upper(%x: tensor<4x5xi32>) -> tensor<4x5xi32> {
  %none = onnx.NoValue
  %0 = "onnx.Trilu"(%x, %none) <{upper = 1 : i64}> : (tensor<4x5xi32>, none) -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}

// -----

// OneHot with axis 1: off and on are read from values once; the indices
// map skips the new dim, a negative index is wrapped by the depth (4), and
// one out of range matches no position (no clamp).
// CHECK-LABEL: func.func @onehot(
// CHECK-SAME: %[[IDX:.*]]: tensor<2x3xi64>, %[[VALS:.*]]: tensor<2xf32>) -> tensor<2x4x3xf32>
// CHECK: %[[OFF:.*]] = tensor.extract %[[VALS]][%{{.*}}] : tensor<2xf32>
// CHECK: %[[ON:.*]] = tensor.extract %[[VALS]][%{{.*}}] : tensor<2xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[IDX]] : tensor<2x3xi64>)
// CHECK: ^bb0(%[[I:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[DEPTH:.*]] = arith.constant 4 : i64
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : i64
// CHECK: %[[UP:.*]] = arith.addi %[[I]], %[[DEPTH]] : i64
// CHECK: %[[WRAPPED:.*]] = arith.select %[[NEG]], %[[UP]], %[[I]] : i64
// CHECK: %[[POS:.*]] = linalg.index 1 : index
// CHECK: %[[P:.*]] = arith.index_cast %[[POS]] : index to i64
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[WRAPPED]], %[[P]] : i64
// CHECK: arith.select %[[HIT]], %[[ON]], %[[OFF]] : f32
func.func @onehot(%i: tensor<2x3xi64>, %v: tensor<2xf32>) -> tensor<2x4x3xf32> {
  %depth = "onnx.Constant"() <{value = dense<4> : tensor<i64>}> : () -> tensor<i64>
  %0 = "onnx.OneHot"(%i, %depth, %v) <{axis = 1 : i64}> : (tensor<2x3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// EyeLike with a dtype and k = -2: an input-less generic yielding 1 where
// j - i == k.
// CHECK-LABEL: func.func @eyelike(
// CHECK-SAME: -> tensor<3x5xi32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<3x5xi32>)
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[DIFF:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK: %[[K:.*]] = arith.constant -2 : index
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[DIFF]], %[[K]] : index
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: arith.select %[[HIT]], %[[ONE]], %[[ZERO]] : i32
func.func @eyelike(%x: tensor<3x5xf32>) -> tensor<3x5xi32> {
  %0 = "onnx.EyeLike"(%x) <{dtype = 6 : i64, k = -2 : i64}> : (tensor<3x5xf32>) -> tensor<3x5xi32>
  return %0 : tensor<3x5xi32>
}

// -----

// Range with start and delta known only at run time (the length comes
// from the result type): start + i * delta.
// CHECK-LABEL: func.func @range_f32(
// CHECK-SAME: %[[S:.*]]: tensor<f32>, %[[D:.*]]: tensor<f32>) -> tensor<5xf32>
// CHECK: %[[START:.*]] = tensor.extract %[[S]][] : tensor<f32>
// CHECK: %[[DELTA:.*]] = tensor.extract %[[D]][] : tensor<f32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%{{.*}} : tensor<5xf32>)
// CHECK: %[[POS:.*]] = linalg.index 0 : index
// CHECK: %[[I:.*]] = arith.index_cast %[[POS]] : index to i64
// CHECK: %[[FI:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: %[[STEP:.*]] = arith.mulf %[[FI]], %[[DELTA]] : f32
// CHECK: arith.addf %[[START]], %[[STEP]] : f32
func.func @range_f32(%s: tensor<f32>, %d: tensor<f32>) -> tensor<5xf32> {
  %l = "onnx.Constant"() <{value = dense<4.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %0 = "onnx.Range"(%s, %l, %d) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Integer Range: the position is truncated to the element type.
// CHECK-LABEL: func.func @range_i32(
// CHECK: arith.trunci %{{.*}} : i64 to i32
// CHECK: arith.muli
// CHECK: arith.addi
func.func @range_i32(%s: tensor<i32>, %d: tensor<i32>) -> tensor<3xi32> {
  %l = "onnx.Constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
  %0 = "onnx.Range"(%s, %l, %d) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// CumSum along axis 1: a fourth loop d3 (the summed position j) replaces
// the axis in x's map and reduces; x[j] counts where j <= i.
// CHECK-LABEL: func.func @cumsum(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<2x3x4xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[TAKE:.*]] = arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK: %[[V:.*]] = arith.select %[[TAKE]], %[[IN]], %{{.*}} : f32
// CHECK: arith.addf %[[ACC]], %[[V]] : f32
func.func @cumsum(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %axis = "onnx.Constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
  %0 = "onnx.CumSum"(%x, %axis) <{exclusive = 0 : i64, reverse = 0 : i64}> : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// exclusive and reverse along axis -1: j > i.
// CHECK-LABEL: func.func @cumsum_exclusive_reverse(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: arith.cmpi sgt, %[[J]], %[[I]] : index
func.func @cumsum_exclusive_reverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %axis = "onnx.Constant"() <{value = dense<-1> : tensor<i64>}> : () -> tensor<i64>
  %0 = "onnx.CumSum"(%x, %axis) <{exclusive = 1 : i64, reverse = 1 : i64}> : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// The axis known only at run time: it is read and wrapped by the rank; j
// runs over the largest dim (an empty tensor<4xf32> gives the loop its
// bound), each element extracts x with the axis's index replaced by j, and
// terms with j past the axis's own size are dropped.
// CHECK-LABEL: func.func @cumsum_runtime_axis(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>, %[[A:.*]]: tensor<i64>)
// CHECK: %[[AV:.*]] = tensor.extract %[[A]][] : tensor<i64>
// CHECK: %[[AX:.*]] = arith.index_cast %[[AV]] : i64 to index
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[AX]], %{{.*}} : index
// CHECK: %[[RANK:.*]] = arith.constant 3 : index
// CHECK: %[[UP:.*]] = arith.addi %[[AX]], %[[RANK]] : index
// CHECK: %[[AXIS:.*]] = arith.select %[[NEG]], %[[UP]], %[[AX]] : index
// CHECK: %[[BOUND:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[BOUND]] : tensor<4xf32>)
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: arith.cmpi eq, %[[AXIS]], %{{.*}} : index
// CHECK: %[[IN_RANGE:.*]] = arith.cmpi sle, %[[J]], %{{.*}} : index
// CHECK: %[[IN_DIM:.*]] = arith.cmpi slt, %[[J]], %{{.*}} : index
// CHECK: %[[TAKE:.*]] = arith.andi %[[IN_RANGE]], %[[IN_DIM]] : i1
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%{{.*}}, %{{.*}}, %{{.*}}] : tensor<2x3x4xf32>
// CHECK: arith.select %[[TAKE]], %[[V]], %{{.*}} : f32
func.func @cumsum_runtime_axis(%x: tensor<2x3x4xf32>, %a: tensor<i64>) -> tensor<2x3x4xf32> {
  %0 = "onnx.CumSum"(%x, %a) <{exclusive = 0 : i64, reverse = 0 : i64}> : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// DepthToSpace DCR, blocksize 2, 12 channels: [N, b, b, C/b^2, H, W],
// transposed to [N, C/b^2, H, b, W, b], reshaped to the result.
// CHECK-LABEL: func.func @depth_to_space_dcr(
// CHECK: %[[S6:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 2, 2, 3, 2, 3] : tensor<72xf32> into tensor<1x2x2x3x2x3xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[S6]] : tensor<1x2x2x3x2x3xf32>) outs(%{{.*}} : tensor<1x3x2x2x3x2xf32>) permutation = [0, 3, 4, 1, 5, 2]
// CHECK: tensor.collapse_shape %[[T]]
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, 3, 4, 6] : tensor<72xf32> into tensor<1x3x4x6xf32>
func.func @depth_to_space_dcr(%x: tensor<1x12x2x3xf32>) -> tensor<1x3x4x6xf32> {
  %0 = "onnx.DepthToSpace"(%x) <{blocksize = 2 : i64, mode = "DCR"}> : (tensor<1x12x2x3xf32>) -> tensor<1x3x4x6xf32>
  return %0 : tensor<1x3x4x6xf32>
}

// -----

// CRD: [N, C/b^2, b, b, H, W], transposed to the same [N, C/b^2, H, b, W, b].
// CHECK-LABEL: func.func @depth_to_space_crd(
// CHECK: %[[S6:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 3, 2, 2, 2, 3] : tensor<72xf32> into tensor<1x3x2x2x2x3xf32>
// CHECK: linalg.transpose ins(%[[S6]] : tensor<1x3x2x2x2x3xf32>) outs(%{{.*}} : tensor<1x3x2x2x3x2xf32>) permutation = [0, 1, 4, 2, 5, 3]
func.func @depth_to_space_crd(%x: tensor<1x12x2x3xf32>) -> tensor<1x3x4x6xf32> {
  %0 = "onnx.DepthToSpace"(%x) <{blocksize = 2 : i64, mode = "CRD"}> : (tensor<1x12x2x3xf32>) -> tensor<1x3x4x6xf32>
  return %0 : tensor<1x3x4x6xf32>
}

// -----

// SpaceToDepth: [N, C, H/b, b, W/b, b] transposed to [N, b, b, C, H/b, W/b].
// CHECK-LABEL: func.func @space_to_depth(
// CHECK: %[[S6:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 3, 2, 2, 3, 2] : tensor<144xf32> into tensor<2x3x2x2x3x2xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[S6]] : tensor<2x3x2x2x3x2xf32>) outs(%{{.*}} : tensor<2x2x2x3x2x3xf32>) permutation = [0, 3, 5, 1, 2, 4]
// CHECK: tensor.collapse_shape %[[T]]
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 12, 2, 3] : tensor<144xf32> into tensor<2x12x2x3xf32>
func.func @space_to_depth(%x: tensor<2x3x4x6xf32>) -> tensor<2x12x2x3xf32> {
  %0 = "onnx.SpaceToDepth"(%x) <{blocksize = 2 : i64}> : (tensor<2x3x4x6xf32>) -> tensor<2x12x2x3xf32>
  return %0 : tensor<2x12x2x3xf32>
}

// -----

// HannWindow: the length comes from the result type, so the window is one
// constant, 0.5 - 0.5 * cos(2 pi n / N); periodic uses N = 8.
// CHECK-LABEL: func.func @hann_periodic(
// CHECK-NOT: linalg
// CHECK: %[[W:.*]] = arith.constant dense<[0.000000e+00, 0.146446615, 5.000000e-01, 0.853553414, 1.000000e+00, 0.853553414, 5.000000e-01, 0.146446615]> : tensor<8xf32>
// CHECK-NEXT: return %[[W]] : tensor<8xf32>
func.func @hann_periodic() -> tensor<8xf32> {
  %n = "onnx.Constant"() <{value = dense<8> : tensor<i64>}> : () -> tensor<i64>
  %0 = "onnx.HannWindow"(%n) <{output_datatype = 1 : i64, periodic = 1 : i64}> : (tensor<i64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// periodic = 0: symmetric, N = size - 1 = 4, so both ends are 0.
// CHECK-LABEL: func.func @hann_symmetric(
// CHECK: arith.constant dense<[0.000000e+00, 5.000000e-01, 1.000000e+00, 5.000000e-01, 0.000000e+00]> : tensor<5xf32>
func.func @hann_symmetric() -> tensor<5xf32> {
  %n = "onnx.Constant"() <{value = dense<5> : tensor<i64>}> : () -> tensor<i64>
  %0 = "onnx.HannWindow"(%n) <{output_datatype = 1 : i64, periodic = 0 : i64}> : (tensor<i64>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// ReverseSequence, time axis 0 and batch axis 1: each element reads the
// length of its batch, clamped into [0, 4], and x at time len - 1 - t
// where t < len, else at t.
// CHECK-LABEL: func.func @reverse_sequence(
// CHECK-SAME: %[[X:.*]]: tensor<4x3x2xf32>, %[[L:.*]]: tensor<3xi64>) -> tensor<4x3x2xf32>
// CHECK: %[[STEPS:.*]] = arith.constant 4 : index
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<4x3x2xf32>)
// CHECK: %[[T:.*]] = linalg.index 0 : index
// CHECK: %[[B:.*]] = linalg.index 1 : index
// CHECK: %[[K:.*]] = linalg.index 2 : index
// CHECK: %[[LV:.*]] = tensor.extract %[[L]][%[[B]]] : tensor<3xi64>
// CHECK: %[[LI:.*]] = arith.index_cast %[[LV]] : i64 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[LI]], %{{.*}} : index
// CHECK: %[[LEN:.*]] = arith.minsi %[[LO]], %[[STEPS]] : index
// CHECK: %[[LAST:.*]] = arith.subi %[[LEN]], %{{.*}} : index
// CHECK: %[[REV:.*]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[T]], %[[LEN]] : index
// CHECK: %[[SRC:.*]] = arith.select %[[IN]], %[[REV]], %[[T]] : index
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[SRC]], %[[B]], %[[K]]] : tensor<4x3x2xf32>
// CHECK: linalg.yield %[[V]] : f32
// CHECK: return %[[Y]]
func.func @reverse_sequence(%x: tensor<4x3x2xf32>, %l: tensor<3xi64>) -> tensor<4x3x2xf32> {
  %0 = "onnx.ReverseSequence"(%x, %l) <{batch_axis = 1 : i64, time_axis = 0 : i64}> : (tensor<4x3x2xf32>, tensor<3xi64>) -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
}

// -----

// Batch axis 0, time axis 1: the length is read at d0, d1 is reversed.
// CHECK-LABEL: func.func @reverse_sequence_batch_first(
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32>, %[[L:.*]]: tensor<2xi64>)
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[T:.*]] = linalg.index 1 : index
// CHECK: tensor.extract %[[L]][%[[B]]] : tensor<2xi64>
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[T]], %{{.*}} : index
// CHECK: %[[SRC:.*]] = arith.select %[[IN]], %{{.*}}, %[[T]] : index
// CHECK: tensor.extract %[[X]][%[[B]], %[[SRC]]] : tensor<2x4xf32>
func.func @reverse_sequence_batch_first(%x: tensor<2x4xf32>, %l: tensor<2xi64>) -> tensor<2x4xf32> {
  %0 = "onnx.ReverseSequence"(%x, %l) <{batch_axis = 0 : i64, time_axis = 1 : i64}> : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
