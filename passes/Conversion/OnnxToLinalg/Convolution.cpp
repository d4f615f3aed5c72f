//===- Convolution.cpp - Conv and ConvTranspose -> linalg.generic ----------===//
//
// A convolution is one linalg.generic over [N, G, Mg, O...] that
// accumulates x * w into the bias (or zeros), the channel dims expanded
// into [groups, channels per group] so that every indexing map stays a
// projected permutation plus strided window terms (o * stride + k *
// dilation). Special forms: 1x1 stride-1 convs over one flat spatial dim,
// stride-1 convs over dynamic dims over the padded input's flat rows,
// Winograd F(2x2, 3x3) or F(4x4, 3x3) where it fits (Winograd.cpp).
// ConvTranspose is a convolution of the input spread out by the strides.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"
#include "passes/Utils/ElementsData.h"

#include <cstring>

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

/// A conv's output size along a dim of input size `in` (padded):
/// (in - ((kernel - 1) * dilation + 1)) / stride + 1, floored.
static Value convOutputSize(OpBuilder &b, Location loc, Value in, int64_t kernel,
                            int64_t stride, int64_t dilation) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value rest = arith::SubIOp::create(b, loc, in, cst((kernel - 1) * dilation + 1));
  return arith::AddIOp::create(b, loc, arith::FloorDivSIOp::create(b, loc, rest, cst(stride)),
                               cst(1));
}

