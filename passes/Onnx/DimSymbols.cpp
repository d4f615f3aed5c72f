//===- DimSymbols.cpp - kiln-dim-symbols pass -----------------------------===//
//
// Says what each `?` dim of @main's values is in terms of the model's
// symbolic input dims: the compiled code takes one value per symbolic dim,
// and every `?` it allocates or checks is one of them or an affine
// expression of them (past + seq after a Concat, 1 + seq after prepending
// a token, seq - 1 after dropping one, 2 * seq). A probe tells: @main is
// cloned with the dims at chosen sizes and each op's shape function runs
// once in order on each clone. Clone 0 has dim k at 211 + 16k; clone 1 + k
// moves dim k alone by 97, which gives its coefficient; the last clone has
// every dim elsewhere (307 + 22k) and checks the expression. Coefficients
// must be whole and not negative (sizes then grow with each dim, which
// the memory plan's limits rely on). A conv's or pool's output size over
// such a dim is a floor dim, floor((dim + a) / s) by the op's own rule
// (windowDimFloor), checked against the clones; a floor of a floor folds
// into one, and other ops pass one on when exactly one of their operands'
// floor dims has their sizes. A Resize whose sizes read a dim of another
// value with Shape (torchvision's `interpolate(x, size=f.shape[-2:])`)
// has that value's dim there, when it has the same sizes. A Reshape merging two dynamic dims makes a
// product dim, c * a * b of two dims found before it (symbols first, then
// expressions, then floor dims), checked against the clones. Anything else
// (a product of three, a sum of products, other roundings) stays unknown
// (-2), which the lowering and the interface report where it matters. Shape
// functions that fail at distinct sizes ([a] + [b]) mean the model needs
// them equal: an error on that op.
//
// Records (-1 for a static dim):
//   - `kiln.dim_symbols` on each op with a `?` result: per result, the
//     id of each dim: k < n for symbol k, n + j for expression j;
//   - @main's `kiln.symbol_names`: the symbols in order; `kiln.dim_exprs`:
//     each expression as [c0, c_0, ..., c_{n-1}] (c0 + sum c_k dim_k);
//     `kiln.dim_floors`: each floor dim (ids n + E + j after the E
//     expressions) as [id, a, s] with id a symbol or an expression;
//     `kiln.dim_products`: each product dim (ids after the floor dims) as
//     [c, i, j] for c * dim(i) * dim(j), i and j symbols, expressions or
//     floor dims; `kiln.dim_constraints`: expressions the entry point checks are >= 0
//     (those with a negative constant, and each floor dim's input bounded
//     so that it is at least 1);
//   - per result `kiln.dim_names` (the name of each `?` dim, the
//     expression written out for one, "" for a static one) and the same
//     list of lists as `kiln.result_dim_names` on @main (the result
//     attributes do not survive bufferization), and each result dim's id
//     in `kiln.result_dim_symbols` (what sizes the outputs).
//
//===----------------------------------------------------------------------===//

#include "passes/Onnx/Passes.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

namespace kiln::onnx {
#define GEN_PASS_DEF_ONNXDIMSYMBOLSPASS
#include "passes/Onnx/Passes.h.inc"
} // namespace kiln::onnx

using namespace mlir;

