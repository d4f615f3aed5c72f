//===- StripRules.cpp - What kiln-strip-dynamic-dims strips, and how ------===//
//
// The rules of kiln-strip-dynamic-dims (StripDynamicDims.cpp): which
// generics can be strip-mined and along which dims (dynamicDims), which
// are left whole (plain copies), which dynamic dims the contraction
// kernels take whole (a reduction, the columns) or as rows left after the
// windows, and which elementwise generics transpose into a dynamic dim.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/StripDynamicDims.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

namespace kiln::strip {

bool readsPosition(linalg::GenericOp op, llvm::function_ref<bool(unsigned)> dim) {
  return op.getRegion()
      .walk([&](linalg::IndexOp index) {
        return dim(index.getDim()) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

std::optional<StridedUse> stridedUse(AffineExpr e, ArrayRef<int64_t> ranges) {
  if (!e.isPureAffine() || !kiln::contraction::noDivision(e))
    return std::nullopt;
  unsigned n = ranges.size();
  auto constant = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(
      e.replaceDims(SmallVector<AffineExpr>(n, getAffineConstantExpr(0, e.getContext()))), n,
      0));
  if (!constant || constant.getValue() < 0)
    return std::nullopt;
  SmallVector<int64_t> coefficients;
  for (unsigned k = 0; k < n; ++k) {
    std::optional<int64_t> c = kiln::contraction::coefficient(e, k, n);
    if (!c)
      return std::nullopt;
    coefficients.push_back(*c);
  }
  std::optional<StridedUse> use;
  int64_t extent = constant.getValue() + 1;
  for (auto [k, c] : llvm::enumerate(coefficients)) {
    if (!c)
      continue;
    if (c < 0)
      return std::nullopt;
    if (ShapedType::isDynamic(ranges[k])) {
      if (use)
        return std::nullopt;
      use = StridedUse{unsigned(k), c, 0};
    } else {
      extent += c * (ranges[k] - 1);
    }
  }
  if (use)
    use->extent = extent;
  return use;
}

std::optional<unsigned> wholeReduction(linalg::GenericOp op, DynamicDims dims) {
  if (!kiln::contraction::isF32MultiplyAccumulate(op))
    return std::nullopt;
  std::optional<unsigned> found;
  for (auto [d, src] : dims) {
    if (op.getIteratorTypesArray()[d] != utils::IteratorType::reduction)
      continue;
    if (found)
      return std::nullopt;
    found = d;
  }
  if (!found)
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr e : map.getResults())
      if (!isa<AffineDimExpr>(e) && e.isFunctionOfDim(*found))
        return std::nullopt;
  return found;
}

/// The dims `e` adds up, if it is a sum of dims only.
static bool sumOfDims(AffineExpr e, SmallVectorImpl<unsigned> &terms) {
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    terms.push_back(d.getPosition());
    return true;
  }
  auto sum = dyn_cast<AffineBinaryOpExpr>(e);
  return sum && sum.getKind() == AffineExprKind::Add && sumOfDims(sum.getLHS(), terms) &&
         sumOfDims(sum.getRHS(), terms);
}

/// `e` is dim `n`, or `n` plus reduction dims of `op` (a stride-1 conv's
/// window over the row-stacked grid: `n + kw`), each once.
static bool windowOf(linalg::GenericOp op, AffineExpr e, unsigned n) {
  SmallVector<unsigned> terms;
  if (!sumOfDims(e, terms) || llvm::count(terms, n) != 1)
    return false;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  llvm::sort(terms);
  return std::adjacent_find(terms.begin(), terms.end()) == terms.end() &&
         llvm::all_of(terms, [&](unsigned d) {
           return d == n || iters[d] == utils::IteratorType::reduction;
         });
}

std::optional<unsigned> wholeColumns(linalg::GenericOp op, DynamicDims dims) {
  if (!kiln::contraction::isF32MultiplyAccumulate(op) || op.getNumDpsInits() != 1)
    return std::nullopt;
  OpOperand *out = op.getDpsInitOperand(0);
  ArrayRef<AffineExpr> outExprs = op.getMatchingIndexingMap(out).getResults();
  if (outExprs.empty() || !kiln::vec::unitInnermostStride(out->get()))
    return std::nullopt;
  auto last = dyn_cast<AffineDimExpr>(outExprs.back());
  if (!last)
    return std::nullopt;
  unsigned n = last.getPosition();
  if (!llvm::is_contained(llvm::make_first_range(dims), n) ||
      op.getIteratorTypesArray()[n] != utils::IteratorType::parallel)
    return std::nullopt;
  int users = 0;
  for (OpOperand *in : op.getDpsInputOperands()) {
    ArrayRef<AffineExpr> exprs = op.getMatchingIndexingMap(in).getResults();
    int uses = llvm::count_if(exprs, [&](AffineExpr e) { return e.isFunctionOfDim(n); });
    if (!uses)
      continue;
    if (uses != 1 || !windowOf(op, exprs.back(), n) ||
        !kiln::vec::unitInnermostStride(in->get()))
      return std::nullopt;
    ++users;
  }
  if (users != 1)
    return std::nullopt;
  return n;
}

bool restAsRows(linalg::GenericOp op, unsigned d) {
  if (!kiln::contraction::isF32MultiplyAccumulate(op) || op.getNumDpsInits() != 1 ||
      op.getIteratorTypesArray()[d] != utils::IteratorType::parallel)
    return false;
  AffineExpr dim = getAffineDimExpr(d, op.getContext());
  ArrayRef<AffineExpr> outExprs =
      op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResults();
  auto last = outExprs.empty() ? nullptr : dyn_cast<AffineDimExpr>(outExprs.back());
  if (!last || last == dim || !llvm::is_contained(outExprs, dim))
    return false;
  int users = 0;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    int uses = llvm::count_if(map.getResults(), [&](AffineExpr e) { return e.isFunctionOfDim(d); });
    if (!uses)
      continue;
    if (uses != 1 || !llvm::is_contained(map.getResults(), dim) ||
        map.isFunctionOfDim(last.getPosition()))
      return false;
    ++users;
  }
  return users == 1;
}

