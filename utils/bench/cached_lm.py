#!/usr/bin/python3
"""A decoder step with a key/value cache: kiln against ONNX Runtime.

    python3 utils/bench/cached_lm.py KILN [--steps 100,1:0,12:40,3]
        [--threads 1,2] [--iterations 50] [--warmup 10] [--rounds 2]
        [--work DIR]

The GPT-style language model of utils/models/dynamic_lengths.py's
cached_lm (ids [1, seq] after `past` cached tokens; past keys and values
in, present ones of past + seq tokens out) is exported once with both
lengths symbolic and compiled once without --input-shape (one library for
every step), and once per step with --input-shape pinning both lengths.
For each step "past,seq" and thread count, `kiln bench` of both libraries
and ONNX Runtime on the exported model (ort_bench.js: graph optimisation
'all', intraOpNumThreads N) alternate for --rounds rounds; the best median
of each is printed, with the ratios dynamic/static and dynamic/ORT (below
1: the dynamic library is faster). Measurements, not tests: compare the
ratios of one run.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import bench  # noqa: E402
import dynamic_lengths  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--steps", default="100,1:0,12:40,3")
    bench.timing_args(ap, iterations=50, warmup=10)
    args = ap.parse_args()
    kiln, threads, work = bench.timing_setup(args, "kiln-cachedlm-")
    steps = [tuple(int(x) for x in s.split(",")) for s in args.steps.split(":")]
    model, files = dynamic_lengths.export("cached_lm", work, steps)
    lib = os.path.join(work, "libdynamic.so")
    subprocess.run([kiln, "compile", model, "-q", "-o", lib], check=True)
    static = {}
    for step, (ins, _) in zip(steps, files):
        static[step] = os.path.join(work, "libstatic_%d_%d.so" % step)
        pins = []
        for name, path in zip(bench.graph_inputs(model), ins):
            pins += ["--input-shape", "%s=%s" % (name, "x".join(
                str(d) for d in np.load(path).shape))]
        subprocess.run([kiln, "compile", model, "-q", "-o", static[step]] + pins, check=True)

    # Per step: the inputs as bench.py writes them (.npy for kiln, raw
    # bytes and inputs.json for ort_bench.js), in a folder of their own.
    specs = {}
    for step, (ins, _) in zip(steps, files):
        folder = os.path.join(work, "inputs_%d_%d" % step)
        os.makedirs(folder, exist_ok=True)
        specs[step] = bench.write_inputs(model, [np.load(p) for p in ins], folder)

    print("past seq threads  kiln-dynamic  kiln-static     ORT  dynamic/static  dynamic/ORT")
    for step in steps:
        for t in threads:
            spec, npys = specs[step]
            d, s, o = bench.best_medians(kiln, [lib, static[step]], model, spec, npys, t, args)
            print("%4d %3d %7d  %12.3f %12.3f %7.3f  %14.2f %12.2f"
                  % (step[0], step[1], t, d, s, o, d / s, d / o))
    return 0


if __name__ == "__main__":
    sys.exit(main())
