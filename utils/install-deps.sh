#!/usr/bin/env bash
#===- utils/install-deps.sh - Install every Debian package kiln needs -----===#
#
# Idempotent: packages already present are left alone, so running it twice is
# cheap. Needs root (or sudo) and Debian 12 with bookworm-security enabled
# (LLVM/MLIR 22 come from there). Nothing outside Debian's archive is fetched.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

PACKAGES=(
  # Build tools.
  cmake ninja-build ccache pkg-config
  # LLVM / MLIR 22, the compiler and linker that build kiln, lld as a library.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  clang-22 lld-22 liblld-22-dev zlib1g-dev libzstd-dev
  # LLVM's LTO archive, linked statically with lld, refers to Polly.
  libpolly-22-dev
  # ONNX protobuf classes, schema registry, protobuf.
  libonnx-dev libprotobuf-dev protobuf-compiler
  # Conformance data and the Python used by test scripts (Debian's python3).
  libonnx-testdata python3 python3-onnx python3-numpy
  python3-torch python3-torchvision python3-sklearn
  # Cross targets and their tests.
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi
  qemu-system-arm
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
