//===- Linear.cpp - MatMul, Gemm and Einsum -> linalg.generic --------------===//
//
// Contractions are written as linalg.generic with the reduction dims placed
// before the innermost output dim (C[m, n] += A[m, k] * B[k, n] iterates
// m, k, n), so that the loops the CPU backend emits today vectorise along
// a contiguous output row. Convolutions are in Convolution.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

bool numeric(Type t) { return isSupportedFloat(t) || isSupportedInt(t); }

/// numpy.matmul with broadcast batch dims and 1-D promotion.
struct MatMulPattern : public OpConversionPattern<onnx::MatMulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type elem = elementTypeOf(op.getA());
    if (!numeric(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    FailureOr<Value> y =
        buildMatMul(rewriter, op.getLoc(), adaptor.getA(), adaptor.getB(),
                    convertedResultType(*typeConverter, op));
    if (failed(y))
      return unsupported(rewriter, op,
                         "inner dims differ, or a dynamic dim meets a static one");
    rewriter.replaceOp(op, *y);
    return success();
  }
};

/// Y = alpha * A' * B' + beta * C.
struct GemmPattern : public OpConversionPattern<onnx::GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getA());
    if (!numeric(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    RankedTensorType resultType = convertedResultType(*typeConverter, op);
    Type et = resultType.getElementType();
    MLIRContext *ctx = rewriter.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    Value bValue = adaptor.getB();
    bool transB = op.getTransB();
    if (transB) {
      if (std::optional<Value> t = transposedConstant(rewriter, loc, op.getB())) {
        bValue = *t;
        transB = false;
      }
    }
    // The contraction dim must be dynamic on both sides or on neither (a
    // static one could be longer than the other's run-time size).
    auto aType = cast<RankedTensorType>(adaptor.getA().getType());
    auto bType = cast<RankedTensorType>(bValue.getType());
    if (aType.getRank() != 2 || bType.getRank() != 2)
      return unsupported(rewriter, op, "A and B must be 2-D");
    if (aType.isDynamicDim(op.getTransA() ? 0 : 1) != bType.isDynamicDim(transB ? 1 : 0))
      return unsupported(rewriter, op, "the inner dim is dynamic on one side only");
    // Loops: m, k, n.
    AffineMap aMap = AffineMap::get(
        3, 0, op.getTransA() ? ArrayRef<AffineExpr>{d(1), d(0)}
                             : ArrayRef<AffineExpr>{d(0), d(1)}, ctx);
    AffineMap bMap = AffineMap::get(
        3, 0, transB ? ArrayRef<AffineExpr>{d(2), d(1)}
                     : ArrayRef<AffineExpr>{d(1), d(2)}, ctx);
    AffineMap outMap = AffineMap::get(3, 0, {d(0), d(2)}, ctx);
    Value init = filledTensor(rewriter, loc, resultType,
                              scalarConstant(rewriter, loc, et, 0));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{adaptor.getA(), bValue},
        ValueRange{init}, ArrayRef<AffineMap>{aMap, bMap, outMap},
        ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                      utils::IteratorType::reduction,
                                      utils::IteratorType::parallel},
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, multiplyAdd(b, l, args[2], args[0], args[1]));
        });
    Value y = generic.getResult(0);
    double alpha = op.getAlphaAttr() ? op.getAlphaAttr().getValueAsDouble() : 1.0;
    double beta = op.getBetaAttr() ? op.getBetaAttr().getValueAsDouble() : 1.0;
    bool hasC = !isa<NoneType>(op.getC().getType()) && beta != 0.0;
    if (alpha != 1.0 || hasC) {
      SmallVector<Value> ins{y};
      if (hasC)
        ins.push_back(adaptor.getC());
      bool isFloat = isa<FloatType>(et);
      y = broadcastGeneric(
          rewriter, loc, ins, resultType,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value r = args[0];
            auto mul = [&](Value x, double s) -> Value {
              if (s == 1.0) return x;
              Value c = scalarConstant(b, l, et, s);
              return isFloat ? Value(arith::MulFOp::create(b, l, x, c))
                             : Value(arith::MulIOp::create(b, l, x, c));
            };
            r = mul(r, alpha);
            if (args.size() > 1) {
              Value c = mul(args[1], beta);
              r = isFloat ? Value(arith::AddFOp::create(b, l, r, c))
                          : Value(arith::AddIOp::create(b, l, r, c));
            }
            return r;
          });
    }
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// Einsum as one linalg.generic: a loop dim per ellipsis dim and per
/// letter; operands read their letters' dims (a repeated letter reads a
/// diagonal), letters missing from the output are reductions, the body
/// multiplies the operands into the accumulator.
struct EinsumPattern : public OpConversionPattern<onnx::EinsumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::EinsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ValueRange inputs = adaptor.getInputs();
    if (inputs.empty())
      return unsupported(rewriter, op, "no inputs");
    Type elem = elementTypeOf(op->getOperand(0));
    if (!numeric(elem))
      return unsupported(rewriter, op, "element type " + typeName(elem) + " is not supported yet");
    std::string error;
    std::optional<onnx::EinsumTerms> terms = onnx::parseEinsum(op.getEquation(), error);
    if (!terms)
      return unsupported(rewriter, op, error);
    if (terms->inputs.size() != inputs.size())
      return unsupported(rewriter, op, "the equation does not match the inputs");
    // Letters per term (ellipsis as '.'), ellipsis dims per operand.
    SmallVector<std::string> letters(terms->inputs.begin(), terms->inputs.end());
    int64_t ellRank = 0;
    SmallVector<int64_t> ellDims(letters.size(), 0);
    for (size_t k = 0; k < letters.size(); ++k) {
      bool hasEll = letters[k].find('.') != std::string::npos;
      int64_t rank = cast<RankedTensorType>(inputs[k].getType()).getRank();
      int64_t named = static_cast<int64_t>(letters[k].size()) - (hasEll ? 1 : 0);
      if (named > rank || (!hasEll && named != rank))
        return unsupported(rewriter, op, "a term does not match its operand's rank");
      ellDims[k] = hasEll ? rank - named : 0;
      ellRank = std::max(ellRank, ellDims[k]);
    }
    // Loop dims: ellipsis dims, then output letters, then reduced letters.
    std::string outLetters = terms->output;
    SmallVector<char> order;
    for (char ch : outLetters)
      if (ch != '.')
        order.push_back(ch);
    SmallVector<char> reduced;
    for (const std::string &l : letters)
      for (char ch : l)
        if (ch != '.' && !llvm::is_contained(order, ch) && !llvm::is_contained(reduced, ch))
          reduced.push_back(ch);
    llvm::DenseMap<char, unsigned> dimOf;
    for (char ch : order)
      dimOf[ch] = ellRank + dimOf.size();
    for (char ch : reduced)
      dimOf[ch] = ellRank + dimOf.size();
    unsigned nd = ellRank + dimOf.size();
    // Loop sizes: a static size where an operand has one (ellipsis dims
    // broadcast from 1, aligned right), else dynamic, with an operand dim
    // that has it (for the output's sizes).
    SmallVector<int64_t> size(nd, 1);
    SmallVector<std::pair<size_t, int64_t>> source(nd, {0, -1});
    SmallVector<bool> seen(nd, false);
    auto take = [&](unsigned d, int64_t s, size_t k, int64_t pos, bool named) {
      bool toStatic = ShapedType::isDynamic(size[d]) && !ShapedType::isDynamic(s);
      bool replace = !seen[d] || (named ? toStatic
                                        : (size[d] == 1 && s != 1) || (toStatic && s != 1));
      seen[d] = true;
      if (!replace)
        return;
      size[d] = s;
      source[d] = {k, pos};
    };
    for (size_t k = 0; k < letters.size(); ++k) {
      auto shape = cast<RankedTensorType>(inputs[k].getType()).getShape();
      int64_t pos = 0;
      for (char ch : letters[k]) {
        if (ch == '.') {
          for (int64_t e = 0; e < ellDims[k]; ++e, ++pos)
            take(ellRank - ellDims[k] + e, shape[pos], k, pos, false);
          continue;
        }
        take(dimOf[ch], shape[pos], k, pos, true);
        ++pos;
      }
    }
    // A letter has one size in every operand (only the ellipsis broadcasts).
    for (size_t k = 0; k < letters.size(); ++k) {
      auto shape = cast<RankedTensorType>(inputs[k].getType()).getShape();
      int64_t pos = 0;
      for (char ch : letters[k]) {
        if (ch == '.') {
          pos += ellDims[k];
          continue;
        }
        int64_t s = shape[pos++], want = size[dimOf[ch]];
        if (!ShapedType::isDynamic(s) && !ShapedType::isDynamic(want) && s != want)
          return unsupported(rewriter, op,
                             std::string("letter '") + ch + "' has sizes " + std::to_string(s) +
                                 " and " + std::to_string(want));
      }
    }
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps;
    for (size_t k = 0; k < letters.size(); ++k) {
      auto shape = cast<RankedTensorType>(inputs[k].getType()).getShape();
      SmallVector<AffineExpr> exprs;
      int64_t pos = 0;
      for (char ch : letters[k]) {
        if (ch == '.') {
          for (int64_t e = 0; e < ellDims[k]; ++e) {
            unsigned d = ellRank - ellDims[k] + e;
            exprs.push_back(shape[pos] == 1 && size[d] != 1 ? getAffineConstantExpr(0, ctx)
                                                             : getAffineDimExpr(d, ctx));
            ++pos;
          }
          continue;
        }
        exprs.push_back(getAffineDimExpr(dimOf[ch], ctx));
        ++pos;
      }
      maps.push_back(AffineMap::get(nd, 0, exprs, ctx));
    }
    SmallVector<AffineExpr> outExprs;
    SmallVector<int64_t> outShape;
    SmallVector<Value> outSizes;
    auto addOut = [&](unsigned d) {
      outExprs.push_back(getAffineDimExpr(d, ctx));
      outShape.push_back(size[d]);
      if (ShapedType::isDynamic(size[d]))
        outSizes.push_back(
            tensor::DimOp::create(rewriter, loc, inputs[source[d].first], source[d].second));
    };
    // In the output term's order; '.' stands for the ellipsis dims.
    for (char ch : outLetters) {
      if (ch == '.') {
        for (unsigned d = 0; d < ellRank; ++d)
          addOut(d);
        continue;
      }
      addOut(dimOf[ch]);
    }
    maps.push_back(AffineMap::get(nd, 0, outExprs, ctx));
    RankedTensorType resultType = convertedResultType(*typeConverter, op);
    Type et = resultType.getElementType();
    auto outType = RankedTensorType::get(outShape, et);
    bool fits = outType.hasStaticShape() && resultType.hasStaticShape()
                    ? outType.getNumElements() == resultType.getNumElements()
                    : outType.getShape() == resultType.getShape();
    if (!fits)
      return unsupported(rewriter, op, "the equation's output does not match the result shape");
    SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::parallel);
    for (char ch : reduced)
      iters[dimOf[ch]] = utils::IteratorType::reduction;
    Value init = linalg::FillOp::create(rewriter, loc, scalarConstant(rewriter, loc, et, 0),
                                        emptyTensor(rewriter, loc, outType, outSizes))
                     .getResult(0);
    bool isFloat = isa<FloatType>(et);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, outType, inputs, ValueRange{init}, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value prod = args[0];
          for (Value v : args.drop_front().drop_back())
            prod = isFloat ? Value(arith::MulFOp::create(b, l, prod, v))
                           : Value(arith::MulIOp::create(b, l, prod, v));
          Value acc = args.back();
          Value r = isFloat ? Value(arith::AddFOp::create(b, l, acc, prod))
                            : Value(arith::AddIOp::create(b, l, acc, prod));
          linalg::YieldOp::create(b, l, r);
        });
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, generic.getResult(0), resultType));
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateLinearPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<MatMulPattern, GemmPattern, EinsumPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering

FailureOr<Value> kiln::lowering::buildMatMul(OpBuilder &rewriter, Location loc,
                                             Value a, Value b,
                                             RankedTensorType resultType) {
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(b.getType());
  Type et = aType.getElementType();
  // Promote 1-D operands.
  if (aType.getRank() == 1) {
    aType = RankedTensorType::get({1, aType.getDimSize(0)}, et);
    a = reshapeTensor(rewriter, loc, a, aType);
  }
  if (bType.getRank() == 1) {
    bType = RankedTensorType::get({bType.getDimSize(0), 1}, et);
    b = reshapeTensor(rewriter, loc, b, bType);
  }
  ArrayRef<int64_t> as = aType.getShape(), bs = bType.getShape();
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    return failure();
  SmallVector<int64_t> batch;
  size_t ab = as.size() - 2, bb = bs.size() - 2, nb = std::max(ab, bb);
  for (size_t i = 0; i < nb; ++i) {
    int64_t x = i + ab >= nb ? as[i + ab - nb] : 1;
    int64_t y = i + bb >= nb ? bs[i + bb - nb] : 1;
    // A dynamic batch dim against a static one other than 1: the static
    // one could be shorter than the loop.
    if ((ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && y != 1) ||
        (ShapedType::isDynamic(y) && !ShapedType::isDynamic(x) && x != 1))
      return failure();
    batch.push_back(x == 1 ? y : x);
  }
  // Loops: batch..., m, k, n.
  MLIRContext *ctx = rewriter.getContext();
  unsigned nd = nb + 3;
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto operandMap = [&](ArrayRef<int64_t> shape, size_t nbatch, AffineExpr r,
                        AffineExpr c) {
    SmallVector<AffineExpr> e;
    for (size_t i = 0; i < nbatch; ++i) {
      size_t loop = nb - nbatch + i;
      e.push_back(shape[i] == 1 && batch[loop] != 1
                      ? getAffineConstantExpr(0, ctx)
                      : dim(loop));
    }
    e.push_back(r);
    e.push_back(c);
    return AffineMap::get(nd, 0, e, ctx);
  };
  AffineMap aMap = operandMap(as, ab, dim(nb), dim(nb + 1));
  AffineMap bMap = operandMap(bs, bb, dim(nb + 1), dim(nb + 2));
  SmallVector<AffineExpr> outExprs;
  for (unsigned i = 0; i < nb; ++i)
    outExprs.push_back(dim(i));
  outExprs.push_back(dim(nb));
  outExprs.push_back(dim(nb + 2));
  AffineMap outMap = AffineMap::get(nd, 0, outExprs, ctx);
  SmallVector<int64_t> outShape(batch);
  outShape.push_back(m);
  outShape.push_back(n);
  auto outType = RankedTensorType::get(outShape, et);
  Value init =
      filledTensor(rewriter, loc, outType, scalarConstant(rewriter, loc, et, 0));
  SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::parallel);
  iters[nb + 1] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      rewriter, loc, outType, ValueRange{a, b}, ValueRange{init},
      ArrayRef<AffineMap>{aMap, bMap, outMap}, iters,
      [](OpBuilder &nb2, Location l, ValueRange args) {
        linalg::YieldOp::create(nb2, l,
                                multiplyAdd(nb2, l, args[2], args[0], args[1]));
      });
  return reshapeTensor(rewriter, loc, generic.getResult(0), resultType);
}
