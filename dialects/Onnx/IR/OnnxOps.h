//===- OnnxOps.h - The onnx dialect -------------------------------*- C++ -*-===//
//
// Declares the onnx dialect, its types and every op (generated from the ONNX
// schema registry). Include this, not the .inc files.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_IR_ONNXOPS_H
#define KILN_DIALECTS_ONNX_IR_ONNXOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Onnx/IR/OnnxDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Onnx/IR/OnnxTypes.h.inc"

#include "dialects/Onnx/IR/OnnxInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/Onnx/IR/OnnxOps.h.inc"

#endif // KILN_DIALECTS_ONNX_IR_ONNXOPS_H
