//===- Passes.h - Bufferization and memory planning ---------------*- C++ -*-===//

#ifndef KILN_PASSES_MEMORY_PASSES_H
#define KILN_PASSES_MEMORY_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Memory/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Memory/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_MEMORY_PASSES_H