/// N-D grouped convolution of x [N, C, S...] (already padded) with
/// w [M, C/g, K...], plus an optional bias [M], into yType [N, M, O...].
Value kiln::lowering::buildConv(OpBuilder &b, Location loc, Value x, Value w, Value bias,
                int64_t g, ArrayRef<int64_t> strides,
                ArrayRef<int64_t> dilations, RankedTensorType yType) {
  auto xp = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t sp = xp.getRank() - 2;
  int64_t n = xp.getDimSize(0), c = xp.getDimSize(1), m = wType.getDimSize(0);
  // A 1x1 convolution with stride 1 over its whole input is a matmul per
  // image: one flat spatial dim gives the kernels one long contiguous row
  // instead of short ones (a 7x7 map: 49 columns, not 7).
  if (sp > 1 && xp.hasStaticShape() &&
      llvm::all_of(wType.getShape().drop_front(2), [](int64_t k) { return k == 1; }) &&
      llvm::all_of(strides, [](int64_t s) { return s == 1; }) &&
      xp.getShape().drop_front(2) == yType.getShape().drop_front(2)) {
    int64_t size = 1;
    for (int64_t d : xp.getShape().drop_front(2))
      size *= d;
    Type et = xp.getElementType();
    Value x1 = reshapeTensor(b, loc, x, RankedTensorType::get({n, c, size}, et));
    Value w1 = reshapeTensor(
        b, loc, w, RankedTensorType::get({m, wType.getDimSize(1), 1}, et));
    Value y1 = buildConv(b, loc, x1, w1, bias, g, {1}, {1},
                         RankedTensorType::get({n, m, size}, et));
    return reshapeTensor(b, loc, y1, yType);
  }
  // The same with dynamic spatial dims: their product is one dynamic dim
  // of the flat conv, which the windows of kiln-strip-dynamic-dims cut as
  // they cut a sequence (long rows, not windows of a map).
  if (sp > 1 && !xp.hasStaticShape() && xp.getDimSize(0) != ShapedType::kDynamic &&
      llvm::all_of(wType.getShape().drop_front(2), [](int64_t k) { return k == 1; }) &&
      llvm::all_of(strides, [](int64_t s) { return s == 1; }) &&
      xp.getShape().drop_front(2) == yType.getShape().drop_front(2)) {
    Type et = xp.getElementType();
    SmallVector<ReassociationIndices> flat{{0}, {1}, {}};
    for (int64_t i = 0; i < sp; ++i)
      flat.back().push_back(2 + i);
    Value x1 = tensor::CollapseShapeOp::create(b, loc, x, flat);
    Value w1 = reshapeTensor(
        b, loc, w, RankedTensorType::get({m, wType.getDimSize(1), 1}, et));
    Value y1 = buildConv(b, loc, x1, w1, bias, g, {1}, {1},
                         RankedTensorType::get({n, m, ShapedType::kDynamic}, et));
    SmallVector<OpFoldResult> shape{b.getIndexAttr(n), b.getIndexAttr(m)};
    for (int64_t i = 0; i < sp; ++i)
      shape.push_back(tensor::getMixedSize(b, loc, x, 2 + i));
    return tensor::ExpandShapeOp::create(b, loc, yType, y1, flat, shape);
  }
  // A 2-D stride-1 conv over dynamic dims, as the 1x1 one, over flat rows:
  // output pixel p = oh * Wp + ow of the padded input's row length Wp
  // reads input kh * Wp + p + kw, so with the input stacked KH times, row
  // kh starting at kh * Wp (no copy in the end: kiln-view-row-stacks reads
  // the stack as one view of the input whose rows overlap), it is a conv
  // over [KH, L] with one output row of P = OH * Wp - (KW - 1) positions
  // (OH * Wp with an extra row of padding, below). The KW - 1 positions at the end
  // of each row but the last are the next row's start: computed, then
  // dropped with the row tails when the [OH, Wp] output is sliced to
  // [OH, OW].
  if (sp == 2 && xp.isDynamicDim(2) && xp.isDynamicDim(3) && yType.isDynamicDim(2) &&
      yType.isDynamicDim(3) && xp.getDimSize(0) != ShapedType::kDynamic &&
      llvm::all_of(strides, [](int64_t s) { return s == 1; }) &&
      llvm::all_of(dilations, [](int64_t d) { return d == 1; }) &&
      xp.getDimSize(1) != ShapedType::kDynamic) {
    Type et = xp.getElementType();
    int64_t kh = wType.getDimSize(2), kw = wType.getDimSize(3);
    auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
    auto dimOf = [&](int64_t i) { return dimValue(b, loc, x, i); };
    auto ones = [&](int64_t count) {
      return SmallVector<OpFoldResult>(count, b.getIndexAttr(1));
    };
    // When x is a pad (the conv's own), one more row of it below lets the
    // last row run KW - 1 positions further, into that row: the conv then
    // writes all OH * Wp positions, which are the [OH, Wp] grid with no
    // copy into one. The pad is made again with that row (not one that
    // something else reads too, which would then be made twice).
    auto pad = x.getDefiningOp<tensor::PadOp>();
    Value padValue = pad && (pad->use_empty() || pad->hasOneUse()) ? pad.getConstantPaddingValue()
                                                                   : Value();
    bool extraRow = padValue && kw > 1 && pad.getLow().empty() && pad.getHigh().empty();
    if (extraRow) {
      SmallVector<int64_t> high(pad.getStaticHigh());
      ++high[2];
      x = padTensor(b, loc, pad.getSource(), pad.getStaticLow(), high, padValue);
    }
    Value hp = dimOf(2), wp = dimOf(3);
    if (extraRow)
      hp = arith::SubIOp::create(b, loc, hp, cst(1));
    Value oh = arith::SubIOp::create(b, loc, hp, cst(kh - 1));
    Value ow = arith::SubIOp::create(b, loc, wp, cst(kw - 1));
    Value full = arith::MulIOp::create(b, loc, oh, wp);
    Value length = extraRow ? arith::AddIOp::create(b, loc, full, cst(kw - 1)).getResult() : full;
    Value flatX = tensor::CollapseShapeOp::create(
        b, loc, x, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    auto dyn = ShapedType::kDynamic;
    Value stack = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{n, c, kh, dyn}, et,
                                          ValueRange{length});
    for (int64_t r = 0; r < kh; ++r) {
      Value offset = arith::MulIOp::create(b, loc, cst(r), wp);
      Value row = tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get({n, c, dyn}, et), flatX,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0), offset},
          ArrayRef<OpFoldResult>{b.getIndexAttr(n), b.getIndexAttr(c), length}, ones(3));
      stack = tensor::InsertSliceOp::create(
          b, loc, row, stack,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(r),
                                 b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(n), b.getIndexAttr(c), b.getIndexAttr(1), length},
          ones(4));
    }
    Value rows = buildConv(b, loc, stack, w, bias, g, {1, 1}, {1, 1},
                           RankedTensorType::get({n, m, 1, dyn}, et));
    // Into [N, M, OH * Wp] (without the extra row, the last row's tail is
    // never written nor read), seen as [N, M, OH, Wp], sliced to
    // [N, M, OH, OW].
    Value whole = tensor::CollapseShapeOp::create(
        b, loc, rows, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    if (!extraRow) {
      Value positions = arith::SubIOp::create(b, loc, full, cst(kw - 1));
      whole = tensor::InsertSliceOp::create(
          b, loc, whole,
          tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{n, m, dyn}, et, ValueRange{full}),
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(n), b.getIndexAttr(m), positions}, ones(3));
    }
    Value grid = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({n, m, dyn, dyn}, et), whole,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}},
        ArrayRef<OpFoldResult>{b.getIndexAttr(n), b.getIndexAttr(m), oh, wp});
    return tensor::ExtractSliceOp::create(
        b, loc, yType, grid,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(0),
                               b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(n), b.getIndexAttr(m), oh, ow}, ones(4));
  }
  // A 2-D strided conv over dynamic dims, as a 1x1 conv over flat pixels
  // of the input's windows (im2col): row (c, kh, kw) of the stack is the
  // input at rows kh * dh + sh * oh and columns kw * dw + sw * ow, so that
  // the weight [M, Cg, KH, KW] is, as it is, [M, Cg * KH * KW, 1]. Over
  // windows of the output map the kernels would take pieces one or two
  // pixels wide (a 7x7 map: nine); here they take one long row. Not for
  // depthwise convs (one input channel per group) nor others whose
  // contraction per output is shorter than a vector: their windows cost
  // less than the copy (efficientnet_b0's 5x5 depthwise ones 5% more).
  if (sp == 2 && !xp.hasStaticShape() && !xp.isDynamicDim(0) && !xp.isDynamicDim(1) &&
      llvm::any_of(strides, [](int64_t s) { return s > 1; }) && wType.getDimSize(1) > 1 &&
      wType.getDimSize(1) * wType.getDimSize(2) * wType.getDimSize(3) >= 16) {
    Type et = xp.getElementType();
    int64_t kh = wType.getDimSize(2), kw = wType.getDimSize(3), taps = kh * kw;
    auto dyn = ShapedType::kDynamic;
    SmallVector<OpFoldResult> outSize;
    for (int64_t i = 0; i < sp; ++i) {
      if (!yType.isDynamicDim(2 + i)) {
        outSize.push_back(b.getIndexAttr(yType.getDimSize(2 + i)));
        continue;
      }
      Value in = dimValue(b, loc, x, 2 + i);
      outSize.push_back(convOutputSize(b, loc, in, wType.getDimSize(2 + i), strides[i],
                                       dilations[i]));
    }
    SmallVector<int64_t> mapShape(yType.getShape().drop_front(2));
    SmallVector<Value> dynSizes;
    for (OpFoldResult s : outSize)
      if (auto v = dyn_cast<Value>(s))
        dynSizes.push_back(v);
    // One copy: [N, C, KH, KW, OH, OW] reading x through the windows' map.
    MLIRContext *ctx = b.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    Value stack = copyThroughMap(
        b, loc, x,
        AffineMap::get(6, 0,
                       {d(0), d(1), d(2) * dilations[0] + d(4) * strides[0],
                        d(3) * dilations[1] + d(5) * strides[1]},
                       ctx),
        RankedTensorType::get({n, c, kh, kw, mapShape[0], mapShape[1]}, et), dynSizes);
    int64_t pixels = ShapedType::isDynamic(mapShape[0]) || ShapedType::isDynamic(mapShape[1])
                         ? dyn
                         : mapShape[0] * mapShape[1];
    Value cols = tensor::CollapseShapeOp::create(
        b, loc, stack, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
    Value w1 = reshapeTensor(
        b, loc, w, RankedTensorType::get({m, wType.getDimSize(1) * taps, 1}, et));
    Value y1 = buildConv(b, loc, cols, w1, bias, g, {1}, {1},
                         RankedTensorType::get({n, m, pixels}, et));
    return tensor::ExpandShapeOp::create(
        b, loc, yType, y1, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}},
        ArrayRef<OpFoldResult>{b.getIndexAttr(n), b.getIndexAttr(m), outSize[0], outSize[1]});
  }
  int64_t cg = c / g, mg = m / g;
  Type et = xp.getElementType();
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  SmallVector<int64_t> out(yType.getShape().drop_front(2));
  // [N, C, S...] -> [N, G, Cg, S...]; [M, Cg, K...] -> [G, Mg, Cg, K...].
  SmallVector<int64_t> xs{n, g, cg};
  xs.append(xp.getShape().begin() + 2, xp.getShape().end());
  SmallVector<ReassociationIndices> xr{{0}, {1, 2}};
  for (int64_t i = 0; i < sp; ++i)
    xr.push_back({3 + i});
  x = tensor::ExpandShapeOp::create(b, loc, xp.clone(xs), x, xr);
  SmallVector<int64_t> ws{g, mg, cg};
  ws.append(kernel);
  SmallVector<ReassociationIndices> wr{{0, 1}, {2}};
  for (int64_t i = 0; i < sp; ++i)
    wr.push_back({3 + i});
  w = tensor::ExpandShapeOp::create(b, loc, wType.clone(ws), w, wr);
  SmallVector<int64_t> ys{n, g, mg};
  ys.append(out);
  auto y5Type = RankedTensorType::get(ys, et);

  // Init: the bias broadcast over [N, G, Mg, O...], or zeros. With dynamic
  // output dims it is made as [N, M, O...] and expanded, each dynamic
  // output size computed from the padded input's: (in - effective) /
  // stride + 1.
  Value init;
  if (!yType.hasStaticShape()) {
    SmallVector<Value> sizes;
    if (yType.isDynamicDim(0)) // A symbolic batch: the input's.
      sizes.push_back(tensor::DimOp::create(b, loc, x, 0));
    for (int64_t i = 0; i < sp; ++i) {
      if (!yType.isDynamicDim(2 + i))
        continue;
      sizes.push_back(convOutputSize(b, loc, tensor::DimOp::create(b, loc, x, 3 + i),
                                     kernel[i], strides[i], dilations[i]));
    }
    Value empty = emptyTensor(b, loc, yType, sizes);
    if (bias) {
      SmallVector<int64_t> bs(yType.getRank(), 1);
      bs[1] = m;
      init = linalg::GenericOp::create(
                 b, loc, yType, ValueRange{reshapeTensor(b, loc, bias, RankedTensorType::get(bs, et))},
                 ValueRange{empty},
                 ArrayRef<AffineMap>{broadcastMap(b.getContext(), bs, yType.getShape()),
                                     b.getMultiDimIdentityMap(yType.getRank())},
                 SmallVector<utils::IteratorType>(yType.getRank(), utils::IteratorType::parallel),
                 [](OpBuilder &nb, Location l, ValueRange args) {
                   linalg::YieldOp::create(nb, l, args[0]);
                 })
                 .getResult(0);
    } else {
      init = linalg::FillOp::create(b, loc, scalarConstant(b, loc, et, 0), empty).getResult(0);
    }
    SmallVector<ReassociationIndices> yr{{0}, {1, 2}};
    for (int64_t i = 0; i < sp; ++i)
      yr.push_back({3 + i});
    init = tensor::ExpandShapeOp::create(b, loc, y5Type, init, yr);
  } else if (bias) {
    Value bb = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({g, mg}, et), bias,
        ArrayRef<ReassociationIndices>{{0, 1}});
    SmallVector<int64_t> bs{1, g, mg};
    bs.append(sp, 1);
    bb = reshapeTensor(b, loc, bb, RankedTensorType::get(bs, et));
    init = broadcastGeneric(b, loc, ValueRange{bb}, y5Type,
                            [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  } else {
    init = filledTensor(b, loc, y5Type, scalarConstant(b, loc, et, 0));
  }

  // Loops: n, g, mg, cg, k..., o...
  MLIRContext *ctx = b.getContext();
  unsigned nd = 4 + 2 * sp;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xe{d(0), d(1), d(3)}, we{d(1), d(2), d(3)},
      ye{d(0), d(1), d(2)};
  for (int64_t i = 0; i < sp; ++i) {
    AffineExpr k = d(4 + i), o = d(4 + sp + i);
    xe.push_back(o * strides[i] + k * dilations[i]);
    we.push_back(k);
    ye.push_back(o);
  }
  SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::parallel);
  for (unsigned i = 3; i < 4 + sp; ++i)
    iters[i] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, y5Type, ValueRange{x, w}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::get(nd, 0, xe, ctx),
                          AffineMap::get(nd, 0, we, ctx),
                          AffineMap::get(nd, 0, ye, ctx)},
      iters, [](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, multiplyAdd(nb, l, args[2], args[0], args[1]));
      });
  SmallVector<ReassociationIndices> yr{{0}, {1, 2}};
  for (int64_t i = 0; i < sp; ++i)
    yr.push_back({3 + i});
  return tensor::CollapseShapeOp::create(b, loc, yType, generic.getResult(0), yr);
}

