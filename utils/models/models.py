#!/usr/bin/python3
"""The model suite: real networks exported by Debian's torch, compiled by
kiln and checked against torch's own outputs.

    python3 utils/models/models.py KILN [--models a,b,...] [--work DIR] [--json F]
                                        [--dynamic-batch N] [--dynamic-seq L,...]
                                        [--dynamic-hw HxW,...] [--half]

For each model: export with random weights (torch.manual_seed(0), opset 17,
eval mode) to WORK/NAME.onnx with one random input and torch's output (as
.npy), then `kiln compile` (timed, with the compiler's peak memory) and
`kiln run --input ... --expect ...` (rtol 1e-3, atol 1e-4; the max error
must also be within 1e-3 of the outputs' largest magnitude). Exports are
cached in WORK; nothing is downloaded (weights are random). Prints a table
(compile seconds, compiler peak MiB, max abs error) and exits non-zero if
any model fails.

With --dynamic-batch N the models are exported with a symbolic batch dim
(dynamic_axes {0: "batch"} on the input and output), compiled without
--input-shape (kiln's dynamic batch: one item at a time), and run on a
random input of N items against torch's output for the same N.

With --dynamic-seq L1,L2,... the sequence models (bert_encoder) are
exported with a symbolic sequence length (dynamic_axes {1: "seq"} on the
input), compiled once without --input-shape, and the one library is run
at each length against torch's output for that length. With both, they
are exported with a symbolic batch and length (dynamic_axes {0: "batch",
1: "seq"}) and run on N items at each length.

With --dynamic-hw H1xW1,... the CNNs are exported with a symbolic height
and width (dynamic_axes {2: "H", 3: "W"} on the input), compiled once
without --input-shape, and the one library is run at each size against
torch's output for that size.

With --half each export is converted to a float16 model (to_half:
weights, Constants, graph inputs, outputs and value_infos, Casts to
float), run on the input rounded to float16 and checked against torch's
float32 output within 1e-2 of the outputs' scale (float16 rounds each
op's result to 11 bits). Not for models whose outputs are below
float16's range (mobilenet_v2's random-weight outputs are ~1e-9).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

RTOL, ATOL = 1e-3, 1e-4
HALF_RTOL = 1e-2


def to_half(src, dst):
    """`src` as a float16 model: float32 initializers, Constants, graph
    inputs, outputs and value_infos, and Casts to float32, in float16."""
    import onnx
    from onnx import TensorProto, numpy_helper
    m = onnx.load(src)
    g = m.graph
    half = lambda t: numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            g.initializer[i].CopyFrom(half(t))
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(half(a.t))
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    onnx.save(m, dst)


def bert_encoder():
    import torch
    from torch import nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(30522, 256)
            layer = nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True,
                                               activation="gelu")
            self.encoder = nn.TransformerEncoder(layer, 4)
            self.head = nn.Linear(256, 2)

        def forward(self, ids):
            return self.head(self.encoder(self.embed(ids))[:, 0])

    return Encoder(), torch.randint(0, 30522, (1, 128), dtype=torch.int64)


def torchvision_model(name):
    def make():
        import torch
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        return model, torch.randn(1, 3, 224, 224)
    return make


def segmentation_model(name):
    """A torchvision segmentation network (5 classes) returning its "out"
    map: upsampled to the input's size with `interpolate(size=...)`."""
    def make():
        import torch
        import torchvision

        class Out(torch.nn.Module):
            def __init__(self, model):
                super().__init__()
                self.model = model

            def forward(self, x):
                return self.model(x)["out"]
        model = getattr(torchvision.models.segmentation, name)(
            weights=None, weights_backbone=None, num_classes=5)
        return Out(model), torch.randn(1, 3, 224, 224)
    return make


# name -> builder returning (module, example input).
MODELS = {
    "resnet18": torchvision_model("resnet18"),
    "resnet50": torchvision_model("resnet50"),
    "mobilenet_v2": torchvision_model("mobilenet_v2"),
    "mobilenet_v3_small": torchvision_model("mobilenet_v3_small"),
    "efficientnet_b0": torchvision_model("efficientnet_b0"),
    "squeezenet1_1": torchvision_model("squeezenet1_1"),
    "convnext_tiny": torchvision_model("convnext_tiny"),
    "vit_b_16": torchvision_model("vit_b_16"),
    "bert_encoder": bert_encoder,
    "lraspp_mobilenet_v3": segmentation_model("lraspp_mobilenet_v3_large"),
}


