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


def attention_nodes(tail):
    """Self-attention over x [N, L, 8] (2 heads of 4) as torch's
    nn.MultiheadAttention export writes it: sequence first, shape targets
    computed from Shape, the batch merged with the heads ([L, N*2, 4]) and
    with the sequence ([L*N, 8]). `tail` ends the graph from 'att' [L, N, 8]."""
    n = helper.make_node
    nodes = [
        n("Transpose", ["x"], ["t"], name="seq_first", perm=[1, 0, 2]),
        n("Shape", ["t"], ["ts"], name="shape"),
        n("Gather", ["ts", "i0"], ["L"], name="len", axis=0),
        n("Gather", ["ts", "i1"], ["N"], name="bsz", axis=0),
        n("Gather", ["ts", "i2"], ["E"], name="width", axis=0),
        n("MatMul", ["t", "wqkv"], ["qkv"], name="in_proj"),
        # The packed projection sliced by widths read off its shape.
        n("Shape", ["qkv"], ["qs"], name="qkv_shape"),
        n("Gather", ["qs", "i2"], ["E3"], name="qkv_width", axis=0),
        n("Div", ["E3", "three"], ["e"], name="width_of_one"),
        n("Mul", ["e", "two"], ["e2"], name="two_widths"),
        n("Unsqueeze", ["e", "a0"], ["e_1"], name="e_1"),
        n("Unsqueeze", ["e2", "a0"], ["e2_1"], name="e2_1"),
        n("Unsqueeze", ["E3", "a0"], ["E3_1"], name="E3_1"),
        n("Slice", ["qkv", "zero1", "e_1", "two1"], ["q0"], name="q"),
        n("Slice", ["qkv", "e_1", "e2_1", "two1"], ["k0"], name="k"),
        n("Slice", ["qkv", "e2_1", "E3_1", "two1"], ["v0"], name="v"),
        # [L, N, 8] -> [L, N*2, 4]
        n("Mul", ["N", "two"], ["NH"], name="bsz_heads"),
        n("Unsqueeze", ["L", "a0"], ["L_1"], name="L_1"),
        n("Unsqueeze", ["NH", "a0"], ["NH_1"], name="NH_1"),
        n("Concat", ["L_1", "NH_1", "four1"], ["heads_shape"], name="heads_shape", axis=0),
        n("Reshape", ["q0", "heads_shape"], ["q1"], name="q_heads"),
        n("Reshape", ["k0", "heads_shape"], ["k1"], name="k_heads"),
        n("Reshape", ["v0", "heads_shape"], ["v1"], name="v_heads"),
        n("Transpose", ["q1"], ["q2"], name="q_t", perm=[1, 0, 2]),
        n("Transpose", ["k1"], ["k2"], name="k_t", perm=[1, 2, 0]),
        n("Transpose", ["v1"], ["v2"], name="v_t", perm=[1, 0, 2]),
        n("MatMul", ["q2", "k2"], ["s0"], name="scores"),
        n("Mul", ["s0", "half"], ["s1"], name="scale"),
        n("Softmax", ["s1"], ["p"], name="softmax", axis=-1),
        n("MatMul", ["p", "v2"], ["o0"], name="weighted"),
        n("Transpose", ["o0"], ["o1"], name="o_t", perm=[1, 0, 2]),
        # [L, N*2, 4] -> [L*N, 8] -> out_proj -> [L, N, 8]
        n("Mul", ["L", "N"], ["LN"], name="len_bsz"),
        n("Unsqueeze", ["LN", "a0"], ["LN_1"], name="LN_1"),
        n("Unsqueeze", ["E", "a0"], ["E_1"], name="E_1"),
        n("Concat", ["LN_1", "E_1"], ["rows_shape"], name="rows_shape", axis=0),
        n("Reshape", ["o1", "rows_shape"], ["rows"], name="rows"),
        n("Gemm", ["rows", "wo", "bo"], ["proj"], name="out_proj", transB=1),
        n("Unsqueeze", ["N", "a0"], ["N_1"], name="N_1"),
        n("Concat", ["L_1", "N_1", "E_1"], ["seq_shape"], name="seq_shape", axis=0),
        n("Reshape", ["proj", "seq_shape"], ["att"], name="unrows"),
    ]
    return nodes + tail


