//===- VectorizeContractions.cpp - kiln-vectorize-contractions pass --------===//
//
// f32 contractions (MatMul, Gemm, Conv and their batched/grouped forms, as
// the lowering writes them: one linalg.generic computing out += x * y) are
// rewritten into loops around a register-blocked outer-product kernel.
// ContractionMatch.cpp decides which generics fit and what around them
// folds in; this file builds the kernels.
//
// Roles, read off the indexing maps:
//   N  the innermost output dim; the "row" operand is contiguous along it
//      (its last index is N * s + terms without N; s = 1 for matmuls and
//      stride-1 convs, s > 1 for strided convs: every s-th element of a
//      wide load up to s = 4, a gather beyond);
//   M  the longest output dim the "column" operand has and the row operand
//      does not (the matmul's m, the conv's output channel, a batch of rows);
//      without one (a depthwise conv), the longest the row operand alone
//      has (the output rows), each tile row then loading its own row
//      vectors against one broadcast;
//   the column operand never depends on N.
// The kernel keeps an MR x NV tile of vectors of the output in registers
// while the reduction loops run, loading NV vectors of the row operand and
// broadcasting MR scalars of the column operand per step:
//
//   loops over parallel dims the column operand has (batch, group)
//     m tiles of MR (the last one M % MR rows, under an scf.if)
//       loops over the other parallel dims (output rows of a conv)
//         n tiles of NV vectors (the last one partial, its last vector masked)
//           acc = out tile; for reduction dims: acc += bcast(col) * row; out = acc
//
// The Channels reading (Contraction.h) puts N on an output dim other than
// the innermost that only constant weights have (a conv's output
// channels): the weights are packed along it, M is the output row, and the
// output tile is gathered and scattered along N. chooseVariant takes it for
// short or strided rows.
//
// When the row operand is the larger one (a convolution's activations
// against its weights), the m tiles go innermost instead, so that a panel
// of the row operand stays in cache while every m tile passes over it.
// The outermost loop with two or more iterations of a large enough kernel
// is marked kiln.parallel for kiln-outline-parallel-loops.
//
// Every output element is summed in the generic's own reduction order; the
// multiply-add is marked contractible, so LLVM may use FMA.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/KernelBuilder.h"
#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "kiln-vectorize-contractions"

