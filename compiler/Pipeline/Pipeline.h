//===- Pipeline.h - kiln's compilation phases ---------------------*- C++ -*-===//
//
// Compilation is a sequence of named phases; each is a registered pass
// pipeline (`kiln-opt --kiln-phase-onnx`), and `kiln compile --compile-to=P`
// stops after phase P. See docs/architecture.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PIPELINE_PIPELINE_H
#define KILN_COMPILER_PIPELINE_PIPELINE_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// The phases, in order. Later issues add optimize (fusion, INT8) and
/// per-target codegen between lower and bufferize.
enum class Phase {
  Import,    ///< ONNX protobuf -> onnx dialect (the importer, not a pipeline).
  Onnx,      ///< Shape inference and folding on the onnx dialect.
  Lower,     ///< onnx -> linalg/tensor/arith/math on tensors ("linalg").
  Bufferize, ///< One-shot bufferization, outputs as arguments, memory plan.
  LLVM,      ///< Loops, polynomial math, then the LLVM dialect.
};

/// "import" -> Phase::Import, ...; std::nullopt for an unknown name.
std::optional<Phase> parsePhase(llvm::StringRef name);

/// The phase names, comma-separated, for help text and errors.
llvm::StringRef phaseNames();

/// What the phases need to know about the target (compiler/Target's
/// TargetDescription decides it; the defaults suit a 64-bit host).
struct PipelineOptions {
  unsigned indexBitwidth = 64; ///< The target's pointer width.
  /// Lower float min/max to compare and select (targets whose FPU lacks
  /// them, where LLVM would call libm).
  bool expandFloatMinMax = false;
  /// The target's vector registers (0 bits: no vector kernels).
  unsigned vectorBits = 0;
  unsigned vectorRegisters = 16;
  /// Steps ahead the kernels prefetch far operands (0: no prefetches).
  unsigned prefetchDistance = 0;
  /// --quantize: "" (float as given), "dynamic" (kiln-quantize-dynamic) or
  /// "int8" (kiln-quantize-static with `activationRanges`).
  std::string quantize;
  /// The calibrated activation ranges for "int8" (lo, hi per op).
  std::vector<double> activationRanges;
  /// The calibration build: kiln-expose-activation-ranges at the end of
  /// the onnx phase, exposing "ranges" (min and max) or "tensors".
  std::string exposeActivations;
  /// The integer dot product int8 matmuls by constant weights run on
  /// (kiln-vectorize-int8-matmul's kinds: vnni512, pmaddwd512,
  /// pmaddwd256), or empty.
  std::string int8DotProduct;
  /// The target rounds (floor, ceil, trunc, roundeven) in one instruction:
  /// kiln-expand-math leaves those ops to LLVM.
  bool nativeRounding = false;
  /// Large kernels run their outer loop through the runtime's
  /// kiln_parallel_for (hosted targets, outputs linked with the runtime).
  bool parallelLoops = false;
  /// The largest value of each of the model's symbolic dims, in order
  /// (--max-shape), or empty: with them the memory plan is static, made
  /// for those values.
  std::vector<int64_t> symbolicMax;
  /// --target=cuda: the GPU's architecture (sm_80...). The llvm phase then
  /// runs the loop nests as GPU kernels in one gpu.module (the host part
  /// stays in func/memref/gpu for now; addGpuDevicePasses lowers the
  /// kernels).
  std::string gpuArch;
  /// --gpu-precision=tf32: the tiled contractions on the tensor cores with
  /// TF32 inputs.
  bool gpuTf32 = false;
};

/// Adds the passes of `phase` (not the ones before it) to `pm`.
void addPhasePasses(mlir::OpPassManager &pm, Phase phase,
                    const PipelineOptions &options = {});

/// Adds the passes of every phase after Import up to and including `last`.
void addPipelineUpTo(mlir::OpPassManager &pm, Phase last,
                     const PipelineOptions &options = {});

/// The llvm phase of --target=cuda (options.gpuArch): the loop nests as
/// kernels of one gpu.module (arith, memref, control flow), launched by
/// gpu.launch_func from the host function.
void addGpuPasses(mlir::OpPassManager &pm, const PipelineOptions &options);

/// The host side of a --target=cuda library, once the device code is PTX:
/// the launches as calls into the runtime's CUDA loader (the gpu.module
/// goes; its kernels' names into `kiln.gpu_kernels`), the rest to the LLVM
/// dialect as for the CPU, the weights as their device copies.
void addGpuHostPasses(mlir::OpPassManager &pm, const PipelineOptions &options);

/// The device code's lowering to the LLVM and NVVM dialects, on a module
/// holding the gpu.module alone (its kernels' signatures change, which the
/// host's launches would no longer match).
void addGpuDevicePasses(mlir::OpPassManager &pm);

/// Adds kiln-dynamic-batch and kiln-dim-symbols (the lower phase starts
/// with them): the driver runs them before reading the model's interface,
/// whose batched outputs and dynamic output dims they mark, and kiln check
/// for their reasons.
void addDynamicBatchCheck(mlir::OpPassManager &pm);

/// Adds every dialect, interface and translation kiln's pipeline needs.
void registerKilnDialects(mlir::DialectRegistry &registry);

/// Registers kiln's passes and the phase pipelines with MLIR's registry.
void registerKilnPasses();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINE_PIPELINE_H
