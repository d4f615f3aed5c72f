//===- ShapeMisc.cpp - Shape functions of the remaining onnx ops -----------===//
//
// Pad, Resize, depth/space rearrangements, TopK, OneHot, the Gather/Scatter
// family, quantisation ops, the recurrent ops (RNN, GRU, LSTM), GridSample,
// RoiAlign and Det.
//
//===----------------------------------------------------------------------===//

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include <cmath>

using namespace mlir;
using namespace kiln::onnx;

namespace {
constexpr int64_t kDyn = ShapedType::kDynamic;

LogicalResult sameAs(Operation *op, Value from, Value result) {
  return refineResult(op, result, shapeOf(from));
}
} // namespace

#define SAME_AS(OP, FROM, RESULT)                                              \
  LogicalResult OP##Op::inferShapes() {                                        \
    return sameAs(*this, get##FROM(), get##RESULT());                          \
  }
SAME_AS(GatherElements, Indices, Output)
SAME_AS(ScatterElements, Data, Output)
SAME_AS(ScatterND, Data, Output)
SAME_AS(Scatter, Data, Output)
SAME_AS(Trilu, Input, Output)
SAME_AS(QuantizeLinear, X, Y)
SAME_AS(DequantizeLinear, X, Y)
SAME_AS(EyeLike, Input, Output)
SAME_AS(ReverseSequence, Input, Y)
#undef SAME_AS

LogicalResult DynamicQuantizeLinearOp::inferShapes() {
  // y_scale and y_zero_point are scalars (rank 0) whatever x is.
  if (failed(refineResult(*this, getYScale(), SmallVector<int64_t>{})) ||
      failed(refineResult(*this, getYZeroPoint(), SmallVector<int64_t>{})))
    return failure();
  return sameAs(*this, getX(), getY());
}

LogicalResult NonZeroOp::inferShapes() {
  MaybeShape x = shapeOf(getX());
  if (!x)
    return refineRank(*this, getY(), 2);
  return refineResult(*this, getY(),
                      SmallVector<int64_t>{static_cast<int64_t>(x->size()),
                                           kDyn});
}

LogicalResult PadOp::inferShapes() {
  MaybeShape in = shapeOf(getData());
  if (!in)
    return success();
  auto pads = constantInts(getPads());
  if (!pads)
    return refineRank(*this, getOutput(), in->size());
  size_t rank = in->size();
  if (pads->size() != 2 * rank)
    return emitOpError("pads has ") << pads->size() << " values for rank "
                                    << rank;
  SmallVector<int64_t> out;
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = (*in)[i];
    out.push_back(ShapedType::isDynamic(d) ? kDyn
                                           : d + (*pads)[i] +
                                                 (*pads)[i + rank]);
  }
  return refineResult(*this, getOutput(), out);
}

LogicalResult ResizeOp::inferShapes() {
  MaybeShape in = shapeOf(getX());
  if (!in)
    return success();
  size_t rank = in->size();
  if (!isNone(getSizes())) {
    // Known in part: torch's `interpolate(x, size=y.shape[2:])` reads the
    // sizes of another tensor with Shape; its unknown elements stay `?`.
    auto sizes = partialInts(getSizes());
    if (!sizes)
      return refineRank(*this, getY(), rank);
    if (sizes->size() != rank)
      return emitOpError("sizes has ") << sizes->size() << " values for rank "
                                       << rank;
    return refineResult(*this, getY(), *sizes);
  }
  DenseElementsAttr scales = constantOf(getScales());
  if (!scales || !isa<FloatType>(scales.getElementType()))
    return refineRank(*this, getY(), rank);
  if (static_cast<size_t>(scales.getNumElements()) != rank)
    return emitOpError("scales has ") << scales.getNumElements()
                                      << " values for rank " << rank;
  SmallVector<int64_t> out;
  size_t i = 0;
  for (const APFloat &s : scales.getValues<APFloat>()) {
    double scale = s.convertToDouble();
    if (!(scale > 0))
      return emitOpError("scales must be > 0");
    int64_t d = (*in)[i++];
    out.push_back(ShapedType::isDynamic(d)
                      ? kDyn
                      : static_cast<int64_t>(std::floor(d * scale)));
  }
  return refineResult(*this, getY(), out);
}

