//===- NewerOpsets.h - Rewriting opset 18-24 nodes (private) -----*- C++ -*-===//
//
// The rewriter that NewerOpsets.cpp runs over a model of opset 18 to 24,
// shared with NewerOps.cpp, which expands the ops new since opset 17 that
// compose from older ones. Private to compiler/Importer.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORTER_NEWEROPSETS_H
#define KILN_COMPILER_IMPORTER_NEWEROPSETS_H

#include "compiler/Importer/ImporterInternal.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln::importer::newer {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;
using mlir::failure;
using mlir::InFlightDiagnostic;
using mlir::MLIRContext;
using mlir::LogicalResult;
using mlir::success;

/// The values of a small integer tensor (T = int64_t), or of a small
/// integer or float one (T = double); nullopt for other types or data kept
/// outside the model file.
template <typename T>
inline std::optional<std::vector<T>> tensorValues(const TensorProto &t) {
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

/// Attribute `name` of `node`, or null.
const AttributeProto *findAttr(const NodeProto &node, const std::string &name);
/// Removes attribute `name`; what it was, if the node had it.
std::optional<AttributeProto> takeAttr(NodeProto &node, const std::string &name);
/// Attribute `name` of `type`, replacing any the node had.
AttributeProto *setAttr(NodeProto &node, const std::string &name,
                        AttributeProto::AttributeType type);
void setInts(NodeProto &node, const std::string &name, llvm::ArrayRef<int64_t> values);
void setInt(NodeProto &node, const std::string &name, int64_t value);
/// Drops trailing empty inputs and keeps at most `count`.
void keepInputs(NodeProto &node, int count);
/// Whether input `i` is given (present and not empty).
bool hasInput(const NodeProto &node, int i);
/// Makes `node` an `opType` of `inputs`, without attributes (its name and
/// outputs stay).
LogicalResult becomes(NodeProto &node, const std::string &opType,
                      std::vector<std::string> inputs);

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

} // namespace kiln::importer::newer

#endif // KILN_COMPILER_IMPORTER_NEWEROPSETS_H
