//===- KernelStores.cpp - Output vectors, epilogues and tile stores --------===//
//
// Vectors of the row operand, of the output and of an epilogue's operands
// (loads, or gathers across strides), the epilogue applied to an output
// vector, and the tile's stores: along N (stores or scatters), or, for a
// Channels tile whose rows run along the output's contiguous innermost
// dim, transposed in registers and stored a channel at a time.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/KernelBuilder.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln::contraction {

Value KernelBuilder::rowVector(OpBuilder &b, ValueRange idx, int64_t on) {
  if (on == kMasked) // A dynamic N: the row is contiguous along it.
    return vectorAt(b, c.row, idx, idx.size() - 1, on);
  return kiln::vec::stridedLoad(b, loc(), c.row, idx, t.lanes, c.strideN, on);
}

Value KernelBuilder::vectorAt(OpBuilder &b, Value mem, ValueRange idx, unsigned pos, int64_t on,
                              int64_t lanes) {
  lanes = lanes ? lanes : t.lanes;
  auto vecType = VectorType::get({lanes}, b.getF32Type());
  std::optional<int64_t> stride = kiln::contraction::staticStride(mem, pos);
  bool contiguous = pos + 1 == idx.size() && stride == 1;
  if (contiguous)
    return on == kMasked ? kiln::vec::load(b, loc(), mem, idx, vecType, tailMask)
                         : kiln::vec::load(b, loc(), mem, idx, vecType, on);
  return on == kMasked ? kiln::vec::gather(b, loc(), mem, idx, lanes, *stride, tailMask)
                       : kiln::vec::gather(b, loc(), mem, idx, lanes, *stride, on);
}

void KernelBuilder::storeAt(OpBuilder &b, Value value, Value mem, ValueRange idx, unsigned pos,
                            int64_t on) {
  std::optional<int64_t> stride = kiln::contraction::staticStride(mem, pos);
  if (pos + 1 == idx.size() && stride == 1) {
    if (on == kMasked)
      kiln::vec::store(b, loc(), value, mem, idx, tailMask);
    else
      kiln::vec::store(b, loc(), value, mem, idx, on);
    return;
  }
  vector::ScatterOp::create(b, loc(), Type(), mem, idx,
                            kiln::vec::laneOffsets(b, loc(), t.lanes, *stride),
                            on == kMasked ? tailMask
                                          : kiln::vec::constantMask(b, loc(), t.lanes, on),
                            value);
}

Value KernelBuilder::operandAt(OpBuilder &b, linalg::GenericOp op, OpOperand *in,
                               ArrayRef<Value> outIdx, int64_t on, std::optional<unsigned> along,
                               int64_t lanes) {
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

Value KernelBuilder::applyEpilogue(OpBuilder &b, Value value, ArrayRef<Value> idx, int64_t on,
                                   std::optional<unsigned> along) {
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

std::optional<unsigned> KernelBuilder::transposedOutput(int64_t mr) {
  if (c.variant != kiln::contraction::Variant::Channels || !c.dimM || c.mInRow || mr < 2 ||
      !llvm::isPowerOf2_64(t.lanes) || int64_t(llvm::PowerOf2Ceil(mr)) > t.lanes)
    return std::nullopt;
  ArrayRef<AffineExpr> results = c.outMap.getResults();
  auto last = dyn_cast<AffineDimExpr>(results.back());
  if (!last || last.getPosition() != *c.dimM)
    return std::nullopt;
  unsigned pos = results.size() - 1;
  for (Value mem : {c.out, storeTarget()})
    if (kiln::contraction::staticStride(mem, pos) != 1)
      return std::nullopt;
  return pos;
}

void KernelBuilder::storeTransposed(OpBuilder &b, ArrayRef<Value> ivs, ArrayRef<Value> result,
                                    unsigned posM, int64_t mr, int64_t nv,
                                    const std::function<int64_t(int64_t)> &lanesOf) {
  int64_t lanes = t.lanes, rows = int64_t(llvm::PowerOf2Ceil(mr));
  auto vecType = VectorType::get({lanes}, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc(), vecType, b.getZeroAttr(vecType));
  for (int64_t v = 0; v < nv; ++v) {
    SmallVector<Value> rowsOfV;
    for (int64_t r = 0; r < rows; ++r)
      rowsOfV.push_back(r < mr ? result[r * nv + v] : zero);
    kiln::vec::Transposed tr = kiln::vec::transposeRows(b, loc(), rowsOfV);
    for (int64_t k = 0; k < rows; ++k)
      for (int64_t block = 0; block < lanes / rows; ++block) {
        int64_t channel = tr.columns[k][block];
        if (channel >= lanesOf(v))
          continue;
        Value column = tr.vectors[k];
        if (rows < lanes) {
          SmallVector<int64_t> mask;
          for (int64_t e = 0; e < rows; ++e)
            mask.push_back(block * rows + e);
          column = vector::ShuffleOp::create(b, loc(), tr.vectors[k], tr.vectors[k], mask);
        }
        SmallVector<Value> idx = indices(b, c.outMap, ivs, 0, v * lanes + channel);
        Value value = applyEpilogue(b, column, idx, mr, posM);
        kiln::vec::store(b, loc(), value, storeTarget(), idx, mr);
      }
  }
}

} // namespace kiln::contraction
