//===- Reduction.cpp - Reduce*, Softmax, global pooling -> linalg ----------===//
//
// Every reduction is one linalg.generic whose output map drops the reduced
// dims, reshaped to the keepdims shape so that what follows (a mean's
// division, softmax's normalisation) broadcasts it back with numpy rules.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/bit.h"

#include <functional>

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

Value addValues(OpBuilder &b, Location l, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, l, x, y);
  return arith::AddIOp::create(b, l, x, y);
}

enum class Kind { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

/// Lowers one Reduce* op; axes come from the attribute or (ReduceSum) the
/// second operand: a constant, or values known only at run time (then the
/// static result shape narrows down the reduced dims).
template <typename OpTy, Kind kind>
struct ReducePattern : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Operation *raw = op.getOperation();
    Type elem = elementTypeOf(raw->getOperand(0));
    bool isFloat = isSupportedFloat(elem);
    if (!isFloat && !isSupportedInt(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    if (!isFloat && (kind == Kind::L2 || kind == Kind::LogSum ||
                     kind == Kind::LogSumExp || kind == Kind::Mean))
      return unsupported(rewriter, op, "integer inputs are not supported yet");
    Value x = adaptor.getOperands()[0];
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    SmallVector<int64_t> axes;
    bool noopWhenEmpty = false;
    if (raw->getNumOperands() > 1) {
      Value axesOperand = raw->getOperand(1);
      if (!onnx::isNone(axesOperand)) {
        std::optional<SmallVector<int64_t>> c = onnx::constantInts(axesOperand);
        if (c) {
          axes = *c;
        } else {
          // Axes given at run time: with keepdims the static result shape
          // still says which dims are reduced (a size-1 dim reduces to
          // itself either way).
          auto keep = raw->getAttrOfType<IntegerAttr>("keepdims");
          RankedTensorType rt = convertedResultType(*this->typeConverter, op);
          if (keep && keep.getInt() == 0)
            return reduceRunTimeAxes(op, rewriter, x, adaptor.getOperands()[1],
                                     rt, isFloat, elem.isUnsignedInteger());
          if (rt.getRank() != rank)
            return unsupported(rewriter, op,
                               "axes known only at run time need keepdims=1");
          noopWhenEmpty = false;
          SmallVector<bool> mask(rank);
          bool any = false;
          for (int64_t i = 0; i < rank; ++i) {
            mask[i] = rt.getDimSize(i) != xType.getDimSize(i);
            any |= mask[i];
          }
          if (!any) {
            rewriter.replaceOp(op, x);
            return success();
          }
          for (int64_t i = 0; i < rank; ++i)
            if (mask[i])
              axes.push_back(i);
        }
      }
      if (auto a = raw->getAttrOfType<IntegerAttr>("noop_with_empty_axes"))
        noopWhenEmpty = a.getInt() != 0;
    } else if (auto a = raw->getAttrOfType<DenseI64ArrayAttr>("axes")) {
      axes.assign(a.asArrayRef().begin(), a.asArrayRef().end());
    }
    RankedTensorType resultType = convertedResultType(*this->typeConverter, op);
    if (axes.empty() && noopWhenEmpty) {
      rewriter.replaceOp(op, x);
      return success();
    }
    SmallVector<bool> reduce(rank, axes.empty());
    for (int64_t a : axes) {
      if (a < -rank || a >= rank)
        return unsupported(rewriter, op, "axis out of range");
      reduce[a < 0 ? a + rank : a] = true;
    }
    Value r = reduceMask(rewriter, loc, x, reduce, isFloat, elem.isUnsignedInteger());
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, r, resultType));
    return success();
  }

  /// ReduceSum with run-time axes and keepdims=0: the static result shape
  /// allows a few sets of reduced dims (from [3, 2, 2] to [3, 2]: dim 1 or
  /// dim 2); each is computed in its own branch of an scf.if chain taken
  /// by comparing the axes with it at run time. Axes that match none take
  /// the last branch (never out of bounds).
  LogicalResult reduceRunTimeAxes(OpTy op, ConversionPatternRewriter &rewriter,
                                  Value x, Value axesValue,
                                  RankedTensorType resultType, bool isFloat,
                                  bool isUnsigned) const {
    Location loc = op.getLoc();
    auto xType = cast<RankedTensorType>(x.getType());
    auto axesType = dyn_cast<RankedTensorType>(axesValue.getType());
    int64_t rank = xType.getRank();
    if (!axesType || axesType.getRank() != 1 || !axesType.hasStaticShape())
      return unsupported(rewriter, op, "axes known only at run time need a static count");
    int64_t count = axesType.getDimSize(0);
    if (count == 0 || rank - count != resultType.getRank())
      return unsupported(rewriter, op,
                         "axes known only at run time with keepdims=0 need a static result of rank " +
                             std::to_string(rank - count));
    if (rank > 16)
      return unsupported(rewriter, op,
                         "axes known only at run time with keepdims=0 need rank <= 16");
    // Every set of `count` dims whose removal leaves the result's shape.
    SmallVector<SmallVector<int64_t>> candidates;
    for (uint64_t bits = 0; bits < (uint64_t(1) << rank); ++bits) {
      if (llvm::popcount(bits) != count)
        continue;
      SmallVector<int64_t> kept, set;
      for (int64_t d = 0; d < rank; ++d) {
        if (bits >> d & 1)
          set.push_back(d);
        else
          kept.push_back(xType.getDimSize(d));
      }
      if (ArrayRef<int64_t>(kept) == resultType.getShape())
        candidates.push_back(set);
    }
    if (candidates.empty() || candidates.size() > 8)
      return unsupported(rewriter, op,
                         candidates.empty()
                             ? "no set of axes gives the static result shape"
                             : "axes known only at run time allow too many sets of reduced dims");
    // cond_i: every given axis (negative counts from the end) is in set i.
    auto i64 = [&](OpBuilder &b, int64_t v) {
      return arith::ConstantIntOp::create(b, loc, v, 64).getResult();
    };
    SmallVector<Value> given;
    for (int64_t j = 0; j < count; ++j) {
      Value a = tensor::ExtractOp::create(
          rewriter, loc, axesValue,
          ValueRange{arith::ConstantIndexOp::create(rewriter, loc, j)});
      if (!a.getType().isInteger(64)) // Axes are int64 in ONNX; be safe.
        a = arith::ExtSIOp::create(rewriter, loc, rewriter.getI64Type(), a).getResult();
      Value negative = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                             a, i64(rewriter, 0));
      given.push_back(arith::SelectOp::create(
          rewriter, loc, negative,
          arith::AddIOp::create(rewriter, loc, a, i64(rewriter, rank)), a));
    }
    auto matches = [&](OpBuilder &b, ArrayRef<int64_t> set) {
      Value all = arith::ConstantIntOp::create(b, loc, 1, 1);
      for (Value a : given) {
        Value in = arith::ConstantIntOp::create(b, loc, 0, 1);
        for (int64_t d : set)
          in = arith::OrIOp::create(
              b, loc, in,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a, i64(b, d)));
        all = arith::AndIOp::create(b, loc, all, in);
      }
      return all;
    };
    auto compute = [&](OpBuilder &b, ArrayRef<int64_t> set) {
      SmallVector<bool> reduce(rank, false);
      for (int64_t d : set)
        reduce[d] = true;
      return reshapeTensor(b, loc, reduceMask(b, loc, x, reduce, isFloat, isUnsigned),
                           resultType);
    };
    std::function<Value(OpBuilder &, size_t)> chain = [&](OpBuilder &b, size_t i) -> Value {
      if (i + 1 == candidates.size())
        return compute(b, candidates[i]);
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{resultType},
                                    matches(b, candidates[i]), /*withElseRegion=*/true);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      scf::YieldOp::create(tb, loc, compute(tb, candidates[i]));
      OpBuilder eb = ifOp.getElseBodyBuilder();
      scf::YieldOp::create(eb, loc, chain(eb, i + 1));
      return ifOp.getResult(0);
    };
    rewriter.replaceOp(op, chain(rewriter, 0));
    return success();
  }

  /// The reduction of `x` over the dims in `reduce`, with keepdims.
  Value reduceMask(OpBuilder &rewriter, Location loc, Value x, ArrayRef<bool> reduce,
                   bool isFloat, bool isUnsigned) const {
    auto xType = cast<RankedTensorType>(x.getType());
    Type et = xType.getElementType();
    auto zero = cast<TypedAttr>(isFloat ? Attribute(rewriter.getFloatAttr(et, 0))
                                        : Attribute(rewriter.getIntegerAttr(et, 0)));
    auto one = cast<TypedAttr>(isFloat ? Attribute(rewriter.getFloatAttr(et, 1))
                                       : Attribute(rewriter.getIntegerAttr(et, 1)));
    Value r;
    auto sum = [](OpBuilder &b, Location l, Value acc, Value v) {
      return addValues(b, l, acc, v);
    };
    switch (kind) {
    case Kind::Sum:
    case Kind::Mean:
    case Kind::LogSum:
      r = reduceKeepDims(rewriter, loc, x, reduce, zero, sum);
      break;
    case Kind::Max:
    case Kind::Min: {
      bool isMax = kind == Kind::Max;
      TypedAttr init = isMax ? lowestValue(et, isUnsigned) : highestValue(et, isUnsigned);
      r = reduceKeepDims(
          rewriter, loc, x, reduce, init,
          [&](OpBuilder &b, Location l, Value acc, Value v) -> Value {
            if (isFloat)
              return isMax ? Value(arith::MaximumFOp::create(b, l, acc, v))
                           : Value(arith::MinimumFOp::create(b, l, acc, v));
            if (isUnsigned)
              return isMax ? Value(arith::MaxUIOp::create(b, l, acc, v))
                           : Value(arith::MinUIOp::create(b, l, acc, v));
            return isMax ? Value(arith::MaxSIOp::create(b, l, acc, v))
                         : Value(arith::MinSIOp::create(b, l, acc, v));
          });
      break;
    }
    case Kind::Prod:
      r = reduceKeepDims(rewriter, loc, x, reduce, one,
                         [&](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                           if (isFloat) return arith::MulFOp::create(b, l, acc, v);
                           return arith::MulIOp::create(b, l, acc, v);
                         });
      break;
    case Kind::L1:
      r = reduceKeepDims(rewriter, loc, x, reduce, zero, sum,
                         [&](OpBuilder &b, Location l, Value v) -> Value {
                           if (isFloat) return math::AbsFOp::create(b, l, v);
                           if (isUnsigned) return v;
                           return math::AbsIOp::create(b, l, v);
                         });
      break;
    case Kind::L2:
    case Kind::SumSquare:
      r = reduceKeepDims(rewriter, loc, x, reduce, zero, sum,
                         [&](OpBuilder &b, Location l, Value v) -> Value {
                           if (isFloat) return arith::MulFOp::create(b, l, v, v);
                           return arith::MulIOp::create(b, l, v, v);
                         });
      break;
    case Kind::LogSumExp: {
      // log(sum(exp(x - max))) + max, stable for large inputs.
      Value mx = reduceKeepDims(
          rewriter, loc, x, reduce, lowestValue(et, false),
          [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
            return arith::MaximumFOp::create(b, l, acc, v);
          });
      Value shifted = broadcastGeneric(
          rewriter, loc, ValueRange{x, mx}, xType,
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return math::ExpOp::create(b, l, arith::SubFOp::create(b, l, a[0], a[1]));
          });
      Value s = reduceKeepDims(rewriter, loc, shifted, reduce, zero, sum);
      r = broadcastGeneric(rewriter, loc, ValueRange{s, mx},
                           cast<RankedTensorType>(s.getType()),
                           [](OpBuilder &b, Location l, ValueRange a) -> Value {
                             return arith::AddFOp::create(
                                 b, l, math::LogOp::create(b, l, a[0]), a[1]);
                           });
      break;
    }
    }
    auto keepType = cast<RankedTensorType>(r.getType());
    if (kind == Kind::Mean || kind == Kind::L2 || kind == Kind::LogSum) {
      // A mean's count, the dynamic dims' part read at run time.
      double count = 1;
      Value dynamicCount;
      if (kind == Kind::Mean)
        std::tie(count, dynamicCount) = reducedCount(rewriter, loc, x, reduce);
      r = broadcastGeneric(
          rewriter, loc, ValueRange{r}, keepType,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            if (kind == Kind::Mean) {
              Value divisor = scalarConstant(b, l, et, count);
              if (dynamicCount)
                divisor = arith::MulFOp::create(b, l, divisor, dynamicCount);
              return arith::DivFOp::create(b, l, a[0], divisor);
            }
            if (kind == Kind::L2)
              return math::SqrtOp::create(b, l, a[0]);
            return math::LogOp::create(b, l, a[0]);
          });
    }
    return r;
  }
};

