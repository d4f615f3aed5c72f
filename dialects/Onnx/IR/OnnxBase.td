//===- OnnxBase.td - Base class of onnx ops ----------------*- tablegen -*-===//

#ifndef KILN_ONNX_BASE_TD
#define KILN_ONNX_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "dialects/Onnx/IR/OnnxDialect.td"
include "dialects/Onnx/IR/OnnxTypes.td"
include "dialects/Onnx/IR/OnnxInterfaces.td"

/// ONNX INT attributes: signed 64-bit, printed as plain `i64`.
def Onnx_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
                                                "64-bit integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

class Onnx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Onnx_Dialect, mnemonic, traits>;

#endif // KILN_ONNX_BASE_TD
