//===- MarkReadonlyInputs.cpp - kiln-mark-readonly-inputs pass -------------===//
//
// Inputs arrive as `const void *`; bufferization must copy before writing.
//
//===----------------------------------------------------------------------===//

#include "passes/Memory/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "kiln-mark-readonly-inputs"

namespace kiln {
#define GEN_PASS_DEF_MARKREADONLYINPUTSPASS
#include "passes/Memory/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
struct MarkReadonlyInputsPass
    : public kiln::impl::MarkReadonlyInputsPassBase<MarkReadonlyInputsPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (isa<TensorType>(func.getArgument(i).getType()))
          func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                          b.getBoolAttr(false));
    }
  }
};
} // namespace
