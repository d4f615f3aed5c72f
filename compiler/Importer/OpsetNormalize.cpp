//===- OpsetNormalize.cpp - Older opset forms to the dialect's form -------===//
//
// The one place where older opsets' differences are handled. The onnx
// dialect has each op in its opset-17 interface; a node from an older
// opset is rewritten here before the op is built (nodes of opsets 18 to 23
// are rewritten earlier, in the ModelProto, by NewerOpsets.cpp, because
// libonnx's checks and inference already need them in opset-17 form):
//
//   - attributes that later became inputs (Squeeze/Unsqueeze/ReduceSum axes,
//     Slice-1 starts/ends/axes, Pad pads/value, Split split, Clip min/max,
//     TopK k, Dropout ratio, Reshape-1 shape, Upsample-7 scales);
//   - ops renamed or folded into successors (Upsample -> Resize,
//     Scatter -> ScatterElements), Resize-10 -> Resize with explicit modes;
//   - changed semantics (Softmax, LogSoftmax and Hardmax before 13 coerce
//     the input to 2-D around `axis`);
//   - legacy attributes (`consumed_inputs`, `is_test`, `spatial`,
//     `broadcast`/`axis` of opset-1 binary ops, Cast-1's string `to`).
//
// One structural rewrite lives in GraphImporter.cpp instead, because it
// builds regions: Scan-8 (batched) becomes a Scan over the batch around the
// node's Scan in its opset-9 form.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/ImporterInternal.h"
#include "dialects/Onnx/IR/DataTypes.h"
#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace kiln::importer {

namespace {

using ::onnx::AttributeProto;

const AttributeProto *takeAttr(NodeState &s, const std::string &name) {
  auto it = s.attrs.find(name);
  if (it == s.attrs.end())
    return nullptr;
  const AttributeProto *a = it->second;
  s.attrs.erase(it);
  return a;
}

/// Ensures operand `index` exists (padding with `none`) and sets it.
void setOperand(OpBuilder &b, NodeState &s, size_t index, Value v) {
  while (s.operands.size() <= index)
    s.operands.push_back(createNone(b, s.loc));
  s.operands[index] = v;
}

/// Moves an INTS attribute to input `index` as an i64 tensor.
void intsAttrToInput(OpBuilder &b, NodeState &s, const std::string &name,
                     size_t index) {
  if (const AttributeProto *a = takeAttr(s, name))
    setOperand(b, s, index,
               createI64Constant(b, s.loc,
                                 SmallVector<int64_t>(a->ints().begin(),
                                                      a->ints().end())));
}

Type elementTypeOf(Value v) {
  if (auto t = dyn_cast<ShapedType>(v.getType()))
    return t.getElementType();
  return {};
}

/// Replaces constant empty tensors by `none` (Resize-11 passed "absent" roi,
/// scales and sizes as empty tensors).
void emptyConstantsToNone(OpBuilder &b, NodeState &s) {
  for (size_t i = 1; i < s.operands.size(); ++i) {
    Operation *def = s.operands[i].getDefiningOp();
    if (!def || def->getName().getStringRef() != "onnx.Constant")
      continue;
    auto value = def->getAttrOfType<ElementsAttr>("value");
    if (value && value.getNumElements() == 0)
      s.operands[i] = createNone(b, s.loc);
  }
}

/// Softmax, LogSoftmax and Hardmax before opset 13 flatten the input to 2-D
/// at `axis` (default 1) and normalise along dim 1. Rewritten as
/// Flatten(axis) -> op(axis=-1) -> Reshape(Shape(x)) unless axis is already
/// the last dim.
LogicalResult normalizeCoercedSoftmax(OpBuilder &b, NodeState &s) {
  int64_t axis = 1;
  if (const AttributeProto *a = takeAttr(s, "axis"))
    axis = a->i();
  s.converted.set("axis", b.getI64IntegerAttr(-1));
  if (s.operands.empty())
    return success();
  Value x = s.operands[0];
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type)
    return emitError(s.loc) << s.node->op_type() << "-" << s.opset
                            << ": the input's rank must be known to convert "
                               "to the opset-13 form";
  int64_t rank = type.getRank();
  if (axis < -rank || axis > rank || (rank == 0 && axis != 0))
    return emitError(s.loc) << s.node->op_type() << ": axis " << axis
                            << " is out of range for rank " << rank;
  if (axis < 0)
    axis += rank;
  if (rank == 0 || axis == rank - 1)
    return success();
  // Flatten to [prod(d[:axis]), prod(d[axis:])].
  auto prod = [&](int64_t from, int64_t to) {
    int64_t p = 1;
    for (int64_t i = from; i < to; ++i) {
      if (type.isDynamicDim(i))
        return ShapedType::kDynamic;
      p *= type.getDimSize(i);
    }
    return p;
  };
  auto flatType = RankedTensorType::get({prod(0, axis), prod(axis, rank)},
                                        type.getElementType());
  Value flat = createOnnxOp(b, s.loc, "Flatten", {x}, {flatType},
                            {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))})
                   ->getResult(0);
  s.operands[0] = flat;
  s.resultTypes[0] = flatType;
  Location loc = s.loc;
  s.wrapResults[0] = [x, type, loc](OpBuilder &b, Value r) -> Value {
    auto shapeType = RankedTensorType::get({type.getRank()}, b.getI64Type());
    Value shape = createOnnxOp(b, loc, "Shape", {x}, {shapeType})->getResult(0);
    return createOnnxOp(b, loc, "Reshape", {r, shape},
                        {RankedTensorType::get(type.getShape(),
                                               cast<ShapedType>(r.getType())
                                                   .getElementType())})
        ->getResult(0);
  };
  // The op itself now sees a 2-D input; its result type must follow.
  return success();
}

