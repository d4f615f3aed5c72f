//===- Spectral.cpp - DFT and STFT -> linalg -------------------------------===//
//
// Direct (O(n^2)) transforms: every output bin sums its inputs times the
// twiddle factor e^(-+2 pi i jk / L), with jk reduced mod L in integers so
// that the angle stays in [0, 2 pi) and the sin/cos approximations stay
// accurate. Real inputs ([..., 1]) and complex ones ([..., 2]) alike.
//   - DFT: one generic with the input position as an extra reduction loop
//     (dft_length, if given, must be a constant; onesided keeps L/2 + 1
//     bins; inverse scales by 1/L).
//   - STFT: frame_step and frame_length may be run-time values, so each
//     bin's sum is an scf.for inside a generic over the (static) output;
//     signal reads past the end count as zero.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

/// (xr + i xi) e^(i theta), theta = sign * 2 pi * (jk mod L) / L, for the
/// output component `c` (0: real, 1: imaginary). j, k, len are i64.
Value twiddle(OpBuilder &b, Location l, Value xr, Value xi, Value j, Value k, Value len,
              double sign, Value c) {
  Type ft = xr.getType();
  Value jk = arith::RemUIOp::create(b, l, arith::MulIOp::create(b, l, j, k), len);
  Value frac = arith::DivFOp::create(b, l, arith::UIToFPOp::create(b, l, ft, jk),
                                     arith::UIToFPOp::create(b, l, ft, len));
  Value theta = arith::MulFOp::create(b, l, frac, scalarConstant(b, l, ft, sign * 2 * M_PI));
  Value cs = math::CosOp::create(b, l, theta), sn = math::SinOp::create(b, l, theta);
  Value re = arith::SubFOp::create(b, l, arith::MulFOp::create(b, l, xr, cs),
                                   arith::MulFOp::create(b, l, xi, sn));
  Value im = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, xr, sn),
                                   arith::MulFOp::create(b, l, xi, cs));
  Value isReal = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, c,
                                       arith::ConstantIndexOp::create(b, l, 0));
  return arith::SelectOp::create(b, l, isReal, re, im);
}

struct DFTPattern : public OpConversionPattern<onnx::DFTOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::DFTOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getInput());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    Value x = adaptor.getInput();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    int64_t comps = xType.getShape().back();
    if (rank < 2 || axis < 0 || axis >= rank - 1 || (comps != 1 && comps != 2))
      return unsupported(rewriter, op, "input must be [..., 1] or [..., 2] with the axis "
                                       "before the last dim");
    int64_t n = xType.getDimSize(axis), len = n;
    if (!onnx::isNone(op.getDftLength())) {
      auto v = onnx::constantInts(op.getDftLength());
      if (!v || v->size() != 1)
        return unsupported(rewriter, op, "dft_length must be a constant");
      len = v->front();
    }
    if (len < 1)
      return unsupported(rewriter, op, "dft_length must be positive");
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    bool inverse = op.getInverse() != 0;
    if (yType.getDimSize(axis) != (op.getOnesided() != 0 ? len / 2 + 1 : len))
      return unsupported(rewriter, op, "the result's length does not match dft_length");
    for (int64_t d = 0; d < rank - 1; ++d)
      if (d != axis && yType.getDimSize(d) != xType.getDimSize(d))
        return unsupported(rewriter, op, "the result must match the input but along the axis");
    if (yType.getRank() != rank || yType.getShape().back() != 2)
      return unsupported(rewriter, op, "the result must be [..., 2]");
    if (n > len) { // Only the first L inputs take part.
      SmallVector<int64_t> shape(xType.getShape());
      shape[axis] = len;
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes,
          strides(rank, rewriter.getIndexAttr(1));
      for (int64_t s : shape)
        sizes.push_back(rewriter.getIndexAttr(s));
      x = tensor::ExtractSliceOp::create(rewriter, loc, xType.clone(shape), x, offsets, sizes,
                                         strides);
    }
    // Loops: the output dims, then j (reduction) over the input's axis.
    MLIRContext *ctx = rewriter.getContext();
    auto inputMap = [&](int64_t comp) {
      SmallVector<AffineExpr> e;
      for (int64_t d = 0; d < rank; ++d)
        e.push_back(d == axis       ? getAffineDimExpr(rank, ctx)
                    : d == rank - 1 ? getAffineConstantExpr(comp, ctx)
                                    : getAffineDimExpr(d, ctx));
      return AffineMap::get(rank + 1, 0, e, ctx);
    };
    SmallVector<Value> ins{x};
    SmallVector<AffineMap> maps{inputMap(0)};
    if (comps == 2) {
      ins.push_back(x);
      maps.push_back(inputMap(1));
    }
    maps.push_back(AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank));
    Type et = yType.getElementType();
    Value init = filledTensor(rewriter, loc, yType, scalarConstant(rewriter, loc, et, 0));
    SmallVector<utils::IteratorType> iters(rank + 1, utils::IteratorType::parallel);
    iters[rank] = utils::IteratorType::reduction;
    Value y =
        linalg::GenericOp::create(
            rewriter, loc, yType, ins, ValueRange{init}, maps, iters,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Type i64 = b.getI64Type();
              auto index = [&](int64_t d) {
                return arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, d));
              };
              Value xr = a[0], xi = comps == 2 ? a[1] : scalarConstant(b, l, et, 0);
              Value c = linalg::IndexOp::create(b, l, rank - 1);
              Value v = twiddle(b, l, xr, xi, index(rank), index(axis),
                                scalarConstant(b, l, i64, len), inverse ? 1 : -1, c);
              if (inverse)
                v = arith::MulFOp::create(b, l, v, scalarConstant(b, l, et, 1.0 / len));
              linalg::YieldOp::create(b, l, Value(arith::AddFOp::create(b, l, a.back(), v)));
            })
            .getResult(0);
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// A run-time integer scalar operand as i64 (a one-element tensor).
Value scalarI64(OpBuilder &b, Location l, Value v, Type onnxType) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<Value> zeros(t.getRank(), arith::ConstantIndexOp::create(b, l, 0));
  return castScalar(b, l, tensor::ExtractOp::create(b, l, v, zeros), onnxType,
                    b.getI64Type());
}

