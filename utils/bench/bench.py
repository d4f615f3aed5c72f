#!/usr/bin/python3
"""kiln against ONNX Runtime, on this machine, in one run.

    python3 utils/bench/bench.py KILN [--models a,b,...] [--threads 1,2]
        [--iterations 10] [--warmup 3] [--rounds 2] [--micro [--conv-sweep]]
        [--dynamic-int8 [--dynamic-models a,b]] [--static-int8 [--static-models a,b]]
        [--no-models] [--work DIR] [--json F]

Needs ONNX Runtime from npm, once: `npm install --ignore-scripts` in
utils/bench (package.json pins onnxruntime-node; --ignore-scripts skips its
GPU download, the CPU library ships in the package).

For each model of the model suite (utils/models/models.py exports it: random
weights, batch 1, opset 17), kiln compiles it to a shared library; both
runtimes get the same input; their outputs are compared (a sanity check:
the largest difference against the output's scale); then, for each thread
count N, `kiln bench --threads N` and ONNX Runtime (graph optimisation
'all', intraOpNumThreads N, interOpNumThreads 1) alternate; a round runs
both at every thread count in turn, --rounds rounds, each run with --warmup
warm-up runs and --iterations measured runs. The medians of all measured
runs give the kiln/ORT latency ratio (below 1: kiln is faster); the
geometric mean is over the models measured. With two thread counts or
more, the speed-up of each (median at the fewest threads over median at
the most) follows the table.

--micro adds microbenchmarks: SGEMM (MatMul of an input by a constant
weight) at 256^3, 512^3 and 1024^3 and the suite's most common
convolutions, in GFLOP/s for both and as a fraction of this core's FP32 FMA
peak, which utils/bench/fma_peak.c measures here (12 chains of FMAs of the
host's widest vectors: AVX-512 where the CPU has it, else AVX2). With
--conv-sweep the convolutions are every conv shape of resnet50 instead
(23 models, one conv each).

--dynamic-int8 adds the dynamically quantised transformers (bert_encoder and
vit_b_16 unless --dynamic-models says otherwise): kiln compiles each with
--quantize=dynamic and without; ONNX Runtime runs the same quantised graph
(quantize_dynamic.py writes it as ONNX; ORT fuses it into its
DynamicQuantizeMatMul) and the float model; all four alternate as above. It
prints the latencies, kiln's INT8 over its FP32, kiln's INT8 over ORT's, the
SQNR of kiln's INT8 output against its FP32 one and the parity of kiln's and
ORT's INT8 outputs.

--static-int8 adds the statically quantised CNNs (resnet50 and mobilenet_v2
unless --static-models says otherwise): kiln compiles each with
--quantize=int8, calibrated on 32 crops of scikit-learn's two sample photos
(calibration_images.py, seed 0), and without; ONNX Runtime runs kiln's QDQ
export of the same quantised model (--emit=onnx) and the float model; all
four alternate as above. It prints the latencies, the ratios, the SQNR of
kiln's INT8 output against its FP32 one over 8 held-out crops (seed 1:
smallest and median), how many of them keep their top-1 class, and the
parity of kiln's and ORT's INT8 outputs.

These are measurements, not tests: the machines are noisy, so compare the
ratios of one run, not absolute times across runs.
"""

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import models as suite  # noqa: E402

DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.int64): "int64",
          np.dtype(np.int32): "int32", np.dtype(np.uint8): "uint8", np.dtype(np.int8): "int8"}


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd[:3]), p.returncode,
                                                    (p.stderr or p.stdout).strip()[-500:]))
    return p.stdout


def graph_inputs(onnx_path):
    import onnx
    m = onnx.load(onnx_path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in inits]


def write_inputs(onnx_path, arrays, folder):
    """inputs.json for ort_bench.js and the .npy files for kiln."""
    specs, npys = [], []
    for i, (name, x) in enumerate(zip(graph_inputs(onnx_path), arrays)):
        x = np.ascontiguousarray(x)
        raw = os.path.join(folder, "in%d.bin" % i)
        x.tofile(raw)
        npy = os.path.join(folder, "in%d.npy" % i)
        np.save(npy, x)
        specs.append({"name": name, "dtype": DTYPES[x.dtype], "dims": list(x.shape),
                      "file": raw})
        npys.append(npy)
    path = os.path.join(folder, "inputs.json")
    with open(path, "w") as f:
        json.dump(specs, f)
    return path, npys


