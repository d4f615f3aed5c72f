//===- Indexing.cpp - Index-computing ops -> linalg and scf ----------------===//
//
// Ops whose result depends on computed positions: ArgMax/ArgMin and
// Hardmax (a reduction carrying the index), position patterns (Trilu,
// OneHot, EyeLike, Range, CumSum, ReverseSequence), the DepthToSpace and
// SpaceToDepth reshuffles and the constant windows. Gather* and Scatter*
// are in GatherScatter.cpp. Every index read from data is normalised
// (negative counts from the end) and clamped into the tensor.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

/// A scalar from a (rank-0 or one-element) tensor operand.
Value scalarOf(OpBuilder &b, Location loc, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<Value> zeros(type.getRank(), indexConstant(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, t, zeros);
}

/// Index of the max (or min) along `axis`: [dims without axis] of i64, then
/// reshaped to `keepShape`.
Value argExtreme(OpBuilder &b, Location loc, Value x, int64_t axis, bool isMax,
                 bool last, bool isUnsigned, RankedTensorType resultType) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> outExprs;
  SmallVector<int64_t> outShape, kept;
  SmallVector<utils::IteratorType> iters;
  for (int64_t i = 0; i < rank; ++i) {
    if (i == axis) {
      iters.push_back(utils::IteratorType::reduction);
      continue;
    }
    iters.push_back(utils::IteratorType::parallel);
    outExprs.push_back(getAffineDimExpr(i, ctx));
    outShape.push_back(type.getDimSize(i));
    kept.push_back(i);
  }
  Type et = type.getElementType();
  auto valType = RankedTensorType::get(outShape, et);
  auto idxType = RankedTensorType::get(outShape, b.getI64Type());
  TypedAttr init = isMax ? lowestValue(et, isUnsigned) : highestValue(et, isUnsigned);
  // The running best value and index, sized like x without the axis (its
  // dynamic dims read from x).
  SmallVector<Value> sizes = dynamicSizesOf(b, loc, x, kept);
  auto filled = [&](RankedTensorType t, TypedAttr value) {
    return linalg::FillOp::create(b, loc, arith::ConstantOp::create(b, loc, value).getResult(),
                                  emptyTensor(b, loc, t, sizes))
        .getResult(0);
  };
  Value vals = filled(valType, init);
  Value idxs = filled(idxType, b.getI64IntegerAttr(-1));
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{valType, idxType}, ValueRange{x}, ValueRange{vals, idxs},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank), outMap, outMap}, iters,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value v = a[0], best = a[1], bestIdx = a[2];
        Value i = arith::IndexCastOp::create(nb, l, nb.getI64Type(),
                                             linalg::IndexOp::create(nb, l, axis));
        Value better;
        if (isa<FloatType>(et)) {
          auto pred = isMax ? (last ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
                            : (last ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT);
          better = arith::CmpFOp::create(nb, l, pred, v, best);
        } else {
          arith::CmpIPredicate pred;
          if (isUnsigned)
            pred = isMax ? (last ? arith::CmpIPredicate::uge : arith::CmpIPredicate::ugt)
                         : (last ? arith::CmpIPredicate::ule : arith::CmpIPredicate::ult);
          else
            pred = isMax ? (last ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sgt)
                         : (last ? arith::CmpIPredicate::sle : arith::CmpIPredicate::slt);
          better = arith::CmpIOp::create(nb, l, pred, v, best);
        }
        // The first element always wins (an all -inf or NaN row gives 0).
        Value first = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::slt, bestIdx,
            arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(0)));
        better = arith::OrIOp::create(nb, l, better, first);
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, better, v, best),
                       arith::SelectOp::create(nb, l, better, i, bestIdx)});
      });
  return reshapeTensor(b, loc, generic.getResult(1), resultType);
}

