#!/usr/bin/env bash
# The hardware stage: build on the GPU machine (or package here), run there, report.
#
#   ci/hardware.sh build          ON the GPU machine: build the stage there with every core into .hw/
#                                 (the usual way: `ci/hardware.sh build && ci/hardware.sh run 2 4`)
#   ci/hardware.sh package        build here with the CUDA backend and MPI (host coverage on) and copy what
#                                 the GPU machine needs into .hw/ (for machines that cannot build)
#   ci/hardware.sh unpack         ON the GPU machine: uncompress the packaged binaries (run does it too)
#   ci/hardware.sh run [NP...]    ON the GPU machine, from the repository root with .hw/ beside it: the
#                                 same test binaries under mpirun -np 2 and -np 4 with the real
#                                 transport (and with user-written plans, docs/PLANS.md), compute-sanitizer on the kernels, the benchmark (graph replays, and eager calls for allreduce) of every
#                                 collective against NCCL; everything it writes goes to $OUT (default ./hw-out). With
#                                 fewer GPUs than NP, the ranks share device 0 (threads of one process
#                                 for the property suite, processes for the hardware suite)
#   ci/hardware.sh save-build OUT ON the GPU machine after `build`: .hw/ as a few compressed parts and a manifest
#                                 in OUT (ci/hw_build_cache.py), small enough to come back from the machine
#   ci/hardware.sh restore-build DIR  ON the next GPU machine: those parts back as .hw/, each part and file
#                                 checked, instead of building again (a machine that went back lost its build;
#                                 HW_BUILD_TAG names the tree on both sides, default `ci/hardware.sh build-tag`:
#                                 a hash of every tracked file but docs/ and *.md)
#   ci/hardware.sh report DIR     here, on what `run` wrote: the coverage report of host code and its gate
#                                 (here after `package`; there after `HW_COVERAGE=1 ci/hardware.sh build`)
#
# Environment: HW_CASES (RapidCheck cases per property, default 200), HW_VARIANT_CASES (per property in
# the kernel-variant passes, default 50), HW_SEED (default 1),
# HW_RC_EXTRA (more RapidCheck settings, e.g. "noshrink=1 "), HW_SUITES=0 to skip the suites, HW_BENCH=0 to skip the benchmark, HW_SANITIZE=0 to skip compute-sanitizer, HW_STEP_TIMEOUT_S (each
# step's limit, default 900 s: a step past it is killed, named in the log, and fails the stage), HW_DEADLINE_S
# (the whole run's limit: later steps get what is left, or are skipped and named, so the archives are
# written in time), HW_RESUME_DIR (a stage over several calls of one warm machine: steps that passed in an
# earlier run with the same folder are not run again, e.g. `HW_DEADLINE_S=540 HW_RESUME_DIR=.hw/resume
# ci/hardware.sh run 4` in each call; ci/step_limits.sh),
# HW_THREADS_TIMEOUT_MS (the communicator timeout of ranks sharing one GPU as threads, default 5000: their
# kernels run side by side, so a wait longer than that is a fault, and a failing property's shrinking
# must not spend the default 30 s on each case it tries).
# HW_COPY_ENGINE_NPS (the world sizes of the copy-engine step, default the first NP).
# Host-staged links: HW_HOST_STAGED=1 (default) runs their steps before the others, =only runs them
# alone (`HW_HOST_STAGED=only ci/hardware.sh run`), =0 skips them. They are: the property suite
# (HW_HOST_STAGED_CASES per property, default 50; HW_HOST_STAGED_PROPERTY_FILTER, by default all but the
# masked-world property, whose own masks the stage's would replace) and the hardware suite with every link masked
# host-staged and with one mixed mask (host:0-1, at 3 ranks and more) at each NP, each rank's pinned
# statistics printed from the hardware suite (its HostStaged test checks them), at two GPUs the property suite
# with the two-rank pushing kernels forced through host memory from one vector, compute-sanitizer memcheck
# on a host-staged run, peerreduce-host-copy-bench (copy engine against kernel stores and loads to mapped
# host memory, one GPU), and, with NP GPUs, peerreduce-bench host-staged beside NCCL with NCCL_P2P_DISABLE=1.
# With them: the hardware suite with failed access probes (PEERREDUCE_GPU_FAULT_PROBE_PAIRS=0-1, and =all)
# at each NP, which must fall back to host-staged links (HW_PROBE_FALLBACK_FILTER narrows the suite).
set -euo pipefail
cd "$(dirname "$0")/.."
step="${1:-}"
shift || true

case "$step" in
package)
  ci/install-deps.sh test
  build=build/hw
  # sm_90 alone, as `build` below (the library's default list, five architectures, would make each binary
  # several times larger and the packaging slower).
  cmake -S . -B "$build" -G Ninja -DPEERREDUCE_GPU=cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
    -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPEERREDUCE_COVERAGE=ON -DPEERREDUCE_WERROR=ON \
    -DCMAKE_CXX_FLAGS=-fprofile-update=atomic  # counters updated by several threads (MPI, GPU runtime) stay exact
  # What the stage runs (each binary carries every kernel, about 15 MiB; the debugging tool
  # peerreduce-gpu-debug is built, not shipped, to stay under the 64 MiB that travel to the GPU machine).
  cmake --build "$build" --target peerreduce_property_tests peerreduce_hardware_tests peerreduce-bench peerreduce-gpu-debug \
    peerreduce-p2p-probe peerreduce-host-copy-bench gpu_callback_allreduce gpu_mpi_allreduce peerreduce-sim
  rm -rf .hw && mkdir -p .hw
  cp "$build/tests/properties/peerreduce_property_tests" "$build/tests/hardware/peerreduce_hardware_tests" \
    "$build/bench/peerreduce-bench" "$build/bench/peerreduce-p2p-probe" "$build/bench/peerreduce-host-copy-bench" .hw/
  # The C examples as an application builds them (C API only): a callback bootstrap and MPI.
  cp "$build/examples/gpu_callback_allreduce" .hw/peerreduce-example-callbacks
  cp "$build/examples/gpu_mpi_allreduce" .hw/peerreduce-example-mpi
  cp "$build/sim/peerreduce-sim" .hw/peerreduce-sim  # tests/python/test_plans.py checks plans with it
  python3 ci/gpu_code.py check cuda "${CMAKE_CUDA_ARCHITECTURES:-90}" "$build/kernels/libpeerreduce_kernels_gpu.a"
  # The shared library the Python package loads (ctypes), linked from this build's archives: every
  # object, the CUDA runtime statically, the coverage runtime since the objects are instrumented.
  g++ -shared -o .hw/libpeerreduce.so -Wl,--whole-archive "$build/sim/libpeerreduce_sim.a" "$build/lib/libpeerreduce.a" \
    "$build/kernels/libpeerreduce_kernels.a" "$build/kernels/libpeerreduce_kernels_gpu.a" -Wl,--no-whole-archive \
    /usr/local/cuda/lib64/libcudart_static.a -lpthread -ldl -lrt --coverage
  strip --strip-debug .hw/peerreduce* .hw/libpeerreduce.so  # debug info is not needed there; 64 MiB travel
  # Compressed for the trip (each binary carries every kernel; together they no longer fit 64 MiB);
  # `run` unpacks them. gzip -1: a third of the size in seconds.
  gzip -1 .hw/peerreduce* .hw/libpeerreduce.so
  echo "$PWD/$build" > .hw/build-dir
  # The coverage notes (.gcno) of this build match only .gcda files from these binaries: report checks.
  sha256sum "$build/tests/hardware/peerreduce_hardware_tests" | cut -d' ' -f1 > .hw/build-id
  du -sh .hw
  ;;
