// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// If, Scan and Loop (ControlFlow.cpp), the first step of the conversion:
// each becomes scf around its subgraph's onnx ops, moved in place and then
// lowered there by the other patterns:
//   - If: scf.if on the tensor.extract of the condition (rank 0 or [1]);
//     each branch's ops lowered inside it, its onnx.Yield an scf.yield.
//     In the generic form the regions are (else_branch, then_branch), the
//     ONNX attribute order: the FIRST region is the else branch;
//   - Scan: scf.for 0..length carrying the states and the scan outputs
//     (both fresh linalg.copy'd buffers, the outputs zero-filled); each
//     step extract_slices the scan inputs at t (length-1 - t, an
//     arith.subi, when reversed), inserts the step's outputs, and then
//     linalg.copy's the new states over the iteration arguments so that
//     the loop's results share their buffers;
//   - Loop: scf.for to a static bound (the constant trip count, else the
//     scan outputs' declared length) carrying an i1 condition first; one
//     scf.if per step on cond (&& t < M when there is a trip count) runs
//     the body (iter_num = tensor.from_elements of the index_cast of t),
//     records the scan outputs at t and copies the carried values; its
//     else yields false and everything unchanged;
//   - subgraph arguments without a shape get the operands' static types
//     and the body's shapes are re-inferred before lowering.
// What cannot be lowered is tested in control-flow-invalid.mlir.

