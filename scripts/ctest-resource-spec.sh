#!/usr/bin/env bash
# Writes ctest's resource spec for this machine's GPUs, so that
#   ctest -L gpu --resource-spec-file FILE -j N
# runs the GPU tests (RESOURCE_GROUPS gpus:1) one per GPU in parallel. A GPU's id is its position
# in CUDA_VISIBLE_DEVICES when that is set, else its nvidia-smi index; each test turns its id
# back into CUDA_VISIBLE_DEVICES the same way (include/kgate/core/ctest_gpu.hpp). scripts/gpu-tests.sh
# writes the file and runs ctest with it.
# Usage: scripts/ctest-resource-spec.sh [--gpus N] [--slots N] [--out FILE]
#   --gpus N   the first N visible GPUs (default: all)
#   --slots N  tests that may share one GPU at a time (default 1)
#   --out FILE where to write it (default: standard output)
set -euo pipefail
source "$(dirname "$0")/common.sh"

gpus=0 slots=1 out=-
while (($#)); do
  case $1 in
    --gpus) gpus=$2; shift 2 ;;
    --slots) slots=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "ctest-resource-spec: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $gpus =~ ^[0-9]+$ && $slots =~ ^[1-9][0-9]*$ ]] || { echo "ctest-resource-spec: --gpus and --slots take whole numbers" >&2; exit 2; }

mapfile -t visible < <(kgate_visible_gpus)
((gpus == 0 || gpus > ${#visible[@]})) && gpus=${#visible[@]}
if ((gpus == 0)); then
  echo "ctest-resource-spec: no GPU visible (nvidia-smi -L lists none)" >&2
  exit 1
fi

entries=()
for ((i = 0; i < gpus; i++)); do
  id=${visible[i]}
  [[ -n ${CUDA_VISIBLE_DEVICES:-} ]] && id=$i  # a position: the entry itself may be a UUID
  entries+=("{\"id\": \"$id\", \"slots\": $slots}")
done
joined=$(IFS=,; echo "${entries[*]}")
spec=$(printf '{"version": {"major": 1, "minor": 0}, "local": [{"gpus": [%s]}]}' "${joined//,\{/, \{}")
if [[ $out == - ]]; then echo "$spec"; else echo "$spec" > "$out"; fi
