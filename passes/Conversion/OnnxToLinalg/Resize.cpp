//===- Resize.cpp - Resize -> linalg.generic with compile-time tap tables --===//
//
// Shapes are static, so every output position's source taps and weights
// are known at compile time. For each resized dim this computes, in double
// precision and following the ONNX reference's rules, a table of tap
// indices and weights (1 tap for nearest, 2 for linear, 4 for cubic;
// exclude_outside renormalises; out-of-range taps read the edge) and, for
// tf_crop_and_resize, which positions extrapolate. The generic over the
// output reads the tables and blends tensor.extract'ed taps. Dims the
// resize leaves alone read their own position.
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

/// The same rules as buildTable, as IR, for a scale (and roi) known only at
/// run time: the taps of output position `o` along a dim of sizes in/out.
struct RuntimeTaps {
  SmallVector<Value> index;  ///< index values
  SmallVector<Value> weight; ///< f64
  Value valid;               ///< i1, or null
};

RuntimeTaps buildRuntimeTaps(OpBuilder &b, Location l, StringRef mode, StringRef coord,
                             StringRef nearestMode, double cubicA, bool excludeOutside,
                             Value o, Value scale, int64_t in, int64_t out, Value roiStart,
                             Value roiEnd) {
  Type f64 = b.getF64Type();
  auto c = [&](double v) { return arith::ConstantOp::create(b, l, b.getFloatAttr(f64, v)).getResult(); };
  auto add = [&](Value x, Value y) { return arith::AddFOp::create(b, l, x, y).getResult(); };
  auto sub = [&](Value x, Value y) { return arith::SubFOp::create(b, l, x, y).getResult(); };
  auto mul = [&](Value x, Value y) { return arith::MulFOp::create(b, l, x, y).getResult(); };
  auto div = [&](Value x, Value y) { return arith::DivFOp::create(b, l, x, y).getResult(); };
  Value xo = arith::SIToFPOp::create(b, l, f64,
                                     arith::IndexCastOp::create(b, l, b.getI64Type(), o));
  Value x;
  if (coord == "pytorch_half_pixel")
    x = out > 1 ? sub(div(add(xo, c(0.5)), scale), c(0.5)) : c(0);
  else if (coord == "align_corners")
    x = out == 1 ? c(0) : div(mul(xo, c(in - 1)), sub(mul(c(in), scale), c(1)));
  else if (coord == "asymmetric")
    x = div(xo, scale);
  else if (coord == "tf_half_pixel_for_nn")
    x = div(add(xo, c(0.5)), scale);
  else if (coord == "tf_crop_and_resize")
    x = out > 1 ? add(mul(roiStart, c(in - 1)),
                      mul(xo, div(mul(sub(roiEnd, roiStart), c(in - 1)), c(out - 1))))
                : mul(mul(c(0.5), add(roiStart, roiEnd)), c(in - 1));
  else if (coord == "half_pixel_symmetric")
    x = add(mul(c(in / 2.0), sub(c(1), div(c(out), mul(scale, c(in))))),
            sub(div(add(xo, c(0.5)), scale), c(0.5)));
  else
    x = sub(div(add(xo, c(0.5)), scale), c(0.5));
  RuntimeTaps t;
  if (coord == "tf_crop_and_resize")
    t.valid = arith::AndIOp::create(
        b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, x, c(0)),
        arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, x, c(in - 1)));
  Value fl = math::FloorOp::create(b, l, x);
  Value ratio = sub(x, fl);
  Value i0 = arith::FPToSIOp::create(b, l, b.getI64Type(), fl);
  auto i64c = [&](int64_t v) {
    return arith::ConstantOp::create(b, l, b.getI64IntegerAttr(v)).getResult();
  };
  Value isInt = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, ratio, c(0));
  SmallVector<Value> idx, w;
  if (mode == "nearest") {
    Value up;
    if (nearestMode == "round_prefer_ceil")
      up = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, ratio, c(0.5));
    else if (nearestMode == "floor")
      up = arith::ConstantIntOp::create(b, l, 0, 1);
    else if (nearestMode == "ceil")
      up = arith::ConstantIntOp::create(b, l, 1, 1);
    else
      up = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, ratio, c(0.5));
    up = arith::AndIOp::create(b, l, up, arith::XOrIOp::create(
                                              b, l, isInt, arith::ConstantIntOp::create(b, l, 1, 1)));
    idx.push_back(arith::SelectOp::create(b, l, up, arith::AddIOp::create(b, l, i0, i64c(1)), i0));
    w.push_back(c(1));
  } else {
    // Integral coordinates take the taps below, with ratio 1.
    i0 = arith::SelectOp::create(b, l, isInt, arith::SubIOp::create(b, l, i0, i64c(1)), i0);
    ratio = arith::SelectOp::create(b, l, isInt, c(1), ratio);
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
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, idx[k], i64c(in)));
      w[k] = arith::SelectOp::create(b, l, inside, w[k], c(0));
      sum = add(sum, w[k]);
    }
    Value nz = arith::CmpFOp::create(b, l, arith::CmpFPredicate::ONE, sum, c(0));
    for (Value &v : w)
      v = arith::SelectOp::create(b, l, nz, div(v, sum), v);
  }
  for (Value i : idx) {
    Value clamped = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, i, i64c(0)),
                                           i64c(in - 1));
    t.index.push_back(arith::IndexCastOp::create(b, l, b.getIndexType(), clamped));
  }
  t.weight = w;
  return t;
}

