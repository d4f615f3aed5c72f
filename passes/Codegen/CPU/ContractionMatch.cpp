//===- ContractionMatch.cpp - Which generics the CPU kernels take ---------===//
//
// See Contraction.h. Roles come from the indexing maps: N is the output's
// innermost dim, along which the row operand is contiguous (or strided);
// M the longest output dim only the column operand has; the other
// parallel dims are loops outside the kernel, the reduction dims loops
// inside it.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/VectorHelpers.h"
#include "passes/Utils/ElementsData.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln::contraction {

namespace {

bool usesDim(AffineMap map, unsigned dim) {
  return llvm::any_of(map.getResults(),
                      [&](AffineExpr e) { return e.isFunctionOfDim(dim); });
}

/// `op` is an all-parallel generic on buffers whose other operands are
/// f32 and each either contiguous along the kernel's vector dim `vecDim`
/// (the last) or independent of it, or for Channels any static strides
/// (gathers), so that a kernel tile can load them as vectors or broadcast
/// scalars; and that either writes exactly `out` (identity map; in place)
/// or reads `out` (identity map) and writes another buffer of its shape
/// without reading that one (out of place). Returns false otherwise.
bool elementwiseOnOutput(linalg::GenericOp op, Value out, unsigned vecDim, Variant variant) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || op.getNumReductionLoops() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return false;
  Value written = op.getDpsInitOperand(0)->get();
  bool inPlace = written == out, readsOut = false;
  // Over a dynamic N (Rows), the other operands' vectors along it are
  // masked like the output's: their innermost dim may be dynamic too.
  auto outType = cast<MemRefType>(out.getType());
  bool dynamicN = variant == Variant::Rows && outType.getRank() &&
                  outType.isDynamicDim(outType.getRank() - 1);
  auto contiguous = [&](Value v) {
    return dynamicN ? kiln::vec::unitInnermostStride(v) : kiln::vec::innermostUnitStride(v);
  };
  if (!inPlace) {
    auto type = cast<MemRefType>(written.getType());
    if (type.getShape() != outType.getShape() ||
        !type.getElementType().isF32() || !contiguous(written) ||
        op.getMatchingBlockArgument(op.getDpsInitOperand(0)).use_empty() == false ||
        kiln::vec::rootBuffer(written) == kiln::vec::rootBuffer(out))
      return false;
  }
  if (variant == Variant::Channels && !inPlace && !staticStride(written, vecDim))
    return false;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (in->get() == out) {
      if (!map.isIdentity())
        return false;
      readsOut = true;
      continue;
    }
    auto type = dyn_cast<MemRefType>(in->get().getType());
    // Dynamic outer dims only along the rows of a kernel over dynamic
    // dims (kiln-strip-dynamic-dims' rows left, the skip connection's).
    if (!type || !type.getElementType().isF32() ||
        (variant == Variant::Channels && !type.hasStaticShape()) ||
        !map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return false;
    // Another view of the output's (or the written) memory would be read
    // before the tile is stored. The written buffer itself, element for
    // element (a residual add into the skip connection's buffer), is
    // read by the tile that then writes it.
    bool sameAsWritten = !inPlace && in->get() == written && map.isIdentity();
    if (!sameAsWritten &&
        (kiln::vec::rootBuffer(in->get()) == kiln::vec::rootBuffer(out) ||
         kiln::vec::rootBuffer(in->get()) == kiln::vec::rootBuffer(written)))
      return false;
    ArrayRef<AffineExpr> results = map.getResults();
    for (auto [j, e] : llvm::enumerate(results)) {
      if (!e.isFunctionOfDim(vecDim))
        continue;
      if (variant == Variant::Channels) {
        // Gathered: vector.gather lowers for a unit innermost stride only.
        if (!staticStride(in->get(), j) || !kiln::vec::innermostContiguous(in->get()))
          return false;
      } else if (j + 1 != results.size() || !contiguous(in->get())) {
        return false;
      }
    }
  }
  return inPlace || readsOut;
}

