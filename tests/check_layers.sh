#!/usr/bin/env bash
# The harness's layering (docs/architecture.md, "The harness's modules"): every file in
# include/kgate/<module>/ and src/kgate/<module>/ includes only its own module's headers and the
# public headers (include/kgate/<dependency>/) of the modules it depends on, never another
# module's private ones (src/kgate/<other>/, "../<other>/..."), and the CUDA-free modules include
# no CUDA header.
# Usage: tests/check_layers.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: check_layers.sh SOURCE_DIR}
declare -A allowed=(
  [base]=""
  [results]="base"
  [gate]="results base"
  [history]="gate results base"
  [report]="gate results base"
  [story]="report gate results base"
  [core]="base"
  [measure]="core results base"
  [suite]="measure core results base"
)
cuda_free="base results gate history report story"
status=0
for module in "${!allowed[@]}"; do
  for dir in "$root/include/kgate/$module" "$root/src/kgate/$module"; do
    [[ -d $dir ]] || { echo "missing module folder ${dir#"$root"/}"; status=1; continue; }
  done
done
for dir in "$root"/include/kgate/*/ "$root"/src/kgate/*/; do
  module=$(basename "$dir")
  [[ -v allowed[$module] ]] || { echo "${dir#"$root"/}: not a module of docs/architecture.md"; status=1; }
done
for module in "${!allowed[@]}"; do
  ok=" $module ${allowed[$module]} "
  while IFS=: read -r file line text; do
    used=$(sed -E -e 's|.*#include "[^"]*src/kgate/([a-z_]+)/.*|\1|;t' -e 's|.*#include "(kgate/\|(\.\./)+)([a-z_]+)/.*|\3|' <<<"$text")
    if [[ $text != *'#include "kgate/'* && $used != "$module" ]]; then
      echo "${file#"$root"/}:$line: $module includes a private header of $used (src/kgate/$used/): $text" \
           "(give it what it needs through include/kgate/$used/)"
      status=1
    elif [[ $ok != *" $used "* ]]; then
      echo "${file#"$root"/}:$line: $module includes $used, a module it may not depend on: $text"
      status=1
    fi
  done < <(grep -rnE '#include "(kgate/|(\.\./)+|[^"]*src/kgate/)[a-z_]+/' "$root/include/kgate/$module" "$root/src/kgate/$module" \
             2>/dev/null || true)
  if [[ " $cuda_free " == *" $module "* ]]; then
    if grep -rnE '#include <(cuda|cublas|cupti|cudaTypedefs|nvml)[a-zA-Z_0-9]*\.h>' "$root/include/kgate/$module" "$root/src/kgate/$module"; then
      echo "$module builds without the CUDA Toolkit (KGATE_TOOLS_ONLY) and must not include CUDA headers"
      status=1
    fi
  fi
done
exit $status
