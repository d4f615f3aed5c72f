//===- Driver.h - kiln's subcommands --------------------------------*- C++ -*-===//
//
// The command line lives in kiln.cpp; the subcommands take plain requests so
// that `kiln run model.onnx` can compile through the same path as
// `kiln compile`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_DRIVER_H
#define KILN_COMPILER_DRIVER_DRIVER_H

#include <functional>
#include <string>
#include <vector>

namespace kiln {

struct CompileRequest {
  std::string input, output;
  std::string emit;      ///< mlir, llvm, asm, obj, so, lib; "" = from -o.
  std::string compileTo; ///< A phase name; "" = the whole pipeline.
  std::vector<std::string> inputShapes;
  /// `NAME=VALUE`: the largest value of the dynamic dim NAME, for a static
  /// memory plan.
  std::vector<std::string> maxShapes;
  /// How a dynamic batch runs: "items" (one item at a time: static code,
  /// a workspace that does not grow), "whole" (kept whole, a symbolic
  /// dim), or "" / "auto" (whole on the GPU, and on a hosted CPU when
  /// most of the model's work is matmuls by constant weights that take a
  /// row or a few per item; else items). The other way is tried when the
  /// first does not compile.
  std::string dynamicBatch;
  std::string target, cpu, features;
  std::string gpuArch; ///< --gpu-arch (with --target=cuda); "" = sm_80.
  std::string gpuPrecision; ///< --gpu-precision (with --target=cuda); "" = fp32.
  int optLevel = 3;
  bool freestanding = false; ///< Define memcpy/memmove/memset in the object.
  std::string name;   ///< "" = from the model's file name.
  std::string header; ///< "" = NAME.h beside the output.
  bool onnxShapeInference = true;
  bool eraseInferredShapes = false;
  /// "" (the model's own types) or "dynamic" (MatMul/Gemm weights to int8,
  /// activations quantised at run time).
  std::string quantize;
  /// --quantize=int8: the calibration samples (a folder: one .npy/.pb file
  /// per sample, or one folder of them per sample for several inputs) and
  /// how their ranges are taken ("minmax", "percentile" or "entropy").
  std::string calibrationData, calibrationMethod;
  /// The calibration run's own build: the activations --quantize=int8
  /// quantises as more outputs (kiln-expose-activation-ranges), as their
  /// "ranges" or whole "tensors"; set by calibrateModel, not by the
  /// command line.
  std::string exposeActivations;
  bool timing = false; ///< Per-phase wall time and peak memory on stderr.
  bool quiet = false;  ///< Errors only (no progress line, no timing).
};

/// `kiln compile`: 0 on success, 1 on any error (already printed).
int compileModel(const CompileRequest &request);
/// For --quantize=int8: compiles `request`'s model for the host with its
/// activation ranges as outputs, runs it on every calibration sample and
/// sets `ranges` (lo, hi per quantised op). 0, or 1 on an error (printed).
int calibrateModel(const CompileRequest &request, std::vector<double> &ranges);

struct RunRequest {
  std::string model; ///< A compiled .so, or an .onnx compiled first.
  std::vector<std::string> inputs, expects; ///< [NAME=]FILE.
  double rtol = 1e-3, atol = 1e-5;
  std::string saveOutputs;
  // bench only:
  int iterations = 100, warmup = 10, threads = 1;
  /// More builds of the same model, run in turn with `model` call by call
  /// and compared with it.
  std::vector<std::string> others;
  bool json = false;
  // Compile options when the model is an .onnx file.
  CompileRequest compile;
};

/// `kiln run`: 0 when every output matches, 1 on a mismatch, 2 on errors.
int runModel(const RunRequest &request);

/// `kiln bench`: 0 on success, 2 on errors.
int benchModel(const RunRequest &request);
/// Runs the compiled library `library` once on `inputs` ([NAME=]FILE, as
/// for kiln run) and calls `output(name, values, count)` for each float32
/// output. 0, or 2 on an error (printed).
int runLibraryOnce(const std::string &library, const std::vector<std::string> &inputs,
                   const std::function<void(const std::string &, const float *, int64_t)> &output);

struct CheckRequest {
  std::string model;
  std::vector<std::string> inputShapes;
  std::string target, cpu, features;
  std::string gpuArch; ///< --gpu-arch with --target=cuda; "" = sm_80.
  bool json = false;
};

/// `kiln check`: 0 when every op is supported, 1 when some are not (or the
/// model does not import), 2 when the model cannot be read.
int checkModel(const CheckRequest &request);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_DRIVER_H
