//===- Matrix.cpp - Det -> scf loops over tensors --------------------------===//
//
// Det: Gaussian elimination with partial pivoting on a working copy of
// each [M, M] matrix, in scf.for loops over tensors. The determinant is
// the product of the pivots, negated once per row swap; a zero pivot
// column gives 0 (the elimination then divides by a safe 1 instead).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

struct DetPattern : public OpConversionPattern<onnx::DetOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::DetOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    int64_t rank = xType.getRank();
    if (rank < 2 || xType.getDimSize(rank - 1) != xType.getDimSize(rank - 2))
      return unsupported(rewriter, op, "X must be [..., M, M]");
    int64_t m = xType.getDimSize(rank - 1);
    int64_t batch = xType.getNumElements() / std::max<int64_t>(m * m, 1);
    if (m == 0)
      return unsupported(rewriter, op, "empty matrices are not supported");
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    if (yType.getShape() != xType.getShape().drop_back(2))
      return unsupported(rewriter, op, "Y must have X's batch dims");
    Type et = xType.getElementType();
    auto matType = RankedTensorType::get({m, m}, et);
    Value all = reshapeTensor(rewriter, loc, adaptor.getX(),
                              RankedTensorType::get({batch, m, m}, et));
    auto outType = RankedTensorType::get({batch}, et);
    Value out = emptyTensor(rewriter, loc, outType);
    auto idx = [](OpBuilder &b, Location l, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, l, v);
    };
    auto fc = [&](OpBuilder &b, Location l, double v) { return scalarConstant(b, l, et, v); };
    auto batches = forLoop(
        rewriter, loc, idx(rewriter, loc, 0), idx(rewriter, loc, batch), ValueRange{out},
        [&](OpBuilder &b, Location l, Value bi, ValueRange st) -> SmallVector<Value> {
          // The working copy of matrix bi.
          Value a = tensor::ExtractSliceOp::create(
              b, l, matType, all, ArrayRef<OpFoldResult>{bi, b.getIndexAttr(0), b.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(m), b.getIndexAttr(m)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(1)});
          a = linalg::CopyOp::create(b, l, a, emptyTensor(b, l, matType)).getResult(0);
          auto cols = forLoop(
              b, l, idx(b, l, 0), idx(b, l, m), ValueRange{a, fc(b, l, 1)},
              [&](OpBuilder &cb, Location cl, Value k, ValueRange cs) -> SmallVector<Value> {
                Value mat = cs[0], det = cs[1];
                auto at = [&](OpBuilder &eb, Location el, Value t, Value r, Value c) -> Value {
                  return tensor::ExtractOp::create(eb, el, t, ValueRange{r, c});
                };
                // Pivot: the row >= k with the largest |a[i, k]|.
                auto piv = forLoop(
                    cb, cl, k, idx(cb, cl, m), ValueRange{k, fc(cb, cl, -1)},
                    [&](OpBuilder &pb, Location pl, Value i, ValueRange ps) -> SmallVector<Value> {
                      Value v = math::AbsFOp::create(pb, pl, at(pb, pl, mat, i, k));
                      Value better = arith::CmpFOp::create(pb, pl, arith::CmpFPredicate::OGT, v, ps[1]);
                      return {arith::SelectOp::create(pb, pl, better, i, ps[0]),
                              arith::SelectOp::create(pb, pl, better, v, ps[1])};
                    });
                Value p = piv[0];
                // Swap rows k and p (a no-op when p == k).
                auto swapped = forLoop(
                    cb, cl, idx(cb, cl, 0), idx(cb, cl, m), ValueRange{mat},
                    [&](OpBuilder &sb, Location sl, Value j, ValueRange ss) -> SmallVector<Value> {
                      Value rk = at(sb, sl, ss[0], k, j), rp = at(sb, sl, ss[0], p, j);
                      Value t = tensor::InsertOp::create(sb, sl, rp, ss[0], ValueRange{k, j});
                      return {tensor::InsertOp::create(sb, sl, rk, t, ValueRange{p, j})};
                    });
                mat = swapped[0];
                Value pivot = at(cb, cl, mat, k, k);
                Value moved = arith::CmpIOp::create(cb, cl, arith::CmpIPredicate::ne, p, k);
                Value signed_ = arith::SelectOp::create(cb, cl, moved,
                                                        arith::NegFOp::create(cb, cl, pivot), pivot);
                det = arith::MulFOp::create(cb, cl, det, signed_);
                Value zero = arith::CmpFOp::create(cb, cl, arith::CmpFPredicate::OEQ, pivot,
                                                   fc(cb, cl, 0));
                Value safe = arith::SelectOp::create(cb, cl, zero, fc(cb, cl, 1), pivot);
                // Eliminate below the pivot.
                Value next = arith::AddIOp::create(cb, cl, k, idx(cb, cl, 1));
                auto rows = forLoop(
                    cb, cl, next, idx(cb, cl, m), ValueRange{mat},
                    [&](OpBuilder &rb, Location rl, Value i, ValueRange rs) -> SmallVector<Value> {
                      Value f = arith::DivFOp::create(rb, rl, at(rb, rl, rs[0], i, k), safe);
                      auto upd = forLoop(
                          rb, rl, k, idx(rb, rl, m), ValueRange{rs[0]},
                          [&](OpBuilder &ub, Location ul, Value j,
                              ValueRange us) -> SmallVector<Value> {
                            Value v = arith::SubFOp::create(
                                ub, ul, at(ub, ul, us[0], i, j),
                                arith::MulFOp::create(ub, ul, f, at(ub, ul, us[0], k, j)));
                            return {tensor::InsertOp::create(ub, ul, v, us[0], ValueRange{i, j})};
                          });
                      return {upd[0]};
                    });
                return {rows[0], det};
              });
          return {tensor::InsertOp::create(b, l, cols[1], st[0], ValueRange{bi})};
        });
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, batches[0], yType));
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateMatrixPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<DetPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
