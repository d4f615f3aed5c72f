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
//   - ops new since 17 that compose from older ones: Mish (18), Gelu
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

#include "compiler/Importer/ImporterInternal.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

using namespace mlir;

namespace kiln::importer {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

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

/// The values of a small integer tensor (T = int64_t), or of a small
/// integer or float one (T = double); nullopt for other types or data kept
/// outside the model file.
template <typename T>
std::optional<std::vector<T>> tensorValues(const TensorProto &t) {
  if (t.data_location() == TensorProto::EXTERNAL)
    return std::nullopt;
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > 4096)
      return std::nullopt;
    count *= d;
    if (count > 4096)
      return std::nullopt;
  }
  // The values of a tensor whose elements are S: raw bytes, or `field`.
  auto read = [&](auto zero, const auto &field) -> std::optional<std::vector<T>> {
    using S = decltype(zero);
    std::vector<T> out;
    if (t.has_raw_data()) {
      if (t.raw_data().size() != size_t(count) * sizeof(S))
        return std::nullopt;
      for (int64_t i = 0; i < count; ++i) {
        S v;
        std::memcpy(&v, t.raw_data().data() + i * sizeof(S), sizeof(S));
        out.push_back(T(v));
      }
    } else {
      for (auto v : field)
        out.push_back(T(v));
    }
    if (int64_t(out.size()) != count)
      return std::nullopt;
    return out;
  };
  switch (t.data_type()) {
  case TensorProto::INT64:
    return read(int64_t(0), t.int64_data());
  case TensorProto::INT32:
    return read(int32_t(0), t.int32_data());
  case TensorProto::FLOAT:
    if (!std::is_floating_point_v<T>)
      return std::nullopt;
    return read(float(0), t.float_data());
  default:
    return std::nullopt;
  }
}

