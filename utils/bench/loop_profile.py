#!/usr/bin/python3
"""Where a compiled model's time goes, loop by loop, at each thread count.

    python3 utils/bench/loop_profile.py KILN LIB --input X.npy [--input ...]
        [--threads 1,2] [--iterations 60] [--warmup 5] [--top 40] [--all]

Runs `kiln bench LIB --threads N` with KILN_LOOP_PROFILE set, so that the
runtime records every parallel loop (runtime/src/loop_profile.c): its wall
time, the caller's and the workers' busy time, and the serial time before
it. Loops are matched by their place in the run (the n-th parallel loop of
each run) and named by their outlined function (`main_parallel_<k>_<ONNX
node>`, from `nm LIB`); each figure is the median over the measured runs.

The summary says, per thread count, how long the loops took in all, the
serial code between them, the busy time of all threads together (the same
work on one thread takes the one-thread total: what is more was lost to
the threads sharing caches and memory) and the time threads sat idle in
loops (imbalance, late starts). The table lists the loops that lost most
against a perfect split of their one-thread time, or with --all every loop
in order.

A measurement on a shared, noisy machine: compare thread counts of one run.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def symbols(lib):
    """{offset from kiln_parallel_for: name} for the library's functions."""
    out = subprocess.run(["nm", lib], capture_output=True, text=True, check=True).stdout
    addresses = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            addresses[parts[2]] = int(parts[0], 16)
    if "kiln_parallel_for" not in addresses:
        sys.exit("loop_profile.py: %s does not contain kiln_parallel_for "
                 "(no parallel loops, or not linked with kiln's runtime)" % lib)
    base = addresses["kiln_parallel_for"]
    return {a - base: name for name, a in addresses.items()}


def profile(kiln, lib, inputs, threads, iterations, warmup):
    """Per run, the list of its loops' records (dicts)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "loops.txt")
        cmd = [kiln, "bench", lib, "--threads", str(threads), "--iterations",
               str(iterations), "--warmup", str(warmup), "--json"]
        for i in inputs:
            cmd += ["--input", i]
        env = dict(os.environ, KILN_LOOP_PROFILE=path)
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            sys.exit("loop_profile.py: %s failed: %s" % (" ".join(cmd[:3]),
                                                         (p.stderr or p.stdout).strip()))
        median_ms = statistics.median(json.loads(p.stdout)["times_ms"])
        if not os.path.exists(path):
            sys.exit("loop_profile.py: no profile written (the model has no parallel loops?)")
        fields = ["fn", "n", "threads", "gap", "wall", "caller", "workers", "slowest"]
        records = []
        with open(path) as f:
            for line in f:
                if not line.startswith("#"):
                    records.append(dict(zip(fields, map(int, line.split()))))
    runs = iterations + warmup
    if not records or len(records) % runs:
        sys.exit("loop_profile.py: %d loops recorded for %d runs: not the same loops each run"
                 % (len(records), runs))
    per = len(records) // runs
    return [records[r * per:(r + 1) * per] for r in range(warmup, runs)], median_ms


def summarise(runs):
    """Per loop position, the medians (us) over the runs."""
    loops = []
    for j in range(len(runs[0])):
        rs = [run[j] for run in runs]
        med = lambda k: statistics.median(r[k] for r in rs) / 1e3  # noqa: E731
        loops.append({"fn": rs[0]["fn"], "n": rs[0]["n"], "threads": rs[0]["threads"],
                      "gap": med("gap") if j else 0.0, "wall": med("wall"),
                      "caller": med("caller"), "workers": med("workers")})
    return loops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("lib")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--iterations", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--all", action="store_true", help="every loop, in order")
    args = ap.parse_args()
    counts = [int(t) for t in args.threads.split(",") if t]
    names = symbols(args.lib)
    results = {}
    for t in counts:
        runs, median_ms = profile(args.kiln, args.lib, args.input, t, args.iterations,
                                  args.warmup)
        results[t] = (summarise(runs), median_ms)
    first = results[counts[0]][0]
    for t in counts[1:]:
        if [l["fn"] for l in results[t][0]] != [l["fn"] for l in first]:
            sys.exit("loop_profile.py: the runs at %d and %d threads ran different loops"
                     % (counts[0], t))
    print("%-8s %9s %9s %9s %9s %9s %9s" % ("threads", "run ms", "loops ms", "serial ms",
                                             "busy ms", "idle ms", "speed-up"))
    one = results[counts[0]][0]
    base = sum(l["wall"] for l in one)
    for t in counts:
        loops, median_ms = results[t]
        wall = sum(l["wall"] for l in loops)
        busy = sum(l["caller"] + l["workers"] for l in loops)
        idle = sum(l["threads"] * l["wall"] - l["caller"] - l["workers"] for l in loops)
        print("%-8d %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f" % (
            t, median_ms, wall / 1e3, sum(l["gap"] for l in loops) / 1e3, busy / 1e3,
            idle / 1e3, base / wall if wall else 0.0))
    last = counts[-1]
    many = results[last][0]
    rows = []
    for i, (a, b) in enumerate(zip(one, many)):
        ideal = a["wall"] * counts[0] / last
        rows.append((b["wall"] + b["gap"] - ideal - a["gap"], i, a, b))
    if not args.all:
        rows.sort(key=lambda r: -r[0])
        rows = rows[:args.top]
    print("\n%s loop (us; 'lost': %dT wall and serial time before it, over a perfect "
          "split of the %dT ones)" % ("every" if args.all else "top %d" % args.top,
                                      last, counts[0]))
    print("%5s %8s %8s %8s %7s %8s %8s %7s %6s  %s" % (
        "#", "%dT" % counts[0], "%dT" % last, "lost", "spd", "caller", "workers",
        "serial", "trips", "function"))
    for lost, i, a, b in rows:
        name = names.get(a["fn"], "?%+d" % a["fn"])
        print("%5d %8.1f %8.1f %8.1f %7.2f %8.1f %8.1f %7.1f %6d  %s" % (
            i, a["wall"], b["wall"], lost, a["wall"] / b["wall"] if b["wall"] else 0.0,
            b["caller"], b["workers"], b["gap"], b["n"], name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
