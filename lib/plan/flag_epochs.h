// FlagEpochs: one rank's bookkeeping of flag counters across operations.
//
// Flag counters only grow. A plan's kWait value is relative to the operation; the absolute target is
// base(writer, flag) + value, where the base is the number of signals earlier operations sent on that
// flag. The entry fence of an operation waits until, for every peer, the done counter reaches
// base(peer, kDoneFlag): every earlier access of that peer to this rank's memory is over.
// The simulator, the verifier and the GPU transport keep exactly this state (the GPU in device memory).
#pragma once

#include <cstdint>
#include <vector>

#include "peerreduce/plan.h"

namespace peerreduce {

// Flag ids a plan may use; plans use 1 to 3 today. Fixed so the counters can be allocated up front.
inline constexpr int kMaxFlags = 8;

class FlagEpochs {
 public:
  FlagEpochs(int world_size, int holder);

  std::uint64_t base(int writer, int flag) const {
    return base_[static_cast<std::size_t>(writer) * kMaxFlags + static_cast<std::size_t>(flag)];
  }
  // The value the entry fence waits for on the done counter written by `writer`.
  std::uint64_t fence(int writer) const { return base(writer, kDoneFlag); }

  // After this rank finished `plan`: every flag's base grows by the signals the plan sends to it.
  void advance(const Plan& plan);

 private:
  int world_size_;
  int holder_;
  std::vector<std::uint64_t> base_;
};

}  // namespace peerreduce
