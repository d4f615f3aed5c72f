//===- QdqPropagation.cpp - QDQ pairs moved through exact ops ---*- C++ -*-===//
//
// The first stage of kiln-fuse-qdq. A QDQ model writes every quantised
// tensor as DequantizeLinear -> float op -> QuantizeLinear, also around
// ops that only move values or pick among them (Reshape, Transpose,
// Concat, MaxPool, Relu, ...). On the 8-bit values those ops give the same
// result, exactly, so this stage moves the DequantizeLinears down through
// them and the QuantizeLinears up, until each pair meets and cancels:
//
//   op(DequantizeLinear(x, s, z))      -> DequantizeLinear(op(x), s, z)
//   QuantizeLinear(op(y), s, z)        -> op(QuantizeLinear(y, s, z))
//                                          (op's result read by nothing else)
//   QuantizeLinear(DequantizeLinear(x, s, z), s, z) -> x
//
// for op one of the data-movement ops below (their data operand; every
// operand of a Concat, whose inputs must then share s and z), and
// MaxPool, which picks the largest value: the same one either way, as
// long as s > 0 (a constant). Relu and Clip become integer Max and Clip
// at the quantised bounds, exact because quantisation is monotone:
//
//   Relu(DequantizeLinear(x, s, z))    -> DequantizeLinear(Max(x, z), s, z)
//   QuantizeLinear(Relu(y), s, z)      -> Max(QuantizeLinear(y, s, z), z)
//   QuantizeLinear(Clip(y, lo, hi), s, z)
//                 -> Clip(QuantizeLinear(y, s, z), q(lo), q(hi))
//
// Only per-tensor scales and zero points move. What is left between a
// DequantizeLinear and a QuantizeLinear is elementwise (Add, Mul, a
// requantisation) or a reduction (the average pools), which the linalg
// lowering fuses into one loop over the 8-bit values. The second stage
// (FuseQdq.cpp) then finds Conv and MatMul directly before their
// QuantizeLinear, QLinearConv's form.
//
//===----------------------------------------------------------------------===//

#include "passes/Quantization/QdqPropagation.h"
#include "passes/Quantization/Passes.h"

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

using namespace mlir;
namespace onnx = kiln::onnx;

namespace {

/// The value of a constant tensor of one element, as a DenseElementsAttr.
DenseElementsAttr scalarConstant(Value v) {
  DenseElementsAttr dense = onnx::constantOf(v);
  if (!dense || dense.getNumElements() != 1 || dense.getType().getRank() > 1)
    return nullptr;
  return dense;
}

/// A per-tensor quantisation: a constant positive float scale and a
/// constant zero point (or none: 0) of the 8-bit type `elem`.
struct Parameters {
  float scale = 0;
  int64_t zeroPoint = 0;
  Type elem;

  bool operator==(const Parameters &o) const {
    return scale == o.scale && zeroPoint == o.zeroPoint && elem == o.elem;
  }
};

std::optional<Parameters> parameters(Value scale, Value zeroPoint, Type elem) {
  DenseElementsAttr s = scalarConstant(scale);
  if (!s || !s.getElementType().isF32() || !elem.isInteger(8))
    return std::nullopt;
  Parameters p;
  p.scale = s.getSplatValue<float>();
  p.elem = elem;
  if (!std::isfinite(p.scale) || !(p.scale > 0))
    return std::nullopt;
  if (!onnx::isNone(zeroPoint)) {
    DenseElementsAttr z = scalarConstant(zeroPoint);
    if (!z || z.getElementType() != elem)
      return std::nullopt;
    APInt v = z.getSplatValue<APInt>();
    p.zeroPoint = elem.isUnsignedInteger() ? int64_t(v.getZExtValue()) : v.getSExtValue();
  }
  return p;
}

Type elementOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

std::optional<Parameters> parameters(onnx::DequantizeLinearOp dq) {
  return parameters(dq.getXScale(), dq.getXZeroPoint(), elementOf(dq.getX()));
}

std::optional<Parameters> parameters(onnx::QuantizeLinearOp q) {
  return parameters(q.getYScale(), q.getYZeroPoint(), elementOf(q.getY()));
}

/// Ops that move, repeat or drop values without changing them: the same
/// on the 8-bit values as on the dequantised ones. Their data operand is
/// operand 0; Concat's are all operands.
bool movesValues(Operation *op) {
  return isa<onnx::ReshapeOp, onnx::FlattenOp, onnx::TransposeOp, onnx::SqueezeOp,
             onnx::UnsqueezeOp, onnx::IdentityOp, onnx::SliceOp, onnx::ExpandOp, onnx::TileOp,
             onnx::GatherOp, onnx::DepthToSpaceOp, onnx::SpaceToDepthOp, onnx::ConcatOp>(op);
}

/// MaxPool without its Indices output: the largest of the 8-bit values is
/// the largest of the dequantised ones (the scale is positive).
bool picksLargest(Operation *op) {
  auto pool = dyn_cast<onnx::MaxPoolOp>(op);
  return pool && (onnx::isNone(pool.getIndices()) || pool.getIndices().use_empty());
}

/// The operands of `op` that carry its data.
MutableArrayRef<OpOperand> dataOperands(Operation *op) {
  if (isa<onnx::ConcatOp>(op))
    return op->getOpOperands();
  return op->getOpOperands().take_front();
}

/// `op`'s result 0 retyped to hold `elem`.
void retype(Operation *op, Type elem) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  op->getResult(0).setType(type.clone(elem));
}

