// RUN: kiln-opt %s --onnx-shape-inference --split-input-file --verify-diagnostics
// Operands that contradict their op (or its declared result type) are
// reported by the shape functions of --onnx-shape-inference.

func.func @result_dim_contradicts(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'onnx.Relu' op result dim 1 is 4 but its operands give 3}}
  %0 = "onnx.Relu"(%x) : (tensor<2x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @result_rank_contradicts(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'onnx.Add' op result has rank 1 but its operands give rank 2}}
  %0 = "onnx.Add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// The contradiction only shows once the producer's type has been refined.
func.func @contradiction_after_propagation(%x: tensor<4x6xf32>) -> tensor<4x?xf32> {
  %0 = "onnx.Transpose"(%x) : (tensor<4x6xf32>) -> tensor<*xf32>
  // expected-error @+1 {{'onnx.Sigmoid' op result dim 0 is 4 but its operands give 6}}
  %1 = "onnx.Sigmoid"(%0) : (tensor<*xf32>) -> tensor<4x?xf32>
  return %1 : tensor<4x?xf32>
}

// -----

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Mul' op cannot broadcast dim 1: 3 vs 4}}
  %0 = "onnx.Mul"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @broadcast_mismatch_propagated(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<*xf32> {
  %0 = "onnx.Relu"(%a) : (tensor<2x3xf32>) -> tensor<*xf32>
  // expected-error @+1 {{'onnx.Add' op cannot broadcast dim 0: 2 vs 3}}
  %1 = "onnx.Add"(%0, %b) : (tensor<*xf32>, tensor<3x2xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

func.func @matmul_inner_dims(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.MatMul' op inner dims differ: 3 vs 4}}
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @matmul_batch_mismatch(%a: tensor<2x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.MatMul' op cannot broadcast dim 0: 2 vs 5}}
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3x4xf32>, tensor<5x4x6xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_two_minus_one(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %s = "onnx.Constant"() {value = dense<[-1, 4, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
  // expected-error @+1 {{'onnx.Reshape' op shape has more than one -1}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_element_count(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %s = "onnx.Constant"() {value = dense<[5, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{'onnx.Reshape' op cannot reshape 24 elements into 25}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_minus_one_indivisible(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %s = "onnx.Constant"() {value = dense<[5, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{'onnx.Reshape' op cannot reshape 24 elements with a -1 and 5 others}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_copy_past_rank(%x: tensor<4x6xf32>) -> tensor<*xf32> {
  %s = "onnx.Constant"() {value = dense<[2, 2, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
  // expected-error @+1 {{'onnx.Reshape' op shape copies dim 2 but the input has rank 2}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_invalid_dim(%x: tensor<4x6xf32>) -> tensor<*xf32> {
  %s = "onnx.Constant"() {value = dense<[-2, 12]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{'onnx.Reshape' op shape has invalid dim -2}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @squeeze_non_one(%x: tensor<1x3xf32>) -> tensor<*xf32> {
  %axes = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{'onnx.Squeeze' op cannot squeeze dim 1 of size 3}}
  %0 = "onnx.Squeeze"(%x, %axes) : (tensor<1x3xf32>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @squeeze_axis_range(%x: tensor<1x3xf32>) -> tensor<*xf32> {
  %axes = "onnx.Constant"() {value = dense<[-3]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{'onnx.Squeeze' op axis -3 is out of range for rank 2}}
  %0 = "onnx.Squeeze"(%x, %axes) : (tensor<1x3xf32>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unsqueeze_repeated(%x: tensor<3x4xf32>) -> tensor<*xf32> {
  %axes = "onnx.Constant"() {value = dense<[1, -3]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{'onnx.Unsqueeze' op axis -3 is repeated}}
  %0 = "onnx.Unsqueeze"(%x, %axes) : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unsqueeze_axis_range(%x: tensor<3x4xf32>) -> tensor<*xf32> {
  %axes = "onnx.Constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{'onnx.Unsqueeze' op axis 3 is out of range for rank 3}}
  %0 = "onnx.Unsqueeze"(%x, %axes) : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_dim_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Concat' op inputs differ in dim 0: 2 vs 3}}
  %0 = "onnx.Concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @split_sizes_sum(%x: tensor<6x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %s = "onnx.Constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{'onnx.Split' op split sizes add up to 5, dim 0 is 6}}
  %0:2 = "onnx.Split"(%x, %s) : (tensor<6x4xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>)
  return %0#0, %0#1 : tensor<*xf32>, tensor<*xf32>
}

// -----

func.func @split_sizes_count(%x: tensor<6x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %s = "onnx.Constant"() {value = dense<[2, 2, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  // expected-error @+1 {{'onnx.Split' op split has 3 entries for 2 outputs}}
  %0:2 = "onnx.Split"(%x, %s) : (tensor<6x4xf32>, tensor<3xi64>) -> (tensor<*xf32>, tensor<*xf32>)
  return %0#0, %0#1 : tensor<*xf32>, tensor<*xf32>
}

// -----

func.func @split_uneven(%x: tensor<7x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Split' op dim 7 does not split evenly into 2 outputs}}
  %0:2 = "onnx.Split"(%x, %none) : (tensor<7x4xf32>, none) -> (tensor<*xf32>, tensor<*xf32>)
  return %0#0, %0#1 : tensor<*xf32>, tensor<*xf32>
}

// -----

func.func @conv_window_too_large(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Conv' op its operands give a negative result dim (-1)}}
  %0 = "onnx.Conv"(%x, %w, %none) : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @tile_repeats_count(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  %r = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{'onnx.Tile' op repeats has 1 entries for rank 2}}
  %0 = "onnx.Tile"(%x, %r) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @range_zero_delta() -> tensor<*xi64> {
  %a = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %b = "onnx.Constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{'onnx.Range' op delta is zero}}
  %0 = "onnx.Range"(%a, %b, %a) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  return %0 : tensor<*xi64>
}

// -----

func.func @constant_of_shape_negative() -> tensor<*xf32> {
  %s = "onnx.Constant"() {value = dense<[2, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{'onnx.ConstantOfShape' op shape has a negative dim -1}}
  %0 = "onnx.ConstantOfShape"(%s) : (tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @expand_incompatible(%x: tensor<3x1xf32>) -> tensor<*xf32> {
  %s = "onnx.Constant"() {value = dense<[4, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{'onnx.Expand' op cannot broadcast dim 0: 3 vs 4}}
  %0 = "onnx.Expand"(%x, %s) : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<4xf32>) -> tensor<*xf32> {
  %s = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<[4]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{'onnx.Slice' op step is zero}}
  %0 = "onnx.Slice"(%x, %s, %e, %s, %s) : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_lengths(%x: tensor<4x4xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %s = "onnx.Constant"() {value = dense<[0, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %e = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+1 {{'onnx.Slice' op starts, ends, axes and steps differ in length}}
  %0 = "onnx.Slice"(%x, %s, %e, %none, %none) : (tensor<4x4xf32>, tensor<2xi64>, tensor<1xi64>, none, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reduce_axis_range(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.ReduceMean' op axis 3 is out of range for rank 3}}
  %0 = "onnx.ReduceMean"(%x) {axes = array<i64: 3>} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gemm_inner_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.Gemm' op inner dims differ: 3 vs 4}}
  %0 = "onnx.Gemm"(%a, %b, %none) : (tensor<2x3xf32>, tensor<4x5xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gemm_bias_broadcast(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<7xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Gemm' op C's dim 0 (7) does not broadcast to 5}}
  %0 = "onnx.Gemm"(%a, %b, %c) : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<7xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @einsum_letter_sizes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Einsum' op the letter 'j' stands for dims of 3 and 4}}
  %0 = "onnx.Einsum"(%a, %b) {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @einsum_terms(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Einsum' op the equation 'ij,jk->ik' has 2 terms for 1 inputs}}
  %0 = "onnx.Einsum"(%a) {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @einsum_rank(%a: tensor<2x3x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Einsum' op a term of 'ij->i' does not fit its input's rank 3}}
  %0 = "onnx.Einsum"(%a) {equation = "ij->i"} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @einsum_output_letter(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Einsum' op the output's letter 'k' is in no input term}}
  %0 = "onnx.Einsum"(%a) {equation = "ij->ik"} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @dft_components(%x: tensor<2x10x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.DFT' op the input must be [..., 1] (real) or [..., 2] (complex)}}
  %0 = "onnx.DFT"(%x, %none) {axis = 1 : i64} : (tensor<2x10x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @stft_long_frame(%s: tensor<1x8x1xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %step = "onnx.Constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %len = "onnx.Constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+1 {{'onnx.STFT' op frame_length 16 is longer than the signal (8)}}
  %0 = "onnx.STFT"(%s, %step, %none, %len) : (tensor<1x8x1xf32>, tensor<i64>, none, tensor<i64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @max_unpool_rank(%x: tensor<1x3x4x4xf32>, %i: tensor<1x3x4x4xi64>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.MaxUnpool' op kernel_shape must give every spatial dim of X}}
  %0 = "onnx.MaxUnpool"(%x, %i, %none) {kernel_shape = array<i64: 2>} : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @loss_target_rank(%x: tensor<3x6x4xf32>, %t: tensor<3xi64>) -> tensor<*xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{'onnx.NegativeLogLikelihoodLoss' op the target must be [N, d1, ...], one dim fewer than the scores}}
  %0 = "onnx.NegativeLogLikelihoodLoss"(%x, %t, %none) : (tensor<3x6x4xf32>, tensor<3xi64>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