def kiln_times(kiln, lib, npys, threads, iterations, warmup):
    cmd = [kiln, "bench", lib, "--json", "--iterations", str(iterations),
           "--warmup", str(warmup), "--threads", str(threads)]
    for n in npys:
        cmd += ["--input", n]
    return json.loads(run(cmd))["times_ms"]


def ort_times(onnx_path, inputs_json, threads, iterations, warmup, out_dir=None):
    cmd = ["node", os.path.join(HERE, "ort_bench.js"), onnx_path, inputs_json,
           str(threads), str(iterations), str(warmup)]
    if out_dir:
        cmd.append(out_dir)
    return json.loads(run(cmd))["times_ms"]


def timing_args(ap, iterations, warmup):
    """The options of the scripts that time kiln's libraries against ONNX
    Runtime with best_medians: --threads (a list), --iterations,
    --warmup, --rounds and --work."""
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--iterations", type=int, default=iterations)
    ap.add_argument("--warmup", type=int, default=warmup)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work")


def timing_setup(args, prefix):
    """kiln's absolute path, the thread counts and the work folder (made;
    a new temporary one, named from `prefix`, without --work) of options
    from timing_args."""
    threads = [int(n) for n in args.threads.split(",")]
    work = args.work or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(work, exist_ok=True)
    return os.path.abspath(args.kiln), threads, work


def best_medians(kiln, libs, onnx_path, inputs_json, npys, threads, args):
    """`kiln bench` of each library in `libs`, then ONNX Runtime on
    `onnx_path`, in turn for args.rounds rounds (args.iterations runs after
    args.warmup each); the best median of each (ms), ONNX Runtime's last."""
    best = [float("inf")] * (len(libs) + 1)
    for _ in range(args.rounds):
        times = [kiln_times(kiln, lib, npys, threads, args.iterations, args.warmup)
                 for lib in libs]
        times.append(ort_times(onnx_path, inputs_json, threads, args.iterations, args.warmup))
        for i, ts in enumerate(times):
            best[i] = min(best[i], statistics.median(ts))
    return best


def parity(kiln, lib, onnx_path, npys, inputs_json, folder):
    """max |kiln - ORT| / max |ORT| over the first output."""
    kdir = os.path.join(folder, "kiln-out")
    odir = os.path.join(folder, "ort-out")
    os.makedirs(odir, exist_ok=True)
    cmd = [kiln, "run", lib, "--save-outputs", kdir]
    for n in npys:
        cmd += ["--input", n]
    run(cmd)
    ort_times(onnx_path, inputs_json, 1, 1, 0, odir)
    got = [f for f in sorted(os.listdir(kdir)) if f.endswith(".npy")]
    k = np.load(os.path.join(kdir, got[0])).astype(np.float64).ravel()
    o = np.fromfile(os.path.join(odir, "0.bin"), dtype=np.float32).astype(np.float64)
    if k.size != o.size:
        return float("nan")
    scale = float(np.max(np.abs(o))) or 1.0
    return float(np.max(np.abs(k - o))) / scale


def measure(kiln, lib, onnx_path, npys, inputs_json, args):
    """{threads: (kiln median ms, ORT median ms)}. Each round runs kiln and
    ORT at every thread count in turn, so that a slow spell of the machine
    falls on all of them alike, not on one thread count's rounds."""
    k = {n: [] for n in args.threads}
    o = {n: [] for n in args.threads}
    for _ in range(args.rounds):
        for n in args.threads:
            k[n] += kiln_times(kiln, lib, npys, n, args.iterations, args.warmup)
            o[n] += ort_times(onnx_path, inputs_json, n, args.iterations, args.warmup)
    return {n: (statistics.median(k[n]), statistics.median(o[n])) for n in args.threads}


def sqnr_db(ref, got):
    ref, got = ref.astype(np.float64).ravel(), got.astype(np.float64).ravel()
    noise = float(np.sum((ref - got) ** 2))
    return float("inf") if noise == 0 else 10 * math.log10(float(np.sum(ref ** 2)) / noise)


