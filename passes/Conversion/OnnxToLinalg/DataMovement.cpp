//===- DataMovement.cpp - Constants, reshapes, slicing, gathering ----------===//
//
// Ops that move data without arithmetic: they become tensor ops
// (reshapes, extract/insert_slice, pad) or, when an element's source
// position is computed (Gather, negative-step Slice, Tile, Expand), a
// linalg.generic that reads with tensor.extract or a broadcasting map.
// Shapes are static here, so every size comes from the result types.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

std::string unsupportedType(Type t) {
  return "element type " + typeName(t) + " is not supported yet";
}

bool movable(Type t) {
  return isSupportedFloat(t) || isSupportedInt(t) || isBool(t) || t.isF16() ||
         t.isBF16();
}

struct ConstantPattern : public OpConversionPattern<onnx::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = op.getValueAttr();
    if (!value)
      return unsupported(rewriter, op, "only the 'value' form is supported");
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !movable(type.getElementType()))
      return unsupported(rewriter, op, unsupportedType(getElementTypeOrSelf(value.getType())));
    auto target = type.clone(signlessType(type.getElementType()));
    TypedAttr attr;
    if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
      attr = target == type ? dense : dense.bitcast(target.getElementType());
    } else if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
      attr = target == type ? cast<TypedAttr>(res)
                            : DenseResourceElementsAttr::get(target, res.getRawHandle());
    } else {
      return unsupported(rewriter, op, "sparse constants are not supported yet");
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, target, attr);
    return success();
  }
};

/// Identity, and Dropout in inference (its mask unused).
template <typename OpTy>
struct ForwardPattern : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult
  matchAndRewrite(OpTy op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Operation *raw = op.getOperation();
    if (isa<onnx::DropoutOp>(raw) && raw->getNumOperands() > 2 &&
        !onnx::isNone(raw->getOperand(2))) {
      std::optional<SmallVector<int64_t>> training =
          onnx::constantInts(raw->getOperand(2));
      // Training mode drops at random, except with ratio 0.
      std::optional<SmallVector<int64_t>> ratio;
      if (!onnx::isNone(raw->getOperand(1)))
        if (DenseElementsAttr r = onnx::constantOf(raw->getOperand(1)))
          if (r.isSplat() && isa<FloatType>(r.getElementType()) &&
              r.getSplatValue<APFloat>().isZero())
            ratio = SmallVector<int64_t>{0};
      bool training_on =
          !training || llvm::any_of(*training, [](int64_t t) { return t != 0; });
      if (training_on && !ratio)
        return unsupported(rewriter, op,
                           "training mode (random dropout) is not supported");
    }
    SmallVector<Value> results{adaptor.getOperands()[0]};
    for (Value extra : raw->getResults().drop_front()) {
      if (!extra.use_empty())
        return unsupported(rewriter, op, "the mask output is not supported yet");
      results.push_back(onnx::NoValueOp::create(rewriter, op.getLoc(),
                                                rewriter.getNoneType()));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Reshape, Flatten, Squeeze, Unsqueeze: the result type says everything.
template <typename OpTy>
struct ReshapeLikePattern : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpConversionPattern<OpTy>::OpAdaptor;
  LogicalResult
  matchAndRewrite(OpTy op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = convertedResultType(*this->typeConverter, op);
    rewriter.replaceOp(op, reshapeTensor(rewriter, op.getLoc(),
                                         adaptor.getOperands()[0], type));
    return success();
  }
};

struct TransposePattern : public OpConversionPattern<onnx::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(adaptor.getData().getType());
    SmallVector<int64_t> perm;
    if (auto p = op.getPerm())
      perm.assign(p->begin(), p->end());
    else
      for (int64_t i = type.getRank() - 1; i >= 0; --i)
        perm.push_back(i);
    rewriter.replaceOp(op, transposeTensor(rewriter, op.getLoc(),
                                           adaptor.getData(), perm));
    return success();
  }
};

struct ConcatPattern : public OpConversionPattern<onnx::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = convertedResultType(*typeConverter, op);
    int64_t rank = type.getRank();
    int64_t axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return unsupported(rewriter, op, "axis out of range");
    Value result = emptyTensor(rewriter, loc, type);
    int64_t offset = 0;
    for (Value in : adaptor.getInputs()) {
      auto t = cast<RankedTensorType>(in.getType());
      if (t.getNumElements() == 0)
        continue;
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(rank, rewriter.getIndexAttr(1));
      for (int64_t i = 0; i < rank; ++i)
        sizes.push_back(rewriter.getIndexAttr(t.getDimSize(i)));
      offsets[axis] = rewriter.getIndexAttr(offset);
      result = tensor::InsertSliceOp::create(rewriter, loc, in, result, offsets,
                                             sizes, strides);
      offset += t.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Reads an index from an integer scalar: negative values count from the
/// end; out-of-range values are clamped so that no access leaves the tensor.
Value normalizeIndex(OpBuilder &b, Location loc, Value idx, int64_t dim) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), idx);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value size = arith::ConstantIndexOp::create(b, loc, dim);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  i = arith::SelectOp::create(b, loc, neg, arith::AddIOp::create(b, loc, i, size), i);
  i = arith::MaxSIOp::create(b, loc, i, zero);
  Value last = arith::ConstantIndexOp::create(b, loc, std::max<int64_t>(dim - 1, 0));
  return arith::MinSIOp::create(b, loc, i, last);
}

