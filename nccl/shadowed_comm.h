// peerreduce's state of one NCCL communicator the application holds (its handle is the real communicator,
// `real`; comm_table.h finds this from it): where peerreduce takes calls, the peerreduce side they run on,
// and the dispatcher's per-communicator bookkeeping. Destroying it destroys peerreduce's side.
//
// Thread safety: NCCL's rule, one thread at a time per communicator, except that peerreduce's side may be
// ended (revoke, abort) from another thread while a call runs: `peer_ended` says so.
#pragma once

#include <array>
#include <atomic>
#include <bitset>
#include <cstdint>

#include "nccl/call_counters.h"
#include "nccl/nccl_settings.h"
#include "nccl/peer_side.h"
#include "nccl/take_policy.h"
#include "nccl/take_table.h"
#include "select/selector.h"

namespace peerreduce::nccl {

struct ShadowedComm {
  ShadowedComm() = default;
  ShadowedComm(const ShadowedComm&) = delete;
  ShadowedComm& operator=(const ShadowedComm&) = delete;
  ~ShadowedComm() { destroyPeerSide(peer, false); }

  // Whether calls can still be taken: a side exists and was not ended since.
  bool peerUsable() const { return peer.comm != nullptr && !peer_ended.load(std::memory_order_acquire); }

  void* real = nullptr;  // the real NCCL communicator
  int rank = 0;
  int size = 1;
  int device = -1;
  NcclSettings settings;
  PeerSide peer;
  // The take table's rows for this communicator's architecture and world size (set with `peer`).
  TakeTable take_rows;
  // Set (after peer.absent_reason) when peerreduce's side was aborted by ncclCommRevoke or a shrink with
  // NCCL_SHRINK_ABORT: its calls are forwarded from then on; the side itself is destroyed with this.
  std::atomic<bool> peer_ended{false};
  CallCounters counters;
  // Which (kind, size bucket) choices were logged already (PEERREDUCE_DEBUG=INFO logs each once).
  std::bitset<static_cast<std::size_t>(kCallKindCount) * kSelectorBuckets> logged;
  // The allreduce selection per size bucket, asked once: 0 unknown, 1 the ring, 2 another algorithm.
  std::array<std::uint8_t, kSelectorBuckets> ring_selected{};
};

}  // namespace peerreduce::nccl
