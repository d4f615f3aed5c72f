//===- Selection.cpp - TopK, Compress, NonZero, NMS -> linalg + scf -------===//
//
// Ops whose output size depends on data in general. kiln compiles them when
// the output shape is static: TopK's K, and the number of elements Compress
// and NonZero select, are then the model's declared (or pinned) output
// dims (NonMaxSuppression's selected count likewise). At run time the
// selection fills the output in order; should the
// data select fewer elements the rest stays zero, and selections beyond
// the static size are dropped (never written out of bounds).
//
//   - TopK ranks every element within its row (how many elements come
//     before it: larger, or equal at a lower index) in one generic, then
//     gathers the elements of rank 0..K-1 in a second one.
//   - Compress and NonZero walk the input once in an scf.for, carrying the
//     count selected so far and inserting each selected slice or
//     coordinate at that position.
//   - NonMaxSuppression runs the greedy selection per batch and class in
//     scf.for loops over a tensor of suppressed flags.
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
    // NaN counts as larger than every number, so the order stays total.
    strict = arith::CmpFOp::create(b, l, largest ? arith::CmpFPredicate::OGT
                                                 : arith::CmpFPredicate::OLT, xj, xi);
    Value nanJ = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, xj, xj);
    Value nanI = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, xi, xi);
    Value one = arith::ConstantIntOp::create(b, l, 1, 1);
    Value nanFirst = largest ? arith::AndIOp::create(b, l, nanJ, arith::XOrIOp::create(b, l, nanI, one))
                             : arith::AndIOp::create(b, l, nanI, arith::XOrIOp::create(b, l, nanJ, one));
    strict = arith::OrIOp::create(b, l, strict, nanFirst);
    equal = arith::OrIOp::create(b, l,
                                 arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, xj, xi),
                                 arith::AndIOp::create(b, l, nanJ, nanI));
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

/// The first element of a one-element tensor (rank 0 or 1), or `fallback`
/// when the optional operand is absent.
Value scalarOperand(OpBuilder &b, Location l, Value orig, Value conv, Value fallback) {
  if (onnx::isNone(orig))
    return fallback;
  auto type = cast<RankedTensorType>(conv.getType());
  SmallVector<Value> zeros(type.getRank(), arith::ConstantIndexOp::create(b, l, 0));
  return tensor::ExtractOp::create(b, l, conv, zeros);
}

/// One box as (ymin, xmin, ymax, xmax), from corners in either order or
/// from (x_center, y_center, width, height).
std::array<Value, 4> boxCorners(OpBuilder &b, Location l, Value boxes, Value batch, Value i,
                                bool centerPoint) {
  std::array<Value, 4> v;
  for (int64_t k = 0; k < 4; ++k)
    v[k] = tensor::ExtractOp::create(
        b, l, boxes, ValueRange{batch, i, arith::ConstantIndexOp::create(b, l, k)});
  if (centerPoint) {
    Value half = scalarConstant(b, l, b.getF32Type(), 0.5);
    Value hw = arith::MulFOp::create(b, l, v[2], half), hh = arith::MulFOp::create(b, l, v[3], half);
    return {arith::SubFOp::create(b, l, v[1], hh), arith::SubFOp::create(b, l, v[0], hw),
            arith::AddFOp::create(b, l, v[1], hh), arith::AddFOp::create(b, l, v[0], hw)};
  }
  return {arith::MinimumFOp::create(b, l, v[0], v[2]), arith::MinimumFOp::create(b, l, v[1], v[3]),
          arith::MaximumFOp::create(b, l, v[0], v[2]), arith::MaximumFOp::create(b, l, v[1], v[3])};
}

/// IoU(p, q) > threshold; boxes without area never suppress.
Value overlapsMore(OpBuilder &b, Location l, const std::array<Value, 4> &p,
                   const std::array<Value, 4> &q, Value threshold) {
  Value zero = scalarConstant(b, l, b.getF32Type(), 0);
  auto sub = [&](Value x, Value y) { return arith::SubFOp::create(b, l, x, y); };
  auto mul = [&](Value x, Value y) { return arith::MulFOp::create(b, l, x, y); };
  auto gt = [&](Value x, Value y) {
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, y);
  };
  Value ih = arith::MaximumFOp::create(
      b, l, zero, sub(arith::MinimumFOp::create(b, l, p[2], q[2]),
                      arith::MaximumFOp::create(b, l, p[0], q[0])));
  Value iw = arith::MaximumFOp::create(
      b, l, zero, sub(arith::MinimumFOp::create(b, l, p[3], q[3]),
                      arith::MaximumFOp::create(b, l, p[1], q[1])));
  Value inter = mul(ih, iw);
  Value areaP = mul(sub(p[2], p[0]), sub(p[3], p[1]));
  Value areaQ = mul(sub(q[2], q[0]), sub(q[3], q[1]));
  Value uni = sub(arith::AddFOp::create(b, l, areaP, areaQ), inter);
  Value ok = arith::AndIOp::create(b, l, gt(inter, zero), gt(areaP, zero));
  ok = arith::AndIOp::create(b, l, ok, gt(areaQ, zero));
  ok = arith::AndIOp::create(b, l, ok, gt(uni, zero));
  // Divide by a safe union; the flags above discard the value otherwise.
  Value safeUnion = arith::SelectOp::create(b, l, ok, uni, scalarConstant(b, l, b.getF32Type(), 1));
  return arith::AndIOp::create(b, l, ok, gt(arith::DivFOp::create(b, l, inter, safeUnion), threshold));
}

