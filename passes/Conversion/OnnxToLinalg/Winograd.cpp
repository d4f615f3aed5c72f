//===- Winograd.cpp - 3x3 convolutions as Winograd F(2x2, 3x3) -----------===//
//
// A 3x3, stride-1 convolution computes each 2x2 block of outputs from the
// 4x4 window of inputs under it. Winograd's minimal filtering algorithm
// F(2x2, 3x3) does that with 16 multiplies per input channel instead of
// 36: with d the 4x4 window and g the 3x3 kernel,
//
//   y = A^T [(G g G^T) . (B^T d B)] A
//
// (`.` elementwise). Per (output channel k, input channel c) the kernel's
// transform U = G g G^T is a constant computed here; the input's
// transform V = B^T d B is 16 values per (c, tile), and the 16 products
// summed over c are 16 matrix products U[ab] (K x C) x V[ab] (C x tiles)
// (a, b in 0..3): one contraction with a batch of 16, which the CPU
// kernels run like a flattened 1x1 conv. The output transform sums them
// back into the 2x2 blocks and adds the bias.
//
// What is emitted, all on tensors:
//   - the input padded to 2 * tiles + 2 rows and columns (zeros past the
//     conv's own padding for odd output sizes);
//   - one all-parallel generic over [N, C, TH, TW] reading the 16 taps
//     (stride-2 slices of the padded input) and writing the 16 V[ab],
//     slices of one [16, N, C, TH, TW] tensor;
//   - the contraction of V [16, N, C, TH*TW] with U [16, K, C];
//   - per output parity (i, j) a generic summing 9 of the products plus
//     the bias, inserted into the output with strides 2.
// The transforms use B and A's 0/1/-1 entries as adds and subtracts.
// Rounding differs from the direct sum by a few ulps of the inputs'
// magnitude (the transforms add up to 4 inputs before multiplying).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

using namespace mlir;

namespace kiln::lowering {

namespace {

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  return llvm::map_to_vector(values, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); });
}

/// A slice of `v` at `offsets` with `sizes` and `strides`.
Value slice(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> offsets,
            ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
  auto type = cast<RankedTensorType>(v.getType());
  return tensor::ExtractSliceOp::create(b, loc, type.clone(sizes), v, indexAttrs(b, offsets),
                                        indexAttrs(b, sizes), indexAttrs(b, strides));
}

/// All-parallel generic over the shape of `outs` (identity maps for
/// `ins` and `outs`, plus `extra` inputs with their own maps), with
/// `body` giving the results from the block arguments.
SmallVector<Value> parallelGeneric(
    OpBuilder &b, Location loc, ValueRange ins, ValueRange extra, ArrayRef<AffineMap> extraMaps,
    ArrayRef<Value> outs,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(outs.front().getType());
  unsigned rank = type.getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  SmallVector<Value> inputs(ins.begin(), ins.end());
  inputs.append(extra.begin(), extra.end());
  SmallVector<AffineMap> maps(ins.size(), identity);
  maps.append(extraMaps.begin(), extraMaps.end());
  maps.append(outs.size(), identity);
  SmallVector<Type> results;
  for (Value o : outs)
    results.push_back(o.getType());
  auto op = linalg::GenericOp::create(
      b, loc, results, inputs, outs, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args));
      });
  return SmallVector<Value>(op.getResults());
}

/// sum of `terms` with `signs` (+1/-1; the first is taken as +1 or -1).
Value signedSum(OpBuilder &b, Location loc, ArrayRef<Value> terms, ArrayRef<int> signs) {
  Value acc = terms[0];
  if (signs[0] < 0)
    acc = arith::NegFOp::create(b, loc, acc);
  for (size_t t = 1; t < terms.size(); ++t)
    acc = signs[t] > 0 ? Value(arith::AddFOp::create(b, loc, acc, terms[t]))
                       : Value(arith::SubFOp::create(b, loc, acc, terms[t]));
  return acc;
}

/// B^T's rows: which two of d0..d3 each of the 4 outputs combines, and how.
///   v0 = d0 - d2, v1 = d1 + d2, v2 = d2 - d1, v3 = d1 - d3.
constexpr int kBtTap[4][2] = {{0, 2}, {1, 2}, {2, 1}, {1, 3}};
constexpr int kBtSign[4][2] = {{1, -1}, {1, 1}, {1, -1}, {1, -1}};

