//===- Resize.cpp - Resize -> linalg.generic over tap tables or computed taps ===//
//
// With static shapes and constant scales every output position's source
// taps and weights are known at compile time. For each resized dim this
// computes, in double precision and following the ONNX reference's rules,
// a table of tap indices and weights (1 tap for nearest, 2 for linear, 4
// for cubic; exclude_outside renormalises; out-of-range taps read the
// edge) and, for tf_crop_and_resize, which positions extrapolate. The
// generic over the output reads the tables and blends tensor.extract'ed
// taps. Dims the resize leaves alone read their own position.
//
// Scales or a roi given at run time, and dynamic dims (an upsampling of a
// feature map whose size follows the image's, or to the size of another
// one read by Shape), build the same tables at run time instead: per
// resized dim, a generic over its output positions computes the taps by
// the same rules in f64 from the sizes and scale read then
// (buildRuntimeTaps), and the generic over the output reads them.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

#include <cmath>

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

struct DimTable {
  bool identity = true;
  int64_t taps = 1;
  SmallVector<int64_t> index;  ///< out * taps
  SmallVector<double> weight;  ///< out * taps
  SmallVector<bool> valid;     ///< out (tf_crop_and_resize)
  bool anyInvalid = false;
};

/// Source coordinate of output position x along one dim.
double sourceCoordinate(StringRef mode, double x, double scale, int64_t in,
                        int64_t out, double roiStart, double roiEnd) {
  if (mode == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") {
    // The reference divides by the unrounded resized length, in * scale.
    double length = in * scale;
    return out == 1 ? 0.0 : x * (in - 1) / (length - 1);
  }
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (mode == "tf_crop_and_resize")
    return out > 1 ? roiStart * (in - 1) +
                         x * (roiEnd - roiStart) * (in - 1) / static_cast<double>(out - 1)
                   : 0.5 * (roiStart + roiEnd) * (in - 1);
  if (mode == "half_pixel_symmetric") {
    // Resize-19: half_pixel about the centre, for the rounded output size.
    double adjustment = out / (scale * in);
    return in / 2.0 * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5; // half_pixel
}

SmallVector<double> cubicCoeffs(double r, double a) {
  double s = r + 1, t = 1 - r, u = t + 1;
  return {((a * s - 5 * a) * s + 8 * a) * s - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * t - (a + 3)) * t * t + 1,
          ((a * u - 5 * a) * u + 8 * a) * u - 4 * a};
}

DimTable buildTable(StringRef mode, StringRef coord, StringRef nearestMode, double cubicA,
                    bool excludeOutside, double scale, int64_t in, int64_t out,
                    double roiStart, double roiEnd) {
  DimTable t;
  t.taps = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
  for (int64_t o = 0; o < out; ++o) {
    double x = sourceCoordinate(coord, o, scale, in, out, roiStart, roiEnd);
    bool valid = coord != "tf_crop_and_resize" || (x >= 0 && x <= in - 1);
    t.valid.push_back(valid);
    t.anyInvalid |= !valid;
    double fl = std::floor(x);
    int64_t i0 = static_cast<int64_t>(fl);
    double ratio = x - fl;
    if (ratio == 0 && mode != "nearest") {
      // The reference picks the taps below an integral coordinate.
      i0 -= 1;
      ratio = 1;
    }
    SmallVector<int64_t> idx;
    SmallVector<double> w;
    if (mode == "nearest") {
      int64_t n;
      if (ratio == 0)
        n = i0;
      else if (nearestMode == "round_prefer_ceil")
        n = ratio >= 0.5 ? i0 + 1 : i0;
      else if (nearestMode == "floor")
        n = i0;
      else if (nearestMode == "ceil")
        n = i0 + 1;
      else // round_prefer_floor
        n = ratio > 0.5 ? i0 + 1 : i0;
      idx.push_back(n);
      w.push_back(1);
    } else if (mode == "linear") {
      idx = {i0, i0 + 1};
      w = {1 - ratio, ratio};
    } else {
      idx = {i0 - 1, i0, i0 + 1, i0 + 2};
      w = cubicCoeffs(ratio, cubicA);
    }
    if (excludeOutside) {
      double sum = 0;
      for (size_t k = 0; k < idx.size(); ++k) {
        if (idx[k] < 0 || idx[k] >= in)
          w[k] = 0;
        sum += w[k];
      }
      if (sum != 0)
        for (double &v : w)
          v /= sum;
    }
    for (size_t k = 0; k < idx.size(); ++k) {
      int64_t c = std::clamp<int64_t>(idx[k], 0, in - 1);
      t.index.push_back(c);
      t.weight.push_back(w[k]);
    }
  }
  // Identity: every position reads itself with weight 1.
  t.identity = in == out && !t.anyInvalid;
  for (int64_t o = 0; o < out && t.identity; ++o) {
    double total = 0;
    for (int64_t k = 0; k < t.taps; ++k) {
      double wk = t.weight[o * t.taps + k];
      if (wk != 0 && t.index[o * t.taps + k] != o)
        t.identity = false;
      total += wk;
    }
    t.identity &= std::fabs(total - 1) < 1e-12;
  }
  return t;
}

