//===- Normalization.cpp - Normalisation ops -> linalg ---------------------===//
//
// BatchNormalization (inference): y = (x - mean) * scale / sqrt(var + eps)
// + B with [C] parameters along dim 1; folding it into a preceding Conv is
// the optimize phase's job. LayerNormalization, InstanceNormalization and
// MeanVarianceNormalization compute mean and variance over their dims
// (keepdims), then normalise with numpy broadcasting.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

struct BatchNormPattern : public OpConversionPattern<onnx::BatchNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::BatchNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    bool training = op.getTrainingMode() != 0;
    if (!training)
      for (Value extra : op->getResults().drop_front())
        if (!isa<NoneType>(extra.getType()) && !extra.use_empty())
          return unsupported(rewriter, op, "running_mean/running_var outputs exist only in "
                                           "training mode");
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    if (xType.getRank() < 2)
      return unsupported(rewriter, op, "input must have rank >= 2");
    Type et = xType.getElementType();
    SmallVector<int64_t> paramShape(xType.getRank() - 1, 1);
    paramShape[0] = xType.getDimSize(1);
    auto paramType = RankedTensorType::get(paramShape, et);
    SmallVector<Value> ins{adaptor.getX()};
    for (Value p : {adaptor.getScale(), adaptor.getB(), adaptor.getInputMean(),
                    adaptor.getInputVar()}) {
      auto t = cast<RankedTensorType>(p.getType());
      if (t.getNumElements() != paramShape[0])
        return unsupported(rewriter, op, "parameters must have C elements");
      if (t.getElementType() != et)
        return unsupported(rewriter, op, "mixed parameter types are not supported yet");
      ins.push_back(reshapeTensor(rewriter, loc, p, paramType));
    }
    double eps = op.getEpsilonAttr() ? op.getEpsilonAttr().getValueAsDouble() : 1e-5;
    // Training mode normalises with the batch's own mean and (population)
    // variance, and also returns the running statistics updated with them.
    Value batchMean, batchVar;
    if (training) {
      SmallVector<bool> reduce(xType.getRank(), true);
      reduce[1] = false;
      Value x = adaptor.getX();
      Value mean = meanKeepDims(rewriter, loc, x, reduce);
      Value sq = broadcastGeneric(rewriter, loc, ValueRange{x, mean}, xType,
                                  [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                    Value d = arith::SubFOp::create(b, l, a[0], a[1]);
                                    return arith::MulFOp::create(b, l, d, d);
                                  });
      batchMean = reshapeTensor(rewriter, loc, mean, paramType);
      batchVar = reshapeTensor(rewriter, loc, meanKeepDims(rewriter, loc, sq, reduce), paramType);
      ins[3] = batchMean;
      ins[4] = batchVar;
    }
    Value y = broadcastGeneric(
        rewriter, loc, ins, xType,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value var = arith::AddFOp::create(b, l, a[4], scalarConstant(b, l, et, eps));
          Value inv = arith::DivFOp::create(b, l, a[1], math::SqrtOp::create(b, l, var));
          Value centered = arith::SubFOp::create(b, l, a[0], a[3]);
          return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, centered, inv), a[2]);
        });
    SmallVector<Value> results{y};
    double momentum = op.getMomentum().convertToDouble();
    for (unsigned i = 1; i < op->getNumResults(); ++i) {
      Value r = op->getResult(i);
      if (!training || isa<NoneType>(r.getType())) {
        results.push_back(onnx::NoValueOp::create(rewriter, loc, rewriter.getNoneType()));
        continue;
      }
      // running = input * momentum + batch * (1 - momentum).
      Value running = i == 1 ? adaptor.getInputMean() : adaptor.getInputVar();
      Value batch = i == 1 ? batchMean : batchVar;
      RankedTensorType rType = convertedResultType(*typeConverter, op, i);
      Value updated = broadcastGeneric(
          rewriter, loc, ValueRange{reshapeTensor(rewriter, loc, running, rType),
                                    reshapeTensor(rewriter, loc, batch, rType)},
          rType, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value old = arith::MulFOp::create(b, l, a[0], scalarConstant(b, l, et, momentum));
            Value now = arith::MulFOp::create(b, l, a[1], scalarConstant(b, l, et, 1 - momentum));
            return arith::AddFOp::create(b, l, old, now);
          });
      results.push_back(updated);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// (x - mean) and 1 / sqrt(var + eps) over the dims in `reduce`.