build)
  # ON the GPU machine: the stage's binaries built where they run, with every core (64 cores: under three
  # minutes; packaging on the 2-core machine takes a quarter of an hour), into .hw/ as `package` leaves
  # them, so `run` works unchanged. The image has cmake, g++, nvcc, Open MPI and GoogleTest; RapidCheck
  # comes with the tree: HW_RAPIDCHECK_ROOT (default .carry/rapidcheck) is where Debian's librapidcheck-dev
  # was unpacked (apt-get download librapidcheck-dev && dpkg -x librapidcheck-dev_*.deb .carry/rapidcheck).
  # HW_COVERAGE=1 instruments host code (`report` then runs there, where the notes are and where gcov matches
  # the compiler; the image lacks gcovr, so put one on PATH: it is pure Python). Release by default.
  rapidcheck="${HW_RAPIDCHECK_ROOT:-.carry/rapidcheck}/usr/lib/x86_64-linux-gnu/cmake/rapidcheck"
  build="${HW_BUILD_DIR:-/tmp/peerreduce-hw}"
  nccl_dir="$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)"
  coverage=()
  if [[ "${HW_COVERAGE:-0}" != 0 ]]; then coverage=(-DPEERREDUCE_COVERAGE=ON -DCMAKE_CXX_FLAGS=-fprofile-update=atomic); fi
  started=$(date +%s)
  cmake -S . -B "$build" -G Ninja -DPEERREDUCE_GPU=cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
    -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" -DCMAKE_BUILD_TYPE="${HW_BUILD_TYPE:-Release}" \
    -Drapidcheck_DIR="$PWD/$rapidcheck" ${nccl_dir:+-DPEERREDUCE_NCCL_INCLUDE_DIR="$nccl_dir/include"} "${coverage[@]}" \
    > "$build.configure.log" 2>&1 || { tail -30 "$build.configure.log"; exit 1; }
  cmake --build "$build" -j "$(nproc)" --target peerreduce_property_tests peerreduce_hardware_tests peerreduce-bench \
    peerreduce-p2p-probe peerreduce-host-copy-bench gpu_callback_allreduce gpu_mpi_allreduce peerreduce_shared \
    peerreduce_nccl peerreduce-sim > "$build.build.log" 2>&1 || { grep -B2 -A12 " error" "$build.build.log" | head -60; exit 1; }
  rm -rf .hw && mkdir -p .hw
  cp "$build/tests/properties/peerreduce_property_tests" "$build/tests/hardware/peerreduce_hardware_tests" \
    "$build/bench/peerreduce-bench" "$build/bench/peerreduce-p2p-probe" "$build/bench/peerreduce-host-copy-bench" .hw/
  cp "$build/examples/gpu_callback_allreduce" .hw/peerreduce-example-callbacks
  cp "$build/examples/gpu_mpi_allreduce" .hw/peerreduce-example-mpi
  cp "$build/sim/peerreduce-sim" .hw/peerreduce-sim  # tests/python/test_plans.py checks plans with it
  cp -L "$build/package/libpeerreduce.so" .hw/libpeerreduce.so
  cp -L "$build/nccl/libpeerreduce_nccl.so" .hw/libpeerreduce_nccl.so
  echo "$build" > .hw/build-dir
  # As `package` leaves it: `report` checks that the notes in the build are those of the binaries that ran.
  sha256sum "$build/tests/hardware/peerreduce_hardware_tests" | cut -d' ' -f1 > .hw/build-id
  echo "build: $(($(date +%s) - started)) s on $(nproc) cores into $build"
  ;;
save-build | restore-build)
  # A build carried to the next machine: minutes of building saved per machine (docs/PERF.md, how to measure).
  # The default tag names what the binaries are built from: every tracked file but the documentation (docs/
  # and *.md), so a commit of prose alone keeps a saved build usable. `ci/hardware.sh build-tag` prints it,
  # for a tree without git (an archive unpacked on the GPU machine) to be given it as HW_BUILD_TAG.
  tag="${HW_BUILD_TAG:-$(ci/build_tag.sh 2>/dev/null || echo untagged)}"
  if [[ "$step" == save-build ]]; then
    python3 ci/hw_build_cache.py save .hw "${1:?usage: ci/hardware.sh save-build OUT}" --tag "$tag"
  else
    python3 ci/hw_build_cache.py restore "${1:?usage: ci/hardware.sh restore-build DIR}" .hw --expect-tag "$tag"
  fi
  ;;
build-tag)
  ci/build_tag.sh
  ;;
