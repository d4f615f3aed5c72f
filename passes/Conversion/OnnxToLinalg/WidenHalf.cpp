//===- WidenHalf.cpp - kiln-widen-half: float16/bfloat16 ops in f32 ------===//
//
// The lowering computes elementwise ops on float16 and bfloat16 in f32
// (extended on load, rounded on store) and moves their elements, but its
// other patterns (MatMul, Conv, Gemm, normalisations, pooling, reductions,
// Softmax, ...) take f32 and f64 only. This pass puts every other onnx op
// with a half operand between Casts: its half operands become f32 (a
// constant is converted here, once, instead of by a Cast at run time), its
// half results f32, each cast back to its own type for its users. What
// the model computes is then rounded to half where the model's values
// are (each op's result), but computed in f32 within an op: sums over a
// reduction or a contraction are not rounded to half at every step, as
// ONNX Runtime's CPU kernels for float16 do too.
//
// Left alone: the ops whose lowering handles half itself (elementwise
// ops but Where, and those that only move elements), Cast, CastLike and
// constants, ops with subgraphs (their bodies' ops are widened one by
// one), ops with a `dtype` or `to` attribute (their result type is not
// their operands'), and ops with a non-tensor half operand or result
// (sequences).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Passes.h"
#include "passes/Conversion/OnnxToLinalg/Patterns.h"
#include "passes/Utils/ElementsData.h"
#include "passes/Utils/HalfFloat.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSet.h"

#include <cstring>

namespace kiln {
#define GEN_PASS_DEF_WIDENHALFPASS
#include "passes/Conversion/OnnxToLinalg/Passes.h.inc"
} // namespace kiln

using namespace mlir;
namespace onnx = kiln::onnx;

namespace {

constexpr int64_t kOnnxFloat = 1, kOnnxFloat16 = 10, kOnnxBFloat16 = 16;

bool isHalf(Type t) { return t.isF16() || t.isBF16(); }

/// A tensor of float16 or bfloat16.
bool isHalfTensor(Type t) {
  auto tensor = dyn_cast<TensorType>(t);
  return tensor && isHalf(tensor.getElementType());
}

/// `t` with f32 elements.
Type widened(Type t) {
  return cast<TensorType>(t).clone(Float32Type::get(t.getContext()));
}

/// `value` (a half constant) as f32 elements; none for attributes whose
/// data is not at hand.
std::optional<ElementsAttr> widenedConstant(ElementsAttr value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  bool bf16 = type.getElementType().isBF16();
  auto f32Type = cast<RankedTensorType>(widened(type));
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat()) {
    APFloat v = dense.getSplatValue<APFloat>();
    bool lost = false;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost); // Exact.
    return ElementsAttr(DenseElementsAttr::get(f32Type, v));
  }
  std::optional<ArrayRef<char>> raw = kiln::rawElementData(value);
  if (!raw || int64_t(raw->size()) != type.getNumElements() * 2)
    return std::nullopt;
  std::vector<float> out(size_t(type.getNumElements()));
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t h;
    std::memcpy(&h, raw->data() + 2 * i, 2); // Little-endian hosts only, as the importer.
    out[i] = bf16 ? kiln::bfloat16BitsToFloat(h) : kiln::float16BitsToFloat(h);
  }
  if (out.size() * sizeof(float) <= 4096)
    return ElementsAttr(DenseElementsAttr::get(f32Type, ArrayRef<float>(out)));
  return ElementsAttr(DenseResourceElementsAttr::get(
      f32Type, "widened", HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(out))));
}

struct WidenHalfPass : public kiln::impl::WidenHalfPassBase<WidenHalfPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Elementwise ops compute half in f32 themselves (but Where, whose
    // first operand decides); these only move elements.
    llvm::StringSet<> native = {
        "onnx.Identity", "onnx.Reshape",  "onnx.Flatten", "onnx.Squeeze", "onnx.Unsqueeze",
        "onnx.Transpose", "onnx.Gather",  "onnx.Concat",  "onnx.Slice",   "onnx.Shape",
        "onnx.Size",      "onnx.Expand",  "onnx.Tile",    "onnx.Pad"};
    {
      kiln::lowering::OnnxTypeConverter converter;
      RewritePatternSet scratch(&getContext());
      kiln::lowering::populateElementwisePatterns(converter, scratch, &native);
      native.erase("onnx.Where");
    }
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() ==
                                  onnx::OnnxDialect::getDialectNamespace() &&
          wanted(op, native))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      widen(op);
    for (auto &[half, f32] : wide)
      if (Operation *def = half.getDefiningOp(); def && isa<onnx::ConstantOp>(def) && def->use_empty())
        def->erase();
  }

  static bool wanted(Operation *op, const llvm::StringSet<> &native) {
    if (native.contains(op->getName().getStringRef()) ||
        isa<onnx::CastOp, onnx::CastLikeOp, onnx::ConstantOp>(op) || op->getNumRegions() ||
        op->hasAttr("dtype") || op->hasAttr("to"))
      return false;
    auto other = [](Type t) {
      return !isa<TensorType, NoneType>(t) && !isa<IntegerType, FloatType, IndexType>(t);
    };
    if (llvm::any_of(op->getOperandTypes(), other) || llvm::any_of(op->getResultTypes(), other))
      return false;
    return llvm::any_of(op->getOperandTypes(), isHalfTensor);
  }

  void widen(Operation *op) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (!isHalfTensor(v.getType()))
        continue;
      auto [it, fresh] = wide.try_emplace(v);
      if (fresh)
        it->second = widenValue(v, loc);
      operand.set(it->second);
    }
    b.setInsertionPointAfter(op);
    for (OpResult result : op->getResults()) {
      Type type = result.getType();
      if (!isHalfTensor(type))
        continue;
      result.setType(widened(type));
      auto back = onnx::CastOp::create(
          b, loc, type, result,
          cast<TensorType>(type).getElementType().isBF16() ? kOnnxBFloat16 : kOnnxFloat16);
      result.replaceAllUsesExcept(back, back);
    }
  }

  /// `v` as f32: a converted constant next to a half constant, else a
  /// Cast just after `v` is defined.
  Value widenValue(Value v, Location loc) {
    OpBuilder b(v.getContext());
    if (auto constant = v.getDefiningOp<onnx::ConstantOp>()) {
      ElementsAttr value = constant.getValueAttr();
      if (std::optional<ElementsAttr> f32 = value ? widenedConstant(value) : std::nullopt) {
        b.setInsertionPointAfter(constant);
        return onnx::ConstantOp::create(b, constant.getLoc(), f32->getType(), nullptr, *f32,
                                        nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
      }
    }
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
    return onnx::CastOp::create(b, loc, widened(v.getType()), v, kOnnxFloat);
  }

  /// Each half value's f32 counterpart, shared by its users.
  DenseMap<Value, Value> wide;
};

} // namespace
