#!/usr/bin/env python3
"""Writes the models, tensors and expected values of kiln's driver tests.

    make_models.py OUTDIR

Models (valid, checked with onnx.checker):
  - net.onnx: x[1,1,8,8] -> Conv(4 filters, 3x3, pads 1) -> Relu
    -> MaxPool(2x2, stride 2) -> Flatten -> Gemm(transB, 10 units) -> y[1,10];
    its intermediates need a workspace;
  - addmm.onnx: a[2,3], b[3] -> Add (broadcast) -> MatMul(W[3,4]) -> y[2,4];
    two inputs, to bind by name and by position;
  - copy.onnx: x[128,128] -> Identity -> y; big enough that its library
    calls memcpy.

Tensors, for `kiln run` (NumPy references computed here, in float64):
  - net_x.npy, net_x.pb, net_y.npy, net_y.pb: an input and its output;
  - net_y_wrong.npy: net_y with element [0,7] off by 1;
  - net_x_short.npy: an input of the wrong shape [1,1,8,7];
  - addmm_{a,b,y}.{npy,pb}; addmm_{a,y}_fortran.npy (column-major .npy).
And expected.h, the same inputs and outputs as C arrays for two-models.c.

Everything is deterministic (fixed seeds, no network).
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, initializers=(), name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="kiln-tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def write_model(path, m):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def write_tensor(out, stem, array, name):
    """stem.npy and stem.pb (a TensorProto named `name`)."""
    np.save(os.path.join(out, stem + ".npy"), array)
    with open(os.path.join(out, stem + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


# ---------------------------------------------------------------------------
# net: Conv + Relu + MaxPool + Flatten + Gemm.
# ---------------------------------------------------------------------------

def net_weights():
    rng = np.random.RandomState(1)
    w = (rng.standard_normal((4, 1, 3, 3)) * 0.5).astype(np.float32)
    b = (rng.standard_normal(4) * 0.1).astype(np.float32)
    fw = (rng.standard_normal((10, 64)) * 0.2).astype(np.float32)
    fb = (rng.standard_normal(10) * 0.1).astype(np.float32)
    return w, b, fw, fb


def net_model():
    w, b, fw, fb = net_weights()
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(fw, "fw"),
             numpy_helper.from_array(fb, "fb")]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], name="fc",
                         transB=1),
    ]
    return model(nodes, [vi("x", [1, 1, 8, 8])], [vi("y", [1, 10])], inits,
                 name="net")


def net_reference(x):
    w, b, fw, fb = (a.astype(np.float64) for a in net_weights())
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    c = np.zeros((1, 4, 8, 8))
    for o in range(4):
        for i in range(8):
            for j in range(8):
                c[0, o, i, j] = np.sum(xp[0, 0, i:i + 3, j:j + 3] * w[o, 0]) \
                    + b[o]
    r = np.maximum(c, 0)
    p = r.reshape(1, 4, 4, 2, 4, 2).max(axis=(3, 5))
    return (p.reshape(1, 64) @ fw.T + fb).astype(np.float32)


# ---------------------------------------------------------------------------
# addmm: Add (broadcast) + MatMul.
# ---------------------------------------------------------------------------

def addmm_weight():
    return np.arange(12, dtype=np.float32).reshape(3, 4) / 8 - 0.5


def addmm_model():
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="add"),
             helper.make_node("MatMul", ["s", "W"], ["y"], name="matmul")]
    return model(nodes, [vi("a", [2, 3]), vi("b", [3])], [vi("y", [2, 4])],
                 [numpy_helper.from_array(addmm_weight(), "W")], name="addmm")


def addmm_reference(a, b):
    s = a.astype(np.float64) + b.astype(np.float64)
    return (s @ addmm_weight().astype(np.float64)).astype(np.float32)


def copy_model():
    return model([helper.make_node("Identity", ["x"], ["y"], name="id")],
                 [vi("x", [128, 128])], [vi("y", [128, 128])], name="copy")


def c_array(name, array):
    values = ", ".join("%.9gf" % v for v in array.reshape(-1))
    return "static const float %s[%d] = {%s};\n" % (name, array.size, values)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_models.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    write_model(os.path.join(out, "net.onnx"), net_model())
    rng = np.random.RandomState(7)
    x = rng.uniform(-1, 1, (1, 1, 8, 8)).astype(np.float32)
    y = net_reference(x)
    write_tensor(out, "net_x", x, "x")
    write_tensor(out, "net_y", y, "y")
    wrong = y.copy()
    wrong[0, 7] += 1.0
    np.save(os.path.join(out, "net_y_wrong.npy"), wrong)
    np.save(os.path.join(out, "net_x_short.npy"), x[:, :, :, :7].copy())

    write_model(os.path.join(out, "addmm.onnx"), addmm_model())
    a = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (3,)).astype(np.float32)
    ay = addmm_reference(a, b)
    write_tensor(out, "addmm_a", a, "a")
    write_tensor(out, "addmm_b", b, "b")
    write_tensor(out, "addmm_y", ay, "y")
    # The same tensors in Fortran (column-major) order, as NumPy writes
    # transposed or sliced arrays.
    np.save(os.path.join(out, "addmm_a_fortran.npy"), np.asfortranarray(a))
    np.save(os.path.join(out, "addmm_y_fortran.npy"), np.asfortranarray(ay))

    write_model(os.path.join(out, "copy.onnx"), copy_model())

    with open(os.path.join(out, "expected.h"), "w") as f:
        f.write("/* Generated by make_models.py: inputs and reference "
                "outputs. */\n")
        f.write(c_array("net_x", x) + c_array("net_y", y))
        f.write(c_array("addmm_a", a) + c_array("addmm_b", b))
        f.write(c_array("addmm_y", ay))


if __name__ == "__main__":
    main()
