//===- Loss.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss -------===//
//
// loss[n, d...] = -input[n, target[n, d...], d...] * weight[target], zero
// where target == ignore_index; reduction none / sum / mean (mean divides
// by the summed weights of the counted elements). SoftmaxCrossEntropyLoss
// is NegativeLogLikelihoodLoss of log_softmax(scores) along dim 1, whose
// log probabilities are its optional second output.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

/// The NLL loss of log-probabilities `input` [N, C, d...] for `target`
/// [N, d...], reduced as `reduction` into `resultType`.
FailureOr<Value> nllLoss(ConversionPatternRewriter &rewriter, Operation *op, Value input,
                         Value target, Value weight, std::optional<int64_t> ignore,
                         StringRef reduction, RankedTensorType resultType) {
  Location loc = op->getLoc();
  auto iType = cast<RankedTensorType>(input.getType());
  auto tType = cast<RankedTensorType>(target.getType());
  Type et = iType.getElementType();
  int64_t classes = iType.getDimSize(1), trank = tType.getRank();
  if (iType.getRank() != trank + 1 || classes < 1)
    return unsupported(rewriter, op, "input must be [N, C, d...] with target [N, d...]");
  OpBuilder &b = rewriter;
  auto lossType = RankedTensorType::get(tType.getShape(), et);
  AffineMap id = b.getMultiDimIdentityMap(trank);
  // Per element: the weighted negative log-probability and the weight.
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{lossType, lossType}, ValueRange{target},
      ValueRange{emptyTensor(b, loc, lossType), emptyTensor(b, loc, lossType)},
      ArrayRef<AffineMap>{id, id, id},
      SmallVector<utils::IteratorType>(trank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value t = arith::IndexCastOp::create(nb, l, nb.getIndexType(), a[0]);
        Value skip = arith::ConstantIntOp::create(nb, l, 0, 1);
        if (ignore)
          skip = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, a[0],
                                       arith::ConstantOp::create(
                                           nb, l, nb.getIntegerAttr(a[0].getType(), *ignore)));
        Value c = arith::MinSIOp::create(
            nb, l, arith::MaxSIOp::create(nb, l, t, arith::ConstantIndexOp::create(nb, l, 0)),
            arith::ConstantIndexOp::create(nb, l, classes - 1));
        SmallVector<Value> at{linalg::IndexOp::create(nb, l, 0), c};
        for (int64_t d = 1; d < trank; ++d)
          at.push_back(linalg::IndexOp::create(nb, l, d));
        Value logp = tensor::ExtractOp::create(nb, l, input, at);
        Value w = weight ? Value(tensor::ExtractOp::create(nb, l, weight, ValueRange{c}))
                         : scalarConstant(nb, l, et, 1);
        Value zero = scalarConstant(nb, l, et, 0);
        w = arith::SelectOp::create(nb, l, skip, zero, w);
        // An ignored element contributes exactly 0 (even where logp is -inf).
        Value loss = arith::SelectOp::create(
            nb, l, skip, zero,
            arith::NegFOp::create(nb, l, arith::MulFOp::create(nb, l, logp, w)));
        linalg::YieldOp::create(nb, l, ValueRange{loss, w});
      });
  Value loss = generic.getResult(0), weights = generic.getResult(1);
  if (reduction == "none")
    return loss;
  auto scalarType = RankedTensorType::get({}, et);
  SmallVector<AffineExpr> none;
  auto sumAll = [&](Value v) {
    Value init = filledTensor(b, loc, scalarType, scalarConstant(b, loc, et, 0));
    return linalg::GenericOp::create(
               b, loc, scalarType, ValueRange{v}, ValueRange{init},
               ArrayRef<AffineMap>{id, AffineMap::get(trank, 0, none, b.getContext())},
               SmallVector<utils::IteratorType>(trank, utils::IteratorType::reduction),
               [](OpBuilder &nb, Location l, ValueRange a) {
                 linalg::YieldOp::create(nb, l, arith::AddFOp::create(nb, l, a[1], a[0]).getResult());
               })
        .getResult(0);
  };
  Value total = sumAll(loss);
  if (reduction == "mean") {
    Value wsum = sumAll(weights);
    total = broadcastGeneric(b, loc, ValueRange{total, wsum}, scalarType,
                             [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                               return arith::DivFOp::create(nb, l, a[0], a[1]);
                             });
  } else if (reduction != "sum") {
    return unsupported(rewriter, op, "reduction '" + reduction.str() + "' is not supported");
  }
  return reshapeTensor(b, loc, total, resultType);
}

std::optional<int64_t> ignoreIndex(Operation *op) {
  if (auto a = op->getAttrOfType<IntegerAttr>("ignore_index"))
    return a.getInt();
  return std::nullopt;
}

struct NLLLossPattern : public OpConversionPattern<onnx::NegativeLogLikelihoodLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::NegativeLogLikelihoodLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type elem = elementTypeOf(op.getInput());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    Value weight = onnx::isNone(op.getWeight()) ? Value() : adaptor.getWeight();
    FailureOr<Value> loss = nllLoss(rewriter, op, adaptor.getInput(), adaptor.getTarget(), weight,
                                    ignoreIndex(op), op.getReduction(),
                                    convertedResultType(*typeConverter, op));
    if (failed(loss))
      return failure();
    rewriter.replaceOp(op, *loss);
    return success();
  }
};

struct SCELossPattern : public OpConversionPattern<onnx::SoftmaxCrossEntropyLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::SoftmaxCrossEntropyLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type elem = elementTypeOf(op.getScores());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    Value logp = softmaxAlong(rewriter, op.getLoc(), adaptor.getScores(), 1, /*isLog=*/true);
    Value weight = onnx::isNone(op.getWeights()) ? Value() : adaptor.getWeights();
    FailureOr<Value> loss = nllLoss(rewriter, op, logp, adaptor.getLabels(), weight,
                                    ignoreIndex(op), op.getReduction(),
                                    convertedResultType(*typeConverter, op));
    if (failed(loss))
      return failure();
    SmallVector<Value> results{*loss};
    if (op->getNumResults() > 1) {
      if (isa<NoneType>(op->getResult(1).getType()))
        results.push_back(onnx::NoValueOp::create(rewriter, op.getLoc(), rewriter.getNoneType()));
      else
        results.push_back(logp);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateLossPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<NLLLossPattern, SCELossPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
