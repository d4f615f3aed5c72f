//===- Pooling.cpp - pooling and Lp norms -> linalg ------------------------===//
//
// Window pooling pads the input (with the lowest value for max, zero for
// average), then reduces every window with a linalg.generic whose window
// dims are bounded by an empty "window" operand, as linalg's named pooling
// ops do. Average pooling divides by a compile-time divisor tensor that
// counts, per output position, the window elements the spec includes
// (with or without padding; never the extra ceil_mode padding). MaxUnpool
// scatters X into zeros at MaxPool's flat indices. The Lp family (LpPool,
// GlobalLpPool, LpNormalization) sums |x|^p and takes the p-th root.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

struct Window {
  SmallVector<int64_t> kernel, strides, dilations, lo, hi, in, out;
};

/// Pads `x` and reduces each window into an [N, C, O...] tensor.
Value poolWindows(OpBuilder &b, Location loc, Value x, const Window &w,
                  RankedTensorType outType, TypedAttr padAndInit,
                  function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  int64_t sp = w.kernel.size();
  SmallVector<int64_t> padLo{0, 0}, padHi{0, 0};
  padLo.append(w.lo);
  padHi.append(w.hi);
  Value padValue = arith::ConstantOp::create(b, loc, padAndInit);
  x = padTensor(b, loc, x, padLo, padHi, padValue);
  Type et = outType.getElementType();
  Value window = tensor::EmptyOp::create(b, loc, w.kernel, et);
  Value init = filledTensor(b, loc, outType, padValue);
  MLIRContext *ctx = b.getContext();
  unsigned nd = 2 + 2 * sp;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Loops: n, c, o..., k...
  SmallVector<AffineExpr> xe{d(0), d(1)}, ke, ye{d(0), d(1)};
  for (int64_t i = 0; i < sp; ++i) {
    AffineExpr o = d(2 + i), k = d(2 + sp + i);
    xe.push_back(o * w.strides[i] + k * w.dilations[i]);
    ke.push_back(k);
    ye.push_back(o);
  }
  SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::parallel);
  for (unsigned i = 2 + sp; i < nd; ++i)
    iters[i] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, outType, ValueRange{x, window}, ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::get(nd, 0, xe, ctx),
                                 AffineMap::get(nd, 0, ke, ctx),
                                 AffineMap::get(nd, 0, ye, ctx)},
             iters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, combine(nb, l, args[2], args[0]));
             })
      .getResult(0);
}

/// MaxPool with its Indices output: the max and the flat index of the
/// first maximum in the unpadded input (row-major, or column-major over
/// the spatial dims with storage_order=1).
std::pair<Value, Value> maxPoolWithIndices(OpBuilder &b, Location loc, Value x,
                                           const Window &w, RankedTensorType outType,
                                           bool columnMajor) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t sp = w.kernel.size();
  Type et = outType.getElementType();
  SmallVector<int64_t> padLo{0, 0}, padHi{0, 0};
  padLo.append(w.lo);
  padHi.append(w.hi);
  Value lowest = arith::ConstantOp::create(b, loc, lowestValue(et, false));
  x = padTensor(b, loc, x, padLo, padHi, lowest);
  Value window = tensor::EmptyOp::create(b, loc, w.kernel, et);
  auto idxType = RankedTensorType::get(outType.getShape(), b.getI64Type());
  Value vals = filledTensor(b, loc, outType, lowest);
  Value idxs = filledTensor(b, loc, idxType,
                            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(-1)));
  MLIRContext *ctx = b.getContext();
  unsigned nd = 2 + 2 * sp;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xe{d(0), d(1)}, ke, ye{d(0), d(1)};
  for (int64_t i = 0; i < sp; ++i) {
    xe.push_back(d(2 + i) * w.strides[i] + d(2 + sp + i) * w.dilations[i]);
    ke.push_back(d(2 + sp + i));
    ye.push_back(d(2 + i));
  }
  SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::parallel);
  for (unsigned i = 2 + sp; i < nd; ++i)
    iters[i] = utils::IteratorType::reduction;
  AffineMap ym = AffineMap::get(nd, 0, ye, ctx);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{outType, idxType}, ValueRange{x, window}, ValueRange{vals, idxs},
      ArrayRef<AffineMap>{AffineMap::get(nd, 0, xe, ctx), AffineMap::get(nd, 0, ke, ctx), ym, ym},
      iters, [&](OpBuilder &nb, Location l, ValueRange a) {
        auto c = [&](int64_t v) {
          return arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(v)).getResult();
        };
        auto at = [&](unsigned dim) {
          return arith::IndexCastOp::create(nb, l, nb.getI64Type(),
                                            linalg::IndexOp::create(nb, l, dim))
              .getResult();
        };
        // Position in the unpadded input, per spatial dim.
        SmallVector<Value> pos;
        for (int64_t i = 0; i < sp; ++i) {
          Value p = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, at(2 + i), c(w.strides[i])),
              arith::MulIOp::create(nb, l, at(2 + sp + i), c(w.dilations[i])));
          pos.push_back(arith::SubIOp::create(nb, l, p, c(w.lo[i])));
        }
        Value flat = arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, at(0), c(xType.getDimSize(1))), at(1));
        for (int64_t k = 0; k < sp; ++k) {
          int64_t i = columnMajor ? sp - 1 - k : k;
          flat = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, flat, c(w.in[i])), pos[i]);
        }
        // Padding never wins; the first tap inside the input does.
        Value inside = arith::ConstantIntOp::create(nb, l, 1, 1);
        for (int64_t i = 0; i < sp; ++i)
          inside = arith::AndIOp::create(
              nb, l, inside,
              arith::AndIOp::create(
                  nb, l, arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, pos[i], c(0)),
                  arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, pos[i], c(w.in[i]))));
        Value better = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, a[0], a[2]);
        Value first = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, a[3], c(0));
        better = arith::AndIOp::create(nb, l, inside, arith::OrIOp::create(nb, l, better, first));
        linalg::YieldOp::create(nb, l,
                                ValueRange{arith::SelectOp::create(nb, l, better, a[0], a[2]),
                                           arith::SelectOp::create(nb, l, better, flat, a[3])});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

