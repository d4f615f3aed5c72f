"""Two ReduceSum nodes whose axes are a graph input, between them a Relu,
for test/Codegen/GPU/check.test: on the GPU the host picks each one's
result buffer from the axis, read from device memory. Written to the path
given.

  python3 make_two_sums.py OUT.onnx"""
import sys

import onnx
from onnx import TensorProto, helper

nodes = [
    helper.make_node("ReduceSum", ["x", "axes"], ["s1"], keepdims=0, name="first_sum"),
    helper.make_node("Relu", ["x"], ["r"]),
    helper.make_node("ReduceSum", ["r", "axes"], ["s2"], keepdims=0, name="second_sum"),
    helper.make_node("Add", ["s1", "s2"], ["y"]),
]
graph = helper.make_graph(
    nodes, "two_sums",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2, 2]),
     helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
    value_info=[helper.make_tensor_value_info("s1", TensorProto.FLOAT, [3, 2]),
                helper.make_tensor_value_info("s2", TensorProto.FLOAT, [3, 2])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
