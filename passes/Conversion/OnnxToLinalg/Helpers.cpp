//===- Helpers.cpp - Builders shared by the onnx -> linalg patterns --------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "passes/Utils/ElementsData.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

#include <cstring>

using namespace mlir;

namespace kiln::lowering {

OnnxTypeConverter::OnnxTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) -> Type {
    return type.clone(signlessType(type.getElementType()));
  });
  auto materialize = [](OpBuilder &b, Type type, ValueRange inputs,
                        Location loc) -> Value {
    return UnrealizedConversionCastOp::create(b, loc, type, inputs)
        .getResult(0);
  };
  addSourceMaterialization(materialize);
  addTargetMaterialization(materialize);
}

namespace {
thread_local llvm::DenseMap<Operation *, std::string> *failureLog = nullptr;
thread_local std::string backend = "CPU";
} // namespace

std::string backendName() { return "the " + backend + " backend"; }
void setBackendName(StringRef name) { backend = name.str(); }

void setFailureLog(llvm::DenseMap<Operation *, std::string> *log) {
  failureLog = log;
}

LogicalResult unsupported(ConversionPatternRewriter &rewriter, Operation *op,
                          const llvm::Twine &reason) {
  std::string text = reason.str();
  if (failureLog)
    (*failureLog)[op] = text;
  return rewriter.notifyMatchFailure(op, text);
}

Type signlessType(Type type) {
  // A string element is the address of its text.
  if (isa<onnx::StringType>(type))
    return IntegerType::get(type.getContext(), 64);
  if (auto i = dyn_cast<IntegerType>(type); i && !i.isSignless())
    return IntegerType::get(type.getContext(), i.getWidth());
  return type;
}

Type elementTypeOf(Value v) { return getElementTypeOrSelf(v.getType()); }

bool isSupportedFloat(Type type) { return type.isF32() || type.isF64(); }

bool isSupportedInt(Type type) {
  auto i = dyn_cast<IntegerType>(type);
  return i && i.getWidth() >= 8 && i.getWidth() <= 64;
}

bool isBool(Type type) { return type.isInteger(1); }

std::string typeName(Type type) {
  if (type.isF32()) return "float32";
  if (type.isF64()) return "float64";
  if (type.isF16()) return "float16";
  if (type.isBF16()) return "bfloat16";
  if (type.isInteger(1)) return "bool";
  if (auto i = dyn_cast<IntegerType>(type))
    return (i.isUnsigned() ? "uint" : "int") + std::to_string(i.getWidth());
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

Value multiplyAdd(OpBuilder &b, Location loc, Value acc, Value x, Value y) {
  if (isa<FloatType>(acc.getType()))
    return arith::AddFOp::create(b, loc, acc, arith::MulFOp::create(b, loc, x, y));
  return arith::AddIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, x, y));
}

Value castScalar(OpBuilder &b, Location loc, Value v, Type from, Type to) {
  Type target = signlessType(to);
  if (from == to)
    return v;
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  bool fromUnsigned = isBool(from) || from.isUnsignedInteger();
  if (fromFloat && toFloat) {
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, target, v);
    return arith::TruncFOp::create(b, loc, target, v);
  }
  if (isBool(to)) {
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   scalarConstant(b, loc, from, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 scalarConstant(b, loc, signlessType(from), 0));
  }
  if (toFloat) {
    if (fromUnsigned)
      return arith::UIToFPOp::create(b, loc, target, v);
    return arith::SIToFPOp::create(b, loc, target, v);
  }
  if (fromFloat) {
    if (to.isUnsignedInteger())
      return arith::FPToUIOp::create(b, loc, target, v);
    return arith::FPToSIOp::create(b, loc, target, v);
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw == tw)
    return v;
  if (fw > tw)
    return arith::TruncIOp::create(b, loc, target, v);
  if (fromUnsigned)
    return arith::ExtUIOp::create(b, loc, target, v);
  return arith::ExtSIOp::create(b, loc, target, v);
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  type = signlessType(type);
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

TypedAttr lowestValue(Type type, bool isUnsigned) {
  type = signlessType(type);
  if (auto f = dyn_cast<FloatType>(type))
    return FloatAttr::get(
        f, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/true));
  unsigned w = type.getIntOrFloatBitWidth();
  return IntegerAttr::get(type, isUnsigned ? APInt::getZero(w)
                                           : APInt::getSignedMinValue(w));
}

