#!/usr/bin/env bash
# The nightly job's history step for one GPU model (docs/history.md, docs/ci.md): adds the merged
# run to that model's database on the data branch, looks for change points and, with --push,
# commits the database back. Writes to --out: changes.json and changes.txt; in GitHub Actions the
# change points also go to the step summary.
# Usage: scripts/nightly-history.sh RUN.json --name NAME [--build DIR] [--branch BRANCH] [--out DIR] [--push]
#   RUN.json         the night's merged run (scripts/nightly-gate.sh's merged.json)
#   --name NAME      the database's file name on the branch, NAME.sqlite (the workflow's GPU label)
#   --build DIR      the build whose kgate runs (default: build)
#   --branch BRANCH  the data branch (default: kgate-history); created when the remote has none
#   --out DIR        where to write (default: the directory of RUN.json)
#   --push           commit the database and push the branch (otherwise the checkout is left in
#                    BUILD/history-branch for a look)
# Exit status: 0 no new slowdown, 1 a new slowdown change point (kgate history changes --since
# previous: one that tonight's run revealed), 2 bad input or a push that kept failing.
set -euo pipefail
source "$(dirname "$0")/common.sh"

run='' name='' build=$KGATE_ROOT/build branch=kgate-history out='' push=0
while (($#)); do
  case $1 in
    --name) name=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --branch) branch=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --push) push=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "nightly-history: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [[ -z $run ]] || { echo "nightly-history: one RUN.json, got '$run' and '$1'" >&2; exit 2; }; run=$1; shift ;;
  esac
done
[[ -n $run && -n $name ]] || { echo "nightly-history: give RUN.json and --name NAME (see --help)" >&2; exit 2; }
[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || { echo "nightly-history: --name must be a plain file name, got '$name'" >&2; exit 2; }
run=$(realpath "$run")
out=$(realpath -m "${out:-$(dirname "$run")}")
kgate=$(realpath "$build")/tools/kgate/kgate
checkout=$(realpath -m "$build")/history-branch
mkdir -p "$out"

# The branch in a worktree of its own, at the remote's tip (or new and empty).
fetch_branch() {
  git -C "$KGATE_ROOT" worktree remove --force "$checkout" 2>/dev/null || rm -rf "$checkout"
  git -C "$KGATE_ROOT" worktree prune
  if git -C "$KGATE_ROOT" fetch -q origin "+refs/heads/$branch:refs/remotes/origin/$branch" 2>/dev/null; then
    git -C "$KGATE_ROOT" worktree add -q --detach "$checkout" "origin/$branch"
  else
    echo "nightly-history: no branch $branch on origin yet: starting it"
    git -C "$KGATE_ROOT" worktree add -q --detach "$checkout"
    git -C "$checkout" checkout -q --orphan "nightly-history-$$"
    git -C "$checkout" rm -rq --cached . && git -C "$checkout" clean -fdqx
  fi
}

status=0
for attempt in 1 2 3 4 5; do
  fetch_branch
  db=$checkout/$name.sqlite
  "$kgate" history add "$run" --db "$db"
  status=0
  "$kgate" history changes --db "$db" --since previous --json "$out/changes.json" > "$out/changes.txt" || status=$?
  cat "$out/changes.txt"
  ((status <= 1)) || exit "$status"
  ((push)) || { echo "nightly-history: database in $db (not pushed: no --push)"; break; }
  git -C "$checkout" add "$name.sqlite"
  git -C "$checkout" -c user.name="kgate nightly" -c user.email="kgate-nightly@users.noreply.github.com" \
    commit -q -m "history: $name, $(basename "$run") ($(date -u +%F))"
  # Each GPU model writes its own file, so a push that lost a race only needs a fresh start.
  if git -C "$checkout" push -q origin "HEAD:refs/heads/$branch"; then
    echo "nightly-history: pushed $name.sqlite to $branch"
    break
  fi
  ((attempt < 5)) || { echo "nightly-history: pushing $branch kept failing" >&2; exit 2; }
  echo "nightly-history: the push lost a race; starting again from the branch's new tip"
  sleep $((attempt * 5))
done

if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
  { echo "### Change points ($name)"; echo; echo '```'; cat "$out/changes.txt"; echo '```'; } >> "$GITHUB_STEP_SUMMARY"
fi
exit $status
