// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// LayerNormalization, InstanceNormalization and MeanVarianceNormalization
// (Normalization.cpp): the mean over the normalised dims (a sum reduction
// reshaped to keepdims, divided by the count), x - mean, the mean of its
// square, 1 / sqrt(var + eps), then one generic that scales the centred
// input, all broadcast through the indexing maps. LRN sums the padded
// squares over a channel window instead. BatchNormalization in training
// mode computes its batch statistics the same way (over all dims but 1)
// and also returns the updated running statistics.

// LayerNormalization over the last axis: every stat is [2, 3, 1], read
// back with a (d0, d1, 0) map; scale and B broadcast along d2.
// CHECK-LABEL: func.func @layernorm(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>, %[[S:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x3x4xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 3, 1] : tensor<6xf32> into tensor<2x3x1xf32>
// CHECK: %[[N:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: arith.divf %{{.*}}, %[[N]] : f32
// CHECK: %[[CENTERED:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME: ins(%[[X]], %{{.*}} : tensor<2x3x4xf32>, tensor<2x3x1xf32>)
// CHECK: arith.subf
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[CENTERED]] : tensor<2x3x4xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SQ]] : tensor<2x3x4xf32>)
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: } -> tensor<2x3x1xf32>
// CHECK: %[[INV:.*]] = linalg.generic
// CHECK: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[VE:.*]] = arith.addf %{{.*}}, %[[EPS]] : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[SD:.*]] = math.sqrt %[[VE]] : f32
// CHECK: arith.divf %[[ONE]], %[[SD]] : f32
// CHECK: } -> tensor<2x3x1xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME: ins(%[[CENTERED]], %[[INV]], %[[S]], %[[B]] :
// CHECK: ^bb0(%[[C:.*]]: f32, %[[I:.*]]: f32, %[[SC:.*]]: f32, %[[BI:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[NORM:.*]] = arith.mulf %[[C]], %[[I]] : f32
// CHECK: %[[SCALED:.*]] = arith.mulf %[[NORM]], %[[SC]] : f32
// CHECK: arith.addf %[[SCALED]], %[[BI]] : f32
// CHECK: return %[[Y]]
func.func @layernorm(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %y, %mean, %inv = "onnx.LayerNormalization"(%x, %s, %b) <{axis = -1 : i64, epsilon = 9.99999974E-6 : f32, stash_type = 1 : i64}> : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x3x4xf32>, none, none)
  return %y : tensor<2x3x4xf32>
}

// -----