def attention_inits(rng):
    i64 = lambda v: np.array(v, np.int64)
    return ([init("wqkv", rng.standard_normal((8, 24)).astype(np.float32)),
             init("wo", rng.standard_normal((8, 8)).astype(np.float32)),
             init("bo", rng.standard_normal(8).astype(np.float32)),
             init("half", np.array(0.5, np.float32))] +
            [init(k, i64(v)) for k, v in [("i0", 0), ("i1", 1), ("i2", 2), ("three", 3),
                                          ("two", 2), ("a0", [0]), ("zero1", [0]),
                                          ("two1", [2]), ("four1", [4])]])


def attention_reference(x, inits):
    w = {i.name: numpy_helper.to_array(i) for i in inits}
    qkv = x @ w["wqkv"]  # [N, L, 24]
    n, l = x.shape[:2]
    def heads(m):  # [N, L, 8] -> [N, 2, L, 4]
        return m.reshape(n, l, 2, 4).transpose(0, 2, 1, 3)
    q, k, v = heads(qkv[..., :8]), heads(qkv[..., 8:16]), heads(qkv[..., 16:])
    s = q @ k.transpose(0, 1, 3, 2) * 0.5
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    o = (p @ v).transpose(0, 2, 1, 3).reshape(n, l, 8)
    return (o @ w["wo"].T + w["bo"]).astype(np.float32)


def masked_attention(out, rng):
    """Self-attention of x [N, L, 4] (2 heads of 2, q = k = v) with a padding
    mask pad [N, L] as torch applies one: reshaped to [N, 1, 1, L],
    expanded over the heads, merged with them ([N*2, 1, L]), turned into
    -1e9 or zeros (ConstantOfShape of its shape) and added to the scores."""
    n = helper.make_node
    u = lambda name, src: n("Unsqueeze", [src, "a0"], [name], name=name)
    nodes = [
        n("Transpose", ["x"], ["t"], name="seq_first", perm=[1, 0, 2]),
        n("Shape", ["t"], ["ts"], name="shape"),
        n("Gather", ["ts", "i0"], ["L"], name="len", axis=0),
        n("Gather", ["ts", "i1"], ["N"], name="bsz", axis=0),
        n("Mul", ["N", "two"], ["NH"], name="bsz_heads"),
        u("L_1", "L"), u("N_1", "N"), u("NH_1", "NH"),
        n("Concat", ["L_1", "NH_1", "two1"], ["heads_shape"], name="heads_shape", axis=0),
        n("Reshape", ["t", "heads_shape"], ["h"], name="heads"),
        n("Transpose", ["h"], ["q"], name="q", perm=[1, 0, 2]),
        n("Transpose", ["h"], ["k"], name="k", perm=[1, 2, 0]),
        n("MatMul", ["q", "k"], ["s"], name="scores"),
        n("Concat", ["N_1", "one1", "one1", "L_1"], ["m_shape"], name="m_shape", axis=0),
        n("Reshape", ["pad", "m_shape"], ["m1"], name="mask_4d"),
        n("Expand", ["m1", "over_heads"], ["m2"], name="mask_heads"),
        n("Concat", ["NH_1", "one1", "L_1"], ["m3_shape"], name="m3_shape", axis=0),
        n("Reshape", ["m2", "m3_shape"], ["m3"], name="mask_merged"),
        n("Shape", ["m3"], ["m3s"], name="mask_shape"),
        n("ConstantOfShape", ["m3s"], ["zeros"], name="zeros"),
        n("Where", ["m3", "minus", "zeros"], ["bias"], name="bias"),
        n("Add", ["s", "bias"], ["sb"], name="masked"),
        n("Softmax", ["sb"], ["p"], name="softmax", axis=-1),
        n("MatMul", ["p", "q"], ["o"], name="weighted"),
        n("Transpose", ["o"], ["o1"], name="o_t", perm=[1, 0, 2]),
        n("Shape", ["x"], ["xs"], name="x_shape"),
        n("Gather", ["xs", "i2"], ["E"], name="width", axis=0),
        u("E_1", "E"),
        n("Concat", ["L_1", "N_1", "E_1"], ["seq_shape"], name="seq_shape", axis=0),
        n("Reshape", ["o1", "seq_shape"], ["o2"], name="unheads"),
        n("Transpose", ["o2"], ["y"], name="batch_first", perm=[1, 0, 2]),
    ]
    i64 = lambda v: np.array(v, np.int64)
    inits = ([init("minus", np.array(-1e9, np.float32))] +
             [init(k, i64(v)) for k, v in [("i0", 0), ("i1", 1), ("i2", 2), ("two", 2),
                                           ("a0", [0]), ("one1", [1]), ("two1", [2]),
                                           ("over_heads", [1, 2, 1, 1])]])
    model(out, "masked_attention", nodes,
          [vi("x", ["N", "seq", 4]), vi("pad", ["N", "seq"], TensorProto.BOOL)],
          [vi("y", ["N", "seq", 4])], inits=inits)
    x = rng.standard_normal((3, 6, 4)).astype(np.float32)
    pad = np.zeros((3, 6), bool)
    pad[1, 4:] = True
    pad[2, 1:] = True
    h = x.reshape(3, 6, 2, 2).transpose(0, 2, 1, 3)  # [N, 2, L, 2]
    s = h @ h.transpose(0, 1, 3, 2) + np.where(pad[:, None, None, :], -1e9, 0.0)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    y = (p @ h).transpose(0, 2, 1, 3).reshape(3, 6, 4)
    np.save(os.path.join(out, "masked_attention_x.npy"), x)
    np.save(os.path.join(out, "masked_attention_pad.npy"), pad)
    np.save(os.path.join(out, "masked_attention_y.npy"), y.astype(np.float32))


