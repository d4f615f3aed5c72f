//===- Quantize.cpp - quantisation and integer ops -> linalg ---------------===//
//
// The reference (float) semantics of ONNX's linear quantisation:
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//   DequantizeLinear: y = (x - zero_point) * scale
// with per-tensor or per-axis (a 1-D scale along `axis`) parameters, and
// DynamicQuantizeLinear computing a uint8 scale and zero point from the
// tensor's range; and the integer ops (MatMulInteger, ConvInteger,
// QLinearMatMul, QLinearConv) as int32 contractions of zero-point-shifted
// operands, requantised in f64 like the ONNX reference; by constant
// weights, the forms of Int8ConstantWeights.cpp, which the int8 kernels
// take.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Int8ConstantWeights.h"
#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

/// Whether a parameter tensor holds one value (per tensor), as its type says.
static bool hasOneElement(Value param) {
  auto type = cast<RankedTensorType>(param.getType());
  return type.hasStaticShape() && type.getNumElements() == 1;
}

FailureOr<Value> kiln::lowering::alongAxis(OpBuilder &b, Location loc, Value param,
                                           int64_t axis, int64_t rank, int64_t dim) {
  auto type = cast<RankedTensorType>(param.getType());
  if (hasOneElement(param) && type.getRank() <= 1)
    return reshapeTensor(b, loc, param, RankedTensorType::get({}, type.getElementType()));
  // Per axis: as many values as the dim has, both known.
  if (type.getRank() != 1 || type.isDynamicDim(0) || type.getDimSize(0) != dim)
    return failure();
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = dim;
  return reshapeTensor(b, loc, param, type.clone(shape));
}

namespace {

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
    bool perAxis = !hasOneElement(adaptor.getYScale());
    if (perAxis && (axis < 0 || axis >= rank))
      return unsupported(rewriter, op, "axis out of range");
    if (perAxis && xType.isDynamicDim(axis))
      return unsupported(rewriter, op, "per-axis parameters along a dynamic dim");
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
    bool perAxis = !hasOneElement(adaptor.getXScale());
    if (perAxis && (axis < 0 || axis >= rank))
      return unsupported(rewriter, op, "axis out of range");
    if (perAxis && xType.isDynamicDim(axis))
      return unsupported(rewriter, op, "per-axis parameters along a dynamic dim");
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
    if (!xType.getElementType().isF32() ||
        (xType.hasStaticShape() && xType.getNumElements() == 0))
      return unsupported(rewriter, op, "only non-empty float32 inputs are supported");
    int64_t rank = xType.getRank();
    // A dynamic dim may not be 0 either (the entry point refuses it).
    for (int64_t d = 0; d < rank; ++d)
      if (xType.isDynamicDim(d))
        requireNonZero(op, op.getX(), d);
    Type f32 = rewriter.getF32Type();
    auto scalarType = RankedTensorType::get({}, f32);
    MLIRContext *ctx = rewriter.getContext();
    // The max or min of `in` over its last `reduced` dims (the rest kept),
    // starting from 0.
    auto reduce = [&](Value in, int64_t reduced, bool isMax) {
      auto inType = cast<RankedTensorType>(in.getType());
      int64_t r = inType.getRank(), kept = r - reduced;
      auto outType = RankedTensorType::get(inType.getShape().take_front(kept), f32);
      SmallVector<AffineExpr> outExprs;
      for (int64_t d = 0; d < kept; ++d)
        outExprs.push_back(getAffineDimExpr(unsigned(d), ctx));
      SmallVector<utils::IteratorType> iters(r, utils::IteratorType::reduction);
      std::fill_n(iters.begin(), kept, utils::IteratorType::parallel);
      Value init = filledTensor(rewriter, loc, outType, scalarConstant(rewriter, loc, f32, 0));
      return linalg::GenericOp::create(
                 rewriter, loc, outType, ValueRange{in}, ValueRange{init},
                 ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(r),
                                     AffineMap::get(r, 0, outExprs, ctx)},
                 iters,
                 [&](OpBuilder &b, Location l, ValueRange a) {
                   Value v = isMax ? Value(arith::MaximumFOp::create(b, l, a[1], a[0]))
                                   : Value(arith::MinimumFOp::create(b, l, a[1], a[0]));
                   linalg::YieldOp::create(b, l, v);
                 })
          .getResult(0);
    };
    // Rows first (each row's innermost dim, the rows split over threads),
    // then what the rows give; one pass over x where it is 1-D. Max and min
    // are exact in any order.
    auto range = [&](bool isMax) {
      if (rank < 2)
        return reduce(x, rank, isMax);
      return reduce(reduce(x, 1, isMax), rank - 1, isMax);
    };
    // The range always includes 0 (the fills start at 0).
    Value mx = range(true), mn = range(false);
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


