#!/usr/bin/env bash
# Installs kiln from BUILD_DIR into a prefix, then configures, builds and
# runs the consumer project (test/cmake) against the installed package, as a
# user's project would: find_package(Kiln), kiln_add_model(), and a program
# linked against a static and a shared model library. Also checks kiln.pc.
#
#   usage: bash test/cmake/run.sh BUILD_DIR
set -euo pipefail
BUILD_DIR=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=$BUILD_DIR/cmake-package
rm -rf "$WORK"
run() { echo "+ $*" >&2; "$@"; }

run cmake --install "$BUILD_DIR" --prefix "$WORK/prefix" > "$WORK.install.log"
for f in bin/kiln bin/kiln-opt lib/libkiln_runtime.a include/kiln/runtime.h \
         lib/cmake/Kiln/KilnConfig.cmake lib/cmake/Kiln/KilnConfigVersion.cmake \
         lib/cmake/Kiln/KilnAddModel.cmake lib/pkgconfig/kiln.pc; do
  [[ -e $WORK/prefix/$f ]] || { echo "run.sh: $f was not installed" >&2; exit 1; }
done
# The installed compiler runs on its own.
run "$WORK/prefix/bin/kiln" --version > /dev/null

cp "$SRC/examples/digits/digits.onnx" "$WORK/digits.onnx"
run /usr/bin/python3 "$SRC/test/cmake/make_affine.py" "$WORK"
run cmake -G Ninja -S "$SRC/test/cmake" -B "$WORK/build" -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  -DDIGITS="$WORK/digits.onnx" -DAFFINE="$WORK/affine.onnx"
run cmake --build "$WORK/build"
expected=$(sed -n 's/^correct=\([0-9]*\) .*/\1/p' "$SRC/examples/digits/expected.txt")
run "$WORK/build/consumer" "$SRC/examples/digits/test_set.bin" "$expected" "$WORK/affine_case.bin"

# Nothing changed: nothing to do. The model changed: kiln runs again.
if [[ -n $(ninja -C "$WORK/build" -n | grep "kiln: compiling" || true) ]]; then
  echo "run.sh: an up-to-date build would run kiln again" >&2; exit 1
fi
touch -d '+2 seconds' "$WORK/digits.onnx"
if [[ -z $(ninja -C "$WORK/build" -n | grep "kiln: compiling" || true) ]]; then
  echo "run.sh: a changed model would not be compiled again" >&2; exit 1
fi

# pkg-config users of the runtime.
if ! PKG_CONFIG_PATH=$WORK/prefix/lib/pkgconfig pkg-config --cflags --libs kiln | grep -q -- "-lkiln_runtime"; then
  echo "run.sh: kiln.pc does not give -lkiln_runtime" >&2; exit 1
fi
echo "cmake-package: ok"
