//===- Passes.td - GPU code generation passes --------------*- tablegen -*-===//

#ifndef KILN_PASSES_CODEGEN_GPU_PASSES_TD
#define KILN_PASSES_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def GpuMapLoopsPass : Pass<"kiln-gpu-map-loops", "mlir::ModuleOp"> {
  let summary = "Run the program's loop nests as GPU launches";
  let description = [{
    For `--target=cuda`, on buffers. First each contraction at the top
    level becomes a tiled GEMM launch (`tile-contractions`,
    Contraction.cpp), with the op writing its output's initial values just
    before and an elementwise op on its output just after folded into its
    store (`fuse-epilogues`). Then every other linalg op becomes a loop
    nest, its parallel dims first (a generic's iterators interchanged so
    that they are), as one scf.parallel with the reduction loops inside
    (or, for a reduction at the top level that gains from it, as a launch
    in which groups of threads share each output's reduction:
    `block-reductions`, Reduction.cpp);
    a reduction carries its output elements in registers (loaded once,
    iter_args through the reduction loops, stored once), and with
    `coarsen` = C > 1 each thread computes C outputs along a parallel dim
    that an input walked by neighbouring threads does not use (a
    convolution's output channels, a matmul's rows), that input's element
    loaded once for the C of them.
    Then each function's top-level
    `scf.parallel` without reductions becomes a `gpu.launch` with one
    thread per iteration: its dims collapsed into one count N, blocks of
    `block-size` threads (fewer when N is a smaller constant), ceil(N /
    block size) blocks, each thread delinearising its index (the last dim
    fastest, so neighbouring threads touch neighbouring elements) and
    running the body when the index is below N; loops nested in the body
    stay sequential loops in the thread. Every other top-level op that
    reads or writes memory, or holds a region (a loop over reduction dims
    only, control flow with little work), runs in a launch of one thread,
    consecutive ones together, with the host ops that read their results
    (a 0-d op's body: load, arithmetic, store); the launch goes after the
    last of them, the host ops between (sizes, views) staying outside.
    A load whose value the host needs (a size, a loop bound, a condition)
    stays on the host (kiln-gpu-launch-to-runtime makes it a read of
    device memory). An scf.for, scf.if or scf.while whose regions hold
    parallel work (a linalg op or parallel loop of at least 32
    iterations), or an scf.if that yields a buffer, runs on the host, its
    blocks mapped as the function's (so "top level" above means any such
    block), unless a value its blocks need on the host would be computed
    in a launch of one thread: then it runs in one thread as a whole.
    What stays on the host only computes sizes, views, conditions and
    loop bounds. An allocation at the top level, or a host op that needs
    a tensor's values (a size or an index known only at run time), is an
    error.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block">,
    Option<"tileContractions", "tile-contractions", "bool", "true",
           "Contractions (matmuls, convolutions) as tiled GEMM kernels staged "
           "through shared memory (Contraction.cpp)">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", "true",
           "Fold the init before a tiled contraction (fill, bias broadcast) and "
           "the elementwise op after it (activation, residual add) into its "
           "kernel's store, and the fill before a block reduction into its "
           "kernel">,
    Option<"tf32", "tf32", "bool", "false",
           "The tiled contractions' multiply-adds on the tensor cores: inputs "
           "rounded to TF32 (10-bit mantissa), f32 sums (--gpu-precision=tf32); "
           "without it, only those marked kiln.exact_in_tf32">,
    Option<"asyncCopies", "async-copies", "bool", "true",
           "The tiled contractions stage their operands with cp.async into "
           "two buffers taking turns (sm_80 and up); false: through "
           "registers into one">,
    Option<"blockReductions", "block-reductions", "bool", "true",
           "Reductions with few outputs or read along their innermost "
           "reduction dim as groups of threads an output, combined in shared "
           "memory (Reduction.cpp)">,
    Option<"coarsen", "coarsen", "int64_t", "4",
           "Outputs each thread of a reduction computes (along a parallel dim "
           "whose outputs share an input's elements; 1: one output a thread)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect", "::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect"];
}

def GpuMarkExactTf32Pass : Pass<"kiln-gpu-mark-exact-tf32", "mlir::func::FuncOp"> {
  let summary = "Mark contractions whose operands are TF32 values (float16/bfloat16 models)";
  let description = [{
    On tensors. A linalg op with two inputs and reduction loops whose
    inputs hold only f32 values with their low 13 mantissa bits zero
    (extended from float16 or bfloat16, or constants that are) gets
    `kiln.exact_in_tf32`: on the tensor cores with TF32 inputs its products
    are exact, and kiln-gpu-map-loops tiles it with mma.sync at the default
    precision (ExactTf32.cpp says which values it follows).
  }];
}

def GpuMergeModulesPass : Pass<"kiln-gpu-merge-modules", "mlir::ModuleOp"> {
  let summary = "Put every outlined kernel into one gpu.module";
  let description = [{
    gpu-kernel-outlining makes one gpu.module per launch. This pass moves
    every kernel into one module, `@kiln_kernels`, and points the
    launches at it, so that the device code is one PTX module: one load
    at run time, one file for ptxas.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GpuToNvvmPass : Pass<"kiln-gpu-to-nvvm", "mlir::gpu::GPUModuleOp"> {
  let summary = "Lower a gpu.module's kernels to the LLVM and NVVM dialects";
  let description = [{
    The GPU dialect's patterns (kernel functions, thread and block ids),
    the NVGPU dialect's (the tiled contractions' cp.async copies) and the
    arith, control flow, memref and math lowerings to LLVM, in one
    conversion. Math ops become LLVM intrinsics, which the NVPTX back end
    emits as instructions (kiln-expand-math has turned the transcendental
    ones into arithmetic before), so the device code needs no libdevice
    and no CUDA toolkit at compile time.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"];
}

def GpuLaunchToRuntimePass : Pass<"kiln-gpu-launch-to-runtime", "mlir::ModuleOp"> {
  let summary = "The host's kernel launches as calls into the runtime's CUDA loader";
  let description = [{
    For a `--target=cuda` library, once the device code has been written
    out as PTX. The kernels' names, in the order of the gpu.module, go into
    the module's `kiln.gpu_kernels` attribute (the code generator embeds
    them with the PTX) and the gpu.module goes. Each `gpu.launch_func`
    becomes a call `kiln_cuda_launch(program, kernel index, grid x y z,
    block x y z, params, count)`: the kernel's parameters as the NVVM
    lowering expanded them (a memref as its allocated and aligned
    pointers, offset, sizes and strides; scalars), each widened to 8 bytes
    into a stack buffer. `kiln_cuda_program()`, which returns the model's
    kiln_cuda_program, is defined by the code generator.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def GpuDeviceWeightsPass : Pass<"kiln-gpu-device-weights", "mlir::ModuleOp"> {
  let summary = "The host passes the kernels device copies of the weights";
  let description = [{
    After the host code is in the LLVM dialect: every address of a constant
    global (a weight) taken in a function becomes
    `kiln_cuda_weights(kiln_cuda_program(), address, bytes)`, the device
    copy the runtime uploads at its first use. A mutable global is an
    error (nothing on the device would see the host's writes).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // KILN_PASSES_CODEGEN_GPU_PASSES_TD
