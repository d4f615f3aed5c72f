//===- Folders.cpp - Constant folding of onnx ops --------------------------===//
//
// Folders for the ops that make up shape computations in exported models
// (Shape, Gather, Unsqueeze, Concat, Reshape, Cast, ConstantOfShape, Range,
// Expand, Slice, small integer arithmetic...). They only fold small dense
// constants (up to kMaxFoldElements elements) whose result type is already
// static: shape inference runs first and makes it so. Weights stored as dense
// resources are never touched.
//
//===----------------------------------------------------------------------===//

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace kiln::onnx;

namespace {

constexpr int64_t kMaxFoldElements = 1 << 16;

/// The result type if it is static and small enough to fold into.
RankedTensorType foldableType(Value result) {
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldElements)
    return {};
  return type;
}

DenseElementsAttr dense(Attribute a) {
  auto d = dyn_cast_or_null<DenseElementsAttr>(a);
  if (!d || d.getNumElements() > kMaxFoldElements)
    return {};
  return d;
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// For each element of `out` (row-major), the index of the element of an
/// operand of shape `in` that numpy broadcasting reads.
SmallVector<int64_t> broadcastMap(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  int64_t n = 1;
  for (int64_t d : out)
    n *= d;
  SmallVector<int64_t> map(n);
  SmallVector<int64_t> inStrides = stridesOf(in);
  SmallVector<int64_t> outStrides = stridesOf(out);
  size_t offset = out.size() - in.size();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, src = 0;
    for (size_t d = 0; d < out.size(); ++d) {
      int64_t c = rem / outStrides[d];
      rem %= outStrides[d];
      if (d >= offset && in[d - offset] != 1)
        src += c * inStrides[d - offset];
    }
    map[i] = src;
  }
  return map;
}

/// Applies `fn` elementwise with broadcasting to two dense constants of the
/// same element type; `fn` returns std::nullopt to give up.
template <typename Fn>
Attribute foldBinary(Attribute lhsAttr, Attribute rhsAttr, Value result,
                     Fn fn) {
  DenseElementsAttr lhs = dense(lhsAttr), rhs = dense(rhsAttr);
  RankedTensorType type = foldableType(result);
  if (!lhs || !rhs || !type || lhs.getElementType() != rhs.getElementType())
    return {};
  Type elem = lhs.getElementType();
  if (!elem.isIntOrFloat())
    return {};
  auto lmap = broadcastMap(lhs.getType().getShape(), type.getShape());
  auto rmap = broadcastMap(rhs.getType().getShape(), type.getShape());
  SmallVector<Attribute> lv(lhs.getValues<Attribute>());
  SmallVector<Attribute> rv(rhs.getValues<Attribute>());
  SmallVector<Attribute> out;
  out.reserve(lmap.size());
  for (size_t i = 0; i < lmap.size(); ++i) {
    std::optional<Attribute> r = fn(lv[lmap[i]], rv[rmap[i]]);
    if (!r || !*r)
      return {};
    out.push_back(*r);
  }
  if (!out.empty() && cast<TypedAttr>(out[0]).getType() !=
                          type.getElementType())
    return {};
  return DenseElementsAttr::get(type, out);
}

template <typename IntFn, typename FloatFn>
Attribute foldArith(Attribute a, Attribute b, Value result, IntFn intFn,
                    FloatFn floatFn) {
  return foldBinary(
      a, b, result, [&](Attribute x, Attribute y) -> std::optional<Attribute> {
        if (auto xi = dyn_cast<IntegerAttr>(x)) {
          auto r = intFn(xi.getValue(), cast<IntegerAttr>(y).getValue(),
                         xi.getType().isUnsignedInteger());
          if (!r)
            return std::nullopt;
          return Attribute(IntegerAttr::get(xi.getType(), *r));
        }
        if (auto xf = dyn_cast<FloatAttr>(x)) {
          APFloat r = floatFn(xf.getValue(), cast<FloatAttr>(y).getValue());
          return Attribute(FloatAttr::get(xf.getType(), r));
        }
        return std::nullopt;
      });
}

