//===- Selection.cpp - TopK, Compress, NonZero -> linalg + scf ------------===//
//
// Ops whose output size depends on data in general. kiln compiles them when
// the output shape is static: TopK's K, and the number of elements Compress
// and NonZero select, are then the model's declared (or pinned) output
// dims. At run time the selection fills the output in order; should the
// data select fewer elements the rest stays zero, and selections beyond
// the static size are dropped (never written out of bounds).
//
//   - TopK ranks every element within its row (how many elements come
//     before it: larger, or equal at a lower index) in one generic, then
//     gathers the elements of rank 0..K-1 in a second one.
//   - Compress and NonZero walk the input once in an scf.for, carrying the
//     count selected so far and inserting each selected slice or
//     coordinate at that position.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

/// x != 0 for a bool, integer or float scalar.
Value isNonZero(OpBuilder &b, Location l, Value x) {
  if (isa<FloatType>(x.getType()))
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, x,
                                 scalarConstant(b, l, x.getType(), 0));
  return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, x,
                               scalarConstant(b, l, x.getType(), 0));
}

/// x[j] before x[i] in TopK order: strictly larger (smaller with
/// largest=0), ties to the lower index.
Value comesBefore(OpBuilder &b, Location l, Value xj, Value xi, Value j, Value i,
                  bool largest, bool isUnsigned) {
  Value strict, equal;
  if (isa<FloatType>(xi.getType())) {
    strict = arith::CmpFOp::create(b, l, largest ? arith::CmpFPredicate::OGT
                                                 : arith::CmpFPredicate::OLT, xj, xi);
    equal = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, xj, xi);
  } else {
    arith::CmpIPredicate p = largest ? (isUnsigned ? arith::CmpIPredicate::ugt
                                                   : arith::CmpIPredicate::sgt)
                                     : (isUnsigned ? arith::CmpIPredicate::ult
                                                   : arith::CmpIPredicate::slt);
    strict = arith::CmpIOp::create(b, l, p, xj, xi);
    equal = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, xj, xi);
  }
  Value lower = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, j, i);
  return arith::OrIOp::create(b, l, strict, arith::AndIOp::create(b, l, equal, lower));
}

/// The identity map over `rank` dims of a `rank + 1`-dim loop nest, with
/// dim `axis` replaced by the extra (last) loop.
AffineMap alongExtraLoop(MLIRContext *ctx, int64_t rank, int64_t axis) {
  SmallVector<AffineExpr> e;
  for (int64_t d = 0; d < rank; ++d)
    e.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
  return AffineMap::get(rank + 1, 0, e, ctx);
}

struct TopKPattern : public OpConversionPattern<onnx::TopKOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem) && !isSupportedInt(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return unsupported(rewriter, op, "axis out of range");
    RankedTensorType vType = convertedResultType(*typeConverter, op, 0);
    RankedTensorType iType = convertedResultType(*typeConverter, op, 1);
    if (vType.getDimSize(axis) > xType.getDimSize(axis))
      return unsupported(rewriter, op, "K is larger than the axis");
    bool largest = op.getLargest() != 0;
    bool isUnsigned = elem.isUnsignedInteger();
    MLIRContext *ctx = rewriter.getContext();
    Type i64 = rewriter.getI64Type();

    // rank[..., i, ...] = #{j : x[..., j, ...] comes before x[..., i, ...]}.
    auto rankType = xType.clone(i64);
    Value zero = filledTensor(rewriter, loc, rankType, scalarConstant(rewriter, loc, i64, 0));
    SmallVector<utils::IteratorType> iters(rank + 1, utils::IteratorType::parallel);
    iters[rank] = utils::IteratorType::reduction;
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank);
    Value ranks =
        linalg::GenericOp::create(
            rewriter, loc, rankType, ValueRange{x, x}, ValueRange{zero},
            ArrayRef<AffineMap>{id, alongExtraLoop(ctx, rank, axis), id}, iters,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value i = linalg::IndexOp::create(b, l, axis);
              Value j = linalg::IndexOp::create(b, l, rank);
              Value before = comesBefore(b, l, a[1], a[0], j, i, largest, isUnsigned);
              Value inc = arith::ExtUIOp::create(b, l, i64, before);
              linalg::YieldOp::create(b, l, Value(arith::AddIOp::create(b, l, a[2], inc)));
            })
            .getResult(0);

    // values[..., k, ...] = the x of rank k; indices likewise.
    Value vInit = filledTensor(rewriter, loc, vType,
                               scalarConstant(rewriter, loc, vType.getElementType(), 0));
    Value iInit = filledTensor(rewriter, loc, iType, scalarConstant(rewriter, loc, i64, 0));
    AffineMap byI = alongExtraLoop(ctx, rank, axis);
    auto gather = linalg::GenericOp::create(
        rewriter, loc, TypeRange{vType, iType}, ValueRange{ranks, x}, ValueRange{vInit, iInit},
        ArrayRef<AffineMap>{byI, byI, id, id}, iters,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value k = arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, axis));
          Value i = arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, rank));
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[0], k);
          linalg::YieldOp::create(b, l,
                                  ValueRange{arith::SelectOp::create(b, l, hit, a[1], a[2]),
                                             arith::SelectOp::create(b, l, hit, i, a[3])});
        });
    rewriter.replaceOp(op, gather.getResults());
    return success();
  }
};

