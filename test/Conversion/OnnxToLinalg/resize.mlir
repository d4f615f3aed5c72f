// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// Resize (Resize.cpp): with constant scales (or sizes) and roi, every
// resized dim gets a constant [out, taps] table of source indices (i64)
// and, for floats, one of weights; one generic over the output reads them
// at its own linalg.index, tensor.extract's each tap of x and blends them.
// Dims the resize leaves alone read their own position. Scales known only
// at run time compute the same taps in the generic, in f64.

// Nearest, half_pixel, round_prefer_floor, 2 -> 4: the source coordinates
// -0.25, 0.25, 0.75, 1.25 pick 0, 0, 1, 1. Nearest reads one tap with
// weight 1, so there is no weight table and no multiply.
// CHECK-LABEL: func.func @resize_nearest(
// CHECK-SAME: %[[X:.*]]: tensor<1x2xf32>) -> tensor<1x4xf32>
// CHECK: %[[IDX:.*]] = arith.constant dense<{{\[\[}}0], [0], [1], [1]]> : tensor<4x1xi64>
// CHECK-NOT: tensor<4x1xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<1x4xf32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[T0:.*]] = arith.constant 0 : index
// CHECK: %[[SRC:.*]] = tensor.extract %[[IDX]][%[[J]], %[[T0]]] : tensor<4x1xi64>
// CHECK: %[[SRCI:.*]] = arith.index_cast %[[SRC]] : i64 to index
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[I]], %[[SRCI]]] : tensor<1x2xf32>
// CHECK-NOT: arith.mulf
// CHECK: linalg.yield %[[V]] : f32
// CHECK: return %[[Y]]
func.func @resize_nearest(%x: tensor<1x2xf32>) -> tensor<1x4xf32> {
  %scales = "onnx.Constant"() <{value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %none = onnx.NoValue
  %0 = "onnx.Resize"(%x, %none, %scales, %none) <{coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, mode = "nearest", nearest_mode = "round_prefer_floor"}> : (tensor<1x2xf32>, none, tensor<2xf32>, none) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

// Nearest of an integer tensor, asymmetric, ceil, 2 -> 4 (coordinates 0,
// 0.5, 1, 1.5; an integral coordinate is kept, the last clamps to 1): no
// weight table, the one tap is yielded as it is.
// CHECK-LABEL: func.func @resize_nearest_int(
// CHECK-SAME: %[[X:.*]]: tensor<2x2xi32>) -> tensor<2x4xi32>
// CHECK: %[[IDX:.*]] = arith.constant dense<{{\[\[}}0], [1], [1], [1]]> : tensor<4x1xi64>
// CHECK-NOT: tensor<4x1xf32>
// CHECK: linalg.generic
// CHECK: %[[SRC:.*]] = tensor.extract %[[IDX]]
// CHECK: %[[SRCI:.*]] = arith.index_cast %[[SRC]] : i64 to index
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%{{.*}}, %[[SRCI]]] : tensor<2x2xi32>
// CHECK-NEXT: linalg.yield %[[V]] : i32
func.func @resize_nearest_int(%x: tensor<2x2xi32>) -> tensor<2x4xi32> {
  %scales = "onnx.Constant"() <{value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %none = onnx.NoValue
  %0 = "onnx.Resize"(%x, %none, %scales, %none) <{coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, mode = "nearest", nearest_mode = "ceil"}> : (tensor<2x2xi32>, none, tensor<2xf32>, none) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

// Linear, half_pixel, only H resized (2 -> 4): two taps per output row,
// the ones outside [0, 1] clamped to the edge. N, C and W read their own
// linalg.index; each tap is x[n, c, idx[h, k], w] * weight[h, k].
// CHECK-LABEL: func.func @resize_linear(
// CHECK-SAME: %[[X:.*]]: tensor<1x1x2x3xf32>) -> tensor<1x1x4x3xf32>
// CHECK: %[[IDX:.*]] = arith.constant dense<{{\[\[}}0, 0], [0, 1], [0, 1], [1, 1]]> : tensor<4x2xi64>
// CHECK: %[[W:.*]] = arith.constant dense<{{\[\[}}2.500000e-01, 7.500000e-01], [7.500000e-01, 2.500000e-01], [2.500000e-01, 7.500000e-01], [7.500000e-01, 2.500000e-01]]> : tensor<4x2xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<1x1x4x3xf32>)
// CHECK: %[[N:.*]] = linalg.index 0 : index
// CHECK: %[[C:.*]] = linalg.index 1 : index
// CHECK: %[[H:.*]] = linalg.index 2 : index
// CHECK: %[[WI:.*]] = linalg.index 3 : index
// CHECK: %[[K0:.*]] = arith.constant 0 : index
// CHECK: %[[S0:.*]] = tensor.extract %[[IDX]][%[[H]], %[[K0]]] : tensor<4x2xi64>
// CHECK: %[[S0I:.*]] = arith.index_cast %[[S0]] : i64 to index
// CHECK: %[[W0:.*]] = tensor.extract %[[W]][%[[H]], %[[K0]]] : tensor<4x2xf32>
// CHECK: %[[V0:.*]] = tensor.extract %[[X]][%[[N]], %[[C]], %[[S0I]], %[[WI]]] : tensor<1x1x2x3xf32>
// CHECK: %[[P0:.*]] = arith.mulf %[[V0]], %[[W0]] : f32
// CHECK: %[[K1:.*]] = arith.constant 1 : index
// CHECK: %[[S1:.*]] = tensor.extract %[[IDX]][%[[H]], %[[K1]]] : tensor<4x2xi64>
// CHECK: %[[S1I:.*]] = arith.index_cast %[[S1]] : i64 to index
// CHECK: %[[W1:.*]] = tensor.extract %[[W]][%[[H]], %[[K1]]] : tensor<4x2xf32>
// CHECK: %[[V1:.*]] = tensor.extract %[[X]][%[[N]], %[[C]], %[[S1I]], %[[WI]]] : tensor<1x1x2x3xf32>
// CHECK: %[[P1:.*]] = arith.mulf %[[V1]], %[[W1]] : f32
// CHECK: %[[R:.*]] = arith.addf %[[P0]], %[[P1]] : f32
// CHECK: linalg.yield %[[R]] : f32
// CHECK: return %[[Y]]
func.func @resize_linear(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x4x3xf32> {
  %scales = "onnx.Constant"() <{value = dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<4xf32>}> : () -> tensor<4xf32>
  %none = onnx.NoValue
  %0 = "onnx.Resize"(%x, %none, %scales, %none) <{coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, mode = "linear", nearest_mode = "round_prefer_floor"}> : (tensor<1x1x2x3xf32>, none, tensor<4xf32>, none) -> tensor<1x1x4x3xf32>
  return %0 : tensor<1x1x4x3xf32>
}

// -----

// tf_crop_and_resize with a constant roi (W from -0.5 to 0.75) and sizes
// [1, 3]: coordinates -1.5, 0.375, 2.25 along W; the first is outside
// [0, 3], so a constant i1 table marks it and a select yields the
// extrapolation value there. Dim 0 (1 -> 1, roi [0, 1]) is left alone.
// CHECK-LABEL: func.func @resize_crop(
// CHECK-SAME: %[[X:.*]]: tensor<1x4xf32>) -> tensor<1x3xf32>
// CHECK-NOT: tensor<1x2xi64>
// CHECK: %[[IDX:.*]] = arith.constant dense<{{\[\[}}0, 0], [0, 1], [2, 3]]> : tensor<3x2xi64>
// CHECK: %[[W:.*]] = arith.constant dense<{{\[\[}}5.000000e-01, 5.000000e-01], [6.250000e-01, 3.750000e-01], [7.500000e-01, 2.500000e-01]]> : tensor<3x2xf32>
// CHECK: %[[VALID:.*]] = arith.constant dense<[false, true, true]> : tensor<3xi1>
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: tensor.extract %[[X]][%[[I]], %{{.*}}] : tensor<1x4xf32>
// CHECK: tensor.extract %[[X]][%[[I]], %{{.*}}] : tensor<1x4xf32>
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[OK:.*]] = tensor.extract %[[VALID]][%[[J]]] : tensor<3xi1>
// CHECK: %[[EXTRA:.*]] = arith.constant -1.000000e+00 : f32
// CHECK: %[[R:.*]] = arith.select %[[OK]], %[[SUM]], %[[EXTRA]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @resize_crop(%x: tensor<1x4xf32>) -> tensor<1x3xf32> {
  %roi = "onnx.Constant"() <{value = dense<[0.000000e+00, -5.000000e-01, 1.000000e+00, 7.500000e-01]> : tensor<4xf32>}> : () -> tensor<4xf32>
  %sizes = "onnx.Constant"() <{value = dense<[1, 3]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %none = onnx.NoValue
  %0 = "onnx.Resize"(%x, %roi, %none, %sizes) <{coordinate_transformation_mode = "tf_crop_and_resize", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = -1.000000e+00 : f32, mode = "linear", nearest_mode = "round_prefer_floor"}> : (tensor<1x4xf32>, tensor<4xf32>, none, tensor<2xi64>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// Scales only known at run time: each is read and widened to f64 first.
// For each dim a generic over its output positions computes the taps
// into small tables (the static path's, at run time): (j + 0.5) / scale
// - 0.5 (kept within a few taps of the input), its floor and the
// fraction in f64, the taps below an integral coordinate, clamped into
// [0, 2], the weights truncated to f32. The
// generic over the output reads the tables and blends. Every dim is
// resized, since a run-time scale may move samples even where the size
// stays; dim 0, of one position, computes its taps in that generic (a
// table of one would be a 0-d generic, left on the host on a GPU).
// CHECK-LABEL: func.func @resize_runtime_scales(
// CHECK-SAME: %[[X:.*]]: tensor<1x3xf32>, %[[S:.*]]: tensor<2xf32>) -> tensor<1x6xf32>
// CHECK: %[[C2:.*]] = arith.constant 2 : i64
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[S1:.*]] = tensor.extract %[[S]][%[[C1]]] : tensor<2xf32>
// CHECK: %[[SCALE:.*]] = arith.extf %[[S1]] : f32 to f64
// CHECK-NOT: tensor<1xi64>
// CHECK: %[[T1:.*]]:4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs({{.*}} : tensor<6xi64>, tensor<6xi64>, tensor<6xf32>, tensor<6xf32>)
// CHECK: %[[J:.*]] = linalg.index 0 : index
// CHECK: %[[J64:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK: %[[JF:.*]] = arith.sitofp %[[J64]] : i64 to f64
// CHECK: %[[CENTRE:.*]] = arith.addf %[[JF]], %{{.*}} : f64
// CHECK: %[[DIV:.*]] = arith.divf %[[CENTRE]], %[[SCALE]] : f64
// CHECK: %[[COORD:.*]] = arith.subf %[[DIV]], %{{.*}} : f64
// CHECK: arith.cmpf oge, %[[COORD]], %{{.*}} : f64
// CHECK: %[[FL:.*]] = math.floor %[[KEPT:.*]] : f64
// CHECK: %[[FRAC:.*]] = arith.subf %[[KEPT]], %[[FL]] : f64
// CHECK: %[[I0:.*]] = arith.fptosi %[[FL]] : f64 to i64
// CHECK: %[[INTEGRAL:.*]] = arith.cmpf oeq, %[[FRAC]], %{{.*}} : f64
// CHECK: %[[LOW:.*]] = arith.select %[[INTEGRAL]], %{{.*}}, %[[I0]] : i64
// CHECK: %[[MAX:.*]] = arith.maxsi %[[LOW]], %{{.*}} : i64
// CHECK: %[[IDX:.*]] = arith.minsi %[[MAX]], %[[C2]] : i64
// CHECK: %[[W:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: linalg.yield %[[IDX]], %{{.*}}, %[[W]], %{{.*}} : i64, i64, f32, f32
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<1x6xf32>)
// CHECK: %[[P:.*]] = linalg.index 1 : index
// CHECK: math.floor
// CHECK: %[[TAP:.*]] = tensor.extract %[[T1]]#0[%[[P]]] : tensor<6xi64>
// CHECK: %[[COL:.*]] = arith.index_cast %[[TAP]] : i64 to index
// CHECK: %[[W0:.*]] = tensor.extract %[[T1]]#2[%[[P]]] : tensor<6xf32>
// CHECK: %[[WW:.*]] = arith.mulf %{{.*}}, %[[W0]] : f32
// CHECK: %[[V0:.*]] = tensor.extract %[[X]][%{{.*}}, %[[COL]]] : tensor<1x3xf32>
// CHECK: arith.mulf %[[V0]], %[[WW]] : f32
// CHECK: arith.addf
func.func @resize_runtime_scales(%x: tensor<1x3xf32>, %s: tensor<2xf32>) -> tensor<1x6xf32> {
  %none = onnx.NoValue
  %0 = "onnx.Resize"(%x, %none, %s, %none) <{coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, mode = "linear", nearest_mode = "round_prefer_floor"}> : (tensor<1x3xf32>, none, tensor<2xf32>, none) -> tensor<1x6xf32>
  return %0 : tensor<1x6xf32>
}