/// Reshapes a dense constant to the (static) result type.
OpFoldResult foldReshapeLike(Attribute data, Value input, Value result) {
  if (input.getType() == result.getType() &&
      cast<ShapedType>(result.getType()).hasStaticShape())
    return input;
  DenseElementsAttr d = dense(data);
  RankedTensorType type = foldableType(result);
  if (!d || !type || d.getNumElements() != type.getNumElements() ||
      d.getElementType() != type.getElementType())
    return {};
  return d.reshape(type);
}

} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) {
  // ConstantLike: always folds to its value (the verifier guarantees one).
  return getValueAttr();
}

OpFoldResult IdentityOp::fold(FoldAdaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  return {};
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto in = dyn_cast<RankedTensorType>(getData().getType());
  RankedTensorType type = foldableType(getShape());
  if (!in || !in.hasStaticShape() || !type)
    return {};
  auto [start, end] = shapeOpRange(in.getRank(), getStart(), getEnd());
  SmallVector<int64_t> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(in.getDimSize(i));
  if (static_cast<int64_t>(dims.size()) != type.getNumElements() ||
      !type.getElementType().isInteger(64))
    return {};
  return DenseElementsAttr::get(type, ArrayRef(dims));
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  auto in = dyn_cast<RankedTensorType>(getData().getType());
  RankedTensorType type = foldableType(getSize());
  if (!in || !in.hasStaticShape() || !type ||
      !type.getElementType().isInteger(64))
    return {};
  return DenseElementsAttr::get(type, ArrayRef<int64_t>{in.getNumElements()});
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr data = dense(adaptor.getData());
  auto indices = constantInts(getIndices());
  RankedTensorType type = foldableType(getOutput());
  if (!data || !indices || !type)
    return {};
  ArrayRef<int64_t> shape = data.getType().getShape();
  int64_t rank = shape.size();
  int64_t axis = getAxis() < 0 ? getAxis() + rank : getAxis();
  if (axis < 0 || axis >= rank)
    return {};
  int64_t outer = 1, inner = 1, dim = shape[axis];
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[i];
  for (int64_t i = axis + 1; i < rank; ++i)
    inner *= shape[i];
  SmallVector<Attribute> values(data.getValues<Attribute>());
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t idx : *indices) {
      if (idx < 0)
        idx += dim;
      if (idx < 0 || idx >= dim)
        return {}; // Out of range: left for run time to report.
      for (int64_t i = 0; i < inner; ++i)
        out.push_back(values[(o * dim + idx) * inner + i]);
    }
  if (static_cast<int64_t>(out.size()) != type.getNumElements())
    return {};
  return DenseElementsAttr::get(type, out);
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(adaptor.getData(), getData(), getExpanded());
}

OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(adaptor.getData(), getData(), getSqueezed());
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(adaptor.getData(), getData(), getReshaped());
}

