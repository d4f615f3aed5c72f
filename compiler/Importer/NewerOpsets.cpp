//===- NewerOpsets.cpp - Nodes of opsets 18 to 24 in their opset-17 form --===//
//
// Debian's libonnx (1.12) knows the default domain up to opset 17: its
// schemas check the nodes, its shape inference types them, and the onnx
// dialect is generated from them. A model of opset 18 to 24 (what
// torch.onnx's dynamo exporter and recent converters write) is rewritten
// here, in the ModelProto, before either runs: each node whose op changed
// after opset 17 becomes its opset-17 form, and the model then says opset
// 17 to libonnx. The model keeps its declared opset for messages.
//
//   - interfaces: the Reduce ops' axes input of opset 18 becomes the
//     attribute (it must be constant), `noop_with_empty_axes` an Identity;
//     Split-18's `num_outputs` becomes split sizes (ONNX's rule for an
//     uneven split: ceil-sized chunks, the last one smaller); Pad-18's
//     `axes` input becomes pads for every dim; Resize-18's `axes` becomes
//     scales or sizes for every dim; DFT-20's axis input the attribute;
//   - attributes with no effect at their default: Resize `antialias` (and
//     where it does nothing: nearest mode, scales of at least 1),
//     `keep_aspect_ratio_policy` "stretch", LpPool-18 `ceil_mode` 0,
//     AveragePool-19 `dilations` of 1, Cast-19's `saturate` (it only
//     changes float8 results), QuantizeLinear-21's `output_dtype` (a zero
//     point of that type), QuantizeLinear-23's `precision` and
//     DequantizeLinear-23's `output_dtype` when float, the Q/DQ
//     `block_size` 0;
//   - ops new since 17 that compose from older ones (NewerOps.cpp): Mish (18), Gelu
//     (20), GroupNormalization (18, and 21's per-channel scale),
//     RMSNormalization, RotaryEmbedding and Attention (23, after
//     onnx/reference/ops; Attention without its qk_matmul_output or
//     24's nonpad_kv_seqlen), Swish and TensorScatter (24: a key/value
//     cache written in place, as a GatherElements and a Where) become a
//     few nodes. The nodes added keep the name and index of the node
//     they come from (LoadedModel::nodeIndex), so messages and `kiln
//     check` name the user's node.
//
// What changed after 17 only in the element types an op accepts needs no
// rewrite (the importer refuses the types it does not know, float8 and
// int4). Values whose meaning is new (Pad's 'wrap', Resize's
// 'half_pixel_symmetric', Scatter's max/min reductions, GridSample's
// 'linear'/'cubic') pass through to the lowering, which knows them. What
// has no opset-17 form (Bitwise*, Col2Im, DeformConv, CenterCropPad, ...)
// is an error naming the node, the op and the opset.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/NewerOpsets.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"


using namespace mlir;

