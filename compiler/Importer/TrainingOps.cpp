//===- TrainingOps.cpp - ai.onnx.preview.training ops as default-domain ops ===//
//
// The ops of ONNX's training preview domain that are deterministic functions
// of their inputs, expanded at import into default-domain ops, so that the
// rest of kiln never sees the domain:
//
//   - Adagrad, Adam and Momentum (standard and Nesterov): one optimiser step
//     for each of the n tensors they update, written out as elementwise ops
//     (the formulas of the ONNX operator specification; R, T and the
//     attributes are shared by the n tensors);
//   - Gradient: reverse-mode differentiation of the part of the graph that
//     computes `y` from `xs` (and `zs`). That part is cloned with the node's
//     inputs in place of `xs` and `zs` (the node evaluates the gradient at
//     the values it is given), then every op of it is differentiated in
//     reverse order. The seed dY is all ones: for a non-scalar y the result
//     is the gradient of the sum of y's elements. Broadcasting operands get
//     their gradient summed back to their shape. A value y does not depend
//     on gets a zero gradient. Ops kiln cannot differentiate are named in
//     the error.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/ImporterInternal.h"
#include "dialects/Onnx/IR/DataTypes.h"
#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/defs/schema.h"

using namespace mlir;

namespace kiln::importer {

bool isTrainingDomain(const std::string &domain) {
  return domain == kTrainingDomain;
}

namespace {

/// Builds onnx ops at one location, with static result types where the
/// operands have them.
class Emitter {
public:
  Emitter(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value op(StringRef name, ValueRange operands, Type type,
           ArrayRef<NamedAttribute> attrs = {}) {
    return createOnnxOp(b, loc, name, operands, {type}, attrs)->getResult(0);
  }
  /// A numpy-broadcasting binary op (result element type of `x`).
  Value binary(StringRef name, Value x, Value y) {
    return op(name, {x, y}, broadcastType(x, y, elementType(x)));
  }
  Value unary(StringRef name, Value x) { return op(name, {x}, x.getType()); }
  Value add(Value x, Value y) { return binary("Add", x, y); }
  Value sub(Value x, Value y) { return binary("Sub", x, y); }
  Value mul(Value x, Value y) { return binary("Mul", x, y); }
  Value div(Value x, Value y) { return binary("Div", x, y); }
  Value neg(Value x) { return unary("Neg", x); }
  Value sqrt(Value x) { return unary("Sqrt", x); }
  Value scalar(Type elem, double v) {
    return createScalarConstant(b, loc, elem, v);
  }
  /// `x` converted to element type `elem` (itself if it has it already).
  Value convert(Value x, Type elem) {
    if (elementType(x) == elem)
      return x;
    auto type = cast<TensorType>(x.getType()).clone(elem);
    return op("Cast", {x}, type,
              {b.getNamedAttr("to", b.getI64IntegerAttr(
                                        onnx::dataTypeForElementType(elem)))});
  }
  Value where(Value cond, Value x, Value y) {
    return op("Where", {cond, x, y}, broadcastType(x, y, elementType(x)));
  }
  /// A tensor of `like`'s shape filled with `value` (its element type).
  Value filledLike(Value like, double value) {
    Type elem = elementType(like);
    auto valueType = RankedTensorType::get({1}, elem);
    Attribute v = isa<FloatType>(elem)
                      ? Attribute(b.getFloatAttr(elem, value))
                      : Attribute(b.getIntegerAttr(elem, int64_t(value)));
    auto shapeType = RankedTensorType::get(
        {cast<TensorType>(like.getType()).hasRank()
             ? cast<TensorType>(like.getType()).getRank()
             : ShapedType::kDynamic},
        b.getI64Type());
    Value shape = op("Shape", {like}, shapeType);
    return op("ConstantOfShape", {shape}, like.getType(),
              {b.getNamedAttr("value", DenseElementsAttr::get(valueType, v))});
  }

  static Type elementType(Value v) {
    return cast<TensorType>(v.getType()).getElementType();
  }

  /// numpy broadcasting of two static shapes; unranked otherwise.
  static Type broadcastType(Value x, Value y, Type elem) {
    auto tx = dyn_cast<RankedTensorType>(x.getType());
    auto ty = dyn_cast<RankedTensorType>(y.getType());
    if (!tx || !ty || !tx.hasStaticShape() || !ty.hasStaticShape())
      return UnrankedTensorType::get(elem);
    int64_t rank = std::max(tx.getRank(), ty.getRank());
    SmallVector<int64_t> shape(rank);
    for (int64_t i = 0; i < rank; ++i) {
      int64_t ix = i - (rank - tx.getRank()), iy = i - (rank - ty.getRank());
      int64_t dx = ix >= 0 ? tx.getDimSize(ix) : 1;
      int64_t dy = iy >= 0 ? ty.getDimSize(iy) : 1;
      if (dx != dy && dx != 1 && dy != 1)
        return UnrankedTensorType::get(elem);
      shape[i] = dx == 1 ? dy : dx;
    }
    return RankedTensorType::get(shape, elem);
  }

  OpBuilder &b;
  Location loc;
};

/// The node's float attribute `name`, or the schema's default.
float floatAttr(const NodeState &s, const ::onnx::OpSchema &schema,
                const std::string &name) {
  if (auto it = s.attrs.find(name); it != s.attrs.end())
    return it->second->f();
  auto def = schema.attributes().find(name);
  return def == schema.attributes().end() ? 0.0f : def->second.default_value.f();
}

/// Checks the optimiser's operand layout: R, T, then `groups` lists of n
/// tensors; returns n.
FailureOr<int64_t> optimizerCount(const NodeState &s, int groups,
                                  int outGroups) {
  int64_t tensors = int64_t(s.operands.size()) - 2;
  if (tensors <= 0 || tensors % groups != 0)
    return emitError(s.loc) << s.opType << ": expects R, T and " << groups
                            << " lists of equally many tensors, got "
                            << s.operands.size() << " inputs";
  int64_t n = tensors / groups;
  if (s.node->output_size() != n * outGroups)
    return emitError(s.loc) << s.opType << ": " << n
                            << " tensors to update need " << n * outGroups
                            << " outputs, got " << s.node->output_size();
  for (Value v : s.operands)
    if (!isa<TensorType>(v.getType()))
      return emitError(s.loc) << s.opType << ": every input is required";
  return n;
}

/// Common parts of the three optimisers: R in the updated tensors' element
/// type, T as a float, and `T > 0`.
struct Step {
  Value r, t, tPositive;
};

/// An optimiser node's inputs: R, T, then lists of n tensors (X, G, and
/// the optimiser's state). R and T in an element type are built once.
struct OptimizerInputs {
  OptimizerInputs(Emitter &e, const NodeState &s, int64_t n)
      : e(e), s(s), n(n) {}