struct STFTPattern : public OpConversionPattern<onnx::STFTOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::STFTOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getSignal());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    Value signal = adaptor.getSignal();
    auto sType = cast<RankedTensorType>(signal.getType());
    if (sType.getRank() != 3 || (sType.getDimSize(2) != 1 && sType.getDimSize(2) != 2))
      return unsupported(rewriter, op, "signal must be [batch, length, 1 or 2]");
    bool hasWindow = !onnx::isNone(op.getWindow());
    if (!hasWindow && onnx::isNone(op.getFrameLength()))
      return unsupported(rewriter, op, "needs a window or a frame_length");
    if (hasWindow) {
      auto wType = cast<RankedTensorType>(adaptor.getWindow().getType());
      if (wType.getRank() != 1 || wType.isDynamicDim(0))
        return unsupported(rewriter, op, "the window must be 1-D, of a known length");
    }
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    if (yType.getRank() != 4 || yType.getDimSize(3) != 2 ||
        yType.getDimSize(0) != sType.getDimSize(0))
      return unsupported(rewriter, op, "the result must be [batch, frames, bins, 2]");
    int64_t samples = sType.getDimSize(1), comps = sType.getDimSize(2);
    if (samples == 0)
      return unsupported(rewriter, op, "empty signals are not supported");
    Type et = yType.getElementType(), i64 = rewriter.getI64Type();
    Value window = hasWindow ? adaptor.getWindow() : Value();
    Value step = scalarI64(rewriter, loc, adaptor.getFrameStep(), elementTypeOf(op.getFrameStep()));
    // The frame length: the window's, else the run-time frame_length,
    // clamped to [1, samples].
    Value len = hasWindow
                    ? scalarConstant(rewriter, loc, i64,
                                     cast<RankedTensorType>(window.getType()).getDimSize(0))
                    : scalarI64(rewriter, loc, adaptor.getFrameLength(),
                                elementTypeOf(op.getFrameLength()));
    len = arith::MaxSIOp::create(rewriter, loc, len, scalarConstant(rewriter, loc, i64, 1));
    len = arith::MinSIOp::create(rewriter, loc, len, scalarConstant(rewriter, loc, i64, samples));
    Value y = generateTensor(rewriter, loc, yType, [&](OpBuilder &b, Location l) -> Value {
      Value bi = linalg::IndexOp::create(b, l, 0), f = linalg::IndexOp::create(b, l, 1);
      Value k = linalg::IndexOp::create(b, l, 2), c = linalg::IndexOp::create(b, l, 3);
      Value start = arith::MulIOp::create(b, l, arith::IndexCastOp::create(b, l, i64, f), step);
      Value kk = arith::IndexCastOp::create(b, l, i64, k);
      Value zero = scalarConstant(b, l, et, 0);
      return forLoop(
          b, l, arith::ConstantIndexOp::create(b, l, 0),
          arith::IndexCastOp::create(b, l, b.getIndexType(), len), ValueRange{zero},
          [&](OpBuilder &nb, Location nl, Value j, ValueRange acc) -> SmallVector<Value> {
            Value jj = arith::IndexCastOp::create(nb, nl, i64, j);
            Value pos = arith::AddIOp::create(nb, nl, start, jj);
            Value inside = arith::AndIOp::create(
                nb, nl,
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, pos,
                                      scalarConstant(nb, nl, i64, 0)),
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, pos,
                                      scalarConstant(nb, nl, i64, samples)));
            Value at = clampedIndex(nb, nl, pos, samples);
            auto read = [&](int64_t comp) -> Value {
              if (comp >= comps)
                return zero;
              Value v = tensor::ExtractOp::create(
                  nb, nl, signal,
                  ValueRange{bi, at, arith::ConstantIndexOp::create(nb, nl, comp)});
              v = arith::SelectOp::create(nb, nl, inside, v, zero);
              if (window)
                v = arith::MulFOp::create(nb, nl, v, tensor::ExtractOp::create(nb, nl, window, j));
              return v;
            };
            Value v = twiddle(nb, nl, read(0), read(1), jj, kk, len, -1, c);
            return {arith::AddFOp::create(nb, nl, acc[0], v)};
          })[0];
    });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateSpectralPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<DFTPattern, STFTPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
