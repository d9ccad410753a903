// One NCCL communicator as the application holds it: its ncclComm_t points at a ShadowedComm, which holds
// the real (shadow) communicator every forwarded call goes to and, where peerreduce takes calls, the
// peerreduce side they run on. Everything else here is per-communicator bookkeeping of the dispatcher.
//
// Thread safety: NCCL's rule, one thread at a time per communicator.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>

#include "nccl/call_counters.h"
#include "nccl/nccl_settings.h"
#include "nccl/peer_side.h"
#include "nccl/take_policy.h"
#include "select/selector.h"

namespace peerreduce::nccl {

struct ShadowedComm {
  void* real = nullptr;  // the real NCCL communicator
  int rank = 0;
  int size = 1;
  int device = -1;
  NcclSettings settings;
  PeerSide peer;
  CallCounters counters;
  // Which (kind, size bucket) choices were logged already (PEERREDUCE_DEBUG=INFO logs each once).
  std::bitset<static_cast<std::size_t>(kCallKindCount) * kSelectorBuckets> logged;
  // The allreduce selection per size bucket, asked once: 0 unknown, 1 the ring, 2 another algorithm.
  std::array<std::uint8_t, kSelectorBuckets> ring_selected{};
};

}  // namespace peerreduce::nccl
