#!/usr/bin/env bash
# kgate used as a package by another repository, on a machine where a dependency is not installed:
# builds the install preset's targets (the tool, the harness, the CMake package) with GoogleTest's
# installed package hidden and GoogleTest built from source instead (FETCHCONTENT_SOURCE_DIR_GTEST,
# as after a download), installs that into a temporary prefix and checks that GoogleTest was
# installed beside kgate; then configures, builds and tests examples/external-kernels against that
# prefix alone (find_package(kgate CONFIG REQUIRED)), and docs/adding-a-family.md's suite as the
# page shows it (tests/doc_project.sh). Without a GPU its correctness cases report
# SKIPPED; with one they run, and the suite is benchmarked twice and compared (same build: no
# regression).
# Usage: scripts/external-example.sh [BUILD_DIR]   (default build-external/, kept for the next run)
#   GTEST_SOURCE_DIR   GoogleTest's source tree (default /usr/src/googletest, from libgtest-dev)
set -euo pipefail
source "$(dirname "$0")/common.sh"
build=${1:-$KGATE_ROOT/build-external}
gtest_source=${GTEST_SOURCE_DIR:-/usr/src/googletest}
[[ -f $gtest_source/CMakeLists.txt ]] ||
  { echo "external-example: no GoogleTest source tree at $gtest_source (install libgtest-dev, or set GTEST_SOURCE_DIR)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/kgate-external.XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake -S "$KGATE_ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKGATE_BUILD_KERNELS=OFF -DKGATE_BUILD_TESTS=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="${KGATE_EXAMPLE_ARCHITECTURES:-80;90}" \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DFETCHCONTENT_SOURCE_DIR_GTEST="$gtest_source" > "$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
grep -q "kgate: GTest not found; building it from $gtest_source" "$work/configure.log" ||
  { echo "external-example: GoogleTest was not built from source:"; cat "$work/configure.log"; exit 1; }
cmake --build "$build"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
gtest_package=$(find "$work/prefix" -name GTestConfig.cmake -print -quit)
[[ -n $gtest_package ]] || { echo "external-example: GoogleTest was not installed beside kgate in $work/prefix"; exit 1; }

cmake -S "$KGATE_ROOT/examples/external-kernels" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CUDA_ARCHITECTURES="${KGATE_EXAMPLE_ARCHITECTURES:-80;90}" >/dev/null
found=$(sed -n 's/^GTest_DIR:PATH=//p' "$work/build/CMakeCache.txt")
[[ $found == "$(dirname "$gtest_package")" ]] ||
  { echo "external-example: the example found GoogleTest at '$found', not beside kgate ($(dirname "$gtest_package"))"; exit 1; }
cmake --build "$work/build"
# The suite registers its benchmarks without a GPU too: the listing is the registry's.
listed=$("$work/build/external_bench" --benchmark_list_tests)
grep -qx 'scale_add/vectorized/n:4194304/fp32' <<<"$listed" ||
  { echo "external_bench does not list scale_add/vectorized/n:4194304/fp32:"; echo "$listed"; exit 1; }
ctest --test-dir "$work/build" --output-on-failure -j "$(nproc)"
# docs/adding-a-family.md's suite, as the page shows it, against the same install.
"$KGATE_ROOT/tests/doc_project.sh" "$KGATE_ROOT/docs/adding-a-family.md" "$work/prefix"
if kgate_has_gpu; then
  "$work/build/external_bench" --kgate_out="$work/a.json"
  "$work/build/external_bench" --kgate_out="$work/b.json"
  "$work/prefix/bin/kgate" compare "$work/a.json" "$work/b.json"
fi
echo "external-example: passed (kgate installed with GoogleTest built from source; the example and the family page's suite built and tested against it)"
