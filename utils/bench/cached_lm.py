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
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import dynamic_lengths  # noqa: E402

NAMES = ["ids", "past_k", "past_v"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--steps", default="100,1:0,12:40,3")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work")
    args = ap.parse_args()
    kiln = os.path.abspath(args.kiln)
    steps = [tuple(int(x) for x in s.split(",")) for s in args.steps.split(":")]
    threads = [int(n) for n in args.threads.split(",")]
    work = args.work or tempfile.mkdtemp(prefix="kiln-cachedlm-")
    os.makedirs(work, exist_ok=True)
    model, files = dynamic_lengths.export("cached_lm", work, steps)
    lib = os.path.join(work, "libdynamic.so")
    subprocess.run([kiln, "compile", model, "-q", "-o", lib], check=True)
    static = {}
    for step, (ins, _) in zip(steps, files):
        static[step] = os.path.join(work, "libstatic_%d_%d.so" % step)
        pins = []
        for name, path in zip(NAMES, ins):
            pins += ["--input-shape", "%s=%s" % (name, "x".join(
                str(d) for d in np.load(path).shape))]
        subprocess.run([kiln, "compile", model, "-q", "-o", static[step]] + pins, check=True)

    def bench_kiln(library, ins, t):
        cmd = [kiln, "bench", library, "--iterations", str(args.iterations),
               "--warmup", str(args.warmup), "--threads", str(t), "--json"]
        for path in ins:
            cmd += ["--input", path]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        return json.loads(out)["median_ms"]

    def bench_ort(ins, t):
        spec = []
        for name, path in zip(NAMES, ins):
            x = np.load(path)
            raw = os.path.join(work, name + ".bin")
            x.tofile(raw)
            spec.append({"name": name, "dtype": str(x.dtype), "dims": list(x.shape),
                         "file": raw})
        spec_path = os.path.join(work, "inputs.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        out = subprocess.run(
            ["node", os.path.join(HERE, "ort_bench.js"), model, spec_path, str(t),
             str(args.iterations), str(args.warmup)],
            check=True, capture_output=True, text=True).stdout
        return json.loads(out)["median_ms"]

    print("past seq threads  kiln-dynamic  kiln-static     ORT  dynamic/static  dynamic/ORT")
    for step, (ins, _) in zip(steps, files):
        for t in threads:
            best = [float("inf")] * 3
            for _ in range(args.rounds):
                for i, ms in enumerate((bench_kiln(lib, ins, t), bench_kiln(static[step], ins, t),
                                        bench_ort(ins, t))):
                    best[i] = min(best[i], ms)
            d, s, o = best
            print("%4d %3d %7d  %12.3f %12.3f %7.3f  %14.2f %12.2f"
                  % (step[0], step[1], t, d, s, o, d / s, d / o))
    return 0


if __name__ == "__main__":
    sys.exit(main())
