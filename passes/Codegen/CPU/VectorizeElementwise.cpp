//===- VectorizeElementwise.cpp - kiln-vectorize-elementwise pass ----------===//
//
// The innermost loop of a linalg.generic on f32 buffers becomes a loop over
// vectors when its dim is parallel and every operand either is contiguous
// along it (a vector load/store) or does not depend on it (a scalar load,
// broadcast). Operands of 8-, 16- and 32-bit integers may take part in
// those two ways (quantisation to int8, int32 accumulators' epilogues).
// The body's arith/math ops are rebuilt on vectors; the outer
// loops keep the generic's order, so every output element sees the same
// sequence of updates as in the scalar loops (reductions over outer dims
// included). A static tail is one masked vector.
//
// A generic whose innermost dim is a reduction instead (softmax's max and
// sum, LayerNorm's mean and variance, global pooling), with one output
// updated as out = combine(out, f(inputs)) for combine one of add, mul,
// min and max, is vectorised along that dim too: a vector of partial
// results per output element, reduced across lanes at the end and
// combined into the output once. That reassociates the sum (as every fast
// library does); max and min are exact.
//
// Operands that do not move along the vector are loaded once per row,
// before the vector loop, and what the body computes from them alone is
// hoisted out of it (LayerNorm's 1 / sqrt(var + eps)).
//
// Window generics (pooling, strided im2col copies), with the output's last
// dim parallel and reductions inside, are vectorised in
// VectorizeWindows.cpp.
//
// LLVM's loop vectoriser leaves most of these loops scalar (the math
// expansions' integer tricks, possible aliasing between workspace views),
// which made activations such as SiLU cost more than the convolutions.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/CPU/VectorHelpers.h"
#include "passes/Codegen/CPU/VectorizeLoops.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include <functional>

#define DEBUG_TYPE "kiln-vectorize-elementwise"

namespace kiln {
#define GEN_PASS_DEF_VECTORIZEELEMENTWISEPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

using kiln::vec::kMasked;
using kiln::vec::outerLoops;
using kiln::vec::stridesAlong;
using kiln::vec::vectorSteps;

namespace {

/// Whether vectors of `elem` may move: f32, 8-, 16- and 32-bit integers,
/// float16 and bfloat16.
bool vectorElement(Type elem) {
  return elem.isF32() || elem.isInteger(8) || elem.isInteger(16) || elem.isInteger(32) ||
         elem.isF16() || elem.isBF16();
}

/// How operand `operand` of `op` moves along loop dim `last`: 1 (in its
/// last index, contiguous: vector loads and stores), 0 (not at all: a
/// scalar, broadcast), the stride in elements of an input that has it in
/// another index (a transpose: gathered), or nullopt (the loop cannot be
/// vectorised).
std::optional<int64_t> alongLast(linalg::GenericOp op, OpOperand &operand, unsigned last) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type)
    return std::nullopt;
  // f32 moves in any of the ways below; 8-, 16- and 32-bit integers (a
  // quantisation's int8 output, an int32 accumulator's epilogue) and
  // float16/bfloat16 (extended to f32 in the body, the result rounded
  // back) only contiguously or not at all.
  Type elem = type.getElementType();
  bool isFloat = elem.isF32();
  if (!vectorElement(elem))
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  std::optional<unsigned> at;
  for (auto [j, e] : llvm::enumerate(map.getResults()))
    if (e.isFunctionOfDim(last))
      at = j;
  // A dynamic size only along the vector, in the last index with a unit
  // stride (a softmax's keys over a dynamic length): contiguous vectors,
  // the last one masked at run time.
  if (!type.hasStaticShape()) {
    int64_t rank = type.getRank();
    if (!at || *at + 1 != rank || llvm::count_if(type.getShape(), ShapedType::isDynamic) != 1 ||
        !type.isDynamicDim(rank - 1) || !kiln::vec::unitInnermostStride(operand.get()))
      return std::nullopt;
    return 1;
  }
  if (!at)
    return 0;
  if (*at + 1 == map.getNumResults() && kiln::vec::innermostContiguous(operand.get()))
    return 1;
  if (!isFloat)
    return std::nullopt;
  // A stride-2..4 window of a buffer (a Winograd conv's taps and its
  // output's parities): read and written through that buffer, shuffled.
  if (*at + 1 == map.getNumResults()) {
    std::optional<int64_t> stride = kiln::vec::windowStride(operand.get());
    if (!stride)
      return std::nullopt;
    return -*stride;
  }
  // vector.gather lowers for a unit innermost stride only.
  if (op.isDpsInit(&operand) || !kiln::vec::innermostContiguous(operand.get()))
    return std::nullopt;
  std::optional<int64_t> stride = kiln::contraction::staticStride(operand.get(), *at);
  if (!stride || *stride > (int64_t(1) << 20))
    return std::nullopt;
  return *stride;
}

