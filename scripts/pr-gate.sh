#!/usr/bin/env bash
# The pull-request performance gate: `kgate ab` runs the base and the head build's kgate_bench on
# this GPU in alternating rounds and judges the head (docs/compare.md, "kgate ab"). Writes to
# --out: ab.json, ab-junit.xml, ab.md (the summary), report/ (kgate report of the pooled head
# against the pooled base) and rounds/ (every round's results and log); in GitHub Actions ab.md
# also goes to the step summary.
# Usage: scripts/pr-gate.sh --base BUILD_DIR --head BUILD_DIR [--out DIR] [KGATE_AB_OPTIONS...] [-- KGATE_BENCH_FLAGS...]
#   KGATE_AB_OPTIONS  --rounds N, --seed N, --filter RE, --common-only, --threshold ... (kgate ab --help)
# e.g. scripts/build-at.sh "$(git merge-base origin/main HEAD)" build-base
#      scripts/build-at.sh HEAD build-head
#      scripts/pr-gate.sh --base build-base --head build-head --filter '^rmsnorm/'
# Exit status: kgate ab's: 0 no regression, 1 a regression or a failed variant, 2 bad input.
set -euo pipefail
source "$(dirname "$0")/common.sh"

base='' head='' out=$KGATE_ROOT/runs/pr-gate
ab_args=()
while (($#)); do
  case $1 in
    --base) base=$2; shift 2 ;;
    --head) head=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) ab_args+=("$1"); shift ;;
  esac
done
[[ -n $base && -n $head ]] || { echo "pr-gate: give --base BUILD_DIR and --head BUILD_DIR (see --help)" >&2; exit 2; }
kgate=$head/tools/kgate/kgate
mkdir -p "$out"
thresholds=()
[[ -f $KGATE_ROOT/baselines/thresholds.json ]] && thresholds=(--thresholds "$KGATE_ROOT/baselines/thresholds.json")
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,uuid,clocks.sm,temperature.gpu --format=csv || true

status=0
"$kgate" ab --base "$base/bench/kgate_bench" --head "$head/bench/kgate_bench" "${thresholds[@]}" --work-dir "$out/rounds" \
  --json "$out/ab.json" --junit "$out/ab-junit.xml" --markdown "$out/ab.md" "${ab_args[@]}" || status=$?
if ((status != 2)); then
  "$kgate" report "$out/rounds/head.json" --baseline "$out/rounds/base.json" "${thresholds[@]}" --out "$out/report" >/dev/null ||
    echo "pr-gate: the report could not be written (the verdicts above stand)" >&2
  [[ -n ${GITHUB_STEP_SUMMARY:-} ]] && cat "$out/ab.md" >> "$GITHUB_STEP_SUMMARY"
fi
echo "pr-gate: kgate ab exit status $status; verdicts in $out/ab.md, report in $out/report/"
exit $status
