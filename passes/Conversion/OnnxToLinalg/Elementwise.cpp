//===- Elementwise.cpp - onnx elementwise ops -> linalg.generic ------------===//
//
// Every elementwise onnx op becomes one linalg.generic with numpy
// broadcasting (see broadcastGeneric); this file only says what each op
// computes on scalars. Transcendentals are left as `math` ops, which the
// codegen phase expands into polynomials (no libm in generated code). f64
// transcendentals are computed in f32 (the approximations are f32 only).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "mlir/IR/Matchers.h"

#include <functional>

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace {

/// The ONNX element types of an op's present operands and of its result.
struct ElemInfo {
  SmallVector<Type> in;
  Type out;
  bool isUnsigned() const { return in[0].isUnsignedInteger() || isBool(in[0]); }
  bool isFloat() const { return isa<FloatType>(in[0]); }
};

/// Which element types an op accepts (checked on its first operand).
enum class Accepts { Float, Numeric, Bool, Any, Cast };

using BodyFn = std::function<Value(OpBuilder &, Location, Operation *,
                                   ValueRange, const ElemInfo &)>;

/// Lowers one elementwise op (matched by name) through a scalar body.
struct ElementwisePattern : public ConversionPattern {
  ElementwisePattern(const TypeConverter &converter, MLIRContext *context,
                     StringRef name, Accepts accepts, BodyFn body)
      : ConversionPattern(converter, name, /*benefit=*/1, context),
        accepts(accepts), body(std::move(body)) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    ElemInfo info;
    SmallVector<Value> inputs;
    for (auto [orig, conv] : llvm::zip(op->getOperands(), operands)) {
      if (isa<NoneType>(orig.getType()))
        continue;
      info.in.push_back(elementTypeOf(orig));
      inputs.push_back(conv);
    }
    info.out = elementTypeOf(op->getResult(0));
    if (inputs.empty())
      return unsupported(rewriter, op, "no inputs");
    Type t = info.in[0];
    // float16/bfloat16 arithmetic is computed in f32: operands are extended
    // on load and the result rounded back on store.
    bool half = (t.isF16() || t.isBF16()) && accepts != Accepts::Cast &&
                accepts != Accepts::Bool;
    Type halfType = t;
    if (half) {
      for (Type &in : info.in)
        if (in == t)
          in = rewriter.getF32Type();
      if (info.out == t)
        info.out = rewriter.getF32Type();
    }
    if (half)
      t = rewriter.getF32Type();
    bool ok = true;
    switch (accepts) {
    case Accepts::Float: ok = isSupportedFloat(t); break;
    case Accepts::Numeric: ok = isSupportedFloat(t) || isSupportedInt(t); break;
    case Accepts::Bool: ok = isBool(t); break;
    case Accepts::Any: break;
    case Accepts::Cast: break;
    }
    // Casts also convert to and from float16/bfloat16 (stored as such).
    auto known = [&](Type ty) {
      return isSupportedFloat(ty) || isSupportedInt(ty) || isBool(ty) ||
             (accepts == Accepts::Cast && (ty.isF16() || ty.isBF16()));
    };
    // Casts between strings and numbers (Strings.cpp); not bool.
    bool text = accepts == Accepts::Cast &&
                (isStringType(info.in[0]) || isStringType(info.out));
    if (text) {
      if (!isStringCastable(info.in[0]) || !isStringCastable(info.out))
        return unsupported(rewriter, op,
                           "a cast between " + typeName(info.in[0]) + " and " +
                               typeName(info.out) +
                               " is not supported yet (strings cast to and from floats "
                               "and integers)");
    } else {
      for (Type in : info.in)
        ok &= known(in);
      ok &= known(info.out);
    }
    if (!ok)
      return unsupported(rewriter, op, "element type " + typeName(t) + " is not supported yet");
    // CastLike's second operand only gives the type.
    if (accepts == Accepts::Cast)
      inputs.resize(1);
    RankedTensorType resultType = convertedResultType(*typeConverter, op);
    // A dynamic operand dim must meet a dynamic result dim: read against a
    // static one it could be shorter than the loop over it.
    for (Value in : inputs) {
      auto inType = cast<RankedTensorType>(in.getType());
      int64_t lead = resultType.getRank() - inType.getRank();
      for (int64_t i = 0; i < inType.getRank(); ++i)
        if (inType.isDynamicDim(i) && !resultType.isDynamicDim(lead + i))
          return unsupported(rewriter, op,
                             "a dynamic operand dim broadcast to a static result dim");
    }
    Value result = broadcastGeneric(
        rewriter, op->getLoc(), inputs, resultType,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          if (!half)
            return body(b, loc, op, args, info);
          SmallVector<Value> wide;
          for (Value a : args)
            wide.push_back(a.getType() == halfType
                               ? arith::ExtFOp::create(b, loc, b.getF32Type(), a)
                               : a);
          Value r = body(b, loc, op, wide, info);
          Type outElem = resultType.getElementType();
          if (r.getType() != outElem && isa<FloatType>(outElem))
            r = arith::TruncFOp::create(b, loc, outElem, r);
          return r;
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  Accepts accepts;
  BodyFn body;
};

double attrF(Operation *op, StringRef name, double fallback) {
  if (auto a = op->getAttrOfType<FloatAttr>(name))
    return a.getValueAsDouble();
  return fallback;
}

Value cst(OpBuilder &b, Location loc, Value like, double v) {
  return scalarConstant(b, loc, like.getType(), v);
}

/// Applies a float math function; f64 goes through f32.
Value mathF(OpBuilder &b, Location loc, Value x,
            llvm::function_ref<Value(OpBuilder &, Location, Value)> fn) {
  if (!x.getType().isF64())
    return fn(b, loc, x);
  Value narrow = arith::TruncFOp::create(b, loc, b.getF32Type(), x);
  return arith::ExtFOp::create(b, loc, b.getF64Type(), fn(b, loc, narrow));
}

template <typename MathOp>
Value mathOp(OpBuilder &b, Location loc, Value x) {
  return mathF(b, loc, x, [](OpBuilder &nb, Location nloc, Value v) -> Value {
    return MathOp::create(nb, nloc, v);
  });
}

Value expF(OpBuilder &b, Location loc, Value x) {
  return mathOp<math::ExpOp>(b, loc, x);
}

Value sigmoidF(OpBuilder &b, Location loc, Value x) {
  Value one = cst(b, loc, x, 1.0);
  Value e = expF(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
}

Value selectLess(OpBuilder &b, Location loc, Value x, Value y, Value ifLess,
                 Value otherwise) {
  Value lt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, y);
  return arith::SelectOp::create(b, loc, lt, ifLess, otherwise);
}

Value maxOf(OpBuilder &b, Location loc, Value x, Value y, bool isUnsigned) {
  if (isa<FloatType>(x.getType()))
    return arith::MaximumFOp::create(b, loc, x, y);
  if (isUnsigned)
    return arith::MaxUIOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}

Value minOf(OpBuilder &b, Location loc, Value x, Value y, bool isUnsigned) {
  if (isa<FloatType>(x.getType()))
    return arith::MinimumFOp::create(b, loc, x, y);
  if (isUnsigned)
    return arith::MinUIOp::create(b, loc, x, y);
  return arith::MinSIOp::create(b, loc, x, y);
}

/// Integer division that never traps: x / 0 gives x, MIN / -1 gives -MIN.
Value safeDivI(OpBuilder &b, Location loc, Value x, Value y, bool isUnsigned) {
  Value zero = cst(b, loc, y, 0), one = cst(b, loc, y, 1);
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
  if (isUnsigned) {
    Value d = arith::SelectOp::create(b, loc, isZero, one, y);
    return arith::DivUIOp::create(b, loc, x, d);
  }
  Value minusOne = cst(b, loc, y, -1);
  Value isMinusOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, minusOne);
  Value bad = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  Value d = arith::SelectOp::create(b, loc, bad, one, y);
  Value q = arith::DivSIOp::create(b, loc, x, d);
  Value neg = arith::SubIOp::create(b, loc, zero, x);
  return arith::SelectOp::create(b, loc, isMinusOne, neg, q);
}

/// pow(x, y) for floats without libm: exp(y * log|x|), with the sign of x
/// for odd integral y, NaN for negative x and fractional y, and 1 for y == 0.
Value powF(OpBuilder &b, Location loc, Value x, Value y) {
  Value zero = cst(b, loc, x, 0), one = cst(b, loc, x, 1), two = cst(b, loc, x, 2);
  Value ax = math::AbsFOp::create(b, loc, x);
  Value lg = mathOp<math::LogOp>(b, loc, ax);
  Value r = expF(b, loc, arith::MulFOp::create(b, loc, y, lg));
  Value fy = math::FloorOp::create(b, loc, y);
  Value isInt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, fy, y);
  Value half = math::FloorOp::create(b, loc, arith::DivFOp::create(b, loc, y, two));
  Value isOdd = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::ONE, arith::MulFOp::create(b, loc, half, two), y);
  Value negR = arith::NegFOp::create(b, loc, r);
  Value nan = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(x.getType(),
                             APFloat::getNaN(cast<FloatType>(x.getType())
                                                 .getFloatSemantics())));
  Value signedR = arith::SelectOp::create(
      b, loc, isInt, arith::SelectOp::create(b, loc, isOdd, negR, r), nan);
  Value xNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
  Value res = arith::SelectOp::create(b, loc, xNeg, signedR, r);
  Value yZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, y, zero);
  return arith::SelectOp::create(b, loc, yZero, one, res);
}

