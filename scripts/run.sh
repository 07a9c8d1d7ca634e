#!/usr/bin/env bash
# The main job: build; on a GPU, check every kernel variant, benchmark the suite (and PyTorch's
# peers, when python3 has torch), compare it with the stored baseline of this GPU and write the
# report. Exits 1 when the gate finds a regression. On a machine with several GPUs (all of
# CUDA_VISIBLE_DEVICES, else all that nvidia-smi lists) the tests and the suite are spread over them.
# Without a GPU it builds, says so, and renders the report of the most recent recorded run instead.
set -euo pipefail
source "$(dirname "$0")/common.sh"
refresh_peers=0
for arg in "$@"; do
  case $arg in
    --refresh-peers) refresh_peers=1 ;;
    -h | --help)
      cat <<'USAGE'
usage: scripts/run.sh [--refresh-peers]

The main job: build; on a GPU, check every kernel variant, benchmark the suite, add the peers,
compare the run with baselines/ and write the report (runs/). Exit 1 when the gate finds a
regression or a failed variant.

  --refresh-peers  measure the peers (PyTorch, torch.compile, Liger-Kernel, cuBLAS, SDPA) even
                   where baselines/<GPU>/peers.json stands for this machine (docs/peers.md)
USAGE
      exit 0 ;;
    *) echo "run.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
# The job's wall time by phase, said at the end and written into the run (kgate job-time): where
# a user's minutes went, in the report and, run after run, in the history.
phases=()
lap() { phases+=("$1=$SECONDS"); SECONDS=0; }
SECONDS=0
# Only what the job builds and runs: the tests' tools (a browser, Python packages) are test.sh's.
"$KGATE_ROOT/scripts/bootstrap.sh" --minimal
# kgate_job: the tool, the suite's programs, the GPU tests and the engine, not the CPU tests.
kgate_build default --target kgate_job
lap build
build="$KGATE_ROOT/build"
kgate="$build/tools/kgate/kgate"
runs="$KGATE_ROOT/runs"
mkdir -p "$runs"

# write_report RUN DIR: against the stored baseline of RUN's GPU when there is one, with the
# correctness suite's results when it ran in this job.
suite_ran=0
write_report() {
  local suite=()
  ((suite_ran)) && [[ -f $build/correctness-junit.xml ]] && suite=(--correctness "$build/correctness-junit.xml")
  if ! "$kgate" report "$1" --baseline-dir "$KGATE_ROOT/baselines" "${suite[@]}" --out "$2" 2>/dev/null; then
    echo "kgate: no stored baseline for this run's GPU; the report has no comparison"
    "$kgate" report "$1" "${suite[@]}" --out "$2"
  fi
  echo "kgate: report written to $2/report.html (Markdown: $2/report.md)"
}

