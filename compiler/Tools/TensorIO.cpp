//===- TensorIO.cpp - Read and write tensors as .pb and .npy ---------------===//

#include "compiler/Tools/TensorIO.h"
#include "passes/Utils/HalfFloat.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace kiln {

namespace {

enum : int32_t {
  kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6,
  kInt64 = 7, kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12,
  kUint64 = 13, kBfloat16 = 16
};

bool readFile(const std::string &path, std::string &bytes, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  bytes = ss.str();
  return true;
}

/// Appends code point \p cp as UTF-8; false if it is not a scalar value.
bool appendUtf8(std::string &out, uint32_t cp) {
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return false;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return true;
}

/// The code points of UTF-8 \p text; a byte that does not start a valid
/// sequence is taken as the code point of its value (Latin-1).
std::vector<uint32_t> codePoints(const std::string &text) {
  std::vector<uint32_t> out;
  const auto *s = reinterpret_cast<const unsigned char *>(text.data());
  size_t n = text.size();
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    uint32_t cp = len == 1 ? c : len ? (c & (0x7f >> len)) : 0;
    bool ok = len > 0 && i + len <= n;
    for (int k = 1; ok && k < len; ++k) {
      ok = (s[i + k] & 0xc0) == 0x80;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (!ok) {
      out.push_back(c);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

struct NpyType {
  const char *descr;
  int32_t dtype;
};
const NpyType kNpyTypes[] = {
    {"<f4", kFloat}, {"<f8", kDouble}, {"<f2", kFloat16}, {"|i1", kInt8},
    {"<i1", kInt8},  {"|u1", kUint8},  {"<u1", kUint8},   {"<i2", kInt16},
    {"<u2", kUint16}, {"<i4", kInt32}, {"<u4", kUint32},  {"<i8", kInt64},
    {"<u8", kUint64}, {"|b1", kBool},  {"<b1", kBool}};

bool parseNpy(const std::string &bytes, const std::string &path, HostTensor &t,
              std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "'" + path + "' is not a .npy file kiln reads: " + why;
    return false;
  };
  if (bytes.size() < 10)
    return fail("too short");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen, start;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail("too short");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    start = 12;
  } else {
    return fail("unknown version");
  }
  if (start + headerLen > bytes.size())
    return fail("truncated header");
  std::string header = bytes.substr(start, headerLen);
  auto field = [&](const std::string &key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos)
      return "";
    size_t colon = header.find(':', k);
    return colon == std::string::npos ? "" : header.substr(colon + 1);
  };
  std::string descr = field("descr");
  size_t q1 = descr.find('\''), q2 = descr.find('\'', q1 + 1);
  if (q1 == std::string::npos || q2 == std::string::npos)
    return fail("no descr");
  descr = descr.substr(q1 + 1, q2 - q1 - 1);
  t.dtype = 0;
  for (const NpyType &n : kNpyTypes)
    if (descr == n.descr)
      t.dtype = n.dtype;
  // Strings: '<UN' (N UTF-32 code units) or '|SN' (N bytes), NUL-padded.
  int64_t charSize = 0, charCount = 0;
  if (!t.dtype && descr.size() > 2 && (descr.substr(0, 2) == "<U" || descr.substr(0, 2) == "|S")) {
    charSize = descr[1] == 'U' ? 4 : 1;
    char *end = nullptr;
    charCount = std::strtoll(descr.c_str() + 2, &end, 10);
    if (*end || charCount < 1 || charCount > (int64_t(1) << 24))
      return fail("bad string element type '" + descr + "'");
    t.dtype = kString;
  }
  if (!t.dtype)
    return fail("element type '" + descr + "' is not supported");
  std::string fortran = field("fortran_order");
  bool columnMajor = fortran.find("True") != std::string::npos &&
                     fortran.find("True") < fortran.find(',');
  std::string shape = field("shape");
  size_t open = shape.find('('), close = shape.find(')');
  if (open == std::string::npos || close == std::string::npos)
    return fail("no shape");
  std::stringstream dims(shape.substr(open + 1, close - open - 1));
  std::string item;
  t.dims.clear();
  while (std::getline(dims, item, ',')) {
    size_t b = item.find_first_not_of(" \t");
    if (b == std::string::npos)
      continue;
    char *end = nullptr;
    long long d = std::strtoll(item.c_str() + b, &end, 10);
    if (d < 0)
      return fail("negative dim");
    t.dims.push_back(d);
  }
  size_t dataStart = start + headerLen;
  int64_t n = t.numElements();
  if (n < 0)
    return fail("bad shape");
  if (t.dtype == kString) {
    if (columnMajor && t.dims.size() > 1)
      return fail("Fortran-ordered string arrays are not supported");
    size_t item = static_cast<size_t>(charSize * charCount);
    if ((bytes.size() - dataStart) / item < static_cast<size_t>(n))
      return fail("holds " + std::to_string(bytes.size() - dataStart) +
                  " bytes of data, its shape needs " + std::to_string(n * item));
    t.strings.clear();
    for (int64_t i = 0; i < n; ++i) {
      const char *p = bytes.data() + dataStart + i * item;
      std::string text;
      for (int64_t c = 0; c < charCount; ++c) {
        uint32_t cp = 0;
        std::memcpy(&cp, p + c * charSize, charSize);
        if (cp == 0)
          break;
        if (charSize == 1)
          text += static_cast<char>(cp);
        else if (!appendUtf8(text, cp))
          return fail("element " + std::to_string(i) + " is not valid Unicode");
      }
      t.strings.push_back(std::move(text));
    }
    return true;
  }
  size_t need = static_cast<size_t>(n) * dataTypeSize(t.dtype);
  if (bytes.size() - dataStart < need)
    return fail("holds " + std::to_string(bytes.size() - dataStart) +
                " bytes of data, its shape needs " + std::to_string(need));
  t.data.assign(bytes.begin() + dataStart, bytes.begin() + dataStart + need);
  if (columnMajor && t.dims.size() > 1) {
    // Fortran order: element (i0, ..., ik) is at sum(i_d * prod(dims[<d])).
    std::vector<uint8_t> rowMajor(t.data.size());
    int64_t elem = dataTypeSize(t.dtype), rank = t.dims.size();
    std::vector<int64_t> idx(rank, 0);
    for (int64_t flat = 0; flat < n; ++flat) {
      int64_t src = 0, stride = 1;
      for (int64_t d = 0; d < rank; ++d) {
        src += idx[d] * stride;
        stride *= t.dims[d];
      }
      std::memcpy(rowMajor.data() + flat * elem, t.data.data() + src * elem, elem);
      for (int64_t d = rank - 1; d >= 0 && ++idx[d] == t.dims[d]; --d)
        idx[d] = 0;
    }
    t.data = std::move(rowMajor);
  }
  return true;
}

template <typename To, typename From>
void convertInto(std::vector<uint8_t> &data, const From &values) {
  data.resize(values.size() * sizeof(To));
  for (int i = 0; i < values.size(); ++i) {
    To v = static_cast<To>(values.Get(i));
    std::memcpy(data.data() + i * sizeof(To), &v, sizeof(To));
  }
}

bool parseProto(const std::string &bytes, const std::string &path, HostTensor &t,
                std::string &error) {
  ::onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    error = "'" + path + "' is neither a .npy file nor an ONNX TensorProto";
    return false;
  }
  t.name = proto.name();
  t.dtype = proto.data_type();
  if (t.dtype == 0) {
    error = "'" + path + "' is not a tensor file (.npy or an ONNX TensorProto)";
    return false;
  }
  if (t.dtype != kString && dataTypeSize(t.dtype) == 0) {
    error = "'" + path + "': element type " + std::to_string(t.dtype) +
            " is not supported by kiln run";
    return false;
  }
  t.dims.assign(proto.dims().begin(), proto.dims().end());
  for (int64_t d : t.dims)
    if (d < 0) {
      error = "'" + path + "': negative dim";
      return false;
    }
  if (proto.data_location() == ::onnx::TensorProto::EXTERNAL) {
    error = "'" + path + "': external data is not supported by kiln run";
    return false;
  }
  if (t.dtype == kString) {
    if (proto.string_data_size() != t.numElements()) {
      error = "'" + path + "': holds " + std::to_string(proto.string_data_size()) +
              " strings, the shape needs " + std::to_string(t.numElements());
      return false;
    }
    t.strings.assign(proto.string_data().begin(), proto.string_data().end());
    return true;
  }
  int64_t n = t.numElements();
  size_t need = static_cast<size_t>(n) * dataTypeSize(t.dtype);
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != need) {
      error = "'" + path + "': raw_data holds " +
              std::to_string(proto.raw_data().size()) + " bytes, the shape needs " +
              std::to_string(need);
      return false;
    }
    t.data.assign(proto.raw_data().begin(), proto.raw_data().end());
    return true;
  }
  switch (t.dtype) {
  case kFloat: convertInto<float>(t.data, proto.float_data()); break;
  case kDouble: convertInto<double>(t.data, proto.double_data()); break;
  case kInt64: convertInto<int64_t>(t.data, proto.int64_data()); break;
  case kUint32: convertInto<uint32_t>(t.data, proto.uint64_data()); break;
  case kUint64: convertInto<uint64_t>(t.data, proto.uint64_data()); break;
  case kInt32: convertInto<int32_t>(t.data, proto.int32_data()); break;
  case kInt16: convertInto<int16_t>(t.data, proto.int32_data()); break;
  case kUint16: case kFloat16: case kBfloat16:
    convertInto<uint16_t>(t.data, proto.int32_data()); break;
  case kInt8: convertInto<int8_t>(t.data, proto.int32_data()); break;
  case kUint8: case kBool: convertInto<uint8_t>(t.data, proto.int32_data()); break;
  default: break;
  }
  if (t.data.empty() && need > 0) {
    error = "'" + path + "' holds no tensor data (a SequenceProto or "
            "OptionalProto? kiln run reads tensors only)";
    return false;
  }
  if (t.data.size() != need) {
    error = "'" + path + "': holds " + std::to_string(t.data.size()) +
            " bytes of data, the shape needs " + std::to_string(need);
    return false;
  }
  return true;
}

} // namespace

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

