#!/usr/bin/env bash
# The digits example as Cortex-M4 (or M7) firmware under QEMU, checked
# against the host. kiln compiles digits.onnx to an object for
# thumbv7em-none-eabihf / cortex-m4; arm-none-eabi-gcc links it with
# digits_main.c, startup.c and newlib's semihosting runtime (rdimon) into an
# image for QEMU's mps2-an386 board (Cortex-M4F; mps2-an500, Cortex-M7, for
# cortex-m7: the same memory map); qemu-system-arm runs it on the held-out
# set with
# -icount shift=0 (one instruction = 1 ns of virtual time, so SysTick counts
# are deterministic). The same digits_main.c built for the host against a
# host object of the same model gives the reference: every sample's class
# must be the same and its logits equal within 1e-4 (relative) / 1e-5, and
# the accuracy must be torch's (examples/digits/expected.txt).
#
# With --freestanding, kiln's object brings its own memcpy/memmove/memset
# (and __aeabi_mem*), and must need nothing from outside at all.
#
#   usage: bash test/firmware/run.sh BUILD_DIR [cortex-m4|cortex-m7] [--freestanding]
set -euo pipefail
BUILD_DIR=$(cd "$1" && pwd)
CPU=${2:-cortex-m4}
FREESTANDING=${3:-}
if [[ -n $FREESTANDING && $FREESTANDING != --freestanding ]]; then
  echo "run.sh: unknown option '$FREESTANDING'" >&2
  exit 2
fi
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FW=$SRC/test/firmware
case $CPU in
  cortex-m4) MACHINE=mps2-an386 FPU=fpv4-sp-d16 ;;
  cortex-m7) MACHINE=mps2-an500 FPU=fpv5-d16 ;;
  *) echo "run.sh: unknown CPU '$CPU' (cortex-m4 or cortex-m7)" >&2; exit 2 ;;
esac
OUT=$BUILD_DIR/firmware-$CPU${FREESTANDING:+-freestanding}
rm -rf "$OUT" && mkdir -p "$OUT/target" "$OUT/host"
run() { echo "+ $*" >&2; "$@"; }
TEST_SET=$SRC/examples/digits/test_set.bin

run "$BUILD_DIR/bin/kiln" compile "$SRC/examples/digits/digits.onnx" \
  --target=thumbv7em-none-eabihf --mcpu="$CPU" $FREESTANDING -o "$OUT/target/digits.o"
run arm-none-eabi-gcc -mcpu="$CPU" -mthumb -mfloat-abi=hard -mfpu="$FPU" \
  -std=c11 -O2 -Wall -Werror -I"$OUT/target" --specs=rdimon.specs -Wl,-z,noexecstack \
  -T "$FW/mps2-an386.ld" "$FW/startup.c" "$FW/digits_main.c" "$OUT/target/digits.o" \
  -o "$OUT/target/digits.elf"
# The model object uses no heap and nothing from the C library but memcpy,
# memmove and memset (here newlib's __aeabi_mem* forms of them).
undefined=$(arm-none-eabi-nm -u "$OUT/target/digits.o" | awk '{print $2}')
if [[ -n $FREESTANDING && -n $undefined ]]; then
  echo "firmware: the --freestanding digits.o needs:" $undefined >&2
  exit 1
fi
undefined=$(echo "$undefined" |
  grep -vE '^(memcpy|memmove|memset|__aeabi_mem(cpy|move|set|clr)[48]?)$' || true)
if [[ -n $undefined ]]; then
  echo "firmware: digits.o needs more than memcpy/memmove/memset: $undefined" >&2
  exit 1
fi
timeout 300 qemu-system-arm -machine "$MACHINE" -nographic -monitor none \
  -icount shift=0 \
  -semihosting-config "enable=on,target=native,arg=digits.elf,arg=$TEST_SET" \
  -kernel "$OUT/target/digits.elf" >"$OUT/target/output.txt"

run "$BUILD_DIR/bin/kiln" compile "$SRC/examples/digits/digits.onnx" -o "$OUT/host/digits.o"
run "${CC:-cc}" -std=c11 -O2 -Wall -I"$OUT/host" "$FW/digits_main.c" "$OUT/host/digits.o" \
  -o "$OUT/host/digits_main"
"$OUT/host/digits_main" "$TEST_SET" >"$OUT/host/output.txt"

/usr/bin/python3 - "$OUT/target/output.txt" "$OUT/host/output.txt" \
  "$SRC/examples/digits/expected.txt" "$CPU" <<'PY'
import re, sys
fw, host, expected = (open(p).read() for p in sys.argv[1:4])
cpu = sys.argv[4]
def samples(text):
    return {int(m[1]): (int(m[2]), [float(v) for v in m[3].split()])
            for m in re.finditer(r"^sample (\d+) class (\d+) logits (.*)$", text, re.M)}
a, b = samples(fw), samples(host)
if not a or a.keys() != b.keys():
    sys.exit("firmware: %d samples on the %s, %d on the host" % (len(a), cpu, len(b)))
worst = 0.0
for i in sorted(a):
    (ca, la), (cb, lb) = a[i], b[i]
    if ca != cb or len(la) != len(lb):
        sys.exit("firmware: sample %d: class %d on the %s, %d on the host" % (i, ca, cpu, cb))
    for x, y in zip(la, lb):
        if abs(x - y) > 1e-5 + 1e-4 * abs(y):
            sys.exit("firmware: sample %d: logit %r on the %s, %r on the host" % (i, x, cpu, y))
        worst = max(worst, abs(x - y))
want = re.match(r"correct=(\d+) total=(\d+)", expected)
acc = re.search(r"accuracy: [0-9.]+% \((\d+)/(\d+)\)", fw)
if not acc or acc.groups() != want.groups():
    sys.exit("firmware: accuracy %s, torch's is %s/%s" % (
        acc.group(0) if acc else "missing", *want.groups()))
print("firmware: %s: %d samples: same classes as the host, logits within %.2g"
      % (cpu, len(a), worst))
print("firmware: " + acc.group(0))
stack = re.search(r"stack: measured (\d+) bytes, digits_STACK_SIZE (-?\d+)", fw)
ticks = re.search(r"systick: (\d+) ticks for (\d+) inferences", fw)
cal = re.search(r"systick: (\d+) ticks for 2000000 loop instructions", fw)
if not (stack and ticks and cal):
    sys.exit("firmware: no stack or SysTick figures in the output")
if int(stack.group(1)) <= 0 or int(stack.group(2)) <= 0:
    sys.exit("firmware: stack figures %s, %s: the measured stack and the header's "
             "digits_STACK_SIZE must both be positive" % stack.groups())
per_tick = 2000000 / int(cal.group(1))
insns = int(ticks.group(1)) * per_tick / int(ticks.group(2))
print("firmware: stack measured %s bytes (header: digits_STACK_SIZE %s, "
      "without memcpy/memset)" % stack.groups())
print("firmware: %.0f instructions per inference (QEMU -icount: %d SysTick "
      "ticks for %s inferences, %.0f instructions per tick)"
      % (insns, int(ticks.group(1)), ticks.group(2), per_tick))
PY
echo "firmware: ok"
