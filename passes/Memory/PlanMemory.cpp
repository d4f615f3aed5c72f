//===- PlanMemory.cpp - kiln-plan-memory pass ------------------------------===//
//
// The static memory plan. Every `memref.alloc` in the body of a public
// function gets a live range over the function's top-level ops (from the
// first to the last op that uses the buffer or any view of it), then an
// offset in one workspace: buffers are placed largest first at the lowest
// offset that overlaps no already placed buffer whose range intersects.
// With `epilogues`, the output of a contraction's elementwise epilogue is
// live from the contraction on (epilogueStart), so that it never sits
// where the contraction's operands are: the CPU kernel that folds the
// epilogue in stores its result while it still reads them.
// An alloc nested in a loop or branch is live for its whole top-level op
// (bufferization does not let loop iterations hand allocations to each
// other, so one place serves every iteration).
// The allocs become `memref.view`s of a trailing `memref<N x i8>`
// workspace argument.
//
//===----------------------------------------------------------------------===//

#include "passes/Memory/Passes.h"
#include "passes/Utils/Buffers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/MathExtras.h"

#include <functional>
#include <limits>

#define DEBUG_TYPE "kiln-plan-memory"

namespace kiln {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "passes/Memory/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0; ///< For a dynamic buffer: at the reference value.
  int64_t first = 0, last = 0; ///< Live range, in top-level op indices.
  int64_t offset = -1;
  Value dynamicBytes; ///< Computed in the entry block (dynamic buffers).
  bool fromContraction = false; ///< Live from the contraction its epilogue follows.
};

/// The value of the symbolic dim the plan of a dynamic function is made
/// with (which buffer sits above which); the offsets hold for any value.
constexpr int64_t kReferenceDim = 64;

int64_t roundUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/// Bytes a static memref of identity layout occupies.
std::optional<int64_t> storageBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  Type et = type.getElementType();
  if (!et.isIntOrIndexOrFloat() || et.isIndex())
    return std::nullopt;
  int64_t elemBytes = (et.getIntOrFloatBitWidth() + 7) / 8;
  return type.getNumElements() * elemBytes;
}

/// The bytes of one element of a memref type the plan handles, if any.
std::optional<int64_t> elementBytes(MemRefType type) {
  if (!type.getLayout().isIdentity())
    return std::nullopt;
  Type et = type.getElementType();
  if (!et.isIntOrIndexOrFloat() || et.isIndex())
    return std::nullopt;
  return (et.getIntOrFloatBitWidth() + 7) / 8;
}

Value hoist(Value v, OpBuilder &b, IRMapping &map, Block &entry);

/// Dim `index` of `memref` recomputed as hoist() does, through the views
/// the entry function's arguments and buffers are seen through.
Value hoistDim(Value memref, int64_t index, OpBuilder &b, IRMapping &map, Block &entry) {
  auto type = cast<MemRefType>(memref.getType());
  Location loc = memref.getLoc();
  if (!type.isDynamicDim(index))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(index));
  auto fromFold = [&](OpFoldResult size) -> Value {
    if (auto v = dyn_cast<Value>(size))
      return hoist(v, b, map, entry);
    return arith::ConstantIndexOp::create(b, loc, *getConstantIntValue(size));
  };
  Operation *def = memref.getDefiningOp();
  if (auto cast = dyn_cast_or_null<memref::ReinterpretCastOp>(def))
    return fromFold(cast.getMixedSizes()[index]);
  if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(def))
    return fromFold(expand.getMixedOutputShape()[index]);
  if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(def)) {
    // A local: the element of a temporary would dangle in the loop.
    SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
    Value product;
    for (int64_t j : groups[index]) {
      Value d = hoistDim(collapse.getSrc(), j, b, map, entry);
      if (!d)
        return {};
      product = product ? arith::MulIOp::create(b, loc, product, d).getResult() : d;
    }
    return product;
  }
  if (auto view = dyn_cast_or_null<memref::ViewOp>(def))
    return hoist(view.getSizes()[type.getDynamicDimIndex(index)], b, map, entry);
  if (auto alloc = dyn_cast_or_null<memref::AllocOp>(def))
    return hoist(alloc.getDynamicSizes()[type.getDynamicDimIndex(index)], b, map, entry);
  return {};
}

