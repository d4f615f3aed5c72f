"""Indexing, selection, quantisation and normalisation ops over dynamic dims
(a sequence length, a height and width), for dynamic-ops.test, with numpy
references at several sizes.

    python3 make_dynamic_op_models.py OUTDIR
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from make_dynamic_models import init, model, vi

n = helper.make_node


def save(out, name, array):
    np.save(os.path.join(out, name + ".npy"), array)


def topk(x, k, axis):
    """Largest k along axis, ties to the lower index (a stable sort)."""
    order = np.argsort(-x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)


def per_token(out, rng):
    """Ops that keep a [1, seq, 4] input's length: GatherElements and
    ScatterElements along seq, TopK along the last dim, Hardmax,
    LpNormalization, OneHot of token ids, two Einsums (one with an
    ellipsis, one whose output is [1, seq, seq])."""
    w = rng.standard_normal((4, 3)).astype(np.float32)
    model(out, "per_token",
          [n("GatherElements", ["x", "idx"], ["gathered"], name="gather", axis=1),
           n("ScatterElements", ["x", "idx", "x"], ["scattered"], name="scatter", axis=1,
             reduction="add"),
           n("TopK", ["x", "two"], ["top", "top_i"], name="top", axis=-1),
           n("Hardmax", ["x"], ["hard"], name="hard", axis=-1),
           n("LpNormalization", ["x"], ["unit"], name="unit", axis=-1, p=2),
           n("OneHot", ["tok", "depth", "onoff"], ["hot"], name="hot", axis=-1),
           n("Einsum", ["x", "w"], ["proj"], name="proj", equation="...d,de->...e"),
           n("Einsum", ["x", "x"], ["scores"], name="scores", equation="bsd,btd->bst")],
          [vi("x", [1, "seq", 4]), vi("idx", [1, "seq", 4], TensorProto.INT64),
           vi("tok", [1, "seq"], TensorProto.INT64)],
          [vi("gathered", [1, "seq", 4]), vi("scattered", [1, "seq", 4]),
           vi("top", [1, "seq", 2]), vi("top_i", [1, "seq", 2], TensorProto.INT64),
           vi("hard", [1, "seq", 4]), vi("unit", [1, "seq", 4]), vi("hot", [1, "seq", 5]),
           vi("proj", [1, "seq", 3]), vi("scores", [1, "seq", "seq"])],
          [init("two", np.array([2], np.int64)), init("depth", np.array(5, np.int64)),
           init("onoff", np.array([-1, 3], np.float32)), init("w", w)])
    for seq in (0, 1, 6):
        x = rng.standard_normal((1, seq, 4)).astype(np.float32)
        # Negative indices count from the end.
        idx = rng.integers(-seq, seq, (1, seq, 4)) if seq else np.zeros((1, 0, 4), np.int64)
        tok = rng.integers(-5, 5, (1, seq))
        scattered = x.copy()
        for i in np.ndindex(idx.shape):
            at = (i[0], idx[i] % seq, i[2])
            scattered[at] += x[i]
        hard = np.zeros_like(x)
        if seq:
            np.put_along_axis(hard, x.argmax(-1)[..., None], 1, -1)
        hot = np.where(np.arange(5) == (tok % 5)[..., None], 3, -1).astype(np.float32)
        top, top_i = topk(x, 2, -1)
        for name, a in (("x", x), ("idx", idx.astype(np.int64)), ("tok", tok.astype(np.int64)),
                        ("gathered", np.take_along_axis(x, idx % max(seq, 1), 1)),
                        ("scattered", scattered), ("top", top), ("top_i", top_i),
                        ("hard", hard), ("unit", x / np.sqrt((x * x).sum(-1, keepdims=True))),
                        ("hot", hot), ("proj", x @ w),
                        ("scores", np.einsum("bsd,btd->bst", x, x))):
            save(out, f"per_token_{name}{seq}", a)


def rows(out, rng):
    """Reads and writes of chosen rows of a [1, seq, 4] input (a cache):
    GatherND with a batch dim, ScatterND and TopK along seq. Each needs
    seq >= 1 (TopK: >= 3)."""
    model(out, "rows",
          [n("GatherND", ["x", "at"], ["picked"], name="pick", batch_dims=1),
           n("ScatterND", ["x", "where", "rows"], ["written"], name="write"),
           n("TopK", ["x", "three"], ["best", "best_i"], name="best", axis=1, largest=0)],
          [vi("x", [1, "seq", 4]), vi("at", [1, 2, 1], TensorProto.INT64),
           vi("where", [2, 2], TensorProto.INT64), vi("rows", [2, 4])],
          [vi("picked", [1, 2, 4]), vi("written", [1, "seq", 4]),
           vi("best", [1, 3, 4]), vi("best_i", [1, 3, 4], TensorProto.INT64)],
          [init("three", np.array([3], np.int64))])
    for seq in (3, 8):
        x = rng.standard_normal((1, seq, 4)).astype(np.float32)
        at = np.array([[[seq - 1], [-2]]], np.int64)
        where = np.array([[0, 1], [0, -1]], np.int64)
        rows_ = rng.standard_normal((2, 4)).astype(np.float32)
        written = x.copy()
        written[0, 1] = rows_[0]
        written[0, seq - 1] = rows_[1]
        best, best_i = topk(-x, 3, 1)
        for name, a in (("x", x), ("at", at), ("where", where), ("rows", rows_),
                        ("picked", x[0][at[0, :, 0] % seq][None]), ("written", written),
                        ("best", -best), ("best_i", best_i)):
            save(out, f"rows_{name}{seq}", a)
    save(out, "rows_x2", np.zeros((1, 2, 4), np.float32))


def cross(out, rng):
    """Two lengths: cross-attention of [1, S, 4] queries over [1, T, 4]
    keys and values as two Einsums ([1, S, T] scores), and a
    GatherElements of the keys at [1, S, 4] indices (needs T >= 1)."""
    model(out, "cross",
          [n("Einsum", ["q", "kv"], ["scores"], name="scores", equation="bqd,bkd->bqk"),
           n("Softmax", ["scores"], ["weights"], name="softmax", axis=-1),
           n("Einsum", ["weights", "kv"], ["att"], name="mix", equation="bqk,bkd->bqd"),
           n("GatherElements", ["kv", "idx"], ["picked"], name="pick", axis=1)],
          [vi("q", [1, "S", 4]), vi("kv", [1, "T", 4]), vi("idx", [1, "S", 4], TensorProto.INT64)],
          [vi("att", [1, "S", 4]), vi("picked", [1, "S", 4])])
    for s, t in ((3, 5), (4, 1)):
        q = rng.standard_normal((1, s, 4)).astype(np.float32)
        kv = rng.standard_normal((1, t, 4)).astype(np.float32)
        idx = rng.integers(0, t, (1, s, 4))
        e = np.exp(np.einsum("bqd,bkd->bqk", q, kv))
        for name, a in (("q", q), ("kv", kv), ("idx", idx), ("picked", np.take_along_axis(kv, idx, 1)),
                        ("att", np.einsum("bqk,bkd->bqd", e / e.sum(-1, keepdims=True), kv))):
            save(out, f"cross_{name}{s}_{t}", a)
    save(out, "cross_q2_0", np.zeros((1, 2, 4), np.float32))
    save(out, "cross_kv2_0", np.zeros((1, 0, 4), np.float32))
    save(out, "cross_idx2_0", np.zeros((1, 2, 4), np.int64))


def qdq(out, rng):
    """QuantizeLinear to uint8 (an output) and back over [1, seq, 8]."""
    model(out, "qdq_seq",
          [n("QuantizeLinear", ["x", "scale", "zp"], ["q"], name="quant"),
           n("DequantizeLinear", ["q", "scale", "zp"], ["y"], name="dequant")],
          [vi("x", [1, "seq", 8])],
          [vi("q", [1, "seq", 8], TensorProto.UINT8), vi("y", [1, "seq", 8])],
          [init("scale", np.array(0.05, np.float32)), init("zp", np.array(3, np.uint8))])
    # Per-axis scales along the length: refused.
    model(out, "qdq_axis",
          [n("Abs", ["x"], ["a"], name="abs"),
           n("ReduceMax", ["a"], ["scale"], name="range", axes=[0, 2], keepdims=0),
           n("QuantizeLinear", ["x", "scale"], ["q"], name="quant", axis=1)],
          [vi("x", [1, "seq", 8])], [vi("q", [1, "seq", 8], TensorProto.UINT8)])
    for seq in (1, 5):
        x = (rng.standard_normal((1, seq, 8)) * 4).astype(np.float32)
        q = np.clip(np.round(x / np.float32(0.05)) + 3, 0, 255).astype(np.uint8)
        save(out, f"qdq_seq_x{seq}", x)
        save(out, f"qdq_seq_q{seq}", q)
        save(out, f"qdq_seq_y{seq}", ((q.astype(np.float32) - 3) * np.float32(0.05)))


def lrn(out, rng):
    """LRN across channels over a dynamic height and width."""
    model(out, "lrn_hw", [n("LRN", ["x"], ["y"], name="lrn", size=3, alpha=0.5, beta=0.75,
                            bias=2.0)],
          [vi("x", [1, 5, "H", "W"])], [vi("y", [1, 5, "H", "W"])])
    for h, w in ((2, 3), (1, 1)):
        x = rng.standard_normal((1, 5, h, w)).astype(np.float32)
        sq = np.pad(x * x, ((0, 0), (1, 1), (0, 0), (0, 0)))
        window = sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:]
        save(out, f"lrn_hw_x{h}_{w}", x)
        save(out, f"lrn_hw_y{h}_{w}", (x / (2.0 + 0.5 / 3 * window) ** 0.75).astype(np.float32))


def conv_transpose(x, w, b, stride, pads, out_pad, group=1, dilation=1):
    """ONNX's ConvTranspose (2-D), scattering each input element."""
    n, c, h, wd = x.shape
    cg, mg, kh, kw = w.shape[0] // group, w.shape[1], w.shape[2], w.shape[3]
    full = [(s - 1) * stride + (k - 1) * dilation + 1 + p
            for s, k, p in ((h, kh, out_pad[0]), (wd, kw, out_pad[1]))]
    y = np.zeros((n, mg * group, full[0], full[1]), np.float64)
    for g in range(group):
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for e in range(kw):
                        y[:, g * mg:(g + 1) * mg, i * stride + a * dilation,
                          j * stride + e * dilation] += np.einsum(
                              "nc,cm->nm", x[:, g * cg:(g + 1) * cg, i, j],
                              w[g * cg:(g + 1) * cg, :, a, e])
    y = y[:, :, pads[0]:full[0] - pads[2], pads[1]:full[1] - pads[3]]
    if b is not None:
        y += b[None, :, None, None]
    return y.astype(np.float32)


