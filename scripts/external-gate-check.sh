#!/usr/bin/env bash
# The gate as another repository meets it, on a GPU: examples/external-kernels copied into a git
# repository of its own (no kgate tree around it), with a history of five commits, the third of
# which plants a delay in scale_add/vectorized (thread 0 of block 0 spins DELAY cycles before its
# loads: the block, and so the kernel, ends that much later). With the installed kgate only:
#   1. kgate pr-gate, base = the commit before the plant, head = the plant: must exit 1 (slower);
#   2. kgate pr-gate, an A/A (base and head differ in a text file only): must exit 0;
#   3. kgate bisect from the first to the last commit: must name the planted commit.
# Each side is built by the user's own command (--build-cmd) and found at --bench.
# Usage: scripts/external-gate-check.sh PREFIX [WORK_DIR]
#   PREFIX    kgate's install prefix (the README's install block: ~/.local/kgate)
#   WORK_DIR  the throwaway repository and everything measured (default: a temporary directory)
#   KGATE_CHECK_DELAY_CYCLES  the planted spin (default 2000 cycles, about 1 us on an H100)
#   KGATE_CUDA_ARCHITECTURES  the architectures the example builds for (default native)
# Exit status: 0 all three as expected, 1 one was not (said on stderr), 2 usage or no GPU.
set -euo pipefail
source "$(dirname "$0")/common.sh"
(($# == 1 || $# == 2)) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
prefix=$(cd "$1" && pwd)
kgate=$prefix/bin/kgate
[[ -x $kgate ]] || { echo "external-gate-check: no kgate in $prefix/bin" >&2; exit 2; }
kgate_has_gpu || { echo "external-gate-check: needs a GPU" >&2; exit 2; }
work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/kgate-gate-check.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd)
repo=$work/repo
delay=${KGATE_CHECK_DELAY_CYCLES:-2000}
export KGATE_REQUIRE_GPU=1  # a GPU runner that lost its GPU fails instead of skipping

rm -rf "$repo" && cp -r "$KGATE_ROOT/examples/external-kernels" "$repo"
git -C "$repo" init -q
commit() { git -C "$repo" add -A && git -C "$repo" -c user.name=check -c user.email=check@example.invalid commit -qm "$1"; }
commit "scale_add: two variants"
echo "Kernels of this repository, gated by kgate." > "$repo/NOTES.md" && commit "notes"
sed -i "s|^__global__ void scale_add_vectorized_kernel(ScaleAddArgs a) {|&\n  if (blockIdx.x == 0 \&\& threadIdx.x == 0) {  // planted delay\n    const long long start = clock64();\n    while (clock64() - start < $delay) {\n    }\n  }|" \
  "$repo/scale_add/vectorized.cu"
grep -q "planted delay" "$repo/scale_add/vectorized.cu" || { echo "external-gate-check: the delay was not planted" >&2; exit 1; }
commit "scale_add/vectorized: tidy the loop"
echo "More notes." >> "$repo/NOTES.md" && commit "more notes"
echo "Even more notes." >> "$repo/NOTES.md" && commit "even more notes"
mapfile -t commits < <(git -C "$repo" rev-list --reverse HEAD)
planted=${commits[2]}

build_cmd="cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$prefix -DCMAKE_CUDA_ARCHITECTURES=${KGATE_CUDA_ARCHITECTURES:-native} >/dev/null && cmake --build build"
cd "$repo"
status=0
"$kgate" pr-gate --base "${commits[1]}" --head "$planted" --build-cmd "$build_cmd" --bench build/external_bench \
  --work-dir "$work/pr-planted" --out "$work/pr-planted/out" || status=$?
echo "external-gate-check: pr-gate with the planted delay: exit $status (expected 1)"
((status == 1)) || { echo "external-gate-check: the planted delay was not caught" >&2; exit 1; }
status=0
"$kgate" pr-gate --base "${commits[0]}" --head "${commits[1]}" --build-cmd "$build_cmd" --bench build/external_bench \
  --work-dir "$work/pr-aa" --out "$work/pr-aa/out" || status=$?
echo "external-gate-check: pr-gate A/A: exit $status (expected 0)"
((status == 0)) || { echo "external-gate-check: the A/A did not pass" >&2; exit 1; }
bisect_log=$work/bisect.log
"$kgate" bisect --good "${commits[0]}" --bad "${commits[4]}" --filter '^scale_add/vectorized/' --build-cmd "$build_cmd" \
  --bench build/external_bench --work-dir "$work/bisect" | tee "$bisect_log"
grep -q "first bad commit $planted" "$bisect_log" ||
  { echo "external-gate-check: bisect did not name the planted commit $planted" >&2; exit 1; }
echo "external-gate-check: passed: the plant caught (exit 1), the A/A quiet (exit 0), bisect named $planted"
