#!/usr/bin/env bash
# kgate used as a package by another repository: installs the build in build/ into a temporary
# prefix, then configures, builds and tests examples/external-kernels against that install alone
# (find_package(kgate CONFIG REQUIRED)). Without a GPU its correctness cases report SKIPPED; with
# one they run, and the suite is benchmarked twice and compared (same build: no regression).
# Usage: scripts/external-example.sh [BUILD_DIR]   (default build/, built by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/common.sh"
build=${1:-$KGATE_ROOT/build}
work=$(mktemp -d "${TMPDIR:-/tmp}/kgate-external.XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$KGATE_ROOT/examples/external-kernels" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CUDA_ARCHITECTURES="${KGATE_EXAMPLE_ARCHITECTURES:-80;90}" >/dev/null
cmake --build "$work/build"
# The suite registers its benchmarks without a GPU too: the listing is the registry's.
listed=$("$work/build/external_bench" --benchmark_list_tests)
grep -qx 'scale_add/vectorized/n:4194304/fp32' <<<"$listed" ||
  { echo "external_bench does not list scale_add/vectorized/n:4194304/fp32:"; echo "$listed"; exit 1; }
ctest --test-dir "$work/build" --output-on-failure -j "$(nproc)"
if kgate_has_gpu; then
  "$work/build/external_bench" --kgate_out="$work/a.json"
  "$work/build/external_bench" --kgate_out="$work/b.json"
  "$work/prefix/bin/kgate" compare "$work/a.json" "$work/b.json"
fi
