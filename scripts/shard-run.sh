#!/usr/bin/env bash
# The benchmark suite split over this machine's GPUs: one kgate_bench process per GPU, each with
# its shard (kgate_bench --kgate_shard=I/N), then `kgate merge` joins the shards into one results
# file that records which GPU (index, UUID, name) measured each benchmark. With more shards than
# GPUs, each GPU runs its shards one after the other. The same command runs a CI matrix job's
# shard (--only) on a runner; the final job merges the shards of all jobs (scripts/nightly-gate.sh).
# Usage: scripts/shard-run.sh [options] [-- KGATE_BENCH_FLAGS...]
#   --build DIR        the build whose bench/kgate_bench runs (default: build)
#   --gpus N           use the first N visible GPUs (default: all of CUDA_VISIBLE_DEVICES, else
#                      all that nvidia-smi -L lists)
#   --shards N         split the suite into N shards (default: one per GPU)
#   --only I[,J...]    run only these shards and leave them unmerged in --out-dir (a CI job's part)
#   --durations FILE   balance the shards by the time each benchmark took in FILE, a results file
#                      (default: baselines/<GPU slug>/kgate.json when it exists, else by count)
#   --out-dir DIR      the shards' results and logs (default: runs/shards-<UTC date>)
#   --out FILE         the merged results (default: DIR/merged.json)
# Flags after -- go to every kgate_bench (e.g. --kgate_counters=off, --benchmark_filter=rmsnorm).
# Exit status: 0 all shards ran and merged; 1 a benchmark failed (kgate_bench exited 1; merged
# anyway); 2 a shard did not run or the merge failed.
set -euo pipefail
source "$(dirname "$0")/common.sh"

build=$KGATE_ROOT/build gpus=0 shards=0 only='' durations='' out_dir='' out=''
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --gpus) gpus=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --durations) durations=$2; shift 2 ;;
    --out-dir) out_dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "shard-run: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
bench_flags=("$@")
bench=$build/bench/kgate_bench
kgate=$build/tools/kgate/kgate
[[ -x $bench && -x $kgate ]] || { echo "shard-run: $bench or $kgate is missing (build first)" >&2; exit 2; }
[[ $gpus =~ ^[0-9]+$ && $shards =~ ^[0-9]+$ ]] || { echo "shard-run: --gpus and --shards take whole numbers" >&2; exit 2; }

mapfile -t visible < <(kgate_visible_gpus)
((gpus == 0 || gpus > ${#visible[@]})) && gpus=${#visible[@]}
((gpus > 0)) || { echo "shard-run: no GPU visible (nvidia-smi -L lists none)" >&2; exit 2; }
((shards > 0)) || shards=$gpus
selected=()
if [[ -n $only ]]; then
  IFS=, read -ra selected <<<"$only"
  for s in "${selected[@]}"; do
    [[ $s =~ ^[0-9]+$ ]] && ((s < shards)) || { echo "shard-run: --only $only: shards count from 0 to $((shards - 1))" >&2; exit 2; }
  done
else
  for ((s = 0; s < shards; s++)); do selected+=("$s"); done
fi
# Without CUDA_VISIBLE_DEVICES the GPUs are nvidia-smi's indices, which CUDA numbers the same way
# only in PCI bus order.
[[ -z ${CUDA_VISIBLE_DEVICES:-} ]] && export CUDA_DEVICE_ORDER=PCI_BUS_ID

if [[ -z $durations ]]; then
  # The baseline of this GPU model.
  slug=$(kgate_gpu_slug "${visible[0]}")
  [[ -n $slug && -f $KGATE_ROOT/baselines/$slug/kgate.json ]] && durations=$KGATE_ROOT/baselines/$slug/kgate.json
fi
duration_flag=()
[[ -n $durations ]] && duration_flag=("--kgate_shard_durations=$durations")
out_dir=${out_dir:-$KGATE_ROOT/runs/shards-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out_dir"
out=${out:-$out_dir/merged.json}
echo "shard-run: ${#selected[@]} of $shards shard(s) on $gpus GPU(s), balanced by ${durations:-count}; results in $out_dir"

# run_on_gpu SLOT SHARD...: the shards one after the other on visible GPU number SLOT.
run_on_gpu() {
  local gpu=${visible[$1]} shard start status
  shift
  for shard in "$@"; do
    start=$(date +%s)
    status=0
    CUDA_VISIBLE_DEVICES=$gpu "$bench" "--kgate_shard=$shard/$shards" "${duration_flag[@]}" \
      "--kgate_out=$out_dir/shard-$shard-of-$shards.json" "${bench_flags[@]}" > "$out_dir/shard-$shard.log" 2>&1 || status=$?
    echo "$status" > "$out_dir/shard-$shard.status"
    echo "shard-run: shard $shard/$shards on GPU $gpu ($(nvidia-smi --query-gpu=name,uuid --format=csv,noheader -i "$gpu" 2>/dev/null ||
      echo "?")): exit $status after $(($(date +%s) - start)) s"
  done
}

start=$(date +%s)
pids=()
for ((slot = 0; slot < gpus; slot++)); do
  mine=()
  for ((k = slot; k < ${#selected[@]}; k += gpus)); do mine+=("${selected[k]}"); done
  ((${#mine[@]})) || continue
  run_on_gpu "$slot" "${mine[@]}" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
echo "shard-run: all shards done in $(($(date +%s) - start)) s wall"

status=0
files=()
for shard in "${selected[@]}"; do
  code=$(cat "$out_dir/shard-$shard.status")
  file=$out_dir/shard-$shard-of-$shards.json
  if [[ ! -f $file ]] || ((code != 0 && code != 1)); then
    echo "shard-run: shard $shard/$shards failed (exit $code); the end of $out_dir/shard-$shard.log:" >&2
    tail -n 15 "$out_dir/shard-$shard.log" >&2
    status=2
  elif ((code == 1)); then
    echo "shard-run: shard $shard/$shards recorded a failed benchmark (see $out_dir/shard-$shard.log)" >&2
    ((status == 0)) && status=1
  fi
  files+=("$file")
done
((status == 2)) && exit 2
if [[ -n $only ]]; then
  echo "shard-run: shard(s) $only left in $out_dir for kgate merge"
  exit $status
fi
"$kgate" merge "${files[@]}" -o "$out" || exit 2
exit $status