int64_t dataTypeSize(int32_t dtype) {
  switch (dtype) {
  case kFloat: case kInt32: case kUint32: return 4;
  case kUint8: case kInt8: case kBool: return 1;
  case kUint16: case kInt16: case kFloat16: case kBfloat16: return 2;
  case kInt64: case kDouble: case kUint64: return 8;
  default: return 0;
  }
}

const char *dataTypeName(int32_t dtype) {
  switch (dtype) {
  case kFloat: return "float32";
  case kUint8: return "uint8";
  case kInt8: return "int8";
  case kUint16: return "uint16";
  case kInt16: return "int16";
  case kInt32: return "int32";
  case kInt64: return "int64";
  case kBool: return "bool";
  case kFloat16: return "float16";
  case kDouble: return "float64";
  case kUint32: return "uint32";
  case kUint64: return "uint64";
  case kBfloat16: return "bfloat16";
  case kString: return "string";
  default: return "unsupported";
  }
}

bool readTensor(const std::string &path, HostTensor &tensor, std::string &error) {
  std::string bytes;
  if (!readFile(path, bytes, error))
    return false;
  if (bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0)
    return parseNpy(bytes, path, tensor, error);
  return parseProto(bytes, path, tensor, error);
}

bool writeNpy(const std::string &path, const HostTensor &t, std::string &error) {
  const char *descr = nullptr;
  for (const NpyType &n : kNpyTypes)
    if (n.dtype == t.dtype && !descr)
      descr = n.descr;
  if (t.dtype == kBfloat16)
    descr = "<u2"; // NumPy has no bfloat16: the bit patterns, as uint16.
  // Strings as NumPy's fixed-width Unicode: UTF-32 code units, NUL-padded.
  std::string stringDescr;
  std::vector<std::vector<uint32_t>> units;
  size_t width = 1;
  if (t.dtype == kString) {
    for (const std::string &text : t.strings) {
      units.push_back(codePoints(text));
      width = std::max(width, units.back().size());
    }
    stringDescr = "<U" + std::to_string(width);
    descr = stringDescr.c_str();
  }
  if (!descr) {
    error = std::string("cannot write ") + dataTypeName(t.dtype) + " as .npy";
    return false;
  }
  std::string shape = "(";
  for (size_t i = 0; i < t.dims.size(); ++i)
    shape += std::to_string(t.dims[i]) + (t.dims.size() == 1 || i + 1 < t.dims.size() ? "," : "");
  shape += ")";
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  char lenBytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(lenBytes, 2);
  out << header;
  if (t.dtype == kString) {
    for (std::vector<uint32_t> &u : units) {
      u.resize(width, 0);
      out.write(reinterpret_cast<const char *>(u.data()), u.size() * 4);
    }
    return static_cast<bool>(out);
  }
  out.write(reinterpret_cast<const char *>(t.data.data()), t.data.size());
  return static_cast<bool>(out);
}

