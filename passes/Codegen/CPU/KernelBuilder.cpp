//===- KernelBuilder.cpp - The kernel's loop nest and reduction steps ------===//
//
// Tiles of M and N around the kernel (the order chosen by which operand is
// larger, the parallel loop marked), the accumulators' init and stores,
// and one reduction step: NV row vectors, MR broadcasts, MR x NV
// contractible multiply-adds. See VectorizeContractions.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/KernelBuilder.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln::contraction {

bool KernelBuilder::build(ModuleOp module, unsigned &packCount) {
  OpBuilder b(c.op);
  top = b.getInsertionBlock();
  if (c.dynamicReduction) {
    dynamicExtent = memref::DimOp::create(b, loc(), c.op->getOperand(c.dynamicReduction->input),
                                          c.dynamicReduction->pos);
  } else if (!c.dynamicN) {
    // Panels hold the whole reduction: a static one only. (A dynamic N's
    // row operand is no constant either.)
    pack(b, module, packCount);
  }
  if (c.dynamicN)
    nExtent = memref::DimOp::create(b, loc(), c.out, c.outPosN);
  if (c.dynamicRows)
    rowsExtent = memref::DimOp::create(
        b, loc(), c.out,
        *c.outMap.getResultPosition(getAffineDimExpr(*c.dynamicRows, b.getContext())));
  if (c.variant == kiln::contraction::Variant::Channels && !packedRow)
    return false;
  SmallVector<Value> ivs(c.op.getNumLoops(), index(b, 0));
  // The larger operand is read once: a panel of it stays in cache while
  // every tile of the other dim passes over it. With the row operand the
  // larger (activations against a conv's weights), n tiles go outside the
  // m tiles; otherwise m tiles outside. A packed panel depends on the n
  // tile alone, so then the n tiles go outside every other loop.
  // A dynamic N that is to go to threads goes outside too (its row
  // operand, a feature map's pixels, is larger than kNominalExtent says).
  bool nFirst = bytes(c.row) > bytes(c.col) || dynamicNThreads;
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
    // Not over dynamic rows: how many tiles visit a panel is not known
    // (counted as 64 rows, a batch of one prefetched at every step).
    panelAhead = prefetchDistance > 0 && !c.dynamicRows;
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

void KernelBuilder::markParallel(scf::ForOp loop, int64_t trips, bool partial) {
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

void KernelBuilder::finishParallel() {
  if (parallelPending && fallback)
    fallback->setAttr("kiln.parallel", UnitAttr::get(fallback.getContext()));
  parallelPending = false;
}

void KernelBuilder::loops(OpBuilder &b, ArrayRef<unsigned> dims, SmallVector<Value> &ivs,
                          const std::function<void(OpBuilder &, SmallVector<Value> &)> &body) {
  if (dims.empty())
    return body(b, ivs);
  // Dynamic rows run to their size, on the calling thread (fewer than a
  // window of kiln-strip-dynamic-dims).
  bool dynamic = dims[0] == c.dynamicRows;
  auto loop = scf::ForOp::create(b, loc(), index(b, 0),
                                 dynamic ? rowsExtent : index(b, c.ranges[dims[0]]), index(b, 1));
  if (!dynamic)
    markParallel(loop, c.ranges[dims[0]]);
  OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
  ivs[dims[0]] = loop.getInductionVar();
  loops(nb, dims.drop_front(), ivs, body);
}

void KernelBuilder::tiled(
    OpBuilder &b, unsigned dim, int64_t total, int64_t step, SmallVector<Value> &ivs,
    const std::function<void(OpBuilder &, SmallVector<Value> &, int64_t)> &body) {
  int64_t full = total / step, rest = total % step, count = full + (rest ? 1 : 0);
  if (count == 1) {
    ivs[dim] = index(b, 0);
    return body(b, ivs, rest ? rest : step);
  }
  auto loop = scf::ForOp::create(b, loc(), index(b, 0), index(b, count * step), index(b, step));
  markParallel(loop, count, rest != 0);
  OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
  ivs[dim] = loop.getInductionVar();
  if (!rest)
    return body(nb, ivs, step);
  Value whole =
      arith::CmpIOp::create(nb, loc(), arith::CmpIPredicate::slt, ivs[dim], index(nb, full * step));
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

int64_t KernelBuilder::bytes(Value v) {
  // A dynamic dim (the reduction's) counts as kNominalExtent.
  int64_t elements = 1;
  for (int64_t size : cast<MemRefType>(v.getType()).getShape())
    elements *= ShapedType::isDynamic(size) ? kNominalExtent : size;
  return elements * 4;
}

void KernelBuilder::mTiles(OpBuilder &b, SmallVector<Value> &ivs,
                           std::optional<std::pair<int64_t, int64_t>> inner) {
  auto next = [&](OpBuilder &b, SmallVector<Value> &ivs, int64_t mr) {
    if (inner)
      kernel(b, ivs, mr, inner->first, inner->second);
    else
      nLoops(b, ivs, mr);
  };
  if (!c.dimM)
    return next(b, ivs, 1);
  if (c.dimM != c.dynamicRows)
    return tiled(b, *c.dimM, c.ranges[*c.dimM], t.mr, ivs, next);
  // Whole tiles of MR rows, then the rows left as a tile of their own: a
  // case for each count from 1 to MR - 1. Neither loop goes to threads:
  // these are the rows a strip-mined op left over, fewer than a window.
  Value left = arith::RemUIOp::create(b, loc(), rowsExtent, index(b, t.mr));
  Value whole = arith::SubIOp::create(b, loc(), rowsExtent, left);
  auto tiles = scf::ForOp::create(b, loc(), index(b, 0), whole, index(b, t.mr));
  OpBuilder tb = OpBuilder::atBlockTerminator(tiles.getBody());
  ivs[*c.dimM] = tiles.getInductionVar();
  // Each tile may mark its own parallel loop (along N, say).
  bool pending = parallelPending, marked = false;
  auto tile = [&](OpBuilder &b, int64_t rows) {
    parallelPending = pending;
    next(b, ivs, rows);
    marked |= pending && !parallelPending;
  };
  tile(tb, t.mr);
  if (t.mr > 1) {
    SmallVector<int64_t> counts = llvm::to_vector(llvm::seq<int64_t>(1, t.mr));
    auto rest = scf::IndexSwitchOp::create(b, loc(), TypeRange{}, left, counts, counts.size());
    ivs[*c.dimM] = whole;
    for (auto [region, rows] : llvm::zip(rest.getCaseRegions(), counts)) {
      OpBuilder cb = OpBuilder::atBlockBegin(&region.emplaceBlock());
      tile(cb, rows);
      scf::YieldOp::create(cb, loc());
    }
    OpBuilder db = OpBuilder::atBlockBegin(&rest.getDefaultRegion().emplaceBlock());
    scf::YieldOp::create(db, loc());
  }
  if (marked)
    parallelPending = false;
}

void KernelBuilder::nLoops(OpBuilder &b, SmallVector<Value> &ivs, std::optional<int64_t> mr) {
  loops(b, c.inner, ivs, [&](OpBuilder &b, SmallVector<Value> &ivs) {
    nTiles(b, ivs, [&](OpBuilder &b, SmallVector<Value> &ivs, int64_t nv, int64_t lastLanes) {
      if (mr)
        kernel(b, ivs, *mr, nv, lastLanes);
      else
        mTiles(b, ivs, std::make_pair(nv, lastLanes));
    });
  });
}

/// The fewest whole tiles of a dynamic N that go to threads rather than
/// the loops along M inside them: few tiles share badly (3 tiles of a
/// 14x14 map at two threads).
constexpr int64_t kMinTileTrips = 8;

void KernelBuilder::nTiles(
    OpBuilder &b, SmallVector<Value> &ivs,
    const std::function<void(OpBuilder &, SmallVector<Value> &, int64_t, int64_t)> &body) {
  if (c.dynamicN) {
    // Whole tiles, then what is left as one tile of as many vectors as it
    // takes (an scf.index_switch over 1 .. NV), its last vector masked
    // (create_mask sets all lanes for a count beyond them). A vector at a
    // time, a 7x7 map's 49 columns read a 1x1 conv's weights four times:
    // 2x the static kernel's time. Each part may mark its own parallel
    // loop (along M): over a small map the whole tiles run no trip.
    int64_t width = t.nv * t.lanes;
    Value whole = arith::SubIOp::create(
        b, loc(), nExtent, arith::RemUIOp::create(b, loc(), nExtent, index(b, width)));
    auto tiles = scf::ForOp::create(b, loc(), index(b, 0), whole, index(b, width));
    int64_t tileWork = width;
    for (auto [d, r] : llvm::enumerate(c.ranges))
      tileWork *= d == c.dimN ? 1 : r;
    if (dynamicNThreads && b.getInsertionBlock() == top) {
      kiln::vec::markParallelFrom(tiles, tileWork);
    } else if (parallelPending && b.getInsertionBlock() == top) {
      // With kMinTileTrips whole tiles or more at run time, they go to
      // threads; with fewer, the loops along M inside (marked too) do. A
      // parallel loop along M in each tile was one per 64 columns: 12
      // for a 1x1 conv over a 28x28 map.
      kiln::vec::markParallelFrom(tiles, tileWork, kMinTileTrips);
      tiles->setAttr("kiln.parallel_nests", b.getUnitAttr());
    } else {
      markParallel(tiles, (c.ranges[c.dimN] + width - 1) / width);
    }
    bool pending = parallelPending, marked = false;
    OpBuilder tb = OpBuilder::atBlockTerminator(tiles.getBody());
    ivs[c.dimN] = tiles.getInductionVar();
    body(tb, ivs, t.nv, t.lanes);
    marked |= pending && !parallelPending;
    Value left = arith::SubIOp::create(b, loc(), nExtent, whole);
    Value vectors = arith::DivUIOp::create(
        b, loc(), arith::AddIOp::create(b, loc(), left, index(b, t.lanes - 1)), index(b, t.lanes));
    SmallVector<int64_t> counts = llvm::to_vector(llvm::seq<int64_t>(1, t.nv + 1));
    auto rest = scf::IndexSwitchOp::create(b, loc(), TypeRange{}, vectors, counts, counts.size());
    for (auto [region, nv] : llvm::zip(rest.getCaseRegions(), counts)) {
      OpBuilder cb = OpBuilder::atBlockBegin(&region.emplaceBlock());
      parallelPending = pending;
      ivs[c.dimN] = whole;
      Value lastLeft =
          nv == 1 ? left : arith::SubIOp::create(cb, loc(), left, index(cb, (nv - 1) * t.lanes));
      tailMask = vector::CreateMaskOp::create(
          cb, loc(), VectorType::get({t.lanes}, cb.getI1Type()), ValueRange{lastLeft});
      body(cb, ivs, nv, kMasked);
      marked |= pending && !parallelPending;
      scf::YieldOp::create(cb, loc());
    }
    tailMask = nullptr;
    OpBuilder db = OpBuilder::atBlockBegin(&rest.getDefaultRegion().emplaceBlock());
    scf::YieldOp::create(db, loc());
    if (marked)
      parallelPending = false;
    return;
  }
  tiled(b, c.dimN, c.ranges[c.dimN], t.nv * t.lanes, ivs,
        [&](OpBuilder &b, SmallVector<Value> &ivs, int64_t width) {
          int64_t nv = (width + t.lanes - 1) / t.lanes;
          body(b, ivs, nv, width - (nv - 1) * t.lanes);
        });
}

SmallVector<Value> KernelBuilder::indices(OpBuilder &b, AffineMap map, ArrayRef<Value> ivs,
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
      result.push_back(
          affine::AffineApplyOp::create(b, loc(), AffineMap::get(map.getNumDims(), 0, e), at));
  }
  return result;
}

void KernelBuilder::kernel(OpBuilder &b, ArrayRef<Value> ivs, int64_t mr, int64_t nv,
                           int64_t lastLanes) {
  auto lanesOf = [&](int64_t v) { return v == nv - 1 ? lastLanes : t.lanes; };
  SmallVector<Value> acc;
  auto vecType = VectorType::get({t.lanes}, b.getF32Type());
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t v = 0; v < nv; ++v) {
      SmallVector<Value> idx = indices(b, c.outMap, ivs, i, v * t.lanes);
      if (c.fillValue)
        acc.push_back(arith::ConstantOp::create(b, loc(), vecType,
                                                DenseElementsAttr::get(vecType, *c.fillValue)));
      else if (c.initCopy)
        acc.push_back(operandAt(b, c.initCopy, c.initCopy.getDpsInputOperand(0), idx, lanesOf(v)));
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
      storeAt(b, value, storeTarget(), idx, c.outPosN, lanesOf(v));
    }
}

SmallVector<Value> KernelBuilder::reduce(OpBuilder &b, SmallVector<Value> &ivs,
                                         ArrayRef<unsigned> dims, ValueRange acc, int64_t mr,
                                         int64_t nv,
                                         const std::function<int64_t(int64_t)> &lanesOf) {
  if (dims.empty())
    return step(b, ivs, acc, mr, nv, lanesOf);
  Value bound = c.dynamicReduction && dims[0] == c.dynamicReduction->dim
                    ? dynamicExtent
                    : index(b, c.ranges[dims[0]]);
  auto loop = scf::ForOp::create(b, loc(), index(b, 0), bound, index(b, 1), acc);
  OpBuilder nb = OpBuilder::atBlockEnd(loop.getBody());
  ivs[dims[0]] = loop.getInductionVar();
  SmallVector<Value> next =
      reduce(nb, ivs, dims.drop_front(), loop.getRegionIterArgs(), mr, nv, lanesOf);
  scf::YieldOp::create(nb, loc(), next);
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> KernelBuilder::step(OpBuilder &b, ArrayRef<Value> ivs, ValueRange acc,
                                       int64_t mr, int64_t nv,
                                       const std::function<int64_t(int64_t)> &lanesOf) {
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
        rows.push_back(rowVector(b, indices(b, c.rowMap, ivs, i, v * t.lanes), lanesOf(v)));
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
      Value scalar = packedCol
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

} // namespace kiln::contraction
