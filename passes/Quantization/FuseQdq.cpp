//===- FuseQdq.cpp - kiln-fuse-qdq pass -------------------------*- C++ -*-===//
//
// A QDQ model (what ONNX Runtime's static quantisation and PyTorch's
// quantised exports write) marks an int8 MatMul as float ops between
// DequantizeLinear and QuantizeLinear:
//
//   MatMul(DequantizeLinear(xq, xs, xzp), DequantizeLinear(Wq, ws, wzp))
//     [-> QuantizeLinear(ys, yzp)]
//
// and a Conv the same way (W [M, C, K...], per tensor or per output
// channel, axis 0). Run as written, that is a dequantised copy of the
// activation, a float matmul and a quantisation. When Wq is a constant 2-D weight (scale and
// zero point per tensor or per output column) and xq's scale and zero
// point are per tensor, this pass makes it the integer op it stands for:
//
//   with the QuantizeLinear:  QLinearMatMul(xq, xs, xzp, Wq, ws, wzp, ys, yzp)
//   without:                  Cast(MatMulInteger(xq, Wq, xzp, wzp)) * (xs * ws)
//
//   Conv with the QuantizeLinear (bias none or DequantizeLinear(int32
//   constant) at scale xs * ws):  QLinearConv(xq, ..., ys, yzp, Bq)
//   else:  Cast(ConvInteger(xq, Wq, xzp, wzp)) * (xs * ws) + B
//   (per-channel factors reshaped to [M, 1...])
//
// which run on the int8 dot-product kernels. The integer sum is exact
// where the float one rounded, so a result may differ from the QDQ
// graph's by one quantisation step at a tie, as in every runtime that
// fuses these (ONNX Runtime does the same).
//
//===----------------------------------------------------------------------===//

#include "passes/Quantization/Passes.h"
#include "passes/Quantization/QdqPropagation.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "passes/Utils/ElementsData.h"

#include "llvm/ADT/SetVector.h"

#include <cmath>

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
  return kiln::quantization::onnxConstant(
      b, dq.getLoc(), DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
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

/// `v` (a 1-D tensor of M values, or one value) reshaped to broadcast
/// along the channels of an [N, M, S...] tensor of rank `rank`: [M, 1...].
Value alongChannels(OpBuilder &b, Location loc, Value v, int64_t rank) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 0 || type.getNumElements() == 1)
    return v;
  SmallVector<int64_t> shape(size_t(rank - 1), 1);
  shape[0] = type.getDimSize(0);
  auto shapeType = RankedTensorType::get({rank - 1}, b.getI64Type());
  Value dims = kiln::quantization::onnxConstant(
      b, loc, DenseElementsAttr::get(shapeType, ArrayRef<int64_t>(shape)));
  return onnx::ReshapeOp::create(b, loc, type.clone(shape), v, dims, int64_t(0));
}

/// The int32 bias QLinearConv takes for `bias` (none, or a
/// DequantizeLinear of a constant int32 tensor with zero point 0 whose
/// scale is xs * ws, which QDQ exporters write), or failure.
FailureOr<Value> int32Bias(OpBuilder &b, Value bias) {
  if (onnx::isNone(bias))
    return bias;
  auto dq = bias.getDefiningOp<onnx::DequantizeLinearOp>();
  auto type = dq ? dyn_cast<RankedTensorType>(dq.getX().getType()) : nullptr;
  if (!type || !type.getElementType().isInteger(32) || type.getRank() != 1 ||
      !dq.getX().getDefiningOp<onnx::ConstantOp>())
    return failure();
  // A zero point, if any, must be a constant 0 (checked by the caller's
  // scale comparison otherwise being meaningless).
  if (!onnx::isNone(dq.getXZeroPoint())) {
    auto zp = dq.getXZeroPoint().getDefiningOp<onnx::ConstantOp>();
    auto dense = zp ? dyn_cast<DenseElementsAttr>(zp.getValueAttr()) : nullptr;
    if (!dense || !llvm::all_of(dense.getValues<APInt>(), [](const APInt &v) { return v.isZero(); }))
      return failure();
  }
  return dq.getX();
}

