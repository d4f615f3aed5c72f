//===- VectorHelpers.cpp - Shared pieces of the CPU vector passes ---------===//

#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace kiln::vec {

Value laneOffsets(OpBuilder &b, Location loc, int64_t lanes, int64_t stride) {
  SmallVector<int32_t> offsets;
  for (int64_t i = 0; i < lanes; ++i)
    offsets.push_back(int32_t(i * stride));
  auto type = VectorType::get({lanes}, b.getI32Type());
  return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, ArrayRef<int32_t>(offsets)));
}

Value gather(OpBuilder &b, Location loc, Value mem, ValueRange idx, int64_t lanes,
             int64_t stride, Value mask) {
  auto type = VectorType::get({lanes}, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  return vector::GatherOp::create(b, loc, type, mem, idx, laneOffsets(b, loc, lanes, stride),
                                  mask, zero);
}

Value stridedLoad(OpBuilder &b, Location loc, Value mem, ValueRange idx, int64_t lanes,
                  int64_t stride, int64_t on) {
  auto type = VectorType::get({lanes}, b.getF32Type());
  if (stride == 1)
    return load(b, loc, mem, idx, type, on);
  if (stride > kMaxShuffledStride)
    return gather(b, loc, mem, idx, lanes, stride, on);
  // Every stride-th element of a wide load that stops at the last one
  // needed: a few contiguous loads and one shuffle cost less than a gather.
  Value wide = load(b, loc, mem, idx, VectorType::get({lanes * stride}, b.getF32Type()),
                    (on - 1) * stride + 1);
  SmallVector<int64_t> picks;
  for (int64_t i = 0; i < lanes; ++i)
    picks.push_back(i * stride);
  return vector::ShuffleOp::create(b, loc, wide, wide, picks);
}

Transposed transposeRows(OpBuilder &b, Location loc, ArrayRef<Value> rows) {
  int64_t count = rows.size();
  int64_t lanes = cast<VectorType>(rows.front().getType()).getNumElements();
  // state[k] holds, at lane l, element (row, column) tag[k][l].
  SmallVector<Value> state(rows);
  SmallVector<SmallVector<std::pair<int64_t, int64_t>>> tag(count);
  for (int64_t r = 0; r < count; ++r)
    for (int64_t l = 0; l < lanes; ++l)
      tag[r].push_back({r, l});
  for (int64_t unit = 1; unit < count; unit *= 2) {
    // Pairs of vectors (2j, 2j + 1): units of `unit` lanes from the first
    // half of both, alternating, into j; from the second half into
    // j + count / 2 (lanes of the second vector count from `lanes`).
    SmallVector<Value> next(count);
    SmallVector<SmallVector<std::pair<int64_t, int64_t>>> nextTag(count);
    int64_t half = count / 2, units = lanes / (2 * unit);
    for (int64_t j = 0; j < half; ++j)
      for (int64_t side = 0; side < 2; ++side) {
        SmallVector<int64_t> mask;
        int64_t at = j + side * half;
        for (int64_t k = side * units; k < (side + 1) * units; ++k)
          for (int64_t from = 0; from < 2; ++from)
            for (int64_t e = 0; e < unit; ++e) {
              mask.push_back(from * lanes + k * unit + e);
              nextTag[at].push_back(tag[2 * j + from][k * unit + e]);
            }
        next[at] = vector::ShuffleOp::create(b, loc, state[2 * j], state[2 * j + 1], mask);
      }
    state = next;
    tag = nextTag;
  }
  Transposed result{state, {}};
  for (int64_t k = 0; k < count; ++k) {
    result.columns.emplace_back();
    for (int64_t block = 0; block < lanes / count; ++block)
      result.columns.back().push_back(tag[k][block * count].second);
  }
  return result;
}

void stridedStore(OpBuilder &b, Location loc, Value value, Value mem, ValueRange idx,
                  int64_t stride, int64_t on) {
  if (stride == 1)
    return store(b, loc, value, mem, idx, on);
  int64_t lanes = cast<VectorType>(value.getType()).getNumElements();
  SmallVector<int64_t> picks;
  SmallVector<bool> bits;
  for (int64_t l = 0; l < lanes * stride; ++l) {
    bool lane = l % stride == 0 && l / stride < on;
    picks.push_back(l % stride == 0 ? l / stride : 0);
    bits.push_back(lane);
  }
  Value wide = vector::ShuffleOp::create(b, loc, value, value, picks);
  auto maskType = VectorType::get({lanes * stride}, b.getI1Type());
  Value mask = arith::ConstantOp::create(b, loc,
                                         DenseElementsAttr::get(maskType, ArrayRef<bool>(bits)));
  vector::MaskedStoreOp::create(b, loc, mem, idx, mask, wide);
}

std::optional<int64_t> windowStride(Value v) {
  auto view = v.getDefiningOp<memref::SubViewOp>();
  if (!view || !innermostContiguous(view.getSource()) || !view.getType().hasStaticShape() ||
      view.getDroppedDims().test(view.getSourceType().getRank() - 1) ||
      llvm::any_of(view.getStaticOffsets(), ShapedType::isDynamic) ||
      llvm::any_of(view.getStaticStrides(), ShapedType::isDynamic))
    return std::nullopt;
  int64_t stride = view.getStaticStrides().back();
  if (stride < 2 || stride > kMaxShuffledStride)
    return std::nullopt;
  return stride;
}

std::pair<Value, SmallVector<Value>> throughWindow(OpBuilder &b, Location loc, Value v,
                                                   ValueRange idx) {
  auto view = v.getDefiningOp<memref::SubViewOp>();
  // A rank-reducing window drops unit dims of the source: those are read
  // at their offset.
  llvm::SmallBitVector dropped = view.getDroppedDims();
  SmallVector<Value> at;
  unsigned next = 0;
  for (unsigned d = 0; d < dropped.size(); ++d) {
    int64_t offset = view.getStaticOffsets()[d], stride = view.getStaticStrides()[d];
    if (dropped.test(d)) {
      at.push_back(arith::ConstantIndexOp::create(b, loc, offset));
      continue;
    }
    Value index = idx[next++];
    Value scaled = stride == 1 ? index
                               : Value(arith::MulIOp::create(
                                     b, loc, index, arith::ConstantIndexOp::create(b, loc, stride)));
    at.push_back(offset == 0 ? scaled
                             : Value(arith::AddIOp::create(
                                   b, loc, scaled, arith::ConstantIndexOp::create(b, loc, offset))));
  }
  return {view.getSource(), at};
}

/// The byte range of a planned buffer `view` within its workspace.
static std::optional<std::pair<int64_t, int64_t>> byteRange(memref::ViewOp view) {
  APInt shift;
  auto type = view.getType();
  if (!matchPattern(view.getByteShift(), m_ConstantInt(&shift)) || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t begin = shift.getSExtValue();
  return std::make_pair(begin,
                        begin + type.getNumElements() * int64_t(type.getElementTypeBitWidth() / 8));
}

bool mayOverlap(Value a, Value b) {
  Value ra = rootBuffer(a), rb = rootBuffer(b);
  if (ra == rb)
    return true;
  // Distinct arguments (the workspace, the inputs and outputs) and
  // globals do not alias.
  auto base = [](Value root) -> Value {
    if (auto view = root.getDefiningOp<memref::ViewOp>())
      return view.getSource();
    return root;
  };
  auto distinct = [](Value v) {
    return isa<BlockArgument>(v) || v.getDefiningOp<memref::GetGlobalOp>();
  };
  Value ba = base(ra), bb = base(rb);
  auto ga = ba.getDefiningOp<memref::GetGlobalOp>(), gb = bb.getDefiningOp<memref::GetGlobalOp>();
  if (ga && gb)
    return ga.getName() == gb.getName(); // One global read twice is one buffer.
  if (ba != bb)
    return !(distinct(ba) && distinct(bb));
  auto va = ra.getDefiningOp<memref::ViewOp>(), vb = rb.getDefiningOp<memref::ViewOp>();
  if (!va || !vb)
    return true;
  auto x = byteRange(va), y = byteRange(vb);
  return !x || !y || (x->first < y->second && y->first < x->second);
}

SmallVector<Value> permutedIndices(OpBuilder &b, Location loc, AffineMap map,
                                   ArrayRef<Value> dims) {
  SmallVector<Value> result;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      result.push_back(dims[d.getPosition()]);
    else
      result.push_back(
          arith::ConstantIndexOp::create(b, loc, cast<AffineConstantExpr>(e).getValue()));
  }
  return result;
}

void markParallelFrom(Operation *loop, int64_t tripWork, int64_t atLeast, int64_t enough) {
  Builder b(loop->getContext());
  int64_t trips = llvm::divideCeil(enough, std::max<int64_t>(tripWork, 1));
  loop->setAttr("kiln.parallel", b.getUnitAttr());
  loop->setAttr(kMinTrips, b.getI64IntegerAttr(std::max(trips, atLeast)));
}

std::optional<int64_t> constantDifference(OpFoldResult a, OpFoldResult b) {
  std::optional<int64_t> ca = getConstantIntValue(a), cb = getConstantIntValue(b);
  if (ca && cb)
    return *ca - *cb;
  if (ca || cb)
    return std::nullopt;
  Value va = cast<Value>(a), vb = cast<Value>(b);
  if (va == vb)
    return 0;
  if (auto add = va.getDefiningOp<arith::AddIOp>()) {
    for (int i = 0; i < 2; ++i)
      if (add->getOperand(i) == vb)
        return getConstantIntValue(add->getOperand(1 - i));
  }
  if (auto apply = va.getDefiningOp<affine::AffineApplyOp>()) {
    AffineMap map = apply.getAffineMap();
    if (apply->getNumOperands() != 1 || apply->getOperand(0) != vb || map.getNumResults() != 1)
      return std::nullopt;
    AffineExpr offset =
        map.getResult(0) - (map.getNumDims() ? getAffineDimExpr(0, map.getContext())
                                             : getAffineSymbolExpr(0, map.getContext()));
    offset = simplifyAffineExpr(offset, map.getNumDims(), map.getNumSymbols());
    if (auto c = dyn_cast<AffineConstantExpr>(offset))
      return c.getValue();
  }
  return std::nullopt;
}

SmallVector<OpFoldResult> bufferSizes(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  auto view = buffer.getDefiningOp<memref::ViewOp>();
  SmallVector<OpFoldResult> sizes;
  unsigned next = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    else if (view)
      sizes.push_back(view.getSizes()[next++]);
    else
      sizes.push_back(memref::DimOp::create(b, loc, buffer, d).getResult());
  }
  return sizes;
}

