"""Runs a QDQ ONNX model in numpy, float32 as ONNX defines each op, for
the ops kiln's QDQ export writes and the test models hold
(QuantizeLinear, DequantizeLinear, Conv, Relu, MaxPool, Add, Concat,
GlobalAveragePool, Flatten, MatMul):

    python3 qdq_reference.py MODEL.onnx X.npy OUT.npy

OUT.npy: the model's first output for X (its one input).
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

F32 = np.float32


def conv(x, w, b, pads, strides):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - kh) // strides[0] + 1
    ow = (xp.shape[3] - kw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), F32)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j]).astype(F32)
    return y if b is None else y + b[None, :, None, None]


def maxpool(x, kernel, pads, strides):
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                constant_values=-np.inf)
    oh = (xp.shape[2] - kernel[0]) // strides[0] + 1
    ow = (xp.shape[3] - kernel[1]) // strides[1] + 1
    y = np.full(x.shape[:2] + (oh, ow), -np.inf, F32)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            y = np.maximum(y, xp[:, :, i:i + strides[0] * oh:strides[0],
                                 j:j + strides[1] * ow:strides[1]])
    return y


def along(v, axis, rank):
    """A per-axis parameter shaped to broadcast along `axis`."""
    if v.ndim == 0:
        return v
    shape = [1] * rank
    shape[axis] = v.size
    return v.reshape(shape)


def run(model, x):
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env[model.graph.input[0].name] = x
    for node in model.graph.node:
        a = {at.name: onnx.helper.get_attribute_value(at) for at in node.attribute}
        ins = [env[i] if i else None for i in node.input]
        op = node.op_type
        if op == "QuantizeLinear":
            v, s, z = ins
            axis = a.get("axis", 1)
            q = np.round(v / along(s, axis, v.ndim)) + along(z, axis, v.ndim).astype(F32)
            y = np.clip(q, 0, 255).astype(np.uint8)
        elif op == "DequantizeLinear":
            v, s = ins[0], ins[1]
            z = ins[2] if len(ins) > 2 and ins[2] is not None else np.zeros((), v.dtype)
            axis = a.get("axis", 1)
            y = ((v.astype(F32) - along(z, axis, v.ndim).astype(F32))
                 * along(s, axis, v.ndim)).astype(F32)
        elif op == "Conv":
            k = ins[1].shape[2:]
            y = conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None,
                     a.get("pads", [0] * 4), a.get("strides", [1, 1]))
            assert list(k) == list(a.get("kernel_shape", k)) and a.get("group", 1) == 1
        elif op == "Relu":
            y = np.maximum(ins[0], F32(0))
        elif op == "MaxPool":
            y = maxpool(ins[0], a["kernel_shape"], a.get("pads", [0] * 4), a.get("strides", [1, 1]))
        elif op == "Add":
            y = ins[0] + ins[1]
        elif op == "Concat":
            y = np.concatenate(ins, axis=a["axis"])
        elif op == "GlobalAveragePool":
            y = ins[0].mean(axis=(2, 3), keepdims=True, dtype=F32)
        elif op == "Flatten":
            y = ins[0].reshape(ins[0].shape[0], -1)
        elif op == "MatMul":
            y = ins[0] @ ins[1]
        else:
            raise SystemExit("qdq_reference.py: no %s" % op)
        env[node.output[0]] = y
    return env[model.graph.output[0].name]


def main():
    model = onnx.load(sys.argv[1])
    np.save(sys.argv[3], run(model, np.load(sys.argv[2])).astype(F32))


if __name__ == "__main__":
    main()
