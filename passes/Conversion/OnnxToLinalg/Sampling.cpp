//===- Sampling.cpp - GridSample, RoiAlign -> linalg ----------------------===//
//
// GridSample and RoiAlign read the input at positions computed from data.
// GridSample is one generic over the output whose body computes the
// position, the taps and their weights, and reads each tap with
// tensor.extract. A tap outside the
// image is zero, the nearest border pixel, or its reflection, as
// padding_mode says; every index is clamped before the read, so no grid
// value (NaN, inf, huge) reads out of bounds.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

enum class Padding { Zeros, Border, Reflection };

/// Scalar float helpers in the element type of their operands.
struct FloatMath {
  OpBuilder &b;
  Location l;
  Type t;
  Value c(double v) { return scalarConstant(b, l, t, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, l, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, l, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, l, x, y); }
  Value floor(Value x) { return math::FloorOp::create(b, l, x); }
  Value lt(Value x, Value y) {
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, y);
  }
  Value select(Value cond, Value x, Value y) { return arith::SelectOp::create(b, l, cond, x, y); }
  /// Clamps into [lo, hi]; NaN becomes lo.
  Value clamp(Value x, double lo, double hi) {
    Value v = arith::MaxNumFOp::create(b, l, x, c(lo));
    return arith::MinNumFOp::create(b, l, v, c(hi));
  }
};

/// Reflects x into [lo, hi] (repeatedly, by the nearer border), as the
/// ONNX reference does for padding_mode=reflection.
Value reflect(FloatMath &m, Value x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0)
    return m.c(lo);
  auto fold = [&](Value dx, bool below) {
    Value n = m.floor(m.div(dx, m.c(range)));
    Value r = m.sub(dx, m.mul(n, m.c(range)));
    Value half = m.floor(m.mul(n, m.c(0.5)));
    Value even = arith::CmpFOp::create(m.b, m.l, arith::CmpFPredicate::OEQ,
                                       m.mul(half, m.c(2)), n);
    Value fromLo = m.add(m.c(lo), r), fromHi = m.sub(m.c(hi), r);
    return below ? m.select(even, fromLo, fromHi) : m.select(even, fromHi, fromLo);
  };
  Value below = fold(m.sub(m.c(lo), x), true);
  Value above = fold(m.sub(x, m.c(hi)), false);
  Value r = m.select(m.lt(x, m.c(lo)), below, x);
  return m.select(m.lt(m.c(hi), x), above, r);
}

/// Keys' cubic convolution weights (A = -0.75) of the 4 taps around a
/// point at fraction t in [0, 1) past the second tap.
std::array<Value, 4> cubicWeights(FloatMath &m, Value t) {
  const double a = -0.75;
  auto near = [&](Value x) { // |x| <= 1
    return m.add(m.mul(m.mul(m.sub(m.mul(m.c(a + 2), x), m.c(a + 3)), x), x), m.c(1));
  };
  auto far = [&](Value x) { // 1 < |x| < 2
    Value v = m.sub(m.mul(m.c(a), x), m.c(5 * a));
    v = m.add(m.mul(v, x), m.c(8 * a));
    return m.sub(m.mul(v, x), m.c(4 * a));
  };
  Value one = m.c(1), two = m.c(2);
  return {far(m.add(t, one)), near(t), near(m.sub(one, t)), far(m.sub(two, t))};
}

