//===- Winograd.cpp - 3x3 convolutions as Winograd F(m x m, 3x3) ----------===//
//
// A 3x3, stride-1 convolution computes each m x m block of outputs from
// the (m + 2) x (m + 2) window of inputs under it. Winograd's minimal
// filtering algorithm F(m x m, 3x3) does that with (m + 2)^2 multiplies
// per input channel instead of 9 m^2: with d the window and g the 3x3
// kernel,
//
//   y = A^T [(G g G^T) . (B^T d B)] A
//
// (`.` elementwise). Per (output channel k, input channel c) the kernel's
// transform U = G g G^T is a constant computed here; the input's
// transform V = B^T d B is (m + 2)^2 values per (c, tile), and the
// products summed over c are (m + 2)^2 matrix products U[ab] (K x C) x
// V[ab] (C x tiles): one contraction with a batch of (m + 2)^2, which the
// CPU kernels run like a flattened 1x1 conv. The output transform sums
// them back into the m x m blocks and adds the bias.
//
// Two variants: F(2x2, 3x3) (16 products per 4 outputs, 2.25x fewer
// multiplies) and, for maps of 28x28 and up, F(4x4, 3x3) (36 per 16, 4x
// fewer; Lavin and Gray's matrices). F(4x4) has bigger transforms, 2.25x
// the transformed weights and tiles four times as coarse, which small
// maps fill badly.
//
// What is emitted, all on tensors:
//   - the input padded to m * tiles + 2 rows and columns (zeros past the
//     conv's own padding when m does not divide the output size);
//   - one all-parallel generic over [N, C, TH, TW] reading the (m + 2)^2
//     taps (stride-m slices of the padded input) and writing the V[ab],
//     slices of one [(m + 2)^2, N, C, TH, TW] tensor;
//   - the contraction of V [(m + 2)^2, N, C, TH*TW] with U [(m + 2)^2, K, C];
//   - one generic over [N, K, TH, TW] reading the products and writing
//     the m^2 outputs of each tile plus the bias (and the ReLU) into
//     stride-m slices of a [N, K, m * TH, m * TW] tensor, cut to the
//     output's size if m does not divide it.
// Rounding differs from the direct sum: F(2x2)'s transforms add up to 4
// inputs and 9 products, F(4x4)'s up to 16 inputs with factors up to 25
// and 25 products with factors up to 64. Outputs of magnitude 1 are off
// by about 1e-6 with F(2x2), by up to about 3e-5 with F(4x4).
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

/// The arithmetic of the transforms: adds, subtracts and multiply-adds by
/// constants, contractible into FMAs.
struct Ops {
  OpBuilder &b;
  Location loc;
  arith::FastMathFlagsAttr contract;

  Ops(OpBuilder &b, Location loc)
      : b(b), loc(loc),
        contract(arith::FastMathFlagsAttr::get(b.getContext(), arith::FastMathFlags::contract)) {}
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y, contract); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y, contract); }
  /// c * x + y.
  Value madd(double c, Value x, Value y) {
    Value k = scalarConstant(b, loc, x.getType(), c);
    return add(arith::MulFOp::create(b, loc, k, x, contract), y);
  }
};

/// B^T applied to the m + 2 values `d` (one row or column of a window).
SmallVector<Value> inputTransform(Ops &o, int m, ArrayRef<Value> d) {
  if (m == 2) // v0 = d0 - d2, v1 = d1 + d2, v2 = d2 - d1, v3 = d1 - d3.
    return {o.sub(d[0], d[2]), o.add(d[1], d[2]), o.sub(d[2], d[1]), o.sub(d[1], d[3])};
  // r0 = 4 d0 - 5 d2 + d4          r1 = -4 d1 - 4 d2 + d3 + d4
  // r2 = 4 d1 - 4 d2 - d3 + d4     r3 = -2 d1 - d2 + 2 d3 + d4
  // r4 = 2 d1 - d2 - 2 d3 + d4     r5 = 4 d1 - 5 d3 + d5
  Value t0 = o.madd(-4, d[2], d[4]), t1 = o.madd(-4, d[1], d[3]);
  Value t2 = o.sub(d[4], d[2]), d31 = o.sub(d[3], d[1]);
  Value t3 = o.add(d31, d31);
  return {o.madd(4, d[0], o.madd(-5, d[2], d[4])), o.add(t0, t1), o.sub(t0, t1),
          o.add(t2, t3), o.sub(t2, t3), o.madd(4, d[1], o.madd(-5, d[3], d[5]))};
}

