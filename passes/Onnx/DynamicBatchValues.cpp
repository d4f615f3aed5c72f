//===- DynamicBatchValues.cpp - kiln-dynamic-batch-values pass ------------===//
//
// The half of the dynamic batch check (DynamicBatch.cpp) that must run
// before the onnx phase folds shape computations: where the batch size
// (Shape/Size of a batched tensor) goes. It may only shape tensors; a
// probe of @main at batch 1 and 2 tells which dims of a batched tensor are
// not the batch, and which dims of a Reshape's result grow with it.
//
//===----------------------------------------------------------------------===//

#include "passes/Onnx/DynamicBatchUtils.h"
#include "passes/Onnx/Passes.h"

#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <array>
#include <optional>

namespace kiln::onnx {
#define GEN_PASS_DEF_ONNXDYNAMICBATCHVALUESPASS
#include "passes/Onnx/Passes.h.inc"
} // namespace kiln::onnx

using namespace mlir;
namespace onnx = kiln::onnx;
using onnx::batch::isElementwise;
using onnx::batch::refusal;

namespace {

/// @main's shape computations worked out on two clones, with the batch at
/// 1 (the one-item graph) and at 2: a dim of the same static size in both
/// is not the batch (so Shape of a batched tensor does not give the batch
/// size there), and a result dim that doubles holds the batch.
class BatchProbe {
public:
  static std::optional<BatchProbe> run(func::FuncOp func) {
    SmallVector<Operation *> originals;
    func.walk([&](Operation *op) {
      if (op != func)
        originals.push_back(op);
    });
    MLIRContext *context = func.getContext();
    // Shapes that only fit one item are the model's business, not errors.
    ScopedDiagnosticHandler quiet(context, [](Diagnostic &) { return success(); });
    BatchProbe probe;
    probe.func = func;
    for (int k = 0; k < 2; ++k) {
      OwningOpRef<ModuleOp> module = ModuleOp::create(func.getLoc());
      auto clone = cast<func::FuncOp>(func->clone());
      module->push_back(clone);
      if (k == 1) {
        for (BlockArgument arg : clone.getArguments()) {
          auto type = dyn_cast<RankedTensorType>(arg.getType());
          if (!clone.getArgAttr(arg.getArgNumber(), "kiln.dynamic_dim") || !type ||
              type.getRank() < 1 || type.getDimSize(0) != 1)
            continue;
          SmallVector<int64_t> shape(type.getShape());
          shape[0] = 2;
          arg.setType(type.clone(shape));
        }
        clone.setFunctionType(FunctionType::get(context, clone.getArgumentTypes(),
                                                clone.getResultTypes()));
        // The importer's result types (from the model's value_info) hold
        // the batch as 1: inference starts over.
        clone.walk([&](Operation *op) {
          if (op == clone || op->hasTrait<OpTrait::ConstantLike>())
            return;
          for (Value r : op->getResults())
            if (auto t = dyn_cast<TensorType>(r.getType()))
              r.setType(UnrankedTensorType::get(t.getElementType()));
        });
      }
      SmallVector<Operation *> ops;
      clone.walk([&](Operation *op) {
        if (op != clone)
          ops.push_back(op);
      });
      if (ops.size() != originals.size())
        return std::nullopt;
      auto i64 = IntegerType::get(context, 64);
      for (auto [i, op] : llvm::enumerate(ops))
        op->setAttr("kiln.probe", IntegerAttr::get(i64, i));
      if (failed(onnx::inferShapes(clone)))
        return std::nullopt;
      clone.walk([&](Operation *op) {
        if (auto id = op->getAttrOfType<IntegerAttr>("kiln.probe"))
          probe.counterparts[originals[id.getInt()]][k] = op;
      });
      probe.clones[k] = clone;
      probe.modules[k] = std::move(module);
    }
    return probe;
  }

  /// Per dim of `v` (a value of @main): whether it may hold the batch,
  /// that is, unless it is the same static size at batch 1 and 2 (a `?`
  /// may be the batch merged with another dim); std::nullopt without both
  /// types.
  std::optional<SmallVector<bool>> batchDims(Value v) const {
    RankedTensorType types[2] = {typeIn(v, 0), typeIn(v, 1)};
    if (!types[0] || !types[1])
      return std::nullopt;
    if (types[0].getRank() != types[1].getRank())
      return std::nullopt;
    SmallVector<bool> dims;
    for (int64_t d = 0; d < types[0].getRank(); ++d) {
      int64_t x = types[0].getDimSize(d), y = types[1].getDimSize(d);
      dims.push_back(ShapedType::isDynamic(x) || ShapedType::isDynamic(y) || x != y);
    }
    return dims;
  }

