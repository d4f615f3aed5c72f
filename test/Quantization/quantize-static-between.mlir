// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-quantize-static{ranges=-1.0,3.0,0.0,2.0,0.0,4.0,0.0,3.0})' | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-expose-activation-ranges)' | FileCheck %s --check-prefix=EXPOSE
// kiln-quantize-static (QuantizeStatic.cpp) on what sits between the
// weighted ops: a residual Add and a MaxPool join (their inputs come from
// quantised ops, quantised ops read their results); the Reshape whose
// result only a Softmax reads does not.
//
// The activations, in order: x (the first Conv's input, also the Add's),
// r1 (the second Conv's), r (the MaxPool's) and p (the last Conv's). The
// second Conv's result, which the Add alone reads, stays float (the Add
// becomes that Conv's epilogue). p takes r's parameters (scale 4 / 255,
// not 3 / 255): the MaxPool picks values, so the pairs around it cancel.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x8x4x4xf32>
// CHECK: %[[XQ:.*]] = "onnx.QuantizeLinear"(%[[X]],
// CHECK: %[[XD:.*]] = "onnx.DequantizeLinear"(%[[XQ]],
// CHECK: "onnx.Conv"(%[[XD]],
// CHECK: %[[R1:.*]] = "onnx.Relu"
// CHECK: %[[R1Q:.*]] = "onnx.QuantizeLinear"(%[[R1]],
// CHECK: %[[R1D:.*]] = "onnx.DequantizeLinear"(%[[R1Q]],
// CHECK: %[[C2:.*]] = "onnx.Conv"(%[[R1D]],
// CHECK: %[[S:.*]] = "onnx.Add"(%[[C2]], %[[XD]])
// CHECK: %[[R:.*]] = "onnx.Relu"(%[[S]])
// CHECK: %[[RS:.*]] = "onnx.Constant"() <{value = dense<0.0156862754> : tensor<f32>}>
// CHECK: %[[RZ:.*]] = "onnx.Constant"() <{value = dense<0> : tensor<ui8>}>
// CHECK: %[[RQ:.*]] = "onnx.QuantizeLinear"(%[[R]], %[[RS]], %[[RZ]])
// CHECK: %[[RD:.*]] = "onnx.DequantizeLinear"(%[[RQ]], %[[RS]], %[[RZ]])
// CHECK: %[[P:.*]], %{{.*}} = "onnx.MaxPool"(%[[RD]])
// CHECK: "onnx.Constant"() <{value = dense<0.0156862754> : tensor<f32>}>
// CHECK: %[[PQ:.*]] = "onnx.QuantizeLinear"(%[[P]],
// CHECK: %[[PD:.*]] = "onnx.DequantizeLinear"(%[[PQ]],
// CHECK: "onnx.Conv"(%[[PD]],
// CHECK: "onnx.Reshape"(%[[P]],
// CHECK: return {{.*}}, %[[R]],

// The calibration build exposes the four, in that order.
// EXPOSE-LABEL: func.func @main(
// EXPOSE: %[[R1:.*]] = "onnx.Relu"
// EXPOSE: %[[R:.*]] = "onnx.Relu"
// EXPOSE: %[[P:.*]], %{{.*}} = "onnx.MaxPool"
// EXPOSE: "onnx.ReduceMin"(%arg0)
// EXPOSE: "onnx.ReduceMin"(%[[R1]])
// EXPOSE: "onnx.ReduceMin"(%[[R]])
// EXPOSE: "onnx.ReduceMin"(%[[P]])
// EXPOSE-NOT: "onnx.ReduceMin"
func.func @main(%x: tensor<1x8x4x4xf32> {onnx.name = "x"}) -> (tensor<1x8x2x2xf32> {onnx.name = "y"}, tensor<1x8x4x4xf32> {onnx.name = "r"}, tensor<1x32xf32> {onnx.name = "z"}) {
  %w = "onnx.Constant"() <{value = dense<0.25> : tensor<8x8x3x3xf32>}> : () -> tensor<8x8x3x3xf32>
  %b = "onnx.Constant"() <{value = dense<0.1> : tensor<8xf32>}> : () -> tensor<8xf32>
  %c1 = "onnx.Conv"(%x, %w, %b) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  %r1 = "onnx.Relu"(%c1) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c2 = "onnx.Conv"(%r1, %w, %b) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  %s = "onnx.Add"(%c2, %x) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = "onnx.Relu"(%s) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %p, %i = "onnx.MaxPool"(%r) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}> : (tensor<1x8x4x4xf32>) -> (tensor<1x8x2x2xf32>, none)
  %c3 = "onnx.Conv"(%p, %w, %b) <{auto_pad = "NOTSET", group = 1 : i64, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x2x2xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x2x2xf32>
  %shape = "onnx.Constant"() <{value = dense<[1, 32]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %t = "onnx.Reshape"(%p, %shape) <{allowzero = 0 : i64}> : (tensor<1x8x2x2xf32>, tensor<2xi64>) -> tensor<1x32xf32>
  %z = "onnx.Softmax"(%t) <{axis = -1 : i64}> : (tensor<1x32xf32>) -> tensor<1x32xf32>
  return %c3, %r, %z : tensor<1x8x2x2xf32>, tensor<1x8x4x4xf32>, tensor<1x32xf32>
}
