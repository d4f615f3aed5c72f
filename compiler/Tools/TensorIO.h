//===- TensorIO.h - Read and write tensors as .pb and .npy -------*- C++ -*-===//
//
// `kiln run` and `kiln bench` take tensors as ONNX TensorProto files (.pb,
// as in the ONNX test data) or NumPy .npy files, and save outputs as .npy.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TOOLS_TENSORIO_H
#define KILN_COMPILER_TOOLS_TENSORIO_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// A dense row-major tensor in host memory (little-endian).
struct HostTensor {
  std::string name;           ///< From the .pb file, if it has one.
  int32_t dtype = 0;          ///< ONNX TensorProto.DataType.
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  ///< numElements * element size bytes.
  /// A string tensor's elements (UTF-8); `data` is then unused by the
  /// readers and writers.
  std::vector<std::string> strings;
  int64_t numElements() const;
};

/// Bytes per element of an ONNX data type, 0 if kiln does not handle it.
int64_t dataTypeSize(int32_t dtype);
/// "float32", "int64", ...
const char *dataTypeName(int32_t dtype);

/// Reads a tensor from `path` (.npy by its magic, else TensorProto). On
/// failure returns false and sets `error`.
bool readTensor(const std::string &path, HostTensor &tensor, std::string &error);

/// Writes a tensor as .npy.
bool writeNpy(const std::string &path, const HostTensor &tensor, std::string &error);

/// The tensor's element i as a double (for comparisons).
double elementAsDouble(const HostTensor &tensor, int64_t i);
/// Same for a raw buffer of `dtype`.
double bufferElementAsDouble(const void *data, int32_t dtype, int64_t i);

} // namespace kiln

#endif // KILN_COMPILER_TOOLS_TENSORIO_H
