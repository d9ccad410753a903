// peerreduce's state of one NCCL communicator the application holds (its handle is the real communicator,
// `real`; comm_table.h finds this from it): where peerreduce takes calls, the peerreduce side they run on,
// and the dispatcher's per-communicator bookkeeping. Destroying it destroys peerreduce's side (and prints
// the summary, PEERREDUCE_NCCL_SUMMARY=1, of a communicator the application ended).
//
// Thread safety: NCCL's rule, one thread at a time per communicator, except that peerreduce's side may be
// ended (revoke, abort) from another thread while a call runs: `ended_why` says so. Such a thread touches
// only `ended_why`, `released` and peerreduce's side, the last two under `peer_mutex` (which creation takes
// to install the side, so an abort during a group's creation finds the side or none). What the calls write (counters,
// the log and selection caches) is read at the end only, once the last call holding this state has returned
// (comm_table.h), so an abort never reads what a call in flight is writing.
#pragma once

#include <array>
#include <atomic>
#include <bitset>
#include <cstdint>
#include <mutex>
#include <string>

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
  ~ShadowedComm();

  // Whether calls can still be taken: a side exists and was not ended since.
  bool peerUsable() const { return peer.comm != nullptr && ended_why.load(std::memory_order_acquire) == nullptr; }
  // Why calls are not taken (for messages): why the side was ended, or why there is none.
  std::string whyNoPeer() const;
  // Ends peerreduce's side from any thread (revoke, a shrink's abort): `why`, a string literal, says why;
  // the side stays allocated until this state is freed. The first ending's reason stays.
  void endPeer(const char* why);

  void* real = nullptr;  // the real NCCL communicator
  int rank = 0;
  int size = 1;
  int device = -1;
  NcclSettings settings;
  PeerSide peer;
  // The take table's rows for this communicator's architecture and world size (set with `peer`).
  TakeTable take_rows;
  // Set when peerreduce's side was aborted by ncclCommRevoke or a shrink with NCCL_SHRINK_ABORT (a string
  // literal saying so): its calls are forwarded from then on; the side itself is destroyed with this.
  std::atomic<const char*> ended_why{nullptr};
  // Set by ncclCommDestroy and ncclCommAbort: the application ended it, so its summary is due.
  std::atomic<bool> released{false};
  // Guards installing `peer` (creation) against ending it (abort, destroy, revoke) from another thread.
  std::mutex peer_mutex;
  CallCounters counters;
  // Which (kind, size bucket) choices were logged already (PEERREDUCE_DEBUG=INFO logs each once).
  std::bitset<static_cast<std::size_t>(kCallKindCount) * kSelectorBuckets> logged;
  // The allreduce selection per size bucket, asked once: 0 unknown, 1 the ring, 2 another algorithm.
  std::array<std::uint8_t, kSelectorBuckets> ring_selected{};
};

}  // namespace peerreduce::nccl
