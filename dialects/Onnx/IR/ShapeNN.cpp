//===- ShapeNN.cpp - Shape functions of matmul, conv, pooling, Einsum ------===//

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include <map>

using namespace mlir;
using namespace kiln::onnx;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// Output size of one spatial dim of a convolution or pooling window.
int64_t windowOutput(int64_t in, int64_t kernel, int64_t stride,
                     int64_t dilation, int64_t padBegin, int64_t padEnd,
                     StringRef autoPad, bool ceilMode) {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel))
    return kDyn;
  int64_t effective = (kernel - 1) * dilation + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
    return (in + stride - 1) / stride;
  if (autoPad == "VALID")
    return in < effective ? 0 : (in - effective) / stride + 1;
  int64_t span = in + padBegin + padEnd - effective;
  if (span < 0)
    return -1; // Reported by the caller as a negative dim.
  if (!ceilMode)
    return span / stride + 1;
  int64_t out = (span + stride - 1) / stride + 1;
  // With ceil_mode, the last window must start inside the input or its
  // left padding (PyTorch, ONNX Runtime, and the ONNX spec from opset 19).
  if ((out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

/// windowOutput as floor((in + a) / stride) for every input size that gives
/// at least one window: {a, stride}, or none when ceil_mode's rule about the
/// last window makes it depend on more than that.
std::optional<std::pair<int64_t, int64_t>> windowFloor(int64_t kernel, int64_t stride,
                                                       int64_t dilation, int64_t padBegin,
                                                       int64_t padEnd, StringRef autoPad,
                                                       bool ceilMode) {
  if (ShapedType::isDynamic(kernel) || kernel < 1 || stride < 1 || dilation < 1)
    return std::nullopt;
  int64_t effective = (kernel - 1) * dilation + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
    return std::make_pair(stride - 1, stride);
  if (autoPad == "VALID")
    return std::make_pair(stride - effective, stride);
  int64_t pads = padBegin + padEnd;
  if (!ceilMode)
    return std::make_pair(pads - effective + stride, stride);
  // (out - 1) * stride <= span + stride - 1 < in + padBegin unless the end
  // pad and the stride reach past the window.
  if (padEnd + stride > effective)
    return std::nullopt;
  return std::make_pair(pads - effective + 2 * stride - 1, stride);
}

/// Shared by Conv and the pooling ops: [N, C, spatial...] with C given.
LogicalResult windowShape(Operation *op, Value x, int64_t channels,
                          ArrayRef<int64_t> kernel,
                          std::optional<ArrayRef<int64_t>> pads,
                          std::optional<ArrayRef<int64_t>> strides,
                          std::optional<ArrayRef<int64_t>> dilations,
                          StringRef autoPad, bool ceilMode, Value result) {
  MaybeShape in = shapeOf(x);
  if (!in)
    return success();
  int64_t spatial = static_cast<int64_t>(in->size()) - 2;
  if (spatial < 1)
    return op->emitOpError("input must have rank >= 3, got ") << in->size();
  auto check = [&](std::optional<ArrayRef<int64_t>> a, size_t n,
                   StringRef name) -> LogicalResult {
    if (a && a->size() != n)
      return op->emitOpError() << name << " has " << a->size()
                               << " values, expected " << n;
    return success();
  };
  if (static_cast<int64_t>(kernel.size()) != spatial)
    return op->emitOpError("kernel has ")
           << kernel.size() << " spatial dims, input has " << spatial;
  if (failed(check(pads, 2 * spatial, "pads")) ||
      failed(check(strides, spatial, "strides")) ||
      failed(check(dilations, spatial, "dilations")))
    return failure();
  SmallVector<int64_t> out{(*in)[0], channels};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t s = strides ? (*strides)[i] : 1;
    int64_t d = dilations ? (*dilations)[i] : 1;
    if (s < 1 || d < 1)
      return op->emitOpError("strides and dilations must be >= 1");
    int64_t pb = pads ? (*pads)[i] : 0, pe = pads ? (*pads)[i + spatial] : 0;
    if (pb < 0 || pe < 0)
      return op->emitOpError("pads must be >= 0");
    out.push_back(windowOutput((*in)[2 + i], kernel[i], s, d, pb, pe, autoPad,
                               ceilMode));
  }
  return refineResult(op, result, out);
}

} // namespace

