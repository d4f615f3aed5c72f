//===- Check.cpp - kiln check --------------------------------------------===//
//
// Says, before anyone commits to a target, whether kiln can compile a model
// and if not, exactly what stands in the way. It works on models that do
// not compile:
//   1. the ModelProto alone gives the op types (with domain, opset and
//      count), the inputs and outputs as declared, and the parameters;
//   2. the model is imported and its shapes inferred; an error there is
//      reported against the node it names;
//   3. every op is then lowered on its own: a probe function holding the
//      op (its constant operands cloned along, the others as arguments)
//      goes through convert-onnx-to-linalg, and the first error is that
//      op's reason (op not implemented, attribute value, dtype, dynamic
//      shape). Ops with subgraphs are checked on a copy of the whole model.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/Driver.h"
#include "compiler/Importer/Importer.h"
#include "compiler/Pipeline/Pipeline.h"
#include "compiler/Target/Target.h"
#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "passes/Conversion/OnnxToLinalg/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln {
namespace {

/// One node kiln cannot compile, and why.
struct Problem {
  std::string node; ///< "node 'x' (#3)", or "" for the model as a whole.
  std::string reason;
};

/// The reason of a diagnostic without its op-name prefix
/// ("Pad (opset 18): not supported by the CPU backend: mode 'circular' ..."
/// -> "not supported by the CPU backend: mode 'circular' ...").
std::string reasonOf(StringRef message, StringRef opType) {
  StringRef rest = message;
  if (rest.consume_front(opType)) {
    if (rest.starts_with(" (opset")) {
      size_t close = rest.find(')');
      if (close != StringRef::npos)
        rest = rest.drop_front(close + 1);
    }
    if (rest.consume_front(":"))
      return rest.ltrim().str();
    if (rest.starts_with("-")) // Importer messages: "Conv-11: ...".
      if (size_t colon = rest.find(": "); colon != StringRef::npos)
        return rest.drop_front(colon + 2).str();
  }
  return message.str();
}

/// The first error diagnostic emitted while `fn` runs.
struct FirstError {
  std::string message;
  Location loc;
  bool seen = false;
};

template <typename Fn>
LogicalResult captureFirstError(MLIRContext &context, FirstError &first, Fn fn) {
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && !first.seen) {
      first.seen = true;
      first.message = diag.str();
      first.loc = diag.getLocation();
    }
    return success();
  });
  return fn();
}

bool isChecked(Operation *op) {
  if (op->getDialect() == nullptr ||
      op->getDialect()->getNamespace() != onnx::OnnxDialect::getDialectNamespace())
    return false;
  return !isa<onnx::NoValueOp, onnx::YieldOp>(op) && !op->hasTrait<OpTrait::ConstantLike>();
}

/// The lowering's options for the target: refusals name its backend.
ConvertOnnxToLinalgPassOptions loweringFor(bool cuda) {
  ConvertOnnxToLinalgPassOptions options;
  options.backend = cuda ? "GPU" : "CPU";
  return options;
}