# Models whose input's dim 1 is a sequence length.
SEQUENCE_MODELS = {"bert_encoder"}


def cached(onnx_path, pairs):
    """Whether an export and all its (input, output) pairs exist."""
    return all(os.path.exists(p) for p in [onnx_path] + [q for pair in pairs for q in pair])


def export_with_axes(name, onnx_path, dynamic_axes):
    """Exports MODELS[name] (torch.manual_seed(0), eval mode, opset 17) to
    `onnx_path` with `dynamic_axes`; returns the module and its example
    input."""
    import inspect
    import torch
    torch.manual_seed(0)
    model, x = MODELS[name]()
    model.eval()
    kwargs = dict(opset_version=17, input_names=["input"], output_names=["output"],
                  dynamic_axes=dynamic_axes)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    # With gradients enabled torch takes the exportable (not the fused
    # "fast path") attention of nn.TransformerEncoderLayer.
    with torch.enable_grad():
        torch.onnx.export(model, x, onnx_path, **kwargs)
    return model, x


def export_seq(name, work, lengths, batch=None):
    """WORK/NAME.seq.onnx with a symbolic sequence length, and for each
    length L an input WORK/NAME.seqL.input.npy and torch's output (cached);
    with `batch`, a symbolic batch dim too (WORK/NAME.bseq.onnx) and inputs
    of `batch` items (WORK/NAME.bN.seqL.*)."""
    onnx_path = os.path.join(work, name + (".bseq.onnx" if batch else ".seq.onnx"))
    stem = name if batch is None else "%s.b%d" % (name, batch)
    pairs = [(os.path.join(work, "%s.seq%d.input.npy" % (stem, n)),
              os.path.join(work, "%s.seq%d.output.npy" % (stem, n))) for n in lengths]
    if cached(onnx_path, pairs):
        return onnx_path, pairs
    import torch
    axes = {"input": {1: "seq"}}
    if batch is not None:
        axes = {"input": {0: "batch", 1: "seq"}, "output": {0: "batch"}}
    model, x = export_with_axes(name, onnx_path, axes)
    for n, (in_path, out_path) in zip(lengths, pairs):
        torch.manual_seed(n)
        ids = torch.randint(0, int(x.max()) + 1, (batch or x.shape[0], n))
        with torch.no_grad():
            y = model(ids)
        np.save(in_path, ids.numpy())
        np.save(out_path, y.numpy())
    return onnx_path, pairs


def export_hw(name, work, sizes):
    """WORK/NAME.hw.onnx with a symbolic height and width (dynamic_axes
    {2: "H", 3: "W"} on the input), and for each (H, W) an input
    WORK/NAME.HxW.input.npy and torch's output (cached)."""
    onnx_path = os.path.join(work, name + ".hw.onnx")
    pairs = [(os.path.join(work, "%s.%dx%d.input.npy" % (name, h, w)),
              os.path.join(work, "%s.%dx%d.output.npy" % (name, h, w))) for h, w in sizes]
    if cached(onnx_path, pairs):
        return onnx_path, pairs
    import torch
    model, _ = export_with_axes(name, onnx_path, {"input": {2: "H", 3: "W"}})
    for (h, w), (in_path, out_path) in zip(sizes, pairs):
        torch.manual_seed(h * 1000 + w)
        x = torch.randn(1, 3, h, w)
        with torch.no_grad():
            y = model(x)
        np.save(in_path, x.numpy())
        np.save(out_path, y.numpy())
    return onnx_path, pairs


