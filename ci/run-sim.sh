#!/usr/bin/env bash
# The main job on a fresh machine: installs the build tools, builds peerreduce (release) and runs an
# allreduce on simulated GPUs. Arguments go to peerreduce-sim (none: its default run).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh build >&2
cmake -S . -B build/run -G Ninja -DCMAKE_BUILD_TYPE=Release -DPEERREDUCE_BUILD_TESTS=OFF -DPEERREDUCE_BUILD_BENCH=OFF >&2
cmake --build build/run --target peerreduce-sim >&2
exec build/run/sim/peerreduce-sim "$@"