bool insideParallelLoop(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (isa<scf::ForOp>(p) && p->hasAttr("kiln.parallel") && !p->hasAttr("kiln.parallel_nests"))
      return true;
  return false;
}

bool isMultiplyAccumulate(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
  Block &body = op.getRegion().front();
  if (body.getNumArguments() != 3 || body.getOperations().size() != 3)
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *add = yield.getValues().size() == 1 ? yield.getValues()[0].getDefiningOp() : nullptr;
  if (!add || !isa<arith::AddFOp, arith::AddIOp>(add))
    return false;
  Value acc = body.getArgument(2);
  Value lhs = add->getOperand(0), rhs = add->getOperand(1);
  if (lhs != acc && rhs != acc)
    return false;
  Operation *mul = (lhs == acc ? rhs : lhs).getDefiningOp();
  if (!mul || !isa<arith::MulFOp, arith::MulIOp>(mul))
    return false;
  Value x = body.getArgument(0), y = body.getArgument(1);
  return (mul->getOperand(0) == x && mul->getOperand(1) == y) ||
         (mul->getOperand(0) == y && mul->getOperand(1) == x);
}

void eraseUnusedGlobals(ModuleOp module) {
  SmallVector<Operation *> dead;
  module.walk([&](Operation *op) {
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp, memref::GetGlobalOp>(
            op))
      dead.push_back(op);
  });
  for (Operation *op : llvm::reverse(dead))
    if (op->use_empty())
      op->erase();
  for (auto global : llvm::make_early_inc_range(module.getOps<memref::GlobalOp>()))
    if (global.isPrivate() && SymbolTable::symbolKnownUseEmpty(global, module))
      global.erase();
}