template <typename OpTy, bool isMax>
struct ArgPattern : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult
  matchAndRewrite(OpTy op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type elem = elementTypeOf(op.getData());
    if (!isSupportedFloat(elem) && !isSupportedInt(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    auto type = cast<RankedTensorType>(adaptor.getData().getType());
    int64_t axis = normalizedAxis(op.getAxis(), type.getRank());
    if (axis < 0 || axis >= type.getRank() || type.getDimSize(axis) == 0)
      return unsupported(rewriter, op, "axis out of range or empty");
    RankedTensorType resultType = convertedResultType(*this->typeConverter, op);
    rewriter.replaceOp(op, argExtreme(rewriter, op.getLoc(), adaptor.getData(), axis,
                                      isMax, op.getSelectLastIndex() != 0,
                                      elem.isUnsignedInteger(), resultType));
    return success();
  }
};

/// Hardmax: 1 at the first maximum along the axis, 0 elsewhere.
struct HardmaxPattern : public OpConversionPattern<onnx::HardmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::HardmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getInput());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rank = type.getRank(), axis = normalizedAxis(op.getAxis(), rank);
    if (axis < 0 || axis >= rank || type.getDimSize(axis) == 0)
      return unsupported(rewriter, op, "axis out of range or empty");
    SmallVector<int64_t> keep(type.getShape());
    keep[axis] = 1;
    Value idx = argExtreme(rewriter, loc, adaptor.getInput(), axis, true, false, false,
                           RankedTensorType::get(keep, rewriter.getI64Type()));
    Type et = type.getElementType();
    Value y = broadcastGeneric(rewriter, loc, ValueRange{idx}, type,
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 Value i = arith::IndexCastOp::create(
                                     b, l, b.getI64Type(), linalg::IndexOp::create(b, l, axis));
                                 Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, i, a[0]);
                                 return arith::SelectOp::create(b, l, hit, scalarConstant(b, l, et, 1),
                                                                scalarConstant(b, l, et, 0));
                               });
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct TriluPattern : public OpConversionPattern<onnx::TriluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::TriluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = convertedResultType(*typeConverter, op);
    int64_t rank = type.getRank();
    if (rank < 2)
      return unsupported(rewriter, op, "input must have rank >= 2");
    Value k = onnx::isNone(op.getK())
                  ? indexConstant(rewriter, loc, 0)
                  : arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                               scalarOf(rewriter, loc, adaptor.getK()))
                        .getResult();
    bool upper = op.getUpper() != 0;
    Type et = type.getElementType();
    Value y = broadcastGeneric(
        rewriter, loc, ValueRange{adaptor.getInput()}, type,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value i = linalg::IndexOp::create(b, l, rank - 2);
          Value j = linalg::IndexOp::create(b, l, rank - 1);
          Value diff = arith::SubIOp::create(b, l, j, i);
          Value keep = arith::CmpIOp::create(
              b, l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle, diff, k);
          return arith::SelectOp::create(b, l, keep, a[0],
                                         isa<FloatType>(et) || isa<IntegerType>(et)
                                             ? scalarConstant(b, l, et, 0)
                                             : a[0]);
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct OneHotPattern : public OpConversionPattern<onnx::OneHotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = convertedResultType(*typeConverter, op);
    int64_t rank = type.getRank(), axis = normalizedAxis(op.getAxis(), rank);
    if (axis < 0 || axis >= rank)
      return unsupported(rewriter, op, "axis out of range");
    auto vType = cast<RankedTensorType>(adaptor.getValues().getType());
    if (!vType.hasStaticShape() || vType.getNumElements() != 2)
      return unsupported(rewriter, op, "values must hold two elements");
    if (type.isDynamicDim(axis))
      return unsupported(rewriter, op, "a depth known only at run time");
    Value off = tensor::ExtractOp::create(rewriter, loc, adaptor.getValues(),
                                          ValueRange{indexConstant(rewriter, loc, 0)});
    Value on = tensor::ExtractOp::create(rewriter, loc, adaptor.getValues(),
                                         ValueRange{indexConstant(rewriter, loc, 1)});
    int64_t depth = type.getDimSize(axis);
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> iExprs;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        iExprs.push_back(getAffineDimExpr(d, ctx));
    Type idxElem = elementTypeOf(op.getIndices());
    // The output's other dims are the indices' own.
    SmallVector<int64_t> iDims = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{adaptor.getIndices()},
        ValueRange{emptyTensor(rewriter, loc, type,
                               dynamicSizesOf(rewriter, loc, adaptor.getIndices(), iDims))},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, iExprs, ctx),
                            rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value v = castScalar(b, l, a[0], idxElem, b.getI64Type());
          Value d = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(depth));
          Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, v,
                                            arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0)));
          v = arith::SelectOp::create(b, l, neg, arith::AddIOp::create(b, l, v, d), v);
          Value pos = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                                 linalg::IndexOp::create(b, l, axis));
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, v, pos);
          linalg::YieldOp::create(b, l, arith::SelectOp::create(b, l, hit, on, off).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct EyeLikePattern : public OpConversionPattern<onnx::EyeLikeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::EyeLikeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = convertedResultType(*typeConverter, op);
    Type et = type.getElementType();
    if (type.getRank() != 2 || !(isa<FloatType>(et) || isa<IntegerType>(et)))
      return unsupported(rewriter, op, "only 2-D numeric outputs are supported");
    int64_t k = op.getK();
    rewriter.replaceOp(op, generateTensor(rewriter, op.getLoc(), type,
                                          [&](OpBuilder &b, Location l) -> Value {
      Value diff = arith::SubIOp::create(b, l, linalg::IndexOp::create(b, l, 1),
                                         linalg::IndexOp::create(b, l, 0));
      Value hit =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, diff, indexConstant(b, l, k));
      return arith::SelectOp::create(b, l, hit, scalarConstant(b, l, et, 1),
                                     scalarConstant(b, l, et, 0));
    }));
    return success();
  }
};

