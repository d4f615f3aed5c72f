//===- Indexing.cpp - Index-computing ops -> linalg and scf ----------------===//
//
// Ops whose result depends on computed positions: ArgMax/ArgMin and
// Hardmax (a reduction carrying the index), GatherElements/GatherND
// (tensor.extract at a computed index inside a generic), Scatter*
// (an scf.for nest inserting into a copy of the data), and position
// patterns (Trilu, OneHot, EyeLike, Range, CumSum), plus the
// DepthToSpace/SpaceToDepth reshuffles. Every index read from data is
// normalised (negative counts from the end) and clamped into the tensor.
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

Value cidx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A scalar from a (rank-0 or one-element) tensor operand.
Value scalarOf(OpBuilder &b, Location loc, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<Value> zeros(type.getRank(), cidx(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, t, zeros);
}

int64_t normAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// Whether `type` has no elements, as far as its static dims tell.
bool knownEmpty(RankedTensorType type) {
  return llvm::any_of(type.getShape(), [](int64_t d) { return d == 0; });
}

/// Each dim of `v` as an index value (a constant where static).
SmallVector<Value> dimValues(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<Value> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(type.isDynamicDim(d) ? tensor::DimOp::create(b, loc, v, d).getResult()
                                        : cidx(b, loc, type.getDimSize(d)));
  return dims;
}

/// min(i, size - 1): a position read along a dim that the loop's own dim
/// may exceed.
Value clampedPosition(OpBuilder &b, Location loc, Value i, Value size) {
  if (std::optional<int64_t> c = getConstantIntValue(size))
    return arith::MinSIOp::create(b, loc, i, cidx(b, loc, *c - 1));
  return arith::MinSIOp::create(b, loc, i, arith::SubIOp::create(b, loc, size, cidx(b, loc, 1)));
}

/// Makes the entry point refuse 0 for a dynamic dim `d` of `data` (an onnx
/// value) that the op reads at a position it computes (clamped into the
/// dim, which an empty dim has none of), unless the op's loop dim `ld`,
/// dim `ld` of `loop`, always has its size (then there is nothing to read).
void requireReadable(Operation *op, Value data, int64_t d, Value loop = Value(),
                     int64_t ld = -1) {
  if (!cast<RankedTensorType>(data.getType()).isDynamicDim(d))
    return;
  if (loop && sameSize(data, d, loop, ld))
    return;
  requireNonZero(op, data, d);
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
    int64_t axis = normAxis(op.getAxis(), type.getRank());
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
    int64_t rank = type.getRank(), axis = normAxis(op.getAxis(), rank);
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

struct GatherElementsPattern : public OpConversionPattern<onnx::GatherElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GatherElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dType = cast<RankedTensorType>(data.getType());
    RankedTensorType type = convertedResultType(*typeConverter, op);
    int64_t rank = dType.getRank(), axis = normAxis(op.getAxis(), rank);
    if (axis < 0 || axis >= rank || knownEmpty(dType))
      return unsupported(rewriter, op, "axis out of range or empty data");
    if (type.getRank() != rank)
      return unsupported(rewriter, op, "indices must have the data's rank");
    if (knownEmpty(type)) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    // Positions along other dims are the output's own, clamped where the
    // indices are larger than the data. (Where the indices have the data's
    // size, an empty data dim means nothing to read.)
    for (int64_t d = 0; d < rank; ++d)
      requireReadable(op, op.getData(), d, op.getIndices(), d);
    SmallVector<Value> dims = dimValues(rewriter, loc, data);
    SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{indices},
        ValueRange{emptyTensor(rewriter, loc, type, dynamicSizesOf(rewriter, loc, indices, all))},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank),
                            rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange a) {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(d == axis
                             ? clampedRuntimeIndex(b, l, a[0], dims[d])
                             : clampedPosition(b, l, linalg::IndexOp::create(b, l, d), dims[d]));
          linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, data, at).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct GatherNDPattern : public OpConversionPattern<onnx::GatherNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GatherNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dType = cast<RankedTensorType>(data.getType());
    auto iType = cast<RankedTensorType>(indices.getType());
    RankedTensorType type = convertedResultType(*typeConverter, op);
    int64_t r = dType.getRank(), q = iType.getRank(), bd = op.getBatchDims();
    if (q < 1 || iType.isDynamicDim(q - 1))
      return unsupported(rewriter, op, "the indices' last dim must be static");
    int64_t k = iType.getDimSize(q - 1);
    if (bd < 0 || bd + k > r || bd >= q || knownEmpty(dType) ||
        type.getRank() != q - 1 + r - bd - k)
      return unsupported(rewriter, op, "indices do not fit the data");
    if (knownEmpty(type)) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    // The batch dims are the indices' (clamped into the data's), the
    // indexed ones computed, the rest the data's own.
    for (int64_t d = 0; d < bd + k; ++d)
      requireReadable(op, op.getData(), d, d < bd ? op.getIndices() : Value(), d);
    SmallVector<Value> dims = dimValues(rewriter, loc, data);
    rewriter.replaceOp(op, generateTensor(
        rewriter, loc, type, [&](OpBuilder &b, Location l) -> Value {
          // Output dims: indices' leading q-1 dims (the first bd are the
          // batch dims), then data's dims after bd + k.
          SmallVector<Value> at, idxAt;
          for (int64_t d = 0; d < q - 1; ++d)
            idxAt.push_back(linalg::IndexOp::create(b, l, d));
          for (int64_t d = 0; d < bd; ++d)
            at.push_back(dType.getDimSize(d) == iType.getDimSize(d) && !dType.isDynamicDim(d)
                             ? idxAt[d]
                             : clampedPosition(b, l, idxAt[d], dims[d]));
          for (int64_t j = 0; j < k; ++j) {
            SmallVector<Value> ia(idxAt);
            ia.push_back(cidx(b, l, j));
            Value v = tensor::ExtractOp::create(b, l, indices, ia);
            at.push_back(clampedRuntimeIndex(b, l, v, dims[bd + j]));
          }
          for (int64_t d = bd + k; d < r; ++d)
            at.push_back(linalg::IndexOp::create(b, l, q - 1 + d - bd - k));
          return tensor::ExtractOp::create(b, l, data, at);
        }));
    return success();
  }
};

