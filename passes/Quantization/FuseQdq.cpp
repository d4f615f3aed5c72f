//===- FuseQdq.cpp - kiln-fuse-qdq pass -------------------------*- C++ -*-===//
//
// A QDQ model (what ONNX Runtime's static quantisation and PyTorch's
// quantised exports write) marks an int8 MatMul as float ops between
// DequantizeLinear and QuantizeLinear:
//
//   MatMul(DequantizeLinear(xq, xs, xzp), DequantizeLinear(Wq, ws, wzp))
//     [-> QuantizeLinear(ys, yzp)]
//
// Run as written, that is a dequantised copy of the activation, a float
// matmul and a quantisation. When Wq is a constant 2-D weight (scale and
// zero point per tensor or per output column) and xq's scale and zero
// point are per tensor, this pass makes it the integer op it stands for:
//
//   with the QuantizeLinear:  QLinearMatMul(xq, xs, xzp, Wq, ws, wzp, ys, yzp)
//   without:                  Cast(MatMulInteger(xq, Wq, xzp, wzp)) * (xs * ws)
//
// which run on the int8 dot-product kernels. The integer sum is exact
// where the float one rounded, so a result may differ from the QDQ
// graph's by one quantisation step at a tie, as in every runtime that
// fuses these (ONNX Runtime does the same).
//
//===----------------------------------------------------------------------===//

#include "passes/Quantization/Passes.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "kiln-fuse-qdq"

namespace kiln::quantization {
#define GEN_PASS_DEF_FUSEQDQPASS
#include "passes/Quantization/Passes.h.inc"
} // namespace kiln::quantization

using namespace mlir;
namespace onnx = kiln::onnx;

namespace {

/// A static tensor of one element (a per-tensor scale or zero point).
bool perTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1 && type.getRank() <= 1;
}

/// One element, or a 1-D tensor of `n` (per output column).
bool perTensorOrColumn(Value v, int64_t n) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return perTensor(v) || (type && type.getRank() == 1 && type.getDimSize(0) == n);
}

bool isInt8Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isInteger(8);
}

/// `dq`'s zero point, or a zero of its input's type when it has none
/// (QLinearMatMul's are required operands).
Value zeroPointOf(OpBuilder &b, onnx::DequantizeLinearOp dq) {
  if (!onnx::isNone(dq.getXZeroPoint()))
    return dq.getXZeroPoint();
  auto type = RankedTensorType::get({}, cast<RankedTensorType>(dq.getX().getType()).getElementType());
  return onnx::ConstantOp::create(b, dq.getLoc(), type, nullptr,
                                  DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())),
                                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
}

/// The integer form of `mm` if it is a QDQ MatMul this pass takes.
LogicalResult fuse(onnx::MatMulOp mm) {
  auto dqa = mm.getA().getDefiningOp<onnx::DequantizeLinearOp>();
  auto dqb = mm.getB().getDefiningOp<onnx::DequantizeLinearOp>();
  if (!dqa || !dqb || !isInt8Tensor(dqa.getX()) || !isInt8Tensor(dqb.getX()))
    return failure();
  auto wType = dyn_cast<RankedTensorType>(dqb.getX().getType());
  auto yType = dyn_cast<RankedTensorType>(mm.getY().getType());
  auto aType = dyn_cast<RankedTensorType>(dqa.getX().getType());
  if (!wType || !yType || !aType || wType.getRank() != 2 || !wType.hasStaticShape() ||
      aType.getRank() < 2 || !yType.getElementType().isF32() ||
      !dqb.getX().getDefiningOp<onnx::ConstantOp>())
    return failure();
  int64_t n = wType.getDimSize(1);
  // x per tensor; W per tensor or per output column (axis 1 of [K, N]).
  int64_t wAxis = dqb.getAxis() < 0 ? dqb.getAxis() + 2 : dqb.getAxis();
  bool wPerTensor = perTensor(dqb.getXScale());
  if (!perTensor(dqa.getXScale()) ||
      (!onnx::isNone(dqa.getXZeroPoint()) && !perTensor(dqa.getXZeroPoint())) ||
      (!wPerTensor && (wAxis != 1 || !perTensorOrColumn(dqb.getXScale(), n))) ||
      (!onnx::isNone(dqb.getXZeroPoint()) &&
       !(wPerTensor ? perTensor(dqb.getXZeroPoint())
                    : perTensorOrColumn(dqb.getXZeroPoint(), n))))
    return failure();
  OpBuilder b(mm);
  Location loc = mm.getLoc();
  Value xzp = zeroPointOf(b, dqa), wzp = zeroPointOf(b, dqb);
  // Requantised by a QuantizeLinear per tensor that alone reads it.
  auto q = mm.getY().hasOneUse() ? dyn_cast<onnx::QuantizeLinearOp>(*mm.getY().user_begin())
                                 : nullptr;
  if (q && perTensor(q.getYScale()) && isInt8Tensor(q.getY()) &&
      !onnx::isNone(q.getYZeroPoint()) && perTensor(q.getYZeroPoint())) {
    b.setInsertionPoint(q);
    Value y = onnx::QLinearMatMulOp::create(b, loc, q.getY().getType(), dqa.getX(),
                                            dqa.getXScale(), xzp, dqb.getX(), dqb.getXScale(),
                                            wzp, q.getYScale(), q.getYZeroPoint());
    q.getY().replaceAllUsesWith(y);
    q.erase();
    mm.erase();
    return success();
  }
  Value acc = onnx::MatMulIntegerOp::create(b, loc, yType.clone(b.getI32Type()), dqa.getX(),
                                            dqb.getX(), xzp, wzp);
  Value accF = onnx::CastOp::create(b, loc, yType, acc, int64_t(1) /*FLOAT*/);
  // xs * ws: per tensor, or per column when ws is.
  auto scaleType = cast<RankedTensorType>(dqb.getXScale().getType());
  if (cast<RankedTensorType>(dqa.getXScale().getType()).getRank() > scaleType.getRank())
    scaleType = cast<RankedTensorType>(dqa.getXScale().getType());
  Value scale = onnx::MulOp::create(b, loc, scaleType, dqa.getXScale(), dqb.getXScale());
  Value y = onnx::MulOp::create(b, loc, yType, accF, scale);
  mm.getY().replaceAllUsesWith(y);
  mm.erase();
  return success();
}

struct FuseQdqPass : public kiln::quantization::impl::FuseQdqPassBase<FuseQdqPass> {
  void runOnOperation() override {
    SmallVector<onnx::MatMulOp> matmuls;
    getOperation().walk([&](onnx::MatMulOp mm) { matmuls.push_back(mm); });
    // A DequantizeLinear may feed several MatMuls (a shared weight).
    llvm::SetVector<Operation *> dequantized;
    for (onnx::MatMulOp mm : matmuls) {
      Operation *a = mm.getA().getDefiningOp(), *b = mm.getB().getDefiningOp();
      if (succeeded(fuse(mm))) {
        dequantized.insert(a);
        dequantized.insert(b);
      }
    }
    // The DequantizeLinears nothing else reads.
    for (Operation *op : dequantized)
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
