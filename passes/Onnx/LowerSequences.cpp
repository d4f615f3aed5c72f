//===- LowerSequences.cpp - onnx-lower-sequences pass ---------------------===//
//
// kiln has no run-time sequence type. A sequence that lives inside a graph
// (built and consumed there) whose length is known at compile time and
// whose elements all have one static shape S is a tensor [L, S...]: this
// pass rewrites the sequence ops of a function's top-level block into
// tensor ops on that stacked tensor.
//
//   SequenceConstruct    Reshape each element to [1, S...], Concat on 0
//   SequenceEmpty        length 0, element type set by the first insert
//   SequenceInsert       Concat the new element last, then Gather a
//                        permutation computed from the (run-time) position
//   SequenceErase        Gather every index but the (run-time) position
//   SequenceAt           Gather at the position (wrapped and clamped)
//   SequenceLength       a constant
//   SplitToSequence      equal chunks: Reshape/Transpose into [L, S...];
//                        chunk sizes from data: the length only
//   ConcatFromSequence   Transpose/Reshape of the stacked tensor
//
// Sequences that escape (graph inputs/outputs, control flow, SequenceMap,
// optionals) or whose elements differ in shape are left alone; the
// lowering then reports them.
//
//===----------------------------------------------------------------------===//

#include "passes/Onnx/Passes.h"

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::onnx {
#define GEN_PASS_DEF_ONNXLOWERSEQUENCESPASS
#include "passes/Onnx/Passes.h.inc"
} // namespace kiln::onnx

using namespace mlir;
namespace onnx = kiln::onnx;

namespace {

/// A sequence as a stacked tensor: `stacked` is [length, S...] (null when
/// only the length is known, or the sequence is empty).
struct Stacked {
  Value stacked;
  int64_t length = 0;
  RankedTensorType element; ///< S, once known.
};

struct Builder {
  OpBuilder &b;
  Location loc;