struct RangePattern : public OpConversionPattern<onnx::RangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::RangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = convertedResultType(*typeConverter, op);
    Type et = type.getElementType();
    if (!(isa<FloatType>(et) || isa<IntegerType>(et)))
      return unsupported(rewriter, op, "unsupported element type");
    // A dynamic length is one of the model's dims (kiln-dim-symbols).
    if (type.hasStaticShape() && type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    Value start = scalarOf(rewriter, loc, adaptor.getStart());
    Value delta = scalarOf(rewriter, loc, adaptor.getDelta());
    rewriter.replaceOp(op, generateTensor(
        rewriter, loc, type, [&](OpBuilder &b, Location l) -> Value {
          Value i = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                               linalg::IndexOp::create(b, l, 0));
          Value v;
          if (isa<FloatType>(et)) {
            Value fi = arith::SIToFPOp::create(b, l, et, i);
            v = arith::AddFOp::create(b, l, start, arith::MulFOp::create(b, l, fi, delta));
          } else {
            Value ii = castScalar(b, l, i, b.getI64Type(), et);
            v = arith::AddIOp::create(b, l, start, arith::MulIOp::create(b, l, ii, delta));
          }
          return v;
        }));
    return success();
  }
};

/// CumSum: y[i] = sum of x[j] for j <= i (j < i exclusive; >= / > reverse)
/// along the axis, as a reduction over a second copy of the axis.
struct CumSumPattern : public OpConversionPattern<onnx::CumSumOp> {
  using OpConversionPattern::OpConversionPattern;

