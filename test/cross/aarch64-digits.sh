#!/usr/bin/env bash
# The digits example on AArch64: kiln compiles digits.onnx for
# aarch64-linux-gnu (a shared library linked in-process), Debian's cross gcc
# builds examples/digits/main.c against it, and qemu-aarch64 runs it on the
# held-out set; the accuracy must equal torch's (expected.txt). A first step
# of the cross-targets issue (the conformance subset comes next).
#
#   usage: bash test/cross/aarch64-digits.sh BUILD_DIR
set -euo pipefail
BUILD_DIR=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=$BUILD_DIR/cross-aarch64
rm -rf "$OUT" && mkdir -p "$OUT"
run() { echo "+ $*" >&2; "$@"; }

run "$BUILD_DIR/bin/kiln" compile "$SRC/examples/digits/digits.onnx" \
  --target=aarch64-linux-gnu -o "$OUT/libdigits.so"
# shellcheck disable=SC2016
run aarch64-linux-gnu-gcc -std=c11 -O2 -I"$OUT" "$SRC/examples/digits/main.c" \
  -L"$OUT" -ldigits -Wl,-rpath,'$ORIGIN' -o "$OUT/digits"
result=$(run qemu-aarch64 -L /usr/aarch64-linux-gnu "$OUT/digits" "$SRC/examples/digits/test_set.bin")
echo "$result"
want=$(sed -n 's/^correct=\([0-9]*\) total=\([0-9]*\)$/(\1\/\2)/p' "$SRC/examples/digits/expected.txt")
if [[ $result != *"$want"* ]]; then
  echo "aarch64-digits: expected $want, got: $result" >&2
  exit 1
fi
# The library is AArch64 code with NEON (Advanced SIMD) float arithmetic.
simd=$(aarch64-linux-gnu-objdump -d "$OUT/libdigits.so" | grep -cE $'\tf(mla|mul|add)\tv[0-9]+[.]' || true)
if [[ $simd -eq 0 ]]; then
  echo "aarch64-digits: no NEON float arithmetic in libdigits.so" >&2
  exit 1
fi
echo "aarch64-digits: $simd NEON float instructions"
echo "aarch64-digits: ok"
