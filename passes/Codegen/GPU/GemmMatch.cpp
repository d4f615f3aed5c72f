//===- GemmMatch.cpp - contractions as tiled GEMMs, the matching ---------===//
//
// GemmMatch.h's functions: the roles of a contraction's dims, the split of
// its reduction, and the fill or copy before and the elementwise op after
// it that the tiled kernel's store can take over.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/GPU/GemmMatch.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln::tiled {

namespace {

bool isF32Memref(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getElementType().isF32();
}

/// Whether the body is `out + in0 * in1` (either order of either op).
bool isMultiplyAdd(linalg::LinalgOp op) {
  Block &body = op->getRegion(0).front();
  if (body.getNumArguments() != 3 || llvm::range_size(body.without_terminator()) != 2)
    return false;
  Operation *yield = body.getTerminator();
  if (yield->getNumOperands() != 1)
    return false;
  auto add = yield->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  Value x = body.getArgument(0), y = body.getArgument(1);
  return (mul.getLhs() == x && mul.getRhs() == y) || (mul.getLhs() == y && mul.getRhs() == x);
}

/// Whether `map`'s last result reads one of `dims`.
bool innermostIn(AffineMap map, ArrayRef<unsigned> dims) {
  if (map.getNumResults() == 0)
    return false;
  AffineExpr last = map.getResults().back();
  return llvm::any_of(dims, [&](unsigned d) { return last.isFunctionOfDim(d); });
}

} // namespace

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::optional<Gemm> asGemm(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  Gemm g;
  g.a = op.getDpsInputOperand(0);
  g.b = op.getDpsInputOperand(1);
  g.c = op.getDpsInitOperand(0);
  if (!isF32Memref(g.a->get()) || !isF32Memref(g.b->get()) || !isF32Memref(g.c->get()) ||
      g.c->get() == g.a->get() || g.c->get() == g.b->get() || !isMultiplyAdd(op))
    return std::nullopt;
  g.sizes = op.getStaticLoopRanges();
  if (llvm::any_of(g.sizes, [](int64_t s) { return !ShapedType::isDynamic(s) && s < 1; }))
    return std::nullopt;
  g.dynamic = llvm::any_of(g.sizes, ShapedType::isDynamic);
  AffineMap ma = op.getMatchingIndexingMap(g.a), mb = op.getMatchingIndexingMap(g.b),
            mc = op.getMatchingIndexingMap(g.c);
  if (!mc.isProjectedPermutation() || ma.getNumSymbols() || mb.getNumSymbols())
    return std::nullopt;
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  for (unsigned d = 0; d < kinds.size(); ++d) {
    bool inA = ma.isFunctionOfDim(d), inB = mb.isFunctionOfDim(d), inC = mc.isFunctionOfDim(d);
    if (kinds[d] == utils::IteratorType::parallel) {
      if (!inC)
        return std::nullopt;
      if (inA && inB)
        g.batch.push_back(d);
      else if (inA)
        g.m.push_back(d);
      else if (inB)
        g.n.push_back(d);
      else
        return std::nullopt; // C broadcast along a dim: not a GEMM.
    } else {
      if (inC || !inA || !inB)
        return std::nullopt;
      g.k.push_back(d);
    }
  }
  if (g.m.empty() || g.n.empty() || g.k.empty())
    return std::nullopt;
  auto product = [&](ArrayRef<unsigned> dims) {
    SmallVector<int64_t> dimSizes;
    for (unsigned d : dims)
      dimSizes.push_back(g.sizes[d]);
    return kiln::onnx::product(dimSizes);
  };
  // C's innermost dim is walked by neighbouring threads: make it an N dim.
  if (innermostIn(mc, g.m)) {
    std::swap(g.a, g.b);
    std::swap(g.m, g.n);
    std::swap(ma, mb);
  }
  g.batches = product(g.batch);
  g.rows = product(g.m);
  g.cols = product(g.n);
  g.depth = product(g.k);
  // Grid limits: y (the row tiles) and z (batches x splits) below 65536
  // (with dynamic sizes, the runtime refuses a launch beyond them).
  if ((!ShapedType::isDynamic(g.rows) && ceilDiv(g.rows, kTile) > 65535) ||
      (!ShapedType::isDynamic(g.batches) && g.batches > 65535) ||
      (!ShapedType::isDynamic(g.cols) &&
       ceilDiv(g.cols, kTile) > std::numeric_limits<int32_t>::max()))
    return std::nullopt;
  g.aRowsFastest = innermostIn(ma, g.m);
  g.bColsFastest = innermostIn(mb, g.n);
  return g;
}

