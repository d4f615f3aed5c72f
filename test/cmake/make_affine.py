"""Writes the consumer's second model and its expected output:
affine.onnx computes y = relu(x @ W + b) for x [1, 4], W [4, 3], b [3], and
affine_case.bin holds x (4 float32) then the numpy reference y (3 float32).

    python3 make_affine.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
w = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-2.0, 1.0, 0.0], [0.75, 0.5, 1.25]],
             np.float32)
b = np.array([0.1, -0.2, 0.3], np.float32)
x = np.array([[1.0, -2.0, 0.5, 3.0]], np.float32)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["z"]),
     helper.make_node("Relu", ["z"], ["y"])],
    "affine", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
    initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "affine.onnx"))
y = np.maximum(x @ w + b, 0).astype(np.float32)
with open(os.path.join(out, "affine_case.bin"), "wb") as f:
    f.write(x.tobytes() + y.tobytes())