std::pair<Value, Value> normalizeStats(OpBuilder &b, Location loc, Value x,
                                       ArrayRef<bool> reduce, double eps, Value &mean) {
  auto type = cast<RankedTensorType>(x.getType());
  Type et = type.getElementType();
  mean = meanKeepDims(b, loc, x, reduce);
  Value centered = broadcastGeneric(b, loc, ValueRange{x, mean}, type,
                                    [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                                      return arith::SubFOp::create(nb, l, a[0], a[1]);
                                    });
  Value sq = broadcastGeneric(b, loc, ValueRange{centered}, type,
                              [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                                return arith::MulFOp::create(nb, l, a[0], a[0]);
                              });
  Value var = meanKeepDims(b, loc, sq, reduce);
  Value inv = broadcastGeneric(b, loc, ValueRange{var}, cast<RankedTensorType>(var.getType()),
                               [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                                 Value v = arith::AddFOp::create(nb, l, a[0],
                                                                 scalarConstant(nb, l, et, eps));
                                 return arith::DivFOp::create(nb, l, scalarConstant(nb, l, et, 1),
                                                              math::SqrtOp::create(nb, l, v));
                               });
  return {centered, inv};
}

struct LayerNormPattern : public OpConversionPattern<onnx::LayerNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::LayerNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    auto type = cast<RankedTensorType>(adaptor.getX().getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return unsupported(rewriter, op, "axis out of range");
    bool hasB = !isa<NoneType>(op.getB().getType());
    // Scale and B broadcast to X's shape (a model may declare them larger).
    for (Value v : {adaptor.getScale(), hasB ? adaptor.getB() : Value()}) {
      auto t = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
      if (v && (!t || t.getRank() > rank))
        return unsupported(rewriter, op, "Scale and B must broadcast to X's shape");
      for (int64_t i = 1; t && i <= t.getRank(); ++i) {
        int64_t d = t.getDimSize(t.getRank() - i), x = type.getDimSize(rank - i);
        if (d != 1 && !ShapedType::isDynamic(d) && !ShapedType::isDynamic(x) && d != x)
          return unsupported(rewriter, op, "Scale and B must broadcast to X's shape");
      }
    }
    SmallVector<bool> reduce(rank, false);
    for (int64_t i = axis; i < rank; ++i)
      reduce[i] = true;
    double eps = op.getEpsilonAttr() ? op.getEpsilonAttr().getValueAsDouble() : 1e-5;
    Value mean;
    auto [centered, inv] = normalizeStats(rewriter, loc, adaptor.getX(), reduce, eps, mean);
    SmallVector<Value> ins{centered, inv, adaptor.getScale()};
    if (hasB)
      ins.push_back(adaptor.getB());
    Value y = broadcastGeneric(rewriter, loc, ins, type,
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 Value v = arith::MulFOp::create(
                                     b, l, arith::MulFOp::create(b, l, a[0], a[1]), a[2]);
                                 return hasB ? Value(arith::AddFOp::create(b, l, v, a[3])) : v;
                               });
    SmallVector<Value> results{y};
    Value stats[2] = {mean, inv};
    for (unsigned i = 1; i < op->getNumResults(); ++i) {
      Value r = op->getResult(i);
      if (isa<NoneType>(r.getType())) {
        results.push_back(onnx::NoValueOp::create(rewriter, loc, rewriter.getNoneType()));
        continue;
      }
      RankedTensorType rt = convertedResultType(*typeConverter, op, i);
      auto statType = cast<RankedTensorType>(stats[i - 1].getType());
      if (!rt || !rt.hasStaticShape() || !statType.hasStaticShape())
        return unsupported(rewriter, op, "Mean/InvStdDev outputs with the dynamic dim are "
                                         "not supported yet");
      if (rt.getNumElements() != statType.getNumElements())
        return unsupported(rewriter, op, "unexpected Mean/InvStdDev shape");
      results.push_back(reshapeTensor(rewriter, loc, stats[i - 1], rt));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct InstanceNormPattern : public OpConversionPattern<onnx::InstanceNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::InstanceNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getInput());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rank = type.getRank();
    if (rank < 3)
      return unsupported(rewriter, op, "input must have rank >= 3");
    if (type.isDynamicDim(1))
      return unsupported(rewriter, op, "a dynamic channel dim is not supported");
    SmallVector<bool> reduce(rank, true);
    reduce[0] = reduce[1] = false;
    double eps = op.getEpsilonAttr() ? op.getEpsilonAttr().getValueAsDouble() : 1e-5;
    Value mean;
    auto [centered, inv] = normalizeStats(rewriter, loc, adaptor.getInput(), reduce, eps, mean);
    for (Value p : {adaptor.getScale(), adaptor.getB()}) {
      auto t = cast<RankedTensorType>(p.getType());
      if (t.getRank() != 1 || t.getDimSize(0) != type.getDimSize(1))
        return unsupported(rewriter, op,
                           "scale and B must have one element per channel (" +
                               std::to_string(type.getDimSize(1)) + ")");
    }
    SmallVector<int64_t> ps(rank - 1, 1);
    ps[0] = type.getDimSize(1);
    auto pt = RankedTensorType::get(ps, type.getElementType());
    Value scale = reshapeTensor(rewriter, loc, adaptor.getScale(), pt);
    Value bias = reshapeTensor(rewriter, loc, adaptor.getB(), pt);
    Value y = broadcastGeneric(rewriter, loc, ValueRange{centered, inv, scale, bias}, type,
                               [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 Value v = arith::MulFOp::create(
                                     b, l, arith::MulFOp::create(b, l, a[0], a[1]), a[2]);
                                 return arith::AddFOp::create(b, l, v, a[3]);
                               });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// MeanVarianceNormalization: (x - mean) / sqrt(var + 1e-9) over `axes`.
