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
    rewrites constant `tensor.pad`s (static or dynamic sizes, static
    padding) as a fill and an `insert_slice`, gives
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

def ViewRowStacksPass : Pass<"kiln-view-row-stacks", "mlir::ModuleOp"> {
  let summary = "Read copies of overlapping rows through one view of them";
  let description = [{
    After bufferization: a `memref.alloc` [D..., R, L] whose rows are each
    a copy of a window of length L of one contiguous buffer [D..., M],
    row r the window at r * P (a stride-1 conv's stacked input rows over
    dynamic dims), is replaced by a `memref.reinterpret_cast` of that
    buffer with strides [..., P, 1], whose rows overlap; the copies go.
    Only when nothing from the first copy to the last read writes the
    buffer, and the stack is otherwise only read (through reshapes,
    subviews, linalg inputs, copy sources), which are recreated for the
    view's layout.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def SymbolicArgumentsPass : Pass<"kiln-symbolic-arguments", "mlir::ModuleOp"> {
  let summary = "Pass the model's dynamic dim to the entry function by value";
  let description = [{
    The bare-pointer calling convention of the entry function needs static
    memref arguments. In a public function with arguments whose types have
    `?` dims (the model's dynamic dims besides the batch), each such
    argument becomes `memref<1xT>` (its data pointer), reinterpreted in
    the body as its original type with every `?` set to one of the new
    trailing `index` arguments, one per symbolic dim (@main's
    `kiln.symbol_names`, or one), marked `kiln.symbolic_dim` with its
    name: the dim's value. With several, each input's `?` is named by its
    `kiln.dim_names` and each out-param's by @main's
    `kiln.result_dim_names` (kiln-dim-symbols). Run before
    `kiln-plan-memory`, which sizes the workspace from them.
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

    Buffers whose sizes depend on the `kiln.symbolic_dim` arguments (see
    `kiln-symbolic-arguments`) are placed at offsets computed at run time:
    the plan is made once with a reference value of the dims, and each
    buffer then sits right above the ends of the interfering buffers that
    the reference plan put below it, for any values. The same computation
    becomes `@<function>_workspace_size(index...) -> index` (one argument
    per dim, in order), and `kiln.workspace_size` is -1. With
    `symbolic-max` (a value per dim), the plan is made for those values
    instead and its offsets are constants (sizes grow with each dim, so
    all smaller values fit in place); the function gets
    `kiln.symbolic_max`. Either way the function also gets
    `kiln.symbolic_limit`, the largest value that every dim may take at
    once without a buffer size or offset overflowing the target's index
    type (the entry point refuses larger ones).

    With `epilogues`, a buffer that an all-parallel generic writes from a
    contraction's result (an activation after a conv, possibly into the
    window of a constant-filled padded buffer) is live from that
    contraction on: the kernel that folds the generic in stores to it
    while the contraction's operands are still being read.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64",
           "Byte alignment of every buffer's offset in the workspace">,
    ListOption<"symbolicMax", "symbolic-max", "int64_t",
               "The largest value of each kiln.symbolic_dim argument, in "
               "order (none: a plan computed at run time). With them the "
               "plan is static, made for those values: buffers take no more "
               "room for smaller ones">,
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
