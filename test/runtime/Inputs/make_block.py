"""A residual block and a classifier head for test/runtime/gpu-emulate.test:
Conv+bias -> Relu -> Conv+bias, plus a 1x1 Conv of the input, -> Add ->
Relu -> MatMul over the channels (after a Transpose) + bias -> Relu, and a
GlobalAveragePool -> Gemm head. Written to DIR/block.onnx with an input
DIR/x.npy.

  python3 make_block.py DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)


def weight(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


inits = [weight("w1", 8, 4, 3, 3), weight("b1", 8), weight("w2", 8, 8, 3, 3), weight("b2", 8),
         weight("ws", 8, 4, 1, 1), weight("bs", 8), weight("wm", 8, 12), weight("bm", 12),
         weight("wg", 5, 8), weight("bg", 5)]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
    helper.make_node("Conv", ["x", "ws", "bs"], ["skip"]),
    helper.make_node("Add", ["c2", "skip"], ["sum"]),
    helper.make_node("Relu", ["sum"], ["r2"]),
    helper.make_node("Transpose", ["r2"], ["t"], perm=[0, 2, 3, 1]),
    helper.make_node("MatMul", ["t", "wm"], ["m"]),
    helper.make_node("Add", ["m", "bm"], ["mb"]),
    helper.make_node("Relu", ["mb"], ["features"]),
    helper.make_node("GlobalAveragePool", ["r2"], ["pool"]),
    helper.make_node("Flatten", ["pool"], ["flat"]),
    helper.make_node("Gemm", ["flat", "wg", "bg"], ["logits"], transB=1),
]
graph = helper.make_graph(
    nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 10, 10])],
    [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 10, 10, 12]),
     helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 5])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "block.onnx"))
np.save(os.path.join(out, "x.npy"), rng.standard_normal((1, 4, 10, 10)).astype(np.float32))
