#!/usr/bin/env bash
# The speed figures the open issues need from a multi-GPU machine, in the order they are owed, each
# bounded by what is left of one call's time. ON the GPU machine, from the repository root:
#
#   GPU_DEADLINE_S=560 GPU_PHASES="build nccltests app1 bench host stage" ci/gpu_figures.sh OUT
#
# Phases (each skipped, and named, when less than 40 s are left; a later call with the same build goes on):
#   build      ci/hardware.sh build into .hw/ unless .hw/ holds a build (RapidCheck: HW_RAPIDCHECK_ROOT)
#   nccltests  nccl-tests through the NCCL library beside NCCL alone (ci/nccl_tests.sh; its public source in
#              NCCL_TESTS_SRC, default .carry/nccl-tests, fetched outside this tree)
#   avg        avg through the NCCL library taken (PEERREDUCE_NCCL_TAKE_AVG=1, the default since this said
#              its results pass): nccl-tests' allreduce and reduce-scatter `-o avg -c 1` in fp32, bf16 and fp16,
#              NCCL alone beside the library, #wrong of each (ci/nccl_tests.sh)
#   appN       the PyTorch paths, N runs (ci/app_bench.sh OUT/app NP N, training steps off)
#   bench      peerreduce-bench of every collective against NCCL, graph replay, out of place, 4 KiB-256 MiB
#              (GPU_DTYPE, default fp32, for allreduce)
#   forced     the same with the copy-engine plans forced on the copy engines (allreduce, all-gather,
#              broadcast), 1-256 MiB: the measurements their automatic choice waits for
#   host       every link host-staged against NCCL with P2P off: the default choice, the copy-engine
#              two-shot's private form forced from 1 MiB, lines off and lines to 1 MiB
#              (PEERREDUCE_GPU_LL_HOST_MAX_BYTES=0 / 1M: where the default cap belongs), the pulls on every
#              multiprocessor from 1 MiB (PEERREDUCE_GPU_PULL_MAX_BLOCKS=256, capped at the SM count: whether
#              the default 32 blocks bound the host path's loads), the lines in 2 KiB blocks
#              (PEERREDUCE_GPU_LL_BYTES_PER_BLOCK=2K: four times the blocks to 1 MiB, for the 0.5 bar at 64 KiB);
#              and at 3+ GPUs one mixed mask (host:0-1)
#   scratch    fewer segments: 16-256 MiB with 256 MiB of scratch (PEERREDUCE_SCRATCH_BYTES; the pool and the
#              pinned limit raised to hold it) for the default allreduce, the copy-engine plans forced, and the
#              host path (default, copy engines): a segment is a whole execution of the plan, so every segment
#              pays the plan's fixed cost (256 MiB runs as 8 segments of 32 MiB with the default scratch)
#   push       the two-rank pushing reduce-scatter, all-gather and broadcast: their hardware tests and the
#              property suite with every direct plan pushed (lines off, one-vector pieces), then each
#              collective's direct plan forced (--algo one-shot) from 1 MiB pushed (the default) and not
#              (PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=0: the interpreter), beside NCCL; broadcast 2-16 MiB in
#              factors of 2 with 16 and 32 KiB pieces
#   stream     the pushing kernels streamed through the scratch (PEERREDUCE_GPU_PUSH_STREAM, the default): the
#              hardware tests (their largest cases stream by default) and the property suite streamed through
#              64 KiB of scratch in one-vector pieces,
#              then allreduce and each collective's direct plan from 16 MiB in segments
#              (PEERREDUCE_GPU_PUSH_STREAM=0) and with 32 KiB streamed pieces, beside NCCL (the push and bench
#              phases give them streamed in the default 64 KiB pieces)
#   probe      peerreduce-p2p-probe on two GPUs: peer read and write rates, and stores and a copy engine sharing
#              one transfer (0-100 % by copy engine, one way and both ways): whether a broadcast or a one-shot
#              gains by splitting its bytes between them
#   pushmany   at 3+ GPUs, the pushing reduce-scatter, all-gather and relayed broadcast past two ranks
#              (PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS=NP): the property suite with every direct plan of theirs
#              pushed in one-vector pieces, then each one's direct plan forced (--algo one-shot) from 1 MiB
#              pushed and in the interpreter (the default at 3+ ranks), and as the selector picks, beside NCCL
#   hostpush   every link host-staged, the pushing kernels through host memory (PEERREDUCE_GPU_PUSH_HOST, on by
#              default from 16 MiB for the one-shot and 32 MiB blocks for the collectives): each collective as the
#              defaults choose, 1-256 MiB, beside NCCL with P2P off; then pushed from 1 MiB in pieces of 8, 16 and
#              32 KiB (the one-shot's PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES), 1-16 MiB: where the crossover with
#              the pull lies and whether smaller pieces move it down (4 MiB pushed took 309 us in one 32 KiB piece
#              a block, pulled 266), and with 128 KiB a block in 16 KiB pieces
#   blocks     at two GPUs, the pushed broadcast and allreduce 2-16 MiB with 64 and 128 KiB a block
#              (PEERREDUCE_GPU_BYTES_PER_BLOCK; 32 KiB by default, so a 4 MiB broadcast is one 32 KiB piece a block
#              and its receiver's copy overlaps nothing): the two bars within a few per cent (broadcast 4 MiB 0.81,
#              allreduce 16 MiB 0.80-0.83)
#   stage      ci/hardware.sh run NP, resumed across calls (HW_RESUME_DIR=/tmp/stage-resume)
# NP is every GPU of the machine (GPU_NP to choose). NCCL_NVLS_ENABLE=0 throughout: no NVLink multicast.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out="${1:?usage: ci/gpu_figures.sh OUT}"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
start=$(date +%s)
deadline="${GPU_DEADLINE_S:-560}"
left() { echo $((deadline - ($(date +%s) - start))); }
np="${GPU_NP:-$(nvidia-smi -L | wc -l)}"
nccl="$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)/lib/libnccl.so.2"
tests_src="${NCCL_TESTS_SRC:-.carry/nccl-tests}"
mpi=(mpirun --allow-run-as-root --bind-to none --tag-output -np "$np")
status=0
# Rank 0's table from a tagged mpirun log.
rank0() { grep "^\[1,0\]" "$1" | sed 's/^\[1,0\]<stdout>://'; }
# A bounded benchmark run: NAME, then mpirun's options (-x ...) up to "--", then peerreduce-bench's.
bench() {
  local name=$1 env=()
  shift
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  timeout -k 10 "$(($(left) < 150 ? $(left) : 150))" "${mpi[@]}" "${env[@]}" .hw/peerreduce-bench --nccl "$nccl" \
    --no-in-place --step-factor 4 --csv "$out/$name.csv" "$@" > "$out/$name.log" 2>&1 || status=1
  echo "--- $name"
  rank0 "$out/$name.log" | tail -14
}
for phase in ${GPU_PHASES:-build}; do
  if (($(left) < 40)); then
    echo "=== $phase skipped: $(left) s left"
    continue
  fi
  echo "=== $phase at $(($(date +%s) - start)) s, $np GPUs"
  case "$phase" in
  build)
    if [[ ! -x .hw/peerreduce-bench ]]; then ci/hardware.sh build 2>&1 | tail -3 || status=1; fi
    ;;
  nccltests)
    timeout -k 10 "$(left)" ci/nccl_tests.sh "$tests_src" "$out/nccl" "$np" "$np" > "$out/nccl.log" 2>&1 || status=1
    tail -40 "$out/nccl.log"
    ;;
  avg)
    for dtype in float bfloat16 half; do
      PEERREDUCE_NCCL_TAKE_AVG=1 NCCL_TESTS_COLLS="all_reduce reduce_scatter" NCCL_TESTS_FLAGS="-o avg -d $dtype" \
        timeout -k 10 "$(($(left) < 200 ? $(left) : 200))" ci/nccl_tests.sh "$tests_src" "$out/avg-$dtype" "$np" "$np" \
        > "$out/avg-$dtype.log" 2>&1 || status=1
      echo "--- avg $dtype"
      grep -E "^===|!!!" "$out/avg-$dtype.log"
      awk 'NF >= 5 && $5 != 0 && $1 ~ /^[0-9]+$/' "$out/avg-$dtype/nccl-tests-table.txt" 2>/dev/null | head -5
    done
    ;;
  app*)
    APP_TRAIN=0 timeout -k 10 "$(left)" ci/app_bench.sh "$out/app" "$np" "${phase#app}" > "$out/app.log" 2>&1 || status=1
    tail -30 "$out/app.log"
    ;;
  bench)
    bench "bench-allreduce" -- --coll allreduce --dtype "${GPU_DTYPE:-fp32}" --min-bytes 4096 --max-bytes 268435456
    for c in reduce-scatter all-gather broadcast; do
      bench "bench-$c" -- --coll "$c" --min-bytes 4096 --max-bytes 268435456
    done
    ;;
  forced)
    for c in allreduce all-gather broadcast; do
      bench "forced-$c" -x PEERREDUCE_GPU_COPY_ENGINES=1 -- --coll "$c" --algo copy-engine-two-shot \
        --min-bytes 1048576 --max-bytes 268435456
    done
    ;;
  host)
    bench "host-auto" -- --nccl-p2p-disable --link-mask host:all
    bench "host-pull-all-blocks" -x PEERREDUCE_GPU_PULL_MAX_BLOCKS=256 -- --nccl-p2p-disable --link-mask host:all \
      --min-bytes 1048576
    bench "host-copy-engines" -x PEERREDUCE_GPU_COPY_ENGINES=1 -- --nccl-p2p-disable --link-mask host:all \
      --algo copy-engine-two-shot --min-bytes 1048576
    # The lines' cap from both sides: none, and up to what a rank's lines hold (the default sits between).
    bench "host-no-lines" -x PEERREDUCE_GPU_LL_HOST_MAX_BYTES=0 -- --nccl-p2p-disable --link-mask host:all \
      --max-bytes 1048576
    bench "host-all-lines" -x PEERREDUCE_GPU_LL_HOST_MAX_BYTES=1M -- --nccl-p2p-disable --link-mask host:all \
      --max-bytes 1048576
    # Smaller line blocks, so more blocks' stores and polls cross PCIe at once (8 KiB by default: 64 KiB in 8).
    bench "host-lines-2k-blocks" -x PEERREDUCE_GPU_LL_BYTES_PER_BLOCK=2K -- --nccl-p2p-disable --link-mask host:all \
      --max-bytes 1048576
    if ((np >= 3)); then bench "host-mixed" -- --link-mask host:0-1; fi
    ;;
  scratch)
    # One stream: the pool need hold one 256 MiB lease (host-staged, it is each rank's region in /dev/shm).
    big=(-x PEERREDUCE_SCRATCH_BYTES=256M -x PEERREDUCE_POOL_BYTES=512M -x PEERREDUCE_PINNED_LIMIT_BYTES=1G)
    bench "scratch-allreduce" "${big[@]}" -- --coll allreduce --min-bytes 16777216
    for c in allreduce all-gather broadcast reduce-scatter; do
      bench "scratch-forced-$c" "${big[@]}" -x PEERREDUCE_GPU_COPY_ENGINES=1 -- --coll "$c" --algo copy-engine-two-shot \
        --min-bytes 16777216
    done
    bench "scratch-host-auto" "${big[@]}" -- --nccl-p2p-disable --link-mask host:all --min-bytes 16777216
    bench "scratch-host-copy-engines" "${big[@]}" -x PEERREDUCE_GPU_COPY_ENGINES=1 -- --nccl-p2p-disable \
      --link-mask host:all --algo copy-engine-two-shot --min-bytes 16777216
    ;;
  push)
    timeout -k 10 120 "${mpi[@]}" .hw/peerreduce_hardware_tests --gtest_filter='CollectiveLines.*' \
      > "$out/push-hw.log" 2>&1 || status=1
    rank0 "$out/push-hw.log" | grep -E "^\[  (PASSED|FAILED) |^\[       OK|FAILED" | head -12
    if ((np == 2)); then
      RC_PARAMS="seed=1 max_success=${HW_VARIANT_CASES:-50}" timeout -k 10 150 "${mpi[@]}" \
        -x PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES=0 -x PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=1 \
        -x PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES=16 .hw/peerreduce_property_tests > "$out/push-properties.log" 2>&1 ||
        status=1
      rank0 "$out/push-properties.log" | grep -E "\[  (PASSED|FAILED)  \]|tests ran|FAILED" | head -12
    fi
    for c in reduce-scatter all-gather broadcast; do
      bench "push-$c" -- --coll "$c" --algo one-shot --min-bytes 1048576 --max-bytes 268435456
      bench "nopush-$c" -x PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=0 -- --coll "$c" --algo one-shot \
        --min-bytes 1048576 --max-bytes 268435456
    done
    # Broadcast's pieces where a block's slice is one or two of them (the take table waits for 8 MiB).
    for piece in 16K 32K; do
      bench "push-broadcast-piece$piece" -x PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES=$piece -- --coll broadcast \
        --algo one-shot --min-bytes 2097152 --max-bytes 16777216 --step-factor 2
    done
    ;;
  stream)
    streamed=(-x PEERREDUCE_GPU_PUSH_STREAM=1 -x PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES=16)
    timeout -k 10 120 "${mpi[@]}" .hw/peerreduce_hardware_tests --gtest_filter='CollectiveLines.*' \
      > "$out/stream-hw.log" 2>&1 || status=1
    rank0 "$out/stream-hw.log" | grep -E "^\[  (PASSED|FAILED) |^\[       OK|FAILED" | head -12
    if ((np == 2)); then
      RC_PARAMS="seed=1 max_success=${HW_VARIANT_CASES:-50}" timeout -k 10 150 "${mpi[@]}" "${streamed[@]}" \
        -x PEERREDUCE_GPU_LL_MAX_BYTES=0 -x PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1 \
        -x PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES=0 -x PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=1 \
        -x PEERREDUCE_SCRATCH_BYTES=64K .hw/peerreduce_property_tests > "$out/stream-properties.log" 2>&1 || status=1
      rank0 "$out/stream-properties.log" | grep -E "\[  (PASSED|FAILED)  \]|tests ran|FAILED" | head -12
    fi
    for c in allreduce reduce-scatter all-gather broadcast; do
      bench "segments-$c" -x PEERREDUCE_GPU_PUSH_STREAM=0 -- --coll "$c" --algo one-shot --min-bytes 16777216 \
        --max-bytes 268435456
      bench "stream32k-$c" -x PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES=32K -- --coll "$c" --algo one-shot \
        --min-bytes 16777216 --max-bytes 268435456
    done
    ;;
  probe)
    timeout -k 10 "$(($(left) < 120 ? $(left) : 120))" mpirun --allow-run-as-root --bind-to none -np 2 \
      .hw/peerreduce-p2p-probe > "$out/p2p-probe.txt" 2>&1 || status=1
    grep -E "^rank 0" "$out/p2p-probe.txt" | head -60
    ;;
  pushmany)
    if ((np < 3)); then
      echo "=== pushmany: needs 3+ GPUs"
      continue
    fi
    many=(-x PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS="$np")
    RC_PARAMS="seed=1 max_success=${HW_VARIANT_CASES:-50}" timeout -k 10 150 "${mpi[@]}" "${many[@]}" \
      -x PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES=0 -x PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=1 \
      -x PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES=16 .hw/peerreduce_property_tests > "$out/pushmany-properties.log" 2>&1 ||
      status=1
    rank0 "$out/pushmany-properties.log" | grep -E "\[  (PASSED|FAILED)  \]|tests ran|FAILED" | head -12
    for c in reduce-scatter all-gather broadcast; do
      bench "pushmany-$c" "${many[@]}" -- --coll "$c" --algo one-shot --min-bytes 1048576 --max-bytes 268435456
      bench "interpreted-$c" -- --coll "$c" --algo one-shot --min-bytes 1048576 --max-bytes 268435456
      bench "pushmany-auto-$c" "${many[@]}" -- --coll "$c" --min-bytes 1048576 --max-bytes 268435456
    done
    ;;
  blocks)
    for per_block in 64K 128K; do
      bench "blocks$per_block-broadcast" -x PEERREDUCE_GPU_BYTES_PER_BLOCK=$per_block -- --coll broadcast \
        --min-bytes 2097152 --max-bytes 16777216 --step-factor 2
      bench "blocks$per_block-allreduce" -x PEERREDUCE_GPU_BYTES_PER_BLOCK=$per_block -- --min-bytes 2097152 \
        --max-bytes 16777216 --step-factor 2
    done
    bench "blocks32K-broadcast" -- --coll broadcast --min-bytes 2097152 --max-bytes 16777216 --step-factor 2
    bench "blocks32K-allreduce" -- --min-bytes 2097152 --max-bytes 16777216 --step-factor 2
    ;;
  hostpush)
    staged=(--nccl-p2p-disable --link-mask host:all)
    bench "hostpush-allreduce" -- "${staged[@]}" --min-bytes 1048576
    for c in reduce-scatter all-gather broadcast; do
      bench "hostpush-$c" -- "${staged[@]}" --coll "$c" --min-bytes 1048576
    done
    for piece in 8K 16K 32K; do
      bench "hostpush-allreduce-from1m-piece$piece" -x PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1M \
        -x PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES=$piece -- "${staged[@]}" --min-bytes 1048576 --max-bytes 16777216
      bench "hostpush-all-gather-from1m-piece$piece" -x PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES=512K \
        -x PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES=$piece -- "${staged[@]}" --coll all-gather --min-bytes 1048576 \
        --max-bytes 16777216
    done
    # Fewer blocks, each with several pieces in flight (a block's pieces overlap its stores and its folds;
    # with one piece a block, as at 4 MiB by default, nothing does).
    bench "hostpush-allreduce-from1m-block128k-piece16K" -x PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES=1M \
      -x PEERREDUCE_GPU_BYTES_PER_BLOCK=128K -x PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES=16K -- "${staged[@]}" \
      --min-bytes 1048576 --max-bytes 16777216
    ;;
  stage)
    HW_DEADLINE_S=$(($(left) - 15)) HW_RESUME_DIR=/tmp/stage-resume HW_NCCL_TESTS_SRC="$tests_src" OUT="$out/stage" \
      ci/hardware.sh run "$np" > "$out/stage.log" 2>&1 || status=1
    grep -E "^===|PASSED|FAILED|ERROR SUMMARY|skipped|!!!" "$out/stage.log" | tail -60
    ;;
  *)
    echo "unknown phase $phase (build nccltests avg appN bench forced host scratch push stream probe pushmany hostpush stage)"
    status=1
    ;;
  esac
done
echo "=== done at $(($(date +%s) - start)) s"
exit "$status"
