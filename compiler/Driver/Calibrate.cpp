//===- Calibrate.cpp - the calibration run of --quantize=int8 ------------===//
//
// `kiln compile m.onnx --quantize=int8 --calibration-data=DIR` first
// compiles the float model for the host, with the range (ReduceMin and
// ReduceMax) of every activation that kiln-quantize-static quantises as
// more outputs (kiln-expose-activation-ranges), into a temporary library;
// runs it on each sample of DIR (a progress line on a terminal); and takes
// each activation's range over all samples. The compile proper then
// quantises with those ranges.
//
// --calibration-method: minmax (the default) takes min and max over the
// samples. percentile and entropy expose the activations whole instead and
// run the samples twice, for each activation's range and then its
// histogram (2048 bins): percentile keeps the central 99.999% of the
// values; entropy (TensorRT's method) picks the threshold T of |x| whose
// clipped distribution, quantised to uint8's levels, diverges least (KL)
// from the original, exact zeros left out, and keeps [-T, T] of the range
// (min/max for activations of fewer than 32768 values over the samples).
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
#include <functional>
#include <limits>
#include <numeric>
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

/// The histogram of one activation over the samples, and the range the
/// percentile and entropy methods take from it.
class Histogram {
public:
  static constexpr int kBins = 2048;

  /// Over [lo, hi] (percentile), or of |x| over [0, max(|lo|, |hi|)]
  /// (entropy).
  void reset(bool absolute, double lo, double hi) {
    this->absolute = absolute;
    from = absolute ? 0.0 : lo;
    to = absolute ? std::max(std::fabs(lo), std::fabs(hi)) : hi;
    counts.assign(kBins, 0.0);
  }

  void add(const float *v, int64_t n) {
    if (!(to > from) || !std::isfinite(from) || !std::isfinite(to))
      return;
    double scale = kBins / (to - from);
    for (int64_t i = 0; i < n; ++i) {
      double x = absolute ? std::fabs(v[i]) : v[i];
      // Exact zeros (half of a ReLU's outputs) are exact at any threshold:
      // left out, they do not drag the entropy search to small ones.
      if (!std::isfinite(x) || (absolute && x == 0))
        continue;
      counts[size_t(std::clamp<int64_t>(int64_t((x - from) * scale), 0, kBins - 1))] += 1;
    }
  }