/// The float values of a constant (dense) float32 tensor.
std::optional<SmallVector<float>> constantFloats(Value v) {
  auto constant = v.getDefiningOp<onnx::ConstantOp>();
  auto dense = constant ? dyn_cast_or_null<DenseElementsAttr>(constant.getValueAttr()) : nullptr;
  if (!dense || !dense.getElementType().isF32())
    return std::nullopt;
  return llvm::to_vector(dense.getValues<float>());
}

/// True when the bias DequantizeLinear's scale is xs * ws (each value,
/// within float rounding), all three constants.
bool biasScaleMatches(Value bias, Value xs, Value ws) {
  if (onnx::isNone(bias))
    return true;
  auto dq = bias.getDefiningOp<onnx::DequantizeLinearOp>();
  std::optional<SmallVector<float>> bs = constantFloats(dq.getXScale());
  std::optional<SmallVector<float>> x = constantFloats(xs), w = constantFloats(ws);
  if (!bs || !x || !w || x->size() != 1)
    return false;
  // One value each, or one per channel (a per-tensor bias scale must then
  // match every channel's xs * ws).
  size_t n = std::max(bs->size(), w->size());
  if ((bs->size() != 1 && bs->size() != n) || (w->size() != 1 && w->size() != n))
    return false;
  for (size_t i = 0; i < n; ++i) {
    float expected = (*x)[0] * (*w)[w->size() == 1 ? 0 : i];
    float got = (*bs)[bs->size() == 1 ? 0 : i];
    if (std::fabs(got - expected) > 1e-6f * std::fabs(expected))
      return false;
  }
  return true;
}

/// The integer form of `conv` if it is a QDQ Conv this pass takes:
/// QLinearConv when a per-tensor QuantizeLinear alone reads it (and the
/// bias is none or int32 at scale xs * ws), else Cast(ConvInteger) *
/// (xs * ws) + B.
LogicalResult fuse(onnx::ConvOp conv) {
  auto dqx = conv.getX().getDefiningOp<onnx::DequantizeLinearOp>();
  auto dqw = conv.getW().getDefiningOp<onnx::DequantizeLinearOp>();
  if (!dqx || !dqw || !isInt8Tensor(dqx.getX()) || !isInt8Tensor(dqw.getX()))
    return failure();
  auto wType = dyn_cast<RankedTensorType>(dqw.getX().getType());
  auto yType = dyn_cast<RankedTensorType>(conv.getY().getType());
  if (!wType || !yType || !wType.hasStaticShape() || wType.getRank() < 3 ||
      !yType.getElementType().isF32() || !dqw.getX().getDefiningOp<onnx::ConstantOp>())
    return failure();
  int64_t m = wType.getDimSize(0), rank = wType.getRank();
  // x per tensor; W per tensor or per output channel (axis 0).
  int64_t wAxis = dqw.getAxis() < 0 ? dqw.getAxis() + rank : dqw.getAxis();
  bool wPerTensor = perTensor(dqw.getXScale());
  if (!perTensor(dqx.getXScale()) ||
      (!onnx::isNone(dqx.getXZeroPoint()) && !perTensor(dqx.getXZeroPoint())) ||
      (!wPerTensor && (wAxis != 0 || !perTensorOrColumn(dqw.getXScale(), m))) ||
      (!onnx::isNone(dqw.getXZeroPoint()) &&
       !(wPerTensor ? perTensor(dqw.getXZeroPoint())
                    : perTensorOrColumn(dqw.getXZeroPoint(), m))))
    return failure();
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  Value xzp = zeroPointOf(b, dqx), wzp = zeroPointOf(b, dqw);
  auto q = conv.getY().hasOneUse() ? dyn_cast<onnx::QuantizeLinearOp>(*conv.getY().user_begin())
                                   : nullptr;
  FailureOr<Value> bias = int32Bias(b, conv.getB());
  if (q && perTensor(q.getYScale()) && isInt8Tensor(q.getY()) &&
      !onnx::isNone(q.getYZeroPoint()) && perTensor(q.getYZeroPoint()) && succeeded(bias) &&
      biasScaleMatches(conv.getB(), dqx.getXScale(), dqw.getXScale())) {
    b.setInsertionPoint(q);
    Value y = onnx::QLinearConvOp::create(
        b, loc, q.getY().getType(), dqx.getX(), dqx.getXScale(), xzp, dqw.getX(),
        dqw.getXScale(), wzp, q.getYScale(), q.getYZeroPoint(), *bias, conv.getAutoPadAttr(),
        conv.getDilationsAttr(), conv.getGroupAttr(), conv.getKernelShapeAttr(),
        conv.getPadsAttr(), conv.getStridesAttr());
    q.getY().replaceAllUsesWith(y);
    q.erase();
    conv.erase();
    return success();
  }
  Value acc = onnx::ConvIntegerOp::create(
      b, loc, yType.clone(b.getI32Type()), dqx.getX(), dqw.getX(), xzp, wzp,
      conv.getAutoPadAttr(), conv.getDilationsAttr(), conv.getGroupAttr(),
      conv.getKernelShapeAttr(), conv.getPadsAttr(), conv.getStridesAttr());
  Value accF = onnx::CastOp::create(b, loc, yType, acc, int64_t(1) /*FLOAT*/);
  // xs * ws, per tensor or per channel ([M, 1...]).
  Value ws = alongChannels(b, loc, dqw.getXScale(), rank);
  Value scale = onnx::MulOp::create(b, loc, ws.getType(), ws, dqx.getXScale());
  Value y = onnx::MulOp::create(b, loc, yType, accF, scale);
  if (!onnx::isNone(conv.getB())) {
    Value bv = alongChannels(b, loc, conv.getB(), rank);
    y = onnx::AddOp::create(b, loc, yType, y, bv);
  }
  conv.getY().replaceAllUsesWith(y);
  conv.erase();
  return success();
}

