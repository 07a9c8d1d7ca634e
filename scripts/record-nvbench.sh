#!/usr/bin/env bash
# Records real nvbench output for tests/data on a GPU machine: builds tests/nvbench against the
# nvbench that the cuda-bench wheel ships, then writes into OUT_DIR two runs of the same build and
# one of the planted slowdown with --jsonbin (JSON + sample files), and one summaries-only --json run.
# Usage: scripts/record-nvbench.sh OUT_DIR   (cuda.bench importable: pip install cuda-bench)
set -euo pipefail
source "$(dirname "$0")/common.sh"
out=${1:?usage: scripts/record-nvbench.sh OUT_DIR}
mkdir -p "$out"
cuda_major=$(nvcc --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
prefix=$(python3 -m cuda.bench.nvbench --cuda-major "$cuda_major" --prefix)
build=$(mktemp -d "${TMPDIR:-/tmp}/kgate-nvbench.XXXXXX")
cmake -S "$KGATE_ROOT/tests/nvbench" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=native -Dnvbench_DIR="$prefix/lib/cmake/nvbench" >/dev/null
cmake --build "$build"
cd "$out"  # nvbench records sample files relative to the JSON file's directory
"$build/nvbench_scale_add" --jsonbin recorded-nvbench-run-a.json
"$build/nvbench_scale_add" --jsonbin recorded-nvbench-run-b.json
"$build/nvbench_scale_add_slow" --jsonbin recorded-nvbench-slow.json
"$build/nvbench_scale_add" --json recorded-nvbench-summaries.json
ls -la "$out"
