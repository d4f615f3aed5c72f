//===- Calibrate.cpp - the calibration run of --quantize=int8 ------------===//
//
// `kiln compile m.onnx --quantize=int8 --calibration-data=DIR` first
// compiles the float model for the host, with the range (ReduceMin and
// ReduceMax) of every activation that kiln-quantize-static quantises as
// more outputs (kiln-expose-activation-ranges), into a temporary library;
// runs it on each sample of DIR (a progress line on a terminal); and takes
// each activation's range over all samples (minmax). The compile proper
// then quantises with those ranges.
//
// DIR holds one .npy or .pb tensor file per sample (single-input models),
// or one folder per sample holding a file per input: named after the
// input (NAME.npy, NAME.pb) or bound in file-name order (input_0.pb, ...,
// as ONNX test data are). Inputs are pinned to the first sample's shapes
// unless --input-shape gives them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"
#include "compiler/Tools/TensorIO.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace kiln {

bool graphInputNames(const std::string &path, std::vector<std::string> &names,
                     std::string &error);

namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "kiln: error: " << message << "\n";
  return 1;
}

bool isTensorFile(llvm::StringRef path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  return ext == ".npy" || ext == ".pb";
}

/// The entries of `dir`, sorted by name.
std::vector<std::string> listSorted(const std::string &dir, std::string &error) {
  std::vector<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    out.push_back(it->path());
  if (ec)
    error = "cannot read '" + dir + "': " + ec.message();
  std::sort(out.begin(), out.end());
  return out;
}

/// A folder removed (with its files) on scope exit.
struct TempDir {
  llvm::SmallString<128> path;
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
};

} // namespace

int calibrateModel(const CompileRequest &request, std::vector<double> &ranges) {
  const std::string &dir = request.calibrationData;
  if (!llvm::sys::fs::is_directory(dir))
    return fail("--calibration-data: '" + dir + "' is not a folder");
  std::string error;
  std::vector<std::string> inputNames;
  if (!graphInputNames(request.input, inputNames, error))
    return fail(error);
  // The samples: each a list of [NAME=]FILE.
  std::vector<std::vector<std::string>> samples;
  for (const std::string &entry : listSorted(dir, error)) {
    if (llvm::sys::fs::is_directory(entry)) {
      std::vector<std::string> files;
      for (const std::string &file : listSorted(entry, error)) {
        if (!isTensorFile(file))
          continue;
        std::string stem = llvm::sys::path::stem(file).str();
        bool named = std::find(inputNames.begin(), inputNames.end(), stem) != inputNames.end();
        files.push_back(named ? stem + "=" + file : file);
      }
      if (!files.empty())
        samples.push_back(files);
    } else if (isTensorFile(entry)) {
      samples.push_back({entry});
    }
  }
  if (!error.empty())
    return fail("--calibration-data: " + error);
  if (samples.empty())
    return fail("--calibration-data: '" + dir +
                "' holds no samples (.npy or .pb files, or folders of them)");
  if (inputNames.size() > 1 && samples.front().size() == 1)
    return fail("--calibration-data: " + request.input + " has " +
                std::to_string(inputNames.size()) +
                " inputs: give one folder per sample, with a file per input");

  // The calibration build, for the host, the shapes pinned from the first
  // sample unless --input-shape gives them.
  TempDir temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kiln-calibrate", temp.path))
    return fail("cannot create a temporary folder: " + ec.message());
  CompileRequest build = request;
  build.quantize.clear();
  build.calibrationData.clear();
  build.calibrationMethod.clear();
  build.exposeActivationRanges = true;
  build.target.clear();
  build.cpu.clear();
  build.features.clear();
  build.emit = "so";
  build.compileTo.clear();
  build.quiet = true;
  build.timing = false;
  llvm::SmallString<256> library(temp.path), header(temp.path);
  llvm::sys::path::append(library, "libcalibration.so");
  llvm::sys::path::append(header, "calibration.h");
  build.output = library.str().str();
  build.header = header.str().str();
  if (request.inputShapes.empty()) {
    for (size_t i = 0; i < samples.front().size() && i < inputNames.size(); ++i) {
      llvm::StringRef text = samples.front()[i];
      std::string name = inputNames[i], file = text.str();
      if (auto eq = text.find('='); eq != llvm::StringRef::npos && !llvm::sys::fs::exists(text)) {
        name = text.take_front(eq).str();
        file = text.drop_front(eq + 1).str();
      }
      HostTensor t;
      if (!readTensor(file, t, error))
        return fail("--calibration-data: " + error);
      if (t.dims.empty())
        continue;
      std::string dims;
      for (int64_t d : t.dims)
        dims += (dims.empty() ? "" : "x") + std::to_string(d);
      build.inputShapes.push_back(name + "=" + dims);
    }
  }
  if (compileModel(build) != 0)
    return fail(request.input + ": the calibration build (the float model with its "
                "activations' ranges as outputs) failed");

  bool terminal = llvm::sys::Process::StandardErrIsDisplayed() && !request.quiet;
  std::vector<double> lo, hi;
  for (size_t s = 0; s < samples.size(); ++s) {
    if (terminal) {
      llvm::errs() << "\r\033[Kkiln: " << request.input << ": calibrating " << s + 1 << "/"
                   << samples.size();
      llvm::errs().flush();
    }
    size_t index = 0;
    bool bad = false;
    int status = runLibraryOnce(library.str().str(), samples[s],
                                [&](const std::string &name, const float *v, int64_t n) {
                                  if (!llvm::StringRef(name).starts_with("kiln_calibration_"))
                                    return;
                                  if (n != 1) {
                                    bad = true;
                                    return;
                                  }
                                  size_t op = index / 2;
                                  if (op >= lo.size()) {
                                    lo.push_back(std::numeric_limits<double>::infinity());
                                    hi.push_back(-std::numeric_limits<double>::infinity());
                                  }
                                  double x = v[0];
                                  if (index % 2 == 0)
                                    lo[op] = std::min(lo[op], x);
                                  else
                                    hi[op] = std::max(hi[op], x);
                                  ++index;
                                });
    if (terminal)
      llvm::errs() << "\r\033[K";
    if (status != 0)
      return fail("--calibration-data: sample " + std::to_string(s + 1) + " (" +
                  samples[s].front() + (samples[s].size() > 1 ? ", ..." : "") +
                  ") does not run on " + request.input);
    if (bad || index != 2 * lo.size())
      return fail(request.input + ": the calibration build's range outputs are malformed");
  }
  ranges.clear();
  for (size_t i = 0; i < lo.size(); ++i) {
    // NaN (a sample that makes one) leaves min/max of the rest; a range
    // that is not finite leaves its op float (kiln-quantize-static).
    ranges.push_back(lo[i]);
    ranges.push_back(hi[i]);
  }
  return 0;
}

} // namespace kiln
