#!/usr/bin/env bash
# Runs the GPU correctness suite under compute-sanitizer: memcheck (out-of-bounds and misaligned
# accesses, leaks) and racecheck (shared-memory hazards). Exits non-zero on any reported error.
# Usage: scripts/sanitize.sh [gtest filter]
set -euo pipefail
source "$(dirname "$0")/common.sh"
filter=${1:-*}
binary="$KGATE_ROOT/build/correctness/kgate_correctness"
[[ -x $binary ]] || kgate_build default
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if ! kgate_has_gpu; then
  echo "sanitize: no CUDA device found; compute-sanitizer needs a GPU" >&2
  exit 1
fi
status=0
for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool"
  extra=()
  [[ $tool == memcheck ]] && extra=(--leak-check full)
  "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 86 "$binary" --gtest_filter="$filter" --gtest_brief=1 || status=$?
done
exit $status
