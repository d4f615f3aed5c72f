//===- ExpandMath.cpp - kiln-expand-math pass ------------------------------===//
//
// Generated code needs no libm: transcendentals in f64/f16 are narrowed to
// f32, then expanded by MLIR's math expansion and polynomial approximation
// patterns (the same ones the math dialect tests: log, log1p, expm1, tanh,
// sin, cos, atan, ...), except f32 exp and erf, which have shorter
// expansions of their own (ExpandExpF32: the sigmoid of every SiLU,
// softmax; ExpandErfF32: GELU).
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>
#include <optional>
#include <type_traits>

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

/// floor, ceil, trunc, round and roundeven without libm: on CPUs without
/// SSE4.1 (or FPUs without rounding instructions) LLVM lowers them to
/// floorf/ceilf/... calls, and MLIR's own roundeven expansion rounds
/// 0.49999997 up (it adds 0.5 in float).
/// |x| >= 2^(mantissa bits) (and NaN, inf) is already integral; otherwise
/// truncate through a same-width integer and adjust.
template <typename OpTy>
struct ExpandRounding : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    // Scalars, and the vectors the CPU kernels make (LLVM would call libm
    // per lane where the vector unit cannot round).
    Type type = op.getType();
    auto elem = dyn_cast<FloatType>(getElementTypeOrSelf(type));
    auto vec = dyn_cast<VectorType>(type);
    if (!elem || !(elem.isF32() || elem.isF64()) || (vec && vec.getRank() != 1))
      return failure();
    Location loc = op.getLoc();
    Value x = op.getOperand();
    unsigned width = elem.getWidth();
    auto like = [&](Type scalar) -> Type { return vec ? Type(vec.clone(scalar)) : scalar; };
    Type intType = like(rewriter.getIntegerType(width));
    double limit = elem.isF32() ? 8388608.0 : 4503599627370496.0; // 2^23, 2^52
    auto c = [&](double v) -> Value {
      if (vec)
        return arith::ConstantOp::create(
            rewriter, loc, vec, DenseElementsAttr::get(vec, rewriter.getFloatAttr(elem, v)));
      return arith::ConstantOp::create(rewriter, loc, rewriter.getFloatAttr(elem, v)).getResult();
    };
    Value small = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT,
                                        math::AbsFOp::create(rewriter, loc, x), c(limit));
    // Only convert when small, so the conversion is never poison.
    Value safe = arith::SelectOp::create(rewriter, loc, small, x, c(0));
    Value t = arith::SIToFPOp::create(rewriter, loc, type,
                                      arith::FPToSIOp::create(rewriter, loc, intType, safe));
    Value r = t;
    if (std::is_same_v<OpTy, math::RoundEvenOp> || std::is_same_v<OpTy, math::RoundOp>) {
      // diff = x - trunc(x) is exact here; step away from zero past a half
      // (at exactly a half: always for round, to even for roundeven).
      Value diff = math::AbsFOp::create(rewriter, loc, arith::SubFOp::create(rewriter, loc, safe, t));
      Value step = math::CopySignOp::create(rewriter, loc, c(1), safe);
      Value up = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, diff, c(0.5));
      Value half = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OEQ, diff, c(0.5));
      if (std::is_same_v<OpTy, math::RoundEvenOp>) {
        Value ti = arith::FPToSIOp::create(rewriter, loc, intType, t);
        Value odd = arith::TruncIOp::create(rewriter, loc, like(rewriter.getI1Type()), ti);
        half = arith::AndIOp::create(rewriter, loc, half, odd);
      }
      up = arith::OrIOp::create(rewriter, loc, up, half);
      r = arith::SelectOp::create(rewriter, loc, up, arith::AddFOp::create(rewriter, loc, t, step), t);
    } else if (std::is_same_v<OpTy, math::FloorOp>) {
      Value above = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, t, safe);
      r = arith::SelectOp::create(rewriter, loc, above,
                                  arith::SubFOp::create(rewriter, loc, t, c(1)), t);
    } else if (std::is_same_v<OpTy, math::CeilOp>) {
      Value below = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, t, safe);
      r = arith::SelectOp::create(rewriter, loc, below,
                                  arith::AddFOp::create(rewriter, loc, t, c(1)), t);
    }
    // Keep the sign of zero (floor(-0.5) is -1, ceil(-0.5) is -0).
    r = math::CopySignOp::create(rewriter, loc, r, safe);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, small, r, x);
    return success();
  }
};

