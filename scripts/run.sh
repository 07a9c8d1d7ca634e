#!/usr/bin/env bash
# The main job: build, then check every kernel variant on this machine's GPU.
# Without a GPU it builds, says so, and lists what it would have run.
set -euo pipefail
source "$(dirname "$0")/common.sh"
"$KGATE_ROOT/scripts/bootstrap.sh"
kgate_build default
build="$KGATE_ROOT/build"

if ! kgate_has_gpu; then
  echo
  echo "kgate: no CUDA device found on $(hostname) (nvidia-smi lists no GPU); nothing was measured."
  echo "kgate: on a GPU machine this job would run the correctness suite:"
  "$build/correctness/kgate_correctness" --gtest_list_tests | awk '/^[^ ]/{suite=$1} /^  /{print "  " suite $1}'
  exit 0
fi

nvidia-smi -L
echo "kgate: correctness suite"
ctest --test-dir "$build" -L gpu -j 1 --output-on-failure

echo "kgate: benchmark suite"
"$build/bench/kgate_bench" --kgate_out_dir="$KGATE_ROOT/runs"