/// The op that combines the output into the yielded value, when `op`'s
/// innermost dim is a reduction of its only output of the form
/// out = combine(out, f(inputs)), and the vector reduction it makes.
struct Combiner {
  Operation *op;
  vector::CombiningKind kind;
  float identity;
};

std::optional<Combiner> innermostReduction(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumResults())
    return std::nullopt;
  Block &body = op.getRegion().front();
  BlockArgument out = body.getArguments().back();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *c = yield.getValues()[0].getDefiningOp();
  if (!c || c->getBlock() != &body || c->getNumOperands() != 2 || !out.hasOneUse() ||
      *out.user_begin() != c)
    return std::nullopt;
  float inf = std::numeric_limits<float>::infinity();
  using Kind = vector::CombiningKind;
  if (isa<arith::AddFOp>(c))
    return Combiner{c, Kind::ADD, -0.0f};
  if (isa<arith::MulFOp>(c))
    return Combiner{c, Kind::MUL, 1.0f};
  if (isa<arith::MaximumFOp>(c))
    return Combiner{c, Kind::MAXIMUMF, -inf};
  if (isa<arith::MinimumFOp>(c))
    return Combiner{c, Kind::MINIMUMF, inf};
  if (isa<arith::MaxNumFOp>(c))
    return Combiner{c, Kind::MAXNUMF, -inf};
  if (isa<arith::MinNumFOp>(c))
    return Combiner{c, Kind::MINNUMF, inf};
  return std::nullopt;
}

/// A vector step reads all its lanes before writing any: an input that is
/// another view of an output's memory (or the same buffer read elsewhere)
/// would see different values than the scalar loop.
bool noAliasing(linalg::GenericOp op) {
  for (OpOperand *in : op.getDpsInputOperands())
    for (OpOperand &out : op.getDpsInitsMutable())
      if (kiln::vec::rootBuffer(in->get()) == kiln::vec::rootBuffer(out.get()) &&
          (in->get() != out.get() ||
           op.getMatchingIndexingMap(in) != op.getMatchingIndexingMap(&out)))
        return false;
  return true;
}

} // namespace

/// Declared in VectorHelpers.h.
bool kiln::vec::takesDynamicInnermost(linalg::GenericOp op) {
  unsigned n = op.getNumLoops();
  if (!n || !op.hasPureBufferSemantics() || !ShapedType::isDynamic(op.getStaticLoopRanges()[n - 1]) ||
      isMultiplyAccumulate(op) || isInt8MultiplyAccumulate(op) || !vectorisableBody(op) ||
      !noAliasing(op))
    return false;
  unsigned last = n - 1;
  bool reduces = op.getIteratorTypesArray()[last] != utils::IteratorType::parallel;
  if (reduces) {
    // An innermost reduction of one output, none of whose memory the
    // inputs read: its lanes of partial results stay in registers.
    Value out = op.getNumDpsInits() == 1 ? rootBuffer(op.getDpsInitOperand(0)->get()) : Value();
    if (!out || !innermostReduction(op) ||
        llvm::any_of(op.getDpsInputOperands(),
                     [&](OpOperand *in) { return rootBuffer(in->get()) == out; }))
      return false;
  }
  AffineExpr dim = getAffineDimExpr(last, op.getContext());
  return llvm::all_of(op->getOpOperands(), [&](OpOperand &operand) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!type || !vectorElement(type.getElementType()) ||
        !map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return false;
    bool moves = map.isFunctionOfDim(last);
    // Outputs move with the vector, or, for a reduction, not at all.
    if (op.isDpsInit(&operand) && moves == reduces)
      return false;
    return !moves || (map.getResults().back() == dim && unitInnermostStride(operand.get()));
  });
}