def attention(out, rng):
    """The attention graph with a symbolic batch (static length 5), with a
    symbolic batch and length, and ways to misuse the merged batch."""
    inits = attention_inits(rng)
    back = [helper.make_node("Transpose", ["att"], ["y"], name="batch_first", perm=[1, 0, 2])]
    for name, dims in [("attention", ["N", 5, 8]), ("attention_seq", ["N", "seq", 8])]:
        model(out, name, attention_nodes(back), [vi("x", dims)], [vi("y", dims)], inits=inits)
    for n, l in [(3, 5), (2, 7)]:
        x = rng.standard_normal((n, l, 8)).astype(np.float32)
        np.save(os.path.join(out, "attention_x_%d_%d.npy" % (n, l)), x)
        np.save(os.path.join(out, "attention_y_%d_%d.npy" % (n, l)), attention_reference(x, inits))
    # The rows [L*N, 8] as the output: the batch is not a dim of its own.
    model(out, "attention_rows_out", attention_nodes([]), [vi("x", ["N", 5, 8])],
          [vi("rows", ["M", 8])], inits=inits)
    # A reduction over the heads merged with the batch.
    model(out, "attention_head_sum",
          attention_nodes([helper.make_node("ReduceSum", ["q1", "a1"], ["y"], name="head_sum",
                                            keepdims=0)]),
          [vi("x", ["N", 5, 8])], [vi("y", [5, 4])], inits=inits + [init("a1", np.array([1]))])
    # An op that only knows [N, C, ...] data on the merged batch.
    model(out, "attention_pool",
          attention_nodes([helper.make_node("GlobalAveragePool", ["q2"], ["y"],
                                            name="pool_heads")]),
          [vi("x", ["N", 5, 8])], [vi("y", ["M", 5, 1])], inits=inits)


