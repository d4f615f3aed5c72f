//===- OutlineParallelLoops.cpp - kiln-outline-parallel-loops pass ---------===//
//
// An scf.for marked `kiln.parallel` (its iterations independent; the
// vector passes mark one per kernel when it is worth it) becomes a call
//
//   kiln_parallel_for(trip_count, @fn, &ctx)
//
// where @fn(ctx, begin, end) runs iterations [begin, end) and ctx holds
// every value the loop body takes from outside it: memrefs as their LLVM
// descriptors, index values as i64, other scalars as they are. Constants
// and constant globals are recreated inside @fn instead, and so are static
// allocas marked `kiln.scratch` (a kernel's buffer whose contents do not
// outlive an iteration): each thread then has its own, on its stack. The descriptors
// cross as `builtin.unrealized_conversion_cast`s that the memref lowering
// and reconcile-unrealized-casts remove.
//
// Marked loops may nest (a loop marked `kiln.parallel_nests` lets the
// kernels inside mark theirs): the inner ones are outlined first, and the
// context of an inner call, made inside the outer loop, is recreated in
// the outer function, one per thread. The runtime runs an inner loop
// serially when the outer one went to threads, and shares it out when the
// outer one ran on the calling thread alone (one trip).
//
// A loop over a dynamic range may carry `kiln.min_trips` (the vector
// passes count its work per trip): with fewer trips at run time, the
// call is to @fn(ctx, 0, n) on the calling thread, not to the hook.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <cctype>

#define DEBUG_TYPE "kiln-outline-parallel-loops"

