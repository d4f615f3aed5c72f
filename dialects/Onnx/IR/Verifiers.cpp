//===- Verifiers.cpp - Hand-written verifiers of onnx ops ------------------===//
//
// The ODS-generated verifiers check operand and result types against the
// ONNX type constraints; these check what the ONNX spec adds on top
// (attribute ranges, rank relations). Each check cites the spec rule it
// enforces. Shapes that are not known yet are not checked here.
//
//===----------------------------------------------------------------------===//

#include "dialects/Onnx/IR/DataTypes.h"
#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/IR/TypeUtilities.h"

#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace {

std::optional<int64_t> rankOf(Value v) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return t.getRank();
  return std::nullopt;
}

/// `axis` must lie in [-rank, rank + extra).
LogicalResult checkAxis(Operation *op, int64_t axis, Value v,
                        StringRef name = "axis", int64_t extra = 0) {
  auto rank = rankOf(v);
  if (!rank)
    return success();
  if (axis < -*rank || axis >= *rank + extra)
    return op->emitOpError() << name << " " << axis
                             << " is out of range for an input of rank "
                             << *rank;
  return success();
}

/// Spec (Conv, pooling): kernel_shape, strides, dilations have one entry per
/// spatial dim, pads two; strides/dilations/kernel >= 1, pads >= 0. kiln
/// also caps every value at 2^31 - 1 so that window arithmetic (position
/// = out * stride + k * dilation - pad) cannot overflow int64 and no
/// lowering meets a window no tensor could fill.
LogicalResult checkWindow(Operation *op, Value x,
                          std::optional<ArrayRef<int64_t>> kernel,
                          std::optional<ArrayRef<int64_t>> pads,
                          std::optional<ArrayRef<int64_t>> strides,
                          std::optional<ArrayRef<int64_t>> dilations) {
  auto rank = rankOf(x);
  if (rank && *rank < 3)
    return op->emitOpError("input must have rank >= 3 (N, C, spatial...), "
                           "got ")
           << *rank;
  std::optional<int64_t> spatial;
  if (rank)
    spatial = *rank - 2;
  else if (kernel)
    spatial = kernel->size();
  auto check = [&](std::optional<ArrayRef<int64_t>> a, int64_t factor,
                   StringRef name, int64_t min) -> LogicalResult {
    if (!a)
      return success();
    if (spatial && static_cast<int64_t>(a->size()) != factor * *spatial)
      return op->emitOpError()
             << name << " has " << a->size() << " values, expected "
             << factor * *spatial;
    constexpr int64_t kMaxWindowValue = std::numeric_limits<int32_t>::max();
    for (int64_t v : *a) {
      if (v < min)
        return op->emitOpError() << name << " values must be >= " << min
                                 << ", got " << v;
      if (v > kMaxWindowValue)
        return op->emitOpError() << name << " value " << v << " is too large (at most "
                                 << kMaxWindowValue << ")";
    }
    return success();
  };
  return success(succeeded(check(kernel, 1, "kernel_shape", 1)) &&
                 succeeded(check(pads, 2, "pads", 0)) &&
                 succeeded(check(strides, 1, "strides", 1)) &&
                 succeeded(check(dilations, 1, "dilations", 1)));
}

} // namespace

LogicalResult ConcatOp::verify() {
  // Spec: all inputs have the same rank; axis in [-r, r-1].
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  std::optional<int64_t> rank;
  for (Value v : getInputs()) {
    auto r = rankOf(v);
    if (!r)
      continue;
    if (rank && *rank != *r)
      return emitOpError("inputs have different ranks (")
             << *rank << " and " << *r << ")";
    rank = r;
  }
  if (rank && *rank == 0)
    return emitOpError("inputs must have rank >= 1");
  return checkAxis(*this, getAxis(), getInputs()[0]);
}

