#!/usr/bin/env bash
# The GPU tests of a build (ctest's label gpu: the correctness suite and the CUPTI tests) on every
# visible GPU at once, one process per worker (scripts/gpu_tests.py): a CUDA process takes about
# 0.4 s to start, which was most of the suite's time when ctest ran each case in its own. Each
# process gets its share of the cores (KGATE_HOST_THREADS) for the host references. A case
# that takes its process down fails alone; ctest's timeouts and resource locks are kept. It ends
# with each GPU's share of the cases and its wall time. On several GPUs the cases under a
# RESOURCE_LOCK (the CUPTI tests) run first and alone on the first GPU, the others on the rest.
# Usage: scripts/gpu-tests.sh [--build DIR] [--gpus N] [--slots N] [ctest -R/-E arguments...]
#   --build DIR  the build to test (default: build)
#   --gpus N     the first N visible GPUs (default: all)
#   --slots N    processes at a time per GPU (default: 4 on one or two GPUs, 2 on four, 1 on eight
#                or more: most cases are short and a GPU runs them side by side, but the driver
#                makes every process's context one at a time for the whole host, so the host runs
#                at most eight; on a 4x H200 host two per GPU took 9.5-9.7 s, four 10.7-10.8 s)
# The results, as ctest's JUnit, go to BUILD/correctness-junit.xml: `kgate report --correctness`
# reads them (scripts/run.sh passes them). ctest itself still runs them one per process
# (ctest -L gpu, with scripts/ctest-resource-spec.sh for several GPUs).
set -euo pipefail
source "$(dirname "$0")/common.sh"

build=$KGATE_ROOT/build gpus=0 slots=0
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
[[ $gpus =~ ^[0-9]+$ && $slots =~ ^[0-9]+$ ]] || { echo "gpu-tests: --gpus and --slots take whole numbers" >&2; exit 2; }
mapfile -t visible < <(kgate_visible_gpus)
((gpus == 0 || gpus > ${#visible[@]})) && gpus=${#visible[@]}
((gpus > 0)) || { echo "gpu-tests: no GPU visible (nvidia-smi -L lists none)" >&2; exit 2; }
if ((slots == 0)); then
  slots=$((8 / gpus))
  ((slots > 4)) && slots=4
  ((slots < 1)) && slots=1
fi
chosen=()
for ((i = 0; i < gpus; i++)); do chosen+=(--gpu "${visible[i]}"); done
exec python3 "$KGATE_ROOT/scripts/gpu_tests.py" --build "$build" --slots "$slots" "${chosen[@]}" \
  --junit "$build/correctness-junit.xml" "$@"
