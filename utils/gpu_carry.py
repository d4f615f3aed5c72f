#!/usr/bin/python3
"""kiln on a GPU machine that cannot build kiln (the device machines lent to
this project start bare: no LLVM, nothing to download; they hold python3
with numpy, onnxruntime and a CUDA PyTorch). Two halves:

  here:  python3 utils/gpu_carry.py prepare [VARIANT=]KILN[,VARIANT=KILN...] DIR
             [--arch sm_90] [--models resnet50,mobilenet_v2,bert_encoder]
             [--batches 1,32] [--ternary resnet50,bert_encoder]
             [--extra-models resnet18,...] [--conformance-variants V,...]
             [--conformance-limit N] [--reuse] [--work EXPORTS]
             [--variant-flags V:FLAGS] [--variant-rtol V:RTOL]
             [--half-models resnet50,bert_encoder] [--dynamic-lengths 128,37,5]
         python3 utils/gpu_carry.py pack DIR     (DIR/files again as the bundle)
  there: python3 utils/gpu_carry.py run DIR [--json F] [--budget S] [--jobs N]
             [--no-graphs]
         (carry only DIR/bundle.tar.xz: it is unpacked to --extract-to)

`prepare` compiles, with --target=cuda, every conformance test that passes
on the CPU and assembles with ptxas (ptx-passing.txt), and the suite's
models (exported by Debian's torch here, utils/models/models.py) at each
batch, each as a library with inputs and expected outputs as .npy, writes
a manifest.json and packs it all into DIR/bundle.tar.xz (one solid xz
stream with a large dictionary, so that the runtime code every library
holds and the weights a model's libraries share are stored once). A device
call carries 64 MiB: the models named by --ternary get each weight of two
or more dims replaced by three levels (0 and +-mean|w|, as ternary weight
networks do) so that their libraries compress, and their ONNX file travels too so that
the GPU machine's onnxruntime checks them independently; those models' and
every batch above 1's float inputs are rounded to a grid of 1/16 (they
compress) and their expected outputs are kiln's CPU results. The
values of the weights do not change the work a run does: these are latency
and correctness runs of the real architectures. --half-models adds those
models as float16 models (weights, float inputs and outputs; the
expected outputs kiln's CPU results; models.py's to_half), timed against
torch's .half() ones. --dynamic-lengths (default 128,37,5; empty: none)
adds libraries compiled without --input-shape, checked like the
conformance tests through NAME_run_dims with the dims their inputs' shapes
give: test/Driver's symbolic-dims and dynamic-batch models at several
sizes each, and the BERT-style encoder exported with a symbolic sequence
length (three-level weights) at those lengths (about 7 MiB of the
bundle).

`run` needs only python3 and numpy (torch for the PyTorch times and the
kernel profile, onnxruntime for the second reference): each library is
loaded with ctypes in worker processes (a crash or a CUDA fault costs one
test, not the run) and run through NAME_run (host pointers) on each data
set; outputs are compared as the CPU tests compare them (|got - expected| <=
atol + rtol |expected|, integers exact). Each model is timed through
NAME_run (copies included) and NAME_run_device (torch's device buffers,
zero-copy; with --no-graphs again with KILN_CUDA_GRAPHS=0, each kernel
launched by itself), its kernels profiled with torch.profiler, and torch
eager and torch.compile on the same architecture and batch (random
weights) timed while --budget lasts.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tarfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NAME = "m"  # every library's C prefix (--name)


# --------------------------------------------------------------- prepare

def ternary(src, dst):
    """`src` with each float initializer of two or more dims replaced by
    three levels: 0 where |w| < 0.7 mean|w|, else sign(w) mean|w|."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    m = onnx.load(src)
    for i, t in enumerate(m.graph.initializer):
        w = numpy_helper.to_array(t)
        if w.dtype != np.float32 or w.ndim < 2:
            continue
        a = float(np.abs(w).mean())
        q = (np.sign(w) * (np.abs(w) >= 0.7 * a) * a).astype(np.float32)
        m.graph.initializer[i].CopyFrom(numpy_helper.from_array(q, t.name))
    onnx.save(m, dst)


