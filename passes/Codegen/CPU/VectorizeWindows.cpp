//===- VectorizeWindows.cpp - Window generics on vectors -----------------===//
//
// Part of kiln-vectorize-elementwise: a generic whose output's last index
// is a parallel dim, with reduction loops inside (MaxPool, AveragePool,
// LpPool as the lowering writes them) or input maps through windows (a
// strided conv's im2col copy), runs vectors along that dim, the output's
// tile held in registers across the reduction loops, in the generic's
// order. Inputs strided along the dim are shuffled from a wide load.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/VectorizeLoops.h"

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

std::optional<SmallVector<int64_t>> kiln::vec::stridesAlong(linalg::GenericOp op, unsigned p) {
  SmallVector<int64_t> strides;
  unsigned n = op.getNumLoops();
  // Along a dynamic p (a pool's output columns, which
  // kiln-strip-dynamic-dims leaves whole) the operands' sizes may be
  // dynamic: only their innermost stride matters.
  bool dynamic = ShapedType::isDynamic(op.getStaticLoopRanges()[p]);
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32() ||
        !(dynamic ? kiln::vec::unitInnermostStride(operand.get())
                  : kiln::vec::innermostContiguous(operand.get())))
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    ArrayRef<AffineExpr> results = map.getResults();
    for (AffineExpr e : results.drop_back(results.empty() ? 0 : 1))
      if (e.isFunctionOfDim(p))
        return std::nullopt;
    if (results.empty() || !results.back().isFunctionOfDim(p)) {
      if (op.isDpsInit(&operand))
        return std::nullopt;
      strides.push_back(0);
      continue;
    }
    AffineExpr last = results.back();
    if (op.isDpsInit(&operand) && last != getAffineDimExpr(p, op.getContext()))
      return std::nullopt;
    // Linear in p, one element to 64 apart.
    std::optional<int64_t> stride = kiln::contraction::noDivision(last)
                                        ? kiln::contraction::coefficient(last, p, n)
                                        : std::nullopt;
    if (!stride || *stride < 1 || *stride > 64)
      return std::nullopt;
    strides.push_back(*stride);
  }
  return strides;
}

namespace {

/// A generic with reduction loops whose output's last index is a parallel
/// dim `p` (pooling windows: MaxPool, AveragePool, LpPool as the lowering
/// writes them): vectors along `p`, the reduction loops inside each
/// vector step carrying the output's tile in registers, in the generic's
/// order (so each output element is reduced exactly as by the scalar
/// loops). Inputs strided along `p` (a stride-2 pool) are shuffled from a
/// wide load (kiln::vec::stridedLoad).
class WindowVectorizer {
public:
  /// `init`: the constant every output element holds before (a max
  /// pool's -inf fill, which the caller then drops), if known; the tiles
  /// then start from it instead of loading the output.
  WindowVectorizer(linalg::GenericOp op, unsigned p, SmallVector<int64_t> strides,
                   int64_t lanes, bool parallel, Value init = {})
      : op(op), p(p), strides(std::move(strides)), lanes(lanes),
        ranges(op.getStaticLoopRanges()), parallelPending(parallel), init(init) {}

  void build() {
    OpBuilder b(op);
    SmallVector<Value> ivs(ranges.size());
    SmallVector<unsigned> outerDims, reductions;
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    for (unsigned d = 0; d < ranges.size(); ++d)
      if (d != p)
        (iters[d] == utils::IteratorType::parallel ? outerDims : reductions).push_back(d);
    // A dynamic p: its size is the output's last dim; the last vector is
    // masked at run time.
    Value extent;
    if (ShapedType::isDynamic(ranges[p])) {
      Value out = op.getDpsInitOperand(0)->get();
      extent = memref::DimOp::create(b, loc(), out, cast<MemRefType>(out.getType()).getRank() - 1);
    }
    kiln::vec::outerLoops(b, op, ranges, outerDims, ivs, parallelPending,
               [&](OpBuilder &b, SmallVector<Value> &ivs) {
      auto step = [&](OpBuilder &b, int64_t on) { tile(b, ivs, reductions, on); };
      if (extent)
        kiln::vec::vectorSteps(b, loc(), extent, lanes, ivs[p], tailMask, step);
      else
        kiln::vec::vectorSteps(b, loc(), ranges[p], lanes, ivs[p], step);
    });
  }

private:
  Location loc() { return op.getLoc(); }
  Value index(OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc(), v); }

