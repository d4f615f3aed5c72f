//===- FlattenGlobals.cpp - kiln-flatten-globals pass ----------------------===//
//
// Weights become `memref.global` constants; LLVM IR represents an N-D
// initializer as nested arrays with one uniqued constant per innermost row.
// Flattening every global to 1-D keeps a weight tensor a single constant.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#define DEBUG_TYPE "kiln-flatten-globals"

namespace kiln {
#define GEN_PASS_DEF_FLATTENGLOBALSPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The same initial value with a 1-D type, or null if it cannot be kept.
Attribute flatValue(Attribute value, RankedTensorType flat) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.reshape(flat);
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value))
    return DenseResourceElementsAttr::get(flat, res.getRawHandle());
  return {};
}

struct FlattenGlobalsPass
    : public kiln::impl::FlattenGlobalsPassBase<FlattenGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<StringAttr, MemRefType> original;
    for (auto global : module.getOps<memref::GlobalOp>()) {
      MemRefType type = global.getType();
      if (type.getRank() <= 1 || !type.hasStaticShape() ||
          !type.getLayout().isIdentity() || global.isExternal())
        continue;
      auto flatType = MemRefType::get({type.getNumElements()},
                                      type.getElementType(), AffineMap(),
                                      type.getMemorySpace());
      Attribute init = global.getInitialValueAttr();
      Attribute flat;
      if (init && !isa<UnitAttr>(init)) {
        flat = flatValue(init, RankedTensorType::get({type.getNumElements()},
                                                     type.getElementType()));
        if (!flat)
          continue;
        global.setInitialValueAttr(flat);
      }
      global.setType(flatType);
      original[global.getSymNameAttr()] = type;
    }
    module.walk([&](memref::GetGlobalOp get) {
      auto it = original.find(get.getNameAttr().getAttr());
      if (it == original.end())
        return;
      MemRefType type = it->second;
      OpBuilder b(get);
      auto flatType = MemRefType::get({type.getNumElements()}, type.getElementType(),
                                      AffineMap(), type.getMemorySpace());
      Value flat = memref::GetGlobalOp::create(b, get.getLoc(), flatType, get.getName());
      ReassociationIndices all;
      for (int64_t i = 0; i < type.getRank(); ++i)
        all.push_back(i);
      Value shaped = memref::ExpandShapeOp::create(
          b, get.getLoc(), type, flat, ArrayRef<ReassociationIndices>{all});
      get.replaceAllUsesWith(shaped);
      get.erase();
    });
  }
};

} // namespace
