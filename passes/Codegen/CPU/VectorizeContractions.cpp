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
#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/CPU/VectorHelpers.h"
#include "passes/Utils/ElementsData.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AsmState.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>
#include <map>

#define DEBUG_TYPE "kiln-vectorize-contractions"

namespace kiln {
#define GEN_PASS_DEF_VECTORIZECONTRACTIONSPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using kiln::contraction::Contraction;
using kiln::contraction::deadAfter;
using kiln::contraction::match;

namespace {

/// Kernel shape for one target.
struct TileShape {
  int64_t lanes; ///< f32 elements per vector.
  int64_t nv;    ///< Vectors per tile row.
  int64_t mr;    ///< Tile rows.
};

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

/// The value of a pure affine expression at `dims`.
int64_t evaluate(AffineExpr e, ArrayRef<int64_t> dims) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return dims[d.getPosition()];
  if (auto k = dyn_cast<AffineConstantExpr>(e))
    return k.getValue();
  auto bin = cast<AffineBinaryOpExpr>(e);
  int64_t l = evaluate(bin.getLHS(), dims), r = evaluate(bin.getRHS(), dims);
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return l + r;
  case AffineExprKind::Mul:
    return l * r;
  case AffineExprKind::FloorDiv:
    return llvm::divideFloorSigned(l, r);
  case AffineExprKind::CeilDiv:
    return llvm::divideCeilSigned(l, r);
  case AffineExprKind::Mod:
    return ((l % r) + r) % r;
  default:
    return 0;
  }
}

/// Packed panels by their bytes: the globals that hold them.
using PackedGlobals = std::map<std::string, std::string>;

class KernelBuilder {
public:
  KernelBuilder(Contraction c, TileShape t, bool parallel, int64_t prefetchDistance,
                PackedGlobals &packed)
      : c(c), t(t), parallelPending(parallel), prefetchDistance(prefetchDistance),
        packed_(packed) {}