namespace {

/// N-D grouped convolution with strides, dilations and padding.
struct ConvPattern : public OpConversionPattern<onnx::ConvOp> {
  ConvPattern(const TypeConverter &converter, MLIRContext *ctx, bool winograd)
      : OpConversionPattern(converter, ctx), winograd(winograd) {}

  LogicalResult
  matchAndRewrite(onnx::ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op,
                         "element type " + typeName(elem) + " is not supported yet");
    Value bias = isa<NoneType>(op.getB().getType()) ? Value() : adaptor.getB();
    ConvAttrs attrs{op.getGroup(), op.getAutoPad(), op.getPads(), op.getStrides(),
                    op.getDilations()};
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    if (winograd) {
      // A Relu that is the conv's only user goes into the output
      // transform: the four parities then write the activation directly,
      // instead of a separate pass over the output.
      onnx::ReluOp relu;
      if (op->hasOneUse())
        relu = dyn_cast<onnx::ReluOp>(*op->getUsers().begin());
      if (relu && relu.getType() != op.getType())
        relu = nullptr;
      if (std::optional<Value> y =
              tryWinograd(rewriter, op, adaptor.getX(), bias, attrs, yType, bool(relu))) {
        if (relu)
          rewriter.replaceOp(relu, *y);
        rewriter.replaceOp(op, *y);
        return success();
      }
    }
    std::string why;
    FailureOr<Value> y = buildConvWithAttrs(rewriter, op.getLoc(), adaptor.getX(),
                                            adaptor.getW(), bias, attrs, yType, why);
    if (failed(y))
      return unsupported(rewriter, op, why);
    rewriter.replaceOp(op, *y);
    return success();
  }

private:
  /// The conv as Winograd where it fits and its weights are a constant.
  static std::optional<Value> tryWinograd(OpBuilder &b, onnx::ConvOp op, Value x, Value bias,
                                          const ConvAttrs &attrs, RankedTensorType yType,
                                          bool relu) {
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    auto constant = op.getW().getDefiningOp<onnx::ConstantOp>();
    ElementsAttr value = constant ? constant.getValueAttr() : ElementsAttr();
    auto wType = value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
    if (!xType || !wType || xType.getRank() != 4 || wType.getRank() != 4)
      return std::nullopt;
    SmallVector<int64_t> strides = valuesOr(attrs.strides, 2, 1);
    SmallVector<int64_t> dilations = valuesOr(attrs.dilations, 2, 1);
    if (!winogradFits(xType, wType, yType, attrs.group, strides, dilations) ||
        wType.getDimSize(1) != xType.getDimSize(1) || yType.getDimSize(1) != wType.getDimSize(0) ||
        yType.getDimSize(0) != xType.getDimSize(0))
      return std::nullopt;
    std::vector<float> weights(wType.getNumElements());
    auto dense = dyn_cast<DenseElementsAttr>(value);
    if (dense && dense.isSplat()) {
      std::fill(weights.begin(), weights.end(), dense.getSplatValue<float>());
    } else {
      std::optional<ArrayRef<char>> raw = kiln::rawElementData(value);
      if (!raw || raw->size() != weights.size() * sizeof(float))
        return std::nullopt;
      std::memcpy(weights.data(), raw->data(), raw->size());
    }
    SmallVector<int64_t> lo, hi;
    resolvePads(attrs.autoPad, attrs.pads, xType.getShape().drop_front(2),
                yType.getShape().drop_front(2), {3, 3}, strides, dilations, lo, hi);
    // The output is the window count of the padded input.
    for (int d = 0; d < 2; ++d)
      if (lo[d] < 0 || hi[d] < 0 ||
          xType.getDimSize(2 + d) + lo[d] + hi[d] - 2 != yType.getDimSize(2 + d))
        return std::nullopt;
    return buildWinogradConv(b, op.getLoc(), x, weights, bias, lo, yType, relu);
  }

