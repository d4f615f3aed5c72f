//===- DynamicDims.cpp - sizes of the model's dynamic dims in lowered code ===//
//
// Every `?` the lowering allocates is one of the model's symbolic input
// dims, an affine expression of them, a conv's or pool's output size over
// one, or the product of two such dims (kiln-dim-symbols says which), and
// its size is `tensor.dim` of the first argument dim of @main that is that
// dim, or it is computed from the dims it is made of. With one symbolic dim and
// no expressions every `?` is it. Else a pattern's tensor.empty is matched
// against the op it lowers (found by location): when the op involves one
// symbol only, that one; else the results, then the operands, of the same
// rank whose dims agree with the new type (equal, or 1 in it: the
// keep-dims intermediates of reductions) decide, if they all say the same.
// Anything else is recorded as a failure the pass reports on the op:
// never a guess.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "passes/Utils/DimExpressions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace kiln::lowering {

namespace {
thread_local DimSymbolTable *table = nullptr;
} // namespace

void DimSymbolTable::build(ModuleOp module) {
  byLoc.clear();
  labels.clear();
  failures.clear();
  numSymbols = 0;
  numExprs = 0;
  numFloors = 0;
  numProducts = 0;
  main = nullptr;
  module.walk([&](func::FuncOp func) {
    auto names = func->getAttrOfType<ArrayAttr>("kiln.symbol_names");
    if (!names || names.size() < numSymbols)
      return;
    main = func;
    numSymbols = names.size();
    auto exprs = func->getAttrOfType<ArrayAttr>("kiln.dim_exprs");
    numExprs = exprs ? exprs.size() : 0;
    auto floors = func->getAttrOfType<ArrayAttr>("kiln.dim_floors");
    numFloors = floors ? floors.size() : 0;
    auto products = func->getAttrOfType<ArrayAttr>("kiln.dim_products");
    numProducts = products ? products.size() : 0;
  });
  if (!enabled())
    return;
  // A node's label is its op's: of the ops an importer rewrite made at its
  // location, the first with operands (not a Constant or a `none`).
  llvm::DenseMap<Location, std::string> operandless;
  module.walk([&](Operation *op) {
    if (isa<func::FuncOp, ModuleOp>(op))
      return;
    if (op->getDialect() && op->getDialect()->getNamespace() == "onnx")
      (op->getNumOperands() ? labels : operandless)
          .try_emplace(op->getLoc(), kiln::onnx::opLabel(op));
    auto add = [&](Value v, bool result) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || type.hasStaticShape())
        return;
      SmallVector<int64_t> symbols = symbolsOf(v);
      if (symbols.size() == size_t(type.getRank()))
        byLoc[op->getLoc()].push_back({type, symbols, result});
    };
    for (Value v : op->getResults())
      add(v, true);
    for (Value v : op->getOperands())
      add(v, false);
  });
  for (auto &[loc, label] : operandless)
    labels.try_emplace(loc, label);
}

SmallVector<int64_t> DimSymbolTable::expression(int64_t id) const {
  return kiln::onnx::dimExpression(main, id);
}

SmallVector<int64_t> DimSymbolTable::floor(int64_t id) const {
  return kiln::onnx::dimFloor(main, id);
}

SmallVector<int64_t> DimSymbolTable::product(int64_t id) const {
  return kiln::onnx::dimProduct(main, id);
}

SmallVector<int64_t> DimSymbolTable::symbolsOf(Value v) const {
  return kiln::onnx::recordedDimSymbols(v);
}

std::optional<int64_t> DimSymbolTable::resolve(Location loc, RankedTensorType type,
                                               int64_t dim) const {
  auto it = byLoc.find(loc);
  if (it == byLoc.end())
    return std::nullopt;
  const SmallVector<Entry> &entries = it->second;
  llvm::SmallSetVector<int64_t, 4> all;
  for (const Entry &e : entries)
    for (int64_t s : e.symbols)
      if (s >= 0)
        all.insert(s);
  if (all.size() == 1)
    return all[0];
  // Results first, then operands: those whose shape the new type follows.
  for (bool results : {true, false}) {
    std::optional<int64_t> found;
    bool conflict = false;
    for (const Entry &e : entries) {
      if (e.result != results || e.type.getRank() != type.getRank())
        continue;
      bool fits = true;
      for (int64_t d = 0; d < type.getRank() && fits; ++d) {
        int64_t want = type.getDimSize(d), have = e.type.getDimSize(d);
        fits = ShapedType::isDynamic(want) ? ShapedType::isDynamic(have)
                                           : want == 1 || want == have;
      }
      if (!fits)
        continue;
      int64_t s = e.symbols[dim];
      if (s < 0 || (found && *found != s))
        conflict = true;
      found = s;
    }
    if (found && !conflict)
      return found;
    if (found)
      return std::nullopt;
  }
  return std::nullopt;
}

void setDimSymbols(DimSymbolTable *t) { table = t; }

Value symbolSize(OpBuilder &b, Location loc, int64_t symbol) {
  Operation *parent = b.getInsertionBlock()->getParentOp();
  auto func = dyn_cast<func::FuncOp>(parent);
  if (!func)
    func = parent->getParentOfType<func::FuncOp>();
  if (!func)
    return {};
  bool several = table && table->enabled();
  for (BlockArgument arg : func.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t)
      continue;
    SmallVector<int64_t> s;
    if (several)
      s = kiln::onnx::recordedDimSymbols(arg);
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (t.isDynamicDim(i) && (!several || (i < int64_t(s.size()) && s[i] == symbol)))
        return tensor::DimOp::create(b, loc, arg, i);
  }
  // An expression, a window op's output size (never negative where the
  // entry point runs: kiln.dim_constraints) or a Reshape's merged dims,
  // from the sizes of what it is made of.
  int64_t n = several ? table->numSymbols : 0;
  if (!several || symbol < n)
    return {};
  return kiln::dimIdValue(b, loc, table->function(), symbol, n,
                          [&](int64_t id) { return symbolSize(b, loc, id); });
}

