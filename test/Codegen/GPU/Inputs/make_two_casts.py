"""Two Casts from float to string, between them a Relu, for
test/Codegen/GPU/check.test: on the GPU each calls a runtime helper that
runs on the host (strings), which kiln-gpu-map-loops refuses. Written to
the path given.

  python3 make_two_casts.py OUT.onnx"""
import sys

import onnx
from onnx import TensorProto, helper

nodes = [
    helper.make_node("Cast", ["x"], ["s1"], to=TensorProto.STRING, name="first_cast"),
    helper.make_node("Relu", ["x"], ["r"]),
    helper.make_node("Cast", ["r"], ["s2"], to=TensorProto.STRING, name="second_cast"),
]
graph = helper.make_graph(
    nodes, "two_casts",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
    [helper.make_tensor_value_info("s1", TensorProto.STRING, [3, 2]),
     helper.make_tensor_value_info("s2", TensorProto.STRING, [3, 2])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
