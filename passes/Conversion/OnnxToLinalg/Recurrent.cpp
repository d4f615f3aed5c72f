//===- Recurrent.cpp - RNN, GRU and LSTM -> linalg + scf.for ---------------===//
//
// The recurrent ops run their time steps in an `scf.for` over tensors:
//   - W and R are transposed per direction to [K, G*H] (at compile time
//     when they are constants, else once before the loop), so that every
//     matmul reads its weight along rows;
//   - the input projections of every step (X W^T + biases) are one matmul
//     before the loop;
//   - each step computes H R^T and one elementwise generic for the gates
//     (GRU with linear_before_reset = 0 needs a second matmul after the reset
//     gate);
//   - with sequence_lens, a step past a batch entry's length keeps its state
//     and writes zeros to Y;
//   - bidirectional ops run the loop once per direction (the reverse one
//     from the last valid step of each batch entry back to the first).
// layout = 1 is handled by transposing into and out of layout 0. The
// sequence length and the batch may be dynamic (the model's dims): every
// tensor made here is sized from X's dims, and the loop runs X's length.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

/// One activation function of the recurrent ops, with its parameters.
struct Activation {
  std::string name; // lower case
  double alpha = 0, beta = 0;
};

bool usesAlpha(StringRef n) {
  return n == "affine" || n == "leakyrelu" || n == "thresholdedrelu" ||
         n == "scaledtanh" || n == "hardsigmoid" || n == "elu";
}
bool usesBeta(StringRef n) {
  return n == "affine" || n == "scaledtanh" || n == "hardsigmoid";
}
bool knownActivation(StringRef n) {
  return usesAlpha(n) || n == "relu" || n == "tanh" || n == "sigmoid" ||
         n == "softsign" || n == "softplus";
}

/// The defaults of the ONNX operators of the same name.
void defaultParams(Activation &a) {
  StringRef n = a.name;
  if (n == "leakyrelu")
    a.alpha = 0.01;
  else if (n == "thresholdedrelu" || n == "elu" || n == "affine" || n == "scaledtanh")
    a.alpha = 1.0;
  else if (n == "hardsigmoid")
    a.alpha = 0.2;
  if (n == "hardsigmoid")
    a.beta = 0.5;
  else if (n == "scaledtanh")
    a.beta = 1.0;
}

Value sigmoid(OpBuilder &b, Location l, Value x) {
  Value one = scalarConstant(b, l, x.getType(), 1.0);
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  return arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
}

Value apply(OpBuilder &b, Location l, const Activation &a, Value x) {
  auto c = [&](double v) { return scalarConstant(b, l, x.getType(), v); };
  auto lt = [&](Value p, Value q) {
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, p, q);
  };
  StringRef n = a.name;
  if (n == "relu")
    return arith::MaximumFOp::create(b, l, x, c(0));
  if (n == "tanh")
    return math::TanhOp::create(b, l, x);
  if (n == "sigmoid")
    return sigmoid(b, l, x);
  if (n == "affine")
    return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x, c(a.alpha)), c(a.beta));
  if (n == "leakyrelu")
    return arith::SelectOp::create(b, l, lt(x, c(0)),
                                   arith::MulFOp::create(b, l, x, c(a.alpha)), x);
  if (n == "thresholdedrelu")
    return arith::SelectOp::create(b, l, lt(c(a.alpha), x), x, c(0));
  if (n == "scaledtanh")
    return arith::MulFOp::create(
        b, l, c(a.alpha),
        math::TanhOp::create(b, l, arith::MulFOp::create(b, l, x, c(a.beta))));
  if (n == "hardsigmoid") {
    Value v = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x, c(a.alpha)), c(a.beta));
    return arith::MinimumFOp::create(b, l, arith::MaximumFOp::create(b, l, v, c(0)), c(1));
  }
  if (n == "elu") {
    Value em1 = arith::SubFOp::create(b, l, math::ExpOp::create(b, l, x), c(1));
    return arith::SelectOp::create(b, l, lt(x, c(0)),
                                   arith::MulFOp::create(b, l, em1, c(a.alpha)), x);
  }
  if (n == "softsign")
    return arith::DivFOp::create(
        b, l, x, arith::AddFOp::create(b, l, c(1), math::AbsFOp::create(b, l, x)));
  // softplus
  return math::Log1pOp::create(b, l, math::ExpOp::create(b, l, x));
}