  bool winograd;
};

/// ConvTranspose as a convolution: the input spread out by the strides
/// (zeros between elements), padded by (k - 1) * d minus the pads, then
/// convolved with the spatially flipped kernel whose in/out channels are
/// swapped within each group.
struct ConvTransposePattern : public OpConversionPattern<onnx::ConvTransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ConvTransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op,
                         "element type " + typeName(elem) + " is not supported yet");
    auto xType = cast<RankedTensorType>(adaptor.getX().getType());
    auto wType = cast<RankedTensorType>(adaptor.getW().getType());
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    int64_t rank = xType.getRank(), sp = rank - 2;
    if (sp < 1 || wType.getRank() != rank)
      return unsupported(rewriter, op, "input and weight ranks differ");
    if (!wType.hasStaticShape() || xType.isDynamicDim(0) || xType.isDynamicDim(1))
      return unsupported(rewriter, op,
                         "a weight, batch or channel dim whose size is known only at run time "
                         "is not supported");
    int64_t n = xType.getDimSize(0), c = xType.getDimSize(1), g = op.getGroup();
    if (g < 1 || c % g != 0 || wType.getDimSize(0) != c)
      return unsupported(rewriter, op, "group does not divide channels");
    int64_t cg = c / g, mg = wType.getDimSize(1), m = mg * g;
    if (yType.getDimSize(1) != m)
      return unsupported(rewriter, op, "output channels do not match the weight");
    SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
    SmallVector<int64_t> strides = valuesOr(op.getStrides(), sp, 1);
    SmallVector<int64_t> dilations = valuesOr(op.getDilations(), sp, 1);
    SmallVector<int64_t> outPad = valuesOr(op.getOutputPadding(), sp, 0);
    Type et = xType.getElementType();
    // Pads: explicit, or from the output size (output_shape or auto_pad).
    StringRef autoPad = op.getAutoPad();
    bool fromOutput = op.getOutputShape().has_value() || autoPad == "SAME_UPPER" ||
                      autoPad == "SAME_LOWER";
    SmallVector<int64_t> explicitPads = valuesOr(op.getPads(), 2 * sp, 0);
    bool dynamic = !xType.hasStaticShape();
    if (dynamic && fromOutput)
      return unsupported(rewriter, op,
                         "output_shape or SAME padding with a dynamic spatial dim is not "
                         "supported yet");
    SmallVector<int64_t> lo, hi, spread;
    for (int64_t i = 0; i < sp; ++i) {
      int64_t in = xType.getDimSize(2 + i), out = yType.getDimSize(2 + i);
      int64_t eff = (kernel[i] - 1) * dilations[i] + 1;
      if (ShapedType::isDynamic(in)) {
        // Explicit pads: the spread input ((in - 1) * stride + 1, known at
        // run time) padded by eff - 1 - pads, the end also by
        // output_padding.
        int64_t pb = autoPad == "VALID" ? 0 : explicitPads[i];
        int64_t pe = autoPad == "VALID" ? 0 : explicitPads[i + sp];
        int64_t l = eff - 1 - pb, h = eff - 1 - pe + outPad[i];
        if (l < 0 || h < 0)
          return unsupported(rewriter, op, "pads larger than the kernel are not supported yet");
        lo.push_back(l);
        hi.push_back(h);
        spread.push_back(ShapedType::kDynamic);
        continue;
      }
      int64_t total = strides[i] * (in - 1) + outPad[i] + eff - out;
      int64_t pb, pe;
      if (fromOutput) {
        // total // 2 rounding down (the spec's Python arithmetic): a
        // negative total (output_shape past the natural size) extends the
        // end with zeros.
        int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        if (autoPad == "SAME_UPPER") {
          pb = half;
          pe = total - half;
        } else {
          pb = total - half;
          pe = half;
        }
      } else {
        pb = explicitPads[i];
        pe = explicitPads[i + sp];
        if (autoPad == "VALID")
          pb = pe = 0;
      }
      // The spread input is padded by eff - 1 - pads on each side (the end
      // also gets output_padding); the convolution's output must be `out`.
      int64_t l = eff - 1 - pb, h = out + eff - 1 - l - ((in - 1) * strides[i] + 1);
      if (l < 0 || h < 0)
        return unsupported(rewriter, op, "pads larger than the kernel are not supported yet");
      lo.push_back(l);
      hi.push_back(h);
      spread.push_back((in - 1) * strides[i] + 1);
    }
    // Spread: zeros, with x inserted at stride steps.
    SmallVector<int64_t> spreadShape{n, c};
    spreadShape.append(spread);
    Value zero = scalarConstant(rewriter, loc, et, 0);
    Value x = adaptor.getX();
    if (llvm::any_of(strides, [](int64_t s) { return s != 1; })) {
      // A dynamic dim's spread size: (in - 1) * stride + 1, the input's
      // size at run time.
      SmallVector<Value> spreadSizes;
      SmallVector<OpFoldResult> offs(rank, rewriter.getIndexAttr(0)), sizes, steps;
      for (int64_t i = 0; i < rank; ++i) {
        if (xType.isDynamicDim(i)) {
          // An empty dim would spread to 1 - stride elements.
          requireNonZero(op, op.getX(), i);
          Value in = tensor::DimOp::create(rewriter, loc, x, i);
          sizes.push_back(in);
          Value s = arith::ConstantIndexOp::create(rewriter, loc, strides[i - 2]);
          Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
          spreadSizes.push_back(arith::AddIOp::create(
              rewriter, loc,
              arith::MulIOp::create(rewriter, loc, arith::SubIOp::create(rewriter, loc, in, one), s),
              one));
        } else {
          sizes.push_back(rewriter.getIndexAttr(xType.getDimSize(i)));
        }
        steps.push_back(rewriter.getIndexAttr(i < 2 ? 1 : strides[i - 2]));
      }
      Value base = linalg::FillOp::create(
                       rewriter, loc, zero,
                       emptyTensor(rewriter, loc, RankedTensorType::get(spreadShape, et),
                                   spreadSizes))
                       .getResult(0);
      x = tensor::InsertSliceOp::create(rewriter, loc, x, base, offs, sizes, steps);
    }
    SmallVector<int64_t> padLo{0, 0}, padHi{0, 0};
    padLo.append(lo);
    padHi.append(hi);
    x = padTensor(rewriter, loc, x, padLo, padHi, zero);
    // Weight [C, Mg, K...] -> [M, Cg, K...] flipped: through [G, Cg, Mg, K...].
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<int64_t> w4{g, cg, mg};
    w4.append(kernel);
    SmallVector<ReassociationIndices> wr{{0, 1}, {2}};
    for (int64_t i = 0; i < sp; ++i)
      wr.push_back({3 + i});
    Value w = tensor::ExpandShapeOp::create(rewriter, loc, wType.clone(w4),
                                            adaptor.getW(), wr);
    SmallVector<int64_t> wt{g, mg, cg};
    wt.append(kernel);
    auto wtType = RankedTensorType::get(wt, et);
    unsigned nd = 3 + sp;
    SmallVector<AffineExpr> src{getAffineDimExpr(0, ctx), getAffineDimExpr(2, ctx),
                                getAffineDimExpr(1, ctx)};
    for (int64_t i = 0; i < sp; ++i)
      src.push_back(getAffineConstantExpr(kernel[i] - 1, ctx) -
                    getAffineDimExpr(3 + i, ctx));
    Value flipped = copyThroughMap(rewriter, loc, w, AffineMap::get(nd, 0, src, ctx), wtType);
    SmallVector<int64_t> wc{m, cg};
    wc.append(kernel);
    SmallVector<ReassociationIndices> wcr{{0, 1}, {2}};
    for (int64_t i = 0; i < sp; ++i)
      wcr.push_back({3 + i});
    Value wconv = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get(wc, et), flipped, wcr);
    Value bias = isa<NoneType>(op.getB().getType()) ? Value() : adaptor.getB();
    SmallVector<int64_t> ones(sp, 1);
    rewriter.replaceOp(op, buildConv(rewriter, loc, x, wconv, bias, g, ones,
                                     dilations, yType));
    return success();
  }
};

} // namespace

