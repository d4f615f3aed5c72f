//===- Selection.cpp - TopK, Compress, NonZero, NMS, Unique -> linalg/scf -===//
//
// Ops whose output size depends on data in general. kiln compiles them when
// the output shape is static: TopK's K, and the number of elements Compress
// and NonZero select, are then the model's declared (or pinned) output
// dims (NonMaxSuppression's selected count and Unique's count likewise). At run time the
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
    if (vType.isDynamicDim(axis))
      return unsupported(rewriter, op, "a K known only at run time");
    int64_t k = vType.getDimSize(axis);
    if (!xType.isDynamicDim(axis) && k > xType.getDimSize(axis))
      return unsupported(rewriter, op, "K is larger than the axis");
    // Over a dynamic axis the entry point refuses sizes below K where the
    // axis is an expression of the model's dims; elsewhere the positions
    // past its end stay 0.
    if (xType.isDynamicDim(axis))
      if (std::optional<SmallVector<int64_t>> expr = dimExpr(op.getX(), axis)) {
        (*expr)[0] -= k;
        requireNonNegative(op, *expr);
      }
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && (vType.getDimSize(d) != xType.getDimSize(d) ||
                        iType.getShape() != vType.getShape()))
        return unsupported(rewriter, op, "Values and Indices must match X but along the axis");
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
    if (yType.getRank() != xType.getRank())
      return unsupported(rewriter, op, "the output must have the input's rank");
    for (int64_t d = 0; d < xType.getRank(); ++d)
      if (d != axis && yType.getDimSize(d) != xType.getDimSize(d))
        return unsupported(rewriter, op, "the output must match the input but along the axis");
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
                scf::YieldOp::create(tb, tl, insertSliceAt(tb, tl, extractSliceAt(tb, tl, x, axis, i), y, axis, count));
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

