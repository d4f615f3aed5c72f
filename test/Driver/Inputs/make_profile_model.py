"""A model with two parallel loops for the loop profile test: a MatMul of
x [64, 128] by a constant [128, 64] (2^19 multiply-adds), then a Relu.

    python3 make_profile_model.py OUTDIR

writes OUTDIR/mm.onnx and OUTDIR/x.npy.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((128, 64)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
         helper.make_node("Relu", ["m"], ["y"], name="relu")],
        "mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 128])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out, "mm.onnx"))
    np.save(os.path.join(out, "x.npy"), rng.standard_normal((64, 128)).astype(np.float32))


if __name__ == "__main__":
    main()
