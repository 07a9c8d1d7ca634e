#!/usr/bin/env bash
# The GPU correctness suite on every visible GPU at once: ctest runs the tests labelled gpu one
# per GPU (each declares RESOURCE_GROUPS gpus:1 and reads the GPU ctest gives it), with the
# resource spec of this machine (scripts/ctest-resource-spec.sh).
# Usage: scripts/gpu-tests.sh [--build DIR] [--gpus N] [--slots N] [ctest arguments...]
#   --build DIR  the build to test (default: build)
#   --gpus N     the first N visible GPUs (default: all)
#   --slots N    tests per GPU at a time (default 1)
# The results, as ctest's JUnit, go to BUILD/correctness-junit.xml: `kgate report --correctness`
# reads them (scripts/run.sh passes them).
set -euo pipefail
source "$(dirname "$0")/common.sh"

build=$KGATE_ROOT/build gpus=0 slots=1
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --gpus) gpus=$2; shift 2 ;;
    --slots) slots=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[[ -d $build ]] || { echo "gpu-tests: no build directory $build (build first)" >&2; exit 2; }
build=$(cd "$build" && pwd)  # ctest --test-dir changes directory: the spec's path must not be relative
spec=$build/ctest-resources.json
"$KGATE_ROOT/scripts/ctest-resource-spec.sh" --gpus "$gpus" --slots "$slots" --out "$spec"
parallel=$(($(grep -o '"id"' "$spec" | wc -l) * slots))
echo "gpu-tests: $parallel test(s) at a time over the GPUs in $spec"
exec ctest --test-dir "$build" -L gpu --resource-spec-file "$spec" -j "$parallel" --output-on-failure \
  --output-junit "$build/correctness-junit.xml" "$@"
