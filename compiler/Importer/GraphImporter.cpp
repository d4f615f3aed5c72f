//===- GraphImporter.cpp - ONNX graphs to onnx-dialect functions -----------===//
//
// Builds `func.func @main` from the model's graph: graph inputs become
// arguments (initializers that are also listed as inputs are constants: kiln
// compiles ahead of time), initializers become `onnx.Constant`, nodes become
// ops in topological order, graph attributes become regions ended by
// `onnx.Yield`, and outputs are returned.
//
// Values are looked up by name through a stack of scopes, so subgraphs see
// the values of their enclosing graphs, as ONNX specifies.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/ImporterInternal.h"
#include "dialects/Onnx/IR/OnnxOps.h"

#include "onnx/defs/schema.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <queue>

using namespace mlir;

namespace kiln::importer {

Operation *createOnnxOp(OpBuilder &builder, Location loc, StringRef name,
                        ValueRange operands, TypeRange results,
                        ArrayRef<NamedAttribute> attrs) {
  OperationState state(loc, ("onnx." + name).str());
  state.addOperands(operands);
  state.addTypes(results);
  state.addAttributes(attrs);
  return builder.create(state);
}

Value createI64Constant(OpBuilder &builder, Location loc,
                        ArrayRef<int64_t> values, bool scalar) {
  SmallVector<int64_t> shape;
  if (!scalar)
    shape.push_back(static_cast<int64_t>(values.size()));
  auto type = RankedTensorType::get(shape, builder.getI64Type());
  auto attr = DenseElementsAttr::get(type, values);
  return createOnnxOp(builder, loc, "Constant", {}, {type},
                      {builder.getNamedAttr("value", attr)})
      ->getResult(0);
}

Value createScalarConstant(OpBuilder &builder, Location loc, Type elem,
                           double value) {
  auto type = RankedTensorType::get({}, elem);
  Attribute attr;
  if (isa<FloatType>(elem))
    attr = DenseElementsAttr::get(type, builder.getFloatAttr(elem, value));
  else
    attr = DenseElementsAttr::get(
        type, builder.getIntegerAttr(elem, static_cast<int64_t>(value)));
  return createOnnxOp(builder, loc, "Constant", {}, {type},
                      {builder.getNamedAttr("value", attr)})
      ->getResult(0);
}

Value createNone(OpBuilder &builder, Location loc) {
  return kiln::onnx::NoValueOp::create(builder, loc, builder.getNoneType());
}

namespace {

/// The dialect's name for an ONNX attribute of `opType` (see OnnxOpsMeta.inc).
std::string odsAttrName(StringRef opType, StringRef attr) {
#define ONNX_ATTR_RENAME(O, A, B)                                              \
  if (opType == #O && attr == #A)                                              \
    return #B;
#include "dialects/Onnx/IR/OnnxOpsMeta.inc"
  return attr.str();
}

/// Collects the names a subgraph reads from its enclosing scopes.
void collectFreeNames(const ::onnx::GraphProto &g, llvm::StringSet<> &out) {
  llvm::StringSet<> local;
  for (const auto &vi : g.input())
    local.insert(vi.name());
  for (const auto &t : g.initializer())
    local.insert(t.name());
  for (const auto &n : g.node())
    for (const auto &o : n.output())
      local.insert(o);
  auto use = [&](const std::string &name) {
    if (!name.empty() && !local.contains(name))
      out.insert(name);
  };
  for (const auto &n : g.node()) {
    for (const auto &i : n.input())
      use(i);
    for (const auto &a : n.attribute()) {
      llvm::StringSet<> inner;
      if (a.has_g())
        collectFreeNames(a.g(), inner);
      for (const auto &sub : a.graphs())
        collectFreeNames(sub, inner);
      for (const auto &name : inner)
        use(name.getKey().str());
    }
  }
  for (const auto &o : g.output())
    use(o.name());
}

class GraphImporter {
public:
  GraphImporter(LoadedModel &model, MLIRContext &context)
      : model(model), context(context), builder(&context) {}

  LogicalResult importMain(ModuleOp module);
  ArrayAttr symbolicDimNames(const ::onnx::ValueInfoProto &vi);

private:
  struct Scope {
    llvm::StringMap<Value> values;
    llvm::StringMap<const ::onnx::TypeProto *> types;
  };

  Value lookup(StringRef name) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto found = it->values.find(name);
      if (found != it->values.end())
        return found->second;
    }
    return {};
  }
  const ::onnx::TypeProto *lookupType(StringRef name) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto found = it->types.find(name);
      if (found != it->types.end())
        return found->second;
    }
    return nullptr;
  }

  /// The node's location; inside a subgraph, the enclosing node's location
  /// is the caller of a CallSiteLoc so messages can name it.
  Location locOf(const ::onnx::NodeProto &node, int index) const {
    Location loc = nodeLoc(context, model, node, index);
    if (parents.empty())
      return loc;
    auto name = cast<NameLoc>(loc);
    return NameLoc::get(name.getName(),
                        CallSiteLoc::get(name.getChildLoc(), parents.back()));
  }

  void pushScope(const ::onnx::GraphProto &g);
  LogicalResult importInitializers(::onnx::GraphProto &g);
  LogicalResult importNodes(::onnx::GraphProto &g);
  LogicalResult topologicalOrder(const ::onnx::GraphProto &g,
                                 SmallVectorImpl<int> &order);
  LogicalResult importNode(::onnx::NodeProto &node, int index);
  LogicalResult importBatchedScan(::onnx::NodeProto &node, NodeState &state);
  LogicalResult convertAttributes(NodeState &state,
                                  const ::onnx::OpSchema &schema);
  LogicalResult importRegion(::onnx::GraphProto &g, Region &region,
                             Location loc, StringRef what);
  FailureOr<Attribute> convertAttribute(const ::onnx::AttributeProto &attr,
                                        Location loc);

  LoadedModel &model;
  MLIRContext &context;
  OpBuilder builder;
  std::vector<Scope> scopes;
  /// Locations of the nodes whose subgraphs are being imported.
  SmallVector<Location> parents;
};