unpack)
  # The packaged binaries, uncompressed in place (for running them by hand too).
  for packed in .hw/*.gz; do
    if [[ -e "$packed" ]]; then gunzip -f "$packed"; fi
  done
  ;;
run)
  bash "$0" unpack
  out="${OUT:-$PWD/hw-out}"
  mkdir -p "$out"
  export GTEST_COLOR=no      # plain summaries, so the lines below can be found in the logs
  export NCCL_NVLS_ENABLE=0  # never NVLink multicast: it can take a shared host's GPUs out of service
  cases="${HW_CASES:-200}"
  seed="${HW_SEED:-1}"
  mpi=(mpirun --allow-run-as-root --bind-to none --tag-output)
  # Every step has a limit, and with HW_DEADLINE_S the whole run has one (ci/step_limits.sh: bounded).
  source ci/step_limits.sh
  threads_timeout="${HW_THREADS_TIMEOUT_MS:-5000}"
  # Host coverage: every rank writes its .gcda files under its own prefix, collected at the end.
  export GCOV_PREFIX_STRIP=0
  nps=("$@")
  [[ ${#nps[@]} -gt 0 ]] || nps=(2 4)
  gpus=$(nvidia-smi -L | wc -l)
  nvidia-smi topo -m > "$out/topology.txt" 2>&1 || true
  status=0
  # At most eight files come back from the GPU machine: logs and results travel as one archive.
  finish() {
    echo "=== run: ${steps_run} steps in $(($(date +%s) - started_at)) s, ${steps_skipped} skipped past the deadline, ${steps_resumed} passed in an earlier run (HW_RESUME_DIR), status ${status}"
    # A stage resumed over several calls (HW_RESUME_DIR) adds to the archives of the earlier calls: the
    # report needs the coverage of every step, not only of the last call's.
    if [[ -n "${HW_RESUME_DIR:-}" ]]; then
      for archive in gcda.tgz logs.tgz; do
        if [[ -f "$out/$archive" ]]; then (cd "$out" && tar xzf "$archive" --skip-old-files) || true; fi
      done
    fi
    (cd "$out" && tar czf gcda.tgz gcda 2>/dev/null && rm -rf gcda) || true
    (cd "$out" && tar czf logs.tgz ./*.log ./*.txt ./*.json ./*.csv ./*.svg 2>/dev/null && rm -f ./*.log ./*.txt ./*.json ./*.csv ./*.svg) || true
    exit "$status"
  }
  host_staged="${HW_HOST_STAGED:-1}"
  if [[ "$host_staged" != 0 ]]; then
    staged_cases="${HW_HOST_STAGED_CASES:-50}"
    # The masked-world property draws masks of its own, which the stage's mask would replace (the
    # environment wins): it runs in the ordinary passes.
    staged_filter="${HW_HOST_STAGED_PROPERTY_FILTER:--TopologyProperty.MaskedWorldIsCorrectOrRefusedOnEveryRank}"
    for np in "${nps[@]}"; do
      masks=("all=host:all")
      if ((np >= 3)); then masks+=("mixed=host:0-1"); fi
      for entry in "${masks[@]}"; do
        name="${entry%%=*}" mask="${entry#*=}"
        log="$out/host-staged-$name-properties-np$np.log"
        echo "=== host-staged ($name: $mask) peerreduce_property_tests np=$np (cases per property $staged_cases)"
        if ((np > gpus)); then
          PEERREDUCE_LINK_MASK="$mask" PEERREDUCE_TEST_GPU_RANKS="$np" PEERREDUCE_TIMEOUT_MS="$threads_timeout" \
            RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=$staged_cases" GCOV_PREFIX="$out/gcda/host-$name-np$np-threads" \
            bounded .hw/peerreduce_property_tests --gtest_filter="$staged_filter" > "$log" 2>&1 || status=1
          grep -E "\[  (PASSED|FAILED)  \]|tests ran|^peerreduce tests" "$log" || tail -20 "$log"
        else
          RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=$staged_cases" bounded "${mpi[@]}" -x PEERREDUCE_LINK_MASK="$mask" \
            -np "$np" bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/host-$name-np$np" \
            .hw/peerreduce_property_tests --gtest_filter="$staged_filter" > "$log" 2>&1 || status=1
          grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" | grep "1,0\]" || tail -20 "$log"
        fi
        # One process per rank (sharing device 0 when there are fewer GPUs): shared-memory segments mapped
        # by name between processes; every rank prints its pinned statistics.
        log="$out/host-staged-$name-hardware-np$np.log"
        echo "=== host-staged ($name) peerreduce_hardware_tests np=$np as processes"
        bounded "${mpi[@]}" -x PEERREDUCE_LINK_MASK="$mask" -np "$np" \
          bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/host-$name-np$np-processes" \
          .hw/peerreduce_hardware_tests --gtest_filter="${HW_HOST_STAGED_FILTER:-*}" > "$log" 2>&1 || status=1
        grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" | grep "1,0\]" || tail -20 "$log"
        grep "host-staged: rank" "$log" | sed 's/^\[[0-9,]*\]<stdout>://' || { echo "!!! no pinned statistics printed"; status=1; }
      done
      # The copy-engine two-shot in its host-staged form (owners reduce from private device slots their
      # copy engines filled), forced, its copies on the copy engines: the property suite, every link staged.
      # Ranks sharing a GPU as threads only at the first NP, as the copy-engine step below (docs/PERF.md:
      # the copy-engine path can hang there at three ranks and more).
      log="$out/host-staged-copy-engines-np$np.log"
      if ((np > gpus)) && [[ "$np" != "${nps[0]}" ]]; then continue; fi
      echo "=== host-staged (all) peerreduce_property_tests np=$np, copy-engine two-shot on the copy engines"
      if ((np > gpus)); then
        PEERREDUCE_LINK_MASK=host:all PEERREDUCE_GPU_COPY_ENGINES=1 PEERREDUCE_ALGO=copy-engine-two-shot \
          PEERREDUCE_TEST_GPU_RANKS="$np" PEERREDUCE_TIMEOUT_MS="$threads_timeout" \
          RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=$staged_cases" GCOV_PREFIX="$out/gcda/host-ce-np$np-threads" \
          bounded .hw/peerreduce_property_tests --gtest_filter="$staged_filter" > "$log" 2>&1 || status=1
        grep -E "\[  (PASSED|FAILED)  \]|tests ran|^peerreduce tests" "$log" || tail -20 "$log"
      else
        RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=$staged_cases" bounded "${mpi[@]}" -x PEERREDUCE_LINK_MASK=host:all \
          -x PEERREDUCE_GPU_COPY_ENGINES=1 -x PEERREDUCE_ALGO=copy-engine-two-shot -np "$np" \
          bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/host-ce-np$np" \
          .hw/peerreduce_property_tests --gtest_filter="$staged_filter" > "$log" 2>&1 || status=1
        grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" | grep "1,0\]" || tail -20 "$log"
      fi
      # The two-rank pushing one-shot and collectives through host memory (the default from the host
      # thresholds, lib/config/gpu_settings.h), forced from one vector with the host lines off, so every case
      # of the suite pushes, in one-vector pieces.
      if ((np == 2 && np <= gpus)); then
        log="$out/host-staged-push-np$np.log"
        echo "=== host-staged (all) peerreduce_property_tests np=$np, pushed from one vector"
        RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=$staged_cases" bounded "${mpi[@]}" -x PEERREDUCE_LINK_MASK=host:all \
          -x PEERREDUCE_GPU_LL_HOST_MAX_BYTES=0 -x PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1 \
          -x PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=1 -x PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES=16 -np "$np" \
          bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/host-push-np$np" \
          .hw/peerreduce_property_tests --gtest_filter="$staged_filter" > "$log" 2>&1 || status=1
        grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" | grep "1,0\]" || tail -20 "$log"
      fi
    done
    log="$out/host-staged-sanitizer-memcheck.log"
    echo "=== compute-sanitizer memcheck, host-staged, np=2"
    if ((gpus < 2)); then
      PEERREDUCE_LINK_MASK=host:all PEERREDUCE_TEST_GPU_RANKS=2 RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=10" \
        bounded compute-sanitizer --tool memcheck --error-exitcode 9 \
        .hw/peerreduce_property_tests --gtest_filter='AllreduceProperty.MatchesReferenceOnEveryRank' > "$log" 2>&1 || status=1
    else
      RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=10" bounded "${mpi[@]}" -x PEERREDUCE_LINK_MASK=host:all -np 2 \
        compute-sanitizer --tool memcheck --error-exitcode 9 \
        .hw/peerreduce_property_tests --gtest_filter='AllreduceProperty.MatchesReferenceOnEveryRank' > "$log" 2>&1 || status=1
    fi
    grep -E "ERROR SUMMARY" "$log" | sort | uniq -c || tail -5 "$log"
    echo "=== peerreduce-host-copy-bench (device 0): copy engine against kernel stores / loads"
    bounded .hw/peerreduce-host-copy-bench --csv > "$out/host-copy-bench.csv" 2> "$out/host-copy-bench.log" || status=1
    bounded .hw/peerreduce-host-copy-bench | tee -a "$out/host-copy-bench.log" || status=1
    if [[ "${HW_BENCH:-1}" != 0 ]]; then
      nccl="$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)/lib/libnccl.so.2"
      for np in "${nps[@]}"; do
        if ((np > gpus)); then continue; fi
        echo "=== peerreduce-bench np=$np fp32, every link host-staged, NCCL with NCCL_P2P_DISABLE=1"
        bounded "${mpi[@]}" -np "$np" .hw/peerreduce-bench --nccl "$nccl" --nccl-p2p-disable \
          --link-mask host:all --csv "$out/bench-host-staged-np$np.csv" > "$out/bench-host-staged-np$np.log" 2>&1 || status=1
        grep "^\[1,0\]" "$out/bench-host-staged-np$np.log" | sed 's/^\[1,0\]<stdout>://'
      done
    fi
    # Failed access probes fall back to host-staged links: the hardware suite with the probe of one pair
    # (0-1) and of every pair failing (PEERREDUCE_GPU_FAULT_PROBE_PAIRS), one process per rank (sharing
    # device 0 when there are fewer GPUs); its ProbeFallbackHw tests check the agreed links and the results.
    for np in "${nps[@]}"; do
      for entry in "one=0-1" "all=all"; do
        name="${entry%%=*}" pairs="${entry#*=}"
        log="$out/probe-fallback-$name-hardware-np$np.log"
        echo "=== probe fallback ($name: PEERREDUCE_GPU_FAULT_PROBE_PAIRS=$pairs) peerreduce_hardware_tests np=$np"
        bounded "${mpi[@]}" -x PEERREDUCE_GPU_FAULT_PROBE_PAIRS="$pairs" -np "$np" \
          bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/probe-$name-np$np" \
          .hw/peerreduce_hardware_tests --gtest_filter="${HW_PROBE_FALLBACK_FILTER:--MultiMachineHw.*}" > "$log" 2>&1 || status=1
        grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" | grep "1,0\]" || tail -20 "$log"
        grep -c "fall back to host-staged links" "$log" > /dev/null || { echo "!!! no fallback logged in $log"; status=1; }
      done
    done
  fi
  if [[ "$host_staged" == only ]]; then finish; fi
  suites="${HW_SUITES:-1}"  # 0: skip the property and hardware suites and the kernel variants
  for np in "${nps[@]}"; do
    if [[ "$suites" == 0 ]]; then break; fi
    if ((np > gpus)); then
      # More ranks than GPUs: the ranks share device 0. The property suite runs its ranks as threads of
      # one process (their kernels side by side, sized to be resident together); the hardware suite,
      # written for one rank per process, runs as np processes on the one device (the device
      # time-slices between them: correct, slow; HW_SHARED_FILTER limits it).
      log="$out/peerreduce_property_tests-np${np}-one-gpu.log"
      echo "=== peerreduce_property_tests np=$np as threads on one GPU (cases per property $cases, seed $seed)"
      PEERREDUCE_TEST_GPU_RANKS="$np" PEERREDUCE_TIMEOUT_MS="$threads_timeout" RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=$cases" \
        GCOV_PREFIX="$out/gcda/np$np-threads" bounded .hw/peerreduce_property_tests > "$log" 2>&1 || status=1
      grep -E "\[  (PASSED|FAILED)  \]|tests ran|^peerreduce tests" "$log" || tail -20 "$log"
      log="$out/peerreduce_hardware_tests-np${np}-one-gpu.log"
      echo "=== peerreduce_hardware_tests np=$np as processes on one GPU"
      bounded "${mpi[@]}" -np "$np" bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/np$np-shared" \
        .hw/peerreduce_hardware_tests --gtest_filter="${HW_SHARED_FILTER:-*}" > "$log" 2>&1 || status=1
      grep -E "\[  (PASSED|FAILED)  \]|tests ran|^\[1,0\]<stdout>:peerreduce tests" "$log" | grep "1,0\]" || tail -20 "$log"
      continue
    fi
    for suite in "peerreduce_property_tests" "peerreduce_hardware_tests"; do
      log="$out/${suite}-np${np}.log"
      echo "=== $suite np=$np (cases per property $cases, seed $seed)"
      # One coverage prefix per rank: ranks never write the same .gcda file (report merges them).
      RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=$cases" bounded "${mpi[@]}" -np "$np" \
        bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/np$np" .hw/"$suite" > "$log" 2>&1 || status=1
      grep -E "\[  (PASSED|FAILED)  \]|tests ran|^\[1,0\]<stdout>:peerreduce tests" "$log" | grep "1,0\]" || tail -20 "$log"
    done
  done
  # Kernel variants: the property suite again at the largest world, with settings that send the
  # programs the default sizes would not to each other kernel (every case is still compared bit for
  # bit with the simulator): push for every two-shot, the pulling two-shot where lines would run (up to
  # 1 MiB by default), the direct reduce-scatters, all-gathers and broadcasts as lines wherever a writer's
  # lines hold their block, the same in the interpreter while allreduce keeps its kernels, and the plan
  # interpreter for everything.
  variant_np="${nps[-1]}"
  for variant in "PEERREDUCE_GPU_PUSH_MIN_BYTES=1" "PEERREDUCE_GPU_LL2_MAX_BYTES=0" \
    "PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES=1G" "PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES=0" "PEERREDUCE_GPU_FUSED=0"; do
    if [[ "$suites" == 0 ]]; then break; fi
    name="${variant//=/-}"  # one setting may give two variants: the value names the run too
    log="$out/variant-${name}-np${variant_np}.log"
    echo "=== peerreduce_property_tests np=$variant_np with $variant (cases per property ${HW_VARIANT_CASES:-50})"
    if ((variant_np > gpus)); then  # ranks as threads on one GPU
      PEERREDUCE_TEST_GPU_RANKS="$variant_np" PEERREDUCE_TIMEOUT_MS="$threads_timeout" \
        RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=${HW_VARIANT_CASES:-50}" GCOV_PREFIX="$out/gcda/${name}" \
        bounded env "$variant" .hw/peerreduce_property_tests > "$log" 2>&1 || status=1
      grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" || tail -20 "$log"
      continue
    fi
    RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=${HW_VARIANT_CASES:-50}" bounded "${mpi[@]}" -x "$variant" -np "$variant_np" \
      bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/${name}" .hw/peerreduce_property_tests > "$log" 2>&1 || status=1
    grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" | grep "1,0\]" || tail -20 "$log"
  done
  # The pushing one-shot and the pushing reduce-scatter, all-gather and broadcast (two ranks only; by default
  # from 2 MiB and past the lines): the property suite at two ranks with every such program pushed (lines off,
  # so small cases reach them too), in pieces of one vector (so the small cases split every block's slice into
  # the most pieces, ragged last ones included); then all of them streamed through 64 KiB of scratch in
  # one-vector pieces (PEERREDUCE_GPU_PUSH_STREAM, on by default), so every case past it cycles its pieces
  # through the ring many times; then the same in segments (PEERREDUCE_GPU_PUSH_STREAM=0), the path a scratch
  # too small to stream through takes.
  push_variants=(
    "push-one-shot PEERREDUCE_GPU_LL_MAX_BYTES=0 PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1"
    "push-collectives PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES=0 PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=1"
    "push-stream PEERREDUCE_GPU_LL_MAX_BYTES=0 PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1 PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES=0 PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=1 PEERREDUCE_GPU_PUSH_STREAM=1 PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES=16 PEERREDUCE_SCRATCH_BYTES=64K"
    "push-segments PEERREDUCE_GPU_LL_MAX_BYTES=0 PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1 PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES=0 PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=1 PEERREDUCE_GPU_PUSH_STREAM=0 PEERREDUCE_SCRATCH_BYTES=64K"
  )
  for push_variant in "${push_variants[@]}"; do
    if [[ "$suites" == 0 ]]; then break; fi
    read -r -a push_words <<< "$push_variant"
    push_name="${push_words[0]}"
    push_env=("${push_words[@]:1}" PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES=16)
    log="$out/variant-${push_name}-np2.log"
    echo "=== peerreduce_property_tests np=2 with ${push_env[*]} (cases per property ${HW_VARIANT_CASES:-50})"
    if ((gpus < 2)); then  # two ranks as threads on one GPU
      PEERREDUCE_TEST_GPU_RANKS=2 PEERREDUCE_TIMEOUT_MS="$threads_timeout" \
        RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=${HW_VARIANT_CASES:-50}" GCOV_PREFIX="$out/gcda/$push_name" \
        bounded env "${push_env[@]}" .hw/peerreduce_property_tests > "$log" 2>&1 || status=1
      grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" || tail -20 "$log"
    else
      exported=()
      for setting in "${push_env[@]}"; do exported+=(-x "$setting"); done
      RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=${HW_VARIANT_CASES:-50}" bounded "${mpi[@]}" \
        "${exported[@]}" -np 2 \
        bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/$push_name" \
        .hw/peerreduce_property_tests > "$log" 2>&1 || status=1
      grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" | grep "1,0\]" || tail -20 "$log"
    fi
  done
  # The pushing reduce-scatter, all-gather and relayed broadcast past two ranks
  # (PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS; two by default until measured): the property suite at every GPU
  # with every direct reduce-scatter, all-gather and broadcast pushed (lines off, from one byte), streamed in one-vector pieces through the default scratch and through
  # 64 KiB of it (every sender's part a few vectors a block, so pieces cycle through each place many times).
  many_push_variants=(
    "push-many PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS=64 PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES=0 PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=1 PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES=16"
    "push-many-small PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS=64 PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES=0 PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=1 PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES=16 PEERREDUCE_SCRATCH_BYTES=64K"
  )
  for push_variant in "${many_push_variants[@]}"; do
    if [[ "$suites" == 0 ]] || ((gpus < 3)); then break; fi
    read -r -a push_words <<< "$push_variant"
    push_name="${push_words[0]}"
    exported=()
    for setting in "${push_words[@]:1}"; do exported+=(-x "$setting"); done
    log="$out/variant-${push_name}-np${gpus}.log"
    echo "=== peerreduce_property_tests np=$gpus with ${push_words[*]:1} (cases per property ${HW_VARIANT_CASES:-50})"
    RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=${HW_VARIANT_CASES:-50}" bounded "${mpi[@]}" \
      "${exported[@]}" -np "$gpus" \
      bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/$push_name" \
      .hw/peerreduce_property_tests > "$log" 2>&1 || status=1
    grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" | grep "1,0\]" || tail -20 "$log"
  done
  # Copy engines (experimental, PEERREDUCE_GPU_COPY_ENGINES=1): the property suite with the copy-engine
  # two-shot forced and its copies on the copy engines, at each NP in HW_COPY_ENGINE_NPS (default the
  # first NP: with four ranks sharing one H100 it timed out, docs/PERF.md). Without the masked-world
  # property: it chooses its own masks and forces each algorithm the masked topology can carry in turn,
  # which the environment's forced algorithm would replace (on a masked world the copy-engine two-shot
  # is refused at creation, as it must be), as the host-staged passes leave it out for their masks.
  copy_engine_filter="-TopologyProperty.MaskedWorldIsCorrectOrRefusedOnEveryRank"
  for np in ${HW_COPY_ENGINE_NPS:-${nps[0]}}; do
    if [[ "$suites" == 0 ]]; then break; fi
    log="$out/copy-engines-np$np.log"
    echo "=== peerreduce_property_tests np=$np, copy-engine two-shot on the copy engines (cases per property ${HW_VARIANT_CASES:-50})"
    if ((np > gpus)); then
      PEERREDUCE_TEST_GPU_RANKS="$np" PEERREDUCE_TIMEOUT_MS="$threads_timeout" PEERREDUCE_GPU_COPY_ENGINES=1 \
        PEERREDUCE_ALGO=copy-engine-two-shot RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=${HW_VARIANT_CASES:-50}" \
        GCOV_PREFIX="$out/gcda/copy-engines-np$np" bounded .hw/peerreduce_property_tests \
        --gtest_filter="$copy_engine_filter" > "$log" 2>&1 || status=1
      grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" || tail -20 "$log"
      continue
    fi
    RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=${HW_VARIANT_CASES:-50}" bounded "${mpi[@]}" \
      -x PEERREDUCE_GPU_COPY_ENGINES=1 -x PEERREDUCE_ALGO=copy-engine-two-shot -np "$np" \
      bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/copy-engines-np$np" \
      .hw/peerreduce_property_tests --gtest_filter="$copy_engine_filter" > "$log" 2>&1 || status=1
    grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" | grep "1,0\]" || tail -20 "$log"
  done
  # User-written plans (docs/PLANS.md): plan files the Python builder writes for the world, given to every
  # rank for every size; each case's bits are compared with the simulator running the same file. The
  # allreduce ones by the allreduce properties, the others by the collectives' property (which draws the
  # collective: the file serves its own, the built-ins the rest). One process per GPU.
  for np in "${nps[@]}"; do
    if [[ "$suites" == 0 ]] || ((np > gpus)); then break; fi
    plans_dir="$out/plans-np$np" && mkdir -p "$plans_dir"
    for entry in "one-shot-allreduce:AllreduceProperty.*" "hierarchical-allreduce --groups 2:AllreduceProperty.*" \
      "direct-reduce-scatter:CollectiveProperty.MatchesReferenceOnEveryRank" \
      "relay-all-gather --missing 0-$((np - 1)):CollectiveProperty.MatchesReferenceOnEveryRank" \
      "chain-broadcast --root $((np - 1)):CollectiveProperty.MatchesReferenceOnEveryRank"; do
      builder="${entry%%:*}" filter="${entry#*:}" name="${entry%%[ :]*}"
      if [[ "$name" == hierarchical-allreduce ]] && ((np % 2 != 0)); then continue; fi
      if [[ "$name" == relay-all-gather ]] && ((np < 3)); then continue; fi  # a relay needs a third rank
      # shellcheck disable=SC2086  # the builder's arguments split on purpose
      PYTHONPATH="$PWD/python" python3 -m peerreduce.plans $builder --world "$np" > "$plans_dir/$name.plan" || status=1
      log="$out/user-plan-$name-np$np.log"
      echo "=== peerreduce_property_tests np=$np with the user plan $name ($filter)"
      RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=${HW_VARIANT_CASES:-50}" bounded "${mpi[@]}" \
        -x PEERREDUCE_PLAN_FILE="$plans_dir/$name.plan" -x PEERREDUCE_PLAN_MIN_BYTES=0 -np "$np" \
        bash -c 'GCOV_PREFIX="$0/rank$OMPI_COMM_WORLD_RANK" exec "$@"' "$out/gcda/user-plan-$name-np$np" \
        .hw/peerreduce_property_tests --gtest_filter="$filter" > "$log" 2>&1 || status=1
      grep -E "\[  (PASSED|FAILED)  \]|tests ran" "$log" | grep "1,0\]" || tail -20 "$log"
    done
  done
  # The C examples: the callback bootstrap with 2 and 4 ranks as threads (on as many GPUs as there are,
  # sharing them when fewer), and MPI with one process per GPU.
  for np in "${nps[@]}"; do
    log="$out/example-callbacks-np$np.log"
    echo "=== C example, callback bootstrap, $np ranks"
    GCOV_PREFIX="$out/gcda/example-np$np" bounded .hw/peerreduce-example-callbacks "$np" > "$log" 2>&1 || status=1
    cat "$log"
    if ((np <= gpus)); then
      echo "=== C example, MPI bootstrap, np=$np"
      bounded "${mpi[@]}" -np "$np" .hw/peerreduce-example-mpi > "$out/example-mpi-np$np.log" 2>&1 || status=1
      cat "$out/example-mpi-np$np.log"
    fi
  done
  # The Python package on the GPUs: its pytest suite (the PyTorch checks under torchrun at 2 and 4 ranks,
  # sharing GPUs where there are fewer) and its benchmark against torch.distributed with NCCL.
  python="${HW_PYTHON:-/opt/torch/.venv/bin/python3}"
  if [[ "${HW_PYTHON_TESTS:-1}" != 0 && -x "$python" ]]; then
    echo "=== Python package: pytest tests/python"
    PEERREDUCE_LIBRARY="$PWD/.hw/libpeerreduce.so" PEERREDUCE_SIM="$PWD/.hw/peerreduce-sim" PYTHONPATH="$PWD/python" \
      GCOV_PREFIX="$out/gcda/python" bounded "$python" -m pytest -q -rs tests/python > "$out/python-tests.log" 2>&1 || status=1
    grep -E "passed|failed|rank [0-9] of" "$out/python-tests.log" | tail -12
    # On one GPU the two ranks share it (NCCL cannot run there): the table has peerreduce alone and the
    # host cost of a call through the package against the C function called directly.
    bench_max="${HW_PY_BENCH_MAX_BYTES:-16777216}"
    if ((gpus < 2)); then bench_max="${HW_PY_BENCH_MAX_BYTES:-65536}"; fi
    echo "=== python -m peerreduce.bench, 2 ranks"
    PEERREDUCE_LIBRARY="$PWD/.hw/libpeerreduce.so" PYTHONPATH="$PWD/python" GCOV_PREFIX="$out/gcda/python-bench" \
      bounded "$python" -m torch.distributed.run --standalone --nproc-per-node=2 -m peerreduce.bench \
      --max-bytes "$bench_max" --json "$out/python-bench.json" > "$out/python-bench.log" 2>&1 || status=1
    grep -v "^W\|^\*" "$out/python-bench.log" | tail -14
    # The application's other path: the same benchmark with torch.distributed's NCCL going through the
    # NCCL library (preloaded), merged into three columns; and a DDP training step with NCCL alone and
    # through the library (step time, collectives' share, the loss curve, replicas identical).
    if ((gpus >= 2)) && [[ -e .hw/libpeerreduce_nccl.so ]]; then
      nccl="$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)/lib/libnccl.so.2"
      preload=(env LD_PRELOAD="$PWD/.hw/libpeerreduce_nccl.so" PEERREDUCE_NCCL_LIB="$nccl")
      echo "=== python -m peerreduce.bench, 2 ranks, NCCL through the NCCL library"
      bounded "${preload[@]}" PEERREDUCE_LIBRARY="$PWD/.hw/libpeerreduce.so" PYTHONPATH="$PWD/python" \
        "$python" -m torch.distributed.run --standalone --nproc-per-node=2 -m peerreduce.bench \
        --max-bytes "$bench_max" --json "$out/python-bench-library.json" > "$out/python-bench-library.log" 2>&1 || status=1
      PYTHONPATH="$PWD/python" "$python" -m peerreduce.bench_merge "$out/python-bench.json" \
        "$out/python-bench-library.json" --json "$out/python-bench-merged.json" || status=1
      for side in alone library; do
        run=(env)
        if [[ "$side" == library ]]; then run=("${preload[@]}"); fi
        echo "=== DDP training step, 2 ranks, NCCL $side"
        bounded "${run[@]}" PYTHONPATH="$PWD/python" "$python" -m torch.distributed.run --standalone \
          --nproc-per-node=2 -m peerreduce.train_bench --json "$out/train-$side.json" > "$out/train-$side.log" 2>&1 || status=1
        grep "train_bench:" "$out/train-$side.log" || tail -5 "$out/train-$side.log"
      done
      # A rank HW_LATE_RANK_SECONDS (default 60) late to its allreduces, through the NCCL library: the others
      # wait for it (the deadline follows the process group's timeout) and every sum is right.
      late="${HW_LATE_RANK_SECONDS:-60}"
      echo "=== a rank ${late} s late, 2 ranks, through the NCCL library"
      # It cannot pass in less than the lateness: with less left of the deadline it waits for the next call.
      LATE_RANK_SECONDS="$late" step_needs_s=$((late + 30)) bounded "${preload[@]}" "$python" -m torch.distributed.run --standalone \
        --nproc-per-node=2 tests/python/gpu_late_rank.py > "$out/late-rank.log" 2>&1 || status=1
      grep -E "done after|\(late rank\)" "$out/late-rank.log" || tail -5 "$out/late-rank.log"
    fi
  fi
  # nccl-tests (its public source, given in HW_NCCL_TESTS_SRC: never part of this tree) built here, run
  # with NCCL alone and through the NCCL library with -c 1 at each NP the GPUs allow: the library's time
  # against NCCL's per size, and #wrong, which must be 0.
  if [[ -n "${HW_NCCL_TESTS_SRC:-}" ]]; then
    bounded ci/nccl_tests.sh "$HW_NCCL_TESTS_SRC" "$out" "$gpus" "${nps[@]}" || status=1
  fi
  if [[ "${HW_SANITIZE:-1}" != 0 ]]; then
    for tool in memcheck racecheck synccheck; do
      log="$out/sanitizer-$tool.log"
      echo "=== compute-sanitizer $tool, np=2"
      # Two-shots pushed at every size, and one-shots past the lines (in pieces of one vector), so the
      # sanitizers see both push kernels beside the line and interpreter kernels that the small cases take anyway.
      if ((gpus < 2)); then  # two ranks as threads on the one GPU
        PEERREDUCE_TEST_GPU_RANKS=2 RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=10" PEERREDUCE_GPU_PUSH_MIN_BYTES=1 \
          PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1 PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES=16 bounded compute-sanitizer --tool "$tool" --error-exitcode 9 \
          .hw/peerreduce_property_tests --gtest_filter='AllreduceProperty.MatchesReferenceOnEveryRank' > "$log" 2>&1 || status=1
      else
        RC_PARAMS="${HW_RC_EXTRA:-}seed=$seed max_success=10" bounded "${mpi[@]}" -x PEERREDUCE_GPU_PUSH_MIN_BYTES=1 \
          -x PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1 -x PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES=16 -np 2 \
          compute-sanitizer --tool "$tool" --error-exitcode 9 \
          .hw/peerreduce_property_tests --gtest_filter='AllreduceProperty.MatchesReferenceOnEveryRank' > "$log" 2>&1 || status=1
      fi
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | sort | uniq -c || tail -5 "$log"
    done
  fi
  if [[ "${HW_BENCH:-1}" != 0 ]]; then
    nccl="$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)/lib/libnccl.so.2"
    for np in "${nps[@]}"; do
      if ((np > gpus)); then continue; fi
      for dtype in fp32 bf16; do
        echo "=== peerreduce-bench np=$np $dtype"
        bounded "${mpi[@]}" -np "$np" .hw/peerreduce-bench --nccl "$nccl" --dtype "$dtype" \
          --json "$out/bench-np$np-$dtype.json" --csv "$out/bench-np$np-$dtype.csv" > "$out/bench-np$np-$dtype.log" 2>&1 || status=1
        grep "^\[1,0\]" "$out/bench-np$np-$dtype.log" | sed 's/^\[1,0\]<stdout>://'
        python3 bench/plot_bench.py --csv "$out/bench-np$np-$dtype.csv" --out "$out/bench-np$np-$dtype.svg" \
          --title "$np GPUs, $dtype sum: peerreduce and NCCL" || status=1
      done
      # Eager calls (fp32 allreduce, 20 launched back to back per timing): the library's own host cost per call
      # beside NCCL's, with no application's host path around either.
      echo "=== peerreduce-bench np=$np fp32 --eager"
      bounded "${mpi[@]}" -np "$np" .hw/peerreduce-bench --nccl "$nccl" --dtype fp32 --eager --max-bytes 16777216 \
        --json "$out/bench-np$np-eager.json" > "$out/bench-np$np-eager.log" 2>&1 || status=1
      grep "^\[1,0\]" "$out/bench-np$np-eager.log" | sed 's/^\[1,0\]<stdout>://'
      # The other collectives beside NCCL's (fp32; broadcast from the last rank, so the root is not rank 0).
      for coll in reduce-scatter all-gather broadcast; do
        root=()
        if [[ "$coll" == broadcast ]]; then root=(--root "$((np - 1))"); fi
        echo "=== peerreduce-bench np=$np fp32 --coll $coll ${root[*]}"
        bounded "${mpi[@]}" -np "$np" .hw/peerreduce-bench --nccl "$nccl" --dtype fp32 --coll "$coll" "${root[@]}" \
          --json "$out/bench-np$np-$coll.json" --csv "$out/bench-np$np-$coll.csv" > "$out/bench-np$np-$coll.log" 2>&1 || status=1
        grep "^\[1,0\]" "$out/bench-np$np-$coll.log" | sed 's/^\[1,0\]<stdout>://'
      done
      # The pushing one-shot (two ranks; the default from 2 MiB, here from 1 byte) against the push
      # two-shot, past the lines' 1 MiB.
      if ((np == 2)); then
        for algo in one-shot two-shot; do
          echo "=== peerreduce-bench np=2 fp32 --algo $algo, with PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1"
          bounded "${mpi[@]}" -x PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1 -np 2 .hw/peerreduce-bench --nccl "$nccl" \
            --dtype fp32 --algo "$algo" --min-bytes 2097152 --json "$out/bench-np2-push-one-shot-$algo.json" \
            > "$out/bench-np2-push-one-shot-$algo.log" 2>&1 || status=1
          grep "^\[1,0\]" "$out/bench-np2-push-one-shot-$algo.log" | sed 's/^\[1,0\]<stdout>://'
        done
      fi
      # Two machines of np/2 GPUs each (one host playing both, MPI between them) beside NCCL over the same
      # GPUs: eager calls, since the step between machines runs on the host before a call returns. MPI carries
      # the step between machines (about 1 GB/s on one host), so sizes stop at 16 MiB.
      for coll in allreduce reduce-scatter all-gather broadcast; do
        echo "=== peerreduce-bench np=$np fp32 --coll $coll --machines 2 --eager"
        bounded "${mpi[@]}" -np "$np" .hw/peerreduce-bench --nccl "$nccl" --dtype fp32 --coll "$coll" --machines 2 \
          --eager --max-bytes 16777216 --step-factor 4 --json "$out/bench-np$np-machines-$coll.json" \
          > "$out/bench-np$np-machines-$coll.log" 2>&1 || status=1
        grep "^\[1,0\]" "$out/bench-np$np-machines-$coll.log" | sed 's/^\[1,0\]<stdout>://'
      done
    done
  fi
  finish
  ;;
report)
  dir="${1:?usage: ci/hardware.sh report DIR}"
  build="$(cat .hw/build-dir)"
  if [[ "$(sha256sum "$build/tests/hardware/peerreduce_hardware_tests" | cut -d' ' -f1)" != "$(cat .hw/build-id)" ]]; then
    echo "report: $build was rebuilt since 'package'; its coverage notes no longer match what ran. Package and run again." >&2
    exit 1
  fi
  tmp="$(mktemp -d)"
  tar xzf "$dir/gcda.tgz" -C "$tmp"
  # The .gcda files were written under <prefix>/<absolute build path>;
  # merge them into the build one file at a time (gcov-tool merges whole directories).
  find "$build" -name '*.gcda' -delete
  # Runs of several processes wrote one prefix per rank (gcda/RUN/rankN); runs of one process (ranks as
  # threads on one GPU) one per run (gcda/RUN).
  for prefix in "$tmp"/gcda/* "$tmp"/gcda/*/*; do
    [[ -d "$prefix$build" ]] || continue
    (cd "$prefix$build" && find . -name '*.gcda' -print0 | while IFS= read -r -d '' f; do
      dest="$build/$f"
      mkdir -p "$(dirname "$dest")"
      if [[ -f "$dest" ]]; then
        one="$(mktemp -d)" && mkdir -p "$one/a" "$one/b" "$one/out"
        cp "$f" "$one/a/" && cp "$dest" "$one/b/"
        gcov-tool merge -o "$one/out" "$one/a" "$one/b" >/dev/null && cp "$one/out/$(basename "$f")" "$dest"
        rm -rf "$one"
      else
        cp "$f" "$dest"
      fi
    done)
  done
  # The gate covers what only this stage runs: the GPU transport, its peer records and pinned host
  # memory, and the MPI bootstrap (the simulator's CI gates the rest of lib/ at 90% / 70%). The whole
  # of lib/ is reported too, for information.
  COVERAGE_FILTERS="lib/" coverage/gate.sh "$build" 0 0 | grep -E "^(lines|branches):" | sed 's/^/all of lib\/ /'
  cp "$build/coverage-report.txt" "$build/coverage-report-lib.txt"
  # Branches: every GPU runtime call has an error branch (PR_GPU_CHECK) that only a failing GPU takes,
  # so branch coverage of this code stays far below its line coverage.
  COVERAGE_FILTERS="lib/gpu/ lib/bootstrap/mpi_bootstrap.cc" \
    coverage/gate.sh "$build" "${HW_LINE_MIN:-80}" "${HW_BRANCH_MIN:-25}"
  ;;
*)
  echo "usage: ci/hardware.sh package | build | save-build OUT | restore-build DIR | build-tag | unpack | run [NP...] | report DIR" >&2
  exit 2
  ;;
esac
