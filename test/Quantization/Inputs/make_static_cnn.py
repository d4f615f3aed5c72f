"""Writes a small CNN, calibration samples and the numpy result of kiln's
static INT8 recipe for test/Quantization/quantize-static-run.test:

    python3 make_static_cnn.py OUT

OUT/cnn.onnx: Conv(8->16, 3x3, pad 1) -> Relu -> Conv(16->6, 1x1) ->
GlobalAveragePool -> Flatten -> Gemm(6->3, transB) on x [1, 8, 6, 6]. The
1x1 Conv sums 16 products per output, fewer than kiln quantises (64): it
stays float.
OUT/calib/NNN.npy: 8 samples; each holds -1 and 3 (so the first
activation's range is exactly [-1, 3]). OUT/x.npy: another input.
OUT/y_static.npy: the recipe in numpy (each activation uint8 per tensor
over its calibrated range widened to hold 0, weights int8 symmetric per
output channel, the integer sums scaled back to float; the 1x1 Conv
float); y_float.npy: the
float model. OUT/two.onnx with OUT/calib2/NNN/{a,b}.npy: a model with two
inputs (MatMul(a, W) + b), calibrated from folders. OUT/wide.onnx with
OUT/calib3: MatMul of a [256, 64] input, normal values with a few outliers
of +-50 (for the histogram methods, which should clip them).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(3)


def conv(x, w, b, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    y = np.zeros((n, m, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1), x.dtype)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + y.shape[2], j:j + y.shape[3]]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    return y + b[None, :, None, None]


def quant_act(x, lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = np.float32((hi - lo) / 255.0)
    zp = float(np.clip(np.round(-lo / np.float64(s)), 0, 255))
    q = np.clip(np.round(x / s) + zp, 0, 255)
    return (q - zp), s  # the shifted integers and the scale


def quant_weights(w, axis):
    """int8 symmetric per channel along `axis`: integers and scales."""
    other = tuple(i for i in range(w.ndim) if i != axis)
    most = np.abs(w).max(axis=other, keepdims=True)
    s = np.where(most > 0, most / np.float32(127), np.float32(1)).astype(np.float32)
    return np.clip(np.round(w / s), -127, 127), s


def save_model(graph, path):
    """`graph` as an opset-13, IR-version-8 model at `path`, checked."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "calib"), exist_ok=True)
    w1 = (RNG.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32)
    b1 = (RNG.standard_normal(16) * 0.1).astype(np.float32)
    w2 = (RNG.standard_normal((6, 16, 1, 1)) * 0.5).astype(np.float32)
    b2 = (RNG.standard_normal(6) * 0.1).astype(np.float32)
    g = (RNG.standard_normal((3, 6)) * 0.5).astype(np.float32)
    gc = (RNG.standard_normal(3) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
             helper.make_node("GlobalAveragePool", ["c2"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "g", "gc"], ["y"], transB=1)]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        [numpy_helper.from_array(v, k) for k, v in
         dict(w1=w1, b1=b1, w2=w2, b2=b2, g=g, gc=gc).items()])
    save_model(graph, os.path.join(out, "cnn.onnx"))

    def float_model(x):
        r1 = np.maximum(conv(x, w1, b1, 1), 0)
        c2 = conv(r1, w2, b2, 0)
        f = c2.mean(axis=(2, 3))
        return r1, f, f @ g.T + gc

    samples = []
    for i in range(8):
        x = np.clip(RNG.standard_normal((1, 8, 6, 6)), -0.9, 2.9).astype(np.float32)
        x[0, 0, 0, 0], x[0, 1, 5, 5] = -1.0, 3.0
        samples.append(x)
        np.save(os.path.join(out, "calib", "%03d.npy" % i), x)
    # The calibrated ranges: each quantised op's input over the samples.
    acts = [float_model(x) for x in samples]
    f_lo, f_hi = min(a[1].min() for a in acts), max(a[1].max() for a in acts)

    x = np.clip(RNG.standard_normal((1, 8, 6, 6)), -1, 3).astype(np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "y_float.npy"), float_model(x)[2].astype(np.float32))
    # The recipe.
    xq, xs = quant_act(x.astype(np.float64), -1.0, 3.0)
    w1q, w1s = quant_weights(w1, 0)
    c1 = conv(xq, w1q.astype(np.float64), np.zeros(16), 1) * (xs * w1s.reshape(1, 16, 1, 1)) \
        + b1[None, :, None, None]
    r1 = np.maximum(c1, 0)
    c2 = conv(r1, w2.astype(np.float64), b2, 0)
    f = c2.mean(axis=(2, 3))
    fq, fs = quant_act(f, f_lo, f_hi)
    gq, gs = quant_weights(g.T, 1)
    y = (fq @ gq) * (fs * gs) + gc
    np.save(os.path.join(out, "y_static.npy"), y.astype(np.float32))

    # Two inputs: MatMul(a, W) + b, samples as folders of a.npy and b.npy.
    wm = (RNG.standard_normal((5, 4)) * 0.5).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "wm"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])],
        "two", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 5]),
                helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(wm, "wm")])
    save_model(graph, os.path.join(out, "two.onnx"))
    for i in range(4):
        folder = os.path.join(out, "calib2", "%03d" % i)
        os.makedirs(folder, exist_ok=True)
        # b first in name order: bound by name, not position.
        np.save(os.path.join(folder, "b.npy"), RNG.standard_normal((2, 4)).astype(np.float32))
        a = RNG.uniform(-2, 2, (2, 5)).astype(np.float32)
        a[0, 0], a[1, 1] = -2.0, 2.0
        np.save(os.path.join(folder, "a.npy"), a)
    a = RNG.uniform(-2, 2, (2, 5)).astype(np.float32)
    b = RNG.standard_normal((2, 4)).astype(np.float32)
    np.save(os.path.join(out, "a.npy"), a)
    np.save(os.path.join(out, "b.npy"), b)
    aq, as_ = quant_act(a.astype(np.float64), -2.0, 2.0)
    wq, ws = quant_weights(wm, 1)
    np.save(os.path.join(out, "y_two.npy"), ((aq @ wq) * (as_ * ws) + b).astype(np.float32))

    ww = (RNG.standard_normal((64, 8)) * 0.2).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "ww"], ["y"])], "wide",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [256, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256, 8])],
        [numpy_helper.from_array(ww, "ww")])
    save_model(graph, os.path.join(out, "wide.onnx"))
    os.makedirs(os.path.join(out, "calib3"), exist_ok=True)
    for i in range(8):
        a = RNG.standard_normal((256, 64)).astype(np.float32)
        a.flat[RNG.integers(0, a.size, 4)] = RNG.choice([-50.0, 50.0], 4)
        np.save(os.path.join(out, "calib3", "%03d.npy" % i), a)

    residual(out)


