"""Models with model-local functions (ModelProto.functions) for
local-functions.test, with numpy references.

    python3 make_function_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

n = helper.make_node


def ref_attr(name, ref, kind):
    """An attribute of a function body's node that takes the call's `ref`."""
    a = onnx.AttributeProto()
    a.name = name
    a.ref_attr_name = ref
    a.type = kind
    return a


def with_defaults(function, *defaults):
    """`function` with FunctionProto.attribute_proto (field 11, newer than
    this onnx's proto): the bytes appended, kept as unknown fields."""
    data = function.SerializeToString()
    for a in defaults:
        body = a.SerializeToString()
        length = len(body)
        varint = bytearray()
        while True:
            byte = length & 0x7F
            length >>= 7
            varint.append(byte | (0x80 if length else 0))
            if not length:
                break
        data += bytes([11 << 3 | 2]) + bytes(varint) + body
    out = onnx.FunctionProto()
    out.ParseFromString(data)
    return out


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def save(out, name, array):
    np.save(os.path.join(out, name + ".npy"), array)


def write(out, name, graph, functions, opsets):
    model = helper.make_model(graph, functions=functions,
                              opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name + ".onnx"))


def leaky(x, alpha):
    return np.where(x >= 0, x, alpha * x)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    opsets = [("", 17), ("kiln.test", 1)]

    # Dense: y = LeakyRelu(x @ w, alpha), alpha the call's attribute (else
    # LeakyRelu's default, 0.01); its second output passes x through.
    dense = helper.make_function(
        "kiln.test", "Dense", ["x", "w"], ["y", "same"],
        [n("MatMul", ["x", "w"], ["t"], name="matmul"),
         helper.make_node("LeakyRelu", ["t"], ["y"], name="act")],
        [helper.make_opsetid("", 17)], attributes=["alpha"])
    dense.node[1].attribute.append(ref_attr("alpha", "alpha", onnx.AttributeProto.FLOAT))
    # The second output is the first input itself.
    del dense.output[:]
    dense.output.extend(["y", "x"])
    # Block: two Dense calls (a function calling a function), the second
    # with the Block's own `slope`; then an If whose branches read the
    # Block's values and its `scale` (a reference inside a subgraph).
    then_g = helper.make_graph(
        [n("Mul", ["h2", "k"], ["o"], name="scaled")], "then", [], [vi("o", None)],
        [])
    then_g.node.insert(0, n("Constant", [], ["k"], name="k"))
    then_g.node[0].attribute.append(ref_attr("value_float", "scale", onnx.AttributeProto.FLOAT))
    else_g = helper.make_graph([n("Neg", ["h2"], ["o"], name="negated")], "else", [],
                               [vi("o", None)])
    block = helper.make_function(
        "kiln.test", "Block", ["x", "w1", "w2", "flag"], ["y"],
        [n("Dense", ["x", "w1"], ["h1"], name="first", domain="kiln.test"),
         n("Dense", ["h1", "w2"], ["h2", ""], name="second", domain="kiln.test"),
         n("If", ["flag"], ["y"], name="choose", then_branch=then_g, else_branch=else_g)],
        [helper.make_opsetid("", 17), helper.make_opsetid("kiln.test", 1)],
        attributes=["slope", "scale"])
    block.node[0].attribute.append(helper.make_attribute("alpha", 0.5))
    block.node[1].attribute.append(ref_attr("alpha", "slope", onnx.AttributeProto.FLOAT))
    # `scale` defaults to 3 (attribute_proto).
    block = with_defaults(block, helper.make_attribute("scale", 3.0))

    w1 = rng.standard_normal((4, 6)).astype(np.float32)
    w2 = rng.standard_normal((6, 3)).astype(np.float32)
    graph = helper.make_graph(
        [n("Block", ["x", "w1", "w2", "yes"], ["a"], name="block_a", domain="kiln.test",
           slope=0.2, scale=2.0),
         n("Block", ["x", "w1", "w2", "yes"], ["b"], name="block_b", domain="kiln.test"),
         n("Block", ["x", "w1", "w2", "no"], ["c"], name="block_c", domain="kiln.test"),
         n("Dense", ["x", "w1"], ["d", "x_again"], name="dense", domain="kiln.test"),
         # A value of the function's own name, to see that the body's are
         # renamed.
         n("Relu", ["x"], ["h1"], name="relu"),
         n("Add", ["x_again", "h1"], ["e"], name="add")],
        "functions", [vi("x", [2, 4])],
        [vi("a", [2, 3]), vi("b", [2, 3]), vi("c", [2, 3]), vi("d", [2, 6]), vi("e", [2, 4])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
         numpy_helper.from_array(np.array(True), "yes"),
         numpy_helper.from_array(np.array(False), "no")])
    write(out, "functions", graph, [dense, block], opsets)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    h1 = leaky(x @ w1, 0.5)
    save(out, "functions_x", x)
    save(out, "functions_a", (leaky(h1 @ w2, 0.2) * 2.0).astype(np.float32))
    save(out, "functions_b", (leaky(h1 @ w2, 0.01) * 3.0).astype(np.float32))
    save(out, "functions_c", (-leaky(h1 @ w2, 0.01)).astype(np.float32))
    save(out, "functions_d", leaky(x @ w1, 0.01).astype(np.float32))
    save(out, "functions_e", (x + np.maximum(x, 0)).astype(np.float32))

    # A function of opset 18 (ReduceMean's axes an input) in a model of
    # opset 18: inlined, then read in its opset-17 form.
    center = helper.make_function(
        "kiln.test", "Center", ["x"], ["y"],
        [n("Constant", [], ["axes"], name="axes",
           value=numpy_helper.from_array(np.array([-1], np.int64))),
         n("ReduceMean", ["x", "axes"], ["m"], name="mean"),
         n("Sub", ["x", "m"], ["y"], name="sub")],
        [helper.make_opsetid("", 18)])
    graph = helper.make_graph(
        [n("Center", ["x"], ["y"], name="center", domain="kiln.test")],
        "center", [vi("x", [3, 5])], [vi("y", [3, 5])])
    write(out, "center18", graph, [center], [("", 18), ("kiln.test", 1)])
    x = rng.standard_normal((3, 5)).astype(np.float32)
    save(out, "center18_x", x)
    save(out, "center18_y", x - x.mean(-1, keepdims=True))

    # Errors. A function that calls itself.
    loop = helper.make_function(
        "kiln.test", "Forever", ["x"], ["y"],
        [n("Forever", ["x"], ["y"], name="again", domain="kiln.test")],
        [helper.make_opsetid("", 17), helper.make_opsetid("kiln.test", 1)])
    graph = helper.make_graph([n("Forever", ["x"], ["y"], name="call", domain="kiln.test")],
                              "recursive", [vi("x", [2])], [vi("y", [2])])
    write(out, "recursive", graph, [loop], opsets)
    # A body that reads a value of the graph that calls it.
    leak = helper.make_function(
        "kiln.test", "Leak", ["x"], ["y"], [n("Add", ["x", "outside"], ["y"], name="add")],
        [helper.make_opsetid("", 17)])
    graph = helper.make_graph(
        [n("Relu", ["x"], ["outside"], name="relu"),
         n("Leak", ["x"], ["y"], name="leak", domain="kiln.test")],
        "leak", [vi("x", [2])], [vi("y", [2])])
    write(out, "leak", graph, [leak], opsets)
    # A function of another default-domain opset than the model's.
    other = helper.make_function("kiln.test", "Other", ["x"], ["y"],
                                 [n("Relu", ["x"], ["y"], name="relu")],
                                 [helper.make_opsetid("", 13)])
    graph = helper.make_graph([n("Other", ["x"], ["y"], name="other", domain="kiln.test")],
                              "other", [vi("x", [2])], [vi("y", [2])])
    write(out, "other_opset", graph, [other], opsets)
    # An op of the body kiln does not know: the message names the call.
    odd = helper.make_function("kiln.test", "Odd", ["x"], ["y"],
                               [n("NoSuchOp", ["x"], ["y"], name="odd")],
                               [helper.make_opsetid("", 17)])
    graph = helper.make_graph(
        [n("Relu", ["x"], ["r"], name="relu"),
         n("Odd", ["r"], ["y"], name="call_odd", domain="kiln.test")],
        "odd", [vi("x", [2])], [vi("y", [2])])
    write(out, "odd", graph, [odd], opsets)


if __name__ == "__main__":
    main()