/// A^T applied to the m + 2 values `p`: the m outputs.
SmallVector<Value> outputTransform(Ops &o, int m, ArrayRef<Value> p) {
  if (m == 2) // y0 = p0 + p1 + p2, y1 = p1 - p2 - p3.
    return {o.add(o.add(p[0], p[1]), p[2]), o.sub(o.sub(p[1], p[2]), p[3])};
  // y0 = p0 + p1 + p2 + p3 + p4     y1 = p1 - p2 + 2 (p3 - p4)
  // y2 = p1 + p2 + 4 (p3 + p4)      y3 = p1 - p2 + 8 (p3 - p4) + p5
  Value s12 = o.add(p[1], p[2]), d12 = o.sub(p[1], p[2]);
  Value s34 = o.add(p[3], p[4]), d34 = o.sub(p[3], p[4]);
  return {o.add(o.add(p[0], s12), s34), o.madd(2, d34, d12), o.madd(4, s34, s12),
          o.add(o.madd(8, d34, d12), p[5])};
}

/// G g G^T for one 3x3 kernel g (row-major) into u ((m + 2)^2 values), in
/// double.
void kernelTransform(int m, const float *g, float *u) {
  static const double g2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static const double g4[6][3] = {{1.0 / 4, 0, 0},
                                  {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                  {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                  {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                  {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                  {0, 0, 1}};
  int alpha = m + 2;
  auto G = [&](int a, int j) { return m == 2 ? g2[a][j] : g4[a][j]; };
  double t[6][3];
  for (int a = 0; a < alpha; ++a)
    for (int j = 0; j < 3; ++j)
      t[a][j] = G(a, 0) * g[j] + G(a, 1) * g[3 + j] + G(a, 2) * g[6 + j];
  for (int a = 0; a < alpha; ++a)
    for (int bb = 0; bb < alpha; ++bb)
      u[a * alpha + bb] = float(t[a][0] * G(bb, 0) + t[a][1] * G(bb, 1) + t[a][2] * G(bb, 2));
}

/// The tile size m of F(m x m, 3x3) for an output of `yType`: 4 for maps
/// of 28x28 and up (resnet18, one thread: 27.6 -> 24.0 ms against F(2x2)
/// everywhere), 2 below: 14x14 in tiles of 4 is 4x4 tiles, a quarter of
/// the lanes the contraction had with 7x7 tiles of 2 (resnet18 26.8 ms
/// with F(4x4) from 14x14 on), and every F(4x4) weight is 2.25x as large.
int64_t winogradTile(RankedTensorType yType) {
  return yType.getDimSize(2) >= 28 && yType.getDimSize(3) >= 28 ? 4 : 2;
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
  // for a stem's 3 input channels. Maps under 8x8 have too few tiles: a
  // 7x7 map (resnet's layer4) is 16 tiles of 2x2, one vector, against
  // transformed weights 1.8x the kernel's (16.8 MB for 512 channels) that
  // stream from memory for it; the direct conv is faster there (resnet18,
  // one thread, 10 alternating rounds: 29.2 -> 28.3 ms; two threads 15.5
  // -> 14.5).
  int64_t c = xType.getDimSize(1), k = wType.getDimSize(0);
  return c >= 64 && k >= 64 && yType.getDimSize(2) >= 8 && yType.getDimSize(3) >= 8;
}

Value buildWinogradConv(OpBuilder &b, Location loc, Value x, ArrayRef<float> weights,
                        Value bias, ArrayRef<int64_t> padLo, RankedTensorType yType,
                        bool relu) {
  auto xType = cast<RankedTensorType>(x.getType());
  Type f32 = xType.getElementType();
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1);
  int64_t k = yType.getDimSize(1), oh = yType.getDimSize(2), ow = yType.getDimSize(3);
  const int m = int(winogradTile(yType)), alpha = m + 2, taps = alpha * alpha;
  int64_t th = (oh + m - 1) / m, tw = (ow + m - 1) / m;

  // The input padded to the tiles' windows: m * tiles + 2 rows/columns.
  int64_t hiH = m * th + 2 - xType.getDimSize(2) - padLo[0];
  int64_t hiW = m * tw + 2 - xType.getDimSize(3) - padLo[1];
  Value xp = padTensor(b, loc, x, {0, 0, padLo[0], padLo[1]}, {0, 0, hiH, hiW},
                       scalarConstant(b, loc, f32, 0));

  // V[ab] = B^T d B for every (n, c, tile): rows first, then columns.
  SmallVector<Value> windows;
  for (int64_t i = 0; i < alpha; ++i)
    for (int64_t j = 0; j < alpha; ++j)
      windows.push_back(slice(b, loc, xp, {0, 0, i, j}, {n, c, th, tw}, {1, 1, m, m}));
  // The V[ab] are written in place into slices of one [taps, N, C, TH,
  // TW] tensor, so that one batched contraction reads them.
  Value vAll = emptyTensor(b, loc, RankedTensorType::get({taps, n, c, th, tw}, f32));
  SmallVector<Value> vOuts;
  for (int64_t ab = 0; ab < taps; ++ab)
    vOuts.push_back(extractSliceAt(b, loc, vAll, 0, b.getIndexAttr(ab)));
  SmallVector<Value> v = parallelGeneric(
      b, loc, windows, {}, {}, vOuts, [&](OpBuilder &nb, Location l, ValueRange d) {
        Ops o(nb, l);
        // rows[a][j]: B^T applied down column j.
        SmallVector<SmallVector<Value>> rows(alpha);
        for (int j = 0; j < alpha; ++j) {
          SmallVector<Value> column;
          for (int i = 0; i < alpha; ++i)
            column.push_back(d[i * alpha + j]);
          SmallVector<Value> t = inputTransform(o, m, column);
          for (int a = 0; a < alpha; ++a)
            rows[a].push_back(t[a]);
        }
        SmallVector<Value> out;
        for (int a = 0; a < alpha; ++a)
          llvm::append_range(out, inputTransform(o, m, rows[a]));
        return out;
      });
  for (int64_t ab = 0; ab < taps; ++ab)
    vAll = insertSliceAt(b, loc, v[ab], vAll, 0, b.getIndexAttr(ab));

  // U[ab] = G g G^T per (k, c), as one [taps, K, C] constant.
  std::vector<float> u(size_t(taps * k * c));
  float t[36];
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t cc = 0; cc < c; ++cc) {
      kernelTransform(m, &weights[(kk * c + cc) * 9], t);
      for (int64_t ab = 0; ab < taps; ++ab)
        u[(ab * k + kk) * c + cc] = t[ab];
    }
  auto uType = RankedTensorType::get({taps, k, c}, f32);
  Value weight =
      arith::ConstantOp::create(b, loc, uType, DenseElementsAttr::get(uType, ArrayRef<float>(u)));

  // M[ab, n, k, t] = sum over c of U[ab, k, c] V[ab, n, c, t]: loops ab,
  // n, k, t, c (the reduction before the output's innermost dim, as the
  // kernels want).
  MLIRContext *ctx = b.getContext();
  int64_t tiles = th * tw;
  Value vFlat = reshapeTensor(b, loc, vAll, RankedTensorType::get({taps, n, c, tiles}, f32));
  auto mType = RankedTensorType::get({taps, n, k, tiles}, f32);
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
                             RankedTensorType::get({taps, n, k, th, tw}, f32));
  SmallVector<Value> productsAt;
  for (int64_t ab = 0; ab < taps; ++ab)
    productsAt.push_back(extractSliceAt(b, loc, mAll, 0, b.getIndexAttr(ab)));

  // y[m th + i, m tw + j] = sum over a, b of A^T[i][a] A^T[j][b] M[ab],
  // plus the bias (and through the ReLU): one generic writing the m^2
  // outputs of each tile into stride-m slices of the tiled output.
  auto tiledType = RankedTensorType::get({n, k, m * th, m * tw}, f32);
  Value y = emptyTensor(b, loc, tiledType);
  SmallVector<Value> parts;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j)
      parts.push_back(slice(b, loc, y, {0, 0, i, j}, {n, k, th, tw}, {1, 1, m, m}));
  SmallVector<Value> extra;
  SmallVector<AffineMap> extraMaps;
  if (bias) {
    extra.push_back(bias);
    extraMaps.push_back(AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx));
  }
  SmallVector<Value> outs = parallelGeneric(
      b, loc, productsAt, extra, extraMaps, parts,
      [&](OpBuilder &nb, Location l, ValueRange args) -> SmallVector<Value> {
        Ops o(nb, l);
        // cols[a][j]: A^T applied along row a of the products.
        SmallVector<SmallVector<Value>> cols;
        for (int a = 0; a < alpha; ++a)
          cols.push_back(outputTransform(
              o, m, SmallVector<Value>(args.begin() + a * alpha, args.begin() + (a + 1) * alpha)));
        SmallVector<Value> result;
        for (int j = 0; j < m; ++j) {
          SmallVector<Value> column;
          for (int a = 0; a < alpha; ++a)
            column.push_back(cols[a][j]);
          SmallVector<Value> ys = outputTransform(o, m, column);
          for (int i = 0; i < m; ++i)
            result.push_back(ys[i]);
        }
        // result is [j][i]; the outputs are [i][j].
        SmallVector<Value> ordered;
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < m; ++j) {
            Value r = result[j * m + i];
            if (bias)
              r = arith::AddFOp::create(nb, l, r, args[taps]);
            if (relu)
              r = arith::MaximumFOp::create(nb, l, r, scalarConstant(nb, l, r.getType(), 0));
            ordered.push_back(r);
          }
        return ordered;
      });
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j)
      y = tensor::InsertSliceOp::create(b, loc, outs[i * m + j], y, indexAttrs(b, {0, 0, i, j}),
                                        indexAttrs(b, {n, k, th, tw}),
                                        indexAttrs(b, {1, 1, m, m}));
  if (m * th == oh && m * tw == ow)
    return y;
  return slice(b, loc, y, {0, 0, 0, 0}, {n, k, oh, ow}, {1, 1, 1, 1});
}

} // namespace kiln::lowering