template <typename OpTy>
LogicalResult readWindow(OpTy op, RankedTensorType xType,
                         RankedTensorType yType,
                         std::optional<ArrayRef<int64_t>> dilations,
                         Window &w) {
  int64_t sp = xType.getRank() - 2;
  if (sp < 1 || static_cast<int64_t>(op.getKernelShape().size()) != sp)
    return failure();
  w.kernel.assign(op.getKernelShape().begin(), op.getKernelShape().end());
  w.strides = valuesOr(op.getStrides(), sp, 1);
  w.dilations = valuesOr(dilations, sp, 1);
  w.in.assign(xType.getShape().begin() + 2, xType.getShape().end());
  w.out.assign(yType.getShape().begin() + 2, yType.getShape().end());
  if (!resolvePads(op.getAutoPad(), op.getPads(), w.in, w.out, w.kernel, w.strides,
                   w.dilations, w.lo, w.hi))
    return failure();
  // A dynamic dim's last ceil_mode window starts at most stride - 1 past
  // the floor's: pad that much more (the padding never counts).
  if constexpr (std::is_same_v<OpTy, onnx::MaxPoolOp>)
    for (int64_t i = 0; i < sp; ++i)
      if (op.getCeilMode() && ShapedType::isDynamic(w.in[i]))
        w.hi[i] += w.strides[i] - 1;
  return success();
}

struct MaxPoolPattern : public OpConversionPattern<onnx::MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem) && !isSupportedInt(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    bool wantIndices =
        !isa<NoneType>(op.getIndices().getType()) && !op.getIndices().use_empty();
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    Window w;
    if (failed(readWindow(op, xType, yType, op.getDilations(), w)))
      return unsupported(rewriter, op,
                         xType.hasStaticShape()
                             ? "kernel_shape does not match the input rank"
                             : "auto_pad SAME with a dynamic spatial dim is not supported yet");
    if (wantIndices) {
      if (!isSupportedFloat(elem))
        return unsupported(rewriter, op, "the Indices output needs a float input");
      if (!xType.hasStaticShape())
        return unsupported(rewriter, op,
                           "the Indices output with a dynamic dim is not supported yet");
      auto [y, idx] = maxPoolWithIndices(rewriter, op.getLoc(), adaptor.getX(), w, yType,
                                         op.getStorageOrder() != 0);
      rewriter.replaceOp(op, ValueRange{y, idx});
      return success();
    }
    bool isUnsigned = elem.isUnsignedInteger();
    Value y = poolWindows(
        rewriter, op.getLoc(), adaptor.getX(), w, yType,
        lowestValue(yType.getElementType(), isUnsigned),
        [&](OpBuilder &b, Location l, Value acc, Value v) -> Value {
          if (isa<FloatType>(acc.getType()))
            return arith::MaximumFOp::create(b, l, acc, v);
          if (isUnsigned)
            return arith::MaxUIOp::create(b, l, acc, v);
          return arith::MaxSIOp::create(b, l, acc, v);
        });
    Value none = onnx::NoValueOp::create(rewriter, op.getLoc(),
                                         rewriter.getNoneType());
    rewriter.replaceOp(op, ValueRange{y, none});
    return success();
  }
};

