#!/usr/bin/env bash
# The hardware stage's step limits (ci/step_limits.sh), with sleeps for steps: a step past its own limit is
# killed and named; under a run's deadline a step gets only what is left, and a step with too little left
# is skipped, named, and fails; with HW_RESUME_DIR a step that passed is not run again in a later run and
# one that failed is, and a passed step's log in the output folder is written again when it is passed over; a
# step that needs more time than is left is skipped rather than started; the counters say what ran. Usage: step_limits_test.sh REPOSITORY_ROOT
set -uo pipefail
root="${1:?repository root}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
expect() {  # expect WHAT ACTUAL WANTED
  if [[ "$2" == "$3" ]]; then
    echo "ok: $1"
  else
    echo "FAILED: $1: got '$2', wanted '$3'"
    failures=$((failures + 1))
  fi
}

# Without a deadline: each step has its own limit.
(
  HW_STEP_TIMEOUT_S=1
  unset HW_DEADLINE_S
  source "$root/ci/step_limits.sh"
  rc=0
  bounded true || rc=$?
  echo "quick $rc"
  rc=0
  bounded sleep 5 2> "$work/own.err" || rc=$?
  echo "slow $rc"
  echo "counts $steps_run $steps_skipped"
) > "$work/own.out"
expect "a quick step passes" "$(grep '^quick' "$work/own.out")" "quick 0"
expect "a step past its limit is killed" "$(grep '^slow' "$work/own.out")" "slow 124"
expect "the killed step is named with its limit" "$(grep -c 'killed at its limit of 1 s: sleep 5' "$work/own.err")" "1"
expect "both steps ran" "$(grep '^counts' "$work/own.out")" "counts 2 0"

# Under a deadline of 3 s: a step that would outlast it gets what is left; the next one is skipped.
(
  HW_STEP_TIMEOUT_S=900 HW_DEADLINE_S=3 HW_DEADLINE_MIN_STEP_S=1
  source "$root/ci/step_limits.sh"
  began=$(date +%s)
  rc=0
  bounded sleep 30 2> "$work/deadline.err" || rc=$?
  echo "cut $rc $(($(date +%s) - began))"
  rc=0
  bounded true 2>> "$work/deadline.err" || rc=$?
  echo "skipped $rc"
  echo "counts $steps_run $steps_skipped"
) > "$work/deadline.out"
read -r _ cut_rc cut_seconds < <(grep '^cut' "$work/deadline.out")
expect "a step outlasting the deadline is killed" "$cut_rc" "124"
expect "it ran no longer than the deadline" "$((cut_seconds <= 4))" "1"
expect "the next step is skipped and fails" "$(grep '^skipped' "$work/deadline.out")" "skipped 125"
expect "the skipped step is named" "$(grep -c "skipped, .* left of the run's deadline of 3 s: true" "$work/deadline.err")" "1"
expect "one ran, one skipped" "$(grep '^counts' "$work/deadline.out")" "counts 1 1"

# Resumed over two runs: a step that passed is not run again (its output folder written as OUT, since each
# run has its own); a step that failed runs again; the counters say so.
resume="$work/resume"
for run in 1 2; do
  (
    unset HW_DEADLINE_S
    HW_STEP_TIMEOUT_S=5 HW_RESUME_DIR="$resume"
    out="$work/out$run"
    mkdir -p "$out"
    source "$root/ci/step_limits.sh"
    rc=0
    before="$(cat "$work/passed-runs" 2> /dev/null | wc -l)"
    bounded bash -c "touch '$out/passed'; echo ran >> '$work/passed-runs'" 2>> "$work/resume$run.err" || rc=$?
    echo "passed $rc $( (($(wc -l < "$work/passed-runs") > before)) && echo ran || echo not-run)"
    rc=0
    bounded bash -c "touch '$out/failed'; exit 3" 2>> "$work/resume$run.err" || rc=$?
    echo "failed $rc $([[ -e "$out/failed" ]] && echo ran || echo not-run)"
    echo "counts $steps_run $steps_skipped $steps_resumed"
  ) > "$work/resume$run.out"