  /// Builds the kernel before the generic; false (and nothing built) if
  /// it cannot (Channels weights that do not pack).
  bool build(ModuleOp module, unsigned &packCount) {
    OpBuilder b(c.op);
    pack(b, module, packCount);
    if (c.variant == kiln::contraction::Variant::Channels && !packedRow)
      return false;
    SmallVector<Value> ivs(c.op.getNumLoops(), index(b, 0));
    // The larger operand is read once: a panel of it stays in cache while
    // every tile of the other dim passes over it. With the row operand the
    // larger (activations against a conv's weights), n tiles go outside the
    // m tiles; otherwise m tiles outside. A packed panel depends on the n
    // tile alone, so then the n tiles go outside every other loop.
    bool nFirst = bytes(c.row) > bytes(c.col);
    if (packedRow && bytes(c.row) > (int64_t(1) << 20)) {
      // Packed weights beyond what stays in L2 (a 1024x1024 matmul's, a
      // late ResNet layer's): the column operand streams once per n tile,
      // or the weights once per m tile and value of the other parallel
      // loops they do not depend on (a conv's output rows, around the n
      // tiles too), whichever moves less.
      int64_t nTileCount = (c.ranges[c.dimN] + t.nv * t.lanes - 1) / (t.nv * t.lanes);
      int64_t mTileCount = c.dimM ? (c.ranges[*c.dimM] + t.mr - 1) / t.mr : 1;
      int64_t repeats = mTileCount;
      for (ArrayRef<unsigned> dims : {ArrayRef<unsigned>(c.outer), ArrayRef<unsigned>(c.inner)})
        for (unsigned d : dims)
          if (!c.rowMap.isFunctionOfDim(d))
            repeats *= c.ranges[d];
      nFirst = nTileCount * bytes(c.col) <= repeats * bytes(c.row);
    }
    if (nFirst && packedRow) {
      panelAhead = prefetchDistance > 0;
      nTiles(b, ivs, [&](OpBuilder &b, SmallVector<Value> &ivs, int64_t nv, int64_t lastLanes) {
        loops(b, c.outer, ivs, [&](OpBuilder &b, SmallVector<Value> &ivs) {
          loops(b, c.inner, ivs, [&](OpBuilder &b, SmallVector<Value> &ivs) {
            mTiles(b, ivs, std::make_pair(nv, lastLanes));
          });
        });
      });
    } else {
      loops(b, c.outer, ivs, [&](OpBuilder &b, SmallVector<Value> &ivs) {
        if (nFirst)
          nLoops(b, ivs, std::nullopt);
        else
          mTiles(b, ivs);
      });
    }
    finishParallel();
    return true;
  }

private:
  Value index(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc(), v);
  }
  Location loc() { return c.op.getLoc(); }

  /// Constant weights as the row operand: packs them at compile time into
  /// [N tiles][reduction steps][tile width] (zero-padded), so that each
  /// kernel reads one contiguous panel in the order it multiplies. The
  /// column operand, when constant (a conv's weights against its
  /// activations), likewise into [M tiles][steps][MR]: the broadcasts of a
  /// step are then adjacent instead of MR rows apart.
  void pack(OpBuilder &b, ModuleOp module, unsigned &packCount) {
    if (c.strideN == 1 && kiln::contraction::rowPanelIndependent(c))
      if ((packedRow = packPanel(b, module, packCount, c.row, c.rowMap, c.dimN,
                                 t.nv * t.lanes, rowPanel)))
        packedWidth = t.nv * t.lanes;
    if (c.variant == kiln::contraction::Variant::Channels && !packedRow)
      return; // No kernel: build() gives up.
    if (c.dimM && !c.mInRow && t.mr > 1)
      packedCol = packPanel(b, module, packCount, c.col, c.colMap, *c.dimM, t.mr, colPanel);
  }

  /// Which panels of a packed operand a tile reads: the operand's tiles
  /// along its packed dim, times one set per value of the loops outside
  /// the kernel that it depends on (the batch of a batched matmul).
  struct Panels {
    SmallVector<unsigned> outer; ///< Those loops' dims, outermost first.
    int64_t tiles = 0;
  };

  /// `operand` (read through `map`) packed as [tiles of `width` along
  /// `dim`][reduction steps][width], zero-padded, in a new constant global,
  /// one such block per value of the outer parallel dims (c.outer) it
  /// depends on; null if it is not constant data or depends on other
  /// parallel dims.
  Value packPanel(OpBuilder &b, ModuleOp module, unsigned &packCount, Value operand,
                  AffineMap map, unsigned dim, int64_t width, Panels &panels) {
    ArrayRef<AffineExpr> exprs = map.getResults();
    SmallVector<utils::IteratorType> iters = c.op.getIteratorTypesArray();
    SmallVector<unsigned> outer;
    for (unsigned d = 0; d < c.ranges.size(); ++d) {
      if (d == dim || iters[d] != utils::IteratorType::parallel ||
          llvm::none_of(exprs, [&](AffineExpr e) { return e.isFunctionOfDim(d); }))
        continue;
      if (!llvm::is_contained(c.outer, d))
        return {}; // The panel would depend on a loop inside the kernel's.
      outer.push_back(d);
    }
    int64_t sets = 1;
    for (unsigned d : outer)
      sets *= c.ranges[d];
    std::optional<ArrayRef<float>> data = kiln::contraction::constantData(operand);
    auto type = cast<MemRefType>(operand.getType());
    if (!data || !type.getLayout().isIdentity())
      return {};
    SmallVector<int64_t> strides = computeSuffixProduct(type.getShape());
    int64_t n = c.ranges[dim], tiles = (n + width - 1) / width;
    // The offset is linear in `dim` (no division in the maps): base + i * delta.
    SmallVector<int64_t> at(c.ranges.size(), 0);
    auto offset = [&] {
      int64_t o = 0;
      for (auto [j, e] : llvm::enumerate(exprs))
        o += evaluate(e, at) * strides[j];
      return o;
    };
    if (!llvm::all_of(exprs, kiln::contraction::noDivision))
      return {};
    at[dim] = 1;
    int64_t delta = offset();
    at[dim] = 0;
    delta -= offset();
    if (delta < 1)
      return {};
    int64_t steps = 1;
    for (unsigned d : c.reductions)
      steps *= c.ranges[d];
    std::vector<float> packed(size_t(sets * tiles * steps * width), 0.0f);
    for (int64_t set = 0; set < sets; ++set) {
      int64_t left = set;
      for (unsigned d : llvm::reverse(outer)) {
        at[d] = left % c.ranges[d];
        left /= c.ranges[d];
      }
      for (int64_t r = 0; r < steps; ++r) {
        // The reduction dims of step r, in loop order.
        int64_t rest = r;
        for (unsigned d : llvm::reverse(c.reductions)) {
          at[d] = rest % c.ranges[d];
          rest /= c.ranges[d];
        }
        int64_t base = offset();
        if (base < 0 || base + (n - 1) * delta >= int64_t(data->size()))
          return {}; // Never for a valid generic; do not read outside.
        for (int64_t i = 0; i < n; ++i)
          packed[size_t(((set * tiles + i / width) * steps + r) * width + i % width)] =
              (*data)[base + i * delta];
      }
    }
    panels.outer = outer;
    panels.tiles = tiles;
    tiles *= sets;
    auto flatType = MemRefType::get({tiles * steps * width}, b.getF32Type());
    // The same panels for another kernel (the pieces of a strip-mined
    // dynamic dim) share one global.
    std::string &name = packed_[std::string(reinterpret_cast<const char *>(packed.data()),
                                             packed.size() * sizeof(float))];
    if (name.empty()) {
      name = ("__kiln_packed_" + Twine(packCount++)).str();
      OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
      auto value = DenseResourceElementsAttr::get(
          RankedTensorType::get(flatType.getShape(), b.getF32Type()), name,
          HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(packed)));
      memref::GlobalOp::create(mb, c.op.getLoc(), name, mb.getStringAttr("private"), flatType,
                               value, /*constant=*/true, mb.getI64IntegerAttr(64));
    }
    Value flat = memref::GetGlobalOp::create(b, loc(), flatType, name);
    return memref::ExpandShapeOp::create(
        b, loc(), MemRefType::get({tiles, steps, width}, b.getF32Type()), flat,
        ArrayRef<ReassociationIndices>{{0, 1, 2}});
  }

  /// The packed tile at `ivs`: its tile along `dim` within the set of
  /// the outer loops' values.
  Value panelTile(OpBuilder &b, ArrayRef<Value> ivs, unsigned dim, int64_t width,
                  const Panels &panels) {
    Value tile = arith::DivUIOp::create(b, loc(), ivs[dim], index(b, width));
    if (panels.outer.empty())
      return tile;
    return nest(b, linearIndex(b, ivs, panels.outer), panels.tiles, tile);
  }

  /// outer * range + inner.
  Value nest(OpBuilder &b, Value outer, int64_t range, Value inner) {
    return arith::AddIOp::create(
        b, loc(), arith::MulIOp::create(b, loc(), outer, index(b, range)), inner);
  }

  /// The row-major position of `ivs` over the loops `dims`, outermost
  /// first.
  Value linearIndex(OpBuilder &b, ArrayRef<Value> ivs, ArrayRef<unsigned> dims) {
    Value at = index(b, 0);
    for (unsigned d : dims)
      at = nest(b, at, c.ranges[d], ivs[d]);
    return at;
  }

  /// The reduction step of `ivs` in the packed panel's order.
  Value reductionStep(OpBuilder &b, ArrayRef<Value> ivs) {
    return linearIndex(b, ivs, c.reductions);
  }

  /// Marks `loop` as the kernel's parallel loop if none is yet, the kernel
  /// is worth threads and the loop has two iterations or more. Two or
  /// three iterations of which one is a partial tile, or three, share
  /// badly between threads: such a loop is only the fallback if no loop
  /// inside does better.
  void markParallel(scf::ForOp loop, int64_t trips, bool partial = false) {
    if (!parallelPending || trips < 2)
      return;
    if (trips < 4 && (partial || trips == 3)) {
      if (!fallback)
        fallback = loop;
      return;
    }
    loop->setAttr("kiln.parallel", UnitAttr::get(loop.getContext()));
    parallelPending = false;
  }

  /// Marks the fallback when no better loop was found.
  void finishParallel() {
    if (parallelPending && fallback)
      fallback->setAttr("kiln.parallel", UnitAttr::get(fallback.getContext()));
    parallelPending = false;
  }

  /// Nested scf.for over `dims` (whole ranges, step 1).
  void loops(OpBuilder &b, ArrayRef<unsigned> dims, SmallVector<Value> &ivs,
             const std::function<void(OpBuilder &, SmallVector<Value> &)> &body) {
    if (dims.empty())
      return body(b, ivs);
    auto loop = scf::ForOp::create(b, loc(), index(b, 0), index(b, c.ranges[dims[0]]),
                                   index(b, 1));
    markParallel(loop, c.ranges[dims[0]]);
    OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
    ivs[dims[0]] = loop.getInductionVar();
    loops(nb, dims.drop_front(), ivs, body);
  }

  /// Tiles of `step` over [0, total) of `dim`, the last one total % step
  /// wide if that is not 0: one loop over all of them (the last under an
  /// scf.if), or straight-line code for a single tile. `body` gets the
  /// tile's width.
  void tiled(OpBuilder &b, unsigned dim, int64_t total, int64_t step, SmallVector<Value> &ivs,
             const std::function<void(OpBuilder &, SmallVector<Value> &, int64_t)> &body) {
    int64_t full = total / step, rest = total % step, count = full + (rest ? 1 : 0);
    if (count == 1) {
      ivs[dim] = index(b, 0);
      return body(b, ivs, rest ? rest : step);
    }
    auto loop =
        scf::ForOp::create(b, loc(), index(b, 0), index(b, count * step), index(b, step));
    markParallel(loop, count, rest != 0);
    OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
    ivs[dim] = loop.getInductionVar();
    if (!rest)
      return body(nb, ivs, step);
    Value whole = arith::CmpIOp::create(nb, loc(), arith::CmpIPredicate::slt, ivs[dim],
                                        index(nb, full * step));
    auto branch = scf::IfOp::create(nb, loc(), whole, /*withElseRegion=*/true);
    // Each branch may mark its own parallel loop.
    bool pending = parallelPending;
    OpBuilder tb = branch.getThenBodyBuilder();
    body(tb, ivs, step);
    bool marked = pending && !parallelPending;
    parallelPending = pending;
    OpBuilder eb = branch.getElseBodyBuilder();
    body(eb, ivs, rest);
    if (marked)
      parallelPending = false;
  }

  static int64_t bytes(Value v) {
    return cast<MemRefType>(v.getType()).getNumElements() * 4;
  }

  /// Tiles of M; inside each, the other parallel loops and the n tiles, or
  /// (`inner`) straight to the kernel with the n tile `nv`/`lastLanes`.
  void mTiles(OpBuilder &b, SmallVector<Value> &ivs,
              std::optional<std::pair<int64_t, int64_t>> inner = std::nullopt) {
    auto next = [&](OpBuilder &b, SmallVector<Value> &ivs, int64_t mr) {
      if (inner)
        kernel(b, ivs, mr, inner->first, inner->second);
      else
        nLoops(b, ivs, mr);
    };
    if (!c.dimM)
      return next(b, ivs, 1);
    tiled(b, *c.dimM, c.ranges[*c.dimM], t.mr, ivs, next);
  }

  /// The other parallel loops and the n tiles; inside each, the kernel for
  /// `mr` rows, or (no `mr`) the m tiles.
  void nLoops(OpBuilder &b, SmallVector<Value> &ivs, std::optional<int64_t> mr) {
    loops(b, c.inner, ivs, [&](OpBuilder &b, SmallVector<Value> &ivs) {
      nTiles(b, ivs, [&](OpBuilder &b, SmallVector<Value> &ivs, int64_t nv, int64_t lastLanes) {
        if (mr)
          kernel(b, ivs, *mr, nv, lastLanes);
        else
          mTiles(b, ivs, std::make_pair(nv, lastLanes));
      });
    });
  }

  /// Tiles of N; `body` gets each one's vector count and the lanes of its
  /// last vector.
  void nTiles(OpBuilder &b, SmallVector<Value> &ivs,
              const std::function<void(OpBuilder &, SmallVector<Value> &, int64_t, int64_t)>
                  &body) {
    tiled(b, c.dimN, c.ranges[c.dimN], t.nv * t.lanes, ivs,
          [&](OpBuilder &b, SmallVector<Value> &ivs, int64_t width) {
            int64_t nv = (width + t.lanes - 1) / t.lanes;
            body(b, ivs, nv, width - (nv - 1) * t.lanes);
          });
  }

  /// The indices of `map` at `ivs`, with dim M and N offset.
  SmallVector<Value> indices(OpBuilder &b, AffineMap map, ArrayRef<Value> ivs,
                             int64_t mOffset, int64_t nOffset) {
    SmallVector<Value> at(ivs);
    auto shift = [&](unsigned d, int64_t off) {
      if (off)
        at[d] = arith::AddIOp::create(b, loc(), at[d], index(b, off));
    };
    if (c.dimM)
      shift(*c.dimM, mOffset);
    shift(c.dimN, nOffset);
    SmallVector<Value> result;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e))
        result.push_back(at[d.getPosition()]);
      else if (auto k = dyn_cast<AffineConstantExpr>(e))
        result.push_back(index(b, k.getValue()));
      else
        result.push_back(affine::AffineApplyOp::create(
            b, loc(), AffineMap::get(map.getNumDims(), 0, e), at));
    }
    return result;
  }

  /// A vector of the row operand, `on` lanes valid.
  /// Strided (a stride-2 conv) through a wide load and a shuffle; far
  /// apart (a ViT's 16x16 patches) a gather.
  Value rowVector(OpBuilder &b, ValueRange idx, int64_t on) {
    return kiln::vec::stridedLoad(b, loc(), c.row, idx, t.lanes, c.strideN, on);
  }

  /// `on` lanes of `mem` from `idx` along its index `pos`: a (masked) load
  /// when that is the contiguous last one, else a gather.
  Value vectorAt(OpBuilder &b, Value mem, ValueRange idx, unsigned pos, int64_t on,
                 int64_t lanes = 0) {
    lanes = lanes ? lanes : t.lanes;
    auto vecType = VectorType::get({lanes}, b.getF32Type());
    std::optional<int64_t> stride = kiln::contraction::staticStride(mem, pos);
    if (pos + 1 == idx.size() && stride == 1)
      return kiln::vec::load(b, loc(), mem, idx, vecType, on);
    return kiln::vec::gather(b, loc(), mem, idx, lanes, *stride, on);
  }

  /// Writes `on` lanes of `value` to `mem` from `idx` along its index
  /// `pos`: a (masked) store or a scatter.
  void storeAt(OpBuilder &b, Value value, Value mem, ValueRange idx, unsigned pos, int64_t on) {
    std::optional<int64_t> stride = kiln::contraction::staticStride(mem, pos);
    if (pos + 1 == idx.size() && stride == 1)
      return kiln::vec::store(b, loc(), value, mem, idx, on);
    vector::ScatterOp::create(b, loc(), Type(), mem, idx,
                              kiln::vec::laneOffsets(b, loc(), t.lanes, *stride),
                              kiln::vec::constantMask(b, loc(), t.lanes, on), value);
  }

  /// Operand `in` of `op`, an elementwise generic on the output (identity
  /// output map), at the output position `outIdx`: a vector when it moves
  /// along the kernel's vector dim (the output's index `c.outPosN`), else a
  /// scalar broadcast.
  Value operandAt(OpBuilder &b, linalg::GenericOp op, OpOperand *in, ArrayRef<Value> outIdx,
                  int64_t on, std::optional<unsigned> along = std::nullopt, int64_t lanes = 0) {
    unsigned pos = along ? *along : c.outPosN;
    lanes = lanes ? lanes : t.lanes;
    AffineMap map = op.getMatchingIndexingMap(in);
    SmallVector<Value> idx = kiln::vec::permutedIndices(b, loc(), map, outIdx);
    auto vecType = VectorType::get({lanes}, b.getF32Type());
    for (auto [j, e] : llvm::enumerate(map.getResults()))
      if (e.isFunctionOfDim(pos))
        return vectorAt(b, in->get(), idx, j, on, lanes);
    return vector::BroadcastOp::create(b, loc(), vecType,
                                       memref::LoadOp::create(b, loc(), in->get(), idx));
  }

  /// The applied epilogue (if any) of the output vector `value` at
  /// `idx`, its lanes along output position `along`.
  Value applyEpilogue(OpBuilder &b, Value value, ArrayRef<Value> idx, int64_t on,
                      std::optional<unsigned> along = std::nullopt) {
    if (!c.epilogue)
      return value;
    int64_t lanes = cast<VectorType>(value.getType()).getNumElements();
    Block &body = c.epilogue.getRegion().front();
    IRMapping map;
    for (OpOperand &operand : c.epilogue->getOpOperands()) {
      BlockArgument arg = body.getArgument(operand.getOperandNumber());
      if (arg.use_empty())
        continue;
      map.map(arg, operand.get() == c.out
                       ? value
                       : operandAt(b, c.epilogue, &operand, idx, on, along, lanes));
    }
    return kiln::vec::vectorizeBody(b, c.epilogue, map, lanes)[0];
  }

  /// For a Channels tile whose rows (M) run along the output's contiguous
  /// innermost dim (a conv's output width), the output position of M:
  /// the tile is then transposed in registers and stored a channel at a
  /// time, MR contiguous elements each, instead of scattered.
  std::optional<unsigned> transposedOutput(int64_t mr) {
    if (c.variant != kiln::contraction::Variant::Channels || !c.dimM || c.mInRow || mr < 2 ||
        !llvm::isPowerOf2_64(t.lanes) || int64_t(llvm::PowerOf2Ceil(mr)) > t.lanes)
      return std::nullopt;
    ArrayRef<AffineExpr> results = c.outMap.getResults();
    auto last = dyn_cast<AffineDimExpr>(results.back());
    if (!last || last.getPosition() != *c.dimM)
      return std::nullopt;
    unsigned pos = results.size() - 1;
    Value target = c.epilogue ? c.epilogue.getDpsInitOperand(0)->get() : c.out;
    for (Value mem : {c.out, target})
      if (kiln::contraction::staticStride(mem, pos) != 1)
        return std::nullopt;
    return pos;
  }

  /// Stores the MR x NV tile `result` (vectors along N) transposed: each
  /// N vector's MR rows, padded to R (a power of two), are interleaved in
  /// log2(R) stages of two-vector shuffles, after which every vector
  /// holds lanes / R channels of R rows each; each channel's rows then go
  /// out as one masked store of MR elements (with the epilogue applied
  /// along them).
  void storeTransposed(OpBuilder &b, ArrayRef<Value> ivs, ArrayRef<Value> result, unsigned posM,
                       int64_t mr, int64_t nv, const std::function<int64_t(int64_t)> &lanesOf) {
    int64_t lanes = t.lanes, rows = int64_t(llvm::PowerOf2Ceil(mr));
    auto vecType = VectorType::get({lanes}, b.getF32Type());
    Value zero = arith::ConstantOp::create(b, loc(), vecType, b.getZeroAttr(vecType));
    for (int64_t v = 0; v < nv; ++v) {
      // state[k] holds, at lane l, element (row, channel) tag[k][l].
      SmallVector<Value> state;
      SmallVector<SmallVector<std::pair<int64_t, int64_t>>> tag;
      for (int64_t r = 0; r < rows; ++r) {
        state.push_back(r < mr ? result[r * nv + v] : zero);
        tag.emplace_back();
        for (int64_t l = 0; l < lanes; ++l)
          tag.back().push_back({r, l});
      }
      for (int64_t unit = 1; unit < rows; unit *= 2) {
        SmallVector<Value> next(rows);
        SmallVector<SmallVector<std::pair<int64_t, int64_t>>> nextTag(rows);
        int64_t half = rows / 2, units = lanes / (2 * unit);
        for (int64_t j = 0; j < half; ++j)
          for (int64_t side = 0; side < 2; ++side) {
            // Units [side * units, (side + 1) * units) of both vectors,
            // alternating: lanes of the second vector count from `lanes`.
            SmallVector<int64_t> mask;
            SmallVector<std::pair<int64_t, int64_t>> lanesTag;
            for (int64_t k = side * units; k < (side + 1) * units; ++k)
              for (int64_t from = 0; from < 2; ++from)
                for (int64_t e = 0; e < unit; ++e) {
                  mask.push_back(from * lanes + k * unit + e);
                  lanesTag.push_back(tag[2 * j + from][k * unit + e]);
                }
            int64_t at = j + side * half;
            next[at] = vector::ShuffleOp::create(b, loc(), state[2 * j], state[2 * j + 1], mask);
            nextTag[at] = lanesTag;
          }
        state = next;
        tag = nextTag;
      }
      for (int64_t k = 0; k < rows; ++k)
        for (int64_t block = 0; block < lanes / rows; ++block) {
          int64_t channel = tag[k][block * rows].second;
          if (channel >= lanesOf(v))
            continue;
          Value column = state[k];
          if (rows < lanes) {
            SmallVector<int64_t> mask;
            for (int64_t e = 0; e < rows; ++e)
              mask.push_back(block * rows + e);
            column = vector::ShuffleOp::create(b, loc(), state[k], state[k], mask);
          }
          SmallVector<Value> idx = indices(b, c.outMap, ivs, 0, v * lanes + channel);
          Value value = applyEpilogue(b, column, idx, mr, posM);
          Value target = c.epilogue ? c.epilogue.getDpsInitOperand(0)->get() : c.out;
          kiln::vec::store(b, loc(), value, target, idx, mr);
        }
    }
  }

  void kernel(OpBuilder &b, ArrayRef<Value> ivs, int64_t mr, int64_t nv, int64_t lastLanes) {
    auto lanesOf = [&](int64_t v) { return v == nv - 1 ? lastLanes : t.lanes; };
    SmallVector<Value> acc;
    auto vecType = VectorType::get({t.lanes}, b.getF32Type());
    for (int64_t i = 0; i < mr; ++i)
      for (int64_t v = 0; v < nv; ++v) {
        SmallVector<Value> idx = indices(b, c.outMap, ivs, i, v * t.lanes);
        if (c.fillValue)
          acc.push_back(arith::ConstantOp::create(
              b, loc(), vecType, DenseElementsAttr::get(vecType, *c.fillValue)));
        else if (c.initCopy)
          acc.push_back(operandAt(b, c.initCopy, c.initCopy.getDpsInputOperand(0), idx,
                                  lanesOf(v)));
        else
          acc.push_back(vectorAt(b, c.out, idx, c.outPosN, lanesOf(v)));
      }
    SmallVector<Value> kivs(ivs);
    SmallVector<Value> result = reduce(b, kivs, c.reductions, acc, mr, nv, lanesOf);
    if (std::optional<unsigned> posM = transposedOutput(mr))
      return storeTransposed(b, ivs, result, *posM, mr, nv, lanesOf);
    for (int64_t i = 0; i < mr; ++i)
      for (int64_t v = 0; v < nv; ++v) {
        SmallVector<Value> idx = indices(b, c.outMap, ivs, i, v * t.lanes);
        Value value = applyEpilogue(b, result[i * nv + v], idx, lanesOf(v));
        Value target = c.epilogue ? c.epilogue.getDpsInitOperand(0)->get() : c.out;
        storeAt(b, value, target, idx, c.outPosN, lanesOf(v));
      }
  }

  SmallVector<Value> reduce(OpBuilder &b, SmallVector<Value> &ivs, ArrayRef<unsigned> dims,
                            ValueRange acc, int64_t mr, int64_t nv,
                            const std::function<int64_t(int64_t)> &lanesOf) {
    if (dims.empty())
      return step(b, ivs, acc, mr, nv, lanesOf);
    auto loop = scf::ForOp::create(b, loc(), index(b, 0), index(b, c.ranges[dims[0]]),
                                   index(b, 1), acc);
    OpBuilder nb = OpBuilder::atBlockEnd(loop.getBody());
    ivs[dims[0]] = loop.getInductionVar();
    SmallVector<Value> next =
        reduce(nb, ivs, dims.drop_front(), loop.getRegionIterArgs(), mr, nv, lanesOf);
    scf::YieldOp::create(nb, loc(), next);
    return SmallVector<Value>(loop.getResults());
  }

  /// Software prefetches, `prefetchDistance` steps of the innermost
  /// reduction loop ahead, of the operands that are not packed and jump
  /// 1 KiB or more per step (a 1x1 conv's activations: one input channel
  /// after the other). Hardware stride prefetchers follow strides within
  /// a page at most (Intel's), so such a stream would otherwise wait on
  /// L3 at every step. The step ahead is clamped to the loop's last.
  void prefetch(OpBuilder &b, ArrayRef<Value> ivs, int64_t mr, int64_t width) {
    unsigned dim = 0;
    bool found = false;
    for (unsigned d : llvm::reverse(c.reductions))
      if (c.ranges[d] > 1) {
        dim = d;
        found = true;
        break;
      }
    if (!prefetchDistance || !found || c.ranges[dim] <= prefetchDistance)
      return;
    constexpr int64_t kFar = 1024, kLine = 64;
    auto far = [&](Value operand, AffineMap map) {
      std::optional<int64_t> stride = kiln::contraction::byteStride(operand, map, dim);
      return stride && std::abs(*stride) >= kFar;
    };
    bool rowFar = !packedRow && c.strideN <= 4 && far(c.row, c.rowMap);
    bool colFar = !packedCol && far(c.col, c.colMap);
    if (!rowFar && !colFar)
      return;
    SmallVector<Value> ahead(ivs);
    ahead[dim] = arith::MinSIOp::create(
        b, loc(), arith::AddIOp::create(b, loc(), ivs[dim], index(b, prefetchDistance)),
        index(b, c.ranges[dim] - 1));
    auto fetch = [&](Value operand, AffineMap map, int64_t mOffset, int64_t nOffset) {
      memref::PrefetchOp::create(b, loc(), operand,
                                 indices(b, map, ahead, mOffset, nOffset),
                                 /*isWrite=*/false, /*localityHint=*/3,
                                 /*isDataCache=*/true);
    };
    if (rowFar) {
      // One prefetch per cache line the step's row vectors span (their
      // `width` valid lanes: nothing past the operand).
      int64_t perLine = std::max<int64_t>(1, kLine / (4 * c.strideN));
      for (int64_t i = 0; i < (c.mInRow ? mr : 1); ++i)
        for (int64_t n = 0; n < width; n += perLine)
          fetch(c.row, c.rowMap, i, n);
    }
    if (colFar) {
      // The tile's MR scalars: each row's line when they lie a line or
      // more apart, else the first and the last.
      std::optional<int64_t> mStride = c.dimM
                                           ? kiln::contraction::byteStride(c.col, c.colMap, *c.dimM)
                                           : std::optional<int64_t>(0);
      if (mStride && std::abs(*mStride) * (mr - 1) < kLine) {
        fetch(c.col, c.colMap, 0, 0);
        if (mr > 1 && *mStride)
          fetch(c.col, c.colMap, mr - 1, 0);
      } else {
        for (int64_t i = 0; i < mr; ++i)
          fetch(c.col, c.colMap, i, 0);
      }
    }
  }

  /// With n tiles outermost, every m tile reads the n tile's packed
  /// panel, and the first one would wait on memory for all of it (weights
  /// too large for the caches stream from DRAM once per inference). So
  /// the m tiles of one n tile prefetch the next tile's panel into L2:
  /// the v-th of them the v-th cache line of each reduction step (a step
  /// of the panel is one line per vector of the tile), the later ones the
  /// last line again, which costs little and keeps the address a plain
  /// induction.
  void prefetchNextPanel(OpBuilder &b, ArrayRef<Value> ivs, Value tile, Value r) {
    constexpr int64_t kLineFloats = 16;
    auto type = cast<MemRefType>(packedRow.getType());
    int64_t tiles = type.getDimSize(0), width = type.getDimSize(2);
    // Panels that also change with an outer loop (a batched matmul's)
    // are not read in tile order.
    if (tiles < 2 || width % kLineFloats || !rowPanel.outer.empty())
      return;
    // Which visit of the panel this m tile is: the loops inside the n
    // tiles, then its place among the m tiles.
    SmallVector<unsigned> around(c.outer);
    llvm::append_range(around, c.inner);
    Value visit = linearIndex(b, ivs, around);
    int64_t visits = 1;
    for (unsigned d : around)
      visits *= c.ranges[d];
    if (c.dimM) {
      int64_t mTiles = (c.ranges[*c.dimM] + t.mr - 1) / t.mr;
      visit = nest(b, visit, mTiles,
                   arith::DivUIOp::create(b, loc(), ivs[*c.dimM], index(b, t.mr)));
      visits *= mTiles;
    }
    // Shared by many m tiles (a matmul's 197 rows: 33), the first one's
    // wait is a small share of the panel's time, and prefetching did not
    // pay off (vit_b_16, bert_encoder: even or slower).
    if (visits < 2 || visits >= 16)
      return;
    Value line = arith::MinUIOp::create(b, loc(), visit, index(b, width / kLineFloats - 1));
    Value next = arith::MinUIOp::create(
        b, loc(), arith::AddIOp::create(b, loc(), tile, index(b, 1)), index(b, tiles - 1));
    memref::PrefetchOp::create(
        b, loc(), packedRow,
        ValueRange{next, r, arith::MulIOp::create(b, loc(), line, index(b, kLineFloats))},
        /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
  }

  SmallVector<Value> step(OpBuilder &b, ArrayRef<Value> ivs, ValueRange acc, int64_t mr,
                          int64_t nv, const std::function<int64_t(int64_t)> &lanesOf) {
    prefetch(b, ivs, mr, (nv - 1) * t.lanes + lanesOf(nv - 1));
    SmallVector<Value> rows;
    if (packedRow) {
      // Zero-padded panels: whole vectors, no masks.
      Value tile = panelTile(b, ivs, c.dimN, packedWidth, rowPanel);
      Value r = reductionStep(b, ivs);
      if (panelAhead)
        prefetchNextPanel(b, ivs, tile, r);
      auto vecType = VectorType::get({t.lanes}, b.getF32Type());
      for (int64_t v = 0; v < nv; ++v)
        rows.push_back(vector::LoadOp::create(b, loc(), vecType, packedRow,
                                              ValueRange{tile, r, index(b, v * t.lanes)}));
    } else {
      // With M in the row operand, each tile row reads its own vectors.
      for (int64_t i = 0; i < (c.mInRow ? mr : 1); ++i)
        for (int64_t v = 0; v < nv; ++v)
          rows.push_back(
              rowVector(b, indices(b, c.rowMap, ivs, i, v * t.lanes), lanesOf(v)));
    }
    auto vecType = VectorType::get({t.lanes}, b.getF32Type());
    auto contract = arith::FastMathFlagsAttr::get(b.getContext(), arith::FastMathFlags::contract);
    SmallVector<Value> next;
    Value colTile, colStep;
    if (packedCol) {
      colTile = panelTile(b, ivs, *c.dimM, t.mr, colPanel);
      colStep = reductionStep(b, ivs);
    }
    Value splat;
    for (int64_t i = 0; i < mr; ++i) {
      // With M in the row operand, every tile row takes the same scalar.
      if (!splat || !c.mInRow) {
        Value scalar =
            packedCol
                ? memref::LoadOp::create(b, loc(), packedCol,
                                         ValueRange{colTile, colStep, index(b, i)})
                : memref::LoadOp::create(b, loc(), c.col, indices(b, c.colMap, ivs, i, 0));
        splat = vector::BroadcastOp::create(b, loc(), vecType, scalar);
      }
      for (int64_t v = 0; v < nv; ++v) {
        Value row = rows[(c.mInRow ? i * nv : 0) + v];
        Value prod = arith::MulFOp::create(b, loc(), splat, row, contract);
        next.push_back(arith::AddFOp::create(b, loc(), acc[i * nv + v], prod, contract));
      }
    }
    return next;
  }

  Contraction c;
  TileShape t;
  bool parallelPending; ///< No loop is marked kiln.parallel yet.
  int64_t prefetchDistance; ///< Steps ahead for far operands (0: none).
  scf::ForOp fallback;  ///< The first loop that shares badly, if any.
  Value packedRow;      ///< [tiles][steps][width] when the weights are packed.
  Value packedCol;      ///< [M tiles][steps][MR] when the column operand is packed.
  Panels rowPanel, colPanel;
  int64_t packedWidth = 0;
  bool panelAhead = false; ///< Prefetch the next n tile's packed panel.
  PackedGlobals &packed_;
};

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
      // Threads pay off from a few hundred thousand multiply-adds on.
      int64_t work = 1;
      for (int64_t r : c.ranges)
        work *= r;
      if (!KernelBuilder(c, chooseTile(c, vectorBits / 32, vectorRegisters),
                         parallel && work >= (int64_t(1) << 18) &&
                             !kiln::vec::insideParallelLoop(c.op),
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
    SmallVector<Operation *> dead;
    module.walk([&](Operation *op) {
      if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::GetGlobalOp>(op))
        dead.push_back(op);
    });
    for (Operation *op : llvm::reverse(dead))
      if (op->use_empty())
        op->erase();
    for (auto global : llvm::make_early_inc_range(module.getOps<memref::GlobalOp>()))
      if (global.isPrivate() && SymbolTable::symbolKnownUseEmpty(global, module))
        global.erase();
  }
};

} // namespace
