//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//

#ifndef KILN_PASSES_CODEGEN_CPU_PASSES_TD
#define KILN_PASSES_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def ExpandMathPass : Pass<"kiln-expand-math", "mlir::ModuleOp"> {
  let summary = "Expand transcendental math ops into polynomials (no libm)";
  let description = [{
    Generated code must not call libm. f64 and f16 transcendentals are
    computed in f32; then MLIR's math expansions and polynomial
    approximations turn exp, log, log1p, tanh, erf, sin, cos, ... into
    arithmetic. What remains (sqrt, fabs, fma...) maps to LLVM
    intrinsics with instructions on the CPU targets kiln supports. floor,
    ceil, trunc, round and roundeven become integer conversions and
    selects, unless `native-rounding` says the target rounds in one
    instruction (x86 with SSE4.1: roundps/vrndscaleps; AArch64: frint*).
  }];
  let options = [
    Option<"nativeRounding", "native-rounding", "bool", "false",
           "Leave floor/ceil/trunc/roundeven to LLVM (the target has rounding "
           "instructions, scalar and vector)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def LowerCopiesPass : Pass<"kiln-lower-copies", "mlir::ModuleOp"> {
  let summary = "Turn non-contiguous memref.copy into loops; pad borders only";
  let description = [{
    `memref.copy` between strided views would lower to a call into MLIR's
    C runner library; generated code has no such library. Copies where
    either side is not identity-laid-out become an identity
    `linalg.generic` (plain loops, which `kiln-vectorize-elementwise` can
    vectorise). Contiguous copies stay and become `memcpy` intrinsics.
    A bufferized pad, a constant fill of a whole buffer followed by a copy
    into a window of it at static offsets (or by the op that writes all of
    the window), fills only the slabs around the window; their sizes may
    be dynamic.
    With `all`, every copy becomes a generic (the GPU, where the host's
    memcpy cannot reach device memory).
  }];
  let options = [
    Option<"all", "all", "bool", "false",
           "Every copy, contiguous or not, becomes a generic">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FlattenGlobalsPass : Pass<"kiln-flatten-globals", "mlir::ModuleOp"> {
  let summary = "Make constant memref globals one-dimensional";
  let description = [{
    LLVM IR turns an N-D constant into nested arrays, one constant per
    innermost row: millions of small uniqued constants for a large weight
    tensor (gigabytes of compiler memory). Rewriting every `memref.global`
    to a 1-D type (the same dense or resource data) and every
    `memref.get_global` to the 1-D global plus a `memref.expand_shape`
    keeps each weight tensor one flat constant.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def EmptyArgumentsPass : Pass<"kiln-empty-arguments", "mlir::ModuleOp"> {
  let summary = "Pass graph inputs/outputs without elements as memref<0xT>";
  let description = [{
    The bare-pointer calling convention refuses memrefs with a zero dim
    after the first. Such an entry argument becomes `memref<0xT>` (nothing
    reads it) and its uses get a zero-sized `memref.alloca` of the
    original type: no element of it can be read or written.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ExpandDynamicGroupsPass : Pass<"kiln-expand-dynamic-groups", "mlir::ModuleOp"> {
  let summary = "Reinterpret expand_shapes that split one dim into two dynamic ones";
  let description = [{
    MLIR 22's `expand-strided-metadata` crashes on a `memref.expand_shape`
    with two dynamic sizes in one group (a 1x1 conv's flat output of
    H' * W' pixels back to [N, M, H', W']). Where the source is laid out
    contiguously (identity layout), such an expand_shape becomes a
    `memref.reinterpret_cast` with the output shape's sizes and their
    suffix products as strides; others are left alone.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def StripDynamicDimsPass : Pass<"kiln-strip-dynamic-dims", "mlir::ModuleOp"> {
  let summary = "Strip-mine generics with dynamic ranges into static pieces";
  let description = [{
    A `linalg.generic` on buffers whose loop ranges are dynamic (a model's
    dynamic dim) becomes, per dynamic loop dim of size S, a loop over the
    full windows of `chunk` along it (for the outermost such dim of a
    contraction that reuses an operand across it, then one window of
    `chunk` / 2 and one of `chunk` / 4; a conv's, `chunk` / 2, / 4 and / 8)
    and a loop over the rest one at a time, each
    running a copy of the generic on subviews with static
    ranges, which the vector kernels then take. Windows of a parallel dim
    are disjoint; those of a reduction dim update the output in order.
    A contraction's constant fill just before and elementwise epilogue just
    after run window by window with it (the kernels fold them in); weights
    beyond L2 put blocks of the output channels or columns around all the
    pieces. A flattened 1x1 conv whose epilogue writes the window of a
    padded buffer runs, for images at least 16 columns wide (checked at
    run time), as a loop over the image's rows, each one kernel writing
    that row of the pad, and fills the pad's border itself. So does a
    stride-1 conv over the row-stacked grid whose epilogue compacts its
    output (the ReLU6 after a depthwise conv), each row's kernel storing
    the epilogue's row. Dims the kernels take whole are not cut: a
    contraction's dynamic reduction or columns (a stride-1 conv's grid
    read at n + kw too; a depthwise one then in blocks of channels with
    threads), an elementwise op's dynamic innermost dim, a pool's output
    row. Plain copies into planned buffers nothing reads afterwards are
    erased first. Generics whose
    dynamic dims are indexed other than by one loop dim exactly stay as
    they are.
  }];
  let options = [
    Option<"chunk", "chunk", "int64_t", "16",
           "Width of the full windows (less than 2: do nothing)">,
    Option<"parallel", "parallel", "bool", "false",
           "Mark the full-window loop of a parallel dynamic dim kiln.parallel "
           "(and kiln.parallel_nests where one window is worth splitting alone)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def VectorizeContractionsPass
    : Pass<"kiln-vectorize-contractions", "mlir::ModuleOp"> {
  let summary = "Register-blocked vector kernels for f32 matmul/conv generics";
  let description = [{
    Every `linalg.generic` on buffers that multiplies two f32 inputs and
    accumulates into its output (MatMul, Gemm, Conv, batched and grouped
    forms) becomes loops around a register-blocked outer-product kernel:
    an MR x (NV vectors) tile of the output is held in vector registers
    across all reduction loops, each step loads NV vectors of the operand
    that is contiguous along the innermost output dim, broadcasts MR
    scalars of the other operand and multiply-adds (contracted to FMA).
    Remainders use smaller static tiles and masked loads/stores. The
    summation order of every output element is unchanged. Constant weights
    read as the row operand (a matmul's) are packed at compile time into
    one contiguous, zero-padded panel per tile of columns, in the kernel's
    reading order (new private globals; unused originals removed; a view
    of such weights at an offset stepping by whole panels, a block of
    columns, reads the whole weight's panels from its own);
    constant column operands (a conv's weights) into one panel per tile of
    rows, so that a step's broadcasts are adjacent. When
    the output rows are short or strided (a conv's 7x7 map), the vectors
    run along an output dim only constant weights have instead (the output
    channels): the weights are packed along it and the output tile is
    gathered and scattered once per tile. Generics
    that do not fit (no contiguous operand along the innermost output dim, dynamic
    ranges, other element types) stay for the loop lowering.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "0",
           "Width of the target's vector registers in bits (0: do nothing)">,
    Option<"vectorRegisters", "vector-registers", "unsigned", "16",
           "Number of vector registers">,
    Option<"parallel", "parallel", "bool", "false",
           "Mark one loop of each large enough kernel kiln.parallel">,
    Option<"prefetchDistance", "prefetch-distance", "unsigned", "0",
           "Reduction steps ahead to prefetch operands that jump 1 KiB or "
           "more per step (0: no prefetches)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def VectorizeInt8MatmulPass
    : Pass<"kiln-vectorize-int8-matmul", "mlir::ModuleOp"> {
  let summary = "int8 dot-product kernels for integer matmuls by constant weights";
  let description = [{
    A `linalg.generic` on buffers computing
    out[..., m, n] += ext(A[..., m, k]) * extsi(B[k, n]) in i32, with A
    uint8 or int8 of static shape and B a constant int8 global (the form
    the lowering of MatMulInteger and QLinearMatMul gives a constant B),
    becomes a register-blocked kernel on the target's integer dot product
    (`kind`): AVX-512 VNNI's `vpdpbusd` (four u8 x s8 products per i32
    lane), without VNNI `vpmaddwd` on words (two per lane) at 512 or
    256 bits, or AArch64's `sdot` (four s8 x s8 products per lane). B is packed at compile time into panels of G consecutive k
    per i32 lane (new private globals); each step broadcasts G values of a
    row of A and adds G products into every lane of MR x NV accumulators,
    without saturation (exact). For vpdpbusd, signed A is read as A + 128,
    for sdot unsigned A as A - 128, corrected from a packed constant. The loop over tiles of columns
    is marked kiln.parallel when large enough. The integer convs' form,
    out[..., m, p] += ext(X[..., k, p]) * extsi(W[m, k]) with W a constant
    (weights on the left, the output NCHW), becomes a kernel with the
    lanes along p: per tile of positions, chunks of K are packed at run
    time (G rows interleaved) into a per-thread stack buffer, and each
    row's G weights are broadcast as one i32. Both start from zero where a
    zero fill of the output came just before (the fill goes). Other
    generics stay as they are.
  }];
  let options = [
    Option<"kind", "kind", "std::string", "\"\"",
           "The dot product: vnni512, pmaddwd512 (AVX-512BW), pmaddwd256 (AVX2), "
           "sdot128 (AArch64 dotprod), or empty (do nothing)">,
    Option<"parallel", "parallel", "bool", "false",
           "Mark the loop over tiles of columns kiln.parallel when large enough">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def FuseElementwisePass : Pass<"kiln-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg ops, but not into contractions";
  let description = [{
    Upstream's elementwise fusion (with its reshape propagation and
    constant folding), except that no producer is fused into a
    multiply-accumulate contraction (MatMul, Gemm, Conv, and the int8
    form out + ext(x) * ext(y)): those must keep
    the two-input form the vector kernels of
    `kiln-vectorize-contractions` match. The producer stays a separate,
    vectorisable elementwise loop; fusing it would recompute it for every
    element it meets in the reduction.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::tensor::TensorDialect"];
}

def VectorizeElementwisePass
    : Pass<"kiln-vectorize-elementwise", "mlir::func::FuncOp"> {
  let summary = "Vectorise the innermost loop of f32 generics on buffers";
  let description = [{
    A `linalg.generic` on f32 buffers whose innermost loop dim is parallel,
    and along which every operand is either contiguous (last index) or
    constant, becomes loops around one vector step: contiguous operands are
    vector loads and stores, the others scalar loads broadcast, and the
    body's arith/math ops are rebuilt on vectors. The outer loops keep the
    generic's order, so each output element is updated in the same order as
    by the scalar loops. A static tail is one masked step. Scalars are
    loaded once per row and what is computed from them alone is hoisted.
    An innermost reduction dim of one output updated as
    out = combine(out, f(inputs)) (add, mul, min, max) is vectorised along
    it: per-lane partial results, a reassociated vector.reduction, one
    combine with the output. A generic with reductions whose output's last
    index is a parallel dim the inputs have only in their last index,
    linearly (pooling windows), is vectorised along that dim with the
    reduction loops inside each step (strided inputs shuffled from a wide
    load or gathered; that dim may be dynamic, its last vector masked at
    run time). Runs after
    `kiln-vectorize-contractions`, on what it left.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "0",
           "Width of the target's vector registers in bits (0: do nothing)">,
    Option<"parallel", "parallel", "bool", "false",
           "Mark the outermost parallel loop of large enough generics kiln.parallel">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def OutlineParallelLoopsPass
    : Pass<"kiln-outline-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Run loops marked kiln.parallel through kiln_parallel_for";
  let description = [{
    Each `scf.for` marked `kiln.parallel` (a constant step, no results,
    independent iterations) is outlined into a private function
    `fn(ctx, begin, end)` running iterations [begin, end), and replaced by
    `kiln_parallel_for(trip_count, fn, ctx)`, the runtime's hook. `ctx` is
    a stack struct in the caller's entry block holding what the body uses
    from outside: memrefs as LLVM descriptors, index values as i64, other
    scalars as they are; constants and constant globals are recreated in
    `fn`. A loop that captures anything else stays serial. Marked loops
    may nest (inside one marked `kiln.parallel_nests`): inner loops are
    outlined first, and the context of an inner call is recreated in the
    outer `fn`, one per thread. A loop over a dynamic range may carry
    `kiln.min_trips` (an i64): with fewer trips at run time it calls
    `fn(ctx, 0, trips)` on the calling thread instead of the hook.
  }];
  let options = [
    Option<"indexBitwidth", "index-bitwidth", "unsigned", "64",
           "Index width of the later LLVM lowering (memref descriptors)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // KILN_PASSES_CODEGEN_CPU_PASSES_TD
