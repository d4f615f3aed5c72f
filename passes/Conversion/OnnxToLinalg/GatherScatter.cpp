//===- GatherScatter.cpp - Gather*/Scatter* -> linalg and scf --------------===//
//
// GatherElements and GatherND read the data with tensor.extract at a
// computed index inside a generic; ScatterElements and ScatterND copy the
// data and insert the updates in an scf.for nest (in order, so that
// repeated indices combine per `reduction`). Every index read from data is
// normalised (negative counts from the end) and clamped into the tensor;
// positions along the other dims are clamped where the indices are larger
// than the data.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

/// Each dim of `v` as an index value (a constant where static).
SmallVector<Value> dimValues(OpBuilder &b, Location loc, Value v) {
  SmallVector<Value> dims;
  for (int64_t d = 0; d < cast<RankedTensorType>(v.getType()).getRank(); ++d)
    dims.push_back(dimValue(b, loc, v, d));
  return dims;
}

/// min(i, size - 1): a position read along a dim that the loop's own dim
/// may exceed.
Value clampedPosition(OpBuilder &b, Location loc, Value i, Value size) {
  if (std::optional<int64_t> c = getConstantIntValue(size))
    return arith::MinSIOp::create(b, loc, i, indexConstant(b, loc, *c - 1));
  Value last = arith::SubIOp::create(b, loc, size, indexConstant(b, loc, 1));
  return arith::MinSIOp::create(b, loc, i, last);
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

struct GatherElementsPattern : public OpConversionPattern<onnx::GatherElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GatherElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dType = cast<RankedTensorType>(data.getType());
    RankedTensorType type = convertedResultType(*typeConverter, op);
    int64_t rank = dType.getRank(), axis = normalizedAxis(op.getAxis(), rank);
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
            ia.push_back(indexConstant(b, l, j));
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
  SmallVector<Value> lbs(sizes.size(), indexConstant(b, loc, 0)),
      steps(sizes.size(), indexConstant(b, loc, 1));
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
    return indexConstant(b, loc, std::min(*cx, *cy));
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
    int64_t rank = dType.getRank(), axis = normalizedAxis(op.getAxis(), rank);
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
            ia.push_back(indexConstant(b, l, j));
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

} // namespace

namespace kiln::lowering {
void populateGatherScatterPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<GatherElementsPattern, GatherNDPattern, ScatterElementsPattern,
               ScatterNDPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
