//===- ControlFlow.cpp - If, Loop, Scan -> scf -----------------------------===//
//
// The first step of convert-onnx-to-linalg: control flow becomes scf
// around the subgraphs' own onnx ops, which the conversion then lowers in
// place (scf is legal; its types are converted structurally).
//
//   If    scf.if on the condition's scalar; each branch's onnx.Yield
//         becomes scf.yield (both must yield the results' static shapes).
//   Scan  scf.for over the scan length carrying the states and the scan
//         outputs; each step slices the scan inputs (reversed where
//         scan_input_directions says) and inserts the step's outputs.
//   Loop  scf.for over a static bound (a constant trip count, or the
//         declared length of the scan outputs) carrying the condition:
//         a step whose condition is false, or past the run-time trip
//         count, leaves everything unchanged. Scan outputs past the trip
//         count stay zero.
//
// Subgraphs are inlined, so the memory plan of a body is part of the
// function's plan (allocations inside loops are placed once).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

LogicalResult refuse(Operation *op, const Twine &why) {
  return op->emitError() << onnx::opLabel(op) << ": not supported by " << backendName() << ": "
                         << why;
}

bool allStatic(TypeRange types) {
  return llvm::all_of(types, [](Type t) { return isStaticTensor(t); });
}

/// The i1 scalar of a one-element boolean tensor.
Value scalarOf(OpBuilder &b, Location l, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<Value> zeros(type.getRank(), arith::ConstantIndexOp::create(b, l, 0));
  return tensor::ExtractOp::create(b, l, t, zeros);
}

/// Moves the single block of `region` to the end of `dest`, its arguments
/// replaced by `args`; returns the (onnx.Yield) terminator's operands and
/// erases it. Values are cast to `types` where given and different.
SmallVector<Value> inlineBody(OpBuilder &b, Region &region, Block *dest, ValueRange args) {
  Block &body = region.front();
  for (auto [arg, v] : llvm::zip(body.getArguments(), args))
    arg.replaceAllUsesWith(v);
  Operation *yield = body.getTerminator();
  SmallVector<Value> results(yield->getOperands());
  dest->getOperations().splice(dest->end(), body.getOperations(), body.begin(),
                               Block::iterator(yield));
  yield->erase();
  return results;
}

