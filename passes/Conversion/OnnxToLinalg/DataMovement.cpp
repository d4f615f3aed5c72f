//===- DataMovement.cpp - Constants, reshapes, concatenation, gathering ---===//
//
// Ops that move data without arithmetic: they become tensor ops
// (reshapes, insert_slice, pad) or, when an element's source position is
// computed (Gather, Tile, Expand), a linalg.generic that reads with
// tensor.extract or a broadcasting map. Slice and Split: Slicing.cpp.
// Shapes are static here, so every size comes from the result types.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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
      // Dropout's mask in inference keeps everything: all true.
      auto maskType = dyn_cast_or_null<RankedTensorType>(
          this->typeConverter->convertType(extra.getType()));
      if (maskType && maskType.getElementType().isInteger(1)) {
        Location loc = op.getLoc();
        results.push_back(
            maskType.hasStaticShape()
                ? arith::ConstantOp::create(rewriter, loc,
                                            DenseElementsAttr::get(maskType,
                                                                   rewriter.getBoolAttr(true)))
                      .getResult()
                : filledTensor(rewriter, loc, maskType,
                               arith::ConstantIntOp::create(rewriter, loc, 1, 1)));
        continue;
      }
      if (!extra.use_empty())
        return unsupported(rewriter, op, "this output is not supported yet");
      results.push_back(onnx::NoValueOp::create(rewriter, op.getLoc(),
                                                rewriter.getNoneType()));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Reshape, Flatten, Squeeze, Unsqueeze: the result type says everything.
/// With dynamic dims, one collapse or expand where the dims group (a
/// dynamic dim merged with static ones, [1, seq, 4] -> [1, 4*seq], or
/// split from them), else through one dim; either way each `?` of the
/// result is a dim or an expression kiln-dim-symbols recorded (the check
/// before the conversion), which sizes it.
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
    // Each input at the sum of the sizes before it along the axis; dynamic
    // sizes (a dim along the axis, or across it) are read off the input.
    OpFoldResult offset = rewriter.getIndexAttr(0);
    for (Value in : adaptor.getInputs()) {
      auto t = cast<RankedTensorType>(in.getType());
      if (t.hasStaticShape() && t.getNumElements() == 0)
        continue;
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(rank, rewriter.getIndexAttr(1));
      for (int64_t i = 0; i < rank; ++i)
        sizes.push_back(tensor::getMixedSize(rewriter, loc, in, i));
      offsets[axis] = offset;
      result = tensor::InsertSliceOp::create(rewriter, loc, in, result, offsets,
                                             sizes, strides);
      std::optional<int64_t> a = getConstantIntValue(offset),
                             n = getConstantIntValue(sizes[axis]);
      if (a && n)
        offset = rewriter.getIndexAttr(*a + *n);
      else
        offset = arith::AddIOp::create(
                     rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, offset),
                     getValueOrCreateConstantIndexOp(rewriter, loc, sizes[axis]))
                     .getResult();
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

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
    // Along the dynamic dim, indices are clamped to its run-time size,
    // which must then be at least 1 (the entry point refuses 0).
    Value runtimeDim;
    if (dType.isDynamicDim(axis)) {
      runtimeDim = tensor::DimOp::create(rewriter, loc, data, axis);
      requireNonZero(op, op.getData(), axis);
    }
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
            else if (j == axis && runtimeDim)
              at.push_back(clampedRuntimeIndex(b, l, args[0], runtimeDim));
            else if (j == axis)
              at.push_back(clampedIndex(b, l, args[0], dType.getDimSize(axis)));
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