namespace {

class ElementwiseVectorizer {
public:
  ElementwiseVectorizer(linalg::GenericOp op, SmallVector<int64_t> vectorOperand, int64_t lanes,
                        bool parallel, std::optional<Combiner> combiner)
      : op(op), vectorOperand(std::move(vectorOperand)), lanes(lanes),
        ranges(op.getStaticLoopRanges()), parallelPending(parallel), combiner(combiner) {}

  void build() {
    OpBuilder b(op);
    SmallVector<Value> ivs(ranges.size());
    unsigned last = ranges.size() - 1;
    SmallVector<scf::ForOp> vectorLoops;
    if (std::optional<unsigned> q = blockDim())
      return buildBlocks(b, *q);
    if (ShapedType::isDynamic(ranges[last]))
      extent = dynamicExtent(b);
    SmallVector<unsigned> outerDims = llvm::to_vector(llvm::seq<unsigned>(0, last));
    outerLoops(b, op, ranges, outerDims, ivs, parallelPending,
               [&](OpBuilder &b, SmallVector<Value> &ivs) {
      IRMapping invariant = invariants(b, ivs);
      if (combiner) {
        if (scf::ForOp loop = reduceRow(b, ivs, invariant))
          vectorLoops.push_back(loop);
        return;
      }
      auto step = [&](OpBuilder &b, int64_t on) {
        store(b, ivs, on, compute(b, ivs, on, invariant));
      };
      scf::ForOp loop = extent ? vectorSteps(b, loc(), extent, lanes, ivs[last], tailMask, step)
                               : vectorSteps(b, loc(), ranges[last], lanes, ivs[last], step);
      if (loop)
        vectorLoops.push_back(loop);
    });
    // What the body computes from the row's scalars alone.
    for (scf::ForOp loop : vectorLoops)
      moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
  }

private:
  Location loc() { return op.getLoc(); }
  Value index(OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc(), v); }

  SmallVector<Value> indices(OpBuilder &b, AffineMap map, ArrayRef<Value> ivs) {
    return kiln::vec::permutedIndices(b, loc(), map, ivs);
  }

  VectorType vectorOf(Type t) { return VectorType::get({lanes}, t); }