std::pair<int64_t, int64_t> splitReduction(const Gemm &g) {
  if (g.dynamic)
    return {1, ShapedType::kDynamic};
  int64_t tiles = ceilDiv(g.rows, kTile) * ceilDiv(g.cols, kTile) * g.batches;
  int64_t steps = ceilDiv(g.depth, kStep);
  int64_t splits = 1;
  if (tiles < kBusyBlocks)
    splits = std::max<int64_t>(1, std::min(ceilDiv(kBusyBlocks, tiles), steps / 4));
  while (g.batches * splits > 65535)
    --splits;
  int64_t stepsPerSplit = ceilDiv(steps, splits);
  return {ceilDiv(steps, stepsPerSplit), stepsPerSplit};
}

namespace {

/// `op` is an all-parallel generic over the shape of `c`, which it indexes
/// (as `operand`) by a permutation of its loops.
bool elementwiseOver(linalg::GenericOp op, OpOperand &operand, Value c) {
  auto type = cast<MemRefType>(c.getType());
  return op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
         op.getNumLoops() == static_cast<unsigned>(type.getRank()) &&
         op.getNumLoops() == op.getNumParallelLoops() &&
         op.getMatchingIndexingMap(&operand).isPermutation() &&
         llvm::equal(op.getStaticLoopRanges(),
                     applyPermutationMap(inversePermutation(op.getMatchingIndexingMap(&operand)),
                                         type.getShape()));
}

/// A copy or broadcast of one f32 operand into all of `c`.
bool isInitCopy(linalg::GenericOp op, Value c) {
  if (op.getNumDpsInputs() != 1 || op.getDpsInitOperand(0)->get() != c ||
      !elementwiseOver(op, *op.getDpsInitOperand(0), c) ||
      !isF32Memref(op.getDpsInputOperand(0)->get()))
    return false;
  Block &body = op.getRegion().front();
  return body.getOperations().size() == 1 &&
         body.getTerminator()->getOperand(0) == body.getArgument(0) &&
         !kiln::vec::mayOverlap(op.getDpsInputOperand(0)->get(), c);
}

/// An elementwise generic on C's values that may run inside the kernel's
/// store: reading C by a permutation, every other operand by any affine
/// map, nothing in its body touching memory; writing C in place or,
/// when C is dead after it, a buffer the kernel's inputs do not share.
bool isEpilogue(linalg::GenericOp op, const Gemm &g, Surroundings s) {
  Value c = g.c->get();
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
    return false;
  OpOperand *out = op.getDpsInitOperand(0);
  Value d = out->get();
  std::optional<AffineMap> cMap;
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (in->get() != c)
      continue;
    if (!elementwiseOver(op, *in, c) || (cMap && *cMap != op.getMatchingIndexingMap(in)))
      return false;
    cMap = op.getMatchingIndexingMap(in);
  }
  if (!cMap || !op.getMatchingIndexingMap(out).isPermutation())
    return false;
  Block &body = op.getRegion().front();
  for (Operation &inner : body.without_terminator())
    if (inner.getNumRegions() != 0 || !isMemoryEffectFree(&inner))
      return false;
  bool inPlace = d == c && op.getMatchingIndexingMap(out) == *cMap;
  if (!inPlace && !op.getMatchingBlockArgument(out).use_empty())
    return false; // Reads its output, which is not C's value.
  if (!inPlace) {
    if (d == c || !kiln::contraction::deadAfter(op, c) ||
        kiln::vec::mayOverlap(d, g.a->get()) || kiln::vec::mayOverlap(d, g.b->get()) ||
        (s.initCopy && kiln::vec::mayOverlap(d, s.initCopy.getDpsInputOperand(0)->get())))
      return false;
  }
  // Other operands are read in the store: one C shares would change under
  // the stores of other threads; one the output shares must be the
  // output, element for element.
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value e = in->get();
    if (e == c)
      continue;
    if (kiln::vec::mayOverlap(e, c) && (inPlace || !kiln::contraction::deadAfter(op, c)))
      return false;
    if (kiln::vec::mayOverlap(e, d) &&
        !(e == d && op.getMatchingIndexingMap(in) == op.getMatchingIndexingMap(out)))
      return false;
  }
  return true;
}

} // namespace

Surroundings findSurroundings(linalg::LinalgOp op, const Gemm &g, int64_t splits) {
  Surroundings s;
  if (splits > 1)
    return s;
  Value c = g.c->get();
  Operation *before = kiln::contraction::initCandidate(op);
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(before)) {
    if (fill.getDpsInitOperand(0)->get() == c && fill.getInputs()[0].getType().isF32()) {
      s.init = fill;
      s.fill = fill.getInputs()[0];
    }
  } else if (auto copy = dyn_cast_or_null<linalg::GenericOp>(before)) {
    if (isInitCopy(copy, c)) {
      s.init = copy;
      s.initCopy = copy;
    }
  }
  Operation *next = op->getNextNode();
  while (next && kiln::contraction::isView(next))
    next = next->getNextNode();
  if (auto after = dyn_cast_or_null<linalg::GenericOp>(next))
    if (isEpilogue(after, g, s))
      s.epilogue = after;
  return s;
}

} // namespace kiln::tiled
