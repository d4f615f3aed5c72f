// RUN: kiln-opt %s --split-input-file --verify-diagnostics
// Verifier errors of the onnx dialect: ODS type constraints and the
// hand-written checks of Verifiers.cpp.

func.func @add_i1(%a: tensor<2xi1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{'onnx.Add' op operand #0 must be tensor of}}
  %0 = "onnx.Add"(%a, %b) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @conv_i32(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xi32>) -> tensor<*xi32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op operand #0 must be tensor of 16-bit float or 32-bit float or 64-bit float values}}
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xi32>, none) -> tensor<*xi32>
  return %0 : tensor<*xi32>
}

// -----

func.func @shape_result_f32(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.Shape' op result #0 must be tensor of 64-bit signless integer values}}
  %0 = "onnx.Shape"(%x) : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @cast_missing_to(%x: tensor<2xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{'onnx.Cast' op requires attribute 'to'}}
  %0 = "onnx.Cast"(%x) : (tensor<2xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @concat_no_inputs() -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Concat' op needs at least one input}}
  %0 = "onnx.Concat"() {axis = 0 : i64} : () -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_ranks(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Concat' op inputs have different ranks (2 and 1)}}
  %0 = "onnx.Concat"(%a, %b) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_rank0(%a: tensor<f32>, %b: tensor<f32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Concat' op inputs must have rank >= 1}}
  %0 = "onnx.Concat"(%a, %b) {axis = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Concat' op axis 2 is out of range for an input of rank 2}}
  %0 = "onnx.Concat"(%a, %b) {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_negative_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Concat' op axis -3 is out of range for an input of rank 2}}
  %0 = "onnx.Concat"(%a, %b) {axis = -3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_group_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op group must be >= 1, got 0}}
  %0 = "onnx.Conv"(%x, %w, %none) {group = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_ranks(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op X has rank 4 but W has rank 3}}
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_rank2(%x: tensor<1x3xf32>, %w: tensor<4x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op input must have rank >= 3 (N, C, spatial...), got 2}}
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<1x3xf32>, tensor<4x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_pads_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op pads has 2 values, expected 4}}
  %0 = "onnx.Conv"(%x, %w, %none) {pads = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_negative_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op pads values must be >= 0, got -1}}
  %0 = "onnx.Conv"(%x, %w, %none) {pads = array<i64: 1, -1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_stride_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op strides values must be >= 1, got 0}}
  %0 = "onnx.Conv"(%x, %w, %none) {strides = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_dilations_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op dilations has 3 values, expected 2}}
  %0 = "onnx.Conv"(%x, %w, %none) {dilations = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_kernel_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x?x?xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op kernel_shape values must be >= 1, got 0}}
  %0 = "onnx.Conv"(%x, %w, %none) {kernel_shape = array<i64: 3, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x?x?xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op X has 3 channels but W expects 2 x group 1}}
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_group_output_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op W's 3 output channels are not divisible by group 2}}
  %0 = "onnx.Conv"(%x, %w, %none) {group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_kernel_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op kernel_shape disagrees with W's shape}}
  %0 = "onnx.Conv"(%x, %w, %none) {kernel_shape = array<i64: 3, 5>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Gemm' op A and B must be 2-D, got rank 3}}
  %0 = "onnx.Gemm"(%a, %b, %none) : (tensor<2x3x4xf32>, tensor<4x5xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gemm_rank_b(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Gemm' op A and B must be 2-D, got rank 1}}
  %0 = "onnx.Gemm"(%a, %b, %none) : (tensor<2x3xf32>, tensor<3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.MatMul' op operands must have rank >= 1}}
  %0 = "onnx.MatMul"(%a, %b) : (tensor<f32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @transpose_perm_size(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Transpose' op perm has 2 entries for an input of rank 3}}
  %0 = "onnx.Transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @transpose_perm_repeat(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Transpose' op perm is not a permutation of [0, 3)}}
  %0 = "onnx.Transpose"(%x) {perm = array<i64: 0, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @transpose_perm_range(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Transpose' op perm is not a permutation of [0, 3)}}
  %0 = "onnx.Transpose"(%x) {perm = array<i64: 0, 1, 3>} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_shape_rank(%x: tensor<6xf32>, %s: tensor<2x1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Reshape' op shape must be 1-D, got rank 2}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<6xf32>, tensor<2x1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_shape_i32(%x: tensor<6xf32>, %s: tensor<2xi32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Reshape' op operand #1 must be tensor of 64-bit signless integer values}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<6xf32>, tensor<2xi32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @flatten_axis(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Flatten' op axis 3 is out of range for an input of rank 2}}
  %0 = "onnx.Flatten"(%x) {axis = 3 : i64} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gather_axis(%x: tensor<2x3xf32>, %i: tensor<4xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Gather' op axis 2 is out of range for an input of rank 2}}
  %0 = "onnx.Gather"(%x, %i) {axis = 2 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gather_indices_f32(%x: tensor<2x3xf32>, %i: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Gather' op operand #1 must be tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = "onnx.Gather"(%x, %i) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Softmax' op axis 2 is out of range for an input of rank 2}}
  %0 = "onnx.Softmax"(%x) {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @logsoftmax_axis(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.LogSoftmax' op axis -3 is out of range for an input of rank 2}}
  %0 = "onnx.LogSoftmax"(%x) {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @split_no_outputs(%x: tensor<4xf32>) {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Split' op needs at least one output}}
  "onnx.Split"(%x, %none) : (tensor<4xf32>, none) -> ()
  return
}

// -----

func.func @split_axis(%x: tensor<4x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Split' op axis 2 is out of range for an input of rank 2}}
  %0:2 = "onnx.Split"(%x, %none) {axis = 2 : i64} : (tensor<4x2xf32>, none) -> (tensor<*xf32>, tensor<*xf32>)
  return %0#0, %0#1 : tensor<*xf32>, tensor<*xf32>
}

// -----

func.func @squeeze_axes_rank(%x: tensor<1x3xf32>, %axes: tensor<1x1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Squeeze' op axes must be 1-D}}
  %0 = "onnx.Squeeze"(%x, %axes) : (tensor<1x3xf32>, tensor<1x1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unsqueeze_axes_rank(%x: tensor<3xf32>, %axes: tensor<1x1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Unsqueeze' op axes must be 1-D}}
  %0 = "onnx.Unsqueeze"(%x, %axes) : (tensor<3xf32>, tensor<1x1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_starts_rank(%x: tensor<4xf32>, %s: tensor<1x1xi64>, %e: tensor<1xi64>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Slice' op starts and ends must be 1-D}}
  %0 = "onnx.Slice"(%x, %s, %e, %none, %none) : (tensor<4xf32>, tensor<1x1xi64>, tensor<1xi64>, none, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_ends_rank(%x: tensor<4xf32>, %s: tensor<1xi64>, %e: tensor<i64>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Slice' op starts and ends must be 1-D}}
  %0 = "onnx.Slice"(%x, %s, %e, %none, %none) : (tensor<4xf32>, tensor<1xi64>, tensor<i64>, none, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @cast_to_mismatch(%x: tensor<2xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{'onnx.Cast' op result element type 'i32' does not match 'to' ('i64')}}
  %0 = "onnx.Cast"(%x) {to = 7 : i64} : (tensor<2xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @cast_to_invalid(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.Cast' op 'to' = 0 is not a supported ONNX data type}}
  %0 = "onnx.Cast"(%x) {to = 0 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @cast_to_complex(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.Cast' op 'to' = 14 is not a supported ONNX data type}}
  %0 = "onnx.Cast"(%x) {to = 14 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @maxpool_storage_order(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.MaxPool' op storage_order must be 0 or 1}}
  %0, %i = "onnx.MaxPool"(%x) {kernel_shape = array<i64: 2, 2>, storage_order = 2 : i64} : (tensor<1x3x8x8xf32>) -> (tensor<*xf32>, none)
  return %0 : tensor<*xf32>
}

// -----

func.func @maxpool_kernel_count(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.MaxPool' op kernel_shape has 1 values, expected 2}}
  %0, %i = "onnx.MaxPool"(%x) {kernel_shape = array<i64: 2>} : (tensor<1x3x8x8xf32>) -> (tensor<*xf32>, none)
  return %0 : tensor<*xf32>
}

// -----

func.func @maxpool_dilation_zero(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.MaxPool' op dilations values must be >= 1, got 0}}
  %0, %i = "onnx.MaxPool"(%x) {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>) -> (tensor<*xf32>, none)
  return %0 : tensor<*xf32>
}

// -----

func.func @maxpool_rank(%x: tensor<1x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.MaxPool' op input must have rank >= 3 (N, C, spatial...), got 2}}
  %0, %i = "onnx.MaxPool"(%x) {kernel_shape = array<i64: 2>} : (tensor<1x3xf32>) -> (tensor<*xf32>, none)
  return %0 : tensor<*xf32>
}

// -----

func.func @maxpool_missing_kernel(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.MaxPool' op requires attribute 'kernel_shape'}}
  %0, %i = "onnx.MaxPool"(%x) : (tensor<1x3x8x8xf32>) -> (tensor<*xf32>, none)
  return %0 : tensor<*xf32>
}

// -----

func.func @averagepool_strides(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.AveragePool' op strides has 1 values, expected 2}}
  %0 = "onnx.AveragePool"(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2>} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @averagepool_kernel_zero(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.AveragePool' op kernel_shape values must be >= 1, got 0}}
  %0 = "onnx.AveragePool"(%x) {kernel_shape = array<i64: 2, 0>} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @if_arity(%c: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.If' op a branch yields 2 values but the If has 1 outputs}}
  %0 = "onnx.If"(%c) ({
    onnx.Yield %a, %a : tensor<2xf32>, tensor<2xf32>
  }, {
    onnx.Yield %a, %a : tensor<2xf32>, tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @if_arity_one_branch(%c: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.If' op a branch yields 0 values but the If has 1 outputs}}
  %0 = "onnx.If"(%c) ({
    onnx.Yield %a : tensor<2xf32>
  }, {
    onnx.Yield
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @if_branch_args(%c: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.If' op branches take no inputs, got 1}}
  %0 = "onnx.If"(%c) ({
  ^bb0(%x: tensor<2xf32>):
    onnx.Yield %x : tensor<2xf32>
  }, {
    onnx.Yield %a : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_body_inputs(%m: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.Loop' op the body takes 2 inputs, expected 2 + 1 (iteration number, condition, loop-carried values)}}
  %0 = "onnx.Loop"(%m, %c, %v) ({
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>):
    onnx.Yield %cond, %v : tensor<i1>, tensor<2xf32>
  }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_body_yields(%m: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.Loop' op the body yields 1 values, expected at least 1 + 1}}
  %0 = "onnx.Loop"(%m, %c, %v) ({
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %x: tensor<2xf32>):
    onnx.Yield %cond : tensor<i1>
  }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_outputs(%m: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.Loop' op has 1 outputs but its body yields 2 loop-carried and scan values}}
  %0 = "onnx.Loop"(%m, %c, %v) ({
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %x: tensor<2xf32>):
    onnx.Yield %cond, %x, %x : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @scan_num_inputs(%s: tensor<2xf32>, %x: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  // expected-error @+1 {{'onnx.Scan' op num_scan_inputs = 3 but the Scan has 2 inputs}}
  %0:2 = "onnx.Scan"(%s, %x) ({
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %a, %b : tensor<2xf32>, tensor<2xf32>
  }) {num_scan_inputs = 3 : i64} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

func.func @scan_zero_inputs(%s: tensor<2xf32>, %x: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  // expected-error @+1 {{'onnx.Scan' op num_scan_inputs = 0 but the Scan has 2 inputs}}
  %0:2 = "onnx.Scan"(%s, %x) ({
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %a, %b : tensor<2xf32>, tensor<2xf32>
  }) {num_scan_inputs = 0 : i64} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

func.func @scan_body_inputs(%s: tensor<2xf32>, %x: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  // expected-error @+1 {{'onnx.Scan' op the body takes 1 inputs, expected 2}}
  %0:2 = "onnx.Scan"(%s, %x) ({
  ^bb0(%a: tensor<2xf32>):
    onnx.Yield %a, %a : tensor<2xf32>, tensor<2xf32>
  }) {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

func.func @scan_outputs(%s: tensor<2xf32>, %x: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  // expected-error @+1 {{'onnx.Scan' op has 2 outputs but its body yields 1}}
  %0:2 = "onnx.Scan"(%s, %x) ({
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %a : tensor<2xf32>
  }) {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

func.func @flatten_axis_low(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  // Spec: axis in [-r, r]; -3 is below that for rank 2.
  // expected-error @+1 {{'onnx.Flatten' op axis -3 is out of range for an input of rank 2}}
  %0 = "onnx.Flatten"(%x) {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_bias_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<7xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Conv' op B has 7 values but W has 4 output channels}}
  %0 = "onnx.Conv"(%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<7xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
