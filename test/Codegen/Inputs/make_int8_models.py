"""Writes integer matmul models (MatMulInteger, QLinearMatMul and the
DynamicQuantizeLinear -> MatMulInteger pattern of dynamically quantised
transformers, all with constant B) and integer convolutions (ConvInteger,
QLinearConv, constant weights) and their exact numpy references, for
check_kernels.py: every tile and tail shape of the int8 dot-product kernels
(kiln-vectorize-int8-matmul) and the loop lowering they replace.

    python3 make_int8_models.py OUT [--folders]

With --folders each model is also written as an ONNX test folder,
OUT/int8/NAME/{model.onnx, test_data_set_0/{input,output}_0.pb}, listed in
OUT/cross-list.txt, for test/cross/conformance.py --data OUT.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(7)
TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8,
         np.int32: TensorProto.INT32, np.float32: TensorProto.FLOAT}


def ints(dtype, *shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


def save(out, name, node, x, consts, y):
    graph = helper.make_graph(
        node if isinstance(node, list) else [node], name,
        [helper.make_tensor_value_info("x", TYPES[x.dtype.type], list(x.shape))],
        [helper.make_tensor_value_info("y", TYPES[y.dtype.type], list(y.shape))],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    np.save(os.path.join(out, name + "_x.npy"), x)
    np.save(os.path.join(out, name + "_y.npy"), y)
    return name


def round_half_even(v):
    return np.round(v)  # numpy rounds half to even


def matmul_integer(out, name, a_type, b_type, shape_a, n, a_zp=None, b_zp=None, narrow=False):
    """narrow: B within +-100, so that B - b_zp fits int8 (the kernels'
    form; otherwise the loop lowering's)."""
    a = ints(a_type, *shape_a)
    k = shape_a[-1]
    b = ints(b_type, k, n)
    if narrow:
        b = (b.astype(np.int64) * 100 // 128).astype(b_type)
    if b_type is np.uint8 and b_zp is None:
        b = (b // 2 + 64).astype(np.uint8)  # b - 128 fits int8
    consts = {"b": b}
    inputs = ["x", "b"]
    acc_a = a.astype(np.int64)
    acc_b = b.astype(np.int64)
    if a_zp is not None:
        consts["a_zp"] = a_zp
        inputs.append("a_zp")
        acc_a = acc_a - (a_zp.astype(np.int64)[:, None] if a_zp.ndim == 1 else a_zp.astype(np.int64))
    if b_zp is not None:
        if a_zp is None:
            consts["a_zp"] = np.array(0, a_type)
            inputs.append("a_zp")
        consts["b_zp"] = b_zp
        inputs.append("b_zp")
        acc_b = acc_b - b_zp.astype(np.int64)
    y = np.matmul(acc_a, acc_b).astype(np.int32)
    return save(out, name, helper.make_node("MatMulInteger", inputs, ["y"]), a, consts, y)


def qlinear_matmul(out, name, m, k, n):
    a = ints(np.uint8, m, k)
    b = ints(np.int8, k, n)
    a_scale, a_zp = np.array(0.02, np.float32), np.array(131, np.uint8)
    b_scale = (RNG.random(n) * 0.01 + 0.001).astype(np.float32)
    y_scale, y_zp = np.array(0.9, np.float32), np.array(120, np.uint8)
    consts = {"a_scale": a_scale, "a_zp": a_zp, "b": b, "b_scale": b_scale,
              "b_zp": np.zeros(n, np.int8), "y_scale": y_scale, "y_zp": y_zp}
    node = helper.make_node("QLinearMatMul", ["x", "a_scale", "a_zp", "b", "b_scale", "b_zp",
                                              "y_scale", "y_zp"], ["y"])
    acc = np.matmul(a.astype(np.int64) - int(a_zp), b.astype(np.int64))
    # kiln's requantisation: the scale in float32, the product in float64.
    scale = ((a_scale * b_scale) / y_scale).astype(np.float32).astype(np.float64)
    v = round_half_even(acc.astype(np.float64) * scale) + float(y_zp)
    y = np.clip(v, 0, 255).astype(np.uint8)
    return save(out, name, node, a, consts, y)


def qdq_matmul(out, name, a_type, shape_a, n, requantize):
    """A QDQ MatMul (DequantizeLinear of the input and of constant int8
    weights with one scale per output column, MatMul, and a
    QuantizeLinear when `requantize`): kiln-fuse-qdq makes it a
    QLinearMatMul, or an integer matmul scaled back to float."""
    a = ints(a_type, *shape_a)
    k = shape_a[-1]
    w = ints(np.int8, k, n)
    a_scale = np.array(0.03, np.float32)
    a_zp = np.array(3 if a_type is np.int8 else 120, a_type)
    w_scale = (RNG.random(n) * 0.01 + 0.002).astype(np.float32)
    consts = {"a_scale": a_scale, "a_zp": a_zp, "w": w, "w_scale": w_scale}
    nodes = [helper.make_node("DequantizeLinear", ["x", "a_scale", "a_zp"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale"], ["wd"], axis=1),
             helper.make_node("MatMul", ["xd", "wd"], ["m" if requantize else "y"])]
    acc = np.matmul(a.astype(np.int64) - int(a_zp), w.astype(np.int64))
    if requantize:
        y_scale, y_zp = np.array(0.7, np.float32), np.array(100, np.uint8)
        consts.update({"y_scale": y_scale, "y_zp": y_zp})
        nodes.append(helper.make_node("QuantizeLinear", ["m", "y_scale", "y_zp"], ["y"]))
        scale = ((a_scale * w_scale) / y_scale).astype(np.float32).astype(np.float64)
        y = np.clip(round_half_even(acc.astype(np.float64) * scale) + float(y_zp), 0, 255)
        y = y.astype(np.uint8)
    else:
        y = acc.astype(np.float32) * (a_scale * w_scale)
    return save(out, name, nodes, a, consts, y)


def dynamic_quant_matmul(out, name, m, k, n):
    """x (float) -> DynamicQuantizeLinear -> MatMulInteger by int8 weights
    -> float, scaled back: a dynamically quantised linear layer."""
    x = (RNG.standard_normal((m, k)) * 2).astype(np.float32)
    w = ints(np.int8, k, n)
    w_scale = np.array(0.003, np.float32)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "q_scale", "q_zp"]),
        helper.make_node("MatMulInteger", ["q", "w", "q_zp"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["q_scale", "w_scale"], ["s"]),
        helper.make_node("Mul", ["accf", "s"], ["y"]),
    ]
    lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
    scale = np.float32((hi - lo) / np.float32(255))
    zp = np.clip(round_half_even(np.float32(0) - np.float32(lo) / scale), 0, 255)
    q = np.clip(round_half_even(x / scale) + zp, 0, 255).astype(np.int64)
    acc = np.matmul(q - int(zp), w.astype(np.int64)).astype(np.float32)
    y = acc * (scale * w_scale)
    return save(out, name, nodes, x, {"w": w, "w_scale": w_scale}, y.astype(np.float32))


def conv_reference(x, w, pads, strides, dilations):
    """The int64 2-D convolution of x [N, C, H, W] (already shifted by its
    zero point, so that padding reads 0) by w [M, C, KH, KW]; pads as
    ONNX gives them (begins, then ends)."""
    kh, kw = w.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (xp.shape[3] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    y = np.zeros((x.shape[0], w.shape[0], oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            r, c = i * dilations[0], j * dilations[1]
            patch = xp[:, :, r:r + (oh - 1) * strides[0] + 1:strides[0],
                       c:c + (ow - 1) * strides[1] + 1:strides[1]]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    return y


def conv_integer(out, name, x_type, shape_x, m, kernel, x_zp=None, w_zp=None, pads=(0, 0, 0, 0),
                 strides=(1, 1), dilations=(1, 1), narrow=False):
    """ConvInteger by constant int8 weights. narrow: weights within +-100,
    so that w - w_zp fits int8 (the kernels' form; otherwise the loop
    lowering's)."""
    x = ints(x_type, *shape_x)
    w = ints(np.int8, m, shape_x[1], *kernel)
    if narrow:
        w = (w.astype(np.int64) * 100 // 128).astype(np.int8)
    consts = {"w": w}
    inputs = ["x", "w"]
    xs = x.astype(np.int64)
    ws = w.astype(np.int64)
    if x_zp is not None or w_zp is not None:
        zp = x_zp if x_zp is not None else np.array(0, x_type)
        consts["x_zp"] = zp
        inputs.append("x_zp")
        xs = xs - int(zp)
    if w_zp is not None:
        consts["w_zp"] = w_zp
        inputs.append("w_zp")
        ws = ws - (w_zp.astype(np.int64)[:, None, None, None] if w_zp.ndim == 1 else int(w_zp))
    y = conv_reference(xs, ws, pads, strides, dilations).astype(np.int32)
    node = helper.make_node("ConvInteger", inputs, ["y"], pads=list(pads), strides=list(strides),
                            dilations=list(dilations))
    return save(out, name, node, x, consts, y)


def qlinear_conv(out, name, shape_x, m, kernel, pads, strides):
    """QLinearConv: uint8 input, int8 weights with a scale per output
    channel, an int32 bias, requantised to uint8."""
    x = ints(np.uint8, *shape_x)
    w = ints(np.int8, m, shape_x[1], *kernel)
    bias = RNG.integers(-5000, 5000, m).astype(np.int32)
    x_scale, x_zp = np.array(0.02, np.float32), np.array(129, np.uint8)
    w_scale = (RNG.random(m) * 0.004 + 0.001).astype(np.float32)
    y_scale, y_zp = np.array(0.8, np.float32), np.array(110, np.uint8)
    consts = {"x_scale": x_scale, "x_zp": x_zp, "w": w, "w_scale": w_scale,
              "w_zp": np.zeros(m, np.int8), "y_scale": y_scale, "y_zp": y_zp, "bias": bias}
    node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp",
                                            "y_scale", "y_zp", "bias"], ["y"],
                            pads=list(pads), strides=list(strides))
    acc = conv_reference(x.astype(np.int64) - int(x_zp), w.astype(np.int64), pads, strides,
                         (1, 1)) + bias[None, :, None, None]
    # kiln's requantisation: the scale in float32, the product in float64.
    scale = ((x_scale * w_scale) / y_scale).astype(np.float32).astype(np.float64)
    v = round_half_even(acc.astype(np.float64) * scale[None, :, None, None]) + float(y_zp)
    return save(out, name, node, x, consts, np.clip(v, 0, 255).astype(np.uint8))


def qdq_conv(out, name, shape_x, m, kernel, pads, requantize):
    """A QDQ Conv (DequantizeLinear of the uint8 input and of constant
    int8 weights with one scale per output channel, the bias as a
    DequantizeLinear of int32 at scale xs * ws, Conv, and a QuantizeLinear
    when `requantize`): kiln-fuse-qdq makes it a QLinearConv, or an integer
    conv scaled back to float."""
    x = ints(np.uint8, *shape_x)
    w = ints(np.int8, m, shape_x[1], *kernel)
    xs, xzp = np.array(0.05, np.float32), np.array(100, np.uint8)
    ws = (RNG.random(m) * 0.01 + 0.002).astype(np.float32)
    bs = (xs * ws).astype(np.float32)
    bq = RNG.integers(-3000, 3000, m).astype(np.int32)
    consts = {"xs": xs, "xzp": xzp, "w": w, "ws": ws, "bq": bq, "bs": bs}
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xzp"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"], axis=0),
             helper.make_node("DequantizeLinear", ["bq", "bs"], ["bd"], axis=0),
             helper.make_node("Conv", ["xd", "wd", "bd"], ["c" if requantize else "y"],
                              pads=list(pads))]
    acc = conv_reference(x.astype(np.int64) - int(xzp), w.astype(np.int64), pads, (1, 1),
                         (1, 1)) + bq[None, :, None, None]
    if requantize:
        ys, yzp = np.array(0.6, np.float32), np.array(90, np.uint8)
        consts.update({"ys": ys, "yzp": yzp})
        nodes.append(helper.make_node("QuantizeLinear", ["c", "ys", "yzp"], ["y"]))
        scale = ((xs * ws) / ys).astype(np.float32).astype(np.float64)[None, :, None, None]
        y = np.clip(round_half_even(acc.astype(np.float64) * scale) + float(yzp), 0, 255)
        y = y.astype(np.uint8)
    else:
        y = (acc.astype(np.float64) * (xs * ws).astype(np.float64)[None, :, None, None])
        y = y.astype(np.float32)
    return save(out, name, nodes, x, consts, y)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    names = []
    exact = " 0 0"
    u8, s8 = np.uint8, np.int8
    # One tile exactly; M, N and K tails; K below a group; wide N (two
    # tiles of 64 columns and a partial one); large enough for threads.
    for m, k, n in [(6, 64, 64), (13, 100, 70), (5, 30, 33), (1, 7, 16), (9, 3, 5),
                    (64, 256, 256), (20, 36, 150)]:
        names.append(matmul_integer(out, "mmi_u8_%dx%dx%d" % (m, k, n), u8, s8, (m, k), n,
                                    a_zp=np.array(128, u8)) + exact)
    names.append(matmul_integer(out, "mmi_u8_no_zp", u8, s8, (7, 40), 24) + exact)
    names.append(matmul_integer(out, "mmi_s8_col_zp", s8, s8, (11, 52), 40,
                                a_zp=np.array(-3, s8),
                                b_zp=RNG.integers(-20, 20, 40).astype(s8), narrow=True) + exact)
    # B - b_zp beyond int8: the loop lowering.
    names.append(matmul_integer(out, "mmi_s8_col_zp_wide", s8, s8, (11, 52), 40,
                                a_zp=np.array(-3, s8),
                                b_zp=RNG.integers(-20, 20, 40).astype(s8)) + exact)
    names.append(matmul_integer(out, "mmi_s8_17x64x48", s8, s8, (17, 64), 48) + exact)
    names.append(matmul_integer(out, "mmi_u8_weights_u8", u8, u8, (8, 32), 20,
                                a_zp=np.array(100, u8), b_zp=np.array(128, u8)) + exact)
    names.append(matmul_integer(out, "mmi_row_zp", u8, s8, (6, 24), 18,
                                a_zp=RNG.integers(0, 255, 6).astype(u8)) + exact)
    names.append(matmul_integer(out, "mmi_batched", u8, s8, (2, 3, 10, 36), 40,
                                a_zp=np.array(5, u8)) + exact)
    names.append(qlinear_matmul(out, "qlinearmatmul_23x96x80", 23, 96, 80) + exact)
    names.append(dynamic_quant_matmul(out, "dynamic_quant_matmul", 10, 64, 48) + " 1e-4")
    names.append(qdq_matmul(out, "qdq_matmul_requantized", u8, (13, 72), 40, True) + exact)
    names.append(qdq_matmul(out, "qdq_matmul_float", s8, (2, 7, 36), 20, False) + " 1e-5 1e-6")
    # Convs: 1x1 (read as they are), and im2col'd (padding, strides,
    # dilations, K not a multiple of 4, a batch, chunks of K, threads).
    names.append(conv_integer(out, "convint_1x1_64x14x14_to_48", u8, (1, 64, 14, 14), 48, (1, 1),
                              x_zp=np.array(128, u8)) + exact)
    names.append(conv_integer(out, "convint_3x3_pad", u8, (1, 16, 9, 11), 20, (3, 3),
                              x_zp=np.array(7, u8), pads=(1, 1, 1, 1)) + exact)
    names.append(conv_integer(out, "convint_3x3_s2_c3_batch2", u8, (2, 3, 15, 15), 10, (3, 3),
                              x_zp=np.array(200, u8), pads=(1, 1, 1, 1), strides=(2, 2)) + exact)
    names.append(conv_integer(out, "convint_s8_dilated_row_zp", s8, (1, 8, 12, 12), 6, (3, 3),
                              x_zp=np.array(-5, s8), w_zp=RNG.integers(-20, 20, 6).astype(s8),
                              pads=(2, 2, 2, 2), dilations=(2, 2), narrow=True) + exact)
    names.append(conv_integer(out, "convint_3x3_256ch_chunks", u8, (1, 256, 16, 16), 64, (3, 3),
                              x_zp=np.array(90, u8), pads=(1, 1, 1, 1)) + exact)
    names.append(conv_integer(out, "convint_2x2_no_zp", u8, (1, 5, 7, 7), 7, (2, 2)) + exact)
    names.append(conv_integer(out, "convint_1x1_s2", u8, (1, 32, 14, 14), 16, (1, 1),
                              x_zp=np.array(3, u8), strides=(2, 2)) + exact)
    # w - w_zp beyond int8: the loop lowering.
    names.append(conv_integer(out, "convint_wide_w_zp", s8, (1, 4, 6, 6), 5, (3, 3),
                              x_zp=np.array(1, s8), w_zp=np.array(60, s8)) + exact)
    names.append(qlinear_conv(out, "qlinearconv_3x3", (1, 32, 10, 10), 24, (3, 3), (1, 1, 1, 1),
                              (1, 1)) + exact)
    names.append(qdq_conv(out, "qdq_conv_requantized", (1, 16, 9, 9), 24, (3, 3), (1, 1, 1, 1),
                          True) + exact)
    names.append(qdq_conv(out, "qdq_conv_float", (1, 12, 8, 8), 20, (1, 1), (0, 0, 0, 0),
                          False) + " 1e-5 1e-5")
    with open(os.path.join(out, "names.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    if "--folders" in sys.argv[2:]:
        listed = []
        for line in names:
            name = line.split()[0]
            folder = os.path.join(out, "int8", name)
            data = os.path.join(folder, "test_data_set_0")
            os.makedirs(data, exist_ok=True)
            model = onnx.load(os.path.join(out, name + ".onnx"))
            onnx.save(model, os.path.join(folder, "model.onnx"))
            for kind, io in (("input", "x"), ("output", "y")):
                t = numpy_helper.from_array(np.load(os.path.join(out, "%s_%s.npy" % (name, io))), io)
                with open(os.path.join(data, kind + "_0.pb"), "wb") as f:
                    f.write(t.SerializeToString())
            listed.append("int8/" + name)
        with open(os.path.join(out, "cross-list.txt"), "w") as f:
            f.write("\n".join(listed) + "\n")


if __name__ == "__main__":
    main()
