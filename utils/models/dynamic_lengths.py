#!/usr/bin/python3
"""Transformers with dynamic lengths, exported by Debian's torch, compiled
once by kiln and run at several lengths against torch's own outputs.

    python3 utils/models/dynamic_lengths.py KILN --model decoder|causal_lm|cached_lm
                                                 [--work DIR] [--lengths L:L...]

- decoder: nn.TransformerDecoderLayer(256, 4, 1024, batch_first=True)
  (self-attention over the target tokens, cross-attention to the memory),
  inputs tgt [1, tgt_len, 256] and memory [1, src_len, 256]: two dynamic
  dims; --lengths pairs "T,S" (default 64,128:1,37:37,1).
- causal_lm: a GPT-style language model (token and position embeddings,
  the position ids from torch.arange over the length, two blocks of
  causal self-attention with the mask from torch.tril and a packed q/k/v
  projection split in three, GELU MLPs, an LM head over 500 tokens),
  input ids [1, seq]; --lengths "T" (default 12:1:100).
- cached_lm: the same language model as one decoder step with a
  key/value cache: ids [1, seq] after `past` cached tokens, whose keys
  and values come in as past_k/past_v [2, 1, 4, past, 16] (positions and
  the causal mask offset by past) and go out as present_k/present_v of
  past + seq tokens, next to the logits; --lengths "P,T" (default
  0,12:12,1:40,3:100,27).

Random weights (torch.manual_seed(0), opset 17, eval mode). Exports are
cached in WORK. Exits non-zero unless every run matches (rtol 1e-3, atol
1e-4, and the max error within 1e-3 of the outputs' largest magnitude).
"""

import argparse
import inspect
import os
import subprocess
import sys
import tempfile

import numpy as np

RTOL, ATOL = 1e-3, 1e-4


def decoder():
    import torch
    layer = torch.nn.TransformerDecoderLayer(256, 4, 1024, batch_first=True)
    inputs = lambda t, s: (torch.randn(1, t, 256), torch.randn(1, s, 256))
    return (layer, inputs, ["tgt", "memory"],
            {"tgt": {1: "tgt_len"}, "memory": {1: "src_len"}, "y": {1: "tgt_len"}})


