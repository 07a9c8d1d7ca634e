#!/usr/bin/env bash
# The README's install, as a new user runs it: the first sh block of "Using kgate in your
# repository", verbatim, from the repository's root, with HOME at WORK_DIR (so its prefix
# ~/.local/kgate is WORK_DIR/.local/kgate). Prints the block's wall time, checks that it compiled
# none of kgate's kernels or tests, that the installed kgate says the project's version, and then
# builds the README's own suite against that prefix (tests/doc_project.sh README.md).
# Usage: tests/readme_install.sh [WORK_DIR]   (default: a temporary directory, removed afterwards)
# A build-install/ left by an earlier run is reused, so the time is then not a fresh install's: the
# script says so.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fail() {
  echo "readme_install: $*" >&2
  exit 1
}
source "$root/scripts/common.sh"
kgate_work_dir readme "$@"

awk '
  /^## / { inside = ($0 == "## Using kgate in your repository") }
  inside && /^```sh$/ && !done { open = 1; next }
  open && /^```$/ { open = 0; done = 1; next }
  open { print }
' "$root/README.md" > "$work/install.sh"
[[ -s $work/install.sh ]] || fail "README.md's 'Using kgate in your repository' has no sh block"
echo "readme_install: the README's install block:"
sed 's/^/  /' "$work/install.sh"
fresh=yes
[[ -d $root/build-install ]] && fresh="no: build-install/ was already there"
start=$(date +%s)
(cd "$root" && HOME=$work bash -euo pipefail "$work/install.sh") || fail "the install block failed"
seconds=$(($(date +%s) - start))
echo "readme_install: the install block took ${seconds} s on $(nproc) cores (fresh build: $fresh)"

# What was compiled: the harness and the tool, nothing of kgate's kernels or tests.
compiled=$(cut -f4 "$root/build-install/.ninja_log" | grep -E '^(kernels|tests)/|kgate_cupti_test' || true)
[[ -z $compiled ]] || fail "the install compiled kgate's kernels or tests: $(head -n 5 <<<"$compiled" | tr '\n' ' ')"
kgate=$work/.local/kgate/bin/kgate
version=$(sed -n 's/^ *project(kgate VERSION \([0-9.]*\) .*/\1/p' "$root/CMakeLists.txt" | head -n 1)
"$kgate" --version | grep -q "^kgate $version " || fail "the installed kgate says '$("$kgate" --version)', not $version"
"$root/tests/doc_project.sh" "$root/README.md" "$work/.local/kgate" "$work/consumer"
