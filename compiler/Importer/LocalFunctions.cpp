//===- LocalFunctions.cpp - Model-local functions inlined into the graph --===//
//
// A model may define functions of its own (ModelProto.functions): an op
// of some domain whose body is a list of nodes over its formal inputs and
// outputs. torch.onnx writes them (`export_modules_as_functions`, and the
// dynamo exporter before torch 2.5 for every module and for its
// onnxscript torch_lib ops), as do onnxscript and several converters.
// Every call is replaced here, in the ModelProto, by the body it stands
// for, before the schemas check the nodes; after that the model has no
// function left, and nothing downstream knows there were any.
//
//   - A call's inputs and outputs take the place of the formal ones; a
//     missing optional input is an empty name, an output the call leaves
//     out gets a new name. A formal output that no body node computes
//     (an input passed through) becomes an Identity.
//   - Every other value the body computes, and every value defined in a
//     graph inside it (If and Loop bodies), gets a new name the model
//     does not use: "<call>/<name>".
//   - Attributes that refer to the call's (`ref_attr_name`) take the
//     call's value, else the function's default (`attribute_proto`, a
//     field libonnx 1.12's proto does not know, read from its unknown
//     fields), else are left out, as ONNX says.
//   - Functions that call functions are expanded in turn, up to a depth
//     that stops a function that calls itself.
//   - A function's opset imports must agree with the model's: a domain the
//     model does not import is added; another version of one it does is an
//     error (kiln does not convert a body between opsets).
//
// The nodes of a call keep the name of the call in front of their own and
// its index in its graph (LoadedModel::nodeIndex), so that messages and
// `kiln check` point at the node the user's file has.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/ImporterInternal.h"

#include "mlir/IR/Diagnostics.h"

#include <google/protobuf/unknown_field_set.h>

#include <map>
#include <set>

using namespace mlir;