OpFoldResult FlattenOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(adaptor.getInput(), getInput(), getOutput());
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  RankedTensorType type = foldableType(getConcatResult());
  if (!type)
    return {};
  if (getInputs().size() == 1 && getInputs()[0].getType() == type)
    return getInputs()[0];
  int64_t rank = type.getRank();
  int64_t axis = getAxis() < 0 ? getAxis() + rank : getAxis();
  if (axis < 0 || axis >= rank)
    return {};
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= type.getDimSize(i);
  SmallVector<SmallVector<Attribute>> inputs;
  SmallVector<int64_t> chunk;
  for (Attribute a : adaptor.getInputs()) {
    DenseElementsAttr d = dense(a);
    if (!d || d.getElementType() != type.getElementType())
      return {};
    inputs.emplace_back(d.getValues<Attribute>());
    chunk.push_back(outer ? d.getNumElements() / std::max<int64_t>(outer, 1)
                          : 0);
  }
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < inputs.size(); ++k)
      for (int64_t i = 0; i < chunk[k]; ++i)
        out.push_back(inputs[k][o * chunk[k] + i]);
  if (static_cast<int64_t>(out.size()) != type.getNumElements())
    return {};
  return DenseElementsAttr::get(type, out);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  DenseElementsAttr in = dense(adaptor.getInput());
  RankedTensorType type = foldableType(getOutput());
  if (!in || !type || !in.getElementType().isIntOrFloat())
    return {};
  Type to = type.getElementType();
  if (!to.isIntOrFloat())
    return {};
  // Bools are 0/1, not the sign-extended -1 of a 1-bit signless integer.
  bool fromUnsigned = in.getElementType().isUnsignedInteger() ||
                      in.getElementType().isInteger(1);
  SmallVector<Attribute> out;
  for (Attribute a : in.getValues<Attribute>()) {
    double asDouble;
    APInt asInt;
    bool isInt = false;
    if (auto i = dyn_cast<IntegerAttr>(a)) {
      isInt = true;
      asInt = i.getValue();
      asDouble = fromUnsigned ? static_cast<double>(asInt.getZExtValue())
                              : static_cast<double>(asInt.getSExtValue());
    } else {
      asDouble = cast<FloatAttr>(a).getValueAsDouble();
    }
    if (auto ft = dyn_cast<FloatType>(to)) {
      out.push_back(FloatAttr::get(ft, asDouble));
      continue;
    }
    unsigned width = to.getIntOrFloatBitWidth();
    APInt v;
    if (to.isInteger(1)) {
      v = APInt(1, isInt ? !asInt.isZero() : asDouble != 0);
    } else if (isInt) {
      v = fromUnsigned ? asInt.zextOrTrunc(width) : asInt.sextOrTrunc(width);
    } else {
      if (!std::isfinite(asDouble) || std::fabs(asDouble) > 9.2e18)
        return {};
      v = APInt(64, static_cast<int64_t>(asDouble), /*isSigned=*/true)
              .sextOrTrunc(width);
    }
    out.push_back(IntegerAttr::get(to, v));
  }
  return DenseElementsAttr::get(type, out);
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  RankedTensorType type = foldableType(getOutput());
  if (!type || !constantInts(getInput()))
    return {};
  if (auto value = getValue()) {
    auto d = dyn_cast<DenseElementsAttr>(*value);
    if (!d || d.getNumElements() != 1 ||
        d.getElementType() != type.getElementType())
      return {};
    return DenseElementsAttr::get(type, *d.getValues<Attribute>().begin());
  }
  if (!type.getElementType().isF32())
    return {};
  return DenseElementsAttr::get(type, 0.0f);
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr start = dense(adaptor.getStart()),
                    delta = dense(adaptor.getDelta());
  RankedTensorType type = foldableType(getOutput());
  if (!start || !delta || !type || start.getNumElements() != 1 ||
      delta.getNumElements() != 1)
    return {};
  Type elem = type.getElementType();
  SmallVector<Attribute> out;
  if (isa<FloatType>(elem)) {
    double s = (*start.getValues<APFloat>().begin()).convertToDouble();
    double d = (*delta.getValues<APFloat>().begin()).convertToDouble();
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      out.push_back(FloatAttr::get(elem, s + i * d));
  } else if (auto it = dyn_cast<IntegerType>(elem)) {
    int64_t s = (*start.getValues<APInt>().begin()).getSExtValue();
    int64_t d = (*delta.getValues<APInt>().begin()).getSExtValue();
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      out.push_back(IntegerAttr::get(elem, s + i * d));
  } else {
    return {};
  }
  return DenseElementsAttr::get(type, out);
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldArith(
      adaptor.getA(), adaptor.getB(), getC(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a + b;
      },
      [](APFloat a, const APFloat &b) {
        a.add(b, APFloat::rmNearestTiesToEven);
        return a;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldArith(
      adaptor.getA(), adaptor.getB(), getC(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a - b;
      },
      [](APFloat a, const APFloat &b) {
        a.subtract(b, APFloat::rmNearestTiesToEven);
        return a;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldArith(
      adaptor.getA(), adaptor.getB(), getC(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a * b;
      },
      [](APFloat a, const APFloat &b) {
        a.multiply(b, APFloat::rmNearestTiesToEven);
        return a;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldArith(
      adaptor.getA(), adaptor.getB(), getC(),
      [](const APInt &a, const APInt &b,
         bool isUnsigned) -> std::optional<APInt> {
        if (b.isZero())
          return std::nullopt; // Left for run time.
        return isUnsigned ? a.udiv(b) : a.sdiv(b);
      },
      [](APFloat a, const APFloat &b) {
        a.divide(b, APFloat::rmNearestTiesToEven);
        return a;
      });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr in = dense(adaptor.getX());
  RankedTensorType type = foldableType(getY());
  if (!in || !type || in.getType() != type)
    return {};
  SmallVector<Attribute> out;
  for (Attribute a : in.getValues<Attribute>()) {
    if (auto i = dyn_cast<IntegerAttr>(a))
      out.push_back(IntegerAttr::get(i.getType(), -i.getValue()));
    else if (auto f = dyn_cast<FloatAttr>(a))
      out.push_back(FloatAttr::get(f.getType(), -f.getValue()));
    else
      return {};
  }
  return DenseElementsAttr::get(type, out);
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  Type i1 = IntegerType::get(getContext(), 1);
  return foldBinary(
      adaptor.getA(), adaptor.getB(), getC(),
      [&](Attribute x, Attribute y) -> std::optional<Attribute> {
        bool equal;
        if (auto xf = dyn_cast<FloatAttr>(x)) // IEEE: -0 == 0, NaN != NaN.
          equal = xf.getValue().compare(cast<FloatAttr>(y).getValue()) ==
                  APFloat::cmpEqual;
        else
          equal = cast<IntegerAttr>(x).getValue() ==
                  cast<IntegerAttr>(y).getValue();
        return Attribute(IntegerAttr::get(i1, equal));
      });
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr cond = dense(adaptor.getCondition()),
                    x = dense(adaptor.getX()), y = dense(adaptor.getY());
  RankedTensorType type = foldableType(getOutput());
  if (!cond || !x || !y || !type ||
      x.getElementType() != type.getElementType() ||
      y.getElementType() != type.getElementType())
    return {};
  auto cmap = broadcastMap(cond.getType().getShape(), type.getShape());
  auto xmap = broadcastMap(x.getType().getShape(), type.getShape());
  auto ymap = broadcastMap(y.getType().getShape(), type.getShape());
  SmallVector<bool> cv(cond.getValues<bool>());
  SmallVector<Attribute> xv(x.getValues<Attribute>()),
      yv(y.getValues<Attribute>());
  SmallVector<Attribute> out;
  for (size_t i = 0; i < cmap.size(); ++i)
    out.push_back(cv[cmap[i]] ? xv[xmap[i]] : yv[ymap[i]]);
  return DenseElementsAttr::get(type, out);
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr in = dense(adaptor.getInput());
  RankedTensorType type = foldableType(getOutput());
  if (!in || !type || in.getElementType() != type.getElementType() ||
      in.getType().getRank() > type.getRank())
    return {};
  if (in.isSplat())
    return DenseElementsAttr::get(type, in.getSplatValue<Attribute>());
  auto map = broadcastMap(in.getType().getShape(), type.getShape());
  SmallVector<Attribute> values(in.getValues<Attribute>()), out;
  for (int64_t i : map)
    out.push_back(values[i]);
  return DenseElementsAttr::get(type, out);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr in = dense(adaptor.getData());
  RankedTensorType type = foldableType(getOutput());
  auto starts = constantInts(getStarts());
  if (!in || !type || !starts || in.getElementType() != type.getElementType())
    return {};
  ArrayRef<int64_t> shape = in.getType().getShape();
  int64_t rank = shape.size();
  if (type.getRank() != rank)
    return {};
  std::optional<SmallVector<int64_t>> axes, steps;
  if (!isNone(getAxes()) && !(axes = constantInts(getAxes())))
    return {};
  if (!isNone(getSteps()) && !(steps = constantInts(getSteps())))
    return {};
  // Per-dim start and step; sizes come from the (inferred) result type.
  SmallVector<int64_t> start(rank, 0), step(rank, 1);
  for (size_t i = 0; i < starts->size(); ++i) {
    int64_t a = axes ? (*axes)[i] : static_cast<int64_t>(i);
    if (a < 0)
      a += rank;
    if (a < 0 || a >= rank)
      return {};
    int64_t st = steps ? (*steps)[i] : 1, s = (*starts)[i], dim = shape[a];
    if (s < 0)
      s += dim;
    s = st > 0 ? std::clamp<int64_t>(s, 0, dim)
               : std::clamp<int64_t>(s, 0, dim - 1);
    start[a] = s;
    step[a] = st;
  }
  SmallVector<int64_t> inStrides = stridesOf(shape);
  SmallVector<int64_t> outStrides = stridesOf(type.getShape());
  SmallVector<Attribute> values(in.getValues<Attribute>()), out;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    int64_t rem = i, src = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t c = rem / outStrides[d];
      rem %= outStrides[d];
      int64_t idx = start[d] + c * step[d];
      if (idx < 0 || idx >= shape[d])
        return {};
      src += idx * inStrides[d];
    }
    out.push_back(values[src]);
  }
  return DenseElementsAttr::get(type, out);
}