  /// Tensor `i` of list `list` (0: X, 1: G, 2 and 3: the state).
  Value tensor(int list, int64_t i) const {
    return s.operands[2 + list * n + i];
  }

  /// R, T and `T > 0` for tensors of element type `elem`.
  Step step(Type elem) {
    auto [it, inserted] = steps.try_emplace(elem);
    if (inserted) {
      it->second.r = e.convert(s.operands[0], elem);
      it->second.t = e.convert(s.operands[1], elem);
      Value zero = e.scalar(Emitter::elementType(s.operands[1]), 0);
      it->second.tPositive =
          e.op("Greater", {s.operands[1], zero},
               RankedTensorType::get({}, e.b.getI1Type()));
    }
    return it->second;
  }

  /// Tensor i's gradient with its regularisation term: G + norm * X.
  Value regularizedGradient(int64_t i, float norm) {
    Value x = tensor(0, i);
    return e.add(e.mul(e.scalar(Emitter::elementType(x), norm), x),
                 tensor(1, i));
  }

  Emitter &e;
  const NodeState &s;
  int64_t n;
  llvm::DenseMap<Type, Step> steps;
};

LogicalResult expandAdagrad(Emitter &e, const NodeState &s,
                            const ::onnx::OpSchema &schema,
                            SmallVectorImpl<Value> &results) {
  auto n = optimizerCount(s, 3, 2);
  if (failed(n))
    return failure();
  float decay = floatAttr(s, schema, "decay_factor");
  float eps = floatAttr(s, schema, "epsilon");
  float norm = floatAttr(s, schema, "norm_coefficient");
  OptimizerInputs in(e, s, *n);
  SmallVector<Value> xs, hs;
  for (int64_t i = 0; i < *n; ++i) {
    Value x = in.tensor(0, i), h = in.tensor(2, i);
    Type elem = Emitter::elementType(x);
    Step step = in.step(elem);
    // r / (1 + t * decay_factor)
    Value rate = e.div(step.r, e.add(e.scalar(elem, 1),
                                     e.mul(step.t, e.scalar(elem, decay))));
    Value gReg = in.regularizedGradient(i, norm);
    Value hNew = e.add(h, e.mul(gReg, gReg));
    Value hSqrt = e.add(e.sqrt(hNew), e.scalar(elem, eps));
    xs.push_back(e.sub(x, e.div(e.mul(rate, gReg), hSqrt)));
    hs.push_back(hNew);
  }
  results.append(xs);
  results.append(hs);
  return success();
}

LogicalResult expandAdam(Emitter &e, const NodeState &s,
                         const ::onnx::OpSchema &schema,
                         SmallVectorImpl<Value> &results) {
  auto n = optimizerCount(s, 4, 3);
  if (failed(n))
    return failure();
  float alpha = floatAttr(s, schema, "alpha");
  float beta = floatAttr(s, schema, "beta");
  float eps = floatAttr(s, schema, "epsilon");
  float norm = floatAttr(s, schema, "norm_coefficient");
  float normPost = floatAttr(s, schema, "norm_coefficient_post");
  OptimizerInputs in(e, s, *n);
  SmallVector<Value> xs, vs, hs;
  for (int64_t i = 0; i < *n; ++i) {
    Value x = in.tensor(0, i), v = in.tensor(2, i), h = in.tensor(3, i);
    Type elem = Emitter::elementType(x);
    Step step = in.step(elem);
    auto one = [&] { return e.scalar(elem, 1); };
    Value gReg = in.regularizedGradient(i, norm);
    Value vNew = e.add(e.mul(e.scalar(elem, alpha), v),
                       e.mul(e.scalar(elem, 1.0 - alpha), gReg));
    Value hNew = e.add(e.mul(e.scalar(elem, beta), h),
                       e.mul(e.scalar(elem, 1.0 - beta), e.mul(gReg, gReg)));
    Value hSqrt = e.add(e.sqrt(hNew), e.scalar(elem, eps));
    // Bias correction from the second step on: r sqrt(1 - beta^t) /
    // (1 - alpha^t); at t = 0 the rate is r.
    Value betaT = e.binary("Pow", e.scalar(elem, beta), step.t);
    Value alphaT = e.binary("Pow", e.scalar(elem, alpha), step.t);
    Value corrected = e.div(e.mul(step.r, e.sqrt(e.sub(one(), betaT))),
                            e.sub(one(), alphaT));
    Value rate = e.where(step.tPositive, corrected, step.r);
    Value xNew = e.sub(x, e.mul(rate, e.div(vNew, hSqrt)));
    xs.push_back(e.mul(e.scalar(elem, 1.0 - normPost), xNew));
    vs.push_back(vNew);
    hs.push_back(hNew);
  }
  results.append(xs);
  results.append(vs);
  results.append(hs);
  return success();
}

LogicalResult expandMomentum(Emitter &e, const NodeState &s,
                             const ::onnx::OpSchema &schema,
                             SmallVectorImpl<Value> &results) {
  auto n = optimizerCount(s, 3, 2);
  if (failed(n))
    return failure();
  float alpha = floatAttr(s, schema, "alpha");
  float beta = floatAttr(s, schema, "beta");
  float norm = floatAttr(s, schema, "norm_coefficient");
  std::string mode = s.attrs.count("mode") ? s.attrs.at("mode")->s() : "";
  if (mode != "standard" && mode != "nesterov")
    return emitError(s.loc) << "Momentum: mode '" << mode
                            << "' is not one of 'standard' and 'nesterov'";
  OptimizerInputs in(e, s, *n);
  SmallVector<Value> xs, vs;
  for (int64_t i = 0; i < *n; ++i) {
    Value x = in.tensor(0, i), v = in.tensor(2, i);
    Type elem = Emitter::elementType(x);
    Step step = in.step(elem);
    Value gReg = in.regularizedGradient(i, norm);
    // The gradient's coefficient is 1 at the first step (t = 0).
    Value betaAdjusted =
        e.where(step.tPositive, e.scalar(elem, beta), e.scalar(elem, 1));
    Value vNew = e.add(e.mul(e.scalar(elem, alpha), v),
                       e.mul(betaAdjusted, gReg));
    Value direction =
        mode == "standard"
            ? vNew
            : e.add(gReg, e.mul(e.scalar(elem, alpha), vNew));
    xs.push_back(e.sub(x, e.mul(step.r, direction)));
    vs.push_back(vNew);
  }
  results.append(xs);
  results.append(vs);
  return success();
}

//===----------------------------------------------------------------------===//
// Gradient
//===----------------------------------------------------------------------===//

/// Reverse-mode differentiation of one cloned forward computation.
class Differentiator {
public:
  Differentiator(Emitter &e, const NodeState &s) : e(e), s(s) {}

