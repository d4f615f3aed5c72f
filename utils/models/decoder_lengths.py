#!/usr/bin/python3
"""A decoder with two dynamic lengths: torch's nn.TransformerDecoderLayer
(self-attention over the target tokens, cross-attention to the memory),
exported with symbolic target and source lengths, compiled once by kiln
and run at several (target, source) pairs against torch's own outputs.

    python3 utils/models/decoder_lengths.py KILN [--work DIR] [--pairs T,S:T,S...]

The layer is nn.TransformerDecoderLayer(256, 4, 1024, batch_first=True)
with random weights (torch.manual_seed(0), opset 17, eval mode), inputs
tgt [1, tgt_len, 256] and memory [1, src_len, 256]. Exports are cached in
WORK. Exits non-zero unless every pair matches (rtol 1e-3, atol 1e-4, and
the max error within 1e-3 of the outputs' largest magnitude).
"""

import argparse
import inspect
import os
import subprocess
import sys
import tempfile

import numpy as np

RTOL, ATOL = 1e-3, 1e-4


def export(work, pairs):
    """WORK/decoder.onnx, and per pair the inputs and torch's output."""
    path = os.path.join(work, "decoder.onnx")
    files = [tuple(os.path.join(work, "decoder.%s%d_%d.npy" % (k, t, s))
                   for k in ("tgt", "memory", "y")) for t, s in pairs]
    if all(os.path.exists(p) for p in [path] + [f for fs in files for f in fs]):
        return path, files
    import torch
    torch.manual_seed(0)
    layer = torch.nn.TransformerDecoderLayer(256, 4, 1024, batch_first=True)
    layer.eval()
    kwargs = dict(opset_version=17, input_names=["tgt", "memory"], output_names=["y"],
                  dynamic_axes={"tgt": {1: "tgt_len"}, "memory": {1: "src_len"},
                                "y": {1: "tgt_len"}})
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    example = (torch.randn(1, 5, 256), torch.randn(1, 9, 256))
    # With gradients enabled torch takes the exportable attention, not
    # the fused fast path.
    with torch.enable_grad():
        torch.onnx.export(layer, example, path, **kwargs)
    for (t, s), (tgt_path, mem_path, y_path) in zip(pairs, files):
        torch.manual_seed(t * 1000 + s)
        tgt, memory = torch.randn(1, t, 256), torch.randn(1, s, 256)
        with torch.no_grad():
            y = layer(tgt, memory)
        np.save(tgt_path, tgt.numpy())
        np.save(mem_path, memory.numpy())
        np.save(y_path, y.numpy())
    return path, files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "kiln-models"))
    ap.add_argument("--pairs", default="64,128:1,37:37,1",
                    help="target,source lengths, ':'-separated")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    pairs = [tuple(int(x) for x in p.split(",")) for p in args.pairs.split(":")]
    path, files = export(args.work, pairs)
    failed = False
    with tempfile.TemporaryDirectory(prefix="kiln-decoder-") as tmp:
        lib = os.path.join(tmp, "libdecoder.so")
        r = subprocess.run([args.kiln, "compile", path, "-o", lib], capture_output=True,
                           text=True)
        if r.returncode != 0:
            print("decoder: compile-error: " + r.stderr.strip())
            return 1
        print("%-12s %-12s %-12s %s" % ("tgt_len", "src_len", "max abs err", "status"))
        for (t, s), (tgt_path, mem_path, y_path) in zip(pairs, files):
            saved = os.path.join(tmp, "out%d_%d" % (t, s))
            r = subprocess.run([args.kiln, "run", lib, "--input", tgt_path, "--input", mem_path,
                                "--expect", y_path, "--rtol", repr(RTOL), "--atol", repr(ATOL),
                                "--save-outputs", saved], capture_output=True, text=True)
            got_path = os.path.join(saved, "y.npy")
            err, ok = None, False
            if os.path.exists(got_path):
                got, want = np.load(got_path), np.load(y_path)
                err = float(np.max(np.abs(got.astype(np.float64) - want)))
                scale = float(np.max(np.abs(want)))
                ok = r.returncode == 0 and scale > 0 and err / scale <= RTOL
            status = "pass" if ok else "FAIL " + (r.stderr.strip() or r.stdout.strip())
            print("%-12d %-12d %-12s %s" % (t, s, "%.3g" % err if err is not None else "-",
                                            status))
            failed |= not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