def prepare(args):
    import concurrent.futures
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "test", "onnx-backend"))
    sys.path.insert(0, os.path.join(HERE, "models"))
    import conformance
    import ptx_check
    from onnx import TensorProto, numpy_helper

    # VARIANT=KILN pairs (a plain KILN is variant "kiln"): each variant's
    # libraries run on the same data, so that two builds compare in one call.
    variants = [(v.split("=", 1) if "=" in v else ("kiln", v)) for v in args.kiln.split(",")]
    variants = [(v, os.path.abspath(k)) for v, k in variants]
    # V:FLAGS (kiln compile flags of variant V, e.g. --gpu-precision=tf32)
    # and V:RTOL (its models' tolerance, relative to the output's scale).
    flags = dict(f.split(":", 1) for f in args.variant_flags)
    rtols = {v: float(r) for v, r in (f.split(":", 1) for f in args.variant_rtol)}
    kiln = variants[0][1]
    out = os.path.abspath(args.dir)
    files = os.path.join(out, "files")
    os.makedirs(files, exist_ok=True)
    entries = []

    def compile_lib(kiln, model, lib, shapes, variant):
        os.makedirs(os.path.dirname(lib), exist_ok=True)
        r = subprocess.run([kiln, "compile", model, "--target=cuda", "--gpu-arch=" + args.arch,
                            "--name", NAME, "-o", lib, "-q"] + shapes +
                           flags.get(variant, "").split(),
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("prepare: %s: %s" % (model, conformance.first_line(r.stderr)))
        return r.returncode == 0

    def conformance_entries(test):
        folder = os.path.join(args.data, test)
        stem = os.path.join("conformance", test.replace("/", "_"))
        d = os.path.join(files, "data", stem)
        os.makedirs(d, exist_ok=True)
        sets = []
        for s in sorted(x for x in os.listdir(folder) if x.startswith("test_data_set_")):
            io = {}
            for kind in ("input", "output"):
                io[kind] = []
                for i, pb in enumerate(conformance.numbered(os.path.join(folder, s), kind)):
                    t = TensorProto()
                    with open(pb, "rb") as f:
                        t.ParseFromString(f.read())
                    npy = os.path.join(d, "%s_%s%d.npy" % (s, kind, i))
                    np.save(npy, numpy_helper.to_array(t))
                    io[kind].append(os.path.relpath(npy, files))
            sets.append(io)
        tol = tols.get(test, {})
        found = []
        for variant, k in variants:
            if args.conformance_variants and variant not in args.conformance_variants.split(","):
                continue
            lib = os.path.join(variant, stem, "lib.so")
            reused = args.reuse and os.path.exists(os.path.join(files, lib))
            if reused or compile_lib(k, os.path.join(folder, "model.onnx"),
                                     os.path.join(files, lib), ptx_check.input_shapes(folder),
                                     variant):
                found.append({"kind": "conformance", "variant": variant,
                              "id": variant + ":" + test, "lib": lib, "sets": sets,
                              "rtol": tol.get("rtol", 1e-3), "atol": tol.get("atol", 1e-5)})
        return found

    ok = set(conformance.read_list(os.path.join(ROOT, "test", "onnx-backend", "ptx-passing.txt")))
    tols = conformance.read_tolerances(conformance.TOLERANCES)
    tests = [t for t in conformance.read_list(conformance.PASSING) if t in ok]
    if args.conformance_limit >= 0:
        tests = tests[:args.conformance_limit]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for found in pool.map(conformance_entries, tests):
            entries += found
    print("prepare: %d conformance libraries (%d tests, %d variants)" % (
        len(entries), len(tests), len(variants)), flush=True)
    if args.dynamic_lengths:
        found = dynamic_entries(args, files, variants[-1], compile_lib)
        entries += found
        print("prepare: %d libraries with dynamic dims" % len(found), flush=True)

    import models as suite
    ternaries = set(m for m in args.ternary.split(",") if m)
    batches = [int(b) for b in args.batches.split(",")]
    runs = [(m, b, variants, False) for m in args.models.split(",") if m for b in batches]
    runs += [(m, 1, variants[-1:], False) for m in args.extra_models.split(",") if m]
    runs += [(m, b, variants[-1:], True) for m in args.half_models.split(",") if m
             for b in batches]
    ternaries |= set(m for m in args.extra_models.split(",") if m)
    for name, batch, builds, half in runs:
        d = os.path.join(files, "data", "models", name)
        os.makedirs(d, exist_ok=True)
        rel = lambda p: os.path.relpath(p, files)
        onnx_ref = None
        os.makedirs(args.work, exist_ok=True)
        onnx_path, in_path, out_path = suite.export(name, args.work, batch)
        x = np.load(in_path)
        shape = ["--input-shape", "input=" + "x".join(map(str, x.shape))]
        if name in ternaries:
            # One modified model for every batch (the export's batch is
            # symbolic).
            onnx_ref = os.path.join(d, "model.onnx")
            if not os.path.exists(onnx_ref):
                ternary(onnx_path, onnx_ref)
            onnx_path = onnx_ref
        if half:
            # No ONNX Runtime check (its CPU kernels take float16 for few
            # ops): kiln's CPU result of the float16 model is expected.
            onnx_ref = None
            half_path = os.path.join(d, "model_f16.onnx")
            if not os.path.exists(half_path):
                suite.to_half(onnx_path, half_path)
            onnx_path = half_path
            if x.dtype.kind == "f":
                x = x.astype(np.float16)
        if name in ternaries or batch != 1 or half:
            # Float inputs on a grid of 1/16 (they compress: a batch of
            # 32 images is 19 MB of random floats), and kiln's CPU
            # result as the expected output.
            if x.dtype.kind == "f":
                x = (np.clip(np.round(x * 16), -64, 64) / 16).astype(x.dtype)
            tag = "%s%s.carry.b%d" % (name, "_f16" if half else "", batch)
            in_path = os.path.join(args.work, tag + ".input.npy")
            np.save(in_path, x)
            saved = os.path.join(args.work, tag)
            r = subprocess.run([kiln, "run", onnx_path, "--input", in_path,
                                "--save-outputs", saved],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print("prepare: %s batch %d: the CPU reference failed: %s" % (
                    name, batch, conformance.first_line(r.stderr)))
                continue
            expected = np.load(os.path.join(saved, "output.npy"))
        else:
            expected = np.load(out_path)
        x_npy = os.path.join(d, "input%s_b%d.npy" % ("_f16" if half else "", batch))
        y_npy = os.path.join(d, "output%s_b%d.npy" % ("_f16" if half else "", batch))
        np.save(x_npy, x)
        np.save(y_npy, expected)
        for n, (variant, k) in enumerate(builds):
            lib = os.path.join(variant, "models", name,
                               "lib%s_b%d.so" % ("_f16" if half else "", batch))
            if not compile_lib(k, onnx_path, os.path.join(files, lib), shape, variant):
                continue
            entries.append({"kind": "model", "variant": variant,
                            "id": "%s:%s%s_b%d" % (variant, name, "_f16" if half else "", batch),
                            "model": name, "half": half,
                            "batch": batch, "lib": lib,
                            "onnx": rel(onnx_ref) if onnx_ref else None,
                            "ternary": name in ternaries,
                            "torch": n == len(builds) - 1,
                            "sets": [{"input": [rel(x_npy)], "output": [rel(y_npy)]}],
                            "rtol": 1e-2 if half else rtols.get(variant, 1e-3),
                            "atol": 1e-4})
        print("prepare: %s%s batch %d" % (name, " float16" if half else "", batch), flush=True)
    with open(os.path.join(files, "manifest.json"), "w") as f:
        json.dump({"arch": args.arch, "name": NAME, "entries": entries}, f, indent=1)
    pack(out)
    print("prepare: %d conformance libraries, %d model libraries" % (
        sum(e["kind"] == "conformance" for e in entries),
        sum(e["kind"] == "model" for e in entries)))


def dynamic_entries(args, files, build, compile_lib):
    """Libraries with dynamic dims (no --input-shape), checked like the
    conformance tests, each on several sizes from one library (run_dims):
    test/Driver's symbolic-dims and dynamic-batch models against their numpy
    references (the dynamic batch's against kiln's CPU), and the BERT-style
    encoder exported with a symbolic sequence length (three-level weights)
    at --dynamic-lengths tokens against kiln's CPU results."""
    import numpy as np
    import onnx
    sys.path.insert(0, os.path.join(HERE, "models"))
    import models as suite
    variant, k = build
    src = os.path.join(args.work, "dynamic-tests")
    for script in ("make_symbolic_models.py", "make_dynamic_models.py"):
        subprocess.run([sys.executable, os.path.join(ROOT, "test", "Driver", "Inputs", script),
                        os.path.join(src, script)], check=True, capture_output=True)
    sym = lambda f: os.path.join(src, "make_symbolic_models.py", f + ".npy")
    dyn = lambda f: os.path.join(src, "make_dynamic_models.py", f + ".npy")
    # (name, model, [(inputs, expected outputs or None: kiln's CPU), ...])
    cases = [
        ("mlp", sym("mlp")[:-4] + ".onnx",
         [([sym("mlp_x%d" % n)], [sym("mlp_y%d" % n)]) for n in (0, 1, 7, 130)]),
        ("attn", sym("attn")[:-4] + ".onnx",
         [([sym("attn_x%d" % n)], [sym("attn_y%d" % n)]) for n in (5, 33)]),
        ("causal", sym("causal")[:-4] + ".onnx",
         [([sym("causal_x%d" % n)], [sym("causal_y%d" % n)]) for n in (1, 5, 17)]),
        ("cnn_hw", sym("cnn_hw")[:-4] + ".onnx",
         [([sym("cnn_hw_x" + n)], [sym("cnn_hw_y" + n)]) for n in ("5_5", "8_13", "17_6")]),
        ("batch_cnn", dyn("cnn")[:-4] + ".onnx", [([dyn("cnn_x"), dyn("cnn_ids")], None)]),
    ]
    model, pairs = suite.export_seq("bert_encoder", args.work,
                                    [int(n) for n in args.dynamic_lengths.split(",")])
    d = os.path.join(files, "data", "dynamic")
    os.makedirs(d, exist_ok=True)
    encoder = os.path.join(d, "bert_encoder.seq.onnx")
    if not os.path.exists(encoder):
        ternary(model, encoder)
    cases.append(("bert_encoder.seq", encoder, [([x], None) for x, _ in pairs]))
    found = []
    for name, onnx_path, runs in cases:
        sets = []
        for n, (in_paths, out_paths) in enumerate(runs):
            if out_paths is None:
                # kiln's CPU result of the same model, an .npy per output.
                saved = os.path.join(args.work, "dynamic-tests", "%s_cpu%d" % (name, n))
                cmd = [k, "run", onnx_path, "--save-outputs", saved]
                for x in in_paths:
                    cmd += ["--input", x]
                subprocess.run(cmd, check=True, capture_output=True)
                out_paths = [os.path.join(saved, o.name + ".npy")
                             for o in onnx.load(onnx_path, load_external_data=False).graph.output]
            io = {}
            for kind, paths in (("input", in_paths), ("output", out_paths)):
                io[kind] = []
                for i, path in enumerate(paths):
                    npy = os.path.join(d, "%s_set%d_%s%d.npy" % (name, n, kind, i))
                    np.save(npy, np.load(path))
                    io[kind].append(os.path.relpath(npy, files))
            sets.append(io)
        lib = os.path.join(variant, "dynamic", name, "lib.so")
        if compile_lib(k, onnx_path, os.path.join(files, lib), [], variant):
            found.append({"kind": "conformance", "variant": variant,
                          "id": "%s:dynamic/%s" % (variant, name), "lib": lib, "sets": sets,
                          "rtol": 1e-3, "atol": 1e-5})
    return found


def pack(out):
    """DIR/files as DIR/bundle.tar.xz: one xz stream whose dictionary (1 GiB)
    spans the whole archive, a model's libraries next to each other, so the
    runtime code every library holds and the weights a model's libraries
    share are stored once (preset 1: its match finder is fast on 1 GB)."""
    files = os.path.join(out, "files")
    bundle = os.path.join(out, "bundle.tar.xz")
    names = [os.path.relpath(os.path.join(dp, f), files)
             for dp, _, fs in os.walk(files) for f in fs]
    names.sort(key=lambda p: (os.path.basename(os.path.dirname(p)), p))
    with open(bundle, "wb") as sink, subprocess.Popen(
            ["xz", "--lzma2=preset=1,dict=1GiB", "-T1", "-c"], stdin=subprocess.PIPE,
            stdout=sink) as xz:
        with tarfile.open(fileobj=xz.stdin, mode="w|") as tar:
            for n in names:
                tar.add(os.path.join(files, n), arcname=n)
        xz.stdin.close()
    print("pack: %.1f MiB in %s" % (os.path.getsize(bundle) / 2**20, bundle))


# ------------------------------------------------------------------- run

class TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("dims", ctypes.POINTER(ctypes.c_int64)), ("num_elements", ctypes.c_int64),
                ("num_bytes", ctypes.c_int64)]


RUN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                       ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)