namespace {
/// numpy.matmul: 1-D operands are promoted and the added dim removed;
/// batch dims broadcast.
LogicalResult matmulShape(Operation *op, Value lhs, Value rhs, Value result) {
  MaybeShape a = shapeOf(lhs), b = shapeOf(rhs);
  if (!a || !b)
    return success();
  if (a->empty() || b->empty())
    return op->emitOpError("operands must have rank >= 1");
  SmallVector<int64_t> sa(*a), sb(*b);
  bool vecA = sa.size() == 1, vecB = sb.size() == 1;
  if (vecA)
    sa.insert(sa.begin(), 1);
  if (vecB)
    sb.push_back(1);
  int64_t ka = sa[sa.size() - 1], kb = sb[sb.size() - 2];
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb)
    return op->emitOpError("inner dims differ: ") << ka << " vs " << kb;
  MaybeShape batchA = SmallVector<int64_t>(sa.begin(), sa.end() - 2);
  MaybeShape batchB = SmallVector<int64_t>(sb.begin(), sb.end() - 2);
  auto batch = broadcastShapes(op, {batchA, batchB});
  if (failed(batch))
    return failure();
  SmallVector<int64_t> out(**batch);
  if (!vecA)
    out.push_back(sa[sa.size() - 2]);
  if (!vecB)
    out.push_back(sb[sb.size() - 1]);
  return refineResult(op, result, out);
}

/// Conv-like ops: W is (M, C/group, k...), kernel_shape may override.
template <typename OpTy>
LogicalResult convShape(OpTy op) {
  MaybeShape w = shapeOf(op.getW());
  if (!w)
    return success();
  if (w->size() < 3)
    return op.emitOpError("W must have rank >= 3, got ") << w->size();
  SmallVector<int64_t> kernel;
  if (auto ks = op.getKernelShape())
    kernel.assign(ks->begin(), ks->end());
  else
    kernel.assign(w->begin() + 2, w->end());
  return windowShape(op, op.getX(), (*w)[0], kernel, op.getPads(),
                     op.getStrides(), op.getDilations(), op.getAutoPad(),
                     false, op.getY());
}
} // namespace

LogicalResult MatMulOp::inferShapes() {
  return matmulShape(*this, getA(), getB(), getY());
}

LogicalResult MatMulIntegerOp::inferShapes() {
  return matmulShape(*this, getA(), getB(), getY());
}

LogicalResult QLinearMatMulOp::inferShapes() {
  return matmulShape(*this, getA(), getB(), getY());
}

LogicalResult GemmOp::inferShapes() {
  MaybeShape a = shapeOf(getA()), b = shapeOf(getB());
  if (!a || !b)
    return success();
  if (a->size() != 2 || b->size() != 2)
    return emitOpError("A and B must be 2-D");
  int64_t m = getTransA() ? (*a)[1] : (*a)[0];
  int64_t ka = getTransA() ? (*a)[0] : (*a)[1];
  int64_t kb = getTransB() ? (*b)[1] : (*b)[0];
  int64_t n = getTransB() ? (*b)[0] : (*b)[1];
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb)
    return emitOpError("inner dims differ: ") << ka << " vs " << kb;
  // Spec: C broadcasts unidirectionally to (M, N).
  if (MaybeShape c = shapeOf(getC())) {
    if (c->size() > 2)
      return emitOpError("C must have rank <= 2, got ") << c->size();
    SmallVector<int64_t> mn{m, n};
    for (size_t i = 0; i < c->size(); ++i) {
      int64_t d = (*c)[i], want = mn[2 - c->size() + i];
      if (!ShapedType::isDynamic(d) && !ShapedType::isDynamic(want) &&
          d != 1 && d != want)
        return emitOpError("C's dim ") << i << " (" << d
                                       << ") does not broadcast to " << want;
    }
  }
  return refineResult(*this, getY(), SmallVector<int64_t>{m, n});
}

LogicalResult ConvOp::inferShapes() { return convShape(*this); }
LogicalResult ConvIntegerOp::inferShapes() { return convShape(*this); }
LogicalResult QLinearConvOp::inferShapes() { return convShape(*this); }