LogicalResult DepthToSpaceOp::inferShapes() {
  MaybeShape in = shapeOf(getInput());
  if (!in)
    return success();
  if (in->size() != 4)
    return emitOpError("input must be 4-D");
  int64_t b = getBlocksize();
  auto mul = [](int64_t d, int64_t f) {
    return ShapedType::isDynamic(d) ? kDyn : d * f;
  };
  int64_t c = (*in)[1];
  if (!ShapedType::isDynamic(c) && c % (b * b) != 0)
    return emitOpError("channels (") << c << ") are not divisible by "
                                     << b * b;
  return refineResult(*this, getOutput(),
                      SmallVector<int64_t>{(*in)[0],
                                           ShapedType::isDynamic(c)
                                               ? kDyn
                                               : c / (b * b),
                                           mul((*in)[2], b),
                                           mul((*in)[3], b)});
}

LogicalResult SpaceToDepthOp::inferShapes() {
  MaybeShape in = shapeOf(getInput());
  if (!in)
    return success();
  if (in->size() != 4)
    return emitOpError("input must be 4-D");
  int64_t b = getBlocksize();
  SmallVector<int64_t> out{(*in)[0], ShapedType::isDynamic((*in)[1])
                                         ? kDyn
                                         : (*in)[1] * b * b};
  for (int i = 2; i < 4; ++i) {
    int64_t d = (*in)[i];
    if (!ShapedType::isDynamic(d) && d % b != 0)
      return emitOpError("dim ") << i << " (" << d
                                 << ") is not divisible by blocksize " << b;
    out.push_back(ShapedType::isDynamic(d) ? kDyn : d / b);
  }
  return refineResult(*this, getOutput(), out);
}

