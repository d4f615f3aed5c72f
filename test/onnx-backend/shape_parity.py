#!/usr/bin/env python3
"""Imports every conformance model, and checks kiln's own shape inference
against ONNX's.

For every model, `kiln compile --compile-to=onnx` runs twice: once as usual
(node outputs typed by ONNX's reference shape inference, then refined by
kiln), once with --erase-onnx-shapes (node outputs keep only their element
type, so kiln's shape functions and folders must find every shape). The
graph outputs' types of the two runs must be identical.

Each run must either succeed or fail with a clean diagnostic (exit 1, a first
line `kiln: error:`). A crash, a signal, another exit code or a timeout fails
the check, whatever the model.

The models where the types are identical are listed in shape-parity.txt; the
check fails if one of them stops matching (so coverage only grows), and
prints the models that match but are not listed yet. `--update` rewrites the
list.

Ends with `N passed, M failed`: failures are listed models that stop
matching, and crashes or timeouts of any model.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

CATEGORIES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "shape-parity.txt")


class Crash(Exception):
    """kiln ended other than by success or a clean `kiln: error:`."""


def signature(kiln, model, erase):
    """The main function's result types, or (None, the error's first line)
    for a clean rejection. Raises Crash for anything else."""
    cmd = [kiln, "compile", model, "--compile-to=onnx", "-o", "-"]
    if erase:
        cmd.append("--erase-onnx-shapes")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
    except subprocess.TimeoutExpired:
        raise Crash("timeout")
    err = p.stderr.decode(errors="replace")
    first = next((l for l in err.splitlines() if l.strip()), "")
    if p.returncode == 1 and first.startswith("kiln: error:"):
        return None, first
    if p.returncode != 0:
        raise Crash("exit %d: %s" % (p.returncode, first or err[-300:]))
    for line in p.stdout.decode(errors="replace").splitlines():
        if "func.func @main(" in line:
            m = re.search(r"\) -> (.*) \{$", line)
            return (m.group(1) if m else ""), ""
    raise Crash("exit 0 but no main function in the output")


def check(kiln, model):
    try:
        ref, err = signature(kiln, model, False)
        if ref is None:
            return "rejected", err
        ours, err = signature(kiln, model, True)
    except Crash as e:
        return "crash", str(e)
    if ours is None:
        return "error", "with --erase-onnx-shapes: " + err
    if ours == ref:
        return "match", ""
    return "differ", "onnx: %s | kiln: %s" % (ref, ours)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--report")
    ap.add_argument("--update", action="store_true")
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
                models.append(("%s/%s" % (cat, name), m))
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = {pool.submit(check, args.kiln, m): key for key, m in models}
        for f in concurrent.futures.as_completed(futs):
            results[futs[f]] = f.result()

    matching = sorted(k for k, (s, _) in results.items() if s == "match")
    if args.report:
        with open(args.report, "w") as f:
            for k in sorted(results):
                f.write("%s\t%s\t%s\n" % (k, *results[k]))
    if args.update:
        with open(LIST, "w") as f:
            f.write("\n".join(matching) + "\n")
        print("wrote %d models to %s" % (len(matching), LIST))
    listed = [l.strip() for l in open(LIST) if l.strip()]
    failed = [k for k in listed if results.get(k, ("missing", ""))[0] != "match"]
    failed += sorted(k for k, (s, _) in results.items()
                     if s == "crash" and k not in failed)
    new = sorted(set(matching) - set(listed))
    counts = {}
    for s, _ in results.values():
        counts[s] = counts.get(s, 0) + 1
    print("%d models: %s" % (len(results), ", ".join(
        "%s %d" % kv for kv in sorted(counts.items()))))
    for k in failed:
        print("FAIL %s: %s %s" % (k, *results.get(k, ("missing", ""))))
    if new:
        print("%d models match but are not in shape-parity.txt yet (run with "
              "--update)" % len(new))
    passed = sum(1 for k in results if k not in failed)
    print("%d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