std::optional<SmallVector<double>> floatsOf(Value v) {
  DenseElementsAttr attr = onnx::constantOf(v);
  if (!attr || !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  SmallVector<double> out;
  for (APFloat f : attr.getValues<APFloat>())
    out.push_back(f.convertToDouble());
  return out;
}

/// One resized dim's sizes and scale as values, for taps computed at run
/// time: f64 `in` and `out`, and the last input index as i64.
struct DimSizes {
  Value in, out, last;
};

/// The same rules as buildTable, as IR, for a scale (and roi) or sizes
/// known only at run time: the taps of output position `o` along a dim.
/// Static sizes come in as constants, and their tests fold.
struct RuntimeTaps {
  SmallVector<Value> index;  ///< i64, clamped to the dim
  SmallVector<Value> weight; ///< f64
  Value valid;               ///< i1, or null
};

RuntimeTaps buildRuntimeTaps(OpBuilder &b, Location l, StringRef mode, StringRef coord,
                             StringRef nearestMode, double cubicA, bool excludeOutside,
                             Value o, Value scale, const DimSizes &size, Value roiStart,
                             Value roiEnd) {
  Type f64 = b.getF64Type();
  auto c = [&](double v) { return arith::ConstantOp::create(b, l, b.getFloatAttr(f64, v)).getResult(); };
  auto add = [&](Value x, Value y) { return arith::AddFOp::create(b, l, x, y).getResult(); };
  auto sub = [&](Value x, Value y) { return arith::SubFOp::create(b, l, x, y).getResult(); };
  auto mul = [&](Value x, Value y) { return arith::MulFOp::create(b, l, x, y).getResult(); };
  auto div = [&](Value x, Value y) { return arith::DivFOp::create(b, l, x, y).getResult(); };
  auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, l, p, x, y).getResult();
  };
  auto select = [&](Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, l, cond, x, y).getResult();
  };
  Value in = size.in, out = size.out, inLess1 = sub(size.in, c(1));
  Value xo = arith::SIToFPOp::create(b, l, f64,
                                     arith::IndexCastOp::create(b, l, b.getI64Type(), o));
  Value x;
  if (coord == "pytorch_half_pixel")
    x = select(cmp(arith::CmpFPredicate::OGT, out, c(1)),
               sub(div(add(xo, c(0.5)), scale), c(0.5)), c(0));
  else if (coord == "align_corners")
    x = select(cmp(arith::CmpFPredicate::OEQ, out, c(1)), c(0),
               div(mul(xo, inLess1), sub(mul(in, scale), c(1))));
  else if (coord == "asymmetric")
    x = div(xo, scale);
  else if (coord == "tf_half_pixel_for_nn")
    x = div(add(xo, c(0.5)), scale);
  else if (coord == "tf_crop_and_resize")
    x = select(cmp(arith::CmpFPredicate::OGT, out, c(1)),
               add(mul(roiStart, inLess1),
                   mul(xo, div(mul(sub(roiEnd, roiStart), inLess1), sub(out, c(1))))),
               mul(mul(c(0.5), add(roiStart, roiEnd)), inLess1));
  else if (coord == "half_pixel_symmetric")
    x = add(mul(div(in, c(2)), sub(c(1), div(out, mul(scale, in)))),
            sub(div(add(xo, c(0.5)), scale), c(0.5)));
  else
    x = sub(div(add(xo, c(0.5)), scale), c(0.5));
  RuntimeTaps t;
  if (coord == "tf_crop_and_resize")
    t.valid = arith::AndIOp::create(b, l, cmp(arith::CmpFPredicate::OGE, x, c(0)),
                                    cmp(arith::CmpFPredicate::OLE, x, inLess1));
  // Run-time scales or roi may say anything (0, NaN): keep the coordinate
  // (NaN included) a few taps around the input, so that the conversion
  // to an integer is defined; the taps are clamped into it below.
  x = select(cmp(arith::CmpFPredicate::OGE, x, c(-4)), x, c(-4));
  x = select(cmp(arith::CmpFPredicate::OLE, x, add(in, c(4))), x, add(in, c(4)));
  Value fl = math::FloorOp::create(b, l, x);
  Value ratio = sub(x, fl);
  Value i0 = arith::FPToSIOp::create(b, l, b.getI64Type(), fl);
  auto i64c = [&](int64_t v) {
    return arith::ConstantOp::create(b, l, b.getI64IntegerAttr(v)).getResult();
  };
  Value isInt = cmp(arith::CmpFPredicate::OEQ, ratio, c(0));
  SmallVector<Value> idx, w;
  if (mode == "nearest") {
    Value up;
    if (nearestMode == "round_prefer_ceil")
      up = cmp(arith::CmpFPredicate::OGE, ratio, c(0.5));
    else if (nearestMode == "floor")
      up = arith::ConstantIntOp::create(b, l, 0, 1);
    else if (nearestMode == "ceil")
      up = arith::ConstantIntOp::create(b, l, 1, 1);
    else
      up = cmp(arith::CmpFPredicate::OGT, ratio, c(0.5));
    up = arith::AndIOp::create(b, l, up, arith::XOrIOp::create(
                                              b, l, isInt, arith::ConstantIntOp::create(b, l, 1, 1)));
    idx.push_back(select(up, arith::AddIOp::create(b, l, i0, i64c(1)), i0));
    w.push_back(c(1));
  } else {
    // Integral coordinates take the taps below, with ratio 1.
    i0 = select(isInt, arith::SubIOp::create(b, l, i0, i64c(1)), i0);
    ratio = select(isInt, c(1), ratio);
    if (mode == "linear") {
      idx = {i0, arith::AddIOp::create(b, l, i0, i64c(1))};
      w = {sub(c(1), ratio), ratio};
    } else {
      Value a = c(cubicA), r = ratio;
      Value s1 = add(r, c(1)), t1 = sub(c(1), r), u1 = add(t1, c(1));
      auto outer = [&](Value v) { // ((a*v - 5a)*v + 8a)*v - 4a
        return sub(mul(add(mul(sub(mul(a, v), c(5 * cubicA)), v), c(8 * cubicA)), v), c(4 * cubicA));
      };
      auto inner = [&](Value v) { // ((a+2)*v - (a+3))*v*v + 1
        return add(mul(mul(sub(mul(c(cubicA + 2), v), c(cubicA + 3)), v), v), c(1));
      };
      for (int64_t k = -1; k <= 2; ++k)
        idx.push_back(arith::AddIOp::create(b, l, i0, i64c(k)));
      w = {outer(s1), inner(r), inner(t1), outer(u1)};
    }
  }
  if (excludeOutside) {
    Value sum = c(0);
    for (size_t k = 0; k < idx.size(); ++k) {
      Value inside = arith::AndIOp::create(
          b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, idx[k], i64c(0)),
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, idx[k], size.last));
      w[k] = select(inside, w[k], c(0));
      sum = add(sum, w[k]);
    }
    Value nz = cmp(arith::CmpFPredicate::ONE, sum, c(0));
    for (Value &v : w)
      v = select(nz, div(v, sum), v);
  }
  for (Value i : idx)
    t.index.push_back(
        arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, i, i64c(0)), size.last));
  t.weight = w;
  return t;
}

