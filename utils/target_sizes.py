#!/usr/bin/env python3
"""Prints the size table of docs/targets.md: one model compiled to an object
for each target kiln supports, with the figures its generated header states
(code, constants, workspace, stack).

    python3 utils/target_sizes.py KILN [MODEL.onnx]   (default: the digits example)
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = [
    ("x86-64 (host)", []),
    ("AArch64 Neoverse N1", ["--target=aarch64-linux-gnu", "--mcpu=neoverse-n1"]),
    ("AArch64 Cortex-A76", ["--target=aarch64-linux-gnu", "--mcpu=cortex-a76"]),
    ("Cortex-M4", ["--target=thumbv7em-none-eabihf", "--mcpu=cortex-m4"]),
    ("Cortex-M7", ["--target=thumbv7em-none-eabihf", "--mcpu=cortex-m7"]),
    ("Cortex-M55 (MVE)", ["--target=thumbv8.1m.main-none-eabihf", "--mcpu=cortex-m55"]),
    ("Cortex-M0+ (no FPU)", ["--target=thumbv6m-none-eabi", "--mcpu=cortex-m0plus"]),
]


def main():
    kiln = sys.argv[1]
    model = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        HERE, "..", "examples", "digits", "digits.onnx")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, args in TARGETS:
            subprocess.run([kiln, "compile", model, "-q", "--name", "model",
                            "-o", os.path.join(tmp, "model.o")] + args,
                           check=True)
            header = open(os.path.join(tmp, "model.h")).read()
            v = dict(re.findall(r"#define model_(\w+_SIZE) (-?\d+)", header))
            rows.append((label, v["CODE_SIZE"], v["CONST_SIZE"],
                         v["DATA_SIZE"], v["WORKSPACE_SIZE"], v["STACK_SIZE"]))
    print("| target | code (bytes) | constants: weights, tables (bytes) | "
          "static data (bytes) | workspace (bytes) | stack (bytes) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