bool isInt8MultiplyAccumulate(linalg::GenericOp op, bool *signedX) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
  Block &body = op.getRegion().front();
  if (body.getNumArguments() != 3 || body.getOperations().size() != 5 ||
      !body.getArgument(0).getType().isInteger(8) || !body.getArgument(1).getType().isInteger(8) ||
      !body.getArgument(2).getType().isInteger(32))
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues().size() == 1 ? yield.getValues()[0].getDefiningOp<arith::AddIOp>()
                                           : nullptr;
  Value acc = body.getArgument(2);
  if (!add || (add.getLhs() != acc && add.getRhs() != acc))
    return false;
  auto mul = (add.getLhs() == acc ? add.getRhs() : add.getLhs()).getDefiningOp<arith::MulIOp>();
  if (!mul)
    return false;
  auto widened = [&](Value v, unsigned arg, bool &isSigned) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<arith::ExtSIOp, arith::ExtUIOp>(def) ||
        def->getOperand(0) != body.getArgument(arg))
      return false;
    isSigned = isa<arith::ExtSIOp>(def);
    return true;
  };
  bool sx = false, sy = false;
  if (!widened(mul.getLhs(), 0, sx) || !widened(mul.getRhs(), 1, sy) || !sy)
    return false;
  if (signedX)
    *signedX = sx;
  return true;
}