struct GridSamplePattern : public OpConversionPattern<onnx::GridSampleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GridSampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type et = elementTypeOf(op.getX());
    if (!isSupportedFloat(et) || elementTypeOf(op.getGrid()) != et)
      return unsupported(rewriter, op, "X and grid must both be float32 or float64");
    Value x = adaptor.getX(), grid = adaptor.getGrid();
    auto xType = cast<RankedTensorType>(x.getType());
    auto gType = cast<RankedTensorType>(grid.getType());
    if (xType.getRank() != 4 || gType.getRank() != 4 || gType.getDimSize(3) != 2)
      return unsupported(rewriter, op, "only 2-D sampling (X [N, C, H, W], grid [N, "
                                       "H_out, W_out, 2]) is supported yet");
    StringRef mode = op.getMode();
    bool nearest = mode == "nearest";
    bool cubic = mode == "bicubic" || mode == "cubic";
    if (!nearest && !cubic && mode != "bilinear" && mode != "linear")
      return unsupported(rewriter, op, "mode '" + mode + "' is not supported");
    StringRef pm = op.getPaddingMode();
    Padding padding;
    if (pm == "zeros")
      padding = Padding::Zeros;
    else if (pm == "border")
      padding = Padding::Border;
    else if (pm == "reflection")
      padding = Padding::Reflection;
    else
      return unsupported(rewriter, op, "padding_mode '" + pm + "' is not supported");
    bool alignCorners = op.getAlignCorners() != 0;
    int64_t h = xType.getDimSize(2), w = xType.getDimSize(3);
    if (h == 0 || w == 0)
      return unsupported(rewriter, op, "empty images are not supported");

    RankedTensorType yType = convertedResultType(*typeConverter, op);
    if (gType.getDimSize(0) != xType.getDimSize(0) ||
        yType.getShape() != ArrayRef<int64_t>{xType.getDimSize(0), xType.getDimSize(1),
                                              gType.getDimSize(1), gType.getDimSize(2)})
      return unsupported(rewriter, op, "grid and Y must be [N, H_out, W_out, 2] and "
                                       "[N, C, H_out, W_out] for X [N, C, H, W]");
    Value y = generateTensor(rewriter, loc, yType, [&](OpBuilder &b, Location l) -> Value {
      FloatMath m{b, l, et};
      Value n = linalg::IndexOp::create(b, l, 0), ch = linalg::IndexOp::create(b, l, 1);
      Value oy = linalg::IndexOp::create(b, l, 2), ox = linalg::IndexOp::create(b, l, 3);
      auto coord = [&](int64_t i, int64_t size) {
        Value g = tensor::ExtractOp::create(
            b, l, grid, ValueRange{n, oy, ox, arith::ConstantIndexOp::create(b, l, i)});
        // [-1, 1] to [0, size - 1] (align_corners) or [-0.5, size - 0.5].
        Value p = m.add(g, m.c(1));
        if (alignCorners)
          return m.mul(p, m.c((size - 1) / 2.0));
        return m.div(m.sub(m.mul(p, m.c(size)), m.c(1)), m.c(2));
      };
      Value px = coord(0, w), py = coord(1, h);
      // The pixel at integral coordinates (r, c), with padding.
      auto pixel = [&](Value r, Value c) -> Value {
        auto index = [&](Value v, int64_t size) -> std::pair<Value, Value> {
          Value valid;
          if (padding == Padding::Reflection)
            v = alignCorners ? reflect(m, v, 0, size - 1) : reflect(m, v, -0.5, size - 0.5);
          if (padding == Padding::Zeros)
            valid = arith::AndIOp::create(b, l, m.lt(v, m.c(size)),
                                          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE,
                                                                v, m.c(0)));
          Value i = arith::FPToSIOp::create(b, l, b.getI64Type(), m.clamp(v, 0, size - 1));
          return {arith::IndexCastOp::create(b, l, b.getIndexType(), i), valid};
        };
        auto [ri, rv] = index(r, h);
        auto [ci, cv] = index(c, w);
        Value v = tensor::ExtractOp::create(b, l, x, ValueRange{n, ch, ri, ci});
        if (padding != Padding::Zeros)
          return v;
        return m.select(arith::AndIOp::create(b, l, rv, cv), v, m.c(0));
      };
      if (nearest)
        return pixel(math::RoundEvenOp::create(b, l, py), math::RoundEvenOp::create(b, l, px));
      Value x1 = m.floor(px), y1 = m.floor(py);
      Value fx = m.sub(px, x1), fy = m.sub(py, y1);
      if (!cubic) {
        Value x2 = m.add(x1, m.c(1)), y2 = m.add(y1, m.c(1));
        Value gx = m.sub(m.c(1), fx), gy = m.sub(m.c(1), fy);
        Value top = m.add(m.mul(gx, pixel(y1, x1)), m.mul(fx, pixel(y1, x2)));
        Value bottom = m.add(m.mul(gx, pixel(y2, x1)), m.mul(fx, pixel(y2, x2)));
        return m.add(m.mul(gy, top), m.mul(fy, bottom));
      }
      std::array<Value, 4> wx = cubicWeights(m, fx), wy = cubicWeights(m, fy);
      Value sum = m.c(0);
      for (int i = 0; i < 4; ++i) {
        Value row = m.c(0);
        Value r = m.add(y1, m.c(i - 1));
        for (int j = 0; j < 4; ++j)
          row = m.add(row, m.mul(wx[j], pixel(r, m.add(x1, m.c(j - 1)))));
        sum = m.add(sum, m.mul(wy[i], row));
      }
      return sum;
    });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// RoiAlign: per output bin, the average (or ORT's max) of bilinear
