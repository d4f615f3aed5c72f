//===- MapLoops.cpp - kiln-gpu-map-loops ------------------------*- C++ -*-===//
//
// The program's loop nests as GPU launches (see Passes.td): a top-level
// scf.parallel becomes one thread per iteration, everything else that
// touches memory one thread. The host keeps sizes, views and constants.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_GPUMAPLOOPSPASS
#include "passes/Codegen/GPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A launch of grid x 1 x 1 blocks of `block` x 1 x 1 threads (one of one
/// thread when both are null), its body ending in gpu.terminator.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Value grid = {}, Value block = {}) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  if (!grid)
    grid = block = one;
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, block, one, one);
  Block &body = launch.getBody().front();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(b, loc);
  return launch;
}

/// Ops the host runs: no memory reads or writes, no regions (sizes,
/// views, constants, the weights' addresses).
bool runsOnHost(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

/// ceil((ub - lb) / step), folded when all three are constants.
Value tripCount(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (l && u && s && *s > 0)
    return arith::ConstantIndexOp::create(b, loc, std::max<int64_t>(0, (*u - *l + *s - 1) / *s));
  Value span = arith::SubIOp::create(b, loc, ub, lb);
  return arith::CeilDivUIOp::create(b, loc, span, step);
}

struct GpuMapLoopsPass : public kiln::impl::GpuMapLoopsPassBase<GpuMapLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("--target=cuda: a function with several blocks is not supported yet");
        return signalPassFailure();
      }
      if (failed(toLoops(func)) || failed(mapFunction(func)) || failed(checkKernels(func)))
        return signalPassFailure();
    }
  }

  /// The function's linalg ops as loop nests, their parallel dims first
  /// (one scf.parallel, the reductions inside it).
  LogicalResult toLoops(func::FuncOp func) {
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(func.getContext());
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
        SmallVector<unsigned> order;
        SmallVector<utils::IteratorType> kinds = generic.getIteratorTypesArray();
        for (unsigned i = 0; i < kinds.size(); ++i)
          if (kinds[i] == utils::IteratorType::parallel)
            order.push_back(i);
        for (unsigned i = 0; i < kinds.size(); ++i)
          if (kinds[i] != utils::IteratorType::parallel)
            order.push_back(i);
        if (!llvm::equal(order, llvm::seq<unsigned>(0, kinds.size()))) {
          FailureOr<linalg::GenericOp> moved =
              linalg::interchangeGenericOp(rewriter, generic, order);
          if (failed(moved))
            return generic.emitError("--target=cuda: cannot put this op's parallel dims first");
          op = *moved;
        }
      }
      if (failed(linalg::linalgOpToParallelLoops(rewriter, op)))
        return op.emitError("--target=cuda: cannot turn this op into loops");
      rewriter.eraseOp(op);
    }
    return success();
  }

  LogicalResult mapFunction(func::FuncOp func) {
    Block &body = func.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    // Values computed on the GPU, and the ops gathered for the next launch
    // of one thread (host ops may sit between them: they move nothing).
    DenseSet<Value> onDevice;
    SmallVector<Operation *> serial;
    llvm::SmallPtrSet<Operation *, 16> inSerial;
    auto flush = [&]() -> LogicalResult {
      if (serial.empty())
        return success();
      LogicalResult result = runSerially(serial);
      serial.clear();
      inSerial.clear();
      return result;
    };
    for (Operation *op : ops) {
      if (auto loop = dyn_cast<scf::ParallelOp>(op); loop && loop.getNumResults() == 0) {
        if (failed(flush()))
          return failure();
        mapParallel(loop);
        continue;
      }
      if (isa<memref::AllocOp, memref::AllocaOp>(op))
        return op->emitError("--target=cuda: an allocation outside the workspace is not "
                             "supported yet");
      // A host op that reads a GPU value joins the launch of the op that
      // computed it (a 0-d generic's body: load, arithmetic, store).
      bool readsDevice = llvm::any_of(op->getOperands(), [&](Value v) {
        return onDevice.contains(v);
      });
      if (runsOnHost(op) && !readsDevice)
        continue;
      for (Value v : op->getOperands())
        if (onDevice.contains(v) && !inSerial.contains(v.getDefiningOp()))
          return op->emitError("--target=cuda: this op needs a tensor's values on the host "
                               "(a size, an index or a condition known only at run time); "
                               "not supported yet");
      serial.push_back(op);
      inSerial.insert(op);
      for (Value v : op->getResults())
        onDevice.insert(v);
    }
    return flush();
  }

  /// Kernels call nothing: the runtime's functions (strings) are host code.
  LogicalResult checkKernels(func::FuncOp func) {
    WalkResult walk = func.walk([&](gpu::LaunchOp launch) {
      WalkResult inner = launch.getBody().walk([&](CallOpInterface call) {
        auto callee = dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
        call->emitError() << "--target=cuda: "
                          << (callee ? "'" + callee.getLeafReference().str() + "'" : "a call")
                          << " runs on the host (strings, the runtime's helpers); not "
                             "supported on the GPU";
        return WalkResult::interrupt();
      });
      return inner.wasInterrupted() ? WalkResult::interrupt() : WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  /// One thread per iteration of `loop`.
  void mapParallel(scf::ParallelOp loop) {
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    unsigned rank = loop.getNumLoops();
    SmallVector<Value> counts;
    Value total;
    for (unsigned i = 0; i < rank; ++i) {
      Value count = tripCount(b, loc, loop.getLowerBound()[i], loop.getUpperBound()[i],
                              loop.getStep()[i]);
      counts.push_back(count);
      total = total ? b.createOrFold<arith::MulIOp>(loc, total, count) : count;
    }
    std::optional<int64_t> staticTotal = getConstantIntValue(total);
    int64_t threads = blockSize;
    if (staticTotal)
      threads = std::max<int64_t>(1, std::min<int64_t>(threads, *staticTotal));
    Value block = arith::ConstantIndexOp::create(b, loc, threads);
    Value grid = b.createOrFold<arith::CeilDivUIOp>(loc, total, block);
    gpu::LaunchOp launch = createLaunch(b, loc, grid, block);

    Block &kernel = launch.getBody().front();
    b.setInsertionPointToStart(&kernel);
    Value index = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, launch.getBlockSize().x),
        launch.getThreadIds().x);

    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, total);
    auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    // The last dim fastest.
    SmallVector<Value> ivs(rank);
    Value rest = index;
    for (unsigned i = rank; i-- > 0;) {
      Value j = i == 0 ? rest : b.createOrFold<arith::RemUIOp>(loc, rest, counts[i]);
      if (i != 0)
        rest = b.createOrFold<arith::DivUIOp>(loc, rest, counts[i]);
      ivs[i] = b.createOrFold<arith::AddIOp>(
          loc, loop.getLowerBound()[i], b.createOrFold<arith::MulIOp>(loc, j, loop.getStep()[i]));
    }
    IRMapping map;
    map.map(loop.getInductionVars(), ivs);
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, map);
    loop.erase();
  }

  /// `ops` (in order, host ops that move nothing maybe between them) in a
  /// launch of one thread after the last of them.
  LogicalResult runSerially(ArrayRef<Operation *> ops) {
    llvm::SmallPtrSet<Operation *, 8> inside(ops.begin(), ops.end());
    for (Operation *op : ops)
      for (Value v : op->getResults())
        for (Operation *user : v.getUsers())
          if (!inside.contains(user) &&
              !llvm::any_of(ops, [&](Operation *o) { return o->isProperAncestor(user); }))
            return op->emitError("--target=cuda: the host needs a value computed on the GPU "
                                 "(a size, an index or a condition known only at run time); "
                                 "not supported yet");
    OpBuilder b(ops.back()->getContext());
    b.setInsertionPointAfter(ops.back());
    gpu::LaunchOp launch = createLaunch(b, ops.front()->getLoc());
    Operation *end = launch.getBody().front().getTerminator();
    for (Operation *op : ops)
      op->moveBefore(end);
    return success();
  }
};

} // namespace
