//===- VectorizeElementwise.cpp - kiln-vectorize-elementwise pass ----------===//
//
// The innermost loop of a linalg.generic on f32 buffers becomes a loop over
// vectors when its dim is parallel and every operand either is contiguous
// along it (a vector load/store) or does not depend on it (a scalar load,
// broadcast). The body's arith/math ops are rebuilt on vectors; the outer
// loops keep the generic's order, so every output element sees the same
// sequence of updates as in the scalar loops (reductions over outer dims
// included). A static tail is one masked vector.
//
// LLVM's loop vectoriser leaves most of these loops scalar (the math
// expansions' integer tricks, possible aliasing between workspace views),
// which made activations such as SiLU cost more than the convolutions.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/IR/IRMapping.h"

#include <functional>

#define DEBUG_TYPE "kiln-vectorize-elementwise"

namespace kiln {
#define GEN_PASS_DEF_VECTORIZEELEMENTWISEPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Operand `operand` of `op` reads or writes along loop dim `last`:
/// true (only in its last index, contiguous), false (not at all), or
/// nullopt (some other way: the loop cannot be vectorised).
std::optional<bool> alongLast(linalg::GenericOp op, OpOperand &operand, unsigned last) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  for (AffineExpr e : map.getResults().drop_back(map.getNumResults() ? 1 : 0))
    if (e.isFunctionOfDim(last))
      return std::nullopt;
  if (map.getNumResults() == 0 || !map.getResults().back().isFunctionOfDim(last))
    return false;
  if (!kiln::vec::innermostContiguous(operand.get()))
    return std::nullopt;
  return true;
}

class ElementwiseVectorizer {
public:
  ElementwiseVectorizer(linalg::GenericOp op, SmallVector<bool> vectorOperand, int64_t lanes,
                        bool parallel)
      : op(op), vectorOperand(std::move(vectorOperand)), lanes(lanes),
        ranges(op.getStaticLoopRanges()), parallelPending(parallel) {}

  void build() {
    OpBuilder b(op);
    SmallVector<Value> ivs(ranges.size());
    unsigned last = ranges.size() - 1;
    outer(b, 0, ivs, [&](OpBuilder &b, SmallVector<Value> &ivs) {
      int64_t n = ranges[last], full = n / lanes;
      if (full == 1) {
        ivs[last] = index(b, 0);
        step(b, ivs, lanes);
      } else if (full > 1) {
        auto loop = scf::ForOp::create(b, loc(), index(b, 0), index(b, full * lanes),
                                       index(b, lanes));
        OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
        ivs[last] = loop.getInductionVar();
        step(nb, ivs, lanes);
      }
      if (n % lanes) {
        ivs[last] = index(b, full * lanes);
        step(b, ivs, n % lanes);
      }
    });
  }

private:
  Location loc() { return op.getLoc(); }
  Value index(OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc(), v); }

  void outer(OpBuilder &b, unsigned dim, SmallVector<Value> &ivs,
             const std::function<void(OpBuilder &, SmallVector<Value> &)> &body) {
    if (dim + 1 == ranges.size())
      return body(b, ivs);
    auto loop = scf::ForOp::create(b, loc(), index(b, 0), index(b, ranges[dim]), index(b, 1));
    // The outermost parallel loop with work to share, if no reduction
    // loop encloses it.
    if (parallelPending && ranges[dim] >= 2) {
      // Chunks must write disjoint elements: every output uses the dim.
      bool disjoint = llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &out) {
        return op.getMatchingIndexingMap(&out).isFunctionOfDim(dim);
      });
      if (op.getIteratorTypesArray()[dim] == utils::IteratorType::parallel && disjoint)
        loop->setAttr("kiln.parallel", UnitAttr::get(loop.getContext()));
      parallelPending = false;
    }
    OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
    ivs[dim] = loop.getInductionVar();
    outer(nb, dim + 1, ivs, body);
  }

  SmallVector<Value> indices(OpBuilder &b, AffineMap map, ArrayRef<Value> ivs) {
    return kiln::vec::permutedIndices(b, loc(), map, ivs);
  }

  VectorType vectorOf(Type t) { return VectorType::get({lanes}, t); }

  Value splat(OpBuilder &b, Value scalar) {
    return vector::BroadcastOp::create(b, loc(), vectorOf(scalar.getType()), scalar);
  }

  /// One vector step at `ivs` with the first `on` lanes in bounds.
  void step(OpBuilder &b, ArrayRef<Value> ivs, int64_t on) {
    Block &body = op.getRegion().front();
    IRMapping map;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = body.getArgument(operand.getOperandNumber());
      if (arg.use_empty())
        continue;
      SmallVector<Value> idx = indices(b, op.getMatchingIndexingMap(&operand), ivs);
      Value mem = operand.get();
      map.map(arg, vectorOperand[operand.getOperandNumber()]
                       ? kiln::vec::load(b, loc(), mem, idx, vectorOf(arg.getType()), on)
                       : splat(b, memref::LoadOp::create(b, loc(), mem, idx)));
    }
    SmallVector<Value> results = kiln::vec::vectorizeBody(b, op, map, lanes);
    for (auto [i, value] : llvm::enumerate(results)) {
      OpOperand *out = op.getDpsInitOperand(i);
      SmallVector<Value> idx = indices(b, op.getMatchingIndexingMap(out), ivs);
      kiln::vec::store(b, loc(), value, out->get(), idx, on);
    }
  }

  linalg::GenericOp op;
  SmallVector<bool> vectorOperand;
  int64_t lanes;
  SmallVector<int64_t> ranges;
  bool parallelPending; ///< No loop is marked kiln.parallel yet.
};