// If whose branches compute: the condition is read with tensor.extract
// (no indices for rank 0) and used directly; the then region holds the
// lowered Add (arith.addf), the else region the lowered Mul, each yielding
// its generic; the function returns the scf.if's result and nothing of
// onnx is left.
// CHECK-LABEL: func.func @if_branches(
// CHECK-SAME: %[[C:[a-z0-9_]+]]: tensor<i1>, %[[X:[a-z0-9_]+]]: tensor<2x3xf32>, %[[Y:[a-z0-9_]+]]: tensor<2x3xf32>)
// CHECK: %[[COND:.*]] = tensor.extract %[[C]][] : tensor<i1>
// CHECK-NEXT: %[[IF:.*]] = scf.if %[[COND]] -> (tensor<2x3xf32>) {
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT: %[[ADD:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[Y]] : tensor<2x3xf32>, tensor<2x3xf32>) outs(%[[E1]] : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<2x3xf32>
// CHECK-NEXT: scf.yield %[[ADD]] : tensor<2x3xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT: %[[MUL:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[Y]] : tensor<2x3xf32>, tensor<2x3xf32>) outs(%[[E2]] : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<2x3xf32>
// CHECK-NEXT: scf.yield %[[MUL]] : tensor<2x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[IF]] : tensor<2x3xf32>
// CHECK-NOT: onnx.
func.func @if_branches(%c: tensor<i1>, %x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.If"(%c) ({
    %1 = "onnx.Mul"(%x, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    onnx.Yield %1 : tensor<2x3xf32>
  }, {
    %1 = "onnx.Add"(%x, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    onnx.Yield %1 : tensor<2x3xf32>
  }) : (tensor<i1>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// If on a [1] condition with two results: the condition is extracted at
// index 0; each branch yields both values in order, the then branch an
// outer value untouched and its own constant, the else branch the
// negation and the other constant.
// CHECK-LABEL: func.func @if_two_results(
// CHECK-SAME: %[[C:[a-z0-9_]+]]: tensor<1xi1>, %[[X:[a-z0-9_]+]]: tensor<4xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[COND:.*]] = tensor.extract %[[C]][%[[ZERO]]] : tensor<1xi1>
// CHECK-NEXT: %[[IF:.*]]:2 = scf.if %[[COND]] -> (tensor<4xf32>, tensor<i64>) {
// CHECK-NEXT: %[[ONE:.*]] = arith.constant dense<1> : tensor<i64>
// CHECK-NEXT: scf.yield %[[X]], %[[ONE]] : tensor<4xf32>, tensor<i64>
// CHECK-NEXT: } else {
// CHECK: %[[NEG:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<4xf32>)
// CHECK: arith.negf
// CHECK: %[[Z:.*]] = arith.constant dense<0> : tensor<i64>
// CHECK-NEXT: scf.yield %[[NEG]], %[[Z]] : tensor<4xf32>, tensor<i64>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[IF]]#0, %[[IF]]#1 : tensor<4xf32>, tensor<i64>
func.func @if_two_results(%c: tensor<1xi1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<i64>) {
  %0:2 = "onnx.If"(%c) ({
    %1 = "onnx.Neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "onnx.Constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    onnx.Yield %1, %2 : tensor<4xf32>, tensor<i64>
  }, {
    %2 = "onnx.Constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    onnx.Yield %x, %2 : tensor<4xf32>, tensor<i64>
  }) : (tensor<1xi1>) -> (tensor<4xf32>, tensor<i64>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<i64>
}

// -----

// Scan (opset 9+) as a running sum, ONNX's test_scan9_sum: the state is
// a linalg.copy of the initial value into a fresh buffer and the scan
// output a copy of zeros; scf.for 0..3 carries both; step t slices row t
// of the scan input, adds it to the carried state, inserts the sum into
// row t of the carried output, and only then copies the sum over the
// state's iteration argument; the function returns the loop's results.
// CHECK-LABEL: func.func @scan_sum(
// CHECK-SAME: %[[INIT:[a-z0-9_]+]]: tensor<2xf32>, %[[X:[a-z0-9_]+]]: tensor<3x2xf32>)
// CHECK: %[[SE:.*]] = tensor.empty() : tensor<2xf32>
// CHECK-NEXT: %[[S0:.*]] = linalg.copy ins(%[[INIT]] : tensor<2xf32>) outs(%[[SE]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<3x2xf32>
// CHECK-NEXT: %[[ZE:.*]] = tensor.empty() : tensor<3x2xf32>
// CHECK-NEXT: %[[Z0:.*]] = linalg.copy ins(%[[ZEROS]] : tensor<3x2xf32>) outs(%[[ZE]] : tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[UB:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[STEP:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[LOOP:[a-z0-9_]+]]:2 = scf.for %[[T:[a-z0-9_]+]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[S:[a-z0-9_]+]] = %[[S0]], %[[Z:[a-z0-9_]+]] = %[[Z0]]) -> (tensor<2xf32>, tensor<3x2xf32>) {
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[X]][%[[T]], 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<2xf32>
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: ins(%[[S]], %[[XT]] : tensor<2xf32>, tensor<2xf32>)
// CHECK: arith.addf
// CHECK: %[[ZN:.*]] = tensor.insert_slice %[[SUM]] into %[[Z]][%[[T]], 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<3x2xf32>
// CHECK-NEXT: %[[SN:.*]] = linalg.copy ins(%[[SUM]] : tensor<2xf32>) outs(%[[S]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: scf.yield %[[SN]], %[[ZN]] : tensor<2xf32>, tensor<3x2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[LOOP]]#0, %[[LOOP]]#1 : tensor<2xf32>, tensor<3x2xf32>
// CHECK-NOT: onnx.
func.func @scan_sum(%init: tensor<2xf32>, %x: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %0:2 = "onnx.Scan"(%init, %x) <{num_scan_inputs = 1 : i64}> ({
  ^bb0(%s: tensor<2xf32>, %xi: tensor<2xf32>):
    %1 = "onnx.Add"(%s, %xi) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %2 = "onnx.Identity"(%1) : (tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %1, %2 : tensor<2xf32>, tensor<2xf32>
  }) : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

// scan_input_directions = [1], with a body whose arguments have no shape
// (as exporters often leave them): step t reads row 2 - t (arith.subi
// from the constant length - 1), while the forward scan output is still
// written at row t; the body's Add is re-inferred to tensor<2xf32> and
// lowered on the static slice.
// CHECK-LABEL: func.func @scan_reverse(
// CHECK-SAME: %[[INIT:[a-z0-9_]+]]: tensor<2xf32>, %[[X:[a-z0-9_]+]]: tensor<3x2xf32>)
// CHECK: %[[LOOP:[a-z0-9_]+]]:2 = scf.for %[[T:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S:[a-z0-9_]+]] = %{{.*}}, %[[Z:[a-z0-9_]+]] = %{{.*}}) -> (tensor<2xf32>, tensor<3x2xf32>) {
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[REV:.*]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK-NEXT: %[[XT:.*]] = tensor.extract_slice %[[X]][%[[REV]], 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<2xf32>
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: ins(%[[S]], %[[XT]] : tensor<2xf32>, tensor<2xf32>)
// CHECK: arith.addf
// CHECK: } -> tensor<2xf32>
// CHECK-NEXT: %[[ZN:.*]] = tensor.insert_slice %[[SUM]] into %[[Z]][%[[T]], 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<3x2xf32>
// CHECK-NEXT: %[[SN:.*]] = linalg.copy ins(%[[SUM]] : tensor<2xf32>) outs(%[[S]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: scf.yield %[[SN]], %[[ZN]] : tensor<2xf32>, tensor<3x2xf32>
// CHECK-NOT: onnx.
func.func @scan_reverse(%init: tensor<2xf32>, %x: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %0:2 = "onnx.Scan"(%init, %x) <{num_scan_inputs = 1 : i64, scan_input_directions = array<i64: 1>}> ({
  ^bb0(%s: tensor<*xf32>, %xi: tensor<*xf32>):
    %1 = "onnx.Add"(%s, %xi) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
    onnx.Yield %1, %1 : tensor<*xf32>, tensor<*xf32>
  }) : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

// scan_input_axes = [1] and scan_output_directions = [1], with an If in
// the body: the loop runs over the 4 columns, slicing column t
// ([0, t] [3, 1]); the inner If is lowered after the Scan, inside the
// loop (an scf.if reading the column and the carried state); the scan
// output (here the column itself) goes to row 3 - t.
// CHECK-LABEL: func.func @scan_axis_nested_if(
// CHECK-SAME: %[[INIT:[a-z0-9_]+]]: tensor<3xf32>, %[[X:[a-z0-9_]+]]: tensor<3x4xf32>, %[[C:[a-z0-9_]+]]: tensor<i1>)
// CHECK: %[[UB:.*]] = arith.constant 4 : index
// CHECK: %[[LOOP:[a-z0-9_]+]]:2 = scf.for %[[T:[a-z0-9_]+]] = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%[[S:[a-z0-9_]+]] = %{{.*}}, %[[Z:[a-z0-9_]+]] = %{{.*}}) -> (tensor<3xf32>, tensor<4x3xf32>) {
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[REV:.*]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK-NEXT: %[[XT:.*]] = tensor.extract_slice %[[X]][0, %[[T]]] [3, 1] [1, 1] : tensor<3x4xf32> to tensor<3xf32>
// CHECK: %[[COND:.*]] = tensor.extract %[[C]][] : tensor<i1>
// CHECK-NEXT: %[[IF:.*]] = scf.if %[[COND]] -> (tensor<3xf32>) {
// CHECK: ins(%[[S]], %[[XT]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.addf
// CHECK: scf.yield
// CHECK: } else {
// CHECK: ins(%[[S]], %[[XT]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.subf
// CHECK: scf.yield
// CHECK: }
// CHECK-NEXT: %[[ZN:.*]] = tensor.insert_slice %[[XT]] into %[[Z]][%[[REV]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
// CHECK-NEXT: %[[SN:.*]] = linalg.copy ins(%[[IF]] : tensor<3xf32>) outs(%[[S]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: scf.yield %[[SN]], %[[ZN]] : tensor<3xf32>, tensor<4x3xf32>
// CHECK-NOT: onnx.
func.func @scan_axis_nested_if(%init: tensor<3xf32>, %x: tensor<3x4xf32>, %c: tensor<i1>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  %0:2 = "onnx.Scan"(%init, %x) <{num_scan_inputs = 1 : i64, scan_input_axes = array<i64: 1>, scan_output_directions = array<i64: 1>}> ({
  ^bb0(%s: tensor<3xf32>, %xi: tensor<3xf32>):
    %1 = "onnx.If"(%c) ({
      %2 = "onnx.Sub"(%s, %xi) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      onnx.Yield %2 : tensor<3xf32>
    }, {
      %2 = "onnx.Add"(%s, %xi) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      onnx.Yield %2 : tensor<3xf32>
    }) : (tensor<i1>) -> tensor<3xf32>
    onnx.Yield %1, %xi : tensor<3xf32>, tensor<3xf32>
  }) : (tensor<3xf32>, tensor<3x4xf32>) -> (tensor<3xf32>, tensor<4x3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<4x3xf32>
}

// -----

// Loop with the constant trip count 4, one loop-carried value and one scan
// output: the condition and M are extracted before the loop; scf.for
// 0..4 carries (cond, v, scan); each step computes t as i64, runs the
// body only when cond && t < M; the body's iter_num is a from_elements of
// that i64 (read by the Cast, sitofp), its cond a from_elements of the
// carried condition; the step's scan value is expanded to [1, 2] and
// inserted at row t, then the new v is copied over the carried one; the
// step's new condition is the extract of the body's; the else branch
// yields false and the carried values unchanged; the Loop's results are
// the for's results without the condition.
// CHECK-LABEL: func.func @loop_const(
// CHECK-SAME: %[[C:[a-z0-9_]+]]: tensor<i1>, %[[V0:[a-z0-9_]+]]: tensor<2xf32>, %[[X:[a-z0-9_]+]]: tensor<2xf32>)
// CHECK: %[[MT:.*]] = arith.constant dense<4> : tensor<i64>
// CHECK: %[[COND0:.*]] = tensor.extract %[[C]][] : tensor<i1>
// CHECK: %[[M:.*]] = tensor.extract %[[MT]][] : tensor<i64>
// CHECK: %[[VE:.*]] = tensor.empty() : tensor<2xf32>
// CHECK-NEXT: %[[VI:.*]] = linalg.copy ins(%[[V0]] : tensor<2xf32>) outs(%[[VE]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<4x2xf32>
// CHECK-NEXT: %[[SE:.*]] = tensor.empty() : tensor<4x2xf32>
// CHECK-NEXT: %[[SI:.*]] = linalg.copy ins(%[[ZEROS]] : tensor<4x2xf32>) outs(%[[SE]] : tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[UB:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[LOOP:[a-z0-9_]+]]:3 = scf.for %[[T:[a-z0-9_]+]] = %[[LB]] to %[[UB]] step %[[ONE]] iter_args(%[[CI:[a-z0-9_]+]] = %[[COND0]], %[[V:[a-z0-9_]+]] = %[[VI]], %[[SC:[a-z0-9_]+]] = %[[SI]]) -> (i1, tensor<2xf32>, tensor<4x2xf32>) {
// CHECK-NEXT: %[[TI:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %[[TI]], %[[M]] : i64
// CHECK-NEXT: %[[GO:.*]] = arith.andi %[[CI]], %[[LT]] : i1
// CHECK-NEXT: %[[STEP:[a-z0-9_]+]]:3 = scf.if %[[GO]] -> (i1, tensor<2xf32>, tensor<4x2xf32>) {
// CHECK-NEXT: %[[ITER:.*]] = tensor.from_elements %[[TI]] : tensor<i64>
// CHECK-NEXT: %[[CIN:.*]] = tensor.from_elements %[[CI]] : tensor<i1>
// CHECK: %[[VN:.*]] = linalg.generic
// CHECK-SAME: ins(%[[V]], %[[X]] : tensor<2xf32>, tensor<2xf32>)
// CHECK: arith.addf
// CHECK: %[[FI:.*]] = linalg.generic
// CHECK-SAME: ins(%[[ITER]] : tensor<i64>)
// CHECK: arith.sitofp
// CHECK: %[[SV:.*]] = linalg.generic
// CHECK-SAME: ins(%[[VN]], %[[FI]] : tensor<2xf32>, tensor<f32>)
// CHECK: arith.mulf
// CHECK: %[[CN:.*]] = tensor.extract %[[CIN]][] : tensor<i1>
// CHECK-NEXT: %[[SV1:.*]] = tensor.expand_shape %[[SV]] {{\[\[}}0, 1]] output_shape [1, 2] : tensor<2xf32> into tensor<1x2xf32>
// CHECK-NEXT: %[[SCN:.*]] = tensor.insert_slice %[[SV1]] into %[[SC]][%[[T]], 0] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<4x2xf32>
// CHECK-NEXT: %[[VC:.*]] = linalg.copy ins(%[[VN]] : tensor<2xf32>) outs(%[[V]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: scf.yield %[[CN]], %[[VC]], %[[SCN]] : i1, tensor<2xf32>, tensor<4x2xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[FALSE:.*]] = arith.constant false
// CHECK-NEXT: scf.yield %[[FALSE]], %[[V]], %[[SC]] : i1, tensor<2xf32>, tensor<4x2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[STEP]]#0, %[[STEP]]#1, %[[STEP]]#2 : i1, tensor<2xf32>, tensor<4x2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[LOOP]]#1, %[[LOOP]]#2 : tensor<2xf32>, tensor<4x2xf32>
// CHECK-NOT: onnx.
func.func @loop_const(%cond: tensor<i1>, %v0: tensor<2xf32>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  %m = "onnx.Constant"() <{value = dense<4> : tensor<i64>}> : () -> tensor<i64>
  %0:2 = "onnx.Loop"(%m, %cond, %v0) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    %1 = "onnx.Add"(%v, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %2 = "onnx.Identity"(%c) : (tensor<i1>) -> tensor<i1>
    %3 = "onnx.Cast"(%i) <{to = 1 : i64}> : (tensor<i64>) -> tensor<f32>
    %4 = "onnx.Mul"(%1, %3) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    onnx.Yield %2, %1, %4 : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<4x2xf32>
}

// -----

// ONNX's Range expansion (test_range_float_type_positive_delta_expanded):
// a run-time trip count and an unshaped body, bounded by the scan output's
// declared length 2; the carried value gets the initial value's type
// tensor<f32>; each step still tests t < M with the run-time M; the scan
// output, the value before the step, is a rank-0 tensor expanded to [1]
// and inserted at t before the new value is copied over it.
// CHECK-LABEL: func.func @loop_range(
// CHECK-SAME: %[[START:[a-z0-9_]+]]: tensor<f32>, %{{[a-z0-9_]+}}: tensor<f32>, %[[DELTA:[a-z0-9_]+]]: tensor<f32>)
// CHECK: %[[MT:[a-z0-9_]+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<i64>)
// CHECK: arith.fptosi
// CHECK: %[[CT:[a-z0-9_]+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<i1>)
// CHECK: arith.cmpf une
// CHECK: %[[COND0:.*]] = tensor.extract %[[CT]][] : tensor<i1>
// CHECK: %[[M:.*]] = tensor.extract %[[MT]][] : tensor<i64>
// CHECK: %[[VI:.*]] = linalg.copy ins(%[[START]] : tensor<f32>)
// CHECK: %[[UB:.*]] = arith.constant 2 : index
// CHECK: %[[LOOP:[a-z0-9_]+]]:3 = scf.for %[[T:[a-z0-9_]+]] = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%[[CI:[a-z0-9_]+]] = %[[COND0]], %[[V:[a-z0-9_]+]] = %[[VI]], %[[SC:[a-z0-9_]+]] = %{{.*}}) -> (i1, tensor<f32>, tensor<2xf32>) {
// CHECK-NEXT: %[[TI:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %[[TI]], %[[M]] : i64
// CHECK-NEXT: %[[GO:.*]] = arith.andi %[[CI]], %[[LT]] : i1
// CHECK-NEXT: scf.if %[[GO]] -> (i1, tensor<f32>, tensor<2xf32>) {
// CHECK: %[[VN:.*]] = linalg.generic
// CHECK-SAME: ins(%[[V]], %[[DELTA]] : tensor<f32>, tensor<f32>)
// CHECK: %[[V1:.*]] = tensor.expand_shape %[[V]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK-NEXT: %[[SCN:.*]] = tensor.insert_slice %[[V1]] into %[[SC]][%[[T]]] [1] [1] : tensor<1xf32> into tensor<2xf32>
// CHECK-NEXT: %[[VC:.*]] = linalg.copy ins(%[[VN]] : tensor<f32>) outs(%[[V]] : tensor<f32>) -> tensor<f32>
// CHECK-NEXT: scf.yield %{{.*}}, %[[VC]], %[[SCN]] : i1, tensor<f32>, tensor<2xf32>
// CHECK: return %[[LOOP]]#2 : tensor<2xf32>
// CHECK-NOT: onnx.
func.func @loop_range(%start: tensor<f32>, %limit: tensor<f32>, %delta: tensor<f32>) -> tensor<2xf32> {
  %0 = "onnx.Sub"(%limit, %start) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "onnx.Div"(%0, %delta) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %2 = "onnx.Ceil"(%1) : (tensor<f32>) -> tensor<f32>
  %3 = "onnx.Relu"(%2) : (tensor<f32>) -> tensor<f32>
  %m = "onnx.Cast"(%3) <{to = 7 : i64}> : (tensor<f32>) -> tensor<i64>
  %cond = "onnx.Cast"(%3) <{to = 9 : i64}> : (tensor<f32>) -> tensor<i1>
  %4:2 = "onnx.Loop"(%m, %cond, %start) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %prev: tensor<*xf32>):
    %5 = "onnx.Identity"(%c) : (tensor<i1>) -> tensor<i1>
    %6 = "onnx.Add"(%prev, %delta) : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
    %7 = "onnx.Identity"(%prev) : (tensor<*xf32>) -> tensor<*xf32>
    onnx.Yield %5, %6, %7 : tensor<i1>, tensor<*xf32>, tensor<*xf32>
  }) : (tensor<i64>, tensor<i1>, tensor<f32>) -> (tensor<*xf32>, tensor<2xf32>)
  return %4#1 : tensor<2xf32>
}

// -----

// A while loop (no trip count): the bound is the scan output's length 5
// and the step runs on the carried condition alone (no cmpi, no andi);
// the body's own condition (the Less of the new value) is extracted and
// carried.
// CHECK-LABEL: func.func @loop_while(
// CHECK-SAME: %[[C:[a-z0-9_]+]]: tensor<i1>, %[[V0:[a-z0-9_]+]]: tensor<f32>, %[[X:[a-z0-9_]+]]: tensor<f32>, %[[LIM:[a-z0-9_]+]]: tensor<f32>)
// CHECK: %[[COND0:.*]] = tensor.extract %[[C]][] : tensor<i1>
// CHECK: %[[UB:.*]] = arith.constant 5 : index
// CHECK: %[[LOOP:[a-z0-9_]+]]:3 = scf.for %[[T:[a-z0-9_]+]] = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%[[CI:[a-z0-9_]+]] = %[[COND0]], %[[V:[a-z0-9_]+]] = %{{.*}}, %[[SC:[a-z0-9_]+]] = %{{.*}}) -> (i1, tensor<f32>, tensor<5xf32>) {
// CHECK-NEXT: arith.index_cast %[[T]] : index to i64
// CHECK-NEXT: scf.if %[[CI]] -> (i1, tensor<f32>, tensor<5xf32>) {
// CHECK: %[[VN:.*]] = linalg.generic
// CHECK-SAME: ins(%[[V]], %[[X]] : tensor<f32>, tensor<f32>)
// CHECK: %[[LESS:.*]] = linalg.generic
// CHECK-SAME: ins(%[[VN]], %[[LIM]] : tensor<f32>, tensor<f32>)
// CHECK: arith.cmpf olt
// CHECK: %[[CN:.*]] = tensor.extract %[[LESS]][] : tensor<i1>
// CHECK-NEXT: %[[V1:.*]] = tensor.expand_shape %[[VN]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK-NEXT: %[[SCN:.*]] = tensor.insert_slice %[[V1]] into %[[SC]][%[[T]]] [1] [1] : tensor<1xf32> into tensor<5xf32>
// CHECK-NEXT: %[[VC:.*]] = linalg.copy ins(%[[VN]] : tensor<f32>) outs(%[[V]] : tensor<f32>) -> tensor<f32>
// CHECK-NEXT: scf.yield %[[CN]], %[[VC]], %[[SCN]] : i1, tensor<f32>, tensor<5xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[FALSE:.*]] = arith.constant false
// CHECK-NEXT: scf.yield %[[FALSE]], %[[V]], %[[SC]] : i1, tensor<f32>, tensor<5xf32>
// CHECK: return %[[LOOP]]#1, %[[LOOP]]#2 : tensor<f32>, tensor<5xf32>
// CHECK-NOT: onnx.
func.func @loop_while(%cond: tensor<i1>, %v0: tensor<f32>, %x: tensor<f32>, %lim: tensor<f32>) -> (tensor<f32>, tensor<5xf32>) {
  %none = onnx.NoValue
  %0:2 = "onnx.Loop"(%none, %cond, %v0) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<f32>):
    %1 = "onnx.Add"(%v, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %2 = "onnx.Less"(%1, %lim) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    onnx.Yield %2, %1, %1 : tensor<i1>, tensor<f32>, tensor<f32>
  }) : (none, tensor<i1>, tensor<f32>) -> (tensor<f32>, tensor<5xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<5xf32>
}
