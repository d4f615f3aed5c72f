//===- ShapeNN.cpp - Shape functions of matmul, conv and pooling ops -------===//

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

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

LogicalResult MatMulOp::inferShapes() {
  MaybeShape a = shapeOf(getA()), b = shapeOf(getB());
  if (!a || !b)
    return success();
  if (a->empty() || b->empty())
    return emitOpError("operands must have rank >= 1");
  SmallVector<int64_t> sa(*a), sb(*b);
  bool vecA = sa.size() == 1, vecB = sb.size() == 1;
  if (vecA)
    sa.insert(sa.begin(), 1);
  if (vecB)
    sb.push_back(1);
  int64_t ka = sa[sa.size() - 1], kb = sb[sb.size() - 2];
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb)
    return emitOpError("inner dims differ: ") << ka << " vs " << kb;
  MaybeShape batchA = SmallVector<int64_t>(sa.begin(), sa.end() - 2);
  MaybeShape batchB = SmallVector<int64_t>(sb.begin(), sb.end() - 2);
  auto batch = broadcastShapes(*this, {batchA, batchB});
  if (failed(batch))
    return failure();
  SmallVector<int64_t> out(**batch);
  if (!vecA)
    out.push_back(sa[sa.size() - 2]);
  if (!vecB)
    out.push_back(sb[sb.size() - 1]);
  return refineResult(*this, getY(), out);
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

LogicalResult ConvOp::inferShapes() {
  MaybeShape w = shapeOf(getW());
  if (!w)
    return success();
  if (w->size() < 3)
    return emitOpError("W must have rank >= 3, got ") << w->size();
  SmallVector<int64_t> kernel;
  if (auto ks = getKernelShape())
    kernel.assign(ks->begin(), ks->end());
  else
    kernel.assign(w->begin() + std::min<size_t>(2, w->size()), w->end());
  return windowShape(*this, getX(), (*w)[0], kernel, getPads(), getStrides(),
                     getDilations(), getAutoPad(), false, getY());
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