namespace kiln {
#define GEN_PASS_DEF_VECTORIZECONTRACTIONSPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using kiln::contraction::Contraction;
using kiln::contraction::deadAfter;
using kiln::contraction::KernelBuilder;
using kiln::contraction::match;
using kiln::contraction::PackedGlobals;
using kiln::contraction::Threads;
using kiln::contraction::TileShape;

namespace {

/// The kernel's tile for `c` with `lanes` f32 lanes per vector and
/// `registers` vector registers.
TileShape chooseTile(const Contraction &c, int64_t lanes, int64_t registers) {
  TileShape t;
  t.lanes = lanes;
  int64_t n = c.ranges[c.dimN];
  int64_t maxNV = registers >= 32 ? 4 : 2;
  t.nv = std::clamp<int64_t>((n + lanes - 1) / lanes, 1, maxNV);
  int64_t m = c.dimM ? c.ranges[*c.dimM] : 1;
  // Accumulators, the row vectors and one broadcast must fit.
  t.mr = std::clamp<int64_t>((registers - t.nv - 1) / t.nv, 1, 8);
  t.mr = std::min(t.mr, m);
  // Tile rows that each load their own vectors (a depthwise conv) pay
  // off for short rows, whose one or two vectors would leave one or two
  // accumulator chains; wide rows already keep enough of them busy, and
  // more rows there only stream more of the input at once.
  if (c.mInRow && t.nv > 2)
    t.mr = 1;
  if (c.variant == kiln::contraction::Variant::Channels) {
    // M is a short output row (7, 14, 28, 56 of a conv) and N a channel
    // count: the tile that wastes least of both, weighed by how many
    // accumulators it keeps busy (a small tile stalls on the panel loads).
    double best = -1;
    for (int64_t nv = std::clamp<int64_t>((n + lanes - 1) / lanes, 1, maxNV); nv >= 1; --nv) {
      int64_t nr = nv * lanes;
      double nUse = double(n) / double((n + nr - 1) / nr * nr);
      int64_t most = std::clamp<int64_t>((registers - nv - 1) / nv, 1, 8);
      for (int64_t mr = 1; mr <= std::min(most, m); ++mr) {
        double mUse = double(m) / double((m + mr - 1) / mr * mr);
        double busy = std::min(1.0, double(mr * nv) / (0.6 * double(registers)));
        double score = nUse * mUse * busy;
        if (score > best + 1e-9) {
          best = score;
          t.nv = nv;
          t.mr = mr;
        }
      }
    }
  }
  return t;
}

/// The share of vector lanes that do useful work along N.
double laneUse(const Contraction &c, int64_t lanes) {
  int64_t n = c.ranges[c.dimN];
  return double(n) / double((n + lanes - 1) / lanes * lanes);
}

/// How `op` is best read as a kernel, if it is one: along the output rows
/// unless they are short or strided and the channels fill the lanes
/// better, with enough multiply-adds per output element (K) that the
/// gathers and scatters of the output tile do not count. Rows of three
/// vectors or more stay rows from 85% of the lanes on (56 in vectors of
/// 16): the Channels reading broadcasts one input channel after the
/// other, a jump of a whole feature map per step (resnet50's 256->64
/// convs at 56x56 into padded buffers: 15% faster as rows on an AVX-512
/// Xeon; rows of one or two vectors, 14 or 28 of 16 lanes, were no
/// faster).
std::optional<Contraction> chooseVariant(linalg::GenericOp op, int64_t lanes) {
  using kiln::contraction::Variant;
  std::optional<Contraction> rows = match(op, Variant::Rows);
  std::optional<Contraction> channels = match(op, Variant::Channels);
  if (!rows || !channels)
    return rows ? rows : channels;
  int64_t k = 1;
  for (unsigned d : rows->reductions)
    k *= rows->ranges[d];
  double rowUse = laneUse(*rows, lanes), channelUse = laneUse(*channels, lanes);
  int64_t n = rows->ranges[rows->dimN];
  double enough = n >= 3 * lanes ? 0.85 : 0.9;
  if (k >= 128 && (rows->strideN > 1 || rowUse < enough) && channelUse >= rowUse)
    return channels;
  return rows;
}

struct VectorizeContractionsPass
    : public kiln::impl::VectorizeContractionsPassBase<VectorizeContractionsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (vectorBits < 64 || vectorBits % 32)
      return;
    ModuleOp module = getOperation();
    SmallVector<linalg::GenericOp> contractions;
    module.walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && kiln::vec::isMultiplyAccumulate(op))
        contractions.push_back(op);
    });
    for (linalg::GenericOp op : contractions)
      kiln::contraction::prepareEpilogue(op);
    std::vector<Contraction> found;
    module.walk([&](linalg::GenericOp op) {
      if (std::optional<Contraction> c = chooseVariant(op, vectorBits / 32))
        found.push_back(*c);
    });
    // Each op is rewritten or folded by one kernel only: a generic that is
    // a kernel itself is nobody's init or epilogue, and an init or
    // epilogue two kernels want goes to the first.
    llvm::DenseSet<Operation *> claimed;
    for (Contraction &c : found)
      claimed.insert(c.op);
    for (Contraction &c : found) {
      if (c.init && !claimed.insert(c.init).second) {
        c.init = nullptr;
        c.fillValue.reset();
        c.initCopy = nullptr;
      }
      if (c.epilogue && !claimed.insert(c.epilogue).second)
        c.epilogue = nullptr;
    }
    unsigned packCount = 0;
    PackedGlobals packed;
    for (Contraction &c : found) {
      // Threads pay off from a few hundred thousand multiply-adds on; a
      // dynamic N (counted as kNominalExtent) may make them at run time.
      int64_t work = 1;
      for (int64_t r : c.ranges)
        work *= r;
      Threads threads = Threads::None;
      if (parallel && !kiln::vec::insideParallelLoop(c.op)) {
        if (work >= kiln::vec::kParallelWork)
          threads = Threads::Static;
        else if (c.dynamicN)
          threads = Threads::DynamicN;
      }
      if (!KernelBuilder(c, chooseTile(c, vectorBits / 32, vectorRegisters), threads,
                         prefetchDistance, packed)
               .build(module, packCount))
        continue; // Left for the loop lowering, with its init and epilogue.
      c.op.erase();
      if (c.init)
        c.init->erase();
      if (c.epilogue)
        c.epilogue.erase();
    }
    // Fills nothing reads any more (the shared zero inits, once their
    // copies are folded into kernels).
    SmallVector<Operation *> fills;
    module.walk([&](Operation *op) {
      if (isa<linalg::FillOp, linalg::MapOp, linalg::GenericOp>(op) && op->getNumOperands() &&
          kiln::vec::constantFill(op, op->getOperands().back()) &&
          deadAfter(op, op->getOperands().back()))
        fills.push_back(op);
    });
    for (Operation *op : fills)
      op->erase();
    if (!packCount)
      return;
    // Weights now only read packed: drop the dead views and globals.
    kiln::vec::eraseUnusedGlobals(module);
  }
};

} // namespace
