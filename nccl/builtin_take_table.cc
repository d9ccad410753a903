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
# allreduce, peerreduce-bench beside NCCL (sizes as allreduce's buffer).
# 2 x H200: 4K 0.44, 16K 0.44, 64K 0.46, 256K 0.53, 1M 0.94, 4M 0.74, 16M 0.84, 64M 1.01, 256M 1.13
entry allreduce sm_90 2 fp32 0 16M peerreduce
entry allreduce sm_90 2 fp32 16777217 256M nccl
# 4 x H200, sizes in factors of 2 (docs/perf/h200x4-take): 1K .. 64K 0.37-0.46, 128K 0.61, 256K 0.67,
# 512K 0.72, 1M 0.88, 2M 1.08, 4M 0.97, 8M 1.00, 16M 0.97, 32M 1.11, 64M 1.14, 256M 1.20
entry allreduce sm_90 4 fp32 0 1M peerreduce
entry allreduce sm_90 4 fp32 1048577 256M nccl
# nccl-tests through this library against NCCL alone (nccl-tests' total size): 4 x H200 in factors of
# 4, 2 x H200 in factors of 8 (128M there was NCCL's own: nothing above 16M was taken).
# reduce-scatter, 2 GPUs: 64 B .. 256K 0.55-0.62, 2M 0.96, 16M 0.83
entry reduce-scatter sm_90 2 fp32 0 16M peerreduce
# reduce-scatter, 4 GPUs, peerreduce-bench in factors of 2 (the interpreter on every multiprocessor, the
# measured algorithm per size): 1K .. 1M 0.52-0.75, 2M 1.46 (the direct plan in the interpreter, past the
# lines), 4M 0.85, 8M 0.91, 16M 0.96, 32M 1.01, 64M 1.12, 256M 1.25
entry reduce-scatter sm_90 4 fp32 0 1M peerreduce
entry reduce-scatter sm_90 4 fp32 1048577 4M nccl
entry reduce-scatter sm_90 4 fp32 4194305 16M peerreduce
entry reduce-scatter sm_90 4 fp32 16777217 256M nccl
# all-gather, 2 GPUs: 64 B .. 256K 0.41-0.54, 2M 0.92, 16M 0.89
entry all-gather sm_90 2 fp32 0 16M peerreduce
# all-gather, 4 GPUs, the same run: 1K .. 1M 0.47-0.67, 2M 1.30, 4M 0.76, 8M 0.81, 16M 0.86, 32M 0.96,
# 64M 1.08, 256M 1.21
entry all-gather sm_90 4 fp32 0 1M peerreduce
entry all-gather sm_90 4 fp32 1048577 4M nccl
entry all-gather sm_90 4 fp32 4194305 32M peerreduce
entry all-gather sm_90 4 fp32 33554433 256M nccl
# broadcast, 2 GPUs: 8 B 0.93, 64 B .. 256K 1.06-1.22, 2M 0.84 (alone between losses), 16M 1.07
entry broadcast sm_90 2 fp32 0 8 peerreduce
entry broadcast sm_90 2 fp32 9 16M nccl
# broadcast, 4 GPUs, the same run: 1K .. 128K 0.41-0.55, 256K 0.78, 512K 1.69, 1M 1.42, 2M 1.19, 4M 1.67,
# 16M 1.56, 256M 1.76
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
