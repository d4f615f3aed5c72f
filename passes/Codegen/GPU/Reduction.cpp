//===- Reduction.cpp - GPU reductions across a block's threads --*- C++ -*-===//
//
// A linalg reduction as one gpu.launch in which a group of T threads (a
// power of two, 32 to 256) computes each output (Reduction.h says when).
// A block of 256 threads holds 256 / T groups (fewer when there are fewer
// outputs); group g of block x computes output x * (256 / T) + g, its
// parallel dims delinearised from that index (the last fastest). Lane l of
// the group combines reduction steps l, l + T, l + 2T, ... (the reduction
// dims linearised, the last fastest, so that neighbouring lanes read
// neighbouring elements along the innermost reduction dim) into a partial
// value that starts at the combiner's identity, by the op's own body with
// the running value in place of the output's element. The partials go to
// shared memory and are combined pairwise between barriers (lane l < s
// takes l + s, s = T/2, ..., 32); the group's first warp then combines its
// 32 values by xor shuffles (offsets 16, ..., 1: no shared memory, no
// barrier), after which every lane of it holds the total, and lane 0
// combines the output's initial value (or the folded fill's) with it and
// stores it. A group of 32 skips shared memory altogether. Values other
// than 32-bit ones (which shfl.sync moves) take the shared-memory steps
// down to s = 1, lane 0 reading the total.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/GPU/Reduction.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "passes/Codegen/GPU/Contraction.h"
#include "passes/Codegen/CPU/Contraction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace {

constexpr int64_t kBlock = 256;         // threads a block
constexpr int64_t kMinSteps = 32;       // reduction steps an output needs
constexpr int64_t kFewOutputs = 4096;   // below, any layout gains
constexpr int64_t kStepsPerThread = 4;  // at least, when T allows
constexpr unsigned kMaxOutputs = 4;
constexpr int64_t kWarp = 32;           // lanes a warp (gpu.shuffle's width)

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Whether `input`, a memref with unit innermost stride, has the loop dim
/// `dim` as its last index: consecutive steps along `dim` read consecutive
/// elements.
bool contiguousAlong(linalg::LinalgOp op, OpOperand *input, unsigned dim) {
  auto type = dyn_cast<MemRefType>(input->get().getType());
  if (!type || type.getRank() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return false;
  AffineMap map = op.getMatchingIndexingMap(input);
  auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
  return last && last.getPosition() == dim;
}

} // namespace

/// Whether `op`'s output `init` has one element per output of the
/// reduction, each written by exactly one of them: its map a permutation
/// of the parallel dims (zeros for unit dims allowed), its buffer as large
/// as the number of outputs (`outputs`, or with dynamic sizes: each dim
/// a zero indexes static and 1, the others the loops' sizes).
static bool writesAll(linalg::LinalgOp op, OpOperand &init, unsigned numParallel,
                      int64_t outputs) {
  auto type = dyn_cast<MemRefType>(init.get().getType());
  AffineMap map = op.getMatchingIndexingMap(&init);
  if (!type || !map.isProjectedPermutation(/*allowZeroInResults=*/true))
    return false;
  if (type.hasStaticShape() && type.getNumElements() != outputs)
    return false;
  for (unsigned d = 0; d < numParallel; ++d)
    if (!map.isFunctionOfDim(d))
      return false;
  if (!type.hasStaticShape())
    for (auto [r, e] : llvm::enumerate(map.getResults()))
      if (isa<AffineConstantExpr>(e) && type.getDimSize(r) != 1)
        return false;
  return true;
}

