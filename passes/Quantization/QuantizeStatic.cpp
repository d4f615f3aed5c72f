//===- QuantizeStatic.cpp - static INT8 quantisation passes ----*- C++ -*-===//
//
// `kiln compile --quantize=int8 --calibration-data=DIR`, the two halves
// either side of the calibration run (compiler/Driver/Calibrate.cpp):
//
// kiln-expose-activation-ranges: the model the calibration runs. Each
//   activation that will be quantised (below) gets ReduceMin(x) and
//   ReduceMax(x) as two more outputs of the entry function, named
//   kiln_calibration_<i>_min/_max, in order.
//
// kiln-quantize-static{ranges=lo0,hi0,lo1,hi1,...}: the model compiled.
//   With each activation's range (widened to hold 0), the quantised ops
//   that read it read DequantizeLinear(QuantizeLinear(x, s, zp), s, zp)
//   instead (uint8, per tensor, s = (hi - lo) / 255, zp = round(-lo / s));
//   each weighted op's weight becomes DequantizeLinear(Wq, ws) with Wq
//   int8, symmetric, one scale per output channel (ws = max |W| / 127 over
//   the channel). That is a QDQ model, the form ONNX Runtime's quantiser
//   writes; kiln-fuse-qdq, run after it, makes the weighted ops integer
//   ops and moves the pairs through the ops between, which then run on
//   the 8-bit values.
//
// What is quantised, in walk order of the entry function's top level (the
// same in both compiles, which import the same model and run the same
// passes before):
// - the weighted ops: float Convs of one group by a constant weight that
//   sum at least 64 products per output (C x KH x KW), float MatMuls by a
//   constant 2-D weight, and Gemms (transA 0, beta 1 or no C) by a constant
//   weight; weights with infinities or NaNs stay float;
// - the ops between them: Add (of two activations), MaxPool, AveragePool,
//   GlobalAveragePool, Concat, Reshape, Flatten, Transpose, Squeeze and
//   Unsqueeze, when each of their activations is quantised for a weighted
//   op or computed by a quantised op (past Relu and Clip, which follow
//   into the 8-bit result), and a quantised op reads their result; the
//   rest (softmax, normalisations, attention's matmuls of two activations,
//   adds of a constant) stays float;
// - the activations: those every quantised op reads, but for an Add's
//   operand that a weighted op alone computes, which stays float: the Add
//   becomes that op's epilogue. A MaxPool's or reshaping op's result takes
//   its input's parameters (the values are the same), so the pairs around
//   it cancel.
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

/// Ops between the weighted ones that run on the 8-bit values once their
/// activations are quantised (kiln-fuse-qdq moves the pairs through the
/// exact ones; Add and the average pools become loops over 8-bit values).
bool isBetween(Operation *op) {
  if (op->getNumResults() < 1 || !isF32(op->getResult(0), 0))
    return false;
  if (auto pool = dyn_cast<onnx::MaxPoolOp>(op))
    return onnx::isNone(pool.getIndices()) || pool.getIndices().use_empty();
  return isa<onnx::AddOp, onnx::AveragePoolOp, onnx::GlobalAveragePoolOp, onnx::ConcatOp,
             onnx::ReshapeOp, onnx::FlattenOp, onnx::TransposeOp, onnx::SqueezeOp,
             onnx::UnsqueezeOp>(op);
}

/// Ops whose result takes their input's parameters (the same values, or
/// a selection of them): the pairs around them cancel.
bool keepsParameters(Operation *op) {
  return isa<onnx::MaxPoolOp, onnx::ReshapeOp, onnx::FlattenOp, onnx::TransposeOp,
             onnx::SqueezeOp, onnx::UnsqueezeOp>(op);
}

/// A float32 tensor computed at run time (not a constant).
bool isActivation(Value v) {
  return isF32(v, 0) && !v.getDefiningOp<onnx::ConstantOp>();
}

/// Relu, and Clip with constant bounds: they follow a quantised op into
/// its 8-bit result (kiln-fuse-qdq makes them integer Max and Clip).
bool isTail(Operation *op) {
  if (isa_and_nonnull<onnx::ReluOp>(op))
    return true;
  auto clip = dyn_cast_or_null<onnx::ClipOp>(op);
  return clip && llvm::all_of(ValueRange{clip.getMin(), clip.getMax()}, [](Value b) {
           return onnx::isNone(b) || b.getDefiningOp<onnx::ConstantOp>();
         });
}