/// `v` (a dynamic size) recomputed at `b`'s insertion point from the
/// function's `kiln.symbolic_dim` argument and constants through pure ops;
/// null when it depends on anything else (data read at run time). memref.dim of a
/// reinterpret_cast is its size operand.
Value hoist(Value v, OpBuilder &b, IRMapping &map, Block &entry) {
  if (Value m = map.lookupOrNull(v))
    return m;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = dyn_cast<func::FuncOp>(entry.getParentOp());
    bool symbolic = func && arg.getOwner() == &entry &&
                    func.getArgAttr(arg.getArgNumber(), "kiln.symbolic_dim");
    return symbolic ? v : Value();
  }
  Operation *def = v.getDefiningOp();
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    Value r = index ? hoistDim(dim.getSource(), *index, b, map, entry) : Value();
    if (r)
      map.map(v, r);
    return r;
  }
  if (!isPure(def) || def->getNumRegions() || def->getNumResults() != 1)
    return {};
  for (Value operand : def->getOperands())
    if (!hoist(operand, b, map, entry))
      return {};
  Operation *clone = b.clone(*def, map);
  return clone->getResult(0);
}

/// The value of `v` (computed by hoist()) with each kiln.symbolic_dim
/// argument at `dim(arg)`; none if it overflows or is not an integer
/// computation.
std::optional<int64_t> evaluate(Value v, function_ref<int64_t(BlockArgument)> dim) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return dim(arg); // hoist() leaves only symbolic dim arguments.
  Operation *def = v.getDefiningOp();
  if (auto c = getConstantIntValue(v))
    return *c;
  if (auto cast = dyn_cast<arith::IndexCastOp>(def))
    return evaluate(cast.getIn(), dim);
  // Anything else that folds with its operands known (affine.apply, which
  // sizes a padded tensor: dim + pads), within a quarter of the range.
  if (!isa<arith::ArithDialect>(def->getDialect()) && def->getNumResults() == 1) {
    SmallVector<Attribute> operands;
    for (Value operand : def->getOperands()) {
      std::optional<int64_t> x = evaluate(operand, dim);
      if (!x || *x < -(int64_t(1) << 40) || *x > (int64_t(1) << 40))
        return std::nullopt;
      operands.push_back(IntegerAttr::get(operand.getType(), *x));
    }
    SmallVector<OpFoldResult> folded;
    if (failed(def->fold(operands, folded)) || folded.size() != 1)
      return std::nullopt;
    return getConstantIntValue(folded[0]);
  }
  if (def->getNumOperands() != 2)
    return std::nullopt;
  std::optional<int64_t> a = evaluate(def->getOperand(0), dim);
  std::optional<int64_t> b = evaluate(def->getOperand(1), dim);
  if (!a || !b)
    return std::nullopt;
  // A dim computed as seq - 1 is negative for values the entry point
  // refuses (kiln.dim_constraints): sums and products carry the sign.
  int64_t r;
  if (isa<arith::MulIOp>(def))
    return llvm::MulOverflow(*a, *b, r) ? std::nullopt : std::optional<int64_t>(r);
  if (isa<arith::AddIOp>(def))
    return llvm::AddOverflow(*a, *b, r) ? std::nullopt : std::optional<int64_t>(r);
  if (isa<arith::SubIOp>(def))
    return llvm::SubOverflow(*a, *b, r) ? std::nullopt : std::optional<int64_t>(r);
  // A window op's output size, floor((dim + a) / s): negative below the
  // values the entry point takes, like seq - 1.
  if (isa<arith::FloorDivSIOp>(def) && *b > 0)
    return llvm::divideFloorSigned(*a, *b);
  if (*a < 0 || *b < 0)
    return std::nullopt;
  if (isa<arith::MaxUIOp, arith::MaxSIOp>(def))
    return std::max(*a, *b);
  if (isa<arith::MinUIOp, arith::MinSIOp>(def))
    return std::min(*a, *b);
  if (*b == 0)
    return std::nullopt;
  if (isa<arith::DivUIOp, arith::DivSIOp, arith::FloorDivSIOp>(def))
    return *a / *b;
  if (isa<arith::CeilDivUIOp, arith::CeilDivSIOp>(def))
    return (*a + *b - 1) / *b;
  if (isa<arith::RemUIOp, arith::RemSIOp>(def))
    return *a % *b;
  return std::nullopt;
}

