// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-dim-symbols))' --split-input-file --verify-diagnostics | FileCheck %s
// kiln-dim-symbols (DimSymbols.cpp): which of the model's symbolic input
// dims each `?` is.

// Two dims: the scores are [S, T] and the Transpose swaps them; a Concat
// along S makes 2*S, expression 0 (id 2), a Concat of S and T makes
// S + T (id 3); the outputs are named.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<?x?xf32> {kiln.dim_names = ["S", "T"]}, tensor<?x?xf32> {kiln.dim_names = ["T", "S"]}, tensor<?x4xf32> {kiln.dim_names = ["2*S", ""]}, tensor<?x4xf32> {kiln.dim_names = ["S + T", ""]})
// CHECK-SAME: attributes {kiln.dim_exprs = [array<i64: 0, 2, 0>, array<i64: 0, 1, 1>], kiln.result_dim_names = {{\[}}["S", "T"], ["T", "S"], ["2*S", ""], ["S + T", ""]], kiln.result_dim_symbols = [array<i64: 0, 1>, array<i64: 1, 0>, array<i64: 2, -1>, array<i64: 3, -1>], kiln.symbol_names = ["S", "T"]}
// CHECK: onnx.MatMul{{.*}}kiln.dim_symbols = [array<i64: 0, 1>]
// CHECK: onnx.Transpose{{.*}}kiln.dim_symbols = [array<i64: 1, 0>]
// CHECK: onnx.Concat{{.*}}kiln.dim_symbols = [array<i64: 2, -1>]
// CHECK: onnx.Transpose{{.*}}kiln.dim_symbols = [array<i64: 1, -1>]
// CHECK: onnx.Concat{{.*}}kiln.dim_symbols = [array<i64: 3, -1>]
func.func @main(%a: tensor<?x4xf32> {kiln.dim_names = ["S", ""]},
                %b: tensor<4x?xf32> {kiln.dim_names = ["", "T"]})
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %m = "onnx.MatMul"(%a, %b) : (tensor<?x4xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>
  %t = "onnx.Transpose"(%m) <{perm = array<i64: 1, 0>}> : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %c = "onnx.Concat"(%a, %a) <{axis = 0 : i64}> : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %bt = "onnx.Transpose"(%b) <{perm = array<i64: 1, 0>}> : (tensor<4x?xf32>) -> tensor<?x4xf32>
  %st = "onnx.Concat"(%a, %bt) <{axis = 0 : i64}> : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %m, %t, %c, %st : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// One dim: [seq, seq] after a MatMul with the transpose, and Range's
// positions 0..seq; an Expand to a computed shape of twice its length is
// 2*seq; every other position (a rounded half) is not an expression.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<?x?xf32> {kiln.dim_names = ["seq", "seq"]}, tensor<?xf32> {kiln.dim_names = ["2*seq"]}, tensor<?xi64> {kiln.dim_names = ["seq"]}, tensor<?xi64> {kiln.dim_names = ["?"]})
// CHECK-SAME: attributes {kiln.dim_exprs = [array<i64: 0, 2>]
// CHECK: onnx.MatMul{{.*}}kiln.dim_symbols = [array<i64: 0, 0>]
// CHECK: onnx.Expand{{.*}}kiln.dim_symbols = [array<i64: 1>]
// CHECK: onnx.Range{{.*}}kiln.dim_symbols = [array<i64: 0>]
// CHECK: onnx.Range{{.*}}kiln.dim_symbols = [array<i64: -2>]
func.func @main(%a: tensor<?x4xf32> {kiln.dim_names = ["seq", ""]}) -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?xi64>, tensor<?xi64>) {
  %t = "onnx.Transpose"(%a) <{perm = array<i64: 1, 0>}> : (tensor<?x4xf32>) -> tensor<4x?xf32>
  %m = "onnx.MatMul"(%a, %t) : (tensor<?x4xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>
  %s = "onnx.Shape"(%a) : (tensor<?x4xf32>) -> tensor<2xi64>
  %c0 = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c2 = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = "onnx.Gather"(%s, %c0) {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %n2 = "onnx.Mul"(%n, %c2) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %one = "onnx.Constant"() {value = dense<1.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %e = "onnx.Expand"(%one, %n2) : (tensor<1xf32>, tensor<1xi64>) -> tensor<?xf32>
  // Positions 0..seq (torch's arange over the length) are the dim; every
  // other one is not.
  %z = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %i2 = "onnx.Constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %c0s = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %len = "onnx.Gather"(%s, %c0s) {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %pos = "onnx.Range"(%z, %len, %i1) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %even = "onnx.Range"(%z, %len, %i2) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %m, %e, %pos, %even : tensor<?x?xf32>, tensor<?xf32>, tensor<?xi64>, tensor<?xi64>
}

// -----

// Dims that the model adds must be equal: refused on the op.
func.func @main(%a: tensor<?xf32> {kiln.dim_names = ["S"]},
                %b: tensor<?xf32> {kiln.dim_names = ["T"]}) -> tensor<?xf32> {
  // expected-error @+1 {{Add: with the model's dynamic dims at different values ('S' = 211, 'T' = 227) this op's shapes do not fit}}
  %y = "onnx.Add"(%a, %b) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// Reshapes merging two dims: [S, T] flattened is the product S*T (id 5,
// after the three symbols and the two expressions), [2*S, T] is 2*S*T
// (the symbols first), [S + 1, T] is T*(S + 1), a product with an
// expression; three dims merged stay unknown.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<?xf32> {kiln.dim_names = ["S*T"]}, tensor<?xf32> {kiln.dim_names = ["2*S*T"]}, tensor<?xf32> {kiln.dim_names = ["T*(S + 1)"]}, tensor<?xf32> {kiln.dim_names = ["?"]})
// CHECK-SAME: kiln.dim_exprs = [array<i64: 0, 2, 0, 0>, array<i64: 1, 1, 0, 0>]
// CHECK-SAME: kiln.dim_products = [array<i64: 1, 0, 1>, array<i64: 2, 0, 1>, array<i64: 1, 1, 4>]
// CHECK-SAME: kiln.result_dim_symbols = [array<i64: 5>, array<i64: 6>, array<i64: 7>, array<i64: -2>]
func.func @main(%a: tensor<?x4xf32> {kiln.dim_names = ["S", ""]},
                %b: tensor<4x?xf32> {kiln.dim_names = ["", "T"]},
                %x: tensor<?x?x?xf32> {kiln.dim_names = ["S", "T", "U"]})
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %flat = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %m = "onnx.MatMul"(%a, %b) : (tensor<?x4xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>
  %f = "onnx.Reshape"(%m, %flat) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  %c = "onnx.Concat"(%a, %a) <{axis = 0 : i64}> : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %cm = "onnx.MatMul"(%c, %b) : (tensor<?x4xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>
  %cf = "onnx.Reshape"(%cm, %flat) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  %cls = "onnx.Constant"() {value = dense<1.0> : tensor<1x4xf32>} : () -> tensor<1x4xf32>
  %p = "onnx.Concat"(%cls, %a) <{axis = 0 : i64}> : (tensor<1x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %pm = "onnx.MatMul"(%p, %b) : (tensor<?x4xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>
  %pf = "onnx.Reshape"(%pm, %flat) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  %xf = "onnx.Reshape"(%x, %flat) : (tensor<?x?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %f, %cf, %pf, %xf : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
