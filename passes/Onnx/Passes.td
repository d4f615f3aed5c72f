//===- Passes.td - Passes on the onnx dialect --------------*- tablegen -*-===//

#ifndef KILN_PASSES_ONNX_PASSES_TD
#define KILN_PASSES_ONNX_PASSES_TD

include "mlir/Pass/PassBase.td"

def OnnxShapeInferencePass : Pass<"onnx-shape-inference", "mlir::func::FuncOp"> {
  let summary = "Infer result shapes and fold constant shape computations";
  let description = [{
    Refines the result types of every op that implements
    `ShapeInferenceOpInterface` from its operands' types and constant values,
    and folds what becomes constant, until nothing changes. This is what turns
    PyTorch's `Shape -> Gather -> Unsqueeze -> Concat -> Reshape` chains,
    `ConstantOfShape`, `Range` and `Expand` into static shapes. The function's
    result types are updated to match what it returns.
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

def OnnxLowerSequencesPass : Pass<"onnx-lower-sequences", "mlir::func::FuncOp"> {
  let summary = "Rewrite graph-internal sequences of one static element shape as stacked tensors";
  let description = [{
    A sequence built and consumed inside a function's top-level block, with
    a length known at compile time and elements of one static shape S,
    becomes a tensor [L, S...]: SequenceConstruct/Empty/Insert/Erase/At/
    Length, SplitToSequence (equal chunks; data-dependent chunks give the
    length only) and ConcatFromSequence become Reshape, Concat, Transpose
    and Gather (positions are run-time values, wrapped and clamped like
    Gather's indices). Other sequences are left for the lowering to report.
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

def OnnxFoldChannelScalePass : Pass<"onnx-fold-channel-scale", "mlir::func::FuncOp"> {
  let summary = "Move a per-channel scale of a convolution's input onto its weights";
  let description = [{
    `Conv(Mul(x, s), W, B)` with `s` of shape [1, C, 1, ...] (one factor
    per input channel, as a squeeze-and-excitation block computes it),
    `group = 1` and the product used by the conv alone becomes
    `Conv(x, Mul(W, s), B)`: y[o] = sum_c W[o, c] s[c] x[c] either way, and
    scaling the [O, C, k...] weights costs far less than a pass over the
    [C, H, W] activation. Not applied where the batch is dynamic (the
    weights would then depend on the item). The products are rounded in
    another order, as in any library that fuses the scale.
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

def OnnxDynamicBatchPass : Pass<"kiln-dynamic-batch", "mlir::func::FuncOp"> {
  let summary = "Check that a dynamic batch can run one item at a time";
  let description = [{
    The importer compiles a model whose inputs have a symbolic leading dim
    for one batch item (that dim pinned to 1, the inputs marked
    `kiln.dynamic_dim`); the entry point then runs the item-sized code once
    per item. This pass follows the batch dim through @main (also where it
    shares a dim with others, as torch's attention export has it: an axis
    and an inner size per value; Reshapes use `kiln.batch_growth`) and fails, with
    a reason on the op, where items would be mixed (a reduction, concat,
    slice or gather over the batch axis, training-mode BatchNorm, MaxPool
    indices, a change of the batch dim's size, an op it does not know), and
    reports what kiln-dynamic-batch-values recorded. Graph outputs that
    carry the batch get `kiln.dynamic_dim` and must carry it as their
    leading dim; outputs declared with the batch dim must carry it. A
    function without marked inputs is left alone.
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

def OnnxDimSymbolsPass : Pass<"kiln-dim-symbols", "mlir::func::FuncOp"> {
  let summary = "Name each dynamic dim of @main's values after the input dim it is";
  let description = [{
    The compiled code takes one value per symbolic input dim (besides a
    dynamic batch) and sizes every `?` with one of them. @main is cloned
    twice with the dims at distinct sizes and each op's shape function run
    once in order: a `?` is the dim whose size it has in both clones, or
    unknown (-2: twice a dim, a sum of dims). A shape function that fails at distinct sizes is an
    error on its op (the model needs the dims equal). Records per op
    `kiln.dim_symbols` (per result, each dim's symbol index, -1 static),
    on @main `kiln.symbol_names`, per result `kiln.dim_names` and the same
    as `kiln.result_dim_names`. Other functions are left alone.
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

def OnnxDynamicBatchValuesPass : Pass<"kiln-dynamic-batch-values", "mlir::func::FuncOp"> {
  let summary = "Before shape folding: find uses of the batch size as a value";
  let description = [{
    Runs first in the onnx phase, while Shape/Size ops are still there: for
    a model with a dynamic batch (inputs marked `kiln.dynamic_dim`), the
    batch size (the elements of Shape/Size of a batched tensor that a
    probe at batch 1 and 2 does not show static and equal, and shape
    arithmetic on them, followed element by element) may only be the
    shape operand of Reshape, Expand, Tile or ConstantOfShape; a Reshape of
    batched data to a constant target such as [1, -1] would merge the
    items. Reshapes of batched data get `kiln.batch_growth`, the result
    dims that double at batch 2, for kiln-dynamic-batch. The first problem
    is recorded on @main as `kiln.dynamic_batch_error` for
    kiln-dynamic-batch to report; this pass never fails.
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

#endif // KILN_PASSES_ONNX_PASSES_TD
