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
#
# With HW_RESUME_DIR a stage can span several device calls on one warm machine: each step that passes leaves
# a mark there (named by its command line, with the run's output folder, $out, written as OUT, since each call
# has its own), and a later run with the same HW_RESUME_DIR passes over a marked step without running it
# (counted in steps_resumed, named on stderr); failed, killed and skipped steps leave no mark, so they run
# again. Keep the folder where the binaries are (.hw/resume): a fresh machine has neither. What a passed step
# printed to a file in the output folder (its log: `bounded CMD > "$out/x.log" 2>&1`) is kept beside its mark
# and written there again when the step is passed over, so that a resumed stage's logs, and the checks that
# read them after the step, see what the step printed rather than an empty file. Likewise the files in the
# output folder that a passed step's arguments name (`--json "$out/x.json"`, `--json=...`): a later step
# that reads them (a merge of two steps' tables) finds them when a resumed run passed over their step.
#
# A step that needs more than the least time to be worth starting (a rank made late on purpose) says so with
# step_needs_s=SECONDS before `bounded`: under a deadline it is skipped, to run in a later call, rather than
# started and killed.
started_at=$(date +%s)
steps_run=0
steps_skipped=0
steps_resumed=0

# The mark of a passed step in HW_RESUME_DIR: a hash of its command line, the output folder written as OUT.
step_mark() {
  local line="$*"
  if [[ -n "${out:-}" ]]; then line="${line//"$out"/OUT}"; fi
  echo "$HW_RESUME_DIR/$(printf '%s' "$line" | sha256sum | cut -c1-32)"
}

# The file behind this shell's descriptor $2 when it is one in the run's output folder ($out), else nothing.
step_output_file() {
  local path
  path="$(readlink -f "/proc/$1/fd/$2" 2>/dev/null)" || return 0
  if [[ -n "${out:-}" && -f "$path" && "$path" == "$(readlink -f "$out")"/* ]]; then echo "$path"; fi
}

# The files in the run's output folder that a step's arguments name, relative to it: one per line.
step_named_files() {
  local arg
  [[ -n "${out:-}" ]] || return 0
  for arg in "$@"; do
    if [[ "$arg" == --*=* ]]; then arg="${arg#*=}"; fi
    if [[ "$arg" == "$out"/* && -f "$arg" ]]; then echo "${arg#"$out"/}"; fi
  done
}

bounded() {
  local rc=0 limit="${HW_STEP_TIMEOUT_S:-900}" mark="" stdout_file="" stderr_file=""
  if [[ -n "${HW_RESUME_DIR:-}" ]]; then
    mark="$(step_mark "$@")"
    # Read here, not inside the command substitutions, where descriptor 1 is their pipe.
    local shell_pid="$BASHPID"
    stdout_file="$(step_output_file "$shell_pid" 1)"
    stderr_file="$(step_output_file "$shell_pid" 2)"
    if [[ "$stderr_file" == "$stdout_file" ]]; then stderr_file=""; fi
    if [[ -e "$mark" ]]; then
      if [[ -n "$stdout_file" && -f "$mark.stdout" ]]; then cat "$mark.stdout"; fi
      if [[ -n "$stderr_file" && -f "$mark.stderr" ]]; then cat "$mark.stderr" >&2; fi
      if [[ -n "${out:-}" && -d "$mark.files" ]]; then cp -r "$mark.files/." "$out/"; fi
      echo "=== passed in an earlier run (HW_RESUME_DIR), not run again: $*" >&2
      steps_resumed=$((steps_resumed + 1))
      return 0
    fi
  fi
  if [[ -n "${HW_DEADLINE_S:-}" ]]; then
    local left=$((HW_DEADLINE_S - ($(date +%s) - started_at)))
    if ((left < ${step_needs_s:-${HW_DEADLINE_MIN_STEP_S:-10}})); then
      echo "!!! skipped, ${left} s left of the run's deadline of ${HW_DEADLINE_S} s: $*" >&2
      steps_skipped=$((steps_skipped + 1))
      return 125
    fi
    if ((left < limit)); then limit=$left; fi
  fi
  steps_run=$((steps_run + 1))
  timeout -k 10 "$limit" "$@" || rc=$?
  if ((rc == 124 || rc == 137)); then echo "!!! killed at its limit of ${limit} s: $*" >&2; fi
  if ((rc == 0)) && [[ -n "$mark" ]]; then
    mkdir -p "$HW_RESUME_DIR" && printf '%s\n' "$*" > "$mark"
    if [[ -n "$stdout_file" ]]; then cp "$stdout_file" "$mark.stdout"; fi
    if [[ -n "$stderr_file" ]]; then cp "$stderr_file" "$mark.stderr"; fi
    local named
    while IFS= read -r named; do
      mkdir -p "$mark.files/$(dirname "$named")" && cp "$out/$named" "$mark.files/$named"
    done < <(step_named_files "$@")
  fi
  return "$rc"
}