/// The splat value of a constant operand, if it is one.
std::optional<double> splatOf(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  if (isa<FloatType>(attr.getElementType()))
    return attr.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

Value powBody(OpBuilder &b, Location loc, Operation *op, ValueRange a,
              const ElemInfo &info) {
  if (isa<FloatType>(info.out)) {
    Value x = a[0];
    Value y = castScalar(b, loc, a[1], info.in[1], info.out);
    if (std::optional<double> s = splatOf(op->getOperand(1))) {
      if (*s == 1.0) return x;
      if (*s == 2.0) return arith::MulFOp::create(b, loc, x, x);
      if (*s == 3.0)
        return arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
      if (*s == 0.5) return math::SqrtOp::create(b, loc, x);
    }
    return powF(b, loc, x, y);
  }
  // Integer base: compute in f64 and round (exact for the values where the
  // integer result is representable).
  Type f64 = b.getF64Type();
  Value x = castScalar(b, loc, a[0], info.in[0], f64);
  Value y = castScalar(b, loc, a[1], info.in[1], f64);
  Value r = math::RoundEvenOp::create(b, loc, powF(b, loc, x, y));
  return castScalar(b, loc, r, f64, info.out);
}

void addAll(const TypeConverter &tc, RewritePatternSet &patterns,
            llvm::StringSet<> *dynamicReady) {
  MLIRContext *ctx = patterns.getContext();
  auto add = [&](StringRef name, Accepts accepts, BodyFn fn) {
    patterns.add<ElementwisePattern>(tc, ctx, name, accepts, std::move(fn));
    if (dynamicReady)
      dynamicReady->insert(name);
  };
  using B = OpBuilder;
  using L = Location;
  using O = Operation *;
  using V = ValueRange;
  using I = const ElemInfo &;
  using FPred = arith::CmpFPredicate;
  using IPred = arith::CmpIPredicate;

  // Arithmetic.
  add("onnx.Add", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    if (i.isFloat()) return arith::AddFOp::create(b, l, a[0], a[1]);
    return arith::AddIOp::create(b, l, a[0], a[1]);
  });
  add("onnx.Sub", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    if (i.isFloat()) return arith::SubFOp::create(b, l, a[0], a[1]);
    return arith::SubIOp::create(b, l, a[0], a[1]);
  });
  add("onnx.Mul", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    if (i.isFloat()) return arith::MulFOp::create(b, l, a[0], a[1]);
    return arith::MulIOp::create(b, l, a[0], a[1]);
  });
  add("onnx.Div", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    if (i.isFloat()) return arith::DivFOp::create(b, l, a[0], a[1]);
    return safeDivI(b, l, a[0], a[1], i.isUnsigned());
  });
  add("onnx.Pow", Accepts::Numeric, powBody);
  add("onnx.Neg", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    if (i.isFloat()) return arith::NegFOp::create(b, l, a[0]);
    return arith::SubIOp::create(b, l, cst(b, l, a[0], 0), a[0]);
  });
  add("onnx.Abs", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    if (i.isFloat()) return math::AbsFOp::create(b, l, a[0]);
    if (i.isUnsigned()) return a[0];
    return math::AbsIOp::create(b, l, a[0]);
  });
  add("onnx.Reciprocal", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return arith::DivFOp::create(b, l, cst(b, l, a[0], 1), a[0]);
  });
  add("onnx.Sqrt", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return math::SqrtOp::create(b, l, a[0]);
  });
  add("onnx.Exp", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return expF(b, l, a[0]);
  });
  add("onnx.Log", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::LogOp>(b, l, a[0]);
  });
  add("onnx.Tanh", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::TanhOp>(b, l, a[0]);
  });
  add("onnx.Erf", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::ErfOp>(b, l, a[0]);
  });
  add("onnx.Sin", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::SinOp>(b, l, a[0]);
  });
  add("onnx.Cos", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::CosOp>(b, l, a[0]);
  });
  add("onnx.Tan", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::TanOp>(b, l, a[0]);
  });
  add("onnx.Asin", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::AsinOp>(b, l, a[0]);
  });
  add("onnx.Acos", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::AcosOp>(b, l, a[0]);
  });
  add("onnx.Atan", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::AtanOp>(b, l, a[0]);
  });
  add("onnx.Sinh", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::SinhOp>(b, l, a[0]);
  });
  add("onnx.Cosh", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::CoshOp>(b, l, a[0]);
  });
  add("onnx.Asinh", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::AsinhOp>(b, l, a[0]);
  });
  add("onnx.Acosh", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::AcoshOp>(b, l, a[0]);
  });
  add("onnx.Atanh", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return mathOp<math::AtanhOp>(b, l, a[0]);
  });
  add("onnx.Mod", Accepts::Numeric, [](B &b, L l, O op, V a, I i) -> Value {
    auto fmodAttr = op->getAttrOfType<IntegerAttr>("fmod");
    bool cStyle = fmodAttr && fmodAttr.getInt() != 0;
    Value x = a[0], y = a[1];
    if (i.isFloat()) {
      // fmod: x - trunc(x / y) * y (the sign of x); without fmod, the sign
      // of y (Python's %).
      Value q = math::TruncOp::create(b, l, arith::DivFOp::create(b, l, x, y));
      Value r = arith::SubFOp::create(b, l, x, arith::MulFOp::create(b, l, q, y));
      if (cStyle)
        return r;
      Value zero = cst(b, l, r, 0);
      Value rNeg = arith::CmpFOp::create(b, l, FPred::OLT, r, zero);
      Value yNeg = arith::CmpFOp::create(b, l, FPred::OLT, y, zero);
      Value nz = arith::CmpFOp::create(b, l, FPred::ONE, r, zero);
      Value fix = arith::AndIOp::create(b, l, nz, arith::XOrIOp::create(b, l, rNeg, yNeg));
      return arith::SelectOp::create(b, l, fix, arith::AddFOp::create(b, l, r, y), r);
    }
    Value zero = cst(b, l, y, 0), one = cst(b, l, y, 1);
    Value isZero = arith::CmpIOp::create(b, l, IPred::eq, y, zero);
    Value d = arith::SelectOp::create(b, l, isZero, one, y);
    if (i.isUnsigned())
      return arith::RemUIOp::create(b, l, x, d);
    // -1 divides everything: avoid MIN % -1, which traps.
    Value minusOne = arith::CmpIOp::create(b, l, IPred::eq, y, cst(b, l, y, -1));
    d = arith::SelectOp::create(b, l, minusOne, one, d);
    Value r = arith::RemSIOp::create(b, l, x, d);
    if (cStyle)
      return r;
    Value rNeg = arith::CmpIOp::create(b, l, IPred::slt, r, zero);
    Value yNeg = arith::CmpIOp::create(b, l, IPred::slt, y, zero);
    Value nz = arith::CmpIOp::create(b, l, IPred::ne, r, zero);
    Value fix = arith::AndIOp::create(b, l, nz, arith::XOrIOp::create(b, l, rNeg, yNeg));
    return arith::SelectOp::create(b, l, fix, arith::AddIOp::create(b, l, r, y), r);
  });
  add("onnx.Shrink", Accepts::Numeric, [](B &b, L l, O op, V a, I i) -> Value {
    Value x = a[0];
    Value bias = cst(b, l, x, attrF(op, "bias", 0.0));
    Value lambd = cst(b, l, x, attrF(op, "lambd", 0.5));
    if (!i.isFloat()) {
      // Integer inputs: compare and subtract in the integer type.
      Value lo = arith::SubIOp::create(b, l, cst(b, l, x, 0), lambd);
      Value below = arith::CmpIOp::create(b, l, IPred::slt, x, lo);
      Value above = arith::CmpIOp::create(b, l, IPred::sgt, x, lambd);
      Value r = arith::SelectOp::create(b, l, above, arith::SubIOp::create(b, l, x, bias),
                                        cst(b, l, x, 0));
      return arith::SelectOp::create(b, l, below, arith::AddIOp::create(b, l, x, bias), r);
    }
    Value below = arith::CmpFOp::create(b, l, FPred::OLT, x, arith::NegFOp::create(b, l, lambd));
    Value above = arith::CmpFOp::create(b, l, FPred::OGT, x, lambd);
    Value r = arith::SelectOp::create(b, l, above, arith::SubFOp::create(b, l, x, bias),
                                      cst(b, l, x, 0));
    return arith::SelectOp::create(b, l, below, arith::AddFOp::create(b, l, x, bias), r);
  });
  add("onnx.BitShift", Accepts::Numeric, [](B &b, L l, O op, V a, I) -> Value {
    auto dir = op->getAttrOfType<StringAttr>("direction");
    bool left = dir && dir.getValue() == "LEFT";
    Value x = a[0], y = a[1];
    unsigned width = x.getType().getIntOrFloatBitWidth();
    // Shifting by the width or more gives 0 (LLVM would give poison).
    Value big = arith::CmpIOp::create(b, l, IPred::uge, y, cst(b, l, y, width));
    Value s = left ? Value(arith::ShLIOp::create(b, l, x, y))
                   : Value(arith::ShRUIOp::create(b, l, x, y));
    return arith::SelectOp::create(b, l, big, cst(b, l, x, 0), s);
  });
  add("onnx.Floor", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return math::FloorOp::create(b, l, a[0]);
  });
  add("onnx.Ceil", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return math::CeilOp::create(b, l, a[0]);
  });
  add("onnx.Round", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return math::RoundEvenOp::create(b, l, a[0]);
  });
  add("onnx.Sign", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    Value x = a[0], zero = cst(b, l, x, 0), one = cst(b, l, x, 1);
    if (i.isFloat()) {
      Value pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, zero);
      Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, zero);
      Value s = arith::SelectOp::create(b, l, pos, one, zero);
      return arith::SelectOp::create(b, l, neg, cst(b, l, x, -1), s);
    }
    Value pos = arith::CmpIOp::create(
        b, l, i.isUnsigned() ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt,
        x, zero);
    Value s = arith::SelectOp::create(b, l, pos, one, zero);
    if (i.isUnsigned()) return s;
    Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, x, zero);
    return arith::SelectOp::create(b, l, neg, cst(b, l, x, -1), s);
  });

  // Activations.
  add("onnx.Relu", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    return maxOf(b, l, a[0], cst(b, l, a[0], 0), i.isUnsigned());
  });
  add("onnx.LeakyRelu", Accepts::Float, [](B &b, L l, O op, V a, I) -> Value {
    Value x = a[0];
    Value scaled = arith::MulFOp::create(b, l, x, cst(b, l, x, attrF(op, "alpha", 0.01)));
    return selectLess(b, l, x, cst(b, l, x, 0), scaled, x);
  });
  add("onnx.PRelu", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    Value x = a[0];
    return selectLess(b, l, x, cst(b, l, x, 0), arith::MulFOp::create(b, l, x, a[1]), x);
  });
  add("onnx.Sigmoid", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return sigmoidF(b, l, a[0]);
  });
  add("onnx.HardSigmoid", Accepts::Float, [](B &b, L l, O op, V a, I) -> Value {
    Value x = a[0];
    Value y = arith::AddFOp::create(
        b, l, arith::MulFOp::create(b, l, x, cst(b, l, x, attrF(op, "alpha", 0.2))),
        cst(b, l, x, attrF(op, "beta", 0.5)));
    y = arith::MinimumFOp::create(b, l, y, cst(b, l, x, 1));
    return arith::MaximumFOp::create(b, l, y, cst(b, l, x, 0));
  });
  add("onnx.HardSwish", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    Value x = a[0];
    Value y = arith::AddFOp::create(
        b, l, arith::MulFOp::create(b, l, x, cst(b, l, x, 1.0 / 6.0)), cst(b, l, x, 0.5));
    y = arith::MinimumFOp::create(b, l, y, cst(b, l, x, 1));
    y = arith::MaximumFOp::create(b, l, y, cst(b, l, x, 0));
    return arith::MulFOp::create(b, l, x, y);
  });
  add("onnx.Softplus", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    // log(1 + exp(x)), exact enough and overflow-free: max(x, 0) +
    // log1p(exp(-|x|)).
    Value x = a[0];
    Value e = expF(b, l, arith::NegFOp::create(b, l, math::AbsFOp::create(b, l, x)));
    Value lp = mathOp<math::Log1pOp>(b, l, e);
    return arith::AddFOp::create(b, l, arith::MaximumFOp::create(b, l, x, cst(b, l, x, 0)), lp);
  });
  add("onnx.Softsign", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    Value x = a[0];
    Value d = arith::AddFOp::create(b, l, cst(b, l, x, 1), math::AbsFOp::create(b, l, x));
    return arith::DivFOp::create(b, l, x, d);
  });
  add("onnx.Elu", Accepts::Float, [](B &b, L l, O op, V a, I) -> Value {
    Value x = a[0];
    Value em1 = arith::SubFOp::create(b, l, expF(b, l, x), cst(b, l, x, 1));
    Value neg = arith::MulFOp::create(b, l, cst(b, l, x, attrF(op, "alpha", 1.0)), em1);
    return selectLess(b, l, x, cst(b, l, x, 0), neg, x);
  });
  add("onnx.Selu", Accepts::Float, [](B &b, L l, O op, V a, I) -> Value {
    Value x = a[0];
    double alpha = attrF(op, "alpha", 1.67326319217681884765625);
    double gamma = attrF(op, "gamma", 1.05070102214813232421875);
    Value em1 = arith::SubFOp::create(b, l, expF(b, l, x), cst(b, l, x, 1));
    Value neg = arith::MulFOp::create(b, l, cst(b, l, x, alpha), em1);
    Value y = arith::SelectOp::create(
        b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, cst(b, l, x, 0)),
        x, neg);
    return arith::MulFOp::create(b, l, cst(b, l, x, gamma), y);
  });
  add("onnx.Celu", Accepts::Float, [](B &b, L l, O op, V a, I) -> Value {
    Value x = a[0], zero = cst(b, l, x, 0);
    Value alpha = cst(b, l, x, attrF(op, "alpha", 1.0));
    Value e = expF(b, l, arith::DivFOp::create(b, l, x, alpha));
    Value neg = arith::MulFOp::create(b, l, alpha, arith::SubFOp::create(b, l, e, cst(b, l, x, 1)));
    return arith::AddFOp::create(b, l, arith::MaximumFOp::create(b, l, x, zero),
                                 arith::MinimumFOp::create(b, l, neg, zero));
  });
  add("onnx.ThresholdedRelu", Accepts::Float, [](B &b, L l, O op, V a, I) -> Value {
    Value x = a[0];
    Value gt = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x,
                                     cst(b, l, x, attrF(op, "alpha", 1.0)));
    return arith::SelectOp::create(b, l, gt, x, cst(b, l, x, 0));
  });
  add("onnx.Clip", Accepts::Numeric, [](B &b, L l, O op, V a, I i) -> Value {
    // Operands that are `none` were dropped; find which bounds exist.
    Value x = a[0];
    unsigned next = 1;
    auto present = [&](unsigned idx) {
      return op->getNumOperands() > idx && !isa<NoneType>(op->getOperand(idx).getType());
    };
    if (present(1)) {
      Value lo = a[next++];
      x = i.isFloat() ? selectLess(b, l, x, lo, lo, x) : maxOf(b, l, x, lo, i.isUnsigned());
    }
    if (present(2)) {
      Value hi = a[next++];
      x = i.isFloat() ? selectLess(b, l, hi, x, hi, x) : minOf(b, l, x, hi, i.isUnsigned());
    }
    return x;
  });

  // Variadic.
  add("onnx.Max", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    Value r = a[0];
    for (Value v : a.drop_front()) r = maxOf(b, l, r, v, i.isUnsigned());
    return r;
  });
  add("onnx.Min", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    Value r = a[0];
    for (Value v : a.drop_front()) r = minOf(b, l, r, v, i.isUnsigned());
    return r;
  });
  add("onnx.Sum", Accepts::Numeric, [](B &b, L l, O, V a, I i) -> Value {
    Value r = a[0];
    for (Value v : a.drop_front())
      r = i.isFloat() ? Value(arith::AddFOp::create(b, l, r, v))
                      : Value(arith::AddIOp::create(b, l, r, v));
    return r;
  });
  add("onnx.Mean", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    Value r = a[0];
    for (Value v : a.drop_front()) r = arith::AddFOp::create(b, l, r, v);
    return arith::DivFOp::create(b, l, r, cst(b, l, r, a.size()));
  });

  // Comparison and logic.
  auto compare = [&](StringRef name, arith::CmpFPredicate fp,
                     arith::CmpIPredicate sp, arith::CmpIPredicate up) {
    add(name, Accepts::Any, [=](B &b, L l, O, V a, I i) -> Value {
      if (i.isFloat()) return arith::CmpFOp::create(b, l, fp, a[0], a[1]);
      return arith::CmpIOp::create(b, l, i.isUnsigned() ? up : sp, a[0], a[1]);
    });
  };
  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  compare("onnx.Equal", FP::OEQ, IP::eq, IP::eq);
  compare("onnx.Less", FP::OLT, IP::slt, IP::ult);
  compare("onnx.LessOrEqual", FP::OLE, IP::sle, IP::ule);
  compare("onnx.Greater", FP::OGT, IP::sgt, IP::ugt);
  compare("onnx.GreaterOrEqual", FP::OGE, IP::sge, IP::uge);
  add("onnx.And", Accepts::Bool, [](B &b, L l, O, V a, I) -> Value {
    return arith::AndIOp::create(b, l, a[0], a[1]);
  });
  add("onnx.Or", Accepts::Bool, [](B &b, L l, O, V a, I) -> Value {
    return arith::OrIOp::create(b, l, a[0], a[1]);
  });
  add("onnx.Xor", Accepts::Bool, [](B &b, L l, O, V a, I) -> Value {
    return arith::XOrIOp::create(b, l, a[0], a[1]);
  });
  add("onnx.Not", Accepts::Bool, [](B &b, L l, O, V a, I) -> Value {
    return arith::XOrIOp::create(b, l, a[0], cst(b, l, a[0], 1));
  });
  add("onnx.Where", Accepts::Bool, [](B &b, L l, O, V a, I) -> Value {
    return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
  });
  add("onnx.IsNaN", Accepts::Float, [](B &b, L l, O, V a, I) -> Value {
    return arith::CmpFOp::create(b, l, FP::UNO, a[0], a[0]);
  });
  add("onnx.IsInf", Accepts::Float, [](B &b, L l, O op, V a, I) -> Value {
    Value x = a[0];
    auto flag = [&](StringRef n) {
      auto attr = op->getAttrOfType<IntegerAttr>(n);
      return !attr || attr.getInt() != 0;
    };
    Value inf = arith::ConstantOp::create(
        b, l, b.getFloatAttr(x.getType(), APFloat::getInf(cast<FloatType>(x.getType()).getFloatSemantics())));
    Value ninf = arith::NegFOp::create(b, l, inf);
    Value isPos = arith::CmpFOp::create(b, l, FP::OEQ, x, inf);
    Value isNeg = arith::CmpFOp::create(b, l, FP::OEQ, x, ninf);
    Value f = cst(b, l, isPos, 0);
    Value r = flag("detect_positive") ? isPos : f;
    if (flag("detect_negative")) r = arith::OrIOp::create(b, l, r, isNeg);
    return r;
  });

  // Cast; to and from strings through the runtime's hooks.
  auto castBody = [](B &b, L l, O op, V a, I i) -> Value {
    auto module = op->getParentOfType<ModuleOp>();
    if (isStringType(i.in[0]))
      return castFromString(b, l, module, a[0], i.out);
    if (isStringType(i.out))
      return castToString(b, l, module, a[0], i.in[0]);
    return castScalar(b, l, a[0], i.in[0], i.out);
  };
  add("onnx.Cast", Accepts::Cast, castBody);
  add("onnx.CastLike", Accepts::Cast, castBody);
}

} // namespace

namespace kiln::lowering {
void populateElementwisePatterns(const TypeConverter &converter,
                                 RewritePatternSet &patterns,
                                 llvm::StringSet<> *dynamicReady) {
  addAll(converter, patterns, dynamicReady);
}
} // namespace kiln::lowering
