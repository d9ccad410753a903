#!/usr/bin/env bash
# The hardware stage. Three steps, because the GPU machine has no network, no compiler for our
# toolchain and no RapidCheck: build and package here, run there, report here.
#
#   ci/hardware.sh package        build with the CUDA backend and MPI (host coverage on) and copy what
#                                 the GPU machine needs into .hw/ (binaries, this script)
#   ci/hardware.sh run [NP...]    ON the GPU machine, from the repository root with .hw/ beside it: the
#                                 same test binaries under mpirun -np 2 and -np 4 with the real
#                                 transport, compute-sanitizer on the kernels, the benchmark against
#                                 NCCL; everything it writes goes to $OUT (default ./hw-out)
#   ci/hardware.sh report DIR     here, on what `run` wrote: the coverage report of host code and its gate
#
# Environment: HW_CASES (RapidCheck cases per property, default 200), HW_SEED (default 1),
# HW_BENCH=0 to skip the benchmark, HW_SANITIZE=0 to skip compute-sanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
step="${1:-}"
shift || true

case "$step" in
package)
  ci/install-deps.sh test
  build=build/hw
  cmake -S . -B "$build" -G Ninja -DPEERREDUCE_GPU=cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPEERREDUCE_COVERAGE=ON -DPEERREDUCE_WERROR=ON
  cmake --build "$build" --target peerreduce_property_tests peerreduce_hardware_tests peerreduce-bench peerreduce-gpu-debug peerreduce-p2p-probe
  rm -rf .hw && mkdir -p .hw
  cp "$build/tests/properties/peerreduce_property_tests" "$build/tests/hardware/peerreduce_hardware_tests" \
    "$build/bench/peerreduce-bench" "$build/tests/hardware/peerreduce-gpu-debug" "$build/bench/peerreduce-p2p-probe" .hw/
  strip --strip-debug .hw/peerreduce*  # debug info is not needed there; the transfer limit is 64 MiB
  echo "$PWD/$build" > .hw/build-dir
  du -sh .hw
  ;;
run)
  out="${OUT:-$PWD/hw-out}"
  mkdir -p "$out"
  export NCCL_NVLS_ENABLE=0  # never NVLink multicast: it can take a shared host's GPUs out of service
  cases="${HW_CASES:-200}"
  seed="${HW_SEED:-1}"
  mpi=(mpirun --allow-run-as-root --bind-to none --tag-output)
  # Host coverage: every rank writes its .gcda files under its own prefix, collected at the end.
  export GCOV_PREFIX_STRIP=0
  nps=("$@")
  [[ ${#nps[@]} -gt 0 ]] || nps=(2 4)
  gpus=$(nvidia-smi -L | wc -l)
  nvidia-smi topo -m > "$out/topology.txt" 2>&1 || true
  status=0
  for np in "${nps[@]}"; do
    if ((np > gpus)); then echo "skipping np=$np: only $gpus GPUs"; continue; fi
    for suite in "peerreduce_property_tests" "peerreduce_hardware_tests"; do
      log="$out/${suite}-np${np}.log"
      echo "=== $suite np=$np (cases per property $cases, seed $seed)"
      GCOV_PREFIX="$out/gcda/np$np" RC_PARAMS="seed=$seed max_success=$cases" \
        "${mpi[@]}" -np "$np" .hw/"$suite" > "$log" 2>&1 || status=1
      grep -E "\[  (PASSED|FAILED) \]|tests ran|^\[1,0\]<stdout>:peerreduce tests" "$log" | grep "1,0\]" || tail -20 "$log"
    done
  done
  if [[ "${HW_SANITIZE:-1}" != 0 ]]; then
    for tool in memcheck racecheck synccheck; do
      log="$out/sanitizer-$tool.log"
      echo "=== compute-sanitizer $tool, np=2"
      RC_PARAMS="seed=$seed max_success=10" "${mpi[@]}" -np 2 compute-sanitizer --tool "$tool" --error-exitcode 9 \
        .hw/peerreduce_property_tests --gtest_filter='AllreduceProperty.MatchesReferenceOnEveryRank' > "$log" 2>&1 || status=1
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | sort | uniq -c || tail -5 "$log"
    done
  fi
  if [[ "${HW_BENCH:-1}" != 0 ]]; then
    nccl="$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)/lib/libnccl.so.2"
    for np in "${nps[@]}"; do
      if ((np > gpus)); then continue; fi
      for dtype in fp32 bf16; do
        echo "=== peerreduce-bench np=$np $dtype"
        "${mpi[@]}" -np "$np" .hw/peerreduce-bench --nccl "$nccl" --dtype "$dtype" \
          --json "$out/bench-np$np-$dtype.json" --csv "$out/bench-np$np-$dtype.csv" > "$out/bench-np$np-$dtype.log" 2>&1 || status=1
        grep "^\[1,0\]" "$out/bench-np$np-$dtype.log" | sed 's/^\[1,0\]<stdout>://'
      done
    done
  fi
  (cd "$out" && tar czf gcda.tgz gcda 2>/dev/null && rm -rf gcda) || true
  # At most eight files come back from the GPU machine: logs and results travel as one archive.
  (cd "$out" && tar czf logs.tgz ./*.log ./*.txt ./*.json ./*.csv 2>/dev/null && rm -f ./*.log ./*.txt ./*.json ./*.csv) || true
  exit "$status"
  ;;
report)
  dir="${1:?usage: ci/hardware.sh report DIR}"
  build="$(cat .hw/build-dir)"
  tmp="$(mktemp -d)"
  tar xzf "$dir/gcda.tgz" -C "$tmp"
  # The .gcda files were written under <prefix>/<absolute build path>; merge every rank's into the build.
  find "$build" -name '*.gcda' -delete
  for prefix in "$tmp"/gcda/*; do
    (cd "$prefix$build" && find . -name '*.gcda' -print0 | while IFS= read -r -d '' f; do
      mkdir -p "$build/$(dirname "$f")"
      if [[ -f "$build/$f" ]]; then gcov-tool merge -o "$build/$(dirname "$f")" "$(dirname "$f")" "$build/$(dirname "$f")" >/dev/null 2>&1 || true
      else cp "$f" "$build/$f"; fi
    done)
  done
  coverage/gate.sh "$build" "${HW_LINE_MIN:-60}" "${HW_BRANCH_MIN:-30}"
  ;;
*)
  echo "usage: ci/hardware.sh package | run [NP...] | report DIR" >&2
  exit 2
  ;;
esac