def int8_times(kiln, libs, q_path, onnx_path, npys, inputs_json, args, row):
    """Median latencies into `row` (kiln_int8_ms_NT, kiln_fp32, ort_int8,
    ort_fp32): kiln's two builds and ORT on the quantised and the float
    model, alternating, --rounds times at each thread count."""
    for n in args.threads:
        times = {k: [] for k in ("kiln_int8", "kiln_fp32", "ort_int8", "ort_fp32")}
        for _ in range(args.rounds):
            for kind in ("int8", "fp32"):
                times["kiln_" + kind] += kiln_times(kiln, libs[kind], npys, n, args.iterations,
                                                    args.warmup)
                times["ort_" + kind] += ort_times(q_path if kind == "int8" else onnx_path,
                                                  inputs_json, n, args.iterations, args.warmup)
        for k, v in times.items():
            row["%s_ms_%dt" % (k, n)] = statistics.median(v)


def bench_dynamic(kiln, name, args):
    """kiln --quantize=dynamic against kiln FP32 and ORT on the same
    quantised graph."""
    import onnx
    import quantize_dynamic
    onnx_path, in_path, _ = suite.export(name, args.work)
    folder = os.path.join(args.work, "bench-dynamic-" + name)
    os.makedirs(folder, exist_ok=True)
    libs = {}
    for kind, flags in (("int8", ["--quantize=dynamic"]), ("fp32", [])):
        libs[kind] = os.path.join(folder, "lib%s_%s.so" % (name, kind))
        run([kiln, "compile", onnx_path, "-o", libs[kind], "-q"] + flags)
    q_path = os.path.join(folder, name + "_dynamic.onnx")
    model, _ = quantize_dynamic.quantize_dynamic(onnx.load(onnx_path))
    onnx.save(model, q_path)
    inputs_json, npys = write_inputs(onnx_path, [np.load(in_path)], folder)
    outs = {}
    for kind, lib in libs.items():
        d = os.path.join(folder, "out-" + kind)
        cmd = [kiln, "run", lib, "--save-outputs", d]
        for n in npys:
            cmd += ["--input", n]
        run(cmd)
        outs[kind] = np.load(os.path.join(d, sorted(f for f in os.listdir(d)
                                                    if f.endswith(".npy"))[0]))
    row = {"model": name, "sqnr_db": sqnr_db(outs["fp32"], outs["int8"]),
           "parity": parity(kiln, libs["int8"], q_path, npys, inputs_json, folder)}
    int8_times(kiln, libs, q_path, onnx_path, npys, inputs_json, args, row)
    return row


def static_samples(args):
    """The calibration crops (32, seed 0) and the held-out ones (8, seed 1),
    made once (calibration_images.py: needs scikit-learn)."""
    import calibration_images
    dirs = []
    for kind, count, seed in (("calibration", 32, 0), ("heldout", 8, 1)):
        d = os.path.join(args.work, "static-int8-" + kind)
        if len([f for f in os.listdir(d) if f.endswith(".npy")] if os.path.isdir(d) else []) != count:
            os.makedirs(d, exist_ok=True)
            for i, x in enumerate(calibration_images.samples(count, seed)):
                np.save(os.path.join(d, "%03d.npy" % i), x)
        dirs.append(d)
    return dirs


