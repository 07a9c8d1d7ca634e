#!/usr/bin/env bash
# The tools-only build on a machine without the CUDA Toolkit: configures with KGATE_TOOLS_ONLY=ON
# and CUDA hidden (no nvcc on PATH, no CMAKE_CUDA_COMPILER or CUDACXX, CUDAToolkit_ROOT pointing
# nowhere), builds `kgate` and its CPU tests, and runs them. A CI runner without CUDA gates
# recorded runs with this build.
# Usage: scripts/tools-only.sh [BUILD_DIR]   (default build-tools-only/)
set -euo pipefail
source "$(dirname "$0")/common.sh"
build=${1:-$KGATE_ROOT/build-tools-only}
# PATH without nvcc: CUDA's own folders dropped; a folder that also holds other tools (an nvcc
# wrapper in /usr/local/bin) replaced by a folder of links to everything in it but nvcc.
nowhere=$(mktemp -d "${TMPDIR:-/tmp}/kgate-no-cuda.XXXXXX")
trap 'rm -rf "$nowhere"' EXIT
without_cuda=""
while IFS= read -r dir; do
  [[ -z $dir || $dir == *cuda* ]] && continue
  if [[ -e $dir/nvcc ]]; then
    mirror="$nowhere/path$(( ${#without_cuda} ))"
    mkdir -p "$mirror"
    for tool in "$dir"/*; do [[ $(basename "$tool") == nvcc* ]] || ln -sf "$tool" "$mirror/"; done
    dir=$mirror
  fi
  without_cuda+="${without_cuda:+:}$dir"
done < <(tr ':' '\n' <<<"$PATH")
env -u CUDACXX -u CUDA_PATH -u CUDA_HOME PATH="$without_cuda" bash -c '
  set -euo pipefail
  if command -v nvcc >/dev/null; then echo "tools-only: nvcc is still on PATH ($(command -v nvcc))"; exit 1; fi
  cmake --no-warn-unused-cli -S "$1" -B "$2" -G Ninja -DKGATE_TOOLS_ONLY=ON -UCMAKE_CUDA_COMPILER -DCUDAToolkit_ROOT="$3" >/dev/null
  cmake --build "$2" --target kgate kgate_tools_tests
  ctest --test-dir "$2" -L cpu -j "$(nproc)" --output-on-failure
' tools-only "$KGATE_ROOT" "$build" "$nowhere/cuda"
