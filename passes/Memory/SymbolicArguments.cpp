//===- SymbolicArguments.cpp - kiln-symbolic-arguments pass ---------------===//
//
// Entry-function arguments whose memref types have `?` dims become data
// pointers (memref<1xT>) plus one trailing `index` argument per symbolic
// dim of the model (`kiln.symbolic_dim`, its name); the body sees the
// original types again through memref.reinterpret_cast with each `?` the
// value of its dim. With several symbolic dims (@main's
// `kiln.symbol_names`), the inputs' `?` are named by `kiln.dim_names`;
// with one, every input `?` is it. The outputs' (the trailing out-params)
// are what kiln-dim-symbols recorded in `kiln.result_dim_symbols`: a dim,
// or an expression of the dims (past + seq), a conv's or pool's output
// size or a product of dims (computed here from their values), else (no record) named by `kiln.result_dim_names`. An output
// computed in a buffer of its own and copied into its out-param at the
// end is computed in the out-param instead (writeInPlace).
//
//===----------------------------------------------------------------------===//

#include "passes/Memory/Passes.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "passes/Utils/Buffers.h"
#include "passes/Utils/DimExpressions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <functional>

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
    // The symbolic dims, and which one each `?` of each argument is.
    SmallVector<StringAttr> names;
    if (auto list = func->getAttrOfType<ArrayAttr>("kiln.symbol_names"))
      for (Attribute a : list)
        names.push_back(cast<StringAttr>(a));
    SmallVector<SmallVector<int64_t>> argSymbols(count);
    auto resultNames = func->getAttrOfType<ArrayAttr>("kiln.result_dim_names");
    auto resultIds = func->getAttrOfType<ArrayAttr>("kiln.result_dim_symbols");
    for (unsigned i = 0; i < count; ++i) {
      auto type = dyn_cast<MemRefType>(func.getArgument(i).getType());
      if (!type || type.hasStaticShape())
        continue;
      ArrayAttr dimNames = func.getArgAttrOfType<ArrayAttr>(i, "kiln.dim_names");
      unsigned firstOut = resultNames ? count - resultNames.size() : count;
      if (resultNames && i >= firstOut)
        dimNames = dyn_cast<ArrayAttr>(resultNames[i - firstOut]);
      if (resultIds && resultIds.size() <= count && i >= count - resultIds.size()) {
        auto ids = dyn_cast<DenseI64ArrayAttr>(resultIds[i - (count - resultIds.size())]);
        if (!ids || ids.size() != type.getRank())
          return func.emitError() << "argument #" << i << " has no record of its dims";
        for (int64_t d = 0; d < type.getRank(); ++d) {
          int64_t id = ids[d];
          if (type.isDynamicDim(d) && kiln::onnx::dimExpression(func, id).empty() &&
              kiln::onnx::dimFloor(func, id).empty() && kiln::onnx::dimProduct(func, id).empty())
            return func.emitError() << "argument #" << i << " has dynamic dim " << d
                                    << " that is neither one of the model's dynamic dims "
                                       "nor an expression, floor or product of them";
          argSymbols[i].push_back(type.isDynamicDim(d) ? id : 0);
        }
        continue;
      }
      for (int64_t d = 0; d < type.getRank(); ++d) {
        int64_t k = 0;
        if (type.isDynamicDim(d) && names.size() > 1) {
          k = -1;
          if (dimNames && dimNames.size() == size_t(type.getRank()))
            if (auto it = llvm::find(names, dimNames[d]); it != names.end())
              k = it - names.begin();
          if (k < 0)
            return func.emitError() << "argument #" << i << " has dynamic dim " << d
                                    << " that is not one of the model's dynamic dims";
        }
        argSymbols[i].push_back(k);
      }
    }
    // One index argument per symbolic dim, in order.
    int64_t numSymbols = std::max<size_t>(names.size(), 1);
    SmallVector<Value> values;
    for (int64_t k = 0; k < numSymbols; ++k) {
      Attribute name = names.empty() ? Attribute(b.getUnitAttr()) : Attribute(names[k]);
      if (failed(func.insertArgument(count + k, b.getIndexType(),
                                     b.getDictionaryAttr(b.getNamedAttr("kiln.symbolic_dim", name)),
                                     loc)))
        return failure();
      values.push_back(func.getArgument(count + k));
    }
    b.setInsertionPointToStart(&entry);
    // Each output dim's value, once: an expression c0 + sum c_k dim_k, a
    // conv's or pool's output size floor((x + a) / s) (x + a >= s: the
    // entry point checks kiln.dim_constraints), a product c x y, with x
    // and y the dims or expressions they are made of.
    std::function<Value(int64_t)> valueOf = [&](int64_t id) -> Value {
      if (id < int64_t(values.size()) && values[id])
        return values[id];
      Value v = kiln::dimIdValue(b, loc, func, id, numSymbols, valueOf);
      values.resize(std::max<size_t>(values.size(), id + 1));
      values[id] = v;
      return v;
    };
    for (SmallVector<int64_t> &ids : argSymbols)
      for (int64_t id : ids)
        if (id >= numSymbols)
          valueOf(id);
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
        OpFoldResult size = type.isDynamicDim(d) ? OpFoldResult(values[argSymbols[i][d]])
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
      if (resultNames && i >= count - resultNames.size())
        writeInPlace(view);
    }
    func.setType(FunctionType::get(ctx, entry.getArgumentTypes(), {}));
    return success();
  }

  /// An output computed into a buffer of its own and copied into its
  /// out-param at the end (buffer-results-to-out-params hoists only static
  /// buffers) is computed in the out-param instead: a key/value cache's
  /// present is not copied a second time. The buffer must be an alloc of
  /// the out-param's type in the entry block, copied only there, with only
  /// the return and copies that do not write into it after that copy.
  static void writeInPlace(memref::ReinterpretCastOp out) {
    Value view = out.getResult();
    if (!view.hasOneUse())
      return;
    auto copy = dyn_cast<memref::CopyOp>(*view.getUsers().begin());
    if (!copy || copy.getTarget() != view || copy->getBlock() != out->getBlock())
      return;
    auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc.getType() != out.getType() || alloc->getBlock() != out->getBlock())
      return;
    for (Operation *after = copy->getNextNode(); after; after = after->getNextNode()) {
      auto later = dyn_cast<memref::CopyOp>(after);
      if (!isa<func::ReturnOp>(after) &&
          (!later || kiln::rootBuffer(later.getTarget()) == alloc))
        return;
    }
    for (Operation *user : alloc->getUsers())
      if (isa<memref::DeallocOp>(user))
        return;
    copy.erase();
    alloc.getResult().replaceAllUsesWith(view);
    alloc.erase();
  }
};

} // namespace
