#!/usr/bin/env bash
# The nightly job's last step for one GPU model: merges the shards that the matrix jobs measured
# (scripts/shard-run.sh --only), compares the merged run with baselines/<GPU slug>/ and writes the
# report. Writes to --out: merged.json, compare.json, compare-junit.xml, compare.md and report/;
# in GitHub Actions compare.md also goes to the step summary.
# Usage: scripts/nightly-gate.sh SHARD_DIR [--build DIR] [--out DIR]
#   SHARD_DIR    holds shard-<i>-of-<n>.json of every shard of one GPU model
#   --build DIR  the build whose kgate runs (default: build)
#   --out DIR    where to write (default: SHARD_DIR)
# Exit status: kgate compare's: 0 no regression, 1 a regression or a failed variant, 2 bad input
# (a shard missing, no baseline for this GPU: record one, docs/ci.md).
set -euo pipefail
source "$(dirname "$0")/common.sh"

shards='' build=$KGATE_ROOT/build out=''
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "nightly-gate: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [[ -z $shards ]] || { echo "nightly-gate: one SHARD_DIR, got '$shards' and '$1'" >&2; exit 2; }; shards=$1; shift ;;
  esac
done
[[ -n $shards ]] || { echo "nightly-gate: give the SHARD_DIR (see --help)" >&2; exit 2; }
out=${out:-$shards}
kgate=$build/tools/kgate/kgate
mkdir -p "$out"
files=("$shards"/shard-*-of-*.json)
[[ -f ${files[0]} ]] || { echo "nightly-gate: no shard-<i>-of-<n>.json in $shards" >&2; exit 2; }

"$kgate" merge "${files[@]}" -o "$out/merged.json"
status=0
"$kgate" compare --baseline-dir "$KGATE_ROOT/baselines" "$out/merged.json" \
  --json "$out/compare.json" --junit "$out/compare-junit.xml" --markdown "$out/compare.md" || status=$?
if ((status == 2)); then
  echo "nightly-gate: nothing to compare with; to record this run as the baseline (after review, docs/ci.md):" >&2
  echo "  $kgate baseline update $out/merged.json" >&2
  "$kgate" report "$out/merged.json" --out "$out/report" >/dev/null || true
else
  "$kgate" report "$out/merged.json" --baseline-dir "$KGATE_ROOT/baselines" --out "$out/report" >/dev/null ||
    echo "nightly-gate: the report could not be written (the verdicts above stand)" >&2
  [[ -n ${GITHUB_STEP_SUMMARY:-} ]] && cat "$out/compare.md" >> "$GITHUB_STEP_SUMMARY"
fi
echo "nightly-gate: kgate compare exit status $status; report in $out/report/"
exit $status
