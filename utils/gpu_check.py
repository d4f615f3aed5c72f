#!/usr/bin/python3
"""kiln on an NVIDIA GPU (utils/gpu-check.sh runs this): correctness of
--target=cuda libraries on the GPU and their latency against PyTorch.

    python3 utils/gpu_check.py KILN [--arch sm_90] [--work DIR] [--jobs N]
                               [--models resnet50,mobilenet_v2,bert_encoder]
                               [--batches 1,32] [--skip-conformance] [--json F]

1. The GPU: `nvidia-smi -L`, and whether the runtime's CUDA loader finds a
   driver and a device (the digits example compiled for the GPU and run).
2. Conformance: every test that passes on the CPU (passing.txt) and whose
   PTX assembles (ptx-passing.txt), compiled with --target=cuda (input
   shapes from its first data set) and run on the GPU with `kiln run`
   against each data set's outputs, with conformance.py's tolerances.
3. Models (needs Debian's torch for the exports, utils/models/models.py):
   each at each batch, compiled for the GPU, run against torch's output
   (rtol 1e-3, atol 1e-4, the same check as the CPU's model suite), and
   timed with `kiln bench` (median of 20 runs: the host-pointer entry
   point, copies included); torch on the same GPU, eager and (if it works
   there) torch.compile, median of 20 runs with torch.cuda.synchronize().

Prints the tables and writes them as JSON with --json. Each part stops
early rather than overrun the 8 minutes the issue gives the script.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "onnx-backend"))
sys.path.insert(0, os.path.join(HERE, "models"))

import conformance  # noqa: E402  (read_list, read_tolerances, numbered)
import ptx_check  # noqa: E402  (input_shapes)
from gpu_carry_run import compare, torch_median_ms  # noqa: E402

START = time.time()


def left(budget):
    return budget - (time.time() - START)


def run(cmd, timeout=300, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def gpu_status(kiln, arch, work):
    smi = shutil.which("nvidia-smi")
    gpus = run([smi, "-L"]).stdout.strip() if smi else "(no nvidia-smi)"
    lib = os.path.join(work, "libdigits.so")
    c = run([kiln, "compile", os.path.join(ROOT, "examples", "digits", "digits.onnx"),
             "--target=cuda", "--gpu-arch=" + arch, "-o", lib, "-q"])
    if c.returncode != 0:
        return gpus, "compile failed: " + c.stderr.strip()
    import numpy as np
    x = os.path.join(work, "digits_x.npy")
    np.save(x, np.zeros((1, 1, 8, 8), np.float32))
    r = run([kiln, "run", lib, "--input", x])
    return gpus, "ok" if r.returncode == 0 else (r.stderr.strip() or "exit %d" % r.returncode)


def conformance_test(kiln, arch, data, test, tol, work):
    folder = os.path.join(data, test)
    d = tempfile.mkdtemp(dir=work)
    try:
        lib = os.path.join(d, "lib.so")
        c = run([kiln, "compile", os.path.join(folder, "model.onnx"), "--target=cuda",
                 "--gpu-arch=" + arch, "-o", lib, "-q"] + ptx_check.input_shapes(folder),
                env=dict(os.environ, TMPDIR=d))
        if c.returncode != 0:
            return "compile-error", conformance.first_line(c.stderr)
        sets = sorted(s for s in os.listdir(folder) if s.startswith("test_data_set_"))
        for s in sets:
            ds = os.path.join(folder, s)
            cmd = [kiln, "run", lib]
            for f in conformance.numbered(ds, "input"):
                cmd += ["--input", f]
            for f in conformance.numbered(ds, "output"):
                cmd += ["--expect", f]
            cmd += ["--rtol", repr(tol.get("rtol", 1e-3)), "--atol", repr(tol.get("atol", 1e-5))]
            r = run(cmd, env=dict(os.environ, TMPDIR=d))
            if r.returncode != 0:
                return ("mismatch" if r.returncode == 1 else "error"), \
                    conformance.first_line(r.stderr + r.stdout)
        return "pass", ""
    except subprocess.TimeoutExpired:
        return "timeout", ""
    finally:
        shutil.rmtree(d, ignore_errors=True)


def kiln_median_ms(kiln, lib, x, iterations=20):
    r = run([kiln, "bench", lib, "--input", x, "--iterations", str(iterations)], timeout=600)
    m = re.search(r"median ([0-9.]+) ms", r.stdout + r.stderr)
    return float(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "kiln-gpu-check"))
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--models", default="resnet50,mobilenet_v2,bert_encoder")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--skip-conformance", action="store_true")
    ap.add_argument("--filter", help="only the conformance tests matching this regex")
    ap.add_argument("--budget", type=float, default=450, help="seconds for the whole check")
    ap.add_argument("--json")
    args = ap.parse_args()
    kiln = os.path.abspath(args.kiln)
    os.makedirs(args.work, exist_ok=True)
    report = {}

    gpus, status = gpu_status(kiln, args.arch, args.work)
    print("GPU: %s\nCUDA through kiln's runtime: %s" % (gpus, status), flush=True)
    report["gpu"], report["cuda"] = gpus, status
    if status != "ok":
        print("gpu_check.py: the GPU is not usable; nothing more to check")
        sys.exit(1)

    if not args.skip_conformance and os.path.isdir(args.data):
        ok = set(conformance.read_list(os.path.join(ROOT, "test", "onnx-backend", "ptx-passing.txt")))
        tests = [t for t in conformance.read_list(conformance.PASSING)
                 if t in ok and (not args.filter or re.search(args.filter, t))]
        tols = conformance.read_tolerances(conformance.TOLERANCES)
        results = {}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(conformance_test, kiln, args.arch, args.data, t,
                                   tols.get(t, {}), args.work): t for t in tests}
            for f in concurrent.futures.as_completed(futures):
                results[futures[f]] = f.result()
                if left(args.budget * 0.5) < 0:
                    for g in futures:
                        g.cancel()
        counts = {}
        for s, _ in results.values():
            counts[s] = counts.get(s, 0) + 1
        print("\nconformance on the GPU (%d of %d tests run): %s" % (
            len(results), len(tests), ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items()))))
        for t in sorted(results):
            if results[t][0] != "pass":
                print("  %s: %s: %s" % (t, *results[t]))
        report["conformance"] = {t: list(v) for t, v in results.items()}

    try:
        import models as suite
        import numpy as np
        import torch
    except ImportError as e:
        print("\nmodels: skipped (%s)" % e)
        suite = None
    if suite:
        rows = []
        print("\n%-14s %5s %8s %12s %12s %14s %9s" % ("model", "batch", "check", "kiln ms",
                                                      "torch ms", "torch.compile", "kiln/eager"),
              flush=True)
        for name in args.models.split(","):
            for batch in [int(b) for b in args.batches.split(",")]:
                if left(args.budget) < 60:
                    print("models: out of time")
                    break
                onnx_path, in_path, out_path = suite.export(
                    name, args.work, None if batch == 1 else batch)
                x = np.load(in_path)
                lib = os.path.join(args.work, "lib%s_b%d.so" % (name, batch))
                c = run([kiln, "compile", onnx_path, "--target=cuda", "--gpu-arch=" + args.arch,
                         "-o", lib, "-q", "--input-shape",
                         "input=" + "x".join(str(d) for d in x.shape)])
                row = {"model": name, "batch": batch}
                if c.returncode != 0:
                    row["check"] = "compile: " + conformance.first_line(c.stderr)
                    rows.append(row)
                    print("%-14s %5d %s" % (name, batch, row["check"]))
                    continue
                saved = os.path.join(args.work, "out_%s_b%d" % (name, batch))
                r = run([kiln, "run", lib, "--input", in_path, "--expect", out_path,
                         "--rtol", "1e-3", "--atol", "1e-4", "--save-outputs", saved])
                # Also within rtol of the output's scale: random weights can
                # make outputs tiny (mobilenet_v2's ~1e-9), where atol checks
                # nothing (gpu_carry_run.compare, models.py do the same).
                got = os.path.join(saved, "output.npy")
                why = (compare(np.load(got), np.load(out_path), 1e-3, 1e-4, scaled=True)
                       if os.path.exists(got) else "no output")
                row["check"] = "ok" if r.returncode == 0 and not why else "MISMATCH"
                row["kiln_ms"] = kiln_median_ms(kiln, lib, in_path)
                row["torch_ms"] = row["torch_compile_ms"] = None
                if torch.cuda.is_available():
                    torch.manual_seed(0)
                    model, _ = suite.MODELS[name]()
                    xt = torch.from_numpy(x)
                    row["torch_ms"] = torch_median_ms(model, xt)
                    try:
                        row["torch_compile_ms"] = torch_median_ms(model, xt, compiled=True)
                    except Exception as e:  # torch.compile may not work there
                        row["torch_compile_error"] = str(e).splitlines()[0][:100]
                else:
                    row["torch_error"] = "this torch has no CUDA"
                rows.append(row)
                fmt = lambda v: "%.3f" % v if v else "-"
                print("%-14s %5d %8s %12s %12s %14s %9s" % (
                    name, batch, row["check"], fmt(row["kiln_ms"]), fmt(row["torch_ms"]),
                    fmt(row["torch_compile_ms"]),
                    "%.2f" % (row["kiln_ms"] / row["torch_ms"])
                    if row["kiln_ms"] and row["torch_ms"] else "-"), flush=True)
        if any(r.get("torch_error") for r in rows):
            print("torch: no CUDA in this build of torch (Debian's is CPU-only): no PyTorch times")
        report["models"] = rows
    print("\ngpu_check.py: %.0f s" % (time.time() - START))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
