"""Models with a dynamic batch dim for dynamic-batch.test, with numpy
references where they are simple enough.

    python3 make_dynamic_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(out, name, nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    # Not onnx.checker: some of these are meant to be refused by kiln.
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.producer_name = "make_dynamic_models"
    onnx.save(m, os.path.join(out, name + ".onnx"))


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name, array):
    return numpy_helper.from_array(array, name)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)

    # An MLP over [N, 4] with a second, batch-independent output.
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    c = rng.standard_normal(2).astype(np.float32)
    model(out, "mlp",
          [helper.make_node("MatMul", ["x", "w"], ["h"], name="matmul"),
           helper.make_node("Add", ["h", "b"], ["a"], name="bias"),
           helper.make_node("Relu", ["a"], ["r"], name="relu"),
           helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=-1),
           helper.make_node("Abs", ["c"], ["k"], name="const_abs")],
          [vi("x", ["N", 4])], [vi("y", ["N", 3]), vi("k", [2])],
          inits=[init("w", w), init("b", b), init("c", c)])
    x = rng.standard_normal((5, 4)).astype(np.float32)
    r = np.maximum(x @ w + b, 0)
    e = np.exp(r - r.max(axis=-1, keepdims=True))
    np.save(os.path.join(out, "mlp_x.npy"), x)
    np.save(os.path.join(out, "mlp_y.npy"), (e / e.sum(axis=-1, keepdims=True)).astype(np.float32))
    np.save(os.path.join(out, "mlp_k.npy"), np.abs(c))

    # A CNN over [batch, 1, 8, 8]: Conv, BatchNorm, pool, Flatten, Gemm, and
    # an embedding-style Gather of a second, integer input [batch, 3].
    model(out, "cnn",
          [helper.make_node("Conv", ["x", "cw", "cb"], ["c1"], name="conv", pads=[1, 1, 1, 1]),
           helper.make_node("BatchNormalization", ["c1", "s", "o", "m", "v"], ["bn"], name="bn"),
           helper.make_node("Relu", ["bn"], ["r1"], name="relu"),
           helper.make_node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[2, 2],
                            strides=[2, 2]),
           helper.make_node("Flatten", ["p1"], ["f"], name="flatten"),
           helper.make_node("Gemm", ["f", "gw", "gb"], ["logits"], name="fc", transB=1),
           helper.make_node("Gather", ["table", "ids"], ["emb"], name="embed"),
           helper.make_node("ReduceMean", ["emb"], ["pooled"], name="mean", axes=[1],
                            keepdims=0),
           helper.make_node("Concat", ["logits", "pooled"], ["y"], name="concat", axis=1)],
          [vi("x", ["batch", 1, 8, 8]), vi("ids", ["batch", 3], TensorProto.INT64)],
          [vi("y", ["batch", 14])],
          inits=[init("cw", rng.standard_normal((4, 1, 3, 3)).astype(np.float32)),
                 init("cb", rng.standard_normal(4).astype(np.float32)),
                 init("s", rng.uniform(0.5, 1.5, 4).astype(np.float32)),
                 init("o", rng.standard_normal(4).astype(np.float32)),
                 init("m", rng.standard_normal(4).astype(np.float32)),
                 init("v", rng.uniform(0.5, 1.5, 4).astype(np.float32)),
                 init("gw", rng.standard_normal((10, 64)).astype(np.float32)),
                 init("gb", rng.standard_normal(10).astype(np.float32)),
                 init("table", rng.standard_normal((7, 4)).astype(np.float32))])
    np.save(os.path.join(out, "cnn_x.npy"), rng.standard_normal((3, 1, 8, 8)).astype(np.float32))
    np.save(os.path.join(out, "cnn_ids.npy"), rng.integers(0, 7, (3, 3)).astype(np.int64))

    # Items that are not independent, one way each.
    model(out, "reduce_batch",
          [helper.make_node("ReduceMean", ["x"], ["y"], name="batch_mean", axes=[0])],
          [vi("x", ["N", 4])], [vi("y", [1, 4])])
    model(out, "transpose_out",
          [helper.make_node("Transpose", ["x"], ["y"], name="t", perm=[1, 0])],
          [vi("x", ["N", 4])], [vi("y", [4, "N"])])
    model(out, "two_names",
          [helper.make_node("Add", ["a", "b"], ["y"], name="add")],
          [vi("a", ["N", 4]), vi("b", ["M", 4])], [vi("y", ["N", 4])])
    # The batch size as a value (x / x.shape[0]): refused, while the same
    # Shape feeding a Reshape target (x.view(x.size(0), -1)) is fine.
    shape_nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
                   helper.make_node("Gather", ["s", "zero"], ["n"], name="batch_size", axis=0)]
    model(out, "batch_value",
          shape_nodes + [helper.make_node("Cast", ["n"], ["nf"], name="cast", to=1),
                         helper.make_node("Div", ["x", "nf"], ["y"], name="divide")],
          [vi("x", ["N", 4])], [vi("y", ["N", 4])],
          inits=[init("zero", np.array(0, np.int64))])
    model(out, "shape_reshape",
          shape_nodes + [helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
                         helper.make_node("Concat", ["n1", "minus1"], ["target"], name="target",
                                          axis=0),
                         helper.make_node("Reshape", ["x", "target"], ["y"], name="flatten")],
          [vi("x", ["N", 3, 4])], [vi("y", ["N", 12])],
          inits=[init("zero", np.array(0, np.int64)), init("axes", np.array([0], np.int64)),
                 init("minus1", np.array([-1], np.int64))])
    xr = rng.standard_normal((3, 3, 4)).astype(np.float32)
    np.save(os.path.join(out, "shape_reshape_x.npy"), xr)
    np.save(os.path.join(out, "shape_reshape_y.npy"), xr.reshape(3, 12))
    model(out, "literal_reshape",
          [helper.make_node("Reshape", ["x", "target"], ["y"], name="one_row")],
          [vi("x", ["N", 3, 4])], [vi("y", [1, "M"])],
          inits=[init("target", np.array([1, -1], np.int64))])
    model(out, "zeros_out",
          [helper.make_node("Shape", ["x"], ["s"], name="shape"),
           helper.make_node("ConstantOfShape", ["s"], ["y"], name="zeros")],
          [vi("x", ["N", 4])], [vi("y", ["N", 4])])
    model(out, "bn_training",
          [helper.make_node("BatchNormalization", ["x", "s", "o", "m", "v"], ["y"], name="bn",
                            training_mode=1)],
          [vi("x", ["N", 2, 3])], [vi("y", ["N", 2, 3])],
          inits=[init(k, np.ones(2, np.float32)) for k in ("s", "o", "m", "v")])
    model(out, "resize_batch",
          [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="upsample_batch")],
          [vi("x", ["N", 1, 2, 2])], [vi("y", ["M", 1, 2, 2])],
          inits=[init("scales", np.array([2, 1, 1, 1], np.float32))])
    model(out, "dynamic_seq",
          [helper.make_node("Relu", ["x"], ["y"], name="relu")],
          [vi("x", ["N", "seq"])], [vi("y", ["N", "seq"])])


if __name__ == "__main__":
    main()