RUN_DIMS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int64),
                            ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p),
                            ctypes.c_void_p)


class ModelDesc(ctypes.Structure):
    """kiln_model_desc (kiln/runtime.h), abi_version 4."""
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("num_inputs", ctypes.c_int32), ("num_outputs", ctypes.c_int32),
                ("inputs", ctypes.POINTER(TensorDesc)), ("outputs", ctypes.POINTER(TensorDesc)),
                ("workspace_size", ctypes.c_int64), ("workspace_alignment", ctypes.c_int64),
                ("run", RUN), ("num_dynamic_dims", ctypes.c_int32),
                ("dynamic_dim_names", ctypes.POINTER(ctypes.c_char_p)), ("run_dims", RUN_DIMS),
                ("workspace_size_for", ctypes.c_void_p), ("num_dim_exprs", ctypes.c_int32),
                ("dim_exprs", ctypes.POINTER(ctypes.c_int64)),
                ("dim_expr_names", ctypes.POINTER(ctypes.c_char_p))]


# ONNX TensorProto.DataType -> numpy dtype name.
DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
          7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
          16: "bfloat16"}  # held as its bits, uint16 (so are the .npy files)


class Library:
    def __init__(self, path, name):
        self.lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_LOCAL", 0) | os.RTLD_NOW)
        self.desc = ModelDesc.in_dll(self.lib, name + "_kiln_desc")
        self.error = self.lib.kiln_cuda_error
        self.error.restype = ctypes.c_char_p
        self.run_device = getattr(self.lib, name + "_run_device")
        self.run_device.argtypes = [ctypes.POINTER(ctypes.c_void_p),
                                    ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]

    def num_dynamic(self):
        return self.desc.num_dynamic_dims if self.desc.abi_version >= 2 else 0

    def dims_of(self, inputs):
        """The dynamic dims' values (a library with dynamic dims: a sequence
        length, a dynamic batch) as the inputs' shapes say; 1 for a dim no
        input carries."""
        d, dims = self.desc, [1] * self.num_dynamic()
        for i, a in enumerate(inputs):
            t = d.inputs[i]
            for k in range(t.rank):
                if t.dims[k] < 0 and -1 - t.dims[k] < len(dims):
                    dims[-1 - t.dims[k]] = a.shape[k]
        return dims

    def shapes(self, outputs, dims=None):
        """Each input's or output's shape (for the dynamic dims' values
        `dims`: a dim, or a dim expression c0 + sum c_k dims[k]) and numpy
        dtype."""
        d, n = self.desc, self.num_dynamic()
        ts = [d.outputs[i] for i in range(d.num_outputs)] if outputs else \
            [d.inputs[i] for i in range(d.num_inputs)]

        def size(v):
            if v >= 0 or dims is None:
                return v
            k = -1 - v
            if k < n:
                return dims[k]
            c = d.dim_exprs[(k - n) * (n + 1):(k - n + 1) * (n + 1)]
            return c[0] + sum(c[1 + j] * dims[j] for j in range(n))
        return [([size(t.dims[k]) for k in range(t.rank)],
                 "uint16" if t.dtype == 16 else DTYPES[t.dtype]) for t in ts]

    def bfloat16_outputs(self):
        d = self.desc
        return [d.outputs[i].dtype == 16 for i in range(d.num_outputs)]

    def run(self, inputs, outs=None):
        """NAME_run on host arrays; NAME_run_dims, with the dims the inputs'
        shapes give, for a library with dynamic dims."""
        import numpy as np
        ins = [np.ascontiguousarray(a, dtype=dt) for a, (_, dt) in zip(inputs, self.shapes(False))]
        dims = self.dims_of(ins) if self.num_dynamic() else None
        if outs is None:
            outs = [np.zeros(s, dtype=dt) for s, dt in self.shapes(True, dims)]
        in_ptrs = (ctypes.c_void_p * max(1, len(ins)))(*[a.ctypes.data for a in ins])
        out_ptrs = (ctypes.c_void_p * max(1, len(outs)))(*[a.ctypes.data for a in outs])
        if dims is not None:
            status = self.desc.run_dims((ctypes.c_int64 * len(dims))(*dims), in_ptrs, out_ptrs,
                                        None)
        else:
            status = self.desc.run(in_ptrs, out_ptrs, None)
        if status:
            raise RuntimeError("status %d: %s" % (status, self.error().decode()))
        return outs