def gpt_block():
    """The transformer block of causal_lm and cached_lm: causal
    self-attention (4 heads of 16, a packed q/k/v projection split in
    three) and a GELU MLP. With past keys and values it attends over them
    too, query i at position past + i, and also returns the keys and
    values of past + new tokens."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, d=64, heads=4):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.heads = heads

        def forward(self, x, past_k=None, past_v=None):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                       for z in (q, k, v))
            if past_k is not None:
                k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
            att = (q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5
            if past_k is None:
                mask = ~torch.tril(torch.ones(t, t, dtype=torch.bool))
            else:
                q_pos = torch.arange(0, t, dtype=torch.long).unsqueeze(1) + past_k.shape[2]
                mask = torch.arange(0, k.shape[2], dtype=torch.long).unsqueeze(0) > q_pos
            att = att.masked_fill(mask, float("-inf")).softmax(-1)
            x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(b, t, c))
            x = x + self.mlp(self.ln2(x))
            return x if past_k is None else (x, k, v)

    return Block


def causal_lm():
    import torch
    from torch import nn
    Block = gpt_block()

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(500, 64), nn.Embedding(128, 64)
            self.blocks = nn.Sequential(Block(), Block())
            self.ln, self.head = nn.LayerNorm(64), nn.Linear(64, 500, bias=False)

        def forward(self, ids):
            pos = torch.arange(0, ids.shape[1], dtype=torch.long)
            return self.head(self.ln(self.blocks(self.wte(ids) + self.wpe(pos))))

    inputs = lambda t: (torch.randint(0, 500, (1, t)),)
    return LM(), inputs, ["ids"], {"ids": {1: "seq"}, "y": {1: "seq"}}


def cached_lm():
    import torch
    from torch import nn
    Block = gpt_block()

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(500, 64), nn.Embedding(128, 64)
            self.blocks = nn.ModuleList([Block(), Block()])
            self.ln, self.head = nn.LayerNorm(64), nn.Linear(64, 500, bias=False)

        def forward(self, ids, past_k, past_v):
            p = past_k.shape[3]
            pos = torch.arange(0, ids.shape[1], dtype=torch.long) + p
            x = self.wte(ids) + self.wpe(pos)
            ks, vs = [], []
            for i, block in enumerate(self.blocks):
                x, k, v = block(x, past_k[i], past_v[i])
                ks.append(k)
                vs.append(v)
            return self.head(self.ln(x)), torch.stack(ks), torch.stack(vs)

    # A decoder step: `seq` new tokens after `past` cached ones, whose keys
    # and values come in (2 blocks, 4 heads of 16) and go out longer by seq.
    inputs = lambda p, t: (torch.randint(0, 500, (1, t)), torch.randn(2, 1, 4, p, 16),
                           torch.randn(2, 1, 4, p, 16))
    return (LM(), inputs, ["ids", "past_k", "past_v"], ["y", "present_k", "present_v"],
            {"ids": {1: "seq"}, "past_k": {3: "past"}, "past_v": {3: "past"},
             "y": {1: "seq"}, "present_k": {3: "total"}, "present_v": {3: "total"}})


MODELS = {"decoder": (decoder, "64,128:1,37:37,1"), "causal_lm": (causal_lm, "12:1:100"),
          "cached_lm": (cached_lm, "0,12:12,1:40,3:100,27")}


def export(name, work, lengths):
    """WORK/NAME.onnx, and per length tuple the inputs and torch's output."""
    path = os.path.join(work, name + ".onnx")
    tags = ["_".join(str(n) for n in ls) for ls in lengths]
    import torch
    torch.manual_seed(0)
    spec = MODELS[name][0]()
    model, make_inputs, input_names = spec[:3]
    output_names, axes = spec[3:] if len(spec) == 5 else (["y"], spec[3])
    model.eval()
    count = len(input_names)
    files = [([os.path.join(work, "%s.in%d.%s.npy" % (name, i, tag)) for i in range(count)],
              [os.path.join(work, "%s.%s.%s.npy" % (name, o, tag)) for o in output_names])
             for tag in tags]
    if all(os.path.exists(p) for p in [path] + [f for ins, ys in files for f in ins + ys]):
        return path, files
    kwargs = dict(opset_version=17, input_names=input_names, output_names=output_names,
                  dynamic_axes=axes)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    # With gradients enabled torch takes the exportable attention, not
    # the fused fast path.
    with torch.enable_grad():
        torch.onnx.export(model, make_inputs(*[5 + 4 * i for i in range(len(lengths[0]))]),
                          path, **kwargs)
    for ls, (ins, y_paths) in zip(lengths, files):
        torch.manual_seed(sum(n * 1000 ** i for i, n in enumerate(ls)))
        xs = make_inputs(*ls)
        with torch.no_grad():
            ys = model(*xs)
        for x, p in zip(xs, ins):
            np.save(p, x.numpy())
        for y, p in zip(ys if isinstance(ys, tuple) else (ys,), y_paths):
            np.save(p, y.numpy())
    return path, files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--model", choices=sorted(MODELS), required=True)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "kiln-models"))
    ap.add_argument("--lengths", help="length tuples, ':'-separated (numbers in a tuple by ',')")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    spec = args.lengths or MODELS[args.model][1]
    lengths = [tuple(int(x) for x in p.split(",")) for p in spec.split(":")]
    path, files = export(args.model, args.work, lengths)
    failed = False
    with tempfile.TemporaryDirectory(prefix="kiln-lengths-") as tmp:
        lib = os.path.join(tmp, "lib%s.so" % args.model)
        r = subprocess.run([args.kiln, "compile", path, "-o", lib], capture_output=True,
                           text=True)
        if r.returncode != 0:
            print("%s: compile-error: %s" % (args.model, r.stderr.strip()))
            return 1
        print("%-14s %-12s %-12s %s" % ("lengths", "output", "max abs err", "status"))
        for ls, (ins, y_paths) in zip(lengths, files):
            saved = os.path.join(tmp, "out_" + "_".join(map(str, ls)))
            cmd = [args.kiln, "run", lib]
            for p in ins:
                cmd += ["--input", p]
            for p in y_paths:
                cmd += ["--expect", p]
            r = subprocess.run(cmd + ["--rtol", repr(RTOL), "--atol", repr(ATOL),
                                      "--save-outputs", saved],
                               capture_output=True, text=True)
            for y_path in y_paths:
                output = os.path.basename(y_path).split(".")[1]
                got_path = os.path.join(saved, output + ".npy")
                err, ok = None, False
                if os.path.exists(got_path):
                    got, want = np.load(got_path), np.load(y_path)
                    ok = got.shape == want.shape
                    if ok and want.size:
                        err = float(np.max(np.abs(got.astype(np.float64) - want)))
                        scale = float(np.max(np.abs(want)))
                        ok = scale > 0 and err / scale <= RTOL
                    ok = ok and r.returncode == 0
                status = "pass" if ok else "FAIL " + (r.stderr.strip() or r.stdout.strip())
                print("%-14s %-12s %-12s %s" % (",".join(map(str, ls)), output,
                                                "%.3g" % err if err is not None else "-",
                                                status))
                failed |= not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
