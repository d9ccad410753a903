#include "select/builtin_tuning.h"

#include <cstdlib>

namespace peerreduce {

std::string_view builtinTuningText() {
  // 4 x H200 (NV18 between every pair), fp32 sum, one process per GPU, graph replay; each algorithm forced
  // with `peerreduce-bench --algo one-shot|two-shot --no-in-place` (docs/PERF.md, "Tuning table"). The
  // boundaries lie between the measured sizes (factors of 4), at their geometric middle.
  return R"(peerreduce-tuning 1
# 2 ranks: one-shot 4 MiB 24.39 us, two-shot 25.85; 16 MiB one-shot 74.75, two-shot 65.34 (pulling).
# Then the one-shot pushing from 2 MiB (kDefaultPushOneShotMinBytes), 2 x H200, factors of 2 from 1 MiB:
# one-shot 2 MiB 14.15, 4 MiB 20.54, 8 MiB 33.78, 16 MiB 62.25, 32 MiB 125.3, 64 MiB 249.1, 128 MiB 499.2,
# 256 MiB 997.8; push two-shot 19.56 / 26.16 / 39.15 / 64.82 / 133.0 / 253.1 / 501.0 / 996.4
entry sm_90 2 0 1099511627776 one-shot
# 4 ranks: 64 KiB one-shot (lines) 4.91 us, two-shot (lines) 6.12; 256 KiB one-shot 8.48, two-shot
# 7.30-7.42; 1 MiB one-shot 25.41, two-shot 15.04-15.28; 4 MiB one-shot 56.77, two-shot 37.47
entry sm_90 4 0 131072 one-shot
entry sm_90 4 131072 1099511627776 two-shot
# The other collectives, 4 x H200, fp32, out of place, graph of 20, the interpreter on every
# multiprocessor (peerreduce-bench --coll C --algo all; best us). Sizes as nccl-tests' (tuning_table.h).
# all-gather: 1 MiB one-shot 8.60, recursive doubling 22.4; 4 MiB one-shot 29.5, recursive doubling 27.0,
# ring 31.7; 16 MiB 79.3 / 54.8 / 59.2; 64 MiB 315.5 / 199.5 / 206.7; 256 MiB 1262.5 / 798.8 / 827.4
entry all-gather sm_90 4 0 4194304 one-shot
entry all-gather sm_90 4 4194304 1099511627776 recursive-doubling
# reduce-scatter: 1 MiB one-shot 8.38, halving 24.4; 4 MiB one-shot 30.6, halving 28.3, ring 29.6; 16 MiB
# 78.4 (32 blocks: 64.6) / 56.5 / 58.3; 64 MiB 289.5 / 208.5 / 206.5; 256 MiB 1161.2 / 837.9 / 828.6
entry reduce-scatter sm_90 4 0 4194304 one-shot
entry reduce-scatter sm_90 4 4194304 67108864 recursive-doubling
entry reduce-scatter sm_90 4 67108864 1099511627776 ring
# broadcast (root 3): 256 KiB one-shot 6.25, two-shot 21.6, tree 13.9; 1 MiB one-shot 19.2, two-shot 24.8,
# tree 17.9; 4 MiB one-shot 44.7, two-shot 41.2, tree 59.2, ring 60.1; 16 MiB 152.8 / 115.6 / 131.5 / 105.5;
# 64 MiB 615.7 / 460.9 / 448.7 / 335.6; 256 MiB 2470.5 / 1450.9 / 1793.0 / 1341.0
entry broadcast sm_90 4 0 1048576 one-shot
entry broadcast sm_90 4 1048576 4194304 tree
entry broadcast sm_90 4 4194304 8388608 two-shot
entry broadcast sm_90 4 8388608 16777216 one-shot
entry broadcast sm_90 4 16777216 1099511627776 ring
# 2 x H200 (two GPUs of the same machine), fp32, out of place, graph of 20 (peerreduce-bench --coll C
# --algo all; best us; NCCL beside it). broadcast (root 0): 256 KiB one-shot 3.35, two-shot 11.70, tree
# 10.04 (NCCL 6.79); 1 MiB one-shot 13.62, two-shot 13.67, tree 11.95, ring 35.81 (NCCL 11.47); 4 MiB
# 22.24 / 22.15 / 20.70 / 39.28 (24.54); 16 MiB 62.77 / 63.48 / 59.30 / 58.30 (60.66); 64 MiB 259.65 /
# 259.57 / 228.72 / 205.06 (202.82); 256 MiB 1036.98 / 1037.62 / 910.13 / 819.92 (750.60)
# With lines to 1 MiB at two ranks (kDefaultCollectiveLinesTwoRankMaxBytes; peerreduce-bench --coll broadcast):
# 512 KiB one-shot lines 4.55 us (NCCL 8.21), 1 MiB 7.43 (11.51; the tree took 11.89), 2 MiB the tree 14.70
# (18.93). The selector reads a row at the middle of each quarter-octave bucket, so a row must cover the
# bucket [1 MiB, 1.25 MiB) for 1 MiB itself to run as lines; the sizes above 1 MiB in it run the one-shot
# in the interpreter (1.125 MiB: 13.83 us, NCCL 15.98).
# Past the lines the direct plan pushes at two ranks (kernels/push_kernels.cuh; docs/perf/h200x2-19f9a8c,
# peerreduce-bench --coll broadcast --algo one-shot, root 0, NCCL beside it): 4 MiB 19.66 us (the tree 20.34,
# NCCL 24.27), 16 MiB 55.50 (the ring 57.88, NCCL 61.15), 64 MiB 207.75 (the ring 205.57, NCCL 202.03),
# 256 MiB 835.18 (the ring 814.90, NCCL 750.17). Then streamed through the scratch in 64 KiB pieces
# (PEERREDUCE_GPU_PUSH_STREAM, the default; docs/perf/h200x2-4b16c2e, --algo one-shot, graph of 20): 64 MiB
# 204.43 us (the ring 205.28, NCCL 202.27), 256 MiB 787.14 (the ring 819.11, NCCL 750.94). So the one-shot at
# every size.
entry broadcast sm_90 2 0 1099511627776 one-shot
# all-gather: 1 MiB one-shot 5.85, ring 13.21, recursive doubling 13.22 (NCCL 10.54); 4 MiB 17.60 /
# 17.76 / 17.70 (25.68); 16 MiB 39.67 / 39.81 / 39.81 (52.98); 64 MiB 146.20 / 150.75 / 150.48 (155.30);
# 256 MiB 582.58 / 602.77 / 601.82 (546.35)
entry all-gather sm_90 2 0 1099511627776 one-shot
# reduce-scatter: 256 KiB one-shot 3.59, ring 11.74 (NCCL 6.88); 1 MiB 5.76 / 12.73 (9.60); 4 MiB 17.49 /
# 17.32 (23.33); 16 MiB 39.48 / 39.04 (50.33); 64 MiB 144.59 / 143.99 (159.62); 256 MiB 573.56 / 571.90
# (563.19); recursive halving within 1 % of the ring from 4 MiB, the tree 1.9-2.3 x slower
# 2 MiB (1 MiB blocks) runs as lines at two ranks since: 8.64 us (NCCL 14.05; the ring took 14.20). As for
# broadcast the row covers the whole bucket of 1 MiB blocks ([1 MiB, 1.25 MiB), 2-2.5 MiB in all): 2.25 MiB
# took 14.72 us by the one-shot in the interpreter (NCCL 20.68).
# Past the lines at two ranks the direct plan pushes (kernels/push_kernels.cuh, pushPiecesKernel): each
# rank's block for the peer crosses the link once as posted stores, as the allreduce's push one-shot moves its
# input, so the one-shot holds at every size (the ring's two rounds of remote loads came within 1 % of the
# interpreted one-shot). Measured since (docs/perf/h200x2-19f9a8c, the selector's pick): 4 MiB 14.05 us (NCCL
# 23.18), 16 MiB 33.75 (50.41), 64 MiB 126.48 (159.38), 256 MiB 503.07 (564.12). All-gather, pushed likewise:
# 4 MiB 13.73 (25.59), 16 MiB 34.14 (53.00), 64 MiB 109.05 (155.89), 256 MiB 434.29 (546.74).
entry reduce-scatter sm_90 2 0 1099511627776 one-shot
)";
}

const TuningTable& builtinTuningTable() {
  static const TuningTable table = [] {
    auto parsed = TuningTable::parse(builtinTuningText());
    if (!parsed.isOk()) std::abort();  // a bug in the text above; lib.BuiltinTuning.* proves it parses
    return std::move(parsed).value();
  }();
  return table;
}

}  // namespace peerreduce