struct VectorizeElementwisePass
    : public kiln::impl::VectorizeElementwisePassBase<VectorizeElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    if (vectorBits < 64 || vectorBits % 32)
      return;
    int64_t lanes = vectorBits / 32;
    SmallVector<std::pair<linalg::GenericOp, SmallVector<bool>>> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 || !kiln::vec::vectorisableBody(op))
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (llvm::any_of(ranges, [](int64_t r) { return r <= 0; }))
        return;
      unsigned last = op.getNumLoops() - 1;
      if (op.getIteratorTypesArray()[last] != utils::IteratorType::parallel)
        return;
      SmallVector<bool> vectorOperand;
      for (OpOperand &operand : op->getOpOperands()) {
        std::optional<bool> along = alongLast(op, operand, last);
        // Outputs must move along the vector: each lane its own element.
        if (!along || (!*along && op.isDpsInit(&operand)))
          return;
        vectorOperand.push_back(*along);
      }
      // A vector step reads all its lanes before writing any: an input
      // that is another view of an output's memory (or the same buffer
      // read elsewhere) would see different values than the scalar loop.
      for (OpOperand *in : op.getDpsInputOperands())
        for (OpOperand &out : op.getDpsInitsMutable())
          if (kiln::vec::rootBuffer(in->get()) == kiln::vec::rootBuffer(out.get()) &&
              (in->get() != out.get() ||
               op.getMatchingIndexingMap(in) != op.getMatchingIndexingMap(&out)))
            return;
      // Nothing gained when no operand moves with the loop.
      if (llvm::none_of(vectorOperand, [](bool v) { return v; }))
        return;
      found.push_back({op, vectorOperand});
    });
    for (auto &[op, vectorOperand] : found) {
      // Threads pay off from some tens of thousands of elements on.
      int64_t work = 1;
      for (int64_t r : op.getStaticLoopRanges())
        work *= r;
      ElementwiseVectorizer(op, vectorOperand, lanes, parallel && work >= (int64_t(1) << 15))
          .build();
      op.erase();
    }
  }
};

} // namespace
