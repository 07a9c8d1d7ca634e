#!/usr/bin/env bash
# Lays out kgate's C++ and CUDA sources as .clang-format says, in place, with clang-format 14. The
# sources: the tracked *.c, *.cc, *.cpp, *.h, *.hpp, *.cu and *.cuh files, except third_party/
# (kept as its authors wrote it). With --check it changes nothing: it names each file clang-format
# would change, at its first such line, and fails (the ctest sources_formatted; CI runs it).
# Only version 14 will do: other versions lay out some code differently, so they would fail the
# check on code formatted by 14. Without it, or outside a git checkout, --check fails on CI (CI set)
# and is skipped elsewhere.
# Exit status: 0 formatted; 1 files to format (--check); 2 cannot run (usage, no .clang-format, and
# on CI or when formatting: no clang-format 14, no git checkout); 77 skipped.
# Usage: scripts/format.sh [--check] [SOURCE_DIR]   (default: this checkout)
#        CLANG_FORMAT=/path/to/clang-format-14 scripts/format.sh   (one outside PATH)
set -euo pipefail
check=0
case ${1:-} in
  --check) check=1; shift ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  -*) echo "format: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
(($# <= 1)) || { echo "format: one SOURCE_DIR at most (see --help)" >&2; exit 2; }
root=$(cd "${1:-$(dirname "$0")/..}" && pwd)

# cannot_run WHY: fails, except that a check outside CI is skipped (ctest's SKIP_RETURN_CODE 77).
cannot_run() {
  if ((check)); then
    case ${CI:-} in ""|0|false) echo "skipped: $1"; exit 77 ;; esac
  fi
  echo "format: $1" >&2
  exit 2
}

clang_format=""
for candidate in "${CLANG_FORMAT:-}" clang-format-14 clang-format; do
  if [[ -n $candidate ]] && command -v "$candidate" >/dev/null && [[ $("$candidate" --version) =~ version\ 14\. ]]; then
    clang_format=$candidate
    break
  fi
done
if [[ -z $clang_format ]]; then
  why="clang-format 14 is not installed (Debian, Ubuntu: apt-get install clang-format-14; or set CLANG_FORMAT)"
  command -v clang-format >/dev/null && why+="; $(clang-format --version | head -1) lays out code differently"
  cannot_run "$why"
fi
[[ -f $root/.clang-format ]] || { echo "format: $root has no .clang-format" >&2; exit 2; }

cd "$root"
tracked=$(git ls-files -- '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh' ':(exclude)third_party/' 2>&1) ||
  cannot_run "cannot list the tracked sources of $root (not a git checkout?): $tracked"
sources=()
while IFS= read -r file; do
  if [[ -f $file ]]; then sources+=("$file"); fi  # not when deleted in the work tree but not yet in git
done <<<"$tracked"
count=${#sources[@]}
((count)) || { echo "format: $root tracks no C++ or CUDA sources"; exit 0; }
if ((!check)); then
  printf '%s\0' "${sources[@]}" | xargs -0 "$clang_format" --style=file -i
  echo "format: laid out $count files with $clang_format; git diff shows what changed"
  exit 0
fi
# --ferror-limit=1: one message per file, at its first line to change.
if said=$(printf '%s\0' "${sources[@]}" | xargs -0 "$clang_format" --style=file --dry-run --Werror --ferror-limit=1 2>&1); then
  echo "format: the $count sources are laid out as .clang-format says"
  exit 0
fi
unformatted=$(sed -nE 's/^(.+):([0-9]+):[0-9]+: error: code should be clang-formatted.*/\1:\2/p' <<<"$said")
if [[ -z $unformatted ]]; then
  echo "format: $clang_format failed: $said" >&2
  exit 2
fi
echo "format: $(grep -c . <<<"$unformatted") of the $count sources are not laid out as .clang-format says (first line to change):"
sed 's/^/  /' <<<"$unformatted"
echo "fix: run scripts/format.sh in $root, then commit what it changed"
exit 1