  /// Adds `g` to the adjoint of `v`, summed back to `v`'s shape.
  LogicalResult accumulate(Value v, Value g) {
    FailureOr<Value> reduced = unbroadcast(g, v);
    if (failed(reduced))
      return failure();
    auto [it, inserted] = adjoints.try_emplace(v, *reduced);
    if (!inserted)
      it->second = e.add(it->second, *reduced);
    return success();
  }

  Value adjoint(Value v) const { return adjoints.lookup(v); }

  /// Propagates the adjoint of `op`'s result to the operands in `active`.
  LogicalResult differentiate(Operation *op,
                              const llvm::DenseSet<Value> &active) {
    Value g = adjoint(op->getResult(0));
    if (!g)
      return success(); // y does not depend on this op.
    StringRef name = op->getName().getStringRef().drop_front(5);
    Value a = op->getNumOperands() > 0 ? op->getOperand(0) : Value();
    Value c = op->getNumOperands() > 1 ? op->getOperand(1) : Value();
    Value y = op->getResult(0);
    auto to = [&](Value operand, auto makeGradient) -> LogicalResult {
      if (!active.contains(operand))
        return success();
      return accumulate(operand, makeGradient());
    };
    if (name == "Add")
      return failure(failed(to(a, [&] { return g; })) ||
                     failed(to(c, [&] { return g; })));
    if (name == "Sub")
      return failure(failed(to(a, [&] { return g; })) ||
                     failed(to(c, [&] { return e.neg(g); })));
    if (name == "Mul")
      return failure(failed(to(a, [&] { return e.mul(g, c); })) ||
                     failed(to(c, [&] { return e.mul(g, a); })));
    if (name == "Div") // d(a/c)/dc = -(a/c)/c
      return failure(
          failed(to(a, [&] { return e.div(g, c); })) ||
          failed(to(c, [&] { return e.neg(e.div(e.mul(g, y), c)); })));
    if (name == "Neg")
      return to(a, [&] { return e.neg(g); });
    if (name == "Identity")
      return to(a, [&] { return g; });
    Type elem = Emitter::elementType(y);
    if (name == "Exp")
      return to(a, [&] { return e.mul(g, y); });
    if (name == "Log")
      return to(a, [&] { return e.div(g, a); });
    if (name == "Sqrt")
      return to(a, [&] { return e.div(g, e.mul(e.scalar(elem, 2), y)); });
    if (name == "Tanh")
      return to(a, [&] {
        return e.mul(g, e.sub(e.scalar(elem, 1), e.mul(y, y)));
      });
    if (name == "Sigmoid")
      return to(a, [&] {
        return e.mul(g, e.mul(y, e.sub(e.scalar(elem, 1), y)));
      });
    if (name == "Relu")
      return to(a, [&] {
        Value positive =
            e.op("Greater", {a, e.scalar(elem, 0)},
                 cast<TensorType>(a.getType()).clone(e.b.getI1Type()));
        return e.where(positive, g, e.scalar(elem, 0));
      });
    if (name == "MatMul")
      return differentiateMatMul(op, g, active);
    return emitError(s.loc)
           << "Gradient: cannot differentiate through " << onnx::opLabel(op)
           << " (" << describe(op)
           << "); kiln differentiates Add, Sub, Mul, Div, Neg, Identity, "
              "Exp, Log, Sqrt, Tanh, Sigmoid, Relu and 2-D MatMul";
  }

private:
  /// The node an op was imported from, for messages.
  static std::string describe(Operation *op) {
    if (auto name = dyn_cast<NameLoc>(op->getLoc()))
      return "node '" + name.getName().str() + "'";
    return "an op";
  }

