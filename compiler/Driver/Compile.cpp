//===- Compile.cpp - kiln compile --------------------------------------===//
//
// Imports the model, runs the phase pipeline up to --compile-to, and writes
// what --emit (or the output's extension) asks for: MLIR, LLVM IR,
// assembly, an object, a shared library or a static library, plus the C
// header for the last three.
//
// Errors are printed as `kiln: error: MODEL: node 'NAME' (#INDEX): OP: reason`.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/Driver.h"
#include "compiler/Importer/Importer.h"
#include "compiler/Pipeline/Pipeline.h"
#include "passes/Quantization/Passes.h"
#include "compiler/Target/Target.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

#include <sys/resource.h>

using namespace mlir;

namespace kiln {
namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "kiln: error: " << message << "\n";
  return 1;
}

std::optional<OutputKind> kindFromEmit(llvm::StringRef emit) {
  return llvm::StringSwitch<std::optional<OutputKind>>(emit)
      .Case("mlir", OutputKind::MLIR)
      .Case("llvm", OutputKind::LLVMIR)
      .Case("asm", OutputKind::Assembly)
      .Case("obj", OutputKind::Object)
      .Case("so", OutputKind::SharedLibrary)
      .Case("lib", OutputKind::StaticLibrary)
      .Case("onnx", OutputKind::ONNX)
      .Case("ptx", OutputKind::PTX)
      .Default(std::nullopt);
}

OutputKind kindFromPath(llvm::StringRef path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  return llvm::StringSwitch<OutputKind>(ext)
      .Case(".mlir", OutputKind::MLIR)
      .Case(".ll", OutputKind::LLVMIR)
      .Case(".s", OutputKind::Assembly)
      .Case(".o", OutputKind::Object)
      .Case(".a", OutputKind::StaticLibrary)
      .Case(".onnx", OutputKind::ONNX)
      .Case(".ptx", OutputKind::PTX)
      .Default(OutputKind::SharedLibrary);
}

/// The runtime archive installed or built beside the kiln binary.
std::string runtimeArchive() {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable("kiln", &anchor);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(path, "lib", "libkiln_runtime.a");
  return llvm::sys::fs::exists(path) ? path.str().str() : std::string();
}

/// Why a library that needs the runtime cannot be made: its archive is not
/// where runtimeArchive() looks (a kiln binary copied out of its tree).
std::string missingRuntime(bool cuda) {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable("kiln", &anchor);
  return "kiln's runtime library is missing: expected '" +
         llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)).str() +
         "/lib/libkiln_runtime.a', in the lib/ beside the bin/ of '" + exe + "' (" +
         (cuda ? "--target=cuda libraries launch their kernels through it" :
                 "the library's threads and entry checks come from it") +
         "); run kiln from its build or install tree";
}

bool makeParent(llvm::StringRef path, std::string &error) {
  llvm::StringRef parent = llvm::sys::path::parent_path(path);
  if (parent.empty() || path == "-")
    return true;
  if (std::error_code ec = llvm::sys::fs::create_directories(parent)) {
    error = "cannot create '" + parent.str() + "': " + ec.message();
    return false;
  }
  return true;
}

bool writeFile(llvm::StringRef path, llvm::StringRef bytes, std::string &error) {
  std::string err;
  if (!makeParent(path, error))
    return false;
  auto out = mlir::openOutputFile(path, &err);
  if (!out) {
    error = "cannot write '" + path.str() + "': " + err;
    return false;
  }
  out->os() << bytes;
  out->keep();
  return true;
}

/// What `kiln compile` says while it works: on a terminal one updating
/// line naming the phase, then the total time; with --timing each phase's
/// wall time and the peak memory; nothing with --quiet or off a terminal.
class Progress {
public:
  Progress(std::string model, bool show, bool timing)
      : model(std::move(model)), show(show), timing(timing), start(Clock::now()) {}