/// samples on a grid inside the bin. The grid is sampling_ratio per side,
/// or ceil(roi size / output size) from the roi data, so each bin sums in
/// scf.for loops with run-time bounds (at most 64 per side). Samples more
/// than one pixel outside the image count as zero, as in the reference.
struct RoiAlignPattern : public OpConversionPattern<onnx::RoiAlignOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::RoiAlignOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type et = elementTypeOf(op.getX());
    if (!isSupportedFloat(et) || elementTypeOf(op.getRois()) != et)
      return unsupported(rewriter, op, "X and rois must both be float32 or float64");
    Value x = adaptor.getX(), rois = adaptor.getRois(), batchIdx = adaptor.getBatchIndices();
    auto xType = cast<RankedTensorType>(x.getType());
    auto rType = cast<RankedTensorType>(rois.getType());
    if (xType.getRank() != 4 || rType.getRank() != 2 || rType.getDimSize(1) != 4)
      return unsupported(rewriter, op, "X must be [N, C, H, W] and rois [R, 4]");
    StringRef mode = op.getMode(), ctm = op.getCoordinateTransformationMode();
    if (mode != "avg" && mode != "max")
      return unsupported(rewriter, op, "mode '" + mode + "' is not supported");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      return unsupported(rewriter, op, "coordinate_transformation_mode '" + ctm +
                                           "' is not supported");
    bool isMax = mode == "max", halfPixel = ctm == "half_pixel";
    int64_t n = xType.getDimSize(0), h = xType.getDimSize(2), w = xType.getDimSize(3);
    if (n == 0 || h == 0 || w == 0)
      return unsupported(rewriter, op, "empty inputs are not supported");
    int64_t oh = op.getOutputHeight(), ow = op.getOutputWidth();
    int64_t ratio = op.getSamplingRatio();
    double scale = op.getSpatialScale().convertToDouble();
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    int64_t numRois = rType.getDimSize(0);
    auto bType = cast<RankedTensorType>(batchIdx.getType());
    if (bType.getShape() != ArrayRef<int64_t>{numRois} ||
        yType.getShape() != ArrayRef<int64_t>{numRois, xType.getDimSize(1), oh, ow})
      return unsupported(rewriter, op, "batch_indices and Y must be [R] and "
                                       "[R, C, output_height, output_width] for rois [R, 4]");
    Value y = generateTensor(rewriter, loc, yType, [&](OpBuilder &b, Location l) -> Value {
      FloatMath m{b, l, et};
      Type i64 = b.getI64Type();
      Value r = linalg::IndexOp::create(b, l, 0), ch = linalg::IndexOp::create(b, l, 1);
      Value ph = linalg::IndexOp::create(b, l, 2), pw = linalg::IndexOp::create(b, l, 3);
      auto roi = [&](int64_t k) {
        Value v = tensor::ExtractOp::create(b, l, rois,
                                            ValueRange{r, arith::ConstantIndexOp::create(b, l, k)});
        return m.sub(m.mul(v, m.c(scale)), m.c(halfPixel ? 0.5 : 0.0));
      };
      Value x0 = roi(0), y0 = roi(1), x1 = roi(2), y1 = roi(3);
      Value rw = m.sub(x1, x0), rh = m.sub(y1, y0);
      if (!halfPixel) {
        rw = arith::MaximumFOp::create(b, l, rw, m.c(1));
        rh = arith::MaximumFOp::create(b, l, rh, m.c(1));
      }
      Value binH = m.div(rh, m.c(oh)), binW = m.div(rw, m.c(ow));
      // Samples per side, as an index in [1, 64].
      auto gridOf = [&](Value size, int64_t out) -> Value {
        Value g = ratio > 0 ? m.c(ratio) : math::CeilOp::create(b, l, m.div(size, m.c(out)));
        g = m.clamp(g, 1, 64);
        return arith::IndexCastOp::create(b, l, b.getIndexType(),
                                          arith::FPToSIOp::create(b, l, i64, g));
      };
      Value gh = gridOf(rh, oh), gw = gridOf(rw, ow);
      auto toFloat = [&](Value idx) {
        return arith::SIToFPOp::create(b, l, et, arith::IndexCastOp::create(b, l, i64, idx));
      };
      Value count = arith::MaximumFOp::create(b, l, m.mul(toFloat(gh), toFloat(gw)), m.c(1));
      Value img = clampedIndex(b, l, tensor::ExtractOp::create(b, l, batchIdx, r), n);
            Value startH = m.add(y0, m.mul(toFloat(ph), binH));
      Value startW = m.add(x0, m.mul(toFloat(pw), binW));
      Value c0 = arith::ConstantIndexOp::create(b, l, 0);
      Value init = m.c(isMax ? -INFINITY : 0);
      Value acc = forLoop(
          b, l, c0, gh, ValueRange{init},
          [&](OpBuilder &yb, Location yl, Value iy, ValueRange ay) -> SmallVector<Value> {
            FloatMath my{yb, yl, et};
            Value fy = my.add(startH, my.div(my.mul(my.add(toFloat(iy), my.c(0.5)), binH),
                                             toFloat(gh)));
            return forLoop(
                yb, yl, c0, gw, ay,
                [&](OpBuilder &xb, Location xl, Value ix, ValueRange ax) -> SmallVector<Value> {
                  FloatMath mx{xb, xl, et};
                  Value fx = mx.add(startW, mx.div(mx.mul(mx.add(toFloat(ix), mx.c(0.5)), binW),
                                                   toFloat(gw)));
                  // Outside [-1, size]: contributes zero.
                  Value out = arith::OrIOp::create(
                      xb, xl, arith::OrIOp::create(xb, xl, mx.lt(fy, mx.c(-1)), mx.lt(mx.c(h), fy)),
                      arith::OrIOp::create(xb, xl, mx.lt(fx, mx.c(-1)), mx.lt(mx.c(w), fx)));
                  auto axisTaps = [&](Value v, int64_t size) {
                    v = arith::MaximumFOp::create(xb, xl, v, mx.c(0));
                    Value lo = mx.floor(v);
                    Value last = mx.c(size - 1);
                    Value atEnd = arith::CmpFOp::create(xb, xl, arith::CmpFPredicate::OGE, lo, last);
                    lo = mx.select(atEnd, last, lo);
                    v = mx.select(atEnd, last, v);
                    Value hi = mx.select(atEnd, last, mx.add(lo, mx.c(1)));
                    Value frac = mx.sub(v, lo);
                    auto idx = [&](Value f) {
                      return arith::IndexCastOp::create(
                          xb, xl, xb.getIndexType(),
                          arith::FPToSIOp::create(xb, xl, i64, mx.clamp(f, 0, size - 1)));
                    };
                    return std::tuple<Value, Value, Value>{idx(lo), idx(hi), frac};
                  };
                  auto [yl0, yh0, ly] = axisTaps(fy, h);
                  auto [xl0, xh0, lx] = axisTaps(fx, w);
                  Value hy = mx.sub(mx.c(1), ly), hx = mx.sub(mx.c(1), lx);
                  auto px = [&](Value yy, Value xx) -> Value {
                    return tensor::ExtractOp::create(xb, xl, x, ValueRange{img, ch, yy, xx});
                  };
                  Value t1 = mx.mul(mx.mul(hy, hx), px(yl0, xl0));
                  Value t2 = mx.mul(mx.mul(hy, lx), px(yl0, xh0));
                  Value t3 = mx.mul(mx.mul(ly, hx), px(yh0, xl0));
                  Value t4 = mx.mul(mx.mul(ly, lx), px(yh0, xh0));
                  Value v;
                  if (isMax) {
                    v = arith::MaximumFOp::create(
                        xb, xl, arith::MaximumFOp::create(xb, xl, t1, t2),
                        arith::MaximumFOp::create(xb, xl, t3, t4));
                    v = mx.select(out, mx.c(0), v);
                    return {arith::MaximumFOp::create(xb, xl, ax[0], v)};
                  }
                  v = mx.add(mx.add(t1, t2), mx.add(t3, t4));
                  v = mx.select(out, mx.c(0), v);
                  return {mx.add(ax[0], v)};
                });
          })[0];
      return isMax ? acc : m.div(acc, count);
    });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateSamplingPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<GridSamplePattern, RoiAlignPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
