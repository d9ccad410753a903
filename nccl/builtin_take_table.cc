#include "nccl/builtin_take_table.h"

#include <cstdlib>

namespace peerreduce::nccl {

std::string_view builtinTakeText() {
  // fp32, NCCL 2.28.9, graph replay; the ratio is peerreduce's time over NCCL's. A size is taken where the
  // ratio is at most 0.97 (the margin: run-to-run noise must not flip a decision). Between two measured
  // sizes a row takes only where both ends won, so no unmeasured size is taken next to a loss; beyond the
  // largest measured size no row speaks, and the call is forwarded (take_table.h). This is the rule
  // bench/take_table_from_bench.py applies to benchmark JSON.
  return R"(peerreduce-nccl-take 1
# peerreduce-bench beside NCCL in factors of 2 from 1K (sizes as the collective's whole buffer; broadcast
# from the last rank). 2 x H200: docs/perf/h200x2-take; 4 x H200: docs/perf/h200x4-take. Worlds with a
# host-staged pair look up their architecture with "-host" (take_table.h).
# allreduce bf16, 2 GPUs (the conversions by the conversion instructions; peerreduce-bench --dtype bf16,
# factors of 4 from 4K, docs/perf/h200x2-9e477c7): 4K .. 256K 0.46-0.53, 1M 0.65, 4M 0.69, 16M 0.90,
# 64M 0.92, 256M 0.94
entry allreduce sm_90 2 bf16 0 256M peerreduce
# allreduce, 2 GPUs: 1K .. 256K 0.43-0.53, 512K 0.60, 1M 0.68 (one-shot lines, the two-rank default),
# 2M 0.59, 4M 0.74, 8M 0.85, 16M 0.86, 32M 0.94, 64M 1.01, 128M 1.07, 256M 1.12. Then the one-shot pushing
# from 2M (kDefaultPushOneShotMinBytes, the two-rank tuning row): 2M 0.52, 4M 0.63, 8M 0.72, 16M 0.81,
# 32M 0.91, 64M 1.004, 128M 1.07, 256M 1.12 (docs/perf/h200x4-460cafc). Then each block's slice pushed in
# pieces (PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES, 32 KiB): 16M 0.79, 32M 0.79, 64M 0.88, 128M 0.93,
# 256M 0.97 (docs/perf/h200x2-063f6e3). Then streamed through the scratch past it in 64 KiB pieces
# (PEERREDUCE_GPU_PUSH_STREAM, the default; docs/perf/h200x2-4b16c2e): 64M 0.86, 256M 0.91
entry allreduce sm_90 2 fp32 0 256M peerreduce
# allreduce, 4 GPUs: 1K .. 64K 0.37-0.46, 128K 0.61, 256K 0.67, 512K 0.72, 1M 0.88, 2M 1.08, 4M 0.97,
# 8M 1.00, 16M 0.97, 32M 1.11, 64M 1.14, 256M 1.20
entry allreduce sm_90 4 fp32 0 1M peerreduce
entry allreduce sm_90 4 fp32 1048577 256M nccl
# allreduce, 2 GPUs without peer access (every link host-staged, key sm_90-host), against NCCL with P2P off
# (docs/perf/h200x2-9e477c7): 4K .. 256K 0.35-0.64 (host lines), 1M 1.42, 4M 1.52 (the pull), 16M 1.16,
# 64M 0.92, 256M 0.83 (the push through host memory)
entry allreduce sm_90-host 2 fp32 0 256K peerreduce
entry allreduce sm_90-host 2 fp32 262145 64M nccl
entry allreduce sm_90-host 2 fp32 67108865 256M peerreduce
# reduce-scatter, 2 GPUs: 1K .. 512K 0.45-0.56, 1M 1.32 (its 512K blocks were then past the lines),
# 2M 1.00, 4M 0.74, 8M 0.76, 16M 0.78, 32M 0.80, 64M 0.91, 128M 0.98, 256M 1.02
# Then with the two-rank tuning rows (one-shot to 2M, the ring above; --algo all, factors of 4 from 1K):
# 1K .. 256K 0.46-0.52, 1M 0.60, 4M 0.74, 16M 0.78, 64M 0.90, 256M 1.02
# Then with 1 MiB blocks as lines (kDefaultCollectiveLinesTwoRankMaxBytes; peerreduce-bench --coll
# reduce-scatter, the selector's pick): 1M 0.61, 2M 0.62 (lines), 2.25M 0.71 (the one-shot in the
# interpreter: the tuning row covers the bucket of 1 MiB blocks), 4M 0.74 (the ring). nccl-tests through the
# library, medians of three: 2M 0.56, 32M 0.80, 64M 0.91 (docs/perf/h200x2-lines).
# Then pushed past the lines (the direct plan at every size; docs/perf/h200x2-19f9a8c, the selector's pick):
# 1M 0.61, 4M 0.61, 16M 0.67, 64M 0.79, 256M 0.89
entry reduce-scatter sm_90 2 fp32 0 256M peerreduce
# reduce-scatter, 4 GPUs (the interpreter on every multiprocessor, the measured algorithm per size):
# 1K .. 1M 0.52-0.75, 2M 0.81 (512K blocks as lines, the default since; 1.46 in the interpreter), 4M 0.85,
# 8M 0.91, 16M 0.96, 32M 1.01, 64M 1.12, 256M 1.25
entry reduce-scatter sm_90 4 fp32 0 16M peerreduce
entry reduce-scatter sm_90 4 fp32 16777217 256M nccl
# all-gather, 2 GPUs: 1K .. 512K 0.47-0.54, 1M 1.24 (as reduce-scatter's), 2M 0.89, 4M 0.69, 8M 0.70,
# 16M 0.76, 32M 0.84, 64M 0.94, 128M 1.01, 256M 1.07. Then the one-shot at every size (the two-rank tuning
# row, lib/select/builtin_tuning.cc; peerreduce-bench --coll all-gather --algo all, factors of 4 from 1M):
# 1M 0.56, 4M 0.69, 16M 0.75, 64M 0.94, 256M 1.07
# Then pushed past the lines (docs/perf/h200x2-19f9a8c): 1M 0.55, 4M 0.54, 16M 0.64, 64M 0.70, 256M 0.79
entry all-gather sm_90 2 fp32 0 256M peerreduce
# all-gather, 4 GPUs: 1K .. 1M 0.47-0.67, 2M 0.74 (lines, as reduce-scatter's; 1.30 in the interpreter),
# 4M 0.76, 8M 0.81, 16M 0.86, 32M 0.96, 64M 1.08, 256M 1.21
entry all-gather sm_90 4 fp32 0 32M peerreduce
entry all-gather sm_90 4 fp32 33554433 256M nccl
# broadcast, 2 GPUs: 1K .. 512K 1.27-1.81 (the tree plan in the interpreter), 1M 1.03, 2M 0.78, 4M 0.84,
# 8M 0.89, 16M 0.96, 32M 1.05, 256M 1.22. Then with the two-rank tuning rows (one-shot lines to 512K, the
# tree to 8M, the ring above), the selector's pick in factors of 2 from 1K, root 0: 1K .. 256K 0.44-0.52,
# 512K 1.27, 1M 1.04, 2M 0.76, 4M 0.83, 8M 1.10, 16M 0.95, 32M 0.92; --algo all: 64M 1.01, 256M 1.09
# Then with the one-shot as lines to 1 MiB (the tuning row to 1.25 MiB; peerreduce-bench --coll broadcast):
# 512K 0.55, 1M 0.65 (lines), 1.125M 0.87 (the one-shot in the interpreter), 2M 0.78, 4M 0.84 (the tree).
# nccl-tests through the library, medians of three: 512K 0.60, 1M 0.66, 32M 0.92 (docs/perf/h200x2-lines).
# Then the direct plan pushed past the lines (the one-shot to 32M, the tuning row; docs/perf/h200x2-19f9a8c,
# --algo one-shot): 1M 0.66, 4M 0.81, 16M 0.91, 64M 1.03 (the ring 1.01), 256M 1.11 (the ring 1.09).
# Then (docs/perf/h200x2-4b16c2e) pushed in factors of 2: 4M 0.81, 8M 0.92, 16M 0.92; streamed in 64 KiB
# pieces: 64M 1.01, 256M 1.05
entry broadcast sm_90 2 fp32 0 32M peerreduce
entry broadcast sm_90 2 fp32 33554433 256M nccl
# broadcast, 4 GPUs: 1K .. 128K 0.41-0.55, 256K 0.78, 512K 1.69, 1M 1.42, 2M 1.19, 4M 1.67, 16M 1.56,
# 256M 1.76
entry broadcast sm_90 4 fp32 0 256K peerreduce
entry broadcast sm_90 4 fp32 262145 256M nccl
)";
}

const TakeTable& builtinTakeTable() {
  static const TakeTable table = [] {
    auto parsed = TakeTable::parse(builtinTakeText());
    if (!parsed.isOk()) std::abort();  // a bug in the text above; nccl.Core.BuiltinTakeTable* proves it parses
    return std::move(parsed).value();
  }();
  return table;
}

}  // namespace peerreduce::nccl
