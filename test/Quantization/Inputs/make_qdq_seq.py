"""Writes a QDQ MatMul over a dynamic sequence length (uint8 x [1, seq,
24] dequantised, int8 weights per output column, the result quantised to
uint8), the same over a dynamic batch ([N, 9, 24]) and, for two lengths
and a batch of 3, the exact result of the integer op it stands for (QLinearMatMul: int32 sum, requantised with the scale in
float32 and the product in float64, as kiln does).

    python3 make_qdq_seq.py OUT
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(11)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    w = RNG.integers(-128, 128, (24, 40)).astype(np.int8)
    xs, xz = np.array(0.03, np.float32), np.array(120, np.uint8)
    ws = (RNG.random(40) * 0.01 + 0.002).astype(np.float32)
    ys, yz = np.array(0.7, np.float32), np.array(100, np.uint8)
    inits = [numpy_helper.from_array(v, k) for k, v in
             (("w", w), ("xs", xs), ("xz", xz), ("ws", ws), ("ys", ys), ("yz", yz))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"], name="dq_x"),
             helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"], name="dq_w", axis=1),
             helper.make_node("MatMul", ["xd", "wd"], ["m"], name="mm"),
             helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["y"], name="q_y")]
    graph = helper.make_graph(
        nodes, "qdq_seq", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, "seq", 24])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, "seq", 40])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "qdq_seq.onnx"))
    # The same with a dynamic batch instead: x [N, 9, 24].
    for v in (model.graph.input[0], model.graph.output[0]):
        dims = v.type.tensor_type.shape.dim
        dims[0].dim_param = "N"
        dims[1].dim_value = 9
    onnx.save(model, os.path.join(out, "qdq_batch.onnx"))
    scale = ((xs * ws) / ys).astype(np.float32).astype(np.float64)
    for name, shape in (("seq9", (1, 9, 24)), ("seq30", (1, 30, 24)), ("batch3", (3, 9, 24))):
        x = RNG.integers(0, 256, shape).astype(np.uint8)
        acc = np.matmul(x.astype(np.int64) - int(xz), w.astype(np.int64))
        y = np.clip(np.round(acc.astype(np.float64) * scale) + float(yz), 0, 255)
        np.save(os.path.join(out, "x_%s.npy" % name), x)
        np.save(os.path.join(out, "y_%s.npy" % name), y.astype(np.uint8))


if __name__ == "__main__":
    main()