/// Lowers `op` alone; the first error's reason, or "" when it lowers and
/// the target can run what it lowered to.
std::string probe(Operation *op, ModuleOp parent, MLIRContext &context,
                  const TargetDescription &target, bool cuda) {
  Location loc = op->getLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  for (NamedAttribute a : parent->getAttrs())
    (*module)->setAttr(a.getName(), a.getValue());
  SmallVector<Value> external;
  SmallVector<Type> argTypes;
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    bool local = def && (isa<onnx::NoValueOp>(def) || def->hasTrait<OpTrait::ConstantLike>());
    if (!local && !llvm::is_contained(external, v)) {
      external.push_back(v);
      argTypes.push_back(v.getType());
    }
  }
  SmallVector<Type> resultTypes;
  for (Type t : op->getResultTypes())
    if (!isa<NoneType>(t))
      resultTypes.push_back(t);
  // With several dynamic dims, one more argument whose dims are the n
  // dims, so that the lowering finds each one's size (a Reshape splitting
  // seq*N into seq and N has neither among its operands' dims).
  auto main = parent.lookupSymbol<func::FuncOp>("main");
  auto names = main ? main->getAttrOfType<ArrayAttr>("kiln.symbol_names") : ArrayAttr();
  if (names)
    argTypes.push_back(RankedTensorType::get(
        SmallVector<int64_t>(names.size(), ShapedType::kDynamic), Float32Type::get(&context)));
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());
  auto fn = func::FuncOp::create(b, loc, "probe", b.getFunctionType(argTypes, resultTypes));
  // With several dynamic dims, which one each `?` of an operand is
  // (kiln-dim-symbols), so that the lowering sizes the op's tensors.
  if (names) {
    fn->setAttr("kiln.symbol_names", names);
    for (StringRef kind : {"kiln.dim_exprs", "kiln.dim_floors", "kiln.dim_products"})
      if (auto list = main->getAttrOfType<ArrayAttr>(kind))
        fn->setAttr(kind, list);
    for (auto [i, v] : llvm::enumerate(external))
      if (SmallVector<int64_t> symbols = onnx::recordedDimSymbols(v); !symbols.empty())
        fn.setArgAttr(i, "kiln.dim_symbols", DenseI64ArrayAttr::get(&context, symbols));
    fn.setArgAttr(external.size(), "kiln.dim_symbols",
                  DenseI64ArrayAttr::get(&context, llvm::to_vector(llvm::seq<int64_t>(
                                                       0, int64_t(names.size())))));
  }
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping map;
  for (auto [v, arg] : llvm::zip(external, entry->getArguments()))
    map.map(v, arg);
  for (Value v : op->getOperands())
    if (!map.contains(v))
      map.map(v, b.clone(*v.getDefiningOp())->getResult(cast<OpResult>(v).getResultNumber()));
  Operation *copy = b.clone(*op, map);
  SmallVector<Value> results;
  for (Value r : copy->getResults())
    if (!isa<NoneType>(r.getType()))
      results.push_back(r);
  func::ReturnOp::create(b, loc, results);

  PassManager pm(&context);
  // float16/bfloat16 ops compute in f32 between Casts, as when compiling.
  pm.addPass(createWidenHalfPass());
  pm.addPass(createConvertOnnxToLinalgPass(loweringFor(cuda)));
  FirstError first{"", loc};
  if (succeeded(captureFirstError(context, first,
                                  [&] { return lowerForTarget(pm, *module, target); })))
    return "";
  return first.seen ? first.message
                    : "not supported by the " + loweringFor(cuda).backend + " backend";
}

std::string join(const std::vector<std::string> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i];
  return s + "]";
}

std::string humanBytes(int64_t bytes) {
  char buf[64];
  if (bytes >= (int64_t(1) << 20))
    snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  else
    snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  return buf;
}

} // namespace

