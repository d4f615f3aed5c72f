#!/usr/bin/python3
"""Mutated ONNX models against `kiln compile`: every one must compile or be
refused with an error (exit 1), never crash, hang or exit otherwise.

    python3 utils/fuzz_models.py KILN [--seconds 600] [--seed 0] [--jobs 2]
        [--filter RE] [--keep DIR] [--target TRIPLE] [--newer-opsets]

Takes the ONNX conformance models (/usr/share/libonnx-testdata/data/node,
those matching --filter), and for each trial one model with one to three
random mutations of what a model file can say wrongly:

  - an attribute's integer(s) set to 0, -1, a large or a random value, or a
    list attribute shortened or lengthened;
  - a graph input's declared dim changed (0, 1, a random size, symbolic) or
    its rank changed, or its element type;
  - an initializer's dims changed without its data (a size that disagrees
    with the bytes) or its data type;
  - a node's input dropped, repeated or renamed to a tensor nobody makes;
  - a node's op type swapped for another node's;
  - the model's default opset raised to 18..24 (read in opset-17 forms by
    the importer), with a node made one of the ops new since 17 or given
    one of the attributes added since 17 at an odd value;
  - one to three nodes moved into a model-local function the graph calls
    (attributes from the call at random), sometimes with a defect (an
    input dropped, a call of itself, a name it does not have, another
    opset).

Each mutated model is compiled (to a shared library, or with --target to
an object; --target=cuda to a library with its PTX) under a 120-second limit (kiln gives ONNX's inference 60). A
run that dies of a signal, exits with a code other than 0 or 1, exits 1
without a message or hits the limit is a finding: the model
is kept under --keep (default /tmp/kiln-fuzz) with the command and its
output. With --newer-opsets every trial also gets the opset mutation.
Prints a summary; exit status 1 if anything was found.
"""

import argparse
import concurrent.futures
import copy
import os
import random
import re
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto

DATA = "/usr/share/libonnx-testdata/data/node"

ELEMENT_TYPES = [TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT64,
                 TensorProto.INT32, TensorProto.INT8, TensorProto.UINT8, TensorProto.BOOL,
                 TensorProto.STRING, TensorProto.BFLOAT16, TensorProto.COMPLEX64]


def odd_int(rng):
    return rng.choice([0, -1, 1, 2, 3, -7, 1 << 31, (1 << 62) + 3, rng.randint(-100, 100)])


def mutate_attribute(model, rng):
    attrs = [a for n in model.graph.node for a in n.attribute
             if a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS,
                           onnx.AttributeProto.FLOAT, onnx.AttributeProto.STRING)]
    if not attrs:
        return False
    a = rng.choice(attrs)
    if a.type == onnx.AttributeProto.INT:
        a.i = odd_int(rng)
    elif a.type == onnx.AttributeProto.INTS:
        choice = rng.random()
        if choice < 0.3 and len(a.ints):
            del a.ints[-1]
        elif choice < 0.5:
            a.ints.append(odd_int(rng))
        elif len(a.ints):
            a.ints[rng.randrange(len(a.ints))] = odd_int(rng)
        else:
            a.ints.append(odd_int(rng))
    elif a.type == onnx.AttributeProto.FLOAT:
        a.f = rng.choice([0.0, -1.0, float("inf"), float("nan"), 1e30])
    else:
        a.s = rng.choice([b"", b"bogus", b"NOTSET", b"\xff\xfe"])
    return True


def mutate_input(model, rng):
    inputs = [i for i in model.graph.input if i.type.HasField("tensor_type")]
    if not inputs:
        return False
    t = rng.choice(inputs).type.tensor_type
    choice = rng.random()
    if choice < 0.2:
        t.elem_type = rng.choice(ELEMENT_TYPES)
    elif choice < 0.4:
        if len(t.shape.dim) and rng.random() < 0.5:
            del t.shape.dim[-1]
        else:
            t.shape.dim.add().dim_value = rng.choice([1, 2, 3])
    elif len(t.shape.dim):
        d = t.shape.dim[rng.randrange(len(t.shape.dim))]
        value = rng.choice([0, 1, 2, 7, 1 << 20, None, None])
        if value is None:
            # Two names: dims that vary together, or apart (a Reshape
            # merging them makes a product dim).
            d.dim_param = rng.choice(["n", "m"])
        else:
            d.dim_value = value
    else:
        return False
    return True