/// Opset-1 binary ops: `broadcast=1, axis=k` aligns B with A starting at dim
/// k. Rewritten as an Unsqueeze of B to numpy (trailing) alignment.
LogicalResult normalizeLegacyBroadcast(OpBuilder &b, NodeState &s) {
  const AttributeProto *broadcast = takeAttr(s, "broadcast");
  const AttributeProto *axisAttr = takeAttr(s, "axis");
  if (!broadcast || broadcast->i() == 0 || !axisAttr || s.operands.size() < 2)
    return success();
  auto aType = dyn_cast<RankedTensorType>(s.operands[0].getType());
  auto bType = dyn_cast<RankedTensorType>(s.operands[1].getType());
  if (!aType || !bType)
    return emitError(s.loc) << s.node->op_type() << "-" << s.opset
                            << ": legacy broadcast needs inputs of known rank";
  int64_t axis = axisAttr->i();
  if (axis < 0)
    axis += aType.getRank();
  int64_t trailing = aType.getRank() - axis - bType.getRank();
  if (axis < 0 || trailing < 0)
    return emitError(s.loc) << s.node->op_type() << ": broadcast axis "
                            << axisAttr->i() << " is out of range";
  if (trailing == 0)
    return success();
  SmallVector<int64_t> axes, shape(bType.getShape());
  for (int64_t i = 0; i < trailing; ++i) {
    axes.push_back(bType.getRank() + i);
    shape.push_back(1);
  }
  Value axesV = createI64Constant(b, s.loc, axes);
  s.operands[1] =
      createOnnxOp(b, s.loc, "Unsqueeze", {s.operands[1], axesV},
                   {RankedTensorType::get(shape, bType.getElementType())})
          ->getResult(0);
  return success();
}

int32_t castTypeFromString(const std::string &name) {
  return llvm::StringSwitch<int32_t>(name)
      .Case("FLOAT", ::onnx::TensorProto::FLOAT)
      .Case("UINT8", ::onnx::TensorProto::UINT8)
      .Case("INT8", ::onnx::TensorProto::INT8)
      .Case("UINT16", ::onnx::TensorProto::UINT16)
      .Case("INT16", ::onnx::TensorProto::INT16)
      .Case("INT32", ::onnx::TensorProto::INT32)
      .Case("INT64", ::onnx::TensorProto::INT64)
      .Case("BOOL", ::onnx::TensorProto::BOOL)
      .Case("FLOAT16", ::onnx::TensorProto::FLOAT16)
      .Case("DOUBLE", ::onnx::TensorProto::DOUBLE)
      .Case("UINT32", ::onnx::TensorProto::UINT32)
      .Case("UINT64", ::onnx::TensorProto::UINT64)
      .Default(0);
}

