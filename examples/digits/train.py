#!/usr/bin/env python3
"""Trains a small CNN on scikit-learn's bundled 8x8 digits data set and writes,
next to this script:

  digits.onnx    the trained model (input 'image' float32 [1,1,8,8],
                 output 'logits' float32 [1,10]); ops: Conv, Relu, MaxPool,
                 Flatten, Gemm
  test_set.bin   the held-out set (format below), read by main.c
  expected.txt   'correct=K total=N': torch's result on that set, which the
                 kiln-compiled model must reproduce

test_set.bin, little-endian:
  uint32 magic 0x4B444731 ('KDG1'), uint32 count N,
  N*64 float32 pixels (scaled to [0,1], row-major 8x8 per sample),
  N uint8 labels.

Needs torch, onnx, numpy and scikit-learn; no network access (the data set
ships with scikit-learn). Deterministic: seeds fixed, one thread.
"""
import inspect
import os
import struct
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = 0x4B444731  # 'KDG1'
EPOCHS = 20
BATCH = 32
LR = 1e-3


def make_model():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16x4x4
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 32x2x2
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def load_data():
    digits = load_digits()
    x = (digits.data.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=0, stratify=y)
    return (np.ascontiguousarray(x_train, dtype=np.float32), y_train,
            np.ascontiguousarray(x_test, dtype=np.float32), y_test)


def train(model, x_train, y_train):
    xs, ys = torch.from_numpy(x_train), torch.from_numpy(y_train)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(0)
    model.train()
    for epoch in range(EPOCHS):
        perm = torch.randperm(len(xs), generator=gen)
        total = 0.0
        for i in range(0, len(xs), BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss = loss_fn(model(xs[idx]), ys[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch + 1:2d}: loss {total / len(xs):.4f}")


def torch_logits(model, x):
    """Logits for each sample run alone at batch 1, as the C program does."""
    model.eval()
    with torch.no_grad():
        return np.concatenate(
            [model(torch.from_numpy(x[i:i + 1])).numpy() for i in range(len(x))])


def export(model, path):
    model.eval()
    kwargs = dict(opset_version=13, input_names=["image"],
                  output_names=["logits"])
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), path, **kwargs)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    return m


# --- A tiny numpy interpreter for the ops this model exports to, used to check
# the ONNX file independently of torch (the installed onnx predates
# onnx.reference).

def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _conv(x, w, b, a):
    assert a.get("group", 1) == 1 and set(a.get("dilations", [1, 1])) == {1}
    pt, pl, pb, pr = a.get("pads", [0, 0, 0, 0])
    sh, sw = a.get("strides", [1, 1])
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + pt + pb, wd + pl + pr), x.dtype)
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    oh = (xp.shape[2] - kh) // sh + 1
    ow = (xp.shape[3] - kw) // sw + 1
    y = np.zeros((n, m, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def _maxpool(x, a):
    assert not a.get("ceil_mode", 0) and set(a.get("pads", [0])) == {0}
    assert set(a.get("dilations", [1, 1])) == {1}
    kh, kw = a["kernel_shape"]
    sh, sw = a.get("strides", [1, 1])
    oh = (x.shape[2] - kh) // sh + 1
    ow = (x.shape[3] - kw) // sw + 1
    y = np.full(x.shape[:2] + (oh, ow), -np.inf)
    for i in range(kh):
        for j in range(kw):
            y = np.maximum(y, x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw])
    return y


def _gemm(a_, b_, c_, a):
    if a.get("transA", 0):
        a_ = a_.T
    if a.get("transB", 0):
        b_ = b_.T
    y = a.get("alpha", 1.0) * (a_ @ b_)
    if c_ is not None:
        y = y + a.get("beta", 1.0) * c_
    return y


def numpy_run(model, x):
    env = {i.name: numpy_helper.to_array(i).astype(np.float64)
           if numpy_helper.to_array(i).dtype == np.float32
           else numpy_helper.to_array(i)
           for i in model.graph.initializer}
    env[model.graph.input[0].name] = x.astype(np.float64)
    for node in model.graph.node:
        a = _attrs(node)
        ins = [env[n] if n else None for n in node.input]
        op = node.op_type
        if op == "Conv":
            y = _conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)
        elif op == "Relu":
            y = np.maximum(ins[0], 0)
        elif op == "MaxPool":
            y = _maxpool(ins[0], a)
        elif op == "Flatten":
            ax = a.get("axis", 1)
            y = ins[0].reshape(int(np.prod(ins[0].shape[:ax])), -1)
        elif op == "Reshape":
            y = ins[0].reshape([d if d != 0 else ins[0].shape[k]
                                for k, d in enumerate(ins[1].tolist())])
        elif op == "Gemm":
            y = _gemm(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)
        else:
            raise SystemExit(f"numpy check: unexpected op {op}")
        env[node.output[0]] = y
    return env[model.graph.output[0].name]


def write_test_set(path, x, y):
    assert x.shape[1:] == (1, 8, 8) and x.dtype == np.float32
    with open(path, "wb") as f:
        f.write(struct.pack("<II", MAGIC, len(x)))
        f.write(x.astype("<f4").tobytes())
        f.write(y.astype(np.uint8).tobytes())


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    x_train, y_train, x_test, y_test = load_data()
    print(f"train {len(x_train)}, test {len(x_test)} samples")
    model = make_model()
    train(model, x_train, y_train)

    logits = torch_logits(model, x_test)
    correct = int((logits.argmax(1) == y_test).sum())
    total = len(y_test)
    print(f"torch accuracy: {100.0 * correct / total:.2f}% ({correct}/{total})")
    top2 = np.sort(logits, axis=1)[:, -2:]
    print(f"smallest gap between the top two logits: "
          f"{float((top2[:, 1] - top2[:, 0]).min()):.3g}")

    onnx_path = os.path.join(HERE, "digits.onnx")
    m = export(model, onnx_path)
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"wrote {onnx_path}: ops {ops}")
    allowed = {"Conv", "Relu", "MaxPool", "Flatten", "Reshape", "Gemm"}
    if not set(ops) <= allowed:
        sys.exit(f"unexpected ops in the export: {set(ops) - allowed}")

    ref = np.concatenate([numpy_run(m, x_test[i:i + 1]) for i in range(total)])
    diff = float(np.abs(ref - logits).max())
    agree = int((ref.argmax(1) == logits.argmax(1)).sum())
    print(f"numpy run of the ONNX graph: max |diff| vs torch {diff:.2e}, "
          f"argmax agrees on {agree}/{total}")
    if diff > 1e-4 or agree != total:
        sys.exit("the ONNX model does not match torch")

    write_test_set(os.path.join(HERE, "test_set.bin"), x_test, y_test)
    with open(os.path.join(HERE, "expected.txt"), "w") as f:
        f.write(f"correct={correct} total={total}\n")
    print("wrote test_set.bin, expected.txt")


if __name__ == "__main__":
    main()
