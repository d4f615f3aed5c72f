//===- Passes.td - INT8 quantisation passes ----------------*- tablegen -*-===//

#ifndef KILN_PASSES_QUANTIZATION_PASSES_TD
#define KILN_PASSES_QUANTIZATION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseQdqPass : Pass<"kiln-fuse-qdq", "mlir::func::FuncOp"> {
  let summary = "QDQ graphs as integer ops: pairs moved through exact ops, MatMul/Conv/Gemm fused";
  let description = [{
    MatMul(DequantizeLinear(xq, xs, xzp), DequantizeLinear(Wq, ws, wzp)),
    with Wq a constant 2-D int8/uint8 weight (ws, wzp per tensor or per
    output column, axis 1) and xs, xzp per tensor, becomes
    QLinearMatMul(xq, xs, xzp, Wq, ws, wzp, ys, yzp) when a per-tensor
    QuantizeLinear alone reads it (replacing that too), else
    Cast(MatMulInteger(xq, Wq, xzp, wzp)) * (xs * ws). The integer sum is
    exact where the float one rounded: a requantised result may differ by
    one step at a tie, as in runtimes that fuse the same way.
    Conv(DequantizeLinear(xq), DequantizeLinear(constant Wq), B) the same
    way (ws, wzp per tensor or per output channel, axis 0): QLinearConv
    when a per-tensor QuantizeLinear alone reads it and B is none or a
    DequantizeLinear of a constant int32 tensor (zero point 0) whose scale
    is xs * ws; else Cast(ConvInteger(xq, Wq, xzp, wzp)) * (xs * ws) + B,
    per-channel factors reshaped to [M, 1...].
    DequantizeLinears left without users go. Before that, the pairs
    move through the ops that give the same result on the 8-bit values
    (QdqPropagation.cpp): DequantizeLinear down and QuantizeLinear up
    through Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Identity,
    Slice, Expand, Tile, Gather, DepthToSpace, SpaceToDepth, Concat and
    MaxPool; Relu and Clip become integer Max and Clip at the quantised
    bounds; QuantizeLinear(DequantizeLinear(x)) at equal parameters is x.
    A QDQ Gemm (transA 0, constant 8-bit B) becomes the QDQ MatMul it
    stands for (B transposed at compile time, alpha in its scale, beta in
    a constant C), fused as above.
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

def QuantizeDynamicPass : Pass<"kiln-quantize-dynamic", "mlir::func::FuncOp"> {
  let summary = "Dynamic INT8 quantisation of MatMul and Gemm by constant weights";
  let description = [{
    `kiln compile --quantize=dynamic`. Every float32 MatMul whose B is a
    constant 2-D [K, N] weight (and every Gemm whose B is one, transA = 0,
    beta = 1) becomes

      q, s, zp = DynamicQuantizeLinear(A)        (uint8, per tensor, at run time)
      acc = MatMulInteger(q, Wq, zp)             (int32)
      y = Cast(acc, float32) * (s * w_scale)     (+ C for Gemm)

    with Wq = round_half_even(W / w_scale) clamped to [-127, 127] (int8,
    symmetric) and w_scale[n] = max_k |W[k, n]| / 127 per output column
    (alpha folded in; 1 for an all-zero column). MatMuls of two run-time
    values (attention's) and everything else stay in float. The integer
    matmuls then run on the int8 dot-product kernels
    (kiln-vectorize-int8-matmul).
  }];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

#endif // KILN_PASSES_QUANTIZATION_PASSES_TD

def ExposeActivationRangesPass
    : Pass<"kiln-expose-activation-ranges", "mlir::ModuleOp"> {
  let summary = "Calibration: the ranges of the activations --quantize=int8 quantises, as outputs";
  let description = [{
    For the calibration run of `kiln compile --quantize=int8`: each
    activation that kiln-quantize-static would quantise (the inputs of the
    float Convs of one group by a constant weight summing at least 64
    products per output, of the MatMuls by a constant 2-D weight, of the
    Gemms with transA 0 and beta 1 by a constant weight, and of the ops
    between them that join: Add, the pools, Concat and the reshaping ops;
    see QuantizeStatic.cpp), at the entry function's top level, in order,
    gets its ReduceMin and ReduceMax as two more outputs of the entry
    function, named kiln_calibration_<i>_min and _max; with `tensors`, the
    activation itself instead, named kiln_calibration_<i> (for the
    histograms of the percentile and entropy methods).
  }];
  let options = [
    Option<"tensors", "tensors", "bool", "false",
           "Expose each activation whole rather than its min and max">,
  ];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}

def QuantizeStaticPass : Pass<"kiln-quantize-static", "mlir::ModuleOp"> {
  let summary = "Static INT8 quantisation of Conv, MatMul, Gemm and the ops between them from calibrated ranges";
  let description = [{
    `kiln compile --quantize=int8`. With `ranges` (lo, hi per activation,
    in the order of kiln-expose-activation-ranges), the quantised ops read
    each activation as DequantizeLinear(QuantizeLinear(x, s, zp)) (uint8
    per tensor, s = (hi - lo) / 255 with the range widened to hold 0, zp =
    round(-lo / s); a MaxPool's or reshaping op's result at its input's
    parameters), and each weighted op's weight becomes DequantizeLinear of
    int8 weights, symmetric, one scale per output channel (Gemm: alpha
    folded in; it becomes MatMul + C). The result is a QDQ model:
    kiln-fuse-qdq, run after, makes the weighted ops integer ops and runs
    the ops between them (Add, pools, Concat, reshaping ops) on the 8-bit
    values. An activation whose range is not finite stays float, and so
    do the weighted ops that read it. A count of ranges other than two per
    activation is an error.
  }];
  let options = [
    ListOption<"ranges", "ranges", "double",
               "Calibrated activation ranges: lo, hi for each op in order">,
  ];
  let dependentDialects = ["::kiln::onnx::OnnxDialect"];
}
