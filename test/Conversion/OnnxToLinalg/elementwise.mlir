// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// Elementwise ops (Elementwise.cpp): one linalg.generic per op, operands
// broadcast through their indexing maps (a size-1 dim reads index 0, a
// missing leading dim is dropped from the map); unsigned ONNX types become
// signless and pick the unsigned arith op; float16/bfloat16 operands are
// extended to f32 in the body and the result truncated back.

// CHECK-LABEL: func.func @add_broadcast(
// CHECK-SAME: %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<3xf32>) outs(%[[INIT]] : tensor<2x3xf32>)
// CHECK: arith.addf
// CHECK-NOT: onnx.
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.Add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Both operands broadcast: size-1 dims are read at index 0.
// CHECK-LABEL: func.func @mul_both_broadcast(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK: arith.mulf
func.func @mul_both_broadcast(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.Mul"(%a, %b) : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Three operands of three ranks.
// CHECK-LABEL: func.func @where_broadcast(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK: ^bb0(%[[C:.*]]: i1, %[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.select %[[C]], %[[X]], %[[Y]] : f32
func.func @where_broadcast(%c: tensor<3xi1>, %a: tensor<2x3xf32>, %b: tensor<1xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.Where"(%c, %a, %b) : (tensor<3xi1>, tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// ui8 becomes i8 in the signature and the body; the division is unsigned
// and a zero divisor is replaced (no UB in the generated code).
// CHECK-LABEL: func.func @div_ui8(
// CHECK-SAME: %{{.*}}: tensor<4xi8>, %{{.*}}: tensor<4xi8>) -> tensor<4xi8>
// CHECK: ^bb0(%[[N:.*]]: i8, %[[D:.*]]: i8, %{{.*}}: i8):
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : i8
// CHECK: %[[SAFE:.*]] = arith.select %[[ZERO]], %{{.*}}, %[[D]] : i8
// CHECK: arith.divui %[[N]], %[[SAFE]] : i8
// CHECK-NOT: ui8
func.func @div_ui8(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "onnx.Div"(%a, %b) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Signed division: also guards x / -1 (INT_MIN / -1 overflows).
// CHECK-LABEL: func.func @div_i64(
// CHECK: %[[MINUS1:.*]] = arith.constant -1 : i64
// CHECK: %[[M1:.*]] = arith.cmpi eq, %{{.*}}, %[[MINUS1]] : i64
// CHECK: arith.divsi
// CHECK: arith.select %[[M1]]
func.func @div_i64(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = "onnx.Div"(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @cast_f32_to_ui8(
// CHECK-SAME: -> tensor<4xi8>
// CHECK: arith.fptoui %{{.*}} : f32 to i8
// CHECK-NOT: ui8
func.func @cast_f32_to_ui8(%x: tensor<4xf32>) -> tensor<4xui8> {
  %0 = "onnx.Cast"(%x) <{to = 2 : i64}> : (tensor<4xf32>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @cast_ui8_to_f32(
// CHECK-SAME: %{{.*}}: tensor<4xi8>) -> tensor<4xf32>
// CHECK: arith.uitofp %{{.*}} : i8 to f32
func.func @cast_ui8_to_f32(%x: tensor<4xui8>) -> tensor<4xf32> {
  %0 = "onnx.Cast"(%x) <{to = 1 : i64}> : (tensor<4xui8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cast_i8_to_f32(
// CHECK: arith.sitofp %{{.*}} : i8 to f32
func.func @cast_i8_to_f32(%x: tensor<4xi8>) -> tensor<4xf32> {
  %0 = "onnx.Cast"(%x) <{to = 1 : i64}> : (tensor<4xi8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// float16 arithmetic is computed in f32: the generic keeps f16 operands
// and result (broadcast maps as usual), the body extends each operand,
// applies the op in f32 and truncates back to f16.
// CHECK-LABEL: func.func @max_f16(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<2x3xf16>, %[[B:[a-z0-9_]+]]: tensor<3xf16>) -> tensor<2x3xf16>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<2x3xf16>, tensor<3xf16>) outs(%{{.*}} : tensor<2x3xf16>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f16, %[[Z:[a-z0-9_]+]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT: %[[ZW:.*]] = arith.extf %[[Z]] : f16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[XW]], %[[ZW]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[M]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[R]] : f16
// CHECK: return %[[Y]] : tensor<2x3xf16>
func.func @max_f16(%a: tensor<2x3xf16>, %b: tensor<3xf16>) -> tensor<2x3xf16> {
  %0 = "onnx.Max"(%a, %b) : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// bfloat16 the same way: extf to f32, addf in f32, truncf to bf16.
// CHECK-LABEL: func.func @add_bf16(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<4xbf16>, %[[B:[a-z0-9_]+]]: tensor<4xbf16>) -> tensor<4xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<4xbf16>, tensor<4xbf16>) outs(%{{.*}} : tensor<4xbf16>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: bf16, %[[Z:[a-z0-9_]+]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[ZW:.*]] = arith.extf %[[Z]] : bf16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[XW]], %[[ZW]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
func.func @add_bf16(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = "onnx.Add"(%a, %b) : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// A math function on bfloat16 also runs in f32.
// CHECK-LABEL: func.func @sqrt_bf16(
// CHECK: ^bb0(%[[X:[a-z0-9_]+]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[S:.*]] = math.sqrt %[[XW]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
func.func @sqrt_bf16(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = "onnx.Sqrt"(%a) : (tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// A float16 comparison: the operands are extended and compared in f32;
// the i1 result is not truncated.
// CHECK-LABEL: func.func @less_f16(
// CHECK: ^bb0(%[[X:[a-z0-9_]+]]: f16, %[[Z:[a-z0-9_]+]]: f16, %{{.*}}: i1):
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT: %[[ZW:.*]] = arith.extf %[[Z]] : f16 to f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf olt, %[[XW]], %[[ZW]] : f32
// CHECK-NEXT: linalg.yield %[[C]] : i1
// CHECK-NOT: arith.truncf
func.func @less_f16(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xi1> {
  %0 = "onnx.Less"(%a, %b) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
