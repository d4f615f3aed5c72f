//===- Slicing.cpp - Slice and Split ---------------------------------------===//
//
// Slice becomes tensor.extract_slice (positive steps), a linalg.generic
// reading through an affine map (negative steps) or through indices
// computed from starts/ends known only at run time; along one of the
// model's dynamic dims it takes the piece where ONNX's clamping does not
// apply, with entry-point constraints. Split becomes extract_slices.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

struct SlicePattern : public OpConversionPattern<onnx::SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  /// The offset and size of a slice [start, end) with step 1 along the
  /// model's dynamic dim `axis` of `data` (size E, a symbolic dim or an
  /// expression of them): ONNX clamps the bounds into [0, E], so the
  /// size is a piecewise function of E. The code takes the piece where
  /// nothing is clamped, which is affine in E, when kiln-dim-symbols
  /// recorded that same expression for the result's dim; the entry point
  /// then refuses dims outside that piece (start and end inside [0, E], in
  /// order).
  FailureOr<std::pair<OpFoldResult, OpFoldResult>>
  sliceDynamicDim(onnx::SliceOp op, ConversionPatternRewriter &rewriter, Value data,
                  int64_t axis, int64_t start, int64_t end, int64_t step) const {
    Location loc = op.getLoc();
    auto fail = [&](const Twine &why) -> FailureOr<std::pair<OpFoldResult, OpFoldResult>> {
      return unsupported(rewriter, op, "slicing along the dynamic dim " + why);
    };
    if (step != 1)
      return fail("with a step other than 1 is not supported yet");
    std::optional<SmallVector<int64_t>> e = dimExpr(op.getData(), axis);
    if (!e)
      return fail("is not supported here: the dim is not an expression of the model's "
                  "dynamic dims");
    // start = sCoef * E + sConst, likewise end; bounds far outside clamp
    // to 0 or E for every E (dims are below 2^31).
    constexpr int64_t kFar = int64_t(1) << 40;
    if (end < -kFar)
      return fail("with an end before its start for every size is not supported");
    int64_t sCoef = start < 0 && start > -kFar, sConst = start <= -kFar ? 0 : start;
    int64_t eCoef = end < 0 || end >= kFar, eConst = end >= kFar ? 0 : end;
    if (start >= kFar)
      return fail("with a start past its end for every size is not supported");
    auto affine = [&](int64_t coef, int64_t c) {
      SmallVector<int64_t> r(e->size());
      for (size_t j = 0; j < r.size(); ++j)
        r[j] = coef * (*e)[j];
      r[0] += c;
      return r;
    };
    SmallVector<int64_t> size = affine(eCoef - sCoef, eConst - sConst);
    if (eCoef - sCoef < 0)
      return fail("with a size that shrinks as the dim grows is not supported");
    // The result's dim must be what the slice gives without clamping.
    RankedTensorType type = convertedResultType(*typeConverter, op);
    std::optional<SmallVector<int64_t>> want;
    if (type.isDynamicDim(axis)) {
      want = dimExpr(op.getResult(), axis);
    } else {
      want = SmallVector<int64_t>(size.size(), 0);
      (*want)[0] = type.getDimSize(axis);
    }
    if (!want || *want != size)
      return fail("is not supported where the slice's bounds are clamped at some sizes "
                  "(kiln compiles the sizes where start and end are inside the dim)");
    // Refused at the entry point: start or end outside [0, E], or end
    // before start.
    SmallVector<SmallVector<int64_t>> constraints = {size};
    if (start > -kFar)
      constraints.push_back(start < 0 ? affine(1, start) : affine(1, -start));
    if (end < kFar)
      constraints.push_back(end < 0 ? affine(1, end) : affine(1, -end));
    for (const SmallVector<int64_t> &c : constraints)
      requireNonNegative(op, c);
    auto value = [&](int64_t coef, int64_t c) -> OpFoldResult {
      if (!coef)
        return rewriter.getIndexAttr(c);
      Value dim = tensor::DimOp::create(rewriter, loc, data, axis);
      return arith::AddIOp::create(rewriter, loc, dim,
                                   arith::ConstantIndexOp::create(rewriter, loc, c))
          .getResult();
    };
    OpFoldResult offset = value(sCoef, sConst);
    OpFoldResult length = rewriter.getIndexAttr(eConst - sConst);
    if (type.isDynamicDim(axis))
      length = value(eCoef - sCoef, eConst - sConst);
    return std::make_pair(offset, length);
  }

  /// starts/ends/axes/steps known only at run time: the result shape is
  /// static, so each output dim d reads data[start_d + i * step_d], with
  /// start_d and step_d computed from the operands (ONNX's clamping rules)
  /// and every index clamped into the tensor.
  LogicalResult runtimeSlice(onnx::SliceOp op, OpAdaptor adaptor,
                             ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    auto dType = cast<RankedTensorType>(data.getType());
    RankedTensorType type = convertedResultType(*typeConverter, op);
    int64_t rank = dType.getRank();
    auto startsType = cast<RankedTensorType>(adaptor.getStarts().getType());
    if (startsType.getRank() != 1)
      return unsupported(rewriter, op, "starts must be 1-D");
    int64_t n = startsType.getDimSize(0);
    // One entry per sliced axis, each axis at most once.
    if (ShapedType::isDynamic(n) || n > rank)
      return unsupported(rewriter, op,
                         "starts must have a static length of at most the data's rank " +
                             std::to_string(rank) + " (one entry per sliced axis)");
    for (Value other : {adaptor.getEnds(), adaptor.getAxes(), adaptor.getSteps()}) {
      auto otherType = dyn_cast<RankedTensorType>(other.getType());
      if (otherType && (otherType.getRank() != 1 || otherType.getDimSize(0) != n))
        return unsupported(rewriter, op,
                           "starts, ends, axes and steps must be 1-D of the same length");
    }
    OpBuilder &b = rewriter;
    auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
    auto read = [&](Value t, int64_t j) -> Value {
      Value v = tensor::ExtractOp::create(b, loc, t, ValueRange{idx(j)});
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    };
    SmallVector<Value> start(rank), step(rank);
    for (int64_t d = 0; d < rank; ++d) {
      start[d] = idx(0);
      step[d] = idx(1);
    }
    for (int64_t j = 0; j < n; ++j) {
      Value axis = onnx::isNone(op.getAxes()) ? idx(j) : read(adaptor.getAxes(), j);
      Value st = onnx::isNone(op.getSteps()) ? idx(1) : read(adaptor.getSteps(), j);
      Value s0 = read(adaptor.getStarts(), j);
      for (int64_t d = 0; d < rank; ++d) {
        int64_t dim = dType.getDimSize(d);
        Value isD = arith::OrIOp::create(
            b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, axis, idx(d)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, axis, idx(d - rank)));
        Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, s0, idx(0));
        Value s = arith::SelectOp::create(b, loc, neg,
                                          arith::AddIOp::create(b, loc, s0, idx(dim)), s0);
        Value positive = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, st, idx(0));
        Value hi = arith::SelectOp::create(b, loc, positive, idx(dim),
                                           idx(std::max<int64_t>(dim - 1, 0)));
        s = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, s, idx(0)), hi);
        start[d] = arith::SelectOp::create(b, loc, isD, s, start[d]);
        step[d] = arith::SelectOp::create(b, loc, isD, st, step[d]);
      }
    }
    if (type.getNumElements() == 0 || dType.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    rewriter.replaceOp(op, generateTensor(
        b, loc, type, [&](OpBuilder &nb, Location l) -> Value {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(nb, l, d);
            Value p = arith::AddIOp::create(nb, l, start[d],
                                            arith::MulIOp::create(nb, l, i, step[d]));
            Value zero = arith::ConstantIndexOp::create(nb, l, 0);
            Value last = arith::ConstantIndexOp::create(
                nb, l, std::max<int64_t>(dType.getDimSize(d) - 1, 0));
            at.push_back(arith::MinSIOp::create(
                nb, l, arith::MaxSIOp::create(nb, l, p, zero), last));
          }
          return tensor::ExtractOp::create(nb, l, data, at);
        }));
    return success();
  }

  LogicalResult
  matchAndRewrite(onnx::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    auto dType = cast<RankedTensorType>(data.getType());
    RankedTensorType type = convertedResultType(*typeConverter, op);
    int64_t rank = dType.getRank();
    auto starts = onnx::constantInts(op.getStarts());
    auto ends = onnx::constantInts(op.getEnds());
    std::optional<SmallVector<int64_t>> constAxes, constSteps;
    if (!onnx::isNone(op.getAxes()))
      constAxes = onnx::constantInts(op.getAxes());
    if (!onnx::isNone(op.getSteps()))
      constSteps = onnx::constantInts(op.getSteps());
    bool runtime = !starts || !ends ||
                   (!onnx::isNone(op.getAxes()) && !constAxes) ||
                   (!onnx::isNone(op.getSteps()) && !constSteps);
    bool dynamic = !dType.hasStaticShape() || !type.hasStaticShape();
    if (runtime && dynamic)
      return unsupported(rewriter, op,
                         "starts, ends, axes or steps known only at run time with the dynamic "
                         "dim are not supported yet");
    if (runtime)
      return runtimeSlice(op, adaptor, rewriter);
    SmallVector<int64_t> axes, steps(starts->size(), 1);
    if (constAxes) {
      axes = *constAxes;
    } else {
      for (size_t i = 0; i < starts->size(); ++i)
        axes.push_back(i);
    }
    if (constSteps)
      steps = *constSteps;
    if (axes.size() != starts->size() || ends->size() != starts->size() ||
        steps.size() != starts->size())
      return unsupported(rewriter, op, "starts, ends, axes and steps differ in length");
    SmallVector<int64_t> offset(rank, 0), step(rank, 1);
    // Per dynamic dim sliced: its offset and size, computed from its
    // run-time size.
    llvm::SmallDenseMap<int64_t, std::pair<OpFoldResult, OpFoldResult>> dynamicSlices;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (a < 0 || a >= rank || steps[i] == 0)
        return unsupported(rewriter, op, "axis out of range or zero step");
      if (dType.isDynamicDim(a)) {
        FailureOr<std::pair<OpFoldResult, OpFoldResult>> slice =
            sliceDynamicDim(op, rewriter, data, a, (*starts)[i], (*ends)[i], steps[i]);
        if (failed(slice))
          return failure();
        dynamicSlices[a] = *slice;
        continue;
      }
      int64_t dim = dType.getDimSize(a), s = (*starts)[i];
      if (s < 0)
        s += dim;
      s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim)
                       : std::clamp<int64_t>(s, 0, std::max<int64_t>(dim - 1, 0));
      offset[a] = s;
      step[a] = steps[i];
    }
    bool positive = llvm::all_of(step, [](int64_t s) { return s > 0; });
    if (dynamic) {
      // A dynamic dim not sliced passes through whole, dynamic in the
      // result too; one sliced was checked by sliceDynamicDim.
      for (int64_t i = 0; i < rank; ++i)
        if (dType.isDynamicDim(i) != type.isDynamicDim(i) && !dynamicSlices.count(i))
          return unsupported(rewriter, op, "a dynamic dim that the result does not keep");
      if (!positive)
        return unsupported(rewriter, op,
                           "negative steps with the dynamic dim are not supported yet");
    }
    if (positive) {
      SmallVector<OpFoldResult> offs, sizes, strides;
      for (int64_t i = 0; i < rank; ++i) {
        auto it = dynamicSlices.find(i);
        offs.push_back(it != dynamicSlices.end() ? it->second.first
                                                 : rewriter.getIndexAttr(offset[i]));
        // A dynamic dim passes through whole (the data's own size) or is
        // sliced as sliceDynamicDim says.
        sizes.push_back(it != dynamicSlices.end() ? it->second.second
                        : type.isDynamicDim(i)
                            ? OpFoldResult(tensor::DimOp::create(rewriter, loc, data, i).getResult())
                            : rewriter.getIndexAttr(type.getDimSize(i)));
        strides.push_back(rewriter.getIndexAttr(step[i]));
      }
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, type, data, offs,
                                                          sizes, strides);
      return success();
    }
    // Negative steps: read data[offset + i * step] through the input map.
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank; ++i)
      exprs.push_back(getAffineDimExpr(i, ctx) * step[i] + offset[i]);
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    rewriter.replaceOp(op, copyThroughMap(rewriter, loc, data,
                                          AffineMap::get(rank, 0, exprs, ctx), type));
    return success();
  }
};

