"""Models of opsets 18 to 23 (what torch.onnx's dynamo exporter and recent
converters write), with numpy references, for newer-opsets.test.

    python3 make_newer_opset_models.py OUTDIR

Debian's onnx (1.12) writes any opset number; its checker and reference
do not know these opsets, so the references are numpy's.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(out, name, opset, nodes, inputs, outputs, inits=(), value_info=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits),
                              value_info=list(value_info))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_newer_opset_models")
    m.ir_version = 8
    onnx.save(m, os.path.join(out, name + ".onnx"))


def save(out, name, array, dtype=np.float32):
    np.save(os.path.join(out, name + ".npy"), np.asarray(array).astype(dtype))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def group_norm(x, groups, eps):
    n = x.shape[0]
    g = x.reshape(n, groups, -1)
    mean = g.mean(-1, keepdims=True)
    var = g.var(-1, keepdims=True)
    return ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)


def linear_resize_1d(x, axis, out, scale, coordinate):
    """ONNX's linear Resize along one axis (taps clamped to the edge)."""
    n = x.shape[axis]
    pos = []
    for o in range(out):
        if coordinate == "half_pixel_symmetric":
            adjustment = out / (scale * n)
            pos.append(n / 2 * (1 - adjustment) + (o + 0.5) / scale - 0.5)
        else:
            pos.append((o + 0.5) / scale - 0.5)
    pos = np.array(pos)
    lo = np.floor(pos)
    ratio = pos - lo
    lo = lo.astype(np.int64)
    i0 = np.clip(lo, 0, n - 1)
    i1 = np.clip(lo + 1, 0, n - 1)
    a = np.take(x, i0, axis=axis)
    b = np.take(x, i1, axis=axis)
    shape = [1] * x.ndim
    shape[axis] = out
    r = ratio.reshape(shape)
    return a * (1 - r) + b * r


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(18)

    # Reduce ops of opset 18: axes as an initializer, a Constant node, an
    # empty initializer (all axes), absent with noop_with_empty_axes (the
    # input as it is).
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    model(out, "reduce18", 18,
          [helper.make_node("ReduceMean", ["x", "last"], ["mean"], name="mean", keepdims=1),
           helper.make_node("Constant", [], ["outer"], name="outer_axes",
                            value=numpy_helper.from_array(np.array([0, 2], np.int64))),
           helper.make_node("ReduceMax", ["x", "outer"], ["max"], name="max", keepdims=0),
           helper.make_node("ReduceSumSquare", ["x"], ["sumsq"], name="sumsq", keepdims=0),
           helper.make_node("ReduceProd", ["x", "none"], ["prod"], name="prod"),
           helper.make_node("ReduceL2", ["x", ""], ["same"], name="same",
                            noop_with_empty_axes=1),
           helper.make_node("ReduceLogSumExp", ["x", "middle"], ["lse"], name="lse",
                            keepdims=0)],
          [vi("x", [2, 3, 4])],
          [vi("mean", [2, 3, 1]), vi("max", [3]), vi("sumsq", []), vi("prod", [1, 1, 1]),
           vi("same", [2, 3, 4]), vi("lse", [2, 4])],
          [init("last", np.array([-1], np.int64)), init("none", np.zeros(0, np.int64)),
           init("middle", np.array([1], np.int64))])
    save(out, "reduce18_x", x)
    save(out, "reduce18_mean", x.mean(-1, keepdims=True))
    save(out, "reduce18_max", x.max(axis=(0, 2)))
    save(out, "reduce18_sumsq", np.sum(x * x))
    save(out, "reduce18_prod", np.prod(x).reshape(1, 1, 1))
    save(out, "reduce18_same", x)
    save(out, "reduce18_lse", np.log(np.exp(x).sum(1)))

    # Split-18's num_outputs: an uneven split of a stated dim (7 -> 3, 3, 1)
    # and of one the model does not state (Neg's output: 5 -> 3, 2).
    y = rng.standard_normal((7, 5)).astype(np.float32)
    model(out, "split18", 18,
          [helper.make_node("Split", ["y"], ["a", "b", "c"], name="thirds", axis=0,
                            num_outputs=3),
           helper.make_node("Neg", ["y"], ["n"], name="neg"),
           helper.make_node("Split", ["n"], ["d", "e"], name="halves", axis=-1,
                            num_outputs=2)],
          [vi("y", [7, 5])],
          [vi("a", None), vi("b", None), vi("c", None), vi("d", None), vi("e", None)])
    save(out, "split18_y", y)
    for name, part in zip("abc", (y[0:3], y[3:6], y[6:7])):
        save(out, "split18_" + name, part)
    save(out, "split18_d", -y[:, 0:3])
    save(out, "split18_e", -y[:, 3:5])

    # Pad-18's axes input (pads for the two last axes, one given as -1),
    # with constant pads and with pads the importer cannot read (an Add:
    # each dim's pair is gathered from them); Pad-19's wrap (pads no wider
    # than the input: numpy before 1.25 wraps wider ones wrongly).
    p = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    model(out, "pad18", 19,
          [helper.make_node("Pad", ["p", "pads", "", "axes"], ["q"], name="pad_axes",
                            mode="constant"),
           helper.make_node("Add", ["pads", "zeros"], ["computed_pads"], name="compute"),
           helper.make_node("Pad", ["p", "computed_pads", "value", "axes"], ["r"],
                            name="pad_runtime", mode="constant"),
           helper.make_node("Pad", ["p", "wrap_pads"], ["w"], name="pad_wrap", mode="wrap"),
           helper.make_node("Pad", ["p", "crop_pads"], ["wc"], name="crop_wrap", mode="wrap")],
          [vi("p", [1, 2, 3, 4])],
          [vi("q", None), vi("r", None), vi("w", None), vi("wc", None)],
          [init("pads", np.array([1, 0, 2, 3], np.int64)),
           init("zeros", np.zeros(4, np.int64)),
           init("axes", np.array([2, -1], np.int64)),
           init("value", np.array(0.5, np.float32)),
           init("wrap_pads", np.array([0, 0, 2, 1, 0, 0, 1, 3], np.int64)),
           init("crop_pads", np.array([0, 0, 0, -1, 0, 0, 0, 2], np.int64))])
    save(out, "pad18_p", p)
    save(out, "pad18_q", np.pad(p, [(0, 0), (0, 0), (1, 2), (0, 3)]))
    save(out, "pad18_r", np.pad(p, [(0, 0), (0, 0), (1, 2), (0, 3)], constant_values=0.5))
    save(out, "pad18_w", np.pad(p, [(0, 0), (0, 0), (2, 1), (1, 3)], mode="wrap"))
    # A negative pad crops first; the rest wraps around what is left.
    save(out, "pad18_wc", np.pad(p[..., 1:], [(0, 0), (0, 0), (0, 0), (0, 2)], mode="wrap"))

    # Resize-18's axes (scales and sizes for H and W only), antialias=0;
    # Resize-19's half_pixel_symmetric at a scale of 1.5 (5 -> 7).
    r = rng.standard_normal((1, 2, 3, 5)).astype(np.float32)
    model(out, "resize19", 19,
          [helper.make_node("Resize", ["r", "", "scales"], ["up"], name="up", axes=[2, 3],
                            mode="nearest", antialias=0),
           helper.make_node("Resize", ["r", "", "", "sizes"], ["sized"], name="sized",
                            axes=[-1], mode="nearest"),
           helper.make_node("Resize", ["r", "", "scales15"], ["sym"], name="sym",
                            axes=[3], mode="linear",
                            coordinate_transformation_mode="half_pixel_symmetric")],
          [vi("r", [1, 2, 3, 5])],
          [vi("up", None), vi("sized", None), vi("sym", None)],
          [init("scales", np.array([2, 2], np.float32)),
           init("sizes", np.array([10], np.int64)),
           init("scales15", np.array([1.5], np.float32))])
    save(out, "resize19_r", r)
    save(out, "resize19_up", r.repeat(2, axis=2).repeat(2, axis=3))
    save(out, "resize19_sized", r.repeat(2, axis=3))
    save(out, "resize19_sym", linear_resize_1d(r, 3, 7, 1.5, "half_pixel_symmetric"))

    # Ops new since 17 that compose: Mish (18), Gelu (20, both forms),
    # GroupNormalization with per-group (18) and per-channel (21) scales.
    g = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    gscale = rng.standard_normal(2).astype(np.float32)
    gbias = rng.standard_normal(2).astype(np.float32)
    model(out, "compose20", 20,
          [helper.make_node("Mish", ["g"], ["mish"], name="mish"),
           helper.make_node("Gelu", ["g"], ["gelu"], name="gelu"),
           helper.make_node("Gelu", ["g"], ["gelu_tanh"], name="gelu_tanh",
                            approximate="tanh"),
           helper.make_node("GroupNormalization", ["g", "gscale", "gbias"], ["gn"],
                            name="gn", num_groups=2, epsilon=1e-3)],
          [vi("g", [2, 4, 3, 3])],
          [vi("mish", None), vi("gelu", None), vi("gelu_tanh", None), vi("gn", None)],
          [init("gscale", gscale), init("gbias", gbias)])
    erf = np.vectorize(math.erf)
    save(out, "compose20_g", g)
    save(out, "compose20_mish", g * np.tanh(np.log1p(np.exp(g))))
    save(out, "compose20_gelu", 0.5 * g * (1 + erf(g / math.sqrt(2))))
    save(out, "compose20_gelu_tanh",
         0.5 * g * (1 + np.tanh(math.sqrt(2 / math.pi) * (g + 0.044715 * g ** 3))))
    per_group = group_norm(g, 2, 1e-3).reshape(2, 2, -1)
    save(out, "compose20_gn",
         (per_group * gscale[:, None] + gbias[:, None]).reshape(g.shape))

    cscale = rng.standard_normal(4).astype(np.float32)
    cbias = rng.standard_normal(4).astype(np.float32)
    model(out, "groupnorm21", 21,
          [helper.make_node("GroupNormalization", ["g", "cscale", "cbias"], ["gn"],
                            name="gn", num_groups=2, stash_type=1)],
          [vi("g", [2, 4, 3, 3])], [vi("gn", None)],
          [init("cscale", cscale), init("cbias", cbias)])
    save(out, "groupnorm21_gn",
         group_norm(g, 2, 1e-5) * cscale[None, :, None, None] + cbias[None, :, None, None])
    # The same over a dynamic height and width: its [N, G, -1] view holds
    # the product 2 * H * W.
    model(out, "groupnorm21_hw", 21,
          [helper.make_node("GroupNormalization", ["g", "cscale", "cbias"], ["gn"],
                            name="gn", num_groups=2)],
          [vi("g", [1, 4, "H", "W"])], [vi("gn", [1, 4, "H", "W"])],
          [init("cscale", cscale), init("cbias", cbias)])
    for h, w in ((3, 5), (6, 1)):
        image = rng.standard_normal((1, 4, h, w)).astype(np.float32)
        save(out, f"groupnorm21_hw_x{h}_{w}", image)
        save(out, f"groupnorm21_hw_y{h}_{w}",
             group_norm(image, 2, 1e-5) * cscale[None, :, None, None] + cbias[None, :, None, None])

    # Attributes that do nothing at their values: LpPool-18 ceil_mode=0,
    # AveragePool-19 dilations of 1, Cast-19 saturate; QuantizeLinear-21
    # output_dtype without a zero point; DFT-20's axis input left out (-2).
    s = rng.standard_normal((1, 1, 4, 4)).astype(np.float32)
    model(out, "attrs21", 21,
          [helper.make_node("LpPool", ["s"], ["lp"], name="lp", kernel_shape=[2, 2],
                            strides=[2, 2], p=2, ceil_mode=0),
           helper.make_node("AveragePool", ["s"], ["avg"], name="avg", kernel_shape=[2, 2],
                            dilations=[1, 1]),
           helper.make_node("Cast", ["s"], ["half"], name="cast", to=TensorProto.FLOAT16,
                            saturate=1),
           helper.make_node("QuantizeLinear", ["s", "qscale"], ["q"], name="quantize",
                            output_dtype=TensorProto.INT8),
           helper.make_node("DequantizeLinear", ["q", "qscale"], ["dq"], name="dequantize")],
          [vi("s", [1, 1, 4, 4])],
          [vi("lp", None), vi("avg", None), vi("half", None, TensorProto.FLOAT16),
           vi("dq", None)],
          [init("qscale", np.array(0.02, np.float32))])
    save(out, "attrs21_s", s)
    blocks = s.reshape(1, 1, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5)
    save(out, "attrs21_lp", np.sqrt((blocks ** 2).sum((-1, -2))))
    windows = np.lib.stride_tricks.sliding_window_view(s, (2, 2), axis=(2, 3))
    save(out, "attrs21_avg", windows.mean((-1, -2)))
    save(out, "attrs21_half", s, np.float16)
    save(out, "attrs21_dq", np.clip(np.round(s / np.float32(0.02)), -128, 127) * np.float32(0.02))

    signal = rng.standard_normal((1, 8, 1)).astype(np.float32)
    model(out, "dft20", 20,
          [helper.make_node("DFT", ["signal"], ["spectrum"], name="dft")],
          [vi("signal", [1, 8, 1])], [vi("spectrum", None)])
    spectrum = np.fft.fft(signal[..., 0], axis=1)
    save(out, "dft20_signal", signal)
    save(out, "dft20_spectrum", np.stack([spectrum.real, spectrum.imag], -1))

    # A Reduce-18 inside an If's branches, its axes a constant of the
    # enclosing graph.
    body = lambda op: helper.make_graph(  # noqa: E731
        [helper.make_node(op, ["x", "branch_axes"], ["out_" + op], name="in_" + op,
                          keepdims=0)],
        "branch_" + op, [], [vi("out_" + op, [2, 4])])
    model(out, "branch18", 18,
          [helper.make_node("If", ["cond"], ["picked"], name="branch",
                            then_branch=body("ReduceMean"), else_branch=body("ReduceMin"))],
          [vi("cond", [], TensorProto.BOOL), vi("x", [2, 3, 4])], [vi("picked", [2, 4])],
          [init("branch_axes", np.array([1], np.int64))])
    save(out, "branch18_true", np.array(True), np.bool_)
    save(out, "branch18_false", np.array(False), np.bool_)
    save(out, "branch18_mean", x.mean(1))
    save(out, "branch18_min", x.min(1))

    # Opset 23: RMSNormalization (the last axis; axes 1.. of a stated
    # rank), RotaryEmbedding (4-D in halves with position ids and a partial
    # rotation; 3-D interleaved), Attention (4-D with a float mask and a
    # scale; 3-D grouped heads, causal, softcapped; past keys and values
    # with a bool mask, and the present ones as outputs).
    t = rng.standard_normal((2, 3, 8)).astype(np.float32)
    w8 = rng.standard_normal(8).astype(np.float32)
    w38 = rng.standard_normal((3, 8)).astype(np.float32)
    model(out, "rms23", 23,
          [helper.make_node("RMSNormalization", ["t", "w8"], ["last"], name="last"),
           helper.make_node("RMSNormalization", ["t", "w38"], ["from1"], name="from1", axis=1,
                            epsilon=1e-3)],
          [vi("t", [2, 3, 8])], [vi("last", None), vi("from1", None)],
          [init("w8", w8), init("w38", w38)])
    save(out, "rms23_t", t)
    save(out, "rms23_last", t / np.sqrt((t * t).mean(-1, keepdims=True) + 1e-5) * w8)
    save(out, "rms23_from1", t / np.sqrt((t * t).mean((1, 2), keepdims=True) + 1e-3) * w38)

    def rotary(x, cos, sin, pos, interleaved, dim, heads):
        shape = x.shape
        x = x.transpose(0, 2, 1, 3) if x.ndim == 4 else x.reshape(shape[0], shape[1], heads, -1)
        dim = dim or x.shape[3]
        rot, keep = x[..., :dim], x[..., dim:]
        if pos is not None:
            cos, sin = cos[pos], sin[pos]
        cos, sin = cos[:, :, None, :], sin[:, :, None, :]
        x1, x2 = (rot[..., 0::2], rot[..., 1::2]) if interleaved else np.split(rot, 2, -1)
        real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
        if interleaved:
            rot = np.stack([real, imag], -1).reshape(rot.shape)
        else:
            rot = np.concatenate([real, imag], -1)
        y = np.concatenate([rot, keep], -1)
        return y.reshape(shape) if len(shape) == 3 else y.transpose(0, 2, 1, 3)

    r4 = rng.standard_normal((2, 2, 3, 8)).astype(np.float32)   # [B, H, S, D]
    angles = rng.standard_normal((10, 2)).astype(np.float32)    # rotary dim 4
    pos = np.array([[0, 3, 9], [1, 1, 2]], np.int64)
    r3 = rng.standard_normal((2, 3, 8)).astype(np.float32)      # [B, S, 2 heads * 4]
    angles3 = rng.standard_normal((2, 3, 2)).astype(np.float32)
    model(out, "rotary23", 23,
          [helper.make_node("RotaryEmbedding", ["r4", "cos", "sin", "pos"], ["y4"], name="rope4",
                            rotary_embedding_dim=4),
           helper.make_node("RotaryEmbedding", ["r3", "cos3", "sin3"], ["y3"], name="rope3",
                            interleaved=1, num_heads=2)],
          [vi("r4", [2, 2, 3, 8]), vi("r3", [2, 3, 8])], [vi("y4", None), vi("y3", None)],
          [init("cos", np.cos(angles)), init("sin", np.sin(angles)), init("pos", pos),
           init("cos3", np.cos(angles3)), init("sin3", np.sin(angles3))])
    save(out, "rotary23_r4", r4)
    save(out, "rotary23_r3", r3)
    save(out, "rotary23_y4", rotary(r4, np.cos(angles), np.sin(angles), pos, 0, 4, 0))
    save(out, "rotary23_y3", rotary(r3, np.cos(angles3), np.sin(angles3), None, 1, 0, 2))

    def attention(q, k, v, mask=None, past=None, scale=None, causal=False, qh=None, kvh=None,
                  softcap=0.0):
        three = q.ndim == 3
        if three:
            split = lambda t, h: t.reshape(t.shape[0], t.shape[1], h, -1).transpose(0, 2, 1, 3)  # noqa: E731
            q, k, v = split(q, qh), split(k, kvh), split(v, kvh)
        scale = 1 / np.sqrt(q.shape[3]) if scale is None else scale
        if past is not None:
            k = np.concatenate([past[0], k], 2)
            v = np.concatenate([past[1], v], 2)
        present = (k, v)
        bias = np.zeros((q.shape[2], k.shape[2]), np.float32)
        if causal:
            offset = 0 if past is None else past[0].shape[2]
            i = np.arange(q.shape[2])[:, None] + offset
            bias = np.where(np.arange(k.shape[2])[None, :] > i, -np.inf, 0).astype(np.float32)
        if mask is not None:
            bias = bias + (np.where(mask, 0, -np.inf) if mask.dtype == np.bool_ else mask)
        if q.shape[1] != k.shape[1]:
            k = np.repeat(k, q.shape[1] // k.shape[1], 1)
            v = np.repeat(v, q.shape[1] // v.shape[1], 1)
        s = (q @ k.transpose(0, 1, 3, 2)) * scale
        if softcap > 0:
            s = np.tanh(s / softcap) * softcap
        y = softmax(s + bias) @ v
        if three:
            y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
        return y, present

    q4, k4, v4 = (rng.standard_normal((1, 2, s, 4)).astype(np.float32) for s in (3, 5, 5))
    fmask = rng.standard_normal((3, 5)).astype(np.float32)
    q3 = rng.standard_normal((2, 4, 8)).astype(np.float32)   # 4 query heads of 2
    k3, v3 = (rng.standard_normal((2, 4, 4)).astype(np.float32) for _ in range(2))  # 2 kv heads
    qp = rng.standard_normal((1, 2, 2, 4)).astype(np.float32)
    kp, vp = (rng.standard_normal((1, 2, 2, 4)).astype(np.float32) for _ in range(2))
    pk, pv = (rng.standard_normal((1, 2, 3, 4)).astype(np.float32) for _ in range(2))
    bmask = np.array([[True, False, True, True, True], [True, True, True, False, True]])
    model(out, "attention23", 23,
          [helper.make_node("Attention", ["q4", "k4", "v4", "fmask"], ["a4"], name="masked",
                            scale=0.3),
           helper.make_node("Attention", ["q3", "k3", "v3"], ["a3"], name="grouped",
                            q_num_heads=4, kv_num_heads=2, is_causal=1, softcap=2.0),
           helper.make_node("Attention", ["qp", "kp", "vp", "bmask", "pk", "pv"],
                            ["ap", "present_k", "present_v"], name="cached")],
          [vi("q4", [1, 2, 3, 4]), vi("k4", [1, 2, 5, 4]), vi("v4", [1, 2, 5, 4]),
           vi("q3", [2, 4, 8]), vi("k3", [2, 4, 4]), vi("v3", [2, 4, 4]),
           vi("qp", [1, 2, 2, 4]), vi("kp", [1, 2, 2, 4]), vi("vp", [1, 2, 2, 4]),
           vi("pk", [1, 2, 3, 4]), vi("pv", [1, 2, 3, 4])],
          [vi("a4", None), vi("a3", None), vi("ap", None), vi("present_k", None),
           vi("present_v", None)],
          [init("fmask", fmask), init("bmask", bmask)])
    for name, array in (("q4", q4), ("k4", k4), ("v4", v4), ("q3", q3), ("k3", k3), ("v3", v3),
                        ("qp", qp), ("kp", kp), ("vp", vp), ("pk", pk), ("pv", pv)):
        save(out, "attention23_" + name, array)
    save(out, "attention23_a4", attention(q4, k4, v4, mask=fmask, scale=0.3)[0])
    save(out, "attention23_a3", attention(q3, k3, v3, causal=True, qh=4, kvh=2, softcap=2.0)[0])
    yp, (present_k, present_v) = attention(qp, kp, vp, mask=bmask, past=(pk, pv))
    save(out, "attention23_ap", yp)
    save(out, "attention23_present_k", present_k)
    save(out, "attention23_present_v", present_v)

    # Errors. A node after one the importer expands keeps its index (#1).
    model(out, "bitwise20", 20,
          [helper.make_node("Gelu", ["i"], ["gi"], name="gelu"),
           helper.make_node("BitwiseAnd", ["j", "j"], ["k"], name="and")],
          [vi("i", [4]), vi("j", [4], TensorProto.INT32)], [vi("gi", [4]), vi("k", [4])])
    model(out, "bad_wrap_mode20", 20,
          [helper.make_node("Gelu", ["i"], ["gi"], name="gelu"),
           helper.make_node("Pad", ["gi", "pads"], ["padded"], name="pad", mode="circular")],
          [vi("i", [4])], [vi("padded", [6])],
          [init("pads", np.array([1, 1], np.int64))])
    # Opset 18's per-group scale given per channel: stated (an initializer)
    # and not (a graph input of unknown length, then the InstanceNormalization
    # made from it is the op that says why).
    model(out, "group_scale18", 18,
          [helper.make_node("GroupNormalization", ["x", "s", "s"], ["y"], name="gn",
                            num_groups=2)],
          [vi("x", [1, 4, 3, 3])], [vi("y", None)], [init("s", np.ones(4, np.float32))])
    model(out, "group_scale_input18", 18,
          [helper.make_node("GroupNormalization", ["x", "s", "s"], ["y"], name="gn",
                            num_groups=2)],
          [vi("x", [1, 4, 3, 3]), vi("s", ["n"])], [vi("y", None)])
    model(out, "runtime_axes18", 18,
          [helper.make_node("ReduceMean", ["x", "axes"], ["m"], name="mean")],
          [vi("x", [2, 3]), vi("axes", [1], TensorProto.INT64)], [vi("m", None)])
    model(out, "uneven18", 18,
          [helper.make_node("Split", ["v"], ["a", "b", "c", "d"], name="quarters",
                            num_outputs=4)],
          [vi("v", [5])], [vi("a", None), vi("b", None), vi("c", None), vi("d", None)])
    model(out, "qk_output23", 23,
          [helper.make_node("Attention", ["q", "q", "q"], ["y", "", "", "qk"], name="attend")],
          [vi("q", [1, 2, 3, 4])], [vi("y", None), vi("qk", None)])
    model(out, "nonpad24", 24,
          [helper.make_node("Attention", ["q", "q", "q", "", "", "", "lens"], ["y"],
                            name="attend")],
          [vi("q", [1, 2, 3, 4]), vi("lens", [1], TensorProto.INT64)], [vi("y", None)])
    model(out, "antialias18", 18,
          [helper.make_node("Resize", ["r", "", "half"], ["down"], name="down",
                            mode="linear", antialias=1)],
          [vi("r", [1, 2, 4, 4])], [vi("down", None)],
          [init("half", np.array([1, 1, 0.5, 0.5], np.float32))])

    # Opset 24: Swish at alpha 1 (SiLU) and 0.5; TensorScatter writing a
    # [2, 2, 3, 4] update into a [2, 2, 6, 4] cache at per-item indices,
    # linearly (item 1 from position 3) and circularly (item 1 from
    # position 4: positions 4, 5, 0), and with no indices (at 0) along
    # axis 1 of a 3-D cache.
    rng = np.random.default_rng(24)
    x = rng.standard_normal((2, 5)).astype(np.float32)
    past = rng.standard_normal((2, 2, 6, 4)).astype(np.float32)
    update = rng.standard_normal((2, 2, 3, 4)).astype(np.float32)
    past3 = rng.standard_normal((2, 5, 3)).astype(np.float32)
    update3 = rng.standard_normal((2, 2, 3)).astype(np.float32)
    model(out, "opset24", 24,
          [helper.make_node("Swish", ["x"], ["silu"], name="silu"),
           helper.make_node("Swish", ["x"], ["swish"], name="swish", alpha=0.5),
           helper.make_node("TensorScatter", ["past", "update", "where"], ["linear"],
                            name="write"),
           helper.make_node("TensorScatter", ["past", "update", "where_c"], ["circular"],
                            name="wrap", mode="circular"),
           helper.make_node("TensorScatter", ["past3", "update3"], ["front"], name="front",
                            axis=1)],
          [vi("x", [2, 5]), vi("past", [2, 2, 6, 4]), vi("update", [2, 2, 3, 4]),
           vi("past3", [2, 5, 3]), vi("update3", [2, 2, 3])],
          [vi("silu", [2, 5]), vi("swish", [2, 5]), vi("linear", [2, 2, 6, 4]),
           vi("circular", [2, 2, 6, 4]), vi("front", [2, 5, 3])],
          [init("where", np.array([0, 3], np.int64)),
           init("where_c", np.array([1, 4], np.int64))])
    sigmoid = lambda v: 1 / (1 + np.exp(-v))

    def scatter(cache, new, write, axis, circular=False):
        out_ = cache.copy()
        m = cache.shape[axis]
        for b in range(cache.shape[0]):
            for s_ in range(new.shape[axis]):
                p = write[b] + s_
                p = p % m if circular else p
                dst = [b] + [slice(None)] * (cache.ndim - 1)
                src = [b] + [slice(None)] * (cache.ndim - 1)
                dst[axis], src[axis] = p, s_
                out_[tuple(dst)] = new[tuple(src)]
        return out_
    for name, array in (("x", x), ("past", past), ("update", update), ("past3", past3),
                        ("update3", update3)):
        save(out, "opset24_" + name, array)
    save(out, "opset24_silu", x * sigmoid(x))
    save(out, "opset24_swish", x * sigmoid(0.5 * x))
    save(out, "opset24_linear", scatter(past, update, [0, 3], 2))
    save(out, "opset24_circular", scatter(past, update, [1, 4], 2, circular=True))
    save(out, "opset24_front", scatter(past3, update3, [0, 0], 1))


if __name__ == "__main__":
    main()
