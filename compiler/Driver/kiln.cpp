//===- kiln.cpp - The kiln command-line driver -----------------------------===//
//
// `kiln compile MODEL.onnx [options]` imports an ONNX model and runs the
// pipeline up to `--compile-to`, writing what `--emit` asks for.
//
// Errors are printed as `kiln: error: MODEL: node 'NAME' (#INDEX): OP: reason`
// and the exit code is 1.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/Importer.h"
#include "compiler/Pipeline/Pipeline.h"
#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory kilnCategory("kiln options");
cl::SubCommand compileCmd("compile", "Compile an ONNX model");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::sub(compileCmd), cl::cat(kilnCategory), cl::Required);
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' for stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> emitKind("emit",
                              cl::desc("What to write: mlir (the module "
                                       "after --compile-to)"),
                              cl::init("mlir"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string>
    compileTo("compile-to",
              cl::desc("Last phase to run: import (the module as imported), "
                       "onnx (shape-inferred and folded)"),
              cl::init("onnx"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Pin a graph input's shape, e.g. input=1x3x224x224 "
             "('?' keeps a dim dynamic); repeatable"),
    cl::value_desc("NAME=DIMS"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<bool> noOnnxInference(
    "no-onnx-shape-inference",
    cl::desc("Skip ONNX's reference shape inference before importing"),
    cl::init(false), cl::sub(compileCmd), cl::cat(kilnCategory), cl::Hidden);
cl::opt<bool> eraseInferredShapes(
    "erase-onnx-shapes",
    cl::desc("Testing: forget the shapes ONNX inferred for node outputs so "
             "that kiln's shape functions must recover them"),
    cl::init(false), cl::sub(compileCmd), cl::cat(kilnCategory), cl::Hidden);

/// What a diagnostic's location says: the model file, the node (NameLoc)
/// and its index (FileLineColLoc), and for nodes inside subgraphs the
/// enclosing nodes (the callers of a CallSiteLoc).
struct LocInfo {
  std::string file, node, context;
  int index = -1;
  bool isNode = false;
};

void describeLoc(Location loc, LocInfo &info) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    if (!info.isNode)
      info.node = name.getName().str();
    info.isNode = true;
    describeLoc(name.getChildLoc(), info);
  } else if (auto flc = dyn_cast<FileLineColLoc>(loc)) {
    if (info.file.empty()) {
      info.file = flc.getFilename().str();
      info.index = static_cast<int>(flc.getLine());
    }
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations())
      describeLoc(l, info);
  } else if (auto cs = dyn_cast<CallSiteLoc>(loc)) {
    describeLoc(cs.getCallee(), info);
    LocInfo parent;
    describeLoc(cs.getCaller(), parent);
    if (parent.isNode)
      info.context += " in a subgraph of node '" + parent.node + "' (#" +
                      std::to_string(parent.index) + ")" + parent.context;
  }
}

LogicalResult printDiagnostic(Diagnostic &diag) {
  LocInfo info;
  describeLoc(diag.getLocation(), info);
  llvm::raw_ostream &os = llvm::errs();
  os << "kiln: ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error: os << "error: "; break;
  case DiagnosticSeverity::Warning: os << "warning: "; break;
  case DiagnosticSeverity::Note: os << "note: "; break;
  case DiagnosticSeverity::Remark: os << "remark: "; break;
  }
  if (!info.file.empty())
    os << info.file << ": ";
  if (info.isNode) {
    os << "node '" << info.node << "'";
    if (info.index >= 0)
      os << " (#" << info.index << info.context << ")";
    os << ": ";
  }
  os << diag.str() << "\n";
  for (Diagnostic &note : diag.getNotes())
    (void)printDiagnostic(note);
  return success();
}

void printVersion(llvm::raw_ostream &os) {
  os << "kiln 0.1.0\n"
     << "  LLVM/MLIR " << LLVM_VERSION_STRING << "\n"
     << "  ONNX default-domain opsets 1-17 (178 operators)\n";
}

int runCompile() {
  std::optional<kiln::Phase> last = kiln::parsePhase(compileTo);
  if (!last) {
    llvm::errs() << "kiln: error: unknown --compile-to phase '" << compileTo
                 << "' (phases: " << kiln::phaseNames() << ")\n";
    return 1;
  }
  if (emitKind != "mlir") {
    llvm::errs() << "kiln: error: --emit=" << emitKind
                 << " is not supported yet (supported: mlir)\n";
    return 1;
  }
  kiln::ImportOptions options;
  options.onnxShapeInference = !noOnnxInference;
  options.eraseInferredShapes = eraseInferredShapes;
  for (const std::string &text : inputShapes) {
    kiln::InputShape shape;
    std::string error;
    if (!kiln::parseInputShape(text, shape, error)) {
      llvm::errs() << "kiln: error: --input-shape: " << error << "\n";
      return 1;
    }
    options.inputShapes.push_back(std::move(shape));
  }

  MLIRContext context(MLIRContext::Threading::DISABLED);
  // Errors are one line each; the op is already named by its node.
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler handler(&context, printDiagnostic);
  OwningOpRef<ModuleOp> module =
      kiln::importOnnxModel(context, inputPath, options);
  if (!module)
    return 1;

  PassManager pm(&context);
  kiln::addPipelineUpTo(pm, *last);
  if (failed(pm.run(*module)))
    return 1;

  std::string error;
  auto out = mlir::openOutputFile(outputPath, &error);
  if (!out) {
    llvm::errs() << "kiln: error: cannot write '" << outputPath
                 << "': " << error << "\n";
    return 1;
  }
  module->print(out->os());
  out->os() << "\n";
  out->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::SetVersionPrinter(printVersion);
  // Only kiln's own options in --help, not every LLVM flag in libLLVM.so.
  cl::HideUnrelatedOptions(kilnCategory);
  cl::HideUnrelatedOptions(kilnCategory, compileCmd);

  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "kiln: an ahead-of-time compiler for ONNX models\n\n"
          "  kiln compile model.onnx [--compile-to=import|onnx] "
          "[--input-shape NAME=DIMS]... -o out.mlir\n",
          &llvm::errs()))
    return 1;
  if (compileCmd)
    return runCompile();
  llvm::errs() << "kiln: error: no subcommand given (try 'kiln --help')\n";
  return 1;
}
