//===- Quantize.cpp - QuantizeLinear, DequantizeLinear, dynamic -> linalg --===//
//
// The reference (float) semantics of ONNX's linear quantisation:
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//   DequantizeLinear: y = (x - zero_point) * scale
// with per-tensor or per-axis (a 1-D scale along `axis`) parameters, and
// DynamicQuantizeLinear computing a uint8 scale and zero point from the
// tensor's range. Fusing Q/DQ pairs into integer kernels is the INT8
// issue's job; this is the general lowering.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

/// A per-axis parameter [C] reshaped to broadcast along `axis` of a
/// tensor of rank `rank`; scalars and one-element tensors stay as they are.
FailureOr<Value> alongAxis(OpBuilder &b, Location loc, Value param, int64_t axis,
                           int64_t rank, int64_t dim) {
  auto type = cast<RankedTensorType>(param.getType());
  if (type.getNumElements() == 1 && type.getRank() <= 1)
    return reshapeTensor(b, loc, param, RankedTensorType::get({}, type.getElementType()));
  if (type.getRank() != 1 || type.getDimSize(0) != dim)
    return failure();
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = dim;
  return reshapeTensor(b, loc, param, type.clone(shape));
}

/// round_half_even(v) + zp, saturated to the integer type `to` (as f32
/// arithmetic, then converted).
Value quantizeScalar(OpBuilder &b, Location l, Value v, Value zpFloat, Type to, bool isUnsigned) {
  Type ft = v.getType();
  Value r = math::RoundEvenOp::create(b, l, v);
  r = arith::AddFOp::create(b, l, r, zpFloat);
  unsigned w = to.getIntOrFloatBitWidth();
  double lo = isUnsigned ? 0 : -std::ldexp(1.0, w - 1);
  double hi = isUnsigned ? std::ldexp(1.0, w) - 1 : std::ldexp(1.0, w - 1) - 1;
  r = arith::MaximumFOp::create(b, l, r, scalarConstant(b, l, ft, lo));
  r = arith::MinimumFOp::create(b, l, r, scalarConstant(b, l, ft, hi));
  // NaN (e.g. a zero scale) would make the conversion poison: use 0.
  Value nan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, r, r);
  r = arith::SelectOp::create(b, l, nan, scalarConstant(b, l, ft, 0), r);
  if (isUnsigned)
    return arith::FPToUIOp::create(b, l, to, r);
  return arith::FPToSIOp::create(b, l, to, r);
}

