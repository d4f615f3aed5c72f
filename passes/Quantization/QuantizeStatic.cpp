//===- QuantizeStatic.cpp - static INT8 quantisation passes ----*- C++ -*-===//
//
// `kiln compile --quantize=int8 --calibration-data=DIR`, the two halves
// either side of the calibration run (compiler/Driver/Calibrate.cpp):
//
// kiln-expose-activation-ranges: the model the calibration runs. Each
//   candidate's float activation x (below) gets ReduceMin(x) and
//   ReduceMax(x) as two more outputs of the entry function, named
//   kiln_calibration_<i>_min/_max, in candidate order.
//
// kiln-quantize-static{ranges=lo0,hi0,lo1,hi1,...}: the model compiled.
//   With each candidate's range (widened to hold 0), its activation
//   becomes DequantizeLinear(QuantizeLinear(x, s, zp), s, zp) (uint8, per
//   tensor, s = (hi - lo) / 255, zp = round(-lo / s)) and its weight
//   DequantizeLinear(Wq, ws) with Wq int8, symmetric, one scale per output
//   channel (ws = max |W| / 127 over the channel). That is a QDQ model, the
//   form ONNX Runtime's quantiser writes; kiln-fuse-qdq, run after it,
//   makes each candidate an integer op (ConvInteger/MatMulInteger scaled
//   back to float), so everything between them (activations, pools,
//   residual adds, softmax, normalisations) stays float.
//
// The candidates, in walk order of the entry function's top level (the
// same in both compiles, which import the same model and run the same
// passes before): float Convs of one group by a constant weight that sum
// at least 64 products per output (C x KH x KW), float MatMuls by a
// constant 2-D weight, and Gemms (transA 0, beta 1 or no C) by a constant
// weight; weights with infinities or NaNs stay float.
//
//===----------------------------------------------------------------------===//

#include "passes/Quantization/Passes.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "passes/Utils/ElementsData.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

#define DEBUG_TYPE "kiln-quantize-static"

namespace kiln::quantization {
#define GEN_PASS_DEF_EXPOSEACTIVATIONRANGESPASS
#define GEN_PASS_DEF_QUANTIZESTATICPASS
#include "passes/Quantization/Passes.h.inc"
} // namespace kiln::quantization

using namespace mlir;
namespace onnx = kiln::onnx;

namespace {

/// The values of a constant float32 tensor, if every one is finite.
std::optional<std::vector<float>> finiteConstant(Value v) {
  auto constant = v.getDefiningOp<onnx::ConstantOp>();
  std::optional<std::vector<float>> data =
      constant ? kiln::floatElements(constant.getValueAttr()) : std::nullopt;
  if (!data || !llvm::all_of(*data, [](float x) { return std::isfinite(x); }))
    return std::nullopt;
  return data;
}

bool isF32(Value v, int64_t minRank) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32() && type.getRank() >= minRank;
}

/// Convs that sum fewer products per output (C x KH x KW) stay float: the
/// int8 form's fixed costs per element (the int32 output written and read
/// back by a float epilogue, the input quantised) outweigh what the dot
/// products save (mobilenet_v2's 1x1 expansions of 16-32 channels ran at
/// half their float speed).
constexpr int64_t kMinConvReduction = 64;

/// The ops --quantize=int8 makes integer (see the file comment).
SmallVector<Operation *> candidates(func::FuncOp func) {
  SmallVector<Operation *> out;
  for (Operation &op : func.getBody().getOps()) {
    if (auto conv = dyn_cast<onnx::ConvOp>(op)) {
      auto wType = dyn_cast<RankedTensorType>(conv.getW().getType());
      if (conv.getGroup() == 1 && isF32(conv.getX(), 3) && isF32(conv.getY(), 3) && wType &&
          wType.hasStaticShape() && wType.getRank() >= 3 &&
          wType.getNumElements() / std::max<int64_t>(wType.getDimSize(0), 1) >=
              kMinConvReduction &&
          finiteConstant(conv.getW()))
        out.push_back(&op);
    } else if (auto mm = dyn_cast<onnx::MatMulOp>(op)) {
      auto wType = dyn_cast<RankedTensorType>(mm.getB().getType());
      if (isF32(mm.getA(), 2) && isF32(mm.getY(), 2) && wType && wType.getRank() == 2 &&
          finiteConstant(mm.getB()))
        out.push_back(&op);
    } else if (auto gemm = dyn_cast<onnx::GemmOp>(op)) {
      if (!gemm.getTransA() &&
          (onnx::isNone(gemm.getC()) || gemm.getBeta().convertToFloat() == 1.0f) &&
          isF32(gemm.getA(), 2) && isF32(gemm.getY(), 2) && finiteConstant(gemm.getB()))
        out.push_back(&op);
    }
  }
  return out;
}

/// The model's entry functions: the public ones.
SmallVector<func::FuncOp> entries(ModuleOp module) {
  SmallVector<func::FuncOp> out;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isPrivate() && !func.isExternal())
      out.push_back(func);
  return out;
}