struct MVNPattern : public OpConversionPattern<onnx::MeanVarianceNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::MeanVarianceNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    auto type = cast<RankedTensorType>(adaptor.getX().getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> axes{0, 2, 3};
    if (!op.getAxes().empty())
      axes.assign(op.getAxes().begin(), op.getAxes().end());
    SmallVector<bool> reduce(rank, false);
    for (int64_t a : axes) {
      if (a < 0)
        a += rank;
      if (a < 0 || a >= rank)
        return unsupported(rewriter, op, "axis out of range");
      reduce[a] = true;
    }
    Value mean;
    auto [centered, inv] = normalizeStats(rewriter, loc, adaptor.getX(), reduce, 1e-9, mean);
    rewriter.replaceOp(op, broadcastGeneric(rewriter, loc, ValueRange{centered, inv}, type,
                                            [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                              return arith::MulFOp::create(b, l, a[0], a[1]);
                                            }));
    return success();
  }
};

/// LRN: x / (bias + alpha / size * sum of x^2 over a channel window)^beta.
struct LRNPattern : public OpConversionPattern<onnx::LRNOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::LRNOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    Value x = adaptor.getX();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), size = op.getSize();
    if (rank < 3 || size < 1)
      return unsupported(rewriter, op, "needs rank >= 3 and size >= 1");
    if (type.isDynamicDim(1))
      return unsupported(rewriter, op, "a dynamic channel dim is not supported");
    Type et = type.getElementType();
    double alpha = op.getAlphaAttr() ? op.getAlphaAttr().getValueAsDouble() : 1e-4;
    double beta = op.getBetaAttr() ? op.getBetaAttr().getValueAsDouble() : 0.75;
    double bias = op.getBiasAttr() ? op.getBiasAttr().getValueAsDouble() : 1.0;
    Value sq = broadcastGeneric(rewriter, loc, ValueRange{x}, type,
                                [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                  return arith::MulFOp::create(b, l, a[0], a[0]);
                                });
    SmallVector<int64_t> lo(rank, 0), hi(rank, 0);
    lo[1] = (size - 1) / 2;
    hi[1] = size - 1 - lo[1];
    Value padded = padTensor(rewriter, loc, sq, lo, hi, scalarConstant(rewriter, loc, et, 0));
    // Loops: the output dims, then k along the channel window.
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> pe;
    for (int64_t d = 0; d < rank; ++d)
      pe.push_back(d == 1 ? getAffineDimExpr(1, ctx) + getAffineDimExpr(rank, ctx)
                          : getAffineDimExpr(d, ctx));
    Value window = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{size}, et);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    iters.push_back(utils::IteratorType::reduction);
    Value init = filledTensor(rewriter, loc, type, scalarConstant(rewriter, loc, et, 0));
    Value sum = linalg::GenericOp::create(
                    rewriter, loc, type, ValueRange{padded, window}, ValueRange{init},
                    ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, pe, ctx),
                                        AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, ctx)}, ctx),
                                        AffineMap::get(rank + 1, 0,
                                                       rewriter.getMultiDimIdentityMap(rank).getResults(),
                                                       ctx)},
                    iters,
                    [](OpBuilder &b, Location l, ValueRange a) {
                      linalg::YieldOp::create(b, l, arith::AddFOp::create(b, l, a[2], a[0]).getResult());
                    })
                    .getResult(0);
    Value y = broadcastGeneric(
        rewriter, loc, ValueRange{x, sum}, type,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value base = arith::AddFOp::create(
              b, l, scalarConstant(b, l, et, bias),
              arith::MulFOp::create(b, l, scalarConstant(b, l, et, alpha / size), a[1]));
          // base > 0: base^beta = exp(beta * log(base)).
          Value p = math::ExpOp::create(
              b, l, arith::MulFOp::create(b, l, scalarConstant(b, l, et, beta),
                                          math::LogOp::create(b, l, base)));
          return arith::DivFOp::create(b, l, a[0], p);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateNormalizationPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<BatchNormPattern, LayerNormPattern, InstanceNormPattern, MVNPattern,
               LRNPattern>(
      converter, patterns.getContext());
}
} // namespace kiln::lowering
