//===- QuantizeDynamic.cpp - kiln-quantize-dynamic pass ---------*- C++ -*-===//
//
// `--quantize=dynamic`: the float MatMuls and Gemms by constant weights
// (a transformer's projections and MLPs) in INT8, with activation scales
// computed at run time, as ONNX Runtime's dynamic quantisation does:
//
//   q, s, zp = DynamicQuantizeLinear(A)      uint8, per tensor
//   acc = MatMulInteger(q, Wq, zp)           int32
//   y = Cast(acc) * (s * w_scale)            float32 (+ C for Gemm)
//
// Wq is int8, symmetric, one scale per output column (w_scale[n] =
// max_k |W[k, n]| / 127; Gemm's alpha folded in): the weights' error is
// at most half a step of their own column's range. The rewritten graph
// is plain ONNX, so the lowering and the int8 kernels need nothing of
// this pass.
//
//===----------------------------------------------------------------------===//

#include "passes/Quantization/Passes.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "passes/Utils/ElementsData.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

#define DEBUG_TYPE "kiln-quantize-dynamic"

namespace kiln::quantization {
#define GEN_PASS_DEF_QUANTIZEDYNAMICPASS
#include "passes/Quantization/Passes.h.inc"
} // namespace kiln::quantization

using namespace mlir;
namespace onnx = kiln::onnx;

namespace {

/// A constant 2-D f32 weight [K, N] (transposed from [N, K] when
/// `transposed`), row-major; none unless every value is finite.
struct Weights {
  int64_t k = 0, n = 0;
  std::vector<float> values;
};

std::optional<Weights> constantWeights(Value v, bool transposed) {
  auto constant = v.getDefiningOp<onnx::ConstantOp>();
  ElementsAttr value = constant ? constant.getValueAttr() : ElementsAttr();
  auto type = value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
  if (!type || type.getRank() != 2 || !type.getElementType().isF32() || !type.hasStaticShape())
    return std::nullopt;
  Weights w;
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  w.k = transposed ? cols : rows;
  w.n = transposed ? rows : cols;
  std::optional<std::vector<float>> elements = kiln::floatElements(value);
  if (!elements)
    return std::nullopt;
  std::vector<float> data = std::move(*elements);
  // Infinities and NaNs have no int8 step: such a weight stays float.
  if (!llvm::all_of(data, [](float v) { return std::isfinite(v); }))
    return std::nullopt;
  if (!transposed) {
    w.values = std::move(data);
    return w;
  }
  w.values.resize(data.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      w.values[size_t(c * rows + r)] = data[size_t(r * cols + c)];
  return w;
}

/// The int8 weights and their per-column scales, as onnx constants.
struct QuantizedWeights {
  Value weights, scales;
};

/// `w` in int8 steps of one scale per output column (times `alpha`),
/// placed after the constant `at` so that every user of it sees them.
QuantizedWeights quantizeWeights(Operation *at, const Weights &w, float alpha) {
  OpBuilder b(at->getContext());
  b.setInsertionPointAfter(at);
  Location loc = at->getLoc();
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  // Per output column: the symmetric int8 step and the weights in steps.
  std::vector<float> scales(size_t(w.n));
  std::vector<int8_t> q(w.values.size());
  for (int64_t j = 0; j < w.n; ++j) {
    float most = 0;
    for (int64_t i = 0; i < w.k; ++i)
      most = std::max(most, std::fabs(w.values[size_t(i * w.n + j)]));
    float step = most > 0 ? most / 127.0f : 1.0f;
    for (int64_t i = 0; i < w.k; ++i) {
      float v = std::nearbyint(w.values[size_t(i * w.n + j)] / step);
      q[size_t(i * w.n + j)] = int8_t(std::clamp(v, -127.0f, 127.0f));
    }
    scales[size_t(j)] = step * alpha;
  }
  auto qType = RankedTensorType::get({w.k, w.n}, i8);
  auto qAttr = DenseResourceElementsAttr::get(
      qType, "quantized_weights",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<int8_t>(q)));
  Value weights = kiln::quantization::onnxConstant(b, loc, qAttr);
  auto scaleType = RankedTensorType::get({w.n}, f32);
  Value wScale =
      kiln::quantization::onnxConstant(
          b, loc, DenseElementsAttr::get(scaleType, ArrayRef<float>(scales)));
  return {weights, wScale};
}

/// Replaces `op` (result [..., M, N] = A [..., M, K] x W) by the
/// dynamically quantised form; `bias` (may be null) is added.
void quantize(Operation *op, Value a, const QuantizedWeights &w, Value bias) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto ui8 = IntegerType::get(b.getContext(), 8, IntegerType::Unsigned);
  Value weights = w.weights, wScale = w.scales;
  auto scaleType = cast<RankedTensorType>(wScale.getType());
  auto aType = cast<RankedTensorType>(a.getType());
  auto scalar = [](Type t) { return RankedTensorType::get({}, t); };
  auto dql = onnx::DynamicQuantizeLinearOp::create(b, loc, aType.clone(ui8), scalar(f32),
                                                   scalar(ui8), a);
  auto yType = cast<RankedTensorType>(op->getResult(0).getType());
  Value none = onnx::NoValueOp::create(b, loc, b.getNoneType());
  Value acc = onnx::MatMulIntegerOp::create(b, loc, yType.clone(i32), dql.getY(), weights,
                                            dql.getYZeroPoint(), none);
  Value accF = onnx::CastOp::create(b, loc, yType, acc, int64_t(1) /*FLOAT*/);
  Value scale = onnx::MulOp::create(b, loc, scaleType, dql.getYScale(), wScale);
  Value y = onnx::MulOp::create(b, loc, yType, accF, scale);
  if (bias)
    y = onnx::AddOp::create(b, loc, yType, y, bias);
  op->getResult(0).replaceAllUsesWith(y);
  op->erase();
}