struct QuantizePattern : public OpConversionPattern<onnx::QuantizeLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::QuantizeLinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type inElem = elementTypeOf(op.getX());
    Type outElem = elementTypeOf(op.getY());
    if (!inElem.isF32() || !isSupportedInt(outElem) || outElem.getIntOrFloatBitWidth() != 8)
      return unsupported(rewriter, op, "only float32 to int8/uint8 is supported yet");
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    int64_t rank = xType.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    // The axis matters only for per-axis (1-D, several values) parameters.
    bool perAxis = cast<RankedTensorType>(adaptor.getYScale().getType()).getNumElements() > 1;
    if (perAxis && (axis < 0 || axis >= rank))
      return unsupported(rewriter, op, "axis out of range");
    int64_t dim = perAxis ? xType.getDimSize(axis) : 1;
    FailureOr<Value> scale = alongAxis(rewriter, loc, adaptor.getYScale(), axis, rank, dim);
    if (failed(scale))
      return unsupported(rewriter, op, "y_scale must be a scalar or hold one value per channel");
    SmallVector<Value> ins{adaptor.getX(), *scale};
    bool hasZp = !onnx::isNone(op.getYZeroPoint());
    if (hasZp) {
      FailureOr<Value> zp = alongAxis(rewriter, loc, adaptor.getYZeroPoint(), axis, rank, dim);
      if (failed(zp))
        return unsupported(rewriter, op, "y_zero_point must match y_scale");
      ins.push_back(*zp);
    }
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    bool isUnsigned = outElem.isUnsignedInteger();
    Type zpElem = hasZp ? elementTypeOf(op.getYZeroPoint()) : outElem;
    Value y = broadcastGeneric(rewriter, loc, ins, yType,
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 Value q = arith::DivFOp::create(b, l, a[0], a[1]);
                                 Value zp = hasZp ? castScalar(b, l, a[2], zpElem, b.getF32Type())
                                                  : scalarConstant(b, l, b.getF32Type(), 0);
                                 return quantizeScalar(b, l, q, zp, yType.getElementType(),
                                                       isUnsigned);
                               });
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct DequantizePattern : public OpConversionPattern<onnx::DequantizeLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::DequantizeLinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type inElem = elementTypeOf(op.getX());
    if (!isSupportedInt(inElem))
      return unsupported(rewriter, op, "element type " + typeName(inElem) + " is not supported yet");
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    int64_t rank = xType.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    // The axis matters only for per-axis (1-D, several values) parameters.
    bool perAxis = cast<RankedTensorType>(adaptor.getXScale().getType()).getNumElements() > 1;
    if (perAxis && (axis < 0 || axis >= rank))
      return unsupported(rewriter, op, "axis out of range");
    int64_t dim = perAxis ? xType.getDimSize(axis) : 1;
    FailureOr<Value> scale = alongAxis(rewriter, loc, adaptor.getXScale(), axis, rank, dim);
    if (failed(scale))
      return unsupported(rewriter, op, "x_scale must be a scalar or hold one value per channel");
    SmallVector<Value> ins{adaptor.getX(), *scale};
    bool hasZp = !onnx::isNone(op.getXZeroPoint());
    if (hasZp) {
      FailureOr<Value> zp = alongAxis(rewriter, loc, adaptor.getXZeroPoint(), axis, rank, dim);
      if (failed(zp))
        return unsupported(rewriter, op, "x_zero_point must match x_scale");
      ins.push_back(*zp);
    }
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    Type ft = yType.getElementType();
    Value y = broadcastGeneric(rewriter, loc, ins, yType,
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 Value x = castScalar(b, l, a[0], inElem, ft);
                                 if (hasZp)
                                   x = arith::SubFOp::create(b, l, x,
                                                             castScalar(b, l, a[2], inElem, ft));
                                 return arith::MulFOp::create(b, l, x, a[1]);
                               });
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct DynamicQuantizePattern : public OpConversionPattern<onnx::DynamicQuantizeLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::DynamicQuantizeLinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    if (!xType.getElementType().isF32() || xType.getNumElements() == 0)
      return unsupported(rewriter, op, "only non-empty float32 inputs are supported");
    int64_t rank = xType.getRank();
    Type f32 = rewriter.getF32Type();
    auto scalarType = RankedTensorType::get({}, f32);
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> none;
    auto reduce = [&](bool isMax) {
      Value init = filledTensor(rewriter, loc, scalarType, scalarConstant(rewriter, loc, f32, 0));
      return linalg::GenericOp::create(
                 rewriter, loc, scalarType, ValueRange{x}, ValueRange{init},
                 ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank),
                                     AffineMap::get(rank, 0, none, ctx)},
                 SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
                 [&](OpBuilder &b, Location l, ValueRange a) {
                   Value r = isMax ? Value(arith::MaximumFOp::create(b, l, a[1], a[0]))
                                   : Value(arith::MinimumFOp::create(b, l, a[1], a[0]));
                   linalg::YieldOp::create(b, l, r);
                 })
          .getResult(0);
    };
    // The range always includes 0 (the fills start at 0).
    Value mx = reduce(true), mn = reduce(false);
    RankedTensorType scaleType = convertedResultType(*typeConverter, op, 1);
    RankedTensorType zpType = convertedResultType(*typeConverter, op, 2);
    RankedTensorType yType = convertedResultType(*typeConverter, op, 0);
    Value scale = broadcastGeneric(rewriter, loc, ValueRange{mx, mn}, scalarType,
                                   [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                     Value range = arith::SubFOp::create(b, l, a[0], a[1]);
                                     return arith::DivFOp::create(b, l, range,
                                                                  scalarConstant(b, l, f32, 255));
                                   });
    Value zp = broadcastGeneric(
        rewriter, loc, ValueRange{mn, scale}, RankedTensorType::get({}, zpType.getElementType()),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value q = arith::DivFOp::create(b, l, arith::NegFOp::create(b, l, a[0]), a[1]);
          return quantizeScalar(b, l, q, scalarConstant(b, l, f32, 0), zpType.getElementType(), true);
        });
    Value y = broadcastGeneric(rewriter, loc, ValueRange{x, scale, zp}, yType,
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 Value q = arith::DivFOp::create(b, l, a[0], a[1]);
                                 Value z = arith::UIToFPOp::create(b, l, f32, a[2]);
                                 return quantizeScalar(b, l, q, z, yType.getElementType(), true);
                               });
    rewriter.replaceOp(op, ValueRange{y, reshapeTensor(rewriter, loc, scale, scaleType),
                                      reshapeTensor(rewriter, loc, zp, zpType)});
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateQuantizePatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<QuantizePattern, DequantizePattern, DynamicQuantizePattern>(
      converter, patterns.getContext());
}
} // namespace kiln::lowering