const AttributeProto *findAttr(const NodeProto &node, const std::string &name) {
  for (const AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

/// Removes attribute `name`; what it was, if the node had it.
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

/// Drops trailing empty inputs and keeps at most `count`.
void keepInputs(NodeProto &node, int count) {
  while (node.input_size() > count ||
         (node.input_size() > 0 && node.input(node.input_size() - 1).empty()))
    node.mutable_input()->RemoveLast();
}

bool hasInput(const NodeProto &node, int i) {
  return node.input_size() > i && !node.input(i).empty();
}

/// Makes `node` an `opType` of `inputs`, without attributes (its name and
/// outputs stay).
LogicalResult becomes(NodeProto &node, const std::string &opType,
                      std::vector<std::string> inputs) {
  node.set_op_type(opType);
  node.clear_attribute();
  node.clear_input();
  for (std::string &in : inputs)
    node.add_input(std::move(in));
  return success();
}

/// Rewrites one graph (and the graphs inside it).
class Rewriter {
public:
  Rewriter(MLIRContext &context, LoadedModel &model) : context(context), model(model) {
    collectValueNames(model.proto.graph(), names);
  }

  LogicalResult rewriteGraph(GraphProto &graph);

private:
  MLIRContext &context;
  LoadedModel &model;
  /// The graphs being rewritten, outermost first (values of outer graphs
  /// are visible in inner ones).
  std::vector<GraphProto *> scopes;
  /// Every value name of the model, so that new ones do not clash.
  std::set<std::string> names;
  int counter = 0;

  /// The name and op of the node being rewritten, its index, and the
  /// nodes added before it.
  NodeProto header;
  int currentIndex = 0;
  std::vector<NodeProto> *emitted = nullptr;

  std::string fresh(const std::string &base) {
    std::string name;
    do
      name = base + "__kiln" + std::to_string(counter++);
    while (names.count(name));
    names.insert(name);
    return name;
  }

  InFlightDiagnostic error() {
    return emitError(nodeLoc(context, model, header, currentIndex))
           << header.op_type() << " (opset " << model.opsets[""] << "): ";
  }

  /// Adds a node before the one being rewritten; its output's name.
  std::string add(const std::string &opType, std::vector<std::string> inputs,
                  std::function<void(NodeProto &)> attrs = nullptr) {
    return addOutputs(opType, std::move(inputs), 1, attrs).front();
  }

  /// Adds a node with `count` outputs (fresh names, or `named` ones).
  std::vector<std::string> addOutputs(const std::string &opType, std::vector<std::string> inputs,
                                      int count, std::function<void(NodeProto &)> attrs = nullptr,
                                      std::vector<std::string> named = {}) {
    NodeProto n;
    n.set_op_type(opType);
    n.set_name(header.name());
    for (std::string &in : inputs)
      n.add_input(std::move(in));
    std::vector<std::string> outs = std::move(named);
    while (int(outs.size()) < count)
      outs.push_back(fresh(header.name().empty() ? opType : header.name()));
    for (const std::string &o : outs)
      n.add_output(o);
    if (attrs)
      attrs(n);
    emitted->push_back(std::move(n));
    return outs;
  }

  /// A float scalar of `like`'s element type.
  std::string scalarLike(float v, const std::string &like) {
    return add("CastLike", {floatConstant({v}, true), like});
  }

  /// `x` with `perm` applied.
  std::string transpose(const std::string &x, llvm::ArrayRef<int64_t> perm) {
    return add("Transpose", {x}, [&](NodeProto &t) { setInts(t, "perm", perm); });
  }

  /// Dims [start, end) of `x` (end 0: to the last).
  std::string shapeOf(const std::string &x, int64_t start, int64_t end = 0) {
    return add("Shape", {x}, [&](NodeProto &n) {
      setInt(n, "start", start);
      if (end)
        setInt(n, "end", end);
    });
  }

  /// Elements [start, end) of `x` along `axis`, every `step`th.
  std::string slice(const std::string &x, int64_t axis, int64_t start, int64_t end,
                    int64_t step = 1) {
    return add("Slice", {x, constant({start}), constant({end}), constant({axis}), constant({step})});
  }

  /// A Constant node holding `values` (int64 or float) as a 1-D (or
  /// scalar) tensor.
  template <typename T>
  std::string constantNode(llvm::ArrayRef<T> values, bool scalar) {
    constexpr bool isFloat = std::is_same_v<T, float>;
    return add("Constant", {}, [&](NodeProto &n) {
      TensorProto *t = setAttr(n, "value", AttributeProto::TENSOR)->mutable_t();
      t->set_data_type(isFloat ? TensorProto::FLOAT : TensorProto::INT64);
      if (!scalar)
        t->add_dims(int64_t(values.size()));
      for (T v : values) {
        if constexpr (isFloat)
          t->add_float_data(v);
        else
          t->add_int64_data(v);
      }
    });
  }
  std::string constant(llvm::ArrayRef<int64_t> values, bool scalar = false) {
    return constantNode(values, scalar);
  }
  std::string floatConstant(llvm::ArrayRef<float> values, bool scalar = false) {
    return constantNode(values, scalar);
  }

  /// The values of `name` when an initializer or a Constant node of this
  /// graph or an enclosing one holds them (T as for tensorValues).
  template <typename T>
  std::optional<std::vector<T>> constantValues(const std::string &name) {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      for (const TensorProto &t : (*it)->initializer())
        if (t.name() == name)
          return tensorValues<T>(t);
      for (const NodeProto &n : (*it)->node()) {
        if (n.op_type() != "Constant" || n.output_size() != 1 || n.output(0) != name)
          continue;
        if (const AttributeProto *a = findAttr(n, "value"))
          return tensorValues<T>(a->t());
        if (const AttributeProto *a = findAttr(n, "value_ints"))
          return std::vector<T>(a->ints().begin(), a->ints().end());
        if (const AttributeProto *a = findAttr(n, "value_int"))
          return std::vector<T>{T(a->i())};
        if constexpr (std::is_floating_point_v<T>) {
          if (const AttributeProto *a = findAttr(n, "value_floats"))
            return std::vector<T>(a->floats().begin(), a->floats().end());
          if (const AttributeProto *a = findAttr(n, "value_float"))
            return std::vector<T>{T(a->f())};
        }
        return std::nullopt;
      }
      // The current node's added constants.
      if (emitted && it == scopes.rbegin())
        for (const NodeProto &n : *emitted)
          if (n.op_type() == "Constant" && n.output(0) == name)
            if (const AttributeProto *a = findAttr(n, "value"))
              return tensorValues<T>(a->t());
    }
    return std::nullopt;
  }

  std::optional<std::vector<int64_t>> constantInts(const std::string &name) {
    return constantValues<int64_t>(name);
  }

  std::optional<std::vector<double>> constantFloats(const std::string &name) {
    return constantValues<double>(name);
  }

  /// The dims of `name` when the model states its shape (an initializer, a
  /// graph input, value_info or output, a Constant), -1 for a dim it
  /// leaves unknown.
  std::optional<std::vector<int64_t>> statedDims(const std::string &name) {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      const GraphProto &g = **it;
      for (const TensorProto &t : g.initializer())
        if (t.name() == name)
          return std::vector<int64_t>(t.dims().begin(), t.dims().end());
      for (const auto *list : {&g.input(), &g.value_info(), &g.output()})
        for (const auto &vi : *list)
          if (vi.name() == name && vi.type().has_tensor_type() &&
              vi.type().tensor_type().has_shape()) {
            std::vector<int64_t> dims;
            for (const auto &dim : vi.type().tensor_type().shape().dim())
              dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
            return dims;
          }
      for (const NodeProto &n : g.node())
        if (n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == name)
          if (const AttributeProto *a = findAttr(n, "value"))
            return std::vector<int64_t>(a->t().dims().begin(), a->t().dims().end());
    }
    return std::nullopt;
  }

  /// The rank of `name` when the model states it.
  std::optional<int64_t> rankOf(const std::string &name) {
    if (std::optional<std::vector<int64_t>> dims = statedDims(name))
      return int64_t(dims->size());
    return std::nullopt;
  }

  /// Dim `d` of `name` when the model states it.
  std::optional<int64_t> staticDim(const std::string &name, int64_t d) {
    std::optional<std::vector<int64_t>> dims = statedDims(name);
    if (!dims || d < 0 || d >= int64_t(dims->size()) || (*dims)[d] < 0)
      return std::nullopt;
    return (*dims)[d];
  }

  LogicalResult rewriteNode(NodeProto &node);
  LogicalResult rewriteReduce(NodeProto &node);
  LogicalResult rewriteSplit(NodeProto &node);
  LogicalResult rewritePad(NodeProto &node);
  LogicalResult rewriteResize(NodeProto &node);
  LogicalResult rewriteGroupNorm(NodeProto &node);
  LogicalResult rewriteGelu(NodeProto &node);
  LogicalResult rewriteMish(NodeProto &node);
  LogicalResult rewriteQuantize(NodeProto &node);
  LogicalResult rewriteDft(NodeProto &node);
  LogicalResult rewriteRmsNorm(NodeProto &node);
  LogicalResult rewriteRotary(NodeProto &node);
  LogicalResult rewriteAttention(NodeProto &node);
  LogicalResult rewriteSwish(NodeProto &node);
  LogicalResult rewriteTensorScatter(NodeProto &node);
  /// Drops attribute `name` when it holds `neutral` (or is absent); an
  /// error naming `why` otherwise.
  LogicalResult dropIfNeutral(NodeProto &node, const std::string &name, int64_t neutral,
                              llvm::StringRef why);
};

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