  /// The axis known only at run time: the summed position j runs over the
  /// largest dim, and each element reads x with the axis's index replaced
  /// by j (terms with j past the axis's size are skipped).
  LogicalResult runtimeAxis(onnx::CumSumOp op, OpAdaptor adaptor,
                            ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    if (!type.hasStaticShape())
      return unsupported(rewriter, op, "an axis known only at run time over dynamic dims");
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    Type et = type.getElementType();
    Value axisRaw = scalarOf(rewriter, loc, adaptor.getAxis());
    Value axis = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), axisRaw);
    Value neg = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, axis,
                                      indexConstant(rewriter, loc, 0));
    Value wrapped =
        arith::AddIOp::create(rewriter, loc, axis, indexConstant(rewriter, loc, rank));
    axis = arith::SelectOp::create(rewriter, loc, neg, wrapped, axis);
    int64_t maxDim = 1;
    for (int64_t d : type.getShape())
      maxDim = std::max(maxDim, d);
    bool exclusive = op.getExclusive() != 0, reverse = op.getReverse() != 0;
    MLIRContext *ctx = rewriter.getContext();
    Value bound = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{maxDim}, et);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    iters.push_back(utils::IteratorType::reduction);
    Value init = filledTensor(rewriter, loc, type, scalarConstant(rewriter, loc, et, 0));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{bound}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, ctx)}, ctx),
                            AffineMap::get(rank + 1, 0,
                                           rewriter.getMultiDimIdentityMap(rank).getResults(), ctx)},
        iters, [&](OpBuilder &b, Location l, ValueRange a) {
          Value j = linalg::IndexOp::create(b, l, rank);
          Value i = indexConstant(b, l, 0), size = indexConstant(b, l, 0);
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            Value isAxis =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, axis, indexConstant(b, l, d));
            Value id = linalg::IndexOp::create(b, l, d);
            i = arith::SelectOp::create(b, l, isAxis, id, i);
            size = arith::SelectOp::create(b, l, isAxis, indexConstant(b, l, type.getDimSize(d)),
                                           size);
            Value pos = arith::SelectOp::create(b, l, isAxis, j, id);
            at.push_back(
                arith::MinSIOp::create(b, l, pos, indexConstant(b, l, type.getDimSize(d) - 1)));
          }
          arith::CmpIPredicate pred =
              reverse ? (exclusive ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge)
                      : (exclusive ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sle);
          Value take = arith::AndIOp::create(
              b, l, arith::CmpIOp::create(b, l, pred, j, i),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, j, size));
          Value v = tensor::ExtractOp::create(b, l, x, at);
          v = arith::SelectOp::create(b, l, take, v, scalarConstant(b, l, et, 0));
          Value sum = isa<FloatType>(et) ? Value(arith::AddFOp::create(b, l, a[1], v))
                                         : Value(arith::AddIOp::create(b, l, a[1], v));
          linalg::YieldOp::create(b, l, sum);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

  LogicalResult
  matchAndRewrite(onnx::CumSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem) && !isSupportedInt(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    auto type = cast<RankedTensorType>(adaptor.getX().getType());
    int64_t rank = type.getRank();
    auto axisVals = onnx::constantInts(op.getAxis());
    if (!axisVals)
      return runtimeAxis(op, adaptor, rewriter);
    if (axisVals->size() != 1)
      return unsupported(rewriter, op, "axis must hold one value");
    int64_t axis = normalizedAxis((*axisVals)[0], rank);
    if (axis < 0 || axis >= rank)
      return unsupported(rewriter, op, "axis out of range");
    bool exclusive = op.getExclusive() != 0, reverse = op.getReverse() != 0;
    MLIRContext *ctx = rewriter.getContext();
    // Loops: the output dims, then j (the summed position along the axis).
    SmallVector<AffineExpr> xe;
    for (int64_t d = 0; d < rank; ++d)
      xe.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    iters.push_back(utils::IteratorType::reduction);
    Type et = type.getElementType();
    Value init = filledTensor(rewriter, loc, type, scalarConstant(rewriter, loc, et, 0));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{adaptor.getX()}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, xe, ctx),
                            AffineMap::get(rank + 1, 0,
                                           rewriter.getMultiDimIdentityMap(rank).getResults(), ctx)},
        iters, [&](OpBuilder &b, Location l, ValueRange a) {
          Value i = linalg::IndexOp::create(b, l, axis), j = linalg::IndexOp::create(b, l, rank);
          arith::CmpIPredicate pred =
              reverse ? (exclusive ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge)
                      : (exclusive ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sle);
          Value take = arith::CmpIOp::create(b, l, pred, j, i);
          Value v = arith::SelectOp::create(b, l, take, a[0], scalarConstant(b, l, et, 0));
          Value sum = isa<FloatType>(et) ? Value(arith::AddFOp::create(b, l, a[1], v))
                                         : Value(arith::AddIOp::create(b, l, a[1], v));
          linalg::YieldOp::create(b, l, sum);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// DepthToSpace / SpaceToDepth: reshape, transpose, reshape. DepthToSpace
/// takes a dynamic batch, height and width (ESPCN's PixelShuffle over an
/// image of any size): they pass through the first reshape, and the last
/// merges each with the static block size.
struct DepthToSpacePattern : public OpConversionPattern<onnx::DepthToSpaceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::DepthToSpaceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t b = op.getBlocksize();
    if (type.getRank() != 4 || b < 1 || type.isDynamicDim(1) ||
        type.getDimSize(1) % (b * b) != 0)
      return unsupported(rewriter, op,
                         "needs a 4-D input whose channels (static) divide by blocksize^2");
    int64_t n = type.getDimSize(0), c = type.getDimSize(1), h = type.getDimSize(2),
            w = type.getDimSize(3), cb = c / (b * b);
    bool crd = op.getMode() == "CRD";
    SmallVector<int64_t> s6 = crd ? SmallVector<int64_t>{n, cb, b, b, h, w}
                                  : SmallVector<int64_t>{n, b, b, cb, h, w};
    SmallVector<int64_t> perm = crd ? SmallVector<int64_t>{0, 1, 4, 2, 5, 3}
                                    : SmallVector<int64_t>{0, 3, 4, 1, 5, 2};
    Value x = reshapeTensor(rewriter, loc, adaptor.getInput(), type.clone(s6));
    x = transposeTensor(rewriter, loc, x, perm);
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, x,
                                         convertedResultType(*typeConverter, op)));
    return success();
  }
};