void GraphImporter::pushScope(const ::onnx::GraphProto &g) {
  scopes.emplace_back();
  Scope &s = scopes.back();
  for (const auto &vi : g.value_info())
    if (vi.has_type())
      s.types[vi.name()] = &vi.type();
  for (const auto &vi : g.output())
    if (vi.has_type())
      s.types[vi.name()] = &vi.type();
  for (const auto &vi : g.input())
    if (vi.has_type())
      s.types[vi.name()] = &vi.type();
}

LogicalResult GraphImporter::importInitializers(::onnx::GraphProto &g) {
  Location loc = modelLoc(context, model);
  for (auto &t : *g.mutable_initializer()) {
    if (t.name().empty())
      return emitError(loc) << "an initializer has no name";
    auto attr = importTensor(t, model, loc);
    if (failed(attr))
      return failure();
    Location cloc = NameLoc::get(StringAttr::get(&context, t.name()), loc);
    Operation *op =
        createOnnxOp(builder, cloc, "Constant", {}, {attr->getType()},
                     {builder.getNamedAttr("value", *attr)});
    scopes.back().values[t.name()] = op->getResult(0);
  }
  for (auto &sparse : *g.mutable_sparse_initializer()) {
    std::string name = sparse.values().name();
    auto attr = importSparseTensor(sparse, model, loc);
    if (failed(attr))
      return failure();
    Operation *op =
        createOnnxOp(builder, loc, "Constant", {}, {attr->getType()},
                     {builder.getNamedAttr("value", *attr)});
    scopes.back().values[name] = op->getResult(0);
  }
  return success();
}