/// A 0-d constant of the 8-bit type `elem`.
Value integerConstant(OpBuilder &b, Location loc, Type elem, int64_t value) {
  auto type = RankedTensorType::get({}, elem);
  auto attr = DenseElementsAttr::get(type, IntegerAttr::get(elem, APInt(8, uint64_t(value))));
  return kiln::quantization::onnxConstant(b, loc, attr);
}

/// QuantizeLinear of one float value, as ONNX defines it (x / s in
/// float32, rounded half to even, plus z, saturated).
int64_t quantize(float x, const Parameters &p) {
  double lo = p.elem.isUnsignedInteger() ? 0 : -128, hi = p.elem.isUnsignedInteger() ? 255 : 127;
  double q = double(std::nearbyintf(x / p.scale)) + double(p.zeroPoint);
  return int64_t(std::clamp(q, lo, hi));
}

/// op(DequantizeLinear(x, s, z)) -> DequantizeLinear(op(x), s, z) for the
/// ops that move values and MaxPool; Relu -> Max(x, z).
struct SinkDequantize : public RewritePattern {
  SinkDequantize(MLIRContext *ctx) : RewritePattern(MatchAnyOpTypeTag(), 1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    bool relu = isa<onnx::ReluOp>(op);
    if ((!relu && !movesValues(op) && !picksLargest(op)) ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return failure();
    // Every data operand dequantised with the same parameters.
    onnx::DequantizeLinearOp first;
    std::optional<Parameters> shared;
    for (OpOperand &operand : dataOperands(op)) {
      auto dq = operand.get().getDefiningOp<onnx::DequantizeLinearOp>();
      std::optional<Parameters> p = dq ? parameters(dq) : std::nullopt;
      if (!p || (shared && !(*p == *shared)))
        return failure();
      if (!first)
        first = dq;
      shared = p;
    }
    if (!first)
      return failure();
    auto floatType = cast<RankedTensorType>(op->getResult(0).getType());
    Location loc = op->getLoc();
    Value quantized;
    if (relu) {
      rewriter.setInsertionPoint(op);
      Value zp = integerConstant(rewriter, loc, shared->elem, shared->zeroPoint);
      quantized = onnx::MaxOp::create(rewriter, loc, floatType.clone(shared->elem),
                                      ValueRange{first.getX(), zp});
    } else {
      rewriter.modifyOpInPlace(op, [&] {
        for (OpOperand &operand : dataOperands(op))
          operand.set(operand.get().getDefiningOp<onnx::DequantizeLinearOp>().getX());
        retype(op, shared->elem);
      });
      quantized = op->getResult(0);
    }
    rewriter.setInsertionPointAfterValue(quantized);
    Value dq = onnx::DequantizeLinearOp::create(rewriter, loc, floatType, quantized,
                                                first.getXScale(), first.getXZeroPoint(),
                                                first.getAxis());
    if (relu)
      rewriter.replaceOp(op, dq);
    else
      rewriter.replaceAllUsesExcept(op->getResult(0), dq, dq.getDefiningOp());
    return success();
  }
};

/// QuantizeLinear(op(y), s, z) -> op(QuantizeLinear(y, s, z)) when the
/// QuantizeLinear alone reads op's result; Relu -> Max(., z), Clip with
/// constant bounds -> Clip(., q(lo), q(hi)).
struct HoistQuantize : public OpRewritePattern<onnx::QuantizeLinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::QuantizeLinearOp q,
                                PatternRewriter &rewriter) const override {
    Operation *op = q.getX().getDefiningOp();
    std::optional<Parameters> p = parameters(q);
    if (!op || !p || op->getNumResults() < 1 || !op->getResult(0).hasOneUse() ||
        !llvm::all_of(op->getOperands(),
                      [](Value v) { return isa<RankedTensorType, NoneType>(v.getType()); }))
      return failure();
    // The scale and zero point must be defined before op (constants, which
    // have no operands, move up).
    for (Value v : {Value(q.getYScale()), Value(q.getYZeroPoint())})
      if (Operation *def = v.getDefiningOp(); def && !def->isBeforeInBlock(op)) {
        if (def->getNumOperands() != 0 || def->getBlock() != op->getBlock())
          return failure();
        rewriter.moveOpBefore(def, op);
      }
    auto quantizedType = [&](Value v) {
      return cast<RankedTensorType>(v.getType()).clone(p->elem);
    };
    auto quantizeBefore = [&](Value v) -> Value {
      return onnx::QuantizeLinearOp::create(rewriter, q.getLoc(), quantizedType(v), v,
                                            q.getYScale(), q.getYZeroPoint(), q.getAxis());
    };
    if (movesValues(op) || picksLargest(op)) {
      rewriter.setInsertionPoint(op);
      SmallVector<Value> inputs;
      for (OpOperand &operand : dataOperands(op))
        inputs.push_back(quantizeBefore(operand.get()));
      rewriter.modifyOpInPlace(op, [&] {
        for (auto [operand, v] : llvm::zip(dataOperands(op), inputs))
          operand.set(v);
        retype(op, p->elem);
      });
      rewriter.replaceOp(q, op->getResult(0));
      return success();
    }
    if (auto relu = dyn_cast<onnx::ReluOp>(op)) {
      rewriter.setInsertionPoint(q);
      Value x = quantizeBefore(relu.getX());
      Value zp = integerConstant(rewriter, q.getLoc(), p->elem, p->zeroPoint);
      rewriter.replaceOpWithNewOp<onnx::MaxOp>(q, q.getY().getType(), ValueRange{x, zp});
      rewriter.eraseOp(relu);
      return success();
    }
    if (auto clip = dyn_cast<onnx::ClipOp>(op)) {
      // The bounds: none, or constant float scalars.
      SmallVector<Value, 2> bounds;
      rewriter.setInsertionPoint(q);
      for (Value bound : {Value(clip.getMin()), Value(clip.getMax())}) {
        if (onnx::isNone(bound)) {
          bounds.push_back(bound);
          continue;
        }
        DenseElementsAttr v = scalarConstant(bound);
        if (!v || !v.getElementType().isF32() || v.getType().getRank() != 0)
          return failure();
        bounds.push_back(
            integerConstant(rewriter, q.getLoc(), p->elem, quantize(v.getSplatValue<float>(), *p)));
      }
      Value x = quantizeBefore(clip.getInput());
      rewriter.replaceOpWithNewOp<onnx::ClipOp>(q, q.getY().getType(), x, bounds[0], bounds[1]);
      rewriter.eraseOp(clip);
      return success();
    }
    return failure();
  }
};

/// QuantizeLinear(DequantizeLinear(x, s, z), s, z) -> x.
struct CancelPair : public OpRewritePattern<onnx::QuantizeLinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::QuantizeLinearOp q,
                                PatternRewriter &rewriter) const override {
    auto dq = q.getX().getDefiningOp<onnx::DequantizeLinearOp>();
    if (!dq || q.getY().getType() != dq.getX().getType())
      return failure();
    std::optional<Parameters> in = parameters(dq), out = parameters(q);
    if (!in || !out || !(*in == *out))
      return failure();
    rewriter.replaceOp(q, dq.getX());
    return success();
  }
};

} // namespace

LogicalResult kiln::quantization::propagateQdq(func::FuncOp func) {
  RewritePatternSet patterns(func.getContext());
  patterns.add<SinkDequantize, HoistQuantize, CancelPair>(func.getContext());
  // Nothing else in the model changes: no folding, no constant merging.
  GreedyRewriteConfig config;
  config.enableFolding(false).enableConstantCSE(false).setRegionSimplificationLevel(
      GreedySimplifyRegionLevel::Disabled);
  return applyPatternsGreedily(func, std::move(patterns), config);
}