/// `x - zero_point` widened to int32; `zp` (may be null) is a scalar or a
/// 1-D tensor along `axis` of x.
FailureOr<Value> minusZeroPoint(OpBuilder &b, Location loc, Value x, Type xElem,
                                Value zp, Type zpElem, int64_t axis) {
  auto xType = cast<RankedTensorType>(x.getType());
  Type i32 = b.getI32Type();
  SmallVector<Value> ins{x};
  if (zp) {
    int64_t dim = hasOneElement(zp) ? 1 : xType.getDimSize(axis);
    FailureOr<Value> z = alongAxis(b, loc, zp, axis, xType.getRank(), dim);
    if (failed(z))
      return failure();
    ins.push_back(*z);
  }
  // Sized from x: with dynamic dims, [M, K] and the matmul's [M, N] look
  // alike to the symbol lookup.
  return broadcastGeneric(
      b, loc, ins, xType.clone(i32),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value v = castScalar(nb, l, a[0], xElem, i32);
        if (a.size() > 1)
          v = arith::SubIOp::create(nb, l, v, castScalar(nb, l, a[1], zpElem, i32));
        return v;
      },
      x);
}

/// Both operands of an integer matmul/conv shifted by their zero points.
/// `zpAxes` gives the axis along which a 1-D zero point of each applies.
LogicalResult shiftOperands(ConversionPatternRewriter &rewriter, Operation *op,
                            ArrayRef<Value> origs, ArrayRef<Value> values,
                            ArrayRef<Value> origZps, ArrayRef<Value> zps,
                            ArrayRef<int64_t> zpAxes, SmallVectorImpl<Value> &out) {
  for (size_t i = 0; i < origs.size(); ++i) {
    Type elem = elementTypeOf(origs[i]);
    if (!isSupportedInt(elem) || elem.getIntOrFloatBitWidth() != 8)
      return unsupported(rewriter, op, "element type " + typeName(elem) +
                                           " is not supported (int8 or uint8 only)");
    bool hasZp = !onnx::isNone(origZps[i]);
    FailureOr<Value> v = minusZeroPoint(rewriter, op->getLoc(), values[i], elem,
                                        hasZp ? zps[i] : Value(),
                                        hasZp ? elementTypeOf(origZps[i]) : Type(), zpAxes[i]);
    if (failed(v))
      return unsupported(rewriter, op, "zero point #" + Twine(i) +
                                           " must be a scalar or 1-D along its axis");
    out.push_back(*v);
  }
  return success();
}

/// Requantises an int32 accumulator: saturate(round_half_even(acc * scale)
/// + y_zero_point) where scale = x_scale * w_scale / y_scale (float32, each
/// already reshaped to broadcast against acc). The product is taken in
/// f64, as the ONNX reference does.
Value requantize(OpBuilder &b, Location loc, Value acc, Value xScale, Value wScale,
                 Value yScale, Value yZp, Type yElem, RankedTensorType yType) {
  return broadcastGeneric(
      b, loc, ValueRange{acc, xScale, wScale, yScale, yZp}, yType,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Type f64 = nb.getF64Type();
        Value scale = arith::MulFOp::create(nb, l, a[1], a[2]);
        scale = arith::DivFOp::create(nb, l, scale, a[3]);
        Value v = arith::SIToFPOp::create(nb, l, f64, a[0]);
        v = arith::MulFOp::create(nb, l, v, arith::ExtFOp::create(nb, l, f64, scale));
        Value zp = castScalar(nb, l, a[4], yElem, f64);
        return quantizeScalar(nb, l, v, zp, yType.getElementType(), yElem.isUnsignedInteger());
      });
}

/// A scale or zero point that must be per tensor, as a rank-0 tensor.
FailureOr<Value> perTensor(OpBuilder &b, Location loc, Value v) {
  return alongAxis(b, loc, v, 0, 1, 1);
}