struct ResizePattern : public OpConversionPattern<onnx::ResizeOp> {
  using OpConversionPattern::OpConversionPattern;

  /// Scales or roi given at run time: the taps are computed in the generic
  /// (f64) with the same rules. Dims whose size does not change are read
  /// in place (their scale is taken to be 1).
  LogicalResult runtimeResize(onnx::ResizeOp op, OpAdaptor adaptor,
                              ConversionPatternRewriter &rewriter, bool runtimeScales) const {
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
    auto readF64 = [&](Value t, int64_t i) -> Value {
      Value v = tensor::ExtractOp::create(b, loc, t, ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
      if (v.getType() != f64)
        v = arith::ExtFOp::create(b, loc, f64, v);
      return v;
    };
    SmallVector<Value> scale(rank), roiStart(rank), roiEnd(rank);
    SmallVector<bool> resized(rank);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t in = xType.getDimSize(d), out = yType.getDimSize(d);
      // With run-time scales even a dim that keeps its size may move its
      // samples (floor(in * 1.2) can equal in): resize every dim.
      resized[d] = runtimeScales || in != out || crop;
      scale[d] = runtimeScales ? readF64(adaptor.getScales(), d)
                               : arith::ConstantOp::create(
                                     b, loc, b.getFloatAttr(f64, static_cast<double>(out) / in));
      if (crop) {
        roiStart[d] = readF64(adaptor.getRoi(), d);
        roiEnd[d] = readF64(adaptor.getRoi(), d + rank);
      }
    }
    bool isFloat = isa<FloatType>(et);
    rewriter.replaceOp(op, generateTensor(
        b, loc, yType, [&](OpBuilder &nb, Location l) -> Value {
          SmallVector<Value> pos;
          SmallVector<RuntimeTaps> taps(rank);
          int64_t combos = 1;
          Value valid;
          for (int64_t d = 0; d < rank; ++d) {
            pos.push_back(linalg::IndexOp::create(nb, l, d));
            if (!resized[d])
              continue;
            taps[d] = buildRuntimeTaps(nb, l, mode, coord, op.getNearestMode(), cubicA,
                                       op.getExcludeOutside() != 0, pos[d], scale[d],
                                       xType.getDimSize(d), yType.getDimSize(d), roiStart[d],
                                       roiEnd[d]);
            combos *= taps[d].index.size();
            if (taps[d].valid)
              valid = valid ? Value(arith::AndIOp::create(nb, l, valid, taps[d].valid))
                            : taps[d].valid;
          }
          Value acc;
          for (int64_t c = 0; c < combos; ++c) {
            SmallVector<Value> at(pos);
            Value w;
            int64_t rem = c;
            for (int64_t d = 0; d < rank; ++d) {
              if (!resized[d])
                continue;
              int64_t n = taps[d].index.size(), t = rem % n;
              rem /= n;
              at[d] = taps[d].index[t];
              w = w ? Value(arith::MulFOp::create(nb, l, w, taps[d].weight[t])) : taps[d].weight[t];
            }
            Value v = tensor::ExtractOp::create(nb, l, x, at);
            if (!isFloat) {
              acc = v;
              break;
            }
            Value term = v;
            if (w) {
              Value wt = et.isF64() ? w : Value(arith::TruncFOp::create(nb, l, et, w));
              term = arith::MulFOp::create(nb, l, v, wt);
            }
            acc = acc ? Value(arith::AddFOp::create(nb, l, acc, term)) : term;
          }
          if (valid)
            acc = arith::SelectOp::create(nb, l, valid, acc, scalarConstant(nb, l, et, extrapolation));
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
    if (xType.getNumElements() == 0 || yType.getNumElements() == 0)
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
    if (runtimeScales || runtimeRoi)
      return runtimeResize(op, adaptor, rewriter, runtimeScales);
    if (scales.empty())
      for (int64_t d = 0; d < rank; ++d)
        scales.push_back(static_cast<double>(yType.getDimSize(d)) / xType.getDimSize(d));
    if (static_cast<int64_t>(scales.size()) != rank)
      return unsupported(rewriter, op, "scales must have one value per dim");
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