  LogicalResult differentiateMatMul(Operation *op, Value g,
                                    const llvm::DenseSet<Value> &active) {
    Value a = op->getOperand(0), c = op->getOperand(1);
    auto ta = dyn_cast<RankedTensorType>(a.getType());
    auto tc = dyn_cast<RankedTensorType>(c.getType());
    if (!ta || !tc || ta.getRank() != 2 || tc.getRank() != 2)
      return emitError(s.loc) << "Gradient: MatMul " << describe(op)
                              << " is differentiated for 2-D operands only";
    auto transpose = [&](Value v, RankedTensorType t) {
      auto type = RankedTensorType::get({t.getDimSize(1), t.getDimSize(0)},
                                        t.getElementType());
      return e.op("Transpose", {v}, type,
                  {e.b.getNamedAttr("perm", e.b.getDenseI64ArrayAttr({1, 0}))});
    };
    if (active.contains(a) &&
        failed(accumulate(a, e.op("MatMul", {g, transpose(c, tc)}, ta))))
      return failure();
    if (active.contains(c) &&
        failed(accumulate(c, e.op("MatMul", {transpose(a, ta), g}, tc))))
      return failure();
    return success();
  }

  /// `g` (of a broadcast result's shape) summed over the dims `v` was
  /// broadcast along, with `v`'s shape.
  FailureOr<Value> unbroadcast(Value g, Value v) {
    if (g.getType() == v.getType())
      return g;
    auto tg = dyn_cast<RankedTensorType>(g.getType());
    auto tv = dyn_cast<RankedTensorType>(v.getType());
    if (!tg || !tv || !tg.hasStaticShape() || !tv.hasStaticShape() ||
        tv.getRank() > tg.getRank())
      return emitError(s.loc)
             << "Gradient: the shapes on the differentiated path must be "
                "static (got "
             << g.getType() << " for a value of type " << v.getType() << ")";
    int64_t lead = tg.getRank() - tv.getRank();
    SmallVector<int64_t> axes;
    for (int64_t i = 0; i < tg.getRank(); ++i)
      if (i < lead || (tv.getDimSize(i - lead) == 1 && tg.getDimSize(i) != 1))
        axes.push_back(i);
    Value sum = g;
    if (!axes.empty()) {
      SmallVector<int64_t> kept(tg.getShape());
      for (int64_t a : axes)
        kept[a] = 1;
      sum = e.op("ReduceSum", {g, createI64Constant(e.b, e.loc, axes)},
                 RankedTensorType::get(kept, tg.getElementType()),
                 {e.b.getNamedAttr("keepdims", e.b.getI64IntegerAttr(1))});
    }
    return e.op("Reshape", {sum, createI64Constant(e.b, e.loc, tv.getShape())},
                tv);
  }