LogicalResult normalizeConstant(OpBuilder &b, NodeState &s) {
  // Spec: exactly one of the value attributes is set.
  int count = 0;
  for (const char *name : {"value", "value_float", "value_floats", "value_int",
                           "value_ints", "value_string", "value_strings",
                           "sparse_value"})
    count += s.attrs.count(name);
  if (count != 1)
    return emitError(s.loc) << "Constant: exactly one value attribute must be "
                               "set, found "
                            << count;
  // Every form of Constant becomes `value`.
  auto scalarOrVector = [&](Type elem, auto values, bool scalar) {
    SmallVector<int64_t> shape;
    if (!scalar)
      shape.push_back(static_cast<int64_t>(values.size()));
    return DenseElementsAttr::get(RankedTensorType::get(shape, elem),
                                  ArrayRef(values));
  };
  if (const AttributeProto *a = takeAttr(s, "value_float")) {
    s.converted.set("value", scalarOrVector(b.getF32Type(),
                                            SmallVector<float>{a->f()}, true));
  } else if (const AttributeProto *a = takeAttr(s, "value_floats")) {
    s.converted.set("value", scalarOrVector(b.getF32Type(),
                                            SmallVector<float>(
                                                a->floats().begin(),
                                                a->floats().end()),
                                            false));
  } else if (const AttributeProto *a = takeAttr(s, "value_int")) {
    s.converted.set("value", scalarOrVector(b.getI64Type(),
                                            SmallVector<int64_t>{a->i()},
                                            true));
  } else if (const AttributeProto *a = takeAttr(s, "value_ints")) {
    s.converted.set("value",
                    scalarOrVector(b.getI64Type(),
                                   SmallVector<int64_t>(a->ints().begin(),
                                                        a->ints().end()),
                                   false));
  } else if (const AttributeProto *a = takeAttr(s, "value_string")) {
    auto type = RankedTensorType::get({}, kiln::onnx::StringType::get(b.getContext()));
    s.converted.set("value", DenseStringElementsAttr::get(
                                 type, {StringRef(a->s())}));
  } else if (const AttributeProto *a = takeAttr(s, "value_strings")) {
    SmallVector<StringRef> strs(a->strings().begin(), a->strings().end());
    auto type = RankedTensorType::get({static_cast<int64_t>(strs.size())},
                                      kiln::onnx::StringType::get(b.getContext()));
    s.converted.set("value", DenseStringElementsAttr::get(type, strs));
  } else if (const AttributeProto *a = takeAttr(s, "sparse_value")) {
    auto attr = importSparseTensor(
        const_cast<::onnx::SparseTensorProto &>(a->sparse_tensor()),
        *s.model, s.loc);
    if (failed(attr))
      return failure();
    s.converted.set("value", *attr);
  }
  return success();
}

} // namespace