def export(name, work, batch=None):
    """WORK/NAME.onnx, NAME.input.npy and NAME.output.npy (cached); with
    `batch`, a symbolic batch dim and an input of `batch` items
    (WORK/NAME.bN.*)."""
    stem = name if batch is None else "%s.b%d" % (name, batch)
    onnx_path = os.path.join(work, stem + ".onnx")
    in_path = os.path.join(work, stem + ".input.npy")
    out_path = os.path.join(work, stem + ".output.npy")
    if all(os.path.exists(p) for p in (onnx_path, in_path, out_path)):
        return onnx_path, in_path, out_path
    import inspect
    import torch
    torch.manual_seed(0)
    model, x = MODELS[name]()
    # Some initialisations zero a whole weight (vit_b_16's classifier head),
    # which would make every output 0 and the comparison vacuous.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0.0, 0.02)
    model.eval()
    if batch is not None:
        # The same distribution as the single example, `batch` items.
        torch.manual_seed(1)
        if x.dtype == torch.int64:
            x = torch.randint(0, int(x.max()) + 1, (batch,) + tuple(x.shape[1:]))
        else:
            x = torch.randn((batch,) + tuple(x.shape[1:]))
    with torch.no_grad():
        y = model(x)
    kwargs = dict(opset_version=17, input_names=["input"],
                  output_names=["output"])
    if batch is not None:
        kwargs["dynamic_axes"] = {"input": {0: "batch"}, "output": {0: "batch"}}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    # With gradients enabled torch takes the exportable (not the fused
    # "fast path") attention of nn.TransformerEncoderLayer/MultiheadAttention.
    with torch.enable_grad():
        torch.onnx.export(model, x, onnx_path, **kwargs)
    np.save(in_path, x.numpy())
    np.save(out_path, y.numpy())
    return onnx_path, in_path, out_path


def peak_rss_mib(before):
    """Peak RSS of the children waited for since `before` (ru_maxrss is
    the maximum over all of them, so run one child at a time)."""
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(after, before) / 1024.0