LogicalResult ConvOp::verify() {
  // Spec: X is (N, C, D1...), W is (M, C/group, k1...); group divides C and M.
  if (getGroup() < 1)
    return emitOpError("group must be >= 1, got ") << getGroup();
  auto xr = rankOf(getX()), wr = rankOf(getW());
  if (xr && wr && *xr != *wr)
    return emitOpError("X has rank ") << *xr << " but W has rank " << *wr;
  if (failed(checkWindow(*this, getX(), getKernelShape(), getPads(),
                         getStrides(), getDilations())))
    return failure();
  auto xs = shapeOf(getX()), ws = shapeOf(getW());
  if (xs && ws && xs->size() >= 2 && ws->size() >= 2) {
    int64_t c = (*xs)[1], m = (*ws)[0], cg = (*ws)[1];
    if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(cg) &&
        c != cg * getGroup())
      return emitOpError("X has ") << c << " channels but W expects " << cg
                                   << " x group " << getGroup();
    if (!ShapedType::isDynamic(m) && m % getGroup() != 0)
      return emitOpError("W's ") << m << " output channels are not "
                                 << "divisible by group " << getGroup();
  }
  // Spec: B is 1-D of size M.
  if (auto bs = shapeOf(getB()); bs && ws && !ws->empty()) {
    if (bs->size() != 1)
      return emitOpError("B must be 1-D, got rank ") << bs->size();
    if (!ShapedType::isDynamic((*bs)[0]) && !ShapedType::isDynamic((*ws)[0]) &&
        (*bs)[0] != (*ws)[0])
      return emitOpError("B has ") << (*bs)[0] << " values but W has "
                                   << (*ws)[0] << " output channels";
  }
  if (auto ks = getKernelShape(); ks && ws && ws->size() >= 2) {
    for (size_t i = 0; i < ks->size() && i + 2 < ws->size(); ++i)
      if (!ShapedType::isDynamic((*ws)[i + 2]) && (*ws)[i + 2] != (*ks)[i])
        return emitOpError("kernel_shape disagrees with W's shape");
  }
  return success();
}

LogicalResult GemmOp::verify() {
  // Spec: A and B are 2-D.
  for (Value v : {getA(), getB()})
    if (auto r = rankOf(v); r && *r != 2)
      return emitOpError("A and B must be 2-D, got rank ") << *r;
  return success();
}

LogicalResult MatMulOp::verify() {
  for (Value v : {getA(), getB()})
    if (auto r = rankOf(v); r && *r < 1)
      return emitOpError("operands must have rank >= 1");
  return success();
}