/// The constant `copy`'s source holds in every element: it was filled with
/// it earlier in the block, and since then only read (copied from; views
/// and sizes read, over dynamic dims, touch no element).
std::optional<float> copiedConstant(memref::CopyOp copy) {
  Value src = copy.getSource(), root = kiln::vec::rootBuffer(src);
  for (Operation *op = copy->getPrevNode(); op; op = op->getPrevNode()) {
    if (std::optional<Value> value = kiln::vec::constantFill(op, src)) {
      FloatAttr attr;
      if (matchPattern(*value, m_Constant(&attr)))
        return attr.getValueAsDouble();
      return std::nullopt;
    }
    if (isView(op) || !kiln::vec::touches(op, root))
      continue;
    auto other = dyn_cast<memref::CopyOp>(op);
    if (!other || kiln::vec::rootBuffer(other.getTarget()) == root)
      return std::nullopt;
  }
  return std::nullopt;
}

} // namespace

bool noDivision(AffineExpr expr) {
  bool linear = true;
  expr.walk([&](AffineExpr e) {
    linear &= e.getKind() != AffineExprKind::Mod && e.getKind() != AffineExprKind::FloorDiv &&
              e.getKind() != AffineExprKind::CeilDiv;
  });
  return linear;
}

std::optional<int64_t> coefficient(AffineExpr expr, unsigned dim, unsigned numDims) {
  if (!expr.isPureAffine())
    return std::nullopt;
  MLIRContext *ctx = expr.getContext();
  auto at = [&](int64_t v) -> std::optional<int64_t> {
    SmallVector<AffineExpr> repl(numDims, getAffineConstantExpr(0, ctx));
    repl[dim] = getAffineConstantExpr(v, ctx);
    auto c = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(expr.replaceDims(repl), numDims, 0));
    if (!c)
      return std::nullopt;
    return c.getValue();
  };
  auto c0 = at(0), c1 = at(1), c2 = at(2);
  if (!c0 || !c1 || !c2 || *c2 - *c0 != 2 * (*c1 - *c0))
    return std::nullopt;
  return *c1 - *c0;
}

std::optional<int64_t> staticStride(Value v, unsigned pos) {
  auto type = dyn_cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || pos >= type.getRank() || failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(strides[pos]) || strides[pos] <= 0 || strides[pos] > (1 << 24))
    return std::nullopt;
  return strides[pos];
}

std::optional<int64_t> byteStride(Value operand, AffineMap map, unsigned dim) {
  int64_t elements = 0;
  for (auto [j, e] : llvm::enumerate(map.getResults())) {
    std::optional<int64_t> k = coefficient(e, dim, map.getNumDims());
    if (!k)
      return std::nullopt;
    if (*k == 0)
      continue;
    std::optional<int64_t> stride = staticStride(operand, j);
    if (!stride)
      return std::nullopt;
    elements += *k * *stride;
  }
  return elements * 4;
}

std::optional<ArrayRef<float>> constantData(Value v) {
  std::optional<ArrayRef<char>> raw = constantBytes(v, Float32Type::get(v.getContext()));
  if (!raw)
    return std::nullopt;
  return ArrayRef<float>(reinterpret_cast<const float *>(raw->data()), raw->size() / 4);
}

std::optional<ArrayRef<char>> constantBytes(Value v, Type elementType) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto e = dyn_cast<memref::ExpandShapeOp>(def)) {
      v = e.getSrc();
      continue;
    }
    if (auto cs = dyn_cast<memref::CollapseShapeOp>(def)) {
      v = cs.getSrc();
      continue;
    }
    auto get = dyn_cast<memref::GetGlobalOp>(def);
    auto module = def->getParentOfType<ModuleOp>();
    auto global =
        get && module ? module.lookupSymbol<memref::GlobalOp>(get.getNameAttr()) : nullptr;
    if (!global || !global.getConstant() || !global.getType().getLayout().isIdentity())
      return std::nullopt;
    Type elem = global.getType().getElementType();
    if (elem != elementType || !elem.isIntOrFloat() || elem.getIntOrFloatBitWidth() % 8)
      return std::nullopt;
    std::optional<ArrayRef<char>> raw = kiln::rawElementData(global.getInitialValueAttr());
    if (!raw || raw->size() != size_t(global.getType().getNumElements()) *
                                   (elem.getIntOrFloatBitWidth() / 8))
      return std::nullopt;
    return raw;
  }
  return std::nullopt;
}

