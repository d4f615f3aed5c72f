//===- Text.cpp - TfIdfVectorizer -> linalg -------------------------------===//
//
// TfIdfVectorizer counts, per row of token ids, the occurrences of every
// n-gram of its pool, with skips. Everything about the pool is known at
// compile time, so it becomes constant tables and two generics:
//   counts[b, p] = sum over skip s and start i of
//                  [X[b, i + k(s+1)] == token(p, k) for every k < n(p)]
//     (n-grams of size outside [min_gram_length, max_gram_length] count
//     nothing; unigrams only with s = 0, as the ONNX reference does);
//   y[b, c] = weighting(sum over p with ngram_indexes[p] == c of counts).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

struct TfIdfVectorizerPattern : public OpConversionPattern<onnx::TfIdfVectorizerOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::TfIdfVectorizerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = elementTypeOf(op.getX());
    if (!isSupportedInt(elem))
      return unsupported(rewriter, op, "only int32/int64 token ids are supported (not " +
                                           typeName(elem) + ")");
    auto pool = op.getPoolInt64s();
    if (!pool)
      return unsupported(rewriter, op, "pool_int64s is required (string pools are not "
                                       "supported)");
    StringRef mode = op.getMode();
    if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
      return unsupported(rewriter, op, "mode '" + mode + "' is not one of TF, IDF, TFIDF");
    int64_t minGram = op.getMinGramLength(), maxGram = op.getMaxGramLength();
    int64_t skips = op.getMaxSkipCount() + 1;
    ArrayRef<int64_t> counts = op.getNgramCounts(), indexes = op.getNgramIndexes();
    if (minGram < 1 || maxGram < minGram || skips < 1)
      return unsupported(rewriter, op, "invalid gram lengths or skip count");

    // The pool's n-grams: tokens, padded to the longest; sizes (0: never
    // counted); output columns.
    SmallVector<int64_t> sizes;
    SmallVector<SmallVector<int64_t>> grams;
    for (size_t i = 0; i < counts.size(); ++i) {
      int64_t n = i + 1;
      int64_t begin = counts[i];
      int64_t end = i + 1 < counts.size() ? counts[i + 1] : int64_t(pool->size());
      if (begin < 0 || end > int64_t(pool->size()) || begin > end || (end - begin) % n != 0)
        return unsupported(rewriter, op, "ngram_counts does not split the pool into n-grams");
      for (int64_t s = begin; s < end; s += n) {
        grams.emplace_back(pool->begin() + s, pool->begin() + s + n);
        sizes.push_back(n >= minGram && n <= maxGram ? n : 0);
      }
    }
    int64_t numGrams = grams.size();
    if (numGrams == 0 || int64_t(indexes.size()) != numGrams)
      return unsupported(rewriter, op, "ngram_indexes must give one output column per n-gram");
    int64_t width = 1;
    for (int64_t n : sizes)
      width = std::max(width, n);
    RankedTensorType yType = convertedResultType(*typeConverter, op);
    int64_t columns = yType.getShape().back();
    for (int64_t c : indexes)
      if (c < 0 || c >= columns)
        return unsupported(rewriter, op, "ngram_indexes out of range of the output");
    std::optional<ArrayRef<float>> weights = op.getWeights();
    if (weights && int64_t(weights->size()) != columns)
      return unsupported(rewriter, op, "weights must have one value per output column");

    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    if (xType.getRank() == 1)
      x = reshapeTensor(rewriter, loc, x, RankedTensorType::get({1, xType.getDimSize(0)},
                                                                xType.getElementType()));
    else if (xType.getRank() != 2)
      return unsupported(rewriter, op, "X must be [C] or [B, C]");
    xType = cast<RankedTensorType>(x.getType());
    int64_t rows = xType.getDimSize(0), len = xType.getDimSize(1);
    if (yType.getNumElements() != rows * columns)
      return unsupported(rewriter, op, "Y must be [B, C] for X [B, N] (or [C] for X [N])");
    if (len == 0)
      return unsupported(rewriter, op, "empty rows are not supported");

    Type i64 = rewriter.getI64Type(), f32 = rewriter.getF32Type();
    SmallVector<int64_t> tokens;
    for (const auto &g : grams)
      for (int64_t k = 0; k < width; ++k)
        tokens.push_back(k < int64_t(g.size()) ? g[k] : 0);
    auto table = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> values) -> Value {
      auto type = RankedTensorType::get(shape, i64);
      return arith::ConstantOp::create(rewriter, loc, type,
                                       DenseElementsAttr::get(type, values));
    };
    Value tokTable = table({numGrams, width}, tokens);
    Value sizeTable = table({numGrams}, sizes);

    // counts[b, p]: loops b, p, skip, start (the last two reduce).
    MLIRContext *ctx = rewriter.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    auto countType = RankedTensorType::get({rows, numGrams}, i64);
    Value zero = filledTensor(rewriter, loc, countType, scalarConstant(rewriter, loc, i64, 0));
    // A [skips, len] operand only gives the reduction loops their ranges.
    Value shapeOnly = emptyTensor(rewriter, loc, RankedTensorType::get({skips, len}, i64));
    Value gramCounts =
        linalg::GenericOp::create(
            rewriter, loc, countType, ValueRange{sizeTable, shapeOnly}, ValueRange{zero},
            ArrayRef<AffineMap>{AffineMap::get(4, 0, {d(1)}, ctx),
                                AffineMap::get(4, 0, {d(2), d(3)}, ctx),
                                AffineMap::get(4, 0, {d(0), d(1)}, ctx)},
            ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                          utils::IteratorType::parallel,
                                          utils::IteratorType::reduction,
                                          utils::IteratorType::reduction},
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value row = linalg::IndexOp::create(b, l, 0);
              Value p = linalg::IndexOp::create(b, l, 1);
              Value s = linalg::IndexOp::create(b, l, 2);
              Value start = linalg::IndexOp::create(b, l, 3);
              auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, l, v); };
              auto i64c = [&](int64_t v) { return scalarConstant(b, l, i64, v); };
              Value n = a[0];
              Value step = arith::AddIOp::create(b, l, s, idx(1));
              // Counted: a pool size in range, and unigrams only at skip 0.
              Value ok = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, n, i64c(0));
              Value uni = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, n, i64c(1));
              Value skipped = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, s, idx(0));
              ok = arith::AndIOp::create(b, l, ok,
                                         arith::XOrIOp::create(
                                             b, l, arith::AndIOp::create(b, l, uni, skipped),
                                             arith::ConstantIntOp::create(b, l, 1, 1)));
              for (int64_t k = 0; k < width; ++k) {
                // Token k matters when k < n; it must lie inside the row.
                Value pos = arith::AddIOp::create(
                    b, l, start, arith::MulIOp::create(b, l, step, idx(k)));
                Value inRow = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, pos, idx(len));
                Value safe = arith::MinUIOp::create(b, l, pos, idx(len - 1));
                Value tok = tensor::ExtractOp::create(b, l, x, ValueRange{row, safe});
                tok = castScalar(b, l, tok, elem, i64);
                Value want = tensor::ExtractOp::create(b, l, tokTable, ValueRange{p, idx(k)});
                Value same = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, tok, want);
                Value used = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i64c(k), n);
                Value good = arith::AndIOp::create(b, l, inRow, same);
                Value pass = arith::OrIOp::create(
                    b, l, arith::XOrIOp::create(b, l, used, arith::ConstantIntOp::create(b, l, 1, 1)),
                    good);
                ok = arith::AndIOp::create(b, l, ok, pass);
              }
              Value inc = arith::ExtUIOp::create(b, l, i64, ok);
              linalg::YieldOp::create(b, l, Value(arith::AddIOp::create(b, l, a[2], inc)));
            })
            .getResult(0);

    // Per output column: the summed counts, then the weighting.
    Value colTable = table({numGrams}, indexes);
    auto freqType = RankedTensorType::get({rows, columns}, i64);
    Value freqInit = filledTensor(rewriter, loc, freqType, scalarConstant(rewriter, loc, i64, 0));
    Value freq =
        linalg::GenericOp::create(
            rewriter, loc, freqType, ValueRange{gramCounts, colTable}, ValueRange{freqInit},
            ArrayRef<AffineMap>{AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                                AffineMap::get(3, 0, {d(2)}, ctx),
                                AffineMap::get(3, 0, {d(0), d(1)}, ctx)},
            ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                          utils::IteratorType::parallel,
                                          utils::IteratorType::reduction},
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value c = arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, 1));
              Value mine = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], c);
              Value add = arith::SelectOp::create(b, l, mine, a[0], scalarConstant(b, l, i64, 0));
              linalg::YieldOp::create(b, l, Value(arith::AddIOp::create(b, l, a[2], add)));
            })
            .getResult(0);
    SmallVector<float> w(columns, 1.0f);
    if (weights)
      w.assign(weights->begin(), weights->end());
    auto wType = RankedTensorType::get({columns}, f32);
    Value wTable = arith::ConstantOp::create(rewriter, loc, wType,
                                             DenseElementsAttr::get(wType, ArrayRef<float>(w)));
    auto outType = RankedTensorType::get({rows, columns}, f32);
    Value y = broadcastGeneric(
        rewriter, loc, ValueRange{freq, wTable}, outType,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value f = arith::SIToFPOp::create(b, l, f32, a[0]);
          if (mode == "TF")
            return f;
          if (mode == "TFIDF")
            return arith::MulFOp::create(b, l, f, a[1]);
          Value seen = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, a[0],
                                             scalarConstant(b, l, i64, 0));
          return arith::SelectOp::create(b, l, seen, a[1], scalarConstant(b, l, f32, 0));
        });
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, y, yType));
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateTextPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TfIdfVectorizerPattern>(converter, patterns.getContext());
}
} // namespace kiln::lowering
