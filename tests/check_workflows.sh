#!/usr/bin/env bash
# CPU test of the GitHub workflows, which cannot run here: each parses as YAML, has a trigger and
# jobs that name a runner and steps, and every scripts/... path it names exists in the repository
# and is executable. Without PyYAML the paths are still checked and the test reports skipped.
# Usage: tests/check_workflows.sh REPOSITORY_ROOT
set -euo pipefail
root=${1:?usage: check_workflows.sh REPOSITORY_ROOT}
shopt -s nullglob
workflows=("$root"/.github/workflows/*.yml "$root"/.github/workflows/*.yaml)
((${#workflows[@]})) || { echo "no workflow in $root/.github/workflows"; exit 1; }

status=0
for workflow in "${workflows[@]}"; do
  scripts=$(grep -o 'scripts/[A-Za-z0-9_.-]*' "$workflow" | sort -u || true)
  for script in $scripts; do
    if [[ ! -x $root/$script ]]; then
      echo "${workflow#"$root"/}: $script does not exist or is not executable"
      status=1
    fi
  done
  echo "${workflow#"$root"/}: calls $(wc -w <<<"$scripts") script(s)"
done

if ! python3 -c 'import yaml' 2>/dev/null; then
  echo "PyYAML is not installed (python3-yaml): the scripts were checked, the YAML was not parsed"
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
