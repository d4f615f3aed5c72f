//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//

#ifndef KILN_PASSES_CODEGEN_CPU_PASSES_TD
#define KILN_PASSES_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def ExpandMathPass : Pass<"kiln-expand-math", "mlir::ModuleOp"> {
  let summary = "Expand transcendental math ops into polynomials (no libm)";
  let description = [{
    Generated code must not call libm. f64 and f16 transcendentals are
    computed in f32; then MLIR's math expansions and polynomial
    approximations turn exp, log, log1p, tanh, erf, sin, cos, ... into
    arithmetic. What remains (sqrt, fabs, floor, ceil, fma...) maps to LLVM
    intrinsics with instructions on the CPU targets kiln supports.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def LowerCopiesPass : Pass<"kiln-lower-copies", "mlir::ModuleOp"> {
  let summary = "Turn non-contiguous memref.copy into linalg.copy loops";
  let description = [{
    `memref.copy` between strided views would lower to a call into MLIR's
    C runner library; generated code has no such library. Copies where
    either side is not identity-laid-out become `linalg.copy`, which the
    loop lowering expands in place. Contiguous copies stay and become
    `memcpy` intrinsics.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FlattenGlobalsPass : Pass<"kiln-flatten-globals", "mlir::ModuleOp"> {
  let summary = "Make constant memref globals one-dimensional";
  let description = [{
    LLVM IR turns an N-D constant into nested arrays, one constant per
    innermost row: millions of small uniqued constants for a large weight
    tensor (gigabytes of compiler memory). Rewriting every `memref.global`
    to a 1-D type (the same dense or resource data) and every
    `memref.get_global` to the 1-D global plus a `memref.expand_shape`
    keeps each weight tensor one flat constant.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def EmptyArgumentsPass : Pass<"kiln-empty-arguments", "mlir::ModuleOp"> {
  let summary = "Pass graph inputs/outputs without elements as memref<0xT>";
  let description = [{
    The bare-pointer calling convention refuses memrefs with a zero dim
    after the first. Such an entry argument becomes `memref<0xT>` (nothing
    reads it) and its uses get a zero-sized `memref.alloca` of the
    original type: no element of it can be read or written.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // KILN_PASSES_CODEGEN_CPU_PASSES_TD
