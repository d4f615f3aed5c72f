// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (Loss.cpp): a
// 2-result generic over the target yields, per element, the weighted
// negative log-probability read at the target's class (clamped into
// [0, C-1]) and the weight (0 where target == ignore_index); sum and mean
// reduce the losses into a 0-d tensor, mean dividing by the summed
// weights. SoftmaxCrossEntropyLoss first takes log_softmax along dim 1.

// Spatial NLL with weights, ignore_index and mean.
// CHECK-LABEL: func.func @nll_mean_weight_ignore(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x3xf32>, %[[T:.*]]: tensor<2x3xi64>, %[[W:.*]]: tensor<4xf32>) -> tensor<f32>
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[T]] : tensor<2x3xi64>) outs(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK: ^bb0(%[[TV:.*]]: i64, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: %[[TI:.*]] = arith.index_cast %[[TV]] : i64 to index
// CHECK: %[[IGNORE:.*]] = arith.constant -1 : i64
// CHECK: %[[SKIP:.*]] = arith.cmpi eq, %[[TV]], %[[IGNORE]] : i64
// CHECK: %[[LOW:.*]] = arith.maxsi %[[TI]], %{{.*}} : index
// CHECK: %[[LAST:.*]] = arith.constant 3 : index
// CHECK: %[[C:.*]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK: %[[N:.*]] = linalg.index 0 : index
// CHECK: %[[D:.*]] = linalg.index 1 : index
// CHECK: %[[LOGP:.*]] = tensor.extract %[[X]][%[[N]], %[[C]], %[[D]]] : tensor<2x4x3xf32>
// CHECK: %[[WC:.*]] = tensor.extract %[[W]][%[[C]]] : tensor<4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[WT:.*]] = arith.select %[[SKIP]], %[[ZERO]], %[[WC]] : f32
// CHECK: %[[PROD:.*]] = arith.mulf %[[LOGP]], %[[WT]] : f32
// CHECK: %[[NEG:.*]] = arith.negf %[[PROD]] : f32
// CHECK: %[[LOSS:.*]] = arith.select %[[SKIP]], %[[ZERO]], %[[NEG]] : f32
// CHECK: linalg.yield %[[LOSS]], %[[WT]] : f32, f32
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%[[R]]#0 : tensor<2x3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[WSUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%[[R]]#1 : tensor<2x3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[MEAN:.*]] = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%[[SUM]], %[[WSUM]] : tensor<f32>, tensor<f32>)
// CHECK: arith.divf
// CHECK: return %[[MEAN]] : tensor<f32>
func.func @nll_mean_weight_ignore(%x: tensor<2x4x3xf32>, %t: tensor<2x3xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %w) <{ignore_index = -1 : i64, reduction = "mean"}> : (tensor<2x4x3xf32>, tensor<2x3xi64>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// reduction none, no weight, no ignore_index, i32 target: the weight is
// 1, the per-element losses are the result, nothing is reduced.
// CHECK-LABEL: func.func @nll_none(
// CHECK-SAME: %[[X:.*]]: tensor<3x5xf32>, %[[T:.*]]: tensor<3xi32>) -> tensor<3xf32>
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} ins(%[[T]] : tensor<3xi32>)
// CHECK: arith.index_cast %{{.*}} : i32 to index
// CHECK-NOT: arith.cmpi
// CHECK: %[[LAST:.*]] = arith.constant 4 : index
// CHECK: %[[C:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK: tensor.extract %[[X]][%{{.*}}, %[[C]]] : tensor<3x5xf32>
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: arith.negf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0 : tensor<3xf32>
func.func @nll_none(%x: tensor<3x5xf32>, %t: tensor<3xi32>) -> tensor<3xf32> {
  %none = onnx.NoValue
  %0 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %none) <{reduction = "none"}> : (tensor<3x5xf32>, tensor<3xi32>, none) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// reduction sum: one reduction of the losses, no division.
// CHECK-LABEL: func.func @nll_sum(
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%[[R]]#0 : tensor<3xf32>)
// CHECK: arith.addf
// CHECK-NOT: arith.divf
// CHECK: return %[[SUM]] : tensor<f32>
func.func @nll_sum(%x: tensor<3x5xf32>, %t: tensor<3xi64>) -> tensor<f32> {
  %none = onnx.NoValue
  %0 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %none) <{reduction = "sum"}> : (tensor<3x5xf32>, tensor<3xi64>, none) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// SoftmaxCrossEntropyLoss: log_softmax along dim 1 (max, x - max, sum of
// exp, x - max - log(sum)); the NLL reads the log-probabilities, which
// are also the second result.
// CHECK-LABEL: func.func @sce_log_prob(
// CHECK-SAME: %[[X:.*]]: tensor<3x5xf32>, %[[T:.*]]: tensor<3xi64>) -> (tensor<f32>, tensor<3x5xf32>)
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<3xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<3x5xf32>)
// CHECK: arith.maximumf
// CHECK: %[[MAX2:.*]] = tensor.expand_shape %[[MAX]] {{\[\[}}0, 1]] output_shape [3, 1]
// CHECK: %[[SHIFTED:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX2]] :
// CHECK: arith.subf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[SHIFTED]] : tensor<3x5xf32>)
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: %[[SUM2:.*]] = tensor.expand_shape %[[SUM]]
// CHECK: %[[LOGP:.*]] = linalg.generic {{.*}} ins(%[[SHIFTED]], %[[SUM2]] :
// CHECK: math.log %{{.*}} : f32
// CHECK: arith.subf
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<3xi64>)
// CHECK: tensor.extract %[[LOGP]][%{{.*}}, %{{.*}}] : tensor<3x5xf32>
// CHECK: arith.divf
// CHECK: return %{{.*}}, %[[LOGP]] : tensor<f32>, tensor<3x5xf32>
func.func @sce_log_prob(%x: tensor<3x5xf32>, %t: tensor<3xi64>) -> (tensor<f32>, tensor<3x5xf32>) {
  %none = onnx.NoValue
  %loss, %logp = "onnx.SoftmaxCrossEntropyLoss"(%x, %t, %none) <{reduction = "mean"}> : (tensor<3x5xf32>, tensor<3xi64>, none) -> (tensor<f32>, tensor<3x5xf32>)
  return %loss, %logp : tensor<f32>, tensor<3x5xf32>
}

// -----

// Spatial scores [N, C, D]: the class dim 1 is reduced in the middle
// ((d0, 0, d2) broadcast back); an unused log_prob result is fine.
// CHECK-LABEL: func.func @sce_spatial_none(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: arith.maximumf
// CHECK: affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK: %[[LOGP:.*]] = linalg.generic {{.*}} -> (d0, 0, d2)>
// CHECK: math.log %{{.*}} : f32
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK: tensor.extract %[[LOGP]][%{{.*}}, %{{.*}}, %{{.*}}] : tensor<2x4x3xf32>
// CHECK: return %[[R]]#0 : tensor<2x3xf32>
// CHECK-NOT: onnx.
func.func @sce_spatial_none(%x: tensor<2x4x3xf32>, %t: tensor<2x3xi64>) -> tensor<2x3xf32> {
  %none = onnx.NoValue
  %loss, %logp = "onnx.SoftmaxCrossEntropyLoss"(%x, %t, %none) <{reduction = "none"}> : (tensor<2x4x3xf32>, tensor<2x3xi64>, none) -> (tensor<2x3xf32>, none)
  return %loss : tensor<2x3xf32>
}
