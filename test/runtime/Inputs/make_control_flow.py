"""Control flow with parallel work for test/runtime/gpu-emulate.test: on
the GPU the loops and branches run on the host and their bodies' ops are
launches from there (passes/Codegen/GPU/MapLoops.cpp). A Loop whose body
runs a 64 x 64 MatMul, Add and Tanh and stops when its own condition
(iteration < 3) turns false; a Scan over the rows of x carrying a state,
with a Softmax of it as scan output; an If on the sign of x's mean with a
MatMul in one branch; a ReduceSum whose axis is an input, over a 2 x 4 x
8 x 8 view of x (axis 2 or 3 give a 2 x 4 x 8 result: the host reads
the axis and picks the result's buffer). Written to DIR/control_flow.onnx
with inputs DIR/x.npy and DIR/axes.npy.

  python3 make_control_flow.py DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(5)
F = TensorProto.FLOAT


def const(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype), name)


def info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
inits = [const("w", w), const("b", rng.standard_normal((1, 64)) / 4),
         const("h0", rng.standard_normal((1, 64))), const("trips", 6, np.int64),
         const("go", True, np.bool_), const("three", 3, np.int64),
         const("s0", np.zeros(64)), const("half", 0.5), const("two", 2.0),
         const("zero", 0.0), const("cube", [2, 4, 8, 8], np.int64)]

# Loop: h = tanh(h @ w + b) while the iteration number is below 3 (4 of
# the 6 iterations run).
loop_body = helper.make_graph(
    [helper.make_node("MatMul", ["h_in", "w"], ["hw"]),
     helper.make_node("Add", ["hw", "b"], ["hb"]),
     helper.make_node("Tanh", ["hb"], ["h_out"]),
     helper.make_node("Less", ["i", "three"], ["c_out"])],
    "loop_body",
    [info("i", TensorProto.INT64, []), info("c_in", TensorProto.BOOL, []),
     info("h_in", F, [1, 64])],
    [info("c_out", TensorProto.BOOL, []), info("h_out", F, [1, 64])])

# Scan over x's 8 rows: s = s * 0.5 + row, and softmax(s) each step.
scan_body = helper.make_graph(
    [helper.make_node("Mul", ["s_in", "half"], ["sh"]),
     helper.make_node("Add", ["sh", "row"], ["s_out"]),
     helper.make_node("Softmax", ["s_out"], ["p"], axis=-1)],
    "scan_body",
    [info("s_in", F, [64]), info("row", F, [64])],
    [info("s_out", F, [64]), info("p", F, [64])])

then_branch = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["then_out"])], "then",
    [], [info("then_out", F, [8, 64])])
else_branch = helper.make_graph(
    [helper.make_node("Mul", ["x", "two"], ["else_out"])], "else",
    [], [info("else_out", F, [8, 64])])

nodes = [
    helper.make_node("Loop", ["trips", "go", "h0"], ["h"], body=loop_body),
    helper.make_node("Scan", ["s0", "x"], ["s", "probs"], body=scan_body, num_scan_inputs=1),
    helper.make_node("ReduceMean", ["x"], ["mean"], keepdims=0),
    helper.make_node("Greater", ["mean", "zero"], ["positive"]),
    helper.make_node("If", ["positive"], ["chosen"], then_branch=then_branch,
                     else_branch=else_branch),
    helper.make_node("Reshape", ["x", "cube"], ["x4"]),
    helper.make_node("ReduceSum", ["x4", "axes"], ["rsum"], keepdims=0),
]
outputs = [info("h", F, [1, 64]), info("s", F, [64]), info("probs", F, [8, 64]),
           info("chosen", F, [8, 64]), info("rsum", F, [2, 4, 8])]
graph = helper.make_graph(
    nodes, "control_flow",
    [info("x", F, [8, 64]), info("axes", TensorProto.INT64, [1])], outputs, inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "control_flow.onnx"))
x = rng.standard_normal((8, 64)).astype(np.float32) + 0.1
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "axes.npy"), np.array([3], np.int64))
