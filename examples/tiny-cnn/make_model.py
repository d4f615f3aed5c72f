#!/usr/bin/env python3
"""Writes model.onnx: a small CNN (Conv-BN-Relu-MaxPool-Conv-GAP-Flatten-Gemm-
Softmax) with fixed random weights and a dynamic batch dim, plus a
PyTorch-style Shape->Gather->Unsqueeze->Concat->Reshape chain, exported the
way torch does. Used by the README's main-job command."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def init(name, shape):
    return numpy_helper.from_array(
        rng.standard_normal(shape).astype(np.float32) * 0.1, name)


inits = [
    init("w1", (8, 1, 3, 3)), init("b1", (8,)),
    numpy_helper.from_array(np.ones(8, np.float32), "bn_scale"),
    numpy_helper.from_array(np.zeros(8, np.float32), "bn_bias"),
    numpy_helper.from_array(np.zeros(8, np.float32), "bn_mean"),
    numpy_helper.from_array(np.ones(8, np.float32), "bn_var"),
    init("w2", (16, 8, 3, 3)), init("b2", (16,)),
    init("fc_w", (10, 16)), init("fc_b", (10,)),
    numpy_helper.from_array(np.array(0, np.int64), "zero"),
    numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                     pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization",
                     ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                     ["bn1"], name="bn1"),
    helper.make_node("Relu", ["bn1"], ["r1"], name="relu1"),
    helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1",
                     kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2",
                     pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
    helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
    # torch.flatten as exported: Reshape(g, Concat(Unsqueeze(Gather(Shape(g), 0)), [-1]))
    helper.make_node("Shape", ["g"], ["g_shape"], name="shape"),
    helper.make_node("Gather", ["g_shape", "zero"], ["batch"], name="gather",
                     axis=0),
    helper.make_node("Unsqueeze", ["batch", "zero_axes"], ["batch1"],
                     name="unsqueeze"),
    helper.make_node("Constant", [], ["zero_axes"], name="axes",
                     value=numpy_helper.from_array(np.array([0], np.int64))),
    helper.make_node("Concat", ["batch1", "minus_one"], ["flat_shape"],
                     name="concat", axis=0),
    helper.make_node("Reshape", ["g", "flat_shape"], ["flat"], name="flatten"),
    helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc",
                     transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
# Constant must come before its use: keep the list topologically sorted.
nodes.insert(9, nodes.pop(10))
graph = helper.make_graph(
    nodes, "tiny_cnn",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8, 8])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="kiln-example")
model.ir_version = 7
onnx.checker.check_model(model)
onnx.save(model, "model.onnx")
