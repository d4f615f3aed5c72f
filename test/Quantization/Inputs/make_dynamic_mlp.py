"""Writes a small MLP (MatMul by a constant, Relu, Gemm with transB, alpha
and a bias) and the exact numpy result of kiln's dynamic quantisation of
it (--quantize=dynamic: per-tensor uint8 activations quantised at run
time, int8 weights per output column), plus the float result.

    python3 make_dynamic_mlp.py OUT
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(5)


def dynamic_quantize(x):
    """DynamicQuantizeLinear: uint8 values, scale and zero point (float32)."""
    lo, hi = min(np.float32(0), x.min()), max(np.float32(0), x.max())
    scale = np.float32((hi - lo) / np.float32(255))
    zp = np.clip(np.round(np.float32(0) - lo / scale), 0, 255).astype(np.float32)
    q = np.clip(np.round(x / scale) + zp, 0, 255)
    return q.astype(np.int64), scale, int(zp)


def weights_int8(w, alpha=np.float32(1)):
    """W [K, N] in int8 steps of max_k |W[k, n]| / 127 per column."""
    most = np.abs(w).max(axis=0)
    step = np.where(most > 0, most / np.float32(127), np.float32(1)).astype(np.float32)
    q = np.clip(np.round(w / step), -127, 127).astype(np.int64)
    return q, (step * alpha).astype(np.float32)


def linear(x, w, alpha=np.float32(1)):
    q, s, zp = dynamic_quantize(x)
    wq, ws = weights_int8(w, alpha)
    acc = (q - zp) @ wq
    return acc.astype(np.float32) * (s * ws)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x = RNG.standard_normal((5, 24)).astype(np.float32)
    w1 = (RNG.standard_normal((24, 40)) * 0.3).astype(np.float32)
    w2 = (RNG.standard_normal((10, 40)) * 0.3).astype(np.float32)
    b2 = RNG.standard_normal(10).astype(np.float32)
    alpha = np.float32(0.5)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], name="fc2", transB=1, alpha=0.5)]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 10])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
         numpy_helper.from_array(b2, "b2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "mlp.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    r = np.maximum(linear(x, w1), 0)
    y = linear(r, np.ascontiguousarray(w2.T), alpha) + b2
    np.save(os.path.join(out, "y_dynamic.npy"), y.astype(np.float32))
    y_float = np.maximum(x @ w1, 0) @ w2.T * alpha + b2
    np.save(os.path.join(out, "y_float.npy"), y_float.astype(np.float32))

    # The same layers over a dynamic sequence length: x [1, seq, 24].
    w2t = np.ascontiguousarray(w2.T)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w2t"], ["p"], name="fc2"),
             helper.make_node("Add", ["p", "b2"], ["y"], name="bias")]
    graph = helper.make_graph(
        nodes, "mlp_seq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "seq", 10])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2t, "w2t"),
         numpy_helper.from_array(b2, "b2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "mlp_seq.onnx"))
    for seq in (7, 19):
        xs = RNG.standard_normal((1, seq, 24)).astype(np.float32)
        r = np.maximum(linear(xs[0], w1), 0)
        ys = (linear(r, w2t) + b2)[None]
        np.save(os.path.join(out, "x_seq%d.npy" % seq), xs)
        np.save(os.path.join(out, "y_seq%d.npy" % seq), ys.astype(np.float32))


if __name__ == "__main__":
    main()