/// a [m, k] x w [k, n] -> [m, n] (w is a weight transposed before the loop).
Value matmul(OpBuilder &b, Location loc, Value a, Value w) {
  auto aType = cast<RankedTensorType>(a.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  Type et = aType.getElementType();
  auto outType = RankedTensorType::get({aType.getDimSize(0), wType.getDimSize(1)}, et);
  Value init = linalg::FillOp::create(b, loc, scalarConstant(b, loc, et, 0),
                                      emptyTensor(b, loc, outType, dynamicSizesOf(b, loc, a, {0})))
                   .getResult(0);
  MLIRContext *ctx = b.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Loops: m, k, n.
  return linalg::GenericOp::create(
             b, loc, outType, ValueRange{a, w}, ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::get(3, 0, {d(0), d(1)}, ctx),
                                 AffineMap::get(3, 0, {d(1), d(2)}, ctx),
                                 AffineMap::get(3, 0, {d(0), d(2)}, ctx)},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::reduction,
                                           utils::IteratorType::parallel},
             [](OpBuilder &nb, Location l, ValueRange args) {
               Value p = arith::MulFOp::create(nb, l, args[0], args[1]);
               linalg::YieldOp::create(nb, l, Value(arith::AddFOp::create(nb, l, args[2], p)));
             })
      .getResult(0);
}

/// The operands of a generic over [batch, hidden]: column block `gate` of
/// a [batch, G*H] tensor or of a [G*H] vector (sliced out, so that every
/// map is plain), or a [batch] vector read at (b).
struct GateReads {
  OpBuilder &b;
  Location loc;
  int64_t hidden;
  SmallVector<Value> values;
  SmallVector<AffineMap> maps;

  GateReads(OpBuilder &b, Location loc, int64_t hidden) : b(b), loc(loc), hidden(hidden) {}

  unsigned add(Value v, AffineMap map) {
    values.push_back(v);
    maps.push_back(map);
    return values.size() - 1;
  }
  /// Columns [gate * H, (gate + 1) * H) of the trailing dim of `v`.
  Value block(Value v, int64_t gate) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t r = type.getRank();
    if (type.getDimSize(r - 1) == hidden)
      return v;
    SmallVector<int64_t> shape(type.getShape());
    shape.back() = hidden;
    SmallVector<OpFoldResult> offsets(r, b.getIndexAttr(0)), sizes, strides(r, b.getIndexAttr(1));
    offsets.back() = b.getIndexAttr(gate * hidden);
    for (int64_t d = 0; d < r; ++d)
      sizes.push_back(ShapedType::isDynamic(shape[d])
                          ? OpFoldResult(tensor::DimOp::create(b, loc, v, d).getResult())
                          : OpFoldResult(b.getIndexAttr(shape[d])));
    return tensor::ExtractSliceOp::create(b, loc, type.clone(shape), v, offsets, sizes, strides);
  }
  unsigned matrix(Value v, int64_t gate) {
    return add(block(v, gate), b.getMultiDimIdentityMap(2));
  }
  unsigned vector(Value v, int64_t gate) {
    return add(block(v, gate), AffineMap::get(2, 0, {b.getAffineDimExpr(1)}, b.getContext()));
  }
  unsigned perBatch(Value v) {
    return add(v, AffineMap::get(2, 0, {b.getAffineDimExpr(0)}, b.getContext()));
  }
};