  /// `on` lanes of operand `operand` at `ivs`.
  Value vectorOf(OpBuilder &b, OpOperand &operand, ArrayRef<Value> ivs, int64_t on) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<Value> at(ivs);
    for (Value &v : at)
      if (!v)
        v = index(b, 0); // A reduction dim the output does not have.
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e))
        idx.push_back(at[d.getPosition()]);
      else
        idx.push_back(affine::AffineApplyOp::create(
            b, loc(), AffineMap::get(map.getNumDims(), 0, e), at));
    }
    auto type = VectorType::get({lanes}, b.getF32Type());
    int64_t stride = strides[operand.getOperandNumber()];
    if (stride == 0)
      return vector::BroadcastOp::create(b, loc(), type,
                                         memref::LoadOp::create(b, loc(), operand.get(), idx));
    if (on == kiln::vec::kMasked)
      return maskedStridedLoad(b, operand.get(), idx, stride);
    return kiln::vec::stridedLoad(b, loc(), operand.get(), idx, lanes, stride, on);
  }

  /// Every `stride`-th element from `idx` of `mem` in tailMask's lanes,
  /// the others zero: for a stride up to kMaxShuffledStride one wide load
  /// masked to stop at the last element needed, then a shuffle (a wide
  /// lane is read when the lane whose element is at or after it is set),
  /// else a masked gather.
  Value maskedStridedLoad(OpBuilder &b, Value mem, ValueRange idx, int64_t stride) {
    if (stride == 1)
      return kiln::vec::load(b, loc(), mem, idx, VectorType::get({lanes}, b.getF32Type()),
                             tailMask);
    if (stride > kiln::vec::kMaxShuffledStride)
      return kiln::vec::gather(b, loc(), mem, idx, lanes, stride, tailMask);
    auto maskType = VectorType::get({lanes}, b.getI1Type());
    Value none = arith::ConstantOp::create(b, loc(), maskType, b.getZeroAttr(maskType));
    SmallVector<int64_t> covering;
    for (int64_t j = 0; j < lanes * stride; ++j)
      covering.push_back(std::min<int64_t>(llvm::divideCeil(j, stride), lanes));
    Value wideMask = vector::ShuffleOp::create(b, loc(), tailMask, none, covering);
    Value wide = kiln::vec::load(b, loc(), mem, idx,
                                 VectorType::get({lanes * stride}, b.getF32Type()), wideMask);
    SmallVector<int64_t> picks;
    for (int64_t i = 0; i < lanes; ++i)
      picks.push_back(i * stride);
    return vector::ShuffleOp::create(b, loc(), wide, wide, picks);
  }

  /// One tile of `on` lanes at `ivs`: the output loaded, the reduction
  /// loops applying the body to it, the output stored.
  void tile(OpBuilder &b, SmallVector<Value> &ivs, ArrayRef<unsigned> reductions, int64_t on) {
    // The previous step's reduction loops are not in scope here.
    for (unsigned d : reductions)
      ivs[d] = Value();
    OpOperand *out = op.getDpsInitOperand(0);
    // A body that ignores the output (a copy) needs no load of it.
    bool readsOutput = !op.getMatchingBlockArgument(out).use_empty();
    Value acc = init ? vector::BroadcastOp::create(
                           b, loc(), VectorType::get({lanes}, b.getF32Type()), init)
                           .getResult()
                     : readsOutput ? vectorOf(b, *out, ivs, on)
                                   : arith::ConstantOp::create(
                                         b, loc(), b.getZeroAttr(VectorType::get(
                                                       {lanes}, b.getF32Type())))
                                         .getResult();
    Value result = reduce(b, ivs, reductions, acc, on);
    AffineMap map = op.getMatchingIndexingMap(out);
    SmallVector<Value> idx = kiln::vec::permutedIndices(b, loc(), map, ivs);
    if (on == kiln::vec::kMasked)
      kiln::vec::store(b, loc(), result, out->get(), idx, tailMask);
    else
      kiln::vec::store(b, loc(), result, out->get(), idx, on);
  }

  Value reduce(OpBuilder &b, SmallVector<Value> &ivs, ArrayRef<unsigned> dims, Value acc,
               int64_t on) {
    if (dims.empty()) {
      Block &body = op.getRegion().front();
      IRMapping map;
      for (OpOperand &operand : op->getOpOperands()) {
        BlockArgument arg = body.getArgument(operand.getOperandNumber());
        if (arg.use_empty())
          continue;
        map.map(arg, op.isDpsInit(&operand) ? acc : vectorOf(b, operand, ivs, on));
      }
      return kiln::vec::vectorizeBody(b, op, map, lanes)[0];
    }
    auto loop = scf::ForOp::create(b, loc(), index(b, 0), index(b, ranges[dims[0]]),
                                   index(b, 1), ValueRange{acc});
    OpBuilder nb = OpBuilder::atBlockEnd(loop.getBody());
    ivs[dims[0]] = loop.getInductionVar();
    Value next = reduce(nb, ivs, dims.drop_front(), loop.getRegionIterArgs()[0], on);
    scf::YieldOp::create(nb, loc(), next);
    return loop.getResult(0);
  }

  linalg::GenericOp op;
  unsigned p;
  SmallVector<int64_t> strides;
  int64_t lanes;
  SmallVector<int64_t> ranges;
  bool parallelPending;
  Value init;
  /// The lanes left of a dynamic p, inside the step that takes them
  /// (kMasked).
  Value tailMask;
};


} // namespace

std::optional<unsigned> kiln::vec::dynamicWindowDim(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || !op.getNumReductionLoops() ||
      !vectorisableBody(op) || isMultiplyAccumulate(op) || isInt8MultiplyAccumulate(op))
    return std::nullopt;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!outMap.getNumResults() || !outMap.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  auto last = dyn_cast<AffineDimExpr>(outMap.getResults().back());
  if (!last)
    return std::nullopt;
  unsigned p = last.getPosition();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  if (!ShapedType::isDynamic(ranges[p]) || iters[p] != utils::IteratorType::parallel)
    return std::nullopt;
  // The reduction loops run inside each vector step: static.
  for (unsigned d = 0; d < ranges.size(); ++d)
    if (iters[d] == utils::IteratorType::reduction && ranges[d] <= 0)
      return std::nullopt;
  // The output's tile stays in registers across them.
  Value out = rootBuffer(op.getDpsInitOperand(0)->get());
  if (llvm::any_of(op.getDpsInputOperands(),
                   [&](OpOperand *in) { return rootBuffer(in->get()) == out; }) ||
      !stridesAlong(op, p))
    return std::nullopt;
  return p;
}

void kiln::vec::vectorizeWindow(linalg::GenericOp op, unsigned p, ArrayRef<int64_t> strides,
                                int64_t lanes, bool parallel, Value init) {
  WindowVectorizer(op, p, SmallVector<int64_t>(strides), lanes, parallel, init).build();
}
