#include "select/builtin_tuning.h"

#include <cstdlib>

namespace peerreduce {

std::string_view builtinTuningText() {
  // 4 x H200 (NV18 between every pair), fp32 sum, one process per GPU, graph replay; each algorithm forced
  // with `peerreduce-bench --algo one-shot|two-shot --no-in-place` (docs/PERF.md, "Tuning table"). The
  // boundaries lie between the measured sizes (factors of 4), at their geometric middle.
  return R"(peerreduce-tuning 1
# 2 ranks: one-shot 4 MiB 24.39 us, two-shot 25.85; 16 MiB one-shot 74.75, two-shot 65.34
entry sm_90 2 0 8388608 one-shot
entry sm_90 2 8388608 1099511627776 two-shot
# 4 ranks: 64 KiB one-shot (lines) 4.91 us, two-shot (lines) 6.12; 256 KiB one-shot 8.48, two-shot
# 7.30-7.42; 1 MiB one-shot 25.41, two-shot 15.04-15.28; 4 MiB one-shot 56.77, two-shot 37.47
entry sm_90 4 0 131072 one-shot
entry sm_90 4 131072 1099511627776 two-shot
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
