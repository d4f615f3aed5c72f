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

#endif // KILN_PASSES_CODEGEN_CPU_PASSES_TD
