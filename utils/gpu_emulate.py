#!/usr/bin/python3
"""Builds the device code of a --target=cuda library for the host, so that
its kernels run, slowly, on a machine without a GPU: a numerical check of
the GPU code generation (shared-memory tiles, barriers, atomics, fused
epilogues) against kiln's CPU results.

  KILN_DUMP_DEVICE_LLVM=m.ll kiln compile m.onnx --target=cuda -o libm.so
  python3 utils/gpu_emulate.py m.ll libm_emu.so
  KILN_CUDA_LIBRARY=libfakecuda.so FAKE_CUDA_EMULATE=libm_emu.so \\
      kiln run libm.so --input x.npy --expect y.npy

  python3 utils/gpu_emulate.py check KILN [--filter REGEX] [--jobs N] [--cpu-passing]
      the conformance tests that compile for the GPU (ptx-passing.txt),
      each run so against its expected outputs with the suite's
      tolerances: a line per test that does not pass, then the counts

The device LLVM IR (NVPTX) becomes host IR: address spaces dropped,
the special registers (threadIdx, blockIdx, blockDim, gridDim) and
__syncthreads() calls into gpu_emulate_runtime.c, each kernel given an
entry `emu_entry_K(void **params)` that takes cuLaunchKernel's parameter
array; clang compiles it with the runtime into one shared library, whose
emu_launch the stand-in driver (test/runtime/fake_cuda.c) calls.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

SPECIAL = re.compile(r"@llvm\.nvvm\.read\.ptx\.sreg\.(tid|ctaid|ntid|nctaid)\.([xyz])\b")
# Intrinsics the runtime implements: barriers, warp shuffles (both make a
# kernel's threads wait for each other), the TF32 rounding and the
# asynchronous copies into shared memory (cp.async, done when a wait lets
# them complete).
BARRIERS = {"@llvm.nvvm.barrier.cta.sync.aligned.all": ("@emu_barrier", "void", "i32"),
            "@llvm.nvvm.cp.async.ca.shared.global.4.s": ("@emu_cp_async_4", "void",
                                                         "ptr, ptr, i32"),
            "@llvm.nvvm.cp.async.commit.group": ("@emu_cp_async_commit", "void", ""),
            "@llvm.nvvm.cp.async.wait.group": ("@emu_cp_async_wait", "void", "i32"),
            "@llvm.nvvm.barrier0": ("@emu_barrier0", "void", ""),
            "@llvm.nvvm.shfl.sync.bfly.f32": ("@emu_shfl_bfly_f32", "float",
                                              "i32, float, i32, i32"),
            "@llvm.nvvm.shfl.sync.bfly.i32": ("@emu_shfl_bfly_i32", "i32", "i32, i32, i32, i32"),
            "@llvm.nvvm.f2tf32.rna": ("@emu_f2tf32_rna", "i32", "float")}
# mma.sync returns a struct: the runtime's function returns a pointer to
# its four floats instead (no aggregate in the C calling convention).
MMA = re.compile(r"^(\s*)(%[\w.]+) = (?:tail )?call \{ float, float, float, float \} "
                 r"@llvm\.nvvm\.mma\.m16n8k8\.row\.col\.tf32\((.*)\)(.*)$")


def split_params(text):
    """The parameters of a define's list, split at top-level commas."""
    params, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            params.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        params.append(cur.strip())
    return params


