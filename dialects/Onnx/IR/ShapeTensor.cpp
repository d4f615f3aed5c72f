//===- ShapeTensor.cpp - Shape functions of data-movement and reductions --===//
//
// Ops whose result shape depends on attributes or on constant operands
// (Reshape's shape, Slice's starts/ends, Unsqueeze's axes...). When such an
// operand is not constant yet, only the rank is inferred; folding may make it
// constant later and the shape function runs again.
//
//===----------------------------------------------------------------------===//

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include <algorithm>

using namespace mlir;
using namespace kiln::onnx;

namespace {
constexpr int64_t kDyn = ShapedType::kDynamic;

int64_t rankOf1D(Value v) {
  MaybeShape s = shapeOf(v);
  if (!s || s->size() != 1 || ShapedType::isDynamic((*s)[0]))
    return -1;
  return (*s)[0];
}

/// Shape after removing/keeping reduced axes.
LogicalResult reduceShape(Operation *op, Value data,
                          std::optional<SmallVector<int64_t>> axes,
                          bool keepDims, bool noopWithEmptyAxes,
                          Value result) {
  MaybeShape in = shapeOf(data);
  if (!in)
    return success();
  int64_t rank = in->size();
  if (!axes) // Axes given but not constant: only the rank may be known.
    return keepDims ? refineRank(op, result, rank) : success();
  SmallVector<bool> reduced(rank, false);
  if (axes->empty()) {
    if (noopWithEmptyAxes)
      return refineResult(op, result, in);
    reduced.assign(rank, true);
  }
  for (int64_t a : *axes) {
    auto axis = normalizeAxis(op, a, rank, "axis");
    if (failed(axis))
      return failure();
    reduced[*axis] = true;
  }
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      out.push_back((*in)[i]);
    else if (keepDims)
      out.push_back(1);
  }
  return refineResult(op, result, out);
}

template <typename OpTy>
LogicalResult reduceWithAttr(OpTy op) {
  std::optional<SmallVector<int64_t>> axes = SmallVector<int64_t>();
  if (auto a = op.getAxes())
    axes = SmallVector<int64_t>(a->begin(), a->end());
  return reduceShape(op, op.getData(), axes, op.getKeepdims() != 0, false,
                     op.getReduced());
}
} // namespace

#define REDUCE_ATTR(OP)                                                        \
  LogicalResult OP##Op::inferShapes() { return reduceWithAttr(*this); }
REDUCE_ATTR(ReduceMean)
REDUCE_ATTR(ReduceMax)
REDUCE_ATTR(ReduceMin)
REDUCE_ATTR(ReduceProd)
REDUCE_ATTR(ReduceL1)
REDUCE_ATTR(ReduceL2)
REDUCE_ATTR(ReduceLogSum)
REDUCE_ATTR(ReduceLogSumExp)
REDUCE_ATTR(ReduceSumSquare)
#undef REDUCE_ATTR

LogicalResult ReduceSumOp::inferShapes() {
  std::optional<SmallVector<int64_t>> axes = SmallVector<int64_t>();
  if (!isNone(getAxes()))
    axes = constantInts(getAxes());
  return reduceShape(*this, getData(), axes, getKeepdims() != 0,
                     getNoopWithEmptyAxes() != 0, getReduced());
}

LogicalResult ArgMaxOp::inferShapes() {
  return reduceShape(*this, getData(), SmallVector<int64_t>{getAxis()},
                     getKeepdims() != 0, false, getReduced());
}

LogicalResult ArgMinOp::inferShapes() {
  return reduceShape(*this, getData(), SmallVector<int64_t>{getAxis()},
                     getKeepdims() != 0, false, getReduced());
}

LogicalResult TransposeOp::inferShapes() {
  MaybeShape in = shapeOf(getData());
  if (!in)
    return success();
  int64_t rank = in->size();
  SmallVector<int64_t> perm;
  if (auto p = getPerm())
    perm.assign(p->begin(), p->end());
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOpError("perm has ") << perm.size() << " entries for rank "
                                    << rank;
  SmallVector<int64_t> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank)
      return emitOpError("perm entry ") << p << " is out of range";
    out.push_back((*in)[p]);
  }
  return refineResult(*this, getTransposed(), out);
}

