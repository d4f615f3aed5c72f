//===- ShapeElementwise.cpp - Shape functions of elementwise onnx ops -----===//
//
// Unary ops keep their input's shape; binary and variadic ops broadcast
// their operands numpy-style (ONNX "multidirectional broadcasting").
//
//===----------------------------------------------------------------------===//

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

using namespace mlir;
using namespace kiln::onnx;

namespace {

/// Result 0 (and the given extra results) take the shape of operand 0.
LogicalResult sameShape(Operation *op, ArrayRef<unsigned> extra = {}) {
  MaybeShape shape = shapeOf(op->getOperand(0));
  if (failed(refineResult(op, op->getResult(0), shape)))
    return failure();
  for (unsigned i : extra)
    if (i < op->getNumResults() && !isNone(op->getResult(i)) &&
        failed(refineResult(op, op->getResult(i), shape)))
      return failure();
  return success();
}

/// Result 0 is the broadcast of every operand.
LogicalResult broadcastAll(Operation *op) {
  SmallVector<MaybeShape> shapes;
  for (Value v : op->getOperands())
    shapes.push_back(shapeOf(v));
  auto shape = broadcastShapes(op, shapes);
  if (failed(shape))
    return failure();
  return refineResult(op, op->getResult(0), *shape);
}

} // namespace

#define SAME_SHAPE(OP)                                                         \
  LogicalResult OP##Op::inferShapes() { return sameShape(*this); }
SAME_SHAPE(Abs)
SAME_SHAPE(Acos)
SAME_SHAPE(Acosh)
SAME_SHAPE(Asin)
SAME_SHAPE(Asinh)
SAME_SHAPE(Atan)
SAME_SHAPE(Atanh)
SAME_SHAPE(Ceil)
SAME_SHAPE(Cos)
SAME_SHAPE(Cosh)
SAME_SHAPE(Elu)
SAME_SHAPE(Erf)
SAME_SHAPE(Exp)
SAME_SHAPE(Floor)
SAME_SHAPE(HardSigmoid)
SAME_SHAPE(HardSwish)
SAME_SHAPE(Identity)
SAME_SHAPE(IsInf)
SAME_SHAPE(IsNaN)
SAME_SHAPE(LeakyRelu)
SAME_SHAPE(Log)
SAME_SHAPE(Neg)
SAME_SHAPE(Not)
SAME_SHAPE(Reciprocal)
SAME_SHAPE(Relu)
SAME_SHAPE(Round)
SAME_SHAPE(Selu)
SAME_SHAPE(Sigmoid)
SAME_SHAPE(Sign)
SAME_SHAPE(Sin)
SAME_SHAPE(Sinh)
SAME_SHAPE(Softplus)
SAME_SHAPE(Softsign)
SAME_SHAPE(Sqrt)
SAME_SHAPE(Tan)
SAME_SHAPE(Tanh)
SAME_SHAPE(ThresholdedRelu)
SAME_SHAPE(Celu)
SAME_SHAPE(Clip)
SAME_SHAPE(Softmax)
SAME_SHAPE(LogSoftmax)
SAME_SHAPE(Hardmax)
SAME_SHAPE(Shrink)
SAME_SHAPE(Cast)
SAME_SHAPE(CastLike)
SAME_SHAPE(LRN)
SAME_SHAPE(InstanceNormalization)
SAME_SHAPE(BatchNormalization)
SAME_SHAPE(MeanVarianceNormalization)
SAME_SHAPE(LpNormalization)
SAME_SHAPE(CumSum)
SAME_SHAPE(PRelu)
#undef SAME_SHAPE

LogicalResult DropoutOp::inferShapes() { return sameShape(*this, {1}); }

LogicalResult LayerNormalizationOp::inferShapes() {
  // Y: X's shape; Mean and InvStdDev: X's dims before the axis, 1 from it.
  MaybeShape x = shapeOf(getX());
  if (failed(refineResult(*this, getY(), x)))
    return failure();
  if (!x)
    return success();
  FailureOr<int64_t> axis = normalizeAxis(*this, getAxis(), int64_t(x->size()), "axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> stats(x->begin(), x->begin() + *axis);
  stats.append(x->size() - *axis, 1);
  for (Value v : {getMean(), getInvStdDev()})
    if (!isNone(v) && failed(refineResult(*this, v, stats)))
      return failure();
  return success();
}

#define BROADCAST(OP)                                                          \
  LogicalResult OP##Op::inferShapes() { return broadcastAll(*this); }
BROADCAST(Add)
BROADCAST(Sub)
BROADCAST(Mul)
BROADCAST(Div)
BROADCAST(Pow)
BROADCAST(Mod)
BROADCAST(And)
BROADCAST(Or)
BROADCAST(Xor)
BROADCAST(Equal)
BROADCAST(Greater)
BROADCAST(GreaterOrEqual)
BROADCAST(Less)
BROADCAST(LessOrEqual)
BROADCAST(Max)
BROADCAST(Min)
BROADCAST(Mean)
BROADCAST(Sum)
BROADCAST(BitShift)
BROADCAST(Where)
#undef BROADCAST
