#!/usr/bin/env bash
# Records real nvbench output for tests/data on a GPU machine: builds tests/nvbench/scale_add_bench.cu
# with nvcc against the nvbench that the cuda-bench wheel ships (its CMake package needs CMake 3.30),
# once as it is and once with the planted slowdown, then writes into OUT_DIR two runs of the same
# build and one of the slowdown with --jsonbin (JSON + sample files), and one --json run (summaries).
# Usage: scripts/record-nvbench.sh OUT_DIR   (cuda.bench importable: pip install cuda-bench)
set -euo pipefail
source "$(dirname "$0")/common.sh"
out=${1:?usage: scripts/record-nvbench.sh OUT_DIR}
mkdir -p "$out"
cuda_major=$(nvcc --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
prefix=$(python3 -m cuda.bench.nvbench --cuda-major "$cuda_major" --prefix)
build=$(mktemp -d "${TMPDIR:-/tmp}/kgate-nvbench.XXXXXX")
trap 'rm -rf "$build"' EXIT
for variant in same slow; do
  nvcc -std=c++17 -O3 -arch=native $([[ $variant == slow ]] && echo -DKGATE_PLANTED_SLOWDOWN) \
    -I"$prefix/include" "$KGATE_ROOT/tests/nvbench/scale_add_bench.cu" -o "$build/scale_add_$variant" \
    -L"$prefix/lib" -lnvbench_main -lnvbench -Xlinker -rpath="$prefix/lib"
done
cd "$out"  # nvbench records the sample files relative to the JSON file's directory
"$build/scale_add_same" --jsonbin recorded-nvbench-run-a.json
"$build/scale_add_same" --jsonbin recorded-nvbench-run-b.json
"$build/scale_add_slow" --jsonbin recorded-nvbench-slow.json
"$build/scale_add_same" --json recorded-nvbench-summaries.json
# tests/data/recorded-nvbench.tar.gz, as nvbench_results_test.cpp reads it.
tar -czf recorded-nvbench.tar.gz recorded-nvbench-*.json recorded-nvbench-*.json-bin recorded-nvbench-*.json-freqs-bin
# What kgate makes of them (KGATE_CLI, default build/tools/kgate/kgate): A/A same (exit 0), the
# planted slowdown slower (exit 1).
kgate=${KGATE_CLI:-$KGATE_ROOT/build/tools/kgate/kgate}
if [[ -x $kgate ]]; then
  set +e
  "$kgate" compare recorded-nvbench-run-a.json recorded-nvbench-run-b.json; echo "A/A exit $?"
  "$kgate" compare recorded-nvbench-run-a.json recorded-nvbench-slow.json; echo "slowdown exit $?"
  "$kgate" compare recorded-nvbench-summaries.json recorded-nvbench-run-b.json; echo "summaries exit $?"
fi
