//===- SymbolicArguments.cpp - kiln-symbolic-arguments pass ---------------===//
//
// Entry-function arguments whose memref types have `?` dims become data
// pointers (memref<1xT>) plus one trailing `index` argument, the model's
// dynamic dim; the body sees the original types again through
// memref.reinterpret_cast with that value for every `?`.
//
//===----------------------------------------------------------------------===//

#include "passes/Memory/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace kiln {
#define GEN_PASS_DEF_SYMBOLICARGUMENTSPASS
#include "passes/Memory/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct SymbolicArgumentsPass
    : public kiln::impl::SymbolicArgumentsPassBase<SymbolicArgumentsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      if (failed(rewrite(func)))
        return signalPassFailure();
    }
  }

  LogicalResult rewrite(func::FuncOp func) {
    auto isDynamic = [](Type t) {
      auto m = dyn_cast<MemRefType>(t);
      return m && !m.hasStaticShape();
    };
    if (llvm::none_of(func.getArgumentTypes(), isDynamic))
      return success();
    if (func.getNumResults())
      return func.emitError("a function with dynamic arguments must return "
                            "through out-params");
    Block &entry = func.front();
    unsigned count = func.getNumArguments();
    Location loc = func.getLoc();
    MLIRContext *ctx = func.getContext();
    OpBuilder b(ctx);
    if (failed(func.insertArgument(count, b.getIndexType(),
                                   b.getDictionaryAttr(b.getNamedAttr(
                                       "kiln.symbolic_dim", b.getUnitAttr())),
                                   loc)))
      return failure();
    Value n = func.getArgument(count);
    b.setInsertionPointToStart(&entry);
    for (unsigned i = 0; i < count; ++i) {
      BlockArgument arg = func.getArgument(i);
      if (!isDynamic(arg.getType()))
        continue;
      auto type = cast<MemRefType>(arg.getType());
      if (!type.getLayout().isIdentity())
        return func.emitError() << "argument #" << i
                                << " has a dynamic type with a non-identity layout";
      // Row-major strides from the innermost dim out.
      int64_t rank = type.getRank();
      SmallVector<OpFoldResult> sizes(rank), strides(rank);
      OpFoldResult stride = b.getIndexAttr(1);
      for (int64_t d = rank - 1; d >= 0; --d) {
        strides[d] = stride;
        OpFoldResult size = type.isDynamicDim(d) ? OpFoldResult(n)
                                                 : OpFoldResult(b.getIndexAttr(type.getDimSize(d)));
        sizes[d] = size;
        auto s = getConstantIntValue(stride), z = getConstantIntValue(size);
        if (s && z) {
          stride = b.getIndexAttr(*s * *z);
        } else {
          auto value = [&](OpFoldResult f) -> Value {
            if (auto v = dyn_cast<Value>(f))
              return v;
            return arith::ConstantIndexOp::create(b, loc, *getConstantIntValue(f));
          };
          stride = arith::MulIOp::create(b, loc, value(stride), value(size)).getResult();
        }
      }
      arg.setType(MemRefType::get({1}, type.getElementType()));
      auto view = memref::ReinterpretCastOp::create(b, loc, type, arg, b.getIndexAttr(0),
                                                    sizes, strides);
      arg.replaceAllUsesExcept(view.getResult(), view);
    }
    func.setType(FunctionType::get(ctx, entry.getArgumentTypes(), {}));
    return success();
  }
};

} // namespace