  Emitter &e;
  const NodeState &s;
  llvm::DenseMap<Value, Value> adjoints;
};

/// What `def` reads: its operands, and the values its subgraphs read from
/// outside it.
SmallVector<Value> inputsOf(Operation *def) {
  SmallVector<Value> inputs(def->getOperands());
  if (def->getNumRegions() != 0)
    def->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (!def->isAncestor(operand.getParentRegion()->getParentOp()))
          inputs.push_back(operand);
    });
  return inputs;
}

/// The ops that compute `y` from `sources` (and read at least one of them,
/// directly or not), defs before uses.
LogicalResult forwardOps(Value y, const llvm::DenseSet<Value> &sources,
                         Location loc, SmallVectorImpl<Operation *> &order) {
  llvm::DenseMap<Value, bool> depends;
  llvm::DenseMap<Operation *, SmallVector<Value>> inputs;
  auto known = [&](Value v) {
    return sources.contains(v) || depends.count(v);
  };
  auto dependsOn = [&](Value v) {
    return sources.contains(v) || depends.lookup(v);
  };
  // Each entry: a value and the index of its def's next input to visit.
  SmallVector<std::pair<Value, size_t>> stack{{y, 0}};
  while (!stack.empty()) {
    Value v = stack.back().first;
    Operation *def = v.getDefiningOp();
    if (known(v) || !def) {
      if (!known(v))
        depends[v] = false;
      stack.pop_back();
      continue;
    }
    auto it = inputs.try_emplace(def, inputsOf(def)).first;
    size_t &next = stack.back().second;
    if (next < it->second.size()) {
      Value in = it->second[next++];
      if (!known(in))
        stack.push_back({in, 0});
      continue;
    }
    bool any = llvm::any_of(it->second, dependsOn);
    if (any && def->getNumRegions() != 0)
      return emitError(loc) << "Gradient: cannot differentiate through "
                            << onnx::opLabel(def) << ", which has subgraphs";
    if (any)
      order.push_back(def);
    for (Value r : def->getResults())
      depends[r] = any;
    stack.pop_back();
  }
  return success();
}

LogicalResult expandGradient(Emitter &e, const NodeState &s,
                             function_ref<Value(StringRef)> lookup,
                             SmallVectorImpl<Value> &results) {
  auto strings = [&](const char *name) {
    SmallVector<std::string> out;
    if (auto it = s.attrs.find(name); it != s.attrs.end())
      for (const auto &v : it->second->strings())
        out.push_back(v);
    return out;
  };
  SmallVector<std::string> xs = strings("xs"), zs = strings("zs");
  std::string yName =
      s.attrs.count("y") ? s.attrs.at("y")->s() : std::string();
  if (s.operands.size() != xs.size() + zs.size())
    return emitError(s.loc) << "Gradient: " << s.operands.size()
                            << " inputs, but xs and zs name "
                            << xs.size() + zs.size() << " tensors";
  if (s.node->output_size() != static_cast<int>(xs.size()))
    return emitError(s.loc) << "Gradient: " << s.node->output_size()
                            << " outputs, but xs names " << xs.size()
                            << " tensors";
  Value y = lookup(yName);
  if (!y)
    return emitError(s.loc) << "Gradient: y '" << yName
                            << "' is not a value of the graph";
  // The forward sources, mapped to the values the node is given; each
  // through an Identity of its own, so that one value fed for two of xs
  // gets the two partial derivatives, not their sum.
  IRMapping mapping;
  llvm::DenseSet<Value> sources, xSources;
  SmallVector<Value> fed;
  SmallVector<std::string> names(xs);
  names.append(zs.begin(), zs.end());
  llvm::StringSet<> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    Value v = lookup(names[i]);
    if (!v)
      return emitError(s.loc) << "Gradient: '" << names[i]
                              << "' is not a value of the graph";
    if (!seen.insert(names[i]).second)
      return emitError(s.loc) << "Gradient: '" << names[i]
                              << "' is named twice in xs and zs";
    if (!isa<TensorType>(s.operands[i].getType()))
      return emitError(s.loc) << "Gradient: input #" << i << " is missing";
    fed.push_back(e.unary("Identity", s.operands[i]));
    mapping.map(v, fed.back());
    sources.insert(v);
    if (i < xs.size())
      xSources.insert(v);
  }