  /// The size of the dynamic innermost dim, read from an operand that has
  /// it as its last index (alongLast).
  Value dynamicExtent(OpBuilder &b) {
    unsigned last = ranges.size() - 1;
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (map.getNumResults() && map.getResults().back() == b.getAffineDimExpr(last))
        return memref::DimOp::create(b, loc(), operand.get(), map.getNumResults() - 1);
    }
    llvm_unreachable("a dynamic loop range is some operand's size");
  }

  /// `type` read at `idx` of `mem`, `on` lanes (kMasked: tailMask's).
  Value load(OpBuilder &b, Value mem, ValueRange idx, VectorType type, int64_t on) {
    return on == kMasked ? kiln::vec::load(b, loc(), mem, idx, type, tailMask)
                         : kiln::vec::load(b, loc(), mem, idx, type, on);
  }

  /// The dim q when the op transposes: every gathered input (a stride
  /// beyond kMaxShuffledStride along the vector dim p) has q as its
  /// contiguous last index, and every loop is parallel. It then runs in
  /// blocks of lanes x lanes of (q, p): each gathered input's block read
  /// as `lanes` contiguous vectors along q and transposed in registers
  /// (kiln::vec::transposeRows), 16 loads and 64 shuffles where the
  /// gathers took 256 element loads (a transposed key in attention).
  std::optional<unsigned> blockDim() {
    unsigned last = ranges.size() - 1;
    if (combiner || !llvm::isPowerOf2_64(lanes) ||
        llvm::any_of(op.getIteratorTypesArray(),
                     [](utils::IteratorType t) { return t != utils::IteratorType::parallel; }))
      return std::nullopt;
    std::optional<unsigned> q;
    for (OpOperand &operand : op->getOpOperands()) {
      int64_t along = vectorOperand[operand.getOperandNumber()];
      if (along >= 0 && along <= kiln::vec::kMaxShuffledStride)
        continue;
      if (along < 0)
        return std::nullopt; // A strided window: not with blocks.
      auto dim = dyn_cast<AffineDimExpr>(op.getMatchingIndexingMap(&operand).getResults().back());
      if (!dim || dim.getPosition() == last || (q && *q != dim.getPosition()))
        return std::nullopt;
      q = dim.getPosition();
    }
    if (!q || ShapedType::isDynamic(ranges[last]) || ranges[*q] < lanes / 2 ||
        ranges[last] < lanes / 2)
      return std::nullopt;
    for (OpOperand &out : op.getDpsInitsMutable())
      if (!op.getMatchingIndexingMap(&out).isPermutation())
        return std::nullopt;
    return q;
  }

  /// The op in blocks of (q, p) (blockDim): loops over the other dims,
  /// then blocks of q, then vector steps along p.
  void buildBlocks(OpBuilder &b, unsigned q) {
    unsigned last = ranges.size() - 1;
    SmallVector<Value> ivs(ranges.size());
    SmallVector<unsigned> outerDims;
    for (unsigned d = 0; d < last; ++d)
      if (d != q)
        outerDims.push_back(d);
    SmallVector<scf::ForOp> vectorLoops;
    outerLoops(b, op, ranges, outerDims, ivs, parallelPending,
               [&](OpBuilder &b, SmallVector<Value> &ivs) {
      Value qStart;
      scf::ForOp blocks =
          vectorSteps(b, loc(), ranges[q], lanes, qStart, [&](OpBuilder &b, int64_t qOn) {
            scf::ForOp loop = vectorSteps(b, loc(), ranges[last], lanes, ivs[last],
                                          [&](OpBuilder &b, int64_t pOn) {
                                            block(b, ivs, q, qStart, qOn, pOn);
                                          });
            if (loop)
              vectorLoops.push_back(loop);
          });
      // No other loop to share (a 2-D transpose): the blocks of q are
      // independent, each writing its own rows of the output.
      if (parallelPending && blocks) {
        blocks->setAttr("kiln.parallel", UnitAttr::get(blocks.getContext()));
        parallelPending = false;
      }
    });
    for (scf::ForOp loop : vectorLoops)
      moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
  }

  /// One block: `qOn` values of q from `qStart`, `pOn` lanes of p from
  /// ivs[p]. Each gathered input's `pOn` rows (one per p, contiguous
  /// along q; the others zero) are transposed into one vector along p
  /// per q; then the body runs and stores once per q.
  void block(OpBuilder &b, SmallVector<Value> &ivs, unsigned q, Value qStart, int64_t qOn,
             int64_t pOn) {
    unsigned last = ranges.size() - 1;
    Block &body = op.getRegion().front();
    VectorType type = vectorOf(b.getF32Type());
    Value p0 = ivs[last];
    Value zero = arith::ConstantOp::create(b, loc(), type, b.getZeroAttr(type));
    // Per gathered input: the vector along p for each q of the block.
    SmallVector<std::pair<BlockArgument, SmallVector<Value>>> columns;
    for (OpOperand *in : op.getDpsInputOperands()) {
      BlockArgument arg = body.getArgument(in->getOperandNumber());
      if (arg.use_empty() || vectorOperand[in->getOperandNumber()] <= kiln::vec::kMaxShuffledStride)
        continue;
      SmallVector<Value> rows;
      ivs[q] = qStart;
      for (int64_t r = 0; r < lanes; ++r) {
        if (r >= pOn) {
          rows.push_back(zero);
          continue;
        }
        ivs[last] = r ? arith::AddIOp::create(b, loc(), p0, index(b, r)).getResult() : p0;
        SmallVector<Value> idx = indices(b, op.getMatchingIndexingMap(in), ivs);
        rows.push_back(kiln::vec::load(b, loc(), in->get(), idx, type, qOn));
      }
      kiln::vec::Transposed tr = kiln::vec::transposeRows(b, loc(), rows);
      SmallVector<Value> byColumn(lanes);
      for (auto [k, cols] : llvm::enumerate(tr.columns))
        byColumn[cols.front()] = tr.vectors[k];
      columns.push_back({arg, byColumn});
    }
    for (int64_t c = 0; c < qOn; ++c) {
      ivs[q] = c ? arith::AddIOp::create(b, loc(), qStart, index(b, c)).getResult() : qStart;
      IRMapping map = invariants(b, ivs);
      ivs[last] = p0;
      for (auto &[arg, byColumn] : columns)
        map.map(arg, byColumn[c]);
      store(b, ivs, pOn, compute(b, ivs, pOn, map));
    }
  }

  Value splat(OpBuilder &b, Value scalar) {
    return vector::BroadcastOp::create(b, loc(), vectorOf(scalar.getType()), scalar);
  }

  /// The inputs that do not move along the vector, loaded (and
  /// broadcast) once per row at `ivs` (the vector dim's index unused).
  IRMapping invariants(OpBuilder &b, SmallVector<Value> &ivs) {
    Block &body = op.getRegion().front();
    IRMapping map;
    unsigned last = ranges.size() - 1;
    ivs[last] = index(b, 0);
    for (OpOperand *in : op.getDpsInputOperands()) {
      BlockArgument arg = body.getArgument(in->getOperandNumber());
      if (arg.use_empty() || vectorOperand[in->getOperandNumber()])
        continue;
      SmallVector<Value> idx = indices(b, op.getMatchingIndexingMap(in), ivs);
      map.map(arg, splat(b, memref::LoadOp::create(b, loc(), in->get(), idx)));
    }
    return map;
  }

  /// The body on vectors at `ivs` with the first `on` lanes in bounds:
  /// the vector operands loaded, the others from `invariant`; for a
  /// reduction the output's argument is `acc`.
  SmallVector<Value> compute(OpBuilder &b, ArrayRef<Value> ivs, int64_t on,
                             const IRMapping &invariant, Value acc = {}) {
    Block &body = op.getRegion().front();
    IRMapping map = invariant;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = body.getArgument(operand.getOperandNumber());
      if (arg.use_empty() || map.contains(arg))
        continue;
      if (combiner && op.isDpsInit(&operand)) {
        map.map(arg, acc);
        continue;
      }
      SmallVector<Value> idx = indices(b, op.getMatchingIndexingMap(&operand), ivs);
      int64_t stride = vectorOperand[operand.getOperandNumber()];
      if (stride == 1) {
        map.map(arg, load(b, operand.get(), idx, vectorOf(arg.getType()), on));
        continue;
      }
      if (stride < 0) {
        auto [mem, at] = kiln::vec::throughWindow(b, loc(), operand.get(), idx);
        map.map(arg, kiln::vec::stridedLoad(b, loc(), mem, at, lanes, -stride, on));
        continue;
      }
      // Strided (a transpose's input): shuffled from a wide load, or
      // gathered.
      map.map(arg, kiln::vec::stridedLoad(b, loc(), operand.get(), idx, lanes, stride, on));
    }
    return kiln::vec::vectorizeBody(b, op, map, lanes);
  }

  void store(OpBuilder &b, ArrayRef<Value> ivs, int64_t on, ArrayRef<Value> results) {
    for (auto [i, value] : llvm::enumerate(results)) {
      OpOperand *out = op.getDpsInitOperand(i);
      SmallVector<Value> idx = indices(b, op.getMatchingIndexingMap(out), ivs);
      int64_t stride = vectorOperand[out->getOperandNumber()];
      if (stride < 0) {
        auto [mem, at] = kiln::vec::throughWindow(b, loc(), out->get(), idx);
        kiln::vec::stridedStore(b, loc(), value, mem, at, -stride, on);
        continue;
      }
      if (on == kMasked)
        kiln::vec::store(b, loc(), value, out->get(), idx, tailMask);
      else
        kiln::vec::store(b, loc(), value, out->get(), idx, on);
    }
  }

  /// One output element of an innermost reduction at `ivs`: lanes of
  /// partial results over the row, the tail's masked lanes kept at the
  /// identity, reduced across lanes and combined into the output. Returns
  /// the vector loop, if there is one.
  scf::ForOp reduceRow(OpBuilder &b, SmallVector<Value> &ivs, const IRMapping &invariant) {
    unsigned last = ranges.size() - 1;
    int64_t n = ranges[last], full = n / lanes, rest = n % lanes;
    VectorType type = vectorOf(b.getF32Type());
    Value acc = arith::ConstantOp::create(b, loc(), type,
                                          DenseElementsAttr::get(type, combiner->identity));
    scf::ForOp loop;
    if (extent) {
      // The full vectors to extent - extent % lanes, then the lanes left
      // under tailMask, if any.
      Value width = index(b, lanes);
      Value whole =
          arith::SubIOp::create(b, loc(), extent, arith::RemUIOp::create(b, loc(), extent, width));
      loop = scf::ForOp::create(b, loc(), index(b, 0), whole, width, ValueRange{acc});
      OpBuilder nb = OpBuilder::atBlockEnd(loop.getBody());
      ivs[last] = loop.getInductionVar();
      Value next = compute(nb, ivs, lanes, invariant, loop.getRegionIterArgs()[0])[0];
      scf::YieldOp::create(nb, loc(), next);
      acc = loop.getResult(0);
      Value left = arith::SubIOp::create(b, loc(), extent, whole);
      Value any = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ne, left, index(b, 0));
      auto tail = scf::IfOp::create(b, loc(), TypeRange{type}, any, /*withElseRegion=*/true);
      OpBuilder tb = OpBuilder::atBlockEnd(tail.thenBlock());
      tailMask = vector::CreateMaskOp::create(tb, loc(), VectorType::get({lanes}, tb.getI1Type()),
                                              ValueRange{left});
      ivs[last] = whole;
      Value tailNext = compute(tb, ivs, kMasked, invariant, acc)[0];
      scf::YieldOp::create(tb, loc(),
                           arith::SelectOp::create(tb, loc(), tailMask, tailNext, acc).getResult());
      tailMask = nullptr;
      OpBuilder eb = OpBuilder::atBlockEnd(tail.elseBlock());
      scf::YieldOp::create(eb, loc(), acc);
      acc = tail.getResult(0);
      full = rest = 0;
    }
    if (full) {
      loop = scf::ForOp::create(b, loc(), index(b, 0), index(b, full * lanes), index(b, lanes),
                                ValueRange{acc});
      OpBuilder nb = OpBuilder::atBlockEnd(loop.getBody());
      ivs[last] = loop.getInductionVar();
      Value next = compute(nb, ivs, lanes, invariant, loop.getRegionIterArgs()[0])[0];
      scf::YieldOp::create(nb, loc(), next);
      acc = loop.getResult(0);
    }
    if (rest) {
      ivs[last] = index(b, full * lanes);
      Value next = compute(b, ivs, rest, invariant, acc)[0];
      acc = arith::SelectOp::create(b, loc(), kiln::vec::constantMask(b, loc(), lanes, rest),
                                    next, acc);
    }
    Value lanesReduced = vector::ReductionOp::create(b, loc(), combiner->kind, acc, Value(),
                                                     arith::FastMathFlags::reassoc);
    OpOperand *out = op.getDpsInitOperand(0);
    SmallVector<Value> idx = indices(b, op.getMatchingIndexingMap(out), ivs);
    Value old = memref::LoadOp::create(b, loc(), out->get(), idx);
    // The combiner itself, on the output and the lanes' result.
    IRMapping scalar;
    for (Value operand : combiner->op->getOperands())
      scalar.map(operand, isa<BlockArgument>(operand) &&
                                  cast<BlockArgument>(operand).getOwner() ==
                                      &op.getRegion().front() &&
                                  op.isDpsInit(op.getMatchingOpOperand(cast<BlockArgument>(operand)))
                              ? old
                              : lanesReduced);
    Value combined = b.clone(*combiner->op, scalar)->getResult(0);
    memref::StoreOp::create(b, loc(), combined, out->get(), idx);
    return loop;
  }

  linalg::GenericOp op;
  /// Per operand: alongLast's answer (negative: a strided window).
  SmallVector<int64_t> vectorOperand;
  int64_t lanes;
  SmallVector<int64_t> ranges;
  bool parallelPending; ///< No loop is marked kiln.parallel yet.
  std::optional<Combiner> combiner; ///< For an innermost reduction.
  /// The size of a dynamic innermost dim, read before the loops.
  Value extent;
  /// The lanes left of it, inside the step that takes them (kMasked).
  Value tailMask;
};