def compare(got, expected, rtol, atol, scaled=False):
    """'' when they match, else why not. `scaled`: the largest error must also
    be within rtol of the largest |expected| (random weights can make a
    network's outputs tiny, mobilenet_v2's ~1e-9, where atol checks nothing;
    the CPU model suite checks the same)."""
    import numpy as np
    if got.shape != expected.shape:
        return "shape %s, expected %s" % (got.shape, expected.shape)
    if scaled:
        scale = float(np.max(np.abs(expected))) if expected.size else 0.0
        err = float(np.max(np.abs(got.astype(np.float64) - expected))) if got.size else 0.0
        if not scale > 0 or not err <= rtol * scale:
            return "max abs err %.3g against an output scale of %.3g" % (err, scale)
    if got.dtype.kind in "fc":
        g, e = got.astype(np.float64), expected.astype(np.float64)
        with np.errstate(invalid="ignore"):  # inf - inf
            bad = ~((np.abs(g - e) <= atol + rtol * np.abs(e)) | (np.isnan(g) & np.isnan(e)) |
                    (g == e))
    else:
        bad = got != expected
    if bad.any():
        with np.errstate(invalid="ignore"):
            err = np.nanmax(np.abs(got.astype(np.float64) - expected.astype(np.float64)))
        return "%d of %d elements differ (max abs err %.3g)" % (bad.sum(), bad.size, float(err))
    return ""


