//===- TensorImport.cpp - ONNX types and tensors to MLIR -------------------===//
//
// TypeProto -> MLIR type, TensorProto -> elements attribute.
//
// Weights are not copied more than once: a large tensor's `raw_data` string
// is released from the protobuf and handed to a dense resource blob that
// frees it, and external data is read straight into the blob. Small tensors
// (shape operands, scalars) become DenseElementsAttr so folders can use them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/ImporterInternal.h"
#include "dialects/Onnx/IR/DataTypes.h"
#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <complex>
#include <cstring>

using namespace mlir;

namespace kiln::importer {

namespace {

/// Tensors up to this many bytes become DenseElementsAttr.
constexpr int64_t kMaxDenseBytes = 4096;

using ::onnx::TensorProto;

/// Bytes per element in raw_data; 0 for strings.
int64_t elementBytes(int32_t dt) {
  switch (dt) {
  case TensorProto::FLOAT: case TensorProto::INT32: case TensorProto::UINT32:
    return 4;
  case TensorProto::UINT8: case TensorProto::INT8: case TensorProto::BOOL:
    return 1;
  case TensorProto::UINT16: case TensorProto::INT16: case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return 2;
  case TensorProto::INT64: case TensorProto::UINT64: case TensorProto::DOUBLE:
  case TensorProto::COMPLEX64:
    return 8;
  case TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

/// Resolves an external-data location inside the model's folder; refuses
/// absolute paths, `..` components and symlinks that lead outside.
FailureOr<std::string> resolveExternal(const LoadedModel &model,
                                       const std::string &location,
                                       Location loc) {
  if (location.empty())
    return emitError(loc) << "external data has no location";
  if (llvm::sys::path::is_absolute(location) || location[0] == '/' ||
      location[0] == '\\')
    return emitError(loc) << "external data location '" << location
                          << "' is an absolute path; only paths inside the "
                             "model's folder are allowed";
  for (auto it = llvm::sys::path::begin(location),
            e = llvm::sys::path::end(location);
       it != e; ++it)
    if (*it == "..")
      return emitError(loc) << "external data location '" << location
                            << "' leaves the model's folder ('..' is not "
                               "allowed)";
  SmallString<256> joined(model.dir);
  llvm::sys::path::append(joined, location);
  SmallString<256> real;
  if (llvm::sys::fs::real_path(joined, real))
    return emitError(loc) << "external data file '" << location
                          << "' does not exist next to the model";
  StringRef dir = model.dir;
  if (!StringRef(real).starts_with(dir) ||
      (real.size() > dir.size() && real[dir.size()] != '/'))
    return emitError(loc) << "external data file '" << location
                          << "' resolves outside the model's folder";
  return std::string(real);
}

/// Reads the external data of `t` into an owned, 64-byte-aligned blob.
FailureOr<AsmResourceBlob> readExternal(const TensorProto &t,
                                        const LoadedModel &model,
                                        int64_t expectedBytes, Location loc) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      int64_t v;
      if (StringRef(kv.value()).getAsInteger(10, v) || v < 0)
        return emitError(loc) << "tensor '" << t.name() << "': external data "
                              << kv.key() << " '" << kv.value()
                              << "' is not a non-negative integer";
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  FailureOr<std::string> file = resolveExternal(model, location, loc);
  if (failed(file))
    return failure();
  uint64_t fileSize = 0;
  if (!llvm::sys::fs::is_regular_file(*file))
    return emitError(loc) << "tensor '" << t.name() << "': external data '"
                          << location << "' is not a regular file";
  if (llvm::sys::fs::file_size(*file, fileSize))
    return emitError(loc) << "cannot read external data file '" << location
                          << "'";
  if (static_cast<uint64_t>(offset) > fileSize)
    return emitError(loc) << "tensor '" << t.name() << "': external data "
                          << "offset " << offset << " is past the end of '"
                          << location << "' (" << fileSize << " bytes)";
  if (length < 0)
    length = static_cast<int64_t>(fileSize - offset);
  if (static_cast<uint64_t>(length) > fileSize - offset)
    return emitError(loc) << "tensor '" << t.name() << "': external data of "
                          << length << " bytes at offset " << offset
                          << " runs past the end of '" << location << "' ("
                          << fileSize << " bytes)";
  if (length != expectedBytes)
    return emitError(loc) << "tensor '" << t.name() << "': external data holds "
                          << length << " bytes but its dims need "
                          << expectedBytes;
  auto buffer = llvm::MemoryBuffer::getFileSlice(*file, length, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer)
    return emitError(loc) << "cannot read external data file '" << location
                          << "'";
  std::shared_ptr<llvm::MemoryBuffer> owned = std::move(*buffer);
  ArrayRef<char> data(owned->getBufferStart(), owned->getBufferSize());
  if (reinterpret_cast<uintptr_t>(data.data()) % 16 != 0) {
    // A slice of a mapped file may be misaligned: copy once into an
    // aligned blob.
    return HeapAsmResourceBlob::allocateAndCopyWithAlign(data, 64);
  }
  return AsmResourceBlob(
      data, 16, [owned](void *, size_t, size_t) mutable { owned.reset(); },
      /*dataIsMutable=*/false);
}

/// Builds a DenseElementsAttr or a dense resource from packed little-endian
/// element bytes (not for bool or string).
ElementsAttr fromBytes(ShapedType type, ArrayRef<char> bytes, bool forceDense,
                       const std::string &name) {
  if (forceDense || static_cast<int64_t>(bytes.size()) <= kMaxDenseBytes)
    return DenseElementsAttr::getFromRawBuffer(type, bytes);
  return DenseResourceElementsAttr::get(
      type, name.empty() ? "tensor" : name,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 64));
}

/// Appends the values of a repeated field, converted to T, as bytes.
template <typename T, typename Field>
void appendAs(std::vector<char> &out, const Field &field) {
  for (auto v : field) {
    T x = static_cast<T>(v);
    const char *p = reinterpret_cast<const char *>(&x);
    out.insert(out.end(), p, p + sizeof(T));
  }
}

} // namespace

Type importElementType(int32_t dt, MLIRContext &context) {
  return kiln::onnx::elementTypeForDataType(&context, dt);
}

std::string dataTypeName(int32_t dt) {
  if (TensorProto::DataType_IsValid(dt))
    return llvm::StringRef(TensorProto::DataType_Name(
                               static_cast<TensorProto::DataType>(dt)))
        .lower();
  return "data type " + std::to_string(dt);
}

FailureOr<Type> importType(const ::onnx::TypeProto &type, Location loc,
                           StringRef what) {
  MLIRContext &ctx = *loc.getContext();
  if (type.has_tensor_type() || type.has_sparse_tensor_type()) {
    int32_t dt = type.has_tensor_type() ? type.tensor_type().elem_type()
                                        : type.sparse_tensor_type().elem_type();
    Type elem = importElementType(dt, ctx);
    if (!elem)
      return emitError(loc) << what << " has element type "
                            << dataTypeName(dt)
                            << ", which kiln does not support";
    const ::onnx::TensorShapeProto *shape = nullptr;
    if (type.has_tensor_type() && type.tensor_type().has_shape())
      shape = &type.tensor_type().shape();
    if (type.has_sparse_tensor_type() && type.sparse_tensor_type().has_shape())
      shape = &type.sparse_tensor_type().shape();
    if (!shape)
      return Type(UnrankedTensorType::get(elem));
    SmallVector<int64_t> dims;
    for (const auto &d : shape->dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0 || d.dim_value() > kMaxDim)
          return emitError(loc) << what << " has an invalid dim "
                                << d.dim_value();
        dims.push_back(d.dim_value());
      } else {
        dims.push_back(ShapedType::kDynamic);
      }
    }
    return Type(RankedTensorType::get(dims, elem));
  }
  if (type.has_sequence_type()) {
    if (!type.sequence_type().has_elem_type())
      return emitError(loc) << what << " is a sequence without element type";
    auto elem = importType(type.sequence_type().elem_type(), loc, what);
    if (failed(elem))
      return failure();
    return Type(kiln::onnx::SeqType::get(&ctx, *elem));
  }
  if (type.has_optional_type()) {
    if (!type.optional_type().has_elem_type())
      return emitError(loc) << what << " is an optional without element type";
    auto elem = importType(type.optional_type().elem_type(), loc, what);
    if (failed(elem))
      return failure();
    return Type(kiln::onnx::OptType::get(&ctx, *elem));
  }
  if (type.has_map_type())
    return emitError(loc) << what << " is an ONNX map, which kiln does not "
                                     "support";
  return emitError(loc) << what << " has no type";
}

