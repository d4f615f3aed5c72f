#!/usr/bin/python3
"""kiln's recurrent models (LSTM, GRU) against ONNX Runtime.

    python3 utils/bench/recurrent.py KILN [--cells lstm,gru] [--steps 100]
        [--batches 1,8] [--threads 1,2] [--iterations 20] [--warmup 5]
        [--rounds 2] [--work DIR]

A speech-style stack, torch's nn.LSTM or nn.GRU (2 layers,
bidirectional, 80 inputs, 256 hidden units, sequence first) and a
Linear to 32, exported with a dynamic length and batch, is compiled once
without --input-shape (one library for every size: the batch kept whole)
and once per batch with --input-shape pinning the length and the batch.
For each batch and thread count, `kiln bench` of both libraries and ONNX
Runtime on the exported model (ort_bench.js: graph optimisation 'all',
intraOpNumThreads N) alternate for --rounds rounds; the best median of
each is printed (ms), with the ratios dynamic/static and dynamic/ORT
(below 1: kiln's dynamic library is faster). The dynamic library's
outputs are checked against torch's first. Measurements, not tests:
compare the ratios of one run. Needs torch and onnxruntime-node
(`npm install --ignore-scripts` in this folder).
"""

import argparse
import inspect
import os
import subprocess
import sys

import numpy as np
import torch

import bench


class Stack(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.r = cell(80, 256, num_layers=2, bidirectional=True)
        self.fc = torch.nn.Linear(512, 32)

    def forward(self, x):
        y, _ = self.r(x)
        return self.fc(y)


def export(cell, work, steps, batches):
    """WORK/CELL.onnx and, per batch B, WORK/CELL_xB.npy and torch's
    output WORK/CELL_yB.npy."""
    torch.manual_seed(0)
    m = Stack({"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[cell]).eval()
    axes = {0: "seq", 1: "batch"}
    kwargs = dict(input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": axes, "y": axes}, opset_version=17)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    path = os.path.join(work, cell + ".onnx")
    torch.onnx.export(m, torch.randn(steps, 2, 80), path, **kwargs)
    for b in batches:
        x = torch.randn(steps, b, 80)
        with torch.no_grad():
            y = m(x)
        np.save(os.path.join(work, "%s_x%d.npy" % (cell, b)), x.numpy())
        np.save(os.path.join(work, "%s_y%d.npy" % (cell, b)), y.numpy())
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--cells", default="lstm,gru")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--batches", default="1,8")
    bench.timing_args(ap, iterations=20, warmup=5)
    args = ap.parse_args()
    kiln, threads, work = bench.timing_setup(args, "kiln-recurrent-")
    batches = [int(n) for n in args.batches.split(",")]

    print("cell  batch threads  kiln-dynamic  kiln-static      ORT  dynamic/static  dynamic/ORT")
    for cell in args.cells.split(","):
        model = export(cell, work, args.steps, batches)
        lib = os.path.join(work, "lib%s.so" % cell)
        subprocess.run([kiln, "compile", model, "-q", "-o", lib], check=True)
        for b in batches:
            x = os.path.join(work, "%s_x%d.npy" % (cell, b))
            subprocess.run([kiln, "run", lib, "--input", x, "--expect",
                            os.path.join(work, "%s_y%d.npy" % (cell, b)), "--atol", "1e-4"],
                           check=True, capture_output=True)
            static = os.path.join(work, "lib%s_%d.so" % (cell, b))
            subprocess.run([kiln, "compile", model, "-q", "-o", static, "--input-shape",
                            "x=%dx%dx80" % (args.steps, b)], check=True)
            # The input as bench.py writes it (.npy for kiln, raw bytes and
            # inputs.json for ort_bench.js), in a folder of its own.
            folder = os.path.join(work, "inputs_%s_%d" % (cell, b))
            os.makedirs(folder, exist_ok=True)
            spec, npys = bench.write_inputs(model, [np.load(x)], folder)
            for t in threads:
                d, s, o = bench.best_medians(kiln, [lib, static], model, spec, npys, t, args)
                print("%-5s %5d %7d  %12.3f %12.3f %8.3f  %14.2f %12.2f" %
                      (cell, b, t, d, s, o, d / s, d / o), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
