#!/usr/bin/env bash
# Builds the library, the simulator and its command with the README's other presets, whose flags the
# CI build (preset "ci": -O1, ASan + UBSan, coverage) does not exercise: "release" (-O3) and "tsan"
# (-O2, ThreadSanitizer). Every preset sets -Werror, so a warning any of them raises fails here (GCC's
# optimiser-dependent warnings, -Wstringop-overflow among them, appear only at -O2 and above).
# "default" and "coverage" are -O0 builds of the flags the CI build compiles at -O1.
# Then the GPU presets the README installs on GPU machines, "release-cuda" and "release-hip", are configured
# (not built: ci/gpu-compile.sh compiles those code paths) and must build for their GPUs: a GPU machine
# given a library without GPUs fails only at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
for preset in release tsan; do
  start=$(date +%s)
  cmake --preset "$preset" -DPEERREDUCE_BUILD_TESTS=OFF -DPEERREDUCE_BUILD_BENCH=OFF > "build/$preset.configure.log" 2>&1 ||
    { cat "build/$preset.configure.log"; exit 1; }
  cmake --build "build/$preset" --target peerreduce-sim peerreduce_shared
  echo "check-presets: $preset built warning-free (-Werror) in $(( $(date +%s) - start )) s"
done
for preset in release-cuda release-hip; do
  gpu=${preset#release-}
  compiler=hipcc
  [[ "$gpu" == cuda ]] && compiler=nvcc
  if ! command -v "$compiler" > /dev/null && [[ ! -x /usr/local/cuda/bin/$compiler ]]; then
    echo "check-presets: SKIPPED $preset: $compiler is missing" >&2
    continue
  fi
  cmake --preset "$preset" -DPEERREDUCE_BUILD_TESTS=OFF -DPEERREDUCE_BUILD_BENCH=OFF \
    > "build/$preset.configure.log" 2>&1 || { cat "build/$preset.configure.log"; exit 1; }
  grep -qx "PEERREDUCE_GPU:STRING=$gpu" "build/$preset/CMakeCache.txt" ||
    { echo "check-presets: $preset does not build for $gpu GPUs" >&2; exit 1; }
  echo "check-presets: $preset configures a build for $gpu GPUs"
done