def median_ms(fn, iterations=20, warmup=5, sync=None):
    times = []
    for i in range(warmup + iterations):
        if sync:
            sync()
        t = time.perf_counter()
        fn()
        if sync:
            sync()
        if i >= warmup:
            times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2]


def torch_median_ms(model, x, compiled=False, iterations=20):
    """`model` on `x` on the GPU (eager, or torch.compile'd): the median of
    `iterations` runs after 5, each fenced by torch.cuda.synchronize()."""
    import torch
    model = model.cuda().eval()
    if compiled:
        model = torch.compile(model)
    x = x.cuda()
    with torch.no_grad():
        return median_ms(lambda: model(x), iterations, 5, torch.cuda.synchronize)


def torch_model(model_name, batch, half=False):
    """The suite's model `model_name` (random weights) and an input of
    `batch` items; with `half`, both in float16 (but integer inputs)."""
    import torch
    sys.path.insert(0, os.path.join(HERE, "models"))
    import models as suite
    torch.manual_seed(0)
    model, x = suite.MODELS[model_name]()
    if batch != 1:
        x = (torch.randint(0, int(x.max()) + 1, (batch,) + tuple(x.shape[1:]))
             if x.dtype == torch.int64 else torch.randn((batch,) + tuple(x.shape[1:])))
    if half:
        model = model.half()
        x = x.half() if x.is_floating_point() else x
    return model, x


def torch_ms(model_name, batch, compiled, half=False):
    return torch_median_ms(*torch_model(model_name, batch, half), compiled)


def check_entry(root, e, lib):
    """'' when every data set's outputs match, else why not."""
    import numpy as np
    # bfloat16 compares as float32 (with conformance.py's tolerance).
    widen = lambda a, bf16: (a.astype(np.uint32) << 16).view(np.float32) if bf16 else a
    for s in e["sets"]:
        outs = lib.run([np.load(os.path.join(root, p)) for p in s["input"]])
        for i, p in enumerate(s["output"]):
            bf16 = lib.bfloat16_outputs()[i]
            why = compare(widen(outs[i], bf16), widen(np.load(os.path.join(root, p)), bf16),
                          e["rtol"], e["atol"])
            if why:
                return why
    return ""