/// A^T's rows: y0 = m0 + m1 + m2, y1 = m1 - m2 - m3.
constexpr int kAtTap[2][3] = {{0, 1, 2}, {1, 2, 3}};
constexpr int kAtSign[2][3] = {{1, 1, 1}, {1, -1, -1}};

/// G g G^T for one 3x3 kernel g (row-major), in double: G's rows are
/// (1, 0, 0), (1/2, 1/2, 1/2), (1/2, -1/2, 1/2), (0, 0, 1).
void kernelTransform(const float *g, float u[16]) {
  const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  double t[4][3];
  for (int a = 0; a < 4; ++a)
    for (int j = 0; j < 3; ++j)
      t[a][j] = G[a][0] * g[j] + G[a][1] * g[3 + j] + G[a][2] * g[6 + j];
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      u[a * 4 + b] = float(t[a][0] * G[b][0] + t[a][1] * G[b][1] + t[a][2] * G[b][2]);
}

} // namespace

bool winogradFits(RankedTensorType xType, RankedTensorType wType, RankedTensorType yType,
                  int64_t group, ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  if (xType.getRank() != 4 || wType.getRank() != 4 || yType.getRank() != 4 ||
      !xType.hasStaticShape() || !wType.hasStaticShape() || !yType.hasStaticShape() ||
      !xType.getElementType().isF32() || group != 1 ||
      llvm::any_of(strides, [](int64_t s) { return s != 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d != 1; }) || wType.getDimSize(2) != 3 ||
      wType.getDimSize(3) != 3)
    return false;
  // The transforms cost about 16 / K of the products' work per input and
  // 9 / C per output: worth it for the ResNets' 64 channels and up, not
  // for a stem's 3 input channels. Maps under 4x4 have too few tiles.
  int64_t c = xType.getDimSize(1), k = wType.getDimSize(0);
  return c >= 64 && k >= 64 && yType.getDimSize(2) >= 4 && yType.getDimSize(3) >= 4;
}

