"""Models of ops the ONNX conformance data (opset 17) has no tests for, with
numpy references: LpPool, GlobalLpPool, LpNormalization.

    python3 make_lp_models.py OUTDIR

writes OUTDIR/NAME.onnx, NAME_x.npy and NAME_y.npy for each model.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def save(out, name, node, x, y):
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out, name + ".onnx"))
    np.save(os.path.join(out, name + "_x.npy"), x)
    np.save(os.path.join(out, name + "_y.npy"), y.astype(np.float32))


def lp_pool(x, k, s, p, pad):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    h = (xp.shape[2] - k) // s + 1
    w = (xp.shape[3] - k) // s + 1
    y = np.zeros((x.shape[0], x.shape[1], h, w))
    for i in range(h):
        for j in range(w):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            y[:, :, i, j] = (np.abs(win) ** p).sum((2, 3)) ** (1.0 / p)
    return y


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(np.float32)
    save(out, "lppool3", helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=3,
                                          pads=[1, 1, 1, 1]), x, lp_pool(x, 2, 1, 3, 1))
    save(out, "lppool2", helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3, 3],
                                          strides=[2, 2], p=2), x, lp_pool(x, 3, 2, 2, 0))
    save(out, "globallp1", helper.make_node("GlobalLpPool", ["x"], ["y"], p=1), x,
         np.abs(x).sum((2, 3), keepdims=True))
    save(out, "lpnorm2", helper.make_node("LpNormalization", ["x"], ["y"], axis=1, p=2), x,
         x / np.sqrt((x * x).sum(1, keepdims=True)))
    save(out, "lpnorm1", helper.make_node("LpNormalization", ["x"], ["y"], axis=-1, p=1), x,
         x / np.abs(x).sum(-1, keepdims=True))


if __name__ == "__main__":
    main()