def upsample(out, rng):
    """ConvTranspose over a dynamic height and width: a decoder's 2x
    upsampling (kernel 3, stride 2, pads 1, output_padding 1: [1, 3, 2H,
    2W]) and a grouped, dilated one of stride 1 ([1, 4, H + 2, W + 2])."""
    w1 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b1 = rng.standard_normal(3).astype(np.float32)
    w2 = rng.standard_normal((4, 2, 2, 2)).astype(np.float32)
    model(out, "upsample_hw",
          [n("ConvTranspose", ["x", "w1", "b1"], ["up"], name="up", kernel_shape=[3, 3],
             strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
           n("ConvTranspose", ["x", "w2"], ["wide"], name="wide", group=2, dilations=[2, 2])],
          [vi("x", [1, 4, "H", "W"])],
          [vi("up", [1, 3, "2*H", "2*W"]), vi("wide", [1, 4, "H+2", "W+2"])],
          [init("w1", w1), init("b1", b1), init("w2", w2)])
    for h, w in ((3, 5), (1, 1), (6, 2)):
        x = rng.standard_normal((1, 4, h, w)).astype(np.float32)
        save(out, f"upsample_hw_x{h}_{w}", x)
        save(out, f"upsample_hw_up{h}_{w}", conv_transpose(x, w1, b1, 2, [1, 1, 1, 1], [1, 1]))
        save(out, f"upsample_hw_wide{h}_{w}",
             conv_transpose(x, w2, None, 1, [0, 0, 0, 0], [0, 0], group=2, dilation=2))
    save(out, "upsample_hw_x0_3", np.zeros((1, 4, 0, 3), np.float32))
    # A weight whose kernel size is a dynamic dim: refused.
    model(out, "conv_kernel_dim",
          [n("ConvTranspose", ["x", "w"], ["up"], name="up", strides=[2, 2])],
          [vi("x", [1, 4, "H", "W"]), vi("w", [4, 3, "k", "k"])], [vi("up", [1, 3, None, None])])
    # Pads from output_shape over a dynamic size: refused.
    model(out, "upsample_shape",
          [n("ConvTranspose", ["x", "w1"], ["up"], name="up", strides=[2, 2],
             output_shape=[8, 8])],
          [vi("x", [1, 4, "H", "W"])], [vi("up", [1, 3, 8, 8])], [init("w1", w1)])


def conv(x, w, b, stride, pads, group=1, dilation=(1, 1)):
    """ONNX's Conv (2-D), tap by tap; pads [top, left, bottom, right]."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    n_, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    mg = m // group
    oh = (h - (kh - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (wd - (kw - 1) * dilation[1] - 1) // stride[1] + 1
    y = np.zeros((n_, m, oh, ow))
    for g in range(group):
        for a in range(kh):
            for e in range(kw):
                r0, c0 = a * dilation[0], e * dilation[1]
                window = x[:, g * cg:(g + 1) * cg, r0:r0 + (oh - 1) * stride[0] + 1:stride[0],
                           c0:c0 + (ow - 1) * stride[1] + 1:stride[1]]
                y[:, g * mg:(g + 1) * mg] += np.einsum(
                    "nchw,mc->nmhw", window, w[g * mg:(g + 1) * mg, :, a, e])
    if b is not None:
        y += b[None, :, None, None]
    return y.astype(np.float32)


def strided(out, rng):
    """Strided convs over a dynamic height and width, which run as a 1x1
    conv over the flat pixels of their windows: a 3x3 stride-2 conv with
    a bias, a 1x1 stride-2 downsample, a grouped 5x5 one of strides (3,
    2) with a dilated width and uneven pads, and a depthwise 3x3."""
    ws = [rng.standard_normal(shape).astype(np.float32)
          for shape in ((6, 4, 3, 3), (5, 4, 1, 1), (6, 2, 5, 5), (4, 1, 3, 3))]
    b0 = rng.standard_normal(6).astype(np.float32)
    model(out, "strided",
          [n("Conv", ["x", "w0", "b0"], ["s2"], name="s2", strides=[2, 2], pads=[1, 1, 1, 1]),
           n("Conv", ["x", "w1"], ["down"], name="down", strides=[2, 2]),
           n("Conv", ["x", "w2"], ["odd"], name="odd", group=2, strides=[3, 2],
             dilations=[1, 2], pads=[2, 1, 0, 3]),
           n("Conv", ["x", "w3"], ["dw"], name="dw", group=4, strides=[2, 2],
             pads=[1, 1, 1, 1])],
          [vi("x", [1, 4, "H", "W"])],
          [vi(name, [1, c, None, None]) for name, c in
           (("s2", 6), ("down", 5), ("odd", 6), ("dw", 4))],
          [init("w0", ws[0]), init("b0", b0), init("w1", ws[1]), init("w2", ws[2]),
           init("w3", ws[3])])
    for h, w in ((5, 5), (8, 13), (17, 6), (3, 5)):
        x = rng.standard_normal((1, 4, h, w)).astype(np.float32)
        save(out, f"strided_x{h}_{w}", x)
        save(out, f"strided_s2{h}_{w}", conv(x, ws[0], b0, (2, 2), [1, 1, 1, 1]))
        save(out, f"strided_down{h}_{w}", conv(x, ws[1], None, (2, 2), [0, 0, 0, 0]))
        save(out, f"strided_odd{h}_{w}",
             conv(x, ws[2], None, (3, 2), [2, 1, 0, 3], group=2, dilation=(1, 2)))
        save(out, f"strided_dw{h}_{w}", conv(x, ws[3], None, (2, 2), [1, 1, 1, 1], group=4))
    save(out, "strided_x2_5", rng.standard_normal((1, 4, 2, 5)).astype(np.float32))


def same(out, rng):
    """Stride-1 convs over a dynamic height and width, which run over the
    padded input's flat rows read through one view whose KH rows overlap
    (kiln-view-row-stacks): a 3x3 conv with a bias and pads 1 (its pad made
    with one more row, so its output needs no copy), a depthwise 3x3, a
    5x3 one with uneven pads, and a 3x3 one without pads (rows of the
    input itself)."""
    ws = [rng.standard_normal(shape).astype(np.float32)
          for shape in ((6, 4, 3, 3), (4, 1, 3, 3), (3, 4, 5, 3), (2, 4, 3, 3))]
    b0 = rng.standard_normal(6).astype(np.float32)
    model(out, "same",
          [n("Conv", ["x", "w0", "b0"], ["full"], name="full", pads=[1, 1, 1, 1]),
           n("Conv", ["x", "w1"], ["dw"], name="dw", group=4, pads=[1, 1, 1, 1]),
           n("Conv", ["x", "w2"], ["tall"], name="tall", pads=[3, 0, 1, 2]),
           n("Conv", ["x", "w3"], ["valid"], name="valid")],
          [vi("x", [1, 4, "H", "W"])],
          [vi(name, [1, c, None, None]) for name, c in
           (("full", 6), ("dw", 4), ("tall", 3), ("valid", 2))],
          [init("w0", ws[0]), init("b0", b0), init("w1", ws[1]), init("w2", ws[2]),
           init("w3", ws[3])])
    for h, w in ((3, 3), (9, 14), (20, 5)):
        x = rng.standard_normal((1, 4, h, w)).astype(np.float32)
        save(out, f"same_x{h}_{w}", x)
        save(out, f"same_full{h}_{w}", conv(x, ws[0], b0, (1, 1), [1, 1, 1, 1]))
        save(out, f"same_dw{h}_{w}", conv(x, ws[1], None, (1, 1), [1, 1, 1, 1], group=4))
        save(out, f"same_tall{h}_{w}", conv(x, ws[2], None, (1, 1), [3, 0, 1, 2]))
        save(out, f"same_valid{h}_{w}", conv(x, ws[3], None, (1, 1), [0, 0, 0, 0]))


def pool3d(out, rng):
    """A 3-D max and average pool (kernel 2, stride 2) over dynamic D, H
    and W: each dim's windows are pieces of the kernel, and three dims of
    them multiply (kiln-strip-dynamic-dims keeps their number down)."""
    model(out, "pool3d",
          [n("MaxPool", ["x"], ["mx"], name="max", kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
           n("AveragePool", ["x"], ["avg"], name="avg", kernel_shape=[2, 2, 2], strides=[2, 2, 2])],
          [vi("x", [1, 3, "D", "H", "W"])], [vi("mx", [1, 3, None, None, None]),
                                             vi("avg", [1, 3, None, None, None])])
    for d, h, w in ((4, 6, 9), (2, 3, 2)):
        x = rng.standard_normal((1, 3, d, h, w)).astype(np.float32)
        v = x[:, :, :d // 2 * 2, :h // 2 * 2, :w // 2 * 2].reshape(
            1, 3, d // 2, 2, h // 2, 2, w // 2, 2)
        save(out, f"pool3d_x{d}_{h}_{w}", x)
        save(out, f"pool3d_max{d}_{h}_{w}", v.max(axis=(3, 5, 7)))
        save(out, f"pool3d_avg{d}_{h}_{w}", v.mean(axis=(3, 5, 7)).astype(np.float32))


def int_matmul(out, rng):
    """MatMulInteger with dynamic M, K and N and zero points: its shifted
    [M, K] operand was once sized like the [M, N] result (out of bounds)."""
    model(out, "int_matmul",
          [n("MatMulInteger", ["a", "b", "za", "zb"], ["y"], name="mm")],
          [vi("a", [1, "M", "K"], TensorProto.UINT8), vi("b", [1, "K", "N"], TensorProto.UINT8)],
          [vi("y", [1, "M", "N"], TensorProto.INT32)],
          [init("za", np.array(7, np.uint8)), init("zb", np.array(200, np.uint8))])
    for m, k, nn in ((2, 4, 3), (5, 17, 9)):
        a = rng.integers(0, 256, (1, m, k)).astype(np.uint8)
        b = rng.integers(0, 256, (1, k, nn)).astype(np.uint8)
        save(out, f"int_matmul_a{m}_{k}_{nn}", a)
        save(out, f"int_matmul_b{m}_{k}_{nn}", b)
        save(out, f"int_matmul_y{m}_{k}_{nn}",
             (a.astype(np.int32) - 7) @ (b.astype(np.int32) - 200))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    per_token(out, rng)
    rows(out, rng)
    cross(out, rng)
    qdq(out, rng)
    lrn(out, rng)
    upsample(out, rng)
    strided(out, rng)
    same(out, rng)
    pool3d(out, rng)
    int_matmul(out, rng)


if __name__ == "__main__":
    main()