  /// The type of `v` (a value of @main) at batch 1 (k = 0) or 2 (k = 1),
  /// when inference ranked it.
  RankedTensorType typeIn(Value v, int k) const {
    Value counterpart;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      func::FuncOp clone = clones[k];
      if (arg.getOwner()->getParentOp() == func && arg.getArgNumber() < clone.getNumArguments())
        counterpart = clone.getArgument(arg.getArgNumber());
    } else if (auto it = counterparts.find(v.getDefiningOp()); it != counterparts.end()) {
      Operation *clone = it->second[k];
      unsigned n = cast<OpResult>(v).getResultNumber();
      if (clone && n < clone->getNumResults())
        counterpart = clone->getResult(n);
    }
    return counterpart ? dyn_cast<RankedTensorType>(counterpart.getType()) : nullptr;
  }

  /// Per dim of `op`'s first result: 1 when it doubles at batch 2, 0 when
  /// it stays, -1 when unknown; empty without both shapes.
  SmallVector<int64_t> growth(Operation *op) const {
    auto it = counterparts.find(op);
    if (it == counterparts.end() || !it->second[0] || !it->second[1] ||
        !it->second[0]->getNumResults() || !it->second[1]->getNumResults())
      return {};
    auto one = dyn_cast<RankedTensorType>(it->second[0]->getResult(0).getType());
    auto two = dyn_cast<RankedTensorType>(it->second[1]->getResult(0).getType());
    if (!one || !two || one.getRank() != two.getRank())
      return {};
    SmallVector<int64_t> result;
    for (int64_t d = 0; d < one.getRank(); ++d) {
      int64_t x = one.getDimSize(d), y = two.getDimSize(d);
      result.push_back(ShapedType::isDynamic(x) || ShapedType::isDynamic(y) ? -1
                       : y == x                                              ? 0
                       : y == 2 * x                                          ? 1
                                                                             : -1);
    }
    return result;
  }

private:
  func::FuncOp func;
  func::FuncOp clones[2];
  OwningOpRef<ModuleOp> modules[2];
  llvm::DenseMap<Operation *, std::array<Operation *, 2>> counterparts;
};

/// Which elements of a shape value hold the batch size or something
/// computed from it; empty: all of them, or unknown.
using Mask = SmallVector<bool, 4>;

/// The elements of Shape(x) or Size(x) that may be the batch size: the dims
/// of x the probe does not show the same at both batches.
Mask shapeMask(Operation *op, const std::optional<BatchProbe> &probe) {
  if (!probe)
    return {};
  std::optional<SmallVector<bool>> dims = probe->batchDims(op->getOperand(0));
  if (!dims)
    return {};
  if (isa<onnx::SizeOp>(op))
    return {llvm::is_contained(*dims, true)};
  auto shape = cast<onnx::ShapeOp>(op);
  auto [start, end] = onnx::shapeOpRange(dims->size(), shape.getStart(), shape.getEnd());
  Mask mask;
  for (int64_t d = start; d < end; ++d)
    mask.push_back((*dims)[d]);
  return mask;
}

