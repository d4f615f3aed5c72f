//===- ShapeHelpers.cpp - Helpers for onnx shape functions -----------------===//

#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cctype>
#include <map>

using namespace mlir;

namespace kiln::onnx {

MaybeShape shapeOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return std::nullopt;
  return llvm::SmallVector<int64_t>(type.getShape());
}

DenseElementsAttr constantOf(Value v) {
  if (!v)
    return {};
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return {};
  return dyn_cast_or_null<DenseElementsAttr>(attr);
}

std::optional<SmallVector<int64_t>> constantInts(Value v) {
  DenseElementsAttr attr = constantOf(v);
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> out;
  bool isUnsigned = attr.getElementType().isUnsignedInteger();
  for (const APInt &x : attr.getValues<APInt>())
    out.push_back(isUnsigned ? static_cast<int64_t>(x.getZExtValue())
                             : x.getSExtValue());
  return out;
}

namespace {
/// partialInts with a bound on how deep it looks.
std::optional<SmallVector<int64_t>> partialIntsAt(Value v, int depth) {
  if (std::optional<SmallVector<int64_t>> c = constantInts(v))
    return c;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  Operation *def = v.getDefiningOp();
  if (!def || depth > 32 || !type || type.getRank() > 1 ||
      !isa<IntegerType>(type.getElementType()))
    return std::nullopt;
  auto of = [&](Value x) { return partialIntsAt(x, depth + 1); };
  if (auto shape = dyn_cast<ShapeOp>(def)) {
    auto in = dyn_cast<RankedTensorType>(shape.getData().getType());
    if (!in)
      return std::nullopt;
    auto [start, end] = shapeOpRange(in.getRank(), shape.getStart(), shape.getEnd());
    SmallVector<int64_t> dims;
    for (int64_t i = start; i < end; ++i)
      dims.push_back(in.getDimSize(i));
    return dims;
  }
  if (auto gather = dyn_cast<GatherOp>(def)) {
    auto data = of(gather.getData());
    auto indices = constantInts(gather.getIndices());
    if (!data || !indices)
      return std::nullopt;
    SmallVector<int64_t> out;
    int64_t n = data->size();
    for (int64_t i : *indices) {
      if (i < 0)
        i += n;
      if (i < 0 || i >= n)
        return std::nullopt;
      out.push_back((*data)[i]);
    }
    return out;
  }
  if (auto slice = dyn_cast<SliceOp>(def)) {
    // torch's attention export slices [N, L, E] shapes for E.
    auto data = of(slice.getData());
    auto starts = constantInts(slice.getStarts()), ends = constantInts(slice.getEnds());
    std::optional<SmallVector<int64_t>> axes, steps;
    if (!isNone(slice.getAxes()))
      axes = constantInts(slice.getAxes());
    if (!isNone(slice.getSteps()))
      steps = constantInts(slice.getSteps());
    if (!data || !starts || !ends || starts->size() != 1 || ends->size() != 1 ||
        (!isNone(slice.getAxes()) && (!axes || axes->size() != 1 || ((*axes)[0] != 0 &&
                                                                       (*axes)[0] != -1))) ||
        (!isNone(slice.getSteps()) && (!steps || steps->size() != 1 || (*steps)[0] < 1)))
      return std::nullopt;
    int64_t n = data->size(), step = steps ? (*steps)[0] : 1;
    auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
    SmallVector<int64_t> out;
    for (int64_t i = clamp((*starts)[0]), e = clamp((*ends)[0]); i < e; i += step)
      out.push_back((*data)[i]);
    return out;
  }
  if (isa<UnsqueezeOp, SqueezeOp, ReshapeOp, IdentityOp>(def) ||
      (isa<CastOp>(def) && isa<IntegerType>(getElementTypeOrSelf(def->getOperand(0)))))
    return of(def->getOperand(0));
  if (auto concat = dyn_cast<ConcatOp>(def)) {
    SmallVector<int64_t> out;
    for (Value in : concat.getInputs()) {
      auto part = of(in);
      if (!part)
        return std::nullopt;
      out.append(*part);
    }
    return out;
  }
  if (auto fill = dyn_cast<ConstantOfShapeOp>(def)) {
    // torch's expand(n, -1, -1) compares its shape with a vector of -1s
    // made so: one integer repeated, a known number of times.
    auto count = of(fill.getInput());
    auto value = dyn_cast_or_null<DenseIntElementsAttr>(fill.getValueAttr());
    if (!count || count->size() != 1 || (*count)[0] < 0 || (*count)[0] > 64 ||
        (fill.getValueAttr() && (!value || value.getNumElements() != 1)))
      return std::nullopt;
    // Sign-extended as constantInts reads constants (a true is -1 to both).
    int64_t x = value ? (*value.getValues<APInt>().begin()).getSExtValue() : 0;
    return SmallVector<int64_t>((*count)[0], x);
  }
  if (isa<EqualOp>(def)) {
    // 1 or 0 where both elements are known.
    auto a = of(def->getOperand(0)), b = of(def->getOperand(1));
    if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1))
      return std::nullopt;
    SmallVector<int64_t> out;
    for (size_t i = 0, n = std::max(a->size(), b->size()); i < n; ++i) {
      int64_t x = (*a)[a->size() == 1 ? 0 : i], y = (*b)[b->size() == 1 ? 0 : i];
      out.push_back(ShapedType::isDynamic(x) || ShapedType::isDynamic(y) ? ShapedType::kDynamic
                                                                          : int64_t(x == y));
    }
    return out;
  }
  if (auto where = dyn_cast<WhereOp>(def)) {
    // The chosen element where the condition is known; with it unknown,
    // the element both sides agree on.
    auto c = of(where->getOperand(0)), a = of(where->getOperand(1)),
         b = of(where->getOperand(2));
    if (!c || !a || !b)
      return std::nullopt;
    size_t n = std::max({c->size(), a->size(), b->size()});
    for (auto *part : {&*c, &*a, &*b})
      if (part->size() != n && part->size() != 1)
        return std::nullopt;
    auto at = [&](const SmallVector<int64_t> &v, size_t i) { return v[v.size() == 1 ? 0 : i]; };
    SmallVector<int64_t> out;
    for (size_t i = 0; i < n; ++i) {
      int64_t cond = at(*c, i), x = at(*a, i), y = at(*b, i);
      out.push_back(!ShapedType::isDynamic(cond) ? (cond ? x : y)
                    : x == y                     ? x
                                                 : ShapedType::kDynamic);
    }
    return out;
  }
  if (isa<AddOp, SubOp, MulOp, DivOp>(def)) {
    auto a = of(def->getOperand(0)), b = of(def->getOperand(1));
    if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1))
      return std::nullopt;
    size_t n = std::max(a->size(), b->size());
    SmallVector<int64_t> out;
    for (size_t i = 0; i < n; ++i) {
      int64_t x = (*a)[a->size() == 1 ? 0 : i], y = (*b)[b->size() == 1 ? 0 : i];
      if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y)) {
        out.push_back(ShapedType::kDynamic);
        continue;
      }
      int64_t r;
      if (isa<AddOp>(def) ? llvm::AddOverflow(x, y, r)
          : isa<SubOp>(def) ? llvm::SubOverflow(x, y, r)
          : isa<MulOp>(def) ? llvm::MulOverflow(x, y, r)
                            : (y == 0 || (r = x / y, false)))
        return std::nullopt;
      // ONNX's integer Div truncates toward zero, as C++ does.
      out.push_back(r);
    }
    return out;
  }
  return std::nullopt;
}
} // namespace

