#!/usr/bin/env bash
# Configures tests/package/subproject (an application adding peerreduce with add_subdirectory) and
# checks what it got: no test, benchmark, example or tool targets; the test frameworks never looked for;
# the application's compile commands with C++20 and peerreduce's public include folders only.
# usage: add_subdirectory_use.sh SOURCE_DIR WORK_DIR C_COMPILER CXX_COMPILER
set -euo pipefail
source=$1 work=$2 cc=$3 cxx=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"
cmake -S "$source/tests/package/subproject" -B "$work" -G Ninja -DPEERREDUCE_SOURCE_DIR="$source" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" > "$work.log" 2>&1 ||
  { cat "$work.log"; fail "configuring an application that adds peerreduce with add_subdirectory"; }
read -r -a targets < "$work/peerreduce-targets.txt"
echo "peerreduce's targets in the application's build: ${#targets[@]}: ${targets[*]}"
for target in "${targets[@]}"; do
  case "$target" in
    *test* | *bench* | *fuzz* | peerreduce-sim | *campaign* | *reference* | sim_allreduce*)
      fail "the application's build has peerreduce's $target";;
  esac
done
command=$(python3 - "$work/compile_commands.json" <<'PY'
import json, sys
for entry in json.load(open(sys.argv[1])):
    if entry["file"].endswith("examples/sim_allreduce.cpp"):
        print(entry["command"])
PY
)
[[ -n "$command" ]] || fail "no compile command for the application"
echo "application compile command: $command"
[[ "$command" =~ -std=(c|gnu)\+\+20 ]] || fail "the application is not compiled as C++20"
for include in $(grep -o -e '-I[^ ]*' -e '-isystem [^ ]*' <<< "$command" | sed 's/^-I//; s/^-isystem //'); do
  case "$include" in
    "$source/lib/include" | "$source/sim/include" | "$work"/*/generated/include) ;;
    *) fail "the application sees $include, which is not a public include folder";;
  esac
done
echo "add_subdirectory use: passed"
