//===- ExpandDynamicGroups.cpp - kiln-expand-dynamic-groups pass -----------===//
//
// A memref.expand_shape that splits one dim into two or more dynamic ones
// (a 1x1 conv computed over H' * W' flat pixels, seen again as [N, M, H',
// W']) crashes MLIR 22's expand-strided-metadata. Over a contiguous
// (identity-layout) source it is a reinterpret_cast: the output shape's
// sizes, and as strides the products of the sizes after each dim.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace kiln {
#define GEN_PASS_DEF_EXPANDDYNAMICGROUPSPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct ExpandDynamicGroupsPass
    : public kiln::impl::ExpandDynamicGroupsPassBase<ExpandDynamicGroupsPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> expands;
    getOperation().walk([&](memref::ExpandShapeOp op) {
      MemRefType result = op.getResultType();
      bool twoDynamic = llvm::any_of(op.getReassociationIndices(), [&](const auto &group) {
        return llvm::count_if(group, [&](int64_t d) { return result.isDynamicDim(d); }) > 1;
      });
      if (twoDynamic && op.getSrcType().getLayout().isIdentity() &&
          result.getLayout().isIdentity())
        expands.push_back(op);
    });
    for (memref::ExpandShapeOp op : expands) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
      SmallVector<OpFoldResult> strides(sizes.size());
      OpFoldResult stride = b.getIndexAttr(1);
      for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
        strides[d] = stride;
        std::optional<int64_t> s = getConstantIntValue(stride), n = getConstantIntValue(sizes[d]);
        if (d == 0 || n == 1)
          continue;
        if (s && n)
          stride = b.getIndexAttr(*s * *n);
        else if (s == 1)
          stride = sizes[d];
        else
          stride = arith::MulIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, stride),
                                         getValueOrCreateConstantIndexOp(b, loc, sizes[d]))
                       .getResult();
      }
      Value cast = memref::ReinterpretCastOp::create(b, loc, op.getResultType(), op.getSrc(),
                                                     b.getIndexAttr(0), sizes, strides);
      op.replaceAllUsesWith(cast);
      op.erase();
    }
  }
};

} // namespace
