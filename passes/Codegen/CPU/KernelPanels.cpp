//===- KernelPanels.cpp - Packed operand panels and prefetches -------------===//
//
// Constant operands packed at compile time into the order the kernel
// reads them ([tiles][reduction steps][tile width]), the packed tile and
// step a kernel is at, and software prefetches: of operands that jump far
// per reduction step, and of the next n tile's packed panel.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/KernelBuilder.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "passes/Utils/ElementsData.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AsmState.h"

using namespace mlir;

namespace kiln::contraction {

namespace {

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

} // namespace

void KernelBuilder::pack(OpBuilder &b, ModuleOp module, unsigned &packCount) {
  if (c.strideN == 1 && kiln::contraction::rowPanelIndependent(c))
    if ((packedRow =
             packPanel(b, module, packCount, c.row, c.rowMap, c.dimN, t.nv * t.lanes, rowPanel)))
      packedWidth = t.nv * t.lanes;
  if (c.variant == kiln::contraction::Variant::Channels && !packedRow)
    return; // No kernel: build() gives up.
  if (c.dimM && !c.mInRow && t.mr > 1)
    packedCol = packPanel(b, module, packCount, c.col, c.colMap, *c.dimM, t.mr, colPanel);
}

Value KernelBuilder::packPanel(OpBuilder &b, ModuleOp module, unsigned &packCount, Value operand,
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
  // A view of constant data reads its source `shift` elements further
  // along each dim. An offset known only at run time is allowed along the
  // operand dim that `dim` indexes, when it is a loop's induction
  // variable stepping by whole panels (kiln-strip-dynamic-dims' blocks of
  // a weight's columns around its windows): the source is then packed
  // whole along that dim, and the kernel starts at the block's first tile.
  Value source = operand, blockOffset;
  SmallVector<int64_t> shift(exprs.size(), 0);
  int64_t n = c.ranges[dim];
  if (auto view = operand.getDefiningOp<memref::SubViewOp>()) {
    source = view.getSource();
    if (view.getSourceType().getRank() != int64_t(exprs.size()) || !view.hasUnitStride())
      return {};
    for (auto [j, o] : llvm::enumerate(view.getMixedOffsets())) {
      if (std::optional<int64_t> k = getConstantIntValue(o)) {
        shift[j] = *k;
        continue;
      }
      auto d = dyn_cast<AffineDimExpr>(exprs[j]);
      scf::ForOp loop = scf::getForInductionVarOwner(cast<Value>(o));
      std::optional<int64_t> lb = loop ? getConstantIntValue(loop.getLowerBound()) : std::nullopt;
      std::optional<int64_t> step = loop ? getConstantIntValue(loop.getStep()) : std::nullopt;
      // Whole panels only: a block's last tile must not read the next's.
      if (blockOffset || !d || d.getPosition() != dim || n % width || !lb || !step ||
          *lb % width || *step % width)
        return {};
      blockOffset = cast<Value>(o);
      n = view.getSourceType().getDimSize(j);
    }
  }
  std::optional<ArrayRef<float>> data = kiln::contraction::constantData(source);
  auto type = cast<MemRefType>(source.getType());
  if (!data || !type.getLayout().isIdentity())
    return {};
  SmallVector<int64_t> strides = computeSuffixProduct(type.getShape());
  int64_t tiles = (n + width - 1) / width;
  // The offset is linear in `dim` (no division in the maps): base + i * delta.
  SmallVector<int64_t> at(c.ranges.size(), 0);
  auto offset = [&] {
    int64_t o = 0;
    for (auto [j, e] : llvm::enumerate(exprs))
      o += (evaluate(e, at) + shift[j]) * strides[j];
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
  if (blockOffset)
    panels.first = arith::DivUIOp::create(b, loc(), blockOffset, index(b, width));
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
    memref::GlobalOp::create(mb, c.op.getLoc(), name, mb.getStringAttr("private"), flatType, value,
                             /*constant=*/true, mb.getI64IntegerAttr(64));
  }
  Value flat = memref::GetGlobalOp::create(b, loc(), flatType, name);
  return memref::ExpandShapeOp::create(b, loc(),
                                       MemRefType::get({tiles, steps, width}, b.getF32Type()), flat,
                                       ArrayRef<ReassociationIndices>{{0, 1, 2}});
}

Value KernelBuilder::panelTile(OpBuilder &b, ArrayRef<Value> ivs, unsigned dim, int64_t width,
                               const Panels &panels) {
  Value tile = arith::DivUIOp::create(b, loc(), ivs[dim], index(b, width));
  if (panels.first)
    tile = arith::AddIOp::create(b, loc(), panels.first, tile);
  if (panels.outer.empty())
    return tile;
  return nest(b, linearIndex(b, ivs, panels.outer), panels.tiles, tile);
}

Value KernelBuilder::nest(OpBuilder &b, Value outer, int64_t range, Value inner) {
  return arith::AddIOp::create(b, loc(), arith::MulIOp::create(b, loc(), outer, index(b, range)),
                               inner);
}

Value KernelBuilder::linearIndex(OpBuilder &b, ArrayRef<Value> ivs, ArrayRef<unsigned> dims) {
  Value at = index(b, 0);
  for (unsigned d : dims)
    at = nest(b, at, c.ranges[d], ivs[d]);
  return at;
}

Value KernelBuilder::reductionStep(OpBuilder &b, ArrayRef<Value> ivs) {
  return linearIndex(b, ivs, c.reductions);
}

void KernelBuilder::prefetch(OpBuilder &b, ArrayRef<Value> ivs, int64_t mr, int64_t width) {
  unsigned dim = 0;
  bool found = false;
  for (unsigned d : llvm::reverse(c.reductions))
    if (c.ranges[d] > 1) {
      dim = d;
      found = true;
      break;
    }
  if (!prefetchDistance || !found || c.ranges[dim] <= prefetchDistance || c.dynamicReduction)
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
    memref::PrefetchOp::create(b, loc(), operand, indices(b, map, ahead, mOffset, nOffset),
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

void KernelBuilder::prefetchNextPanel(OpBuilder &b, ArrayRef<Value> ivs, Value tile, Value r) {
  constexpr int64_t kLineFloats = 16;
  auto type = cast<MemRefType>(packedRow.getType());
  int64_t tiles = type.getDimSize(0), width = type.getDimSize(2);
  // Panels that also change with an outer loop (a batched matmul's)
  // are not read in tile order.
  if (tiles < 2 || width % kLineFloats || !rowPanel.outer.empty())
    return;
  // How often the panel is visited: the loops inside the n tiles, then
  // the m tiles. Shared by many m tiles (a matmul's 197 rows: 33), the
  // first one's wait is a small share of the panel's time, and
  // prefetching did not pay off (vit_b_16, bert_encoder: even or slower).
  SmallVector<unsigned> around(c.outer);
  llvm::append_range(around, c.inner);
  int64_t mTiles = c.dimM ? (c.ranges[*c.dimM] + t.mr - 1) / t.mr : 1;
  int64_t visits = mTiles;
  for (unsigned d : around)
    visits *= c.ranges[d];
  if (visits < 2 || visits >= 16)
    return;
  // Which visit this m tile is.
  Value visit = linearIndex(b, ivs, around);
  if (c.dimM)
    visit = nest(b, visit, mTiles, arith::DivUIOp::create(b, loc(), ivs[*c.dimM], index(b, t.mr)));
  Value line = arith::MinUIOp::create(b, loc(), visit, index(b, width / kLineFloats - 1));
  Value next = arith::MinUIOp::create(b, loc(), arith::AddIOp::create(b, loc(), tile, index(b, 1)),
                                      index(b, tiles - 1));
  memref::PrefetchOp::create(
      b, loc(), packedRow,
      ValueRange{next, r, arith::MulIOp::create(b, loc(), line, index(b, kLineFloats))},
      /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
}

} // namespace kiln::contraction