def to_host(ir):
    """The device IR as host IR, and the kernels with their parameter
    types."""
    out, kernels = [], []
    current = None  # The kernel whose body the lines are in.
    for line in ir.splitlines():
        if line.startswith(("target datalayout", "target triple")):
            continue
        if line.startswith("declare") and "@llvm.nvvm." in line:
            continue  # Declared again below, without the intrinsics' attributes.
        m = re.match(r"define (?:\w+ )*?ptx_kernel void @([\w.$]+)\((.*)\)(.*)\{$", line)
        if m:
            types = [p.split()[0] for p in split_params(m.group(2))]
            kernels.append([m.group(1), types, False])
            current = kernels[-1]
            line = line.replace("ptx_kernel ", "", 1)
        elif line == "}":
            current = None
        elif current and (MMA.match(line) or any(b in line for b in BARRIERS)):
            current[2] = True  # Its threads must run at once.
        line = re.sub(r" addrspace\(\d+\)", "", line)
        line = line.replace("addrspacecast", "bitcast")
        line = SPECIAL.sub(lambda s: "@emu_%s_%s" % (s.group(1), s.group(2)), line)
        mma = MMA.match(line)
        if mma:
            indent, result, args = mma.group(1), mma.group(2), mma.group(3)
            slot = "%emu.mma." + result[1:]
            out.append("%s%s = call ptr @emu_mma_m16n8k8_tf32(%s)" % (indent, slot, args))
            line = "%s%s = load { float, float, float, float }, ptr %s" % (indent, result, slot)
        for old, (new, _, _) in BARRIERS.items():
            line = re.sub(re.escape(old) + r"\b", new, line)
        out.append(line)
    text = "\n".join(out)
    left = sorted(set(re.findall(r"@llvm\.nvvm\.[\w.]+", text)))
    if left:
        raise SystemExit("gpu_emulate.py: NVVM intrinsics it cannot run: " + ", ".join(left))
    decls = ["declare i32 @emu_%s_%s()" % (r, d) for r in ("tid", "ctaid", "ntid", "nctaid")
             for d in "xyz"]
    decls += ["declare %s %s(%s)" % (ret, new, args) for new, ret, args in BARRIERS.values()]
    decls.append("declare ptr @emu_mma_m16n8k8_tf32(i32, i32, i32, i32, i32, i32, float, float, "
                 "float, float)")
    wrappers = []
    for name, types, _ in kernels:
        body = ["define void @emu_entry_%s(ptr %%args) {" % name]
        values = []
        for i, t in enumerate(types):
            body.append("  %%p%d = getelementptr ptr, ptr %%args, i64 %d" % (i, i))
            body.append("  %%a%d = load ptr, ptr %%p%d" % (i, i))
            body.append("  %%v%d = load %s, ptr %%a%d" % (i, t, i))
            values.append("%s %%v%d" % (t, i))
        body.append("  call void @%s(%s)" % (name, ", ".join(values)))
        body += ["  ret void", "}"]
        wrappers.append("\n".join(body))
    return text + "\n" + "\n".join(decls) + "\n" + "\n\n".join(wrappers) + "\n", kernels


def find_clang():
    for c in ("clang-22", "clang", "/usr/lib/llvm-22/bin/clang"):
        path = shutil.which(c) or (c if os.path.exists(c) else None)
        if path:
            return path
    raise SystemExit("gpu_emulate.py: no clang")


def build(ll_path, out_path, opt="-O1"):
    with open(ll_path) as f:
        host, kernels = to_host(f.read())
    with tempfile.TemporaryDirectory() as tmp:
        ll = os.path.join(tmp, "kernels.ll")
        with open(ll, "w") as f:
            f.write(host)
        table = os.path.join(tmp, "table.c")
        with open(table, "w") as f:
            f.write("typedef void (*entry_fn)(void **);\n")
            f.write("struct emu_kernel { const char *name; entry_fn entry; int sync; };\n")
            for name, _, _ in kernels:
                f.write("void emu_entry_%s(void **);\n" % name)
            f.write("const struct emu_kernel emu_kernels[] = {\n")
            for name, _, sync in kernels:
                f.write('  {"%s", emu_entry_%s, %d},\n' % (name, name, sync))
            f.write("  {0, 0}};\nconst int emu_num_kernels = %d;\n" % len(kernels))
        r = subprocess.run([find_clang(), opt, "-shared", "-fPIC", "-w", "-pthread", ll, table,
                            os.path.join(HERE, "gpu_emulate_runtime.c"),
                            # llvm.fma and friends become libm calls on the host.
                            "-lm", "-o", out_path],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit("gpu_emulate.py: clang failed:\n" + r.stderr[-3000:])
    return len(kernels)


def fake_driver(tmp):
    """The stand-in driver, built in `tmp`."""
    out = os.path.join(tmp, "libfakecuda.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1",
                    os.path.join(os.path.dirname(HERE), "test", "runtime", "fake_cuda.c"),
                    "-ldl", "-o", out], check=True)
    return out