LogicalResult TopKOp::inferShapes() {
  MaybeShape in = shapeOf(getX());
  if (!in)
    return success();
  auto axis = normalizeAxis(*this, getAxis(), in->size(), "axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> out(*in);
  auto k = constantInts(getK());
  if (k && k->size() == 1) {
    if ((*k)[0] < 0)
      return emitOpError("k must be >= 0");
    if (!ShapedType::isDynamic(out[*axis]) && (*k)[0] > out[*axis])
      return emitOpError("k (") << (*k)[0] << ") exceeds dim " << *axis
                                << " (" << out[*axis] << ")";
    out[*axis] = (*k)[0];
  } else {
    out[*axis] = kDyn;
  }
  if (failed(refineResult(*this, getValues(), out)))
    return failure();
  return refineResult(*this, getIndices(), out);
}

LogicalResult OneHotOp::inferShapes() {
  MaybeShape in = shapeOf(getIndices());
  if (!in)
    return success();
  int64_t rank = in->size() + 1;
  auto axis = normalizeAxis(*this, getAxis(), rank, "axis");
  if (failed(axis))
    return failure();
  int64_t depth = kDyn;
  if (DenseElementsAttr d = constantOf(getDepth());
      d && d.getNumElements() == 1) {
    if (isa<FloatType>(d.getElementType()))
      depth = static_cast<int64_t>(
          (*d.getValues<APFloat>().begin()).convertToDouble());
    else
      depth = (*d.getValues<APInt>().begin()).getSExtValue();
    if (depth < 1)
      return emitOpError("depth must be >= 1");
  }
  SmallVector<int64_t> out(*in);
  out.insert(out.begin() + *axis, depth);
  return refineResult(*this, getOutput(), out);
}

LogicalResult GatherNDOp::inferShapes() {
  // Spec: out = indices.shape[:-1] + data.shape[batch_dims + k:], where
  // k = indices.shape[-1].
  MaybeShape data = shapeOf(getData()), indices = shapeOf(getIndices());
  if (!data || !indices)
    return success();
  if (indices->empty())
    return emitOpError("indices must have rank >= 1");
  int64_t k = indices->back();
  if (ShapedType::isDynamic(k))
    return success();
  int64_t b = getBatchDims();
  if (b < 0 || b + k > static_cast<int64_t>(data->size()))
    return emitOpError("batch_dims + indices.shape[-1] exceeds the data rank");
  SmallVector<int64_t> out(indices->begin(), indices->end() - 1);
  out.append(data->begin() + b + k, data->end());
  return refineResult(*this, getOutput(), out);
}

namespace {
/// RNN, GRU, LSTM: X is [seq, batch, input] (layout 0) or [batch, seq,
/// input] (layout 1); Y is [seq, dirs, batch, hidden] or [batch, seq, dirs,
/// hidden]; Y_h and Y_c are [dirs, batch, hidden] or [batch, dirs, hidden].
template <typename OpTy>
LogicalResult recurrentShape(OpTy op, ArrayRef<Value> stateResults) {
  MaybeShape x = shapeOf(op.getX()), r = shapeOf(op.getR());
  if (!x)
    return success();
  if (x->size() != 3)
    return op.emitOpError("X must be 3-D");
  int64_t dirs = op.getDirection() == "bidirectional" ? 2 : 1;
  int64_t hidden = kDyn;
  if (auto h = op.getHiddenSize())
    hidden = *h;
  else if (r && r->size() == 3)
    hidden = (*r)[2];
  bool batchFirst = op.getLayout() != 0;
  int64_t seq = batchFirst ? (*x)[1] : (*x)[0];
  int64_t batch = batchFirst ? (*x)[0] : (*x)[1];
  if (!isNone(op.getY())) {
    SmallVector<int64_t> y =
        batchFirst ? SmallVector<int64_t>{batch, seq, dirs, hidden}
                   : SmallVector<int64_t>{seq, dirs, batch, hidden};
    if (failed(refineResult(op, op.getY(), y)))
      return failure();
  }
  SmallVector<int64_t> state = batchFirst
                                   ? SmallVector<int64_t>{batch, dirs, hidden}
                                   : SmallVector<int64_t>{dirs, batch, hidden};
  for (Value v : stateResults)
    if (!isNone(v) && failed(refineResult(op, v, state)))
      return failure();
  return success();
}
} // namespace

LogicalResult RNNOp::inferShapes() {
  return recurrentShape(*this, {getYH()});
}
LogicalResult GRUOp::inferShapes() {
  return recurrentShape(*this, {getYH()});
}
LogicalResult LSTMOp::inferShapes() {
  return recurrentShape(*this, {getYH(), getYC()});
}

LogicalResult GridSampleOp::inferShapes() {
  // Y: X's [N, C] and the grid's spatial dims ([N, D1_out, ..., r]).
  MaybeShape x = shapeOf(getX()), grid = shapeOf(getGrid());
  if (!x || !grid)
    return success();
  if (x->size() < 3 || grid->size() != x->size())
    return emitOpError("X must be [N, C, D...] and the grid [N, D_out..., ")
           << (x->size() >= 2 ? x->size() - 2 : 0) << "], of the same rank";
  SmallVector<int64_t> out = {(*x)[0], (*x)[1]};
  out.append(grid->begin() + 1, grid->end() - 1);
  return refineResult(*this, getY(), out);
}

LogicalResult RoiAlignOp::inferShapes() {
  // Y: [num_rois, C, output_height, output_width].
  MaybeShape x = shapeOf(getX()), rois = shapeOf(getRois());
  if (!x || !rois)
    return success();
  if (x->size() != 4 || rois->size() != 2)
    return emitOpError("X must be [N, C, H, W] and rois [num_rois, 4]");
  if (getOutputHeight() < 1 || getOutputWidth() < 1)
    return emitOpError("output_height and output_width must be >= 1");
  return refineResult(*this, getY(),
                      SmallVector<int64_t>{(*rois)[0], (*x)[1], int64_t(getOutputHeight()),
                                           int64_t(getOutputWidth())});
}

LogicalResult DetOp::inferShapes() {
  // Y: X's batch dims ([*, M, M] -> [*]).
  MaybeShape x = shapeOf(getX());
  if (!x)
    return success();
  if (x->size() < 2)
    return emitOpError("X must be [..., M, M]");
  return refineResult(*this, getY(), SmallVector<int64_t>(x->begin(), x->end() - 2));
}

namespace {
/// The one value of a constant scalar (or one-element) integer operand.
std::optional<int64_t> constantScalar(Value v) {
  std::optional<SmallVector<int64_t>> values = isNone(v) ? std::nullopt : constantInts(v);
  if (!values || values->size() != 1)
    return std::nullopt;
  return values->front();
}

/// A loss's output: the target's shape with reduction "none", else a
/// scalar.
LogicalResult lossShape(Operation *op, Value scores, Value target, StringRef reduction,
                        Value loss) {
  MaybeShape x = shapeOf(scores), t = shapeOf(target);
  if (reduction != "none" && reduction != "mean" && reduction != "sum")
    return op->emitOpError("reduction must be none, mean or sum, not '") << reduction << "'";
  if (x && x->size() < 2)
    return op->emitOpError("the scores must be [N, C, d1, ...]");
  if (x && t && t->size() + 1 != x->size())
    return op->emitOpError("the target must be [N, d1, ...], one dim fewer than the scores");
  if (reduction != "none")
    return refineResult(op, loss, SmallVector<int64_t>{});
  if (t)
    return refineResult(op, loss, t);
  if (!x)
    return success();
  // The scores without their class dim.
  SmallVector<int64_t> shape = {(*x)[0]};
  shape.append(x->begin() + 2, x->end());
  return refineResult(op, loss, shape);
}
} // namespace

LogicalResult DFTOp::inferShapes() {
  // The input's shape with two components last; along the axis
  // dft_length (else the input's length), L / 2 + 1 of it when onesided.
  MaybeShape x = shapeOf(getInput());
  if (!x)
    return success();
  int64_t rank = x->size();
  if (rank < 2 || (x->back() != kDyn && x->back() != 1 && x->back() != 2))
    return emitOpError("the input must be [..., 1] (real) or [..., 2] (complex)");
  FailureOr<int64_t> axis = normalizeAxis(*this, getAxis(), rank, "axis");
  if (failed(axis))
    return failure();
  if (*axis == rank - 1)
    return emitOpError("axis must not be the last dim (the components)");
  int64_t length = (*x)[*axis];
  if (!isNone(getDftLength())) {
    std::optional<int64_t> given = constantScalar(getDftLength());
    if (given && *given < 1)
      return emitOpError("dft_length must be at least 1, not ") << *given;
    length = given ? *given : kDyn;
  }
  SmallVector<int64_t> out(*x);
  out.back() = 2;
  out[*axis] = length == kDyn ? kDyn : getOnesided() != 0 ? length / 2 + 1 : length;
  return refineResult(*this, getOutput(), out);
}

LogicalResult STFTOp::inferShapes() {
  // [batch, frames, bins, 2]: frames = (signal_length - frame_length) /
  // frame_step + 1, bins = frame_length (/ 2 + 1 when onesided); the
  // frame length is frame_length's, else the window's.
  MaybeShape signal = shapeOf(getSignal());
  if (signal && (signal->size() != 3 ||
                 (signal->back() != kDyn && signal->back() != 1 && signal->back() != 2)))
    return emitOpError("the signal must be [batch, length, 1] or [batch, length, 2]");
  int64_t frameLength = kDyn;
  if (std::optional<int64_t> given = constantScalar(getFrameLength()))
    frameLength = *given;
  else if (MaybeShape window = isNone(getWindow()) ? std::nullopt : shapeOf(getWindow());
           isNone(getFrameLength()) && window && window->size() == 1)
    frameLength = window->front();
  std::optional<int64_t> step = constantScalar(getFrameStep());
  if (step && *step < 1)
    return emitOpError("frame_step must be at least 1, not ") << *step;
  if (frameLength != kDyn && frameLength < 1)
    return emitOpError("frame_length must be at least 1, not ") << frameLength;
  int64_t batch = signal ? (*signal)[0] : kDyn, frames = kDyn, bins = kDyn;
  if (signal && (*signal)[1] != kDyn && frameLength != kDyn && step) {
    if (frameLength > (*signal)[1])
      return emitOpError("frame_length ") << frameLength << " is longer than the signal ("
                                          << (*signal)[1] << ")";
    frames = ((*signal)[1] - frameLength) / *step + 1;
  }
  if (frameLength != kDyn)
    bins = getOnesided() != 0 ? frameLength / 2 + 1 : frameLength;
  return refineResult(*this, getOutput(), SmallVector<int64_t>{batch, frames, bins, 2});
}

LogicalResult MaxUnpoolOp::inferShapes() {
  // output_shape's values when given; else per spatial dim
  // (in - 1) * stride + kernel - pad_begin - pad_end.
  MaybeShape x = shapeOf(getX());
  if (!isNone(getOutputShape())) {
    if (std::optional<SmallVector<int64_t>> given = constantInts(getOutputShape())) {
      if (x && given->size() != x->size())
        return emitOpError("output_shape must have one value per dim of X");
      return refineResult(*this, getOutput(), *given);
    }
    return x ? refineRank(*this, getOutput(), x->size()) : success();
  }
  if (!x)
    return success();
  ArrayRef<int64_t> kernel = getKernelShape();
  int64_t sp = int64_t(kernel.size());
  if (int64_t(x->size()) != sp + 2)
    return emitOpError("kernel_shape must give every spatial dim of X");
  SmallVector<int64_t> strides(sp, 1), pads(2 * sp, 0);
  if (std::optional<ArrayRef<int64_t>> s = getStrides()) {
    if (int64_t(s->size()) != sp)
      return emitOpError("strides must give every spatial dim");
    strides.assign(s->begin(), s->end());
  }
  if (std::optional<ArrayRef<int64_t>> p = getPads()) {
    if (int64_t(p->size()) != 2 * sp)
      return emitOpError("pads must give a start and an end for every spatial dim");
    pads.assign(p->begin(), p->end());
  }
  SmallVector<int64_t> out = {(*x)[0], (*x)[1]};
  for (int64_t d = 0; d < sp; ++d) {
    int64_t in = (*x)[2 + d];
    if (in == kDyn) {
      out.push_back(kDyn);
      continue;
    }
    int64_t size = (in - 1) * strides[d] + kernel[d] - pads[d] - pads[sp + d];
    if (size < 1)
      return emitOpError("the output's spatial dim ") << d << " would be " << size;
    out.push_back(size);
  }
  return refineResult(*this, getOutput(), out);
}

LogicalResult NegativeLogLikelihoodLossOp::inferShapes() {
  return lossShape(*this, getInput(), getTarget(), getReduction(), getLoss());
}

LogicalResult SoftmaxCrossEntropyLossOp::inferShapes() {
  if (failed(lossShape(*this, getScores(), getLabels(), getReduction(), getOutput())))
    return failure();
  // log_prob: the scores' shape.
  if (!isNone(getLogProb()))
    return refineResult(*this, getLogProb(), shapeOf(getScores()));
  return success();
}