FailureOr<ElementsAttr> importTensor(TensorProto &t, const LoadedModel &model,
                                     Location loc, bool forceDense) {
  MLIRContext &ctx = *loc.getContext();
  int32_t dt = t.data_type();
  Type elem = importElementType(dt, ctx);
  if (!elem)
    return emitError(loc) << "tensor '" << t.name() << "' has element type "
                          << dataTypeName(dt)
                          << ", which kiln does not support";
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxDim || (d != 0 && count > kMaxDim / d))
      return emitError(loc) << "tensor '" << t.name()
                            << "' has invalid dims";
    dims.push_back(d);
    count *= d;
  }
  auto type = RankedTensorType::get(dims, elem);

  // Strings.
  if (dt == TensorProto::STRING) {
    if (t.data_location() == TensorProto::EXTERNAL)
      return emitError(loc) << "tensor '" << t.name()
                            << "': external string data is not supported";
    if (t.string_data_size() != count)
      return emitError(loc) << "tensor '" << t.name() << "' has "
                            << t.string_data_size()
                            << " strings but its dims need " << count;
    SmallVector<StringRef> values(t.string_data().begin(),
                                  t.string_data().end());
    return ElementsAttr(DenseStringElementsAttr::get(type, values));
  }

  int64_t bytes = elementBytes(dt) * count;

  // Bools are stored one byte per element in ONNX, bit-packed in MLIR.
  if (dt == TensorProto::BOOL) {
    std::vector<char> raw;
    if (t.data_location() == TensorProto::EXTERNAL) {
      auto blob = readExternal(t, model, bytes, loc);
      if (failed(blob))
        return failure();
      raw.assign(blob->getData().begin(), blob->getData().end());
    } else if (t.has_raw_data()) {
      if (static_cast<int64_t>(t.raw_data().size()) != bytes)
        return emitError(loc) << "tensor '" << t.name() << "' has "
                              << t.raw_data().size()
                              << " bytes of raw data but its dims need "
                              << bytes;
      raw.assign(t.raw_data().begin(), t.raw_data().end());
    } else {
      if (t.int32_data_size() != count)
        return emitError(loc) << "tensor '" << t.name() << "' has "
                              << t.int32_data_size()
                              << " values but its dims need " << count;
      for (int32_t v : t.int32_data())
        raw.push_back(v != 0);
    }
    SmallVector<bool> values;
    values.reserve(raw.size());
    for (char c : raw)
      values.push_back(c != 0);
    return ElementsAttr(DenseElementsAttr::get(type, values));
  }

  // External data: read into a blob owned by the attribute.
  if (t.data_location() == TensorProto::EXTERNAL) {
    auto blob = readExternal(t, model, bytes, loc);
    if (failed(blob))
      return failure();
    if (forceDense || bytes <= kMaxDenseBytes)
      return ElementsAttr(
          DenseElementsAttr::getFromRawBuffer(type, blob->getData()));
    return ElementsAttr(DenseResourceElementsAttr::get(
        type, t.name().empty() ? "tensor" : t.name(), std::move(*blob)));
  }

  // raw_data: hand the string itself to the blob when it is large.
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != bytes)
      return emitError(loc) << "tensor '" << t.name() << "' has "
                            << t.raw_data().size()
                            << " bytes of raw data but its dims need "
                            << bytes;
    if (forceDense || bytes <= kMaxDenseBytes ||
        reinterpret_cast<uintptr_t>(t.raw_data().data()) % 16 != 0)
      return fromBytes(type, ArrayRef<char>(t.raw_data().data(), bytes),
                       forceDense, t.name());
    std::shared_ptr<std::string> owned(t.release_raw_data());
    ArrayRef<char> data(owned->data(), owned->size());
    AsmResourceBlob blob(
        data, 16, [owned](void *, size_t, size_t) mutable { owned.reset(); },
        /*dataIsMutable=*/false);
    return ElementsAttr(DenseResourceElementsAttr::get(
        type, t.name().empty() ? "tensor" : t.name(), std::move(blob)));
  }

  // Typed fields.
  std::vector<char> out;
  out.reserve(bytes);
  int64_t have = 0;
  switch (dt) {
  case TensorProto::FLOAT:
    appendAs<float>(out, t.float_data());
    have = t.float_data_size();
    break;
  case TensorProto::COMPLEX64:
    appendAs<float>(out, t.float_data());
    have = t.float_data_size() / 2;
    break;
  case TensorProto::DOUBLE:
    appendAs<double>(out, t.double_data());
    have = t.double_data_size();
    break;
  case TensorProto::COMPLEX128:
    appendAs<double>(out, t.double_data());
    have = t.double_data_size() / 2;
    break;
  case TensorProto::INT64:
    appendAs<int64_t>(out, t.int64_data());
    have = t.int64_data_size();
    break;
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    if (dt == TensorProto::UINT32)
      appendAs<uint32_t>(out, t.uint64_data());
    else
      appendAs<uint64_t>(out, t.uint64_data());
    have = t.uint64_data_size();
    break;
  case TensorProto::INT32:
    appendAs<int32_t>(out, t.int32_data());
    have = t.int32_data_size();
    break;
  case TensorProto::INT8:
    appendAs<int8_t>(out, t.int32_data());
    have = t.int32_data_size();
    break;
  case TensorProto::UINT8:
    appendAs<uint8_t>(out, t.int32_data());
    have = t.int32_data_size();
    break;
  case TensorProto::INT16:
    appendAs<int16_t>(out, t.int32_data());
    have = t.int32_data_size();
    break;
  case TensorProto::UINT16:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    appendAs<uint16_t>(out, t.int32_data());
    have = t.int32_data_size();
    break;
  default:
    return emitError(loc) << "tensor '" << t.name() << "' has element type "
                          << dataTypeName(dt)
                          << ", which kiln does not support";
  }
  if (have != count || static_cast<int64_t>(out.size()) != bytes)
    return emitError(loc) << "tensor '" << t.name() << "' has " << have
                          << " values but its dims need " << count;
  return fromBytes(type, out, forceDense, t.name());
}

