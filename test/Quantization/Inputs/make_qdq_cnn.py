"""Writes two QDQ models, the form ONNX Runtime's static quantiser writes
(every quantised tensor as QuantizeLinear -> DequantizeLinear around
float ops), with inputs and numpy results, for
test/Quantization/fuse-qdq-graph.test:

    python3 make_qdq_cnn.py OUT

OUT/moves.onnx: uint8 inputs a, b [1, 8, 6, 6] through MaxPool, Relu,
Clip, Concat (inputs at other scales than its output), Reshape,
Transpose, Slice, Gather and an Add, each between a DequantizeLinear and a
QuantizeLinear; y_moves*.npy: the QDQ graph run in float32 by numpy,
which the integer form must match exactly.

OUT/cnn.onnx: float x [1, 8, 10, 10] -> Conv 3x3 + Relu -> MaxPool ->
two branches (Conv 1x1; Conv 3x3 + Clip(0, 6)) -> Add + Relu -> Concat
with the MaxPool's output -> GlobalAveragePool -> Flatten -> Gemm
(transB), each activation quantised to uint8 per tensor, weights int8 per
output channel, biases int32 at scale xs * ws; y_cnn.npy: numpy's float
QDQ result, which the integer form matches to a few output steps (its
sums are exact where the float ones rounded).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_static_cnn import conv  # noqa: E402

RNG = np.random.default_rng(5)
F32 = np.float32


def q(x, s, z):
    return np.clip(np.round(x.astype(F32) / F32(s)) + F32(z), 0, 255).astype(np.uint8)


def dq(v, s, z):
    return ((v.astype(F32) - F32(z)) * F32(s)).astype(F32)


def maxpool(x, k, stride, pad):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    y = np.full((n, c, oh, ow), -np.inf, x.dtype)
    for i in range(k):
        for j in range(k):
            y = np.maximum(y, xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride])
    return y


class Graph:
    """Nodes and initializers, with fresh names."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, value, name=None):
        self.count += 1
        name = name or "c%d" % self.count
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op, inputs, **attrs):
        self.count += 1
        out = "t%d" % self.count
        self.nodes.append(helper.make_node(op, inputs, [out], name="%s_%d" % (op, self.count), **attrs))
        return out

    def qdq(self, x, s, z):
        """QuantizeLinear then DequantizeLinear at (s, z)."""
        sn, zn = self.const(F32(s)), self.const(np.uint8(z))
        return self.node("DequantizeLinear", [self.node("QuantizeLinear", [x, sn, zn]), sn, zn])

    def dq(self, x, s, z):
        return self.node("DequantizeLinear", [x, self.const(F32(s)), self.const(np.uint8(z))])

    def q(self, x, s, z):
        return self.node("QuantizeLinear", [x, self.const(F32(s)), self.const(np.uint8(z))])

    def model(self, inputs, outputs, name):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        return model


def moves(out):
    g = Graph()
    sa, za, sb, zb, sy, zy = 0.05, 10, 0.03, 128, 0.04, 60
    a = g.dq("a", sa, za)
    b = g.dq("b", sb, zb)
    pool = g.q(g.node("MaxPool", [a], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), sa, za)
    relu = g.q(g.node("Relu", [b]), sb, zb)
    clip = g.q(g.node("Clip", [a, g.const(F32(-0.2)), g.const(F32(0.3))]), sa, za)
    cat = g.q(g.node("Concat", [a, b], axis=1), sy, zy)  # both requantised
    shaped = g.node("Reshape", [g.dq(cat, sy, zy), g.const(np.array([1, 16, 36], np.int64))])
    moved = g.q(g.node("Transpose", [shaped], perm=[0, 2, 1]), sy, zy)
    sliced = g.q(g.node("Slice", [g.dq(moved, sy, zy), g.const(np.array([2], np.int64)),
                                  g.const(np.array([30], np.int64)), g.const(np.array([1], np.int64))]),
                 sy, zy)
    gathered = g.q(g.node("Gather", [g.dq(sliced, sy, zy), g.const(np.array([3, 0, 7], np.int64))],
                          axis=2), sy, zy)
    added = g.q(g.node("Add", [a, b]), sy, zy)
    u8 = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.UINT8, shape)
    model = g.model([u8("a", [1, 8, 6, 6]), u8("b", [1, 8, 6, 6])],
                    [u8(pool, [1, 8, 3, 3]), u8(relu, [1, 8, 6, 6]), u8(clip, [1, 8, 6, 6]),
                     u8(gathered, [1, 28, 3]), u8(added, [1, 8, 6, 6])], "moves")
    onnx.save(model, os.path.join(out, "moves.onnx"))
    av = RNG.integers(0, 256, (1, 8, 6, 6)).astype(np.uint8)
    bv = RNG.integers(0, 256, (1, 8, 6, 6)).astype(np.uint8)
    np.save(os.path.join(out, "a.npy"), av)
    np.save(os.path.join(out, "b.npy"), bv)
    ad, bd = dq(av, sa, za), dq(bv, sb, zb)
    results = [q(maxpool(ad, 3, 2, 1), sa, za), q(np.maximum(bd, 0), sb, zb),
               q(np.clip(ad, F32(-0.2), F32(0.3)), sa, za)]
    catv = q(np.concatenate([ad, bd], axis=1), sy, zy)
    movedv = q(dq(catv, sy, zy).reshape(1, 16, 36).transpose(0, 2, 1), sy, zy)
    slicedv = q(dq(movedv, sy, zy)[:, 2:30], sy, zy)
    results.append(q(dq(slicedv, sy, zy)[:, :, [3, 0, 7]], sy, zy))
    results.append(q(ad + bd, sy, zy))
    for i, v in enumerate(results):
        np.save(os.path.join(out, "y_moves%d.npy" % i), v)


