"""Reductions for test/runtime/gpu-emulate.test's block reductions
(passes/Codegen/GPU/Reduction.cpp): LayerNormalization, Softmax, ReduceMax
across the middle axis, a full ReduceSum, ReduceL2 over two axes, ArgMax
(not a combiner: one thread a row), an int32 ReduceMin, ReduceProd and
GlobalAveragePool, over an input of 3 x 41 x 300. Written to
DIR/reductions.onnx with an input DIR/r.npy.

  python3 make_reductions.py DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(11)
shape = [3, 41, 300]


def const(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype), name)


inits = [const("scale", rng.standard_normal(300)), const("bias", rng.standard_normal(300)),
         const("hundred", 100.0), const("small", 0.01), const("one", 1.0),
         const("axes1", [1], np.int64), const("axes02", [0, 2], np.int64),
         const("axes2", [2], np.int64), const("img", [3, 41, 20, 15], np.int64)]
nodes = [
    helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["ln"], axis=-1),
    helper.make_node("Softmax", ["x"], ["sm"], axis=-1),
    helper.make_node("ReduceMax", ["x"], ["rmax"], axes=[1], keepdims=0),
    helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
    helper.make_node("ReduceL2", ["x"], ["l2"], axes=[0, 2], keepdims=0),
    helper.make_node("ArgMax", ["x"], ["am"], axis=2),
    helper.make_node("Mul", ["x", "hundred"], ["x100"]),
    helper.make_node("Cast", ["x100"], ["xi"], to=TensorProto.INT32),
    helper.make_node("ReduceMin", ["xi"], ["imin"], axes=[2], keepdims=0),
    helper.make_node("Mul", ["x", "small"], ["xs"]),
    helper.make_node("Add", ["xs", "one"], ["near1"]),
    helper.make_node("ReduceProd", ["near1"], ["prod"], axes=[2], keepdims=0),
    helper.make_node("Reshape", ["x", "img"], ["x4"]),
    helper.make_node("GlobalAveragePool", ["x4"], ["gap"]),
]
outputs = [("ln", TensorProto.FLOAT, shape), ("sm", TensorProto.FLOAT, shape),
           ("rmax", TensorProto.FLOAT, [3, 300]), ("total", TensorProto.FLOAT, []),
           ("l2", TensorProto.FLOAT, [41]), ("am", TensorProto.INT64, [3, 41, 1]),
           ("imin", TensorProto.INT32, [3, 41]), ("prod", TensorProto.FLOAT, [3, 41]),
           ("gap", TensorProto.FLOAT, [3, 41, 1, 1])]
graph = helper.make_graph(
    nodes, "reductions", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
    [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "reductions.onnx"))
np.save(os.path.join(out, "r.npy"), rng.standard_normal(shape).astype(np.float32))