def residual(out):
    """OUT/residual.onnx: x [1, 8, 8, 8] -> Conv 3x3 + Relu -> MaxPool 2x2
    -> Conv 3x3 + Relu -> Conv 3x3, + the MaxPool's output -> Relu ->
    Concat with the MaxPool's output -> GlobalAveragePool -> Flatten ->
    Gemm (transB), what sits between the quantised ops; OUT/calib4: 8
    samples; OUT/xr.npy and OUT/yr_float.npy: an input and its float
    result."""
    def cw(m, c):
        return ((RNG.standard_normal((m, c, 3, 3)) * 0.2).astype(np.float32),
                (RNG.standard_normal(m) * 0.1).astype(np.float32))
    (w1, b1), (w2, b2), (w3, b3) = cw(16, 8), cw(16, 16), cw(16, 16)
    g = (RNG.standard_normal((3, 32)) * 0.5).astype(np.float32)
    gc = (RNG.standard_normal(3) * 0.1).astype(np.float32)
    pads = dict(pads=[1, 1, 1, 1])
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], **pads),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p", "w2", "b2"], ["c2"], **pads),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], **pads),
             helper.make_node("Add", ["c3", "p"], ["s"]),
             helper.make_node("Relu", ["s"], ["r3"]),
             helper.make_node("Concat", ["r3", "p"], ["cat"], axis=1),
             helper.make_node("GlobalAveragePool", ["cat"], ["gp"]),
             helper.make_node("Flatten", ["gp"], ["f"]),
             helper.make_node("Gemm", ["f", "g", "gc"], ["y"], transB=1)]
    graph = helper.make_graph(
        nodes, "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        [numpy_helper.from_array(v, k) for k, v in
         dict(w1=w1, b1=b1, w2=w2, b2=b2, w3=w3, b3=b3, g=g, gc=gc).items()])
    save_model(graph, os.path.join(out, "residual.onnx"))
    os.makedirs(os.path.join(out, "calib4"), exist_ok=True)
    for i in range(8):
        np.save(os.path.join(out, "calib4", "%03d.npy" % i),
                RNG.standard_normal((1, 8, 8, 8)).astype(np.float32))
    x = RNG.standard_normal((1, 8, 8, 8)).astype(np.float32)
    np.save(os.path.join(out, "xr.npy"), x)
    r1 = np.maximum(conv(x, w1, b1, 1), 0)
    p = r1.reshape(1, 16, 4, 2, 4, 2).max(axis=(3, 5))
    r3 = np.maximum(conv(np.maximum(conv(p, w2, b2, 1), 0), w3, b3, 1) + p, 0)
    f = np.concatenate([r3, p], axis=1).mean(axis=(2, 3))
    np.save(os.path.join(out, "yr_float.npy"), (f @ g.T + gc).astype(np.float32))


if __name__ == "__main__":
    main()