struct GatherPattern : public OpConversionPattern<onnx::GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dType = cast<RankedTensorType>(data.getType());
    auto iType = cast<RankedTensorType>(indices.getType());
    RankedTensorType type = convertedResultType(*typeConverter, op);
    int64_t r = dType.getRank(), q = iType.getRank();
    int64_t axis = op.getAxis();
    if (axis < 0)
      axis += r;
    if (axis < 0 || axis >= r)
      return unsupported(rewriter, op, "axis out of range");
    if (dType.getDimSize(axis) == 0)
      return unsupported(rewriter, op, "gathering from an empty axis");
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> iExprs;
    for (int64_t j = 0; j < q; ++j)
      iExprs.push_back(getAffineDimExpr(axis + j, ctx));
    int64_t outRank = type.getRank();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{indices},
        ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::get(outRank, 0, iExprs, ctx),
                            rewriter.getMultiDimIdentityMap(outRank)},
        SmallVector<utils::IteratorType>(outRank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> at;
          for (int64_t j = 0; j < r; ++j) {
            if (j < axis)
              at.push_back(linalg::IndexOp::create(b, l, j));
            else if (j == axis)
              at.push_back(normalizeIndex(b, l, args[0], dType.getDimSize(axis)));
            else
              at.push_back(linalg::IndexOp::create(b, l, j - 1 + q));
          }
          Value v = tensor::ExtractOp::create(b, l, data, at);
          linalg::YieldOp::create(b, l, v);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct SlicePattern : public OpConversionPattern<onnx::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    auto dType = cast<RankedTensorType>(data.getType());
    RankedTensorType type = convertedResultType(*typeConverter, op);
    int64_t rank = dType.getRank();
    auto starts = onnx::constantInts(op.getStarts());
    auto ends = onnx::constantInts(op.getEnds());
    if (!starts || !ends)
      return unsupported(rewriter, op, "starts and ends must be constants");
    SmallVector<int64_t> axes, steps(starts->size(), 1);
    if (!onnx::isNone(op.getAxes())) {
      auto a = onnx::constantInts(op.getAxes());
      if (!a)
        return unsupported(rewriter, op, "axes must be a constant");
      axes = *a;
    } else {
      for (size_t i = 0; i < starts->size(); ++i)
        axes.push_back(i);
    }
    if (!onnx::isNone(op.getSteps())) {
      auto s = onnx::constantInts(op.getSteps());
      if (!s)
        return unsupported(rewriter, op, "steps must be a constant");
      steps = *s;
    }
    if (axes.size() != starts->size() || ends->size() != starts->size() ||
        steps.size() != starts->size())
      return unsupported(rewriter, op, "starts, ends, axes and steps differ in length");
    SmallVector<int64_t> offset(rank, 0), step(rank, 1);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (a < 0 || a >= rank || steps[i] == 0)
        return unsupported(rewriter, op, "axis out of range or zero step");
      int64_t dim = dType.getDimSize(a), s = (*starts)[i];
      if (s < 0)
        s += dim;
      s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim)
                       : std::clamp<int64_t>(s, 0, std::max<int64_t>(dim - 1, 0));
      offset[a] = s;
      step[a] = steps[i];
    }
    bool positive = llvm::all_of(step, [](int64_t s) { return s > 0; });
    if (positive) {
      SmallVector<OpFoldResult> offs, sizes, strides;
      for (int64_t i = 0; i < rank; ++i) {
        offs.push_back(rewriter.getIndexAttr(offset[i]));
        sizes.push_back(rewriter.getIndexAttr(type.getDimSize(i)));
        strides.push_back(rewriter.getIndexAttr(step[i]));
      }
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, type, data, offs,
                                                          sizes, strides);
      return success();
    }
    // Negative steps: read data[offset + i * step] through the input map.
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank; ++i)
      exprs.push_back(getAffineDimExpr(i, ctx) * step[i] + offset[i]);
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{data},
        ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, exprs, ctx),
                            rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct ExpandPattern : public OpConversionPattern<onnx::ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = convertedResultType(*typeConverter, op);
    rewriter.replaceOp(op, broadcastGeneric(rewriter, op.getLoc(),
                                            ValueRange{adaptor.getInput()}, type,
                                            [](OpBuilder &, Location, ValueRange a) {
                                              return a[0];
                                            }));
    return success();
  }
};

