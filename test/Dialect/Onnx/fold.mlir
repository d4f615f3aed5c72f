// RUN: kiln-opt %s --onnx-shape-inference --split-input-file | FileCheck %s
// Constant folding during --onnx-shape-inference: shape computations of
// exported models collapse to constants once shapes are static.

// The PyTorch export of `x.view(x.size(0), -1)`.
// CHECK-LABEL: func.func @pytorch_reshape_chain(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NOT: onnx.Shape
// CHECK-NOT: onnx.Gather
// CHECK-NOT: onnx.Unsqueeze
// CHECK-NOT: onnx.Concat
// CHECK: %[[SHAPE:.*]] = "onnx.Constant"() <{value = dense<[2, -1]> : tensor<2xi64>}>
// CHECK-NEXT: %[[R:.*]] = "onnx.Reshape"(%[[X]], %[[SHAPE]]) {{.*}}: (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
// CHECK-NEXT: return %[[R]] : tensor<2x12xf32>
func.func @pytorch_reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %s = "onnx.Shape"(%x) : (tensor<2x3x4xf32>) -> tensor<*xi64>
  %i0 = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %d0 = "onnx.Gather"(%s, %i0) {axis = 0 : i64} : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %ax = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %u0 = "onnx.Unsqueeze"(%d0, %ax) : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %m1 = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %cat = "onnx.Concat"(%u0, %m1) {axis = 0 : i64} : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %r = "onnx.Reshape"(%x, %cat) : (tensor<2x3x4xf32>, tensor<*xi64>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// A dynamic dim keeps Shape from folding: the chain stays and the Reshape
// only learns its rank.
// CHECK-LABEL: func.func @pytorch_reshape_chain_dynamic(
// CHECK-SAME: -> tensor<?x?xf32>
// CHECK: "onnx.Shape"{{.*}} -> tensor<3xi64>
// CHECK: "onnx.Gather"{{.*}} -> tensor<i64>
// CHECK: "onnx.Unsqueeze"{{.*}} -> tensor<1xi64>
// CHECK: "onnx.Concat"{{.*}} -> tensor<2xi64>
// CHECK: "onnx.Reshape"{{.*}} -> tensor<?x?xf32>
func.func @pytorch_reshape_chain_dynamic(%x: tensor<?x3x4xf32>) -> tensor<*xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?x3x4xf32>) -> tensor<*xi64>
  %i0 = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %d0 = "onnx.Gather"(%s, %i0) {axis = 0 : i64} : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %ax = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %u0 = "onnx.Unsqueeze"(%d0, %ax) : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %m1 = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %cat = "onnx.Concat"(%u0, %m1) {axis = 0 : i64} : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %r = "onnx.Reshape"(%x, %cat) : (tensor<?x3x4xf32>, tensor<*xi64>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @shape_size_gather(
// CHECK-NOT: onnx.Shape
// CHECK-NOT: onnx.Size
// CHECK-NOT: onnx.Gather
// CHECK-DAG: %[[S:.*]] = "onnx.Constant"() <{value = dense<[3, 4]> : tensor<2xi64>}>
// CHECK-DAG: %[[N:.*]] = "onnx.Constant"() <{value = dense<24> : tensor<i64>}>
// CHECK-DAG: %[[G:.*]] = "onnx.Constant"() <{value = dense<{{\[}}[4, 2], [3, 4]]> : tensor<2x2xi64>}>
// CHECK: return %[[S]], %[[N]], %[[G]]
func.func @shape_size_gather(%x: tensor<2x3x4xf32>) -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) {
  %s = "onnx.Shape"(%x) {start = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<*xi64>
  %n = "onnx.Size"(%x) : (tensor<2x3x4xf32>) -> tensor<*xi64>
  %full = "onnx.Shape"(%x) : (tensor<2x3x4xf32>) -> tensor<*xi64>
  %idx = "onnx.Constant"() {value = dense<[[2, 0], [1, -1]]> : tensor<2x2xi64>} : () -> tensor<2x2xi64>
  %g = "onnx.Gather"(%full, %idx) : (tensor<*xi64>, tensor<2x2xi64>) -> tensor<*xi64>
  return %s, %n, %g : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>
}

// -----

// CHECK-LABEL: func.func @cast(
// CHECK-NOT: onnx.Cast
// CHECK-DAG: %[[F:.*]] = "onnx.Constant"() <{value = dense<[1.000000e+00, -2.000000e+00, 3.000000e+00]> : tensor<3xf32>}>
// CHECK-DAG: %[[I:.*]] = "onnx.Constant"() <{value = dense<[4, -5]> : tensor<2xi32>}>
// CHECK-DAG: %[[B:.*]] = "onnx.Constant"() <{value = dense<[false, true, true]> : tensor<3xi1>}>
// CHECK: return %[[F]], %[[I]], %[[B]]
func.func @cast() -> (tensor<*xf32>, tensor<*xi32>, tensor<*xi1>) {
  %i = "onnx.Constant"() {value = dense<[1, -2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = "onnx.Cast"(%i) {to = 1 : i64} : (tensor<3xi64>) -> tensor<*xf32>
  %f = "onnx.Constant"() {value = dense<[4.0, -5.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %1 = "onnx.Cast"(%f) {to = 6 : i64} : (tensor<2xf32>) -> tensor<*xi32>
  // Float to bool: only +/-0 is false.
  %z = "onnx.Constant"() {value = dense<[0.0, 2.5, -0.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %2 = "onnx.Cast"(%z) {to = 9 : i64} : (tensor<3xf32>) -> tensor<*xi1>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xi32>, tensor<*xi1>
}

// -----

// CHECK-LABEL: func.func @constant_of_shape(
// CHECK-NOT: onnx.ConstantOfShape
// CHECK-DAG: %[[A:.*]] = "onnx.Constant"() <{value = dense<5> : tensor<2x3xi64>}>
// CHECK-DAG: %[[B:.*]] = "onnx.Constant"() <{value = dense<0.000000e+00> : tensor<4xf32>}>
// CHECK: return %[[A]], %[[B]] : tensor<2x3xi64>, tensor<4xf32>
func.func @constant_of_shape() -> (tensor<*xi64>, tensor<*xf32>) {
  %s = "onnx.Constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.ConstantOfShape"(%s) {value = dense<5> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<*xi64>
  %t = "onnx.Constant"() {value = dense<[4]> : tensor<1xi64>} : () -> tensor<1xi64>
  // No value: float 0.
  %1 = "onnx.ConstantOfShape"(%t) : (tensor<1xi64>) -> tensor<*xf32>
  return %0, %1 : tensor<*xi64>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @range(
// CHECK-NOT: onnx.Range
// CHECK-DAG: %[[A:.*]] = "onnx.Constant"() <{value = dense<[0, 3, 6, 9]> : tensor<4xi64>}>
// CHECK-DAG: %[[B:.*]] = "onnx.Constant"() <{value = dense<[5, 3, 1]> : tensor<3xi32>}>
// CHECK-DAG: %[[C:.*]] = "onnx.Constant"() <{value = dense<[1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<3xf32>}>
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @range() -> (tensor<*xi64>, tensor<*xi32>, tensor<*xf32>) {
  %c0 = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %c10 = "onnx.Constant"() {value = dense<10> : tensor<i64>} : () -> tensor<i64>
  %c3 = "onnx.Constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.Range"(%c0, %c10, %c3) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  %i5 = "onnx.Constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
  %i0 = "onnx.Constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %im2 = "onnx.Constant"() {value = dense<-2> : tensor<i32>} : () -> tensor<i32>
  %1 = "onnx.Range"(%i5, %i0, %im2) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<*xi32>
  %f1 = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %f2 = "onnx.Constant"() {value = dense<2.1> : tensor<f32>} : () -> tensor<f32>
  %fd = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %2 = "onnx.Range"(%f1, %f2, %fd) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xi64>, tensor<*xi32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @integer_arith(
// CHECK-NOT: onnx.Add
// CHECK-NOT: onnx.Sub
// CHECK-NOT: onnx.Mul
// CHECK-NOT: onnx.Div
// CHECK-DAG: %[[ADD:.*]] = "onnx.Constant"() <{value = dense<[11, 12, 13]> : tensor<3xi64>}>
// CHECK-DAG: %[[SUB:.*]] = "onnx.Constant"() <{value = dense<{{\[}}[-9, -19], [-8, -18]]> : tensor<2x2xi64>}>
// CHECK-DAG: %[[MUL:.*]] = "onnx.Constant"() <{value = dense<[10, 20, 30]> : tensor<3xi64>}>
// CHECK-DAG: %[[DIV:.*]] = "onnx.Constant"() <{value = dense<[3, -3, 0]> : tensor<3xi64>}>
// CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]]
func.func @integer_arith() -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) {
  %a = "onnx.Constant"() {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %ten = "onnx.Constant"() {value = dense<10> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.Add"(%a, %ten) : (tensor<3xi64>, tensor<i64>) -> tensor<*xi64>
  %col = "onnx.Constant"() {value = dense<[[1], [2]]> : tensor<2x1xi64>} : () -> tensor<2x1xi64>
  %row = "onnx.Constant"() {value = dense<[10, 20]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1 = "onnx.Sub"(%col, %row) : (tensor<2x1xi64>, tensor<2xi64>) -> tensor<*xi64>
  %2 = "onnx.Mul"(%ten, %a) : (tensor<i64>, tensor<3xi64>) -> tensor<*xi64>
  // Integer division truncates toward zero.
  %n = "onnx.Constant"() {value = dense<[7, -7, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %d = "onnx.Constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %3 = "onnx.Div"(%n, %d) : (tensor<3xi64>, tensor<1xi64>) -> tensor<*xi64>
  return %0, %1, %2, %3 : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>
}

// -----

// Integer division by zero is left for run time.
// CHECK-LABEL: func.func @div_by_zero(
// CHECK-SAME: -> tensor<2xi64>
// CHECK: %[[D:.*]] = "onnx.Div"(%{{.*}}, %{{.*}}) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK: return %[[D]]
func.func @div_by_zero() -> tensor<*xi64> {
  %a = "onnx.Constant"() {value = dense<[4, 6]> : tensor<2xi64>} : () -> tensor<2xi64>
  %b = "onnx.Constant"() {value = dense<[2, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Div"(%a, %b) : (tensor<2xi64>, tensor<2xi64>) -> tensor<*xi64>
  return %0 : tensor<*xi64>
}

// -----

// CHECK-LABEL: func.func @neg_equal_where(
// CHECK-NOT: onnx.Neg
// CHECK-NOT: onnx.Equal
// CHECK-NOT: onnx.Where
// CHECK-DAG: %[[NEG:.*]] = "onnx.Constant"() <{value = dense<[-1, 2, 0]> : tensor<3xi64>}>
// CHECK-DAG: %[[EQ:.*]] = "onnx.Constant"() <{value = dense<[true, false, true]> : tensor<3xi1>}>
// CHECK-DAG: %[[WHERE:.*]] = "onnx.Constant"() <{value = dense<{{\[}}[1, 7, 3], [7, 2, 7]]> : tensor<2x3xi64>}>
// CHECK: return %[[NEG]], %[[EQ]], %[[WHERE]]
func.func @neg_equal_where() -> (tensor<*xi64>, tensor<*xi1>, tensor<*xi64>) {
  %a = "onnx.Constant"() {value = dense<[1, -2, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = "onnx.Neg"(%a) : (tensor<3xi64>) -> tensor<*xi64>
  %b = "onnx.Constant"() {value = dense<[1, 2, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
  %1 = "onnx.Equal"(%a, %b) : (tensor<3xi64>, tensor<3xi64>) -> tensor<*xi1>
  // Where broadcasts all three operands.
  %cond = "onnx.Constant"() {value = dense<[[true, false, true], [false, true, false]]> : tensor<2x3xi1>} : () -> tensor<2x3xi1>
  %x = "onnx.Constant"() {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %y = "onnx.Constant"() {value = dense<7> : tensor<i64>} : () -> tensor<i64>
  %2 = "onnx.Where"(%cond, %x, %y) : (tensor<2x3xi1>, tensor<3xi64>, tensor<i64>) -> tensor<*xi64>
  return %0, %1, %2 : tensor<*xi64>, tensor<*xi1>, tensor<*xi64>
}

// -----

// CHECK-LABEL: func.func @expand_slice(
// CHECK-NOT: onnx.Expand
// CHECK-NOT: onnx.Slice
// CHECK-DAG: %[[E:.*]] = "onnx.Constant"() <{value = dense<{{\[}}[1, 2], [1, 2], [1, 2]]> : tensor<3x2xi64>}>
// CHECK-DAG: %[[S:.*]] = "onnx.Constant"() <{value = dense<[1, 3, 5]> : tensor<3xi64>}>
// CHECK-DAG: %[[R:.*]] = "onnx.Constant"() <{value = dense<[9, 6, 3]> : tensor<3xi64>}>
// CHECK: return %[[E]], %[[S]], %[[R]]
func.func @expand_slice() -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) {
  %v = "onnx.Constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %sh = "onnx.Constant"() {value = dense<[3, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Expand"(%v, %sh) : (tensor<2xi64>, tensor<2xi64>) -> tensor<*xi64>
  %none = onnx.NoValue
  %data = "onnx.Constant"() {value = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<10xi64>} : () -> tensor<10xi64>
  %s1 = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e7 = "onnx.Constant"() {value = dense<[7]> : tensor<1xi64>} : () -> tensor<1xi64>
  %st2 = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %1 = "onnx.Slice"(%data, %s1, %e7, %none, %st2) : (tensor<10xi64>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<*xi64>
  // From the end (clamped) down to index 1 exclusive, step -3: {9, 6, 3}.
  %s100 = "onnx.Constant"() {value = dense<[100]> : tensor<1xi64>} : () -> tensor<1xi64>
  %stm3 = "onnx.Constant"() {value = dense<[-3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %2 = "onnx.Slice"(%data, %s100, %s1, %none, %stm3) : (tensor<10xi64>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<*xi64>
  return %0, %1, %2 : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>
}

// -----

// CHECK-LABEL: func.func @identity(
// CHECK-SAME: %[[X:.*]]: tensor<2xf32>) -> tensor<2xf32>
// CHECK-NOT: onnx.Identity
// CHECK: return %[[X]] : tensor<2xf32>
func.func @identity(%x: tensor<2xf32>) -> tensor<*xf32> {
  %0 = "onnx.Identity"(%x) : (tensor<2xf32>) -> tensor<*xf32>
  %1 = "onnx.Identity"(%0) : (tensor<*xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_like_of_constants(
// CHECK-NOT: onnx.Squeeze
// CHECK-NOT: onnx.Unsqueeze
// CHECK-NOT: onnx.Flatten
// CHECK-DAG: %[[SQ:.*]] = "onnx.Constant"() <{value = dense<[1, 2, 3]> : tensor<3xi64>}>
// CHECK-DAG: %[[UN:.*]] = "onnx.Constant"() <{value = dense<{{\[}}[1], [2], [3]]> : tensor<3x1xi64>}>
// CHECK-DAG: %[[FL:.*]] = "onnx.Constant"() <{value = dense<{{\[}}[1, 2, 3, 4, 5, 6]]> : tensor<1x6xi64>}>
// CHECK: return %[[SQ]], %[[UN]], %[[FL]]
func.func @reshape_like_of_constants() -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) {
  %none = onnx.NoValue
  %a = "onnx.Constant"() {value = dense<[[1, 2, 3]]> : tensor<1x3xi64>} : () -> tensor<1x3xi64>
  %0 = "onnx.Squeeze"(%a, %none) : (tensor<1x3xi64>, none) -> tensor<*xi64>
  %ax = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %1 = "onnx.Unsqueeze"(%0, %ax) : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %m = "onnx.Constant"() {value = dense<[[[1, 2], [3, 4], [5, 6]]]> : tensor<1x3x2xi64>} : () -> tensor<1x3x2xi64>
  %2 = "onnx.Flatten"(%m) {axis = 0 : i64} : (tensor<1x3x2xi64>) -> tensor<*xi64>
  return %0, %1, %2 : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>
}

// -----

// Operands that are not constants: nothing folds, only shapes are refined
// (a Cast to the input's own type is the input).
// CHECK-LABEL: func.func @no_fold_non_constant(
// CHECK-SAME: %[[X:.*]]: tensor<3xi64>) -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>)
// CHECK: %[[C:.*]] = "onnx.Constant"() <{value = dense<[1, 2, 3]> : tensor<3xi64>}>
// CHECK: %[[ADD:.*]] = "onnx.Add"(%[[X]], %[[C]]) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
// CHECK: %[[NEG:.*]] = "onnx.Neg"(%[[X]]) : (tensor<3xi64>) -> tensor<3xi64>
// CHECK-NOT: onnx.Cast
// CHECK: return %[[ADD]], %[[NEG]], %[[X]]
func.func @no_fold_non_constant(%x: tensor<3xi64>) -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) {
  %c = "onnx.Constant"() {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = "onnx.Add"(%x, %c) : (tensor<3xi64>, tensor<3xi64>) -> tensor<*xi64>
  %1 = "onnx.Neg"(%x) : (tensor<3xi64>) -> tensor<*xi64>
  %2 = "onnx.Cast"(%x) {to = 7 : i64} : (tensor<3xi64>) -> tensor<*xi64>
  return %0, %1, %2 : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>
}

// -----

// Bools cast to 1, not to the -1 of a sign-extended i1.
// CHECK-LABEL: func.func @cast_bool(
// CHECK-DAG: dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-DAG: dense<[1, 0]> : tensor<2xi64>
func.func @cast_bool() -> (tensor<*xf32>, tensor<*xi64>) {
  %b = "onnx.Constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %0 = "onnx.Cast"(%b) {to = 1 : i64} : (tensor<2xi1>) -> tensor<*xf32>
  %1 = "onnx.Cast"(%b) {to = 7 : i64} : (tensor<2xi1>) -> tensor<*xi64>
  return %0, %1 : tensor<*xf32>, tensor<*xi64>
}

// -----

// Float Equal follows IEEE: 0 == -0, NaN != NaN.
// CHECK-LABEL: func.func @equal_ieee(
// CHECK: dense<[true, false, true]> : tensor<3xi1>
func.func @equal_ieee() -> tensor<*xi1> {
  %a = "onnx.Constant"() {value = dense<[0.0, 0x7FC00000, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %b = "onnx.Constant"() {value = dense<[-0.0, 0x7FC00000, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = "onnx.Equal"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<*xi1>
  return %0 : tensor<*xi1>
}