TypedAttr highestValue(Type type, bool isUnsigned) {
  type = signlessType(type);
  if (auto f = dyn_cast<FloatType>(type))
    return FloatAttr::get(f, APFloat::getInf(f.getFloatSemantics()));
  unsigned w = type.getIntOrFloatBitWidth();
  return IntegerAttr::get(type, isUnsigned ? APInt::getMaxValue(w)
                                           : APInt::getSignedMaxValue(w));
}

bool isStaticTensor(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.hasStaticShape();
}

RankedTensorType convertedResultType(const TypeConverter &converter,
                                     Operation *op, unsigned index) {
  return dyn_cast_or_null<RankedTensorType>(
      converter.convertType(op->getResult(index).getType()));
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value scalar) {
  Value empty = emptyTensor(b, loc, type);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

AffineMap broadcastMap(MLIRContext *context, ArrayRef<int64_t> in,
                       ArrayRef<int64_t> out) {
  SmallVector<AffineExpr> exprs;
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == 1 && out[lead + i] != 1)
      exprs.push_back(getAffineConstantExpr(0, context));
    else
      exprs.push_back(getAffineDimExpr(lead + i, context));
  }
  return AffineMap::get(out.size(), 0, exprs, context);
}

Value broadcastGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                       RankedTensorType resultType, ScalarBody body, Value sizesOf) {
  MLIRContext *context = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(
        context, cast<RankedTensorType>(in.getType()).getShape(),
        resultType.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  Value init =
      sizesOf ? emptyTensor(b, loc, resultType,
                            dynamicSizesOf(b, loc, sizesOf,
                                           llvm::to_vector(llvm::seq<int64_t>(
                                               0, resultType.getRank()))))
              : emptyTensor(b, loc, resultType);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

/// Reduces `x` over the dims where `reduce` is set; the result has size 1
/// in those dims. `pre` maps each element before combining.
Value reduceKeepDims(OpBuilder &b, Location loc, Value x,
                     ArrayRef<bool> reduce, TypedAttr init, ReduceCombine combine,
                     ReduceMap pre) {
  auto type = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> outExprs;
  SmallVector<int64_t> outShape, keepShape;
  SmallVector<utils::IteratorType> iters;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (reduce[i]) {
      iters.push_back(utils::IteratorType::reduction);
      keepShape.push_back(1);
    } else {
      iters.push_back(utils::IteratorType::parallel);
      outExprs.push_back(getAffineDimExpr(i, ctx));
      outShape.push_back(type.getDimSize(i));
      keepShape.push_back(type.getDimSize(i));
    }
  }
  auto outType = type.clone(outShape);
  Value initValue = arith::ConstantOp::create(b, loc, init);
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (!reduce[i])
      kept.push_back(i);
  Value empty = emptyTensor(b, loc, outType, dynamicSizesOf(b, loc, x, kept));
  Value filled = linalg::FillOp::create(b, loc, initValue, empty).getResult(0);
  auto generic = linalg::GenericOp::create(
      b, loc, outType, ValueRange{x}, ValueRange{filled},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(type.getRank()),
                          AffineMap::get(type.getRank(), 0, outExprs, ctx)},
      iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value v = pre ? pre(nb, l, args[0]) : args[0];
        linalg::YieldOp::create(nb, l, combine(nb, l, args[1], v));
      });
  return reshapeTensor(b, loc, generic.getResult(0), type.clone(keepShape));
}

/// Mean over the dims in `reduce` of x (keepdims shape).
std::pair<double, Value> reducedCount(OpBuilder &b, Location loc, Value x,
                                      ArrayRef<bool> reduce) {
  auto type = cast<RankedTensorType>(x.getType());
  double count = 1;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (reduce[i] && !type.isDynamicDim(i))
      count *= type.getDimSize(i);
  Value dynamicCount;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (!reduce[i] || !type.isDynamicDim(i))
      continue;
    Value n = tensor::DimOp::create(b, loc, x, i);
    n = arith::IndexCastOp::create(b, loc, b.getI64Type(), n);
    n = arith::SIToFPOp::create(b, loc, type.getElementType(), n);
    dynamicCount = dynamicCount ? arith::MulFOp::create(b, loc, dynamicCount, n).getResult() : n;
  }
  return {count, dynamicCount};
}

