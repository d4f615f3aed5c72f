//===- Passes.td - Bufferization and memory planning -------*- tablegen -*-===//

#ifndef KILN_PASSES_MEMORY_PASSES_TD
#define KILN_PASSES_MEMORY_PASSES_TD

include "mlir/Pass/PassBase.td"

def MarkReadonlyInputsPass : Pass<"kiln-mark-readonly-inputs", "mlir::ModuleOp"> {
  let summary = "Mark the model's input arguments as not writable";
  let description = [{
    The generated entry point takes its inputs as `const void *`: one-shot
    bufferization must never write into them. This sets
    `bufferization.writable = false` on every tensor argument of every
    public function, so that in-place updates of an input copy it first.
  }];
}

def PrepareDestinationsPass
    : Pass<"kiln-prepare-destinations", "mlir::ModuleOp"> {
  let summary = "Arrange tensor destinations so producers write in place";
  let description = [{
    Before empty-tensor elimination: folds reshapes of `tensor.empty`,
    rewrites constant `tensor.pad`s as a fill and an `insert_slice`, gives
    every use of a shared empty or constant initialiser its own copy, and
    moves `insert_slice` destinations before the empty their source's
    chain starts from. Producers of concat operands and of padded conv
    inputs then write into the final buffer instead of a temporary that
    is copied.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def ForwardCopiesPass : Pass<"kiln-forward-copies", "mlir::ModuleOp"> {
  let summary = "Let a buffer's only writer write where it is copied to";
  let description = [{
    After bufferization: a `memref.alloc` written by one linalg op (not
    read by it) and otherwise only copied into a window of another buffer
    is removed, and the op writes into the window. Nothing between the op
    and the copy may use the window's memory (other ops may use disjoint
    static windows of the same buffer). One-shot bufferization leaves such
    copies where one op writes several slices of one tensor.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def SymbolicArgumentsPass : Pass<"kiln-symbolic-arguments", "mlir::ModuleOp"> {
  let summary = "Pass the model's dynamic dim to the entry function by value";
  let description = [{
    The bare-pointer calling convention of the entry function needs static
    memref arguments. In a public function with arguments whose types have
    `?` dims (the model's one dynamic dim besides the batch), each such
    argument becomes `memref<1xT>` (its data pointer), reinterpreted in
    the body as its original type with every `?` set to a new trailing
    `index` argument marked `kiln.symbolic_dim`: the dim's value. Run
    before `kiln-plan-memory`, which sizes the workspace from it.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def PlanMemoryPass : Pass<"kiln-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place every intermediate buffer at an offset in one workspace";
  let description = [{
    After bufferization and `buffer-results-to-out-params`, every
    `memref.alloc` left in a public function is an intermediate. Each gets a
    live range (from the first to the last op that uses it or a view of it)
    and an offset in a single workspace; buffers whose ranges do not overlap
    share bytes. The allocs become `memref.view`s of a new trailing
    `memref<N x i8>` argument, and the function gets the attributes
    `kiln.workspace_size` and `kiln.workspace_alignment`. No heap
    allocation remains.

    Buffers whose sizes depend on the `kiln.symbolic_dim` argument (see
    `kiln-symbolic-arguments`) are placed at offsets computed at run time:
    the plan is made once with a reference value of the dim, and each
    buffer then sits right above the ends of the interfering buffers that
    the reference plan put below it, for any value. The same computation
    becomes `@<function>_workspace_size(index) -> index`, and
    `kiln.workspace_size` is -1. With `symbolic-max`, the plan is made
    for that value instead and its offsets are constants (sizes grow with
    the dim, so every smaller value fits in place); the function gets
    `kiln.symbolic_max`. Either way the function also gets
    `kiln.symbolic_limit`, the largest value whose buffer sizes and
    offsets cannot overflow the target's index type (the entry point
    refuses larger ones).

    With `epilogues`, a buffer that an all-parallel generic writes from a
    contraction's result (an activation after a conv, possibly into the
    window of a constant-filled padded buffer) is live from that
    contraction on: the kernel that folds the generic in stores to it
    while the contraction's operands are still being read.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64",
           "Byte alignment of every buffer's offset in the workspace">,
    Option<"symbolicMax", "symbolic-max", "int64_t", "0",
           "The largest value of the kiln.symbolic_dim argument (0: none). "
           "With it the plan is static, made for that value: buffers take "
           "no more room for smaller values">,
    Option<"indexBitwidth", "index-bitwidth", "unsigned", "64",
           "The target's index width: a dynamic plan gets the largest value "
           "of the dim whose workspace sizes fit it (kiln.symbolic_limit)">,
    Option<"epilogues", "epilogues", "bool", "false",
           "Keep the output of a contraction's elementwise epilogue apart "
           "from the contraction's operands, so that a CPU kernel can "
           "store the epilogue's result itself">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // KILN_PASSES_MEMORY_PASSES_TD