FailureOr<Value> kiln::lowering::buildConvWithAttrs(OpBuilder &b, Location loc, Value x,
                                                    Value w, Value bias,
                                                    const ConvAttrs &attrs,
                                                    RankedTensorType yType,
                                                    std::string &why) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t rank = xType.getRank(), sp = rank - 2;
  if (sp < 1 || wType.getRank() != rank) {
    why = "input and weight ranks differ";
    return failure();
  }
  if (!wType.hasStaticShape() || xType.isDynamicDim(1)) {
    why = "a weight or channel dim whose size is known only at run time is not supported";
    return failure();
  }
  int64_t c = xType.getDimSize(1);
  int64_t m = wType.getDimSize(0), g = attrs.group;
  if (g < 1 || c % g != 0 || m % g != 0 || wType.getDimSize(1) != c / g) {
    why = "group does not divide channels";
    return failure();
  }
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  SmallVector<int64_t> strides = valuesOr(attrs.strides, sp, 1);
  SmallVector<int64_t> dilations = valuesOr(attrs.dilations, sp, 1);
  SmallVector<int64_t> in(xType.getShape().drop_front(2));
  SmallVector<int64_t> out(yType.getShape().drop_front(2));
  SmallVector<int64_t> lo, hi;
  if (!resolvePads(attrs.autoPad, attrs.pads, in, out, kernel, strides, dilations, lo, hi)) {
    why = "auto_pad " + attrs.autoPad.str() + " with a dynamic spatial dim is not supported yet";
    return failure();
  }
  SmallVector<int64_t> padLo{0, 0}, padHi{0, 0};
  padLo.append(lo);
  padHi.append(hi);
  Value xp = padTensor(b, loc, x, padLo, padHi,
                       scalarConstant(b, loc, xType.getElementType(), 0));
  return buildConv(b, loc, xp, w, bias, g, strides, dilations, yType);
}

namespace kiln::lowering {
void populateConvolutionPatterns(const TypeConverter &converter, RewritePatternSet &patterns,
                                 bool winograd) {
  patterns.add<ConvTransposePattern>(converter, patterns.getContext());
  patterns.add<ConvPattern>(converter, patterns.getContext(), winograd);
}
} // namespace kiln::lowering
