//===- Run.cpp - kiln run and kiln bench -----------------------------------===//
//
// Loads a compiled model (a .so, or an .onnx compiled first into a temporary
// folder with its input shapes pinned from the given tensors), binds tensor
// files to its inputs through the runtime's session helper (which checks
// every dtype, shape and size at entry), runs it, and compares outputs with
// expected tensors or measures latency. `kiln bench` with several builds
// of one model runs them in turn, call by call, and reports each run's
// time over the first build's beside it: on a machine whose speed drifts
// (a shared VM), those paired ratios resolve differences of a few percent
// that separate runs of each build do not.
//
// Exit codes: 0 = every output matches (or bench succeeded), 1 = a
// mismatch, 2 = any error.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"
#include "compiler/Tools/TensorIO.h"

#include "kiln/runtime.h"

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <memory>
#include <numeric>
#include <set>

namespace kiln {

bool graphInputNames(const std::string &path, std::vector<std::string> &names,
                     std::string &error);

namespace {

int error(const llvm::Twine &message) {
  llvm::errs() << "kiln: error: " << message << "\n";
  return 2;
}

/// A temporary folder removed (with its files) on scope exit.
struct TempDir {
  llvm::SmallString<128> path;
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
};

/// The one dynamic symbol named `*_kiln_desc` in a compiled library.
bool findDescriptorSymbol(const std::string &path, std::string &symbol,
                          std::string &err) {
  auto object = llvm::object::ObjectFile::createObjectFile(path);
  if (!object) {
    err = "'" + path + "' is not a library kiln can read: " +
          llvm::toString(object.takeError());
    return false;
  }
  auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(object->getBinary());
  if (!elf) {
    err = "'" + path + "' is not an ELF shared library";
    return false;
  }
  int found = 0;
  for (const llvm::object::ELFSymbolRef &sym : elf->getDynamicSymbolIterators()) {
    auto name = sym.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (name->ends_with("_kiln_desc") && sym.getSection() &&
        *sym.getSection() != elf->section_end()) {
      symbol = name->str();
      ++found;
    }
  }
  if (found != 1) {
    err = found == 0 ? "'" + path + "' holds no kiln model (no *_kiln_desc symbol)"
                     : "'" + path + "' holds several kiln models";
    return false;
  }
  return true;
}

/// [NAME=]FILE: a name when the text has '=' and is not itself a file.
std::pair<std::string, std::string> splitNamed(const std::string &text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || llvm::sys::fs::exists(text))
    return {"", text};
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::string shapeText(const int64_t *dims, int64_t rank) {
  std::string s = "[";
  for (int64_t i = 0; i < rank; ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

/// A loaded model plus its bound inputs and allocated outputs.
struct Loaded {
  void *handle = nullptr;
  const kiln_model_desc *desc = nullptr;
  kiln_session *session = nullptr;
  std::vector<HostTensor> inputs, outputs;
  std::vector<kiln_tensor> inTensors, outTensors;
  TempDir temp;
  ~Loaded() {
    if (session)
      kiln_session_destroy(session);
    if (handle)
      dlclose(handle);
  }
};

/// Reads the input files, compiles an .onnx model if needed, loads it and
/// binds inputs (given or, for bench, generated) to it. Returns 0 or 2.
int load(const RunRequest &req, Loaded &m, bool generateMissing) {
  std::vector<std::pair<std::string, HostTensor>> given;
  for (const std::string &text : req.inputs) {
    auto [name, file] = splitNamed(text);
    HostTensor t;
    std::string err;
    if (!readTensor(file, t, err))
      return error(err);
    given.push_back({name, std::move(t)});
  }

  std::string library = req.model;
  if (llvm::sys::path::extension(req.model) == ".onnx") {
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kiln-run", m.temp.path))
      return error("cannot create a temporary folder: " + ec.message());
    CompileRequest compile = req.compile;
    compile.quiet = true; // kiln run's output is the comparison.
    compile.input = req.model;
    llvm::SmallString<256> out(m.temp.path);
    llvm::sys::path::append(out, "libmodel.so");
    compile.output = out.str().str();
    compile.emit = "so";
    // Pin input shapes from the given tensors.
    std::vector<std::string> names;
    std::string err;
    if (!given.empty() && !graphInputNames(req.model, names, err))
      return error(err);
    for (size_t i = 0; i < given.size(); ++i) {
      std::string name = given[i].first;
      if (name.empty()) {
        if (i >= names.size())
          return error(req.model + ": the model has " + std::to_string(names.size()) +
                       " inputs, got " + std::to_string(given.size()));
        name = names[i];
      }
      std::string dims;
      for (int64_t d : given[i].second.dims)
        dims += (dims.empty() ? "" : "x") + std::to_string(d);
      if (given[i].second.dims.empty())
        dims = "scalar";
      if (!given[i].second.dims.empty())
        compile.inputShapes.push_back(name + "=" + dims);
    }
    if (compileModel(compile) != 0)
      return 2;
    library = compile.output;
  }

  std::string symbol, err;
  llvm::SmallString<256> absolute(library);
  llvm::sys::fs::make_absolute(absolute);
  if (!llvm::sys::fs::exists(absolute))
    return error("'" + library + "' does not exist");
  if (!findDescriptorSymbol(absolute.str().str(), symbol, err))
    return error(err);
  m.handle = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m.handle)
    return error(std::string("cannot load '") + library + "': " + dlerror());
  m.desc = static_cast<const kiln_model_desc *>(dlsym(m.handle, symbol.c_str()));
  if (!m.desc || m.desc->abi_version < 1 || m.desc->abi_version > KILN_ABI_VERSION)
    return error("'" + library + "' has an unknown descriptor version");
  const kiln_model_desc &d = *m.desc;

  // Bind inputs: by name, or positionally.
  m.inputs.resize(d.num_inputs);
  std::vector<bool> bound(d.num_inputs, false);
  size_t next = 0;
  for (auto &[name, tensor] : given) {
    int32_t index = -1;
    if (name.empty()) {
      while (next < bound.size() && bound[next])
        ++next;
      index = next < bound.size() ? static_cast<int32_t>(next) : -1;
    } else {
      for (int32_t i = 0; i < d.num_inputs; ++i)
        if (name == d.inputs[i].name)
          index = i;
      if (index < 0)
        return error("the model has no input named '" + name + "'");
    }
    if (index < 0 || bound[index])
      return error("the model has " + std::to_string(d.num_inputs) +
                   " inputs, got " + std::to_string(given.size()));
    bound[index] = true;
    m.inputs[index] = std::move(tensor);
  }
  // The dynamic dims' values, from the given inputs that carry them
  // (descriptor dim -1-k is dynamic dim k; the session checks that they
  // agree); 1 when none does.
  int32_t numDynamic = d.abi_version >= 2 ? d.num_dynamic_dims : 0;
  std::vector<int64_t> dynamic(std::max(numDynamic, 0), 1);
  for (int32_t i = 0; i < d.num_inputs; ++i)
    for (int32_t j = 0; bound[i] && j < d.inputs[i].rank; ++j) {
      int64_t k = -1 - d.inputs[i].dims[j];
      if (k >= 0 && k < numDynamic && j < static_cast<int32_t>(m.inputs[i].dims.size()))
        dynamic[k] = m.inputs[i].dims[j];
    }
  // Dims with the dynamic ones and the dim expressions resolved, and the
  // bytes they need (0 when they cannot be: the session then says why).
  auto resolve = [&](const kiln_tensor_desc &t, std::vector<int64_t> &dims) {
    dims.assign(t.rank, 0);
    int64_t elements = kiln_tensor_dims(&d, &t, dynamic.data(), dims.data());
    if (elements < 0) {
      dims.assign(t.dims, t.dims + t.rank);
      for (int64_t &dim : dims)
        dim = std::max<int64_t>(dim, 0);
      return int64_t(0);
    }
    int64_t size = kiln_dtype_size(t.dtype);
    return elements > std::numeric_limits<int64_t>::max() / std::max<int64_t>(size, 1)
               ? int64_t(0)
               : elements * size;
  };
  for (int32_t i = 0; i < d.num_inputs; ++i) {
    if (bound[i])
      continue;
    if (!generateMissing)
      return error("no tensor given for input " + std::to_string(i) + " '" +
                   d.inputs[i].name + "' (the model has " +
                   std::to_string(d.num_inputs) + " inputs)");
    // Deterministic values in [-1, 1) (or small integers) for bench.
    HostTensor &t = m.inputs[i];
    t.dtype = d.inputs[i].dtype;
    t.data.assign(resolve(d.inputs[i], t.dims), 0);
    if (t.dtype == 1) {
      float *f = reinterpret_cast<float *>(t.data.data());
      uint32_t state = 12345;
      for (size_t k = 0; k < t.data.size() / sizeof(float); ++k) {
        state = state * 1664525u + 1013904223u;
        f[k] = static_cast<float>(state >> 8) / static_cast<float>(1 << 23) - 1.0f;
      }
    }
  }
  // ONNX's test data stores bfloat16 tensors as uint16 bit patterns.
  for (int32_t i = 0; i < d.num_inputs; ++i)
    if (m.inputs[i].dtype == 4 && d.inputs[i].dtype == 16)
      m.inputs[i].dtype = 16;
  for (int32_t i = 0; i < d.num_inputs; ++i) {
    HostTensor &t = m.inputs[i];
    if (t.dtype != 8)
      continue;
    // A string tensor is passed as pointers to its NUL-terminated texts.
    if (!bound[i])
      t.strings.assign(t.data.size() / sizeof(char *), "");
    t.data.assign(t.strings.size() * sizeof(char *), 0);
    for (size_t k = 0; k < t.strings.size(); ++k) {
      const char *text = t.strings[k].c_str();
      std::memcpy(t.data.data() + k * sizeof(char *), &text, sizeof(char *));
    }
  }
  for (HostTensor &t : m.inputs) {
    int64_t bytes = static_cast<int64_t>(t.data.size());
    if (t.data.empty())
      t.data.push_back(0); // A valid pointer for an empty tensor.
    m.inTensors.push_back({t.data.data(), t.dtype, static_cast<int32_t>(t.dims.size()),
                           t.dims.data(), bytes});
  }
  m.outputs.resize(d.num_outputs);
  for (int32_t i = 0; i < d.num_outputs; ++i) {
    HostTensor &t = m.outputs[i];
    t.name = d.outputs[i].name;
    t.dtype = d.outputs[i].dtype;
    int64_t bytes = resolve(d.outputs[i], t.dims);
    t.data.assign(std::max<int64_t>(bytes, 1), 0);
    m.outTensors.push_back({t.data.data(), t.dtype, static_cast<int32_t>(t.dims.size()),
                            t.dims.data(), bytes});
  }
  int status = kiln_session_create(m.desc, &m.session);
  if (status != KILN_STATUS_OK)
    return error(std::string("cannot create a session: ") + kiln_status_string(status));
  return 0;
}

} // namespace

/// Why the latest run of `m` failed: the session's message, and for a
/// --target=cuda library the CUDA loader's (the library carries the
/// runtime: its kiln_cuda_error).
std::string runFailure(const Loaded &m) {
  std::string why = std::string(m.desc->name) + ": " + kiln_session_error(m.session);
  using ErrorFn = const char *(*)();
  if (auto cudaError = reinterpret_cast<ErrorFn>(dlsym(m.handle, "kiln_cuda_error")))
    if (const char *text = cudaError(); text && *text)
      why += ": " + std::string(text);
  return why;
}

int runLibraryOnce(const std::string &library, const std::vector<std::string> &inputs,
                   const std::function<void(const std::string &, const float *, int64_t)> &output) {
  RunRequest req;
  req.model = library;
  req.inputs = inputs;
  Loaded m;
  if (int status = load(req, m, /*generateMissing=*/false))
    return status;
  int status = kiln_session_run(m.session, m.inTensors.data(),
                                static_cast<int32_t>(m.inTensors.size()), m.outTensors.data(),
                                static_cast<int32_t>(m.outTensors.size()));
  if (status != KILN_STATUS_OK)
    return error(runFailure(m));
  for (size_t i = 0; i < m.outputs.size(); ++i)
    if (m.outputs[i].dtype == 1)
      output(m.outputs[i].name, reinterpret_cast<const float *>(m.outputs[i].data.data()),
             m.outTensors[i].num_bytes / int64_t(sizeof(float)));
  return 0;
}

namespace {

int runOnce(Loaded &m) {
  int status = kiln_session_run(m.session, m.inTensors.data(),
                                static_cast<int32_t>(m.inTensors.size()),
                                m.outTensors.data(),
                                static_cast<int32_t>(m.outTensors.size()));
  if (status != KILN_STATUS_OK)
    return error(runFailure(m));
  // String outputs: each element is a malloc'd text the caller owns.
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    HostTensor &t = m.outputs[i];
    if (t.dtype != 8)
      continue;
    size_t n = static_cast<size_t>(m.outTensors[i].num_bytes) / sizeof(char *);
    t.strings.assign(n, "");
    for (size_t k = 0; k < n; ++k) {
      char *text = nullptr;
      std::memcpy(&text, t.data.data() + k * sizeof(char *), sizeof(char *));
      if (text)
        t.strings[k] = text;
      free(text);
      std::memset(t.data.data() + k * sizeof(char *), 0, sizeof(char *));
    }
  }
  return 0;
}

/// Compares one output; prints a line; returns true when it matches.
bool compare(const HostTensor &actual, const HostTensor &expected, int index,
             double rtol, double atol) {
  llvm::outs() << "output " << index << " '" << actual.name << "': ";
  // Floats of different widths compare as values (a float16 model's
  // outputs against a float32 reference), said so in the line.
  auto isFloat = [](int32_t dtype) {
    return dtype == 1 || dtype == 10 || dtype == 11 || dtype == 16;
  };
  bool acrossFloats = actual.dtype != expected.dtype && isFloat(actual.dtype) &&
                      isFloat(expected.dtype) && actual.dims == expected.dims;
  if (acrossFloats)
    llvm::outs() << dataTypeName(actual.dtype) << " against " << dataTypeName(expected.dtype)
                 << ": ";
  if ((actual.dtype != expected.dtype && !acrossFloats) || actual.dims != expected.dims) {
    llvm::outs() << "MISMATCH: computed " << dataTypeName(actual.dtype) << " "
                 << shapeText(actual.dims.data(), actual.dims.size()) << ", expected "
                 << dataTypeName(expected.dtype) << " "
                 << shapeText(expected.dims.data(), expected.dims.size()) << "\n";
    return false;
  }
  if (actual.dtype == 8) {
    int64_t bad = 0, first = -1;
    for (size_t i = 0; i < actual.strings.size() && i < expected.strings.size(); ++i)
      if (actual.strings[i] != expected.strings[i] && bad++ == 0)
        first = static_cast<int64_t>(i);
    if (actual.strings.size() != expected.strings.size()) {
      llvm::outs() << "MISMATCH: " << actual.strings.size() << " strings, expected "
                   << expected.strings.size() << "\n";
      return false;
    }
    if (bad) {
      llvm::outs() << "MISMATCH (" << bad << " of " << actual.strings.size()
                   << " strings differ; first at element " << first << ": got \""
                   << actual.strings[first] << "\", expected \"" << expected.strings[first]
                   << "\")\n";
      return false;
    }
    llvm::outs() << actual.strings.size() << " strings equal: ok\n";
    return true;
  }
  double maxAbs = 0, maxRel = 0, largest = 0;
  int64_t worst = -1, bad = 0;
  double worstExcess = -1;
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    double a = elementAsDouble(actual, i), e = elementAsDouble(expected, i);
    if (std::isnan(a) && std::isnan(e))
      continue;
    if (std::isinf(a) && std::isinf(e) && (a > 0) == (e > 0))
      continue;
    if (std::isfinite(e))
      largest = std::max(largest, std::fabs(e));
    double diff = std::fabs(a - e);
    if (std::isnan(diff))
      diff = INFINITY;
    double rel = e != 0 ? diff / std::fabs(e) : (diff == 0 ? 0 : INFINITY);
    maxAbs = std::max(maxAbs, diff);
    maxRel = std::max(maxRel, rel);
    double excess = diff - (atol + rtol * std::fabs(e));
    if (excess > 0)
      ++bad;
    if (excess > worstExcess) {
      worstExcess = excess;
      worst = i;
    }
  }
  llvm::outs() << "max abs err " << llvm::format("%.3g", maxAbs) << ", max rel err "
               << llvm::format("%.3g", maxRel);
  if (worst >= 0) {
    std::vector<int64_t> at(actual.dims.size());
    int64_t rem = worst;
    for (int64_t d = static_cast<int64_t>(at.size()) - 1; d >= 0; --d) {
      at[d] = actual.dims[d] ? rem % actual.dims[d] : 0;
      rem = actual.dims[d] ? rem / actual.dims[d] : 0;
    }
    llvm::outs() << ", worst at " << shapeText(at.data(), at.size()) << " (got "
                 << llvm::format("%.9g", elementAsDouble(actual, worst)) << ", expected "
                 << llvm::format("%.9g", elementAsDouble(expected, worst)) << ")";
  }
  if (bad) {
    llvm::outs() << ": MISMATCH (" << bad << " of " << actual.numElements()
                 << " elements outside rtol " << rtol << ", atol " << atol << ")\n";
    return false;
  }
  llvm::outs() << ": ok";
  // Outputs far below atol pass whatever they hold (an efficientnet_b0
  // output around 1e-14, wrong by its own scale, passed atol 1e-5).
  if (largest > 0 && largest < atol)
    llvm::outs() << ", but atol " << llvm::format("%g", atol) << " is above every expected value (largest "
                 << llvm::format("%.3g", largest) << "): a smaller --atol checks more";
  llvm::outs() << "\n";
  return true;
}

} // namespace

