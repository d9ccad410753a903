#!/usr/bin/env bash
# Coverage gate: line and branch coverage of lib/ and sim/ (or of COVERAGE_FILTERS, space-separated
# path prefixes) from the .gcda files a test run left in the build directory.
# Usage: [COVERAGE_FILTERS="lib/gpu/ ..."] coverage/gate.sh BUILD_DIR [LINE_MIN BRANCH_MIN]
# Prints the summary and a per-file table (coverage/report.txt); exits non-zero below a gate.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?usage: coverage/gate.sh BUILD_DIR [LINE_MIN BRANCH_MIN]}"
line_min="${2:-90}"
branch_min="${3:-70}"
report="$build/coverage-report.txt"
# The build directory is also the search path, so coverage files of other builds are never mixed in.
filters=()
for f in ${COVERAGE_FILTERS:-lib/ sim/}; do filters+=(--filter "$f"); done
gcovr --config coverage/gcovr.cfg --root . --object-directory "$build" "${filters[@]}" \
  --txt "$report" --fail-under-line "$line_min" --fail-under-branch "$branch_min" "$build" && status=0 || status=$?
echo "coverage gates: lines >= ${line_min}%, branches >= ${branch_min}% on ${COVERAGE_FILTERS:-lib/ sim/} (per file: $report)"
if ((status != 0)); then
  echo "coverage gate FAILED (gcovr exit $status)"
  exit "$status"
fi
echo "coverage gate passed"