/// (A - a_zero_point) x (B - b_zero_point) in int32; a_zero_point may be
/// per row of A, b_zero_point per column of B.
struct MatMulIntegerPattern : public OpConversionPattern<onnx::MatMulIntegerOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::MatMulIntegerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t ra = cast<RankedTensorType>(adaptor.getA().getType()).getRank();
    int64_t rb = cast<RankedTensorType>(adaptor.getB().getType()).getRank();
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    if (std::optional<Value> y =
            matMulConstantB(rewriter, op.getLoc(), op.getA(), adaptor.getA(), op.getB(),
                            op.getAZeroPoint(), adaptor.getAZeroPoint(), op.getBZeroPoint(),
                            yType)) {
      rewriter.replaceOp(op, *y);
      return success();
    }
    SmallVector<Value> ops;
    if (failed(shiftOperands(rewriter, op, {op.getA(), op.getB()},
                             {adaptor.getA(), adaptor.getB()},
                             {op.getAZeroPoint(), op.getBZeroPoint()},
                             {adaptor.getAZeroPoint(), adaptor.getBZeroPoint()},
                             {std::max<int64_t>(ra - 2, 0), rb - 1}, ops)))
      return failure();
    FailureOr<Value> y = buildMatMul(rewriter, op.getLoc(), ops[0], ops[1], yType);
    if (failed(y))
      return unsupported(rewriter, op, "inner dims differ");
    rewriter.replaceOp(op, *y);
    return success();
  }
};

/// QLinearMatMul: an integer matmul requantised to y's scale and zero
/// point; a_scale may be per row, b_scale per column.
struct QLinearMatMulPattern : public OpConversionPattern<onnx::QLinearMatMulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::QLinearMatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t ra = cast<RankedTensorType>(adaptor.getA().getType()).getRank();
    int64_t rb = cast<RankedTensorType>(adaptor.getB().getType()).getRank();
    if (ra < 2 || rb < 2)
      return unsupported(rewriter, op, "1-D operands are not supported yet");
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    int64_t r = yType.getRank();
    RankedTensorType accType = yType.clone(rewriter.getI32Type());
    FailureOr<Value> acc = failure();
    if (std::optional<Value> fast =
            matMulConstantB(rewriter, loc, op.getA(), adaptor.getA(), op.getB(),
                            op.getAZeroPoint(), adaptor.getAZeroPoint(), op.getBZeroPoint(),
                            accType)) {
      acc = *fast;
    } else {
      SmallVector<Value> ops;
      if (failed(shiftOperands(rewriter, op, {op.getA(), op.getB()},
                               {adaptor.getA(), adaptor.getB()},
                               {op.getAZeroPoint(), op.getBZeroPoint()},
                               {adaptor.getAZeroPoint(), adaptor.getBZeroPoint()},
                               {ra - 2, rb - 1}, ops)))
        return failure();
      acc = buildMatMul(rewriter, loc, ops[0], ops[1], accType);
    }
    if (failed(acc))
      return unsupported(rewriter, op, "inner dims differ");
    auto dimOf = [&](Value v, int64_t axis) {
      return hasOneElement(v) ? 1 : yType.getDimSize(axis);
    };
    FailureOr<Value> as = alongAxis(rewriter, loc, adaptor.getAScale(), r - 2, r,
                                    dimOf(adaptor.getAScale(), r - 2));
    FailureOr<Value> bs = alongAxis(rewriter, loc, adaptor.getBScale(), r - 1, r,
                                    dimOf(adaptor.getBScale(), r - 1));
    FailureOr<Value> ys = perTensor(rewriter, loc, adaptor.getYScale());
    FailureOr<Value> yzp = perTensor(rewriter, loc, adaptor.getYZeroPoint());
    if (failed(as) || failed(bs) || failed(ys) || failed(yzp))
      return unsupported(rewriter, op, "scales must be per tensor, per row of a or per "
                                       "column of b; y's must be per tensor");
    rewriter.replaceOp(op, requantize(rewriter, loc, *acc, *as, *bs, *ys, *yzp,
                                      elementTypeOf(op.getY()), yType));
    return success();
  }
};

template <typename ConvLikeOp> ConvAttrs convAttrs(ConvLikeOp op) {
  return ConvAttrs{op.getGroup(), op.getAutoPad(), op.getPads(), op.getStrides(),
                   op.getDilations()};
}