/// The indices of the first and last top-level ops that read or write
/// `root` through any chain of views (`start`, `start` when none do);
/// memref.dim reads no element and is not counted, nor are the views
/// themselves (a view made early for a size read later, a dynamic
/// conv's output shape, would otherwise start the buffer's life there
/// and hide the epilogue that writes it from epilogueStart).
std::pair<int64_t, int64_t> useRange(Value root, Block &body, int64_t start,
                                     const llvm::DenseMap<Operation *, int64_t> &index) {
  int64_t first = std::numeric_limits<int64_t>::max(), last = -1;
  SmallVector<Value> work{root};
  llvm::SmallPtrSet<Value, 8> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      // Erased below, freeing is not a use; nor is reading a size (a later
      // op's shape), which touches no element.
      if (isa<memref::DeallocOp, memref::DimOp>(user))
        continue;
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && !isa<ViewLikeOpInterface>(user)) {
        first = std::min(first, index.lookup(top));
        last = std::max(last, index.lookup(top));
      }
      // Follow results that may alias the buffer (views, casts, reshapes),
      // and the results of a region op whose terminator yields it.
      ValueRange results = user->getResults();
      if (user->hasTrait<OpTrait::IsTerminator>() && user->getParentOp() &&
          user->getParentOp() != body.getParentOp())
        results = user->getParentOp()->getResults();
      for (Value r : results)
        if (isa<BaseMemRefType>(r.getType()))
          work.push_back(r);
    }
  }
  if (last < 0)
    return {start, start};
  return {first, last};
}

using kiln::kEpilogueReach;

/// For the buffer `root` whose first use is top-level op `first`: the index
/// of the contraction whose elementwise epilogue writes `root`, when the
/// first ops on `root` are constant fills (a pad's border) and then an
/// all-parallel generic writing `root` (or a window of it) from a buffer
/// that a generic with reductions wrote last and that nothing reads
/// after it. `first` otherwise. Views and sizes read (memref.dim, over
/// dynamic dims) between them touch no element.
int64_t epilogueStart(Value root, Block &body, int64_t first, ArrayRef<Operation *> ops,
                      const llvm::DenseMap<Operation *, int64_t> &index) {
  int64_t end = std::min<int64_t>(ops.size(), first + kEpilogueReach);
  for (int64_t i = first; i < end; ++i) {
    Operation *op = ops[i];
    if (!kiln::touches(op, root) || isa<ViewLikeOpInterface, memref::DimOp>(op))
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(op);
        fill && kiln::rootBuffer(fill.getOutputs()[0]) == root &&
        matchPattern(fill.getInputs()[0], m_Constant()))
      continue;
    auto epilogue = dyn_cast<linalg::GenericOp>(op);
    if (!epilogue || !epilogue.hasPureBufferSemantics() || epilogue.getNumDpsInits() != 1 ||
        epilogue.getNumParallelLoops() != epilogue.getNumLoops() ||
        kiln::rootBuffer(epilogue.getDpsInits()[0]) != root)
      return first;
    for (Value in : epilogue.getDpsInputs()) {
      // The epilogue is the last reader of the contraction's result (else
      // the kernel could not store the epilogue's result in its place).
      Value source = kiln::rootBuffer(in);
      if (source == root || useRange(source, body, i, index).second != i)
        return first;
      for (int64_t j = first - 1; j >= 0 && j >= first - kEpilogueReach; --j) {
        if (!kiln::touches(ops[j], source) || isa<ViewLikeOpInterface, memref::DimOp>(ops[j]))
          continue;
        auto contraction = dyn_cast<linalg::GenericOp>(ops[j]);
        if (contraction && contraction.hasPureBufferSemantics() &&
            contraction.getNumReductionLoops() && contraction.getNumDpsInits() == 1 &&
            kiln::rootBuffer(contraction.getDpsInits()[0]) == source)
          return j;
        break;
      }
    }
    return first;
  }
  return first;
}

struct PlanMemoryPass : public kiln::impl::PlanMemoryPassBase<PlanMemoryPass> {
  using PlanMemoryPassBase::PlanMemoryPassBase;