struct AveragePoolPattern : public OpConversionPattern<onnx::AveragePoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::AveragePoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    Window w;
    if (failed(readWindow(op, xType, yType, std::nullopt, w)))
      return unsupported(rewriter, op,
                         xType.hasStaticShape()
                             ? "kernel_shape does not match the input rank"
                             : "auto_pad SAME with a dynamic spatial dim is not supported yet");
    bool includePad = op.getCountIncludePad() != 0;
    int64_t sp = w.kernel.size();
    SmallVector<int64_t> stated = valuesOr(op.getPads(), 2 * sp, 0);
    bool padded = llvm::any_of(stated, [](int64_t p) { return p != 0; });
    // Over a dynamic dim every window counts the whole kernel: so it does
    // without ceil_mode (no window reaches past the stated pads) when
    // the pads count or there are none.
    if (!xType.hasStaticShape() && (op.getCeilMode() || (padded && !includePad)))
      return unsupported(rewriter, op,
                         "over a dynamic dim, only without ceil_mode and with "
                         "count_include_pad=1 or no pads (the divisor is then the kernel's "
                         "size) for now");
    Type et = yType.getElementType();
    Value sum = poolWindows(
        rewriter, loc, adaptor.getX(), w, yType,
        cast<TypedAttr>(rewriter.getFloatAttr(et, 0.0)),
        [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
          return arith::AddFOp::create(b, l, acc, v);
        });
    if (!xType.hasStaticShape()) {
      double count = 1;
      for (int64_t k : w.kernel)
        count *= k;
      rewriter.replaceOp(op, broadcastGeneric(rewriter, loc, ValueRange{sum}, yType,
                                              [&](OpBuilder &b, Location l, ValueRange a) {
                                                return arith::DivFOp::create(
                                                    b, l, a[0], scalarConstant(b, l, et, count))
                                                    .getResult();
                                              }));
      return success();
    }
    // The divisor is separable: the product of per-dim counts. With
    // count_include_pad, the stated (or auto) pads count, the extra padding
    // a ceil_mode window reaches into does not.
    SmallVector<SmallVector<int64_t>> perDim;
    bool autoPad = op.getAutoPad() == "SAME_UPPER" || op.getAutoPad() == "SAME_LOWER";
    for (int64_t i = 0; i < sp; ++i) {
      int64_t statedEnd = autoPad ? w.hi[i] : stated[i + sp];
      SmallVector<int64_t> counts;
      // Window o covers input positions [start, start + kernel); those
      // counted lie in [0, in) or, with the pads, [-lo, in + statedEnd).
      int64_t lowest = includePad ? -w.lo[i] : 0;
      int64_t end = includePad ? w.in[i] + statedEnd : w.in[i];
      for (int64_t o = 0; o < w.out[i]; ++o) {
        int64_t start = o * w.strides[i] - w.lo[i];
        int64_t count = std::min(start + w.kernel[i], end) - std::max(start, lowest);
        counts.push_back(std::max<int64_t>(count, 1));
      }
      perDim.push_back(std::move(counts));
    }
    SmallVector<int64_t> outSpatial(w.out);
    int64_t total = 1;
    for (int64_t d : outSpatial)
      total *= d;
    SmallVector<double> divisor(total, 1.0);
    for (int64_t flat = 0; flat < total; ++flat) {
      int64_t rem = flat;
      double value = 1;
      for (int64_t i = sp - 1; i >= 0; --i) {
        value *= perDim[i][rem % w.out[i]];
        rem /= w.out[i];
      }
      divisor[flat] = value;
    }
    SmallVector<int64_t> divShape{1, 1};
    divShape.append(outSpatial);
    auto divType = RankedTensorType::get(divShape, et);
    DenseElementsAttr divAttr;
    if (et.isF32()) {
      SmallVector<float> f(divisor.begin(), divisor.end());
      divAttr = DenseElementsAttr::get(divType, ArrayRef<float>(f));
    } else {
      divAttr = DenseElementsAttr::get(divType, ArrayRef<double>(divisor));
    }
    Value div = arith::ConstantOp::create(rewriter, loc, divAttr);
    Value y = broadcastGeneric(rewriter, loc, ValueRange{sum, div}, yType,
                               [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 return arith::DivFOp::create(b, l, a[0], a[1]);
                               });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// MaxUnpool: a zero tensor of the result's (static) shape with every X
