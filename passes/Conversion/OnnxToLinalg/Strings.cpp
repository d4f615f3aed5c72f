//===- Strings.cpp - String tensors: Cast, StringNormalizer, outputs ------===//
//
// A string tensor lowers to a tensor of i64: each element the address of a
// NUL-terminated UTF-8 text (the C ABI's `char *`, docs/abi.md; strings
// need a 64-bit host). Ops that only move elements move the addresses.
// What reads or makes text calls the C runtime's hooks (runtime/src/
// strings.c) from scalar code: a Cast to or from string is an elementwise
// generic whose body calls kiln_string_from_* / kiln_string_to_*; texts the
// model makes belong to the run's arena, freed when the entry point returns.
//
//   - StringNormalizer walks its [C] (or [1, C]) input in an scf.for,
//     keeping the elements that are not stopwords (kiln_string_in_list
//     against a constant list) and changing their case; the output has the
//     model's static size (its declared shape), initialised to "".
//   - The entry function's string results are exported last: a generic
//     copies every element with kiln_string_export, so that the caller
//     owns each output string (freed with free()), whatever it points into.
//
// Constant texts (the stopwords, "") are private LLVM globals whose
// addresses are taken in place.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/OnnxToLinalg/Patterns.h"

#include "dialects/Onnx/IR/DataTypes.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::lowering;
namespace onnx = kiln::onnx;

namespace kiln::lowering {

Value callStringHook(OpBuilder &b, Location loc, ModuleOp module, StringRef name,
                     Type result, ValueRange args) {
  if (!module.lookupSymbol<func::FuncOp>(name)) {
    OpBuilder top(module.getBodyRegion());
    auto decl = func::FuncOp::create(top, loc, name,
                                     top.getFunctionType(TypeRange(args), TypeRange(result)));
    decl.setPrivate();
  }
  return func::CallOp::create(b, loc, name, TypeRange(result), args).getResult(0);
}

Value constantStrings(OpBuilder &b, Location loc, ModuleOp module, ArrayRef<std::string> texts) {
  std::string bytes;
  for (const std::string &t : texts)
    bytes += t + '\0';
  if (bytes.empty())
    bytes = std::string(1, '\0');
  // One global per distinct list: named by its hash, the first free or
  // equal one of name, name_1, name_2, ... (hashes may collide).
  std::string base = "kiln_strings_" + std::to_string(llvm::hash_value(bytes) & 0xffffffffffff);
  auto arrayType = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
  LLVM::GlobalOp global;
  for (unsigned k = 0; !global; ++k) {
    std::string name = k ? base + "_" + std::to_string(k) : base;
    Operation *existing = module.lookupSymbol(name);
    if (!existing) {
      OpBuilder top(module.getBodyRegion());
      global = LLVM::GlobalOp::create(top, loc, arrayType, /*isConstant=*/true,
                                      LLVM::Linkage::Private, name, b.getStringAttr(bytes));
    } else if (auto g = dyn_cast<LLVM::GlobalOp>(existing)) {
      auto value = dyn_cast_or_null<StringAttr>(g.getValueOrNull());
      if (value && value.getValue() == bytes)
        global = g;
    }
  }
  Value address = LLVM::AddressOfOp::create(b, loc, global);
  return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), address);
}

Value castFromString(OpBuilder &b, Location loc, ModuleOp module, Value s, Type to) {
  if (isStringType(to))
    return s;
  if (to.isF32() || to.isF16() || to.isBF16()) {
    Value f = callStringHook(b, loc, module, "kiln_string_to_f32", b.getF32Type(), s);
    return to.isF32() ? f : arith::TruncFOp::create(b, loc, to, f).getResult();
  }
  if (to.isF64())
    return callStringHook(b, loc, module, "kiln_string_to_f64", b.getF64Type(), s);
  auto i = cast<IntegerType>(to);
  Value v = callStringHook(b, loc, module,
                           i.isUnsigned() ? "kiln_string_to_u64" : "kiln_string_to_i64",
                           b.getI64Type(), s);
  if (i.getWidth() == 64)
    return v;
  return arith::TruncIOp::create(b, loc, b.getIntegerType(i.getWidth()), v);
}

Value castToString(OpBuilder &b, Location loc, ModuleOp module, Value x, Type from) {
  Type i64 = b.getI64Type();
  if (isStringType(from))
    return x;
  if (from.isF16() || from.isBF16())
    x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  if (from.isF32() || from.isF16() || from.isBF16())
    return callStringHook(b, loc, module, "kiln_string_from_f32", i64, x);
  if (from.isF64())
    return callStringHook(b, loc, module, "kiln_string_from_f64", i64, x);
  auto i = cast<IntegerType>(from);
  if (i.getWidth() < 64)
    x = i.isUnsigned() ? arith::ExtUIOp::create(b, loc, i64, x).getResult()
                       : arith::ExtSIOp::create(b, loc, i64, x).getResult();
  return callStringHook(b, loc, module,
                        i.isUnsigned() ? "kiln_string_from_u64" : "kiln_string_from_i64", i64,
                        x);
}

bool isStringCastable(Type type) {
  if (isStringType(type) || type.isF16() || type.isBF16() || isSupportedFloat(type))
    return true;
  auto i = dyn_cast<IntegerType>(type);
  return i && i.getWidth() >= 8 && i.getWidth() <= 64;
}

} // namespace kiln::lowering

