// RUN: kiln-opt %s --convert-onnx-to-linalg -mlir-print-local-scope | FileCheck %s
// String tensors (Strings.cpp) become tensors of i64 (each element the
// address of its text); text is read and made by the runtime's
// kiln_string_* hooks, declared as private functions. StringNormalizer
// walks its input in an scf.for carrying the output and the count kept;
// Cast calls a hook per element; the entry function's string results are
// exported (copied for the caller) just before it returns.

// CHECK-DAG: func.func private @kiln_string_export(i64) -> i64
// CHECK-DAG: func.func private @kiln_string_to_i64(i64) -> i64
// CHECK-DAG: func.func private @kiln_string_from_f32(f32) -> i64
// CHECK-DAG: func.func private @kiln_string_change_case(i64, i32) -> i64
// CHECK-DAG: func.func private @kiln_string_in_list(i64, i64, i64, i32) -> i32
// CHECK-DAG: llvm.mlir.global private constant @[[STOP:kiln_strings_[0-9]+]]("a\00the\00")
// CHECK-DAG: llvm.mlir.global private constant @[[EMPTY:kiln_strings_[0-9]+]]("\00")
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<1x4xi64>, %[[F:.*]]: tensor<3xf32>) -> (tensor<1x2xi64>, tensor<3xi64>, tensor<1x4xi64>)
// The output starts as "" everywhere.
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]]
// CHECK: %[[E:.*]] = llvm.mlir.addressof @[[EMPTY]]
// CHECK: %[[EI:.*]] = llvm.ptrtoint %[[E]] : !llvm.ptr to i64
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[EI]] : i64) outs({{.*}} : tensor<2xi64>)
// CHECK: %[[L:.*]] = llvm.mlir.addressof @[[STOP]]
// CHECK: %[[LI:.*]] = llvm.ptrtoint %[[L]]
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%[[OUT:.*]] = %[[INIT]], %[[N:.*]] = %{{.*}}) -> (tensor<2xi64>, index)
// CHECK: %[[S:.*]] = tensor.extract %[[FLAT]][%[[I]]]
// Two stopwords, compared ignoring case (1).
// CHECK: %[[FOUND:.*]] = func.call @kiln_string_in_list(%[[S]], %[[LI]], %c2_i64, %c1_i32)
// CHECK: %[[KEEP:.*]] = arith.cmpi eq, %[[FOUND]], %c0_i32
// CHECK: %[[FITS:.*]] = arith.cmpi ult, %[[N]], %c2
// CHECK: %[[WRITE:.*]] = arith.andi %[[KEEP]], %[[FITS]]
// CHECK: scf.if %[[WRITE]]
// UPPER is 1.
// CHECK: %[[UP:.*]] = func.call @kiln_string_change_case(%[[S]], %c1_i32
// CHECK: tensor.insert %[[UP]] into %[[OUT]][%[[N]]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[N]], %c1
// CHECK: arith.select %[[KEEP]], %[[NEXT]], %[[N]]
// CHECK: %[[NORM:.*]] = tensor.expand_shape
// CHECK: %[[TEXT:.*]] = linalg.generic {{.*}} ins(%[[F]] : tensor<3xf32>)
// CHECK: func.call @kiln_string_from_f32
// CHECK: %[[INTS:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x4xi64>)
// CHECK: func.call @kiln_string_to_i64
// The string results only are exported.
// CHECK: %[[R0:.*]] = linalg.generic {{.*}} ins(%[[NORM]] : tensor<1x2xi64>)
// CHECK: func.call @kiln_string_export
// CHECK: %[[R1:.*]] = linalg.generic {{.*}} ins(%[[TEXT]] : tensor<3xi64>)
// CHECK: func.call @kiln_string_export
// CHECK: return %[[R0]], %[[R1]], %[[INTS]]
func.func @main(%x: tensor<1x4x!onnx.string>, %f: tensor<3xf32>) -> (tensor<1x2x!onnx.string>, tensor<3x!onnx.string>, tensor<1x4xi64>) {
  %0 = "onnx.StringNormalizer"(%x) <{case_change_action = "UPPER", is_case_sensitive = 0 : i64, stopwords = ["a", "the"]}> : (tensor<1x4x!onnx.string>) -> tensor<1x2x!onnx.string>
  %1 = "onnx.Cast"(%f) <{to = 8 : i64}> : (tensor<3xf32>) -> tensor<3x!onnx.string>
  %2 = "onnx.Cast"(%x) <{to = 7 : i64}> : (tensor<1x4x!onnx.string>) -> tensor<1x4xi64>
  return %0, %1, %2 : tensor<1x2x!onnx.string>, tensor<3x!onnx.string>, tensor<1x4xi64>
}
