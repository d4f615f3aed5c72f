#!/usr/bin/env python3
"""Writes a ReduceSum with axes as a graph input and keepdims=0 (x [3, 2, 2]
to [3, 2]: dim 1 or dim 2 at run time), with input sets for axes 1, -2, 2
and -1 and numpy's sums, for reduce-runtime-axes.test.

    reduce_runtime_axes.py OUTDIR
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum",
                        keepdims=0)
graph = helper.make_graph(
    [node], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2, 2]),
     helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "model.onnx"))
x = np.arange(12, dtype=np.float32).reshape(3, 2, 2) ** 2
np.save(os.path.join(out, "x.npy"), x)
for a in (1, -2, 2, -1):
    np.save(os.path.join(out, "axes%d.npy" % a), np.array([a], np.int64))
    np.save(os.path.join(out, "y%d.npy" % a), x.sum(axis=a))
