#!/usr/bin/env bash
# The project's test command (README, .ci/run): on a fresh machine installs what it needs, checks the
# formatting (ci/check-format.sh), builds
# everything once with ASan + UBSan + coverage (preset "ci"), runs every test with ctest, reports how
# many allreduce property cases ran, enforces the coverage gates on lib/ and sim/ while it compiles the
# CUDA and HIP code paths (ci/gpu-compile.sh: no GPU here, so they are compiled and linked, not run), builds the
# release and tsan presets' libraries (ci/check-presets.sh) and runs every fuzz target for a bounded time
# (ci/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# Each phase's time, so a CI run says where its minutes went (the budget is 40).
mark=$start
phase_done() {
  echo "ci/test.sh: $1 took $(($(date +%s) - mark)) s"
  mark=$(date +%s)
}
ci/install-deps.sh test
ci/check-format.sh
phase_done "dependencies and format"

cmake --preset ci
cmake --build --preset ci
phase_done "ci build"

build=build/ci
find "$build" -name '*.gcda' -delete  # coverage of this run only
case_log="$build/allreduce-cases.log"
: > "$case_log"
export PEERREDUCE_CASE_LOG="$PWD/$case_log"
# Sanitizer reports fail the test that triggered them. malloc_context_size: the stack ASan records at every
# allocation and free, 10 frames instead of its default 30; recording it (unwinding, then the stack depot) was
# about a tenth of the simulator suites' time. What is checked is the same; a report's allocation and free
# stacks show their 10 innermost frames (the faulting access keeps its whole stack).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:malloc_context_size=10"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --preset ci
phase_done "ctest"

cases=$(awk '{s += $2} END {print s + 0}' "$case_log")
echo "allreduce cases executed by the property and case suites: $cases"

# The gate (gcovr: one Python process, one core busy) runs beside the GPU compiles, which neither read
# nor write build/ci: one after the other, the second core sat idle for the whole gate. Its output is
# shown after them, and its verdict fails the run as before.
gate_log="$build/coverage-gate.log"
# In a process group of its own, so that a failure of the GPU compiles stops gcovr too.
setsid coverage/gate.sh "$build" > "$gate_log" 2>&1 &
gate_pid=$!
trap 'kill -- -"$gate_pid" 2> /dev/null || true' EXIT
ci/gpu-compile.sh cuda hip
phase_done "GPU compiles (the coverage gate beside them)"
gate_status=0
wait "$gate_pid" || gate_status=$?
trap - EXIT
cat "$gate_log"
if ((gate_status != 0)); then
  echo "ci/test.sh: the coverage gate failed (exit $gate_status)" >&2
  exit "$gate_status"
fi
phase_done "coverage gate (what was left of it)"

# The README's other presets build warning-free with their own optimisation levels.
ci/check-presets.sh
phase_done "presets"

# Every libFuzzer target for a bounded time (35 s each, one target per core at a time: 10 targets in
# about 3 minutes on 2 cores, plus their build).
FUZZ_SECONDS="${FUZZ_SECONDS:-35}" ci/fuzz.sh
phase_done "fuzzing"
echo "ci/test.sh: passed in $(( $(date +%s) - start )) s"