  void phase(llvm::StringRef name) {
    finishPhase();
    current = name.str();
    phaseStart = Clock::now();
    if (show) {
      llvm::errs() << "\r\033[Kkiln: " << model << ": " << name << "...";
      llvm::errs().flush();
      shown = true;
    }
  }
  /// Erases the progress line (before an error is printed).
  void clear() {
    if (shown)
      llvm::errs() << "\r\033[K";
    shown = false;
  }
  void done(llvm::StringRef output) {
    finishPhase();
    clear();
    double total = seconds(start);
    if (show)
      llvm::errs() << "kiln: compiled " << model << " to " << output << " in "
                   << llvm::format("%.2f", total) << " s\n";
    if (!timing)
      return;
    llvm::errs() << "kiln: timing of " << model << " (wall seconds)\n";
    for (auto &[name, s] : phases)
      llvm::errs() << "  " << llvm::left_justify(name, 12) << llvm::format("%8.3f", s) << "\n";
    llvm::errs() << "  " << llvm::left_justify("total", 12) << llvm::format("%8.3f", total) << "\n";
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) == 0)
      llvm::errs() << "  peak memory " << llvm::format("%8.1f", usage.ru_maxrss / 1024.0)
                   << " MiB\n";
  }

private:
  using Clock = std::chrono::steady_clock;
  static double seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  }
  void finishPhase() {
    if (!current.empty())
      phases.push_back({current, seconds(phaseStart)});
    current.clear();
  }

  std::string model;
  bool show, timing, shown = false;
  Clock::time_point start, phaseStart;
  std::string current;
  std::vector<std::pair<std::string, double>> phases;
};

} // namespace

