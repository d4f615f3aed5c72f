//===- MergeModules.cpp - kiln-gpu-merge-modules ----------------*- C++ -*-===//
//
// Every outlined kernel in one gpu.module, @kiln_kernels (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/GPU/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_GPUMERGEMODULESPASS
#include "passes/Codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct GpuMergeModulesPass
    : public kiln::impl::GpuMergeModulesPassBase<GpuMergeModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    OpBuilder b(modules.front());
    auto merged = gpu::GPUModuleOp::create(b, modules.front().getLoc(), "kiln_kernels");
    Block &into = merged.getBodyRegion().front();
    // Outlining names each module uniquely but every kernel in them after
    // the function it came from: each kernel takes its module's name.
    DenseMap<SymbolRefAttr, StringAttr> renamed;
    for (gpu::GPUModuleOp m : modules) {
      for (auto kernel : m.getOps<gpu::GPUFuncOp>()) {
        renamed[SymbolRefAttr::get(m.getNameAttr(), {FlatSymbolRefAttr::get(kernel.getNameAttr())})] =
            m.getNameAttr();
      }
      for (auto kernel : llvm::to_vector(m.getOps<gpu::GPUFuncOp>()))
        if (kernel.getNameAttr() != m.getNameAttr())
          SymbolTable::setSymbolName(kernel, m.getNameAttr());
    }
    for (gpu::GPUModuleOp m : modules) {
      for (Operation &op : llvm::make_early_inc_range(m.getBodyRegion().front())) {
        if (op.hasTrait<OpTrait::IsTerminator>())
          continue;
        if (!into.empty() && into.back().hasTrait<OpTrait::IsTerminator>())
          op.moveBefore(&into.back());
        else
          op.moveBefore(&into, into.end());
      }
    }
    WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernel());
      if (it == renamed.end()) {
        launch.emitError("internal error: a launch of a kernel outlining did not make");
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(
          SymbolRefAttr::get(merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (gpu::GPUModuleOp m : modules)
      m.erase();
  }
};

} // namespace
