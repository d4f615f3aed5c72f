// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file --verify-diagnostics
// What the CPU backend cannot lower is an error on the op that names the
// op and the reason, never MLIR's generic "failed to legalize".

func.func @bernoulli(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{Bernoulli: operator not supported by the CPU backend yet}}
  %0 = "onnx.Bernoulli"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Every op without a lowering is reported, not only the first.
func.func @two_unsupported(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{Bernoulli: operator not supported by the CPU backend yet}}
  %0 = "onnx.Bernoulli"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{RandomUniformLike: operator not supported by the CPU backend yet}}
  %1 = "onnx.RandomUniformLike"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A supported op with an attribute value it does not handle: the reason.
func.func @pad_circular(%x: tensor<4xf32>) -> tensor<6xf32> {
  %pads = "onnx.Constant"() <{value = dense<1> : tensor<2xi64>}> : () -> tensor<2xi64>
  %none = onnx.NoValue
  // expected-error @+1 {{Pad: not supported by the CPU backend: mode 'circular' is not supported}}
  %0 = "onnx.Pad"(%x, %pads, %none) <{mode = "circular"}> : (tensor<4xf32>, tensor<2xi64>, none) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// MaxPool's Indices output of an integer input, when something reads it.
func.func @maxpool_indices(%x: tensor<1x1x4x4xi8>) -> (tensor<1x1x3x3xi8>, tensor<1x1x3x3xi64>) {
  // expected-error @+1 {{MaxPool: not supported by the CPU backend: the Indices output needs a float input}}
  %y, %indices = "onnx.MaxPool"(%x) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, kernel_shape = array<i64: 2, 2>, storage_order = 0 : i64}> : (tensor<1x1x4x4xi8>) -> (tensor<1x1x3x3xi8>, tensor<1x1x3x3xi64>)
  return %y, %indices : tensor<1x1x3x3xi8>, tensor<1x1x3x3xi64>
}

// -----

// A size computed from data (every input static): pinning input shapes
// would not help, and the error says so.
func.func @data_size(%a: tensor<f32>, %b: tensor<f32>, %d: tensor<f32>) -> tensor<?xf32> {
  // expected-error @+1 {{Range: result #0 has type tensor<?xf32>; its size depends on values computed at run time, which the CPU backend does not support yet (sizes must follow from the input shapes)}}
  %0 = "onnx.Range"(%a, %b, %d) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Dynamic shapes are rejected before any pattern runs.
func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{Relu: operand #0 has type tensor<?x3xf32>; only static shapes are supported (pin the model's input shapes with --input-shape)}}
  %0 = "onnx.Relu"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Axes known only at run time with keepdims=0: the static result shape
// must come from removing as many dims as there are axes.
func.func @reducesum_runtime_axes(%x: tensor<2x3xf32>, %axes: tensor<1xi64>) -> tensor<6xf32> {
  // expected-error @+1 {{ReduceSum: not supported by the CPU backend: no set of axes gives the static result shape}}
  %0 = "onnx.ReduceSum"(%x, %axes) <{keepdims = 0 : i64, noop_with_empty_axes = 0 : i64}> : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Running statistics are outputs of training mode only.
func.func @batchnorm_running_stats_in_inference(%x: tensor<1x2x2x2xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{BatchNormalization: not supported by the CPU backend: running_mean/running_var outputs exist only in training mode}}
  %y, %rm, %rv = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) <{epsilon = 1.000000e-05 : f32, momentum = 0.899999976 : f32, training_mode = 0 : i64}> : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %rm : tensor<2xf32>
}

// -----

// LSTM's coupled input and forget gates.
func.func @lstm_input_forget(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) -> tensor<1x2x4xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{LSTM: not supported by the CPU backend: input_forget = 1 is not supported yet}}
  %y, %yh, %yc = "onnx.LSTM"(%x, %w, %r, %none, %none, %none, %none, %none) <{direction = "forward", hidden_size = 4 : i64, input_forget = 1 : i64, layout = 0 : i64}> : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, none, none, none, none, none) -> (none, tensor<1x2x4xf32>, none)
  return %yh : tensor<1x2x4xf32>
}

// -----

// A recurrent activation outside the ONNX list is named (lower case).
func.func @rnn_unknown_activation(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<1x2x4xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{RNN: not supported by the CPU backend: activation 'gelu' is not supported}}
  %y, %yh = "onnx.RNN"(%x, %w, %r, %none, %none, %none) <{activations = ["Gelu"], direction = "forward", hidden_size = 4 : i64, layout = 0 : i64}> : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (none, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}

// -----

// Recurrent ops compute in f32 or f64 only.
func.func @gru_f16(%x: tensor<5x2x3xf16>, %w: tensor<1x12x3xf16>, %r: tensor<1x12x4xf16>) -> tensor<1x2x4xf16> {
  %none = onnx.NoValue
  // expected-error @+1 {{GRU: not supported by the CPU backend: element type float16 is not supported yet}}
  %y, %yh = "onnx.GRU"(%x, %w, %r, %none, %none, %none) <{direction = "forward", hidden_size = 4 : i64, layout = 0 : i64, linear_before_reset = 0 : i64}> : (tensor<5x2x3xf16>, tensor<1x12x3xf16>, tensor<1x12x4xf16>, none, none, none) -> (none, tensor<1x2x4xf16>)
  return %yh : tensor<1x2x4xf16>
}

// -----