LogicalResult GraphImporter::topologicalOrder(const ::onnx::GraphProto &g,
                                              SmallVectorImpl<int> &order) {
  int n = g.node_size();
  llvm::StringSet<> graphValues;
  for (const auto &vi : g.input())
    graphValues.insert(vi.name());
  for (const auto &t : g.initializer())
    graphValues.insert(t.name());
  llvm::StringMap<int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto &o : g.node(i).output()) {
      if (o.empty())
        continue;
      if (graphValues.contains(o))
        return emitError(locOf(g.node(i), i))
               << g.node(i).op_type() << ": output '" << o
               << "' has the name of a graph input or initializer (ONNX "
                  "values are defined once)";
      if (!producer.insert({o, i}).second)
        return emitError(locOf(g.node(i), i))
               << g.node(i).op_type() << ": value '" << o
               << "' is produced by more than one node";
    }
  std::vector<std::vector<int>> users(n);
  std::vector<int> indegree(n, 0);
  for (int i = 0; i < n; ++i) {
    llvm::StringSet<> deps;
    for (const auto &in : g.node(i).input())
      if (!in.empty())
        deps.insert(in);
    // Gradient reads `y` (and differentiates what computes it) by name.
    if (isTrainingDomain(g.node(i).domain()))
      for (const auto &a : g.node(i).attribute())
        if (a.name() == "y")
          deps.insert(a.s());
    for (const auto &a : g.node(i).attribute()) {
      if (a.has_g())
        collectFreeNames(a.g(), deps);
      for (const auto &sub : a.graphs())
        collectFreeNames(sub, deps);
    }
    llvm::SmallSet<int, 4> preds;
    for (const auto &d : deps) {
      auto it = producer.find(d.getKey());
      if (it != producer.end() && preds.insert(it->second).second) {
        if (it->second == i)
          return emitError(locOf(g.node(i), i))
                 << g.node(i).op_type() << ": the node reads its own output '"
                 << d.getKey() << "' (the graph has a cycle)";
        users[it->second].push_back(i);
        ++indegree[i];
      }
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (indegree[i] == 0)
      ready.push(i);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--indegree[u] == 0)
        ready.push(u);
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (indegree[i] != 0)
        return emitError(locOf(g.node(i), i))
               << g.node(i).op_type()
               << ": the graph has a cycle through this node";
  }
  return success();
}

LogicalResult GraphImporter::importNodes(::onnx::GraphProto &g) {
  SmallVector<int> order;
  if (failed(topologicalOrder(g, order)))
    return failure();
  for (int i : order)
    if (failed(importNode(*g.mutable_node(i), i)))
      return failure();
  return success();
}

FailureOr<Attribute>
GraphImporter::convertAttribute(const ::onnx::AttributeProto &attr,
                                Location loc) {
  using ::onnx::AttributeProto;
  switch (attr.type()) {
  case AttributeProto::FLOAT:
    return Attribute(builder.getF32FloatAttr(attr.f()));
  case AttributeProto::INT:
    return Attribute(builder.getI64IntegerAttr(attr.i()));
  case AttributeProto::STRING:
    return Attribute(builder.getStringAttr(attr.s()));
  case AttributeProto::FLOATS:
    return Attribute(builder.getDenseF32ArrayAttr(
        SmallVector<float>(attr.floats().begin(), attr.floats().end())));
  case AttributeProto::INTS:
    return Attribute(builder.getDenseI64ArrayAttr(
        SmallVector<int64_t>(attr.ints().begin(), attr.ints().end())));
  case AttributeProto::STRINGS: {
    SmallVector<Attribute> strs;
    for (const auto &s : attr.strings())
      strs.push_back(builder.getStringAttr(s));
    return Attribute(builder.getArrayAttr(strs));
  }
  case AttributeProto::TENSOR: {
    auto t = importTensor(const_cast<::onnx::TensorProto &>(attr.t()), model,
                          loc);
    if (failed(t))
      return failure();
    return Attribute(*t);
  }
  case AttributeProto::SPARSE_TENSOR: {
    auto t = importSparseTensor(
        const_cast<::onnx::SparseTensorProto &>(attr.sparse_tensor()), model,
        loc);
    if (failed(t))
      return failure();
    return Attribute(*t);
  }
  case AttributeProto::TENSORS: {
    SmallVector<Attribute> ts;
    for (const auto &t : attr.tensors()) {
      auto e = importTensor(const_cast<::onnx::TensorProto &>(t), model, loc);
      if (failed(e))
        return failure();
      ts.push_back(*e);
    }
    return Attribute(builder.getArrayAttr(ts));
  }
  case AttributeProto::TYPE_PROTO: {
    auto type = importType(attr.tp(), loc, "attribute '" + attr.name() + "'");
    if (failed(type))
      return failure();
    return Attribute(TypeAttr::get(*type));
  }
  default:
    return emitError(loc) << "attribute '" << attr.name()
                          << "' has an unsupported kind";
  }
}