struct SplitPattern : public OpConversionPattern<onnx::SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rank = inType.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return unsupported(rewriter, op, "axis out of range");
    // Dynamic dims pass through whole; the split axis must be static.
    if (inType.isDynamicDim(axis))
      return unsupported(rewriter, op, "splitting along a dynamic dim is not supported yet");
    SmallVector<Value> results;
    int64_t offset = 0;
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      RankedTensorType type = convertedResultType(*typeConverter, op, i);
      if (type.getRank() != rank || type.isDynamicDim(axis))
        return unsupported(rewriter, op, "a part's shape does not follow the input's");
      SmallVector<OpFoldResult> offs(rank, rewriter.getIndexAttr(0)), sizes,
          strides(rank, rewriter.getIndexAttr(1));
      offs[axis] = rewriter.getIndexAttr(offset);
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(type.isDynamicDim(d)
                            ? OpFoldResult(tensor::DimOp::create(rewriter, op.getLoc(),
                                                                 adaptor.getInput(), d)
                                               .getResult())
                            : OpFoldResult(rewriter.getIndexAttr(type.getDimSize(d))));
      if (type.hasStaticShape() && type.getNumElements() == 0) {
        results.push_back(emptyTensor(rewriter, op.getLoc(), type));
      } else {
        results.push_back(tensor::ExtractSliceOp::create(
            rewriter, op.getLoc(), type, adaptor.getInput(), offs, sizes, strides));
      }
      offset += type.getDimSize(axis);
    }
    if (offset != inType.getDimSize(axis))
      return unsupported(rewriter, op, "split sizes do not cover the axis");
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateSlicingPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<SlicePattern, SplitPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
