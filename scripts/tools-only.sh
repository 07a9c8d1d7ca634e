#!/usr/bin/env bash
# The tools-only build on a machine without the CUDA Toolkit: configures with KGATE_TOOLS_ONLY=ON
# and CUDA hidden (no nvcc on PATH, no CMAKE_CUDA_COMPILER or CUDACXX, CUDAToolkit_ROOT pointing
# nowhere), builds `kgate` and its CPU tests, and runs them. A CI runner without CUDA gates
# recorded runs with this build.
# Usage: scripts/tools-only.sh [BUILD_DIR]   (default build-tools-only/)
set -euo pipefail
source "$(dirname "$0")/common.sh"
build=${1:-$KGATE_ROOT/build-tools-only}
nowhere=$(mktemp -d "${TMPDIR:-/tmp}/kgate-no-cuda.XXXXXX")
trap 'rm -rf "$nowhere"' EXIT
without_cuda=$(kgate_path_without_cuda "$nowhere")
env -u CUDACXX -u CUDA_PATH -u CUDA_HOME PATH="$without_cuda" bash -c '
  set -euo pipefail
  if command -v nvcc >/dev/null; then echo "tools-only: nvcc is still on PATH ($(command -v nvcc))"; exit 1; fi
  cmake --no-warn-unused-cli -S "$1" -B "$2" -G Ninja -DKGATE_TOOLS_ONLY=ON -UCMAKE_CUDA_COMPILER -DCUDAToolkit_ROOT="$3" >/dev/null
  cmake --build "$2" --target kgate kgate_tools_tests
  ctest --test-dir "$2" -L cpu -j "$(nproc)" --output-on-failure
' tools-only "$KGATE_ROOT" "$build" "$nowhere/cuda"