/// `dest` with the slice of `src` at index `from` of dim `axis` written at
/// index `to` of that dim.
Value copySliceAlong(OpBuilder &b, Location l, Value src, Value dest, int64_t axis,
                     Value from, Value to) {
  auto sType = cast<RankedTensorType>(src.getType());
  int64_t rank = sType.getRank();
  SmallVector<int64_t> shape(sType.getShape());
  shape[axis] = 1;
  auto sliceType = sType.clone(shape);
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  for (int64_t s : shape)
    sizes.push_back(b.getIndexAttr(s));
  offsets[axis] = from;
  Value slice = tensor::ExtractSliceOp::create(b, l, sliceType, src, offsets, sizes, strides);
  offsets[axis] = to;
  return tensor::InsertSliceOp::create(b, l, slice, dest, offsets, sizes, strides);
}

struct CompressPattern : public OpConversionPattern<onnx::CompressOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::CompressOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), cond = adaptor.getCondition();
    auto xType = cast<RankedTensorType>(x.getType());
    auto cType = cast<RankedTensorType>(cond.getType());
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    int64_t axis = 0;
    if (auto a = op.getAxis()) {
      axis = *a < 0 ? *a + xType.getRank() : *a;
      if (axis < 0 || axis >= xType.getRank())
        return unsupported(rewriter, op, "axis out of range");
    } else {
      x = reshapeTensor(rewriter, loc, x,
                        RankedTensorType::get({xType.getNumElements()}, xType.getElementType()));
      xType = cast<RankedTensorType>(x.getType());
    }
    if (cType.getRank() != 1)
      return unsupported(rewriter, op, "condition must be 1-D");
    int64_t n = std::min(cType.getDimSize(0), xType.getDimSize(axis));
    int64_t capacity = yType.getDimSize(axis);
    Value init = filledTensor(rewriter, loc, yType,
                              scalarConstant(rewriter, loc, yType.getElementType(), 0));
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, c0, arith::ConstantIndexOp::create(rewriter, loc, n), c1,
        ValueRange{c0, init}, [&](OpBuilder &b, Location l, Value i, ValueRange state) {
          Value count = state[0], y = state[1];
          Value keep = tensor::ExtractOp::create(b, l, cond, i);
          Value room = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, count,
                                             arith::ConstantIndexOp::create(b, l, capacity));
          Value write = arith::AndIOp::create(b, l, keep, room);
          auto branch = scf::IfOp::create(
              b, l, write,
              [&](OpBuilder &tb, Location tl) {
                scf::YieldOp::create(tb, tl, copySliceAlong(tb, tl, x, y, axis, i, count));
              },
              [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, y); });
          Value next = arith::AddIOp::create(
              b, l, count, arith::IndexCastOp::create(
                               b, l, b.getIndexType(),
                               arith::ExtUIOp::create(b, l, b.getI64Type(), keep)));
          scf::YieldOp::create(b, l, ValueRange{next, branch.getResult(0)});
        });
    rewriter.replaceOp(op, loop.getResult(1));
    return success();
  }
};

struct NonZeroPattern : public OpConversionPattern<onnx::NonZeroOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::NonZeroOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem) && !isSupportedInt(elem) && !isBool(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank(), total = xType.getNumElements();
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    if (yType.getRank() != 2 || yType.getDimSize(0) != std::max<int64_t>(rank, 1))
      return unsupported(rewriter, op, "the result must be [rank, count]");
    int64_t capacity = yType.getDimSize(1);
    Value flat = reshapeTensor(rewriter, loc, x,
                               RankedTensorType::get({total}, xType.getElementType()));
    Type i64 = rewriter.getI64Type();
    Value init = filledTensor(rewriter, loc, yType, scalarConstant(rewriter, loc, i64, 0));
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, c0, arith::ConstantIndexOp::create(rewriter, loc, total), c1,
        ValueRange{c0, init}, [&](OpBuilder &b, Location l, Value i, ValueRange state) {
          Value count = state[0], y = state[1];
          Value nz = isNonZero(b, l, tensor::ExtractOp::create(b, l, flat, i));
          Value room = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, count,
                                             arith::ConstantIndexOp::create(b, l, capacity));
          auto branch = scf::IfOp::create(
              b, l, arith::AndIOp::create(b, l, nz, room),
              [&](OpBuilder &tb, Location tl) {
                // Row-major coordinates of flat index i.
                Value out = y, rest = i;
                for (int64_t d = rank - 1; d >= 0; --d) {
                  Value size = arith::ConstantIndexOp::create(tb, tl, xType.getDimSize(d));
                  Value coord = arith::RemUIOp::create(tb, tl, rest, size);
                  rest = arith::DivUIOp::create(tb, tl, rest, size);
                  out = tensor::InsertOp::create(
                      tb, tl, arith::IndexCastOp::create(tb, tl, i64, coord), out,
                      ValueRange{arith::ConstantIndexOp::create(tb, tl, d), count});
                }
                scf::YieldOp::create(tb, tl, out);
              },
              [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, y); });
          Value next = arith::AddIOp::create(
              b, l, count, arith::IndexCastOp::create(
                               b, l, b.getIndexType(), arith::ExtUIOp::create(b, l, i64, nz)));
          scf::YieldOp::create(b, l, ValueRange{next, branch.getResult(0)});
        });
    rewriter.replaceOp(op, loop.getResult(1));
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateSelectionPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TopKPattern, CompressPattern, NonZeroPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
