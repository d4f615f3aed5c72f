//===- MapLoops.cpp - kiln-gpu-map-loops ------------------------*- C++ -*-===//
//
// The program's loop nests as GPU launches (see Passes.td): a top-level
// scf.parallel becomes one thread per iteration, everything else that
// touches memory one thread. The host keeps sizes, views and constants.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/GPU/Passes.h"
#include "passes/Codegen/GPU/Contraction.h"
#include "passes/Codegen/GPU/Reduction.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

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

/// ceil((ub - lb) / step) when all three are constants (step positive).
std::optional<int64_t> constantTripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return std::max<int64_t>(0, (*u - *l + *s - 1) / *s);
}

/// ceil((ub - lb) / step), folded when all three are constants.
Value tripCount(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  if (std::optional<int64_t> n = constantTripCount(lb, ub, step))
    return arith::ConstantIndexOp::create(b, loc, *n);
  Value span = arith::SubIOp::create(b, loc, ub, lb);
  return arith::CeilDivUIOp::create(b, loc, span, step);
}

/// A linalg op whose reductions follow its parallel dims, as one
/// scf.parallel over the parallel dims whose body loads each output element
/// once, runs the reductions as scf.for loops carrying it in a register
/// (iter_args), and stores it once. linalgOpToParallelLoops loads and
/// stores the output at every step of the reduction instead: on a GPU that
/// is a global-memory round trip per multiply-add, which LLVM cannot take
/// out of the loop since it cannot prove the output does not alias the
/// inputs. With `coarsen` > 1 a thread computes that many outputs (see
/// below). False when the op does not have that form (no reduction, an
/// output indexed by a reduction dim, an output that is also an input).
bool lowerWithAccumulators(RewriterBase &rewriter, linalg::LinalgOp op, int64_t coarsen) {
  if (!op.hasPureBufferSemantics())
    return false;
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  unsigned numParallel = 0;
  while (numParallel < kinds.size() && kinds[numParallel] == utils::IteratorType::parallel)
    ++numParallel;
  if (numParallel == kinds.size() ||
      llvm::any_of(ArrayRef(kinds).drop_front(numParallel),
                   [](utils::IteratorType t) { return t != utils::IteratorType::reduction; }))
    return false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (unsigned d = numParallel; d < kinds.size(); ++d)
      if (map.isFunctionOfDim(d))
        return false;
    for (OpOperand *input : op.getDpsInputOperands())
      if (input->get() == init.get())
        return false;
  }

  Location loc = op.getLoc();
  SmallVector<Range> ranges = op.createLoopRanges(rewriter, loc);
  auto bound = [&](OpFoldResult v) { return getValueOrCreateConstantIndexOp(rewriter, loc, v); };
  SmallVector<Value> lbs, ubs, steps;
  for (Range &r : ranges) {
    lbs.push_back(bound(r.offset));
    ubs.push_back(bound(r.size));
    steps.push_back(bound(r.stride));
  }
  Block &body = op->getRegion(0).front();

  // Coarsening: each thread computes `factor` outputs along a parallel dim
  // `coarse` that an input varying along the innermost parallel dim (the
  // one neighbouring threads walk) does not use, so that input's element is
  // loaded once for all of them at each step of the reduction (a
  // convolution's output channels share the input window; a matmul's rows
  // share B's column).
  int64_t factor = 1;
  unsigned coarse = 0;
  if (coarsen > 1 && numParallel >= 2) {
    unsigned inner = numParallel - 1;
    for (unsigned d = 0; d < inner && factor == 1; ++d) {
      std::optional<int64_t> trip = getConstantIntValue(ubs[d]);
      if (!trip || *trip % coarsen != 0 || !isConstantIntValue(lbs[d], 0) ||
          !isConstantIntValue(steps[d], 1) ||
          llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
            return !op.getMatchingIndexingMap(&init).isFunctionOfDim(d);
          }))
        continue;
      for (OpOperand *input : op.getDpsInputOperands()) {
        if (!isa<MemRefType>(input->get().getType()))
          continue;
        AffineMap map = op.getMatchingIndexingMap(input);
        if (map.isFunctionOfDim(inner) && !map.isFunctionOfDim(d)) {
          factor = coarsen;
          coarse = d;
          break;
        }
      }
    }
  }
  // Each coarsened output's parallel ivs, then the reduction's ivs.
  SmallVector<SmallVector<Value>> tiles;
  SmallVector<Value> reductionIvs;
  unsigned numOutputs = op.getNumDpsInits();

  // The body at each tile's ivs, the outputs' values `accs` (numOutputs per
  // tile): the yielded values, in the same order.
  auto compute = [&](OpBuilder &b, Location loc, ValueRange accs) {
    SmallVector<Value> results;
    // The first tile's loads, for the inputs the coarsened dim does not index.
    DenseMap<OpOperand *, Value> shared;
    for (auto [t, tile] : llvm::enumerate(tiles)) {
      SmallVector<Value> ivs(tile);
      ivs.append(reductionIvs);
      IRMapping map;
      for (OpOperand *input : op.getDpsInputOperands()) {
        Value v = input->get();
        AffineMap indexing = op.getMatchingIndexingMap(input);
        if (t > 0 && shared.count(input)) {
          v = shared[input];
        } else if (isa<MemRefType>(v.getType())) {
          v = memref::LoadOp::create(b, loc, v, kiln::applyIndexingMap(b, loc, indexing, ivs));
          if (factor > 1 && !indexing.isFunctionOfDim(coarse))
            shared[input] = v;
        }
        map.map(body.getArgument(input->getOperandNumber()), v);
      }
      for (unsigned i = 0; i < numOutputs; ++i)
        map.map(body.getArgument(op.getNumDpsInputs() + i), accs[t * numOutputs + i]);
      for (Operation &inner : body.without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          map.map(index.getResult(), ivs[index.getDim()]);
          continue;
        }
        b.clone(inner, map);
      }
      for (Value v : body.getTerminator()->getOperands())
        results.push_back(map.lookupOrDefault(v));
    }
    return results;
  };
  std::function<SmallVector<Value>(OpBuilder &, Location, unsigned, ValueRange)> reduce =
      [&](OpBuilder &b, Location loc, unsigned dim, ValueRange accs) -> SmallVector<Value> {
    if (dim == kinds.size())
      return compute(b, loc, accs);
    auto loop = scf::ForOp::create(
        b, loc, lbs[dim], ubs[dim], steps[dim], accs,
        [&](OpBuilder &b, Location loc, Value iv, ValueRange iter) {
          reductionIvs.push_back(iv);
          SmallVector<Value> next = reduce(b, loc, dim + 1, iter);
          reductionIvs.pop_back();
          scf::YieldOp::create(b, loc, next);
        });
    return SmallVector<Value>(loop.getResults());
  };
  auto element = [&](OpBuilder &b, Location loc, ValueRange parallelIvs) {
    tiles.clear();
    for (int64_t t = 0; t < factor; ++t) {
      SmallVector<Value> ivs(parallelIvs);
      if (t > 0)
        ivs[coarse] = arith::AddIOp::create(b, loc, ivs[coarse],
                                            arith::ConstantIndexOp::create(b, loc, t));
      tiles.push_back(ivs);
    }
    auto outputIndices = [&](OpOperand &init, ValueRange ivs) {
      return kiln::applyIndexingMap(b, loc, op.getMatchingIndexingMap(&init), ivs);
    };
    SmallVector<Value> accs;
    for (SmallVector<Value> &ivs : tiles)
      for (OpOperand &init : op.getDpsInitsMutable())
        accs.push_back(memref::LoadOp::create(b, loc, init.get(), outputIndices(init, ivs)));
    SmallVector<Value> results = reduce(b, loc, numParallel, accs);
    for (auto [t, ivs] : llvm::enumerate(tiles))
      for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
        memref::StoreOp::create(b, loc, results[t * numOutputs + i], init.get(),
                                outputIndices(init, ivs));
  };
  if (numParallel == 0) {
    element(rewriter, loc, {});
  } else {
    auto n = static_cast<std::ptrdiff_t>(numParallel);
    SmallVector<Value> parallelSteps(ArrayRef(steps).take_front(n));
    if (factor > 1)
      parallelSteps[coarse] = arith::ConstantIndexOp::create(rewriter, loc, factor);
    scf::ParallelOp::create(rewriter, loc, ArrayRef(lbs).take_front(n),
                            ArrayRef(ubs).take_front(n), parallelSteps, element);
  }
  return true;
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
      // Both, so that every op refused is named.
      bool mapped = succeeded(mapBlock(func.getBody().front()));
      if (!succeeded(checkKernels(func)) || !mapped)
        return signalPassFailure();
    }
  }

  /// `ops` as loop nests, their parallel dims first (one scf.parallel, the
  /// reductions inside it). With `kernels` (ops in a block the host runs),
  /// first the contractions the tiled kernels take, with what they fold in
  /// around them, and reductions as block reductions where they gain.
  LogicalResult lowerLinalg(ArrayRef<linalg::LinalgOp> ops, bool kernels) {
    IRRewriter rewriter(&getContext());
    // The ops still to lower; those a kernel took (itself, or folded into
    // another's) become null.
    SmallVector<Operation *> pending(ops.begin(), ops.end());
    auto erase = [&](ArrayRef<Operation *> dead) {
      for (Operation *op : dead) {
        std::replace(pending.begin(), pending.end(), op, static_cast<Operation *>(nullptr));
        rewriter.eraseOp(op);
      }
    };
    if (kernels && tileContractions) {
      for (unsigned i = 0; i < pending.size(); ++i) {
        if (!pending[i])
          continue;
        SmallVector<Operation *> folded;
        kiln::TiledContractionOptions options;
        options.fuse = fuseEpilogues;
        options.tf32 = tf32;
        options.asyncCopies = asyncCopies;
        if (!kiln::lowerTiledContraction(rewriter, cast<linalg::LinalgOp>(pending[i]), options,
                                         folded))
          continue;
        folded.push_back(pending[i]);
        erase(folded);
      }
    }
    // Then the block reductions (each with the fill before it), the rest
    // as loops after, so that a fill a reduction folds in is still there.
    for (unsigned i = 0; i < pending.size(); ++i) {
      if (!pending[i])
        continue;
      auto op = cast<linalg::LinalgOp>(pending[i]);
      rewriter.setInsertionPoint(op);
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
        SmallVector<unsigned> order;
        SmallVector<utils::IteratorType> kinds = generic.getIteratorTypesArray();
        for (unsigned d = 0; d < kinds.size(); ++d)
          if (kinds[d] == utils::IteratorType::parallel)
            order.push_back(d);
        for (unsigned d = 0; d < kinds.size(); ++d)
          if (kinds[d] != utils::IteratorType::parallel)
            order.push_back(d);
        if (!llvm::equal(order, llvm::seq<unsigned>(0, kinds.size()))) {
          FailureOr<linalg::GenericOp> moved =
              linalg::interchangeGenericOp(rewriter, generic, order);
          if (failed(moved))
            return generic.emitError("--target=cuda: cannot put this op's parallel dims first");
          op = *moved;
          pending[i] = op;
        }
      }
      SmallVector<Operation *> folded;
      if (kernels && blockReductions &&
          kiln::lowerBlockReduction(rewriter, op, fuseEpilogues, folded)) {
        folded.push_back(op);
        erase(folded);
      }
    }
    for (Operation *next : pending) {
      if (!next)
        continue;
      auto op = cast<linalg::LinalgOp>(next);
      rewriter.setInsertionPoint(op);
      if (!lowerWithAccumulators(rewriter, op, coarsen) &&
          failed(linalg::linalgOpToParallelLoops(rewriter, op)))
        return op.emitError("--target=cuda: cannot turn this op into loops");
      rewriter.eraseOp(op);
    }
    return success();
  }

  /// The linalg ops inside `op`'s regions, at any depth.
  static SmallVector<linalg::LinalgOp> nestedLinalg(Operation *op) {
    SmallVector<linalg::LinalgOp> ops;
    for (Region &region : op->getRegions())
      region.walk([&](linalg::LinalgOp inner) { ops.push_back(inner); });
    return ops;
  }

  /// Whether `op`, an op with regions, would run its regions on the host
  /// (mapped as a function's body is) rather than in one GPU thread: loops
  /// and branches (scf.for, scf.if, scf.while) holding parallel work, of
  /// at least kHostWork iterations (fewer run faster in the one thread
  /// than as launches), and branches that choose a buffer (only the host
  /// can pass it on to the kernels after them).
  static bool worthRunningOnHost(Operation *op) {
    constexpr int64_t kHostWork = 32;
    if (!isa<scf::ForOp, scf::IfOp, scf::WhileOp>(op))
      return false;
    if (isa<scf::IfOp>(op) && llvm::any_of(op->getResultTypes(), llvm::IsaPred<MemRefType>))
      return true;
    auto atLeast = [&](ArrayRef<int64_t> sizes) {
      int64_t total = 1;
      for (int64_t s : sizes) {
        if (ShapedType::isDynamic(s) || s >= kHostWork)
          return true;
        total *= std::max<int64_t>(s, 0);
        if (total >= kHostWork)
          return true;
      }
      return false;
    };
    WalkResult found = op->walk([&](Operation *inner) {
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(inner))
        return atLeast(linalgOp.getStaticLoopRanges()) ? WalkResult::interrupt()
                                                        : WalkResult::advance();
      if (auto loop = dyn_cast<scf::ParallelOp>(inner)) {
        SmallVector<int64_t> trips;
        for (auto [lb, ub, step] :
             llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
          trips.push_back(constantTripCount(lb, ub, step).value_or(ShapedType::kDynamic));
        return atLeast(trips) ? WalkResult::interrupt() : WalkResult::advance();
      }
      return WalkResult::advance();
    });
    return found.wasInterrupted();
  }

  /// Maps `op` (an op with regions) to run on the host: a copy of it, its
  /// blocks mapped, replaces it. False, with nothing changed and nothing
  /// reported, when a block cannot be mapped so (a value the host would
  /// need is computed in one GPU thread, such as a count carried out of a
  /// sequential loop): it then runs in one thread as a whole.
  bool mapOnHost(Operation *op) {
    OpBuilder b(op);
    Operation *copy = b.clone(*op);
    bool mapped = true;
    {
      ScopedDiagnosticHandler quiet(&getContext(), [](Diagnostic &) { return success(); });
      for (Region &region : copy->getRegions())
        for (Block &block : region)
          mapped &= succeeded(mapBlock(block));
    }
    if (!mapped) {
      copy->erase();
      return false;
    }
    op->replaceAllUsesWith(copy);
    op->erase();
    return true;
  }

  /// Maps a block the host runs (a function's body, or a region of a loop
  /// or branch the host runs): its linalg ops become launches and loops,
  /// its ops with regions run on the host (mapOnHost) or in one thread, and
  /// what touches memory otherwise runs in launches of one thread.
  LogicalResult mapBlock(Block &body) {
    SmallVector<linalg::LinalgOp> direct;
    for (Operation &op : body)
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op))
        direct.push_back(linalgOp);
    if (failed(lowerLinalg(direct, /*kernels=*/true)))
      return failure();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    // Values computed on the GPU, and the ops gathered for the next launch
    // of one thread (host ops may sit between them: they move nothing).
    DenseSet<Value> onDevice;
    SmallVector<Operation *> serial;
    llvm::SmallPtrSet<Operation *, 16> inSerial;
    // Each op the mapping refuses is an error; the mapping goes on past it
    // (leaving it where it is), so that kiln check names every one.
    bool refused = false;
    auto flush = [&]() {
      if (serial.empty())
        return;
      refused |= failed(runSerially(serial));
      serial.clear();
      inSerial.clear();
    };
    for (Operation *op : ops) {
      if (isa<gpu::LaunchOp>(op)) { // A tiled contraction: mapped already.
        flush();
        continue;
      }
      if (auto loop = dyn_cast<scf::ParallelOp>(op); loop && loop.getNumResults() == 0) {
        flush();
        mapParallel(loop);
        continue;
      }
      if (isa<memref::AllocOp, memref::AllocaOp>(op)) {
        // A buffer with no elements (kiln-empty-arguments' stand-in for an
        // empty graph input or output) holds nothing to read or write: it
        // stays on the host.
        auto type = cast<MemRefType>(op->getResult(0).getType());
        if (type.hasStaticShape() && type.getNumElements() == 0)
          continue;
        op->emitError("--target=cuda: an allocation outside the workspace is not supported yet");
        refused = true;
        continue;
      }
      bool readsDevice = llvm::any_of(op->getOperands(), [&](Value v) {
        return onDevice.contains(v);
      });
      if (op->getNumRegions() != 0) {
        // A loop or branch with parallel work runs on the host, its body's
        // ops launched from there, when it reads nothing a launch before
        // it computes in this block.
        llvm::SetVector<Value> captured;
        getUsedValuesDefinedAbove(op->getRegions(), captured);
        if (!readsDevice && worthRunningOnHost(op) &&
            llvm::none_of(captured, [&](Value v) { return onDevice.contains(v); })) {
          flush();
          if (mapOnHost(op))
            continue;
        }
        // Else in one thread: its linalg ops as loops there.
        if (failed(lowerLinalg(nestedLinalg(op), /*kernels=*/false)))
          return failure();
      }
      // A load whose value the host needs (a size, an axis, a loop bound,
      // a value kernels take as a parameter) stays on the host, after the
      // launches before it: kiln-gpu-launch-to-runtime makes it a read of
      // device memory (kiln_cuda_read).
      if (isa<memref::LoadOp>(op) && !readsDevice && neededOnHost(op)) {
        flush();
        continue;
      }
      // A host op that reads a GPU value joins the launch of the op that
      // computed it (a 0-d generic's body: load, arithmetic, store).
      if (runsOnHost(op) && !readsDevice)
        continue;
      if (llvm::any_of(op->getOperands(), [&](Value v) {
            return onDevice.contains(v) && !inSerial.contains(v.getDefiningOp());
          })) {
        op->emitError("--target=cuda: this op needs a tensor's values on the host (a size, an "
                      "index or a condition known only at run time); not supported yet");
        refused = true;
        continue;
      }
      serial.push_back(op);
      inSerial.insert(op);
      for (Value v : op->getResults())
        onDevice.insert(v);
    }
    flush();
    return failure(refused);
  }

  /// Whether a value `load` (in a block the host runs) computes, itself or
  /// through host arithmetic, is used by an op with regions or inside one
  /// (a loop bound, a kernel's captured value), or yielded by a loop or
  /// branch the host runs (its condition, a value it carries): then the
  /// host needs it. Used only by loads and stores in its block, it runs in
  /// their launch.
  static bool neededOnHost(Operation *load) {
    Block *block = load->getBlock();
    SmallVector<Operation *> work = {load};
    llvm::SmallPtrSet<Operation *, 8> seen;
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      for (Operation *user : op->getUsers()) {
        if (user->getBlock() != block || user->getNumRegions() != 0 ||
            user->hasTrait<OpTrait::IsTerminator>())
          return true;
        if (runsOnHost(user) && seen.insert(user).second)
          work.push_back(user);
      }
    }
    return false;
  }

  /// Kernels call nothing: the runtime's functions (strings) are host code.
  LogicalResult checkKernels(func::FuncOp func) {
    bool calls = false;
    func.walk([&](gpu::LaunchOp launch) {
      launch.getBody().walk([&](CallOpInterface call) {
        auto callee = dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
        if (callee && callee.getLeafReference() == "kiln_string_export")
          call->emitError("--target=cuda: a graph output holds strings, which the host "
                          "copies out ('kiln_string_export'); not supported on the GPU");
        else
          call->emitError() << "--target=cuda: "
                            << (callee ? "'" + callee.getLeafReference().str() + "'" : "a call")
                            << " runs on the host (strings, the runtime's helpers); not "
                               "supported on the GPU";
        calls = true;
      });
    });
    return failure(calls);
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