def work_conformance(root, name, ids, deadline):
    """Worker: runs the conformance entries `ids`, one line per test; stops
    after an error (the process's CUDA context may be lost)."""
    with open(os.path.join(root, "manifest.json")) as f:
        entries = {e["id"]: e for e in json.load(f)["entries"]}
    for i in ids:
        if time.time() > deadline:
            return
        print("START " + i, flush=True)
        try:
            lib = Library(os.path.join(root, entries[i]["lib"]), name)
            why = check_entry(root, entries[i], lib)
            result = ["mismatch" if why else "pass", why]
        except Exception as ex:  # a failed run: its status and message
            result = ["error", str(ex).splitlines()[0][:200]]
        print("DONE " + json.dumps([i, result]), flush=True)
        if result[0] == "error":
            sys.exit(3)


def pipeline(root, ids, deadline, results, lock):
    """Runs `ids` in worker processes, one after another, a new one after a
    crash, an error or a test that hangs for 60 s."""
    import queue
    remaining = list(ids)
    while remaining and time.time() < deadline:
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "work", root,
                              "%f" % deadline] + remaining, stdout=subprocess.PIPE, text=True)
        lines = queue.Queue()

        def read(stream=p.stdout):
            for line in stream:
                lines.put(line)
            lines.put("")
        threading.Thread(target=read, daemon=True).start()
        current = remaining[0]
        while True:
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                p.kill()
                p.wait()
                result = ["timeout", "no answer in 60 s"]
                break
            if not line:
                p.wait()
                result = ["crash", "worker exited with %d" % p.returncode]
                break
            if line.startswith("START "):
                current = line[6:].strip()
            elif line.startswith("DONE "):
                i, r = json.loads(line[5:])
                with lock:
                    results[i] = r
                remaining.remove(i)
                current = None
        if current is not None and current in remaining and time.time() < deadline:
            with lock:
                results[current] = result
            remaining.remove(current)