/// The reassociation of a rank-`rank` memref that merges dims `pos` and
/// `pos + 1` and keeps the others.
SmallVector<ReassociationIndices> collapsedGroups(int64_t rank, unsigned pos) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == int64_t(pos) + 1)
      groups.back().push_back(d);
    else
      groups.push_back({d});
  }
  return groups;
}

/// Reductions whose innermost dim is too short for vectors (a global
/// average pool over 7x7: rows of 7) get their two innermost reduction
/// dims collapsed into one (49) where every operand holds them
/// contiguously, so that the innermost reduction fills vectors.
void collapseShortReductions(Operation *root, int64_t lanes) {
  SmallVector<linalg::GenericOp> candidates;
  root->walk([&](linalg::GenericOp op) {
    unsigned n = op.getNumLoops();
    if (!op.hasPureBufferSemantics() || n < 2)
      return;
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (iters[n - 1] != utils::IteratorType::reduction ||
        iters[n - 2] != utils::IteratorType::reduction || ranges[n - 1] <= 0 ||
        ranges[n - 2] <= 0 || ranges[n - 1] >= lanes / 2)
      return;
    // Plain indexing only (a pooling window's oh * 2 + kh stays a window).
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    ReassociationIndices inner{n - 2, n - 1};
    if (!llvm::all_of(maps, [](AffineMap m) { return m.isProjectedPermutation(); }) ||
        !linalg::areDimSequencesPreserved(maps, {inner}))
      return;
    // memref.collapse_shape needs the two dims contiguous in memory.
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      AffineMap map = op.getMatchingIndexingMap(&operand);
      std::optional<unsigned> pos = map.getResultPosition(getAffineDimExpr(n - 2, op.getContext()));
      if (!type || (pos && !memref::CollapseShapeOp::isGuaranteedCollapsible(
                                type, collapsedGroups(type.getRank(), *pos))))
        return;
    }
    candidates.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  for (linalg::GenericOp op : candidates) {
    unsigned n = op.getNumLoops();
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::CollapseResult> collapsed = linalg::collapseOpIterationDims(
        cast<linalg::LinalgOp>(op.getOperation()), {ReassociationIndices{n - 2, n - 1}},
        rewriter);
    if (succeeded(collapsed))
      rewriter.eraseOp(op);
  }
}

struct VectorizeElementwisePass
    : public kiln::impl::VectorizeElementwisePassBase<VectorizeElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    if (vectorBits < 64 || vectorBits % 32)
      return;
    int64_t lanes = vectorBits / 32;
    collapseShortReductions(getOperation(), lanes);
    SmallVector<std::tuple<linalg::GenericOp, SmallVector<int64_t>, std::optional<Combiner>>>
        found;
    SmallVector<std::tuple<linalg::GenericOp, unsigned, SmallVector<int64_t>>> windows;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 || !kiln::vec::vectorisableBody(op))
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      unsigned last = op.getNumLoops() - 1;
      // A pool's window vectors along a dynamic output column dim, the
      // other dims static (kiln-strip-dynamic-dims' pieces).
      if (std::optional<unsigned> p = kiln::vec::dynamicWindowDim(op)) {
        if (llvm::all_of(llvm::seq<unsigned>(0, ranges.size()),
                         [&](unsigned d) { return d == *p || ranges[d] > 0; }))
          windows.push_back({op, *p, *stridesAlong(op, *p)});
        return;
      }
      // Static ranges, but for a dynamic innermost dim (the vectors run
      // along it, the last one masked at run time).
      bool dynamicLast = ShapedType::isDynamic(ranges[last]);
      if (llvm::any_of(ArrayRef(ranges).drop_back(), [](int64_t r) { return r <= 0; }) ||
          (dynamicLast ? !kiln::vec::takesDynamicInnermost(op) : ranges[last] <= 0))
        return;
      std::optional<Combiner> combiner;
      // Whether an input is the one output's memory (even the same view):
      // window ops hold the output's tile in registers while they read.
      auto readsOutputMemory = [&] {
        Value out = kiln::vec::rootBuffer(op.getDpsInitOperand(0)->get());
        return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
          return kiln::vec::rootBuffer(in->get()) == out;
        });
      };
      if (op.getIteratorTypesArray()[last] != utils::IteratorType::parallel) {
        // Vectors along the output's last dim with the reductions inside
        // (pooling windows), else along the innermost reduction when it is
        // long enough.
        // With the output's tile in registers across the reduction, no
        // input may be the output's memory (not even the same view).
        if (op.getNumDpsInits() != 1 || readsOutputMemory())
          return;
        AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
        if (!dynamicLast && outMap.getNumResults() &&
            outMap.isProjectedPermutation(/*allowZeroInResults=*/true) &&
            isa<AffineDimExpr>(outMap.getResults().back())) {
          unsigned p = cast<AffineDimExpr>(outMap.getResults().back()).getPosition();
          if (std::optional<SmallVector<int64_t>> strides = stridesAlong(op, p)) {
            windows.push_back({op, p, *strides});
            return;
          }
        }
        if ((!dynamicLast && ranges[last] < lanes / 2) || !(combiner = innermostReduction(op)))
          return;
      } else if (op.getNumDpsInits() == 1 &&
                 llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
                   return !op.getMatchingIndexingMap(in).isProjectedPermutation(
                       /*allowZeroInResults=*/true);
                 })) {
        // Every loop parallel, an input read through windows (a strided
        // conv's im2col copy: rows kh + oh * stride): as a window op
        // without reductions, vectors along the output's last dim.
        AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
        if (dynamicLast || readsOutputMemory() || !outMap.isPermutation() ||
            outMap.getResults().back() != getAffineDimExpr(last, op.getContext()))
          return;
        if (std::optional<SmallVector<int64_t>> strides = stridesAlong(op, last))
          windows.push_back({op, last, *strides});
        return;
      }
      SmallVector<int64_t> vectorOperand;
      for (OpOperand &operand : op->getOpOperands()) {
        std::optional<int64_t> along = alongLast(op, operand, last);
        // Outputs must move along the vector (each lane its own element),
        // or for a reduction not at all.
        if (!along || (op.isDpsInit(&operand) && bool(*along) == bool(combiner)))
          return;
        vectorOperand.push_back(*along);
      }
      if (!noAliasing(op))
        return;
      // Nothing gained when no operand moves with the loop.
      if (llvm::none_of(vectorOperand, [](int64_t v) { return v != 0; }))
        return;
      found.push_back({op, vectorOperand, combiner});
    });
    for (auto &[op, p, strides] : windows) {
      int64_t work = 1;
      for (int64_t r : op.getStaticLoopRanges())
        work *= ShapedType::isDynamic(r) ? kiln::contraction::kNominalExtent : r;
      // A constant fill of the output just before (a max pool's -inf)
      // becomes the tiles' starting value.
      // (Only a linalg.fill: generics are on the lists being vectorised.)
      Operation *before = kiln::contraction::initCandidate(op);
      std::optional<Value> init =
          isa_and_nonnull<linalg::FillOp>(before)
              ? kiln::vec::constantFill(before, op.getDpsInitOperand(0)->get())
              : std::nullopt;
      // Only when the op writes every element of the output (no constant
      // index in its map leaving some to the fill).
      if (init && (!init->getType().isF32() ||
                   !op.getMatchingIndexingMap(op.getDpsInitOperand(0))
                        .isProjectedPermutation(/*allowZeroInResults=*/false)))
        init.reset();
      kiln::vec::vectorizeWindow(op, p, strides, lanes,
                                 parallel && work >= kiln::vec::kElementwiseParallelWork &&
                                     !kiln::vec::insideParallelLoop(op),
                                 init ? *init : Value());
      op.erase();
      if (init)
        before->erase();
    }
    for (auto &[op, vectorOperand, combiner] : found) {
      // Threads pay off from some tens of thousands of elements on, fewer
      // when each element moves many operands (a Winograd transform's 16
      // inputs and 16 outputs) or computes exponentials (elementCost; not
      // for a strip-mined piece, kWindowPiece). A short
      // row costs a cache line all the same (a pad's column borders, two
      // elements a row): each row counts as 16 elements at least. With
      // threads, a serial loop over such rows pays for lines the other
      // core just wrote (the pad's interior); a parallel one splits them
      // as that core's loop did.
      // A dynamic innermost dim counts as kNominalExtent elements.
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      for (int64_t &r : ranges)
        if (ShapedType::isDynamic(r))
          r = kiln::contraction::kNominalExtent;
      int64_t elements = 1;
      for (int64_t r : ranges)
        elements *= r;
      int64_t row = std::max<int64_t>(1, ranges.back());
      int64_t work = kiln::vec::elementCost(op) * std::max(elements, elements / row * 16);
      ElementwiseVectorizer(op, vectorOperand, lanes,
                            parallel && work >= kiln::vec::kElementwiseParallelWork &&
                                !kiln::vec::insideParallelLoop(op),
                            combiner)
          .build();
      op.erase();
    }
  }
};

} // namespace