/// A constant tensor `attr` of 8-bit elements [K, N] transposed to [N, K],
/// or null (a splat only changes shape).
ElementsAttr transposed8Bit(Attribute attr, RankedTensorType to) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr); dense && dense.isSplat())
    return dense.reshape(to);
  std::optional<ArrayRef<char>> raw = kiln::rawElementData(attr);
  int64_t rows = to.getDimSize(1), cols = to.getDimSize(0);
  if (!raw || int64_t(raw->size()) != rows * cols)
    return nullptr;
  std::vector<char> out(raw->size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[size_t(j * rows + i)] = (*raw)[size_t(i * cols + j)];
  return DenseElementsAttr::getFromRawBuffer(to, out);
}

/// A float constant holding `v`'s values times `factor`, or null.
Value scaledConstant(OpBuilder &b, Location loc, Value v, float factor) {
  std::optional<SmallVector<float>> values = constantFloats(v);
  if (!values)
    return nullptr;
  for (float &x : *values)
    x *= factor;
  auto type = cast<RankedTensorType>(v.getType());
  return kiln::quantization::onnxConstant(b, loc,
                                          DenseElementsAttr::get(type, ArrayRef<float>(*values)));
}

/// A QDQ Gemm (transA 0, B a DequantizeLinear of a constant 2-D 8-bit
/// weight, per tensor or per output channel) as the QDQ MatMul it stands
/// for, which fuse(MatMulOp) then takes: a transposed B becomes a [K, N]
/// constant (its per-channel axis 0 -> 1), alpha goes into B's scale and
/// beta into C's (a constant), C an Add after.
FailureOr<onnx::MatMulOp> gemmAsMatMul(onnx::GemmOp gemm) {
  auto dqa = gemm.getA().getDefiningOp<onnx::DequantizeLinearOp>();
  auto dqb = gemm.getB().getDefiningOp<onnx::DequantizeLinearOp>();
  if (!dqa || !dqb || gemm.getTransA() || !isInt8Tensor(dqa.getX()) || !isInt8Tensor(dqb.getX()))
    return failure();
  auto wConst = dqb.getX().getDefiningOp<onnx::ConstantOp>();
  auto wType = dyn_cast<RankedTensorType>(dqb.getX().getType());
  auto yType = dyn_cast<RankedTensorType>(gemm.getY().getType());
  if (!wConst || !wType || !yType || wType.getRank() != 2 || !wType.hasStaticShape() ||
      !yType.getElementType().isF32())
    return failure();
  bool transB = gemm.getTransB();
  float alpha = gemm.getAlpha().convertToFloat(), beta = gemm.getBeta().convertToFloat();
  OpBuilder b(gemm);
  Location loc = gemm.getLoc();
  Value w = dqb.getX(), ws = dqb.getXScale();
  int64_t axis = dqb.getAxis() < 0 ? dqb.getAxis() + 2 : dqb.getAxis();
  if (transB) {
    auto kn = RankedTensorType::get({wType.getDimSize(1), wType.getDimSize(0)},
                                    wType.getElementType());
    ElementsAttr data = transposed8Bit(wConst.getValueAttr(), kn);
    if (!data)
      return failure();
    w = kiln::quantization::onnxConstant(b, loc, data);
    axis = 1 - axis;
  }
  if (alpha != 1.0f && !(ws = scaledConstant(b, loc, ws, alpha)))
    return failure();
  Value c = gemm.getC();
  if (!onnx::isNone(c) && beta != 1.0f && !(c = scaledConstant(b, loc, c, beta)))
    return failure();
  auto wf = RankedTensorType::get(cast<RankedTensorType>(w.getType()).getShape(), b.getF32Type());
  Value wd = onnx::DequantizeLinearOp::create(b, loc, wf, w, ws, dqb.getXZeroPoint(), axis);
  auto mm = onnx::MatMulOp::create(b, loc, yType, dqa.getY(), wd);
  Value y = mm.getY();
  if (!onnx::isNone(c))
    y = onnx::AddOp::create(b, loc, yType, y, c);
  gemm.getY().replaceAllUsesWith(y);
  gemm.erase();
  return mm;
}