bool rowPanelIndependent(const Contraction &c) {
  SmallVector<utils::IteratorType> iters = linalg::GenericOp(c.op).getIteratorTypesArray();
  for (AffineExpr e : c.rowMap.getResults())
    for (unsigned d = 0; d < c.ranges.size(); ++d)
      if (e.isFunctionOfDim(d) && iters[d] == utils::IteratorType::parallel && d != c.dimN)
        return false;
  return true;
}

/// Whether `a` and `b` are the same elements in the same order: equal, or
/// the same contiguous type reached from one buffer through reshapes of
/// contiguous memrefs only (which keep the row-major order).
bool sameElements(Value a, Value b) {
  if (a == b)
    return true;
  auto contiguous = [](Value v) {
    auto t = dyn_cast<MemRefType>(v.getType());
    return t && t.hasStaticShape() && t.getLayout().isIdentity();
  };
  if (a.getType() != b.getType() || !contiguous(a))
    return false;
  auto source = [&](Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def) ||
          !contiguous(def->getOperand(0)))
        break;
      v = def->getOperand(0);
    }
    return v;
  };
  return source(a) == source(b);
}

namespace {

/// `op` writes every element of `root` (a planned workspace buffer) and
/// reads none of it: a linalg op on buffers whose inputs share no memory
/// with `root` and whose init on it is all of it (through reshapes only),
/// written at every element (a permutation map) from its payload alone.
bool overwrites(Operation *op, Value root) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics())
    return false;
  for (Value in : linalgOp.getDpsInputs())
    if (isa<MemRefType>(in.getType()) && kiln::vec::mayOverlap(in, root))
      return false;
  bool whole = false;
  for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
    if (kiln::vec::rootBuffer(init.get()) != root) {
      if (kiln::vec::mayOverlap(init.get(), root))
        return false;
      continue;
    }
    Value v = init.get();
    while (v != root && isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(
                            v.getDefiningOp()))
      v = v.getDefiningOp()->getOperand(0);
    if (v != root || !linalgOp.getMatchingIndexingMap(&init).isPermutation() ||
        linalgOp.payloadUsesValueFromOperand(&init))
      return false;
    whole = true;
  }
  return whole;
}

} // namespace

std::optional<float> constantInit(Operation *op, Value out) {
  if (!op)
    return std::nullopt;
  if (std::optional<Value> value = kiln::vec::constantFill(op, out)) {
    FloatAttr attr;
    if (matchPattern(*value, m_Constant(&attr)))
      return attr.getValueAsDouble();
    return std::nullopt;
  }
  // A copy of a constant-filled buffer (inits shared by CSE).
  auto copy = dyn_cast<memref::CopyOp>(op);
  if (copy && copy.getTarget() == out)
    return copiedConstant(copy);
  return std::nullopt;
}

bool isView(Operation *op) { return op->getNumRegions() == 0 && isMemoryEffectFree(op); }

/// Nothing after `op` (in its block, nested regions included) reads the
/// memory of `buffer`, a planned workspace buffer, before writing all of
/// it (the memory plan gives buffers of one size and offset the same
/// view: the next tensor there overwrites it). Only for ops directly in a
/// function's body: inside a loop, a later iteration could read it.
bool deadAfter(Operation *op, Value buffer) {
  Value root = kiln::vec::rootBuffer(buffer);
  if (!root.getDefiningOp<memref::ViewOp>() || !isa<func::FuncOp>(op->getParentOp()))
    return false; // An argument (a graph output) or a global; or nested.
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (!isView(next) && kiln::vec::touches(next, root))
      return overwrites(next, root);
  return true;
}

