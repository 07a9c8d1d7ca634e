#!/usr/bin/env bash
# CPU test of the GitHub workflows, which cannot run here: kgate's own (.github/workflows/) and the
# one docs/ci.md gives other repositories (examples/ci/). Each parses as YAML, has a trigger and
# jobs that name a runner and steps; every scripts/... path it names exists in the repository and
# is executable; every `kgate COMMAND` it runs is a command of the kgate binary given (its --help
# exits 0); and docs/ci.md shows each example unchanged, in the ```yaml block that starts with the
# example's first line. Without PyYAML the rest is still checked and the test reports skipped.
# Usage: tests/check_workflows.sh REPOSITORY_ROOT KGATE_BINARY
set -euo pipefail
root=${1:?usage: check_workflows.sh REPOSITORY_ROOT KGATE_BINARY}
kgate=${2:?usage: check_workflows.sh REPOSITORY_ROOT KGATE_BINARY}
shopt -s nullglob
workflows=("$root"/.github/workflows/*.yml "$root"/.github/workflows/*.yaml)
((${#workflows[@]})) || { echo "no workflow in $root/.github/workflows"; exit 1; }
examples=("$root"/examples/ci/*.yml)
((${#examples[@]})) || { echo "no example workflow in $root/examples/ci"; exit 1; }
workflows+=("${examples[@]}")

status=0
for workflow in "${workflows[@]}"; do
  name=${workflow#"$root"/}
  scripts=$(grep -o 'scripts/[A-Za-z0-9_.-]*' "$workflow" | sort -u || true)
  for script in $scripts; do
    if [[ ! -x $root/$script ]]; then
      echo "$name: $script does not exist or is not executable"
      status=1
    fi
  done
  # `kgate X` or `.../kgate X` outside comments: X must be a command of this kgate.
  commands=$(grep -v '^[[:space:]]*#' "$workflow" | grep -oE "(^|[[:space:]/\"'(;&|])kgate[[:space:]]+[a-z][a-z-]*" |
             awk '{print $NF}' | sort -u || true)
  for command in $commands; do
    if ! "$kgate" "$command" --help > /dev/null 2>&1; then
      echo "$name: runs 'kgate $command', which is not a command of $kgate"
      status=1
    fi
  done
  echo "$name: calls $(wc -w <<<"$scripts") script(s) and kgate command(s): $(echo $commands)"
done

for example in "${examples[@]}"; do
  shown=$(awk -v first="$(head -n 1 "$example")" '
    inside && /^```$/ { exit }
    inside { print }
    /^```yaml$/ { getline line; if (line == first) { inside = 1; print line } }' "$root/docs/ci.md")
  if [[ -z $shown ]]; then
    echo "docs/ci.md: no \`\`\`yaml block starting with the first line of ${example#"$root"/}"
    status=1
  elif [[ $shown != "$(cat "$example")" ]]; then
    echo "docs/ci.md: its copy of ${example#"$root"/} differs:"
    diff <(echo "$shown") "$example" || true
    status=1
  fi
done

if ! python3 -c 'import yaml' 2>/dev/null; then
  echo "PyYAML is not installed (python3-yaml): the scripts, the kgate commands and docs/ci.md were checked, the YAML was not parsed"
  ((status == 0)) && exit 77
  exit $status
fi
python3 - "${workflows[@]}" <<'PY' || status=1
import sys
import yaml

failed = False
for path in sys.argv[1:]:
    def problem(text):
        global failed
        failed = True
        print(f"{path}: {text}")
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except yaml.YAMLError as e:
        problem(f"not valid YAML: {e}")
        continue
    if not isinstance(doc, dict):
        problem("not a mapping")
        continue
    # YAML 1.1 reads the key `on` as true.
    if "on" not in doc and True not in doc:
        problem("no trigger (on:)")
    jobs = doc.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        problem("no jobs")
        continue
    for name, job in jobs.items():
        if not isinstance(job, dict) or "runs-on" not in job:
            problem(f"job {name}: no runs-on")
        elif not isinstance(job.get("steps"), list) or not job["steps"]:
            problem(f"job {name}: no steps")
        else:
            for step in job["steps"]:
                if not isinstance(step, dict) or ("run" not in step and "uses" not in step):
                    problem(f"job {name}: a step with neither run nor uses: {step}")
    for need_job in (j for j in jobs.values() if isinstance(j, dict) and "needs" in j):
        needs = need_job["needs"] if isinstance(need_job["needs"], list) else [need_job["needs"]]
        for n in needs:
            if n not in jobs:
                problem(f"needs an unknown job {n}")
    print(f"{path}: parsed, jobs {', '.join(jobs)}")
sys.exit(1 if failed else 0)
PY
exit $status