/// Builds the generic: `body` maps the read scalars to `numResults` result
/// scalars, all [batch, hidden], sized like `state` (one such tensor).
SmallVector<Value> gateGeneric(
    OpBuilder &b, Location loc, GateReads &reads, Value state, unsigned numResults,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  auto stateType = cast<RankedTensorType>(state.getType());
  SmallVector<Value> inits;
  SmallVector<Type> types;
  SmallVector<AffineMap> maps(reads.maps);
  for (unsigned i = 0; i < numResults; ++i) {
    inits.push_back(emptyTensor(b, loc, stateType, dynamicSizesOf(b, loc, state, {0, 1})));
    types.push_back(stateType);
    maps.push_back(b.getMultiDimIdentityMap(2));
  }
  auto generic = linalg::GenericOp::create(
      b, loc, types, reads.values, inits, maps,
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args.take_front(reads.values.size())));
      });
  return SmallVector<Value>(generic.getResults());
}

enum class Kind { RNN, GRU, LSTM };

/// Everything one direction's step needs.
struct StepContext {
  Kind kind;
  Type et;
  int64_t hidden;
  std::optional<double> clip;
  ArrayRef<Activation> acts; // this direction's f, g, h
  Value r;                   // R^T [H, G*H]
  Value rbh;                 // GRU, linear_before_reset: Rb of the h gate [H]
  Value peep;                // LSTM: [3H] or null
  bool linearBeforeReset = false;
};

Value clipped(OpBuilder &b, Location l, const StepContext &s, Value x) {
  if (!s.clip)
    return x;
  Value hi = scalarConstant(b, l, x.getType(), *s.clip);
  Value lo = scalarConstant(b, l, x.getType(), -*s.clip);
  return arith::MinimumFOp::create(b, l, arith::MaximumFOp::create(b, l, x, lo), hi);
}

