"""Models whose inputs have a symbolic dim besides the batch (a sequence
length), for symbolic-dims.test, with numpy references at several values.

    python3 make_symbolic_models.py OUTDIR
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

# The same model builders as the dynamic batch's models.
from make_dynamic_models import init, model, vi


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def save(out, name, array):
    np.save(os.path.join(out, name + ".npy"), array.astype(np.float32))


def resize_1d(x, axis, out, scale, mode, coordinate, nearest="round_prefer_floor", a=-0.75):
    """ONNX's Resize along one axis (taps clamped to the edge), in float64."""
    n = x.shape[axis]
    o = np.arange(out, dtype=np.float64)
    if coordinate == "asymmetric":
        pos = o / scale
    elif coordinate == "align_corners":
        pos = o * (n - 1) / (n * scale - 1) if out > 1 else np.zeros(out)
    elif coordinate == "pytorch_half_pixel":
        pos = (o + 0.5) / scale - 0.5 if out > 1 else np.zeros(out)
    else:  # half_pixel
        pos = (o + 0.5) / scale - 0.5
    lo = np.floor(pos)
    ratio = pos - lo
    lo = lo.astype(np.int64)
    take = lambda i: np.take(x.astype(np.float64), np.clip(i, 0, n - 1), axis=axis)
    shape = [1] * x.ndim
    shape[axis] = out
    if mode == "nearest":
        up = {"floor": ratio < 0, "ceil": ratio > 0, "round_prefer_floor": ratio > 0.5,
              "round_prefer_ceil": ratio >= 0.5}[nearest]
        return take(lo + up)
    # Integral positions take the taps below, with ratio 1.
    whole = ratio == 0
    lo = np.where(whole, lo - 1, lo)
    r = np.where(whole, 1.0, ratio).reshape(shape)
    if mode == "linear":
        return take(lo) * (1 - r) + take(lo + 1) * r
    def outer(v):
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
    def inner(v):
        return ((a + 2) * v - (a + 3)) * v * v + 1
    return (take(lo - 1) * outer(r + 1) + take(lo) * inner(r) + take(lo + 1) * inner(1 - r) +
            take(lo + 2) * outer(2 - r))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)

    # Per token: MatMul, Add, Relu, Softmax over [1, seq, 16].
    w = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    model(out, "mlp",
          [helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
           helper.make_node("Add", ["m", "b"], ["a"], name="add"),
           helper.make_node("Relu", ["a"], ["r"], name="relu"),
           helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=-1)],
          [vi("x", [1, "seq", 16])], [vi("y", [1, "seq", 8])],
          [init("w", w), init("b", b)])
    for seq in (0, 1, 7, 130):
        x = rng.standard_normal((1, seq, 16)).astype(np.float32)
        save(out, f"mlp_x{seq}", x)
        save(out, f"mlp_y{seq}", softmax(np.maximum(x @ w + b, 0)))

    # Self-attention over the sequence: [seq, seq] scores, a contraction
    # over seq, and a transpose.
    wq = (rng.standard_normal((16, 8)) / 4).astype(np.float32)
    scale = np.array(0.35, dtype=np.float32)
    model(out, "attn",
          [helper.make_node("MatMul", ["x", "wq"], ["q"], name="project"),
           helper.make_node("Transpose", ["q"], ["qt"], name="transpose", perm=[0, 2, 1]),
           helper.make_node("MatMul", ["q", "qt"], ["s"], name="scores"),
           helper.make_node("Mul", ["s", "scale"], ["ss"], name="scale"),
           helper.make_node("Softmax", ["ss"], ["p"], name="softmax", axis=-1),
           helper.make_node("MatMul", ["p", "q"], ["y"], name="mix")],
          [vi("x", [1, "seq", 16])], [vi("y", [1, "seq", 8])],
          [init("wq", wq), init("scale", scale)])
    for seq in (5, 33):
        x = rng.standard_normal((1, seq, 16)).astype(np.float32)
        q = x @ wq
        p = softmax((q @ q.transpose(0, 2, 1)) * scale)
        save(out, f"attn_x{seq}", x)
        save(out, f"attn_y{seq}", p @ q)

    # Token ids through an embedding, LayerNormalization, a Gemm between
    # reshapes, a mean over the last axis; the ids' shape as an output.
    emb = rng.standard_normal((50, 16)).astype(np.float32)
    gamma = rng.standard_normal(16).astype(np.float32)
    beta = rng.standard_normal(16).astype(np.float32)
    wg = rng.standard_normal((8, 16)).astype(np.float32)
    bg = rng.standard_normal(8).astype(np.float32)
    model(out, "block",
          [helper.make_node("Gather", ["emb", "ids"], ["e"], name="embed"),
           helper.make_node("LayerNormalization", ["e", "gamma", "beta"], ["n"],
                            name="norm", axis=-1, epsilon=1e-5),
           helper.make_node("Reshape", ["n", "flat"], ["n2"], name="flatten"),
           helper.make_node("Gemm", ["n2", "wg", "bg"], ["g"], name="gemm", transB=1),
           helper.make_node("Reshape", ["g", "unflat"], ["h"], name="unflatten"),
           helper.make_node("ReduceMean", ["h"], ["m"], name="mean", axes=[2], keepdims=1),
           helper.make_node("Sub", ["h", "m"], ["y"], name="center"),
           helper.make_node("Shape", ["ids"], ["shape"], name="shape")],
          [vi("ids", [1, "seq"], TensorProto.INT64)],
          [vi("y", [1, "seq", 8]), vi("shape", [2], TensorProto.INT64)],
          [init("emb", emb), init("gamma", gamma), init("beta", beta), init("wg", wg),
           init("bg", bg), init("flat", np.array([-1, 16], np.int64)),
           init("unflat", np.array([1, -1, 8], np.int64))])
    for seq in (3, 40):
        ids = rng.integers(0, 50, (1, seq)).astype(np.int64)
        e = emb[ids]
        mu = e.mean(-1, keepdims=True)
        var = ((e - mu) ** 2).mean(-1, keepdims=True)
        n = (e - mu) / np.sqrt(var + 1e-5) * gamma + beta
        h = (n.reshape(-1, 16) @ wg.T + bg).reshape(1, -1, 8)
        np.save(os.path.join(out, f"block_ids{seq}.npy"), ids)
        save(out, f"block_y{seq}", h - h.mean(2, keepdims=True))
        np.save(os.path.join(out, f"block_shape{seq}.npy"), np.array([1, seq], np.int64))

    # The first and last tokens (Gather along the dim: it must be >= 1).
    model(out, "token0",
          [helper.make_node("Gather", ["x", "zero"], ["y"], name="first", axis=1),
           helper.make_node("Gather", ["x", "last"], ["z"], name="final", axis=1)],
          [vi("x", [1, "seq", 4])], [vi("y", [1, 4]), vi("z", [1, 4])],
          [init("zero", np.array(0, np.int64)), init("last", np.array(-1, np.int64))])
    for seq in (0, 3):
        x = rng.standard_normal((1, seq, 4)).astype(np.float32)
        save(out, f"token0_x{seq}", x)
        if seq:
            save(out, f"token0_y{seq}", x[:, 0])
            save(out, f"token0_z{seq}", x[:, -1])

    # A dynamic batch and a dynamic sequence length.
    model(out, "batch_seq",
          [helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
           helper.make_node("Add", ["m", "b"], ["a"], name="add"),
           helper.make_node("Tanh", ["a"], ["y"], name="tanh")],
          [vi("x", ["N", "seq", 16])], [vi("y", ["N", "seq", 8])],
          [init("w", w), init("b", b)])
    x = rng.standard_normal((3, 4, 16)).astype(np.float32)
    save(out, "batch_seq_x", x)
    save(out, "batch_seq_y", np.tanh(x @ w + b))

    # Outputs whose dim is an expression of the dim: Concat(x, x) (2*seq)
    # and a Reshape merging it with a static dim (4*seq).
    model(out, "concat_seq",
          [helper.make_node("Concat", ["x", "x"], ["y"], name="concat", axis=1)],
          [vi("x", [1, "seq", 4])], [vi("y", [1, "twice", 4])])
    model(out, "merge_seq",
          [helper.make_node("Reshape", ["x", "to"], ["y"], name="merge")],
          [vi("x", [1, "seq", 4])], [vi("y", [1, "merged"])],
          [init("to", np.array([1, -1], np.int64))])
    # An Expand to [1, 2 * seq] (a shape computed from the dim), as the
    # output and summed.
    n = helper.make_node
    twice = [n("Shape", ["x"], ["s"], name="shape"),
             n("Gather", ["s", "one"], ["d"], name="len", axis=0),
             n("Mul", ["d", "two"], ["d2"], name="twice"),
             n("Unsqueeze", ["d2", "axes"], ["d2u"], name="unsqueeze"),
             n("Concat", ["onev", "d2u"], ["shape2"], name="shape2", axis=0),
             n("Expand", ["c", "shape2"], ["e"], name="expand")]
    twice_inits = [init("one", np.array(1, np.int64)), init("two", np.array(2, np.int64)),
                   init("axes", np.array([0], np.int64)), init("onev", np.array([1], np.int64)),
                   init("c", np.array([[3.0]], np.float32))]
    model(out, "expand_twice", twice[:-1] + [n("Expand", ["c", "shape2"], ["y"], name="expand")],
          [vi("x", [1, "seq"])], [vi("y", [1, "seq2"])], twice_inits)
    model(out, "expand_twice_sum",
          twice + [n("ReduceSum", ["e", "axes1"], ["y"], name="sum", keepdims=0)],
          [vi("x", [1, "seq"])], [vi("y", [1])],
          twice_inits + [init("axes1", np.array([1], np.int64))])

    # Causal attention as a GPT export writes it: positions from Range
    # over the length, a packed projection Split in two, a Trilu mask
    # over a ConstantOfShape of [seq, seq].
    pe = rng.standard_normal((64, 8)).astype(np.float32)
    model(out, "causal",
          [n("Shape", ["x"], ["s"], name="shape"),
           n("Gather", ["s", "one"], ["len"], name="len", axis=0),
           n("Range", ["zero", "len", "one"], ["pos"], name="positions"),
           n("Gather", ["pe", "pos"], ["pe_x"], name="embed", axis=0),
           n("Add", ["x", "pe_x"], ["h"], name="add_positions"),
           n("Split", ["h", "halves"], ["a", "b"], name="split", axis=2),
           n("Transpose", ["b"], ["bt"], name="transpose", perm=[0, 2, 1]),
           n("MatMul", ["a", "bt"], ["sc"], name="scores"),
           n("Unsqueeze", ["len", "axes"], ["len1"], name="len1"),
           n("Concat", ["len1", "len1"], ["square"], name="square", axis=0),
           n("ConstantOfShape", ["square"], ["ones"], name="ones",
             value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
           n("Trilu", ["ones"], ["tril"], name="tril", upper=0),
           n("Mul", ["sc", "tril"], ["kept"], name="keep"),
           n("Sub", ["tril", "onef"], ["off"], name="off"),
           n("Mul", ["off", "big"], ["penalty"], name="penalty"),
           n("Add", ["kept", "penalty"], ["masked"], name="mask"),
           n("Softmax", ["masked"], ["y"], name="softmax", axis=-1)],
          [vi("x", [1, "seq", 8])], [vi("y", [1, "seq", "seq"])],
          [init("one", np.array(1, np.int64)), init("zero", np.array(0, np.int64)),
           init("pe", pe), init("halves", np.array([4, 4], np.int64)),
           init("axes", np.array([0], np.int64)), init("onef", np.array(1, np.float32)),
           init("big", np.array(1e9, np.float32))])
    for seq in (5, 1, 17):
        x = rng.standard_normal((1, seq, 8)).astype(np.float32)
        h = x + pe[:seq]
        sc = h[..., :4] @ h[..., 4:].transpose(0, 2, 1)
        tril = np.tril(np.ones((seq, seq), np.float32))
        save(out, f"causal_x{seq}", x)
        save(out, f"causal_y{seq}", softmax(sc * tril + (tril - 1) * 1e9))

    # A Reshape to a constant size fits one length only.
    model(out, "fixed_reshape",
          [helper.make_node("Reshape", ["x", "to"], ["y"], name="fixed")],
          [vi("x", [1, "seq", 4])], [vi("y", [20])], [init("to", np.array([20], np.int64))])

    # Two dynamic dims: [1, S, 4] x [4, T].
    model(out, "two_dims",
          [helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")],
          [vi("a", [1, "S", 4]), vi("b", [4, "T"])], [vi("y", [1, "S", "T"])])
    for s_, t_ in ((3, 5), (0, 2), (6, 1)):
        a = rng.standard_normal((1, s_, 4)).astype(np.float32)
        b = rng.standard_normal((4, t_)).astype(np.float32)
        save(out, f"two_a{s_}_{t_}", a)
        save(out, f"two_b{s_}_{t_}", b)
        save(out, f"two_y{s_}_{t_}", a @ b)

    # Cross-attention: queries over tgt tokens, keys and values over src
    # tokens; [tgt, src] scores, softmax over src (and over tgt, summed
    # into a per-src output), a max over src, LayerNormalization.
    wq, wk, wv = ((rng.standard_normal((16, 8)) / 4).astype(np.float32) for _ in range(3))
    gamma = rng.standard_normal(8).astype(np.float32)
    beta = rng.standard_normal(8).astype(np.float32)
    model(out, "cross",
          [n("MatMul", ["q", "wq"], ["qp"], name="project_q"),
           n("MatMul", ["kv", "wk"], ["kp"], name="project_k"),
           n("MatMul", ["kv", "wv"], ["vp"], name="project_v"),
           n("Transpose", ["kp"], ["kt"], name="transpose", perm=[0, 2, 1]),
           n("MatMul", ["qp", "kt"], ["s"], name="scores"),
           n("Mul", ["s", "scale"], ["ss"], name="scale"),
           n("Softmax", ["ss"], ["p"], name="softmax", axis=-1),
           n("MatMul", ["p", "vp"], ["m"], name="mix"),
           n("Add", ["m", "qp"], ["r"], name="residual"),
           n("LayerNormalization", ["r", "gamma", "beta"], ["y"], name="norm", axis=-1),
           n("ReduceMax", ["ss"], ["z"], name="max_src", axes=[2], keepdims=0),
           n("Softmax", ["ss"], ["pt"], name="softmax_tgt", axis=1),
           n("ReduceSum", ["pt", "axis1"], ["w"], name="sum_tgt", keepdims=0)],
          [vi("q", [1, "tgt", 16]), vi("kv", [1, "src", 16])],
          [vi("y", [1, "tgt", 8]), vi("z", [1, "tgt"]), vi("w", [1, "src"])],
          [init("wq", wq), init("wk", wk), init("wv", wv), init("scale", scale),
           init("gamma", gamma), init("beta", beta), init("axis1", np.array([1], np.int64))])
    for tgt, src in ((4, 7), (9, 1), (1, 33)):
        q = rng.standard_normal((1, tgt, 16)).astype(np.float32)
        kv = rng.standard_normal((1, src, 16)).astype(np.float32)
        qp, kp, vp = q @ wq, kv @ wk, kv @ wv
        ss = (qp @ kp.transpose(0, 2, 1)) * scale
        r = softmax(ss) @ vp + qp
        mean = r.mean(-1, keepdims=True)
        var = ((r - mean) ** 2).mean(-1, keepdims=True)
        e = np.exp(ss - ss.max(1, keepdims=True))
        for name, array in (("q", q), ("kv", kv),
                            ("y", (r - mean) / np.sqrt(var + 1e-5) * gamma + beta),
                            ("z", ss.max(2)), ("w", (e / e.sum(1, keepdims=True)).sum(1))):
            save(out, f"cross_{name}{tgt}_{src}", array)

    # Refused with two dims: [S] + [T] (they would have to be equal), and
    # a dim that is their product (a Reshape merging them) on an op.
    model(out, "add_dims",
          [helper.make_node("Add", ["a", "b"], ["y"], name="add")],
          [vi("a", [1, "S"]), vi("b", [1, "T"])], [vi("y", [1, "S"])])
    # A Reshape merging two dims: [1, S, T] -> [1, S*T], a product dim.
    model(out, "product_dims",
          [helper.make_node("MatMul", ["a", "b"], ["m"], name="matmul"),
           helper.make_node("Reshape", ["m", "flat"], ["f"], name="flatten"),
           helper.make_node("Softmax", ["f"], ["p"], name="softmax", axis=-1),
           helper.make_node("Mul", ["p", "f"], ["pf"], name="weigh"),
           helper.make_node("ReduceSum", ["pf", "axis1"], ["y"], name="sum", keepdims=0)],
          [vi("a", [1, "S", 4]), vi("b", [4, "T"])], [vi("y", [1])],
          [init("flat", np.array([1, -1], np.int64)), init("axis1", np.array([1], np.int64))])
    for s_, t_ in ((3, 5), (1, 7), (6, 1)):
        a = rng.standard_normal((1, s_, 4)).astype(np.float32)
        b = rng.standard_normal((4, t_)).astype(np.float32)
        save(out, f"product_dims_a{s_}_{t_}", a)
        save(out, f"product_dims_b{s_}_{t_}", b)
        f = (a @ b).reshape(1, -1)
        save(out, f"product_dims_y{s_}_{t_}", (softmax(f) * f).sum(axis=1))
    # Refused: three dims merged, S*T*U.
    model(out, "product_three",
          [helper.make_node("Reshape", ["x", "flat"], ["f"], name="flatten"),
           helper.make_node("ReduceSum", ["f", "axis1"], ["y"], name="sum", keepdims=0)],
          [vi("x", [1, "S", "T", "U"])], [vi("y", [1])],
          [init("flat", np.array([1, -1], np.int64)), init("axis1", np.array([1], np.int64))])
    # Every token of [1, S, T, 8] as one row of a [S*T, 8] MatMul (how
    # torch's attention merges the batch with the sequence), split back
    # to [1, S, T, 8] by the input's own shape.
    wr = (rng.standard_normal((8, 8)) / 3).astype(np.float32)
    model(out, "rows",
          [helper.make_node("Reshape", ["x", "to_rows"], ["r"], name="to_rows"),
           helper.make_node("MatMul", ["r", "w"], ["m"], name="matmul"),
           helper.make_node("Relu", ["m"], ["a"], name="relu"),
           helper.make_node("Shape", ["x"], ["xs"], name="shape"),
           helper.make_node("Reshape", ["a", "xs"], ["y"], name="from_rows")],
          [vi("x", [1, "S", "T", 8])], [vi("y", [1, "S", "T", 8])],
          [init("to_rows", np.array([-1, 8], np.int64)), init("w", wr)])
    for s_, t_ in ((3, 5), (1, 9), (4, 0)):
        x = rng.standard_normal((1, s_, t_, 8)).astype(np.float32)
        save(out, f"rows_x{s_}_{t_}", x)
        save(out, f"rows_y{s_}_{t_}", np.maximum(x @ wr, 0))

    # Dims that are affine expressions of the dims inside the model.
    # A token prepended ([1, 1 + seq, 4]), attention over it, the tokens
    # back with a Slice from 1 (seq itself), and all but the last token
    # (seq - 1: the entry point then refuses seq = 0).
    cls = rng.standard_normal((1, 1, 4)).astype(np.float32)
    model(out, "prepend",
          [n("Concat", ["cls", "x"], ["c"], name="prepend", axis=1),
           n("Softmax", ["c"], ["p"], name="softmax", axis=1),
           n("Mul", ["p", "c"], ["pc"], name="weigh"),
           n("ReduceSum", ["pc", "axis1"], ["y"], name="pool", keepdims=0),
           n("Slice", ["c", "one1", "big", "axis1"], ["tokens"], name="tokens"),
           n("Relu", ["tokens"], ["z"], name="relu"),
           n("Slice", ["x", "zero1", "minus1", "axis1"], ["head"], name="head"),
           n("Relu", ["head"], ["head_relu"], name="head_relu"),
           n("ReduceSum", ["head_relu", "axis1"], ["w"], name="head_sum", keepdims=0)],
          [vi("x", [1, "seq", 4])], [vi("y", [1, 4]), vi("z", [1, "seq", 4]), vi("w", [1, 4])],
          [init("cls", cls), init("axis1", np.array([1], np.int64)),
           init("one1", np.array([1], np.int64)), init("zero1", np.array([0], np.int64)),
           init("big", np.array([2**62], np.int64)), init("minus1", np.array([-1], np.int64))])
    for seq in (0, 1, 6):
        x = rng.standard_normal((1, seq, 4)).astype(np.float32)
        c = np.concatenate([cls, x], axis=1)
        e = np.exp(c - c.max(1, keepdims=True))
        p = e / e.sum(1, keepdims=True)
        for name, array in (("x", x), ("y", (p * c).sum(1)), ("z", np.maximum(x, 0)),
                            ("w", np.maximum(x[:, :-1], 0).sum(1))):
            save(out, f"prepend_{name}{seq}", array)

    # A key/value cache inside the model: keys and values over past + new
    # tokens (a Concat of two dims), [new, past + new] scores.
    model(out, "cache",
          [n("Concat", ["past", "x"], ["k"], name="keys", axis=1),
           n("Transpose", ["k"], ["kt"], name="transpose", perm=[0, 2, 1]),
           n("MatMul", ["x", "kt"], ["s"], name="scores"),
           n("Softmax", ["s"], ["p"], name="softmax", axis=-1),
           n("MatMul", ["p", "k"], ["y"], name="mix"),
           # All keys but the last (P + S - 1: P = S = 0 is refused).
           n("Slice", ["k", "zero1", "minus1", "axis1"], ["older"], name="older"),
           n("Relu", ["older"], ["older_relu"], name="older_relu"),
           n("ReduceSum", ["older_relu", "axis1"], ["z"], name="older_sum", keepdims=0)],
          [vi("past", [1, "P", 4]), vi("x", [1, "S", 4])],
          [vi("y", [1, "S", 4]), vi("z", [1, 4])],
          [init("axis1", np.array([1], np.int64)), init("zero1", np.array([0], np.int64)),
           init("minus1", np.array([-1], np.int64))])
    for p_, s_ in ((0, 3), (5, 1), (7, 4), (0, 0)):
        past = rng.standard_normal((1, p_, 4)).astype(np.float32)
        x = rng.standard_normal((1, s_, 4)).astype(np.float32)
        k = np.concatenate([past, x], axis=1)
        y = softmax(x @ k.transpose(0, 2, 1)) @ k if s_ else x
        z = np.maximum(k[:, :-1], 0).sum(1)
        for name, array in (("past", past), ("x", x), ("y", y), ("z", z)):
            save(out, f"cache_{name}{p_}_{s_}", array)

    # The cache as a decoder step returns it: present = past then new
    # tokens, an output of P + S rows.
    model(out, "cache_present",
          [n("Concat", ["past", "x"], ["present"], name="present", axis=1),
           n("Transpose", ["present"], ["kt"], name="transpose", perm=[0, 2, 1]),
           n("MatMul", ["x", "kt"], ["s"], name="scores"),
           n("Softmax", ["s"], ["p"], name="softmax", axis=-1),
           n("MatMul", ["p", "present"], ["y"], name="mix")],
          [vi("past", [1, "P", 4]), vi("x", [1, "S", 4])],
          [vi("y", [1, "S", 4]), vi("present", [1, "P_plus_S", 4])])
    for p_, s_ in ((0, 3), (3, 1), (4, 0), (0, 0)):
        past = rng.standard_normal((1, p_, 4)).astype(np.float32)
        x = rng.standard_normal((1, s_, 4)).astype(np.float32)
        k = np.concatenate([past, x], axis=1)
        y = softmax(x @ k.transpose(0, 2, 1)) @ k if s_ else x
        for name, array in (("past", past), ("x", x), ("y", y), ("present", k)):
            save(out, f"cache_present_{name}{p_}_{s_}", array)

    # Refused: an output of S*T elements (a product of two dims).
    model(out, "merge_two",
          [n("Reshape", ["x", "flat"], ["y"], name="flatten")],
          [vi("x", [1, "S", "T"])], [vi("y", [1, "ST"])],
          [init("flat", np.array([1, -1], np.int64))])
    for s_, t_ in ((3, 2), (0, 4)):
        x = np.arange(s_ * t_, dtype=np.float32).reshape(1, s_, t_)
        save(out, f"merge_two_x{s_}_{t_}", x)
        save(out, f"merge_two_y{s_}_{t_}", x.reshape(1, -1))

    # merge_seq: [1, seq, 4] -> [1, 4*seq].
    for seq in (0, 3):
        x = rng.standard_normal((1, seq, 4)).astype(np.float32)
        save(out, f"merge_seq_x{seq}", x)
        save(out, f"merge_seq_y{seq}", x.reshape(1, 4 * seq))

    # Reshapes that merge a dynamic dim with a static one and split it
    # again: [1, S, T, 4] -> [1, S, 4*T] (softmax over it, an output) ->
    # [1, S, T, 4].
    model(out, "regroup",
          [n("Reshape", ["x", "merge_to"], ["m"], name="merge"),
           n("Softmax", ["m"], ["p"], name="softmax", axis=-1),
           n("Reshape", ["p", "split_to"], ["y"], name="split")],
          [vi("x", [1, "S", "T", 4])], [vi("y", [1, "S", "T", 4]), vi("p", [1, "S", "T4"])],
          [init("merge_to", np.array([0, 0, -1], np.int64)),
           init("split_to", np.array([0, 0, -1, 4], np.int64))])
    for s_, t_ in ((2, 3), (1, 0), (3, 1)):
        x = rng.standard_normal((1, s_, t_, 4)).astype(np.float32)
        p = softmax(x.reshape(1, s_, 4 * t_)) if t_ else x.reshape(1, s_, 0)
        for name, array in (("x", x), ("y", p.reshape(1, s_, t_, 4)), ("p", p)):
            save(out, f"regroup_{name}{s_}_{t_}", array)

    # Concat(x, x): an output of 2*seq.
    for seq in (0, 3):
        x = rng.standard_normal((1, seq, 4)).astype(np.float32)
        save(out, f"concat_seq_x{seq}", x)
        save(out, f"concat_seq_y{seq}", np.concatenate([x, x], axis=1))

    # The Expand to [1, 2 * seq] summed inside the model.
    for seq in (0, 5):
        save(out, f"expand_twice_sum_x{seq}", np.zeros((1, seq), np.float32))
        save(out, f"expand_twice_sum_y{seq}", np.array([6.0 * seq], np.float32))

    # A CNN with a symbolic height and width: each conv's and pool's output
    # size is a rounded fraction of H or W. A 3x3 stride-2 conv without
    # pads, a residual block whose two paths (a 3x3 conv, a 3x3
    # stride-1 max pool) keep that size, a 3x3 average pool, a 1x1 conv
    # (over H' * W' flat pixels), a ceil_mode max pool, a global average
    # pool: [1, 4, 1, 1] for every size.
    w1 = (rng.standard_normal((4, 2, 3, 3)) / 3).astype(np.float32)
    b1 = rng.standard_normal(4).astype(np.float32)
    w2 = (rng.standard_normal((4, 4, 3, 3)) / 6).astype(np.float32)
    cnn_nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", strides=[2, 2]),
        n("Relu", ["c1"], ["r1"], name="relu1"),
        n("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        n("MaxPool", ["r1"], ["m1"], name="pool1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Add", ["c2", "m1"], ["a"], name="residual"),
        n("AveragePool", ["a"], ["v"], name="blur", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
          count_include_pad=1),
        n("Conv", ["v", "w3", "b3"], ["p"], name="pointwise"),
        n("MaxPool", ["p"], ["m2"], name="pool2", kernel_shape=[3, 3], strides=[2, 2],
          ceil_mode=1),
        n("GlobalAveragePool", ["m2"], ["y"], name="gap")]
    w3 = (rng.standard_normal((4, 4, 1, 1)) / 2).astype(np.float32)
    b3 = rng.standard_normal(4).astype(np.float32)
    cnn_inits = [init("w1", w1), init("b1", b1), init("w2", w2), init("w3", w3), init("b3", b3)]
    model(out, "cnn_hw", cnn_nodes, [vi("x", [1, 2, "H", "W"])], [vi("y", [1, 4, 1, 1])],
          cnn_inits)
    # Refused: an average pool over a dynamic dim with ceil_mode (windows
    # that count fewer elements).
    model(out, "avg_ceil",
          [n("AveragePool", ["x"], ["p"], name="avg", kernel_shape=[2, 2], strides=[2, 2],
             ceil_mode=1),
           n("GlobalAveragePool", ["p"], ["y"], name="gap")],
          [vi("x", [1, 1, "H", "W"])], [vi("y", [1, 1, 1, 1])])
    # The feature map as an output (its dims are conv output sizes,
    # floor((H - 3) / 2) + 1), and flattened to [1, 4, H' * W'] (a product).
    model(out, "cnn_hw_map",
          cnn_nodes[:2] + [n("Reshape", ["r1", "flat_shape"], ["flat"], name="flatten")],
          [vi("x", [1, 2, "H", "W"])], [vi("r1", [1, 4, "H2", "W2"]), vi("flat", [1, 4, None])],
          cnn_inits[:2] + [init("flat_shape", np.array([1, 4, -1], np.int64))])

    def conv(x, w, b=None, stride=1, pad=0):
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        k = w.shape[2]
        oh, ow = (x.shape[2] - k) // stride + 1, (x.shape[3] - k) // stride + 1
        y = np.zeros((1, w.shape[0], oh, ow), np.float64)
        for i in range(k):
            for j in range(k):
                patch = x[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
                y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
        return y if b is None else y + b.reshape(1, -1, 1, 1)

    def maxpool(x, k, stride, pad, ceil):
        size = lambda d: (-(-(d + 2 * pad - k) // stride) if ceil else (d + 2 * pad - k) // stride) + 1
        oh, ow = size(x.shape[2]), size(x.shape[3])
        # ceil_mode: the last window starts inside the input or its left pad.
        oh -= ceil and (oh - 1) * stride >= x.shape[2] + pad
        ow -= ceil and (ow - 1) * stride >= x.shape[3] + pad
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad + stride), (pad, pad + stride)),
                   constant_values=-np.inf)
        y = np.full((1, x.shape[1], oh, ow), -np.inf)
        for i in range(k):
            for j in range(k):
                y = np.maximum(y, x[:, :, i:i + stride * (oh - 1) + 1:stride,
                                    j:j + stride * (ow - 1) + 1:stride])
        return y

    for h, w in ((5, 5), (8, 13), (17, 6)):
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        r1 = np.maximum(conv(x, w1, b1, stride=2), 0)
        save(out, f"cnn_hw_map_r{h}_{w}", r1)
        save(out, f"cnn_hw_map_flat{h}_{w}", r1.reshape(1, 4, -1))
        a = conv(r1, w2, pad=1) + maxpool(r1, 3, 1, 1, False)
        # The average over 3x3 windows, zeros padded and counted.
        box = np.zeros((4, 4, 3, 3))
        box[np.arange(4), np.arange(4)] = 1.0 / 9
        v = conv(a, box, pad=1)
        y = maxpool(conv(v, w3, b3), 3, 2, 0, True).mean(axis=(2, 3), keepdims=True)
        save(out, f"cnn_hw_x{h}_{w}", x)
        save(out, f"cnn_hw_y{h}_{w}", y)
    save(out, "cnn_hw_x2_5", rng.standard_normal((1, 2, 2, 5)).astype(np.float32))

    # Attention over the pixels of a dynamic image: a stride-2 conv's
    # [1, 4, H', W'] flattened to [1, 4, H'*W'] (a product of two floor
    # dims), a softmax over the pixels, their weighted sum.
    model(out, "pixels",
          [n("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", strides=[2, 2]),
           n("Reshape", ["c1", "flat"], ["f"], name="flatten"),
           n("Softmax", ["f"], ["p"], name="softmax", axis=-1),
           n("Mul", ["p", "f"], ["pf"], name="weigh"),
           n("ReduceSum", ["pf", "axis2"], ["y"], name="sum", keepdims=0)],
          [vi("x", [1, 2, "H", "W"])], [vi("y", [1, 4])],
          [init("w1", w1), init("b1", b1), init("flat", np.array([1, 4, -1], np.int64)),
           init("axis2", np.array([2], np.int64))])
    for h, w in ((5, 5), (9, 14)):
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        f = conv(x, w1, b1, stride=2).reshape(1, 4, -1)
        save(out, f"pixels_x{h}_{w}", x)
        save(out, f"pixels_y{h}_{w}", (softmax(f) * f).sum(axis=2))

    # BatchNormalization (inference) over a dynamic height and width.
    scale, bias, mean = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
    var = (rng.random(3) + 0.5).astype(np.float32)
    model(out, "bn_hw", [n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn",
                           epsilon=1e-5)],
          [vi("x", [1, 3, "H", "W"])], [vi("y", [1, 3, "H", "W"])],
          [init("s", scale), init("b", bias), init("m", mean), init("v", var)])
    c = lambda a: a.reshape(1, 3, 1, 1)
    for h, w in ((5, 7), (16, 3)):
        x = rng.standard_normal((1, 3, h, w)).astype(np.float32)
        save(out, f"bn_hw_x{h}_{w}", x)
        save(out, f"bn_hw_y{h}_{w}", (x - c(mean)) / np.sqrt(c(var) + 1e-5) * c(scale) + c(bias))

    # Pads over a dynamic height and width, in each mode: [1, 2, H + 6, W + 6].
    def pads(*p):
        return init("pads_" + "_".join(map(str, p)).replace("-", "m"), np.array(p, np.int64))
    reflect, constant, edge, wrap = (pads(0, 0, 1, 2, 0, 0, 2, 1), pads(0, 0, 1, 0, 0, 0, 0, 1),
                                     pads(0, 0, 0, 1, 0, 0, 1, 0), pads(0, 0, 1, 0, 0, 0, 0, 2))
    model(out, "pad_hw",
          [n("Pad", ["x", reflect.name], ["a"], name="reflect", mode="reflect"),
           n("Pad", ["a", constant.name, "value"], ["b"], name="constant", mode="constant"),
           n("Pad", ["b", edge.name], ["c"], name="edge", mode="edge"),
           n("Pad", ["c", wrap.name], ["y"], name="wrap", mode="wrap")],
          [vi("x", [1, 2, "H", "W"])], [vi("y", [1, 2, "H + 6", "W + 6"])],
          [reflect, constant, edge, wrap, init("value", np.array(0.25, np.float32))])
    for h, w in ((3, 5), (1, 1), (6, 2)):
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        a = np.pad(x, [(0, 0), (0, 0), (1, 2), (2, 1)], mode="reflect")
        b = np.pad(a, [(0, 0), (0, 0), (1, 0), (0, 1)], constant_values=0.25)
        c = np.pad(b, [(0, 0), (0, 0), (0, 1), (1, 0)], mode="edge")
        save(out, f"pad_hw_x{h}_{w}", x)
        save(out, f"pad_hw_y{h}_{w}", np.pad(c, [(0, 0), (0, 0), (1, 0), (0, 2)], mode="wrap"))
    save(out, "pad_hw_x0_4", np.zeros((1, 2, 0, 4), np.float32))

    # ArgMax along the static last axis of [1, seq, 8] and ArgMin along seq
    # itself (indices, int64).
    model(out, "arg_seq",
          [n("ArgMax", ["x"], ["best"], name="argmax", axis=-1, keepdims=0),
           n("ArgMin", ["x"], ["first"], name="argmin", axis=1, keepdims=1)],
          [vi("x", [1, "seq", 8])],
          [vi("best", [1, "seq"], TensorProto.INT64), vi("first", [1, 1, 8], TensorProto.INT64)])
    for seq in (1, 6):
        x = rng.standard_normal((1, seq, 8)).astype(np.float32)
        save(out, f"arg_seq_x{seq}", x)
        np.save(os.path.join(out, f"arg_seq_best{seq}.npy"), x.argmax(-1).astype(np.int64))
        np.save(os.path.join(out, f"arg_seq_first{seq}.npy"),
                x.argmin(1).reshape(1, 1, 8).astype(np.int64))

    # Positions from a padding mask over a dynamic length, as RoBERTa's
    # export computes them: CumSum(mask) * mask.
    model(out, "positions",
          [n("CumSum", ["mask", "axis"], ["c"], name="cumsum"),
           n("Mul", ["c", "mask"], ["y"], name="keep")],
          [vi("mask", [1, "seq"], TensorProto.INT64)], [vi("y", [1, "seq"], TensorProto.INT64)],
          [init("axis", np.array(1, np.int64))])
    for seq in (1, 7):
        mask = (rng.random((1, seq)) < 0.7).astype(np.int64)
        np.save(os.path.join(out, f"positions_mask{seq}.npy"), mask)
        np.save(os.path.join(out, f"positions_y{seq}.npy"), np.cumsum(mask, 1) * mask)

    # InstanceNormalization, MeanVarianceNormalization and Tile over a
    # dynamic height and width: [1, 3, 2H, W].
    scale, bias = (rng.standard_normal(3).astype(np.float32) for _ in range(2))
    model(out, "norm_hw",
          [n("InstanceNormalization", ["x", "s", "b"], ["a"], name="instance", epsilon=1e-5),
           n("MeanVarianceNormalization", ["a"], ["m"], name="mvn"),
           n("Tile", ["m", "repeats"], ["y"], name="tile")],
          [vi("x", [1, 3, "H", "W"])], [vi("y", [1, 3, "2*H", "W"])],
          [init("s", scale), init("b", bias), init("repeats", np.array([1, 1, 2, 1], np.int64))])
    for h, w in ((3, 5), (1, 7), (4, 2)):
        x = rng.standard_normal((1, 3, h, w)).astype(np.float32)
        mean = x.mean((2, 3), keepdims=True)
        a = (x - mean) / np.sqrt(x.var((2, 3), keepdims=True) + 1e-5)
        a = a * scale.reshape(1, 3, 1, 1) + bias.reshape(1, 3, 1, 1)
        m = (a - a.mean((0, 2, 3), keepdims=True)) / np.sqrt(a.var((0, 2, 3), keepdims=True) + 1e-9)
        save(out, f"norm_hw_x{h}_{w}", x)
        save(out, f"norm_hw_y{h}_{w}", np.tile(m, (1, 1, 2, 1)))

    # Resize over a dynamic height and width: torch's nearest Upsample
    # (asymmetric, floor) by 2, then a bilinear one of the width by 1.5
    # (pytorch_half_pixel; 2W * 1.5 = 3W), and a bicubic one of the
    # height by 3 with align_corners: [1, 2, 2H, 3W] and [1, 2, 3H, W].
    resize = lambda inputs, output, name, mode, coordinate, **kw: n(
        "Resize", inputs, [output], name=name, mode=mode,
        coordinate_transformation_mode=coordinate, **kw)
    model(out, "resize_hw",
          [resize(["x", "", "up2"], "a", "upsample", "nearest", "asymmetric", nearest_mode="floor"),
           resize(["a", "", "wide"], "y", "widen", "linear", "pytorch_half_pixel"),
           resize(["x", "", "tall"], "z", "stretch", "cubic", "align_corners")],
          [vi("x", [1, 2, "H", "W"])], [vi("y", [1, 2, "2*H", "3*W"]), vi("z", [1, 2, "3*H", "W"])],
          [init("up2", np.array([1, 1, 2, 2], np.float32)),
           init("wide", np.array([1, 1, 1, 1.5], np.float32)),
           init("tall", np.array([1, 1, 3, 1], np.float32))])
    for h, w in ((3, 4), (1, 1), (5, 2)):
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        a = resize_1d(resize_1d(x, 2, 2 * h, 2, "nearest", "asymmetric", "floor"),
                      3, 2 * w, 2, "nearest", "asymmetric", "floor")
        save(out, f"resize_hw_x{h}_{w}", x)
        save(out, f"resize_hw_y{h}_{w}", resize_1d(a, 3, 3 * w, 1.5, "linear", "pytorch_half_pixel"))
        save(out, f"resize_hw_z{h}_{w}", resize_1d(x, 2, 3 * h, 3, "cubic", "align_corners"))

    # A segmentation head as torchvision's LRASPP exports it: the stride-4
    # map resized to the stride-2 map's size, whose dims are read with
    # Shape, Gather, Unsqueeze, Concat and Cast (conv output sizes, no
    # operand of the Resize has them), added to it, and the sum resized to
    # the input's size: [1, 4, H, W].
    wl = (rng.standard_normal((4, 2, 3, 3)) / 3).astype(np.float32)
    wh = (rng.standard_normal((4, 4, 3, 3)) / 3).astype(np.float32)
    model(out, "seg_hw",
          [n("Conv", ["x", "wl"], ["low"], name="low", strides=[2, 2], pads=[1, 1, 1, 1]),
           n("Conv", ["low", "wh"], ["high"], name="high", strides=[2, 2], pads=[1, 1, 1, 1]),
           n("Shape", ["high"], ["high_shape"], name="high_shape"),
           n("Slice", ["high_shape", "zero", "two"], ["nc"], name="nc"),
           n("Shape", ["low"], ["low_shape"], name="low_shape"),
           n("Gather", ["low_shape", "two_s"], ["lh"], name="lh", axis=0),
           n("Gather", ["low_shape", "three_s"], ["lw"], name="lw", axis=0),
           n("Unsqueeze", ["lh", "zero"], ["lh1"], name="lh1"),
           n("Unsqueeze", ["lw", "zero"], ["lw1"], name="lw1"),
           n("Concat", ["lh1", "lw1"], ["lhw"], name="lhw", axis=0),
           n("Cast", ["lhw"], ["lhw64"], name="lhw64", to=TensorProto.INT64),
           n("Concat", ["nc", "lhw64"], ["size_low"], name="size_low", axis=0),
           resize(["high", "", "", "size_low"], "up", "up_low", "linear", "half_pixel"),
           n("Add", ["up", "low"], ["s"], name="merge"),
           n("Shape", ["x"], ["x_shape"], name="x_shape"),
           n("Slice", ["x_shape", "two", "four"], ["xhw"], name="xhw"),
           n("Concat", ["nc", "xhw"], ["size_x"], name="size_x", axis=0),
           resize(["s", "", "", "size_x"], "y", "up_x", "linear", "half_pixel")],
          [vi("x", [1, 2, "H", "W"])], [vi("y", [1, 4, "H", "W"])],
          [init("wl", wl), init("wh", wh), init("zero", np.array([0], np.int64)),
           init("two", np.array([2], np.int64)), init("four", np.array([4], np.int64)),
           init("two_s", np.array(2, np.int64)), init("three_s", np.array(3, np.int64))])

    def bilinear_to(t, h, w):
        return resize_1d(resize_1d(t, 2, h, h / t.shape[2], "linear", "half_pixel"),
                         3, w, w / t.shape[3], "linear", "half_pixel")
    for h, w in ((9, 6), (1, 2), (16, 13)):
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        low = conv(x, wl, stride=2, pad=1)
        high = conv(low, wh, stride=2, pad=1)
        s_ = bilinear_to(high, low.shape[2], low.shape[3]) + low
        save(out, f"seg_hw_x{h}_{w}", x)
        save(out, f"seg_hw_y{h}_{w}", bilinear_to(s_, h, w))

    # A super-resolution tail over a dynamic height and width (ESPCN's
    # PixelShuffle, which torch exports as DepthToSpace in CRD mode): a 3x3
    # conv to 8 channels, DepthToSpace by 2 in CRD and DCR mode:
    # [1, 2, 2H, 2W].
    wsr = (rng.standard_normal((8, 2, 3, 3)) / 3).astype(np.float32)
    model(out, "shuffle_hw",
          [n("Conv", ["x", "wsr"], ["f"], name="conv", pads=[1, 1, 1, 1]),
           n("DepthToSpace", ["f"], ["y"], name="shuffle", blocksize=2, mode="CRD"),
           n("DepthToSpace", ["f"], ["z"], name="shuffle_dcr", blocksize=2, mode="DCR")],
          [vi("x", [1, 2, "H", "W"])], [vi("y", [1, 2, "2*H", "2*W"]), vi("z", [1, 2, "2*H", "2*W"])],
          [init("wsr", wsr)])

    def depth_to_space(f, b, mode):
        nn, c, h, w = f.shape
        if mode == "CRD":
            t = f.reshape(nn, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
        else:
            t = f.reshape(nn, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
        return t.reshape(nn, c // (b * b), h * b, w * b)
    for h, w in ((3, 5), (1, 1), (4, 2)):
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        f = conv(x, wsr, pad=1)
        save(out, f"shuffle_hw_x{h}_{w}", x)
        save(out, f"shuffle_hw_y{h}_{w}", depth_to_space(f, 2, "CRD"))
        save(out, f"shuffle_hw_z{h}_{w}", depth_to_space(f, 2, "DCR"))

    # A scale of 1.5 over H: floor(1.5 * H) is no dim kiln sizes.
    model(out, "resize_frac", [resize(["x", "", "frac"], "y", "stretch", "linear", "half_pixel")],
          [vi("x", [1, 2, "H", "W"])], [vi("y", [1, 2, None, "W"])],
          [init("frac", np.array([1, 1, 1.5, 1], np.float32))])

    # A feature pyramid's top-down step, as torchvision's FPN exports it:
    # the coarse map (a stride-2 conv's) resized to the lateral map's size,
    # read with Shape (`interpolate(top, size=lateral.shape[-2:])`), and
    # added to it.
    w3 = (rng.standard_normal((4, 2, 3, 3)) / 3).astype(np.float32)
    w1 = rng.standard_normal((4, 2, 1, 1)).astype(np.float32)
    model(out, "fpn_hw",
          [n("Conv", ["x", "w3"], ["top"], name="coarse", strides=[2, 2], pads=[1, 1, 1, 1]),
           n("Conv", ["x", "w1"], ["lateral"], name="lateral"),
           n("Shape", ["top"], ["top_shape"], name="top_shape"),
           n("Slice", ["top_shape", "zero", "two"], ["nc"], name="nc"),
           n("Shape", ["lateral"], ["lateral_shape"], name="lateral_shape"),
           n("Slice", ["lateral_shape", "two", "four"], ["hw"], name="hw"),
           n("Concat", ["nc", "hw"], ["size"], name="size", axis=0),
           resize(["top", "", "", "size"], "up", "upsample", "linear", "half_pixel"),
           n("Add", ["up", "lateral"], ["y"], name="merge")],
          [vi("x", [1, 2, "H", "W"])], [vi("y", [1, 4, "H", "W"])],
          [init("w3", w3), init("w1", w1), init("zero", np.array([0], np.int64)),
           init("two", np.array([2], np.int64)), init("four", np.array([4], np.int64))])
    for h, w in ((5, 8), (1, 3), (6, 6)):
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        top = conv(x, w3, stride=2, pad=1)
        up = resize_1d(resize_1d(top, 2, h, h / top.shape[2], "linear", "half_pixel"),
                       3, w, w / top.shape[3], "linear", "half_pixel")
        save(out, f"fpn_hw_x{h}_{w}", x)
        save(out, f"fpn_hw_y{h}_{w}", up + conv(x, w1))


if __name__ == "__main__":
    main()