bool independent(Operation *x, Operation *y) {
  auto onBuffers = [](Operation *op) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    return linalgOp && linalgOp.hasPureBufferSemantics() &&
           llvm::all_of(op->getRegions(), [](Region &r) {
             return llvm::all_of(r.getOps(), [](Operation &inner) {
               return isMemoryEffectFree(&inner);
             });
           });
  };
  if (!onBuffers(x) || !onBuffers(y))
    return false;
  for (Value a : x->getOperands())
    for (Value b : y->getOperands())
      if (isa<MemRefType>(a.getType()) && isa<MemRefType>(b.getType()) &&
          kiln::vec::mayOverlap(a, b))
        return false;
  return true;
}

Operation *initCandidate(Operation *op) {
  // Views and constants between don't touch memory; linalg ops between
  // that share no memory with the kernel (the border of a padded buffer
  // its epilogue writes into) or the candidate are passed over.
  Operation *before = op->getPrevNode();
  SmallVector<Operation *> passed;
  while (before && (isView(before) || independent(before, op))) {
    if (!isMemoryEffectFree(before))
      passed.push_back(before);
    before = before->getPrevNode();
  }
  if (before && llvm::any_of(passed, [&](Operation *p) { return !independent(p, before); }))
    return nullptr;
  return before;
}

bool isF32MultiplyAccumulate(linalg::GenericOp op) {
  return kiln::vec::isMultiplyAccumulate(op) &&
         llvm::all_of(op->getOperandTypes(), [](Type t) {
           auto m = dyn_cast<MemRefType>(t);
           return m && m.getElementType().isF32();
         });
}