/// Gives the body's arguments the (static) types the op passes in, where
/// the subgraph declared less, and re-infers the body's result shapes
/// (ONNX exporters often leave subgraph inputs without shapes).
LogicalResult refineBody(Block &body, TypeRange argTypes) {
  bool changed = false;
  for (auto [arg, t] : llvm::zip(body.getArguments(), argTypes))
    if (arg.getType() != t && isStaticTensor(t) && !isStaticTensor(arg.getType())) {
      arg.setType(t);
      changed = true;
    }
  if (!changed)
    return success();
  WalkResult r = body.walk([](onnx::ShapeInferenceOpInterface op) {
    return failed(op.inferShapes()) ? WalkResult::interrupt() : WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

/// Whether the body's inputs can take `argTypes` and its yields from
/// `firstState` on can carry `stateTypes` (a model may declare a body's
/// inputs and outputs with other shapes or types than its operands): a
/// refusal naming the first that cannot.
LogicalResult checkBodyTypes(Operation *op, Block &body, TypeRange argTypes,
                             TypeRange stateTypes, unsigned firstState) {
  auto fits = [](Type a, Type b) {
    return getElementTypeOrSelf(a) == getElementTypeOrSelf(b) &&
           succeeded(verifyCompatibleShape(a, b));
  };
  for (auto [i, pair] : llvm::enumerate(llvm::zip(body.getArguments(), argTypes)))
    if (!fits(std::get<0>(pair).getType(), std::get<1>(pair)))
      return refuse(op, "the body's input #" + Twine(i) + " is declared " +
                            typeName(std::get<0>(pair).getType()) + " but gets " +
                            typeName(std::get<1>(pair)));
  Operation *terminator = body.getTerminator();
  for (auto [i, t] : llvm::enumerate(stateTypes)) {
    if (firstState + i >= terminator->getNumOperands())
      return refuse(op, "the body yields fewer values than it carries");
    Type yielded = terminator->getOperand(firstState + i).getType();
    if (!fits(yielded, t))
      return refuse(op, "the body's output #" + Twine(firstState + i) + " is " +
                            typeName(yielded) + " but carries " + typeName(t));
  }
  return success();
}

/// Gives result i the type `types[i]` where the result's is not static.
void refineResults(Operation *op, TypeRange types, size_t first = 0) {
  for (auto [i, t] : llvm::enumerate(types)) {
    Value r = op->getResult(first + i);
    if (!isStaticTensor(r.getType()) && isStaticTensor(t))
      r.setType(t);
  }
}

/// A fresh copy of `v`: loop-carried tensors start as buffers the loop may
/// write in place (not a constant, not a read-only input).
Value writable(OpBuilder &b, Location l, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  Value empty = tensor::EmptyOp::create(b, l, t.getShape(), t.getElementType());
  return linalg::CopyOp::create(b, l, v, empty).getResult(0);
}

/// `v` with `type` (a tensor.cast between compatible static shapes).
Value castTo(OpBuilder &b, Location l, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, l, type, v);
}

LogicalResult lowerIf(onnx::IfOp op) {
  if (!allStatic(op->getResultTypes()))
    return refuse(op, "results must be tensors of static shape");
  for (Region *r : {&op.getThenBranch(), &op.getElseBranch()})
    for (auto [v, t] : llvm::zip(r->front().getTerminator()->getOperands(), op->getResultTypes()))
      if (!isStaticTensor(v.getType()) ||
          cast<RankedTensorType>(v.getType()).getShape() != cast<RankedTensorType>(t).getShape())
        return refuse(op, "both branches must yield the results' static shapes");
  OpBuilder b(op);
  Location l = op.getLoc();
  Value cond = scalarOf(b, l, op.getCond());
  auto ifOp = scf::IfOp::create(b, l, op->getResultTypes(), cond, /*withElseRegion=*/true);
  for (auto [from, to] : {std::pair(&op.getThenBranch(), &ifOp.getThenRegion()),
                          std::pair(&op.getElseBranch(), &ifOp.getElseRegion())}) {
    Block *dest = &to->front();
    // The builder added no terminator for results; inline, then yield.
    SmallVector<Value> vals = inlineBody(b, *from, dest, {});
    b.setInsertionPointToEnd(dest);
    SmallVector<Value> cast;
    for (auto [v, t] : llvm::zip(vals, op->getResultTypes()))
      cast.push_back(castTo(b, l, v, t));
    scf::YieldOp::create(b, l, cast);
  }
  op->replaceAllUsesWith(ifOp.getResults());
  op->erase();
  return success();
}

/// A zero-filled tensor of a scan output's (onnx) type, as an onnx.Constant
/// for the conversion to lower with everything else.
Value zeros(OpBuilder &b, Location l, Type type) {
  auto t = cast<RankedTensorType>(type);
  OperationState st(l, "onnx.Constant");
  st.addTypes(t);
  st.addAttribute("value", DenseElementsAttr::get(t, b.getZeroAttr(t.getElementType())));
  return b.create(st)->getResult(0);
}

LogicalResult lowerScan(onnx::ScanOp op) {
  int64_t m = op.getNumScanInputs();
  ValueRange operands = op.getInitialStateAndScanInputs();
  int64_t n = int64_t(operands.size()) - m;
  int64_t k = int64_t(op->getNumResults()) - n;
  if (m < 1 || n < 0 || k < 0)
    return refuse(op, "num_scan_inputs does not match the operands");
  if (!allStatic(operands.getTypes()))
    return refuse(op, "operands must be tensors of static shape");
  // Absent: all zeros; present: one value per scan input or output.
  bool badLength = false;
  auto attrOr = [&](std::optional<ArrayRef<int64_t>> a, int64_t count) {
    SmallVector<int64_t> v(count, 0);
    if (a) {
      badLength |= int64_t(a->size()) != count;
      if (int64_t(a->size()) == count)
        v.assign(a->begin(), a->end());
    }
    return v;
  };
  SmallVector<int64_t> inAxes = attrOr(op.getScanInputAxes(), m),
                       inDirs = attrOr(op.getScanInputDirections(), m),
                       outAxes = attrOr(op.getScanOutputAxes(), k),
                       outDirs = attrOr(op.getScanOutputDirections(), k);
  if (badLength)
    return refuse(op, "scan axes and directions must have one value per scan input/output");
  Block &body = op.getBody().front();
  if (int64_t(body.getNumArguments()) != n + m)
    return refuse(op, "the body's arguments do not match the operands");
  int64_t length = -1;
  SmallVector<Type> argTypes(operands.take_front(n).getTypes());
  for (int64_t i = 0; i < m; ++i) {
    auto t = cast<RankedTensorType>(operands[n + i].getType());
    if (inAxes[i] < 0)
      inAxes[i] += t.getRank();
    if (inAxes[i] < 0 || inAxes[i] >= t.getRank())
      return refuse(op, "scan input axis out of range");
    if (length >= 0 && t.getDimSize(inAxes[i]) != length)
      return refuse(op, "scan inputs differ in length");
    length = t.getDimSize(inAxes[i]);
    SmallVector<int64_t> slice(t.getShape());
    slice.erase(slice.begin() + inAxes[i]);
    argTypes.push_back(t.clone(slice));
  }
  if (failed(refineBody(body, argTypes)) ||
      failed(checkBodyTypes(op, body, argTypes, operands.take_front(n).getTypes(), 0)))
    return failure();
  // Final states have the initial states' types; scan outputs stack the
  // body's per-step outputs.
  refineResults(op, operands.take_front(n).getTypes());
  Operation *terminator = body.getTerminator();
  for (int64_t i = 0; i < k; ++i) {
    auto step = dyn_cast<RankedTensorType>(terminator->getOperand(n + i).getType());
    if (!step || !step.hasStaticShape())
      continue;
    int64_t axis = outAxes[i] < 0 ? outAxes[i] + step.getRank() + 1 : outAxes[i];
    if (axis < 0 || axis > step.getRank())
      continue;
    SmallVector<int64_t> full(step.getShape());
    full.insert(full.begin() + axis, length);
    refineResults(op, TypeRange{step.clone(full)}, n + i);
  }
  if (!allStatic(op->getResultTypes()))
    return refuse(op, "results must be tensors of static shape");
  for (int64_t i = 0; i < k; ++i) {
    auto t = cast<RankedTensorType>(op->getResult(n + i).getType());
    if (outAxes[i] < 0)
      outAxes[i] += t.getRank();
    if (outAxes[i] < 0 || outAxes[i] >= t.getRank() || t.getDimSize(outAxes[i]) != length)
      return refuse(op, "scan output axis out of range or of the wrong length");
  }
  OpBuilder b(op);
  Location l = op.getLoc();
  SmallVector<Value> inits;
  for (Value v : operands.take_front(n))
    inits.push_back(writable(b, l, v));
  for (int64_t i = 0; i < k; ++i)
    inits.push_back(writable(b, l, zeros(b, l, op->getResult(n + i).getType())));
  auto forOp = scf::ForOp::create(b, l, arith::ConstantIndexOp::create(b, l, 0),
                                  arith::ConstantIndexOp::create(b, l, length),
                                  arith::ConstantIndexOp::create(b, l, 1), inits);
  Block *dest = forOp.getBody();
  b.setInsertionPointToStart(dest);
  Value t = forOp.getInductionVar();
  Value last = arith::ConstantIndexOp::create(b, l, length - 1);
  Value rev = arith::SubIOp::create(b, l, last, t);
  SmallVector<Value> args(forOp.getRegionIterArgs().take_front(n));
  for (int64_t i = 0; i < m; ++i)
    args.push_back(castTo(b, l,
                          extractSliceAt(b, l, operands[n + i], inAxes[i], inDirs[i] ? rev : t),
                          body.getArgument(n + i).getType()));
  SmallVector<Value> outs = inlineBody(b, op.getBody(), dest, args);
  b.setInsertionPointToEnd(dest);
  SmallVector<Value> yields(n);
  for (int64_t i = 0; i < k; ++i)
    yields.push_back(insertSliceAt(b, l, outs[n + i], forOp.getRegionIterArgs()[n + i],
                                   outAxes[i], outDirs[i] ? rev : t));
  // New states are copied into the carried ones (after every read of
  // them): scf.for's results must share its iteration arguments' buffers.
  for (int64_t i = 0; i < n; ++i)
    yields[i] = linalg::CopyOp::create(b, l, castTo(b, l, outs[i], inits[i].getType()),
                                       forOp.getRegionIterArgs()[i])
                    .getResult(0);
  scf::YieldOp::create(b, l, yields);
  op->replaceAllUsesWith(forOp.getResults());
  op->erase();
  return success();
}

LogicalResult lowerLoop(onnx::LoopOp op) {
  ValueRange carried = op.getVInitial();
  int64_t n = carried.size();
  int64_t k = int64_t(op->getNumResults()) - n;
  if (!allStatic(carried.getTypes()))
    return refuse(op, "loop-carried values must be tensors of static shape");
  Block &body = op.getBody().front();
  if (int64_t(body.getNumArguments()) != n + 2)
    return refuse(op, "the body's arguments do not match the loop-carried values");
  OpBuilder tb(op);
  SmallVector<Type> argTypes{RankedTensorType::get({}, tb.getI64Type()),
                             RankedTensorType::get({}, tb.getI1Type())};
  argTypes.append(carried.getTypes().begin(), carried.getTypes().end());
  if (failed(refineBody(body, argTypes)) ||
      failed(checkBodyTypes(op, body, argTypes, carried.getTypes(), 1)))
    return failure();
  refineResults(op, carried.getTypes());
  if (!allStatic(op->getResultTypes()))
    return refuse(op, "results must be tensors of static shape (scan outputs: declare "
                      "their length)");
  // A static bound: the constant trip count, else the scan outputs' length.
  std::optional<int64_t> trip;
  if (!onnx::isNone(op.getM()))
    if (auto v = onnx::constantInts(op.getM()); v && v->size() == 1)
      trip = std::max<int64_t>(v->front(), 0);
  // Never past the shortest scan output (writes there would be out of
  // bounds; iterations past a declared length are dropped).
  int64_t bound = trip ? *trip : -1;
  for (int64_t i = 0; i < k; ++i) {
    int64_t len = cast<RankedTensorType>(op->getResult(n + i).getType()).getDimSize(0);
    bound = bound < 0 ? len : std::min(bound, len);
  }
  if (bound < 0)
    return refuse(op, "the trip count must be a constant, or the loop must have scan "
                      "outputs of static length");
  // Checked before any IR changes: the body yields cond, n values and one
  // static step of each scan output.
  Operation *terminator = body.getTerminator();
  if (int64_t(terminator->getNumOperands()) != 1 + n + k)
    return refuse(op, "the body's results do not match the loop's");
  for (int64_t i = 0; i < k; ++i) {
    auto full = cast<RankedTensorType>(op->getResult(n + i).getType());
    Type step = terminator->getOperand(1 + n + i).getType();
    if (!isStaticTensor(step) ||
        cast<RankedTensorType>(step).getNumElements() * full.getDimSize(0) != full.getNumElements())
      return refuse(op, "scan outputs of each iteration must have one static shape");
  }
  OpBuilder b(op);
  Location l = op.getLoc();
  Type i64 = b.getI64Type();
  Value active = onnx::isNone(op.getCond()) ? Value(arith::ConstantIntOp::create(b, l, 1, 1))
                                            : scalarOf(b, l, op.getCond());
  Value limit = onnx::isNone(op.getM()) ? Value() : scalarOf(b, l, op.getM());
  SmallVector<Value> inits{active};
  for (Value v : carried)
    inits.push_back(writable(b, l, v));
  for (int64_t i = 0; i < k; ++i)
    inits.push_back(writable(b, l, zeros(b, l, op->getResult(n + i).getType())));
  auto forOp = scf::ForOp::create(b, l, arith::ConstantIndexOp::create(b, l, 0),
                                  arith::ConstantIndexOp::create(b, l, bound),
                                  arith::ConstantIndexOp::create(b, l, 1), inits);
  Block *dest = forOp.getBody();
  b.setInsertionPointToStart(dest);
  Value t = forOp.getInductionVar();
  ValueRange iters = forOp.getRegionIterArgs();
  Value ti = arith::IndexCastOp::create(b, l, i64, t);
  Value run = iters[0];
  if (limit)
    run = arith::AndIOp::create(b, l, run,
                                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, ti, limit));
  auto step = scf::IfOp::create(b, l, forOp.getResultTypes(), run, /*withElseRegion=*/true);
  // Taken: run the body, record the scan outputs at t.
  Block *thenBlock = &step.getThenRegion().front();
  b.setInsertionPointToStart(thenBlock);
  SmallVector<Value> args{
      tensor::FromElementsOp::create(b, l, RankedTensorType::get({}, i64), ValueRange{ti}),
      tensor::FromElementsOp::create(b, l, RankedTensorType::get({}, b.getI1Type()),
                                     ValueRange{iters[0]})};
  for (int64_t i = 0; i < n; ++i)
    args.push_back(castTo(b, l, iters[1 + i], body.getArgument(2 + i).getType()));
  SmallVector<Value> outs = inlineBody(b, op.getBody(), thenBlock, args);
  b.setInsertionPointToEnd(thenBlock);
  SmallVector<Value> yields{scalarOf(b, l, outs[0])};
  yields.resize(1 + n);
  for (int64_t i = 0; i < k; ++i) {
    auto full = cast<RankedTensorType>(iters[1 + n + i].getType());
    SmallVector<int64_t> one(full.getShape());
    one[0] = 1;
    Value part = reshapeTensor(b, l, outs[1 + n + i], full.clone(one));
    yields.push_back(insertSliceAt(b, l, part, iters[1 + n + i], 0, t));
  }
  // Copied into the carried values (after every read of them), so that
  // the loop's results share its iteration arguments' buffers.
  for (int64_t i = 0; i < n; ++i)
    yields[1 + i] =
        linalg::CopyOp::create(b, l, castTo(b, l, outs[1 + i], iters[1 + i].getType()),
                               iters[1 + i])
            .getResult(0);
  scf::YieldOp::create(b, l, yields);
  // Not taken: everything unchanged, and the loop stays stopped.
  b.setInsertionPointToStart(&step.getElseRegion().front());
  SmallVector<Value> same{arith::ConstantIntOp::create(b, l, 0, 1)};
  same.append(iters.begin() + 1, iters.end());
  scf::YieldOp::create(b, l, same);
  b.setInsertionPointToEnd(dest);
  scf::YieldOp::create(b, l, step.getResults());
  op->replaceAllUsesWith(forOp.getResults().drop_front());
  op->erase();
  return success();
}

} // namespace

LogicalResult kiln::lowering::lowerControlFlow(ModuleOp module) {
  SmallVector<Operation *> ops;
  // Outer ops first: inner ones are moved along, then lowered.
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<onnx::IfOp, onnx::LoopOp, onnx::ScanOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    LogicalResult r = success();
    if (auto i = dyn_cast<onnx::IfOp>(op))
      r = lowerIf(i);
    else if (auto s = dyn_cast<onnx::ScanOp>(op))
      r = lowerScan(s);
    else if (auto lp = dyn_cast<onnx::LoopOp>(op))
      r = lowerLoop(lp);
    if (failed(r))
      return failure();
  }
  return success();
}