// axis = 1 normalises over [3, 4] (count 12); no B, so no addition; the
// Mean and InvStdDev outputs are the keepdims stats themselves.
// CHECK-LABEL: func.func @layernorm_stats(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>, %[[S:.*]]: tensor<3x4xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK: %[[MEAN:.*]] = linalg.generic
// CHECK: arith.constant 1.200000e+01 : f32
// CHECK: } -> tensor<2x1x1xf32>
// CHECK: arith.constant 1.200000e+01 : f32
// CHECK: } -> tensor<2x1x1xf32>
// CHECK: %[[INV:.*]] = linalg.generic
// CHECK: arith.constant 1.000000e-03 : f32
// CHECK: } -> tensor<2x1x1xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, 0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME: ins(%{{.*}}, %[[INV]], %[[S]] :
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK-NOT: arith.addf
// CHECK: return %[[Y]], %[[MEAN]], %[[INV]] : tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
func.func @layernorm_stats(%x: tensor<2x3x4xf32>, %s: tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) {
  %none = onnx.NoValue
  %y, %mean, %inv = "onnx.LayerNormalization"(%x, %s, %none) <{axis = 1 : i64, epsilon = 1.000000e-03 : f32, stash_type = 1 : i64}> : (tensor<2x3x4xf32>, tensor<3x4xf32>, none) -> (tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return %y, %mean, %inv : tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
}

// -----

// InstanceNormalization: stats per (n, c) over the spatial dims (count
// 20); scale and B become [C, 1, 1] and broadcast along d1.
// CHECK-LABEL: func.func @instancenorm(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4x5xf32>, %[[S:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK: arith.constant 2.000000e+01 : f32
// CHECK: math.sqrt
// CHECK: %[[S3:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0, 1, 2]] output_shape [3, 1, 1] : tensor<3xf32> into tensor<3x1x1xf32>
// CHECK: %[[B3:.*]] = tensor.expand_shape %[[B]] {{\[\[}}0, 1, 2]] output_shape [3, 1, 1] : tensor<3xf32> into tensor<3x1x1xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %[[S3]], %[[B3]] :
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @instancenorm(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4x5xf32> {
  %0 = "onnx.InstanceNormalization"(%x, %s, %b) <{epsilon = 9.99999974E-6 : f32}> : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// MeanVarianceNormalization, default axes [0, 2, 3]: stats per channel
// (count 40), eps 1e-9, no scale or bias.
// CHECK-LABEL: func.func @mvn_default(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, 3, 1, 1] : tensor<3xf32> into tensor<1x3x1x1xf32>
// CHECK: arith.constant 4.000000e+01 : f32
// CHECK: %[[CENTERED:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK: arith.constant 9.99999971E-10 : f32
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME: ins(%[[CENTERED]], %{{.*}} :
// CHECK: arith.mulf
// CHECK-NEXT: linalg.yield
func.func @mvn_default(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = "onnx.MeanVarianceNormalization"(%x) : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// Explicit axes, one negative: dims 1 and 3 reduce (count 15).
// CHECK-LABEL: func.func @mvn_axes(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel", "reduction"]}
// CHECK: arith.constant 1.500000e+01 : f32
// CHECK: affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, 0)>
func.func @mvn_axes(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = "onnx.MeanVarianceNormalization"(%x) <{axes = array<i64: 1, -1>}> : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// LRN, size 3: x * x, padded with zeros by (size - 1) / 2 = 1 below and 1
// above along the channels, summed by a generic whose fifth loop d4 walks
// the window (d1 + d4 in the padded input, a tensor<3xf32> bounding it);
// then x / (bias + alpha / size * sum)^beta with the power as
// exp(beta * log(.)).
// CHECK-LABEL: func.func @lrn(
// CHECK-SAME: %[[X:.*]]: tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32>
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x5x2x2xf32>)
// CHECK: arith.mulf %[[IN:.*]], %[[IN]] : f32
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %[[SQ]] low[0, 1, 0, 0] high[0, 1, 0, 0]
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK: } : tensor<1x5x2x2xf32> to tensor<1x7x2x2xf32>
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x5x2x2xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PAD]], %[[WIN]] : tensor<1x7x2x2xf32>, tensor<3xf32>) outs(%[[INIT]] : tensor<1x5x2x2xf32>)
// CHECK: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK: arith.addf %[[ACC]], %[[V]] : f32
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[SUM]] : tensor<1x5x2x2xf32>, tensor<1x5x2x2xf32>)
// CHECK: ^bb0(%[[XV:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[BIAS:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[AS:.*]] = arith.constant 0.166666672 : f32
// CHECK: %[[SCALED:.*]] = arith.mulf %[[AS]], %[[S]] : f32
// CHECK: %[[BASE:.*]] = arith.addf %[[BIAS]], %[[SCALED]] : f32
// CHECK: %[[BETA:.*]] = arith.constant 7.500000e-01 : f32
// CHECK: %[[LOG:.*]] = math.log %[[BASE]] : f32
// CHECK: %[[BL:.*]] = arith.mulf %[[BETA]], %[[LOG]] : f32
// CHECK: %[[POW:.*]] = math.exp %[[BL]] : f32
// CHECK: %[[R:.*]] = arith.divf %[[XV]], %[[POW]] : f32
// CHECK: linalg.yield %[[R]] : f32
// CHECK: return %[[Y]]
func.func @lrn(%x: tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32> {
  %0 = "onnx.LRN"(%x) <{alpha = 5.000000e-01 : f32, beta = 7.500000e-01 : f32, bias = 2.000000e+00 : f32, size = 3 : i64}> : (tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32>
  return %0 : tensor<1x5x2x2xf32>
}

// -----

// An even size (4) pads floor(3 / 2) = 1 below and 2 above; rank 3.
// CHECK-LABEL: func.func @lrn_even_size(
// CHECK: tensor.pad %{{.*}} low[0, 1, 0] high[0, 2, 0]
// CHECK: } : tensor<2x5x3xf32> to tensor<2x8x3xf32>
// CHECK: tensor.empty() : tensor<4xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1 + d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.constant 7.500000e-02 : f32
func.func @lrn_even_size(%x: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %0 = "onnx.LRN"(%x) <{alpha = 3.000000e-01 : f32, beta = 6.000000e-01 : f32, bias = 1.000000e+00 : f32, size = 4 : i64}> : (tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}

// -----

// BatchNormalization with training_mode = 1 normalises with the batch's own
// statistics: the mean over dims 0 and 2 (a sum reduction with iterators
// reduction/parallel/reduction, reshaped to [1, 3, 1], divided by the
// count 8), the population variance as the same mean of (x - mean)^2, both
// reshaped to [3, 1] and read at (d1, 0) in place of input_mean and
// input_var. The running statistics are input * momentum + batch *
// (1 - momentum) over [3] (momentum 0.8, so 1 - momentum is 0.2 up to f32
// rounding), the mean from input_mean and the variance from input_var.
// CHECK-LABEL: func.func @batchnorm_training(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x3x4xf32>, %[[S:[a-z0-9_]+]]: tensor<3xf32>, %[[B:[a-z0-9_]+]]: tensor<3xf32>, %[[M:[a-z0-9_]+]]: tensor<3xf32>, %[[V:[a-z0-9_]+]]: tensor<3xf32>)
// CHECK: %[[S2:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
// CHECK: %[[B2:.*]] = tensor.expand_shape %[[B]] {{\[\[}}0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
// Batch mean.
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:[a-z0-9_]+]]: f32, %[[ACC:[a-z0-9_]+]]: f32):
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[ADD]] : f32
// CHECK: %[[SUM3:.*]] = tensor.expand_shape %[[SUM]] {{\[\[}}0, 1, 2]] output_shape [1, 3, 1] : tensor<3xf32> into tensor<1x3x1xf32>
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM3]] : tensor<1x3x1xf32>)
// CHECK: %[[CNT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT: arith.divf %{{.*}}, %[[CNT]] : f32
// Squared deviations, broadcasting the mean along d0 and d2.
// CHECK: %[[SQ:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MEAN]] : tensor<2x3x4xf32>, tensor<1x3x1xf32>)
// CHECK-NEXT: ^bb0(%[[XV:[a-z0-9_]+]]: f32, %[[MV:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[XV]], %[[MV]] : f32
// CHECK-NEXT: %[[D2:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[D2]] : f32
// CHECK: %[[MEANC:.*]] = tensor.collapse_shape %[[MEAN]] {{\[\[}}0, 1, 2]] : tensor<1x3x1xf32> into tensor<3xf32>
// CHECK-NEXT: %[[MEAN2:.*]] = tensor.expand_shape %[[MEANC]] {{\[\[}}0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
// Batch variance: the mean of the squares.
// CHECK: %[[VSUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[SQ]] : tensor<2x3x4xf32>)
// CHECK: %[[VSUM3:.*]] = tensor.expand_shape %[[VSUM]]
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[VSUM3]] : tensor<1x3x1xf32>)
// CHECK: %[[CNT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT: arith.divf %{{.*}}, %[[CNT]] : f32
// CHECK: %[[VARC:.*]] = tensor.collapse_shape %[[VAR]]
// CHECK-NEXT: %[[VAR2:.*]] = tensor.expand_shape %[[VARC]] {{\[\[}}0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
// y = (x - batch_mean) * scale / sqrt(batch_var + eps) + B.
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[S2]], %[[B2]], %[[MEAN2]], %[[VAR2]] :
// CHECK-NEXT: ^bb0(%[[XV:[a-z0-9_]+]]: f32, %[[SV:[a-z0-9_]+]]: f32, %[[BV:[a-z0-9_]+]]: f32, %[[MV:[a-z0-9_]+]]: f32, %[[VV:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT: %[[VE:.*]] = arith.addf %[[VV]], %[[EPS]] : f32
// CHECK-NEXT: %[[SD:.*]] = math.sqrt %[[VE]] : f32
// CHECK-NEXT: %[[INV:.*]] = arith.divf %[[SV]], %[[SD]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.subf %[[XV]], %[[MV]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.mulf %[[C]], %[[INV]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[N]], %[[BV]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// Running mean: input_mean * 0.8 + batch_mean * 0.2.
// CHECK: %[[BM:.*]] = tensor.collapse_shape %[[MEAN2]] {{\[\[}}0, 1]] : tensor<3x1xf32> into tensor<3xf32>
// CHECK: %[[RM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[M]], %[[BM]] : tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[OLD:[a-z0-9_]+]]: f32, %[[NOW:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[MOM:.*]] = arith.constant 8.000000e-01 : f32
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[OLD]], %[[MOM]] : f32
// CHECK-NEXT: %[[ONEM:.*]] = arith.constant 0.199999988 : f32
// CHECK-NEXT: %[[BB:.*]] = arith.mulf %[[NOW]], %[[ONEM]] : f32
// CHECK-NEXT: %[[U:.*]] = arith.addf %[[A]], %[[BB]] : f32
// CHECK-NEXT: linalg.yield %[[U]] : f32
// Running variance: input_var * 0.8 + batch_var * 0.2.
// CHECK: %[[BV2:.*]] = tensor.collapse_shape %[[VAR2]] {{\[\[}}0, 1]] : tensor<3x1xf32> into tensor<3xf32>
// CHECK: %[[RV:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V]], %[[BV2]] : tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[OLD:[a-z0-9_]+]]: f32, %[[NOW:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[MOM:.*]] = arith.constant 8.000000e-01 : f32
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[OLD]], %[[MOM]] : f32
// CHECK-NEXT: %[[ONEM:.*]] = arith.constant 0.199999988 : f32
// CHECK-NEXT: %[[BB:.*]] = arith.mulf %[[NOW]], %[[ONEM]] : f32
// CHECK-NEXT: %[[U:.*]] = arith.addf %[[A]], %[[BB]] : f32
// CHECK-NEXT: linalg.yield %[[U]] : f32
// CHECK: return %[[Y]], %[[RM]], %[[RV]] : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
func.func @batchnorm_training(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y, %rm, %rv = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) <{epsilon = 9.99999974E-6 : f32, momentum = 8.000000e-01 : f32, training_mode = 1 : i64}> : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y, %rm, %rv : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}