/// One time step: xt [batch, G*H] (the input projection with biases), h
/// and c [batch, H]; returns the new h (and c for LSTM).
SmallVector<Value> step(OpBuilder &b, Location loc, const StepContext &s, Value xt,
                        Value h, Value c) {
  Value hr = matmul(b, loc, h, s.r);
  auto add = [&](OpBuilder &nb, Location l, Value x, Value y) -> Value {
    return arith::AddFOp::create(nb, l, x, y);
  };
  auto mul = [&](OpBuilder &nb, Location l, Value x, Value y) -> Value {
    return arith::MulFOp::create(nb, l, x, y);
  };
  auto act = [&](OpBuilder &nb, Location l, unsigned i, Value x) {
    return apply(nb, l, s.acts[i], clipped(nb, l, s, x));
  };
  GateReads reads(b, loc, s.hidden);
  switch (s.kind) {
  case Kind::RNN: {
    unsigned x0 = reads.matrix(xt, 0), r0 = reads.matrix(hr, 0);
    return gateGeneric(b, loc, reads, h, 1,
                       [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
                         return {act(nb, l, 0, add(nb, l, a[x0], a[r0]))};
                       });
  }
  case Kind::LSTM: {
    // Gates in W/R/B order: i, o, f, c; peepholes: i, o, f.
    unsigned xi = reads.matrix(xt, 0), xo = reads.matrix(xt, 1), xf = reads.matrix(xt, 2),
             xc = reads.matrix(xt, 3);
    unsigned ri = reads.matrix(hr, 0), ro = reads.matrix(hr, 1), rf = reads.matrix(hr, 2),
             rc = reads.matrix(hr, 3);
    unsigned cPrev = reads.matrix(c, 0);
    unsigned pi = 0, po = 0, pf = 0;
    if (s.peep) {
      pi = reads.vector(s.peep, 0);
      po = reads.vector(s.peep, 1);
      pf = reads.vector(s.peep, 2);
    }
    return gateGeneric(
        b, loc, reads, h, 2,
        [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
          Value cp = a[cPrev];
          auto pre = [&](unsigned x, unsigned r) { return add(nb, l, a[x], a[r]); };
          Value iIn = pre(xi, ri), fIn = pre(xf, rf), oIn = pre(xo, ro);
          if (s.peep) {
            iIn = add(nb, l, iIn, mul(nb, l, a[pi], cp));
            fIn = add(nb, l, fIn, mul(nb, l, a[pf], cp));
          }
          Value i = act(nb, l, 0, iIn), f = act(nb, l, 0, fIn);
          Value g = act(nb, l, 1, pre(xc, rc));
          Value cNew = add(nb, l, mul(nb, l, f, cp), mul(nb, l, i, g));
          if (s.peep)
            oIn = add(nb, l, oIn, mul(nb, l, a[po], cNew));
          Value o = act(nb, l, 0, oIn);
          return {mul(nb, l, o, apply(nb, l, s.acts[2], cNew)), cNew};
        });
  }
  case Kind::GRU:
    break;
  }
  // GRU, gates z, r, h. With linear_before_reset = 0 the h gate reads
  // (r * H) R_h^T, a second matmul after r is known.
  Value rhMatmul;
  if (!s.linearBeforeReset) {
    GateReads rReads(b, loc, s.hidden);
    unsigned xr = rReads.matrix(xt, 1), rr = rReads.matrix(hr, 1), hp = rReads.matrix(h, 0);
    Value rh = gateGeneric(b, loc, rReads, h, 1,
                           [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
                             Value r = act(nb, l, 0, add(nb, l, a[xr], a[rr]));
                             return {mul(nb, l, r, a[hp])};
                           })[0];
    // Columns [2H, 3H) of R^T.
    int64_t hd = s.hidden;
    Value rH = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({hd, hd}, s.et), s.r,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(2 * hd)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(hd), b.getIndexAttr(hd)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    rhMatmul = matmul(b, loc, rh, rH);
  }
  unsigned xz = reads.matrix(xt, 0), xr = reads.matrix(xt, 1), xh = reads.matrix(xt, 2);
  unsigned rz = reads.matrix(hr, 0), rr = reads.matrix(hr, 1), rhh = reads.matrix(hr, 2);
  unsigned hp = reads.matrix(h, 0);
  unsigned rm = rhMatmul ? reads.matrix(rhMatmul, 0) : 0;
  unsigned rb = s.rbh ? reads.vector(s.rbh, 0) : 0;
  return gateGeneric(
      b, loc, reads, h, 1, [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
        Value z = act(nb, l, 0, add(nb, l, a[xz], a[rz]));
        Value hIn;
        if (s.linearBeforeReset) {
          Value r = act(nb, l, 0, add(nb, l, a[xr], a[rr]));
          Value rec = s.rbh ? add(nb, l, a[rhh], a[rb]) : a[rhh];
          hIn = add(nb, l, a[xh], mul(nb, l, r, rec));
        } else {
          hIn = add(nb, l, a[xh], a[rm]);
        }
        Value hc = act(nb, l, 1, hIn);
        Value one = scalarConstant(nb, l, s.et, 1.0);
        Value keep = mul(nb, l, z, a[hp]);
        return {add(nb, l, mul(nb, l, arith::SubFOp::create(nb, l, one, z), hc), keep)};
      });
}