/// written where I (MaxPool's flat Indices) says, in an scf.for over X.
/// Indices count in the default output shape ((in - 1) * stride + kernel -
/// pads); an explicit output_shape keeps those coordinates (the reference's
/// behaviour), and a coordinate outside the output is not written.
struct MaxUnpoolPattern : public OpConversionPattern<onnx::MaxUnpoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::MaxUnpoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem) && !isSupportedInt(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    auto iType = cast<RankedTensorType>(adaptor.getI().getType());
    if (xType.getShape() != iType.getShape())
      return unsupported(rewriter, op, "X and I must have the same shape");
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    int64_t n = xType.getNumElements(), total = yType.getNumElements();
    if (total == 0)
      return unsupported(rewriter, op, "empty outputs are not supported");
    Type et = yType.getElementType();
    int64_t sp = xType.getRank() - 2;
    ArrayRef<int64_t> kernel = op.getKernelShape();
    if (sp < 1 || int64_t(kernel.size()) != sp || yType.getRank() != xType.getRank())
      return unsupported(rewriter, op, "kernel_shape must give every spatial dim");
    SmallVector<int64_t> strides = valuesOr(op.getStrides(), sp, 1);
    SmallVector<int64_t> pads = valuesOr(op.getPads(), 2 * sp, 0);
    SmallVector<int64_t> base{xType.getDimSize(0), xType.getDimSize(1)};
    for (int64_t d = 0; d < sp; ++d)
      base.push_back((xType.getDimSize(2 + d) - 1) * strides[d] + kernel[d] - pads[d] -
                     pads[sp + d]);
    int64_t baseTotal = 1;
    for (int64_t v : base)
      baseTotal *= std::max<int64_t>(v, 1);
    Value x = reshapeTensor(rewriter, loc, adaptor.getX(), RankedTensorType::get({n}, et));
    Value idx = reshapeTensor(rewriter, loc, adaptor.getI(),
                              RankedTensorType::get({n}, iType.getElementType()));
    auto flatType = RankedTensorType::get({total}, et);
    Value y = filledTensor(rewriter, loc, flatType, scalarConstant(rewriter, loc, et, 0));
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, c0, arith::ConstantIndexOp::create(rewriter, loc, n), c1, ValueRange{y},
        [&](OpBuilder &b, Location l, Value i, ValueRange acc) {
          Value flat = clampedIndex(b, l, tensor::ExtractOp::create(b, l, idx, i), baseTotal);
          // Coordinates in the default shape, re-linearised in the output's.
          Value at = arith::ConstantIndexOp::create(b, l, 0);
          Value inside = arith::ConstantIntOp::create(b, l, 1, 1);
          Value stride = arith::ConstantIndexOp::create(b, l, 1);
          for (int64_t d = int64_t(base.size()) - 1; d >= 0; --d) {
            Value size = arith::ConstantIndexOp::create(b, l, std::max<int64_t>(base[d], 1));
            Value coord = arith::RemUIOp::create(b, l, flat, size);
            flat = arith::DivUIOp::create(b, l, flat, size);
            Value dim = arith::ConstantIndexOp::create(b, l, yType.getDimSize(d));
            inside = arith::AndIOp::create(
                b, l, inside, arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, coord, dim));
            at = arith::AddIOp::create(b, l, at, arith::MulIOp::create(b, l, coord, stride));
            stride = arith::MulIOp::create(b, l, stride, dim);
          }
          Value v = tensor::ExtractOp::create(b, l, x, i);
          auto write = scf::IfOp::create(
              b, l, inside,
              [&](OpBuilder &tb, Location tl) {
                scf::YieldOp::create(tb, tl, Value(tensor::InsertOp::create(tb, tl, v, acc[0], at)));
              },
              [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, acc[0]); });
          scf::YieldOp::create(b, l, write.getResults());
        });
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, loop.getResult(0), yType));
    return success();
  }
};

/// |x|^p (p = 1 and 2 without pow).
Value absPow(OpBuilder &b, Location l, Value x, int64_t p) {
  if (p == 2)
    return arith::MulFOp::create(b, l, x, x);
  Value a = math::AbsFOp::create(b, l, x);
  if (p == 1)
    return a;
  return math::PowFOp::create(b, l, a, scalarConstant(b, l, x.getType(), double(p)));
}

