#!/usr/bin/env bash
# The application paths on the GPU machine, repeated: ci/app_bench.sh OUT NP [REPEATS]
#   For each of REPEATS runs (default 5): `python -m peerreduce.bench` under torchrun with NP ranks, once
#   with NCCL alone and once with the NCCL library preloaded, merged into the three-column table (the
#   package, NCCL alone, NCCL through the library; eager and graph; the library against NCCL forwarded by
#   it in its own process, the headline, and against NCCL alone across processes); then every run in OUT in
#   one table (python -m peerreduce.bench_runs: each run's ratio per cell and the median,
#   OUT/pybench-npNP-runs.md). Then the training step (DDP, and FSDP unless APP_FSDP=0) with NCCL alone and
#   through the library. Needs .hw/ (ci/hardware.sh build).
#   APP_MAX_BYTES (default 16 MiB) bounds the bench sizes; APP_PYTHON the interpreter with torch.
#   The bench's eager columns of one process are timed in interleaved rounds: APP_EAGER_CALLS calls per
#   round (default 50), APP_EAGER_ROUNDS rounds (default 15); both runs pin each rank to cores of its own
#   near its GPU (APP_PIN_CPUS, default auto; none leaves the scheduler free), so the host cost per eager
#   call moves less between processes.
#   APP_FIRST_RUN numbers the runs from there (default 1: repeats split over several calls keep apart);
#   APP_TRAIN=0 skips the training steps (ddp or fsdp: only that one); APP_TRAIN_REPEATS repeats them.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:?out}" np="${2:?np}" repeats="${3:-5}"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
python="${APP_PYTHON:-/opt/torch/.venv/bin/python3}"
nccl="$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])')/lib/libnccl.so.2"
preload=(env LD_PRELOAD="$PWD/.hw/libpeerreduce_nccl.so" PEERREDUCE_NCCL_LIB="$nccl")
package=(env PEERREDUCE_LIBRARY="$PWD/.hw/libpeerreduce.so" PYTHONPATH="$PWD/python")
torchrun=("$python" -m torch.distributed.run --standalone --nproc-per-node="$np")
status=0
bounded=(timeout -k 10 "${APP_STEP_TIMEOUT_S:-300}")
first="${APP_FIRST_RUN:-1}"
bench_flags=(--max-bytes "${APP_MAX_BYTES:-16777216}" --iterations "${APP_EAGER_CALLS:-50}"
  --repeats "${APP_EAGER_ROUNDS:-15}" --pin-cpus "${APP_PIN_CPUS:-auto}")
for ((run = first; run < first + repeats; run++)); do
  plain="$out/pybench-np$np-run$run.json" through="$out/pybench-np$np-run$run-library.json"
  "${package[@]}" "${bounded[@]}" "${torchrun[@]}" -m peerreduce.bench "${bench_flags[@]}" \
    --json "$plain" > "$out/pybench-np$np-run$run.log" 2>&1 || { status=1; tail -5 "$out/pybench-np$np-run$run.log"; }
  "${preload[@]}" "${package[@]}" "${bounded[@]}" "${torchrun[@]}" -m peerreduce.bench "${bench_flags[@]}" \
    --json "$through" > "$out/pybench-np$np-run$run-library.log" 2>&1 ||
    { status=1; tail -5 "$out/pybench-np$np-run$run-library.log"; }
  echo "=== python -m peerreduce.bench, $np ranks, run $run (runs $first to $((first + repeats - 1)))"
  PYTHONPATH="$PWD/python" "$python" -m peerreduce.bench_merge "$plain" "$through" \
    --json "$out/pybench-np$np-run$run-merged.json" || status=1
done
# Every run in OUT so far in one table (each run's ratio per cell, then the median).
shopt -s nullglob
merged_runs=("$out"/pybench-np"$np"-run*-merged.json)
shopt -u nullglob
if ((${#merged_runs[@]} > 0)); then
  echo "=== python -m peerreduce.bench, $np ranks, the runs in $out"
  PYTHONPATH="$PWD/python" "$python" -m peerreduce.bench_runs "${merged_runs[@]}" | tee "$out/pybench-np$np-runs.md" ||
    status=1
fi
wrappers=()
case "${APP_TRAIN:-1}" in
0) ;;
ddp | fsdp) wrappers=("$APP_TRAIN") ;;
*)
  wrappers=(ddp)
  if [[ "${APP_FSDP:-1}" != 0 ]]; then wrappers+=(fsdp); fi
  ;;
esac
# The training steps alternate NCCL alone and the library APP_TRAIN_REPEATS times (default 1), so drift in
# the machine's speed falls on both sides alike.
for wrapper in "${wrappers[@]+"${wrappers[@]}"}"; do
  flag=()
  if [[ "$wrapper" == fsdp ]]; then flag=(--fsdp); fi
  for ((rep = 1; rep <= ${APP_TRAIN_REPEATS:-1}; rep++)); do
    for side in alone library; do
      run=(env)
      if [[ "$side" == library ]]; then run=("${preload[@]}"); fi
      name="train-$wrapper-np$np-$side-rep$rep"
      echo "=== $wrapper training step, $np ranks, NCCL $side, repeat $rep"
      "${run[@]}" PYTHONPATH="$PWD/python" "${bounded[@]}" "${torchrun[@]}" -m peerreduce.train_bench "${flag[@]}" \
        --json "$out/$name.json" > "$out/$name.log" 2>&1 || status=1
      grep "train_bench:" "$out/$name.log" || tail -5 "$out/$name.log"
    done
  done
done
exit "$status"
