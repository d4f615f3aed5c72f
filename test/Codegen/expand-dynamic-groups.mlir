// RUN: kiln-opt %s --kiln-expand-dynamic-groups | FileCheck %s
// RUN: kiln-opt %s --kiln-expand-dynamic-groups --expand-strided-metadata | FileCheck %s --check-prefix=LOWERED

// A flat dim split into two dynamic ones (a 1x1 conv's H' * W' pixels):
// a reinterpret_cast with the sizes' suffix products as strides, which
// expand-strided-metadata takes (it crashes on the expand_shape).
// CHECK-LABEL: func.func @two_dynamic(
// CHECK-SAME: %[[X:.*]]: memref<16x?xf32>, %[[H:.*]]: index, %[[W:.*]]: index
// CHECK: %[[HW:.*]] = arith.muli %[[W]], %[[H]]
// CHECK: %[[CHW:.*]] = arith.muli %[[HW]], %c16
// CHECK: memref.reinterpret_cast %[[X]] to offset: [0], sizes: [1, 16, %[[H]], %[[W]]], strides: [%[[CHW]], %[[HW]], %[[W]], 1]
// CHECK-NOT: memref.expand_shape
// LOWERED-LABEL: func.func @two_dynamic(
// LOWERED-NOT: memref.expand_shape
func.func @two_dynamic(%x: memref<16x?xf32>, %h: index, %w: index) -> memref<1x16x?x?xf32> {
  %e = memref.expand_shape %x [[0, 1], [2, 3]] output_shape [1, 16, %h, %w] : memref<16x?xf32> into memref<1x16x?x?xf32>
  return %e : memref<1x16x?x?xf32>
}

// One dynamic size per group: left alone (expand-strided-metadata takes
// it). A strided source would be too.
// CHECK-LABEL: func.func @left_alone(
// CHECK: memref.expand_shape
func.func @left_alone(%x: memref<16x?xf32>, %h: index) -> memref<1x16x?xf32> {
  %a = memref.expand_shape %x [[0, 1], [2]] output_shape [1, 16, %h] : memref<16x?xf32> into memref<1x16x?xf32>
  return %a : memref<1x16x?xf32>
}