def work_model(root, name, eid, deadline, compiled, kiln_only=False):
    """Worker: one model entry: checked, timed, profiled, and torch timed
    (not with `kiln_only`). Prints its row as JSON on the last line."""
    import numpy as np
    with open(os.path.join(root, "manifest.json")) as f:
        e = {x["id"]: x for x in json.load(f)["entries"]}[eid]
    row = {"variant": e.get("variant", "kiln"), "model": e["model"], "batch": e["batch"],
           "half": e.get("half", False),
           "weights": "ternary" if e.get("ternary") else "random", "torch": e.get("torch", True)}
    out = lambda: print("ROW " + json.dumps(row), flush=True)
    lib = Library(os.path.join(root, e["lib"]), name)
    x = np.load(os.path.join(root, e["sets"][0]["input"][0]))
    try:
        t = time.perf_counter()
        got = lib.run([x])[0]
        row["first_run_ms"] = (time.perf_counter() - t) * 1e3
        why = compare(got, np.load(os.path.join(root, e["sets"][0]["output"][0])),
                      e["rtol"], e["atol"], scaled=True)
        row["check"], row["why"] = ("mismatch" if why else "pass"), why
    except Exception as ex:
        row["check"], row["why"] = "error", str(ex).splitlines()[0][:200]
        out()
        return
    if e.get("onnx"):
        try:
            import onnxruntime as ort
            s = ort.InferenceSession(os.path.join(root, e["onnx"]),
                                     providers=["CPUExecutionProvider"])
            ref = s.run(None, {s.get_inputs()[0].name: x})[0]
            row["ort_check"] = compare(got, ref, e["rtol"], e["atol"], scaled=True) or "pass"
        except Exception as ex:
            row["ort_check"] = "not run: " + str(ex).splitlines()[0][:100]
    outs = [np.zeros(s, dtype=dt) for s, dt in lib.shapes(True)]
    t = time.perf_counter()
    lib.run([x], outs)
    once = (time.perf_counter() - t) * 1e3
    # Fewer runs for a slow library (the whole call has minutes).
    iterations = 20 if once < 20 else 10 if once < 200 else 5
    row["kiln_ms"] = median_ms(lambda: lib.run([x], outs), iterations, 2)
    out()
    # NAME_run_device on device buffers of its own (cuMemAlloc in the primary
    # context the runtime made current): no copies.
    cuda = ctypes.CDLL("libcuda.so.1")

    def device_buffer(nbytes):
        ptr = ctypes.c_uint64()
        r = cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(max(1, nbytes)))
        if r:
            raise RuntimeError("cuMemAlloc failed (%d)" % r)
        return ptr.value
    xin = device_buffer(x.nbytes)
    cuda.cuMemcpyHtoD_v2(ctypes.c_uint64(xin), x.ctypes.data_as(ctypes.c_void_p),
                         ctypes.c_size_t(x.nbytes))
    douts = [device_buffer(o.nbytes) for o in outs]
    ws = device_buffer(lib.desc.workspace_size)
    ip = (ctypes.c_void_p * 1)(xin)
    op = (ctypes.c_void_p * len(douts))(*douts)

    def device_run():
        s = lib.run_device(ip, op, ctypes.c_void_p(ws))
        if s:
            raise RuntimeError("run_device status %d: %s" % (s, lib.error().decode()))
    device_run()
    back = np.zeros_like(outs[0])
    cuda.cuMemcpyDtoH_v2(back.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint64(douts[0]),
                         ctypes.c_size_t(back.nbytes))
    row["device_check"] = compare(back, got, 0, 0) or "pass"
    row["kiln_device_ms"] = median_ms(device_run, 2 * iterations, 2)
    out()
    if not row["torch"] or kiln_only:
        return
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        row["torch_error"] = "torch has no CUDA"
        out()
        return
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                device_run()
            torch.cuda.synchronize()
        kernels = []
        for k in prof.key_averages():
            us = getattr(k, "device_time_total", None) or getattr(k, "cuda_time_total", 0)
            if us:
                kernels.append((k.key, k.count // 3, us / 3e3))
        kernels.sort(key=lambda k: -k[2])
        row["kernel_ms"] = sum(k[2] for k in kernels)
        row["kernel_launches"] = sum(k[1] for k in kernels)
        row["top_kernels"] = [[n[:60], c, round(ms, 4)] for n, c, ms in kernels[:12]]
    except Exception as ex:
        row["profile_error"] = str(ex).splitlines()[0][:100]
    out()
    model, xt = torch_model(e["model"], e["batch"], e.get("half", False))
    row["torch_tf32_conv"] = bool(torch.backends.cudnn.allow_tf32)
    row["torch_ms"] = torch_median_ms(model, xt)
    out()
    if compiled and time.time() < deadline - 90:
        try:
            row["torch_compile_ms"] = torch_median_ms(model, xt, compiled=True)
        except Exception as ex:  # torch.compile may not work there
            row["torch_compile_error"] = str(ex).splitlines()[0][:100]
        out()


def run_all(args):
    start = time.time()
    deadline = start + args.budget
    root = os.path.abspath(args.dir)
    if not os.path.exists(os.path.join(root, "manifest.json")):
        bundle = os.path.join(root, "bundle.tar.xz")
        root = args.extract_to
        os.makedirs(root, exist_ok=True)
        with tarfile.open(bundle, "r:xz") as tar:
            tar.extractall(root)
        print("extracted %s in %.1f s" % (bundle, time.time() - start), flush=True)
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    report = {"conformance": {}, "models": []}
    try:
        report["gpu"] = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                       text=True).stdout.strip()
    except OSError:
        report["gpu"] = "(no nvidia-smi)"
    print("GPU:", report["gpu"], flush=True)

    models = [e for e in manifest["entries"] if e["kind"] == "model"]
    rows = []
    # Models first, then conformance; torch.compile with what time is left.
    for e in models:
        left = deadline - time.time() - args.conformance_s
        if left < 20:
            print("models: out of time before %s" % e["id"])
            break
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "model", root,
                                e["id"], "%f" % (time.time() + left), "0"],
                               capture_output=True, text=True, timeout=left)
            stdout, why = p.stdout, (p.stderr.strip().splitlines() or
                                     ["exit %d" % p.returncode])[-1][:200]
        except subprocess.TimeoutExpired as ex:
            stdout, why = ex.stdout or "", "timed out after %.0f s" % left
            stdout = stdout.decode() if isinstance(stdout, bytes) else stdout
        row = None
        for line in stdout.splitlines():
            if line.startswith("ROW "):
                row = json.loads(line[4:])
        if row is None:
            row = {"variant": e.get("variant", "kiln"), "model": e["model"],
                   "half": e.get("half", False), "batch": e["batch"], "check": "crash",
                   "why": why}
        elif why and "torch_ms" not in row:
            row["stopped"] = why
        # The same without CUDA graphs (each kernel launched by itself).
        left = deadline - time.time() - args.conformance_s
        if row.get("kiln_device_ms") and args.no_graphs and left > 20:
            try:
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "model", root,
                                    e["id"], "%f" % (time.time() + left), "kiln"],
                                   capture_output=True, text=True, timeout=left,
                                   env=dict(os.environ, KILN_CUDA_GRAPHS="0"))
                for line in p.stdout.splitlines():
                    if line.startswith("ROW "):
                        other = json.loads(line[4:])
                        row["no_graphs_ms"] = other.get("kiln_ms")
                        row["no_graphs_device_ms"] = other.get("kiln_device_ms")
            except subprocess.TimeoutExpired:
                pass
        rows.append(row)
        print(json.dumps(row), flush=True)

    conf = [e["id"] for e in manifest["entries"] if e["kind"] == "conformance"]
    results, lock = {}, threading.Lock()
    cdeadline = min(deadline, time.time() + args.conformance_s)
    threads = [threading.Thread(target=pipeline, args=(root, conf[k::args.jobs], cdeadline,
                                                       results, lock))
               for k in range(args.jobs)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = {}
    for i, (s, _) in results.items():
        v = i.split(":")[0]
        counts.setdefault(v, {})
        counts[v][s] = counts[v].get(s, 0) + 1
    print("\nconformance on the GPU (%d of %d libraries run, %.0f s)" % (
        len(results), len(conf), time.time() - t0))
    for v in sorted(counts):
        print("  %s: %s" % (v, ", ".join("%d %s" % (n, s) for s, n in sorted(counts[v].items()))),
              flush=True)
    for t in sorted(results):
        if results[t][0] != "pass":
            print("  %s: %s: %s" % (t, *results[t]))
    report["conformance"] = results

    # torch.compile, while the budget lasts (each compile takes a while).
    for row in rows:
        if (row.get("check") not in ("pass", "mismatch") or not row.get("torch") or
                deadline - time.time() < 120):
            continue
        try:
            p = subprocess.run([sys.executable, "-c",
                                "import sys; sys.path.insert(0, %r); import gpu_carry as g; "
                                "print('MS', g.torch_ms(%r, %d, True, %r))" % (
                                    HERE, row["model"], row["batch"], row.get("half", False))],
                               capture_output=True, text=True,
                               timeout=deadline - time.time() - 10)
        except subprocess.TimeoutExpired:
            row["torch_compile_error"] = "out of time"
            continue
        ms = [l for l in p.stdout.splitlines() if l.startswith("MS ")]
        if ms:
            row["torch_compile_ms"] = float(ms[-1][3:])
        else:
            row["torch_compile_error"] = (p.stderr.strip().splitlines() or ["?"])[-1][:100]
    report["models"] = rows
    fmt = lambda v: "%.3f" % v if isinstance(v, float) else "-"
    print("\n%-6s %-14s %5s %7s %9s %10s %10s %10s %10s %9s %13s %9s" % (
        "build", "model", "batch", "check", "ort", "kiln ms", "kiln dev", "no graphs",
        "kernels", "torch", "torch.compile", "dev/torch"))
    for r in rows:
        ratio = r.get("kiln_device_ms", 0) / r["torch_ms"] if r.get("torch_ms") else None
        print("%-6s %-14s %5d %7s %9s %10s %10s %10s %10s %9s %13s %9s" % (
            r.get("variant", "kiln")[:6], r["model"] + (" f16" if r.get("half") else ""),
            r["batch"], r.get("check"),
            (r.get("ort_check") or "-")[:9],
            fmt(r.get("kiln_ms")), fmt(r.get("kiln_device_ms")),
            fmt(r.get("no_graphs_device_ms")), fmt(r.get("kernel_ms")),
            fmt(r.get("torch_ms")), fmt(r.get("torch_compile_ms")),
            "%.2f" % ratio if ratio else "-"))
    print("\ngpu_carry.py run: %.0f s" % (time.time() - start))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "work":
        return work_conformance(sys.argv[2], NAME, sys.argv[4:], float(sys.argv[3]))
    if len(sys.argv) > 2 and sys.argv[1] == "pack":
        return pack(os.path.abspath(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "model":
        return work_model(sys.argv[2], NAME, sys.argv[3], float(sys.argv[4]), sys.argv[5] == "1",
                          kiln_only=sys.argv[5] == "kiln")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("kiln")
    p.add_argument("dir")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    p.add_argument("--models", default="resnet50,mobilenet_v2,bert_encoder")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--extra-models", default="",
                   help="more models, at batch 1 with the last build alone, three-level weights")
    p.add_argument("--ternary", default="resnet50,bert_encoder",
                   help="models whose weights become three levels, so that they compress")
    p.add_argument("--dynamic-lengths", default="128,37,5",
                   help="the sequence lengths of the encoder exported with a symbolic length, "
                        "checked (with test/Driver's dynamic models) from one library of the "
                        "last build; empty: none")
    p.add_argument("--half-models", default="",
                   help="models to run as float16 models too (last build; timed against "
                        "torch's .half())")
    p.add_argument("--conformance-variants",
                   help="the variants whose conformance libraries travel (default: all)")
    p.add_argument("--variant-flags", action="append", default=[], metavar="V:FLAGS",
                   help="kiln compile flags for variant V (e.g. TF32:--gpu-precision=tf32)")
    p.add_argument("--variant-rtol", action="append", default=[], metavar="V:RTOL",
                   help="variant V's models' rtol (of the output's scale; default 1e-3)")
    p.add_argument("--reuse", action="store_true",
                   help="keep the conformance libraries an earlier prepare left in DIR")
    p.add_argument("--conformance-limit", type=int, default=-1,
                   help="at most this many conformance tests (-1: all)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--work", default="/tmp/kiln-models",
                   help="where the model exports are cached (models.py's --work)")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--json")
    r.add_argument("--budget", type=float, default=420, help="seconds for the whole run")
    r.add_argument("--conformance-s", type=float, default=90,
                   help="seconds kept for the conformance tests")
    r.add_argument("--jobs", type=int, default=8, help="conformance worker processes")
    r.add_argument("--extract-to", default="/tmp/kiln-gpu")
    r.add_argument("--no-graphs", action="store_true",
                   help="time each model again with KILN_CUDA_GRAPHS=0")
    args = ap.parse_args()
    prepare(args) if args.verb == "prepare" else run_all(args)


if __name__ == "__main__":
    main()
