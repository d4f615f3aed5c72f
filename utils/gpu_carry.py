#!/usr/bin/python3
"""kiln on a GPU machine that cannot build kiln (the device machines lent to
this project start bare: no LLVM, nothing to download; they hold python3
with numpy and a CUDA PyTorch). Two halves:

  here:  python3 utils/gpu_carry.py prepare KILN DIR [--arch sm_90]
             [--models mobilenet_v2,bert_encoder] [--batches 1]
             [--conformance-mb 12] [--work EXPORTS]
  there: python3 utils/gpu_carry.py run DIR [--json F]

`prepare` compiles, with --target=cuda, conformance tests that pass on the
CPU and assemble with ptxas (until their libraries and data reach
--conformance-mb) and the suite's models (exported by Debian's torch here,
utils/models/models.py), each as a library with inputs and expected
outputs as .npy, and a manifest.json. Keep DIR under the 64 MiB a device
call carries (resnet50's library alone is 100 MB: it does not fit).

`run` needs only python3 and numpy (and torch for the PyTorch times): each
library is loaded with ctypes and run through its descriptor's NAME_run
(host pointers) on each data set; outputs are compared as the CPU tests
compare them (|got - expected| <= atol + rtol |expected|, integers exact).
Models are timed (median of 20 runs after 5) and, where torch has CUDA,
torch eager and torch.compile on the same architecture and batch
(random weights: a latency comparison only).
"""
import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NAME = "m"  # every library's C prefix (--name)


# --------------------------------------------------------------- prepare

def prepare(args):
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "test", "onnx-backend"))
    sys.path.insert(0, os.path.join(HERE, "models"))
    import conformance
    import ptx_check
    from onnx import TensorProto, numpy_helper

    kiln = os.path.abspath(args.kiln)
    out = os.path.abspath(args.dir)
    os.makedirs(out, exist_ok=True)
    entries, total = [], 0

    def size(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)

    def compile_lib(model, lib, shapes):
        r = subprocess.run([kiln, "compile", model, "--target=cuda", "--gpu-arch=" + args.arch,
                            "--name", NAME, "-o", lib, "-q"] + shapes,
                           capture_output=True, text=True)
        return r.returncode == 0

    ok = set(conformance.read_list(os.path.join(ROOT, "test", "onnx-backend", "ptx-passing.txt")))
    tols = conformance.read_tolerances(conformance.TOLERANCES)
    for test in conformance.read_list(conformance.PASSING):
        if test not in ok or total > args.conformance_mb * 2**20:
            continue
        folder = os.path.join(args.data, test)
        d = os.path.join(out, "conformance", test.replace("/", "_"))
        os.makedirs(d, exist_ok=True)
        if not compile_lib(os.path.join(folder, "model.onnx"), os.path.join(d, "lib.so"),
                           ptx_check.input_shapes(folder)):
            continue
        sets = []
        for s in sorted(x for x in os.listdir(folder) if x.startswith("test_data_set_")):
            files = {}
            for kind in ("input", "output"):
                files[kind] = []
                for i, pb in enumerate(conformance.numbered(os.path.join(folder, s), kind)):
                    t = TensorProto()
                    with open(pb, "rb") as f:
                        t.ParseFromString(f.read())
                    npy = os.path.join(d, "%s_%s%d.npy" % (s, kind, i))
                    np.save(npy, numpy_helper.to_array(t))
                    files[kind].append(os.path.relpath(npy, out))
            sets.append(files)
        tol = tols.get(test, {})
        entries.append({"kind": "conformance", "id": test, "lib": os.path.relpath(
            os.path.join(d, "lib.so"), out), "sets": sets, "rtol": tol.get("rtol", 1e-3),
            "atol": tol.get("atol", 1e-5)})
        total += size(d)
    import models as suite
    for name in [m for m in args.models.split(",") if m]:
        for batch in [int(b) for b in args.batches.split(",")]:
            os.makedirs(args.work, exist_ok=True)
            onnx_path, in_path, out_path = suite.export(
                name, args.work, None if batch == 1 else batch)
            x = np.load(in_path)
            d = os.path.join(out, "models", "%s_b%d" % (name, batch))
            os.makedirs(d, exist_ok=True)
            if not compile_lib(onnx_path, os.path.join(d, "lib.so"),
                               ["--input-shape", "input=" + "x".join(map(str, x.shape))]):
                print("prepare: %s batch %d does not compile" % (name, batch))
                continue
            np.save(os.path.join(d, "input.npy"), x)
            np.save(os.path.join(d, "output.npy"), np.load(out_path))
            entries.append({"kind": "model", "id": "%s_b%d" % (name, batch), "model": name,
                            "batch": batch, "lib": os.path.relpath(os.path.join(d, "lib.so"), out),
                            "sets": [{"input": ["models/%s_b%d/input.npy" % (name, batch)],
                                      "output": ["models/%s_b%d/output.npy" % (name, batch)]}],
                            "rtol": 1e-3, "atol": 1e-4})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"arch": args.arch, "name": NAME, "entries": entries}, f, indent=1)
    print("prepare: %d conformance tests, %d models, %.1f MiB in %s" % (
        sum(e["kind"] == "conformance" for e in entries),
        sum(e["kind"] == "model" for e in entries), size(out) / 2**20, out))


