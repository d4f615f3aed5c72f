// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// Round trip: ops print and parse back to the same IR.

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  // CHECK: "onnx.Add"(%{{.*}}, %{{.*}}) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %0 = "onnx.Add"(%a, %b) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  // CHECK: "onnx.LeakyRelu"(%{{.*}}) <{alpha = 2.000000e-01 : f32}>
  %1 = "onnx.LeakyRelu"(%0) {alpha = 0.2 : f32} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}

// CHECK-LABEL: func @optional_inputs
func.func @optional_inputs(%x: tensor<4xf32>, %max: tensor<f32>) -> tensor<4xf32> {
  // CHECK: %[[NONE:.*]] = onnx.NoValue
  // CHECK: "onnx.Clip"(%{{.*}}, %[[NONE]], %{{.*}})
  %none = onnx.NoValue
  %0 = "onnx.Clip"(%x, %none, %max) : (tensor<4xf32>, none, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func @conv_attrs
func.func @conv_attrs(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %none = onnx.NoValue
  // CHECK: "onnx.Conv"({{.*}}) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}>
  %0 = "onnx.Conv"(%x, %w, %none) {pads = array<i64: 1, 1, 1, 1>, group = 1 : i64, auto_pad = "NOTSET"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// CHECK-LABEL: func @types
func.func @types(%s: !onnx.seq<tensor<?xf32>>, %o: !onnx.opt<tensor<2xi64>>, %t: tensor<2x!onnx.string>) -> (!onnx.seq<tensor<?xf32>>, !onnx.opt<tensor<2xi64>>, tensor<2x!onnx.string>) {
  // CHECK: !onnx.seq<tensor<?xf32>>, !onnx.opt<tensor<2xi64>>, tensor<2x!onnx.string>
  return %s, %o, %t : !onnx.seq<tensor<?xf32>>, !onnx.opt<tensor<2xi64>>, tensor<2x!onnx.string>
}

// CHECK-LABEL: func @regions
func.func @regions(%c: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: "onnx.If"
  // CHECK: onnx.Yield
  %0 = "onnx.If"(%c) ({
    onnx.Yield %a : tensor<2xf32>
  }, {
    %1 = "onnx.Neg"(%a) : (tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %1 : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