struct FuseQdqPass : public kiln::quantization::impl::FuseQdqPassBase<FuseQdqPass> {
  void runOnOperation() override {
    // QDQ pairs through the ops that give the same result on the 8-bit
    // values: Conv and MatMul then sit right before their QuantizeLinear.
    if (failed(kiln::quantization::propagateQdq(getOperation())))
      return signalPassFailure();
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<onnx::MatMulOp, onnx::ConvOp, onnx::GemmOp>(op))
        ops.push_back(op);
    });
    // A DequantizeLinear may feed several ops (a shared weight).
    llvm::SetVector<Operation *> dequantized;
    for (Operation *op : ops) {
      SmallVector<Operation *, 3> inputs;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp())
          inputs.push_back(def);
      LogicalResult fused = failure();
      if (auto gemm = dyn_cast<onnx::GemmOp>(op)) {
        // A Gemm whose MatMul does not fuse runs as that MatMul.
        FailureOr<onnx::MatMulOp> mm = gemmAsMatMul(gemm);
        if (succeeded(mm)) {
          inputs.push_back(mm->getB().getDefiningOp());
          fused = fuse(*mm);
        }
      } else if (auto mm = dyn_cast<onnx::MatMulOp>(op)) {
        fused = fuse(mm);
      } else {
        fused = fuse(cast<onnx::ConvOp>(op));
      }
      if (succeeded(fused))
        dequantized.insert(inputs.begin(), inputs.end());
    }
    // The DequantizeLinears nothing else reads.
    for (Operation *op : dequantized)
      if (isa<onnx::DequantizeLinearOp>(op) && op->use_empty())
        op->erase();
  }
};

} // namespace
