//===- Pipeline.cpp - kiln's compilation phases ----------------------------===//

#include "compiler/Pipeline/Pipeline.h"
#include "passes/Onnx/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace kiln {

std::optional<Phase> parsePhase(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Phase>>(name)
      .Case("import", Phase::Import)
      .Case("onnx", Phase::Onnx)
      .Default(std::nullopt);
}

llvm::StringRef phaseNames() { return "import, onnx"; }

void addPhasePasses(OpPassManager &pm, Phase phase) {
  switch (phase) {
  case Phase::Import:
    return;
  case Phase::Onnx:
    pm.addNestedPass<func::FuncOp>(onnx::createOnnxShapeInferencePass());
    pm.addPass(createCSEPass());
    pm.addNestedPass<func::FuncOp>(onnx::createOnnxShapeInferencePass());
    return;
  }
}

void addPipelineUpTo(OpPassManager &pm, Phase last) {
  for (Phase p : {Phase::Import, Phase::Onnx}) {
    addPhasePasses(pm, p);
    if (p == last)
      return;
  }
}

void registerKilnPasses() {
  onnx::registerOnnxPasses();
  PassPipelineRegistration<>(
      "kiln-phase-onnx",
      "kiln's onnx phase: shape inference and folding on the onnx dialect",
      [](OpPassManager &pm) { addPhasePasses(pm, Phase::Onnx); });
}

} // namespace kiln