def check_test(kiln, driver, folder, rtol, atol, timeout=300):
    """(status, reason) of one conformance test run on the emulated GPU."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "test", "onnx-backend"))
    import conformance
    import ptx_check
    with tempfile.TemporaryDirectory(prefix="kiln-emulate-") as tmp:
        ll, lib, emu = (os.path.join(tmp, f) for f in ("d.ll", "libm.so", "emu.so"))
        env = dict(os.environ, KILN_DUMP_DEVICE_LLVM=ll, TMPDIR=tmp)
        r = subprocess.run([kiln, "compile", os.path.join(folder, "model.onnx"),
                            "--target=cuda", "-o", lib, "-q"] + ptx_check.input_shapes(folder),
                           capture_output=True, text=True, env=env, timeout=timeout)
        if r.returncode != 0:
            return "compile-error", conformance.first_line(r.stderr)
        try:
            build(ll, emu)
        except SystemExit as ex:
            return "emulate-error", str(ex).splitlines()[0]
        env = dict(os.environ, KILN_CUDA_LIBRARY=driver, FAKE_CUDA_EMULATE=emu,
                   KILN_FAKE_CUDA_LOG=os.path.join(tmp, "log"), TMPDIR=tmp)
        for ds in sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_")):
            cmd = [kiln, "run", lib, "--rtol", repr(rtol), "--atol", repr(atol)]
            for f in conformance.numbered(os.path.join(folder, ds), "input"):
                cmd += ["--input", f]
            for f in conformance.numbered(os.path.join(folder, ds), "output"):
                cmd += ["--expect", f]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp,
                                   timeout=timeout)
            except subprocess.TimeoutExpired:
                return "timeout", "%s: over %d s" % (ds, timeout)
            if r.returncode != 0:
                both = r.stderr + "\n" + r.stdout
                return ("mismatch" if r.returncode == 1 else "crash"), "%s: %s" % (
                    ds, conformance.first_line(both, lambda l: "MISMATCH" in l or "error" in l)
                    or conformance.first_line(both))
    return "pass", ""


def check(args):
    import concurrent.futures
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "test", "onnx-backend"))
    import conformance
    root = os.path.join(os.path.dirname(HERE), "test", "onnx-backend")
    tests = conformance.read_list(conformance.PASSING if args.cpu_passing else
                                  os.path.join(root, "ptx-passing.txt"))
    if args.filter:
        tests = [t for t in tests if re.search(args.filter, t)]
    if not tests:
        raise SystemExit("gpu_emulate.py check: no test matches")
    tols = conformance.read_tolerances(conformance.TOLERANCES)
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        driver = fake_driver(tmp)
        kiln = os.path.abspath(args.kiln)

        def one(test):
            tol = tols.get(test, {})
            return test, check_test(kiln, driver, os.path.join(args.data, test),
                                    tol.get("rtol", 1e-3), tol.get("atol", 1e-5))
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for test, (status, why) in pool.map(one, tests):
                counts[status] = counts.get(status, 0) + 1
                if status != "pass":
                    print("%s: %s: %s" % (test, status, why), flush=True)
    print("gpu_emulate.py check: %d tests: %s" % (
        len(tests), ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items()))))
    return 0 if counts.get("pass", 0) == len(tests) else 1


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("verb")
        ap.add_argument("kiln")
        ap.add_argument("--filter", help="a regular expression the test names must match")
        ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
        ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
        ap.add_argument("--cpu-passing", action="store_true",
                        help="every test that passes on the CPU (passing.txt), not only "
                             "those ptx-passing.txt lists")
        return check(ap.parse_args())
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    n = build(sys.argv[1], sys.argv[2])
    print("gpu_emulate.py: %d kernels in %s" % (n, sys.argv[2]))


if __name__ == "__main__":
    sys.exit(main())
