//===- kiln.cpp - The kiln command-line driver -----------------------------===//
//
//   kiln compile MODEL.onnx -o libmodel.so|model.o|libmodel.a|x.ll|x.s|x.mlir
//   kiln run MODEL(.so|.onnx) [--input [NAME=]FILE]... [--expect FILE]...
//   kiln bench MODEL(.so|.onnx)... [--input ...] [--iterations N] [--json]
//   kiln check MODEL.onnx [--target T] [--input-shape ...] [--json]
//
// The options are parsed here; the work is in Compile.cpp, Run.cpp and
// Check.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace cl = llvm::cl;

namespace {

cl::OptionCategory kilnCategory("kiln options");
cl::SubCommand compileCmd("compile", "Compile an ONNX model");
cl::SubCommand runCmd("run", "Run a compiled model and compare its outputs");
cl::SubCommand benchCmd("bench", "Measure a compiled model's latency");
cl::SubCommand checkCmd("check", "Say whether kiln can compile a model, and if not, why");


// kiln compile
cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::sub(compileCmd), cl::cat(kilnCategory), cl::Required);
cl::opt<std::string> outputPath(
    "o", cl::desc("Output file; its extension picks the kind: .so (default), "
                  ".o, .a, .ll, .s, .mlir ('-' for stdout)"),
    cl::value_desc("file"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> emitKind(
    "emit", cl::desc("Override the output kind: so, obj, lib, llvm, asm, mlir, onnx, ptx"),
    cl::value_desc("kind"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> compileTo(
    "compile-to",
    cl::desc("Stop after a phase and write its MLIR: import, onnx, linalg, "
             "bufferize, llvm"),
    cl::value_desc("phase"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Pin a graph input's shape, e.g. input=1x3x224x224 "
             "('?' keeps a dim dynamic); repeatable"),
    cl::value_desc("NAME=DIMS"), cl::sub(compileCmd), cl::sub(runCmd), cl::sub(benchCmd),
    cl::sub(checkCmd), cl::cat(kilnCategory));
cl::list<std::string> maxShapes(
    "max-shape",
    cl::desc("The largest value of a dynamic dim, e.g. seq=512: the workspace gets a "
             "static size (firmware) and larger values are refused at run time; "
             "repeatable"),
    cl::value_desc("DIM=VALUE"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> dynamicBatchMode(
    "dynamic-batch",
    cl::desc("How a dynamic batch runs: 'items' one item at a time (static code, a fixed "
             "workspace), 'whole' kept whole (matmuls take every item's rows at once), 'auto' "
             "(default) whole where most of the work is matmuls taking a row or a few per "
             "item (and on GPUs), else items; the other way is tried if the first fails"),
    cl::value_desc("mode"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> quantizeMode(
    "quantize",
    cl::desc("Quantise a float model: 'dynamic' = MatMul/Gemm weights to int8 (per output "
             "column), their activations quantised at run time; 'int8' = Conv/MatMul/Gemm "
             "weights to int8 (per output channel) and their activations to uint8 with "
             "ranges calibrated on --calibration-data"),
    cl::value_desc("mode"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> calibrationData(
    "calibration-data",
    cl::desc("With --quantize=int8: a folder of input samples, one .npy or .pb file per "
             "sample (one folder of them per sample for models with several inputs)"),
    cl::value_desc("dir"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> calibrationMethod(
    "calibration-method",
    cl::desc("How --quantize=int8 takes each activation's range from the samples: minmax "
             "(the default)"),
    cl::value_desc("method"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> targetTriple(
    "target", cl::desc("Target triple (default: the host), or 'cuda' for NVIDIA GPUs"),
    cl::value_desc("triple"), cl::sub(compileCmd), cl::sub(checkCmd), cl::cat(kilnCategory));
cl::opt<std::string> gpuArch(
    "gpu-arch", cl::desc("With --target=cuda: the GPU architecture, sm_80 (default), sm_86, "
                         "sm_89 or sm_90"),
    cl::value_desc("arch"), cl::sub(compileCmd), cl::sub(checkCmd), cl::cat(kilnCategory));
cl::opt<std::string> gpuPrecision(
    "gpu-precision",
    cl::desc("With --target=cuda: the matmuls' and convolutions' inputs as fp32 (the "
             "default; CUDA cores) or tf32 (tensor cores: a 10-bit mantissa, f32 sums)"),
    cl::value_desc("fp32|tf32"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<bool> timing("timing", cl::desc("Print each phase's wall time and the compiler's peak "
                                         "memory"),
                     cl::init(false), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<bool> quiet("quiet", cl::desc("Print errors only (no progress line)"), cl::init(false),
                    cl::sub(compileCmd), cl::cat(kilnCategory));
cl::alias quietShort("q", cl::desc("Alias for --quiet"), cl::aliasopt(quiet),
                     cl::cat(kilnCategory));
cl::opt<std::string> targetCpu(
    "mcpu", cl::desc("Target CPU (default: the host CPU for host builds, "
                     "'generic' otherwise; 'native' = the host's)"),
    cl::value_desc("cpu"), cl::sub(compileCmd), cl::sub(checkCmd), cl::cat(kilnCategory));
cl::opt<std::string> targetFeatures(
    "mattr", cl::desc("Target features, e.g. +avx2,-avx512f"),
    cl::value_desc("features"), cl::sub(compileCmd), cl::sub(checkCmd), cl::cat(kilnCategory));
cl::opt<bool> freestanding(
    "freestanding",
    cl::desc("The object defines memcpy, memmove and memset itself (weak, hidden), "
             "for firmware linked without a C library"),
    cl::init(false), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<unsigned> optLevel("O", cl::desc("Optimisation level 0-3 (default 3)"),
                           cl::Prefix, cl::init(3), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> modelName(
    "name", cl::desc("Prefix of every exported symbol (default: the model's "
                     "file name as a C identifier)"),
    cl::value_desc("prefix"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> headerPath(
    "header", cl::desc("Where to write the C header (default: NAME.h beside "
                       "the output)"),
    cl::value_desc("path"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<bool> noOnnxInference(
    "no-onnx-shape-inference",
    cl::desc("Skip ONNX's reference shape inference before importing"),
    cl::init(false), cl::sub(compileCmd), cl::cat(kilnCategory), cl::Hidden);
cl::opt<bool> eraseInferredShapes(
    "erase-onnx-shapes",
    cl::desc("Testing: forget the shapes ONNX inferred for node outputs so "
             "that kiln's shape functions must recover them"),
    cl::init(false), cl::sub(compileCmd), cl::cat(kilnCategory), cl::Hidden);

// kiln run / kiln bench
cl::opt<std::string> runModelPath(cl::Positional, cl::desc("<model.so|model.onnx>"),
                                  cl::sub(runCmd), cl::cat(kilnCategory), cl::Required);
cl::list<std::string> benchModelPaths(
    cl::Positional, cl::desc("<model.so|model.onnx>..."), cl::OneOrMore, cl::sub(benchCmd),
    cl::cat(kilnCategory));
cl::list<std::string> runInputs(
    "input", cl::desc("An input tensor (.pb TensorProto or .npy), by name or "
                      "in graph-input order; repeatable"),
    cl::value_desc("[NAME=]FILE"), cl::sub(runCmd), cl::sub(benchCmd), cl::cat(kilnCategory));
cl::list<std::string> runExpects(
    "expect", cl::desc("An expected output tensor, by name or in order; "
                       "repeatable"),
    cl::value_desc("[NAME=]FILE"), cl::sub(runCmd), cl::cat(kilnCategory));
cl::opt<double> rtol("rtol", cl::desc("Relative tolerance (default 1e-3)"),
                     cl::init(1e-3), cl::sub(runCmd), cl::cat(kilnCategory));
cl::opt<double> atol("atol", cl::desc("Absolute tolerance (default 1e-5)"),
                     cl::init(1e-5), cl::sub(runCmd), cl::cat(kilnCategory));
cl::opt<std::string> saveOutputs(
    "save-outputs", cl::desc("Write every output as DIR/NAME.npy"),
    cl::value_desc("dir"), cl::sub(runCmd), cl::cat(kilnCategory));
cl::opt<int> iterations("iterations", cl::desc("Measured runs (default 100)"),
                        cl::init(100), cl::sub(benchCmd), cl::cat(kilnCategory));
cl::opt<int> warmup("warmup", cl::desc("Unmeasured runs first (default 10)"),
                    cl::init(10), cl::sub(benchCmd), cl::cat(kilnCategory));
cl::opt<int> threads("threads", cl::desc("Threads for the library's parallel loops, "
                                         "through KILN_NUM_THREADS (default 1)"),
                     cl::init(1), cl::sub(benchCmd), cl::cat(kilnCategory));
cl::opt<bool> json("json", cl::desc("Print one JSON object"), cl::init(false),
                   cl::sub(benchCmd), cl::sub(checkCmd), cl::cat(kilnCategory));

// kiln check
cl::opt<std::string> checkPath(cl::Positional, cl::desc("<model.onnx>"), cl::sub(checkCmd),
                               cl::cat(kilnCategory), cl::Required);

void printVersion(llvm::raw_ostream &os) {
  os << "kiln 0.1.0\n"
     << "  LLVM/MLIR " << LLVM_VERSION_STRING << "\n"
     << "  ONNX default-domain opsets 1-24 (178 operators; opsets 18-24 read in their opset-17 forms)\n";
}

kiln::RunRequest runRequest() {
  kiln::RunRequest r;
  if (benchCmd) {
    r.model = benchModelPaths.front();
    r.others.assign(std::next(benchModelPaths.begin()), benchModelPaths.end());
  } else {
    r.model = runModelPath;
  }
  r.inputs.assign(runInputs.begin(), runInputs.end());
  r.expects.assign(runExpects.begin(), runExpects.end());
  r.rtol = rtol;
  r.atol = atol;
  r.saveOutputs = saveOutputs;
  r.iterations = iterations;
  r.warmup = warmup;
  r.threads = threads;
  r.json = json;
  r.compile.inputShapes.assign(inputShapes.begin(), inputShapes.end());
  return r;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::SetVersionPrinter(printVersion);
  // Only kiln's own options in --help, not every LLVM flag in libLLVM.so.
  cl::HideUnrelatedOptions(kilnCategory);
  for (cl::SubCommand *sub : {&compileCmd, &runCmd, &benchCmd, &checkCmd})
    cl::HideUnrelatedOptions(kilnCategory, *sub);

  // `kiln help [SUBCOMMAND]` is `kiln [SUBCOMMAND] --help`.
  std::vector<const char *> args(argv, argv + argc);
  if (args.size() >= 2 && llvm::StringRef(args[1]) == "help") {
    if (args.size() > 3) {
      llvm::errs() << "kiln: error: 'kiln help' takes at most one subcommand\n";
      return 1;
    }
    args.erase(args.begin() + 1);
    args.push_back("--help");
  }
  argc = static_cast<int>(args.size());
  if (!cl::ParseCommandLineOptions(
          argc, args.data(),
          "kiln: an ahead-of-time compiler for ONNX models\n\n"
          "  kiln compile model.onnx -o libmodel.so   (also .o, .a, .ll, .s, .mlir)\n"
          "  kiln run libmodel.so --input x.pb --expect y.pb\n"
          "  kiln bench libmodel.so --iterations 100\n"
          "  kiln bench liba.so libb.so   (two builds in turn, with paired ratios)\n"
          "  kiln check model.onnx [--json]\n"
          "  kiln help [compile|run|bench|check]\n",
          &llvm::errs()))
    return runCmd || benchCmd || checkCmd ? 2 : 1;
  if (compileCmd) {
    kiln::CompileRequest r;
    r.input = inputPath;
    r.output = outputPath;
    r.emit = emitKind;
    r.compileTo = compileTo;
    r.inputShapes.assign(inputShapes.begin(), inputShapes.end());
    r.maxShapes.assign(maxShapes.begin(), maxShapes.end());
    r.dynamicBatch = dynamicBatchMode;
    r.quantize = quantizeMode;
    r.calibrationData = calibrationData;
    r.calibrationMethod = calibrationMethod;
    r.target = targetTriple;
    r.cpu = targetCpu;
    r.features = targetFeatures;
    r.gpuArch = gpuArch;
    r.gpuPrecision = gpuPrecision;
    r.optLevel = static_cast<int>(optLevel);
    r.freestanding = freestanding;
    r.name = modelName;
    r.header = headerPath;
    r.onnxShapeInference = !noOnnxInference;
    r.eraseInferredShapes = eraseInferredShapes;
    r.timing = timing;
    r.quiet = quiet;
    return kiln::compileModel(r);
  }
  if (runCmd)
    return kiln::runModel(runRequest());
  if (benchCmd)
    return kiln::benchModel(runRequest());
  if (checkCmd) {
    kiln::CheckRequest r;
    r.model = checkPath;
    r.inputShapes.assign(inputShapes.begin(), inputShapes.end());
    r.target = targetTriple;
    r.cpu = targetCpu;
    r.features = targetFeatures;
    r.gpuArch = gpuArch;
    r.json = json;
    return kiln::checkModel(r);
  }
  llvm::errs() << "kiln: error: no subcommand given (try 'kiln --help')\n";
  return 1;
}
