#!/usr/bin/env bash
# Builds kgate as of a git revision, in a worktree of its own beside the checkout (BUILD_DIR-src)
# and the build directory BUILD_DIR, leaving the checkout as it is: the performance gate builds
# a pull request's merge base and its head side by side this way.
# Usage: scripts/build-at.sh REVISION BUILD_DIR [TARGET...]   (default target: kgate_bench kgate)
#   KGATE_CUDA_ARCHITECTURES  the GPUs to build for (default: native, this machine's GPU)
# e.g. scripts/build-at.sh "$(git merge-base origin/main HEAD)" build-base
set -euo pipefail
source "$(dirname "$0")/common.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }
(($# >= 2)) || { usage >&2; exit 2; }
revision=$1 build=$2
shift 2
targets=("$@")
((${#targets[@]})) || targets=(kgate_bench kgate)
commit=$(git -C "$KGATE_ROOT" rev-parse --verify "$revision^{commit}")
source_dir=$build-src
if [[ -d $source_dir ]]; then
  git -C "$source_dir" checkout -q --detach "$commit"
else
  git -C "$KGATE_ROOT" worktree add -q --detach "$source_dir" "$commit"
fi
echo "build-at: $revision = $commit in $source_dir, building ${targets[*]} in $build"
mkdir -p "$build"
cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CUDA_ARCHITECTURES=${KGATE_CUDA_ARCHITECTURES:-native}" > "$build/configure.log" 2>&1 ||
  { tail -n 30 "$build/configure.log" >&2; exit 1; }
cmake --build "$build" --target "${targets[@]}"
