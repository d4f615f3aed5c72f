#!/usr/bin/env python3
"""Recurrent models over a dynamic length and batch, for
recurrent-dynamic.test:

  - lstm.onnx: torch's nn.LSTM (2 layers, bidirectional, sequence first)
    and a Linear, exported with dynamic_axes {0: seq, 1: batch}; torch
    shapes the zero initial states from Shape(x), and the leading dim is
    the length, so the model cannot run one item of it at a time;
  - gru.onnx: nn.GRU (batch first, which torch exports as Transposes
    around a layout-0 GRU) and a Linear, dynamic_axes {0: batch, 1: seq};
  - rnn.onnx: nn.RNN (tanh), sequence first;
  - lens_gru.onnx: a reverse GRU with layout 1, sequence_lens and an
    initial state as inputs ([batch], [batch, 1, 8]), written here;
    lens_gru_seq.onnx the same with layout 0 ([seq, batch, 6] beside
    [batch]: leading dims of two names);
  - gru_reset.onnx: a static bidirectional GRU with linear_before_reset
    = 0 and constant weights (transposed at compile time).

Inputs and expected outputs at several sizes: torch's for its models
(NAME_x{S}_{B}.npy, NAME_y{S}_{B}.npy: S by B for sequence-first
models, B by S for batch-first ones), numpy's for the others
(lens_gru_{x,lens,h,y,yh}{B}_{S}.npy; lens_gru_seq_* the same,
transposed; gru_reset_{x,y,yh}.npy).

    make_recurrent_models.py OUTDIR

Deterministic; needs numpy, onnx and torch (Debian's python3-* packages).
"""
import inspect
import os
import sys

import numpy as np
import torch
from onnx import TensorProto, helper, numpy_helper

import onnx


class Recurrent(torch.nn.Module):
    def __init__(self, cell, bidirectional, batch_first, layers):
        super().__init__()
        self.r = cell(16, 32, num_layers=layers, bidirectional=bidirectional,
                      batch_first=batch_first)
        self.fc = torch.nn.Linear(64 if bidirectional else 32, 5)

    def forward(self, x):
        y, _ = self.r(x)
        return self.fc(y)


