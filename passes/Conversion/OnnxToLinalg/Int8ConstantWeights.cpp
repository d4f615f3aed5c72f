//===- Int8ConstantWeights.cpp - integer ops by constant weights ----------===//
//
// MatMulInteger/QLinearMatMul by a constant B and ConvInteger/QLinearConv
// by constant weights, in the forms of passes/Utils/Int8Matmul.h that
// kiln-vectorize-int8-matmul runs on the target's int8 dot product: the
// weights minus their zero point folded into an int8 constant at compile
// time, the run-time operand read as its raw 8-bit values, its zero point
// taken off afterwards with the weights' sums. Exact: the same integers as
// the reference lowering (Quantize.cpp), which takes every other case.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Int8ConstantWeights.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"
#include "passes/Utils/ElementsData.h"
#include "passes/Utils/Int8Matmul.h"

#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

/// The values of an 8-bit integer onnx constant, widened (signed or not
/// as its ONNX type says); none if `v` is not one.
std::optional<std::vector<int64_t>> constantInt8s(Value v) {
  auto constant = v.getDefiningOp<onnx::ConstantOp>();
  if (!constant)
    return std::nullopt;
  ElementsAttr value = constant.getValueAttr();
  Type elem = elementTypeOf(v);
  if (!elem.isInteger(8))
    return std::nullopt;
  bool isUnsigned = elem.isUnsignedInteger();
  auto widen = [&](uint8_t byte) -> int64_t {
    return isUnsigned ? int64_t(byte) : int64_t(int8_t(byte));
  };
  int64_t count = value.getNumElements();
  std::vector<int64_t> out;
  out.reserve(count);
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    for (const APInt &x : dense.getValues<APInt>())
      out.push_back(widen(uint8_t(x.getZExtValue())));
    return out;
  }
  std::optional<ArrayRef<char>> raw = kiln::rawElementData(value);
  if (!raw || int64_t(raw->size()) != count)
    return std::nullopt;
  for (char c : *raw)
    out.push_back(widen(uint8_t(c)));
  return out;
}

/// `weights` - `zps` in int8, the zero point of element i being
/// zps[channelOf(i)] (or zps[0] for one), with the sum of each channel's
/// values; none when a value does not fit int8.
struct ShiftedWeights {
  std::vector<int8_t> values;
  SmallVector<int32_t> sums;
};
std::optional<ShiftedWeights> shiftedInt8(ArrayRef<int64_t> weights, ArrayRef<int64_t> zps,
                                          int64_t channels,
                                          function_ref<int64_t(int64_t)> channelOf) {
  ShiftedWeights out;
  out.values.resize(weights.size());
  out.sums.assign(size_t(channels), 0);
  for (size_t i = 0; i < weights.size(); ++i) {
    int64_t c = channelOf(int64_t(i));
    int64_t v = weights[i] - zps[zps.size() == 1 ? 0 : size_t(c)];
    if (v < -128 || v > 127)
      return std::nullopt;
    out.values[i] = int8_t(v);
    out.sums[size_t(c)] += int32_t(v);
  }
  return out;
}

/// The body of the int8 contractions of Int8Matmul.h: out + ext(x) *
/// extsi(w), x widened by its own signedness.
void int8MultiplyAccumulate(OpBuilder &b, Location l, ValueRange args, bool xUnsigned) {
  Type i32 = b.getI32Type();
  Value x = xUnsigned ? Value(arith::ExtUIOp::create(b, l, i32, args[0]))
                      : Value(arith::ExtSIOp::create(b, l, i32, args[0]));
  Value w = arith::ExtSIOp::create(b, l, i32, args[1]);
  Value p = arith::MulIOp::create(b, l, x, w);
  linalg::YieldOp::create(b, l, ValueRange{arith::AddIOp::create(b, l, args[2], p)});
}

/// An int8 constant tensor of `shape` holding `values`.
Value int8Constant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ArrayRef<int8_t> values) {
  auto type = RankedTensorType::get(shape, b.getI8Type());
  return arith::ConstantOp::create(
      b, loc, type,
      DenseResourceElementsAttr::get(type, "int8_weights",
                                     HeapAsmResourceBlob::allocateAndCopyInferAlign(values)));
}

} // namespace

