#!/usr/bin/env bash
# Builds the library, the simulator and its command with the README's other presets, whose flags the
# CI build (preset "ci": -O1, ASan + UBSan, coverage) does not exercise: "release" (-O3) and "tsan"
# (-O2, ThreadSanitizer). Every preset sets -Werror, so a warning any of them raises fails here (GCC's
# optimiser-dependent warnings, -Wstringop-overflow among them, appear only at -O2 and above).
# "default" and "coverage" are -O0 builds of the flags the CI build compiles at -O1.
set -euo pipefail
cd "$(dirname "$0")/.."
for preset in release tsan; do
  start=$(date +%s)
  cmake --preset "$preset" -DPEERREDUCE_BUILD_TESTS=OFF -DPEERREDUCE_BUILD_BENCH=OFF > "build/$preset.configure.log" 2>&1 ||
    { cat "build/$preset.configure.log"; exit 1; }
  cmake --build "build/$preset" --target peerreduce-sim peerreduce_shared
  echo "check-presets: $preset built warning-free (-Werror) in $(( $(date +%s) - start )) s"
done