FailureOr<ElementsAttr> importSparseTensor(::onnx::SparseTensorProto &sparse,
                                           const LoadedModel &model,
                                           Location loc) {
  SmallVector<int64_t> dims(sparse.dims().begin(), sparse.dims().end());
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || d > kMaxDim || (d != 0 && count > kMaxDim / d))
      return emitError(loc) << "sparse tensor has invalid dims";
    count *= d;
  }
  auto values = importTensor(*sparse.mutable_values(), model, loc,
                             /*forceDense=*/true);
  auto indices = importTensor(*sparse.mutable_indices(), model, loc,
                              /*forceDense=*/true);
  if (failed(values) || failed(indices))
    return failure();
  auto valuesDense = dyn_cast<DenseElementsAttr>(*values);
  auto indicesDense = dyn_cast<DenseElementsAttr>(*indices);
  Type elem = valuesDense ? valuesDense.getElementType() : Type();
  if (!valuesDense || !indicesDense || !elem.isIntOrFloat() ||
      elem.isInteger(1) || !indicesDense.getElementType().isInteger(64))
    return emitError(loc) << "sparse tensor: only numeric values with int64 "
                             "indices are supported";
  int64_t nnz = valuesDense.getNumElements();
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
  std::vector<char> out(count * elemBytes, 0);
  auto idx = llvm::to_vector(indicesDense.getValues<int64_t>());
  auto idxShape = indicesDense.getType().getShape();
  bool linear = idxShape.size() == 1 && idxShape[0] == nnz;
  bool coords = idxShape.size() == 2 && idxShape[0] == nnz &&
                idxShape[1] == static_cast<int64_t>(dims.size());
  if (!linear && !coords)
    return emitError(loc) << "sparse tensor: indices have the wrong shape";
  ArrayRef<char> raw = valuesDense.getRawData();
  if (valuesDense.isSplat() && nnz > 1)
    return emitError(loc) << "sparse tensor: splat values are not supported";
  for (int64_t i = 0; i < nnz; ++i) {
    int64_t flat = 0;
    if (linear) {
      flat = idx[i];
    } else {
      for (size_t d = 0; d < dims.size(); ++d) {
        int64_t c = idx[i * dims.size() + d];
        if (c < 0 || c >= dims[d])
          return emitError(loc) << "sparse tensor: index out of range";
        flat = flat * dims[d] + c;
      }
    }
    if (flat < 0 || flat >= count)
      return emitError(loc) << "sparse tensor: index out of range";
    std::memcpy(&out[flat * elemBytes], &raw[i * elemBytes], elemBytes);
  }
  auto type = RankedTensorType::get(dims, elem);
  return fromBytes(type, out, /*forceDense=*/false, sparse.values().name());
}

} // namespace kiln::importer
