#!/usr/bin/env bash
# tests/check_layers.sh catches what it is for: on a copy of the harness's sources with one wrong
# include planted at a time (another module's private header, by a relative or a source-tree path;
# a module above; a CUDA header in a CUDA-free module), it must fail and name it. The unchanged
# copy must pass.
# Usage: tests/check_layers_test.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: check_layers_test.sh SOURCE_DIR}
check=$root/tests/check_layers.sh
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
status=0

fresh_copy() {
  rm -rf "$copy/include" "$copy/src"
  mkdir -p "$copy/include" "$copy/src"
  cp -r "$root/include/kgate" "$copy/include/"
  cp -r "$root/src/kgate" "$copy/src/"
}

# expect_caught FILE LINE MESSAGE: with LINE added to FILE, the check fails and says MESSAGE.
expect_caught() {
  fresh_copy
  printf '%s\n' "$2" >>"$copy/$1"
  local said
  if said=$("$check" "$copy" 2>&1); then
    echo "FAIL: $2 in $1 was not caught"
    status=1
  elif [[ $said != *"$3"* ]]; then
    echo "FAIL: $2 in $1: the check said '$said', not '$3'"
    status=1
  else
    echo "caught: $2 in $1: $said"
  fi
}

fresh_copy
if ! said=$("$check" "$copy" 2>&1); then
  echo "FAIL: the unchanged sources do not pass: $said"
  status=1
fi
expect_caught src/kgate/story/story.cpp '#include "../report/report_model.hpp"' "story includes a private header of report"
expect_caught src/kgate/story/story.cpp '#include "src/kgate/report/report_sections.hpp"' "story includes a private header of report"
expect_caught include/kgate/story/story.hpp '#include "../../../src/kgate/report/report_model.hpp"' \
  "story includes a private header of"
expect_caught src/kgate/gate/compare.cpp '#include "../results/json_node.hpp"' "gate includes a private header of results"
expect_caught src/kgate/gate/compare.cpp '#include "kgate/report/report.hpp"' "gate includes report, a module it may not depend on"
expect_caught include/kgate/base/text.hpp '#include <cuda_runtime.h>' "must not include CUDA headers"
exit $status
