//===- FoldChannelScale.cpp - onnx-fold-channel-scale pass ----------------===//
//
// A squeeze-and-excitation block ends with Mul(x, s): every input channel
// of the next convolution scaled by its own factor s[c], one more pass over
// the activation. Since the convolution is linear in each input channel,
//
//   Conv(x * s, W)[o] = sum_c W[o, c] * s[c] * x[c] = Conv(x, W * s)[o],
//
// the factor moves onto the weights (O x C x k... multiplies instead of
// C x H x W) and the Mul disappears. Zero padding stays zero either way.
// Only for group = 1 (a grouped conv's weights see only their group's
// channels), a static [1, C, 1, ...] factor, a product the conv alone
// reads, and no dynamic batch (the weights would depend on the item).
//
//===----------------------------------------------------------------------===//

#include "passes/Onnx/Passes.h"

#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "onnx-fold-channel-scale"

namespace kiln::onnx {
#define GEN_PASS_DEF_ONNXFOLDCHANNELSCALEPASS
#include "passes/Onnx/Passes.h.inc"
} // namespace kiln::onnx

using namespace mlir;
namespace onnx = kiln::onnx;

namespace {

/// `s` is one factor per channel of `x`: both static, of one rank, `s`
/// [1, C, 1, ...] and `x` [1, C, ...] with more than one element per
/// channel (else scaling the weights is the more work).
bool perChannel(Value s, Value x) {
  auto st = dyn_cast<RankedTensorType>(s.getType());
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  if (!st || !xt || !st.hasStaticShape() || !xt.hasStaticShape() || st.getRank() != xt.getRank() ||
      st.getRank() < 3 || st.getElementType() != xt.getElementType() || xt.getDimSize(0) != 1 ||
      xt.getNumElements() <= st.getNumElements())
    return false;
  for (int64_t d = 0; d < st.getRank(); ++d)
    if (st.getDimSize(d) != (d == 1 ? xt.getDimSize(1) : 1))
      return false;
  return true;
}

struct OnnxFoldChannelScalePass
    : public onnx::impl::OnnxFoldChannelScalePassBase<OnnxFoldChannelScalePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (func.getArgAttr(i, "kiln.dynamic_dim"))
        return;
    SmallVector<onnx::ConvOp> convs;
    func.walk([&](onnx::ConvOp conv) { convs.push_back(conv); });
    for (onnx::ConvOp conv : convs) {
      auto mul = conv.getX().getDefiningOp<onnx::MulOp>();
      auto wType = dyn_cast<RankedTensorType>(conv.getW().getType());
      if (!mul || !mul->hasOneUse() || conv.getGroup() != 1 || !wType ||
          !wType.hasStaticShape())
        continue;
      Value x = mul.getA(), s = mul.getB();
      if (!perChannel(s, x))
        std::swap(x, s);
      if (!perChannel(s, x) || x.getType() != mul.getType() ||
          wType.getElementType() != cast<RankedTensorType>(s.getType()).getElementType() ||
          wType.getRank() != cast<RankedTensorType>(s.getType()).getRank())
        continue;
      OpBuilder b(conv);
      Value scaled = onnx::MulOp::create(b, mul.getLoc(), wType, conv.getW(), s);
      conv.getXMutable().assign(x);
      conv.getWMutable().assign(scaled);
      mul.erase();
    }
  }
};

} // namespace
