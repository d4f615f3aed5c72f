"""Compiles every model make_kernel_models.py wrote with one set of target
flags and compares kiln's outputs with the float64 references.

    python3 check_kernels.py DIR [KILN FLAGS...]

Prints one line per model and "N of N models match"; exits 1 on any
mismatch or compile error.
"""
import os
import subprocess
import sys


def main():
    out, flags = sys.argv[1], sys.argv[2:]
    # One model a line: its name, then its absolute tolerance if not 1e-5
    # and its relative one if not 1e-4 (0 0: exact, for integer outputs).
    models = [line.split() for line in open(os.path.join(out, "names.txt")) if line.strip()]
    ok = 0
    for name, *tols in models:
        lib = os.path.join(out, "lib%s.so" % name)
        c = subprocess.run(["kiln", "compile", os.path.join(out, name + ".onnx"), "-o", lib]
                           + flags, capture_output=True, text=True, timeout=120)
        if c.returncode != 0:
            print("%s: compile error: %s" % (name, c.stderr.strip()))
            continue
        r = subprocess.run(["kiln", "run", lib, "--input", os.path.join(out, name + "_x.npy"),
                            "--expect", os.path.join(out, name + "_y.npy"),
                            "--rtol", tols[1] if len(tols) > 1 else "1e-4",
                            "--atol", tols[0] if tols else "1e-5"],
                           capture_output=True, text=True, timeout=120)
        lines = (r.stdout + r.stderr).strip().splitlines()
        print("%s: %s" % (name, lines[-1] if lines else "no output"))
        ok += r.returncode == 0
    print("%d of %d models match" % (ok, len(models)))
    sys.exit(0 if ok == len(models) else 1)


if __name__ == "__main__":
    main()