LogicalResult ReshapeOp::inferShapes() {
  // Entries computed from a dynamic dim (Shape of it) are unknown here.
  auto target = partialInts(getShape());
  if (!target) {
    int64_t rank = rankOf1D(getShape());
    return rank >= 0 ? refineRank(*this, getReshaped(), rank) : success();
  }
  MaybeShape in = shapeOf(getData());
  SmallVector<int64_t> out;
  int64_t inferIndex = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    int64_t d = (*target)[i];
    if (ShapedType::isDynamic(d)) {
      out.push_back(kDyn);
    } else if (d == -1) {
      if (inferIndex >= 0)
        return emitOpError("shape has more than one -1");
      inferIndex = i;
      out.push_back(kDyn);
    } else if (d == 0 && !getAllowzero()) {
      if (in && i >= in->size())
        return emitOpError("shape copies dim ")
               << i << " but the input has rank " << in->size();
      out.push_back(in ? (*in)[i] : kDyn);
    } else if (d < 0) {
      return emitOpError("shape has invalid dim ") << d;
    } else {
      out.push_back(d);
    }
  }
  if (inferIndex >= 0 && in) {
    int64_t total = product(*in);
    SmallVector<int64_t> known(out);
    known.erase(known.begin() + inferIndex);
    int64_t rest = product(known);
    if (!ShapedType::isDynamic(total) && !ShapedType::isDynamic(rest)) {
      if (rest == 0 || total % rest != 0)
        return emitOpError("cannot reshape ")
               << total << " elements with a -1 and " << rest << " others";
      out[inferIndex] = total / rest;
    }
  } else if (in) {
    int64_t total = product(*in), got = product(out);
    if (!ShapedType::isDynamic(total) && !ShapedType::isDynamic(got) &&
        total != got)
      return emitOpError("cannot reshape ")
             << total << " elements into " << got;
  }
  return refineResult(*this, getReshaped(), out);
}

LogicalResult FlattenOp::inferShapes() {
  MaybeShape in = shapeOf(getInput());
  if (!in)
    return refineRank(*this, getOutput(), 2);
  int64_t rank = in->size();
  int64_t axis = getAxis();
  if (axis < -rank || axis > rank)
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << rank;
  if (axis < 0)
    axis += rank;
  ArrayRef<int64_t> dims(*in);
  return refineResult(*this, getOutput(),
                      SmallVector<int64_t>{product(dims.take_front(axis)),
                                           product(dims.drop_front(axis))});
}

LogicalResult ConcatOp::inferShapes() {
  MaybeShape first;
  for (Value v : getInputs())
    if ((first = shapeOf(v)))
      break;
  if (!first)
    return success();
  int64_t rank = first->size();
  auto axis = normalizeAxis(*this, getAxis(), rank, "axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> out(rank, kDyn);
  int64_t sum = 0;
  for (Value v : getInputs()) {
    MaybeShape s = shapeOf(v);
    if (!s) {
      sum = kDyn;
      continue;
    }
    if (static_cast<int64_t>(s->size()) != rank)
      return emitOpError("inputs have different ranks");
    for (int64_t i = 0; i < rank; ++i) {
      if (i == *axis)
        continue;
      int64_t d = (*s)[i];
      if (ShapedType::isDynamic(d))
        continue;
      if (!ShapedType::isDynamic(out[i]) && out[i] != d)
        return emitOpError("inputs differ in dim ") << i << ": " << out[i]
                                                    << " vs " << d;
      out[i] = d;
    }
    int64_t d = (*s)[*axis];
    sum = (ShapedType::isDynamic(sum) || ShapedType::isDynamic(d)) ? kDyn
                                                                   : sum + d;
  }
  out[*axis] = sum;
  return refineResult(*this, getConcatResult(), out);
}

LogicalResult SqueezeOp::inferShapes() {
  MaybeShape in = shapeOf(getData());
  if (!in)
    return success();
  int64_t rank = in->size();
  SmallVector<bool> drop(rank, false);
  if (isNone(getAxes())) {
    for (int64_t i = 0; i < rank; ++i) {
      if (ShapedType::isDynamic((*in)[i]))
        return success(); // Which dims go is not known yet.
      drop[i] = (*in)[i] == 1;
    }
  } else {
    auto axes = constantInts(getAxes());
    if (!axes) {
      int64_t n = rankOf1D(getAxes());
      if (n > rank)
        return emitOpError("squeezes ") << n << " axes of a rank-" << rank << " input";
      return n >= 0 ? refineRank(*this, getSqueezed(), rank - n) : success();
    }
    for (int64_t a : *axes) {
      auto axis = normalizeAxis(*this, a, rank, "axis");
      if (failed(axis))
        return failure();
      int64_t d = (*in)[*axis];
      if (!ShapedType::isDynamic(d) && d != 1)
        return emitOpError("cannot squeeze dim ") << *axis << " of size " << d;
      drop[*axis] = true;
    }
  }
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      out.push_back((*in)[i]);
  return refineResult(*this, getSqueezed(), out);
}

LogicalResult UnsqueezeOp::inferShapes() {
  MaybeShape in = shapeOf(getData());
  auto axes = constantInts(getAxes());
  if (!in)
    return success();
  if (!axes) {
    int64_t n = rankOf1D(getAxes());
    return n >= 0 ? refineRank(*this, getExpanded(), in->size() + n)
                  : success();
  }
  int64_t rank = in->size() + axes->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    auto axis = normalizeAxis(*this, a, rank, "axis");
    if (failed(axis))
      return failure();
    if (inserted[*axis])
      return emitOpError("axis ") << a << " is repeated";
    inserted[*axis] = true;
  }
  SmallVector<int64_t> out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(inserted[i] ? 1 : (*in)[next++]);
  return refineResult(*this, getExpanded(), out);
}

