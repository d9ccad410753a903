#include "plan/flag_epochs.h"

namespace peerreduce {

FlagEpochs::FlagEpochs(int world_size, int holder)
    : world_size_(world_size), holder_(holder), base_(static_cast<std::size_t>(world_size) * kMaxFlags, 0) {}

void FlagEpochs::advance(const Plan& plan) {
  const auto n = static_cast<std::size_t>(world_size_);
  const auto flags = static_cast<std::size_t>(plan.num_flags);
  for (std::size_t writer = 0; writer < n; ++writer) {
    for (std::size_t flag = 0; flag < flags && flag < kMaxFlags; ++flag) {
      const std::size_t index = (static_cast<std::size_t>(holder_) * n + writer) * flags + flag;
      if (index < plan.signal_counts.size()) base_[writer * kMaxFlags + flag] += plan.signal_counts[index];
    }
  }
}

}  // namespace peerreduce