/// Combines an existing element with an update per Scatter's `reduction`.
Value scatterCombine(OpBuilder &b, Location l, StringRef reduction, Value old, Value upd,
                     bool isUnsigned) {
  bool f = isa<FloatType>(old.getType());
  if (reduction == "add")
    return f ? Value(arith::AddFOp::create(b, l, old, upd)) : Value(arith::AddIOp::create(b, l, old, upd));
  if (reduction == "mul")
    return f ? Value(arith::MulFOp::create(b, l, old, upd)) : Value(arith::MulIOp::create(b, l, old, upd));
  if (reduction == "max")
    return f ? Value(arith::MaximumFOp::create(b, l, old, upd))
             : isUnsigned ? Value(arith::MaxUIOp::create(b, l, old, upd))
                          : Value(arith::MaxSIOp::create(b, l, old, upd));
  if (reduction == "min")
    return f ? Value(arith::MinimumFOp::create(b, l, old, upd))
             : isUnsigned ? Value(arith::MinUIOp::create(b, l, old, upd))
                          : Value(arith::MinSIOp::create(b, l, old, upd));
  return upd;
}

/// Builds an scf.for nest over `sizes` carrying `init`; `body` gets the
/// induction variables and the carried tensor and returns the new one.
Value loopNest(OpBuilder &b, Location loc, ValueRange sizes, Value init,
               function_ref<Value(OpBuilder &, Location, ValueRange, Value)> body) {
  SmallVector<Value> lbs(sizes.size(), cidx(b, loc, 0)), steps(sizes.size(), cidx(b, loc, 1));
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, sizes, steps, ValueRange{init},
      [&](OpBuilder &nb, Location l, ValueRange ivs, ValueRange iter) -> scf::ValueVector {
        return {body(nb, l, ivs, iter[0])};
      });
  return nest.results[0];
}

/// The smaller of two sizes, folded where both are constants.
Value minSize(OpBuilder &b, Location loc, Value x, Value y) {
  std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  if (cx && cy)
    return cidx(b, loc, std::min(*cx, *cy));
  return arith::MinSIOp::create(b, loc, x, y);
}