LogicalResult GatherOp::inferShapes() {
  MaybeShape data = shapeOf(getData()), indices = shapeOf(getIndices());
  if (!data || !indices)
    return success();
  auto axis = normalizeAxis(*this, getAxis(), data->size(), "axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> out(data->begin(), data->begin() + *axis);
  out.append(indices->begin(), indices->end());
  out.append(data->begin() + *axis + 1, data->end());
  return refineResult(*this, getOutput(), out);
}

LogicalResult ShapeOp::inferShapes() {
  MaybeShape in = shapeOf(getData());
  if (!in)
    return success();
  auto [start, end] = shapeOpRange(in->size(), getStart(), getEnd());
  return refineResult(*this, getShape(),
                      SmallVector<int64_t>{std::max<int64_t>(end - start, 0)});
}

LogicalResult SizeOp::inferShapes() {
  return refineResult(*this, getSize(), SmallVector<int64_t>{});
}

LogicalResult ConstantOp::inferShapes() {
  if (auto value = getValue())
    return refineResult(*this, getOutput(),
                        SmallVector<int64_t>(
                            cast<ShapedType>(value->getType()).getShape()));
  return success();
}

LogicalResult ConstantOfShapeOp::inferShapes() {
  // Known in part: a dim read by Shape off a tensor with a dynamic one.
  auto dims = partialInts(getInput());
  if (!dims) {
    int64_t rank = rankOf1D(getInput());
    return rank >= 0 ? refineRank(*this, getOutput(), rank) : success();
  }
  for (int64_t d : *dims)
    if (!ShapedType::isDynamic(d) && d < 0)
      return emitOpError("shape has a negative dim ") << d;
  return refineResult(*this, getOutput(), *dims);
}

LogicalResult ExpandOp::inferShapes() {
  // Constant elements, or ones known from shapes (torch's expand to a
  // length read off another tensor).
  auto dims = partialInts(getShape());
  if (!dims)
    return success();
  auto out = broadcastShapes(*this, {shapeOf(getInput()), MaybeShape(*dims)});
  if (failed(out))
    return failure();
  return refineResult(*this, getOutput(), *out);
}

LogicalResult RangeOp::inferShapes() {
  DenseElementsAttr start = constantOf(getStart()),
                    limit = constantOf(getLimit()),
                    delta = constantOf(getDelta());
  if (!start || !limit || !delta || start.getNumElements() != 1 ||
      limit.getNumElements() != 1 || delta.getNumElements() != 1) {
    // Integer bounds known from shapes (torch's arange(x.shape[1])).
    auto known = [](Value v) -> std::optional<int64_t> {
      std::optional<SmallVector<int64_t>> p = partialInts(v);
      if (!p || p->size() != 1 || ShapedType::isDynamic((*p)[0]))
        return std::nullopt;
      return (*p)[0];
    };
    std::optional<int64_t> s = known(getStart()), l = known(getLimit()), d = known(getDelta());
    if (!s || !l || !d || *d == 0)
      return refineRank(*this, getOutput(), 1);
    int64_t n = *d > 0 ? (*l - *s + *d - 1) / *d : (*s - *l - *d - 1) / -*d;
    return refineResult(*this, getOutput(), SmallVector<int64_t>{std::max<int64_t>(0, n)});
  }
  auto scalar = [](DenseElementsAttr a) -> double {
    if (isa<FloatType>(a.getElementType()))
      return (*a.getValues<APFloat>().begin()).convertToDouble();
    return static_cast<double>((*a.getValues<APInt>().begin()).getSExtValue());
  };
  double s = scalar(start), l = scalar(limit), d = scalar(delta);
  if (d == 0)
    return emitOpError("delta is zero");
  double n = std::ceil((l - s) / d);
  if (!(n < 1e12))
    return emitOpError("range has too many elements");
  return refineResult(*this, getOutput(),
                      SmallVector<int64_t>{std::max<int64_t>(0, n)});
}

LogicalResult SliceOp::inferShapes() {
  MaybeShape in = shapeOf(getData());
  if (!in)
    return success();
  int64_t rank = in->size();
  auto starts = constantInts(getStarts()), ends = constantInts(getEnds());
  std::optional<SmallVector<int64_t>> axes, steps;
  if (!isNone(getAxes()))
    axes = constantInts(getAxes());
  if (!isNone(getSteps()))
    steps = constantInts(getSteps());
  if (!starts || !ends || (!isNone(getAxes()) && !axes) ||
      (!isNone(getSteps()) && !steps))
    return refineRank(*this, getOutput(), rank);
  size_t n = starts->size();
  if (ends->size() != n || (axes && axes->size() != n) ||
      (steps && steps->size() != n))
    return emitOpError("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> out(*in);
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes ? (*axes)[i] : static_cast<int64_t>(i);
    auto axis = normalizeAxis(*this, a, rank, "axis");
    if (failed(axis))
      return failure();
    int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0)
      return emitOpError("step is zero");
    int64_t dim = (*in)[*axis];
    if (ShapedType::isDynamic(dim)) {
      out[*axis] = kDyn;
      continue;
    }
    int64_t s = (*starts)[i], e = (*ends)[i];
    if (s < 0)
      s += dim;
    if (e < 0 && e > std::numeric_limits<int64_t>::min() / 2)
      e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      out[*axis] = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      out[*axis] = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
  }
  return refineResult(*this, getOutput(), out);
}

