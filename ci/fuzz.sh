#!/usr/bin/env bash
# Runs every libFuzzer target in fuzz/ for a bounded time and prints how many inputs each executed.
# Usage: ci/fuzz.sh [target...]      (default: all targets)
#   FUZZ_SECONDS   seconds per target (default 45)
#   FUZZ_JOBS      targets fuzzed at once (default: the number of cores)
# Builds those targets of the "fuzz" preset (clang 14, ASan + UBSan + libFuzzer) into build/fuzz. Each
# target starts from its seed corpus fuzz/corpus/<name>/ (read only) and writes what it discovers to
# build/fuzz/fuzz-work/<name>/. A crash, sanitizer report, leak, timeout or failed oracle stops that
# target, leaves the input in build/fuzz/fuzz-artifacts/<name>/ and makes this script exit non-zero.
# After fixing the bug, add that input to fuzz/corpus/<name>/: ctest replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-45}"
all_targets=(config tuning_table topology cli_options peer_record topology_agreement bootstrap_messages plan_verifier plan_text take_table)
targets=("$@")
if ((${#targets[@]} == 0)); then targets=("${all_targets[@]}"); fi

for t in "${targets[@]}"; do
  if [[ " ${all_targets[*]} " != *" $t "* ]]; then
    echo "ci/fuzz.sh: no target '$t' (known: ${all_targets[*]})" >&2
    exit 2
  fi
done

cmake --preset fuzz >/dev/null
# Only the targets run here: the preset's other targets (peerreduce-sim, its campaign and the fault
# injector) are compiled by the CI build and the other presets, and nothing here runs them (18 of the
# preset's 188 compiles, about a minute of CPU on two cores).
cmake --build --preset fuzz --target "${targets[@]/%/_fuzz}"

build=build/fuzz
# Leaks are bugs; abort so that libFuzzer keeps the input of a sanitizer report.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Each target is one single-threaded libFuzzer process: FUZZ_JOBS of them (default: one per core) run side
# by side, each on its own core for its whole FUZZ_SECONDS, so a target's executions are what it would
# get alone while the phase takes a fraction of the time.
jobs="${FUZZ_JOBS:-$(nproc)}"
run_target() {
  local t="$1" exe="$build/fuzz/$1_fuzz" work="$build/fuzz-work/$1" artifacts="$build/fuzz-artifacts/$1"
  mkdir -p "$work" "$artifacts"
  local status=0
  # -timeout: one input running 10 s is a hang; -rss_limit_mb: memory blow-ups are bugs too.
  "$exe" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" "$work" "fuzz/corpus/$t" >"$build/fuzz-work/$t.log" 2>&1 || status=$?
  echo "$status" > "$build/fuzz-work/$t.status"
}
rm -f "$build"/fuzz-work/*.status  # verdicts of an earlier run are not this one's
running=0
for t in "${targets[@]}"; do
  echo "ci/fuzz.sh: $t for ${seconds} s"
  run_target "$t" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true  # a target's verdict is its .status file, read below
    running=$((running - 1))
  fi
done
wait
rows=()
failed=()
for t in "${targets[@]}"; do
  log="$build/fuzz-work/$t.log" work="$build/fuzz-work/$t"
  status="$(cat "$build/fuzz-work/$t.status" 2>/dev/null || echo "no status")"
  execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$log" | tail -n 1)
  corpus=$(find "$work" -type f | wc -l)
  seeds=$(find "fuzz/corpus/$t" -type f | wc -l)
  verdict="ok"
  if [[ "$status" != 0 ]]; then
    verdict="FAILED (exit $status)"
    failed+=("$t")
    echo "ci/fuzz.sh: $t failed:" >&2
    grep -E "ERROR|fuzz oracle failed|SUMMARY|Test unit written" "$log" | head -n 8 >&2 || true
  fi
  rows+=("$(printf '| %-18s | %12s | %9s | %10s | %s |' "$t" "${execs:-?}" "$seeds" "$corpus" "$verdict")")
done

echo
echo "fuzzing summary (${seconds} s per target)"
# "new inputs": inputs this run added to the working corpus (new coverage), not bugs; a bug fails the
# target (result column) and leaves its input in the artifacts folder.
printf '| %-18s | %12s | %9s | %10s | %s |\n' "target" "executions" "seeds" "new inputs" "result"
printf '| %-18s | %12s | %9s | %10s | %s |\n' "---" "---:" "---:" "---:" "---"
printf '%s\n' "${rows[@]}"
if ((${#failed[@]} > 0)); then
  echo "ci/fuzz.sh: failing targets: ${failed[*]}; inputs in $build/fuzz-artifacts/<target>/, logs in $build/fuzz-work/" >&2
  echo "reproduce: $build/fuzz/<target>_fuzz <input>; after the fix, add the input to fuzz/corpus/<target>/" >&2
  exit 1
fi