static bool isScalar(Type t) { return isa<FloatType>(t) || isa<IntegerType>(t); }

bool vectorisableBody(linalg::GenericOp op) {
  for (Operation &inner : op.getRegion().front().without_terminator()) {
    StringRef dialect = inner.getName().getDialectNamespace();
    if ((dialect != "arith" && dialect != "math") || inner.getNumRegions() ||
        inner.getNumResults() != 1)
      return false;
    if (!llvm::all_of(inner.getOperandTypes(), isScalar) ||
        !llvm::all_of(inner.getResultTypes(), isScalar))
      return false;
  }
  return true;
}

SmallVector<Value> vectorizeBody(OpBuilder &b, linalg::GenericOp op, IRMapping &map,
                                 int64_t lanes) {
  Block &body = op.getRegion().front();
  Location loc = op.getLoc();
  auto splat = [&](Value scalar) -> Value {
    return vector::BroadcastOp::create(b, loc, VectorType::get({lanes}, scalar.getType()),
                                       scalar);
  };
  auto lookup = [&](Value v) {
    if (Value m = map.lookupOrNull(v))
      return m;
    // Defined above the generic: a scalar the same for every lane.
    Value s = splat(v);
    map.map(v, s);
    return s;
  };
  for (Operation &inner : body.without_terminator()) {
    if (inner.getNumOperands() == 0) {
      // Constants: the scalar, then broadcast.
      Operation *scalar = b.clone(inner);
      map.map(inner.getResult(0), splat(scalar->getResult(0)));
      continue;
    }
    SmallVector<Value> operands;
    for (Value v : inner.getOperands())
      operands.push_back(lookup(v));
    OperationState state(inner.getLoc(), inner.getName().getStringRef(), operands,
                         {VectorType::get({lanes}, inner.getResult(0).getType())},
                         inner.getAttrs());
    map.map(inner.getResult(0), b.create(state)->getResult(0));
  }
  SmallVector<Value> results;
  for (Value v : cast<linalg::YieldOp>(body.getTerminator()).getValues())
    results.push_back(lookup(v));
  return results;
}

int64_t elementCost(linalg::GenericOp op) {
  int64_t math = 0;
  if (!op->hasAttr(kWindowPiece))
    op.getRegion().walk([&](Operation *inner) {
      if (isa<math::MathDialect>(inner->getDialect()))
        ++math;
    });
  return std::max<int64_t>(1, op->getNumOperands() / 2 + 8 * math);
}

std::optional<Value> constantFill(Operation *op, Value buffer) {
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op)) {
    if (fill.getOutputs().size() == 1 && fill.getOutputs()[0] == buffer &&
        matchPattern(fill.getInputs()[0], m_Constant()))
      return fill.getInputs()[0];
    return std::nullopt;
  }
  Region *body = nullptr;
  if (auto map = dyn_cast_or_null<linalg::MapOp>(op)) {
    if (!map.getInputs().empty() || map.getInit() != buffer)
      return std::nullopt;
    body = &map.getMapper();
  } else if (auto generic = dyn_cast_or_null<linalg::GenericOp>(op)) {
    if (generic.getNumDpsInputs() || generic.getNumDpsInits() != 1 ||
        generic.getDpsInitOperand(0)->get() != buffer ||
        !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isPermutation())
      return std::nullopt;
    body = &generic.getRegion();
  } else {
    return std::nullopt;
  }
  auto yield = cast<linalg::YieldOp>(body->front().getTerminator());
  Value v = yield.getValues().size() == 1 ? yield.getValues()[0] : Value();
  if (!v || v.getParentRegion() == body || !matchPattern(v, m_Constant()))
    return std::nullopt;
  return v;
}

} // namespace kiln::vec