/// Builds the f32 expansions below on an op's f32 scalar or 1-D vector
/// type: constants of that type and contractible multiply-adds (fused
/// where the target has FMA, never a call to fmaf).
struct F32Builder {
  PatternRewriter &rewriter;
  Location loc;
  Type type;
  VectorType vec; ///< Null for a scalar.

  /// For `op`'s result type, if it is f32 or a fixed 1-D vector of f32.
  static std::optional<F32Builder> get(PatternRewriter &rewriter, Operation *op) {
    Type type = op->getResult(0).getType();
    auto vec = dyn_cast<VectorType>(type);
    if (!getElementTypeOrSelf(type).isF32() || (vec && (vec.getRank() != 1 || vec.isScalable())))
      return std::nullopt;
    return F32Builder{rewriter, op->getLoc(), type, vec};
  }

  Value constant(float v) {
    TypedAttr attr = rewriter.getF32FloatAttr(v);
    if (vec)
      attr = DenseElementsAttr::get(vec, v);
    return arith::ConstantOp::create(rewriter, loc, attr);
  }

  /// a * b + addend.
  Value mulAdd(Value a, Value b, Value addend) {
    auto contract = arith::FastMathFlags::contract;
    Value m = arith::MulFOp::create(rewriter, loc, a, b, contract);
    return arith::AddFOp::create(rewriter, loc, m, addend, contract);
  }
};

/// f32 exp in about 18 operations, where MLIR's approximation takes about
/// 35 (sigmoid, SiLU, softmax): x = k ln2 + r with k = round(x log2e),
/// found by adding 1.5 * 2^23 (|r| <= ln2 / 2, ln2 split in two so that
/// k * ln2hi is exact); exp(r) by Cephes' expf polynomial; 2^k added to
/// the result's exponent bits (the rounded sum's low bits are k). Below
/// ln(FLT_MIN) the result is 0 (no subnormals), above ln(FLT_MAX) +inf,
/// and NaN stays NaN: the compares are false for it and every step keeps
/// it. Multiply-adds are contractible, fused where the target has FMA.
struct ExpandExpF32 : public OpRewritePattern<math::ExpOp> {
  ExpandExpF32(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &rewriter) const override {
    std::optional<F32Builder> f = F32Builder::get(rewriter, op);
    if (!f)
      return failure();
    Location loc = op.getLoc();
    Type type = f->type;
    Type i32 = f->vec ? Type(f->vec.clone(rewriter.getI32Type())) : Type(rewriter.getI32Type());
    auto c = [&](float v) { return f->constant(v); };
    auto mulAdd = [&](Value a, Value b, Value addend) { return f->mulAdd(a, b, addend); };
    Value x = op.getOperand();
    Value shifter = c(12582912.0f); // 1.5 * 2^23: its ulp is 1.
    Value t = mulAdd(x, c(1.44269504088896341f), shifter);
    Value k = arith::SubFOp::create(rewriter, loc, t, shifter);
    Value r = mulAdd(k, c(-0.693359375f), x);
    r = mulAdd(k, c(2.12194440e-4f), r);
    Value p = c(1.9875691500e-4f);
    for (float coefficient : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                              1.6666665459e-1f, 5.0000001201e-1f, 1.0f, 1.0f})
      p = mulAdd(p, r, c(coefficient));
    // t's bits are those of 1.5 * 2^23 plus k: shifted up by 23, k lands in
    // the exponent field and the rest shifts out.
    Value scale = arith::ShLIOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, i32, t),
        arith::ConstantOp::create(rewriter, loc, f->vec ? TypedAttr(DenseElementsAttr::get(
                                                              cast<ShapedType>(i32), int32_t(23)))
                                                        : TypedAttr(rewriter.getI32IntegerAttr(23))));
    Value y = arith::BitcastOp::create(
        rewriter, loc, type,
        arith::AddIOp::create(rewriter, loc, arith::BitcastOp::create(rewriter, loc, i32, p),
                              scale));
    Value low = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, x,
                                      c(-87.3365478515625f));
    y = arith::SelectOp::create(rewriter, loc, low, c(0.0f), y);
    Value high = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, x,
                                       c(88.72283172607421875f));
    y = arith::SelectOp::create(rewriter, loc, high,
                                c(std::numeric_limits<float>::infinity()), y);
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// f32 erf (GELU) in about 17 operations, where MLIR's approximation takes
/// about 37 (three intervals, each coefficient a select): one rational
/// function x P(x^2) / Q(x^2) of degrees 5 and 5 in x^2, fitted on
/// [0, 3.92] by utils/math/fit_erf.py (at most 6 ulp off in f32 against
/// float64; MLIR's, 4), on x clamped to [-4, 4] (beyond, erf is 1 in f32)
/// and the result to [-1, 1]. Q has positive coefficients only, so it
/// never vanishes. NaN stays NaN: each clamp is a select that is false
/// for it.
struct ExpandErfF32 : public OpRewritePattern<math::ErfOp> {
  ExpandErfF32(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(math::ErfOp op, PatternRewriter &rewriter) const override {
    std::optional<F32Builder> f = F32Builder::get(rewriter, op);
    if (!f)
      return failure();
    Location loc = op.getLoc();
    auto c = [&](float v) { return f->constant(v); };
    // Horner's rule in t, highest coefficient first.
    auto polynomial = [&](Value t, ArrayRef<float> coefficients) {
      Value r = c(coefficients.front());
      for (float k : coefficients.drop_front())
        r = f->mulAdd(r, t, c(k));
      return r;
    };
    // min(v, hi) and max(v, -hi) as selects that keep NaN.
    auto clamp = [&](Value v, float hi) -> Value {
      Value above = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, v, c(hi));
      v = arith::SelectOp::create(rewriter, loc, above, c(hi), v);
      Value below = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, v, c(-hi));
      return arith::SelectOp::create(rewriter, loc, below, c(-hi), v);
    };
    Value x = clamp(op.getOperand(), 4.0f);
    Value t = arith::MulFOp::create(rewriter, loc, x, x);
    Value p = polynomial(t, {2.049978775175987e-06f, 0.00028486986411735415f,
                             0.0037654738407582045f, 0.05274825543165207f, 0.19040447473526f,
                             1.1283791065216064f});
    Value q = polynomial(t, {3.8089910958660766e-05f, 0.0011624826584011316f,
                             0.014968940056860447f, 0.11410810053348541f, 0.5020743012428284f,
                             1.0f});
    Value y = arith::DivFOp::create(rewriter, loc, arith::MulFOp::create(rewriter, loc, x, p), q);
    rewriter.replaceOp(op, clamp(y, 1.0f));
    return success();
  }
};