  // The ops between the sources and y, in a topological (post) order; an
  // explicit stack, so that a long chain in a model cannot overflow ours.
  SmallVector<Operation *> order;
  if (failed(forwardOps(y, sources, s.loc, order)))
    return failure();

  // Clone the forward part at the node's inputs; an op reading the sources
  // unchanged would compute the same values, and CSE merges those.
  llvm::DenseSet<Value> active; // cloned values that depend on xs
  for (Value v : xSources)
    active.insert(mapping.lookup(v));
  SmallVector<Operation *> clones;
  for (Operation *op : order) {
    Operation *clone = e.b.clone(*op, mapping);
    if (llvm::any_of(clone->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value r : clone->getResults())
        active.insert(r);
    clones.push_back(clone);
  }

  Differentiator diff(e, s);
  Value yClone = mapping.lookupOrDefault(y);
  if (active.contains(yClone)) {
    if (failed(diff.accumulate(yClone, e.filledLike(yClone, 1.0))))
      return failure();
    for (Operation *op : llvm::reverse(clones)) {
      if (op->getNumResults() != 1)
        return emitError(s.loc) << "Gradient: cannot differentiate through "
                                << onnx::opLabel(op)
                                << " (more than one result)";
      if (failed(diff.differentiate(op, active)))
        return failure();
    }
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    Value x = fed[i];
    Value g = diff.adjoint(x);
    results.push_back(g ? g : e.filledLike(x, 0.0));
  }
  return success();
}

} // namespace

