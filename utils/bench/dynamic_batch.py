#!/usr/bin/python3
"""A dynamic batch run item by item or kept whole, against ONNX Runtime.

    python3 utils/bench/dynamic_batch.py KILN [--batches 1,8,64]
        [--threads 1,2] [--iterations 30] [--warmup 5] [--rounds 2]
        [--work DIR]

An MLP as torch exports one with a dynamic batch (784 -> 1024 -> 1024 ->
10, ReLU between; dynamic_axes {0: "batch"}) is compiled three ways
without --input-shape: by default (--dynamic-batch=auto, which keeps this
batch whole: every matmul takes one row per item), with
--dynamic-batch=items (one item at a time: each layer reads its whole
weight for every item) and once per batch pinned with --input-shape
(static). For each batch and thread count, `kiln bench` of the three and
ONNX Runtime on the exported model (ort_bench.js: graph optimisation
'all', intraOpNumThreads N) alternate for --rounds rounds; the best median
of each is printed (ms), with the ratios auto/items, auto/static and
auto/ORT (below 1: the default library is faster). Both dynamic libraries
are checked against torch's output first. Measurements, not tests: compare
the ratios of one run. Needs torch and onnxruntime-node (`npm install
--ignore-scripts` in this folder).
"""

import argparse
import inspect
import os
import subprocess
import sys

import numpy as np
import torch

import bench


def export(work, batches):
    """WORK/mlp.onnx and, per batch B, WORK/x_B.npy and torch's output
    WORK/y_B.npy."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 10)).eval()
    kwargs = dict(input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    path = os.path.join(work, "mlp.onnx")
    torch.onnx.export(m, torch.randn(2, 784), path, **kwargs)
    for b in batches:
        x = torch.randn(b, 784)
        with torch.no_grad():
            y = m(x)
        np.save(os.path.join(work, "x_%d.npy" % b), x.numpy())
        np.save(os.path.join(work, "y_%d.npy" % b), y.numpy())
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--batches", default="1,8,64")
    bench.timing_args(ap, iterations=30, warmup=5)
    args = ap.parse_args()
    kiln, threads, work = bench.timing_setup(args, "kiln-dynamic-batch-")
    batches = [int(n) for n in args.batches.split(",")]

    model = export(work, batches)
    auto = os.path.join(work, "libmlp_auto.so")
    items = os.path.join(work, "libmlp_items.so")
    subprocess.run([kiln, "compile", model, "-q", "-o", auto], check=True)
    subprocess.run([kiln, "compile", model, "-q", "-o", items, "--dynamic-batch=items"],
                   check=True)
    print("batch threads   kiln-auto  kiln-items  kiln-static      ORT  auto/items  "
          "auto/static  auto/ORT")
    for b in batches:
        x = os.path.join(work, "x_%d.npy" % b)
        for lib in (auto, items):
            subprocess.run([kiln, "run", lib, "--input", x, "--expect",
                            os.path.join(work, "y_%d.npy" % b), "--atol", "1e-4"],
                           check=True, capture_output=True)
        static = os.path.join(work, "libmlp_%d.so" % b)
        subprocess.run([kiln, "compile", model, "-q", "-o", static, "--input-shape",
                        "x=%dx784" % b], check=True)
        folder = os.path.join(work, "inputs_%d" % b)
        os.makedirs(folder, exist_ok=True)
        spec, npys = bench.write_inputs(model, [np.load(x)], folder)
        for t in threads:
            a, i, s, o = bench.best_medians(kiln, [auto, items, static], model, spec, npys, t,
                                            args)
            print("%5d %7d  %10.3f  %10.3f  %11.3f %8.3f  %10.2f  %11.2f  %8.2f" %
                  (b, t, a, i, s, o, a / i, a / s, a / o), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