  /// A dynamic alloc's bytes, computed in the entry block (into
  /// buf.dynamicBytes), and at the reference value (buf.bytes).
  LogicalResult dynamicSize(memref::AllocOp alloc, OpBuilder &b, IRMapping &map, Block &entry,
                            Buffer &buf) {
    MemRefType type = alloc.getType();
    std::optional<int64_t> elem = elementBytes(type);
    if (!elem)
      return alloc.emitError("the memory plan supports identity layouts of int and float "
                             "elements only");
    Location loc = alloc.getLoc();
    int64_t reference = *elem;
    Value bytes = arith::ConstantIndexOp::create(b, loc, *elem);
    auto dynamicSizes = alloc.getDynamicSizes();
    unsigned next = 0;
    for (int64_t d : type.getShape()) {
      Value size;
      if (ShapedType::isDynamic(d)) {
        size = hoist(dynamicSizes[next++], b, map, entry);
        if (!size)
          return alloc.emitError("a buffer's size depends on more than the model's dynamic "
                                 "dims (kiln.symbolic_dim arguments): the memory plan "
                                 "cannot size it");
        reference *= kReferenceDim;
      } else {
        size = arith::ConstantIndexOp::create(b, loc, d);
        reference *= d;
      }
      bytes = arith::MulIOp::create(b, loc, bytes, size);
    }
    buf.dynamicBytes = bytes;
    buf.bytes = reference;
    return success();
  }

  /// `@<func>_workspace_size(index...) -> index`: `total` (computed in the
  /// entry block from the `kiln.symbolic_dim` arguments) as a function of
  /// those arguments, in order.
  LogicalResult addWorkspaceSizeFunction(func::FuncOp func, Value total) {
    SmallVector<BlockArgument> dims = symbolicArguments(func);
    OpBuilder b(func);
    b.setInsertionPointAfter(func);
    auto sizeFunc = func::FuncOp::create(
        b, func.getLoc(), (func.getSymName() + "_workspace_size").str(),
        b.getFunctionType(SmallVector<Type>(std::max<size_t>(dims.size(), 1), b.getIndexType()),
                          {b.getIndexType()}));
    Block *entry = sizeFunc.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (auto [k, dim] : llvm::enumerate(dims))
      map.map(dim, entry->getArgument(k));
    // Clone total's backward slice (all of it in the entry block).
    std::function<Value(Value)> clone = [&](Value v) -> Value {
      if (Value m = map.lookupOrNull(v))
        return m;
      Operation *def = v.getDefiningOp();
      if (!def || def->getNumRegions())
        return {};
      for (Value operand : def->getOperands())
        if (!clone(operand))
          return {};
      return b.clone(*def, map)->getResult(cast<OpResult>(v).getResultNumber());
    };
    Value size = clone(total);
    if (!size)
      return func.emitError("the workspace's size depends on more than the model's dims");
    func::ReturnOp::create(b, func.getLoc(), size);
    return success();
  }

  /// The function's kiln.symbolic_dim arguments, in order.
  static SmallVector<BlockArgument> symbolicArguments(func::FuncOp func) {
    SmallVector<BlockArgument> dims;
    for (BlockArgument arg : func.getBody().front().getArguments())
      if (func.getArgAttr(arg.getArgNumber(), "kiln.symbolic_dim"))
        dims.push_back(arg);
    return dims;
  }

  void runOnOperation() override {
    // A snapshot: planning adds functions (<name>_workspace_size).
    auto funcs = llvm::to_vector(getOperation().getOps<func::FuncOp>());
    for (auto func : funcs) {
      if (func.isExternal() || func.isPrivate())
        continue;
      if (failed(plan(func)))
        return signalPassFailure();
    }
  }