LogicalResult ConvTransposeOp::inferShapes() {
  // Spec: W is (C, M/group, k...); out = stride * (in - 1) + output_padding
  // + ((k - 1) * dilation + 1) - pads, unless output_shape is given.
  MaybeShape x = shapeOf(getX()), w = shapeOf(getW());
  if (!x || !w)
    return success();
  int64_t spatial = static_cast<int64_t>(x->size()) - 2;
  if (spatial < 1 || static_cast<int64_t>(w->size()) != spatial + 2)
    return emitOpError("X and W must have the same rank >= 3");
  auto attr = [&](std::optional<ArrayRef<int64_t>> a, size_t n,
                  StringRef name) -> FailureOr<SmallVector<int64_t>> {
    if (!a)
      return SmallVector<int64_t>();
    if (a->size() != n)
      return emitOpError() << name << " has " << a->size()
                           << " values, expected " << n;
    return SmallVector<int64_t>(a->begin(), a->end());
  };
  auto pads = attr(getPads(), 2 * spatial, "pads");
  auto strides = attr(getStrides(), spatial, "strides");
  auto dilations = attr(getDilations(), spatial, "dilations");
  auto outPad = attr(getOutputPadding(), spatial, "output_padding");
  auto kernelAttr = attr(getKernelShape(), spatial, "kernel_shape");
  if (failed(pads) || failed(strides) || failed(dilations) ||
      failed(outPad) || failed(kernelAttr))
    return failure();
  int64_t channels = ShapedType::isDynamic((*w)[1])
                         ? kDyn
                         : (*w)[1] * static_cast<int64_t>(getGroup());
  SmallVector<int64_t> out{(*x)[0], channels};
  auto given = getOutputShape();
  if (given && given->size() != static_cast<size_t>(spatial) &&
      given->size() != static_cast<size_t>(spatial + 2))
    return emitOpError("output_shape has ") << given->size() << " values";
  for (int64_t i = 0; i < spatial; ++i) {
    if (given) {
      out.push_back((*given)[given->size() - spatial + i]);
      continue;
    }
    int64_t in = (*x)[2 + i];
    int64_t k = kernelAttr->empty() ? (*w)[2 + i] : (*kernelAttr)[i];
    int64_t s = strides->empty() ? 1 : (*strides)[i];
    int64_t d = dilations->empty() ? 1 : (*dilations)[i];
    int64_t op = outPad->empty() ? 0 : (*outPad)[i];
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      out.push_back(kDyn);
      continue;
    }
    if (getAutoPad() == "SAME_UPPER" || getAutoPad() == "SAME_LOWER") {
      out.push_back(in * s);
      continue;
    }
    int64_t p = pads->empty() ? 0 : (*pads)[i] + (*pads)[i + spatial];
    out.push_back(s * (in - 1) + op + (k - 1) * d + 1 - p);
  }
  return refineResult(*this, getY(), out);
}

LogicalResult MaxPoolOp::inferShapes() {
  MaybeShape x = shapeOf(getX());
  if (!x || x->size() < 2)
    return success();
  if (failed(windowShape(*this, getX(), (*x)[1], getKernelShape(), getPads(),
                         getStrides(), getDilations(), getAutoPad(),
                         getCeilMode() != 0, getY())))
    return failure();
  if (!isNone(getIndices()))
    return refineResult(*this, getIndices(), shapeOf(getY()));
  return success();
}

LogicalResult AveragePoolOp::inferShapes() {
  MaybeShape x = shapeOf(getX());
  if (!x || x->size() < 2)
    return success();
  return windowShape(*this, getX(), (*x)[1], getKernelShape(), getPads(),
                     getStrides(), std::nullopt, getAutoPad(),
                     getCeilMode() != 0, getY());
}

LogicalResult LpPoolOp::inferShapes() {
  MaybeShape x = shapeOf(getX());
  if (!x || x->size() < 2)
    return success();
  return windowShape(*this, getX(), (*x)[1], getKernelShape(), getPads(),
                     getStrides(), std::nullopt, getAutoPad(), false, getY());
}

namespace {
LogicalResult globalPool(Operation *op) {
  MaybeShape x = shapeOf(op->getOperand(0));
  if (!x)
    return success();
  if (x->size() < 3)
    return op->emitOpError("input must have rank >= 3");
  SmallVector<int64_t> out(*x);
  for (size_t i = 2; i < out.size(); ++i)
    out[i] = 1;
  return refineResult(op, op->getResult(0), out);
}
} // namespace

LogicalResult GlobalAveragePoolOp::inferShapes() { return globalPool(*this); }
LogicalResult GlobalMaxPoolOp::inferShapes() { return globalPool(*this); }
LogicalResult GlobalLpPoolOp::inferShapes() { return globalPool(*this); }