std::optional<SmallVector<int64_t>> partialInts(Value v) { return partialIntsAt(v, 0); }

std::optional<std::pair<Value, int64_t>> shapeElementSource(Value v, int64_t i) {
  for (int depth = 0; depth < 32; ++depth) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    Operation *def = v.getDefiningOp();
    if (!def || !type || type.getRank() > 1 || !isa<IntegerType>(type.getElementType()) ||
        i < 0 || (type.getRank() == 1 && !type.isDynamicDim(0) && i >= type.getDimSize(0)))
      return std::nullopt;
    if (auto shape = dyn_cast<ShapeOp>(def)) {
      auto in = dyn_cast<RankedTensorType>(shape.getData().getType());
      if (!in)
        return std::nullopt;
      auto [start, end] = shapeOpRange(in.getRank(), shape.getStart(), shape.getEnd());
      if (start + i >= end)
        return std::nullopt;
      return std::make_pair(shape.getData(), start + i);
    }
    if (auto gather = dyn_cast<GatherOp>(def)) {
      auto indices = constantInts(gather.getIndices());
      auto data = dyn_cast<RankedTensorType>(gather.getData().getType());
      if (!indices || !data || data.getRank() != 1 || data.isDynamicDim(0) ||
          i >= int64_t(indices->size()))
        return std::nullopt;
      int64_t j = (*indices)[i] < 0 ? (*indices)[i] + data.getDimSize(0) : (*indices)[i];
      v = gather.getData();
      i = j;
      continue;
    }
    if (auto slice = dyn_cast<SliceOp>(def)) {
      auto data = dyn_cast<RankedTensorType>(slice.getData().getType());
      auto starts = constantInts(slice.getStarts());
      std::optional<SmallVector<int64_t>> steps;
      if (!isNone(slice.getSteps()))
        steps = constantInts(slice.getSteps());
      if (!data || data.getRank() != 1 || data.isDynamicDim(0) || !starts ||
          starts->size() != 1 || (!isNone(slice.getSteps()) && (!steps || steps->size() != 1)))
        return std::nullopt;
      int64_t n = data.getDimSize(0), step = steps ? (*steps)[0] : 1;
      int64_t start = (*starts)[0] < 0 ? (*starts)[0] + n : (*starts)[0];
      if (step < 1)
        return std::nullopt;
      v = slice.getData();
      i = std::clamp<int64_t>(start, 0, n) + i * step;
      continue;
    }
    if (isa<UnsqueezeOp, SqueezeOp, ReshapeOp, IdentityOp, CastOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    if (auto concat = dyn_cast<ConcatOp>(def)) {
      std::optional<Value> part;
      for (Value in : concat.getInputs()) {
        auto t = dyn_cast<RankedTensorType>(in.getType());
        if (!t || t.getRank() > 1 || (t.getRank() == 1 && t.isDynamicDim(0)))
          return std::nullopt;
        int64_t size = t.getRank() == 0 ? 1 : t.getDimSize(0);
        if (i < size) {
          part = in;
          break;
        }
        i -= size;
      }
      if (!part)
        return std::nullopt;
      v = *part;
      continue;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

bool isNone(Value v) { return !v || isa<NoneType>(v.getType()); }

SmallVector<int64_t> namedDimSymbols(RankedTensorType type, ArrayAttr dimNames,
                                     ArrayRef<Attribute> names) {
  SmallVector<int64_t> symbols;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t s = type.isDynamicDim(d) ? -2 : -1;
    if (s == -2 && dimNames && dimNames.size() == size_t(type.getRank()))
      if (const Attribute *it = llvm::find(names, dimNames[d]); it != names.end())
        s = it - names.begin();
    symbols.push_back(s);
  }
  return symbols;
}

SmallVector<int64_t> recordedDimSymbols(Value v) {
  if (auto r = dyn_cast<OpResult>(v)) {
    auto perResult = r.getOwner()->getAttrOfType<ArrayAttr>("kiln.dim_symbols");
    if (perResult && r.getResultNumber() < perResult.size())
      if (auto list = dyn_cast<DenseI64ArrayAttr>(perResult[r.getResultNumber()]))
        return SmallVector<int64_t>(list.asArrayRef());
    return {};
  }
  auto arg = cast<BlockArgument>(v);
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!func || !type)
    return {};
  unsigned i = arg.getArgNumber();
  if (auto s = func.getArgAttrOfType<DenseI64ArrayAttr>(i, "kiln.dim_symbols"))
    return SmallVector<int64_t>(s.asArrayRef());
  auto names = func->getAttrOfType<ArrayAttr>("kiln.symbol_names");
  return namedDimSymbols(type, func.getArgAttrOfType<ArrayAttr>(i, "kiln.dim_names"),
                         names ? names.getValue() : ArrayRef<Attribute>());
}

SmallVector<int64_t> dimExpression(Operation *func, int64_t id) {
  auto names = func ? func->getAttrOfType<ArrayAttr>("kiln.symbol_names") : ArrayAttr();
  if (!names || id < 0)
    return {};
  int64_t n = names.size();
  if (id < n) {
    SmallVector<int64_t> expr(n + 1, 0);
    expr[id + 1] = 1;
    return expr;
  }
  auto exprs = func->getAttrOfType<ArrayAttr>("kiln.dim_exprs");
  if (!exprs || id - n >= int64_t(exprs.size()))
    return {};
  auto e = dyn_cast<DenseI64ArrayAttr>(exprs[id - n]);
  if (!e || int64_t(e.size()) != n + 1)
    return {};
  return SmallVector<int64_t>(e.asArrayRef());
}

std::string dimExprString(ArrayRef<int64_t> expr, ArrayRef<Attribute> names) {
  std::string s;
  for (size_t k = 0; k + 1 < expr.size() && k < names.size(); ++k) {
    if (!expr[k + 1])
      continue;
    if (!s.empty())
      s += " + ";
    if (expr[k + 1] != 1)
      s += std::to_string(expr[k + 1]) + "*";
    s += cast<StringAttr>(names[k]).str();
  }
  if (expr.empty())
    return s;
  if (s.empty())
    return std::to_string(expr[0]);
  if (expr[0] > 0)
    s += " + " + std::to_string(expr[0]);
  else if (expr[0] < 0)
    s += " - " + std::to_string(-expr[0]);
  return s;
}

SmallVector<int64_t> dimFloor(Operation *func, int64_t id) {
  auto names = func ? func->getAttrOfType<ArrayAttr>("kiln.symbol_names") : ArrayAttr();
  auto floors = func ? func->getAttrOfType<ArrayAttr>("kiln.dim_floors") : ArrayAttr();
  if (!names || !floors)
    return {};
  auto exprs = func->getAttrOfType<ArrayAttr>("kiln.dim_exprs");
  int64_t j = id - int64_t(names.size()) - (exprs ? int64_t(exprs.size()) : 0);
  if (j < 0 || j >= int64_t(floors.size()))
    return {};
  auto f = dyn_cast<DenseI64ArrayAttr>(floors[j]);
  // Only earlier dims, and a positive divisor: what kiln-dim-symbols writes.
  if (!f || f.size() != 3 || f[0] < 0 || f[0] >= id || f[2] < 1)
    return {};
  return SmallVector<int64_t>(f.asArrayRef());
}

SmallVector<int64_t> dimProduct(Operation *func, int64_t id) {
  auto names = func ? func->getAttrOfType<ArrayAttr>("kiln.symbol_names") : ArrayAttr();
  auto products = func ? func->getAttrOfType<ArrayAttr>("kiln.dim_products") : ArrayAttr();
  if (!names || !products)
    return {};
  int64_t j = id - int64_t(names.size());
  for (StringRef kind : {"kiln.dim_exprs", "kiln.dim_floors"})
    if (auto list = func->getAttrOfType<ArrayAttr>(kind))
      j -= list.size();
  if (j < 0 || j >= int64_t(products.size()))
    return {};
  auto p = dyn_cast<DenseI64ArrayAttr>(products[j]);
  // Two earlier dims and a positive factor: what kiln-dim-symbols writes.
  if (!p || p.size() != 3 || p[0] < 1 || p[1] < 0 || p[1] >= id || p[2] < 0 || p[2] >= id)
    return {};
  return SmallVector<int64_t>(p.asArrayRef());
}

std::string dimIdString(Operation *func, int64_t id) {
  auto names = func ? func->getAttrOfType<ArrayAttr>("kiln.symbol_names") : ArrayAttr();
  SmallVector<int64_t> expr = dimExpression(func, id);
  if (!expr.empty())
    return dimExprString(expr, names.getValue());
  if (SmallVector<int64_t> p = dimProduct(func, id); !p.empty()) {
    // A factor that is a sum is bracketed: T*(S + 1).
    auto factor = [&](int64_t k) {
      std::string s = dimIdString(func, k);
      bool sum = !dimExpression(func, k).empty() && s.find(' ') != std::string::npos;
      return sum ? "(" + s + ")" : s;
    };
    return (p[0] == 1 ? "" : std::to_string(p[0]) + "*") + factor(p[1]) + "*" + factor(p[2]);
  }
  SmallVector<int64_t> f = dimFloor(func, id);
  if (f.empty())
    return "?";
  std::string sum = dimIdString(func, f[0]);
  if (f[1])
    sum += (f[1] > 0 ? " + " : " - ") + std::to_string(std::abs(f[1]));
  if (f[2] == 1)
    return sum;
  return "floor(" + (f[1] ? "(" + sum + ")" : sum) + "/" + std::to_string(f[2]) + ")";
}

void addDimConstraints(Operation *func, ArrayRef<Attribute> constraints) {
  SmallVector<Attribute> all;
  if (auto old = func->getAttrOfType<ArrayAttr>("kiln.dim_constraints"))
    all.assign(old.begin(), old.end());
  for (Attribute c : constraints)
    if (!llvm::is_contained(all, c))
      all.push_back(c);
  if (!all.empty())
    func->setAttr("kiln.dim_constraints", ArrayAttr::get(func->getContext(), all));
}

std::string opLabel(Operation *op) {
  StringRef name = op->getName().getStringRef();
  name.consume_front("onnx.");
  std::string label = name.str();
  if (auto module = op->getParentOfType<ModuleOp>())
    if (auto opset = module->getAttrOfType<IntegerAttr>("onnx.opset"))
      label += " (opset " + std::to_string(opset.getInt()) + ")";
  return label;
}

FailureOr<MaybeShape> broadcastShapes(Operation *op,
                                      ArrayRef<MaybeShape> shapes) {
  size_t rank = 0;
  for (const MaybeShape &s : shapes) {
    if (!s)
      return MaybeShape();
    rank = std::max(rank, s->size());
  }
  SmallVector<int64_t> out(rank, 1);
  SmallVector<bool> dynamic(rank, false);
  for (const MaybeShape &s : shapes) {
    size_t offset = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t d = (*s)[i];
      size_t o = offset + i;
      if (ShapedType::isDynamic(d)) {
        // A dynamic dim broadcast against 1 (or nothing yet) stays unknown.
        if (out[o] == 1)
          dynamic[o] = true;
        continue;
      }
      if (d == 1)
        continue;
      if (out[o] != 1 && out[o] != d)
        return op->emitOpError("cannot broadcast dim ")
               << o << ": " << out[o] << " vs " << d;
      out[o] = d;
      dynamic[o] = false;
    }
  }
  for (size_t i = 0; i < rank; ++i)
    if (dynamic[i] && out[i] == 1)
      out[i] = ShapedType::kDynamic;
  return MaybeShape(out);
}

