#!/usr/bin/env python3
"""Runs ONNX conformance folders on a cross target under emulation.

For each test id of a checked-in list (`<suite>/<folder>`, one a line), kiln
compiles the folder's model.onnx for the target with `--name model`; the
cross C toolchain links test/cross/harness.c against it; each data set's
inputs are written as raw bytes (in<i>.bin), the harness runs under QEMU and
writes out<i>.bin, and the outputs are compared with output_<i>.pb like
`kiln run --expect` does (NaN equals NaN; |actual - expected| <= atol + rtol
* |expected|; the tolerances of test/onnx-backend/tolerances.txt apply).

Targets:
  aarch64  kiln compile --target=aarch64-linux-gnu -o libmodel.so; the
           harness built by aarch64-linux-gnu-gcc; run by
           `qemu-aarch64 -L /usr/aarch64-linux-gnu`.
  m4       kiln compile --target=thumbv7em-none-eabihf --mcpu=cortex-m4
           -o model.o; the harness linked by arm-none-eabi-gcc with
           test/firmware's start-up code and linker script into an image for
           QEMU's mps2-an386 board, run by qemu-system-arm with semihosting
           (which also serves the harness's file reads and writes).

Every listed test must pass: the exit status is 0 when all do, 1 otherwise.
A model with string tensors passes when kiln refuses it for the target
with its reason (they need kiln's C runtime, which is host-only).
Prints one line per failure and ends with `N passed, M failed`.

Usage: conformance.py KILN --target aarch64|m4 --list FILE [--work DIR]
           [--jobs N] [--timeout S] [--data DIR] [--mattr FEATURES] [-v]

--data reads the folders from DIR instead of libonnx-testdata's (kiln's
own tests written in the same layout); --mattr adds target features.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "test", "onnx-backend"))
import conformance as host_conformance  # noqa: E402  (read_list, tolerances)

DATA = "/usr/share/libonnx-testdata/data"
M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
            "-mfpu=fpv4-sp-d16"]


class Target:
    """How to compile, link and run one test on a cross target."""

    def __init__(self, name, work):
        self.name = name
        self.work = work
        if name == "aarch64":
            self.kiln_args = ["--target=aarch64-linux-gnu"]
            self.library = "libmodel.so"
        else:
            self.kiln_args = ["--target=thumbv7em-none-eabihf",
                              "--mcpu=cortex-m4"]
            self.library = "model.o"

    def prepare(self):
        """Compiles the parts shared by every test."""
        include = "-I" + os.path.join(SRC, "runtime", "include")
        harness = os.path.join(HERE, "harness.c")
        if self.name == "aarch64":
            self.objects = [os.path.join(self.work, "harness.o")]
            check([
                "aarch64-linux-gnu-gcc", "-std=c11", "-O2", "-Wall", include,
                "-c", harness, "-o", self.objects[0]])
            return
        fw = os.path.join(SRC, "test", "firmware")
        self.objects = []
        for src in (harness, os.path.join(fw, "startup.c")):
            obj = os.path.join(self.work, os.path.basename(src) + ".o")
            check(["arm-none-eabi-gcc"] + M4_FLAGS + [
                "-std=c11", "-O2", "-Wall", include, "-c", src, "-o", obj])
            self.objects.append(obj)
        self.linker_script = os.path.join(fw, "mps2-an386.ld")

    def link(self, folder):
        lib = os.path.join(folder, self.library)
        exe = os.path.join(folder, "run")
        if self.name == "aarch64":
            return ["aarch64-linux-gnu-gcc"] + self.objects + [
                "-L" + folder, "-lmodel", "-Wl,-rpath," + folder, "-o", exe]
        return ["arm-none-eabi-gcc"] + M4_FLAGS + [
            "--specs=rdimon.specs", "-Wl,-z,noexecstack",
            "-T", self.linker_script] + self.objects + [lib, "-o", exe]

    def run(self, folder, data_dir):
        exe = os.path.join(folder, "run")
        if self.name == "aarch64":
            return ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", exe,
                    data_dir]
        return ["qemu-system-arm", "-machine", "mps2-an386", "-nographic",
                "-monitor", "none", "-serial", "none",
                "-semihosting-config",
                "enable=on,target=native,arg=run,arg=" + data_dir,
                "-kernel", exe]


def check(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.exit("conformance.py: %s failed:\n%s"
                 % (" ".join(cmd), p.stdout.decode(errors="replace")))


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def read_tensor(path, bfloat16=False):
    """The tensor in a TensorProto file. bfloat16 tensors (`bfloat16`: the
    model says so, whatever type the file has; ONNX 1.12's data stores some
    as uint16) become BFloat16."""
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    x = numpy_helper.to_array(t)
    if bfloat16 or t.data_type == TensorProto.BFLOAT16:
        x = BFloat16(x.astype(np.uint16))
    return x


class BFloat16(np.ndarray):
    """bfloat16 values kept as their uint16 bits (what the model reads and
    writes), compared as float32."""

    def __new__(cls, bits):
        return np.asarray(bits, dtype=np.uint16).view(cls)

    def as_float32(self):
        return (np.asarray(self, dtype=np.uint32) << 16).view(np.float32)


def compare(actual_bytes, expected, rtol, atol):
    """'' when the raw output matches `expected`, else why not."""
    if len(actual_bytes) != expected.nbytes:
        return "%d bytes, expected %d" % (len(actual_bytes), expected.nbytes)
    actual = np.frombuffer(actual_bytes, dtype=expected.dtype).reshape(
        expected.shape)
    if isinstance(expected, BFloat16):
        actual = BFloat16(actual).as_float32()
        expected = expected.as_float32()
    if expected.dtype.kind in "fc":
        a = actual.astype(np.float64)
        e = expected.astype(np.float64)
        with np.errstate(invalid="ignore"):  # inf - inf
            ok = np.isnan(a) & np.isnan(e)
            ok |= np.abs(a - e) <= atol + rtol * np.abs(e)
            ok |= a == e  # equal infinities
    else:
        ok = actual == expected
    bad = int(np.size(ok) - np.count_nonzero(ok))
    if bad == 0:
        return ""
    i = int(np.flatnonzero(~np.asarray(ok).reshape(-1))[0])
    return "%d of %d elements differ (first at %d: %r, expected %r)" % (
        bad, np.size(ok), i, actual.reshape(-1)[i], expected.reshape(-1)[i])


def numbered(ds, prefix):
    return host_conformance.numbered(ds, prefix)


def graph_io(model):
    """Names of the graph inputs that are not initializers, in order, and
    for each output whether it is bfloat16."""
    m = onnx.load(model, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    bf16 = [o.type.tensor_type.elem_type == TensorProto.BFLOAT16
            for o in m.graph.output]
    return names, bf16


# String tensors need kiln's C runtime, which it has for the host only: on
# a cross target their models must be refused with this reason instead.
STRINGS_REFUSED = "string tensors need kiln's C runtime"


def uses_strings(model):
    """Whether the model has a string tensor (graph value, cast or op)."""
    m = onnx.load(model, load_external_data=False)
    g = m.graph
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TensorProto.STRING:
            return True
    for node in g.node:
        if node.op_type == "StringNormalizer":
            return True
        for a in node.attribute:
            if a.name == "to" and a.i == TensorProto.STRING:
                return True
    return False


def run_test(kiln, target, test_id, tol, timeout):
    """(passed, reason) for one conformance folder; a model with string
    tensors passes when kiln refuses it for the target, saying why (reason
    "refused: ...")."""
    src = os.path.join(DATA, test_id)
    model = os.path.join(src, "model.onnx")
    if uses_strings(model):
        cmd = [kiln, "compile", model, "-q", "--name", "model", "-o",
               os.path.join(target.work, test_id.replace("/", "__") + "." +
                            target.library.split(".")[-1])] + target.kiln_args
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        text = p.stdout.decode(errors="replace")
        if p.returncode == 1 and STRINGS_REFUSED in text:
            return True, "refused: string tensors are host-only"
        return False, "a model with string tensors was not refused: exit %d: %s" % (
            p.returncode, first_line(text))
    folder = os.path.join(target.work, test_id.replace("/", "__"))
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    sets = sorted(d for d in os.listdir(src) if d.startswith("test_data_set_"))
    if not sets:
        return False, "no test_data_set_* folder"
    names, bf16_outputs = graph_io(model)
    for ds in sets:
        inputs = [read_tensor(f)
                  for f in numbered(os.path.join(src, ds), "input")]
        # Like `kiln run`: the data set's shapes pin the graph's inputs.
        compile_cmd = [kiln, "compile", model, "-q", "--name", "model", "-o",
                       os.path.join(folder, target.library)] + target.kiln_args
        for name, x in zip(names, inputs):
            if x.ndim:
                compile_cmd.append("--input-shape=%s=%s" % (
                    name, "x".join(str(d) for d in x.shape)))
        for what, cmd in (("compile", compile_cmd),
                          ("link", target.link(folder))):
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=timeout)
            except subprocess.TimeoutExpired:
                return False, "%s: timed out after %g s" % (what, timeout)
            if p.returncode != 0:
                return False, "%s: %s" % (
                    what, first_line(p.stdout.decode(errors="replace")))
        data_dir = os.path.join(folder, ds)
        os.makedirs(data_dir)
        for i, x in enumerate(inputs):
            with open(os.path.join(data_dir, "in%d.bin" % i), "wb") as out:
                out.write(np.ascontiguousarray(x).tobytes())
        try:
            p = subprocess.run(target.run(folder, data_dir), cwd=folder,
                               stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, "%s: timed out after %g s" % (ds, timeout)
        if p.returncode != 0:
            return False, "%s: run: exit %d: %s" % (
                ds, p.returncode, first_line(p.stdout.decode(errors="replace")))
        for i, f in enumerate(numbered(os.path.join(src, ds), "output")):
            path = os.path.join(data_dir, "out%d.bin" % i)
            if not os.path.exists(path):
                return False, "%s: no output %d" % (ds, i)
            with open(path, "rb") as out:
                bf16 = i < len(bf16_outputs) and bf16_outputs[i]
                why = compare(out.read(), read_tensor(f, bf16),
                              tol.get("rtol", 1e-3), tol.get("atol", 1e-5))
            if why:
                return False, "%s: output %d: %s" % (ds, i, why)
    return True, ""


def main():
    global DATA
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("--target", choices=["aarch64", "m4"], required=True)
    ap.add_argument("--list", required=True)
    ap.add_argument("--work", help="scratch folder (default: a temporary "
                    "one, removed afterwards)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--data", default=DATA,
                    help="where the listed folders are (default: %(default)s)")
    ap.add_argument("--mattr", help="target features for kiln, e.g. +dotprod")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    DATA = args.data

    kiln = os.path.abspath(args.kiln)
    ids = host_conformance.read_list(args.list)
    tolerances = host_conformance.read_tolerances(
        host_conformance.TOLERANCES)
    work = args.work or tempfile.mkdtemp(prefix="kiln-cross-")
    os.makedirs(work, exist_ok=True)
    target = Target(args.target, os.path.abspath(work))
    if args.mattr:
        target.kiln_args.append("--mattr=" + args.mattr)
    target.prepare()
    print("running %d tests on %s, %d jobs" % (len(ids), args.target,
                                               args.jobs))
    failed = []
    refused = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_test, kiln, target, t,
                               tolerances.get(t, {}), args.timeout): t
                   for t in ids}
        for future in concurrent.futures.as_completed(futures):
            t = futures[future]
            passed, reason = future.result()
            if not passed:
                failed.append(t)
                print("FAIL %s: %s" % (t, reason))
            elif reason.startswith("refused"):
                refused += 1
                if args.verbose:
                    print("refused as expected %s: %s" % (t, reason))
            elif args.verbose:
                print("pass %s" % t)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed (of the passed, %d refused as they should "
          "be: string tensors are host-only)" % (len(ids) - len(failed),
                                                  len(failed), refused))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