Value meanKeepDims(OpBuilder &b, Location loc, Value x, ArrayRef<bool> reduce) {
  Type et = cast<RankedTensorType>(x.getType()).getElementType();
  double count;
  Value dynamicCount;
  std::tie(count, dynamicCount) = reducedCount(b, loc, x, reduce);
  Value sum = reduceKeepDims(b, loc, x, reduce, b.getFloatAttr(et, 0),
                             [](OpBuilder &nb, Location l, Value acc, Value v) -> Value {
                               return arith::AddFOp::create(nb, l, acc, v);
                             });
  return broadcastGeneric(b, loc, ValueRange{sum}, cast<RankedTensorType>(sum.getType()),
                          [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                            Value divisor = scalarConstant(nb, l, et, count);
                            if (dynamicCount)
                              divisor = arith::MulFOp::create(nb, l, divisor, dynamicCount);
                            return arith::DivFOp::create(nb, l, a[0], divisor);
                          });
}

Value generateTensor(OpBuilder &b, Location loc, RankedTensorType type,
                     function_ref<Value(OpBuilder &, Location)> body) {
  int64_t rank = type.getRank();
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{}, ValueRange{emptyTensor(b, loc, type)},
             ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)},
             SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange) {
               linalg::YieldOp::create(nb, l, body(nb, l));
             })
      .getResult(0);
}

namespace {
/// `init` overwritten with src[readMap(d...)] at each (d...).
Value copyInto(OpBuilder &b, Location loc, Value src, AffineMap readMap, Value init) {
  auto type = cast<RankedTensorType>(init.getType());
  int64_t rank = type.getRank();
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{src}, ValueRange{init},
             ArrayRef<AffineMap>{readMap, b.getMultiDimIdentityMap(rank)},
             SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}
} // namespace

Value copyThroughMap(OpBuilder &b, Location loc, Value src, AffineMap readMap,
                     RankedTensorType type) {
  return copyInto(b, loc, src, readMap, emptyTensor(b, loc, type));
}

Value copyThroughMap(OpBuilder &b, Location loc, Value src, AffineMap readMap,
                     RankedTensorType type, ValueRange dynamicSizes) {
  return copyInto(b, loc, src, readMap, emptyTensor(b, loc, type, dynamicSizes));
}

namespace {
/// `v` as an index wrapped (negative counts from the end, adding `dim()`)
/// and clamped to [0, last()]; the two bounds are built where they are
/// first needed.
Value clampIndexTo(OpBuilder &b, Location loc, Value v, function_ref<Value()> dim,
                   function_ref<Value()> last) {
  auto c = [&](int64_t x) { return arith::ConstantIndexOp::create(b, loc, x); };
  if (isa<FloatType>(v.getType()))
    v = arith::FPToSIOp::create(b, loc, b.getI64Type(), v);
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, c(0));
  i = arith::SelectOp::create(b, loc, neg, arith::AddIOp::create(b, loc, i, dim()), i);
  i = arith::MaxSIOp::create(b, loc, i, c(0));
  return arith::MinSIOp::create(b, loc, i, last());
}
} // namespace

Value clampedIndex(OpBuilder &b, Location loc, Value v, int64_t dim) {
  auto c = [&](int64_t x) -> Value { return arith::ConstantIndexOp::create(b, loc, x); };
  return clampIndexTo(
      b, loc, v, [&] { return c(dim); }, [&] { return c(std::max<int64_t>(dim - 1, 0)); });
}

Value clampedRuntimeIndex(OpBuilder &b, Location loc, Value v, Value dim) {
  if (std::optional<int64_t> known = getConstantIntValue(dim))
    return clampedIndex(b, loc, v, *known);
  auto c = [&](int64_t x) -> Value { return arith::ConstantIndexOp::create(b, loc, x); };
  return clampIndexTo(
      b, loc, v, [&] { return dim; },
      [&]() -> Value {
        return arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, dim, c(1)), c(0));
      });
}