def check(kiln, name, work, batch=None, lengths=None, sizes=None, half=False):
    if sizes:
        onnx_path, pairs = export_hw(name, work, sizes)
    elif lengths:
        onnx_path, pairs = export_seq(name, work, lengths, batch)
    else:
        onnx_path, in_path, out_path = export(name, work, batch)
        pairs = [(in_path, out_path)]
    row = {"model": name}
    rtol = HALF_RTOL if half else RTOL
    with tempfile.TemporaryDirectory(prefix="kiln-models-") as tmp:
        if half:
            # The float16 model, its input rounded to float16, and torch's
            # float32 output (compared below, against its scale).
            half_path = os.path.join(tmp, name + ".f16.onnx")
            to_half(onnx_path, half_path)
            onnx_path = half_path
            halved = []
            for k, (in_path, out_path) in enumerate(pairs):
                x = np.load(in_path)
                if x.dtype == np.float32:
                    in_path = os.path.join(tmp, "input%d.f16.npy" % k)
                    np.save(in_path, x.astype(np.float16))
                halved.append((in_path, out_path))
            pairs = halved
        lib = os.path.join(tmp, "lib%s.so" % name)
        # A fresh process tree for the compile, so that its peak is its own.
        start = time.monotonic()
        p = subprocess.run(
            [sys.executable, "-c",
             "import resource,subprocess,sys\n"
             "r=subprocess.run(sys.argv[1:])\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "sys.exit(r.returncode)",
             kiln, "compile", onnx_path, "-o", lib],
            capture_output=True, text=True)
        row["compile_s"] = round(time.monotonic() - start, 2)
        try:
            row["compile_peak_mib"] = round(int(p.stdout.split()[-1]) / 1024.0, 1)
        except (ValueError, IndexError):
            row["compile_peak_mib"] = None
        if p.returncode != 0:
            row["status"] = "compile-error"
            row["reason"] = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
            return row
        row["run_s"] = 0.0
        row["status"] = "pass"
        # One library for every input (one per sequence length with
        # --dynamic-seq); the row keeps the worst error.
        for k, (in_path, out_path) in enumerate(pairs):
            saved = os.path.join(tmp, "out%d" % k)
            start = time.monotonic()
            # float16 outputs are compared here, against the output's scale
            # (kiln run compares like with like).
            expect = [] if half else ["--expect", out_path, "--rtol", repr(RTOL),
                                      "--atol", repr(ATOL)]
            r = subprocess.run([kiln, "run", lib, "--input", in_path, "--save-outputs", saved] +
                               expect, capture_output=True, text=True)
            row["run_s"] = round(row["run_s"] + time.monotonic() - start, 2)
            got_path = os.path.join(saved, "output.npy")
            err = scale = rel = None
            if os.path.exists(got_path):
                got, want = np.load(got_path), np.load(out_path)
                err = float(np.max(np.abs(got.astype(np.float64) - want)))
                # Random weights can make a network's outputs tiny
                # (mobilenet_v2: ~1e-9), where atol alone checks nothing: the
                # error must also be small against the outputs' own scale.
                scale = float(np.max(np.abs(want)))
                rel = err / scale if scale > 0 else err
                if rel >= row.get("rel_err", -1.0):
                    row.update(max_abs_err=err, max_abs_output=scale, rel_err=rel)
            # An all-zero reference would make the comparison vacuous.
            ok = r.returncode == 0 and rel is not None and rel <= rtol and scale > 0.0
            if not ok:
                row["status"] = "mismatch"
                row["reason"] = (r.stderr.strip() or r.stdout.strip()).splitlines()[-1:] or \
                    ["error %.3g of output scale %.3g" % (err if err is not None else -1,
                                                          scale if scale is not None else -1)]
                break
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated subset of: " + ", ".join(MODELS))
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "kiln-models"),
                    help="where exports are cached")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument("--dynamic-batch", type=int, metavar="N",
                    help="export with a symbolic batch dim, run N items")
    ap.add_argument("--dynamic-seq", metavar="L,...",
                    help="export the sequence models with a symbolic sequence length, "
                         "compile once, run at each length")
    ap.add_argument("--half", action="store_true",
                    help="run each model as a float16 model (rtol 1e-2 of the output scale)")
    ap.add_argument("--dynamic-hw", metavar="HxW,...",
                    help="export the CNNs with a symbolic height and width, compile once, "
                         "run at each size")
    args = ap.parse_args()
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error("unknown models: " + ", ".join(unknown))
    lengths = None
    if args.dynamic_seq:
        try:
            lengths = [int(n) for n in args.dynamic_seq.split(",")]
        except ValueError:
            ap.error("--dynamic-seq takes comma-separated lengths")
        if not lengths or min(lengths) < 1:
            ap.error("--dynamic-seq lengths must be at least 1")
        if any(n not in SEQUENCE_MODELS for n in names):
            if args.models != ",".join(MODELS):
                ap.error("--dynamic-seq applies to the sequence models only: " +
                         ", ".join(sorted(SEQUENCE_MODELS)))
            names = [n for n in names if n in SEQUENCE_MODELS]
    sizes = None
    if args.dynamic_hw:
        try:
            sizes = [tuple(int(v) for v in hw.split("x")) for hw in args.dynamic_hw.split(",")]
        except ValueError:
            sizes = None
        if not sizes or any(len(hw) != 2 or min(hw) < 1 for hw in sizes):
            ap.error("--dynamic-hw takes comma-separated sizes HxW of at least 1x1")
        if args.dynamic_batch or lengths:
            ap.error("--dynamic-hw does not combine with --dynamic-batch or --dynamic-seq")
        if any(n in SEQUENCE_MODELS for n in names):
            if args.models != ",".join(MODELS):
                ap.error("--dynamic-hw applies to the CNNs only")
            names = [n for n in names if n not in SEQUENCE_MODELS]
    os.makedirs(args.work, exist_ok=True)
    rows = []
    print("%-20s %-10s %10s %10s %8s %12s %10s" % ("model", "status", "compile s",
                                                   "peak MiB", "run s", "max abs err",
                                                   "/ |y|max"))
    for name in names:
        row = check(args.kiln, name, args.work, args.dynamic_batch, lengths, sizes, args.half)
        rows.append(row)
        err = row.get("max_abs_err")
        rel = row.get("rel_err")
        print("%-20s %-10s %10s %10s %8s %12s %10s" % (
            name, row["status"], row.get("compile_s", ""),
            row.get("compile_peak_mib", ""), row.get("run_s", ""),
            "%.3g" % err if err is not None else "-",
            "%.2g" % rel if rel is not None else "-"), flush=True)
        if row["status"] != "pass" and row.get("reason"):
            print("    " + str(row["reason"]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    failed = [r["model"] for r in rows if r["status"] != "pass"]
    if failed:
        print("failed: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