Value dynamicDimSize(OpBuilder &b, Location loc, RankedTensorType type, int64_t dim) {
  if (!table || !table->enabled())
    return symbolSize(b, loc, 0);
  std::optional<int64_t> symbol = table->resolve(loc, type, dim);
  Value size = symbol ? symbolSize(b, loc, *symbol) : Value();
  if (!size) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (symbol)
      os << "dim " << dim << " of " << type
         << " is a dynamic dim that no input of the function has";
    else
      os << "cannot tell which of the model's dynamic dims dim " << dim << " of " << type
         << " is (" << backendName()
         << " sizes each dynamic dim from an input dim; pin the dims with --input-shape)";
    table->failures.try_emplace(loc, text);
    // Keeps the IR valid (a size of 0 where no dim can stand in); the
    // pass fails.
    size = symbolSize(b, loc, 0);
    if (!size)
      size = arith::ConstantIndexOp::create(b, loc, 0);
  }
  return size;
}

void requireNonZero(Operation *op, Value v, int64_t dim) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func)
    return;
  llvm::SmallSetVector<int64_t, 4> symbols;
  if (auto list = func->getAttrOfType<DenseI64ArrayAttr>("kiln.symbolic_min"))
    symbols.insert(list.asArrayRef().begin(), list.asArrayRef().end());
  SmallVector<int64_t> s;
  if (table && table->enabled())
    s = table->symbolsOf(v);
  int64_t n = table ? table->numSymbols : 0;
  // Dim `id` at least 1: a symbol's minimum, or a constraint.
  std::function<void(int64_t)> require = [&](int64_t id) {
    if (id < 0) {
      for (int64_t k = 0; k < std::max<int64_t>(n, 1); ++k)
        symbols.insert(k);
      return;
    }
    if (id < n || !table) {
      symbols.insert(id);
      return;
    }
    // A floor dim is at least 1 already (kiln-dim-symbols' constraints).
    if (!table->floor(id).empty())
      return;
    // A product is when both its factors are.
    if (SmallVector<int64_t> p = table->product(id); !p.empty()) {
      require(p[1]);
      require(p[2]);
      return;
    }
    SmallVector<int64_t> atLeastOne = table->expression(id);
    if (atLeastOne.empty())
      return require(-1);
    // An expression: at least 1 is a constraint the entry point checks.
    atLeastOne[0] -= 1;
    kiln::onnx::addDimConstraints(func,
                                  {DenseI64ArrayAttr::get(func.getContext(), atLeastOne)});
  };
  require(dim < int64_t(s.size()) ? s[dim] : -1);
  if (symbols.empty())
    return;
  SmallVector<int64_t> sorted(symbols.begin(), symbols.end());
  llvm::sort(sorted);
  func->setAttr("kiln.symbolic_min", DenseI64ArrayAttr::get(func.getContext(), sorted));
}

std::optional<SmallVector<int64_t>> dimExpr(Value v, int64_t dim) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || dim < 0 || dim >= type.getRank() || !type.isDynamicDim(dim))
    return std::nullopt;
  if (!table || !table->enabled())
    return SmallVector<int64_t>{0, 1}; // The one symbolic dim.
  SmallVector<int64_t> s = table->symbolsOf(v);
  SmallVector<int64_t> expr;
  if (dim < int64_t(s.size()))
    expr = table->expression(s[dim]);
  if (expr.empty())
    return std::nullopt;
  return expr;
}

bool sameSize(Value a, int64_t da, Value b, int64_t db) {
  auto ta = cast<RankedTensorType>(a.getType()), tb = cast<RankedTensorType>(b.getType());
  if (!ta.isDynamicDim(da) || !tb.isDynamicDim(db))
    return ta.getDimSize(da) == tb.getDimSize(db);
  if (!table || !table->enabled())
    return true; // One dynamic dim and nothing made of it: every `?` is it.
  SmallVector<int64_t> sa = table->symbolsOf(a), sb = table->symbolsOf(b);
  return da < int64_t(sa.size()) && db < int64_t(sb.size()) && sa[da] >= 0 && sa[da] == sb[db];
}

void requireNonNegative(Operation *op, ArrayRef<int64_t> expr) {
  auto func = op->getParentOfType<func::FuncOp>();
  // Holds for every value of the dims: nothing to check.
  if (!func || (expr[0] >= 0 && llvm::all_of(expr, [](int64_t c) { return c >= 0; })))
    return;
  kiln::onnx::addDimConstraints(func, {DenseI64ArrayAttr::get(func.getContext(), expr)});
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      if (Value size = dynamicDimSize(b, loc, type, i))
        sizes.push_back(size);
  if (sizes.size() != size_t(type.getNumDynamicDims()))
    sizes.clear(); // No function argument to size from: an invalid op, reported.
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(), sizes);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicSizes) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(), dynamicSizes);
}

Value dimValue(OpBuilder &b, Location loc, Value v, int64_t dim) {
  auto type = cast<ShapedType>(v.getType());
  if (type.isDynamicDim(dim))
    return tensor::DimOp::create(b, loc, v, dim);
  return indexConstant(b, loc, type.getDimSize(dim));
}

SmallVector<Value> dynamicSizesOf(OpBuilder &b, Location loc, Value v,
                                  ArrayRef<int64_t> dims) {
  SmallVector<Value> sizes;
  auto type = cast<RankedTensorType>(v.getType());
  for (int64_t d : dims)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, v, d));
  return sizes;
}

} // namespace kiln::lowering
