//===- OnnxTypes.td - Types of the onnx dialect ------------*- tablegen -*-===//
//
// ONNX has three kinds of value MLIR's builtins lack: string elements,
// sequences of tensors and optionals.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ONNX_TYPES_TD
#define KILN_ONNX_TYPES_TD

include "dialects/Onnx/IR/OnnxDialect.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Onnx_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Onnx_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Onnx_StringType : Onnx_Type<"String", "string"> {
  let summary = "ONNX string element type";
}

def Onnx_SeqType : Onnx_Type<"Seq", "seq"> {
  let summary = "ONNX sequence of tensors";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def Onnx_OptType : Onnx_Type<"Opt", "opt"> {
  let summary = "ONNX optional value";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

/// A sequence whose elements satisfy one of `allowed`.
class Onnx_SeqOf<list<Type> allowed>
    : ContainerType<AnyTypeOf<allowed>,
                         CPred<"::llvm::isa<::kiln::onnx::SeqType>($_self)">,
                         "::llvm::cast<::kiln::onnx::SeqType>($_self).getElementType()",
                         "ONNX sequence">;

/// An optional whose payload satisfies one of `allowed`.
class Onnx_OptOf<list<Type> allowed>
    : ContainerType<AnyTypeOf<allowed>,
                         CPred<"::llvm::isa<::kiln::onnx::OptType>($_self)">,
                         "::llvm::cast<::kiln::onnx::OptType>($_self).getElementType()",
                         "ONNX optional">;

#endif // KILN_ONNX_TYPES_TD