namespace kiln {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPSPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr StringLiteral kHook = "kiln_parallel_for";

/// The ONNX node a loop came from, as a symbol suffix ("_" and the
/// node's name in identifier characters, at most 48 of them), or "" when
/// its location names none. Outlined kernels carry it, so that a profiler
/// (perf) shows which node each one computes.
std::string nodeSuffix(Location loc) {
  std::string name;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  std::string out;
  for (char ch : name) {
    if (out.size() >= 48)
      break;
    bool word = std::isalnum(static_cast<unsigned char>(ch));
    if (word)
      out += ch;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_')
    out.pop_back();
  return out.empty() ? "" : "_" + out;
}

/// Recreated inside the outlined function rather than passed.
bool rematerialisable(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto alloca = dyn_cast_or_null<memref::AllocaOp>(def))
    return alloca->hasAttr("kiln.scratch") && alloca.getType().hasStaticShape();
  // The context of a loop outlined inside this one: each thread has its own.
  if (auto alloca = dyn_cast_or_null<LLVM::AllocaOp>(def))
    return alloca->hasAttr("kiln.scratch");
  return def && (def->hasTrait<OpTrait::ConstantLike>() || isa<memref::GetGlobalOp>(def));
}

struct OutlineParallelLoopsPass
    : public kiln::impl::OutlineParallelLoopsPassBase<OutlineParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) {
      if (loop->hasAttr("kiln.parallel"))
        loops.push_back(loop);
    });
    if (loops.empty())
      return;
    LowerToLLVMOptions options(ctx);
    options.overrideIndexBitwidth(indexBitwidth);
    LLVMTypeConverter converter(ctx, options);
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);
    auto fnType = FunctionType::get(ctx, {ptr, i64, i64}, {});
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    if (!module.lookupSymbol(kHook)) {
      auto hook = func::FuncOp::create(mb, module.getLoc(), kHook,
                                       FunctionType::get(ctx, {i64, fnType, ptr}, {}));
      hook.setPrivate();
    }
    unsigned counter = 0;
    for (scf::ForOp loop : loops) {
      if (failed(outline(loop, converter, fnType, counter)))
        loop->removeAttr("kiln.parallel"); // Stays a serial loop.
    }
  }

  LogicalResult outline(scf::ForOp loop, const LLVMTypeConverter &converter,
                        FunctionType fnType, unsigned &counter) {
    MLIRContext *ctx = &getContext();
    // Bounds may be dynamic (the windows of a dynamic dim); the step is a
    // positive constant.
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!step || *step <= 0 || loop.getNumResults() || (lb && ub && *ub <= *lb))
      return failure();
    auto parent = loop->getParentOfType<func::FuncOp>();

    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(loop.getRegion(), captured);
    if (!lb)
      captured.insert(loop.getLowerBound()); // For the induction variable.
    SmallVector<Value> passed, remade;
    SmallVector<Type> fields;
    for (Value v : captured) {
      if (rematerialisable(v)) {
        remade.push_back(v);
        continue;
      }
      Type t = v.getType();
      Type field;
      if (isa<MemRefType>(t))
        field = converter.convertType(t);
      else if (t.isIndex())
        field = IntegerType::get(ctx, 64);
      else if (t.isIntOrFloat())
        field = t;
      if (!field)
        return failure();
      passed.push_back(v);
      fields.push_back(field);
    }
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);
    auto ctxType = LLVM::LLVMStructType::getLiteral(
        ctx, fields.empty() ? SmallVector<Type>{i64} : fields);
    Location loc = loop.getLoc();

    // The outlined function.
    std::string name =
        (parent.getName() + "_parallel_" + Twine(counter++) + nodeSuffix(loc)).str();
    OpBuilder mb(parent);
    mb.setInsertionPointAfter(parent);
    auto fn = func::FuncOp::create(mb, loc, name, fnType);
    fn.setPrivate();
    Block *entry = fn.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    IRMapping map;
    for (Value v : remade) {
      if (auto alloca = v.getDefiningOp<LLVM::AllocaOp>()) {
        Value one = LLVM::ConstantOp::create(b, loc, IntegerType::get(ctx, 64),
                                             b.getI64IntegerAttr(1));
        auto copy = LLVM::AllocaOp::create(b, loc, alloca.getType(), alloca.getElemType(), one);
        copy->setAttr("kiln.scratch", b.getUnitAttr());
        map.map(v, copy.getResult());
        continue;
      }
      map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    }
    for (auto [i, v] : llvm::enumerate(passed)) {
      Value at = LLVM::GEPOp::create(b, loc, ptr, ctxType, entry->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
      Value field = LLVM::LoadOp::create(b, loc, fields[i], at);
      Value back = field;
      if (isa<MemRefType>(v.getType()))
        back = UnrealizedConversionCastOp::create(b, loc, v.getType(), field).getResult(0);
      else if (v.getType().isIndex())
        back = arith::IndexCastOp::create(b, loc, b.getIndexType(), field);
      map.map(v, back);
    }
    // Iterations [begin, end): iv = lb + i * step.
    Value begin = arith::IndexCastOp::create(b, loc, b.getIndexType(), entry->getArgument(1));
    Value end = arith::IndexCastOp::create(b, loc, b.getIndexType(), entry->getArgument(2));
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto inner = scf::ForOp::create(b, loc, begin, end, one);
    {
      OpBuilder ib = OpBuilder::atBlockBegin(inner.getBody());
      Value low = lb ? arith::ConstantIndexOp::create(ib, loc, *lb).getResult()
                     : map.lookup(loop.getLowerBound());
      Value iv = arith::AddIOp::create(
          ib, loc, low,
          arith::MulIOp::create(ib, loc, inner.getInductionVar(),
                                arith::ConstantIndexOp::create(ib, loc, *step)));
      map.map(loop.getInductionVar(), iv);
      for (Operation &op : loop.getBody()->without_terminator())
        ib.clone(op, map);
    }
    func::ReturnOp::create(b, loc);

    // The call: the context lives in the caller's entry block.
    OpBuilder eb = OpBuilder::atBlockBegin(&parent.getBody().front());
    Value count1 = LLVM::ConstantOp::create(eb, loc, i64, eb.getI64IntegerAttr(1));
    auto storage = LLVM::AllocaOp::create(eb, loc, ptr, ctxType, count1);
    storage->setAttr("kiln.scratch", eb.getUnitAttr());
    OpBuilder cb(loop);
    for (auto [i, v] : llvm::enumerate(passed)) {
      Value value = v;
      if (isa<MemRefType>(v.getType()))
        value = UnrealizedConversionCastOp::create(cb, loc, fields[i], v).getResult(0);
      else if (v.getType().isIndex())
        value = arith::IndexCastOp::create(cb, loc, i64, v);
      Value at = LLVM::GEPOp::create(cb, loc, ptr, ctxType, storage,
                                     ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
      LLVM::StoreOp::create(cb, loc, value, at);
    }
    Value fnRef = func::ConstantOp::create(cb, loc, fnType, SymbolRefAttr::get(fn));
    // ceil((ub - lb) / step), signed: an empty range gives n <= 0, for
    // which the hook calls nothing.
    Value n;
    if (lb && ub) {
      n = arith::ConstantOp::create(cb, loc, i64,
                                    cb.getI64IntegerAttr((*ub - *lb + *step - 1) / *step));
    } else {
      Value span = arith::SubIOp::create(cb, loc, loop.getUpperBound(), loop.getLowerBound());
      Value trips = arith::DivSIOp::create(
          cb, loc,
          arith::AddIOp::create(cb, loc, span, arith::ConstantIndexOp::create(cb, loc, *step - 1)),
          arith::ConstantIndexOp::create(cb, loc, *step));
      n = arith::IndexCastOp::create(cb, loc, i64, trips);
    }
    // A loop over a dynamic range worth threads only from a number of
    // trips on (kMinTrips): fewer run on the calling thread, without the
    // hook.
    auto minTrips = loop->getAttrOfType<IntegerAttr>(kiln::vec::kMinTrips);
    if (minTrips && !(lb && ub)) {
      Value enough = arith::CmpIOp::create(
          cb, loc, arith::CmpIPredicate::sge, n,
          arith::ConstantOp::create(cb, loc, i64, cb.getI64IntegerAttr(minTrips.getInt())));
      auto branch = scf::IfOp::create(cb, loc, enough, /*withElseRegion=*/true);
      OpBuilder tb = branch.getThenBodyBuilder();
      func::CallOp::create(tb, loc, kHook, TypeRange{}, ValueRange{n, fnRef, storage});
      OpBuilder eb = branch.getElseBodyBuilder();
      Value zero = arith::ConstantOp::create(eb, loc, i64, eb.getI64IntegerAttr(0));
      func::CallOp::create(eb, loc, fn, ValueRange{storage, zero, n});
    } else {
      func::CallOp::create(cb, loc, kHook, TypeRange{}, ValueRange{n, fnRef, storage});
    }
    loop.erase();
    return success();
  }
};

} // namespace