int checkModel(const CheckRequest &request) {
  // --target=cuda: each op lowered as for the host (without its CPU
  // kernels), then the whole model through the GPU mapping.
  bool cuda = request.target == "cuda";
  std::string archError;
  std::string gpuArch = gpuArchFor(cuda, request.gpuArch, archError);
  if (!archError.empty()) {
    llvm::errs() << "kiln: error: " << archError << "\n";
    return 2;
  }
  TargetOptions targetOptions;
  targetOptions.triple = cuda ? "" : request.target;
  targetOptions.cpu = request.cpu;
  targetOptions.features = request.features;
  TargetDescription targetDesc;
  if (std::string error; failed(describeTarget(targetOptions, targetDesc, error))) {
    llvm::errs() << "kiln: error: " << error << "\n";
    return 2;
  }
  if (cuda)
    withoutCpuKernels(targetDesc);
  DialectRegistry registry;
  registerKilnDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);

  // 1. The model as written.
  ModelSummary summary;
  {
    ScopedDiagnosticHandler handler(&context, printDiagnostic);
    if (failed(summarizeOnnxModel(context, request.model, summary)))
      return 2;
  }
  ImportOptions options;
  for (const std::string &text : request.inputShapes) {
    InputShape shape;
    std::string error;
    if (!parseInputShape(text, shape, error)) {
      llvm::errs() << "kiln: error: --input-shape: " << error << "\n";
      return 2;
    }
    options.inputShapes.push_back(shape);
  }

  // Problems per row of summary.ops; `general` when no node is named.
  std::vector<std::vector<Problem>> problems(summary.ops.size());
  std::string general;
  auto rowOf = [&](Location loc, StringRef mlirName) -> std::optional<size_t> {
    LocInfo info;
    describeLoc(loc, info);
    if (info.isNode && info.context.empty() && info.index >= 0 &&
        size_t(info.index) < summary.nodeOps.size())
      return summary.nodeOps[info.index];
    for (size_t i = 0; i < summary.ops.size(); ++i)
      if (summary.ops[i].domain.empty() && summary.ops[i].opType == mlirName)
        return i;
    return std::nullopt;
  };
  auto record = [&](Location loc, StringRef mlirName, const std::string &message) {
    LocInfo info;
    describeLoc(loc, info);
    std::optional<size_t> row = rowOf(loc, mlirName);
    if (!row) {
      if (general.empty())
        general = message;
      return;
    }
    const OpSummary &o = summary.ops[*row];
    std::string qualified = o.domain.empty() ? o.opType : o.domain + "." + o.opType;
    problems[*row].push_back({describeNode(info), reasonOf(message, qualified)});
  };

  // Steps 2 to 4 with `options`; for cuda first with a dynamic batch kept
  // whole, as `kiln compile` does, then, if that fails, item by item; for
  // the CPU the other way round.
  OwningOpRef<ModuleOp> module;
  LogicalResult imported = failure();
  auto analyze = [&] {
    // 2. Import and shape inference.
    FirstError first{"", UnknownLoc::get(&context)};
    imported = captureFirstError(context, first, [&]() -> LogicalResult {
      module = importOnnxModel(context, request.model, options);
      if (!module)
        return failure();
      PassManager pm(&context);
      addPipelineUpTo(pm, Phase::Onnx);
      return pm.run(*module);
    });
    // A dynamic batch that cannot run one item at a time: the op that mixes
    // items is the reason.
    if (succeeded(imported)) {
      FirstError batchError{"", UnknownLoc::get(&context)};
      PassManager pm(&context);
      addDynamicBatchCheck(pm);
      if (failed(captureFirstError(context, batchError, [&] { return pm.run(*module); }))) {
        Operation *at = nullptr;
        (*module)->walk([&](Operation *op) {
          if (!at && op->getLoc() == batchError.loc && isChecked(op))
            at = op;
        });
        if (at)
          record(at->getLoc(), at->getName().getStringRef().drop_front(5), batchError.message);
        else if (general.empty())
          general = batchError.message;
      }
    }
    if (failed(imported)) {
      // Name the op the message starts with, if any.
      std::string message = first.seen ? first.message : "the model does not import";
      bool named = false;
      for (size_t i = 0; i < summary.ops.size() && !named; ++i) {
        const OpSummary &o = summary.ops[i];
        std::string qualified = o.domain.empty() ? o.opType : o.domain + "." + o.opType;
        if (StringRef(message).starts_with(qualified + ":") ||
            StringRef(message).starts_with(qualified + "-")) {
          LocInfo info;
          describeLoc(first.loc, info);
          problems[i].push_back({describeNode(info), reasonOf(message, qualified)});
          named = true;
        }
      }
      LocInfo info;
      describeLoc(first.loc, info);
      // Otherwise the row of the node the message is located at (an op that
      // expands at import, such as Gradient, names what inside it failed).
      if (!named)
        if (std::optional<size_t> row = rowOf(first.loc, ""))
          problems[*row].push_back(
              {describeNode(info), reasonOf(message, summary.ops[*row].opType)});
      general = "the model does not import: " +
                (info.isNode ? describeNode(info) + ": " : std::string()) + message;
    } else {
      // 3. Every op on its own; ops with subgraphs within the whole model.
      SmallVector<Operation *> ops;
      (*module)->walk([&](Operation *op) {
        if (isChecked(op))
          ops.push_back(op);
      });
      std::optional<FirstError> wholeModel;
      for (Operation *op : ops) {
        StringRef name = op->getName().getStringRef().drop_front(5);
        if (op->getNumRegions() == 0) {
          std::string why = probe(op, *module, context, targetDesc, cuda);
          if (!why.empty())
            record(op->getLoc(), name, why);
          continue;
        }
        if (!wholeModel) {
          wholeModel = FirstError{"", UnknownLoc::get(&context)};
          OwningOpRef<ModuleOp> copy(cast<ModuleOp>((*module)->clone()));
          PassManager pm(&context);
          pm.addPass(createWidenHalfPass());
          pm.addPass(createConvertOnnxToLinalgPass(loweringFor(cuda)));
          (void)captureFirstError(context, *wholeModel,
                                  [&] { return lowerForTarget(pm, *copy, targetDesc); });
        }
        if (wholeModel->seen && wholeModel->loc == op->getLoc())
          record(op->getLoc(), name, wholeModel->message);
      }
      // 4. The GPU: the whole model lowered, planned and mapped to kernels;
      // every op the mapping refuses (a runtime call, a buffer the host
      // would need from a tensor) is named.
      bool lowered = llvm::all_of(problems, [](const auto &p) { return p.empty(); });
      if (cuda && lowered && general.empty()) {
        OwningOpRef<ModuleOp> copy(cast<ModuleOp>((*module)->clone()));
        PipelineOptions gpu;
        gpu.gpuArch = gpuArch;
        PassManager pm(&context);
        addPhasePasses(pm, Phase::Lower, gpu);
        addPhasePasses(pm, Phase::Bufferize, gpu);
        addPhasePasses(pm, Phase::LLVM, gpu);
        std::vector<FirstError> gpuErrors;
        LogicalResult mapped = [&] {
          ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
            if (diag.getSeverity() == DiagnosticSeverity::Error)
              gpuErrors.push_back({diag.str(), diag.getLocation(), true});
            return success();
          });
          return pm.run(*copy);
        }();
        llvm::DenseSet<std::pair<Operation *, StringRef>> named;
        for (const FirstError &e : failed(mapped) ? gpuErrors : std::vector<FirstError>()) {
          Operation *at = nullptr;
          (*module)->walk([&](Operation *op) {
            if (!at && isChecked(op) && op->getLoc() == e.loc)
              at = op;
          });
          if (!at) {
            if (general.empty())
              general = e.message;
          } else if (named.insert({at, StringRef(e.message)}).second) {
            record(at->getLoc(), at->getName().getStringRef().drop_front(5), e.message);
          }
        }
      }
    }
  };
  // No problem found: every op supported.
  auto clear = [&] {
    return general.empty() && llvm::all_of(problems, [](const auto &p) { return p.empty(); });
  };
  options.symbolicBatch = cuda;
  analyze();
  auto main = module ? (*module).lookupSymbol<func::FuncOp>("main") : func::FuncOp();
  auto batch = main ? main->getAttrOfType<StringAttr>("kiln.batch_dim") : StringAttr();
  // The first reason the model does not compile.
  auto firstReason = [&] {
    std::string why = general;
    for (size_t i = 0; i < problems.size() && why.empty(); ++i)
      if (!problems[i].empty())
        why = (problems[i][0].node.empty() ? "" : problems[i][0].node + ": ") +
              summary.ops[i].opType + ": " + problems[i][0].reason;
    return why;
  };
  std::vector<std::string> notes;
  // A dynamic batch run one item at a time (the CPU's first try; for cuda
  // the first try keeps it whole, `batch`).
  StringAttr itemBatch = succeeded(imported) && module ? itemBatchDim(*module) : StringAttr();
  if (itemBatch && !clear()) {
    // The CPU keeps the batch whole when the items cannot run one at a
    // time, as kiln compile does; if that fails too, the item-by-item
    // problems stand.
    std::string why = firstReason();
    auto itemProblems = problems;
    std::string itemGeneral = general;
    for (auto &p : problems)
      p.clear();
    general.clear();
    options.symbolicBatch = true;
    analyze();
    if (clear()) {
      notes.push_back("'" + itemBatch.str() + "' is a dynamic batch dim: one item at a time "
                      "the model does not compile (" + why + "), so kiln keeps the batch "
                      "whole");
    } else {
      std::string whole = firstReason();
      problems = std::move(itemProblems);
      general = itemGeneral;
      notes.push_back("'" + itemBatch.str() + "' is a dynamic batch dim: kiln compiles the "
                      "model for one item and runs the items one after another" +
                      (whole == why ? std::string()
                                    : "; with the batch kept whole it does not compile either (" +
                                          whole + ")"));
    }
  } else if (batch && clear()) {
    notes.push_back("'" + batch.str() + "' is a dynamic batch dim: every GPU kernel takes the "
                    "whole batch");
  } else if (batch) {
    // The first reason the whole batch fails, then the check item by item.
    std::string why = firstReason();
    for (auto &p : problems)
      p.clear();
    general.clear();
    options.symbolicBatch = false;
    analyze();
    notes.push_back("'" + batch.str() + "' is a dynamic batch dim: the whole batch does not "
                    "compile for the GPU (" + why + "), so kiln compiles the model for one "
                    "item and runs the items one after another");
  } else if (itemBatch) {
    notes.push_back("'" + itemBatch.str() + "' is a dynamic batch dim: kiln compiles the model "
                    "for one item and runs the items one after another");
  }
  // Ops the onnx phase folded away (shape computations) are supported;
  // after an import failure nothing else was checked.
  bool allSupported = clear();
  auto status = [&](size_t i) -> std::string {
    if (!problems[i].empty())
      return "unsupported";
    if (failed(imported))
      return "not checked";
    return "supported";
  };

  std::string target = cuda ? "cuda " + gpuArch
                       : request.target.empty() && request.cpu.empty()
                           ? "host CPU (" + targetDesc.label() + ")"
                           : targetDesc.label();
  // What the target does in software rather than hardware.
  if (!targetDesc.hasFloat32)
    notes.push_back("no hardware floating point on " + targetDesc.label() +
                    " (no FPU, or a soft-float ABI): float32 arithmetic calls the compiler "
                    "runtime's software floating point (libgcc or compiler-rt)");
  if (targetDesc.bareMetal)
    notes.push_back("bare metal: kiln writes an object or static library (no shared "
                    "library) that needs only memcpy/memmove/memset and the compiler "
                    "runtime");
  if (request.json) {
    llvm::json::Array inputs, outputs, ops;
    auto values = [](const std::vector<ValueSummary> &vs, llvm::json::Array &out) {
      for (const ValueSummary &v : vs) {
        llvm::json::Array dims;
        // Numbers as numbers; symbolic dims ("N", "?") as strings.
        for (const std::string &d : v.dims) {
          long long n;
          if (!StringRef(d).getAsInteger(10, n))
            dims.push_back(int64_t(n));
          else
            dims.push_back(d);
        }
        out.push_back(llvm::json::Object{{"name", v.name}, {"dtype", v.dtype},
                                         {"shape", std::move(dims)}});
      }
    };
    values(summary.inputs, inputs);
    values(summary.outputs, outputs);
    for (size_t i = 0; i < summary.ops.size(); ++i) {
      const OpSummary &o = summary.ops[i];
      llvm::json::Array reasons;
      for (const Problem &p : problems[i])
        reasons.push_back(llvm::json::Object{{"node", p.node}, {"reason", p.reason}});
      ops.push_back(llvm::json::Object{{"domain", o.domain.empty() ? "ai.onnx" : o.domain},
                                       {"op_type", o.opType},
                                       {"opset", o.opset},
                                       {"count", o.count},
                                       {"status", status(i)},
                                       {"problems", std::move(reasons)}});
    }
    llvm::json::Object root{
        {"model", request.model},
        {"producer", summary.producer},
        {"ir_version", summary.irVersion},
        {"target", target},
        {"inputs", std::move(inputs)},
        {"outputs", std::move(outputs)},
        {"parameters", llvm::json::Object{{"count", summary.parameters},
                                          {"bytes", summary.parameterBytes},
                                          {"initializers", summary.initializers}}},
        {"ops", std::move(ops)},
        {"notes", llvm::json::Array(notes)},
        {"supported", allSupported}};
    if (!general.empty())
      root["error"] = general;
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    return allSupported ? 0 : 1;
  }

  llvm::raw_ostream &os = llvm::outs();
  os << "model:      " << request.model;
  if (!summary.producer.empty())
    os << " (" << summary.producer << ", IR version " << summary.irVersion << ")";
  os << "\ntarget:     " << target << (cuda ? ", GPU backend\n" : ", CPU backend\n");
  for (const std::string &note : notes)
    os << "note:       " << note << "\n";
  for (const ValueSummary &v : summary.inputs)
    os << "input:      " << v.name << " " << v.dtype << " " << join(v.dims) << "\n";
  for (const ValueSummary &v : summary.outputs)
    os << "output:     " << v.name << " " << v.dtype << " " << join(v.dims) << "\n";
  os << "parameters: " << summary.parameters << " (" << humanBytes(summary.parameterBytes)
     << ") in " << summary.initializers
     << (summary.initializers == 1 ? " initializer\n\n" : " initializers\n\n");
  size_t width = 4;
  for (const OpSummary &o : summary.ops)
    width = std::max(width, (o.domain.empty() ? 0 : o.domain.size() + 1) + o.opType.size());
  os << llvm::left_justify("op", width) << "  opset  count  status\n";
  int unsupported = 0;
  for (size_t i = 0; i < summary.ops.size(); ++i) {
    const OpSummary &o = summary.ops[i];
    std::string name = o.domain.empty() ? o.opType : o.domain + "." + o.opType;
    os << llvm::left_justify(name, width) << "  " << llvm::right_justify(std::to_string(o.opset), 5)
       << "  " << llvm::right_justify(std::to_string(o.count), 5) << "  " << status(i) << "\n";
    unsupported += !problems[i].empty();
    // The first few nodes of each unsupported op type, with their reasons.
    for (size_t k = 0; k < problems[i].size() && k < 5; ++k)
      os << "    " << (problems[i][k].node.empty() ? "" : problems[i][k].node + ": ")
         << problems[i][k].reason << "\n";
    if (problems[i].size() > 5)
      os << "    (" << problems[i].size() - 5 << " more)\n";
  }
  os << "\n";
  if (!general.empty())
    os << general << "\n";
  size_t types = summary.ops.size();
  os << types << (types == 1 ? " op type: " : " op types: ");
  if (failed(imported))
    os << unsupported << " unsupported, the others not checked";
  else
    os << types - unsupported << " supported, " << unsupported << " unsupported";
  os << ": " << (allSupported ? "kiln can compile this model" : "kiln cannot compile this model yet")
     << "\n";
  return allSupported ? 0 : 1;
}

} // namespace kiln