Value buildWinogradConv(OpBuilder &b, Location loc, Value x, ArrayRef<float> weights,
                        Value bias, ArrayRef<int64_t> padLo, RankedTensorType yType,
                        bool relu) {
  auto xType = cast<RankedTensorType>(x.getType());
  Type f32 = xType.getElementType();
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1);
  int64_t k = yType.getDimSize(1), oh = yType.getDimSize(2), ow = yType.getDimSize(3);
  int64_t th = (oh + 1) / 2, tw = (ow + 1) / 2;

  // The input padded to the tiles' windows: 2 * tiles + 2 rows/columns.
  int64_t hiH = 2 * th + 2 - xType.getDimSize(2) - padLo[0];
  int64_t hiW = 2 * tw + 2 - xType.getDimSize(3) - padLo[1];
  Value xp = padTensor(b, loc, x, {0, 0, padLo[0], padLo[1]}, {0, 0, hiH, hiW},
                       scalarConstant(b, loc, f32, 0));

  // V[ab] = B^T d B for every (n, c, tile): rows first, then columns.
  SmallVector<Value> taps;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j)
      taps.push_back(slice(b, loc, xp, {0, 0, i, j}, {n, c, th, tw}, {1, 1, 2, 2}));
  // The 16 V[ab] are written in place into slices of one [16, N, C, TH,
  // TW] tensor, so that one batched contraction reads them.
  Value vAll = emptyTensor(b, loc, RankedTensorType::get({16, n, c, th, tw}, f32));
  SmallVector<Value> vOuts;
  for (int64_t ab = 0; ab < 16; ++ab)
    vOuts.push_back(extractSliceAt(b, loc, vAll, 0, b.getIndexAttr(ab)));
  SmallVector<Value> v = parallelGeneric(
      b, loc, taps, {}, {}, vOuts, [](OpBuilder &nb, Location l, ValueRange d) {
        Value rows[4][4];
        for (int a = 0; a < 4; ++a)
          for (int j = 0; j < 4; ++j)
            rows[a][j] = signedSum(nb, l, {d[kBtTap[a][0] * 4 + j], d[kBtTap[a][1] * 4 + j]},
                                   kBtSign[a]);
        SmallVector<Value> out;
        for (int a = 0; a < 4; ++a)
          for (int bb = 0; bb < 4; ++bb)
            out.push_back(signedSum(nb, l, {rows[a][kBtTap[bb][0]], rows[a][kBtTap[bb][1]]},
                                    kBtSign[bb]));
        return out;
      });
  for (int64_t ab = 0; ab < 16; ++ab)
    vAll = insertSliceAt(b, loc, v[ab], vAll, 0, b.getIndexAttr(ab));

  // U[ab] = G g G^T per (k, c), as one [16, K, C] constant.
  std::vector<float> u(16 * k * c);
  float t[16];
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t cc = 0; cc < c; ++cc) {
      kernelTransform(&weights[(kk * c + cc) * 9], t);
      for (int64_t ab = 0; ab < 16; ++ab)
        u[(ab * k + kk) * c + cc] = t[ab];
    }
  auto uType = RankedTensorType::get({16, k, c}, f32);
  Value weight =
      arith::ConstantOp::create(b, loc, uType, DenseElementsAttr::get(uType, ArrayRef<float>(u)));

  // M[ab, n, k, t] = sum over c of U[ab, k, c] V[ab, n, c, t]: loops ab,
  // n, k, t, c (the reduction before the output's innermost dim, as the
  // kernels want).
  MLIRContext *ctx = b.getContext();
  int64_t tiles = th * tw;
  Value vFlat = reshapeTensor(b, loc, vAll, RankedTensorType::get({16, n, c, tiles}, f32));
  auto mType = RankedTensorType::get({16, n, k, tiles}, f32);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto products = linalg::GenericOp::create(
      b, loc, mType, ValueRange{vFlat, weight},
      ValueRange{filledTensor(b, loc, mType, scalarConstant(b, loc, f32, 0))},
      ArrayRef<AffineMap>{AffineMap::get(5, 0, {d(0), d(1), d(4), d(3)}, ctx),
                          AffineMap::get(5, 0, {d(0), d(2), d(4)}, ctx),
                          AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel, utils::IteratorType::parallel,
                                    utils::IteratorType::parallel, utils::IteratorType::parallel,
                                    utils::IteratorType::reduction},
      [](OpBuilder &nb, Location l, ValueRange args) {
        Value p = arith::MulFOp::create(nb, l, args[0], args[1]);
        linalg::YieldOp::create(nb, l, ValueRange{arith::AddFOp::create(nb, l, args[2], p)});
      });
  Value mAll = reshapeTensor(b, loc, products.getResult(0),
                             RankedTensorType::get({16, n, k, th, tw}, f32));
  auto productAt = [&](int64_t ab, int64_t rows, int64_t cols) -> Value {
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({n, k, rows, cols}, f32), mAll,
        indexAttrs(b, {ab, 0, 0, 0, 0}), indexAttrs(b, {1, n, k, rows, cols}),
        indexAttrs(b, {1, 1, 1, 1, 1}));
  };

  // y[2 th + i, 2 tw + j] = sum over a, b of A^T[i][a] A^T[j][b] M[ab],
  // plus the bias (and through the ReLU), one generic per parity (i, j),
  // stored with strides 2.
  Value y = emptyTensor(b, loc, yType);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      int64_t rows = (oh - i + 1) / 2, cols = (ow - j + 1) / 2;
      SmallVector<Value> ins;
      for (int a : kAtTap[i])
        for (int bb : kAtTap[j])
          ins.push_back(productAt(a * 4 + bb, rows, cols));
      SmallVector<Value> extra;
      SmallVector<AffineMap> extraMaps;
      if (bias) {
        extra.push_back(bias);
        extraMaps.push_back(AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx));
      }
      auto partType = RankedTensorType::get({n, k, rows, cols}, f32);
      Value part = parallelGeneric(
          b, loc, ins, extra, extraMaps, {emptyTensor(b, loc, partType)},
          [&, i, j](OpBuilder &nb, Location l, ValueRange args) -> SmallVector<Value> {
            Value sums[3];
            for (int a = 0; a < 3; ++a)
              sums[a] = signedSum(nb, l, {args[a * 3], args[a * 3 + 1], args[a * 3 + 2]},
                                  kAtSign[j]);
            Value r = signedSum(nb, l, {sums[0], sums[1], sums[2]}, kAtSign[i]);
            if (bias)
              r = arith::AddFOp::create(nb, l, r, args[9]);
            if (relu)
              r = arith::MaximumFOp::create(nb, l, r, scalarConstant(nb, l, r.getType(), 0));
            return {r};
          })[0];
      y = tensor::InsertSliceOp::create(b, loc, part, y, indexAttrs(b, {0, 0, i, j}),
                                        indexAttrs(b, {n, k, rows, cols}),
                                        indexAttrs(b, {1, 1, 2, 2}));
    }
  return y;
}

} // namespace kiln::lowering