namespace {

constexpr int64_t kStatic = -1, kUnknown = -2;

/// Ids of floor dims, then of product dims, while probing (renumbered
/// after the expressions once their counts are known).
constexpr int64_t kFloorBase = int64_t(1) << 40;
constexpr int64_t kProductBase = int64_t(1) << 41;

/// The largest factor c of a product dim c * a * b.
constexpr int64_t kMaxFactor = int64_t(1) << 20;

/// How far clone 1 + k moves dim k: a prime, so that a rounded fraction
/// of a dim (a stride's) does not pass for a whole coefficient.
constexpr int64_t kMove = 97;

/// The size clone `probe` (0 to n + 1 of n dims) gives symbolic dim `k`.
int64_t probeSize(int64_t probe, int64_t k, int64_t n) {
  if (probe == n + 1)
    return 307 + 22 * k;
  return 211 + 16 * k + (probe == k + 1 ? kMove : 0);
}

/// c0 + sum c_k dim_k from each clone's size of a `?` (sizes[p] of clone
/// p); none when that is not what the sizes say.
std::optional<SmallVector<int64_t>> affineFit(ArrayRef<int64_t> sizes, int64_t n) {
  SmallVector<int64_t> expr(n + 1, 0);
  for (int64_t s : sizes)
    if (s < 0)
      return std::nullopt;
  int64_t c0 = sizes[0];
  for (int64_t k = 0; k < n; ++k) {
    int64_t delta = sizes[k + 1] - sizes[0];
    // Whole, not negative, and small enough that the entry point's
    // checks of an expression cannot overflow.
    if (delta < 0 || delta % kMove || delta / kMove > (int64_t(1) << 20))
      return std::nullopt;
    expr[k + 1] = delta / kMove;
    c0 -= expr[k + 1] * probeSize(0, k, n);
  }
  if (c0 < -(int64_t(1) << 40) || c0 > (int64_t(1) << 40))
    return std::nullopt;
  expr[0] = c0;
  int64_t check = c0;
  for (int64_t k = 0; k < n; ++k)
    check += expr[k + 1] * probeSize(n + 1, k, n);
  if (check != sizes[n + 1])
    return std::nullopt;
  return expr;
}

/// Symbol names of @main's arguments' `?` dims, in order of first use.
SmallVector<StringAttr> symbolNames(func::FuncOp func) {
  SmallVector<StringAttr> names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    auto dims = func.getArgAttrOfType<ArrayAttr>(i, "kiln.dim_names");
    if (!type || !dims || dims.size() != size_t(type.getRank()))
      continue;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      auto name = dyn_cast<StringAttr>(dims[d]);
      if (type.isDynamicDim(d) && name && !name.getValue().empty() &&
          !llvm::is_contained(names, name))
        names.push_back(name);
    }
  }
  return names;
}

/// The symbol index of each dim of argument `i` (kStatic for static dims).
SmallVector<int64_t> argumentSymbols(func::FuncOp func, unsigned i,
                                     ArrayRef<StringAttr> names) {
  SmallVector<Attribute> list(names.begin(), names.end());
  return kiln::onnx::namedDimSymbols(cast<RankedTensorType>(func.getArgument(i).getType()),
                                     func.getArgAttrOfType<ArrayAttr>(i, "kiln.dim_names"),
                                     list);
}