struct SpaceToDepthPattern : public OpConversionPattern<onnx::SpaceToDepthOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::SpaceToDepthOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t b = op.getBlocksize();
    if (type.getRank() != 4 || b < 1 || type.getDimSize(2) % b || type.getDimSize(3) % b)
      return unsupported(rewriter, op, "needs a 4-D input whose spatial dims divide by blocksize");
    int64_t n = type.getDimSize(0), c = type.getDimSize(1), h = type.getDimSize(2),
            w = type.getDimSize(3);
    Value x = reshapeTensor(rewriter, loc, adaptor.getInput(),
                            type.clone(SmallVector<int64_t>{n, c, h / b, b, w / b, b}));
    x = transposeTensor(rewriter, loc, x, {0, 3, 5, 1, 2, 4});
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, x,
                                         convertedResultType(*typeConverter, op)));
    return success();
  }
};

/// Hann, Hamming and Blackman windows: the length is static, so the
/// window is a constant computed here.
template <typename OpTy>
struct WindowPattern : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult
  matchAndRewrite(OpTy op, Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = convertedResultType(*this->typeConverter, op);
    Type et = type.getElementType();
    if (type.getRank() != 1 || !(isa<FloatType>(et) || isa<IntegerType>(et)))
      return unsupported(rewriter, op, "unsupported output type");
    int64_t n = type.getDimSize(0);
    double denom = op.getPeriodic() != 0 ? n : n - 1;
    SmallVector<Attribute> values;
    for (int64_t i = 0; i < n; ++i) {
      double x = denom > 0 ? 2 * M_PI * i / denom : 0, v;
      if (std::is_same_v<OpTy, onnx::HannWindowOp>)
        v = 0.5 - 0.5 * std::cos(x);
      else if (std::is_same_v<OpTy, onnx::HammingWindowOp>)
        v = 25.0 / 46.0 - 21.0 / 46.0 * std::cos(x);
      else
        v = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
      values.push_back(isa<FloatType>(et) ? Attribute(FloatAttr::get(et, v))
                                          : Attribute(IntegerAttr::get(et, static_cast<int64_t>(v))));
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, DenseElementsAttr::get(type, values));
    return success();
  }
};

/// ReverseSequence: y[b, t] = x[b, len[b] - 1 - t] for t < len[b], else
/// x[b, t] (batch and time axes 0/1; lengths clamped into [0, steps]).
/// Any dim may be dynamic.
struct ReverseSequencePattern : public OpConversionPattern<onnx::ReverseSequenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ReverseSequenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), lens = adaptor.getSequenceLens();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), ba = op.getBatchAxis(), ta = op.getTimeAxis();
    if (rank < 2 || ba == ta || ba < 0 || ba > 1 || ta < 0 || ta > 1)
      return unsupported(rewriter, op, "batch_axis and time_axis must be 0 and 1");
    if (knownEmpty(type)) {
      rewriter.replaceOp(op, x);
      return success();
    }
    // The number of steps, read at run time along a dynamic time axis (the
    // output is sized like the input: dynamic dims from the op's symbols).
    Value steps = dimValue(rewriter, loc, x, ta);
    rewriter.replaceOp(op, generateTensor(
        rewriter, loc, type, [&](OpBuilder &b, Location l) -> Value {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(linalg::IndexOp::create(b, l, d));
          Value len = tensor::ExtractOp::create(b, l, lens, ValueRange{at[ba]});
          len = arith::IndexCastOp::create(b, l, b.getIndexType(), len);
          len = arith::MaxSIOp::create(b, l, len, indexConstant(b, l, 0));
          len = arith::MinSIOp::create(b, l, len, steps);
          Value t = at[ta];
          Value last = arith::SubIOp::create(b, l, len, indexConstant(b, l, 1));
          Value rev = arith::SubIOp::create(b, l, last, t);
          Value inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, t, len);
          at[ta] = arith::SelectOp::create(b, l, inside, rev, t);
          return tensor::ExtractOp::create(b, l, x, at);
        }));
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateIndexingPatterns(const TypeConverter &converter,
                              RewritePatternSet &patterns) {
  patterns.add<ArgPattern<onnx::ArgMaxOp, true>, ArgPattern<onnx::ArgMinOp, false>,
               HardmaxPattern, TriluPattern, OneHotPattern,
               EyeLikePattern, RangePattern, CumSumPattern, DepthToSpacePattern,
               SpaceToDepthPattern, WindowPattern<onnx::HannWindowOp>,
               WindowPattern<onnx::HammingWindowOp>, WindowPattern<onnx::BlackmanWindowOp>,
               ReverseSequencePattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