# ------------------------------------------------------------------- run

class TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("dims", ctypes.POINTER(ctypes.c_int64)), ("num_elements", ctypes.c_int64),
                ("num_bytes", ctypes.c_int64)]


RUN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                       ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)


class ModelDesc(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("num_inputs", ctypes.c_int32), ("num_outputs", ctypes.c_int32),
                ("inputs", ctypes.POINTER(TensorDesc)), ("outputs", ctypes.POINTER(TensorDesc)),
                ("workspace_size", ctypes.c_int64), ("workspace_alignment", ctypes.c_int64),
                ("run", RUN)]


# ONNX TensorProto.DataType -> numpy dtype name.
DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
          7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64"}


class Library:
    def __init__(self, path, name):
        self.lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_LOCAL", 0) | os.RTLD_NOW)
        self.desc = ModelDesc.in_dll(self.lib, name + "_kiln_desc")
        self.error = self.lib.kiln_cuda_error
        self.error.restype = ctypes.c_char_p

    def run(self, inputs):
        import numpy as np
        d = self.desc
        ins = []
        for i in range(d.num_inputs):
            t = d.inputs[i]
            ins.append(np.ascontiguousarray(inputs[i], dtype=DTYPES[t.dtype]))
        outs = []
        for i in range(d.num_outputs):
            t = d.outputs[i]
            outs.append(np.zeros([t.dims[k] for k in range(t.rank)], dtype=DTYPES[t.dtype]))
        in_ptrs = (ctypes.c_void_p * max(1, len(ins)))(*[a.ctypes.data for a in ins])
        out_ptrs = (ctypes.c_void_p * max(1, len(outs)))(*[a.ctypes.data for a in outs])
        status = d.run(in_ptrs, out_ptrs, None)
        if status:
            raise RuntimeError("status %d: %s" % (status, self.error().decode()))
        return outs


def compare(got, expected, rtol, atol):
    """'' when they match, else why not."""
    import numpy as np
    if got.shape != expected.shape:
        return "shape %s, expected %s" % (got.shape, expected.shape)
    if got.dtype.kind in "fc":
        g, e = got.astype(np.float64), expected.astype(np.float64)
        bad = ~((np.abs(g - e) <= atol + rtol * np.abs(e)) | (np.isnan(g) & np.isnan(e)) |
                (g == e))
    else:
        bad = got != expected
    if bad.any():
        return "%d of %d elements differ (max abs err %.3g)" % (
            bad.sum(), bad.size, float(np.nanmax(np.abs(got.astype(np.float64) -
                                                         expected.astype(np.float64)))))
    return ""