bool transposesInto(linalg::GenericOp op, unsigned d) {
  if (op.getNumReductionLoops())
    return false;
  AffineExpr dim = getAffineDimExpr(d, op.getContext());
  auto innermost = [](AffineMap map) {
    return map.getNumResults() ? map.getResults().back() : AffineExpr();
  };
  return llvm::all_of(op.getDpsInitsMutable(),
                      [&](OpOperand &out) {
                        return innermost(op.getMatchingIndexingMap(&out)) == dim;
                      }) &&
         llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
           AffineMap map = op.getMatchingIndexingMap(in);
           AffineExpr last = innermost(map);
           return last && isa<AffineDimExpr>(last) && last != dim && map.isFunctionOfDim(d);
         });
}

SmallVector<std::pair<unsigned, SizeSource>> dynamicDims(linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<std::pair<unsigned, SizeSource>> dims;
  llvm::DenseMap<unsigned, SizeSource> source;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      return {};
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [j, e] : llvm::enumerate(map.getResults())) {
      // Every expression that uses a dynamic loop dim must be that dim
      // alone; every dynamic operand dim must be indexed so.
      // Or, reading a window's input, a strided use.
      auto d = dyn_cast<AffineDimExpr>(e);
      bool usesDynamic = false;
      for (unsigned k = 0; k < ranges.size(); ++k)
        usesDynamic |= ShapedType::isDynamic(ranges[k]) && e.isFunctionOfDim(k);
      bool strided = !d && stridedUse(e, ranges);
      if (usesDynamic && !d && !strided)
        return {};
      if (type.isDynamicDim(j) && !strided &&
          (!d || !ShapedType::isDynamic(ranges[d.getPosition()])))
        return {};
      if (d && ShapedType::isDynamic(ranges[d.getPosition()]))
        source.try_emplace(d.getPosition(), SizeSource{operand.getOperandNumber(),
                                                       static_cast<unsigned>(j)});
    }
  }
  // A body that reads the position along a dynamic dim (linalg.index)
  // would see it within the window.
  if (readsPosition(op, [&](unsigned d) {
        return d < ranges.size() && ShapedType::isDynamic(ranges[d]);
      }))
    return {};
  for (unsigned k = 0; k < ranges.size(); ++k) {
    if (!ShapedType::isDynamic(ranges[k]))
      continue;
    auto it = source.find(k);
    if (it == source.end())
      return {};
    dims.push_back({k, it->second});
  }
  return dims;
}

bool plainCopy(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      llvm::is_contained(op.getIteratorTypesArray(), utils::IteratorType::reduction) ||
      !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) { return m.isPermutation(); }))
    return false;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0].getNumResults() == 0 || maps[0].getResults().back() != maps[1].getResults().back())
    return false;
  Block &body = op.getRegion().front();
  return cast<linalg::YieldOp>(body.getTerminator()).getValues()[0] == body.getArgument(0);
}

