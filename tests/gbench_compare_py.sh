#!/usr/bin/env bash
# Google Benchmark's own tools/compare.py must read two kgate runs and print its table: kgate's
# results are Google Benchmark JSON. Exits 77 (skipped) where compare.py or SciPy is missing.
set -euo pipefail
baseline=$1 contender=$2 expect=$3
script=""
for candidate in /usr/share/benchmark/compare.py /usr/local/share/benchmark/compare.py "${GBENCH_COMPARE_PY:-}"; do
  [[ -n $candidate && -f $candidate ]] && script=$candidate && break
done
python=""
for candidate in /usr/bin/python3 python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import scipy" 2>/dev/null; then python=$candidate; break; fi
done
if [[ -z $script || -z $python ]]; then
  echo "skipped: Google Benchmark's compare.py (libbenchmark-tools) or SciPy (python3-scipy) is not installed"
  exit 77
fi
# compare.py reads plain JSON: recorded runs are kept gzipped.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in baseline contender; do
  if [[ ${!side} == *.gz ]]; then
    gunzip -c "${!side}" >"$work/$side.json"
    printf -v "$side" '%s' "$work/$side.json"
  fi
done
output=$("$python" "$script" benchmarks "$baseline" "$contender")
echo "$output"
# A row for a known benchmark, with the time-difference column compare.py computes.
grep -F -- "$expect " <<<"$output" | grep -qE '[+-][0-9]+\.[0-9]{4}' || { echo "no row with a time difference for $expect" >&2; exit 1; }
