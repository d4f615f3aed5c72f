// RUN: kiln-opt %s --convert-onnx-to-linalg="winograd=1" --split-input-file -mlir-elide-elementsattrs-if-larger=4 | FileCheck %s
// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file | FileCheck %s --check-prefix=OFF

// A 3x3 conv, 64 -> 64 channels, pads 1, a 9x8 output: F(2x2, 3x3) (a
// map under 28x28), 5x4 tiles of 2x2, the input padded to 2 * 5 + 2 = 12
// rows (one more than the conv's own pad) and 2 * 4 + 2 = 10 columns; the
// 16 taps are stride-2 slices; one generic writes the 16 transformed
// inputs into slices of one tensor; one contraction with a batch of 16
// over the 64 input channels; one generic writes the 4 outputs of each
// tile, plus the bias, into stride-2 slices of a 10x8 output, cut to 9x8.
// CHECK-LABEL: func.func @winograd(
// CHECK: %[[PAD:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 2, 1]
// CHECK: } : tensor<1x64x9x8xf32> to tensor<1x64x12x10xf32>
// CHECK-COUNT-16: tensor.extract_slice %[[PAD]][0, 0, {{[0-3]}}, {{[0-3]}}] [1, 64, 5, 4] [1, 1, 2, 2]
// CHECK: %[[V:.+]] = tensor.empty() : tensor<16x1x64x5x4xf32>
// CHECK-COUNT-16: tensor.extract_slice %[[V]][{{[0-9]+}}, 0, 0, 0, 0] [1, 1, 64, 5, 4]
// CHECK: %[[T:.+]]:16 = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-COUNT-32: arith.{{addf|subf}}
// CHECK: linalg.yield
// CHECK-COUNT-16: tensor.insert_slice %[[T]]#
// CHECK: %[[U:.+]] = arith.constant dense_resource<__elided__> : tensor<16x64x64xf32>
// CHECK: %[[M:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: outs(%{{.+}} : tensor<16x1x64x20xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[TILED:.+]] = tensor.empty() : tensor<1x64x10x8xf32>
// CHECK-COUNT-4: tensor.extract_slice %[[TILED]][0, 0, {{[01]}}, {{[01]}}] [1, 64, 5, 4] [1, 1, 2, 2]
// CHECK: %[[Y:.+]]:4 = linalg.generic
// CHECK-COUNT-24: arith.{{addf|subf}}
// CHECK: linalg.yield
// CHECK: tensor.insert_slice %[[Y]]#0 into %[[TILED]][0, 0, 0, 0] [1, 64, 5, 4] [1, 1, 2, 2]
// CHECK: tensor.insert_slice %[[Y]]#1 into %{{.+}}[0, 0, 0, 1] [1, 64, 5, 4] [1, 1, 2, 2]
// CHECK: tensor.insert_slice %[[Y]]#2 into %{{.+}}[0, 0, 1, 0] [1, 64, 5, 4] [1, 1, 2, 2]
// CHECK: %[[ALL:.+]] = tensor.insert_slice %[[Y]]#3 into %{{.+}}[0, 0, 1, 1] [1, 64, 5, 4] [1, 1, 2, 2]
// CHECK: %[[OUT:.+]] = tensor.extract_slice %[[ALL]][0, 0, 0, 0] [1, 64, 9, 8] [1, 1, 1, 1]
// CHECK: return %[[OUT]]
// OFF-LABEL: func.func @winograd(
// OFF-NOT: tensor.insert_slice
// OFF: "reduction", "reduction", "reduction"
func.func @winograd(%x: tensor<1x64x9x8xf32>, %b: tensor<64xf32>) -> tensor<1x64x9x8xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<64x64x3x3xf32>}> : () -> tensor<64x64x3x3xf32>
  %0 = "onnx.Conv"(%x, %w, %b) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x64x9x8xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x9x8xf32>
  return %0 : tensor<1x64x9x8xf32>
}

// -----

// Not for a strided conv, weights that are not a constant, 32 input
// channels, or a 7x7 output: the direct window generic.
// CHECK-LABEL: func.func @direct(
// CHECK-NOT: tensor.insert_slice
// CHECK-COUNT-4: "reduction", "reduction", "reduction"
// CHECK: return
func.func @direct(%x: tensor<1x64x8x8xf32>, %w2: tensor<64x64x3x3xf32>, %x32: tensor<1x32x8x8xf32>, %x7: tensor<1x64x7x7xf32>) -> (tensor<1x64x4x4xf32>, tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x64x7x7xf32>) {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<64x64x3x3xf32>}> : () -> tensor<64x64x3x3xf32>
  %w32 = "onnx.Constant"() <{value = dense<1.0> : tensor<64x32x3x3xf32>}> : () -> tensor<64x32x3x3xf32>
  %none = onnx.NoValue
  %0 = "onnx.Conv"(%x, %w, %none) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}> : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x4x4xf32>
  %1 = "onnx.Conv"(%x, %w2, %none) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x8x8xf32>
  %2 = "onnx.Conv"(%x32, %w32, %none) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x32x8x8xf32>, tensor<64x32x3x3xf32>, none) -> tensor<1x64x8x8xf32>
  %3 = "onnx.Conv"(%x7, %w, %none) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x64x7x7xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x7x7xf32>
  return %0, %1, %2, %3 : tensor<1x64x4x4xf32>, tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x64x7x7xf32>
}