def mutate_initializer(model, rng):
    if not model.graph.initializer:
        return False
    init = rng.choice(model.graph.initializer)
    choice = rng.random()
    if choice < 0.5 and len(init.dims):
        i = rng.randrange(len(init.dims))
        init.dims[i] = rng.choice([0, 1, init.dims[i] + 1, init.dims[i] * 2])
    elif choice < 0.7:
        init.dims.append(rng.choice([1, 2]))
    else:
        init.data_type = rng.choice(ELEMENT_TYPES)
    return True


def mutate_node_inputs(model, rng):
    nodes = [n for n in model.graph.node if len(n.input)]
    if not nodes:
        return False
    n = rng.choice(nodes)
    choice = rng.random()
    if choice < 0.35:
        del n.input[rng.randrange(len(n.input))]
    elif choice < 0.7:
        n.input.append(rng.choice(list(n.input)))
    else:
        n.input[rng.randrange(len(n.input))] = "nobody_makes_this"
    return True


def mutate_op_type(model, rng, op_types):
    if not model.graph.node:
        return False
    rng.choice(model.graph.node).op_type = rng.choice(op_types)
    return True


# Ops and attributes new since opset 17 (compiler/Importer/NewerOpsets.cpp).
NEWER_OPS = ["Gelu", "Mish", "GroupNormalization", "BitwiseAnd", "BitwiseNot", "Col2Im",
             "CenterCropPad", "DeformConv", "AffineGrid", "RMSNormalization", "RotaryEmbedding",
             "Attention", "Swish", "TensorScatter"]
NEWER_INT_ATTRS = ["num_outputs", "noop_with_empty_axes", "antialias", "saturate", "block_size",
                   "output_dtype", "ceil_mode", "num_groups", "stash_type", "precision",
                   "is_causal", "q_num_heads", "kv_num_heads", "num_heads", "interleaved",
                   "rotary_embedding_dim", "mode"]
NEWER_INTS_ATTRS = ["axes", "dilations"]


def mutate_newer_opset(model, rng):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = rng.randint(18, 24)
    if not model.graph.node or rng.random() < 0.3:
        return True
    n = rng.choice(model.graph.node)
    if rng.random() < 0.4:
        n.op_type = rng.choice(NEWER_OPS)
    elif rng.random() < 0.7:
        a = n.attribute.add()
        a.name = rng.choice(NEWER_INT_ATTRS)
        a.type = onnx.AttributeProto.INT
        a.i = odd_int(rng)
    else:
        a = n.attribute.add()
        a.name = rng.choice(NEWER_INTS_ATTRS)
        a.type = onnx.AttributeProto.INTS
        a.ints.extend(odd_int(rng) for _ in range(rng.randint(0, 3)))
    return True


def mutate_local_function(model, rng, defects=True):
    """Moves one to three nodes into a model-local function that the graph
    calls, their attributes taken from the call's at random; sometimes
    also a defect: an input dropped, the function calling itself, a body
    reading a name it has not, another opset."""
    g = model.graph
    if not g.node:
        return False
    i = rng.randrange(len(g.node))
    k = rng.randint(1, min(3, len(g.node) - i))
    body = [copy.deepcopy(n) for n in g.node[i:i + k]]
    produced = [o for n in body for o in n.output if o]
    reads = []
    for n in body:
        for x in n.input:
            if x and x not in produced and x not in reads:
                reads.append(x)
    rename = {x: "in%d" % j for j, x in enumerate(reads)}
    rename.update({o: "out%d" % j for j, o in enumerate(produced)})
    f = onnx.FunctionProto()
    f.name, f.domain = "Fn%d" % len(model.functions), "fuzz.fn"
    f.input.extend(rename[x] for x in reads)
    f.output.extend(rename[o] for o in produced)
    call = onnx.NodeProto()
    call.op_type, call.domain, call.name = f.name, f.domain, "call%d" % i
    call.input.extend(reads)
    call.output.extend(produced)
    for n in body:
        n.input[:] = [rename.get(x, x) for x in n.input]
        n.output[:] = [rename.get(o, o) for o in n.output]
        for a in n.attribute:
            if rng.random() < 0.5 and not a.ref_attr_name:
                given = call.attribute.add()
                given.CopyFrom(a)
                given.name = "%s_%s" % (n.op_type, a.name)
                kind = a.type
                a.Clear()
                a.name, a.type, a.ref_attr_name = given.name.split("_", 1)[1], kind, given.name
                f.attribute.append(given.name)
    f.node.extend(body)
    default = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    f.opset_import.add(domain="", version=default[0] if default else 17)
    defect = rng.random() if defects else 1
    if defect < 0.05 and call.input:
        del call.input[-1]
    elif defect < 0.08:
        f.node.add(op_type=f.name, domain=f.domain, input=list(f.input[:1]), output=["again"])
        f.opset_import.add(domain=f.domain, version=1)
    elif defect < 0.11 and f.node:
        f.node[0].input.append("nowhere")
    elif defect < 0.13:
        f.opset_import[0].version = rng.randint(1, 23)
    del g.node[i:i + k]
    g.node.insert(i, call)
    if not any(o.domain == "fuzz.fn" for o in model.opset_import):
        model.opset_import.add(domain="fuzz.fn", version=1)
    model.functions.append(f)
    return True