// GridSample samples 2-D images only: a volumetric (5-D) X is named.
func.func @gridsample_volumetric(%x: tensor<1x1x2x3x4xf32>, %g: tensor<1x2x2x2x3xf32>) -> tensor<1x1x2x2x2xf32> {
  // expected-error @+1 {{GridSample: not supported by the CPU backend: only 2-D sampling (X [N, C, H, W], grid [N, H_out, W_out, 2]) is supported yet}}
  %0 = "onnx.GridSample"(%x, %g) <{align_corners = 0 : i64, mode = "bilinear", padding_mode = "zeros"}> : (tensor<1x1x2x3x4xf32>, tensor<1x2x2x2x3xf32>) -> tensor<1x1x2x2x2xf32>
  return %0 : tensor<1x1x2x2x2xf32>
}

// -----

// TfIdfVectorizer needs an integer pool: pool_strings alone is refused
// even when the token ids are integers.
func.func @tfidf_pool_strings(%x: tensor<2x4xi64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{TfIdfVectorizer: not supported by the CPU backend: pool_int64s is required (string pools are not supported)}}
  %0 = "onnx.TfIdfVectorizer"(%x) <{max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0, 1>, pool_strings = ["a", "b"]}> : (tensor<2x4xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// String tokens (the usual partner of pool_strings): string tensors are
// refused in every op that does not handle them, before lowering.
func.func @tfidf_string_tokens(%x: tensor<2x4x!onnx.string>) -> tensor<2x2xf32> {
  // expected-error @+1 {{TfIdfVectorizer: string tensors are not supported by the CPU backend in this op yet (they are in Cast, CastLike, StringNormalizer and in Identity, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Gather, Concat, Slice, Shape, Size)}}
  %0 = "onnx.TfIdfVectorizer"(%x) <{max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0, 1>, pool_strings = ["a", "b"]}> : (tensor<2x4x!onnx.string>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// TopK's K is the result's dim along the axis; one past the input's size
// along it (5 > 3) cannot be filled.
func.func @topk_k_too_large(%x: tensor<2x3xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>) {
  %k = "onnx.Constant"() <{value = dense<5> : tensor<1xi64>}> : () -> tensor<1xi64>
  // expected-error @+1 {{TopK: not supported by the CPU backend: K is larger than the axis}}
  %v, %i = "onnx.TopK"(%x, %k) <{axis = 1 : i64, largest = 1 : i64, sorted = 1 : i64}> : (tensor<2x3xf32>, tensor<1xi64>) -> (tensor<2x5xf32>, tensor<2x5xi64>)
  return %v, %i : tensor<2x5xf32>, tensor<2x5xi64>
}

// -----

// Diagnostics name the model's opset when the module records it.
module attributes {onnx.opset = 15 : i64} {
  func.func @bernoulli(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{Bernoulli (opset 15): operator not supported by the CPU backend yet}}
    %0 = "onnx.Bernoulli"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// Operands are read at positions other operands imply: inconsistent
// shapes are refused before any read could go out of bounds.
func.func @gridsample_batch_mismatch(%x: tensor<2x1x4x4xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<2x1x3x3xf32> {
  // expected-error @+1 {{GridSample: not supported by the CPU backend: grid and Y must be [N, H_out, W_out, 2] and [N, C, H_out, W_out] for X [N, C, H, W]}}
  %0 = "onnx.GridSample"(%x, %g) <{align_corners = 0 : i64, mode = "bilinear", padding_mode = "zeros"}> : (tensor<2x1x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<2x1x3x3xf32>
  return %0 : tensor<2x1x3x3xf32>
}

// -----

func.func @roialign_rois_mismatch(%x: tensor<1x1x8x8xf32>, %r: tensor<3x4xf32>, %b: tensor<2xi64>) -> tensor<3x1x2x2xf32> {
  // expected-error @+1 {{RoiAlign: not supported by the CPU backend: batch_indices and Y must be [R] and [R, C, output_height, output_width] for rois [R, 4]}}
  %0 = "onnx.RoiAlign"(%x, %r, %b) <{coordinate_transformation_mode = "half_pixel", mode = "avg", output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 0 : i64, spatial_scale = 1.000000e+00 : f32}> : (tensor<1x1x8x8xf32>, tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x1x2x2xf32>
  return %0 : tensor<3x1x2x2xf32>
}

// -----

func.func @rnn_bias_shape(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %bias: tensor<1x4xf32>) -> tensor<1x2x4xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{RNN: not supported by the CPU backend: B, sequence_lens, initial states or P do not have the shapes X, W and R imply}}
  %y, %yh = "onnx.RNN"(%x, %w, %r, %bias, %none, %none) <{direction = "forward", hidden_size = 4 : i64, layout = 0 : i64}> : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>, none, none) -> (none, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}

// -----

// InstanceNormalization's scale and bias must match the channels (ONNX's
// shape inference does not check it).
func.func @instance_norm_params(%x: tensor<1x2x3xf32>, %s: tensor<4xf32>) -> tensor<1x2x3xf32> {
  // expected-error @+1 {{InstanceNormalization: not supported by the CPU backend: scale and B must have one element per channel (2)}}
  %0 = "onnx.InstanceNormalization"(%x, %s, %s) <{epsilon = 1.0e-5 : f32}> : (tensor<1x2x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x2x3xf32>
  return %0 : tensor<1x2x3xf32>
}

// -----

// STFT's window must be 1-D (a scalar one read its dim 0: a crash the
// fuzzer found).
func.func @stft_scalar_window(%x: tensor<1x128x1xf32>, %step: tensor<i64>, %w: tensor<f32>) -> tensor<1x15x9x2xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{STFT: not supported by the CPU backend: the window must be 1-D, of a known length}}
  %0 = "onnx.STFT"(%x, %step, %w, %none) <{onesided = 1 : i64}> : (tensor<1x128x1xf32>, tensor<i64>, tensor<f32>, none) -> tensor<1x15x9x2xf32>
  return %0 : tensor<1x15x9x2xf32>
}