  LogicalResult plan(func::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return func.emitError("memory planning needs a single-block function");
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, int64_t> index;
    SmallVector<Operation *> ops;
    for (Operation &op : body) {
      index[&op] = ops.size();
      ops.push_back(&op);
    }

    SmallVector<Buffer> buffers;
    // Sizes and offsets of dynamic buffers are computed first thing.
    OpBuilder entryBuilder(func.getContext());
    entryBuilder.setInsertionPointToStart(&body);
    IRMapping map;
    WalkResult walk = func.walk([&](Operation *op) {
      if (isa<memref::AllocaOp>(op) || isa<memref::ReallocOp>(op)) {
        op->emitError("stack or re-allocations are not supported by the memory plan");
        return WalkResult::interrupt();
      }
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc)
        return WalkResult::advance();
      Buffer buf;
      buf.alloc = alloc;
      std::optional<int64_t> bytes = storageBytes(alloc.getType());
      if (!bytes) {
        if (failed(dynamicSize(alloc, entryBuilder, map, body, buf)))
          return WalkResult::interrupt();
        bytes = buf.bytes;
      }
      buf.bytes = roundUp(std::max<int64_t>(*bytes, 1), alignment);
      // An alloc inside a loop or branch lives for its whole top-level op:
      // every iteration reuses the same place. A top-level one lives from
      // its first use, wherever bufferization put the alloc.
      Operation *top = body.findAncestorOpInBlock(*alloc);
      auto [first, last] = useRange(alloc, body, index.lookup(top), index);
      buf.first = top == alloc ? first : index.lookup(top);
      if (epilogues && top == alloc) {
        int64_t start = epilogueStart(alloc, body, buf.first, ops, index);
        buf.fromContraction = start < buf.first;
        buf.first = start;
      }
      buf.last = std::max(buf.first, last);
      buffers.push_back(buf);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    // The largest value of the dim whose buffers, summed, stay well inside
    // the index type (offsets are at most that sum): sizes computed from a
    // larger one could wrap around. Sizes grow with the dim, so a binary
    // search finds it.
    bool dynamic = llvm::any_of(buffers, [](const Buffer &b) { return b.dynamicBytes; });
    if (dynamic) {
      unsigned bits = std::min<unsigned>(indexBitwidth, 64);
      int64_t limit = int64_t(1) << (bits - 2);
      auto fits = [&](int64_t n) {
        int64_t total = 0;
        for (Buffer &b : buffers) {
          std::optional<int64_t> bytes =
              b.dynamicBytes ? evaluate(b.dynamicBytes, [&](BlockArgument) { return n; })
                             : std::optional<int64_t>(b.bytes);
          // Negative: dims the entry point refuses; nothing to place.
          if (!bytes || *bytes > limit)
            return false;
          bytes = std::max<int64_t>(*bytes, 0);
          total += roundUp(std::max<int64_t>(*bytes, 1), alignment);
          if (total > limit)
            return false;
        }
        return true;
      };
      int64_t lo = 0, hi = (int64_t(1) << 31) - 1;
      if (!fits(lo))
        return func.emitError("the workspace's size cannot be computed from the dynamic dim");
      while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (fits(mid))
          lo = mid;
        else
          hi = mid - 1;
      }
      for (int64_t max : symbolicMax)
        if (max > lo)
          return func.emitError("the workspace for the dynamic dims' largest values ")
                 << max << " does not fit the target's " << bits << "-bit sizes (at most "
                 << lo << " for every dim at once)";
      func->setAttr("kiln.symbolic_limit", OpBuilder(func).getI64IntegerAttr(lo));
    }

    // With the dims' largest values given, a static plan for them: sizes
    // grow with each dim, so each buffer fits its place for all smaller
    // values.
    if (dynamic && !symbolicMax.empty()) {
      SmallVector<BlockArgument> dims = symbolicArguments(func);
      if (dims.size() != symbolicMax.size())
        return func.emitError() << "symbolic-max gives " << symbolicMax.size()
                                << " values for " << dims.size() << " dynamic dims";
      auto maxOf = [&](BlockArgument arg) {
        return symbolicMax[llvm::find(dims, arg) - dims.begin()];
      };
      for (Buffer &b : buffers) {
        if (!b.dynamicBytes)
          continue;
        std::optional<int64_t> bytes = evaluate(b.dynamicBytes, maxOf);
        if (!bytes || *bytes < 0)
          return b.alloc.emitError("cannot size this buffer for the dynamic dims' largest "
                                   "values");
        b.bytes = roundUp(std::max<int64_t>(*bytes, 1), alignment);
      }
      dynamic = false;
      SmallVector<int64_t> maxima(symbolicMax.begin(), symbolicMax.end());
      func->setAttr("kiln.symbolic_max", DenseI64ArrayAttr::get(func.getContext(), maxima));
    }

    // Largest first, then earliest, then in program order (the buffers
    // are contiguous in that order: their addresses break the last ties);
    // place at the lowest free offset. llvm::sort with a total order, not
    // stable_sort, whose libstdc++ buffer is deprecated under clang 22.
    SmallVector<Buffer *> order;
    for (Buffer &b : buffers)
      order.push_back(&b);
    llvm::sort(order, [](Buffer *a, Buffer *b) {
      if (a->bytes != b->bytes)
        return a->bytes > b->bytes;
      if (a->first != b->first)
        return a->first < b->first;
      return a < b;
    });
    SmallVector<Buffer *> placed;
    int64_t total = 0;
    for (Buffer *b : order) {
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (Buffer *p : placed)
        if (!(p->last < b->first || b->last < p->first))
          busy.push_back({p->offset, p->offset + p->bytes});
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [lo, hi] : busy) {
        if (offset + b->bytes <= lo)
          break;
        offset = std::max(offset, hi);
      }
      b->offset = offset;
      total = std::max(total, offset + b->bytes);
      placed.push_back(b);
    }