struct DimSymbolsPass : public kiln::onnx::impl::OnnxDimSymbolsPassBase<DimSymbolsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getSymName() != "main" || func.isExternal())
      return;
    SmallVector<StringAttr> names = symbolNames(func);
    if (names.empty())
      return;
    // The runtime's descriptor holds eight dynamic dims, the batch's among them.
    if (names.size() > 7) {
      func.emitError() << "the model has " << names.size()
                       << " dynamic dims besides the batch; kiln compiles at most 7 (pin "
                          "the others with --input-shape)";
      return signalPassFailure();
    }
    // The values whose symbols are looked for, in walk order.
    SmallVector<Value> values;
    func.walk([&](Operation *op) {
      if (op != func.getOperation())
        for (Value r : op->getResults())
          values.push_back(r);
    });
    llvm::DenseMap<Value, SmallVector<int64_t>> symbols;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (isa<RankedTensorType>(func.getArgument(i).getType()))
        symbols[func.getArgument(i)] = argumentSymbols(func, i, names);
    Dims dims;
    if (failed(probe(func, names, values, symbols, dims)))
      return signalPassFailure();
    // Floor dims after the expressions, product dims after them.
    int64_t firstFloor = int64_t(names.size() + dims.exprs.size());
    int64_t firstProduct = firstFloor + int64_t(dims.floors.size());
    auto renumber = [&](int64_t &id) {
      if (id >= kProductBase)
        id = firstProduct + (id - kProductBase);
      else if (id >= kFloorBase)
        id = firstFloor + (id - kFloorBase);
    };
    for (auto &entry : symbols)
      for (int64_t &id : entry.second)
        renumber(id);
    for (Floor &f : dims.floors)
      renumber(f[0]);
    for (Product &p : dims.products) {
      renumber(p[1]);
      renumber(p[2]);
    }
    record(func, names, values, symbols, dims);
  }

  /// A floor dim: floor((dim(id) + a) / s) as {id, a, s}, with id a
  /// symbol or an expression.
  using Floor = std::array<int64_t, 3>;
  /// A product dim: c * dim(i) * dim(j) as {c, i, j}, with i and j
  /// symbols, expressions or floor dims.
  using Product = std::array<int64_t, 3>;

  /// The dims found so far besides the symbols.
  struct Dims {
    SmallVector<SmallVector<int64_t>> exprs;
    SmallVector<Floor> floors;
    SmallVector<Product> products;
  };

  /// The size of dim `id` in clone `probe` while probing.
  static int64_t sizeAt(int64_t id, int64_t probe, int64_t n, const Dims &dims) {
    if (id < n)
      return probeSize(probe, id, n);
    if (id >= kProductBase) {
      const Product &p = dims.products[id - kProductBase];
      return p[0] * sizeAt(p[1], probe, n, dims) * sizeAt(p[2], probe, n, dims);
    }
    if (id >= kFloorBase) {
      const Floor &f = dims.floors[id - kFloorBase];
      return llvm::divideFloorSigned(sizeAt(f[0], probe, n, dims) + f[1], f[2]);
    }
    const SmallVector<int64_t> &e = dims.exprs[id - n];
    int64_t size = e[0];
    for (int64_t k = 0; k < n; ++k)
      size += e[k + 1] * probeSize(probe, k, n);
    return size;
  }

  /// The floor dim that dim `d` of `result` is, given its sizes in the
  /// clones: for a window op's spatial dim (Conv, pools) the op's own rule
  /// applied to its input's dim; for any other op the one floor dim of its
  /// operands with those sizes (elementwise ops, BatchNormalization, a
  /// Concat along channels pass one on). kUnknown when neither holds or
  /// when two floor dims of its operands fit (they could differ where the
  /// probe did not look).
  static int64_t floorId(OpResult result, int64_t d, ArrayRef<int64_t> sizes,
                         const llvm::DenseMap<Value, SmallVector<int64_t>> &symbols,
                         Dims &dims, int64_t n) {
    Operation *op = result.getOwner();
    SmallVector<Floor> &floors = dims.floors;
    auto fits = [&](int64_t id) { return fitsSizes(id, sizes, n, dims); };
    if (result.getResultNumber() == 0 && d >= 2 && op->getNumOperands())
      if (std::optional<std::pair<int64_t, int64_t>> rule =
              kiln::onnx::windowDimFloor(op, d - 2)) {
        SmallVector<int64_t> in = symbols.lookup(op->getOperand(0));
        if (d >= int64_t(in.size()) || in[d] < 0 || in[d] >= kProductBase)
          return kUnknown;
        // floor((floor((x + a) / s) + b) / t) is floor((x + a + b s) / (s t)):
        // each floor dim is one of an input dim or expression, and two
        // that are the same function are the same dim.
        Floor f{in[d], rule->first, rule->second};
        if (in[d] >= kFloorBase) {
          const Floor &g = floors[in[d] - kFloorBase];
          f = {g[0], g[1] + rule->first * g[2], g[2] * rule->second};
        }
        int64_t id = kFloorBase + (llvm::find(floors, f) - floors.begin());
        bool added = id == kFloorBase + int64_t(floors.size());
        if (added)
          floors.push_back(f);
        if (!fits(id)) {
          if (added)
            floors.pop_back();
          return kUnknown;
        }
        return id;
      }
    std::optional<int64_t> found;
    for (Value operand : op->getOperands())
      for (int64_t id : symbols.lookup(operand))
        if (id >= kFloorBase && id < kProductBase && id != found && fits(id)) {
          if (found)
            return kUnknown;
          found = id;
        }
    return found.value_or(kUnknown);
  }

  /// The dim that dim `d` of a Resize's result `v` is when its sizes read
  /// it with Shape from another value (torchvision's FPN and LRASPP:
  /// `interpolate(x, size=feature.shape[-2:])`): that value's, if it has
  /// the sizes `sizes` in the clones; else kUnknown.
  static int64_t readDimId(Value v, int64_t d, ArrayRef<int64_t> sizes,
                           const llvm::DenseMap<Value, SmallVector<int64_t>> &symbols,
                           const Dims &dims, int64_t n) {
    auto resize = v.getDefiningOp<kiln::onnx::ResizeOp>();
    if (!resize || kiln::onnx::isNone(resize.getSizes()))
      return kUnknown;
    auto source = kiln::onnx::shapeElementSource(resize.getSizes(), d);
    if (!source)
      return kUnknown;
    auto it = symbols.find(source->first);
    if (it == symbols.end() || source->second >= int64_t(it->second.size()))
      return kUnknown;
    int64_t id = it->second[source->second];
    return id >= 0 && fitsSizes(id, sizes, n, dims) ? id : kUnknown;
  }

  /// Whether dim `id` has the sizes `sizes` in the clones.
  static bool fitsSizes(int64_t id, ArrayRef<int64_t> sizes, int64_t n, const Dims &dims) {
    for (auto [k, size] : llvm::enumerate(sizes))
      if (sizeAt(id, k, n, dims) != size)
        return false;
    return true;
  }

  /// The product dim c * a * b with the sizes `sizes` in the clones, for
  /// a and b (a before b, or the same) symbols, expressions or floor dims
  /// found so far, in that order; kUnknown when none fits.
  static int64_t productId(ArrayRef<int64_t> sizes, int64_t n, Dims &dims) {
    SmallVector<int64_t> factors;
    for (int64_t k = 0; k < n + int64_t(dims.exprs.size()); ++k)
      factors.push_back(k);
    for (size_t j = 0; j < dims.floors.size(); ++j)
      factors.push_back(kFloorBase + j);
    for (auto [i, a] : llvm::enumerate(factors))
      for (int64_t b : ArrayRef(factors).drop_front(i)) {
        int64_t base = sizeAt(a, 0, n, dims) * sizeAt(b, 0, n, dims);
        if (base <= 0 || sizes[0] < base || sizes[0] % base || sizes[0] / base > kMaxFactor)
          continue;
        Product p{sizes[0] / base, a, b};
        int64_t id = kProductBase + (llvm::find(dims.products, p) - dims.products.begin());
        bool added = id == kProductBase + int64_t(dims.products.size());
        if (added)
          dims.products.push_back(p);
        if (fitsSizes(id, sizes, n, dims))
          return id;
        if (added)
          dims.products.pop_back();
      }
    return kUnknown;
  }

  /// Runs the shape functions on n + 2 clones with the symbolic dims at
  /// the probe's sizes and reads each `?` off them: a symbol's id, an
  /// expression's (n + its index in `exprs`), or kUnknown.
  LogicalResult probe(func::FuncOp func, ArrayRef<StringAttr> names, ArrayRef<Value> values,
                      llvm::DenseMap<Value, SmallVector<int64_t>> &symbols,
                      Dims &dims) {
    MLIRContext *context = func.getContext();
    int64_t n = names.size();
    SmallVector<SmallVector<RankedTensorType>> typesIn(n + 2);
    for (int64_t k = 0; k < n + 2; ++k) {
      OwningOpRef<ModuleOp> module = ModuleOp::create(func.getLoc());
      auto clone = cast<func::FuncOp>(func->clone());
      module->push_back(clone);
      for (BlockArgument arg : clone.getArguments()) {
        auto type = dyn_cast<RankedTensorType>(arg.getType());
        if (!type || type.hasStaticShape())
          continue;
        SmallVector<int64_t> shape(type.getShape());
        SmallVector<int64_t> argSymbols = argumentSymbols(func, arg.getArgNumber(), names);
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (argSymbols[d] >= 0)
            shape[d] = probeSize(k, argSymbols[d], n);
        arg.setType(type.clone(shape));
      }
      // Results of ops with a shape function start over; the importer's
      // types (the model's value_info) hold `?`.
      SmallVector<Operation *> ops;
      clone.walk([&](Operation *op) {
        if (op == clone.getOperation())
          return;
        ops.push_back(op);
        if (isa<kiln::onnx::ShapeInferenceOpInterface>(op) &&
            !op->hasTrait<OpTrait::ConstantLike>())
          for (Value r : op->getResults())
            if (auto t = dyn_cast<TensorType>(r.getType()))
              r.setType(UnrankedTensorType::get(t.getElementType()));
      });
      // Each shape function once, in order (operands before users, regions
      // before their op); the first error is the model's.
      std::optional<std::pair<Location, std::string>> error;
      {
        ScopedDiagnosticHandler capture(context, [&](Diagnostic &diag) {
          if (!error && diag.getSeverity() == DiagnosticSeverity::Error)
            error = std::make_pair(diag.getLocation(), diag.str());
          return success();
        });
        for (Operation *op : ops) {
          auto shaped = dyn_cast<kiln::onnx::ShapeInferenceOpInterface>(op);
          if (shaped && !op->hasTrait<OpTrait::ConstantLike>() && failed(shaped.inferShapes()) &&
              !error)
            error = std::make_pair(op->getLoc(), std::string("its shape function failed"));
        }
      }
      if (error) {
        Operation *at = nullptr;
        func.walk([&](Operation *op) {
          if (!at && op->getLoc() == error->first && op != func.getOperation())
            at = op;
        });
        std::string list;
        for (auto [i, name] : llvm::enumerate(names))
          list += (i ? ", '" : "'") + name.str() + "' = " + std::to_string(probeSize(k, i, n));
        InFlightDiagnostic diag = at ? at->emitError() << kiln::onnx::opLabel(at) << ": "
                                     : func.emitError();
        if (names.size() == 1)
          diag << "with the model's dynamic dim at another value (" << list
               << ") this op's shapes do not fit (" << error->second
               << "); the model works for some values of it only: pin it with --input-shape";
        else
          diag << "with the model's dynamic dims at different values (" << list
               << ") this op's shapes do not fit (" << error->second
               << "); kiln compiles dynamic dims that vary independently: give dims that "
                  "must be equal one name, or pin them with --input-shape";
        return failure();
      }
      SmallVector<Value> cloneValues;
      for (Operation *op : ops)
        for (Value r : op->getResults())
          cloneValues.push_back(r);
      if (cloneValues.size() != values.size())
        return func.emitError("internal error: the probe's clone differs from @main");
      for (Value v : cloneValues)
        typesIn[k].push_back(dyn_cast<RankedTensorType>(v.getType()));
    }
    for (auto [i, v] : llvm::enumerate(values)) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || type.hasStaticShape())
        continue;
      SmallVector<int64_t> s;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d)) {
          s.push_back(kStatic);
          continue;
        }
        SmallVector<int64_t> sizes;
        for (int64_t k = 0; k < n + 2; ++k) {
          RankedTensorType t = typesIn[k][i];
          sizes.push_back(t && t.getRank() == type.getRank() ? t.getDimSize(d) : -1);
        }
        std::optional<SmallVector<int64_t>> expr = affineFit(sizes, n);
        int64_t id = kUnknown;
        if (!expr)
          id = readDimId(v, d, sizes, symbols, dims, n);
        if (!expr && id == kUnknown)
          id = floorId(cast<OpResult>(v), d, sizes, symbols, dims, n);
        if (!expr && id == kUnknown)
          id = productId(sizes, n, dims);
        if (expr) {
          // Dim k itself, or an expression.
          for (int64_t k = 0; k < n; ++k) {
            SmallVector<int64_t> just(n + 1, 0);
            just[k + 1] = 1;
            if (*expr == just)
              id = k;
          }
          if (id == kUnknown) {
            auto it = llvm::find(dims.exprs, *expr);
            id = n + (it - dims.exprs.begin());
            if (it == dims.exprs.end())
              dims.exprs.push_back(*expr);
          }
        }
        s.push_back(id);
      }
      symbols[v] = s;
    }
    return success();
  }

  /// Writes the symbols onto the ops and @main.
  void record(func::FuncOp func, ArrayRef<StringAttr> names, ArrayRef<Value> values,
              const llvm::DenseMap<Value, SmallVector<int64_t>> &symbols,
              const Dims &dims) {
    ArrayRef<SmallVector<int64_t>> exprs = dims.exprs;
    ArrayRef<Floor> floors = dims.floors;
    Builder b(func.getContext());
    int64_t n = names.size();
    for (Value v : values) {
      Operation *op = v.getDefiningOp();
      if (cast<OpResult>(v).getResultNumber() != 0 ||
          llvm::none_of(op->getResults(), [&](Value r) { return symbols.count(r); }))
        continue;
      SmallVector<Attribute> perResult;
      for (Value r : op->getResults()) {
        auto it = symbols.find(r);
        perResult.push_back(b.getDenseI64ArrayAttr(it == symbols.end() ? ArrayRef<int64_t>()
                                                                        : ArrayRef(it->second)));
      }
      op->setAttr("kiln.dim_symbols", b.getArrayAttr(perResult));
    }
    SmallVector<Attribute> nameAttrs(names.begin(), names.end());
    func->setAttr("kiln.symbol_names", b.getArrayAttr(nameAttrs));
    SmallVector<Attribute> exprAttrs, constraints;
    for (const SmallVector<int64_t> &e : exprs) {
      exprAttrs.push_back(b.getDenseI64ArrayAttr(e));
      if (e[0] < 0)
        constraints.push_back(b.getDenseI64ArrayAttr(e));
    }
    func->removeAttr("kiln.dim_exprs");
    if (!exprAttrs.empty())
      func->setAttr("kiln.dim_exprs", b.getArrayAttr(exprAttrs));
    // A floor dim is at least 1 (the op has a window) wherever the model
    // is valid: floor((x + a) / s) >= 1 is x >= s - a, for x the symbol or
    // expression it is a floor of (floors of floors are folded).
    SmallVector<Attribute> floorAttrs;
    for (const Floor &f : floors) {
      floorAttrs.push_back(b.getDenseI64ArrayAttr(f));
      SmallVector<int64_t> e(n + 1, 0);
      if (f[0] < n)
        e[f[0] + 1] = 1;
      else
        e = exprs[f[0] - n];
      e[0] -= f[2] - f[1];
      if (e[0] < 0)
        constraints.push_back(b.getDenseI64ArrayAttr(e));
    }
    func->removeAttr("kiln.dim_floors");
    if (!floorAttrs.empty())
      func->setAttr("kiln.dim_floors", b.getArrayAttr(floorAttrs));
    // A product of dims that are not negative is not negative.
    SmallVector<Attribute> productAttrs;
    for (const Product &p : dims.products)
      productAttrs.push_back(b.getDenseI64ArrayAttr(p));
    func->removeAttr("kiln.dim_products");
    if (!productAttrs.empty())
      func->setAttr("kiln.dim_products", b.getArrayAttr(productAttrs));
    kiln::onnx::addDimConstraints(func, constraints);
    // The results' dims by name: what the header says and the entry point
    // sizes outputs by.
    SmallVector<Attribute> resultNames, resultIds;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      SmallVector<Attribute> dims;
      SmallVector<int64_t> ids;
      if (type) {
        SmallVector<int64_t> s = symbols.lookup(v);
        for (int64_t d = 0; d < type.getRank(); ++d) {
          int64_t k = d < int64_t(s.size()) ? s[d] : kStatic;
          std::string name = k >= 0 ? kiln::onnx::dimIdString(func, k)
                             : k == kUnknown ? "?" : "";
          dims.push_back(b.getStringAttr(name));
          ids.push_back(k);
        }
      }
      ArrayAttr list = b.getArrayAttr(dims);
      func.setResultAttr(i, "kiln.dim_names", list);
      resultNames.push_back(list);
      resultIds.push_back(b.getDenseI64ArrayAttr(ids));
    }
    func->setAttr("kiln.result_dim_names", b.getArrayAttr(resultNames));
    func->setAttr("kiln.result_dim_symbols", b.getArrayAttr(resultIds));
  }
};

} // namespace