namespace kiln::importer::newer {
namespace {

/// Ops new in opsets 18 to 23 that have no opset-17 form, and the opset
/// each came in.
const llvm::StringMap<int> kNewWithoutForm = {
    {"BitwiseAnd", 18},   {"BitwiseNot", 18},     {"BitwiseOr", 18},
    {"BitwiseXor", 18},   {"CenterCropPad", 18},  {"Col2Im", 18},
    {"DeformConv", 19},   {"AffineGrid", 20},     {"ImageDecoder", 20},
    {"RegexFullMatch", 20}, {"StringConcat", 20}, {"StringSplit", 20}};

/// The Reduce ops whose axes became an input in opset 18 (ReduceSum's did
/// in 13).
const llvm::StringSet<> kReduceOps = {
    "ReduceL1",   "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
    "ReduceMean", "ReduceMin", "ReduceProd",   "ReduceSumSquare"};

} // namespace

const AttributeProto *findAttr(const NodeProto &node, const std::string &name) {
  for (const AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

std::optional<AttributeProto> takeAttr(NodeProto &node, const std::string &name) {
  auto *attrs = node.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i)
    if (attrs->Get(i).name() == name) {
      AttributeProto a = attrs->Get(i);
      attrs->DeleteSubrange(i, 1);
      return a;
    }
  return std::nullopt;
}

AttributeProto *setAttr(NodeProto &node, const std::string &name,
                        AttributeProto::AttributeType type) {
  takeAttr(node, name);
  AttributeProto *a = node.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

void setInts(NodeProto &node, const std::string &name, llvm::ArrayRef<int64_t> values) {
  AttributeProto *a = setAttr(node, name, AttributeProto::INTS);
  for (int64_t v : values)
    a->add_ints(v);
}

void setInt(NodeProto &node, const std::string &name, int64_t value) {
  setAttr(node, name, AttributeProto::INT)->set_i(value);
}

void keepInputs(NodeProto &node, int count) {
  while (node.input_size() > count ||
         (node.input_size() > 0 && node.input(node.input_size() - 1).empty()))
    node.mutable_input()->RemoveLast();
}

bool hasInput(const NodeProto &node, int i) {
  return node.input_size() > i && !node.input(i).empty();
}

LogicalResult becomes(NodeProto &node, const std::string &opType,
                      std::vector<std::string> inputs) {
  node.set_op_type(opType);
  node.clear_attribute();
  node.clear_input();
  for (std::string &in : inputs)
    node.add_input(std::move(in));
  return success();
}

LogicalResult Rewriter::dropIfNeutral(NodeProto &node, const std::string &name,
                                      int64_t neutral, llvm::StringRef why) {
  std::optional<AttributeProto> a = takeAttr(node, name);
  if (!a)
    return success();
  bool isNeutral = a->type() == AttributeProto::INTS
                       ? llvm::all_of(a->ints(), [&](int64_t v) { return v == neutral; })
                       : a->i() == neutral;
  if (isNeutral)
    return success();
  return error() << why;
}

LogicalResult Rewriter::rewriteReduce(NodeProto &node) {
  std::optional<AttributeProto> noop = takeAttr(node, "noop_with_empty_axes");
  std::optional<std::vector<int64_t>> axes;
  if (hasInput(node, 1)) {
    axes = constantInts(node.input(1));
    if (!axes)
      return error() << "its axes (input '" << node.input(1)
                     << "') are computed at run time; kiln needs them constant "
                        "(an initializer or a Constant)";
  }
  keepInputs(node, 1);
  if (axes && !axes->empty()) {
    setInts(node, "axes", *axes);
    return success();
  }
  if (noop && noop->i() != 0) {
    // No axes and noop_with_empty_axes: the input as it is.
    node.set_op_type("Identity");
    node.clear_attribute();
  }
  return success();
}

LogicalResult Rewriter::rewriteSplit(NodeProto &node) {
  std::optional<AttributeProto> numOutputs = takeAttr(node, "num_outputs");
  if (!numOutputs || hasInput(node, 1))
    return success();
  int64_t n = numOutputs->i();
  if (n < 1 || n != node.output_size())
    return error() << "num_outputs is " << n << " but the node has " << node.output_size()
                   << " outputs";
  int64_t axis = 0;
  if (const AttributeProto *a = findAttr(node, "axis"))
    axis = a->i();
  const std::string &x = node.input(0);
  std::optional<int64_t> rank = rankOf(x);
  if (axis < 0 && rank)
    axis += *rank;
  // ONNX's rule for an uneven split: chunks of d / n + 1, the last one
  // what is left.
  if (std::optional<int64_t> d = axis >= 0 ? staticDim(x, axis) : std::nullopt) {
    if (*d % n == 0)
      return success(); // Split-13 without sizes splits evenly.
    int64_t chunk = *d / n + 1;
    if (*d - chunk * (n - 1) < 0)
      return error() << "a dim of " << *d << " does not split into " << n
                     << " chunks of " << chunk << " and a smaller last one";
    std::vector<int64_t> sizes(size_t(n), chunk);
    sizes.back() = *d - chunk * (n - 1);
    keepInputs(node, 1);
    node.add_input(constant(sizes));
    return success();
  }
  // The dim is not stated: sizes computed from it (they fold once kiln
  // knows it).
  std::string dim = add("Shape", {x}, [&](NodeProto &s) {
    setInt(s, "start", axis);
    if (axis != -1)
      setInt(s, "end", axis + 1);
  });
  std::string chunk = add("Div", {add("Add", {dim, constant({n - 1})}), constant({n})});
  std::vector<std::string> parts(size_t(n - 1), chunk);
  parts.push_back(add("Sub", {dim, add("Mul", {chunk, constant({n - 1})})}));
  keepInputs(node, 1);
  node.add_input(add("Concat", parts, [](NodeProto &c) { setInt(c, "axis", 0); }));
  return success();
}

LogicalResult Rewriter::rewritePad(NodeProto &node) {
  if (!hasInput(node, 3)) {
    keepInputs(node, 3);
    return success();
  }
  if (!hasInput(node, 1))
    return error() << "it has axes but no pads";
  std::optional<std::vector<int64_t>> axes = constantInts(node.input(3));
  if (!axes)
    return error() << "its axes (input '" << node.input(3)
                   << "') are computed at run time; kiln needs them constant";
  std::optional<int64_t> rank = rankOf(node.input(0));
  if (!rank)
    return error() << "it pads some axes ('axes' input) of '" << node.input(0)
                   << "', whose rank the model does not state";
  int64_t r = *rank, k = int64_t(axes->size());
  std::vector<int64_t> which(size_t(r), -1); // dim -> position in axes
  for (int64_t j = 0; j < k; ++j) {
    int64_t a = (*axes)[j] < 0 ? (*axes)[j] + r : (*axes)[j];
    if (a < 0 || a >= r || which[a] >= 0)
      return error() << "axes holds " << (*axes)[j] << ", not a distinct axis of a rank-" << r
                     << " input";
    which[a] = j;
  }
  std::string pads;
  if (std::optional<std::vector<int64_t>> given = constantInts(node.input(1))) {
    if (int64_t(given->size()) != 2 * k)
      return error() << "pads holds " << given->size() << " values for " << k << " axes";
    std::vector<int64_t> full(size_t(2 * r), 0);
    for (int64_t d = 0; d < r; ++d)
      if (which[d] >= 0) {
        full[d] = (*given)[which[d]];
        full[d + r] = (*given)[which[d] + k];
      }
    pads = constant(full);
  } else {
    // Pads given at run time: each dim's pair gathered from them.
    std::string zero = constant({0});
    std::vector<std::string> parts;
    for (int64_t side = 0; side < 2; ++side)
      for (int64_t d = 0; d < r; ++d)
        parts.push_back(which[d] < 0 ? zero
                                     : add("Gather", {node.input(1),
                                                      constant({which[d] + side * k})}));
    pads = add("Concat", parts, [](NodeProto &c) { setInt(c, "axis", 0); });
  }
  node.set_input(1, pads);
  keepInputs(node, 3);
  return success();
}

LogicalResult Rewriter::rewriteResize(NodeProto &node) {
  std::string mode = "nearest";
  if (const AttributeProto *a = findAttr(node, "mode"))
    mode = a->s();
  if (std::optional<AttributeProto> policy = takeAttr(node, "keep_aspect_ratio_policy"))
    if (policy->s() != "stretch" && hasInput(node, 3))
      return error() << "keep_aspect_ratio_policy '" << policy->s()
                     << "' is not supported (only 'stretch')";
  std::optional<AttributeProto> axesAttr = takeAttr(node, "axes");
  std::optional<AttributeProto> antialias = takeAttr(node, "antialias");
  if (antialias && antialias->i() != 0 && mode != "nearest") {
    // The filter only widens when the image shrinks.
    std::optional<std::vector<double>> scales =
        hasInput(node, 2) ? constantFloats(node.input(2)) : std::nullopt;
    if (!scales || llvm::any_of(*scales, [](double s) { return s < 1; }))
      return error() << "antialias=1 (a wider filter when downscaling) is not supported; "
                        "kiln resizes without it only where the scales are constant and "
                        "at least 1";
  }
  if (!axesAttr)
    return success();
  const std::string &x = node.input(0);
  std::optional<int64_t> rank = rankOf(x);
  if (!rank)
    return error() << "it resizes some axes ('axes' attribute) of '" << x
                   << "', whose rank the model does not state";
  int64_t r = *rank, k = axesAttr->ints_size();
  std::vector<int64_t> which(size_t(r), -1);
  for (int64_t j = 0; j < k; ++j) {
    int64_t a = axesAttr->ints(int(j));
    a = a < 0 ? a + r : a;
    if (a < 0 || a >= r || which[a] >= 0)
      return error() << "axes holds " << axesAttr->ints(int(j))
                     << ", not a distinct axis of a rank-" << r << " input";
    which[a] = j;
  }
  if (hasInput(node, 1)) {
    std::optional<std::vector<double>> roi = constantFloats(node.input(1));
    if (!roi || int64_t(roi->size()) != 2 * k)
      return error() << "with 'axes', kiln needs the roi constant, 2 values per axis";
    std::vector<float> full(size_t(2 * r));
    for (int64_t d = 0; d < r; ++d) {
      full[d] = which[d] >= 0 ? float((*roi)[which[d]]) : 0.f;
      full[d + r] = which[d] >= 0 ? float((*roi)[which[d] + k]) : 1.f;
    }
    node.set_input(1, floatConstant(full));
  }
  if (hasInput(node, 2)) {
    std::optional<std::vector<double>> scales = constantFloats(node.input(2));
    if (!scales || int64_t(scales->size()) != k)
      return error() << "with 'axes', kiln needs the scales constant, one per axis";
    std::vector<float> full(size_t(r), 1.f);
    for (int64_t d = 0; d < r; ++d)
      if (which[d] >= 0)
        full[d] = float((*scales)[which[d]]);
    node.set_input(2, floatConstant(full));
  }
  if (hasInput(node, 3)) {
    // Sizes of the other dims: the input's own.
    std::vector<std::string> parts;
    for (int64_t d = 0; d < r; ++d)
      parts.push_back(which[d] >= 0 ? add("Gather", {node.input(3), constant({which[d]})})
                                    : add("Shape", {x}, [&](NodeProto &s) {
                                        setInt(s, "start", d);
                                        setInt(s, "end", d + 1);
                                      }));
    node.set_input(3, add("Concat", parts, [](NodeProto &c) { setInt(c, "axis", 0); }));
  }
  return success();
}

LogicalResult Rewriter::rewriteQuantize(NodeProto &node) {
  takeAttr(node, "saturate");
  if (failed(dropIfNeutral(node, "block_size", 0,
                           "block_size is not 0: blocked quantisation is not supported")))
    return failure();
  std::optional<AttributeProto> outType = takeAttr(node, "output_dtype");
  if (node.op_type() == "DequantizeLinear") {
    // DequantizeLinear-23's output type: kiln's is the scale's, float.
    if (outType && outType->i() != 0 && outType->i() != TensorProto::FLOAT)
      return error() << "output_dtype " << dataTypeName(int32_t(outType->i()))
                     << " is not supported (kiln dequantises to the scale's type)";
    return success();
  }
  // QuantizeLinear-23's precision of x / y_scale: kiln divides in float.
  if (std::optional<AttributeProto> precision = takeAttr(node, "precision"))
    if (precision->i() != 0 && precision->i() != TensorProto::FLOAT)
      return error() << "precision " << dataTypeName(int32_t(precision->i()))
                     << " is not supported (kiln divides in float)";
  if (!outType || outType->i() == 0 || hasInput(node, 2))
    return success();
  // No zero point: the output type is the zero point's.
  int64_t to = outType->i();
  if (to != TensorProto::UINT8 && to != TensorProto::INT8 && to != TensorProto::UINT16 &&
      to != TensorProto::INT16)
    return error() << "output_dtype " << dataTypeName(int32_t(to))
                   << " is not supported (kiln quantises to int8, uint8, int16, uint16)";
  std::string zero = add("Cast", {constant({0}, true)}, [&](NodeProto &c) { setInt(c, "to", to); });
  while (node.input_size() < 2)
    node.add_input("");
  node.add_input(zero);
  return success();
}

/// DFT-20 takes the axis as input 2 (default -2, counting the trailing
/// real/imaginary dim); DFT-17 as an attribute over the same dims.
LogicalResult Rewriter::rewriteDft(NodeProto &node) {
  int64_t axis = -2;
  if (hasInput(node, 2)) {
    std::optional<std::vector<int64_t>> given = constantInts(node.input(2));
    if (!given || given->size() != 1)
      return error() << "its axis (input '" << node.input(2)
                     << "') must be a constant scalar";
    axis = given->front();
  }
  // Negative counts from the back, the real/imaginary dim included, as
  // kiln's DFT-17 reads it too; made positive where the rank is known.
  if (std::optional<int64_t> rank = rankOf(node.input(0)); axis < 0 && rank)
    axis += *rank;
  keepInputs(node, 2);
  setInt(node, "axis", axis);
  return success();
}

LogicalResult Rewriter::rewriteNode(NodeProto &node) {
  const std::string &op = node.op_type();
  if (auto it = kNewWithoutForm.find(op); it != kNewWithoutForm.end())
    return error() << "operator not supported by kiln yet (new in opset " << it->second
                   << "; kiln reads opsets after 17 in their opset-17 forms, and this op "
                      "has none)";
  if (kReduceOps.contains(op))
    return rewriteReduce(node);
  // The ops rewritten from their first input on.
  using Rewrite = LogicalResult (Rewriter::*)(NodeProto &);
  static const llvm::StringMap<Rewrite> fromInput = {
      {"Split", &Rewriter::rewriteSplit},
      {"Pad", &Rewriter::rewritePad},
      {"Resize", &Rewriter::rewriteResize},
      {"GroupNormalization", &Rewriter::rewriteGroupNorm},
      {"Gelu", &Rewriter::rewriteGelu},
      {"Mish", &Rewriter::rewriteMish},
      {"RMSNormalization", &Rewriter::rewriteRmsNorm},
      {"RotaryEmbedding", &Rewriter::rewriteRotary},
      {"Attention", &Rewriter::rewriteAttention},
      {"Swish", &Rewriter::rewriteSwish},
      {"TensorScatter", &Rewriter::rewriteTensorScatter}};
  // Ops of opset 24: for an older model they are unknown ops, which the
  // schema check reports.
  if ((op == "Swish" || op == "TensorScatter") && model.opsets[""] < 24)
    return success();
  if (auto it = fromInput.find(op); it != fromInput.end()) {
    if (!hasInput(node, 0))
      return error() << "its first input is missing";
    return (this->*it->second)(node);
  }
  if (op == "QuantizeLinear" || op == "DequantizeLinear")
    return rewriteQuantize(node);
  if (op == "DFT" && model.opsets[""] >= 20) {
    if (!hasInput(node, 0))
      return error() << "its first input is missing";
    return rewriteDft(node);
  }
  if (op == "Cast" || op == "CastLike") {
    takeAttr(node, "saturate");
    return success();
  }
  if (op == "LpPool")
    return failed(dropIfNeutral(node, "ceil_mode", 0, "ceil_mode=1 is not supported"))
               ? failure()
               : dropIfNeutral(node, "dilations", 1, "dilations other than 1 are not supported");
  if (op == "AveragePool")
    return dropIfNeutral(node, "dilations", 1, "dilations other than 1 are not supported");
  return success();
}

LogicalResult Rewriter::rewriteGraph(GraphProto &graph) {
  scopes.push_back(&graph);
  llvm::scope_exit pop([&] { scopes.pop_back(); });
  // The nodes each node becomes besides itself (they go before it).
  std::vector<std::vector<NodeProto>> added(size_t(graph.node_size()));
  bool grew = false;
  for (int i = 0, e = graph.node_size(); i < e; ++i) {
    NodeProto &node = *graph.mutable_node(i);
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      continue;
    header.Clear();
    header.set_name(node.name());
    header.set_op_type(node.op_type());
    currentIndex = i;
    emitted = &added[size_t(i)];
    if (failed(rewriteNode(node)))
      return failure();
    grew |= !emitted->empty();
  }
  emitted = nullptr;
  if (grew) {
    // Rebuilt in order; the nodes already there keep their addresses.
    int count = graph.node_size();
    std::vector<NodeProto *> own(static_cast<size_t>(count));
    graph.mutable_node()->UnsafeArenaExtractSubrange(0, count, own.data());
    for (int i = 0; i < count; ++i) {
      // The index in the user's file (a local function's call had it).
      auto known = model.nodeIndex.find(own[size_t(i)]);
      int index = known == model.nodeIndex.end() ? i : known->second;
      for (NodeProto &n : added[size_t(i)]) {
        NodeProto *extra = graph.add_node();
        extra->Swap(&n);
        model.nodeIndex[extra] = index;
      }
      graph.mutable_node()->AddAllocated(own[size_t(i)]);
      model.nodeIndex[own[size_t(i)]] = index;
    }
  }
  // Then the graphs inside the nodes, which see this graph's constants.
  for (NodeProto &node : *graph.mutable_node())
    for (AttributeProto &a : *node.mutable_attribute()) {
      if (a.has_g() && failed(rewriteGraph(*a.mutable_g())))
        return failure();
      for (GraphProto &g : *a.mutable_graphs())
        if (failed(rewriteGraph(g)))
          return failure();
    }
  return success();
}

} // namespace kiln::importer::newer

namespace kiln::importer {

LogicalResult rewriteNewerOpsets(MLIRContext &context, LoadedModel &model) {
  auto it = model.opsets.find("");
  if (it == model.opsets.end() || it->second <= kLibonnxOpset)
    return success();
  newer::Rewriter rewriter(context, model);
  if (failed(rewriter.rewriteGraph(*model.proto.mutable_graph())))
    return failure();
  for (auto &opset : *model.proto.mutable_opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      opset.set_version(kLibonnxOpset);
  return success();
}

} // namespace kiln::importer
