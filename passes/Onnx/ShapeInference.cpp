//===- ShapeInference.cpp - onnx-shape-inference pass ----------------------===//
//
// Drives `ShapeInferenceOpInterface` and folding to a fixed point with the
// greedy rewrite driver: refining an op's result types re-queues its users,
// folding an op whose operands became constant re-queues its users too. At
// the end the function's signature follows the types it returns.
//
//===----------------------------------------------------------------------===//

#include "passes/Onnx/Passes.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "onnx-shape-inference"

namespace kiln::onnx {
#define GEN_PASS_DEF_ONNXSHAPEINFERENCEPASS
#include "passes/Onnx/Passes.h.inc"
} // namespace kiln::onnx

using namespace mlir;
using namespace kiln::onnx;

namespace {

/// Refines one op's result types; re-queues users when something changed.
struct InferShapesPattern
    : public OpInterfaceRewritePattern<ShapeInferenceOpInterface> {
  InferShapesPattern(MLIRContext *context, bool &sawError)
      : OpInterfaceRewritePattern(context), sawError(sawError) {}

  LogicalResult matchAndRewrite(ShapeInferenceOpInterface op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Type> before(op->getResultTypes());
    if (failed(op.inferShapes())) {
      sawError = true;
      return failure();
    }
    if (llvm::equal(before, op->getResultTypes()))
      return failure();
    rewriter.modifyOpInPlace(op, [] {});
    for (Operation *user : op->getUsers())
      rewriter.modifyOpInPlace(user, [] {});
    return success();
  }

  bool &sawError;
};

/// A shape computation whose values are all known although an input of it
/// has a dynamic dim (Gather of a static dim from Shape of a tensor with
/// a dynamic one, and arithmetic on such values) becomes a constant.
struct FoldKnownShapeValues : public RewritePattern {
  FoldKnownShapeValues(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!op->getDialect() || op->getDialect()->getNamespace() != OnnxDialect::getDialectNamespace() ||
        isa<ConstantOp>(op) || op->getNumResults() != 1 || op->getNumRegions())
      return failure();
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape() || type.getRank() > 1 || type.getNumElements() > 64 ||
        !type.getElementType().isSignlessInteger(64))
      return failure();
    std::optional<SmallVector<int64_t>> values = partialInts(op->getResult(0));
    if (!values || static_cast<int64_t>(values->size()) != type.getNumElements() ||
        llvm::any_of(*values, [](int64_t v) { return ShapedType::isDynamic(v); }))
      return failure();
    auto attr = DenseElementsAttr::get(type, ArrayRef<int64_t>(*values));
    Operation *constant = op->getDialect()->materializeConstant(rewriter, attr, type, op->getLoc());
    if (!constant)
      return failure();
    rewriter.replaceOp(op, constant->getResults());
    return success();
  }
};

struct OnnxShapeInferencePass
    : public kiln::onnx::impl::OnnxShapeInferencePassBase<OnnxShapeInferencePass> {
  void runOnOperation() override {
    if (failed(inferShapes(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult kiln::onnx::inferShapes(func::FuncOp func) {
  MLIRContext *context = func.getContext();
  RewritePatternSet patterns(context);
  bool sawError = false;
  patterns.add<InferShapesPattern>(context, sawError);
  patterns.add<FoldKnownShapeValues>(context);
  for (RegisteredOperationName name : context->getRegisteredOperations())
    if (name.getDialectNamespace() == OnnxDialect::getDialectNamespace())
      name.getCanonicalizationPatterns(patterns, context);
  GreedyRewriteConfig config;
  config.setMaxIterations(64);
  // Shape errors are diagnostics emitted by inferShapes; a failure of the
  // driver to converge is not an error.
  (void)applyPatternsGreedily(func, std::move(patterns), config);

  // A shape function found operands that contradict their op; it has
  // emitted the diagnostic.
  if (sawError)
    return failure();

  // The signature follows what the function returns.
  func.walk([&](func::ReturnOp ret) {
    if (ret->getParentOp() != func)
      return;
    func.setFunctionType(
        FunctionType::get(context, func.getArgumentTypes(), ret.getOperandTypes()));
  });
  return success();
}
