"""Models for kiln check (check.test): one kiln compiles, and ones it cannot
for each kind of reason.

    python3 make_check_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(out, name, nodes, inputs, outputs, inits=(), opsets=(("", 17),)):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.producer_name = "make_check_models"
    onnx.save(m, os.path.join(out, name + ".onnx"))


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    w = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    # Supported: MatMul + Relu, 12 parameters.
    model(out, "good", [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                        helper.make_node("Relu", ["h"], ["y"], name="relu")],
          [vi("x", [2, 4])], [vi("y", [2, 3])], inits=[w])
    # An op without a lowering and an input value one does not handle
    # (Dropout in training mode), next to supported ops.
    model(out, "mixed", [helper.make_node("Relu", ["x"], ["a"], name="relu"),
                         helper.make_node("Dropout", ["a", "ratio", "training"], ["b"],
                                          name="drop"),
                         helper.make_node("Bernoulli", ["b"], ["y"], name="coin")],
          [vi("x", [4])], [vi("y", [4])],
          inits=[numpy_helper.from_array(np.array(0.5, np.float32), "ratio"),
                 numpy_helper.from_array(np.array(True), "training")])
    # A newer opset than kiln reads.
    model(out, "opset25", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
          [vi("x", [4])], [vi("y", [4])], opsets=(("", 25),))
    # A symbolic dim that is not a leading batch dim: Relu handles it,
    # LpPool not yet.
    model(out, "dynamic", [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                           helper.make_node("LpPool", ["r"], ["y"], name="pool",
                                            kernel_shape=[2])],
          [vi("x", [1, 3, "M"])], [vi("y", [1, 3, None])])
    # A symbolic batch dim: supported, items one at a time.
    model(out, "batch", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
          [vi("x", ["N", 4])], [vi("y", ["N", 4])])
    # A custom-domain op: the model does not import.
    model(out, "custom", [helper.make_node("Relu", ["x"], ["a"], name="relu"),
                          helper.make_node("FusedThing", ["a"], ["y"], name="fused",
                                           domain="com.example")],
          [vi("x", [4])], [vi("y", [4])], opsets=(("", 17), ("com.example", 1)))
    with open(os.path.join(out, "garbage.onnx"), "wb") as f:
        f.write(b"this is not a protobuf")


if __name__ == "__main__":
    main()
