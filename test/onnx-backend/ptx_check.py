#!/usr/bin/env python3
"""Compiles the ONNX conformance tests that pass on the CPU (passing.txt)
for an NVIDIA GPU and checks every PTX module with the CUDA toolkit's
ptxas:

    kiln compile model.onnx --target=cuda --gpu-arch=ARCH --emit=ptx \\
        --input-shape NAME=DIMS...     (the first data set's input shapes)
    ptxas -arch=ARCH model.ptx

A test is:

  ok             the PTX assembles
  ptxas-error    ptxas rejects the PTX (the run fails)
  compile-error  kiln refuses the model for --target=cuda (listed with its
                 reason: what the GPU back end does not do yet)
  crash          kiln crashed (the run fails)

Ends with `N ok, M compile errors, P ptxas errors, C crashes` and exits 1
on a ptxas error or a crash, or when a test listed in ptx-passing.txt (the
tests whose PTX assembled when it was last written, `--update`) is not ok,
so that coverage only grows.

With --onnx FILE (repeatable), the given models instead (the model suite's
exports), compiled with the shapes they declare; each must be ok.

Usage: ptx_check.py KILN [--ptxas PATH] [--arch sm_90] [--data DIR]
           [--jobs N] [--filter RE]... [--onnx FILE]... [--report FILE] [-v]
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
CRASH_MARKERS = ("Stack dump", "PLEASE submit a bug report", "Assertion")


def first_line(text, pred=lambda l: True):
    for line in text.splitlines():
        if line.strip() and pred(line):
            return line.strip()[:200]
    return ""


def input_shapes(folder):
    """--input-shape flags from the first data set (inputs bound in order to
    the graph's inputs that are not initializers)."""
    model = onnx.load(os.path.join(folder, "model.onnx"), load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    sets = sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_"))
    if not sets:
        return []
    ds = os.path.join(folder, sets[0])
    files = sorted((f for f in os.listdir(ds) if f.startswith("input_")),
                   key=lambda f: int(re.sub(r"\D", "", f) or 0))
    flags = []
    for name, f in zip(names, files):
        t = onnx.TensorProto()
        with open(os.path.join(ds, f), "rb") as fh:
            try:
                t.ParseFromString(fh.read())
            except Exception:
                return []  # A sequence or optional input: leave shapes as declared.
        if t.dims:
            flags += ["--input-shape", "%s=%s" % (name, "x".join(str(d) for d in t.dims))]
    return flags


def check(kiln, ptxas, arch, path):
    """A conformance folder, or an .onnx file compiled as it declares."""
    tmp = tempfile.mkdtemp(prefix="kiln-ptx-")
    try:
        ptx = os.path.join(tmp, "model.ptx")
        model, shapes = (path, []) if path.endswith(".onnx") else (
            os.path.join(path, "model.onnx"), input_shapes(path))
        cmd = [kiln, "compile", model, "--target=cuda",
               "--gpu-arch=" + arch, "--emit=ptx", "-o", ptx, "-q"] + shapes
        p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, TMPDIR=tmp))
        if p.returncode < 0 or any(m in p.stderr for m in CRASH_MARKERS):
            return "crash", first_line(p.stderr) or "signal %d" % -p.returncode
        if p.returncode != 0:
            return "compile-error", first_line(p.stderr, lambda l: "error" in l) or \
                first_line(p.stderr)
        q = subprocess.run([ptxas, "-arch=" + arch, ptx, "-o", os.path.join(tmp, "m.cubin")],
                           capture_output=True, text=True, timeout=300)
        if q.returncode != 0:
            return "ptxas-error", first_line(q.stderr + q.stdout)
        return "ok", ""
    except subprocess.TimeoutExpired:
        return "compile-error", "timed out"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--passing", default=os.path.join(HERE, "passing.txt"))
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--filter", action="append", metavar="RE", default=[])
    ap.add_argument("--onnx", action="append", default=[], metavar="FILE",
                    help="check these models instead of the conformance tests")
    ap.add_argument("--ptx-passing", default=os.path.join(HERE, "ptx-passing.txt"))
    ap.add_argument("--update", action="store_true",
                    help="rewrite ptx-passing.txt with the tests that are ok")
    ap.add_argument("--report")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.kiln = os.path.abspath(args.kiln)
    if not os.access(args.ptxas, os.X_OK):
        sys.exit("ptx_check.py: no ptxas at %s (the CUDA toolkit)" % args.ptxas)
    ids = [os.path.abspath(f) for f in args.onnx]
    if not ids:
        with open(args.passing) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line and (not args.filter or any(re.search(r, line) for r in args.filter)):
                    ids.append(line)
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(check, args.kiln, args.ptxas, args.arch,
                               os.path.join(args.data, i)): i for i in ids}
        for fut in concurrent.futures.as_completed(futures):
            i = futures[fut]
            results[i] = fut.result()
            if args.verbose:
                print("%-60s %s %s" % (i, *results[i]), flush=True)
    counts = {s: 0 for s in ("ok", "compile-error", "ptxas-error", "crash")}
    for status, _ in results.values():
        counts[status] += 1
    if args.report:
        with open(args.report, "w") as f:
            for i in sorted(results):
                f.write("%s\t%s\t%s\n" % (i, *results[i]))
    # What must be ok: every model given, or the tests listed as ok before.
    if args.onnx:
        expected = set(ids)
    elif os.path.exists(args.ptx_passing) and not args.update:
        with open(args.ptx_passing) as f:
            expected = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    else:
        expected = set()
    regressed = sorted(i for i in expected if i in results and results[i][0] != "ok")
    for i in sorted(results):
        if results[i][0] in ("ptxas-error", "crash") or i in regressed:
            print("%s: %s: %s" % (i, *results[i]))
    if args.update and not args.onnx:
        with open(args.ptx_passing, "w") as f:
            f.write("# Conformance tests whose --target=cuda PTX assembles with ptxas\n"
                    "# (test/onnx-backend/ptx_check.py --update). One id a line.\n")
            for i in sorted(i for i in results if results[i][0] == "ok"):
                f.write(i + "\n")
    print("%d ok, %d compile errors, %d ptxas errors, %d crashes (%s, %d tests)%s" % (
        counts["ok"], counts["compile-error"], counts["ptxas-error"], counts["crash"],
        args.arch, len(results),
        "; %d expected to be ok are not" % len(regressed) if regressed else ""))
    sys.exit(1 if counts["ptxas-error"] or counts["crash"] or regressed else 0)


if __name__ == "__main__":
    main()