/// The op that computes `v`, past Relu and Clip.
Operation *sourceOf(Value v) {
  Operation *def = v.getDefiningOp();
  while (isTail(def))
    def = def->getOperand(0).getDefiningOp();
  return def;
}

/// The ops that read `v`, past Relu and Clip.
void readersOf(Value v, SmallVectorImpl<Operation *> &out) {
  for (Operation *user : v.getUsers()) {
    if (isTail(user))
      readersOf(user->getResult(0), out);
    else
      out.push_back(user);
  }
}

/// The activation operands of a quantised op: a weighted op's input, a
/// between op's data (all of an Add's or a Concat's operands).
SmallVector<OpOperand *> activationOperands(Operation *op) {
  SmallVector<OpOperand *> out;
  if (isa<onnx::AddOp, onnx::ConcatOp>(op)) {
    for (OpOperand &operand : op->getOpOperands())
      out.push_back(&operand);
  } else {
    out.push_back(&op->getOpOperand(0));
  }
  return out;
}

/// What --quantize=int8 quantises in `func`: the weighted candidates, the
/// ops between them that join, and the activations they read (in order:
/// the order of the calibration's outputs).
struct Selection {
  SmallVector<Operation *> weighted;
  llvm::SetVector<Value> activations;
  DenseMap<Value, SmallVector<OpOperand *, 2>> readers;
};

/// A between op joins when each of its activations is already quantised
/// for a weighted op or comes from a quantised op (past Relu and Clip),
/// and a quantised op reads its result. The activations are then those
/// of every quantised op, but for an Add's operand that a weighted op
/// alone computes: that Add runs in the weighted op's float epilogue.
Selection select(func::FuncOp func) {
  Selection sel;
  sel.weighted = candidates(func);
  llvm::SmallPtrSet<Operation *, 32> quantized(sel.weighted.begin(), sel.weighted.end());
  llvm::DenseSet<Value> inputs;
  for (Operation *op : sel.weighted)
    inputs.insert(op->getOperand(0));
  // Forward: the between ops whose inputs can be 8-bit.
  SmallVector<Operation *> order;
  llvm::SmallPtrSet<Operation *, 32> possible;
  for (Operation &op : func.getBody().getOps()) {
    order.push_back(&op);
    if (!isBetween(&op))
      continue;
    bool ok = llvm::all_of(activationOperands(&op), [&](OpOperand *operand) {
      Value v = operand->get();
      Operation *src = sourceOf(v);
      return isActivation(v) &&
             (inputs.contains(v) || quantized.contains(src) || possible.contains(src));
    });
    if (ok)
      possible.insert(&op);
  }
  // Backward: those a quantised op reads.
  for (Operation *op : llvm::reverse(order)) {
    if (!possible.contains(op))
      continue;
    SmallVector<Operation *> readers;
    readersOf(op->getResult(0), readers);
    if (llvm::any_of(readers, [&](Operation *r) { return quantized.contains(r); }))
      quantized.insert(op);
  }
  for (Operation *op : order) {
    if (!quantized.contains(op))
      continue;
    for (OpOperand *operand : activationOperands(op)) {
      Value v = operand->get();
      Operation *def = v.getDefiningOp();
      if (isa<onnx::AddOp>(op) && def && v.hasOneUse() &&
          llvm::is_contained(sel.weighted, def))
        continue;
      sel.activations.insert(v);
      sel.readers[v].push_back(operand);
    }
  }
  return sel;
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
      for (Value x : select(func).activations) {
        if (tensors) {
          extra.push_back(x);
          continue;
        }
        OpBuilder b(ret);
        extra.push_back(onnx::ReduceMinOp::create(b, x.getLoc(), scalar, x, nullptr, 0));
        extra.push_back(onnx::ReduceMaxOp::create(b, x.getLoc(), scalar, x, nullptr, 0));
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
  return kiln::quantization::onnxConstant(b, loc, DenseElementsAttr::get(type, value));
}

/// DequantizeLinear(Wq, ws) of the plan's weight.
Value dequantizedWeights(OpBuilder &b, Location loc, const kiln::quantization::StaticQuantization &p) {
  auto qType = RankedTensorType::get(p.weightShape, b.getI8Type());
  auto qAttr = DenseResourceElementsAttr::get(
      qType, "quantized_weights",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<int8_t>(p.weights)));
  Value q = kiln::quantization::onnxConstant(b, loc, qAttr);
  auto scaleType = RankedTensorType::get({int64_t(p.weightScales.size())}, b.getF32Type());
  Value scales = kiln::quantization::onnxConstant(
      b, loc, DenseElementsAttr::get(scaleType, ArrayRef<float>(p.weightScales)));
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

/// The weights of one weighted op, quantised.
kiln::quantization::StaticQuantization plan(Operation *op) {
  kiln::quantization::StaticQuantization p;
  p.op = op;
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
    FailureOr<kiln::quantization::StaticPlan> plan =
        kiln::quantization::planStaticQuantization(getOperation(), ranges);
    if (failed(plan))
      return signalPassFailure();
    for (const kiln::quantization::ActivationQuantization &a : plan->activations)
      rewrite(a);
    for (const kiln::quantization::StaticQuantization &p : plan->weighted)
      rewrite(p);
  }

  /// The activation's readers -> DequantizeLinear(QuantizeLinear(x)),
  /// made right after x.
  static void rewrite(const kiln::quantization::ActivationQuantization &a) {
    OpBuilder b(a.tensor.getContext());
    b.setInsertionPointAfterValue(a.tensor);
    Location loc = a.tensor.getLoc();
    auto ui8 = IntegerType::get(b.getContext(), 8, IntegerType::Unsigned);
    Value s = scalarConstant(b, loc, b.getF32Type(), b.getF32FloatAttr(a.scale));
    Value z = scalarConstant(b, loc, ui8, IntegerAttr::get(ui8, APInt(8, a.zeroPoint)));
    auto type = cast<RankedTensorType>(a.tensor.getType());
    Value q = onnx::QuantizeLinearOp::create(b, loc, type.clone(ui8), a.tensor, s, z, int64_t(1));
    Value x = onnx::DequantizeLinearOp::create(b, loc, type, q, s, z, int64_t(1));
    for (OpOperand *reader : a.readers)
      reader->set(x);
  }

  /// The weight -> DequantizeLinear(Wq); a Gemm becomes MatMul (+ C).
  static void rewrite(const kiln::quantization::StaticQuantization &p) {
    Operation *op = p.op;
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value w = dequantizedWeights(b, loc, p);
    if (isa<onnx::ConvOp, onnx::MatMulOp>(op)) {
      op->setOperand(1, w);
      return;
    }
    auto gemm = cast<onnx::GemmOp>(op);
    auto yType = cast<RankedTensorType>(gemm.getY().getType());
    Value y = onnx::MatMulOp::create(b, loc, yType, gemm.getA(), w);
    if (!onnx::isNone(gemm.getC()))
      y = onnx::AddOp::create(b, loc, yType, y, gemm.getC());
    gemm.getY().replaceAllUsesWith(y);
    gemm.erase();
  }
};

} // namespace