def cnn(out):
    g = Graph()
    x = RNG.standard_normal((1, 8, 10, 10)).astype(F32)
    np.save(os.path.join(out, "x.npy"), x)
    sx, zx = 4.5 / 255, 128

    def weights(m, c, k):
        w = (RNG.standard_normal((m, c, k, k)) * 0.3).astype(F32)
        ws = (np.abs(w).reshape(m, -1).max(axis=1) / 127).astype(F32)
        return np.clip(np.round(w / ws[:, None, None, None]), -127, 127).astype(np.int8), ws

    def qconv(name, xv, s_in, m, k, pad):
        """A QDQ Conv of the dequantised input name (values xv at scale
        s_in): its float output name and values."""
        c = xv.shape[1]
        wq, ws = weights(m, c, k)
        bias = np.round(RNG.standard_normal(m) * 0.1 / (F32(s_in) * ws)).astype(np.int32)
        bs = (F32(s_in) * ws).astype(F32)
        wd = g.node("DequantizeLinear", [g.const(wq), g.const(ws)], axis=0)
        bd = g.node("DequantizeLinear", [g.const(bias), g.const(bs)], axis=0)
        y = g.node("Conv", [name, wd, bd], pads=[pad] * 4)
        yv = conv(xv, dq(wq, ws[:, None, None, None], 0), dq(bias, bs, 0), pad)
        return y, yv

    xd = g.qdq("x", sx, zx)
    xv = dq(q(x, sx, zx), sx, zx)
    c1, c1v = qconv(xd, xv, sx, 16, 3, 1)
    s1 = 0.02
    a1 = g.qdq(g.node("Relu", [c1]), s1, 0)
    a1v = dq(q(np.maximum(c1v, 0), s1, 0), s1, 0)
    a2 = g.qdq(g.node("MaxPool", [a1], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), s1, 0)
    a2v = dq(q(maxpool(a1v, 3, 2, 1), s1, 0), s1, 0)
    left, leftv = qconv(a2, a2v, s1, 16, 1, 0)
    sl, zl = 0.01, 120
    left = g.qdq(left, sl, zl)
    leftv = dq(q(leftv, sl, zl), sl, zl)
    right, rightv = qconv(a2, a2v, s1, 16, 3, 1)
    sr = 6 / 255
    right = g.qdq(g.node("Clip", [right, g.const(F32(0)), g.const(F32(6))]), sr, 0)
    rightv = dq(q(np.clip(rightv, 0, 6), sr, 0), sr, 0)
    ss = 0.015
    total = g.qdq(g.node("Relu", [g.node("Add", [left, right])]), ss, 0)
    totalv = dq(q(np.maximum(leftv + rightv, 0), ss, 0), ss, 0)
    sc = 0.02
    cat = g.qdq(g.node("Concat", [total, a2], axis=1), sc, 0)
    catv = dq(q(np.concatenate([totalv, a2v], axis=1), sc, 0), sc, 0)
    sg = 0.004
    pooled = g.qdq(g.node("GlobalAveragePool", [cat]), sg, 0)
    pooledv = dq(q(catv.mean(axis=(2, 3), keepdims=True, dtype=F32), sg, 0), sg, 0)
    flat = g.qdq(g.node("Flatten", [pooled]), sg, 0)
    wg = (RNG.standard_normal((5, 32)) * 0.3).astype(F32)
    wgs = (np.abs(wg).max(axis=1) / 127).astype(F32)
    wgq = np.clip(np.round(wg / wgs[:, None]), -127, 127).astype(np.int8)
    gc = (RNG.standard_normal(5) * 0.1).astype(F32)
    wgd = g.node("DequantizeLinear", [g.const(wgq), g.const(wgs)], axis=0)
    y = g.node("Gemm", [flat, wgd, g.const(gc)], transB=1)
    yv = pooledv.reshape(1, 32) @ dq(wgq, wgs[:, None], 0).T + gc
    f32 = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    onnx.save(g.model([f32("x", [1, 8, 10, 10])], [f32(y, [1, 5])], "cnn"),
              os.path.join(out, "cnn.onnx"))
    np.save(os.path.join(out, "y_cnn.npy"), yv.astype(F32))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    moves(out)
    cnn(out)


if __name__ == "__main__":
    main()