/// Softmax and LogSoftmax (opset 13: one axis).
template <typename OpTy, bool isLog>
struct SoftmaxPattern : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getOperation()->getOperand(0));
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    int64_t axis = op.getAxis();
    if (axis < -rank || axis >= rank)
      return unsupported(rewriter, op, "axis out of range");
    if (axis < 0)
      axis += rank;
    rewriter.replaceOp(op, softmaxAlong(rewriter, loc, x, axis, isLog));
    return success();
  }
};

/// GlobalAveragePool and GlobalMaxPool: reduce every spatial dim.
template <typename OpTy, bool isMax>
struct GlobalPoolPattern : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using Adaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getOperation()->getOperand(0));
    if (!isSupportedFloat(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    Value x = adaptor.getX();
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<bool> reduce(type.getRank(), true);
    reduce[0] = reduce[1] = false;
    Type et = type.getElementType();
    Value r;
    if (isMax) {
      r = reduceKeepDims(rewriter, loc, x, reduce, lowestValue(et, false),
                         [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                           return arith::MaximumFOp::create(b, l, acc, v);
                         });
    } else {
      r = meanKeepDims(rewriter, loc, x, reduce);
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
/// Softmax: e = exp(x - max) once, then e * (1 / sum(e)), the reciprocal
/// invariant along the row (hoisted out of the vector loop) instead of a
/// division per element. LogSoftmax: (x - max) - log(sum(exp(x - max))).
Value softmaxAlong(OpBuilder &b, Location loc, Value x, int64_t axis, bool isLog) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<bool> reduce(type.getRank(), false);
  reduce[axis] = true;
  Type et = type.getElementType();
  Value mx = reduceKeepDims(b, loc, x, reduce, lowestValue(et, false),
                            [](OpBuilder &nb, Location l, Value acc, Value v) -> Value {
                              return arith::MaximumFOp::create(nb, l, acc, v);
                            });
  auto add = [](OpBuilder &nb, Location l, Value acc, Value v) -> Value {
    return arith::AddFOp::create(nb, l, acc, v);
  };
  if (isLog) {
    Value shifted = broadcastGeneric(b, loc, ValueRange{x, mx}, type,
                                     [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                                       return arith::SubFOp::create(nb, l, a[0], a[1]);
                                     });
    Value sum = reduceKeepDims(
        b, loc, shifted, reduce, b.getFloatAttr(et, 0), add,
        [](OpBuilder &nb, Location l, Value v) -> Value { return math::ExpOp::create(nb, l, v); });
    return broadcastGeneric(b, loc, ValueRange{shifted, sum}, type,
                            [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                              return arith::SubFOp::create(nb, l, a[0],
                                                           math::LogOp::create(nb, l, a[1]));
                            });
  }
  Value e = broadcastGeneric(b, loc, ValueRange{x, mx}, type,
                             [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                               return math::ExpOp::create(
                                   nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
                             });
  Value sum = reduceKeepDims(b, loc, e, reduce, b.getFloatAttr(et, 0), add);
  return broadcastGeneric(
      b, loc, ValueRange{e, sum}, type, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value one = scalarConstant(nb, l, et, 1);
        return arith::MulFOp::create(nb, l, a[0], arith::DivFOp::create(nb, l, one, a[1]));
      });
}
} // namespace kiln::lowering

namespace kiln::lowering {
void populateReductionPatterns(const TypeConverter &converter,
                               RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReducePattern<onnx::ReduceSumOp, Kind::Sum>,
               ReducePattern<onnx::ReduceMeanOp, Kind::Mean>,
               ReducePattern<onnx::ReduceMaxOp, Kind::Max>,
               ReducePattern<onnx::ReduceMinOp, Kind::Min>,
               ReducePattern<onnx::ReduceProdOp, Kind::Prod>,
               ReducePattern<onnx::ReduceL1Op, Kind::L1>,
               ReducePattern<onnx::ReduceL2Op, Kind::L2>,
               ReducePattern<onnx::ReduceSumSquareOp, Kind::SumSquare>,
               ReducePattern<onnx::ReduceLogSumOp, Kind::LogSum>,
               ReducePattern<onnx::ReduceLogSumExpOp, Kind::LogSumExp>,
               SoftmaxPattern<onnx::SoftmaxOp, false>,
               SoftmaxPattern<onnx::LogSoftmaxOp, true>,
               GlobalPoolPattern<onnx::GlobalAveragePoolOp, false>,
               GlobalPoolPattern<onnx::GlobalMaxPoolOp, true>>(converter, ctx);
}
} // namespace kiln::lowering