FailureOr<kiln::quantization::StaticPlan>
kiln::quantization::planStaticQuantization(ModuleOp module, ArrayRef<double> ranges) {
  StaticPlan out;
  size_t next = 0;
  for (func::FuncOp func : entries(module)) {
    Selection sel = select(func);
    if (2 * (next + sel.activations.size()) > ranges.size())
      return func.emitError() << "static quantisation: " << ranges.size() / 2
                              << " calibrated ranges for more activations to quantise; the "
                                 "calibration ran a different model";
    llvm::DenseMap<Value, size_t> planned; // activation -> its index in out.activations
    for (Value x : sel.activations) {
      double lo = ranges[2 * next], hi = ranges[2 * next + 1];
      ++next;
      // Calibration saw infinities or NaNs: the activation stays float.
      if (!std::isfinite(lo) || !std::isfinite(hi))
        continue;
      ActivationQuantization a;
      a.tensor = x;
      a.readers = sel.readers[x];
      activationParameters(lo, hi, a.scale, a.zeroPoint);
      // The result of a MaxPool or a reshaping op takes its input's
      // parameters: the pairs around it cancel.
      Operation *def = x.getDefiningOp();
      if (def && keepsParameters(def) && planned.count(def->getOperand(0))) {
        const ActivationQuantization &in = out.activations[planned[def->getOperand(0)]];
        a.scale = in.scale;
        a.zeroPoint = in.zeroPoint;
      }
      planned[x] = out.activations.size();
      out.activations.push_back(std::move(a));
    }
    // Weighted ops whose input stays float stay float.
    for (Operation *op : sel.weighted)
      if (planned.count(op->getOperand(0)))
        out.weighted.push_back(plan(op));
  }
  if (2 * next != ranges.size())
    return module.emitError() << "static quantisation: " << ranges.size() / 2
                              << " calibrated ranges for " << next << " activations to quantise";
  return out;
}
