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
// Alongside, while every position is known at compile time (none, or a
// constant), the pass keeps the list of the element values themselves,
// which may differ in shape: SequenceAt at a constant position is then
// that element, and ConcatFromSequence a Concat of the list.
//
// Sequences that escape (graph inputs/outputs, control flow, SequenceMap,
// optionals), or whose elements differ in shape and are read at run-time
// positions, are left alone; the lowering then reports them.
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
  /// The elements in order, while every position was a compile-time one.
  std::optional<SmallVector<Value>> elements;
};

/// A compile-time position (none: `none`) in [-length, length + extra),
/// normalised; nullopt when it is not a constant or out of range.
std::optional<int64_t> constantPosition(Value pos, int64_t length,
                                        int64_t none, int64_t extra) {
  if (onnx::isNone(pos))
    return none;
  std::optional<SmallVector<int64_t>> v = onnx::constantInts(pos);
  if (!v || v->size() != 1)
    return std::nullopt;
  int64_t p = v->front() < 0 ? v->front() + length : v->front();
  if (p < 0 || p >= length + extra)
    return std::nullopt;
  return p;
}

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

/// ConcatFromSequence's `axis` for elements of rank `rank` (a new axis may
/// also be `rank`), negative ones counted from the end; nullopt if out of
/// range.
std::optional<int64_t> concatAxis(int64_t axis, int64_t rank, bool newAxis) {
  if (axis < 0)
    axis += rank + (newAxis ? 1 : 0);
  if (axis < 0 || axis > rank || (!newAxis && axis == rank))
    return std::nullopt;
  return axis;
}

/// Concat of `elements` (static shapes of one rank, equal but along
/// `axis`) along `axis`, or stacked along a new `axis`; null if they do
/// not fit.
Value concatElements(Builder &b, ArrayRef<Value> elements, int64_t axis,
                     bool newAxis) {
  if (elements.empty() || !isStatic(elements[0].getType()))
    return {};
  auto first = cast<RankedTensorType>(elements[0].getType());
  int64_t rank = first.getRank();
  std::optional<int64_t> normalised = concatAxis(axis, rank, newAxis);
  if (!normalised)
    return {};
  axis = *normalised;
  SmallVector<Value> parts;
  SmallVector<int64_t> shape(first.getShape());
  if (newAxis)
    shape.insert(shape.begin() + axis, 0);
  else
    shape[axis] = 0;
  for (Value e : elements) {
    auto type = dyn_cast<RankedTensorType>(e.getType());
    if (!type || !type.hasStaticShape() || type.getRank() != rank ||
        type.getElementType() != first.getElementType())
      return {};
    for (int64_t d = 0; d < rank; ++d)
      if ((newAxis || d != axis) && type.getDimSize(d) != first.getDimSize(d))
        return {};
    if (newAxis) {
      SmallVector<int64_t> one(type.getShape());
      one.insert(one.begin() + axis, 1);
      e = b.reshape(e, type.clone(one));
      shape[axis] += 1;
    } else {
      shape[axis] += type.getDimSize(axis);
    }
    parts.push_back(e);
  }
  return b.op("Concat", first.clone(shape), parts, {b.i64Attr("axis", axis)});
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
        if (c.getInputs().empty())
          continue;
        Stacked out;
        out.length = c.getInputs().size();
        out.elements = SmallVector<Value>(c.getInputs());
        Type first = c.getInputs()[0].getType();
        if (isStatic(first) &&
            llvm::all_of(c.getInputs(), [&](Value v) { return v.getType() == first; })) {
          out.element = cast<RankedTensorType>(first);
          out.stacked = b.stack(c.getInputs(), out.element);
        }
        seqs[c.getResult()] = out;
      } else if (auto e = dyn_cast<onnx::SequenceEmptyOp>(op)) {
        Stacked out;
        out.elements.emplace();
        seqs[e.getResult()] = out;
      } else if (auto ins = dyn_cast<onnx::SequenceInsertOp>(op)) {
        const Stacked *s = known(ins.getInputSequence());
        if (!s)
          continue;
        Value t = ins.getTensor();
        std::optional<SmallVector<Value>> elements;
        if (s->elements)
          if (std::optional<int64_t> p =
                  constantPosition(ins.getPosition(), s->length, s->length, 1)) {
            elements = *s->elements;
            elements->insert(elements->begin() + *p, t);
          }
        if (!isStatic(t.getType()) || (s->element && s->element != t.getType()) ||
            (s->length > 0 && !s->stacked)) {
          if (!elements)
            continue;
          Stacked out{Value(), s->length + 1, RankedTensorType(), elements};
          seqs[ins.getResult()] = out;
          rewritten.push_back(&op);
          continue;
        }
        Stacked out{Value(), s->length + 1, cast<RankedTensorType>(t.getType()),
                    elements};
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
        if (!s || s->length == 0)
          continue;
        std::optional<SmallVector<Value>> elements;
        if (s->elements)
          if (std::optional<int64_t> p =
                  constantPosition(er.getPosition(), s->length, s->length - 1, 0)) {
            elements = *s->elements;
            elements->erase(elements->begin() + *p);
          }
        if (!s->stacked && !elements)
          continue;
        Stacked out{Value(), s->length - 1, s->element, elements};
        if (out.length > 0 && s->stacked) {
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
        if (!s)
          continue;
        Value pos = at.getPosition();
        std::optional<int64_t> p;
        if (s->elements)
          p = constantPosition(pos, s->length, -1, 0);
        if (p && *p >= 0) {
          at.getResult().replaceAllUsesWith((*s->elements)[*p]);
          rewritten.push_back(&op);
          continue;
        }
        if (!s->stacked)
          continue;
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
              seqs[split.getResult()] = {Value(), sType.getDimSize(0), RankedTensorType(),
                                         std::nullopt};
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
        Stacked out{Value(), count, xType.clone(elem), std::nullopt};
        out.stacked = b.reshape(v, stackedType(out));
        seqs[split.getResult()] = out;
      } else if (auto cat = dyn_cast<onnx::ConcatFromSequenceOp>(op)) {
        const Stacked *s = known(cat.getInputSequence());
        if (s && !s->stacked && s->elements) {
          Value v = concatElements(b, *s->elements, cat.getAxis(),
                                   cat.getNewAxis() != 0);
          if (!v)
            continue;
          cat.getResult().replaceAllUsesWith(v);
          rewritten.push_back(&op);
          continue;
        }
        if (!s || !s->stacked)
          continue;
        int64_t rank = s->element.getRank();
        bool newAxis = cat.getNewAxis() != 0;
        std::optional<int64_t> normalised = concatAxis(cat.getAxis(), rank, newAxis);
        if (!normalised)
          continue;
        int64_t axis = *normalised;
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
