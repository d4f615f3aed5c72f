//===- ExactTf32.cpp - kiln-gpu-mark-exact-tf32 ---------------------------===//
//
// TF32 keeps f32's 8-bit exponent and 10 of its 23 mantissa bits, so an
// f32 whose low 13 mantissa bits are zero is a TF32 value: rounding it to
// TF32 changes nothing. Every float16 and bfloat16 value is such an f32
// (11 and 8 significant bits, exponents within f32's). A contraction
// whose two operands hold only such values gives on the tensor cores
// (mma.sync with TF32 inputs, f32 sums) the products it gives with f32
// multiply-adds, exactly (two 11-bit significands multiply into 22 bits);
// only the order of the sums differs.
//
// This pass, on tensors at the end of the lower phase for --target=cuda,
// marks such contractions `kiln.exact_in_tf32`; the GPU's tiled
// contractions (Contraction.cpp) then use the tensor cores at the default
// --gpu-precision=fp32. That is what a float16 or bfloat16 model's
// MatMuls and Convs are after kiln-widen-half: operands extended from
// half (the Cast's arith.extf, fused into the generic before), half
// weights converted to f32 at compile time.
//
// A value is exact when it comes from: an arith.extf of a half value, a
// constant whose elements all are, a fill with one, a tensor.empty (never
// read before written), views and reshapes of exact values, a pad of one
// with an exact padding value, an insert_slice of one into one, or a
// linalg op whose yielded value is exact given its operands: an extf,
// a constant, an exact operand's element, a select, min, max, negation or
// absolute value of exact values (a ReLU, a max pool of them).
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/GPU/Passes.h"
#include "passes/Utils/ElementsData.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cstring>

namespace kiln {
#define GEN_PASS_DEF_GPUMARKEXACTTF32PASS
#include "passes/Codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Whether the f32 bit pattern `bits` is a TF32 value.
bool tf32Bits(uint32_t bits) { return (bits & 0x1fffu) == 0; }

bool exactFloat(const APFloat &v) {
  if (&v.getSemantics() != &APFloat::IEEEsingle())
    return false;
  return tf32Bits(uint32_t(v.bitcastToAPInt().getZExtValue()));
}

/// Every element of an f32 constant is a TF32 value.
bool exactConstant(Attribute value) {
  auto typed = dyn_cast_or_null<ElementsAttr>(value);
  if (!typed || !typed.getElementType().isF32())
    return false;
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat())
    return exactFloat(dense.getSplatValue<APFloat>());
  std::optional<ArrayRef<char>> raw = kiln::rawElementData(value);
  if (!raw || raw->size() % 4 != 0)
    return false;
  for (size_t i = 0; i < raw->size(); i += 4) {
    uint32_t bits;
    std::memcpy(&bits, raw->data() + i, 4);
    if (!tf32Bits(bits))
      return false;
  }
  return true;
}

class Exactness {
public:
  /// Whether every element of the f32 tensor `v` is a TF32 value.
  bool tensor(Value v, unsigned depth = 0) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.getElementType().isF32() || depth > kMaxDepth)
      return false;
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    bool exact = compute(v, depth);
    memo[v] = exact;
    return exact;
  }

private:
  static constexpr unsigned kMaxDepth = 64;

  bool compute(Value v, unsigned depth) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false; // A function argument: the caller's f32 values.
    if (isa<tensor::EmptyOp>(def))
      return true;
    if (auto constant = dyn_cast<arith::ConstantOp>(def))
      return exactConstant(constant.getValue());
    if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
            tensor::CastOp>(def))
      return tensor(def->getOperand(0), depth + 1);
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(def))
      return tensor(insert.getSource(), depth + 1) && tensor(insert.getDest(), depth + 1);
    if (auto pad = dyn_cast<tensor::PadOp>(def)) {
      Value padding = pad.getConstantPaddingValue();
      return padding && scalar(padding, nullptr, depth) && tensor(pad.getSource(), depth + 1);
    }
    if (auto fill = dyn_cast<linalg::FillOp>(def))
      return scalar(fill.getInputs()[0], nullptr, depth);
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def)) {
      if (def->getNumRegions() != 1 || def->getRegion(0).empty())
        return false;
      Operation *yield = def->getRegion(0).front().getTerminator();
      unsigned index = cast<OpResult>(v).getResultNumber();
      return index < yield->getNumOperands() &&
             scalar(yield->getOperand(index), linalgOp, depth);
    }
    return false;
  }

  /// Whether the f32 scalar `x` (in `op`'s body, or outside any) is
  /// always a TF32 value.
  bool scalar(Value x, linalg::LinalgOp op, unsigned depth) {
    if (depth > kMaxDepth || !x.getType().isF32())
      return false;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (!op || arg.getOwner() != &op->getRegion(0).front())
        return false;
      OpOperand *operand = op.getMatchingOpOperand(arg);
      return operand && tensor(operand->get(), depth + 1);
    }
    Operation *def = x.getDefiningOp();
    if (auto extend = dyn_cast<arith::ExtFOp>(def)) {
      Type from = extend.getIn().getType();
      return from.isF16() || from.isBF16();
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
      auto value = dyn_cast<FloatAttr>(constant.getValue());
      return value && exactFloat(value.getValue());
    }
    if (auto select = dyn_cast<arith::SelectOp>(def))
      return scalar(select.getTrueValue(), op, depth + 1) &&
             scalar(select.getFalseValue(), op, depth + 1);
    if (isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp>(def))
      return scalar(def->getOperand(0), op, depth + 1) &&
             scalar(def->getOperand(1), op, depth + 1);
    if (isa<arith::NegFOp, math::AbsFOp>(def))
      return scalar(def->getOperand(0), op, depth + 1);
    return false;
  }

  DenseMap<Value, bool> memo;
};

struct GpuMarkExactTf32Pass
    : public kiln::impl::GpuMarkExactTf32PassBase<GpuMarkExactTf32Pass> {
  using Base::Base;

  void runOnOperation() override {
    Exactness exactness;
    getOperation().walk([&](linalg::LinalgOp op) {
      // A contraction: two inputs, reduction loops.
      if (op.getNumDpsInputs() != 2 || op.getNumReductionLoops() == 0 ||
          !op.hasPureTensorSemantics())
        return;
      if (exactness.tensor(op.getDpsInputOperand(0)->get()) &&
          exactness.tensor(op.getDpsInputOperand(1)->get()))
        op->setAttr("kiln.exact_in_tf32", UnitAttr::get(op->getContext()));
    });
  }
};

} // namespace
