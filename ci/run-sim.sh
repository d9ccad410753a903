#!/usr/bin/env bash
# The main job on a fresh machine: installs the build tools, builds peerreduce (release) and runs an
# allreduce on simulated GPUs. Arguments go to peerreduce-sim (none: its default run); it runs in the
# caller's directory, so relative paths (--trace, --topology, PEERREDUCE_TUNING_FILE) mean what the
# caller means. PEERREDUCE_SIM=<peerreduce-sim already built> skips the setup and the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sim="${PEERREDUCE_SIM:-}"
if [[ -z "$sim" ]]; then
  (
    cd "$root"
    ci/install-deps.sh build >&2
    cmake -S . -B build/run -G Ninja -DCMAKE_BUILD_TYPE=Release -DPEERREDUCE_BUILD_TESTS=OFF \
      -DPEERREDUCE_BUILD_BENCH=OFF >&2
    cmake --build build/run --target peerreduce-sim >&2
  )
  sim="$root/build/run/sim/peerreduce-sim"
fi
exec "$sim" "$@"
