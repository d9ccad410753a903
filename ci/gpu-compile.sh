#!/usr/bin/env bash
# Compiles the GPU code paths on a machine without a GPU, so neither rots, and checks that the built
# kernels carry code for the GPUs they are meant for (ci/gpu_code.py):
# - PEERREDUCE_GPU=cuda (nvcc from /usr/local/cuda): every target whose code or link differs in a CUDA
#   build (the libraries, static and shared, the MPI and NCCL libraries, the GPU examples, the benchmark
#   and GPU tools, the hardware tests) and the API tests (every binary starts without libcuda.so, so their
#   discovery runs here). The simulator's test binaries compile the same sources in every build and link
#   what the API tests link, so the ci preset's build covers them; building them twice cost about a third
#   of this step. The kernels are compiled for sm_90 and its PTX (what the hardware stage runs), checked in
#   every kernel object, and a check against a list the build does not carry (sm_80) must fail (the check
#   is not vacuous); a configure with no architecture given must choose the default list users get
#   (cmake/PeerreduceOptions.cmake: sm_80, sm_86, sm_89, sm_90 code and compute_90 PTX). CI compiles sm_90
#   alone to keep its minutes: `CUDA_ARCHS=default ci/gpu-compile.sh cuda` compiles and checks the whole
#   list. Then the API tests of the CUDA build run: on a machine without a GPU, a GPU communicator is a
#   typed kUnavailable error.
# - PEERREDUCE_GPU=hip (Debian's hipcc, gfx90a): the library, kernels, hardware tests and benchmark,
#   then the offload targets of the kernel objects.
# Host code unoptimised, device code barely optimised (a compile and link check: the hardware stage, ci/hardware.sh,
# builds what runs, at -O3).
# Usage: ci/gpu-compile.sh [cuda] [hip]. A platform whose compiler is missing is SKIPPED with a loud line
# naming what is missing (CI's machine has both).
set -euo pipefail
cd "$(dirname "$0")/.."
platforms=("$@")
[[ ${#platforms[@]} -gt 0 ]] || platforms=(cuda hip)
for platform in "${platforms[@]}"; do
  start=$(date +%s)
  build="build/gpu-$platform"
  args=(-DPEERREDUCE_GPU="$platform" -DCMAKE_BUILD_TYPE= -DPEERREDUCE_WERROR=ON)
  # The device compilers' optimisers barely at work: what this step checks is that every kernel compiles,
  # assembles and links for its GPUs, not the code's speed (the hardware stage builds -O3 where it runs).
  # ptxas at -O0 (the push kernels, then in one file: 178 s, 106 s with -O0) and NVVM at -O1, which took
  # float8's push kernels from 117 s to 4.5 s on two cores; hipcc at -O1 (about 68 s to 54 s for that file; at
  # -O0 it leaves the ROCm device library's calls of another GPU generation's intrinsic, which the gfx90a
  # backend cannot select, and fails) and without inlining: the AMDGPU pipeline otherwise inlines every device
  # function into every kernel, and inlining with its clean-up was half of the device compile (the line kernels'
  # device side 102 s -> 16 s); calls are legal on gfx90a, so the check still compiles and links every kernel.
  cuda_flags=("-DCMAKE_CUDA_FLAGS=-Xptxas=-O0 -Xcicc=-O1")
  hip_flags=("-DPEERREDUCE_HIP_KERNEL_OPT=-O1;-fno-inline")
  case "$platform" in
  cuda)
    nvcc=/usr/local/cuda/bin/nvcc
    if [[ ! -x "$nvcc" ]]; then
      echo "gpu-compile: SKIPPED the CUDA path: $nvcc is missing (install the CUDA toolkit there to compile it)" >&2
      continue
    fi
    if [[ "${CUDA_ARCHS:-90}" == default ]]; then
      args+=(-DCMAKE_CUDA_COMPILER="$nvcc" -UCMAKE_CUDA_ARCHITECTURES "${cuda_flags[@]}")
      carried="80;86;89;90" missing="80;86;89;90;100"
    else
      args+=(-DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 "${cuda_flags[@]}")
      carried="90" missing="80;90"
    fi
    targets=(peerreduce peerreduce_shared peerreduce_kernels_gpu peerreduce_mpi peerreduce_mpi_shared
      peerreduce_mpi_transport peerreduce_nccl peerreduce_nccl_core gpu_callback_allreduce gpu_mpi_allreduce
      peerreduce-bench peerreduce-host-copy-bench peerreduce-gpu-debug peerreduce_hardware_tests
      peerreduce_api_tests)
    ;;
  hip)
    ci/install-deps.sh hip
    args+=("${hip_flags[@]}")
    targets=(peerreduce peerreduce_kernels_gpu peerreduce_hardware_tests peerreduce-bench)
    ;;
  *)
    echo "usage: ci/gpu-compile.sh [cuda] [hip]" >&2
    exit 2
    ;;
  esac
  cmake -S . -B "$build" -G Ninja "${args[@]}" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
  cmake --build "$build" --target "${targets[@]}"
  kernels="$build/kernels/libpeerreduce_kernels_gpu.a"
  if [[ "$platform" == cuda ]]; then
    python3 ci/gpu_code.py check cuda "$carried" "$kernels"
    if python3 ci/gpu_code.py check cuda "$missing" "$kernels" > /dev/null 2>&1; then
      echo "gpu-compile: the architecture check passed for $missing, which this build does not carry" >&2
      exit 1
    fi
    echo "gpu-compile: the check refuses a list the build does not carry ($missing), as it must"
    # What a user's configure with no architecture gets (configure only: the list, not the compile).
    defaults="$build-defaults"
    cmake -S . -B "$defaults" -G Ninja -DPEERREDUCE_GPU=cuda -DCMAKE_CUDA_COMPILER="$nvcc" -UCMAKE_CUDA_ARCHITECTURES \
      > "$defaults.configure.log" 2>&1 || { cat "$defaults.configure.log"; exit 1; }
    chosen="$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$defaults/CMakeCache.txt")"
    if [[ "$chosen" != "80-real;86-real;89-real;90-real;90-virtual" ]]; then
      echo "gpu-compile: a configure with no architecture chose '$chosen', not the default list" >&2
      exit 1
    fi
    echo "gpu-compile: a configure with no architecture chooses $chosen"
    ctest --test-dir "$build" -R '^api\.' --output-on-failure -j2 | tail -n 3
  else
    python3 ci/gpu_code.py check hip gfx90a "$build"/kernels/*_hip.o
    if python3 ci/gpu_code.py check hip "gfx90a;gfx942" "$build"/kernels/*_hip.o > /dev/null 2>&1; then
      echo "gpu-compile: the architecture check passed for gfx942, which this build does not carry" >&2
      exit 1
    fi
    echo "gpu-compile: the check refuses a list the build does not carry (gfx942), as it must"
  fi
  echo "gpu-compile: $platform path compiled, linked and checked in $(( $(date +%s) - start )) s"
done