if ! kgate_has_gpu; then
  cases=$("$build/correctness/kgate_correctness" --gtest_list_tests | grep -c '^  ')
  benchmarks=$("$build/bench/kgate_bench" --benchmark_list_tests | wc -l)
  echo
  echo "kgate: no CUDA device found on $(hostname) (nvidia-smi lists no GPU); nothing was measured."
  echo "kgate: on a GPU machine this job runs $cases correctness cases, then $benchmarks benchmarks"
  echo "       (ctest -L gpu; build/bench/kgate_bench), compares them with baselines/ and writes a report."
  latest=$(ls -t "$runs"/*.json 2>/dev/null | head -n 1 || true)
  [[ -n $latest ]] || latest="$KGATE_ROOT/tests/data/recorded-h100-main-peers.json.gz"
  echo "kgate: rendering the report of the most recent recorded run instead: $latest"
  name=$(basename "${latest%.gz}" .json)
  write_report "$latest" "$runs/report-$name"
  exit 0
fi

nvidia-smi -L
mapfile -t gpus < <(kgate_visible_gpus)
echo "kgate: correctness suite"
rm -f "$build/correctness-junit.xml"
"$KGATE_ROOT/scripts/gpu-tests.sh" --build "$build"
suite_ran=1
lap correctness
echo "kgate: benchmark suite"
# A benchmark that failed (exit 1) is in the run and the report; anything worse stops the job.
# Each benchmark's headline mode only: the gate compares it and the report reads it; the other
# mode (hot, replayed from a CUDA graph) was 14% of the suite's time (kgate_bench times both).
suite_flags=(--kgate_modes=headline)
if ((${#gpus[@]} > 1)); then
  # One shard per GPU, each taking the benchmarks as it runs (the first shard free claims the
  # next), merged into one run that records which GPU measured each benchmark and is named as
  # kgate_bench names a run.
  "$kgate" shard-run --bench "$build/bench/kgate_bench" \
    --out-dir "$runs/shards-$(date -u +%Y%m%dT%H%M%SZ)" --runs-dir "$runs" -- "${suite_flags[@]}" || (($? == 1))
else
  "$build/bench/kgate_bench" --kgate_out_dir="$runs" "${suite_flags[@]}" || (($? == 1))
fi
run=$(ls -t "$runs"/*.json | head -n 1)
lap suite
# Peers (docs/peers.md): PyTorch's implementations of the same problems, never gated. Their speed
# depends on the GPU, its clocks, the driver and the libraries, not on the commit, so the figures
# stored in baselines/<GPU>/peers.json are reused where they stand for this machine (kgate peers
# reuse) and the peers measured otherwise, or with --refresh-peers: variants of Python families timed
# by the same engine through the build's kgate package, each family's headline mode as kgate ab
# compares it, in one process, tracing their kernels without the counter pass (they are never
# gated), merged into the run.
peers_script="$KGATE_ROOT/scripts/peers/torch_peers.py"
mkdir -p "$runs/peers"
versions="$runs/peers/versions.json"
if ((!refresh_peers)) && python3 "$peers_script" --versions >"$versions" &&
  "$kgate" peers reuse --baseline-dir "$KGATE_ROOT/baselines" --versions "$versions" "$run"; then
  :
elif ! python3 -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  echo "kgate: peers skipped: python3 cannot import torch with a CUDA device (docs/peers.md)"
elif [[ ! -d $build/python/kgate ]]; then
  echo "kgate: peers skipped: the build has no kgate Python package (no python3 3.10 or newer with its" \
    "headers when it was configured: apt install python3-dev, then run this again; docs/peers.md)"
else
  echo "kgate: measuring the peers (PyTorch eager and torch.compile, Liger-Kernel when installed, cuBLAS, SDPA)"
  peers="$runs/peers/$(basename "$run")"
  peer_flags=(--list="$build/bench/kgate_bench" --kgate_modes=headline --kgate_processes=1 --kgate_counters=trace)
  export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
  if ((${#gpus[@]} > 1)); then
    # One shard of the peers per GPU, each taking the peers as it runs, as the suite's.
    "$kgate" shard-run --bench "$peers_script" \
      --out-dir "$runs/peers/shards-$(date -u +%Y%m%dT%H%M%SZ)" --out "$peers" -- "${peer_flags[@]}" >/dev/null ||
      echo "kgate: some peers did not run (see above)"
  else
    python3 "$peers_script" "${peer_flags[@]}" --kgate_out="$peers" >/dev/null || echo "kgate: some peers did not run (see above)"
  fi
  if [[ -f $peers ]]; then
    "$kgate" merge "$run" "$peers" -o "$run"
    echo "kgate: to reuse these peers while this GPU, its driver and clocks and the libraries stay as they are:" \
      "$kgate peers record $run (writes baselines/<GPU>/peers.json)"
  fi
fi
lap peers
"$kgate" job-time "$run" "${phases[@]}" >/dev/null
echo "kgate: comparing $run with baselines/"
gate=0
"$kgate" compare --baseline-dir "$KGATE_ROOT/baselines" "$run" --markdown "${run%.json}-compare.md" || gate=$?
if ((gate == 2)); then
  # --prune: this is a whole-suite run, and it replaces every entry, also those an older baseline
  # took with the other timer (compare refuses to judge CUPTI-timed samples against event-timed).
  echo "kgate: no comparison (see above); record a baseline with: $kgate baseline update --prune $run"
  gate=0
fi
write_report "$run" "${run%.json}-report"
lap compare_and_report
"$kgate" job-time "$run" "${phases[@]}"
exit $gate
