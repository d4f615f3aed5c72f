#!/usr/bin/python3
"""The GPU half of utils/gpu_carry.py (`gpu_carry.py run DIR`, on a device
machine with python3, numpy, the CUDA driver and, for the PyTorch times,
torch): the libraries of a prepared bundle loaded with ctypes, checked
and timed (gpu_carry.py's docstring says what runs and how). Also used by
utils/gpu_check.py (compare, torch_median_ms) and test/runtime's
carry_dynamic.py (Library)."""
import ctypes
import json
import os
import subprocess
import sys
import tarfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The command line whose `work` and `model` verbs run one worker.
CLI = os.path.join(HERE, "gpu_carry.py")


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
    """kiln_model_desc (kiln/runtime.h), abi_version 5."""
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("num_inputs", ctypes.c_int32), ("num_outputs", ctypes.c_int32),
                ("inputs", ctypes.POINTER(TensorDesc)), ("outputs", ctypes.POINTER(TensorDesc)),
                ("workspace_size", ctypes.c_int64), ("workspace_alignment", ctypes.c_int64),
                ("run", RUN), ("num_dynamic_dims", ctypes.c_int32),
                ("dynamic_dim_names", ctypes.POINTER(ctypes.c_char_p)), ("run_dims", RUN_DIMS),
                ("workspace_size_for", ctypes.c_void_p), ("num_dim_exprs", ctypes.c_int32),
                ("dim_exprs", ctypes.POINTER(ctypes.c_int64)),
                ("dim_expr_names", ctypes.POINTER(ctypes.c_char_p)),
                ("dim_expr_ops", ctypes.POINTER(ctypes.c_int64))]


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
            if d.abi_version >= 5 and d.dim_expr_ops:
                op = d.dim_expr_ops[4 * (k - n):4 * (k - n) + 4]
                if op[0] == 1:  # floor((d(x) + a) / s)
                    return (size(-1 - op[1]) + op[2]) // op[3]
                if op[0] == 2:  # c d(x) d(y)
                    return op[1] * size(-1 - op[2]) * size(-1 - op[3])
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
                          e["rtol"], e["atol"], e.get("scaled", False))
            if why:
                return why
    return ""


def time_sets(root, e, lib):
    """Each data set's median ms through NAME_run / NAME_run_dims (host
    pointers, copies included), with its inputs' shapes."""
    import numpy as np
    times = []
    for s in e["sets"]:
        ins = [np.load(os.path.join(root, p)) for p in s["input"]]
        outs = lib.run(ins)
        times.append([[list(a.shape) for a in ins],
                      round(median_ms(lambda: lib.run(ins, outs), 10, 2), 4)])
    return times


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
            if not why and entries[i].get("time"):
                result.append(time_sets(root, entries[i], lib))
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
        p = subprocess.Popen([sys.executable, CLI, "work", root,
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
            p = subprocess.run([sys.executable, CLI, "model", root,
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
                p = subprocess.run([sys.executable, CLI, "model", root,
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

    # The timed libraries (dynamic dims, whole batches) first: the
    # deadline cuts the list's tail.
    conf = [e["id"] for e in manifest["entries"] if e["kind"] == "conformance"]
    timed_ids = set(e["id"] for e in manifest["entries"] if e.get("time"))
    conf.sort(key=lambda i: i not in timed_ids)
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
    for i, r in results.items():
        s, v = r[0], i.split(":")[0]
        counts.setdefault(v, {})
        counts[v][s] = counts[v].get(s, 0) + 1
    print("\nconformance on the GPU (%d of %d libraries run, %.0f s)" % (
        len(results), len(conf), time.time() - t0))
    for v in sorted(counts):
        print("  %s: %s" % (v, ", ".join("%d %s" % (n, s) for s, n in sorted(counts[v].items()))),
              flush=True)
    for t in sorted(results):
        if results[t][0] != "pass":
            print("  %s: %s: %s" % (t, *results[t][:2]))
    timed = sorted(t for t in results if len(results[t]) > 2)
    if timed:
        print("\ndynamic dims and whole batches (NAME_run_dims on host arrays, copies "
              "included; median ms)")
    for t in timed:
        print("  %s: %s" % (t, ", ".join("%s %.3f" % (" ".join(
            "[%s]" % ",".join(str(n) for n in shape) for shape in shapes), ms)
            for shapes, ms in results[t][2])))
    report["conformance"] = results

    # torch.compile, while the budget lasts (each compile takes a while).
    for row in rows:
        if (row.get("check") not in ("pass", "mismatch") or not row.get("torch") or
                deadline - time.time() < 120):
            continue
        try:
            p = subprocess.run([sys.executable, "-c",
                                "import sys; sys.path.insert(0, %r); import gpu_carry_run as g; "
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