/// The elements of `op`'s first result that come from the batch size, for
/// shape arithmetic whose operands are in `derived` or constant: followed
/// element by element through the ops that move or combine shape elements
/// (types as imported, else from the probe's one-item clone), all of them
/// otherwise.
Mask propagateMask(Operation *op, const llvm::DenseMap<Value, Mask> &derived,
                   const std::optional<BatchProbe> &probe) {
  if (!probe)
    return {};
  auto typeOf = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.hasStaticShape() ? t : probe->typeIn(v, 0);
  };
  // The rank of a shape value: Shape's results are 1-D.
  auto rankOf = [&](Value v) -> int64_t {
    if (isa_and_nonnull<onnx::ShapeOp>(v.getDefiningOp()))
      return 1;
    RankedTensorType t = typeOf(v);
    return t ? t.getRank() : -1;
  };
  // std::nullopt: all elements, or unknown.
  auto maskOf = [&](Value v) -> std::optional<Mask> {
    if (auto it = derived.find(v); it != derived.end())
      return it->second.empty() ? std::nullopt : std::optional<Mask>(it->second);
    RankedTensorType t = typeOf(v);
    if (!t || !t.hasStaticShape() || t.getNumElements() > 64)
      return std::nullopt;
    return Mask(t.getNumElements(), false);
  };
  auto derivedAt = [&](unsigned i) { return i < op->getNumOperands() && derived.count(op->getOperand(i)); };
  if (isa<onnx::IdentityOp, onnx::CastOp, onnx::UnsqueezeOp, onnx::SqueezeOp, onnx::ReshapeOp,
          onnx::FlattenOp>(op)) {
    // Row-major order is kept; axes and shapes must not be derived.
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      if (derivedAt(i))
        return {};
    return maskOf(op->getOperand(0)).value_or(Mask());
  }
  if (auto gather = dyn_cast<onnx::GatherOp>(op)) {
    std::optional<Mask> data = maskOf(gather.getData());
    std::optional<SmallVector<int64_t>> indices = onnx::constantInts(gather.getIndices());
    if (!data || !indices || derivedAt(1) || rankOf(gather.getData()) != 1)
      return {};
    Mask mask;
    for (int64_t i : *indices) {
      if (i < 0)
        i += data->size();
      if (i < 0 || i >= static_cast<int64_t>(data->size()))
        return {};
      mask.push_back((*data)[i]);
    }
    return mask;
  }
  if (isa<onnx::ConcatOp>(op)) {
    Mask mask;
    for (Value v : op->getOperands()) {
      std::optional<Mask> m = maskOf(v);
      if (!m || rankOf(v) != 1)
        return {};
      mask.append(m->begin(), m->end());
    }
    return mask;
  }
  if (isElementwise(op)) {
    // Scalars and vectors of shape values, broadcast.
    SmallVector<Mask> masks;
    size_t n = 1;
    for (Value v : op->getOperands()) {
      std::optional<Mask> m = maskOf(v);
      if (!m || rankOf(v) > 1)
        return {};
      if (m->size() != 1 && n != 1 && m->size() != n)
        return {};
      n = std::max(n, m->size());
      masks.push_back(*m);
    }
    Mask mask(n, false);
    for (const Mask &m : masks) {
      for (size_t e = 0; e < n; ++e)
        mask[e] = mask[e] || m[m.size() == 1 ? 0 : e];
    }
    return mask;
  }
  return {};
}