def lppool(out, rng):
    """An LpPool over a dynamic batch [N, 2, 4, 4]: item by item its shapes
    are static; kiln's LpPool does not take a dynamic dim, so a whole batch
    is refused."""
    model(out, "lppool",
          [helper.make_node("LpPool", ["x"], ["t"], name="pool", kernel_shape=[2, 2],
                            strides=[2, 2], p=2),
           helper.make_node("Relu", ["t"], ["y"], name="relu")],
          [vi("x", ["N", 2, 4, 4])], [vi("y", ["N", 2, 2, 2])])
    x = rng.standard_normal((3, 2, 4, 4)).astype(np.float32)
    windows = (x * x).reshape(3, 2, 2, 2, 2, 2).sum(axis=(3, 5))
    np.save(os.path.join(out, "lppool_x.npy"), x)
    np.save(os.path.join(out, "lppool_y.npy"), np.sqrt(windows).astype(np.float32))


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

    # Items that are not independent, one way each: compiled with the batch
    # kept whole, checked at batch 5 (x: [5, ...] of 0.25 * arange, refs
    # below).
    def save(name, x, **refs):
        np.save(os.path.join(out, name + "_x.npy"), x.astype(np.float32))
        for k, v in refs.items():
            np.save(os.path.join(out, "%s_%s.npy" % (name, k)), np.asarray(v, np.float32))

    def ramp(*shape):
        return (0.25 * np.arange(np.prod(shape)) - 1).reshape(shape).astype(np.float32)

    x4 = ramp(5, 4)
    save("reduce_batch", x4, y=x4.mean(axis=0, keepdims=True))
    save("transpose_out", x4, y=x4.T)
    save("batch_value", x4, y=x4 / 5)
    save("batch_quarter", x4, y=x4 + 1)
    save("batch_positions", x4, y=x4 + 1)
    x34 = ramp(5, 3, 4)
    save("literal_reshape", x34, y=x34.reshape(1, 60))
    save("zeros_out", x4, y=np.zeros((5, 4)))
    x23 = ramp(5, 2, 3)
    mean, var = x23.mean(axis=(0, 2), keepdims=True), x23.var(axis=(0, 2), keepdims=True)
    save("bn_training", x23, y=(x23 - mean) / np.sqrt(var + 1e-5) + 1)
    x22 = ramp(5, 1, 2, 2)
    save("resize_batch", x22, y=np.repeat(x22, 2, axis=0))
    save("attention_rows", rng.standard_normal((5, 5, 8)))
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
    # The batch size hidden in arithmetic that is 0 at batch 1 and 2
    # (x + n // 4), and counted along a tensor it shapes (table[cumsum(
    # ones(n)) - 1]): both refused.
    model(out, "batch_quarter",
          shape_nodes + [helper.make_node("Div", ["n", "four"], ["q"], name="quarter"),
                         helper.make_node("Cast", ["q"], ["qf"], name="cast", to=1),
                         helper.make_node("Add", ["x", "qf"], ["y"], name="add_quarter")],
          [vi("x", ["N", 4])], [vi("y", ["N", 4])],
          inits=[init("zero", np.array(0, np.int64)), init("four", np.array(4, np.int64))])
    model(out, "batch_positions",
          shape_nodes + [helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
                         helper.make_node("ConstantOfShape", ["n1"], ["ones"], name="ones",
                                          value=helper.make_tensor("one", TensorProto.INT64,
                                                                   [1], [1])),
                         helper.make_node("CumSum", ["ones", "zero"], ["c"], name="count"),
                         helper.make_node("Sub", ["c", "one"], ["ids"], name="positions"),
                         helper.make_node("Gather", ["table", "ids"], ["rows"], name="lookup"),
                         helper.make_node("Add", ["x", "rows"], ["y"], name="add_rows")],
          [vi("x", ["N", 4])], [vi("y", ["N", 4])],
          inits=[init("zero", np.array(0, np.int64)), init("axes", np.array([0], np.int64)),
                 init("one", np.array(1, np.int64)),
                 init("table", np.ones((8, 4), np.float32))])
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
    # Refused both ways: the mean over the batch item by item, LpPool (no
    # dynamic dims) with the batch kept whole.
    model(out, "pool_mean",
          [helper.make_node("LpPool", ["x"], ["t"], name="pool", kernel_shape=[2, 2],
                            strides=[2, 2], p=2),
           helper.make_node("ReduceMean", ["t"], ["y"], name="batch_mean", axes=[0])],
          [vi("x", ["N", 2, 4, 4])], [vi("y", [1, 2, 2, 2])])
    model(out, "resize_batch",
          [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="upsample_batch")],
          [vi("x", ["N", 1, 2, 2])], [vi("y", ["M", 1, 2, 2])],
          inits=[init("scales", np.array([2, 1, 1, 1], np.float32))])
    attention(out, rng)
    masked_attention(out, rng)
    lppool(out, rng)
    # ConstantOfShape of twice the length: the unknown size is not the
    # dynamic dim itself but 2*seq.
    np.save(os.path.join(out, "zeros_twice_x.npy"), np.ones((2, 5), np.float32))
    np.save(os.path.join(out, "zeros_twice_y.npy"), np.zeros(10, np.float32))
    model(out, "zeros_twice",
          [helper.make_node("Shape", ["x"], ["s"], name="shape"),
           helper.make_node("Gather", ["s", "one"], ["l"], name="len", axis=0),
           helper.make_node("Mul", ["l", "two"], ["l2"], name="twice"),
           helper.make_node("Unsqueeze", ["l2", "axes"], ["l2_1"], name="l2_1"),
           helper.make_node("ConstantOfShape", ["l2_1"], ["y"], name="zeros")],
          [vi("x", ["N", "seq"])], [vi("y", ["M"])],
          inits=[init("one", np.array(1, np.int64)), init("two", np.array(2, np.int64)),
                 init("axes", np.array([0], np.int64))])
    model(out, "dynamic_seq",
          [helper.make_node("Relu", ["x"], ["y"], name="relu")],
          [vi("x", ["N", "seq"])], [vi("y", ["N", "seq"])])


if __name__ == "__main__":
    main()