/// Float max/min (MaxPool, ReLU, Clip, Max/Min, reductions) may return
/// either zero for max(-0, +0): ONNX leaves the sign of zero open there,
/// and without it x86 needs one max, one compare and one blend per
/// operation instead of six (NaN still propagates).
void ignoreSignOfZeroInMinMax(Operation *root) {
  MLIRContext *ctx = root->getContext();
  root->walk([&](Operation *op) {
    if (isa<arith::MaximumFOp, arith::MinimumFOp>(op)) {
      auto fmf = cast<arith::ArithFastMathInterface>(op);
      arith::FastMathFlags f = fmf.getFastMathFlagsAttr().getValue();
      op->setAttr(fmf.getFastMathAttrName(),
                  arith::FastMathFlagsAttr::get(ctx, f | arith::FastMathFlags::nsz));
    } else if (auto red = dyn_cast<vector::ReductionOp>(op)) {
      if (red.getKind() == vector::CombiningKind::MAXIMUMF ||
          red.getKind() == vector::CombiningKind::MINIMUMF)
        red.setFastmathAttr(arith::FastMathFlagsAttr::get(
            ctx, red.getFastmath() | arith::FastMathFlags::nsz));
    }
  });
}

struct ExpandMathPass : public kiln::impl::ExpandMathPassBase<ExpandMathPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ignoreSignOfZeroInMinMax(getOperation());
    RewritePatternSet patterns(ctx);
    patterns.add<NarrowToF32, ExpandExpF32, ExpandErfF32>(ctx);
    math::populateExpansionPatterns(patterns, {"sinh", "cosh", "asinh",
                                         "acosh", "atanh", "tan", "powf",
                                         "fpowi", "exp2", "ctlz"});
    populateMathPolynomialApproximationPatterns(patterns);
    // math.round (half away from zero) has no one instruction on x86.
    patterns.add<ExpandRounding<math::RoundOp>>(ctx);
    if (!nativeRounding)
      patterns.add<ExpandRounding<math::FloorOp>, ExpandRounding<math::CeilOp>,
                   ExpandRounding<math::TruncOp>, ExpandRounding<math::RoundEvenOp>>(ctx);
    // bfloat16 conversions as integer arithmetic (no compiler-rt calls).
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