double bufferElementAsDouble(const void *data, int32_t dtype, int64_t i) {
  const uint8_t *p = static_cast<const uint8_t *>(data) + i * dataTypeSize(dtype);
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  switch (dtype) {
  case kFloat: return get(float());
  case kDouble: return get(double());
  case kInt8: return get(int8_t());
  case kUint8: case kBool: return get(uint8_t());
  case kInt16: return get(int16_t());
  case kUint16: return get(uint16_t());
  case kInt32: return get(int32_t());
  case kUint32: return get(uint32_t());
  case kInt64: return get(int64_t());
  case kUint64: return get(uint64_t());
  case kFloat16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return float16BitsToFloat(h);
  }
  case kBfloat16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bfloat16BitsToFloat(h);
  }
  default: return 0;
  }
}

double elementAsDouble(const HostTensor &tensor, int64_t i) {
  return bufferElementAsDouble(tensor.data.data(), tensor.dtype, i);
}

} // namespace kiln

namespace kiln {
bool graphInputNames(const std::string &path, std::vector<std::string> &names,
                     std::string &error) {
  std::ifstream in(path, std::ios::binary);
  ::onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in)) {
    error = "cannot read the ONNX model '" + path + "'";
    return false;
  }
  std::set<std::string> initializers;
  for (const auto &init : model.graph().initializer())
    initializers.insert(init.name());
  for (const auto &input : model.graph().input())
    if (!initializers.count(input.name()))
      names.push_back(input.name());
  return true;
}
} // namespace kiln
