#!/bin/sh
# A synthetic stand-in for kgate_bench, for the tests of `kgate ab` and `kgate shard-run` on
# machines without a GPU. It answers --benchmark_list_tests from $SYNTHETIC_BENCH_DIR/<side>.list;
# a run copies canned results to --kgate_out: <side>-<n>.json for its n-th run, or, given
# --kgate_shard=I/N, <side>-shard-I.json with @CUDA_VISIBLE_DEVICES@ replaced by the value it ran
# with. Every call is logged to $SYNTHETIC_BENCH_DIR/calls.log as "<side> <arguments>", and each
# shard's device to gpus.log. <side> is $SYNTHETIC_BENCH_SIDE; the tests write a wrapper per side.
# With $SYNTHETIC_BENCH_DIR/<side>.before-processes it plays a build older than --kgate_processes.
set -eu
dir=$SYNTHETIC_BENCH_DIR
side=$SYNTHETIC_BENCH_SIDE
echo "$side $*" >> "$dir/calls.log"
out='' shard=''
# A binary built before --kgate_processes refuses it, as kgate_bench refuses unknown flags.
if [ -f "$dir/$side.before-processes" ]; then
  for arg in "$@"; do
    case $arg in --kgate_processes=*) echo "kgate_bench: unknown flag --kgate_processes (see --help)" >&2; exit 2 ;; esac
  done
fi
for arg in "$@"; do
  case $arg in
    --benchmark_list_tests|--benchmark_list_tests=true) cat "$dir/$side.list"; exit 0 ;;
    --kgate_out=*) out=${arg#--kgate_out=} ;;
    --kgate_shard=*) shard=${arg#--kgate_shard=} ;;
  esac
done
if [ -z "$out" ]; then
  echo "synthetic-kgate-bench: no --kgate_out given" >&2
  exit 2
fi
if [ -n "$shard" ]; then
  echo "shard $shard on ${CUDA_VISIBLE_DEVICES:-} order ${CUDA_DEVICE_ORDER:-} threads ${KGATE_HOST_THREADS:-}" >> "$dir/gpus.log"
  canned=$dir/$side-shard-${shard%/*}.json
else
  canned=$dir/$side-$(grep -c "^$side .*--kgate_out=" "$dir/calls.log").json
fi
echo "synthetic-kgate-bench: $side copies $canned"
if [ ! -f "$canned" ]; then
  echo "synthetic-kgate-bench: no canned results $canned" >&2
  exit 1
fi
sed "s/@CUDA_VISIBLE_DEVICES@/${CUDA_VISIBLE_DEVICES:-}/" "$canned" > "$out"
exit "$(cat "$dir/$side.status" 2>/dev/null || echo 0)"
