#!/usr/bin/env bash
# Compiles digits.onnx with kiln, builds main.c against the result, runs it on
# the held-out test set and checks that the accuracy equals torch's
# (expected.txt).
#
#   usage (from the repository root): bash examples/digits/run.sh [BUILD_DIR]
#
# BUILD_DIR (default: build) is kiln's build folder; the example's outputs go
# to BUILD_DIR/digits/. Set CC to choose the C compiler (default: cc).
set -euo pipefail

BUILD_DIR=${1:-build}
EXAMPLE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KILN=$BUILD_DIR/bin/kiln
OUT_DIR=$BUILD_DIR/digits

if [[ ! -x $KILN ]]; then
  echo "run.sh: $KILN not found; build kiln first (or pass its build folder)" >&2
  exit 1
fi
mkdir -p "$OUT_DIR"

run() { echo "+ $*" >&2; "$@"; }

# kiln writes digits.h beside the library.
run "$KILN" compile "$EXAMPLE_DIR/digits.onnx" -o "$OUT_DIR/libdigits.so"
# '$ORIGIN' is for the linker, not the shell: the program finds the library
# beside itself.
# shellcheck disable=SC2016
run "${CC:-cc}" -std=c11 -O2 -I"$OUT_DIR" "$EXAMPLE_DIR/main.c" \
  "$OUT_DIR/libdigits.so" -Wl,-rpath,'$ORIGIN' -o "$OUT_DIR/digits"

output=$(run "$OUT_DIR/digits" "$EXAMPLE_DIR/test_set.bin")
echo "$output"

if [[ ! $output =~ \(([0-9]+)/([0-9]+)\) ]]; then
  echo "run.sh: FAIL: no '(correct/total)' counts in the program's output" >&2
  exit 1
fi
got_correct=${BASH_REMATCH[1]}
got_total=${BASH_REMATCH[2]}

expected=$(<"$EXAMPLE_DIR/expected.txt")
if [[ ! $expected =~ ^correct=([0-9]+)\ total=([0-9]+)$ ]]; then
  echo "run.sh: FAIL: cannot parse $EXAMPLE_DIR/expected.txt: '$expected'" >&2
  exit 1
fi
want_correct=${BASH_REMATCH[1]}
want_total=${BASH_REMATCH[2]}

if [[ $got_correct != "$want_correct" || $got_total != "$want_total" ]]; then
  echo "run.sh: FAIL: kiln's model got $got_correct/$got_total," \
    "torch got $want_correct/$want_total" >&2
  exit 1
fi
echo "run.sh: OK: matches torch ($want_correct/$want_total)"

# INT8: the same model quantised by kiln itself (Conv and Gemm weights to
# int8 per output channel, their activations to uint8 with ranges measured
# on 32 training images, calibration/), which must stay within one point
# of torch's accuracy.
run "$KILN" compile "$EXAMPLE_DIR/digits.onnx" --quantize=int8 \
  --calibration-data="$EXAMPLE_DIR/calibration" -o "$OUT_DIR/int8/libdigits.so"
# shellcheck disable=SC2016
run "${CC:-cc}" -std=c11 -O2 -I"$OUT_DIR/int8" "$EXAMPLE_DIR/main.c" \
  "$OUT_DIR/int8/libdigits.so" -Wl,-rpath,'$ORIGIN' -o "$OUT_DIR/int8/digits"
output=$(run "$OUT_DIR/int8/digits" "$EXAMPLE_DIR/test_set.bin")
echo "$output"
if [[ ! $output =~ \(([0-9]+)/([0-9]+)\) ]]; then
  echo "run.sh: FAIL: no '(correct/total)' counts in the INT8 program's output" >&2
  exit 1
fi
int8_correct=${BASH_REMATCH[1]}
# Within one point: 100 * |int8 - torch| <= total.
if (( 100 * (int8_correct > want_correct ? int8_correct - want_correct : want_correct - int8_correct) > want_total )); then
  echo "run.sh: FAIL: INT8 got $int8_correct/$want_total, more than a point from torch's" \
    "$want_correct/$want_total" >&2
  exit 1
fi
echo "run.sh: OK: INT8 within a point of torch ($int8_correct/$want_total)"