int compileModel(const CompileRequest &request) {
  // What to write.
  std::optional<OutputKind> kind;
  if (!request.emit.empty()) {
    kind = kindFromEmit(request.emit);
    if (!kind)
      return fail("unknown --emit=" + request.emit +
                  " (choose mlir, llvm, asm, obj, so, lib, onnx or ptx)");
  } else if (request.output == "-") {
    kind = OutputKind::MLIR; // Text to stdout.
  } else if (request.output.empty()) {
    kind = request.compileTo.empty() ? OutputKind::SharedLibrary : OutputKind::MLIR;
  } else {
    kind = kindFromPath(request.output);
  }
  if (!request.compileTo.empty() && *kind != OutputKind::MLIR)
    return fail("--compile-to writes MLIR; use -o FILE.mlir or --emit=mlir");
  if (*kind == OutputKind::ONNX && request.quantize != "int8")
    return fail("--emit=onnx writes the model as kiln quantises it (QDQ): use it with "
                "--quantize=int8 --calibration-data=DIR");
  Phase last = *kind == OutputKind::ONNX ? Phase::Onnx : Phase::LLVM;
  if (!request.compileTo.empty()) {
    std::optional<Phase> p = parsePhase(request.compileTo);
    if (!p)
      return fail("unknown --compile-to phase '" + request.compileTo +
                  "' (phases: " + phaseNames() + ")");
    last = *p;
  }
  if (request.optLevel < 0 || request.optLevel > 3)
    return fail("-O takes 0, 1, 2 or 3");
  // --target=cuda: the host's code as today, the tensor work as kernels.
  bool cuda = request.target == "cuda";
  std::string archError;
  std::string gpuArch = gpuArchFor(cuda, request.gpuArch, archError);
  if (!archError.empty())
    return fail(archError);
  if (*kind == OutputKind::PTX && !cuda)
    return fail("--emit=ptx writes GPU code: use it with --target=cuda");
  if (!request.gpuPrecision.empty() && !cuda)
    return fail("--gpu-precision goes with --target=cuda");
  if (!request.gpuPrecision.empty() && request.gpuPrecision != "fp32" &&
      request.gpuPrecision != "tf32")
    return fail("--gpu-precision=" + request.gpuPrecision + ": expected fp32 or tf32");
  if (cuda && *kind != OutputKind::PTX && *kind != OutputKind::MLIR &&
      *kind != OutputKind::SharedLibrary && *kind != OutputKind::StaticLibrary)
    return fail("--target=cuda writes a shared or static library (-o libNAME.so, -o "
                "libNAME.a), the device code alone (--emit=ptx) or MLIR");
  if (cuda && !request.quantize.empty())
    return fail("--quantize is not supported with --target=cuda yet");

  ImportOptions options;
  options.onnxShapeInference = request.onnxShapeInference;
  options.eraseInferredShapes = request.eraseInferredShapes;
  for (const std::string &text : request.inputShapes) {
    InputShape shape;
    std::string error;
    if (!parseInputShape(text, shape, error))
      return fail("--input-shape: " + error);
    options.inputShapes.push_back(std::move(shape));
  }

  ModelInfo info;
  info.name = request.name.empty()
                  ? makeIdentifier(llvm::sys::path::stem(request.input))
                  : request.name;
  if (makeIdentifier(info.name) != info.name)
    return fail("--name '" + info.name + "' is not a C identifier");
  if (llvm::StringRef(info.name).starts_with("kiln_"))
    return fail("--name '" + info.name +
                "' starts with 'kiln_', which the runtime's symbols use");
  std::string output = request.output;
  if (output.empty() && *kind == OutputKind::ONNX)
    output = info.name + ".qdq.onnx";
  if (output.empty() && *kind == OutputKind::PTX)
    output = info.name + ".ptx";
  if (output.empty())
    output = *kind == OutputKind::SharedLibrary ? "lib" + info.name + ".so"
             : *kind == OutputKind::StaticLibrary ? "lib" + info.name + ".a"
             : *kind == OutputKind::Object        ? info.name + ".o"
                                                  : "-";
  bool binary = *kind == OutputKind::Object || *kind == OutputKind::SharedLibrary ||
                *kind == OutputKind::StaticLibrary || *kind == OutputKind::ONNX;
  if (binary && output == "-")
    return fail("a binary output needs a file name (-o FILE)");

  TargetOptions target;
  target.triple = cuda ? "" : request.target; // The host runs the launches.
  target.cpu = request.cpu;
  target.features = request.features;
  target.optLevel = request.optLevel;
  target.freestanding = request.freestanding;
  TargetDescription targetDesc;
  {
    std::string error;
    if (failed(describeTarget(target, targetDesc, error)))
      return fail(error);
  }
  if (targetDesc.bareMetal && *kind == OutputKind::SharedLibrary)
    return fail("target '" + targetDesc.triple +
                "' has no operating system, so no shared libraries: write an "
                "object (-o " + info.name + ".o) or a static library (-o lib" +
                info.name + ".a)");
  if (!targetDesc.elf && *kind == OutputKind::SharedLibrary)
    return fail("kiln links shared libraries for ELF targets only; for '" + targetDesc.triple +
                "' write an object (-o " + info.name + ".o)");
  if (cuda)
    withoutCpuKernels(targetDesc);
  info.targetLabel = cuda ? "cuda " + gpuArch : targetDesc.label();
  PipelineOptions pipelineOptions;
  pipelineOptions.indexBitwidth = targetDesc.pointerBits;
  pipelineOptions.expandFloatMinMax = targetDesc.expandFloatMinMax;
  pipelineOptions.vectorBits = targetDesc.vectorBits;
  pipelineOptions.vectorRegisters = targetDesc.vectorRegisters;
  pipelineOptions.prefetchDistance = targetDesc.prefetchDistance;
  pipelineOptions.int8DotProduct = targetDesc.int8DotProduct;
  pipelineOptions.nativeRounding = targetDesc.nativeRounding;
  if (cuda) {
    pipelineOptions.gpuArch = gpuArch;
    pipelineOptions.gpuTf32 = request.gpuPrecision == "tf32";
  }
  StringRef batchMode = request.dynamicBatch.empty() ? "auto" : StringRef(request.dynamicBatch);
  if (batchMode != "auto" && batchMode != "items" && batchMode != "whole")
    return fail("--dynamic-batch=" + request.dynamicBatch + ": expected auto, items or whole");
  if (!request.quantize.empty() && request.quantize != "dynamic" && request.quantize != "int8")
    return fail("--quantize=" + request.quantize + ": expected 'dynamic' or 'int8'");
  if (request.quantize == "int8" && request.calibrationData.empty())
    return fail("--quantize=int8 needs --calibration-data=DIR: input samples to measure the "
                "activations' ranges on");
  if (request.quantize != "int8" &&
      (!request.calibrationData.empty() || !request.calibrationMethod.empty()))
    return fail("--calibration-data and --calibration-method go with --quantize=int8");
  if (!request.calibrationMethod.empty() && request.calibrationMethod != "minmax" &&
      request.calibrationMethod != "percentile" && request.calibrationMethod != "entropy")
    return fail("--calibration-method=" + request.calibrationMethod +
                ": expected minmax, percentile or entropy");
  pipelineOptions.quantize = request.quantize;
  pipelineOptions.exposeActivations = request.exposeActivations;
  std::vector<double> ranges;
  if (request.quantize == "int8" && request.compileTo != "import") {
    if (calibrateModel(request, ranges) != 0)
      return 1;
    pipelineOptions.activationRanges = ranges;
  }
  // The QDQ export: the onnx phase without the quantisation, whose plan
  // is then written into the ONNX file.
  if (*kind == OutputKind::ONNX)
    pipelineOptions.quantize.clear();
  // Threads come from the runtime, which shared and static libraries for
  // the host carry; objects stay single-threaded and need no runtime.
  pipelineOptions.parallelLoops =
      (*kind == OutputKind::SharedLibrary || *kind == OutputKind::StaticLibrary) &&
      !targetDesc.bareMetal && targetDesc.pointerBits == 64 && isHostTriple(request.target) &&
      !cuda;

  bool terminal = llvm::sys::Process::StandardErrIsDisplayed();
  Progress progress(request.input, terminal && !request.quiet,
                    request.timing && !request.quiet);
  // --target=cuda first keeps a dynamic batch symbolic (each kernel takes
  // the whole batch); if the model does not compile so (the lowering
  // refuses a dim that is a product of dims, [N * seq, 256]), again with
  // the batch run item by item. The CPU takes the other order: item by
  // item first (static code, a workspace that does not grow), then, if
  // that is refused (items that mix: a reduction over the batch, an RNN
  // over a leading length), the batch kept whole. But where most of the
  // work is matmuls by constant weights taking fewer than 16 rows per
  // item (an MLP: one row), item by item reads each weight once per
  // item, and a hosted CPU keeps the batch whole first (a 512 -> 1024
  // layer at 32 rows: 0.30x the time); the items' try stops after the
  // onnx phase, which tells. --dynamic-batch=items|whole picks the first
  // try. Meanwhile a try's errors are kept, not printed: the first one
  // says why, in a note after the second try; the warnings of the try
  // that succeeds are printed, and when both fail, the first try's errors.
  bool wholeFirst = batchMode == "whole" || (batchMode == "auto" && cuda);
  bool weighWhole = batchMode == "auto" && !cuda && !targetDesc.bareMetal;
  constexpr int64_t kFewRows = 16;
  double fewRowsShare = 0;
  bool collecting = false, secondTry = false;
  std::string firstError, deferred;
  auto failNow = [&](const llvm::Twine &message) {
    if (collecting) {
      if (firstError.empty())
        firstError = message.str();
      deferred += ("kiln: error: " + message + "\n").str();
      return 1;
    }
    progress.clear();
    return fail(message);
  };

  DialectRegistry registry;
  registerKilnDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  // Errors are one line each; the op is already named by its node.
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (collecting) {
      if (firstError.empty() && diag.getSeverity() == DiagnosticSeverity::Error) {
        LocInfo where;
        describeLoc(diag.getLocation(), where);
        firstError = (where.isNode ? describeNode(where) + ": " : std::string()) + diag.str();
      }
      llvm::raw_string_ostream os(deferred);
      return writeDiagnostic(diag, os);
    }
    progress.clear();
    return printDiagnostic(diag);
  });
  OwningOpRef<ModuleOp> module;
  // Imports the model and runs the phases up to `last`: 0, or the exit
  // status after an error.
  auto build = [&]() -> int {
    progress.phase("import");
    module = importOnnxModel(context, request.input, options);
    if (!module)
      return 1;
    Operation *main = module->lookupSymbol("main");
    collecting = main && (options.symbolicBatch ? main->hasAttr("kiln.batch_dim")
                                                : !wholeFirst && !secondTry && itemBatchDim(*module));
    for (Phase p : {Phase::Onnx, Phase::Lower, Phase::Bufferize, Phase::LLVM}) {
      if (p > last)
        break;
      // Items whose matmuls take a row or a few: the whole batch first.
      if (p == Phase::Lower && weighWhole && !options.symbolicBatch && !secondTry &&
          itemBatchDim(*module)) {
        fewRowsShare = fewRowsPerItemShare(*module, kFewRows);
        if (fewRowsShare > 0.5)
          return 1;
      }
      if (p == Phase::Lower) {
        // The interface as the onnx phase left it, with the dynamic batch
        // dim's outputs marked (the lower phase checks them again).
        PassManager batch(&context);
        addDynamicBatchCheck(batch);
        if (failed(batch.run(*module)) || failed(readModelInfo(*module, info)))
          return 1;
        for (const std::string &text : request.maxShapes) {
          auto [name, value] = StringRef(text).split('=');
          int64_t max = 0;
          if (value.getAsInteger(10, max) || max < 1 || max > (int64_t(1) << 31) - 1)
            return failNow("--max-shape " + text + ": expected DIM=VALUE with a value from 1 to "
                           "2^31 - 1");
          if (name == info.dynamicDim)
            return failNow("--max-shape " + text + ": '" + name.str() +
                           "' is the dynamic batch dim, run one item at a time: its workspace "
                           "does not grow");
          StringRef dimName = name;
          auto it = llvm::find_if(info.symbolicDims, [&](const ModelInfo::SymbolicDim &d) {
            return d.name == dimName;
          });
          if (it == info.symbolicDims.end()) {
            std::string known;
            for (const ModelInfo::SymbolicDim &d : info.symbolicDims)
              known += (known.empty() ? "'" : ", '") + d.name + "'";
            return failNow("--max-shape " + text + ": the model has no dynamic dim '" +
                           name.str() + "'" +
                           (known.empty() ? std::string()
                                          : " (its dynamic dim" +
                                                std::string(info.symbolicDims.size() > 1 ? "s: "
                                                                                         : ": ") +
                                                known + ")"));
          }
          it->max = max;
        }
        // The plan is static when every symbolic dim has its largest value.
        if (!request.maxShapes.empty()) {
          pipelineOptions.symbolicMax.clear();
          for (const ModelInfo::SymbolicDim &d : info.symbolicDims) {
            if (!d.max)
              return failNow("--max-shape: the dynamic dim '" + d.name +
                             "' has no largest value; give one for every dynamic dim (a static "
                             "workspace is planned for all of them)");
            pipelineOptions.symbolicMax.push_back(d.max);
          }
        }
      }
      progress.phase(p == Phase::Onnx        ? "onnx"
                     : p == Phase::Lower     ? "linalg"
                     : p == Phase::Bufferize ? "bufferize"
                                             : "llvm");
      PassManager pm(&context);
      addPhasePasses(pm, p, pipelineOptions);
      if (failed(p == Phase::Lower ? lowerForTarget(pm, *module, targetDesc) : pm.run(*module)))
        return 1;
    }
    return 0;
  };
  options.symbolicBatch = wholeFirst;
  ModelInfo start = info;
  // Compiles again from the imported model, the batch kept whole or not.
  auto rebuild = [&](bool symbolicBatch) {
    options.symbolicBatch = symbolicBatch;
    info = start;
    deferred.clear();
    firstError.clear();
    return build();
  };
  int status = build();
  if (status && fewRowsShare > 0.5) {
    wholeFirst = true;
    status = rebuild(true);
    if (!status && !request.quiet) {
      progress.clear();
      llvm::errs() << "kiln: note: " << request.input << ": the dynamic batch is kept whole, not "
                   << "run one item at a time: " << llvm::format("%.0f", fewRowsShare * 100)
                   << "% of the work is matmuls by constant weights taking fewer than "
                   << kFewRows << " rows per item (--dynamic-batch=items runs items)\n";
    }
  }
  if (status) {
    if (!collecting)
      return status;
    std::string why = firstError, firstErrors = deferred;
    collecting = false;
    secondTry = true;
    if (int again = rebuild(!wholeFirst)) {
      if (wholeFirst)
        return again;
      // Neither way: the item-by-item errors, and why the whole batch
      // fails too when that is another reason.
      progress.clear();
      llvm::errs() << firstErrors;
      if (!firstError.empty() && firstError != why)
        llvm::errs() << "kiln: note: " << request.input << ": with the dynamic batch kept "
                     << "whole, the model does not compile either (" << firstError << ")\n";
      return again;
    }
    if (!request.quiet) {
      progress.clear();
      llvm::errs() << "kiln: note: " << request.input << ": the dynamic batch "
                   << (wholeFirst ? "runs one item at a time (" : "is kept whole, not run one item "
                                                                 "at a time (")
                   << why << ")\n";
    }
  }
  collecting = false;
  if (!deferred.empty()) {
    progress.clear();
    llvm::errs() << deferred;
  }

  std::string error;
  if (*kind == OutputKind::ONNX) {
    // The QDQ file would put float32 scales on float16 tensors (ONNX
    // wants them of the tensor's type), so half models are refused.
    Operation *half = nullptr;
    module->walk([&](Operation *op) {
      StringRef name = op->getName().getStringRef();
      if (name != "onnx.MatMul" && name != "onnx.Gemm" && name != "onnx.Conv")
        return WalkResult::advance();
      for (Type t : op->getOperandTypes())
        if (auto shaped = dyn_cast<ShapedType>(t);
            shaped && (shaped.getElementType().isF16() || shaped.getElementType().isBF16())) {
          half = op;
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (half) {
      LocInfo where;
      describeLoc(half->getLoc(), where);
      return failNow(request.input + ": --emit=onnx: " + describeNode(where) + ", a " +
                     half->getName().stripDialect().str() +
                     ", computes in float16/bfloat16, and the QDQ export takes float32 "
                     "models; compile this model to a library with --quantize=int8 "
                     "instead, or export the float32 model");
    }
    FailureOr<quantization::StaticPlan> plan =
        quantization::planStaticQuantization(*module, ranges);
    if (failed(plan))
      return 1;
    // Each quantised op must be a node of the main graph, its operands
    // that node's inputs.
    auto nodeOf = [&](Operation *op, int &index) {
      LocInfo where;
      describeLoc(op->getLoc(), where);
      index = where.index;
      if (where.index >= 0 && where.context.empty())
        return true;
      failNow(request.input + ": --emit=onnx: a " + op->getName().getStringRef().str() +
              " that kiln quantises is not a node of the main graph");
      return false;
    };
    std::vector<QdqInput> inputs;
    for (const quantization::ActivationQuantization &a : plan->activations)
      for (OpOperand *reader : a.readers) {
        QdqInput in;
        if (!nodeOf(reader->getOwner(), in.nodeIndex))
          return 1;
        in.input = int(reader->getOperandNumber());
        in.opType = reader->getOwner()->getName().stripDialect().str();
        in.scale = a.scale;
        in.zeroPoint = a.zeroPoint;
        inputs.push_back(in);
      }
    std::vector<QdqNode> nodes;
    for (const quantization::StaticQuantization &p : plan->weighted) {
      QdqNode n;
      if (!nodeOf(p.op, n.nodeIndex))
        return 1;
      n.weights = p.weights;
      n.weightShape = p.weightShape;
      n.weightScales = p.weightScales;
      n.weightAxis = p.weightAxis;
      nodes.push_back(std::move(n));
    }
    progress.phase("export");
    if (!makeParent(output, error) || !writeQdqModel(request.input, output, nodes, inputs, error))
      return failNow(error);
    progress.done(output);
    return 0;
  }
  if (*kind == OutputKind::MLIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    os << "\n";
    if (!writeFile(output, text, error))
      return failNow(error);
    progress.done(output == "-" ? "stdout" : output);
    return 0;
  }
  if (cuda) {
    // The kernels alone, lowered to LLVM/NVVM, then the NVPTX back end.
    progress.phase("ptx");
    OwningOpRef<ModuleOp> device = ModuleOp::create(module->getLoc());
    (*device)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(&context));
    OpBuilder b(device->getBodyRegion());
    for (auto kernels : module->getOps<gpu::GPUModuleOp>())
      b.clone(*kernels.getOperation());
    PassManager pm(&context);
    addGpuDevicePasses(pm);
    if (failed(pm.run(*device)))
      return 1;
    std::string ptx;
    if (failed(emitPtx(*device, gpuArch, request.optLevel, ptx, error)))
      return failNow(request.input + ": " + error);
    if (*kind == OutputKind::PTX) {
      if (!writeFile(output, ptx, error))
        return failNow(error);
      progress.done(output == "-" ? "stdout" : output);
      return 0;
    }
    // The host: launches through the runtime's CUDA loader.
    progress.phase("host");
    PassManager host(&context);
    addGpuHostPasses(host, pipelineOptions);
    if (failed(host.run(*module)))
      return 1;
    // A cubin too when the toolkit is here (the driver loads it without
    // compiling the PTX).
    if (std::string ptxas = findPtxas(); !ptxas.empty()) {
      progress.phase("ptxas");
      if (failed(assemblePtx(ptxas, ptx, gpuArch, info.gpuCubin, error)))
        return failNow(request.input + ": " + error);
    }
    info.gpuPtx = std::move(ptx);
    if (auto names = (*module)->getAttrOfType<ArrayAttr>("kiln.gpu_kernels"))
      for (auto name : names.getAsValueRange<StringAttr>())
        info.gpuKernels.push_back(name.str());
  }
  readWorkspace(*module, info);
  // Sizes must fit the target's pointers (index arithmetic is that wide).
  if (targetDesc.pointerBits < 64) {
    int64_t limit = int64_t(1) << (targetDesc.pointerBits - 1);
    int64_t largest = info.workspaceSize;
    for (const TensorInfo &t : info.inputs)
      largest = std::max(largest, t.numBytes());
    for (const TensorInfo &t : info.outputs)
      largest = std::max(largest, t.numBytes());
    if (largest >= limit)
      return failNow(request.input + ": a tensor or the workspace needs " +
                     std::to_string(largest) + " bytes, more than a " +
                     std::to_string(targetDesc.pointerBits) + "-bit target '" +
                     targetDesc.triple + "' can address");
  }
  OutputKind codeKind = *kind == OutputKind::LLVMIR || *kind == OutputKind::Assembly
                            ? *kind
                            : OutputKind::Object;
  Bytes code;
  progress.phase("codegen");
  if (failed(emitCode(*module, info, target, codeKind, code, info.stats, error)))
    return failNow(request.input + ": " + error);
  llvm::StringRef bytes(code.data(), code.size());
  switch (*kind) {
  case OutputKind::LLVMIR:
  case OutputKind::Assembly:
  case OutputKind::Object:
    if (!writeFile(output, bytes, error))
      return failNow(error);
    break;
  case OutputKind::SharedLibrary: {
    progress.phase("link");
    bool needsRuntime = pipelineOptions.parallelLoops || cuda;
    std::string runtime = needsRuntime ? runtimeArchive() : "";
    if (needsRuntime && runtime.empty())
      return failNow(missingRuntime(cuda));
    if (!makeParent(output, error) || failed(linkSharedLibrary(bytes, runtime, output, error)))
      return failNow(error);
    break;
  }
  case OutputKind::StaticLibrary: {
    progress.phase("archive");
    bool needsRuntime = isHostTriple(request.target) || cuda;
    std::string runtime = needsRuntime ? runtimeArchive() : "";
    if (needsRuntime && runtime.empty())
      return failNow(missingRuntime(cuda));
    if (!makeParent(output, error) || failed(writeStaticLibrary(bytes, info.name + ".o", runtime, output, error)))
      return failNow(error);
    break;
  }
  case OutputKind::MLIR:
  case OutputKind::ONNX: // Written above.
  case OutputKind::PTX:
    break;
  }
  if (binary) {
    std::string header = request.header;
    if (header.empty()) {
      llvm::SmallString<256> path(llvm::sys::path::parent_path(output));
      llvm::sys::path::append(path, info.name + ".h");
      header = path.str().str();
    }
    if (!writeFile(header, generateHeader(info), error))
      return failNow(error);
  }
  progress.done(output);
  return 0;
}

} // namespace kiln