bool isF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32() && type.getRank() >= 2;
}

struct QuantizeDynamicPass
    : public kiln::quantization::impl::QuantizeDynamicPassBase<QuantizeDynamicPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<onnx::MatMulOp, onnx::GemmOp>(op))
        ops.push_back(op);
    });
    // A weight several ops share (a model's tied or repeated layers) is
    // quantised once per reading (transposed or not, alpha).
    std::map<std::tuple<Operation *, bool, float>, QuantizedWeights> done;
    auto weightsOf = [&](Value v, bool transposed, float alpha) -> std::optional<QuantizedWeights> {
      Operation *constant = v.getDefiningOp<onnx::ConstantOp>();
      if (!constant)
        return std::nullopt;
      auto key = std::make_tuple(constant, transposed, alpha);
      if (auto it = done.find(key); it != done.end())
        return it->second;
      std::optional<Weights> w = constantWeights(v, transposed);
      if (!w)
        return std::nullopt;
      return done[key] = quantizeWeights(constant, *w, alpha);
    };
    for (Operation *op : ops) {
      if (auto mm = dyn_cast<onnx::MatMulOp>(op)) {
        if (!isF32Tensor(mm.getA()) || !isF32Tensor(mm.getY()))
          continue;
        if (std::optional<QuantizedWeights> w = weightsOf(mm.getB(), false, 1.0f))
          quantize(op, mm.getA(), *w, Value());
        continue;
      }
      auto gemm = cast<onnx::GemmOp>(op);
      if (gemm.getTransA() || gemm.getBeta().convertToFloat() != 1.0f ||
          !isF32Tensor(gemm.getA()) || !isF32Tensor(gemm.getY()))
        continue;
      std::optional<QuantizedWeights> w =
          weightsOf(gemm.getB(), gemm.getTransB(), gemm.getAlpha().convertToFloat());
      if (!w)
        continue;
      quantize(op, gemm.getA(), *w, onnx::isNone(gemm.getC()) ? Value() : gemm.getC());
    }
  }
};

} // namespace