LogicalResult TileOp::inferShapes() {
  MaybeShape in = shapeOf(getInput());
  auto repeats = constantInts(getRepeats());
  if (!in)
    return success();
  if (!repeats)
    return refineRank(*this, getOutput(), in->size());
  if (repeats->size() != in->size())
    return emitOpError("repeats has ") << repeats->size()
                                       << " entries for rank " << in->size();
  SmallVector<int64_t> out;
  for (size_t i = 0; i < in->size(); ++i) {
    if ((*repeats)[i] < 0)
      return emitOpError("repeats must be >= 0");
    out.push_back(ShapedType::isDynamic((*in)[i]) ? kDyn
                                                  : (*in)[i] * (*repeats)[i]);
  }
  return refineResult(*this, getOutput(), out);
}

LogicalResult SplitOp::inferShapes() {
  MaybeShape in = shapeOf(getInput());
  if (!in)
    return success();
  int64_t rank = in->size();
  auto axis = normalizeAxis(*this, getAxis(), rank, "axis");
  if (failed(axis))
    return failure();
  int64_t numOut = getNumResults();
  int64_t dim = (*in)[*axis];
  SmallVector<int64_t> sizes;
  if (!isNone(getSplit())) {
    auto split = constantInts(getSplit());
    if (!split) {
      for (Value r : getOutputs())
        if (failed(refineRank(*this, r, rank)))
          return failure();
      return success();
    }
    if (static_cast<int64_t>(split->size()) != numOut)
      return emitOpError("split has ") << split->size() << " entries for "
                                       << numOut << " outputs";
    int64_t total = 0;
    for (int64_t s : *split) {
      if (s < 0)
        return emitOpError("split sizes must be >= 0");
      total += s;
    }
    if (!ShapedType::isDynamic(dim) && total != dim)
      return emitOpError("split sizes add up to ")
             << total << ", dim " << *axis << " is " << dim;
    sizes.assign(split->begin(), split->end());
  } else if (ShapedType::isDynamic(dim)) {
    sizes.assign(numOut, kDyn);
  } else {
    if (numOut == 0 || dim % numOut != 0)
      return emitOpError("dim ") << dim << " does not split evenly into "
                                 << numOut << " outputs";
    sizes.assign(numOut, dim / numOut);
  }
  for (int64_t i = 0; i < numOut; ++i) {
    SmallVector<int64_t> out(*in);
    out[*axis] = sizes[i];
    if (failed(refineResult(*this, getResult(i), out)))
      return failure();
  }
  return success();
}
