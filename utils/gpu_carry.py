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
             [--no-whole-batch]
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
give, then timed at each size: test/Driver's symbolic-dims and
dynamic-batch models at several sizes each, and the BERT-style encoder
exported with a symbolic sequence length (three-level weights) at those
lengths (about 7 MiB of the bundle). Unless --no-whole-batch, each model
of --models with three-level weights also travels as one library
compiled without --input-shape (its export's batch is symbolic, which
--target=cuda keeps whole), checked and timed like those on the models'
data at every batch: its ms next to the pinned libraries' `kiln ms` is
the cost of a dynamic batch.

`run` (gpu_carry_run.py) needs only python3 and numpy (torch for the
PyTorch times and the kernel profile, onnxruntime for the second
reference): each library is
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
import json
import os
import subprocess
import sys
import tarfile

import gpu_carry_run

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
    # Per model of --models with three-level weights: its ONNX file (a
    # symbolic batch) and its data at each batch, for the whole-batch
    # library.
    whole = {}
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
        if name in ternaries and not half and name in args.models.split(","):
            whole.setdefault(name, (onnx_path, []))[1].append(
                {"input": [rel(x_npy)], "output": [rel(y_npy)]})
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
    if args.whole_batch:
        variant, k = variants[-1]
        for name, (onnx_path, sets) in whole.items():
            lib = os.path.join(variant, "models", name, "lib_whole.so")
            if compile_lib(k, onnx_path, os.path.join(files, lib), [], variant):
                entries.append({"kind": "conformance", "variant": variant,
                                "id": "%s:whole/%s" % (variant, name), "lib": lib,
                                "sets": sets, "rtol": rtols.get(variant, 1e-3), "atol": 1e-4,
                                "scaled": True, "time": True})
                print("prepare: %s as a whole dynamic batch" % name, flush=True)
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
                          "rtol": 1e-3, "atol": 1e-5, "time": True})
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


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "work":
        return gpu_carry_run.work_conformance(sys.argv[2], NAME, sys.argv[4:], float(sys.argv[3]))
    if len(sys.argv) > 2 and sys.argv[1] == "pack":
        return pack(os.path.abspath(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "model":
        return gpu_carry_run.work_model(sys.argv[2], NAME, sys.argv[3], float(sys.argv[4]), sys.argv[5] == "1",
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
    p.add_argument("--whole-batch", action=argparse.BooleanOptionalAction, default=True,
                   help="each --models model with three-level weights also as one library "
                        "with its batch dynamic, timed at every batch (last build)")
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
    prepare(args) if args.verb == "prepare" else gpu_carry_run.run_all(args)


if __name__ == "__main__":
    main()