// -----

// A Relu that is the conv's only user goes into the output transform:
// it adds the bias to each of a tile's 4 outputs and takes max(y, 0); no
// generic is left for the Relu. A Relu next to another user stays
// separate.
// CHECK-LABEL: func.func @winograd_relu(
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-COUNT-4: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @winograd_relu(%x: tensor<1x64x9x8xf32>, %b: tensor<64xf32>) -> tensor<1x64x9x8xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<64x64x3x3xf32>}> : () -> tensor<64x64x3x3xf32>
  %0 = "onnx.Conv"(%x, %w, %b) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x64x9x8xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x9x8xf32>
  %1 = "onnx.Relu"(%0) : (tensor<1x64x9x8xf32>) -> tensor<1x64x9x8xf32>
  return %1 : tensor<1x64x9x8xf32>
}

// -----

// CHECK-LABEL: func.func @winograd_relu_shared(
// CHECK-NOT: arith.maximumf
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 1, 1] [1, 64, 5, 4] [1, 1, 2, 2]
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: return
func.func @winograd_relu_shared(%x: tensor<1x64x9x8xf32>, %b: tensor<64xf32>) -> (tensor<1x64x9x8xf32>, tensor<1x64x9x8xf32>) {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<64x64x3x3xf32>}> : () -> tensor<64x64x3x3xf32>
  %0 = "onnx.Conv"(%x, %w, %b) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x64x9x8xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x9x8xf32>
  %1 = "onnx.Relu"(%0) : (tensor<1x64x9x8xf32>) -> tensor<1x64x9x8xf32>
  return %0, %1 : tensor<1x64x9x8xf32>, tensor<1x64x9x8xf32>
}

// -----

// From 28x28 outputs on, F(4x4, 3x3): a 29x28 output is 8x7 tiles of 4x4
// (the last tile row partly used), the input padded to 4 * 8 + 2 = 34 rows
// and 4 * 7 + 2 = 30 columns; 36 stride-4 taps and transformed inputs, a
// contraction with a batch of 36, 16 outputs per tile into stride-4 slices
// of a 32x28 output with the ReLU, cut to 29x28.
// CHECK-LABEL: func.func @winograd4(
// CHECK: %[[PAD:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 4, 1]
// CHECK: } : tensor<1x64x29x28xf32> to tensor<1x64x34x30xf32>
// CHECK-COUNT-36: tensor.extract_slice %[[PAD]][0, 0, {{[0-5]}}, {{[0-5]}}] [1, 64, 8, 7] [1, 1, 4, 4]
// CHECK: tensor.empty() : tensor<36x1x64x8x7xf32>
// CHECK: %[[T:.+]]:36 = linalg.generic
// CHECK: %{{.+}} = arith.constant dense_resource<__elided__> : tensor<36x64x64xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<36x1x64x56xf32>)
// CHECK: %[[TILED:.+]] = tensor.empty() : tensor<1x64x32x28xf32>
// CHECK-COUNT-16: tensor.extract_slice %[[TILED]][0, 0, {{[0-3]}}, {{[0-3]}}] [1, 64, 8, 7] [1, 1, 4, 4]
// CHECK: %[[Y:.+]]:16 = linalg.generic
// CHECK-COUNT-16: arith.maximumf
// CHECK: linalg.yield
// CHECK-COUNT-16: tensor.insert_slice %[[Y]]#
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 0] [1, 64, 29, 28] [1, 1, 1, 1]
func.func @winograd4(%x: tensor<1x64x29x28xf32>, %b: tensor<64xf32>) -> tensor<1x64x29x28xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<64x64x3x3xf32>}> : () -> tensor<64x64x3x3xf32>
  %0 = "onnx.Conv"(%x, %w, %b) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x64x29x28xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x29x28xf32>
  %1 = "onnx.Relu"(%0) : (tensor<1x64x29x28xf32>) -> tensor<1x64x29x28xf32>
  return %1 : tensor<1x64x29x28xf32>
}