/// Unique over items: the elements of X (no axis) or its slices along
/// `axis`, as rows of Z [n, m]. In scf loops:
///   1. in order, an item equal to an earlier one takes that one's id;
///      otherwise it gets the next id and is that id's first occurrence;
///   2. sorted=1 ranks the first occurrences lexicographically (the rank
///      of u = how many are smaller); sorted=0 keeps first-occurrence order;
///   3. Y, indices, inverse_indices and counts are written by rank.
/// The number of unique items is the declared (static) size of Y.
struct UniquePattern : public OpConversionPattern<onnx::UniqueOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::UniqueOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem) && !isSupportedInt(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    for (Value r : op->getResults())
      if (!isa<NoneType>(r.getType()) && !isStaticTensor(r.getType()))
        return unsupported(rewriter, op, "results must have static (declared) shapes");
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    Type et = xType.getElementType();
    int64_t rank = xType.getRank();
    std::optional<int64_t> axis;
    if (auto a = op.getAxis()) {
      int64_t v = *a < 0 ? *a + rank : *a;
      if (v < 0 || v >= rank)
        return unsupported(rewriter, op, "axis out of range");
      axis = v;
    }
    // Z [n, m]: the items as rows.
    SmallVector<int64_t> perm;
    int64_t n = axis ? xType.getDimSize(*axis) : xType.getNumElements();
    int64_t m = axis ? xType.getNumElements() / std::max<int64_t>(n, 1) : 1;
    Value z = x;
    if (axis) {
      perm.push_back(*axis);
      for (int64_t d = 0; d < rank; ++d)
        if (d != *axis)
          perm.push_back(d);
      z = transposeTensor(rewriter, loc, x, perm);
    }
    z = reshapeTensor(rewriter, loc, z, RankedTensorType::get({n, m}, et));
    RankedTensorType yType = convertedResultType(*typeConverter, op, 0);
    if (yType.getRank() != (axis ? rank : 1))
      return unsupported(rewriter, op, "Y must have X's rank (with an axis) or be 1-D");
    int64_t u = axis ? yType.getDimSize(*axis) : yType.getNumElements();
    if (axis)
      for (int64_t d = 0; d < rank; ++d)
        if (d != *axis && yType.getDimSize(d) != xType.getDimSize(d))
          return unsupported(rewriter, op, "Y must match X in every dim but the axis");
    for (unsigned i = 1; i < 4; ++i) {
      Type t = op->getResult(i).getType();
      int64_t want = i == 2 ? n : u;
      if (!isa<NoneType>(t) && cast<RankedTensorType>(t).getNumElements() != want)
        return unsupported(rewriter, op, "indices and counts must have one element per unique "
                                         "item, inverse_indices one per input item");
    }
    if (n == 0 || u == 0)
      return unsupported(rewriter, op, "empty inputs are not supported");
    bool sorted = op.getSorted() != 0;
    bool isFloat = isa<FloatType>(et), isUnsigned = elem.isUnsignedInteger();
    Type i64 = rewriter.getI64Type();
    auto idx = [](OpBuilder &b, Location l, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, l, v);
    };
    auto i64c = [&](OpBuilder &b, Location l, int64_t v) { return scalarConstant(b, l, i64, v); };
    auto at = [&](OpBuilder &b, Location l, Value t, ValueRange ix) -> Value {
      return tensor::ExtractOp::create(b, l, t, ix);
    };
    auto toIndex = [&](OpBuilder &b, Location l, Value v) -> Value {
      return arith::IndexCastOp::create(b, l, b.getIndexType(), v);
    };
    auto toI64 = [&](OpBuilder &b, Location l, Value v) -> Value {
      return arith::IndexCastOp::create(b, l, i64, v);
    };
    auto cmp = [&](OpBuilder &b, Location l, bool less, Value p, Value q) -> Value {
      if (isFloat)
        return arith::CmpFOp::create(b, l, less ? arith::CmpFPredicate::OLT
                                                : arith::CmpFPredicate::OEQ, p, q);
      return arith::CmpIOp::create(b, l, less ? (isUnsigned ? arith::CmpIPredicate::ult
                                                            : arith::CmpIPredicate::slt)
                                              : arith::CmpIPredicate::eq, p, q);
    };
    // Row i == row j.
    auto equalRows = [&](OpBuilder &b, Location l, Value i, Value j) -> Value {
      return forLoop(b, l, idx(b, l, 0), idx(b, l, m),
                     ValueRange{arith::ConstantIntOp::create(b, l, 1, 1)},
                     [&](OpBuilder &nb, Location nl, Value k, ValueRange s) -> SmallVector<Value> {
                       Value eq = cmp(nb, nl, false, at(nb, nl, z, {i, k}), at(nb, nl, z, {j, k}));
                       return {arith::AndIOp::create(nb, nl, s[0], eq)};
                     })[0];
    };
    // Row i < row j lexicographically: decided at the first difference.
    auto lessRows = [&](OpBuilder &b, Location l, Value i, Value j) -> Value {
      Value f = arith::ConstantIntOp::create(b, l, 0, 1);
      auto r = forLoop(b, l, idx(b, l, 0), idx(b, l, m), ValueRange{f, f},
                       [&](OpBuilder &nb, Location nl, Value k, ValueRange s) -> SmallVector<Value> {
                         Value p = at(nb, nl, z, {i, k}), q = at(nb, nl, z, {j, k});
                         Value lt = cmp(nb, nl, true, p, q), gt = cmp(nb, nl, true, q, p);
                         Value open = arith::XOrIOp::create(
                             nb, nl, s[0], arith::ConstantIntOp::create(nb, nl, 1, 1));
                         Value decides = arith::AndIOp::create(
                             nb, nl, open, arith::OrIOp::create(nb, nl, lt, gt));
                         return {arith::OrIOp::create(nb, nl, s[0], decides),
                                 arith::SelectOp::create(nb, nl, decides, lt, s[1])};
                       });
      return r[1];
    };

    // 1. ids in first-occurrence order, and each id's first row.
    auto idType = RankedTensorType::get({n}, i64);
    auto firstType = RankedTensorType::get({u}, i64);
    Value ids0 = filledTensor(rewriter, loc, idType, i64c(rewriter, loc, 0));
    Value first0 = filledTensor(rewriter, loc, firstType, i64c(rewriter, loc, 0));
    auto pass1 = forLoop(
        rewriter, loc, idx(rewriter, loc, 0), idx(rewriter, loc, n),
        ValueRange{idx(rewriter, loc, 0), ids0, first0},
        [&](OpBuilder &b, Location l, Value i, ValueRange s) -> SmallVector<Value> {
          Value count = s[0], ids = s[1], first = s[2];
          auto found = forLoop(
              b, l, idx(b, l, 0), i, ValueRange{arith::ConstantIntOp::create(b, l, 0, 1), i64c(b, l, 0)},
              [&](OpBuilder &nb, Location nl, Value j, ValueRange f) -> SmallVector<Value> {
                Value hit = arith::AndIOp::create(
                    nb, nl, arith::XOrIOp::create(nb, nl, f[0], arith::ConstantIntOp::create(nb, nl, 1, 1)),
                    equalRows(nb, nl, i, j));
                return {arith::OrIOp::create(nb, nl, f[0], hit),
                        arith::SelectOp::create(nb, nl, hit, at(nb, nl, ids, {j}), f[1])};
              });
          Value isNew = arith::XOrIOp::create(b, l, found[0], arith::ConstantIntOp::create(b, l, 1, 1));
          Value id = arith::SelectOp::create(b, l, isNew, toI64(b, l, count), found[1]);
          ids = tensor::InsertOp::create(b, l, id, ids, ValueRange{i});
          Value room = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, count, idx(b, l, u));
          auto write = scf::IfOp::create(
              b, l, arith::AndIOp::create(b, l, isNew, room),
              [&](OpBuilder &tb, Location tl) {
                scf::YieldOp::create(tb, tl, Value(tensor::InsertOp::create(
                                                 tb, tl, toI64(tb, tl, i), first, ValueRange{count})));
              },
              [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, first); });
          Value next = arith::AddIOp::create(
              b, l, count, toIndex(b, l, arith::ExtUIOp::create(b, l, i64, isNew)));
          return {next, ids, write.getResult(0)};
        });
    Value ids = pass1[1], first = pass1[2];
    // Ids beyond the declared count (more unique items than declared) are
    // clamped where they index the outputs.
    auto clampId = [&](OpBuilder &b, Location l, Value id) -> Value {
      return arith::MinUIOp::create(b, l, toIndex(b, l, id), idx(b, l, u - 1));
    };

    // 2. the output position of each id.
    Value pos = generateTensor(rewriter, loc, firstType, [&](OpBuilder &b, Location l) -> Value {
      Value v = linalg::IndexOp::create(b, l, 0);
      if (!sorted)
        return toI64(b, l, v);
      Value rowV = toIndex(b, l, at(b, l, first, {v}));
      return forLoop(b, l, idx(b, l, 0), idx(b, l, u), ValueRange{i64c(b, l, 0)},
                     [&](OpBuilder &nb, Location nl, Value w, ValueRange c) -> SmallVector<Value> {
                       Value rowW = toIndex(nb, nl, at(nb, nl, first, {w}));
                       Value less = lessRows(nb, nl, rowW, rowV);
                       return {arith::AddIOp::create(nb, nl, c[0],
                                                     arith::ExtUIOp::create(nb, nl, i64, less))};
                     })[0];
    });

    // 3. the outputs, by position.
    SmallVector<Value> results;
    auto zRows = RankedTensorType::get({u, m}, et);
    Value y = forLoop(rewriter, loc, idx(rewriter, loc, 0), idx(rewriter, loc, u),
                      ValueRange{filledTensor(rewriter, loc, zRows, scalarConstant(rewriter, loc, et, 0))},
                      [&](OpBuilder &b, Location l, Value v, ValueRange s) -> SmallVector<Value> {
                        Value p = clampId(b, l, at(b, l, pos, {v}));
                        Value row = toIndex(b, l, at(b, l, first, {v}));
                        return forLoop(b, l, idx(b, l, 0), idx(b, l, m), s,
                                       [&](OpBuilder &nb, Location nl, Value k,
                                           ValueRange t) -> SmallVector<Value> {
                                         return {tensor::InsertOp::create(
                                             nb, nl, at(nb, nl, z, {row, k}), t[0], ValueRange{p, k})};
                                       });
                      })[0];
    if (axis) {
      SmallVector<int64_t> shape{u};
      for (int64_t d = 0; d < rank; ++d)
        if (d != *axis)
          shape.push_back(xType.getDimSize(d));
      y = reshapeTensor(rewriter, loc, y, RankedTensorType::get(shape, et));
      SmallVector<int64_t> inverse(rank);
      for (int64_t d = 0; d < rank; ++d)
        inverse[perm[d]] = d;
      y = transposeTensor(rewriter, loc, y, inverse);
    }
    results.push_back(reshapeTensor(rewriter, loc, y, yType));
    // indices[pos[v]] = first[v].
    auto idxOut = [&](Value orig) { return isa<NoneType>(orig.getType()); };
    if (idxOut(op.getIndices())) {
      results.push_back(onnx::NoValueOp::create(rewriter, loc, rewriter.getNoneType()));
    } else {
      Value r = forLoop(rewriter, loc, idx(rewriter, loc, 0), idx(rewriter, loc, u),
                        ValueRange{filledTensor(rewriter, loc, firstType, i64c(rewriter, loc, 0))},
                        [&](OpBuilder &b, Location l, Value v, ValueRange s) -> SmallVector<Value> {
                          return {tensor::InsertOp::create(b, l, at(b, l, first, {v}), s[0],
                                                           ValueRange{clampId(b, l, at(b, l, pos, {v}))})};
                        })[0];
      results.push_back(reshapeTensor(rewriter, loc, r, convertedResultType(*typeConverter, op, 1)));
    }
    // inverse_indices[i] = pos[ids[i]].
    if (idxOut(op.getInverseIndices())) {
      results.push_back(onnx::NoValueOp::create(rewriter, loc, rewriter.getNoneType()));
    } else {
      Value r = generateTensor(rewriter, loc, idType, [&](OpBuilder &b, Location l) -> Value {
        Value i = linalg::IndexOp::create(b, l, 0);
        return at(b, l, pos, {clampId(b, l, at(b, l, ids, {i}))});
      });
      results.push_back(reshapeTensor(rewriter, loc, r, convertedResultType(*typeConverter, op, 2)));
    }
    // counts[pos[ids[i]]] += 1.
    if (idxOut(op.getCounts())) {
      results.push_back(onnx::NoValueOp::create(rewriter, loc, rewriter.getNoneType()));
    } else {
      Value r = forLoop(rewriter, loc, idx(rewriter, loc, 0), idx(rewriter, loc, n),
                        ValueRange{filledTensor(rewriter, loc, firstType, i64c(rewriter, loc, 0))},
                        [&](OpBuilder &b, Location l, Value i, ValueRange s) -> SmallVector<Value> {
                          Value p = clampId(b, l, at(b, l, pos, {clampId(b, l, at(b, l, ids, {i}))}));
                          Value c = arith::AddIOp::create(b, l, at(b, l, s[0], {p}), i64c(b, l, 1));
                          return {tensor::InsertOp::create(b, l, c, s[0], ValueRange{p})};
                        })[0];
      results.push_back(reshapeTensor(rewriter, loc, r, convertedResultType(*typeConverter, op, 3)));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateSelectionPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TopKPattern, CompressPattern, NonZeroPattern, NonMaxSuppressionPattern,
               UniquePattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
