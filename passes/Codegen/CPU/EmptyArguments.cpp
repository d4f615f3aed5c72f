//===- EmptyArguments.cpp - kiln-empty-arguments pass ----------------------===//
//
// A graph input or output with no elements (a zero dim) is still an
// argument of the entry function, but MLIR's bare-pointer calling
// convention refuses memrefs with a zero dim after the first (their
// canonical layout has no strides). Such an argument becomes memref<0xT>,
// which nothing reads: its uses get a zero-sized stack buffer of the
// original type instead, since no element of it can be read or written.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace kiln {
#define GEN_PASS_DEF_EMPTYARGUMENTSPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct EmptyArgumentsPass : public kiln::impl::EmptyArgumentsPassBase<EmptyArgumentsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &entry = func.getBody().front();
      SmallVector<Type> inputs(func.getArgumentTypes());
      bool changed = false;
      for (BlockArgument arg : entry.getArguments()) {
        auto type = dyn_cast<MemRefType>(arg.getType());
        if (!type || !type.hasStaticShape() || type.getNumElements() != 0 || type.getRank() < 2)
          continue;
        OpBuilder b(&entry, entry.begin());
        Value stand = memref::AllocaOp::create(b, func.getLoc(), type);
        arg.replaceAllUsesWith(stand);
        auto flat = MemRefType::get({0}, type.getElementType());
        arg.setType(flat);
        inputs[arg.getArgNumber()] = flat;
        changed = true;
      }
      if (changed)
        func.setFunctionType(FunctionType::get(&getContext(), inputs, func.getResultTypes()));
    }
  }
};

} // namespace