int runModel(const RunRequest &req) {
  Loaded m;
  if (int rc = load(req, m, /*generateMissing=*/false))
    return rc;
  if (int rc = runOnce(m))
    return rc;
  const kiln_model_desc &d = *m.desc;
  if (!req.saveOutputs.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(req.saveOutputs))
      return error("cannot create '" + req.saveOutputs + "': " + ec.message());
    std::set<std::string> used;
    for (int32_t i = 0; i < d.num_outputs; ++i) {
      std::string file = d.outputs[i].name;
      for (char &c : file)
        if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
          c = '_';
      if (file.empty() || file[0] == '.')
        file = "output" + file;
      // Two names that sanitise alike get the output's index appended.
      if (!used.insert(file).second) {
        file += "_" + std::to_string(i);
        used.insert(file);
      }
      llvm::SmallString<256> path(req.saveOutputs);
      llvm::sys::path::append(path, file + ".npy");
      std::string err;
      HostTensor t = m.outputs[i];
      t.data.resize(m.outTensors[i].num_bytes);
      if (!writeNpy(path.str().str(), t, err))
        return error(err);
    }
  }
  if (req.expects.empty()) {
    for (int32_t i = 0; i < d.num_outputs; ++i)
      llvm::outs() << "output " << i << " '" << d.outputs[i].name << "': "
                   << dataTypeName(d.outputs[i].dtype) << " "
                   << shapeText(m.outputs[i].dims.data(), d.outputs[i].rank) << "\n";
    return 0;
  }
  if (static_cast<int32_t>(req.expects.size()) > d.num_outputs)
    return error("the model has " + std::to_string(d.num_outputs) + " outputs, got " +
                 std::to_string(req.expects.size()) + " expected tensors");
  bool ok = true;
  int32_t next = 0;
  for (const std::string &text : req.expects) {
    auto [name, file] = splitNamed(text);
    HostTensor expected;
    std::string err;
    if (!readTensor(file, expected, err))
      return error(err);
    int32_t index = next++;
    if (!name.empty()) {
      index = -1;
      for (int32_t i = 0; i < d.num_outputs; ++i)
        if (name == d.outputs[i].name)
          index = i;
      if (index < 0)
        return error("the model has no output named '" + name + "'");
    }
    HostTensor actual = m.outputs[index];
    actual.data.resize(m.outTensors[index].num_bytes);
    if (expected.dtype == 4 && actual.dtype == 16)
      expected.dtype = 16; // bfloat16 stored as uint16 bit patterns.
    ok &= compare(actual, expected, index, req.rtol, req.atol);
  }
  return ok ? 0 : 1;
}