struct TilePattern : public OpConversionPattern<onnx::TileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::TileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = convertedResultType(*typeConverter, op);
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    if (inType.getNumElements() == 0 || type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = type.getRank();
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank; ++i)
      exprs.push_back(getAffineDimExpr(i, ctx) % inType.getDimSize(i));
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), type, ValueRange{adaptor.getInput()},
        ValueRange{emptyTensor(rewriter, op.getLoc(), type)},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, exprs, ctx),
                            rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct SplitPattern : public OpConversionPattern<onnx::SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rank = inType.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return unsupported(rewriter, op, "axis out of range");
    SmallVector<Value> results;
    int64_t offset = 0;
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      RankedTensorType type = convertedResultType(*typeConverter, op, i);
      SmallVector<OpFoldResult> offs(rank, rewriter.getIndexAttr(0)), sizes,
          strides(rank, rewriter.getIndexAttr(1));
      offs[axis] = rewriter.getIndexAttr(offset);
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(rewriter.getIndexAttr(type.getDimSize(d)));
      results.push_back(tensor::ExtractSliceOp::create(
          rewriter, op.getLoc(), type, adaptor.getInput(), offs, sizes, strides));
      offset += type.getDimSize(axis);
    }
    if (offset != inType.getDimSize(axis))
      return unsupported(rewriter, op, "split sizes do not cover the axis");
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Shape and Size of static tensors are constants.
struct ShapePattern : public OpConversionPattern<onnx::ShapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ShapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inType = cast<RankedTensorType>(adaptor.getData().getType());
    auto [start, end] = onnx::shapeOpRange(inType.getRank(), op.getStart(),
                                           op.getEnd() ? *op.getEnd() : inType.getRank());
    SmallVector<int64_t> dims(inType.getShape().begin() + start,
                              inType.getShape().begin() + end);
    RankedTensorType type = convertedResultType(*typeConverter, op);
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(type, ArrayRef<int64_t>(dims)));
    return success();
  }
};

struct SizePattern : public OpConversionPattern<onnx::SizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::SizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inType = cast<RankedTensorType>(adaptor.getData().getType());
    RankedTensorType type = convertedResultType(*typeConverter, op);
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(type, ArrayRef<int64_t>{inType.getNumElements()}));
    return success();
  }
};

struct ConstantOfShapePattern : public OpConversionPattern<onnx::ConstantOfShapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ConstantOfShapeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = convertedResultType(*typeConverter, op);
    Type et = type.getElementType();
    TypedAttr scalar;
    if (auto v = dyn_cast_or_null<DenseElementsAttr>(op.getValueAttr())) {
      if (v.getNumElements() != 1)
        return unsupported(rewriter, op, "value must have one element");
      Attribute e = v.getValues<Attribute>()[0];
      if (auto f = dyn_cast<FloatAttr>(e))
        scalar = FloatAttr::get(et, f.getValueAsDouble());
      else if (auto i = dyn_cast<IntegerAttr>(e))
        scalar = IntegerAttr::get(et, i.getValue().getSExtValue());
    } else if (!op.getValueAttr()) {
      scalar = isa<FloatType>(et) ? TypedAttr(FloatAttr::get(et, 0.0))
                                  : TypedAttr(IntegerAttr::get(et, 0));
    }
    if (!scalar || !movable(et))
      return unsupported(rewriter, op, "unsupported value");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(type, scalar));
    return success();
  }
};

struct PadPattern : public OpConversionPattern<onnx::PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (op.getMode() != "constant")
      return unsupported(rewriter, op, "mode '" + op.getMode().str() +
                                                 "' is not supported yet");
    auto pads = onnx::constantInts(op.getPads());
    auto type = cast<RankedTensorType>(adaptor.getData().getType());
    int64_t rank = type.getRank();
    if (!pads || static_cast<int64_t>(pads->size()) != 2 * rank)
      return unsupported(rewriter, op, "pads must be a constant of 2 * rank values");
    SmallVector<int64_t> lo(pads->begin(), pads->begin() + rank),
        hi(pads->begin() + rank, pads->end());
    if (llvm::any_of(*pads, [](int64_t p) { return p < 0; }))
      return unsupported(rewriter, op, "negative pads are not supported yet");
    Type et = type.getElementType();
    Value padValue;
    if (onnx::isNone(op.getConstantValue())) {
      padValue = scalarConstant(rewriter, loc, et, 0);
    } else {
      Value cv = adaptor.getConstantValue();
      auto cvType = cast<RankedTensorType>(cv.getType());
      SmallVector<Value> zeros(cvType.getRank(),
                               arith::ConstantIndexOp::create(rewriter, loc, 0));
      padValue = tensor::ExtractOp::create(rewriter, loc, cv, zeros);
    }
    rewriter.replaceOp(op, padTensor(rewriter, loc, adaptor.getData(), lo, hi, padValue));
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateDataMovementPatterns(const TypeConverter &converter,
                                  RewritePatternSet &patterns) {
  patterns.add<ConstantPattern, ForwardPattern<onnx::IdentityOp>,
               ForwardPattern<onnx::DropoutOp>,
               ReshapeLikePattern<onnx::ReshapeOp>,
               ReshapeLikePattern<onnx::FlattenOp>,
               ReshapeLikePattern<onnx::SqueezeOp>,
               ReshapeLikePattern<onnx::UnsqueezeOp>, TransposePattern,
               ConcatPattern, GatherPattern, SlicePattern, ExpandPattern,
               TilePattern, SplitPattern, ShapePattern, SizePattern,
               ConstantOfShapePattern, PadPattern>(converter,
                                                   patterns.getContext());
}
} // namespace kiln::lowering