/// GroupNormalization: the input as [N, G, rest], normalised per group by
/// InstanceNormalization (whose scale and bias are per group, as opset 18
/// has them), then back to the input's shape; from opset 21 the scale and
/// bias are per channel and apply after, on [N, C, rest].
LogicalResult Rewriter::rewriteGroupNorm(NodeProto &node) {
  const AttributeProto *groups = findAttr(node, "num_groups");
  if (!groups || groups->i() < 1 || groups->i() > (int64_t(1) << 24))
    return error() << "num_groups must be given, from 1 to 2^24";
  if (node.input_size() < 3 || !hasInput(node, 1) || !hasInput(node, 2))
    return error() << "it takes X, scale and bias";
  float epsilon = 1e-5f;
  if (const AttributeProto *e = findAttr(node, "epsilon"))
    epsilon = e->f();
  int64_t g = groups->i();
  bool perChannel = model.opsets[""] >= 21;
  // Before opset 21 scale and bias hold one value per group.
  for (int i : {1, 2})
    if (std::optional<std::vector<int64_t>> dims = statedDims(node.input(i));
        !perChannel && dims && (dims->size() != 1 || ((*dims)[0] >= 0 && (*dims)[0] != g)))
      return error() << (i == 1 ? "scale" : "bias") << " must have num_groups (" << g
                     << ") elements before opset 21";
  std::string x = node.input(0);
  std::string grouped = add("Reshape", {x, constant({0, g, -1})});
  std::string scale = node.input(1), bias = node.input(2);
  if (perChannel) {
    // InstanceNormalization's scale and bias take the input's type.
    scale = add("CastLike", {floatConstant(std::vector<float>(size_t(g), 1.f)), x});
    bias = add("CastLike", {floatConstant(std::vector<float>(size_t(g), 0.f)), x});
  }
  std::string normal = add("InstanceNormalization", {grouped, scale, bias},
                           [&](NodeProto &n) {
                             setAttr(n, "epsilon", AttributeProto::FLOAT)->set_f(epsilon);
                           });
  std::string shape = add("Shape", {x});
  if (!perChannel)
    return becomes(node, "Reshape", {normal, shape});
  // Per channel: [N, C, rest] * scale[C, 1] + bias[C, 1], then X's shape.
  std::string channels =
      add("Concat", {constant({0}), add("Shape", {node.input(1)}), constant({-1})},
          [](NodeProto &c) { setInt(c, "axis", 0); });
  std::string rows = add("Reshape", {normal, channels});
  std::string column = constant({-1, 1});
  std::string scaled = add("Mul", {rows, add("Reshape", {node.input(1), column})});
  std::string shifted = add("Add", {scaled, add("Reshape", {node.input(2), column})});
  return becomes(node, "Reshape", {shifted, shape});
}

