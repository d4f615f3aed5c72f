#!/usr/bin/python3
"""utils/gpu_carry_run.py's Library on a --target=cuda library with dynamic
dims (test/runtime/gpu-emulate.test): the dims its inputs' shapes give,
the outputs' shapes for them (a dim expression included), and a run
through NAME_run_dims compared with the expected outputs.

    carry_dynamic.py LIBRARY NAME --input X.npy... --expect Y.npy...
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "utils"))
import gpu_carry_run  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("library")
    ap.add_argument("name")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--expect", action="append", default=[])
    args = ap.parse_args()
    lib = gpu_carry_run.Library(os.path.abspath(args.library), args.name)
    inputs = [np.load(p) for p in args.input]
    dims = lib.dims_of(inputs)
    print("dims", dims)
    print("output shapes", [s for s, _ in lib.shapes(True, dims)])
    outs = lib.run(inputs)
    for i, (got, path) in enumerate(zip(outs, args.expect)):
        why = gpu_carry_run.compare(got, np.load(path), 1e-4, 1e-5)
        print("output %d: %s" % (i, why or "ok"))


if __name__ == "__main__":
    main()
