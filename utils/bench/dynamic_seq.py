#!/usr/bin/python3
"""kiln's dynamic sequence length against static builds and ONNX Runtime.

    python3 utils/bench/dynamic_seq.py KILN [--lengths 128,37,1]
        [--threads 1,2] [--iterations 30] [--warmup 5] [--rounds 2]
        [--batch N] [--work DIR]

The model suite's BERT-style encoder exported with a symbolic sequence
length (utils/models/models.py's export_seq) is compiled once without
--input-shape (one library for every length), and once per length with
--input-shape pinning it. For each length and thread count, `kiln bench`
of both libraries and ONNX Runtime on the dynamic model (ort_bench.js:
graph optimisation 'all', intraOpNumThreads N) alternate for --rounds
rounds; the best median of each is printed, with the ratios dynamic/static
and dynamic/ORT (below 1: the dynamic library is faster). Measurements,
not tests: compare the ratios of one run. With --batch N the model is
exported with a symbolic batch dim too and run on N items (kiln runs them
one at a time; the static builds pin N and the length).
"""

import argparse
import os
import subprocess
import sys

import numpy as np

import bench
from bench import suite


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--lengths", default="128,37,1")
    ap.add_argument("--batch", type=int, help="a symbolic batch too, run on N items")
    bench.timing_args(ap, iterations=30, warmup=5)
    args = ap.parse_args()
    kiln, threads, work = bench.timing_setup(args, "kiln-dynseq-")
    lengths = [int(n) for n in args.lengths.split(",")]
    model, pairs = suite.export_seq("bert_encoder", work, lengths, args.batch)
    lib = os.path.join(work, "libdynamic.so")
    subprocess.run([kiln, "compile", model, "-q", "-o", lib], check=True)
    static = {}
    for n, (ids, _) in zip(lengths, pairs):
        static[n] = os.path.join(work, "libstatic%d.so" % n)
        subprocess.run([kiln, "compile", model, "-q", "-o", static[n],
                        "--input-shape", "input=%s" % "x".join(
                            str(d) for d in np.load(ids).shape)], check=True)

    # Each length's input as bench.py writes it (.npy for kiln, raw bytes
    # and inputs.json for ort_bench.js), in a folder of its own.
    inputs = {}
    for n, (ids, _) in zip(lengths, pairs):
        folder = os.path.join(work, "inputs_%d" % n)
        os.makedirs(folder, exist_ok=True)
        inputs[n] = bench.write_inputs(model, [np.load(ids).astype(np.int64)], folder)

    print("tokens threads  kiln-dynamic  kiln-static     ORT  dynamic/static  dynamic/ORT")
    for n in lengths:
        for t in threads:
            spec, npys = inputs[n]
            d, s, o = bench.best_medians(kiln, [lib, static[n]], model, spec, npys, t, args)
            print("%6d %7d  %12.3f %12.3f %7.3f  %14.2f %12.2f" % (n, t, d, s, o, d / s, d / o))
    return 0


if __name__ == "__main__":
    sys.exit(main())
