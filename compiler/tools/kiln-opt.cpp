//===- kiln-opt.cpp - Run kiln's passes on .mlir files ---------------------===//
//
// MlirOptMain with the dialects kiln's pipeline uses and kiln's passes and
// phase pipelines registered (`--onnx-shape-inference`, `--kiln-phase-onnx`,
// `--convert-onnx-to-linalg`, `--kiln-plan-memory`, ...), plus the upstream
// passes the pipeline is built from.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipeline/Pipeline.h"
#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  kiln::registerKilnDialects(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerTransformsPasses();
  // The upstream passes kiln's phases are built from, to run them alone.
  mlir::registerConversionPasses();
  mlir::bufferization::registerBufferizationPasses();
  mlir::registerLinalgPasses();
  mlir::memref::registerMemRefPasses();
  mlir::registerGPUPasses();
  kiln::registerKilnPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kiln optimizer driver\n", registry));
}