std::optional<std::pair<int64_t, int64_t>> kiln::onnx::windowDimFloor(Operation *op,
                                                                      int64_t spatial) {
  auto at = [&](std::optional<ArrayRef<int64_t>> a, int64_t i, int64_t fill) {
    return a && i < int64_t(a->size()) ? (*a)[i] : fill;
  };
  auto rule = [&](auto window, int64_t kernel, std::optional<ArrayRef<int64_t>> dilations,
                  bool ceilMode) -> std::optional<std::pair<int64_t, int64_t>> {
    std::optional<ArrayRef<int64_t>> pads = window.getPads();
    int64_t sp = pads ? int64_t(pads->size()) / 2 : 0;
    if (spatial < 0 || (pads && spatial >= sp))
      return std::nullopt;
    return windowFloor(kernel, at(window.getStrides(), spatial, 1), at(dilations, spatial, 1),
                       at(pads, spatial, 0), pads ? at(pads, spatial + sp, 0) : 0,
                       window.getAutoPad(), ceilMode);
  };
  auto kernelAt = [&](std::optional<ArrayRef<int64_t>> ks, Value w) -> int64_t {
    if (ks)
      return at(ks, spatial, ShapedType::kDynamic);
    MaybeShape s = shapeOf(w);
    return s && spatial + 2 < int64_t(s->size()) ? (*s)[spatial + 2] : ShapedType::kDynamic;
  };
  if (auto conv = dyn_cast<ConvOp>(op))
    return rule(conv, kernelAt(conv.getKernelShape(), conv.getW()), conv.getDilations(), false);
  if (auto pool = dyn_cast<MaxPoolOp>(op))
    return rule(pool, at(pool.getKernelShape(), spatial, ShapedType::kDynamic),
                pool.getDilations(), pool.getCeilMode() != 0);
  if (auto pool = dyn_cast<AveragePoolOp>(op))
    return rule(pool, at(pool.getKernelShape(), spatial, ShapedType::kDynamic), std::nullopt,
                pool.getCeilMode() != 0);
  return std::nullopt;
}

LogicalResult EinsumOp::inferShapes() {
  std::string error;
  std::optional<EinsumTerms> terms = parseEinsum(getEquation(), error);
  if (!terms)
    return emitOpError(error);
  if (terms->inputs.size() != getInputs().size())
    return emitOpError("the equation '") << getEquation() << "' has " << terms->inputs.size()
                                         << " terms for " << getInputs().size() << " inputs";
  // Each letter's dim (equal wherever it is used), each input's ellipsis
  // dims (broadcast together as numpy's).
  std::map<char, int64_t> sizes;
  SmallVector<MaybeShape> ellipses;
  for (auto [ls, input] : llvm::zip(terms->inputs, getInputs())) {
    MaybeShape shape = shapeOf(input);
    if (!shape)
      return success();
    bool hasEllipsis = ls.find('.') != std::string::npos;
    int64_t named = int64_t(ls.size()) - (hasEllipsis ? 1 : 0);
    int64_t rank = int64_t(shape->size());
    if (hasEllipsis ? named > rank : named != rank)
      return emitOpError("a term of '") << getEquation() << "' does not fit its input's rank "
                                        << rank;
    int64_t pos = 0;
    for (char ch : ls) {
      if (ch == '.') {
        ellipses.push_back(
            SmallVector<int64_t>(shape->begin() + pos, shape->begin() + pos + (rank - named)));
        pos += rank - named;
        continue;
      }
      int64_t d = (*shape)[pos++];
      auto [it, fresh] = sizes.try_emplace(ch, d);
      if (fresh || ShapedType::isDynamic(d))
        continue;
      if (ShapedType::isDynamic(it->second))
        it->second = d;
      else if (it->second != d)
        return emitOpError("the letter '") << ch << "' stands for dims of " << it->second
                                           << " and " << d;
    }
  }
  FailureOr<MaybeShape> ellipsis = broadcastShapes(*this, ellipses);
  if (failed(ellipsis))
    return failure();
  SmallVector<int64_t> shape;
  for (char ch : terms->output) {
    if (ch == '.') {
      if (*ellipsis)
        shape.append(**ellipsis);
      continue;
    }
    auto it = sizes.find(ch);
    if (it == sizes.end())
      return emitOpError("the output's letter '") << ch << "' is in no input term";
    shape.push_back(it->second);
  }
  return refineResult(*this, getOutput(), shape);
}
