//===- OnnxDialect.td - The onnx dialect -------------------*- tablegen -*-===//
//
// The `onnx` dialect: one op per operator of the default ONNX domain, in the
// interface of its newest opset (<= 17). Ops are generated from libonnx's
// schema registry (OnnxOps.td, built by utils/onnx-ods-gen); this file holds
// the dialect, the base op class and the hand-written ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ONNX_DIALECT_TD
#define KILN_ONNX_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Onnx_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::kiln::onnx";
  let summary = "Operators of the ONNX default domain";
  let description = [{
    Every operator of the default ONNX domain, in the interface of its newest
    opset version up to 17. The importer rewrites older opsets to these forms.
    Optional inputs and outputs that a node leaves out are values of type
    `none` (made by `onnx.NoValue`); graph attributes are regions ended by
    `onnx.Yield`.
  }];
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

#endif // KILN_ONNX_DIALECT_TD