LogicalResult normalizeNode(OpBuilder &b, NodeState &s) {
  const std::string &op = s.opType;
  int v = s.opset;

  // Legacy optimisation hints with no meaning for an AOT compiler.
  if (v < 7) {
    takeAttr(s, "consumed_inputs");
    takeAttr(s, "is_test");
  }

  if (op == "Constant")
    return normalizeConstant(b, s);

  if ((op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum") && v < 13)
    intsAttrToInput(b, s, "axes", 1);
  else if (op == "Split" && v < 13)
    intsAttrToInput(b, s, "split", 1);
  else if (op == "Reshape" && v < 5)
    intsAttrToInput(b, s, "shape", 1);
  else if (op == "Slice" && v < 10) {
    intsAttrToInput(b, s, "starts", 1);
    intsAttrToInput(b, s, "ends", 2);
    intsAttrToInput(b, s, "axes", 3);
  } else if (op == "TopK" && v < 10) {
    if (const AttributeProto *k = takeAttr(s, "k"))
      setOperand(b, s, 1, createI64Constant(b, s.loc, {k->i()}));
  } else if (op == "Pad" && v < 11) {
    intsAttrToInput(b, s, "pads", 1);
    const AttributeProto *value = takeAttr(s, "value");
    if (value && !s.operands.empty()) {
      Type elem = elementTypeOf(s.operands[0]);
      if (!elem)
        return emitError(s.loc) << "Pad: the input must be a tensor";
      setOperand(b, s, 2, createScalarConstant(b, s.loc, elem, value->f()));
    }
    if (const AttributeProto *paddings = takeAttr(s, "paddings")) {
      SmallVector<int64_t> pads(paddings->ints().begin(),
                                paddings->ints().end());
      setOperand(b, s, 1, createI64Constant(b, s.loc, pads));
    }
  } else if (op == "Clip" && v < 11) {
    Type elem = s.operands.empty() ? Type() : elementTypeOf(s.operands[0]);
    const AttributeProto *min = takeAttr(s, "min");
    const AttributeProto *max = takeAttr(s, "max");
    if (elem && min)
      setOperand(b, s, 1, createScalarConstant(b, s.loc, elem, min->f()));
    if (elem && max)
      setOperand(b, s, 2, createScalarConstant(b, s.loc, elem, max->f()));
  } else if (op == "PRelu" && v < 7 && s.operands.size() == 2) {
    // PRelu-6 applies a [C] slope per channel (dim 1); from opset 7 the
    // slope broadcasts numpy-style. Unsqueeze it to [C, 1, ..., 1].
    auto xType = dyn_cast<RankedTensorType>(s.operands[0].getType());
    auto slopeType = dyn_cast<RankedTensorType>(s.operands[1].getType());
    if (xType && slopeType && xType.getRank() >= 3 && slopeType.getRank() == 1 &&
        slopeType.getDimSize(0) != 1) {
      SmallVector<int64_t> axes, shape(slopeType.getShape());
      for (int64_t i = 1; i < xType.getRank() - 1; ++i) {
        axes.push_back(i);
        shape.push_back(1);
      }
      Value axesV = createI64Constant(b, s.loc, axes);
      s.operands[1] =
          createOnnxOp(b, s.loc, "Unsqueeze", {s.operands[1], axesV},
                       {RankedTensorType::get(shape, slopeType.getElementType())})
              ->getResult(0);
    }
  } else if (op == "Dropout" && v < 12) {
    if (const AttributeProto *ratio = takeAttr(s, "ratio"))
      setOperand(b, s, 1,
                 createScalarConstant(b, s.loc, b.getF32Type(), ratio->f()));
    // The mask is bool from Dropout-10 on; Dropout-7's mask has the data's
    // type. Build the bool mask (data's shape) and cast it for opset < 10.
    if (s.node->output_size() > 1 && !s.node->output(1).empty() &&
        !s.operands.empty()) {
      auto data = dyn_cast<TensorType>(s.operands[0].getType());
      if (!data)
        return emitError(s.loc) << "Dropout: the input must be a tensor";
      Type maskType =
          data.hasRank()
              ? Type(RankedTensorType::get(data.getShape(), b.getI1Type()))
              : Type(UnrankedTensorType::get(b.getI1Type()));
      s.resultTypes[1] = maskType;
      if (v < 10) {
        Location loc = s.loc;
        Type dataType = data;
        int64_t to = kiln::onnx::dataTypeForElementType(data.getElementType());
        if (!to)
          return emitError(s.loc) << "Dropout-" << v
                                  << ": unsupported data type for the mask";
        s.wrapResults[1] = [loc, dataType, to](OpBuilder &b, Value mask) {
          return createOnnxOp(b, loc, "Cast", {mask}, {dataType},
                              {b.getNamedAttr("to", b.getI64IntegerAttr(to))})
              ->getResult(0);
        };
      }
    }
  } else if (op == "BatchNormalization" && v < 9) {
    if (const AttributeProto *spatial = takeAttr(s, "spatial"))
      if (spatial->i() != 1)
        return emitError(s.loc) << "BatchNormalization-" << v
                                << ": spatial=0 is not supported";
  } else if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") &&
             v < 13) {
    return normalizeCoercedSoftmax(b, s);
  } else if (op == "Scatter") {
    s.opType = "ScatterElements";
  } else if (op == "Upsample" || (op == "Resize" && v < 11)) {
    // Upsample and Resize-10 index the input as x_in = x_out / scale,
    // rounding down for nearest: Resize's asymmetric/floor modes.
    if (const AttributeProto *scales = takeAttr(s, "scales")) {
      SmallVector<float> values(scales->floats().begin(),
                                scales->floats().end());
      auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                        b.getF32Type());
      setOperand(b, s, 1,
                 createOnnxOp(b, s.loc, "Constant", {}, {type},
                              {b.getNamedAttr("value",
                                              DenseElementsAttr::get(
                                                  type, ArrayRef(values)))})
                     ->getResult(0));
    }
    std::string mode = "nearest";
    if (const AttributeProto *m = takeAttr(s, "mode"))
      mode = m->s() == "bilinear" ? "linear" : m->s();
    if (s.operands.size() < 2)
      return emitError(s.loc) << s.node->op_type() << ": scales are missing";
    Value scales = s.operands[1];
    s.operands.resize(1);
    setOperand(b, s, 1, createNone(b, s.loc));
    setOperand(b, s, 2, scales);
    s.opType = "Resize";
    s.converted.set("mode", b.getStringAttr(mode));
    s.converted.set("coordinate_transformation_mode",
                    b.getStringAttr("asymmetric"));
    s.converted.set("nearest_mode", b.getStringAttr("floor"));
  } else if (op == "Cast" && v < 6) {
    auto it = s.attrs.find("to");
    if (it != s.attrs.end() && it->second->type() == AttributeProto::STRING) {
      int32_t to = castTypeFromString(it->second->s());
      if (!to)
        return emitError(s.loc) << "Cast: unknown target type '"
                                << it->second->s() << "'";
      s.attrs.erase(it);
      s.converted.set("to", b.getI64IntegerAttr(to));
    }
  } else if (op == "Concat" && v < 4) {
    if (!s.attrs.count("axis"))
      s.converted.set("axis", b.getI64IntegerAttr(1));
  } else if (op == "Gemm" && v < 7) {
    takeAttr(s, "broadcast");
  } else if (v < 7 &&
             (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
              op == "Pow" || op == "And" || op == "Or" || op == "Xor" ||
              op == "Equal" || op == "Greater" || op == "Less")) {
    return normalizeLegacyBroadcast(b, s);
  }

  if (s.opType == "Resize")
    emptyConstantsToNone(b, s);
  return success();
}

} // namespace kiln::importer
