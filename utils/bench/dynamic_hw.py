#!/usr/bin/python3
"""kiln's CNNs over a dynamic height and width, against static builds and
ONNX Runtime.

    python3 utils/bench/dynamic_hw.py KILN [--models mobilenet_v2,efficientnet_b0]
        [--sizes 224x224,150x200] [--static 224x224] [--threads 1,2]
        [--iterations 30] [--warmup 5] [--rounds 2] [--work DIR]

Each model of the suite is exported with a symbolic H and W
(utils/models/models.py's export_hw) and compiled once without
--input-shape (one library for every size), and once per size listed in
--static with --input-shape pinning it. For each size and thread count,
`kiln bench` of the libraries and ONNX Runtime on the dynamic model
(ort_bench.js: graph optimisation 'all', intraOpNumThreads N) alternate
for --rounds rounds; the best median of each (ms) is printed, with the
ratios dynamic/static and dynamic/ORT (below 1: the dynamic library is
faster). Measurements, not tests: compare the ratios of one run.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

import bench
from bench import suite


def sizes_of(text):
    return [tuple(int(v) for v in s.split("x")) for s in text.split(",") if s]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--models", default="mobilenet_v2,efficientnet_b0")
    ap.add_argument("--sizes", default="224x224,150x200")
    ap.add_argument("--static", default="224x224",
                    help="sizes to also compile static (a subset of --sizes)")
    bench.timing_args(ap, iterations=30, warmup=5)
    args = ap.parse_args()
    kiln, threads, work = bench.timing_setup(args, "kiln-dynhw-")
    sizes = sizes_of(args.sizes)
    static_sizes = set(sizes_of(args.static)) & set(sizes)

    print("model            size     threads  kiln-dynamic  kiln-static     ORT"
          "  dynamic/static  dynamic/ORT")
    for name in args.models.split(","):
        model, pairs = suite.export_hw(name, work, sizes)
        lib = os.path.join(work, "lib%s.dynamic.so" % name)
        subprocess.run([kiln, "compile", model, "-q", "-o", lib], check=True)
        for (h, w), (x, _) in zip(sizes, pairs):
            libs = [lib]
            if (h, w) in static_sizes:
                static = os.path.join(work, "lib%s.%dx%d.so" % (name, h, w))
                subprocess.run([kiln, "compile", model, "-q", "-o", static, "--input-shape",
                                "input=1x3x%dx%d" % (h, w)], check=True)
                libs.append(static)
            folder = os.path.join(work, "inputs_%s_%dx%d" % (name, h, w))
            os.makedirs(folder, exist_ok=True)
            spec, npys = bench.write_inputs(model, [np.load(x)], folder)
            for t in threads:
                times = bench.best_medians(kiln, libs, model, spec, npys, t, args)
                d, o = times[0], times[-1]
                s = times[1] if len(libs) > 1 else None
                print("%-16s %-8s %7d  %12.3f %12s %7.3f  %14s %12.2f" % (
                    name, "%dx%d" % (h, w), t, d, "%.3f" % s if s else "-", o,
                    "%.2f" % (d / s) if s else "-", d / o), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
