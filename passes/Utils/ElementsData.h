//===- ElementsData.h - The bytes behind a constant -----------------*- C++ -*-===//
//
// The raw, row-major bytes of a dense constant, whether it is a
// DenseElementsAttr or (large weights, as the importer makes them) a
// DenseResourceElementsAttr. Header only: the lowering and the CPU code
// generation both read weights at compile time (to transpose or pack them).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_UTILS_ELEMENTSDATA_H
#define KILN_PASSES_UTILS_ELEMENTSDATA_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>
#include <optional>
#include <vector>

namespace kiln {

/// The bytes of every element of `value`, row-major; none for splats (one
/// element stored), blobs not loaded, or other attribute kinds.
inline std::optional<llvm::ArrayRef<char>> rawElementData(mlir::Attribute value) {
  if (auto dense = mlir::dyn_cast_or_null<mlir::DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return std::nullopt;
    return dense.getRawData();
  }
  if (auto res = mlir::dyn_cast_or_null<mlir::DenseResourceElementsAttr>(value)) {
    mlir::AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    return blob->getData();
  }
  return std::nullopt;
}

/// Every element of a float32 `value` (dense, splat included, or a loaded
/// resource), row-major; none for other types or kinds.
inline std::optional<std::vector<float>> floatElements(mlir::Attribute value) {
  auto typed = mlir::dyn_cast_or_null<mlir::ElementsAttr>(value);
  auto type = typed ? mlir::dyn_cast<mlir::RankedTensorType>(typed.getType()) : nullptr;
  if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
    return std::nullopt;
  std::vector<float> data(size_t(type.getNumElements()));
  if (auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(value)) {
    llvm::copy(dense.getValues<float>(), data.begin());
    return data;
  }
  std::optional<llvm::ArrayRef<char>> raw = rawElementData(value);
  if (!raw || raw->size() != data.size() * sizeof(float))
    return std::nullopt;
  std::memcpy(data.data(), raw->data(), raw->size());
  return data;
}

} // namespace kiln

#endif // KILN_PASSES_UTILS_ELEMENTSDATA_H