struct ExpandPattern : public OpConversionPattern<onnx::ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = convertedResultType(*typeConverter, op);
    // A dynamic input dim must stay dynamic (it cannot be broadcast).
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t lead = type.getRank() - inType.getRank();
    for (int64_t i = 0; i < inType.getRank(); ++i)
      if (inType.isDynamicDim(i) && (lead < 0 || !type.isDynamicDim(lead + i)))
        return unsupported(rewriter, op, "a dynamic input dim that the result does not keep");
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
    if ((inType.hasStaticShape() && inType.getNumElements() == 0) ||
        (type.hasStaticShape() && type.getNumElements() == 0)) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = type.getRank();
    if (!inType.hasStaticShape()) {
      // A dynamic dim repeats with its size read at run time (an empty one
      // gives an empty result, whose body never runs).
      Location loc = op.getLoc();
      Value input = adaptor.getInput();
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(inType.isDynamicDim(d) ? Value(tensor::DimOp::create(rewriter, loc, input, d))
                                               : Value());
      rewriter.replaceOp(op, generateTensor(rewriter, loc, type,
                                            [&](OpBuilder &b, Location l) -> Value {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(b, l, d);
          Value n = sizes[d] ? sizes[d]
                             : Value(arith::ConstantIndexOp::create(b, l, inType.getDimSize(d)));
          at.push_back(arith::RemUIOp::create(b, l, i, n));
        }
        return tensor::ExtractOp::create(b, l, input, at);
      }));
      return success();
    }
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank; ++i)
      exprs.push_back(getAffineDimExpr(i, ctx) % inType.getDimSize(i));
    rewriter.replaceOp(op, copyThroughMap(rewriter, op.getLoc(), adaptor.getInput(),
                                          AffineMap::get(rank, 0, exprs, ctx), type));
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
    SmallVector<int64_t> dims;
    for (int64_t i = start; i < end; ++i)
      dims.push_back(inType.getDimSize(i));
    RankedTensorType type = convertedResultType(*typeConverter, op);
    if (inType.hasStaticShape()) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, DenseElementsAttr::get(type, ArrayRef<int64_t>(dims)));
      return success();
    }
    // The dynamic dim's value at run time.
    Location loc = op.getLoc();
    SmallVector<Value> elements;
    for (int64_t i = start; i < end; ++i) {
      elements.push_back(arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                                    dimValue(rewriter, loc, adaptor.getData(), i)));
    }
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, type, elements);
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
    if (inType.hasStaticShape()) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, DenseElementsAttr::get(type, ArrayRef<int64_t>{inType.getNumElements()}));
      return success();
    }
    Location loc = op.getLoc();
    Value n = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (int64_t i = 0; i < inType.getRank(); ++i)
      n = arith::MulIOp::create(rewriter, loc, n, dimValue(rewriter, loc, adaptor.getData(), i));
    n = arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), n);
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, type, ValueRange{n});
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
    if (!type.hasStaticShape()) {
      // The model's dynamic dim (the check admits only a shape whose
      // unknown elements are dims read by Shape).
      Value value = arith::ConstantOp::create(rewriter, op.getLoc(), scalar);
      rewriter.replaceOp(op, filledTensor(rewriter, op.getLoc(), type, value));
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(type, scalar));
    return success();
  }
};