namespace {

/// Order statistics of a sample (nearest rank) and its mean.
struct Summary {
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0, mean = 0;
};

Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  auto at = [&](double f) { return v[static_cast<size_t>(f * double(n - 1) + 0.5)]; };
  Summary s;
  s.min = v.front();
  s.q1 = at(0.25);
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.q3 = at(0.75);
  s.max = v.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(n);
  return s;
}

/// Two builds take the same inputs and give the same outputs.
bool sameSignature(const kiln_model_desc &a, const kiln_model_desc &b) {
  auto same = [](const kiln_tensor_desc *x, const kiln_tensor_desc *y, int32_t n) {
    for (int32_t i = 0; i < n; ++i)
      if (std::string(x[i].name) != y[i].name || x[i].dtype != y[i].dtype ||
          x[i].rank != y[i].rank || !std::equal(x[i].dims, x[i].dims + x[i].rank, y[i].dims))
        return false;
    return true;
  };
  return a.num_inputs == b.num_inputs && a.num_outputs == b.num_outputs &&
         same(a.inputs, b.inputs, a.num_inputs) && same(a.outputs, b.outputs, a.num_outputs);
}

} // namespace

int benchModel(const RunRequest &req) {
  if (req.iterations < 1 || req.warmup < 0 || req.threads < 1)
    return error("--iterations and --threads must be >= 1, --warmup >= 0");
  // The runtime's thread pool reads KILN_NUM_THREADS (serial today).
  setenv("KILN_NUM_THREADS", std::to_string(req.threads).c_str(), 1);
  std::vector<std::string> paths{req.model};
  paths.insert(paths.end(), req.others.begin(), req.others.end());
  std::vector<std::unique_ptr<Loaded>> builds;
  for (const std::string &path : paths) {
    RunRequest one = req;
    one.model = path;
    builds.push_back(std::make_unique<Loaded>());
    if (int rc = load(one, *builds.back(), /*generateMissing=*/true))
      return rc;
    if (!sameSignature(*builds.front()->desc, *builds.back()->desc))
      return error("'" + path + "' takes or gives other tensors than '" + paths.front() +
                   "': not a build of the same model");
  }
  size_t count = builds.size();
  for (int i = 0; i < req.warmup; ++i)
    for (auto &m : builds)
      if (int rc = runOnce(*m))
        return rc;
  // Builds take turns call by call, each iteration starting with the next
  // one, so that the machine's slow and fast phases fall on all of them:
  // iteration i's times are neighbours, and their ratios compare builds
  // under the same conditions.
  std::vector<std::vector<double>> ms(count);
  for (int i = 0; i < req.iterations; ++i)
    for (size_t k = 0; k < count; ++k) {
      size_t b = (size_t(i) + k) % count;
      auto start = std::chrono::steady_clock::now();
      if (int rc = runOnce(*builds[b]))
        return rc;
      auto end = std::chrono::steady_clock::now();
      ms[b].push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
  std::vector<Summary> time(count), ratio(count);
  for (size_t b = 0; b < count; ++b) {
    time[b] = summarize(ms[b]);
    std::vector<double> r;
    for (int i = 0; i < req.iterations; ++i)
      r.push_back(ms[b][i] / ms[0][i]);
    ratio[b] = summarize(r);
  }
  auto fixed = [](double v) { return llvm::format("%.6f", v); };
  const char *name = builds.front()->desc->name;
  if (req.json && count == 1) {
    const Summary &t = time[0];
    llvm::outs() << "{\"model\": \"" << name << "\", \"iterations\": " << req.iterations
                 << ", \"warmup\": " << req.warmup << ", \"threads\": " << req.threads
                 << ", \"min_ms\": " << fixed(t.min) << ", \"median_ms\": " << fixed(t.median)
                 << ", \"mean_ms\": " << fixed(t.mean) << ", \"max_ms\": " << fixed(t.max)
                 << ", \"times_ms\": [";
    for (size_t i = 0; i < ms[0].size(); ++i)
      llvm::outs() << (i ? ", " : "") << fixed(ms[0][i]);
    llvm::outs() << "]}\n";
  } else if (req.json) {
    llvm::outs() << "{\"model\": \"" << name << "\", \"iterations\": " << req.iterations
                 << ", \"warmup\": " << req.warmup << ", \"threads\": " << req.threads
                 << ", \"builds\": [";
    for (size_t b = 0; b < count; ++b) {
      const Summary &t = time[b], &r = ratio[b];
      llvm::outs() << (b ? ", " : "") << "{\"library\": \"" << llvm::StringRef(paths[b])
                   << "\", \"min_ms\": " << fixed(t.min) << ", \"median_ms\": "
                   << fixed(t.median) << ", \"mean_ms\": " << fixed(t.mean)
                   << ", \"max_ms\": " << fixed(t.max) << ", \"ratio_median\": "
                   << fixed(r.median) << ", \"ratio_q1\": " << fixed(r.q1)
                   << ", \"ratio_q3\": " << fixed(r.q3) << ", \"times_ms\": [";
      for (size_t i = 0; i < ms[b].size(); ++i)
        llvm::outs() << (i ? ", " : "") << fixed(ms[b][i]);
      llvm::outs() << "]}";
    }
    llvm::outs() << "]}\n";
  } else if (count == 1) {
    const Summary &t = time[0];
    llvm::outs() << name << ": " << req.iterations << " runs (" << req.warmup
                 << " warm-up), " << req.threads << " thread(s)\n"
                 << llvm::format("  min %.3f ms  median %.3f ms  mean %.3f ms  max %.3f ms\n",
                                 t.min, t.median, t.mean, t.max);
  } else {
    llvm::outs() << name << ": " << count << " builds in turn, " << req.iterations
                 << " runs of each (" << req.warmup << " warm-up), " << req.threads
                 << " thread(s); ratio: each run's time over the first build's run beside it\n";
    for (size_t b = 0; b < count; ++b) {
      const Summary &t = time[b], &r = ratio[b];
      llvm::outs() << "  " << paths[b] << "\n"
                   << llvm::format("    min %.3f ms  q1 %.3f ms  median %.3f ms  max %.3f ms",
                                   t.min, t.q1, t.median, t.max);
      if (b)
        llvm::outs() << llvm::format("  ratio median %.3f (q1 %.3f, q3 %.3f)", r.median, r.q1,
                                     r.q3);
      llvm::outs() << "\n";
    }
  }
  return 0;
}

} // namespace kiln