std::optional<Contraction> match(linalg::GenericOp op, Variant variant) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isF32MultiplyAccumulate(op))
    return std::nullopt;
  Contraction c;
  c.op = op;
  c.variant = variant;
  c.ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  // A dynamic parallel dim other than N, which the column operand alone
  // must have (Contraction::dynamicRows).
  std::optional<unsigned> dynamicRows;
  for (unsigned d = 0; d < c.ranges.size(); ++d) {
    int64_t &r = c.ranges[d];
    // One dynamic reduction dim, its size read where an input has it as
    // an index of its own.
    if (ShapedType::isDynamic(r) && !c.dynamicReduction &&
        iters[d] == utils::IteratorType::reduction) {
      for (OpOperand *in : op.getDpsInputOperands()) {
        ArrayRef<AffineExpr> exprs = op.getMatchingIndexingMap(in).getResults();
        auto it = llvm::find(exprs, getAffineDimExpr(d, op.getContext()));
        if (it == exprs.end())
          continue;
        c.dynamicReduction = Contraction::DynamicReduction{
            d, in->getOperandNumber(), static_cast<unsigned>(it - exprs.begin())};
        r = kNominalExtent;
        break;
      }
    }
    // N (the output's innermost dim), read as Rows.
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (ShapedType::isDynamic(r) && variant == Variant::Rows && outMap.getNumResults() &&
        outMap.getResults().back() == getAffineDimExpr(d, op.getContext())) {
      c.dynamicN = true;
      r = kNominalExtent;
    } else if (ShapedType::isDynamic(r) && variant == Variant::Rows && !dynamicRows &&
               iters[d] == utils::IteratorType::parallel) {
      dynamicRows = d;
      r = kNominalExtent;
    }
    if (r <= 0)
      return std::nullopt; // Dynamic or empty.
  }
  // The Channels reading needs its weights packed, over a static extent.
  if (c.dynamicReduction && variant == Variant::Channels)
    return std::nullopt;
  unsigned nd = op.getNumLoops();
  c.out = op.getDpsInitOperand(0)->get();
  c.outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  bool outContiguous = c.dynamicN   ? kiln::vec::unitInnermostStride(c.out)
                       : dynamicRows ? kiln::vec::innermostUnitStride(c.out)
                                     : kiln::vec::innermostContiguous(c.out);
  if (!outContiguous || !c.outMap.isProjectedPermutation() || c.outMap.getNumResults() == 0)
    return std::nullopt;
  // Parallel dims are exactly the output's dims.
  for (unsigned d = 0; d < nd; ++d) {
    bool inOut = c.outMap.isFunctionOfDim(d);
    if (inOut != (iters[d] == utils::IteratorType::parallel))
      return std::nullopt;
    if (!inOut)
      c.reductions.push_back(d);
  }
  Value ins[2] = {op.getDpsInputOperand(0)->get(), op.getDpsInputOperand(1)->get()};
  AffineMap maps[2] = {op.getMatchingIndexingMap(op.getDpsInputOperand(0)),
                       op.getMatchingIndexingMap(op.getDpsInputOperand(1))};
  for (AffineMap map : maps)
    for (AffineExpr e : map.getResults())
      if (!e.isPureAffine())
        return std::nullopt;
  ArrayRef<AffineExpr> outExprs = c.outMap.getResults();
  if (variant == Variant::Rows) {
    // N is the output's last dim. The row operand: its last index has N,
    // linearly; nothing else has N.
    c.outPosN = outExprs.size() - 1;
    c.dimN = cast<AffineDimExpr>(outExprs.back()).getPosition();
    int rowIdx = -1;
    for (int i = 0; i < 2; ++i) {
      if (!usesDim(maps[i], c.dimN))
        continue;
      if (rowIdx != -1 || maps[i].getNumResults() == 0)
        return std::nullopt;
      rowIdx = i;
    }
    if (rowIdx == -1)
      return std::nullopt;
    c.row = ins[rowIdx];
    c.rowMap = maps[rowIdx];
    c.col = ins[1 - rowIdx];
    c.colMap = maps[1 - rowIdx];
    if (!(c.dynamicN            ? kiln::vec::unitInnermostStride(c.row)
          : c.dynamicReduction ? kiln::vec::innermostUnitStride(c.row)
                               : kiln::vec::innermostContiguous(c.row)))
      return std::nullopt;
    ArrayRef<AffineExpr> rowExprs = c.rowMap.getResults();
    for (AffineExpr e : rowExprs.drop_back())
      if (e.isFunctionOfDim(c.dimN))
        return std::nullopt;
    // Contiguous loads need the last index linear in N: no mod or division.
    if (!noDivision(rowExprs.back()))
      return std::nullopt;
    std::optional<int64_t> s = coefficient(rowExprs.back(), c.dimN, nd);
    // Dynamic N: plain loads under a mask made at run time.
    if (!s || *s < 1 || *s > 1024 || (c.dynamicN && *s != 1))
      return std::nullopt;
    c.strideN = *s;
  } else {
    // N is an output dim other than the last that only one operand has, a
    // constant one whose indices are linear in N (a conv's weights along
    // the output channels): packed, it reads as contiguous vectors.
    for (auto [pos, e] : llvm::enumerate(outExprs.drop_back())) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      for (int i = 0; i < 2; ++i) {
        if (!usesDim(maps[i], d) || usesDim(maps[1 - i], d) || !constantData(ins[i]) ||
            (c.row && c.ranges[d] <= c.ranges[c.dimN]))
          continue;
        c.dimN = d;
        c.outPosN = pos;
        c.row = ins[i];
        c.rowMap = maps[i];
        c.col = ins[1 - i];
        c.colMap = maps[1 - i];
      }
    }
    if (!c.row || !constantData(c.row) ||
        !cast<MemRefType>(c.row.getType()).getLayout().isIdentity() || !rowPanelIndependent(c) ||
        !staticStride(c.out, c.outPosN))
      return std::nullopt;
    for (AffineExpr e : c.rowMap.getResults())
      if (e.isFunctionOfDim(c.dimN) && (!noDivision(e) || !coefficient(e, c.dimN, nd)))
        return std::nullopt;
  }

  // M: the longest output dim the column operand has and the row lacks
  // (innermost on ties). A matmul of [197, 1, 768] by [768, 2304] has m of
  // 1 but a batch of 197 that the weight does not have: the rows. A
  // dynamic one is such a dim, M if no static one has 2 or more.
  if (dynamicRows &&
      (!usesDim(c.colMap, *dynamicRows) || usesDim(c.rowMap, *dynamicRows)))
    return std::nullopt;
  for (AffineExpr e : llvm::reverse(outExprs)) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (d != c.dimN && d != dynamicRows && usesDim(c.colMap, d) && !usesDim(c.rowMap, d) &&
        (!c.dimM || c.ranges[d] > c.ranges[*c.dimM]))
      c.dimM = d;
  }
  if (dynamicRows && (!c.dimM || c.ranges[*c.dimM] < 2))
    c.dimM = *dynamicRows;
  c.dynamicRows = dynamicRows;
  // None (a depthwise conv: the channel is in both operands): the
  // longest output dim the row operand alone has, the output rows, so that
  // the tile still keeps several independent accumulators.
  if (variant == Variant::Rows && !c.dimM) {
    for (AffineExpr e : llvm::reverse(outExprs)) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      if (d != c.dimN && usesDim(c.rowMap, d) && !usesDim(c.colMap, d) &&
          (!c.dimM || c.ranges[d] > c.ranges[*c.dimM]))
        c.dimM = d;
    }
    c.mInRow = c.dimM.has_value();
  }
  for (AffineExpr e : outExprs) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if ((c.dimM && d == *c.dimM) || d == c.dimN)
      continue;
    (usesDim(c.colMap, d) ? c.outer : c.inner).push_back(d);
  }
  // Every output element is written by exactly one tile, so what writes
  // it just before need not reach memory, and what updates it in place
  // just after can be applied to the tile in registers.
  Operation *before = initCandidate(op);
  if (std::optional<float> value = constantInit(before, c.out)) {
    c.init = before;
    c.fillValue = *value;
  } else if (auto copy = dyn_cast_or_null<linalg::GenericOp>(before);
             copy && !kiln::vec::constantFill(copy, c.out)) {
    Block &body = copy.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    if (copy.getNumDpsInputs() == 1 && copy.getNumDpsInits() == 1 &&
        copy.getDpsInitOperand(0)->get() == c.out &&
        elementwiseOnOutput(copy, c.out, c.outPosN, variant) &&
        body.getOperations().size() == 1 && yield.getValues().size() == 1 &&
        yield.getValues()[0] == body.getArgument(0)) {
      c.init = copy;
      c.initCopy = copy;
    }
  }
  // Out of place only when the output is dead after: the kernel then
  // writes the epilogue's buffer instead.
  // Out of place, the kernel stores the epilogue's result while it still
  // reads its inputs: the plan may have put that buffer where an input
  // was (dead after the contraction).
  auto outOfPlaceSafe = [&](Value written) {
    if (written == c.out)
      return true;
    // A strip-mined piece: kiln-strip-dynamic-dims checked both, on the
    // whole op, where sizes over dynamic dims do not hide the plan.
    if (!op->hasAttr(kOutputReadOnce) &&
        (!deadAfter(op->getNextNode(), c.out) || kiln::vec::mayOverlap(written, c.row) ||
         kiln::vec::mayOverlap(written, c.col)))
      return false;
    return !c.initCopy ||
           !kiln::vec::mayOverlap(written, c.initCopy.getDpsInputOperand(0)->get());
  };
  if (auto after = dyn_cast_or_null<linalg::GenericOp>(op->getNextNode())) {
    // The output read through reshapes back to its own shape (an
    // epilogue rebuilt for the other branch of a residual add, whose
    // kernel was then moved away) is the output.
    for (OpOperand *in : after.getDpsInputOperands())
      if (in->get() != c.out && sameElements(in->get(), c.out))
        in->set(c.out);
  }
  if (auto after = dyn_cast_or_null<linalg::GenericOp>(op->getNextNode()))
    if (elementwiseOnOutput(after, c.out, c.outPosN, variant) &&
        kiln::vec::vectorisableBody(after) &&
        outOfPlaceSafe(after.getDpsInitOperand(0)->get()))
      c.epilogue = after;
  return c;
}


} // namespace kiln::contraction