/// The int32 product A x (B - b_zero_point) - a_zero_point x colsum for a
/// constant 2-D B [K, N] and a constant b_zero_point (scalar or per
/// column): B - b_zero_point is folded at compile time into an int8
/// constant B' (when every value fits), the contraction reads A's 8-bit
/// values as they are, widened in its body (the form the int8
/// dot-product kernels of kiln-vectorize-int8-matmul take), and
/// a_zero_point (scalar or per row of A, possibly a run-time value)
/// comes off afterwards as a_zero_point * sum_k B'[k, n]. Exact: the
/// same integers as (A - a_zero_point) x (B - b_zero_point). None when
/// B or its zero point is not a constant, B' does not fit int8, or the
/// shapes are not a plain [..., M, K] x [K, N].
std::optional<Value> kiln::lowering::matMulConstantB(OpBuilder &b, Location loc, Value aOrig, Value a,
                                     Value bOrig, Value aZpOrig, Value aZp, Value bZpOrig,
                                     RankedTensorType accType) {
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = dyn_cast<RankedTensorType>(bOrig.getType());
  Type aElem = elementTypeOf(aOrig);
  if (!bType || bType.getRank() != 2 || !bType.hasStaticShape() || aType.getRank() < 2 ||
      !aElem.isInteger(8) || accType.getRank() != aType.getRank())
    return std::nullopt;
  int64_t k = bType.getDimSize(0), n = bType.getDimSize(1), r = aType.getRank();
  if (aType.getDimSize(r - 1) != k || accType.getDimSize(r - 1) != n)
    return std::nullopt;
  std::optional<std::vector<int64_t>> weights = constantInt8s(bOrig);
  std::optional<std::vector<int64_t>> zps =
      onnx::isNone(bZpOrig) ? std::vector<int64_t>{0} : constantInt8s(bZpOrig);
  if (!weights || int64_t(weights->size()) != k * n || !zps ||
      (zps->size() != 1 && int64_t(zps->size()) != n))
    return std::nullopt;
  // a_zero_point: one value, or one per row (checked before any IR is made).
  if (!onnx::isNone(aZpOrig)) {
    auto zpType = dyn_cast<RankedTensorType>(aZp.getType());
    if (!zpType || !zpType.hasStaticShape() || zpType.getRank() > 1 ||
        (zpType.getNumElements() != 1 && zpType.getDimSize(0) != aType.getDimSize(r - 2)))
      return std::nullopt;
  }
  std::optional<ShiftedWeights> shifted =
      shiftedInt8(*weights, *zps, n, [&](int64_t i) { return i % n; });
  if (!shifted)
    return std::nullopt;
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  Value weightsValue = int8Constant(b, loc, {k, n}, shifted->values);
  // Loops: A's dims but K (the output's), then K.
  SmallVector<AffineMap, 3> maps = kiln::int8MatmulMaps(ctx, r);
  SmallVector<utils::IteratorType> iters(r, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value init = filledTensor(b, loc, accType, scalarConstant(b, loc, i32, 0));
  bool aUnsigned = aElem.isUnsignedInteger();
  Value acc = linalg::GenericOp::create(b, loc, accType, ValueRange{a, weightsValue},
                                        ValueRange{init}, maps, iters,
                                        [&](OpBuilder &nb, Location l, ValueRange args) {
                                          int8MultiplyAccumulate(nb, l, args, aUnsigned);
                                        })
                  .getResult(0);
  if (onnx::isNone(aZpOrig))
    return acc;
  auto zpType = cast<RankedTensorType>(aZp.getType());
  FailureOr<Value> zp = alongAxis(b, loc, aZp, r - 2, r,
                                  zpType.getNumElements() > 1 ? aType.getDimSize(r - 2) : 1);
  if (failed(zp)) // Not reached: the shapes were checked above.
    return std::nullopt;
  auto sumType = RankedTensorType::get({n}, i32);
  Value sums = arith::ConstantOp::create(
      b, loc, sumType, DenseElementsAttr::get(sumType, ArrayRef<int32_t>(shifted->sums)));
  Type zpElem = elementTypeOf(aZpOrig);
  return broadcastGeneric(b, loc, ValueRange{acc, *zp, sums}, accType,
                          [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
                            Value z = castScalar(nb, l, v[1], zpElem, i32);
                            Value c = arith::MulIOp::create(nb, l, z, v[2]);
                            return arith::SubIOp::create(nb, l, v[0], c);
                          });
}

/// The int32 convolution of x [N, C, S...] (raw 8-bit values) by a
/// constant W [M, C, K...] minus a constant w_zero_point (scalar or per
/// output channel), one group: W - w_zero_point is folded at compile time
/// into an int8 constant W' [M, C * prod(K)] (when every value fits); x,
/// padded with x_zero_point, is read as X [N, C * prod(K), P] (P the
/// output positions): x itself for a 1x1 conv of stride 1 without
/// padding, else its im2col (rows in W's (c, k...) order); the
/// contraction is the weights-left int8 matmul of Int8Matmul.h (which
/// kiln-vectorize-int8-matmul turns into dot-product kernels); and
/// x_zero_point (per tensor, possibly a run-time value) comes off
/// afterwards as x_zero_point * sum_k W'[m, k], where `bias` ([M] int32,
/// may be null) is added too. The result is [N, M, P] (accType's shape
/// with the spatial dims flattened; an epilogue on it fuses with that last
/// generic). Exact: the same integers as the convolution
/// of (x - x_zero_point) by (W - w_zero_point). None when the weights or
/// zero points are not constants of those shapes, W' does not fit int8,
/// the group is not 1 or a shape is dynamic.
std::optional<Value> kiln::lowering::convConstantWeights(OpBuilder &b, Location loc, Value xOrig, Value x,
                                         Value wOrig, Value xZpOrig, Value xZp, Value wZpOrig,
                                         Value bias, const ConvAttrs &attrs,
                                         RankedTensorType accType) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = dyn_cast<RankedTensorType>(wOrig.getType());
  Type xElem = elementTypeOf(xOrig);
  int64_t rank = xType.getRank(), sp = rank - 2;
  if (attrs.group != 1 || !wType || !wType.hasStaticShape() || !xType.hasStaticShape() ||
      !accType.hasStaticShape() || sp < 1 || wType.getRank() != rank ||
      accType.getRank() != rank || !xElem.isInteger(8))
    return std::nullopt;
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1), m = wType.getDimSize(0);
  if (wType.getDimSize(1) != c || accType.getDimSize(0) != n || accType.getDimSize(1) != m)
    return std::nullopt;
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  SmallVector<int64_t> in(xType.getShape().drop_front(2));
  SmallVector<int64_t> out(accType.getShape().drop_front(2));
  SmallVector<int64_t> strides = valuesOr(attrs.strides, sp, 1);
  SmallVector<int64_t> dilations = valuesOr(attrs.dilations, sp, 1);
  SmallVector<int64_t> lo, hi;
  if (int64_t(strides.size()) != sp || int64_t(dilations.size()) != sp ||
      !resolvePads(attrs.autoPad, attrs.pads, in, out, kernel, strides, dilations, lo, hi))
    return std::nullopt;
  // The output must be exactly the windows of the padded input.
  int64_t taps = 1, positions = 1;
  bool plain = true; // 1x1, stride 1, no padding: X is x.
  for (int64_t d = 0; d < sp; ++d) {
    if (strides[d] < 1 || dilations[d] < 1 || lo[d] < 0 || hi[d] < 0 || kernel[d] < 1 ||
        out[d] < 1 ||
        (in[d] + lo[d] + hi[d] - (kernel[d] - 1) * dilations[d] - 1) / strides[d] + 1 != out[d])
      return std::nullopt;
    taps *= kernel[d];
    positions *= out[d];
    plain = plain && kernel[d] == 1 && strides[d] == 1 && lo[d] == 0 && hi[d] == 0;
  }
  int64_t depth = c * taps;
  std::optional<std::vector<int64_t>> weights = constantInt8s(wOrig);
  std::optional<std::vector<int64_t>> zps =
      onnx::isNone(wZpOrig) ? std::vector<int64_t>{0} : constantInt8s(wZpOrig);
  if (!weights || int64_t(weights->size()) != m * depth || !zps ||
      (zps->size() != 1 && int64_t(zps->size()) != m))
    return std::nullopt;
  bool hasXZp = !onnx::isNone(xZpOrig);
  if (hasXZp) {
    auto zpType = dyn_cast<RankedTensorType>(xZp.getType());
    if (!zpType || !zpType.hasStaticShape() || zpType.getRank() > 1 ||
        zpType.getNumElements() != 1)
      return std::nullopt;
  }
  if (bias) {
    auto biasType = dyn_cast<RankedTensorType>(bias.getType());
    if (!biasType || biasType.getRank() != 1 || biasType.getDimSize(0) != m ||
        !biasType.getElementType().isInteger(32))
      return std::nullopt;
  }
  std::optional<ShiftedWeights> shifted =
      shiftedInt8(*weights, *zps, m, [&](int64_t i) { return i / depth; });
  if (!shifted)
    return std::nullopt;
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  Type rawElem = xType.getElementType();
  Value zp; // x_zero_point as a rank-0 tensor.
  if (hasXZp)
    zp = reshapeTensor(b, loc, xZp, RankedTensorType::get({}, rawElem));
  auto colType = RankedTensorType::get({n, depth, positions}, rawElem);
  Value col;
  if (plain) {
    col = reshapeTensor(b, loc, x, colType);
  } else {
    // Padded with x_zero_point (its products are taken off with the rest).
    Value pad = hasXZp ? Value(tensor::ExtractOp::create(b, loc, zp, ValueRange{}))
                       : scalarConstant(b, loc, rawElem, 0);
    SmallVector<int64_t> padLo{0, 0}, padHi{0, 0};
    padLo.append(lo);
    padHi.append(hi);
    Value xp = padTensor(b, loc, x, padLo, padHi, pad);
    // im2col: [N, C, K..., O...], one window copy per tap (xp[n, c,
    // o * s + k * d] for one k, a strided slice), which the elementwise
    // vectoriser takes (contiguous for stride 1).
    SmallVector<int64_t> shape{n, c};
    shape.append(kernel);
    shape.append(out);
    SmallVector<int64_t> windowShape{n, c};
    windowShape.append(out);
    auto windowType = RankedTensorType::get(windowShape, rawElem);
    col = tensor::EmptyOp::create(b, loc, shape, rawElem);
    auto attrs = [&](ArrayRef<int64_t> values) {
      return llvm::map_to_vector(values, [&](int64_t v) -> OpFoldResult {
        return b.getIndexAttr(v);
      });
    };
    SmallVector<int64_t> tap(sp, 0);
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t d = sp - 1, rest = t; d >= 0; --d) {
        tap[d] = rest % kernel[d];
        rest /= kernel[d];
      }
      SmallVector<int64_t> from{0, 0}, steps{1, 1}, to{0, 0}, toSizes{n, c};
      for (int64_t d = 0; d < sp; ++d) {
        from.push_back(tap[d] * dilations[d]);
        steps.push_back(strides[d]);
        to.push_back(tap[d]);
        toSizes.push_back(1);
      }
      to.append(sp, 0);
      toSizes.append(out);
      Value window = tensor::ExtractSliceOp::create(b, loc, windowType, xp, attrs(from),
                                                    attrs(windowShape), attrs(steps));
      window = copyThroughMap(b, loc, window, b.getMultiDimIdentityMap(unsigned(2 + sp)),
                              windowType);
      col = tensor::InsertSliceOp::create(b, loc, window, col, attrs(to), attrs(toSizes),
                                          attrs(SmallVector<int64_t>(2 + 2 * sp, 1)));
    }
    col = reshapeTensor(b, loc, col, colType);
  }
  auto flatType = RankedTensorType::get({n, m, positions}, i32);
  SmallVector<utils::IteratorType> iters(3, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  bool xUnsigned = xElem.isUnsignedInteger();
  Value acc = linalg::GenericOp::create(
                  b, loc, flatType,
                  ValueRange{col, int8Constant(b, loc, {m, depth}, shifted->values)},
                  ValueRange{filledTensor(b, loc, flatType, scalarConstant(b, loc, i32, 0))},
                  kiln::int8WeightsLeftMaps(ctx, 3), iters,
                  [&](OpBuilder &nb, Location l, ValueRange args) {
                    int8MultiplyAccumulate(nb, l, args, xUnsigned);
                  })
                  .getResult(0);
  if (hasXZp || bias) {
    // acc - x_zero_point * rowsum + bias, along m.
    auto columnType = RankedTensorType::get({m, 1}, i32);
    SmallVector<Value> ins{acc};
    if (hasXZp) {
      ins.push_back(zp);
      ins.push_back(arith::ConstantOp::create(
          b, loc, columnType,
          DenseElementsAttr::get(columnType, ArrayRef<int32_t>(shifted->sums))));
    }
    if (bias)
      ins.push_back(reshapeTensor(b, loc, bias, columnType));
    Type zpElem = hasXZp ? elementTypeOf(xZpOrig) : Type();
    acc = broadcastGeneric(b, loc, ins, flatType,
                           [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
                             Value r = v[0];
                             if (hasXZp) {
                               Value z = castScalar(nb, l, v[1], zpElem, i32);
                               r = arith::SubIOp::create(nb, l, r,
                                                         arith::MulIOp::create(nb, l, z, v[2]));
                             }
                             if (bias)
                               r = arith::AddIOp::create(nb, l, r, v.back());
                             return r;
                           });
  }
  return acc;
}

