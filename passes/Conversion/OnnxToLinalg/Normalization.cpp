//===- Normalization.cpp - BatchNormalization (inference) -> linalg --------===//
//
// y = (x - mean) * scale / sqrt(var + epsilon) + B, with the [C] parameters
// broadcast along dim 1. Folding BatchNorm into a preceding Conv is the
// optimize phase's job; this is the general lowering.
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
      return unsupported(rewriter, 
          op, "element type " + typeName(elem) + " is not supported yet");
    if (op.getTrainingMode() != 0)
      return unsupported(rewriter, op, "training_mode=1 is not supported");
    for (Value extra : op->getResults().drop_front())
      if (!extra.use_empty())
        return unsupported(rewriter, 
            op, "the running_mean/running_var outputs are not supported");
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
    Value y = broadcastGeneric(
        rewriter, loc, ins, xType,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value var = arith::AddFOp::create(b, l, a[4], scalarConstant(b, l, et, eps));
          Value inv = arith::DivFOp::create(b, l, a[1], math::SqrtOp::create(b, l, var));
          Value centered = arith::SubFOp::create(b, l, a[0], a[3]);
          return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, centered, inv), a[2]);
        });
    SmallVector<Value> results{y};
    for (unsigned i = 1; i < op->getNumResults(); ++i)
      results.push_back(onnx::NoValueOp::create(rewriter, loc, rewriter.getNoneType()));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateNormalizationPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<BatchNormPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
