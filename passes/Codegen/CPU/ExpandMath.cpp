//===- ExpandMath.cpp - kiln-expand-math pass ------------------------------===//
//
// Generated code needs no libm: transcendentals in f64/f16 are narrowed to
// f32, then expanded by MLIR's math expansion and polynomial approximation
// patterns (the same ones the math dialect tests: exp, log, log1p, expm1,
// tanh, erf, sin, cos, atan, ...).
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "kiln-expand-math"

namespace kiln {
#define GEN_PASS_DEF_EXPANDMATHPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// True for the unary math ops that have f32-only approximations.
bool isApproximated(Operation *op) {
  return isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
             math::Log2Op, math::Log1pOp, math::TanhOp, math::ErfOp,
             math::SinOp, math::CosOp, math::AtanOp, math::Atan2Op,
             math::AsinOp, math::AcosOp, math::CbrtOp, math::RsqrtOp>(op);
}

/// Computes an f64/f16/bf16 transcendental in f32.
struct NarrowToF32 : public RewritePattern {
  NarrowToF32(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isApproximated(op) || op->getNumResults() != 1)
      return failure();
    Type type = op->getResult(0).getType();
    if (!isa<FloatType>(type) || type.isF32())
      return failure();
    Type f32 = rewriter.getF32Type();
    Location loc = op->getLoc();
    SmallVector<Value> narrowed;
    for (Value v : op->getOperands()) {
      if (type.getIntOrFloatBitWidth() > 32)
        narrowed.push_back(arith::TruncFOp::create(rewriter, loc, f32, v));
      else
        narrowed.push_back(arith::ExtFOp::create(rewriter, loc, f32, v));
    }
    OperationState state(loc, op->getName().getStringRef(), narrowed, {f32},
                         op->getAttrs());
    Operation *wide = rewriter.create(state);
    Value back;
    if (type.getIntOrFloatBitWidth() > 32)
      back = arith::ExtFOp::create(rewriter, loc, type, wide->getResult(0));
    else
      back = arith::TruncFOp::create(rewriter, loc, type, wide->getResult(0));
    rewriter.replaceOp(op, back);
    return success();
  }
};

struct ExpandMathPass : public kiln::impl::ExpandMathPassBase<ExpandMathPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<NarrowToF32>(ctx);
    math::populateExpansionPatterns(patterns, {"sinh", "cosh", "asinh",
                                         "acosh", "atanh", "tan", "powf",
                                         "fpowi", "exp2", "roundeven", "round",
                                         "ctlz"});
    populateMathPolynomialApproximationPatterns(patterns);
    // bfloat16 conversions as integer arithmetic (no compiler-rt calls).
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