LogicalResult TransposeOp::verify() {
  // Spec: perm is a permutation of [0, rank).
  auto perm = getPerm();
  auto rank = rankOf(getData());
  if (!perm || !rank)
    return success();
  if (static_cast<int64_t>(perm->size()) != *rank)
    return emitOpError("perm has ") << perm->size()
                                    << " entries for an input of rank "
                                    << *rank;
  SmallVector<bool> seen(*rank, false);
  for (int64_t p : *perm) {
    if (p < 0 || p >= *rank || seen[p])
      return emitOpError("perm is not a permutation of [0, ") << *rank << ")";
    seen[p] = true;
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  if (auto r = rankOf(getShape()); r && *r != 1)
    return emitOpError("shape must be 1-D, got rank ") << *r;
  return success();
}

LogicalResult FlattenOp::verify() {
  // Spec: axis in [-r, r].
  return checkAxis(*this, getAxis(), getInput(), "axis", 1);
}

LogicalResult GatherOp::verify() {
  return checkAxis(*this, getAxis(), getData());
}

LogicalResult SoftmaxOp::verify() {
  return checkAxis(*this, getAxis(), getInput());
}

LogicalResult LogSoftmaxOp::verify() {
  return checkAxis(*this, getAxis(), getInput());
}

LogicalResult SplitOp::verify() {
  if (getOutputs().empty())
    return emitOpError("needs at least one output");
  return checkAxis(*this, getAxis(), getInput());
}

LogicalResult SqueezeOp::verify() {
  if (auto r = rankOf(getAxes()); r && *r > 1)
    return emitOpError("axes must be 1-D");
  return success();
}

LogicalResult UnsqueezeOp::verify() {
  if (auto r = rankOf(getAxes()); r && *r > 1)
    return emitOpError("axes must be 1-D");
  return success();
}

LogicalResult SliceOp::verify() {
  for (Value v : {getStarts(), getEnds()})
    if (auto r = rankOf(v); r && *r != 1)
      return emitOpError("starts and ends must be 1-D");
  return success();
}

LogicalResult CastOp::verify() {
  // Spec: `to` is a TensorProto data type; the result has that element type.
  // Complex is a valid ONNX data type but not a Cast target.
  Type to = elementTypeForDataType(getContext(), getTo());
  if (!to || isa<ComplexType>(to))
    return emitOpError("'to' = ") << getTo()
                                  << " is not a supported ONNX data type";
  auto result = dyn_cast<ShapedType>(getOutput().getType());
  if (result && result.getElementType() != to)
    return emitOpError("result element type ")
           << result.getElementType() << " does not match 'to' (" << to
           << ")";
  return success();
}

LogicalResult MaxPoolOp::verify() {
  if (getStorageOrder() != 0 && getStorageOrder() != 1)
    return emitOpError("storage_order must be 0 or 1");
  return checkWindow(*this, getX(), getKernelShape(), getPads(), getStrides(),
                     getDilations());
}

LogicalResult AveragePoolOp::verify() {
  return checkWindow(*this, getX(), getKernelShape(), getPads(), getStrides(),
                     std::nullopt);
}

namespace {
/// The values the region's terminator yields.
Operation::operand_range yielded(Region &region) {
  return region.front().getTerminator()->getOperands();
}
} // namespace

LogicalResult IfOp::verify() {
  // Spec: each branch yields exactly the If's outputs.
  for (Region *r : {&getThenBranch(), &getElseBranch()}) {
    if (r->front().getNumArguments() != 0)
      return emitOpError("branches take no inputs, got ")
             << r->front().getNumArguments();
    if (yielded(*r).size() != getNumResults())
      return emitOpError("a branch yields ")
             << yielded(*r).size() << " values but the If has "
             << getNumResults() << " outputs";
  }
  return success();
}

LogicalResult LoopOp::verify() {
  // Spec: the body takes (iteration_num, cond, v_1..v_N) and yields
  // (cond, v_1..v_N, scan_1..scan_K); the Loop's outputs are N + K.
  int64_t n = getVInitial().size();
  Block &body = getBody().front();
  if (static_cast<int64_t>(body.getNumArguments()) != 2 + n)
    return emitOpError("the body takes ")
           << body.getNumArguments() << " inputs, expected 2 + " << n
           << " (iteration number, condition, loop-carried values)";
  int64_t outs = yielded(getBody()).size();
  if (outs < 1 + n)
    return emitOpError("the body yields ")
           << outs << " values, expected at least 1 + " << n;
  if (static_cast<int64_t>(getNumResults()) != outs - 1)
    return emitOpError("has ") << getNumResults()
                               << " outputs but its body yields " << outs - 1
                               << " loop-carried and scan values";
  return success();
}

LogicalResult ScanOp::verify() {
  // Spec: N states + M scan inputs in; the body takes N + M and yields
  // N + K; the Scan's outputs are N + K.
  int64_t m = getNumScanInputs();
  int64_t inputs = getInitialStateAndScanInputs().size();
  if (m < 1 || m > inputs)
    return emitOpError("num_scan_inputs = ")
           << m << " but the Scan has " << inputs << " inputs";
  Block &body = getBody().front();
  if (static_cast<int64_t>(body.getNumArguments()) != inputs)
    return emitOpError("the body takes ")
           << body.getNumArguments() << " inputs, expected " << inputs;
  int64_t outs = yielded(getBody()).size();
  if (outs < inputs - m || static_cast<int64_t>(getNumResults()) != outs)
    return emitOpError("has ") << getNumResults()
                               << " outputs but its body yields " << outs;
  return success();
}

LogicalResult ConstantOp::verify() {
  // After import only `value` is used; its type must fit the result.
  if (getSparseValueAttr() || getValueFloatAttr() || getValueFloatsAttr() ||
      getValueIntAttr() || getValueIntsAttr() || getValueStringAttr() ||
      getValueStringsAttr())
    return emitOpError("only the 'value' form is supported after import");
  auto value = getValueAttr();
  if (!value)
    return emitOpError("needs a 'value'");
  auto valueType = cast<ShapedType>(value.getType());
  auto result = cast<ShapedType>(getOutput().getType());
  if (valueType.getElementType() != result.getElementType() ||
      failed(verifyCompatibleShape(valueType, result)))
    return emitOpError("value of type ")
           << valueType << " does not fit the result type " << result;
  return success();
}