def export(out, name, cell, bidirectional, batch_first, layers, sizes):
    torch.manual_seed(0)
    m = Recurrent(cell, bidirectional, batch_first, layers).eval()
    axes = {0: "batch", 1: "seq"} if batch_first else {0: "seq", 1: "batch"}
    kwargs = dict(input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": axes, "y": axes}, opset_version=17)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    example = torch.randn(2, 7, 16) if batch_first else torch.randn(7, 2, 16)
    torch.onnx.export(m, example, os.path.join(out, name + ".onnx"), **kwargs)
    for a, b in sizes:
        x = torch.randn(a, b, 16)
        with torch.no_grad():
            y = m(x)
        np.save(os.path.join(out, "%s_x%d_%d.npy" % (name, a, b)), x.numpy())
        np.save(os.path.join(out, "%s_y%d_%d.npy" % (name, a, b)), y.numpy())


def gru_reference(x, w, r, bias, lens, h0):
    """ONNX's GRU with linear_before_reset = 1, direction reverse, layout 1:
    x [B, S, I], lens [B], h0 [B, 1, H]; returns y [B, S, 1, H] (zeros
    past each length) and yh [B, 1, H]."""
    sigmoid = lambda v: 1 / (1 + np.exp(-v))
    batch, seq, _ = x.shape
    hidden = r.shape[-1]
    wz, wr, wh = np.split(w[0].astype(np.float64), 3)
    rz, rr, rh = np.split(r[0].astype(np.float64), 3)
    wbz, wbr, wbh, rbz, rbr, rbh = np.split(bias[0].astype(np.float64), 6)
    y = np.zeros((batch, seq, 1, hidden))
    yh = np.zeros((batch, 1, hidden))
    for b in range(batch):
        h = h0[b, 0].astype(np.float64)
        for t in reversed(range(lens[b])):
            xt = x[b, t].astype(np.float64)
            z = sigmoid(xt @ wz.T + h @ rz.T + wbz + rbz)
            rg = sigmoid(xt @ wr.T + h @ rr.T + wbr + rbr)
            hc = np.tanh(xt @ wh.T + rg * (h @ rh.T + rbh) + wbh)
            h = (1 - z) * hc + z * h
            y[b, t, 0] = h
        yh[b, 0] = h
    return y.astype(np.float32), yh.astype(np.float32)


def lens_gru(out):
    rng = np.random.default_rng(1)
    hidden, width = 8, 6
    f32 = lambda *s: (0.5 * rng.standard_normal(s)).astype(np.float32)
    w, r, bias = f32(1, 3 * hidden, width), f32(1, 3 * hidden, hidden), f32(1, 6 * hidden)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"),
             numpy_helper.from_array(bias, "B")]
    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    # Layout 1, and layout 0 (inputs led by the length and by the batch:
    # two leading dims of different names, so no batch dim).
    for name, layout, x_dims, h_dims, y_dims in [
            ("lens_gru", 1, ["batch", "seq", width], ["batch", 1, hidden],
             ["batch", "seq", 1, hidden]),
            ("lens_gru_seq", 0, ["seq", "batch", width], [1, "batch", hidden],
             ["seq", 1, "batch", hidden])]:
        node = helper.make_node("GRU", ["x", "W", "R", "B", "lens", "h0"], ["y", "yh"],
                                name="gru", hidden_size=hidden, direction="reverse",
                                layout=layout, linear_before_reset=1)
        graph = helper.make_graph(
            [node], name,
            [vi("x", f, x_dims), vi("lens", TensorProto.INT32, ["batch"]), vi("h0", f, h_dims)],
            [vi("y", f, y_dims), vi("yh", f, h_dims)], initializer=inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        onnx.save(m, os.path.join(out, name + ".onnx"))
    for b, s in [(3, 5), (1, 2)]:
        x, h0 = f32(b, s, width), f32(b, 1, hidden)
        lens = rng.integers(1, s + 1, b).astype(np.int32)
        lens[0] = s
        y, yh = gru_reference(x, w, r, bias, lens, h0)
        for what, v in [("x", x), ("lens", lens), ("h", h0), ("y", y), ("yh", yh)]:
            np.save(os.path.join(out, "lens_gru_%s%d_%d.npy" % (what, b, s)), v)
        # The same, length first.
        for what, v in [("x", x.transpose(1, 0, 2)), ("lens", lens),
                        ("h", h0.transpose(1, 0, 2)), ("y", y.transpose(1, 2, 0, 3)),
                        ("yh", yh.transpose(1, 0, 2))]:
            np.save(os.path.join(out, "lens_gru_seq_%s%d_%d.npy" % (what, b, s)), v)


def reset_gru(out):
    """gru_reset.onnx: a bidirectional GRU with linear_before_reset = 0
    (the h gate reads (r * H) R_h^T, a slice of R^T since R is constant)
    over x [6, 3, 4]; numpy's y and yh."""
    rng = np.random.default_rng(3)
    hidden, width = 5, 4
    w = (0.5 * rng.standard_normal((2, 3 * hidden, width))).astype(np.float32)
    r = (0.5 * rng.standard_normal((2, 3 * hidden, hidden))).astype(np.float32)
    bias = (0.5 * rng.standard_normal((2, 6 * hidden))).astype(np.float32)
    x = rng.standard_normal((6, 3, width)).astype(np.float32)
    f = TensorProto.FLOAT
    node = helper.make_node("GRU", ["x", "W", "R", "B"], ["y", "yh"], name="gru",
                            hidden_size=hidden, direction="bidirectional")
    graph = helper.make_graph(
        [node], "gru_reset", [helper.make_tensor_value_info("x", f, [6, 3, width])],
        [helper.make_tensor_value_info("y", f, [6, 2, 3, hidden]),
         helper.make_tensor_value_info("yh", f, [2, 3, hidden])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"),
                     numpy_helper.from_array(bias, "B")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              os.path.join(out, "gru_reset.onnx"))
    sigmoid = lambda v: 1 / (1 + np.exp(-v))
    y, yh = np.zeros((6, 2, 3, hidden)), np.zeros((2, 3, hidden))
    for d in range(2):
        wz, wr, wh = np.split(w[d].astype(np.float64), 3)
        rz, rr, rh = np.split(r[d].astype(np.float64), 3)
        wbz, wbr, wbh, rbz, rbr, rbh = np.split(bias[d].astype(np.float64), 6)
        h = np.zeros((3, hidden))
        for t in (range(6) if d == 0 else reversed(range(6))):
            z = sigmoid(x[t] @ wz.T + h @ rz.T + wbz + rbz)
            rg = sigmoid(x[t] @ wr.T + h @ rr.T + wbr + rbr)
            hc = np.tanh(x[t] @ wh.T + (rg * h) @ rh.T + rbh + wbh)
            h = (1 - z) * hc + z * h
            y[t, d] = h
        yh[d] = h
    for what, v in [("x", x), ("y", y), ("yh", yh)]:
        np.save(os.path.join(out, "gru_reset_%s.npy" % what), v.astype(np.float32))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_recurrent_models.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    export(out, "lstm", torch.nn.LSTM, True, False, 2, [(3, 5), (1, 1), (9, 2)])
    export(out, "gru", torch.nn.GRU, False, True, 1, [(3, 5), (2, 1)])
    export(out, "rnn", torch.nn.RNN, False, False, 1, [(4, 3)])
    lens_gru(out)
    reset_gru(out)


if __name__ == "__main__":
    main()