FailureOr<int64_t> normalizeAxis(Operation *op, int64_t axis, int64_t rank,
                                 StringRef what) {
  if (axis < -rank || axis >= rank)
    return op->emitOpError() << what << " " << axis
                             << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult refineResult(Operation *op, Value result,
                           const MaybeShape &shape) {
  if (!shape)
    return success();
  for (int64_t d : *shape)
    if (!ShapedType::isDynamic(d) && d < 0)
      return op->emitOpError("its operands give a negative result dim (")
             << d << ")";
  auto current = dyn_cast<TensorType>(result.getType());
  if (!current)
    return success();
  SmallVector<int64_t> merged(*shape);
  if (auto ranked = dyn_cast<RankedTensorType>(current)) {
    if (ranked.getRank() != static_cast<int64_t>(shape->size()))
      return op->emitOpError("result has rank ")
             << ranked.getRank() << " but its operands give rank "
             << shape->size();
    for (size_t i = 0; i < merged.size(); ++i) {
      int64_t have = ranked.getDimSize(i);
      if (ShapedType::isDynamic(merged[i]))
        merged[i] = have;
      else if (!ShapedType::isDynamic(have) && have != merged[i])
        return op->emitOpError("result dim ")
               << i << " is " << have << " but its operands give "
               << merged[i];
    }
  }
  auto refined = RankedTensorType::get(merged, current.getElementType());
  if (refined != result.getType())
    result.setType(refined);
  return success();
}

LogicalResult refineRank(Operation *op, Value result, int64_t rank) {
  return refineResult(op, result,
                      SmallVector<int64_t>(rank, ShapedType::kDynamic));
}

std::pair<int64_t, int64_t> shapeOpRange(int64_t rank, int64_t start,
                                         std::optional<int64_t> end) {
  auto clampIdx = [&](int64_t i) {
    if (i < 0)
      i += rank;
    return std::clamp<int64_t>(i, 0, rank);
  };
  return {clampIdx(start), end ? clampIdx(*end) : rank};
}

std::optional<EinsumTerms> parseEinsum(StringRef equation, std::string &error) {
  std::string eq;
  for (char ch : equation)
    if (ch != ' ')
      eq += ch;
  std::string lhs = eq, rhs;
  size_t arrow = eq.find("->");
  if (arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
  }
  // A term's letters, the ellipsis as '.'.
  auto letters = [&](StringRef term, std::string &out) {
    out.clear();
    for (size_t i = 0; i < term.size(); ++i) {
      if (term.substr(i).starts_with("...")) {
        if (out.find('.') != std::string::npos) {
          error = "a term of '" + equation.str() + "' has two ellipses";
          return false;
        }
        out += '.';
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
        out += term[i];
      } else {
        error = "cannot parse the equation '" + equation.str() + "'";
        return false;
      }
    }
    return true;
  };
  EinsumTerms terms;
  SmallVector<StringRef> parts;
  StringRef(lhs).split(parts, ',');
  bool ellipsis = false;
  std::map<char, int> uses;
  for (StringRef part : parts) {
    std::string ls;
    if (!letters(part, ls))
      return std::nullopt;
    for (char ch : ls) {
      if (ch == '.')
        ellipsis = true;
      else
        ++uses[ch];
    }
    terms.inputs.push_back(ls);
  }
  if (arrow != std::string::npos) {
    if (!letters(rhs, terms.output))
      return std::nullopt;
    if (ellipsis && terms.output.find('.') == std::string::npos)
      terms.output = "." + terms.output;
    return terms;
  }
  if (ellipsis)
    terms.output += '.';
  for (auto [ch, n] : uses)
    if (n == 1)
      terms.output += ch;
  return terms;
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(d))
      return ShapedType::kDynamic;
    p *= d;
  }
  return p;
}

} // namespace kiln::onnx
