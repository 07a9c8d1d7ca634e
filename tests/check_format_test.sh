#!/usr/bin/env bash
# scripts/format.sh --check catches what it is for, on a synthetic git checkout with the
# repository's .clang-format: it fails and names a tracked source laid out otherwise, at its first
# line to change, and not a laid-out one, a third_party/ one or an untracked one; then
# scripts/format.sh lays out exactly the files the check named, and the check passes. Skipped (77)
# where the check is skipped (no clang-format 14, not on CI).
# Usage: tests/check_format_test.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: check_format_test.sh SOURCE_DIR}
format=$root/scripts/format.sh
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
status=0

git -C "$repo" init -q
cp "$root/.clang-format" "$repo/"
mkdir -p "$repo/kernels" "$repo/third_party"
printf 'int twice(int x) { return 2 * x; }\n' >"$repo/laid_out.cpp"
printf '__global__ void planted_kernel(float* y) {\n#pragma unroll\n  for (int i = 0; i < 4; ++i)   y[i] = 0;\n}\n' \
  >"$repo/kernels/planted.cu"
printf 'int  vendored( ) {return 0;}\n' >"$repo/third_party/vendored.h"
printf 'int  untracked( ) {return 0;}\n' >"$repo/untracked.cpp"
git -C "$repo" add .clang-format laid_out.cpp kernels/planted.cu third_party/vendored.h
cp "$repo/third_party/vendored.h" "$repo/vendored.h.before"

said=$("$format" --check "$repo" 2>&1) && code=0 || code=$?
if ((code == 77)); then
  echo "$said"
  exit 77
elif ((code != 1)); then
  echo "FAIL: the check on a planted layout exited $code, not 1: $said"
  exit 1
elif [[ $said != *"kernels/planted.cu:3"* || $said != *"1 of the 2 sources"* || $said != *"scripts/format.sh"* ]]; then
  echo "FAIL: the check did not name kernels/planted.cu:3 alone, or not the command that fixes it: $said"
  status=1
else
  echo "caught: $said"
fi

"$format" "$repo" >/dev/null
if ! said=$("$format" --check "$repo" 2>&1); then
  echo "FAIL: the check fails after scripts/format.sh: $said"
  status=1
fi
planted=$repo/kernels/planted.cu
if ! grep -qx '  for (int i = 0; i < 4; ++i) y\[i\] = 0;' "$planted" || ! grep -qx '#pragma unroll' "$planted"; then
  echo "FAIL: scripts/format.sh did not lay out kernels/planted.cu as expected:"
  cat "$planted"
  status=1
fi
if ! cmp -s "$repo/third_party/vendored.h" "$repo/vendored.h.before" ||
   [[ $(<"$repo/untracked.cpp") != 'int  untracked( ) {return 0;}' ]]; then
  echo "FAIL: scripts/format.sh changed third_party/ or an untracked file"
  status=1
fi
exit $status