struct ResizePattern : public OpConversionPattern<onnx::ResizeOp> {
  using OpConversionPattern::OpConversionPattern;

  /// Whether dim `d` of the output is the input's own (the same size, or
  /// the same dynamic dim).
  static bool sameDim(onnx::ResizeOp op, int64_t d) {
    return sameSize(op.getX(), d, op.getY(), d);
  }

  /// Taps computed in the generic (f64) by buildTable's rules, where no
  /// table can be built at compile time: scales or roi given at run time,
  /// or dims whose size is known only then. `scales` are the constant
  /// scales given, or empty: then each dim's is out / in (its sizes), or
  /// read at run time. A dim that keeps its size at scale 1 is read in
  /// place.
  LogicalResult computedResize(onnx::ResizeOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter, bool runtimeScales,
                               ArrayRef<double> scales) const {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    int64_t rank = xType.getRank();
    Type et = xType.getElementType();
    StringRef mode = op.getMode(), coord = op.getCoordinateTransformationMode();
    bool crop = coord == "tf_crop_and_resize";
    if (crop && onnx::isNone(op.getRoi()))
      return unsupported(rewriter, op, "tf_crop_and_resize needs a roi");
    double cubicA = op.getCubicCoeffAAttr() ? op.getCubicCoeffAAttr().getValueAsDouble() : -0.75;
    double extrapolation =
        op.getExtrapolationValueAttr() ? op.getExtrapolationValueAttr().getValueAsDouble() : 0.0;
    OpBuilder &b = rewriter;
    Type f64 = b.getF64Type();
    auto f64c = [&](double v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(f64, v));
    };
    auto readF64 = [&](Value t, int64_t i) -> Value {
      Value v = tensor::ExtractOp::create(b, loc, t, ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
      if (v.getType() != f64)
        v = arith::ExtFOp::create(b, loc, f64, v);
      return v;
    };
    SmallVector<Value> scale(rank), roiStart(rank), roiEnd(rank);
    SmallVector<DimSizes> sizes(rank);
    SmallVector<bool> resized(rank);
    for (int64_t d = 0; d < rank; ++d) {
      // With run-time scales even a dim that keeps its size may move its
      // samples (floor(in * 1.2) can equal in): resize every dim. So does
      // tf_half_pixel_for_nn at scale 1 (it reads o + 0.5).
      resized[d] = runtimeScales || crop || coord == "tf_half_pixel_for_nn" ||
                   !sameDim(op, d) || (!scales.empty() && scales[d] != 1.0);
      if (!resized[d])
        continue;
      // Static sizes as constants; dynamic ones read at run time.
      auto i64 = [&](Value index) -> Value {
        return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
      };
      if (xType.isDynamicDim(d)) {
        // Taps clamp to [0, in - 1]: an empty input has none to read.
        requireNonZero(op, op.getX(), d);
        Value in = i64(tensor::DimOp::create(b, loc, x, d));
        sizes[d].in = arith::SIToFPOp::create(b, loc, f64, in);
        sizes[d].last = arith::SubIOp::create(
            b, loc, in, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1)));
      } else {
        sizes[d].in = f64c(xType.getDimSize(d));
        sizes[d].last =
            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(xType.getDimSize(d) - 1));
      }
      sizes[d].out = yType.isDynamicDim(d)
                         ? Value(arith::SIToFPOp::create(
                               b, loc, f64, i64(dynamicDimSize(b, loc, yType, d))))
                         : f64c(yType.getDimSize(d));
      if (runtimeScales)
        scale[d] = readF64(adaptor.getScales(), d);
      else if (!scales.empty())
        scale[d] = f64c(scales[d]);
      else
        scale[d] = arith::DivFOp::create(b, loc, sizes[d].out, sizes[d].in);
      if (crop) {
        roiStart[d] = readF64(adaptor.getRoi(), d);
        roiEnd[d] = readF64(adaptor.getRoi(), d + rank);
      }
    }
    // Nearest reads one tap with weight 1: no weights to multiply.
    bool weighted = isa<FloatType>(et) && mode != "nearest";
    int64_t numTaps = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
    // Each resized dim's taps for every output position along it, computed
    // once at run time into small tables (the static path's, built before
    // the resize reads them): an i64 index and a weight (of the element
    // type) per tap, and for a crop whether the position extrapolates.
    SmallVector<SmallVector<Value>> index(rank), weight(rank);
    SmallVector<Value> valid(rank);
    // A dim of one output position (a batch or channel dim resized by a
    // run-time scale) computes its taps in the generic over the output
    // instead: a table of one would be a 0-d generic, which the GPU
    // mapping leaves on the host.
    auto inlineTaps = [&](int64_t d) { return yType.getDimSize(d) == 1; };
    for (int64_t d = 0; d < rank; ++d) {
      if (!resized[d] || inlineTaps(d))
        continue;
      SmallVector<Value> outSizes;
      if (yType.isDynamicDim(d))
        outSizes.push_back(dynamicDimSize(b, loc, yType, d));
      SmallVector<Value> inits;
      auto table = [&](Type t) {
        auto type = RankedTensorType::get({yType.getDimSize(d)}, t);
        inits.push_back(emptyTensor(b, loc, type, outSizes));
      };
      for (int64_t k = 0; k < numTaps; ++k)
        table(b.getI64Type());
      if (weighted)
        for (int64_t k = 0; k < numTaps; ++k)
          table(et);
      if (crop)
        table(b.getI1Type());
      auto generic = linalg::GenericOp::create(
          b, loc, ValueRange(inits).getTypes(), ValueRange{}, inits,
          SmallVector<AffineMap>(inits.size(), b.getMultiDimIdentityMap(1)),
          {utils::IteratorType::parallel}, [&](OpBuilder &nb, Location l, ValueRange) {
            RuntimeTaps t = buildRuntimeTaps(
                nb, l, mode, coord, op.getNearestMode(), cubicA, op.getExcludeOutside() != 0,
                linalg::IndexOp::create(nb, l, 0), scale[d], sizes[d], roiStart[d], roiEnd[d]);
            SmallVector<Value> yields(t.index);
            if (weighted)
              for (Value w : t.weight)
                yields.push_back(et.isF64() ? w : Value(arith::TruncFOp::create(nb, l, et, w)));
            if (crop)
              yields.push_back(t.valid);
            linalg::YieldOp::create(nb, l, yields);
          });
      ValueRange tables = generic.getResults();
      index[d].assign(tables.begin(), tables.begin() + numTaps);
      if (weighted)
        weight[d].assign(tables.begin() + numTaps, tables.begin() + 2 * numTaps);
      if (crop)
        valid[d] = tables.back();
    }
    rewriter.replaceOp(op, generateTensor(
        b, loc, yType, [&](OpBuilder &nb, Location l) -> Value {
          SmallVector<Value> pos;
          int64_t combos = 1;
          for (int64_t d = 0; d < rank; ++d) {
            pos.push_back(linalg::IndexOp::create(nb, l, d));
            if (resized[d])
              combos *= numTaps;
          }
          auto read = [&](Value table, int64_t d) -> Value {
            return tensor::ExtractOp::create(nb, l, table, ValueRange{pos[d]});
          };
          // The inline dims' taps, as the tables would hold them.
          SmallVector<RuntimeTaps> taps(rank);
          Value inlineValid;
          for (int64_t d = 0; d < rank; ++d) {
            if (!resized[d] || !inlineTaps(d))
              continue;
            taps[d] = buildRuntimeTaps(nb, l, mode, coord, op.getNearestMode(), cubicA,
                                       op.getExcludeOutside() != 0, pos[d], scale[d], sizes[d],
                                       roiStart[d], roiEnd[d]);
            if (weighted && !et.isF64())
              for (Value &w : taps[d].weight)
                w = arith::TruncFOp::create(nb, l, et, w);
            if (taps[d].valid)
              inlineValid = inlineValid ? Value(arith::AndIOp::create(nb, l, inlineValid,
                                                                      taps[d].valid))
                                        : taps[d].valid;
          }
          // Every combination of taps of the resized dims.
          Value acc;
          for (int64_t c = 0; c < combos; ++c) {
            SmallVector<Value> at(pos);
            Value w;
            int64_t rem = c;
            for (int64_t d = 0; d < rank; ++d) {
              if (!resized[d])
                continue;
              int64_t tap = rem % numTaps;
              rem /= numTaps;
              Value i = inlineTaps(d) ? taps[d].index[tap] : read(index[d][tap], d);
              at[d] = arith::IndexCastOp::create(nb, l, nb.getIndexType(), i);
              if (weighted) {
                Value wd = inlineTaps(d) ? taps[d].weight[tap] : read(weight[d][tap], d);
                w = w ? Value(arith::MulFOp::create(nb, l, w, wd)) : wd;
              }
            }
            Value v = tensor::ExtractOp::create(nb, l, x, at);
            if (!weighted) {
              acc = v; // nearest: one tap
              break;
            }
            Value term = w ? Value(arith::MulFOp::create(nb, l, v, w)) : v;
            acc = acc ? Value(arith::AddFOp::create(nb, l, acc, term)) : term;
          }
          for (int64_t d = 0; d < rank; ++d)
            if (valid[d])
              acc = arith::SelectOp::create(nb, l, read(valid[d], d), acc,
                                            scalarConstant(nb, l, et, extrapolation));
          if (inlineValid)
            acc = arith::SelectOp::create(nb, l, inlineValid, acc,
                                          scalarConstant(nb, l, et, extrapolation));
          return acc;
        }));
    return success();
  }

  LogicalResult
  matchAndRewrite(onnx::ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    int64_t rank = xType.getRank();
    Type et = xType.getElementType();
    Type elem = elementTypeOf(op.getX());
    StringRef mode = op.getMode(), coord = op.getCoordinateTransformationMode();
    if (mode != "nearest" && mode != "linear" && mode != "cubic")
      return unsupported(rewriter, op, "mode '" + mode.str() + "' is not supported");
    if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                             "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                             "tf_crop_and_resize"},
                            coord))
      return unsupported(rewriter, op,
                         "coordinate_transformation_mode '" + coord.str() + "' is not supported");
    if (mode != "nearest" && !isSupportedFloat(elem))
      return unsupported(rewriter, op, mode.str() + " resize of " + typeName(elem) +
                                           " is not supported yet");
    if (mode == "nearest" && !isSupportedFloat(elem) && !isSupportedInt(elem) && !isBool(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    bool dynamic = !xType.hasStaticShape() || !yType.hasStaticShape();
    if (!dynamic && (xType.getNumElements() == 0 || yType.getNumElements() == 0))
      return unsupported(rewriter, op, "empty tensors are not supported");
    // Scales: the given ones, else output / input.
    SmallVector<double> scales;
    bool runtimeScales = false;
    if (!onnx::isNone(op.getScales())) {
      auto s = floatsOf(op.getScales());
      auto sType = cast<RankedTensorType>(adaptor.getScales().getType());
      if (s)
        scales = *s;
      else if (sType.getNumElements() != 0)
        runtimeScales = true;
    }
    bool runtimeRoi = coord == "tf_crop_and_resize" &&
                      (onnx::isNone(op.getRoi()) || !floatsOf(op.getRoi()));
    if (!scales.empty() && static_cast<int64_t>(scales.size()) != rank)
      return unsupported(rewriter, op, "scales must have one value per dim");
    if (runtimeScales || runtimeRoi || dynamic)
      return computedResize(op, adaptor, rewriter, runtimeScales, scales);
    if (scales.empty())
      for (int64_t d = 0; d < rank; ++d)
        scales.push_back(static_cast<double>(yType.getDimSize(d)) / xType.getDimSize(d));
    SmallVector<double> roi;
    if (coord == "tf_crop_and_resize") {
      auto r = onnx::isNone(op.getRoi()) ? std::nullopt : floatsOf(op.getRoi());
      if (!r || static_cast<int64_t>(r->size()) != 2 * rank)
        return unsupported(rewriter, op, "tf_crop_and_resize needs a constant roi");
      roi = *r;
    }
    double cubicA = op.getCubicCoeffAAttr() ? op.getCubicCoeffAAttr().getValueAsDouble() : -0.75;
    double extrapolation =
        op.getExtrapolationValueAttr() ? op.getExtrapolationValueAttr().getValueAsDouble() : 0.0;
    SmallVector<DimTable> tables;
    for (int64_t d = 0; d < rank; ++d)
      tables.push_back(buildTable(mode, coord, op.getNearestMode(), cubicA,
                                  op.getExcludeOutside() != 0, scales[d], xType.getDimSize(d),
                                  yType.getDimSize(d), roi.empty() ? 0 : roi[d],
                                  roi.empty() ? 1 : roi[d + rank]));
    // Constant tables for the resized dims.
    OpBuilder &b = rewriter;
    // Nearest reads one tap with weight 1: no weights to multiply.
    bool isFloat = isa<FloatType>(et) && mode != "nearest";
    SmallVector<Value> idxTables(rank), wTables(rank), validTables(rank);
    for (int64_t d = 0; d < rank; ++d) {
      DimTable &t = tables[d];
      if (t.identity)
        continue;
      int64_t out = yType.getDimSize(d);
      auto idxType = RankedTensorType::get({out, t.taps}, b.getI64Type());
      idxTables[d] = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(idxType, ArrayRef<int64_t>(t.index)));
      if (isFloat) {
        auto wType = RankedTensorType::get({out, t.taps}, et);
        DenseElementsAttr wAttr;
        if (et.isF32()) {
          SmallVector<float> f(t.weight.begin(), t.weight.end());
          wAttr = DenseElementsAttr::get(wType, ArrayRef<float>(f));
        } else {
          wAttr = DenseElementsAttr::get(wType, ArrayRef<double>(t.weight));
        }
        wTables[d] = arith::ConstantOp::create(b, loc, wAttr);
      }
      if (t.anyInvalid) {
        auto vType = RankedTensorType::get({out}, b.getI1Type());
        validTables[d] = arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(vType, ArrayRef<bool>(SmallVector<bool>(t.valid))));
      }
    }
    rewriter.replaceOp(op, generateTensor(
        b, loc, yType, [&](OpBuilder &nb, Location l) -> Value {
          SmallVector<Value> pos;
          for (int64_t d = 0; d < rank; ++d)
            pos.push_back(linalg::IndexOp::create(nb, l, d));
          // Enumerate every combination of taps of the resized dims.
          SmallVector<int64_t> resized;
          int64_t combos = 1;
          for (int64_t d = 0; d < rank; ++d)
            if (!tables[d].identity) {
              resized.push_back(d);
              combos *= tables[d].taps;
            }
          Value acc;
          for (int64_t c = 0; c < combos; ++c) {
            SmallVector<Value> at(pos);
            Value w;
            int64_t rem = c;
            for (int64_t d : resized) {
              int64_t tap = rem % tables[d].taps;
              rem /= tables[d].taps;
              Value t = arith::ConstantIndexOp::create(nb, l, tap);
              Value i = tensor::ExtractOp::create(nb, l, idxTables[d], ValueRange{pos[d], t});
              at[d] = arith::IndexCastOp::create(nb, l, nb.getIndexType(), i);
              if (isFloat) {
                Value wd = tensor::ExtractOp::create(nb, l, wTables[d], ValueRange{pos[d], t});
                w = w ? Value(arith::MulFOp::create(nb, l, w, wd)) : wd;
              }
            }
            Value v = tensor::ExtractOp::create(nb, l, x, at);
            if (!isFloat) {
              acc = v; // nearest: one tap
              break;
            }
            Value term = w ? Value(arith::MulFOp::create(nb, l, v, w)) : v;
            acc = acc ? Value(arith::AddFOp::create(nb, l, acc, term)) : term;
          }
          for (int64_t d = 0; d < rank; ++d) {
            if (!validTables[d])
              continue;
            Value ok = tensor::ExtractOp::create(nb, l, validTables[d], ValueRange{pos[d]});
            acc = arith::SelectOp::create(nb, l, ok, acc, scalarConstant(nb, l, et, extrapolation));
          }
          return acc;
        }));
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateResizePatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ResizePattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