def bench_static(kiln, name, args):
    """kiln --quantize=int8 (calibrated on 32 crops) against kiln FP32, and
    ONNX Runtime on kiln's QDQ export of the same quantised model; SQNR and
    top-1 agreement against kiln FP32 on 8 held-out crops."""
    onnx_path, _, _ = suite.export(name, args.work)
    calibration, heldout = static_samples(args)
    folder = os.path.join(args.work, "bench-static-" + name)
    os.makedirs(folder, exist_ok=True)
    libs = {k: os.path.join(folder, "lib%s_%s.so" % (name, k)) for k in ("int8", "fp32")}
    start = time.time()
    run([kiln, "compile", onnx_path, "-o", libs["int8"], "-q", "--quantize=int8",
         "--calibration-data=" + calibration])
    compile_s = time.time() - start
    run([kiln, "compile", onnx_path, "-o", libs["fp32"], "-q"])
    q_path = os.path.join(folder, name + ".qdq.onnx")
    run([kiln, "compile", onnx_path, "--emit=onnx", "-o", q_path, "-q", "--quantize=int8",
         "--calibration-data=" + calibration])
    sqnrs, agree = [], 0
    samples = sorted(f for f in os.listdir(heldout) if f.endswith(".npy"))
    for f in samples:
        outs = {}
        for kind, lib in libs.items():
            d = os.path.join(folder, "out-%s-%s" % (kind, f[:-4]))
            run([kiln, "run", lib, "--input", os.path.join(heldout, f), "--save-outputs", d])
            outs[kind] = np.load(os.path.join(d, sorted(x for x in os.listdir(d)
                                                        if x.endswith(".npy"))[0]))
        sqnrs.append(sqnr_db(outs["fp32"], outs["int8"]))
        agree += int(np.argmax(outs["fp32"]) == np.argmax(outs["int8"]))
    x = np.load(os.path.join(heldout, samples[0]))
    inputs_json, npys = write_inputs(onnx_path, [x], folder)
    row = {"model": name, "compile_int8_s": compile_s, "sqnr_db_min": min(sqnrs),
           "sqnr_db_median": statistics.median(sqnrs), "top1_agree": agree,
           "heldout": len(samples),
           "parity": parity(kiln, libs["int8"], q_path, npys, inputs_json, folder)}
    int8_times(kiln, libs, q_path, onnx_path, npys, inputs_json, args, row)
    return row


def bench_model(kiln, name, args):
    onnx_path, in_path, _ = suite.export(name, args.work)
    folder = os.path.join(args.work, "bench-" + name)
    os.makedirs(folder, exist_ok=True)
    lib = os.path.join(folder, "lib%s.so" % name)
    run([kiln, "compile", onnx_path, "-o", lib, "-q"])
    inputs_json, npys = write_inputs(onnx_path, [np.load(in_path)], folder)
    row = {"model": name, "parity": parity(kiln, lib, onnx_path, npys, inputs_json, folder)}
    for n, (k, o) in measure(kiln, lib, onnx_path, npys, inputs_json, args).items():
        row["kiln_ms_%dt" % n] = k
        row["ort_ms_%dt" % n] = o
        row["ratio_%dt" % n] = k / o
    return row


# --conv-sweep: every conv shape of resnet50 (cin, cout, kernel, input size,
# stride), one model each.
RESNET50_CONVS = [
    (3, 64, 7, 224, 2), (64, 64, 1, 56, 1), (64, 64, 3, 56, 1), (64, 256, 1, 56, 1),
    (256, 64, 1, 56, 1), (256, 128, 1, 56, 1), (128, 128, 3, 56, 2), (128, 128, 3, 28, 1),
    (128, 512, 1, 28, 1), (256, 512, 1, 56, 2), (512, 128, 1, 28, 1), (512, 256, 1, 28, 1),
    (256, 256, 3, 28, 2), (256, 256, 3, 14, 1), (256, 1024, 1, 14, 1), (512, 1024, 1, 28, 2),
    (1024, 256, 1, 14, 1), (1024, 512, 1, 14, 1), (512, 512, 3, 14, 2), (512, 512, 3, 7, 1),
    (512, 2048, 1, 7, 1), (1024, 2048, 1, 14, 2), (2048, 512, 1, 7, 1)]