bool kiln::lowerBlockReduction(RewriterBase &rewriter, linalg::LinalgOp op, bool fuse,
                               SmallVectorImpl<Operation *> &folded) {
  if (!op.hasPureBufferSemantics())
    return false;
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  unsigned numLoops = kinds.size();
  unsigned numParallel = 0;
  while (numParallel < numLoops && kinds[numParallel] == utils::IteratorType::parallel)
    ++numParallel;
  if (numParallel == numLoops ||
      llvm::any_of(ArrayRef(kinds).drop_front(numParallel),
                   [](utils::IteratorType t) { return t != utils::IteratorType::reduction; }))
    return false;
  // Sizes may be dynamic: the outputs (`outputs` kDynamic) and steps
  // (`steps` kDynamic) are then counted on the host.
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  int64_t outputs = kiln::onnx::product(ArrayRef(sizes).take_front(numParallel));
  int64_t steps = kiln::onnx::product(ArrayRef(sizes).drop_front(numParallel));
  bool dynamicOutputs = ShapedType::isDynamic(outputs);
  bool dynamicSteps = ShapedType::isDynamic(steps);
  if ((!dynamicSteps && steps < kMinSteps) || outputs == 0)
    return false;

  // The outputs: indexed by parallel dims only, not read as inputs, each
  // updated by one combiner `out (op) value` whose result is yielded and
  // used nowhere else.
  Block &body = op->getRegion(0).front();
  Operation *yield = body.getTerminator();
  unsigned numInputs = op.getNumDpsInputs();
  unsigned numOutputs = op.getNumDpsInits();
  if (numOutputs == 0 || numOutputs > kMaxOutputs)
    return false;
  SmallVector<Operation *> combiners;
  SmallVector<TypedAttr> identities;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (unsigned d = numParallel; d < numLoops; ++d)
      if (map.isFunctionOfDim(d))
        return false;
    if (llvm::any_of(op.getDpsInputOperands(),
                     [&](OpOperand *input) { return input->get() == init.get(); }))
      return false;
    unsigned i = init.getOperandNumber() - numInputs;
    BlockArgument acc = body.getArgument(numInputs + i);
    if (!acc.getType().isIntOrFloat() || !acc.hasOneUse())
      return false;
    Operation *combiner = *acc.getUsers().begin();
    std::optional<TypedAttr> identity = arith::getNeutralElement(combiner);
    if (!identity || combiner->getNumOperands() != 2 || combiner->getNumResults() != 1 ||
        combiner->getParentOp() != op.getOperation() || !combiner->getResult(0).hasOneUse() ||
        *combiner->getResult(0).getUsers().begin() != yield ||
        yield->getOperand(i) != combiner->getResult(0) ||
        combiner->getResult(0).getType() != acc.getType())
      return false;
    combiners.push_back(combiner);
    identities.push_back(*identity);
  }
  if (dynamicOutputs || outputs > kFewOutputs)
    for (OpOperand *input : op.getDpsInputOperands()) {
      if (!isa<MemRefType>(input->get().getType()))
        continue;
      AffineMap map = op.getMatchingIndexingMap(input);
      bool reduced = false;
      for (unsigned d = numParallel; d < numLoops; ++d)
        reduced |= map.isFunctionOfDim(d);
      if (reduced && !contiguousAlong(op, input, numLoops - 1))
        return false;
    }

  // The fill of an output just before (a sum's zeros, a max's -inf), when
  // the reduction writes every element it fills: its value is then the
  // start lane 0 combines with the total, and the fill goes.
  linalg::FillOp fill;
  unsigned filled = numOutputs;
  if (fuse)
    if (auto candidate =
            dyn_cast_or_null<linalg::FillOp>(kiln::contraction::initCandidate(op)))
      for (OpOperand &init : op.getDpsInitsMutable())
        if (candidate.getDpsInitOperand(0)->get() == init.get() &&
            candidate.getInputs()[0].getType() ==
                cast<MemRefType>(init.get().getType()).getElementType() &&
            writesAll(op, init, numParallel, outputs)) {
          fill = candidate;
          filled = init.getOperandNumber() - numInputs;
          break;
        }

  // T threads an output: a power of two with at least kStepsPerThread
  // steps each where that allows, 32 to 256; a warp when the steps are
  // counted at run time.
  int64_t group =
      dynamicSteps ? kWarp
                   : std::clamp<int64_t>(static_cast<int64_t>(llvm::bit_floor(
                                             static_cast<uint64_t>(steps / kStepsPerThread))),
                                         32, kBlock);
  int64_t groups = dynamicOutputs ? kBlock / group : std::min(kBlock / group, outputs);
  int64_t threads = group * groups;

  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  // Each loop dim's size: a constant, or with dynamic sizes the host's
  // value (the kernel takes it).
  SmallVector<OpFoldResult> sizeOf;
  if (dynamicOutputs || dynamicSteps) {
    for (Range range : op.createLoopRanges(rewriter, loc))
      sizeOf.push_back(range.size);
  } else {
    for (int64_t size : sizes)
      sizeOf.push_back(rewriter.getIndexAttr(size));
  }
  ArrayRef<OpFoldResult> parallelSizes = ArrayRef(sizeOf).take_front(numParallel);
  ArrayRef<OpFoldResult> reductionSizes = ArrayRef(sizeOf).drop_front(numParallel);
  // The product of `list` on the host (dynamic sizes only).
  auto hostProduct = [&](ArrayRef<OpFoldResult> list) {
    return getValueOrCreateConstantIndexOp(rewriter, loc,
                                           kiln::sizeProduct(rewriter, loc, list));
  };
  Value outputCount = dynamicOutputs ? hostProduct(parallelSizes) : Value();
  Value stepCount = dynamicSteps ? hostProduct(reductionSizes) : Value();
  Value blocks = dynamicOutputs
                     ? arith::CeilDivUIOp::create(rewriter, loc, outputCount,
                                                  index(rewriter, loc, groups))
                           .getResult()
                     : index(rewriter, loc, llvm::divideCeil(outputs, groups));
  Attribute workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  // The last log2(32) steps of the tree within a warp, by shuffles (no
  // shared memory, no barriers), when every value is 32 bits wide (what
  // shfl.sync moves); a group of 32 then needs no shared memory at all.
  bool shuffles = llvm::all_of(combiners, [](Operation *combiner) {
    Type type = combiner->getResult(0).getType();
    return type.isF32() || type.isInteger(32);
  });
  SmallVector<Type> sharedTypes;
  if (!shuffles || group > kWarp)
    for (Operation *combiner : combiners)
      sharedTypes.push_back(MemRefType::get({threads}, combiner->getResult(0).getType(),
                                            MemRefLayoutAttrInterface{}, workgroup));
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, blocks, index(rewriter, loc, 1),
      index(rewriter, loc, 1), index(rewriter, loc, threads), index(rewriter, loc, 1),
      index(rewriter, loc, 1), /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange{}, /*workgroupAttributions=*/sharedTypes);
  Block &kernel = launch.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&kernel);
  ValueRange shared = launch.getWorkgroupAttributions();
  Value tid = launch.getThreadIds().x;
  Value lane = b.createOrFold<arith::RemUIOp>(loc, tid, index(b, loc, group));
  Value output = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, index(b, loc, groups)),
      b.createOrFold<arith::DivUIOp>(loc, tid, index(b, loc, group)));
  // Every group has an output when the blocks hold a whole number of them.
  Value valid;
  if (dynamicOutputs)
    valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, output, outputCount);
  else if (outputs % groups != 0)
    valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, output,
                                  index(b, loc, outputs));
  SmallVector<Value> parallelIvs = kiln::delinearize(b, loc, output, parallelSizes);
  SmallVector<Value> identityValues;
  for (TypedAttr identity : identities)
    identityValues.push_back(arith::ConstantOp::create(b, loc, identity));

  // This lane's partial values.
  auto partialsOf = [&](OpBuilder &b, Location loc) -> SmallVector<Value> {
    auto loop = scf::ForOp::create(
        b, loc, lane, dynamicSteps ? stepCount : index(b, loc, steps), index(b, loc, group),
        identityValues,
        [&](OpBuilder &b, Location loc, Value step, ValueRange partials) {
          SmallVector<Value> ivs(parallelIvs);
          ivs.append(kiln::delinearize(b, loc, step, reductionSizes));
          IRMapping map;
          for (OpOperand *input : op.getDpsInputOperands()) {
            Value v = input->get();
            if (isa<MemRefType>(v.getType()))
              v = memref::LoadOp::create(
                  b, loc, v,
                  kiln::applyIndexingMap(b, loc, op.getMatchingIndexingMap(input), ivs));
            map.map(body.getArgument(input->getOperandNumber()), v);
          }
          for (unsigned i = 0; i < numOutputs; ++i)
            map.map(body.getArgument(numInputs + i), partials[i]);
          for (Operation &inner : body.without_terminator()) {
            if (auto idx = dyn_cast<linalg::IndexOp>(inner)) {
              map.map(idx.getResult(), ivs[idx.getDim()]);
              continue;
            }
            b.clone(inner, map);
          }
          SmallVector<Value> next;
          for (Value v : yield->getOperands())
            next.push_back(map.lookupOrDefault(v));
          scf::YieldOp::create(b, loc, next);
        });
    return SmallVector<Value>(loop.getResults());
  };
  SmallVector<Value> partials;
  if (valid) {
    auto guarded = scf::IfOp::create(
        b, loc, valid,
        [&](OpBuilder &b, Location loc) { scf::YieldOp::create(b, loc, partialsOf(b, loc)); },
        [&](OpBuilder &b, Location loc) { scf::YieldOp::create(b, loc, identityValues); });
    partials.assign(guarded.getResults().begin(), guarded.getResults().end());
  } else {
    partials = partialsOf(b, loc);
  }
  // `combiner` applied to (lhs, rhs): the running value is lhs.
  auto combine = [&](OpBuilder &b, unsigned i, Value lhs, Value rhs) {
    Operation *combiner = combiners[i];
    BlockArgument acc = body.getArgument(numInputs + i);
    IRMapping map;
    for (Value operand : combiner->getOperands())
      map.map(operand, operand == acc ? lhs : rhs);
    return b.clone(*combiner, map)->getResult(0);
  };
  // Lane 0 of each valid group combines the output's start (its initial
  // value, or the folded fill's) with the group's total.
  auto store = [&](OpBuilder &b, Location loc, ValueRange totals) {
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(b, loc, 0));
    if (valid)
      first = arith::AndIOp::create(b, loc, first, valid);
    scf::IfOp::create(b, loc, first, [&](OpBuilder &b, Location loc) {
      for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
        SmallVector<Value> at =
            kiln::applyIndexingMap(b, loc, op.getMatchingIndexingMap(&init), parallelIvs);
        Value start = i == filled ? fill.getInputs()[0]
                                  : memref::LoadOp::create(b, loc, init.get(), at).getResult();
        memref::StoreOp::create(b, loc, combine(b, i, start, totals[i]), init.get(), at);
      }
      scf::YieldOp::create(b, loc);
    });
  };
  // A warp's values combined by xor shuffles (offsets 16, ..., 1): every
  // lane of the warp ends with the total of the 32.
  auto warpTotals = [&](OpBuilder &b, Location loc, SmallVector<Value> values) {
    Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarp);
    for (int64_t offset = kWarp / 2; offset >= 1; offset /= 2) {
      Value by = arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
      for (unsigned i = 0; i < numOutputs; ++i) {
        Value theirs =
            gpu::ShuffleOp::create(b, loc, values[i], by, width, gpu::ShuffleMode::XOR)
                .getShuffleResult();
        values[i] = combine(b, i, values[i], theirs);
      }
    }
    return values;
  };

  if (shuffles && group == kWarp) {
    // A group is a warp: its partials go straight to the shuffles.
    store(b, loc, warpTotals(b, loc, partials));
  } else {
    for (auto [partial, buffer] : llvm::zip(partials, shared))
      memref::StoreOp::create(b, loc, partial, buffer, ValueRange{tid});
    gpu::BarrierOp::create(b, loc);
    // Pairwise in shared memory down to one warp's worth (with shuffles)
    // or to one value.
    int64_t last = shuffles ? kWarp : 1;
    for (int64_t half = group / 2; half >= last; half /= 2) {
      Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                                           index(b, loc, half));
      scf::IfOp::create(b, loc, active, [&](OpBuilder &b, Location loc) {
        Value other = arith::AddIOp::create(b, loc, tid, index(b, loc, half));
        for (unsigned i = 0; i < numOutputs; ++i) {
          Value mine = memref::LoadOp::create(b, loc, shared[i], ValueRange{tid});
          Value theirs = memref::LoadOp::create(b, loc, shared[i], ValueRange{other});
          memref::StoreOp::create(b, loc, combine(b, i, mine, theirs), shared[i],
                                  ValueRange{tid});
        }
        scf::YieldOp::create(b, loc);
      });
      // The lanes go on with the values they wrote last themselves: no
      // barrier after the last step.
      if (half > last)
        gpu::BarrierOp::create(b, loc);
    }
    // The group's first warp (lanes below 32: a whole warp, since groups
    // start at multiples of 32) reads its values and shuffles them;
    // without shuffles, lane 0 reads the total.
    Value reader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                                         index(b, loc, last));
    scf::IfOp::create(b, loc, reader, [&](OpBuilder &b, Location loc) {
      SmallVector<Value> values;
      for (unsigned i = 0; i < numOutputs; ++i)
        values.push_back(memref::LoadOp::create(b, loc, shared[i], ValueRange{tid}));
      store(b, loc, shuffles ? warpTotals(b, loc, values) : values);
      scf::YieldOp::create(b, loc);
    });
  }
  gpu::TerminatorOp::create(b, loc);
  if (fill)
    folded.push_back(fill);
  return true;
}
