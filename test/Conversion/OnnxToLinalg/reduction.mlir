// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// Reductions and Softmax (Reduction.cpp): a linalg.generic with reduction
// iterators into a filled accumulator of the kept dims, then a reshape to
// the result's rank (keepdims) and, for means, a division by the count.

// CHECK-LABEL: func.func @reducemean_keepdims(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[ACC]] : tensor<2x4xf32>)
// CHECK: arith.addf
// CHECK: tensor.collapse_shape %[[SUM]]
// CHECK: %[[KEPT:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 1, 4] : tensor<8xf32> into tensor<2x1x4xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[KEPT]] : tensor<2x1x4xf32>)
// CHECK: %[[COUNT:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: arith.divf %{{.*}}, %[[COUNT]] : f32
func.func @reducemean_keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = "onnx.ReduceMean"(%x) <{axes = array<i64: 1>, keepdims = 1 : i64}> : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// Axes from a constant operand (opset 13), negative: the last dim.
// CHECK-LABEL: func.func @reducesum_axes_operand(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-NOT: arith.divf
// CHECK: return %{{.*}} : tensor<2x3xf32>
func.func @reducesum_axes_operand(%x: tensor<2x3x4xf32>) -> tensor<2x3xf32> {
  %axes = "onnx.Constant"() <{value = dense<[-1]> : tensor<1xi64>}> : () -> tensor<1xi64>
  %0 = "onnx.ReduceSum"(%x, %axes) <{keepdims = 0 : i64}> : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// No axes: reduce everything into a 0-d accumulator starting at -inf.
// CHECK-LABEL: func.func @reducemax_all(
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
// CHECK: arith.maximumf
func.func @reducemax_all(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = "onnx.ReduceMax"(%x) <{keepdims = 0 : i64}> : (tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// noop_with_empty_axes and no axes: the input itself.
// CHECK-LABEL: func.func @reducesum_noop(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]] : tensor<2x3xf32>
func.func @reducesum_noop(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %none = onnx.NoValue
  %0 = "onnx.ReduceSum"(%x, %none) <{keepdims = 1 : i64, noop_with_empty_axes = 1 : i64}> : (tensor<2x3xf32>, none) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @global_average_pool(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK: arith.constant 9.000000e+00 : f32
// CHECK: arith.divf
func.func @global_average_pool(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %0 = "onnx.GlobalAveragePool"(%x) : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}

// -----

// Softmax, numerically stable: max over the axis, e = exp(x - max) once,
// its sum, then e * (1 / sum): the reciprocal is invariant along the row,
// so no division per element. The per-row values broadcast back with a
// (d0, 0) map.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[X:.*]]: tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.maximumf
// CHECK: %[[MAX2:.*]] = tensor.expand_shape %[[MAX]] {{\[}}[0, 1]] output_shape [2, 1]
// CHECK: %[[E:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: ins(%[[X]], %[[MAX2]] :
// CHECK: %[[D:.*]] = arith.subf
// CHECK-NEXT: math.exp %[[D]]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[E]] :
// CHECK-NOT: math.exp
// CHECK: arith.addf
// CHECK: %[[SUM2:.*]] = tensor.expand_shape %[[SUM]]
// CHECK: linalg.generic {{.*}} ins(%[[E]], %[[SUM2]] :
// CHECK-NEXT: ^bb0(%[[EV:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NOT: math.exp
// CHECK: %[[R:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK-NEXT: arith.mulf %[[EV]], %[[R]] : f32
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = "onnx.Softmax"(%x) <{axis = -1 : i64}> : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// LogSoftmax over axis 0: x - max - log(sum).
// CHECK-LABEL: func.func @logsoftmax_axis0(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
// CHECK: arith.maximumf
// CHECK: math.log
// CHECK-NEXT: arith.subf
func.func @logsoftmax_axis0(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = "onnx.LogSoftmax"(%x) <{axis = 0 : i64}> : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Axes known only at run time with keepdims=0: [3, 2, 2] -> [3, 2] reduces
// dim 1 or dim 2. The axis is read, wrapped by the rank, and compared with
// the first set; each set's reduction is computed in its own branch.
// CHECK-LABEL: func.func @reducesum_runtime_axes_no_keepdims(
// CHECK-SAME: %[[X:.*]]: tensor<3x2x2xf32>, %[[AXES:.*]]: tensor<1xi64>) -> tensor<3x2xf32>
// CHECK: %[[A:.*]] = tensor.extract %[[AXES]]
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[A]]
// CHECK: %[[WRAPPED:.*]] = arith.select %[[NEG]]
// CHECK: arith.cmpi eq, %[[WRAPPED]]
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (tensor<3x2xf32>) {
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: scf.yield
// CHECK: } else {
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: scf.yield
// CHECK: return %[[R]] : tensor<3x2xf32>
func.func @reducesum_runtime_axes_no_keepdims(%x: tensor<3x2x2xf32>, %axes: tensor<1xi64>) -> tensor<3x2xf32> {
  %0 = "onnx.ReduceSum"(%x, %axes) <{keepdims = 0 : i64, noop_with_empty_axes = 0 : i64}> : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