    // Offsets at run time: each buffer right above the interfering buffers
    // the reference plan put below it (placed is in placement order, so
    // those come first).
    SmallVector<Value> offsets(buffers.size());
    Value dynamicTotal;
    if (dynamic) {
      OpBuilder &b = entryBuilder;
      Location loc = func.getLoc();
      auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
      llvm::DenseMap<Buffer *, Value> offsetOf, bytesOf;
      dynamicTotal = c(0);
      // By offset, ties in placement order.
      llvm::SmallVector<std::pair<int64_t, size_t>> keys;
      for (auto [i, buf] : llvm::enumerate(placed))
        keys.push_back({buf->offset, i});
      llvm::sort(keys);
      llvm::SmallVector<Buffer *> byOffset;
      for (auto [offset, i] : keys)
        byOffset.push_back(placed[i]);
      for (Buffer *buf : byOffset) {
        Value bytes = c(buf->bytes);
        if (buf->dynamicBytes) {
          // Rounded up to the alignment, and at least one alignment unit.
          Value v = arith::MaxUIOp::create(b, loc, buf->dynamicBytes, c(1));
          v = arith::CeilDivUIOp::create(b, loc, v, c(alignment));
          bytes = arith::MulIOp::create(b, loc, v, c(alignment));
        }
        Value offset = c(0);
        for (Buffer *p : byOffset) {
          if (p == buf)
            break;
          if (p->last < buf->first || buf->last < p->first)
            continue;
          Value end = arith::AddIOp::create(b, loc, offsetOf[p], bytesOf[p]);
          offset = arith::MaxUIOp::create(b, loc, offset, end);
        }
        offsetOf[buf] = offset;
        bytesOf[buf] = bytes;
        dynamicTotal = arith::MaxUIOp::create(
            b, loc, dynamicTotal, arith::AddIOp::create(b, loc, offset, bytes));
      }
      for (auto [i, buf] : llvm::enumerate(buffers))
        offsets[i] = offsetOf[&buf];
    }

    // The workspace argument, then views into it.
    MLIRContext *ctx = func.getContext();
    OpBuilder builder(ctx);
    auto wsType = MemRefType::get({dynamic ? 1 : total}, builder.getI8Type());
    unsigned wsIndex = func.getNumArguments();
    if (failed(func.insertArgument(wsIndex, wsType,
                                   builder.getDictionaryAttr(builder.getNamedAttr(
                                       "kiln.workspace", builder.getUnitAttr())),
                                   func.getLoc())))
      return failure();
    Value ws = func.getArgument(wsIndex);
    for (auto [i, b] : llvm::enumerate(buffers)) {
      builder.setInsertionPoint(b.alloc);
      Value offset =
          dynamic ? offsets[i]
                  : arith::ConstantIndexOp::create(builder, b.alloc.getLoc(), b.offset).getResult();
      auto view = memref::ViewOp::create(builder, b.alloc.getLoc(), b.alloc.getType(), ws, offset,
                                         b.alloc.getDynamicSizes());
      if (b.fromContraction)
        view->setAttr(kiln::kLiveFromContraction, builder.getUnitAttr());
      b.alloc.replaceAllUsesWith(view.getResult());
      b.alloc.erase();
    }
    func.walk([](memref::DeallocOp op) { op.erase(); });
    func->setAttr("kiln.workspace_size", builder.getI64IntegerAttr(dynamic ? -1 : total));
    if (dynamic && failed(addWorkspaceSizeFunction(func, dynamicTotal)))
      return failure();
    // Offsets are multiples of `alignment` (cache lines by default), so a
    // base aligned that much aligns every buffer; the code itself needs
    // only 16-byte alignment of the base, which is what the ABI requires.
    func->setAttr("kiln.workspace_alignment", builder.getI64IntegerAttr(16));
    return success();
  }
};

} // namespace