LogicalResult GraphImporter::convertAttributes(NodeState &state,
                                               const ::onnx::OpSchema &schema) {
  const auto &schemaAttrs = schema.attributes();
  for (const auto &[name, attr] : state.attrs) {
    auto it = schemaAttrs.find(name);
    if (it == schemaAttrs.end())
      return emitError(state.loc)
             << state.node->op_type() << "-" << state.opset
             << ": attribute '" << name << "' has no equivalent in "
             << schema.Name() << "-" << schema.since_version()
             << ", the form kiln compiles";
    if (it->second.type == ::onnx::AttributeProto::GRAPH)
      continue; // Regions are built separately.
    if (attr->type() != it->second.type)
      return emitError(state.loc)
             << state.node->op_type() << ": attribute '" << name
             << "' has the wrong type ("
             << ::onnx::AttributeProto::AttributeType_Name(attr->type())
             << ", expected "
             << ::onnx::AttributeProto::AttributeType_Name(it->second.type)
             << ")";
    auto converted = convertAttribute(*attr, state.loc);
    if (failed(converted))
      return failure();
    state.converted.set(odsAttrName(state.opType, name), *converted);
  }
  return success();
}

LogicalResult GraphImporter::importRegion(::onnx::GraphProto &g, Region &region,
                                          Location loc, StringRef what) {
  Block *block = new Block();
  region.push_back(block);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(block);
  pushScope(g);
  parents.push_back(loc);
  llvm::scope_exit popParent([&] { parents.pop_back(); });
  for (const auto &vi : g.input()) {
    if (!vi.has_type())
      return emitError(loc) << what << ": subgraph input '" << vi.name()
                            << "' has no type";
    auto type = importType(vi.type(), loc,
                           (what + ": subgraph input '" + vi.name() + "'").str());
    if (failed(type))
      return failure();
    scopes.back().values[vi.name()] = block->addArgument(*type, loc);
  }
  if (failed(importInitializers(g)) || failed(importNodes(g)))
    return failure();
  SmallVector<Value> results;
  for (const auto &vi : g.output()) {
    Value v = lookup(vi.name());
    if (!v)
      return emitError(loc) << what << ": subgraph output '" << vi.name()
                            << "' is not defined";
    results.push_back(v);
  }
  kiln::onnx::YieldOp::create(builder, loc, results);
  scopes.pop_back();
  return success();
}

