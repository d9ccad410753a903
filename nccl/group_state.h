// This thread's NCCL group (ncclGroupStart .. ncclGroupEnd, nesting counted): the calls kept while every
// one so far is taken, whether the group has gone to the real NCCL, and the communicators created inside it.
// dispatcher.h says how a group ends.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "nccl/collective_call.h"
#include "nccl/shadowed_comm.h"

namespace peerreduce::nccl {

// 4096 calls: more than a training step's buckets of gradients; a longer group is forwarded whole (the
// decision is the same on every rank, since every rank makes the same calls).
inline constexpr std::size_t kMaxKeptCalls = 4096;

struct GroupState {
  int depth = 0;            // ncclGroupStart calls not yet ended
  bool forwarding = false;  // a call was not taken: the group's calls go to the real NCCL
  std::vector<CollectiveCall> kept;
  // By creation calls inside the group, completed at its end; held, since the application may end one
  // from another thread before then.
  std::vector<std::shared_ptr<ShadowedComm>> created;
};

GroupState& threadGroup();

}  // namespace peerreduce::nccl
