#!/usr/bin/env bash
# Compiles the GPU code paths on a machine without a GPU, so neither rots: PEERREDUCE_GPU=cuda (nvcc from
# /usr/local/cuda, sm_90) and PEERREDUCE_GPU=hip (Debian's hipcc, gfx90a). Builds the library with its
# GPU transport, the kernels, the hardware test binary and the benchmark, unoptimised (a compile and
# link check: the hardware stage, ci/hardware.sh, builds what runs). Usage: ci/gpu-compile.sh [cuda] [hip]
set -euo pipefail
cd "$(dirname "$0")/.."
platforms=("$@")
[[ ${#platforms[@]} -gt 0 ]] || platforms=(cuda hip)
targets=(peerreduce peerreduce_kernels_gpu peerreduce_hardware_tests peerreduce-bench)
for platform in "${platforms[@]}"; do
  start=$(date +%s)
  build="build/gpu-$platform"
  args=(-DPEERREDUCE_GPU="$platform" -DCMAKE_BUILD_TYPE= -DPEERREDUCE_WERROR=ON)
  case "$platform" in
  cuda)
    nvcc=/usr/local/cuda/bin/nvcc
    if [[ ! -x "$nvcc" ]]; then
      echo "gpu-compile: $nvcc is missing; the CUDA path cannot be compiled on this machine" >&2
      exit 1
    fi
    args+=(-DCMAKE_CUDA_COMPILER="$nvcc")
    ;;
  hip)
    ci/install-deps.sh hip
    ;;
  *)
    echo "usage: ci/gpu-compile.sh [cuda] [hip]" >&2
    exit 2
    ;;
  esac
  cmake -S . -B "$build" -G Ninja "${args[@]}" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
  cmake --build "$build" --target "${targets[@]}"
  echo "gpu-compile: $platform path compiled and linked in $(( $(date +%s) - start )) s"
done