LogicalResult GraphImporter::importNode(::onnx::NodeProto &node, int index) {
  Location loc = locOf(node, index);
  NodeState state(loc);
  state.node = &node;
  state.model = &model;
  auto opset = model.opsets.find("");
  if (opset == model.opsets.end())
    return emitError(loc) << node.op_type()
                          << ": the model imports no opset of the default "
                             "ONNX domain";
  state.opset = opset->second;
  state.opType = node.op_type();
  for (const auto &in : node.input()) {
    if (in.empty()) {
      state.operands.push_back(createNone(builder, loc));
      continue;
    }
    Value v = lookup(in);
    if (!v)
      return emitError(loc) << node.op_type() << ": input '" << in
                            << "' is not defined by any node, initializer or "
                               "graph input before this node";
    state.operands.push_back(v);
  }
  for (const auto &a : node.attribute())
    state.attrs[a.name()] = &a;

  if (isTrainingDomain(node.domain())) {
    state.opset = model.opsets.at(kTrainingDomain);
    SmallVector<Value> results;
    if (failed(expandTrainingNode(
            builder, state, [&](StringRef name) { return lookup(name); },
            results)))
      return failure();
    for (int i = 0; i < node.output_size() && i < int(results.size()); ++i)
      if (!node.output(i).empty())
        scopes.back().values[node.output(i)] = results[i];
    return success();
  }

  if (state.opType == "Scan" && state.opset < 9)
    return importBatchedScan(node, state);

  if (failed(normalizeNode(builder, state)))
    return failure();

  const ::onnx::OpSchema *schema =
      ::onnx::OpSchemaRegistry::Schema(state.opType, kLibonnxOpset, "");
  if (!schema || schema->Deprecated() ||
      !RegisteredOperationName::lookup("onnx." + state.opType, &context))
    return emitError(loc) << node.op_type() << "-" << state.opset
                          << " has no equivalent in opset " << kLibonnxOpset
                          << " that kiln supports";

  // Operands: pad trailing optional inputs with `none`.
  const auto &formals = schema->inputs();
  bool variadicIn = !formals.empty() &&
                    formals.back().GetOption() == ::onnx::OpSchema::Variadic;
  if (!variadicIn) {
    if (state.operands.size() > formals.size())
      return emitError(loc) << node.op_type() << ": " << state.operands.size()
                            << " inputs, but " << state.opType << "-"
                            << schema->since_version() << " takes at most "
                            << formals.size();
    while (state.operands.size() < formals.size())
      state.operands.push_back(createNone(builder, loc));
  }

  if (failed(convertAttributes(state, *schema)))
    return failure();

  // Result types from ONNX shape inference.
  const auto &outFormals = schema->outputs();
  bool variadicOut = !outFormals.empty() &&
                     outFormals.back().GetOption() == ::onnx::OpSchema::Variadic;
  int numOut = node.output_size();
  if (!variadicOut && numOut > static_cast<int>(outFormals.size())) {
    for (int i = outFormals.size(); i < numOut; ++i)
      if (!node.output(i).empty())
        return emitError(loc)
               << node.op_type() << "-" << state.opset << ": output #" << i
               << " ('" << node.output(i) << "') has no equivalent in "
               << state.opType << "-" << schema->since_version();
    numOut = outFormals.size();
  }
  int numResults = variadicOut ? numOut : static_cast<int>(outFormals.size());
  SmallVector<Type> resultTypes;
  for (int i = 0; i < numResults; ++i) {
    if (i >= node.output_size() || node.output(i).empty()) {
      resultTypes.push_back(builder.getNoneType());
      continue;
    }
    const std::string &name = node.output(i);
    if (auto fixed = state.resultTypes.find(i);
        fixed != state.resultTypes.end()) {
      resultTypes.push_back(fixed->second);
      continue;
    }
    const ::onnx::TypeProto *tp = lookupType(name);
    if (!tp) {
      InFlightDiagnostic diag = emitError(loc)
                                << node.op_type()
                                << ": cannot infer the type of output '"
                                << name << "'";
      if (!model.inferenceError.empty())
        diag << " (ONNX shape inference: " << model.inferenceError << ")";
      else
        diag << " (the node's inputs may be inconsistent)";
      return diag;
    }
    auto type = importType(*tp, loc, "output '" + name + "'");
    if (failed(type))
      return failure();
    if (auto tensor = dyn_cast<RankedTensorType>(*type);
        tensor && model.eraseInferredShapes && state.opType != "Constant")
      *type = UnrankedTensorType::get(tensor.getElementType());
    resultTypes.push_back(*type);
  }

  OperationState opState(loc, "onnx." + state.opType);
  opState.addOperands(state.operands);
  opState.addTypes(resultTypes);
  opState.addAttributes(state.converted);
  SmallVector<std::pair<::onnx::GraphProto *, std::string>> graphs;
  for (const auto &[name, attr] : schema->attributes()) {
    if (attr.type != ::onnx::AttributeProto::GRAPH)
      continue;
    opState.addRegion();
    auto it = state.attrs.find(name);
    if (it == state.attrs.end())
      return emitError(loc) << node.op_type() << ": graph attribute '" << name
                            << "' is missing";
    graphs.push_back({const_cast<::onnx::AttributeProto *>(it->second)
                          ->mutable_g(),
                      name});
  }
  Operation *op = builder.create(opState);
  for (size_t r = 0; r < graphs.size(); ++r)
    if (failed(importRegion(*graphs[r].first, op->getRegion(r), loc,
                            node.op_type() + " '" + graphs[r].second + "'")))
      return failure();

  for (int i = 0; i < numResults && i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    Value v = op->getResult(i);
    if (auto wrap = state.wrapResults.find(i); wrap != state.wrapResults.end())
      v = wrap->second(builder, v);
    scopes.back().values[node.output(i)] = v;
  }
  return success();
}