template <typename OpTy>
struct RecurrentPattern : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  static constexpr Kind kind = std::is_same_v<OpTy, onnx::RNNOp>   ? Kind::RNN
                               : std::is_same_v<OpTy, onnx::GRUOp> ? Kind::GRU
                                                                   : Kind::LSTM;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type et = elementTypeOf(op.getX());
    if (!isSupportedFloat(et))
      return unsupported(rewriter, op, "element type " + typeName(et) + " is not supported yet");
    StringRef direction = op.getDirection();
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      return unsupported(rewriter, op, "direction '" + direction + "' is not one of "
                                       "forward, reverse, bidirectional");
    int64_t dirs = direction == "bidirectional" ? 2 : 1;
    int64_t gates = kind == Kind::RNN ? 1 : kind == Kind::GRU ? 3 : 4;
    bool batchFirst = op.getLayout() != 0;
    if constexpr (kind == Kind::LSTM) {
      if (op.getInputForget() != 0)
        return unsupported(rewriter, op, "input_forget = 1 is not supported yet");
    }

    Value x = adaptor.getX();
    if (batchFirst)
      x = transposeTensor(rewriter, loc, x, {1, 0, 2});
    auto xType = cast<RankedTensorType>(x.getType());
    auto rType = cast<RankedTensorType>(adaptor.getR().getType());
    auto wType = cast<RankedTensorType>(adaptor.getW().getType());
    int64_t seq = xType.getDimSize(0), batch = xType.getDimSize(1),
            input = xType.getDimSize(2), hidden = rType.getDimSize(2);
    if (!wType.hasStaticShape() || !rType.hasStaticShape() || ShapedType::isDynamic(input))
      return unsupported(rewriter, op, "W, R and the input size must be static");
    if (wType.getRank() != 3 || rType.getRank() != 3 || wType.getDimSize(0) != dirs ||
        rType.getDimSize(0) != dirs || wType.getDimSize(1) != gates * hidden ||
        wType.getDimSize(2) != input || rType.getDimSize(1) != gates * hidden)
      return unsupported(rewriter, op, "W or R does not have the shape the direction, "
                                       "hidden size and input size require");
    if (seq == 0 || batch == 0)
      return unsupported(rewriter, op, "empty sequences or batches are not supported");
    // Every optional operand must have the shape the others imply (they
    // are read at those positions); a dynamic batch must be X's, the same
    // dim of the model.
    int64_t xBatchAxis = batchFirst ? 0 : 1;
    auto shaped = [&](Value orig, Value conv, ArrayRef<int64_t> shape, int64_t batchAxis) {
      if (onnx::isNone(orig))
        return true;
      if (cast<RankedTensorType>(conv.getType()).getShape() != shape)
        return false;
      return batchAxis < 0 || !ShapedType::isDynamic(batch) ||
             sameSize(orig, batchAxis, op.getX(), xBatchAxis);
    };
    SmallVector<int64_t> stateShape =
        batchFirst ? SmallVector<int64_t>{batch, dirs, hidden} : SmallVector<int64_t>{dirs, batch, hidden};
    int64_t stateBatchAxis = batchFirst ? 0 : 1;
    bool ok = shaped(op.getB(), adaptor.getB(), {dirs, 2 * gates * hidden}, -1) &&
              shaped(op.getSequenceLens(), adaptor.getSequenceLens(), {batch}, 0) &&
              shaped(op.getInitialH(), adaptor.getInitialH(), stateShape, stateBatchAxis);
    if constexpr (kind == Kind::LSTM)
      ok = ok && shaped(op.getInitialC(), adaptor.getInitialC(), stateShape, stateBatchAxis) &&
           shaped(op.getP(), adaptor.getP(), {dirs, 3 * hidden}, -1);
    if (!ok)
      return unsupported(rewriter, op, "B, sequence_lens, initial states or P do not have the "
                                       "shapes X, W and R imply");

    // Activations: f (RNN); f, g (GRU); f, g, h (LSTM), per direction.
    size_t perDir = gates == 1 ? 1 : gates == 3 ? 2 : 3;
    SmallVector<Activation> acts;
    if (ArrayAttr names = op.getActivationsAttr()) {
      // RNN's schema default lists two (for both directions) even when the
      // op has one.
      if (names.size() != perDir * dirs && !(dirs == 1 && names.size() == 2 * perDir))
        return unsupported(rewriter, op, "activations must list " + Twine(perDir * dirs) +
                                             " functions");
      for (Attribute a : names.getValue().take_front(perDir * dirs))
        acts.push_back({StringRef(cast<StringAttr>(a).getValue()).lower()});
    } else {
      const char *defaults[] = {kind == Kind::RNN ? "tanh" : "sigmoid", "tanh", "tanh"};
      for (int64_t d = 0; d < dirs; ++d)
        for (size_t i = 0; i < perDir; ++i)
          acts.push_back({defaults[i]});
    }
    ArrayRef<float> alphas, betas;
    if (auto a = op.getActivationAlpha())
      alphas = *a;
    if (auto a = op.getActivationBeta())
      betas = *a;
    for (Activation &a : acts) {
      if (!knownActivation(a.name))
        return unsupported(rewriter, op, "activation '" + a.name + "' is not supported");
      defaultParams(a);
      if (usesAlpha(a.name) && !alphas.empty()) {
        a.alpha = alphas.front();
        alphas = alphas.drop_front();
      }
      if (usesBeta(a.name) && !betas.empty()) {
        a.beta = betas.front();
        betas = betas.drop_front();
      }
    }
    std::optional<double> clip;
    if (auto c = op.getClipAttr())
      clip = c.getValueAsDouble();
    bool lbr = false;
    if constexpr (kind == Kind::GRU)
      lbr = op.getLinearBeforeReset() != 0;

    auto stateType = RankedTensorType::get({batch, hidden}, et);
    Value zero = scalarConstant(rewriter, loc, et, 0);
    // X's length and batch (constants when static); a new tensor of
    // `shape`, whose dynamic dims are X's length where `dims` says 0 and
    // its batch where it says 1.
    Value seqSize = dimValue(rewriter, loc, x, 0), batchSize = dimValue(rewriter, loc, x, 1);
    auto empty = [&](ArrayRef<int64_t> shape, ArrayRef<int> dims) -> Value {
      SmallVector<Value> sizes;
      for (auto [d, which] : llvm::zip_equal(shape, dims))
        if (ShapedType::isDynamic(d))
          sizes.push_back(which == 0 ? seqSize : batchSize);
      return emptyTensor(rewriter, loc, RankedTensorType::get(shape, et), sizes);
    };
    auto filled = [&](ArrayRef<int64_t> shape, ArrayRef<int> dims) -> Value {
      return linalg::FillOp::create(rewriter, loc, zero, empty(shape, dims)).getResult(0);
    };
    auto initialState = [&](Value orig, Value conv) -> Value {
      if (onnx::isNone(orig))
        return Value();
      return batchFirst ? transposeTensor(rewriter, loc, conv, {1, 0, 2}) : conv;
    };
    Value h0All = initialState(op.getInitialH(), adaptor.getInitialH());
    Value c0All;
    Value peepAll, lens;
    if constexpr (kind == Kind::LSTM) {
      c0All = initialState(op.getInitialC(), adaptor.getInitialC());
      if (!onnx::isNone(op.getP()))
        peepAll = adaptor.getP();
    }
    if (!onnx::isNone(op.getSequenceLens()))
      lens = adaptor.getSequenceLens();

    bool dynamic = ShapedType::isDynamic(seq) || ShapedType::isDynamic(batch);
    int64_t rows = dynamic ? ShapedType::kDynamic : seq * batch;
    Value x2d = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({rows, input}, et), x,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    auto gatesType = RankedTensorType::get({gates * hidden}, et);
    SmallVector<Value> hs, cs;
    // Y [seq, dirs, batch, H], built direction by direction: each loop's
    // outputs go into the direction's window of Y, taken from Y as it is
    // so far, and are put back there, so that bufferization keeps one
    // buffer (a buffer of the loop's own, copied into Y after, was 0.15
    // ms of serial copies per layer over a dynamic length and batch).
    Value y = onnx::isNone(op.getY()) ? Value() : empty({seq, dirs, batch, hidden}, {0, 2, 1, 2});
    for (int64_t d = 0; d < dirs; ++d) {
      bool reverse = direction == "reverse" || d == 1;
      OpFoldResult dIdx = rewriter.getIndexAttr(d);
      StepContext s;
      s.kind = kind;
      s.et = et;
      s.hidden = hidden;
      s.clip = clip;
      s.acts = ArrayRef(acts).slice(d * perDir, perDir);
      // W^T and R^T [K, G*H]: transposed at compile time when they are
      // constants, else once before the loop, so that every matmul reads
      // its weight along rows (the layout the contraction kernels take).
      auto transposedWeight = [&](Value orig, Value conv) -> Value {
        if (std::optional<Value> t = transposedConstant(rewriter, loc, orig, d))
          return *t;
        return transposeTensor(rewriter, loc, extractSliceAt(rewriter, loc, conv, 0, dIdx), {1, 0});
      };
      s.r = transposedWeight(op.getR(), adaptor.getR());
      s.linearBeforeReset = lbr;
      // Input projection of every step, plus Wb + Rb (GRU with
      // linear_before_reset keeps Rb of the h gate for inside the reset).
      Value xw = matmul(rewriter, loc, x2d, transposedWeight(op.getW(), adaptor.getW()));
      if (!onnx::isNone(op.getB())) {
        Value bd = extractSliceAt(rewriter, loc,
                                  reshapeTensor(rewriter, loc, adaptor.getB(),
                                                RankedTensorType::get({dirs, 2, gates * hidden}, et)),
                                  0, dIdx);
        Value wb = extractSliceAt(rewriter, loc, bd, 0, rewriter.getIndexAttr(0));
        Value rb = extractSliceAt(rewriter, loc, bd, 0, rewriter.getIndexAttr(1));
        int64_t hStart = (gates - 1) * hidden;
        // Wb + Rb as a plain elementwise sum (fused into the broadcast
        // below, it stays a generic the vectorisers take); with
        // linear_before_reset, Rb's h-gate block is zeroed first.
        Value rbSum = rb;
        if (kind == Kind::GRU && lbr) {
          auto blockType = RankedTensorType::get({hidden}, et);
          Value zeros = linalg::FillOp::create(rewriter, loc, zero,
                                               emptyTensor(rewriter, loc, blockType))
                            .getResult(0);
          rbSum = tensor::InsertSliceOp::create(
              rewriter, loc, zeros, rb, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(hStart)},
              ArrayRef<OpFoldResult>{rewriter.getIndexAttr(hidden)},
              ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
        }
        Value bias = broadcastGeneric(rewriter, loc, ValueRange{wb, rbSum}, gatesType,
                                      [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                        return arith::AddFOp::create(b, l, a[0], a[1]);
                                      });
        xw = broadcastGeneric(rewriter, loc, ValueRange{xw, bias},
                              cast<RankedTensorType>(xw.getType()),
                              [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                return arith::AddFOp::create(b, l, a[0], a[1]);
                              },
                              xw);
        if (kind == Kind::GRU && lbr)
          s.rbh = tensor::ExtractSliceOp::create(
              rewriter, loc, RankedTensorType::get({hidden}, et), rb,
              ArrayRef<OpFoldResult>{rewriter.getIndexAttr(hStart)},
              ArrayRef<OpFoldResult>{rewriter.getIndexAttr(hidden)},
              ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
      }
      xw = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get({seq, batch, gates * hidden}, et), xw,
          ArrayRef<ReassociationIndices>{{0, 1}, {2}},
          ArrayRef<OpFoldResult>{getAsOpFoldResult(seqSize), getAsOpFoldResult(batchSize),
                                 rewriter.getIndexAttr(gates * hidden)});
      if (peepAll)
        s.peep = extractSliceAt(rewriter, loc, peepAll, 0, dIdx);

      Value h0 = h0All ? extractSliceAt(rewriter, loc, h0All, 0, dIdx)
                       : filled(stateType.getShape(), {1, 1});
      SmallVector<Value> iters{h0};
      if (kind == Kind::LSTM)
        iters.push_back(c0All ? extractSliceAt(rewriter, loc, c0All, 0, dIdx)
                              : filled(stateType.getShape(), {1, 1}));
      Value ySeq = y ? extractSliceAt(rewriter, loc, y, 1, dIdx)
                     : empty({seq, batch, hidden}, {0, 1, 1});
      iters.push_back(linalg::FillOp::create(rewriter, loc, zero, ySeq).getResult(0));
      Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      Value last;
      if (reverse)
        last = ShapedType::isDynamic(seq)
                   ? arith::SubIOp::create(rewriter, loc, seqSize, one).getResult()
                   : arith::ConstantIndexOp::create(rewriter, loc, seq - 1).getResult();
      auto loop = scf::ForOp::create(
          rewriter, loc, lb, seqSize, one, iters,
          [&](OpBuilder &b, Location l, Value t, ValueRange state) {
            Value tt = t;
            if (reverse)
              tt = arith::SubIOp::create(b, l, last, t);
            Value xt = extractSliceAt(b, l, xw, 0, tt);
            Value h = state[0];
            Value c = kind == Kind::LSTM ? state[1] : Value();
            Value ySeq = state.back();
            SmallVector<Value> next = step(b, l, s, xt, h, c);
            Value yt = next[0];
            if (lens) {
              // Past a batch entry's length: keep the state, write zeros.
              GateReads m(b, l, hidden);
              unsigned li = m.perBatch(lens);
              SmallVector<unsigned> nIdx, oIdx;
              for (size_t i = 0; i < next.size(); ++i) {
                nIdx.push_back(m.matrix(next[i], 0));
                oIdx.push_back(m.matrix(state[i], 0));
              }
              SmallVector<Value> masked = gateGeneric(
                  b, l, m, state[0], next.size() + 1,
                  [&](OpBuilder &nb, Location nl, ValueRange a) -> SmallVector<Value> {
                    Value len = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[li]);
                    Value valid = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, tt, len);
                    SmallVector<Value> out;
                    for (size_t i = 0; i < nIdx.size(); ++i)
                      out.push_back(arith::SelectOp::create(nb, nl, valid, a[nIdx[i]], a[oIdx[i]]));
                    out.push_back(arith::SelectOp::create(nb, nl, valid, a[nIdx[0]],
                                                          scalarConstant(nb, nl, et, 0)));
                    return out;
                  });
              yt = masked.pop_back_val();
              next = masked;
            }
            // The new state is copied over the old one, so that scf.for's
            // results share its iteration arguments' buffers (bufferization
            // requires it).
            for (size_t i = 0; i < next.size(); ++i)
              next[i] = linalg::CopyOp::create(b, l, next[i], state[i]).getResult(0);
            next.push_back(insertSliceAt(b, l, yt, ySeq, 0, tt));
            scf::YieldOp::create(b, l, next);
          });
      hs.push_back(loop.getResult(0));
      if (kind == Kind::LSTM)
        cs.push_back(loop.getResult(1));
      if (y)
        y = insertSliceAt(rewriter, loc, loop.getResults().back(), y, 1, dIdx);
    }

    // Stack the directions' states: [dirs, batch, H].
    auto stack = [&](ArrayRef<Value> parts, ArrayRef<int64_t> shape, ArrayRef<int> dims,
                     int64_t dim) {
      Value all = empty(shape, dims);
      for (int64_t d = 0; d < dirs; ++d)
        all = insertSliceAt(rewriter, loc, parts[d], all, dim, rewriter.getIndexAttr(d));
      return all;
    };
    SmallVector<Value> results;
    auto none = [&]() -> Value {
      return onnx::NoValueOp::create(rewriter, loc, rewriter.getNoneType());
    };
    if (onnx::isNone(op.getY())) {
      results.push_back(none());
    } else {
      results.push_back(batchFirst ? transposeTensor(rewriter, loc, y, {2, 0, 1, 3}) : y);
    }
    auto state = [&](Value orig, ArrayRef<Value> parts) {
      if (onnx::isNone(orig))
        return none();
      Value v = stack(parts, {dirs, batch, hidden}, {2, 1, 2}, 0);
      return batchFirst ? transposeTensor(rewriter, loc, v, {1, 0, 2}) : v;
    };
    results.push_back(state(op.getYH(), hs));
    if constexpr (kind == Kind::LSTM)
      results.push_back(state(op.getYC(), cs));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

namespace kiln::lowering {
void populateRecurrentPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<RecurrentPattern<onnx::RNNOp>, RecurrentPattern<onnx::GRUOp>,
               RecurrentPattern<onnx::LSTMOp>>(converter, patterns.getContext());
}
} // namespace kiln::lowering
