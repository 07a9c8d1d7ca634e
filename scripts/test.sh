#!/usr/bin/env bash
# The tests: install what is missing, configure, build, run every ctest test. On a machine without
# a GPU the GPU cases report as skipped (with the reason) and the CPU tests run in full.
# Usage: scripts/test.sh [ctest arguments...]   e.g. scripts/test.sh -L cpu
set -euo pipefail
source "$(dirname "$0")/common.sh"
"$KGATE_ROOT/scripts/bootstrap.sh"
kgate_build "${KGATE_PRESET:-default}"
cd "$KGATE_ROOT" && ctest --preset "${KGATE_PRESET:-default}" -j "$(nproc)" "$@"