/// s^(1/p).
Value rootOf(OpBuilder &b, Location l, Value s, int64_t p) {
  if (p == 1)
    return s;
  if (p == 2)
    return math::SqrtOp::create(b, l, s);
  return math::PowFOp::create(b, l, s, scalarConstant(b, l, s.getType(), 1.0 / double(p)));
}

/// The map of every element of `type` through `fn` (one generic).
Value mapTensor(OpBuilder &b, Location l, Value v,
                function_ref<Value(OpBuilder &, Location, Value)> fn) {
  auto type = cast<RankedTensorType>(v.getType());
  return broadcastGeneric(b, l, ValueRange{v}, type,
                          [&](OpBuilder &nb, Location nl, ValueRange a) { return fn(nb, nl, a[0]); });
}

/// LpPool: (sum over the window of |x|^p)^(1/p), padding counting zero.
struct LpPoolPattern : public OpConversionPattern<onnx::LpPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::LpPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    int64_t p = op.getP();
    if (p < 1)
      return unsupported(rewriter, op, "p must be at least 1");
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    Window w;
    if (failed(readWindow(op, xType, yType, std::nullopt, w)))
      return unsupported(rewriter, op, "kernel_shape does not match the input rank");
    Type et = yType.getElementType();
    Value sum = poolWindows(rewriter, loc, adaptor.getX(), w, yType,
                            cast<TypedAttr>(rewriter.getFloatAttr(et, 0.0)),
                            [&](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                              return arith::AddFOp::create(b, l, acc, absPow(b, l, v, p));
                            });
    rewriter.replaceOp(op, mapTensor(rewriter, loc, sum, [&](OpBuilder &b, Location l, Value s) {
                         return rootOf(b, l, s, p);
                       }));
    return success();
  }
};

/// GlobalLpPool: the p-norm over every spatial dim (kept as size 1).
struct GlobalLpPoolPattern : public OpConversionPattern<onnx::GlobalLpPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GlobalLpPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    int64_t p = op.getP();
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    if (p < 1 || xType.getRank() < 3)
      return unsupported(rewriter, op, "p must be at least 1 and X have spatial dims");
    SmallVector<bool> reduce(xType.getRank(), true);
    reduce[0] = reduce[1] = false;
    Type et = xType.getElementType();
    Value sum = reduceKeepDims(
        rewriter, loc, adaptor.getX(), reduce, rewriter.getFloatAttr(et, 0.0),
        [](OpBuilder &b, Location l, Value acc, Value x) -> Value {
          return arith::AddFOp::create(b, l, acc, x);
        },
        [&](OpBuilder &b, Location l, Value x) { return absPow(b, l, x, p); });
    Value y = mapTensor(rewriter, loc, sum,
                        [&](OpBuilder &b, Location l, Value s) { return rootOf(b, l, s, p); });
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, y, convertedResultType(*typeConverter, op)));
    return success();
  }
};

/// LpNormalization: x / ||x||_p along `axis`.
struct LpNormalizationPattern : public OpConversionPattern<onnx::LpNormalizationOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::LpNormalizationOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getInput());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    int64_t p = op.getP();
    if (p != 1 && p != 2)
      return unsupported(rewriter, op, "p must be 1 or 2");
    Value x = adaptor.getInput();
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return unsupported(rewriter, op, "axis out of range");
    SmallVector<bool> reduce(rank, false);
    reduce[axis] = true;
    Type et = xType.getElementType();
    Value sum = reduceKeepDims(
        rewriter, loc, x, reduce, rewriter.getFloatAttr(et, 0.0),
        [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
          return arith::AddFOp::create(b, l, acc, v);
        },
        [&](OpBuilder &b, Location l, Value v) { return absPow(b, l, v, p); });
    Value y = broadcastGeneric(rewriter, loc, ValueRange{x, sum}, xType,
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 return arith::DivFOp::create(b, l, a[0], rootOf(b, l, a[1], p));
                               });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populatePoolingPatterns(const TypeConverter &converter,
                             RewritePatternSet &patterns) {
  patterns.add<MaxPoolPattern, AveragePoolPattern, MaxUnpoolPattern, LpPoolPattern,
               GlobalLpPoolPattern, LpNormalizationPattern>(converter,
                                                   patterns.getContext());
}
} // namespace kiln::lowering
