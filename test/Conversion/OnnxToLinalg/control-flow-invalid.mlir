// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file --verify-diagnostics
// If, Loop and Scan that ControlFlow.cpp refuses: an error on the op that
// names it and the reason (the lowering stops at the first one).

// A Loop whose trip count is only known at run time and that has no scan
// output to bound it: no static bound for the scf.for.
func.func @loop_dynamic_trip_count(%m: tensor<i64>, %cond: tensor<i1>, %v0: tensor<2xf32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{Loop: not supported by the CPU backend: the trip count must be a constant, or the loop must have scan outputs of static length}}
  %0 = "onnx.Loop"(%m, %cond, %v0) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    %1 = "onnx.Add"(%v, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %c, %1 : tensor<i1>, tensor<2xf32>
  }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// An If whose branches yield different static shapes ([3, 2] from the
// else branch, the first region; [2, 3] from the then branch), though the
// result is declared [2, 3].
func.func @if_branch_shapes(%c: tensor<i1>, %x: tensor<2x3xf32>, %z: tensor<3x2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{If: not supported by the CPU backend: both branches must yield the results' static shapes}}
  %0 = "onnx.If"(%c) ({
    onnx.Yield %z : tensor<3x2xf32>
  }, {
    onnx.Yield %x : tensor<2x3xf32>
  }) : (tensor<i1>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// An If whose result has no static shape (what the importer gives for
// branches of different shapes).
func.func @if_dynamic_result(%c: tensor<i1>, %x: tensor<2x3xf32>, %z: tensor<3x2xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{If: not supported by the CPU backend: results must be tensors of static shape}}
  %0 = "onnx.If"(%c) ({
    onnx.Yield %z : tensor<3x2xf32>
  }, {
    onnx.Yield %x : tensor<2x3xf32>
  }) : (tensor<i1>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A Loop with a run-time trip count whose scan output's length is not
// declared: neither the result type nor a bound is known.
func.func @loop_scan_output_dynamic(%m: tensor<i64>, %cond: tensor<i1>, %v0: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  // expected-error @+1 {{Loop: not supported by the CPU backend: results must be tensors of static shape (scan outputs: declare their length)}}
  %0:2 = "onnx.Loop"(%m, %cond, %v0) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    onnx.Yield %c, %v, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<?x2xf32>
}

// -----

// A Scan over a scan input of dynamic length.
func.func @scan_dynamic_input(%init: tensor<2xf32>, %x: tensor<?x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{Scan: not supported by the CPU backend: operands must be tensors of static shape}}
  %0 = "onnx.Scan"(%init, %x) <{num_scan_inputs = 1 : i64}> ({
  ^bb0(%s: tensor<2xf32>, %xi: tensor<2xf32>):
    %1 = "onnx.Add"(%s, %xi) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %1 : tensor<2xf32>
  }) : (tensor<2xf32>, tensor<?x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