/// Scan-8 scans each item of a batch (dim 0 of every state and scan input)
/// on its own. It becomes a Scan over that batch dim (all operands scan
/// inputs, results stacked on dim 0) whose body is the node's scan, in
/// Scan-9 form, on one item.
LogicalResult GraphImporter::importBatchedScan(::onnx::NodeProto &node,
                                               NodeState &state) {
  Location loc = state.loc;
  if (state.operands.empty() || !state.operands[0].getDefiningOp() ||
      !isa<kiln::onnx::NoValueOp>(state.operands[0].getDefiningOp()))
    return emitError(loc) << "Scan-" << state.opset
                          << ": sequence_lens is not supported (only "
                             "full-length sequences); re-export with opset "
                             ">= 9";
  auto numIt = state.attrs.find("num_scan_inputs");
  auto bodyIt = state.attrs.find("body");
  if (numIt == state.attrs.end() || bodyIt == state.attrs.end())
    return emitError(loc) << "Scan-" << state.opset
                          << ": needs num_scan_inputs and body";
  ValueRange operands = ValueRange(state.operands).drop_front();
  int64_t numScanInputs = numIt->second->i();
  int64_t numStates = int64_t(operands.size()) - numScanInputs;
  if (numScanInputs < 1 || numStates < 0)
    return emitError(loc) << "Scan-" << state.opset << ": num_scan_inputs is "
                          << numScanInputs << " but the node has "
                          << operands.size() << " states and scan inputs";
  // Per item: the operand and result types without the batch dim.
  auto dropBatch = [&](Type t, int64_t minRank,
                       StringRef what) -> FailureOr<Type> {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked || ranked.getRank() < minRank)
      return emitError(loc) << "Scan-" << state.opset << ": " << what
                            << " must have a batch dim"
                            << (minRank > 1 ? " and a sequence dim" : "")
                            << " (got " << t << ")";
    return Type(ranked.clone(ranked.getShape().drop_front()));
  };
  SmallVector<Type> itemTypes, resultTypes, itemResultTypes;
  for (auto [i, v] : llvm::enumerate(operands)) {
    auto t = dropBatch(v.getType(), int64_t(i) < numStates ? 1 : 2,
                       "input #" + std::to_string(i + 1));
    if (failed(t))
      return failure();
    itemTypes.push_back(*t);
  }
  for (const auto &name : node.output()) {
    const ::onnx::TypeProto *tp = name.empty() ? nullptr : lookupType(name);
    if (!tp)
      return emitError(loc) << "Scan-" << state.opset
                            << ": cannot infer the type of output '" << name
                            << "'";
    auto type = importType(*tp, loc, "output '" + name + "'");
    if (failed(type))
      return failure();
    auto item = dropBatch(*type, 1, "output '" + name + "'");
    if (failed(item))
      return failure();
    resultTypes.push_back(*type);
    itemResultTypes.push_back(*item);
  }

  OperationState outerState(loc, "onnx.Scan");
  outerState.addOperands(operands);
  outerState.addTypes(resultTypes);
  outerState.addAttribute("num_scan_inputs",
                          builder.getI64IntegerAttr(operands.size()));
  outerState.addRegion();
  Operation *outer = builder.create(outerState);
  Block *block = new Block();
  outer->getRegion(0).push_back(block);
  for (Type t : itemTypes)
    block->addArgument(t, loc);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(block);
    OperationState innerState(loc, "onnx.Scan");
    innerState.addOperands(block->getArguments());
    innerState.addTypes(itemResultTypes);
    innerState.addAttribute("num_scan_inputs",
                            builder.getI64IntegerAttr(numScanInputs));
    if (auto dir = state.attrs.find("directions"); dir != state.attrs.end())
      innerState.addAttribute(
          "scan_input_directions",
          builder.getDenseI64ArrayAttr(SmallVector<int64_t>(
              dir->second->ints().begin(), dir->second->ints().end())));
    innerState.addRegion();
    Operation *inner = builder.create(innerState);
    auto *body = const_cast<::onnx::AttributeProto *>(bodyIt->second);
    if (failed(importRegion(*body->mutable_g(), inner->getRegion(0), loc,
                            "Scan 'body'")))
      return failure();
    kiln::onnx::YieldOp::create(builder, loc, inner->getResults());
  }
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      scopes.back().values[node.output(i)] = outer->getResult(i);
  return success();
}