LogicalResult expandTrainingNode(OpBuilder &builder, const NodeState &state,
                                 function_ref<Value(StringRef)> lookup,
                                 SmallVectorImpl<Value> &results) {
  const ::onnx::OpSchema *schema = ::onnx::OpSchemaRegistry::Schema(
      state.opType, state.opset, kTrainingDomain);
  if (!schema)
    return emitError(state.loc) << kTrainingDomain << "." << state.opType
                                << ": unknown op in opset " << state.opset
                                << " of the domain";
  Emitter e(builder, state.loc);
  if (state.opType == "Gradient")
    return expandGradient(e, state, lookup, results);
  for (Value v : state.operands)
    if (!isa<TensorType>(v.getType()))
      return emitError(state.loc)
             << state.opType << ": every input is required";
  for (size_t i = 2; i < state.operands.size(); ++i) {
    Type elem = Emitter::elementType(state.operands[i]);
    if (!isa<FloatType>(elem))
      return emitError(state.loc)
             << state.opType << ": input #" << i << " must be a float tensor";
  }
  if (state.operands.size() >= 2 && !isa<FloatType>(Emitter::elementType(state.operands[0])))
    return emitError(state.loc) << state.opType << ": input R (the learning rate) must be a float tensor";
  if (state.operands.size() >= 2 && !isa<IntegerType>(Emitter::elementType(state.operands[1])))
    return emitError(state.loc) << state.opType
                                << ": input T (the update count) must be an integer tensor";
  if (state.opType == "Adagrad")
    return expandAdagrad(e, state, *schema, results);
  if (state.opType == "Adam")
    return expandAdam(e, state, *schema, results);
  if (state.opType == "Momentum")
    return expandMomentum(e, state, *schema, results);
  return emitError(state.loc)
         << kTrainingDomain << "." << state.opType
         << ": not supported (kiln expands Adagrad, Adam, Momentum and "
            "Gradient of this domain; other training ops are not supported)";
}

} // namespace kiln::importer
