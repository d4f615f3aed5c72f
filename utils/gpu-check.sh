#!/usr/bin/env bash
# kiln on an NVIDIA GPU: the conformance tests and the model suite compiled
# with --target=cuda, run on the GPU against their references, and
# resnet50, mobilenet_v2 and the BERT-style encoder timed at batch 1 and 32
# against PyTorch on the same GPU (utils/gpu_check.py says what each part
# does). For a machine with a GPU and the CUDA driver; builds kiln first if
# BUILD_DIR has none (the toolchain of utils/install-deps.sh). Stays within
# 8 minutes.
#
#   bash utils/gpu-check.sh [BUILD_DIR] [gpu_check.py options, e.g. --json out.json]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
if [ ! -x "$build/bin/kiln" ]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build"
fi
exec timeout 470 /usr/bin/python3 utils/gpu_check.py "$build/bin/kiln" "$@"