def micro_models(folder, conv_sweep=False):
    """(name, flops, onnx path, input arrays) for the microbenchmarks."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    out = []

    def save(name, nodes, inputs, outputs, inits):
        graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        path = os.path.join(folder, name + ".onnx")
        onnx.save(m, path)
        return path

    for n in (256, 512, 1024):
        w = numpy_helper.from_array(rng.standard_normal((n, n)).astype(np.float32), "w")
        path = save("sgemm_%d" % n, [helper.make_node("MatMul", ["a", "w"], ["c"])],
                    [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n])],
                    [helper.make_tensor_value_info("c", TensorProto.FLOAT, [n, n])], [w])
        out.append(("sgemm %d^3" % n, 2.0 * n ** 3, path,
                    [rng.standard_normal((n, n)).astype(np.float32)]))
    # Integer matmuls (MatMulInteger, uint8 activations by constant int8
    # weights, as dynamically quantised transformers run them): 1024^3 and
    # a BERT-base layer's shapes at sequence length 128.
    for m, k, n in ((1024, 1024, 1024), (128, 768, 768), (128, 768, 3072), (128, 3072, 768)):
        w = numpy_helper.from_array(rng.integers(-128, 128, (k, n)).astype(np.int8), "w")
        zp = numpy_helper.from_array(np.array(128, np.uint8), "a_zp")
        path = save("imatmul_%d_%d_%d" % (m, k, n),
                    [helper.make_node("MatMulInteger", ["a", "w", "a_zp"], ["c"])],
                    [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
                    [helper.make_tensor_value_info("c", TensorProto.INT32, [m, n])], [w, zp])
        out.append(("imatmul %dx%dx%d" % (m, k, n), 2.0 * m * k * n, path,
                    [rng.integers(0, 256, (m, k)).astype(np.uint8)]))
    # ResNet's most common convolutions: 3x3 64->64 and 1x1 256->64 at 56x56;
    # its small maps (stage 3 and 4, 14x14 and 7x7) and a strided one.
    convs = [("conv3x3 64->64 56x56", 64, 64, 3, 56, 1),
             ("conv1x1 256->64 56x56", 256, 64, 1, 56, 1),
             ("conv3x3 256->256 14x14", 256, 256, 3, 14, 1),
             ("conv3x3 512->512 7x7", 512, 512, 3, 7, 1),
             ("conv3x3/2 128->256 28x28", 128, 256, 3, 28, 2)]
    if conv_sweep:
        convs = [("conv%dx%d%s %d->%d %dx%d" % (k, k, "/2" if s == 2 else "", cin, cout, hw, hw),
                  cin, cout, k, hw, s) for cin, cout, k, hw, s in RESNET50_CONVS]
    for name, cin, cout, k, hw, s in convs:
        w = numpy_helper.from_array(
            (rng.standard_normal((cout, cin, k, k)) * 0.05).astype(np.float32), "w")
        stem = name.split()[0].replace("/", "s") + "_%d_%d_%d" % (cin, cout, hw)
        ohw = (hw + 2 * (k // 2) - k) // s + 1
        path = save(stem, [helper.make_node("Conv", ["x", "w"], ["y"], pads=[k // 2] * 4,
                                            strides=[s, s])],
                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, hw, hw])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                   [1, cout, ohw, ohw])],
                    [w])
        out.append((name, 2.0 * cout * cin * k * k * ohw * ohw, path,
                    [rng.standard_normal((1, cin, hw, hw)).astype(np.float32)]))
    # The same convolutions as QLinearConv (uint8 activations, int8
    # weights with a scale per output channel, int32 bias, uint8 output),
    # as a statically quantised CNN runs them.
    for name, cin, cout, k, hw, s in convs:
        stem = "q" + name.split()[0].replace("/", "s") + "_%d_%d_%d" % (cin, cout, hw)
        ohw = (hw + 2 * (k // 2) - k) // s + 1
        consts = [
            numpy_helper.from_array(np.array(0.02, np.float32), "x_scale"),
            numpy_helper.from_array(np.array(128, np.uint8), "x_zp"),
            numpy_helper.from_array(rng.integers(-127, 128, (cout, cin, k, k)).astype(np.int8),
                                    "w"),
            numpy_helper.from_array((rng.random(cout) * 0.002 + 0.001).astype(np.float32),
                                    "w_scale"),
            numpy_helper.from_array(np.zeros(cout, np.int8), "w_zp"),
            numpy_helper.from_array(np.array(0.5, np.float32), "y_scale"),
            numpy_helper.from_array(np.array(100, np.uint8), "y_zp"),
            numpy_helper.from_array(rng.integers(-1000, 1000, cout).astype(np.int32), "bias")]
        node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp",
                                                "y_scale", "y_zp", "bias"], ["y"],
                                pads=[k // 2] * 4, strides=[s, s])
        path = save(stem, [node],
                    [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, cin, hw, hw])],
                    [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, cout, ohw, ohw])],
                    consts)
        out.append(("q" + name, 2.0 * cout * cin * k * k * ohw * ohw, path,
                    [rng.integers(0, 256, (1, cin, hw, hw)).astype(np.uint8)]))
    return out


def fma_peak(folder):
    exe = os.path.join(folder, "fma_peak")
    run(["cc", "-O2", "-march=native", os.path.join(HERE, "fma_peak.c"), "-o", exe])
    # The best of three: the peak is what the core can do, not the noise.
    return max(json.loads(run([exe, "100000000"]))["gflops"] for _ in range(3))


def int8_table(title, models, bench, rows, head, tail, kiln, args):
    """Runs `bench` on each of the comma-separated `models`, appending its
    rows to `rows`, and prints kiln's and ORT's INT8 and FP32 latencies
    per thread count, kiln's INT8 over its FP32 and over ORT's INT8, then
    `tail(row)` under `head`."""
    print("\n%-21s" % title + "".join(
        " %10s %10s %10s %10s %8s %8s" % ("kiln i8 %dT" % n, "kiln f32", "ORT i8", "ORT f32",
                                            "i8/f32", "kiln/ORT")
        for n in args.threads) + head, flush=True)
    for name in [m for m in models.split(",") if m]:
        try:
            r = bench(kiln, name, args)
        except RuntimeError as e:
            print("%-20s error: %s" % (name, e), flush=True)
            rows.append({"model": name, "error": str(e)})
            continue
        rows.append(r)
        print("%-20s" % name + "".join(
            " %10.2f %10.2f %10.2f %10.2f %8.2f %8.2f" % (
                r["kiln_int8_ms_%dt" % n], r["kiln_fp32_ms_%dt" % n],
                r["ort_int8_ms_%dt" % n], r["ort_fp32_ms_%dt" % n],
                r["kiln_int8_ms_%dt" % n] / r["kiln_fp32_ms_%dt" % n],
                r["kiln_int8_ms_%dt" % n] / r["ort_int8_ms_%dt" % n]) for n in args.threads)
            + tail(r), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--models", default=",".join(suite.MODELS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--micro", action="store_true")
    ap.add_argument("--conv-sweep", action="store_true",
                    help="with --micro: every conv shape of resnet50 instead of the usual five")
    ap.add_argument("--no-models", action="store_true")
    ap.add_argument("--dynamic-int8", action="store_true")
    ap.add_argument("--dynamic-models", default="bert_encoder,vit_b_16")
    ap.add_argument("--static-int8", action="store_true")
    ap.add_argument("--static-models", default="resnet50,mobilenet_v2")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "kiln-models"))
    ap.add_argument("--json")
    args = ap.parse_args()
    args.threads = [int(t) for t in args.threads.split(",") if t]
    kiln = os.path.abspath(args.kiln)
    if not os.path.exists(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        sys.exit("bench.py: ONNX Runtime is missing: run `npm install --ignore-scripts` "
                 "in %s first" % HERE)
    os.makedirs(args.work, exist_ok=True)
    report = {"machine": {"cpu": platform.processor() or platform.machine(),
                          "cores": os.cpu_count()},
              "settings": {"iterations": args.iterations, "warmup": args.warmup,
                           "rounds": args.rounds, "threads": args.threads},
              "models": [], "micro": [], "dynamic_int8": [], "static_int8": []}
    head = "".join(" %9s %9s %7s" % ("kiln %dT" % n, "ORT %dT" % n, "ratio")
                   for n in args.threads)
    if not args.no_models:
        print("%-20s%s %9s" % ("model (ms)", head, "parity"), flush=True)
        for name in [m for m in args.models.split(",") if m]:
            try:
                row = bench_model(kiln, name, args)
            except RuntimeError as e:
                print("%-20s error: %s" % (name, e), flush=True)
                report["models"].append({"model": name, "error": str(e)})
                continue
            report["models"].append(row)
            print("%-20s%s %9.2g" % (name, "".join(
                " %9.2f %9.2f %7.2f" % (row["kiln_ms_%dt" % n], row["ort_ms_%dt" % n],
                                        row["ratio_%dt" % n]) for n in args.threads),
                row["parity"]), flush=True)
        rows = [r for r in report["models"] if "error" not in r]
        if rows:
            geo = {n: math.exp(statistics.mean(math.log(r["ratio_%dt" % n]) for r in rows))
                   for n in args.threads}
            report["geomean_ratio"] = {str(n): g for n, g in geo.items()}
            print("%-20s%s" % ("geomean kiln/ORT", "".join(
                " %9s %9s %7.2f" % ("", "", geo[n]) for n in args.threads)), flush=True)
            if len(args.threads) > 1:
                lo, hi = min(args.threads), max(args.threads)
                print("\nspeed-up %dT -> %dT    kiln     ORT" % (lo, hi))
                for r in rows:
                    r["kiln_speedup"] = r["kiln_ms_%dt" % lo] / r["kiln_ms_%dt" % hi]
                    r["ort_speedup"] = r["ort_ms_%dt" % lo] / r["ort_ms_%dt" % hi]
                    print("%-20s %7.2f %7.2f" % (r["model"], r["kiln_speedup"],
                                                 r["ort_speedup"]), flush=True)
    if args.dynamic_int8:
        int8_table("dynamic INT8 (ms)", args.dynamic_models, bench_dynamic, report["dynamic_int8"],
                   "  SQNR dB   parity",
                   lambda r: "  %7.1f %8.2g" % (r["sqnr_db"], r["parity"]), kiln, args)
    if args.static_int8:
        int8_table("static INT8 (ms)", args.static_models, bench_static, report["static_int8"],
                   "  SQNR dB min/med  top-1  parity",
                   lambda r: "  %7.1f/%5.1f  %d/%d  %8.2g" % (
                       r["sqnr_db_min"], r["sqnr_db_median"], r["top1_agree"], r["heldout"],
                       r["parity"]), kiln, args)
    if args.micro:
        folder = os.path.join(args.work, "bench-micro")
        os.makedirs(folder, exist_ok=True)
        peak = fma_peak(folder)
        report["fma_peak_gflops"] = peak
        print("\nFP32 FMA peak of one core (fma_peak.c): %.1f GFLOP/s" % peak)
        print("%-24s %10s %10s %10s %10s" % ("kernel", "kiln GF/s", "ORT GF/s",
                                             "kiln/peak", "ORT/peak"), flush=True)
        for name, flops, path, arrays in micro_models(folder, args.conv_sweep):
            sub = os.path.join(folder, path.split("/")[-1][:-5])
            os.makedirs(sub, exist_ok=True)
            lib = os.path.join(sub, "libmicro.so")
            run([kiln, "compile", path, "-o", lib, "-q"])
            inputs_json, npys = write_inputs(path, arrays, sub)
            k = statistics.median(kiln_times(kiln, lib, npys, 1, args.iterations, args.warmup))
            o = statistics.median(ort_times(path, inputs_json, 1, args.iterations, args.warmup))
            kg, og = flops / k * 1e-6, flops / o * 1e-6
            report["micro"].append({"kernel": name, "kiln_ms": k, "ort_ms": o,
                                    "kiln_gflops": kg, "ort_gflops": og,
                                    "kiln_fraction_of_peak": kg / peak,
                                    "ort_fraction_of_peak": og / peak})
            print("%-24s %10.2f %10.2f %9.1f%% %9.1f%%" % (name, kg, og, 100 * kg / peak,
                                                             100 * og / peak), flush=True)
        print("imatmul and qconv rows count integer multiply-adds (GOP/s) against the same\n"
              "FP32 peak;\n"
              "an int8 dot product (AVX-512 VNNI vpdpbusd) does four per lane, so their\n"
              "ceiling is about 4x that peak.\n"
              "GF/s count a direct convolution's multiply-adds; kiln computes stride-1 3x3\n"
              "convs of 64+ channels on maps of 8x8 and up as Winograd, F(4x4, 3x3) from\n"
              "28x28 on (4x fewer) and F(2x2, 3x3) below (2.25x fewer), so they can exceed\n"
              "the peak.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