  /// Narrows [lo, hi], the activation's whole range, to the method's.
  void range(bool entropy, double &lo, double &hi) const {
    if (!(to > from))
      return;
    double width = (to - from) / kBins;
    if (!entropy) {
      // The central 99.999%: 0.0005% of the values cut at each end.
      double total = std::accumulate(counts.begin(), counts.end(), 0.0);
      double tail = total * 0.000005, seen = 0;
      for (int i = 0; i < kBins; ++i) {
        seen += counts[size_t(i)];
        if (seen > tail) {
          lo = std::max(lo, from + i * width);
          break;
        }
      }
      seen = 0;
      for (int i = kBins - 1; i >= 0; --i) {
        seen += counts[size_t(i)];
        if (seen > tail) {
          hi = std::min(hi, from + (i + 1) * width);
          break;
        }
      }
      return;
    }
    // Entropy: the threshold T of |x| whose clipped distribution loses
    // least information (KL divergence) when quantised to the levels
    // uint8 gives it: 256 over [0, T] for an activation that is never
    // negative, 128 a side otherwise. A histogram of fewer values than 16
    // per bin is too sparse for that: its min/max stay.
    if (std::accumulate(counts.begin(), counts.end(), 0.0) < 16.0 * kBins)
      return;
    int levels = lo >= 0 ? 256 : 128;
    double bestKl = std::numeric_limits<double>::infinity();
    int best = kBins;
    std::vector<double> p, q;
    for (int i = levels; i <= kBins; ++i) {
      p.assign(counts.begin(), counts.begin() + i);
      double outliers = std::accumulate(counts.begin() + i, counts.end(), 0.0);
      p.back() += outliers;
      // The first i bins merged into `levels` levels, each level's count
      // spread evenly over the bins P has values in (as TensorRT's and
      // MXNet's calibrations do).
      q.assign(size_t(i), 0.0);
      for (int l = 0; l < levels; ++l) {
        int start = int(int64_t(l) * i / levels), end = int(int64_t(l + 1) * i / levels);
        double sum = 0;
        int nonzero = 0;
        for (int j = start; j < end; ++j) {
          sum += counts[size_t(j)];
          nonzero += p[size_t(j)] > 0;
        }
        for (int j = start; nonzero && j < end; ++j)
          if (p[size_t(j)] > 0)
            q[size_t(j)] = sum / nonzero;
      }
      double pTotal = std::accumulate(p.begin(), p.end(), 0.0);
      double qTotal = std::accumulate(q.begin(), q.end(), 0.0);
      if (pTotal <= 0 || qTotal <= 0)
        continue;
      double kl = 0;
      for (int j = 0; j < i; ++j) {
        if (p[size_t(j)] <= 0)
          continue;
        double pj = p[size_t(j)] / pTotal;
        // A bin Q leaves empty (the outliers' one): a small stand-in.
        double qj = q[size_t(j)] > 0 ? q[size_t(j)] / qTotal : 1e-12;
        kl += pj * std::log(pj / qj);
      }
      if (kl < bestKl) {
        bestKl = kl;
        best = i;
      }
    }
    double threshold = best * width;
    lo = std::max(lo, -threshold);
    hi = std::min(hi, threshold);
  }

private:
  bool absolute = false;
  double from = 0, to = 0;
  std::vector<double> counts;
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
  std::string method = request.calibrationMethod.empty() ? "minmax" : request.calibrationMethod;
  bool rangesOnly = method == "minmax";
  build.exposeActivations = rangesOnly ? "ranges" : "tensors";
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
  // Runs every sample, handing each calibration output (op i's min and
  // max, or its whole activation) to `take`; 0 or 1 after an error.
  auto runAll = [&](const char *what,
                    const std::function<void(size_t, const float *, int64_t)> &take) {
    for (size_t s = 0; s < samples.size(); ++s) {
      if (terminal) {
        llvm::errs() << "\r\033[Kkiln: " << request.input << ": " << what << " " << s + 1 << "/"
                     << samples.size();
        llvm::errs().flush();
      }
      size_t index = 0;
      int status = runLibraryOnce(library.str().str(), samples[s],
                                  [&](const std::string &name, const float *v, int64_t n) {
                                    if (llvm::StringRef(name).starts_with("kiln_calibration_"))
                                      take(index++, v, n);
                                  });
      if (terminal)
        llvm::errs() << "\r\033[K";
      if (status != 0)
        return fail("--calibration-data: sample " + std::to_string(s + 1) + " (" +
                    samples[s].front() + (samples[s].size() > 1 ? ", ..." : "") +
                    ") does not run on " + request.input);
    }
    return 0;
  };
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> lo, hi;
  auto extend = [&](size_t op) {
    if (op >= lo.size()) {
      lo.resize(op + 1, inf);
      hi.resize(op + 1, -inf);
    }
  };
  if (rangesOnly) {
    bool bad = false;
    if (runAll("calibrating", [&](size_t index, const float *v, int64_t n) {
          if (n != 1) {
            bad = true;
            return;
          }
          size_t op = index / 2;
          extend(op);
          // NaN leaves the range of the rest (the comparisons fail).
          if (index % 2 == 0)
            lo[op] = std::min(lo[op], double(v[0]));
          else
            hi[op] = std::max(hi[op], double(v[0]));
        }))
      return 1;
    if (bad)
      return fail(request.input + ": the calibration build's range outputs are malformed");
  } else {
    // Two passes: each activation's range, then its histogram over it.
    if (runAll("calibrating (ranges)", [&](size_t op, const float *v, int64_t n) {
          extend(op);
          for (int64_t i = 0; i < n; ++i)
            if (std::isfinite(v[i])) {
              lo[op] = std::min(lo[op], double(v[i]));
              hi[op] = std::max(hi[op], double(v[i]));
            }
        }))
      return 1;
    std::vector<Histogram> histograms(lo.size());
    for (size_t op = 0; op < lo.size(); ++op)
      histograms[op].reset(method == "entropy", lo[op], hi[op]);
    if (runAll("calibrating (histograms)", [&](size_t op, const float *v, int64_t n) {
          if (op < histograms.size())
            histograms[op].add(v, n);
        }))
      return 1;
    for (size_t op = 0; op < lo.size(); ++op)
      if (std::isfinite(lo[op]) && std::isfinite(hi[op]))
        histograms[op].range(method == "entropy", lo[op], hi[op]);
  }
  ranges.clear();
  for (size_t i = 0; i < lo.size(); ++i) {
    // A range that is not finite leaves its op float (kiln-quantize-static).
    ranges.push_back(lo[i]);
    ranges.push_back(hi[i]);
  }
  return 0;
}

} // namespace kiln
