#!/usr/bin/env bash
# Builds the suite a page of kgate's documentation shows (README.md's "Using kgate in your
# repository", docs/adding-a-family.md), as the page shows it, against an installed kgate:
#
#   tests/doc_project.sh PAGE PREFIX [WORK_DIR]
#
# PREFIX is kgate's install prefix (`cmake --install BUILD --prefix PREFIX`). The page marks its
# code by the first line of a fenced block:
#   `// file: PATH` or `# file: PATH`  the block is the file PATH of the project (written to WORK_DIR)
#   `# run: ...` in an sh block        the block is run, as a bash script in WORK_DIR, with the page's
#                                      install prefix ~/.local/kgate replaced by PREFIX
# and may state the suite's benchmark listing (lines such as `softmax/naive/m:1/n:1/bf16`) and its
# test count ("`ctest` runs N tests"). The run blocks configure, build, list and test; this script
# then checks that the listing and the count, where stated, are what the page says, that the host
# reference
# case passed, and, on a machine without a GPU, that KGATE_REQUIRE_GPU=1 turns the skipped GPU
# cases into failures: the correctness and bench programs exit 1 with one line saying why, while
# listing still works. WORK_DIR defaults to a temporary directory, removed afterwards.
# Exit status: 0 all hold, 1 one does not (said on stderr), 2 usage.
set -euo pipefail

fail() {
  echo "doc_project: $*" >&2
  exit 1
}

(($# == 2 || $# == 3)) || { echo "usage: tests/doc_project.sh PAGE PREFIX [WORK_DIR]" >&2; exit 2; }
[[ -f $1 ]] || { echo "doc_project: no page $1" >&2; exit 2; }
page=$(realpath "$1")
prefix=$(cd "$2" && pwd) || { echo "doc_project: no install prefix at $2" >&2; exit 2; }
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"  # nvcc on PATH, kgate_has_gpu
if (($# == 3)); then
  work=$3
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
work=$(cd "$work" && pwd)

# The page's files and its run blocks (run.sh), from its fenced blocks.
awk -v work="$work" -v prefix="$prefix" '
  function emit(   path, i, out) {
    if (lines[1] ~ /^(\/\/|#) file: /) {
      path = lines[1]; sub(/^(\/\/|#) file: /, "", path)
      out = work "/" path
      system("mkdir -p \"$(dirname \"" out "\")\"")
      printf "" > out
      for (i = 1; i <= n; ++i) print lines[i] > out
      close(out)
    } else if (language == "sh" && lines[1] ~ /^# run:/) {
      for (i = 1; i <= n; ++i) { gsub(/~\/\.local\/kgate/, prefix, lines[i]); print lines[i] > (work "/run.sh") }
    }
  }
  /^```/ { if (open) { emit(); open = 0 } else { open = 1; n = 0; language = substr($0, 4) } next }
  open { lines[++n] = $0 }
' "$page"
[[ -f $work/CMakeLists.txt ]] || fail "$page has no block marked '# file: CMakeLists.txt'"
[[ -f $work/run.sh ]] || fail "$page has no sh block marked '# run:'"
suite=$(sed -n 's/.*kgate_add_suite(NAME \([A-Za-z0-9_]*\).*/\1/p' "$work/CMakeLists.txt")
[[ -n $suite ]] || fail "the page's CMakeLists.txt calls no kgate_add_suite(NAME ...)"

echo "doc_project: building suite '$suite' from $page in $work against $prefix"
(cd "$work" && bash -euo pipefail run.sh) 2>&1 | tee "$work/run.log" || fail "the page's run blocks failed (their output is above)"

# The listing the page shows, if it shows one, is the suite's.
listed=$("$work/build/${suite}_bench" --benchmark_list_tests)
[[ -n $listed ]] || fail "${suite}_bench lists no benchmark"
shown=$(grep -E '^[a-z0-9_]+/[a-z0-9_]+/([a-z_]+:[0-9]+/)+[a-z0-9]+$' "$page" || true)
[[ -z $shown || $(sort <<<"$listed") == $(sort <<<"$shown") ]] ||
  fail "${suite}_bench lists other benchmarks than $page shows: $(diff <(sort <<<"$shown") <(sort <<<"$listed") | tr '\n' ' ')"

# The test count the page states, if it states one, and the host reference case passed.
stated=$(sed -n 's/.*`ctest` runs \([0-9][0-9]*\) tests.*/\1/p' "$page")
total=$(ctest --test-dir "$work/build" -N | sed -n 's/^Total Tests: //p')
[[ -z $stated || $stated == "$total" ]] || fail "$page says ctest runs '$stated' tests, ctest lists $total"
grep -Eq 'host_reference\.[A-Za-z0-9_]+ .*Passed' "$work/run.log" || fail "no host_reference case passed (log: $work/run.log)"

if kgate_has_gpu; then
  echo "doc_project: a GPU is here: KGATE_REQUIRE_GPU's failure without one is not checked"
  exit 0
fi
# KGATE_REQUIRE_GPU=1 without a GPU: listing works, running fails with one line.
expect_one_line_failure() {
  local program=$1 output status=0
  shift
  output=$(KGATE_REQUIRE_GPU=1 "$work/build/$program" "$@" 2>&1) || status=$?
  ((status == 1)) || fail "KGATE_REQUIRE_GPU=1 $program $*: exit $status without a GPU, expected 1"
  [[ $output == *": KGATE_REQUIRE_GPU=1 but no usable CUDA device: "* && $output != *$'\n'* ]] ||
    fail "KGATE_REQUIRE_GPU=1 $program $*: expected one line saying why, got: $output"
  echo "doc_project: KGATE_REQUIRE_GPU=1 $program${*:+ $*}: exit 1, $output"
}
KGATE_REQUIRE_GPU=1 "$work/build/${suite}_correctness" --gtest_list_tests >/dev/null ||
  fail "listing the tests failed under KGATE_REQUIRE_GPU=1"
KGATE_REQUIRE_GPU=1 "$work/build/${suite}_bench" --benchmark_list_tests >/dev/null ||
  fail "listing the benchmarks failed under KGATE_REQUIRE_GPU=1"
expect_one_line_failure "${suite}_correctness"
expect_one_line_failure "${suite}_bench" --kgate_out="$work/run.json"
if KGATE_REQUIRE_GPU=1 ctest --test-dir "$work/build" >"$work/required.log" 2>&1; then
  cat "$work/required.log"
  fail "KGATE_REQUIRE_GPU=1 ctest passed without a GPU"
fi
echo "doc_project: KGATE_REQUIRE_GPU=1 ctest without a GPU: $(grep 'tests passed' "$work/required.log")"
echo "doc_project: $page: ok"