def torch_median_ms(model, x, compiled=False, iterations=20):
    """`model` on `x` on the GPU (eager, or torch.compile'd): the median of
    `iterations` runs after 5, each fenced by torch.cuda.synchronize()."""
    import torch
    model = model.cuda().eval()
    if compiled:
        model = torch.compile(model)
    x = x.cuda()
    times = []
    with torch.no_grad():
        for i in range(5 + iterations):
            torch.cuda.synchronize()
            t = time.perf_counter()
            model(x)
            torch.cuda.synchronize()
            if i >= 5:
                times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2]


def torch_ms(model_name, batch, compiled):
    """The suite's model `model_name` (random weights) at `batch`."""
    import torch
    sys.path.insert(0, os.path.join(HERE, "models"))
    import models as suite
    torch.manual_seed(0)
    model, x = suite.MODELS[model_name]()
    if batch != 1:
        x = (torch.randint(0, int(x.max()) + 1, (batch,) + tuple(x.shape[1:]))
             if x.dtype == torch.int64 else torch.randn((batch,) + tuple(x.shape[1:])))
    return torch_median_ms(model, x, compiled)


def run_all(args):
    import numpy as np
    root = os.path.abspath(args.dir)
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    report = {"conformance": {}, "models": []}
    counts = {}
    for e in manifest["entries"]:
        try:
            lib = Library(os.path.join(root, e["lib"]), manifest["name"])
            why = ""
            for s in e["sets"]:
                outs = lib.run([np.load(os.path.join(root, p)) for p in s["input"]])
                for i, p in enumerate(s["output"]):
                    why = why or compare(outs[i], np.load(os.path.join(root, p)),
                                         e["rtol"], e["atol"])
            status = "mismatch" if why else "pass"
        except Exception as ex:  # a failed run: its status and message
            status, why = "error", str(ex).splitlines()[0][:200]
        if e["kind"] == "conformance":
            report["conformance"][e["id"]] = [status, why]
            counts[status] = counts.get(status, 0) + 1
            if status != "pass":
                print("  %s: %s: %s" % (e["id"], status, why))
            continue
        row = {"model": e["model"], "batch": e["batch"], "check": status, "why": why}
        if status != "error":
            x = np.load(os.path.join(root, e["sets"][0]["input"][0]))
            times = []
            for i in range(25):
                t = time.perf_counter()
                lib.run([x])
                if i >= 5:
                    times.append((time.perf_counter() - t) * 1e3)
            row["kiln_ms"] = sorted(times)[len(times) // 2]
        try:
            import torch
            if torch.cuda.is_available():
                row["torch_ms"] = torch_ms(e["model"], e["batch"], False)
                try:
                    row["torch_compile_ms"] = torch_ms(e["model"], e["batch"], True)
                except Exception as ex:
                    row["torch_compile_error"] = str(ex).splitlines()[0][:100]
        except ImportError:
            pass
        report["models"].append(row)
    print("conformance on the GPU: " + ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items())))
    fmt = lambda v: "%.3f" % v if isinstance(v, float) else "-"
    print("%-16s %5s %8s %10s %10s %14s" % ("model", "batch", "check", "kiln ms", "torch ms",
                                            "torch.compile"))
    for r in report["models"]:
        print("%-16s %5d %8s %10s %10s %14s" % (r["model"], r["batch"], r["check"],
                                                fmt(r.get("kiln_ms")), fmt(r.get("torch_ms")),
                                                fmt(r.get("torch_compile_ms"))))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("kiln")
    p.add_argument("dir")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    p.add_argument("--models", default="mobilenet_v2,bert_encoder")
    p.add_argument("--batches", default="1")
    p.add_argument("--conformance-mb", type=float, default=12)
    p.add_argument("--work", default="/tmp/kiln-models",
                   help="where the model exports are cached (models.py's --work)")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--json")
    args = ap.parse_args()
    prepare(args) if args.verb == "prepare" else run_all(args)


if __name__ == "__main__":
    main()