Value reshapeTensor(OpBuilder &b, Location loc, Value v,
                    RankedTensorType type) {
  auto src = cast<RankedTensorType>(v.getType());
  if (src == type)
    return v;
  if (!src.hasStaticShape() || !type.hasStaticShape()) {
    // Dynamic dims: one collapse or expand when the dims group (inserting
    // or dropping unit dims, merging static ones, merging a dynamic dim
    // with static ones or splitting it); else through one dim, as below,
    // each `?` of the result sized by dynamicDimSize. An expand that
    // splits a product dim into its two dynamic factors is given their
    // sizes.
    auto outputShape = [&] {
      SmallVector<OpFoldResult> shape;
      for (int64_t i = 0; i < type.getRank(); ++i) {
        if (!type.isDynamicDim(i)) {
          shape.push_back(b.getIndexAttr(type.getDimSize(i)));
          continue;
        }
        // No size (a function without the dims' arguments): the check
        // after the conversion refuses the op; the IR stays valid.
        Value size = dynamicDimSize(b, loc, type, i);
        shape.push_back(size ? size : arith::ConstantIndexOp::create(b, loc, 0).getResult());
      }
      return shape;
    };
    if (src.getRank() > type.getRank()) {
      if (auto groups = getReassociationIndicesForCollapse(src.getShape(), type.getShape()))
        return tensor::CollapseShapeOp::create(b, loc, type, v, *groups);
    } else if (src.getRank() < type.getRank()) {
      if (auto groups = getReassociationIndicesForCollapse(type.getShape(), src.getShape())) {
        bool inferred = llvm::all_of(*groups, [&](const ReassociationIndices &g) {
          return llvm::count_if(g, [&](int64_t i) { return type.isDynamicDim(i); }) <= 1;
        });
        if (inferred)
          return tensor::ExpandShapeOp::create(b, loc, type, v, *groups);
        return tensor::ExpandShapeOp::create(b, loc, type, v, *groups, outputShape());
      }
    }
    ReassociationIndices all;
    for (int64_t i = 0; i < src.getRank(); ++i)
      all.push_back(i);
    auto flatType = RankedTensorType::get({ShapedType::kDynamic}, src.getElementType());
    Value flat = tensor::CollapseShapeOp::create(b, loc, flatType, v,
                                                 ArrayRef<ReassociationIndices>{all});
    ReassociationIndices allOut;
    for (int64_t i = 0; i < type.getRank(); ++i)
      allOut.push_back(i);
    return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                         ArrayRef<ReassociationIndices>{allOut}, outputShape());
  }
  // Through one dim: collapse to [N], then expand to the target. Rank 0 on
  // either side uses an empty reassociation.
  Value flat = v;
  int64_t n = src.getNumElements();
  auto flatType = RankedTensorType::get({n}, src.getElementType());
  if (src.getRank() == 0) {
    flat = tensor::ExpandShapeOp::create(b, loc, flatType, v,
                                         ArrayRef<ReassociationIndices>{});
  } else if (src.getRank() != 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < src.getRank(); ++i)
      all.push_back(i);
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, v,
                                           ArrayRef<ReassociationIndices>{all});
  }
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t i = 0; i < type.getRank(); ++i)
    all.push_back(i);
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       ArrayRef<ReassociationIndices>{all});
}

Value transposeTensor(OpBuilder &b, Location loc, Value v,
                      ArrayRef<int64_t> perm) {
  auto src = cast<RankedTensorType>(v.getType());
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == static_cast<int64_t>(i);
  if (identity)
    return v;
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(src.getDimSize(p));
  Value init = emptyTensor(b, loc, src.clone(shape), dynamicSizesOf(b, loc, v, perm));
  return linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
}

Value padTensor(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, Value padValue) {
  if (llvm::all_of(low, [](int64_t x) { return x == 0; }) &&
      llvm::all_of(high, [](int64_t x) { return x == 0; }))
    return v;
  auto src = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < src.getRank(); ++i)
    shape.push_back(src.isDynamicDim(i) ? ShapedType::kDynamic
                                        : src.getDimSize(i) + low[i] + high[i]);
  SmallVector<OpFoldResult> lo, hi;
  for (int64_t i = 0; i < src.getRank(); ++i) {
    lo.push_back(b.getIndexAttr(low[i]));
    hi.push_back(b.getIndexAttr(high[i]));
  }
  return tensor::PadOp::create(b, loc, src.clone(shape), v, lo, hi, padValue);
}

bool resolvePads(StringRef autoPad, std::optional<ArrayRef<int64_t>> pads,
                 ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                 ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                 ArrayRef<int64_t> dilations, SmallVectorImpl<int64_t> &begin,
                 SmallVectorImpl<int64_t> &end) {
  size_t n = in.size();
  for (size_t i = 0; i < n; ++i) {
    int64_t effective = (kernel[i] - 1) * dilations[i] + 1;
    if (ShapedType::isDynamic(in[i]) || ShapedType::isDynamic(out[i])) {
      // The stated pads (the caller pads more for ceil_mode); SAME's
      // depend on the size.
      if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
        return false;
      bool stated = autoPad != "VALID" && pads && !pads->empty();
      begin.push_back(stated ? (*pads)[i] : 0);
      end.push_back(stated ? (*pads)[i + n] : 0);
      continue;
    }
    int64_t total = std::max<int64_t>(
        0, (out[i] - 1) * strides[i] + effective - in[i]);
    int64_t lo = 0, hi = 0;
    if (autoPad == "SAME_UPPER") {
      lo = total / 2;
      hi = total - lo;
    } else if (autoPad == "SAME_LOWER") {
      hi = total / 2;
      lo = total - hi;
    } else if (autoPad != "VALID" && pads && !pads->empty()) {
      lo = (*pads)[i];
      hi = (*pads)[i + n];
    }
    // The last window may reach past the stated end pad (ceil_mode); pad
    // enough for every window the output shape asks for.
    hi = std::max(hi, (out[i] - 1) * strides[i] + effective - in[i] - lo);
    begin.push_back(lo);
    end.push_back(hi);
  }
  return true;
}

