"""Writes integer matmul models (MatMulInteger, QLinearMatMul and the
DynamicQuantizeLinear -> MatMulInteger pattern of dynamically quantised
transformers, all with constant B) and their exact numpy references, for
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
