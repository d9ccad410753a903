#!/usr/bin/env bash
# nccl-tests through the NCCL library, for the hardware stage (ci/hardware.sh run calls it when
# HW_NCCL_TESTS_SRC is set). Usage: ci/nccl_tests.sh SRC OUT GPUS NP...
#   SRC: nccl-tests' public source (fetched outside this tree and carried to the GPU machine; built here
#   in /tmp, never kept); OUT: where the logs and the table go; GPUS: GPUs on the machine (an NP above it
#   is skipped: NCCL needs a GPU per rank). For each collective and NP: NCCL alone, then with
#   LD_PRELOAD=.hw/libpeerreduce_nccl.so, sizes 8 B to 256 MiB, every power of 2 (steps of x8 from 8 B
#   would skip 256 MiB), one iteration checked (-c 1). Prints
#   per size the out-of-place times, the library's over NCCL's, and the library's #wrong; fails when any
#   #wrong is not 0 or a run fails. With no NP it only builds (start it early: the build takes about two
#   minutes); a build already in /tmp is reused (NCCL_TESTS_REBUILD=1 builds again). NCCL_TESTS_COLLS
#   narrows the collectives (default all four); NCCL_TESTS_FLAGS adds to each run's flags (e.g. "-d bfloat16");
#   NCCL_TESTS_REPEATS (default 1) runs each side that many times, alternated, and tabulates medians.
set -uo pipefail
src="${1:?source}" out="${2:?out}" gpus="${3:?gpus}"
shift 3
nccl_dir="$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])')" || exit 1
home=/tmp/nccl-tests-nccl-home build=/tmp/nccl-tests-build
mkdir -p "$home/include" "$home/lib" "$out" || exit 1
ln -sf "$nccl_dir"/include/* "$home/include/"
ln -sf "$nccl_dir/lib/libnccl.so.2" "$home/lib/libnccl.so"
if [[ "${NCCL_TESTS_REBUILD:-0}" != 0 || ! -x "$build/build/broadcast_perf" ]]; then
  rm -rf "$build" && cp -r "$src" "$build"
  make -C "$build" -j "$(nproc)" MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda \
  NCCL_HOME="$home" > "$out/nccl-tests-build.log" 2>&1 || { tail -20 "$out/nccl-tests-build.log"; exit 1; }
fi
status=0
mpi=(timeout -k 10 300 mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH="$home/lib")
library=(-x LD_PRELOAD="$PWD/.hw/libpeerreduce_nccl.so" -x PEERREDUCE_NCCL_LIB="$nccl_dir/lib/libnccl.so.2")
# The caller's PEERREDUCE_* settings (a take table to try, PEERREDUCE_NCCL_TAKE, ...) reach every rank.
for setting in $(compgen -e | grep '^PEERREDUCE_' || true); do library+=(-x "$setting"); done
# NCCL_TESTS_REPEATS runs of each side, alternated (NCCL alone, then the library, again): the table then has
# each side's median per size (ci/nccl_tests_table.py), so one disturbed run does not decide a cell.
repeats="${NCCL_TESTS_REPEATS:-1}"
for np in "$@"; do
  if ((np > gpus)); then continue; fi
  for coll in ${NCCL_TESTS_COLLS:-all_reduce reduce_scatter all_gather broadcast}; do
    logs=()
    for ((run = 1; run <= repeats; run++)); do
      suffix=""
      if ((repeats > 1)); then suffix="-run$run"; fi
      alone="$out/nccl-tests-$coll-np$np-nccl$suffix.log" through="$out/nccl-tests-$coll-np$np-library$suffix.log"
      "${mpi[@]}" -np "$np" "$build/build/${coll}_perf" -b 8 -e 256M -f 2 -c 1 -g 1 ${NCCL_TESTS_FLAGS:-} > "$alone" 2>&1 ||
        status=1
      "${mpi[@]}" "${library[@]}" -np "$np" "$build/build/${coll}_perf" -b 8 -e 256M -f 2 -c 1 -g 1 ${NCCL_TESTS_FLAGS:-} \
        > "$through" 2>&1 || status=1
      logs+=(--nccl "$alone" --library "$through")
    done
    what="NCCL us, library us, library/NCCL"
    if ((repeats > 1)); then what="medians of $repeats runs: NCCL us, library us, their ratio"; fi
    echo "=== nccl-tests $coll np=$np: bytes, $what, library #wrong" |
      tee -a "$out/nccl-tests-table.txt"  # the table says which collective and world each block is
    python3 ci/nccl_tests_table.py "${logs[@]}" | tee -a "$out/nccl-tests-table.txt"
    table_status="${PIPESTATUS[0]}"
    if ((table_status != 0)); then
      echo "!!! #wrong is not 0, or a run has no table"
      status=1
    fi
  done
done
exit "$status"
