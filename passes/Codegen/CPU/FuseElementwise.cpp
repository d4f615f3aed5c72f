//===- FuseElementwise.cpp - kiln-fuse-elementwise pass --------------------===//
//
// Upstream's linalg elementwise fusion with two differences in its control
// functions: producers are never fused into a multiply-accumulate
// contraction, which must stay in the form kiln-vectorize-contractions
// turns into register-blocked kernels; and a reshape that splits a
// contraction's innermost output dim is not folded into it; a producer
// whose body has side effects (the string hooks' calls) is not fused.
// Transposes are generalised first, so that they fuse too.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/CPU/VectorHelpers.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "kiln-fuse-elementwise"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A generic with a reduction whose body is out + x * y (in any order),
/// or its int8 form out + ext(x) * ext(y).
bool isContraction(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic.getNumReductionLoops() > 0 &&
         (kiln::vec::isMultiplyAccumulate(generic) ||
          kiln::vec::isInt8MultiplyAccumulate(generic));
}

/// Whether a generic's body has side effects (a call of the runtime's
/// string hooks): fused into its consumer, such a producer would stay
/// behind as well (the effects keep it alive) and run twice.
bool hasEffects(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && llvm::any_of(generic.getBody()->getOperations(),
                                 [](Operation &o) { return !isMemoryEffectFree(&o); });
}

struct FuseElementwisePass
    : public kiln::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Transposes as generics: they then fuse into the elementwise op that
    // reads them, get their unit dims folded, and become vector loops with
    // a parallel loop around them (the named op would stay a serial scalar
    // loop nest).
    SmallVector<linalg::TransposeOp> transposes;
    getOperation()->walk([&](linalg::TransposeOp op) { transposes.push_back(op); });
    IRRewriter rewriter(context);
    for (linalg::TransposeOp op : transposes) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() && !isContraction(fused->getOwner()) &&
             !hasEffects(producer);
    };
    // An expand_shape of a contraction's result is not folded into it
    // where it splits the output's innermost dim into several (a flat
    // [K, tiles] product read as [K, rows, cols]): the kernels' vectors run
    // along that dim, and the pieces would be short.
    linalg::ControlFusionFn reshapeControl = [control](OpOperand *fused) {
      if (!control(fused))
        return false;
      auto expand = dyn_cast<tensor::ExpandShapeOp>(fused->getOwner());
      if (!expand || !isContraction(fused->get().getDefiningOp()))
        return true;
      ArrayRef<int64_t> shape = expand.getResultType().getShape();
      ReassociationIndices last = expand.getReassociationIndices().back();
      return llvm::count_if(last, [&](int64_t d) { return shape[d] != 1; }) <= 1;
    };
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, reshapeControl);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    // Not converging within the default iteration limit is not an error:
    // what was fused stays fused.
    (void)applyPatternsGreedily(getOperation(), std::move(patterns),
                                GreedyRewriteConfig().setUseTopDownTraversal(true));
  }
};

} // namespace