  Value op(StringRef name, Type type, ValueRange operands,
           ArrayRef<NamedAttribute> attrs = {}) {
    OperationState st(loc, ("onnx." + name).str());
    st.addOperands(operands);
    st.addTypes(type);
    st.addAttributes(attrs);
    return b.create(st)->getResult(0);
  }
  NamedAttribute i64Attr(StringRef name, int64_t v) {
    return b.getNamedAttr(name, b.getI64IntegerAttr(v));
  }
  Value constant(RankedTensorType type, ArrayRef<int64_t> values) {
    SmallVector<APInt> ints;
    for (int64_t v : values)
      ints.push_back(APInt(type.getElementType().getIntOrFloatBitWidth(), v, true));
    return op("Constant", type, {},
              {b.getNamedAttr("value", DenseElementsAttr::get(type, ints))});
  }
  Value reshape(Value v, RankedTensorType type) {
    auto shapeType = RankedTensorType::get({type.getRank()}, b.getI64Type());
    return op("Reshape", type, {v, constant(shapeType, type.getShape())});
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(type.getDimSize(p));
    return op("Transpose", type.clone(shape), {v},
              {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
  }
  Value gather(Value data, Value indices, RankedTensorType type) {
    return op("Gather", type, {data, indices}, {i64Attr("axis", 0)});
  }
  /// The stacked tensor [n, S...] of `elements`.
  Value stack(ValueRange elements, RankedTensorType element) {
    SmallVector<int64_t> one{1};
    one.append(element.getShape().begin(), element.getShape().end());
    SmallVector<Value> parts;
    for (Value e : elements)
      parts.push_back(reshape(e, element.clone(one)));
    if (parts.size() == 1)
      return parts.front();
    one[0] = parts.size();
    return op("Concat", element.clone(one), parts, {i64Attr("axis", 0)});
  }
  /// A position tensor normalised to [0, length] (negative counts from
  /// the end); `pos` is a scalar int tensor.
  Value normalise(Value pos, int64_t length) {
    auto type = cast<RankedTensorType>(pos.getType());
    auto scalar = RankedTensorType::get({}, type.getElementType());
    pos = reshape(pos, scalar);
    Value zero = constant(scalar, {0});
    Value len = constant(scalar, {length});
    auto boolType = RankedTensorType::get({}, b.getI1Type());
    Value negative = op("Less", boolType, {pos, zero});
    return op("Where", scalar, {negative, op("Add", scalar, {pos, len}), pos});
  }
  /// [0, 1, ..., n - 1] of the position's element type.
  Value iota(int64_t n, Type elem) {
    SmallVector<int64_t> v;
    for (int64_t i = 0; i < n; ++i)
      v.push_back(i);
    return constant(RankedTensorType::get({n}, elem), v);
  }
};

bool isStatic(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.hasStaticShape();
}

RankedTensorType stackedType(const Stacked &s) {
  SmallVector<int64_t> shape{s.length};
  shape.append(s.element.getShape().begin(), s.element.getShape().end());
  return s.element.clone(shape);
}

struct LowerSequencesPass
    : public onnx::impl::OnnxLowerSequencesPassBase<LowerSequencesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getBody().empty())
      return;
    llvm::DenseMap<Value, Stacked> seqs;
    SmallVector<Operation *> rewritten;
    for (Operation &op : func.getBody().front()) {
      OpBuilder ob(&op);
      Builder b{ob, op.getLoc()};
      auto known = [&](Value v) -> const Stacked * {
        auto it = seqs.find(v);
        return it == seqs.end() ? nullptr : &it->second;
      };
      if (auto c = dyn_cast<onnx::SequenceConstructOp>(op)) {
        if (c.getInputs().empty() || !isStatic(c.getInputs()[0].getType()))
          continue;
        auto element = cast<RankedTensorType>(c.getInputs()[0].getType());
        if (llvm::any_of(c.getInputs(), [&](Value v) { return v.getType() != element; }))
          continue;
        seqs[c.getResult()] = {b.stack(c.getInputs(), element),
                               int64_t(c.getInputs().size()), element};
      } else if (auto e = dyn_cast<onnx::SequenceEmptyOp>(op)) {
        seqs[e.getResult()] = {};
      } else if (auto ins = dyn_cast<onnx::SequenceInsertOp>(op)) {
        const Stacked *s = known(ins.getInputSequence());
        Value t = ins.getTensor();
        if (!s || !isStatic(t.getType()) || (s->element && s->element != t.getType()) ||
            (s->length > 0 && !s->stacked))
          continue;
        Stacked out{Value(), s->length + 1, cast<RankedTensorType>(t.getType())};
        Value grown = s->length == 0 ? b.stack({t}, out.element)
                                     : b.op("Concat", stackedType(out),
                                            {s->stacked, b.stack({t}, out.element)},
                                            {b.i64Attr("axis", 0)});
        if (onnx::isNone(ins.getPosition()) || s->length == 0) {
          out.stacked = grown;
        } else {
          // Result index j reads j below the position, the new (last)
          // element at it, and j - 1 above it.
          Value pos = ins.getPosition();
          Type et = cast<RankedTensorType>(pos.getType()).getElementType();
          Value p = b.normalise(pos, s->length);
          Value j = b.iota(out.length, et);
          auto idxType = RankedTensorType::get({out.length}, et);
          auto boolType = RankedTensorType::get({out.length}, ob.getI1Type());
          auto scalar = RankedTensorType::get({}, et);
          Value below = b.op("Less", boolType, {j, p});
          Value at = b.op("Equal", boolType, {j, p});
          Value prev = b.op("Sub", idxType, {j, b.constant(scalar, {1})});
          Value idx = b.op("Where", idxType,
                           {below, j, b.op("Where", idxType,
                                           {at, b.constant(scalar, {s->length}), prev})});
          out.stacked = b.gather(grown, idx, stackedType(out));
        }
        seqs[ins.getResult()] = out;
      } else if (auto er = dyn_cast<onnx::SequenceEraseOp>(op)) {
        const Stacked *s = known(er.getInputSequence());
        if (!s || !s->stacked || s->length == 0)
          continue;
        Stacked out{Value(), s->length - 1, s->element};
        if (out.length > 0) {
          Type et = onnx::isNone(er.getPosition())
                        ? ob.getI64Type()
                        : cast<RankedTensorType>(er.getPosition().getType()).getElementType();
          Value j = b.iota(out.length, et);
          if (onnx::isNone(er.getPosition())) {
            out.stacked = b.gather(s->stacked, j, stackedType(out));
          } else {
            // Result index j reads j below the position, j + 1 from it on.
            Value p = b.normalise(er.getPosition(), s->length);
            auto idxType = RankedTensorType::get({out.length}, et);
            auto boolType = RankedTensorType::get({out.length}, ob.getI1Type());
            Value from = b.op("GreaterOrEqual", boolType, {j, p});
            Value next = b.op("Add", idxType,
                              {j, b.constant(RankedTensorType::get({}, et), {1})});
            out.stacked = b.gather(s->stacked, b.op("Where", idxType, {from, next, j}),
                                   stackedType(out));
          }
        }
        seqs[er.getResult()] = out;
      } else if (auto at = dyn_cast<onnx::SequenceAtOp>(op)) {
        const Stacked *s = known(at.getInputSequence());
        if (!s || !s->stacked)
          continue;
        Value pos = at.getPosition();
        auto scalar = RankedTensorType::get(
            {}, cast<RankedTensorType>(pos.getType()).getElementType());
        at.getResult().replaceAllUsesWith(
            b.gather(s->stacked, b.reshape(pos, scalar), s->element));
      } else if (auto len = dyn_cast<onnx::SequenceLengthOp>(op)) {
        const Stacked *s = known(len.getInputSequence());
        if (!s)
          continue;
        len.getResult().replaceAllUsesWith(
            b.constant(RankedTensorType::get({}, ob.getI64Type()), {s->length}));
      } else if (auto split = dyn_cast<onnx::SplitToSequenceOp>(op)) {
        if (!isStatic(split.getInput().getType()))
          continue;
        auto xType = cast<RankedTensorType>(split.getInput().getType());
        int64_t rank = xType.getRank(), axis = split.getAxis();
        if (axis < 0)
          axis += rank;
        if (axis < 0 || axis >= rank)
          continue;
        int64_t dim = xType.getDimSize(axis), chunk = 1;
        bool keep = split.getKeepdims() != 0 || !onnx::isNone(split.getSplit());
        if (!onnx::isNone(split.getSplit())) {
          auto sType = dyn_cast<RankedTensorType>(split.getSplit().getType());
          if (!sType || !sType.hasStaticShape())
            continue;
          std::optional<SmallVector<int64_t>> sizes = onnx::constantInts(split.getSplit());
          if (sType.getRank() == 1) {
            if (!sizes) {
              // Chunk sizes from data: only the count is known.
              seqs[split.getResult()] = {Value(), sType.getDimSize(0), RankedTensorType()};
              rewritten.push_back(&op);
              continue;
            }
            if (sizes->empty() ||
                llvm::any_of(*sizes, [&](int64_t v) { return v != sizes->front(); }))
              continue;
          } else if (!sizes || sizes->size() != 1) {
            continue;
          }
          chunk = sizes->front();
        }
        if (chunk <= 0 || dim % chunk != 0)
          continue;
        // [.., dim, ..] -> [.., L, chunk, ..] -> L first.
        int64_t count = dim / chunk;
        SmallVector<int64_t> split4(xType.getShape().take_front(axis));
        split4.push_back(count);
        split4.push_back(chunk);
        split4.append(xType.getShape().begin() + axis + 1, xType.getShape().end());
        Value v = b.reshape(split.getInput(), xType.clone(split4));
        SmallVector<int64_t> perm{axis};
        for (int64_t d = 0; d <= rank; ++d)
          if (d != axis)
            perm.push_back(d);
        v = b.transpose(v, perm);
        SmallVector<int64_t> elem(xType.getShape());
        elem[axis] = chunk;
        if (!keep)
          elem.erase(elem.begin() + axis);
        Stacked out{Value(), count, xType.clone(elem)};
        out.stacked = b.reshape(v, stackedType(out));
        seqs[split.getResult()] = out;
      } else if (auto cat = dyn_cast<onnx::ConcatFromSequenceOp>(op)) {
        const Stacked *s = known(cat.getInputSequence());
        if (!s || !s->stacked)
          continue;
        int64_t rank = s->element.getRank();
        bool newAxis = cat.getNewAxis() != 0;
        int64_t axis = cat.getAxis();
        if (axis < 0)
          axis += rank + (newAxis ? 1 : 0);
        if (axis < 0 || axis > rank || (!newAxis && axis == rank))
          continue;
        // Move the sequence dim to `axis`, then merge it with the next dim
        // unless it is a new axis.
        SmallVector<int64_t> perm;
        for (int64_t d = 1; d <= rank; ++d) {
          if (d - 1 == axis)
            perm.push_back(0);
          perm.push_back(d);
        }
        if (axis == rank)
          perm.push_back(0);
        Value v = b.transpose(s->stacked, perm);
        if (!newAxis) {
          SmallVector<int64_t> shape(s->element.getShape());
          shape[axis] *= s->length;
          v = b.reshape(v, s->element.clone(shape));
        }
        cat.getResult().replaceAllUsesWith(v);
      } else {
        continue;
      }
      rewritten.push_back(&op);
    }
    // Erase what no longer has users, last first.
    for (Operation *op : llvm::reverse(rewritten))
      if (op->use_empty())
        op->erase();
    // Returned values may now have more precise types.
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    func.setFunctionType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                   ret.getOperandTypes()));
  }
};

} // namespace
