// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// Gather* and Scatter* (GatherScatter.cpp): GatherElements/GatherND
// tensor.extract at a computed index inside a generic; Scatter* run an
// scf.for nest over the updates, inserting into the carried data. Every
// index read from data has a negative value wrapped and is clamped into
// the dim.

// GatherElements along axis 1: a generic over the indices; the other dim
// is the loop index (clamped into the data), the axis one the index read,
// wrapped by 4 and clamped into [0, 3].
// CHECK-LABEL: func.func @gather_elements(
// CHECK-SAME: %[[D:.*]]: tensor<3x4xf32>, %[[IDX:.*]]: tensor<2x3xi64>) -> tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[IDX]] : tensor<2x3xi64>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: ^bb0(%[[I:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[ROW:.*]] = arith.minsi %[[D0]], %{{.*}} : index
// CHECK: %[[IX:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[IX]], %{{.*}} : index
// CHECK: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: %[[UP:.*]] = arith.addi %[[IX]], %[[FOUR]] : index
// CHECK: %[[WRAPPED:.*]] = arith.select %[[NEG]], %[[UP]], %[[IX]] : index
// CHECK: %[[LOW:.*]] = arith.maxsi %[[WRAPPED]], %{{.*}} : index
// CHECK: %[[THREE:.*]] = arith.constant 3 : index
// CHECK: %[[COL:.*]] = arith.minsi %[[LOW]], %[[THREE]] : index
// CHECK: %[[V:.*]] = tensor.extract %[[D]][%[[ROW]], %[[COL]]] : tensor<3x4xf32>
// CHECK: linalg.yield %[[V]] : f32
func.func @gather_elements(%d: tensor<3x4xf32>, %i: tensor<2x3xi64>) -> tensor<2x3xf32> {
  %0 = "onnx.GatherElements"(%d, %i) <{axis = 1 : i64}> : (tensor<3x4xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// GatherND with batch_dims = 1: an input-less generic over the result
// [batch, index row, trailing data dim]; the batch dim indexes the data
// directly (the same size in both), the index tuple is read from the indices at [b, i, 0], and the
// remaining data dim is the last loop.
// CHECK-LABEL: func.func @gather_nd_batch_dims(
// CHECK-SAME: %[[D:.*]]: tensor<2x3x4xf32>, %[[IDX:.*]]: tensor<2x2x1xi64>) -> tensor<2x2x4xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<2x2x4xf32>)
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[R:.*]] = linalg.index 1 : index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[T:.*]] = tensor.extract %[[IDX]][%[[B]], %[[R]], %[[C0]]] : tensor<2x2x1xi64>
// CHECK: arith.index_cast %[[T]] : i64 to index
// CHECK: %[[MAX:.*]] = arith.constant 2 : index
// CHECK: %[[ROW:.*]] = arith.minsi %{{.*}}, %[[MAX]] : index
// CHECK: %[[LAST:.*]] = linalg.index 2 : index
// CHECK: tensor.extract %[[D]][%[[B]], %[[ROW]], %[[LAST]]] : tensor<2x3x4xf32>
func.func @gather_nd_batch_dims(%d: tensor<2x3x4xf32>, %i: tensor<2x2x1xi64>) -> tensor<2x2x4xf32> {
  %0 = "onnx.GatherND"(%d, %i) <{batch_dims = 1 : i64}> : (tensor<2x3x4xf32>, tensor<2x2x1xi64>) -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// -----

// ScatterElements with reduction add: an scf.for nest over the updates'
// shape carries the data; each step reads the index and the update,
// combines the update with the element there and inserts the result.
// CHECK-LABEL: func.func @scatter_elements_add(
// CHECK-SAME: %[[D:.*]]: tensor<3x4xf32>, %[[IDX:.*]]: tensor<2x3xi64>, %[[U:.*]]: tensor<2x3xf32>) -> tensor<3x4xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[OUTER:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC0:.*]] = %[[D]]) -> (tensor<3x4xf32>) {
// CHECK: %[[INNER:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ACC0]]) -> (tensor<3x4xf32>) {
// CHECK: %[[T:.*]] = tensor.extract %[[IDX]][%[[I]], %[[J]]] : tensor<2x3xi64>
// CHECK: %[[ROW:.*]] = arith.minsi %[[I]], %{{.*}} : index
// CHECK: arith.index_cast %[[T]] : i64 to index
// CHECK: %[[COL:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: %[[UPD:.*]] = tensor.extract %[[U]][%[[I]], %[[J]]] : tensor<2x3xf32>
// CHECK: %[[OLD:.*]] = tensor.extract %[[ACC]][%[[ROW]], %[[COL]]] : tensor<3x4xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[UPD]] : f32
// CHECK: %[[INS:.*]] = tensor.insert %[[NEW]] into %[[ACC]][%[[ROW]], %[[COL]]] : tensor<3x4xf32>
// CHECK: scf.yield %[[INS]] : tensor<3x4xf32>
// CHECK: scf.yield %[[INNER]] : tensor<3x4xf32>
// CHECK: return %[[OUTER]] : tensor<3x4xf32>
func.func @scatter_elements_add(%d: tensor<3x4xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) -> tensor<3x4xf32> {
  %0 = "onnx.ScatterElements"(%d, %i, %u) <{axis = 1 : i64, reduction = "add"}> : (tensor<3x4xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// reduction max of ui8: unsigned max.
// CHECK-LABEL: func.func @scatter_elements_max_ui8(
// CHECK: scf.for
// CHECK: %[[OLD:.*]] = tensor.extract %{{.*}} : tensor<3x4xi8>
// CHECK: %[[NEW:.*]] = arith.maxui %[[OLD]], %{{.*}} : i8
// CHECK: tensor.insert %[[NEW]] into
func.func @scatter_elements_max_ui8(%d: tensor<3x4xui8>, %i: tensor<2x3xi64>, %u: tensor<2x3xui8>) -> tensor<3x4xui8> {
  %0 = "onnx.ScatterElements"(%d, %i, %u) <{axis = 0 : i64, reduction = "max"}> : (tensor<3x4xui8>, tensor<2x3xi64>, tensor<2x3xui8>) -> tensor<3x4xui8>
  return %0 : tensor<3x4xui8>
}

// -----

// ScatterND writing whole slices: the nest runs over the updates
// [2, 3, 2]; the index tuple (one element) picks the row, the inner loops
// address the slice, and without a reduction the update is inserted as it
// is.
// CHECK-LABEL: func.func @scatter_nd(
// CHECK-SAME: %[[D:.*]]: tensor<4x3x2xf32>, %[[IDX:.*]]: tensor<2x1xi64>, %[[U:.*]]: tensor<2x3x2xf32>)
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%{{.*}} = %[[D]])
// CHECK: scf.for %[[J:.*]] = {{.*}} iter_args(
// CHECK: scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x3x2xf32>) {
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: tensor.extract %[[IDX]][%[[I]], %[[C0]]] : tensor<2x1xi64>
// CHECK: %[[ROW:.*]] = arith.minsi
// CHECK: %[[UPD:.*]] = tensor.extract %[[U]][%[[I]], %[[J]], %[[K]]] : tensor<2x3x2xf32>
// CHECK-NOT: arith.addf
// CHECK: tensor.insert %[[UPD]] into %[[ACC]][%[[ROW]], %[[J]], %[[K]]] : tensor<4x3x2xf32>
func.func @scatter_nd(%d: tensor<4x3x2xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3x2xf32>) -> tensor<4x3x2xf32> {
  %0 = "onnx.ScatterND"(%d, %i, %u) <{reduction = "none"}> : (tensor<4x3x2xf32>, tensor<2x1xi64>, tensor<2x3x2xf32>) -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
}

// -----

// ScatterND of single elements (k = rank): one loop, two index reads,
// each wrapped and clamped into its own dim (4 rows, 3 columns).
// CHECK-LABEL: func.func @scatter_nd_mul(
// CHECK-SAME: %[[D:.*]]: tensor<4x3xf32>, %[[IDX:.*]]: tensor<3x2xi64>, %[[U:.*]]: tensor<3xf32>)
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[D]]) -> (tensor<4x3xf32>) {
// CHECK-NOT: scf.for
// CHECK: tensor.extract %[[IDX]][%[[I]], %{{.*}}] : tensor<3x2xi64>
// CHECK: %[[ROWS:.*]] = arith.constant 4 : index
// CHECK: arith.addi %{{.*}}, %[[ROWS]] : index
// CHECK: %[[ROW:.*]] = arith.minsi
// CHECK: tensor.extract %[[IDX]][%[[I]], %{{.*}}] : tensor<3x2xi64>
// CHECK: %[[COLS:.*]] = arith.constant 3 : index
// CHECK: arith.addi %{{.*}}, %[[COLS]] : index
// CHECK: %[[COL:.*]] = arith.minsi
// CHECK: %[[UPD:.*]] = tensor.extract %[[U]][%[[I]]] : tensor<3xf32>
// CHECK: %[[OLD:.*]] = tensor.extract %[[ACC]][%[[ROW]], %[[COL]]] : tensor<4x3xf32>
// CHECK: %[[NEW:.*]] = arith.mulf %[[OLD]], %[[UPD]] : f32
// CHECK: tensor.insert %[[NEW]] into %[[ACC]][%[[ROW]], %[[COL]]]
func.func @scatter_nd_mul(%d: tensor<4x3xf32>, %i: tensor<3x2xi64>, %u: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = "onnx.ScatterND"(%d, %i, %u) <{reduction = "mul"}> : (tensor<4x3xf32>, tensor<3x2xi64>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