struct ExposeActivationRangesPass
    : public kiln::quantization::impl::ExposeActivationRangesPassBase<
          ExposeActivationRangesPass> {
  using Base::Base;
  void runOnOperation() override {
    for (func::FuncOp func : entries(getOperation())) {
      auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
      auto scalar = RankedTensorType::get({}, Float32Type::get(&getContext()));
      SmallVector<Value> extra;
      for (Operation *op : candidates(func)) {
        OpBuilder b(op);
        Value x = op->getOperand(0);
        if (tensors) {
          extra.push_back(x);
          continue;
        }
        extra.push_back(onnx::ReduceMinOp::create(b, op->getLoc(), scalar, x, nullptr, 0));
        extra.push_back(onnx::ReduceMaxOp::create(b, op->getLoc(), scalar, x, nullptr, 0));
      }
      unsigned first = ret.getNumOperands();
      ret->insertOperands(first, extra);
      MLIRContext *ctx = &getContext();
      for (auto [i, v] : llvm::enumerate(extra)) {
        std::string name = tensors ? "kiln_calibration_" + std::to_string(i)
                                   : "kiln_calibration_" + std::to_string(i / 2) +
                                         (i % 2 ? "_max" : "_min");
        auto attrs = DictionaryAttr::get(
            ctx, {NamedAttribute(StringAttr::get(ctx, "onnx.name"), StringAttr::get(ctx, name))});
        if (failed(func.insertResult(first + unsigned(i), v.getType(), attrs)))
          return signalPassFailure();
      }
    }
  }
};

/// A per-channel symmetric int8 weight: `values` in steps of one scale per
/// channel (channelOf(i) of `channels`), each max |w| / 127.
struct ChannelQuantized {
  std::vector<int8_t> q;
  std::vector<float> scales;
};

ChannelQuantized quantizePerChannel(ArrayRef<float> values, int64_t channels,
                                    function_ref<int64_t(int64_t)> channelOf) {
  ChannelQuantized out;
  out.scales.assign(size_t(channels), 0.0f);
  for (int64_t i = 0; i < int64_t(values.size()); ++i) {
    float &most = out.scales[size_t(channelOf(i))];
    most = std::max(most, std::fabs(values[size_t(i)]));
  }
  for (float &s : out.scales)
    s = s > 0 ? s / 127.0f : 1.0f;
  out.q.resize(values.size());
  for (int64_t i = 0; i < int64_t(values.size()); ++i) {
    float v = std::nearbyint(values[size_t(i)] / out.scales[size_t(channelOf(i))]);
    out.q[size_t(i)] = int8_t(std::clamp(v, -127.0f, 127.0f));
  }
  return out;
}

Value scalarConstant(OpBuilder &b, Location loc, Type elem, Attribute value) {
  auto type = RankedTensorType::get({}, elem);
  return onnx::ConstantOp::create(b, loc, type, nullptr,
                                  DenseElementsAttr::get(type, value), nullptr, nullptr,
                                  nullptr, nullptr, nullptr, nullptr);
}

/// DequantizeLinear(Wq, ws) of the plan's weight.
Value dequantizedWeights(OpBuilder &b, Location loc, const kiln::quantization::StaticQuantization &p) {
  auto qType = RankedTensorType::get(p.weightShape, b.getI8Type());
  auto qAttr = DenseResourceElementsAttr::get(
      qType, "quantized_weights",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<int8_t>(p.weights)));
  Value q = onnx::ConstantOp::create(b, loc, qType, nullptr, qAttr, nullptr, nullptr, nullptr,
                                     nullptr, nullptr, nullptr);
  auto scaleType = RankedTensorType::get({int64_t(p.weightScales.size())}, b.getF32Type());
  Value scales = onnx::ConstantOp::create(
      b, loc, scaleType, nullptr,
      DenseElementsAttr::get(scaleType, ArrayRef<float>(p.weightScales)), nullptr, nullptr,
      nullptr, nullptr, nullptr, nullptr);
  Value none = onnx::NoValueOp::create(b, loc, b.getNoneType());
  return onnx::DequantizeLinearOp::create(
      b, loc, RankedTensorType::get(p.weightShape, b.getF32Type()), q, scales, none,
      p.weightAxis);
}

/// The activation's uint8 parameters over [lo, hi] (widened to hold 0).
void activationParameters(double lo, double hi, float &scale, uint8_t &zeroPoint) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  scale = float((hi - lo) / 255.0);
  if (!(scale > 0) || !std::isfinite(scale))
    scale = 1.0f / 255.0f; // An activation that is always 0.
  zeroPoint = uint8_t(std::clamp(std::nearbyint(-lo / double(scale)), 0.0, 255.0));
}

