//===- DimSymbols.cpp - kiln-dim-symbols pass -----------------------------===//
//
// Names each `?` dim of @main's values after the model's symbolic input
// dim it is: the compiled code takes one value per symbolic dim, and every
// `?` it allocates or checks is one of them. A probe tells: @main is
// cloned twice with the dims at distinct sizes (211 + 16k and 307 + 22k
// for the k-th), each op's shape function runs once in order on the
// clone, and a `?` is dim k where the clone has that dim's size in both.
// A `?` that is neither (twice a dim, the sum of two: Concat along one, a
// Reshape merging one with another, an Expand to a computed size) stays
// unknown (-2), which the lowering and the interface report where it
// matters. Shape functions that fail at distinct sizes ([a] + [b]) mean
// the model needs them equal: an error on that op.
//
// Records (-1 for a static dim):
//   - `kiln.dim_symbols` on each op with a `?` result: per result, the
//     symbol index of each dim;
//   - @main's `kiln.symbol_names`: the symbols in order, and per result
//     `kiln.dim_names` (the name of each `?` dim, "" for a static one)
//     and the same list of lists as `kiln.result_dim_names` on @main (the
//     result attributes do not survive bufferization).
//
//===----------------------------------------------------------------------===//

#include "passes/Onnx/Passes.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::onnx {
#define GEN_PASS_DEF_ONNXDIMSYMBOLSPASS
#include "passes/Onnx/Passes.h.inc"
} // namespace kiln::onnx

using namespace mlir;

namespace {

constexpr int64_t kStatic = -1, kUnknown = -2;

/// The size the probe gives symbolic dim `k` in clone `probe` (0 or 1).
int64_t probeSize(int probe, int64_t k) { return probe == 0 ? 211 + 16 * k : 307 + 22 * k; }

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
    if (failed(probe(func, names, values, symbols)))
      return signalPassFailure();
    record(func, names, values, symbols);
  }

  /// Runs the shape functions on two clones with the symbolic dims at
  /// distinct sizes and reads each `?` off them.
  LogicalResult probe(func::FuncOp func, ArrayRef<StringAttr> names, ArrayRef<Value> values,
                      llvm::DenseMap<Value, SmallVector<int64_t>> &symbols) {
    MLIRContext *context = func.getContext();
    SmallVector<SmallVector<RankedTensorType>> typesIn(2);
    for (int k = 0; k < 2; ++k) {
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
            shape[d] = probeSize(k, argSymbols[d]);
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
          list += (i ? ", '" : "'") + name.str() + "' = " + std::to_string(probeSize(k, i));
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
        int64_t symbol = kUnknown;
        RankedTensorType a = typesIn[0][i], b = typesIn[1][i];
        if (a && b && a.getRank() == type.getRank() && b.getRank() == type.getRank())
          for (int64_t k = 0; k < int64_t(names.size()); ++k)
            if (a.getDimSize(d) == probeSize(0, k) && b.getDimSize(d) == probeSize(1, k))
              symbol = k;
        s.push_back(symbol);
      }
      symbols[v] = s;
    }
    return success();
  }

  /// Writes the symbols onto the ops and @main.
  void record(func::FuncOp func, ArrayRef<StringAttr> names, ArrayRef<Value> values,
              const llvm::DenseMap<Value, SmallVector<int64_t>> &symbols) {
    Builder b(func.getContext());
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
    // The results' dims by name: what the header says and the entry point
    // sizes outputs by.
    SmallVector<Attribute> resultNames;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      SmallVector<Attribute> dims;
      if (type) {
        SmallVector<int64_t> s = symbols.lookup(v);
        for (int64_t d = 0; d < type.getRank(); ++d) {
          int64_t k = d < int64_t(s.size()) ? s[d] : kStatic;
          dims.push_back(b.getStringAttr(k >= 0 ? names[k].getValue()
                                         : k == kUnknown ? StringRef("?") : StringRef()));
        }
      }
      ArrayAttr list = b.getArrayAttr(dims);
      func.setResultAttr(i, "kiln.dim_names", list);
      resultNames.push_back(list);
    }
    func->setAttr("kiln.result_dim_names", b.getArrayAttr(resultNames));
  }
};

} // namespace
