"""Writes one graph of many ops three times into DIR: half.onnx (float16
inputs, weights and outputs), bfloat16.onnx (float32 inputs and outputs,
cast to bfloat16 inside, bfloat16 weights) and float.onnx (float32
throughout, the reference), with inputs x.npy/x16.npy and img.npy/img16.npy.

    python3 make_half.py DIR
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)


def bf16_bits(a):
    """bfloat16 bit patterns of float32 `a`, rounded to nearest even."""
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def rounded(a, kind):
    """`a`'s values as the model of `kind` holds them, in float32."""
    if kind == "half":
        return a.astype(np.float16).astype(np.float32)
    if kind == "bfloat16":
        return (bf16_bits(a).astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


# Weights, drawn once; each model holds them in its own type (the float
# model holds the values the half model rounds them to, so that only the
# computation differs).
weights = {
    "W": rng.standard_normal((24, 32)) * 0.2,
    "G": rng.standard_normal((16, 32)) * 0.2,
    "GB": rng.standard_normal((16,)) * 0.1,
    "K": rng.standard_normal((8, 2, 3, 3)) * 0.3,
    "KB": rng.standard_normal((8,)) * 0.1,
    "T": rng.standard_normal((8, 4, 2, 2)) * 0.3,
    "scale": rng.random((8,)) + 0.5,
    "bias": rng.standard_normal((8,)) * 0.1,
    "mean": rng.standard_normal((8,)) * 0.1,
    "var": rng.random((8,)) + 0.5,
    "gamma": rng.random((16,)) + 0.5,
    "beta": rng.standard_normal((16,)) * 0.1,
    "E": rng.standard_normal((16, 4)) * 0.3,
}
x_values = rng.standard_normal((6, 24))
img_values = rng.standard_normal((1, 4, 10, 10))

nodes = [
    helper.make_node("MatMul", ["x", "W"], ["mm"], name="matmul"),
    helper.make_node("Gemm", ["mm", "G", "GB"], ["gemm"], name="gemm", transB=1),
    helper.make_node("LayerNormalization", ["gemm", "gamma", "beta"], ["ln"], name="layernorm",
                     axis=-1),
    helper.make_node("Softmax", ["ln"], ["sm"], name="softmax", axis=-1),
    helper.make_node("ReduceMean", ["ln"], ["rm"], name="reducemean", axes=[1], keepdims=1),
    helper.make_node("Greater", ["ln", "rm"], ["gt"], name="greater"),
    helper.make_node("Where", ["gt", "ln", "sm"], ["wh"], name="where"),
    helper.make_node("MatMul", ["wh", "E"], ["es"], name="matmul2"),
    topk := helper.make_node("TopK", ["wh", "k"], ["topv", "topi"], name="topk", axis=-1),
    helper.make_node("CumSum", ["es", "axis"], ["cs"], name="cumsum"),
    conv := helper.make_node("Conv", ["img", "K", "KB"], ["conv"], name="conv",
                             pads=[1, 1, 1, 1], group=2),
    helper.make_node("BatchNormalization", ["conv", "scale", "bias", "mean", "var"], ["bn"],
                     name="batchnorm"),
    helper.make_node("Relu", ["bn"], ["relu"], name="relu"),
    helper.make_node("MaxPool", ["relu"], ["mp"], name="maxpool", kernel_shape=[2, 2],
                     strides=[2, 2]),
    helper.make_node("ConvTranspose", ["mp", "T"], ["ct"], name="convtranspose", group=2,
                     strides=[2, 2]),
    helper.make_node("AveragePool", ["ct"], ["ap"], name="averagepool", kernel_shape=[3, 3],
                     pads=[1, 1, 1, 1]),
    helper.make_node("InstanceNormalization", ["ap", "scale", "bias"], ["inorm"],
                     name="instancenorm"),
    helper.make_node("GlobalAveragePool", ["inorm"], ["gap"], name="globalaveragepool"),
    helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
    helper.make_node("Resize", ["ct", "", "scales"], ["rs"], name="resize", mode="linear"),
    helper.make_node("ReduceMax", ["rs"], ["rmax"], name="reducemax", axes=[2, 3], keepdims=0),
]
shapes = {"cs": [6, 4], "topv": [6, 3], "topi": [6, 3], "flat": [1, 8], "rmax": [1, 8]}
int64_consts = {"k": np.array([3], np.int64), "axis": np.array(0, np.int64)}
float_consts = {"scales": np.array([1, 1, 0.5, 0.5], np.float32)}


def make(kind):
    et = {"half": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
          "float": TensorProto.FLOAT}[kind]
    inits = []
    for name, value in weights.items():
        v = rounded(value, kind)
        if kind == "bfloat16":
            inits.append(helper.make_tensor(name, et, v.shape, bf16_bits(v).tobytes(), raw=True))
        else:
            inits.append(numpy_helper.from_array(
                v.astype(np.float16 if kind == "half" else np.float32), name))
    for name, value in int64_consts.items():
        inits.append(numpy_helper.from_array(value, name))
    for name, value in float_consts.items():
        inits.append(numpy_helper.from_array(value, name))
    graph_nodes = list(nodes)
    names = ["cs", "topv", "topi", "flat", "rmax"]
    if kind == "bfloat16":
        # Opset 17 has no bfloat16 TopK or convolutions: the matmul branch.
        graph_nodes = nodes[:nodes.index(topk)] + nodes[nodes.index(topk) + 1:nodes.index(conv)]
        names = ["cs"]
    io = TensorProto.FLOAT if kind == "bfloat16" else et
    inputs = [helper.make_tensor_value_info("x_in", io, [6, 24])]
    if kind != "bfloat16":
        inputs.append(helper.make_tensor_value_info("img_in", io, [1, 4, 10, 10]))
    if kind == "bfloat16":
        pre = [helper.make_node("Cast", ["x_in"], ["x"], to=et)]
    else:
        pre = [helper.make_node("Identity", ["x_in"], ["x"]),
               helper.make_node("Identity", ["img_in"], ["img"])]
    outputs = []
    for name in names:
        t = TensorProto.INT64 if name == "topi" else io
        if kind == "bfloat16" and name != "topi":
            graph_nodes.append(helper.make_node("Cast", [name], [name + "_out"], to=io))
        else:
            graph_nodes.append(helper.make_node("Identity", [name], [name + "_out"]))
        outputs.append(helper.make_tensor_value_info(name + "_out", t, shapes[name]))
    graph = helper.make_graph(pre + graph_nodes, kind, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, kind + ".onnx"))


for kind in ["half", "bfloat16", "float"]:
    make(kind)
np.save(os.path.join(out, "x.npy"), rounded(x_values, "half"))
np.save(os.path.join(out, "img.npy"), rounded(img_values, "half"))
np.save(os.path.join(out, "x16.npy"), x_values.astype(np.float16))
np.save(os.path.join(out, "img16.npy"), img_values.astype(np.float16))