/// The general integer conv of ConvInteger/QLinearConv: (x - x_zero_point)
/// convolved with (w - w_zero_point) in int32 (plus `bias`, may be null);
/// failure after reporting why.
template <typename ConvLikeOp, typename Adaptor>
FailureOr<Value> shiftedConv(ConversionPatternRewriter &rewriter, ConvLikeOp op, Adaptor adaptor,
                             Value bias, RankedTensorType accType) {
  SmallVector<Value> ops;
  if (failed(shiftOperands(rewriter, op, {op.getX(), op.getW()}, {adaptor.getX(), adaptor.getW()},
                           {op.getXZeroPoint(), op.getWZeroPoint()},
                           {adaptor.getXZeroPoint(), adaptor.getWZeroPoint()}, {1, 0}, ops)))
    return failure();
  std::string why;
  FailureOr<Value> acc = buildConvWithAttrs(rewriter, op.getLoc(), ops[0], ops[1], bias,
                                            convAttrs(op), accType, why);
  if (failed(acc))
    return unsupported(rewriter, op, why);
  return acc;
}

/// ConvInteger: a convolution of (x - x_zero_point) with (w -
/// w_zero_point) in int32; padding reads x_zero_point (0 after the shift).
struct ConvIntegerPattern : public OpConversionPattern<onnx::ConvIntegerOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ConvIntegerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    if (std::optional<Value> y = convConstantWeights(
            rewriter, op.getLoc(), op.getX(), adaptor.getX(), op.getW(), op.getXZeroPoint(),
            adaptor.getXZeroPoint(), op.getWZeroPoint(), Value(), convAttrs(op), yType)) {
      rewriter.replaceOp(op, reshapeTensor(rewriter, op.getLoc(), *y, yType));
      return success();
    }
    FailureOr<Value> y = shiftedConv(rewriter, op, adaptor, Value(), yType);
    if (failed(y))
      return failure();
    rewriter.replaceOp(op, *y);
    return success();
  }
};

/// QLinearConv: an integer convolution plus the int32 bias, requantised;
/// w_scale may be per output channel.
struct QLinearConvPattern : public OpConversionPattern<onnx::QLinearConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::QLinearConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    RankedTensorType accType = yType.clone(rewriter.getI32Type());
    Value bias = onnx::isNone(op.getB()) ? Value() : adaptor.getB();
    FailureOr<Value> acc = failure();
    // The fast form's accumulator is [N, M, P]: requantised as it is (the
    // epilogue then fuses with its zero-point correction), then reshaped.
    RankedTensorType outType = yType;
    if (std::optional<Value> fast = convConstantWeights(
            rewriter, loc, op.getX(), adaptor.getX(), op.getW(), op.getXZeroPoint(),
            adaptor.getXZeroPoint(), op.getWZeroPoint(), bias, convAttrs(op), accType)) {
      acc = *fast;
      outType = yType.clone(cast<RankedTensorType>(acc->getType()).getShape());
    } else if (failed(acc = shiftedConv(rewriter, op, adaptor, bias, accType))) {
      return failure();
    }
    int64_t r = outType.getRank(), m = yType.getDimSize(1);
    bool perChannel = !hasOneElement(adaptor.getWScale());
    FailureOr<Value> xs = perTensor(rewriter, loc, adaptor.getXScale());
    FailureOr<Value> ws = alongAxis(rewriter, loc, adaptor.getWScale(), 1, r,
                                    perChannel ? m : 1);
    FailureOr<Value> ys = perTensor(rewriter, loc, adaptor.getYScale());
    FailureOr<Value> yzp = perTensor(rewriter, loc, adaptor.getYZeroPoint());
    if (failed(xs) || failed(ws) || failed(ys) || failed(yzp))
      return unsupported(rewriter, op, "scales must be per tensor (w_scale: or per "
                                       "output channel)");
    Value y = requantize(rewriter, loc, *acc, *xs, *ws, *ys, *yzp, elementTypeOf(op.getY()),
                         outType);
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, y, yType));
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateQuantizePatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<QuantizePattern, DequantizePattern, DynamicQuantizePattern,
               MatMulIntegerPattern, QLinearMatMulPattern, ConvIntegerPattern,
               QLinearConvPattern>(
      converter, patterns.getContext());
}
} // namespace kiln::lowering