done
expect "first run: the passing step ran" "$(grep '^passed' "$work/resume1.out")" "passed 0 ran"
expect "first run: the failing step ran" "$(grep '^failed' "$work/resume1.out")" "failed 3 ran"
expect "second run: the passed step is not run again" "$(grep '^passed' "$work/resume2.out")" "passed 0 not-run"
expect "second run: the failed step runs again" "$(grep '^failed' "$work/resume2.out")" "failed 3 ran"
expect "second run: one ran, one resumed" "$(grep '^counts' "$work/resume2.out")" "counts 1 0 1"
expect "the resumed step is named" "$(grep -c 'passed in an earlier run (HW_RESUME_DIR), not run again: bash -c touch' "$work/resume2.err")" "1"
expect "one mark, for the passed step" "$(find "$resume" -type f | wc -l)" "1"

# Resumed with logs: what a passed step printed to files in the run's output folder is written there again
# when a later run passes over it (stdout and stderr to one log, or each to its own file), with the note.
resume_logs="$work/resume-logs"
for run in 1 2; do
  (
    unset HW_DEADLINE_S
    HW_STEP_TIMEOUT_S=5 HW_RESUME_DIR="$resume_logs"
    out="$work/logs$run"
    mkdir -p "$out"
    source "$root/ci/step_limits.sh"
    bounded bash -c 'echo printed by the step; echo warned by the step >&2' > "$out/step.log" 2>&1
    bounded bash -c 'echo table row; echo progress line >&2' > "$out/table.csv" 2> "$out/table.log"
  )
done
expect "the resumed step's log has what it printed" "$(grep -c -x -e 'printed by the step' -e 'warned by the step' "$work/logs2/step.log")" "2"
expect "and says it passed in an earlier run" "$(grep -c 'passed in an earlier run' "$work/logs2/step.log")" "1"
expect "its stdout file is restored alone" "$(cat "$work/logs2/table.csv")" "table row"
expect "its stderr file is restored with the note" "$(grep -c -e '^progress line$' -e 'passed in an earlier run' "$work/logs2/table.log")" "2"

# Resumed with result files: a file in the output folder that a passed step's arguments name (as a path,
# or after --flag=) is there again when a later run passes over the step, so a step reading it still can.
resume_files="$work/resume-files"
echo "first table" > "$work/table-source"
for run in 1 2; do
  (
    unset HW_DEADLINE_S
    HW_STEP_TIMEOUT_S=5 HW_RESUME_DIR="$resume_files"
    out="$work/files$run"
    mkdir -p "$out/sub"
    source "$root/ci/step_limits.sh"
    bounded cp "$work/table-source" "$out/sub/table.json"
    bounded bash -c 'echo "$1" > "${2#--json=}"' step "second table" "--json=$out/other.json"
    bounded true "$out/never-written"
    echo "merged: $(cat "$out/sub/table.json" "$out/other.json" | tr '\n' ' ')"
  ) > "$work/files$run.out" 2>&1
  echo "first table changed" > "$work/table-source"
done
expect "first run: both tables written" "$(grep '^merged' "$work/files1.out")" "merged: first table second table "
expect "a resumed run finds the passed steps' files as they wrote them" "$(grep '^merged' "$work/files2.out")" \
  "merged: first table second table "
expect "a named file the step never wrote is not made up" "$([[ -e "$work/files2/never-written" ]] && echo there || echo absent)" \
  "absent"

# A step that says it needs more time than the deadline leaves is skipped, not started; the next one runs.
(
  HW_STEP_TIMEOUT_S=900 HW_DEADLINE_S=3 HW_DEADLINE_MIN_STEP_S=1
  source "$root/ci/step_limits.sh"
  rc=0
  step_needs_s=60 bounded touch "$work/needy-ran" 2> "$work/needs.err" || rc=$?
  echo "needy $rc $([[ -e "$work/needy-ran" ]] && echo ran || echo not-run)"
  rc=0
  bounded true || rc=$?
  echo "next $rc"
) > "$work/needs.out"
expect "a step needing more than is left is skipped" "$(grep '^needy' "$work/needs.out")" "needy 125 not-run"
expect "it is named" "$(grep -c "skipped, .* left of the run's deadline of 3 s: touch" "$work/needs.err")" "1"
expect "the next step runs" "$(grep '^next' "$work/needs.out")" "next 0"

if ((failures > 0)); then
  echo "$failures expectation(s) failed"
  exit 1
fi
echo "step limits: every expectation held"
