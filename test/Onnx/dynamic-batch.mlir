// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-dynamic-batch))' --split-input-file --verify-diagnostics | FileCheck %s
// kiln-dynamic-batch (DynamicBatch.cpp) on a batch merged with other dims:
// where a Reshape puts the batch, and what may follow it.

// [5, 1, 8] with the batch at axis 1 reshaped to [5, 2, 4]: the model run
// for the whole batch may hold [5*N, 2, 4] or [5, N*2, 4]. The dims seen to
// grow at batch 2 (kiln.batch_growth, from kiln-dynamic-batch-values)
// decide: axis 1, the heads; transposed, multiplied batch by batch and put
// back, the output carries the batch as its own leading dim.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<1x5x8xf32> {kiln.dynamic_dim = "N"})
func.func @main(%x: tensor<1x5x8xf32> {kiln.dynamic_dim = "N"}) -> tensor<1x5x8xf32> {
  %t = "onnx.Transpose"(%x) <{perm = array<i64: 1, 0, 2>}> : (tensor<1x5x8xf32>) -> tensor<5x1x8xf32>
  %s = "onnx.Constant"() <{value = dense<[5, 2, 4]> : tensor<3xi64>}> : () -> tensor<3xi64>
  %h = "onnx.Reshape"(%t, %s) {kiln.batch_growth = array<i64: 0, 1, 0>} : (tensor<5x1x8xf32>, tensor<3xi64>) -> tensor<5x2x4xf32>
  %q = "onnx.Transpose"(%h) <{perm = array<i64: 1, 0, 2>}> : (tensor<5x2x4xf32>) -> tensor<2x5x4xf32>
  %k = "onnx.Transpose"(%h) <{perm = array<i64: 1, 2, 0>}> : (tensor<5x2x4xf32>) -> tensor<2x4x5xf32>
  %a = "onnx.MatMul"(%q, %k) : (tensor<2x5x4xf32>, tensor<2x4x5xf32>) -> tensor<2x5x5xf32>
  %p = "onnx.Softmax"(%a) <{axis = -1 : i64}> : (tensor<2x5x5xf32>) -> tensor<2x5x5xf32>
  %o = "onnx.MatMul"(%p, %q) : (tensor<2x5x5xf32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  %b = "onnx.Transpose"(%o) <{perm = array<i64: 1, 0, 2>}> : (tensor<2x5x4xf32>) -> tensor<5x2x4xf32>
  %s2 = "onnx.Constant"() <{value = dense<[5, 1, 8]> : tensor<3xi64>}> : () -> tensor<3xi64>
  %r = "onnx.Reshape"(%b, %s2) {kiln.batch_growth = array<i64: 0, 1, 0>} : (tensor<5x2x4xf32>, tensor<3xi64>) -> tensor<5x1x8xf32>
  %y = "onnx.Transpose"(%r) <{perm = array<i64: 1, 0, 2>}> : (tensor<5x1x8xf32>) -> tensor<1x5x8xf32>
  return %y : tensor<1x5x8xf32>
}

// -----

// The same Reshape without the probe's dims: both fit, and the batch is
// not outermost in its input (where the leading dim would be the guess).
func.func @main(%x: tensor<1x5x8xf32> {kiln.dynamic_dim = "N"}) -> tensor<5x2x4xf32> {
  %t = "onnx.Transpose"(%x) <{perm = array<i64: 1, 0, 2>}> : (tensor<1x5x8xf32>) -> tensor<5x1x8xf32>
  %s = "onnx.Constant"() <{value = dense<[5, 2, 4]> : tensor<3xi64>}> : () -> tensor<3xi64>
  // expected-error @+1 {{cannot run the dynamic batch dim 'N' one item at a time: kiln cannot tell which of its result dims holds the batch}}
  %h = "onnx.Reshape"(%t, %s) : (tensor<5x1x8xf32>, tensor<3xi64>) -> tensor<5x2x4xf32>
  return %h : tensor<5x2x4xf32>
}

// -----

// One dim fits: [1, 4, 8] to [4, 8] puts the batch outside the 4 rows
// ([N*4, 8]); a batch-independent [4, 8] operand would be added to N*4 rows.
func.func @main(%x: tensor<1x4x8xf32> {kiln.dynamic_dim = "N"}, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = "onnx.Constant"() <{value = dense<[4, 8]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %s) : (tensor<1x4x8xf32>, tensor<2xi64>) -> tensor<4x8xf32>
  // expected-error @+1 {{an operand that does not depend on the batch spans the dim the batch is merged with}}
  %y = "onnx.Add"(%r, %c) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Rows of [N*4, 8] are independent (a bias broadcast along them is fine),
// but an output must have the batch as a dim of its own.
// expected-error @+1 {{graph output #0 carries the dynamic batch dim 'N' merged with other dims, not as a dim of its own}}
func.func @main(%x: tensor<1x4x8xf32> {kiln.dynamic_dim = "N"}, %c: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = "onnx.Constant"() <{value = dense<[4, 8]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %s) : (tensor<1x4x8xf32>, tensor<2xi64>) -> tensor<4x8xf32>
  %y = "onnx.Add"(%r, %c) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The growth seen at batch 2 rules out the dim that would fit: [1, 12] to
// [3, 4] could be [N*3, 4], but the probe saw [3, 8].
func.func @main(%x: tensor<1x12xf32> {kiln.dynamic_dim = "N"}) -> tensor<3x4xf32> {
  %s = "onnx.Constant"() <{value = dense<[3, 4]> : tensor<2xi64>}> : () -> tensor<2xi64>
  // expected-error @+1 {{it splits the batch across dims}}
  %r = "onnx.Reshape"(%x, %s) {kiln.batch_growth = array<i64: 0, 1>} : (tensor<1x12xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// Flatten knows where the batch goes: [4, N, 8] flattened at axis 2 is
// [4*N, 8] (rows, inner size 1), which a MatMul and a Reshape put back.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<1x4x8xf32> {kiln.dynamic_dim = "N"})
func.func @main(%x: tensor<1x4x8xf32> {kiln.dynamic_dim = "N"}, %w: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  %t = "onnx.Transpose"(%x) <{perm = array<i64: 1, 0, 2>}> : (tensor<1x4x8xf32>) -> tensor<4x1x8xf32>
  %f = "onnx.Flatten"(%t) <{axis = 2 : i64}> : (tensor<4x1x8xf32>) -> tensor<4x8xf32>
  %m = "onnx.MatMul"(%f, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = "onnx.Constant"() <{value = dense<[4, 1, 8]> : tensor<3xi64>}> : () -> tensor<3xi64>
  %r = "onnx.Reshape"(%m, %s) {kiln.batch_growth = array<i64: 0, 1, 0>} : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<4x1x8xf32>
  %y = "onnx.Transpose"(%r) <{perm = array<i64: 1, 0, 2>}> : (tensor<4x1x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// At axis 0 every item lands in the one row: [1, N*32].
// expected-error @+1 {{graph output #0 carries the dynamic batch dim 'N' at axis 1, not as its leading dim}}
func.func @main(%x: tensor<1x4x8xf32> {kiln.dynamic_dim = "N"}) -> tensor<1x32xf32> {
  %f = "onnx.Flatten"(%x) <{axis = 0 : i64}> : (tensor<1x4x8xf32>) -> tensor<1x32xf32>
  return %f : tensor<1x32xf32>
}

// -----

// A dim seen to grow that cannot hold the batch: the one that fits does
// not decide ([1, 6] to [2, 3] with the second dim growing).
func.func @main(%x: tensor<1x6xf32> {kiln.dynamic_dim = "N"}) -> tensor<2x3xf32> {
  %s = "onnx.Constant"() <{value = dense<[2, 3]> : tensor<2xi64>}> : () -> tensor<2xi64>
  // expected-error @+1 {{it splits the batch across dims}}
  %r = "onnx.Reshape"(%x, %s) {kiln.batch_growth = array<i64: -1, 1>} : (tensor<1x6xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Einsum: the batch at one letter of the batched operands, kept in the
// output (here at axis 1, transposed back to lead).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<1x3x5xf32> {kiln.dynamic_dim = "N"})
func.func @main(%x: tensor<1x3x4xf32> {kiln.dynamic_dim = "N"}) -> tensor<1x3x5xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<4x5xf32>}> : () -> tensor<4x5xf32>
  %e = "onnx.Einsum"(%x, %w) <{equation = "bij,jk->ibk"}> : (tensor<1x3x4xf32>, tensor<4x5xf32>) -> tensor<3x1x5xf32>
  %y = "onnx.Transpose"(%e) <{perm = array<i64: 1, 0, 2>}> : (tensor<3x1x5xf32>) -> tensor<1x3x5xf32>
  return %y : tensor<1x3x5xf32>
}

// -----

func.func @main(%x: tensor<1x3x4xf32> {kiln.dynamic_dim = "N"}) -> tensor<3x4xf32> {
  // expected-error @+1 {{it sums over the batch}}
  %e = "onnx.Einsum"(%x) <{equation = "bij->ij"}> : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
  return %e : tensor<3x4xf32>
}

// -----

func.func @main(%x: tensor<1x3x4xf32> {kiln.dynamic_dim = "N"}) -> tensor<1x3x3xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<1x4x3xf32>}> : () -> tensor<1x4x3xf32>
  // expected-error @+1 {{an operand that does not depend on the batch has its letter}}
  %e = "onnx.Einsum"(%x, %w) <{equation = "bij,bjk->bik"}> : (tensor<1x3x4xf32>, tensor<1x4x3xf32>) -> tensor<1x3x3xf32>
  return %e : tensor<1x3x3xf32>
}