def mutate(model, rng, op_types, newer=False):
    m = copy.deepcopy(model)
    done = mutate_newer_opset(m, rng) if newer else 0
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        if kind < 0.35:
            done += mutate_attribute(m, rng)
        elif kind < 0.6:
            done += mutate_input(m, rng)
        elif kind < 0.75:
            done += mutate_initializer(m, rng)
        elif kind < 0.85:
            done += mutate_node_inputs(m, rng)
        elif kind < 0.9:
            done += mutate_op_type(m, rng, op_types)
        elif kind < 0.95:
            done += mutate_local_function(m, rng)
        else:
            done += mutate_newer_opset(m, rng)
    return m if done else None


def trial(kiln, path, target, workdir):
    # A cross target's object; --target=cuda makes a host library.
    out = os.path.join(workdir, "out.o" if target and target != "cuda" else "out.so")
    cmd = [kiln, "compile", path, "-o", out, "-q"]
    if target:
        cmd.append("--target=" + target)
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "timeout", cmd, ""
    text = p.stderr.decode(errors="replace")
    if p.returncode < 0:
        return "signal %d" % -p.returncode, cmd, text
    if p.returncode not in (0, 1):
        return "exit %d" % p.returncode, cmd, text
    if p.returncode == 1 and not text.strip():
        return "silent error", cmd, text
    return "ok" if p.returncode == 0 else "refused", cmd, text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default="")
    ap.add_argument("--keep", default="/tmp/kiln-fuzz")
    ap.add_argument("--target", default="")
    ap.add_argument("--newer-opsets", action="store_true")
    args = ap.parse_args()
    names = sorted(d for d in os.listdir(DATA) if re.search(args.filter, d))
    models = {}
    for d in names:
        path = os.path.join(DATA, d, "model.onnx")
        if os.path.exists(path) and os.path.getsize(path) < (1 << 20):
            try:
                models[d] = onnx.load(path)
            except Exception:
                pass
    op_types = sorted({n.op_type for m in models.values() for n in m.graph.node})
    rng = random.Random(args.seed)
    os.makedirs(args.keep, exist_ok=True)
    counts, findings = {}, []
    deadline = time.time() + args.seconds
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        serial = 0

        def next_job():
            nonlocal serial
            while True:
                name = rng.choice(sorted(models))
                m = mutate(models[name], rng, op_types, args.newer_opsets)
                if m is not None:
                    break
            serial += 1
            work = os.path.join(tmp, str(serial))
            os.makedirs(work)
            path = os.path.join(work, "model.onnx")
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            return pool.submit(trial, args.kiln, path, args.target, work), name, path

        running = [next_job() for _ in range(args.jobs * 2)]
        while running:
            future, name, path = running.pop(0)
            outcome, cmd, text = future.result()
            key = outcome.split()[0] if outcome.startswith("signal") else outcome
            counts[key] = counts.get(key, 0) + 1
            if outcome not in ("ok", "refused"):
                keep = os.path.join(args.keep, "%s-%d.onnx" % (name, len(findings)))
                os.replace(path, keep)
                with open(keep + ".txt", "w") as f:
                    f.write("%s\n%s\n%s\n" % (outcome, " ".join(cmd[:1] + ["compile", keep]
                                                           + cmd[3:]), text))
                findings.append((outcome, name, keep))
                print("FOUND %s: %s (%s)" % (outcome, name, keep), flush=True)
            else:
                os.remove(path)
            if time.time() < deadline:
                running.append(next_job())
    total = sum(counts.values())
    print("%d mutated models from %d conformance models: %s" % (
        total, len(models), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    print("%d findings%s" % (len(findings), " (kept in %s)" % args.keep if findings else ""))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
