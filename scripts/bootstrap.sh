#!/usr/bin/env bash
# Installs what kgate needs to build and test, and nothing that is already there. Idempotent.
# As root with apt-get: installs the missing Debian/Ubuntu packages. Otherwise: prints the command.
# The CUDA Toolkit itself is not installed here (it comes from NVIDIA's repositories or a CUDA
# container); its absence is reported with the way to get it.
# Usage: scripts/bootstrap.sh [--minimal]
#   --minimal  only what building and installing kgate needs (the README's install block), not the
#              tools kgate's own tests use (a browser, Python packages, Google Benchmark's tools)
set -euo pipefail

minimal=0
case ${1:-} in
  --minimal) minimal=1 ;;
  "") ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "bootstrap: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

missing=()
# need PACKAGE PATH...: PACKAGE is missing unless dpkg knows it or one of the PATHs exists (the
# device images install some libraries outside dpkg).
need() {
  local package=$1; shift
  if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then return; fi
  local path
  for path in "$@"; do
    if compgen -G "$path" >/dev/null; then return; fi
  done
  missing+=("$package")
}

# need_command PACKAGE COMMAND: PACKAGE is missing unless COMMAND is on the PATH (pip's cmake, say).
need_command() { command -v "$2" >/dev/null || need "$1"; }

need_command cmake cmake
need_command ninja-build ninja
need g++ /usr/bin/g++
need git /usr/bin/git
need libgtest-dev "/usr/lib/*/libgtest.a" "/usr/lib/*/cmake/GTest/GTestConfig.cmake" "/usr/local/lib*/cmake/GTest/GTestConfig.cmake"
need libbenchmark-dev "/usr/lib/*/cmake/benchmark/benchmarkConfig.cmake" "/usr/local/lib*/cmake/benchmark/benchmarkConfig.cmake"
need nlohmann-json3-dev /usr/include/nlohmann/json.hpp /usr/local/include/nlohmann/json.hpp
need zlib1g-dev /usr/include/zlib.h
# kgate history keeps the nightly runs in SQLite (docs/history.md).
# Without its development files kgate builds against the runtime libsqlite3.so.0 and SQLite's own
# header in third_party/sqlite3/ (cmake/KgateSQLite3.cmake), as on an offline GPU image.
need libsqlite3-dev "/usr/lib/*/libsqlite3.so" "/usr/include/sqlite3.h" "/usr/lib/*/libsqlite3.so.0" "/lib/*/libsqlite3.so.0"
if ((!minimal)); then
  # Google Benchmark's compare.py and its statistics, for the interoperability test.
  need libbenchmark-tools /usr/share/benchmark/tools/compare.py "/usr/local/share/benchmark*/compare.py"
  need python3-scipy "/usr/lib/python3/dist-packages/scipy"
  # The browser test renders the report and the story in headless Chromium.
  need chromium /usr/bin/chromium
  # The workflow check parses .github/workflows/*.yml.
  need python3-yaml "/usr/lib/python3/dist-packages/yaml"
  # The results schema's test validates the recorded runs against docs/results.schema.json.
  need python3-jsonschema "/usr/lib/python3/dist-packages/jsonschema"
  # The hostile-input suite renders kgate's Markdown with GitHub's own cmark-gfm.
  need python3-cmarkgfm "/usr/lib/python3/dist-packages/cmarkgfm"
  # The layout check (scripts/format.sh --check) needs clang-format 14 exactly: others differ.
  need clang-format-14 /usr/bin/clang-format-14
fi

if ((${#missing[@]})); then
  command="apt-get install -y --no-install-recommends ${missing[*]}"
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "bootstrap: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
           { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }; }; then
      echo "bootstrap: could not install ${missing[*]} (offline?); configuration will say what is still missing" >&2
    fi
  else
    echo "bootstrap: missing ${missing[*]}; install with: sudo $command" >&2
  fi
fi

nvcc_path=$(command -v nvcc || true)
[[ -z $nvcc_path && -x /usr/local/cuda/bin/nvcc ]] && nvcc_path=/usr/local/cuda/bin/nvcc
if [[ -z $nvcc_path ]]; then
  echo "bootstrap: the CUDA Toolkit (nvcc, cuBLAS, CUPTI) was not found; install it from" \
       "https://developer.nvidia.com/cuda-downloads or use an nvidia/cuda:*-devel container" >&2
  exit 1
fi