/// The names of a graph input's dims that stay dynamic (after pinning),
/// "" for static dims; an unnamed one is called INPUT_dimI. Null when all
/// dims are static.
ArrayAttr GraphImporter::symbolicDimNames(const ::onnx::ValueInfoProto &vi) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
    return {};
  SmallVector<Attribute> names;
  bool any = false;
  const auto &shape = vi.type().tensor_type().shape();
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto &d = shape.dim(i);
    std::string name;
    if (!d.has_dim_value()) {
      any = true;
      name = d.has_dim_param() && !d.dim_param().empty()
                 ? d.dim_param()
                 : vi.name() + "_dim" + std::to_string(i);
    }
    names.push_back(builder.getStringAttr(name));
  }
  return any ? builder.getArrayAttr(names) : ArrayAttr();
}

LogicalResult GraphImporter::importMain(ModuleOp module) {
  ::onnx::GraphProto &g = *model.proto.mutable_graph();
  Location loc = modelLoc(context, model);
  builder.setInsertionPointToEnd(module.getBody());
  pushScope(g);

  llvm::StringSet<> initNames;
  for (const auto &t : g.initializer())
    initNames.insert(t.name());

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  SmallVector<ArrayAttr> argDimNames;
  llvm::StringSet<> seenInputs;
  for (const auto &vi : g.input())
    if (!seenInputs.insert(vi.name()).second)
      return emitError(loc) << "graph input '" << vi.name()
                            << "' is declared more than once";
  for (const auto &vi : g.input()) {
    if (initNames.contains(vi.name()))
      continue; // An input with a default value: a constant for kiln.
    if (!vi.has_type())
      return emitError(loc) << "graph input '" << vi.name()
                            << "' has no type";
    auto type = importType(vi.type(), loc, "graph input '" + vi.name() + "'");
    if (failed(type))
      return failure();
    argTypes.push_back(*type);
    argNames.push_back(vi.name());
    argDimNames.push_back(symbolicDimNames(vi));
  }

  auto func = func::FuncOp::create(builder, loc, "main",
                                    builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  SmallVector<Attribute> symbolicDims; // Names of the `?` input dims.
  for (size_t i = 0; i < argNames.size(); ++i) {
    func.setArgAttr(i, "onnx.name", builder.getStringAttr(argNames[i]));
    if (auto it = model.dynamicBatchInputs.find(argNames[i]);
        it != model.dynamicBatchInputs.end())
      func.setArgAttr(i, "kiln.dynamic_dim", builder.getStringAttr(it->second));
    if (argDimNames[i]) {
      func.setArgAttr(i, "kiln.dim_names", argDimNames[i]);
      for (Attribute name : argDimNames[i])
        if (!cast<StringAttr>(name).getValue().empty() &&
            !llvm::is_contained(symbolicDims, name))
          symbolicDims.push_back(name);
    }
    scopes.back().values[argNames[i]] = entry->getArgument(i);
  }
  if (!model.symbolicBatch.empty())
    func->setAttr("kiln.batch_dim", builder.getStringAttr(model.symbolicBatch));
  // On the module too, where lowering a single op (kiln check) sees it.
  if (!symbolicDims.empty())
    module->setAttr("kiln.symbolic_dims", builder.getArrayAttr(symbolicDims));
  builder.setInsertionPointToStart(entry);
  if (failed(importInitializers(g)) || failed(importNodes(g)))
    return failure();

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const auto &vi : g.output()) {
    Value v = lookup(vi.name());
    if (!v)
      return emitError(loc) << "graph output '" << vi.name()
                            << "' is not produced by any node";
    results.push_back(v);
    resultTypes.push_back(v.getType());
  }
  func::ReturnOp::create(builder, loc, results);
  func.setFunctionType(builder.getFunctionType(argTypes, resultTypes));
  for (int i = 0; i < g.output_size(); ++i) {
    func.setResultAttr(i, "onnx.name",
                       builder.getStringAttr(g.output(i).name()));
    if (model.dynamicBatchOutputs.count(g.output(i).name()))
      func.setResultAttr(i, "kiln.declared_dynamic_dim", builder.getUnitAttr());
  }
  scopes.pop_back();
  return success();
}

} // namespace

LogicalResult importGraph(LoadedModel &model, ModuleOp module) {
  GraphImporter importer(model, *module.getContext());
  return importer.importMain(module);
}

} // namespace kiln::importer
