//===- VectorizeLoops.cpp - Loops shared by the elementwise vectorisers ---===//
//
// Part of kiln-vectorize-elementwise (VectorizeElementwise.cpp and
// VectorizeWindows.cpp, declared in VectorizeLoops.h): the scalar loops
// around a vectorised generic, and the vector steps along its vector dim,
// over a static size or one known at run time only.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/VectorizeLoops.h"

#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln::vec {

void outerLoops(OpBuilder &b, linalg::GenericOp op, ArrayRef<int64_t> ranges,
                ArrayRef<unsigned> dims, SmallVector<Value> &ivs, bool &pending,
                const std::function<void(OpBuilder &, SmallVector<Value> &)> &body) {
  if (dims.empty())
    return body(b, ivs);
  Location loc = op.getLoc();
  unsigned dim = dims.front();
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto loop = scf::ForOp::create(b, loc, c(0), c(ranges[dim]), c(1));
  if (pending && ranges[dim] >= 2) {
    bool disjoint = llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &out) {
      return op.getMatchingIndexingMap(&out).isFunctionOfDim(dim);
    });
    if (op.getIteratorTypesArray()[dim] == utils::IteratorType::parallel && disjoint)
      loop->setAttr("kiln.parallel", UnitAttr::get(loop.getContext()));
    pending = false;
  }
  OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
  ivs[dim] = loop.getInductionVar();
  outerLoops(nb, op, ranges, dims.drop_front(), ivs, pending, body);
}

scf::ForOp vectorSteps(OpBuilder &b, Location loc, int64_t n, int64_t lanes, Value &iv,
                       const std::function<void(OpBuilder &, int64_t)> &step) {
  int64_t full = n / lanes;
  auto c = [&](OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  scf::ForOp loop;
  if (full == 1) {
    iv = c(b, 0);
    step(b, lanes);
  } else if (full > 1) {
    loop = scf::ForOp::create(b, loc, c(b, 0), c(b, full * lanes), c(b, lanes));
    OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
    iv = loop.getInductionVar();
    step(nb, lanes);
  }
  if (n % lanes) {
    iv = c(b, full * lanes);
    step(b, n % lanes);
  }
  return loop;
}

scf::ForOp vectorSteps(OpBuilder &b, Location loc, Value n, int64_t lanes, Value &iv,
                       Value &mask, const std::function<void(OpBuilder &, int64_t)> &step) {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value width = c(lanes);
  Value whole = arith::SubIOp::create(b, loc, n, arith::RemUIOp::create(b, loc, n, width));
  auto loop = scf::ForOp::create(b, loc, c(0), whole, width);
  OpBuilder nb = OpBuilder::atBlockTerminator(loop.getBody());
  iv = loop.getInductionVar();
  step(nb, lanes);
  Value left = arith::SubIOp::create(b, loc, n, whole);
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, left, c(0));
  auto tail = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
  OpBuilder tb = tail.getThenBodyBuilder();
  iv = whole;
  mask = vector::CreateMaskOp::create(tb, loc, VectorType::get({lanes}, tb.getI1Type()),
                                      ValueRange{left});
  step(tb, kMasked);
  mask = nullptr;
  return loop;
}

} // namespace kiln::vec