namespace kiln::importer {
namespace {

using ::onnx::AttributeProto;
using ::onnx::FunctionProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;

/// Fields newer than libonnx 1.12's proto, kept among the unknown fields.
constexpr int kFunctionAttributeProto = 11; ///< FunctionProto.attribute_proto
constexpr int kFunctionOverload = 13;       ///< FunctionProto.overload
constexpr int kNodeOverload = 8;            ///< NodeProto.overload

/// How deep calls may nest: deeper is a function that calls itself.
constexpr int kMaxDepth = 32;

/// The length-delimited values of field `number` among `message`'s unknown
/// fields.
template <typename Message>
std::vector<std::string> unknownStrings(const Message &message, int number) {
  std::vector<std::string> values;
  const google::protobuf::UnknownFieldSet &fields = message.unknown_fields();
  for (int i = 0; i < fields.field_count(); ++i)
    if (fields.field(i).number() == number &&
        fields.field(i).type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      values.push_back(fields.field(i).length_delimited());
  return values;
}

template <typename Message> std::string overloadOf(const Message &message, int number) {
  std::vector<std::string> values = unknownStrings(message, number);
  return values.empty() ? std::string() : values.back();
}

std::string domainOf(const std::string &domain) { return domain == "ai.onnx" ? "" : domain; }

/// What identifies a function: domain, name and overload.
std::string keyOf(const std::string &domain, const std::string &name,
                  const std::string &overload) {
  return domainOf(domain) + '\n' + name + '\n' + overload;
}

std::string functionName(const FunctionProto &f) {
  return f.domain().empty() ? f.name() : f.domain() + "." + f.name();
}

struct Function {
  const FunctionProto *proto = nullptr;
  /// Default values of its attributes, by name.
  std::map<std::string, AttributeProto> defaults;
};

/// Values renamed in a scope: a function body's, or a graph's inside it.
struct Scope {
  std::map<std::string, std::string> names;
  const Scope *outer = nullptr;

  const std::string *lookup(const std::string &name) const {
    for (const Scope *s = this; s; s = s->outer)
      if (auto it = s->names.find(name); it != s->names.end())
        return &it->second;
    return nullptr;
  }
};

class Inliner {
public:
  Inliner(MLIRContext &context, LoadedModel &model) : context(context), model(model) {}

  LogicalResult collect();
  LogicalResult inlineGraph(GraphProto &graph, int depth);

private:
  /// The body of the call `call` (whose function is `f`) as nodes appended
  /// to `out`, themselves expanded.
  LogicalResult expand(const NodeProto &call, const Function &f, int depth,
                       std::vector<NodeProto> &out);
  /// `node` of a body with its names and attribute references resolved.
  LogicalResult instantiate(NodeProto &node, const NodeProto &call, const Function &f,
                            Scope &scope, int depth);
  /// Renames what `graph` (inside a body) defines and resolves what it
  /// uses, then expands the calls in it.
  LogicalResult instantiateGraph(GraphProto &graph, const NodeProto &call, const Function &f,
                                 const Scope &outer, int depth);
  const Function *functionOf(const NodeProto &node) const {
    auto it = functions.find(keyOf(node.domain(), node.op_type(), overloadOf(node, kNodeOverload)));
    return it == functions.end() ? nullptr : &it->second;
  }
  /// A name no value of the model has.
  std::string fresh(const std::string &base) {
    std::string name = base;
    for (int k = 1; !used.insert(name).second; ++k)
      name = base + "_" + std::to_string(k);
    return name;
  }
  /// An error on the user's call being expanded (`call` is a call inside
  /// a body, or that call itself).
  InFlightDiagnostic error(const NodeProto &call) {
    const NodeProto &at = userCall ? *userCall : call;
    return emitError(nodeLoc(context, model, at, callIndex)) << qualifiedOpType(at) << ": ";
  }

  MLIRContext &context;
  LoadedModel &model;
  std::map<std::string, Function> functions;
  std::set<std::string> used;
  /// The call of the user's graph being expanded, and its index there.
  const NodeProto *userCall = nullptr;
  int callIndex = 0;
};

LogicalResult Inliner::collect() {
  Location loc = modelLoc(context, model);
  for (const FunctionProto &f : model.proto.functions()) {
    Function entry;
    entry.proto = &f;
    for (const std::string &bytes : unknownStrings(f, kFunctionAttributeProto)) {
      AttributeProto a;
      if (!a.ParseFromString(bytes) || a.name().empty())
        return emitError(loc) << "local function '" << functionName(f)
                              << "' has an attribute default that does not parse";
      entry.defaults[a.name()] = a;
    }
    std::string key = keyOf(f.domain(), f.name(), overloadOf(f, kFunctionOverload));
    if (!functions.emplace(key, std::move(entry)).second)
      return emitError(loc) << "local function '" << functionName(f) << "' is defined twice";
    // Its opsets must be the model's.
    for (const auto &opset : f.opset_import()) {
      std::string domain = domainOf(opset.domain());
      auto it = model.opsets.find(domain);
      if (it == model.opsets.end()) {
        if (domain.empty() && (opset.version() < kMinOpset || opset.version() > kMaxOpset))
          return emitError(loc) << "local function '" << functionName(f)
                                << "' imports default-domain opset " << opset.version()
                                << ", which is not supported (kiln supports opsets "
                                << kMinOpset << " to " << kMaxOpset << ")";
        model.opsets[domain] = static_cast<int>(opset.version());
        auto *added = model.proto.add_opset_import();
        added->set_domain(domain);
        added->set_version(opset.version());
      } else if (it->second != opset.version()) {
        return emitError(loc) << "local function '" << functionName(f) << "' imports opset "
                              << opset.version() << " of domain '" << domain
                              << "', but the model imports opset " << it->second
                              << " of it; kiln does not convert a function's body between "
                                 "opsets";
      }
    }
  }
  collectValueNames(model.proto.graph(), used);
  return success();
}

LogicalResult Inliner::instantiateGraph(GraphProto &graph, const NodeProto &call,
                                        const Function &f, const Scope &outer, int depth) {
  Scope scope;
  scope.outer = &outer;
  std::string prefix = call.name().empty() ? f.proto->name() : call.name();
  auto define = [&](std::string *name) {
    if (name->empty())
      return;
    std::string renamed = fresh(prefix + "/" + *name);
    scope.names[*name] = renamed;
    *name = renamed;
  };
  for (auto &v : *graph.mutable_input())
    define(v.mutable_name());
  for (auto &t : *graph.mutable_initializer())
    define(t.mutable_name());
  for (NodeProto &node : *graph.mutable_node())
    for (std::string &o : *node.mutable_output())
      define(&o);
  for (NodeProto &node : *graph.mutable_node())
    if (failed(instantiate(node, call, f, scope, depth)))
      return failure();
  for (auto &v : *graph.mutable_output()) {
    const std::string *renamed = scope.lookup(v.name());
    if (!renamed)
      return error(call) << "the body of local function '" << functionName(*f.proto)
                         << "' has a graph whose output '" << v.name() << "' is not defined";
    v.set_name(*renamed);
  }
  // Types the body states for its own values stay with them.
  auto *infos = graph.mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i) {
    const std::string *renamed = scope.lookup(infos->Get(i).name());
    if (renamed)
      infos->Mutable(i)->set_name(*renamed);
    else
      infos->DeleteSubrange(i, 1);
  }
  // Calls inside the graph.
  return inlineGraph(graph, depth + 1);
}

LogicalResult Inliner::instantiate(NodeProto &node, const NodeProto &call, const Function &f,
                                   Scope &scope, int depth) {
  for (std::string &in : *node.mutable_input()) {
    if (in.empty())
      continue;
    const std::string *renamed = scope.lookup(in);
    if (!renamed)
      return error(call) << "node '" << node.name() << "' (" << node.op_type()
                         << ") of local function '" << functionName(*f.proto) << "' reads '"
                         << in << "', which is neither an input of the function nor computed "
                                  "in it";
    in = *renamed;
  }
  // Attributes: references take the call's value, else the default.
  auto *attrs = node.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i) {
    AttributeProto &a = *attrs->Mutable(i);
    if (a.ref_attr_name().empty())
      continue;
    const AttributeProto *value = nullptr;
    for (const AttributeProto &given : call.attribute())
      if (given.name() == a.ref_attr_name())
        value = &given;
    if (!value)
      if (auto it = f.defaults.find(a.ref_attr_name()); it != f.defaults.end())
        value = &it->second;
    if (!value) {
      attrs->DeleteSubrange(i, 1);
      continue;
    }
    std::string name = a.name();
    a = *value;
    a.set_name(name);
    a.clear_ref_attr_name();
  }
  for (AttributeProto &a : *attrs) {
    if (a.has_g() && failed(instantiateGraph(*a.mutable_g(), call, f, scope, depth)))
      return failure();
    for (GraphProto &g : *a.mutable_graphs())
      if (failed(instantiateGraph(g, call, f, scope, depth)))
        return failure();
  }
  std::string prefix = call.name().empty() ? f.proto->name() : call.name();
  node.set_name(prefix + "/" + (node.name().empty() ? node.op_type() : node.name()));
  return success();
}

LogicalResult Inliner::expand(const NodeProto &call, const Function &f, int depth,
                              std::vector<NodeProto> &out) {
  const FunctionProto &fn = *f.proto;
  if (depth > kMaxDepth)
    return error(call) << "calls of local functions nest more than " << kMaxDepth
                       << " deep (does '" << functionName(fn) << "' call itself?)";
  if (call.input_size() > fn.input_size() || call.output_size() > fn.output_size())
    return error(call) << "the call has " << call.input_size() << " inputs and "
                       << call.output_size() << " outputs; local function '"
                       << functionName(fn) << "' takes " << fn.input_size() << " and gives "
                       << fn.output_size();
  std::string prefix = call.name().empty() ? fn.name() : call.name();
  Scope scope;
  for (int i = 0; i < fn.input_size(); ++i)
    scope.names[fn.input(i)] = i < call.input_size() ? call.input(i) : std::string();
  std::set<std::string> computed;
  for (const NodeProto &node : fn.node())
    for (const std::string &o : node.output())
      if (!o.empty() && !computed.insert(o).second)
        return error(call) << "local function '" << functionName(fn) << "' computes '" << o
                           << "' twice";
  // Formal outputs: the call's names (or new ones for those it leaves out).
  std::vector<std::pair<std::string, std::string>> passThrough;
  for (int i = 0; i < fn.output_size(); ++i) {
    std::string actual = i < call.output_size() ? call.output(i) : std::string();
    if (actual.empty())
      actual = fresh(prefix + "/" + fn.output(i));
    if (computed.count(fn.output(i)))
      scope.names[fn.output(i)] = actual;
    else
      passThrough.push_back({fn.output(i), actual});
  }
  for (const std::string &o : computed)
    if (!scope.names.count(o))
      scope.names[o] = fresh(prefix + "/" + o);
  for (const NodeProto &body : fn.node()) {
    NodeProto node = body;
    for (std::string &o : *node.mutable_output())
      if (!o.empty())
        o = scope.names[o];
    if (failed(instantiate(node, call, f, scope, depth)))
      return failure();
    if (const Function *inner = functionOf(node)) {
      if (failed(expand(node, *inner, depth + 1, out)))
        return failure();
      continue;
    }
    out.push_back(std::move(node));
  }
  for (const auto &[formal, actual] : passThrough) {
    const std::string *source = scope.lookup(formal);
    if (!source || source->empty())
      return error(call) << "local function '" << functionName(fn) << "' gives output '"
                         << formal << "', which none of its nodes computes";
    NodeProto identity;
    identity.set_op_type("Identity");
    identity.set_name(prefix + "/" + formal);
    identity.add_input(*source);
    identity.add_output(actual);
    out.push_back(std::move(identity));
  }
  return success();
}

LogicalResult Inliner::inlineGraph(GraphProto &graph, int depth) {
  // Each node's index in the user's graph (calls become several nodes).
  std::vector<std::pair<NodeProto, int>> nodes;
  bool expanded = false;
  for (int i = 0, e = graph.node_size(); i < e; ++i) {
    NodeProto &node = *graph.mutable_node(i);
    int index = i;
    if (auto it = model.nodeIndex.find(&node); it != model.nodeIndex.end())
      index = it->second;
    if (const Function *f = functionOf(node)) {
      // A call of the user's graphs, not one inside a body.
      bool outermost = !userCall;
      if (outermost) {
        userCall = &node;
        callIndex = index;
      }
      std::vector<NodeProto> body;
      if (failed(expand(node, *f, depth, body)))
        return failure();
      if (outermost)
        userCall = nullptr;
      for (NodeProto &n : body)
        nodes.push_back({std::move(n), index});
      expanded = true;
      continue;
    }
    for (AttributeProto &a : *node.mutable_attribute()) {
      if (a.has_g() && failed(inlineGraph(*a.mutable_g(), depth + 1)))
        return failure();
      for (GraphProto &g : *a.mutable_graphs())
        if (failed(inlineGraph(g, depth + 1)))
          return failure();
    }
    nodes.push_back({std::move(node), index});
  }
  if (!expanded) {
    // Nothing moved: the subgraphs' nodes were rewritten in place.
    for (int i = 0, e = graph.node_size(); i < e; ++i)
      graph.mutable_node(i)->Swap(&nodes[size_t(i)].first);
    return success();
  }
  graph.clear_node();
  for (auto &[node, index] : nodes) {
    NodeProto *added = graph.add_node();
    added->Swap(&node);
    model.nodeIndex[added] = index;
  }
  return success();
}

} // namespace

void collectValueNames(const ::onnx::GraphProto &graph, std::set<std::string> &names) {
  for (const auto &v : graph.input())
    names.insert(v.name());
  for (const auto &v : graph.output())
    names.insert(v.name());
  for (const auto &v : graph.value_info())
    names.insert(v.name());
  for (const auto &t : graph.initializer())
    names.insert(t.name());
  for (const NodeProto &node : graph.node()) {
    names.insert(node.input().begin(), node.input().end());
    names.insert(node.output().begin(), node.output().end());
    for (const AttributeProto &a : node.attribute()) {
      if (a.has_g())
        collectValueNames(a.g(), names);
      for (const GraphProto &g : a.graphs())
        collectValueNames(g, names);
    }
  }
}

LogicalResult inlineLocalFunctions(MLIRContext &context, LoadedModel &model) {
  if (model.proto.functions_size() == 0)
    return success();
  Inliner inliner(context, model);
  if (failed(inliner.collect()) || failed(inliner.inlineGraph(*model.proto.mutable_graph(), 0)))
    return failure();
  model.proto.clear_functions();
  return success();
}

} // namespace kiln::importer