struct ScatterElementsPattern : public OpConversionPattern<onnx::ScatterElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ScatterElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto dType = cast<RankedTensorType>(adaptor.getData().getType());
    auto iType = cast<RankedTensorType>(adaptor.getIndices().getType());
    auto uType = cast<RankedTensorType>(adaptor.getUpdates().getType());
    int64_t rank = dType.getRank(), axis = normAxis(op.getAxis(), rank);
    if (axis < 0 || axis >= rank || knownEmpty(dType))
      return unsupported(rewriter, op, "axis out of range or empty data");
    if (iType.getRank() != rank || uType.getRank() != rank)
      return unsupported(rewriter, op, "indices and updates must have the data's rank");
    for (int64_t d = 0; d < rank; ++d)
      if (!iType.isDynamicDim(d) && !uType.isDynamicDim(d) &&
          iType.getDimSize(d) != uType.getDimSize(d))
        return unsupported(rewriter, op, "indices and updates must have one shape");
    StringRef reduction = op.getReduction();
    bool isUnsigned = elementTypeOf(op.getData()).isUnsignedInteger();
    Value data = adaptor.getData(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    for (int64_t d = 0; d < rank; ++d)
      requireReadable(op, op.getData(), d, op.getUpdates(), d);
    SmallVector<Value> dims = dimValues(rewriter, loc, data);
    // Over the updates (and indices: the smaller where their sizes are
    // known only at run time).
    SmallVector<Value> sizes = dimValues(rewriter, loc, updates);
    SmallVector<Value> iSizes = dimValues(rewriter, loc, indices);
    for (int64_t d = 0; d < rank; ++d)
      sizes[d] = minSize(rewriter, loc, sizes[d], iSizes[d]);
    Value result = loopNest(
        rewriter, loc, sizes, data,
        [&](OpBuilder &b, Location l, ValueRange ivs, Value acc) -> Value {
          Value idx = tensor::ExtractOp::create(b, l, indices, ivs);
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(d == axis ? clampedRuntimeIndex(b, l, idx, dims[d])
                                   : clampedPosition(b, l, ivs[d], dims[d]));
          Value upd = tensor::ExtractOp::create(b, l, updates, ivs);
          Value old = tensor::ExtractOp::create(b, l, acc, at);
          return tensor::InsertOp::create(b, l, scatterCombine(b, l, reduction, old, upd, isUnsigned),
                                          acc, at);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ScatterNDPattern : public OpConversionPattern<onnx::ScatterNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ScatterNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto dType = cast<RankedTensorType>(adaptor.getData().getType());
    auto iType = cast<RankedTensorType>(adaptor.getIndices().getType());
    auto uType = cast<RankedTensorType>(adaptor.getUpdates().getType());
    int64_t r = dType.getRank(), q = iType.getRank();
    if (q < 1 || iType.isDynamicDim(q - 1))
      return unsupported(rewriter, op, "the indices' last dim must be static");
    int64_t k = iType.getDimSize(q - 1);
    if (k > r || knownEmpty(dType) || uType.getRank() != q - 1 + r - k)
      return unsupported(rewriter, op, "indices and updates do not fit the data");
    // updates' shape is indices.shape[:-1] + data.shape[k:].
    auto fits = [](int64_t a, int64_t b) {
      return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
    };
    for (int64_t d = 0; d < q - 1; ++d)
      if (!fits(uType.getDimSize(d), iType.getDimSize(d)))
        return unsupported(rewriter, op, "indices and updates do not fit the data");
    for (int64_t d = k; d < r; ++d)
      if (!fits(uType.getDimSize(q - 1 + d - k), dType.getDimSize(d)))
        return unsupported(rewriter, op, "indices and updates do not fit the data");
    StringRef reduction = op.getReduction();
    bool isUnsigned = elementTypeOf(op.getData()).isUnsignedInteger();
    Value data = adaptor.getData(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    for (int64_t d = 0; d < k; ++d)
      requireReadable(op, op.getData(), d);
    SmallVector<Value> dims = dimValues(rewriter, loc, data);
    // Over the updates, bounded by the indices and the data where their
    // sizes are known only at run time.
    SmallVector<Value> sizes = dimValues(rewriter, loc, updates);
    SmallVector<Value> iSizes = dimValues(rewriter, loc, indices);
    for (int64_t d = 0; d < q - 1; ++d)
      sizes[d] = minSize(rewriter, loc, sizes[d], iSizes[d]);
    for (int64_t d = k; d < r; ++d)
      sizes[q - 1 + d - k] = minSize(rewriter, loc, sizes[q - 1 + d - k], dims[d]);
    Value result = loopNest(
        rewriter, loc, sizes, data,
        [&](OpBuilder &b, Location l, ValueRange ivs, Value acc) -> Value {
          SmallVector<Value> at;
          for (int64_t j = 0; j < k; ++j) {
            SmallVector<Value> ia(ivs.take_front(q - 1));
            ia.push_back(cidx(b, l, j));
            Value v = tensor::ExtractOp::create(b, l, indices, ia);
            at.push_back(clampedRuntimeIndex(b, l, v, dims[j]));
          }
          for (int64_t d = k; d < r; ++d)
            at.push_back(ivs[q - 1 + d - k]);
          Value upd = tensor::ExtractOp::create(b, l, updates, ivs);
          Value old = tensor::ExtractOp::create(b, l, acc, at);
          return tensor::InsertOp::create(b, l, scatterCombine(b, l, reduction, old, upd, isUnsigned),
                                          acc, at);
        });
    rewriter.replaceOp(op, result);
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
                  ? cidx(rewriter, loc, 0)
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
    int64_t rank = type.getRank(), axis = normAxis(op.getAxis(), rank);
    if (axis < 0 || axis >= rank)
      return unsupported(rewriter, op, "axis out of range");
    auto vType = cast<RankedTensorType>(adaptor.getValues().getType());
    if (!vType.hasStaticShape() || vType.getNumElements() != 2)
      return unsupported(rewriter, op, "values must hold two elements");
    if (type.isDynamicDim(axis))
      return unsupported(rewriter, op, "a depth known only at run time");
    Value off = tensor::ExtractOp::create(rewriter, loc, adaptor.getValues(),
                                          ValueRange{cidx(rewriter, loc, 0)});
    Value on = tensor::ExtractOp::create(rewriter, loc, adaptor.getValues(),
                                         ValueRange{cidx(rewriter, loc, 1)});
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
      Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, diff, cidx(b, l, k));
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
                                      cidx(rewriter, loc, 0));
    axis = arith::SelectOp::create(rewriter, loc, neg,
                                   arith::AddIOp::create(rewriter, loc, axis, cidx(rewriter, loc, rank)),
                                   axis);
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
          Value i = cidx(b, l, 0), size = cidx(b, l, 0);
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            Value isAxis = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, axis, cidx(b, l, d));
            Value id = linalg::IndexOp::create(b, l, d);
            i = arith::SelectOp::create(b, l, isAxis, id, i);
            size = arith::SelectOp::create(b, l, isAxis, cidx(b, l, type.getDimSize(d)), size);
            Value pos = arith::SelectOp::create(b, l, isAxis, j, id);
            at.push_back(arith::MinSIOp::create(b, l, pos, cidx(b, l, type.getDimSize(d) - 1)));
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
    int64_t axis = normAxis((*axisVals)[0], rank);
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
/// x[b, t] (batch and time axes 0/1).
struct ReverseSequencePattern : public OpConversionPattern<onnx::ReverseSequenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ReverseSequenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), lens = adaptor.getSequenceLens();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), ba = op.getBatchAxis(), ta = op.getTimeAxis();
    if (rank < 2 || ba == ta || ba < 0 || ba > 1 || ta < 0 || ta > 1 ||
        type.getNumElements() == 0)
      return unsupported(rewriter, op, "batch_axis and time_axis must be 0 and 1");
    int64_t steps = type.getDimSize(ta);
    rewriter.replaceOp(op, generateTensor(
        rewriter, loc, type, [&](OpBuilder &b, Location l) -> Value {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(linalg::IndexOp::create(b, l, d));
          Value len = tensor::ExtractOp::create(b, l, lens, ValueRange{at[ba]});
          len = arith::IndexCastOp::create(b, l, b.getIndexType(), len);
          len = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, len, cidx(b, l, 0)),
                                       cidx(b, l, steps));
          Value t = at[ta];
          Value rev = arith::SubIOp::create(b, l, arith::SubIOp::create(b, l, len, cidx(b, l, 1)), t);
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
               HardmaxPattern, GatherElementsPattern, GatherNDPattern,
               ScatterElementsPattern, ScatterNDPattern, TriluPattern, OneHotPattern,
               EyeLikePattern, RangePattern, CumSumPattern, DepthToSpacePattern,
               SpaceToDepthPattern, WindowPattern<onnx::HannWindowOp>,
               WindowPattern<onnx::HammingWindowOp>, WindowPattern<onnx::BlackmanWindowOp>,
               ReverseSequencePattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
