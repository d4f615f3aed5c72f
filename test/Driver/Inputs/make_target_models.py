"""Models for targets.test: float32 min/max (which Cortex-M FPUs have no
instruction for: Max/Min, and GridSample's clamping) and float64 Relu and
Add (which a single-precision FPU cannot do).

    python3 make_target_models.py OUTDIR
"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def model(out, name, nodes, inputs, outputs):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.producer_name = "make_target_models"
    onnx.save(m, os.path.join(out, name + ".onnx"))


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    model(out, "minmax",
          [helper.make_node("Max", ["a", "b"], ["m"], name="max"),
           helper.make_node("Min", ["m", "b"], ["y"], name="min")],
          [vi("a", [16]), vi("b", [16])], [vi("y", [16])])
    # Clamps sample coordinates with maxnumf/minnumf.
    model(out, "gridsample",
          [helper.make_node("GridSample", ["x", "grid"], ["y"], name="sample",
                            padding_mode="border")],
          [vi("x", [1, 1, 4, 4]), vi("grid", [1, 3, 3, 2])], [vi("y", [1, 1, 3, 3])])
    # What only libm computes without an FPU.
    model(out, "sqrt", [helper.make_node("Sqrt", ["x"], ["y"], name="root")],
          [vi("x", [4])], [vi("y", [4])])
    model(out, "double",
          [helper.make_node("Relu", ["a"], ["r"], name="relu"),
           helper.make_node("Add", ["r", "b"], ["y"], name="add_doubles")],
          [vi("a", [4], TensorProto.DOUBLE), vi("b", [4], TensorProto.DOUBLE)],
          [vi("y", [4], TensorProto.DOUBLE)])


if __name__ == "__main__":
    main()