namespace {

struct StringNormalizerPattern : public OpConversionPattern<onnx::StringNormalizerOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::StringNormalizerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    auto inType = dyn_cast<RankedTensorType>(adaptor.getX().getType());
    auto outType = dyn_cast_or_null<RankedTensorType>(
        getTypeConverter()->convertType(op.getY().getType()));
    if (!inType || !inType.hasStaticShape())
      return unsupported(rewriter, op, "the input's shape must be static");
    if (!outType || !outType.hasStaticShape())
      return unsupported(rewriter, op,
                         "the number of strings kept depends on the data: the output's "
                         "shape must be declared in the model (or follow from no stopwords)");
    // [C] -> [C'] or [1, C] -> [1, C'].
    int64_t rank = inType.getRank();
    if ((rank != 1 && rank != 2) || outType.getRank() != rank ||
        (rank == 2 && (inType.getDimSize(0) != 1 || outType.getDimSize(0) != 1)))
      return unsupported(rewriter, op, "the input must be [C] or [1, C], the output alike");
    StringRef action = op.getCaseChangeAction();
    if (action != "NONE" && action != "LOWER" && action != "UPPER")
      return unsupported(rewriter, op,
                         "case_change_action '" + action + "' is not NONE, LOWER or UPPER");
    SmallVector<std::string> stopwords;
    if (auto words = op.getStopwords())
      for (StringRef w : words->getAsValueRange<StringAttr>())
        stopwords.push_back(w.str());
    int64_t c = inType.getDimSize(rank - 1), kept = outType.getDimSize(rank - 1);
    if (stopwords.empty() && kept != c)
      return unsupported(rewriter, op,
                         "without stopwords every string is kept, but the output holds " +
                             std::to_string(kept) + " of " + std::to_string(c));
    bool ignoreCase = op.getIsCaseSensitive() == 0;

    Type i64 = rewriter.getI64Type(), i32 = rewriter.getI32Type();
    auto flatIn = RankedTensorType::get({c}, i64), flatOut = RankedTensorType::get({kept}, i64);
    Value x = adaptor.getX();
    if (rank == 2)
      x = tensor::CollapseShapeOp::create(rewriter, loc, flatIn, x,
                                          SmallVector<ReassociationIndices>{{0, 1}});
    // Every element not written stays "" (ONNX's output when nothing is
    // kept is one empty string).
    Value empty = constantStrings(rewriter, loc, module, {});
    Value init = linalg::FillOp::create(
                     rewriter, loc, empty,
                     tensor::EmptyOp::create(rewriter, loc, flatOut.getShape(), i64).getResult())
                     .getResult(0);
    Value list = stopwords.empty() ? Value() : constantStrings(rewriter, loc, module, stopwords);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value total = arith::ConstantIndexOp::create(rewriter, loc, c);
    Value capacity = arith::ConstantIndexOp::create(rewriter, loc, kept);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, total, one, ValueRange{init, zero},
        [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
          Value out = carried[0], n = carried[1];
          Value s = tensor::ExtractOp::create(b, l, x, i);
          Value keep = arith::ConstantIntOp::create(b, l, b.getI1Type(), 1);
          if (list) {
            Value found = callStringHook(
                b, l, module, "kiln_string_in_list", i32,
                {s, list, arith::ConstantIntOp::create(b, l, i64, stopwords.size()),
                 arith::ConstantIntOp::create(b, l, i32, ignoreCase ? 1 : 0)});
            keep = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, found,
                                         arith::ConstantIntOp::create(b, l, i32, 0));
          }
          // Strings beyond the output's size are dropped, never written
          // out of bounds.
          Value fits = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, n, capacity);
          Value write = arith::AndIOp::create(b, l, keep, fits);
          auto branch = scf::IfOp::create(
              b, l, write,
              [&](OpBuilder &t, Location tl) {
                Value v = s;
                if (action != "NONE")
                  v = callStringHook(
                      t, tl, module, "kiln_string_change_case", i64,
                      {s, arith::ConstantIntOp::create(t, tl, i32, action == "UPPER" ? 1 : 0)});
                Value updated = tensor::InsertOp::create(t, tl, v, out, n);
                scf::YieldOp::create(t, tl, updated);
              },
              [&](OpBuilder &e, Location el) { scf::YieldOp::create(e, el, out); });
          Value next = arith::SelectOp::create(
              b, l, keep, arith::AddIOp::create(b, l, n, one), n);
          scf::YieldOp::create(b, l, ValueRange{branch.getResult(0), next});
        });
    Value result = loop.getResult(0);
    if (rank == 2)
      result = tensor::ExpandShapeOp::create(rewriter, loc, outType, result,
                                             SmallVector<ReassociationIndices>{{0, 1}});
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

namespace kiln::lowering {

void populateStringPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<StringNormalizerPattern>(converter, patterns.getContext());
}

void exportStringResults(func::FuncOp func, ArrayRef<unsigned> results) {
  if (results.empty())
    return;
  auto module = func->getParentOfType<ModuleOp>();
  func.walk([&](func::ReturnOp ret) {
    if (ret->getParentOp() != func)
      return;
    OpBuilder b(ret);
    for (unsigned i : results) {
      Value v = ret.getOperand(i);
      auto type = cast<RankedTensorType>(v.getType());
      Value copied = broadcastGeneric(b, ret.getLoc(), v, type,
                                      [&](OpBuilder &nb, Location l, ValueRange args) {
                                        return callStringHook(nb, l, module,
                                                              "kiln_string_export",
                                                              nb.getI64Type(), args[0]);
                                      });
      ret.setOperand(i, copied);
    }
  });
}

} // namespace kiln::lowering