/// Pad: constant mode with constant pads becomes tensor.pad; other modes
/// (edge, reflect, wrap), run-time pads and negative pads (crops) read
/// every output element from a computed source index.
struct PadPattern : public OpConversionPattern<onnx::PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    StringRef mode = op.getMode();
    if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
      return unsupported(rewriter, op, "mode '" + mode.str() + "' is not supported");
    auto type = cast<RankedTensorType>(adaptor.getData().getType());
    RankedTensorType resultType = convertedResultType(*typeConverter, op);
    int64_t rank = type.getRank();
    auto padsType = cast<RankedTensorType>(adaptor.getPads().getType());
    if (padsType.getRank() != 1 || padsType.getDimSize(0) != 2 * rank)
      return unsupported(rewriter, op, "pads must hold 2 * rank values");
    Type et = type.getElementType();
    Value padValue;
    if (onnx::isNone(op.getConstantValue())) {
      padValue = isa<FloatType>(et) || isa<IntegerType>(et)
                     ? scalarConstant(rewriter, loc, et, 0)
                     : Value();
      if (!padValue)
        return unsupported(rewriter, op, unsupportedType(et));
    } else {
      Value cv = adaptor.getConstantValue();
      auto cvType = cast<RankedTensorType>(cv.getType());
      if (cvType.getNumElements() < 1)
        return unsupported(rewriter, op, "constant_value is empty");
      SmallVector<Value> zeros(cvType.getRank(),
                               arith::ConstantIndexOp::create(rewriter, loc, 0));
      padValue = tensor::ExtractOp::create(rewriter, loc, cv, zeros);
    }
    auto pads = onnx::constantInts(op.getPads());
    if (mode == "constant" && pads &&
        llvm::none_of(*pads, [](int64_t p) { return p < 0; })) {
      SmallVector<int64_t> lo(pads->begin(), pads->begin() + rank),
          hi(pads->begin() + rank, pads->end());
      rewriter.replaceOp(op, padTensor(rewriter, loc, adaptor.getData(), lo, hi,
                                       padValue));
      return success();
    }
    if (resultType.hasStaticShape() && resultType.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, resultType));
      return success();
    }
    bool emptyInput = type.hasStaticShape() && type.getNumElements() == 0;
    if (emptyInput && mode != "constant")
      return unsupported(rewriter, op, "edge/reflect padding of an empty tensor");
    // Leading pads, read at run time (constants fold).
    OpBuilder &b = rewriter;
    SmallVector<Value> low, high;
    for (int64_t d = 0; d < 2 * rank; ++d) {
      Value v = tensor::ExtractOp::create(
          b, loc, adaptor.getPads(), ValueRange{arith::ConstantIndexOp::create(b, loc, d)});
      (d < rank ? low : high).push_back(arith::IndexCastOp::create(b, loc, b.getIndexType(), v));
    }
    Value data = adaptor.getData();
    // Each input dim's size: a constant, or read from the tensor (a
    // dynamic dim, which the entry point requires to be at least 1: every
    // output element reads the input).
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        requireNonZero(op, op.getData(), d);
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(dimValue(b, loc, data, d));
    rewriter.replaceOp(op, generateTensor(
        b, loc, resultType, [&](OpBuilder &nb, Location l) -> Value {
          auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(nb, l, v); };
          Value inside = arith::ConstantIntOp::create(nb, l, 1, 1);
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            Value dim = sizes[d];
            Value src = arith::SubIOp::create(nb, l, linalg::IndexOp::create(nb, l, d), low[d]);
            Value ge = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, src, c(0));
            Value lt = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, src, dim);
            inside = arith::AndIOp::create(nb, l, inside, arith::AndIOp::create(nb, l, ge, lt));
            if (mode == "reflect" && (type.isDynamicDim(d) || type.getDimSize(d) > 1)) {
              // Mirror without repeating the edge: period 2 * (dim - 1)
              // (a dim of one repeats its element: period 1 reads it).
              Value period = arith::MaxSIOp::create(
                  nb, l, arith::MulIOp::create(nb, l, c(2), arith::SubIOp::create(nb, l, dim, c(1))),
                  c(1));
              Value r = arith::RemSIOp::create(nb, l, src, period);
              Value neg = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, r, c(0));
              r = arith::SelectOp::create(nb, l, neg, arith::AddIOp::create(nb, l, r, period), r);
              Value upper = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, r, dim);
              src = arith::SelectOp::create(nb, l, upper, arith::SubIOp::create(nb, l, period, r), r);
            }
            if (mode == "wrap") {
              // Pad-19's wrap: the (cropped, for negative pads) input
              // repeats, src = start + (out - low) mod n.
              Value zero = c(0);
              Value start = arith::MaxSIOp::create(
                  nb, l, arith::SubIOp::create(nb, l, zero, low[d]), zero);
              Value cut = arith::MaxSIOp::create(
                  nb, l, arith::SubIOp::create(nb, l, zero, high[d]), zero);
              Value n = arith::MaxSIOp::create(
                  nb, l, arith::SubIOp::create(nb, l, arith::SubIOp::create(nb, l, dim, start), cut),
                  c(1));
              Value shifted = arith::SubIOp::create(
                  nb, l, linalg::IndexOp::create(nb, l, d), arith::MaxSIOp::create(nb, l, low[d], zero));
              Value r = arith::RemSIOp::create(nb, l, shifted, n);
              Value neg = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, r, zero);
              r = arith::SelectOp::create(nb, l, neg, arith::AddIOp::create(nb, l, r, n), r);
              src = arith::AddIOp::create(nb, l, start, r);
            }
            at.push_back(arith::MinSIOp::create(
                nb, l, arith::MaxSIOp::create(nb, l, src, c(0)),
                arith::MaxSIOp::create(nb, l, arith::SubIOp::create(nb, l, dim, c(1)), c(0))));
          }
          Value v;
          if (emptyInput) {
            v = padValue;
          } else {
            v = tensor::ExtractOp::create(nb, l, data, at);
            if (mode == "constant")
              v = arith::SelectOp::create(nb, l, inside, v, padValue);
          }
          return v;
        }));
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
               ConcatPattern, GatherPattern, ExpandPattern,
               TilePattern, ShapePattern, SizePattern,
               ConstantOfShapePattern, PadPattern>(converter,
                                                   patterns.getContext());
}
} // namespace kiln::lowering