/// NonMaxSuppression, greedily per batch and class: repeatedly select the
/// best-scoring box above score_threshold that is not suppressed (ties to
/// the lower index), up to max_output_boxes_per_class, suppressing every
/// box whose IoU with it exceeds iou_threshold. Selections are written in
/// (batch, class, selection) order into the static [count, 3] result.
struct NonMaxSuppressionPattern : public OpConversionPattern<onnx::NonMaxSuppressionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::NonMaxSuppressionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value boxes = adaptor.getBoxes(), scores = adaptor.getScores();
    auto bType = cast<RankedTensorType>(boxes.getType());
    auto sType = cast<RankedTensorType>(scores.getType());
    if (bType.getRank() != 3 || bType.getDimSize(2) != 4 || sType.getRank() != 3 ||
        sType.getDimSize(0) != bType.getDimSize(0) || sType.getDimSize(2) != bType.getDimSize(1))
      return unsupported(rewriter, op, "boxes must be [B, N, 4] and scores [B, C, N]");
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    if (yType.getRank() != 2 || yType.getDimSize(1) != 3)
      return unsupported(rewriter, op, "the result must be [count, 3]");
    int64_t batches = bType.getDimSize(0), classes = sType.getDimSize(1),
            n = bType.getDimSize(1), capacity = yType.getDimSize(0);
    bool centerPoint = op.getCenterPointBox() != 0;
    Type f32 = rewriter.getF32Type(), i64 = rewriter.getI64Type(), i1 = rewriter.getI1Type();
    auto idx = [&](OpBuilder &b, Location l, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, l, v);
    };
    Value maxOut = scalarOperand(rewriter, loc, op.getMaxOutputBoxesPerClass(),
                                 adaptor.getMaxOutputBoxesPerClass(),
                                 scalarConstant(rewriter, loc, i64, 0));
    Value iouThr = scalarOperand(rewriter, loc, op.getIouThreshold(), adaptor.getIouThreshold(),
                                 scalarConstant(rewriter, loc, f32, 0));
    Value scoreThr = scalarOperand(rewriter, loc, op.getScoreThreshold(),
                                   adaptor.getScoreThreshold(),
                                   scalarConstant(rewriter, loc, f32, -INFINITY));
    bool hasScoreThr = !onnx::isNone(op.getScoreThreshold());
    Value init = filledTensor(rewriter, loc, yType, scalarConstant(rewriter, loc, i64, 0));
    auto flagsType = RankedTensorType::get({n}, i1);

    // for b, c: carried (count, result).
    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, ValueRange{idx(rewriter, loc, 0), idx(rewriter, loc, 0)},
        ValueRange{idx(rewriter, loc, batches), idx(rewriter, loc, classes)},
        ValueRange{idx(rewriter, loc, 1), idx(rewriter, loc, 1)},
        ValueRange{idx(rewriter, loc, 0), init},
        [&](OpBuilder &b, Location l, ValueRange bc, ValueRange outer) -> scf::ValueVector {
          Value batch = bc[0], cls = bc[1];
          Value suppressed = filledTensor(b, l, flagsType, arith::ConstantIntOp::create(b, l, 0, 1));
          // Up to N rounds, each selecting at most one box.
          auto rounds = scf::ForOp::create(
              b, l, idx(b, l, 0), idx(b, l, n), idx(b, l, 1),
              ValueRange{outer[0], outer[1], suppressed, scalarConstant(b, l, i64, 0)},
              [&](OpBuilder &rb, Location rl, Value, ValueRange st) {
                Value count = st[0], result = st[1], flags = st[2], taken = st[3];
                // The best candidate: (index, score, found).
                auto best = scf::ForOp::create(
                    rb, rl, idx(rb, rl, 0), idx(rb, rl, n), idx(rb, rl, 1),
                    ValueRange{idx(rb, rl, 0), scalarConstant(rb, rl, f32, 0),
                               arith::ConstantIntOp::create(rb, rl, 0, 1)},
                    [&](OpBuilder &cb, Location cl, Value i, ValueRange acc) {
                      Value s = tensor::ExtractOp::create(cb, cl, scores, ValueRange{batch, cls, i});
                      Value live = arith::XOrIOp::create(
                          cb, cl, tensor::ExtractOp::create(cb, cl, flags, i),
                          arith::ConstantIntOp::create(cb, cl, 1, 1));
                      Value above = arith::CmpFOp::create(
                          cb, cl, hasScoreThr ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::ORD,
                          s, hasScoreThr ? scoreThr : s);
                      Value better = arith::CmpFOp::create(cb, cl, arith::CmpFPredicate::OGT, s, acc[1]);
                      Value first = arith::XOrIOp::create(cb, cl, acc[2],
                                                          arith::ConstantIntOp::create(cb, cl, 1, 1));
                      Value take = arith::AndIOp::create(
                          cb, cl, arith::AndIOp::create(cb, cl, live, above),
                          arith::OrIOp::create(cb, cl, first, better));
                      scf::YieldOp::create(
                          cb, cl,
                          ValueRange{arith::SelectOp::create(cb, cl, take, i, acc[0]),
                                     arith::SelectOp::create(cb, cl, take, s, acc[1]),
                                     arith::OrIOp::create(cb, cl, acc[2], take)});
                    });
                Value chosen = best.getResult(0);
                Value room = arith::CmpIOp::create(rb, rl, arith::CmpIPredicate::slt, taken, maxOut);
                Value select = arith::AndIOp::create(rb, rl, best.getResult(2), room);
                auto branch = scf::IfOp::create(
                    rb, rl, select,
                    [&](OpBuilder &tb, Location tl) {
                      // Record (b, c, i) if the result has room.
                      Value fits = arith::CmpIOp::create(tb, tl, arith::CmpIPredicate::ult, count,
                                                         idx(tb, tl, capacity));
                      auto write = scf::IfOp::create(
                          tb, tl, fits,
                          [&](OpBuilder &wb, Location wl) {
                            Value r = result;
                            Value vals[3] = {batch, cls, chosen};
                            for (int64_t k = 0; k < 3; ++k)
                              r = tensor::InsertOp::create(
                                  wb, wl, arith::IndexCastOp::create(wb, wl, i64, vals[k]), r,
                                  ValueRange{count, idx(wb, wl, k)});
                            scf::YieldOp::create(wb, wl, r);
                          },
                          [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, result); });
                      // Suppress the chosen box and every box overlapping it.
                      std::array<Value, 4> p = boxCorners(tb, tl, boxes, batch, chosen, centerPoint);
                      auto sweep = scf::ForOp::create(
                          tb, tl, idx(tb, tl, 0), idx(tb, tl, n), idx(tb, tl, 1), ValueRange{flags},
                          [&](OpBuilder &sb, Location sl, Value j, ValueRange f) {
                            std::array<Value, 4> q = boxCorners(sb, sl, boxes, batch, j, centerPoint);
                            Value same = arith::CmpIOp::create(sb, sl, arith::CmpIPredicate::eq, j, chosen);
                            Value hit = arith::OrIOp::create(sb, sl, same,
                                                             overlapsMore(sb, sl, p, q, iouThr));
                            Value old = tensor::ExtractOp::create(sb, sl, f[0], j);
                            Value now = arith::OrIOp::create(sb, sl, old, hit);
                            scf::YieldOp::create(sb, sl,
                                                 Value(tensor::InsertOp::create(sb, sl, now, f[0], j)));
                          });
                      Value one = idx(tb, tl, 1);
                      scf::YieldOp::create(
                          tb, tl,
                          ValueRange{arith::AddIOp::create(tb, tl, count, one), write.getResult(0),
                                     sweep.getResult(0),
                                     arith::AddIOp::create(tb, tl, taken,
                                                           scalarConstant(tb, tl, i64, 1))});
                    },
                    [&](OpBuilder &eb, Location el) {
                      scf::YieldOp::create(eb, el, ValueRange{count, result, flags, taken});
                    });
                scf::YieldOp::create(rb, rl, branch.getResults());
              });
          return {rounds.getResult(0), rounds.getResult(1)};
        });
    rewriter.replaceOp(op, nest.results[1]);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateSelectionPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TopKPattern, CompressPattern, NonZeroPattern, NonMaxSuppressionPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
