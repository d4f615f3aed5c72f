"""MatMul/Gemm/Conv models that exercise every tile shape of
kiln-vectorize-contractions (full tiles, row and column remainders, a
partial last vector, no M dim, broadcast batches, strided, dilated, grouped
and depthwise convolutions, 1-D and 3-D; Gemm's transposed constant
weights; 1x1 convolutions, flattened to one spatial dim where they can be;
epilogues folded into the kernels), and innermost reductions of
kiln-vectorize-elementwise, with float64 numpy references.

    python3 make_kernel_models.py OUTDIR

writes OUTDIR/NAME.onnx, NAME_x.npy and NAME_y.npy per model and
OUTDIR/names.txt (one model a line, with its absolute tolerance where it
is not the default). Weights are initializers, as in exported models.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def save(out, name, nodes, x, weights, y):
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()]
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out, name + ".onnx"))
    np.save(os.path.join(out, name + "_x.npy"), x.astype(np.float32))
    np.save(os.path.join(out, name + "_y.npy"), y.astype(np.float32))
    return name


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def conv_ref(x, w, b, strides, dilations, pads, group):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    sp = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + sp]) for i in range(sp)])
    n, c = x.shape[:2]
    m = w.shape[0]
    k = w.shape[2:]
    out = [(x.shape[2 + i] - dilations[i] * (k[i] - 1) - 1) // strides[i] + 1 for i in range(sp)]
    y = np.zeros([n, m] + out)
    cg, mg = c // group, m // group
    for g in range(group):
        for idx in np.ndindex(*k):
            sl = tuple(slice(idx[i] * dilations[i],
                             idx[i] * dilations[i] + strides[i] * (out[i] - 1) + 1, strides[i])
                       for i in range(sp))
            patch = x[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            wk = w[(slice(g * mg, (g + 1) * mg), slice(None)) + idx]
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", patch, wk)
    if b is not None:
        y += b.astype(np.float64).reshape([1, m] + [1] * sp)
    return y


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    names = []
    # MatMul x[M, K] @ w[K, N]: full tiles, remainders in M and N, a short
    # last vector, N below one vector, M = 1.
    for m, k, n in [(12, 32, 64), (13, 17, 50), (7, 5, 3), (1, 40, 70), (30, 9, 129)]:
        x, w = rand(m, k), rand(k, n)
        names.append(save(out, "matmul_%dx%dx%d" % (m, k, n),
                          [helper.make_node("MatMul", ["x", "w"], ["y"])], x, {"w": w},
                          x.astype(np.float64) @ w))
    # Batched with a broadcast weight, and a 1-D weight (no N dim left).
    x, w = rand(2, 3, 5, 11), rand(11, 19)
    names.append(save(out, "matmul_batched", [helper.make_node("MatMul", ["x", "w"], ["y"])],
                      x, {"w": w}, x.astype(np.float64) @ w))
    x, w = rand(7, 1, 9), rand(9, 20)
    names.append(save(out, "matmul_rows_in_batch", [helper.make_node("MatMul", ["x", "w"], ["y"])],
                      x, {"w": w}, x.astype(np.float64) @ w))
    x, w = rand(6, 10), rand(10)
    names.append(save(out, "matmul_vector", [helper.make_node("MatMul", ["x", "w"], ["y"])],
                      x, {"w": w}, x.astype(np.float64) @ w))
    # Gemm with bias (as init) and alpha/beta.
    x, w, c = rand(9, 21), rand(21, 35), rand(35)
    names.append(save(out, "gemm_bias", [helper.make_node("Gemm", ["x", "w", "c"], ["y"],
                                                          alpha=0.5, beta=2.0)],
                      x, {"w": w, "c": c}, 0.5 * (x.astype(np.float64) @ w) + 2.0 * c))
    # Gemm with constant weights in [N, K] (torch's Linear): transposed at
    # compile time.
    x, w, c = rand(5, 33), rand(70, 33), rand(70)
    names.append(save(out, "gemm_transb", [helper.make_node("Gemm", ["x", "w", "c"], ["y"],
                                                            transB=1)],
                      x, {"w": w, "c": c}, x.astype(np.float64) @ w.T + c))
    # Convolutions: (input shape, weight shape, strides, dilations, pads, group, bias).
    convs = [
        ("conv3x3", (1, 8, 20, 20), (16, 8, 3, 3), [1, 1], [1, 1], [1, 1, 1, 1], 1, True),
        ("conv3x3_s2", (2, 5, 17, 19), (9, 5, 3, 3), [2, 2], [1, 1], [1, 1, 1, 1], 1, True),
        ("conv_s3_dil2", (1, 3, 23, 29), (7, 3, 3, 2), [3, 3], [2, 2], [0, 2, 1, 0], 1, False),
        ("conv1x1", (1, 24, 7, 7), (40, 24, 1, 1), [1, 1], [1, 1], [0, 0, 0, 0], 1, True),
        ("conv1x1_padded", (2, 6, 7, 5), (10, 6, 1, 1), [1, 1], [1, 1], [1, 0, 1, 2], 1, False),
        ("conv1x1_s2", (1, 6, 9, 9), (10, 6, 1, 1), [2, 2], [1, 1], [0, 0, 0, 0], 1, True),
        ("conv_grouped", (1, 12, 9, 33), (18, 4, 3, 3), [1, 1], [1, 1], [1, 1, 1, 1], 3, True),
        ("conv_depthwise_s2", (1, 16, 15, 15), (16, 1, 3, 3), [2, 2], [1, 1], [1, 1, 1, 1], 16,
         True),
        # Depthwise: tiles of output rows against one broadcast weight (6
        # rows of 16 lanes and a partial tile, 7 rows of a 7-wide map).
        ("conv_depthwise_3x3", (1, 3, 20, 37), (3, 1, 3, 3), [1, 1], [1, 1], [1, 1, 1, 1], 3,
         True),
        ("conv_depthwise_5x5", (1, 24, 7, 7), (24, 1, 5, 5), [1, 1], [1, 1], [2, 2, 2, 2], 24,
         True),
        ("conv1d", (3, 4, 50), (6, 4, 5), [1], [1], [2, 2], 1, True),
        ("conv_patch16", (1, 3, 64, 80), (12, 3, 16, 16), [16, 16], [1, 1], [0, 0, 0, 0], 1,
         True),
        ("conv3d", (1, 2, 5, 6, 21), (4, 2, 3, 3, 3), [1, 1, 2], [1, 1, 1], [1, 1, 1, 1, 1, 1],
         1, False),
        # Short or strided output rows with enough channels and K >= 128:
        # vectors along the output channels (the Channels kernels), with a
        # partial last vector, tiles of N and M with remainders, a batch.
        ("conv_channels_7x7", (1, 32, 7, 7), (40, 32, 3, 3), [1, 1], [1, 1], [1, 1, 1, 1], 1,
         True),
        ("conv_channels_s2", (2, 16, 15, 15), (70, 16, 3, 3), [2, 2], [1, 1], [1, 1, 1, 1], 1,
         False),
        ("conv_channels_1x1", (1, 160, 7, 7), (32, 160, 1, 1), [1, 1], [1, 1], [0, 0, 0, 0], 1,
         True),
        # A stem (3 channels, 7x7 stride 2, K = 147): 20 output channels, a
        # row of 13 in tiles of M with a remainder, each tile transposed
        # and stored a channel at a time.
        ("conv_channels_stem", (1, 3, 31, 31), (20, 3, 7, 7), [2, 2], [1, 1], [3, 3, 3, 3], 1,
         True),
        # Winograd (with 256-bit vectors and up): F(2x2, 3x3) with an odd width
        # (a last column of tiles half used), and a batch with asymmetric
        # pads, odd rows and channels that fill no whole vector.
        ("winograd_14x13", (1, 64, 14, 13), (64, 64, 3, 3), [1, 1], [1, 1], [1, 1, 1, 1], 1,
         True),
        ("winograd_pads", (2, 64, 9, 9), (72, 64, 3, 3), [1, 1], [1, 1], [0, 1, 2, 0], 1,
         False),
        # F(4x4, 3x3) from 28x28 outputs on: 30x29 in 8x8 tiles of 4 (the
        # last tile row and column partly used), and a batch with
        # asymmetric pads (28x30).
        ("winograd4_30x29", (1, 64, 30, 29), (64, 64, 3, 3), [1, 1], [1, 1], [1, 1, 1, 1], 1,
         True),
        ("winograd4_pads", (2, 64, 28, 31), (72, 64, 3, 3), [1, 1], [1, 1], [0, 1, 2, 0], 1,
         False),
    ]
    for name, xs, ws, strides, dil, pads, group, has_bias in convs:
        x, w = rand(*xs), rand(*ws)
        if name.startswith("winograd"):
            # Weights at the scale of a trained net's (fan-in), so that
            # outputs are O(1) and the tolerance is about the transforms'
            # rounding, not a 576-term sum's.
            w = (w / np.sqrt(ws[1] * 9)).astype(np.float32)
        b = rand(ws[0]) if has_bias else None
        inputs = ["x", "w"] + (["b"] if has_bias else [])
        weights = {"w": w}
        if has_bias:
            weights["b"] = b
        node = helper.make_node("Conv", inputs, ["y"], strides=strides, dilations=dil,
                                pads=pads, group=group, kernel_shape=list(ws[2:]))
        names.append(save(out, name, [node], x, weights,
                          conv_ref(x, w, b, strides, dil, pads, group)))
    def residual_relu(name, channels, size):
        """relu(conv3x3(x) + b + x), channels in and out, size x size."""
        x, w = rand(1, channels, size, size), rand(channels, channels, 3, 3)
        w = (w / np.sqrt(channels * 9)).astype(np.float32)
        b = rand(channels)
        conv = conv_ref(x, w, b, [1, 1], [1, 1], [1, 1, 1, 1], 1)
        return save(out, name, [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1],
                             kernel_shape=[3, 3]),
            helper.make_node("Add", ["c", "x"], ["s"]),
            helper.make_node("Relu", ["s"], ["y"])], x, {"w": w, "b": b},
            np.maximum(conv + x.astype(np.float64), 0))

    # Epilogues the kernels fold in: bias, ReLU, a residual add.
    names.append(residual_relu("conv_residual_relu", 8, 9))
    # A chain: each ReLU is folded into the conv before it, out of place,
    # and the memory plan may put its result where that conv's input was.
    x = rand(1, 8, 12, 12)
    w1, w2, w3 = (rand(8, 8, 3, 3) * 0.15 for _ in range(3))
    pads = [1, 1, 1, 1]
    a = np.maximum(conv_ref(x, w1, None, [1, 1], [1, 1], pads, 1), 0)
    r = np.maximum(conv_ref(a, w2, None, [1, 1], [1, 1], pads, 1), 0)
    names.append(save(out, "conv_chain_relu", [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=pads, kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c1"], ["a"]),
        helper.make_node("Conv", ["a", "w2"], ["c2"], pads=pads, kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c2"], ["r"]),
        helper.make_node("Conv", ["r", "w3"], ["y"], pads=pads, kernel_shape=[3, 3])],
        x, {"w1": w1, "w2": w2, "w3": w3}, conv_ref(r, w3, None, [1, 1], [1, 1], pads, 1)))
    # Epilogues stored into the next conv's padded input (rows of 33 >= 32
    # are padded in place): a 3x3 conv's bias and ReLU, and a flattened 1x1
    # conv's (the kernels rebuild it on the window's shape).
    x = rand(1, 6, 5, 33)
    w1, w2 = rand(10, 6, 3, 3) * 0.2, rand(8, 10, 3, 3) * 0.2
    w3, w4 = rand(12, 8, 1, 1) * 0.3, rand(4, 12, 3, 3) * 0.2
    b1, b3 = rand(10), rand(12)
    a = np.maximum(conv_ref(x, w1, b1, [1, 1], [1, 1], pads, 1), 0)
    c = conv_ref(a, w2, None, [1, 1], [1, 1], pads, 1)
    r = np.maximum(conv_ref(c, w3, b3, [1, 1], [1, 1], [0, 0, 0, 0], 1), 0)
    names.append(save(out, "conv_epilogue_into_pad", [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=pads, kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c1"], ["a"]),
        helper.make_node("Conv", ["a", "w2"], ["c"], pads=pads, kernel_shape=[3, 3]),
        helper.make_node("Conv", ["c", "w3", "b3"], ["c3"], kernel_shape=[1, 1]),
        helper.make_node("Relu", ["c3"], ["r"]),
        helper.make_node("Conv", ["r", "w4"], ["y"], pads=pads, kernel_shape=[3, 3])],
        x, {"w1": w1, "b1": b1, "w2": w2, "w3": w3, "b3": b3, "w4": w4},
        conv_ref(r, w4, None, [1, 1], [1, 1], pads, 1)))
    # A squeeze-and-excitation block: the gate's per-channel scale of x is
    # moved onto the next 1x1 conv's weights (onnx-fold-channel-scale).
    x = rand(1, 12, 9, 11)
    w1, b1, w2, b2, w3 = rand(3, 12, 1, 1), rand(3), rand(12, 3, 1, 1), rand(12), rand(7, 12, 1, 1)
    x64 = x.astype(np.float64)
    pooled = x64.mean((2, 3), keepdims=True)
    hidden = np.maximum(conv_ref(pooled, w1, b1, [1, 1], [1, 1], [0, 0, 0, 0], 1), 0)
    gate = 1 / (1 + np.exp(-conv_ref(hidden, w2, b2, [1, 1], [1, 1], [0, 0, 0, 0], 1)))
    names.append(save(out, "squeeze_excite", [
        helper.make_node("GlobalAveragePool", ["x"], ["p"]),
        helper.make_node("Conv", ["p", "w1", "b1"], ["h0"], kernel_shape=[1, 1]),
        helper.make_node("Relu", ["h0"], ["h"]),
        helper.make_node("Conv", ["h", "w2", "b2"], ["g0"], kernel_shape=[1, 1]),
        helper.make_node("Sigmoid", ["g0"], ["g"]),
        helper.make_node("Mul", ["x", "g"], ["s"]),
        helper.make_node("Conv", ["s", "w3"], ["y"], kernel_shape=[1, 1])],
        x, {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3},
        conv_ref(x64 * gate, w3, None, [1, 1], [1, 1], [0, 0, 0, 0], 1)))
    # The same on the Channels kernels (16x5x5 outputs, K = 144): the
    # residual is gathered along the channels.
    names.append(residual_relu("conv_channels_residual_relu", 16, 5))
    names.append(residual_relu("winograd_residual_relu", 64, 8))
    names.append(residual_relu("winograd4_residual_relu", 64, 28))
    x, w, c = rand(4, 20), rand(20, 30), rand(30)
    names.append(save(out, "gemm_relu", [
        helper.make_node("Gemm", ["x", "w", "c"], ["g"]),
        helper.make_node("Relu", ["g"], ["y"])], x, {"w": w, "c": c},
        np.maximum(x.astype(np.float64) @ w + c, 0)))
    # Reductions along the innermost dim, vectorised by
    # kiln-vectorize-elementwise: softmax then LayerNorm (max, exp-sum,
    # mean, variance; 37 = two vectors of 16 and a tail), max/min/mean, and
    # a global average pool (7x7: one partial vector per row).
    x, g, b = rand(3, 5, 37) * 3, rand(37), rand(37)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(-1, keepdims=True))
    sm = e / e.sum(-1, keepdims=True)
    mu = sm.mean(-1, keepdims=True)
    var = ((sm - mu) ** 2).mean(-1, keepdims=True)
    names.append(save(out, "softmax_layernorm", [
        helper.make_node("Softmax", ["x"], ["s"], axis=-1),
        helper.make_node("LayerNormalization", ["s", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
        x, {"g": g, "b": b}, (sm - mu) / np.sqrt(var + 1e-5) * g + b))
    x = rand(4, 6, 37)
    x64 = x.astype(np.float64)
    names.append(save(out, "reduce_max_min_mean", [
        helper.make_node("ReduceMax", ["x"], ["a"], axes=[-1]),
        helper.make_node("ReduceMin", ["x"], ["c"], axes=[-1]),
        helper.make_node("ReduceMean", ["x"], ["d"], axes=[-1]),
        helper.make_node("Sum", ["a", "c", "d"], ["y"])], x, {},
        x64.max(-1, keepdims=True) + x64.min(-1, keepdims=True) + x64.mean(-1, keepdims=True)))
    x = rand(2, 20, 7, 7)
    names.append(save(out, "global_average_pool", [
        helper.make_node("GlobalAveragePool", ["x"], ["y"])], x, {},
        x.astype(np.float64).mean((2, 3), keepdims=True)))
    # Pooling windows, vectorised along the output rows with the window
    # loops inside: a stride-2 3x3 max pool (gathers) with padding, and a
    # 2x2 average pool; 37 and 18 output columns leave tails.
    x = rand(2, 5, 75, 40)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-np.inf)
    mp = np.full((2, 5, 38, 20), -np.inf)
    for i in range(3):
        for j in range(3):
            mp = np.maximum(mp, xp[:, :, i:i + 75:2, j:j + 39:2][:, :, :38, :20])
    names.append(save(out, "maxpool_s2", [
        helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1])], x, {}, mp))
    x = rand(1, 3, 20, 37)
    x64 = x.astype(np.float64)[:, :, :, :36]
    names.append(save(out, "avgpool_2x2", [
        helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
        x, {}, x64.reshape(1, 3, 10, 2, 18, 2).mean((3, 5))))
    # A transpose (NCHW -> NHWC, as convnext's blocks do) feeding an add
    # along the new last dim.
    x, b = rand(2, 19, 7, 5), rand(19)
    names.append(save(out, "transpose_add", [
        helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
        helper.make_node("Add", ["t", "b"], ["y"])], x, {"b": b},
        x.astype(np.float64).transpose(0, 2, 3, 1) + b))
    # A transpose of the last two dims (a key transposed in attention),
    # with a bias along the new last dim and a residual: run in blocks of
    # lanes x lanes transposed in registers, with tails in both dims
    # (45 and 37 are no multiple of 16, 8 or 4).
    x, b, z = rand(2, 37, 45), rand(37), rand(2, 45, 37)
    names.append(save(out, "transpose_blocks", [
        helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Add", ["t", "b"], ["u"]),
        helper.make_node("Add", ["u", "z"], ["y"])], x, {"b": b, "z": z},
        x.astype(np.float64).transpose(0, 2, 1) + b + z))
    # Rounding on vectors: without SSE4.1 LLVM would call libm per lane.
    x = (rng.standard_normal((3, 37)) * 4).astype(np.float32)
    names.append(save(out, "floor_round", [
        helper.make_node("Floor", ["x"], ["f"]),
        helper.make_node("Round", ["x"], ["r"]),
        helper.make_node("Ceil", ["x"], ["c"]),
        helper.make_node("Sum", ["f", "r", "c"], ["y"])], x, {},
        np.floor(x.astype(np.float64)) + np.round(x.astype(np.float64)) + np.ceil(x.astype(np.float64))))
    # exp over the whole float range (kiln-expand-math's own expansion):
    # near 0 and 1, the overflow edge, and below ln(FLT_MIN), where it
    # flushes to 0; then SiLU, x * sigmoid(x), whose sigmoid is built on it.
    x = np.concatenate([np.linspace(-100, 88.72, 4000), rng.uniform(-1, 1, 96),
                        [0.0, -0.0, 88.7228, -87.33, -87.5, 1e-30]]).astype(np.float32)
    names.append(save(out, "exp", [helper.make_node("Exp", ["x"], ["y"])], x, {},
                      np.exp(x.astype(np.float64))))
    x = np.concatenate([np.linspace(-100, 100, 4000), rng.uniform(-4, 4, 96)]).astype(np.float32)
    x64 = x.astype(np.float64)
    names.append(save(out, "silu", [
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Mul", ["x", "s"], ["y"])], x, {}, x64 / (1 + np.exp(-x64))))
    # GELU through erf (kiln-expand-math's rational approximation), as
    # torch exports it: x * 0.5 * (1 + erf(x / sqrt(2))).
    from math import erf
    x = np.concatenate([np.linspace(-8, 8, 4000), rng.uniform(-0.01, 0.01, 96)]).astype(np.float32)
    x64 = x.astype(np.float64)
    names.append(save(out, "gelu", [
        helper.make_node("Div", ["x", "r2"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["a"]),
        helper.make_node("Mul", ["x", "a"], ["m"]),
        helper.make_node("Mul", ["m", "half"], ["y"])], x,
        {"r2": np.array(np.sqrt(2.0), np.float32), "one": np.array(1.0, np.float32),
         "half": np.array(0.5, np.float32)},
        x64 * 0.5 * (1 + np.vectorize(erf)(x64 / np.sqrt(2.0)))))
    # Winograd F(4x4, 3x3) rounds differently from a direct sum: its
    # transforms scale inputs by up to 8 and kernels by 1/24, so outputs of
    # magnitude 1 (these models') are off by up to about 3e-5.
    atol = {name: 1e-4 for name in names if name.startswith("winograd4")}
    with open(os.path.join(out, "names.txt"), "w") as f:
        for name in names:
            f.write(name + (" %g" % atol[name] if name in atol else "") + "\n")


if __name__ == "__main__":
    main()