int64_t staticWork(ArrayRef<int64_t> ranges) {
  int64_t work = 1;
  for (int64_t r : ranges)
    if (!ShapedType::isDynamic(r))
      work *= r;
  return work;
}

std::optional<std::pair<unsigned, int64_t>>
channelBlocks(linalg::GenericOp op, ArrayRef<int64_t> ranges, int64_t budget) {
  constexpr int64_t kMinBlock = 64;
  auto uses = [&](AffineMap map, unsigned d) {
    return llvm::is_contained(map.getResults(), getAffineDimExpr(d, op.getContext()));
  };
  for (OpOperand *w : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(w->get().getType());
    AffineMap map = op.getMatchingIndexingMap(w);
    if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
        llvm::any_of(llvm::seq<unsigned>(0, ranges.size()), [&](unsigned d) {
          return ShapedType::isDynamic(ranges[d]) && map.isFunctionOfDim(d);
        }))
      continue;
    int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
    if (bytes <= budget)
      continue;
    for (unsigned m = 0; m < ranges.size(); ++m) {
      if (ShapedType::isDynamic(ranges[m]) || ranges[m] < 2 ||
          op.getIteratorTypesArray()[m] != utils::IteratorType::parallel || !uses(map, m) ||
          !llvm::all_of(op.getDpsInitsMutable(),
                        [&](OpOperand &out) { return uses(op.getMatchingIndexingMap(&out), m); }) ||
          llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
            return in != w && op.getMatchingIndexingMap(in).isFunctionOfDim(m);
          }))
        continue;
      // At least 64 channels: the kernels put them along the vectors.
      // An even number of blocks where one fits: the blocks go to
      // threads, and 3 blocks on 2 threads left one idle a third of the
      // time (a GRU's 768 gate columns: 0.79x the time in blocks of 192).
      int64_t perUnit = bytes / ranges[m], size = 0, evenSize = 0;
      for (int64_t s = 1; s < ranges[m]; ++s) {
        if (ranges[m] % s || s < kMinBlock)
          continue;
        if (s * perUnit <= budget || !size)
          size = s;
        if (s * perUnit <= budget && (ranges[m] / s) % 2 == 0)
          evenSize = s;
      }
      if (!size)
        return std::nullopt;
      return std::make_pair(m, evenSize ? evenSize : size);
    }
  }
  return std::nullopt;
}

std::optional<std::pair<unsigned, int64_t>> parallelBlocks(linalg::GenericOp op,
                                                           ArrayRef<int64_t> ranges) {
  constexpr int64_t kMaxBlocks = 16, kMinWork = 64;
  // Too little static work (a few rows of a sequence): not worth a
  // parallel loop, whatever the dynamic sizes.
  if (staticWork(ranges) < kMinWork)
    return std::nullopt;
  // With reductions, only a dim every operand has (a depthwise conv's
  // channels): a contraction's kernels tile the rows of an output that
  // a shared operand is read into, in tiles the blocks would cut.
  bool reduces =
      llvm::is_contained(op.getIteratorTypesArray(), utils::IteratorType::reduction);
  for (unsigned m = 0; m < ranges.size(); ++m) {
    if (ShapedType::isDynamic(ranges[m]) || ranges[m] < 2 ||
        op.getIteratorTypesArray()[m] != utils::IteratorType::parallel)
      continue;
    AffineExpr dim = getAffineDimExpr(m, op.getContext());
    bool plain = llvm::all_of(op->getOpOperands(), [&](OpOperand &operand) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      int64_t uses = llvm::count_if(map.getResults(),
                                    [&](AffineExpr e) { return e.isFunctionOfDim(m); });
      bool output = op.isDpsInit(&operand);
      return (uses == 0 && !output && !reduces) ||
             (uses == 1 && llvm::is_contained(map.getResults(), dim));
    });
    // Not the outputs' innermost dim: the kernels' vectors run along it.
    bool inner = llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &out) {
      AffineMap map = op.getMatchingIndexingMap(&out);
      return map.getNumResults() && map.getResults().back() == dim;
    });
    // Nor one whose position the body reads (a gather's row).
    if (!plain || inner || readsPosition(op, [&](unsigned d) { return d == m; }))
      continue;
    int64_t size = ranges[m];
    for (int64_t s = 1; s <= ranges[m]; ++s)
      if (ranges[m] % s == 0 && ranges[m] / s <= kMaxBlocks) {
        size = s;
        break;
      }
    return std::make_pair(m, size);
  }
  return std::nullopt;
}

} // namespace kiln::strip
