#!/usr/bin/env bash
# Limits of the hardware stage's steps (sourced by ci/hardware.sh run; tested by tests/ci/step_limits_test.sh).
#
# `bounded CMD...` runs one step. Every step has a limit (HW_STEP_TIMEOUT_S, default 900 s): a hung step is
# killed (its log ends where it hung), named, and fails the stage. With HW_DEADLINE_S the whole run has one
# too, counted from when this file was sourced: a step gets at most what is left of it, and a step that would
# start with less than HW_DEADLINE_MIN_STEP_S (default 10 s) left is skipped, named, and returns 125, which
# fails the stage. So the run ends in time to write its archives (coverage and logs) inside a device call's
# limit, where a kill from outside would lose them: give it the call's limit less about 30 s (a killed step
# takes up to 10 s more to end). steps_run and steps_skipped count what happened.
started_at=$(date +%s)
steps_run=0
steps_skipped=0

bounded() {
  local rc=0 limit="${HW_STEP_TIMEOUT_S:-900}"
  if [[ -n "${HW_DEADLINE_S:-}" ]]; then
    local left=$((HW_DEADLINE_S - ($(date +%s) - started_at)))
    if ((left < ${HW_DEADLINE_MIN_STEP_S:-10})); then
      echo "!!! skipped, ${left} s left of the run's deadline of ${HW_DEADLINE_S} s: $*" >&2
      steps_skipped=$((steps_skipped + 1))
      return 125
    fi
    if ((left < limit)); then limit=$left; fi
  fi
  steps_run=$((steps_run + 1))
  timeout -k 10 "$limit" "$@" || rc=$?
  if ((rc == 124 || rc == 137)); then echo "!!! killed at its limit of ${limit} s: $*" >&2; fi
  return "$rc"
}