/// Gelu: x/2 * (1 + erf(x / sqrt 2)), or with approximate="tanh"
/// x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), the forms kiln's
/// GELU fusion recognises.
LogicalResult Rewriter::rewriteGelu(NodeProto &node) {
  std::string approximate = "none";
  if (const AttributeProto *a = findAttr(node, "approximate"))
    approximate = a->s();
  if (approximate != "none" && approximate != "tanh")
    return error() << "approximate '" << approximate << "' is not 'none' nor 'tanh'";
  std::string x = node.input(0);
  auto scalar = [&](float v) { return add("CastLike", {floatConstant({v}, true), x}); };
  std::string inner;
  if (approximate == "none") {
    inner = add("Erf", {add("Div", {x, scalar(1.4142135623730951f)})});
  } else {
    std::string cube = add("Mul", {add("Mul", {x, x}), x});
    std::string sum = add("Add", {x, add("Mul", {cube, scalar(0.044715f)})});
    inner = add("Tanh", {add("Mul", {sum, scalar(0.7978845608028654f)})});
  }
  std::string half = add("Mul", {x, scalar(0.5f)});
  std::string onePlus = add("Add", {inner, scalar(1.f)});
  return becomes(node, "Mul", {half, onePlus});
}

/// Mish: x * tanh(softplus(x)).
LogicalResult Rewriter::rewriteMish(NodeProto &node) {
  std::string x = node.input(0);
  return becomes(node, "Mul", {x, add("Tanh", {add("Softplus", {x})})});
}

