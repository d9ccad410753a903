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
# 4 ranks: 1 MiB one-shot 25.10 us, two-shot 26.26; 4 MiB one-shot 56.77, two-shot 37.47
entry sm_90 4 0 2097152 one-shot
entry sm_90 4 2097152 1099511627776 two-shot
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