/// The plan for one candidate with its range.
kiln::quantization::StaticQuantization plan(Operation *op, double lo, double hi) {
  kiln::quantization::StaticQuantization p;
  p.op = op;
  activationParameters(lo, hi, p.inputScale, p.inputZeroPoint);
  ChannelQuantized q;
  if (auto conv = dyn_cast<onnx::ConvOp>(op)) {
    auto shape = cast<RankedTensorType>(conv.getW().getType()).getShape();
    std::vector<float> w = *finiteConstant(conv.getW());
    int64_t per = int64_t(w.size()) / shape[0];
    q = quantizePerChannel(w, shape[0], [&](int64_t i) { return i / per; });
    p.weightShape.assign(shape.begin(), shape.end());
    p.weightAxis = 0;
  } else if (auto mm = dyn_cast<onnx::MatMulOp>(op)) {
    auto shape = cast<RankedTensorType>(mm.getB().getType()).getShape();
    std::vector<float> w = *finiteConstant(mm.getB());
    int64_t n = shape[1];
    q = quantizePerChannel(w, n, [&](int64_t i) { return i % n; });
    p.weightShape.assign(shape.begin(), shape.end());
    p.weightAxis = 1;
  } else {
    auto gemm = cast<onnx::GemmOp>(op);
    auto bShape = cast<RankedTensorType>(gemm.getB().getType()).getShape();
    std::vector<float> w = *finiteConstant(gemm.getB());
    bool transposed = gemm.getTransB();
    int64_t k = transposed ? bShape[1] : bShape[0], n = transposed ? bShape[0] : bShape[1];
    std::vector<float> kn(w.size());
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j)
        kn[size_t(i * n + j)] = w[size_t(transposed ? j * k + i : i * n + j)];
    q = quantizePerChannel(kn, n, [&](int64_t i) { return i % n; });
    float alpha = gemm.getAlpha().convertToFloat();
    for (float &s : q.scales)
      s *= alpha;
    p.weightShape = {k, n};
    p.weightAxis = 1;
  }
  p.weights = std::move(q.q);
  p.weightScales = std::move(q.scales);
  return p;
}

struct QuantizeStaticPass
    : public kiln::quantization::impl::QuantizeStaticPassBase<QuantizeStaticPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<std::vector<kiln::quantization::StaticQuantization>> plans =
        kiln::quantization::planStaticQuantization(getOperation(), ranges);
    if (failed(plans))
      return signalPassFailure();
    for (const kiln::quantization::StaticQuantization &p : *plans)
      rewrite(p);
  }

  /// x -> DequantizeLinear(QuantizeLinear(x)); the weight ->
  /// DequantizeLinear(Wq); a Gemm becomes MatMul (+ C).
  static void rewrite(const kiln::quantization::StaticQuantization &p) {
    Operation *op = p.op;
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto ui8 = IntegerType::get(b.getContext(), 8, IntegerType::Unsigned);
    Value s = scalarConstant(b, loc, b.getF32Type(), b.getF32FloatAttr(p.inputScale));
    Value z = scalarConstant(b, loc, ui8, IntegerAttr::get(ui8, APInt(8, p.inputZeroPoint)));
    Value in = op->getOperand(0);
    auto type = cast<RankedTensorType>(in.getType());
    Value q = onnx::QuantizeLinearOp::create(b, loc, type.clone(ui8), in, s, z, int64_t(1));
    Value x = onnx::DequantizeLinearOp::create(b, loc, type, q, s, z, int64_t(1));
    Value w = dequantizedWeights(b, loc, p);
    if (isa<onnx::ConvOp, onnx::MatMulOp>(op)) {
      op->setOperand(0, x);
      op->setOperand(1, w);
      return;
    }
    auto gemm = cast<onnx::GemmOp>(op);
    auto yType = cast<RankedTensorType>(gemm.getY().getType());
    Value y = onnx::MatMulOp::create(b, loc, yType, x, w);
    if (!onnx::isNone(gemm.getC()))
      y = onnx::AddOp::create(b, loc, yType, y, gemm.getC());
    gemm.getY().replaceAllUsesWith(y);
    gemm.erase();
  }
};

} // namespace

FailureOr<std::vector<kiln::quantization::StaticQuantization>>
kiln::quantization::planStaticQuantization(ModuleOp module, ArrayRef<double> ranges) {
  std::vector<StaticQuantization> out;
  size_t next = 0;
  for (func::FuncOp func : entries(module)) {
    SmallVector<Operation *> ops = candidates(func);
    if (2 * (next + ops.size()) > ranges.size())
      return func.emitError() << "static quantisation: " << ranges.size() / 2
                              << " calibrated ranges for more ops to quantise; the "
                                 "calibration ran a different model";
    for (Operation *op : ops) {
      double lo = ranges[2 * next], hi = ranges[2 * next + 1];
      ++next;
      // Calibration saw infinities or NaNs: the op stays float.
      if (std::isfinite(lo) && std::isfinite(hi))
        out.push_back(plan(op, lo, hi));
    }
  }
  if (2 * next != ranges.size())
    return module.emitError() << "static quantisation: " << ranges.size() / 2
                              << " calibrated ranges for " << next << " ops to quantise";
  return out;
}