SmallVector<int64_t> valuesOr(std::optional<ArrayRef<int64_t>> values,
                              size_t count, int64_t fill) {
  if (values && values->size() == count)
    return SmallVector<int64_t>(values->begin(), values->end());
  return SmallVector<int64_t>(count, fill);
}

} // namespace kiln::lowering

SmallVector<Value> kiln::lowering::forLoop(OpBuilder &b, Location loc, Value lo, Value hi,
                                           ValueRange inits, LoopBody body) {
  auto loop = scf::ForOp::create(
      b, loc, lo, hi, arith::ConstantIndexOp::create(b, loc, 1), inits,
      [&](OpBuilder &nb, Location l, Value iv, ValueRange iters) {
        scf::YieldOp::create(nb, l, body(nb, l, iv, iters));
      });
  return SmallVector<Value>(loop.getResults());
}

namespace {
/// Offsets, sizes and strides selecting index `at` of dim `axis` of `v`
/// (its other dynamic dims whole, by tensor.dim).
void sliceAtIndex(OpBuilder &b, Location loc, Value v, int64_t axis, OpFoldResult at,
                  SmallVectorImpl<OpFoldResult> &offsets, SmallVectorImpl<OpFoldResult> &sizes,
                  SmallVectorImpl<OpFoldResult> &strides) {
  auto type = cast<RankedTensorType>(v.getType());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsets.push_back(d == axis ? at : b.getIndexAttr(0));
    if (d != axis && type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, v, d).getResult());
    else
      sizes.push_back(b.getIndexAttr(d == axis ? 1 : type.getDimSize(d)));
    strides.push_back(b.getIndexAttr(1));
  }
}
} // namespace

Value kiln::lowering::extractSliceAt(OpBuilder &b, Location loc, Value v, int64_t axis,
                                     OpFoldResult at) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + axis);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  sliceAtIndex(b, loc, v, axis, at, offsets, sizes, strides);
  return tensor::ExtractSliceOp::create(b, loc, type.clone(shape), v, offsets, sizes, strides);
}

Value kiln::lowering::insertSliceAt(OpBuilder &b, Location loc, Value part, Value dest,
                                    int64_t axis, OpFoldResult at) {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  sliceAtIndex(b, loc, dest, axis, at, offsets, sizes, strides);
  return tensor::InsertSliceOp::create(b, loc, part, dest, offsets, sizes, strides);
}

std::optional<Value> kiln::lowering::transposedConstant(OpBuilder &b, Location loc, Value v,
                                                        std::optional<int64_t> slab) {
  auto constant = v.getDefiningOp<kiln::onnx::ConstantOp>();
  ElementsAttr value = constant ? constant.getValueAttr() : ElementsAttr();
  auto type = value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
  int64_t rank = slab ? 3 : 2;
  if (!type || type.getRank() != rank || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat() || type.getElementTypeBitWidth() % 8 ||
      (slab && (*slab < 0 || *slab >= type.getDimSize(0))))
    return std::nullopt;
  int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
  auto target = RankedTensorType::get({cols, rows}, signlessType(type.getElementType()));
  // A splat transposed is the same splat.
  if (auto dense = dyn_cast<DenseElementsAttr>(value);
      dense && dense.isSplat() && target.getElementType() == type.getElementType())
    return arith::ConstantOp::create(b, loc, target, dense.resizeSplat(target)).getResult();
  std::optional<ArrayRef<char>> raw = kiln::rawElementData(value);
  if (!raw)
    return std::nullopt;
  size_t width = type.getElementTypeBitWidth() / 8;
  size_t slabBytes = size_t(rows * cols) * width;
  if (raw->size() != slabBytes * size_t(slab ? type.getDimSize(0) : 1))
    return std::nullopt;
  ArrayRef<char> data = raw->slice(slab ? size_t(*slab) * slabBytes : 0, slabBytes);
  std::vector<char> out(slabBytes);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(&out[(c * rows + r) * width], &data[(r * cols + c) * width], width);
  return arith::ConstantOp::create(b, loc, target, DenseElementsAttr::getFromRawBuffer(target, out))
      .getResult();
}