LogicalResult Rewriter::rewriteSwish(NodeProto &node) {
  // Swish-24: x * sigmoid(alpha * x) (alpha 1 is SiLU, as torch writes it).
  std::string x = node.input(0);
  float alpha = 1;
  if (const AttributeProto *a = findAttr(node, "alpha"))
    alpha = a->f();
  std::string scaled = alpha == 1 ? x : add("Mul", {x, scalarLike(alpha, x)});
  return becomes(node, "Mul", {x, add("Sigmoid", {scaled})});
}

LogicalResult Rewriter::rewriteTensorScatter(NodeProto &node) {
  // TensorScatter-24 (a key/value cache updated in place): present is
  // past with update's positions s written at write_indices[b] + s along
  // `axis` (modulo its length when circular). Read the other way: cache
  // position p takes update[p - w[b]] where 0 <= p - w[b] < the update's
  // length (after the modulo), else keeps past[p]; a GatherElements of
  // the update by those indices and a Where.
  if (!hasInput(node, 1))
    return error() << "it takes past_cache and update";
  std::string past = node.input(0), update = node.input(1);
  std::optional<int64_t> rank = rankOf(past);
  if (!rank || *rank < 2)
    return error() << "kiln needs the model to state the rank of '" << past
                   << "' (at least 2)";
  int64_t axis = -2;
  if (const AttributeProto *a = findAttr(node, "axis"))
    axis = a->i();
  if (axis < -*rank || axis >= *rank)
    return error() << "axis " << axis << " is out of range for rank " << *rank;
  if (axis < 0)
    axis += *rank;
  if (axis == 0)
    return error() << "axis 0 is the batch: the sequence axis must come after it";
  std::string mode = "linear";
  if (const AttributeProto *a = findAttr(node, "mode"))
    mode = a->s();
  if (mode != "linear" && mode != "circular")
    return error() << "mode '" << mode << "' is not 'linear' or 'circular'";
  if (staticDim(update, axis) == 0)
    return error() << "an update of no positions is not supported";
  // Positions along the axis, [1, ..., M, ..., 1], and the write index of
  // each batch item, [B, 1, ..., 1].
  std::vector<int64_t> alongAxis(size_t(*rank), 1), perItem(size_t(*rank), 1);
  alongAxis[size_t(axis)] = -1;
  perItem[0] = -1;
  std::string length = shapeOf(past, axis, axis + 1);
  std::string positions =
      add("Reshape", {add("Range", {constant({0}, true),
                                    add("Squeeze", {length, constant({0})}),
                                    constant({1}, true)}),
                      constant(alongAxis)});
  std::string offset = positions;
  if (hasInput(node, 2))
    offset = add("Sub", {positions, add("Reshape", {node.input(2), constant(perItem)})});
  if (mode == "circular")
    offset = add("Mod", {offset, length});
  std::string written =
      add("And", {add("GreaterOrEqual", {offset, constant({0}, true)}),
                  add("Less", {offset, shapeOf(update, axis, axis + 1)})});
  std::string indices = add("Expand", {add("Where", {written, offset, constant({0}, true)}),
                                       add("Shape", {past})});
  std::string taken = add("GatherElements", {update, indices},
                          [&](NodeProto &n) { setInt(n, "axis", axis); });
  return becomes(node, "Where", {written, taken, past});
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

/// RMSNormalization-23: x / sqrt(mean(x^2 over axis..) + epsilon) * scale.
LogicalResult Rewriter::rewriteRmsNorm(NodeProto &node) {
  if (!hasInput(node, 1))
    return error() << "it takes X and scale";
  int64_t axis = -1;
  if (const AttributeProto *a = findAttr(node, "axis"))
    axis = a->i();
  float epsilon = 1e-5f;
  if (const AttributeProto *e = findAttr(node, "epsilon"))
    epsilon = e->f();
  std::string x = node.input(0), scale = node.input(1);
  std::vector<int64_t> axes;
  if (axis < 0) {
    if (axis < -64)
      return error() << "axis " << axis << " is out of range";
    for (int64_t a = axis; a < 0; ++a)
      axes.push_back(a);
  } else {
    std::optional<int64_t> rank = rankOf(x);
    if (!rank)
      return error() << "its axis is " << axis << " and the model does not state the rank of '"
                     << x << "'";
    if (axis >= *rank)
      return error() << "axis " << axis << " is out of range for rank " << *rank;
    for (int64_t a = axis; a < *rank; ++a)
      axes.push_back(a);
  }
  std::string mean = add("ReduceMean", {add("Mul", {x, x})}, [&](NodeProto &r) {
    setInts(r, "axes", axes);
    setInt(r, "keepdims", 1);
  });
  std::string rms = add("Sqrt", {add("Add", {mean, scalarLike(epsilon, x)})});
  return becomes(node, "Mul", {add("Div", {x, rms}), scale});
}

/// RotaryEmbedding-23 (onnx/reference/ops/op_rotary_embedding.py): X as
/// [batch, seq, heads, head_size]; its first rotary_embedding_dim values
/// (all by default) rotated in halves or interleaved pairs by the cos and
/// sin caches (gathered at position_ids when given).
LogicalResult Rewriter::rewriteRotary(NodeProto &node) {
  if (!hasInput(node, 1) || !hasInput(node, 2))
    return error() << "it takes X, cos_cache and sin_cache";
  std::string x = node.input(0);
  std::optional<int64_t> rank = rankOf(x);
  if (!rank || (*rank != 3 && *rank != 4))
    return error() << "kiln needs the model to state the rank of '" << x << "' (3 or 4)";
  int64_t interleaved = 0, dim = 0, heads = 0;
  if (const AttributeProto *a = findAttr(node, "interleaved"))
    interleaved = a->i();
  if (const AttributeProto *a = findAttr(node, "rotary_embedding_dim"))
    dim = a->i();
  if (const AttributeProto *a = findAttr(node, "num_heads"))
    heads = a->i();
  if (dim < 0 || dim % 2)
    return error() << "rotary_embedding_dim " << dim << " is not even";
  if (*rank == 3 && heads < 1)
    return error() << "a 3-D input needs num_heads";
  std::string tokens = *rank == 4 ? transpose(x, {0, 2, 1, 3})
                                  : add("Reshape", {x, constant({0, 0, heads, -1})});
  std::string rotated = tokens, kept;
  if (dim > 0) {
    rotated = slice(tokens, 3, 0, dim);
    kept = slice(tokens, 3, dim, std::numeric_limits<int64_t>::max());
  }
  std::string cos = node.input(1), sin = node.input(2);
  if (hasInput(node, 3)) {
    cos = add("Gather", {cos, node.input(3)});
    sin = add("Gather", {sin, node.input(3)});
  }
  std::string two = constant({2});
  cos = add("Unsqueeze", {cos, two});
  sin = add("Unsqueeze", {sin, two});
  std::string x1, x2;
  if (interleaved) {
    x1 = slice(rotated, 3, 0, std::numeric_limits<int64_t>::max(), 2);
    x2 = slice(rotated, 3, 1, std::numeric_limits<int64_t>::max(), 2);
  } else {
    std::vector<std::string> halves =
        addOutputs("Split", {rotated}, 2, [](NodeProto &n) { setInt(n, "axis", 3); });
    x1 = halves[0];
    x2 = halves[1];
  }
  std::string real = add("Sub", {add("Mul", {cos, x1}), add("Mul", {sin, x2})});
  std::string imag = add("Add", {add("Mul", {sin, x1}), add("Mul", {cos, x2})});
  std::string joined;
  if (interleaved) {
    std::string last = constant({-1});
    std::string pairs = add("Concat", {add("Unsqueeze", {real, last}), add("Unsqueeze", {imag, last})},
                            [](NodeProto &c) { setInt(c, "axis", -1); });
    joined = add("Reshape", {pairs, add("Shape", {rotated})});
  } else {
    joined = add("Concat", {real, imag}, [](NodeProto &c) { setInt(c, "axis", -1); });
  }
  if (dim > 0)
    joined = add("Concat", {joined, kept}, [](NodeProto &c) { setInt(c, "axis", -1); });
  if (*rank == 3)
    return becomes(node, "Reshape", {joined, add("Shape", {x})});
  (void)becomes(node, "Transpose", {joined});
  setInts(node, "perm", {0, 2, 1, 3});
  return success();
}

/// Attention-23 as MatMul, Softmax, MatMul over [batch, heads, seq, size]
/// (onnx/reference/ops/op_attention.py): 3-D inputs split into heads;
/// past keys and values prepended (present_key/present_value are those);
/// grouped key/value heads repeated, each one for q_num_heads /
/// kv_num_heads query heads in turn; scores scaled (1/sqrt(head_size) by
/// default), softcapped, then masked (attn_mask: bool keeps, float adds;
/// is_causal: key j for query i when j <= i + the past's length).
LogicalResult Rewriter::rewriteAttention(NodeProto &node) {
  if (!hasInput(node, 1) || !hasInput(node, 2))
    return error() << "it takes Q, K and V";
  if (node.output_size() > 3 && !node.output(3).empty())
    return error() << "its qk_matmul_output output is not supported";
  if (hasInput(node, 4) != hasInput(node, 5))
    return error() << "past_key and past_value go together";
  std::string q = node.input(0), k = node.input(1), v = node.input(2);
  std::optional<int64_t> rank = rankOf(q);
  if (!rank || (*rank != 3 && *rank != 4))
    return error() << "kiln needs the model to state the rank of '" << q << "' (3 or 4)";
  int64_t causal = 0, qHeads = 0, kvHeads = 0;
  float softcap = 0;
  std::optional<float> scale;
  if (const AttributeProto *a = findAttr(node, "is_causal"))
    causal = a->i();
  if (const AttributeProto *a = findAttr(node, "q_num_heads"))
    qHeads = a->i();
  if (const AttributeProto *a = findAttr(node, "kv_num_heads"))
    kvHeads = a->i();
  if (const AttributeProto *a = findAttr(node, "softcap"))
    softcap = a->f();
  if (const AttributeProto *a = findAttr(node, "scale"))
    scale = a->f();
  if (causal && hasInput(node, 3))
    return error() << "is_causal with an attn_mask is not supported (opset 23 does not "
                      "allow it)";
  if (hasInput(node, 6))
    return error() << "its nonpad_kv_seqlen input (opset 24) is not supported yet";
  if (*rank == 3) {
    if (qHeads < 1 || kvHeads < 1)
      return error() << "3-D inputs need q_num_heads and kv_num_heads";
    auto heads = [&](const std::string &t, int64_t n) {
      return transpose(add("Reshape", {t, constant({0, 0, n, -1})}), {0, 2, 1, 3});
    };
    q = heads(q, qHeads);
    k = heads(k, kvHeads);
    v = heads(v, kvHeads);
  } else {
    qHeads = staticDim(q, 1).value_or(0);
    kvHeads = staticDim(k, 1).value_or(0);
  }
  if (hasInput(node, 4)) {
    auto concat = [&](const std::string &past, const std::string &now) {
      return add("Concat", {past, now}, [](NodeProto &c) { setInt(c, "axis", 2); });
    };
    k = concat(node.input(4), k);
    v = concat(node.input(5), v);
  }
  for (auto [i, value] : {std::pair<int, std::string>{1, k}, {2, v}})
    if (node.output_size() > i && !node.output(i).empty())
      addOutputs("Identity", {value}, 1, nullptr, {node.output(i)});
  if (qHeads > 0 && kvHeads > 0 && qHeads != kvHeads) {
    if (qHeads % kvHeads)
      return error() << "q_num_heads " << qHeads << " is not a multiple of kv_num_heads "
                     << kvHeads;
    int64_t reps = qHeads / kvHeads;
    auto repeat = [&](const std::string &t) {
      std::string tiled = add("Tile", {add("Unsqueeze", {t, constant({2})}),
                                       constant({1, 1, reps, 1, 1})});
      std::string shape = add("Concat", {constant({0, qHeads}), shapeOf(t, 2)},
                              [](NodeProto &c) { setInt(c, "axis", 0); });
      return add("Reshape", {tiled, shape});
    };
    k = repeat(k);
    v = repeat(v);
  }
  std::string scores = add("MatMul", {q, transpose(k, {0, 1, 3, 2})});
  std::string factor;
  if (scale) {
    factor = scalarLike(*scale, q);
  } else {
    std::string size = add("CastLike", {shapeOf(q, 3, 4), q});
    factor = add("Reciprocal", {add("Sqrt", {size})});
  }
  scores = add("Mul", {scores, factor});
  if (softcap > 0) {
    std::string cap = scalarLike(softcap, q);
    scores = add("Mul", {add("Tanh", {add("Div", {scores, cap})}), cap});
  }
  std::string minusInf = scalarLike(-std::numeric_limits<float>::infinity(), q);
  std::string zero = scalarLike(0.f, q);
  if (hasInput(node, 3)) {
    std::string mask = node.input(3);
    // A bool mask keeps where true; a float mask adds. Bool: as the model
    // declares it, or made by a comparison or a Cast to bool.
    bool isBool = false;
    static const llvm::StringSet<> comparisons = {
        "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor",
        "IsNaN", "IsInf"};
    for (auto it = scopes.rbegin(); it != scopes.rend() && !isBool; ++it) {
      for (const auto *list : {&(*it)->input(), &(*it)->value_info()})
        for (const auto &vi : *list)
          if (vi.name() == mask && vi.type().tensor_type().elem_type() == TensorProto::BOOL)
            isBool = true;
      for (const TensorProto &t : (*it)->initializer())
        if (t.name() == mask && t.data_type() == TensorProto::BOOL)
          isBool = true;
      for (const NodeProto &n : (*it)->node())
        if (llvm::is_contained(n.output(), mask)) {
          const AttributeProto *to = findAttr(n, "to");
          isBool |= comparisons.contains(n.op_type()) ||
                    (n.op_type() == "Cast" && to && to->i() == TensorProto::BOOL);
        }
    }
    std::string bias = isBool ? add("Where", {mask, zero, minusInf}) : mask;
    scores = add("Add", {scores, bias});
  } else if (causal) {
    auto scalarDim = [&](const std::string &t, int64_t d) {
      return add("Squeeze", {shapeOf(t, d, d + 1), constant({0})});
    };
    std::string rows = add("Range", {constant({0}, true), scalarDim(q, 2), constant({1}, true)});
    std::string cols = add("Range", {constant({0}, true), scalarDim(k, 2), constant({1}, true)});
    if (hasInput(node, 4))
      rows = add("Add", {rows, scalarDim(node.input(4), 2)});
    std::string hidden = add("Less", {add("Unsqueeze", {rows, constant({1})}),
                                      add("Unsqueeze", {cols, constant({0})})});
    scores = add("Add", {scores, add("Where", {hidden, minusInf, zero})});
  }
  std::string probs = add("Softmax", {scores}, [](NodeProto &n) { setInt(n, "axis", -1); });
  std::string out = add("MatMul", {probs, v});
  while (node.output_size() > 1)
    node.mutable_output()->RemoveLast();
  if (*rank == 3)
    return becomes(node, "Reshape", {transpose(out, {0, 2, 1, 3}), constant({0, 0, -1})});
  return becomes(node, "Identity", {out});
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

} // namespace

LogicalResult rewriteNewerOpsets(MLIRContext &context, LoadedModel &model) {
  auto it = model.opsets.find("");
  if (it == model.opsets.end() || it->second <= kLibonnxOpset)
    return success();
  Rewriter rewriter(context, model);
  if (failed(rewriter.rewriteGraph(*model.proto.mutable_graph())))
    return failure();
  for (auto &opset : *model.proto.mutable_opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      opset.set_version(kLibonnxOpset);
  return success();
}

} // namespace kiln::importer
