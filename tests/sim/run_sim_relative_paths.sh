#!/usr/bin/env bash
# ci/run-sim.sh from another directory: a relative --trace path lands in the caller's directory (not
# the repository's), and a relative --topology path is read from there.
# usage: run_sim_relative_paths.sh SOURCE_DIR PEERREDUCE_SIM WORK_DIR
set -euo pipefail
source=$1 sim=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
cp "$source/tests/sim/data/square.topology" here.topology
rm -f "$source/rel-trace.json"
PEERREDUCE_SIM="$sim" bash "$source/ci/run-sim.sh" --ranks 4 --count 100 --topology here.topology --trace rel-trace.json
[[ -s "$work/rel-trace.json" ]] || { echo "FAIL: the trace is not in the caller's directory" >&2; exit 1; }
[[ ! -e "$source/rel-trace.json" ]] || { echo "FAIL: the trace went to the repository" >&2; exit 1; }
echo "relative paths resolved against the caller's directory"
