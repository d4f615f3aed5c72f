//===- Pipeline.cpp - kiln's compilation phases ----------------------------===//

#include "compiler/Pipeline/Pipeline.h"
#include "dialects/Onnx/IR/OnnxOps.h"
#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/GPU/Passes.h"
#include "passes/Conversion/OnnxToLinalg/Passes.h"
#include "passes/Memory/Passes.h"
#include "passes/Onnx/Passes.h"
#include "passes/Quantization/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace kiln {

std::optional<Phase> parsePhase(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Phase>>(name)
      .Case("import", Phase::Import)
      .Case("onnx", Phase::Onnx)
      .Case("linalg", Phase::Lower)
      .Case("bufferize", Phase::Bufferize)
      .Case("llvm", Phase::LLVM)
      .Default(std::nullopt);
}

llvm::StringRef phaseNames() { return "import, onnx, linalg, bufferize, llvm"; }

namespace {

/// Everything left (loops, memrefs, arith, math, vectors, functions with
/// bare-pointer arguments) to the LLVM dialect at the target's pointer
/// width.
void addLowerToLLVM(OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  // Float min/max as compare and select: LLVM would call libm's
  // fminf/fmaxf/fmaximumf where the FPU has no such instruction.
  if (options.expandFloatMinMax)
    pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createConvertMathToLLVMPass());
  // Index arithmetic at the target's pointer width (no 64-bit helper
  // calls on 32-bit microcontrollers).
  unsigned bits = options.indexBitwidth;
  ArithToLLVMConversionPassOptions arithOptions;
  arithOptions.indexBitwidth = bits;
  pm.addPass(createArithToLLVMConversionPass(arithOptions));
  ConvertIndexToLLVMPassOptions indexOptions;
  indexOptions.indexBitwidth = bits;
  pm.addPass(createConvertIndexToLLVMPass(indexOptions));
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.indexBitwidth = bits;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  funcOptions.indexBitwidth = bits;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  ConvertControlFlowToLLVMPassOptions cfOptions;
  cfOptions.indexBitwidth = bits;
  pm.addPass(createConvertControlFlowToLLVMPass(cfOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

} // namespace

void addPhasePasses(OpPassManager &pm, Phase phase, const PipelineOptions &options) {
  switch (phase) {
  case Phase::Import:
    return;
  case Phase::Onnx:
    // While Shape/Size still exist: does the batch size feed values?
    pm.addNestedPass<func::FuncOp>(onnx::createOnnxDynamicBatchValuesPass());
    pm.addNestedPass<func::FuncOp>(onnx::createOnnxShapeInferencePass());
    pm.addPass(createCSEPass());
    pm.addNestedPass<func::FuncOp>(onnx::createOnnxShapeInferencePass());
    pm.addNestedPass<func::FuncOp>(onnx::createOnnxLowerSequencesPass());
    pm.addNestedPass<func::FuncOp>(onnx::createOnnxShapeInferencePass());
    pm.addNestedPass<func::FuncOp>(onnx::createOnnxFoldChannelScalePass());
    // Models that arrive quantised (QDQ): their MatMuls as integer ops.
    pm.addNestedPass<func::FuncOp>(quantization::createFuseQdqPass());
    // The quantisers take float32 ops: a float16/bfloat16 model's ops are
    // widened here (in the calibration build too, so that both see the
    // same activations) instead of at the start of the lower phase.
    if (!options.quantize.empty() || !options.exposeActivations.empty())
      pm.addPass(createWidenHalfPass());
    if (options.quantize == "dynamic") {
      pm.addNestedPass<func::FuncOp>(quantization::createQuantizeDynamicPass());
      // One DynamicQuantizeLinear per activation that several projections read.
      pm.addPass(createCSEPass());
    }
    if (options.quantize == "int8") {
      quantization::QuantizeStaticPassOptions ranges;
      ranges.ranges.assign(options.activationRanges.begin(), options.activationRanges.end());
      pm.addPass(quantization::createQuantizeStaticPass(ranges));
      // The QDQ pairs it wrote as integer ops; one QuantizeLinear per
      // activation that several ops read.
      pm.addNestedPass<func::FuncOp>(quantization::createFuseQdqPass());
      pm.addPass(createCSEPass());
    }
    if (!options.exposeActivations.empty()) {
      quantization::ExposeActivationRangesPassOptions expose;
      expose.tensors = options.exposeActivations == "tensors";
      pm.addPass(quantization::createExposeActivationRangesPass(expose));
    }
    return;
  case Phase::Lower:
    // float16/bfloat16 ops without a half lowering compute in f32.
    pm.addPass(createWidenHalfPass());
    // Before anything is lowered for one batch item: are items independent?
    addDynamicBatchCheck(pm);
    {
      // Winograd trades workspace for multiplies: for hosts with wide
      // vectors, not for firmware's small memories.
      ConvertOnnxToLinalgPassOptions lower;
      lower.winograd = options.vectorBits >= 256;
      lower.backend = options.gpuArch.empty() ? "CPU" : "GPU";
      pm.addPass(createConvertOnnxToLinalgPass(lower));
    }
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createFuseElementwisePass());
    // Unit dims out of every generic (reshape propagation leaves matmuls
    // with 768x1x1 outputs, whose innermost dim would be the kernels' N).
    pm.addPass(createLinalgFoldUnitExtentDimsPass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    // Contractions of half values: on the tensor cores with no rounding.
    if (!options.gpuArch.empty())
      pm.addNestedPass<func::FuncOp>(createGpuMarkExactTf32Pass());
    return;
  case Phase::Bufferize: {
    pm.addPass(createMarkReadonlyInputsPass());
    pm.addPass(createPrepareDestinationsPass());
    pm.addPass(bufferization::createEmptyTensorEliminationPass());
    bufferization::OneShotBufferizePassOptions bufferize;
    bufferize.bufferizeFunctionBoundaries = true;
    bufferize.functionBoundaryTypeConversion =
        bufferization::LayoutMapOption::IdentityLayoutMap;
    pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
    // An insert of a value written in place into its own window becomes a
    // copy between two equal subviews; CSE makes them one, and the
    // canonicalizer drops the self-copy.
    pm.addPass(createCSEPass());
    bufferization::BufferResultsToOutParamsPassOptions outParams;
    outParams.hoistStaticAllocs = true;
    outParams.modifyPublicFunctions = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createForwardCopiesPass());
    pm.addPass(createViewRowStacksPass());
    pm.addPass(createSymbolicArgumentsPass());
    pm.addPass(createCanonicalizerPass());
    PlanMemoryPassOptions plan;
    // Kernels fold epilogues only where there are vector registers.
    plan.epilogues = options.vectorBits >= 64;
    plan.symbolicMax.assign(options.symbolicMax.begin(), options.symbolicMax.end());
    plan.indexBitwidth = options.indexBitwidth;
    pm.addPass(createPlanMemoryPass(plan));
    return;
  }
  case Phase::LLVM: {
    if (!options.gpuArch.empty())
      return addGpuPasses(pm, options);
    pm.addPass(createEmptyArgumentsPass());
    pm.addPass(createFlattenGlobalsPass());
    pm.addPass(createLowerCopiesPass());
    // Dynamic dims (a sequence length) in static windows the kernels take.
    if (options.vectorBits >= 64) {
      StripDynamicDimsPassOptions strip;
      strip.parallel = options.parallelLoops;
      pm.addPass(createStripDynamicDimsPass(strip));
    }
    VectorizeInt8MatmulPassOptions int8;
    int8.kind = options.int8DotProduct;
    int8.parallel = options.parallelLoops;
    pm.addPass(createVectorizeInt8MatmulPass(int8));
    VectorizeContractionsPassOptions kernels;
    kernels.vectorBits = options.vectorBits;
    kernels.vectorRegisters = options.vectorRegisters;
    kernels.prefetchDistance = options.prefetchDistance;
    kernels.parallel = options.parallelLoops;
    pm.addPass(createVectorizeContractionsPass(kernels));
    VectorizeElementwisePassOptions elementwise;
    elementwise.vectorBits = options.vectorBits;
    elementwise.parallel = options.parallelLoops;
    pm.addNestedPass<func::FuncOp>(createVectorizeElementwisePass(elementwise));
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
    if (options.parallelLoops) {
      OutlineParallelLoopsPassOptions outline;
      outline.indexBitwidth = options.indexBitwidth;
      pm.addPass(createOutlineParallelLoopsPass(outline));
    }
    ExpandMathPassOptions math;
    math.nativeRounding = options.nativeRounding;
    pm.addPass(createExpandMathPass(math));
    pm.addPass(createExpandDynamicGroupsPass());
    addLowerToLLVM(pm, options);
    return;
  }
  }
}

void addGpuPasses(OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(createEmptyArgumentsPass());
  pm.addPass(createFlattenGlobalsPass());
  // The host's memcpy cannot reach device memory: every copy a kernel.
  LowerCopiesPassOptions copies;
  copies.all = true;
  pm.addPass(createLowerCopiesPass(copies));
  GpuMapLoopsPassOptions mapping;
  mapping.tf32 = options.gpuTf32;
  pm.addPass(createGpuMapLoopsPass(mapping));
  // Parallel loops left inside a kernel run in its thread.
  pm.addPass(createParallelForToNestedForsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createGpuMergeModulesPass());
  // No libdevice: transcendentals as arithmetic, rounding as the NVPTX
  // instructions (cvt.rni and friends).
  ExpandMathPassOptions math;
  math.nativeRounding = true;
  pm.addPass(createExpandMathPass(math));
  pm.addPass(arith::createArithExpandOpsPass());
  // Dynamic dims: expand_shapes with two dynamic sizes in a group, which
  // expand-strided-metadata cannot take, as reinterpret_casts.
  pm.addPass(createExpandDynamicGroupsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
}

void addGpuHostPasses(OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(createGpuLaunchToRuntimePass());
  addLowerToLLVM(pm, options);
  pm.addPass(createGpuDeviceWeightsPass());
}

void addGpuDevicePasses(OpPassManager &pm) {
  pm.addNestedPass<gpu::GPUModuleOp>(createGpuToNvvmPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
}

void addDynamicBatchCheck(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(onnx::createOnnxDynamicBatchPass());
  pm.addNestedPass<func::FuncOp>(onnx::createOnnxDimSymbolsPass());
}

void addPipelineUpTo(OpPassManager &pm, Phase last, const PipelineOptions &options) {
  for (Phase p : {Phase::Import, Phase::Onnx, Phase::Lower, Phase::Bufferize,
                  Phase::LLVM}) {
    addPhasePasses(pm, p, options);
    if (p == last)
      return;
  }
}

void registerKilnDialects(DialectRegistry &registry) {
  registry.insert<onnx::OnnxDialect, func::FuncDialect, arith::ArithDialect,
                  linalg::LinalgDialect, tensor::TensorDialect,
                  math::MathDialect, scf::SCFDialect, memref::MemRefDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  vector::VectorDialect, LLVM::LLVMDialect, gpu::GPUDialect,
                  NVVM::NVVMDialect,
                  // Sizes of padded tensors after bufferization: what a
                  // phase's dump holds, for kiln-opt to read back.
                  affine::AffineDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void registerKilnPasses() {
  onnx::registerOnnxPasses();
  quantization::registerQuantizationPasses();
  registerOnnxToLinalgPasses();
  registerMemoryPasses();
  registerCodegenCPUPasses();
  registerCodegenGPUPasses();
  auto phase = [](const char *flag, const char *what, Phase p) {
    PassPipelineRegistration<>(flag, what,
                               [p](OpPassManager &pm) { addPhasePasses(pm, p); });
  };
  phase("kiln-phase-onnx",
        "kiln's onnx phase: shape inference and folding on the onnx dialect",
        Phase::Onnx);
  phase("kiln-phase-linalg", "kiln's lower phase: onnx to linalg on tensors",
        Phase::Lower);
  phase("kiln-phase-bufferize",
        "kiln's bufferize phase: one-shot bufferization and the memory plan",
        Phase::Bufferize);
  phase("kiln-phase-llvm", "kiln's llvm phase: loops, math expansion, LLVM dialect",
        Phase::LLVM);
}

} // namespace kiln
