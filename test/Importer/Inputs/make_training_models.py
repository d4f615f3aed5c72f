#!/usr/bin/env python3
"""Writes the models of training.test: ONNX's ai.onnx.preview.training ops.

    make_training_models.py OUTDIR

  - OUTDIR/grad_mlp/: a Gradient over MatMul, broadcasting Add/Sub/Mul/Div,
    Tanh, Sigmoid, Relu, Neg, Exp, Log, Sqrt and Identity, with respect to
    four inputs of the path and one input y does not depend on; inputs as
    .npy files and the expected outputs from torch's autograd (float64,
    of the sum of y, which is what Gradient's all-ones seed computes);
  - OUTDIR/grad_at/: Gradient evaluated at values other than the graph's
    own (its inputs replace `xs`): d(a*a + b)/da at a2 is 2*a2; and one
    value fed for both `a` and `b`: the two partials, 2*a2 and 1;
  - OUTDIR/bad_grad_softmax.onnx, bad_grad_no_y.onnx: a path through an op
    kiln does not differentiate, and a `y` that is not a value.

Deterministic; needs numpy, onnx and torch (Debian's python3-* packages).
"""

import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper

F = TensorProto.FLOAT
TRAINING = "ai.onnx.preview.training"


def vi(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(TRAINING, 1)])
    m.ir_version = 8
    return m


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0], **attrs)


def save(folder, m, inputs, outputs):
    os.makedirs(folder, exist_ok=True)
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(folder, "model.onnx"))
    for name, value in inputs.items():
        np.save(os.path.join(folder, "in_%s.npy" % name),
                value.astype(np.float32))
    for name, value in outputs.items():
        np.save(os.path.join(folder, "out_%s.npy" % name),
                np.asarray(value, dtype=np.float32))


def grad_mlp(out):
    nodes = [
        node("MatMul", ["x", "w"], ["h"]),
        node("Add", ["h", "b"], ["h2"]),          # [2,4] + [4]
        node("Tanh", ["h2"], ["t"]),
        node("Mul", ["t", "s"], ["u"]),           # [2,4] * scalar
        node("Sigmoid", ["h2"], ["sg"]),
        node("Div", ["u", "sg"], ["v"]),
        node("Sub", ["v", "b"], ["vb"]),
        node("Relu", ["vb"], ["r"]),
        node("Mul", ["v", "v"], ["v2"]),
        node("Add", ["v2", "one"], ["v21"]),
        node("Sqrt", ["v21"], ["q"]),
        node("Log", ["q"], ["lq"]),
        node("Neg", ["r"], ["nr"]),
        node("Exp", ["nr"], ["en"]),
        node("Identity", ["en"], ["ei"]),
        node("Add", ["lq", "ei"], ["y"]),
        helper.make_node("Gradient", ["x", "w", "b", "s", "c"],
                         ["dx", "dw", "db", "ds", "dc"], name="grad",
                         domain=TRAINING, xs=["x", "w", "b", "s", "c"], y="y"),
    ]
    one = helper.make_tensor("one", F, [], [1.0])
    m = model(nodes,
              [vi("x", [2, 3]), vi("w", [3, 4]), vi("b", [4]), vi("s", []),
               vi("c", [2])],
              [vi("y", [2, 4]), vi("dx", [2, 3]), vi("dw", [3, 4]),
               vi("db", [4]), vi("ds", []), vi("dc", [2])])
    m.graph.initializer.append(one)
    rng = np.random.default_rng(0)
    values = {"x": rng.standard_normal((2, 3)),
              "w": rng.standard_normal((3, 4)),
              "b": rng.standard_normal(4) * 0.5,
              "s": np.array(1.5),
              "c": rng.standard_normal(2)}
    t = {k: torch.tensor(v.astype(np.float32).astype(np.float64),
                         requires_grad=True) for k, v in values.items()}
    h2 = t["x"] @ t["w"] + t["b"]
    v = torch.tanh(h2) * t["s"] / torch.sigmoid(h2)
    r = torch.relu(v - t["b"])
    y = torch.log(torch.sqrt(v * v + 1)) + torch.exp(-r)
    y.sum().backward()
    save(os.path.join(out, "grad_mlp"), m, values,
         {"y": y.detach().numpy(), "dx": t["x"].grad, "dw": t["w"].grad,
          "db": t["b"].grad, "ds": t["s"].grad, "dc": np.zeros(2)})


def grad_at(out):
    nodes = [
        node("Mul", ["a", "a"], ["aa"]),
        node("Add", ["aa", "b"], ["c"]),
        helper.make_node("Gradient", ["a2"], ["dc_da"], name="grad",
                         domain=TRAINING, xs=["a"], y="c"),
    ]
    m = model(nodes, [vi("a", [3]), vi("b", [3]), vi("a2", [3])],
              [vi("c", [3]), vi("dc_da", [3])])
    a = np.array([1.0, -2.0, 3.0])
    b = np.array([0.5, 0.25, -1.0])
    a2 = np.array([4.0, 5.0, -6.0])
    save(os.path.join(out, "grad_at"), m, {"a": a, "b": b, "a2": a2},
         {"c": a * a + b, "dc_da": 2 * a2})
    nodes[-1] = helper.make_node("Gradient", ["a2", "a2"], ["dc_da", "dc_db"],
                                 name="grad", domain=TRAINING, xs=["a", "b"],
                                 y="c")
    m = model(nodes, [vi("a", [3]), vi("b", [3]), vi("a2", [3])],
              [vi("c", [3]), vi("dc_da", [3]), vi("dc_db", [3])])
    save(os.path.join(out, "grad_shared"), m, {"a": a, "b": b, "a2": a2},
         {"dc_da": 2 * a2, "dc_db": np.ones(3)})


def bad_models(out):
    nodes = [
        node("Softmax", ["x"], ["p"]),
        node("Add", ["p", "x"], ["y"]),
        helper.make_node("Gradient", ["x"], ["dx"], name="grad",
                         domain=TRAINING, xs=["x"], y="y"),
    ]
    m = model(nodes, [vi("x", [4])], [vi("y", [4]), vi("dx", [4])])
    onnx.save(m, os.path.join(out, "bad_grad_softmax.onnx"))
    nodes = [
        node("Neg", ["x"], ["y"]),
        helper.make_node("Gradient", ["x"], ["dx"], name="grad",
                         domain=TRAINING, xs=["x"], y="nothing"),
    ]
    m = model(nodes, [vi("x", [4])], [vi("y", [4]), vi("dx", [4])])
    onnx.save(m, os.path.join(out, "bad_grad_no_y.onnx"))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_training_models.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    grad_mlp(out)
    grad_at(out)
    bad_models(out)


if __name__ == "__main__":
    main()