/// Before the onnx phase folds shape computations (and so turns the batch
/// size, Shape(x)[0], into the constant 1): the batch size may only shape
/// tensors (the shape operand of Reshape, Expand, Tile, ConstantOfShape),
/// after any arithmetic with constants; any other use would compute with 1
/// for every batch. The elements of Shape/Size of a batched tensor that
/// the probe (BatchProbe) does not show to be other dims count, and shape
/// arithmetic is followed element by element (Mask). Marks each Reshape of
/// batched data with the result dims that grow with the batch
/// (`kiln.batch_growth`, for kiln-dynamic-batch). Also refuses a Reshape of
/// batched data to a constant target with a fixed leading dim and a -1 ([1, -1]),
/// which puts the whole batch into one item. Records the first problem on
/// @main (`kiln.dynamic_batch_error`) for kiln-dynamic-batch to report:
/// this pass runs before the batch is known to matter and never fails.
struct OnnxDynamicBatchValuesPass
    : onnx::impl::OnnxDynamicBatchValuesPassBase<OnnxDynamicBatchValuesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getName() != "main" || func->hasAttr("kiln.dynamic_batch_error"))
      return;
    std::string name;
    // `derived`: shape values (from Shape/Size of batched tensors and
    // arithmetic on them) with which of their elements are the batch size
    // or computed from it (an empty mask: all, or unknown). `shaped`:
    // tensors shaped by the batch size whose values are not it
    // (ConstantOfShape/Expand/Tile of it, and elementwise ops on those):
    // they may meet the batch size in shape arithmetic (torch's
    // expand(n, -1, -1): Where(Equal(s, -1 * ConstantOfShape(Shape(s))),
    // ..., s)), and their Shape/Size is the batch size again.
    llvm::DenseSet<Value> batched, shaped;
    llvm::DenseMap<Value, Mask> derived;
    auto fromBatch = [&](Value v) {
      auto it = derived.find(v);
      return it != derived.end() && (it->second.empty() || llvm::is_contained(it->second, true));
    };
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto attr = func.getArgAttrOfType<StringAttr>(i, "kiln.dynamic_dim")) {
        name = attr.str();
        batched.insert(func.getArgument(i));
      }
    if (name.empty())
      return;
    std::optional<BatchProbe> probe = BatchProbe::run(func);
    auto constant = [](Value v) {
      Operation *def = v.getDefiningOp();
      return def && (def->hasTrait<OpTrait::ConstantLike>() || isa<onnx::NoValueOp>(def));
    };
    std::string message;
    Location at = func.getLoc();
    auto record = [&](Operation *op, const Twine &why) {
      if (!message.empty())
        return;
      message = refusal(op, name, why);
      at = op->getLoc();
    };
    // Ops whose results reach no output (an unused branch of an exported
    // module) are erased by the onnx phase and matter to no item.
    Block &body = func.getBody().front();
    llvm::DenseSet<Operation *> live;
    SmallVector<Operation *> work;
    for (Operation &op : body)
      if (isa<func::ReturnOp>(op) || !isMemoryEffectFree(&op))
        if (live.insert(&op).second)
          work.push_back(&op);
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (Operation *def = v.getDefiningOp())
            if (Operation *top = body.findAncestorOpInBlock(*def))
              if (live.insert(top).second)
                work.push_back(top);
      });
    }
    func.walk([&](Operation *op) {
      if (isa<func::FuncOp>(op))
        return;
      if (Operation *top = body.findAncestorOpInBlock(*op); !top || !live.contains(top))
        return;
      bool anyBatched = llvm::any_of(op->getOperands(), [&](Value v) { return batched.count(v); });
      bool anyShaped = llvm::any_of(op->getOperands(), [&](Value v) { return shaped.count(v); });
      if (isa<onnx::ShapeOp, onnx::SizeOp>(op) && (anyBatched || anyShaped)) {
        derived[op->getResult(0)] = shapeMask(op, probe);
        return;
      }
      if (isa<func::ReturnOp>(op)) {
        if (llvm::any_of(op->getOperands(), fromBatch))
          record(op, "a graph output is computed from the batch size");
        return;
      }
      // anyDerived: an operand holds the batch size; asValue: a shape
      // value is used other than as a shape.
      bool shapeOnly = true, pure = true, anyDerived = false, asValue = false;
      for (auto [i, v] : llvm::enumerate(op->getOperands())) {
        if (!derived.count(v)) {
          pure &= constant(v) || shaped.count(v);
          continue;
        }
        bool shapeUse = (i == 1 && isa<onnx::ReshapeOp, onnx::ExpandOp, onnx::TileOp>(op)) ||
                        (i == 0 && isa<onnx::ConstantOfShapeOp>(op));
        asValue |= !shapeUse;
        if (fromBatch(v)) {
          anyDerived = true;
          shapeOnly &= shapeUse;
        }
      }
      // Shape arithmetic, followed element by element: what comes out may
      // not hold the batch size (torch slices its packed projection by the
      // width read off a batched tensor).
      bool arithmetic = pure && !anyBatched;
      if (anyDerived && !shapeOnly && !arithmetic) {
        record(op, "it uses the batch size (from Shape or Size of a batched tensor) as a value");
        return;
      }
      if (asValue && arithmetic) {
        Mask mask = propagateMask(op, derived, probe);
        for (Value r : op->getResults())
          derived[r] = r == op->getResult(0) ? mask : Mask();
        return;
      }
      // A non-elementwise op on batch-shaped tensors alone (CumSum of
      // ConstantOfShape(n)) may count along them.
      if (anyShaped && arithmetic && !anyDerived && !isElementwise(op)) {
        for (Value r : op->getResults())
          derived[r] = Mask();
        return;
      }
      if (isa<onnx::ReshapeOp>(op) && batched.count(op->getOperand(0)) &&
          !fromBatch(op->getOperand(1)))
        if (auto target = onnx::constantInts(op->getOperand(1)))
          if (!target->empty() && (*target)[0] > 0 && llvm::is_contained(*target, -1))
            record(op, "its constant target shape fixes the leading dim, so the batch "
                       "items would be merged");
      if (anyBatched)
        for (Value r : op->getResults())
          batched.insert(r);
      if ((anyShaped && arithmetic && isElementwise(op)) ||
          (anyDerived && !anyBatched &&
           isa<onnx::ConstantOfShapeOp, onnx::ExpandOp, onnx::TileOp>(op)))
        for (Value r : op->getResults())
          shaped.insert(r);
      if (probe && isa<onnx::ReshapeOp>(op) && batched.count(op->getOperand(0))) {
        SmallVector<int64_t> growth = probe->growth(op);
        if (!growth.empty())
          op->setAttr("kiln.batch_growth", DenseI64ArrayAttr::get(op->getContext(), growth));
      }
    });
    if (!message.empty())
      func->setAttr("kiln.dynamic_batch_error",
                    DictionaryAttr::get(func.getContext(),
                                        {NamedAttribute(StringAttr::get(func.getContext(), "message"),
                                                        StringAttr::get(func.getContext(), message)),
                                         NamedAttribute(StringAttr::get(func.getContext(), "loc"),
                                                        LocationAttr(at))}));
  }
};

} // namespace
