#!/usr/bin/env python3
"""Imports every model of the ONNX conformance data through `kiln compile`.

Each model must either import, verify and shape-infer (exit 0), or fail with a
clean diagnostic (exit 1, a `kiln: error:` line). A crash, a signal, any other
exit code or a timeout is a failure of kiln. Prints per-category counts, the
models that were rejected (with the first error line, to --report), and ends
with `N passed, M failed`, where "failed" counts crashes and timeouts only.

Usage: import_all.py KILN [--data DIR] [--jobs N] [--report FILE]
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys

CATEGORIES = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def run_one(kiln, model, timeout):
    try:
        p = subprocess.run([kiln, "compile", model, "--compile-to=onnx",
                            "-o", os.devnull],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    err = p.stderr.decode(errors="replace")
    first = next((l for l in err.splitlines() if l.strip()), "")
    if p.returncode == 0:
        return "imported", ""
    if p.returncode == 1 and first.startswith("kiln: error:"):
        return "rejected", first
    return "crash", "exit %d: %s" % (p.returncode, first or err[-300:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--report")
    args = ap.parse_args()

    models = []
    for cat in CATEGORIES:
        root = os.path.join(args.data, cat)
        if not os.path.isdir(root):
            print("missing conformance data: %s" % root)
            return 1
        for name in sorted(os.listdir(root)):
            m = os.path.join(root, name, "model.onnx")
            if os.path.isfile(m):
                models.append((cat, name, m))

    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = {pool.submit(run_one, args.kiln, m, args.timeout): (c, n)
                for c, n, m in models}
        for f in concurrent.futures.as_completed(futs):
            results[futs[f]] = f.result()

    lines = []
    for cat in CATEGORIES:
        counts = {}
        for (c, n), (status, _) in results.items():
            if c == cat:
                counts[status] = counts.get(status, 0) + 1
        print("%-18s %s" % (cat, ", ".join(
            "%s %d" % kv for kv in sorted(counts.items()))))
    for (c, n), (status, msg) in sorted(results.items()):
        lines.append("%s/%s\t%s\t%s" % (c, n, status, msg))
    if args.report:
        with open(args.report, "w") as f:
            f.write("\n".join(lines) + "\n")
    bad = [l for l in lines if "\tcrash\t" in l or "\ttimeout\t" in l]
    for l in bad:
        print("FAIL " + l)
    imported = sum(1 for s, _ in results.values() if s == "imported")
    rejected = sum(1 for s, _ in results.values() if s == "rejected")
    print("%d models: %d imported, %d rejected with a diagnostic, "
          "%d crashed or timed out" % (len(results), imported, rejected,
                                       len(bad)))
    # "passed" = imported or cleanly rejected; "failed" = crash/timeout.
    print("%d passed, %d failed" % (imported + rejected, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
